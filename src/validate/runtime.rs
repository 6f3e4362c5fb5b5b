//! The per-document evaluation state: which subschemas apply to each open value, and how
//! their results fold together as values close.
//!
//! Every (subschema, instance value) pair being evaluated is an `Eval` in an arena that is
//! reused between documents. Each open instance value is a `Level` holding its evals: the
//! ones its parent created for it (through `properties`, `items`, …) followed by the in-place
//! ones they spawned (`allOf`, `$ref`, `anyOf`, …), which therefore come later in the list.
//! When a value closes, its evals are finalised from the last to the first, so every
//! in-place child reports to its parent before the parent folds its own result.
//!
//! A failure is propagated upwards at once; when it reaches the root the document is
//! rejected at that very event, and the scanner stops reading. Nothing of the instance is
//! kept but what a keyword needs: member indices, per-member flags, item hashes.

use std::hash::{BuildHasher, Hasher};

use crate::scan::Event;
use crate::schema::decimal::Decimal;
use crate::schema::keywords::types;
use crate::schema::keywords::values::{starts as const_start, Const};
use crate::schema::keywords::{Keyword, Stop};
use crate::schema::program::{Child, Dynamic, Keywords, NodeId, NodeKind, Program};

use super::Violation;

mod fast;

const NONE: u32 = u32::MAX;

/// Evaluations that may be alive at once (about 200 bytes each); more is reported as an
/// exhausted budget.
pub(crate) const MAX_LIVE_EVALS: usize = 100_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum St {
    Running,
    Passed,
    Failed,
}

/// How an eval's result reaches its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Root,
    /// Conjunctive, same value: `allOf`, `$ref`, `const`, dynamic references.
    AllOf,
    AnyOf,
    OneOf,
    Not,
    If,
    Then,
    Else,
    Dep(u32),
    Enum,
    /// Conjunctive, child value: `properties`, `patternProperties`, `additionalProperties`,
    /// members of an object constant.
    Member,
    PropertyName,
    /// Conjunctive, child value: `prefixItems`, `items`, items of an array constant.
    Item,
    Contains(u32),
    UnevalMember(u32),
    UnevalItem(u32),
}

/// A growable bit set whose first 64 bits live inline, so that the usual small object
/// (fewer than 64 watched names) never touches the heap, even after `clear`.
#[derive(Default, Debug)]
struct Bits {
    first: u64,
    /// Words 1 and up, as far as the highest one set or merged in.
    rest: Vec<u64>,
}

impl Bits {
    #[inline]
    fn clear(&mut self) {
        self.first = 0;
        self.rest.clear();
    }
    #[inline]
    fn set(&mut self, i: u32) {
        let w = i / 64;
        if w == 0 {
            self.first |= 1 << i;
        } else {
            self.set_far(w, i);
        }
    }
    #[cold]
    fn set_far(&mut self, w: u32, i: u32) {
        let r = (w - 1) as usize;
        if self.rest.len() <= r {
            self.rest.resize(r + 1, 0);
        }
        self.rest[r] |= 1 << (i % 64);
    }
    #[inline]
    fn get(&self, i: u32) -> bool {
        let w = i / 64;
        if w == 0 {
            self.first & (1 << i) != 0
        } else {
            self.rest
                .get((w - 1) as usize)
                .is_some_and(|x| x & (1 << (i % 64)) != 0)
        }
    }
    /// Words in use: one past the highest word set or merged in (0 when empty).
    fn words(&self) -> u64 {
        if self.rest.is_empty() {
            u64::from(self.first != 0)
        } else {
            self.rest.len() as u64 + 1
        }
    }
    /// Whether the bits of `mask` (bits 0 to 63) and the bits listed in `far` (64 and up)
    /// are all set.
    #[inline]
    fn has_all(&self, mask: u64, far: &[u32]) -> bool {
        self.first & mask == mask && far.iter().all(|&i| self.get(i))
    }
    fn union(&mut self, other: &Bits) {
        self.first |= other.first;
        if self.rest.len() < other.rest.len() {
            self.rest.resize(other.rest.len(), 0);
        }
        for (a, b) in self.rest.iter_mut().zip(&other.rest) {
            *a |= b;
        }
    }
    fn set_all(&mut self, n: u64) {
        for i in 0..n {
            self.set(i as u32);
        }
    }
}

#[derive(Debug)]
struct Eval {
    node: NodeId,
    parent: u32,
    slot: Slot,
    /// Label of the edge from the parent (`NONE` for the root).
    label: u32,
    /// Instance level this eval applies to.
    level: u32,
    /// Dynamic scope entry.
    scope: u32,
    st: St,
    reported: bool,
    // Folding of in-place children.
    any_pass: u32,
    any_fail: u32,
    one_pass: u32,
    one_fail: u32,
    enum_alts: u32,
    enum_pass: u32,
    enum_fail: u32,
    if_res: Option<bool>,
    then_failed: bool,
    else_failed: bool,
    /// Set when this eval's verdict depends on a subschema that evaluation re-entered at the
    /// same value (an in-place cycle): where that happened. A failure still wins.
    undecided: Option<Cause>,
    /// An undecided `anyOf`/`oneOf` alternative or `then`/`else` branch, which matters only
    /// if no alternative passes or the branch is the one `if` selects.
    maybe: Option<Cause>,
    any_undef: u32,
    one_undef: u32,
    then_undef: bool,
    else_undef: bool,
    /// `if` itself is undecided: the verdict depends on it unless no branch can fail.
    if_undef: bool,
    /// Items whose `contains` verdict is undecided.
    contains_undef: u64,
    /// `dependentSchemas` whose subschema is undecided (they matter once their name is seen).
    dep_undef: Bits,
    contains: u64,
    /// Watched names seen (`required`, `dependentRequired`, `dependentSchemas` keys).
    seen: Bits,
    dep_failed: Bits,
    /// Members/items evaluated (for `unevaluated*`), and the speculative results of
    /// `unevaluated*` on each of them.
    evaluated: Bits,
    uneval_ok: Bits,
    unique: hashbrown::HashSet<u128, foldhash::fast::FixedState>,
}

impl Eval {
    fn new() -> Self {
        Eval {
            node: 0,
            parent: NONE,
            slot: Slot::Root,
            label: NONE,
            level: 0,
            scope: NONE,
            st: St::Running,
            reported: false,
            any_pass: 0,
            any_fail: 0,
            one_pass: 0,
            one_fail: 0,
            enum_alts: 0,
            enum_pass: 0,
            enum_fail: 0,
            if_res: None,
            then_failed: false,
            else_failed: false,
            undecided: None,
            maybe: None,
            any_undef: 0,
            one_undef: 0,
            then_undef: false,
            else_undef: false,
            if_undef: false,
            contains_undef: 0,
            dep_undef: Bits::default(),
            contains: 0,
            seen: Bits::default(),
            dep_failed: Bits::default(),
            evaluated: Bits::default(),
            uneval_ok: Bits::default(),
            unique: hashbrown::HashSet::with_hasher(foldhash::fast::FixedState::with_seed(0)),
        }
    }

    /// An open cause (an undecided alternative, branch, dependency or item) turned out to
    /// matter: the eval's own verdict is undecided.
    fn open_matters(&mut self) {
        if let Some(c) = self.maybe.clone() {
            self.undecided.get_or_insert(c);
        }
    }

    fn reset(&mut self, node: NodeId, parent: u32, slot: Slot, label: u32, level: u32, scope: u32) {
        self.node = node;
        self.parent = parent;
        self.slot = slot;
        self.label = label;
        self.level = level;
        self.scope = scope;
        self.st = St::Running;
        self.reported = false;
        self.any_pass = 0;
        self.any_fail = 0;
        self.one_pass = 0;
        self.one_fail = 0;
        self.enum_alts = 0;
        self.enum_pass = 0;
        self.enum_fail = 0;
        self.if_res = None;
        self.then_failed = false;
        self.else_failed = false;
        self.undecided = None;
        self.maybe = None;
        self.any_undef = 0;
        self.one_undef = 0;
        self.then_undef = false;
        self.else_undef = false;
        self.if_undef = false;
        self.contains_undef = 0;
        self.dep_undef.clear();
        self.contains = 0;
        self.seen.clear();
        self.dep_failed.clear();
        self.evaluated.clear();
        self.uneval_ok.clear();
        self.unique.clear();
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Container {
    Scalar,
    Object,
    Array,
}

#[derive(Debug)]
struct Level {
    evals: Vec<u32>,
    container: Container,
    /// Members or items seen so far.
    count: u64,
    /// This value's segment in its parent: a member name or an index.
    name: String,
    index: Option<u64>,
    /// Canonical hash of the value so far, when an enclosing array asks for `uniqueItems`.
    hashing: bool,
    /// Whether some eval of this array asks for `uniqueItems`.
    unique: bool,
    hash: u128,
    /// Hash of the current member name (objects being hashed).
    name_hash: u128,
    /// The first member names of this object, in order, while the program uses
    /// `unevaluatedProperties` (at most [`KEPT_NAMES`] names and [`KEPT_NAME_BYTES`] bytes):
    /// an unevaluated member is found only when the object closes, and named then.
    kept: Vec<Box<str>>,
    /// The bytes of the names in `kept`.
    kept_bytes: usize,
}

/// How many member names of one open object are kept to name an unevaluated property; past
/// this (or [`KEPT_NAME_BYTES`]) the violation points at the object itself. With 128 levels
/// open, the names kept take at most 2 MiB.
const KEPT_NAMES: usize = 1024;
/// How many bytes of member names of one open object are kept.
const KEPT_NAME_BYTES: usize = 16 << 10;

impl Level {
    fn new() -> Self {
        Level {
            evals: Vec::new(),
            container: Container::Scalar,
            count: 0,
            name: String::new(),
            index: None,
            hashing: false,
            unique: false,
            hash: 0,
            name_hash: 0,
            kept: Vec::new(),
            kept_bytes: 0,
        }
    }
}

/// A subschema waiting for the child value it applies to.
#[derive(Clone, Copy, Debug)]
struct Pending {
    node: NodeId,
    parent: u32,
    slot: Slot,
    label: u32,
    /// `$ref`-only subschemas the edge went through (counted against the budget).
    skipped: u32,
}

/// Where evaluation re-entered a subschema at the same value: the keyword location of the
/// re-entering edge, and the value's offset, line, column and pointer.
#[derive(Debug)]
pub(crate) struct Reentry {
    pub(crate) keyword_location: Box<str>,
    pub(crate) offset: u64,
    pub(crate) line: u64,
    pub(crate) column: u64,
    pub(crate) pointer: Box<str>,
}

/// A re-entry, shared by every eval whose verdict it leaves open.
type Cause = std::sync::Arc<Reentry>;

/// Why an eval failed: which eval and keyword, at which event.
#[derive(Clone, Copy, Debug)]
struct Reason {
    eval: u32,
    keyword: &'static str,
    offset: u64,
    /// The member of the eval's object that failed (`unevaluatedProperties`), or [`NONE`].
    member: u32,
}

/// The mutable state of one validation.
pub(crate) struct Runtime {
    evals: Vec<Eval>,
    free: Vec<u32>,
    levels: Vec<Level>,
    depth: usize,
    /// Subschemas to apply to the next child value; they become evals (or are checked
    /// inline, for scalars and simple subschemas) when the value begins.
    pending: Vec<Pending>,
    /// An empty list with capacity, swapped with `pending` while `propertyNames` runs.
    spare_pending: Vec<Pending>,
    /// Dynamic scope entries: (resource, parent entry).
    scopes: Vec<(u32, u32)>,
    /// Violations found, in the order their failures reached the root.
    pub(crate) violations: Vec<Violation>,
    /// Depth inside a value that no subschema constrains (0 when not skipping).
    skip: u32,
    /// How many violations to collect before stopping (1: stop at the first).
    pub(crate) max_errors: usize,
    pub(crate) budget_exceeded: bool,
    /// Set (with `budget_exceeded`) when the root's verdict depends on a subschema that
    /// evaluation re-entered at the same value (an in-place cycle): where it re-entered.
    pub(crate) schema_cycle: Option<Cause>,
    /// Work units charged so far in this document (see [`Runtime::charge`]).
    work: u64,
    /// Fixed work units allowed per document.
    pub(crate) budget: u64,
    /// Further units allowed per input byte read.
    pub(crate) budget_per_byte: u64,
    /// `budget + budget_per_byte × bytes read so far` (up to the first byte of a recent
    /// token; see [`Runtime::refresh_allowance`]).
    allowance: u64,
    /// Offset of the event being processed.
    event_offset: u64,
    root_result: Option<bool>,
    /// Line and column of the event being processed (every failure is decided at one).
    pub(crate) line: u64,
    pub(crate) column: u64,
    hasher: foldhash::quality::FixedState,
    /// Whether this document runs in the specialised tier (`fast.rs`): the program allows
    /// it, one violation is wanted, and the general tier is not forced.
    fast_mode: bool,
    /// Run the general tier even where the specialised one applies (for comparison).
    pub(crate) force_general: bool,
    /// The open frames of the specialised tier but the innermost, by depth.
    fast_frames: Vec<fast::Frame>,
    /// The innermost open frame (when `fast_depth > 0`).
    fast_top: fast::Frame,
    fast_depth: usize,
    /// The edge (into the plan's edges) waiting for the next value, or `NONE`.
    fast_next: u32,
    fast_names: String,
    fast_dispatch: fast::DispatchState,
    /// The watched names past the 64th that each open frame has seen, by depth.
    fast_far: Vec<Bits>,
    /// The hashes of the items of each open array under `uniqueItems`, by depth.
    fast_hashes: Vec<hashbrown::HashSet<u128, foldhash::fast::FixedState>>,
}

fn node_needs_decimal(p: &Program, node: NodeId) -> bool {
    match &p.nodes[node as usize].kind {
        NodeKind::Keywords(k) => k.needs_decimal,
        NodeKind::Const(_) => true,
        NodeKind::Bool(_) => false,
    }
}

impl Runtime {
    pub(crate) fn new() -> Self {
        Runtime {
            evals: Vec::new(),
            free: Vec::new(),
            levels: Vec::new(),
            depth: 0,
            pending: Vec::new(),
            spare_pending: Vec::new(),
            scopes: Vec::new(),
            violations: Vec::new(),
            skip: 0,
            max_errors: 1,
            budget_exceeded: false,
            schema_cycle: None,
            work: 0,
            budget: 0,
            budget_per_byte: 0,
            allowance: 0,
            event_offset: 0,
            root_result: None,
            line: 1,
            column: 1,
            hasher: foldhash::quality::FixedState::with_seed(0x6a73_6f6e_6761_7465),
            fast_mode: false,
            force_general: false,
            fast_frames: Vec::new(),
            fast_top: fast::Frame::new(),
            fast_depth: 0,
            fast_next: NONE,
            fast_names: String::new(),
            fast_dispatch: fast::DispatchState::Off,
            fast_far: Vec::new(),
            fast_hashes: Vec::new(),
        }
    }

    /// Whether the current document runs in the specialised tier.
    pub(crate) fn fast_mode(&self) -> bool {
        self.fast_mode
    }

    pub(crate) fn reset(&mut self, p: &Program) {
        self.fast_mode = p.plan.is_some() && self.max_errors <= 1 && !self.force_general;
        if let (Some(plan), true) = (&p.plan, self.fast_mode) {
            self.reset_common();
            self.fast_depth = 0;
            self.fast_next = plan.root_edge();
            self.fast_names.clear();
            self.fast_dispatch = fast::DispatchState::Off;
            return;
        }
        self.reset_general(p);
    }

    /// The state both tiers share, for a new document.
    fn reset_common(&mut self) {
        self.violations.clear();
        self.skip = 0;
        self.budget_exceeded = false;
        self.schema_cycle = None;
        self.work = 0;
        self.allowance = self.budget;
        self.event_offset = 0;
        self.root_result = None;
    }

    /// Prepares the general tier for a new document.
    fn reset_general(&mut self, p: &Program) {
        self.free.clear();
        self.free.extend((0..self.evals.len() as u32).rev());
        self.depth = 0;
        self.pending.clear();
        self.scopes.clear();
        self.reset_common();
        if p.uses_dynamic_scope {
            self.scopes.push((p.nodes[p.root as usize].resource, NONE));
        }
        self.pending.push(Pending {
            node: p.root,
            parent: NONE,
            slot: Slot::Root,
            label: NONE,
            skipped: 0,
        });
    }

    /// Whether the document's verdict is known to be negative.
    pub(crate) fn failed(&self) -> bool {
        self.violations.len() >= self.max_errors.max(1) || self.budget_exceeded
    }

    /// The verdict once the whole document was seen.
    pub(crate) fn passed(&self) -> bool {
        self.root_result == Some(true)
    }

    /// Charges `n` units of work against the evaluation budget.
    ///
    /// The unit: one subschema evaluation started (an eval, or a check made in place on a
    /// scalar), one visit of an active subschema per member name, item or container end, one
    /// `$ref` an edge goes through, and for the keywords whose cost grows with the data, one
    /// per 16 bytes a pattern or format reads, per 64 bytes a string comparison or length
    /// count reads, per 8 names a `required`-style check tests, per 8 constants an `enum` of
    /// containers tries. So a unit is a bounded amount of work, and a document's work is at
    /// most a constant times the budget, whatever the schema × document shape.
    #[inline]
    fn charge(&mut self, n: u64) {
        self.work += n;
        if self.work > self.allowance {
            self.refresh_allowance();
        }
    }

    /// Brings the allowance up to the current event's offset (it only grows with the
    /// offset, so a stale one is a lower bound and is refreshed only when work passes it)
    /// and decides whether the budget is exhausted.
    #[cold]
    #[inline(never)]
    fn refresh_allowance(&mut self) {
        self.allowance = self
            .budget
            .saturating_add(self.budget_per_byte.saturating_mul(self.event_offset + 1));
        if self.work > self.allowance {
            self.budget_exceeded = true;
        }
    }

    /// Counts evaluations that an edge stands for without allocating them (the `$ref`-only
    /// subschemas it skips).
    fn count(&mut self, n: u32) {
        if n > 0 {
            self.charge(u64::from(n));
        }
    }

    /// The allowance the budget was exhausted against (for the error).
    pub(crate) fn allowance(&self) -> u64 {
        self.allowance
    }

    /// Units charged so far.
    #[cfg(test)]
    pub(crate) fn work(&self) -> u64 {
        self.work
    }

    fn alloc(
        &mut self,
        node: NodeId,
        parent: u32,
        slot: Slot,
        label: u32,
        level: u32,
        scope: u32,
    ) -> u32 {
        self.charge(1);
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                // Evaluations alive at once are bounded too, which bounds memory whatever
                // the schema (a wide in-place fan-out on one value, say).
                if self.evals.len() >= MAX_LIVE_EVALS {
                    self.budget_exceeded = true;
                }
                self.evals.push(Eval::new());
                (self.evals.len() - 1) as u32
            }
        };
        self.evals[id as usize].reset(node, parent, slot, label, level, scope);
        id
    }

    fn scope_for(&mut self, p: &Program, node: NodeId, parent_scope: u32) -> u32 {
        if parent_scope == NONE {
            return NONE;
        }
        let res = p.nodes[node as usize].resource;
        if self.scopes[parent_scope as usize].0 == res {
            return parent_scope;
        }
        self.scopes.push((res, parent_scope));
        (self.scopes.len() - 1) as u32
    }

    /// Creates an eval of `child` under `parent`. In-place evals join the current level;
    /// child-value evals wait in `pending`. `true`/`false` targets are decided at once.
    fn spawn(
        &mut self,
        p: &Program,
        parent: u32,
        child: &Child,
        slot: Slot,
        in_place: bool,
        offset: u64,
    ) {
        if !in_place && !matches!(p.nodes[child.node as usize].kind, NodeKind::Bool(_)) {
            // The common case of `spawn_edge`, without the call: the child waits for its value.
            self.pending.push(Pending {
                node: child.node,
                parent,
                slot,
                label: child.label,
                skipped: child.skipped,
            });
            return;
        }
        let edge = (child.node, child.label, child.skipped);
        self.spawn_edge(p, parent, edge, slot, in_place, offset);
    }

    /// [`spawn`](Self::spawn) for an edge that skips nothing.
    #[allow(clippy::too_many_arguments)]
    fn spawn_node(
        &mut self,
        p: &Program,
        parent: u32,
        node: NodeId,
        label: u32,
        slot: Slot,
        in_place: bool,
        offset: u64,
    ) {
        self.spawn_edge(p, parent, (node, label, 0), slot, in_place, offset);
    }

    /// Creates an eval of `(node, label, skipped)` under `parent`.
    fn spawn_edge(
        &mut self,
        p: &Program,
        parent: u32,
        (node, label, skipped): (NodeId, u32, u32),
        slot: Slot,
        in_place: bool,
        offset: u64,
    ) {
        if let NodeKind::Bool(b) = p.nodes[node as usize].kind {
            // A constant verdict needs no eval of its own, except where the parent counts.
            let counts = matches!(
                slot,
                Slot::AnyOf
                    | Slot::OneOf
                    | Slot::Not
                    | Slot::If
                    | Slot::Then
                    | Slot::Else
                    | Slot::Dep(_)
                    | Slot::Contains(_)
                    | Slot::UnevalMember(_)
                    | Slot::UnevalItem(_)
                    | Slot::Enum
            );
            if !counts {
                if !b {
                    let tmp = self.alloc(
                        node,
                        parent,
                        slot,
                        label,
                        self.evals[parent as usize].level + u32::from(!in_place),
                        NONE,
                    );
                    self.fail_with(p, tmp, "false", offset);
                    self.release(tmp);
                }
                return;
            }
        }
        if !in_place {
            self.pending.push(Pending {
                node,
                parent,
                slot,
                label,
                skipped,
            });
            return;
        }
        if !p.cycles.is_empty()
            && p.cycles.binary_search(&node).is_ok()
            && self.reenters(parent, node)
        {
            return self.reentered(p, parent, (node, label), slot, offset);
        }
        self.count(skipped);
        let pe = &self.evals[parent as usize];
        let level = pe.level;
        let scope = self.scope_for(p, node, pe.scope);
        let id = self.alloc(node, parent, slot, label, level, scope);
        self.levels[self.depth - 1].evals.push(id);
    }

    fn release(&mut self, id: u32) {
        self.free.push(id);
    }

    /// Marks `id` failed for its own `keyword` at `offset`.
    fn fail_with(&mut self, p: &Program, id: u32, keyword: &'static str, offset: u64) {
        self.fail(
            p,
            id,
            Reason {
                eval: id,
                keyword,
                offset,
                member: NONE,
            },
        );
    }

    /// Whether applying `node` in place under `parent` would re-enter a subschema already
    /// being applied to the same value (walks the in-place chain up, charging each step).
    fn reenters(&mut self, parent: u32, node: NodeId) -> bool {
        let level = self.evals[parent as usize].level;
        let mut e = parent;
        let mut steps = 1;
        let found = loop {
            let ev = &self.evals[e as usize];
            if ev.level != level {
                break false;
            }
            if ev.node == node {
                break true;
            }
            if ev.parent == NONE {
                break false;
            }
            e = ev.parent;
            steps += 1;
        };
        self.charge(steps);
        found
    }

    /// Evaluation re-entered `node` at the same value through the edge `(node, label)` of
    /// `parent`: that application's verdict is undecided (it could only be found by evaluating
    /// without end). Whether this matters is settled as the verdicts fold up.
    #[cold]
    #[inline(never)]
    fn reentered(
        &mut self,
        p: &Program,
        parent: u32,
        (node, label): (NodeId, u32),
        slot: Slot,
        offset: u64,
    ) {
        let level = self.evals[parent as usize].level;
        let tmp = self.alloc(node, parent, slot, label, level, NONE);
        let v = self.describe(
            p,
            Reason {
                eval: tmp,
                keyword: "false",
                offset,
                member: NONE,
            },
        );
        self.release(tmp);
        // Describing copies the pointer and the location: charged like the work it is.
        self.charge((v.instance_pointer().len() + v.keyword_location().len()) as u64 / 16);
        let cause: Cause = std::sync::Arc::new(Reentry {
            keyword_location: v.keyword_location().into(),
            offset,
            line: v.line(),
            column: v.column(),
            pointer: v.instance_pointer().into(),
        });
        self.undecided_child(p, parent, slot, cause);
    }

    /// Delivers an undecided verdict of a child in `slot` to `parent` (Kleene's three-valued
    /// logic: a failure elsewhere still fails the parent, a passing alternative still
    /// satisfies `anyOf`, a branch `if` does not select does not matter).
    fn undecided_child(&mut self, p: &Program, parent: u32, slot: Slot, cause: Cause) {
        if slot == Slot::Root {
            self.schema_cycle.get_or_insert(cause);
            self.budget_exceeded = true;
            self.root_result = Some(false);
            return;
        }
        let pe = &mut self.evals[parent as usize];
        if pe.st != St::Running {
            return;
        }
        let keywords = match &p.nodes[pe.node as usize].kind {
            NodeKind::Keywords(k) => Some(&**k),
            _ => None,
        };
        let uncertain = match slot {
            Slot::AnyOf => {
                pe.any_undef += 1;
                false
            }
            Slot::OneOf => {
                pe.one_undef += 1;
                false
            }
            Slot::If => {
                pe.if_undef = true;
                false
            }
            Slot::Then | Slot::Else => {
                let want_if = slot == Slot::Then;
                match pe.if_res {
                    Some(r) => r == want_if,
                    None => {
                        if want_if {
                            pe.then_undef = true;
                        } else {
                            pe.else_undef = true;
                        }
                        false
                    }
                }
            }
            Slot::Dep(i) => {
                let seen = keywords.is_some_and(|k| {
                    watch_index(k, &k.dependent_schemas[i as usize].0)
                        .is_some_and(|w| pe.seen.get(w))
                });
                if !seen {
                    pe.dep_undef.set(i);
                }
                seen
            }
            Slot::Contains(_) => {
                pe.contains_undef += 1;
                false
            }
            _ => true,
        };
        // Annotations of an undecided subschema are unknown, and `unevaluated*` depends on
        // them: under it the parent cannot be decided either.
        if uncertain || p.uses_unevaluated {
            pe.undecided.get_or_insert(cause);
        } else {
            pe.maybe.get_or_insert(cause);
        }
    }

    /// Marks `id` failed and reports to its parent.
    fn fail(&mut self, p: &Program, id: u32, reason: Reason) {
        let e = &mut self.evals[id as usize];
        if e.st == St::Failed && self.max_errors > 1 {
            // Another cause for a settled failure (collected when several are wanted).
            self.repeat(p, id, reason);
            return;
        }
        if e.st != St::Running {
            return;
        }
        e.st = St::Failed;
        e.reported = true;
        self.report(p, id, false, reason);
    }

    /// Delivers a child's result to its parent.
    fn report(&mut self, p: &Program, id: u32, passed: bool, reason: Reason) {
        let (parent, slot) = {
            let e = &self.evals[id as usize];
            (e.parent, e.slot)
        };
        if passed && matches!(slot, Slot::Member | Slot::Item | Slot::PropertyName) {
            // Annotations of child values were recorded when they were spawned (and a
            // settled parent takes nothing from a passing child).
            return;
        }
        if slot == Slot::Root {
            self.root_result = Some(passed);
            if !passed {
                self.record(p, reason);
            }
            return;
        }
        if self.evals[parent as usize].st == St::Failed {
            // The parent's verdict is settled; with several errors requested, a further
            // failure still travels up conjunctive edges to the root as another cause.
            if !passed && self.max_errors > 1 && conjunctive(slot) {
                self.repeat(p, parent, reason);
            }
            return;
        }
        let merge = |rt: &mut Runtime| {
            if p.uses_unevaluated && id != parent {
                let (a, b) = two(&mut rt.evals, parent as usize, id as usize);
                a.evaluated.union(&b.evaluated);
                let words = b.evaluated.words();
                rt.charge(words / 8);
            }
        };
        let keywords = match &p.nodes[self.evals[parent as usize].node as usize].kind {
            NodeKind::Keywords(k) => Some(&**k),
            _ => None,
        };
        match slot {
            Slot::Root => {}
            Slot::AllOf | Slot::Member | Slot::Item => {
                if passed {
                    if slot == Slot::AllOf {
                        merge(self);
                    }
                } else {
                    self.fail(p, parent, reason);
                }
            }
            Slot::PropertyName => {
                if !passed {
                    self.fail(p, parent, reason);
                }
            }
            Slot::AnyOf => {
                let n = keywords.map_or(0, |k| k.any_of.len()) as u32;
                let pe = &mut self.evals[parent as usize];
                if passed {
                    pe.any_pass += 1;
                    merge(self);
                } else {
                    pe.any_fail += 1;
                    if pe.any_fail == n {
                        self.fail_with(p, parent, "anyOf", reason.offset);
                    }
                }
            }
            Slot::OneOf => {
                let n = keywords.map_or(0, |k| k.one_of.len()) as u32;
                let pe = &mut self.evals[parent as usize];
                if passed {
                    pe.one_pass += 1;
                    if pe.one_pass > 1 {
                        self.fail_with(p, parent, "oneOf", reason.offset);
                    } else {
                        merge(self);
                    }
                } else {
                    pe.one_fail += 1;
                    if pe.one_fail == n {
                        self.fail_with(p, parent, "oneOf", reason.offset);
                    }
                }
            }
            Slot::Not => {
                if passed {
                    self.fail_with(p, parent, "not", reason.offset);
                }
            }
            Slot::If => {
                let pe = &mut self.evals[parent as usize];
                pe.if_res = Some(passed);
                let lost = if passed {
                    pe.then_failed
                } else {
                    pe.else_failed
                };
                let open = if passed { pe.then_undef } else { pe.else_undef };
                if open && !lost {
                    pe.open_matters();
                }
                if passed {
                    merge(self);
                }
                if lost {
                    let kw = if passed { "then" } else { "else" };
                    self.fail_with(p, parent, kw, reason.offset);
                }
            }
            Slot::Then | Slot::Else => {
                let want_if = slot == Slot::Then;
                // `if` is created last, so at the close it reports first; an early failure
                // of `then`/`else` waits for it.
                match self.evals[parent as usize].if_res {
                    Some(r) if r == want_if => {
                        if passed {
                            merge(self);
                        } else {
                            self.fail(p, parent, reason);
                        }
                    }
                    Some(_) => {}
                    None => {
                        if !passed {
                            let pe = &mut self.evals[parent as usize];
                            if want_if {
                                pe.then_failed = true;
                            } else {
                                pe.else_failed = true;
                            }
                        }
                    }
                }
            }
            Slot::Dep(i) => {
                let pe = &mut self.evals[parent as usize];
                let seen = keywords.is_some_and(|k| {
                    watch_index(k, &k.dependent_schemas[i as usize].0)
                        .is_some_and(|w| pe.seen.get(w))
                });
                if seen {
                    if passed {
                        merge(self);
                    } else {
                        self.fail(p, parent, reason);
                    }
                } else if !passed {
                    pe.dep_failed.set(i);
                }
            }
            Slot::Enum => {
                let pe = &mut self.evals[parent as usize];
                if passed {
                    pe.enum_pass += 1;
                } else {
                    pe.enum_fail += 1;
                    if pe.enum_fail == pe.enum_alts {
                        self.fail_with(p, parent, "enum", reason.offset);
                    }
                }
            }
            Slot::Contains(i) => {
                if passed {
                    let pe = &mut self.evals[parent as usize];
                    pe.contains += 1;
                    pe.evaluated.set(i);
                    if let Some(max) = keywords.and_then(|k| k.max_contains) {
                        if pe.contains > max {
                            self.fail_with(p, parent, "maxContains", reason.offset);
                        }
                    }
                }
            }
            Slot::UnevalMember(i) | Slot::UnevalItem(i) => {
                if passed {
                    self.evals[parent as usize].uneval_ok.set(i);
                }
            }
        }
    }

    /// Follows an additional failure cause up conjunctive edges of failed evals.
    fn repeat(&mut self, p: &Program, mut e: u32, reason: Reason) {
        loop {
            self.charge(1);
            let ev = &self.evals[e as usize];
            if ev.slot == Slot::Root {
                self.record(p, reason);
                return;
            }
            if !conjunctive(ev.slot) || ev.parent == NONE {
                return;
            }
            e = ev.parent;
        }
    }

    fn record(&mut self, p: &Program, reason: Reason) {
        if self.violations.len() >= self.max_errors.max(1) {
            return;
        }
        let v = self.describe(p, reason);
        if !self.violations.contains(&v) {
            self.violations.push(v);
        }
    }

    fn describe(&self, p: &Program, reason: Reason) -> Violation {
        // Keyword location: labels from the root down to the failing eval.
        let mut labels = Vec::new();
        let mut e = reason.eval;
        while e != NONE {
            let ev = &self.evals[e as usize];
            if ev.label != NONE {
                labels.push(ev.label);
            }
            e = ev.parent;
        }
        let mut keyword_location = String::new();
        for &l in labels.iter().rev() {
            p.write_label(l, &mut keyword_location);
        }
        if reason.keyword != "false" {
            keyword_location.push('/');
            keyword_location.push_str(reason.keyword);
        }
        let ev = &self.evals[reason.eval as usize];
        let keyword = false_keyword(p, reason.keyword, ev.label);
        let mut instance = String::new();
        let level = ev.level as usize;
        for l in self.levels.iter().take(level + 1).skip(1) {
            match l.index {
                Some(i) => crate::pointer::push_index(&mut instance, i),
                None => crate::pointer::push_name(&mut instance, &l.name),
            }
        }
        let mut unnamed = None;
        if reason.member != NONE {
            match self
                .levels
                .get(level)
                .and_then(|l| l.kept.get(reason.member as usize))
            {
                Some(name) => crate::pointer::push_name(&mut instance, name),
                None => unnamed = Some(u64::from(reason.member) + 1),
            }
        }
        let node = &p.nodes[ev.node as usize];
        // A schema-valued `unevaluatedProperties` refuses a member by its subschema, not by
        // refusing every name: say which.
        let judged = reason.keyword == Keyword::UnevaluatedProperties.name()
            && matches!(&node.kind, NodeKind::Keywords(k) if k.unevaluated_properties.as_ref()
                .is_some_and(|c| !matches!(p.nodes[c.node as usize].kind, NodeKind::Bool(false))));
        let detail = match unnamed {
            // Past the names kept: the member is told by its place in the object.
            Some(n) if judged => format!(
                "property number {n} of the object (evaluated by no other keyword) does not \
                 satisfy the unevaluatedProperties subschema"
            ),
            Some(n) => format!("property number {n} of the object is not allowed (unevaluated)"),
            None if judged => format!(
                "property {} (evaluated by no other keyword) does not satisfy the \
                 unevaluatedProperties subschema",
                super::unexpected_name(&instance)
            ),
            None => super::explain::detail(p, ev.node, reason.keyword, &|w| ev.seen.get(w)),
        };
        Violation {
            keyword,
            detail,
            own_keyword: reason.keyword != "false",
            keyword_location,
            absolute_location: node.location.to_string(),
            instance_pointer: instance,
            offset: reason.offset,
            line: self.line,
            column: self.column,
        }
    }

    /// Handles one scanner event. Returns `false` once the document is known to be invalid.
    #[inline(always)]
    pub(crate) fn event(&mut self, p: &Program, ev: &Event<'_>, offset: u64) -> bool {
        match (&p.plan, self.fast_mode) {
            (Some(plan), true) => self.fast_event(p, plan, ev, offset),
            _ => self.general_event(p, ev, offset),
        }
    }

    /// Whether the next string value may be read by a subschema: not inside a value no
    /// subschema constrains, where [`skipped`](Self::skipped) passes every event over.
    #[inline]
    pub(crate) fn wants_text(&self) -> bool {
        self.skip == 0
    }

    /// Records the event's offset; inside a value no subschema constrains, follows only its
    /// nesting and returns `true` (the event needs nothing else, in either tier).
    #[inline(always)]
    fn skipped(&mut self, ev: &Event<'_>, offset: u64) -> bool {
        self.event_offset = offset;
        if self.skip == 0 {
            return false;
        }
        match ev {
            Event::BeginObject | Event::BeginArray => self.skip += 1,
            Event::EndObject | Event::EndArray => self.skip -= 1,
            _ => {}
        }
        true
    }

    /// [`event`](Self::event) in the general tier.
    #[inline(never)]
    fn general_event(&mut self, p: &Program, ev: &Event<'_>, offset: u64) -> bool {
        if self.skipped(ev, offset) {
            return true;
        }
        match ev {
            Event::Name(name) => self.on_name(p, name, offset),
            Event::EndObject | Event::EndArray => self.on_end(p, offset),
            _ => self.on_value(p, ev, offset),
        }
        !self.failed()
    }

    fn ensure_level(&mut self) {
        if self.levels.len() <= self.depth {
            self.levels.push(Level::new());
        }
    }

    fn on_value(&mut self, p: &Program, ev: &Event<'_>, offset: u64) {
        // A new item of an enclosing array: let its evals create the item's evals.
        if self.depth > 0 && self.levels[self.depth - 1].container == Container::Array {
            let parent_level = self.depth - 1;
            let idx = self.levels[parent_level].count;
            self.levels[parent_level].count += 1;
            self.ensure_level();
            let next = &mut self.levels[self.depth];
            next.index = Some(idx);
            self.charge(self.levels[parent_level].evals.len() as u64);
            for i in 0..self.levels[parent_level].evals.len() {
                let e = self.levels[parent_level].evals[i];
                if self.live(e) {
                    self.item_start(p, e, idx as u32, offset);
                }
            }
        }
        let parent_hashing = self.depth > 0 && self.levels[self.depth - 1].hashing;
        let wants_unique = self.depth > 0 && self.unique_wanted(p, self.depth - 1);
        let container = matches!(ev, Event::BeginObject | Event::BeginArray);
        if !parent_hashing && !wants_unique {
            if self.pending.is_empty() {
                // Nothing applies to this value: a scalar needs no work, a container is
                // skipped to its end.
                if container {
                    self.skip = 1;
                }
                return;
            }
            if !container
                && self
                    .pending
                    .iter()
                    .all(|pd| p.nodes[pd.node as usize].simple)
            {
                // A scalar that only simple subschemas see: each is checked in place, with
                // no level opened for the value (its name or index is already in place for
                // a violation's pointer).
                self.ensure_level();
                let d = self.depth;
                if d == 0 {
                    let lv = &mut self.levels[0];
                    lv.index = None;
                    lv.name.clear();
                }
                let (mut num, mut parsed) = (None, false);
                self.materialize(p, d, ev, &mut num, &mut parsed, offset);
                return;
            }
        }
        self.ensure_level();
        let d = self.depth;
        self.depth += 1;
        {
            let lv = &mut self.levels[d];
            lv.evals.clear();
            lv.container = match ev {
                Event::BeginObject => Container::Object,
                Event::BeginArray => Container::Array,
                _ => Container::Scalar,
            };
            lv.count = 0;
            lv.kept.clear();
            lv.kept_bytes = 0;
            if d == 0 {
                lv.index = None;
                lv.name.clear();
            }
            lv.hashing = parent_hashing || wants_unique;
            lv.unique = false;
            lv.hash = 0;
        }
        // Numbers are parsed exactly only when some eval needs it (bounds, constants…).
        let mut num: Option<Decimal> = None;
        let mut parsed = false;
        self.materialize(p, d, ev, &mut num, &mut parsed, offset);
        let mut i = 0;
        while i < self.levels[d].evals.len() && !self.budget_exceeded {
            let e = self.levels[d].evals[i];
            if self.live(e) {
                if let (Event::Number(n), false) = (ev, parsed) {
                    if node_needs_decimal(p, self.evals[e as usize].node) {
                        num = Decimal::parse(n.as_str());
                        parsed = true;
                    }
                }
                self.start(p, e, ev, num.as_ref(), offset);
            }
            i += 1;
        }
        if self.levels[d].hashing && self.levels[d].container == Container::Scalar {
            let h = self.scalar_hash(ev, num.as_ref());
            self.levels[d].hash = h;
        }
        if self.levels[d].container == Container::Scalar {
            self.close_level(p, offset);
        }
    }

    /// Turns the pending subschemas into evals of the value at level `d`. On a scalar, a
    /// simple subschema (no in-place applicators) is checked at once without an eval.
    fn materialize(
        &mut self,
        p: &Program,
        d: usize,
        ev: &Event<'_>,
        num: &mut Option<Decimal>,
        parsed: &mut bool,
        offset: u64,
    ) {
        // Nothing below adds to `pending`, so the list is read in place.
        let scalar = !matches!(ev, Event::BeginObject | Event::BeginArray);
        for i in 0..self.pending.len() {
            let pd = self.pending[i];
            if pd.parent != NONE {
                let st = self.evals[pd.parent as usize].st;
                if st == St::Passed || (st == St::Failed && self.max_errors <= 1) {
                    continue;
                }
            }
            let node = &p.nodes[pd.node as usize];
            if scalar && node.simple {
                if let (Event::Number(n), false) = (ev, *parsed) {
                    if node_needs_decimal(p, pd.node) {
                        *num = Decimal::parse(n.as_str());
                        *parsed = true;
                    }
                }
                self.charge(1 + u64::from(pd.skipped));
                match self.check_scalar(p, pd.node, ev, num.as_ref()) {
                    Ok(()) => self.passed_light(p, &pd, offset),
                    Err(kw) => {
                        let tmp = self.alloc(pd.node, pd.parent, pd.slot, pd.label, d as u32, NONE);
                        self.fail_with(p, tmp, kw, offset);
                        self.release(tmp);
                    }
                }
                continue;
            }
            let scope = if pd.parent == NONE {
                if p.uses_dynamic_scope {
                    0
                } else {
                    NONE
                }
            } else {
                let ps = self.evals[pd.parent as usize].scope;
                self.scope_for(p, pd.node, ps)
            };
            self.count(pd.skipped);
            let id = self.alloc(pd.node, pd.parent, pd.slot, pd.label, d as u32, scope);
            self.levels[d].evals.push(id);
        }
        self.pending.clear();
    }

    /// A node's `enum` and `const` on a scalar (the group's one check), charging its units.
    #[inline(always)]
    fn check_values(
        &mut self,
        k: &Keywords,
        ev: &Event<'_>,
        num: Option<&Decimal>,
    ) -> Result<(), &'static str> {
        let Some(v) = &k.values else {
            return Ok(());
        };
        let mut units = 0;
        let verdict = v.check(ev, num, &mut units);
        self.charge(units);
        verdict
    }

    /// A simple subschema's verdict on a scalar.
    #[inline(always)]
    fn check_scalar(
        &mut self,
        p: &Program,
        node: NodeId,
        ev: &Event<'_>,
        num: Option<&Decimal>,
    ) -> Result<(), &'static str> {
        match &p.nodes[node as usize].kind {
            NodeKind::Bool(true) => Ok(()),
            NodeKind::Bool(false) => Err("false"),
            NodeKind::Const(c) => {
                if const_start(c, ev, num) {
                    Ok(())
                } else {
                    Err("const")
                }
            }
            NodeKind::Keywords(k) => {
                self.check_value(k, ev, num)?;
                self.check_values(k, ev, num)
            }
        }
    }

    /// A passing check that had no eval of its own, reported to its parent.
    fn passed_light(&mut self, p: &Program, pd: &Pending, offset: u64) {
        match pd.slot {
            Slot::Root => self.root_result = Some(true),
            Slot::Contains(i) => {
                let pe = &mut self.evals[pd.parent as usize];
                pe.contains += 1;
                pe.evaluated.set(i);
                let max = match &p.nodes[pe.node as usize].kind {
                    NodeKind::Keywords(k) => k.max_contains,
                    _ => None,
                };
                if max.is_some_and(|m| pe.contains > m) {
                    let parent = pd.parent;
                    self.fail_with(p, parent, "maxContains", offset);
                }
            }
            Slot::UnevalMember(i) | Slot::UnevalItem(i) => {
                self.evals[pd.parent as usize].uneval_ok.set(i);
            }
            _ => {}
        }
    }

    fn unique_wanted(&self, _p: &Program, level: usize) -> bool {
        self.levels[level].unique
    }

    fn live(&mut self, e: u32) -> bool {
        let ev = &self.evals[e as usize];
        if ev.st != St::Running {
            // When collecting several violations, failed evals keep looking for more.
            return ev.st == St::Failed && self.max_errors > 1;
        }
        let parent = ev.parent;
        if parent != NONE && self.evals[parent as usize].st == St::Failed && self.max_errors <= 1 {
            let ev = &mut self.evals[e as usize];
            ev.st = St::Failed;
            ev.reported = true;
            return false;
        }
        true
    }

    /// `type` and the scalar keywords (numbers, strings) on the first event of a value.
    #[inline(always)]
    fn check_value(
        &mut self,
        k: &Keywords,
        ev: &Event<'_>,
        num: Option<&Decimal>,
    ) -> Result<(), &'static str> {
        if let Some(t) = k.types {
            if !types::check(t, ev, num) {
                return Err("type");
            }
        }
        match ev {
            Event::Number(text) => {
                if let Some(n) = &k.numbers {
                    n.check(text.as_str(), num)?;
                }
            }
            Event::String(s) => {
                if let Some(c) = &k.strings {
                    let mut units = 0;
                    let r = c.check(s, &mut units);
                    self.charge(units);
                    match r {
                        Ok(()) => {}
                        Err(Stop::Keyword(kw)) => return Err(kw),
                        Err(Stop::Budget) => {
                            self.budget_exceeded = true;
                            return Err(Keyword::Pattern.name());
                        }
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Applies a node's keywords to the first event of a value.
    #[allow(clippy::too_many_lines)]
    fn start(&mut self, p: &Program, e: u32, ev: &Event<'_>, num: Option<&Decimal>, offset: u64) {
        let node = self.evals[e as usize].node;
        let fail = |rt: &mut Runtime, kw: &'static str| rt.fail_with(p, e, kw, offset);
        let k = match &p.nodes[node as usize].kind {
            NodeKind::Bool(true) => return,
            NodeKind::Bool(false) => return fail(self, "false"),
            NodeKind::Const(c) => {
                if !const_start(c, ev, num) {
                    fail(self, "const");
                }
                return;
            }
            NodeKind::Keywords(k) => &**k,
        };
        if k.unique_items() && matches!(ev, Event::BeginArray) {
            self.levels[self.depth - 1].unique = true;
        }
        if let Err(kw) = self.check_value(k, ev, num) {
            return fail(self, kw);
        }
        if k.plain {
            return;
        }
        // `enum` and `const`: scalars are checked against the group's record; containers
        // match structurally, alternative by alternative, as they stream by.
        let scalar = !matches!(ev, Event::BeginObject | Event::BeginArray);
        if scalar {
            if let Err(kw) = self.check_values(k, ev, num) {
                return fail(self, kw);
            }
        } else if let Some(alts) = &k.enum_ {
            self.charge(alts.len() as u64 / 8);
            let mut n = 0;
            for &a in alts {
                if let NodeKind::Const(c) = &p.nodes[a as usize].kind {
                    if const_start(c, ev, num) {
                        n += 1;
                    }
                }
            }
            if n == 0 {
                return fail(self, "enum");
            }
            self.evals[e as usize].enum_alts = n;
            for &a in alts {
                if let NodeKind::Const(c) = &p.nodes[a as usize].kind {
                    if const_start(c, ev, num) {
                        let label = NONE;
                        self.spawn_node(p, e, a, label, Slot::Enum, true, offset);
                    }
                }
            }
        }
        for c in k.consts.iter().filter(|_| !scalar) {
            if let NodeKind::Const(cst) = &p.nodes[c.node as usize].kind {
                if !const_start(cst, ev, num) {
                    return fail(self, "const");
                }
                self.spawn(p, e, c, Slot::AllOf, true, offset);
            }
        }
        for c in &k.refs {
            self.spawn(p, e, c, Slot::AllOf, true, offset);
        }
        if let Some(d) = &k.dynamic_ref {
            let target = self.dynamic_target(p, e, d);
            self.spawn_node(p, e, target, d.fallback.label, Slot::AllOf, true, offset);
        }
        for c in &k.all_of {
            self.spawn(p, e, c, Slot::AllOf, true, offset);
        }
        for c in &k.any_of {
            self.spawn(p, e, c, Slot::AnyOf, true, offset);
        }
        for c in &k.one_of {
            self.spawn(p, e, c, Slot::OneOf, true, offset);
        }
        if let Some(c) = &k.not {
            self.spawn(p, e, c, Slot::Not, true, offset);
        }
        if let Some(c) = &k.if_ {
            // `then`/`else` before `if`, so that `if` reports first when the value closes.
            if let Some(t) = &k.then_ {
                self.spawn(p, e, t, Slot::Then, true, offset);
            }
            if let Some(t) = &k.else_ {
                self.spawn(p, e, t, Slot::Else, true, offset);
            }
            self.spawn(p, e, c, Slot::If, true, offset);
        }
        if matches!(ev, Event::BeginObject) {
            for (i, (_, c)) in k.dependent_schemas.iter().enumerate() {
                self.spawn(p, e, c, Slot::Dep(i as u32), true, offset);
            }
        }
    }

    fn dynamic_target(
        &mut self,
        p: &Program,
        e: u32,
        d: &crate::schema::program::DynRef,
    ) -> NodeId {
        let mut hops = 0;
        let mut best = d.fallback.node;
        let mut s = self.evals[e as usize].scope;
        while s != NONE {
            hops += 1;
            let (res, parent) = self.scopes[s as usize];
            match &d.dynamic {
                Dynamic::Anchor(name) => {
                    if let Some(&n) = p.dynamic_anchors.get(&(res, name.clone())) {
                        best = n;
                    }
                }
                Dynamic::Recursive => {
                    let r = &p.resources[res as usize];
                    if r.recursive_anchor {
                        if let Some(root) = r.root {
                            best = root;
                        }
                    }
                }
            }
            s = parent;
        }
        self.charge(hops);
        best
    }

    /// A member name in the object at the top level.
    fn on_name(&mut self, p: &Program, name: &str, offset: u64) {
        let d = self.depth - 1;
        let idx = self.levels[d].count;
        self.levels[d].count += 1;
        if p.uses_unevaluated {
            let lv = &mut self.levels[d];
            // Names are kept in order, so the first that does not fit ends the keeping.
            if lv.kept.len() == idx as usize
                && lv.kept.len() < KEPT_NAMES
                && lv.kept_bytes + name.len() <= KEPT_NAME_BYTES
            {
                lv.kept_bytes += name.len();
                lv.kept.push(name.into());
            }
        }
        self.ensure_level();
        {
            let next = &mut self.levels[self.depth];
            next.name.clear();
            next.name.push_str(name);
            next.index = None;
        }
        if self.levels[d].hashing {
            self.levels[d].name_hash = self.str_hash(1, name);
        }
        self.charge(self.levels[d].evals.len() as u64);
        for i in 0..self.levels[d].evals.len() {
            let e = self.levels[d].evals[i];
            if self.live(e) {
                self.member(p, e, name, idx as u32, offset);
            }
        }
    }

    #[allow(clippy::too_many_lines)]
    fn member(&mut self, p: &Program, e: u32, name: &str, idx: u32, offset: u64) {
        let node = self.evals[e as usize].node;
        let k = match &p.nodes[node as usize].kind {
            NodeKind::Keywords(k) => &**k,
            NodeKind::Const(Const::Object(members)) => {
                match members.binary_search_by(|(n, _)| (**n).cmp(name)) {
                    Ok(i) => {
                        let target = members[i].1;
                        self.spawn_node(p, e, target, NONE, Slot::Member, false, offset);
                    }
                    Err(_) => self.fail_with(p, e, "const", offset),
                }
                return;
            }
            _ => return,
        };
        if !k.names_wanted {
            return;
        }
        let count = u64::from(idx) + 1;
        // Reported once, at the first member past the bound; when several violations are
        // collected, the members go on being checked.
        if k.properties_count
            .as_ref()
            .is_some_and(|c| c.first_too_many(count))
        {
            self.fail_with(p, e, Keyword::MaxProperties.name(), offset);
            if !self.live(e) {
                return;
            }
        }
        let (property, watched) = k.member(name);
        if let Some(w) = watched {
            self.charge(k.dependent_schemas.len() as u64 / 8);
            self.evals[e as usize].seen.set(w);
            // A dependent schema that already failed now applies.
            for (i, (dep, _)) in k.dependent_schemas.iter().enumerate() {
                if &**dep == name && self.evals[e as usize].dep_failed.get(i as u32) {
                    return self.fail_with(p, e, k.dependent_schemas_keyword(), offset);
                }
                let ev = &mut self.evals[e as usize];
                if &**dep == name && ev.dep_undef.get(i as u32) {
                    ev.open_matters();
                }
            }
        }
        if let Some(c) = &k.property_names {
            self.property_name(p, e, c, name, offset);
            // A settled failure stops here, unless more violations are being collected.
            if self.evals[e as usize].st != St::Running && self.max_errors <= 1 {
                return;
            }
        }
        let mut matched = false;
        if let Some(c) = property {
            matched = true;
            self.spawn(p, e, c, Slot::Member, false, offset);
        }
        for (re, c) in &k.pattern_properties {
            self.charge(1 + name.len() as u64 / 16);
            if re.is_match(name).unwrap_or(true) {
                matched = true;
                self.spawn(p, e, c, Slot::Member, false, offset);
            }
        }
        if !matched {
            if let Some(c) = &k.additional_properties {
                matched = true;
                self.spawn(p, e, c, Slot::Member, false, offset);
            }
        }
        if p.uses_unevaluated {
            if matched {
                self.evals[e as usize].evaluated.set(idx);
            }
            if let Some(c) = &k.unevaluated_properties {
                self.spawn(p, e, c, Slot::UnevalMember(idx), false, offset);
            }
        }
    }

    /// Evaluates `propertyNames` on a name, as a string value of its own.
    fn property_name(&mut self, p: &Program, e: u32, c: &Child, name: &str, offset: u64) {
        // The pending list of the member's value waits aside (in a spare list, so that
        // neither list is allocated anew per name).
        let spare = std::mem::take(&mut self.spare_pending);
        let saved = std::mem::replace(&mut self.pending, spare);
        self.spawn(p, e, c, Slot::PropertyName, false, offset);
        // Evaluate on the name at a temporary level.
        let ev = Event::String(name);
        let d = self.depth;
        self.ensure_level();
        let hashing = self.levels[d].hashing;
        self.levels[d].hashing = false;
        self.levels[d].container = Container::Scalar;
        self.levels[d].evals.clear();
        self.depth += 1;
        let (mut num, mut parsed) = (None, false);
        self.materialize(p, d, &ev, &mut num, &mut parsed, offset);
        let mut i = 0;
        while i < self.levels[d].evals.len() && !self.budget_exceeded {
            let x = self.levels[d].evals[i];
            if self.live(x) {
                self.start(p, x, &ev, None, offset);
            }
            i += 1;
        }
        self.finish_level(p, d, offset);
        self.depth -= 1;
        self.levels[d].hashing = hashing;
        let mut spare = std::mem::replace(&mut self.pending, saved);
        spare.clear();
        self.spare_pending = spare;
    }

    fn item_start(&mut self, p: &Program, e: u32, idx: u32, offset: u64) {
        let node = self.evals[e as usize].node;
        let k = match &p.nodes[node as usize].kind {
            NodeKind::Keywords(k) => &**k,
            NodeKind::Const(Const::Array(items)) => {
                match items.get(idx as usize) {
                    Some(&target) => self.spawn_node(p, e, target, NONE, Slot::Item, false, offset),
                    None => self.fail_with(p, e, "const", offset),
                }
                return;
            }
            _ => return,
        };
        // Reported once, at the first item past the bound; when several violations are
        // collected, the items go on being checked.
        if k.arrays
            .as_ref()
            .is_some_and(|a| a.counts.first_too_many(u64::from(idx) + 1))
        {
            self.fail_with(p, e, Keyword::MaxItems.name(), offset);
            if !self.live(e) {
                return;
            }
        }
        let mut evaluated = false;
        if let Some(c) = k.prefix_items.get(idx as usize) {
            evaluated = true;
            self.spawn(p, e, c, Slot::Item, false, offset);
        } else if let Some(c) = &k.items {
            evaluated = true;
            self.spawn(p, e, c, Slot::Item, false, offset);
        }
        if let Some(c) = &k.contains {
            self.spawn(p, e, c, Slot::Contains(idx), false, offset);
        }
        if p.uses_unevaluated {
            if evaluated {
                self.evals[e as usize].evaluated.set(idx);
            }
            if let Some(c) = &k.unevaluated_items {
                self.spawn(p, e, c, Slot::UnevalItem(idx), false, offset);
            }
        }
    }

    fn on_end(&mut self, p: &Program, offset: u64) {
        let d = self.depth - 1;
        let count = self.levels[d].count;
        let container = self.levels[d].container;
        self.charge(self.levels[d].evals.len() as u64);
        for i in 0..self.levels[d].evals.len() {
            let e = self.levels[d].evals[i];
            if !self.live(e) {
                continue;
            }
            let node = self.evals[e as usize].node;
            let fail = |rt: &mut Runtime, kw: &'static str| rt.fail_with(p, e, kw, offset);
            match &p.nodes[node as usize].kind {
                NodeKind::Const(Const::Object(m)) if count != m.len() as u64 => fail(self, "const"),
                NodeKind::Const(Const::Array(a)) if count != a.len() as u64 => fail(self, "const"),
                NodeKind::Keywords(k) => {
                    if container == Container::Object {
                        self.charge(
                            (k.required_watch.len() + k.dependent_required_watch.len()) as u64 / 8,
                        );
                        if let Some(kw) = k.properties_count.as_ref().and_then(|c| c.end(count)) {
                            fail(self, kw);
                            continue;
                        }
                        let ev = &self.evals[e as usize];
                        if !ev.seen.has_all(k.required_mask, &k.required_far) {
                            fail(self, "required");
                            continue;
                        }
                        let missing_dep = k.dependent_required_watch.iter().any(|(key, names)| {
                            ev.seen.get(*key) && names.iter().any(|&n| !ev.seen.get(n))
                        });
                        if missing_dep {
                            fail(self, k.dependent_required_keyword());
                        }
                    } else {
                        if let Some(kw) = k.arrays.as_ref().and_then(|a| a.counts.end(count)) {
                            fail(self, kw);
                            continue;
                        }
                        if k.contains.is_some() {
                            // Undecided items may or may not count: a verdict that depends on
                            // them is undecided.
                            let ev = &mut self.evals[e as usize];
                            let (got, open) = (ev.contains, ev.contains_undef);
                            let short = got < k.min_contains;
                            let may_exceed = k.max_contains.is_some_and(|m| got + open > m);
                            if short && got + open < k.min_contains {
                                fail(
                                    self,
                                    if k.min_contains > 1 {
                                        "minContains"
                                    } else {
                                        "contains"
                                    },
                                );
                            } else if short || may_exceed {
                                ev.open_matters();
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        self.close_level(p, offset);
    }

    /// Finishes the value at the top level and hands its hash to the enclosing value.
    fn close_level(&mut self, p: &Program, offset: u64) {
        let d = self.depth - 1;
        self.finish_level(p, d, offset);
        self.depth -= 1;
        if self.levels[d].hashing && d > 0 {
            let h = match self.levels[d].container {
                Container::Scalar => self.levels[d].hash,
                Container::Object => mix(self.levels[d].hash, 2),
                Container::Array => mix(self.levels[d].hash, 3),
            };
            let parent = &mut self.levels[d - 1];
            match parent.container {
                Container::Object => {
                    parent.hash = parent.hash.wrapping_add(mix(parent.name_hash, h));
                }
                _ => parent.hash = mix(parent.hash, h),
            }
            if self.unique_wanted(p, d - 1) {
                self.charge(self.levels[d - 1].evals.len() as u64);
                for i in 0..self.levels[d - 1].evals.len() {
                    let e = self.levels[d - 1].evals[i];
                    if self.evals[e as usize].st != St::Running {
                        continue;
                    }
                    if let NodeKind::Keywords(k) =
                        &p.nodes[self.evals[e as usize].node as usize].kind
                    {
                        if k.unique_items() && !self.evals[e as usize].unique.insert(h) {
                            self.fail_with(p, e, "uniqueItems", offset);
                        }
                    }
                }
            }
        }
    }

    /// Finalises every eval of level `d`, last first, and reports each to its parent.
    fn finish_level(&mut self, p: &Program, d: usize, offset: u64) {
        let n = self.levels[d].evals.len();
        if n == 0 {
            return;
        }
        // Reporting never adds an eval to this level, so the list is read in place.
        for i in (0..n).rev() {
            let e = self.levels[d].evals[i];
            let ev = &self.evals[e as usize];
            if ev.reported {
                continue;
            }
            if ev.parent != NONE
                && self.evals[ev.parent as usize].st == St::Failed
                && self.max_errors <= 1
            {
                continue;
            }
            let (passed, kw, member) = self.fold(p, e);
            let ev = &mut self.evals[e as usize];
            ev.st = if passed { St::Passed } else { St::Failed };
            ev.reported = true;
            if passed {
                if let Some(cause) = ev.undecided.take() {
                    let (parent, slot) = (ev.parent, ev.slot);
                    self.undecided_child(p, parent, slot, cause);
                    continue;
                }
            }
            self.report(
                p,
                e,
                passed,
                Reason {
                    eval: e,
                    keyword: kw,
                    offset,
                    member,
                },
            );
            if member != NONE && self.max_errors > 1 {
                self.more_unevaluated(p, e, member, offset);
            }
        }
        for &e in &self.levels[d].evals {
            self.free.push(e);
        }
        self.levels[d].evals.clear();
    }

    /// When violations are collected, every member after `first` that `unevaluatedProperties`
    /// refuses too, each its own violation (the fold reports the first).
    fn more_unevaluated(&mut self, p: &Program, e: u32, first: u32, offset: u64) {
        let count = self
            .levels
            .get(self.evals[e as usize].level as usize)
            .map_or(0, |l| l.count);
        for i in first + 1..count as u32 {
            if self.violations.len() >= self.max_errors {
                return;
            }
            let ev = &self.evals[e as usize];
            if !ev.evaluated.get(i) && !ev.uneval_ok.get(i) {
                let reason = Reason {
                    eval: e,
                    keyword: Keyword::UnevaluatedProperties.name(),
                    offset,
                    member: i,
                };
                self.repeat(p, e, reason);
            }
        }
    }

    /// The final result of a running eval whose value has closed, and the index of the
    /// member that failed `unevaluatedProperties` (else [`NONE`]).
    fn fold(&mut self, p: &Program, e: u32) -> (bool, &'static str, u32) {
        let k = match &p.nodes[self.evals[e as usize].node as usize].kind {
            NodeKind::Keywords(k) if k.folds || self.evals[e as usize].if_undef => &**k,
            _ => return (true, "", NONE),
        };
        let count = self
            .levels
            .get(self.evals[e as usize].level as usize)
            .map_or(0, |l| l.count);
        let container = self
            .levels
            .get(self.evals[e as usize].level as usize)
            .map_or(Container::Scalar, |l| l.container);
        let ev = &mut self.evals[e as usize];
        if !k.any_of.is_empty() && ev.any_pass == 0 {
            if ev.any_undef == 0 {
                return (false, "anyOf", NONE);
            }
            // No alternative passed and an undecided one might have.
            ev.open_matters();
        }
        if !k.one_of.is_empty() && ev.one_pass != 1 && (ev.one_pass > 1 || ev.one_undef == 0) {
            return (false, "oneOf", NONE);
        }
        if ev.one_undef > 0 && ev.one_pass <= 1 {
            // Whether exactly one alternative passes depends on an undecided one.
            ev.open_matters();
        }
        if ev.if_undef {
            // `if` is undecided: no matter when no branch can fail; a failure when both must.
            let can_fail = |present: bool, failed: bool, open: bool| present && (failed || open);
            let then_may = can_fail(k.then_.is_some(), ev.then_failed, ev.then_undef);
            let else_may = can_fail(k.else_.is_some(), ev.else_failed, ev.else_undef);
            let then_fails = k.then_.is_some() && ev.then_failed;
            let else_fails = k.else_.is_some() && ev.else_failed;
            if then_fails && else_fails {
                return (false, "then", NONE);
            }
            if then_may || else_may {
                ev.open_matters();
            }
        }
        if ev.enum_alts > 0 && ev.enum_pass == 0 {
            return (false, "enum", NONE);
        }
        if p.uses_unevaluated
            && (k.unevaluated_properties.is_some() || k.unevaluated_items.is_some())
        {
            self.charge(count / 16);
        }
        let ev = &mut self.evals[e as usize];
        if p.uses_unevaluated {
            // With an undecided child, which members were evaluated is not known.
            let decided = ev.undecided.is_none();
            if let (Some(_), Container::Object) = (&k.unevaluated_properties, container) {
                for i in 0..count as u32 {
                    if decided && !ev.evaluated.get(i) && !ev.uneval_ok.get(i) {
                        return (false, "unevaluatedProperties", i);
                    }
                }
                ev.evaluated.set_all(count);
            }
            if let (Some(_), Container::Array) = (&k.unevaluated_items, container) {
                for i in 0..count as u32 {
                    if decided && !ev.evaluated.get(i) && !ev.uneval_ok.get(i) {
                        return (false, "unevaluatedItems", NONE);
                    }
                }
                ev.evaluated.set_all(count);
            }
        }
        (true, "", NONE)
    }

    fn str_hash(&self, tag: u8, s: &str) -> u128 {
        let mut a = self.hasher.build_hasher();
        a.write_u8(tag);
        a.write(s.as_bytes());
        let lo = a.finish();
        let mut b = self.hasher.build_hasher();
        b.write_u64(lo);
        b.write(s.as_bytes());
        (u128::from(b.finish()) << 64) | u128::from(lo)
    }

    /// The canonical hash of a scalar. Numbers hash their canonical text
    /// ([`Decimal::canonical`]), so `1`, `1.0` and `1e0` collide; plain integers (ids, the
    /// common case) are canonicalised from their text, without parsing or allocating.
    fn scalar_hash(&self, ev: &Event<'_>, num: Option<&Decimal>) -> u128 {
        match ev {
            Event::Null => mix(0, 10),
            Event::Bool(b) => mix(0, 11 + u128::from(*b)),
            Event::String(s) => self.str_hash(4, s),
            Event::Number(n) => {
                let mut buf = [0u8; 48];
                if let Some(c) = integer_canonical(n.as_str(), &mut buf) {
                    return self.str_hash(5, c);
                }
                let parsed;
                let d = match num {
                    Some(d) => Some(d),
                    None => {
                        parsed = Decimal::parse(n.as_str());
                        parsed.as_ref()
                    }
                };
                match d {
                    Some(d) => self.str_hash(5, &d.canonical()),
                    None => self.str_hash(5, n.as_str()),
                }
            }
            _ => 0,
        }
    }
}

/// [`Decimal::canonical`] of a plain integer literal (`-?[0-9]+`, as the scanner delivers it:
/// no leading zeros) of at most 40 digits, written into `buf` without parsing: the digits
/// without trailing zeros, `e`, and how many zeros were dropped; `0` for zero. `None` for any
/// other literal (fractions, exponents, long integers), which take the exact path.
fn integer_canonical<'b>(text: &str, buf: &'b mut [u8; 48]) -> Option<&'b str> {
    let (neg, digits) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    if digits.is_empty() || digits.len() > 40 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let Some(last) = digits.iter().rposition(|&d| d != b'0') else {
        buf[0] = b'0';
        return std::str::from_utf8(&buf[..1]).ok();
    };
    let kept = &digits[..=last];
    let zeros = digits.len() - kept.len();
    let mut n = 0;
    if neg {
        buf[0] = b'-';
        n = 1;
    }
    buf[n..n + kept.len()].copy_from_slice(kept);
    n += kept.len();
    buf[n] = b'e';
    n += 1;
    if zeros >= 10 {
        buf[n] = b'0' + (zeros / 10) as u8;
        n += 1;
    }
    buf[n] = b'0' + (zeros % 10) as u8;
    n += 1;
    std::str::from_utf8(&buf[..n]).ok()
}

/// The keyword a violation names: for a `false` subschema reached through
/// `additionalProperties: false` and friends, the keyword that said no.
fn false_keyword(p: &Program, keyword: &'static str, label: u32) -> &'static str {
    if keyword != "false" || label == NONE {
        return keyword;
    }
    Keyword::from_name(p.label_head(label))
        .filter(|k| k.names_false())
        .map_or(keyword, Keyword::name)
}

/// Whether a failure through this edge fails the parent outright.
fn conjunctive(slot: Slot) -> bool {
    matches!(
        slot,
        Slot::AllOf | Slot::Member | Slot::Item | Slot::PropertyName
    )
}

/// Mixes two 128-bit values (order-sensitive).
fn mix(a: u128, b: u128) -> u128 {
    let x = a.rotate_left(29) ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835);
    x.wrapping_mul(0xd6e8_feb8_6659_fd93_2545_f491_4f6c_dd1d) ^ (x >> 67)
}

fn two<T>(v: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    if a < b {
        let (l, r) = v.split_at_mut(b);
        (&mut l[a], &mut r[0])
    } else {
        let (l, r) = v.split_at_mut(a);
        (&mut r[0], &mut l[b])
    }
}

/// Index of `name` among the names a node watches: `required`, then `dependentRequired`
/// keys and values, then `dependentSchemas` keys (first occurrence wins).
fn watch_index(k: &Keywords, name: &str) -> Option<u32> {
    k.watch_index(name)
}

#[cfg(test)]
mod tests {
    use crate::validate::{Rejection, Validator};
    use crate::{Limits, Schema};

    /// The first violation of `doc`, as (keyword, keyword location, pointer, offset).
    fn violation(schema: &str, doc: &str) -> (String, String, String, u64) {
        let schema = Schema::compile(schema.as_bytes()).unwrap();
        match Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new()) {
            Err(Rejection::Violation(v)) => (
                v.keyword().to_string(),
                v.keyword_location().to_string(),
                v.instance_pointer().to_string(),
                v.offset(),
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Work units charged for a valid document.
    fn created(schema: &str, doc: &str) -> u64 {
        let schema = Schema::compile(schema.as_bytes()).unwrap();
        let mut v = Validator::new(&schema);
        v.validate_slice(doc.as_bytes(), Limits::new()).unwrap();
        v.rt.work()
    }

    #[test]
    fn locations_read_the_same_through_skipped_refs() {
        let s = r##"{"items":{"$ref":"#/$defs/a"},"$defs":{"a":{"$ref":"#/$defs/n"},"n":{"type":"integer"}}}"##;
        let got = violation(s, r#"[1,"x"]"#);
        assert_eq!(got.0, "type");
        assert_eq!(got.1, "/items/$ref/$ref/type");
        assert_eq!(got.2, "/1");
        assert_eq!(got.3, 3);
        // Objects behind a skipped `$ref`: the failing keyword of the target.
        let s = r##"{"properties":{"o":{"$ref":"#/$defs/o"}},"$defs":{"o":{"required":["k"]}}}"##;
        let got = violation(s, r#"{"o":{}}"#);
        assert_eq!(got.1, "/properties/o/$ref/required");
        assert_eq!(got.2, "/o");
    }

    #[test]
    fn false_behind_a_ref_keeps_its_keyword() {
        let s = r##"{"additionalProperties":{"$ref":"#/$defs/no"},"$defs":{"no":false}}"##;
        let got = violation(s, r#"{"a":1}"#);
        assert_eq!(got.0, "false");
        assert_eq!(got.1, "/additionalProperties/$ref");
    }

    #[test]
    fn skipped_refs_still_count_against_the_budget() {
        // The root eval; per item its visit by the root, the `$ref` skipped and the check of
        // the target; the root's visit at the array's end: 1 + 2 * 3 + 1.
        let s = r##"{"items":{"$ref":"#/$defs/n"},"$defs":{"n":{"type":"integer"}}}"##;
        assert_eq!(created(s, "[1,2]"), 8);
        // Containers: the root; the item's visit, the `$ref` and the target's eval; the
        // target's visit at the object's end and the root's at the array's end.
        let s = r##"{"items":{"$ref":"#/$defs/o"},"$defs":{"o":{"type":"object"}}}"##;
        assert_eq!(created(s, "[{}]"), 6);
    }

    #[test]
    fn scalar_checked_in_place_reports_its_pointer() {
        let s = r#"{"properties":{"a":{"properties":{"b":{"type":"string"}}}}}"#;
        let got = violation(s, r#"{"a":{"b":1}}"#);
        assert_eq!(got.1, "/properties/a/properties/b/type");
        assert_eq!(got.2, "/a/b");
        let got = violation(r#"{"type":"string"}"#, "1");
        assert_eq!((got.1.as_str(), got.2.as_str()), ("/type", ""));
    }

    /// The text path gives exactly the canonical form of the exact decimal.
    #[test]
    fn integer_canonical_matches_the_exact_decimal() {
        let mut texts: Vec<String> = vec!["0".into(), "-0".into()];
        for n in [
            1u64,
            7,
            10,
            42,
            100,
            120,
            1_000_000,
            999_999_999_999_999_999,
            10u64.pow(19),
        ] {
            texts.push(n.to_string());
            texts.push(format!("-{n}"));
        }
        texts.push(format!("1{}", "0".repeat(39)));
        texts.push(format!("-12{}", "0".repeat(38)));
        for t in &texts {
            let mut buf = [0u8; 48];
            let fast = super::integer_canonical(t, &mut buf).map(str::to_owned);
            let exact = crate::schema::decimal::Decimal::parse(t)
                .unwrap()
                .canonical();
            assert_eq!(fast.as_deref(), Some(exact.as_str()), "{t}");
        }
        let mut buf = [0u8; 48];
        for other in ["1.5", "1e3", "-2.0", &"9".repeat(41)] {
            assert_eq!(super::integer_canonical(other, &mut buf), None, "{other}");
        }
    }

    /// Integer bounds on fractions and integers agree with exact arithmetic, keyword for
    /// keyword: each schema is run once as is and once with a further, never-binding bound
    /// that is not an integer (which sends every check down the exact path).
    #[test]
    fn integer_bounds_agree_with_exact_comparison() {
        let numbers = [
            "-3", "-2.5", "-2", "-1.5", "-1", "-0.5", "-0", "0", "0.5", "1", "1.0", "1.5", "2",
            "2.5", "3", "3.000", "4.25", "6", "9.9",
        ];
        let fillers = [
            ("minimum", "-1000000.5"),
            ("maximum", "1000000.5"),
            ("exclusiveMinimum", "-1000000.5"),
            ("exclusiveMaximum", "1000000.5"),
        ];
        for bounds in [
            r#""minimum":1"#,
            r#""maximum":2"#,
            r#""exclusiveMinimum":-1"#,
            r#""exclusiveMaximum":3"#,
            r#""multipleOf":2"#,
            r#""minimum":-2,"maximum":3,"multipleOf":1"#,
            r#""exclusiveMinimum":0,"exclusiveMaximum":4"#,
        ] {
            let (name, value) = fillers
                .iter()
                .find(|(n, _)| !bounds.contains(&format!("\"{n}\"")))
                .unwrap();
            let int = format!("{{{bounds}}}");
            let exact = format!("{{{bounds},\"{name}\":{value}}}");
            for n in numbers {
                assert_eq!(outcome(&int, n), outcome(&exact, n), "{bounds} on {n}");
            }
        }
    }

    /// `Ok` or the failing keyword.
    fn outcome(schema: &str, doc: &str) -> Result<(), String> {
        let schema = Schema::compile(schema.as_bytes()).unwrap();
        match Validator::new(&schema).validate_slice(doc.as_bytes(), Limits::new()) {
            Ok(()) => Ok(()),
            Err(Rejection::Violation(v)) => Err(v.keyword().to_string()),
            Err(e) => panic!("{e}"),
        }
    }
}
