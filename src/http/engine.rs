//! The per-body engine of the HTTP layer: a scanner, and a validator when the check has a
//! schema, fed one frame at a time; and the typed refusal a body ends with.
//!
//! It owns no I/O and knows nothing of HTTP: [`super::body`] and [`super::layer`] move frames
//! into it. A refusal carries the error kind, offset, pointer and schema location, never the
//! body's text.

use std::fmt;

use crate::{Error, Flow, Ignore, Limits, Outcome, Rejection, Scanner, Schema, Validator};

/// What a body is checked against (in either direction).
///
/// # Example
/// ```
/// use jsongate::http::Check;
/// use jsongate::{Limits, Schema};
/// let strict = Check::Limits(Limits::new().max_bytes(1 << 16));
/// let typed = Check::Schema { schema: Schema::compile(br#"{"type":"array"}"#).unwrap(), limits: Limits::new() };
/// assert_eq!(strict.limits().get_max_bytes(), 1 << 16);
/// assert_eq!(typed.limits(), Limits::new());
/// ```
#[derive(Clone)]
pub enum Check {
    /// Strict JSON within the limits (duplicate names rejected), no schema.
    Limits(Limits),
    /// Strict JSON within the limits that satisfies the schema.
    Schema {
        /// The compiled schema (shared).
        schema: Schema,
        /// The scanner limits.
        limits: Limits,
    },
}

impl fmt::Debug for Check {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Check::Limits(l) => f.debug_tuple("Limits").field(l).finish(),
            Check::Schema { limits, .. } => f
                .debug_struct("Schema")
                .field("limits", limits)
                .finish_non_exhaustive(),
        }
    }
}

impl Check {
    /// The scanner limits of this check.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::Check;
    /// use jsongate::Limits;
    /// assert_eq!(Check::Limits(Limits::new().max_depth(8)).limits().get_max_depth(), 8);
    /// ```
    pub fn limits(&self) -> Limits {
        match self {
            Check::Limits(l) | Check::Schema { limits: l, .. } => *l,
        }
    }

    pub(crate) fn engine(&self) -> Engine {
        Engine {
            scanner: Scanner::new(self.limits()),
            validator: match self {
                Check::Limits(_) => None,
                Check::Schema { schema, .. } => Some(Validator::new(schema)),
            },
            refused: None,
        }
    }
}

/// Why a body was refused: what an operator needs, nothing of the body's text.
///
/// # Example
/// ```
/// use jsongate::http::Refusal;
/// let r = Refusal::of("content_type");
/// assert_eq!((r.kind.as_str(), r.offset, r.pointer.as_deref()), ("content_type", None, None));
/// assert_eq!(r.to_string(), "jsongate refused the body (content_type)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// The error kind (`too_large`, `duplicate_name`, `schema`, `content_type`, …).
    pub kind: String,
    /// Byte offset in the body where it was decided, when the body was read.
    pub offset: Option<u64>,
    /// JSON Pointer of the offending value, when known.
    pub pointer: Option<String>,
    /// The failing keyword (for `schema`).
    pub keyword: Option<String>,
    /// The failing keyword's location in the schema (for `schema`).
    pub schema_path: Option<String>,
}

impl Refusal {
    /// A refusal of `kind` with nothing else known.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::Refusal;
    /// assert_eq!(Refusal::of("too_large").kind, "too_large");
    /// ```
    pub fn of(kind: &str) -> Refusal {
        Refusal {
            kind: kind.to_owned(),
            offset: None,
            pointer: None,
            keyword: None,
            schema_path: None,
        }
    }

    pub(crate) fn at(mut self, offset: u64) -> Refusal {
        self.offset = Some(offset);
        self
    }

    pub(crate) fn from_error(e: &Error) -> Refusal {
        Refusal {
            kind: e.kind().code().to_owned(),
            offset: Some(e.offset()),
            pointer: Some(e.pointer().to_owned()),
            keyword: None,
            schema_path: None,
        }
    }

    pub(crate) fn from_rejection(r: &Rejection) -> Refusal {
        match r {
            Rejection::Error(e) => Refusal::from_error(e),
            Rejection::Violation(v) => Refusal {
                kind: "schema".to_owned(),
                offset: Some(v.offset()),
                pointer: Some(v.instance_pointer().to_owned()),
                keyword: Some(v.keyword().to_owned()),
                schema_path: Some(v.keyword_location().to_owned()),
            },
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "jsongate refused the body ({})", self.kind)?;
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Refusal {}

/// Engines of one check kept for reuse (a scanner and a validator allocate their buffers
/// once, then `reset` keeps them).
#[derive(Default)]
pub(crate) struct Pool(std::sync::Mutex<Vec<Engine>>);

/// Most engines a pool keeps.
const POOL_MAX: usize = 64;

impl Pool {
    pub(crate) fn take(&self, check: &Check) -> Engine {
        let e = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        e.unwrap_or_else(|| check.engine())
    }

    pub(crate) fn give(&self, mut e: Engine) {
        e.scanner.reset();
        if let Some(v) = &mut e.validator {
            v.reset();
        }
        e.refused = None;
        let mut p = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if p.len() < POOL_MAX {
            p.push(e);
        }
    }
}

/// One body's scanner and validator.
pub(crate) struct Engine {
    scanner: Scanner,
    validator: Option<Validator>,
    refused: Option<Refusal>,
}

impl Engine {
    /// Feeds one frame's bytes.
    pub(crate) fn feed(&mut self, chunk: &[u8]) -> Result<(), Refusal> {
        if let Some(r) = &self.refused {
            return Err(r.clone());
        }
        let r = match &mut self.validator {
            None => self.scanner.feed(chunk, &mut Ignore),
            Some(v) => self.scanner.feed(chunk, v),
        };
        match r {
            Ok(Flow::Continue) => Ok(()),
            // Only a validator stops the scan: it found a violation.
            Ok(Flow::Stop) => Err(self.refuse(Ok(Outcome::Stopped))),
            Err(e) => Err(self.refuse(Err(e))),
        }
    }

    /// The body ended: the document must be complete (and valid).
    pub(crate) fn finish(&mut self) -> Result<(), Refusal> {
        if let Some(r) = &self.refused {
            return Err(r.clone());
        }
        let out = match &mut self.validator {
            None => self.scanner.finish(&mut Ignore),
            Some(v) => self.scanner.finish(v),
        };
        match (&self.validator, out) {
            (None, Ok(_)) => Ok(()),
            (Some(v), out) => match v.verdict(&self.scanner, out) {
                Ok(()) => Ok(()),
                Err(r) => {
                    let r = Refusal::from_rejection(&r);
                    self.refused = Some(r.clone());
                    Err(r)
                }
            },
            (None, Err(e)) => Err(self.refuse(Err(e))),
        }
    }

    /// Bytes consumed so far.
    pub(crate) fn bytes_read(&self) -> u64 {
        self.scanner.bytes_read()
    }

    fn refuse(&mut self, out: Result<Outcome, Error>) -> Refusal {
        let r = match (&self.validator, out) {
            (Some(v), out) => match v.verdict(&self.scanner, out) {
                Err(r) => Refusal::from_rejection(&r),
                Ok(()) => Refusal::of("stopped"),
            },
            (None, Err(e)) => Refusal::from_error(&e),
            (None, Ok(_)) => Refusal::of("stopped"),
        };
        self.refused = Some(r.clone());
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_split_gives_the_same_refusal() {
        let schema =
            Schema::compile(br#"{"additionalProperties":false,"properties":{"a":{}}}"#).unwrap();
        let check = Check::Schema {
            schema,
            limits: Limits::new(),
        };
        let doc = br#"{"a":[1,2],"b":3}"#;
        let mut whole = check.engine();
        let want = whole.feed(doc).and_then(|()| whole.finish()).unwrap_err();
        assert_eq!(want.kind, "schema");
        assert_eq!(want.pointer.as_deref(), Some("/b"));
        for i in 0..=doc.len() {
            let mut e = check.engine();
            let got = e
                .feed(&doc[..i])
                .and_then(|()| e.feed(&doc[i..]))
                .and_then(|()| e.finish())
                .unwrap_err();
            assert_eq!(got, want, "split at {i}");
        }
    }

    #[test]
    fn a_pooled_engine_forgets_the_body_before() {
        let schema = Schema::compile(br#"{"type":"object","maxProperties":1}"#).unwrap();
        let check = Check::Schema {
            schema,
            limits: Limits::new().max_bytes(16),
        };
        let pool = Pool::default();
        let mut e = pool.take(&check);
        assert_eq!(e.feed(br#"{"a":1,"b":2}"#).unwrap_err().kind, "schema");
        pool.give(e);
        let mut e = pool.take(&check);
        // The same engine (the pool held one), reset: offsets, limits and verdict start over.
        e.feed(br#"{"a":1}"#).unwrap();
        e.finish().unwrap();
        assert_eq!(e.bytes_read(), 7);
        pool.give(e);
        let mut e = pool.take(&check);
        assert_eq!(e.feed(&[b' '; 17]).unwrap_err().kind, "too_large");
    }

    #[test]
    fn truncated_body_is_refused_at_the_end() {
        let mut e = Check::Limits(Limits::new()).engine();
        e.feed(br#"{"a":"#).unwrap();
        let r = e.finish().unwrap_err();
        assert_eq!(r.kind, "syntax");
        assert_eq!(e.bytes_read(), 5);
        // The refusal sticks.
        assert_eq!(e.feed(b"1}").unwrap_err(), r);
    }
}
