//! JSON Schema: documents, compilation into an immutable program, and the building blocks the
//! streaming validator uses (exact decimals, ECMA-262 regexes, format checks).
//!
//! Nothing here reads instance documents; the runtime in `crate::validate` does, from scanner
//! events. Nothing here uses the runtime either: checking a schema against its meta-schema
//! needs a validator, so the checked entry points (`Schema::compile`, `SchemaOptions::compile`)
//! live in `crate::validate::meta`, on top of [`SchemaOptions::build`] here.

pub(crate) mod decimal;
pub(crate) mod format;
pub(crate) mod regex;

mod bounds;
pub(crate) mod compare;
mod compile;
pub(crate) mod fast;
pub(crate) mod keywords;
pub(crate) mod program;
mod registry;
pub(crate) mod uri;

/// What the suite-driven unit tests of this layer share: where the official JSON Schema Test
/// Suite is, reading one of its files (a missing suite fails the test, naming where it
/// belongs), and the verdict over the cases run.
#[cfg(test)]
pub(crate) mod suite {
    /// The draft 2020-12 tests of the official suite, vendored in the repository.
    pub(crate) const DRAFT2020: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/suites/json-schema-test-suite/tests/draft2020-12/"
    );

    /// The bytes of `file` under [`DRAFT2020`]; panics when it cannot be read.
    pub(crate) fn read(file: &str) -> Vec<u8> {
        let path = format!("{DRAFT2020}{file}");
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!("{path}: {e} (the suite is vendored under tests/data/suites in the repository)")
        })
    }

    /// Fails unless some cases ran and none failed.
    pub(crate) fn finish(name: &str, ran: usize, failures: &[String]) {
        eprintln!("{name} suite: {ran} tests run");
        assert!(ran > 0, "{name} suite: no test ran");
        assert!(
            failures.is_empty(),
            "{} failures:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

use std::sync::Arc;

pub use bounds::{
    CompileBudget, DEFAULT_MAX_ANCHORS, DEFAULT_MAX_COMPILE_STEPS, DEFAULT_MAX_REF_DEPTH,
    DEFAULT_MAX_SCHEMA_BYTES, DEFAULT_MAX_SCHEMA_NODES,
};
pub(crate) use compile::INTERNAL_BASE;
pub use compile::{CompileError, CompileErrorKind};
pub use registry::Draft;

use crate::json::Value;
use crate::Limits;
use bounds::Bounds;
use program::Program;
use registry::Registry;

/// Default fixed part of the per-document evaluation budget, in work units (see
/// [`SchemaOptions::eval_budget`]).
///
/// # Example
/// ```
/// use jsongate::{Limits, Schema, Validator, DEFAULT_EVAL_BUDGET};
/// // A tiny document never gets past the fixed part of the budget.
/// let schema = Schema::compile(br#"{"items":{"type":"integer"}}"#)?;
/// assert!(Validator::new(&schema).validate_slice(b"[1,2,3]", Limits::new()).is_ok());
/// assert!(DEFAULT_EVAL_BUDGET >= 1_000);
/// # Ok::<(), jsongate::CompileError>(())
/// ```
pub const DEFAULT_EVAL_BUDGET: u64 = 1_000_000;
/// Default further evaluation budget per input byte read, in work units.
///
/// # Example
/// ```
/// use jsongate::{ErrorKind, Limits, Rejection, Schema, Validator};
/// // With the per-byte allowance (the default), a larger document may do more work.
/// let schema = br#"{"items":{"allOf":[{"type":"integer"},{"minimum":0}]}}"#;
/// let doc = format!("[{}0]", "0,".repeat(2_000));
/// let fixed = Schema::options().eval_budget(1_000).compile(schema)?;
/// let err = Validator::new(&fixed).validate_slice(doc.as_bytes(), Limits::new());
/// assert!(matches!(err, Err(Rejection::Error(e)) if matches!(e.kind(), ErrorKind::BudgetExceeded { .. })));
/// let per_byte = Schema::options()
///     .eval_budget(1_000)
///     .eval_budget_per_byte(jsongate::DEFAULT_EVAL_BUDGET_PER_BYTE)
///     .compile(schema)?;
/// assert!(Validator::new(&per_byte).validate_slice(doc.as_bytes(), Limits::new()).is_ok());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
pub const DEFAULT_EVAL_BUDGET_PER_BYTE: u64 = 16;

/// A compiled JSON Schema: immutable, `Send + Sync`, cheap to clone (shared program).
///
/// # Example
/// ```
/// use jsongate::{Limits, Schema, Validator};
/// let schema = Schema::compile(br#"{"type":"array","items":{"type":"integer"},"maxItems":3}"#)?;
/// let mut v = Validator::new(&schema);
/// assert!(v.validate_slice(b"[1,2,3]", Limits::new()).is_ok());
/// assert!(v.validate_slice(b"[1,2,3,4]", Limits::new()).is_err());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone)]
pub struct Schema {
    program: Arc<Program>,
    budget: u64,
    budget_per_byte: u64,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema")
            .field("nodes", &self.program.nodes.len())
            .finish_non_exhaustive()
    }
}

impl Schema {
    /// Options for compiling.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Draft, Limits, Schema, Validator};
    /// let schema = Schema::options()
    ///     .draft(Draft::Draft7)
    ///     .format_assertion(true)
    ///     .compile(br#"{"format":"email"}"#)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(br#""a@example.com""#, Limits::new()).is_ok());
    /// assert!(v.validate_slice(br#""not an address""#, Limits::new()).is_err());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn options() -> SchemaOptions {
        SchemaOptions::new()
    }

    pub(crate) fn program(&self) -> &Program {
        &self.program
    }

    /// The evaluation budget: fixed units, units per input byte.
    pub(crate) fn eval_budget(&self) -> (u64, u64) {
        (self.budget, self.budget_per_byte)
    }
}

/// How to compile a [`Schema`]. Consuming setters, documented defaults.
///
/// # Example
/// ```
/// use jsongate::{Limits, Schema, SchemaOptions, Validator};
/// let options = SchemaOptions::new().format_assertion(true).max_nodes(1_000);
/// let a = options.compile(br#"{"format":"ipv4"}"#)?;
/// let b = options.compile(br#"{"format":"date"}"#)?; // one set of options, many schemas
/// assert!(Validator::new(&a).validate_slice(br#""10.0.0.1""#, Limits::new()).is_ok());
/// assert!(Validator::new(&b).validate_slice(br#""10.0.0.1""#, Limits::new()).is_err());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone)]
pub struct SchemaOptions {
    pub(crate) draft: Draft,
    /// Whether [`draft`](Self::draft) was called: the named draft then also applies to
    /// every registered resource without `$schema`.
    draft_named: bool,
    format_assertion: bool,
    pub(crate) validate_schema: bool,
    pub(crate) bounds: Bounds,
    budget: u64,
    budget_per_byte: u64,
    limits: Limits,
    registry: Registry,
    pub(crate) error: Option<CompileError>,
}

impl Default for SchemaOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl SchemaOptions {
    /// Defaults: draft 2020-12, format annotation only, meta-schema check on, the compile
    /// budgets [`DEFAULT_MAX_SCHEMA_NODES`], [`DEFAULT_MAX_SCHEMA_BYTES`],
    /// [`DEFAULT_MAX_REF_DEPTH`], [`DEFAULT_MAX_ANCHORS`] and [`DEFAULT_MAX_COMPILE_STEPS`],
    /// the evaluation budget [`DEFAULT_EVAL_BUDGET`] plus [`DEFAULT_EVAL_BUDGET_PER_BYTE`] per
    /// input byte, and the scanner's default [`Limits`] for reading schema documents.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Schema, SchemaOptions};
    /// // The same as `Schema::options()` and `SchemaOptions::default()`.
    /// let schema = SchemaOptions::new().compile(br#"{"type":"string"}"#)?;
    /// assert!(Schema::compile(br#"{"type":"strin"}"#).is_err()); // checked against the meta-schema
    /// let _ = (schema, SchemaOptions::default());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn new() -> Self {
        SchemaOptions {
            draft: Draft::Draft202012,
            draft_named: false,
            format_assertion: false,
            validate_schema: true,
            bounds: Bounds::default(),
            budget: DEFAULT_EVAL_BUDGET,
            budget_per_byte: DEFAULT_EVAL_BUDGET_PER_BYTE,
            limits: Limits::new(),
            registry: Registry::default(),
            error: None,
        }
    }

    /// The dialect of documents without `$schema`: the schema compiled and every registered
    /// resource it reaches. Without it, the schema is read as 2020-12 and a resource without
    /// `$schema` in the dialect of the resource that references it.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Draft, Limits, Schema, Validator};
    /// // Draft-04: `exclusiveMaximum` is a boolean beside `maximum`.
    /// let schema = Schema::options()
    ///     .draft(Draft::Draft4)
    ///     .compile(br#"{"maximum":3,"exclusiveMaximum":true}"#)?;
    /// assert!(Validator::new(&schema).validate_slice(b"3", Limits::new()).is_err());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn draft(mut self, draft: Draft) -> Self {
        self.draft = draft;
        self.draft_named = true;
        self
    }

    /// Whether `format` is asserted (validated) rather than an annotation. Default: `false`
    /// (annotation only).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = br#"{"format":"date"}"#;
    /// let annotation = Schema::compile(schema)?;
    /// assert!(Validator::new(&annotation).validate_slice(br#""May 5""#, Limits::new()).is_ok());
    /// let asserted = Schema::options().format_assertion(true).compile(schema)?;
    /// assert!(Validator::new(&asserted).validate_slice(br#""May 5""#, Limits::new()).is_err());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn format_assertion(mut self, on: bool) -> Self {
        self.format_assertion = on;
        self
    }

    /// Whether the schema is checked against its meta-schema before compiling. Default:
    /// `true`.
    ///
    /// # Example
    /// ```
    /// use jsongate::Schema;
    /// // The meta-schema wants `title` to be a string; the compiler ignores annotations.
    /// assert!(Schema::compile(br#"{"title":5}"#).is_err());
    /// assert!(Schema::options().validate_schema(false).compile(br#"{"title":5}"#).is_ok());
    /// ```
    #[must_use]
    pub fn validate_schema(mut self, on: bool) -> Self {
        self.validate_schema = on;
        self
    }

    /// Bound on compiled subschemas and constants ([`CompileBudget::Nodes`]). Default:
    /// [`DEFAULT_MAX_SCHEMA_NODES`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let err = Schema::options()
    ///     .max_nodes(2)
    ///     .compile(br#"{"allOf":[{"type":"string"},{"minLength":1},{"maxLength":9}]}"#)
    ///     .unwrap_err();
    /// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Nodes, .. }));
    /// ```
    #[must_use]
    pub fn max_nodes(mut self, n: usize) -> Self {
        self.bounds.nodes = n;
        self
    }

    /// Bound on the bytes of the schema plus every resource it loads
    /// ([`CompileBudget::Bytes`]). Default: [`DEFAULT_MAX_SCHEMA_BYTES`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let err = Schema::options().max_schema_bytes(8).compile(br#"{"type":"string"}"#).unwrap_err();
    /// assert_eq!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Bytes, limit: 8 });
    /// ```
    #[must_use]
    pub fn max_schema_bytes(mut self, n: u64) -> Self {
        self.bounds.bytes = n;
        self
    }

    /// Bound on chains of subschemas applied in place to one value, one inside the other
    /// (`$ref` → `$ref` → …, `allOf` inside `allOf`; [`CompileBudget::RefDepth`]). Default:
    /// [`DEFAULT_MAX_REF_DEPTH`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let chain = br##"{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/c"},"c":{"type":"string"}}}"##;
    /// assert!(Schema::compile(chain).is_ok());
    /// let err = Schema::options().max_ref_depth(2).compile(chain).unwrap_err();
    /// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::RefDepth, .. }));
    /// ```
    #[must_use]
    pub fn max_ref_depth(mut self, n: u64) -> Self {
        self.bounds.ref_depth = n;
        self
    }

    /// Bound on `$id` resources, `$anchor`s and `$dynamicAnchor`s
    /// ([`CompileBudget::Anchors`]). Default: [`DEFAULT_MAX_ANCHORS`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let anchors = br#"{"$defs":{"a":{"$anchor":"a"},"b":{"$anchor":"b"},"c":{"$anchor":"c"}}}"#;
    /// assert!(Schema::compile(anchors).is_ok());
    /// let err = Schema::options().max_anchors(2).compile(anchors).unwrap_err();
    /// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Anchors, .. }));
    /// ```
    #[must_use]
    pub fn max_anchors(mut self, n: u64) -> Self {
        self.bounds.anchors = n;
        self
    }

    /// Bound on compile steps ([`CompileBudget::Steps`]): one per location indexed, keyword
    /// read, constant and resolved reference, and one per byte of each pattern. Default:
    /// [`DEFAULT_MAX_COMPILE_STEPS`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let schema = br#"{"properties":{"a":{"type":"string"},"b":{"pattern":"^[a-z]+$"}}}"#;
    /// assert!(Schema::compile(schema).is_ok());
    /// let err = Schema::options().max_compile_steps(5).compile(schema).unwrap_err();
    /// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Steps, limit: 5 }));
    /// ```
    #[must_use]
    pub fn max_compile_steps(mut self, n: u64) -> Self {
        self.bounds.steps = n;
        self
    }

    /// The evaluation budget: at most `n` work units per document, whatever its size (this
    /// drops the per-byte allowance; add one back with
    /// [`eval_budget_per_byte`](Self::eval_budget_per_byte)). A document whose evaluation
    /// needs more is rejected with [`ErrorKind::BudgetExceeded`](crate::ErrorKind). Default:
    /// [`DEFAULT_EVAL_BUDGET`] plus [`DEFAULT_EVAL_BUDGET_PER_BYTE`] per input byte.
    ///
    /// The unit is a bounded amount of work: one subschema evaluation started (or a check
    /// made in place on a scalar), one visit of an active subschema per member name, item or
    /// container end, one `$ref` an edge goes through; keywords whose cost grows with the data
    /// are charged by size (one unit per 16 bytes a `pattern` or `format` reads, per 64 bytes
    /// a string comparison or length count reads, per 8 names a `required` check tests, per 8
    /// constants an `enum` of containers tries). So the work of one document is at most a
    /// constant times its budget, whatever the schema and the document.
    ///
    /// # Example
    /// ```
    /// use jsongate::{ErrorKind, Limits, Rejection, Schema};
    /// let wide = br#"{"items":{"allOf":[{"type":"integer"},{"minimum":0}]}}"#;
    /// let schema = Schema::options().eval_budget(1_000).compile(wide)?;
    /// let doc = format!("[{}0]", "0,".repeat(1_000));
    /// let err = jsongate::Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new());
    /// assert!(matches!(err, Err(Rejection::Error(e)) if e.kind() == &ErrorKind::BudgetExceeded { limit: 1_000 }));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn eval_budget(mut self, n: u64) -> Self {
        self.budget = n;
        self.budget_per_byte = 0;
        self
    }

    /// Further evaluation units allowed per input byte read (default
    /// [`DEFAULT_EVAL_BUDGET_PER_BYTE`]), added to the fixed
    /// [`eval_budget`](Self::eval_budget): larger documents may do proportionally more
    /// work, while a small document can never cost more than the fixed part plus a little.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Rejection, Schema, Validator};
    /// let schema = br#"{"items":{"allOf":[{"type":"integer"},{"minimum":0}]}}"#;
    /// let doc = format!("[{}0]", "0,".repeat(2_000));
    /// let strict = Schema::options().eval_budget(1_000).compile(schema)?;
    /// assert!(matches!(
    ///     Validator::new(&strict).validate_slice(doc.as_bytes(), Limits::new()),
    ///     Err(Rejection::Error(_))
    /// ));
    /// let scaled = Schema::options().eval_budget(1_000).eval_budget_per_byte(16).compile(schema)?;
    /// assert!(Validator::new(&scaled).validate_slice(doc.as_bytes(), Limits::new()).is_ok());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn eval_budget_per_byte(mut self, n: u64) -> Self {
        self.budget_per_byte = n;
        self
    }

    /// Limits for reading schema documents (the schema and every
    /// [`resource`](Self::resource)). Default: [`Limits::new`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema};
    /// let deep = br#"{"not":{"not":{"not":{"not":{}}}}}"#;
    /// assert!(Schema::compile(deep).is_ok());
    /// assert!(Schema::options().limits(Limits::new().max_depth(3)).compile(deep).is_err());
    /// ```
    #[must_use]
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Registers a document that `$ref`s may name by `uri`. Nothing else is ever fetched.
    /// An unreadable document makes [`compile`](Self::compile) fail. Default: no resources.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, Schema, Validator};
    /// let schema = Schema::options()
    ///     .resource("https://example.com/id.json", br#"{"type":"string","minLength":3}"#)
    ///     .compile(br#"{"$ref":"https://example.com/id.json"}"#)?;
    /// let mut v = Validator::new(&schema);
    /// assert!(v.validate_slice(br#""c-1""#, Limits::new()).is_ok());
    /// assert!(v.validate_slice(br#""c""#, Limits::new()).is_err());
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    #[must_use]
    pub fn resource(mut self, uri: &str, document: &[u8]) -> Self {
        match Value::parse(document, self.limits) {
            Ok(v) => {
                // Relative URIs name documents beside the schema, as its references do.
                let key = uri::Uri::parse(compile::INTERNAL_BASE).resolve(uri).base();
                self.registry
                    .resources
                    .insert(key, (Arc::new(v), document.len() as u64));
            }
            Err(e) => {
                self.error.get_or_insert_with(|| {
                    CompileError::new(format!("resource is not valid JSON: {e}"), uri)
                });
            }
        }
        self
    }

    /// Reads a schema document within the byte budget and the reading limits, with its size.
    pub(crate) fn parse(&self, schema: &[u8]) -> Result<(Value, u64), CompileError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        if schema.len() as u64 > self.bounds.bytes {
            return Err(CompileError::budget(
                CompileBudget::Bytes,
                self.bounds.bytes,
                "#",
            ));
        }
        let value = Value::parse(schema, self.limits)
            // The message gives the byte, line and column: no schema location to add.
            .map_err(|e| CompileError::new(format!("schema is not valid JSON: {e}"), ""))?;
        Ok((value, schema.len() as u64))
    }

    /// Compiles a parsed schema document that was `size` bytes long, without checking it
    /// against its meta-schema (the caller does that first, when asked to).
    pub(crate) fn build(&self, value: Value, size: u64) -> Result<Schema, CompileError> {
        let settings = compile::Settings {
            default_draft: self.draft,
            resource_draft: self.draft_named.then_some(self.draft),
            format_assertion: self.format_assertion,
            bounds: self.bounds,
            registry: self.registry.clone(),
            base_uri: compile::INTERNAL_BASE.into(),
        };
        let program = compile::Compiler::new(settings).compile(value, size)?;
        Ok(Schema {
            program: Arc::new(program),
            budget: self.budget,
            budget_per_byte: self.budget_per_byte,
        })
    }

    /// The meta-schema a schema document is checked against: the one its `$schema` names, or
    /// the default draft's.
    pub(crate) fn meta_of(&self, value: &Value) -> Result<Meta, CompileError> {
        let meta_uri = match value.get("$schema").and_then(Value::as_str) {
            Some(s) => s.to_string(),
            None => self.draft.meta_schema_uri().into(),
        };
        Ok(match registry::known_draft(&meta_uri) {
            Some(d) => Meta::Embedded(d),
            None => {
                // A custom meta-schema registered by the caller.
                let Some(doc) = self.registry.get(&uri::Uri::parse(&meta_uri).base()) else {
                    return Err(CompileError::new(
                        format!("unknown meta-schema '{meta_uri}' in $schema"),
                        "#/$schema",
                    ));
                };
                Meta::Registered((*doc).clone())
            }
        })
    }
}

/// Which meta-schema a schema document is checked against.
pub(crate) enum Meta {
    /// The official meta-schema of a draft, embedded.
    Embedded(Draft),
    /// A meta-schema the caller registered as a resource.
    Registered(Value),
}

/// The official meta-schema document of a draft, with its size in bytes.
pub(crate) fn embedded_meta_document(d: Draft) -> Result<(Value, u64), CompileError> {
    let uri = d.meta_schema_uri();
    let (doc, size) = Registry::default()
        .get_sized(uri)
        .ok_or_else(|| CompileError::new("missing embedded meta-schema", uri))?;
    Ok(((*doc).clone(), size))
}
