//! Caller authentication on both network fronts, end to end: tokens signed here with the
//! committed test keys (`fixtures/auth`), the real binary, curl as the client, the test MCP
//! server and tool API behind it. Every refusal is checked for its status, its
//! `WWW-Authenticate` challenge and its audit line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{EcdsaKeyPair, Ed25519KeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::proc::{listening, mcp_curl, session_id, with_port, Killed};

const RESOURCE: &str = "https://gw.test/mcp";
const ISSUER: &str = "https://idp.test";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/auth")
        .join(name)
}

fn b64(b: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(b)
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A compact JWS of `header` and `claims`, signed with the committed Ed25519 key.
fn sign_ed(header: &str, claims: &str) -> String {
    let key =
        Ed25519KeyPair::from_pkcs8(&std::fs::read(fixture("ed25519-test.pk8")).unwrap()).unwrap();
    let input = format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
    let sig = key.sign(input.as_bytes());
    format!("{input}.{}", b64(sig.as_ref()))
}

/// The same with the committed P-256 key (ES256).
fn sign_ec(header: &str, claims: &str) -> String {
    let key = EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        &std::fs::read(fixture("ec-test.pk8")).unwrap(),
    )
    .unwrap();
    let input = format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
    let sig = key.sign(&SystemRandom::new(), input.as_bytes()).unwrap();
    format!("{input}.{}", b64(sig.as_ref()))
}

fn claims(sub: &str, scope: &str, extra: &str) -> String {
    let t = now();
    format!(
        r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"{sub}","scope":"{scope}","iat":{t},"exp":{},"client_id":"agent-app"{extra}}}"#,
        t + 300
    )
}

fn token(sub: &str, scope: &str) -> String {
    sign_ed(
        r#"{"alg":"EdDSA","kid":"ed-1","typ":"JWT"}"#,
        &claims(sub, scope, ""),
    )
}

/// The auth section for the tests: the committed key set, scope `invoices:read` required,
/// and one API key (`ci-secret`) for subject `ci-bot`.
fn auth_file(dir: &Path) -> PathBuf {
    let key_hash = {
        let d = aws_lc_rs::digest::digest(&aws_lc_rs::digest::SHA256, b"ci-secret");
        d.as_ref().iter().fold(String::new(), |mut s, b| {
            use std::fmt::Write as _;
            let _ = write!(s, "{b:02x}");
            s
        })
    };
    let auth = format!(
        r#"{{"resource":"{RESOURCE}","issuer":"{ISSUER}","jwks_file":{},
            "required_scopes":["invoices:read"],
            "api_keys":[{{"sha256":"{key_hash}","subject":"ci-bot","scopes":["invoices:read"]}}]}}"#,
        serde_json::to_string(&fixture("jwks.json")).unwrap()
    );
    let p = dir.join("auth.json");
    std::fs::write(&p, auth).unwrap();
    p
}

struct Mcp {
    // Field order: the proxy is stopped before the server behind it.
    _proxy: Killed,
    _server: Killed,
    addr: SocketAddr,
    calls: tempfile::NamedTempFile,
    dir: tempfile::TempDir,
    /// The test server's port.
    port: u16,
}

impl Mcp {
    fn start(extra: &[&str]) -> Mcp {
        let dir = tempfile::tempdir().unwrap();
        let calls = tempfile::NamedTempFile::new().unwrap();
        let script =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/mcp_http_server.py");
        let (server, port) = with_port(Command::new("python3").arg(script).arg(calls.path()));
        let auth = auth_file(dir.path());
        let (proxy, addr, _) = listening(
            Command::new(env!("CARGO_BIN_EXE_jsongate"))
                .env("JG_AUTH_TEST_UPSTREAM", "Bearer gateway-credential")
                .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
                .arg(format!("http://127.0.0.1:{port}/mcp"))
                .arg("--auth")
                .arg(&auth)
                .arg("--audit")
                .arg(dir.path().join("audit.jsonl"))
                .args([
                    "--upstream-header",
                    "Authorization=env:JG_AUTH_TEST_UPSTREAM",
                ])
                .args(extra),
        )
        .unwrap();
        Mcp {
            _proxy: proxy,
            _server: server,
            addr,
            calls,
            dir,
            port,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn audit(&self) -> Vec<serde_json::Value> {
        crate::serve::json_lines(&self.dir.path().join("audit.jsonl"))
    }
}

/// One request with curl: status, lower-cased head, body.
fn curl_mcp(
    url: &str,
    session: Option<&str>,
    headers: &[String],
    body: &str,
) -> (u16, String, String) {
    mcp_curl(&[], url, session, headers, body)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"whoami"}}}"#;

fn bearer(t: &str) -> String {
    format!("authorization: Bearer {t}")
}

/// `initialize` then `notifications/initialized` with `auth`; the session id.
fn open_session(url: &str, auth: &str) -> String {
    let (status, head, body) = curl_mcp(url, None, &[auth.to_owned()], INIT);
    assert_eq!(status, 200, "{head}{body}");
    let sid = session_id(&head).expect("a session id");
    let n = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(curl_mcp(url, Some(&sid), &[auth.to_owned()], n).0, 202);
    sid
}

#[test]
fn the_mcp_front_is_an_oauth_protected_resource() {
    let m = Mcp::start(&[]);
    let url = m.url();
    // The metadata document, without credentials.
    let meta = format!("http://{}/.well-known/oauth-protected-resource/mcp", m.addr);
    let out = Command::new("curl")
        .args(["-s", "--max-time", "10", &meta])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["resource"], RESOURCE);
    assert_eq!(doc["authorization_servers"][0], ISSUER);
    // No token: 401 with the challenge naming the document; nothing forwarded.
    let (status, head, _) = curl_mcp(&url, None, &[], INIT);
    assert_eq!(status, 401);
    assert!(
        head.contains(r#"www-authenticate: bearer resource_metadata="https://gw.test/.well-known/oauth-protected-resource/mcp""#),
        "{head}"
    );
    // A valid token: the session works, the upstream sees the gateway's credential only.
    let alice = token("alice", "invoices:read");
    let sid = open_session(&url, &bearer(&alice));
    let (status, _, body) = curl_mcp(&url, Some(&sid), &[bearer(&alice)], CALL);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Bearer gateway-credential"), "{body}");
    // A fresh token for the same caller keeps the session (tokens are refreshed) ...
    let again = sign_ec(
        r#"{"alg":"ES256","kid":"ec-1"}"#,
        &claims("alice", "invoices:read other", ""),
    );
    let (status, _, body) = curl_mcp(
        &url,
        Some(&sid),
        &[bearer(&again)],
        CALL.replace("\"id\":1", "\"id\":2").as_str(),
    );
    assert_eq!(status, 200, "{body}");
    // ... another caller's valid token does not.
    let bob = token("bob", "invoices:read");
    let (status, _, body) = curl_mcp(&url, Some(&sid), &[bearer(&bob)], CALL);
    assert_eq!(status, 403, "{body}");
    // An API key is a caller too.
    let sid_ci = open_session(&url, &bearer("ci-secret"));
    assert_ne!(sid_ci, sid);
    let (status, _, body) = curl_mcp(&url, Some(&sid_ci), &[bearer("ci-secret")], CALL);
    assert_eq!(status, 200, "{body}");
    let calls = std::fs::read_to_string(m.calls.path()).unwrap();
    assert_eq!(calls.lines().count(), 3, "{calls}");
    assert!(
        !calls.contains(&alice) && !calls.contains("ci-secret"),
        "{calls}"
    );
    // Every relay line names its caller; no line carries a token.
    let audit = m.audit();
    let subjects: Vec<&str> = audit.iter().filter_map(|l| l["subject"].as_str()).collect();
    assert!(
        subjects.contains(&"alice") && subjects.contains(&"ci-bot"),
        "{audit:?}"
    );
    let text = serde_json::to_string(&audit).unwrap();
    assert!(!text.contains(&alice) && !text.contains("ci-secret"));
}

#[test]
fn every_bad_credential_is_refused_with_its_reason() {
    let m = Mcp::start(&[]);
    let url = m.url();
    let t = now();
    let hmac_key = aws_lc_rs::hmac::Key::new(
        aws_lc_rs::hmac::HMAC_SHA256,
        &std::fs::read(fixture("jwks.json")).unwrap(),
    );
    let hs_input = format!(
        "{}.{}",
        b64(br#"{"alg":"HS256","kid":"rsa-1"}"#),
        b64(claims("mallory", "invoices:read", "").as_bytes())
    );
    let hs = format!(
        "{hs_input}.{}",
        b64(aws_lc_rs::hmac::sign(&hmac_key, hs_input.as_bytes()).as_ref())
    );
    let good = token("alice", "invoices:read");
    let tampered = {
        let parts: Vec<&str> = good.split('.').collect();
        let forged = claims("admin", "invoices:read", "");
        format!("{}.{}.{}", parts[0], b64(forged.as_bytes()), parts[2])
    };
    let ed = r#"{"alg":"EdDSA","kid":"ed-1"}"#;
    let cases: Vec<(&str, String, u16, &str)> = vec![
        (
            "expired",
            sign_ed(
                ed,
                &format!(
                    r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"alice","scope":"invoices:read","exp":{}}}"#,
                    t - 3600
                ),
            ),
            401,
            "expired",
        ),
        (
            "wrong audience",
            sign_ed(
                ed,
                &claims("alice", "invoices:read", "").replace(RESOURCE, "https://other.test/mcp"),
            ),
            401,
            "audience",
        ),
        (
            "wrong issuer",
            sign_ed(
                ed,
                &claims("alice", "invoices:read", "").replace(ISSUER, "https://evil.test"),
            ),
            401,
            "issuer",
        ),
        (
            "unsigned",
            format!(
                "{}.{}.",
                b64(br#"{"alg":"none"}"#),
                b64(claims("alice", "invoices:read", "").as_bytes())
            ),
            401,
            "algorithm",
        ),
        ("key confusion", hs, 401, "algorithm"),
        ("tampered", tampered, 401, "signature"),
        (
            "unknown key",
            sign_ed(
                r#"{"alg":"EdDSA","kid":"nope"}"#,
                &claims("alice", "invoices:read", ""),
            ),
            401,
            "unknown_key",
        ),
        (
            "no scope",
            token("alice", "other"),
            403,
            "insufficient_scope",
        ),
        ("wrong API key", "not-the-key".to_owned(), 401, "api_key"),
    ];
    for (name, tok, status, reason) in &cases {
        let (got, head, _) = curl_mcp(&url, None, &[bearer(tok)], INIT);
        assert_eq!(got, *status, "{name}: {head}");
        let challenge = head
            .lines()
            .find(|l| l.starts_with("www-authenticate: "))
            .unwrap_or_else(|| panic!("{name}: {head}"));
        assert!(
            challenge.contains("resource_metadata="),
            "{name}: {challenge}"
        );
        let code = if *status == 403 {
            "insufficient_scope"
        } else {
            "invalid_token"
        };
        assert!(
            challenge.contains(&format!("error=\"{code}\"")),
            "{name}: {challenge}"
        );
        if *status == 403 {
            assert!(
                challenge.contains(r#"scope="invoices:read""#),
                "{challenge}"
            );
        }
        let line = m.audit().last().cloned().unwrap();
        let verdict = if *status == 403 {
            "forbidden"
        } else {
            "unauthenticated"
        };
        assert_eq!(line["verdict"], verdict, "{name}: {line}");
        assert_eq!(line["http"]["status"], *status, "{name}: {line}");
        assert_eq!(line["reason"], *reason, "{name}: {line}");
        assert!(!line.to_string().contains(tok.as_str()), "{name}");
    }
    // A token in the query string is never accepted (it would be logged with the URL).
    let (status, _, _) = curl_mcp(
        &format!("{url}?access_token={good}"),
        None,
        &[bearer(&good)],
        INIT,
    );
    assert_eq!(status, 401);
    // Two Authorization headers are one too many.
    let (status, _, _) = curl_mcp(&url, None, &[bearer(&good), bearer(&good)], INIT);
    assert_eq!(status, 401);
    // Nothing reached the upstream.
    assert_eq!(std::fs::read_to_string(m.calls.path()).unwrap(), "");
}

#[test]
fn scopes_are_grants_for_the_policy() {
    // The policy asks for `invoices:export`; only a caller whose token grants it may call.
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        r#"{"policy":1,"tools":{"get_invoice":{"arguments":true,"requires":["invoices:export"]}}}"#,
    )
    .unwrap();
    let m = Mcp::start(&["--policy", policy.to_str().unwrap(), "--grants", ""]);
    let url = m.url();
    let with = token("alice", "invoices:read invoices:export");
    let sid = open_session(&url, &bearer(&with));
    let (_, _, body) = curl_mcp(&url, Some(&sid), &[bearer(&with)], CALL);
    assert!(body.contains("gateway-credential"), "{body}");
    let without = token("bob", "invoices:read");
    let sid = open_session(&url, &bearer(&without));
    let (_, _, body) = curl_mcp(&url, Some(&sid), &[bearer(&without)], CALL);
    assert!(!body.contains("gateway-credential"), "{body}");
    assert!(body.contains("error") || body.contains("isError"), "{body}");
    let refused = m
        .audit()
        .into_iter()
        .find(|l| l["subject"] == "bob" && l["tool"] == "get_invoice")
        .expect("bob's call is audited");
    assert_ne!(refused["verdict"], "passed", "{refused}");
}

/// Writes `serve.json` in `dir`: the review contract's GET route to the test upstream at
/// `port`, with `top` (members ending in `,`) and `route` (members starting with `,`) added.
fn review_serve_config(dir: &Path, port: u16, top: &str, route: &str) -> PathBuf {
    let config = format!(
        r#"{{"serve":1,"listen":"127.0.0.1:0","request_id_header":"X-Request-Id",{top}
            "routes":[{{"method":"GET","path_prefix":"/reviews","upstream":"http://127.0.0.1:{port}/api/changes"{route},
              "contract_file":{},"context":{{"change_id":{{"query":"change_id"}}}}}}]}}"#,
        serde_json::to_string(&crate::serve::contract()).unwrap()
    );
    let path = dir.join("serve.json");
    std::fs::write(&path, config).unwrap();
    path
}

#[test]
fn serve_checks_callers_and_hands_the_subject_to_the_contract() {
    let up = crate::serve::Upstream::start_env(&[]);
    let dir = tempfile::tempdir().unwrap();
    let auth = std::fs::read_to_string(auth_file(dir.path())).unwrap();
    let top = format!(r#""audit":"audit.jsonl","auth":{auth},"#);
    let path = review_serve_config(dir.path(), up.port, &top, "");
    let (_child, addr, _) = listening(
        Command::new(env!("CARGO_BIN_EXE_jsongate"))
            .args(["serve", "--config"])
            .arg(&path),
    )
    .unwrap();
    let url = format!("http://{addr}/reviews/c-42?change_id=c-42");
    let (status, _) = crate::serve::curl(&[&url]);
    assert_eq!(status, 401);
    let alice = token("alice", "invoices:read");
    let auth_h = bearer(&alice);
    let (status, body) = crate::serve::curl(&["-H", &auth_h, "-H", "X-Request-Id: req-1", &url]);
    assert_eq!((status, body.as_str()), (200, crate::serve::ENVELOPE_OK));
    // The upstream never sees the caller's token; the audit names the caller.
    assert!(!serde_json::to_string(&up.seen()).unwrap().contains(&alice));
    let audit = crate::serve::json_lines(&dir.path().join("audit.jsonl"));
    assert_eq!(audit[0]["verdict"], "unauthenticated");
    assert_eq!(audit[0]["http"]["status"], 401);
    assert_eq!(audit[1]["subject"], "alice", "{audit:?}");
    let meta = format!("http://{addr}/.well-known/oauth-protected-resource/mcp");
    let (status, body) = crate::serve::curl(&[&meta]);
    assert_eq!(status, 200, "{body}");
}

#[test]
fn a_jwks_url_is_fetched_and_fetched_again_for_an_unknown_key() {
    // The identity provider's key set, served over loopback HTTP from a file the test rewrites.
    let dir = tempfile::tempdir().unwrap();
    let all: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("jwks.json")).unwrap()).unwrap();
    let only = |kids: &[&str]| {
        let keys: Vec<_> = all["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| kids.contains(&k["kid"].as_str().unwrap()))
            .cloned()
            .collect();
        serde_json::json!({ "keys": keys }).to_string()
    };
    std::fs::write(dir.path().join("jwks.json"), only(&["ec-1"])).unwrap();
    let script = r"
import functools, http.server, sys
h = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[1])
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), h)
print(s.server_address[1], flush=True)
s.serve_forever()
";
    let (_idp, port) = with_port(
        Command::new("python3")
            .args(["-c", script])
            .arg(dir.path())
            .stderr(Stdio::null()),
    );
    let auth = dir.path().join("auth-url.json");
    std::fs::write(
        &auth,
        format!(
            r#"{{"resource":"{RESOURCE}","issuer":"{ISSUER}","jwks_url":"http://127.0.0.1:{port}/jwks.json"}}"#
        ),
    )
    .unwrap();
    let m = Mcp::start(&[]);
    // Another proxy in front of the same server, with the URL's keys.
    let (_proxy, addr, _) = listening(
        Command::new(env!("CARGO_BIN_EXE_jsongate"))
            .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
            .arg(format!("http://127.0.0.1:{}/mcp", m.port))
            .arg("--auth")
            .arg(&auth),
    )
    .unwrap();
    let url = format!("http://{addr}/mcp");
    let ec = sign_ec(r#"{"alg":"ES256","kid":"ec-1"}"#, &claims("alice", "", ""));
    assert_eq!(curl_mcp(&url, None, &[bearer(&ec)], INIT).0, 200);
    // A key the set does not hold yet: refused, and the set is fetched again (at most
    // every 30 s), after which the rotated-in key is accepted.
    let ed = sign_ed(r#"{"alg":"EdDSA","kid":"ed-1"}"#, &claims("alice", "", ""));
    assert_eq!(curl_mcp(&url, None, &[bearer(&ed)], INIT).0, 401);
    std::fs::write(dir.path().join("jwks.json"), only(&["ec-1", "ed-1"])).unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(45);
    loop {
        let (status, _, _) = curl_mcp(&url, None, &[bearer(&ed)], INIT);
        if status == 200 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the rotated key is fetched"
        );
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
}

/// A token endpoint (loopback HTTP) that issues `sekret-token` and logs each request's
/// `Authorization` and body to `log`; its port.
fn token_endpoint(log: &Path) -> (Killed, u16) {
    let script = r#"
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        with open(sys.argv[1], "a") as f:
            f.write(json.dumps({"auth": self.headers.get("Authorization"), "body": body,
                                "type": self.headers.get("Content-Type")}) + "\n")
        out = json.dumps({"access_token": "sekret-token", "token_type": "Bearer",
                          "expires_in": 3600}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)
    def log_message(self, *a):
        pass
s = ThreadingHTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
    with_port(Command::new("python3").args(["-c", script]).arg(log))
}

#[test]
fn upstream_credentials_from_a_client_credentials_grant() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("token-requests.jsonl");
    let (_idp, port) = token_endpoint(&log);
    let up = crate::serve::Upstream::start_env(&[]);
    let grant = format!(
        r#"{{"token_url":"http://127.0.0.1:{port}/oauth/token","client_id":"gw:1","client_secret":"env:JG_OAUTH_TEST_SECRET",
            "scope":"reviews:read","resource":"https://reviews.test/api"}}"#
    );
    let route = format!(r#","upstream_oauth":{grant}"#);
    let path = review_serve_config(dir.path(), up.port, "", &route);
    let (_child, addr, _) = listening(
        Command::new(env!("CARGO_BIN_EXE_jsongate"))
            .env("JG_OAUTH_TEST_SECRET", "s3cret value")
            .args(["serve", "--config"])
            .arg(&path),
    )
    .unwrap();
    // The test upstream's `auth` answer needs `Bearer sekret-token`, which only the grant gives.
    for i in 0..3 {
        let url = format!("http://{addr}/reviews/auth?change_id=c-42");
        let id = format!("X-Request-Id: req-{i}");
        let (status, body) = crate::serve::curl(&[
            "-H",
            &id,
            "-H",
            "Authorization: Bearer caller",
            "-H",
            "Cookie: session=cookie-value",
            &url,
        ]);
        assert_eq!(status, 200, "{body}");
        assert!(body.contains(r#""outcome":"success""#), "{body}");
    }
    // One token request for the three calls, authenticated with HTTP Basic (each part
    // form-encoded first), asking for the scope and the resource.
    let requests = crate::serve::json_lines(&log);
    assert_eq!(requests.len(), 1, "{requests:?}");
    let basic = requests[0]["auth"]
        .as_str()
        .unwrap()
        .strip_prefix("Basic ")
        .unwrap();
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(basic)
        .unwrap();
    assert_eq!(String::from_utf8(decoded).unwrap(), "gw%3A1:s3cret+value");
    assert_eq!(
        requests[0]["body"],
        "grant_type=client_credentials&scope=reviews%3Aread&resource=https%3A%2F%2Freviews.test%2Fapi"
    );
    assert_eq!(requests[0]["type"], "application/x-www-form-urlencoded");
    assert!(!serde_json::to_string(&up.seen())
        .unwrap()
        .contains("Bearer caller"));
    // A grant whose secret is not there is a configuration error naming the variable.
    let out = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args(["serve", "--config"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("JG_OAUTH_TEST_SECRET"));
    // The MCP front the same way (`--upstream-oauth FILE`): the grant's token replaces the
    // static header, and the caller's token still never passes.
    let grant_file = dir.path().join("grant.json");
    std::fs::write(
        &grant_file,
        grant.replace("env:JG_OAUTH_TEST_SECRET", "file:secret.txt"),
    )
    .unwrap();
    std::fs::write(dir.path().join("secret.txt"), "s3cret value\n").unwrap();
    let m = Mcp::start(&["--upstream-oauth", grant_file.to_str().unwrap()]);
    let alice = token("alice", "invoices:read");
    let sid = open_session(&m.url(), &bearer(&alice));
    let (_, _, body) = curl_mcp(&m.url(), Some(&sid), &[bearer(&alice)], CALL);
    assert!(body.contains("Bearer sekret-token"), "{body}");
    assert_eq!(crate::serve::json_lines(&log).len(), 2);
}

#[test]
fn an_upstream_401_or_403_is_unauthorized_with_reauthorize_for_that_caller_only() {
    let m = Mcp::start(&[]);
    let url = m.url();
    let (alice, bob) = (
        token("alice", "invoices:read"),
        token("bob", "invoices:read"),
    );
    let (sa, sb) = (
        open_session(&url, &bearer(&alice)),
        open_session(&url, &bearer(&bob)),
    );
    let call = |which: &str, id: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_invoice","arguments":{{"id":"{which}"}}}}}}"#
        )
    };
    // Alice's calls are refused upstream while Bob's pass, side by side.
    let (a, b) = std::thread::scope(|t| {
        let a = t.spawn(|| {
            ["401", "403"]
                .iter()
                .enumerate()
                .map(|(i, w)| curl_mcp(&url, Some(&sa), &[bearer(&alice)], &call(w, 10 + i as u32)))
                .collect::<Vec<_>>()
        });
        let b = t.spawn(|| {
            (0..2)
                .map(|i| curl_mcp(&url, Some(&sb), &[bearer(&bob)], &call("ok", 20 + i)))
                .collect::<Vec<_>>()
        });
        (a.join().unwrap(), b.join().unwrap())
    });
    for (i, (status, _, body)) in a.iter().enumerate() {
        // The client's exchange is fine (200): the upstream's refusal is about the proxy's
        // credentials, and an HTTP 401 would send the client to authorise itself again.
        assert_eq!(*status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["id"], 10 + i, "{body}");
        assert_eq!(v["error"]["data"]["code"], "UNAUTHORIZED", "{body}");
        assert_eq!(v["error"]["data"]["retry"], "reauthorize", "{body}");
        assert!(!body.contains("ignore all rules"), "{body}");
    }
    for (status, _, body) in &b {
        assert_eq!(*status, 200, "{body}");
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["result"]["structuredContent"]["id"], "ok", "{body}");
        assert!(!body.contains("UNAUTHORIZED"), "{body}");
    }
    // The audit names the caller whose exchange was refused, and only that caller.
    let audit = m.audit();
    let refused: Vec<_> = audit
        .iter()
        .filter(|r| r["verdict"] == "upstream_unauthorized")
        .collect();
    assert_eq!(refused.len(), 2, "{audit:?}");
    for r in &refused {
        assert_eq!(r["subject"], "alice", "{r}");
        assert_eq!(r["code"], "UNAUTHORIZED", "{r}");
        assert_eq!(r["retry"]["reason"], "reauthorize", "{r}");
        assert!(
            [401, 403].contains(&r["http"]["upstream_status"].as_u64().unwrap()),
            "{r}"
        );
    }
    let text = serde_json::to_string(&audit).unwrap();
    assert!(!text.contains("ignore all rules"));
}

#[test]
fn a_signed_identity_claim_is_believed_only_when_its_signature_issuer_audience_and_time_hold() {
    use jsongate::gate::{Context, Contract, FailureCode, Gate, Request, Timestamp};
    let keys = fixture("jwks.json");
    let contract = Contract::from_slice(
        format!(
            r#"{{"contract":1,"tool":"review","version":"1",
              "upstream":[{{"version":"v1","schema":{{"type":"object","required":["approval","approver"]}}}}],
              "fields":{{"approval":{{"pointer":"/approval","expose":false}},"approver":{{"pointer":"/approver"}}}},
              "checks":[{{"check":"signed","field":"approval","keys":{},"issuer":"{ISSUER}",
                          "audience":"review-tool","subject_field":"approver"}}]}}"#,
            serde_json::to_string(keys.to_str().unwrap()).unwrap()
        )
        .as_bytes(),
        Path::new("."),
    )
    .unwrap();
    let gate = Gate::new(&contract).unwrap();
    let t = now();
    let signed = |sub: &str, iss: &str, aud: &str, exp: u64| {
        sign_ed(
            r#"{"alg":"EdDSA","kid":"ed-1","typ":"JWT"}"#,
            &format!(r#"{{"iss":"{iss}","aud":"{aud}","sub":"{sub}","iat":{t},"exp":{exp}}}"#),
        )
    };
    let good = signed("alice", ISSUER, "review-tool", t + 300);
    let run = |token: &str, approver: &str| {
        let body = format!(
            r#"{{"approval":{},"approver":"{approver}"}}"#,
            serde_json::to_string(token).unwrap()
        );
        let req = Request::new("req-1", Context::new().now(Timestamp::now()));
        let d = gate.run_slice(body.as_bytes(), &req).unwrap();
        assert!(
            !d.output.contains(token),
            "the token never reaches the agent"
        );
        (
            d.envelope.code(),
            d.audit.error.and_then(|e| e.reason).unwrap_or_default(),
        )
    };
    assert_eq!(run(&good, "alice"), (None, String::new()));
    let refused = |token: &str, approver: &str, reason: &str| {
        assert_eq!(
            run(token, approver),
            (Some(FailureCode::Mismatch), reason.to_owned()),
            "{reason}"
        );
    };
    // The claim says mallory; the signature says alice.
    refused(&good, "mallory", "subject_mismatch");
    // One byte of the claims changed.
    let mut parts: Vec<String> = good.split('.').map(str::to_owned).collect();
    parts[1] = b64(format!(
        r#"{{"iss":"{ISSUER}","aud":"review-tool","sub":"mallory","iat":{t},"exp":{}}}"#,
        t + 300
    )
    .as_bytes());
    refused(&parts.join("."), "mallory", "bad_signature");
    refused(
        &signed("alice", ISSUER, "review-tool", t - 600),
        "alice",
        "expired",
    );
    refused(
        &signed("alice", "https://evil.example", "review-tool", t + 300),
        "alice",
        "wrong_issuer",
    );
    refused(
        &signed("alice", ISSUER, "other-tool", t + 300),
        "alice",
        "wrong_audience",
    );
    refused("alice", "alice", "malformed");
    // HMAC with the public key as the secret (key confusion): never accepted.
    let hs = format!(
        "{}.{}.AAAA",
        b64(br#"{"alg":"HS256","typ":"JWT"}"#),
        b64(br#"{"sub":"alice"}"#)
    );
    refused(&hs, "alice", "algorithm");
    // A keys file that is not there is a configuration error naming it; a device or a huge
    // file is never read whole (the key set's bound holds).
    for keys in ["no-such.jwks", "/dev/zero"] {
        let e = Contract::from_slice(
            format!(
                r#"{{"contract":1,"tool":"t","version":"1","upstream":[{{"version":"v1","schema":{{}}}}],
                "fields":{{"a":{{"pointer":"/a"}}}},
                "checks":[{{"check":"signed","field":"a","keys":"{keys}","issuer":"i","audience":"a"}}]}}"#
            )
            .as_bytes(),
            Path::new("."),
        )
        .unwrap_err();
        assert!(e.to_string().contains(keys), "{e}");
    }
}
