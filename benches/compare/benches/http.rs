//! The cost of the HTTP layer per request: one in-process call through a `tower` service
//! whose inner service answers a JSON body in 16 KiB frames, the client side collecting the
//! body, on a current-thread tokio runtime. Documents: `docgen::gateway_result` of about
//! 200 B and 64 KB against `benches/schemas/gateway.schema.json`.
//!
//! - `pass_through`: the inner service alone behind `JsonGateLayer::new()` (no rule: frames
//!   are re-wrapped, nothing is checked), the floor any layer pays;
//! - `jsongate_hold` / `jsongate_stream`: the layer with the schema (`Mode::Hold`: body
//!   withheld until the verdict; `Mode::Stream`: frames forwarded as they pass);
//! - `buffer_serde_jsonschema`: what gateways do today, as a layer: collect the body, parse
//!   it into a `serde_json::Value`, validate with `jsonschema` (compiled once);
//! - `scan_only` / `validate_only`: jsongate's scanner and validator on the same bytes held
//!   in memory, without HTTP (the baseline of the "less than 2× the scanner" target).
//!
//! Each variant is checked to return the document before timing. Run (from
//! `benches/compare`): `cargo bench --bench http` (or `-- --quick`).

#[macro_use]
#[path = "../../harness/mod.rs"]
mod harness;

use std::convert::Infallible;
use std::future::Future;
use std::hint::black_box;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use criterion::{Criterion, Throughput};
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

fn http(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let schema_text = std::fs::read(format!(
        "{}/../schemas/gateway.schema.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let schema = Schema::compile(&schema_text).unwrap();
    let limits = Limits::new().max_bytes(1 << 20);
    let json: serde_json::Value = serde_json::from_slice(&schema_text).unwrap();
    let peer = std::sync::Arc::new(jsonschema::validator_for(&json).unwrap());
    for (name, len) in [("200b", 120), ("64kb", 64_000)] {
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
        let mut stream = JsonGateLayer::new()
            .responses(check(), Mode::Stream)
            .layer(tool.clone());
        let mut buffered = Buffered {
            inner: tool.clone(),
            validator: std::sync::Arc::clone(&peer),
        };
        rt.block_on(async {
            assert_eq!(roundtrip(&mut pass).await, doc);
            assert_eq!(roundtrip(&mut hold).await, doc);
            assert_eq!(roundtrip(&mut stream).await, doc);
            assert_eq!(roundtrip(&mut buffered).await, doc);
        });
        let mut g = c.benchmark_group(format!("http/{name}"));
        g.throughput(Throughput::Bytes(doc.len() as u64));
        g.bench_function("pass_through", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut pass)));
        });
        g.bench_function("jsongate_hold", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut hold)));
        });
        g.bench_function("jsongate_stream", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut stream)));
        });
        g.bench_function("buffer_serde_jsonschema", |b| {
            b.iter(|| rt.block_on(roundtrip(&mut buffered)));
        });
        g.bench_function("scan_only", |b| {
            b.iter(|| jsongate::check(black_box(&doc), limits).unwrap());
        });
        let mut v = Validator::new(&schema);
        g.bench_function("validate_only", |b| {
            b.iter(|| v.validate_slice(black_box(&doc), limits).unwrap());
        });
        g.finish();
    }
}

bench_main!(http, 30, 3);
