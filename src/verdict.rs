//! Verdicts as JSON: the one line `jsongate check` prints for a document, the error object
//! inside it, and [`JsonLines`], which checks newline-delimited JSON one line at a time.
//!
//! This layer sits above `validate` (it judges with a [`Validator`]) and `select` (whose
//! JSON string writer it uses), below everything that prints verdicts.
//!
//! The binary only prints what these functions return, so that an embedder can produce the
//! same lines byte for byte:
//!
//! ```text
//! {"valid":true,"bytes_read":N}
//! {"valid":false,"bytes_read":N,"error":{"kind":K,"offset":N,"line":L,"column":C,"pointer":P,"message":M}}
//! {"valid":false,"bytes_read":N,"error":{..., "keyword":W,"schema_path":S},"errors":[{...}...]}
//! {"line":N,"valid":...}                              (JsonLines: the same, after the line number)
//! ```

use std::io::Read;

use crate::json::ObjectWriter;
use crate::scan::{Flow, Ignore, Outcome, Scanner};
use crate::{Error, Limits, Rejection, Validator, Violation, READ_CHUNK};

/// The text a JSON writer appends to an empty string.
fn written(write: impl FnOnce(&mut String)) -> String {
    let mut out = String::new();
    write(&mut out);
    out
}

impl Error {
    /// This error as one JSON object, the `error` member of `jsongate check`'s verdict line:
    /// `kind` (the stable [`code`](crate::ErrorKind::code)), `offset`, `line`, `column`,
    /// `pointer` and `message` (the kind's [`Display`](std::fmt::Display) text), in that
    /// order.
    ///
    /// # Example
    /// ```
    /// let err = jsongate::check(br#"{"approved":false,"approved":true}"#, jsongate::Limits::new())
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_json(),
    ///     r#"{"kind":"duplicate_name","offset":27,"line":1,"column":28,"pointer":"/approved","message":"duplicate member name"}"#
    /// );
    /// ```
    pub fn to_json(&self) -> String {
        written(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut String) {
        let at = (self.offset(), self.line(), self.column());
        let message = self.kind().to_string();
        error_object(out, self.kind().code(), at, self.pointer(), &message).finish();
    }
}

impl Violation {
    /// This violation as one JSON object, the `error` member of `jsongate check`'s verdict
    /// line (and each item of its `errors`): `kind` (always `"schema"`), `offset`, `line`,
    /// `column`, `pointer` (the instance's), `message` ([`Violation::message`]), `keyword`
    /// and `schema_path` (the [`keyword_location`](Self::keyword_location)), in that order.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"properties":{"n":{"type":"integer"}}}"#)?;
    /// let mut v = Validator::new(&schema);
    /// let Err(Rejection::Violation(x)) = v.validate_slice(br#"{"n":"x"}"#, Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(
    ///     x.to_json(),
    ///     r#"{"kind":"schema","offset":5,"line":1,"column":6,"pointer":"/n","message":"value has the wrong type: expected integer (type at /properties/n/type)","keyword":"type","schema_path":"/properties/n/type"}"#
    /// );
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn to_json(&self) -> String {
        written(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut String) {
        let at = (self.offset(), self.line(), self.column());
        let message = self.message();
        let mut o = error_object(out, "schema", at, self.instance_pointer(), &message);
        o.str("keyword", self.keyword())
            .str("schema_path", self.keyword_location());
        o.finish();
    }
}

impl Rejection {
    /// The rejection as the `error` object of a verdict line: [`Error::to_json`] or
    /// [`Violation::to_json`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let mut v = Validator::new(&Schema::compile(b"true")?);
    /// let r = v.validate_slice(b"[1,]", Limits::new()).unwrap_err();
    /// assert!(r.to_json().starts_with(r#"{"kind":"syntax","offset":3,"#));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn to_json(&self) -> String {
        written(|out| self.write_json(out))
    }

    fn write_json(&self, out: &mut String) {
        match self {
            Rejection::Error(e) => e.write_json(out),
            Rejection::Violation(v) => v.write_json(out),
        }
    }
}

/// The verdict line `jsongate check` prints for one document (without a newline):
/// `{"valid":true,"bytes_read":N}` or `{"valid":false,"bytes_read":N,"error":{...}}`, with
/// the error as [`Rejection::to_json`] writes it. `bytes_read` is what the scanner consumed
/// ([`Scanner::bytes_read`]). With a schema and several violations collected, use
/// [`Validator::verdict_json`], which adds them.
///
/// # Example
/// ```
/// use jsongate::{verdict_json, Ignore, Limits, Rejection, Scanner};
/// let mut s = Scanner::new(Limits::new());
/// let r = s.scan_slice(b"[1, 2]", &mut Ignore).map(|_| ()).map_err(Rejection::Error);
/// assert_eq!(verdict_json(&r, s.bytes_read()), r#"{"valid":true,"bytes_read":6}"#);
/// let r = s.scan_slice(br#"{"a":1,"a":2}"#, &mut Ignore).map(|_| ()).map_err(Rejection::Error);
/// assert_eq!(
///     verdict_json(&r, s.bytes_read()),
///     r#"{"valid":false,"bytes_read":10,"error":{"kind":"duplicate_name","offset":9,"line":1,"column":10,"pointer":"/a","message":"duplicate member name"}}"#
/// );
/// ```
pub fn verdict_json(result: &Result<(), Rejection>, bytes_read: u64) -> String {
    let mut out = String::new();
    write_verdict(&mut out, None, result, bytes_read, None);
    out
}

/// `{["line":N,]"valid":B,"bytes_read":N[,"error":{...}[,"errors":[...]]]}`; `errors`
/// appears with a violation when `errors` is given.
fn write_verdict(
    out: &mut String,
    line: Option<u64>,
    result: &Result<(), Rejection>,
    bytes_read: u64,
    errors: Option<&[Violation]>,
) {
    let mut o = ObjectWriter::new(out);
    if let Some(n) = line {
        o.u64("line", n);
    }
    o.bool("valid", result.is_ok())
        .u64("bytes_read", bytes_read);
    if let Err(r) = result {
        r.write_json(o.member("error"));
        if let (Rejection::Violation(_), Some(all)) = (r, errors) {
            let mut a = o.array("errors");
            for v in all {
                v.write_json(a.item());
            }
        }
    }
    o.finish();
}

impl Validator {
    /// The verdict line of the last document, as [`verdict_json`] writes it; when this
    /// validator collects more than one violation ([`max_errors`](Self::max_errors) above 1),
    /// a schema rejection also has `"errors":[...]` with every violation collected.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
    /// let mut v = Validator::new(&schema).max_errors(5);
    /// let r = v.validate_slice(br#"[1,"a","b"]"#, Limits::new());
    /// let line = v.verdict_json(&r, 10);
    /// assert!(line.starts_with(r#"{"valid":false,"bytes_read":10,"error":{"kind":"schema","offset":3,"#));
    /// assert_eq!(line.matches(r#""keyword":"type""#).count(), 3); // the first, then both
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn verdict_json(&self, result: &Result<(), Rejection>, bytes_read: u64) -> String {
        let mut out = String::new();
        let errors = (self.error_limit() > 1).then(|| self.violations());
        write_verdict(&mut out, None, result, bytes_read, errors);
        out
    }
}

/// Checks newline-delimited JSON (NDJSON, JSON Lines): every line is its own document,
/// scanned (and validated, with [`validator`](Self::validator)) with its own limits, and
/// yields one [`LineVerdict`]. A final line without a newline counts; an empty line (no
/// bytes, or only `\r`) is skipped: it yields nothing, but still counts for the numbering.
///
/// Memory stays bounded whatever the input: it is read in [`READ_CHUNK`]-byte chunks, and
/// a line past [`Limits::max_bytes`] is rejected at the limit (`too_large`) while the rest
/// of it is read and dropped up to the next newline. Offsets, lines and columns of a
/// verdict are within its line (`line` is then always 1); [`LineVerdict::line`] is the
/// line's number in the input.
///
/// # Example
/// ```
/// use jsongate::{JsonLines, Limits};
/// let input = &b"{\"a\":1}\n\n[1,]\n\"xxxxxxxxxx\""[..];
/// let lines: Vec<String> = JsonLines::new(input, Limits::new().max_bytes(8))
///     .map(|v| v.unwrap().to_json())
///     .collect();
/// assert_eq!(lines[0], r#"{"line":1,"valid":true,"bytes_read":7}"#);
/// assert!(lines[1].starts_with(r#"{"line":3,"valid":false,"bytes_read":4,"error":{"kind":"syntax""#));
/// assert!(lines[2].starts_with(r#"{"line":4,"valid":false,"bytes_read":8,"error":{"kind":"too_large""#));
/// assert_eq!(lines.len(), 3);
/// ```
pub struct JsonLines<R> {
    reader: R,
    scanner: Scanner,
    validator: Option<Validator>,
    buf: Vec<u8>,
    /// The unread part of `buf` is `buf[pos..end]`.
    pos: usize,
    end: usize,
    /// Number of the last line started.
    line: u64,
    eof: bool,
}

/// The verdict on one line of a [`JsonLines`] input.
///
/// # Example
/// ```
/// use jsongate::{JsonLines, Limits};
/// let verdicts: Vec<_> = JsonLines::new(&b"[1]\n[1,\n"[..], Limits::new())
///     .collect::<Result<_, _>>()
///     .unwrap();
/// assert!(verdicts[0].is_valid());
/// assert_eq!((verdicts[1].line(), verdicts[1].is_valid()), (2, false));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineVerdict {
    line: u64,
    bytes_read: u64,
    result: Result<(), Rejection>,
    /// Every violation collected, when the validator collects several.
    errors: Option<Vec<Violation>>,
}

impl LineVerdict {
    /// The 1-based number of the line in the input (empty lines count).
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits};
    /// let v: Vec<u64> = JsonLines::new(&b"1\n\n\n2\n"[..], Limits::new()).map(|v| v.unwrap().line()).collect();
    /// assert_eq!(v, [1, 4]); // empty lines are skipped but counted
    /// ```
    pub fn line(&self) -> u64 {
        self.line
    }
    /// Bytes of the line consumed before the verdict (its newline not included).
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits};
    /// let v: Vec<u64> = JsonLines::new(&b"[1,2]\n[1,]x\n"[..], Limits::new()).map(|v| v.unwrap().bytes_read()).collect();
    /// assert_eq!(v, [5, 4]); // the second stops at the `]` that decided it
    /// ```
    pub fn bytes_read(&self) -> u64 {
        self.bytes_read
    }
    /// The verdict itself.
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits, Rejection};
    /// let v = JsonLines::new(&b"{\"a\":1,\"a\":2}\n"[..], Limits::new()).next().unwrap().unwrap();
    /// let Err(Rejection::Error(e)) = v.result() else { panic!() };
    /// assert_eq!(e.kind().code(), "duplicate_name");
    /// ```
    pub fn result(&self) -> &Result<(), Rejection> {
        &self.result
    }
    /// Whether the line was accepted.
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits};
    /// let ok: Vec<bool> = JsonLines::new(&b"true\nnul\n"[..], Limits::new()).map(|v| v.unwrap().is_valid()).collect();
    /// assert_eq!(ok, [true, false]);
    /// ```
    pub fn is_valid(&self) -> bool {
        self.result.is_ok()
    }
    /// The verdict line `jsongate check --lines` prints (without a newline): the line
    /// number first, then what [`verdict_json`] (or [`Validator::verdict_json`]) writes:
    /// `{"line":N,"valid":true,"bytes_read":M}`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits};
    /// let v = JsonLines::new(&b"\n{}\n"[..], Limits::new()).next().unwrap().unwrap();
    /// assert_eq!(v.to_json(), r#"{"line":2,"valid":true,"bytes_read":2}"#);
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        write_verdict(
            &mut out,
            Some(self.line),
            &self.result,
            self.bytes_read,
            self.errors.as_deref(),
        );
        out
    }
}

impl<R: Read> JsonLines<R> {
    /// Lines read from `reader`, each scanned with `limits`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits};
    /// let file = std::io::Cursor::new(b"[1]\n[1,2,3]\n".to_vec()); // any `Read`: a file, a socket
    /// let ok: Vec<bool> = JsonLines::new(file, Limits::new().max_items(2))
    ///     .map(|v| v.unwrap().is_valid())
    ///     .collect();
    /// assert_eq!(ok, [true, false]);
    /// ```
    pub fn new(reader: R, limits: Limits) -> Self {
        JsonLines {
            reader,
            scanner: Scanner::new(limits),
            validator: None,
            buf: vec![0; READ_CHUNK],
            pos: 0,
            end: 0,
            line: 0,
            eof: false,
        }
    }

    /// Validates every line with `validator` too (its [`max_errors`](Validator::max_errors)
    /// holds per line).
    ///
    /// # Example
    /// ```
    /// use jsongate::{JsonLines, Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"required":["id"]}"#)?;
    /// let lines = &b"{\"id\":1}\n{\"name\":\"x\"}\n"[..];
    /// let ok: Vec<bool> = JsonLines::new(lines, Limits::new())
    ///     .validator(Validator::new(&schema))
    ///     .map(|v| v.unwrap().is_valid())
    ///     .collect();
    /// assert_eq!(ok, [true, false]);
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn validator(mut self, validator: Validator) -> Self {
        self.validator = Some(validator);
        self
    }

    /// Reads the next line through the scanner: `None` at the end of input (no line
    /// started), else the scanner's outcome, whether the line was empty.
    fn scan_line(&mut self) -> Option<std::io::Result<(Result<Outcome, Error>, bool)>> {
        self.scanner.reset();
        if let Some(v) = &mut self.validator {
            v.reset();
        }
        let (mut len, mut last) = (0u64, 0u8);
        let mut stopped: Option<Result<Outcome, Error>> = None;
        loop {
            if self.pos == self.end && !self.eof {
                match self.reader.read(&mut self.buf) {
                    Ok(0) => self.eof = true,
                    Ok(n) => (self.pos, self.end) = (0, n),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Some(Err(e)),
                }
            }
            if self.pos == self.end {
                // End of input: a line without its newline, or none at all.
                if len == 0 {
                    return None;
                }
                break;
            }
            let rest = &self.buf[self.pos..self.end];
            let (seg, newline) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], true),
                None => (rest, false),
            };
            self.pos += seg.len() + usize::from(newline);
            len += seg.len() as u64 + u64::from(newline);
            if let Some(&b) = seg.last() {
                last = b;
            }
            if stopped.is_none() && !seg.is_empty() {
                let fed = match &mut self.validator {
                    Some(v) => self.scanner.feed(seg, v),
                    None => self.scanner.feed(seg, &mut Ignore),
                };
                match fed {
                    Ok(Flow::Continue) => {}
                    Ok(Flow::Stop) => stopped = Some(Ok(Outcome::Stopped)),
                    Err(e) => stopped = Some(Err(e)),
                }
            }
            if newline {
                len -= 1;
                break;
            }
        }
        self.line += 1;
        let empty = len == 0 || (len == 1 && last == b'\r');
        let out = match stopped {
            Some(out) => out,
            None => match &mut self.validator {
                Some(v) => self.scanner.finish(v),
                None => self.scanner.finish(&mut Ignore),
            },
        };
        Some(Ok((out, empty)))
    }
}

impl<R: Read> Iterator for JsonLines<R> {
    type Item = std::io::Result<LineVerdict>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (out, empty) = match self.scan_line()? {
                Ok(x) => x,
                Err(e) => return Some(Err(e)),
            };
            if empty {
                continue;
            }
            let (result, errors) = match &self.validator {
                Some(v) => (
                    v.verdict(&self.scanner, out),
                    (v.error_limit() > 1).then(|| v.violations().to_vec()),
                ),
                None => (out.map(|_| ()).map_err(Rejection::Error), None),
            };
            return Some(Ok(LineVerdict {
                line: self.line,
                bytes_read: self.scanner.bytes_read(),
                result,
                errors,
            }));
        }
    }
}

/// An `error` object with the members every one starts with: `kind`, `offset`, `line`,
/// `column`, `pointer` and `message`; the caller adds the rest and closes it.
fn error_object<'a>(
    out: &'a mut String,
    kind: &str,
    (offset, line, column): (u64, u64, u64),
    pointer: &str,
    message: &str,
) -> ObjectWriter<'a> {
    let mut o = ObjectWriter::new(out);
    o.str("kind", kind)
        .u64("offset", offset)
        .u64("line", line)
        .u64("column", column)
        .str("pointer", pointer)
        .str("message", message);
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `n` bytes per read, so that lines, `\r\n` and limits fall on
    /// every chunk boundary.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn verdicts(input: &[u8], step: usize, limits: Limits) -> Vec<String> {
        JsonLines::new(Trickle(input, step), limits)
            .map(|v| v.unwrap().to_json())
            .collect()
    }

    #[test]
    fn chunk_boundaries_do_not_change_the_verdicts() {
        let input = b"{\"a\":[1,2]}\r\n\r\n\n[1,]\n\"abcdefghijkl\"\n  \n{\"b\":true}";
        let limits = Limits::new().max_bytes(12);
        let whole = verdicts(input, usize::MAX, limits);
        assert_eq!(whole.len(), 5, "{whole:?}");
        assert!(whole[0].starts_with(r#"{"line":1,"valid":true,"bytes_read":12}"#));
        assert!(whole[1].starts_with(r#"{"line":4,"valid":false,"#));
        assert!(whole[2]
            .contains(r#""line":5,"valid":false,"bytes_read":12,"error":{"kind":"too_large""#));
        assert!(whole[3]
            .starts_with(r#"{"line":6,"valid":false,"bytes_read":2,"error":{"kind":"syntax""#));
        assert_eq!(whole[4], r#"{"line":7,"valid":true,"bytes_read":10}"#);
        for step in 1..=input.len() {
            assert_eq!(
                verdicts(input, step, limits),
                whole,
                "{step} bytes per read"
            );
        }
    }

    #[test]
    fn a_validator_judges_every_line_alone() {
        let schema = crate::Schema::compile(br#"{"required":["id"]}"#).unwrap();
        let lines = JsonLines::new(&b"{\"id\":1}\n{}\n{\"id\":2}\n"[..], Limits::new())
            .validator(Validator::new(&schema).max_errors(3));
        let v: Vec<LineVerdict> = lines.map(Result::unwrap).collect();
        assert_eq!(
            v.iter().map(LineVerdict::is_valid).collect::<Vec<_>>(),
            [true, false, true]
        );
        assert_eq!(v[1].line(), 2);
        assert!(
            v[1].to_json().contains(r#""errors":[{"kind":"schema""#),
            "{}",
            v[1].to_json()
        );
        assert!(matches!(v[1].result(), Err(Rejection::Violation(_))));
    }

    #[test]
    fn a_read_error_is_an_io_error_not_a_verdict() {
        struct Failing(bool);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                if std::mem::replace(&mut self.0, true) {
                    return Err(std::io::Error::other("gone"));
                }
                buf[..4].copy_from_slice(b"[1]\n");
                Ok(4)
            }
        }
        let mut it = JsonLines::new(Failing(false), Limits::new());
        assert!(it.next().unwrap().unwrap().is_valid());
        assert!(it.next().unwrap().is_err());
    }
}
