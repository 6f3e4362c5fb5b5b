//! Numeric bounds: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`.
//!
//! Lowered from a node's keywords into one record; integer bounds that fit `i64` are checked
//! with integer arithmetic on numbers whose text is short ([`small_number`]), everything else
//! with exact decimals. The checks run in the general tier's order, so the first bound broken
//! is the keyword named.

use crate::schema::decimal::Decimal;
use crate::schema::program::{IntBounds, Keywords};

/// A number literal read without exact decimal arithmetic.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Small {
    /// An integer (`12`, `-3`, `7.000`).
    Int(i64),
    /// A value strictly between this integer and the next (`2.5` → 2, `-0.5` → -1).
    Between(i64),
}

/// Reads a literal with at most 18 integer digits (so it fits `i64` without a check) and
/// no exponent; `None` for anything else, which takes the exact path.
#[inline]
pub(crate) fn small_number(text: &str) -> Option<Small> {
    let (neg, rest) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        all => (false, all),
    };
    let mut n: i64 = 0;
    let mut digits = 0;
    for &b in rest {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if digits == 18 {
            return None;
        }
        n = n * 10 + i64::from(d);
        digits += 1;
    }
    if digits == 0 {
        return None;
    }
    let fraction = match &rest[digits..] {
        [] => false,
        [b'.', frac @ ..] => {
            let mut nonzero = false;
            for &b in frac {
                match b {
                    b'0' => {}
                    b'1'..=b'9' => nonzero = true,
                    _ => return None,
                }
            }
            nonzero
        }
        _ => return None,
    };
    Some(match (neg, fraction) {
        (false, false) => Small::Int(n),
        (true, false) => Small::Int(-n),
        (false, true) => Small::Between(n),
        (true, true) => Small::Between(-n - 1),
    })
}

/// The numeric keywords of one node.
#[derive(Debug)]
pub(crate) struct NumberChecks {
    /// Every bound as `i64`, when each present one is an integer that fits.
    int: Option<IntBounds>,
    minimum: Option<Decimal>,
    maximum: Option<Decimal>,
    exclusive_minimum: Option<Decimal>,
    exclusive_maximum: Option<Decimal>,
    multiple_of: Option<Decimal>,
}

impl NumberChecks {
    /// The record of `k`'s numeric keywords; `None` when it has none.
    pub(crate) fn lower(k: &Keywords) -> Option<NumberChecks> {
        let any = k.minimum.is_some()
            || k.maximum.is_some()
            || k.exclusive_minimum.is_some()
            || k.exclusive_maximum.is_some()
            || k.multiple_of.is_some();
        any.then(|| NumberChecks {
            int: k.int_bounds,
            minimum: k.minimum.clone(),
            maximum: k.maximum.clone(),
            exclusive_minimum: k.exclusive_minimum.clone(),
            exclusive_maximum: k.exclusive_maximum.clone(),
            multiple_of: k.multiple_of.clone(),
        })
    }

    /// Checks the number written `text`, whose exact value is `num` when the node asked
    /// for it; `Err` names the first bound broken.
    #[inline]
    pub(crate) fn check(&self, text: &str, num: Option<&Decimal>) -> Result<(), &'static str> {
        if let Some(b) = &self.int {
            match small_number(text) {
                Some(Small::Int(n)) => return b.check(n),
                Some(Small::Between(floor)) => return b.check_between(floor),
                None => {}
            }
        }
        let owned;
        let n = match num {
            Some(n) => n,
            None if self.int.is_some() => {
                owned = Decimal::parse(text);
                match &owned {
                    Some(d) => d,
                    None => return Ok(()),
                }
            }
            None => return Ok(()),
        };
        if self.minimum.as_ref().is_some_and(|m| n < m) {
            return Err("minimum");
        }
        if self.maximum.as_ref().is_some_and(|m| n > m) {
            return Err("maximum");
        }
        if self.exclusive_minimum.as_ref().is_some_and(|m| n <= m) {
            return Err("exclusiveMinimum");
        }
        if self.exclusive_maximum.as_ref().is_some_and(|m| n >= m) {
            return Err("exclusiveMaximum");
        }
        if self
            .multiple_of
            .as_ref()
            .is_some_and(|m| !n.is_multiple_of(m))
        {
            return Err("multipleOf");
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{small_number, NumberChecks, Small};
    use crate::schema::decimal::Decimal;
    use crate::schema::program::NodeKind;
    use crate::Schema;

    #[test]
    fn small_numbers() {
        assert_eq!(small_number("0"), Some(Small::Int(0)));
        assert_eq!(small_number("-0"), Some(Small::Int(0)));
        assert_eq!(small_number("-0.000"), Some(Small::Int(0)));
        assert_eq!(small_number("-42"), Some(Small::Int(-42)));
        assert_eq!(small_number("7.000"), Some(Small::Int(7)));
        assert_eq!(small_number("2.5"), Some(Small::Between(2)));
        assert_eq!(small_number("-0.5"), Some(Small::Between(-1)));
        assert_eq!(small_number("-3.01"), Some(Small::Between(-4)));
        let max = 999_999_999_999_999_999;
        assert_eq!(small_number("999999999999999999"), Some(Small::Int(max)));
        let below = small_number("-999999999999999999.5");
        assert_eq!(below, Some(Small::Between(-max - 1)));
        assert_eq!(small_number("1000000000000000000"), None);
        assert_eq!(small_number("1e2"), None);
        assert_eq!(small_number("1.5E2"), None);
        assert_eq!(small_number("-"), None);
    }

    fn checks(schema: &str) -> NumberChecks {
        let s = Schema::compile(schema.as_bytes()).unwrap();
        let p = s.program();
        match &p.nodes[p.root as usize].kind {
            NodeKind::Keywords(k) => NumberChecks::lower(k).unwrap(),
            _ => panic!("{schema}"),
        }
    }

    /// The first bound broken is named, on the integer path and on the exact one alike.
    #[test]
    fn bounds_in_order() {
        let c = checks(r#"{"minimum":0,"maximum":10,"multipleOf":2}"#);
        assert_eq!(c.check("-1", None), Err("minimum"));
        assert_eq!(c.check("11", None), Err("maximum"));
        assert_eq!(c.check("3", None), Err("multipleOf"));
        assert_eq!(c.check("4", None), Ok(()));
        assert_eq!(c.check("4.5", None), Err("multipleOf"));
        assert_eq!(c.check("1e1", None), Ok(()));
        assert_eq!(c.check("1e300", None), Err("maximum"));
        let c = checks(r#"{"exclusiveMinimum":0.5,"exclusiveMaximum":1}"#);
        let d = |t: &str| Decimal::parse(t).unwrap();
        assert_eq!(c.check("0.5", Some(&d("0.5"))), Err("exclusiveMinimum"));
        assert_eq!(c.check("1", Some(&d("1"))), Err("exclusiveMaximum"));
        assert_eq!(c.check("0.75", Some(&d("0.75"))), Ok(()));
    }
}
