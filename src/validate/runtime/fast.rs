//! The specialised tier: evaluation of programs lowered into a [`Plan`] (those whose every
//! reachable subschema applies nothing else to the same value, see
//! `Program::fast_tier_applies`), with one frame per open container instead of levels of
//! evals, pending lists and folds.
//!
//! In such a program each instance value is seen by at most one subschema, chosen by its
//! parent's `properties`/`additionalProperties`/`items`/`prefixItems` when its name or index
//! is read. So the state is a stack of frames (the subschema of each open container and its
//! object or array record, its member or item count, the watched names seen as bits, the
//! hashes of scalar items under `uniqueItems`, the current member's name or index) and the one
//! edge waiting for the next value. What each keyword does is in its record's file under
//! `crate::schema::fast`; this file walks the records and reports failures.
//!
//! A scalar value is checked in place: one bit test against the kinds its subschema accepts
//! and one against the kinds that have further checks, then those checks. A kind the record
//! does not accept (a type mismatch, a constant of another kind, `false`, `1.0` under
//! `"type":"integer"`) is decided by the general tier's own check on the same value, so the
//! keyword named is the general tier's by construction.
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
use crate::schema::fast::{Edge, Plan, Stop, To};
use crate::schema::keywords::types;
use crate::schema::keywords::Keyword;
use crate::schema::program::{Keywords, NodeId, NodeKind, Program};
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
#[derive(Clone, Copy, Debug)]
pub(super) struct Frame {
    node: NodeId,
    /// Label of the edge that applied `node` to this container (`NONE` for the root).
    label: u32,
    /// The node's object or array record (the empty one when it has no such keywords).
    record: u32,
    object: bool,
    /// Whether the array's items must be unique (their hashes are in `fast_hashes` at this
    /// frame's depth).
    unique: bool,
    count: u64,
    /// The first 64 watched names seen (`required`, `dependentRequired`), as bits.
    seen: u64,
    /// Whether the frame has seen a watched name past the 64th (its bits are then in
    /// `fast_far` at this frame's depth).
    far: bool,
    /// The member-table entry expected next.
    hint: u32,
    /// The member or item being read.
    child: Seg,
    /// Where this frame's copied names start in `fast_names`.
    names_base: u32,
}

impl Frame {
    pub(super) fn new() -> Frame {
        Frame {
            node: 0,
            label: NONE,
            record: 0,
            object: false,
            unique: false,
            count: 0,
            seen: 0,
            far: false,
            hint: 0,
            child: Seg::Index(0),
            names_base: 0,
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
    ///
    /// Inlined into the scanner's delivery of each kind of event, so that the match below
    /// folds away there and each kind goes straight to its own handler.
    #[inline(always)]
    pub(super) fn fast_event(
        &mut self,
        p: &Program,
        plan: &Plan,
        ev: &Event<'_>,
        offset: u64,
    ) -> bool {
        if self.skipped(ev, offset) {
            return true;
        }
        match *ev {
            Event::Name(name) => self.fast_name(p, plan, name, offset),
            Event::EndObject | Event::EndArray => self.fast_end(p, plan, offset),
            Event::BeginObject => self.fast_begin(p, plan, true, offset),
            Event::BeginArray => self.fast_begin(p, plan, false, offset),
            Event::String(s) => self.fast_string(p, plan, s, offset),
            _ => self.fast_other(p, plan, ev, offset),
        }
        self.violations.is_empty() && !self.budget_exceeded
    }

    /// Open frame `i` (0: the root's): the innermost one is kept apart, in `fast_top`.
    fn fast_frame(&self, i: usize) -> &Frame {
        if i + 1 == self.fast_depth {
            &self.fast_top
        } else {
            &self.fast_frames[i]
        }
    }

    /// A member name. The common case (the name the object's table expects next, a property
    /// whose value has a subschema, no `propertyNames` or dispatch) is a few stores here;
    /// everything else is [`fast_name_general`](Self::fast_name_general).
    #[inline(never)]
    fn fast_name(&mut self, p: &Program, plan: &Plan, name: &str, offset: u64) {
        // Under a dispatch, the root object's members also visit the alternatives that
        // have failed (as the general tier does), once one was chosen.
        let extra = match &p.dispatch {
            None => 0,
            Some(_) if self.fast_depth > 1 => 0,
            Some(d) if self.fast_dispatch == DispatchState::On => d.branches.len() as u64,
            Some(_) => return self.fast_name_general(p, plan, name, offset),
        };
        let f = &mut self.fast_top;
        let o = &plan.objects[f.record as usize];
        if !o.counts.too_many(f.count + 1) && o.property_names == NONE {
            if let Some(m) = o.expected(name.as_bytes(), &mut f.hint) {
                if m.direct {
                    f.count += 1;
                    f.seen |= m.bit;
                    f.child = Seg::Prop(m.prop);
                    self.fast_next = m.edge;
                    self.charge(1 + extra);
                    return;
                }
            }
        }
        self.fast_name_general(p, plan, name, offset);
    }

    #[inline(never)]
    fn fast_name_general(&mut self, p: &Program, plan: &Plan, name: &str, offset: u64) {
        if p.dispatch.is_some() && self.fast_depth == 1 && self.fast_dispatch_name(p, name, offset)
        {
            return;
        }
        self.charge(1);
        self.fast_next = NONE;
        let f = &mut self.fast_top;
        f.count += 1;
        let o = &plan.objects[f.record as usize];
        if o.counts.too_many(f.count) {
            let t = self.fast_depth - 1;
            return self.fast_fail(p, At::Frame(t), Keyword::MaxProperties.name(), offset);
        }
        let (prop, edge) = match o.member(name.as_bytes(), &mut f.hint) {
            Some(m) => {
                f.seen |= m.bit;
                if m.far != NONE {
                    self.fast_see_far(m.far);
                }
                (m.prop, m.edge)
            }
            None => (NONE, NONE),
        };
        let f = &mut self.fast_top;
        if prop != NONE {
            f.child = Seg::Prop(prop);
        } else if o.copy_unknown {
            // The name is needed only for the pointer of a failure below it.
            self.fast_copy_name(name);
        }
        if o.property_names != NONE
            && !self.fast_property_name(p, plan, o.property_names, name, offset)
        {
            return;
        }
        let edge = if prop == NONE { o.additional } else { edge };
        if edge != NONE {
            self.fast_apply(p, plan, edge, offset);
        }
    }

    /// A member name of the root object under a dispatch; `true` when nothing else is to
    /// be done with it.
    fn fast_dispatch_name(&mut self, p: &Program, name: &str, offset: u64) -> bool {
        let Some(d) = &p.dispatch else {
            return false;
        };
        match self.fast_dispatch {
            DispatchState::Begun { .. } if *d.name == *name => {
                // The general tier visits the combinator and every alternative.
                self.charge(1 + d.branches.len() as u64);
                self.fast_top.count = 1;
                self.fast_next = NONE;
                self.fast_dispatch = DispatchState::Value;
                true
            }
            DispatchState::Begun { .. } => {
                self.fast_to_general(p, name, offset);
                true
            }
            // Alternatives that have failed are still visited by the general tier.
            _ => {
                self.charge(d.branches.len() as u64);
                false
            }
        }
    }

    /// Records that the innermost frame has seen watched name `w` (64 or more).
    #[cold]
    fn fast_see_far(&mut self, w: u32) {
        let t = self.fast_depth - 1;
        if self.fast_far.len() <= t {
            self.fast_far.resize_with(t + 1, Bits::default);
        }
        if !self.fast_top.far {
            self.fast_far[t].clear();
            self.fast_top.far = true;
        }
        self.fast_far[t].set(w);
    }

    /// Whether the open frame `t` has seen watched name `w`.
    fn fast_seen(&self, t: usize, w: u32) -> bool {
        let f = self.fast_frame(t);
        if w < 64 {
            f.seen & (1 << w) != 0
        } else {
            f.far && self.fast_far[t].get(w)
        }
    }

    /// Records `name` as the current member of the innermost frame, copied.
    fn fast_copy_name(&mut self, name: &str) {
        let base = self.fast_top.names_base;
        self.fast_names.truncate(base as usize);
        self.fast_names.push_str(name);
        self.fast_top.child = Seg::Copied(base, self.fast_names.len() as u32);
    }

    /// `propertyNames` (edge `e`) on a member name; `false` when it failed.
    fn fast_property_name(
        &mut self,
        p: &Program,
        plan: &Plan,
        e: u32,
        name: &str,
        offset: u64,
    ) -> bool {
        let c = &plan.edges[e as usize];
        match c.to {
            To::Anything => true,
            To::Nothing => {
                self.charge(1);
                self.fast_fail_child(c.node, c.label, "false", offset, p);
                false
            }
            To::Schema => {
                self.charge(1 + u64::from(c.skipped));
                match self.fast_check_string(p, plan, c, name) {
                    Ok(()) => true,
                    Err(kw) => {
                        self.fast_fail_child(c.node, c.label, kw, offset, p);
                        false
                    }
                }
            }
        }
    }

    /// Applies the subschema of edge `e` to the next value: `false` fails at once, `true`
    /// leaves the value unconstrained.
    #[inline]
    fn fast_apply(&mut self, p: &Program, plan: &Plan, e: u32, offset: u64) {
        let c = &plan.edges[e as usize];
        match c.to {
            To::Schema => self.fast_next = e,
            To::Anything => {}
            To::Nothing => {
                self.charge(1);
                self.fast_fail_child(c.node, c.label, "false", offset, p);
            }
        }
    }

    /// A string against the target of edge `c`: the record's checks where it accepts
    /// strings, the general tier's own check where it does not.
    #[inline(always)]
    fn fast_check_string(
        &mut self,
        p: &Program,
        plan: &Plan,
        c: &Edge,
        s: &str,
    ) -> Result<(), &'static str> {
        let pn = c.pn;
        if pn.accept & types::STRING == 0 {
            return self.fast_scalar_general(p, c.node, &Event::String(s));
        }
        if pn.checked & types::STRING == 0 {
            return Ok(());
        }
        let mut units = 0;
        let r = plan.scalars[pn.scalar as usize].check_string(s, &mut units);
        self.charge(units);
        self.fast_stop(r)
    }

    /// A scalar against a node whose record does not accept its kind: the general tier's
    /// check decides (and names the keyword).
    #[cold]
    #[inline(never)]
    fn fast_scalar_general(
        &mut self,
        p: &Program,
        node: NodeId,
        ev: &Event<'_>,
    ) -> Result<(), &'static str> {
        let num = match ev {
            Event::Number(n) if node_needs_decimal(p, node) => Decimal::parse(n.as_str()),
            _ => None,
        };
        self.check_scalar(p, node, ev, num.as_ref())
    }

    /// The edge for the value whose first event is at `offset`: for an item, from the
    /// array's record (the item is counted, and `maxItems` checked, here); for a member, the
    /// one its name chose. [`NONE`] when nothing applies to the value (or it has failed).
    #[inline(always)]
    fn fast_take_next(&mut self, p: &Program, plan: &Plan, offset: u64) -> u32 {
        if self.fast_depth > 0 && !self.fast_top.object {
            self.charge(1);
            self.fast_next = NONE;
            let f = &mut self.fast_top;
            let idx = f.count;
            f.count += 1;
            f.child = Seg::Index(idx);
            match plan.arrays[f.record as usize].item(idx) {
                Ok(NONE) => {}
                Ok(e) => self.fast_apply(p, plan, e, offset),
                Err(kw) => {
                    let t = self.fast_depth - 1;
                    self.fast_fail(p, At::Frame(t), kw, offset);
                    return NONE;
                }
            }
        }
        std::mem::replace(&mut self.fast_next, NONE)
    }

    /// Whether the root value goes to the dispatch of a root `oneOf`/`anyOf` (it then
    /// handled it).
    #[inline(always)]
    fn fast_dispatched(&mut self, p: &Program, plan: &Plan, ev: &Event<'_>, offset: u64) -> bool {
        if p.dispatch.is_none() {
            return false;
        }
        if self.fast_depth == 0 {
            self.fast_dispatch_begin(p, plan, ev, offset);
            return true;
        }
        if self.fast_dispatch == DispatchState::Value && self.fast_depth == 1 {
            self.fast_dispatch_choose(p, plan, ev, offset);
            return true;
        }
        false
    }

    /// The edge for the value about to begin, in the common cases, with the item counted
    /// when it is one: a member's value (the edge its name chose, or [`NONE`]), or an item
    /// within `maxItems` whose edge, if any, leads to a subschema. `None` (nothing done) for
    /// the rest: the root value, a dispatch not decided yet, an item past `maxItems` or under
    /// a `true` or `false` edge, which [`fast_take_next`](Self::fast_take_next) handles.
    #[inline(always)]
    fn fast_lean_next(&mut self, p: &Program, plan: &Plan) -> Option<u32> {
        if self.fast_depth == 0 || (p.dispatch.is_some() && self.fast_dispatch != DispatchState::On)
        {
            return None;
        }
        let f = &mut self.fast_top;
        if f.object {
            return Some(self.fast_next);
        }
        let idx = f.count;
        let e = plan.arrays[f.record as usize].item(idx).ok()?;
        if e != NONE && plan.edges[e as usize].to != To::Schema {
            return None;
        }
        f.count += 1;
        f.child = Seg::Index(idx);
        self.charge(1);
        Some(e)
    }

    /// A string value: the common cases here ([`fast_lean_next`](Self::fast_lean_next)),
    /// the others in [`fast_string_general`](Self::fast_string_general).
    #[inline(never)]
    fn fast_string(&mut self, p: &Program, plan: &Plan, s: &str, offset: u64) {
        match self.fast_lean_next(p, plan) {
            Some(e) => self.fast_string_at(p, plan, e, s, offset),
            None => self.fast_string_general(p, plan, s, offset),
        }
    }

    #[inline(never)]
    fn fast_string_general(&mut self, p: &Program, plan: &Plan, s: &str, offset: u64) {
        if p.dispatch.is_some() && self.fast_dispatched(p, plan, &Event::String(s), offset) {
            return;
        }
        let e = self.fast_take_next(p, plan, offset);
        self.fast_string_at(p, plan, e, s, offset);
    }

    /// A string value under edge `e` ([`NONE`]: nothing applies to it).
    #[inline(always)]
    fn fast_string_at(&mut self, p: &Program, plan: &Plan, e: u32, s: &str, offset: u64) {
        self.fast_scalar_at(p, plan, e, &Event::String(s), offset);
    }

    /// A scalar failed its subschema (edge `c`) in its checks.
    #[cold]
    #[inline(never)]
    fn fast_failed(&mut self, p: &Program, c: &Edge, stop: Stop, offset: u64) {
        if let Err(kw) = self.fast_stop(Err(stop)) {
            self.fast_fail_child(c.node, c.label, kw, offset, p);
        }
    }

    /// A number, `true`, `false` or `null` (as [`fast_string`](Self::fast_string)).
    #[inline(never)]
    fn fast_other(&mut self, p: &Program, plan: &Plan, ev: &Event<'_>, offset: u64) {
        match self.fast_lean_next(p, plan) {
            Some(e) => self.fast_other_at(p, plan, e, ev, offset),
            None => self.fast_other_general(p, plan, ev, offset),
        }
    }

    #[inline(never)]
    fn fast_other_general(&mut self, p: &Program, plan: &Plan, ev: &Event<'_>, offset: u64) {
        if self.fast_dispatched(p, plan, ev, offset) {
            return;
        }
        let e = self.fast_take_next(p, plan, offset);
        self.fast_other_at(p, plan, e, ev, offset);
    }

    /// A number or literal under edge `e` ([`NONE`]: nothing applies to it).
    #[inline(always)]
    fn fast_other_at(&mut self, p: &Program, plan: &Plan, e: u32, ev: &Event<'_>, offset: u64) {
        self.fast_scalar_at(p, plan, e, ev, offset);
    }

    /// A scalar under edge `e` ([`NONE`]: nothing applies to it): its kind against the
    /// node's `type`, then the node's scalar checks. Inlined into its two callers, each
    /// with the event's variant known, so a string reaches `check_string` without a match.
    #[inline(always)]
    fn fast_scalar_at(&mut self, p: &Program, plan: &Plan, e: u32, ev: &Event<'_>, offset: u64) {
        if e == NONE {
            return;
        }
        self.fast_next = NONE;
        let c = &plan.edges[e as usize];
        self.charge(1 + u64::from(c.skipped));
        let pn = c.pn;
        let k = types::written(ev, pn.accept);
        let r = if pn.accept & k == 0 {
            self.fast_scalar_general(p, c.node, ev)
        } else if pn.checked & k == 0 {
            Ok(())
        } else {
            let mut units = 0;
            let scalar = &plan.scalars[pn.scalar as usize];
            let r = match ev {
                Event::String(s) => scalar.check_string(s, &mut units),
                Event::Number(n) if pn.decimal => {
                    let num = Decimal::parse(n.as_str());
                    scalar.check(ev, num.as_ref(), &mut units)
                }
                _ => scalar.check(ev, None, &mut units),
            };
            self.charge(units);
            match r {
                Ok(()) => Ok(()),
                Err(stop) => return self.fast_failed(p, c, stop, offset),
            }
        };
        match r {
            Ok(()) => self.fast_scalar_passed(p, ev, offset),
            Err(kw) => self.fast_fail_child(c.node, c.label, kw, offset, p),
        }
    }

    /// A scalar value passed its subschema: the root's verdict, or the next item of an
    /// array under `uniqueItems`.
    #[inline(always)]
    fn fast_scalar_passed(&mut self, p: &Program, ev: &Event<'_>, offset: u64) {
        if self.fast_depth == 0 {
            self.root_result = Some(true);
        } else if self.fast_top.unique {
            self.fast_unique(p, ev, offset);
        }
    }

    /// The end of a record's checks: a failing keyword, or an exhausted pattern budget.
    #[inline(always)]
    fn fast_stop(&mut self, r: Result<(), Stop>) -> Result<(), &'static str> {
        match r {
            Ok(()) => Ok(()),
            Err(Stop::Keyword(kw)) => Err(kw),
            Err(Stop::Budget) => {
                self.budget_exceeded = true;
                Err("pattern")
            }
        }
    }

    /// The start of an object or an array (as [`fast_string`](Self::fast_string)).
    #[inline(never)]
    fn fast_begin(&mut self, p: &Program, plan: &Plan, object: bool, offset: u64) {
        match self.fast_lean_next(p, plan) {
            Some(e) => self.fast_begin_at(p, plan, e, object, offset),
            None => self.fast_begin_general(p, plan, object, offset),
        }
    }

    #[inline(never)]
    fn fast_begin_general(&mut self, p: &Program, plan: &Plan, object: bool, offset: u64) {
        let ev = if object {
            Event::BeginObject
        } else {
            Event::BeginArray
        };
        if self.fast_dispatched(p, plan, &ev, offset) {
            return;
        }
        let e = self.fast_take_next(p, plan, offset);
        self.fast_begin_at(p, plan, e, object, offset);
    }

    /// A container's start under edge `e` ([`NONE`]: nothing applies to it).
    #[inline(always)]
    fn fast_begin_at(&mut self, p: &Program, plan: &Plan, e: u32, object: bool, offset: u64) {
        if e == NONE {
            // Nothing applies to it: skipped to its end.
            if self.violations.is_empty() {
                self.skip = 1;
            }
            return;
        }
        self.fast_next = NONE;
        let c = &plan.edges[e as usize];
        self.charge(u64::from(c.skipped) + 1);
        if self.fast_depth >= MAX_LIVE_EVALS {
            self.budget_exceeded = true;
        }
        let (k, record) = if object {
            (types::OBJECT, c.pn.object)
        } else {
            (types::ARRAY, c.pn.array)
        };
        let unique = !object && plan.arrays[record as usize].bounds.unique;
        self.fast_push(c.node, c.label, record, object, unique);
        if c.pn.accept & k == 0 {
            let t = self.fast_depth - 1;
            let ev = if object {
                Event::BeginObject
            } else {
                Event::BeginArray
            };
            let kw = self.fast_container_fails(p, c.node, &ev);
            self.fast_fail(p, At::Frame(t), kw, offset);
        }
    }

    /// The keyword a container fails as it begins under a node whose record does not accept
    /// it, in the general tier's order: `false`; `type`; then `enum` and `const` (scalar
    /// alternatives only, so they fail).
    #[cold]
    #[inline(never)]
    fn fast_container_fails(&mut self, p: &Program, node: NodeId, ev: &Event<'_>) -> &'static str {
        match &p.nodes[node as usize].kind {
            NodeKind::Bool(_) => "false",
            NodeKind::Const(_) => "const",
            NodeKind::Keywords(k) => self.fast_container_start(k, ev).err().unwrap_or("type"),
        }
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

    /// The root value of a program with a dispatch: an object opens a frame for the
    /// combinator and waits for its first member; anything else fails every alternative
    /// (each requires an object) and so the combinator, at once.
    fn fast_dispatch_begin(&mut self, p: &Program, plan: &Plan, ev: &Event<'_>, offset: u64) {
        let Some(d) = &p.dispatch else { return };
        self.charge(1 + d.branches.len() as u64);
        if !matches!(ev, Event::BeginObject) {
            self.fast_dispatch = DispatchState::Value;
            return self.fast_fail(p, At::Frame(0), "", offset);
        }
        let record = plan.nodes[p.root as usize].object;
        self.fast_push(p.root, NONE, record, true, false);
        self.fast_dispatch = DispatchState::Begun {
            offset,
            line: self.line,
            column: self.column,
        };
    }

    /// The discriminator's value: the alternative whose member subschema accepts it
    /// evaluates the rest of the document; if none does, the combinator fails here.
    fn fast_dispatch_choose(&mut self, p: &Program, plan: &Plan, ev: &Event<'_>, offset: u64) {
        let Some(d) = &p.dispatch else { return };
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
        let f = &mut self.fast_top;
        f.node = b.node;
        f.label = b.label;
        f.record = plan.nodes[b.node as usize].object;
        // The discriminator was the first member, in the table or not.
        f.hint = 0;
        if let Some(w) = b.watch {
            if w < 64 {
                f.seen |= 1 << w;
            } else {
                self.fast_see_far(w);
            }
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
    #[inline(never)]
    fn fast_unique(&mut self, p: &Program, ev: &Event<'_>, offset: u64) {
        self.charge(1);
        let h = self.scalar_hash(ev, None);
        let t = self.fast_depth - 1;
        if !self.fast_hashes[t].insert(h) {
            self.fast_fail(p, At::Frame(t), "uniqueItems", offset);
        }
    }

    /// Opens a frame for a container that `node` applies to. The innermost frame is
    /// `fast_top`; the others are in `fast_frames`, by depth.
    fn fast_push(&mut self, node: NodeId, label: u32, record: u32, object: bool, unique: bool) {
        let d = self.fast_depth;
        if d > 0 {
            // The innermost frame goes down into the stack, in the slot of its depth.
            if self.fast_frames.len() < d {
                self.fast_frames.push(self.fast_top);
            } else {
                self.fast_frames[d - 1] = self.fast_top;
            }
        }
        let names_base = self.fast_names.len() as u32;
        let f = &mut self.fast_top;
        f.node = node;
        f.label = label;
        f.record = record;
        f.object = object;
        f.unique = unique;
        f.count = 0;
        f.seen = 0;
        f.far = false;
        f.hint = 0;
        f.child = Seg::Index(0);
        f.names_base = names_base;
        if unique {
            if self.fast_hashes.len() <= d {
                self.fast_hashes.resize_with(d + 1, || {
                    hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(0))
                });
            }
            self.fast_hashes[d].clear();
        }
        self.fast_depth += 1;
    }

    /// Closes the innermost frame.
    fn fast_pop(&mut self) {
        self.fast_depth -= 1;
        let d = self.fast_depth;
        if d > 0 {
            self.fast_top = self.fast_frames[d - 1];
        }
    }

    #[inline(never)]
    fn fast_end(&mut self, p: &Program, plan: &Plan, offset: u64) {
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
        let f = &self.fast_top;
        let kw = if f.object {
            let o = &plan.objects[f.record as usize];
            let kw = o.end(f.count, f.seen, |i| self.fast_seen(t, i));
            self.charge(o.end_units);
            kw
        } else {
            plan.arrays[f.record as usize].end(f.count)
        };
        if let Some(kw) = kw {
            return self.fast_fail(p, At::Frame(t), kw, offset);
        }
        self.fast_pop();
        if self.fast_depth == 0 {
            self.root_result = Some(true);
        }
    }

    fn fast_fail_child(
        &mut self,
        node: NodeId,
        label: u32,
        keyword: &'static str,
        offset: u64,
        p: &Program,
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
            At::Frame(f) => (f + 1, self.fast_frame(f).node, NONE, f),
            At::Child { node, label } => (self.fast_depth, node, label, self.fast_depth),
        };
        let mut keyword_location = String::new();
        for f in (0..frames).map(|i| self.fast_frame(i)) {
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
            At::Frame(f) => self.fast_frame(f).label,
            At::Child { .. } => label,
        };
        let detail = match at {
            At::Frame(f) => {
                super::super::explain::detail(p, node, keyword, &|w| self.fast_seen(f, w))
            }
            At::Child { .. } => super::super::explain::detail(p, node, keyword, &|_| true),
        };
        let own_keyword = keyword != "false";
        let keyword = false_keyword(p, keyword, own_label);
        let mut instance = String::new();
        for f in (0..levels).map(|i| self.fast_frame(i)) {
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
