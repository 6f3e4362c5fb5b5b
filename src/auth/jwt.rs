//! JWT access tokens (RFC 7519) in JWS compact form (RFC 7515), checked for one protected
//! resource: the OAuth 2.1 resource-server side of MCP authorization.
//!
//! This module owns [`Verifier`]: the configuration of what a valid token is here (issuer,
//! audience per RFC 8707, algorithms, leeway, required scopes, size) and the one function
//! that checks a token against a [`Jwks`]. The signature is verified, with `aws-lc-rs`, before any
//! claim is read; the header is read first only to learn `alg` and `kid`. It must not fetch
//! keys, read the clock, or put token text into an error.
//!
//! Refused, with the kind each gets: a token longer than the limit (`TooLong`); not exactly
//! three base64url segments, padding, bad base64url, a header or claims set that is not a
//! JSON object within small limits or has a duplicate member (`MalformedToken`); `alg` of
//! `none`, `HS*` (the RSA-public-key-as-HMAC-secret confusion), not allowed, or not the
//! selected key's (`Algorithm`); a `crit` header (`Critical`); no fitting key, or no `kid`
//! and more than one fitting key (`UnknownKey`; PEM keys have no ids, and a token's `kid` is
//! not used with them); a signature that does not verify
//! (`Signature`); `exp` missing, not a time, or past (`MalformedToken`, `Expired`); `nbf` or
//! `iat` in the future (`NotYetValid`); `iss`, `aud` (`Issuer`, `Audience`); `sub` missing
//! or unusable (`MalformedToken`); a required scope not granted (`InsufficientScope`).

use aws_lc_rs::signature::{
    RsaPublicKeyComponents, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED, ED25519,
    RSA_PKCS1_2048_8192_SHA256,
};

use crate::json::Value;
use crate::{ErrorKind, Limits};

use super::jwk::{Jwk, PublicKey};
use super::{b64url, scope_char, usable_name, AuthError, AuthErrorKind, Identity, Jwks, Via};

/// Default clock leeway for `exp`, `nbf` and `iat`: 60 seconds.
///
/// # Example
/// ```
/// use jsongate::auth::{Verifier, DEFAULT_LEEWAY_S};
/// assert_eq!(Verifier::new("https://idp.example", "https://gw.example/mcp").get_leeway(), DEFAULT_LEEWAY_S);
/// ```
pub const DEFAULT_LEEWAY_S: u64 = 60;

/// Default largest token accepted: 8 KiB.
///
/// # Example
/// ```
/// use jsongate::auth::{Verifier, DEFAULT_MAX_TOKEN_BYTES};
/// let v = Verifier::new("https://idp.example", "https://gw.example/mcp");
/// assert_eq!(v.get_max_token_bytes(), DEFAULT_MAX_TOKEN_BYTES);
/// ```
pub const DEFAULT_MAX_TOKEN_BYTES: usize = 8 * 1024;

/// The latest time a claim may name: 9999-12-31T23:59:59Z.
const MAX_TIME: u64 = 253_402_300_799;

/// A JWS signature algorithm this crate verifies.
///
/// # Example
/// ```
/// use jsongate::auth::Alg;
/// assert_eq!(Alg::from_name("ES256"), Some(Alg::Es256));
/// assert_eq!(Alg::EdDsa.name(), "EdDSA");
/// assert_eq!(Alg::from_name("HS256"), None);
/// assert_eq!(Alg::from_name("none"), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Alg {
    /// RSASSA-PKCS1-v1_5 with SHA-256, 2048 to 8192-bit keys (RFC 7518 §3.3).
    Rs256,
    /// ECDSA on P-256 with SHA-256, fixed-size `r ‖ s` signatures (RFC 7518 §3.4).
    Es256,
    /// Ed25519 (RFC 8037 §3.1).
    EdDsa,
}

impl Alg {
    /// Every algorithm, the default allowed set.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Alg;
    /// let names: Vec<_> = Alg::ALL.iter().map(|a| a.name()).collect();
    /// assert_eq!(names, ["RS256", "ES256", "EdDSA"]);
    /// ```
    pub const ALL: [Alg; 3] = [Alg::Rs256, Alg::Es256, Alg::EdDsa];

    /// The JOSE name (`"RS256"`, `"ES256"`, `"EdDSA"`).
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Alg::Rs256.name(), "RS256");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Alg::Rs256 => "RS256",
            Alg::Es256 => "ES256",
            Alg::EdDsa => "EdDSA",
        }
    }

    /// The algorithm of a JOSE name, exactly as spelt (names are case-sensitive).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::Alg;
    /// assert_eq!(Alg::from_name("RS256"), Some(Alg::Rs256));
    /// assert_eq!(Alg::from_name("rs256"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Alg> {
        Alg::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What a valid access token is for one protected resource, and the check itself.
///
/// Built with [`Verifier::new`] (issuer and audience) and consuming setters; immutable and
/// shareable afterwards.
///
/// # Example
/// ```
/// use jsongate::auth::{Alg, AuthErrorKind, Jwks, Verifier};
/// let v = Verifier::new("https://idp.example", "https://gw.example/mcp")
///     .algorithms(&[Alg::Es256, Alg::EdDsa])
///     .leeway(30)
///     .required_scopes(["mcp:tools"]);
/// let jwks = Jwks::default(); // a front fills this from the issuer's JWKS
/// let e = v.verify("eyJhbGciOiJub25lIn0.e30.", &jwks, 1_750_000_000).unwrap_err();
/// assert_eq!(e.kind(), AuthErrorKind::Algorithm); // {"alg":"none"}
/// assert_eq!(e.message(), "unsigned tokens are not accepted");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    issuer: String,
    audience: String,
    algorithms: Vec<Alg>,
    leeway: u64,
    required_scopes: Vec<String>,
    max_token_bytes: usize,
}

/// Which part of a token a JSON segment is, for messages.
#[derive(Clone, Copy)]
enum Part {
    Header,
    Claims,
}

impl Verifier {
    /// A verifier for tokens issued by `issuer` (compared exactly with `iss`) to `audience`,
    /// the canonical URI of this resource (RFC 8707; `aud` must be it or an array holding
    /// it). Every [`Alg`], [`DEFAULT_LEEWAY_S`], no required scope,
    /// [`DEFAULT_MAX_TOKEN_BYTES`].
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{Alg, Verifier};
    /// let v = Verifier::new("https://idp.example", "https://gw.example/mcp");
    /// assert_eq!(v.get_algorithms(), Alg::ALL);
    /// assert!(v.get_required_scopes().is_empty());
    /// ```
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> Verifier {
        Verifier {
            issuer: issuer.into(),
            audience: audience.into(),
            algorithms: Alg::ALL.to_vec(),
            leeway: DEFAULT_LEEWAY_S,
            required_scopes: Vec::new(),
            max_token_bytes: DEFAULT_MAX_TOKEN_BYTES,
        }
    }

    /// Accept only `algorithms` (none at all refuses every token).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{Alg, Verifier};
    /// let v = Verifier::new("i", "a").algorithms(&[Alg::EdDsa]);
    /// assert_eq!(v.get_algorithms(), [Alg::EdDsa]);
    /// ```
    #[must_use]
    pub fn algorithms(mut self, algorithms: &[Alg]) -> Self {
        algorithms.clone_into(&mut self.algorithms);
        self
    }

    /// Clock leeway in seconds for `exp`, `nbf` and `iat`.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Verifier::new("i", "a").leeway(5).get_leeway(), 5);
    /// ```
    #[must_use]
    pub fn leeway(mut self, seconds: u64) -> Self {
        self.leeway = seconds;
        self
    }

    /// Scopes every token must grant (all of them).
    ///
    /// # Example
    /// ```
    /// let v = jsongate::auth::Verifier::new("i", "a").required_scopes(["mcp:tools"]);
    /// assert_eq!(v.get_required_scopes(), ["mcp:tools"]);
    /// ```
    #[must_use]
    pub fn required_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The largest token accepted, in bytes.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{AuthErrorKind, Jwks, Verifier};
    /// let v = Verifier::new("i", "a").max_token_bytes(16);
    /// let e = v.verify(&"a".repeat(17), &Jwks::default(), 0).unwrap_err();
    /// assert_eq!(e.kind(), AuthErrorKind::TooLong { limit: 16 });
    /// ```
    #[must_use]
    pub fn max_token_bytes(mut self, bytes: usize) -> Self {
        self.max_token_bytes = bytes;
        self
    }

    /// The allowed algorithms.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Verifier::new("i", "a").get_algorithms().len(), 3);
    /// ```
    pub fn get_algorithms(&self) -> &[Alg] {
        &self.algorithms
    }

    /// The clock leeway in seconds.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Verifier::new("i", "a").get_leeway(), 60);
    /// ```
    pub fn get_leeway(&self) -> u64 {
        self.leeway
    }

    /// The required scopes.
    ///
    /// # Example
    /// ```
    /// assert!(jsongate::auth::Verifier::new("i", "a").get_required_scopes().is_empty());
    /// ```
    pub fn get_required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The largest token accepted, in bytes.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Verifier::new("i", "a").get_max_token_bytes(), 8192);
    /// ```
    pub fn get_max_token_bytes(&self) -> usize {
        self.max_token_bytes
    }

    /// Checks `token` (the bearer token, without `Bearer `) with the keys of `jwks` at time
    /// `now` (seconds since the Unix epoch), and returns who it speaks for.
    ///
    /// # Errors
    /// Every refusal the [module documentation](self) lists, with its [`AuthErrorKind`].
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{AuthErrorKind, Jwks, Verifier};
    /// let v = Verifier::new("https://idp.example", "https://gw.example/mcp");
    /// let jwks = Jwks::default();
    /// let kind = |t: &str| v.verify(t, &jwks, 0).unwrap_err().kind();
    /// assert_eq!(kind("a.b.c.d.e"), AuthErrorKind::MalformedToken); // JWE: not accepted
    /// assert_eq!(kind("e30=.e30.AA"), AuthErrorKind::MalformedToken); // padding
    /// // {"alg":"HS256"}: HMAC is never accepted, whatever the key set holds.
    /// assert_eq!(kind("eyJhbGciOiJIUzI1NiJ9.e30.AA"), AuthErrorKind::Algorithm);
    /// // {"alg":"EdDSA"}, well formed, but no key fits.
    /// assert_eq!(kind("eyJhbGciOiJFZERTQSJ9.e30.AA"), AuthErrorKind::UnknownKey);
    /// ```
    pub fn verify(&self, token: &str, jwks: &Jwks, now: u64) -> Result<Identity, AuthError> {
        if token.len() > self.max_token_bytes {
            return Err(AuthError::new(
                AuthErrorKind::TooLong {
                    limit: self.max_token_bytes,
                },
                "token too long",
            ));
        }
        let mut segments = token.split('.');
        let (Some(header_b64), Some(claims_b64), Some(signature_b64), None) = (
            segments.next(),
            segments.next(),
            segments.next(),
            segments.next(),
        ) else {
            return Err(malformed(if token.split('.').count() == 5 {
                "encrypted tokens (JWE) are not accepted"
            } else {
                "not a signed JWT (three base64url segments)"
            }));
        };

        let header = object(header_b64, Part::Header)?;
        let alg = self.algorithm(&header)?;
        if header.get("crit").is_some() {
            return Err(AuthError::new(
                AuthErrorKind::Critical,
                "critical header extensions are not understood",
            ));
        }
        let kid = match header.get("kid") {
            None => None,
            Some(Value::String(k)) => Some(k.as_str()),
            Some(_) => return Err(malformed("\"kid\" is not a string")),
        };
        let key = select(jwks, alg, kid)?;

        let signature =
            b64url(signature_b64).ok_or_else(|| malformed("signature is not base64url"))?;
        let signed = &token.as_bytes()[..header_b64.len() + 1 + claims_b64.len()];
        let verified = match &key.key {
            PublicKey::Rsa { n, e } => RsaPublicKeyComponents { n, e }
                .verify(&RSA_PKCS1_2048_8192_SHA256, signed, &signature)
                .is_ok(),
            PublicKey::P256(point) => UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, point)
                .verify(signed, &signature)
                .is_ok(),
            PublicKey::Ed25519(x) => UnparsedPublicKey::new(&ED25519, x)
                .verify(signed, &signature)
                .is_ok(),
        };
        if !verified {
            return Err(AuthError::new(
                AuthErrorKind::Signature,
                "signature does not verify",
            ));
        }

        // Only now is anything in the claims trusted.
        let claims = object(claims_b64, Part::Claims)?;
        self.check_times(&claims, now)?;
        if claims.get("iss").and_then(Value::as_str) != Some(self.issuer.as_str()) {
            return Err(AuthError::new(
                AuthErrorKind::Issuer,
                "issuer does not match",
            ));
        }
        let audience_matches = match claims.get("aud") {
            Some(Value::String(a)) => *a == self.audience,
            Some(Value::Array(items)) => items
                .iter()
                .any(|a| a.as_str() == Some(self.audience.as_str())),
            _ => false,
        };
        if !audience_matches {
            return Err(AuthError::new(
                AuthErrorKind::Audience,
                "audience does not match",
            ));
        }
        let subject = name(&claims, "sub")?.ok_or_else(|| malformed("\"sub\" is missing"))?;
        let client_id = match name(&claims, "client_id")? {
            Some(c) => Some(c),
            None => name(&claims, "azp")?,
        };
        let identity = Identity {
            subject,
            client_id,
            scopes: scopes(&claims)?,
            via: Via::Jwt,
        };
        identity.require_scopes(&self.required_scopes)?;
        Ok(identity)
    }

    /// The header's `alg`, if it is one this verifier accepts.
    fn algorithm(&self, header: &Value) -> Result<Alg, AuthError> {
        let refuse = |m| Err(AuthError::new(AuthErrorKind::Algorithm, m));
        let Some(name) = header.get("alg").and_then(Value::as_str) else {
            return Err(malformed("header has no \"alg\""));
        };
        match Alg::from_name(name) {
            Some(alg) if self.algorithms.contains(&alg) => Ok(alg),
            Some(_) => refuse("algorithm not allowed"),
            None if name.eq_ignore_ascii_case("none") => refuse("unsigned tokens are not accepted"),
            None if name.starts_with("HS") => refuse("symmetric algorithms are not accepted"),
            None => refuse("algorithm not supported"),
        }
    }

    fn check_times(&self, claims: &Value, now: u64) -> Result<(), AuthError> {
        let exp = time(claims, "exp")?.ok_or_else(|| malformed("\"exp\" is missing"))?;
        if now >= exp.saturating_add(self.leeway) {
            return Err(AuthError::new(AuthErrorKind::Expired, "token expired"));
        }
        let later = now.saturating_add(self.leeway);
        if time(claims, "nbf")?.is_some_and(|nbf| nbf > later) {
            return Err(AuthError::new(
                AuthErrorKind::NotYetValid,
                "token not yet valid",
            ));
        }
        if time(claims, "iat")?.is_some_and(|iat| iat > later) {
            return Err(AuthError::new(
                AuthErrorKind::NotYetValid,
                "token issued in the future",
            ));
        }
        Ok(())
    }
}

fn malformed(message: &'static str) -> AuthError {
    AuthError::new(AuthErrorKind::MalformedToken, message)
}

/// Decodes one segment and parses it as a JSON object within small limits.
fn object(b64: &str, part: Part) -> Result<Value, AuthError> {
    let (encoding, json, duplicate, not_object) = match part {
        Part::Header => (
            "header is not base64url",
            "header is not JSON within limits",
            "duplicate member in the header",
            "header is not a JSON object",
        ),
        Part::Claims => (
            "claims are not base64url",
            "claims are not JSON within limits",
            "duplicate member in the claims",
            "claims are not a JSON object",
        ),
    };
    let bytes = b64url(b64).ok_or_else(|| malformed(encoding))?;
    let limits = Limits::new()
        .max_bytes(bytes.len() as u64)
        .max_depth(16)
        .max_members(256)
        .max_items(256)
        .max_name_bytes(256)
        .max_number_bytes(64);
    let value = Value::parse(&bytes, limits).map_err(|e| {
        malformed(if *e.kind() == ErrorKind::DuplicateName {
            duplicate
        } else {
            json
        })
    })?;
    if value.as_object().is_none() {
        return Err(malformed(not_object));
    }
    Ok(value)
}

/// The one key of `jwks` that may verify a token with `alg` and `kid`.
fn select<'k>(jwks: &'k Jwks, alg: Alg, kid: Option<&str>) -> Result<&'k Jwk, AuthError> {
    let unknown = |m| Err(AuthError::new(AuthErrorKind::UnknownKey, m));
    let fits = |k: &&Jwk| k.key.alg() == alg;
    // PEM keys carry no key id and cannot be searched by one: the token's `kid` is a hint
    // (RFC 7515 §4.1.4), and the algorithm chooses among them (one per algorithm at most).
    let kid = kid.filter(|_| !jwks.no_kids);
    match kid {
        Some(kid) => {
            let named = |k: &&Jwk| k.kid.as_deref() == Some(kid);
            if !jwks.keys().iter().any(|k| named(&k)) {
                return unknown("no key with this key id");
            }
            let mut fitting = jwks.keys().iter().filter(named).filter(fits);
            match (fitting.next(), fitting.next()) {
                (Some(k), None) => Ok(k),
                (None, _) => Err(AuthError::new(
                    AuthErrorKind::Algorithm,
                    "algorithm does not match the key",
                )),
                (Some(_), Some(_)) => unknown("key id names more than one key"),
            }
        }
        None => {
            let mut fitting = jwks.keys().iter().filter(fits);
            match (fitting.next(), fitting.next()) {
                (Some(k), None) => Ok(k),
                (None, _) => unknown("no key for this algorithm"),
                (Some(_), Some(_)) => unknown("no key id, and more than one key fits"),
            }
        }
    }
}

/// A `NumericDate` claim (RFC 7519 §2): a non-negative JSON number of seconds, any fraction
/// truncated, no later than 9999; `None` when absent.
fn time(claims: &Value, claim: &'static str) -> Result<Option<u64>, AuthError> {
    let Some(v) = claims.get(claim) else {
        return Ok(None);
    };
    let seconds = v.as_number_text().and_then(|text| {
        if text.starts_with('-') {
            return None;
        }
        let whole = match text.find(['e', 'E']) {
            None => text.split('.').next()?.parse::<u64>().ok()?,
            Some(_) => {
                let f: f64 = text.parse().ok()?;
                // Finite, and below 2^53 so that the cast is exact; MAX_TIME is far below.
                if !(0.0..9.0e15).contains(&f) {
                    return None;
                }
                f as u64
            }
        };
        (whole <= MAX_TIME).then_some(whole)
    });
    match seconds {
        Some(s) => Ok(Some(s)),
        None => Err(malformed(match claim {
            "exp" => "\"exp\" is not a valid time",
            "nbf" => "\"nbf\" is not a valid time",
            _ => "\"iat\" is not a valid time",
        })),
    }
}

/// A string claim naming someone (`sub`, `client_id`, `azp`): 1 to 256 characters, no
/// control characters; `None` when absent.
fn name(claims: &Value, claim: &'static str) -> Result<Option<String>, AuthError> {
    match claims.get(claim) {
        None => Ok(None),
        Some(Value::String(s)) if usable_name(s) => Ok(Some(s.clone())),
        Some(_) => Err(malformed(match claim {
            "sub" => "\"sub\" is not usable",
            "client_id" => "\"client_id\" is not usable",
            _ => "\"azp\" is not usable",
        })),
    }
}

/// The granted scopes: `scope` (a space-separated string, RFC 8693 §4.2 and RFC 9068 §2.2.3),
/// else `scp` (an array of strings, or a space-separated string as some issuers write it).
fn scopes(claims: &Value) -> Result<Vec<String>, AuthError> {
    let bad = || malformed("scopes are not a list of scope tokens");
    let listed: Vec<&str> = match (claims.get("scope"), claims.get("scp")) {
        (None, None) => Vec::new(),
        (Some(Value::String(s)), _) | (None, Some(Value::String(s))) => {
            s.split(' ').filter(|s| !s.is_empty()).collect()
        }
        (None, Some(Value::Array(items))) => items
            .iter()
            .map(|i| i.as_str().ok_or_else(bad))
            .collect::<Result<_, _>>()?,
        _ => return Err(bad()),
    };
    if listed
        .iter()
        .any(|s| s.is_empty() || !s.chars().all(scope_char))
    {
        return Err(bad());
    }
    Ok(listed.into_iter().map(str::to_owned).collect())
}

#[cfg(test)]
mod tests {
    use aws_lc_rs::hmac;

    use super::super::testkit::{self, b64, Keys, ISSUER, NOW, RESOURCE};
    use super::*;

    fn verifier() -> Verifier {
        Verifier::new(ISSUER, RESOURCE)
    }

    fn jwks() -> Jwks {
        Jwks::from_slice(testkit::keys().jwks().as_bytes()).unwrap()
    }

    fn claims(extra: &str) -> String {
        format!(
            r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"user-1","exp":{},"iat":{}{extra}}}"#,
            NOW + 300,
            NOW - 10
        )
    }

    fn kind(token: &str) -> AuthErrorKind {
        verifier().verify(token, &jwks(), NOW).unwrap_err().kind()
    }

    fn refusal(token: &str) -> (AuthErrorKind, String) {
        let e = verifier().verify(token, &jwks(), NOW).unwrap_err();
        (e.kind(), e.message().to_owned())
    }

    #[test]
    fn valid_tokens_of_each_algorithm_are_accepted() {
        let keys = testkit::keys();
        let extra = r#","client_id":"app-7","scope":"mcp:tools  files:read""#;
        for alg in Alg::ALL {
            let token = keys.token(alg, &claims(extra));
            let who = verifier()
                .required_scopes(["mcp:tools"])
                .verify(&token, &jwks(), NOW)
                .unwrap();
            assert_eq!(
                who,
                Identity {
                    subject: "user-1".into(),
                    client_id: Some("app-7".into()),
                    scopes: vec!["mcp:tools".into(), "files:read".into()],
                    via: Via::Jwt,
                },
                "{alg:?}"
            );
        }
    }

    #[test]
    fn a_key_without_kid_is_used_when_it_is_the_only_fit() {
        let keys = testkit::keys();
        let token = keys.sign(Alg::EdDsa, r#"{"alg":"EdDSA"}"#, &claims(""));
        assert_eq!(
            verifier().verify(&token, &jwks(), NOW).unwrap().subject,
            "user-1"
        );
        // Two Ed25519 keys and no kid: ambiguous, even though one of them would verify.
        let other = Keys::generated();
        let two = format!(
            r#"{{"keys":[{},{}]}}"#,
            keys.ed_jwk("ed-1", ""),
            other.ed_jwk("ed-2", "")
        );
        let two = Jwks::from_slice(two.as_bytes()).unwrap();
        let e = verifier().verify(&token, &two, NOW).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (
                AuthErrorKind::UnknownKey,
                "no key id, and more than one key fits"
            )
        );
        // With the kid, the right one is chosen.
        let token = keys.token(Alg::EdDsa, &claims(""));
        assert!(verifier().verify(&token, &two, NOW).is_ok());
        // A key id given twice for the same type is refused rather than guessed.
        let twice = format!(
            r#"{{"keys":[{},{}]}}"#,
            keys.ed_jwk("ed-1", ""),
            other.ed_jwk("ed-1", "")
        );
        let twice = Jwks::from_slice(twice.as_bytes()).unwrap();
        let e = verifier().verify(&token, &twice, NOW).unwrap_err();
        assert_eq!(e.message(), "key id names more than one key");
    }

    #[test]
    fn expiry_and_not_before_with_leeway() {
        let keys = testkit::keys();
        let with = |exp: u64, nbf: u64| {
            let c = format!(
                r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"s","exp":{exp},"nbf":{nbf}}}"#
            );
            let token = keys.token(Alg::Es256, &c);
            verifier().verify(&token, &jwks(), NOW).map(|_| ())
        };
        assert!(with(NOW + 1, NOW).is_ok());
        assert!(with(NOW - 59, NOW).is_ok()); // expired 59 s ago: within the leeway
        let e = with(NOW - 60, NOW).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (AuthErrorKind::Expired, "token expired")
        );
        assert!(with(NOW + 600, NOW + 60).is_ok()); // valid in 60 s: within the leeway
        let e = with(NOW + 600, NOW + 61).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (AuthErrorKind::NotYetValid, "token not yet valid")
        );
        let token = keys.token(Alg::Es256, &claims(""));
        let strict = verifier().leeway(0);
        assert!(strict.verify(&token, &jwks(), NOW + 299).is_ok());
        assert_eq!(
            strict
                .verify(&token, &jwks(), NOW + 300)
                .unwrap_err()
                .kind(),
            AuthErrorKind::Expired
        );
        let future = format!(
            r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"s","exp":{},"iat":{}}}"#,
            NOW + 900,
            NOW + 120
        );
        assert_eq!(
            refusal(&keys.token(Alg::Es256, &future)),
            (
                AuthErrorKind::NotYetValid,
                "token issued in the future".into()
            )
        );
    }

    #[test]
    fn times_must_be_plain_non_negative_numbers() {
        let keys = testkit::keys();
        let with_exp = |exp: &str| {
            let c = format!(r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"s","exp":{exp}}}"#);
            verifier().verify(&keys.token(Alg::EdDsa, &c), &jwks(), NOW)
        };
        let later = NOW + 100;
        for ok in [
            format!("{later}"),
            format!("{later}.999"),
            format!("{later}.0e0"),
            "2e9".into(),
        ] {
            assert!(with_exp(&ok).is_ok(), "{ok}");
        }
        for bad in [
            format!("\"{later}\""),
            format!("-{later}"),
            "-0".into(),
            "null".into(),
            "[1]".into(),
            "99999999999999999999999999".into(),
            "1e400".into(),
            "253402300800".into(),
            "3e11".into(),
        ] {
            let e = with_exp(&bad).unwrap_err();
            assert_eq!(
                (e.kind(), e.message()),
                (AuthErrorKind::MalformedToken, "\"exp\" is not a valid time"),
                "{bad}"
            );
        }
        let no_exp = format!(r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"s"}}"#);
        assert_eq!(
            refusal(&keys.token(Alg::EdDsa, &no_exp)).1,
            "\"exp\" is missing"
        );
        let bad_nbf = claims(r#","nbf":"0""#);
        assert_eq!(
            refusal(&keys.token(Alg::EdDsa, &bad_nbf)).1,
            "\"nbf\" is not a valid time"
        );
    }

    #[test]
    fn issuer_and_audience_must_match_exactly() {
        let keys = testkit::keys();
        let c = |iss: &str, aud: &str| {
            format!(
                r#"{{"iss":{iss},"aud":{aud},"sub":"s","exp":{}}}"#,
                NOW + 60
            )
        };
        let q = |s: &str| format!("\"{s}\"");
        let ok = keys.token(
            Alg::Rs256,
            &c(&q(ISSUER), &format!(r#"["x",{}]"#, q(RESOURCE))),
        );
        assert!(verifier().verify(&ok, &jwks(), NOW).is_ok());
        for (iss, aud, want) in [
            (
                q("https://evil.example"),
                q(RESOURCE),
                AuthErrorKind::Issuer,
            ),
            (q(&format!("{ISSUER}/")), q(RESOURCE), AuthErrorKind::Issuer),
            ("null".into(), q(RESOURCE), AuthErrorKind::Issuer),
            (
                q(ISSUER),
                q("https://gw.example/other"),
                AuthErrorKind::Audience,
            ),
            (
                q(ISSUER),
                q(&format!("{RESOURCE}/")),
                AuthErrorKind::Audience,
            ),
            (q(ISSUER), r#"["x","y"]"#.into(), AuthErrorKind::Audience),
            (q(ISSUER), "[]".into(), AuthErrorKind::Audience),
            (q(ISSUER), "null".into(), AuthErrorKind::Audience),
        ] {
            assert_eq!(
                kind(&keys.token(Alg::Rs256, &c(&iss, &aud))),
                want,
                "{iss} {aud}"
            );
        }
        let no_aud = format!(r#"{{"iss":"{ISSUER}","sub":"s","exp":{}}}"#, NOW + 60);
        assert_eq!(
            refusal(&keys.token(Alg::Rs256, &no_aud)),
            (AuthErrorKind::Audience, "audience does not match".into())
        );
    }

    #[test]
    fn unsigned_and_symmetric_tokens_are_refused() {
        let body = b64(claims("").as_bytes());
        for header in [r#"{"alg":"none"}"#, r#"{"alg":"NONE","kid":"rsa-1"}"#] {
            let token = format!("{}.{body}.", b64(header.as_bytes()));
            assert_eq!(
                refusal(&token),
                (
                    AuthErrorKind::Algorithm,
                    "unsigned tokens are not accepted".into()
                )
            );
        }
        // HS256 with the RSA public key as the HMAC secret: as n, as DER, as PEM-ish text.
        let keys = testkit::keys();
        let (n, _) = keys.rsa_components();
        let der = keys.rsa_public_der();
        let pem = format!(
            "-----BEGIN RSA PUBLIC KEY-----\n{}\n-----END RSA PUBLIC KEY-----\n",
            b64(&der)
        );
        for secret in [
            n,
            der,
            pem.into_bytes(),
            keys.rsa_jwk("rsa-1", "").into_bytes(),
        ] {
            for alg in ["HS256", "HS384", "HS512"] {
                let input = format!(
                    "{}.{body}",
                    b64(format!(r#"{{"alg":"{alg}","kid":"rsa-1"}}"#).as_bytes())
                );
                let mac = hmac::sign(
                    &hmac::Key::new(hmac::HMAC_SHA256, &secret),
                    input.as_bytes(),
                );
                let token = format!("{input}.{}", b64(mac.as_ref()));
                assert_eq!(
                    refusal(&token),
                    (
                        AuthErrorKind::Algorithm,
                        "symmetric algorithms are not accepted".into()
                    )
                );
            }
        }
        for alg in ["RS384", "PS256", "ES512", "Ed25519", "rs256"] {
            let token = keys.sign(
                Alg::Rs256,
                &format!(r#"{{"alg":"{alg}","kid":"rsa-1"}}"#),
                &claims(""),
            );
            assert_eq!(
                refusal(&token),
                (AuthErrorKind::Algorithm, "algorithm not supported".into())
            );
        }
        let token = keys.sign(Alg::Rs256, r#"{"kid":"rsa-1"}"#, &claims(""));
        assert_eq!(refusal(&token).1, "header has no \"alg\"");
    }

    #[test]
    fn the_algorithm_must_be_allowed_and_the_keys() {
        let keys = testkit::keys();
        let token = keys.token(Alg::Rs256, &claims(""));
        let only_ec = verifier().algorithms(&[Alg::Es256]);
        let e = only_ec.verify(&token, &jwks(), NOW).unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (AuthErrorKind::Algorithm, "algorithm not allowed")
        );
        assert!(verifier()
            .algorithms(&[])
            .verify(&token, &jwks(), NOW)
            .is_err());
        // ES256 in the header, the RSA key's kid: the key decides, not the header.
        let token = keys.sign(Alg::Es256, r#"{"alg":"ES256","kid":"rsa-1"}"#, &claims(""));
        assert_eq!(
            refusal(&token),
            (
                AuthErrorKind::Algorithm,
                "algorithm does not match the key".into()
            )
        );
    }

    #[test]
    fn tampering_and_foreign_keys_fail_the_signature() {
        let keys = testkit::keys();
        for alg in Alg::ALL {
            let token = keys.token(alg, &claims(""));
            let parts: Vec<&str> = token.split('.').collect();
            let forged_claims = b64(claims(r#","scope":"admin""#).as_bytes());
            let tampered = format!("{}.{forged_claims}.{}", parts[0], parts[2]);
            assert_eq!(
                refusal(&tampered),
                (AuthErrorKind::Signature, "signature does not verify".into()),
                "{alg:?}"
            );
            let header = format!(
                r#"{{"alg":"{}","kid":"{}","typ":"JWT"}}"#,
                alg.name(),
                Keys::kid(alg)
            );
            let tampered = format!("{}.{}.{}", b64(header.as_bytes()), parts[1], parts[2]);
            assert_eq!(kind(&tampered), AuthErrorKind::Signature, "{alg:?}");
            let mut sig = testkit::unb64(parts[2]);
            sig[3] ^= 1;
            let flipped = format!("{}.{}.{}", parts[0], parts[1], b64(&sig));
            assert_eq!(kind(&flipped), AuthErrorKind::Signature, "{alg:?}");
            let empty = format!("{}.{}.", parts[0], parts[1]);
            assert_eq!(kind(&empty), AuthErrorKind::Signature, "{alg:?}");
        }
        // Signed by another EC and Ed25519 key under the kid of the published one.
        let other = Keys::generated();
        for alg in [Alg::Es256, Alg::EdDsa] {
            assert_eq!(
                kind(&other.token(alg, &claims(""))),
                AuthErrorKind::Signature
            );
        }
        // ES256 with an ASN.1 DER signature instead of JOSE's fixed r ‖ s.
        let input = format!(
            "{}.{}",
            b64(br#"{"alg":"ES256","kid":"ec-1"}"#),
            b64(claims("").as_bytes())
        );
        let der = keys.ec_sign_der(input.as_bytes());
        assert_eq!(
            kind(&format!("{input}.{}", b64(&der))),
            AuthErrorKind::Signature
        );
    }

    #[test]
    fn unknown_key_ids_are_refused() {
        let keys = testkit::keys();
        let token = keys.sign(Alg::Es256, r#"{"alg":"ES256","kid":"ec-9"}"#, &claims(""));
        assert_eq!(
            refusal(&token),
            (AuthErrorKind::UnknownKey, "no key with this key id".into())
        );
        let token = keys.sign(Alg::Es256, r#"{"alg":"ES256","kid":7}"#, &claims(""));
        assert_eq!(refusal(&token).1, "\"kid\" is not a string");
        let e = verifier()
            .verify(&keys.token(Alg::EdDsa, &claims("")), &Jwks::default(), NOW)
            .unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::UnknownKey);
    }

    #[test]
    fn duplicates_and_crit_are_refused_even_when_signed() {
        let keys = testkit::keys();
        let dup_alg = keys.sign(
            Alg::EdDsa,
            r#"{"alg":"EdDSA","kid":"ed-1","alg":"none"}"#,
            &claims(""),
        );
        assert_eq!(
            refusal(&dup_alg),
            (
                AuthErrorKind::MalformedToken,
                "duplicate member in the header".into()
            )
        );
        let dup_sub = keys.token(Alg::EdDsa, &claims(r#","sub":"admin""#));
        assert_eq!(
            refusal(&dup_sub),
            (
                AuthErrorKind::MalformedToken,
                "duplicate member in the claims".into()
            )
        );
        // The same names, written with escapes, are still the same names.
        let dup_escaped = keys.token(Alg::EdDsa, &claims(r#","\u0073ub":"admin""#));
        assert_eq!(refusal(&dup_escaped).1, "duplicate member in the claims");
        let crit = keys.sign(
            Alg::EdDsa,
            r#"{"alg":"EdDSA","kid":"ed-1","crit":["exp"],"exp":1}"#,
            &claims(""),
        );
        assert_eq!(
            refusal(&crit),
            (
                AuthErrorKind::Critical,
                "critical header extensions are not understood".into()
            )
        );
    }

    #[test]
    fn shape_and_encoding_are_checked() {
        let keys = testkit::keys();
        let good = keys.token(Alg::EdDsa, &claims(""));
        let p: Vec<&str> = good.split('.').collect();
        assert_eq!(
            refusal(&format!("{good}.x.y")),
            (
                AuthErrorKind::MalformedToken,
                "encrypted tokens (JWE) are not accepted".into()
            )
        );
        for bad in [
            String::new(),
            "abc".into(),
            format!("{}.{}", p[0], p[1]),
            format!("{good}."),
        ] {
            assert_eq!(
                refusal(&bad),
                (
                    AuthErrorKind::MalformedToken,
                    "not a signed JWT (three base64url segments)".into()
                ),
                "{bad}"
            );
        }
        // Padding, the standard alphabet, whitespace: not base64url.
        let padded = base64::Engine::encode(
            &base64::engine::general_purpose::URL_SAFE,
            br#"{"alg":"EdDSA","kid":"ed-1"}"#,
        );
        assert!(padded.ends_with('='));
        assert_eq!(
            refusal(&format!("{padded}.{}.{}", p[1], p[2])).1,
            "header is not base64url"
        );
        // Claims are decoded only after the signature, which covers their text as sent.
        assert_eq!(
            kind(&format!("{}.{}=.{}", p[0], p[1], p[2])),
            AuthErrorKind::Signature
        );
        assert_eq!(
            refusal(&format!("{}.{}.{}=", p[0], p[1], p[2])).1,
            "signature is not base64url"
        );
        assert_eq!(refusal(&format!(" {good}")).1, "header is not base64url");
        // Signed, but not objects.
        for (header, want) in [
            ("[]", "header is not a JSON object"),
            ("{", "header is not JSON within limits"),
        ] {
            assert_eq!(
                refusal(&format!("{}.{}.{}", b64(header.as_bytes()), p[1], p[2])).1,
                want
            );
        }
        let array_claims = keys.token(Alg::EdDsa, "[1]");
        assert_eq!(refusal(&array_claims).1, "claims are not a JSON object");
        let deep = format!("{}{}", "[".repeat(40), "]".repeat(40));
        let deep_claims = keys.token(Alg::EdDsa, &claims(&format!(r#","x":{deep}"#)));
        assert_eq!(refusal(&deep_claims).1, "claims are not JSON within limits");
    }

    #[test]
    fn oversize_tokens_are_refused_before_anything_else() {
        let keys = testkit::keys();
        let pad = "x".repeat(DEFAULT_MAX_TOKEN_BYTES);
        let big = keys.token(Alg::EdDsa, &claims(&format!(r#","pad":"{pad}""#)));
        assert_eq!(
            refusal(&big),
            (
                AuthErrorKind::TooLong {
                    limit: DEFAULT_MAX_TOKEN_BYTES
                },
                "token too long".into()
            )
        );
        let raised = verifier().max_token_bytes(4 * DEFAULT_MAX_TOKEN_BYTES);
        assert!(raised.verify(&big, &jwks(), NOW).is_ok());
    }

    #[test]
    fn subject_client_and_scopes() {
        let keys = testkit::keys();
        let c = |members: &str| {
            format!(
                r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","exp":{}{members}}}"#,
                NOW + 60
            )
        };
        let who =
            |members: &str| verifier().verify(&keys.token(Alg::EdDsa, &c(members)), &jwks(), NOW);
        let long = "x".repeat(257);
        for (members, message) in [
            ("", "\"sub\" is missing"),
            (r#","sub":"""#, "\"sub\" is not usable"),
            (r#","sub":"a\nb""#, "\"sub\" is not usable"),
            (r#","sub":7"#, "\"sub\" is not usable"),
            (&format!(r#","sub":"{long}""#), "\"sub\" is not usable"),
            (
                r#","sub":"s","client_id":"""#,
                "\"client_id\" is not usable",
            ),
            (r#","sub":"s","azp":["a"]"#, "\"azp\" is not usable"),
            (
                r#","sub":"s","scope":["a"],"scp":"b""#,
                "scopes are not a list of scope tokens",
            ),
            (
                r#","sub":"s","scp":["a b"]"#,
                "scopes are not a list of scope tokens",
            ),
            (
                r#","sub":"s","scp":[""]"#,
                "scopes are not a list of scope tokens",
            ),
            (
                r#","sub":"s","scope":"a \"b\"""#,
                "scopes are not a list of scope tokens",
            ),
            (
                r#","sub":"s","scope":7"#,
                "scopes are not a list of scope tokens",
            ),
        ] {
            let e = who(members).unwrap_err();
            assert_eq!(
                (e.kind(), e.message()),
                (AuthErrorKind::MalformedToken, message),
                "{members}"
            );
        }
        let id = who(r#","sub":"s","azp":"app","scp":["a","b"]"#).unwrap();
        assert_eq!(
            (id.client_id.as_deref(), id.scopes.as_slice()),
            (Some("app"), &["a".to_owned(), "b".to_owned()][..])
        );
        let id = who(r#","sub":"s","client_id":"c","azp":"z","scp":"x y""#).unwrap();
        assert_eq!(
            (id.client_id.as_deref(), id.scopes.as_slice()),
            (Some("c"), &["x".to_owned(), "y".to_owned()][..])
        );
        let id = who(r#","sub":"é-ü""#).unwrap();
        assert_eq!(
            (id.subject.as_str(), id.scopes.len(), id.client_id),
            ("é-ü", 0, None)
        );
    }

    #[test]
    fn a_missing_scope_is_a_403_with_its_challenge() {
        let keys = testkit::keys();
        let token = keys.token(Alg::Rs256, &claims(r#","scope":"files:read""#));
        let need = ["mcp:tools".to_owned(), "files:read".to_owned()];
        let e = verifier()
            .required_scopes(need.clone())
            .verify(&token, &jwks(), NOW)
            .unwrap_err();
        assert_eq!(
            (e.kind(), e.status(), e.error_code()),
            (AuthErrorKind::InsufficientScope, 403, "insufficient_scope")
        );
        let url = "https://gw.example/.well-known/oauth-protected-resource/mcp";
        assert_eq!(
            e.www_authenticate(url, &need),
            format!(
                "Bearer resource_metadata=\"{url}\", error=\"insufficient_scope\", \
                 error_description=\"a required scope was not granted\", scope=\"mcp:tools files:read\""
            )
        );
    }

    proptest::proptest! {
        /// Arbitrary bytes, and arbitrary strings of the token alphabet, never panic the
        /// verifier and are never accepted.
        #[test]
        fn random_tokens_are_refused(bytes in proptest::collection::vec(proptest::arbitrary::any::<u8>(), 0..400),
                                     text in "[A-Za-z0-9_=.-]{0,300}") {
            let jwks = jwks();
            let v = verifier();
            proptest::prop_assert!(v.verify(&String::from_utf8_lossy(&bytes), &jwks, NOW).is_err());
            proptest::prop_assert!(v.verify(&text, &jwks, NOW).is_err());
        }

        /// A valid token with one byte changed anywhere is refused.
        #[test]
        fn any_one_byte_change_is_refused(at in 0usize..10_000, to in proptest::sample::select(
                b"AQZaqz09-_.=".to_vec())) {
            let token = testkit::keys().token(Alg::EdDsa, &claims(""));
            let at = at % token.len();
            proptest::prop_assume!(token.as_bytes()[at] != to);
            let mut bytes = token.into_bytes();
            bytes[at] = to;
            let changed = String::from_utf8(bytes).unwrap();
            proptest::prop_assert!(verifier().verify(&changed, &jwks(), NOW).is_err(), "{}", changed);
        }
    }
}
