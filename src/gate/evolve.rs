//! Contract evolution: every difference between two versions of a tool contract, classified
//! as breaking or not for the agent-facing side (what the agent reads) and the upstream side
//! (what the upstream must send).
//!
//! Pure comparison of two loaded contracts; it compiles their envelope schemas to know which
//! fields the agent is guaranteed, and reads inline upstream schemas for types and enums.

use super::contract::{CheckSpec, Contract};
use super::envelope::FailureCode;
use crate::json::ConfigError;
use crate::json::{write_string, ObjectWriter, Value};
use crate::schema::keywords::Keyword as K;
use crate::Limits;

/// Which side of the gate a change concerns.
///
/// # Example
/// ```
/// use jsongate::gate::{diff_contracts, Contract, Side};
/// let dir = std::path::Path::new(".");
/// let old = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{}}],"fields":{"a":{"pointer":"/a"}}}"#, dir)?;
/// let new = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"2",
///   "upstream":[{"version":"v1","schema":{}},{"version":"v2","schema":{}}],"fields":{"a":{"pointer":"/a"}}}"#, dir)?;
/// let changes = diff_contracts(&old, &new)?;
/// assert!(changes.iter().any(|c| c.kind == "shape_added" && c.side == Side::Upstream));
/// assert!(changes.iter().all(|c| c.side != Side::Agent)); // the agent reads the same envelope
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// What the agent reads (the envelope).
    Agent,
    /// What the upstream must send.
    Upstream,
}

/// One difference between two contracts.
///
/// # Example
/// ```
/// use jsongate::gate::{diff_contracts, Contract, Side};
/// let dir = std::path::Path::new(".");
/// let old = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{}}],"fields":{"a":{"pointer":"/a"},"b":{"pointer":"/b"}}}"#, dir)?;
/// let new = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"2",
///   "upstream":[{"version":"v1","schema":{}}],"fields":{"a":{"pointer":"/a"}}}"#, dir)?;
/// let changes = diff_contracts(&old, &new)?;
/// let removed = changes.iter().find(|c| c.kind == "field_removed").unwrap();
/// assert_eq!((removed.side, removed.breaking, removed.subject.as_str()), (Side::Agent, true, "b"));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The side it concerns.
    pub side: Side,
    /// What changed: `tool_renamed`, `field_added`, `field_removed`, `field_renamed`,
    /// `field_now_optional`, `field_now_required`, `field_hidden`, `field_exposed`,
    /// `pointer_changed`, `type_changed`, `enum_widened`, `enum_narrowed`,
    /// `required_upstream_added`, `required_upstream_removed`, `shape_added`,
    /// `shape_dropped`, `limit_lowered`, `limit_raised`, `failure_codes_changed`,
    /// `output_budget_lowered`, `output_budget_raised`.
    pub kind: &'static str,
    /// Whether callers written for the old contract can break.
    pub breaking: bool,
    /// The field, shape, limit or member concerned.
    pub subject: String,
    /// The old value (JSON text), if any.
    pub from: Option<String>,
    /// The new value (JSON text), if any.
    pub to: Option<String>,
    /// For a schema change inside a field: where in the field's subschema (local `$ref`s
    /// followed), e.g. `/properties/total/maximum`.
    pub location: Option<String>,
}

impl Change {
    /// The change as one JSON line (no newline).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Change, Side};
    /// let c = Change { side: Side::Upstream, kind: "limit_lowered", breaking: true,
    ///     subject: "max_depth".into(), from: Some("64".into()), to: Some("32".into()), location: None };
    /// assert_eq!(c.to_json(), r#"{"side":"upstream","change":"limit_lowered","breaking":true,"subject":"max_depth","from":64,"to":32}"#);
    /// ```
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        let mut o = ObjectWriter::new(&mut out);
        o.str(
            "side",
            match self.side {
                Side::Agent => "agent",
                Side::Upstream => "upstream",
            },
        )
        .str("change", self.kind)
        .bool("breaking", self.breaking)
        .str("subject", &self.subject);
        if let Some(l) = &self.location {
            o.str("location", l);
        }
        for (k, v) in [("from", &self.from), ("to", &self.to)] {
            if let Some(v) = v {
                // `from`/`to` are JSON text already (a number, a quoted string, an array).
                o.raw(k, v);
            }
        }
        o.finish();
        out
    }
}

fn j(s: &str) -> String {
    let mut o = String::new();
    write_string(&mut o, s);
    o
}

/// The agent-facing fields: name → (required in the envelope, upstream pointer).
fn agent_fields(c: &Contract) -> Result<Vec<(String, bool, String)>, ConfigError> {
    let g = super::Gate::new(c)?;
    let schema = Value::parse(g.envelope_schema().as_bytes(), Limits::unlimited())
        .map_err(|e| super::contract::err(e.to_string()))?;
    let data = schema.pointer("/oneOf/0/properties/data");
    let required: Vec<&str> = data
        .and_then(|d| d.get("required"))
        .and_then(Value::as_array)
        .unwrap_or(&[])
        .iter()
        .filter_map(Value::as_str)
        .collect();
    Ok(c.fields
        .iter()
        .filter(|f| f.expose)
        .map(|f| {
            (
                f.name.clone(),
                required.contains(&f.name.as_str()),
                f.pointer.clone(),
            )
        })
        .collect())
}

/// The current (first) shape's schema, parsed, its local `$ref`s written in place.
fn current_schema(c: &Contract) -> Option<Value> {
    let bytes = c.shapes.first()?.schema.bytes().ok()?;
    let root = Value::parse(&bytes, Limits::unlimited()).ok()?;
    let mut budget = MAX_INLINED;
    Some(inline(&root, &root, 0, &mut budget))
}

/// Most `$ref`s written in place for one schema, and how deep they may nest (a recursive
/// schema keeps its `$ref` past that: a change there is not classified, so breaking).
const MAX_INLINED: usize = 4096;
const MAX_INLINE_DEPTH: usize = 16;

/// `v` with every local `$ref` (`#…`) replaced by its target (beside other keywords:
/// `allOf: [target]`), within the budget; values that are data (`enum`, `const`,
/// `default`, `examples`) are copied as they are.
fn inline(root: &Value, v: &Value, depth: usize, budget: &mut usize) -> Value {
    let Value::Object(m) = v else {
        return match v {
            Value::Array(a) => {
                Value::Array(a.iter().map(|x| inline(root, x, depth, budget)).collect())
            }
            other => other.clone(),
        };
    };
    let target = match m.iter().find(|(k, _)| k == K::Ref.name()) {
        Some((_, Value::String(r))) if depth < MAX_INLINE_DEPTH && *budget > 0 => {
            r.strip_prefix('#').and_then(|p| root.pointer(p))
        }
        _ => None,
    };
    let mut out: Vec<(String, Value)> = m
        .iter()
        .filter(|(k, _)| !(target.is_some() && k == K::Ref.name()))
        .map(|(k, x)| {
            let data = [K::Enum, K::Const, K::Default, K::Examples];
            let x = if data.iter().any(|d| d.name() == k) {
                x.clone()
            } else {
                inline(root, x, depth, budget)
            };
            (k.clone(), x)
        })
        .collect();
    if let Some(t) = target {
        *budget -= 1;
        let t = inline(root, t, depth + 1, budget);
        if out.is_empty() {
            return t;
        }
        match out.iter_mut().find(|(k, _)| k == K::AllOf.name()) {
            Some((_, Value::Array(all))) => all.push(t),
            _ => out.push((K::AllOf.name().to_owned(), Value::Array(vec![t]))),
        }
    }
    Value::Object(out)
}

/// The subschema at an instance pointer, following `properties` (and `items` for an index).
fn schema_at<'a>(schema: &'a Value, pointer: &str) -> Option<&'a Value> {
    let tokens = crate::pointer::tokens(pointer)?;
    let mut s = schema;
    for t in &tokens {
        s = match s.get("properties").and_then(|p| p.get(t)) {
            Some(x) => x,
            None if t.parse::<u64>().is_ok() => s.get("items")?,
            None => return None,
        };
    }
    Some(s)
}

fn enum_values(s: &Value) -> Option<Vec<String>> {
    Some(
        s.get("enum")?
            .as_array()?
            .iter()
            .map(Value::to_json)
            .collect(),
    )
}

/// Every code the contract can put in a failure envelope.
fn failure_codes(c: &Contract) -> Vec<&'static str> {
    let mut codes = vec![
        FailureCode::InvalidResponse.as_str(),
        FailureCode::UpstreamUnavailable.as_str(),
    ];
    codes.extend(c.errors.iter().map(|(code, _)| code.as_str()));
    for ch in &c.checks {
        codes.push(match ch {
            CheckSpec::Equals(x) => x.code.as_str(),
            CheckSpec::Fresh(x) => x.code.as_str(),
            CheckSpec::BelongsTo(x) => x.code.as_str(),
            #[cfg(feature = "auth")]
            CheckSpec::Signed(x) => x.code.as_str(),
        });
    }
    codes.sort_unstable();
    codes.dedup();
    codes
}

fn list(xs: &[&str]) -> String {
    let v: Vec<String> = xs.iter().map(|x| j(x)).collect();
    format!("[{}]", v.join(","))
}

/// Every difference between `old` and `new`, agent side first.
///
/// # Errors
/// One of the contracts does not compile.
///
/// # Example
/// ```
/// use jsongate::gate::{diff_contracts, Contract};
/// let c = |fields: &str| Contract::from_slice(format!(r#"{{"contract":1,"tool":"t","version":"1",
///     "upstream":[{{"version":"v1","schema":true}}],"fields":{{{fields}}}}}"#).as_bytes(),
///     std::path::Path::new(".")).unwrap();
/// let changes = diff_contracts(&c(r#""a":{"pointer":"/a"},"b":{"pointer":"/b"}"#),
///                              &c(r#""a":{"pointer":"/a"}"#)).unwrap();
/// assert_eq!((changes[0].kind, changes[0].breaking), ("field_removed", true));
/// ```
pub fn diff_contracts(old: &Contract, new: &Contract) -> Result<Vec<Change>, ConfigError> {
    let mut out = Vec::new();
    let mut push = |side, kind, breaking, subject: &str, from: Option<String>, to| {
        out.push(Change {
            side,
            kind,
            breaking,
            subject: subject.to_owned(),
            from,
            to,
            location: None,
        });
    };
    // Schema changes inside the fields both expose, kept apart and appended at the end.
    let mut inside = Vec::new();
    if old.tool != new.tool {
        push(
            Side::Agent,
            "tool_renamed",
            true,
            "tool",
            Some(j(&old.tool)),
            Some(j(&new.tool)),
        );
    }
    // ---- agent side: the fields of data ----
    let (fa, fb) = (agent_fields(old)?, agent_fields(new)?);
    let hidden = |c: &Contract, n: &str| c.fields.iter().any(|f| f.name == n && !f.expose);
    for (name, req, ptr) in &fa {
        match fb.iter().find(|x| &x.0 == name) {
            None if hidden(new, name) => {
                push(Side::Agent, "field_hidden", true, name, None, None);
            }
            None => match fb
                .iter()
                .find(|x| &x.2 == ptr && !fa.iter().any(|y| y.0 == x.0))
            {
                Some(r) => push(
                    Side::Agent,
                    "field_renamed",
                    true,
                    name,
                    Some(j(name)),
                    Some(j(&r.0)),
                ),
                None => push(Side::Agent, "field_removed", true, name, None, None),
            },
            Some((_, req2, ptr2)) => {
                if *req && !req2 {
                    push(Side::Agent, "field_now_optional", true, name, None, None);
                } else if !req && *req2 {
                    push(Side::Agent, "field_now_required", false, name, None, None);
                }
                if ptr != ptr2 {
                    push(
                        Side::Upstream,
                        "pointer_changed",
                        true,
                        name,
                        Some(j(ptr)),
                        Some(j(ptr2)),
                    );
                }
            }
        }
    }
    for (name, _, ptr) in &fb {
        if fa.iter().any(|x| &x.0 == name) {
            continue;
        }
        let renamed = fa
            .iter()
            .any(|x| &x.2 == ptr && !fb.iter().any(|y| y.0 == x.0));
        if hidden(old, name) {
            push(Side::Agent, "field_exposed", false, name, None, None);
        } else if !renamed {
            push(Side::Agent, "field_added", false, name, None, None);
        }
    }
    // ---- types and enums of the fields both expose, in the current shapes ----
    if let (Some(sa), Some(sb)) = (current_schema(old), current_schema(new)) {
        for (name, _, ptr) in &fa {
            let Some((_, _, ptr2)) = fb.iter().find(|x| &x.0 == name) else {
                continue;
            };
            let (a, b) = (schema_at(&sa, ptr), schema_at(&sb, ptr2));
            inside.extend(field_changes(name, a, b));
            let (Some(a), Some(b)) = (a, b) else {
                continue;
            };
            let (ta, tb) = (a.get("type"), b.get("type"));
            if ta != tb {
                push(
                    Side::Agent,
                    "type_changed",
                    true,
                    name,
                    Some(ta.map_or_else(|| "null".into(), Value::to_json)),
                    Some(tb.map_or_else(|| "null".into(), Value::to_json)),
                );
            }
            match (enum_values(a), enum_values(b)) {
                (Some(ea), Some(eb)) => {
                    let added: Vec<&str> = eb
                        .iter()
                        .filter(|x| !ea.contains(x))
                        .map(String::as_str)
                        .collect();
                    let removed: Vec<&str> = ea
                        .iter()
                        .filter(|x| !eb.contains(x))
                        .map(String::as_str)
                        .collect();
                    if !added.is_empty() {
                        // The agent may now read values it was never told about.
                        let to = format!("[{}]", added.join(","));
                        push(Side::Agent, "enum_widened", true, name, None, Some(to));
                    }
                    if !removed.is_empty() {
                        // The upstream's old values are now rejected.
                        let from = format!("[{}]", removed.join(","));
                        push(
                            Side::Upstream,
                            "enum_narrowed",
                            true,
                            name,
                            Some(from),
                            None,
                        );
                    }
                }
                (None, Some(_)) => {
                    push(Side::Upstream, "enum_narrowed", true, name, None, None);
                }
                (Some(_), None) => push(Side::Agent, "enum_widened", true, name, None, None),
                (None, None) => {}
            }
        }
        let req = |s: &Value| -> Vec<String> {
            s.get("required")
                .and_then(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(|x| Some(x.as_str()?.to_owned()))
                .collect()
        };
        let (ra, rb) = (req(&sa), req(&sb));
        for r in rb.iter().filter(|r| !ra.contains(r)) {
            push(
                Side::Upstream,
                "required_upstream_added",
                true,
                r,
                None,
                None,
            );
        }
        for r in ra.iter().filter(|r| !rb.contains(r)) {
            push(
                Side::Upstream,
                "required_upstream_removed",
                false,
                r,
                None,
                None,
            );
        }
    }
    // ---- upstream side: shapes and limits ----
    for s in &old.shapes {
        if !new.shapes.iter().any(|x| x.version == s.version) {
            push(
                Side::Upstream,
                "shape_dropped",
                true,
                &s.version,
                None,
                None,
            );
        }
    }
    for s in &new.shapes {
        if !old.shapes.iter().any(|x| x.version == s.version) {
            push(Side::Upstream, "shape_added", false, &s.version, None, None);
        }
    }
    for ((name, a), (_, b)) in old.limits.by_name().into_iter().zip(new.limits.by_name()) {
        if a != b {
            let (kind, breaking) = if b < a {
                ("limit_lowered", true)
            } else {
                ("limit_raised", false)
            };
            push(
                Side::Upstream,
                kind,
                breaking,
                name,
                Some(a.to_string()),
                Some(b.to_string()),
            );
        }
    }
    let budget = |c: &Contract| c.budget.max_bytes.unwrap_or(u64::MAX);
    let (ba, bb) = (budget(old), budget(new));
    if ba != bb {
        let show = |b: u64| {
            if b == u64::MAX {
                "null".into()
            } else {
                b.to_string()
            }
        };
        let (kind, breaking) = if bb < ba {
            ("output_budget_lowered", true)
        } else {
            ("output_budget_raised", false)
        };
        push(
            Side::Upstream,
            kind,
            breaking,
            "max_output_bytes",
            Some(show(ba)),
            Some(show(bb)),
        );
    }
    // ---- failure codes the agent can see ----
    let (ca, cb) = (failure_codes(old), failure_codes(new));
    if ca != cb {
        push(
            Side::Agent,
            "failure_codes_changed",
            true,
            "codes",
            Some(list(&ca)),
            Some(list(&cb)),
        );
    }
    out.extend(inside);
    out.sort_by_key(|c| c.side == Side::Upstream);
    Ok(out)
}

/// The changes inside one field's subschema (`None`: not described, anything passes), by
/// the crate's one classifier ([`crate::schema::compare`]); `type` and `enum` at the
/// field's own level are reported by name above. A widening reaches the agent, a narrowing
/// refuses what the upstream sent before, and anything not classified is breaking for both.
fn field_changes(name: &str, a: Option<&Value>, b: Option<&Value>) -> Vec<Change> {
    use crate::schema::compare::{compare, Direction};
    if a.is_none() && b.is_none() {
        return Vec::new();
    }
    let t = Value::Bool(true);
    compare("", a.unwrap_or(&t), b.unwrap_or(&t))
        .into_iter()
        .filter(|c| a.is_none() || b.is_none() || (c.pointer != "/type" && c.pointer != "/enum"))
        .map(|c| {
            let (side, kind, breaking) = match c.direction {
                Direction::Widened => (Side::Agent, "schema_widened", true),
                Direction::Narrowed => (Side::Upstream, "schema_narrowed", true),
                Direction::Unclassified => (Side::Agent, "schema_unclassified", true),
                Direction::Text => (Side::Upstream, "annotation_changed", false),
            };
            Change {
                side,
                kind,
                breaking,
                subject: name.to_owned(),
                from: c.from.as_ref().map(Value::to_json),
                to: c.to.as_ref().map(Value::to_json),
                location: Some(if c.pointer.is_empty() {
                    "/".to_owned()
                } else {
                    c.pointer
                }),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn c(version: &str, body: &str) -> Contract {
        Contract::from_slice(
            format!(r#"{{"contract":1,"tool":"t","version":"{version}",{body}}}"#).as_bytes(),
            Path::new("."),
        )
        .unwrap()
    }

    #[test]
    fn each_kind_of_change_is_classified() {
        let old = c(
            "1",
            r#""limits":{"max_bytes":1000},
            "upstream":[{"version":"v1","schema":{"required":["a"],"properties":{"a":{"type":"string"},"s":{"enum":["x","y"]}}}},
                        {"version":"v0","schema":true}],
            "fields":{"a":{"pointer":"/a"},"s":{"pointer":"/s"},"old":{"pointer":"/o"}}"#,
        );
        let new = c(
            "2",
            r#""limits":{"max_bytes":500},
            "upstream":[{"version":"v1","schema":{"required":["a","b"],"properties":{"a":{"type":"integer"},"s":{"enum":["x","z"]}}}}],
            "fields":{"a":{"pointer":"/a"},"s":{"pointer":"/s"},"new":{"pointer":"/o"},"more":{"pointer":"/m","required":false}},
            "checks":[{"check":"equals","field":"a","context":"a"}]"#,
        );
        let got: Vec<(&str, bool)> = diff_contracts(&old, &new)
            .unwrap()
            .iter()
            .map(|c| (c.kind, c.breaking))
            .collect();
        assert_eq!(
            got,
            [
                ("field_renamed", true),
                ("field_added", false),
                ("type_changed", true),
                ("enum_widened", true),
                ("failure_codes_changed", true),
                ("enum_narrowed", true),
                ("required_upstream_added", true),
                ("shape_dropped", true),
                ("limit_lowered", true),
            ]
        );
        assert!(diff_contracts(&old, &old).unwrap().is_empty());
    }

    #[test]
    fn changes_behind_refs_and_every_assertion_keyword_are_classified() {
        let shape = |count: &str, note: &str, state: &str| {
            c(
                "1",
                &format!(
                    r##""upstream":[{{"version":"v1","schema":{{"type":"object",
                      "properties":{{"count":{{"$ref":"#/$defs/Count"}},"note":{note},"state":{{"$ref":"#/$defs/State"}}}},
                      "$defs":{{"Count":{count},"State":{state}}}}}}}],
                    "fields":{{"count":{{"pointer":"/count"}},"note":{{"pointer":"/note"}},"state":{{"pointer":"/state"}}}}"##
                ),
            )
        };
        let base = shape(
            r#"{"type":"integer","maximum":100}"#,
            r#"{"type":"string"}"#,
            r#"{"enum":["open","closed","merged"]}"#,
        );
        let kinds = |new: &Contract| -> Vec<(&'static str, Side, bool, Option<String>)> {
            diff_contracts(&base, new)
                .unwrap()
                .into_iter()
                .map(|c| (c.kind, c.side, c.breaking, c.location))
                .collect()
        };
        let loc = |s: &str| Some(s.to_owned());
        // The type behind a $ref: integer -> string.
        let k = kinds(&shape(
            r#"{"type":"string","maximum":100}"#,
            r#"{"type":"string"}"#,
            r#"{"enum":["open","closed","merged"]}"#,
        ));
        assert_eq!(k, [("type_changed", Side::Agent, true, None)]);
        // A lowered maximum, an added maxLength, pattern, const or not: the upstream's old
        // values are refused now (narrowed) or the change is not classified.
        let k = kinds(&shape(
            r#"{"type":"integer","maximum":10}"#,
            r#"{"type":"string","maxLength":80}"#,
            r#"{"enum":["open","closed"]}"#,
        ));
        assert!(
            k.contains(&("schema_narrowed", Side::Upstream, true, loc("/maximum"))),
            "{k:?}"
        );
        assert!(
            k.contains(&("schema_narrowed", Side::Upstream, true, loc("/maxLength"))),
            "{k:?}"
        );
        assert!(
            k.contains(&("enum_narrowed", Side::Upstream, true, None)),
            "{k:?}"
        );
        let k = kinds(&shape(
            r#"{"type":"integer","maximum":100,"not":{"const":7}}"#,
            r#"{"type":"string","pattern":"^[a-z]+$"}"#,
            r#"{"enum":["open","closed","merged"]}"#,
        ));
        assert!(
            k.iter()
                .any(|c| c.1 == Side::Upstream && c.3 == loc("/pattern") && c.2),
            "{k:?}"
        );
        assert!(k.iter().any(|c| c.3 == loc("/not") && c.2), "{k:?}");
        // A raised maximum reaches the agent.
        let k = kinds(&shape(
            r#"{"type":"integer","maximum":1000}"#,
            r#"{"type":"string"}"#,
            r#"{"enum":["open","closed","merged"]}"#,
        ));
        assert_eq!(k, [("schema_widened", Side::Agent, true, loc("/maximum"))]);
        // An object closed with additionalProperties: false.
        let open = c(
            "1",
            r#""upstream":[{"version":"v1","schema":{"properties":{"m":{"type":"object"}}}}],"fields":{"m":{"pointer":"/m"}}"#,
        );
        let closed = c(
            "1",
            r#""upstream":[{"version":"v1","schema":{"properties":{"m":{"type":"object","additionalProperties":false}}}}],"fields":{"m":{"pointer":"/m"}}"#,
        );
        let k: Vec<_> = diff_contracts(&open, &closed)
            .unwrap()
            .into_iter()
            .map(|c| (c.kind, c.breaking))
            .collect();
        assert_eq!(k, [("schema_narrowed", true)]);
        // A recursive schema stays finite; the same contract has no change.
        let rec = c(
            "1",
            r##""upstream":[{"version":"v1","schema":{"properties":{"t":{"$ref":"#/$defs/T"}},
               "$defs":{"T":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/T"}}}}}}}],
               "fields":{"t":{"pointer":"/t"}}"##,
        );
        assert!(diff_contracts(&rec, &rec).unwrap().is_empty());
    }
}
