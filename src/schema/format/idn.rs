//! IDNA2008 label rules for U-labels (RFC 5891 section 4.2.3, RFC 5892 and its
//! appendix A contextual rules, RFC 5893 Bidi rule), over the generated code point
//! table in `idna_table.rs` (Unicode 17.0).
//!
//! Deliberate gap: labels are not checked to be in Unicode NFC (RFC 5891 4.2.3.1)
//! because that needs the normalization tables; the suite's `idn-email` cases even
//! expect a non-NFC domain to be accepted.

use super::idna_table::{PROPS, STARTS};

/// RFC 5892 derived property, bits 0-1 of a props word.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Class {
    /// DISALLOWED or UNASSIGNED.
    Disallowed,
    Pvalid,
    ContextJ,
    ContextO,
}

/// `Bidi_Class` values the Bidi rule distinguishes, bits 2-5 (0 = any other).
/// Variants keep the Unicode short names the RFCs use.
#[allow(clippy::upper_case_acronyms)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Bidi {
    Other,
    L,
    R,
    AL,
    AN,
    EN,
    ES,
    CS,
    ET,
    ON,
    BN,
    NSM,
}

/// Properties of one code point.
#[derive(Clone, Copy)]
pub(super) struct Props(u16);

// Joining_Type, bits 6-8.
const JOIN_L: u16 = 1;
const JOIN_D: u16 = 2;
const JOIN_R: u16 = 3;
const JOIN_T: u16 = 4;
// Script subset, bits 9-10.
const SCRIPT_GREEK: u16 = 1;
const SCRIPT_HEBREW: u16 = 2;
const SCRIPT_HIRAGANA_KATAKANA_HAN: u16 = 3;
const MARK: u16 = 1 << 11;
const VIRAMA: u16 = 1 << 12;

impl Props {
    pub(super) fn of(c: char) -> Props {
        let cp = u32::from(c);
        let i = STARTS.partition_point(|&start| start <= cp);
        // STARTS[0] == 0, so i >= 1.
        Props(PROPS.get(i.wrapping_sub(1)).copied().unwrap_or(0))
    }

    pub(super) fn class(self) -> Class {
        match self.0 & 3 {
            0 => Class::Disallowed,
            1 => Class::Pvalid,
            2 => Class::ContextJ,
            _ => Class::ContextO,
        }
    }

    pub(super) fn bidi(self) -> Bidi {
        const ALL: [Bidi; 12] = [
            Bidi::Other,
            Bidi::L,
            Bidi::R,
            Bidi::AL,
            Bidi::AN,
            Bidi::EN,
            Bidi::ES,
            Bidi::CS,
            Bidi::ET,
            Bidi::ON,
            Bidi::BN,
            Bidi::NSM,
        ];
        ALL.get(usize::from((self.0 >> 2) & 0xF))
            .copied()
            .unwrap_or(Bidi::Other)
    }

    fn joining(self) -> u16 {
        (self.0 >> 6) & 7
    }

    fn script(self) -> u16 {
        (self.0 >> 9) & 3
    }

    fn is_mark(self) -> bool {
        self.0 & MARK != 0
    }

    fn is_virama(self) -> bool {
        self.0 & VIRAMA != 0
    }
}

/// Bidi class for the Bidi rule; ASCII letters of any case count as L (uppercase is
/// DISALLOWED in U-labels but fine in the LDH labels the rule also applies to).
pub(super) fn bidi_of(c: char) -> Bidi {
    match c {
        'a'..='z' | 'A'..='Z' => Bidi::L,
        '0'..='9' => Bidi::EN,
        '-' => Bidi::ES,
        _ => Props::of(c).bidi(),
    }
}

/// RFC 5891 4.2.3 / RFC 5892 checks on one U-label: hyphen placement, no leading
/// combining mark, every code point PVALID or CONTEXTJ/CONTEXTO with its rule met.
pub(super) fn is_valid_u_label(label: &[char]) -> bool {
    let (Some(&first), Some(&last)) = (label.first(), label.last()) else {
        return false;
    };
    if first == '-' || last == '-' || (label.get(2) == Some(&'-') && label.get(3) == Some(&'-')) {
        return false;
    }
    if Props::of(first).is_mark() {
        return false;
    }
    label
        .iter()
        .enumerate()
        .all(|(i, &c)| match Props::of(c).class() {
            Class::Pvalid => true,
            Class::ContextJ => context_j(label, i),
            Class::ContextO => context_o(label, i),
            Class::Disallowed => false,
        })
}

/// RFC 5892 appendix A.1 (ZERO WIDTH NON-JOINER) and A.2 (ZERO WIDTH JOINER).
fn context_j(label: &[char], i: usize) -> bool {
    let before = i
        .checked_sub(1)
        .and_then(|b| label.get(b))
        .map(|&c| Props::of(c));
    if before.is_some_and(Props::is_virama) {
        return true;
    }
    if label[i] != '\u{200C}' {
        return false;
    }
    // (Joining_Type:{L,D})(Joining_Type:T)*\u200C(Joining_Type:T)*(Joining_Type:{R,D})
    let left = label[..i]
        .iter()
        .rev()
        .map(|&c| Props::of(c).joining())
        .find(|&j| j != JOIN_T);
    let right = label[i + 1..]
        .iter()
        .map(|&c| Props::of(c).joining())
        .find(|&j| j != JOIN_T);
    matches!(left, Some(JOIN_L | JOIN_D)) && matches!(right, Some(JOIN_R | JOIN_D))
}

/// RFC 5892 appendix A.3-A.9.
fn context_o(label: &[char], i: usize) -> bool {
    let before = i.checked_sub(1).and_then(|b| label.get(b)).copied();
    let after = label.get(i + 1).copied();
    match label[i] {
        // MIDDLE DOT: between two 'l'.
        '\u{B7}' => before == Some('l') && after == Some('l'),
        // GREEK LOWER NUMERAL SIGN (KERAIA): followed by Greek.
        '\u{375}' => after.is_some_and(|c| Props::of(c).script() == SCRIPT_GREEK),
        // HEBREW PUNCTUATION GERESH and GERSHAYIM: preceded by Hebrew.
        '\u{5F3}' | '\u{5F4}' => before.is_some_and(|c| Props::of(c).script() == SCRIPT_HEBREW),
        // KATAKANA MIDDLE DOT: some Hiragana, Katakana or Han in the label.
        '\u{30FB}' => label
            .iter()
            .any(|&c| c != '\u{30FB}' && Props::of(c).script() == SCRIPT_HIRAGANA_KATAKANA_HAN),
        // ARABIC-INDIC DIGITS: no EXTENDED ARABIC-INDIC DIGITS in the label, and vice versa.
        '\u{660}'..='\u{669}' => !label.iter().any(|c| ('\u{6F0}'..='\u{6F9}').contains(c)),
        '\u{6F0}'..='\u{6F9}' => !label.iter().any(|c| ('\u{660}'..='\u{669}').contains(c)),
        _ => false,
    }
}

/// Whether a label makes its domain a "Bidi domain name" (RFC 5893 section 1.4):
/// it holds a code point of Bidi class R, AL or AN.
pub(super) fn has_rtl(label: &[char]) -> bool {
    label
        .iter()
        .any(|&c| matches!(bidi_of(c), Bidi::R | Bidi::AL | Bidi::AN))
}

/// RFC 5893 section 2, the Bidi rule, for one label of a Bidi domain name.
pub(super) fn satisfies_bidi_rule(label: &[char]) -> bool {
    let Some(&first) = label.first() else {
        return false;
    };
    let rtl = match bidi_of(first) {
        Bidi::R | Bidi::AL => true,
        Bidi::L => false,
        _ => return false,
    };
    let mut last_non_nsm = None;
    let (mut european_digits, mut arabic_digits) = (false, false);
    for &c in label {
        let bidi = bidi_of(c);
        let allowed = match bidi {
            Bidi::EN | Bidi::ES | Bidi::CS | Bidi::ET | Bidi::ON | Bidi::BN | Bidi::NSM => true,
            Bidi::R | Bidi::AL | Bidi::AN => rtl,
            Bidi::L => !rtl,
            Bidi::Other => false,
        };
        if !allowed {
            return false;
        }
        european_digits |= bidi == Bidi::EN;
        arabic_digits |= bidi == Bidi::AN;
        if bidi != Bidi::NSM {
            last_non_nsm = Some(bidi);
        }
    }
    if rtl {
        !(european_digits && arabic_digits)
            && matches!(last_non_nsm, Some(Bidi::R | Bidi::AL | Bidi::EN | Bidi::AN))
    } else {
        matches!(last_non_nsm, Some(Bidi::L | Bidi::EN))
    }
}

#[cfg(test)]
mod tests {
    use super::{bidi_of, is_valid_u_label, satisfies_bidi_rule, Bidi, Class, Props};

    fn chars(s: &str) -> Vec<char> {
        s.chars().collect()
    }

    #[test]
    fn table_lookups() {
        assert_eq!(Props::of('a').class(), Class::Pvalid);
        assert_eq!(Props::of('A').class(), Class::Disallowed);
        assert_eq!(Props::of('\0').class(), Class::Disallowed);
        assert_eq!(Props::of('-').class(), Class::Pvalid);
        assert_eq!(Props::of('.').class(), Class::Disallowed);
        assert_eq!(Props::of('\u{200D}').class(), Class::ContextJ);
        assert_eq!(Props::of('\u{B7}').class(), Class::ContextO);
        assert_eq!(Props::of('\u{302E}').class(), Class::Disallowed);
        assert_eq!(Props::of('\u{10FFFF}').class(), Class::Disallowed);
        assert_eq!(Props::of('\u{3134A}').class(), Class::Pvalid);
        assert_eq!(Props::of('\u{5D0}').bidi(), Bidi::R);
        assert_eq!(Props::of('\u{628}').bidi(), Bidi::AL);
        assert_eq!(Props::of('\u{660}').bidi(), Bidi::AN);
        assert_eq!(Props::of('\u{6F0}').bidi(), Bidi::EN);
        assert_eq!(Props::of('\u{300}').bidi(), Bidi::NSM);
        assert!(Props::of('\u{903}').is_mark());
        assert!(Props::of('\u{94D}').is_virama());
        assert_eq!(bidi_of('Q'), Bidi::L);
    }

    #[test]
    fn u_labels() {
        for ok in [
            "bücher",
            "실례",
            "l\u{B7}l",
            "\u{3B1}\u{375}\u{3B2}",
            "\u{5D0}\u{5F3}\u{5D1}",
            "\u{30FB}\u{3041}",
            "\u{915}\u{94D}\u{200D}\u{937}",
            "\u{628}\u{64A}\u{200C}\u{628}\u{64A}",
        ] {
            assert!(is_valid_u_label(&chars(ok)), "{ok}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "ab--c",
            "\u{300}a",
            "Bücher",
            "a b",
            "a\u{B7}",
            "\u{375}",
            "\u{5F3}",
            "\u{30FB}",
            "\u{660}\u{6F0}",
            "a\u{200D}",
            "a\u{200C}b",
        ] {
            assert!(!is_valid_u_label(&chars(bad)), "{bad}");
        }
    }

    #[test]
    fn bidi_rule() {
        for ok in [
            "\u{5D0}",
            "\u{5D0}1",
            "\u{627}\u{660}",
            "\u{5D0}\u{300}",
            "abc",
            "a1",
            "a\u{300}",
        ] {
            assert!(satisfies_bidi_rule(&chars(ok)), "{ok}");
        }
        for bad in [
            "1a",
            "\u{5D0}a",
            "a\u{5D0}",
            "\u{5D0}1\u{660}",
            "\u{5D0}-",
            "a-",
            "\u{660}",
        ] {
            assert!(!satisfies_bidi_rule(&chars(bad)), "{bad}");
        }
    }
}
