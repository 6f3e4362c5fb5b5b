//! Integration tests, built as one binary. Each module owns one concern.

mod common;
mod harness;
mod suite;
mod chunking;
mod differential;
mod limits;
