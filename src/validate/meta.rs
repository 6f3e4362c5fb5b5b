//! The checked entry points of schema compilation: a schema document is checked against its
//! meta-schema (with this crate's own validator) before it is compiled.
//!
//! They live here, above `crate::schema`, so that the schema layer never uses the runtime:
//! `schema` parses and compiles, `validate` runs programs, and checking a schema is running
//! the meta-schema's program on the schema document.

use std::sync::OnceLock;

use crate::json::Value;
use crate::schema::{embedded_meta_document, CompileBudget, Draft, Meta};
use crate::{CompileError, Schema, SchemaOptions, Validator};

impl Schema {
    /// Compiles a schema with the default options (draft 2020-12 unless `$schema` says
    /// otherwise, format as annotation only, the schema itself checked against its
    /// meta-schema).
    ///
    /// # Errors
    /// The schema is not valid JSON, not a valid schema, or references something unknown.
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileErrorKind, Limits, Schema, Validator};
    /// let schema = Schema::compile(br#"{"type":"object","required":["id"]}"#)?;
    /// assert!(Validator::new(&schema).validate_slice(br#"{"id":7}"#, Limits::new()).is_ok());
    /// let err = Schema::compile(br#"{"type":"objekt"}"#).unwrap_err();
    /// assert_eq!(err.kind(), CompileErrorKind::Invalid);
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn compile(schema: &[u8]) -> Result<Schema, CompileError> {
        SchemaOptions::new().compile(schema)
    }
}

impl SchemaOptions {
    /// Compiles `schema`.
    ///
    /// # Errors
    /// The schema is not valid JSON, fails its meta-schema, references something that was
    /// not registered, or exceeds the compile bounds.
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileErrorKind, Schema};
    /// let err = Schema::options().compile(br#"{"$ref":"other.json"}"#).unwrap_err();
    /// assert_eq!(err.kind(), CompileErrorKind::UnknownResource);
    /// let ok = Schema::options()
    ///     .resource("other.json", br#"{"type":"integer"}"#)
    ///     .compile(br#"{"$ref":"other.json"}"#);
    /// assert!(ok.is_ok());
    /// ```
    pub fn compile(&self, schema: &[u8]) -> Result<Schema, CompileError> {
        let (value, size) = self.parse(schema)?;
        self.compile_value(value, size)
    }

    /// Compiles a parsed schema document that was `size` bytes long, checking it first when
    /// the options ask for it.
    pub(crate) fn compile_value(&self, value: Value, size: u64) -> Result<Schema, CompileError> {
        if self.validate_schema {
            self.check_against_meta(&value)?;
        }
        self.build(value, size)
    }

    /// Checks a schema document against the meta-schema its `$schema` names.
    fn check_against_meta(&self, value: &Value) -> Result<(), CompileError> {
        let meta_of = self.meta_of(value)?;
        let which = match &meta_of {
            Meta::Embedded(d) => format!("the draft {} meta-schema", d.name()),
            Meta::Registered(_) => "its meta-schema".to_string(),
        };
        let meta = match meta_of {
            Meta::Embedded(d) => embedded_meta(d)?,
            Meta::Registered(doc) => {
                let mut opts = self.clone().validate_schema(false);
                opts.error = None;
                opts.compile_value(doc, 0)?
            }
        };
        // Checking is part of compiling: its evaluation runs under the compile step budget.
        let mut v = Validator::new(&meta).with_budget(self.bounds.steps);
        let ok = super::value_events(value, &mut v) && v.is_valid();
        if v.budget_exceeded() {
            return Err(CompileError::budget(
                CompileBudget::Steps,
                self.bounds.steps,
                "#",
            ));
        }
        if ok {
            return Ok(());
        }
        let (why, at) = v.violation().map_or((String::new(), String::new()), |x| {
            let at = x.instance_pointer();
            let why = match unknown_type(value.pointer(at), at) {
                Some(hint) => hint,
                None => x.message(),
            };
            (format!(": {why}"), at.to_string())
        });
        Err(CompileError::new(
            format!("schema does not conform to {which}{why}"),
            format!("#{at}"),
        ))
    }
}

/// The names `type` takes in every draft.
const TYPE_NAMES: [&str; 7] = [
    "array", "boolean", "integer", "null", "number", "object", "string",
];

/// A plain reading of the commonest meta-schema failure, a `type` that names no type (the
/// meta-schema only says that none of its `anyOf` alternatives matched): the name, the
/// seven names, and the nearest one when it is a likely misspelling.
fn unknown_type(found: Option<&Value>, at: &str) -> Option<String> {
    if !at.ends_with("/type") {
        return None;
    }
    let names: Vec<&str> = match found? {
        Value::String(s) => vec![s.as_str()],
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        _ => return None,
    };
    let bad = names.into_iter().find(|n| !TYPE_NAMES.contains(n))?;
    let shown: String = bad.chars().take(40).collect();
    let mut out = format!(
        "{} is not a type name (one of \"{}\")",
        crate::json::quote(&shown),
        TYPE_NAMES.join("\", \"")
    );
    let near = TYPE_NAMES
        .iter()
        .map(|t| (edit_distance(&bad.to_ascii_lowercase(), t), *t))
        .min()
        .filter(|&(d, _)| d <= 2);
    if let Some((_, t)) = near {
        out.push_str("; did you mean \"");
        out.push_str(t);
        out.push_str("\"?");
    }
    Some(out)
}

/// Levenshtein distance of two short strings (type names), by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().take(64).enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The compiled official meta-schema of a draft, built once per process.
fn embedded_meta(d: Draft) -> Result<Schema, CompileError> {
    static M4: OnceLock<Result<Schema, CompileError>> = OnceLock::new();
    static M6: OnceLock<Result<Schema, CompileError>> = OnceLock::new();
    static M7: OnceLock<Result<Schema, CompileError>> = OnceLock::new();
    static M19: OnceLock<Result<Schema, CompileError>> = OnceLock::new();
    static M20: OnceLock<Result<Schema, CompileError>> = OnceLock::new();
    let cell = match d {
        Draft::Draft4 => &M4,
        Draft::Draft6 => &M6,
        Draft::Draft7 => &M7,
        Draft::Draft201909 => &M19,
        Draft::Draft202012 => &M20,
    };
    cell.get_or_init(|| {
        let (doc, size) = embedded_meta_document(d)?;
        SchemaOptions::new()
            .validate_schema(false)
            .draft(d)
            .build(doc, size)
    })
    .clone()
}
