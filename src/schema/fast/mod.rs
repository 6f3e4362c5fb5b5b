//! The specialised tier's program: the subschemas of a program that the specialised
//! validator runs (`Program::fast_tier_applies`), lowered into compact records that hold only
//! the checks a subschema has.
//!
//! The general program ([`Program`]) keeps every keyword of a node in one wide record, so
//! that any evaluation can find any keyword; walking it for every value costs a compare per
//! keyword a node does not have. Here each node is a few bytes ([`PNode`]): which kinds of
//! value pass its `type`, which of them have further checks, and where the records of those
//! checks are. A string value under `{"type":"string"}` is then one bit test; under
//! `{"enum":["a","b"]}` a bit test and two key compares.
//!
//! The records of the number, string and `enum`/`const` groups are the keyword groups' own
//! (`crate::schema::keywords`), whose checks both tiers call. The groups not yet moved there
//! have one file each here, with its lowering from the node's keywords, the hooks the runtime
//! calls while the instance streams by, and the keyword a failure names:
//! - [`object`]: `properties`, `additionalProperties`, `propertyNames`, `required`,
//!   `dependentRequired` (the member table);
//! - [`array`]: `prefixItems`, `items` (beside the array group's record of the counts).
//!
//! `type` is [`PNode::accept`], in the bits of `crate::schema::keywords::types` that both
//! tiers read. Every check here gives the general tier's verdict, keyword
//! and evaluation-budget units (tests compare the two tiers on every input they run); where
//! the answer takes more than this record holds (a type mismatch, whose keyword may still be
//! `false`, `const` or `type`, or `1.0` under `"type":"integer"`), the runtime asks the
//! general program instead.

pub(crate) mod array;
pub(crate) mod object;

use super::decimal::Decimal;
use super::keywords::number::Numbers;
use super::keywords::string::Strings;
use super::keywords::types;
use super::keywords::values::{Const, Scalar, Values};
use super::program::{Child, NodeId, NodeKind, Program};
use crate::scan::Event;

/// "No edge", "no record", "no watched name".
pub(crate) const NONE: u32 = u32::MAX;

/// The record of a node without object (or array) keywords: index 0 of [`Plan::objects`]
/// and [`Plan::arrays`] is an empty record, which checks nothing.
pub(crate) const EMPTY: u32 = 0;

/// What an edge leads to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum To {
    /// A subschema to apply to the value.
    Schema,
    /// `true`: the value is not constrained (and is skipped).
    Anything,
    /// `false`: the value fails as it begins.
    Nothing,
}

/// An edge to the subschema of a child value (`properties/id`, `items`), as the runtime
/// follows it, with the lowered target at hand.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Edge {
    pub(crate) node: NodeId,
    /// Index into [`Program::labels`].
    pub(crate) label: u32,
    /// `$ref`-only subschemas the edge goes through (charged to the budget).
    pub(crate) skipped: u32,
    pub(crate) to: To,
    /// `node`, lowered.
    pub(crate) pn: PNode,
}

/// The edges of a plan, added while its nodes are lowered (by index: [`Plan::edges`]).
#[derive(Debug, Default)]
pub(crate) struct Edges(Vec<Edge>);

impl Edges {
    /// Adds the edge `c` (whose target is lowered later) and returns its index.
    pub(crate) fn add(&mut self, p: &Program, c: &Child) -> u32 {
        let to = match p.nodes[c.node as usize].kind {
            NodeKind::Bool(true) => To::Anything,
            NodeKind::Bool(false) => To::Nothing,
            _ => To::Schema,
        };
        self.0.push(Edge {
            node: c.node,
            label: c.label,
            skipped: c.skipped,
            to,
            pn: PNode::NOTHING,
        });
        self.0.len() as u32 - 1
    }

    /// What edge `e` leads to.
    pub(crate) fn to(&self, e: u32) -> To {
        self.0[e as usize].to
    }
}

/// One subschema, lowered.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PNode {
    /// The kinds of value that pass the node's `type` and can pass everything else it
    /// says of a value's first event (none for `false`, the constant's kind for a scalar
    /// constant, no container when a scalar `enum` or `const` is there); other kinds are
    /// decided by the general program.
    pub(crate) accept: u8,
    /// The kinds (among `accept`) that [`PNode::scalar`]'s checks apply to.
    pub(crate) checked: u8,
    /// Whether a number must be parsed exactly before the node sees it.
    pub(crate) decimal: bool,
    /// Index into [`Plan::objects`] ([`EMPTY`]: nothing is checked per member).
    pub(crate) object: u32,
    /// Index into [`Plan::arrays`] ([`EMPTY`]: nothing is checked per item).
    pub(crate) array: u32,
    /// Index into [`Plan::scalars`], or [`NONE`].
    pub(crate) scalar: u32,
}

impl PNode {
    const NOTHING: PNode = PNode {
        accept: 0,
        checked: 0,
        decimal: false,
        object: EMPTY,
        array: EMPTY,
        scalar: NONE,
    };
}

/// Why a scalar check failed: the keyword groups' own answer.
pub(crate) use super::keywords::Stop;

/// The scalar checks of one node, in the general tier's order: numbers or strings, then
/// `enum`, then `const`.
#[derive(Debug)]
pub(crate) struct ScalarPlan {
    pub(crate) number: Option<Numbers>,
    pub(crate) string: Option<Strings>,
    pub(crate) values: Option<Values>,
}

impl ScalarPlan {
    /// Checks a scalar's first (and only) event; `num` is its exact value when the node asked
    /// for one ([`PNode::decimal`]). Adds the budget units the checks cost to `units`.
    #[inline]
    pub(crate) fn check(
        &self,
        ev: &Event<'_>,
        num: Option<&Decimal>,
        units: &mut u64,
    ) -> Result<(), Stop> {
        match ev {
            Event::Number(n) => {
                if let Some(c) = &self.number {
                    c.check(n.as_str(), num).map_err(Stop::Keyword)?;
                }
            }
            Event::String(s) => return self.check_string(s, units),
            _ => {}
        }
        match &self.values {
            Some(v) => v.check(ev, num, units).map_err(Stop::Keyword),
            None => Ok(()),
        }
    }

    /// [`check`](Self::check) for a string value.
    #[inline]
    pub(crate) fn check_string(&self, s: &str, units: &mut u64) -> Result<(), Stop> {
        if let Some(c) = &self.string {
            c.check(s, units)?;
        }
        match &self.values {
            Some(v) => v.check_string(s, units).map_err(Stop::Keyword),
            None => Ok(()),
        }
    }
}

/// The lowered program.
#[derive(Debug)]
pub(crate) struct Plan {
    /// One per node of the program, by [`NodeId`].
    pub(crate) nodes: Vec<PNode>,
    /// The edges the records below name, by index.
    pub(crate) edges: Vec<Edge>,
    pub(crate) objects: Vec<object::ObjectPlan>,
    pub(crate) arrays: Vec<array::ArrayPlan>,
    pub(crate) scalars: Vec<ScalarPlan>,
}

impl Plan {
    /// Lowers every node of `p` (those the specialised tier never reaches too: lowering
    /// reads only what each node holds).
    pub(crate) fn lower(p: &Program) -> Plan {
        let mut plan = Plan {
            nodes: Vec::with_capacity(p.nodes.len()),
            edges: Vec::new(),
            objects: vec![object::ObjectPlan::empty()],
            arrays: vec![array::ArrayPlan::empty()],
            scalars: Vec::new(),
        };
        let mut edges = Edges::default();
        for node in &p.nodes {
            let lowered = match &node.kind {
                NodeKind::Bool(true) => PNode {
                    accept: types::ALL,
                    ..PNode::NOTHING
                },
                NodeKind::Bool(false) => PNode::NOTHING,
                NodeKind::Const(c) => match Scalar::of(c) {
                    Some(s) => {
                        let k = scalar_kind(&s);
                        let decimal = matches!(c, Const::Number(_));
                        plan.scalars.push(ScalarPlan {
                            number: None,
                            string: None,
                            values: Some(Values::constant(s)),
                        });
                        PNode {
                            accept: k,
                            checked: k,
                            decimal,
                            scalar: plan.scalars.len() as u32 - 1,
                            ..PNode::NOTHING
                        }
                    }
                    None => PNode::NOTHING,
                },
                NodeKind::Keywords(k) => {
                    let mut accept = match k.types {
                        None => types::ALL,
                        Some(t) => types::accept(t),
                    };
                    let values = k.values.as_deref().cloned();
                    if values.is_some() {
                        // Only scalar constants reach this tier: a container never equals one.
                        accept &= types::SCALARS;
                    }
                    let number = k.numbers.as_deref().cloned();
                    let string = k.strings.as_deref().cloned();
                    let mut checked = 0;
                    if number.is_some() {
                        checked |= types::INTEGER | types::NUMBER;
                    }
                    if string.is_some() {
                        checked |= types::STRING;
                    }
                    if values.is_some() {
                        checked |= types::SCALARS;
                    }
                    checked &= accept;
                    let scalar = if checked == 0 {
                        NONE
                    } else {
                        plan.scalars.push(ScalarPlan {
                            number,
                            string,
                            values,
                        });
                        plan.scalars.len() as u32 - 1
                    };
                    let object = match object::ObjectPlan::lower(p, k, &mut edges) {
                        Some(o) => {
                            plan.objects.push(o);
                            plan.objects.len() as u32 - 1
                        }
                        None => EMPTY,
                    };
                    let array = match array::ArrayPlan::lower(p, k, &mut edges) {
                        Some(a) => {
                            plan.arrays.push(a);
                            plan.arrays.len() as u32 - 1
                        }
                        None => EMPTY,
                    };
                    PNode {
                        accept,
                        checked,
                        decimal: k.needs_decimal,
                        object,
                        array,
                        scalar,
                    }
                }
            };
            plan.nodes.push(lowered);
        }
        edges.add(
            p,
            &Child {
                node: p.root,
                label: NONE,
                skipped: 0,
            },
        );
        plan.edges = edges.0;
        // The root is evaluated whatever it is (`true` and `false` included).
        if let Some(root) = plan.edges.last_mut() {
            root.to = To::Schema;
        }
        for e in &mut plan.edges {
            e.pn = plan.nodes[e.node as usize];
        }
        plan
    }

    /// The edge to the root value, where a document starts (the last of [`Plan::edges`]).
    pub(crate) fn root_edge(&self) -> u32 {
        self.edges.len() as u32 - 1
    }
}

/// The kinds of value that can equal the scalar constant `s`.
fn scalar_kind(s: &Scalar) -> u8 {
    match s {
        Scalar::Null => types::NULL,
        Scalar::Bool(_) => types::BOOLEAN,
        Scalar::String(_) => types::STRING,
        Scalar::Number(_) => types::INTEGER | types::NUMBER,
        Scalar::Container => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Schema;

    fn lowered(schema: &str) -> (Schema, PNode) {
        let s = Schema::compile(schema.as_bytes()).unwrap();
        let plan = Plan::lower(s.program());
        let root = plan.nodes[s.program().root as usize];
        (s, root)
    }

    #[test]
    fn type_is_a_set_of_kinds() {
        assert_eq!(lowered(r#"{"type":"string"}"#).1.accept, types::STRING);
        assert_eq!(lowered(r#"{"type":"integer"}"#).1.accept, types::INTEGER);
        assert_eq!(
            lowered(r#"{"type":["number","null"]}"#).1.accept,
            types::INTEGER | types::NUMBER | types::NULL
        );
        assert_eq!(lowered("{}").1.accept, types::ALL);
        assert_eq!(lowered("false").1.accept, 0);
    }

    #[test]
    fn only_present_checks_are_recorded() {
        let (_, n) = lowered(r#"{"type":"string"}"#);
        assert_eq!(
            (n.checked, n.scalar, n.object, n.array),
            (0, NONE, EMPTY, EMPTY)
        );
        let (_, n) = lowered(r#"{"type":"string","maxLength":3,"minimum":1}"#);
        assert_eq!(n.checked, types::STRING);
        let (_, n) = lowered(r#"{"enum":["a",1]}"#);
        assert_eq!((n.accept, n.checked), (types::SCALARS, types::SCALARS));
        let (_, n) = lowered(r#"{"properties":{"a":true}}"#);
        assert!(n.object != EMPTY && n.array == EMPTY);
    }

    #[test]
    fn numbers_are_told_apart_only_for_integer() {
        let ev = Event::Number(crate::scan::Number::parse("1.5").unwrap());
        assert_eq!(types::written(&ev, types::INTEGER), types::NUMBER);
        assert_eq!(types::written(&ev, types::ALL), types::INTEGER);
        let ev = Event::Number(crate::scan::Number::parse("15").unwrap());
        assert_eq!(types::written(&ev, types::INTEGER), types::INTEGER);
    }
}
