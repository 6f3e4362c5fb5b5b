//! Typed results from the validating pass: [`from_slice`] and [`from_reader`] return a
//! `T: Deserialize` that the schema has accepted, reading the bytes once (feature `serde`).
//!
//! **Design: a token tape, not a pull parser.** The scanner is push-fed: it hands events to a
//! [`Sink`] and keeps no per-token resumption point, which is what makes it chunk-agnostic and
//! fast. Rather than turning it inside out into a pull API for serde to drive, one scan feeds
//! each event both to the [`Validator`] (while its verdict is open) and to a tape: a flat
//! vector of tokens (no tree, no per-node allocation) whose strings and numbers point into
//! the input where they are unescaped and into one reused text buffer otherwise. When the
//! verdict is an acceptance, a `serde::Deserializer` walks the tape. The bytes are read once
//! and decided at the earliest byte, exactly as [`Validator::validate_slice`] decides them
//! (same [`Rejection`]); a rejected document builds nothing the caller sees. The tape costs
//! one 24-byte token per event, bounded by the [`Limits`]; a [`Tape`] can be kept and reused
//! so that steady-state calls allocate nothing for it.
//!
//! Borrowed strings need the input as a `&str`: after an acceptance, the input is checked as
//! UTF-8 once more as a whole (simdutf8: tens of bytes per cycle; the scanner's own check
//! already refused invalid input, but its `&str`s live only as long as each event and this
//! module has no `unsafe`), which is much cheaper than checking each string on its own.
//!
//! Numbers are visited as `serde_json` visits them: an integer literal as `u64` (non-negative)
//! or `i64` when it fits, anything else as the nearest `f64`. Strings borrowed from the input
//! (`&'de str` fields) work where the input has no escape in them, as with `serde_json`.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    VariantAccess, Visitor,
};

use crate::{Event, Flow, Limits, Position, Rejection, Scanner, Sink, Validator, Watcher};

/// Why [`from_slice`] or [`from_reader`] gave no value.
#[derive(Debug)]
pub enum TypedError {
    /// The document was refused: malformed, over a limit, or against the schema (the same
    /// rejection [`Validator::validate_slice`] gives).
    Rejected(Rejection),
    /// The document was accepted, but it does not have the shape of the requested type.
    Mismatch(Mismatch),
}

/// An accepted document that the requested type cannot hold: serde's message and the byte
/// offset of the value it was reading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    message: String,
    offset: u64,
}

impl Mismatch {
    /// serde's description, such as `invalid type: string "x", expected u32`.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// Byte offset of the value being read when the mismatch was found.
    pub fn offset(&self) -> u64 {
        self.offset
    }
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message, self.offset)
    }
}

impl std::error::Error for Mismatch {}

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypedError::Rejected(Rejection::Error(e)) => write!(f, "{e}"),
            TypedError::Rejected(Rejection::Violation(v)) => write!(f, "{}", v.message()),
            TypedError::Mismatch(m) => write!(f, "{m}"),
        }
    }
}

impl std::error::Error for TypedError {}

/// serde's error type inside the tape walk (its offset is filled in where it surfaces).
#[derive(Debug)]
struct DeError(String);

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError(msg.to_string())
    }
}

/// Where a token's text is: in the input (`borrowed`), or in the tape's text buffer.
#[derive(Clone, Copy, Debug)]
struct Text {
    borrowed: bool,
    start: u32,
    end: u32,
}

#[derive(Clone, Copy, Debug)]
enum Tok {
    BeginObject,
    EndObject,
    BeginArray,
    EndArray,
    Name(Text),
    Str(Text),
    Num(Text),
    Bool(bool),
    Null,
}

/// The tokens of one document and the text that could not be borrowed from its input; keep
/// one and pass it to [`from_slice_with`] to reuse its buffers.
#[derive(Debug, Default)]
pub struct Tape {
    toks: Vec<(Tok, u64)>,
    text: String,
}

impl Tape {
    /// An empty tape.
    pub fn new() -> Self {
        Tape::default()
    }
}

/// Records events onto the tape and hands them to the validator while its verdict is open.
struct Recorder<'a> {
    tape: &'a mut Tape,
    /// The input, when strings may be borrowed from it (slices; not readers).
    input: Option<&'a [u8]>,
    watch: Watcher<'a>,
    /// A text longer than `u32::MAX` bytes cannot be recorded.
    too_long: bool,
}

impl Recorder<'_> {
    fn text(&mut self, s: &str) -> Text {
        if let Some(input) = self.input {
            let base = input.as_ptr() as usize;
            let at = s.as_ptr() as usize;
            if at >= base && at + s.len() <= base + input.len() {
                let start = at - base;
                if let (Ok(start), Ok(end)) = (u32::try_from(start), u32::try_from(start + s.len()))
                {
                    return Text {
                        borrowed: true,
                        start,
                        end,
                    };
                }
            }
        }
        let start = self.tape.text.len();
        self.tape.text.push_str(s);
        match (u32::try_from(start), u32::try_from(self.tape.text.len())) {
            (Ok(start), Ok(end)) => Text {
                borrowed: false,
                start,
                end,
            },
            _ => {
                self.too_long = true;
                Text {
                    borrowed: false,
                    start: 0,
                    end: 0,
                }
            }
        }
    }

    fn step(&mut self, event: Event<'_>, at: Position) -> Flow {
        if self.watch.event_at(event, at) == Flow::Stop {
            return Flow::Stop;
        }
        let tok = match event {
            Event::BeginObject => Tok::BeginObject,
            Event::EndObject => Tok::EndObject,
            Event::BeginArray => Tok::BeginArray,
            Event::EndArray => Tok::EndArray,
            Event::Name(s) => Tok::Name(self.text(s)),
            Event::String(s) => Tok::Str(self.text(s)),
            Event::Number(n) => Tok::Num(self.text(n.as_str())),
            Event::Bool(b) => Tok::Bool(b),
            Event::Null => Tok::Null,
        };
        self.tape.toks.push((tok, at.offset));
        if self.too_long {
            Flow::Stop
        } else {
            Flow::Continue
        }
    }
}

impl Sink for Recorder<'_> {
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        self.step(event, Position::on_one_line(offset))
    }

    fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        self.step(event, at)
    }
}

/// Validates `input` against the validator's schema and, when it is accepted, deserializes
/// it into `T`, reading the bytes once (see the module header).
///
/// # Errors
/// [`TypedError::Rejected`] with the validator's [`Rejection`] for a refused document;
/// [`TypedError::Mismatch`] for an accepted one that `T` cannot hold.
///
/// # Example
/// ```
/// use jsongate::{from_slice, Limits, Schema, TypedError, Validator};
/// #[derive(serde::Deserialize, Debug, PartialEq)]
/// struct Review<'a> { change_id: &'a str, approved: bool }
///
/// let schema = Schema::compile(br#"{"type":"object","additionalProperties":false,
///     "required":["change_id","approved"],
///     "properties":{"change_id":{"type":"string"},"approved":{"type":"boolean"}}}"#)?;
/// let mut v = Validator::new(&schema);
/// let doc = br#"{"change_id":"c-42","approved":true}"#;
/// let r: Review = from_slice(&mut v, doc, Limits::new()).unwrap();
/// assert_eq!(r, Review { change_id: "c-42", approved: true });
///
/// let injected = br#"{"change_id":"c-42","approved":true,"admin_override":true}"#;
/// let err = from_slice::<Review>(&mut v, injected, Limits::new()).unwrap_err();
/// assert!(matches!(err, TypedError::Rejected(_)));
/// # Ok::<(), jsongate::CompileError>(())
/// ```
pub fn from_slice<'de, T: de::Deserialize<'de>>(
    validator: &mut Validator,
    input: &'de [u8],
    limits: Limits,
) -> Result<T, TypedError> {
    from_slice_with(validator, &mut Tape::new(), input, limits)
}

/// [`from_slice`] with a caller-kept [`Tape`], whose buffers are reused from call to call.
///
/// # Errors
/// As [`from_slice`].
pub fn from_slice_with<'de, T: de::Deserialize<'de>>(
    validator: &mut Validator,
    tape: &mut Tape,
    input: &'de [u8],
    limits: Limits,
) -> Result<T, TypedError> {
    record(validator, tape, Some(input), limits, |scanner, rec| {
        scanner.scan_slice(input, rec)
    })?;
    walk(tape, input)
}

/// [`from_slice`] for a reader: read in chunks and decided at the earliest byte, as
/// [`Validator::validate_read`] is; every string is copied into the tape (nothing can be
/// borrowed from a reader), so `T` owns its data.
///
/// # Errors
/// As [`from_slice`]; a read that fails is a [`Rejection::Error`] of kind `io`, as with
/// [`Validator::validate_read`].
///
/// # Example
/// ```
/// use jsongate::{from_reader, Limits, Schema, Validator};
/// let schema = Schema::compile(br#"{"type":"array","items":{"type":"integer","minimum":0}}"#)?;
/// let mut v = Validator::new(&schema);
/// let n: Vec<u32> = from_reader(&mut v, &b"[1, 2, 3]"[..], Limits::new()).unwrap();
/// assert_eq!(n, [1, 2, 3]);
/// assert!(from_reader::<Vec<u32>, _>(&mut v, &b"[1, -2, 3]"[..], Limits::new()).is_err());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
pub fn from_reader<T: de::DeserializeOwned, R: std::io::Read>(
    validator: &mut Validator,
    reader: R,
    limits: Limits,
) -> Result<T, TypedError> {
    let mut tape = Tape::new();
    record(validator, &mut tape, None, limits, |scanner, rec| {
        scanner.scan_read(reader, rec)
    })?;
    walk(&tape, &[])
}

/// One scan (`scan`: of a slice or a reader) onto `tape`, with the verdict.
fn record(
    validator: &mut Validator,
    tape: &mut Tape,
    input: Option<&[u8]>,
    limits: Limits,
    scan: impl FnOnce(&mut Scanner, &mut Recorder<'_>) -> Result<crate::Outcome, crate::Error>,
) -> Result<(), TypedError> {
    tape.toks.clear();
    tape.text.clear();
    let mut scanner = Scanner::new(limits);
    let mut rec = Recorder {
        tape,
        input,
        watch: Watcher::new(validator),
        too_long: false,
    };
    let out = scan(&mut scanner, &mut rec);
    let too_long = rec.too_long;
    validator
        .verdict(&scanner, out)
        .map_err(TypedError::Rejected)?;
    if too_long {
        return Err(TypedError::Mismatch(Mismatch {
            message: "a string of the document is longer than 4 GiB".into(),
            offset: 0,
        }));
    }
    Ok(())
}

fn walk<'de, T: de::Deserialize<'de>>(tape: &Tape, input: &'de [u8]) -> Result<T, TypedError> {
    let input = simdutf8::basic::from_utf8(input).map_err(|_| {
        TypedError::Mismatch(Mismatch {
            message: "the input is not UTF-8".into(),
            offset: 0,
        })
    })?;
    let mut d = TapeDe {
        toks: &tape.toks,
        text: &tape.text,
        input,
        pos: 0,
        last: 0,
        unfinished: false,
    };
    T::deserialize(&mut d).map_err(|e| {
        let at = d.toks.get(d.last).map_or(0, |t| t.1);
        TypedError::Mismatch(Mismatch {
            message: e.0,
            offset: at,
        })
    })
}

/// The tape as a `serde::Deserializer`.
struct TapeDe<'t, 'de> {
    toks: &'t [(Tok, u64)],
    text: &'t str,
    input: &'de str,
    pos: usize,
    /// The token being read when an error is raised (its offset is the mismatch's).
    last: usize,
    /// Set by a sequence or map whose visitor returned before its closing token.
    unfinished: bool,
}

/// A token's text: borrowed for the input's lifetime, or only for the tape's.
enum Str<'t, 'de> {
    Input(&'de str),
    Tape(&'t str),
}

impl<'t, 'de> TapeDe<'t, 'de> {
    fn next(&mut self) -> Result<Tok, DeError> {
        let t = self
            .toks
            .get(self.pos)
            .ok_or_else(|| DeError("unexpected end of the document".into()))?;
        self.last = self.pos;
        self.pos += 1;
        Ok(t.0)
    }

    fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|t| t.0)
    }

    fn str(&self, t: Text) -> Result<Str<'t, 'de>, DeError> {
        let (start, end) = (t.start as usize, t.end as usize);
        if t.borrowed {
            self.input
                .get(start..end)
                .map(Str::Input)
                .ok_or_else(|| DeError("a recorded string is not on character boundaries".into()))
        } else {
            Ok(Str::Tape(&self.text[start..end]))
        }
    }

    /// After a visitor of a sequence or map returned: its closing token must be next if the
    /// visitor stopped before it (a fixed-size tuple), else the container had more in it than
    /// the type holds (an error, as with `serde_json`).
    fn close(&mut self, end: Tok, what: &str) -> Result<(), DeError> {
        if !std::mem::take(&mut self.unfinished) {
            return Ok(());
        }
        match self.next()? {
            t if std::mem::discriminant(&t) == std::mem::discriminant(&end) => Ok(()),
            _ => Err(DeError(format!(
                "trailing members in an {what}: the type holds fewer"
            ))),
        }
    }

    /// Skips one whole value (its first token already taken).
    fn skip(&mut self, first: Tok) -> Result<(), DeError> {
        if !matches!(first, Tok::BeginObject | Tok::BeginArray) {
            return Ok(());
        }
        let mut depth = 1usize;
        while depth > 0 {
            match self.next()? {
                Tok::BeginObject | Tok::BeginArray => depth += 1,
                Tok::EndObject | Tok::EndArray => depth -= 1,
                _ => {}
            }
        }
        Ok(())
    }

    fn number<V: Visitor<'de>>(&self, t: Text, visitor: V) -> Result<V::Value, DeError> {
        let s = self.str(t)?;
        let text = match &s {
            Str::Input(s) => *s,
            Str::Tape(s) => s,
        };
        // Recorded from an `Event::Number`: the scanner has checked its grammar.
        let n = crate::Number::scanned(text);
        if text == "-0" {
            // serde_json reads a negative zero as the float it is.
            return visitor.visit_f64(-0.0);
        }
        // `as_u64`/`as_i64` refuse fractions and exponents themselves.
        if text.starts_with('-') {
            if let Ok(i) = n.as_i64() {
                return visitor.visit_i64(i);
            }
        } else if let Ok(u) = n.as_u64() {
            return visitor.visit_u64(u);
        }
        // Beyond f64's range serde_json refuses the number ("number out of range"); so does this.
        match n.as_f64() {
            Ok(f) => visitor.visit_f64(f),
            Err(_) => Err(DeError(format!("number out of range: {text}"))),
        }
    }

    fn any<V: Visitor<'de>>(&mut self, tok: Tok, visitor: V) -> Result<V::Value, DeError> {
        match tok {
            Tok::Null => visitor.visit_unit(),
            Tok::Bool(b) => visitor.visit_bool(b),
            Tok::Num(t) => self.number(t, visitor),
            Tok::Str(t) | Tok::Name(t) => match self.str(t)? {
                Str::Input(s) => visitor.visit_borrowed_str(s),
                Str::Tape(s) => visitor.visit_str(s),
            },
            Tok::BeginArray => {
                let v = visitor.visit_seq(Access {
                    de: &mut *self,
                    done: false,
                })?;
                self.close(Tok::EndArray, "array")?;
                Ok(v)
            }
            Tok::BeginObject => {
                let v = visitor.visit_map(Access {
                    de: &mut *self,
                    done: false,
                })?;
                self.close(Tok::EndObject, "object")?;
                Ok(v)
            }
            Tok::EndArray | Tok::EndObject => Err(DeError("unexpected end of a container".into())),
        }
    }
}

impl<'de> Deserializer<'de> for &mut TapeDe<'_, 'de> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let tok = self.next()?;
        self.any(tok, visitor)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        if let Some(Tok::Null) = self.peek() {
            self.pos += 1;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match self.next()? {
            Tok::Str(t) => match self.str(t)? {
                Str::Input(s) => visitor.visit_enum(de::value::BorrowedStrDeserializer::new(s)),
                Str::Tape(s) => visitor.visit_enum(s.into_deserializer()),
            },
            Tok::BeginObject => {
                let v = visitor.visit_enum(Enum { de: &mut *self })?;
                match self.next()? {
                    Tok::EndObject => Ok(v),
                    _ => Err(DeError(
                        "an enum variant is an object with exactly one member".into(),
                    )),
                }
            }
            other => self.any(other, EnumExpected).map(|never| match never {}),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let tok = self.next()?;
        self.skip(tok)?;
        visitor.visit_unit()
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.peek() {
            Some(Tok::Str(t)) => {
                self.pos += 1;
                match self.str(t)? {
                    Str::Input(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
                    Str::Tape(s) => visitor.visit_bytes(s.as_bytes()),
                }
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        self.deserialize_bytes(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        unit unit_struct seq tuple tuple_struct map struct identifier
    }
}

/// A visitor that only produces serde's "expected enum" error for other tokens.
struct EnumExpected;

impl Visitor<'_> for EnumExpected {
    type Value = std::convert::Infallible;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or an object with one member (an enum)")
    }
}

/// The members of an object or the items of an array, read by a visitor.
struct Access<'a, 't, 'de> {
    de: &'a mut TapeDe<'t, 'de>,
    /// Whether the closing token has been taken.
    done: bool,
}

impl Access<'_, '_, '_> {
    /// Takes the closing token `end` if it is next.
    fn at_end(&mut self, end: Tok) -> bool {
        let next = self.de.peek().map(|t| std::mem::discriminant(&t));
        if next == Some(std::mem::discriminant(&end)) {
            self.de.pos += 1;
            self.done = true;
        }
        self.done
    }
}

impl<'de> SeqAccess<'de> for Access<'_, '_, 'de> {
    type Error = DeError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, DeError> {
        if self.at_end(Tok::EndArray) {
            return Ok(None);
        }
        seed.deserialize(&mut *self.de).map(Some)
    }
}

impl<'de> MapAccess<'de> for Access<'_, '_, 'de> {
    type Error = DeError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, DeError> {
        if self.at_end(Tok::EndObject) {
            return Ok(None);
        }
        match self.de.peek() {
            Some(Tok::Name(_)) => seed.deserialize(&mut *self.de).map(Some),
            _ => Err(DeError("expected a member name".into())),
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, DeError> {
        seed.deserialize(&mut *self.de)
    }
}

impl Drop for Access<'_, '_, '_> {
    /// A visitor that returns before the closing token (a fixed-size tuple) leaves it to
    /// [`TapeDe::close`].
    fn drop(&mut self) {
        self.de.unfinished = !self.done;
    }
}

struct Enum<'a, 't, 'de> {
    de: &'a mut TapeDe<'t, 'de>,
}

impl<'de> EnumAccess<'de> for Enum<'_, '_, 'de> {
    type Error = DeError;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Self), DeError> {
        match self.de.peek() {
            Some(Tok::Name(_)) => {
                let v = seed.deserialize(&mut *self.de)?;
                Ok((v, self))
            }
            _ => Err(DeError(
                "an enum variant is an object with exactly one member".into(),
            )),
        }
    }
}

impl<'de> VariantAccess<'de> for Enum<'_, '_, 'de> {
    type Error = DeError;

    fn unit_variant(self) -> Result<(), DeError> {
        de::Deserialize::deserialize(&mut *self.de)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, DeError> {
        seed.deserialize(&mut *self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value, DeError> {
        self.de.deserialize_any(visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.de.deserialize_any(visitor)
    }
}
