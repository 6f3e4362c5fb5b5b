//! JSON Pointer (RFC 6901) building, escaping and splitting.
//!
//! Pointers are built only when something is reported (an error, an audit record), never on
//! the hot path: the scanner keeps names and indices in its own frames and calls into this
//! module when it needs a pointer.

use std::fmt::Write as _;

/// Appends one reference token for a member `name`, escaping `~` as `~0` and `/` as `~1`.
///
/// # Example
/// ```
/// let mut p = String::new();
/// jsongate::pointer::push_name(&mut p, "a/b~c");
/// jsongate::pointer::push_index(&mut p, 3);
/// assert_eq!(p, "/a~1b~0c/3");
/// ```
pub fn push_name(pointer: &mut String, name: &str) {
    pointer.push('/');
    for c in name.chars() {
        match c {
            '~' => pointer.push_str("~0"),
            '/' => pointer.push_str("~1"),
            c => pointer.push(c),
        }
    }
}

/// Appends one reference token for an array index.
///
/// # Example
/// ```
/// let mut p = String::from("/items");
/// jsongate::pointer::push_index(&mut p, 12);
/// assert_eq!(p, "/items/12");
/// ```
pub fn push_index(pointer: &mut String, index: u64) {
    // Writing to a String cannot fail.
    let _ = write!(pointer, "/{index}");
}

/// Splits an RFC 6901 pointer into unescaped reference tokens (`""` is the whole document);
/// `None` when it does not start with `/` or has a `~` not followed by `0` or `1`.
pub(crate) fn tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    rest.split('/')
        .map(|t| {
            let mut out = String::with_capacity(t.len());
            let mut chars = t.chars();
            while let Some(c) = chars.next() {
                match c {
                    '~' => match chars.next() {
                        Some('0') => out.push('~'),
                        Some('1') => out.push('/'),
                        _ => return None,
                    },
                    c => out.push(c),
                }
            }
            Some(out)
        })
        .collect()
}

/// The array index a reference token names: canonical decimal only (`"0"`, `"12"`; not
/// `"01"`, `"-"` or `"+1"`), as RFC 6901 requires.
pub(crate) fn array_index(token: &str) -> Option<u64> {
    let canonical = token == "0"
        || (!token.is_empty()
            && !token.starts_with('0')
            && token.bytes().all(|b| b.is_ascii_digit()));
    if canonical {
        token.parse().ok()
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_tilde_before_slash() {
        let mut p = String::new();
        push_name(&mut p, "~1");
        assert_eq!(p, "/~01");
    }

    #[test]
    fn empty_name_is_an_empty_token() {
        let mut p = String::new();
        push_name(&mut p, "");
        push_index(&mut p, 0);
        assert_eq!(p, "//0");
    }

    #[test]
    fn tokens_unescape_and_reject_bad_escapes() {
        assert_eq!(tokens(""), Some(vec![]));
        assert_eq!(
            tokens("/a~1b/~0/"),
            Some(vec!["a/b".into(), "~".into(), String::new()])
        );
        assert_eq!(tokens("a"), None);
        assert_eq!(tokens("/a~2"), None);
        assert_eq!(tokens("/a~"), None);
    }

    #[test]
    fn array_indices_are_canonical() {
        assert_eq!(array_index("0"), Some(0));
        assert_eq!(array_index("12"), Some(12));
        for bad in ["", "01", "-", "+1", "1a", "-1"] {
            assert_eq!(array_index(bad), None, "{bad}");
        }
    }
}
