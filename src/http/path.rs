//! Request paths as a proxy must read them before matching a route (RFC 3986 §6.2.2): escapes
//! of unreserved characters decoded (`%2e` is `.`), the others in upper case, dot-segments
//! removed (§5.2.4), and whatever an upstream could read as a different path refused. What
//! comes out has no `.` or `..` segment, so a route's base followed by it stays inside the
//! base whatever the upstream does with it.
//!
//! The dot-segment pass is its own rather than `schema::uri::remove_dot_segments`: that one
//! follows §5.2.4 to the letter and stops `..` at the root, where a proxy must refuse the
//! path instead. Where both accept a path they agree (a property test below checks it).

/// Normalises an origin-form request path (`/a/b`, no query).
///
/// Returns the normalised path, or the kind of refusal:
///
/// | kind | what |
/// |---|---|
/// | `not_absolute` | the path does not start with `/` (`*`, an empty path) |
/// | `bad_escape` | `%` not followed by two hex digits |
/// | `encoded_separator` | `%2F` or `%5C`: a `/` or `\` the upstream may decode into a separator |
/// | `double_encoded` | `%25` followed by the escape of `.`, `/` or `\` (`%252e`): traversal after a second decode |
/// | `control` | an ASCII control character (C0 or DEL), literal or escaped (`%00`, `%0A`, `%7F`) |
/// | `backslash` | a literal `\`, a separator for some servers |
/// | `dot_segment` | a segment that reads as `.` or `..` before a `;` parameter (`..;x`), as some servers read it |
/// | `above_root` | more `..` segments than there are segments to remove |
///
/// # Errors
/// The refusal kind, from the table above.
///
/// # Example
/// ```
/// use jsongate::http::normalize_path;
/// assert_eq!(normalize_path("/reviews/a/../b").unwrap(), "/reviews/b");
/// assert_eq!(normalize_path("/reviews/%2e%2E/x").unwrap(), "/x");
/// assert_eq!(normalize_path("/a/%7euser/%c3%a9").unwrap(), "/a/~user/%C3%A9");
/// assert_eq!(normalize_path("/reviews/../../admin").unwrap_err(), "above_root");
/// assert_eq!(normalize_path("/reviews/..%2Fadmin").unwrap_err(), "encoded_separator");
/// assert_eq!(normalize_path("/reviews/..;/admin").unwrap_err(), "dot_segment");
/// ```
pub fn normalize_path(raw: &str) -> Result<String, &'static str> {
    if !raw.starts_with('/') {
        return Err("not_absolute");
    }
    let decoded = decode_unreserved(raw)?;
    let mut out: Vec<&str> = Vec::new();
    let mut segments = decoded[1..].split('/').peekable();
    // A path that ends in a dot-segment ends in `/` (RFC 3986 §5.2.4).
    let mut trailing = false;
    while let Some(seg) = segments.next() {
        let last = segments.peek().is_none();
        match seg {
            "." => trailing = last,
            ".." => {
                if out.pop().is_none() {
                    return Err("above_root");
                }
                trailing = last;
            }
            _ => {
                let head = seg.split(';').next().unwrap_or(seg);
                if head == "." || head == ".." {
                    return Err("dot_segment");
                }
                out.push(seg);
                trailing = false;
            }
        }
    }
    let mut path = String::with_capacity(decoded.len());
    for seg in &out {
        path.push('/');
        path.push_str(seg);
    }
    if trailing || path.is_empty() {
        path.push('/');
    }
    Ok(path)
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// Decodes escapes of unreserved characters, upper-cases the rest, refuses the dangerous ones.
fn decode_unreserved(raw: &str) -> Result<String, &'static str> {
    let b = raw.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'%' => {
                let (Some(h), Some(l)) = (
                    b.get(i + 1).copied().and_then(hex),
                    b.get(i + 2).copied().and_then(hex),
                ) else {
                    return Err("bad_escape");
                };
                let v = h * 16 + l;
                match v {
                    b'/' | b'\\' => return Err("encoded_separator"),
                    0..=0x1f | 0x7f => return Err("control"),
                    b'%' => out.push_str("%25"),
                    v if unreserved(v) => out.push(char::from(v)),
                    v => {
                        const HEX: &[u8; 16] = b"0123456789ABCDEF";
                        out.push('%');
                        out.push(char::from(HEX[usize::from(v >> 4)]));
                        out.push(char::from(HEX[usize::from(v & 15)]));
                    }
                }
                i += 3;
            }
            b'\\' => return Err("backslash"),
            0..=0x1f | 0x7f => return Err("control"),
            _ => {
                // Copies a run of plain bytes (UTF-8 included) at once.
                let end = b[i..]
                    .iter()
                    .position(|&x| matches!(x, b'%' | b'\\' | 0..=0x1f | 0x7f))
                    .map_or(b.len(), |p| i + p);
                out.push_str(&raw[i..end]);
                i = end;
            }
        }
    }
    // `%25` then the escape of a separator or a dot, as it reads once decoded escapes are
    // read again (`%252e`, or `%25%32%65`, whose `%32%65` was decoded just above).
    let o = out.as_bytes();
    for (at, _) in out.match_indices("%25") {
        if let (Some(h), Some(l)) = (
            o.get(at + 3).copied().and_then(hex),
            o.get(at + 4).copied().and_then(hex),
        ) {
            if matches!(h * 16 + l, b'.' | b'/' | b'\\') {
                return Err("double_encoded");
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_segments_are_resolved() {
        for (raw, want) in [
            ("/", "/"),
            ("/a", "/a"),
            ("/a/", "/a/"),
            ("/a/./b", "/a/b"),
            ("/a/b/..", "/a/"),
            ("/a/b/.", "/a/b/"),
            ("/a/b/../c", "/a/c"),
            ("/a//../b", "/a/b"),
            ("/a/%2e/b", "/a/b"),
            ("/a/b/%2E%2e/c", "/a/c"),
            ("/a/.%2e/c", "/c"),
            ("/..a/b", "/..a/b"),
            ("/a/...", "/a/..."),
            ("/a;x=1/b", "/a;x=1/b"),
            ("/%41%62%7E%2d%5f", "/Ab~-_"),
            ("/%c3%a9/%3a", "/%C3%A9/%3A"),
            ("/é", "/é"),
            ("/a%25b", "/a%25b"),
        ] {
            assert_eq!(normalize_path(raw).as_deref(), Ok(want), "{raw}");
        }
    }

    #[test]
    fn paths_an_upstream_could_read_otherwise_are_refused() {
        for (raw, kind) in [
            ("", "not_absolute"),
            ("*", "not_absolute"),
            ("a/b", "not_absolute"),
            ("/..", "above_root"),
            ("/a/../..", "above_root"),
            ("/reviews/../../admin/delete_all", "above_root"),
            ("/reviews/%2e%2e/%2E%2E/admin", "above_root"),
            ("/a/%2f../b", "encoded_separator"),
            ("/a/..%5cb", "encoded_separator"),
            ("/a/%252e%252e/b", "double_encoded"),
            ("/a/%252F", "double_encoded"),
            ("/a/%25%35%63", "double_encoded"),
            ("/a/%25%32%45", "double_encoded"),
            ("/a/%", "bad_escape"),
            ("/a/%2", "bad_escape"),
            ("/a/%zz", "bad_escape"),
            ("/a/%00", "control"),
            ("/a/%0a", "control"),
            ("/a/\u{1}", "control"),
            ("/a\\..\\b", "backslash"),
            ("/a/..;/b", "dot_segment"),
            ("/a/.;x/b", "dot_segment"),
            ("/a/%2e%2e;/b", "dot_segment"),
        ] {
            assert_eq!(normalize_path(raw), Err(kind), "{raw:?}");
        }
    }

    proptest::proptest! {
        /// Without escapes or `;`, an accepted path is what RFC 3986 §5.2.4's algorithm (the
        /// schema layer's, for `$ref` resolution) makes of it.
        #[test]
        fn dot_segments_agree_with_the_rfc_algorithm(
            segs in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", ".", "..", "", "...", ".a"]), 0..10)
        ) {
            let raw = format!("/{}", segs.join("/"));
            if let Ok(p) = normalize_path(&raw) {
                proptest::prop_assert_eq!(p, crate::schema::uri::remove_dot_segments(&raw));
            }
        }
    }

    #[test]
    fn normalising_twice_changes_nothing() {
        for raw in ["/a/./b/../c/", "/%7e/%c3%a9", "/x/%2e%2e/y", "/a;p/b"] {
            let once = normalize_path(raw).unwrap();
            assert_eq!(normalize_path(&once).unwrap(), once, "{raw}");
        }
    }
}
