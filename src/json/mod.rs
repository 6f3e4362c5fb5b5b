//! The crate's one JSON value, its writer and its configuration error: what every layer
//! above the scanner uses to hold, write and report on small JSON documents.
//!
//! - [`Value`] (an owned value: numbers as exact text, members in document order) and
//!   [`ValueBuilder`] (a [`Sink`](crate::Sink) that builds one), parsed only with the crate's
//!   own [`Scanner`](crate::Scanner), so the strict profile, the limits and duplicate-name
//!   rejection apply to every value the crate materialises;
//! - [`write_string`] and [`quote`], the one JSON string writer, and [`ObjectWriter`] and
//!   [`ArrayWriter`], which write an object or array member by member straight into a
//!   `String` (the crate's output lines: envelopes, audit lines, records, messages);
//! - [`Tee`], one event stream to two sinks;
//! - [`ConfigError`], the one error of every configuration loader (contracts, policies,
//!   plans, alerts, screening contracts, lockfiles, the serve configuration): a kind, the
//!   JSON Pointer and byte offset where known, and the message.
//!
//! Layering: this module sits on `scan` and the base (`error`, `limits`, `pointer`) and must
//! not use anything above them. Checking a configuration file against the JSON Schema the
//! crate ships needs the validator, which sits above; that loader is `crate::config`, between
//! `validate` and `select`, and it returns this module's [`ConfigError`].

mod error;
mod tee;
mod value;
mod write;

pub use error::{ConfigError, ConfigErrorKind};
pub use tee::Tee;
pub use value::{Value, ValueBuilder};
pub use write::{quote, write_string, ArrayWriter, ObjectWriter};
