//! Streaming validation: a [`Validator`] is a [`Sink`] that evaluates a compiled
//! [`Schema`] on scanner events and stops the scan at the first event that decides the
//! document is invalid.
//!
//! The validator never builds a tree of the instance. Its state is owned by a reusable
//! runtime (`runtime.rs`): resetting it for the next document allocates nothing new.

mod explain;
mod meta;
mod output;
mod runtime;

pub use output::OutputFormat;

use std::fmt;

use crate::scan::{Event, Flow, Outcome, Position, Scanner, Sink};
use crate::schema::Schema;
use crate::{Error, ErrorKind, Limits};

/// A schema violation: the document is well-formed but does not satisfy the schema.
///
/// # Example
/// ```
/// use jsongate::{Limits, Rejection, Schema, Validator};
/// let schema = Schema::compile(br#"{"properties":{"tags":{"items":{"type":"string"}}}}"#)?;
/// let r = Validator::new(&schema).validate_slice(br#"{"tags":["a",7]}"#, Limits::new());
/// let Err(Rejection::Violation(v)) = r else { panic!("{r:?}") };
/// assert_eq!(v.keyword(), "type");
/// assert_eq!(v.instance_pointer(), "/tags/1");
/// assert_eq!(v.keyword_location(), "/properties/tags/items/type");
/// assert_eq!((v.offset(), v.line(), v.column()), (13, 1, 14));
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    keyword: &'static str,
    /// What the keyword expected, in schema terms (empty where the keyword says it all).
    detail: String,
    /// Whether the keyword is one of the failing subschema's own (not the keyword whose
    /// `false` subschema failed).
    own_keyword: bool,
    keyword_location: String,
    absolute_location: String,
    instance_pointer: String,
    offset: u64,
    line: u64,
    column: u64,
}

impl Violation {
    /// The keyword that failed (`"type"`, `"additionalProperties"`, `"false"` for a `false`
    /// schema, …).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"required":["id"]}"#)?;
    /// let Err(Rejection::Violation(v)) = Validator::new(&schema).validate_slice(b"{}", Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(v.keyword(), "required");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn keyword(&self) -> &str {
        self.keyword
    }
    /// The path through the schema, following `$ref`s (`/properties/a/$ref/type`).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br##"{"properties":{"n":{"$ref":"#/$defs/small"}},
    ///     "$defs":{"small":{"maximum":3}}}"##)?;
    /// let r = Validator::new(&schema).validate_slice(br#"{"n":9}"#, Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!(v.keyword_location(), "/properties/n/$ref/maximum");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn keyword_location(&self) -> &str {
        &self.keyword_location
    }
    /// The absolute location of the failing subschema (`base URI#pointer`).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"$id":"https://example.com/s.json","properties":{"n":{"maximum":3}}}"#)?;
    /// let r = Validator::new(&schema).validate_slice(br#"{"n":9}"#, Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!(v.absolute_location(), "https://example.com/s.json#/properties/n");
    /// assert_eq!(v.absolute_keyword_location(), "https://example.com/s.json#/properties/n/maximum");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn absolute_location(&self) -> &str {
        &self.absolute_location
    }
    /// The absolute location of the failing keyword (`base URI#pointer/keyword`), as the
    /// specification's output formats name it.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"$id":"https://example.com/s.json","type":"array"}"#)?;
    /// let Err(Rejection::Violation(v)) = Validator::new(&schema).validate_slice(b"{}", Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(v.absolute_keyword_location(), "https://example.com/s.json#/type");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn absolute_keyword_location(&self) -> String {
        let mut at = self.absolute_location.clone();
        if self.own_keyword && !at.is_empty() {
            if !at.contains('#') {
                at.push('#');
            }
            at.push('/');
            at.push_str(self.keyword);
        }
        at
    }
    /// JSON Pointer of the instance value that failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"additionalProperties":false}}"#)?;
    /// let r = Validator::new(&schema).validate_slice(br#"[{},{"a/b":1}]"#, Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!(v.instance_pointer(), "/1/a~1b");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn instance_pointer(&self) -> &str {
        &self.instance_pointer
    }
    /// Byte offset of the token at which the violation was decided.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"maxItems":2}"#)?;
    /// let r = Validator::new(&schema).validate_slice(b"[1, 2, 3, 4]", Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!(v.offset(), 7); // decided at the third item, before the rest is read
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }
    /// 1-based line of [`offset`](Self::offset).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
    /// let r = Validator::new(&schema).validate_slice(b"[\n  1,\n  \"x\"\n]", Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!((v.line(), v.column()), (3, 3));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn line(&self) -> u64 {
        self.line
    }
    /// 1-based column of [`offset`](Self::offset), in bytes.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
    /// let r = Validator::new(&schema).validate_slice(br#"[1, 2, true]"#, Limits::new());
    /// let Err(Rejection::Violation(v)) = r else { panic!() };
    /// assert_eq!((v.line(), v.column()), (1, 8));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn column(&self) -> u64 {
        self.column
    }
    /// What the failing keyword expected, in schema terms: `missing required property
    /// "name"`, `expected integer`, `expected at most 10 items`, `expected one of "a", "b"`;
    /// empty where the keyword says it all (`not`, `anyOf`, a `false` schema). Schema
    /// strings and constants are written as JSON and cut after 64 characters.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"type":"integer"}"#)?;
    /// let Err(Rejection::Violation(v)) = Validator::new(&schema).validate_slice(b"1.5", Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(v.detail(), "expected integer");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn detail(&self) -> &str {
        &self.detail
    }

    /// A message a person can act on: what is wrong, what the schema expected, the keyword
    /// and its location through the schema (`missing required property "id" (required at
    /// /required)`). It names schema keywords and values, and an unexpected property by the
    /// name its pointer carries; never an instance value.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"required":["id"],"properties":{"n":{"maximum":3}}}"#)?;
    /// let mut v = Validator::new(&schema);
    /// let Err(Rejection::Violation(x)) = v.validate_slice(br#"{"n":1}"#, Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(x.message(), r#"missing required property "id" (required at /required)"#);
    /// let Err(Rejection::Violation(x)) = v.validate_slice(br#"{"id":1,"n":4}"#, Limits::new()) else {
    ///     panic!()
    /// };
    /// assert_eq!(x.message(), "number is out of range: expected at most 3 (maximum at /properties/n/maximum)");
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn message(&self) -> String {
        let what = match self.keyword {
            "false" => "the schema allows no value here",
            "type" => "value has the wrong type",
            "const" => "value is not the required constant",
            "enum" => "value is not one of the allowed values",
            "required" => "a required property is missing",
            "additionalProperties" | "unevaluatedProperties" => {
                let name = unexpected_name(&self.instance_pointer);
                let how = if self.keyword == "additionalProperties" {
                    ""
                } else {
                    " (unevaluated)"
                };
                if !how.is_empty() && !self.detail.is_empty() {
                    // A member past the names kept, told by its place.
                    return format!(
                        "{} ({} at {})",
                        self.detail, self.keyword, self.keyword_location
                    );
                }
                return format!(
                    "property {name} is not allowed{how} ({} at {})",
                    self.keyword, self.keyword_location
                );
            }
            "unevaluatedItems" => "item is not allowed (unevaluated)",
            "anyOf" => "value matches none of the anyOf alternatives",
            "oneOf" => "value does not match exactly one oneOf alternative",
            "not" => "value matches a schema it must not match",
            "maxItems" | "minItems" => "array length is out of bounds",
            "maxProperties" | "minProperties" => "number of properties is out of bounds",
            "uniqueItems" => "array items are not unique",
            "contains" | "minContains" | "maxContains" => {
                "array does not contain the required items"
            }
            "dependentRequired" | "dependencies" => {
                "a property required by another property is missing"
            }
            "propertyNames" => "property name is not allowed",
            other => crate::schema::keywords::summary(other)
                .unwrap_or("value does not satisfy the schema"),
        };
        match self.keyword {
            // The detail says it all.
            "required" | "dependentRequired" | "dependencies" if !self.detail.is_empty() => {
                format!(
                    "{} ({} at {})",
                    self.detail, self.keyword, self.keyword_location
                )
            }
            _ if !self.detail.is_empty() => format!(
                "{what}: {} ({} at {})",
                self.detail, self.keyword, self.keyword_location
            ),
            _ => format!("{what} ({} at {})", self.keyword, self.keyword_location),
        }
    }
}

/// The last name of a pointer as a JSON string, cut after 64 characters (`/a/b~1c` →
/// `"b/c"`).
fn unexpected_name(pointer: &str) -> String {
    let last = pointer.rsplit('/').next().unwrap_or("");
    let name = last.replace("~1", "/").replace("~0", "~");
    let long = name.chars().count() > 64;
    let mut out = crate::json::quote(&name.chars().take(64).collect::<String>());
    if long {
        out.insert(out.len() - 1, '…');
    }
    out
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.message(), self.offset)?;
        if !self.instance_pointer.is_empty() {
            write!(f, " in {}", self.instance_pointer)?;
        }
        Ok(())
    }
}

impl std::error::Error for Violation {}

/// Why a document was not accepted.
///
/// # Example
/// ```
/// use jsongate::{ErrorKind, Limits, Rejection, Schema, Validator};
/// let schema = Schema::compile(br#"{"type":"object"}"#)?;
/// let mut v = Validator::new(&schema);
/// match v.validate_slice(br#"{"a":1,"#, Limits::new()) {
///     Err(Rejection::Error(e)) => assert_eq!(e.kind().code(), "syntax"),
///     other => panic!("{other:?}"),
/// }
/// match v.validate_slice(b"[]", Limits::new()) {
///     Err(Rejection::Violation(x)) => assert_eq!(x.keyword(), "type"),
///     other => panic!("{other:?}"),
/// }
/// let _ = ErrorKind::DuplicateName;
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejection {
    /// The stream was stopped: malformed JSON, a limit, a duplicate name, I/O, or the
    /// evaluation budget.
    Error(Error),
    /// The document is well-formed but violates the schema.
    Violation(Box<Violation>),
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rejection::Error(e) => e.fmt(f),
            Rejection::Violation(v) => v.fmt(f),
        }
    }
}

impl std::error::Error for Rejection {}

/// Which evaluator a [`Validator`] runs (see [`Validator::tier`]).
///
/// # Example
/// ```
/// use jsongate::{Limits, Schema, Tier, Validator};
/// let schema = Schema::compile(br#"{"type":"object","properties":{"n":{"type":"integer"}}}"#)?;
/// let doc = br#"{"n":"x"}"#;
/// let auto = Validator::new(&schema).validate_slice(doc, Limits::new());
/// let general = Validator::new(&schema).tier(Tier::General).validate_slice(doc, Limits::new());
/// assert_eq!(auto, general); // the same verdict, location and offset
/// assert!(auto.is_err());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tier {
    /// The specialised tier where the schema allows it, the general one otherwise.
    #[default]
    Auto,
    /// Always the general tier.
    General,
}

/// Validates one document at a time against a [`Schema`], as a [`Sink`] of scanner events.
///
/// # Example
/// ```
/// use jsongate::{Limits, Rejection, Schema, Validator};
/// let schema = Schema::compile(br#"{"type":"object","additionalProperties":false,
///     "properties":{"approved":{"type":"boolean"}}}"#).unwrap();
/// let mut v = Validator::new(&schema);
/// assert!(v.validate_slice(br#"{"approved":true}"#, Limits::new()).is_ok());
/// match v.validate_slice(br#"{"admin_override":true}"#, Limits::new()) {
///     Err(Rejection::Violation(x)) => {
///         assert_eq!(x.keyword(), "additionalProperties");
///         assert_eq!(x.instance_pointer(), "/admin_override");
///         assert_eq!(x.offset(), 1); // decided at the name, before its value
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
pub struct Validator {
    schema: Schema,
    rt: runtime::Runtime,
    /// Scanner kept for [`validate_slice`](Self::validate_slice), reused while the limits
    /// stay the same.
    scanner: Option<Box<Scanner>>,
}

impl Validator {
    /// A validator for `schema` (cheap: the program is shared).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"type":"string"}"#)?;
    /// // One compiled schema, one validator per thread or task.
    /// let handles: Vec<_> = (0..2)
    ///     .map(|_| {
    ///         let schema = schema.clone();
    ///         std::thread::spawn(move || Validator::new(&schema).validate_slice(br#""x""#, Limits::new()).is_ok())
    ///     })
    ///     .collect();
    /// assert!(handles.into_iter().all(|h| h.join().unwrap()));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn new(schema: &Schema) -> Self {
        let mut rt = runtime::Runtime::new();
        (rt.budget, rt.budget_per_byte) = schema.eval_budget();
        rt.reset(schema.program());
        Validator {
            schema: schema.clone(),
            rt,
            scanner: None,
        }
    }

    /// This validator with a fixed evaluation budget of `units` (no per-byte allowance).
    pub(crate) fn with_budget(mut self, units: u64) -> Self {
        self.rt.budget = units;
        self.rt.budget_per_byte = 0;
        self.rt.reset(self.schema.program());
        self
    }

    /// Prepares for the next document, keeping the buffers.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Scanner, Schema, Validator};
    /// let schema = Schema::compile(br#"{"maxItems":1}"#)?;
    /// let mut v = Validator::new(&schema);
    /// let mut scanner = Scanner::new(Limits::new());
    /// for (doc, ok) in [(&b"[1]"[..], true), (b"[1,2]", false), (b"[]", true)] {
    ///     v.reset();
    ///     scanner.reset();
    ///     let out = scanner.scan_slice(doc, &mut v);
    ///     assert_eq!(v.verdict(&scanner, out).is_ok(), ok);
    /// }
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn reset(&mut self) {
        self.rt.reset(self.schema.program());
    }

    /// The first violation found so far, if any.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"minLength":2}"#)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(br#""a""#, Limits::new()).is_err());
    /// assert_eq!(v.violation().map(|x| x.keyword()), Some("minLength"));
    /// assert!(v.validate_slice(br#""ab""#, Limits::new()).is_ok());
    /// assert!(v.violation().is_none());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn violation(&self) -> Option<&Violation> {
        self.rt.violations.first()
    }

    /// How many violations this validator collects ([`max_errors`](Self::max_errors)).
    pub(crate) fn error_limit(&self) -> usize {
        self.rt.max_errors
    }

    /// Every violation found so far (at most [`max_errors`](Self::max_errors)).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
    /// let mut v = Validator::new(&schema).max_errors(10);
    /// assert!(v.validate_slice(br#"[1,"a",2,"b"]"#, Limits::new()).is_err());
    /// let at: Vec<&str> = v.violations().iter().map(|x| x.instance_pointer()).collect();
    /// assert_eq!(at, ["/1", "/3"]);
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn violations(&self) -> &[Violation] {
        &self.rt.violations
    }

    /// How many violations to collect before stopping the scan: 1 (the default) stops at
    /// the first; more gives the spec's "basic" output, a flat list of failing keywords.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"required":["a","b"],"properties":{"n":{"type":"integer"}}}"#)?;
    /// let doc = br#"{"n":"x"}"#;
    /// let mut first = Validator::new(&schema);
    /// assert!(first.validate_slice(doc, Limits::new()).is_err());
    /// assert_eq!(first.violations().len(), 1);
    /// let mut all = Validator::new(&schema).max_errors(10);
    /// assert!(all.validate_slice(doc, Limits::new()).is_err());
    /// assert!(all.violations().len() >= 2);
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn max_errors(mut self, n: usize) -> Self {
        self.rt.max_errors = n.max(1);
        self.rt.reset(self.schema.program());
        self
    }

    /// Chooses the evaluator. [`Tier::Auto`] (the default) runs the specialised tier where
    /// the schema allows it and one violation is wanted, the general tier otherwise;
    /// [`Tier::General`] always runs the general one. Both give the same verdicts,
    /// locations and offsets: the general tier is the oracle the specialised one is tested
    /// against, and this switch is how.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Tier, Validator};
    /// let schema = Schema::compile(br#"{"properties":{"n":{"maximum":3}}}"#)?;
    /// let mut v = Validator::new(&schema).tier(Tier::General);
    /// assert!(v.validate_slice(br#"{"n":4}"#, Limits::new()).is_err());
    /// assert!(!v.specialised());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn tier(mut self, tier: Tier) -> Self {
        self.rt.force_general = tier == Tier::General;
        self.rt.reset(self.schema.program());
        self
    }

    /// Whether the current (or last) document runs in the specialised tier.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Tier, Validator};
    /// let schema = Schema::compile(br#"{"type":"object","properties":{"n":{"type":"integer"}}}"#)?;
    /// let mut general = Validator::new(&schema).tier(Tier::General);
    /// general.validate_slice(br#"{"n":1}"#, Limits::new()).unwrap();
    /// assert!(!general.specialised());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn specialised(&self) -> bool {
        self.rt.fast_mode()
    }

    /// Whether the evaluation budget ran out (the document is then rejected).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::options().eval_budget(50).compile(br#"{"items":{"minimum":0}}"#)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(b"[1,2]", Limits::new()).is_ok());
    /// assert!(!v.budget_exceeded());
    /// let many = format!("[{}0]", "0,".repeat(100));
    /// assert!(v.validate_slice(many.as_bytes(), Limits::new()).is_err());
    /// assert!(v.budget_exceeded());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn budget_exceeded(&self) -> bool {
        self.rt.budget_exceeded && self.rt.schema_cycle.is_none()
    }

    /// Where the document reached an in-place reference cycle of the schema (its keyword
    /// location), if it did: the document is then rejected with
    /// [`ErrorKind::SchemaCycle`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{ErrorKind, Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br##"{"$defs":{"a":{"$ref":"#/$defs/a"}},"properties":{"x":{"$ref":"#/$defs/a"}}}"##)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(br#"{"y":1}"#, Limits::new()).is_ok());
    /// let r = v.validate_slice(br#"{"x":1}"#, Limits::new());
    /// assert!(matches!(r, Err(Rejection::Error(e)) if matches!(e.kind(), ErrorKind::SchemaCycle { .. })));
    /// assert!(v.schema_cycle().is_some());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn schema_cycle(&self) -> Option<&str> {
        self.rt.schema_cycle.as_ref().map(|c| &*c.keyword_location)
    }

    /// After the scanner finished the document: whether it satisfied the schema.
    ///
    /// # Example
    /// ```
    /// use jsongate::{scan, Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"type":"array","minItems":1}"#)?;
    /// let mut v = Validator::new(&schema);
    /// scan(b"[]", Limits::new(), &mut v).unwrap();
    /// assert!(!v.is_valid()); // well-formed, but too short
    /// v.reset();
    /// scan(b"[0]", Limits::new(), &mut v).unwrap();
    /// assert!(v.is_valid());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn is_valid(&self) -> bool {
        self.rt.violations.is_empty() && !self.rt.budget_exceeded && self.rt.passed()
    }

    /// Scans and validates one complete document.
    ///
    /// # Errors
    /// [`Rejection::Error`] for a malformed document, a crossed limit or an exhausted
    /// evaluation budget; [`Rejection::Violation`] when the schema is not satisfied.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = Schema::compile(br#"{"type":"object","required":["id"]}"#)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(br#"{"id":1}"#, Limits::new()).is_ok());
    /// assert!(matches!(v.validate_slice(b"{}", Limits::new()), Err(Rejection::Violation(_))));
    /// let deep = br#"{"a":{"b":{}}}"#;
    /// assert!(matches!(v.validate_slice(deep, Limits::new().max_depth(2)), Err(Rejection::Error(_))));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn validate_slice(&mut self, input: &[u8], limits: Limits) -> Result<(), Rejection> {
        // Boxed, so that taking it out of `self` (which is the sink) moves a pointer.
        let mut scanner = match self.scanner.take() {
            Some(s) if *s.limits() == limits => s,
            _ => Box::new(Scanner::new(limits)),
        };
        self.reset();
        let out = scanner.scan_slice(input, self);
        let verdict = self.verdict(&scanner, out);
        self.scanner = Some(scanner);
        verdict
    }

    /// Scans and validates one document from a reader, stopping at the verdict.
    ///
    /// # Errors
    /// As [`validate_slice`](Self::validate_slice), plus I/O errors.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Scanner, Schema, Validator};
    /// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
    /// let mut v = Validator::new(&schema);
    /// let mut scanner = Scanner::new(Limits::new());
    /// assert!(v.validate_read(&mut scanner, &b"[1, 2, 3]"[..]).is_ok());
    /// scanner.reset();
    /// let r = v.validate_read(&mut scanner, &br#"[1, "two", 3]"#[..]);
    /// assert!(matches!(r, Err(Rejection::Violation(x)) if x.instance_pointer() == "/1"));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn validate_read<R: std::io::Read>(
        &mut self,
        scanner: &mut Scanner,
        reader: R,
    ) -> Result<(), Rejection> {
        self.reset();
        let out = scanner.scan_read(reader, self);
        self.verdict(scanner, out)
    }

    /// Turns the scanner's outcome into the verdict.
    ///
    /// # Errors
    /// As [`validate_slice`](Self::validate_slice).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Scanner, Schema, Validator};
    /// let schema = Schema::compile(br#"{"properties":{"ok":{"const":true}}}"#)?;
    /// let mut v = Validator::new(&schema);
    /// let mut scanner = Scanner::new(Limits::new());
    /// // Chunks as they arrive from a socket; a stop ends the feeding early.
    /// let mut fed = Ok(jsongate::Flow::Continue);
    /// for chunk in [&br#"{"o"#[..], br#"k":tr"#, b"ue}"] {
    ///     fed = scanner.feed(chunk, &mut v);
    ///     if !matches!(fed, Ok(jsongate::Flow::Continue)) {
    ///         break;
    ///     }
    /// }
    /// let out = fed.and_then(|_| scanner.finish(&mut v));
    /// assert!(v.verdict(&scanner, out).is_ok());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn verdict(&self, scanner: &Scanner, out: Result<Outcome, Error>) -> Result<(), Rejection> {
        match out {
            Err(e) => Err(Rejection::Error(e)),
            Ok(_) if self.rt.schema_cycle.is_some() => {
                let c = self.rt.schema_cycle.as_deref();
                let kind = ErrorKind::SchemaCycle {
                    keyword_location: c.map(|c| c.keyword_location.clone()).unwrap_or_default(),
                };
                let (offset, line, column) = c.map_or((0, 1, 1), |c| (c.offset, c.line, c.column));
                let pointer = c.map(|c| c.pointer.to_string()).unwrap_or_default();
                Err(Rejection::Error(Error::new(
                    kind, offset, line, column, pointer,
                )))
            }
            Ok(_) if self.rt.budget_exceeded => {
                let limit = self.rt.allowance();
                let at = scanner.bytes_read();
                Err(Rejection::Error(
                    scanner.error_at(ErrorKind::BudgetExceeded { limit }, at),
                ))
            }
            Ok(_) => match self.rt.violations.first() {
                Some(v) => Err(Rejection::Violation(Box::new(v.clone()))),
                None if self.rt.passed() => Ok(()),
                // A stop without a verdict cannot happen; treat it as a rejection of the root.
                None => Err(Rejection::Violation(Box::new(Violation {
                    keyword: "false",
                    detail: String::new(),
                    own_keyword: false,
                    keyword_location: String::new(),
                    absolute_location: String::new(),
                    instance_pointer: String::new(),
                    offset: scanner.bytes_read(),
                    line: 1,
                    column: 1,
                }))),
            },
        }
    }
}

impl Sink for Validator {
    #[inline]
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        self.event_at(event, Position::on_one_line(offset))
    }

    /// The text of a string value is read only where a subschema constrains the value:
    /// inside a value none constrains (an `additionalProperties: true` member, an item of an
    /// array without `items`), escaped strings are checked but not decoded.
    #[inline]
    fn wants_text(&self) -> bool {
        self.rt.wants_text()
    }

    #[inline(always)]
    fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        self.rt.line = at.line;
        self.rt.column = at.column;
        if self.rt.event(self.schema.program(), &event, at.offset) {
            Flow::Continue
        } else {
            Flow::Stop
        }
    }
}

/// Hands a scan's events to a [`Validator`] beside another sink that builds something from
/// the same events (typed values, Python objects): the one rule for doing both in one pass.
///
/// While the verdict is open every event goes to the validator. Once it has found a
/// violation (or run out of budget), [`event_at`](Self::event_at) says [`Flow::Stop`]: the
/// scan should end at that byte. A validator that stops because it has already passed the
/// document sees no further events, and the scan goes on for the other sink. Afterwards,
/// [`Validator::verdict`] gives the verdict as usual.
///
/// # Example
/// ```
/// use jsongate::{Event, Flow, Limits, Position, Scanner, Schema, Sink, Validator, Watcher};
/// // Counts the values of a document while validating it.
/// struct Count<'v> { watch: Watcher<'v>, values: usize }
/// impl Sink for Count<'_> {
///     fn event(&mut self, ev: Event<'_>, offset: u64) -> Flow {
///         self.event_at(ev, Position::on_one_line(offset))
///     }
///     fn event_at(&mut self, ev: Event<'_>, at: Position) -> Flow {
///         if self.watch.event_at(ev, at) == Flow::Stop {
///             return Flow::Stop;
///         }
///         self.values += usize::from(!matches!(ev, Event::Name(_) | Event::EndArray | Event::EndObject));
///         Flow::Continue
///     }
/// }
/// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
/// let mut v = Validator::new(&schema);
/// let mut scanner = Scanner::new(Limits::new());
/// let mut count = Count { watch: Watcher::new(&mut v), values: 0 };
/// let out = scanner.scan_slice(b"[1, 2, 3]", &mut count);
/// assert_eq!(count.values, 4);
/// assert!(v.verdict(&scanner, out).is_ok());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
pub struct Watcher<'v> {
    /// The validator, while its verdict is open.
    validator: Option<&'v mut Validator>,
}

impl<'v> Watcher<'v> {
    /// Watches the events of one document with `validator` (which is reset first).
    pub fn new(validator: &'v mut Validator) -> Self {
        validator.reset();
        Watcher {
            validator: Some(validator),
        }
    }

    /// Hands one event to the validator while its verdict is open; [`Flow::Stop`] once it has
    /// rejected the document.
    pub fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        let Some(v) = self.validator.as_deref_mut() else {
            return Flow::Continue;
        };
        if v.event_at(event, at) == Flow::Continue {
            return Flow::Continue;
        }
        if !v.is_valid() {
            return Flow::Stop;
        }
        // Decided early, and accepted: the rest is the other sink's alone.
        self.validator = None;
        Flow::Continue
    }
}

/// Feeds a materialised value to a sink as events (for validating schemas themselves).
pub(crate) fn value_events(v: &crate::json::Value, sink: &mut dyn Sink) -> bool {
    use crate::json::Value;
    enum Step<'a> {
        Value(&'a Value),
        Name(&'a str),
        EndObject,
        EndArray,
    }
    let mut stack = vec![Step::Value(v)];
    while let Some(s) = stack.pop() {
        let (ev, kids): (Event<'_>, Option<&Value>) = match s {
            Step::Name(n) => (Event::Name(n), None),
            Step::EndObject => (Event::EndObject, None),
            Step::EndArray => (Event::EndArray, None),
            Step::Value(v) => match v {
                Value::Null => (Event::Null, None),
                Value::Bool(b) => (Event::Bool(*b), None),
                Value::String(s) => (Event::String(s), None),
                Value::Number(t) => match crate::scan::Number::parse(t) {
                    Some(n) => (Event::Number(n), None),
                    None => return false,
                },
                Value::Array(_) => (Event::BeginArray, Some(v)),
                Value::Object(_) => (Event::BeginObject, Some(v)),
            },
        };
        if sink.event(ev, 0) == Flow::Stop {
            return false;
        }
        match kids {
            Some(Value::Array(a)) => {
                stack.push(Step::EndArray);
                stack.extend(a.iter().rev().map(Step::Value));
            }
            Some(Value::Object(m)) => {
                stack.push(Step::EndObject);
                for (k, x) in m.iter().rev() {
                    stack.push(Step::Value(x));
                    stack.push(Step::Name(k));
                }
            }
            _ => {}
        }
    }
    true
}
