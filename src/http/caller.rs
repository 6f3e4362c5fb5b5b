//! Who is calling, for both network fronts (`serve` and the MCP Streamable HTTP front): the
//! `auth` section's checks applied to every request before anything else is done with it,
//! the RFC 9728 Protected Resource Metadata document served at its well-known path, and the
//! key set of a `jwks_url` fetched and kept fresh.
//!
//! Refusals follow RFC 6750 §3 and the MCP authorization specification: `401` with
//! `WWW-Authenticate: Bearer resource_metadata="…"` (and `error="invalid_token"` or
//! `"invalid_request"` when a credential was sent), `403` with `error="insufficient_scope"`
//! and the scopes needed. A token in the query string (`access_token=`) is refused (OAuth 2.1
//! §5.2.2 forbids it): URLs end up in logs.
//!
//! The key set of a `jwks_url` is fetched when the front starts (a failure is reported and
//! retried, every JWT refused meanwhile), then every [`JWKS_REFRESH`], and at once when a
//! token names a key the set does not hold (at most once per [`JWKS_MIN_INTERVAL`], so
//! tokens with made-up key ids cannot make the front hammer the identity provider). The
//! document is bounded (64 KiB) and must come within [`JWKS_TIMEOUT`].

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::{HeaderMap, Method, Request};
use http_body_util::{BodyExt, Empty, Limited};
use tokio::sync::Notify;

use super::connect::{self, Target};
use crate::auth::{AuthError, AuthErrorKind, Authenticator, Identity, Jwks};
use crate::tls::ClientTlsOptions;

/// How often the key set of a `jwks_url` is fetched again.
pub const JWKS_REFRESH: Duration = Duration::from_secs(600);
/// The shortest time between two fetches of the key set.
pub const JWKS_MIN_INTERVAL: Duration = Duration::from_secs(30);
/// Time for one fetch of the key set (connect, request, the whole answer).
pub const JWKS_TIMEOUT: Duration = Duration::from_secs(5);

/// What the guard says of one request.
pub(crate) enum Checked {
    /// The metadata document was asked for: answer it (JSON), nothing else.
    Metadata(String),
    /// Who is calling.
    Caller(Identity),
    /// Refused: the status, the `WWW-Authenticate` value, the error's name for the audit.
    Refused {
        status: u16,
        challenge: String,
        kind: &'static str,
    },
}

/// The checks of a front's `auth` section.
pub(crate) struct Guard {
    auth: Arc<Authenticator>,
    /// Wakes the key-set fetcher (a `jwks_url` only).
    refetch: Option<Arc<Notify>>,
}

impl Guard {
    /// The guard of `auth`; with a `jwks_url`, starts fetching it (call inside the runtime).
    /// Returns once the first fetch succeeded or failed (the failure is on stderr).
    pub(crate) async fn start(auth: Authenticator) -> Result<Guard, String> {
        let auth = Arc::new(auth);
        let refetch = match auth.config().jwks_url() {
            None => None,
            Some(url) => {
                let up = super::parse_upstream(url).map_err(|e| format!("auth/jwks_url: {e}"))?;
                let tls = if up.tls {
                    Some(
                        ClientTlsOptions::new()
                            .build()
                            .map_err(|e| format!("auth/jwks_url: {e}"))?,
                    )
                } else {
                    None
                };
                let target = Target::new(&up, tls.as_ref())?;
                let fetcher = Fetcher {
                    auth: Arc::clone(&auth),
                    target,
                    host: up.host_header.clone(),
                    path: up.path.clone(),
                    last: Mutex::new(None),
                };
                let notify = Arc::new(Notify::new());
                fetcher.fetch_and_report().await;
                let wake = Arc::clone(&notify);
                tokio::spawn(async move { fetcher.run(wake).await });
                Some(notify)
            }
        };
        Ok(Guard { auth, refetch })
    }

    /// Checks one request: its method, path, query and headers.
    pub(crate) fn check(
        &self,
        method: &Method,
        path: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Checked {
        let config = self.auth.config();
        if path == config.well_known_path() && (method == Method::GET || method == Method::HEAD) {
            return Checked::Metadata(config.resource_metadata_document());
        }
        if query.is_some_and(|q| {
            q.split('&')
                .any(|kv| kv.split('=').next() == Some("access_token"))
        }) {
            let e = AuthError::new(
                AuthErrorKind::Malformed,
                "a token in the query string is not accepted",
            );
            return self.refused(&e);
        }
        let mut values = headers.get_all(http::header::AUTHORIZATION).iter();
        let first = values.next();
        if values.next().is_some() {
            let e = AuthError::new(
                AuthErrorKind::Malformed,
                "more than one Authorization header",
            );
            return self.refused(&e);
        }
        match self
            .auth
            .authenticate(first.map(http::HeaderValue::as_bytes), now())
        {
            Ok(who) => Checked::Caller(who),
            Err(e) => {
                if e.kind() == AuthErrorKind::UnknownKey {
                    if let Some(n) = &self.refetch {
                        n.notify_one();
                    }
                }
                self.refused(&e)
            }
        }
    }

    fn refused(&self, e: &AuthError) -> Checked {
        Checked::Refused {
            status: e.status(),
            challenge: self.auth.challenge(e),
            kind: e.kind().name(),
        }
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Fetches a `jwks_url` into the authenticator.
struct Fetcher {
    auth: Arc<Authenticator>,
    target: Target,
    host: String,
    path: String,
    /// When the last fetch started.
    last: Mutex<Option<Instant>>,
}

impl Fetcher {
    async fn run(self, wake: Arc<Notify>) {
        let mut failures = 0u32;
        loop {
            // After a failure, again soon (1 s, doubling, at most the refresh period).
            let wait = if failures == 0 {
                JWKS_REFRESH
            } else {
                Duration::from_secs(1 << failures.min(9)).min(JWKS_REFRESH)
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = wake.notified() => {}
            }
            let recent = self
                .last
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .is_some_and(|t| t.elapsed() < JWKS_MIN_INTERVAL);
            if recent {
                tokio::time::sleep(JWKS_MIN_INTERVAL).await;
            }
            if self.fetch_and_report().await {
                failures = 0;
            } else {
                failures = failures.saturating_add(1);
            }
        }
    }

    async fn fetch_and_report(&self) -> bool {
        *self.last.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
        match tokio::time::timeout(JWKS_TIMEOUT, self.fetch()).await {
            Ok(Ok(jwks)) => {
                self.auth.set_jwks(jwks);
                true
            }
            Ok(Err(e)) => {
                eprintln!("jsongate: the key set of auth/jwks_url was not read: {e}");
                false
            }
            Err(_) => {
                eprintln!("jsongate: the key set of auth/jwks_url was not read: no answer in time");
                false
            }
        }
    }

    async fn fetch(&self) -> Result<Jwks, String> {
        let mut sender = connect::open::<Empty<Bytes>>(&self.target, JWKS_TIMEOUT)
            .await
            .map_err(|kind| format!("cannot connect ({kind})"))?;
        let req = Request::get(self.path.as_str())
            .header(http::header::HOST, self.host.as_str())
            .header(http::header::ACCEPT, "application/json")
            .body(Empty::new())
            .map_err(|e| e.to_string())?;
        let res = sender
            .send_request(req)
            .await
            .map_err(|_| "connection reset before the answer".to_owned())?;
        if !res.status().is_success() {
            return Err(format!("status {}", res.status().as_u16()));
        }
        let max = crate::auth::jwk::MAX_JWKS_BYTES;
        let body = Limited::new(res.into_body(), max)
            .collect()
            .await
            .map_err(|_| format!("the answer is broken off or larger than {max} bytes"))?
            .to_bytes();
        Jwks::from_slice(&body).map_err(|e| e.message().to_owned())
    }
}
