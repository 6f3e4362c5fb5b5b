//! jsongate decides, in one streaming pass and with bounded memory, whether an untrusted JSON
//! document may reach an AI agent.
//!
//! This crate's first layer is a push-fed, zero-copy [`Scanner`]: strict RFC 8259 grammar
//! plus I-JSON (RFC 7493) rules, duplicate member names rejected after unescaping, and byte,
//! depth, length and count [`Limits`] enforced at the first byte that crosses them. It emits
//! [`Event`]s to a [`Sink`] and never builds a tree.
//!
//! Above it, [`json`] holds the crate's one owned JSON value, its writer and the
//! configuration error every loader returns.
//!
//! On top of those: [`Schema`] and [`Validator`] (JSON Schema 2020-12, 2019-09, draft-07,
//! draft-06 and draft-04, chosen by `$schema` or [`Draft`]; validated from the scanner's events), [`select`] (only the fields a contract exposes),
//! [`screen`] (instruction-like text in untrusted strings), [`gate`] (tool contracts,
//! agent-facing envelopes, audit records), [`action`] (tool-call decisions), [`mcp`] (a
//! validating relay between MCP clients and servers over stdio and Streamable HTTP),
//! `http` (a `tower` layer gating HTTP bodies while they stream, and the `serve` reverse
//! proxy; features `http` and `serve`), `tls` (rustls for every network path: upstreams,
//! listeners, Redis; feature `tls`) and `auth` (who the caller of a network front is: OAuth
//! 2.1 bearer JWTs verified as an RFC 9728 protected resource, and hashed API keys; feature
//! `auth`).
//!
//! # Example
//! ```
//! use jsongate::{check, ErrorKind, Limits};
//!
//! assert!(check(br#"{"approved":false}"#, Limits::new()).is_ok());
//! let err = check(br#"{"approved":false,"approved":true}"#, Limits::new()).unwrap_err();
//! assert_eq!(err.kind(), &ErrorKind::DuplicateName);
//! assert_eq!(err.pointer(), "/approved");
//!
//! let deep = "[".repeat(200);
//! let err = check(deep.as_bytes(), Limits::new().max_depth(64)).unwrap_err();
//! assert_eq!(err.kind(), &ErrorKind::TooDeep { limit: 64 });
//! assert_eq!(err.offset(), 64);
//! ```
//!
//! # Features
//! The core (scanner, [`json`], [`pointer`](mod@pointer), schemas, validator, [`select`]) is always built
//! and depends on no feature. Everything above it is opt-in:
//!
//! | feature | adds |
//! |---|---|
//! | `gate` | `gate` (tool contracts, envelopes, audit) with `screen` and `state` |
//! | `action` | `action` (tool-call decisions and policies) with `screen` and `state` |
//! | `mcp` | `mcp`: the validating MCP relay over stdio and Streamable HTTP (implies `gate`, `action`) |
//! | `http` | `http`: a `tower` layer gating HTTP bodies while they stream (implies `gate`) |
//! | `serve` | `http::serve`: the hyper reverse proxy behind `jsongate serve` (implies `http`, `tls`, `auth`) |
//! | `tls` | `tls`: rustls (aws-lc-rs provider) for upstreams, listeners and Redis |
//! | `auth` | `auth`: OAuth 2.1 bearer JWTs (RFC 9728 protected resource) and hashed API keys |
//! | `serde` | [`from_slice`]/`from_reader`: a validated `T: serde::Deserialize` from one read of the bytes |
//! | `redis` | the Redis backend of the shared state, `state::RedisStore` (implies `action`, `tls`) |
//! | `cli` (default) | the `jsongate` binary; turns on every feature above |
//!
//! An embedder of the core alone builds with `default-features = false`. On docs.rs every
//! feature-gated item carries the feature it needs.
//!
//! # Strict profile
//! One top-level value of any type, only whitespace (space, tab, CR, LF) around it; UTF-8
//! only (no BOM); no comments, trailing commas, `NaN`/`Infinity`, leading zeros, `+1`, `.5`
//! or `1.`; no unescaped control characters; `\u` escapes must not leave lone surrogates.
//! Numbers are handed over as exact text of any size (I-JSON's precision advice is left to
//! the consumer). Noncharacters such as U+FFFF are accepted, as RFC 8259 requires; the
//! opt-in I-JSON profile ([`Limits::i_json`]) rejects them, as RFC 7493 §2.1 requires.
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[macro_use]
mod builder;
#[macro_use]
mod error;

#[cfg(feature = "action")]
#[cfg_attr(docsrs, doc(cfg(feature = "action")))]
pub mod action;
#[cfg(feature = "auth")]
#[cfg_attr(docsrs, doc(cfg(feature = "auth")))]
pub mod auth;
#[cfg(any(feature = "gate", feature = "action"))]
mod config;
#[cfg(feature = "serde")]
mod de;
// Shared with the binary, which compiles the same file: each side uses only some of it.
#[cfg(any(feature = "gate", feature = "action"))]
#[allow(dead_code)]
mod fsx;
#[cfg(feature = "gate")]
#[cfg_attr(docsrs, doc(cfg(feature = "gate")))]
pub mod gate;
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
pub mod http;
pub mod json;
mod limits;
#[cfg(feature = "mcp")]
#[cfg_attr(docsrs, doc(cfg(feature = "mcp")))]
pub mod mcp;
pub mod pointer;
mod scan;
mod schema;
#[cfg(any(feature = "gate", feature = "action"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "gate", feature = "action"))))]
pub mod screen;
pub mod select;
#[cfg(any(feature = "gate", feature = "action"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "gate", feature = "action"))))]
pub mod state;
#[cfg(feature = "tls")]
#[cfg_attr(docsrs, doc(cfg(feature = "tls")))]
pub mod tls;
mod validate;
mod verdict;

#[cfg(feature = "serde")]
#[cfg_attr(docsrs, doc(cfg(feature = "serde")))]
pub use de::{from_reader, from_slice, from_slice_with, Mismatch, Tape, TypedError};
pub use error::{Error, ErrorKind, Syntax};
pub use limits::{
    Limits, DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, DEFAULT_MAX_ITEMS, DEFAULT_MAX_MEMBERS,
    DEFAULT_MAX_NAME_BYTES, DEFAULT_MAX_NUMBER_BYTES, DEFAULT_MAX_STRING_BYTES, UNLIMITED,
};
pub use scan::read::READ_CHUNK;
pub use scan::{
    Event, Flow, Ignore, Number, NumberError, NumberErrorKind, Outcome, Position, Scanner, Sink,
};
pub use schema::{
    CompileBudget, CompileError, CompileErrorKind, Draft, Schema, SchemaOptions,
    DEFAULT_EVAL_BUDGET, DEFAULT_EVAL_BUDGET_PER_BYTE, DEFAULT_MAX_ANCHORS,
    DEFAULT_MAX_COMPILE_STEPS, DEFAULT_MAX_REF_DEPTH, DEFAULT_MAX_SCHEMA_BYTES,
    DEFAULT_MAX_SCHEMA_NODES,
};
pub use validate::{OutputFormat, Rejection, Tier, Validator, Violation, Watcher};
pub use verdict::{verdict_json, JsonLines, LineVerdict};

// The Rust blocks of the README and the guides, compiled and run as doctests so that the
// documentation cannot drift from the API (tests/integration/docs.rs runs the other blocks).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
#[cfg(doctest)]
#[doc = include_str!("../docs/guide/library.md")]
struct LibraryGuideDoctests;
#[cfg(all(doctest, feature = "serve"))]
#[doc = include_str!("../docs/guide/http.md")]
struct HttpGuideDoctests;

/// This crate's version: the one audit records name (their `"jsongate"` member), so that a
/// binding or an embedder can report which engine decided.
///
/// # Example
/// ```
/// assert_eq!(jsongate::VERSION, env!("CARGO_PKG_VERSION"));
/// assert!(jsongate::VERSION.split('.').all(|n| n.parse::<u64>().is_ok()));
/// ```
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Checks that `input` is one valid JSON document within `limits`.
///
/// # Errors
/// The first violation, with its kind, offset, line, column and pointer.
///
/// # Example
/// ```
/// use jsongate::{check, ErrorKind, Limits};
/// assert!(check(br#"{"ok":true}"#, Limits::new()).is_ok());
/// let err = check(b"[1, 2,]", Limits::new()).unwrap_err();
/// assert_eq!((err.kind().code(), err.offset()), ("syntax", 6));
/// let bom = check(b"\xEF\xBB\xBF{}", Limits::new()).unwrap_err();
/// assert_eq!(bom.kind(), &ErrorKind::Syntax(jsongate::Syntax::ByteOrderMark));
/// ```
pub fn check(input: &[u8], limits: Limits) -> Result<(), Error> {
    Scanner::new(limits)
        .scan_slice(input, &mut Ignore)
        .map(|_| ())
}

/// Scans `input` as one document, sending every event to `sink`.
///
/// # Errors
/// The first violation, with its kind, offset, line, column and pointer.
///
/// # Example
/// ```
/// use jsongate::{scan, Event, Flow, Limits};
/// let mut n = 0;
/// scan(b"[1,[2,3]]", Limits::new(), &mut |ev: Event<'_>, _| {
///     if matches!(ev, Event::Number(_)) { n += 1 }
///     Flow::Continue
/// }).unwrap();
/// assert_eq!(n, 3);
/// ```
pub fn scan<S: Sink + ?Sized>(
    input: &[u8],
    limits: Limits,
    sink: &mut S,
) -> Result<Outcome, Error> {
    Scanner::new(limits).scan_slice(input, sink)
}
