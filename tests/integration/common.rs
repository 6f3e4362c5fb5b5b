//! Helpers shared by the integration tests: paths to the shared suites and corpora.

use std::path::PathBuf;

/// Path of a file or folder under the shared resources beside the checkout (`../shared`).
#[allow(dead_code)]
pub fn shared(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(rel)
}
