//! The specialised tier: evaluation of programs whose every reachable subschema applies
//! nothing else to the same value (see `Program::fast_tier_applies`), with one frame per open
//! container instead of levels of evals, pending lists and folds.
//!
//! In such a program each instance value is seen by at most one subschema, chosen by its
//! parent's `properties`/`additionalProperties`/`items`/`prefixItems` when its name or index
//! is read. So the state is a stack of frames (the subschema of each open container, its
//! member or item count, the watched names seen as bits, the hashes of scalar items under
//! `uniqueItems`, the current member's name or index) and the one subschema waiting for the
//! next value. Scalars are checked in place with the
//! general tier's own checks (`check_scalar`, `check_value`), in the same order.
//!
//! A root `oneOf`/`anyOf` of closed objects told apart by one member (a gate envelope's
//! `ok`) is dispatched when that member comes first: its value picks the one alternative that
//! can still pass, which then runs here alone (see `schema::program::Dispatch` for why that is
//! the general tier's verdict too); with another member first the document switches to the
//! general tier, which is shown the object's start again.
//!
//! The general tier stays the oracle: this tier reports the same first violation (keyword,
//! keyword and absolute locations, instance pointer, offset, line, column) at the same event,
//! charges the evaluation budget the same units at the same events, and is used only when one
//! violation is wanted (`--errors N` collects through the general tier). Tests and the
//! `tiers` fuzz target run both on every input and compare.
//!
//! Member names are not copied when they are names of `properties` (the frame keeps the index
//! and the text is in the program); other names are copied only when a subschema applies to
//! their value, into one buffer used as a stack.

use super::{false_keyword, node_needs_decimal, Bits, Runtime, MAX_LIVE_EVALS, NONE};
use crate::scan::Event;
use crate::schema::decimal::Decimal;
use crate::schema::program::{Child, Keywords, NodeId, NodeKind, Program};
use crate::validate::Violation;

/// How the value one level down is named in its container.
#[derive(Clone, Copy, Debug)]
pub(super) enum Seg {
    Index(u64),
    /// A name of the container's `properties`, by index (its text is in the program).
    Prop(u32),
    /// Another name: bytes `start..end` of `Runtime::fast_names`.
    Copied(u32, u32),
}

/// One open container.
#[derive(Debug)]
pub(super) struct Frame {
    node: NodeId,
    /// Label of the edge that applied `node` to this container (`NONE` for the root).
    label: u32,
    object: bool,
    count: u64,
    /// Watched names seen (`required`, `dependentRequired`).
    seen: Bits,
    /// Whether the array's items must be unique, and the hashes of those seen.
    unique: bool,
    hashes: hashbrown::HashSet<u128, foldhash::fast::FixedState>,
    /// The member or item being read.
    child: Seg,
    /// Where this frame's copied names start in `fast_names`.
    names_base: u32,
}

/// The subschema waiting for the next value.
#[derive(Clone, Copy, Debug)]
pub(super) struct Next {
    node: NodeId,
    label: u32,
    skipped: u32,
}

impl Next {
    pub(super) fn root(p: &Program) -> Next {
        Next {
            node: p.root,
            label: NONE,
            skipped: 0,
        }
    }
}

/// Where the dispatch of a root `oneOf`/`anyOf` stands ([`crate::schema::program::Dispatch`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum DispatchState {
    /// No dispatch (the program has none, or the root value is not an object yet).
    Off,
    /// The root object has begun (at this offset, line and column); no member yet.
    Begun { offset: u64, line: u64, column: u64 },
    /// The first member is the discriminator; its value decides.
    Value,
    /// One alternative evaluates the document; the rest have failed.
    On,
}

/// Which subschema failed: an open container's, or the one applied to the value below the
/// innermost container (or to the root scalar).
#[derive(Clone, Copy)]
enum At {
    Frame(usize),
    Child { node: NodeId, label: u32 },
}

impl Runtime {
    /// Handles one event in the specialised tier; `false` once the document is known to be
    /// invalid (as the general tier's `event`).
    #[inline(never)]
    pub(super) fn fast_event(&mut self, p: &Program, ev: &Event<'_>, offset: u64) -> bool {
        if self.skipped(ev, offset) {
            return true;
        }
        match ev {
            Event::Name(name) => self.fast_name(p, name, offset),
            Event::EndObject | Event::EndArray => self.fast_end(p, offset),
            _ => self.fast_value(p, ev, offset),
        }
        self.violations.is_empty() && !self.budget_exceeded
    }

    fn fast_name(&mut self, p: &Program, name: &str, offset: u64) {
        let t = self.fast_depth - 1;
        if t == 0 {
            if let Some(d) = &p.dispatch {
                match self.fast_dispatch {
                    DispatchState::Begun { .. } if *d.name == *name => {
                        // The general tier visits the combinator and every alternative.
                        self.charge(1 + d.branches.len() as u64);
                        self.fast_frames[0].count = 1;
                        self.fast_next = None;
                        self.fast_dispatch = DispatchState::Value;
                        return;
                    }
                    DispatchState::Begun { .. } => return self.fast_to_general(p, name, offset),
                    // Alternatives that have failed are still visited by the general tier.
                    _ => self.charge(d.branches.len() as u64),
                }
            }
        }
        self.charge(1);
        self.fast_next = None;
        let f = &mut self.fast_frames[t];
        f.count += 1;
        let count = f.count;
        let NodeKind::Keywords(k) = &p.nodes[f.node as usize].kind else {
            return;
        };
        if !k.names_wanted {
            return;
        }
        if k.max_properties.is_some_and(|m| count > m) {
            return self.fast_fail(p, At::Frame(t), "maxProperties", offset);
        }
        let (prop, watched) = k.member_at(name);
        if let Some(w) = watched {
            f.seen.set(w);
        }
        match prop {
            Some(i) => f.child = Seg::Prop(i),
            // The name is needed only for the pointer of a failure below it.
            None if k.additional_properties.is_some() || k.property_names.is_some() => {
                self.fast_copy_name(t, name);
            }
            None => {}
        }
        if let Some(c) = &k.property_names {
            if !self.fast_property_name(p, c, name, offset) {
                return;
            }
        }
        let edge = match prop {
            Some(i) => Some(&k.properties[i as usize].1),
            None => k.additional_properties.as_ref(),
        };
        if let Some(c) = edge {
            self.fast_apply(p, c, offset);
        }
    }

    /// Records `name` as the current member of frame `t`, copied.
    fn fast_copy_name(&mut self, t: usize, name: &str) {
        let base = self.fast_frames[t].names_base;
        self.fast_names.truncate(base as usize);
        self.fast_names.push_str(name);
        self.fast_frames[t].child = Seg::Copied(base, self.fast_names.len() as u32);
    }

    /// `propertyNames` on a member name; `false` when it failed.
    fn fast_property_name(&mut self, p: &Program, c: &Child, name: &str, offset: u64) -> bool {
        if let NodeKind::Bool(b) = p.nodes[c.node as usize].kind {
            if !b {
                self.charge(1);
                self.fast_fail_child(p, c.node, c.label, "false", offset);
            }
            return b;
        }
        self.charge(1 + u64::from(c.skipped));
        let ev = Event::String(name);
        match self.check_scalar(p, c.node, &ev, None) {
            Ok(()) => true,
            Err(kw) => {
                self.fast_fail_child(p, c.node, c.label, kw, offset);
                false
            }
        }
    }

    /// Applies the subschema of edge `c` to the next value: `false` fails at once, `true`
    /// leaves the value unconstrained.
    #[inline]
    fn fast_apply(&mut self, p: &Program, c: &Child, offset: u64) {
        match p.nodes[c.node as usize].kind {
            NodeKind::Bool(true) => {}
            NodeKind::Bool(false) => {
                self.charge(1);
                self.fast_fail_child(p, c.node, c.label, "false", offset);
            }
            _ => {
                self.fast_next = Some(Next {
                    node: c.node,
                    label: c.label,
                    skipped: c.skipped,
                });
            }
        }
    }

    fn fast_value(&mut self, p: &Program, ev: &Event<'_>, offset: u64) {
        if let Some(d) = &p.dispatch {
            if self.fast_depth == 0 {
                return self.fast_dispatch_begin(p, d, ev, offset);
            }
            if self.fast_dispatch == DispatchState::Value && self.fast_depth == 1 {
                return self.fast_dispatch_choose(p, d, ev, offset);
            }
        }
        if self.fast_depth > 0 && !self.fast_frames[self.fast_depth - 1].object {
            let t = self.fast_depth - 1;
            self.charge(1);
            self.fast_next = None;
            let f = &mut self.fast_frames[t];
            let idx = f.count;
            f.count += 1;
            f.child = Seg::Index(idx);
            if let NodeKind::Keywords(k) = &p.nodes[f.node as usize].kind {
                if k.max_items.is_some_and(|m| idx + 1 > m) {
                    return self.fast_fail(p, At::Frame(t), "maxItems", offset);
                }
                let edge = k.prefix_items.get(idx as usize).or(k.items.as_ref());
                if let Some(c) = edge {
                    self.fast_apply(p, c, offset);
                }
            }
        }
        let container = matches!(ev, Event::BeginObject | Event::BeginArray);
        let Some(next) = self.fast_next.take() else {
            if container {
                self.skip = 1;
            }
            return;
        };
        if !container {
            self.charge(1 + u64::from(next.skipped));
            let owned;
            let num = match ev {
                Event::Number(n) if node_needs_decimal(p, next.node) => {
                    owned = Decimal::parse(n.as_str());
                    owned.as_ref()
                }
                _ => None,
            };
            match self.check_scalar(p, next.node, ev, num) {
                Ok(()) => {
                    if self.fast_depth == 0 {
                        self.root_result = Some(true);
                    } else if self.fast_frames[self.fast_depth - 1].unique {
                        self.fast_unique(ev, num, offset, p);
                    }
                }
                Err(kw) => self.fast_fail_child(p, next.node, next.label, kw, offset),
            }
            return;
        }
        if next.skipped > 0 {
            self.charge(u64::from(next.skipped));
        }
        self.charge(1);
        if self.fast_depth >= MAX_LIVE_EVALS {
            self.budget_exceeded = true;
        }
        let object = matches!(ev, Event::BeginObject);
        self.fast_push(next.node, next.label, object);
        let t = self.fast_depth - 1;
        let kw = match &p.nodes[next.node as usize].kind {
            NodeKind::Bool(true) => return,
            NodeKind::Bool(false) => "false",
            // Only scalar constants reach this tier: a container never equals one.
            NodeKind::Const(_) => "const",
            NodeKind::Keywords(k) => match self.fast_container_start(k, ev) {
                Ok(()) if k.unique_items && !object => {
                    self.fast_frames[t].unique = true;
                    return;
                }
                Ok(()) => return,
                Err(kw) => kw,
            },
        };
        self.fast_fail(p, At::Frame(t), kw, offset);
    }

    /// The root value of a program with a dispatch: an object opens a frame for the
    /// combinator and waits for its first member; anything else fails every alternative
    /// (each requires an object) and so the combinator, at once.
    fn fast_dispatch_begin(
        &mut self,
        p: &Program,
        d: &crate::schema::program::Dispatch,
        ev: &Event<'_>,
        offset: u64,
    ) {
        self.charge(1 + d.branches.len() as u64);
        if !matches!(ev, Event::BeginObject) {
            self.fast_dispatch = DispatchState::Value;
            return self.fast_fail(p, At::Frame(0), "", offset);
        }
        self.fast_push(p.root, NONE, true);
        self.fast_dispatch = DispatchState::Begun {
            offset,
            line: self.line,
            column: self.column,
        };
    }

    /// The discriminator's value: the alternative whose member subschema accepts it
    /// evaluates the rest of the document; if none does, the combinator fails here.
    fn fast_dispatch_choose(
        &mut self,
        p: &Program,
        d: &crate::schema::program::Dispatch,
        ev: &Event<'_>,
        offset: u64,
    ) {
        let container = matches!(ev, Event::BeginObject | Event::BeginArray);
        let mut chosen = None;
        let mut parsed: Option<Option<Decimal>> = None;
        for (i, b) in d.branches.iter().enumerate() {
            self.charge(1 + u64::from(b.member_skipped));
            if container {
                // Every member subschema allows listed scalars only.
                continue;
            }
            let num = match ev {
                Event::Number(n) if node_needs_decimal(p, b.member) => parsed
                    .get_or_insert_with(|| Decimal::parse(n.as_str()))
                    .as_ref(),
                _ => None,
            };
            if self.check_scalar(p, b.member, ev, num).is_ok() {
                chosen = Some(i);
                break;
            }
        }
        let Some(i) = chosen else {
            return self.fast_fail(p, At::Frame(0), "", offset);
        };
        let b = &d.branches[i];
        let f = &mut self.fast_frames[0];
        f.node = b.node;
        f.label = b.label;
        if let Some(w) = b.watch {
            f.seen.set(w);
        }
        self.fast_dispatch = DispatchState::On;
    }

    /// The root object ended before any member (`{}`): the general tier decides it.
    fn fast_end_undispatched(&mut self, p: &Program, offset: u64) {
        if let DispatchState::Begun {
            offset: begin,
            line,
            column,
        } = self.fast_dispatch
        {
            self.fast_replay(p, begin, line, column);
            self.general_event(p, &Event::EndObject, offset);
        }
    }

    /// The first member of the root object is not the discriminator: the document goes to
    /// the general tier, which is given the object's start again and then this name.
    fn fast_to_general(&mut self, p: &Program, name: &str, offset: u64) {
        if let DispatchState::Begun {
            offset: begin,
            line,
            column,
        } = self.fast_dispatch
        {
            self.fast_replay(p, begin, line, column);
            self.general_event(p, &Event::Name(name), offset);
        }
    }

    /// Switches this document to the general tier and replays the root object's start.
    fn fast_replay(&mut self, p: &Program, begin: u64, line: u64, column: u64) {
        self.fast_mode = false;
        self.fast_dispatch = DispatchState::Off;
        self.reset_general(p);
        let (l, c) = (self.line, self.column);
        self.line = line;
        self.column = column;
        self.general_event(p, &Event::BeginObject, begin);
        self.line = l;
        self.column = c;
    }

    /// `uniqueItems`: the scalar item just checked against those before it (by the general
    /// tier's canonical hash, so `1` and `1.0` collide).
    fn fast_unique(&mut self, ev: &Event<'_>, num: Option<&Decimal>, offset: u64, p: &Program) {
        self.charge(1);
        let h = self.scalar_hash(ev, num);
        let t = self.fast_depth - 1;
        if !self.fast_frames[t].hashes.insert(h) {
            self.fast_fail(p, At::Frame(t), "uniqueItems", offset);
        }
    }

    /// Opens a frame for a container that `node` applies to.
    fn fast_push(&mut self, node: NodeId, label: u32, object: bool) {
        let names_base = self.fast_names.len() as u32;
        if self.fast_frames.len() == self.fast_depth {
            self.fast_frames.push(Frame {
                node,
                label,
                object,
                count: 0,
                seen: Bits::default(),
                unique: false,
                hashes: hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(0)),
                child: Seg::Index(0),
                names_base,
            });
        } else {
            let f = &mut self.fast_frames[self.fast_depth];
            f.node = node;
            f.label = label;
            f.object = object;
            f.count = 0;
            f.seen.clear();
            f.unique = false;
            f.hashes.clear();
            f.names_base = names_base;
        }
        self.fast_depth += 1;
    }

    /// The keywords a container is checked against when it begins, in the general tier's
    /// order: `type`, then `enum` and `const` (scalar alternatives only, so they fail).
    fn fast_container_start(&mut self, k: &Keywords, ev: &Event<'_>) -> Result<(), &'static str> {
        self.check_value(k, ev, None)?;
        if k.plain {
            return Ok(());
        }
        if let Some(alts) = &k.enum_ {
            self.charge(alts.len() as u64 / 8);
            return Err("enum");
        }
        if !k.consts.is_empty() {
            return Err("const");
        }
        Ok(())
    }

    fn fast_end(&mut self, p: &Program, offset: u64) {
        let t = self.fast_depth - 1;
        self.charge(1);
        if t == 0 {
            if let Some(d) = &p.dispatch {
                if self.fast_dispatch != DispatchState::On {
                    // `{}`: no alternative was chosen; evaluate it in the general tier.
                    return self.fast_end_undispatched(p, offset);
                }
                self.charge(d.branches.len() as u64);
            }
        }
        let f = &self.fast_frames[t];
        if let NodeKind::Keywords(k) = &p.nodes[f.node as usize].kind {
            let count = f.count;
            let kw = if f.object {
                self.charge((k.required_watch.len() + k.dependent_required_watch.len()) as u64 / 8);
                let f = &self.fast_frames[t];
                if k.min_properties.is_some_and(|m| count < m) {
                    Some("minProperties")
                } else if !f.seen.has_all(k.required_mask, &k.required_far) {
                    Some("required")
                } else if k
                    .dependent_required_watch
                    .iter()
                    .any(|(key, names)| f.seen.get(*key) && names.iter().any(|&n| !f.seen.get(n)))
                {
                    Some(k.dependent_required_keyword())
                } else {
                    None
                }
            } else if k.min_items.is_some_and(|m| count < m) {
                Some("minItems")
            } else {
                None
            };
            if let Some(kw) = kw {
                return self.fast_fail(p, At::Frame(t), kw, offset);
            }
        }
        self.fast_depth -= 1;
        if self.fast_depth == 0 {
            self.root_result = Some(true);
        }
    }

    fn fast_fail_child(
        &mut self,
        p: &Program,
        node: NodeId,
        label: u32,
        keyword: &'static str,
        offset: u64,
    ) {
        self.fast_fail(p, At::Child { node, label }, keyword, offset);
    }

    /// Records the violation of `at`'s subschema for `keyword`, decided at `offset`.
    #[cold]
    #[inline(never)]
    fn fast_fail(&mut self, p: &Program, at: At, keyword: &'static str, offset: u64) {
        self.root_result = Some(false);
        if !self.violations.is_empty() {
            return;
        }
        if let (Some(d), true) = (&p.dispatch, self.fast_dispatch != DispatchState::Off) {
            // Under a dispatch every failure is the last alternative's, so the combinator's.
            self.violations.push(Violation {
                keyword: d.keyword,
                detail: String::new(),
                own_keyword: true,
                keyword_location: format!("/{}", d.keyword),
                absolute_location: p.nodes[p.root as usize].location.to_string(),
                instance_pointer: String::new(),
                offset,
                line: self.line,
                column: self.column,
            });
            return;
        }
        // Frames whose labels lead to the failing subschema, and the levels of the pointer.
        let (frames, node, label, levels) = match at {
            At::Frame(f) => (f + 1, self.fast_frames[f].node, NONE, f),
            At::Child { node, label } => (self.fast_depth, node, label, self.fast_depth),
        };
        let mut keyword_location = String::new();
        for f in &self.fast_frames[..frames] {
            if f.label != NONE {
                p.write_label(f.label, &mut keyword_location);
            }
        }
        if label != NONE {
            p.write_label(label, &mut keyword_location);
        }
        if keyword != "false" {
            keyword_location.push('/');
            keyword_location.push_str(keyword);
        }
        let own_label = match at {
            At::Frame(f) => self.fast_frames[f].label,
            At::Child { .. } => label,
        };
        let detail = match at {
            At::Frame(f) => {
                let seen = &self.fast_frames[f].seen;
                super::super::explain::detail(p, node, keyword, &|w| seen.get(w))
            }
            At::Child { .. } => super::super::explain::detail(p, node, keyword, &|_| true),
        };
        let own_keyword = keyword != "false";
        let keyword = false_keyword(p, keyword, own_label);
        let mut instance = String::new();
        for f in &self.fast_frames[..levels] {
            match f.child {
                Seg::Index(i) => crate::pointer::push_index(&mut instance, i),
                Seg::Prop(i) => {
                    if let NodeKind::Keywords(k) = &p.nodes[f.node as usize].kind {
                        crate::pointer::push_name(&mut instance, &k.properties[i as usize].0);
                    }
                }
                Seg::Copied(a, b) => {
                    crate::pointer::push_name(
                        &mut instance,
                        &self.fast_names[a as usize..b as usize],
                    );
                }
            }
        }
        self.violations.push(Violation {
            keyword,
            detail,
            own_keyword,
            keyword_location,
            absolute_location: p.nodes[node as usize].location.to_string(),
            instance_pointer: instance,
            offset,
            line: self.line,
            column: self.column,
        });
    }
}
