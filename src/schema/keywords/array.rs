//! The array keywords that are not applicators: `minItems`, `maxItems` (a [`Counts`] of
//! items) and `uniqueItems`, as one record ([`Arrays`]) with its compile step; the checks
//! both validator tiers call are the counts'.
//!
//! `prefixItems`, `items` (draft-07's array `items` and `additionalItems` arrive as these
//! two) and `contains` hold subschemas, which each tier follows its own way (edges of the
//! specialised program, evaluations of the general one); they are not here. How `uniqueItems`
//! compares items (by a hash of each item's canonical form as it streams by) is the
//! runtime's; the record says only whether it applies.

use super::count::{Counted, Counts};
use super::Keyword;
use crate::json::Value;

/// `minItems`, `maxItems` and `uniqueItems` of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Arrays {
    /// `minItems` and `maxItems`.
    pub(crate) counts: Counts,
    /// `uniqueItems: true`.
    pub(crate) unique: bool,
}

impl Arrays {
    /// The record that checks nothing.
    pub(crate) const NONE: Arrays = Arrays {
        counts: Counts::none(Counted::Items),
        unique: false,
    };

    /// The keywords of the schema object `v`; `None` when it has none. `err` makes the error
    /// for a message.
    pub(crate) fn compile<E>(
        v: &Value,
        err: impl Fn(String) -> E,
    ) -> Result<Option<Box<Arrays>>, E> {
        let counts = Counts::compile(v, Counted::Items, err)?;
        let unique = v.get(Keyword::UniqueItems.name()) == Some(&Value::Bool(true));
        if counts.is_none() && !unique {
            return Ok(None);
        }
        Ok(Some(Box::new(Arrays {
            counts: counts.unwrap_or(Counts::none(Counted::Items)),
            unique,
        })))
    }

    /// What a failure of `keyword` expected (`expected at least 2 items`); `None` for the
    /// keywords of other groups and for `uniqueItems`, whose name says it all.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        self.counts.expected(keyword)
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
    fn unique_items_alone_or_with_bounds_make_a_record() {
        let a = compile(r#"{"minItems":2,"maxItems":3}"#).unwrap().unwrap();
        assert!(!a.unique && a.counts.too_many(4) && a.counts.end(1) == Some("minItems"));
        assert_eq!(
            a.expected(Keyword::MaxItems).unwrap(),
            "expected at most 3 items"
        );
        assert_eq!(a.expected(Keyword::UniqueItems), None);
        let u = compile(r#"{"uniqueItems":true}"#).unwrap().unwrap();
        assert!(u.unique && !u.counts.too_many(u64::MAX) && u.counts.end(0).is_none());
        assert!(!Arrays::NONE.unique && !Arrays::NONE.counts.too_many(u64::MAX));
    }

    #[test]
    fn absent_or_false_keywords_make_no_record_and_bad_bounds_are_errors() {
        assert_eq!(compile(r#"{"uniqueItems":false}"#).unwrap(), None);
        assert_eq!(compile(r#"{"type":"array"}"#).unwrap(), None);
        assert_eq!(
            compile(r#"{"minItems":-1}"#).unwrap_err(),
            "'minItems' must be a non-negative integer"
        );
    }
}
