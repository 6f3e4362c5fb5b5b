//! Runs one operation N times, for counting instructions with callgrind (`instructions.sh`
//! runs it with 1 and with N+1 calls and prints the difference per call): the HTTP layer's
//! modes around an in-process tool service (as in `benches/http.rs`), buffer + serde_json +
//! jsonschema, and jsongate's scan and validate alone, on the gateway tool result of about
//! LEN bytes.
//!
//!     cargo run --release --example calls -- MODE LEN N
//!
//! MODE: pass, hold, holdlimits (Hold with `Check::Limits`, no schema), stream, buffered,
//! scan, validate.

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame};
use http_body_util::{BodyExt, Full};
use jsongate::http::{Check, JsonGateLayer, Mode};
use jsongate::{Limits, Schema, Validator};
use tower_layer::Layer;
use tower_service::Service;

#[path = "../../docgen/mod.rs"]
mod docgen;

const FRAME: usize = 16 * 1024;

/// A body of a document's frames (shared bytes: slicing costs no copy).
struct Frames(Bytes, usize);

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
struct Tool(Bytes);

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
struct Buffered {
    inner: Tool,
    validator: std::sync::Arc<jsonschema::Validator>,
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

async fn roundtrip<S, B>(svc: &mut S) -> Bytes
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

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args[1].as_str();
    let len: usize = args[2].parse().unwrap();
    let n: usize = args[3].parse().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let schema_text = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../schemas/gateway.schema.json"
    ))
    .unwrap();
    let schema = Schema::compile(&schema_text).unwrap();
    let limits = Limits::new().max_bytes(1 << 20);
    let json: serde_json::Value = serde_json::from_slice(&schema_text).unwrap();
    let peer = std::sync::Arc::new(jsonschema::validator_for(&json).unwrap());
    let doc = Bytes::from(docgen::gateway_result(len));
    let tool = Tool(doc.clone());
    let check = || Check::Schema {
        schema: schema.clone(),
        limits,
    };
    let mut pass = JsonGateLayer::new().layer(tool.clone());
    let mut hold = JsonGateLayer::new()
        .responses(check(), Mode::Hold)
        .layer(tool.clone());
    let mut holdl = JsonGateLayer::new()
        .responses(Check::Limits(limits), Mode::Hold)
        .layer(tool.clone());
    let mut stream = JsonGateLayer::new()
        .responses(check(), Mode::Stream)
        .layer(tool.clone());
    let mut buffered = Buffered {
        inner: tool.clone(),
        validator: std::sync::Arc::clone(&peer),
    };
    let mut v = Validator::new(&schema);
    let mut total = 0usize;
    for _ in 0..n {
        total += match mode {
            "pass" => rt.block_on(roundtrip(&mut pass)).len(),
            "hold" => rt.block_on(roundtrip(&mut hold)).len(),
            "holdlimits" => rt.block_on(roundtrip(&mut holdl)).len(),
            "stream" => rt.block_on(roundtrip(&mut stream)).len(),
            "buffered" => rt.block_on(roundtrip(&mut buffered)).len(),
            "scan" => {
                jsongate::check(black_box(&doc), limits).unwrap();
                doc.len()
            }
            "validate" => {
                v.validate_slice(black_box(&doc), limits).unwrap();
                doc.len()
            }
            _ => panic!(),
        };
    }
    println!("{total} {}", doc.len());
}
