//! What the reason of a call refused for its arguments tells the model: the pointer, the
//! keyword and the constraint the schema expected (`expected integer <= 10`, `expected one
//! of ["a","b"]`, `missing required property "path"`, a format with an example). The
//! arguments are the model's own text; the constraint comes from the tool's `inputSchema`.
//!
//! The schema is the server's text, so it is quoted only when the tool's whole definition
//! was screened and nothing was found in it ([`super::tools::Tool::screened_input`]):
//! then the property names it declares appear in clear in locations and pointers, and its
//! constraint values are shown (capped). Any other name — one the schema does not declare,
//! or any name of a schema that was not screened clean — stays a digest, and upstream
//! result text never appears.

use std::collections::BTreeSet;

use super::message::Finding;
use super::reply::{instance_path_with, schema_path_with};
use crate::json::{write_string, Value};

/// Longest constraint text quoted, in characters (longer ones end with `…`).
const MAX_QUOTE: usize = 160;

/// The reason for a call whose arguments failed the `inputSchema`.
pub(super) fn argument_reason(
    f: &Finding,
    screened: Option<&Value>,
    args: Option<&Value>,
) -> String {
    let names = screened.map(declared_names).unwrap_or_default();
    let known = |n: &str| names.contains(n);
    let mut s = format!(
        "jsongate: the call was not forwarded: the arguments do not satisfy the tool's inputSchema ({}",
        f.class
    );
    if let Some(k) = &f.keyword_location {
        s.push_str(", schema keyword ");
        s.push_str(&schema_path_with(k, &known));
    }
    if let Some(p) = &f.pointer {
        s.push_str(", at ");
        s.push_str(&instance_path_with(p, &known));
    }
    s.push(')');
    let expected = match (
        screened,
        f.keyword.as_deref(),
        f.keyword_location.as_deref(),
    ) {
        (Some(schema), Some(kw), Some(loc)) => {
            let at = f
                .pointer
                .as_deref()
                .and_then(|p| p.strip_prefix("/params/arguments"))
                .unwrap_or("");
            let value = args.and_then(|a| a.pointer(at));
            resolve_parent(schema, loc).and_then(|node| expected(kw, node, value, &names))
        }
        _ => None,
    };
    if let Some(e) = expected {
        s.push_str(": ");
        s.push_str(&e);
    }
    s.push('.');
    s
}

/// Every property name a schema declares: the members of every `properties` object and
/// the strings of every `required` array, anywhere in it.
fn declared_names(schema: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![schema];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x) {
                        ("properties", Value::Object(p)) => {
                            out.extend(p.iter().map(|(n, _)| n.clone()));
                        }
                        ("required", Value::Array(r)) => {
                            out.extend(r.iter().filter_map(Value::as_str).map(str::to_owned));
                        }
                        _ => {}
                    }
                    stack.push(x);
                }
            }
            Value::Array(a) => stack.extend(a),
            _ => {}
        }
    }
    out
}

fn unescape(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

/// The schema object holding the failing keyword: `location` (a keyword location through
/// the schema, following `$ref`s) walked over `schema`, local `$ref`s (`#…` pointers)
/// followed; `None` when it leaves the document.
fn resolve_parent<'a>(schema: &'a Value, location: &str) -> Option<&'a Value> {
    let segs: Vec<&str> = location.strip_prefix('/')?.split('/').collect();
    let (_, path) = segs.split_last()?;
    let mut node = schema;
    for seg in path {
        let seg = unescape(seg);
        if seg == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            node = schema.pointer(target)?;
            continue;
        }
        node = node.child(&seg)?;
    }
    Some(node)
}

fn quote(v: &Value) -> String {
    capped(v.to_json())
}

fn capped(s: String) -> String {
    if s.chars().count() <= MAX_QUOTE {
        return s;
    }
    let mut t: String = s.chars().take(MAX_QUOTE).collect();
    t.push('…');
    t
}

/// An example value of a format, for the model.
fn format_example(format: &str) -> Option<&'static str> {
    Some(match format {
        "date-time" => "2026-01-31T12:00:00Z",
        "date" => "2026-01-31",
        "time" => "12:00:00Z",
        "duration" => "P1DT2H",
        "email" => "user@example.com",
        "hostname" => "example.com",
        "ipv4" => "192.0.2.1",
        "ipv6" => "2001:db8::1",
        "uri" => "https://example.com/a",
        "uri-reference" => "/a/b",
        "uuid" => "123e4567-e89b-12d3-a456-426614174000",
        _ => return None,
    })
}

/// The constraint `keyword` of `node` puts on `value`, as text for the model.
fn expected(
    keyword: &str,
    node: &Value,
    value: Option<&Value>,
    names: &BTreeSet<String>,
) -> Option<String> {
    let c = node.get(keyword);
    let subject = match node.get("type").and_then(Value::as_str) {
        Some("integer") => "integer",
        Some("number") => "number",
        _ => "a number",
    };
    let n = || c.and_then(Value::as_number_text);
    Some(match keyword {
        "false" => "expected nothing here (the schema allows no value)".to_owned(),
        "type" => {
            let types: Vec<&str> = match c? {
                Value::String(t) => vec![t.as_str()],
                Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
                _ => return None,
            };
            capped(format!("expected {}", types.join(" or ")))
        }
        "maximum" => format!("expected {subject} <= {}", n()?),
        "exclusiveMaximum" => format!("expected {subject} < {}", n()?),
        "minimum" => format!("expected {subject} >= {}", n()?),
        "exclusiveMinimum" => format!("expected {subject} > {}", n()?),
        "multipleOf" => format!("expected a multiple of {}", n()?),
        "maxLength" => format!("expected a string of at most {} characters", n()?),
        "minLength" => format!("expected a string of at least {} characters", n()?),
        "maxItems" => format!("expected an array of at most {} items", n()?),
        "minItems" => format!("expected an array of at least {} items", n()?),
        "maxProperties" => format!("expected an object of at most {} properties", n()?),
        "minProperties" => format!("expected an object of at least {} properties", n()?),
        "uniqueItems" => "expected unique items".to_owned(),
        "enum" => format!("expected one of {}", quote(c?)),
        "const" => format!("expected {}", quote(c?)),
        "pattern" => {
            let mut s = String::from("expected a string matching the pattern ");
            write_string(&mut s, c?.as_str()?);
            capped(s)
        }
        "format" => {
            let f = c?.as_str()?;
            let mut s = String::from("expected format ");
            write_string(&mut s, f);
            if let Some(e) = format_example(f) {
                s.push_str(", for example ");
                s.push_str(e);
            }
            capped(s)
        }
        "required" => {
            let present = value.and_then(Value::as_object).unwrap_or(&[]);
            let missing = c?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .find(|r| !present.iter().any(|(k, _)| k == r))?;
            let mut s = String::from("missing required property ");
            write_string(&mut s, missing);
            capped(s)
        }
        "additionalProperties" | "unevaluatedProperties" => {
            let declared: Vec<&str> = node
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&[])
                .iter()
                .map(|(k, _)| k.as_str())
                .filter(|k| names.contains(*k))
                .collect();
            if declared.is_empty() {
                "expected no other properties".to_owned()
            } else {
                let list = Value::Array(
                    declared
                        .iter()
                        .map(|k| Value::String((*k).to_owned()))
                        .collect(),
                );
                format!("expected only the properties {}", quote(&list))
            }
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;

    fn v(s: &str) -> Value {
        Value::parse(s.as_bytes(), Limits::new()).unwrap()
    }

    fn reason(schema: Option<&str>, keyword: &str, loc: &str, ptr: &str, args: &str) -> String {
        let f = Finding {
            class: "schema",
            keyword: Some(keyword.to_owned()),
            keyword_location: Some(loc.to_owned()),
            pointer: Some(ptr.to_owned()),
            ..Finding::default()
        };
        argument_reason(&f, schema.map(v).as_ref(), Some(&v(args)))
    }

    #[test]
    fn a_screened_schema_gives_the_pointer_keyword_and_constraint() {
        let s = r##"{"type":"object","additionalProperties":false,"required":["path","n"],
            "properties":{"n":{"type":"integer","maximum":10},"mode":{"enum":["r","w"]},
            "path":{"type":"string","pattern":"^/srv/"},"when":{"format":"date-time"},
            "ref":{"$ref":"#/$defs/small"}},"$defs":{"small":{"maxLength":3}}}"##;
        let r = |k: &str, l: &str, p: &str, a: &str| reason(Some(s), k, l, p, a);
        assert_eq!(
            r("maximum", "/properties/n/maximum", "/params/arguments/n", r#"{"n":50}"#),
            "jsongate: the call was not forwarded: the arguments do not satisfy the tool's inputSchema (schema, schema keyword /properties/n/maximum, at /params/arguments/n): expected integer <= 10."
        );
        assert!(r(
            "enum",
            "/properties/mode/enum",
            "/params/arguments/mode",
            "{}"
        )
        .ends_with(r#": expected one of ["r","w"]."#));
        assert!(
            r("required", "/required", "/params/arguments", r#"{"n":1}"#)
                .ends_with(r#"at /params/arguments): missing required property "path"."#)
        );
        assert!(r(
            "format",
            "/properties/when/format",
            "/params/arguments/when",
            "{}"
        )
        .ends_with(r#"expected format "date-time", for example 2026-01-31T12:00:00Z."#));
        assert!(r(
            "pattern",
            "/properties/path/pattern",
            "/params/arguments/path",
            "{}"
        )
        .ends_with(r#"expected a string matching the pattern "^/srv/"."#));
        assert!(r(
            "maxLength",
            "/properties/ref/$ref/maxLength",
            "/params/arguments/ref",
            "{}"
        )
        .ends_with("expected a string of at most 3 characters."));
        // A name the schema does not declare stays a digest.
        let extra = r(
            "additionalProperties",
            "/additionalProperties",
            "/params/arguments/zzz",
            "{}",
        );
        assert!(!extra.contains("zzz"), "{extra}");
        assert!(
            extra.ends_with(r#"expected only the properties ["n","mode","path","when","ref"]."#),
            "{extra}"
        );
    }

    #[test]
    fn an_unscreened_schema_is_never_quoted() {
        let s = r#"{"properties":{"n":{"type":"integer","maximum":10}}}"#;
        let r = reason(
            None,
            "maximum",
            "/properties/n/maximum",
            "/params/arguments/n",
            s,
        );
        assert!(!r.contains("expected") && !r.contains("/n"), "{r}");
        assert!(r.ends_with("at /params/arguments/<1b16b1df>)."), "{r}");
    }
}
