//! The error type of a stopped scan: what went wrong, where, and in which value.
//!
//! An [`Error`] means the stream was stopped (syntax, limit, duplicate name, encoding, I/O).
//! It is one pointer wide (`Box`ed) so `Result<T, Error>` stays small on the hot path. The
//! kind's [`code`](ErrorKind::code) is a stable identifier for machines; the
//! [`Display`](std::fmt::Display) text is for people and may change.

use std::fmt;

/// The crate's error pattern for an error that is a kind and a message: a struct holding
/// `Box<(Kind, String)>` (one pointer wide), `kind()` and
/// `message()` readers, a crate-private `new(kind, message)`, `Display` (the message) and
/// `std::error::Error`. The kind enum is written out beside the struct
/// (`#[non_exhaustive]`, `Copy`). Declared before every other module (`#[macro_use]`).
#[allow(unused_macros)]
macro_rules! kind_message_error {
    ($name:ident, $kind:ident) => {
        impl $name {
            #[allow(dead_code)]
            pub(crate) fn new(kind: $kind, message: impl Into<String>) -> $name {
                $name(Box::new((kind, message.into())))
            }

            /// What kind of error this is.
            pub fn kind(&self) -> $kind {
                self.0 .0
            }

            /// The message (also the `Display` text).
            pub fn message(&self) -> &str {
                &self.0 .1
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0 .1)
            }
        }

        impl std::error::Error for $name {}
    };
}

/// What stopped the scan. Limits carry the limit that was crossed.
///
/// # Example
/// ```
/// use jsongate::{check, ErrorKind, Limits, Syntax};
/// let kind = |doc: &[u8]| check(doc, Limits::new().max_items(2)).unwrap_err().kind().clone();
/// assert_eq!(kind(b"[1,2,3]"), ErrorKind::TooManyItems { limit: 2 });
/// assert_eq!(kind(br#"{"a":1,"a":2}"#), ErrorKind::DuplicateName);
/// assert_eq!(kind(b"[1,]"), ErrorKind::Syntax(Syntax::TrailingComma));
/// assert_eq!(kind(b"[1,]").code(), "syntax");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// More input bytes than [`Limits::max_bytes`](crate::Limits::max_bytes).
    TooLarge {
        /// The limit that was crossed.
        limit: u64,
    },
    /// Nesting deeper than [`Limits::max_depth`](crate::Limits::max_depth).
    TooDeep {
        /// The limit that was crossed.
        limit: u64,
    },
    /// A member name longer than [`Limits::max_name_bytes`](crate::Limits::max_name_bytes).
    NameTooLong {
        /// The limit that was crossed.
        limit: u64,
    },
    /// A string longer than [`Limits::max_string_bytes`](crate::Limits::max_string_bytes).
    StringTooLong {
        /// The limit that was crossed.
        limit: u64,
    },
    /// A number longer than [`Limits::max_number_bytes`](crate::Limits::max_number_bytes).
    NumberTooLong {
        /// The limit that was crossed.
        limit: u64,
    },
    /// An object with more members than [`Limits::max_members`](crate::Limits::max_members).
    TooManyMembers {
        /// The limit that was crossed.
        limit: u64,
    },
    /// An array with more items than [`Limits::max_items`](crate::Limits::max_items).
    TooManyItems {
        /// The limit that was crossed.
        limit: u64,
    },
    /// A member name that already occurs in the same object (compared after unescaping).
    DuplicateName,
    /// Bytes that are not well-formed UTF-8 (invalid, overlong, surrogate, truncated).
    InvalidUtf8,
    /// A `\u` escape that leaves a lone or reversed UTF-16 surrogate.
    LoneSurrogate,
    /// A Unicode noncharacter (U+FDD0–U+FDEF, U+xFFFE, U+xFFFF) in a string or name, under
    /// the I-JSON profile ([`Limits::i_json`](crate::Limits::i_json)).
    Noncharacter,
    /// The bytes do not follow the strict JSON grammar.
    Syntax(Syntax),
    /// Reading the input failed (only from the `std::io::Read` adapters).
    Io(std::io::ErrorKind),
    /// Schema evaluation needed more steps than the validator's budget allows.
    BudgetExceeded {
        /// The budget that was exhausted.
        limit: u64,
    },
    /// The document reached a part of the schema that applies itself to the same value
    /// without end (an in-place reference cycle such as `{"allOf":[{"$ref":"#"}]}`), whose
    /// evaluation could never finish.
    SchemaCycle {
        /// The keyword location (through the schema) where the cycle was entered.
        keyword_location: Box<str>,
    },
}

/// Which grammar rule was broken.
///
/// # Example
/// ```
/// use jsongate::{check, ErrorKind, Limits, Syntax};
/// let syntax = |doc: &[u8]| match check(doc, Limits::new()).unwrap_err().kind() {
///     ErrorKind::Syntax(s) => *s,
///     other => panic!("{other:?}"),
/// };
/// assert_eq!(syntax(b""), Syntax::ExpectedValue);
/// assert_eq!(syntax(b"[1,]"), Syntax::TrailingComma);
/// assert_eq!(syntax(b"01"), Syntax::LeadingZero);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Syntax {
    /// A value was expected (empty input, or a byte that cannot start a value).
    ExpectedValue,
    /// After `{`: a member name or `}` was expected.
    ExpectedNameOrEnd,
    /// After `,` in an object: a member name was expected.
    ExpectedName,
    /// After a member name: `:` was expected.
    ExpectedColon,
    /// After a member value: `,` or `}` was expected.
    ExpectedCommaOrObjectEnd,
    /// After an array item: `,` or `]` was expected.
    ExpectedCommaOrArrayEnd,
    /// A `,` directly followed by `]` or `}`.
    TrailingComma,
    /// Something other than whitespace after the top-level value.
    TrailingCharacters,
    /// The input ended inside a value.
    UnexpectedEnd,
    /// A malformed number (`-`, `1.`, `.5`, `1e`, `+1`, …).
    InvalidNumber,
    /// A number with a leading zero (`01`, `-00`).
    LeadingZero,
    /// A malformed `true`, `false` or `null` (including `NaN`, `Infinity`).
    InvalidLiteral,
    /// A backslash escape other than `\" \\ \/ \b \f \n \r \t \uXXXX`.
    InvalidEscape,
    /// An unescaped control character (U+0000–U+001F) inside a string.
    ControlCharacter,
    /// A byte order mark before the value.
    ByteOrderMark,
    /// A comment (`//` or `/*`), which strict JSON does not allow.
    Comment,
}

impl Syntax {
    fn describe(self) -> &'static str {
        match self {
            Syntax::ExpectedValue => "expected a JSON value",
            Syntax::ExpectedNameOrEnd => "expected a member name or '}'",
            Syntax::ExpectedName => "expected a member name",
            Syntax::ExpectedColon => "expected ':' after the member name",
            Syntax::ExpectedCommaOrObjectEnd => "expected ',' or '}' after the member value",
            Syntax::ExpectedCommaOrArrayEnd => "expected ',' or ']' after the array item",
            Syntax::TrailingComma => "trailing comma",
            Syntax::TrailingCharacters => "unexpected data after the top-level value",
            Syntax::UnexpectedEnd => "unexpected end of input",
            Syntax::InvalidNumber => "invalid number",
            Syntax::LeadingZero => "leading zeros are not allowed in numbers",
            Syntax::InvalidLiteral => "invalid literal (expected true, false or null)",
            Syntax::InvalidEscape => "invalid escape sequence",
            Syntax::ControlCharacter => "unescaped control character in string",
            Syntax::ByteOrderMark => "byte order mark is not allowed",
            Syntax::Comment => "comments are not allowed",
        }
    }
}

impl ErrorKind {
    /// The stable, machine-readable name of this kind (used by the CLI's `kind` field).
    ///
    /// # Example
    /// ```
    /// use jsongate::ErrorKind;
    /// assert_eq!(ErrorKind::DuplicateName.code(), "duplicate_name");
    /// assert_eq!(ErrorKind::TooDeep { limit: 3 }.code(), "too_deep");
    /// ```
    pub fn code(&self) -> &'static str {
        match self {
            ErrorKind::TooLarge { .. } => "too_large",
            ErrorKind::TooDeep { .. } => "too_deep",
            ErrorKind::NameTooLong { .. } => "name_too_long",
            ErrorKind::StringTooLong { .. } => "string_too_long",
            ErrorKind::NumberTooLong { .. } => "number_too_long",
            ErrorKind::TooManyMembers { .. } => "too_many_members",
            ErrorKind::TooManyItems { .. } => "too_many_items",
            ErrorKind::DuplicateName => "duplicate_name",
            ErrorKind::InvalidUtf8 => "invalid_utf8",
            ErrorKind::LoneSurrogate => "lone_surrogate",
            ErrorKind::Noncharacter => "noncharacter",
            ErrorKind::Syntax(_) => "syntax",
            ErrorKind::Io(_) => "io",
            ErrorKind::BudgetExceeded { .. } => "budget_exceeded",
            ErrorKind::SchemaCycle { .. } => "schema_cycle",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ErrorKind::TooLarge { limit } => write!(f, "input exceeds {limit} bytes"),
            ErrorKind::TooDeep { limit } => write!(f, "nesting exceeds depth {limit}"),
            ErrorKind::NameTooLong { limit } => write!(f, "member name exceeds {limit} bytes"),
            ErrorKind::StringTooLong { limit } => write!(f, "string exceeds {limit} bytes"),
            ErrorKind::NumberTooLong { limit } => write!(f, "number exceeds {limit} bytes"),
            ErrorKind::TooManyMembers { limit } => {
                write!(f, "object has more than {limit} members")
            }
            ErrorKind::TooManyItems { limit } => write!(f, "array has more than {limit} items"),
            ErrorKind::DuplicateName => f.write_str("duplicate member name"),
            ErrorKind::InvalidUtf8 => f.write_str("invalid UTF-8"),
            ErrorKind::LoneSurrogate => f.write_str("\\u escape leaves a lone surrogate"),
            ErrorKind::Noncharacter => f.write_str("Unicode noncharacter (I-JSON profile)"),
            ErrorKind::Syntax(s) => f.write_str(s.describe()),
            ErrorKind::Io(k) => write!(f, "read failed: {k}"),
            ErrorKind::BudgetExceeded { limit } => {
                write!(f, "schema evaluation exceeded its budget of {limit} steps")
            }
            ErrorKind::SchemaCycle { keyword_location } => write!(
                f,
                "the schema applies itself to this value without end (in-place reference cycle at {})",
                if keyword_location.is_empty() { "the root" } else { keyword_location }
            ),
        }
    }
}

/// A stopped scan: the kind, the 0-based byte offset where it was detected, the 1-based line
/// and column of that byte, and the JSON Pointer (RFC 6901) of the value concerned.
///
/// # Example
/// ```
/// let err = jsongate::check(br#"{"approved":false,"approved":true}"#, jsongate::Limits::new())
///     .unwrap_err();
/// assert_eq!(err.kind().code(), "duplicate_name");
/// assert_eq!(err.pointer(), "/approved");
/// assert_eq!(err.offset(), 27); // the closing quote of the second name
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<Inner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    kind: ErrorKind,
    offset: u64,
    line: u64,
    column: u64,
    pointer: String,
}

impl Error {
    pub(crate) fn new(
        kind: ErrorKind,
        offset: u64,
        line: u64,
        column: u64,
        pointer: String,
    ) -> Self {
        Error(Box::new(Inner {
            kind,
            offset,
            line,
            column,
            pointer,
        }))
    }

    /// What went wrong.
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, ErrorKind, Limits};
    /// let err = check(b"[[[]]]", Limits::new().max_depth(2)).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooDeep { limit: 2 });
    /// assert_eq!(err.kind().code(), "too_deep");
    /// ```
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
    /// 0-based byte offset of the byte where the problem was detected: for a duplicate name,
    /// its closing quote; for a crossed limit, the first byte past it; at end of input, the
    /// input length.
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, Limits};
    /// // The third `[` is the first byte past the depth limit.
    /// assert_eq!(check(b"[[[]]]", Limits::new().max_depth(2)).unwrap_err().offset(), 2);
    /// // At end of input: the input length.
    /// assert_eq!(check(b"[1,", Limits::new()).unwrap_err().offset(), 3);
    /// ```
    pub fn offset(&self) -> u64 {
        self.0.offset
    }
    /// 1-based line of [`offset`](Self::offset) (lines end at `\n`).
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, Limits};
    /// let err = check(b"{\n  \"a\": tru\n}", Limits::new()).unwrap_err();
    /// assert_eq!((err.line(), err.column()), (2, 11));
    /// ```
    pub fn line(&self) -> u64 {
        self.0.line
    }
    /// 1-based column of [`offset`](Self::offset), counted in bytes from the line start.
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, Limits};
    /// let err = check(b"[1,\n 2,]", Limits::new()).unwrap_err();
    /// assert_eq!((err.line(), err.column()), (2, 4));
    /// ```
    pub fn column(&self) -> u64 {
        self.0.column
    }
    /// JSON Pointer of the value or member concerned (`""` is the whole document).
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, Limits};
    /// let err = check(br#"{"items":[{"id":1},{"id":"x","id":2}]}"#, Limits::new()).unwrap_err();
    /// assert_eq!(err.pointer(), "/items/1/id");
    /// ```
    pub fn pointer(&self) -> &str {
        &self.0.pointer
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Error")
            .field("kind", &self.0.kind)
            .field("offset", &self.0.offset)
            .field("line", &self.0.line)
            .field("column", &self.0.column)
            .field("pointer", &self.0.pointer)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at byte {} (line {}, column {})",
            self.0.kind, self.0.offset, self.0.line, self.0.column
        )?;
        if !self.0.pointer.is_empty() {
            write!(f, " in {}", self.0.pointer)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_is_one_pointer_wide() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn display_names_position_and_pointer() {
        let e = Error::new(ErrorKind::TooDeep { limit: 2 }, 7, 1, 8, "/a/0".into());
        assert_eq!(
            e.to_string(),
            "nesting exceeds depth 2 at byte 7 (line 1, column 8) in /a/0"
        );
    }

    #[test]
    fn codes_are_distinct() {
        let kinds = [
            ErrorKind::TooLarge { limit: 0 },
            ErrorKind::TooDeep { limit: 0 },
            ErrorKind::NameTooLong { limit: 0 },
            ErrorKind::StringTooLong { limit: 0 },
            ErrorKind::NumberTooLong { limit: 0 },
            ErrorKind::TooManyMembers { limit: 0 },
            ErrorKind::TooManyItems { limit: 0 },
            ErrorKind::DuplicateName,
            ErrorKind::InvalidUtf8,
            ErrorKind::LoneSurrogate,
            ErrorKind::Noncharacter,
            ErrorKind::Syntax(Syntax::ExpectedValue),
            ErrorKind::Io(std::io::ErrorKind::Other),
            ErrorKind::BudgetExceeded { limit: 0 },
        ];
        let mut codes: Vec<_> = kinds.iter().map(ErrorKind::code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), kinds.len());
    }
}
