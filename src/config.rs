//! Configuration loading: every configuration document the crate reads (contracts, policies,
//! plans, alert files, screening contracts, lockfiles, the serve configuration) is checked
//! against the JSON Schema the crate ships for it, with the crate's own validator, and then
//! read into a [`Value`] for the loader to interpret.
//!
//! Layering: the error type, [`ConfigError`], is `crate::json`'s (the bottom layer every loader
//! can name); this module needs the validator, so it sits above `validate` and below the
//! layers whose configuration it loads (`select` ← … ← `gate` | `action` ← `mcp` | `http`).
//! It must not use any of those.

use std::sync::OnceLock;

use crate::json::{ConfigError, ConfigErrorKind, Value};
use crate::{Limits, Rejection, Schema, Validator};

/// The default size bound of a configuration document: 1 MiB.
pub(crate) const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// A JSON Schema the crate ships for one kind of configuration document, compiled on first
/// use, with the words its messages use.
pub(crate) struct Shipped {
    /// What the document is, as messages name it (`"contract"`, `"policy"`).
    subject: &'static str,
    /// The schema, as messages name it (`"the contract schema"`).
    schema_name: &'static str,
    text: &'static str,
    max_bytes: u64,
    compiled: OnceLock<Schema>,
}

impl Shipped {
    /// A shipped schema `text` for documents messages call `subject`, the schema itself
    /// being `schema_name`; documents are bounded by [`MAX_CONFIG_BYTES`].
    pub(crate) const fn new(
        subject: &'static str,
        schema_name: &'static str,
        text: &'static str,
    ) -> Shipped {
        Shipped::bounded(subject, schema_name, text, MAX_CONFIG_BYTES)
    }

    /// The same, with documents bounded by `max_bytes` instead.
    pub(crate) const fn bounded(
        subject: &'static str,
        schema_name: &'static str,
        text: &'static str,
        max_bytes: u64,
    ) -> Shipped {
        Shipped {
            subject,
            schema_name,
            text,
            max_bytes,
            compiled: OnceLock::new(),
        }
    }

    /// The compiled schema.
    ///
    /// # Panics
    /// If the shipped text does not compile: each shipped schema has a test that compiles it.
    pub(crate) fn schema(&self) -> &Schema {
        self.compiled
            .get_or_init(|| Schema::compile(self.text.as_bytes()).expect("shipped schema"))
    }

    /// The limits documents are read with.
    pub(crate) fn limits(&self) -> Limits {
        Limits::new().max_bytes(self.max_bytes)
    }

    /// The bytes of a document file, at most one more than the document may have (so the
    /// scan reports `too_large`): a file that never ends (`/dev/zero`) or a huge one costs
    /// no more memory than the bound.
    ///
    /// # Errors
    /// The file cannot be opened or read.
    pub(crate) fn read(&self, path: &std::path::Path) -> std::io::Result<Vec<u8>> {
        read_bounded(path, self.max_bytes)
    }
}

/// The bytes of `path`, at most `max + 1` of them (a caller with a limit of `max` reports
/// the excess itself).
///
/// # Errors
/// The file cannot be opened or read.
pub(crate) fn read_bounded(path: &std::path::Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read as _;
    let mut out = Vec::new();
    std::fs::File::open(path)?
        .take(max.saturating_add(1))
        .read_to_end(&mut out)?;
    Ok(out)
}

/// Checks `bytes` against `shipped` without keeping a value.
///
/// # Errors
/// [`ConfigErrorKind::Syntax`] (`"{subject} is not valid JSON: …"`, with the scanner's pointer
/// and offset) or [`ConfigErrorKind::Schema`] (`"{subject} does not satisfy {schema}: {message}
/// at '{pointer}'"`, with the violation's pointer and offset).
pub(crate) fn check(bytes: &[u8], shipped: &Shipped) -> Result<(), ConfigError> {
    match Validator::new(shipped.schema()).validate_slice(bytes, shipped.limits()) {
        Ok(()) => Ok(()),
        Err(Rejection::Error(e)) => Err(ConfigError::syntax(shipped.subject, &e)),
        Err(Rejection::Violation(v)) => Err(ConfigError::new(
            ConfigErrorKind::Schema,
            format!(
                "{} does not satisfy {}: {} at '{}'",
                shipped.subject,
                shipped.schema_name,
                described(shipped, &v).unwrap_or_else(|| v.message()),
                v.instance_pointer()
            ),
        )
        .at(v.instance_pointer())
        .at_offset(v.offset())),
    }
}

/// A `pattern` failure told in words: the failing subschema's `description` (a shipped
/// schema describes every member with a pattern), rather than the regular expression.
fn described(shipped: &Shipped, v: &crate::Violation) -> Option<String> {
    if v.keyword() != crate::schema::keywords::Keyword::Pattern.name() {
        return None;
    }
    let (_, at) = v.absolute_location().split_once('#')?;
    let doc = Value::parse(shipped.text.as_bytes(), Limits::unlimited()).ok()?;
    let description = doc.pointer(at)?.get("description")?.as_str()?;
    Some(format!(
        "expected {description} ({} at {})",
        v.keyword(),
        v.keyword_location()
    ))
}

/// Checks `bytes` against `shipped` and reads them into a [`Value`].
///
/// # Errors
/// As [`check`].
pub(crate) fn load(bytes: &[u8], shipped: &Shipped) -> Result<Value, ConfigError> {
    check(bytes, shipped)?;
    // The validator has read the same bytes under the same limits, so this cannot fail; an
    // error is still reported, not unwrapped.
    Value::parse(bytes, shipped.limits()).map_err(|e| ConfigError::syntax(shipped.subject, &e))
}

/// The `limits` member of a contract or policy as [`Limits`] (the defaults for names it does
/// not give).
///
/// # Errors
/// A count that does not fit in `u64` (`"limits.{name}: too large"`), or a name that is not
/// one of the seven limits (`"limits.{name}: unknown limit; the limits are max_bytes, …"`),
/// both [`ConfigErrorKind::Invalid`] at `/limits/{name}`. The shipped schemas admit only the
/// seven names, so the second is a schema and loader out of step, reported rather than read
/// as some other limit.
pub(crate) fn limits(doc: &Value) -> Result<Limits, ConfigError> {
    let mut lim = Limits::new();
    for (k, v) in doc.get("limits").and_then(Value::as_object).unwrap_or(&[]) {
        let n = v.as_u64().ok_or_else(|| {
            ConfigError::invalid(format!("limits.{k}: too large")).at(pointer(&["limits", k]))
        })?;
        lim = lim.set_by_name(k, n).ok_or_else(|| {
            let names: Vec<&str> = Limits::new().by_name().iter().map(|&(n, _)| n).collect();
            ConfigError::invalid(format!(
                "limits.{k}: unknown limit; the limits are {}",
                names.join(", ")
            ))
            .at(pointer(&["limits", k]))
        })?;
    }
    Ok(lim)
}

/// The items of the array member `name` of `doc` (none if it has no such array), with their
/// indices as pointer tokens.
pub(crate) fn items<'v>(doc: &'v Value, name: &str) -> impl Iterator<Item = (String, &'v Value)> {
    doc.get(name)
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .enumerate()
        .map(|(i, v)| (i.to_string(), v))
}

/// The JSON Pointer of `tokens` (`["tools", "a/b"]` → `/tools/a~1b`).
pub(crate) fn pointer(tokens: &[&str]) -> String {
    let mut p = String::new();
    for t in tokens {
        crate::pointer::push_name(&mut p, t);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    static THING: Shipped = Shipped::new(
        "thing",
        "the thing schema",
        r#"{"type":"object","properties":{"n":{"type":"integer","maximum":3}},
            "additionalProperties":false}"#,
    );

    static SMALL: Shipped = Shipped::bounded("small", "the small schema", "true", 8);

    #[test]
    fn a_valid_document_is_read_in_order() {
        let v = load(br#"{"n":2}"#, &THING).unwrap();
        assert_eq!(v.to_json(), r#"{"n":2}"#);
    }

    #[test]
    fn a_schema_violation_names_the_pointer_and_offset() {
        let e = load(br#"{"n":7}"#, &THING).unwrap_err();
        assert_eq!(e.kind(), ConfigErrorKind::Schema);
        assert_eq!(e.pointer(), "/n");
        assert_eq!(e.offset(), Some(5));
        assert!(
            e.message()
                .starts_with("thing does not satisfy the thing schema: ")
                && e.message().ends_with(" at '/n'"),
            "{e}"
        );
        let e = load(br#"{"n":1,"x":0}"#, &THING).unwrap_err();
        assert_eq!((e.kind(), e.pointer()), (ConfigErrorKind::Schema, "/x"));
    }

    #[test]
    fn syntax_duplicates_and_size_are_syntax_errors() {
        let e = load(br#"{"n":1,"n":2}"#, &THING).unwrap_err();
        assert_eq!((e.kind(), e.pointer()), (ConfigErrorKind::Syntax, "/n"));
        assert!(e.message().starts_with("thing is not valid JSON: "), "{e}");
        let e = load(br#"{"n":}"#, &THING).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ConfigErrorKind::Syntax, Some(5)));
        let e = load(br#""123456789""#, &SMALL).unwrap_err();
        assert_eq!(e.kind(), ConfigErrorKind::Syntax);
        assert_eq!(e.offset(), Some(8));
        assert!(check(br#""1234""#, &SMALL).is_ok());
    }

    #[test]
    fn limits_are_read_by_name_and_bounded() {
        let doc = Value::parse(
            br#"{"limits":{"max_depth":3,"max_bytes":10}}"#,
            Limits::new(),
        );
        let lim = limits(&doc.unwrap()).unwrap();
        assert_eq!(lim, Limits::new().max_depth(3).max_bytes(10));
        let doc = Value::parse(
            br#"{"limits":{"max_depth":18446744073709551616}}"#,
            Limits::new(),
        );
        let e = limits(&doc.unwrap()).unwrap_err();
        assert_eq!(e.to_string(), "limits.max_depth: too large");
        assert_eq!(
            (e.kind(), e.pointer()),
            (ConfigErrorKind::Invalid, "/limits/max_depth")
        );
        assert_eq!(pointer(&["tools", "a/b~"]), "/tools/a~1b~0");
        let doc = Value::parse(br#"{"a":[true,null],"b":1}"#, Limits::new()).unwrap();
        let got: Vec<_> = items(&doc, "a").map(|(i, v)| (i, v.to_json())).collect();
        assert_eq!(
            got,
            [("0".into(), "true".into()), ("1".into(), "null".into())]
        );
        assert_eq!(items(&doc, "b").count() + items(&doc, "c").count(), 0);
    }

    #[test]
    fn unknown_limit_names_are_an_error_not_max_items() {
        // Before: an unknown name silently set max_items.
        let doc = Value::parse(
            br#"{"limits":{"max_depth":3,"max_itmes":2}}"#,
            Limits::new(),
        );
        let e = limits(&doc.unwrap()).unwrap_err();
        assert_eq!(
            (e.kind(), e.pointer(), e.to_string().as_str()),
            (
                ConfigErrorKind::Invalid,
                "/limits/max_itmes",
                "limits.max_itmes: unknown limit; the limits are max_bytes, max_depth, \
                 max_name_bytes, max_string_bytes, max_number_bytes, max_members, max_items"
            )
        );
    }
}
