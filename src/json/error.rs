//! [`ConfigError`]: why a configuration document (a contract, a policy, a plan, an alert
//! file, a screening contract, a lockfile, the serve configuration) could not be used.
//!
//! One structured type for every loader: a [`ConfigErrorKind`], the JSON Pointer of the value
//! at fault (`""` for the whole document), the byte offset where the scanner or the validator
//! knows it, and the message the loaders have always shown (its `Display`).

use std::fmt;

use crate::Error;

/// What kind of problem a [`ConfigError`] is.
///
/// # Example
/// ```
/// use jsongate::json::{ConfigError, ConfigErrorKind};
/// use jsongate::{check, Limits};
/// let e = ConfigError::syntax("policy", &check(b"{", Limits::new()).unwrap_err());
/// assert_eq!(e.kind(), ConfigErrorKind::Syntax);
/// assert_eq!(e.kind().name(), "syntax");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigErrorKind {
    /// The file could not be read.
    Read,
    /// Not one JSON document within the loader's limits: a syntax error, a duplicate member
    /// name, a limit crossed.
    Syntax,
    /// Well-formed JSON that does not satisfy the schema the crate ships for it.
    Schema,
    /// Satisfies the schema but cannot be used: a check naming an unknown field, a pattern
    /// that does not compile, a number out of range, a file it names that cannot be opened.
    Invalid,
}

impl ConfigErrorKind {
    /// The kind's name in `snake_case` (`"read"`, `"syntax"`, `"schema"`, `"invalid"`).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigErrorKind;
    /// assert_eq!(ConfigErrorKind::Schema.name(), "schema");
    /// assert_eq!(ConfigErrorKind::Read.name(), "read");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ConfigErrorKind::Read => "read",
            ConfigErrorKind::Syntax => "syntax",
            ConfigErrorKind::Schema => "schema",
            ConfigErrorKind::Invalid => "invalid",
        }
    }
}

/// Why a configuration document could not be loaded. Always a configuration error (CLI
/// exit 2).
///
/// # Example
/// ```
/// use jsongate::json::{ConfigError, ConfigErrorKind};
/// let e = ConfigError::invalid("limits.max_depth: too large").at("/limits/max_depth");
/// assert_eq!(e.kind(), ConfigErrorKind::Invalid);
/// assert_eq!(e.pointer(), "/limits/max_depth");
/// assert_eq!(e.offset(), None);
/// assert_eq!(e.to_string(), "limits.max_depth: too large");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigError(Box<Inner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    kind: ConfigErrorKind,
    pointer: String,
    offset: Option<u64>,
    message: String,
}

impl ConfigError {
    /// An error of `kind` about the whole document (pointer `""`, no offset).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{ConfigError, ConfigErrorKind};
    /// let e = ConfigError::new(ConfigErrorKind::Schema, "routes: expected an array");
    /// assert_eq!((e.kind(), e.pointer(), e.offset()), (ConfigErrorKind::Schema, "", None));
    /// ```
    pub fn new(kind: ConfigErrorKind, message: impl Into<String>) -> ConfigError {
        ConfigError(Box::new(Inner {
            kind,
            pointer: String::new(),
            offset: None,
            message: message.into(),
        }))
    }

    /// A [`ConfigErrorKind::Invalid`] error about the whole document.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{ConfigError, ConfigErrorKind};
    /// let e = ConfigError::invalid("pattern does not compile");
    /// assert_eq!(e.kind(), ConfigErrorKind::Invalid);
    /// assert_eq!(e.message(), "pattern does not compile");
    /// ```
    pub fn invalid(message: impl Into<String>) -> ConfigError {
        ConfigError::new(ConfigErrorKind::Invalid, message)
    }

    /// A [`ConfigErrorKind::Read`] error: `what` (`"contract '…'"`) could not be read.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{ConfigError, ConfigErrorKind};
    /// let io = std::fs::read("no/such/policy.json").unwrap_err();
    /// let e = ConfigError::read("policy 'no/such/policy.json'", &io);
    /// assert_eq!(e.kind(), ConfigErrorKind::Read);
    /// assert!(e.message().starts_with("cannot read policy 'no/such/policy.json': "));
    /// ```
    pub fn read(what: impl fmt::Display, e: &std::io::Error) -> ConfigError {
        ConfigError::new(ConfigErrorKind::Read, format!("cannot read {what}: {e}"))
    }

    /// A [`ConfigErrorKind::Syntax`] error from the scanner's `e`, with its pointer and
    /// offset; the message is `"{subject} is not valid JSON: {e}"`.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// use jsongate::{check, Limits};
    /// let scan = check(br#"{"tools":{"a":1,"a":2}}"#, Limits::new()).unwrap_err();
    /// let e = ConfigError::syntax("policy", &scan);
    /// assert_eq!((e.pointer(), e.offset()), ("/tools/a", Some(18))); // the second name's closing quote
    /// assert!(e.message().starts_with("policy is not valid JSON: "));
    /// ```
    pub fn syntax(subject: &str, e: &Error) -> ConfigError {
        ConfigError::new(
            ConfigErrorKind::Syntax,
            format!("{subject} is not valid JSON: {e}"),
        )
        .at(e.pointer())
        .at_offset(e.offset())
    }

    /// The same error about the value at `pointer`.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// assert_eq!(ConfigError::invalid("bad").at("/routes/0").pointer(), "/routes/0");
    /// ```
    #[must_use]
    pub fn at(mut self, pointer: impl Into<String>) -> ConfigError {
        self.0.pointer = pointer.into();
        self
    }

    /// The same error at byte `offset` of the document.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// assert_eq!(ConfigError::invalid("bad").at_offset(17).offset(), Some(17));
    /// ```
    #[must_use]
    pub fn at_offset(mut self, offset: u64) -> ConfigError {
        self.0.offset = Some(offset);
        self
    }

    /// The same error reported by the document that names the one it is about (a route's
    /// contract file inside the serve configuration): `prefix` goes before the message, and
    /// the pointer becomes `pointer`, the member of the outer document that names the inner
    /// one. The inner pointer and offset, which are in the other file, stay in the message
    /// only.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// let inner = ConfigError::invalid("unknown field 'x'").at("/checks/0").at_offset(40);
    /// let e = inner.within("contract 'a.json': ", "/routes/2/contract");
    /// assert_eq!(e.message(), "contract 'a.json': unknown field 'x'");
    /// assert_eq!((e.pointer(), e.offset()), ("/routes/2/contract", None));
    /// ```
    #[must_use]
    pub fn within(mut self, prefix: &str, pointer: &str) -> ConfigError {
        self.0.message = format!("{prefix}{}", self.0.message);
        pointer.clone_into(&mut self.0.pointer);
        self.0.offset = None;
        self
    }

    /// What kind of problem this is.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{ConfigError, ConfigErrorKind};
    /// assert_eq!(ConfigError::invalid("x").kind(), ConfigErrorKind::Invalid);
    /// ```
    pub fn kind(&self) -> ConfigErrorKind {
        self.0.kind
    }

    /// The JSON Pointer of the value at fault (`""`: the whole document, or unknown).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// assert_eq!(ConfigError::invalid("x").pointer(), "");
    /// assert_eq!(ConfigError::invalid("x").at("/limits").pointer(), "/limits");
    /// ```
    pub fn pointer(&self) -> &str {
        &self.0.pointer
    }

    /// The byte offset in the document, where the scanner or validator gave one.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// use jsongate::{check, Limits};
    /// let e = ConfigError::syntax("plan", &check(b"[1,]", Limits::new()).unwrap_err());
    /// assert_eq!(e.offset(), Some(3));
    /// ```
    pub fn offset(&self) -> Option<u64> {
        self.0.offset
    }

    /// The message (also the `Display` text).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ConfigError;
    /// let e = ConfigError::invalid("window must be positive");
    /// assert_eq!(e.message(), e.to_string());
    /// ```
    pub fn message(&self) -> &str {
        &self.0.message
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for ConfigError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, Scanner};

    #[test]
    fn syntax_errors_carry_the_scanners_pointer_and_offset() {
        let e = Scanner::new(Limits::new())
            .scan_slice(br#"{"a":{"b":tru}}"#, &mut crate::Ignore)
            .unwrap_err();
        let c = ConfigError::syntax("policy", &e);
        assert_eq!(c.kind(), ConfigErrorKind::Syntax);
        assert_eq!(c.pointer(), "/a/b");
        assert_eq!(c.offset(), Some(e.offset()));
        assert_eq!(c.message(), format!("policy is not valid JSON: {e}"));
    }

    #[test]
    fn within_prefixes_message_and_pointer() {
        let e = ConfigError::invalid("x").at("/fields/0").at_offset(9);
        let w = e.within("routes[1]: ", "/routes/1/contract");
        assert_eq!(w.to_string(), "routes[1]: x");
        assert_eq!(w.pointer(), "/routes/1/contract");
        assert_eq!(w.offset(), None);
        assert_eq!(w.kind(), ConfigErrorKind::Invalid);
        let r = ConfigError::read("policy 'p'", &std::io::Error::other("gone"));
        assert_eq!(
            (r.kind().name(), r.to_string().as_str()),
            ("read", "cannot read policy 'p': gone")
        );
    }
}
