#![cfg_attr(not(any(feature = "mcp", feature = "gate")), allow(dead_code))]
//! Schema comparison: how a schema changed, keyword by keyword, as a direction: a change
//! that lets more instances through is [`Direction::Widened`] — a raised
//! `maximum`/`maxLength`/`maxItems`/…, a lowered `minimum`/`minLength`/…, a removed `required`
//! name, an added `enum` value, a removed `pattern`/`format`/`const`/`multipleOf`, a widened
//! `type`, `additionalProperties` (or `unevaluatedProperties`, `items`, `propertyNames`)
//! opened or removed, a property allowed that `additionalProperties: false` refused. The
//! opposite is [`Direction::Narrowed`]. Annotations (`title`, `description`, `examples`,
//! `default`, …) are [`Direction::Text`]. Anything not understood here — `$ref`, `oneOf`,
//! `not`, `if`, a changed `pattern`, reordered `enum` values, an unknown keyword — is
//! [`Direction::Unclassified`], which callers must never take for safe.
//!
//! The one classifier of the crate: the MCP pin diff reads it for a tool's `inputSchema` and
//! `outputSchema`, the contract diff for each exposed field of an upstream shape.

use std::collections::BTreeSet;

use crate::json::Value;
use crate::pointer::{push_index, push_name};
use crate::schema::decimal::Decimal;
use crate::schema::keywords::{Bound, Keyword};

/// Which way one schema change moves the set of instances the schema accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Direction {
    /// More instances pass.
    Widened,
    /// Fewer instances pass.
    Narrowed,
    /// An annotation: what passes is the same.
    Text,
    /// Not classified: take it as dangerous as a widening and a narrowing at once.
    Unclassified,
}

/// One change between two schemas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SchemaChange {
    pub(crate) direction: Direction,
    /// JSON Pointer of the change, below the base the comparison was given.
    pub(crate) pointer: String,
    /// The keyword responsible, when one is.
    pub(crate) keyword: Option<String>,
    pub(crate) from: Option<Value>,
    pub(crate) to: Option<Value>,
}

impl SchemaChange {
    fn new(
        direction: Direction,
        pointer: &str,
        keyword: Option<&str>,
        from: Option<Value>,
        to: Option<Value>,
    ) -> SchemaChange {
        SchemaChange {
            direction,
            pointer: pointer.to_owned(),
            keyword: keyword.map(str::to_owned),
            from,
            to,
        }
    }
}

/// Every change from `old` to `new`, two schemas at pointer `base`: a schema's own
/// keywords first, then the schemas nested in it (an explicit worklist: schemas are as deep
/// as their limits allow). Schemas that differ give at least one change.
pub(crate) fn compare(base: &str, old: &Value, new: &Value) -> Vec<SchemaChange> {
    let mut out = Vec::new();
    let mut work = vec![(base.to_owned(), old.clone(), new.clone())];
    while let Some((p, x, y)) = work.pop() {
        schema(&p, &x, &y, &mut out, &mut work);
    }
    if out.is_empty() && old != new {
        out.push(SchemaChange::new(
            Direction::Unclassified,
            base,
            None,
            None,
            None,
        ));
    }
    out
}

pub(crate) fn get<'a>(m: &'a [(String, Value)], k: &str) -> Option<&'a Value> {
    m.iter().find(|(n, _)| n == k).map(|(_, v)| v)
}

/// The member names of two objects, sorted, once each.
pub(crate) fn names<'a>(a: &'a [(String, Value)], b: &'a [(String, Value)]) -> BTreeSet<&'a str> {
    a.iter().chain(b).map(|(k, _)| k.as_str()).collect()
}

fn is_true(v: &Value) -> bool {
    matches!(v, Value::Bool(true)) || matches!(v, Value::Object(m) if m.is_empty())
}

/// Compares two schemas at `p`; nested schemas go on `work`.
fn schema(
    p: &str,
    x: &Value,
    y: &Value,
    out: &mut Vec<SchemaChange>,
    work: &mut Vec<(String, Value, Value)>,
) {
    if x == y {
        return;
    }
    let change = |kind| SchemaChange::new(kind, p, None, Some(x.clone()), Some(y.clone()));
    match (x, y) {
        _ if is_true(x) => out.push(change(Direction::Narrowed)),
        _ if is_true(y) => out.push(change(Direction::Widened)),
        (Value::Bool(false), _) => out.push(change(Direction::Widened)),
        (_, Value::Bool(false)) => out.push(change(Direction::Narrowed)),
        (Value::Object(a), Value::Object(b)) => keywords(p, a, b, out, work),
        _ => out.push(change(Direction::Unclassified)),
    }
}

/// Compares two schema objects keyword by keyword.
#[allow(clippy::too_many_lines)]
fn keywords(
    p: &str,
    a: &[(String, Value)],
    b: &[(String, Value)],
    out: &mut Vec<SchemaChange>,
    work: &mut Vec<(String, Value, Value)>,
) {
    let mut nested = Vec::new();
    for k in names(a, b) {
        let (x, y) = (get(a, k), get(b, k));
        if x == y {
            continue;
        }
        let mut q = p.to_owned();
        push_name(&mut q, k);
        let push = |out: &mut Vec<SchemaChange>, kind| {
            out.push(SchemaChange::new(kind, &q, Some(k), x.cloned(), y.cloned()));
        };
        let keyword = Keyword::from_name(k);
        if let Some(bound) = keyword.and_then(Keyword::bound) {
            let upper = bound == Bound::Upper;
            let num =
                |v: Option<&Value>| v.and_then(Value::as_number_text).and_then(Decimal::parse);
            let kind = match (x, y, num(x), num(y)) {
                (Some(_), Some(_), Some(u), Some(v)) => {
                    if (v > u) == upper {
                        Direction::Widened
                    } else {
                        Direction::Narrowed
                    }
                }
                (Some(_), None, Some(_), _) => Direction::Widened,
                (None, Some(_), _, Some(_)) => Direction::Narrowed,
                _ => Direction::Unclassified,
            };
            push(out, kind);
        } else if k == "required" || k == "enum" || k == "type" {
            set_keyword(k, x, y, &q, out);
        } else if keyword.is_some_and(Keyword::restricts) {
            let kind = match (x, y) {
                (Some(_), None) => Direction::Widened,
                (None, Some(_)) => Direction::Narrowed,
                _ => Direction::Unclassified,
            };
            push(out, kind);
        } else if k == "uniqueItems" {
            let on = |v: Option<&Value>| v.and_then(Value::as_bool).unwrap_or(false);
            let plain = |v: Option<&Value>| v.is_none_or(|v| matches!(v, Value::Bool(_)));
            let kind = match (plain(x), plain(y)) {
                (true, true) if on(x) && !on(y) => Direction::Widened,
                (true, true) if !on(x) && on(y) => Direction::Narrowed,
                _ => Direction::Unclassified,
            };
            push(out, kind);
        } else if keyword.is_some_and(Keyword::open_when_absent) {
            let t = Value::Bool(true);
            nested.push((q, x.cloned().unwrap_or(t.clone()), y.cloned().unwrap_or(t)));
        } else if k == "properties" {
            let closed = |m: &[(String, Value)]| {
                ["additionalProperties", "unevaluatedProperties"]
                    .iter()
                    .any(|kw| matches!(get(m, kw), Some(Value::Bool(false))))
            };
            let empty: &[(String, Value)] = &[];
            match (
                x.map_or(Some(empty), Value::as_object),
                y.map_or(Some(empty), Value::as_object),
            ) {
                (Some(xm), Some(ym)) => {
                    for n in names(xm, ym) {
                        let mut r = q.clone();
                        push_name(&mut r, n);
                        match (get(xm, n), get(ym, n)) {
                            (Some(u), Some(v)) => nested.push((r, u.clone(), v.clone())),
                            // A property declared now: allowed where it was refused, or
                            // constrained where it was free.
                            (None, Some(v)) => {
                                let kind = if closed(b) {
                                    Direction::Widened
                                } else {
                                    Direction::Narrowed
                                };
                                out.push(SchemaChange::new(
                                    kind,
                                    &r,
                                    Some(k),
                                    None,
                                    Some(v.clone()),
                                ));
                            }
                            (Some(u), None) => {
                                let kind = if closed(a) {
                                    Direction::Narrowed
                                } else {
                                    Direction::Widened
                                };
                                out.push(SchemaChange::new(
                                    kind,
                                    &r,
                                    Some(k),
                                    Some(u.clone()),
                                    None,
                                ));
                            }
                            (None, None) => {}
                        }
                    }
                }
                _ => push(out, Direction::Unclassified),
            }
        } else if matches!(
            k,
            "patternProperties" | "$defs" | "definitions" | "dependentSchemas"
        ) {
            match (x.and_then(Value::as_object), y.and_then(Value::as_object)) {
                (Some(xm), Some(ym)) => {
                    for n in names(xm, ym) {
                        let mut r = q.clone();
                        push_name(&mut r, n);
                        match (get(xm, n), get(ym, n)) {
                            (Some(u), Some(v)) => nested.push((r, u.clone(), v.clone())),
                            (u, v) => out.push(SchemaChange::new(
                                Direction::Unclassified,
                                &r,
                                Some(k),
                                u.cloned(),
                                v.cloned(),
                            )),
                        }
                    }
                }
                _ => push(out, Direction::Unclassified),
            }
        } else if matches!(k, "allOf" | "anyOf" | "prefixItems") {
            match (x.and_then(Value::as_array), y.and_then(Value::as_array)) {
                (Some(xs), Some(ys)) if xs.len() == ys.len() => {
                    for (i, (u, v)) in xs.iter().zip(ys).enumerate() {
                        let mut r = q.clone();
                        push_index(&mut r, i as u64);
                        nested.push((r, u.clone(), v.clone()));
                    }
                }
                _ => push(out, Direction::Unclassified),
            }
        } else if keyword.is_some_and(Keyword::is_annotation) {
            push(out, Direction::Text);
        } else {
            push(out, Direction::Unclassified);
        }
    }
    // Nested schemas are compared after this object's own keywords, in keyword order.
    work.extend(nested.into_iter().rev());
}

/// `required`, `enum` and `type`: compared as sets.
fn set_keyword(
    k: &str,
    x: Option<&Value>,
    y: Option<&Value>,
    q: &str,
    out: &mut Vec<SchemaChange>,
) {
    let items = |v: Option<&Value>| -> Option<Vec<Value>> {
        match v {
            None => Some(Vec::new()),
            Some(Value::Array(a)) => Some(a.clone()),
            Some(s @ Value::String(_)) if k == "type" => Some(vec![s.clone()]),
            Some(_) => None,
        }
    };
    let (Some(u), Some(v)) = (items(x), items(y)) else {
        out.push(SchemaChange::new(
            Direction::Unclassified,
            q,
            Some(k),
            x.cloned(),
            y.cloned(),
        ));
        return;
    };
    let text = |s: &[Value]| -> BTreeSet<String> { s.iter().map(Value::to_json).collect() };
    let (su, sv) = (text(&u), text(&v));
    let only = |a: &BTreeSet<String>, b: &BTreeSet<String>| -> Vec<Value> {
        let covered = |t: &String| {
            b.contains(t) || (k == "type" && t == "\"integer\"" && b.contains("\"number\""))
        };
        a.iter()
            .filter(|t| !covered(t))
            .map(|t| Value::parse(t.as_bytes(), crate::Limits::unlimited()).unwrap_or(Value::Null))
            .collect()
    };
    let (gone, came) = (only(&su, &sv), only(&sv, &su));
    // For `required`, fewer names widen; for `enum` and `type`, more values widen. An absent
    // `enum` or `type` allows everything.
    let (widening, narrowing) = match k {
        "required" => (gone, came),
        _ if x.is_none() => (Vec::new(), vec![Value::Null]),
        _ if y.is_none() => (vec![Value::Null], Vec::new()),
        _ => (came, gone),
    };
    let list = |v: Vec<Value>| Some(Value::Array(v));
    if !widening.is_empty() {
        let (from, to) = if k == "required" {
            (list(widening), None)
        } else if y.is_none() {
            (x.cloned(), None)
        } else {
            (None, list(widening))
        };
        out.push(SchemaChange::new(Direction::Widened, q, Some(k), from, to));
    }
    if !narrowing.is_empty() {
        let (from, to) = if k == "required" {
            (None, list(narrowing))
        } else if x.is_none() {
            (None, y.cloned())
        } else {
            (list(narrowing), None)
        };
        out.push(SchemaChange::new(Direction::Narrowed, q, Some(k), from, to));
    }
    if su == sv {
        // The same members in another order (or repeated): nothing this module reads.
        out.push(SchemaChange::new(
            Direction::Unclassified,
            q,
            Some(k),
            x.cloned(),
            y.cloned(),
        ));
    }
}
