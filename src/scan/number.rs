//! Numbers: the RFC 8259 number grammar as a resumable state machine, and the [`Number`]
//! event payload with checked conversions.
//!
//! The scanner never converts a number on the hot path; it hands over the exact text, so
//! later layers can compare arbitrarily large or precise values exactly.

use std::fmt;

use crate::error::Syntax;

/// The exact text of a JSON number, as it appeared in the input.
///
/// # Example
/// ```
/// use jsongate::{Number, NumberErrorKind};
/// let n = Number::parse("18446744073709551616").unwrap();
/// assert_eq!(n.as_u64().map_err(|e| e.kind()), Err(NumberErrorKind::OutOfRange));
/// assert_eq!(Number::parse("-42").unwrap().as_i64(), Ok(-42));
/// assert_eq!(Number::parse("1.5").unwrap().as_i64().map_err(|e| e.kind()), Err(NumberErrorKind::NotAnInteger));
/// assert!(Number::parse("01").is_none());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Number<'a>(pub(super) &'a str);

/// Why a [`Number`] could not be converted. One byte wide, `Copy`: the conversions are on
/// the hot path and their error carries nothing but its kind.
///
/// # Example
/// ```
/// use jsongate::{Number, NumberErrorKind};
/// let n = Number::parse("3.25").unwrap();
/// assert_eq!(n.as_u64().unwrap_err().kind(), NumberErrorKind::NotAnInteger);
/// assert_eq!(n.as_u64().unwrap_err().to_string(), "number is not an integer");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NumberError {
    kind: NumberErrorKind,
}

/// What kind of conversion failure a [`NumberError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NumberErrorKind {
    /// The text has a fraction or exponent (`1.0`, `1e2`); integer accessors are textual.
    NotAnInteger,
    /// The value does not fit the requested type (or is infinite as `f64`).
    OutOfRange,
}

impl NumberError {
    const NOT_AN_INTEGER: NumberError = NumberError {
        kind: NumberErrorKind::NotAnInteger,
    };
    const OUT_OF_RANGE: NumberError = NumberError {
        kind: NumberErrorKind::OutOfRange,
    };

    /// What kind of failure this is.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Number, NumberErrorKind};
    /// assert_eq!(Number::parse("-1").unwrap().as_u64().unwrap_err().kind(), NumberErrorKind::OutOfRange);
    /// ```
    pub fn kind(&self) -> NumberErrorKind {
        self.kind
    }
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            NumberErrorKind::NotAnInteger => "number is not an integer",
            NumberErrorKind::OutOfRange => "number out of range",
        })
    }
}

impl std::error::Error for NumberError {}

impl<'a> Number<'a> {
    /// Checks `text` against the JSON number grammar; `None` if it is not a JSON number.
    ///
    /// # Example
    /// ```
    /// use jsongate::Number;
    /// assert_eq!(Number::parse("-0.5e+3").map(|n| n.as_str()), Some("-0.5e+3"));
    /// assert!(Number::parse("+1").is_none());
    /// assert!(Number::parse(".5").is_none());
    /// assert!(Number::parse("1.").is_none());
    /// ```
    pub fn parse(text: &'a str) -> Option<Self> {
        let mut st = NumState::Start;
        for &b in text.as_bytes() {
            match st.step(b) {
                Step::Next(n) => st = n,
                Step::End | Step::Error(_) => return None,
            }
        }
        st.is_terminal().then_some(Number(text))
    }

    /// A number whose text the scanner has already accepted (its `Event::Number`'s text),
    /// without checking the grammar again (for the typed results' tape).
    #[cfg(feature = "serde")]
    pub(crate) const fn scanned(text: &'a str) -> Self {
        Number(text)
    }

    /// The number's text, exactly as in the input.
    ///
    /// # Example
    /// ```
    /// use jsongate::Number;
    /// // The text is kept exactly: no rounding, no normalisation.
    /// let n = Number::parse("1.000000000000000000001").unwrap();
    /// assert_eq!(n.as_str(), "1.000000000000000000001");
    /// ```
    pub fn as_str(&self) -> &'a str {
        self.0
    }

    /// Whether the text has neither a fraction nor an exponent.
    ///
    /// # Example
    /// ```
    /// use jsongate::Number;
    /// assert!(Number::parse("-12").unwrap().is_integer());
    /// // Textual: `1.0` and `1e2` have integer values but are not integer literals.
    /// assert!(!Number::parse("1.0").unwrap().is_integer());
    /// assert!(!Number::parse("1e2").unwrap().is_integer());
    /// ```
    pub fn is_integer(&self) -> bool {
        !self.0.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'))
    }

    /// The value as `i64`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Number, NumberErrorKind};
    /// assert_eq!(Number::parse("-9223372036854775808").unwrap().as_i64(), Ok(i64::MIN));
    /// let over = Number::parse("9223372036854775808").unwrap();
    /// assert_eq!(over.as_i64().map_err(|e| e.kind()), Err(NumberErrorKind::OutOfRange));
    /// ```
    pub fn as_i64(&self) -> Result<i64, NumberError> {
        if !self.is_integer() {
            return Err(NumberError::NOT_AN_INTEGER);
        }
        self.as_str().parse().map_err(|_| NumberError::OUT_OF_RANGE)
    }

    /// The value as `u64` (negative values are out of range; `-0` is 0).
    ///
    /// # Example
    /// ```
    /// use jsongate::{Number, NumberErrorKind};
    /// assert_eq!(Number::parse("18446744073709551615").unwrap().as_u64(), Ok(u64::MAX));
    /// assert_eq!(Number::parse("-0").unwrap().as_u64(), Ok(0));
    /// assert_eq!(Number::parse("-1").unwrap().as_u64().map_err(|e| e.kind()), Err(NumberErrorKind::OutOfRange));
    /// ```
    pub fn as_u64(&self) -> Result<u64, NumberError> {
        if !self.is_integer() {
            return Err(NumberError::NOT_AN_INTEGER);
        }
        if self.0 == "-0" {
            return Ok(0);
        }
        self.as_str().parse().map_err(|_| NumberError::OUT_OF_RANGE)
    }

    /// The nearest `f64`; `OutOfRange` when the magnitude overflows to infinity.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Number, NumberErrorKind};
    /// assert_eq!(Number::parse("2.5e-1").unwrap().as_f64(), Ok(0.25));
    /// assert_eq!(Number::parse("1e400").unwrap().as_f64().map_err(|e| e.kind()), Err(NumberErrorKind::OutOfRange));
    /// ```
    pub fn as_f64(&self) -> Result<f64, NumberError> {
        match self.as_str().parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(NumberError::OUT_OF_RANGE),
        }
    }
}

impl fmt::Debug for Number<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Number({})", self.as_str())
    }
}

impl fmt::Display for Number<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where the number grammar stands after the bytes seen so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NumState {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

/// Result of feeding one byte to the number grammar.
pub(crate) enum Step {
    /// The byte belongs to the number.
    Next(NumState),
    /// The byte does not belong to the number, which is complete before it.
    End,
    /// The byte makes the number invalid.
    Error(Syntax),
}

impl NumState {
    /// Whether the text so far is a complete number.
    #[inline]
    pub(crate) fn is_terminal(self) -> bool {
        matches!(
            self,
            NumState::Zero | NumState::Int | NumState::Frac | NumState::ExpDigits
        )
    }

    #[inline]
    pub(crate) fn step(self, b: u8) -> Step {
        use NumState::{Dot, Exp, ExpDigits, ExpSign, Frac, Int, Minus, Start, Zero};
        let digit = b.is_ascii_digit();
        let next = match self {
            Start if b == b'-' => Minus,
            Start | Minus if b == b'0' => Zero,
            Start | Minus if digit => Int,
            Start | Minus => return Step::Error(Syntax::InvalidNumber),
            Zero if digit => return Step::Error(Syntax::LeadingZero),
            Int if digit => Int,
            Zero | Int if b == b'.' => Dot,
            Dot if digit => Frac,
            Dot => return Step::Error(Syntax::InvalidNumber),
            Frac if digit => Frac,
            Zero | Int | Frac if b == b'e' || b == b'E' => Exp,
            Exp if b == b'+' || b == b'-' => ExpSign,
            Exp | ExpSign if digit => ExpDigits,
            Exp | ExpSign => return Step::Error(Syntax::InvalidNumber),
            ExpDigits if digit => ExpDigits,
            Zero | Int | Frac | ExpDigits => {
                // A letter or dot right after a number can never be valid JSON; report it as
                // part of the number rather than as a stray byte after it.
                if b.is_ascii_alphabetic() || b == b'.' || b == b'+' || b == b'-' {
                    return Step::Error(Syntax::InvalidNumber);
                }
                return Step::End;
            }
        };
        Step::Next(next)
    }
}

impl super::Scanner {
    /// Scans the number starting at `buf[i]` byte by byte: the numbers [`whole_number`] left
    /// to the grammar (split by the chunk, too long, or malformed, reported at their byte).
    /// Returns the index after it and `Some(flow)` once it was delivered, or `None` (with the
    /// grammar state) when the chunk ended inside it; its text so far is then in the scratch
    /// buffer.
    #[inline]
    pub(super) fn number_start<S: super::Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        i: usize,
        sink: &mut S,
    ) -> Result<(usize, Option<super::Flow>, NumState), crate::Error> {
        let base = self.offset;
        let limit = self.limits.number_bytes;
        let len = buf.len();
        let wend = if limit < (len - i) as u64 {
            i + limit as usize + 1
        } else {
            len
        };
        let mut st = NumState::Start;
        let mut j = i;
        while j < wend {
            match st.step(buf[j]) {
                Step::Next(n) => {
                    st = n;
                    j += 1;
                }
                Step::End => {
                    let flow = sink.event_at(
                        super::Event::Number(Number(super::simd::ascii_str(&buf[i..j]))),
                        self.pos(base + i as u64),
                    );
                    return Ok((j, Some(flow), st));
                }
                Step::Error(s) => {
                    return Err(self.error(crate::ErrorKind::Syntax(s), base + j as u64, None));
                }
            }
        }
        if (j - i) as u64 > limit {
            let kind = crate::ErrorKind::NumberTooLong { limit };
            return Err(self.error(kind, base + i as u64 + limit, None));
        }
        self.scratch.clear();
        for &b in &buf[i..j] {
            self.scratch.push_ascii(b);
        }
        self.token_start = base + i as u64;
        Ok((j, None, st))
    }

    /// Continues a number split across chunks, from `buf[j]`.
    pub(super) fn number_continue<S: super::Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        mut j: usize,
        base: u64,
        mut st: NumState,
        sink: &mut S,
    ) -> Result<(usize, Option<super::Flow>, NumState), crate::Error> {
        let limit = self.limits.number_bytes;
        while let Some(&b) = buf.get(j) {
            match st.step(b) {
                Step::Next(n) => {
                    if self.scratch.len() as u64 >= limit {
                        let kind = crate::ErrorKind::NumberTooLong { limit };
                        return Err(self.error(kind, base + j as u64, None));
                    }
                    self.scratch.push_ascii(b);
                    st = n;
                    j += 1;
                }
                Step::End => return Ok((j, Some(self.emit_scratch_number(sink)), st)),
                Step::Error(s) => {
                    return Err(self.error(crate::ErrorKind::Syntax(s), base + j as u64, None));
                }
            }
        }
        Ok((j, None, st))
    }

    /// Delivers the complete number held in the scratch buffer.
    pub(super) fn emit_scratch_number<S: super::Sink + ?Sized>(
        &mut self,
        sink: &mut S,
    ) -> super::Flow {
        let at = self.pos(self.token_start);
        sink.event_at(super::Event::Number(Number(self.scratch.as_str())), at)
    }
}

/// Index of the first byte at or after `j` that is not an ASCII digit (or `buf.len()`).
#[inline]
fn digits(buf: &[u8], mut j: usize) -> usize {
    // Eight bytes at a time: a byte is a digit iff neither `b - 0x30` borrows nor `b + 0x46`
    // reaches 0x80. Carries only travel towards later bytes, so the lowest flagged byte is
    // exactly the first non-digit.
    while let Some(w) = buf.get(j..j + 8) {
        let x = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let flags = (x.wrapping_sub(0x3030_3030_3030_3030) | x.wrapping_add(0x4646_4646_4646_4646))
            & 0x8080_8080_8080_8080;
        if flags != 0 {
            return j + (flags.trailing_zeros() / 8) as usize;
        }
        j += 8;
    }
    while j < buf.len() && buf[j].is_ascii_digit() {
        j += 1;
    }
    j
}

/// The end of the well-formed number starting at `buf[i]` when it lies whole in `buf`, is
/// followed there by a byte that cannot continue it, and is within `limit` bytes; `None`
/// leaves the number to the byte-wise grammar, which reports what is wrong at the right byte.
#[inline(always)]
pub(super) fn whole_number(buf: &[u8], i: usize, limit: u64) -> Option<usize> {
    let wend = if limit < (buf.len() - i) as u64 {
        i + limit as usize + 1
    } else {
        buf.len()
    };
    fast_number(&buf[..wend], i)
}

/// What a byte can be right after the digits of a number.
const AFTER_DIGITS_END: u8 = 0;
const AFTER_DIGITS_DOT: u8 = 1;
const AFTER_DIGITS_EXP: u8 = 2;
/// A byte that cannot follow a complete number (a letter, digit, `.`, `+` or `-`): the
/// byte-wise grammar reports it.
const AFTER_DIGITS_BAD: u8 = 3;

/// [`AFTER_DIGITS_END`] and the others, for every byte.
static AFTER_DIGITS: [u8; 256] = {
    let mut t = [AFTER_DIGITS_END; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        if c.is_ascii_alphanumeric() || c == b'+' || c == b'-' {
            t[b] = AFTER_DIGITS_BAD;
        }
        b += 1;
    }
    t[b'.' as usize] = AFTER_DIGITS_DOT;
    t[b'e' as usize] = AFTER_DIGITS_EXP;
    t[b'E' as usize] = AFTER_DIGITS_EXP;
    t
};

/// Scans a well-formed number starting at `buf[i]` that is followed, inside `buf`, by a byte
/// that cannot continue it. Returns its end, or `None` to let the byte-wise grammar decide
/// (split numbers, errors, numbers at the window end).
#[inline]
fn fast_number(buf: &[u8], i: usize) -> Option<usize> {
    let mut j = i + usize::from(buf.get(i) == Some(&b'-'));
    match buf.get(j)? {
        b'0' => j += 1,
        b'1'..=b'9' => j = digits(buf, j + 1),
        _ => return None,
    }
    let mut class = AFTER_DIGITS[usize::from(*buf.get(j)?)];
    if class == AFTER_DIGITS_DOT {
        let k = digits(buf, j + 1);
        if k == j + 1 {
            return None;
        }
        j = k;
        class = AFTER_DIGITS[usize::from(*buf.get(j)?)];
    }
    if class == AFTER_DIGITS_EXP {
        j += 1;
        if matches!(*buf.get(j)?, b'+' | b'-') {
            j += 1;
        }
        let k = digits(buf, j);
        if k == j {
            return None;
        }
        j = k;
        class = AFTER_DIGITS[usize::from(*buf.get(j)?)];
    }
    // The terminator must be a byte the grammar treats as the end of a number.
    (class == AFTER_DIGITS_END).then_some(j)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the byte-wise grammar ends the number at the start of `bytes`: `Some(j)` when it
    /// is complete before `bytes[j]`, `None` for an error or when the input ends first.
    fn grammar_end(bytes: &[u8]) -> Option<usize> {
        let mut st = NumState::Start;
        for (j, &b) in bytes.iter().enumerate() {
            match st.step(b) {
                Step::Next(n) => st = n,
                Step::End => return Some(j),
                Step::Error(_) => return None,
            }
        }
        None
    }

    proptest::proptest! {
        #[test]
        fn fast_path_ends_numbers_where_the_grammar_does(
            body in proptest::collection::vec(
                proptest::sample::select(b"0123456789-+.eEx ,]\"".to_vec()), 0..40)
        ) {
            let fast = fast_number(&body, 0);
            let slow = grammar_end(&body);
            // The fast path may leave a number to the grammar, never end it elsewhere.
            if let Some(end) = fast {
                proptest::prop_assert_eq!(Some(end), slow);
            }
            // And it takes every well-formed number that has a terminator.
            if slow.is_some() {
                proptest::prop_assert_eq!(fast, slow);
            }
        }
    }

    #[test]
    fn grammar_accepts_and_rejects() {
        for ok in [
            "0", "-0", "1", "-1", "10", "1.5", "0.0", "1e5", "1E+5", "1e-05", "-0.0e0",
        ] {
            assert!(Number::parse(ok).is_some(), "{ok}");
        }
        for bad in [
            "", "-", "01", "-01", "1.", ".5", "+1", "1e", "1e+", "1.e3", "0x1", "1.5.", "--1",
        ] {
            assert!(Number::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn conversions_report_overflow() {
        let n = |s| Number::parse(s).unwrap();
        assert_eq!(n("9223372036854775807").as_i64(), Ok(i64::MAX));
        assert_eq!(
            n("9223372036854775808").as_i64().map_err(|e| e.kind()),
            Err(NumberErrorKind::OutOfRange)
        );
        assert_eq!(n("-9223372036854775808").as_i64(), Ok(i64::MIN));
        assert_eq!(n("18446744073709551615").as_u64(), Ok(u64::MAX));
        assert_eq!(
            n("-1").as_u64().map_err(|e| e.kind()),
            Err(NumberErrorKind::OutOfRange)
        );
        assert_eq!(n("-0").as_u64(), Ok(0));
        assert_eq!(
            n("1e2").as_u64().map_err(|e| e.kind()),
            Err(NumberErrorKind::NotAnInteger)
        );
        assert_eq!(
            n("1e400").as_f64().map_err(|e| e.kind()),
            Err(NumberErrorKind::OutOfRange)
        );
        assert_eq!(
            n("-1e400").as_f64().map_err(|e| e.kind()),
            Err(NumberErrorKind::OutOfRange)
        );
        assert_eq!(n("1e-400").as_f64(), Ok(0.0));
        assert_eq!(n("0.1").as_f64(), Ok(0.1));
        assert!(!n("1.0").is_integer() && n("-7").is_integer());
    }
}
