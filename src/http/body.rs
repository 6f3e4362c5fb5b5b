//! The body the layer hands on ([`GatedBody`]): a body passed through untouched, a held body
//! released whole after its verdict (or the replacement that stands for it), or a streaming
//! body whose data frames are fed to the engine as they pass and which ends with an error at
//! the first violation.
//!
//! It must never end cleanly after a violation: a streaming body that was refused, or that
//! ended before its document did, yields a [`BodyError`] of kind [`Refused`](BodyErrorKind::Refused), so hyper aborts the message
//! (no final chunk, or fewer bytes than `Content-Length`) and the peer cannot take a truncated
//! body for a whole one.

use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Body, Frame, SizeHint};
use pin_project_lite::pin_project;

use super::engine::{Engine, Pool, Refusal};
use super::layer::{Direction, Report, Reporter};

/// The error a gated body ends with: refused by the gate, or the wrapped body failed.
///
/// # Example
/// ```
/// use jsongate::http::{BodyError, BodyErrorKind, Refusal};
/// let e = BodyError::refused(Refusal::of("schema"));
/// assert_eq!(e.kind(), BodyErrorKind::Refused);
/// assert_eq!(e.refusal().map(|r| r.kind.as_str()), Some("schema"));
/// assert!(e.to_string().contains("schema"));
/// assert!(std::error::Error::source(&e).is_some());
/// let e = BodyError::inner(std::io::Error::other("reset"));
/// assert_eq!((e.kind(), e.to_string().as_str()), (BodyErrorKind::Inner, "body error: reset"));
/// ```
#[derive(Debug)]
pub struct BodyError(Box<BodyInner>);

#[derive(Debug)]
enum BodyInner {
    Refused(Refusal),
    Inner(Box<dyn std::error::Error + Send + Sync>),
}

/// What kind of failure a [`BodyError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BodyErrorKind {
    /// The body was refused while it streamed (or ended before its document did).
    Refused,
    /// The wrapped body failed (its error is the [`source`](std::error::Error::source)).
    Inner,
}

impl BodyError {
    /// A body refused by the gate.
    pub fn refused(refusal: Refusal) -> BodyError {
        BodyError(Box::new(BodyInner::Refused(refusal)))
    }

    /// A body whose wrapped body failed with `e`.
    pub fn inner(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> BodyError {
        BodyError(Box::new(BodyInner::Inner(e.into())))
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> BodyErrorKind {
        match *self.0 {
            BodyInner::Refused(_) => BodyErrorKind::Refused,
            BodyInner::Inner(_) => BodyErrorKind::Inner,
        }
    }

    /// The gate's refusal ([`BodyErrorKind::Refused`]).
    pub fn refusal(&self) -> Option<&Refusal> {
        match &*self.0 {
            BodyInner::Refused(r) => Some(r),
            BodyInner::Inner(_) => None,
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.0 {
            BodyInner::Refused(r) => r.fmt(f),
            BodyInner::Inner(e) => write!(f, "body error: {e}"),
        }
    }
}

impl std::error::Error for BodyError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.0 {
            BodyInner::Refused(r) => Some(r),
            BodyInner::Inner(e) => Some(&**e),
        }
    }
}

/// State of a streaming body.
pub(crate) struct Streaming {
    /// Always present until the body is dropped (then it goes back to its pool).
    pub(crate) engine: Option<Engine>,
    pub(crate) pool: Option<Arc<Pool>>,
    pub(crate) direction: Direction,
    pub(crate) reporter: Option<Reporter>,
    pub(crate) done: bool,
}

impl Streaming {
    fn report(&mut self, refusal: Option<&Refusal>) {
        if let Some(r) = self.reporter.take() {
            r(&Report {
                direction: self.direction,
                accepted: refusal.is_none(),
                refusal: refusal.cloned(),
                bytes: self.engine.as_ref().map_or(0, Engine::bytes_read),
                status: None,
                audit: None,
            });
        }
    }
}

impl Drop for Streaming {
    fn drop(&mut self) {
        if let (Some(pool), Some(engine)) = (self.pool.take(), self.engine.take()) {
            pool.give(engine);
        }
    }
}

pin_project! {
    /// A body behind the layer. See the [module documentation](self).
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
    /// use jsongate::http::{BodyErrorKind, Check, GatedBody, JsonGateLayer, Mode};
    /// use jsongate::Limits;
    /// let layer = JsonGateLayer::new().responses(Check::Limits(Limits::new().max_depth(2)), Mode::Stream);
    /// let body: GatedBody<Full<Bytes>> = rt.block_on(layer.layer(Upstream("[[1]]")).call(get())).unwrap().into_body();
    /// assert_eq!(rt.block_on(body.collect()).unwrap().to_bytes(), "[[1]]"); // passed as it streamed
    /// let body = rt.block_on(layer.layer(Upstream("[[[1]]]")).call(get())).unwrap().into_body();
    /// let err = rt.block_on(body.collect()).unwrap_err(); // ends with an error, never cleanly
    /// assert_eq!(err.kind(), BodyErrorKind::Refused);
    /// ```
    pub struct GatedBody<B> {
        #[pin]
        kind: Kind<B>,
    }
}

pin_project! {
    #[project = KindProj]
    enum Kind<B> {
        // Not checked (the layer has no rule for this direction).
        Pass {
            #[pin]
            inner: B,
        },
        // Checked while it streams.
        Stream {
            #[pin]
            inner: B,
            state: Box<Streaming>,
        },
        // Read whole and judged: the held bytes, or the replacement.
        Held {
            bytes: Option<Bytes>,
        },
    }
}

impl<B> GatedBody<B> {
    /// A held body (or a replacement) of `bytes`.
    ///
    /// # Example
    /// ```
    /// use http_body::Body;
    /// use jsongate::http::GatedBody;
    /// let b: GatedBody<http_body_util::Empty<bytes::Bytes>> = GatedBody::full("{}");
    /// assert_eq!(b.size_hint().exact(), Some(2));
    /// ```
    pub fn full(bytes: impl Into<Bytes>) -> Self {
        GatedBody {
            kind: Kind::Held {
                bytes: Some(bytes.into()),
            },
        }
    }

    /// `inner`, passed through unchecked.
    ///
    /// # Example
    /// ```
    /// use http_body::Body;
    /// use http_body_util::Full;
    /// use jsongate::http::GatedBody;
    /// let b = GatedBody::pass(Full::new(bytes::Bytes::from_static(b"[1]")));
    /// assert_eq!(b.size_hint().exact(), Some(3));
    /// ```
    pub fn pass(inner: B) -> Self {
        GatedBody {
            kind: Kind::Pass { inner },
        }
    }

    pub(crate) fn streaming(inner: B, state: Streaming) -> Self {
        GatedBody {
            kind: Kind::Stream {
                inner,
                state: Box::new(state),
            },
        }
    }
}

impl<B: fmt::Debug> fmt::Debug for GatedBody<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Pass { inner } => f.debug_struct("Pass").field("inner", inner).finish(),
            Kind::Stream { inner, .. } => f
                .debug_struct("Stream")
                .field("inner", inner)
                .finish_non_exhaustive(),
            Kind::Held { bytes } => f
                .debug_struct("Held")
                .field("len", &bytes.as_ref().map_or(0, Bytes::len))
                .finish(),
        }
    }
}

impl<B> Body for GatedBody<B>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.project().kind.project() {
            KindProj::Held { bytes } => Poll::Ready(
                bytes
                    .take()
                    .filter(|b| !b.is_empty())
                    .map(|b| Ok(Frame::data(b))),
            ),
            KindProj::Pass { inner } => match inner.poll_frame(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(None) => Poll::Ready(None),
                Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(BodyError::inner(e)))),
                Poll::Ready(Some(Ok(f))) => Poll::Ready(Some(Ok(to_bytes(f)))),
            },
            KindProj::Stream { inner, state } => {
                if state.done {
                    return Poll::Ready(None);
                }
                let frame = match inner.poll_frame(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(f) => f,
                };
                Poll::Ready(step(state, frame))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.kind {
            Kind::Held { bytes } => bytes.as_ref().is_none_or(Bytes::is_empty),
            Kind::Pass { inner } => inner.is_end_stream(),
            // The end of a streaming body is only known once the engine saw it.
            Kind::Stream { state, .. } => state.done,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            Kind::Held { bytes } => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Kind::Pass { inner } | Kind::Stream { inner, .. } => inner.size_hint(),
        }
    }
}

/// How one step of a streaming body ended, before it is reported.
enum Stepped {
    Frame(Frame<Bytes>),
    End,
    Refused(Refusal),
    Broken(Box<dyn std::error::Error + Send + Sync>, u64),
}

/// One step of a streaming body: feed a data frame, check the end.
fn step<D: Buf, E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    state: &mut Streaming,
    frame: Option<Result<Frame<D>, E>>,
) -> Option<Result<Frame<Bytes>, BodyError>> {
    let Some(engine) = state.engine.as_mut() else {
        state.done = true;
        return None;
    };
    let stepped = match frame {
        None => match engine.finish() {
            Ok(()) => Stepped::End,
            Err(r) => Stepped::Refused(r),
        },
        // The wrapped body broke: the document is not whole.
        Some(Err(e)) => Stepped::Broken(e.into(), engine.bytes_read()),
        Some(Ok(frame)) => {
            let frame = to_bytes(frame);
            let checked = match frame.data_ref() {
                Some(data) => engine.feed(data),
                // Trailers end the body: the document must be complete before they pass.
                None => engine.finish(),
            };
            match checked {
                Ok(()) => Stepped::Frame(frame),
                Err(r) => Stepped::Refused(r),
            }
        }
    };
    match stepped {
        Stepped::Frame(f) => {
            if !f.is_data() {
                state.report(None);
            }
            Some(Ok(f))
        }
        Stepped::End => {
            state.done = true;
            state.report(None);
            None
        }
        Stepped::Refused(r) => {
            state.done = true;
            state.report(Some(&r));
            Some(Err(BodyError::refused(r)))
        }
        Stepped::Broken(e, at) => {
            state.done = true;
            state.report(Some(&Refusal::of("body_error").at(at)));
            Some(Err(BodyError::inner(e)))
        }
    }
}

fn to_bytes<D: Buf>(frame: Frame<D>) -> Frame<Bytes> {
    frame.map_data(|mut d| d.copy_to_bytes(d.remaining()))
}
