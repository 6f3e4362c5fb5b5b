//! The layer in an axum router (the shape of `examples/axum_gate.rs`), served by
//! `axum::serve` on loopback and called with curl: held responses and request arguments.

use std::process::Command;

use axum::http::header::CONTENT_TYPE;
use axum::routing::{get, post};
use axum::Router;
use jsongate::http::{Check, JsonGateLayer, Mode};
use jsongate::{Limits, Schema};

fn curl(args: &[&str]) -> (u16, String) {
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", "-w", "\n%{http_code}"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (body, code) = text.rsplit_once('\n').unwrap();
    (code.parse().unwrap(), body.to_owned())
}

#[test]
fn an_axum_router_behind_the_layer() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let addr = rt.block_on(async {
        let results = Schema::compile(
            br#"{"type":"object","additionalProperties":false,"required":["approved"],
                 "properties":{"approved":{"type":"boolean"}}}"#,
        )
        .unwrap();
        let arguments = Schema::compile(
            br#"{"type":"object","additionalProperties":false,"properties":{"id":{"type":"string"}}}"#,
        )
        .unwrap();
        let layer = JsonGateLayer::new()
            .responses(
                Check::Schema {
                    schema: results,
                    limits: Limits::new().max_bytes(1024),
                },
                Mode::Hold,
            )
            .requests(
                Check::Schema {
                    schema: arguments,
                    limits: Limits::new().max_bytes(256),
                },
                Mode::Hold,
            );
        let json = |s: &'static str| ([(CONTENT_TYPE, "application/json")], s);
        let app = Router::new()
            .route("/ok", get(move || async move { json(r#"{"approved":false}"#) }))
            .route(
                "/injected",
                get(move || async move { json(r#"{"approved":true,"admin_override":true}"#) }),
            )
            .route("/call", post(move |body: String| async move {
                assert_eq!(body, r#"{"id":"a"}"#);
                json(r#"{"approved":true}"#)
            }))
            .layer(layer);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        addr
    });
    let url = |p: &str| format!("http://{addr}{p}");
    assert_eq!(
        curl(&[&url("/ok")]),
        (200, r#"{"approved":false}"#.to_owned())
    );
    assert_eq!(curl(&[&url("/injected")]).0, 502);
    let post = |body: &str, ct: &str| {
        curl(&[
            "-H",
            &format!("content-type: {ct}"),
            "--data-binary",
            body,
            &url("/call"),
        ])
    };
    assert_eq!(
        post(r#"{"id":"a"}"#, "application/json"),
        (200, r#"{"approved":true}"#.to_owned())
    );
    assert_eq!(post(r#"{"id":"a","rm":1}"#, "application/json").0, 400);
    assert_eq!(post(r#"{"id":"a"}"#, "text/plain").0, 415);
    assert_eq!(post(&" ".repeat(300), "application/json").0, 413);
    drop(rt);
}
