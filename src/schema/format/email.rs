//! `email` and `idn-email` formats: an RFC 5321 section 4.1.2 `Mailbox`
//! (`Local-part "@" ( Domain / address-literal )`), and its RFC 6531 section 3.3
//! internationalized form.
//!
//! * Local part: a dot-atom (RFC 5322 `atext` runs joined by single dots) or a quoted
//!   string (`qtextSMTP` / `quoted-pairSMTP`), at most 64 octets (RFC 5321 4.5.3.1.1).
//!   `idn-email` also admits any non-ASCII code point (RFC 6532 `UTF8-non-ascii`) in
//!   both forms.
//! * Domain: a `hostname` (`idn-hostname` for `idn-email`), or an address literal
//!   `[IPv4]` / `[IPv6:...]`. General address literals (`[tag:...]`) are rejected: no
//!   standardized tag besides `IPv6` is registered.
//!
//! No comments, folding white space or display names: this is the SMTP mailbox, not a
//! full RFC 5322 `address` header.

use super::{hostname, ip};

/// RFC 5321 limit on the local part, in octets.
const MAX_LOCAL: usize = 64;

/// ASCII mailbox.
pub(super) fn is_email(s: &str) -> bool {
    mailbox(s, false)
}

/// Internationalized mailbox.
pub(super) fn is_idn_email(s: &str) -> bool {
    mailbox(s, true)
}

/// RFC 5322 `atext`, plus any non-ASCII code point when `intl`.
fn is_atext(c: char, intl: bool) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || (intl && !c.is_ascii())
}

fn mailbox(s: &str, intl: bool) -> bool {
    let Some(local_len) = local_part_len(s, intl) else {
        return false;
    };
    if local_len > MAX_LOCAL {
        return false;
    }
    // `local_len` ends on an ASCII `"` or an atext run followed by '@', a char boundary.
    let Some(domain) = s[local_len..].strip_prefix('@') else {
        return false;
    };
    if let Some(literal) = domain.strip_prefix('[') {
        return literal.strip_suffix(']').is_some_and(is_address_literal);
    }
    if intl {
        hostname::is_idn_hostname(domain)
    } else {
        hostname::is_hostname(domain)
    }
}

/// Byte length of a dot-atom or quoted-string local part at the start of `s`.
fn local_part_len(s: &str, intl: bool) -> Option<usize> {
    if let Some(quoted) = s.strip_prefix('"') {
        let mut chars = quoted.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some(i + 2),
                // quoted-pairSMTP = "\" %d32-126
                '\\' => match chars.next() {
                    Some((_, ' '..='~')) => {}
                    _ => return None,
                },
                // qtextSMTP = %d32-33 / %d35-91 / %d93-126
                ' '..='~' => {}
                _ if intl && !c.is_ascii() => {}
                _ => return None,
            }
        }
        return None;
    }
    let end = s.find('@')?;
    let local = &s[..end];
    local
        .split('.')
        .all(|atom| !atom.is_empty() && atom.chars().all(|c| is_atext(c, intl)))
        .then_some(end)
}

fn is_address_literal(literal: &str) -> bool {
    match literal.get(..5) {
        Some(tag) if tag.eq_ignore_ascii_case("IPv6:") => ip::is_ipv6(&literal[5..]),
        _ => ip::is_ipv4(literal),
    }
}

#[cfg(test)]
mod tests {
    use super::{is_email, is_idn_email};

    #[test]
    fn emails() {
        for ok in [
            "a@b",
            "a.b.c@example.com",
            "!#$%&'*+-/=?^_`{|}~@x.org",
            "\"\"@x.org",
            "\"a\\\"b\"@x.org",
            "\"a b@c\"@x.org",
            "a@[1.2.3.4]",
            "a@[ipv6:1::2]",
            "a@xn--bcher-kva.de",
        ] {
            assert!(is_email(ok), "{ok}");
        }
        let long_local = format!("{}@x.org", "a".repeat(65));
        for bad in [
            "",
            "@",
            "a@",
            "@b",
            "a@b@c",
            "a..b@c",
            ".a@c",
            "a.@c",
            "a b@c",
            "\"a@c",
            "\"a\"b@c",
            "a@[1.2.3]",
            "a@[IPv6:1.2.3.4]",
            "a@[x:y]",
            "a@b.",
            "ü@x.org",
            "a@bücher.de",
            "\"\\\u{7f}\"@x.org",
            &long_local,
        ] {
            assert!(!is_email(bad), "{bad}");
        }
    }

    #[test]
    fn idn_emails() {
        for ok in [
            "ü@bücher.de",
            "\"ü x\"@x.org",
            "a@[IPv6:::1]",
            "用户@例子.广告",
        ] {
            assert!(is_idn_email(ok), "{ok}");
        }
        for bad in ["ü＠x.org", "a@Bücher.de", "a@b..c", "\u{300}@-x.org"] {
            assert!(!is_idn_email(bad), "{bad}");
        }
    }
}
