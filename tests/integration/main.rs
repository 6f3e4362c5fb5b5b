//! Integration tests, built as one binary. Each module owns one concern.

mod action;
#[cfg(unix)]
mod auth;
mod boundary;
mod budget;
mod chunking;
mod cli;
mod cli_usage;
mod common;
mod dialects;
mod differential;
mod docs;
mod errors;
#[cfg(unix)]
mod files;
mod gate;
mod golden;
mod harness;
mod http_axum;
mod http_layer;
mod layers;
mod lazy_text;
mod limits;
#[cfg(unix)]
mod mcp;
mod mcp_http;
mod memory;
mod messages;
mod output;
#[cfg(unix)]
mod proc;
mod regressions;
mod rough_edges;
mod schema_differential;
mod schema_early;
mod schema_suite;
#[cfg(unix)]
mod serve;
mod state;
mod suite;
#[cfg(unix)]
mod tls;
mod typed;
