//! Shared state across processes: rate limits counted in a state file or in Redis by
//! concurrent `jsongate decide` and `jsongate mcp-proxy` processes admit exactly the limit
//! in total, breakers opened by one replica are seen by another, a store that fails gives
//! the configured failure (never a pass counted twice), and a restarted Redis recovers.
//!
//! The Redis tests start their own `redis-server` on a loopback port they choose and stop
//! it. Without `redis-server` they are skipped with a message on stderr (so `cargo test` works on
//! a machine with only the Rust toolchain), unless `JSONGATE_REQUIRE_REDIS=1` (set by CI, which
//! installs redis-server) makes that a failure.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsongate::action::{Call, Grants, Policy, RateState, Reason, Verdict};
use jsongate::json::Value;
use jsongate::state::{OnStateError, RedisConfig, RedisStore, StateErrorKind, Store};
use jsongate::Limits;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_jsongate"))
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A policy whose tool `w` admits `calls` per hour; `bad` is unlimited.
fn policy_file(dir: &Path, calls: u64) -> PathBuf {
    write(
        dir,
        "policy.json",
        &format!(
            r#"{{"policy":1,"tools":{{
              "w":{{"arguments":true,"requires":[],"rate_limit":{{"calls":{calls},"window_seconds":3600}}}},
              "bad":{{"arguments":true,"requires":[]}}}}}}"#
        ),
    )
}

/// Runs `n` `decide` processes at once against `state`; their exit codes.
fn decide_at_once(policy: &Path, state: &str, extra: &[&str], n: usize) -> Vec<i32> {
    let children: Vec<Child> = (0..n)
        .map(|_| {
            let mut c = bin()
                .args(["decide", "--policy"])
                .arg(policy)
                .args(["--grants", "", "--state", state])
                .args(extra)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            c.stdin
                .take()
                .unwrap()
                .write_all(br#"{"tool":"w","arguments":{}}"#)
                .unwrap();
            c
        })
        .collect();
    children
        .into_iter()
        .map(|c| {
            let out = c.wait_with_output().unwrap();
            let code = out.status.code().unwrap_or(-1);
            assert!(
                code == 0 || code == 1,
                "exit {code}: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            code
        })
        .collect()
}

fn allowed(codes: &[i32]) -> usize {
    codes.iter().filter(|&&c| c == 0).count()
}

fn decide_once(policy: &Path, state: &str, extra: &[&str]) -> (String, i32) {
    decide_with_env(policy, state, extra, &[])
}

/// [`decide_once`] with `env` set for the process (and only for it).
fn decide_with_env(
    policy: &Path,
    state: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (String, i32) {
    let mut c = bin()
        .args(["decide", "--policy"])
        .arg(policy)
        .args(["--grants", "", "--state", state])
        .args(extra)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A usage error exits before reading the call: the pipe may be closed by then.
    let _ = c
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"tool":"w","arguments":{}}"#);
    let out = c.wait_with_output().unwrap();
    (
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn decide_processes_sharing_a_state_file_admit_exactly_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 7);
    let state = dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let codes = decide_at_once(&policy, state, &[], 24);
    assert_eq!(allowed(&codes), 7, "{codes:?}");
    // The next run still sees the window.
    let (out, code) = decide_once(&policy, state, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"reason\":\"rate_limited\""), "{out}");
    // Without --state every process counts alone.
    let codes = decide_at_once(&policy, "memory", &[], 9);
    assert_eq!(allowed(&codes), 9);
}

#[test]
fn processes_killed_mid_write_never_corrupt_the_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 1_000_000);
    let state = dir.path().join("state.json");
    for round in 0..6u64 {
        let children: Vec<Child> = (0..6)
            .map(|_| {
                let mut c = bin()
                    .args(["decide", "--policy"])
                    .arg(&policy)
                    .args(["--grants", "", "--state"])
                    .arg(&state)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                c.stdin
                    .take()
                    .unwrap()
                    .write_all(br#"{"tool":"w","arguments":{}}"#)
                    .unwrap();
                c
            })
            .collect();
        std::thread::sleep(Duration::from_millis(2 + round * 3));
        for mut c in children {
            let _ = c.kill();
            let _ = c.wait();
        }
        let (out, code) = decide_once(&policy, state.to_str().unwrap(), &[]);
        assert_eq!(code, 0, "round {round}: {out}");
    }
    let text = std::fs::read_to_string(&state).unwrap();
    assert!(text.starts_with("{\"jsongate_state\":1,"), "{text}");
}

#[test]
fn a_foreign_or_truncated_state_file_denies_with_a_clear_reason() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 5);
    for (name, bytes) in [
        (
            "other-version.json",
            &br#"{"jsongate_state":9,"entries":{}}"#[..],
        ),
        (
            "truncated.json",
            &br#"{"jsongate_state":1,"entries":{"rate:/w":{"log":[1"#[..],
        ),
        (
            "breaker.json",
            &br#"{"t":{"blocks":[1],"open_until":0}}"#[..],
        ),
    ] {
        let state = dir.path().join(name);
        std::fs::write(&state, bytes).unwrap();
        for extra in [&[][..], &["--on-state-error", "allow"][..]] {
            let (out, code) = decide_once(&policy, state.to_str().unwrap(), extra);
            assert_eq!(code, 1, "{name} {extra:?}: {out}");
            assert!(out.contains("\"reason\":\"state_unavailable\""), "{out}");
            assert!(out.contains("is not a jsongate state file"), "{out}");
        }
        assert_eq!(
            std::fs::read(&state).unwrap(),
            bytes,
            "{name} is left alone"
        );
    }
}

#[test]
fn bad_state_options_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 5);
    for extra in [
        &["--on-state-error", "maybe"][..],
        &["--state", "redis://nohost:port"][..],
        &[
            "--state",
            "redis://127.0.0.1:1?password_env=JSONGATE_TEST_SURELY_UNSET",
        ][..],
        &["--state", "rediss://127.0.0.1:1?ca_file=/no/such/ca.pem"][..],
        &["--state", "redis://127.0.0.1:1?ca_file=/no/such/ca.pem"][..],
    ] {
        let out = bin()
            .args(["decide", "--policy"])
            .arg(&policy)
            .args(["--grants", ""])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
    }
}

// ---- Redis ---------------------------------------------------------------------------------

/// A `redis-server` of the test's own on a loopback port, stopped when dropped.
struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    /// More arguments: a password, users, TLS files.
    args: Vec<String>,
    /// Serves TLS only, on `port`.
    tls: bool,
}

impl Redis {
    /// Starts one, or `None` (the test is skipped, with a message) when `redis-server` is
    /// not installed; with `JSONGATE_REQUIRE_REDIS=1` that fails the test instead.
    fn start() -> Option<Redis> {
        Redis::start_with(&[], false)
    }

    /// [`Redis::start`] with more arguments, serving TLS only when `tls`.
    fn start_with(args: &[&str], tls: bool) -> Option<Redis> {
        if Command::new("redis-server")
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .is_err()
        {
            assert!(
                std::env::var("JSONGATE_REQUIRE_REDIS").as_deref() != Ok("1"),
                "redis-server not found and JSONGATE_REQUIRE_REDIS=1: install it \
                 (apt-get install -y redis-server)"
            );
            eprintln!(
                "SKIPPED: redis-server not found (apt-get install -y redis-server); \
                 JSONGATE_REQUIRE_REDIS=1 makes this a failure"
            );
            return None;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut r = Redis {
            child: None,
            port,
            dir: tempfile::tempdir().unwrap(),
            args: args.iter().map(ToString::to_string).collect(),
            tls,
        };
        r.spawn();
        Some(r)
    }

    fn spawn(&mut self) {
        let port = self.port.to_string();
        let ports: [&str; 4] = if self.tls {
            ["--port", "0", "--tls-port", port.as_str()]
        } else {
            ["--port", port.as_str(), "--tls-port", "0"]
        };
        let log = self.dir.path().join("redis.log");
        let child = Command::new("redis-server")
            .args(ports)
            .args(["--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(self.dir.path())
            .arg("--logfile")
            .arg(&log)
            .args(&self.args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let start = Instant::now();
        loop {
            if self.ready() {
                return;
            }
            let exited = self.child.as_mut().unwrap().try_wait().unwrap();
            assert!(
                exited.is_none() && start.elapsed() < Duration::from_secs(10),
                "redis-server did not start ({exited:?}): {}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the server accepts connections: it answers `PING` (or asks for a password);
    /// a TLS server, once it listens.
    fn ready(&self) -> bool {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        if self.tls {
            return true;
        }
        let mut line = String::new();
        s.write_all(b"PING\r\n").is_ok()
            && BufReader::new(s).read_line(&mut line).is_ok()
            && (line == "+PONG\r\n" || line.starts_with("-NOAUTH"))
    }

    fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    fn url(&self) -> String {
        format!(
            "redis://127.0.0.1:{}?timeout_ms=300&connect_timeout_ms=300",
            self.port
        )
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One `mcp-proxy` process in front of the test server.
struct ProxyRun {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl ProxyRun {
    fn start(args: &[&str]) -> ProxyRun {
        ProxyRun::start_with(args, &[])
    }

    /// [`ProxyRun::start`] with `env` set for the proxy and its server.
    fn start_with(args: &[&str], env: &[(&str, &str)]) -> ProxyRun {
        let server = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/state_server.py"
        );
        let mut child = bin()
            .arg("mcp-proxy")
            .args(args)
            .envs(env.iter().copied())
            .args(["--", "python3", server])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        ProxyRun { child, lines }
    }

    fn send(&mut self, line: &str) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends calls `ids` to `tool` at once, then returns the answers by id: `true` when the
    /// call reached the server.
    fn calls(&mut self, tool: &str, ids: std::ops::Range<u32>) -> Vec<(u32, bool, String)> {
        let n = ids.len();
        for id in ids {
            self.send(&format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{}}}}}}"#
            ));
        }
        let mut out = Vec::new();
        while out.len() < n {
            let l = self
                .lines
                .recv_timeout(Duration::from_secs(20))
                .expect("an answer for every call");
            let v = Value::parse(l.as_bytes(), Limits::new()).unwrap();
            let Some(id) = v.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let refused = v
                .pointer("/result/isError")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            out.push((u32::try_from(id).unwrap(), !refused, l));
        }
        out
    }
}

impl Drop for ProxyRun {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn two_proxies_sharing_redis_admit_exactly_the_limit_in_total() {
    let Some(redis) = Redis::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 25);
    let policy = policy.to_str().unwrap();
    let url = redis.url();
    let args = ["--policy", policy, "--grants", "", "--state", url.as_str()];
    let mut a = ProxyRun::start(&args);
    let mut b = ProxyRun::start(&args);
    // Both proxies get 30 calls at once, at the same time.
    let (ra, rb) = std::thread::scope(|s| {
        let ta = s.spawn(|| a.calls("w", 0..30));
        let tb = s.spawn(|| b.calls("w", 100..130));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    let admitted = ra.iter().chain(&rb).filter(|(_, ok, _)| *ok).count();
    assert_eq!(admitted, 25, "{ra:?} {rb:?}");
    for (_, ok, line) in ra.iter().chain(&rb) {
        if !ok {
            assert!(line.contains("rate_limited"), "{line}");
        }
    }
    // And decide processes share the same limit: it is used up.
    let codes = decide_at_once(Path::new(policy), &url, &[], 4);
    assert_eq!(allowed(&codes), 0);
}

#[test]
fn decide_processes_sharing_redis_admit_exactly_the_limit() {
    let Some(redis) = Redis::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 9);
    let codes = decide_at_once(&policy, &redis.url(), &[], 30);
    assert_eq!(allowed(&codes), 9, "{codes:?}");
}

#[test]
fn a_breaker_opened_through_one_proxy_is_seen_by_the_other() {
    let Some(redis) = Redis::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 1000);
    let alerts = write(
        dir.path(),
        "alerts.json",
        r#"{"alerts":1,"breaker":{"max_blocks":2,"window_seconds":60,"cooldown_seconds":60}}"#,
    );
    let url = redis.url();
    let args = [
        "--policy",
        policy.to_str().unwrap(),
        "--grants",
        "",
        "--alerts",
        alerts.to_str().unwrap(),
        "--state",
        url.as_str(),
    ];
    let mut a = ProxyRun::start(&args);
    let mut b = ProxyRun::start(&args);
    // B works before; two replaced results through A open the breaker of `bad`.
    assert!(!b.calls("bad", 1..2)[0].2.contains("breaker_open"));
    for id in 10..12 {
        let r = a.calls("bad", id..id + 1);
        assert!(!r[0].1, "the violating result is replaced: {:?}", r[0]);
    }
    let r = b.calls("bad", 20..21);
    assert!(r[0].2.contains("breaker_open"), "{:?}", r[0]);
    // A breaker open anywhere puts every replica's non-read-only tools in read-only mode.
    let r = b.calls("w", 21..22);
    assert!(r[0].2.contains("breaker_read_only"), "{:?}", r[0]);
}

#[test]
fn killing_redis_denies_and_audits_and_a_restart_recovers() {
    let Some(mut redis) = Redis::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let policy = policy_file(dir.path(), 1000);
    let url = redis.url();
    let deny_audit = dir.path().join("deny.audit");
    let allow_audit = dir.path().join("allow.audit");
    let p = policy.to_str().unwrap();
    let mut deny = ProxyRun::start(&[
        "--policy",
        p,
        "--grants",
        "",
        "--state",
        &url,
        "--audit",
        deny_audit.to_str().unwrap(),
    ]);
    let mut allow = ProxyRun::start(&[
        "--policy",
        p,
        "--grants",
        "",
        "--state",
        &url,
        "--on-state-error",
        "allow",
        "--audit",
        allow_audit.to_str().unwrap(),
    ]);
    assert!(deny.calls("w", 0..3).iter().all(|r| r.1));
    assert!(allow.calls("w", 0..3).iter().all(|r| r.1));
    redis.kill();
    let r = deny.calls("w", 10..13);
    for (_, ok, line) in &r {
        assert!(!ok && line.contains("state_unavailable"), "{line}");
    }
    let r = allow.calls("w", 10..13);
    assert!(r.iter().all(|r| r.1), "{r:?}");
    let (out, code) = decide_once(&policy, &url, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("\"reason\":\"state_unavailable\",") || out.contains("state_unavailable"),
        "{out}"
    );
    assert!(out.contains("\"stateError\":\"redis 127.0.0.1:"), "{out}");
    let audited = |p: &Path| std::fs::read_to_string(p).unwrap();
    assert!(
        audited(&deny_audit).contains("\"state_error\""),
        "{}",
        audited(&deny_audit)
    );
    let a = audited(&allow_audit);
    assert!(a.contains("\"on_state_error\":\"allow\""), "{a}");
    redis.spawn();
    assert!(deny.calls("w", 20..23).iter().all(|r| r.1));
    assert!(allow.calls("w", 20..23).iter().all(|r| r.1));
    let (out, code) = decide_once(&policy, &url, &[]);
    assert_eq!(code, 0, "{out}");
}

/// Decisions per second and p99 latency through a Redis store, 4 threads; printed for
/// docs/guide/replicas.md (`cargo test --release --test integration -- redis_throughput --nocapture`).
#[test]
fn redis_throughput_is_measured_and_every_decision_counted_once() {
    let Some(redis) = Redis::start() else { return };
    let policy = Arc::new(
        Policy::from_slice(
            br#"{"policy":1,"tools":{"w":{"arguments":true,"requires":[],
                "rate_limit":{"calls":1000000,"window_seconds":3600}}}}"#,
        )
        .unwrap(),
    );
    let store: Arc<dyn Store> =
        Arc::new(RedisStore::new(RedisConfig::parse(&redis.url()).unwrap()));
    let rate = RateState::new()
        .store(store)
        .on_state_error(OnStateError::Deny);
    let (threads, per) = (4, 500);
    let start = Instant::now();
    let mut lat: Vec<Duration> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (policy, rate) = (Arc::clone(&policy), rate.clone());
                s.spawn(move || {
                    let session = Grants::new(Vec::<String>::new());
                    let call = Call {
                        tool: "w".into(),
                        arguments: Value::Object(Vec::new()),
                    };
                    (0..per)
                        .map(|_| {
                            let t = Instant::now();
                            let d = policy.decide(&call, &session, &rate, 0);
                            assert_eq!(d.verdict(), Verdict::Allow, "{}", d.to_json());
                            t.elapsed()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    let total = start.elapsed();
    lat.sort();
    let p99 = lat[lat.len() * 99 / 100];
    let n = threads * per;
    eprintln!(
        "redis backend: {n} decisions on {threads} threads in {total:?}: {:.0} decisions/s, p50 {:?}, p99 {:?}",
        f64::from(n) / total.as_secs_f64(),
        lat[lat.len() / 2],
        p99
    );
    // Every decision was counted exactly once.
    let policy1 = Policy::from_slice(
        format!(
            r#"{{"policy":1,"tools":{{"w":{{"arguments":true,"requires":[],
                "rate_limit":{{"calls":{},"window_seconds":3600}}}}}}}}"#,
            n + 1
        )
        .as_bytes(),
    )
    .unwrap();
    let call = Call {
        tool: "w".into(),
        arguments: Value::Object(Vec::new()),
    };
    let s = Grants::new(Vec::<String>::new());
    assert_eq!(policy1.decide(&call, &s, &rate, 0).reason(), Reason::Ok);
    assert_eq!(
        policy1.decide(&call, &s, &rate, 0).reason(),
        Reason::RateLimited
    );
}

// ---- Redis with AUTH and TLS --------------------------------------------------------------

/// The password of the `default` user (`--requirepass`).
const PASSWORD: &str = "s3cret-Hunter2";
/// The password of the ACL user `gate` (keys `jsongate:*`), and the same percent-encoded.
const GATE_PASSWORD: &str = "p@ss:w/rd%1";
const GATE_PASSWORD_ENCODED: &str = "p%40ss%3Aw%2Frd%251";
/// Timeouts for these tests: generous, for a loaded machine.
const SLOW: &str = "timeout_ms=3000&connect_timeout_ms=3000";

/// A server that wants a password, with an ACL user `gate` limited to `jsongate:*` keys
/// and a user `elsewhere` limited to `other:*` keys.
fn auth_args() -> Vec<&'static str> {
    vec![
        "--requirepass",
        PASSWORD,
        "--user",
        "gate",
        "on",
        ">p@ss:w/rd%1",
        "~jsongate:*",
        "+@all",
        "--user",
        "elsewhere",
        "on",
        ">elsewhere-pw",
        "~other:*",
        "+@all",
    ]
}

/// A store on `url`, its TLS configuration built.
fn redis_store(url: &str) -> RedisStore {
    RedisStore::try_new(RedisConfig::parse(url).unwrap()).unwrap()
}

/// A real operation: a window of one admits one event on `key`, then refuses the next.
fn takes_once(store: &RedisStore, key: &str) {
    let first = store.window_take(key, 1, 60_000, 0).unwrap();
    let second = store.window_take(key, 1, 60_000, 0).unwrap();
    assert!(first.admitted && !second.admitted, "{first:?} {second:?}");
}

/// The error of an operation through `url`: always `Unavailable`.
fn fails_closed(url: &str) -> String {
    let e = redis_store(url)
        .window_take("denied", 1, 60_000, 0)
        .unwrap_err();
    assert_eq!(e.kind(), StateErrorKind::Unavailable, "{e}");
    e.message().to_owned()
}

#[test]
fn redis_auth_by_file_address_user_and_environment_and_fails_closed_otherwise() {
    let Some(redis) = Redis::start_with(&auth_args(), false) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let base = format!("127.0.0.1:{}", redis.port);
    let file = write(dir.path(), "redis-password", &format!("{PASSWORD}\n"));
    let gate_file = write(dir.path(), "gate-password", GATE_PASSWORD);
    // The default user, its password from a file.
    let by_file = format!("redis://{base}?password_file={}&{SLOW}", file.display());
    takes_once(&redis_store(&by_file), "auth:file");
    // The ACL user and its password in the address, percent-encoded.
    takes_once(
        &redis_store(&format!(
            "redis://gate:{GATE_PASSWORD_ENCODED}@{base}?{SLOW}"
        )),
        "auth:address",
    );
    // The ACL user as a parameter, its password from a file.
    takes_once(
        &redis_store(&format!(
            "redis://{base}?user=gate&password_file={}&{SLOW}",
            gate_file.display()
        )),
        "auth:user",
    );
    // A database other than 0: what is stored there is not in database 0.
    let db3 = redis_store(&format!("{by_file}&db=3"));
    assert!(db3.put_new("db:k", "three", 60_000, 0).unwrap());
    assert_eq!(db3.get("db:k", 0).unwrap().as_deref(), Some("three"));
    assert_eq!(redis_store(&by_file).get("db:k", 0).unwrap(), None);

    // The password from the environment of a `decide` process (never in its arguments).
    let policy = policy_file(dir.path(), 1);
    let url = format!("redis://{base}?user=gate&password_env=JSONGATE_TEST_REDIS_PASSWORD&{SLOW}");
    let env = [("JSONGATE_TEST_REDIS_PASSWORD", GATE_PASSWORD)];
    let (out, code) = decide_with_env(&policy, &url, &[], &env);
    assert_eq!(code, 0, "{out}");
    let (out, code) = decide_with_env(&policy, &url, &[], &env);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"reason\":\"rate_limited\""), "{out}");
    // Without the variable: a usage error naming it.
    let (out, code) = decide_with_env(&policy, &url, &[], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("environment variable 'JSONGATE_TEST_REDIS_PASSWORD' is not set"),
        "{out}"
    );
    // A wrong password: denied, the message says authentication failed and holds no
    // password.
    let wrong = [("JSONGATE_TEST_REDIS_PASSWORD", "not-the-password-71")];
    let (out, code) = decide_with_env(&policy, &url, &[], &wrong);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"reason\":\"state_unavailable\""), "{out}");
    assert!(out.contains("authentication failed"), "{out}");
    assert!(
        !out.contains("not-the-password-71") && !out.contains(GATE_PASSWORD),
        "{out}"
    );

    // Through the library: a wrong password, for the default user and for an ACL user.
    for url in [
        format!("redis://:not-the-password-71@{base}?{SLOW}"),
        format!("redis://gate:not-the-password-71@{base}?{SLOW}"),
        format!("redis://nobody:{GATE_PASSWORD_ENCODED}@{base}?{SLOW}"),
    ] {
        let m = fails_closed(&url);
        assert!(
            m.contains("authentication failed (the server answered WRONGPASS)"),
            "{m}"
        );
        for secret in ["not-the-password-71", PASSWORD, GATE_PASSWORD] {
            assert!(!m.contains(secret), "{m}");
        }
    }
    // No password at all.
    let m = fails_closed(&format!("redis://{base}?{SLOW}"));
    assert!(
        m.contains("requires authentication (NOAUTH) and no password is configured"),
        "{m}"
    );
    // A user whose keys are elsewhere: authenticated, and refused every key of ours.
    let elsewhere = format!("redis://elsewhere:elsewhere-pw@{base}?{SLOW}");
    let m = fails_closed(&elsewhere);
    assert!(m.contains("NOPERM") || m.contains("permission"), "{m}");
    let s = redis_store(&elsewhere);
    assert_eq!(
        s.put_new("k", "v", 1_000, 0).unwrap_err().kind(),
        StateErrorKind::Unavailable
    );
    assert_eq!(
        s.get("k", 0).unwrap_err().kind(),
        StateErrorKind::Unavailable
    );
}

/// A CA, a server certificate it signed for `localhost` and `127.0.0.1`, a client
/// certificate it signed, and a second CA that signed neither: PEM files.
struct Pki {
    ca: PathBuf,
    other_ca: PathBuf,
    server_cert: PathBuf,
    server_key: PathBuf,
    client_cert: PathBuf,
    client_key: PathBuf,
}

impl Pki {
    fn new(dir: &Path) -> Pki {
        use rcgen::{
            BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
            KeyUsagePurpose,
        };
        let ca = |name: &str| {
            let key = KeyPair::generate().unwrap();
            let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
            p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            p.distinguished_name.push(DnType::CommonName, name);
            p.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            (p.self_signed(&key).unwrap(), key)
        };
        let (ca_cert, ca_key) = ca("jsongate test CA");
        let (other, _) = ca("another CA");
        let leaf = |names: &[&str], usage: ExtendedKeyUsagePurpose| {
            let key = KeyPair::generate().unwrap();
            let mut p =
                CertificateParams::new(names.iter().map(ToString::to_string).collect::<Vec<_>>())
                    .unwrap();
            p.distinguished_name.push(DnType::CommonName, names[0]);
            p.extended_key_usages = vec![usage];
            let cert = p.signed_by(&key, &ca_cert, &ca_key).unwrap();
            (cert.pem(), key.serialize_pem())
        };
        let (server_cert, server_key) = leaf(
            &["localhost", "127.0.0.1"],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        let (client_cert, client_key) = leaf(&["gateway"], ExtendedKeyUsagePurpose::ClientAuth);
        Pki {
            ca: write(dir, "ca.pem", &ca_cert.pem()),
            other_ca: write(dir, "other-ca.pem", &other.pem()),
            server_cert: write(dir, "server.pem", &server_cert),
            server_key: write(dir, "server.key", &server_key),
            client_cert: write(dir, "client.pem", &client_cert),
            client_key: write(dir, "client.key", &client_key),
        }
    }

    /// `redis-server` arguments for TLS with these files; `mutual`: clients must present a
    /// certificate the CA signed.
    fn server_args(&self, mutual: bool) -> Vec<String> {
        let path = |p: &PathBuf| p.to_str().unwrap().to_owned();
        vec![
            "--tls-cert-file".into(),
            path(&self.server_cert),
            "--tls-key-file".into(),
            path(&self.server_key),
            "--tls-ca-cert-file".into(),
            path(&self.ca),
            "--tls-auth-clients".into(),
            if mutual { "yes" } else { "no" }.into(),
        ]
    }

    /// The query that trusts `ca` only.
    fn trusting(ca: &Path) -> String {
        format!("ca_file={}&system_roots=false&{SLOW}", ca.display())
    }
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn rediss_verifies_the_server_and_plain_or_untrusting_clients_fail_closed() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let Some(redis) = Redis::start_with(&strs(&pki.server_args(false)), true) else {
        return;
    };
    let port = redis.port;
    let trusted = Pki::trusting(&pki.ca);
    let by_name = redis_store(&format!("rediss://localhost:{port}?{trusted}"));
    assert_eq!(by_name.describe(), format!("rediss:localhost:{port}"));
    takes_once(&by_name, "tls:name");
    takes_once(
        &redis_store(&format!("rediss://127.0.0.1:{port}?{trusted}")),
        "tls:ip",
    );
    // Many operations on few connections: the pooled TLS connections are reused.
    let pooled = redis_store(&format!(
        "rediss://localhost:{port}?{trusted}&max_connections=2"
    ));
    std::thread::scope(|s| {
        for t in 0..4 {
            let pooled = &pooled;
            s.spawn(move || {
                for i in 0..25 {
                    assert!(pooled
                        .put_new(&format!("tls:many:{t}:{i}"), "v", 60_000, 0)
                        .unwrap());
                }
            });
        }
    });
    // A client that trusts another CA refuses the server.
    let m = fails_closed(&format!(
        "rediss://localhost:{port}?{}",
        Pki::trusting(&pki.other_ca)
    ));
    assert!(
        m.contains("TLS handshake") && m.contains("certificate"),
        "{m}"
    );
    // Plain RESP to the TLS port.
    fails_closed(&format!("redis://127.0.0.1:{port}?{SLOW}"));
    // Through the CLI.
    let policy = policy_file(dir.path(), 1);
    let url = format!("rediss://localhost:{port}?{trusted}");
    assert_eq!(decide_once(&policy, &url, &[]).1, 0);
    let (out, code) = decide_once(&policy, &url, &[]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"reason\":\"rate_limited\""), "{out}");
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let Some(redis) = Redis::start_with(&strs(&pki.server_args(true)), true) else {
        return;
    };
    let url = format!(
        "rediss://localhost:{}?{}",
        redis.port,
        Pki::trusting(&pki.ca)
    );
    // Without a certificate: the server ends the session.
    let m = fails_closed(&url);
    assert!(m.contains("alert"), "{m}");
    let with = format!(
        "{url}&client_cert={}&client_key={}",
        pki.client_cert.display(),
        pki.client_key.display()
    );
    takes_once(&redis_store(&with), "mtls");
    // A certificate of its own is no answer either: the server's CA signed it.
    let own = rcgen::generate_simple_self_signed(vec!["gateway".to_owned()]).unwrap();
    let cert = write(dir.path(), "own.pem", &own.cert.pem());
    let key = write(dir.path(), "own.key", &own.key_pair.serialize_pem());
    let m = fails_closed(&format!(
        "{url}&client_cert={}&client_key={}",
        cert.display(),
        key.display()
    ));
    assert!(m.contains("alert"), "{m}");
}

#[test]
fn tls_and_auth_together_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let pki = Pki::new(dir.path());
    let tls = pki.server_args(false);
    let mut args = strs(&tls);
    args.extend(auth_args());
    let Some(redis) = Redis::start_with(&args, true) else {
        return;
    };
    let policy = policy_file(dir.path(), 2);
    let url = format!(
        "rediss://localhost:{}?user=gate&password_env=JSONGATE_TEST_REDIS_PASSWORD&{}",
        redis.port,
        Pki::trusting(&pki.ca)
    );
    let env = [("JSONGATE_TEST_REDIS_PASSWORD", GATE_PASSWORD)];
    let codes: Vec<i32> = (0..3)
        .map(|_| decide_with_env(&policy, &url, &[], &env).1)
        .collect();
    assert_eq!(codes, [0, 0, 1]);
    let wrong = [("JSONGATE_TEST_REDIS_PASSWORD", "not-the-password-71")];
    let (out, code) = decide_with_env(&policy, &url, &[], &wrong);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("authentication failed"), "{out}");
    assert!(
        !out.contains("not-the-password-71") && !out.contains(GATE_PASSWORD),
        "{out}"
    );
    // No password over TLS: NOAUTH, fails closed.
    let m = fails_closed(&format!(
        "rediss://localhost:{}?{}",
        redis.port,
        Pki::trusting(&pki.ca)
    ));
    assert!(m.contains("NOAUTH"), "{m}");
}

// ---- plans, approvals and session-bound rules ---------------------------------------------

/// A policy for plans and approvals: `read` and `write` free, `send` always asks, `account`
/// bound to the caller's account, `project` to one of the caller's projects.
fn task_policy(dir: &Path) -> PathBuf {
    write(
        dir,
        "task-policy.json",
        r#"{"policy":1,"tools":{
          "read":{"arguments":true,"requires":[]},
          "write":{"arguments":true,"requires":[]},
          "send":{"arguments":{"type":"object","properties":{"to":{"type":"string"}}},
                  "requires":[],"ask":true},
          "account":{"arguments":{"type":"object","properties":{"id":{}}},"requires":[],
                  "rules":[{"rule":"equals_context","pointer":"/id","context":"account_id"}]},
          "project":{"arguments":{"type":"object","properties":{"p":{"type":"string"}}},
                  "requires":[],
                  "rules":[{"rule":"in_context_list","pointer":"/p","context":"project"}]}}}"#,
    )
}

/// `decide` with `args`, the call on standard input: (stdout, stderr, exit code).
fn decide_call(policy: &Path, args: &[&str], call: &str) -> (String, String, i32) {
    let mut c = bin()
        .args(["decide", "--policy"])
        .arg(policy)
        .args(["--grants", ""])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A usage error exits before reading the call: the pipe may be closed by then.
    let _ = c.stdin.take().unwrap().write_all(call.as_bytes());
    let out = c.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn a_call_outside_the_plan_asks_and_plan_counts_are_shared_through_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let policy = task_policy(dir.path());
    let plan = write(
        dir.path(),
        "plan.json",
        r#"{"plan":1,"task":"t-1","ordered":true,
            "steps":[{"tool":"read","max_calls":2},{"tool":"write"}]}"#,
    );
    let state = dir.path().join("state.json");
    let args = [
        "--plan",
        plan.to_str().unwrap(),
        "--state",
        state.to_str().unwrap(),
    ];
    let run = |tool: &str| decide_call(&policy, &args, &format!(r#"{{"tool":"{tool}"}}"#));
    let reason = |r: &(String, String, i32)| {
        let v = Value::parse(r.0.as_bytes(), Limits::new()).unwrap();
        (
            v.get("reason").and_then(Value::as_str).unwrap().to_owned(),
            r.2,
        )
    };
    assert_eq!(reason(&run("read")), ("ok".into(), 0));
    assert_eq!(reason(&run("send")), ("outside_plan".into(), 3));
    assert_eq!(reason(&run("read")), ("ok".into(), 0));
    // Two reads were the plan's; the third is outside it (another process, same store).
    assert_eq!(reason(&run("read")), ("outside_plan".into(), 3));
    assert_eq!(reason(&run("write")), ("ok".into(), 0));
    // Ordered: after `write`, nothing before it. A tool the plan names that is marked ask
    // stays ask, and a denial stays a denial.
    assert_eq!(reason(&run("nope")), ("tool_not_allowlisted".into(), 1));
    // A plan naming a tool the policy lacks is a configuration error.
    let bad = write(
        dir.path(),
        "bad-plan.json",
        r#"{"plan":1,"task":"t-2","steps":[{"tool":"delete_everything"}]}"#,
    );
    let (_, err, code) = decide_call(
        &policy,
        &["--plan", bad.to_str().unwrap()],
        r#"{"tool":"read"}"#,
    );
    assert_eq!(code, 2);
    assert!(err.contains("plan names tool 'delete_everything'"), "{err}");
    let out = bin().args(["plan", "schema"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("urn:jsongate:plan:1"));
}

/// Starts `decide --approval-wait` on `call` and returns it with the approval id it prints.
fn ask_for_approval(
    policy: &Path,
    state: &Path,
    audit: &Path,
    wait: &str,
    call: &str,
) -> (Child, String) {
    let audit = ["--audit", audit.to_str().unwrap()];
    let (c, _, id) = asking(policy, state, wait, &audit, call);
    (c, id)
}

/// Starts `decide --approval-wait` with `extra` arguments on `call`: the process, its
/// standard error past the first line, and the approval id that line names.
fn asking(
    policy: &Path,
    state: &Path,
    wait: &str,
    extra: &[&str],
    call: &str,
) -> (Child, BufReader<std::process::ChildStderr>, String) {
    let mut c = bin()
        .args(["decide", "--policy"])
        .arg(policy)
        .args(["--grants", "", "--approval-wait", wait, "--state"])
        .arg(state)
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    c.stdin.take().unwrap().write_all(call.as_bytes()).unwrap();
    let mut err = BufReader::new(c.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(line.contains("--show"), "{line}");
    let at = line
        .find("\"id\":\"")
        .expect("the approval line names its id")
        + 6;
    let id = line[at..at + 32].to_owned();
    (c, err, id)
}

fn approve(state: &Path, id: &str, extra: &[&str]) -> (String, i32) {
    let out = bin()
        .args(["approve", id, "--state"])
        .arg(state)
        .args(extra)
        .output()
        .unwrap();
    (
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn an_approval_granted_once_allows_exactly_that_call() {
    let dir = tempfile::tempdir().unwrap();
    let policy = task_policy(dir.path());
    let state = dir.path().join("state.json");
    let audit = dir.path().join("audit.jsonl");
    let call = r#"{"tool":"send","arguments":{"to":"a@b.c"}}"#;
    let (c, id) = ask_for_approval(&policy, &state, &audit, "20", call);
    let (out, code) = approve(&state, &id, &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("\"granted\":true"), "{out}");
    // Single use: the same id cannot be answered twice.
    let (out, code) = approve(&state, &id, &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("no pending approval"), "{out}");
    let out = c.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let line = String::from_utf8_lossy(&out.stdout);
    assert!(
        line.contains("\"decision\":\"allow\",\"reason\":\"ok\""),
        "{line}"
    );
    let a = std::fs::read_to_string(&audit).unwrap();
    assert!(
        a.contains(&format!(
            "\"approval\":{{\"id\":\"{id}\",\"outcome\":\"granted\"}}"
        )),
        "{a}"
    );
    // Without an answer in time: deny.
    let (c, _) = ask_for_approval(&policy, &state, &audit, "0", call);
    let out = c.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"reason\":\"not_approved\""));
    // Refused: deny.
    let (c, id) = ask_for_approval(&policy, &state, &audit, "20", call);
    assert_eq!(approve(&state, &id, &["--deny"]).1, 0);
    let out = c.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"reason\":\"not_approved\""));
    let a = std::fs::read_to_string(&audit).unwrap();
    assert!(
        a.contains("\"outcome\":\"timed_out\"") && a.contains("\"outcome\":\"refused\""),
        "{a}"
    );
}

#[test]
fn approve_show_prints_the_pending_call_and_the_prompt_puts_sinks_first() {
    use jsongate::state::FileStore;
    let unix_ms = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64
    };
    let dir = tempfile::tempdir().unwrap();
    let policy = write(
        dir.path(),
        "send-policy.json",
        r#"{"policy":1,"tools":{"send":{"arguments":{"type":"object"},"requires":[],"ask":true,
             "rules":[{"rule":"max_length","pointer":"/to","max_chars":200}]}}}"#,
    );
    let state = dir.path().join("state.json");
    // Padding before the recipient: a prompt that cut the arguments as one text would hide it.
    let pad = "p".repeat(5000);
    let call = format!(
        r#"{{"tool":"send","arguments":{{"note":"{pad}","to":"attacker@example.com\u202e"}}}}"#
    );
    let (c, mut err, id) = asking(&policy, &state, "20", &[], &call);
    let mut prompt = [String::new(), String::new()];
    for l in &mut prompt {
        err.read_line(l).unwrap();
    }
    // The sink first, its invisible override escaped; the padding cut on its own.
    assert_eq!(prompt[0], "/to = \"attacker@example.com\\u202e\"\n");
    assert!(
        prompt[1].starts_with("/note = \"ppp") && prompt[1].ends_with(" bytes)\n"),
        "{}",
        prompt[1]
    );
    assert!(prompt[1].len() < 400, "{}", prompt[1].len());
    // --show: the record, then every argument, without answering.
    let (out, code) = approve(&state, &id, &["--show"]);
    assert_eq!(code, 0, "{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with(&format!(r#"{{"id":"{id}","tool":"send""#)),
        "{out}"
    );
    assert!(lines[1].starts_with("/note = \"ppp"), "{out}");
    assert_eq!(lines[2], "/to = \"attacker@example.com\\u202e\"");
    assert_eq!(
        approve(&state, &id, &["--show", "--deny"]).1,
        2,
        "--show answers nothing"
    );
    // Arguments planted in the store under the id are refused, never shown as the call's.
    let store = FileStore::new(&state);
    let key = format!("approval-arguments:{id}");
    let kept = store.take(&key, unix_ms()).unwrap().unwrap();
    assert!(store
        .put_new(&key, r#"{"to":"friend@example.com"}"#, 60_000, unix_ms())
        .unwrap());
    let (out, code) = approve(&state, &id, &["--show"]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("do not match the approval's digest") && !out.contains("friend"),
        "{out}"
    );
    store.take(&key, unix_ms()).unwrap();
    assert!(store.put_new(&key, &kept, 60_000, unix_ms()).unwrap());
    // Still pending: granted now, it allows the call; shown after that, it is gone.
    assert_eq!(approve(&state, &id, &[]).1, 0);
    assert_eq!(c.wait_with_output().unwrap().status.code(), Some(0));
    let (out, code) = approve(&state, &id, &["--show"]);
    assert_eq!(code, 2);
    assert!(out.contains("no pending approval"), "{out}");
}

#[test]
fn an_approval_for_other_arguments_denies() {
    use jsongate::action::{arguments_digest, Approval};
    use jsongate::state::FileStore;
    let dir = tempfile::tempdir().unwrap();
    let policy = task_policy(dir.path());
    let state = dir.path().join("state.json");
    let audit = dir.path().join("audit.jsonl");
    let (c, id) = ask_for_approval(
        &policy,
        &state,
        &audit,
        "20",
        r#"{"tool":"send","arguments":{"to":"a@b.c"}}"#,
    );
    // Someone answers the pending id with a grant for other arguments.
    let store = FileStore::new(&state);
    let other = Call {
        tool: "send".into(),
        arguments: Value::parse(br#"{"to":"evil@x.y"}"#, Limits::new()).unwrap(),
    };
    let forged = Approval {
        id: id.clone(),
        tool: "send".into(),
        arguments_sha256: arguments_digest(&other),
    };
    let mut record = forged.to_json();
    record.pop();
    record.push_str(",\"granted\":true}");
    // Records expire on the wall clock the waiting process uses.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(store
        .put_new(&format!("answer:{id}"), &record, 60_000, now)
        .unwrap());
    let out = c.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("\"reason\":\"not_approved\""));
    assert!(std::fs::read_to_string(&audit)
        .unwrap()
        .contains("\"outcome\":\"mismatch\""));
}

#[test]
fn session_bound_rules_compare_arguments_with_the_callers_context() {
    let dir = tempfile::tempdir().unwrap();
    let policy = task_policy(dir.path());
    let ctx = [
        "--context",
        "account_id=42",
        "--context",
        "project=a",
        "--context",
        "project=b",
    ];
    let cases = [
        (r#"{"tool":"account","arguments":{"id":"42"}}"#, &ctx[..], 0),
        (r#"{"tool":"account","arguments":{"id":42}}"#, &ctx[..], 0),
        (r#"{"tool":"account","arguments":{"id":"43"}}"#, &ctx[..], 1),
        (r#"{"tool":"account","arguments":{}}"#, &ctx[..], 1),
        (r#"{"tool":"account","arguments":{"id":"42"}}"#, &[][..], 1),
        (r#"{"tool":"project","arguments":{"p":"b"}}"#, &ctx[..], 0),
        (r#"{"tool":"project","arguments":{"p":"c"}}"#, &ctx[..], 1),
    ];
    for (call, args, want) in cases {
        let (out, err, code) = decide_call(&policy, args, call);
        assert_eq!(code, want, "{call} {args:?}: {out}{err}");
        if want == 1 {
            assert!(out.contains("\"reason\":\"context_mismatch\""), "{out}");
            assert!(out.contains("\"failed\":{\"rule\":\""), "{out}");
        }
    }
    let (out, _, _) = decide_call(
        &policy,
        &ctx,
        r#"{"tool":"account","arguments":{"id":"43"}}"#,
    );
    assert!(
        out.contains("\"failed\":{\"rule\":\"equals_context\",\"pointer\":\"/id\"}"),
        "{out}"
    );
    // Two values under a key that must be equalled: nothing equals them.
    let two = ["--context", "account_id=42", "--context", "account_id=43"];
    let (_, _, code) = decide_call(
        &policy,
        &two,
        r#"{"tool":"account","arguments":{"id":"42"}}"#,
    );
    assert_eq!(code, 1);
    let (_, err, code) = decide_call(&policy, &["--context", "nokey"], r#"{"tool":"read"}"#);
    assert_eq!(code, 2, "{err}");
}

// ---- approvals in the MCP proxy ------------------------------------------------------------

/// `mcp-proxy` in front of the test server, its tool `w` always asking; its standard error
/// is read too (where the ids of stored approvals are written).
struct AskingProxy {
    run: ProxyRun,
    stderr: std::sync::mpsc::Receiver<String>,
}

impl AskingProxy {
    fn start(dir: &Path, extra: &[&str], capabilities: &str) -> AskingProxy {
        let policy = write(
            dir,
            "ask-policy.json",
            r#"{"policy":1,"tools":{"w":{"arguments":true,"requires":[],"ask":true},
                "bad":{"arguments":true,"requires":[]}}}"#,
        );
        let server = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/integration/state_server.py"
        );
        let mut child = bin()
            .arg("mcp-proxy")
            .arg("--policy")
            .arg(&policy)
            .args(["--grants", ""])
            .args(extra)
            .args(["--", "python3", server])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let out = BufReader::new(child.stdout.take().unwrap());
        let err = BufReader::new(child.stderr.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in out.lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let (tx, stderr) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for l in err.lines().map_while(Result::ok) {
                let _ = tx.send(l);
            }
        });
        let mut p = AskingProxy {
            run: ProxyRun { child, lines },
            stderr,
        };
        p.run.send(&format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{capabilities},"clientInfo":{{"name":"t","version":"1"}}}}}}"#
        ));
        let init = p.next();
        assert!(init.contains("state-test"), "{init}");
        p
    }

    fn next(&mut self) -> String {
        self.run
            .lines
            .recv_timeout(Duration::from_secs(20))
            .expect("a line from the proxy")
    }

    fn call(&mut self, id: u32, args: &str) {
        self.run.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"w","arguments":{args}}}}}"#
        ));
    }

    /// The id of the approval the proxy stored, from its standard error.
    fn approval_id(&mut self) -> String {
        loop {
            let l = self
                .stderr
                .recv_timeout(Duration::from_secs(20))
                .expect("the proxy names the approval on stderr");
            if let Some(at) = l.find("approval requested: {\"id\":\"") {
                let at = at + "approval requested: {\"id\":\"".len();
                return l[at..at + 32].to_owned();
            }
        }
    }
}

/// Whether an answer line is the server's (`done`) rather than the proxy's refusal.
fn reached_server(line: &str) -> bool {
    let v = Value::parse(line.as_bytes(), Limits::new()).unwrap();
    v.pointer("/result/content/0/text").and_then(Value::as_str) == Some("done")
        && v.pointer("/result/isError").is_none()
}

#[test]
fn the_proxy_waits_for_jsongate_approve_against_a_state_file() {
    use jsongate::action::{arguments_digest, Approval};
    use jsongate::state::FileStore;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let audit = dir.path().join("audit.jsonl");
    let extra = [
        "--state",
        state.to_str().unwrap(),
        "--approval-wait",
        "20",
        "--audit",
        audit.to_str().unwrap(),
    ];
    let mut p = AskingProxy::start(dir.path(), &extra, "{}");
    p.call(1, r#"{"to":"a"}"#);
    let id = p.approval_id();
    // Granted by another process while the proxy waits.
    let (out, code) = approve(&state, &id, &[]);
    assert_eq!(code, 0, "{out}");
    let l = p.next();
    assert!(reached_server(&l), "{l}");
    // Single use: the id is spent.
    assert_eq!(approve(&state, &id, &[]).1, 2);
    // Refused.
    p.call(2, r#"{"to":"a"}"#);
    let id = p.approval_id();
    assert_eq!(approve(&state, &id, &["--deny"]).1, 0);
    let l = p.next();
    assert!(
        !reached_server(&l) && l.contains("(approval refused)"),
        "{l}"
    );
    // A grant recorded for other arguments under the pending id: denied.
    p.call(3, r#"{"to":"a"}"#);
    let id = p.approval_id();
    let other = Call {
        tool: "w".into(),
        arguments: Value::parse(br#"{"to":"evil"}"#, Limits::new()).unwrap(),
    };
    let forged = Approval {
        id: id.clone(),
        tool: "w".into(),
        arguments_sha256: arguments_digest(&other),
    };
    let mut record = forged.to_json();
    record.pop();
    record.push_str(",\"granted\":true}");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(FileStore::new(&state)
        .put_new(&format!("answer:{id}"), &record, 60_000, now)
        .unwrap());
    let l = p.next();
    assert!(
        !reached_server(&l) && l.contains("(approval mismatch)"),
        "{l}"
    );
    let a = std::fs::read_to_string(&audit).unwrap();
    for outcome in ["granted", "refused", "mismatch"] {
        assert!(
            a.contains(&format!("\"via\":\"state\",\"outcome\":\"{outcome}\"")),
            "{a}"
        );
    }
}

#[test]
fn the_proxy_asks_a_client_that_declared_elicitation() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = AskingProxy::start(dir.path(), &[], r#"{"elicitation":{}}"#);
    for (id, action, reaches) in [(1, "accept", true), (2, "decline", false)] {
        p.call(id, "{}");
        let e = p.next();
        let v = Value::parse(e.as_bytes(), Limits::new()).unwrap();
        assert_eq!(
            v.get("method").and_then(Value::as_str),
            Some("elicitation/create"),
            "{e}"
        );
        let rid = v.get("id").unwrap().to_json();
        p.run.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{rid},"result":{{"action":"{action}","content":{{"approve":true}}}}}}"#
        ));
        let l = p.next();
        assert_eq!(reached_server(&l), reaches, "{l}");
    }
    // Without --state there is no record to fall back on: a client that cannot be asked is
    // refused at once.
    let mut p = AskingProxy::start(dir.path(), &["--approval-wait", "5"], "{}");
    p.call(1, "{}");
    let l = p.next();
    assert!(l.contains("approval is required: needs_approval"), "{l}");
    let out = bin()
        .args(["mcp-proxy", "--approval-wait", "soon", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--approval-wait: 'soon'"));
}

/// Pins taken on first use are shared through the store: a replica started after the
/// server changed a tool holds the first replica's pins (the changed tool is refused),
/// where a replica without the shared store would trust the changed listing; a pins record
/// that does not read as a lock refuses every tool.
#[test]
fn first_use_pins_are_shared_between_replicas_through_the_state_file() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state.json");
    let state = state.to_str().unwrap();
    let mut a = ProxyRun::start(&["--state", state]);
    let r = a.calls("w", 1..2);
    assert!(r[0].1, "the pinned tool works: {:?}", r[0]);
    drop(a);
    let text = std::fs::read_to_string(state).unwrap();
    assert!(text.contains("pins:"), "the pins are recorded: {text}");

    let changed = [("STATE_TOOLS_CHANGED", "1")];
    let mut b = ProxyRun::start_with(&["--state", state], &changed);
    let r = b.calls("w", 2..3);
    assert!(!r[0].1 && r[0].2.contains("tool_changed"), "{:?}", r[0]);
    drop(b);

    let mut alone = ProxyRun::start_with(&[], &changed);
    assert!(
        alone.calls("w", 3..4)[0].1,
        "without the store, first use trusts it"
    );
    drop(alone);

    // A pins record another program wrote: every tool refused, whatever the listing.
    let store = jsongate::state::FileStore::new(dir.path().join("other.json").as_path());
    let server = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/integration/state_server.py"
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert!(store
        .put_new(&format!("pins:python3 {server}"), "not a lock", 60_000, now)
        .unwrap());
    let other = dir.path().join("other.json");
    let mut c = ProxyRun::start(&["--state", other.to_str().unwrap()]);
    let r = c.calls("w", 4..5);
    assert!(
        !r[0].1 && r[0].2.contains("pin_state_unavailable"),
        "{:?}",
        r[0]
    );
}
