//! The change report: what changed between two canonical definitions of one tool, in
//! schema terms. A pure function over two values; it never decides anything itself (the
//! relay refuses every change unless told to warn, and even then never a dangerous one).
//!
//! Arguments (`inputSchema`): a change that lets more arguments through is
//! [`ChangeKind::InputWidened`] — a raised `maximum`/`maxLength`/`maxItems`/…, a lowered
//! `minimum`/`minLength`/…, a removed `required` name, an added `enum` value, a removed
//! `pattern`/`format`/`const`/`multipleOf`, a widened `type`, `additionalProperties` (or
//! `unevaluatedProperties`, `items`, `propertyNames`) opened or removed, a property allowed
//! that `additionalProperties: false` refused. The opposite is
//! [`ChangeKind::InputNarrowed`]. Results (`outputSchema`): the same rules give
//! [`ChangeKind::OutputWidened`] (the tool promises less about its results: more reaches
//! the agent) and [`ChangeKind::OutputNarrowed`]. Titles, descriptions, schema annotations
//! (`description`, `examples`, `default`, …) are [`ChangeKind::Text`]; the tool's
//! `annotations` are [`ChangeKind::Annotation`]. Anything this module does not understand
//! — `$ref`, `oneOf`, `not`, `if`, a changed `pattern`, reordered `enum` values, an
//! unknown keyword, a new member of the tool — is [`ChangeKind::Unclassified`], which is
//! dangerous like a widening: it is never taken for safe.

use std::collections::BTreeSet;

use crate::json::{ObjectWriter, Value};
use crate::pointer::push_name;
use crate::schema::compare::{self, Direction};

/// What kind of change one [`ToolChange`] is.
///
/// # Example
/// ```
/// use jsongate::mcp::pin::{diff::{diff_tools, ChangeKind}, Definition};
/// let d = |s: &str| Definition::from_slice(s.as_bytes(), jsongate::Limits::new()).unwrap();
/// let old = d(r#"{"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":100}}}}"#);
/// let new = d(r#"{"name":"t","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":50}}}}"#);
/// let kinds: Vec<ChangeKind> = diff_tools(old.value(), new.value()).iter().map(|c| c.kind).collect();
/// assert_eq!(kinds, [ChangeKind::InputNarrowed]);
/// assert!(!kinds[0].dangerous());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// A tool that is not pinned.
    ToolAdded,
    /// A pinned tool no longer listed.
    ToolRemoved,
    /// The `inputSchema` accepts more arguments.
    InputWidened,
    /// The `inputSchema` accepts fewer arguments.
    InputNarrowed,
    /// The `outputSchema` accepts more results (the tool promises less).
    OutputWidened,
    /// The `outputSchema` accepts fewer results (the tool promises more).
    OutputNarrowed,
    /// A title, description or schema annotation changed.
    Text,
    /// A member of the tool's `annotations` changed (hints only: they decide nothing).
    Annotation,
    /// A change not classified above.
    Unclassified,
}

impl ChangeKind {
    /// The kind's name in reports: `tool_added`, `input_widened`, `unclassified`, ….
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::pin::diff::ChangeKind;
    /// assert_eq!(ChangeKind::InputWidened.as_str(), "input_widened");
    /// assert_eq!(ChangeKind::Text.as_str(), "text_changed");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::ToolAdded => "tool_added",
            ChangeKind::ToolRemoved => "tool_removed",
            ChangeKind::InputWidened => "input_widened",
            ChangeKind::InputNarrowed => "input_narrowed",
            ChangeKind::OutputWidened => "output_widened",
            ChangeKind::OutputNarrowed => "output_narrowed",
            ChangeKind::Text => "text_changed",
            ChangeKind::Annotation => "annotation_changed",
            ChangeKind::Unclassified => "unclassified",
        }
    }

    /// Whether the change may let more through than was approved: an added tool, a widened
    /// input, a weakened output promise, or anything unclassified.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::pin::diff::ChangeKind;
    /// assert!(ChangeKind::ToolAdded.dangerous() && ChangeKind::OutputWidened.dangerous());
    /// assert!(!ChangeKind::OutputNarrowed.dangerous()); // the tool promises more: nothing widens
    /// assert!(!ChangeKind::Annotation.dangerous());
    /// ```
    pub fn dangerous(self) -> bool {
        matches!(
            self,
            ChangeKind::ToolAdded
                | ChangeKind::InputWidened
                | ChangeKind::OutputWidened
                | ChangeKind::Unclassified
        )
    }
}

/// One change between two definitions of a tool.
///
/// # Example
/// ```
/// use jsongate::mcp::pin::{diff::{diff_tools, ChangeKind, ToolChange}, Definition};
/// use jsongate::json::Value;
/// let d = |s: &str| Definition::from_slice(s.as_bytes(), jsongate::Limits::new()).unwrap();
/// let old = d(r#"{"name":"t","inputSchema":{"maximum":10}}"#);
/// let new = d(r#"{"name":"t","inputSchema":{"maximum":99}}"#);
/// assert_eq!(diff_tools(old.value(), new.value()), [ToolChange::new(ChangeKind::InputWidened,
///     "/inputSchema/maximum", Some("maximum"), Some(Value::Number("10".into())), Some(Value::Number("99".into())))]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolChange {
    /// Its kind.
    pub kind: ChangeKind,
    /// JSON Pointer in the definition (`/inputSchema/properties/n/maximum`).
    pub pointer: String,
    /// The schema keyword, when one is responsible.
    pub keyword: Option<String>,
    /// The pinned value, when there is one to show.
    pub from: Option<Value>,
    /// The listed value, when there is one to show.
    pub to: Option<Value>,
}

impl ToolChange {
    /// A change.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::pin::diff::{ChangeKind, ToolChange};
    /// let c = ToolChange::new(ChangeKind::ToolRemoved, "", None, None, None);
    /// assert_eq!((c.kind, c.pointer.as_str(), c.keyword), (ChangeKind::ToolRemoved, "", None));
    /// ```
    pub fn new(
        kind: ChangeKind,
        pointer: &str,
        keyword: Option<&str>,
        from: Option<Value>,
        to: Option<Value>,
    ) -> ToolChange {
        ToolChange {
            kind,
            pointer: pointer.to_owned(),
            keyword: keyword.map(str::to_owned),
            from,
            to,
        }
    }

    /// Appends the change as a JSON object: `kind`, `dangerous`, `pointer`, `keyword`, and
    /// `from`/`to` when `values` says so and they are numbers, booleans or null (the audit
    /// never repeats a server's strings), or always (`values_in_full`, for `pin diff`).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::pin::diff::{ChangeKind, ToolChange};
    /// use jsongate::json::Value;
    /// let c = ToolChange::new(ChangeKind::Text, "/description", None,
    ///     Some(Value::String("Reads a file".into())), Some(Value::String("Reads any file".into())));
    /// let (mut audit, mut full) = (String::new(), String::new());
    /// c.write_json(&mut audit, false); // the audit never repeats a server's strings
    /// c.write_json(&mut full, true);
    /// assert_eq!(audit, r#"{"kind":"text_changed","dangerous":false,"pointer":"/description","keyword":null}"#);
    /// assert!(full.ends_with(r#""from":"Reads a file","to":"Reads any file"}"#));
    /// ```
    pub fn write_json(&self, out: &mut String, values_in_full: bool) {
        let mut o = ObjectWriter::new(out);
        o.str("kind", self.kind.as_str())
            .bool("dangerous", self.kind.dangerous())
            .str("pointer", &self.pointer)
            .opt_str("keyword", self.keyword.as_deref());
        for (name, v) in [("from", &self.from), ("to", &self.to)] {
            let shown = v.as_ref().filter(|v| {
                values_in_full || matches!(v, Value::Number(_) | Value::Bool(_) | Value::Null)
            });
            if let Some(v) = shown {
                o.value(name, v);
            }
        }
        o.finish();
    }
}

/// Which schema of the tool a comparison is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Input,
    Output,
}

impl Side {
    fn widened(self) -> ChangeKind {
        match self {
            Side::Input => ChangeKind::InputWidened,
            Side::Output => ChangeKind::OutputWidened,
        }
    }
    fn narrowed(self) -> ChangeKind {
        match self {
            Side::Input => ChangeKind::InputNarrowed,
            Side::Output => ChangeKind::OutputNarrowed,
        }
    }
}

/// The changes from `old` to `new`, two canonical definitions of one tool (see the
/// [module documentation](self)). Definitions that differ always give at least one change.
///
/// # Example
/// ```
/// use jsongate::mcp::pin::{diff::{diff_tools, ChangeKind}, Definition};
/// use jsongate::Limits;
/// let d = |s: &str| Definition::from_slice(s.as_bytes(), Limits::new()).unwrap();
/// let old = d(r#"{"name":"t","inputSchema":{"properties":{"n":{"type":"integer","maximum":10}},"required":["n"]}}"#);
/// let new = d(r#"{"name":"t","inputSchema":{"properties":{"n":{"type":"integer","maximum":1000}}}}"#);
/// let c = diff_tools(old.value(), new.value());
/// assert_eq!(c.len(), 2);
/// // A schema's own keywords first, then the schemas nested in it.
/// assert_eq!((c[0].kind, c[0].pointer.as_str()), (ChangeKind::InputWidened, "/inputSchema/required"));
/// assert_eq!((c[1].kind, c[1].pointer.as_str()), (ChangeKind::InputWidened, "/inputSchema/properties/n/maximum"));
/// assert!(c.iter().all(|c| c.kind.dangerous()));
/// ```
pub fn diff_tools(old: &Value, new: &Value) -> Vec<ToolChange> {
    let mut out = Vec::new();
    let empty: &[(String, Value)] = &[];
    let (a, b) = (
        old.as_object().unwrap_or(empty),
        new.as_object().unwrap_or(empty),
    );
    let mut work: Vec<(String, Value, Value, Side)> = Vec::new();
    let (get, names) = (compare::get, compare::names);
    for key in names(a, b) {
        let (x, y) = (get(a, key), get(b, key));
        if x == y {
            continue;
        }
        let mut p = String::new();
        push_name(&mut p, key);
        match key {
            "inputSchema" | "outputSchema" => {
                let side = if key == "inputSchema" {
                    Side::Input
                } else {
                    Side::Output
                };
                let t = Value::Bool(true);
                work.push((
                    p,
                    x.cloned().unwrap_or(t.clone()),
                    y.cloned().unwrap_or(t),
                    side,
                ));
            }
            "annotations" => match (x.and_then(Value::as_object), y.and_then(Value::as_object)) {
                (Some(xa), Some(ya)) => {
                    for k in names(xa, ya) {
                        let (u, v) = (get(xa, k), get(ya, k));
                        if u != v {
                            let mut q = p.clone();
                            push_name(&mut q, k);
                            out.push(ToolChange::new(
                                ChangeKind::Annotation,
                                &q,
                                None,
                                u.cloned(),
                                v.cloned(),
                            ));
                        }
                    }
                }
                _ => out.push(ToolChange::new(
                    ChangeKind::Annotation,
                    &p,
                    None,
                    x.cloned(),
                    y.cloned(),
                )),
            },
            "title" | "description" => out.push(ToolChange::new(
                ChangeKind::Text,
                &p,
                None,
                x.cloned(),
                y.cloned(),
            )),
            _ => out.push(ToolChange::new(
                ChangeKind::Unclassified,
                &p,
                None,
                x.cloned(),
                y.cloned(),
            )),
        }
    }
    // Schemas, after the tool's other members, with the crate's one classifier.
    for (p, x, y, side) in work {
        out.extend(compare::compare(&p, &x, &y).into_iter().map(|c| {
            let kind = match c.direction {
                Direction::Widened => side.widened(),
                Direction::Narrowed => side.narrowed(),
                Direction::Text => ChangeKind::Text,
                Direction::Unclassified => ChangeKind::Unclassified,
            };
            ToolChange {
                kind,
                pointer: c.pointer,
                keyword: c.keyword,
                from: c.from,
                to: c.to,
            }
        }));
    }
    if out.is_empty() && old != new {
        out.push(ToolChange::new(
            ChangeKind::Unclassified,
            "",
            None,
            None,
            None,
        ));
    }
    out
}

/// The changes from one lockfile to another, tool by tool (by name): tools only in `new`
/// are [`ChangeKind::ToolAdded`], tools only in `old` [`ChangeKind::ToolRemoved`], and
/// tools in both with another hash are [`diff_tools`]'s report.
///
/// # Example
/// ```
/// use jsongate::mcp::pin::{diff::{diff_locks, ChangeKind}, Definition, Lock};
/// let d = |s: &str| Definition::from_slice(s.as_bytes(), jsongate::Limits::new()).unwrap();
/// let (mut old, mut new) = (Lock::new(None), Lock::new(None));
/// old.insert(d(r#"{"name":"a","description":"x"}"#)).unwrap();
/// new.insert(d(r#"{"name":"a","description":"y"}"#)).unwrap();
/// new.insert(d(r#"{"name":"delete_all"}"#)).unwrap();
/// let c = diff_locks(&old, &new);
/// assert_eq!((c[0].0.as_str(), c[0].1.kind), ("a", ChangeKind::Text));
/// assert_eq!((c[1].0.as_str(), c[1].1.kind), ("delete_all", ChangeKind::ToolAdded));
/// ```
pub fn diff_locks(old: &super::Lock, new: &super::Lock) -> Vec<(String, ToolChange)> {
    let mut names: BTreeSet<&str> = old.tools().map(super::Definition::name).collect();
    names.extend(new.tools().map(super::Definition::name));
    let mut out = Vec::new();
    for n in names {
        match (old.get(n), new.get(n)) {
            (Some(a), Some(b)) if a.sha256() != b.sha256() => {
                out.extend(
                    diff_tools(a.value(), b.value())
                        .into_iter()
                        .map(|c| (n.to_owned(), c)),
                );
            }
            (None, Some(b)) => out.push((
                n.to_owned(),
                ToolChange::new(
                    ChangeKind::ToolAdded,
                    "",
                    None,
                    None,
                    Some(b.value().clone()),
                ),
            )),
            (Some(a), None) => out.push((
                n.to_owned(),
                ToolChange::new(
                    ChangeKind::ToolRemoved,
                    "",
                    None,
                    Some(a.value().clone()),
                    None,
                ),
            )),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::pin::Definition;
    use crate::Limits;

    fn kinds(old: &str, new: &str) -> Vec<(ChangeKind, String)> {
        let d = |s: &str| {
            Definition::from_slice(format!(r#"{{"name":"t",{s}}}"#).as_bytes(), Limits::new())
                .unwrap()
        };
        diff_tools(d(old).value(), d(new).value())
            .into_iter()
            .map(|c| (c.kind, c.pointer))
            .collect()
    }

    fn one(old: &str, new: &str) -> (ChangeKind, String) {
        let k = kinds(old, new);
        assert_eq!(k.len(), 1, "{old} -> {new}: {k:?}");
        k.into_iter().next().unwrap()
    }

    fn input(s: &str) -> String {
        format!(r#""inputSchema":{s}"#)
    }

    use ChangeKind::{
        Annotation, InputNarrowed, InputWidened, OutputNarrowed, OutputWidened, Text, Unclassified,
    };

    #[test]
    fn bounds_widen_when_they_open_and_narrow_when_they_close() {
        for (old, new, kind, at) in [
            (
                r#"{"maximum":10}"#,
                r#"{"maximum":1000}"#,
                InputWidened,
                "/maximum",
            ),
            (
                r#"{"maximum":10}"#,
                r#"{"maximum":5}"#,
                InputNarrowed,
                "/maximum",
            ),
            (r#"{"maximum":10}"#, "{}", InputWidened, ""),
            (
                r#"{"maximum":10,"type":"integer"}"#,
                r#"{"type":"integer"}"#,
                InputWidened,
                "/maximum",
            ),
            (
                r#"{"type":"integer"}"#,
                r#"{"maximum":10,"type":"integer"}"#,
                InputNarrowed,
                "/maximum",
            ),
            (
                r#"{"minimum":1,"type":"integer"}"#,
                r#"{"minimum":0,"type":"integer"}"#,
                InputWidened,
                "/minimum",
            ),
            (
                r#"{"maxLength":8,"type":"string"}"#,
                r#"{"maxLength":9,"type":"string"}"#,
                InputWidened,
                "/maxLength",
            ),
            (
                r#"{"minLength":8,"type":"string"}"#,
                r#"{"minLength":9,"type":"string"}"#,
                InputNarrowed,
                "/minLength",
            ),
            (
                r#"{"maxItems":2,"type":"array"}"#,
                r#"{"maxItems":3,"type":"array"}"#,
                InputWidened,
                "/maxItems",
            ),
            (
                r#"{"exclusiveMaximum":1e1,"type":"number"}"#,
                r#"{"exclusiveMaximum":10.5,"type":"number"}"#,
                InputWidened,
                "/exclusiveMaximum",
            ),
            (
                r#"{"maximum":"10","type":"number"}"#,
                r#"{"maximum":11,"type":"number"}"#,
                Unclassified,
                "/maximum",
            ),
        ] {
            let (k, p) = one(&input(old), &input(new));
            assert_eq!(
                (k, p.as_str()),
                (kind, format!("/inputSchema{at}").as_str()),
                "{old} -> {new}"
            );
        }
        // The same bound written another way is no change at all.
        assert!(kinds(&input(r#"{"maximum":10}"#), &input(r#"{"maximum":1.0e1}"#)).is_empty());
    }

    #[test]
    fn required_enum_type_and_restricting_keywords() {
        let props = r#""properties":{"path":{"type":"string"}}"#;
        for (old, new, kind) in [
            (
                format!(r#"{{{props},"required":["path"]}}"#),
                format!("{{{props}}}"),
                InputWidened,
            ),
            (
                format!("{{{props}}}"),
                format!(r#"{{{props},"required":["path"]}}"#),
                InputNarrowed,
            ),
            (
                r#"{"enum":["a"]}"#.into(),
                r#"{"enum":["a","b"]}"#.into(),
                InputWidened,
            ),
            (
                r#"{"enum":["a","b"]}"#.into(),
                r#"{"enum":["a"]}"#.into(),
                InputNarrowed,
            ),
            (
                r#"{"enum":["a"],"type":"string"}"#.into(),
                r#"{"type":"string"}"#.into(),
                InputWidened,
            ),
            (
                r#"{"type":"integer"}"#.into(),
                r#"{"type":"number"}"#.into(),
                InputWidened,
            ),
            (
                r#"{"type":"number"}"#.into(),
                r#"{"type":"integer"}"#.into(),
                InputNarrowed,
            ),
            (
                r#"{"type":"string"}"#.into(),
                r#"{"type":["string","null"]}"#.into(),
                InputWidened,
            ),
            (
                r#"{"pattern":"^a$","type":"string"}"#.into(),
                r#"{"type":"string"}"#.into(),
                InputWidened,
            ),
            (
                r#"{"format":"uri","type":"string"}"#.into(),
                r#"{"type":"string"}"#.into(),
                InputWidened,
            ),
            (
                r#"{"type":"string"}"#.into(),
                r#"{"format":"uri","type":"string"}"#.into(),
                InputNarrowed,
            ),
            (
                r#"{"pattern":"^a$"}"#.into(),
                r#"{"pattern":"^b$"}"#.into(),
                Unclassified,
            ),
            (
                r#"{"enum":["a","b"]}"#.into(),
                r#"{"enum":["b","a"]}"#.into(),
                Unclassified,
            ),
            (
                r#"{"uniqueItems":true,"type":"array"}"#.into(),
                r#"{"type":"array"}"#.into(),
                InputWidened,
            ),
        ] {
            let (k, _) = one(&input(&old), &input(&new));
            assert_eq!(k, kind, "{old} -> {new}");
        }
        // A type changed to another is both.
        assert_eq!(
            kinds(
                &input(r#"{"type":"string"}"#),
                &input(r#"{"type":"array"}"#)
            ),
            [
                (InputWidened, "/inputSchema/type".to_owned()),
                (InputNarrowed, "/inputSchema/type".to_owned())
            ]
        );
    }

    #[test]
    fn additional_properties_and_declared_properties() {
        let closed = r#"{"additionalProperties":false,"properties":{"a":{}}}"#;
        for (old, new, kind, at) in [
            (
                closed,
                r#"{"properties":{"a":{}}}"#,
                InputWidened,
                "/additionalProperties",
            ),
            (
                closed,
                r#"{"additionalProperties":true,"properties":{"a":{}}}"#,
                InputWidened,
                "/additionalProperties",
            ),
            (
                closed,
                r#"{"additionalProperties":{"type":"string"},"properties":{"a":{}}}"#,
                InputWidened,
                "/additionalProperties",
            ),
            (
                r#"{"properties":{"a":{}}}"#,
                closed,
                InputNarrowed,
                "/additionalProperties",
            ),
            (
                closed,
                r#"{"additionalProperties":false,"properties":{"a":{},"b":{}}}"#,
                InputWidened,
                "/properties/b",
            ),
            (
                r#"{"properties":{"a":{}}}"#,
                r#"{"properties":{"a":{},"b":{"type":"string"}}}"#,
                InputNarrowed,
                "/properties/b",
            ),
            (
                r#"{"properties":{"a":{"type":"string"}}}"#,
                r#"{"properties":{}}"#,
                InputWidened,
                "/properties/a",
            ),
            (
                r#"{"properties":{"a":{"type":"string"}}}"#,
                r#"{"properties":{"a":{"type":"string","maxLength":3}}}"#,
                InputNarrowed,
                "/properties/a/maxLength",
            ),
            (
                r#"{"items":{"type":"string"}}"#,
                r#"{"items":{}}"#,
                InputWidened,
                "/items",
            ),
        ] {
            let (k, p) = one(&input(old), &input(new));
            assert_eq!(
                (k, p.as_str()),
                (kind, format!("/inputSchema{at}").as_str()),
                "{old} -> {new}"
            );
        }
    }

    #[test]
    fn outputs_text_annotations_and_the_unknown() {
        let out = |s: &str| format!(r#""outputSchema":{s}"#);
        assert_eq!(
            one(&out(r#"{"required":["ok"]}"#), &out("{}")),
            (OutputWidened, "/outputSchema".to_owned())
        );
        assert_eq!(
            one(
                &out(r#"{"properties":{"n":{"maximum":3}}}"#),
                &out(r#"{"properties":{"n":{"maximum":2}}}"#)
            ),
            (
                OutputNarrowed,
                "/outputSchema/properties/n/maximum".to_owned()
            )
        );
        // No outputSchema promises nothing: declaring one narrows, dropping it widens.
        assert_eq!(
            one(
                "\"x\":1",
                &format!("\"x\":1,{}", out(r#"{"type":"object"}"#))
            )
            .0,
            OutputNarrowed
        );
        assert_eq!(
            one(r#""description":"a""#, r#""description":"b""#),
            (Text, "/description".into())
        );
        assert_eq!(
            one(r#""title":"a""#, r#""title":"b""#),
            (Text, "/title".into())
        );
        assert_eq!(
            one(
                r#""annotations":{"readOnlyHint":false}"#,
                r#""annotations":{"readOnlyHint":true}"#
            ),
            (Annotation, "/annotations/readOnlyHint".into())
        );
        assert_eq!(
            one(
                &input(r#"{"description":"a"}"#),
                &input(r#"{"description":"b"}"#)
            ),
            (Text, "/inputSchema/description".into())
        );
        for (old, new) in [
            (r##"{"$ref":"#/$defs/a"}"##, r##"{"$ref":"#/$defs/b"}"##),
            (r#"{"oneOf":[{}]}"#, r#"{"oneOf":[{},{}]}"#),
            (
                r#"{"not":{"type":"string"}}"#,
                r#"{"not":{"type":"number"}}"#,
            ),
            (r#"{"x-vendor":1}"#, r#"{"x-vendor":2}"#),
            (r#"{"anyOf":[{}]}"#, r#"{"anyOf":[{},{}]}"#),
            ("[]", r#"{"type":"string"}"#),
        ] {
            assert_eq!(
                one(&input(old), &input(new)).0,
                Unclassified,
                "{old} -> {new}"
            );
        }
        assert_eq!(one(r#""icons":[]"#, r#""icons":[{}]"#).0, Unclassified);
        assert!(Unclassified.dangerous() && InputWidened.dangerous() && OutputWidened.dangerous());
        assert!(!Text.dangerous() && !InputNarrowed.dangerous() && !OutputNarrowed.dangerous());
    }

    #[test]
    fn nested_schemas_are_followed_through_applicators_and_defs() {
        assert_eq!(
            kinds(
                &input(
                    r#"{"allOf":[{"maximum":1}],"$defs":{"d":{"maxLength":1}},"properties":{"a":{"items":{"maximum":1}}}}"#
                ),
                &input(
                    r#"{"allOf":[{"maximum":2}],"$defs":{"d":{"maxLength":2}},"properties":{"a":{"items":{"maximum":2}}}}"#
                ),
            ),
            [
                (InputWidened, "/inputSchema/$defs/d/maxLength".to_owned()),
                (InputWidened, "/inputSchema/allOf/0/maximum".to_owned()),
                (
                    InputWidened,
                    "/inputSchema/properties/a/items/maximum".to_owned()
                ),
            ]
        );
    }
}
