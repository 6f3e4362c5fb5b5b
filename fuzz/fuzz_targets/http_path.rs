//! What `serve` reads from a request line and from its configuration before it forwards
//! anything: a request path (`jsongate::http::normalize_path`) and an upstream URL
//! (`jsongate::http::parse_upstream`), with arbitrary text. Checks: no panic; a normalised path
//! starts with `/`, has no `.` or `..` segment (nor one that reads so before a `;`), no
//! backslash, no ASCII control character, no `%2F`/`%5C` and no escape of an unreserved character,
//! and normalising it again gives it back unchanged; an accepted upstream has a host, a non-zero
//! port and a base path starting with `/`, with no query or fragment.
#![no_main]
use jsongate::http::{normalize_path, parse_upstream};
use libfuzzer_sys::fuzz_target;

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(path) = normalize_path(text) {
        assert!(path.starts_with('/'), "{text:?} -> {path:?}");
        for seg in path[1..].split('/') {
            let head = seg.split(';').next().unwrap_or(seg);
            assert!(head != "." && head != "..", "{text:?} -> {path:?}");
        }
        assert!(
            !path.contains('\\') && !path.bytes().any(|b| b.is_ascii_control()),
            "{text:?} -> {path:?}"
        );
        let b = path.as_bytes();
        for (at, _) in path.match_indices('%') {
            let v = hex(b[at + 1]).unwrap() * 16 + hex(b[at + 2]).unwrap();
            assert!(
                !matches!(v, b'/' | b'\\') && !(v.is_ascii_alphanumeric() || b"-._~".contains(&v)),
                "{text:?} -> {path:?}"
            );
            assert!(
                path[at + 1..at + 3]
                    .bytes()
                    .all(|c| !c.is_ascii_lowercase()),
                "{text:?} -> {path:?}"
            );
        }
        assert_eq!(
            normalize_path(&path).as_deref(),
            Ok(path.as_str()),
            "not idempotent on {text:?}"
        );
    }
    if let Ok(up) = parse_upstream(text) {
        let (host, port) = up.authority.rsplit_once(':').expect("host:port");
        assert!(!host.is_empty(), "{text:?} -> {up:?}");
        assert!(
            port.parse::<u16>().is_ok_and(|p| p != 0),
            "{text:?} -> {up:?}"
        );
        assert!(
            up.path.starts_with('/') && !up.path.contains(['?', '#']),
            "{text:?} -> {up:?}"
        );
    }
});
