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

/// The gateway schema (`benches/schemas/gateway.schema.json`) compiled by jsongate and by
/// jsonschema, with the limits both benches use.
pub fn gateway_schema() -> (
    jsongate::Schema,
    jsongate::Limits,
    std::sync::Arc<jsonschema::Validator>,
) {
    let text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/gateway.schema.json"
    ))
    .unwrap();
    let schema = jsongate::Schema::compile(&text).unwrap();
    let json: serde_json::Value = serde_json::from_slice(&text).unwrap();
    let peer = std::sync::Arc::new(jsonschema::validator_for(&json).unwrap());
    (schema, jsongate::Limits::new().max_bytes(1 << 20), peer)
}

/// The tool service behind each way of gating it that the benches compare.
pub struct Layers {
    /// `JsonGateLayer::new()`: no rule, frames pass through.
    pub pass: jsongate::http::JsonGate<Tool>,
    /// The schema, `Mode::Hold`.
    pub hold: jsongate::http::JsonGate<Tool>,
    /// `Check::Limits` only, `Mode::Hold`.
    pub hold_limits: jsongate::http::JsonGate<Tool>,
    /// The schema, `Mode::Stream`.
    pub stream: jsongate::http::JsonGate<Tool>,
    /// Buffer the body, then serde_json + jsonschema.
    pub buffered: Buffered,
}

/// Every way of gating the tool that answers `doc`.
pub fn layers(doc: &Bytes) -> Layers {
    use jsongate::http::{Check, JsonGateLayer, Mode};
    use tower_layer::Layer;
    let (schema, limits, peer) = gateway_schema();
    let tool = Tool(doc.clone());
    let check = || Check::Schema {
        schema: schema.clone(),
        limits,
    };
    Layers {
        pass: JsonGateLayer::new().layer(tool.clone()),
        hold: JsonGateLayer::new()
            .responses(check(), Mode::Hold)
            .layer(tool.clone()),
        hold_limits: JsonGateLayer::new()
            .responses(Check::Limits(limits), Mode::Hold)
            .layer(tool.clone()),
        stream: JsonGateLayer::new()
            .responses(check(), Mode::Stream)
            .layer(tool.clone()),
        buffered: Buffered {
            inner: tool,
            validator: peer,
        },
    }
}
