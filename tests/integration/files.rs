//! The files the command writes — state and its lock, audit logs of `decide`, `gate`,
//! `serve` and `mcp-proxy`, the alert file, raw copies, rendered blocks, `mcp-pin`'s
//! lockfile — are created with mode 0600, and a symbolic link planted at any of their paths
//! is refused with a message naming the path (exit 2, no panic) while the link's target is
//! left untouched. A link at the name the state file's temporary copy used to have
//! (`STATE.tmp`) is never written through: the temporary name is now random and exclusive.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{symlink, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const PRECIOUS: &str = "precious: must not be written\n";

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jsongate"))
}

fn run(cmd: &mut Command, stdin: &[u8]) -> (String, String, i32) {
    let mut c = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(stdin).unwrap();
    let out: Output = c.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

/// A file holding [`PRECIOUS`] and a symbolic link to it at `dir/name`; returns (link, target).
fn planted(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let target = dir.join(format!("{name}.target"));
    std::fs::write(&target, PRECIOUS).unwrap();
    let link = dir.join(name);
    symlink(&target, &link).unwrap();
    (link, target)
}

fn untouched(target: &Path) {
    assert_eq!(
        std::fs::read_to_string(target).unwrap(),
        PRECIOUS,
        "{} was written through a link",
        target.display()
    );
}

fn refused(link: &Path) -> String {
    format!("'{}' is a symbolic link and was refused", link.display())
}

// ---- decide: state file and audit -----------------------------------------------------------

fn policy(dir: &Path) -> PathBuf {
    write(
        dir,
        "policy.json",
        r#"{"policy":1,"tools":{"w":{"arguments":true,"requires":[],
            "rate_limit":{"calls":100,"window_seconds":3600}}}}"#,
    )
}

fn decide(policy: &Path, extra: &[&Path], flags: &[&str]) -> (String, String, i32) {
    let mut cmd = bin();
    cmd.args(["decide", "--policy"])
        .arg(policy)
        .args(["--grants", ""]);
    for (flag, p) in flags.iter().zip(extra) {
        cmd.arg(flag).arg(p);
    }
    run(&mut cmd, br#"{"tool":"w","arguments":{}}"#)
}

#[test]
fn decide_state_and_lock_are_private_and_a_link_at_the_old_temporary_name_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path());
    let state = dir.path().join("state.json");
    // Earlier versions wrote state.json.tmp with create+truncate, following this link.
    let (tmp_link, target) = planted(dir.path(), "state.json.tmp");
    for _ in 0..2 {
        let (out, err, code) = decide(&policy, &[&state], &["--state"]);
        assert_eq!(code, 0, "{out}{err}");
    }
    untouched(&target);
    assert!(std::fs::symlink_metadata(&tmp_link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::read_to_string(&state)
        .unwrap()
        .starts_with("{\"jsongate_state\":1,"));
    assert_eq!(mode(&state), 0o600);
    assert_eq!(mode(&dir.path().join("state.json.lock")), 0o600);
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| Path::new(n).extension().is_some_and(|e| e == "tmp"))
        .collect();
    assert_eq!(names, ["state.json.tmp"]);
}

#[test]
fn decide_refuses_a_link_at_the_state_or_lock_path_and_denies_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path());
    let (state, target) = planted(dir.path(), "state.json");
    let (out, err, code) = decide(&policy, &[&state], &["--state"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("\"reason\":\"state_unavailable\""), "{out}");
    assert!(out.contains(&refused(&state)), "{out}");
    untouched(&target);

    let other = dir.path().join("other.json");
    let (lock, target) = planted(dir.path(), "other.json.lock");
    let (out, err, code) = decide(&policy, &[&other], &["--state"]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&refused(&lock)), "{out}");
    untouched(&target);
    assert!(!other.exists());
}

#[test]
fn decide_audit_is_private_and_a_link_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy(dir.path());
    let audit = dir.path().join("decisions.jsonl");
    let (out, err, code) = decide(&policy, &[&audit], &["--audit"]);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(mode(&audit), 0o600);
    assert_eq!(std::fs::read_to_string(&audit).unwrap().lines().count(), 1);

    let (link, target) = planted(dir.path(), "linked.jsonl");
    let (out, err, code) = decide(&policy, &[&link], &["--audit"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&refused(&link)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    untouched(&target);
}

// ---- gate: audit, raw copy, rendered block, alert file ---------------------------------------

fn contract(dir: &Path, extra: &str) -> PathBuf {
    write(
        dir,
        "contract.json",
        &format!(
            r#"{{"contract":1,"tool":"t","version":"1",
            "upstream":[{{"version":"v1","schema":{{"type":"object","properties":{{"text":{{"type":"string"}}}}}}}}],
            "fields":{{"text":{{"pointer":"/text"}}}}{extra}}}"#
        ),
    )
}

const GOOD: &[u8] = br#"{"text":"a"}"#;
const DUPLICATE: &[u8] = br#"{"text":"a","text":"b"}"#;

fn gate(
    dir: &Path,
    contract: &Path,
    flags: &[(&str, &Path)],
    input: &[u8],
) -> (String, String, i32) {
    let mut cmd = bin();
    cmd.current_dir(dir)
        .args(["gate", "--contract"])
        .arg(contract)
        .args(["--request-id", "r", "--now", "2024-06-01T12:00:00Z"]);
    for (flag, p) in flags {
        cmd.arg(flag).arg(p);
    }
    run(&mut cmd, input)
}

#[test]
fn gate_audit_raw_copy_and_render_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let c = contract(dir.path(), "");
    let (audit, raw, render) = (
        dir.path().join("audit.jsonl"),
        dir.path().join("raw.bin"),
        dir.path().join("block.txt"),
    );
    let flags = [
        ("--audit", &*audit),
        ("--raw-copy", &raw),
        ("--render", &render),
    ];
    let (out, err, code) = gate(dir.path(), &c, &flags, DUPLICATE);
    assert_eq!(code, 1, "{out}{err}");
    let (out, err, code) = gate(dir.path(), &c, &flags, GOOD);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(std::fs::read(&raw).unwrap(), DUPLICATE);
    assert_eq!(std::fs::read_to_string(&audit).unwrap().lines().count(), 2);
    assert!(!std::fs::read(&render).unwrap().is_empty());
    for p in [&audit, &raw, &render] {
        assert_eq!(mode(p), 0o600, "{}", p.display());
    }
}

#[test]
fn gate_refuses_a_link_at_its_audit_raw_copy_or_render_path() {
    let dir = tempfile::tempdir().unwrap();
    let c = contract(dir.path(), "");
    for (flag, input) in [
        ("--audit", GOOD),
        ("--raw-copy", DUPLICATE),
        ("--render", GOOD),
    ] {
        let (link, target) = planted(dir.path(), &format!("link{flag}"));
        let (out, err, code) = gate(dir.path(), &c, &[(flag, &link)], input);
        assert_eq!(code, 2, "{flag}: {out}{err}");
        assert!(err.contains(&refused(&link)), "{flag}: {err}");
        assert!(!err.contains("panicked"), "{flag}: {err}");
        untouched(&target);
    }
}

#[test]
fn the_alert_file_is_private_and_a_link_there_fails_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let c = contract(
        dir.path(),
        r#","alerts":{"alerts":1,"on":["duplicate_name"],"file":"alerts.jsonl"}"#,
    );
    let (out, err, code) = gate(dir.path(), &c, &[], DUPLICATE);
    assert_eq!(code, 1, "{out}{err}");
    let alerts = dir.path().join("alerts.jsonl");
    assert_eq!(std::fs::read_to_string(&alerts).unwrap().lines().count(), 1);
    assert_eq!(mode(&alerts), 0o600);

    let c = contract(
        dir.path(),
        r#","alerts":{"alerts":1,"on":["duplicate_name"],"file":"linked.jsonl"}"#,
    );
    let (link, target) = planted(dir.path(), "linked.jsonl");
    let (out, err, code) = gate(dir.path(), &c, &[], DUPLICATE);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&refused(&link)), "{err}");
    untouched(&target);
}

// ---- serve: audit ---------------------------------------------------------------------------

/// Starts `jsongate serve` with its audit at `audit` (relative to `dir`); returns the child
/// once it has printed its first stderr line, and that line.
fn serve(
    dir: &Path,
    audit: &str,
) -> (
    std::process::Child,
    String,
    BufReader<std::process::ChildStderr>,
) {
    let c = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/gate/review-status/contract.json");
    let config = write(
        dir,
        "serve.json",
        &format!(
            r#"{{"serve":1,"listen":"127.0.0.1:0","audit":{a},
            "routes":[{{"path_prefix":"/","upstream":"http://127.0.0.1:1/","contract_file":{c}}}]}}"#,
            a = serde_json::to_string(audit).unwrap(),
            c = serde_json::to_string(&c).unwrap(),
        ),
    );
    let mut child = bin()
        .args(["serve", "--config"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    (child, line, err)
}

#[test]
fn serve_audit_is_private() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, line, _err) = serve(dir.path(), "audit.jsonl");
    assert!(line.starts_with("listening on "), "{line}");
    let audit = dir.path().join("audit.jsonl");
    let until = Instant::now() + Duration::from_secs(10);
    while !audit.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let m = std::fs::metadata(&audit).map(|m| m.permissions().mode() & 0o777);
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(m.unwrap(), 0o600);
}

#[test]
fn serve_refuses_a_link_at_its_audit_path() {
    let dir = tempfile::tempdir().unwrap();
    let (link, target) = planted(dir.path(), "linked.jsonl");
    let (mut child, first, mut err) = serve(dir.path(), "linked.jsonl");
    // A serve that followed the link would keep running: give it a deadline, not a hang.
    let until = Instant::now() + Duration::from_secs(15);
    while child.try_wait().unwrap().is_none() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    let running = child.try_wait().unwrap().is_none();
    if running {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
    assert!(
        !running,
        "serve kept running with a linked audit file: {first}{rest}"
    );
    let all = format!("{first}{rest}");
    assert_eq!(status.code(), Some(2), "{all}");
    assert!(all.contains(&refused(&link)), "{all}");
    assert!(!all.contains("panicked"), "{all}");
    untouched(&target);
}

// ---- mcp-proxy audit and mcp-pin lockfile ----------------------------------------------------

/// A stdio server in `sh` that answers `initialize` and lists one tool.
const SH_SERVER: &str = r#"while IFS= read -r line; do
  id=$(printf '%s' "$line" | sed -n 's/.*"id":\([0-9][0-9]*\).*/\1/p')
  case "$line" in
    *'"initialize"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"demo","version":"1"}}}\n' "$id" ;;
    *'"tools/list"'*) printf '{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"free","inputSchema":{"type":"object"}}]}}\n' "$id" ;;
  esac
done"#;

fn proxy(audit: &Path) -> (String, String, i32) {
    let mut cmd = bin();
    cmd.args(["mcp-proxy", "--audit"])
        .arg(audit)
        .args(["--", "sh", "-c", SH_SERVER]);
    // Closing the client's side ends the relay.
    run(&mut cmd, b"")
}

fn pin(out: &Path) -> (String, String, i32) {
    let mut cmd = bin();
    cmd.args(["mcp-pin", "--out"])
        .arg(out)
        .args(["--", "sh", "-c", SH_SERVER]);
    run(&mut cmd, b"")
}

#[test]
fn mcp_proxy_audit_is_private_and_a_link_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let (out, err, code) = proxy(&audit);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(mode(&audit), 0o600);

    let (link, target) = planted(dir.path(), "linked.jsonl");
    let (out, err, code) = proxy(&link);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&refused(&link)), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    untouched(&target);
}

#[test]
fn mcp_pin_lockfile_is_private_replaced_atomically_and_a_link_there_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("tools.lock");
    // Earlier versions wrote tools.lock.tmp with fs::write, following this link.
    let (tmp_link, tmp_target) = planted(dir.path(), "tools.lock.tmp");
    for _ in 0..2 {
        let (out, err, code) = pin(&lock);
        assert_eq!(code, 0, "{out}{err}");
    }
    assert_eq!(mode(&lock), 0o600);
    assert!(std::fs::read_to_string(&lock).unwrap().contains("\"free\""));
    untouched(&tmp_target);
    assert!(std::fs::symlink_metadata(&tmp_link)
        .unwrap()
        .file_type()
        .is_symlink());

    let (link, target) = planted(dir.path(), "linked.lock");
    let (out, err, code) = pin(&link);
    assert_eq!(code, 2, "{out}{err}");
    assert!(err.contains(&refused(&link)), "{err}");
    untouched(&target);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
}
