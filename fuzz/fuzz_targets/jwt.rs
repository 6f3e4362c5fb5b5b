//! The bearer-token checks with arbitrary bytes; the first byte picks what the rest is.
//! 0: a token, verified against the committed test JWKS (`fixtures/auth/jwks.json`). 1: a
//! JWKS document, a PEM key file, and the DER of a public key inside a PEM block. 2: `header NUL claims`, signed with the committed Ed25519 test key, so that
//! the claim checks are reached. 3: a token endpoint's answer (the front's own OAuth client
//! credentials grant): an accepted one is a `Bearer` header value of visible ASCII. Checks: no panic; a key set that is read holds 1 to 64 keys;
//! an accepted identity has a usable subject and scope tokens, and (mode 2) claims that
//! serde_json reads as an object with the same `sub`, the configured `iss` and a live `exp`.
#![no_main]
use std::sync::OnceLock;

use aws_lc_rs::signature::Ed25519KeyPair;
use base64::Engine as _;
use jsongate::auth::{Jwks, Verifier};
use libfuzzer_sys::fuzz_target;

const NOW: u64 = 1_750_000_000;
const ISSUER: &str = "https://idp.example";

fn setup() -> &'static (Jwks, Verifier, Ed25519KeyPair) {
    static SETUP: OnceLock<(Jwks, Verifier, Ed25519KeyPair)> = OnceLock::new();
    SETUP.get_or_init(|| {
        (
            Jwks::from_slice(include_bytes!("../../fixtures/auth/jwks.json")).unwrap(),
            Verifier::new(ISSUER, "https://gw.example/mcp"),
            Ed25519KeyPair::from_pkcs8(include_bytes!("../../fixtures/auth/ed25519-test.pk8"))
                .unwrap(),
        )
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let (jwks, verifier, key) = setup();
    let b64 = |b: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(b);
    if mode % 4 == 3 {
        if let Ok((value, _)) = jsongate::http::parse_token_answer(rest) {
            let v = value.to_str().expect("visible ASCII");
            assert!(v.starts_with("Bearer ") && v.len() > 7);
        }
        return;
    }
    let (token, claims) = match mode % 4 {
        0 => (String::from_utf8_lossy(rest).into_owned(), None),
        1 => {
            if let Ok(set) = Jwks::from_slice(rest) {
                assert!((1..=64).contains(&set.len()));
            }
            // The same bytes as a PEM key file (and as base64 of a DER key inside one).
            if let Ok(set) = Jwks::from_key_file(rest) {
                assert!((1..=64).contains(&set.len()));
            }
            let b64 = base64::engine::general_purpose::STANDARD.encode(rest);
            let pem = format!("-----BEGIN PUBLIC KEY-----\n{b64}\n-----END PUBLIC KEY-----\n");
            if let Ok(set) = Jwks::from_pem(pem.as_bytes()) {
                assert_eq!(set.len(), 1);
            }
            return;
        }
        _ => {
            let (header, claims) =
                rest.split_at(rest.iter().position(|&b| b == 0).unwrap_or(rest.len()));
            let claims = claims.get(1..).unwrap_or_default();
            let input = format!("{}.{}", b64(header), b64(claims));
            (
                format!("{input}.{}", b64(key.sign(input.as_bytes()).as_ref())),
                Some(claims),
            )
        }
    };
    let Ok(who) = verifier.verify(&token, jwks, NOW) else {
        return;
    };
    assert!(!who.subject.is_empty() && !who.subject.chars().any(char::is_control));
    assert!(who
        .scopes
        .iter()
        .all(|s| !s.is_empty() && !s.contains([' ', '"', '\\'])));
    if let Some(claims) = claims {
        // serde_json (the oracle) refuses numbers beyond f64 that RFC 8259 allows and the
        // verifier reads as exact text (`1e400` in a claim it does not use): nothing to compare.
        let c: serde_json::Value = match serde_json::from_slice(claims) {
            Ok(c) => c,
            Err(e) if e.to_string().contains("number out of range") => return,
            Err(e) => panic!("accepted claims are not JSON: {e}"),
        };
        assert_eq!(c["sub"].as_str(), Some(who.subject.as_str()));
        assert_eq!(c["iss"].as_str(), Some(ISSUER));
        assert!(c["exp"].as_f64().is_some_and(|exp| exp + 60.0 > NOW as f64));
    }
});
