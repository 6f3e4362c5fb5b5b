//! The compiled, immutable validator program: one [`Node`] per subschema, with every
//! reference resolved to a node index and every draft difference already normalised.
//!
//! A program is `Send + Sync` and shared behind an `Arc`; the runtime (`crate::validate`)
//! keeps all per-document state. Nothing here depends on the draft a schema was written in:
//! draft-07's array `items` and `additionalItems`, for instance, arrive here as
//! `prefix_items` and `items`, exactly like draft 2020-12's.

use std::collections::HashMap;

use super::keywords::array::Arrays;
use super::keywords::count::Counts;
use super::keywords::number::Numbers;
use super::keywords::string::Strings;
use super::keywords::types;
use super::keywords::values::{Const, Values};
use super::regex::Regex;

/// A map keyed by names of the instance (property names, watched names): looked up once per
/// member on the hot path, so it uses a fast non-cryptographic hash (the keys come from the
/// schema, not from the instance).
pub(crate) type NameMap<V> = hashbrown::HashMap<Box<str>, V, foldhash::fast::FixedState>;

/// Index of a node in [`Program::nodes`].
pub(crate) type NodeId = u32;

/// A subschema reached through a keyword, with the keyword path used for error locations
/// (`"allOf/1"`, `"properties/name"`, `"$ref"`).
#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) node: NodeId,
    /// Index into [`Program::labels`].
    pub(crate) label: u32,
    /// Subschemas made only of a `$ref` that this edge goes through without evaluating
    /// them (see `Compiler::bypass_sole_refs`); the runtime still counts them against the
    /// evaluation budget, so budgets mean what they meant.
    pub(crate) skipped: u32,
}

/// The keyword path of an edge, as a list: its own text, then the path of the edge it was
/// joined with (a `$ref` the edge goes through), so that joining a chain of `n` references
/// costs `n` labels, not `n²` bytes.
#[derive(Debug)]
pub(crate) struct Label {
    /// One or more path segments (`"items"`, `"properties/name"`, `"$ref"`).
    pub(crate) text: Box<str>,
    /// The label that follows (`u32::MAX`: none).
    pub(crate) next: u32,
}

/// A compiled subschema.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    /// The schema resource this node belongs to (index into [`Program::resources`]).
    pub(crate) resource: u32,
    /// Absolute location of the subschema (`base URI#pointer`), for messages.
    pub(crate) location: Box<str>,
    /// Whether the node has no in-place applicators, so a scalar can be checked against it
    /// without an eval of its own.
    pub(crate) simple: bool,
}

#[derive(Debug)]
pub(crate) enum NodeKind {
    /// `true` or `false` (also `{}` compiles to `true`).
    Bool(bool),
    Keywords(Box<Keywords>),
    /// Structural equality with one JSON value (`const`, one `enum` member).
    Const(Const),
}

/// How a dynamic reference finds its target at run time.
#[derive(Debug)]
pub(crate) enum Dynamic {
    /// `$dynamicRef` whose static target declares `$dynamicAnchor` with this name.
    Anchor(Box<str>),
    /// `$recursiveRef` whose static target declares `$recursiveAnchor: true`.
    Recursive,
}

#[derive(Debug)]
pub(crate) struct DynRef {
    /// Target when the dynamic scope has nothing better (also the label `$dynamicRef`).
    pub(crate) fallback: Child,
    pub(crate) dynamic: Dynamic,
}

/// Every keyword a node may hold, normalised across drafts.
#[derive(Debug, Default)]
pub(crate) struct Keywords {
    pub(crate) types: Option<u8>,
    /// Scalar-only `enum`/`const` are checked directly; others become `Const` nodes.
    pub(crate) consts: Vec<Child>,
    /// `enum` alternatives (at least one must match).
    pub(crate) enum_: Option<Vec<NodeId>>,
    /// The scalar constants of `enum` and `const`, which both tiers check a scalar against.
    pub(crate) values: Option<Box<Values>>,

    // In-place applicators.
    pub(crate) refs: Vec<Child>,
    pub(crate) dynamic_ref: Option<DynRef>,
    pub(crate) all_of: Vec<Child>,
    pub(crate) any_of: Vec<Child>,
    pub(crate) one_of: Vec<Child>,
    pub(crate) not: Option<Child>,
    pub(crate) if_: Option<Child>,
    pub(crate) then_: Option<Child>,
    pub(crate) else_: Option<Child>,
    /// `dependentSchemas` (and draft-07 `dependencies` with schema values).
    pub(crate) dependent_schemas: Vec<(Box<str>, Child)>,

    /// `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`.
    pub(crate) numbers: Option<Box<Numbers>>,
    /// `minLength`, `maxLength`, `pattern`, and `format` where it asserts.
    pub(crate) strings: Option<Box<Strings>>,

    // Arrays.
    pub(crate) prefix_items: Vec<Child>,
    pub(crate) items: Option<Child>,
    pub(crate) contains: Option<Child>,
    pub(crate) min_contains: u64,
    pub(crate) max_contains: Option<u64>,
    /// `minItems`, `maxItems`, `uniqueItems`.
    pub(crate) arrays: Option<Box<Arrays>>,
    pub(crate) unevaluated_items: Option<Child>,

    // Objects.
    pub(crate) properties: Vec<(Box<str>, Child)>,
    pub(crate) pattern_properties: Vec<(Regex, Child)>,
    pub(crate) additional_properties: Option<Child>,
    pub(crate) property_names: Option<Child>,
    /// `minProperties`, `maxProperties`.
    pub(crate) properties_count: Option<Box<Counts>>,
    pub(crate) required: Vec<Box<str>>,
    pub(crate) dependent_required: Vec<(Box<str>, Vec<Box<str>>)>,
    /// Whether `dependentRequired`/`dependentSchemas` came from drafts 4 to 7's
    /// `dependencies`, the keyword their violations then name.
    pub(crate) legacy_dependencies: bool,
    pub(crate) unevaluated_properties: Option<Child>,
    /// Whether a number instance must be parsed exactly before this node sees it (bounds
    /// that do not fit `i64`, `const`/`enum`); other cases parse lazily.
    pub(crate) needs_decimal: bool,
    /// Names whose presence the node tracks: `required`, then `dependentRequired` keys and
    /// values, then `dependentSchemas` keys (first occurrence wins), with a hash index when
    /// there are many.
    pub(crate) watch: Vec<Box<str>>,
    pub(crate) watch_map: Option<NameMap<u32>>,
    /// `required` as indices into `watch`.
    pub(crate) required_watch: Vec<u32>,
    /// `required_watch` split for the check at the object's end: the indices below 64 as a
    /// mask, and the others.
    pub(crate) required_mask: u64,
    pub(crate) required_far: Vec<u32>,
    /// `dependentRequired` as indices into `watch`: key, then the names it requires.
    pub(crate) dependent_required_watch: Vec<(u32, Vec<u32>)>,
    /// Whether the node has results to fold when its value closes (`anyOf`, `oneOf`,
    /// structural `enum`, `unevaluated*`).
    pub(crate) folds: bool,
    /// Whether the node spawns nothing on the value itself (no in-place applicator, no
    /// structural `enum`/`const`, no `dependentSchemas`), so that starting a value is only
    /// the `type` and scalar checks.
    pub(crate) plain: bool,
    /// [`Keywords::wants_names`], computed once.
    pub(crate) names_wanted: bool,
    /// One index for both `properties` and `watch` (`NO_INDEX` where a name is not in
    /// one of them), built when either is large, so that a member costs one hash.
    pub(crate) member_index: Option<NameMap<(u32, u32)>>,
    /// The same for few names, searched linearly: each entry is told apart by the name's
    /// length and first and last bytes before any comparison of the bytes.
    pub(crate) member_table: Vec<MemberEntry>,
}

/// "Not in this list" in [`Keywords::member_index`].
pub(crate) const NO_INDEX: u32 = u32::MAX;

/// A name of `properties` or of the watched names, in [`Keywords::member_table`].
#[derive(Debug)]
pub(crate) struct MemberEntry {
    /// The name's length and key words ([`crate::scan::name_words`]): for names of up to 16
    /// bytes equal keys are equal names; longer names compare their bytes too.
    len: usize,
    a: u64,
    b: u64,
    name: Box<str>,
    prop: u32,
    watch: u32,
}

impl Keywords {
    /// The keyword a violation of a dependent `required` names.
    pub(crate) fn dependent_required_keyword(&self) -> &'static str {
        if self.legacy_dependencies {
            "dependencies"
        } else {
            "dependentRequired"
        }
    }

    /// The keyword a violation of a dependent schema names (when it fails late, as its
    /// property arrives).
    pub(crate) fn dependent_schemas_keyword(&self) -> &'static str {
        if self.legacy_dependencies {
            "dependencies"
        } else {
            "dependentSchemas"
        }
    }

    /// Whether no keyword applies another subschema to the same value.
    pub(crate) fn in_place_free(&self) -> bool {
        self.refs.is_empty()
            && self.dynamic_ref.is_none()
            && self.all_of.is_empty()
            && self.any_of.is_empty()
            && self.one_of.is_empty()
            && self.not.is_none()
            && self.if_.is_none()
    }

    /// The target of a node that is nothing but one `$ref`, so that edges into it can go
    /// straight to the target. Every field is named, so a new keyword cannot be missed here.
    pub(crate) fn sole_ref(&self) -> Option<&Child> {
        let Keywords {
            types,
            consts,
            enum_,
            values: _,
            refs,
            dynamic_ref,
            all_of,
            any_of,
            one_of,
            not,
            if_,
            then_,
            else_,
            dependent_schemas,
            numbers,
            strings,
            prefix_items,
            items,
            contains,
            min_contains: _,
            max_contains,
            arrays,
            unevaluated_items,
            properties,
            pattern_properties,
            additional_properties,
            property_names,
            properties_count,
            required,
            dependent_required,
            legacy_dependencies: _,
            unevaluated_properties,
            needs_decimal: _,
            watch: _,
            watch_map: _,
            required_watch: _,
            required_mask: _,
            required_far: _,
            dependent_required_watch: _,
            folds: _,
            plain: _,
            names_wanted: _,
            member_index: _,
            member_table: _,
        } = self;
        let only_ref = refs.len() == 1
            && types.is_none()
            && consts.is_empty()
            && enum_.is_none()
            && dynamic_ref.is_none()
            && all_of.is_empty()
            && any_of.is_empty()
            && one_of.is_empty()
            && not.is_none()
            && if_.is_none()
            && then_.is_none()
            && else_.is_none()
            && dependent_schemas.is_empty()
            && numbers.is_none()
            && strings.is_none()
            && prefix_items.is_empty()
            && items.is_none()
            && contains.is_none()
            && max_contains.is_none()
            && arrays.is_none()
            && unevaluated_items.is_none()
            && properties.is_empty()
            && pattern_properties.is_empty()
            && additional_properties.is_none()
            && property_names.is_none()
            && properties_count.is_none()
            && required.is_empty()
            && dependent_required.is_empty()
            && unevaluated_properties.is_none();
        only_ref.then(|| &refs[0])
    }

    /// Every edge to a subschema (`dynamic_ref` aside), for rewriting after compilation.
    pub(crate) fn children_mut(&mut self) -> impl Iterator<Item = &mut Child> {
        self.refs
            .iter_mut()
            .chain(&mut self.all_of)
            .chain(&mut self.any_of)
            .chain(&mut self.one_of)
            .chain(self.not.iter_mut())
            .chain(self.if_.iter_mut())
            .chain(self.then_.iter_mut())
            .chain(self.else_.iter_mut())
            .chain(self.dependent_schemas.iter_mut().map(|(_, c)| c))
            .chain(&mut self.prefix_items)
            .chain(self.items.iter_mut())
            .chain(self.contains.iter_mut())
            .chain(self.unevaluated_items.iter_mut())
            .chain(self.properties.iter_mut().map(|(_, c)| c))
            .chain(self.pattern_properties.iter_mut().map(|(_, c)| c))
            .chain(self.additional_properties.iter_mut())
            .chain(self.property_names.iter_mut())
            .chain(self.unevaluated_properties.iter_mut())
    }

    /// Index of `name` among the watched names.
    #[inline]
    pub(crate) fn watch_index(&self, name: &str) -> Option<u32> {
        match &self.watch_map {
            Some(m) => m.get(name).copied(),
            None => self
                .watch
                .iter()
                .position(|w| &**w == name)
                .map(|i| i as u32),
        }
    }

    /// Whether `uniqueItems` applies.
    #[inline]
    pub(crate) fn unique_items(&self) -> bool {
        self.arrays.as_ref().is_some_and(|a| a.unique)
    }

    /// Computes the derived fields once the keywords are known.
    pub(crate) fn finish(&mut self) {
        let mut watch: Vec<Box<str>> = Vec::new();
        let names = self
            .required
            .iter()
            .chain(
                self.dependent_required
                    .iter()
                    .flat_map(|(k, v)| std::iter::once(k).chain(v)),
            )
            .chain(self.dependent_schemas.iter().map(|(k, _)| k));
        for n in names {
            if !watch.contains(n) {
                watch.push(n.clone());
            }
        }
        self.watch_map = (watch.len() > 8).then(|| {
            watch
                .iter()
                .enumerate()
                .map(|(i, n)| (n.clone(), i as u32))
                .collect()
        });
        self.watch = watch;
        // Every name below is in `watch`, so the indices are always found.
        let index = |n: &str| self.watch_index(n).unwrap_or(u32::MAX);
        let required_watch: Vec<u32> = self.required.iter().map(|r| index(r)).collect();
        let dependent_required_watch = self
            .dependent_required
            .iter()
            .map(|(key, names)| (index(key), names.iter().map(|n| index(n)).collect()))
            .collect();
        self.required_mask = required_watch
            .iter()
            .filter(|&&w| w < 64)
            .fold(0, |m, &w| m | 1 << w);
        self.required_far = required_watch
            .iter()
            .copied()
            .filter(|&w| w >= 64)
            .collect();
        self.required_watch = required_watch;
        self.dependent_required_watch = dependent_required_watch;
        self.names_wanted = self.wants_names();
        self.member_index = (self.properties.len() > 8 || self.watch.len() > 8).then(|| {
            let mut m = NameMap::default();
            for (i, (n, _)) in self.properties.iter().enumerate() {
                let e = m.entry(n.clone()).or_insert((NO_INDEX, NO_INDEX));
                e.0 = e.0.min(i as u32);
            }
            for (i, n) in self.watch.iter().enumerate() {
                let e = m.entry(n.clone()).or_insert((NO_INDEX, NO_INDEX));
                e.1 = e.1.min(i as u32);
            }
            m
        });
        self.member_table.clear();
        if self.member_index.is_none() {
            let names = self
                .properties
                .iter()
                .map(|(n, _)| n)
                .chain(self.watch.iter());
            for n in names {
                if self.member_table.iter().any(|e| e.name == *n) {
                    continue;
                }
                let prop = self.properties.iter().position(|(p, _)| p == n);
                let watch = self.watch.iter().position(|w| w == n);
                let (a, b) = crate::scan::name_words(n.as_bytes());
                self.member_table.push(MemberEntry {
                    len: n.len(),
                    a,
                    b,
                    name: n.clone(),
                    prop: prop.map_or(NO_INDEX, |i| i as u32),
                    watch: watch.map_or(NO_INDEX, |i| i as u32),
                });
            }
        }
        self.folds = !self.any_of.is_empty()
            || !self.one_of.is_empty()
            || self.enum_.is_some()
            || self.unevaluated_items.is_some()
            || self.unevaluated_properties.is_some();
        self.plain = self.in_place_free()
            && self.enum_.is_none()
            && self.consts.is_empty()
            && self.dependent_schemas.is_empty();
        self.needs_decimal = self.numbers.as_ref().is_some_and(|n| n.needs_decimal())
            || self.enum_.is_some()
            || !self.consts.is_empty();
    }

    /// The `properties` entry for `name` and its index among the watched names, with one
    /// hash lookup when the node has an index.
    #[inline]
    pub(crate) fn member(&self, name: &str) -> (Option<&Child>, Option<u32>) {
        let (prop, watch) = self.member_at(name);
        (prop.map(|i| &self.properties[i as usize].1), watch)
    }

    /// [`member`](Self::member) as indices: into `properties`, and into the watched names.
    #[inline(always)]
    pub(crate) fn member_at(&self, name: &str) -> (Option<u32>, Option<u32>) {
        let (prop, watch) = match &self.member_index {
            Some(m) => match m.get(name) {
                Some(&pair) => pair,
                None => return (None, None),
            },
            None => {
                let (a, b) = crate::scan::name_words(name.as_bytes());
                let n = name.len();
                let long = n > crate::scan::SHORT_NAME;
                match self
                    .member_table
                    .iter()
                    .find(|e| e.a == a && e.b == b && e.len == n && (!long || *e.name == *name))
                {
                    Some(e) => (e.prop, e.watch),
                    None => return (None, None),
                }
            }
        };
        (
            (prop != NO_INDEX).then_some(prop),
            (watch != NO_INDEX).then_some(watch),
        )
    }

    /// Whether this node tracks per-member state when it sees an object.
    pub(crate) fn wants_names(&self) -> bool {
        !self.properties.is_empty()
            || !self.pattern_properties.is_empty()
            || self.additional_properties.is_some()
            || self.property_names.is_some()
            || self.properties_count.is_some()
            || !self.required.is_empty()
            || !self.dependent_required.is_empty()
            || !self.dependent_schemas.is_empty()
            || self.unevaluated_properties.is_some()
    }
}

/// One schema resource (a document or a subschema with `$id`).
#[derive(Debug)]
pub(crate) struct Resource {
    /// Its URI (without fragment).
    pub(crate) uri: Box<str>,
    /// Whether its root declares `$recursiveAnchor: true` (draft 2019-09).
    pub(crate) recursive_anchor: bool,
    /// Its root node, if compiled.
    pub(crate) root: Option<NodeId>,
}

impl Program {
    /// Whether the specialised tier of the runtime can evaluate this program with the same
    /// verdicts, locations and offsets as the general one: every node reachable from the
    /// root through child-value edges (`properties`, `additionalProperties`, `items`,
    /// `prefixItems`) applies nothing else to the same value (no `$ref` with siblings, no
    /// `allOf`/`anyOf`/`oneOf`/`not`/`if`, no dynamic references, no `dependentSchemas`),
    /// tracks nothing across members or items beyond counts, watched names and the hashes
    /// of scalar items (no `patternProperties`, `contains`, `unevaluated*`; `uniqueItems`
    /// only over items that are scalars or fail as they begin), and compares values
    /// with scalar constants only; `propertyNames` qualifies when its subschema is such a
    /// node too. One reachable node outside that set sends the whole program to the general
    /// tier.
    pub(crate) fn fast_tier_applies(&self) -> bool {
        self.fast_tier_roots().is_some()
    }

    /// The dispatch of the root, when it is one ([`Dispatch`]).
    pub(crate) fn root_dispatch(&self) -> Option<Dispatch> {
        let NodeKind::Keywords(k) = &self.nodes[self.root as usize].kind else {
            return None;
        };
        let (keyword, alts) = match (k.one_of.is_empty(), k.any_of.is_empty()) {
            (false, true) => ("oneOf", &k.one_of),
            (true, false) => ("anyOf", &k.any_of),
            _ => return None,
        };
        let only_alternatives = k.types.is_none()
            && k.consts.is_empty()
            && k.enum_.is_none()
            && k.refs.is_empty()
            && k.dynamic_ref.is_none()
            && k.all_of.is_empty()
            && k.not.is_none()
            && k.if_.is_none()
            && k.then_.is_none()
            && k.else_.is_none()
            && k.dependent_schemas.is_empty()
            && !k.names_wanted
            && k.prefix_items.is_empty()
            && k.items.is_none()
            && k.contains.is_none()
            && k.arrays.is_none()
            && k.unevaluated_items.is_none()
            && k.unevaluated_properties.is_none()
            && k.strings.is_none()
            && k.numbers.is_none();
        if !only_alternatives || alts.len() < 2 || alts.len() > MAX_DISPATCH_BRANCHES {
            return None;
        }
        let mut branch_keywords = Vec::with_capacity(alts.len());
        for c in alts {
            let NodeKind::Keywords(b) = &self.nodes[c.node as usize].kind else {
                return None;
            };
            let closed_object = b.types == Some(types::OBJECT)
                && b.in_place_free()
                && b.enum_.is_none()
                && b.consts.is_empty()
                && b.dependent_schemas.is_empty()
                && b.property_names.is_none()
                && b.properties_count.as_ref().is_none_or(|c| !c.too_many(1));
            if !closed_object {
                return None;
            }
            branch_keywords.push(b);
        }
        // The scalar values a member subschema allows, when it allows only listed scalars.
        let values = |n: NodeId| -> Option<Vec<&Const>> {
            let scalar = |c: &Const| {
                matches!(
                    c,
                    Const::Null | Const::Bool(_) | Const::Number(_) | Const::String(_)
                )
            };
            match &self.nodes[n as usize].kind {
                NodeKind::Const(c) if scalar(c) => Some(vec![c]),
                NodeKind::Keywords(m) => {
                    let of = |id: NodeId| match &self.nodes[id as usize].kind {
                        NodeKind::Const(c) if scalar(c) => Some(c),
                        _ => None,
                    };
                    if let Some(first) = m.consts.first() {
                        of(first.node).map(|c| vec![c])
                    } else {
                        m.enum_.as_ref()?.iter().map(|&a| of(a)).collect()
                    }
                }
                _ => None,
            }
        };
        let eq = |a: &Const, b: &Const| match (a, b) {
            (Const::Null, Const::Null) => true,
            (Const::Bool(x), Const::Bool(y)) => x == y,
            (Const::Number(x), Const::Number(y)) => x == y,
            (Const::String(x), Const::String(y)) => x == y,
            _ => false,
        };
        'names: for name in &branch_keywords[0].required {
            let mut sets = Vec::with_capacity(alts.len());
            let mut branches = Vec::with_capacity(alts.len());
            for (c, b) in alts.iter().zip(&branch_keywords) {
                if !b.required.contains(name) {
                    continue 'names;
                }
                let (prop, watch) = b.member_at(name);
                let Some(prop) = prop else { continue 'names };
                let member = &b.properties[prop as usize].1;
                let Some(set) = values(member.node) else {
                    continue 'names;
                };
                sets.push(set);
                branches.push(Branch {
                    node: c.node,
                    label: c.label,
                    member: member.node,
                    member_skipped: member.skipped,
                    watch,
                });
            }
            for i in 0..sets.len() {
                for j in i + 1..sets.len() {
                    if sets[i].iter().any(|a| sets[j].iter().any(|b| eq(a, b))) {
                        continue 'names;
                    }
                }
            }
            return Some(Dispatch {
                keyword,
                name: name.clone(),
                branches,
            });
        }
        None
    }

    /// The nodes the specialised tier starts from (the root, or the alternatives of its
    /// dispatch), when every node reachable from them qualifies.
    fn fast_tier_roots(&self) -> Option<()> {
        if self.uses_dynamic_scope || self.uses_unevaluated {
            return None;
        }
        let roots: Vec<NodeId> = match self.root_dispatch() {
            Some(d) => d.branches.iter().map(|b| b.node).collect(),
            None => vec![self.root],
        };
        self.all_qualify(roots).then_some(())
    }

    /// Whether every node reachable from `roots` through child-value edges qualifies.
    fn all_qualify(&self, roots: Vec<NodeId>) -> bool {
        let scalar_const = |n: NodeId| {
            matches!(
                &self.nodes[n as usize].kind,
                NodeKind::Const(Const::Null | Const::Bool(_) | Const::Number(_) | Const::String(_))
            )
        };
        let mut seen = vec![false; self.nodes.len()];
        let mut stack = roots;
        while let Some(n) = stack.pop() {
            if std::mem::replace(&mut seen[n as usize], true) {
                continue;
            }
            let k = match &self.nodes[n as usize].kind {
                NodeKind::Bool(_) => continue,
                NodeKind::Const(_) => {
                    if scalar_const(n) {
                        continue;
                    }
                    return false;
                }
                NodeKind::Keywords(k) => k,
            };
            let eligible = k.in_place_free()
                && k.dependent_schemas.is_empty()
                && k.pattern_properties.is_empty()
                && k.contains.is_none()
                && (!k.unique_items() || self.items_are_scalars(k))
                && k.unevaluated_items.is_none()
                && k.unevaluated_properties.is_none()
                && k.enum_.iter().flatten().all(|&a| scalar_const(a))
                && k.consts.iter().all(|c| scalar_const(c.node));
            if !eligible {
                return false;
            }
            if let Some(c) = &k.property_names {
                // Checked on each name as a scalar, as the general tier does for a subschema
                // without in-place applicators.
                if !self.nodes[c.node as usize].simple {
                    return false;
                }
            }
            let children = k
                .properties
                .iter()
                .map(|(_, c)| c)
                .chain(&k.additional_properties)
                .chain(&k.prefix_items)
                .chain(&k.items);
            for c in children {
                stack.push(c.node);
            }
        }
        true
    }

    /// Whether every item of an array `k` applies to is a scalar or fails as it begins: each
    /// item has a subschema (`items` covers what `prefixItems` does not) that rejects a
    /// container at its first event (`false`, a scalar constant, a `type` without `object`
    /// and `array`, or scalar-only `enum`/`const`). Then `uniqueItems` compares scalars only.
    fn items_are_scalars(&self, k: &Keywords) -> bool {
        let Some(items) = &k.items else {
            return false;
        };
        k.prefix_items
            .iter()
            .chain(std::iter::once(items))
            .all(|c| match &self.nodes[c.node as usize].kind {
                NodeKind::Bool(b) => !b,
                NodeKind::Const(_) => true,
                NodeKind::Keywords(t) => {
                    t.types
                        .is_some_and(|ty| ty & (types::OBJECT | types::ARRAY) == 0)
                        || t.enum_.is_some()
                        || !t.consts.is_empty()
                }
            })
    }

    /// Appends `/segment` for every segment of label `id` to `out`.
    pub(crate) fn write_label(&self, mut id: u32, out: &mut String) {
        while let Some(l) = self.labels.get(id as usize) {
            out.push('/');
            out.push_str(&l.text);
            id = l.next;
        }
    }

    /// The first segment of label `id` (`"additionalProperties"` for
    /// `additionalProperties/$ref`).
    pub(crate) fn label_head(&self, id: u32) -> &str {
        self.labels
            .get(id as usize)
            .map_or("", |l| l.text.split('/').next().unwrap_or(""))
    }
}

/// The immutable result of compilation.
#[derive(Debug)]
pub(crate) struct Program {
    pub(crate) nodes: Vec<Node>,
    /// Keyword paths of [`Child`] edges.
    pub(crate) labels: Vec<Label>,
    pub(crate) root: NodeId,
    pub(crate) resources: Vec<Resource>,
    /// `(resource, $dynamicAnchor name)` → node.
    pub(crate) dynamic_anchors: HashMap<(u32, Box<str>), NodeId>,
    /// Whether any node uses `$dynamicRef`/`$recursiveRef` dynamically (the runtime keeps a
    /// dynamic scope only then).
    pub(crate) uses_dynamic_scope: bool,
    /// Whether any node uses `unevaluatedProperties`/`unevaluatedItems` (the runtime
    /// tracks evaluated members and items only then).
    pub(crate) uses_unevaluated: bool,
    /// The program lowered for the specialised tier, when every subschema the instance can
    /// reach is one that tier evaluates (see [`Program::fast_tier_applies`]); set once,
    /// after compilation.
    pub(crate) plan: Option<Box<super::fast::Plan>>,
    /// The root's `oneOf`/`anyOf` when the specialised tier dispatches it by a member (see
    /// [`Dispatch`]); only with `plan`.
    pub(crate) dispatch: Option<Dispatch>,
    /// Nodes on in-place reference cycles, sorted. The runtime checks these for re-entry at
    /// the same value: a re-entered subschema's verdict is undecided, and a document whose
    /// verdict depends on one is rejected with `ErrorKind::SchemaCycle`. Empty for almost
    /// every schema.
    pub(crate) cycles: Vec<NodeId>,
}

/// A root `oneOf` or `anyOf` (and nothing else) whose alternatives are closed-typed objects
/// told apart by one member every alternative requires and pins to disjoint scalar values
/// (`"ok": true` / `"ok": false`, `"type": "text"` / `"type": "image"`).
///
/// When that member comes first in the instance, the general tier's verdict is decided by one
/// alternative: at the member's value every other alternative fails (the values are disjoint)
/// and none can have failed before (each alternative accepts any object start and this first
/// name: no `maxProperties: 0`, no `propertyNames`). So the specialised tier evaluates that
/// alternative alone, and reports any failure as the general tier does: the combinator's own
/// keyword at the combinator, at the offset of the event that failed the alternative. When
/// another member comes first, the document goes to the general tier (it has seen only the
/// object's start, which it replays).
#[derive(Debug)]
pub(crate) struct Dispatch {
    /// `"oneOf"` or `"anyOf"`.
    pub(crate) keyword: &'static str,
    /// The member that tells the alternatives apart.
    pub(crate) name: Box<str>,
    pub(crate) branches: Vec<Branch>,
}

/// One alternative of a [`Dispatch`].
#[derive(Debug)]
pub(crate) struct Branch {
    pub(crate) node: NodeId,
    pub(crate) label: u32,
    /// The subschema of the discriminating member in this alternative.
    pub(crate) member: NodeId,
    pub(crate) member_skipped: u32,
    /// The member's index among the alternative's watched names.
    pub(crate) watch: Option<u32>,
}

/// Alternatives of a [`Dispatch`] at most (so the work the general tier counts for the
/// alternatives it keeps on the root object, one unit each per root member, stays far
/// below the per-byte budget either way).
pub(crate) const MAX_DISPATCH_BRANCHES: usize = 16;
