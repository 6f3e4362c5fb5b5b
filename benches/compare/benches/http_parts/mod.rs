//! The pieces the HTTP layer bench and the instruction counter share: an in-process tool
//! service answering a document in 16 KiB frames, the buffer + serde_json + jsonschema layer
//! that gateways use today, and one request's round trip through a service.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use tower_service::Service;

pub const FRAME: usize = 16 * 1024;

/// A body of a document's frames (shared bytes: slicing costs no copy).
pub struct Frames(pub Bytes, pub usize);

impl Body for Frames {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let at = self.1;
        if at >= self.0.len() {
            return Poll::Ready(None);
        }
        let end = (at + FRAME).min(self.0.len());
        self.1 = end;
        Poll::Ready(Some(Ok(Frame::data(self.0.slice(at..end)))))
    }
}

/// The inner service: answers the document.
#[derive(Clone)]
pub struct Tool(pub Bytes);

impl<B> Service<Request<B>> for Tool {
    type Response = Response<Frames>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Response<Frames>, Infallible>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, _: Request<B>) -> Self::Future {
        let mut r = Response::new(Frames(self.0.clone(), 0));
        r.headers_mut().insert(
            "content-type",
            http::HeaderValue::from_static("application/json"),
        );
        std::future::ready(Ok(r))
    }
}

/// Buffer, parse into a `serde_json::Value`, validate with `jsonschema`: the usual gateway.
#[derive(Clone)]
pub struct Buffered {
    pub inner: Tool,
    pub validator: std::sync::Arc<jsonschema::Validator>,
}

impl Service<Request<Full<Bytes>>> for Buffered {
    type Response = Response<Full<Bytes>>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Full<Bytes>>, Infallible>>>>;
    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }
    fn call(&mut self, req: Request<Full<Bytes>>) -> Self::Future {
        let fut = self.inner.call(req);
        let v = std::sync::Arc::clone(&self.validator);
        Box::pin(async move {
            let (parts, body) = fut.await?.into_parts();
            let bytes = body.collect().await?.to_bytes();
            let ok = serde_json::from_slice::<serde_json::Value>(&bytes)
                .is_ok_and(|value| v.is_valid(&value));
            let body = if ok {
                bytes
            } else {
                Bytes::from_static(b"refused")
            };
            Ok(Response::from_parts(parts, Full::new(body)))
        })
    }
}

pub async fn roundtrip<S, B>(svc: &mut S) -> Bytes
where
    S: Service<Request<Full<Bytes>>, Response = Response<B>>,
    S::Error: std::fmt::Debug,
    B: Body,
    B::Error: std::fmt::Debug,
{
    let req = Request::get("/tool").body(Full::new(Bytes::new())).unwrap();
    let res = svc.call(req).await.unwrap();
    res.into_body().collect().await.unwrap().to_bytes()
}
