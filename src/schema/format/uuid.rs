//! `uuid` format: the RFC 4122 (RFC 9562) string representation, `8-4-4-4-12`
//! hexadecimal digits in either case, hyphens required; any version and variant
//! (the nil and max UUIDs included); no `urn:uuid:` prefix or braces.

/// Whether `s` is a hyphenated UUID.
pub(super) fn is_uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::is_uuid;

    #[test]
    fn uuids() {
        assert!(is_uuid("f81d4fae-7dec-11d0-a765-00a0c91e6bf6"));
        assert!(is_uuid("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"));
        assert!(!is_uuid("{f81d4fae-7dec-11d0-a765-00a0c91e6bf6}"));
        assert!(!is_uuid("f81d4fae-7dec-11d0-a765_00a0c91e6bf6"));
        assert!(!is_uuid("f81d4fae-7dec-11d0-a765-00a0c91e6bfé"));
        assert!(!is_uuid("f81d4fae7dec11d0a76500a0c91e6bf6"));
    }
}
