//! JSON Schema: documents, compilation into an immutable program, and the building blocks the
//! streaming validator uses (exact decimals, ECMA-262 regexes, format checks).
//!
//! Nothing here reads instance documents; the runtime in `crate::validate` does, from scanner
//! events.

pub(crate) mod format;
pub(crate) mod decimal;
pub(crate) mod regex;
