//! `uri-template` format: RFC 6570 section 2 syntax (level 4):
//!
//! ```text
//! URI-Template  = *( literals / expression )
//! expression    = "{" [ operator ] variable-list "}"
//! operator      = "+" / "#" / "." / "/" / ";" / "?" / "&" / "=" / "," / "!" / "@" / "|"
//! variable-list = varspec *( "," varspec )
//! varspec       = varname [ ":" max-length / "*" ]      ; max-length = %x31-39 0*3DIGIT
//! varname       = varchar *( ["."] varchar )
//! varchar       = ALPHA / DIGIT / "_" / pct-encoded
//! ```
//!
//! Literals are the RFC's set (no controls, space, double quote, `<`, `>`, `\`, `^`,
//! backtick, `{`, `|`, `}`; `%` only as a triplet; `ucschar` and `iprivate` allowed)
//! plus the apostrophe, which the suite treats as a valid literal. The reserved operators
//! `=,!@|` are part of the grammar and accepted.

/// Whether `s` is a syntactically valid URI Template.
pub(super) fn is_uri_template(s: &str) -> bool {
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        let ok = match c {
            '{' => expression(&mut chars),
            '%' => pct_tail(&mut chars),
            '\u{0}'..='\u{20}'
            | '"'
            | '<'
            | '>'
            | '\\'
            | '^'
            | '`'
            | '|'
            | '}'
            | '\u{7F}'..='\u{9F}' => false,
            c if c.is_ascii() => true,
            c => is_ucschar_or_iprivate(c),
        };
        if !ok {
            return false;
        }
    }
    true
}

/// RFC 3987 `ucschar` / `iprivate` (for non-ASCII code points from U+00A0 up).
fn is_ucschar_or_iprivate(c: char) -> bool {
    let cp = u32::from(c);
    // Everything from U+00A0 except the last two code points of each plane,
    // U+FDD0-U+FDEF, U+FFF0-U+FFFD and plane 14's first 4096 code points.
    (cp & 0xFFFE) != 0xFFFE && !matches!(cp, 0xFDD0..=0xFDEF | 0xFFF0..=0xFFFF | 0xE0000..=0xE0FFF)
}

/// The two hex digits after a `%`.
fn pct_tail(chars: &mut std::str::Chars<'_>) -> bool {
    let (high, low) = (chars.next(), chars.next());
    high.is_some_and(|h| h.is_ascii_hexdigit()) && low.is_some_and(|l| l.is_ascii_hexdigit())
}

/// The rest of an expression after its `{`, through the closing `}`.
fn expression(chars: &mut std::str::Chars<'_>) -> bool {
    let mut rest = chars.clone();
    if matches!(
        rest.next(),
        Some('+' | '#' | '.' | '/' | ';' | '?' | '&' | '=' | ',' | '!' | '@' | '|')
    ) {
        *chars = rest;
    }
    loop {
        // varname
        let mut need_varchar = true;
        let next = loop {
            match chars.next() {
                Some(c) if c.is_ascii_alphanumeric() || c == '_' => need_varchar = false,
                Some('%') if pct_tail(chars) => need_varchar = false,
                Some('.') if !need_varchar => need_varchar = true,
                other => break other,
            }
        };
        if need_varchar {
            return false;
        }
        // modifier, then "," or "}"
        let after = match next {
            Some('*') => chars.next(),
            Some(':') => {
                let mut digits = 0;
                let after = loop {
                    match chars.next() {
                        Some(d @ '0'..='9') => {
                            if digits == 0 && d == '0' {
                                return false;
                            }
                            digits += 1;
                        }
                        other => break other,
                    }
                };
                if !(1..=4).contains(&digits) {
                    return false;
                }
                after
            }
            other => other,
        };
        match after {
            Some(',') => {}
            Some('}') => return true,
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_uri_template;

    #[test]
    fn templates() {
        for ok in [
            "",
            "a",
            "{a}",
            "{+a,b.c*,d:9999}",
            "{%2F_1}",
            "http://x/{a}{b}/c?d={e}",
            "{=x}",
            "{|a}",
            "é{a}",
            "%7B{a}",
        ] {
            assert!(is_uri_template(ok), "{ok}");
        }
        for bad in [
            "{",
            "}",
            "{a",
            "{a}}",
            "{+}",
            "{a.}",
            "{.a.}",
            "{a:}",
            "{a:12345}",
            "{a:0}",
            "{a*:1}",
            "{a b}",
            "{a}{",
            "%",
            "%g0",
            "{%4}",
            "<",
            "\u{85}",
            "\u{FFFF}",
            "\u{FFF9}",
            "\u{10FFFF}",
            "{a,}",
            "{~a}",
        ] {
            assert!(!is_uri_template(bad), "{bad}");
        }
    }
}
