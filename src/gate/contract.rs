//! The contract file: one per tool, a JSON document checked against the schema the crate
//! ships ([`CONTRACT_SCHEMA`], printed by `jsongate contract schema`) before it is read.
//!
//! This module only reads and checks contracts; compiling their schemas and running them is
//! the gate's job.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::command::{LineFormat, LineType};
use super::economy::Budget;
use super::envelope::FailureCode;
use super::retry::RetryPolicy;
use super::semantic::{BelongsTo, Equals, Fresh, Ownership, SemanticCheck};
use crate::config::{self, Shipped};
use crate::json::{ConfigError, Value};
use crate::screen::{Action, ScreenContract};
use crate::Limits;

/// The JSON Schema of contract files (format 1).
///
/// # Example
/// ```
/// use jsongate::gate::{Contract, CONTRACT_SCHEMA};
/// use jsongate::{Limits, Schema, Validator};
/// let schema = Schema::compile(CONTRACT_SCHEMA.as_bytes())?;
/// let contract = br#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"v1","schema":{}}],"fields":{}}"#;
/// assert!(Validator::new(&schema).validate_slice(contract, Limits::new()).is_ok());
/// assert!(Contract::from_slice(contract, std::path::Path::new(".")).is_ok());
/// let no_upstream = br#"{"contract":1,"tool":"t","version":"1","upstream":[],"fields":{}}"#;
/// assert!(Validator::new(&schema).validate_slice(no_upstream, Limits::new()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const CONTRACT_SCHEMA: &str = include_str!("contract.schema.json");

pub(crate) fn err(msg: impl Into<String>) -> ConfigError {
    ConfigError::invalid(msg)
}

static CONTRACT: Shipped = Shipped::new("contract", "the contract schema", CONTRACT_SCHEMA);

/// Where a shape's schema comes from.
#[derive(Clone, Debug)]
pub(crate) enum SchemaSource {
    Inline(Vec<u8>),
    File(PathBuf),
}

impl SchemaSource {
    pub(crate) fn bytes(&self) -> Result<Vec<u8>, ConfigError> {
        match self {
            SchemaSource::Inline(b) => Ok(b.clone()),
            // One byte past the compile bound, so that compiling reports the size.
            SchemaSource::File(p) => {
                crate::config::read_bounded(p, crate::schema::DEFAULT_MAX_SCHEMA_BYTES)
                    .map_err(|e| ConfigError::read(format_args!("schema '{}'", p.display()), &e))
            }
        }
    }
}

/// One accepted upstream shape.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    pub(crate) version: String,
    pub(crate) schema: SchemaSource,
    pub(crate) pointers: Vec<(String, String)>,
}

/// One output field.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) pointer: String,
    pub(crate) expose: bool,
    pub(crate) required: bool,
}

/// A tool contract, read and checked but not compiled (see [`Gate::new`](super::Gate::new)).
///
/// # Example
/// ```
/// use jsongate::gate::Contract;
/// let c = Contract::from_slice(br#"{"contract":1,"tool":"review","version":"2",
///   "limits":{"max_depth":16},
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],
///   "fields":{"approved":{"pointer":"/approved"}}}"#, std::path::Path::new("."))?;
/// assert_eq!((c.tool(), c.version(), c.limits().get_max_depth()), ("review", "2", 16));
/// assert!(Contract::from_slice(br#"{"contract":1}"#, std::path::Path::new(".")).is_err());
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Contract {
    pub(crate) tool: String,
    pub(crate) version: String,
    pub(crate) limits: Limits,
    pub(crate) format: Option<LineFormat>,
    pub(crate) format_assertion: bool,
    /// The dialect of its schemas without `$schema`, when named.
    pub(crate) draft: Option<crate::Draft>,
    pub(crate) shapes: Vec<Shape>,
    pub(crate) errors: Vec<(FailureCode, SchemaSource)>,
    pub(crate) fields: Vec<Field>,
    pub(crate) checks: Vec<CheckSpec>,
    pub(crate) retry: RetryPolicy,
    pub(crate) screen: Option<ScreenContract>,
    pub(crate) budget: Budget,
    pub(crate) render: bool,
    /// The `alerts` member (its own schema, checked when the gate is built) and the
    /// directory its paths are relative to.
    pub(crate) alerts: Option<(Vec<u8>, PathBuf)>,
    /// The request ids the envelope may carry.
    pub(crate) request_id: super::request_id::RequestIdRule,
}

/// A built-in check as the contract declares it.
#[derive(Clone, Debug)]
pub(crate) enum CheckSpec {
    Equals(Equals),
    Fresh(Fresh),
    BelongsTo(BelongsTo),
    #[cfg(feature = "auth")]
    Signed(super::Signed),
}

impl CheckSpec {
    pub(crate) fn boxed(&self) -> Box<dyn SemanticCheck> {
        match self {
            CheckSpec::Equals(c) => Box::new(c.clone()),
            CheckSpec::Fresh(c) => Box::new(c.clone()),
            CheckSpec::BelongsTo(c) => Box::new(c.clone()),
            #[cfg(feature = "auth")]
            CheckSpec::Signed(c) => Box::new(c.clone()),
        }
    }
}

/// A `signed` check: its key file (a JWKS or PEM public keys, relative to `dir`) read now,
/// issuer and audience.
#[cfg(feature = "auth")]
fn signed(
    c: &Value,
    field: String,
    code: FailureCode,
    dir: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<CheckSpec, ConfigError> {
    use crate::auth::jwk::MAX_JWKS_BYTES;
    use crate::auth::{Jwks, Verifier};
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
    let path = dir.join(s("keys"));
    // One byte past the key set's bound, so that reading it reports the size (a device or a
    // huge file is never read whole).
    let bytes = crate::config::read_bounded(&path, MAX_JWKS_BYTES as u64)
        .map_err(|e| ConfigError::read(format_args!("signed keys '{}'", path.display()), &e))?;
    let keys = Jwks::from_key_file(&bytes).map_err(|e| {
        err(format!("signed keys '{}': {}", path.display(), e.message())).at(at("keys"))
    })?;
    if keys.is_empty() {
        return Err(err(format!("signed keys '{}': no usable key", path.display())).at(at("keys")));
    }
    // A key file that also holds something it must not (a private key, a certificate, a
    // malformed key) is refused whole: the operator meant something else.
    if let Some(why) = keys.refusals().first() {
        return Err(err(format!("signed keys '{}': {why}", path.display())).at(at("keys")));
    }
    Ok(CheckSpec::Signed(super::Signed {
        field,
        verifier: Verifier::new(s("issuer"), s("audience")),
        keys: std::sync::Arc::new(keys),
        subject_field: c
            .get("subject_field")
            .and_then(Value::as_str)
            .map(str::to_owned),
        code,
    }))
}

/// A `signed` check without the `auth` feature: a configuration error, not a check dropped.
#[cfg(not(feature = "auth"))]
fn signed(
    _: &Value,
    _: String,
    _: FailureCode,
    _: &Path,
    at: &dyn Fn(&str) -> String,
) -> Result<CheckSpec, ConfigError> {
    Err(err("the signed check needs jsongate built with the 'auth' feature").at(at("check")))
}

impl Contract {
    /// The tool name.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Contract;
    /// let c = Contract::from_slice(br#"{"contract":1,"tool":"search","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// assert_eq!(c.tool(), "search");
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The contract version.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Contract;
    /// let c = Contract::from_slice(br#"{"contract":1,"tool":"search","version":"2024-05",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// assert_eq!(c.version(), "2024-05");
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The scanner limits for this tool's responses.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Contract;
    /// use jsongate::Limits;
    /// let c = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// assert_eq!(c.limits(), Limits::new()); // the crate's defaults unless the contract says
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Reads a contract file; `schema_file` references are relative to its directory.
    ///
    /// # Errors
    /// The file cannot be read, is not valid JSON, does not satisfy [`CONTRACT_SCHEMA`], or
    /// is inconsistent (a check naming an unknown field, an invalid regex, …).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Contract;
    /// use jsongate::json::ConfigErrorKind;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("status.contract.json");
    /// std::fs::write(&path, br#"{"contract":1,"tool":"status","version":"1",
    ///   "upstream":[{"version":"v1","schema_file":"status.schema.json"}],"fields":{}}"#).unwrap();
    /// std::fs::write(dir.path().join("status.schema.json"), br#"{"type":"object"}"#).unwrap();
    /// assert_eq!(Contract::from_file(&path)?.tool(), "status");
    /// let missing = Contract::from_file(&dir.path().join("nope.json")).unwrap_err();
    /// assert_eq!(missing.kind(), ConfigErrorKind::Read);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn from_file(path: &Path) -> Result<Contract, ConfigError> {
        let bytes = CONTRACT
            .read(path)
            .map_err(|e| ConfigError::read(format_args!("contract '{}'", path.display()), &e))?;
        let dir = path.parent().unwrap_or(Path::new("."));
        Contract::from_slice(&bytes, dir)
    }

    /// Reads a contract from bytes; `schema_file` references are relative to `dir`.
    ///
    /// # Errors
    /// As [`from_file`](Self::from_file).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Contract;
    /// use jsongate::json::ConfigErrorKind;
    /// let err = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[],"fields":{},"extra":true}"#, std::path::Path::new(".")).unwrap_err();
    /// assert_eq!(err.kind(), ConfigErrorKind::Schema);
    /// ```
    pub fn from_slice(bytes: &[u8], dir: &Path) -> Result<Contract, ConfigError> {
        let doc = config::load(bytes, &CONTRACT)?;
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let tool = s(&doc, "tool").unwrap_or_default();
        let version = s(&doc, "version").unwrap_or_default();

        let lim = config::limits(&doc)?;

        let types = |v: Option<&Value>| -> Vec<(String, LineType)> {
            v.and_then(Value::as_object)
                .unwrap_or(&[])
                .iter()
                .filter_map(|(k, t)| Some((k.clone(), LineType::parse(t.as_str()?)?)))
                .collect()
        };
        let format = match doc.get("input") {
            Some(i) => match i.get("format").and_then(Value::as_str) {
                Some("key_value") => Some(LineFormat::KeyValue {
                    separator: s(i, "separator").unwrap_or_default(),
                    keys: types(i.get("keys")),
                }),
                Some("line_regex") => {
                    let re = s(i, "regex").unwrap_or_default();
                    let regex = super::command::LinePattern::new(&re)
                        .map_err(|e| err(format!("input.regex: {e}")).at("/input/regex"))?;
                    Some(LineFormat::LineRegex {
                        regex,
                        types: types(i.get("types")),
                    })
                }
                _ => None,
            },
            None => None,
        };

        let source = |v: &Value| -> SchemaSource {
            match (v.get("schema"), s(v, "schema_file")) {
                (Some(inline), _) => SchemaSource::Inline(inline.to_json().into_bytes()),
                (None, Some(f)) => SchemaSource::File(dir.join(f)),
                (None, None) => SchemaSource::Inline(b"false".to_vec()),
            }
        };
        let mut fields = Vec::new();
        for (name, f) in doc.get("fields").and_then(Value::as_object).unwrap_or(&[]) {
            fields.push(Field {
                name: name.clone(),
                pointer: s(f, "pointer").unwrap_or_default(),
                expose: f.get("expose").and_then(Value::as_bool).unwrap_or(true),
                required: f.get("required").and_then(Value::as_bool).unwrap_or(true),
            });
        }
        let mut shapes = Vec::new();
        for (i, u) in config::items(&doc, "upstream") {
            let version = s(u, "version").unwrap_or_default();
            if shapes.iter().any(|x: &Shape| x.version == version) {
                return Err(err(format!("upstream version '{version}' appears twice"))
                    .at(config::pointer(&["upstream", &i, "version"])));
            }
            let mut pointers = Vec::new();
            for (name, p) in u.get("pointers").and_then(Value::as_object).unwrap_or(&[]) {
                if !fields.iter().any(|f| &f.name == name) {
                    return Err(err(format!(
                        "upstream '{version}': pointers names unknown field '{name}'"
                    ))
                    .at(config::pointer(&["upstream", &i, "pointers", name])));
                }
                pointers.push((name.clone(), p.as_str().unwrap_or_default().to_owned()));
            }
            shapes.push(Shape {
                version,
                schema: source(u),
                pointers,
            });
        }
        let mut errors = Vec::new();
        for (i, e) in config::items(&doc, "upstream_errors") {
            let code = s(e, "code")
                .and_then(|c| FailureCode::parse(&c))
                .ok_or_else(|| {
                    err("upstream_errors: unknown code").at(config::pointer(&[
                        "upstream_errors",
                        &i,
                        "code",
                    ]))
                })?;
            errors.push((code, source(e)));
        }

        let mut checks = Vec::new();
        for (i, c) in config::items(&doc, "checks") {
            let at = |member: &str| config::pointer(&["checks", &i, member]);
            let field = s(c, "field").unwrap_or_default();
            if !fields.iter().any(|f| f.name == field) {
                return Err(err(format!("check names unknown field '{field}'")).at(at("field")));
            }
            let code = |default| {
                s(c, "code")
                    .and_then(|x| FailureCode::parse(&x))
                    .unwrap_or(default)
            };
            if let Some(sf) = s(c, "subject_field") {
                if !fields.iter().any(|f| f.name == sf) {
                    return Err(
                        err(format!("check names unknown field '{sf}'")).at(at("subject_field"))
                    );
                }
            }
            let secs = |k| c.get(k).and_then(Value::as_u64);
            checks.push(match c.get("check").and_then(Value::as_str) {
                Some("equals") => CheckSpec::Equals(Equals {
                    field,
                    context: s(c, "context").unwrap_or_default(),
                    code: code(FailureCode::Mismatch),
                }),
                Some("signed") => signed(c, field, code(FailureCode::Mismatch), dir, &at)?,
                Some("fresh") => CheckSpec::Fresh(Fresh {
                    field,
                    max_age_seconds: secs("max_age_seconds").ok_or_else(|| {
                        err("fresh: max_age_seconds too large").at(at("max_age_seconds"))
                    })?,
                    max_skew_seconds: secs("max_skew_seconds").unwrap_or(0),
                    code: code(FailureCode::Stale),
                }),
                _ => {
                    let rule = match (s(c, "prefix"), s(c, "pattern")) {
                        (Some(p), _) => Ownership::Prefix(p),
                        (None, p) => {
                            let p = p.unwrap_or_default();
                            // Check the template compiles with placeholder values.
                            let probe = super::semantic::template_keys(&p)
                                .iter()
                                .fold(p.clone(), |t, k| t.replace(&format!("{{{k}}}"), "x"));
                            crate::schema::regex::Regex::new(&probe).map_err(|e| {
                                err(format!("belongs_to pattern: {e}")).at(at("pattern"))
                            })?;
                            Ownership::Pattern(p)
                        }
                    };
                    CheckSpec::BelongsTo(BelongsTo {
                        field,
                        rule,
                        code: code(FailureCode::Mismatch),
                    })
                }
            });
        }

        let retry = match doc.get("retry") {
            None => RetryPolicy::default(),
            Some(r) => {
                let n = |k| r.get(k).and_then(Value::as_u64);
                RetryPolicy {
                    max_attempts: n("max_attempts").map_or(1, |x| x as u32),
                    budget: Duration::from_millis(n("budget_ms").unwrap_or(0)),
                    backoff: Duration::from_millis(n("backoff_ms").unwrap_or(0)),
                    retry_on: r
                        .get("retry_on")
                        .and_then(Value::as_array)
                        .unwrap_or(&[])
                        .iter()
                        .filter_map(|c| FailureCode::parse(c.as_str()?))
                        .collect(),
                }
            }
        };

        let screen = match doc.get("screen") {
            None => None,
            Some(v) => Some(screen_rules(v, &fields)?),
        };

        let budget = Budget {
            max_bytes: doc.get("max_output_bytes").and_then(Value::as_u64),
            max_tokens: doc.get("max_output_tokens").and_then(Value::as_u64),
            truncate_field: s(&doc, "truncate_field"),
        };
        if let Some(t) = &budget.truncate_field {
            if !fields.iter().any(|f| f.expose && &f.name == t) {
                return Err(err(format!("truncate_field '{t}' is not an exposed field"))
                    .at("/truncate_field"));
            }
            if !budget.is_set() {
                return Err(
                    err("truncate_field needs max_output_bytes or max_output_tokens")
                        .at("/truncate_field"),
                );
            }
        }

        let request_id = match s(&doc, "request_id_pattern") {
            None => super::request_id::RequestIdRule::default(),
            Some(p) => super::request_id::RequestIdRule::with_pattern(&p)
                .map_err(|e| err(format!("request_id_pattern: {e}")).at("/request_id_pattern"))?,
        };

        Ok(Contract {
            tool,
            version,
            request_id,
            limits: lim,
            format,
            format_assertion: doc
                .get("format_assertion")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            // The file's schema admits only the names `Draft::from_name` reads.
            draft: doc
                .get("draft")
                .and_then(Value::as_str)
                .and_then(crate::Draft::from_name),
            shapes,
            errors,
            fields,
            checks,
            retry,
            screen,
            budget,
            render: doc.get("render").and_then(Value::as_str) == Some("untrusted_text"),
            alerts: doc
                .get("alerts")
                .map(|a| (a.to_json().into_bytes(), dir.to_owned())),
        })
    }

    /// Whether screening may drop the exposed field `name` from `data` (its rule, or the
    /// default when it has none, is `drop`, or `redact`, which drops a string that stays
    /// high-risk): the envelope schema then makes it optional.
    pub(crate) fn droppable(&self, name: &str) -> bool {
        let Some(sc) = &self.screen else { return false };
        let mut own = String::new();
        crate::pointer::push_name(&mut own, name);
        match sc.fields().find(|(p, _)| *p == own) {
            Some((_, a)) => matches!(a, Action::Drop | Action::Redact),
            None => matches!(sc.get_default_action(), Action::Drop | Action::Redact),
        }
    }
}

/// The `screen` member: every rule's pointer must lie in an exposed field (the pointers are
/// into the agent's `data`).
fn screen_rules(v: &Value, fields: &[Field]) -> Result<ScreenContract, ConfigError> {
    let sc = ScreenContract::from_value(v);
    for (p, _) in sc.fields() {
        let at = || config::pointer(&["screen", "fields", p]);
        let tokens = crate::select::parse_pointer(p)
            .map_err(|e| err(format!("screen.fields: '{p}': {e}")).at(at()))?;
        let exposed = tokens
            .first()
            .is_some_and(|t| fields.iter().any(|f| f.expose && &f.name == t));
        if !exposed {
            return Err(err(format!(
                "screen.fields: '{p}' is not in an exposed field (pointers are into the agent's data)"
            ))
            .at(at()));
        }
    }
    Ok(sc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contract_schema_compiles() {
        let _ = CONTRACT.schema();
    }

    #[test]
    fn rejects_unknown_members_and_fields() {
        let dir = Path::new(".");
        let base = r#"{"contract":1,"tool":"t","version":"1","upstream":[{"version":"a","schema":true}],
            "fields":{"x":{"pointer":"/x"}}"#;
        assert!(Contract::from_slice(format!("{base}}}").as_bytes(), dir).is_ok());
        let extra = format!(r#"{base},"extra":1}}"#);
        assert!(Contract::from_slice(extra.as_bytes(), dir).is_err());
        let check =
            format!(r#"{base},"checks":[{{"check":"equals","field":"y","context":"c"}}]}}"#);
        let e = Contract::from_slice(check.as_bytes(), dir).unwrap_err();
        assert_eq!(e.to_string(), "check names unknown field 'y'");
        assert_eq!(e.pointer(), "/checks/0/field");
        assert_eq!(e.kind(), crate::json::ConfigErrorKind::Invalid);
        let e = Contract::from_slice(extra.as_bytes(), dir).unwrap_err();
        assert_eq!(
            (e.kind(), e.pointer()),
            (crate::json::ConfigErrorKind::Schema, "/extra")
        );
        assert!(e.offset().is_some());
        let limits = format!(r#"{base},"limits":{{"max_depth":99999999999999999999}}}}"#);
        let e = Contract::from_slice(limits.as_bytes(), dir).unwrap_err();
        assert_eq!(e.pointer(), "/limits/max_depth");
        let screen = format!(r#"{base},"screen":{{"fields":{{"/y":"drop"}}}}}}"#);
        let e = Contract::from_slice(screen.as_bytes(), dir).unwrap_err();
        assert_eq!(e.pointer(), "/screen/fields/~1y");
        assert!(
            e.message()
                .starts_with("screen.fields: '/y' is not in an exposed field"),
            "{e}"
        );
        let bad_ptr = base.replace("\"/x\"", "\"x\"");
        assert!(Contract::from_slice(format!("{bad_ptr}}}").as_bytes(), dir).is_err());
    }
}
