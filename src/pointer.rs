//! JSON Pointer (RFC 6901) building and escaping.
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
pub fn push_index(pointer: &mut String, index: u64) {
    // Writing to a String cannot fail.
    let _ = write!(pointer, "/{index}");
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
}
