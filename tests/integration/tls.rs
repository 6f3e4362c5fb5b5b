//! TLS on every network path of `jsongate serve`, end to end: certificates made here with
//! `rcgen` (a CA, server and client certificates), a real TLS upstream (Python's `ssl`, i.e.
//! OpenSSL, in front of the test tool API), `curl` (OpenSSL) as the TLS client of
//! jsongate's own listener, and the real binary between them.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};

use crate::proc::{listening, mcp_curl, session_id, with_port, Killed};
use crate::serve::{contract, curl, Upstream, ENVELOPE_OK};

/// A certificate authority and what it issued, as PEM files in a temporary directory.
pub(crate) struct Pki {
    pub(crate) dir: tempfile::TempDir,
    ca: rcgen::Certificate,
    ca_key: KeyPair,
}

impl Pki {
    pub(crate) fn new(name: &str) -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca_key = KeyPair::generate().unwrap();
        let mut p = CertificateParams::new(Vec::<String>::new()).unwrap();
        p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        p.distinguished_name
            .push(DnType::CommonName, format!("jsongate test CA {name}"));
        let ca = p.self_signed(&ca_key).unwrap();
        std::fs::write(dir.path().join("ca.pem"), ca.pem()).unwrap();
        Pki { dir, ca, ca_key }
    }

    pub(crate) fn ca(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// Issues a certificate for `localhost` and `127.0.0.1` (a server's, or with `client` a
    /// client's) as `NAME.pem` and `NAME.key`; returns both paths.
    pub(crate) fn issue(&self, name: &str, client: bool) -> (PathBuf, PathBuf) {
        let key = KeyPair::generate().unwrap();
        let mut p =
            CertificateParams::new(vec!["localhost".to_owned(), "127.0.0.1".to_owned()]).unwrap();
        p.distinguished_name.push(DnType::CommonName, name);
        p.extended_key_usages = vec![if client {
            ExtendedKeyUsagePurpose::ClientAuth
        } else {
            ExtendedKeyUsagePurpose::ServerAuth
        }];
        let cert = p.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        let (c, k) = (
            self.dir.path().join(format!("{name}.pem")),
            self.dir.path().join(format!("{name}.key")),
        );
        std::fs::write(&c, cert.pem()).unwrap();
        std::fs::write(&k, key.serialize_pem()).unwrap();
        (c, k)
    }
}

/// `jsongate serve` with a configuration written from `config` (`{contract}` replaced by the
/// contract's path), its stderr lines kept.
struct Serve {
    child: Killed,
    addr: SocketAddr,
    dir: tempfile::TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Serve {
    fn start(config: &str, env: &[(&str, &str)]) -> Result<Serve, String> {
        let dir = tempfile::tempdir().unwrap();
        let config = config.replace("{contract}", &serde_json::to_string(&contract()).unwrap());
        let path = dir.path().join("serve.json");
        std::fs::write(&path, config).unwrap();
        let (child, addr, stderr) = listening(
            Command::new(env!("CARGO_BIN_EXE_jsongate"))
                .envs(env.iter().copied())
                .args(["serve", "--config"])
                .arg(&path)
                .stdout(Stdio::null()),
        )?;
        Ok(Serve {
            child,
            addr,
            dir,
            stderr,
        })
    }

    fn audit(&self) -> Vec<serde_json::Value> {
        crate::serve::json_lines(&self.dir.path().join("audit.jsonl"))
    }
}

fn tls_upstream(pki: &Pki, client_ca: Option<&Path>) -> Upstream {
    let (cert, key) = pki.issue("upstream", false);
    let mut env = vec![
        ("UPSTREAM_TLS_CERT", cert.as_path()),
        ("UPSTREAM_TLS_KEY", key.as_path()),
    ];
    if let Some(ca) = client_ca {
        env.push(("UPSTREAM_TLS_CLIENT_CA", ca));
    }
    Upstream::start_env(&env)
}

fn route(up: &Upstream, host: &str, extra: &str) -> String {
    format!(
        r#"{{"method":"GET","path_prefix":"/reviews","upstream":"https://{host}:{}/api/changes",
            "contract_file":{{contract}},"context":{{"change_id":{{"query":"change_id"}}}}{extra}}}"#,
        up.port
    )
}

fn config(routes: &str, top: &str) -> String {
    format!(
        r#"{{"serve":1,"listen":"127.0.0.1:0","audit":"audit.jsonl","request_id_header":"X-Request-Id",{top}"routes":[{routes}]}}"#
    )
}

fn path(p: &Path) -> String {
    serde_json::to_string(p).unwrap()
}

#[test]
fn an_https_upstream_is_verified_and_gets_the_routes_own_credential() {
    let pki = Pki::new("a");
    let up = tls_upstream(&pki, None);
    let tls = format!(
        r#","upstream_tls":{{"ca_file":{},"system_roots":false}},"upstream_headers":{{"Authorization":"env:JG_TLS_TEST_TOKEN"}}"#,
        path(&pki.ca())
    );
    // By name (SNI and the certificate's DNS name) and by address (its IP SAN).
    for host in ["localhost", "127.0.0.1"] {
        let s = Serve::start(
            &config(&route(&up, host, &tls), ""),
            &[("JG_TLS_TEST_TOKEN", "Bearer upstream-credential")],
        )
        .unwrap();
        let url = format!("http://{}/reviews/c-42?change_id=c-42", s.addr);
        let (status, body) = curl(&[
            "-H",
            "Authorization: Bearer caller-token",
            "-H",
            "X-Request-Id: req-1",
            &url,
        ]);
        assert_eq!(status, 200);
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(v["outcome"], "success", "{body}");
        let seen = up.seen();
        let h = &seen.last().unwrap()["headers"];
        assert_eq!(h["authorization"], "Bearer upstream-credential");
        assert_eq!(h["host"], format!("{host}:{}", up.port));
        assert!(!serde_json::to_string(&seen)
            .unwrap()
            .contains("caller-token"));
        let audit = serde_json::to_string(&s.audit()).unwrap();
        assert!(!audit.contains("upstream-credential") && !audit.contains("caller-token"));
    }
}

#[test]
fn an_upstream_whose_certificate_does_not_verify_is_unavailable() {
    let pki = Pki::new("a");
    let other = Pki::new("b");
    let up = tls_upstream(&pki, None);
    // Trusting another CA only (not the system's roots, which do not know the test CA either).
    let tls = format!(
        r#","upstream_tls":{{"ca_file":{},"system_roots":false}}"#,
        path(&other.ca())
    );
    let s = Serve::start(&config(&route(&up, "localhost", &tls), ""), &[]).unwrap();
    let url = format!("http://{}/reviews/c-42?change_id=c-42", s.addr);
    let (status, body) = curl(&["-H", "X-Request-Id: req-1", &url]);
    assert_eq!(status, 502);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["outcome"], "failure", "{body}");
    assert_eq!(v["error"]["code"], "UPSTREAM_UNAVAILABLE", "{body}");
    assert!(up.seen().is_empty(), "no request reached the upstream");
    let a = s.audit();
    assert_eq!(a.last().unwrap()["error"]["kind"], "tls", "{a:?}");
    // A name the certificate does not carry is refused the same way.
    let tls = format!(
        r#","upstream_tls":{{"ca_file":{},"system_roots":false}}"#,
        path(&pki.ca())
    );
    let wrong = route(&up, "localhost", &tls).replace("https://localhost", "https://127.0.0.2");
    let s = Serve::start(&config(&wrong, ""), &[]).unwrap();
    let (_, body) = curl(&[&format!("http://{}/reviews/c-42?change_id=c-42", s.addr)]);
    assert!(body.contains("UPSTREAM_UNAVAILABLE"), "{body}");
}

#[test]
fn an_upstream_asking_for_a_client_certificate_gets_the_configured_one() {
    let pki = Pki::new("a");
    let clients = Pki::new("clients");
    let up = tls_upstream(&pki, Some(&clients.ca()));
    let (cc, ck) = clients.issue("gateway", true);
    let without = format!(
        r#","upstream_tls":{{"ca_file":{},"system_roots":false}}"#,
        path(&pki.ca())
    );
    let with = format!(
        r#","upstream_tls":{{"ca_file":{},"system_roots":false,"client_cert_file":{},"client_key_file":{}}}"#,
        path(&pki.ca()),
        path(&cc),
        path(&ck)
    );
    let s = Serve::start(&config(&route(&up, "localhost", &without), ""), &[]).unwrap();
    let url = format!("http://{}/reviews/c-42?change_id=c-42", s.addr);
    let (_, body) = curl(&["-H", "X-Request-Id: req-1", &url]);
    assert!(body.contains("UPSTREAM_UNAVAILABLE"), "{body}");
    let s = Serve::start(&config(&route(&up, "localhost", &with), ""), &[]).unwrap();
    let url = format!("http://{}/reviews/c-42?change_id=c-42", s.addr);
    let (_, body) = curl(&["-H", "X-Request-Id: req-1", &url]);
    assert_eq!(body, ENVELOPE_OK);
    // Half a client identity is a configuration error.
    let half = format!(r#","upstream_tls":{{"client_cert_file":{}}}"#, path(&cc));
    let e = Serve::start(&config(&route(&up, "localhost", &half), ""), &[])
        .err()
        .unwrap();
    assert!(e.contains("client_key_file"), "{e}");
}

#[test]
fn plain_http_off_this_machine_needs_an_explicit_opt_in() {
    let r = |extra: &str| {
        format!(
            r#"{{"path_prefix":"/x","upstream":"http://10.255.255.1:9/api","contract_file":{{contract}}{extra}}}"#
        )
    };
    let e = Serve::start(&config(&r(""), ""), &[]).err().unwrap();
    assert!(
        e.contains("plain HTTP") && e.contains("allow_plaintext"),
        "{e}"
    );
    assert!(e.contains("routes/0/upstream"), "{e}");
    assert!(Serve::start(&config(&r(r#","allow_plaintext":true"#), ""), &[]).is_ok());
    // Credentials come from the environment or a file, never inline.
    let inline =
        r(r#","allow_plaintext":true,"upstream_headers":{"Authorization":"Bearer inline"}"#);
    let e = Serve::start(&config(&inline, ""), &[]).err().unwrap();
    assert!(e.contains("upstream_headers"), "{e}");
    let unset = r(
        r#","allow_plaintext":true,"upstream_headers":{"Authorization":"env:JG_TLS_TEST_UNSET"}"#,
    );
    let e = Serve::start(&config(&unset, ""), &[]).err().unwrap();
    assert!(e.contains("JG_TLS_TEST_UNSET"), "{e}");
}

/// `curl` over TLS to jsongate's listener trusting `ca`: status and body (0 when the
/// handshake fails).
fn curl_tls(ca: &Path, addr: SocketAddr, path: &str) -> (u16, String) {
    let url = format!("https://localhost:{}{path}", addr.port());
    curl(&[
        "--cacert",
        ca.to_str().unwrap(),
        "-H",
        "X-Request-Id: req-1",
        &url,
    ])
}

#[test]
fn the_listener_serves_tls_and_reloads_its_certificate() {
    let pki = Pki::new("a");
    let (cert, key) = pki.issue("listener", false);
    let up = Upstream::start_env(&[]);
    let routes = format!(
        r#"{{"method":"GET","path_prefix":"/reviews","upstream":"http://127.0.0.1:{}/api/changes",
            "contract_file":{{contract}},"context":{{"change_id":{{"query":"change_id"}}}}}}"#,
        up.port
    );
    let top = format!(
        r#""tls":{{"cert_file":{},"key_file":{}}},"#,
        path(&cert),
        path(&key)
    );
    let s = Serve::start(&config(&routes, &top), &[]).unwrap();
    let q = "/reviews/c-42?change_id=c-42";
    assert_eq!(
        curl_tls(&pki.ca(), s.addr, q),
        (200, ENVELOPE_OK.to_owned())
    );
    // Plain HTTP to the TLS port gets no answer.
    let (status, _) = curl(&[&format!("http://{}{q}", s.addr)]);
    assert_eq!(status, 0);
    // A client that does not trust the CA refuses the listener.
    let other = Pki::new("b");
    assert_eq!(curl_tls(&other.ca(), s.addr, q).0, 0);

    // New files from another CA, then SIGHUP: the new pair is served at once.
    let (c2, k2) = other.issue("listener", false);
    std::fs::copy(&c2, &cert).unwrap();
    std::fs::copy(&k2, &key).unwrap();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(s.child.id()).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while curl_tls(&other.ca(), s.addr, q).0 != 200 {
        assert!(Instant::now() < deadline, "the new certificate is served");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(curl_tls(&pki.ca(), s.addr, q).0, 0);

    // A broken key file: the reload is refused and the pair served before stays.
    std::fs::write(&key, "not a key").unwrap();
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !s.stderr.lock().unwrap().contains("not reloaded") {
        assert!(Instant::now() < deadline, "the refused reload is reported");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(curl_tls(&other.ca(), s.addr, q).0, 200);

    // Changed files are picked up without a signal.
    let (c3, k3) = pki.issue("listener-3", false);
    std::fs::copy(&k3, &key).unwrap();
    std::fs::copy(&c3, &cert).unwrap();
    let deadline = Instant::now() + Duration::from_secs(15);
    while curl_tls(&pki.ca(), s.addr, q).0 != 200 {
        assert!(Instant::now() < deadline, "changed files are reloaded");
        std::thread::sleep(Duration::from_millis(200));
    }
    // SIGHUP never ended the process.
    let mut s = s;
    assert!(s.child.running());
}

/// One request to the MCP front over TLS (curl trusting `ca`): status, headers and body.
fn mcp_tls(
    ca: &Path,
    url: &str,
    session: Option<&str>,
    headers: &[&str],
    body: &str,
) -> (u16, String, String) {
    let headers: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    mcp_curl(
        &["--cacert", ca.to_str().unwrap()],
        url,
        session,
        &headers,
        body,
    )
}

#[test]
fn the_mcp_front_speaks_tls_on_both_sides_and_never_passes_the_callers_token() {
    let pki = Pki::new("a");
    let (ucert, ukey) = pki.issue("mcp-upstream", false);
    let calls = tempfile::NamedTempFile::new().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/mcp_http_server.py");
    let (_server, port) = with_port(
        Command::new("python3")
            .env("UPSTREAM_TLS_CERT", &ucert)
            .env("UPSTREAM_TLS_KEY", &ukey)
            .arg(script)
            .arg(calls.path()),
    );
    let (lcert, lkey) = pki.issue("mcp-front", false);
    let start = |upstream_ca: &Path| {
        let (proxy, addr, _) = listening(
            Command::new(env!("CARGO_BIN_EXE_jsongate"))
                .env("JG_TLS_TEST_MCP_UPSTREAM", "Bearer gateway-credential")
                .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
                .arg(format!("https://localhost:{port}/mcp"))
                .arg("--upstream-ca-file")
                .arg(upstream_ca)
                .arg("--upstream-no-system-roots")
                .args([
                    "--upstream-header",
                    "Authorization=env:JG_TLS_TEST_MCP_UPSTREAM",
                ])
                .arg("--tls-cert")
                .arg(&lcert)
                .arg("--tls-key")
                .arg(&lkey),
        )
        .unwrap();
        (proxy, format!("https://localhost:{}/mcp", addr.port()))
    };
    let (proxy, url) = start(&pki.ca());
    let ca = pki.ca();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#;
    let mut sessions = Vec::new();
    for token in ["Bearer token-a", "Bearer token-b"] {
        let auth = format!("authorization: {token}");
        let (status, head, body) = mcp_tls(&ca, &url, None, &[&auth], init);
        assert_eq!(status, 200, "{head}{body}");
        let sid = session_id(&head).expect("a session id");
        let n = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(mcp_tls(&ca, &url, Some(&sid), &[&auth], n).0, 202);
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"whoami"}}}"#;
        let (status, _, body) = mcp_tls(&ca, &url, Some(&sid), &[&auth], call);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("Bearer gateway-credential"), "{body}");
        sessions.push((sid, auth));
    }
    // Each session stays its caller's.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"whoami"}}}"#;
    let (a, b) = (&sessions[0], &sessions[1]);
    assert_eq!(mcp_tls(&ca, &url, Some(&a.0), &[&b.1], call).0, 403);
    let seen = std::fs::read_to_string(calls.path()).unwrap();
    assert_eq!(seen.lines().count(), 2, "{seen}");
    assert!(!seen.contains("token-"), "{seen}");
    drop(proxy);
    // An upstream whose certificate does not verify: the call fails, nothing reaches it.
    let other = Pki::new("b");
    let (_proxy, url) = start(&other.ca());
    let (_, _, body) = mcp_tls(&ca, &url, None, &[], init);
    assert!(body.contains("upstream is unavailable"), "{body}");
    assert_eq!(std::fs::read_to_string(calls.path()).unwrap(), seen);
}
