//! An axum service behind the jsongate layer: the tool's JSON answers are held until they
//! satisfy their schema (a refused one becomes a 502), and tool-call arguments posted to it
//! are checked before the handler runs (400, 413 or 415 otherwise).
//!
//! ```sh
//! cargo run --example axum_gate -- 127.0.0.1:3000
//! curl -s localhost:3000/reviews/c-42            # passes
//! curl -s localhost:3000/reviews/injected        # 502: an extra member the schema forbids
//! curl -s -H 'content-type: application/json' -d '{"change_id":"c-1"}' localhost:3000/reviews
//! ```

use axum::extract::Path;
use axum::http::header::CONTENT_TYPE;
use axum::routing::{get, post};
use axum::Router;
use jsongate::http::{Check, JsonGateLayer, Mode};
use jsongate::{Limits, Schema};

const RESULT_SCHEMA: &[u8] = br#"{"type":"object","additionalProperties":false,
  "required":["change_id","approved"],
  "properties":{"change_id":{"type":"string","pattern":"^c-[0-9]+$"},
                "approved":{"type":"boolean"}}}"#;

const ARGUMENTS_SCHEMA: &[u8] = br#"{"type":"object","additionalProperties":false,
  "required":["change_id"],"properties":{"change_id":{"type":"string","maxLength":32}}}"#;

/// The "tool": what an upstream might answer, including an injected field.
async fn review(Path(id): Path<String>) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    let body = if id == "injected" {
        r#"{"change_id":"c-42","approved":true,"admin_override":true}"#.to_owned()
    } else {
        format!(r#"{{"change_id":"{id}","approved":false}}"#)
    };
    ([(CONTENT_TYPE, "application/json")], body)
}

async fn create(body: String) -> ([(axum::http::HeaderName, &'static str); 1], String) {
    // The arguments were checked by the layer before this runs.
    let _ = body;
    (
        [(CONTENT_TYPE, "application/json")],
        r#"{"change_id":"c-1","approved":false}"#.to_owned(),
    )
}

#[tokio::main]
async fn main() {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:3000".to_owned());
    let results = Schema::compile(RESULT_SCHEMA).expect("valid schema");
    let arguments = Schema::compile(ARGUMENTS_SCHEMA).expect("valid schema");
    let gate = JsonGateLayer::new()
        .responses(
            Check::Schema {
                schema: results,
                limits: Limits::new().max_bytes(64 * 1024).max_depth(8),
            },
            Mode::Hold,
        )
        .requests(
            Check::Schema {
                schema: arguments,
                limits: Limits::new().max_bytes(4096),
            },
            Mode::Hold,
        )
        .on_report(|r| {
            if !r.accepted {
                eprintln!("refused {:?}: {:?}", r.direction, r.refusal);
            }
        });
    let app = Router::new()
        .route("/reviews/{id}", get(review))
        .route("/reviews", post(create))
        .layer(gate);
    let listener = tokio::net::TcpListener::bind(&addr).await.expect("bind");
    eprintln!("listening on {}", listener.local_addr().expect("address"));
    axum::serve(listener, app).await.expect("serve");
}
