//! JSON Web Key Sets (RFC 7517): the public keys an authorization server signs tokens with.
//!
//! This module owns reading a JWKS document into the keys [`jwt`](super::jwt) may verify
//! with: RSA (2048 to 8192 bits), EC P-256 and OKP Ed25519 signing keys. It is bounded (a
//! document of at most [`MAX_JWKS_BYTES`], at most [`MAX_JWKS_KEYS`] keys) and it refuses
//! what it cannot trust: a key carrying private members (someone published a private key),
//! a modulus or point of the wrong size. Such a key is refused, not used, and its reason kept
//! for the operator; keys of types or curves it does not know, or meant for encryption, are
//! skipped as RFC 7517 §5 asks, and counted. A set left with no usable key is an error. It
//! does not fetch anything.

use crate::json::Value;
use crate::{ErrorKind, Limits};

use super::jwt::Alg;
use super::{b64url, AuthError, AuthErrorKind};

/// The largest JWKS document read: 64 KiB.
///
/// # Example
/// ```
/// use jsongate::auth::{jwk::MAX_JWKS_BYTES, Jwks};
/// let big = format!(r#"{{"keys":[],"pad":"{}"}}"#, "x".repeat(MAX_JWKS_BYTES));
/// assert!(Jwks::from_slice(big.as_bytes()).is_err());
/// ```
pub const MAX_JWKS_BYTES: usize = 64 * 1024;

/// The most keys (and items of any array) a JWKS document may hold: 64.
///
/// # Example
/// ```
/// use jsongate::auth::{jwk::MAX_JWKS_KEYS, Jwks};
/// let many = format!(r#"{{"keys":[{}]}}"#, vec!["{}"; MAX_JWKS_KEYS + 1].join(","));
/// assert_eq!(Jwks::from_slice(many.as_bytes()).unwrap_err().message(), "more than 64 keys");
/// ```
pub const MAX_JWKS_KEYS: usize = 64;

/// Members that only a private key has (RFC 7518 §6.2.2, §6.3.2; RFC 8037 §2; `k` of a
/// symmetric key).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// A set of public signing keys, ready to verify with. Cheap to share behind an `Arc`.
///
/// # Example
/// ```
/// use jsongate::auth::Jwks;
/// let x = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"; // RFC 8037 §A.2
/// let doc = format!(r#"{{"keys":[
///     {{"kty":"OKP","crv":"Ed25519","x":"{x}","kid":"ed-1","use":"sig"}},
///     {{"kty":"EC","crv":"P-384","x":"","y":""}},
///     {{"kty":"RSA","use":"enc","n":"","e":"AQAB"}}]}}"#);
/// let jwks = Jwks::from_slice(doc.as_bytes()).unwrap();
/// assert_eq!((jwks.len(), jwks.skipped()), (1, 2));
/// assert_eq!(jwks.kids().collect::<Vec<_>>(), [Some("ed-1")]);
/// assert!(jwks.refusals().is_empty());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Jwks {
    keys: Vec<Jwk>,
    skipped: usize,
    refusals: Vec<String>,
    /// Read from PEM: the keys have no key ids, so a token's `kid` selects nothing.
    pub(crate) no_kids: bool,
}

/// One usable public key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Jwk {
    pub(crate) kid: Option<String>,
    pub(crate) key: PublicKey,
}

/// The key material, in the forms `aws-lc-rs` verifies with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PublicKey {
    /// Modulus and exponent, big-endian, without leading zeros.
    Rsa { n: Vec<u8>, e: Vec<u8> },
    /// The uncompressed point `0x04 ‖ x ‖ y`.
    P256(Vec<u8>),
    /// The 32-byte public key.
    Ed25519(Vec<u8>),
}

impl PublicKey {
    /// The one algorithm this key verifies.
    pub(crate) fn alg(&self) -> Alg {
        match self {
            PublicKey::Rsa { .. } => Alg::Rs256,
            PublicKey::P256(_) => Alg::Es256,
            PublicKey::Ed25519(_) => Alg::EdDsa,
        }
    }
}

impl Jwks {
    /// Reads a JWKS document (`{"keys":[…]}`).
    ///
    /// A key is used when it is an RSA key of 2048 to 8192 bits, an EC P-256 key or an OKP
    /// Ed25519 key, has no `use` or `"use":"sig"`, no `key_ops` or ones including
    /// `"verify"`, and no `alg` or the one algorithm its type verifies (`RS256`, `ES256`,
    /// `EdDSA`). Keys of another type, curve or algorithm, or for encryption, are skipped
    /// and counted ([`skipped`](Jwks::skipped)). A key that is not an object, has a private
    /// member (`d`, `p`, `q`, `dp`, `dq`, `qi`, `oth`, `k`), a member of the wrong type, bad
    /// base64url, a modulus outside 2048..=8192 bits, an unusable exponent, coordinates or a
    /// public key of the wrong length, or an `alg` that contradicts its type is refused:
    /// not used, its reason kept in [`refusals`](Jwks::refusals).
    ///
    /// # Errors
    /// [`AuthErrorKind::Jwks`]: not JSON within the bounds (64 KiB, 64 items per array, a
    /// duplicate member), no `keys` array, or no usable key (the message is then the first
    /// refusal's, if any).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// let leaked = r#"{"keys":[{"kty":"OKP","crv":"Ed25519",
    ///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo",
    ///     "d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"}]}"#;
    /// let e = Jwks::from_slice(leaked.as_bytes()).unwrap_err();
    /// assert_eq!(e.message(), "keys/0: a private key member is present");
    /// ```
    pub fn from_slice(bytes: &[u8]) -> Result<Jwks, AuthError> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(jwks_error("JWKS larger than 64 KiB"));
        }
        let limits = Limits::new()
            .max_bytes(MAX_JWKS_BYTES as u64)
            .max_depth(8)
            .max_items(MAX_JWKS_KEYS as u64)
            .max_members(256)
            .max_name_bytes(256)
            .max_string_bytes(16 * 1024);
        let doc = Value::parse(bytes, limits).map_err(|e| {
            jwks_error(match e.kind() {
                ErrorKind::TooManyItems { .. } if e.pointer() == "/keys" => "more than 64 keys",
                ErrorKind::DuplicateName => "duplicate member name",
                _ => "JWKS is not valid JSON within its limits",
            })
        })?;
        let keys = doc
            .get("keys")
            .and_then(Value::as_array)
            .ok_or_else(|| jwks_error("no \"keys\" array"))?;
        let mut jwks = Jwks::default();
        for (i, key) in keys.iter().enumerate() {
            match read_key(key) {
                Ok(Some(k)) => jwks.keys.push(k),
                Ok(None) => jwks.skipped += 1,
                Err(why) => jwks.refusals.push(format!("keys/{i}: {why}")),
            }
        }
        if jwks.keys.is_empty() {
            return Err(match jwks.refusals.into_iter().next() {
                Some(first) => jwks_error(first),
                None => jwks_error("no usable signing key"),
            });
        }
        Ok(jwks)
    }

    /// Reads a key file: a JWKS document ([`from_slice`](Self::from_slice)) when its first
    /// non-blank character is `{`, else PEM public keys ([`from_pem`](Self::from_pem)).
    ///
    /// # Errors
    /// As the reader it chose.
    pub fn from_key_file(bytes: &[u8]) -> Result<Jwks, AuthError> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'{') {
            Jwks::from_slice(bytes)
        } else {
            Jwks::from_pem(bytes)
        }
    }

    /// Reads PEM public keys (RFC 7468): `PUBLIC KEY` blocks (X.509 `SubjectPublicKeyInfo` of
    /// an RSA, EC P-256 or Ed25519 key) and `RSA PUBLIC KEY` blocks (PKCS #1), as many as
    /// [`MAX_JWKS_KEYS`], in at most [`MAX_JWKS_BYTES`]. Such keys have no key id: a token's
    /// `kid` selects nothing among them, the algorithm does (see
    /// [`Verifier::verify`](super::Verifier::verify)). A private key block is refused (its
    /// reason kept, as for a JWKS key with private members), and so is a certificate (give
    /// its public key: `openssl x509 -pubkey -noout`); other labels and key algorithms are
    /// skipped and counted.
    ///
    /// # Errors
    /// [`AuthErrorKind::Jwks`]: too large, a block that is not base64 or not DER of these
    /// shapes, a block without its end line, or no usable key.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// // RFC 8410 §10.1: an Ed25519 public key.
    /// let pem = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=\n-----END PUBLIC KEY-----\n";
    /// assert_eq!(Jwks::from_pem(pem.as_bytes())?.len(), 1);
    /// let private = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC\n-----END PRIVATE KEY-----\n";
    /// assert_eq!(Jwks::from_pem(private.as_bytes()).unwrap_err().message(), "block 1: a private key is present");
    /// # Ok::<(), jsongate::auth::AuthError>(())
    /// ```
    pub fn from_pem(bytes: &[u8]) -> Result<Jwks, AuthError> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(jwks_error("key file larger than 64 KiB"));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| jwks_error("PEM is not UTF-8 text"))?;
        let mut jwks = Jwks {
            no_kids: true,
            ..Jwks::default()
        };
        for (i, block) in super::pem::blocks(text)?.into_iter().enumerate() {
            if i >= MAX_JWKS_KEYS {
                return Err(jwks_error("more than 64 keys"));
            }
            match super::pem::read_key(&block) {
                // Without key ids, two keys of one algorithm could not be told apart.
                Ok(Some(key)) if jwks.keys.iter().any(|k| k.key.alg() == key.alg()) => {
                    return Err(jwks_error(format!(
                        "block {}: a second {} key (PEM keys have no key id to choose \
                         between them; use a JWKS with kids)",
                        i + 1,
                        key.alg().name()
                    )));
                }
                Ok(Some(key)) => jwks.keys.push(Jwk { kid: None, key }),
                Ok(None) => jwks.skipped += 1,
                Err(why) => jwks.refusals.push(format!("block {}: {why}", i + 1)),
            }
        }
        if jwks.keys.is_empty() {
            return Err(match jwks.refusals.into_iter().next() {
                Some(first) => jwks_error(first),
                None => jwks_error("no usable signing key"),
            });
        }
        Ok(jwks)
    }

    /// The number of usable keys (zero only for [`Jwks::default()`], the empty set a front
    /// holds until it has fetched one).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// assert_eq!(Jwks::default().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether there is no usable key.
    ///
    /// # Example
    /// ```
    /// assert!(jsongate::auth::Jwks::default().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many keys of the document were skipped: another key type, curve or algorithm,
    /// or not for signatures.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// let doc = r#"{"keys":[{"kty":"oct-ish"},{"kty":"OKP","crv":"Ed25519",
    ///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
    /// assert_eq!(Jwks::from_slice(doc.as_bytes()).unwrap().skipped(), 1);
    /// ```
    pub fn skipped(&self) -> usize {
        self.skipped
    }

    /// Why keys of the document were refused (`"keys/2: a private key member is present"`),
    /// for the operator's log: fixed phrases and the key's index, never a member's value.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// let doc = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"AAAA"},{"kty":"OKP",
    ///     "crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
    /// let jwks = Jwks::from_slice(doc.as_bytes()).unwrap();
    /// assert_eq!(jwks.refusals(), ["keys/0: Ed25519 public key is not 32 bytes"]);
    /// ```
    pub fn refusals(&self) -> &[String] {
        &self.refusals
    }

    /// The key ids of the usable keys, in document order (`None` for a key without one).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Jwks;
    /// let doc = r#"{"keys":[{"kty":"OKP","crv":"Ed25519",
    ///     "x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
    /// assert_eq!(Jwks::from_slice(doc.as_bytes()).unwrap().kids().next(), Some(None));
    /// ```
    pub fn kids(&self) -> impl Iterator<Item = Option<&str>> {
        self.keys.iter().map(|k| k.kid.as_deref())
    }

    pub(crate) fn keys(&self) -> &[Jwk] {
        &self.keys
    }
}

fn jwks_error(message: impl Into<std::borrow::Cow<'static, str>>) -> AuthError {
    AuthError::new(AuthErrorKind::Jwks, message)
}

/// One key: `Ok(None)` when it is to be skipped, `Err` with the reason it is refused.
fn read_key(key: &Value) -> Result<Option<Jwk>, &'static str> {
    let members = key.as_object().ok_or("not an object")?;
    if members
        .iter()
        .any(|(name, _)| PRIVATE_MEMBERS.contains(&name.as_str()))
    {
        return Err("a private key member is present");
    }
    let text = |name: &str| -> Result<Option<&str>, &'static str> {
        match key.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(_) => Err("a member that must be a string is not one"),
        }
    };
    let kty = text("kty")?.ok_or("no \"kty\"")?;
    let kid = text("kid")?.map(str::to_owned);
    if text("use")?.is_some_and(|u| u != "sig") {
        return Ok(None);
    }
    if let Some(ops) = key.get("key_ops") {
        let ops = ops.as_array().ok_or("\"key_ops\" is not an array")?;
        if !ops.iter().any(|o| o.as_str() == Some("verify")) {
            return Ok(None);
        }
    }
    let alg = match (kty, text("crv")?) {
        ("RSA", _) => Alg::Rs256,
        ("EC", Some("P-256")) => Alg::Es256,
        ("OKP", Some("Ed25519")) => Alg::EdDsa,
        _ => return Ok(None),
    };
    match text("alg")? {
        None => {}
        Some(a) if a == alg.name() => {}
        // Pinned to an algorithm this crate does not verify (PS256, RS512, ES256K, …).
        Some(a) if Alg::from_name(a).is_none() => return Ok(None),
        Some(_) => return Err("\"alg\" does not match the key type"),
    }
    let bytes = |name: &str| -> Result<Vec<u8>, &'static str> {
        b64url(text(name)?.ok_or("a required member is missing")?)
            .ok_or("a member is not base64url")
    };
    let key = match alg {
        Alg::Rs256 => rsa_key(&bytes("n")?, &bytes("e")?)?,
        Alg::Es256 => {
            let (x, y) = (bytes("x")?, bytes("y")?);
            if x.len() != 32 || y.len() != 32 {
                return Err("P-256 coordinates are not 32 bytes each");
            }
            let mut point = Vec::with_capacity(65);
            point.push(4);
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            p256_key(&point)?
        }
        Alg::EdDsa => ed25519_key(&bytes("x")?)?,
    };
    Ok(Some(Jwk { kid, key }))
}

/// An RSA key from its modulus and exponent (big-endian, leading zeros allowed), when the
/// verifier can use it: 2048 to 8192 bits, an odd exponent from 3 to 2^33 - 1.
pub(crate) fn rsa_key(n: &[u8], e: &[u8]) -> Result<PublicKey, &'static str> {
    let n = strip_zeros(n.to_vec());
    let e = strip_zeros(e.to_vec());
    // An empty modulus is 0 bits (not an underflow: the fuzzer found that one).
    let bits = (n.len() * 8).saturating_sub(n.first().map_or(0, |b| b.leading_zeros() as usize));
    if !(2048..=8192).contains(&bits) {
        return Err("RSA modulus is not 2048 to 8192 bits");
    }
    let exponent = e.iter().fold(0u64, |v, &b| (v << 8) | u64::from(b));
    if e.len() > 5 || !(3..1 << 33).contains(&exponent) || exponent % 2 == 0 {
        return Err("RSA exponent is not usable");
    }
    Ok(PublicKey::Rsa { n, e })
}

/// A P-256 key from its uncompressed point (`0x04 ‖ x ‖ y`).
pub(crate) fn p256_key(point: &[u8]) -> Result<PublicKey, &'static str> {
    if point.len() != 65 || point[0] != 4 {
        return Err("P-256 point is not 65 bytes, uncompressed");
    }
    Ok(PublicKey::P256(point.to_vec()))
}

/// An Ed25519 key from its 32 bytes.
pub(crate) fn ed25519_key(x: &[u8]) -> Result<PublicKey, &'static str> {
    if x.len() != 32 {
        return Err("Ed25519 public key is not 32 bytes");
    }
    Ok(PublicKey::Ed25519(x.to_vec()))
}

fn strip_zeros(mut v: Vec<u8>) -> Vec<u8> {
    let zeros = v.iter().take_while(|&&b| b == 0).count();
    v.drain(..zeros);
    v
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{self, b64};
    use super::*;

    fn refusal(doc: &str) -> String {
        let e = Jwks::from_slice(doc.as_bytes()).unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::Jwks);
        e.message().to_owned()
    }

    #[test]
    fn an_empty_or_zero_rsa_modulus_is_refused_not_a_panic() {
        // Found by the `jwt` fuzz target: `n: ""` underflowed the bit count (debug builds
        // panicked; release builds read a huge modulus size and refused by luck).
        for n in ["", "AA", "AAAA"] {
            let doc = format!(r#"{{"keys":[{{"kty":"RSA","n":"{n}","e":"AQAB"}}]}}"#);
            assert!(refusal(&doc).contains("RSA modulus"), "{n}");
        }
    }

    #[test]
    fn reads_the_three_key_types_with_their_algorithms() {
        let keys = testkit::keys();
        let jwks = Jwks::from_slice(keys.jwks().as_bytes()).unwrap();
        assert_eq!(jwks.len(), 3);
        assert_eq!(
            jwks.kids().collect::<Vec<_>>(),
            [Some("rsa-1"), Some("ec-1"), Some("ed-1")]
        );
        let algs: Vec<_> = jwks.keys().iter().map(|k| k.key.alg()).collect();
        assert_eq!(algs, [Alg::Rs256, Alg::Es256, Alg::EdDsa]);
        match &jwks.keys()[1].key {
            PublicKey::P256(p) => assert_eq!((p.len(), p[0]), (65, 4)),
            other => panic!("{other:?}"),
        }
        assert_eq!(jwks.skipped(), 0);
    }

    #[test]
    fn the_committed_fixture_holds_the_committed_keys() {
        let text = include_str!("../../fixtures/auth/jwks.json");
        let want = testkit::Keys::committed().jwks();
        assert_eq!(
            Jwks::from_slice(text.as_bytes()),
            Jwks::from_slice(want.as_bytes()),
            "fixtures/auth/jwks.json should be:\n{want}"
        );
    }

    #[test]
    fn unknown_types_curves_uses_and_algs_are_skipped_and_counted() {
        let ed = testkit::keys().ed_jwk("ed-1", "");
        let doc = format!(
            r#"{{"keys":[{ed},
              {{"kty":"oct-ish"}},
              {{"kty":"EC","crv":"P-521","x":"AA","y":"AA"}},
              {{"kty":"OKP","crv":"X25519","x":"AA"}},
              {ed_enc},
              {ed_ops},
              {ed_ps}]}}"#,
            ed_enc = testkit::keys().ed_jwk("e", r#","use":"enc""#),
            ed_ops = testkit::keys().ed_jwk("o", r#","key_ops":["encrypt"]"#),
            ed_ps = testkit::keys().ed_jwk("p", r#","alg":"Ed448""#),
        );
        let jwks = Jwks::from_slice(doc.as_bytes()).unwrap();
        assert_eq!((jwks.len(), jwks.skipped()), (1, 6));
        let verify_ops = testkit::keys().ed_jwk("v", r#","key_ops":["verify"],"alg":"EdDSA""#);
        let jwks = Jwks::from_slice(format!(r#"{{"keys":[{verify_ops}]}}"#).as_bytes()).unwrap();
        assert_eq!(jwks.len(), 1);
    }

    #[test]
    fn a_set_with_no_usable_key_is_refused() {
        assert_eq!(refusal(r#"{"keys":[]}"#), "no usable signing key");
        assert_eq!(
            refusal(r#"{"keys":[{"kty":"oct"}]}"#),
            "no usable signing key"
        );
        assert_eq!(refusal(r#"{"kez":[]}"#), "no \"keys\" array");
        assert_eq!(refusal(r"[]"), "no \"keys\" array");
        assert_eq!(refusal(r#"{"keys":[1]}"#), "keys/0: not an object");
    }

    #[test]
    fn a_key_with_private_members_is_refused() {
        let keys = testkit::keys();
        for member in ["d", "p", "q", "dp", "dq", "qi", "oth", "k"] {
            let leaked = keys.ed_jwk("ed-1", &format!(r#","{member}":"AAAA""#));
            let doc = format!(r#"{{"keys":[{},{leaked}]}}"#, keys.rsa_jwk("rsa-1", ""));
            let jwks = Jwks::from_slice(doc.as_bytes()).unwrap();
            assert_eq!(jwks.kids().collect::<Vec<_>>(), [Some("rsa-1")], "{member}");
            assert_eq!(jwks.refusals(), ["keys/1: a private key member is present"]);
            assert_eq!(
                refusal(&format!(r#"{{"keys":[{leaked}]}}"#)),
                "keys/0: a private key member is present",
                "{member}"
            );
        }
    }

    #[test]
    fn bounds_are_enforced() {
        let ed = testkit::keys().ed_jwk("k", "");
        let many = vec![ed.as_str(); MAX_JWKS_KEYS + 1].join(",");
        assert_eq!(
            refusal(&format!(r#"{{"keys":[{many}]}}"#)),
            "more than 64 keys"
        );
        let just = vec![ed.as_str(); MAX_JWKS_KEYS].join(",");
        assert_eq!(
            Jwks::from_slice(format!(r#"{{"keys":[{just}]}}"#).as_bytes())
                .unwrap()
                .len(),
            64
        );
        let pad = "x".repeat(MAX_JWKS_BYTES);
        assert_eq!(
            refusal(&format!(r#"{{"keys":[{ed}],"pad":"{pad}"}}"#)),
            "JWKS larger than 64 KiB"
        );
        assert_eq!(
            refusal(&format!(r#"{{"keys":[{ed}],"keys":[]}}"#)),
            "duplicate member name"
        );
        assert_eq!(
            refusal(r#"{"keys":[{"kty":"RSA"}"#),
            "JWKS is not valid JSON within its limits"
        );
    }

    #[test]
    fn key_material_is_checked() {
        let keys = testkit::keys();
        // P-256 coordinates of 31 and 33 bytes.
        let short = b64(&[7; 31]);
        let long = b64(&[7; 33]);
        let full = b64(&[7; 32]);
        for (x, y) in [(&short, &full), (&full, &long)] {
            let doc = format!(r#"{{"keys":[{{"kty":"EC","crv":"P-256","x":"{x}","y":"{y}"}}]}}"#);
            assert_eq!(
                refusal(&doc),
                "keys/0: P-256 coordinates are not 32 bytes each"
            );
        }
        let doc = format!(r#"{{"keys":[{{"kty":"OKP","crv":"Ed25519","x":"{short}"}}]}}"#);
        assert_eq!(refusal(&doc), "keys/0: Ed25519 public key is not 32 bytes");
        // RSA of 2047 bits, of 1024 bits, and a leading zero byte tolerated on 2048.
        let mut n2047 = vec![0x7f];
        n2047.extend_from_slice(&[0xff; 255]);
        let mut n2048 = vec![0, 0xc1];
        n2048.extend_from_slice(&[0xff; 255]);
        for (n, ok) in [(n2047, false), (vec![0xff; 128], false), (n2048, true)] {
            let doc = format!(
                r#"{{"keys":[{{"kty":"RSA","n":"{}","e":"AQAB"}}]}}"#,
                b64(&n)
            );
            match Jwks::from_slice(doc.as_bytes()) {
                Ok(j) => assert!(ok && j.len() == 1),
                Err(e) => {
                    assert!(!ok);
                    assert_eq!(e.message(), "keys/0: RSA modulus is not 2048 to 8192 bits");
                }
            }
        }
        for e in ["AQ", "Ag", "AAAB", "AQAAAAAB"] {
            let doc = keys
                .rsa_jwk("r", "")
                .replace("\"AQAB\"", &format!("\"{e}\""));
            assert_eq!(
                refusal(&format!(r#"{{"keys":[{doc}]}}"#)),
                "keys/0: RSA exponent is not usable",
                "{e}"
            );
        }
        let padded = keys.ed_jwk("e", "").replace("\",\"kid", "=\",\"kid");
        assert_eq!(
            refusal(&format!(r#"{{"keys":[{padded}]}}"#)),
            "keys/0: a member is not base64url"
        );
        let wrong_alg = keys.rsa_jwk("r", r#","alg":"ES256""#);
        assert_eq!(
            refusal(&format!(r#"{{"keys":[{wrong_alg}]}}"#)),
            "keys/0: \"alg\" does not match the key type"
        );
        let kid_number = r#"{"keys":[{"kty":"RSA","kid":7}]}"#;
        assert_eq!(
            refusal(kid_number),
            "keys/0: a member that must be a string is not one"
        );
        assert_eq!(
            refusal(r#"{"keys":[{"kty":"RSA","e":"AQAB"}]}"#),
            "keys/0: a required member is missing"
        );
    }
}
