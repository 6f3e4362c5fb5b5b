//! Contract lint: what a contract lets reach the agent that it may not mean to. For every
//! exposed field and every upstream shape, the field's subschema (found through
//! `properties`, `items`, `additionalProperties`, `allOf` and local `$ref`s) is read for:
//!
//! - `unconstrained`: nothing constrains it (no schema found for it, or one without `type`,
//!   `enum`, `const` or alternatives): any value reaches the agent;
//! - `open_object`: an object whose member names are free (no `additionalProperties: false`
//!   nor `unevaluatedProperties: false`): a free-form map, whose names and values the agent
//!   reads as evidence;
//! - `unbounded_text`: a string without `maxLength`, `enum`, `const`, a bounded `format`
//!   or an anchored pattern without unbounded repetition;
//! - `unbounded_array`: an array without `maxItems`;
//! - `unresolved`: a `$ref` to another document, not followed (nothing below it is read);
//! - `unscreened`: the contract has no `screen` section and the field can carry text.
//!
//! Members of exposed objects and array items are read the same way (to a bounded depth).
//! A lint warns; it never changes what the gate does.

use super::contract::Contract;
use crate::json::{ObjectWriter, Value};
use crate::schema::keywords::Keyword as K;
use crate::Limits;

/// How deep into an exposed value (members, items) the lint reads.
const MAX_DEPTH: usize = 8;
/// Most `$ref`s followed for one subschema (a cycle ends here).
const MAX_REFS: usize = 32;
/// Formats whose values have a bounded length.
const BOUNDED_FORMATS: [&str; 8] = [
    "date",
    "date-time",
    "time",
    "duration",
    "uuid",
    "ipv4",
    "ipv6",
    "json-pointer",
];

/// One thing a contract lets reach the agent that it may not mean to.
///
/// # Example
/// ```
/// use jsongate::gate::{lint_contract, Contract};
/// let c = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object","properties":{
///     "meta":{"type":"object"},"title":{"type":"string","maxLength":80}}}}],
///   "fields":{"meta":{"pointer":"/meta"},"title":{"pointer":"/title"}},
///   "screen":{"default":"drop"}}"#, std::path::Path::new("."))?;
/// let w = lint_contract(&c);
/// assert_eq!(w.len(), 1);
/// assert_eq!((w[0].field.as_str(), w[0].kind, w[0].location.as_str()), ("meta", "open_object", "/meta"));
/// assert!(w[0].to_json().starts_with(r#"{"field":"meta","upstream":"v1","location":"/meta","warning":"open_object""#));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LintWarning {
    /// The exposed field.
    pub field: String,
    /// The upstream shape (its `version`).
    pub upstream: String,
    /// Where in the upstream response (the field's pointer, or a member or item below it).
    pub location: String,
    /// `unconstrained`, `open_object`, `unbounded_text`, `unbounded_array`, `unresolved`
    /// or `unscreened`.
    pub kind: &'static str,
    /// What it means, for a person.
    pub message: String,
}

impl LintWarning {
    /// `{"field","upstream","location","warning","message"}`.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        ObjectWriter::new(&mut s)
            .str("field", &self.field)
            .str("upstream", &self.upstream)
            .str("location", &self.location)
            .str("warning", self.kind)
            .str("message", &self.message);
        s
    }
}

/// Every warning for `c`'s exposed fields, field by field, shape by shape. A shape whose
/// schema cannot be read (a missing file) is skipped: loading the gate reports it.
pub fn lint_contract(c: &Contract) -> Vec<LintWarning> {
    let mut out = Vec::new();
    for shape in &c.shapes {
        let Some(root) = shape
            .schema
            .bytes()
            .ok()
            .and_then(|b| Value::parse(&b, Limits::unlimited()).ok())
        else {
            continue;
        };
        for f in c.fields.iter().filter(|f| f.expose) {
            // A shape may read the field at a pointer of its own.
            let pointer = shape
                .pointers
                .iter()
                .find(|(n, _)| *n == f.name)
                .map_or(f.pointer.as_str(), |(_, p)| p.as_str());
            let mut l = Lint {
                root: &root,
                field: &f.name,
                upstream: &shape.version,
                out: &mut out,
                text: false,
            };
            match l.at(pointer) {
                Ok(Some(s)) => l.value(s, pointer, 0),
                Ok(None) => l.warn(
                    pointer,
                    "unconstrained",
                    "the upstream schema does not describe this field: any value reaches the agent",
                ),
                Err(r) => l.unresolved(pointer, &r),
            }
            if l.text && c.screen.is_none() {
                l.warn(
                    pointer,
                    "unscreened",
                    "the field can carry text and the contract has no screen section: \
                     instruction-like text in it reaches the agent unscreened",
                );
            }
        }
    }
    out
}

struct Lint<'a> {
    root: &'a Value,
    field: &'a str,
    upstream: &'a str,
    out: &'a mut Vec<LintWarning>,
    /// Whether the field can carry text somewhere.
    text: bool,
}

impl<'a> Lint<'a> {
    fn warn(&mut self, location: &str, kind: &'static str, message: &str) {
        self.out.push(LintWarning {
            field: self.field.to_owned(),
            upstream: self.upstream.to_owned(),
            location: location.to_owned(),
            kind,
            message: message.to_owned(),
        });
    }

    fn unresolved(&mut self, location: &str, reference: &str) {
        self.warn(
            location,
            "unresolved",
            &format!(
                "'$ref': \"{reference}\" names another document; what is below it was not read"
            ),
        );
        self.text = true;
    }

    /// `s` with its local `$ref`s followed, and the members of its `allOf`s: every schema
    /// the value must satisfy. `Err` with the first `$ref` that leaves the document.
    fn all_of(&self, s: &'a Value) -> Result<Vec<&'a Value>, String> {
        let mut out = Vec::new();
        let mut todo = vec![s];
        let mut refs = 0;
        while let Some(s) = todo.pop() {
            if let Some(r) = s.get(K::Ref.name()).and_then(Value::as_str) {
                refs += 1;
                if refs > MAX_REFS {
                    break;
                }
                match r.strip_prefix('#').and_then(|p| self.root.pointer(p)) {
                    Some(t) => todo.push(t),
                    None => return Err(r.to_owned()),
                }
            }
            if let Some(members) = s.get(K::AllOf.name()).and_then(Value::as_array) {
                todo.extend(members.iter());
            }
            out.push(s);
            if out.len() > MAX_REFS * 4 {
                break;
            }
        }
        Ok(out)
    }

    /// The first value of keyword `k` among `set`.
    fn kw(set: &[&'a Value], k: K) -> Option<&'a Value> {
        set.iter().find_map(|s| s.get(k.name()))
    }

    /// The subschema at instance pointer `pointer` from the root.
    fn at(&self, pointer: &str) -> Result<Option<&'a Value>, String> {
        let Some(tokens) = crate::pointer::tokens(pointer) else {
            return Ok(None);
        };
        let mut s = self.root;
        for t in &tokens {
            let set = self.all_of(s)?;
            let next = set
                .iter()
                .find_map(|x| x.get(K::Properties.name()).and_then(|p| p.get(t)))
                .or_else(|| {
                    t.parse::<usize>()
                        .ok()
                        .and_then(|_| Self::kw(&set, K::Items))
                        .filter(|i| !matches!(i, Value::Array(_)))
                })
                .or_else(|| {
                    Self::kw(&set, K::AdditionalProperties)
                        .filter(|a| matches!(a, Value::Object(_)))
                });
            match next {
                Some(n) => s = n,
                None => return Ok(None),
            }
        }
        Ok(Some(s))
    }

    /// Reads the subschema `s` of the value at `location`.
    fn value(&mut self, s: &'a Value, location: &str, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        let set = match self.all_of(s) {
            Ok(set) => set,
            Err(r) => return self.unresolved(location, &r),
        };
        if set.iter().any(|x| matches!(x, Value::Bool(false))) {
            return;
        }
        if Self::kw(&set, K::Enum).is_some() || Self::kw(&set, K::Const).is_some() {
            return;
        }
        let alternatives: Vec<&'a Value> = [K::AnyOf, K::OneOf]
            .iter()
            .filter_map(|k| Self::kw(&set, *k).and_then(Value::as_array))
            .flatten()
            .collect();
        let types: Vec<&str> = match Self::kw(&set, K::Type) {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ if !alternatives.is_empty() => {
                for a in alternatives {
                    self.value(a, location, depth + 1);
                }
                return;
            }
            _ => {
                self.text = true;
                return self.warn(
                    location,
                    "unconstrained",
                    "no 'type', 'enum' or 'const': any value reaches the agent",
                );
            }
        };
        if types.contains(&"string") {
            self.text = true;
            if !bounded_string(&set) {
                self.warn(
                    location,
                    "unbounded_text",
                    "a string without 'maxLength' (or 'enum', 'const', a bounded 'format' or \
                     pattern): text of any length reaches the agent",
                );
            }
        }
        if types.contains(&"object") {
            self.object(&set, location, depth);
        }
        if types.contains(&"array") {
            if Self::kw(&set, K::MaxItems).is_none() {
                self.warn(
                    location,
                    "unbounded_array",
                    "an array without 'maxItems': any number of items reaches the agent",
                );
            }
            match Self::kw(&set, K::Items) {
                Some(Value::Array(items)) => {
                    for (i, it) in items.iter().enumerate() {
                        self.value(it, &format!("{location}/{i}"), depth + 1);
                    }
                }
                Some(it) => self.value(it, &format!("{location}/*"), depth + 1),
                None => {
                    self.text = true;
                    self.warn(
                        &format!("{location}/*"),
                        "unconstrained",
                        "array items without a schema: any value reaches the agent",
                    );
                }
            }
        }
    }

    fn object(&mut self, set: &[&'a Value], location: &str, depth: usize) {
        let closed = |k: K| matches!(Self::kw(set, k), Some(Value::Bool(false)));
        if !closed(K::AdditionalProperties) && !closed(K::UnevaluatedProperties) {
            self.text = true;
            self.warn(
                location,
                "open_object",
                "an object whose member names are free (no 'additionalProperties: false'): \
                 a free-form map whose names and values reach the agent",
            );
            if let Some(a @ Value::Object(_)) = Self::kw(set, K::AdditionalProperties) {
                self.value(a, &format!("{location}/*"), depth + 1);
            }
        }
        for s in set {
            if let Some(Value::Object(props)) = s.get(K::Properties.name()) {
                for (name, p) in props {
                    let mut at = location.to_owned();
                    crate::pointer::push_name(&mut at, name);
                    self.value(p, &at, depth + 1);
                }
            }
        }
    }
}

/// Whether a string schema bounds the length of its values.
fn bounded_string(set: &[&Value]) -> bool {
    let kw = |k: K| set.iter().find_map(|s| s.get(k.name()));
    if kw(K::MaxLength).is_some() {
        return true;
    }
    if kw(K::Format)
        .and_then(Value::as_str)
        .is_some_and(|f| BOUNDED_FORMATS.contains(&f))
    {
        return true;
    }
    kw(K::Pattern).and_then(Value::as_str).is_some_and(|p| {
        p.starts_with('^')
            && p.ends_with('$')
            && !p.ends_with("\\$")
            && !p.contains('*')
            && !p.contains('+')
            && !p.contains(",}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contract(schema: &str, fields: &str, extra: &str) -> Contract {
        Contract::from_slice(
            format!(
                r#"{{"contract":1,"tool":"t","version":"1",
                "upstream":[{{"version":"v1","schema":{schema}}}],"fields":{{{fields}}}{extra}}}"#
            )
            .as_bytes(),
            std::path::Path::new("."),
        )
        .unwrap()
    }

    fn kinds(c: &Contract) -> Vec<(String, &'static str)> {
        lint_contract(c)
            .into_iter()
            .map(|w| (w.location, w.kind))
            .collect()
    }

    #[test]
    fn a_closed_bounded_contract_has_no_warning() {
        let c = contract(
            r#"{"type":"object","additionalProperties":false,"properties":{
                "id":{"type":"string","pattern":"^T-[0-9]{1,9}$"},
                "at":{"type":"string","format":"date-time"},
                "state":{"enum":["open","closed"]},
                "tags":{"type":"array","maxItems":5,"items":{"type":"string","maxLength":20}},
                "n":{"type":"integer"}}}"#,
            r#""id":{"pointer":"/id"},"at":{"pointer":"/at"},"state":{"pointer":"/state"},
               "tags":{"pointer":"/tags"},"n":{"pointer":"/n"}"#,
            r#","screen":{"default":"flag"}"#,
        );
        assert_eq!(kinds(&c), []);
    }

    #[test]
    fn open_objects_unbounded_text_and_arrays_are_found_through_refs_and_all_of() {
        let c = contract(
            r##"{"type":"object","properties":{
                "meta":{"$ref":"#/$defs/Meta"},
                "body":{"allOf":[{"type":"string"}]},
                "list":{"type":"array","items":{"type":"string","maxLength":9}}},
              "$defs":{"Meta":{"type":"object","properties":{"note":{"type":"string"}}}}}"##,
            r#""meta":{"pointer":"/meta"},"body":{"pointer":"/body"},"list":{"pointer":"/list"},
               "hidden":{"pointer":"/body","expose":false}"#,
            "",
        );
        assert_eq!(
            kinds(&c),
            [
                ("/meta".to_owned(), "open_object"),
                ("/meta/note".to_owned(), "unbounded_text"),
                ("/meta".to_owned(), "unscreened"),
                ("/body".to_owned(), "unbounded_text"),
                ("/body".to_owned(), "unscreened"),
                ("/list".to_owned(), "unbounded_array"),
                ("/list".to_owned(), "unscreened"),
            ]
        );
    }

    #[test]
    fn undescribed_fields_and_foreign_refs_are_said() {
        let c = contract(
            r#"{"type":"object","properties":{"a":{"$ref":"other.json#/A"}}}"#,
            r#""a":{"pointer":"/a"},"b":{"pointer":"/b"}"#,
            r#","screen":{"default":"drop"}"#,
        );
        assert_eq!(
            kinds(&c),
            [
                ("/a".to_owned(), "unresolved"),
                ("/b".to_owned(), "unconstrained"),
            ]
        );
    }
}
