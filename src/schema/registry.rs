//! Where schema documents come from: the embedded official meta-schemas, and resources the
//! caller registers. Never the network, never the file system.
//!
//! Also owns draft detection from `$schema` and the vocabularies a meta-schema declares.

use std::collections::HashMap;
use std::sync::Arc;

use super::keywords::Keyword;
use crate::json::Value;

/// The JSON Schema dialects the compiler understands.
///
/// # Example
/// ```
/// use jsongate::{Draft, Limits, Schema, Validator};
/// // `items` as an array is a tuple in draft-07 and a schema error in 2020-12.
/// let tuple = br#"{"items":[{"type":"integer"}]}"#;
/// let schema = Schema::options().draft(Draft::Draft7).compile(tuple)?;
/// assert!(Validator::new(&schema).validate_slice(br#"[1,"x"]"#, Limits::new()).is_ok());
/// assert!(Validator::new(&schema).validate_slice(br#"["x"]"#, Limits::new()).is_err());
/// assert!(Schema::compile(tuple).is_err());
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Draft {
    /// Draft-04: `id`, boolean `exclusiveMaximum`/`exclusiveMinimum`, no `const`,
    /// `contains`, `propertyNames`, `if`/`then`/`else` or boolean schemas.
    Draft4,
    /// Draft-06: `$id`, numeric exclusive bounds, `const`, `contains`, `propertyNames`.
    Draft6,
    /// Draft-07: draft-06 plus `if`/`then`/`else`.
    Draft7,
    /// Draft 2019-09.
    Draft201909,
    /// Draft 2020-12 (the default).
    Draft202012,
}

impl Draft {
    /// The dialect a short name selects: `4`, `6`, `7`, `2019-09` or `2020-12` (also with a
    /// `draft` prefix, as in `draft-04`, `draft7` or `draft2020-12`).
    ///
    /// # Example
    /// ```
    /// use jsongate::Draft;
    /// assert_eq!(Draft::from_name("4"), Some(Draft::Draft4));
    /// assert_eq!(Draft::from_name("draft2019-09"), Some(Draft::Draft201909));
    /// assert_eq!(Draft::from_name("5"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Draft> {
        let n = name.strip_prefix("draft").unwrap_or(name);
        let n = n.strip_prefix('-').unwrap_or(n);
        Some(match n {
            "4" | "04" => Draft::Draft4,
            "6" | "06" => Draft::Draft6,
            "7" | "07" => Draft::Draft7,
            "2019-09" => Draft::Draft201909,
            "2020-12" => Draft::Draft202012,
            _ => return None,
        })
    }

    /// The short name [`from_name`](Self::from_name) reads: `4`, `6`, `7`, `2019-09`, `2020-12`.
    ///
    /// # Example
    /// ```
    /// use jsongate::Draft;
    /// assert_eq!(Draft::Draft201909.name(), "2019-09");
    /// assert_eq!(Draft::from_name(Draft::Draft4.name()), Some(Draft::Draft4));
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Draft::Draft4 => "4",
            Draft::Draft6 => "6",
            Draft::Draft7 => "7",
            Draft::Draft201909 => "2019-09",
            Draft::Draft202012 => "2020-12",
        }
    }

    /// The URI of the dialect's official meta-schema (what `$schema` names), without the
    /// empty fragment.
    ///
    /// # Example
    /// ```
    /// use jsongate::Draft;
    /// assert_eq!(Draft::Draft202012.meta_schema_uri(), "https://json-schema.org/draft/2020-12/schema");
    /// assert_eq!(Draft::Draft7.meta_schema_uri(), "http://json-schema.org/draft-07/schema");
    /// ```
    pub fn meta_schema_uri(self) -> &'static str {
        match self {
            Draft::Draft4 => "http://json-schema.org/draft-04/schema",
            Draft::Draft6 => "http://json-schema.org/draft-06/schema",
            Draft::Draft7 => "http://json-schema.org/draft-07/schema",
            Draft::Draft201909 => "https://json-schema.org/draft/2019-09/schema",
            Draft::Draft202012 => "https://json-schema.org/draft/2020-12/schema",
        }
    }

    /// Drafts 4 to 7: `$ref` overrides its siblings, `dependencies`, array `items` with
    /// `additionalItems`, `#name` anchors written as identifiers.
    pub(crate) fn legacy(self) -> bool {
        matches!(self, Draft::Draft4 | Draft::Draft6 | Draft::Draft7)
    }

    /// The keyword that names a resource: `id` in draft-04, `$id` after.
    pub(crate) fn id_keyword(self) -> &'static str {
        if self == Draft::Draft4 {
            Keyword::LegacyId.name()
        } else {
            Keyword::Id.name()
        }
    }
}

/// Which keyword groups are in force for a schema resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Vocab {
    pub(crate) applicator: bool,
    pub(crate) validation: bool,
    pub(crate) unevaluated: bool,
    pub(crate) format_assertion: bool,
}

impl Vocab {
    pub(crate) const ALL: Vocab = Vocab {
        applicator: true,
        validation: true,
        unevaluated: true,
        format_assertion: false,
    };
}

/// The official meta-schemas, embedded (see `meta/LICENSE`).
const EMBEDDED: &[(&str, &str)] = &[
    (
        "http://json-schema.org/draft-04/schema",
        include_str!("meta/draft-04/schema.json"),
    ),
    (
        "http://json-schema.org/draft-06/schema",
        include_str!("meta/draft-06/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/schema",
        include_str!("meta/draft2020-12/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/core",
        include_str!("meta/draft2020-12/meta/core.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/applicator",
        include_str!("meta/draft2020-12/meta/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/unevaluated",
        include_str!("meta/draft2020-12/meta/unevaluated.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/validation",
        include_str!("meta/draft2020-12/meta/validation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/meta-data",
        include_str!("meta/draft2020-12/meta/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-annotation",
        include_str!("meta/draft2020-12/meta/format-annotation.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/format-assertion",
        include_str!("meta/draft2020-12/meta/format-assertion.json"),
    ),
    (
        "https://json-schema.org/draft/2020-12/meta/content",
        include_str!("meta/draft2020-12/meta/content.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/schema",
        include_str!("meta/draft2019-09/schema.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/core",
        include_str!("meta/draft2019-09/meta/core.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/applicator",
        include_str!("meta/draft2019-09/meta/applicator.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/validation",
        include_str!("meta/draft2019-09/meta/validation.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/meta-data",
        include_str!("meta/draft2019-09/meta/meta-data.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/format",
        include_str!("meta/draft2019-09/meta/format.json"),
    ),
    (
        "https://json-schema.org/draft/2019-09/meta/content",
        include_str!("meta/draft2019-09/meta/content.json"),
    ),
    (
        "http://json-schema.org/draft-07/schema",
        include_str!("meta/draft-07/schema.json"),
    ),
];

/// Normalises a meta-schema URI for comparison (drops an empty fragment).
pub(crate) fn normalize(uri: &str) -> &str {
    uri.strip_suffix('#').unwrap_or(uri)
}

/// The draft a well-known `$schema` URI names.
pub(crate) fn known_draft(uri: &str) -> Option<Draft> {
    match normalize(uri) {
        "https://json-schema.org/draft/2020-12/schema" => Some(Draft::Draft202012),
        "https://json-schema.org/draft/2019-09/schema" => Some(Draft::Draft201909),
        "http://json-schema.org/draft-07/schema" | "https://json-schema.org/draft-07/schema" => {
            Some(Draft::Draft7)
        }
        "http://json-schema.org/draft-06/schema" | "https://json-schema.org/draft-06/schema" => {
            Some(Draft::Draft6)
        }
        "http://json-schema.org/draft-04/schema" | "https://json-schema.org/draft-04/schema" => {
            Some(Draft::Draft4)
        }
        _ => None,
    }
}

/// Resources registered by the caller, plus the embedded meta-schemas, parsed on demand.
#[derive(Clone, Default)]
pub(crate) struct Registry {
    /// Registered documents with their size in bytes.
    pub(crate) resources: HashMap<String, (Arc<Value>, u64)>,
}

impl Registry {
    /// The document registered (or embedded) under `uri` (without fragment).
    pub(crate) fn get(&self, uri: &str) -> Option<Arc<Value>> {
        self.get_sized(uri).map(|(v, _)| v)
    }

    /// [`get`](Self::get), with the document's size in bytes.
    pub(crate) fn get_sized(&self, uri: &str) -> Option<(Arc<Value>, u64)> {
        if let Some(v) = self.resources.get(uri) {
            return Some(v.clone());
        }
        let uri = normalize(uri);
        let text = EMBEDDED.iter().find(|(u, _)| *u == uri)?.1;
        // The embedded documents are known to be valid JSON.
        Value::parse(text.as_bytes(), crate::Limits::new())
            .ok()
            .map(|v| (Arc::new(v), text.len() as u64))
    }
}

/// The vocabularies a meta-schema declares (`None` if it declares none).
pub(crate) fn vocab_of(meta: &Value) -> Result<Option<Vocab>, String> {
    let Some(decl) = meta
        .get(Keyword::Vocabulary.name())
        .and_then(Value::as_object)
    else {
        return Ok(None);
    };
    let mut v = Vocab {
        applicator: false,
        validation: false,
        unevaluated: false,
        format_assertion: false,
    };
    for (uri, required) in decl {
        let name = uri.rsplit('/').next().unwrap_or("");
        let known = uri.starts_with("https://json-schema.org/draft/2020-12/vocab/")
            || uri.starts_with("https://json-schema.org/draft/2019-09/vocab/");
        match name {
            _ if !known && *required == Value::Bool(true) => {
                return Err(format!("required vocabulary '{uri}' is not supported"));
            }
            _ if !known => {}
            "applicator" => v.applicator = true,
            "validation" => v.validation = true,
            "unevaluated" => v.unevaluated = true,
            "format-assertion" => v.format_assertion = true,
            "format" => v.format_assertion = *required == Value::Bool(true),
            _ => {}
        }
    }
    if uri_2019(decl) {
        // 2019-09 put the unevaluated keywords in the applicator vocabulary.
        v.unevaluated = v.applicator;
    }
    Ok(Some(v))
}

fn uri_2019(decl: &[(String, Value)]) -> bool {
    decl.iter()
        .any(|(u, _)| u.starts_with("https://json-schema.org/draft/2019-09/vocab/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_meta_schemas_parse() {
        let r = Registry::default();
        for (uri, _) in EMBEDDED {
            assert!(r.get(uri).is_some(), "{uri}");
        }
        assert!(r.get("http://json-schema.org/draft-07/schema#").is_some());
        assert!(r.get("http://example.com/x").is_none());
    }

    #[test]
    fn drafts_from_schema_uris() {
        assert_eq!(
            known_draft("http://json-schema.org/draft-07/schema#"),
            Some(Draft::Draft7)
        );
        assert_eq!(
            known_draft("https://json-schema.org/draft/2019-09/schema"),
            Some(Draft::Draft201909)
        );
        assert_eq!(
            known_draft("http://json-schema.org/draft-04/schema#"),
            Some(Draft::Draft4)
        );
        assert_eq!(
            known_draft("http://json-schema.org/draft-06/schema#"),
            Some(Draft::Draft6)
        );
        assert_eq!(known_draft("https://example.com/custom"), None);
        for d in [
            Draft::Draft4,
            Draft::Draft6,
            Draft::Draft7,
            Draft::Draft201909,
            Draft::Draft202012,
        ] {
            assert_eq!(Draft::from_name(d.name()), Some(d));
            assert_eq!(known_draft(d.meta_schema_uri()), Some(d));
        }
    }

    #[test]
    fn vocabularies_of_the_official_meta_schemas() {
        let r = Registry::default();
        let v = vocab_of(
            &r.get("https://json-schema.org/draft/2020-12/schema")
                .unwrap(),
        )
        .unwrap();
        assert_eq!(v, Some(Vocab::ALL));
        let v = vocab_of(
            &r.get("https://json-schema.org/draft/2019-09/schema")
                .unwrap(),
        )
        .unwrap();
        assert_eq!(v, Some(Vocab::ALL));
    }
}
