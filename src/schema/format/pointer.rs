//! `json-pointer` and `relative-json-pointer` formats: RFC 6901 section 3 JSON
//! Pointers (the string representation, not the URI fragment form) and Relative JSON
//! Pointers as the draft 2020-12 references them (draft-bhutton-relative-json-pointer-00):
//!
//! ```text
//! relative-json-pointer = origin-specification ( json-pointer / "#" )
//! origin-specification  = non-negative-integer [ ("+" / "-") positive-integer ]
//! ```

/// RFC 6901 `json-pointer = *( "/" reference-token )`, `~` only in `~0` / `~1`.
pub(super) fn is_json_pointer(s: &str) -> bool {
    let b = s.as_bytes();
    if !(b.is_empty() || b[0] == b'/') {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'~' {
            if !matches!(b.get(i + 1), Some(b'0' | b'1')) {
                return false;
            }
            i += 1;
        }
        i += 1;
    }
    true
}

/// Length of an ASCII decimal run at the start of `b` that is `0` or has no leading zero;
/// None if there is no digit or a leading zero is followed by more digits.
fn integer_len(b: &[u8], allow_zero: bool) -> Option<usize> {
    let n = b.iter().take_while(|d| d.is_ascii_digit()).count();
    match (n, b.first()) {
        (1, Some(b'0')) if allow_zero => Some(1),
        (0, _) | (_, Some(b'0')) => None,
        _ => Some(n),
    }
}

/// Relative JSON Pointer: a non-negative integer, an optional index manipulation,
/// then `#` or a JSON Pointer.
pub(super) fn is_relative_json_pointer(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(mut at) = integer_len(b, true) else {
        return false;
    };
    if let Some(b'+' | b'-') = b.get(at) {
        let Some(n) = integer_len(&b[at + 1..], false) else {
            return false;
        };
        at += 1 + n;
    }
    let rest = &s[at..]; // `at` follows ASCII bytes only, so it is a char boundary
    rest == "#" || is_json_pointer(rest)
}

#[cfg(test)]
mod tests {
    use super::{is_json_pointer, is_relative_json_pointer};

    #[test]
    fn json_pointers() {
        for ok in ["", "/", "//", "/a~0b~1c", "/~01", "/é/\u{0}"] {
            assert!(is_json_pointer(ok), "{ok:?}");
        }
        for bad in ["a", "#/a", "/~", "/~2", "/a~", "/~~0"] {
            assert!(!is_json_pointer(bad), "{bad:?}");
        }
    }

    #[test]
    fn relative_json_pointers() {
        for ok in ["0", "0#", "1/a", "10/~0", "0+1/a", "2-1#", "3-10", "0/"] {
            assert!(is_relative_json_pointer(ok), "{ok:?}");
        }
        for bad in [
            "", "#", "/a", "-1", "+1", "01", "0+0", "0+01/a", "0+", "0-/a", "0##", "0#/a", "1a",
            "٠",
        ] {
            assert!(!is_relative_json_pointer(bad), "{bad:?}");
        }
    }
}
