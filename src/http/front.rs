//! The server side both network fronts share (`jsongate serve` and the MCP Streamable HTTP
//! front): one accept loop with a connection cap, head limits and timeouts, graceful
//! shutdown, the `Host`/`Origin` checks against DNS rebinding and cross-site requests, and
//! the rate-limited lines that tell operators about upstream failures. With a
//! [`ServerTls`], every connection is TLS (the handshake bounded by the head timeout) and
//! the certificate is reloaded on `SIGHUP` and when its files change.
//!
//! What it owns and nothing more: it never reads a body, never judges a message, and knows
//! nothing of routes or sessions. A request that passes the checks goes to the front's own
//! handler as it came.
//!
//! `Host` (RFC 9110 §7.2, RFC 9112 §3.2): a request without one, or with more than one, or
//! with one that is not a valid authority, is answered `400`. A request whose host is not
//! allowed is answered `421 Misdirected Request`. With no allowlist, a listener on a loopback
//! address accepts only loopback names (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`),
//! which is what the MCP transport's DNS-rebinding warning asks for: after a rebinding the
//! browser still sends the attacker's name. A listener on another address accepts any host
//! unless an allowlist is given (the front says so once at start).
//!
//! `Origin` (the MCP transport's rule): when sent, it must be on the allowlist, else `403`;
//! requests without one (non-browser clients) pass.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use http::header::{HOST, ORIGIN};
use http::{HeaderMap, Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

use super::serve::ServerLimits;
use crate::tls::ServerTls;

/// Which `Host` and `Origin` values a front accepts. See the [module docs](self).
#[derive(Clone, Debug, Default)]
pub(crate) struct HostPolicy {
    /// Allowed hosts, lower case, each a name or `name:port`; empty: the default for the
    /// listener's address.
    hosts: Vec<String>,
    /// With no allowlist: only loopback names (the listener is on loopback).
    loopback_only: bool,
    /// Allowed origins, exact (`scheme://host[:port]`, compared without regard to case).
    origins: Vec<String>,
}

/// Why a request's `Host` or `Origin` was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// No `Host`, several, or one that is not an authority: `400`.
    BadHost,
    /// A host that is not allowed: `421`.
    Host,
    /// An origin that is not allowed: `403`.
    Origin,
}

impl Refused {
    pub(crate) fn status(self) -> StatusCode {
        match self {
            Refused::BadHost => StatusCode::BAD_REQUEST,
            Refused::Host => StatusCode::MISDIRECTED_REQUEST,
            Refused::Origin => StatusCode::FORBIDDEN,
        }
    }

    pub(crate) fn text(self) -> &'static str {
        match self {
            Refused::BadHost => "jsongate: the request needs exactly one valid Host header\n",
            Refused::Host => "jsongate: host not allowed\n",
            Refused::Origin => "jsongate: origin not allowed\n",
        }
    }
}

/// Whether `host` (a name or an IP literal, brackets removed) names this machine's loopback.
fn loopback_name(host: &str) -> bool {
    let h = host.trim_end_matches('.');
    let b = h.as_bytes();
    h.eq_ignore_ascii_case("localhost")
        || b.len() > 10 && b[b.len() - 10..].eq_ignore_ascii_case(b".localhost")
        || h.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

impl HostPolicy {
    /// The policy for a listener on `addr` with these allowlists (either may be empty).
    pub(crate) fn new(addr: SocketAddr, hosts: &[String], origins: &[String]) -> HostPolicy {
        HostPolicy {
            hosts: hosts.iter().map(|h| h.to_ascii_lowercase()).collect(),
            loopback_only: addr.ip().is_loopback(),
            origins: origins.to_vec(),
        }
    }

    /// Whether any host is accepted (a non-loopback listener with no allowlist).
    pub(crate) fn accepts_any_host(&self) -> bool {
        self.hosts.is_empty() && !self.loopback_only
    }

    /// Checks a request's headers.
    pub(crate) fn check(&self, headers: &HeaderMap) -> Result<(), Refused> {
        let mut hosts = headers.get_all(HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(Refused::BadHost);
        };
        let authority = host
            .to_str()
            .ok()
            .and_then(|h| h.parse::<http::uri::Authority>().ok())
            .filter(|a| {
                !a.host().is_empty()
                    && !a.as_str().contains('@')
                    && (a.as_str().len() == a.host().len() || a.port_u16().is_some())
            })
            .ok_or(Refused::BadHost)?;
        let name = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']');
        let allowed = if self.hosts.is_empty() {
            !self.loopback_only || loopback_name(name)
        } else {
            let with_port = authority.as_str().to_ascii_lowercase();
            let name = name.to_ascii_lowercase();
            self.hosts.iter().any(|h| *h == name || *h == with_port)
        };
        if !allowed {
            return Err(Refused::Host);
        }
        match headers.get(ORIGIN) {
            None => Ok(()),
            Some(o) => {
                let ok = o
                    .to_str()
                    .is_ok_and(|o| self.origins.iter().any(|a| a.eq_ignore_ascii_case(o)));
                if ok {
                    Ok(())
                } else {
                    Err(Refused::Origin)
                }
            }
        }
    }
}

/// Serves connections from `listener` until `shutdown` resolves: at most
/// `limits.max_connections` at once (more wait in the listen backlog), each request's head
/// bounded in size, count and time; requests whose `Host` or `Origin` the policy refuses are
/// answered with `refuse(status, text)`, the others by `handler`. On shutdown it stops
/// accepting, lets in-flight requests finish for at most the grace period, and returns.
pub(crate) async fn serve_connections<H, F, B>(
    listener: TcpListener,
    tls: Option<ServerTls>,
    limits: ServerLimits,
    policy: HostPolicy,
    shutdown: impl Future<Output = ()>,
    refuse: fn(StatusCode, &'static str) -> Response<B>,
    handler: H,
) where
    H: Fn(Request<Incoming>) -> F + Send + Sync + 'static,
    F: Future<Output = Response<B>> + Send + 'static,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    if policy.accepts_any_host() {
        if let Ok(addr) = listener.local_addr() {
            eprintln!(
                "jsongate: {addr} is not a loopback address and no host allowlist is set: \
                 any Host is answered (DNS-rebinding protection needs an allowlist here)"
            );
        }
    }
    let acceptor = tls.map(|t| {
        crate::tls::watch(t.clone());
        tokio_rustls::TlsAcceptor::from(t.config())
    });
    let permits = Arc::new(Semaphore::new(limits.get_max_connections()));
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.get_header_timeout())
        .max_headers(limits.get_max_headers())
        .max_header_size(limits.get_max_header_bytes())
        .max_buf_size(limits.get_max_header_bytes().max(8192) + 8192);
    let builder = Arc::new(builder);
    let header_timeout = limits.get_header_timeout();
    let handler = Arc::new(handler);
    let policy = Arc::new(policy);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            () = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let (stream, _) = tokio::select! {
            () = &mut shutdown => break,
            a = listener.accept() => match a {
                Ok(a) => a,
                // Out of descriptors or a connection reset before accept: keep serving.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let builder = Arc::clone(&builder);
        let handler = Arc::clone(&handler);
        let policy = Arc::clone(&policy);
        let mut stop = stop_rx.clone();
        let acceptor = acceptor.clone();
        tokio::spawn(async move {
            let svc = hyper::service::service_fn(move |req: Request<Incoming>| {
                let checked = policy.check(req.headers());
                let handler = Arc::clone(&handler);
                async move {
                    Ok::<_, Infallible>(match checked {
                        Ok(()) => handler(req).await,
                        Err(r) => refuse(r.status(), r.text()),
                    })
                }
            });
            match acceptor {
                None => serve_one(&builder, TokioIo::new(stream), svc, &mut stop).await,
                Some(acceptor) => {
                    // The TLS handshake is part of the head: bounded by the same timeout.
                    let hs = tokio::time::timeout(header_timeout, acceptor.accept(stream));
                    let tls = tokio::select! {
                        r = hs => r,
                        () = stopped(&mut stop) => return drop(permit),
                    };
                    if let Ok(Ok(tls)) = tls {
                        serve_one(&builder, TokioIo::new(tls), svc, &mut stop).await;
                    }
                }
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    // Every permit back means every connection ended.
    let all = u32::try_from(limits.get_max_connections()).unwrap_or(u32::MAX);
    let _ = tokio::time::timeout(limits.get_shutdown_grace(), permits.acquire_many(all)).await;
}

/// Serves one connection until it ends, or, once the shutdown flag is set, until its
/// in-flight request is answered.
async fn serve_one<I, S, B>(
    builder: &hyper::server::conn::http1::Builder,
    io: I,
    svc: S,
    stop: &mut watch::Receiver<bool>,
) where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body<Data = bytes::Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let conn = builder.serve_connection(io, svc);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => {}
        () = stopped(stop) => {
            conn.as_mut().graceful_shutdown();
            let _ = conn.await;
        }
    }
}

/// Resolves once the shutdown flag is set (or its sender is gone).
async fn stopped(rx: &mut watch::Receiver<bool>) {
    let _ = rx.wait_for(|s| *s).await.map(|_| ());
}

/// How often one kind of upstream failure is written to standard error at most.
pub(crate) const FAILURE_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// Lines for operators about upstream failures, one per kind at most every
/// [`FAILURE_LOG_INTERVAL`], with the count of those not written since. Kinds and
/// authorities only: never a header, a message or upstream text.
#[derive(Default)]
pub(crate) struct FailureLog {
    /// By kind: when it was last written, and how many came since.
    seen: Mutex<HashMap<&'static str, (Instant, u64)>>,
}

impl FailureLog {
    /// Notes one failure of `kind` reaching `upstream`; returns the line when one is due
    /// (and writes it to standard error).
    pub(crate) fn note(&self, upstream: &str, kind: &'static str) -> Option<String> {
        let now = Instant::now();
        let mut seen = self.seen.lock().unwrap_or_else(PoisonError::into_inner);
        let line = match seen.get_mut(kind) {
            Some((at, more)) if now.duration_since(*at) < FAILURE_LOG_INTERVAL => {
                *more += 1;
                return None;
            }
            Some((at, more)) => {
                let n = std::mem::take(more);
                *at = now;
                format!("jsongate: upstream {upstream}: {kind} ({n} more since the last line)")
            }
            None => {
                seen.insert(kind, (now, 0));
                format!("jsongate: upstream {upstream}: {kind}")
            }
        };
        eprintln!("{line}");
        Some(line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn loopback_listeners_accept_only_loopback_hosts() {
        let p = HostPolicy::new("127.0.0.1:8080".parse().unwrap(), &[], &[]);
        for ok in [
            "localhost",
            "localhost:8080",
            "LOCALHOST.:1",
            "127.0.0.1:8080",
            "127.9.9.9",
            "[::1]:8080",
            "app.localhost:3000",
        ] {
            assert_eq!(p.check(&headers(&[("host", ok)])), Ok(()), "{ok}");
        }
        for bad in [
            "rebind.attacker.example",
            "rebind.attacker.example:8080",
            "10.0.0.1:8080",
            "localhost.attacker.example",
            "evil-localhost",
            "[::2]:8080",
        ] {
            assert_eq!(
                p.check(&headers(&[("host", bad)])),
                Err(Refused::Host),
                "{bad}"
            );
        }
        assert!(!p.accepts_any_host());
    }

    #[test]
    fn a_request_needs_exactly_one_valid_host() {
        let p = HostPolicy::new("127.0.0.1:1".parse().unwrap(), &[], &[]);
        for h in [
            headers(&[]),
            headers(&[("host", "localhost"), ("host", "localhost")]),
            headers(&[("host", "")]),
            headers(&[("host", "user@localhost")]),
            headers(&[("host", "local host")]),
            headers(&[("host", "localhost:port")]),
        ] {
            assert_eq!(p.check(&h), Err(Refused::BadHost), "{h:?}");
        }
    }

    #[test]
    fn allowlists_name_hosts_with_or_without_port() {
        let hosts = [
            "gw.example.com".to_owned(),
            "api.example.com:8443".to_owned(),
        ];
        let p = HostPolicy::new("0.0.0.0:8443".parse().unwrap(), &hosts, &[]);
        assert_eq!(p.check(&headers(&[("host", "GW.example.com:1")])), Ok(()));
        assert_eq!(
            p.check(&headers(&[("host", "api.example.com:8443")])),
            Ok(())
        );
        assert_eq!(
            p.check(&headers(&[("host", "api.example.com:80")])),
            Err(Refused::Host)
        );
        assert_eq!(
            p.check(&headers(&[("host", "localhost")])),
            Err(Refused::Host)
        );
        // No allowlist on a public listener: any host, and it says so.
        let open = HostPolicy::new("0.0.0.0:1".parse().unwrap(), &[], &[]);
        assert!(open.accepts_any_host());
        assert_eq!(
            open.check(&headers(&[("host", "anything.example")])),
            Ok(())
        );
    }

    #[test]
    fn origins_must_be_listed_when_sent() {
        let origins = ["http://localhost:6274".to_owned()];
        let p = HostPolicy::new("127.0.0.1:1".parse().unwrap(), &[], &origins);
        let h = |o: &str| headers(&[("host", "localhost"), ("origin", o)]);
        assert_eq!(p.check(&h("http://localhost:6274")), Ok(()));
        assert_eq!(p.check(&h("HTTP://LOCALHOST:6274")), Ok(()));
        assert_eq!(p.check(&h("http://evil.example")), Err(Refused::Origin));
        assert_eq!(p.check(&h("null")), Err(Refused::Origin));
        assert_eq!(p.check(&headers(&[("host", "localhost")])), Ok(()));
    }

    #[test]
    fn failure_lines_are_rate_limited_per_kind() {
        let log = FailureLog::default();
        assert_eq!(
            log.note("127.0.0.1:9", "connection refused").as_deref(),
            Some("jsongate: upstream 127.0.0.1:9: connection refused")
        );
        assert_eq!(log.note("127.0.0.1:9", "connection refused"), None);
        assert!(log.note("127.0.0.1:9", "HTTP 500").is_some());
        // Once the interval passed, the next line counts those not written.
        log.seen
            .lock()
            .unwrap()
            .get_mut("connection refused")
            .unwrap()
            .0 -= FAILURE_LOG_INTERVAL;
        assert_eq!(
            log.note("127.0.0.1:9", "connection refused").as_deref(),
            Some("jsongate: upstream 127.0.0.1:9: connection refused (1 more since the last line)")
        );
    }
}
