//! A strict adapter for the text output of commands (SSH-style tools).
//!
//! A contract declares a line format; every line must fit it, and any other line (a banner,
//! a warning, a blank line, a stray carriage return) rejects the whole output. Accepted
//! output becomes scanner-style events (an object for `key_value`, an array of objects for
//! `line_regex`) that go through the same schema, semantic and selection path as JSON.

use std::fmt;

use crate::scan::{Event, Flow, Number, Position, Sink};
use crate::schema::regex::Regex;
use crate::Limits;

/// A `line_regex` pattern: ECMA-262 syntax in Unicode mode (as JSON Schema's `pattern` reads
/// it), matched against each whole line; its named groups (`(?<name>...)`) become the line
/// object's members, in the order they appear in the pattern.
///
/// # Example
/// ```
/// use jsongate::gate::LinePattern;
/// let p = LinePattern::new(r"(?<name>[a-z]+) (?<pid>[0-9]+)").unwrap();
/// assert_eq!(p.names(), ["name", "pid"]);
/// assert_eq!(p.as_str(), r"(?<name>[a-z]+) (?<pid>[0-9]+)");
/// // Rust-only syntax is not ECMA-262.
/// assert!(LinePattern::new(r"(?P<name>[a-z]+)").is_err());
/// // Matching runs in linear time: look-around and backreferences are refused.
/// assert!(LinePattern::new(r"(?<a>x)\k<a>").is_err());
/// ```
#[derive(Clone, Debug)]
pub struct LinePattern {
    source: String,
    /// The pattern anchored at both ends.
    regex: Regex,
    /// Distinct group names in pattern order, each with every group index carrying it.
    names: Vec<(String, Vec<u32>)>,
}

/// Why a [`LinePattern`] was refused: the pattern parser's message.
///
/// # Example
/// ```
/// use jsongate::gate::LinePattern;
/// let err = LinePattern::new(r"(?<a>x)(?=y)").unwrap_err();
/// assert_eq!(err.to_string(), "look-around and backreferences are not supported in line patterns");
/// assert!(LinePattern::new("(unclosed").is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError(Box<(PatternErrorKind, String)>);

kind_message_error!(PatternError, PatternErrorKind);

/// Why a [`LinePattern`] was refused, as a [`PatternError`] says.
///
/// # Example
/// ```
/// use jsongate::gate::{LinePattern, PatternErrorKind};
/// assert_eq!(LinePattern::new("(unclosed").unwrap_err().kind(), PatternErrorKind::Syntax);
/// assert_eq!(LinePattern::new(r"(?<=x)y").unwrap_err().kind(), PatternErrorKind::NotLinear);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatternErrorKind {
    /// Not valid ECMA-262 syntax, or uses what has no matcher here.
    Syntax,
    /// Needs look-around or backreferences (lines are matched in linear time).
    NotLinear,
}

impl LinePattern {
    /// Compiles `pattern`.
    ///
    /// # Errors
    /// The pattern is not valid ECMA-262 syntax, uses what has no matcher here, or needs
    /// look-around or backreferences (lines are matched in linear time).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::LinePattern;
    /// assert!(LinePattern::new(r"(?<user>\w+)\s+(?<pid>\d+)").is_ok());
    /// assert!(LinePattern::new(r"(?<a>\p{L}+)").is_ok()); // Unicode mode, as JSON Schema's `pattern`
    /// assert!(LinePattern::new(r"(?<=x)y").is_err()); // look-behind: not linear
    /// ```
    pub fn new(pattern: &str) -> Result<LinePattern, PatternError> {
        let regex = Regex::new(&format!("^(?:{pattern})$"))
            .map_err(|e| PatternError::new(PatternErrorKind::Syntax, e.to_string()))?;
        if !regex.is_linear() {
            return Err(PatternError::new(
                PatternErrorKind::NotLinear,
                "look-around and backreferences are not supported in line patterns",
            ));
        }
        let mut names: Vec<(String, Vec<u32>)> = Vec::new();
        for (name, index) in regex.group_names() {
            match names.iter_mut().find(|(n, _)| n == name) {
                Some((_, indexes)) => indexes.push(*index),
                None => names.push((name.clone(), vec![*index])),
            }
        }
        Ok(LinePattern {
            source: pattern.to_owned(),
            regex,
            names,
        })
    }

    /// The pattern as written.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::LinePattern;
    /// // As written: without the anchors added for whole-line matching.
    /// assert_eq!(LinePattern::new("(?<n>[0-9]+)").unwrap().as_str(), "(?<n>[0-9]+)");
    /// ```
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The group names, each once, in the order they appear.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::LinePattern;
    /// let p = LinePattern::new(r"(?<k>[a-z]+)=(?<v>\d+)|(?<k>[a-z]+)").unwrap();
    /// assert_eq!(p.names(), ["k", "v"]); // a name used in two alternatives is listed once
    /// ```
    pub fn names(&self) -> Vec<&str> {
        self.names.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// The named groups of `line` when the whole line matches: each name with the text of
    /// the group of that name that took part in the match (none for a group that did not).
    fn fields<'l>(&self, line: &'l str) -> Option<Vec<(&str, Option<&'l str>)>> {
        let groups = self.regex.captures(line)?;
        Some(
            self.names
                .iter()
                .map(|(name, indexes)| {
                    let text = indexes
                        .iter()
                        .find_map(|&i| groups.get(i as usize).copied().flatten());
                    (name.as_str(), text)
                })
                .collect(),
        )
    }
}

/// The JSON type a line value is converted to.
///
/// # Example
/// ```
/// use jsongate::gate::{LineFormat, LineType};
/// use jsongate::json::{Value, ValueBuilder};
/// use jsongate::Limits;
/// let f = LineFormat::KeyValue { separator: "=".into(),
///     keys: vec![("port".into(), LineType::Integer), ("tls".into(), LineType::Boolean), ("host".into(), LineType::String)] };
/// let mut b = ValueBuilder::new();
/// f.feed(b"host=db1\nport=5432\ntls=true\n", &Limits::new(), &mut b).unwrap();
/// assert_eq!(b.take().unwrap().to_json(), r#"{"host":"db1","port":5432,"tls":true}"#);
/// assert_eq!(f.feed(b"port=05432", &Limits::new(), &mut ValueBuilder::new()).unwrap_err().kind().name(), "bad_value");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineType {
    /// Kept as text.
    String,
    /// `-?(0|[1-9][0-9]*)`, kept as an exact number.
    Integer,
    /// A JSON number, kept as exact text.
    Number,
    /// `true` or `false`.
    Boolean,
}

impl LineType {
    /// The type named `s` (`string`, `integer`, `number`, `boolean`).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::LineType;
    /// assert_eq!(LineType::parse("integer"), Some(LineType::Integer));
    /// assert_eq!(LineType::parse("int"), None);
    /// ```
    pub fn parse(s: &str) -> Option<LineType> {
        Some(match s {
            "string" => LineType::String,
            "integer" => LineType::Integer,
            "number" => LineType::Number,
            "boolean" => LineType::Boolean,
            _ => return None,
        })
    }
}

/// A declared line format.
///
/// # Example
/// ```
/// use jsongate::gate::{LineFormat, LinePattern, LineType};
/// use jsongate::json::ValueBuilder;
/// use jsongate::Limits;
/// let ps = LineFormat::LineRegex { regex: LinePattern::new(r"(?<pid>\d+) (?<cmd>\S+)").unwrap(),
///     types: vec![("pid".into(), LineType::Integer)] };
/// let mut b = ValueBuilder::new();
/// ps.feed(b"1 init\n42 sshd\n", &Limits::new(), &mut b).unwrap();
/// assert_eq!(b.take().unwrap().to_json(), r#"[{"pid":1,"cmd":"init"},{"pid":42,"cmd":"sshd"}]"#);
/// // Any line that does not fit rejects the whole output.
/// let err = ps.feed(b"1 init\nWARNING: low disk\n", &Limits::new(), &mut ValueBuilder::new()).unwrap_err();
/// assert_eq!((err.line(), err.offset(), err.kind().name()), (2, 7, "no_match"));
/// ```
#[derive(Clone, Debug)]
pub enum LineFormat {
    /// `key<separator>value` lines, keys from a declared list, each at most once; the output
    /// is one object in line order.
    KeyValue {
        /// Between key and value (`=`, `: `).
        separator: String,
        /// Declared keys and their types.
        keys: Vec<(String, LineType)>,
    },
    /// Every line matches one pattern as a whole; the output is an array with one object per
    /// line, of the named groups that took part (typed by `types`, strings otherwise).
    LineRegex {
        /// The line pattern (matched against the whole line).
        regex: LinePattern,
        /// Types of named captures.
        types: Vec<(String, LineType)>,
    },
}

/// Why command output was rejected: the 1-based line, the byte offset of the line's start,
/// and the [`LineErrorKind`] (its [`name`](LineErrorKind::name) is the audit record's fixed
/// reason).
///
/// # Example
/// ```
/// use jsongate::gate::{LineErrorKind, LineFormat, LineType};
/// use jsongate::{Event, Flow, Limits};
/// let f = LineFormat::KeyValue { separator: "=".into(), keys: vec![("a".into(), LineType::String)] };
/// let err = f.feed(b"a=1\na=2\n", &Limits::new(), &mut |_: Event<'_>, _| Flow::Continue).unwrap_err();
/// assert_eq!((err.kind(), err.line(), err.offset()), (LineErrorKind::DuplicateKey, 2, 4));
/// assert_eq!(err.to_string(), "line 2: duplicate_key");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError(Box<LineInner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct LineInner {
    kind: LineErrorKind,
    line: u64,
    offset: u64,
}

/// What was wrong with a line of command output, as a [`LineError`] says.
///
/// # Example
/// ```
/// use jsongate::gate::LineErrorKind;
/// assert_eq!(LineErrorKind::NoMatch.name(), "no_match");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LineErrorKind {
    /// The output is not UTF-8.
    InvalidUtf8,
    /// The output is larger than `max_bytes`.
    TooLarge,
    /// A line ends in `\r` (CRLF output).
    CarriageReturn,
    /// A line is empty.
    BlankLine,
    /// A key-value line has no separator.
    NoSeparator,
    /// A key-value line names a key the format does not declare.
    UnknownKey,
    /// A key-value line repeats a key.
    DuplicateKey,
    /// A line does not match the line pattern.
    NoMatch,
    /// A value is not of its declared type.
    BadValue,
    /// A line is longer than `max_string_bytes`.
    TooLong,
    /// More lines than `max_members` or `max_items` allow.
    TooManyLines,
}

impl LineErrorKind {
    /// The fixed reason code in `snake_case` (`"no_match"`, `"bad_value"`), as audit records
    /// carry it.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::LineErrorKind;
    /// assert_eq!(LineErrorKind::CarriageReturn.name(), "carriage_return");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            LineErrorKind::InvalidUtf8 => "invalid_utf8",
            LineErrorKind::TooLarge => "too_large",
            LineErrorKind::CarriageReturn => "carriage_return",
            LineErrorKind::BlankLine => "blank_line",
            LineErrorKind::NoSeparator => "no_separator",
            LineErrorKind::UnknownKey => "unknown_key",
            LineErrorKind::DuplicateKey => "duplicate_key",
            LineErrorKind::NoMatch => "no_match",
            LineErrorKind::BadValue => "bad_value",
            LineErrorKind::TooLong => "too_long",
            LineErrorKind::TooManyLines => "too_many_lines",
        }
    }
}

impl LineError {
    fn new(kind: LineErrorKind, line: u64, offset: u64) -> LineError {
        LineError(Box::new(LineInner { kind, line, offset }))
    }

    /// What was wrong with the line.
    pub fn kind(&self) -> LineErrorKind {
        self.0.kind
    }

    /// The 1-based line number.
    pub fn line(&self) -> u64 {
        self.0.line
    }

    /// The byte offset of the start of the line.
    pub fn offset(&self) -> u64 {
        self.0.offset
    }
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.0.line, self.0.kind.name())
    }
}

impl std::error::Error for LineError {}

fn typed(t: LineType, text: &str) -> Option<Event<'_>> {
    match t {
        LineType::String => Some(Event::String(text)),
        LineType::Boolean => match text {
            "true" => Some(Event::Bool(true)),
            "false" => Some(Event::Bool(false)),
            _ => None,
        },
        LineType::Integer => {
            let digits = text.strip_prefix('-').unwrap_or(text);
            let canonical = digits == "0"
                || (!digits.is_empty()
                    && !digits.starts_with('0')
                    && digits.bytes().all(|b| b.is_ascii_digit()));
            if canonical {
                Number::parse(text).map(Event::Number)
            } else {
                None
            }
        }
        LineType::Number => Number::parse(text).map(Event::Number),
    }
}

impl LineFormat {
    /// Converts `input` to events for `sink`. Returns `Ok(false)` if the sink stopped.
    ///
    /// # Errors
    /// The first line that does not fit the format, or a crossed limit.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{LineFormat, LineType};
    /// use jsongate::{Event, Flow, Limits};
    /// let f = LineFormat::KeyValue { separator: ": ".into(), keys: vec![("status".into(), LineType::String)] };
    /// let mut names = Vec::new();
    /// let mut sink = |ev: Event<'_>, _| { if let Event::Name(n) = ev { names.push(n.to_owned()) } Flow::Continue };
    /// assert_eq!(f.feed(b"status: ok\n", &Limits::new(), &mut sink), Ok(true));
    /// assert_eq!(names, ["status"]);
    /// let err = f.feed(b"status: ok\r\n", &Limits::new(), &mut |_: Event<'_>, _| Flow::Continue).unwrap_err();
    /// assert_eq!(err.kind().name(), "carriage_return");
    /// ```
    pub fn feed<S: Sink + ?Sized>(
        &self,
        input: &[u8],
        limits: &Limits,
        sink: &mut S,
    ) -> Result<bool, LineError> {
        let err = |line, offset, kind| LineError::new(kind, line, offset);
        if input.len() as u64 > limits.get_max_bytes() {
            return Err(err(1, limits.get_max_bytes(), LineErrorKind::TooLarge));
        }
        let text = match std::str::from_utf8(input) {
            Ok(t) => t,
            Err(e) => {
                let at = e.valid_up_to();
                let line = input[..at].split(|&b| b == b'\n').count() as u64;
                return Err(err(line, at as u64, LineErrorKind::InvalidUtf8));
            }
        };
        // One terminating newline is allowed; everything before it is lines.
        let body = text.strip_suffix('\n').unwrap_or(text);
        let mut emit = |ev: Event<'_>, offset: u64, line: u64| {
            let at = Position {
                offset,
                line,
                column: 1,
            };
            sink.event_at(ev, at) == Flow::Continue
        };
        let (open, close) = match self {
            LineFormat::KeyValue { .. } => (Event::BeginObject, Event::EndObject),
            LineFormat::LineRegex { .. } => (Event::BeginArray, Event::EndArray),
        };
        if !emit(open, 0, 1) {
            return Ok(false);
        }
        let mut seen: Vec<&str> = Vec::new();
        let mut offset = 0u64;
        let lines: Vec<&str> = if body.is_empty() && text.is_empty() {
            Vec::new()
        } else {
            body.split('\n').collect()
        };
        for (i, l) in lines.iter().enumerate() {
            let n = i as u64 + 1;
            let start = offset;
            offset += l.len() as u64 + 1;
            if l.contains('\r') {
                return Err(err(n, start, LineErrorKind::CarriageReturn));
            }
            if l.trim().is_empty() {
                return Err(err(n, start, LineErrorKind::BlankLine));
            }
            if l.len() as u64 > limits.get_max_string_bytes() {
                return Err(err(n, start, LineErrorKind::TooLong));
            }
            match self {
                LineFormat::KeyValue { separator, keys } => {
                    let (k, v) = l
                        .split_once(separator.as_str())
                        .ok_or_else(|| err(n, start, LineErrorKind::NoSeparator))?;
                    let t = keys
                        .iter()
                        .find(|(name, _)| name == k)
                        .map(|x| x.1)
                        .ok_or_else(|| err(n, start, LineErrorKind::UnknownKey))?;
                    if seen.contains(&k) {
                        return Err(err(n, start, LineErrorKind::DuplicateKey));
                    }
                    if seen.len() as u64 >= limits.get_max_members() {
                        return Err(err(n, start, LineErrorKind::TooManyLines));
                    }
                    seen.push(k);
                    let ev = typed(t, v).ok_or_else(|| err(n, start, LineErrorKind::BadValue))?;
                    if !emit(Event::Name(k), start, n) || !emit(ev, start, n) {
                        return Ok(false);
                    }
                }
                LineFormat::LineRegex { regex, types } => {
                    if n > limits.get_max_items() {
                        return Err(err(n, start, LineErrorKind::TooManyLines));
                    }
                    let fields = regex
                        .fields(l)
                        .ok_or_else(|| err(n, start, LineErrorKind::NoMatch))?;
                    if !emit(Event::BeginObject, start, n) {
                        return Ok(false);
                    }
                    for (name, text) in fields {
                        let Some(text) = text else { continue };
                        let t = types
                            .iter()
                            .find(|(x, _)| x == name)
                            .map_or(LineType::String, |x| x.1);
                        let ev =
                            typed(t, text).ok_or_else(|| err(n, start, LineErrorKind::BadValue))?;
                        if !emit(Event::Name(name), start, n) || !emit(ev, start, n) {
                            return Ok(false);
                        }
                    }
                    if !emit(Event::EndObject, start, n) {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(emit(close, input.len() as u64, lines.len() as u64 + 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{Value, ValueBuilder};

    fn run(f: &LineFormat, s: &str) -> Result<String, &'static str> {
        let mut b = ValueBuilder::new();
        f.feed(s.as_bytes(), &Limits::new(), &mut b)
            .map_err(|e| e.kind().name())?;
        Ok(b.take().unwrap_or(Value::Null).to_json())
    }

    #[test]
    fn key_value_lines_are_strict() {
        let f = LineFormat::KeyValue {
            separator: "=".into(),
            keys: vec![
                ("state".into(), LineType::String),
                ("uptime".into(), LineType::Integer),
                ("ok".into(), LineType::Boolean),
            ],
        };
        assert_eq!(
            run(&f, "state=up=1\nuptime=42\nok=true\n"),
            Ok(r#"{"state":"up=1","uptime":42,"ok":true}"#.into())
        );
        assert_eq!(run(&f, "Welcome!\nstate=up\n"), Err("no_separator"));
        assert_eq!(run(&f, "state=up\n\n"), Err("blank_line"));
        assert_eq!(run(&f, "state=up\r\n"), Err("carriage_return"));
        assert_eq!(run(&f, "state=up\nstate=down"), Err("duplicate_key"));
        assert_eq!(run(&f, "motd=hi"), Err("unknown_key"));
        assert_eq!(run(&f, "uptime=042"), Err("bad_value"));
        assert_eq!(run(&f, "ok=yes"), Err("bad_value"));
        assert_eq!(run(&f, ""), Ok("{}".into()));
    }

    #[test]
    fn line_regex_matches_whole_lines() {
        let f = LineFormat::LineRegex {
            regex: LinePattern::new(r"(?<name>[a-z]+) (?<pid>[0-9]+)").unwrap(),
            types: vec![("pid".into(), LineType::Integer)],
        };
        assert_eq!(
            run(&f, "sshd 12\ncron 7\n"),
            Ok(r#"[{"name":"sshd","pid":12},{"name":"cron","pid":7}]"#.into())
        );
        assert_eq!(run(&f, "sshd 12 extra\n"), Err("no_match"));
        assert_eq!(run(&f, "WARNING: x\nsshd 12\n"), Err("no_match"));
        assert_eq!(run(&f, "sshd 1x\n"), Err("no_match"));
    }

    #[test]
    fn line_patterns_match_whole_lines_by_any_alternative() {
        // Leftmost-first would stop at `a`; the whole line must match, so `ab` does.
        let f = LineFormat::LineRegex {
            regex: LinePattern::new(r"(?<v>a|ab)").unwrap(),
            types: vec![],
        };
        assert_eq!(run(&f, "ab\n"), Ok(r#"[{"v":"ab"}]"#.into()));
        // A name in two alternatives, and an optional group that takes no part.
        let f = LineFormat::LineRegex {
            regex: LinePattern::new(r"(?<id>[0-9]+)(?: (?<tag>[a-z]+))?|id=(?<id>[0-9]+)").unwrap(),
            types: vec![("id".into(), LineType::Integer)],
        };
        assert_eq!(
            run(&f, "7 x\nid=8\n9\n"),
            Ok(r#"[{"id":7,"tag":"x"},{"id":8},{"id":9}]"#.into())
        );
        assert!(LinePattern::new("(?<a>x)(?<a>y)").is_err());
        assert!(LinePattern::new("(?<=a)b").is_err());
        assert!(LinePattern::new("[").is_err());
    }
}
