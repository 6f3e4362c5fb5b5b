//! Compilation: schema documents in, an immutable [`Program`] out.
//!
//! Two passes per document. Indexing walks the known subschema keywords of every draft and
//! records each schema resource (`$id`), anchor (`$anchor`, `$dynamicAnchor`, draft-07
//! `#name` ids), the base URI, draft and vocabularies in force at every subschema location.
//! Compiling then turns locations into nodes from a work list (never recursion over `$ref`
//! chains), resolving each reference to a node index; documents that are referenced but not
//! yet loaded are fetched from the registry (caller resources and embedded meta-schemas only).

use std::collections::HashMap;
use std::sync::Arc;

use super::decimal::Decimal;
use super::program::{
    types, Child, Const, DynRef, Dynamic, Keywords, Node, NodeId, NodeKind, Program, Resource,
};
use super::regex::Regex;
use super::registry::{known_draft, vocab_of, Draft, Registry, Vocab};
use super::uri::{percent_decode, pointer_tokens, Uri};
use super::value::Value;

/// Why a schema could not be compiled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    message: String,
    location: String,
}

impl CompileError {
    pub(crate) fn new(message: impl Into<String>, location: impl Into<String>) -> Self {
        CompileError {
            message: message.into(),
            location: location.into(),
        }
    }
    /// What is wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Where: the absolute location (`base URI#pointer`) of the offending subschema.
    pub fn location(&self) -> &str {
        &self.location
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at {}", self.message, self.location)
    }
}

impl std::error::Error for CompileError {}

/// What the compiler needs to know besides the schema.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) default_draft: Draft,
    pub(crate) format_assertion: bool,
    pub(crate) max_nodes: usize,
    pub(crate) registry: Registry,
    pub(crate) base_uri: String,
}

/// Facts about one subschema location, found while indexing.
#[derive(Clone, Debug)]
struct LocInfo {
    base: Uri,
    draft: Draft,
    vocab: Vocab,
    resource: u32,
}

struct Doc {
    value: Arc<Value>,
}

type Loc = (usize, String);

pub(crate) struct Compiler {
    settings: Settings,
    docs: Vec<Doc>,
    /// Resource URI → its location.
    resources_by_uri: HashMap<String, Loc>,
    resources: Vec<Resource>,
    /// `uri#anchor` → location.
    anchors: HashMap<String, Loc>,
    /// Locations that declare a `$dynamicAnchor`, with its name.
    dynamic_anchor_at: HashMap<Loc, String>,
    info: HashMap<Loc, LocInfo>,
    located: HashMap<Loc, NodeId>,
    queue: Vec<(NodeId, Loc)>,
    nodes: Vec<Node>,
    uses_dynamic_scope: bool,
    uses_unevaluated: bool,
    labels: Vec<Box<str>>,
    label_ids: HashMap<String, u32>,
}

/// Keywords whose value is one subschema.
const SINGLE: &[&str] = &[
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
];
/// Keywords whose value is an array of subschemas.
const ARRAYS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is an object of subschemas.
const MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

fn escape_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn value_at<'v>(root: &'v Value, pointer: &str) -> Option<&'v Value> {
    let mut v = root;
    for t in pointer_tokens(pointer)? {
        v = v.child(&t)?;
    }
    Some(v)
}

impl Compiler {
    pub(crate) fn new(settings: Settings) -> Self {
        Compiler {
            settings,
            docs: Vec::new(),
            resources_by_uri: HashMap::new(),
            resources: Vec::new(),
            anchors: HashMap::new(),
            dynamic_anchor_at: HashMap::new(),
            info: HashMap::new(),
            located: HashMap::new(),
            queue: Vec::new(),
            nodes: Vec::new(),
            uses_dynamic_scope: false,
            uses_unevaluated: false,
            labels: Vec::new(),
            label_ids: HashMap::new(),
        }
    }

    fn label(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.label_ids.get(s) {
            return i;
        }
        let i = self.labels.len() as u32;
        self.labels.push(s.into());
        self.label_ids.insert(s.to_string(), i);
        i
    }

    /// Compiles `root` into a program.
    pub(crate) fn compile(mut self, root: Value) -> Result<Program, CompileError> {
        let base = Uri::parse(&self.settings.base_uri);
        let draft = self.settings.default_draft;
        let doc = self.add_doc(&Arc::new(root), &base, draft)?;
        let root = self.node_for((doc, String::new()));
        loop {
            // Every `$dynamicAnchor` may become a target at run time, referenced or not.
            let anchors: Vec<Loc> = self
                .dynamic_anchor_at
                .keys()
                .filter(|l| !self.located.contains_key(*l))
                .cloned()
                .collect();
            for loc in anchors {
                self.node_for(loc);
            }
            let Some((id, loc)) = self.queue.pop() else {
                break;
            };
            self.compile_node(id, &loc)?;
        }
        for r in &mut self.resources {
            if let Some(loc) = self.resources_by_uri.get(&*r.uri) {
                r.root = self.located.get(loc).copied();
            }
        }
        let mut dynamic_anchors = HashMap::new();
        for (loc, name) in &self.dynamic_anchor_at {
            if let (Some(&node), Some(info)) = (self.located.get(loc), self.info.get(loc)) {
                dynamic_anchors.insert((info.resource, name.clone().into_boxed_str()), node);
            }
        }
        check_in_place_cycles(&self.nodes, &dynamic_anchors, &self.resources)?;
        if !self.uses_dynamic_scope {
            self.bypass_sole_refs();
        }
        Ok(Program {
            nodes: self.nodes,
            labels: self.labels,
            root,
            resources: self.resources,
            dynamic_anchors,
            uses_dynamic_scope: self.uses_dynamic_scope,
            uses_unevaluated: self.uses_unevaluated,
        })
    }

    /// Points edges into a node that is only a `$ref` straight at the reference's target,
    /// with the two keyword paths joined (`items` + `$ref` = `items/$ref`), so the runtime
    /// evaluates one subschema instead of two and error locations read the same.
    ///
    /// Only without a dynamic scope: a skipped node could otherwise be the one entering a
    /// new resource. Targets that are `true`/`false` stay behind their `$ref` (a `false`
    /// reports the keyword of the edge that reached it). The root keeps its own node.
    fn bypass_sole_refs(&mut self) {
        let redirect: Vec<Option<(NodeId, u32)>> = self
            .nodes
            .iter()
            .map(|n| match &n.kind {
                NodeKind::Keywords(k) => k.sole_ref().and_then(|c| {
                    let target = &self.nodes[c.node as usize].kind;
                    (!matches!(target, NodeKind::Bool(_))).then_some((c.node, c.label))
                }),
                _ => None,
            })
            .collect();
        let mut nodes = std::mem::take(&mut self.nodes);
        for n in &mut nodes {
            let NodeKind::Keywords(k) = &mut n.kind else {
                continue;
            };
            for c in k.children_mut() {
                // Chains of references end: in-place cycles were refused above. The bound
                // is only a guard.
                let mut hops = 0;
                while let Some((target, label)) = redirect[c.node as usize] {
                    if hops == redirect.len() {
                        break;
                    }
                    hops += 1;
                    let joined = format!(
                        "{}/{}",
                        self.labels[c.label as usize], self.labels[label as usize]
                    );
                    c.label = self.label(&joined);
                    c.node = target;
                    c.skipped += 1;
                }
            }
        }
        self.nodes = nodes;
    }

    fn location_text(&self, loc: &Loc) -> String {
        match self.info.get(loc) {
            Some(i) => format!("{}#{}", i.base.base(), loc.1),
            None => format!("#{}", loc.1),
        }
    }

    /// Draft and vocabularies named by a `$schema` URI.
    fn dialect(&mut self, uri: &str, at: &str) -> Result<(Draft, Vocab), CompileError> {
        if let Some(d) = known_draft(uri) {
            return Ok((d, Vocab::ALL));
        }
        let resolved = Uri::parse(uri).base();
        let Some(meta) = self.settings.registry.get(&resolved) else {
            return Err(CompileError::new(
                format!("unknown meta-schema '{uri}' in $schema"),
                at,
            ));
        };
        let draft = match meta.get("$schema").and_then(Value::as_str) {
            Some(s) if normalize_eq(s, uri) => self.settings.default_draft,
            Some(s) => known_draft(s).unwrap_or(self.settings.default_draft),
            None => self.settings.default_draft,
        };
        let vocab = vocab_of(&meta)
            .map_err(|m| CompileError::new(m, at))?
            .unwrap_or(Vocab::ALL);
        Ok((draft, vocab))
    }

    /// Registers a document and indexes its resources and anchors.
    fn add_doc(
        &mut self,
        value: &Arc<Value>,
        base: &Uri,
        draft: Draft,
    ) -> Result<usize, CompileError> {
        let doc = self.docs.len();
        self.docs.push(Doc {
            value: value.clone(),
        });
        let res = self.new_resource(base.base(), (doc, String::new()));
        let vocab = Vocab::ALL;
        let mut stack: Vec<(String, LocInfo, bool)> = vec![(
            String::new(),
            LocInfo {
                base: base.clone(),
                draft,
                vocab,
                resource: res,
            },
            true,
        )];
        while let Some((ptr, mut info, doc_root)) = stack.pop() {
            let Some(v) = value_at(value, &ptr) else {
                continue;
            };
            let loc = (doc, ptr.clone());
            let Value::Object(_) = v else {
                self.info.insert(loc, info);
                continue;
            };
            let at = format!("{}#{}", info.base.base(), ptr);
            let has_ref = v.get("$ref").is_some();
            // Identify the resource this location starts, if any.
            let id = v.get("$id").and_then(Value::as_str);
            let mut new_base = None;
            let mut legacy_anchor = None;
            if let Some(id) = id {
                let draft_here = match v.get("$schema").and_then(Value::as_str) {
                    Some(s) => known_draft(s).unwrap_or(info.draft),
                    None => info.draft,
                };
                if draft_here == Draft::Draft7 {
                    if !has_ref {
                        if let Some(name) = id.strip_prefix('#') {
                            legacy_anchor = Some(name.to_string());
                        } else {
                            let u = info.base.resolve(id);
                            if let Some(f) = u.fragment.as_deref().filter(|f| !f.is_empty()) {
                                legacy_anchor = Some(f.to_string());
                            }
                            new_base = Some(u);
                        }
                    }
                } else {
                    let u = info.base.resolve(id);
                    if u.fragment.as_deref().is_some_and(|f| !f.is_empty()) {
                        return Err(CompileError::new(
                            format!("$id '{id}' must not contain a fragment"),
                            at,
                        ));
                    }
                    new_base = Some(u);
                }
            }
            if let Some(u) = new_base {
                let mut u = u;
                u.fragment = None;
                info.base = u;
                if !(doc_root && info.base.base() == base.base()) {
                    info.resource = self.new_resource(info.base.base(), loc.clone());
                }
            }
            if let Some(s) = v.get("$schema").and_then(Value::as_str) {
                if doc_root || id.is_some() {
                    let (d, vc) = self.dialect(s, &at)?;
                    info.draft = d;
                    info.vocab = vc;
                }
            }
            if let Some(name) = legacy_anchor {
                self.anchors
                    .insert(format!("{}#{}", info.base.base(), name), loc.clone());
            }
            if info.draft != Draft::Draft7 {
                if let Some(a) = v.get("$anchor").and_then(Value::as_str) {
                    self.anchors
                        .insert(format!("{}#{}", info.base.base(), a), loc.clone());
                }
            }
            if info.draft == Draft::Draft202012 {
                if let Some(a) = v.get("$dynamicAnchor").and_then(Value::as_str) {
                    self.anchors
                        .entry(format!("{}#{}", info.base.base(), a))
                        .or_insert_with(|| loc.clone());
                    self.dynamic_anchor_at.insert(loc.clone(), a.to_string());
                }
            }
            if info.draft == Draft::Draft201909
                && v.get("$recursiveAnchor") == Some(&Value::Bool(true))
            {
                if let Some(r) = self.resources.get_mut(info.resource as usize) {
                    r.recursive_anchor = true;
                }
            }
            self.info.insert(loc, info.clone());
            // Children, in known keywords only.
            let push = |stack: &mut Vec<(String, LocInfo, bool)>, p: String| {
                stack.push((p, info.clone(), false));
            };
            for &k in SINGLE {
                if v.get(k).is_some() {
                    push(&mut stack, format!("{ptr}/{k}"));
                }
            }
            match v.get("items") {
                Some(Value::Array(a)) => {
                    for i in 0..a.len() {
                        push(&mut stack, format!("{ptr}/items/{i}"));
                    }
                }
                Some(_) => push(&mut stack, format!("{ptr}/items")),
                None => {}
            }
            for &k in ARRAYS {
                if let Some(a) = v.get(k).and_then(Value::as_array) {
                    for i in 0..a.len() {
                        push(&mut stack, format!("{ptr}/{k}/{i}"));
                    }
                }
            }
            for &k in MAPS {
                if let Some(m) = v.get(k).and_then(Value::as_object) {
                    for (name, sub) in m {
                        if matches!(sub, Value::Object(_) | Value::Bool(_)) {
                            push(&mut stack, format!("{ptr}/{k}/{}", escape_token(name)));
                        }
                    }
                }
            }
        }
        Ok(doc)
    }

    fn new_resource(&mut self, uri: String, loc: Loc) -> u32 {
        let i = self.resources.len() as u32;
        self.resources_by_uri.entry(uri.clone()).or_insert(loc);
        self.resources.push(Resource {
            uri: uri.into_boxed_str(),
            recursive_anchor: false,
            root: None,
        });
        i
    }

    /// The node for a location, compiled later from the work list.
    fn node_for(&mut self, loc: Loc) -> NodeId {
        if let Some(&id) = self.located.get(&loc) {
            return id;
        }
        let id = self.nodes.len() as NodeId;
        let resource = self.info.get(&loc).map_or(0, |i| i.resource);
        let location = self.location_text(&loc).into_boxed_str();
        self.nodes.push(Node {
            kind: NodeKind::Bool(true),
            resource,
            location,
            simple: true,
        });
        self.located.insert(loc.clone(), id);
        self.queue.push((id, loc));
        id
    }

    /// Resolves a reference against `base` to a location, loading registered documents.
    fn resolve(&mut self, base: &Uri, reference: &str, at: &str) -> Result<Loc, CompileError> {
        let target = base.resolve(reference);
        let uri = target.base();
        let fragment = percent_decode(target.fragment.as_deref().unwrap_or(""));
        let res = match self.resources_by_uri.get(&uri) {
            Some(l) => l.clone(),
            None => {
                let Some(doc) = self.settings.registry.get(&uri) else {
                    return Err(CompileError::new(format!("cannot resolve reference '{reference}' ({uri} is not a known resource)"), at));
                };
                let draft = self.settings.default_draft;
                let d = self.add_doc(&doc, &Uri::parse(&uri), draft)?;
                (d, String::new())
            }
        };
        if fragment.is_empty() {
            return Ok(res);
        }
        if fragment.starts_with('/') {
            let loc = (res.0, format!("{}{}", res.1, fragment));
            if value_at(&self.docs[loc.0].value, &loc.1).is_none() {
                return Err(CompileError::new(
                    format!("reference '{reference}' points nowhere"),
                    at,
                ));
            }
            if !self.info.contains_key(&loc) {
                // A location the index did not visit: inherit from the nearest visited parent.
                let mut p = loc.1.clone();
                let inherited = loop {
                    match p.rfind('/') {
                        Some(i) => p.truncate(i),
                        None => break None,
                    }
                    if let Some(i) = self.info.get(&(loc.0, p.clone())) {
                        break Some(i.clone());
                    }
                };
                if let Some(i) =
                    inherited.or_else(|| self.info.get(&(loc.0, String::new())).cloned())
                {
                    self.info.insert(loc.clone(), i);
                }
            }
            return Ok(loc);
        }
        let key = format!("{uri}#{fragment}");
        self.anchors.get(&key).cloned().ok_or_else(|| {
            CompileError::new(
                format!("cannot resolve anchor in reference '{reference}'"),
                at,
            )
        })
    }

    fn child(&mut self, loc: &Loc, path: &str, label: &str) -> Child {
        let node = self.node_for((loc.0, format!("{}/{}", loc.1, path)));
        Child {
            node,
            label: self.label(label),
            skipped: 0,
        }
    }

    fn compile_const(&mut self, v: &Value, loc: &Loc) -> Result<NodeId, CompileError> {
        let kind = match v {
            Value::Null => Const::Null,
            Value::Bool(b) => Const::Bool(*b),
            Value::Number(t) => Const::Number(
                Decimal::parse(t)
                    .ok_or_else(|| CompileError::new("invalid number", self.location_text(loc)))?,
            ),
            Value::String(s) => Const::String(s.clone().into_boxed_str()),
            Value::Array(a) => {
                let mut ids = Vec::with_capacity(a.len());
                for x in a {
                    ids.push(self.compile_const(x, loc)?);
                }
                Const::Array(ids)
            }
            Value::Object(m) => {
                let mut members = Vec::with_capacity(m.len());
                for (k, x) in m {
                    members.push((k.clone().into_boxed_str(), self.compile_const(x, loc)?));
                }
                members.sort_by(|a, b| a.0.cmp(&b.0));
                Const::Object(members)
            }
        };
        self.push_node(NodeKind::Const(kind), loc)
    }

    fn push_node(&mut self, kind: NodeKind, loc: &Loc) -> Result<NodeId, CompileError> {
        if self.nodes.len() >= self.settings.max_nodes {
            return Err(CompileError::new(
                format!(
                    "schema has more than {} subschemas and constants",
                    self.settings.max_nodes
                ),
                self.location_text(loc),
            ));
        }
        let id = self.nodes.len() as NodeId;
        let resource = self.info.get(loc).map_or(0, |i| i.resource);
        self.nodes.push(Node {
            kind,
            resource,
            location: Box::from(""),
            simple: true,
        });
        Ok(id)
    }

    #[allow(clippy::too_many_lines)]
    fn compile_node(&mut self, id: NodeId, loc: &Loc) -> Result<(), CompileError> {
        if self.nodes.len() > self.settings.max_nodes {
            return Err(CompileError::new(
                format!(
                    "schema has more than {} subschemas",
                    self.settings.max_nodes
                ),
                self.location_text(loc),
            ));
        }
        let doc = self.docs[loc.0].value.clone();
        let at = self.location_text(loc);
        let Some(v) = value_at(&doc, &loc.1) else {
            return Err(CompileError::new("reference points nowhere", at));
        };
        let m = match v {
            Value::Bool(b) => {
                self.nodes[id as usize].kind = NodeKind::Bool(*b);
                return Ok(());
            }
            Value::Object(m) => m,
            _ => {
                return Err(CompileError::new(
                    format!(
                        "a schema must be an object or a boolean, not {}",
                        v.type_name()
                    ),
                    at,
                ))
            }
        };
        let info = self.info.get(loc).cloned().unwrap_or(LocInfo {
            base: Uri::parse(&self.settings.base_uri),
            draft: self.settings.default_draft,
            vocab: Vocab::ALL,
            resource: 0,
        });
        let draft = info.draft;
        let vocab = info.vocab;
        let mut k = Keywords::default();
        let get = |name: &str| v.get(name);
        let err = |msg: String| CompileError::new(msg, at.clone());
        let uint = |name: &str| -> Result<Option<u64>, CompileError> {
            match v.get(name) {
                None => Ok(None),
                Some(x) => x.as_u64().map(Some).ok_or_else(|| {
                    CompileError::new(
                        format!("'{name}' must be a non-negative integer"),
                        at.clone(),
                    )
                }),
            }
        };
        let number = |name: &str| -> Result<Option<Decimal>, CompileError> {
            match v.get(name) {
                None => Ok(None),
                Some(Value::Number(t)) => Ok(Decimal::parse(t)),
                Some(_) => Err(CompileError::new(
                    format!("'{name}' must be a number"),
                    at.clone(),
                )),
            }
        };

        // Draft-07: `$ref` overrides every sibling keyword.
        if let Some(r) = get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| err("'$ref' must be a string".into()))?;
            let target = self.resolve(&info.base, r, &at)?;
            let node = self.node_for(target);
            k.refs.push(Child {
                node,
                label: self.label("$ref"),
                skipped: 0,
            });
            if draft == Draft::Draft7 {
                self.nodes[id as usize].simple = false;
                self.nodes[id as usize].kind = NodeKind::Keywords(Box::new(k));
                return Ok(());
            }
        }
        if draft == Draft::Draft202012 {
            if let Some(r) = get("$dynamicRef") {
                let r = r
                    .as_str()
                    .ok_or_else(|| err("'$dynamicRef' must be a string".into()))?;
                let target = self.resolve(&info.base, r, &at)?;
                let name = Uri::parse(r)
                    .fragment
                    .filter(|f| !f.is_empty() && !f.starts_with('/'));
                let dynamic = match &name {
                    Some(n) => self.dynamic_anchor_at.get(&target) == Some(n),
                    None => false,
                };
                let node = self.node_for(target);
                let fallback = Child {
                    node,
                    label: self.label("$dynamicRef"),
                    skipped: 0,
                };
                if dynamic {
                    self.uses_dynamic_scope = true;
                    k.dynamic_ref = Some(DynRef {
                        fallback,
                        dynamic: Dynamic::Anchor(name.unwrap_or_default().into_boxed_str()),
                    });
                } else {
                    k.refs.push(fallback);
                }
            }
        }
        if draft == Draft::Draft201909 {
            if let Some(r) = get("$recursiveRef") {
                let r = r
                    .as_str()
                    .ok_or_else(|| err("'$recursiveRef' must be a string".into()))?;
                let target = self.resolve(&info.base, r, &at)?;
                let res = self.info.get(&target).map_or(0, |i| i.resource);
                let node = self.node_for(target);
                let fallback = Child {
                    node,
                    label: self.label("$recursiveRef"),
                    skipped: 0,
                };
                if self.resources[res as usize].recursive_anchor {
                    self.uses_dynamic_scope = true;
                    k.dynamic_ref = Some(DynRef {
                        fallback,
                        dynamic: Dynamic::Recursive,
                    });
                } else {
                    k.refs.push(fallback);
                }
            }
        }

        if vocab.applicator {
            for name in ["allOf", "anyOf", "oneOf"] {
                if let Some(x) = get(name) {
                    let a = x
                        .as_array()
                        .filter(|a| !a.is_empty())
                        .ok_or_else(|| err(format!("'{name}' must be a non-empty array")))?;
                    let children: Vec<Child> = (0..a.len())
                        .map(|i| self.child(loc, &format!("{name}/{i}"), &format!("{name}/{i}")))
                        .collect();
                    match name {
                        "allOf" => k.all_of = children,
                        "anyOf" => k.any_of = children,
                        _ => k.one_of = children,
                    }
                }
            }
            if get("not").is_some() {
                k.not = Some(self.child(loc, "not", "not"));
            }
            if get("if").is_some() {
                k.if_ = Some(self.child(loc, "if", "if"));
                if get("then").is_some() {
                    k.then_ = Some(self.child(loc, "then", "then"));
                }
                if get("else").is_some() {
                    k.else_ = Some(self.child(loc, "else", "else"));
                }
            }
            // `dependencies` is draft-07's keyword; later drafts split it into
            // `dependentSchemas`/`dependentRequired` but it is still honoured for compatibility.
            let dep_keys: &[&str] = if draft == Draft::Draft7 {
                &["dependencies"]
            } else {
                &["dependentSchemas", "dependencies"]
            };
            for &dep_key in dep_keys {
                let Some(m) = get(dep_key).and_then(Value::as_object) else {
                    continue;
                };
                for (name, sub) in m {
                    let t = escape_token(name);
                    match sub {
                        Value::Object(_) | Value::Bool(_) => {
                            let path = format!("{dep_key}/{t}");
                            let c = self.child(loc, &path, &path);
                            k.dependent_schemas.push((name.clone().into_boxed_str(), c));
                        }
                        Value::Array(req) if dep_key == "dependencies" => {
                            let names = req
                                .iter()
                                .filter_map(Value::as_str)
                                .map(Box::from)
                                .collect();
                            k.dependent_required
                                .push((name.clone().into_boxed_str(), names));
                        }
                        _ => return Err(err(format!("'{dep_key}/{name}' must be a schema"))),
                    }
                }
            }
            if let Some(m) = get("properties") {
                let m = m
                    .as_object()
                    .ok_or_else(|| err("'properties' must be an object".into()))?;
                for (name, _) in m {
                    let t = escape_token(name);
                    let c = self.child(loc, &format!("properties/{t}"), &format!("properties/{t}"));
                    k.properties.push((name.clone().into_boxed_str(), c));
                }
                if k.properties.len() > 8 {
                    k.property_index = Some(
                        k.properties
                            .iter()
                            .enumerate()
                            .map(|(i, (n, _))| (n.clone(), i))
                            .collect(),
                    );
                }
            }
            if let Some(m) = get("patternProperties") {
                let m = m
                    .as_object()
                    .ok_or_else(|| err("'patternProperties' must be an object".into()))?;
                for (pat, _) in m {
                    let re = Regex::new(pat).map_err(|e| {
                        err(format!(
                            "invalid pattern '{pat}' in patternProperties: {e:?}"
                        ))
                    })?;
                    let t = escape_token(pat);
                    let c = self.child(
                        loc,
                        &format!("patternProperties/{t}"),
                        &format!("patternProperties/{t}"),
                    );
                    k.pattern_properties.push((re, c));
                }
            }
            if get("additionalProperties").is_some() {
                k.additional_properties =
                    Some(self.child(loc, "additionalProperties", "additionalProperties"));
            }
            if get("propertyNames").is_some() {
                k.property_names = Some(self.child(loc, "propertyNames", "propertyNames"));
            }
            match (draft, get("items")) {
                (Draft::Draft202012, Some(_)) => {
                    k.items = Some(self.child(loc, "items", "items"));
                }
                (_, Some(Value::Array(a))) => {
                    k.prefix_items = (0..a.len())
                        .map(|i| self.child(loc, &format!("items/{i}"), &format!("items/{i}")))
                        .collect();
                    if get("additionalItems").is_some() {
                        k.items = Some(self.child(loc, "additionalItems", "additionalItems"));
                    }
                }
                (_, Some(_)) => k.items = Some(self.child(loc, "items", "items")),
                (_, None) => {}
            }
            if draft == Draft::Draft202012 {
                if let Some(a) = get("prefixItems") {
                    let a = a
                        .as_array()
                        .ok_or_else(|| err("'prefixItems' must be an array".into()))?;
                    k.prefix_items = (0..a.len())
                        .map(|i| {
                            self.child(
                                loc,
                                &format!("prefixItems/{i}"),
                                &format!("prefixItems/{i}"),
                            )
                        })
                        .collect();
                }
            }
            if get("contains").is_some() {
                k.contains = Some(self.child(loc, "contains", "contains"));
                k.min_contains = 1;
                if draft != Draft::Draft7 && vocab.validation {
                    if let Some(n) = uint("minContains")? {
                        k.min_contains = n;
                    }
                    k.max_contains = uint("maxContains")?;
                }
            }
        }
        if vocab.unevaluated && draft != Draft::Draft7 {
            if get("unevaluatedItems").is_some() {
                k.unevaluated_items = Some(self.child(loc, "unevaluatedItems", "unevaluatedItems"));
                self.uses_unevaluated = true;
            }
            if get("unevaluatedProperties").is_some() {
                k.unevaluated_properties =
                    Some(self.child(loc, "unevaluatedProperties", "unevaluatedProperties"));
                self.uses_unevaluated = true;
            }
        }
        if vocab.validation {
            if let Some(t) = get("type") {
                let one = |s: &str| -> Result<u8, CompileError> {
                    Ok(match s {
                        "null" => types::NULL,
                        "boolean" => types::BOOLEAN,
                        "object" => types::OBJECT,
                        "array" => types::ARRAY,
                        "number" => types::NUMBER | types::INTEGER,
                        "string" => types::STRING,
                        "integer" => types::INTEGER,
                        other => return Err(err(format!("unknown type '{other}'"))),
                    })
                };
                k.types = Some(match t {
                    Value::String(s) => one(s)?,
                    Value::Array(a) => {
                        let mut set = 0;
                        for x in a {
                            set |= one(x
                                .as_str()
                                .ok_or_else(|| err("'type' entries must be strings".into()))?)?;
                        }
                        set
                    }
                    _ => return Err(err("'type' must be a string or an array".into())),
                });
            }
            if let Some(c) = get("const") {
                let node = self.compile_const(c, loc)?;
                k.consts.push(Child {
                    node,
                    label: self.label("const"),
                    skipped: 0,
                });
            }
            if let Some(e) = get("enum") {
                let a = e
                    .as_array()
                    .ok_or_else(|| err("'enum' must be an array".into()))?;
                let mut ids = Vec::with_capacity(a.len());
                for x in a {
                    ids.push(self.compile_const(x, loc)?);
                }
                k.enum_ = Some(ids);
            }
            k.multiple_of = number("multipleOf")?;
            if k.multiple_of
                .as_ref()
                .is_some_and(|m| m <= &Decimal::zero())
            {
                return Err(err("'multipleOf' must be greater than 0".into()));
            }
            k.minimum = number("minimum")?;
            k.maximum = number("maximum")?;
            // Draft-04 wrote exclusive bounds as booleans beside minimum/maximum.
            match get("exclusiveMinimum") {
                Some(Value::Bool(true)) => k.exclusive_minimum = k.minimum.take(),
                Some(Value::Bool(false)) => {}
                _ => k.exclusive_minimum = number("exclusiveMinimum")?,
            }
            match get("exclusiveMaximum") {
                Some(Value::Bool(true)) => k.exclusive_maximum = k.maximum.take(),
                Some(Value::Bool(false)) => {}
                _ => k.exclusive_maximum = number("exclusiveMaximum")?,
            }
            k.min_length = uint("minLength")?;
            k.max_length = uint("maxLength")?;
            if let Some(p) = get("pattern") {
                let p = p
                    .as_str()
                    .ok_or_else(|| err("'pattern' must be a string".into()))?;
                k.pattern =
                    Some(Regex::new(p).map_err(|e| err(format!("invalid pattern '{p}': {e:?}")))?);
            }
            k.min_items = uint("minItems")?;
            k.max_items = uint("maxItems")?;
            k.unique_items = get("uniqueItems") == Some(&Value::Bool(true));
            k.min_properties = uint("minProperties")?;
            k.max_properties = uint("maxProperties")?;
            if let Some(r) = get("required") {
                let a = r
                    .as_array()
                    .ok_or_else(|| err("'required' must be an array".into()))?;
                for x in a {
                    k.required.push(
                        x.as_str()
                            .ok_or_else(|| err("'required' entries must be strings".into()))?
                            .into(),
                    );
                }
            }
            if draft != Draft::Draft7 {
                if let Some(m) = get("dependentRequired").and_then(Value::as_object) {
                    for (name, req) in m {
                        let req = req.as_array().ok_or_else(|| {
                            err("'dependentRequired' values must be arrays".into())
                        })?;
                        let names = req
                            .iter()
                            .filter_map(Value::as_str)
                            .map(Box::from)
                            .collect();
                        k.dependent_required
                            .push((name.clone().into_boxed_str(), names));
                    }
                }
            }
        }
        let assert_format = self.settings.format_assertion || vocab.format_assertion;
        if assert_format {
            if let Some(f) = get("format").and_then(Value::as_str) {
                if super::format::is_known(f) {
                    k.format = Some(f.into());
                }
            }
        }
        k.finish();
        let empty = m.is_empty();
        self.nodes[id as usize].simple = k.in_place_free();
        self.nodes[id as usize].kind = if empty {
            NodeKind::Bool(true)
        } else {
            NodeKind::Keywords(Box::new(k))
        };
        Ok(())
    }
}

/// Rejects schemas that apply themselves to the same instance value without end (`{"$ref":"#"}`,
/// `{"allOf":[{"$ref":"#"}]}`): such an evaluation never terminates, so it is a compile error,
/// not a run-time budget question. Dynamic references count with every target they might take.
fn check_in_place_cycles(
    nodes: &[Node],
    dynamic_anchors: &HashMap<(u32, Box<str>), NodeId>,
    resources: &[Resource],
) -> Result<(), CompileError> {
    let edges = |n: NodeId| -> Vec<NodeId> {
        let NodeKind::Keywords(k) = &nodes[n as usize].kind else {
            return Vec::new();
        };
        let mut out: Vec<NodeId> = Vec::new();
        let children = k
            .refs
            .iter()
            .chain(&k.all_of)
            .chain(&k.any_of)
            .chain(&k.one_of)
            .chain(k.not.iter())
            .chain(k.if_.iter())
            .chain(k.then_.iter())
            .chain(k.else_.iter())
            .chain(k.dependent_schemas.iter().map(|(_, c)| c))
            .chain(k.consts.iter());
        out.extend(children.map(|c| c.node));
        if let Some(d) = &k.dynamic_ref {
            out.push(d.fallback.node);
            match &d.dynamic {
                Dynamic::Anchor(name) => {
                    out.extend(
                        dynamic_anchors
                            .iter()
                            .filter(|((_, a), _)| a == name)
                            .map(|(_, &t)| t),
                    );
                }
                Dynamic::Recursive => {
                    out.extend(
                        resources
                            .iter()
                            .filter(|r| r.recursive_anchor)
                            .filter_map(|r| r.root),
                    );
                }
            }
        }
        out
    };
    // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 done.
    let mut state = vec![0u8; nodes.len()];
    for start in 0..nodes.len() as NodeId {
        if state[start as usize] != 0 {
            continue;
        }
        let mut stack: Vec<(NodeId, Vec<NodeId>)> = vec![(start, edges(start))];
        state[start as usize] = 1;
        while let Some((n, next)) = stack.last_mut() {
            match next.pop() {
                Some(m) if state[m as usize] == 1 => {
                    return Err(CompileError::new(
                        "the schema applies itself to the same value without end (an in-place reference cycle)",
                        nodes[m as usize].location.to_string(),
                    ));
                }
                Some(m) if state[m as usize] == 0 => {
                    state[m as usize] = 1;
                    let e = edges(m);
                    stack.push((m, e));
                }
                Some(_) => {}
                None => {
                    state[*n as usize] = 2;
                    stack.pop();
                }
            }
        }
    }
    Ok(())
}

fn normalize_eq(a: &str, b: &str) -> bool {
    super::registry::normalize(a) == super::registry::normalize(b)
}
