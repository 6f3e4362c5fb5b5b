//! Numeric bounds: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf` — their compile step (draft-04's boolean exclusive bounds folded into the
//! numeric ones), their record ([`Numbers`]), the one check both validator tiers run, and
//! what a failure expected.
//!
//! Integer bounds that fit `i64` are checked with integer arithmetic on numbers whose text is
//! short ([`small_number`]), everything else with exact decimals. The checks run in one
//! fixed order, so the first bound broken is the keyword named.

use super::Keyword;
use crate::json::Value;
use crate::schema::decimal::Decimal;
use crate::schema::Draft;

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

/// The value of an integral decimal that fits `i64`.
fn decimal_to_i64(d: &Decimal) -> Option<i64> {
    if !d.is_integer() {
        return None;
    }
    // Canonical integers are `digits e exponent` with a non-negative exponent.
    let c = d.canonical();
    let (mantissa, exp) = c.split_once('e').unwrap_or((&c, "0"));
    let exp: u32 = exp.parse().ok()?;
    let m: i64 = mantissa.parse().ok()?;
    m.checked_mul(10i64.checked_pow(exp)?)
}

/// Integer forms of `minimum`, `maximum`, `exclusive*` and `multipleOf`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IntBounds {
    minimum: Option<i64>,
    maximum: Option<i64>,
    exclusive_minimum: Option<i64>,
    exclusive_maximum: Option<i64>,
    multiple_of: Option<i64>,
}

impl IntBounds {
    /// Checks an integer instance; `Err(keyword)` names the bound it breaks.
    #[inline]
    fn check(&self, n: i64) -> Result<(), &'static str> {
        if self.minimum.is_some_and(|m| n < m) {
            return Err(Keyword::Minimum.name());
        }
        if self.maximum.is_some_and(|m| n > m) {
            return Err(Keyword::Maximum.name());
        }
        if self.exclusive_minimum.is_some_and(|m| n <= m) {
            return Err(Keyword::ExclusiveMinimum.name());
        }
        if self.exclusive_maximum.is_some_and(|m| n >= m) {
            return Err(Keyword::ExclusiveMaximum.name());
        }
        if self.multiple_of.is_some_and(|m| n % m != 0) {
            return Err(Keyword::MultipleOf.name());
        }
        Ok(())
    }

    /// Checks a number known to lie strictly between `floor` and `floor + 1`: the same
    /// verdict, and the same first keyword, as exact comparison. Against an integer bound
    /// `m`, such a value is below `m` exactly when `floor < m` and above it exactly when
    /// `floor >= m`; it is never equal to `m`, nor a multiple of an integer.
    #[inline]
    fn check_between(&self, floor: i64) -> Result<(), &'static str> {
        if self.minimum.is_some_and(|m| floor < m) {
            return Err(Keyword::Minimum.name());
        }
        if self.maximum.is_some_and(|m| floor >= m) {
            return Err(Keyword::Maximum.name());
        }
        if self.exclusive_minimum.is_some_and(|m| floor < m) {
            return Err(Keyword::ExclusiveMinimum.name());
        }
        if self.exclusive_maximum.is_some_and(|m| floor >= m) {
            return Err(Keyword::ExclusiveMaximum.name());
        }
        if self.multiple_of.is_some() {
            return Err(Keyword::MultipleOf.name());
        }
        Ok(())
    }
}

/// What a violation of `k` means, in a few words; `None` for a keyword of another group.
pub(crate) fn summary(k: Keyword) -> Option<&'static str> {
    match k {
        Keyword::Minimum
        | Keyword::Maximum
        | Keyword::ExclusiveMinimum
        | Keyword::ExclusiveMaximum => Some("number is out of range"),
        Keyword::MultipleOf => Some("number is not a multiple of the required value"),
        _ => None,
    }
}

/// The numeric keywords of one node.
#[derive(Clone, Debug)]
pub(crate) struct Numbers {
    /// Every bound as `i64`, when each present one is an integer that fits.
    int: Option<IntBounds>,
    minimum: Option<Decimal>,
    maximum: Option<Decimal>,
    exclusive_minimum: Option<Decimal>,
    exclusive_maximum: Option<Decimal>,
    multiple_of: Option<Decimal>,
}

impl Numbers {
    /// The numeric keywords of the schema object `v` written in `draft`; `None` when it has
    /// none. `err` makes the error for a message.
    pub(crate) fn compile<E>(
        v: &Value,
        draft: Draft,
        err: impl Fn(String) -> E,
    ) -> Result<Option<Box<Numbers>>, E> {
        let number = |k: Keyword| match v.get(k.name()) {
            None => Ok(None),
            Some(Value::Number(t)) => Ok(Decimal::parse(t)),
            Some(_) => Err(err(format!("'{}' must be a number", k.name()))),
        };
        let multiple_of = number(Keyword::MultipleOf)?;
        if multiple_of.as_ref().is_some_and(|m| m <= &Decimal::zero()) {
            return Err(err("'multipleOf' must be greater than 0".into()));
        }
        let mut minimum = number(Keyword::Minimum)?;
        let mut maximum = number(Keyword::Maximum)?;
        let (exclusive_minimum, exclusive_maximum);
        if draft == Draft::Draft4 {
            // Draft-04 wrote exclusive bounds as booleans beside minimum/maximum.
            let flag = |k: Keyword| match v.get(k.name()) {
                None | Some(Value::Bool(false)) => Ok(false),
                Some(Value::Bool(true)) => Ok(true),
                Some(_) => Err(err(format!("'{}' must be a boolean in draft-04", k.name()))),
            };
            exclusive_minimum = if flag(Keyword::ExclusiveMinimum)? {
                minimum.take()
            } else {
                None
            };
            exclusive_maximum = if flag(Keyword::ExclusiveMaximum)? {
                maximum.take()
            } else {
                None
            };
        } else {
            exclusive_minimum = number(Keyword::ExclusiveMinimum)?;
            exclusive_maximum = number(Keyword::ExclusiveMaximum)?;
        }
        let mut n = Numbers {
            int: None,
            minimum,
            maximum,
            exclusive_minimum,
            exclusive_maximum,
            multiple_of,
        };
        if n.minimum.is_none()
            && n.maximum.is_none()
            && n.exclusive_minimum.is_none()
            && n.exclusive_maximum.is_none()
            && n.multiple_of.is_none()
        {
            return Ok(None);
        }
        let as_int = |d: &Option<Decimal>| -> Option<Option<i64>> {
            match d {
                None => Some(None),
                Some(d) => decimal_to_i64(d).map(Some),
            }
        };
        n.int = (|| {
            Some(IntBounds {
                minimum: as_int(&n.minimum)?,
                maximum: as_int(&n.maximum)?,
                exclusive_minimum: as_int(&n.exclusive_minimum)?,
                exclusive_maximum: as_int(&n.exclusive_maximum)?,
                multiple_of: as_int(&n.multiple_of)?,
            })
        })();
        Ok(Some(Box::new(n)))
    }

    /// Whether a number must be parsed exactly before the check (some bound does not fit
    /// `i64` or is not an integer).
    pub(crate) fn needs_decimal(&self) -> bool {
        self.int.is_none()
    }

    /// Checks the number written `text`, whose exact value is `num` when the node asked
    /// for it; `Err` names the first bound broken.
    #[inline(always)]
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
            return Err(Keyword::Minimum.name());
        }
        if self.maximum.as_ref().is_some_and(|m| n > m) {
            return Err(Keyword::Maximum.name());
        }
        if self.exclusive_minimum.as_ref().is_some_and(|m| n <= m) {
            return Err(Keyword::ExclusiveMinimum.name());
        }
        if self.exclusive_maximum.as_ref().is_some_and(|m| n >= m) {
            return Err(Keyword::ExclusiveMaximum.name());
        }
        if self
            .multiple_of
            .as_ref()
            .is_some_and(|m| !n.is_multiple_of(m))
        {
            return Err(Keyword::MultipleOf.name());
        }
        Ok(())
    }

    /// What a failure of `keyword` expected (`expected at most 10`), for the messages a
    /// person reads; `None` for a keyword of another group.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        let (what, bound) = match keyword {
            Keyword::Minimum => ("at least", &self.minimum),
            Keyword::Maximum => ("at most", &self.maximum),
            Keyword::ExclusiveMinimum => ("greater than", &self.exclusive_minimum),
            Keyword::ExclusiveMaximum => ("less than", &self.exclusive_maximum),
            Keyword::MultipleOf => ("a multiple of", &self.multiple_of),
            _ => return None,
        };
        Some(match bound {
            Some(d) => format!("expected {what} {}", d.plain()),
            None => String::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{small_number, Numbers, Small};
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

    fn checks(schema: &str) -> Numbers {
        let s = Schema::compile(schema.as_bytes()).unwrap();
        let p = s.program();
        match &p.nodes[p.root as usize].kind {
            NodeKind::Keywords(k) => (**k.numbers.as_ref().unwrap()).clone(),
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
