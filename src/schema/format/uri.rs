//! `uri`, `uri-reference`, `iri` and `iri-reference` formats: the RFC 3986 `URI` and
//! `URI-reference` grammars (section 3 and appendix A), and their RFC 3987 section 2.2
//! IRI counterparts, which also admit `ucschar` code points everywhere `unreserved` is
//! allowed and `iprivate` ones in the query.
//!
//! Purely syntactic: a host that looks like a bad IPv4 address is a valid `reg-name`;
//! IP literals in brackets must be RFC 4291 IPv6 (with an RFC 3986 dotted-quad tail,
//! no leading zeros) or `IPvFuture`.

use super::ip;

/// Absolute URI with a scheme (ASCII only).
pub(super) fn is_uri(s: &str) -> bool {
    reference(s, false, false)
}

/// URI or relative reference (ASCII only).
pub(super) fn is_uri_reference(s: &str) -> bool {
    reference(s, true, false)
}

/// Absolute IRI.
pub(super) fn is_iri(s: &str) -> bool {
    reference(s, false, true)
}

/// IRI or relative IRI reference.
pub(super) fn is_iri_reference(s: &str) -> bool {
    reference(s, true, true)
}

const SUB_DELIMS: &str = "!$&'()*+,;=";

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

/// RFC 3987 `ucschar`.
fn is_ucschar(c: char) -> bool {
    let cp = u32::from(c);
    // Planes 1-13 without their last two code points, then part of plane 14.
    matches!(cp, 0xA0..=0xD7FF | 0xF900..=0xFDCF | 0xFDF0..=0xFFEF | 0xE1000..=0xEFFFD)
        || ((0x10000..0xE0000).contains(&cp) && (cp & 0xFFFF) <= 0xFFFD)
}

/// RFC 3987 `iprivate`.
fn is_iprivate(c: char) -> bool {
    let cp = u32::from(c);
    matches!(cp, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x10_0000..=0x10_FFFD)
}

/// Which characters a component admits besides `unreserved`, `pct-encoded` and
/// (when IRI) `ucschar`.
#[derive(Clone, Copy)]
struct Allowed {
    /// Extra ASCII characters.
    extra: &'static str,
    iri: bool,
    /// `iprivate` too (IRI queries).
    private: bool,
}

/// Whether every character of `part` is allowed, `%` starting a valid triplet.
fn all_allowed(part: &str, allowed: Allowed) -> bool {
    let mut chars = part.chars();
    while let Some(c) = chars.next() {
        let ok = if c == '%' {
            let (high, low) = (chars.next(), chars.next());
            high.is_some_and(|h| h.is_ascii_hexdigit())
                && low.is_some_and(|l| l.is_ascii_hexdigit())
        } else if c.is_ascii() {
            is_unreserved(c) || allowed.extra.contains(c)
        } else {
            allowed.iri && (is_ucschar(c) || (allowed.private && is_iprivate(c)))
        };
        if !ok {
            return false;
        }
    }
    true
}

fn reference(s: &str, relative_ok: bool, iri: bool) -> bool {
    // Scheme: the text before a ':' that comes before any '/', '?' or '#'.
    let rest = match s.find([':', '/', '?', '#']) {
        Some(colon) if s.as_bytes()[colon] == b':' => {
            // Not a scheme means a relative path whose first segment has a ':': invalid.
            let scheme = &s.as_bytes()[..colon];
            let valid = scheme.first().is_some_and(u8::is_ascii_alphabetic)
                && scheme
                    .iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'-' | b'.'));
            if !valid {
                return false;
            }
            &s[colon + 1..]
        }
        _ if relative_ok => s,
        _ => return false,
    };
    let pchar = Allowed {
        extra: "!$&'()*+,;=:@",
        iri,
        private: false,
    };
    let (rest, fragment) = rest.split_once('#').unwrap_or((rest, ""));
    let (hier, query) = rest.split_once('?').unwrap_or((rest, ""));
    if !all_allowed(
        fragment,
        Allowed {
            extra: "!$&'()*+,;=:@/?",
            ..pchar
        },
    ) || !all_allowed(
        query,
        Allowed {
            extra: "!$&'()*+,;=:@/?",
            private: iri,
            ..pchar
        },
    ) {
        return false;
    }
    let path = match hier.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            if !is_authority(&after[..end], iri) {
                return false;
            }
            &after[end..]
        }
        None => hier,
    };
    path.split('/').all(|segment| all_allowed(segment, pchar))
}

/// `authority = [ userinfo "@" ] host [ ":" port ]`.
fn is_authority(authority: &str, iri: bool) -> bool {
    let (userinfo, host_port) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    if userinfo.is_some_and(|u| {
        !all_allowed(
            u,
            Allowed {
                extra: "!$&'()*+,;=:",
                iri,
                private: false,
            },
        )
    }) {
        return false;
    }
    let (host_ok, port) = if let Some(literal) = host_port.strip_prefix('[') {
        match literal.split_once(']') {
            Some((inside, after)) => (is_ip_literal(inside), after),
            None => return false,
        }
    } else {
        let end = host_port.find(':').unwrap_or(host_port.len());
        let reg_name = Allowed {
            extra: SUB_DELIMS,
            iri,
            private: false,
        };
        (all_allowed(&host_port[..end], reg_name), &host_port[end..])
    };
    host_ok
        && (port.is_empty()
            || port
                .strip_prefix(':')
                .is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit())))
}

/// The inside of `[...]`: an IPv6 address or `IPvFuture`.
fn is_ip_literal(inside: &str) -> bool {
    let b = inside.as_bytes();
    if let Some(future) = b.strip_prefix(b"v").or_else(|| b.strip_prefix(b"V")) {
        // IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
        let hex = future.iter().take_while(|c| c.is_ascii_hexdigit()).count();
        return match future.get(hex..) {
            Some([b'.', tail @ ..]) if hex > 0 && !tail.is_empty() => tail.iter().all(|&c| {
                is_unreserved(char::from(c)) || c == b':' || SUB_DELIMS.as_bytes().contains(&c)
            }),
            _ => false,
        };
    }
    ip::ipv6_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::{is_iri, is_iri_reference, is_uri, is_uri_reference};

    #[test]
    fn uris() {
        for ok in [
            "a:",
            "a+b-c.d:x",
            "http://h",
            "http://u:p@h:80/p?q#f",
            "http://[::1]:8080",
            "http://[v7.x:y]/",
            "http://h:/",
            "file:///etc",
            "urn:a:b",
            "http://a/%20?%2f#%3A",
            "s://@/",
            "s:?#",
        ] {
            assert!(is_uri(ok), "{ok}");
        }
        for bad in [
            "",
            "/a",
            "a",
            "1a:b",
            ":b",
            "http://h:8x",
            "http://[::1",
            "http://[::g]",
            "http://[v.x]",
            "http://[vg.x]",
            "http://a b",
            "http://a/%2",
            "http://a/%",
            "http://h#a#b",
            "http://é",
            "s:a[b]",
            "http://u@[::1]@h",
        ] {
            assert!(!is_uri(bad), "{bad}");
        }
    }

    #[test]
    fn uri_references() {
        for ok in [
            "", "a", "./a:b", "a/b:c", "?", "#", "//h", "//", "../x?y#z", "%41",
        ] {
            assert!(is_uri_reference(ok), "{ok}");
        }
        for bad in ["a:b c", ":", "a b", "a:b:c d", "\\", "[", "#é"] {
            assert!(!is_uri_reference(bad), "{bad}");
        }
    }

    #[test]
    fn iris() {
        assert!(is_iri("http://例子.广告/路径?查询=\u{E000}#片段"));
        assert!(!is_iri("http://例子.广告/\u{E000}"));
        assert!(!is_iri("http://例子.广告/#\u{E000}"));
        assert!(!is_iri("http://a/\u{FFFE}"));
        assert!(!is_iri("http://a/\u{85}"));
        assert!(is_iri_reference("例子"));
        assert!(!is_iri_reference("例 子"));
    }
}
