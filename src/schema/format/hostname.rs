//! `hostname` and `idn-hostname` formats.
//!
//! `hostname`: RFC 1123 section 2.1 names (ASCII letters, digits and hyphens; labels of
//! 1-63 octets not starting or ending with `-`; at most 253 octets; no trailing dot),
//! where labels starting with `xn--` (any case) must be A-labels: Punycode that decodes
//! to a valid U-label and re-encodes to itself (RFC 5891 sections 4.4 and 5.3).
//!
//! `idn-hostname`: RFC 5890-5893 IDNA2008 names. Labels are separated by `.`, U+3002,
//! U+FF0E or U+FF61 (RFC 3490 section 3.1); each is an LDH label, an A-label or a
//! U-label, whose A-label form must fit 63 octets, the whole name 253. Labels with `--`
//! in positions 3-4 that are not A-labels are rejected (reserved LDH labels). When any
//! label holds right-to-left characters, every label must satisfy the Bidi rule.

use super::idn::{has_rtl, is_valid_u_label, satisfies_bidi_rule};
use super::punycode::{self, Label, MAX_LABEL};

/// The longest name in octets, in A-label form, without a trailing dot.
const MAX_NAME: usize = 253;

/// RFC 1123 host name, with A-labels checked.
pub(super) fn is_hostname(s: &str) -> bool {
    s.is_ascii() && domain(s, false)
}

/// IDNA2008 internationalized host name.
pub(super) fn is_idn_hostname(s: &str) -> bool {
    domain(s, true)
}

fn is_separator(c: char, idn: bool) -> bool {
    c == '.' || (idn && matches!(c, '\u{3002}' | '\u{FF0E}' | '\u{FF61}'))
}

fn domain(s: &str, idn: bool) -> bool {
    // Every label's A-label form has at least as many octets as the label has code
    // points, so this bound keeps all further work constant-bounded.
    if s.is_empty() || s.chars().nth(MAX_NAME).is_some() {
        return false;
    }
    let mut total = 0usize;
    let mut bidi_domain = false;
    for label in s.split(|c| is_separator(c, idn)) {
        let Some(a_len) = label_a_len(label, idn) else {
            return false;
        };
        total += a_len + 1;
        bidi_domain |= u_form(label).is_some_and(|l| has_rtl(l.as_slice()));
    }
    if total - 1 > MAX_NAME {
        return false;
    }
    // RFC 5893: in a Bidi domain name every label satisfies the Bidi rule.
    !bidi_domain
        || s.split(|c| is_separator(c, idn))
            .all(|label| u_form(label).is_some_and(|l| satisfies_bidi_rule(l.as_slice())))
}

/// The `xn--` payload of an ASCII label, if it has the ACE prefix in any case.
fn ace_payload(label: &str) -> Option<&[u8]> {
    let b = label.as_bytes();
    (b.len() >= 4 && b[..4].eq_ignore_ascii_case(b"xn--")).then(|| &b[4..])
}

/// Decodes an A-label payload after lowercasing it (RFC 5891 section 5.3), so that
/// names differing only in ASCII case are equally valid.
fn decode_payload(payload: &[u8]) -> Option<Label> {
    let mut lower = [0u8; MAX_LABEL];
    let lower = lower.get_mut(..payload.len())?;
    lower.copy_from_slice(payload);
    lower.make_ascii_lowercase();
    punycode::decode(lower)
}

/// A valid label's Unicode form (A-labels decoded). Only called on validated labels.
fn u_form(label: &str) -> Option<Label> {
    match ace_payload(label) {
        Some(payload) => decode_payload(payload),
        None => Label::from_chars(label.chars()),
    }
}

/// Validates one label, returning its length in A-label form.
fn label_a_len(label: &str, idn: bool) -> Option<usize> {
    if label.is_empty() {
        return None;
    }
    if label.is_ascii() {
        if label.len() > MAX_LABEL {
            return None;
        }
        if let Some(payload) = ace_payload(label) {
            return is_a_label_payload(payload).then_some(label.len());
        }
        let b = label.as_bytes();
        let ldh = b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'-')
            && b[0] != b'-'
            && b[b.len() - 1] != b'-';
        let reserved = idn && b.len() >= 4 && &b[2..4] == b"--";
        return (ldh && !reserved).then_some(label.len());
    }
    if !idn {
        return None;
    }
    // 4 ("xn--") + one octet per code point at least.
    let u_label =
        Label::from_chars(label.chars()).filter(|l| l.as_slice().len() + 4 <= MAX_LABEL)?;
    if !is_valid_u_label(u_label.as_slice()) {
        return None;
    }
    let mut buf = [0u8; MAX_LABEL - 4];
    punycode::encode(u_label.as_slice(), &mut buf).map(|n| n + 4)
}

/// An A-label's payload decodes to a valid U-label with some non-ASCII code point and
/// is that U-label's canonical encoding.
fn is_a_label_payload(payload: &[u8]) -> bool {
    let Some(u_label) = decode_payload(payload) else {
        return false;
    };
    let chars = u_label.as_slice();
    if chars.iter().all(char::is_ascii) || !is_valid_u_label(chars) {
        return false;
    }
    let mut buf = [0u8; MAX_LABEL];
    punycode::encode(chars, &mut buf).is_some_and(|n| buf[..n].eq_ignore_ascii_case(payload))
}

#[cfg(test)]
mod tests {
    use super::{is_hostname, is_idn_hostname};

    #[test]
    fn hostnames() {
        for ok in [
            "a",
            "A-1.b2",
            "xn--bcher-kva.example",
            "XN--BCHER-KVA.com",
            "xn--Bcher-kva.com",
            "ab--cd",
            "1.2.3.4",
            &format!("{}.{}", "a".repeat(63), "b".repeat(63)),
        ] {
            assert!(is_hostname(ok), "{ok}");
        }
        let max = format!("{0}.{0}.{0}.{1}", "a".repeat(63), "b".repeat(61));
        assert_eq!(max.len(), 253);
        assert!(is_hostname(&max));
        assert!(!is_hostname(&format!("{max}b")));
        for bad in [
            "",
            ".",
            "a.",
            ".a",
            "a..b",
            "-a",
            "a-",
            "a_b",
            "bücher.de",
            "xn--",
            "xn--abc",
            "xn--bcher-kva-",
            "xn--bcher",
            "xn--a-ecp.ru",
            "a.b\n",
        ] {
            assert!(!is_hostname(bad), "{bad}");
        }
    }

    #[test]
    fn idn_hostnames() {
        for ok in [
            "bücher.example",
            "bücher。example",
            "xn--bcher-kva.de",
            "EXAMPLE.com",
            "\u{5D0}\u{5D1}.com",
            "\u{627}\u{644}.\u{5D0}",
        ] {
            assert!(is_idn_hostname(ok), "{ok}");
        }
        for bad in [
            "Bücher.example",
            "ab--cd",
            "a.\u{5D0}b",
            "1a.\u{5D0}",
            "bücher.",
            "。",
            "a\u{3002}\u{3002}b",
            &"ü".repeat(60),
        ] {
            assert!(!is_idn_hostname(bad), "{bad}");
        }
    }
}
