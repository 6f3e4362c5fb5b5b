//! Punycode (RFC 3492) for IDNA labels: decoding an A-label's payload into a
//! fixed-size buffer and encoding a U-label to compute and compare its A-label form.
//!
//! Both directions work on at most [`MAX_LABEL`] units (a DNS label's octet limit),
//! which callers check first, so the quadratic insertion and scan steps of the
//! algorithm are bounded by a constant. All arithmetic is overflow-checked.

/// The DNS label limit in octets; also the capacity of the buffers here.
pub(super) const MAX_LABEL: usize = 63;

const BASE: u32 = 36;
const T_MIN: u32 = 1;
const T_MAX: u32 = 26;
const SKEW: u32 = 38;
const DAMP: u32 = 700;
const INITIAL_BIAS: u32 = 72;
const INITIAL_N: u32 = 0x80;

/// A label of at most [`MAX_LABEL`] code points, without allocation.
#[derive(Clone, Copy)]
pub(super) struct Label {
    chars: [char; MAX_LABEL],
    len: usize,
}

impl Label {
    pub(super) const fn new() -> Self {
        Label {
            chars: ['\0'; MAX_LABEL],
            len: 0,
        }
    }

    /// Collects `chars`; None if there are more than [`MAX_LABEL`].
    pub(super) fn from_chars(chars: impl IntoIterator<Item = char>) -> Option<Self> {
        let mut label = Label::new();
        for c in chars {
            *label.chars.get_mut(label.len)? = c;
            label.len += 1;
        }
        Some(label)
    }

    pub(super) fn as_slice(&self) -> &[char] {
        &self.chars[..self.len]
    }

    /// Inserts `c` at `at` (`at <= len`); false if full.
    fn insert(&mut self, at: usize, c: char) -> bool {
        if self.len >= MAX_LABEL || at > self.len {
            return false;
        }
        self.chars.copy_within(at..self.len, at + 1);
        self.chars[at] = c;
        self.len += 1;
        true
    }
}

fn adapt(mut delta: u32, num_points: u32, first_time: bool) -> u32 {
    delta /= if first_time { DAMP } else { 2 };
    delta += delta / num_points;
    let mut k = 0;
    while delta > ((BASE - T_MIN) * T_MAX) / 2 {
        delta /= BASE - T_MIN;
        k += BASE;
    }
    k + (BASE - T_MIN + 1) * delta / (delta + SKEW)
}

fn threshold(k: u32, bias: u32) -> u32 {
    if k <= bias {
        T_MIN
    } else if k >= bias + T_MAX {
        T_MAX
    } else {
        k - bias
    }
}

fn digit_value(c: u8) -> Option<u32> {
    match c {
        b'a'..=b'z' => Some(u32::from(c - b'a')),
        b'A'..=b'Z' => Some(u32::from(c - b'A')),
        b'0'..=b'9' => Some(u32::from(c - b'0') + 26),
        _ => None,
    }
}

fn digit_char(d: u32) -> u8 {
    // d < BASE by construction
    if d < 26 {
        b'a' + d as u8
    } else {
        b'0' + (d - 26) as u8
    }
}

// Variable names follow RFC 3492's pseudocode.
#[allow(clippy::many_single_char_names)]
/// Decodes a Punycode payload (the part after `xn--`). None if it is malformed,
/// decodes to a non-character or to more than [`MAX_LABEL`] code points.
pub(super) fn decode(input: &[u8]) -> Option<Label> {
    if !input.is_ascii() {
        return None;
    }
    let (basic, extended) = match input.iter().rposition(|&c| c == b'-') {
        Some(d) => (&input[..d], &input[d + 1..]),
        None => (&input[..0], input),
    };
    let mut out = Label::from_chars(basic.iter().map(|&c| char::from(c)))?;
    let (mut n, mut i, mut bias) = (INITIAL_N, 0u32, INITIAL_BIAS);
    let mut digits = extended.iter();
    while !digits.as_slice().is_empty() {
        let old_i = i;
        let mut w = 1u32;
        let mut k = BASE;
        loop {
            let digit = digit_value(*digits.next()?)?;
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = threshold(k, bias);
            if digit < t {
                break;
            }
            w = w.checked_mul(BASE - t)?;
            k += BASE;
        }
        let points = out.len as u32 + 1;
        bias = adapt(i - old_i, points, old_i == 0);
        n = n.checked_add(i / points)?;
        i %= points;
        if !out.insert(i as usize, char::from_u32(n)?) {
            return None;
        }
        i += 1;
    }
    Some(out)
}

#[allow(clippy::many_single_char_names)]
/// Encodes `label` as a Punycode payload (without `xn--`) into `buf`, returning the
/// written length; None if it needs more than `buf.len()` bytes or overflows.
pub(super) fn encode(label: &[char], buf: &mut [u8]) -> Option<usize> {
    let mut len = 0usize;
    let mut push = |buf: &mut [u8], byte: u8| -> Option<()> {
        *buf.get_mut(len)? = byte;
        len += 1;
        Some(())
    };
    let mut basic = 0u32;
    for &c in label {
        if c.is_ascii() {
            push(buf, c as u8)?;
            basic += 1;
        }
    }
    if basic > 0 {
        push(buf, b'-')?;
    }
    let total = u32::try_from(label.len()).ok()?;
    let (mut n, mut delta, mut bias, mut handled) = (INITIAL_N, 0u32, INITIAL_BIAS, basic);
    while handled < total {
        let m = label
            .iter()
            .map(|&c| u32::from(c))
            .filter(|&c| c >= n)
            .min()?;
        delta = delta.checked_add((m - n).checked_mul(handled + 1)?)?;
        n = m;
        for &c in label {
            let c = u32::from(c);
            if c < n {
                delta = delta.checked_add(1)?;
            } else if c == n {
                let mut q = delta;
                let mut k = BASE;
                loop {
                    let t = threshold(k, bias);
                    if q < t {
                        break;
                    }
                    push(buf, digit_char(t + (q - t) % (BASE - t)))?;
                    q = (q - t) / (BASE - t);
                    k += BASE;
                }
                push(buf, digit_char(q))?;
                bias = adapt(delta, handled + 1, handled == basic);
                delta = 0;
                handled += 1;
            }
        }
        delta = delta.checked_add(1)?;
        n = n.checked_add(1)?;
    }
    Some(len)
}

#[cfg(test)]
mod tests {
    use super::{decode, encode, MAX_LABEL};

    fn round_trip(payload: &str, unicode: &str) {
        let label = decode(payload.as_bytes()).expect("decodes");
        assert_eq!(label.as_slice().iter().collect::<String>(), unicode);
        let chars: Vec<char> = unicode.chars().collect();
        let mut buf = [0u8; MAX_LABEL];
        let n = encode(&chars, &mut buf).expect("encodes");
        assert_eq!(&buf[..n], payload.as_bytes());
    }

    #[test]
    fn rfc_3492_samples() {
        round_trip("egbpdaj6bu4bxfgehfvwxn", "\u{644}\u{64a}\u{647}\u{645}\u{627}\u{628}\u{62a}\u{643}\u{644}\u{645}\u{648}\u{634}\u{639}\u{631}\u{628}\u{64a}\u{61f}");
        round_trip("ihqwcrb4cv8a8dqg056pqjye", "他们为什么不说中文");
        round_trip("bcher-kva", "bücher");
        round_trip("9n2bp8q", "실례");
        round_trip("-> $1.00 <--", "-> $1.00 <-");
    }

    #[test]
    fn rejects_malformed() {
        // A truncated variable-length integer, overflow, a non-ASCII payload.
        for bad in ["X", "a-b", "zzzzzzzzzzzzzzzzzz", "99999999999", "é"] {
            assert!(decode(bad.as_bytes()).is_none(), "{bad}");
        }
        // Decodes to a surrogate code point.
        assert!(decode(b"a-rc4g").is_none());
        let mut buf = [0u8; MAX_LABEL];
        assert!(decode(b"a-").is_some_and(|l| l.as_slice() == ['a']));
        assert_eq!(encode(&[], &mut buf), Some(0));
        // Too long for the buffer.
        let long: Vec<char> = "ü".repeat(MAX_LABEL).chars().collect();
        assert!(encode(&long, &mut [0u8; MAX_LABEL]).is_none());
    }
}
