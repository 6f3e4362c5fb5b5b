//! Exact decimal numbers for the numeric keywords (`minimum`, `maximum`, `exclusiveMinimum`,
//! `exclusiveMaximum`, `multipleOf`, `const`, `enum`, `type: integer`).
//!
//! This module owns turning a JSON number's text into an exact value and comparing such
//! values: no binary floating point is involved anywhere, so `0.1 + 0.2`-style error cannot
//! appear, `18446744073709551616 > 18446744073709551615`, and `1e400` is neither infinite nor
//! equal to `1e401`.
//!
//! A [`Decimal`] is `sign × digits × 10^exponent` with the digits stripped of leading and
//! trailing zeros, so every value has exactly one representation: equality, hashing and
//! [`Decimal::canonical`] all follow from that (`1 == 1.0 == 10e-1`, `-0 == 0`). The
//! exponent is kept in an `i64` when it fits and in a big integer otherwise, so texts such as
//! `1e9223372036854775808` or `1e99999999999999999999999` stay exact and never overflow.
//! Every operation is panic-free and its cost depends on the number of digits, never on the
//! size of an exponent: `multipleOf` uses divisibility by powers of 2 and 5 rather than
//! scaling by `10^gap`.
// Wired in by the validator's numeric keywords; until then only the tests call this module.
#![allow(dead_code)]

use std::cmp::Ordering;
use std::fmt;

use num_bigint::{BigInt, BigUint};

/// An exact decimal value parsed from JSON number text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Decimal {
    /// `true` only for values below zero (zero is never negative).
    negative: bool,
    /// ASCII digits without leading or trailing zeros; empty for zero.
    digits: Box<[u8]>,
    /// The power of ten the digits are scaled by; 0 for zero.
    exponent: Exponent,
}

/// A power of ten: `Small` whenever the value fits an `i64`, so the form is unique.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Exponent {
    Small(i64),
    Big(BigInt),
}

impl Exponent {
    /// `value + delta`, in canonical form.
    fn offset(value: Wide, delta: i128) -> Exponent {
        match value {
            Wide::Small(v) => match v.checked_add(delta) {
                Some(sum) => match i64::try_from(sum) {
                    Ok(s) => Exponent::Small(s),
                    Err(_) => Exponent::Big(BigInt::from(sum)),
                },
                None => Exponent::from_big(BigInt::from(v) + delta),
            },
            Wide::Big(b) => Exponent::from_big(b + delta),
        }
    }

    fn from_big(b: BigInt) -> Exponent {
        match i64::try_from(&b) {
            Ok(s) => Exponent::Small(s),
            Err(_) => Exponent::Big(b),
        }
    }

    fn wide(&self) -> Wide {
        match self {
            Exponent::Small(s) => Wide::Small(i128::from(*s)),
            Exponent::Big(b) => Wide::Big(b.clone()),
        }
    }
}

/// An integer that is usually small: exponent arithmetic without allocation in the common
/// case.
#[derive(Clone, Debug)]
enum Wide {
    Small(i128),
    Big(BigInt),
}

impl Wide {
    fn add(self, delta: i128) -> Wide {
        match self {
            Wide::Small(v) => match v.checked_add(delta) {
                Some(s) => Wide::Small(s),
                None => Wide::Big(BigInt::from(v) + delta),
            },
            Wide::Big(b) => Wide::Big(b + delta),
        }
    }

    fn sub(self, other: Wide) -> Wide {
        match (self, other) {
            (Wide::Small(a), Wide::Small(b)) => match a.checked_sub(b) {
                Some(d) => Wide::Small(d),
                None => Wide::Big(BigInt::from(a) - b),
            },
            (a, b) => Wide::Big(a.into_big() - b.into_big()),
        }
    }

    fn into_big(self) -> BigInt {
        match self {
            Wide::Small(v) => BigInt::from(v),
            Wide::Big(b) => b,
        }
    }

    fn cmp(&self, other: &Wide) -> Ordering {
        match (self, other) {
            (Wide::Small(a), Wide::Small(b)) => a.cmp(b),
            (a, b) => a.clone().into_big().cmp(&b.clone().into_big()),
        }
    }

    fn is_negative(&self) -> bool {
        match self {
            Wide::Small(v) => *v < 0,
            Wide::Big(b) => b.sign() == num_bigint::Sign::Minus,
        }
    }

    /// Whether `self >= n`.
    fn at_least(&self, n: u64) -> bool {
        match self {
            Wide::Small(v) => *v >= i128::from(n),
            Wide::Big(b) => *b >= BigInt::from(n),
        }
    }
}

fn len_i128(n: usize) -> i128 {
    // usize is at most 64 bits on every supported target.
    i128::try_from(n).unwrap_or(i128::MAX)
}

impl Decimal {
    /// Parses JSON number text (RFC 8259 grammar, e.g. `-1.50e+3`); `None` for anything else,
    /// including surrounding whitespace, `+1`, `.5`, `1.`, `01`, `NaN` and `Infinity`.
    pub(crate) fn parse(json_number_text: &str) -> Option<Decimal> {
        let b = json_number_text.as_bytes();
        let mut i = 0;
        let negative = b.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while b.get(i).is_some_and(u8::is_ascii_digit) {
                    i += 1;
                }
            }
            _ => return None,
        }
        let int_digits = &b[int_start..i];
        let mut frac_digits: &[u8] = &[];
        if b.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            frac_digits = &b[start..i];
        }
        let mut exp = Wide::Small(0);
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            let exp_negative = match b.get(i) {
                Some(b'-') => {
                    i += 1;
                    true
                }
                Some(b'+') => {
                    i += 1;
                    false
                }
                _ => false,
            };
            let start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == start {
                return None;
            }
            exp = parse_exponent(&b[start..i], exp_negative);
        }
        if i != b.len() {
            return None;
        }

        // digits = int_digits ++ frac_digits, scaled by 10^(exp - frac_len).
        let mut all: Vec<u8> = Vec::with_capacity(int_digits.len() + frac_digits.len());
        all.extend_from_slice(int_digits);
        all.extend_from_slice(frac_digits);
        let leading = all.iter().take_while(|&&d| d == b'0').count();
        if leading == all.len() {
            return Some(Decimal::zero());
        }
        let trailing = all.iter().rev().take_while(|&&d| d == b'0').count();
        let digits: Box<[u8]> = all[leading..all.len() - trailing].into();
        let delta = len_i128(trailing) - len_i128(frac_digits.len());
        Some(Decimal {
            negative,
            digits,
            exponent: Exponent::offset(exp, delta),
        })
    }

    /// Zero.
    pub(crate) fn zero() -> Decimal {
        Decimal {
            negative: false,
            digits: Box::default(),
            exponent: Exponent::Small(0),
        }
    }

    /// Whether the value is zero (`0`, `-0`, `0.0e5`, …).
    pub(crate) fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Whether the value is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.negative
    }

    /// Whether the value is a whole number: `1.0` and `1e2` are, `1e-2` is not.
    pub(crate) fn is_integer(&self) -> bool {
        // Without trailing zeros in the digits, a negative exponent always leaves a fraction.
        match &self.exponent {
            Exponent::Small(e) => *e >= 0,
            Exponent::Big(e) => e.sign() != num_bigint::Sign::Minus,
        }
    }

    /// The value as `u64` if it is a whole number in range (`5.0` and `5e0` give `Some(5)`).
    pub(crate) fn to_u64(&self) -> Option<u64> {
        if self.negative || !self.is_integer() {
            return None;
        }
        if self.is_zero() {
            return Some(0);
        }
        let Exponent::Small(e) = self.exponent else {
            return None;
        };
        let zeros = usize::try_from(e).ok()?;
        if self.digits.len().checked_add(zeros)? > 20 {
            return None;
        }
        let mut v: u64 = 0;
        for &d in &self.digits {
            v = v.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        for _ in 0..zeros {
            v = v.checked_mul(10)?;
        }
        Some(v)
    }

    /// Whether `self / m` is a whole number, exactly (`19.99` is a multiple of `0.01`, `1e308`
    /// of `0.5`, `1e999999999` is not a multiple of `0.3`). Zero is a multiple of everything;
    /// nothing else is a multiple of zero. Signs are ignored.
    pub(crate) fn is_multiple_of(&self, m: &Decimal) -> bool {
        if self.is_zero() {
            return true;
        }
        if m.is_zero() {
            return false;
        }
        // self = a × 10^p, m = b × 10^q, neither a nor b divisible by 10.
        // self / m = (a / b) × 10^(p - q).
        let gap = self.exponent.wide().sub(m.exponent.wide());
        if gap.is_negative() {
            // Needs b × 10^k | a with k ≥ 1, but 10 ∤ a.
            return false;
        }
        // Needs b | a × 10^gap  ⇔  b' | 10^gap with b' = b / gcd(a, b)
        //                      ⇔  b' = 2^i × 5^j with i, j ≤ gap.
        let (twos, fives, rest_is_one) =
            if let (Some(a), Some(b)) = (small_digits(&self.digits), small_digits(&m.digits)) {
                let mut r = b / gcd_u128(a, b);
                let (mut twos, mut fives) = (0u64, 0u64);
                while r % 2 == 0 {
                    r /= 2;
                    twos += 1;
                }
                while r % 5 == 0 {
                    r /= 5;
                    fives += 1;
                }
                (twos, fives, r == 1)
            } else {
                let a = big_digits(&self.digits);
                let b = big_digits(&m.digits);
                let mut r = &b / gcd_big(a, b.clone());
                let twos = r.trailing_zeros().unwrap_or(0);
                r >>= twos;
                let five = BigUint::from(5u8);
                let mut fives = 0u64;
                while (&r % &five).bits() == 0 {
                    r /= &five;
                    fives += 1;
                }
                (twos, fives, r == BigUint::from(1u8))
            };
        rest_is_one && gap.at_least(twos.max(fives))
    }

    /// A text form that is equal for equal values and different otherwise: `0`, or the
    /// digits (no leading or trailing zeros), `e` and the exponent, with a leading `-` for
    /// negative values. `1.50e+3` gives `15e2`, `-0.0` gives `0`.
    pub(crate) fn canonical(&self) -> String {
        if self.is_zero() {
            return "0".to_owned();
        }
        let mut s = String::with_capacity(self.digits.len() + 8);
        if self.negative {
            s.push('-');
        }
        s.extend(self.digits.iter().map(|&d| char::from(d)));
        s.push('e');
        match &self.exponent {
            Exponent::Small(e) => s.push_str(&e.to_string()),
            Exponent::Big(e) => s.push_str(&e.to_string()),
        }
        s
    }

    /// The value as a person writes it: `3`, `0.01`, `-2.5`, `100`; scientific
    /// (`1.5e30`, `2e-9`) past 21 digits before the point or 6 zeros after it, as
    /// ECMAScript writes numbers.
    pub(crate) fn plain(&self) -> String {
        use std::fmt::Write as _;
        if self.is_zero() {
            return "0".to_owned();
        }
        let Exponent::Small(e) = self.exponent else {
            return self.canonical();
        };
        // The digits are ASCII.
        let digits: String = self.digits.iter().map(|&d| char::from(d)).collect();
        let n = digits.len() as i64;
        // Where the decimal point falls, counted from the first digit.
        let point = n.saturating_add(e);
        let mut s = String::with_capacity(digits.len() + 8);
        if self.negative {
            s.push('-');
        }
        if e >= 0 && point <= 21 {
            s.push_str(&digits);
            s.extend(std::iter::repeat_n('0', e as usize));
        } else if e < 0 && point > 0 {
            s.push_str(&digits[..point as usize]);
            s.push('.');
            s.push_str(&digits[point as usize..]);
        } else if e < 0 && point > -6 {
            s.push_str("0.");
            s.extend(std::iter::repeat_n('0', point.unsigned_abs() as usize));
            s.push_str(&digits);
        } else {
            s.push_str(&digits[..1]);
            if n > 1 {
                s.push('.');
                s.push_str(&digits[1..]);
            }
            let _ = write!(s, "e{}", point - 1);
        }
        s
    }

    /// The exponent of the leading digit: `123` → 2, `0.05` → -2.
    fn magnitude(&self) -> Wide {
        self.exponent.wide().add(len_i128(self.digits.len()) - 1)
    }

    fn cmp_magnitude(&self, other: &Decimal) -> Ordering {
        self.magnitude()
            .cmp(&other.magnitude())
            // Same leading position: the digit strings compare like decimal fractions.
            .then_with(|| self.digits.cmp(&other.digits))
    }
}

/// The exponent text's value, exact for any length.
fn parse_exponent(digits: &[u8], negative: bool) -> Wide {
    let digits = {
        let leading = digits.iter().take_while(|&&d| d == b'0').count();
        &digits[leading..]
    };
    if digits.len() <= 30 {
        let mut v: i128 = 0;
        for &d in digits {
            v = v * 10 + i128::from(d - b'0');
        }
        Wide::Small(if negative { -v } else { v })
    } else {
        let v = BigInt::from(big_digits(digits));
        Wide::Big(if negative { -v } else { v })
    }
}

/// Digits as `u128` when they fit (38 digits always do).
fn small_digits(digits: &[u8]) -> Option<u128> {
    if digits.len() > 38 {
        return None;
    }
    Some(
        digits
            .iter()
            .fold(0u128, |v, &d| v * 10 + u128::from(d - b'0')),
    )
}

fn big_digits(digits: &[u8]) -> BigUint {
    BigUint::parse_bytes(digits, 10).unwrap_or_default()
}

fn gcd_big(mut a: BigUint, mut b: BigUint) -> BigUint {
    while b.bits() != 0 {
        let r = &a % &b;
        a = b;
        b = r;
    }
    a
}

fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ord for Decimal {
    fn cmp(&self, other: &Decimal) -> Ordering {
        let class = |d: &Decimal| match (d.negative, d.is_zero()) {
            (true, _) => 0,
            (false, true) => 1,
            (false, false) => 2,
        };
        match class(self).cmp(&class(other)) {
            Ordering::Equal => {}
            unequal => return unequal,
        }
        match class(self) {
            0 => other.cmp_magnitude(self),
            1 => Ordering::Equal,
            _ => self.cmp_magnitude(other),
        }
    }
}

impl PartialOrd for Decimal {
    fn partial_cmp(&self, other: &Decimal) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Decimal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

#[cfg(test)]
mod tests {
    use super::Decimal;
    use proptest::prelude::*;
    use std::cmp::Ordering;
    use std::collections::hash_map::DefaultHasher;
    use std::hash::{Hash, Hasher};
    use std::time::{Duration, Instant};

    #[test]
    fn plain_forms_read_as_written() {
        for (text, plain) in [
            ("0", "0"),
            ("3", "3"),
            ("100", "100"),
            ("1e2", "100"),
            ("0.01", "0.01"),
            ("-2.50", "-2.5"),
            ("123.456", "123.456"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("1.5e30", "1.5e30"),
            ("18446744073709551615", "18446744073709551615"),
            ("1e20", "100000000000000000000"),
            ("1e21", "1e21"),
        ] {
            assert_eq!(d(text).plain(), plain, "{text}");
        }
    }

    fn d(text: &str) -> Decimal {
        Decimal::parse(text).unwrap_or_else(|| panic!("{text:?} should parse"))
    }

    fn hash(x: &Decimal) -> u64 {
        let mut h = DefaultHasher::new();
        x.hash(&mut h);
        h.finish()
    }

    #[test]
    fn grammar() {
        for ok in [
            "0",
            "-0",
            "1",
            "-1",
            "10",
            "0.5",
            "-0.5",
            "1e5",
            "1E5",
            "1e+5",
            "1e-5",
            "1.50e+3",
            "0e0",
            "0.000",
            "123456789012345678901234567890",
            "1e0000000000000000000000000001",
        ] {
            assert!(Decimal::parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "",
            "-",
            "+1",
            "01",
            "-01",
            ".5",
            "1.",
            "1.e5",
            "1e",
            "1e+",
            "e5",
            " 1",
            "1 ",
            "0x10",
            "NaN",
            "Infinity",
            "-Infinity",
            "1_000",
            "1.5.5",
            "--1",
            "1e5.5",
            "١",
        ] {
            assert!(Decimal::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn equality_is_numeric_and_hash_agrees() {
        let groups = [
            &["1", "1.0", "10e-1", "0.1e1", "1.000e0", "100e-2", "0.01E2"][..],
            &["0", "-0", "0.0", "-0.0e5", "0e-99999999999999999999999"],
            &["-1.5", "-15e-1", "-0.15E1", "-1.50"],
            &[
                "1e9223372036854775808",
                "10e9223372036854775807",
                "0.1e9223372036854775809",
            ],
            &["1e-9223372036854775809", "0.1e-9223372036854775808"],
            &[
                "1e99999999999999999999999999999999999999",
                "100e99999999999999999999999999999999999997",
            ],
        ];
        for group in groups {
            let first = d(group[0]);
            for t in group {
                let x = d(t);
                assert_eq!(x, first, "{t} == {}", group[0]);
                assert_eq!(x.cmp(&first), Ordering::Equal);
                assert_eq!(hash(&x), hash(&first), "{t}");
                assert_eq!(x.canonical(), first.canonical(), "{t}");
            }
        }
        assert_ne!(d("1"), d("-1"));
        assert_ne!(d("1e400"), d("1e401"));
        assert_ne!(
            d("1e99999999999999999999999999999999999999"),
            d("1e99999999999999999999999999999999999998")
        );
        assert_eq!(d("1.50e+3").canonical(), "15e2");
        assert_eq!(d("-0.0").canonical(), "0");
        assert_eq!(d("-0.00120").canonical(), "-12e-4");
        assert_eq!(
            d("1e9223372036854775808").canonical(),
            "1e9223372036854775808"
        );
        assert_eq!(d("1.5").to_string(), "15e-1");
    }

    #[test]
    fn ordering() {
        let sorted = [
            "-1e99999999999999999999999999999999999999",
            "-1e9223372036854775808",
            "-18446744073709551616",
            "-18446744073709551615",
            "-1.5",
            "-1",
            "-0.999999999999999999999999999999",
            "-1e-400",
            "0",
            "1e-99999999999999999999999999999999999999",
            "1e-400",
            "0.1",
            "0.10000000000000000000000000001",
            "0.2",
            "0.30000000000000000000000000000000001",
            "1",
            "1.0000000000000000000000000000000000000000000000001",
            "18446744073709551615",
            "18446744073709551616",
            "9.727837981879871e+26",
            "972783798187987123879878123.188781371",
            "1e308",
            "1e309",
            "1e9223372036854775807",
            "1e9223372036854775808",
            "1e99999999999999999999999999999999999999",
        ];
        for (i, a) in sorted.iter().enumerate() {
            for (j, b) in sorted.iter().enumerate() {
                assert_eq!(d(a).cmp(&d(b)), i.cmp(&j), "{a} vs {b}");
            }
        }
        assert!(d("18446744073709551616") > d("18446744073709551615"));
    }

    #[test]
    fn integers() {
        for t in [
            "0",
            "-0",
            "1",
            "1.0",
            "1e2",
            "1.5e1",
            "-1e400",
            "1e9223372036854775808",
            "123.000",
        ] {
            assert!(d(t).is_integer(), "{t}");
        }
        for t in [
            "0.5",
            "1e-2",
            "1.05e1",
            "1e-9223372036854775809",
            "12345678901234567890.1",
        ] {
            assert!(!d(t).is_integer(), "{t}");
        }
        assert_eq!(d("5.0").to_u64(), Some(5));
        assert_eq!(d("18446744073709551615").to_u64(), Some(u64::MAX));
        assert_eq!(d("1.8446744073709551615e19").to_u64(), Some(u64::MAX));
        assert_eq!(d("18446744073709551616").to_u64(), None);
        assert_eq!(d("-1").to_u64(), None);
        assert_eq!(d("0.5").to_u64(), None);
        assert_eq!(d("-0").to_u64(), Some(0));
        assert_eq!(d("1e9223372036854775808").to_u64(), None);
    }

    #[test]
    fn multiples() {
        let yes = [
            ("19.99", "0.01"),
            ("1e308", "0.5"),
            ("0.3", "0.1"),
            ("4.5", "1.5"),
            ("-4.5", "1.5"),
            ("0.0075", "0.0001"),
            ("10", "2"),
            ("0", "0.123"),
            ("1e999999999", "2"),
            ("1e999999999", "0.5e-10"),
            ("1e99999999999999999999999999999999999999", "0.25"),
            ("123456789012345678901234567890123456789012345678900", "3"),
            ("1e9223372036854775807", "1e-9223372036854775808"),
        ];
        let no = [
            ("35", "1.5"),
            ("0.00751", "0.0001"),
            ("7", "2"),
            ("1e308", "0.123456789"),
            ("1e999999999", "0.3"),
            ("0.1", "0.3"),
            ("1e-5", "1e-4"),
            ("1e99999999999999999999999999999999999999", "3"),
            ("123456789012345678901234567890123456789012345678901", "3"),
            ("1", "0"),
            ("1e-9223372036854775808", "1e9223372036854775807"),
        ];
        let start = Instant::now();
        for (a, m) in yes {
            assert!(d(a).is_multiple_of(&d(m)), "{a} multipleOf {m}");
        }
        for (a, m) in no {
            assert!(!d(a).is_multiple_of(&d(m)), "{a} not multipleOf {m}");
        }
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn big_digit_strings_take_the_bigint_path() {
        use num_bigint::BigUint;
        let two200 = BigUint::from(2u8).pow(200).to_string();
        let five200 = BigUint::from(5u8).pow(200).to_string();
        assert!(two200.len() > 38 && five200.len() > 38);
        // 10^200 = 2^200 × 5^200.
        assert!(d("1e200").is_multiple_of(&d(&two200)));
        assert!(d("1e200").is_multiple_of(&d(&five200)));
        assert!(!d("1e199").is_multiple_of(&d(&two200)));
        assert!(!d("1e199").is_multiple_of(&d(&five200)));
        // 2^200 × 10^-200 = 1 / 5^200: every integer is a multiple of it, it is not of 1.
        let inv = format!("{two200}e-200");
        assert!(d("1").is_multiple_of(&d(&inv)));
        assert!(d("3").is_multiple_of(&d(&inv)));
        assert!(!d(&inv).is_multiple_of(&d("1")));
        assert!(d(&inv).is_multiple_of(&d(&inv)));
        let three = format!("{}", BigUint::from(3u8).pow(100));
        assert!(!d("1e500").is_multiple_of(&d(&three)));
        assert!(d(&format!("{three}e7")).is_multiple_of(&d(&three)));
    }

    /// `x multipleOf m` by brute force: both scaled to integers with `BigUint`.
    fn brute_multiple(a: &str, ea: u32, b: &str, eb: u32) -> bool {
        use num_bigint::BigUint;
        // a × 10^-ea and b × 10^-eb.
        let s = ea.max(eb);
        let ai = BigUint::parse_bytes(a.as_bytes(), 10).unwrap_or_default()
            * BigUint::from(10u8).pow(s - ea);
        let bi = BigUint::parse_bytes(b.as_bytes(), 10).unwrap_or_default()
            * BigUint::from(10u8).pow(s - eb);
        if bi.bits() == 0 {
            return ai.bits() == 0;
        }
        (ai % bi).bits() == 0
    }

    #[test]
    fn absurd_exponents_do_not_panic() {
        for t in [
            "1e9223372036854775807",
            "1e9223372036854775808",
            "-1e-9223372036854775808",
            "1e-9223372036854775809",
            "1e18446744073709551616",
            "1e340282366920938463463374607431768211456",
            "1e-340282366920938463463374607431768211457",
        ] {
            let x = d(t);
            let y = d("1e-1");
            let _ = (
                x.cmp(&y),
                x.is_integer(),
                x.is_multiple_of(&y),
                y.is_multiple_of(&x),
            );
            let _ = (x.canonical(), x.to_u64(), x == y);
        }
        let long_exp = format!("1e{}", "9".repeat(5000));
        let x = d(&long_exp);
        assert!(x > d("1e9223372036854775807"));
        assert!(x.is_multiple_of(&d("0.5")));
        assert!(!x.is_multiple_of(&d("0.3")));
    }

    fn as_text(x: i128, scale: u8, style: u8) -> String {
        // x × 10^-scale written several equivalent ways.
        match style % 3 {
            0 => format!("{x}e-{scale}"),
            1 => {
                let neg = x < 0;
                let digits = x.unsigned_abs().to_string();
                let scale = usize::from(scale);
                let padded = format!("{digits:0>width$}", width = scale + 1);
                let (int, frac) = padded.split_at(padded.len() - scale);
                let sign = if neg { "-" } else { "" };
                if frac.is_empty() {
                    format!("{sign}{int}")
                } else {
                    format!("{sign}{int}.{frac}")
                }
            }
            // Trailing zeros moved into the exponent; zero has one digit (`0000` is no number).
            _ if x == 0 => format!("0E-{}", u32::from(scale) + 3),
            _ => format!("{x}000E-{}", u32::from(scale) + 3),
        }
    }

    proptest! {
        #[test]
        fn integers_agree_with_i128(a in any::<i64>(), b in any::<i64>(), sa in 0u8..3, sb in 0u8..3) {
            let (a, b) = (i128::from(a), i128::from(b));
            let x = d(&as_text(a, 0, sa));
            let y = d(&as_text(b, 0, sb));
            prop_assert_eq!(x.cmp(&y), a.cmp(&b));
            prop_assert_eq!(x == y, a == b);
            prop_assert!(x.is_integer());
            prop_assert_eq!(x.is_multiple_of(&y), if b == 0 { a == 0 } else { a % b == 0 });
            prop_assert_eq!(x.to_u64(), u64::try_from(a).ok());
        }

        #[test]
        fn small_multiples_agree_with_i128(a in -100_000i128..100_000, b in 1i128..1000, sa in 0u8..6, sb in 0u8..6, style in 0u8..3) {
            let x = d(&as_text(a, sa, style));
            let y = d(&as_text(b, sb, style + 1));
            // Scale both to 10^-6: a × 10^(6-sa), b × 10^(6-sb).
            let ai = a * 10i128.pow(u32::from(6 - sa));
            let bi = b * 10i128.pow(u32::from(6 - sb));
            prop_assert_eq!(x.is_multiple_of(&y), ai % bi == 0);
            prop_assert_eq!(x.cmp(&y), ai.cmp(&bi));
            prop_assert_eq!(x.is_integer(), ai % 1_000_000 == 0);
        }

        #[test]
        fn scaled_values_compare_like_i128(a in any::<i64>(), b in any::<i64>(), sa in 0u8..30, sb in 0u8..30) {
            let x = d(&as_text(i128::from(a), sa, 0));
            let y = d(&as_text(i128::from(b), sb, 1));
            // Compare a × 10^-sa with b × 10^-sb exactly via a common scale (fits i128? use checked).
            let s = sa.max(sb);
            let ai = i128::from(a).checked_mul(10i128.pow(u32::from(s - sa)));
            let bi = i128::from(b).checked_mul(10i128.pow(u32::from(s - sb)));
            if let (Some(ai), Some(bi)) = (ai, bi) {
                prop_assert_eq!(x.cmp(&y), ai.cmp(&bi));
                prop_assert_eq!(x == y, ai == bi);
                prop_assert_eq!(hash(&x) == hash(&y), ai == bi);
            }
        }

        #[test]
        fn floats_order_like_f64(a in any::<f64>(), b in any::<f64>()) {
            prop_assume!(a.is_finite() && b.is_finite());
            // Shortest round-trip texts lie in disjoint rounding intervals: same order as f64.
            let x = d(&format!("{a:e}"));
            let y = d(&format!("{b:e}"));
            prop_assert_eq!(Some(x.cmp(&y)), a.partial_cmp(&b));
            prop_assert_eq!(x.is_integer(), a.fract() == 0.0);
            // Plain notation too.
            prop_assert_eq!(d(&format!("{a}")), x);
        }

        #[test]
        fn exact_float_multiples(a in -1_000_000i64..1_000_000, k in 0i32..8, b in 1i64..64) {
            // a / 2^k and b / 2^k are exact in f64 and in decimal.
            let scale = f64::from(2u32.pow(k.unsigned_abs()));
            #[allow(clippy::cast_precision_loss)]
            let (fa, fb) = (a as f64 / scale, b as f64 / scale);
            let x = d(&format!("{fa}"));
            let y = d(&format!("{fb}"));
            prop_assert_eq!(x.is_multiple_of(&y), a % b == 0);
            prop_assert_eq!(Some(x.cmp(&y)), fa.partial_cmp(&fb));
        }

        #[test]
        fn big_multiples_agree_with_brute_force(
            a in "[1-9][0-9]{0,60}", ea in 0u32..40, b in "[1-9][0-9]{0,45}", eb in 0u32..40,
            k in 0u32..4,
        ) {
            // Make a multiple of b sometimes: a = b × 2^k × 5^(3-k) and compare.
            let x = d(&format!("{a}e-{ea}"));
            let y = d(&format!("{b}e-{eb}"));
            prop_assert_eq!(x.is_multiple_of(&y), brute_multiple(&a, ea, &b, eb));
            let scaled = num_bigint::BigUint::parse_bytes(b.as_bytes(), 10).unwrap_or_default()
                * num_bigint::BigUint::from(2u8).pow(k)
                * num_bigint::BigUint::from(5u8).pow(3 - k)
                * num_bigint::BigUint::parse_bytes(a.as_bytes(), 10).unwrap_or_default();
            let scaled = scaled.to_string();
            let z = d(&format!("{scaled}e-{ea}"));
            prop_assert_eq!(z.is_multiple_of(&y), brute_multiple(&scaled, ea, &b, eb));
        }

        #[test]
        fn parse_never_panics(s in "[-+0-9.eE]{0,40}") {
            if let Some(x) = Decimal::parse(&s) {
                let one = d("1");
                let _ = (x.cmp(&one), x.is_integer(), x.is_multiple_of(&one), one.is_multiple_of(&x), x.canonical());
                prop_assert_eq!(d(&s), x);
            }
        }
    }

    // --- JSON-Schema-Test-Suite (numbers only), read with this crate's own value type so that
    // number texts stay exact.

    use crate::json::Value as J;

    fn parse_json(bytes: &[u8]) -> J {
        J::parse(bytes, crate::Limits::new()).expect("suite file is valid JSON")
    }

    /// Just enough of JSON Schema for the numeric suites; anything else fails the test.
    fn valid(schema: &J, instance: &J) -> bool {
        let J::Object(keywords) = schema else {
            panic!("schema must be an object")
        };
        let num = match instance {
            J::Number(t) => Some(d(t)),
            _ => None,
        };
        keywords.iter().all(|(k, v)| {
            let limit = || match v {
                J::Number(t) => d(t),
                other => panic!("{k} must be a number, not {other:?}"),
            };
            match k.as_str() {
                "$schema" => true,
                "type" => match v {
                    J::String(t) if t == "integer" => num.as_ref().is_some_and(Decimal::is_integer),
                    J::String(t) if t == "number" => num.is_some(),
                    J::String(t) if t == "string" => matches!(instance, J::String(_)),
                    other => panic!("type {other:?}"),
                },
                "minimum" => num.as_ref().is_none_or(|n| *n >= limit()),
                "maximum" => num.as_ref().is_none_or(|n| *n <= limit()),
                "exclusiveMinimum" => num.as_ref().is_none_or(|n| *n > limit()),
                "exclusiveMaximum" => num.as_ref().is_none_or(|n| *n < limit()),
                "multipleOf" => num.as_ref().is_none_or(|n| n.is_multiple_of(&limit())),
                other => panic!("keyword {other} not supported by this test"),
            }
        })
    }

    /// Known disagreements with the suite: (file, group, test, why). None so far.
    const EXPECTED_FAILURES: &[(&str, &str, &str, &str)] = &[];

    #[test]
    fn json_schema_test_suite() {
        let mut failures = Vec::new();
        let mut ran = 0;
        for file in [
            "multipleOf.json",
            "minimum.json",
            "maximum.json",
            "exclusiveMinimum.json",
            "exclusiveMaximum.json",
            "optional/bignum.json",
            "optional/float-overflow.json",
        ] {
            let bytes = crate::schema::suite::read(file);
            let J::Array(groups) = parse_json(&bytes) else {
                panic!("{file}: not an array")
            };
            for group in &groups {
                let gd = match group.get("description") {
                    Some(J::String(s)) => s.as_str(),
                    _ => "",
                };
                let schema = group.get("schema").expect("schema");
                let Some(J::Array(tests)) = group.get("tests") else {
                    panic!("tests")
                };
                for test in tests {
                    let td = match test.get("description") {
                        Some(J::String(s)) => s.as_str(),
                        _ => "",
                    };
                    let Some(J::Bool(expected)) = test.get("valid") else {
                        panic!("valid")
                    };
                    let got = valid(schema, test.get("data").expect("data"));
                    ran += 1;
                    let known = EXPECTED_FAILURES
                        .iter()
                        .any(|&(f, g, t, _)| f == file && g == gd && t == td);
                    if (got != *expected) != known {
                        failures.push(format!(
                            "{file}: {gd} / {td}: expected {expected}, got {got}"
                        ));
                    }
                }
            }
        }
        crate::schema::suite::finish("decimal", ran, &failures);
    }
}
