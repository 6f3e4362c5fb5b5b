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

use std::hint::black_box;

use bytes::Bytes;
use jsongate::http::{Check, JsonGateLayer, Mode};
use jsongate::{Limits, Schema, Validator};
use tower_layer::Layer;

#[path = "../../docgen/mod.rs"]
mod docgen;

#[path = "../benches/http_parts/mod.rs"]
mod http_parts;
use http_parts::{roundtrip, Buffered, Tool};

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
