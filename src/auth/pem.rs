//! PEM public keys (RFC 7468) for [`Jwks::from_pem`](super::Jwks::from_pem): the blocks of a
//! text, and the three key shapes read from their DER: X.509 `SubjectPublicKeyInfo` (RFC 5280
//! §4.1.2.7) of `rsaEncryption` (PKCS #1 `RSAPublicKey` inside, RFC 8017 §A.1.1),
//! `id-ecPublicKey` on `prime256v1` (RFC 5480) and `id-Ed25519` (RFC 8410), and a bare PKCS #1
//! `RSAPublicKey`.
//!
//! Written here rather than taken from the `pem`, `spki` and `der` crates: three fixed shapes,
//! read by a strict DER reader (definite, minimal lengths; nothing left over) of a few dozen
//! lines, where the crates would add three dependencies to the `auth` feature for it. The
//! key checks themselves are [`jwk`](super::jwk)'s, so a PEM key and a JWK of the same key are
//! one key.

use base64::Engine as _;

use super::jwk::{ed25519_key, p256_key, rsa_key, PublicKey};
use super::AuthError;

/// One block: its label and its decoded bytes.
pub(crate) struct Block {
    label: String,
    der: Vec<u8>,
}

fn error(message: String) -> AuthError {
    AuthError::new(super::AuthErrorKind::Jwks, message)
}

/// The blocks of `text`, in order (text outside blocks is ignored, as RFC 7468 §2 allows).
pub(crate) fn blocks(text: &str) -> Result<Vec<Block>, AuthError> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("-----BEGIN ") {
        let n = out.len() + 1;
        let after = &rest[at + "-----BEGIN ".len()..];
        // The label ends on its own line, and is what RFC 7468 §3 allows: a malformed BEGIN
        // line never swallows (nor echoes) the key material after it.
        let line = &after[..after.find('\n').unwrap_or(after.len())];
        let label = line
            .find("-----")
            .map(|e| &line[..e])
            .filter(|l| {
                l.len() <= 64
                    && l.bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b' ')
            })
            .ok_or_else(|| error(format!("block {n}: a malformed BEGIN line")))?;
        let end_of_label = label.len();
        let body_and_rest = &after[end_of_label + 5..];
        let end_line = format!("-----END {label}-----");
        let end = body_and_rest
            .find(&end_line)
            .ok_or_else(|| error(format!("block {n}: no END line for its label")))?;
        let body: String = body_and_rest[..end]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body.as_bytes())
            .map_err(|_| error(format!("block {n}: not base64")))?;
        out.push(Block {
            label: label.to_owned(),
            der,
        });
        rest = &body_and_rest[end + end_line.len()..];
    }
    if out.is_empty() {
        return Err(error("no PEM block".to_owned()));
    }
    Ok(out)
}

/// One block's key: `Ok(None)` to skip it (another label, another algorithm), `Err` with the
/// reason it is refused.
pub(crate) fn read_key(block: &Block) -> Result<Option<PublicKey>, &'static str> {
    match block.label.as_str() {
        "PUBLIC KEY" => spki(&block.der),
        "RSA PUBLIC KEY" => pkcs1(&block.der).map(Some),
        l if l.contains("PRIVATE KEY") => Err("a private key is present"),
        "CERTIFICATE" | "X509 CERTIFICATE" | "TRUSTED CERTIFICATE" => {
            Err("a certificate, not a public key (openssl x509 -pubkey -noout gives its key)")
        }
        _ => Ok(None),
    }
}

/// `1.2.840.113549.1.1.1` (`rsaEncryption`).
const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
/// `1.2.840.10045.2.1` (`id-ecPublicKey`).
const EC: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
/// `1.2.840.10045.3.1.7` (`prime256v1`, P-256).
const P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
/// `1.3.101.112` (`id-Ed25519`).
const ED25519: &[u8] = &[0x2b, 0x65, 0x70];

const NOT_DER: &str = "not a DER public key";

/// One DER element: its tag, its content and what follows it. Definite lengths of at most
/// two bytes, minimally encoded (DER); anything else is `None`.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = match first {
        0..=0x7f => (usize::from(first), rest),
        0x81 => {
            let (&b, rest) = rest.split_first()?;
            (b >= 0x80).then_some((usize::from(b), rest))?
        }
        0x82 => {
            let (b, rest) = (rest.get(..2)?, rest.get(2..)?);
            let len = usize::from(b[0]) << 8 | usize::from(b[1]);
            (len >= 0x100).then_some((len, rest))?
        }
        _ => return None,
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

/// The content of the one element `input` is, when its tag is `tag`.
fn only(input: &[u8], tag: u8) -> Option<&[u8]> {
    match tlv(input)? {
        (t, content, []) if t == tag => Some(content),
        _ => None,
    }
}

/// `SubjectPublicKeyInfo ::= SEQUENCE { algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING }`
fn spki(der: &[u8]) -> Result<Option<PublicKey>, &'static str> {
    let seq = only(der, 0x30).ok_or(NOT_DER)?;
    let (t, alg, rest) = tlv(seq).ok_or(NOT_DER)?;
    let bits = only(rest, 0x03).filter(|_| t == 0x30).ok_or(NOT_DER)?;
    // A key is a whole number of bytes: no unused bits.
    let Some((0, key)) = bits.split_first() else {
        return Err(NOT_DER);
    };
    let (t, oid, params) = tlv(alg).ok_or(NOT_DER)?;
    if t != 0x06 {
        return Err(NOT_DER);
    }
    match oid {
        RSA if params.is_empty() || params == [0x05, 0x00] => pkcs1(key).map(Some),
        EC => match only(params, 0x06) {
            Some(P256) => p256_key(key).map(Some),
            Some(_) => Ok(None), // another curve
            None => Err(NOT_DER),
        },
        ED25519 if params.is_empty() => ed25519_key(key).map(Some),
        RSA | ED25519 => Err(NOT_DER),
        _ => Ok(None), // another algorithm
    }
}

/// `RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }`
fn pkcs1(der: &[u8]) -> Result<PublicKey, &'static str> {
    let seq = only(der, 0x30).ok_or(NOT_DER)?;
    let (t, n, rest) = tlv(seq).ok_or(NOT_DER)?;
    let e = only(rest, 0x02).filter(|_| t == 0x02).ok_or(NOT_DER)?;
    // A positive INTEGER: no sign bit set.
    if n.first().is_none_or(|b| b & 0x80 != 0) || e.first().is_none_or(|b| b & 0x80 != 0) {
        return Err(NOT_DER);
    }
    rsa_key(n, e)
}

#[cfg(test)]
mod tests {
    use super::super::{testkit, Alg, Jwks, Verifier};
    use super::*;

    fn pem(label: &str, der: &[u8]) -> String {
        let b64 = base64::engine::general_purpose::STANDARD.encode(der);
        let lines: Vec<&str> = b64
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            lines.join("\n")
        )
    }

    #[test]
    fn the_committed_pem_file_holds_the_committed_keys() {
        let text = std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/auth/keys.pem"),
        )
        .unwrap();
        let from_pem = Jwks::from_key_file(&text).unwrap();
        let committed = testkit::Keys::committed();
        let from_jwks = Jwks::from_slice(committed.jwks().as_bytes()).unwrap();
        let keys = |j: &Jwks| j.keys().iter().map(|k| k.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&from_pem), keys(&from_jwks));
        // A token of each algorithm verifies against the PEM keys, its kid notwithstanding.
        let v = Verifier::new("https://idp.example", "api");
        for alg in [Alg::Rs256, Alg::Es256, Alg::EdDsa] {
            let claims = format!(
                r#"{{"iss":"https://idp.example","aud":"api","sub":"u","exp":{},"iat":1}}"#,
                u32::MAX
            );
            let token = committed.token(alg, &claims);
            assert_eq!(
                v.verify(&token, &from_pem, 1000).unwrap().subject,
                "u",
                "{alg:?}"
            );
        }
    }

    #[test]
    fn pkcs1_and_spki_rsa_are_one_key_and_bad_blocks_are_named() {
        let keys = testkit::keys();
        let pkcs1_der = keys.rsa_public_der();
        let a = Jwks::from_pem(pem("RSA PUBLIC KEY", &pkcs1_der).as_bytes()).unwrap();
        assert_eq!(a.len(), 1);
        for (text, why) in [
            ("", "no PEM block"),
            (
                "-----BEGIN PUBLIC KEY-----\nAAAA\n",
                "block 1: no END line for its label",
            ),
            (
                "-----BEGIN PRIVATE KEY----\nMC4CAQAw\n-----END PRIVATE KEY-----",
                "block 1: a malformed BEGIN line",
            ),
            (
                "-----BEGIN PUBLIC KEY-----\n!!\n-----END PUBLIC KEY-----",
                "block 1: not base64",
            ),
            (
                "-----BEGIN PUBLIC KEY-----\nMAA=\n-----END PUBLIC KEY-----",
                "block 1: not a DER public key",
            ),
            (
                "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----",
                "block 1: a certificate",
            ),
        ] {
            let e = Jwks::from_pem(text.as_bytes()).unwrap_err();
            assert!(e.message().starts_with(why), "{text:?}: {}", e.message());
        }
        // Another label is skipped; with a usable key beside it, the set is usable.
        let two = format!("{}{}", pem("X", b"x"), pem("RSA PUBLIC KEY", &pkcs1_der));
        let j = Jwks::from_pem(two.as_bytes()).unwrap();
        assert_eq!((j.len(), j.skipped()), (1, 1));
        // Two keys of one algorithm cannot be told apart without key ids.
        let twice = format!("{0}{0}", pem("RSA PUBLIC KEY", &pkcs1_der));
        let e = Jwks::from_pem(twice.as_bytes()).unwrap_err();
        assert!(
            e.message().starts_with("block 2: a second RS256 key"),
            "{}",
            e.message()
        );
        // Truncated or padded DER never panics and is refused.
        for cut in 0..pkcs1_der.len() {
            assert!(Jwks::from_pem(pem("RSA PUBLIC KEY", &pkcs1_der[..cut]).as_bytes()).is_err());
        }
        let mut long = pkcs1_der.clone();
        long.push(0);
        assert!(Jwks::from_pem(pem("RSA PUBLIC KEY", &long).as_bytes()).is_err());
    }
}
