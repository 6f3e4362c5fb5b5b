//! Helpers shared by the integration tests: paths to the shared suites and corpora.

use std::path::PathBuf;

/// Path of a file or folder under the shared resources beside the checkout (`../shared`).
/// Panics when it does not exist, so that a suite never passes with zero cases.
#[allow(dead_code)]
pub fn shared(rel: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("shared")
        .join(rel);
    assert!(
        path.exists(),
        "../shared/{rel} is missing: the tests read the shared suites and corpora from a \
         folder named shared beside the checkout"
    );
    path
}
