//! The push-fed scanner: strict RFC 8259 + I-JSON tokenizing with limits, as a stream of
//! [`Event`]s.
//!
//! This module owns the grammar state machine, the bounded nesting stack, limit checks and
//! error positions. It never reads a file or socket (the [`read`] adapters do that), never
//! recurses, and never builds a tree: each token is handed to a [`Sink`] as soon as it is
//! complete. Input arrives through [`Scanner::feed`] in chunks that may split any token
//! anywhere; [`Scanner::finish`] marks the end of input.
//!
//! Names and strings that lie whole inside one chunk and contain no escapes are handed out as
//! slices of the chunk; all others are decoded into a scratch buffer the scanner reuses.

mod names;
pub(crate) use names::{name_words, SHORT_NAME};
mod number;
pub mod read;
mod simd;
mod string;

use crate::error::{Error, ErrorKind, Syntax};
use crate::limits::Limits;
use crate::pointer;

use number::NumState;
pub use number::{Number, NumberError, NumberErrorKind};
use string::StrState;

/// One token of the document, in document order.
///
/// Text borrows either from the chunk being fed or from the scanner's scratch buffer, so an
/// event lives only for the duration of the [`Sink::event`] call.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Scanner};
/// let mut seen = Vec::new();
/// let mut sink = |ev: Event<'_>, _at: u64| {
///     seen.push(format!("{ev:?}"));
///     Flow::Continue
/// };
/// Scanner::new(Limits::new()).scan_slice(br#"{"a":[1,"x\n"]}"#, &mut sink).unwrap();
/// assert_eq!(seen, [
///     "BeginObject", r#"Name("a")"#, "BeginArray", "Number(Number(1))",
///     r#"String("x\n")"#, "EndArray", "EndObject",
/// ]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event<'a> {
    /// `{`
    BeginObject,
    /// `}`
    EndObject,
    /// `[`
    BeginArray,
    /// `]`
    EndArray,
    /// A member name, unescaped (always followed by the member's value).
    Name(&'a str),
    /// A string value, unescaped.
    String(&'a str),
    /// A number, as its exact text.
    Number(Number<'a>),
    /// `true` or `false`.
    Bool(bool),
    /// `null`
    Null,
}

/// What a [`Sink`] wants after an event.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Outcome, Scanner};
/// // Stop at the first string: the broken tail is never read.
/// let mut stop = |ev: Event<'_>, _: u64| match ev {
///     Event::String(_) => Flow::Stop,
///     _ => Flow::Continue,
/// };
/// let mut s = Scanner::new(Limits::new());
/// assert_eq!(s.scan_slice(br#"["first", }}}"#, &mut stop).unwrap(), Outcome::Stopped);
/// assert_eq!(s.bytes_read(), 8);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep scanning.
    Continue,
    /// Stop now: the scanner reads nothing more (the sink has reached its verdict).
    Stop,
}

/// Receives the scanner's events. Returning [`Flow::Stop`] ends the scan at once.
///
/// Closures `FnMut(Event<'_>, u64) -> Flow` are sinks; the `u64` is the byte offset where the
/// token starts.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Scanner, Sink};
///
/// /// Sums the integers of a document, stopping at the first that is not one.
/// #[derive(Default)]
/// struct Sum(i64, Option<u64>);
/// impl Sink for Sum {
///     fn event(&mut self, ev: Event<'_>, offset: u64) -> Flow {
///         if let Event::Number(n) = ev {
///             match n.as_i64() {
///                 Ok(v) => self.0 += v,
///                 Err(_) => {
///                     self.1 = Some(offset);
///                     return Flow::Stop;
///                 }
///             }
///         }
///         Flow::Continue
///     }
/// }
/// let mut sum = Sum::default();
/// Scanner::new(Limits::new()).scan_slice(b"[1, 2, 3.5, 4]", &mut sum).unwrap();
/// assert_eq!((sum.0, sum.1), (3, Some(7)));
/// ```
pub trait Sink {
    /// Handles one event that starts at byte `offset`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Event, Flow, Sink};
    /// // Any `FnMut(Event, u64) -> Flow` is a sink; offsets are where tokens start.
    /// let mut names = Vec::new();
    /// let mut sink = |ev: Event<'_>, at: u64| {
    ///     if let Event::Name(n) = ev {
    ///         names.push((n.to_owned(), at));
    ///     }
    ///     Flow::Continue
    /// };
    /// assert_eq!(sink.event(Event::Name("id"), 1), Flow::Continue);
    /// assert_eq!(names, [("id".to_owned(), 1)]);
    /// ```
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow;

    /// Handles one event with its full position. The scanner calls this; the default
    /// forwards to [`event`](Self::event). Sinks that report positions later (such as the
    /// validator, which may collect several violations) override it.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Event, Flow, Limits, Position, Scanner, Sink};
    ///
    /// /// Remembers where each string value starts.
    /// struct Where(Vec<(u64, u64)>);
    /// impl Sink for Where {
    ///     fn event(&mut self, _: Event<'_>, _: u64) -> Flow {
    ///         Flow::Continue
    ///     }
    ///     fn event_at(&mut self, ev: Event<'_>, at: Position) -> Flow {
    ///         if let Event::String(_) = ev {
    ///             self.0.push((at.line, at.column));
    ///         }
    ///         Flow::Continue
    ///     }
    /// }
    /// let mut w = Where(Vec::new());
    /// Scanner::new(Limits::new()).scan_slice(b"[\"a\",\n  \"b\"]", &mut w).unwrap();
    /// assert_eq!(w.0, [(1, 2), (2, 3)]);
    /// ```
    #[inline]
    fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        self.event(event, at.offset)
    }

    /// Whether this sink reads the text of the string value about to be delivered. The
    /// scanner asks only at the first escape of a string value (never for member names, which
    /// it always decodes to compare them), and only when the string lies whole in the chunk.
    ///
    /// When it answers `false`, the string is still checked in full (escapes, surrogate
    /// pairs, UTF-8, noncharacters and the length limit, with the same errors at the same
    /// offsets), but it is not decoded: its [`Event::String`] carries the empty string. The
    /// default answers `true`; [`Ignore`] answers `false`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Event, Flow, Limits, Scanner, Sink};
    ///
    /// /// Counts string values, never reading their text.
    /// struct Strings(usize);
    /// impl Sink for Strings {
    ///     fn event(&mut self, ev: Event<'_>, _: u64) -> Flow {
    ///         if let Event::String(_) = ev {
    ///             self.0 += 1;
    ///         }
    ///         Flow::Continue
    ///     }
    ///     fn wants_text(&self) -> bool {
    ///         false
    ///     }
    /// }
    /// let mut sink = Strings(0);
    /// let doc = br#"["plain", "tab\tand \u00e9"]"#;
    /// Scanner::new(Limits::new()).scan_slice(doc, &mut sink).unwrap();
    /// assert_eq!(sink.0, 2);
    /// // Bad escapes are found all the same.
    /// let err = Scanner::new(Limits::new()).scan_slice(br#"["a\x"]"#, &mut sink).unwrap_err();
    /// assert_eq!(err.offset(), 4);
    /// ```
    #[inline]
    fn wants_text(&self) -> bool {
        true
    }
}

/// Where a token starts: 0-based byte offset, 1-based line and column (column in bytes).
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Position, Scanner, Sink};
/// struct Last(Position);
/// impl Sink for Last {
///     fn event(&mut self, _: Event<'_>, _: u64) -> Flow {
///         Flow::Continue
///     }
///     fn event_at(&mut self, _: Event<'_>, at: Position) -> Flow {
///         self.0 = at;
///         Flow::Continue
///     }
/// }
/// let mut last = Last(Position::default());
/// Scanner::new(Limits::new()).scan_slice(b"{\n  \"k\": true\n}", &mut last).unwrap();
/// assert_eq!(last.0, Position { offset: 14, line: 3, column: 1 });
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// 0-based byte offset.
    pub offset: u64,
    /// 1-based line.
    pub line: u64,
    /// 1-based column, counted in bytes.
    pub column: u64,
}

impl Position {
    /// The position of byte `offset` in input without line breaks (line 1, column
    /// `offset + 1`): what a sink that is only given an offset assumes.
    ///
    /// # Example
    /// ```
    /// use jsongate::Position;
    /// let p = Position::on_one_line(9);
    /// assert_eq!((p.offset, p.line, p.column), (9, 1, 10));
    /// ```
    #[must_use]
    pub const fn on_one_line(offset: u64) -> Position {
        Position {
            offset,
            line: 1,
            column: offset + 1,
        }
    }
}

impl<F: FnMut(Event<'_>, u64) -> Flow> Sink for F {
    #[inline]
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        self(event, offset)
    }
}

/// A sink that ignores every event (for checking well-formedness and limits only).
///
/// # Example
/// ```
/// use jsongate::{ErrorKind, Ignore, Limits, Outcome, Scanner};
/// let mut s = Scanner::new(Limits::new().max_depth(2));
/// assert_eq!(s.scan_slice(b"[[1]]", &mut Ignore).unwrap(), Outcome::Complete);
/// let err = s.scan_slice(b"[[[1]]]", &mut Ignore).unwrap_err();
/// assert!(matches!(err.kind(), ErrorKind::TooDeep { .. }));
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Ignore;

impl Sink for Ignore {
    #[inline]
    fn event(&mut self, _: Event<'_>, _: u64) -> Flow {
        Flow::Continue
    }

    #[inline]
    fn wants_text(&self) -> bool {
        false
    }
}

/// How a scan ended without an error.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Ignore, Limits, Outcome, Scanner};
/// let mut s = Scanner::new(Limits::new());
/// assert_eq!(s.scan_slice(b"[true]", &mut Ignore).unwrap(), Outcome::Complete);
/// let mut first = |_: Event<'_>, _: u64| Flow::Stop;
/// assert_eq!(s.scan_slice(b"[true]", &mut first).unwrap(), Outcome::Stopped);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The document is one complete, valid JSON value within the limits.
    Complete,
    /// The sink returned [`Flow::Stop`]; the rest of the input was not read.
    Stopped,
}

/// Index of the first byte at or after `i` that is not a space (or `buf.len()`).
#[inline]
fn skip_spaces(buf: &[u8], mut i: usize) -> usize {
    // Indentation comes in long runs of spaces: compare eight bytes at a time.
    while let Some(w) = buf.get(i..i + 8) {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]])
            ^ 0x2020_2020_2020_2020;
        if x != 0 {
            return i + (x.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while buf.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// What the grammar expects next: one flat list (the four places a value can go are states
/// of their own), so that the grammar loop dispatches with one table lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// The top-level value.
    Top,
    /// A member's value (after the colon).
    Member,
    /// After `[`: an item or `]`.
    ItemFirst,
    /// After `,` in an array: an item.
    ItemNext,
    /// After `{`: a name or `}`.
    ObjectFirst,
    /// After `,` in an object: a name.
    Name,
    /// After a name: `:`.
    Colon,
    /// After a value: `,`, a closing bracket, or (at top level) the end.
    AfterValue,
    /// Inside a string split across chunks or containing escapes (details in `str_state`).
    Str,
    /// Inside a number split across chunks (its text so far in `scratch`, its grammar state
    /// in `Scanner::num`).
    Num,
    /// Inside a literal split across chunks (which one and how many bytes matched in
    /// `Scanner::lit`).
    Lit,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Literal {
    True,
    False,
    Null,
}

impl Literal {
    fn text(self) -> &'static [u8] {
        match self {
            Literal::True => b"true",
            Literal::False => b"false",
            Literal::Null => b"null",
        }
    }
    fn event(self) -> Event<'static> {
        match self {
            Literal::True => Event::Bool(true),
            Literal::False => Event::Bool(false),
            Literal::Null => Event::Null,
        }
    }
}

/// One open array or object.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    object: bool,
    /// Members or items started so far.
    count: u64,
    /// Whether the current member/item (the last counted) is still the place we are in; used
    /// only to build pointers.
    open: bool,
}

/// A reusable, push-fed JSON scanner.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Scanner};
/// let mut scanner = Scanner::new(Limits::new());
/// let mut names = Vec::new();
/// let mut sink = |ev: Event<'_>, _offset: u64| {
///     if let Event::Name(n) = ev {
///         names.push(n.to_owned());
///     }
///     Flow::Continue
/// };
/// scanner.feed(br#"{"id":1,"ti"#, &mut sink).unwrap();
/// scanner.feed(br#"tle":"x"}"#, &mut sink).unwrap();
/// scanner.finish(&mut sink).unwrap();
/// assert_eq!(names, ["id", "title"]);
/// ```
pub struct Scanner {
    limits: Limits,
    state: State,
    /// The open containers but the innermost, outermost first.
    stack: Vec<Frame>,
    /// The innermost open container (when `depth > 0`), kept apart so that the grammar
    /// loop reaches it without going through the stack.
    top: Frame,
    /// How many containers are open.
    depth: usize,
    names: names::Names,
    /// Decoded text of a token that is split or escaped.
    scratch: simd::Utf8Buf,
    str_state: StrState,
    /// The grammar state of a number split across chunks ([`State::Num`]).
    num: NumState,
    /// The literal split across chunks and how many of its bytes matched ([`State::Lit`]).
    lit: (Literal, u8),
    /// Offset of the next byte to be fed (bytes consumed so far).
    offset: u64,
    /// Start offset of the token in progress when it spans chunks.
    token_start: u64,
    /// 1-based line of `offset`, and the offset where that line starts.
    line: u64,
    line_start: u64,
    /// Set once the scan has ended: by an error (kept to be returned again) or a stop.
    failed: Option<Error>,
    stopped: bool,
    finished: bool,
    /// Buffer of the `std::io::Read` adapter, kept for reuse.
    read_buf: Vec<u8>,
    /// The string classifier for this CPU, chosen once.
    backend: simd::Backend,
}

impl Scanner {
    /// A scanner enforcing `limits`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Scanner};
    /// let mut s = Scanner::new(Limits::new().max_bytes(8));
    /// assert!(s.scan_slice(b"[1,2,3]", &mut Ignore).is_ok());
    /// assert!(s.scan_slice(b"[1,2,3,4]", &mut Ignore).is_err());
    /// ```
    pub fn new(limits: Limits) -> Self {
        Scanner {
            limits,
            state: State::Top,
            stack: Vec::new(),
            top: Frame::default(),
            depth: 0,
            names: names::Names::new(),
            scratch: simd::Utf8Buf::default(),
            str_state: StrState::default(),
            num: NumState::Start,
            lit: (Literal::Null, 0),
            offset: 0,
            token_start: 0,
            line: 1,
            line_start: 0,
            failed: None,
            stopped: false,
            finished: false,
            read_buf: Vec::new(),
            backend: simd::selected(),
        }
    }

    /// The limits this scanner enforces.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Scanner};
    /// let s = Scanner::new(Limits::new().max_depth(16));
    /// assert_eq!(s.limits().get_max_depth(), 16);
    /// ```
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Prepares the scanner for a new document, keeping its buffers (no allocation).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Outcome, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// // A broken document leaves the scanner failed until it is reset.
    /// assert!(s.feed(b"[1,", &mut Ignore).is_ok());
    /// assert!(s.feed(b"]", &mut Ignore).is_err());
    /// assert!(s.feed(b"2]", &mut Ignore).is_err());
    /// s.reset();
    /// s.feed(b"[2]", &mut Ignore).unwrap();
    /// assert_eq!(s.finish(&mut Ignore).unwrap(), Outcome::Complete);
    /// ```
    pub fn reset(&mut self) {
        self.state = State::Top;
        self.stack.clear();
        self.depth = 0;
        self.scratch.clear();
        self.str_state = StrState::default();
        self.offset = 0;
        self.token_start = 0;
        self.line = 1;
        self.line_start = 0;
        self.failed = None;
        self.stopped = false;
        self.finished = false;
    }

    /// Number of input bytes consumed so far. After an error, the bytes up to and including
    /// the byte that decided it, except [`ErrorKind::TooLarge`], after which it is exactly the
    /// limit (the byte past it is never consumed); after a stop, up to the end of the token
    /// that caused it.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// // The error is decided at the `x`: nothing after it counts as read.
    /// assert!(s.scan_slice(b"[1, x, 2, 3]", &mut Ignore).is_err());
    /// assert_eq!(s.bytes_read(), 5);
    /// ```
    pub fn bytes_read(&self) -> u64 {
        self.offset
    }

    /// Current nesting depth (0 at top level).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// s.feed(br#"{"a":[[1"#, &mut Ignore).unwrap();
    /// assert_eq!(s.depth(), 3);
    /// ```
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Feeds the next chunk of input. Returns [`Flow::Stop`] if the sink stopped the scan
    /// (the rest of the chunk and all later input are ignored).
    ///
    /// # Errors
    /// The first syntax, encoding, duplicate-name or limit violation; the same error is
    /// returned again by every later call.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Event, Flow, Limits, Outcome, Scanner};
    /// // A string cut across chunks arrives whole, as one event.
    /// let mut strings = Vec::new();
    /// let mut sink = |ev: Event<'_>, _: u64| {
    ///     if let Event::String(s) = ev {
    ///         strings.push(s.to_owned());
    ///     }
    ///     Flow::Continue
    /// };
    /// let mut s = Scanner::new(Limits::new());
    /// for chunk in [&b"[\"spl"[..], b"it\", 1", b"0]"] {
    ///     assert_eq!(s.feed(chunk, &mut sink).unwrap(), Flow::Continue);
    /// }
    /// assert_eq!(s.finish(&mut sink).unwrap(), Outcome::Complete);
    /// assert_eq!(strings, ["split"]);
    /// ```
    pub fn feed<S: Sink + ?Sized>(&mut self, chunk: &[u8], sink: &mut S) -> Result<Flow, Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.stopped || self.finished {
            return Ok(Flow::Stop);
        }
        let allowed = self.limits.bytes.saturating_sub(self.offset);
        let over = chunk.len() as u64 > allowed;
        let take = if over { allowed as usize } else { chunk.len() };
        let fed_end = self.offset + take as u64;
        match self.run(&chunk[..take], sink) {
            Ok(Flow::Stop) => {
                self.stopped = true;
                Ok(Flow::Stop)
            }
            Ok(Flow::Continue) if over => {
                let limit = self.limits.bytes;
                let e = self.error(ErrorKind::TooLarge { limit }, self.offset, None);
                Err(self.fail(e))
            }
            Ok(Flow::Continue) => Ok(Flow::Continue),
            Err(e) => {
                // Consumed: everything up to and including the byte that decided the error.
                self.offset = (e.offset() + 1).min(fed_end);
                Err(self.fail(e))
            }
        }
    }

    /// Marks the end of input: completes a trailing number and checks that exactly one value
    /// was read.
    ///
    /// # Errors
    /// [`Syntax::UnexpectedEnd`] (or the number's error) if the document is incomplete; any
    /// earlier error again.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Event, Flow, Ignore, Limits, Scanner, Syntax, ErrorKind};
    /// let mut s = Scanner::new(Limits::new());
    /// // A top-level number ends only at the end of input: `finish` delivers it.
    /// let mut last = String::new();
    /// let mut sink = |ev: Event<'_>, _: u64| {
    ///     if let Event::Number(n) = ev {
    ///         last = n.as_str().to_owned();
    ///     }
    ///     Flow::Continue
    /// };
    /// s.feed(b"12", &mut sink).unwrap();
    /// s.feed(b"34", &mut sink).unwrap();
    /// s.finish(&mut sink).unwrap();
    /// assert_eq!(last, "1234");
    /// // An unclosed document is an error at its end.
    /// s.reset();
    /// s.feed(b"[1", &mut Ignore).unwrap();
    /// let err = s.finish(&mut Ignore).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::Syntax(Syntax::UnexpectedEnd));
    /// assert_eq!(err.offset(), 2);
    /// ```
    pub fn finish<S: Sink + ?Sized>(&mut self, sink: &mut S) -> Result<Outcome, Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if self.stopped {
            return Ok(Outcome::Stopped);
        }
        if self.finished {
            return Ok(Outcome::Complete);
        }
        let at = self.offset;
        let r = match self.state {
            State::AfterValue if self.depth == 0 => Ok(Outcome::Complete),
            State::Num if self.depth == 0 => {
                if self.num.is_terminal() {
                    match self.emit_scratch_number(sink) {
                        Flow::Continue => Ok(Outcome::Complete),
                        Flow::Stop => Ok(Outcome::Stopped),
                    }
                } else {
                    Err(self.error(ErrorKind::Syntax(Syntax::InvalidNumber), at, None))
                }
            }
            State::Top => Err(self.error(ErrorKind::Syntax(Syntax::ExpectedValue), at, None)),
            _ => Err(self.error(ErrorKind::Syntax(Syntax::UnexpectedEnd), at, None)),
        };
        match r {
            Ok(o) => {
                self.finished = true;
                self.stopped = o == Outcome::Stopped;
                Ok(o)
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    #[inline]
    pub(crate) fn pos(&self, offset: u64) -> Position {
        Position {
            offset,
            line: self.line,
            column: offset.saturating_sub(self.line_start) + 1,
        }
    }

    /// 1-based line and column of `offset`, for an offset at or after the start of the
    /// current line (any token the scanner has just delivered qualifies).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// s.feed(b"[\n  1,\n  2", &mut Ignore).unwrap();
    /// // The `2` is byte 9: line 3, column 3.
    /// assert_eq!(s.line_column(9), (3, 3));
    /// ```
    pub fn line_column(&self, offset: u64) -> (u64, u64) {
        (self.line, offset.saturating_sub(self.line_start) + 1)
    }

    /// An error at `offset` with the pointer of the current position (for layers above the
    /// scanner that stop the stream, such as the validator's evaluation budget).
    pub(crate) fn error_at(&self, kind: ErrorKind, offset: u64) -> Error {
        self.error(kind, offset, None)
    }

    fn fail(&mut self, e: Error) -> Error {
        self.failed = Some(e.clone());
        e
    }

    /// Builds an error at absolute `offset`, with the pointer of the current position plus
    /// an optional extra member name.
    #[cold]
    fn error(&self, kind: ErrorKind, offset: u64, extra: Option<&[u8]>) -> Error {
        let mut p = String::new();
        let open = self
            .stack
            .iter()
            .chain((self.depth > 0).then_some(&self.top));
        for (d, f) in open.enumerate() {
            if !f.open {
                continue;
            }
            if f.object {
                pointer::push_name(&mut p, &String::from_utf8_lossy(&self.names.last(d + 1)));
            } else {
                pointer::push_index(&mut p, f.count - 1);
            }
        }
        if let Some(name) = extra {
            pointer::push_name(&mut p, &String::from_utf8_lossy(name));
        }
        let column = offset.saturating_sub(self.line_start) + 1;
        Error::new(kind, offset, self.line, column, p)
    }

    #[inline]
    fn skip_ws(&mut self, buf: &[u8], mut i: usize, base: u64) -> usize {
        // Compact text: a token right here, nothing to skip.
        if buf.get(i).is_some_and(|&b| b > b' ') {
            return i;
        }
        while let Some(&b) = buf.get(i) {
            match b {
                b' ' => i = skip_spaces(buf, i + 1),
                b'\n' => {
                    i += 1;
                    self.line += 1;
                    self.line_start = base + i as u64;
                }
                b'\t' | b'\r' => i += 1,
                _ => break,
            }
        }
        i
    }

    /// Counts one more item in the innermost array, enforcing the item limit.
    #[inline(always)]
    fn count_item(&mut self, at: u64) -> Result<(), Error> {
        // Only an open array reads an item: `top` is that array.
        let limit = self.limits.items;
        let f = &mut self.top;
        if f.count >= limit {
            return Err(self.too_many_items(at));
        }
        f.count += 1;
        f.open = true;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_many_items(&mut self, at: u64) -> Error {
        let limit = self.limits.items;
        self.top.open = false;
        self.error(ErrorKind::TooManyItems { limit }, at, None)
    }

    #[inline(always)]
    fn open(&mut self, object: bool, at: u64) -> Result<(), Error> {
        if self.depth as u64 >= self.limits.depth {
            return Err(self.too_deep(at));
        }
        if self.depth > 0 {
            self.stack.push(self.top);
        }
        self.top = Frame {
            object,
            count: 0,
            open: false,
        };
        self.depth += 1;
        if object {
            self.names.open(self.depth);
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self, at: u64) -> Error {
        let limit = self.limits.depth;
        self.error(ErrorKind::TooDeep { limit }, at, None)
    }

    /// The scanning loop over one chunk (already cut to the byte limit).
    #[allow(clippy::too_many_lines)]
    fn run<S: Sink + ?Sized>(&mut self, buf: &[u8], sink: &mut S) -> Result<Flow, Error> {
        let base = self.offset;
        let len = buf.len();
        let mut i = 0usize;
        let mut state = self.state;
        let mut win = simd::Utf8Window::new(buf);
        macro_rules! emit {
            ($ev:expr, $at:expr, $next:expr) => {{
                let at = $at;
                let flow = sink.event_at($ev, self.pos(at));
                i = $next;
                if flow == Flow::Stop {
                    self.state = state;
                    self.offset = base + i as u64;
                    return Ok(Flow::Stop);
                }
            }};
        }
        macro_rules! bail {
            ($kind:expr, $at:expr) => {{
                return Err(self.error($kind, base + ($at) as u64, None));
            }};
        }
        loop {
            match state {
                State::Top | State::Member | State::ItemFirst | State::ItemNext => {
                    i = self.skip_ws(buf, i, base);
                    let Some(&b) = buf.get(i) else { break };
                    let at = base + i as u64;
                    if b == b']' && state == State::ItemFirst {
                        state = self.close();
                        emit!(Event::EndArray, at, i + 1);
                        continue;
                    }
                    if matches!(state, State::ItemFirst | State::ItemNext) {
                        if b == b']' {
                            bail!(ErrorKind::Syntax(Syntax::TrailingComma), i);
                        }
                        self.count_item(at)?;
                    }
                    match b {
                        b'{' => {
                            self.open(true, at)?;
                            state = State::ObjectFirst;
                            emit!(Event::BeginObject, at, i + 1);
                        }
                        b'[' => {
                            self.open(false, at)?;
                            state = State::ItemFirst;
                            emit!(Event::BeginArray, at, i + 1);
                        }
                        b'"' => {
                            state = State::AfterValue;
                            match self.string_start(buf, &mut win, i, false, sink)? {
                                (_, None) => {
                                    state = State::Str;
                                    break;
                                }
                                (next, Some(flow)) => {
                                    i = next;
                                    if flow == Flow::Stop {
                                        self.state = state;
                                        self.offset = base + i as u64;
                                        return Ok(Flow::Stop);
                                    }
                                }
                            }
                        }
                        b'-' | b'0'..=b'9' => {
                            state = State::AfterValue;
                            if let Some(end) =
                                number::whole_number(buf, i, self.limits.number_bytes)
                            {
                                // Whole in the chunk and well-formed: delivered from here.
                                let n = Number(simd::ascii_str(&buf[i..end]));
                                emit!(Event::Number(n), at, end);
                                continue;
                            }
                            match self.number_start(buf, i, sink)? {
                                (_, None, st) => {
                                    self.num = st;
                                    state = State::Num;
                                    break;
                                }
                                (next, Some(flow), _) => {
                                    i = next;
                                    if flow == Flow::Stop {
                                        self.state = state;
                                        self.offset = base + i as u64;
                                        return Ok(Flow::Stop);
                                    }
                                }
                            }
                        }
                        b't' | b'f' | b'n' => {
                            let lit = match b {
                                b't' => Literal::True,
                                b'f' => Literal::False,
                                _ => Literal::Null,
                            };
                            let text = lit.text();
                            if buf.get(i..i + text.len()) == Some(text) {
                                // Whole in the chunk: one comparison.
                                state = State::AfterValue;
                                emit!(lit.event(), at, i + text.len());
                            } else {
                                self.lit = (lit, 0);
                                state = State::Lit;
                            }
                        }
                        0xEF if at == 0 => bail!(ErrorKind::Syntax(Syntax::ByteOrderMark), i),
                        b'/' => bail!(ErrorKind::Syntax(Syntax::Comment), i),
                        b'N' | b'I' => bail!(ErrorKind::Syntax(Syntax::InvalidLiteral), i),
                        b'+' | b'.' => bail!(ErrorKind::Syntax(Syntax::InvalidNumber), i),
                        _ => bail!(ErrorKind::Syntax(Syntax::ExpectedValue), i),
                    }
                }
                State::AfterValue => {
                    i = self.skip_ws(buf, i, base);
                    let Some(&b) = buf.get(i) else { break };
                    let at = base + i as u64;
                    if self.depth == 0 {
                        if b == b'/' {
                            bail!(ErrorKind::Syntax(Syntax::Comment), i);
                        }
                        bail!(ErrorKind::Syntax(Syntax::TrailingCharacters), i);
                    }
                    let top = &mut self.top;
                    match (b, top.object) {
                        (b',', true) => {
                            top.open = false;
                            state = State::Name;
                            i += 1;
                        }
                        (b',', false) => {
                            top.open = false;
                            state = State::ItemNext;
                            i += 1;
                        }
                        (b'}', true) => {
                            state = self.close();
                            emit!(Event::EndObject, at, i + 1);
                        }
                        (b']', false) => {
                            state = self.close();
                            emit!(Event::EndArray, at, i + 1);
                        }
                        (b'/', _) => bail!(ErrorKind::Syntax(Syntax::Comment), i),
                        (_, true) => bail!(ErrorKind::Syntax(Syntax::ExpectedCommaOrObjectEnd), i),
                        (_, false) => bail!(ErrorKind::Syntax(Syntax::ExpectedCommaOrArrayEnd), i),
                    }
                }
                State::ObjectFirst | State::Name => {
                    i = self.skip_ws(buf, i, base);
                    let Some(&b) = buf.get(i) else { break };
                    let at = base + i as u64;
                    match b {
                        b'"' => {
                            let limit = self.limits.members;
                            // Only an open object reads a name.
                            if self.top.count >= limit {
                                bail!(ErrorKind::TooManyMembers { limit }, i);
                            }
                            state = State::Colon;
                            match self.string_start(buf, &mut win, i, true, sink)? {
                                (_, None) => {
                                    state = State::Str;
                                    break;
                                }
                                (next, Some(flow)) => {
                                    i = next;
                                    if flow == Flow::Stop {
                                        self.state = state;
                                        self.offset = base + i as u64;
                                        return Ok(Flow::Stop);
                                    }
                                    // Compact text: the colon right after the name.
                                    if buf.get(i) == Some(&b':') {
                                        i += 1;
                                        state = State::Member;
                                    }
                                }
                            }
                        }
                        b'}' if state == State::ObjectFirst => {
                            state = self.close();
                            emit!(Event::EndObject, at, i + 1);
                        }
                        b'}' => bail!(ErrorKind::Syntax(Syntax::TrailingComma), i),
                        b'/' => bail!(ErrorKind::Syntax(Syntax::Comment), i),
                        _ if state == State::ObjectFirst => {
                            bail!(ErrorKind::Syntax(Syntax::ExpectedNameOrEnd), i)
                        }
                        _ => bail!(ErrorKind::Syntax(Syntax::ExpectedName), i),
                    }
                }
                State::Colon => {
                    i = self.skip_ws(buf, i, base);
                    let Some(&b) = buf.get(i) else { break };
                    if b != b':' {
                        bail!(ErrorKind::Syntax(Syntax::ExpectedColon), i);
                    }
                    i += 1;
                    state = State::Member;
                }
                State::Str => {
                    let name = self.str_state.name;
                    match self.string_continue(buf, &mut win, i, base, sink)? {
                        (_, None) => {
                            break;
                        }
                        (next, Some(flow)) => {
                            i = next;
                            state = if name {
                                State::Colon
                            } else {
                                State::AfterValue
                            };
                            if flow == Flow::Stop {
                                self.state = state;
                                self.offset = base + i as u64;
                                return Ok(Flow::Stop);
                            }
                        }
                    }
                }
                State::Num => match self.number_continue(buf, i, base, self.num, sink)? {
                    (_, None, st) => {
                        self.num = st;
                        break;
                    }
                    (next, Some(flow), _) => {
                        i = next;
                        state = State::AfterValue;
                        if flow == Flow::Stop {
                            self.state = state;
                            self.offset = base + i as u64;
                            return Ok(Flow::Stop);
                        }
                    }
                },
                State::Lit => {
                    let (lit, matched) = self.lit;
                    let text = lit.text();
                    let mut m = matched as usize;
                    if m == 0 {
                        self.token_start = base + i as u64;
                    }
                    while m < text.len() {
                        let Some(&b) = buf.get(i) else { break };
                        if b != text[m] {
                            bail!(ErrorKind::Syntax(Syntax::InvalidLiteral), i);
                        }
                        m += 1;
                        i += 1;
                    }
                    if m < text.len() {
                        self.lit = (lit, m as u8);
                        break;
                    }
                    state = State::AfterValue;
                    let at = self.token_start;
                    emit!(lit.event(), at, i);
                }
            }
        }
        self.state = state;
        self.offset = base + len as u64;
        Ok(Flow::Continue)
    }

    /// Pops the innermost container and returns the state after it.
    #[inline]
    fn close(&mut self) -> State {
        self.depth -= 1;
        if let Some(f) = self.stack.pop() {
            self.top = f;
        }
        State::AfterValue
    }
}
