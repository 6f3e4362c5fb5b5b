//! `ipv4` and `ipv6` formats: the RFC 2673 section 3.2 dotted-quad (RFC 3986
//! `IPv4address`: four decimal octets 0-255, no leading zeros, no shorthand) and the
//! RFC 4291 section 2.2 text forms (full, `::`-compressed, trailing embedded IPv4;
//! no zone ids, prefixes or brackets). Also used by `uri` (IP-literal hosts) and
//! `email` (address literals).

/// RFC 3986 `dec-octet`: `0`-`255` without leading zeros.
fn is_dec_octet(b: &[u8]) -> bool {
    match b {
        [d] | [b'1'..=b'9', d] => d.is_ascii_digit(),
        [b'1', d, e] => d.is_ascii_digit() && e.is_ascii_digit(),
        [b'2', b'0'..=b'4', e] => e.is_ascii_digit(),
        [b'2', b'5', b'0'..=b'5'] => true,
        _ => false,
    }
}

/// Dotted-quad IPv4 address.
pub(super) fn is_ipv4(s: &str) -> bool {
    ipv4_bytes(s.as_bytes())
}

fn ipv4_bytes(b: &[u8]) -> bool {
    let mut parts = 0;
    for part in b.split(|&c| c == b'.') {
        parts += 1;
        if parts > 4 || !is_dec_octet(part) {
            return false;
        }
    }
    parts == 4
}

fn is_h16(b: &[u8]) -> bool {
    (1..=4).contains(&b.len()) && b.iter().all(u8::is_ascii_hexdigit)
}

/// Counts the 16-bit groups in a `:`-separated run (`b` may be empty); an IPv4 tail,
/// allowed only where `ipv4_tail_ok`, counts as two. None if a group is malformed.
fn groups(b: &[u8], ipv4_tail_ok: bool) -> Option<usize> {
    if b.is_empty() {
        return Some(0);
    }
    let mut count = 0;
    let mut parts = b.split(|&c| c == b':').peekable();
    while let Some(part) = parts.next() {
        let last = parts.peek().is_none();
        if is_h16(part) {
            count += 1;
        } else if last && ipv4_tail_ok && ipv4_bytes(part) {
            count += 2;
        } else {
            return None;
        }
        if count > 8 {
            return None;
        }
    }
    Some(count)
}

/// RFC 4291 text form of an IPv6 address.
pub(super) fn is_ipv6(s: &str) -> bool {
    ipv6_bytes(s.as_bytes())
}

pub(super) fn ipv6_bytes(b: &[u8]) -> bool {
    match b.windows(2).position(|w| w == b"::") {
        None => groups(b, true) == Some(8),
        Some(at) => {
            let (head, tail) = (&b[..at], &b[at + 2..]);
            match (groups(head, false), groups(tail, true)) {
                // `::` stands for at least one zero group.
                (Some(h), Some(t)) => h + t <= 7,
                _ => false,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_ipv4, is_ipv6};

    #[test]
    fn ipv4() {
        for ok in ["0.0.0.0", "255.255.255.255", "1.22.199.249", "100.0.10.9"] {
            assert!(is_ipv4(ok), "{ok}");
        }
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4.5",
            "01.2.3.4",
            "1.2.3.256",
            "1.2.3.-1",
            "1..3.4",
            "1.2.3.4.",
            "1.2.3.1000",
            "١.2.3.4",
        ] {
            assert!(!is_ipv4(bad), "{bad}");
        }
    }

    #[test]
    fn ipv6() {
        for ok in [
            "::",
            "::1",
            "1::",
            "1:2:3:4:5:6:7:8",
            "1::8",
            "1:2:3:4:5:6::8",
            "::2:3:4:5:6:7:8",
            "ABCD:ef01::1",
            "::1.2.3.4",
            "1:2:3:4:5:6:1.2.3.4",
            "1::5:6:1.2.3.4",
        ] {
            assert!(is_ipv6(ok), "{ok}");
        }
        for bad in [
            "",
            ":",
            ":::",
            "1:2:3:4:5:6:7:8:9",
            "1::2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7:1.2.3.4",
            "1.2.3.4::",
            "1.2.3.4::1",
            "::1.2.3.4:1",
            "::01.2.3.4",
            "12345::",
            "1:::2",
            "::g",
            "::1%eth0",
        ] {
            assert!(!is_ipv6(bad), "{bad}");
        }
    }
}
