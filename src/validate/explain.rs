//! What a failing keyword expected, in schema terms, for the messages a person reads
//! ([`Violation::message`](super::Violation::message)): the missing property, the bound,
//! the allowed types or values.
//!
//! Computed only when a violation is recorded, from the compiled program (and, for the
//! presence keywords, the names the failing object had), by both runtime tiers alike; nothing
//! here runs while a document is valid. It never reads instance values.

use crate::schema::keywords::types;
use crate::schema::keywords::values::{self, Const};
use crate::schema::keywords::{quoted, Keyword};
use crate::schema::program::{NodeId, NodeKind, Program};

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
            return format!("expected {}", values::constant(node, &constant(p)));
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
        "type" => k.types.map(types::expected).unwrap_or_default(),
        "contains" | "minContains" => count("at least", Some(k.min_contains), "matching item"),
        "maxContains" => count("at most", k.max_contains, "matching item"),
        _ => {
            let group = Keyword::from_name(keyword).and_then(|kw| {
                let numbers = k.numbers.as_ref().and_then(|n| n.expected(kw));
                let arrays = || k.arrays.as_ref().and_then(|a| a.expected(kw));
                let objects = || k.properties_count.as_ref().and_then(|c| c.expected(kw));
                let strings = || k.strings.as_ref().and_then(|s| s.expected(kw));
                let konst = k.consts.first().map(|c| c.node);
                let values = || values::expected(kw, konst, k.enum_.as_deref(), &constant(p));
                numbers
                    .or_else(strings)
                    .or_else(arrays)
                    .or_else(objects)
                    .or_else(values)
            });
            group.unwrap_or_default()
        }
    }
}

/// How the values group finds a constant of `p` by its node.
fn constant<'a>(p: &'a Program) -> impl Fn(NodeId) -> Option<&'a Const> + 'a {
    |id| match &p.nodes[id as usize].kind {
        NodeKind::Const(c) => Some(c),
        _ => None,
    }
}
