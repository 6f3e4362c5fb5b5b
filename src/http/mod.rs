//! HTTP bodies through the jsongate engine: a `tower` layer for hyper 1.x / `http-body` 1.0
//! stacks (axum, tonic-free hyper services, gateways), and the reverse proxy behind
//! `jsongate serve` (feature `serve`).
//!
//! [`JsonGateLayer`] wraps a service; each data frame of a checked body is fed to the scanner
//! (and validator, or gate) as it arrives, never buffered before the engine sees it. In
//! [`Mode::Hold`] a body is withheld until its verdict (bounded by `max_bytes`) and a refused
//! one is replaced; in [`Mode::Stream`] frames pass as they are scanned and a violation ends
//! the body with [`BodyError`], so the peer sees an aborted message, never a clean end. The
//! layer owns no sockets, no runtime and no clock other than the gate's.

mod body;
#[cfg(feature = "serve")]
pub(crate) mod caller;
#[cfg(feature = "serve")]
pub(crate) mod connect;
mod engine;
#[cfg(feature = "serve")]
pub(crate) mod front;
mod layer;
#[cfg(feature = "serve")]
pub(crate) mod oauth;
mod path;
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub mod serve;
mod uri;

pub use body::{BodyError, BodyErrorKind, GatedBody};
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use connect::UpstreamHeaders;
pub use engine::{Check, Refusal};
pub use layer::{
    envelope_response, failure_status, is_json_content_type, Direction, JsonGate, JsonGateLayer,
    Mode, Report, ResponseFuture,
};
#[cfg(feature = "serve")]
#[cfg_attr(docsrs, doc(cfg(feature = "serve")))]
pub use oauth::{parse_token_answer, ClientCredentials};
pub use path::normalize_path;
pub use uri::{parse_upstream, Upstream};
