//! The keywords that bound a count: `minItems`/`maxItems` of an array and
//! `minProperties`/`maxProperties` of an object, as one record ([`Counts`]) with its compile
//! step, the checks both validator tiers call as items or members arrive and when the value
//! ends, and what a failure expected. (`minContains`/`maxContains` count matching items,
//! which each tier learns from its own evaluations of `contains`; they are not here.)

use super::Keyword;
use crate::json::Value;

/// What a [`Counts`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Counted {
    /// An array's items (`minItems`, `maxItems`).
    Items,
    /// An object's members (`minProperties`, `maxProperties`).
    Properties,
}

impl Counted {
    /// The lower and the upper bound's keyword.
    const fn keywords(self) -> (Keyword, Keyword) {
        match self {
            Counted::Items => (Keyword::MinItems, Keyword::MaxItems),
            Counted::Properties => (Keyword::MinProperties, Keyword::MaxProperties),
        }
    }

    /// The unit a message names, for `n` of them.
    const fn unit(self, n: u64) -> &'static str {
        match (self, n) {
            (Counted::Items, 1) => "item",
            (Counted::Items, _) => "items",
            (Counted::Properties, 1) => "property",
            (Counted::Properties, _) => "properties",
        }
    }
}

/// The two bounds on a count of items or members.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Counts {
    counted: Counted,
    /// The lower bound, 0 when absent.
    min: u64,
    /// The upper bound, `u64::MAX` when absent.
    max: u64,
}

impl Counts {
    /// The record that checks nothing.
    pub(crate) const fn none(counted: Counted) -> Counts {
        Counts {
            counted,
            min: 0,
            max: u64::MAX,
        }
    }

    /// The bounds on `counted` that the schema object `v` sets; `None` when it sets neither.
    /// `err` makes the error for a message.
    pub(crate) fn compile<E>(
        v: &Value,
        counted: Counted,
        err: impl Fn(String) -> E,
    ) -> Result<Option<Counts>, E> {
        let uint = |k: Keyword| match v.get(k.name()) {
            None => Ok(None),
            Some(x) => x
                .as_whole_u64()
                .map(Some)
                .ok_or_else(|| err(format!("'{}' must be a non-negative integer", k.name()))),
        };
        let (lower, upper) = counted.keywords();
        let min = uint(lower)?;
        let max = uint(upper)?;
        if min.is_none() && max.is_none() {
            return Ok(None);
        }
        Ok(Some(Counts {
            counted,
            min: min.unwrap_or(0),
            max: max.unwrap_or(u64::MAX),
        }))
    }

    /// Whether a count of `n` (so far) is past the upper bound.
    #[inline(always)]
    pub(crate) fn too_many(&self, n: u64) -> bool {
        n > self.max
    }

    /// Whether the count `n` is the first past the upper bound: where a validator that goes
    /// on after a violation reports it, once.
    #[inline(always)]
    pub(crate) fn first_too_many(&self, n: u64) -> bool {
        n.checked_sub(1) == Some(self.max)
    }

    /// The upper bound's keyword, which [`too_many`](Self::too_many) fails.
    pub(crate) const fn upper(&self) -> &'static str {
        self.counted.keywords().1.name()
    }

    /// The keyword a value that ends with a count of `n` fails, if any.
    #[inline(always)]
    pub(crate) fn end(&self, n: u64) -> Option<&'static str> {
        (n < self.min).then_some(self.counted.keywords().0.name())
    }

    /// What a failure of `keyword` expected (`expected at least 2 items`); `None` for other
    /// keywords.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        let (lower, upper) = self.counted.keywords();
        let (what, n) = if keyword == lower {
            ("at least", self.min)
        } else if keyword == upper {
            ("at most", self.max)
        } else {
            return None;
        };
        Some(format!("expected {what} {n} {}", self.counted.unit(n)))
    }
}

#[cfg(test)]
mod tests {
    use super::{Counted, Counts, Keyword};
    use crate::json::Value;
    use crate::Limits;

    fn compile(schema: &str, counted: Counted) -> Result<Option<Counts>, String> {
        let v = Value::parse(schema.as_bytes(), Limits::new()).unwrap();
        Counts::compile(&v, counted, |m| m)
    }

    #[test]
    fn bounds_fail_at_the_first_one_too_many_and_at_the_end() {
        for (counted, schema, lower, upper, unit) in [
            (
                Counted::Items,
                r#"{"minItems":2,"maxItems":3}"#,
                "minItems",
                "maxItems",
                "items",
            ),
            (
                Counted::Properties,
                r#"{"minProperties":2,"maxProperties":3}"#,
                "minProperties",
                "maxProperties",
                "properties",
            ),
        ] {
            let c = compile(schema, counted).unwrap().unwrap();
            assert!(!c.too_many(3) && c.too_many(4) && c.too_many(5));
            assert!(!c.first_too_many(3) && c.first_too_many(4) && !c.first_too_many(5));
            assert_eq!((c.end(1), c.end(2)), (Some(lower), None));
            assert_eq!(c.upper(), upper);
            let lower = Keyword::from_name(lower).unwrap();
            let upper = Keyword::from_name(upper).unwrap();
            assert_eq!(
                c.expected(lower).unwrap(),
                format!("expected at least 2 {unit}")
            );
            assert_eq!(
                c.expected(upper).unwrap(),
                format!("expected at most 3 {unit}")
            );
            assert_eq!(c.expected(Keyword::Required), None);
        }
        let one = compile(r#"{"maxProperties":1}"#, Counted::Properties)
            .unwrap()
            .unwrap();
        assert_eq!(
            one.expected(Keyword::MaxProperties).unwrap(),
            "expected at most 1 property"
        );
        let one = compile(r#"{"minItems":1}"#, Counted::Items)
            .unwrap()
            .unwrap();
        assert_eq!(
            one.expected(Keyword::MinItems).unwrap(),
            "expected at least 1 item"
        );
        // The other kind's keywords are not read.
        assert_eq!(
            compile(r#"{"minItems":1}"#, Counted::Properties).unwrap(),
            None
        );
    }

    #[test]
    fn the_largest_bound_does_not_overflow() {
        let c = compile(
            r#"{"maxProperties":18446744073709551615}"#,
            Counted::Properties,
        )
        .unwrap()
        .unwrap();
        assert!(!c.too_many(u64::MAX) && !c.first_too_many(u64::MAX) && !c.first_too_many(0));
        let none = Counts::none(Counted::Items);
        assert!(!none.too_many(u64::MAX) && none.end(0).is_none());
        let zero = compile(r#"{"maxItems":0}"#, Counted::Items)
            .unwrap()
            .unwrap();
        assert!(zero.too_many(1) && zero.first_too_many(1) && !zero.first_too_many(0));
    }

    #[test]
    fn absent_bounds_make_no_record_and_bad_bounds_are_errors() {
        assert_eq!(
            compile(r#"{"type":"object"}"#, Counted::Properties).unwrap(),
            None
        );
        assert_eq!(
            compile(r#"{"minProperties":"1"}"#, Counted::Properties).unwrap_err(),
            "'minProperties' must be a non-negative integer"
        );
        assert_eq!(
            compile(r#"{"maxItems":1.5}"#, Counted::Items).unwrap_err(),
            "'maxItems' must be a non-negative integer"
        );
        assert!(compile(r#"{"maxItems":2.0}"#, Counted::Items)
            .unwrap()
            .is_some());
    }
}
