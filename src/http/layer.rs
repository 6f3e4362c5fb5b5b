//! The `tower` layer ([`JsonGateLayer`]) and its service ([`JsonGate`]): which rule applies to
//! each direction, early refusal from the headers, holding or streaming the body, and the
//! replacement responses.
//!
//! It decides from headers and body bytes only; it never reads past a verdict (a held body
//! is dropped at its first violation) and never forwards a held body before the verdict.

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http::header::{
    HeaderMap, HeaderName, HeaderValue, CONTENT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE,
};
use http::{Request, Response, StatusCode};
use http_body::Body;
use http_body_util::BodyExt;
use tower_layer::Layer;
use tower_service::Service;

use super::body::{GatedBody, Streaming};
use super::engine::{Check, Pool, Refusal};
use crate::gate::{self, AuditRecord, Delivery, FailureCode, Gate, Timestamp};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How a checked body travels.
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use jsongate::http::{Check, JsonGateLayer, Mode};
/// use jsongate::Limits;
/// // Streamed: frames pass as they are checked; a violation aborts the body with an error.
/// let layer = JsonGateLayer::new().responses(Check::Limits(Limits::new()), Mode::Stream);
/// let res = rt.block_on(layer.layer(Upstream(r#"{"a":1,"a":2}"#)).call(get())).unwrap();
/// assert_eq!(res.status(), 200); // the head left before the body was judged
/// let err = rt.block_on(res.into_body().collect()).unwrap_err();
/// assert_eq!(err.refusal().map(|r| r.kind.as_str()), Some("duplicate_name"));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Withhold the body until its verdict (at most `max_bytes` are held); a refused body is
    /// replaced by a response of the layer's own.
    #[default]
    Hold,
    /// Forward data frames as they pass the engine; at a violation the body ends with an
    /// error (the message is aborted), never with a clean end.
    Stream,
}

/// Which body a [`Report`] is about.
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use std::sync::{Arc, Mutex};
/// use jsongate::http::{Check, Direction, JsonGateLayer, Mode};
/// use jsongate::Limits;
/// let dirs: Arc<Mutex<Vec<Direction>>> = Arc::default();
/// let log = Arc::clone(&dirs);
/// let layer = JsonGateLayer::new()
///     .requests(Check::Limits(Limits::new()), Mode::Hold)
///     .responses(Check::Limits(Limits::new()), Mode::Hold)
///     .on_report(move |r| log.lock().unwrap().push(r.direction));
/// let mut req = Request::new(Full::new(Bytes::from_static(b"{}")));
/// req.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// rt.block_on(layer.layer(Upstream("{}")).call(req)).unwrap();
/// assert_eq!(*dirs.lock().unwrap(), [Direction::Request, Direction::Response]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// A request body, on its way to the inner service.
    Request,
    /// A response body, on its way to the client.
    Response,
}

/// What the layer decided about one body, for operators.
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use std::sync::{Arc, Mutex};
/// use jsongate::http::{Check, JsonGateLayer, Mode, Report};
/// use jsongate::Limits;
/// let seen: Arc<Mutex<Option<Report>>> = Arc::default();
/// let log = Arc::clone(&seen);
/// let layer = JsonGateLayer::new()
///     .responses(Check::Limits(Limits::new()), Mode::Hold)
///     .on_report(move |r| *log.lock().unwrap() = Some(r.clone()));
/// rt.block_on(layer.layer(Upstream(r#"{"ok":true}"#)).call(get())).unwrap();
/// let r = seen.lock().unwrap().clone().unwrap();
/// assert!(r.accepted && r.refusal.is_none());
/// assert_eq!(r.bytes, 11);
/// ```
#[derive(Clone, Debug)]
pub struct Report {
    /// Which body.
    pub direction: Direction,
    /// Whether it was let through.
    pub accepted: bool,
    /// Why not, when it was refused.
    pub refusal: Option<Refusal>,
    /// Body bytes read.
    pub bytes: u64,
    /// The status of the layer's replacement response, when it sent one (held bodies).
    pub status: Option<StatusCode>,
    /// The gate's audit record (responses under a contract).
    pub audit: Option<AuditRecord>,
}

pub(crate) type Reporter = Arc<dyn Fn(&Report) + Send + Sync>;

#[derive(Clone)]
enum ResponseRule {
    Check(Check, Mode, Arc<Pool>),
    Gate(Arc<Gate>),
}

#[derive(Clone, Default)]
struct Config {
    requests: Option<(Check, Mode, Arc<Pool>)>,
    responses: Option<ResponseRule>,
    request_id_header: Option<HeaderName>,
    reporter: Option<Reporter>,
}

/// A `tower` layer that gates request and response bodies with the jsongate engine.
///
/// Each rule names a [`Check`] (limits, or a schema and limits) and a [`Mode`]; responses may
/// instead go through a gate [`Contract`](crate::gate::Contract), in which case the client
/// always receives the gate's envelope (success or failure), never the upstream's bytes. A
/// body whose `Content-Length` exceeds `max_bytes`, or whose `Content-Type` is not JSON
/// (`application/json` or `application/*+json`), is refused before a byte of it is read.
///
/// Replacement responses: a refused response is a `502` (`text/plain`), or under a
/// contract the failure envelope with `404` (`NOT_FOUND`), `429` (`RATE_LIMITED`) or `502`;
/// a refused request is answered `413` (too large), `415` (not JSON) or `400` without
/// calling the inner service. A request without a body (`Content-Length: 0` or none, and
/// already at its end) is not checked.
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use jsongate::http::{Check, JsonGateLayer, Mode};
/// use jsongate::{Limits, Schema};
/// let schema = Schema::compile(br#"{"type":"object","additionalProperties":false}"#).unwrap();
/// let layer = JsonGateLayer::new()
///     .responses(Check::Schema { schema, limits: Limits::new().max_bytes(1 << 20) }, Mode::Hold)
///     .requests(Check::Limits(Limits::new().max_bytes(64 * 1024)), Mode::Hold);
/// // `Upstream` is any tower service: here one that answers with an injected field.
/// let mut svc = layer.layer(Upstream(r#"{"admin_override":true}"#));
/// let res = rt.block_on(svc.call(get())).unwrap();
/// assert_eq!(res.status(), 502); // refused: the client never sees the upstream's bytes
/// let body = rt.block_on(res.into_body().collect()).unwrap().to_bytes();
/// assert!(!String::from_utf8_lossy(&body).contains("admin_override"));
/// ```
#[derive(Clone, Default)]
pub struct JsonGateLayer {
    config: Arc<Config>,
}

impl std::fmt::Debug for JsonGateLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonGateLayer").finish_non_exhaustive()
    }
}

impl JsonGateLayer {
    /// A layer that checks nothing yet.
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use jsongate::http::JsonGateLayer;
    /// // Without a rule, bodies pass unchecked.
    /// let mut svc = JsonGateLayer::new().layer(Upstream("not json"));
    /// let res = rt.block_on(svc.call(get())).unwrap();
    /// let body = rt.block_on(res.into_body().collect()).unwrap().to_bytes();
    /// assert_eq!(&body[..], b"not json");
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    fn with(mut self, f: impl FnOnce(&mut Config)) -> Self {
        f(Arc::make_mut(&mut self.config));
        self
    }

    /// Checks response bodies.
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use jsongate::http::{Check, JsonGateLayer, Mode};
    /// use jsongate::Limits;
    /// let layer = JsonGateLayer::new().responses(Check::Limits(Limits::new()), Mode::Hold);
    /// let ok = rt.block_on(layer.layer(Upstream(r#"{"a":1}"#)).call(get())).unwrap();
    /// assert_eq!(ok.status(), 200);
    /// let dup = rt.block_on(layer.layer(Upstream(r#"{"a":1,"a":2}"#)).call(get())).unwrap();
    /// assert_eq!(dup.status(), 502);
    /// ```
    #[must_use]
    pub fn responses(self, check: Check, mode: Mode) -> Self {
        // A new rule gets a pool of its own (engines are built for one check).
        self.with(|c| c.responses = Some(ResponseRule::Check(check, mode, Arc::default())))
    }

    /// Gates response bodies with a compiled contract (always held: the client receives the
    /// envelope). The gate's request is taken from the request's extensions when the
    /// embedder put a [`gate::Request`] there; otherwise its id comes from
    /// [`request_id_header`](Self::request_id_header) or is issued by the layer, and its
    /// context holds only the clock.
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use jsongate::gate::{Contract, Gate};
    /// use jsongate::http::JsonGateLayer;
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"status","version":"1",
    ///   "upstream":[{"version":"v1","schema":{"type":"object"}}],
    ///   "fields":{"state":{"pointer":"/state"}}}"#, std::path::Path::new("."))?;
    /// let layer = JsonGateLayer::new()
    ///     .contract(Gate::new(&contract)?)
    ///     .request_id_header(http::HeaderName::from_static("x-request-id"));
    /// let mut req = get();
    /// req.headers_mut().insert("x-request-id", "r-9".parse().unwrap());
    /// let res = rt.block_on(layer.layer(Upstream(r#"{"state":"up","secret":1}"#)).call(req)).unwrap();
    /// let body = rt.block_on(res.into_body().collect()).unwrap().to_bytes();
    /// assert_eq!(&body[..], br#"{"tool":"status","request_id":"r-9","outcome":"success","data":{"state":"up"}}"#);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    #[must_use]
    pub fn contract(self, gate: Gate) -> Self {
        self.with(|c| c.responses = Some(ResponseRule::Gate(Arc::new(gate))))
    }

    /// Checks request bodies (tool-call arguments on their way to the inner service).
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use jsongate::http::{Check, JsonGateLayer, Mode};
    /// use jsongate::Limits;
    /// let layer = JsonGateLayer::new().requests(Check::Limits(Limits::new().max_depth(2)), Mode::Hold);
    /// let mut req = Request::new(Full::new(Bytes::from_static(b"[[[1]]]")));
    /// req.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// let res = rt.block_on(layer.layer(Upstream("{}")).call(req)).unwrap();
    /// assert_eq!(res.status(), 400); // answered by the layer; the inner service is not called
    /// ```
    #[must_use]
    pub fn requests(self, check: Check, mode: Mode) -> Self {
        self.with(|c| c.requests = Some((check, mode, Arc::default())))
    }

    /// Takes the gate's request id from this request header (set by the caller, never by
    /// the upstream); without it the layer issues one.
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use jsongate::gate::{Contract, Gate};
    /// use jsongate::http::JsonGateLayer;
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// let layer = JsonGateLayer::new()
    ///     .contract(Gate::new(&contract)?)
    ///     .request_id_header(http::HeaderName::from_static("x-call-id"));
    /// let mut req = get();
    /// req.headers_mut().insert("x-call-id", "call-1".parse().unwrap());
    /// let res = rt.block_on(layer.layer(Upstream("{}")).call(req)).unwrap();
    /// let body = rt.block_on(res.into_body().collect()).unwrap().to_bytes();
    /// assert!(String::from_utf8_lossy(&body).contains(r#""request_id":"call-1""#));
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    #[must_use]
    pub fn request_id_header(self, name: HeaderName) -> Self {
        self.with(|c| c.request_id_header = Some(name))
    }

    /// Calls `f` once per checked body with the decision.
    ///
    /// # Example
    /// ```
    /// # use std::convert::Infallible;
    /// # use std::future::{ready, Ready};
    /// # use std::task::{Context, Poll};
    /// # use bytes::Bytes;
    /// # use http::{Request, Response};
    /// # use http_body_util::{BodyExt, Full};
    /// # use tower_layer::Layer;
    /// # use tower_service::Service;
    /// # /// An upstream that answers every request with the same JSON body.
    /// # #[derive(Clone)]
    /// # struct Upstream(&'static str);
    /// # impl<B> Service<Request<B>> for Upstream {
    /// #     type Response = Response<Full<Bytes>>;
    /// #     type Error = Infallible;
    /// #     type Future = Ready<Result<Self::Response, Infallible>>;
    /// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
    /// #         Poll::Ready(Ok(()))
    /// #     }
    /// #     fn call(&mut self, _: Request<B>) -> Self::Future {
    /// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
    /// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
    /// #         ready(Ok(res))
    /// #     }
    /// # }
    /// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
    /// # let get = || Request::new(Full::new(Bytes::new()));
    /// use std::sync::{Arc, Mutex};
    /// use jsongate::http::{Check, Direction, JsonGateLayer, Mode, Report};
    /// use jsongate::Limits;
    /// let seen: Arc<Mutex<Vec<Report>>> = Arc::default();
    /// let log = Arc::clone(&seen);
    /// let layer = JsonGateLayer::new()
    ///     .responses(Check::Limits(Limits::new()), Mode::Hold)
    ///     .on_report(move |r| log.lock().unwrap().push(r.clone()));
    /// rt.block_on(layer.layer(Upstream("[1,]")).call(get())).unwrap();
    /// let r = seen.lock().unwrap()[0].clone();
    /// assert_eq!((r.direction, r.accepted), (Direction::Response, false));
    /// assert_eq!(r.refusal.unwrap().kind, "syntax");
    /// ```
    #[must_use]
    pub fn on_report(self, f: impl Fn(&Report) + Send + Sync + 'static) -> Self {
        self.with(|c| c.reporter = Some(Arc::new(f)))
    }
}

impl<S> Layer<S> for JsonGateLayer {
    type Service = JsonGate<S>;

    fn layer(&self, inner: S) -> JsonGate<S> {
        JsonGate {
            inner,
            config: Arc::clone(&self.config),
        }
    }
}

/// The service built by [`JsonGateLayer`].
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use jsongate::http::{Check, JsonGate, JsonGateLayer, Mode};
/// use jsongate::Limits;
/// let mut svc: JsonGate<Upstream> = JsonGateLayer::new()
///     .responses(Check::Limits(Limits::new()), Mode::Hold)
///     .layer(Upstream("[]"));
/// assert_eq!(rt.block_on(svc.call(get())).unwrap().status(), 200);
/// ```
#[derive(Clone)]
pub struct JsonGate<S> {
    inner: S,
    config: Arc<Config>,
}

impl<S: std::fmt::Debug> std::fmt::Debug for JsonGate<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonGate")
            .field("inner", &self.inner)
            .finish_non_exhaustive()
    }
}

/// The response future of [`JsonGate`].
///
/// # Example
/// ```
/// # use std::convert::Infallible;
/// # use std::future::{ready, Ready};
/// # use std::task::{Context, Poll};
/// # use bytes::Bytes;
/// # use http::{Request, Response};
/// # use http_body_util::{BodyExt, Full};
/// # use tower_layer::Layer;
/// # use tower_service::Service;
/// # /// An upstream that answers every request with the same JSON body.
/// # #[derive(Clone)]
/// # struct Upstream(&'static str);
/// # impl<B> Service<Request<B>> for Upstream {
/// #     type Response = Response<Full<Bytes>>;
/// #     type Error = Infallible;
/// #     type Future = Ready<Result<Self::Response, Infallible>>;
/// #     fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
/// #         Poll::Ready(Ok(()))
/// #     }
/// #     fn call(&mut self, _: Request<B>) -> Self::Future {
/// #         let mut res = Response::new(Full::new(Bytes::from_static(self.0.as_bytes())));
/// #         res.headers_mut().insert("content-type", "application/json".parse().unwrap());
/// #         ready(Ok(res))
/// #     }
/// # }
/// # let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// # let get = || Request::new(Full::new(Bytes::new()));
/// use jsongate::http::{Check, JsonGateLayer, Mode, ResponseFuture};
/// use jsongate::Limits;
/// let mut svc = JsonGateLayer::new().responses(Check::Limits(Limits::new()), Mode::Hold).layer(Upstream("{}"));
/// let fut: ResponseFuture<Full<Bytes>, Infallible> = svc.call(get());
/// let res = rt.block_on(fut).unwrap();
/// assert_eq!(res.status(), 200);
/// assert_eq!(rt.block_on(res.into_body().collect()).unwrap().to_bytes(), "{}");
/// ```
pub type ResponseFuture<B, E> =
    Pin<Box<dyn Future<Output = Result<Response<GatedBody<B>>, E>> + Send>>;

impl<S, ReqB, ResB> Service<Request<ReqB>> for JsonGate<S>
where
    S: Service<Request<GatedBody<ReqB>>, Response = Response<ResB>> + Clone + Send + 'static,
    S::Future: Send,
    S::Error: Send,
    ReqB: Body + Send + 'static,
    ReqB::Data: Send,
    ReqB::Error: Into<BoxError>,
    ResB: Body + Send + 'static,
    ResB::Data: Send,
    ResB::Error: Into<BoxError>,
{
    type Response = Response<GatedBody<ResB>>;
    type Error = S::Error;
    type Future = ResponseFuture<ResB, S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqB>) -> Self::Future {
        // The ready service handles this request; a fresh clone waits for the next one.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        let config = Arc::clone(&self.config);
        Box::pin(async move {
            let (mut parts, body) = req.into_parts();
            let gate_req = match &config.responses {
                Some(ResponseRule::Gate(gate)) => Some(gate_request(&config, gate, &parts)),
                _ => None,
            };
            let body = match &config.requests {
                None => GatedBody::pass(body),
                Some(_) if without_body(&parts.headers, &body) => GatedBody::pass(body),
                Some((check, mode, pool)) => {
                    match request_body(&config, check, *mode, pool, &mut parts.headers, body).await
                    {
                        Ok(b) => b,
                        Err(r) => return Ok(refused_request(&config, r)),
                    }
                }
            };
            let res = inner.call(Request::from_parts(parts, body)).await?;
            Ok(match &config.responses {
                None => res.map(GatedBody::pass),
                Some(ResponseRule::Check(check, mode, pool)) => {
                    response_body(&config, check, *mode, pool, res).await
                }
                Some(ResponseRule::Gate(gate)) => {
                    let req = gate_req
                        .unwrap_or_else(|| gate::Request::new(&gate::issue_request_id(), clock()));
                    gated_response(&config, gate, &req, res).await
                }
            })
        })
    }
}

fn clock() -> gate::Context {
    gate::Context::new().now(Timestamp::now())
}

/// The gate's request: the embedder's, or one with the caller's id when the contract accepts
/// it ([`Gate::accepts_request_id`]), else an issued one.
fn gate_request(config: &Config, gate: &Gate, parts: &http::request::Parts) -> gate::Request {
    if let Some(r) = parts.extensions.get::<gate::Request>() {
        return r.clone();
    }
    let given = config
        .request_id_header
        .as_ref()
        .and_then(|h| parts.headers.get(h))
        .and_then(|v| v.to_str().ok())
        .filter(|v| gate.accepts_request_id(v));
    match given {
        Some(id) => gate::Request::new(id, clock()),
        None => gate::Request::new(&gate::issue_request_id(), clock()),
    }
}

/// Whether a media type is JSON: `application/json` or `application/*+json`, any parameters.
///
/// # Example
/// ```
/// use http::HeaderValue;
/// use jsongate::http::is_json_content_type;
/// assert!(is_json_content_type(&HeaderValue::from_static("application/json; charset=utf-8")));
/// assert!(is_json_content_type(&HeaderValue::from_static("application/problem+json")));
/// assert!(!is_json_content_type(&HeaderValue::from_static("text/html")));
/// ```
pub fn is_json_content_type(value: &HeaderValue) -> bool {
    let Ok(v) = value.to_str() else {
        return false;
    };
    let essence = v
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    essence == "application/json"
        || essence
            .strip_prefix("application/")
            .is_some_and(|sub| sub.ends_with("+json") && sub.len() > 5)
}

/// The refusal a body's headers already decide: a declared length over `max_bytes`, a
/// content type that is not JSON.
pub(crate) fn early_refusal(headers: &HeaderMap, max_bytes: u64) -> Option<Refusal> {
    match headers.get(CONTENT_TYPE) {
        Some(ct) if is_json_content_type(ct) => {}
        _ => return Some(Refusal::of("content_type")),
    }
    // A coded body (gzip, br, …) is not JSON to the scanner: refused by name, not as bytes
    // that fail to parse. `identity` is no coding (RFC 9110 §8.4).
    let coded = headers.get_all(CONTENT_ENCODING).iter().any(|v| {
        v.to_str().map_or(true, |v| {
            v.split(',')
                .any(|c| !c.trim().eq_ignore_ascii_case("identity") && !c.trim().is_empty())
        })
    });
    if coded {
        return Some(Refusal::of("content_encoding"));
    }
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    match declared {
        Some(n) if n > max_bytes => Some(Refusal::of("too_large")),
        _ => None,
    }
}

fn without_body<B: Body>(headers: &HeaderMap, body: &B) -> bool {
    let declared = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    body.is_end_stream() && matches!(declared, None | Some(0))
}

/// Reads a body whole through the engine; stops at the first violation.
pub(crate) async fn hold<B>(body: B, check: &Check, pool: &Pool) -> Result<Bytes, Refusal>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut engine = pool.take(check);
    let r = hold_with(body, &mut engine).await;
    pool.give(engine);
    r
}

async fn hold_with<B>(body: B, engine: &mut super::engine::Engine) -> Result<Bytes, Refusal>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut body = pin!(body);
    let mut first: Option<Bytes> = None;
    let mut rest = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(Refusal::of("body_error").at(engine.bytes_read()));
        };
        let Ok(mut data) = frame.into_data() else {
            continue;
        };
        let data = data_bytes(&mut data);
        engine.feed(&data)?;
        // One frame is kept as it is; more are joined.
        match &first {
            None if rest.is_empty() => first = Some(data),
            _ => {
                if let Some(f) = first.take() {
                    rest.extend_from_slice(&f);
                }
                rest.extend_from_slice(&data);
            }
        }
    }
    engine.finish()?;
    Ok(first.unwrap_or_else(|| rest.freeze()))
}

fn data_bytes<D: bytes::Buf>(d: &mut D) -> Bytes {
    let n = d.remaining();
    d.copy_to_bytes(n)
}

fn report(config: &Config, r: &Report) {
    if let Some(f) = &config.reporter {
        f(r);
    }
}

async fn request_body<B>(
    config: &Config,
    check: &Check,
    mode: Mode,
    pool: &Arc<Pool>,
    headers: &mut HeaderMap,
    body: B,
) -> Result<GatedBody<B>, Refusal>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    if let Some(r) = early_refusal(headers, check.limits().get_max_bytes()) {
        return Err(r);
    }
    match mode {
        Mode::Stream => Ok(GatedBody::streaming(
            body,
            Streaming {
                engine: Some(pool.take(check)),
                pool: Some(Arc::clone(pool)),
                direction: Direction::Request,
                reporter: config.reporter.clone(),
                done: false,
            },
        )),
        Mode::Hold => {
            let bytes = hold(body, check, pool).await?;
            report(
                config,
                &Report {
                    direction: Direction::Request,
                    accepted: true,
                    refusal: None,
                    bytes: bytes.len() as u64,
                    status: None,
                    audit: None,
                },
            );
            set_length(headers, bytes.len());
            Ok(GatedBody::full(bytes))
        }
    }
}

fn set_length(headers: &mut HeaderMap, n: usize) {
    headers.remove(http::header::TRANSFER_ENCODING);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(n));
}

fn plain<B>(status: StatusCode, text: &'static str) -> Response<GatedBody<B>> {
    let mut res = Response::new(GatedBody::full(Bytes::from_static(text.as_bytes())));
    *res.status_mut() = status;
    res.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    set_length(res.headers_mut(), text.len());
    res
}

/// The status and text of a refused request body, by the refusal's kind (the layer's and
/// `serve`'s).
pub(crate) fn request_refusal(kind: &str) -> (StatusCode, &'static str) {
    match kind {
        "too_large" => (
            StatusCode::PAYLOAD_TOO_LARGE,
            "jsongate: the request body is too large\n",
        ),
        "content_type" => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "jsongate: the request body must be JSON\n",
        ),
        "content_encoding" => (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "jsongate: the request body must not be content-coded\n",
        ),
        _ => (
            StatusCode::BAD_REQUEST,
            "jsongate: the request body was refused\n",
        ),
    }
}

fn refused_request<B>(config: &Config, r: Refusal) -> Response<GatedBody<B>> {
    let (status, text) = request_refusal(&r.kind);
    report(
        config,
        &Report {
            direction: Direction::Request,
            accepted: false,
            bytes: r.offset.unwrap_or(0),
            refusal: Some(r),
            status: Some(status),
            audit: None,
        },
    );
    plain(status, text)
}

/// What a client gets for a response refused under a plain check.
const RESPONSE_REFUSED: &str = "jsongate: the upstream response was refused\n";

async fn response_body<B>(
    config: &Config,
    check: &Check,
    mode: Mode,
    pool: &Arc<Pool>,
    res: Response<B>,
) -> Response<GatedBody<B>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let refuse = |r: Refusal| {
        report(
            config,
            &Report {
                direction: Direction::Response,
                accepted: false,
                bytes: r.offset.unwrap_or(0),
                refusal: Some(r),
                status: Some(StatusCode::BAD_GATEWAY),
                audit: None,
            },
        );
        plain(StatusCode::BAD_GATEWAY, RESPONSE_REFUSED)
    };
    if let Some(r) = early_refusal(res.headers(), check.limits().get_max_bytes()) {
        return refuse(r);
    }
    let (mut parts, body) = res.into_parts();
    match mode {
        Mode::Stream => Response::from_parts(
            parts,
            GatedBody::streaming(
                body,
                Streaming {
                    engine: Some(pool.take(check)),
                    pool: Some(Arc::clone(pool)),
                    direction: Direction::Response,
                    reporter: config.reporter.clone(),
                    done: false,
                },
            ),
        ),
        Mode::Hold => match hold(body, check, pool).await {
            Ok(bytes) => {
                report(
                    config,
                    &Report {
                        direction: Direction::Response,
                        accepted: true,
                        refusal: None,
                        bytes: bytes.len() as u64,
                        status: None,
                        audit: None,
                    },
                );
                set_length(&mut parts.headers, bytes.len());
                Response::from_parts(parts, GatedBody::full(bytes))
            }
            Err(r) => refuse(r),
        },
    }
}

/// The status that goes with a gate failure code.
///
/// # Example
/// ```
/// use http::StatusCode;
/// use jsongate::gate::FailureCode;
/// use jsongate::http::failure_status;
/// assert_eq!(failure_status(FailureCode::NotFound), StatusCode::NOT_FOUND);
/// assert_eq!(failure_status(FailureCode::RateLimited), StatusCode::TOO_MANY_REQUESTS);
/// assert_eq!(failure_status(FailureCode::Stale), StatusCode::BAD_GATEWAY);
/// ```
pub fn failure_status(code: FailureCode) -> StatusCode {
    match code {
        FailureCode::NotFound => StatusCode::NOT_FOUND,
        FailureCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
        _ => StatusCode::BAD_GATEWAY,
    }
}

/// The response that carries a gate decision: the envelope, with its status.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, FailureCode, Gate, Request};
/// use jsongate::http::envelope_response;
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
/// let d = Gate::new(&contract)?.refused(FailureCode::NotFound, "lookup", &Request::new("r-1", Context::new()));
/// let res = envelope_response::<http_body_util::Empty<bytes::Bytes>>(&d);
/// assert_eq!(res.status(), 404);
/// assert_eq!(res.headers()["content-type"], "application/json");
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub fn envelope_response<B>(d: &Delivery) -> Response<GatedBody<B>> {
    let status = d.envelope.code().map_or(StatusCode::OK, failure_status);
    let mut res = Response::new(GatedBody::full(Bytes::from(d.output.clone())));
    *res.status_mut() = status;
    res.headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    set_length(res.headers_mut(), d.output.len());
    res
}

/// Gates a response body (held) and returns the envelope response.
pub(crate) async fn gate_decision<B>(gate: &Gate, req: &gate::Request, res: Response<B>) -> Delivery
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let mut session = gate.session();
    let Ok(mut feed) = session.start(req) else {
        // The request lacks what a check needs: nothing from the upstream can pass.
        return gate.refused(FailureCode::InvalidResponse, "request_context", req);
    };
    // A refused authorisation is not a response to gate: its body is not read, and the agent
    // is told a new authorisation decision is needed.
    if matches!(res.status().as_u16(), 401 | 403) {
        return gate.refused(FailureCode::Unauthorized, "upstream_unauthorized", req);
    }
    let max = gate.contract().limits().get_max_bytes();
    if let Some(r) = early_refusal(res.headers(), max) {
        return feed.refuse(FailureCode::InvalidResponse, &r.kind);
    }
    let mut body = pin!(res.into_body());
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return feed.fail_transport("body_error");
        };
        if let Ok(mut data) = frame.into_data() {
            let data = data_bytes(&mut data);
            if feed.feed(&data) == crate::Flow::Stop {
                // Decided: the rest of the body is not read.
                return feed.finish();
            }
        }
    }
    feed.finish()
}

async fn gated_response<B>(
    config: &Config,
    gate: &Gate,
    req: &gate::Request,
    res: Response<B>,
) -> Response<GatedBody<B>>
where
    B: Body,
    B::Error: Into<BoxError>,
{
    let d = gate_decision(gate, req, res).await;
    let out = envelope_response(&d);
    report(
        config,
        &Report {
            direction: Direction::Response,
            accepted: d.audit.accepted,
            refusal: None,
            bytes: d.audit.bytes,
            status: Some(out.status()),
            audit: Some(d.audit),
        },
    );
    out
}
