//! Helpers shared by the integration tests: paths to the third-party suites and corpora
//! vendored under `tests/data`, and one run of the binary.

use std::path::{Path, PathBuf};

/// What one run of the binary produced.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `jsongate ARGS` with `stdin`, in `dir` when given.
pub fn run_in(dir: Option<&Path>, args: &[&str], stdin: &[u8]) -> Run {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_jsongate"));
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let out = cmd
        .args(args)
        .write_stdin(stdin.to_vec())
        .output()
        .expect("run jsongate");
    Run {
        code: out.status.code().expect("exit code"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

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
