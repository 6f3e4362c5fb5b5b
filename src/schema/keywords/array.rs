//! The array keywords that are not applicators: `minItems`, `maxItems` and `uniqueItems`:
//! their compile step, their record ([`Arrays`]) with the checks both validator tiers call
//! as items arrive and when the array ends, and what a failure expected.
//!
//! `prefixItems`, `items` (draft-07's array `items` and `additionalItems` arrive as these
//! two) and `contains` hold subschemas, which each tier follows its own way (edges of the
//! specialised program, evaluations of the general one); they are not here. How `uniqueItems`
//! compares items (by a hash of each item's canonical form as it streams by) is the
//! runtime's; the record says only whether it applies.

use super::Keyword;
use crate::json::Value;

/// `minItems`, `maxItems` and `uniqueItems` of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Arrays {
    /// `minItems`, 0 when absent.
    min_items: u64,
    /// `maxItems`, `u64::MAX` when absent.
    max_items: u64,
    /// `uniqueItems: true`.
    pub(crate) unique: bool,
}

impl Arrays {
    /// The record that checks nothing.
    pub(crate) const NONE: Arrays = Arrays {
        min_items: 0,
        max_items: u64::MAX,
        unique: false,
    };

    /// The keywords of the schema object `v`; `None` when it has none. `err` makes the error
    /// for a message.
    pub(crate) fn compile<E>(
        v: &Value,
        err: impl Fn(String) -> E,
    ) -> Result<Option<Box<Arrays>>, E> {
        let uint = |k: Keyword| match v.get(k.name()) {
            None => Ok(None),
            Some(x) => x
                .as_whole_u64()
                .map(Some)
                .ok_or_else(|| err(format!("'{}' must be a non-negative integer", k.name()))),
        };
        let min_items = uint(Keyword::MinItems)?;
        let max_items = uint(Keyword::MaxItems)?;
        let unique = v.get(Keyword::UniqueItems.name()) == Some(&Value::Bool(true));
        if min_items.is_none() && max_items.is_none() && !unique {
            return Ok(None);
        }
        Ok(Some(Box::new(Arrays {
            min_items: min_items.unwrap_or(0),
            max_items: max_items.unwrap_or(u64::MAX),
            unique,
        })))
    }

    /// Whether item `index` (from 0) is past `maxItems`.
    #[inline(always)]
    pub(crate) fn too_many(&self, index: u64) -> bool {
        index >= self.max_items
    }

    /// Whether item `index` is the first past `maxItems`: where a validator that goes on
    /// after a violation reports it, once.
    #[inline(always)]
    pub(crate) fn first_too_many(&self, index: u64) -> bool {
        index == self.max_items
    }

    /// The keyword an array of `count` items fails when it ends, if any.
    #[inline(always)]
    pub(crate) fn end(&self, count: u64) -> Option<&'static str> {
        (count < self.min_items).then_some(Keyword::MinItems.name())
    }

    /// What a failure of `keyword` expected (`expected at least 2 items`); `None` for the
    /// keywords of other groups and for `uniqueItems`, whose name says it all.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        let (what, n) = match keyword {
            Keyword::MinItems => ("at least", self.min_items),
            Keyword::MaxItems => ("at most", self.max_items),
            _ => return None,
        };
        Some(match n {
            1 => format!("expected {what} 1 item"),
            n => format!("expected {what} {n} items"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Arrays, Keyword};
    use crate::json::Value;
    use crate::Limits;

    fn compile(schema: &str) -> Result<Option<Box<Arrays>>, String> {
        let v = Value::parse(schema.as_bytes(), Limits::new()).unwrap();
        Arrays::compile(&v, |m| m)
    }

    #[test]
    fn bounds_fail_at_the_first_item_too_many_and_at_the_end() {
        let a = compile(r#"{"minItems":2,"maxItems":3}"#).unwrap().unwrap();
        assert!(!a.too_many(2) && a.too_many(3) && a.too_many(4));
        assert!(!a.first_too_many(2) && a.first_too_many(3) && !a.first_too_many(4));
        assert_eq!(a.end(1), Some("minItems"));
        assert_eq!(a.end(2), None);
        assert!(!a.unique);
        assert_eq!(
            a.expected(Keyword::MinItems).unwrap(),
            "expected at least 2 items"
        );
        assert_eq!(
            a.expected(Keyword::MaxItems).unwrap(),
            "expected at most 3 items"
        );
        assert_eq!(a.expected(Keyword::UniqueItems), None);
        let one = compile(r#"{"maxItems":1,"uniqueItems":true}"#)
            .unwrap()
            .unwrap();
        assert_eq!(
            one.expected(Keyword::MaxItems).unwrap(),
            "expected at most 1 item"
        );
        assert!(one.unique && one.end(0).is_none());
        assert!(!Arrays::NONE.too_many(u64::MAX - 1) && Arrays::NONE.end(0).is_none());
    }

    #[test]
    fn absent_or_false_keywords_make_no_record_and_bad_bounds_are_errors() {
        assert_eq!(compile(r#"{"uniqueItems":false}"#).unwrap(), None);
        assert_eq!(compile(r#"{"type":"array"}"#).unwrap(), None);
        assert_eq!(
            compile(r#"{"minItems":-1}"#).unwrap_err(),
            "'minItems' must be a non-negative integer"
        );
        assert_eq!(
            compile(r#"{"maxItems":1.5}"#).unwrap_err(),
            "'maxItems' must be a non-negative integer"
        );
        assert!(compile(r#"{"maxItems":2.0}"#).unwrap().is_some());
    }
}
