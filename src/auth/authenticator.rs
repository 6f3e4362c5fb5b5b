//! The [`Authenticator`]: the one call a network front makes per request, from the
//! `Authorization` header to an [`Identity`] or an [`AuthError`] with its challenge.
//!
//! This module owns the bearer-header grammar (RFC 6750 §2.1), the choice between JWT and API
//! key for a presented token, and the current key set, which a front's fetcher may replace
//! while requests run. It reads no clock and does no I/O: the front passes the time and
//! fetches `jwks_url`.

use std::sync::{Arc, PoisonError, RwLock};

use super::config::{AuthConfig, KeySource};
use super::{AuthError, AuthErrorKind, Identity, Jwks, Verifier, DEFAULT_MAX_TOKEN_BYTES};

/// The configured checks, ready for requests: a [`Verifier`] when JWTs are accepted, the
/// API keys, and the current key set (replaced with [`set_jwks`](Authenticator::set_jwks)
/// while requests run).
///
/// # Example
/// ```
/// use jsongate::auth::{ApiKeys, AuthConfig, AuthErrorKind, Authenticator, Via};
/// let text = format!(
///     r#"{{"resource":"https://gw.example/mcp","required_scopes":["mcp:tools"],
///         "api_keys":[{{"sha256":"{}","subject":"ci-bot","scopes":["mcp:tools"]}}]}}"#,
///     ApiKeys::sha256_hex("k-1")
/// );
/// let auth = Authenticator::new(AuthConfig::from_slice(text.as_bytes(), std::path::Path::new(".")).unwrap());
/// let who = auth.authenticate(Some(b"Bearer k-1"), 1_750_000_000).unwrap();
/// assert_eq!((who.subject.as_str(), who.via), ("ci-bot", Via::ApiKey));
///
/// let e = auth.authenticate(None, 1_750_000_000).unwrap_err();
/// assert_eq!((e.kind(), e.status()), (AuthErrorKind::Missing, 401));
/// assert_eq!(
///     auth.challenge(&e),
///     r#"Bearer resource_metadata="https://gw.example/.well-known/oauth-protected-resource/mcp""#
/// );
/// ```
#[derive(Debug)]
pub struct Authenticator {
    config: AuthConfig,
    verifier: Option<Verifier>,
    jwks: RwLock<Arc<Jwks>>,
}

impl Authenticator {
    /// The checks `config` describes; the key set is the `jwks_file`'s, or empty until
    /// [`set_jwks`](Authenticator::set_jwks) (every JWT is refused until then).
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, Authenticator};
    /// let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp",
    ///     "issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#,
    ///     std::path::Path::new(".")).unwrap();
    /// assert!(Authenticator::new(c).jwks().is_empty());
    /// ```
    pub fn new(config: AuthConfig) -> Authenticator {
        let verifier = config
            .issuer
            .as_ref()
            .filter(|_| config.keys != KeySource::None)
            .map(|iss| {
                Verifier::new(iss.as_str(), config.resource.as_str())
                    .algorithms(&config.algorithms)
                    .leeway(config.leeway)
                    .required_scopes(config.required_scopes.iter().cloned())
            });
        let jwks = match &config.keys {
            KeySource::File(_, jwks) => jwks.clone(),
            _ => Jwks::default(),
        };
        Authenticator {
            config,
            verifier,
            jwks: RwLock::new(Arc::new(jwks)),
        }
    }

    /// The configuration.
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, Authenticator};
    /// # let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#, std::path::Path::new(".")).unwrap();
    /// let auth = Authenticator::new(c);
    /// assert_eq!(auth.config().jwks_url(), Some("https://idp.example/jwks"));
    /// ```
    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    /// The current key set.
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, Authenticator};
    /// # let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#, std::path::Path::new(".")).unwrap();
    /// assert_eq!(Authenticator::new(c).jwks().len(), 0);
    /// ```
    pub fn jwks(&self) -> Arc<Jwks> {
        Arc::clone(&self.jwks.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Replaces the key set (a front's fetcher, after reading `jwks_url` with
    /// [`Jwks::from_slice`]); requests already being checked finish with the old one.
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, Authenticator, Jwks};
    /// # let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#, std::path::Path::new(".")).unwrap();
    /// let auth = Authenticator::new(c);
    /// let fetched = br#"{"keys":[{"kty":"OKP","crv":"Ed25519","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;
    /// auth.set_jwks(Jwks::from_slice(fetched).unwrap());
    /// assert_eq!(auth.jwks().len(), 1);
    /// ```
    pub fn set_jwks(&self, jwks: Jwks) {
        *self.jwks.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(jwks);
    }

    /// Who sent a request with this `Authorization` header value (`None`: no header), at
    /// `now` (seconds since the Unix epoch).
    ///
    /// The header must be the `Bearer` scheme (any case), one or more spaces, and exactly
    /// one token68. A token of three dot-separated segments is checked as a JWT when JWTs
    /// are configured; any other token, or every token when only API keys are configured, as
    /// an API key. An API key's scopes must include the required scopes too.
    ///
    /// # Errors
    /// [`AuthErrorKind::Missing`] without a header or with another scheme,
    /// [`AuthErrorKind::Malformed`] for a `Bearer` header that is not one token68,
    /// [`AuthErrorKind::TooLong`] for a token above 8 KiB, and the refusals of
    /// [`Verifier::verify`] and [`ApiKeys::verify`](super::ApiKeys::verify), including
    /// [`AuthErrorKind::InsufficientScope`] (HTTP 403).
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, AuthErrorKind, Authenticator};
    /// # let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#, std::path::Path::new(".")).unwrap();
    /// let auth = Authenticator::new(c);
    /// let kind = |h: &[u8]| auth.authenticate(Some(h), 0).unwrap_err().kind();
    /// assert_eq!(kind(b"Basic dXNlcjpwYXNz"), AuthErrorKind::Missing);
    /// assert_eq!(kind(b"Bearer a b"), AuthErrorKind::Malformed);
    /// assert_eq!(kind(b"bearer a.b.c"), AuthErrorKind::MalformedToken);
    /// ```
    pub fn authenticate(
        &self,
        authorization: Option<&[u8]>,
        now: u64,
    ) -> Result<Identity, AuthError> {
        let max = self
            .verifier
            .as_ref()
            .map_or(DEFAULT_MAX_TOKEN_BYTES, Verifier::get_max_token_bytes);
        let token = bearer_token(authorization, max)?;
        if let Some(verifier) = &self.verifier {
            let looks_like_jwt = token.bytes().filter(|&b| b == b'.').count() == 2;
            if looks_like_jwt || self.config.api_keys.is_empty() {
                return verifier.verify(token, &self.jwks(), now);
            }
        }
        let identity = self.config.api_keys.verify(token)?;
        identity.require_scopes(&self.config.required_scopes)?;
        Ok(identity)
    }

    /// The `WWW-Authenticate` value for `error` ([`AuthError::www_authenticate`] with this
    /// resource's metadata URL and required scopes).
    ///
    /// # Example
    /// ```
    /// # use jsongate::auth::{AuthConfig, Authenticator};
    /// # let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example","jwks_url":"https://idp.example/jwks"}"#, std::path::Path::new(".")).unwrap();
    /// let auth = Authenticator::new(c);
    /// let e = auth.authenticate(Some(b"Bearer x.y.z"), 0).unwrap_err();
    /// assert!(auth.challenge(&e).contains(r#"error="invalid_token""#));
    /// ```
    pub fn challenge(&self, error: &AuthError) -> String {
        error.www_authenticate(
            &self.config.resource_metadata_url(),
            &self.config.required_scopes,
        )
    }
}

/// The token of a `Bearer` credential: `Bearer 1*SP token68` (RFC 6750 §2.1, RFC 9110 §11.4),
/// surrounding spaces and tabs ignored.
fn bearer_token(header: Option<&[u8]>, max: usize) -> Result<&str, AuthError> {
    let missing = || AuthError::new(AuthErrorKind::Missing, "no bearer token");
    let malformed = || AuthError::new(AuthErrorKind::Malformed, "expected Bearer and one token68");
    let header = header.ok_or_else(missing)?;
    let is_blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = header
        .iter()
        .position(|b| !is_blank(b))
        .unwrap_or(header.len());
    let end = header
        .iter()
        .rposition(|b| !is_blank(b))
        .map_or(start, |e| e + 1);
    let header = &header[start..end];
    let (scheme, rest) = match header.iter().position(|&b| b == b' ') {
        Some(sp) => (&header[..sp], &header[sp..]),
        None => (header, &b""[..]),
    };
    if !scheme.eq_ignore_ascii_case(b"bearer") {
        return Err(missing());
    }
    let token = &rest[rest.iter().take_while(|&&b| b == b' ').count()..];
    if token.len() > max {
        return Err(AuthError::new(
            AuthErrorKind::TooLong { limit: max },
            "token too long",
        ));
    }
    let body = token.len() - token.iter().rev().take_while(|&&b| b == b'=').count();
    let token68 = body > 0
        && token[..body]
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b));
    if !token68 {
        return Err(malformed());
    }
    std::str::from_utf8(token).map_err(|_| malformed())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::testkit::{self, ISSUER, NOW, RESOURCE};
    use super::super::{Alg, ApiKeys, Via};
    use super::*;

    fn config(text: &str) -> Result<AuthConfig, crate::json::ConfigError> {
        AuthConfig::from_slice(text.as_bytes(), Path::new("."))
    }

    fn both() -> Authenticator {
        let c = config(&format!(
            r#"{{"resource":"{RESOURCE}","issuer":"{ISSUER}","jwks_url":"https://idp.example/jwks",
                "required_scopes":["mcp:tools"],
                "api_keys":[{{"sha256":"{}","subject":"ci-bot","scopes":["mcp:tools"]}},
                            {{"sha256":"{}","subject":"reader","scopes":["read"]}}]}}"#,
            ApiKeys::sha256_hex("key-1"),
            ApiKeys::sha256_hex("key-2")
        ))
        .unwrap();
        Authenticator::new(c)
    }

    fn claims(scope: &str) -> String {
        format!(
            r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"u","exp":{},"scope":"{scope}"}}"#,
            NOW + 60
        )
    }

    #[test]
    fn jwts_and_api_keys_are_told_apart() {
        let auth = both();
        let token = testkit::keys().token(Alg::EdDsa, &claims("mcp:tools"));
        let header = format!("Bearer {token}");
        // No key set fetched yet.
        let e = auth.authenticate(Some(header.as_bytes()), NOW).unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::UnknownKey);
        auth.set_jwks(Jwks::from_slice(testkit::keys().jwks().as_bytes()).unwrap());
        let who = auth.authenticate(Some(header.as_bytes()), NOW).unwrap();
        assert_eq!((who.subject.as_str(), who.via), ("u", Via::Jwt));
        let who = auth.authenticate(Some(b"Bearer key-1"), NOW).unwrap();
        assert_eq!((who.subject.as_str(), who.via), ("ci-bot", Via::ApiKey));
        let e = auth.authenticate(Some(b"Bearer key-3"), NOW).unwrap_err();
        assert_eq!((e.kind(), e.status()), (AuthErrorKind::ApiKey, 401));
        // A JWT-shaped string is never tried as an API key when JWTs are configured.
        let e = auth.authenticate(Some(b"Bearer a.b.c"), NOW).unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::MalformedToken);
        // The required scope applies to API keys too.
        let e = auth.authenticate(Some(b"Bearer key-2"), NOW).unwrap_err();
        assert_eq!(
            (e.kind(), e.status()),
            (AuthErrorKind::InsufficientScope, 403)
        );
        let challenge = auth.challenge(&e);
        assert!(
            challenge.contains(r#"error="insufficient_scope""#),
            "{challenge}"
        );
        assert!(challenge.ends_with(r#"scope="mcp:tools""#), "{challenge}");
        // And to JWTs.
        let token = testkit::keys().token(Alg::EdDsa, &claims("read"));
        let e = auth
            .authenticate(Some(format!("Bearer {token}").as_bytes()), NOW)
            .unwrap_err();
        assert_eq!(e.kind(), AuthErrorKind::InsufficientScope);
        // Only API keys configured: a JWT-shaped key is still an API key.
        let only_keys = Authenticator::new(
            config(&format!(
                r#"{{"resource":"{RESOURCE}","api_keys":[{{"sha256":"{}","subject":"dots"}}]}}"#,
                ApiKeys::sha256_hex("a.b.c")
            ))
            .unwrap(),
        );
        assert_eq!(
            only_keys
                .authenticate(Some(b"Bearer a.b.c"), NOW)
                .unwrap()
                .subject,
            "dots"
        );
    }

    #[test]
    fn key_rotation_takes_effect_for_later_requests() {
        let auth = both();
        auth.set_jwks(Jwks::from_slice(testkit::keys().jwks().as_bytes()).unwrap());
        let next = testkit::Keys::generated();
        let header = format!("Bearer {}", next.token(Alg::EdDsa, &claims("mcp:tools")));
        let held = auth.jwks();
        assert_eq!(
            auth.authenticate(Some(header.as_bytes()), NOW)
                .unwrap_err()
                .kind(),
            AuthErrorKind::Signature
        );
        auth.set_jwks(Jwks::from_slice(next.jwks().as_bytes()).unwrap());
        assert!(auth.authenticate(Some(header.as_bytes()), NOW).is_ok());
        assert_eq!(held.len(), 3); // a reader's set is untouched by the swap
    }

    #[test]
    fn the_bearer_header_grammar() {
        let auth = both();
        let kind = |h: &[u8]| {
            auth.authenticate(Some(h), NOW)
                .map(|i| i.subject)
                .map_err(|e| e.kind())
        };
        for ok in [
            &b"Bearer key-1"[..],
            b"bearer key-1",
            b"BEARER   key-1",
            b" \tBearer key-1 \t",
        ] {
            assert_eq!(
                kind(ok),
                Ok("ci-bot".into()),
                "{}",
                String::from_utf8_lossy(ok)
            );
        }
        for missing in [
            &b""[..],
            b"Basic a2V5LTE=",
            b"Bearerkey-1",
            b"Token key-1",
            b"Bearer\tkey-1",
        ] {
            assert_eq!(
                kind(missing),
                Err(AuthErrorKind::Missing),
                "{}",
                String::from_utf8_lossy(missing)
            );
        }
        assert_eq!(
            auth.authenticate(None, NOW).unwrap_err().message(),
            "no bearer token"
        );
        for malformed in [
            &b"Bearer"[..],
            b"Bearer ",
            b"Bearer key-1 key-2",
            b"Bearer key-1,x",
            b"Bearer \"key-1\"",
            b"Bearer ===",
            b"Bearer k=y",
            b"Bearer key-1\r\nX: y",
            b"Bearer k\xc3\xa9y",
            b"Bearer k\x00",
        ] {
            assert_eq!(
                kind(malformed),
                Err(AuthErrorKind::Malformed),
                "{}",
                String::from_utf8_lossy(malformed)
            );
        }
        let e = auth.authenticate(Some(b"Bearer a b"), NOW).unwrap_err();
        assert_eq!((e.status(), e.error_code()), (401, "invalid_request"));
        // token68 allows trailing '=' and '+' '/' '~'.
        assert_eq!(kind(b"Bearer a+/~b=="), Err(AuthErrorKind::ApiKey));
        let long = format!("Bearer {}", "a".repeat(DEFAULT_MAX_TOKEN_BYTES + 1));
        assert_eq!(
            kind(long.as_bytes()),
            Err(AuthErrorKind::TooLong {
                limit: DEFAULT_MAX_TOKEN_BYTES
            })
        );
    }

    #[test]
    fn a_missing_header_gets_a_challenge_without_error() {
        let auth = both();
        let e = auth.authenticate(None, NOW).unwrap_err();
        assert_eq!(
            auth.challenge(&e),
            "Bearer resource_metadata=\"https://gw.example/.well-known/oauth-protected-resource/mcp\""
        );
        let e = auth.authenticate(Some(b"Bearer a b"), NOW).unwrap_err();
        assert_eq!(
            auth.challenge(&e),
            "Bearer resource_metadata=\"https://gw.example/.well-known/oauth-protected-resource/mcp\", \
             error=\"invalid_request\", error_description=\"expected Bearer and one token68\""
        );
    }
}
