//! The object keywords that count members: `minProperties` and `maxProperties`: their
//! compile step, their record ([`Properties`]) with the checks both validator tiers call as
//! members arrive and when the object ends, and what a failure expected.
//!
//! The object keywords that hold subschemas or watch names (`properties`,
//! `patternProperties`, `additionalProperties`, `propertyNames`, `required`,
//! `dependentRequired`, `dependentSchemas`) still have their records in
//! `crate::schema::program::Keywords` and, for the specialised tier, in its member table
//! (`crate::schema::fast::object`).

use super::Keyword;
use crate::json::Value;

/// `minProperties` and `maxProperties` of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Properties {
    /// `minProperties`, 0 when absent.
    min: u64,
    /// `maxProperties`, `u64::MAX` when absent.
    max: u64,
}

impl Properties {
    /// The record that checks nothing.
    pub(crate) const NONE: Properties = Properties {
        min: 0,
        max: u64::MAX,
    };

    /// The keywords of the schema object `v`; `None` when it has neither. `err` makes the
    /// error for a message.
    pub(crate) fn compile<E>(
        v: &Value,
        err: impl Fn(String) -> E,
    ) -> Result<Option<Box<Properties>>, E> {
        let uint = |k: Keyword| match v.get(k.name()) {
            None => Ok(None),
            Some(x) => x
                .as_whole_u64()
                .map(Some)
                .ok_or_else(|| err(format!("'{}' must be a non-negative integer", k.name()))),
        };
        let min = uint(Keyword::MinProperties)?;
        let max = uint(Keyword::MaxProperties)?;
        if min.is_none() && max.is_none() {
            return Ok(None);
        }
        Ok(Some(Box::new(Properties {
            min: min.unwrap_or(0),
            max: max.unwrap_or(u64::MAX),
        })))
    }

    /// Whether an object of `count` members (so far) has too many.
    #[inline(always)]
    pub(crate) fn too_many(&self, count: u64) -> bool {
        count > self.max
    }

    /// Whether the member that made the count `count` is the first past `maxProperties`:
    /// where a validator that goes on after a violation reports it, once.
    #[inline(always)]
    pub(crate) fn first_too_many(&self, count: u64) -> bool {
        count.checked_sub(1) == Some(self.max)
    }

    /// Whether an object with one member passes `maxProperties`.
    pub(crate) fn allows_a_member(&self) -> bool {
        self.max >= 1
    }

    /// The keyword an object of `count` members fails when it ends, if any.
    #[inline(always)]
    pub(crate) fn end(&self, count: u64) -> Option<&'static str> {
        (count < self.min).then_some(Keyword::MinProperties.name())
    }

    /// What a failure of `keyword` expected (`expected at most 2 properties`); `None` for
    /// the keywords of other groups.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        let (what, n) = match keyword {
            Keyword::MinProperties => ("at least", self.min),
            Keyword::MaxProperties => ("at most", self.max),
            _ => return None,
        };
        Some(match n {
            1 => format!("expected {what} 1 property"),
            n => format!("expected {what} {n} properties"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Keyword, Properties};
    use crate::json::Value;
    use crate::Limits;

    fn compile(schema: &str) -> Result<Option<Box<Properties>>, String> {
        let v = Value::parse(schema.as_bytes(), Limits::new()).unwrap();
        Properties::compile(&v, |m| m)
    }

    #[test]
    fn bounds_fail_at_the_first_member_too_many_and_at_the_end() {
        let p = compile(r#"{"minProperties":2,"maxProperties":3}"#)
            .unwrap()
            .unwrap();
        assert!(!p.too_many(3) && p.too_many(4) && p.too_many(5));
        assert!(!p.first_too_many(3) && p.first_too_many(4) && !p.first_too_many(5));
        assert_eq!(p.end(1), Some("minProperties"));
        assert_eq!(p.end(2), None);
        assert!(p.allows_a_member());
        assert_eq!(
            p.expected(Keyword::MinProperties).unwrap(),
            "expected at least 2 properties"
        );
        assert_eq!(
            p.expected(Keyword::MaxProperties).unwrap(),
            "expected at most 3 properties"
        );
        assert_eq!(p.expected(Keyword::Required), None);
        let zero = compile(r#"{"maxProperties":0}"#).unwrap().unwrap();
        assert!(!zero.allows_a_member() && zero.first_too_many(1) && !zero.first_too_many(0));
        let one = compile(r#"{"minProperties":1}"#).unwrap().unwrap();
        assert_eq!(
            one.expected(Keyword::MinProperties).unwrap(),
            "expected at least 1 property"
        );
    }

    #[test]
    fn the_largest_bound_does_not_overflow() {
        let p = compile(r#"{"maxProperties":18446744073709551615}"#)
            .unwrap()
            .unwrap();
        assert!(!p.too_many(u64::MAX) && !p.first_too_many(u64::MAX) && !p.first_too_many(0));
        assert!(!Properties::NONE.too_many(u64::MAX) && Properties::NONE.end(0).is_none());
    }

    #[test]
    fn absent_keywords_make_no_record_and_bad_bounds_are_errors() {
        assert_eq!(compile(r#"{"type":"object"}"#).unwrap(), None);
        assert_eq!(
            compile(r#"{"minProperties":"1"}"#).unwrap_err(),
            "'minProperties' must be a non-negative integer"
        );
        assert_eq!(
            compile(r#"{"maxProperties":-2}"#).unwrap_err(),
            "'maxProperties' must be a non-negative integer"
        );
    }
}
