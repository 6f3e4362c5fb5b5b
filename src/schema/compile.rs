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

use super::bounds::{Bounds, CompileBudget};
use super::decimal::Decimal;
use super::keywords::array::Arrays;
use super::keywords::count::{Counted, Counts};
use super::keywords::number::Numbers;
use super::keywords::string::{self as strings, Strings};
use super::keywords::types;
use super::keywords::values::{self, Const, Values};
use super::keywords::{Holds, Keyword};
use super::program::{
    Child, DynRef, Dynamic, Keywords, Label, Node, NodeId, NodeKind, Program, Resource,
};
use super::regex::Regex;
use super::registry::{known_draft, vocab_of, Draft, Registry, Vocab};
use super::uri::{percent_decode, pointer_tokens, Uri};
use crate::json::Value;

/// Why a schema could not be compiled.
///
/// # Example
/// ```
/// use jsongate::{CompileErrorKind, Schema};
/// let err = Schema::compile(br#"{"properties":{"n":{"minimum":"3"}}}"#).unwrap_err();
/// assert_eq!(err.kind(), CompileErrorKind::Invalid);
/// assert!(err.location().starts_with('#'));
/// assert!(!err.message().is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    kind: CompileErrorKind,
    message: String,
    location: String,
    /// For [`CompileErrorKind::UnknownResource`]: the document's URI.
    resource: Option<Box<str>>,
}

/// The kind of a [`CompileError`].
///
/// # Example
/// ```
/// use jsongate::{CompileErrorKind, Schema};
/// assert_eq!(Schema::compile(b"{").unwrap_err().kind(), CompileErrorKind::Invalid);
/// assert_eq!(
///     Schema::compile(br#"{"$ref":"https://example.com/x.json"}"#).unwrap_err().kind(),
///     CompileErrorKind::UnknownResource
/// );
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CompileErrorKind {
    /// The schema is not valid JSON or not a valid schema.
    Invalid,
    /// A reference names a document that is neither embedded nor registered (nothing is
    /// ever fetched): register it with [`SchemaOptions::resource`](crate::SchemaOptions).
    UnknownResource,
    /// The schema exhausted a compile budget (see [`SchemaOptions`](crate::SchemaOptions)).
    Budget {
        /// Which budget.
        budget: CompileBudget,
        /// Its limit.
        limit: u64,
    },
}

/// The base URI of a schema document without `$id`: never shown (see [`public`]).
pub(crate) const INTERNAL_BASE: &str = "jsongate:///schema.json";

/// A location or message as the caller reads it: locations in the schema given without
/// `$id` are plain fragments (`#/properties/a`), and references resolved against it read as
/// they were written (`other.json`).
fn public(s: &str) -> String {
    s.replace(INTERNAL_BASE, "").replace("jsongate:///", "")
}

impl CompileError {
    pub(crate) fn new(message: impl Into<String>, location: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::Invalid,
            message: public(&message.into()),
            location: public(&location.into()),
            resource: None,
        }
    }

    pub(crate) fn budget(budget: CompileBudget, limit: u64, location: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::Budget { budget, limit },
            message: budget.describe(limit),
            location: public(&location.into()),
            resource: None,
        }
    }

    /// A reference to `uri`, which is not a known document.
    pub(crate) fn unresolved(reference: &str, uri: &str, location: &str) -> Self {
        CompileError {
            kind: CompileErrorKind::UnknownResource,
            message: public(&format!(
                "cannot resolve reference '{reference}': no resource is registered as '{uri}' \
                 (nothing is fetched from the network)"
            )),
            location: public(location),
            resource: Some(public(uri).into_boxed_str()),
        }
    }

    /// For [`CompileErrorKind::UnknownResource`]: the URI of the document the reference
    /// needs, as [`SchemaOptions::resource`](crate::SchemaOptions::resource) takes it.
    ///
    /// # Example
    /// ```
    /// use jsongate::Schema;
    /// let err = Schema::compile(br#"{"$ref":"https://example.com/x.json#/$defs/a"}"#).unwrap_err();
    /// assert_eq!(err.resource(), Some("https://example.com/x.json"));
    /// ```
    pub fn resource(&self) -> Option<&str> {
        self.resource.as_deref()
    }

    /// What kind of failure this is.
    ///
    /// # Example
    /// ```
    /// use jsongate::{CompileBudget, CompileErrorKind, Schema};
    /// let err = Schema::options().max_schema_bytes(4).compile(b"{}     ").unwrap_err();
    /// assert_eq!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Bytes, limit: 4 });
    /// ```
    pub fn kind(&self) -> CompileErrorKind {
        self.kind
    }
    /// What is wrong.
    ///
    /// # Example
    /// ```
    /// use jsongate::Schema;
    /// let err = Schema::compile(br#"{"$ref":"https://example.com/x.json"}"#).unwrap_err();
    /// assert!(err.message().contains("nothing is fetched"), "{}", err.message());
    /// ```
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Where: the location of the offending subschema, `#pointer` in the schema itself, or
    /// `URI#pointer` in a resource or a subschema with its own `$id`.
    ///
    /// # Example
    /// ```
    /// use jsongate::Schema;
    /// let err = Schema::compile(br#"{"properties":{"n":{"$ref":"missing.json"}}}"#).unwrap_err();
    /// assert_eq!(err.location(), "#/properties/n");
    /// ```
    pub fn location(&self) -> &str {
        &self.location
    }
}

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.location.is_empty() {
            // A document that is not JSON: its message has the byte, line and column.
            return f.write_str(&self.message);
        }
        write!(f, "{} at {}", self.message, self.location)
    }
}

impl std::error::Error for CompileError {}

/// What the compiler needs to know besides the schema.
#[derive(Clone)]
pub(crate) struct Settings {
    pub(crate) default_draft: Draft,
    /// The dialect of registered resources without `$schema`, when the caller named one
    /// (otherwise they follow the resource that references them).
    pub(crate) resource_draft: Option<Draft>,
    pub(crate) format_assertion: bool,
    pub(crate) bounds: Bounds,
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

/// Member and item indices from a document's root to a location: a lookup by path costs its
/// depth, where one by pointer text would search every object on the way by name.
type Path = Box<[u32]>;

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
    labels: Vec<Label>,
    label_ids: HashMap<String, u32>,
    /// Index paths of the locations the index visited.
    paths: HashMap<Loc, Path>,
    /// `$dynamicAnchor` locations not yet given a node.
    pending_dynamic: Vec<Loc>,
    /// Work done so far, against [`Bounds::steps`].
    steps: u64,
    /// Bytes of the documents loaded so far, against [`Bounds::bytes`].
    bytes: u64,
    /// Resources and anchors declared so far, against [`Bounds::anchors`].
    anchors_declared: u64,
}

fn escape_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn value_at_path<'v>(root: &'v Value, path: &[u32]) -> Option<&'v Value> {
    let mut v = root;
    for &i in path {
        v = match v {
            Value::Object(m) => &m.get(i as usize)?.1,
            Value::Array(a) => a.get(i as usize)?,
            _ => return None,
        };
    }
    Some(v)
}

/// The index path of the value a JSON Pointer names.
fn path_to(root: &Value, pointer: &str) -> Option<Vec<u32>> {
    let mut v = root;
    let mut path = Vec::new();
    for t in pointer_tokens(pointer)? {
        let i = match v {
            Value::Object(m) => m.iter().position(|(n, _)| *n == t)?,
            Value::Array(a) => t.parse::<usize>().ok().filter(|&i| i < a.len())?,
            _ => return None,
        };
        path.push(i as u32);
        v = v.child(&t)?;
    }
    Some(path)
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
            paths: HashMap::new(),
            pending_dynamic: Vec::new(),
            steps: 0,
            bytes: 0,
            anchors_declared: 0,
        }
    }

    fn label(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.label_ids.get(s) {
            return i;
        }
        let i = self.labels.len() as u32;
        self.labels.push(Label {
            text: s.into(),
            next: u32::MAX,
        });
        self.label_ids.insert(s.to_string(), i);
        i
    }

    /// Charges `n` steps of work done at `at`.
    fn step(&mut self, n: u64, at: impl FnOnce() -> String) -> Result<(), CompileError> {
        self.steps += n;
        if self.steps > self.settings.bounds.steps {
            return Err(CompileError::budget(
                CompileBudget::Steps,
                self.settings.bounds.steps,
                at(),
            ));
        }
        Ok(())
    }

    /// Counts one more resource or anchor declared at `at`.
    fn declare(&mut self, at: &str) -> Result<(), CompileError> {
        self.anchors_declared += 1;
        let limit = self.settings.bounds.anchors;
        if self.anchors_declared > limit {
            return Err(CompileError::budget(CompileBudget::Anchors, limit, at));
        }
        Ok(())
    }

    /// The value at a location: by its index path when the index visited it.
    fn value_of<'v>(&self, doc: &'v Value, loc: &Loc) -> Option<&'v Value> {
        match self.paths.get(loc) {
            Some(path) => value_at_path(doc, path),
            None => value_at(doc, &loc.1),
        }
    }

    /// Compiles `root` into a program.
    pub(crate) fn compile(mut self, root: Value, size: u64) -> Result<Program, CompileError> {
        let base = Uri::parse(&self.settings.base_uri);
        let draft = self.settings.default_draft;
        let doc = self.add_doc(&Arc::new(root), size, &base, draft)?;
        let root = self.node_for((doc, String::new()));
        loop {
            // Every `$dynamicAnchor` may become a target at run time, referenced or not.
            while let Some(loc) = self.pending_dynamic.pop() {
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
        // Nodes on an in-place cycle compile as written; the runtime watches them for
        // re-entry at the same value, and a cycle is an error only when the verdict depends on
        // a re-entered subschema (judged by evaluation, not by the graph's shape).
        let cycles = in_place_cycles(&self.nodes, &dynamic_anchors, &self.resources);
        check_in_place_cycles(
            &self.nodes,
            &dynamic_anchors,
            &self.resources,
            self.settings.bounds.ref_depth,
        )?;
        if !self.uses_dynamic_scope {
            self.bypass_sole_refs(&cycles);
        }
        let mut program = Program {
            nodes: self.nodes,
            labels: self.labels,
            root,
            resources: self.resources,
            dynamic_anchors,
            uses_dynamic_scope: self.uses_dynamic_scope,
            uses_unevaluated: self.uses_unevaluated,
            plan: None,
            dispatch: None,
            cycles,
        };
        // The specialised tier has no cycle report: schemas with cycles run in the general one.
        if program.cycles.is_empty() && program.fast_tier_applies() {
            program.plan = Some(Box::new(super::fast::Plan::lower(&program)));
            program.dispatch = program.root_dispatch();
        }
        Ok(program)
    }

    /// Points edges into a node that is only a `$ref` straight at the reference's target,
    /// with the two keyword paths joined (`items` + `$ref` = `items/$ref`), so the runtime
    /// evaluates one subschema instead of two and error locations read the same.
    ///
    /// Only without a dynamic scope: a skipped node could otherwise be the one entering a
    /// new resource. Targets that are `true`/`false` stay behind their `$ref` (a `false`
    /// reports the keyword of the edge that reached it). The root keeps its own node, and so
    /// do nodes on an in-place cycle (`cycles`, sorted), so that a re-entry is told by the
    /// edges the schema has.
    fn bypass_sole_refs(&mut self, cycles: &[NodeId]) {
        let hop: Vec<Option<(NodeId, u32)>> = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| match &n.kind {
                NodeKind::Keywords(_) if cycles.binary_search(&(i as NodeId)).is_ok() => None,
                NodeKind::Keywords(k) => k.sole_ref().and_then(|c| {
                    let target = &self.nodes[c.node as usize].kind;
                    (!matches!(target, NodeKind::Bool(_))).then_some((c.node, c.label))
                }),
                _ => None,
            })
            .collect();
        // For every `$ref`-only node: where its chain of references ends, how many references
        // the chain has, and the chain's keyword path (its own `$ref` label first). Each chain
        // is walked once; a node reached again reuses its result, and the path of a node is
        // its own label followed by the path of the next, so no label is ever copied whole.
        let mut way: Vec<Option<(NodeId, u32, u32)>> = vec![None; hop.len()];
        let mut on_walk = vec![false; hop.len()];
        let mut walk = Vec::new();
        for start in 0..hop.len() {
            if hop[start].is_none() || way[start].is_some() {
                continue;
            }
            let mut cur = start;
            while let Some((next, _)) = hop[cur] {
                if way[cur].is_some() || on_walk[cur] {
                    break;
                }
                on_walk[cur] = true;
                walk.push(cur);
                cur = next as usize;
            }
            while let Some(x) = walk.pop() {
                on_walk[x] = false;
                let (next, label) = hop[x].expect("only references are walked");
                way[x] = Some(match way[next as usize] {
                    Some((end, hops, rest)) => {
                        let text = self.labels[label as usize].text.clone();
                        self.labels.push(Label { text, next: rest });
                        (end, hops + 1, (self.labels.len() - 1) as u32)
                    }
                    None => (next, 1, label),
                });
            }
        }
        let mut joined: HashMap<(u32, u32), u32> = HashMap::new();
        let mut nodes = std::mem::take(&mut self.nodes);
        for n in &mut nodes {
            let NodeKind::Keywords(k) = &mut n.kind else {
                continue;
            };
            for c in k.children_mut() {
                let Some((end, hops, rest)) = way[c.node as usize] else {
                    continue;
                };
                let labels = &mut self.labels;
                c.label = *joined.entry((c.label, rest)).or_insert_with(|| {
                    let text = labels[c.label as usize].text.clone();
                    labels.push(Label { text, next: rest });
                    (labels.len() - 1) as u32
                });
                c.node = end;
                c.skipped += hops;
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

    /// Registers a document of `size` bytes and indexes its resources and anchors.
    fn add_doc(
        &mut self,
        value: &Arc<Value>,
        size: u64,
        base: &Uri,
        draft: Draft,
    ) -> Result<usize, CompileError> {
        self.bytes += size;
        if self.bytes > self.settings.bounds.bytes {
            return Err(CompileError::budget(
                CompileBudget::Bytes,
                self.settings.bounds.bytes,
                base.base(),
            ));
        }
        let doc = self.docs.len();
        self.docs.push(Doc {
            value: value.clone(),
        });
        let res = self.new_resource(base.base(), (doc, String::new()));
        let info = LocInfo {
            base: base.clone(),
            draft,
            vocab: Vocab::ALL,
            resource: res,
        };
        self.index(doc, base, String::new(), Vec::new(), info, true)?;
        Ok(doc)
    }

    /// Indexes the subschema at `ptr` (index path `path`) of document `doc` and every
    /// subschema under it, starting from what is in force there (`info`); `base` is the
    /// document's own URI. Locations already indexed are skipped.
    fn index(
        &mut self,
        doc: usize,
        base: &Uri,
        ptr: String,
        path: Vec<u32>,
        info: LocInfo,
        doc_root: bool,
    ) -> Result<(), CompileError> {
        let value = self.docs[doc].value.clone();
        let value = &*value;
        let mut stack: Vec<(String, Vec<u32>, LocInfo, bool)> = vec![(ptr, path, info, doc_root)];
        while let Some((ptr, path, mut info, doc_root)) = stack.pop() {
            let Some(v) = value_at_path(value, &path) else {
                continue;
            };
            let loc = (doc, ptr.clone());
            if self.info.contains_key(&loc) {
                continue;
            }
            let Value::Object(members) = v else {
                self.info.insert(loc.clone(), info);
                self.paths.insert(loc, path.into_boxed_slice());
                continue;
            };
            self.step(1 + members.len() as u64, || {
                format!("{}#{ptr}", info.base.base())
            })?;
            let at = format!("{}#{}", info.base.base(), ptr);
            let has_ref = v.get("$ref").is_some();
            // Identify the resource this location starts, if any: `$id`, or `id` in draft-04
            // (the draft a `$schema` here names decides which).
            let draft_here = match v.get("$schema").and_then(Value::as_str) {
                Some(s) => known_draft(s).unwrap_or(info.draft),
                None => info.draft,
            };
            let id = v.get(draft_here.id_keyword()).and_then(Value::as_str);
            let mut new_base = None;
            let mut legacy_anchor = None;
            if let Some(id) = id {
                if draft_here.legacy() {
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
                    self.declare(&at)?;
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
                self.declare(&at)?;
                self.anchors
                    .insert(format!("{}#{}", info.base.base(), name), loc.clone());
            }
            if Keyword::Anchor.in_draft(info.draft) {
                if let Some(a) = v.get("$anchor").and_then(Value::as_str) {
                    self.declare(&at)?;
                    self.anchors
                        .insert(format!("{}#{}", info.base.base(), a), loc.clone());
                }
            }
            if Keyword::DynamicAnchor.in_draft(info.draft) {
                if let Some(a) = v.get("$dynamicAnchor").and_then(Value::as_str) {
                    self.declare(&at)?;
                    self.anchors
                        .entry(format!("{}#{}", info.base.base(), a))
                        .or_insert_with(|| loc.clone());
                    if self
                        .dynamic_anchor_at
                        .insert(loc.clone(), a.to_string())
                        .is_none()
                    {
                        self.pending_dynamic.push(loc.clone());
                    }
                }
            }
            if Keyword::RecursiveAnchor.in_draft(info.draft)
                && v.get("$recursiveAnchor") == Some(&Value::Bool(true))
            {
                if let Some(r) = self.resources.get_mut(info.resource as usize) {
                    r.recursive_anchor = true;
                }
            }
            self.info.insert(loc.clone(), info.clone());
            // Children, in known keywords only.
            let index = |k: &str| members.iter().position(|(n, _)| n == k);
            let mut push = |p: String, i: &[u32]| {
                let mut child = path.clone();
                child.extend_from_slice(i);
                stack.push((p, child, info.clone(), false));
            };
            for k in Keyword::holding(Holds::One) {
                let k = k.name();
                if let Some(i) = index(k) {
                    push(format!("{ptr}/{k}"), &[i as u32]);
                }
            }
            if let Some(i) = index(Keyword::Items.name()) {
                match &members[i].1 {
                    Value::Array(a) => {
                        for j in 0..a.len() {
                            push(format!("{ptr}/items/{j}"), &[i as u32, j as u32]);
                        }
                    }
                    _ => push(format!("{ptr}/items"), &[i as u32]),
                }
            }
            for k in Keyword::holding(Holds::Array) {
                let k = k.name();
                if let Some(i) = index(k) {
                    if let Value::Array(a) = &members[i].1 {
                        for j in 0..a.len() {
                            push(format!("{ptr}/{k}/{j}"), &[i as u32, j as u32]);
                        }
                    }
                }
            }
            for k in Keyword::holding(Holds::Map) {
                let k = k.name();
                if let Some(i) = index(k) {
                    if let Value::Object(m) = &members[i].1 {
                        for (j, (name, sub)) in m.iter().enumerate() {
                            if matches!(sub, Value::Object(_) | Value::Bool(_)) {
                                let p = format!("{ptr}/{k}/{}", escape_token(name));
                                push(p, &[i as u32, j as u32]);
                            }
                        }
                    }
                }
            }
            self.paths.insert(loc, path.into_boxed_slice());
        }
        Ok(())
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

    /// Resolves a reference against `base` to a location, loading registered documents: a
    /// document without `$schema` is read in the dialect the caller named, or else in
    /// `draft`, the dialect of the resource that references it.
    fn resolve(
        &mut self,
        base: &Uri,
        reference: &str,
        at: &str,
        draft: Draft,
    ) -> Result<Loc, CompileError> {
        let target = base.resolve(reference);
        let uri = target.base();
        let fragment = percent_decode(target.fragment.as_deref().unwrap_or(""));
        let res = match self.resources_by_uri.get(&uri) {
            Some(l) => l.clone(),
            None => {
                let Some((doc, size)) = self.settings.registry.get_sized(&uri) else {
                    return Err(CompileError::unresolved(reference, &uri, at));
                };
                let draft = self.settings.resource_draft.unwrap_or(draft);
                let d = self.add_doc(&doc, size, &Uri::parse(&uri), draft)?;
                (d, String::new())
            }
        };
        if fragment.is_empty() {
            return Ok(res);
        }
        if fragment.starts_with('/') {
            let loc = (res.0, format!("{}{}", res.1, fragment));
            self.step(1 + loc.1.len() as u64 / 16, || at.to_string())?;
            if !self.paths.contains_key(&loc) && value_at(&self.docs[loc.0].value, &loc.1).is_none()
            {
                return Err(CompileError::new(
                    format!("reference '{reference}' points nowhere"),
                    at,
                ));
            }
            if !self.info.contains_key(&loc) {
                // A location the index did not visit (under a member that is no keyword of
                // its dialect): it and the subschemas under it are read with what is in force
                // at the nearest visited parent, its resource's base URI and dialect.
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
                let root = self.docs[loc.0].value.clone();
                if let (Some(i), Some(path)) = (
                    inherited.or_else(|| self.info.get(&(loc.0, String::new())).cloned()),
                    path_to(&root, &loc.1),
                ) {
                    let base = i.base.clone();
                    self.index(loc.0, &base, loc.1.clone(), path, i, false)?;
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
        // Each edge was charged with its keyword when its subschema was indexed.
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
        if self.nodes.len() >= self.settings.bounds.nodes {
            return Err(CompileError::budget(
                CompileBudget::Nodes,
                self.settings.bounds.nodes as u64,
                self.location_text(loc),
            ));
        }
        if self.steps >= self.settings.bounds.steps {
            let at = self.location_text(loc);
            self.step(1, || at)?;
        }
        self.steps += 1;
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
        if self.nodes.len() > self.settings.bounds.nodes {
            return Err(CompileError::budget(
                CompileBudget::Nodes,
                self.settings.bounds.nodes as u64,
                self.location_text(loc),
            ));
        }
        let doc = self.docs[loc.0].value.clone();
        let at = self.location_text(loc);
        let Some(v) = self.value_of(&doc, loc) else {
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
        self.step(1 + m.len() as u64, || at.clone())?;
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
                Some(x) => x.as_whole_u64().map(Some).ok_or_else(|| {
                    CompileError::new(
                        format!("'{name}' must be a non-negative integer"),
                        at.clone(),
                    )
                }),
            }
        };

        // Draft-07: `$ref` overrides every sibling keyword.
        if let Some(r) = get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| err("'$ref' must be a string".into()))?;
            let target = self.resolve(&info.base, r, &at, draft)?;
            let node = self.node_for(target);
            k.refs.push(Child {
                node,
                label: self.label("$ref"),
                skipped: 0,
            });
            if draft.legacy() {
                self.nodes[id as usize].simple = false;
                self.nodes[id as usize].kind = NodeKind::Keywords(Box::new(k));
                return Ok(());
            }
        }
        if Keyword::DynamicRef.in_draft(draft) {
            if let Some(r) = get("$dynamicRef") {
                let r = r
                    .as_str()
                    .ok_or_else(|| err("'$dynamicRef' must be a string".into()))?;
                let target = self.resolve(&info.base, r, &at, draft)?;
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
        if Keyword::RecursiveRef.in_draft(draft) {
            if let Some(r) = get("$recursiveRef") {
                let r = r
                    .as_str()
                    .ok_or_else(|| err("'$recursiveRef' must be a string".into()))?;
                let target = self.resolve(&info.base, r, &at, draft)?;
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
            // `if`/`then`/`else` arrived in draft-07.
            if get("if").is_some() && Keyword::If.in_draft(draft) {
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
            k.legacy_dependencies = draft.legacy();
            let dep_keys: &[&str] = if draft.legacy() {
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
            }
            if let Some(m) = get("patternProperties") {
                let m = m
                    .as_object()
                    .ok_or_else(|| err("'patternProperties' must be an object".into()))?;
                for (pat, _) in m {
                    self.step(pat.len() as u64, || at.clone())?;
                    let re = Regex::new(pat).map_err(|e| {
                        err(format!("invalid pattern '{pat}' in patternProperties: {e}"))
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
            // `propertyNames`, `contains` and `const` arrived in draft-06.
            if get("propertyNames").is_some() && Keyword::PropertyNames.in_draft(draft) {
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
            if Keyword::PrefixItems.in_draft(draft) {
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
            if get("contains").is_some() && Keyword::Contains.in_draft(draft) {
                k.contains = Some(self.child(loc, "contains", "contains"));
                k.min_contains = 1;
                if Keyword::MinContains.in_draft(draft) && vocab.validation {
                    if let Some(n) = uint("minContains")? {
                        k.min_contains = n;
                    }
                    k.max_contains = uint("maxContains")?;
                }
            }
        }
        if vocab.unevaluated && Keyword::UnevaluatedProperties.in_draft(draft) {
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
        // `format` asserts under the format-assertion vocabulary even without the validation
        // one; its errors come after the numbers' and before the arrays' when both are on.
        let assert_format = self.settings.format_assertion || vocab.format_assertion;
        if vocab.validation {
            k.types = types::compile(v, draft, err)?;
            let compiled = values::compile(v, draft, err, &mut |x| self.compile_const(x, loc))?;
            if let Some(node) = compiled.konst {
                k.consts.push(Child {
                    node,
                    label: self.label(Keyword::Const.name()),
                    skipped: 0,
                });
            }
            k.values =
                Values::new(
                    compiled.konst,
                    compiled.alternatives.as_deref(),
                    |id| match &self.nodes[id as usize].kind {
                        NodeKind::Const(c) => Some(c),
                        _ => None,
                    },
                );
            k.enum_ = compiled.alternatives;
            k.numbers = Numbers::compile(v, draft, err)?;
            k.strings = Strings::compile(
                v,
                &mut strings::Compile {
                    validation: vocab.validation,
                    assert_format,
                    draft,
                    err: &err,
                    step: &mut |n| self.step(n, || at.clone()),
                },
            )?;
            k.arrays = Arrays::compile(v, err)?;
            k.properties_count = Counts::compile(v, Counted::Properties, err)?.map(Box::new);
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
            if Keyword::DependentRequired.in_draft(draft) {
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
        if !vocab.validation {
            k.strings = Strings::compile(
                v,
                &mut strings::Compile {
                    validation: vocab.validation,
                    assert_format,
                    draft,
                    err: &err,
                    step: &mut |n| self.step(n, || at.clone()),
                },
            )?;
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

/// The in-place edges of node `n` of the graph [`check_in_place_cycles`] walks: real nodes
/// first, then one virtual node per `$dynamicAnchor` name, then one for `$recursiveRef`.
struct InPlaceGraph<'a> {
    nodes: &'a [Node],
    names: HashMap<&'a str, usize>,
    by_name: Vec<Vec<NodeId>>,
    recursive: Vec<NodeId>,
}

impl<'a> InPlaceGraph<'a> {
    fn new(
        nodes: &'a [Node],
        dynamic_anchors: &'a HashMap<(u32, Box<str>), NodeId>,
        resources: &[Resource],
    ) -> Self {
        let mut names: HashMap<&str, usize> = HashMap::new();
        let mut by_name: Vec<Vec<NodeId>> = Vec::new();
        for ((_, name), &target) in dynamic_anchors {
            let i = *names.entry(&**name).or_insert_with(|| {
                by_name.push(Vec::new());
                by_name.len() - 1
            });
            by_name[i].push(target);
        }
        let recursive = resources
            .iter()
            .filter(|r| r.recursive_anchor)
            .filter_map(|r| r.root)
            .collect();
        InPlaceGraph {
            nodes,
            names,
            by_name,
            recursive,
        }
    }

    fn len(&self) -> usize {
        self.nodes.len() + self.by_name.len() + 1
    }

    fn edges(&self, n: usize) -> Vec<usize> {
        let real = self.nodes.len();
        let recursive_node = real + self.by_name.len();
        if n == recursive_node {
            return self.recursive.iter().map(|&t| t as usize).collect();
        }
        if n >= real {
            return self.by_name[n - real].iter().map(|&t| t as usize).collect();
        }
        let NodeKind::Keywords(k) = &self.nodes[n].kind else {
            return Vec::new();
        };
        let mut out: Vec<usize> = k
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
            .chain(k.consts.iter())
            .map(|c| c.node as usize)
            .collect();
        if let Some(d) = &k.dynamic_ref {
            out.push(d.fallback.node as usize);
            match &d.dynamic {
                Dynamic::Anchor(name) => {
                    if let Some(&i) = self.names.get(&**name) {
                        out.push(real + i);
                    }
                }
                Dynamic::Recursive => out.push(recursive_node),
            }
        }
        out
    }
}

/// The real nodes that lie on an in-place cycle (a strongly connected component of the
/// in-place graph with more than one node, or a node that applies itself), sorted. Tarjan's
/// algorithm, iterative: linear in nodes and edges.
fn in_place_cycles(
    nodes: &[Node],
    dynamic_anchors: &HashMap<(u32, Box<str>), NodeId>,
    resources: &[Resource],
) -> Vec<NodeId> {
    const UNSEEN: usize = usize::MAX;
    let g = InPlaceGraph::new(nodes, dynamic_anchors, resources);
    let total = g.len();
    let mut index = vec![UNSEEN; total];
    let mut low = vec![0usize; total];
    let mut on_stack = vec![false; total];
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0usize;
    let mut out: Vec<NodeId> = Vec::new();
    for start in 0..total {
        if index[start] != UNSEEN {
            continue;
        }
        let mut work: Vec<(usize, Vec<usize>)> = vec![(start, g.edges(start))];
        index[start] = next;
        low[start] = next;
        next += 1;
        stack.push(start);
        on_stack[start] = true;
        while let Some((n, edges)) = work.last_mut() {
            let n = *n;
            if let Some(m) = edges.pop() {
                if index[m] == UNSEEN {
                    index[m] = next;
                    low[m] = next;
                    next += 1;
                    stack.push(m);
                    on_stack[m] = true;
                    let e = g.edges(m);
                    work.push((m, e));
                } else if on_stack[m] {
                    low[n] = low[n].min(index[m]);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                low[*parent] = low[*parent].min(low[n]);
            }
            if low[n] == index[n] {
                let at = stack.iter().rposition(|&x| x == n).unwrap_or(0);
                let component = stack.split_off(at);
                for &x in &component {
                    on_stack[x] = false;
                }
                let cyclic = component.len() > 1 || g.edges(n).contains(&n);
                if cyclic {
                    out.extend(
                        component
                            .iter()
                            .filter(|&&x| x < nodes.len())
                            .map(|&x| x as NodeId),
                    );
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// Bounds the longest chain of in-place applications (`max_depth`), which is what one
/// instance value may cost in nested evaluations. Edges that close a cycle (found by
/// [`in_place_cycles`]) are not followed: at run time a chain never enters one subschema twice
/// at one value (the re-entry is the cycle's undecided verdict), and the work budget bounds
/// what remains. Dynamic references count with every target they might take.
///
/// Linear in nodes and edges: a dynamic reference points at one virtual node per anchor name
/// (and one for `$recursiveRef`), which points at every target of that name, instead of at
/// every target itself (which made `n` references to `n` anchors cost `n²`).
fn check_in_place_cycles(
    nodes: &[Node],
    dynamic_anchors: &HashMap<(u32, Box<str>), NodeId>,
    resources: &[Resource],
    max_depth: u64,
) -> Result<(), CompileError> {
    let g = InPlaceGraph::new(nodes, dynamic_anchors, resources);
    let real = nodes.len();
    let total = g.len();
    let edges = |n: usize| g.edges(n);
    // Iterative depth-first search: 0 unvisited, 1 on the stack, 2 done. `depth` of a done
    // node: the longest in-place chain starting there (virtual nodes add nothing).
    let mut state = vec![0u8; total];
    let mut depth = vec![0u64; total];
    for start in 0..total {
        if state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, Vec<usize>, u64)> = vec![(start, edges(start), 0)];
        state[start] = 1;
        while let Some((n, next, best)) = stack.last_mut() {
            match next.pop() {
                // A back edge: it closes an in-place cycle, which the runtime cuts where
                // evaluation re-enters it.
                Some(m) if state[m] == 1 => {}
                Some(m) if state[m] == 0 => {
                    state[m] = 1;
                    let e = edges(m);
                    stack.push((m, e, 0));
                }
                Some(m) => *best = (*best).max(depth[m]),
                None => {
                    let n = *n;
                    let d = *best + u64::from(n < real);
                    if d > max_depth {
                        return Err(CompileError::budget(
                            CompileBudget::RefDepth,
                            max_depth,
                            nodes.get(n).map_or("", |x| &*x.location).to_string(),
                        ));
                    }
                    depth[n] = d;
                    state[n] = 2;
                    stack.pop();
                    if let Some((_, _, parent_best)) = stack.last_mut() {
                        *parent_best = (*parent_best).max(d);
                    }
                }
            }
        }
    }
    Ok(())
}

fn normalize_eq(a: &str, b: &str) -> bool {
    super::registry::normalize(a) == super::registry::normalize(b)
}

#[cfg(test)]
mod tests {
    use crate::{CompileBudget, CompileErrorKind, Schema, SchemaOptions};

    /// `{"$ref":"#/$defs/d0","$defs":{"d0":{"$ref":"#/$defs/d1"},…,"dN":{"type":"integer"}}}`
    fn ref_chain(n: usize) -> String {
        let links: Vec<String> = (0..n)
            .map(|i| format!(r##""d{i}":{{"$ref":"#/$defs/d{}"}}"##, i + 1))
            .collect();
        format!(
            r##"{{"$ref":"#/$defs/d0","$defs":{{{},"d{n}":{{"type":"integer"}}}}}}"##,
            links.join(",")
        )
    }

    fn label_bytes(schema: &Schema) -> usize {
        schema.program().labels.iter().map(|l| l.text.len()).sum()
    }

    /// Joining the edges of a `$ref` chain used to copy the whole joined path into a new label
    /// at every hop of every edge: cubic time, 1.3 GB for 30,000 links. Labels now share their
    /// tails, so their bytes grow with the chain, not with its square.
    #[test]
    fn ref_chain_labels_grow_linearly() {
        let opts = SchemaOptions::new().max_ref_depth(u64::MAX);
        let small = opts.compile(ref_chain(1_000).as_bytes()).unwrap();
        let large = opts.compile(ref_chain(20_000).as_bytes()).unwrap();
        let (a, b) = (label_bytes(&small), label_bytes(&large));
        assert!(
            b < a * 30,
            "labels: {a} bytes for 1,000 links, {b} for 20,000"
        );
        // The locations still read through every hop.
        let v = crate::Validator::new(&large).validate_slice(b"\"x\"", crate::Limits::new());
        match v {
            Err(crate::Rejection::Violation(v)) => {
                assert_eq!(
                    v.keyword_location().len(),
                    "/$ref".len() * 20_001 + "/type".len()
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ref_chain_longer_than_the_depth_budget_is_a_typed_error() {
        let e = Schema::compile(ref_chain(2_000).as_bytes()).unwrap_err();
        assert_eq!(
            e.kind(),
            CompileErrorKind::Budget {
                budget: CompileBudget::RefDepth,
                limit: crate::DEFAULT_MAX_REF_DEPTH
            }
        );
        // Within the budget it compiles.
        Schema::compile(ref_chain(900).as_bytes()).unwrap();
    }
}
