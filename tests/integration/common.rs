//! Helpers shared by the integration tests: paths to the third-party suites and corpora
//! vendored under `tests/data`.

use std::path::PathBuf;

/// Path of a file or folder under the vendored third-party data (`tests/data` in the
/// repository). Panics when it does not exist, so that a suite never passes with zero cases.
#[allow(dead_code)]
pub fn data(rel: &str) -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join("data")
        .join(rel);
    assert!(
        path.exists(),
        "tests/data/{rel} is missing: the tests read the third-party suites and corpora \
         vendored under tests/data in the repository ({})",
        path.display()
    );
    path
}
