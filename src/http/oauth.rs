//! The front's own OAuth 2.1 credential for an upstream: the client credentials grant
//! (RFC 6749 §4.4, OAuth 2.1 §4.2) against the upstream's token endpoint, the access token
//! cached until shortly before it expires and sent as `Authorization: Bearer …` on every
//! upstream request. It is jsongate's token, issued to jsongate for the upstream (with
//! `resource`, RFC 8707), never a caller's.
//!
//! The token is fetched when the front starts (a failure is reported and retried: upstream
//! requests go without a token meanwhile and the upstream refuses them), then again when
//! [`REFRESH_AT`] of its lifetime has passed, and at once when the upstream answers `401`
//! (at most once per [`MIN_INTERVAL`]). The client authenticates with HTTP Basic
//! (`client_secret_basic`, each part form-encoded first as RFC 6749 §2.3.1 asks); its secret
//! comes from an environment variable or a file and is never printed. The token endpoint's
//! answer is bounded (64 KiB) and must come within [`TIMEOUT`]; only `access_token`,
//! `token_type` (`Bearer`, any case) and `expires_in` are read.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Request};
use http_body_util::{BodyExt, Full, Limited};
use tokio::sync::Notify;

use super::connect::{self, Target};
use super::Upstream;
use crate::json::Value;
use crate::tls::ClientTls;
use crate::Limits;

/// Time for one token request (connect, request, the whole answer).
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// The shortest time between two token requests.
pub const MIN_INTERVAL: Duration = Duration::from_secs(5);
/// The share of a token's lifetime after which a new one is fetched.
pub const REFRESH_AT: f64 = 0.8;
/// Largest token endpoint answer read.
const MAX_ANSWER: usize = 64 * 1024;
/// A token without `expires_in` is used for this long.
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

/// How to get the token: the endpoint, the client, what to ask for.
#[derive(Clone)]
pub struct ClientCredentials {
    token_url: Upstream,
    client_id: String,
    secret: String,
    scope: Option<String>,
    resource: Option<String>,
    tls: Option<ClientTls>,
}

impl fmt::Debug for ClientCredentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCredentials")
            .field("token_url", &self.token_url.host_header)
            .field("client_id", &self.client_id)
            .field("scope", &self.scope)
            .field("resource", &self.resource)
            .finish_non_exhaustive()
    }
}

/// `application/x-www-form-urlencoded` (the WHATWG form encoding: space as `+`, everything
/// but `*-._` and alphanumerics escaped).
fn form(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => {
                out.push(char::from(b));
            }
            b' ' => out.push('+'),
            _ => {
                const HEX: &[u8; 16] = b"0123456789ABCDEF";
                out.push('%');
                out.push(char::from(HEX[usize::from(b >> 4)]));
                out.push(char::from(HEX[usize::from(b & 15)]));
            }
        }
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl ClientCredentials {
    /// The grant at `token_url` (`https://`, or `http://` to loopback) for `client_id`, its
    /// secret from `secret_spec` (`env:VAR` or `file:PATH`, relative to `dir`).
    ///
    /// # Errors
    /// The URL is not one (or plain HTTP to another host), the secret cannot be read, or
    /// an `https://` endpoint's TLS cannot be set up. Messages never contain the secret.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::ClientCredentials;
    /// std::env::set_var("DOC_CLIENT_SECRET", "s3cr3t");
    /// let c = ClientCredentials::new("https://idp.example/token", "gateway", "env:DOC_CLIENT_SECRET", std::path::Path::new("."))?
    ///     .scope("tickets:read")
    ///     .resource("https://tickets.example/mcp");
    /// assert!(!format!("{c:?}").contains("s3cr3t"));
    /// assert!(ClientCredentials::new("http://idp.example/token", "g", "env:DOC_CLIENT_SECRET", std::path::Path::new(".")).is_err());
    /// # Ok::<(), String>(())
    /// ```
    pub fn new(
        token_url: &str,
        client_id: &str,
        secret_spec: &str,
        dir: &std::path::Path,
    ) -> Result<ClientCredentials, String> {
        let up = super::parse_upstream(token_url).map_err(|e| format!("token_url: {e}"))?;
        up.check_plaintext(false)
            .map_err(|e| format!("token_url: {e}"))?;
        let secret = super::connect::secret_value("client_secret", secret_spec, dir)?;
        let tls = if up.tls {
            Some(
                crate::tls::ClientTlsOptions::new()
                    .build()
                    .map_err(|e| format!("token_url: {e}"))?,
            )
        } else {
            None
        };
        Ok(ClientCredentials {
            token_url: up,
            client_id: client_id.to_owned(),
            secret,
            scope: None,
            resource: None,
            tls,
        })
    }

    /// The scope asked for (space-separated). Default: none (the endpoint's default).
    #[must_use]
    pub fn scope(mut self, scope: &str) -> Self {
        self.scope = Some(scope.to_owned());
        self
    }

    /// The resource the token is for (RFC 8707 `resource`). Default: none.
    #[must_use]
    pub fn resource(mut self, resource: &str) -> Self {
        self.resource = Some(resource.to_owned());
        self
    }

    /// The TLS configuration for an `https://` token endpoint (default: the system's
    /// roots).
    #[must_use]
    pub fn tls(mut self, tls: ClientTls) -> Self {
        self.tls = Some(tls);
        self
    }

    /// The grant an `upstream_oauth` configuration object describes: `token_url`,
    /// `client_id`, `client_secret` (`env:VAR` or `file:PATH`, relative to `dir`), and
    /// optionally `scope` and `resource`.
    ///
    /// # Errors
    /// As [`new`](Self::new); a missing member is named.
    pub fn from_value(v: &Value, dir: &std::path::Path) -> Result<ClientCredentials, String> {
        let known = [
            "token_url",
            "client_id",
            "client_secret",
            "scope",
            "resource",
        ];
        for (k, _) in v.as_object().ok_or("not a JSON object")? {
            if !known.contains(&k.as_str()) {
                return Err(format!(
                    "unknown member '{k}' (known: {})",
                    known.join(", ")
                ));
            }
        }
        let s = |k: &str| v.get(k).and_then(Value::as_str);
        let need = |k: &str| s(k).ok_or_else(|| format!("{k} is required"));
        let mut c = ClientCredentials::new(
            need("token_url")?,
            need("client_id")?,
            need("client_secret")?,
            dir,
        )?;
        if let Some(x) = s("scope") {
            c = c.scope(x);
        }
        if let Some(x) = s("resource") {
            c = c.resource(x);
        }
        Ok(c)
    }

    fn body(&self) -> String {
        let mut b = String::from("grant_type=client_credentials");
        if let Some(s) = &self.scope {
            b.push_str("&scope=");
            b.push_str(&form(s));
        }
        if let Some(r) = &self.resource {
            b.push_str("&resource=");
            b.push_str(&form(r));
        }
        b
    }

    /// One token request: the token and its lifetime.
    async fn request(&self) -> Result<(HeaderValue, Duration), String> {
        let target = Target::new(&self.token_url, self.tls.as_ref())?;
        let mut sender = connect::open::<Full<Bytes>>(&target, TIMEOUT)
            .await
            .map_err(|kind| format!("cannot connect ({kind})"))?;
        let basic = format!("{}:{}", form(&self.client_id), form(&self.secret));
        let mut auth = HeaderValue::try_from(format!("Basic {}", base64(basic.as_bytes())))
            .map_err(|_| "the client id cannot be sent".to_owned())?;
        auth.set_sensitive(true);
        let req = Request::post(self.token_url.path.as_str())
            .header(http::header::HOST, self.token_url.host_header.as_str())
            .header(
                http::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .header(http::header::ACCEPT, "application/json")
            .header(http::header::AUTHORIZATION, auth)
            .body(Full::new(Bytes::from(self.body())))
            .map_err(|e| e.to_string())?;
        let res = sender
            .send_request(req)
            .await
            .map_err(|_| "connection reset before the answer".to_owned())?;
        let status = res.status();
        let body = Limited::new(res.into_body(), MAX_ANSWER)
            .collect()
            .await
            .map_err(|_| format!("the answer is broken off or larger than {MAX_ANSWER} bytes"))?
            .to_bytes();
        if !status.is_success() {
            // RFC 6749 §5.2: `error` is a fixed ASCII code; nothing else is repeated.
            let code = Value::parse(&body, Limits::new().max_bytes(MAX_ANSWER as u64))
                .ok()
                .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_owned))
                .filter(|c| {
                    c.len() <= 64 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                });
            return Err(match code {
                Some(c) => format!("status {}, error {c}", status.as_u16()),
                None => format!("status {}", status.as_u16()),
            });
        }
        parse_token_answer(&body)
    }
}

/// Reads a token endpoint's success answer (RFC 6749 §5.1): the `Authorization` value and the
/// token's lifetime.
///
/// # Errors
/// Not a JSON object, no `access_token` (a visible-ASCII string of at most 8 KiB), a
/// `token_type` other than `Bearer`, or an `expires_in` that is not a whole number of seconds.
///
/// # Example
/// ```
/// use jsongate::http::parse_token_answer;
/// let (v, life) = parse_token_answer(br#"{"access_token":"abc","token_type":"bearer","expires_in":60}"#)?;
/// assert_eq!((v.to_str().unwrap(), life.as_secs()), ("Bearer abc", 60));
/// assert!(parse_token_answer(br#"{"access_token":"abc","token_type":"mac"}"#).is_err());
/// assert!(parse_token_answer(br#"{"access_token":"a\nb","token_type":"Bearer"}"#).is_err());
/// # Ok::<(), String>(())
/// ```
pub fn parse_token_answer(body: &[u8]) -> Result<(HeaderValue, Duration), String> {
    let v = Value::parse(
        body,
        Limits::new()
            .max_bytes(MAX_ANSWER as u64)
            .max_depth(8)
            .max_string_bytes(16 * 1024),
    )
    .map_err(|e| format!("the answer is not JSON: {}", e.kind()))?;
    let token = v
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or("the answer has no access_token")?;
    if token.is_empty() || token.len() > 8192 || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "the access_token is not a token (empty, too long or not visible ASCII)".into(),
        );
    }
    match v.get("token_type").and_then(Value::as_str) {
        Some(t) if t.eq_ignore_ascii_case("bearer") => {}
        _ => return Err("the token_type is not Bearer".into()),
    }
    let life = match v.get("expires_in") {
        None => DEFAULT_LIFETIME,
        Some(e) => Duration::from_secs(
            e.as_u64()
                .ok_or("expires_in is not a whole number of seconds")?,
        ),
    };
    let mut value = HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| "the access_token is not a header value".to_owned())?;
    value.set_sensitive(true);
    Ok((value, life))
}

/// The current token of a [`ClientCredentials`] grant, kept fresh by a task.
pub(crate) struct TokenCache {
    current: Mutex<Option<HeaderValue>>,
    wake: Notify,
}

impl TokenCache {
    /// Fetches the first token (reporting a failure), then keeps it fresh in a task. Call
    /// inside the runtime.
    pub(crate) async fn start(grant: ClientCredentials, what: String) -> Arc<TokenCache> {
        let cache = Arc::new(TokenCache {
            current: Mutex::new(None),
            wake: Notify::new(),
        });
        let mut first = cache.fetch(&grant, &what).await;
        if first == Duration::ZERO {
            first = Duration::from_secs(1);
        }
        let me = Arc::clone(&cache);
        tokio::spawn(async move {
            let mut next = first;
            let mut failures = 0u32;
            let mut last = Instant::now();
            loop {
                tokio::select! {
                    () = tokio::time::sleep(next) => {}
                    () = me.wake.notified() => {
                        // At most one request per MIN_INTERVAL, however often it is refused.
                        tokio::time::sleep(MIN_INTERVAL.saturating_sub(last.elapsed())).await;
                    }
                }
                last = Instant::now();
                next = me.fetch(&grant, &what).await;
                if next == Duration::ZERO {
                    failures = failures.saturating_add(1);
                    next = Duration::from_secs(1 << failures.min(6));
                } else {
                    failures = 0;
                }
            }
        });
        cache
    }

    /// One fetch: the time until the next one (zero after a failure).
    async fn fetch(&self, grant: &ClientCredentials, what: &str) -> Duration {
        match tokio::time::timeout(TIMEOUT, grant.request()).await {
            Ok(Ok((value, life))) => {
                *self.current.lock().unwrap_or_else(PoisonError::into_inner) = Some(value);
                life.mul_f64(REFRESH_AT).max(MIN_INTERVAL)
            }
            Ok(Err(e)) => {
                eprintln!("jsongate: no token for {what} from its token endpoint: {e}");
                Duration::ZERO
            }
            Err(_) => {
                eprintln!(
                    "jsongate: no token for {what} from its token endpoint: no answer in time"
                );
                Duration::ZERO
            }
        }
    }

    /// Sets `Authorization` to the current token (none yet: the header is left out).
    pub(crate) fn apply(&self, headers: &mut HeaderMap) {
        if let Some(v) = self
            .current
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            headers.insert(http::header::AUTHORIZATION, v);
        }
    }

    /// The upstream refused the token (`401`): fetch a new one soon.
    pub(crate) fn refused(&self) {
        self.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_encoding_and_the_request_body() {
        assert_eq!(form("a b+c/é"), "a+b%2Bc%2F%C3%A9");
        assert_eq!(form("Az09*-._"), "Az09*-._");
        let c = ClientCredentials {
            token_url: super::super::parse_upstream("http://127.0.0.1:9/token").unwrap(),
            client_id: "gw".into(),
            secret: "s".into(),
            scope: Some("a b".into()),
            resource: Some("https://x.test/mcp".into()),
            tls: None,
        };
        assert_eq!(
            c.body(),
            "grant_type=client_credentials&scope=a+b&resource=https%3A%2F%2Fx.test%2Fmcp"
        );
    }

    #[test]
    fn token_answers_are_read_strictly() {
        let ok = |b: &str| parse_token_answer(b.as_bytes());
        assert_eq!(
            ok(r#"{"access_token":"t","token_type":"Bearer"}"#)
                .unwrap()
                .1,
            DEFAULT_LIFETIME
        );
        for bad in [
            "",
            "[]",
            r#"{"token_type":"Bearer"}"#,
            r#"{"access_token":"","token_type":"Bearer"}"#,
            r#"{"access_token":"a b","token_type":"Bearer"}"#,
            r#"{"access_token":"t"}"#,
            r#"{"access_token":"t","token_type":"Bearer","expires_in":"60"}"#,
            r#"{"access_token":"t","token_type":"Bearer","expires_in":-1}"#,
            r#"{"access_token":"t","access_token":"u","token_type":"Bearer"}"#,
        ] {
            assert!(ok(bad).is_err(), "{bad}");
        }
        let long = format!(
            r#"{{"access_token":"{}","token_type":"Bearer"}}"#,
            "a".repeat(8193)
        );
        assert!(ok(&long).is_err());
    }
}
