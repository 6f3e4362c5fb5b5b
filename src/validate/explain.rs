//! What a failing keyword expected, in schema terms, for the messages a person reads
//! ([`Violation::message`](super::Violation::message)): the missing property, the bound,
//! the allowed types or values.
//!
//! Computed only when a violation is recorded, from the compiled program (and, for the
//! presence keywords, the names the failing object had), by both runtime tiers alike; nothing
//! here runs while a document is valid. It never reads instance values.

use std::fmt::Write as _;

use crate::json::write_string;
use crate::schema::keywords::{cut, quoted, Keyword, MAX_CONSTANT_CHARS};
use crate::schema::program::{types, Const, NodeId, NodeKind, Program};

/// Alternatives of an `enum` named in a message before the rest is only counted.
const MAX_ALTERNATIVES: usize = 8;

/// The detail of `keyword`'s failure at `node`; `seen(i)` tells whether the object had the
/// `i`-th watched name. Empty where the keyword says it all (`not`, `anyOf`, `false`, …).
pub(super) fn detail(
    p: &Program,
    node: NodeId,
    keyword: &str,
    seen: &dyn Fn(u32) -> bool,
) -> String {
    let k = match &p.nodes[node as usize].kind {
        NodeKind::Keywords(k) => k,
        NodeKind::Const(_) if keyword == "const" => {
            return format!("expected {}", constant(p, node));
        }
        _ => return String::new(),
    };
    let count = |what: &str, n: Option<u64>, unit: &str| match n {
        Some(1) => format!("expected {what} 1 {unit}"),
        Some(n) if unit == "property" => format!("expected {what} {n} properties"),
        Some(n) => format!("expected {what} {n} {unit}s"),
        None => String::new(),
    };
    match keyword {
        "required" => k
            .required_watch
            .iter()
            .zip(&k.required)
            .find(|(&w, _)| !seen(w))
            .map(|(_, name)| format!("missing required property {}", quoted(name)))
            .unwrap_or_default(),
        "dependentRequired" | "dependencies" => {
            for ((key, names), (_, wanted)) in
                k.dependent_required_watch.iter().zip(&k.dependent_required)
            {
                if !seen(*key) {
                    continue;
                }
                if let Some((_, name)) = names.iter().zip(wanted).find(|(&n, _)| !seen(n)) {
                    let key = &k.watch[*key as usize];
                    return format!(
                        "property {} is required when {} is present",
                        quoted(name),
                        quoted(key)
                    );
                }
            }
            String::new()
        }
        "type" => k.types.map(type_names).unwrap_or_default(),
        "const" => match k.consts.first() {
            Some(c) => format!("expected {}", constant(p, c.node)),
            None => String::new(),
        },
        "enum" => match &k.enum_ {
            Some(alts) => {
                let mut s = String::from("expected one of ");
                for (i, &a) in alts.iter().take(MAX_ALTERNATIVES).enumerate() {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push_str(&constant(p, a));
                }
                if alts.len() > MAX_ALTERNATIVES {
                    let _ = write!(s, ", … ({} in all)", alts.len());
                }
                s
            }
            None => String::new(),
        },
        "minItems" => count("at least", k.min_items, "item"),
        "maxItems" => count("at most", k.max_items, "item"),
        "minProperties" => count("at least", k.min_properties, "property"),
        "maxProperties" => count("at most", k.max_properties, "property"),
        "contains" | "minContains" => count("at least", Some(k.min_contains), "matching item"),
        "maxContains" => count("at most", k.max_contains, "matching item"),
        _ => {
            let group = Keyword::from_name(keyword).and_then(|kw| {
                let numbers = k.numbers.as_ref().and_then(|n| n.expected(kw));
                numbers.or_else(|| k.strings.as_ref().and_then(|s| s.expected(kw)))
            });
            group.unwrap_or_default()
        }
    }
}

/// `expected integer`, `expected string or null`.
fn type_names(t: u8) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (types::NULL, "null"),
        (types::BOOLEAN, "boolean"),
        (types::OBJECT, "object"),
        (types::ARRAY, "array"),
        (types::NUMBER, "number"),
        (types::STRING, "string"),
    ] {
        if t & bit != 0 {
            names.push(name);
        }
    }
    if t & types::INTEGER != 0 && t & types::NUMBER == 0 {
        names.push(if t & types::INTEGER_LITERAL != 0 {
            "integer (written without fraction or exponent)"
        } else {
            "integer"
        });
    }
    match names.split_last() {
        Some((last, [])) => format!("expected {last}"),
        Some((last, rest)) => format!("expected {} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

/// A constant of the schema as JSON text, cut to [`MAX_CONSTANT_CHARS`].
fn constant(p: &Program, node: NodeId) -> String {
    let mut out = String::new();
    write_constant(p, node, &mut out, 0);
    cut(out)
}

fn write_constant(p: &Program, node: NodeId, out: &mut String, depth: usize) {
    // Deep or long constants are cut anyway: stop writing once enough is there.
    if depth > 8 || out.len() > 4 * MAX_CONSTANT_CHARS {
        out.push('…');
        return;
    }
    let NodeKind::Const(c) = &p.nodes[node as usize].kind else {
        return;
    };
    match c {
        Const::Null => out.push_str("null"),
        Const::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Const::Number(d) => out.push_str(&d.plain()),
        Const::String(s) => write_string(out, s),
        Const::Array(items) => {
            out.push('[');
            for (i, &x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_constant(p, x, out, depth + 1);
            }
            out.push(']');
        }
        Const::Object(members) => {
            out.push('{');
            for (i, (name, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, name);
                out.push(':');
                write_constant(p, *x, out, depth + 1);
            }
            out.push('}');
        }
    }
}
