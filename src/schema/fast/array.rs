//! Array keywords: the edges of `prefixItems` and `items` (draft-07's array `items` and
//! `additionalItems` arrive as these two), beside the record of `minItems`, `maxItems` and
//! `uniqueItems` (`crate::schema::keywords::array`'s, whose checks both tiers call).
//!
//! `uniqueItems` reaches this tier only over items that are scalars or fail as they begin;
//! the runtime hashes each scalar item (numbers by their canonical text, so `1` and `1.0`
//! collide) and rejects the first repeat.

use super::{Edges, NONE};
use crate::schema::keywords::array::Arrays;
use crate::schema::program::{Keywords, Program};

/// The array keywords of one node.
#[derive(Debug)]
pub(crate) struct ArrayPlan {
    /// Edges (into `Plan::edges`) of `prefixItems`, and of `items` or [`NONE`].
    prefix: Box<[u32]>,
    items: u32,
    /// `minItems`, `maxItems`, `uniqueItems` (the keyword group's own record).
    pub(crate) bounds: Arrays,
}

impl ArrayPlan {
    /// The record that checks nothing (for arrays under a node without array keywords).
    pub(crate) fn empty() -> ArrayPlan {
        ArrayPlan {
            prefix: Box::new([]),
            items: NONE,
            bounds: Arrays::NONE,
        }
    }

    /// The record of `k`'s array keywords; `None` when it has none.
    pub(crate) fn lower(p: &Program, k: &Keywords, edges: &mut Edges) -> Option<ArrayPlan> {
        let any = !k.prefix_items.is_empty() || k.items.is_some() || k.arrays.is_some();
        any.then(|| ArrayPlan {
            prefix: k.prefix_items.iter().map(|c| edges.add(p, c)).collect(),
            items: k.items.as_ref().map_or(NONE, |c| edges.add(p, c)),
            bounds: k.arrays.as_deref().cloned().unwrap_or(Arrays::NONE),
        })
    }

    /// The edge of item `index` (or [`NONE`]), or `Err("maxItems")` when the array has one
    /// too many.
    #[inline]
    pub(crate) fn item(&self, index: u64) -> Result<u32, &'static str> {
        if self.bounds.counts.too_many(index + 1) {
            return Err(self.bounds.counts.upper());
        }
        Ok(usize::try_from(index)
            .ok()
            .and_then(|i| self.prefix.get(i))
            .copied()
            .unwrap_or(self.items))
    }

    /// The keyword an array of `count` items fails at its end, if any.
    pub(crate) fn end(&self, count: u64) -> Option<&'static str> {
        self.bounds.counts.end(count)
    }
}

#[cfg(test)]
mod tests {
    use super::{ArrayPlan, Edges};
    use crate::schema::program::NodeKind;
    use crate::Schema;

    #[test]
    fn items_counts_and_prefix() {
        let s = Schema::compile(
            br#"{"prefixItems":[{"type":"string"}],"items":{"type":"integer"},"minItems":2,"maxItems":3}"#,
        )
        .unwrap();
        let p = s.program();
        let NodeKind::Keywords(k) = &p.nodes[p.root as usize].kind else {
            panic!()
        };
        let mut edges = Edges::default();
        let a = ArrayPlan::lower(p, k, &mut edges).unwrap();
        let node = |i| edges.0[a.item(i).unwrap() as usize].node;
        assert_eq!(node(0), k.prefix_items[0].node);
        assert_eq!(Some(node(1)), k.items.as_ref().map(|c| c.node));
        assert_eq!(node(2), node(1));
        assert_eq!(a.item(3).unwrap_err(), "maxItems");
        assert_eq!(a.end(1), Some("minItems"));
        assert_eq!(a.end(2), None);
    }
}
