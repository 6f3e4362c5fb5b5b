//! Who is calling: caller identity for the network fronts, as an OAuth 2.1 resource server
//! (MCP authorization, spec 2025-06-18) and with static API keys.
//!
//! This module owns the checks that turn an `Authorization` header into an [`Identity`], or
//! into an [`AuthError`] that knows its HTTP status and its `WWW-Authenticate` challenge:
//!
//! - [`jwk`]: JSON Web Key Sets (RFC 7517), bounded, public signing keys only;
//! - [`jwt`]: JWS compact JWTs (RFC 7515, RFC 7519) signed with `RS256`, `ES256` or `EdDSA`, checked
//!   as access tokens for one protected resource (issuer, audience per RFC 8707, lifetime,
//!   scopes);
//! - [`apikey`]: static API keys, stored as SHA-256 hashes and compared in constant time;
//! - [`config`]: the `auth` configuration object ([`AuthConfig`]), and the RFC 9728 Protected
//!   Resource Metadata document and its well-known URL;
//! - [`Authenticator`]: the one call a front makes per request, from the `Authorization`
//!   header to an [`Identity`], and the current key set.
//!
//! It must not do I/O of its own beyond reading the JWKS file the configuration names: the
//! fronts fetch a `jwks_url` and hand the keys over with [`Authenticator::set_jwks`], pick
//! the token out of the request (never from a query string), and write the responses.
//!
//! JOSE is written here on `aws-lc-rs`'s primitives (the crypto library the TLS fronts use
//! through rustls: one for both) rather than taken from the `jsonwebtoken` crate, for
//! measured reasons: its version 12 needs rustc 1.88 (this crate's `rust-version` is 1.85);
//! and it parses with `serde_json`, which keeps the last of duplicate members when it reads
//! into a map or a `Value`, whereas RFC 7515 §4 lets a JWS parser only reject duplicate
//! header names or use the lexically last. Here the header and
//! the claims are parsed with the crate's own [`Value::parse`](crate::json::Value::parse),
//! under tight [`Limits`](crate::Limits), and a duplicate member refuses the token.
//!
//! No [`AuthError`] message contains the token or text taken from it: they are short fixed
//! phrases, safe to put in a response header or a log line.

pub mod apikey;
mod authenticator;
pub mod config;
pub mod jwk;
pub mod jwt;
mod pem;
#[cfg(test)]
mod testkit;

use std::borrow::Cow;
use std::fmt;

pub use apikey::ApiKeys;
pub use authenticator::Authenticator;
pub use config::AuthConfig;
pub use jwk::Jwks;
pub use jwt::{Alg, Verifier, DEFAULT_LEEWAY_S, DEFAULT_MAX_TOKEN_BYTES};

/// Who the caller is, once a credential has been verified. It never holds the credential.
///
/// # Example
/// ```
/// use jsongate::auth::{ApiKeys, Via};
/// let keys = ApiKeys::new().key(ApiKeys::sha256("k-123"), "ci-bot", ["tools:read"]);
/// let who = keys.verify("k-123").unwrap();
/// assert_eq!((who.subject.as_str(), who.via), ("ci-bot", Via::ApiKey));
/// assert_eq!(who.scopes, ["tools:read"]);
/// assert_eq!(who.client_id, None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// The subject: a token's `sub` claim, or the name an API key is configured with.
    pub subject: String,
    /// The OAuth client the token was issued to (`client_id`, else `azp`), if it says.
    pub client_id: Option<String>,
    /// The scopes granted, in the order the credential lists them.
    pub scopes: Vec<String>,
    /// Which kind of credential it was.
    pub via: Via,
}

impl Identity {
    /// Whether every scope of `required` was granted.
    ///
    /// # Errors
    /// [`AuthErrorKind::InsufficientScope`] when one is missing (HTTP 403).
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{ApiKeys, AuthErrorKind};
    /// let keys = ApiKeys::new().key(ApiKeys::sha256("k"), "bot", ["a", "b"]);
    /// let who = keys.verify("k").unwrap();
    /// assert!(who.require_scopes(&["b".to_owned()]).is_ok());
    /// let e = who.require_scopes(&["a".to_owned(), "c".to_owned()]).unwrap_err();
    /// assert_eq!((e.kind(), e.status()), (AuthErrorKind::InsufficientScope, 403));
    /// ```
    pub fn require_scopes(&self, required: &[String]) -> Result<(), AuthError> {
        if required.iter().all(|r| self.scopes.contains(r)) {
            Ok(())
        } else {
            Err(AuthError::new(
                AuthErrorKind::InsufficientScope,
                "a required scope was not granted",
            ))
        }
    }
}

/// The kind of credential an [`Identity`] was verified from.
///
/// # Example
/// ```
/// use jsongate::auth::Via;
/// assert_eq!(Via::Jwt.name(), "jwt");
/// assert_eq!(Via::ApiKey.name(), "api_key");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Via {
    /// A signed JWT access token.
    Jwt,
    /// A static API key.
    ApiKey,
}

impl Via {
    /// The name in `snake_case` (`"jwt"`, `"api_key"`), for audit records.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::Via::Jwt.name(), "jwt");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Via::Jwt => "jwt",
            Via::ApiKey => "api_key",
        }
    }
}

/// Why a caller was not authenticated (or not authorised).
///
/// Every kind but [`InsufficientScope`](AuthErrorKind::InsufficientScope) answers HTTP 401;
/// that one answers 403. [`AuthError::error_code`] gives the RFC 6750 §3.1 code.
///
/// # Example
/// ```
/// use jsongate::auth::{AuthErrorKind, Jwks};
/// let e = Jwks::from_slice(br#"{"keys":[]}"#).unwrap_err();
/// assert_eq!(e.kind(), AuthErrorKind::Jwks);
/// assert_eq!(e.kind().name(), "jwks");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthErrorKind {
    /// No credentials: no `Authorization` header, or one with another scheme than `Bearer`
    /// (RFC 6750 §3.1: such a challenge carries no error code).
    Missing,
    /// An `Authorization: Bearer` header that is not exactly one token68.
    Malformed,
    /// A token longer than the verifier accepts.
    TooLong {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Not a well-formed signed JWT: segments, base64url, JSON, a duplicate member, a claim
    /// of the wrong type, a missing or unusable `sub`.
    MalformedToken,
    /// `alg` is `none`, a symmetric algorithm, one not allowed, or not the key's.
    Algorithm,
    /// The header lists critical extensions (`crit`), none of which are understood.
    Critical,
    /// No key of the set fits the token (unknown `kid`, or no `kid` and not exactly one
    /// candidate key).
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// `exp` has passed (beyond the leeway).
    Expired,
    /// `nbf` (or `iat`) is in the future (beyond the leeway).
    NotYetValid,
    /// `iss` is not the configured issuer.
    Issuer,
    /// `aud` does not name this resource.
    Audience,
    /// A required scope was not granted (HTTP 403).
    InsufficientScope,
    /// The API key is not one of the configured keys.
    ApiKey,
    /// A JSON Web Key Set that cannot be used.
    Jwks,
}

impl AuthErrorKind {
    /// The kind's name in `snake_case` (`"expired"`, `"insufficient_scope"`), for logs and
    /// audit records.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::AuthErrorKind;
    /// assert_eq!(AuthErrorKind::NotYetValid.name(), "not_yet_valid");
    /// assert_eq!(AuthErrorKind::TooLong { limit: 8192 }.name(), "too_long");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            AuthErrorKind::Missing => "missing",
            AuthErrorKind::Malformed => "malformed",
            AuthErrorKind::TooLong { .. } => "too_long",
            AuthErrorKind::MalformedToken => "malformed_token",
            AuthErrorKind::Algorithm => "algorithm",
            AuthErrorKind::Critical => "critical",
            AuthErrorKind::UnknownKey => "unknown_key",
            AuthErrorKind::Signature => "signature",
            AuthErrorKind::Expired => "expired",
            AuthErrorKind::NotYetValid => "not_yet_valid",
            AuthErrorKind::Issuer => "issuer",
            AuthErrorKind::Audience => "audience",
            AuthErrorKind::InsufficientScope => "insufficient_scope",
            AuthErrorKind::ApiKey => "api_key",
            AuthErrorKind::Jwks => "jwks",
        }
    }
}

/// Why a caller was refused: a kind, and a short fixed message that never contains the
/// credential or text taken from it.
///
/// # Example
/// ```
/// use jsongate::auth::{ApiKeys, AuthErrorKind};
/// let e = ApiKeys::new().verify("guess").unwrap_err();
/// assert_eq!((e.kind(), e.status(), e.error_code()), (AuthErrorKind::ApiKey, 401, "invalid_token"));
/// assert_eq!(e.message(), "API key not recognised");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct AuthError(Box<Inner>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct Inner {
    kind: AuthErrorKind,
    message: Cow<'static, str>,
}

impl AuthError {
    pub(crate) fn new(kind: AuthErrorKind, message: impl Into<Cow<'static, str>>) -> AuthError {
        AuthError(Box::new(Inner {
            kind,
            message: message.into(),
        }))
    }

    /// What kind of refusal this is.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{ApiKeys, AuthErrorKind};
    /// assert_eq!(ApiKeys::new().verify("x").unwrap_err().kind(), AuthErrorKind::ApiKey);
    /// ```
    pub fn kind(&self) -> AuthErrorKind {
        self.0.kind
    }

    /// The message (also the `Display` text): short, fixed, ASCII.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::ApiKeys;
    /// let e = ApiKeys::new().verify("x").unwrap_err();
    /// assert_eq!(e.message(), e.to_string());
    /// ```
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The HTTP status to answer with: 403 for
    /// [`InsufficientScope`](AuthErrorKind::InsufficientScope), 401 for every other kind.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::ApiKeys;
    /// assert_eq!(ApiKeys::new().verify("x").unwrap_err().status(), 401);
    /// ```
    pub fn status(&self) -> u16 {
        if self.0.kind == AuthErrorKind::InsufficientScope {
            403
        } else {
            401
        }
    }

    /// The RFC 6750 §3.1 error code: `invalid_request` for a missing or malformed
    /// `Authorization` header, `insufficient_scope`, and `invalid_token` for the rest.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::ApiKeys;
    /// assert_eq!(ApiKeys::new().verify("x").unwrap_err().error_code(), "invalid_token");
    /// ```
    pub fn error_code(&self) -> &'static str {
        match self.0.kind {
            AuthErrorKind::Missing | AuthErrorKind::Malformed => "invalid_request",
            AuthErrorKind::InsufficientScope => "insufficient_scope",
            _ => "invalid_token",
        }
    }

    /// The `WWW-Authenticate` header value for this refusal (RFC 6750 §3, RFC 9728 §5.1):
    /// the `resource_metadata` URL; then, except when credentials were missing (RFC 6750
    /// §3.1: no error information then), `error` and `error_description`; and for
    /// `insufficient_scope`, the `scope` the request needs.
    ///
    /// Values are written as quoted strings holding only the characters RFC 6750 allows in
    /// them (printable ASCII without `"` and `\`, and for `scope` no space inside one scope);
    /// anything else is left out, so no value can end the header, start another attribute
    /// or inject a line.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{ApiKeys, AuthErrorKind};
    /// let url = "https://gw.example/.well-known/oauth-protected-resource/mcp";
    /// let e = ApiKeys::new().verify("x").unwrap_err();
    /// assert_eq!(
    ///     e.www_authenticate(url, &[]),
    ///     format!(r#"Bearer resource_metadata="{url}", error="invalid_token", error_description="API key not recognised""#)
    /// );
    /// let who = ApiKeys::new().key(ApiKeys::sha256("k"), "bot", ["a"]).verify("k").unwrap();
    /// let e = who.require_scopes(&["a".into(), "mcp:tools".into()]).unwrap_err();
    /// let scopes = ["a".to_owned(), "mcp:tools".to_owned()];
    /// assert!(e.www_authenticate(url, &scopes).ends_with(r#", scope="a mcp:tools""#));
    /// ```
    pub fn www_authenticate(
        &self,
        resource_metadata_url: &str,
        required_scopes: &[String],
    ) -> String {
        let mut out = String::from("Bearer resource_metadata=");
        quoted(&mut out, resource_metadata_url, url_char);
        if self.0.kind == AuthErrorKind::Missing {
            return out;
        }
        out.push_str(", error=");
        quoted(&mut out, self.error_code(), description_char);
        out.push_str(", error_description=");
        quoted(&mut out, &self.0.message, description_char);
        if self.0.kind == AuthErrorKind::InsufficientScope {
            out.push_str(", scope=\"");
            let mut first = true;
            for s in required_scopes {
                if !s.is_empty() && s.chars().all(scope_char) {
                    if !first {
                        out.push(' ');
                    }
                    out.push_str(s);
                    first = false;
                }
            }
            out.push('"');
        }
        out
    }
}

/// Appends `s` as a quoted string, keeping only the characters `keep` allows.
fn quoted(out: &mut String, s: &str, keep: fn(char) -> bool) {
    out.push('"');
    out.extend(s.chars().filter(|&c| keep(c)));
    out.push('"');
}

/// RFC 6750 §3 `error` and `error_description`: %x20-21 / %x23-5B / %x5D-7E.
fn description_char(c: char) -> bool {
    matches!(c, ' '..='~') && c != '"' && c != '\\'
}

/// RFC 6750 §3 `scope` tokens (NQCHAR): %x21 / %x23-5B / %x5D-7E.
pub(crate) fn scope_char(c: char) -> bool {
    matches!(c, '!'..='~') && c != '"' && c != '\\'
}

/// A URL in a quoted string: visible ASCII without `"` and `\`.
fn url_char(c: char) -> bool {
    scope_char(c)
}

impl fmt::Display for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl fmt::Debug for AuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AuthError")
            .field("kind", &self.0.kind)
            .field("message", &self.0.message)
            .finish()
    }
}

impl std::error::Error for AuthError {}

/// Decodes base64url without padding, strictly: `=` and non-canonical trailing bits refused.
pub(crate) fn b64url(s: &str) -> Option<Vec<u8>> {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()
}

/// Whether `s` is a usable name (a subject, a client id): 1 to 256 characters, no control
/// characters.
pub(crate) fn usable_name(s: &str) -> bool {
    !s.is_empty() && s.chars().count() <= 256 && !s.chars().any(char::is_control)
}

// The fronts share these across connection tasks.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Identity>();
    shared::<AuthError>();
    shared::<Jwks>();
    shared::<Verifier>();
    shared::<ApiKeys>();
    shared::<AuthConfig>();
    shared::<Authenticator>();
};

#[cfg(test)]
mod tests {
    use super::*;

    const URL: &str = "https://gw.example/.well-known/oauth-protected-resource";

    #[test]
    fn statuses_and_codes_follow_rfc_6750() {
        let e = |k| AuthError::new(k, "m");
        assert_eq!(e(AuthErrorKind::InsufficientScope).status(), 403);
        for k in [
            AuthErrorKind::Missing,
            AuthErrorKind::Malformed,
            AuthErrorKind::Expired,
            AuthErrorKind::Signature,
            AuthErrorKind::Jwks,
        ] {
            assert_eq!(e(k).status(), 401, "{k:?}");
        }
        assert_eq!(e(AuthErrorKind::Missing).error_code(), "invalid_request");
        assert_eq!(e(AuthErrorKind::Malformed).error_code(), "invalid_request");
        assert_eq!(
            e(AuthErrorKind::MalformedToken).error_code(),
            "invalid_token"
        );
        assert_eq!(e(AuthErrorKind::Audience).error_code(), "invalid_token");
        assert_eq!(
            e(AuthErrorKind::InsufficientScope).error_code(),
            "insufficient_scope"
        );
    }

    #[test]
    fn challenges_have_the_documented_shape() {
        let missing = AuthError::new(AuthErrorKind::Missing, "no bearer token");
        assert_eq!(
            missing.www_authenticate(URL, &["a".into()]),
            format!("Bearer resource_metadata=\"{URL}\"")
        );
        let expired = AuthError::new(AuthErrorKind::Expired, "token expired");
        assert_eq!(
            expired.www_authenticate(URL, &[]),
            format!(
                "Bearer resource_metadata=\"{URL}\", error=\"invalid_token\", \
                 error_description=\"token expired\""
            )
        );
        let scope = AuthError::new(AuthErrorKind::InsufficientScope, "need more");
        assert_eq!(
            scope.www_authenticate(URL, &["mcp:tools".into(), "b".into()]),
            format!(
                "Bearer resource_metadata=\"{URL}\", error=\"insufficient_scope\", \
                 error_description=\"need more\", scope=\"mcp:tools b\""
            )
        );
    }

    #[test]
    fn challenge_values_cannot_inject_attributes_or_lines() {
        let nasty = AuthError::new(
            AuthErrorKind::Signature,
            "x\", error=\"none\r\nSet-Cookie: a=b\\ é\u{7f}",
        );
        let h = nasty.www_authenticate("https://a/\"\r\n, x=\"y", &["ok".into()]);
        assert_eq!(
            h,
            "Bearer resource_metadata=\"https://a/,x=y\", error=\"invalid_token\", \
             error_description=\"x, error=noneSet-Cookie: a=b \""
        );
        assert!(h.bytes().all(|b| (0x20..0x7f).contains(&b)), "{h}");
        // Exactly the quotes the writer put there: three attributes, six quotes.
        assert_eq!(h.matches('"').count(), 6);
        let scope = AuthError::new(AuthErrorKind::InsufficientScope, "m");
        let h = scope.www_authenticate(URL, &["a\"b".into(), "c d".into(), "e".into()]);
        assert!(h.ends_with(", scope=\"e\""), "{h}");
    }

    #[test]
    fn names_are_snake_case_and_distinct() {
        let kinds = [
            AuthErrorKind::Missing,
            AuthErrorKind::Malformed,
            AuthErrorKind::TooLong { limit: 1 },
            AuthErrorKind::MalformedToken,
            AuthErrorKind::Algorithm,
            AuthErrorKind::Critical,
            AuthErrorKind::UnknownKey,
            AuthErrorKind::Signature,
            AuthErrorKind::Expired,
            AuthErrorKind::NotYetValid,
            AuthErrorKind::Issuer,
            AuthErrorKind::Audience,
            AuthErrorKind::InsufficientScope,
            AuthErrorKind::ApiKey,
            AuthErrorKind::Jwks,
        ];
        let mut names: Vec<_> = kinds.iter().map(|k| k.name()).collect();
        assert!(names
            .iter()
            .all(|n| n.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')));
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), kinds.len());
    }

    #[test]
    fn base64url_is_strict() {
        assert_eq!(b64url("YWJj").as_deref(), Some(&b"abc"[..]));
        assert_eq!(b64url("YWI").as_deref(), Some(&b"ab"[..]));
        assert_eq!(b64url("YWI="), None); // padding
        assert_eq!(b64url("YWJ"), None); // non-canonical trailing bits
        assert_eq!(b64url("YW+j"), None); // standard alphabet
        assert_eq!(b64url("Y"), None);
        assert_eq!(b64url("").as_deref(), Some(&b""[..]));
        assert!(usable_name("ci-bot") && !usable_name("") && !usable_name("a\nb"));
        assert!(usable_name(&"x".repeat(256)) && !usable_name(&"x".repeat(257)));
    }
}
