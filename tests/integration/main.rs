//! Integration tests, built as one binary. Each module owns one concern.

mod common;
mod harness;
mod memory;
mod suite;
mod chunking;
mod differential;
mod limits;
mod errors;
