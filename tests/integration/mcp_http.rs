//! `jsongate mcp-proxy --upstream URL` (MCP Streamable HTTP) end to end on loopback: the real
//! binary between a Python MCP server on the Streamable HTTP transport
//! (`mcp_http_server.py`, JSON and SSE answers, with or without sessions) and curl (or a raw
//! socket, where a test needs thousands of requests or a body that trickles) as the clients.
//! Several clients with different credentials run at once: nothing of one (tokens, messages,
//! ids, sessions) may reach another, and every relay a client starts is released.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::proc::{listening, with_port, Killed};

struct Running {
    // Field order: the proxy is stopped before the server behind it.
    proxy: Option<Killed>,
    _server: Killed,
    server_port: u16,
    proxy_addr: Option<SocketAddr>,
    calls: tempfile::NamedTempFile,
    /// The proxy's standard error after its first line.
    stderr: Arc<Mutex<String>>,
}

impl Running {
    /// The proxy's MCP endpoint.
    fn url(&self) -> String {
        format!("http://{}/mcp", self.proxy_addr.unwrap())
    }
}

fn start(extra: &[&str]) -> Running {
    start_with(&[], extra)
}

/// The server (with `server_extra` arguments) and the proxy in front of it (with `extra`).
fn start_with(server_extra: &[&str], extra: &[&str]) -> Running {
    let calls = tempfile::NamedTempFile::new().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/mcp_http_server.py");
    let (server, server_port) = with_port(
        Command::new("python3")
            .arg(script)
            .arg(calls.path())
            .args(server_extra),
    );
    let (proxy, addr, stderr) = listening(
        Command::new(env!("CARGO_BIN_EXE_jsongate"))
            // The upstream credential the tests that pass `--upstream-header` name.
            .env("JG_MCP_TEST_UPSTREAM", "Bearer gateway-credential")
            .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
            .arg(format!("http://127.0.0.1:{server_port}/mcp"))
            .args(extra),
    )
    .unwrap();
    Running {
        _server: server,
        proxy: Some(proxy),
        server_port,
        proxy_addr: Some(addr),
        calls,
        stderr,
    }
}

struct Answer {
    status: u16,
    headers: String,
    body: String,
}

/// One POST (or other method) with curl.
fn call(url: &str, method: &str, session: Option<&str>, extra: &[&str], body: &str) -> Answer {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-i", "--max-time", "20", "-X", method])
        .args(["-H", "mcp-protocol-version: 2025-06-18"]);
    if !extra.iter().any(|h| h.starts_with("content-type:")) {
        cmd.args(["-H", "content-type: application/json"]);
    }
    if let Some(s) = session {
        cmd.args(["-H", &format!("mcp-session-id: {s}")]);
    }
    for h in extra {
        cmd.args(["-H", h]);
    }
    if !body.is_empty() {
        cmd.args(["--data-binary", body]);
    }
    let out = cmd.arg(url).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let (headers, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = headers
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Answer {
        status,
        headers: headers.to_ascii_lowercase(),
        body: body.to_owned(),
    }
}

const SSE: &str = "accept: application/json, text/event-stream";
const JSON: &str = "accept: application/json";

/// The messages of an answer: its events when it is an event stream, else its one JSON body
/// (the proxy answers with one JSON body when the answer came first and came as one).
fn messages(a: &Answer) -> Vec<(Option<String>, serde_json::Value)> {
    if a.headers.contains("content-type: text/event-stream") {
        events(&a.body)
    } else {
        assert!(
            a.headers.contains("content-type: application/json"),
            "{}",
            a.headers
        );
        vec![(None, serde_json::from_str(&a.body).unwrap())]
    }
}

fn events(body: &str) -> Vec<(Option<String>, serde_json::Value)> {
    body.split("\n\n")
        .filter(|e| !e.trim().is_empty())
        .map(|e| {
            let mut id = None;
            let mut data = Vec::new();
            for l in e.lines() {
                if let Some(v) = l.strip_prefix("id: ") {
                    id = Some(v.to_owned());
                }
                if let Some(v) = l.strip_prefix("data: ") {
                    data.push(v);
                }
            }
            (id, serde_json::from_str(&data.join("\n")).unwrap())
        })
        .collect()
}

fn initialize(url: &str) -> String {
    initialize_as(url, None)
}

/// `initialize` (and `notifications/initialized`) with these credentials; the session id the
/// proxy issued.
fn initialize_as(url: &str, auth: Option<&str>) -> String {
    let auth = auth.map(|a| format!("authorization: {a}"));
    let headers: Vec<&str> = [JSON].into_iter().chain(auth.as_deref()).collect();
    let a = call(
        url,
        "POST",
        None,
        &headers,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let sid = a
        .headers
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("the proxy issues a session id")
        .trim()
        .to_owned();
    let n = call(
        url,
        "POST",
        Some(&sid),
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(n.status, 202);
    sid
}

/// A session id issued by the proxy: 128 random bits in hex, never the upstream's own.
fn assert_issued_here(sid: &str) {
    assert_eq!(sid.len(), 32, "{sid}");
    assert!(sid.bytes().all(|b| b.is_ascii_hexdigit()), "{sid}");
}

fn tool_call(url: &str, sid: &str, id: u32, arg: &str, accept: &str) -> Answer {
    call(
        url,
        "POST",
        Some(sid),
        &[accept],
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_invoice","arguments":{arg}}}}}"#
        ),
    )
}

#[test]
fn results_are_judged_per_message_in_json_and_in_sse_events() {
    let r = start(&["--max-bytes", "8192"]);
    let url = r.url();
    let sid = initialize(&url);
    // The proxy's own session id; the upstream's (`sess-7f3a`) stays between the two.
    assert_issued_here(&sid);
    // The listing arrives as an SSE event and keeps its event id.
    let l = call(
        &url,
        "POST",
        Some(&sid),
        &[SSE],
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert!(
        l.headers.contains("content-type: text/event-stream"),
        "{}",
        l.headers
    );
    let ev = events(&l.body);
    assert_eq!(ev.len(), 1);
    assert_eq!(ev[0].0.as_deref(), Some("ev-list"));
    assert_eq!(ev[0].1["result"]["tools"][0]["name"], "get_invoice");

    // A valid result passes byte for byte (JSON answer).
    let ok = tool_call(&url, &sid, 2, r#"{"id":"ok"}"#, JSON);
    assert_eq!(ok.status, 200);
    let v: serde_json::Value = serde_json::from_str(&ok.body).unwrap();
    assert_eq!(v["result"]["structuredContent"]["total"], 12.5);
    // The upstream answered with one JSON body: so does the proxy, also to a client that
    // accepts an event stream (as the client would see it connected directly).
    let ok = tool_call(&url, &sid, 22, r#"{"id":"ok"}"#, SSE);
    assert!(
        ok.headers.contains("content-type: application/json"),
        "{}",
        ok.headers
    );
    let v: serde_json::Value = serde_json::from_str(&ok.body).unwrap();
    assert_eq!(v["id"], 22);
    assert_eq!(v["result"]["structuredContent"]["total"], 12.5);

    // An injected field in an SSE event: the notification before it passes, the result is
    // replaced by an isError result with the same JSON-RPC id and the same event id.
    let inj = tool_call(&url, &sid, 3, r#"{"id":"inj"}"#, SSE);
    let ev = events(&inj.body);
    assert_eq!(ev.len(), 2, "{}", inj.body);
    assert_eq!(ev[0].1["method"], "notifications/message");
    assert_eq!(ev[1].0.as_deref(), Some("ev-9"));
    assert_eq!(ev[1].1["id"], 3);
    assert_eq!(ev[1].1["result"]["isError"], true);
    assert!(!inj.body.contains("admin_override"));

    // Duplicate names and an event over the limit are refused the same way.
    for (id, arg) in [(4, "dup"), (5, "big")] {
        let a = tool_call(&url, &sid, id, &format!(r#"{{"id":"{arg}"}}"#), SSE);
        let ev = messages(&a);
        assert_eq!(ev.last().unwrap().1["result"]["isError"], true, "{arg}");
        assert_eq!(ev.last().unwrap().1["id"], id);
    }
    // An upstream that fails or ends its stream early: a JSON-RPC error for the request.
    for (id, arg) in [(6, "cut"), (7, "500")] {
        let a = tool_call(&url, &sid, id, &format!(r#"{{"id":"{arg}"}}"#), JSON);
        let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
        assert_eq!(v["id"], id, "{arg}");
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("jsongate:"),
            "{arg}"
        );
    }
    // Arguments outside the inputSchema are answered by the proxy and never forwarded.
    let before = std::fs::read_to_string(r.calls.path())
        .unwrap()
        .lines()
        .count();
    let bad = tool_call(&url, &sid, 8, r#"{"id":"ok","delete_all":true}"#, JSON);
    let v: serde_json::Value = serde_json::from_str(&bad.body).unwrap();
    assert_eq!(v["result"]["isError"], true);
    let after = std::fs::read_to_string(r.calls.path())
        .unwrap()
        .lines()
        .count();
    assert_eq!(before, after);

    // GET: the upstream's 405 is relayed; DELETE ends the session here too.
    assert_eq!(call(&url, "GET", Some(&sid), &[SSE], "").status, 405);
    assert_eq!(call(&url, "DELETE", Some(&sid), &[], "").status, 200);
    assert_eq!(tool_call(&url, &sid, 9, r#"{"id":"ok"}"#, JSON).status, 404);
}

#[test]
fn connected_directly_the_client_sees_the_injection() {
    let r = start(&[]);
    let url = format!("http://127.0.0.1:{}/mcp", r.server_port);
    let sid = initialize(&url);
    let inj = tool_call(&url, &sid, 3, r#"{"id":"inj"}"#, SSE);
    assert!(inj.body.contains("admin_override"));
}

#[test]
fn origins_sessions_and_bodies_are_checked() {
    let r = start(&["--allow-origin", "http://localhost:6274"]);
    let url = r.url();
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
    let evil = call(
        &url,
        "POST",
        None,
        &[JSON, "origin: http://evil.example"],
        init,
    );
    assert_eq!(evil.status, 403);
    let good = call(
        &url,
        "POST",
        None,
        &[JSON, "origin: http://localhost:6274"],
        init,
    );
    assert_eq!(good.status, 200);
    assert_eq!(
        call(
            &url,
            "POST",
            Some("no-such-session"),
            &[JSON],
            init.replace("initialize", "ping").as_str()
        )
        .status,
        404
    );
    let other = format!("http://{}/other", r.proxy_addr.unwrap());
    assert_eq!(call(&other, "POST", None, &[JSON], init).status, 404);
    let dup = call(
        &url,
        "POST",
        None,
        &[JSON],
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#,
    );
    assert_eq!(dup.status, 400);
    let text = call(
        &url,
        "POST",
        None,
        &[JSON, "content-type: text/plain"],
        init,
    );
    assert_eq!(text.status, 415);
}

#[test]
fn a_stream_that_never_ends_an_event_is_answered_at_the_timeout() {
    let r = start(&["--answer-timeout", "1"]);
    let url = r.url();
    let sid = initialize(&url);
    let t = std::time::Instant::now();
    let a = tool_call(&url, &sid, 3, r#"{"id":"stall"}"#, SSE);
    assert!(t.elapsed() < std::time::Duration::from_secs(10));
    let ev = messages(&a);
    assert_eq!(ev.len(), 1, "{}", a.body);
    assert_eq!(ev[0].1["id"], 3);
    assert_eq!(ev[0].1["error"]["message"], "jsongate: no answer in time");
    // The session keeps serving.
    let ok = tool_call(&url, &sid, 4, r#"{"id":"ok"}"#, JSON);
    assert_eq!(ok.status, 200);
}

/// A `tools/call` of `get_invoice` with `{"id": arg}` and these extra headers.
fn call_as(url: &str, sid: &str, id: u32, arg: &str, headers: &[&str]) -> Answer {
    call(
        url,
        "POST",
        Some(sid),
        headers,
        &format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"get_invoice","arguments":{{"id":"{arg}"}}}}}}"#
        ),
    )
}

/// The `structuredContent.id` of a tool result in one JSON body.
fn result_id(a: &Answer) -> String {
    let v: serde_json::Value =
        serde_json::from_str(&a.body).unwrap_or_else(|_| panic!("{}", a.body));
    v["result"]["structuredContent"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", a.body))
        .to_owned()
}

#[test]
fn sessionless_upstream_never_lends_one_clients_token_to_another() {
    // Before: an upstream that issues no session id had one relay for every client, which
    // sent the latest client's Authorization with every client's requests. Now no client's
    // token is forwarded at all (no token passthrough): the upstream sees the proxy's own
    // credential, whoever calls.
    let r = start_with(
        &["--sessionless"],
        &[
            "--upstream-header",
            "Authorization=env:JG_MCP_TEST_UPSTREAM",
        ],
    );
    let url = r.url();
    let a = initialize_as(&url, Some("Bearer token-a"));
    let b = initialize_as(&url, None);
    assert_issued_here(&a);
    assert_issued_here(&b);
    assert_ne!(a, b);
    let auth_a = "authorization: Bearer token-a";
    let gateway = "Bearer gateway-credential";
    assert_eq!(
        result_id(&call_as(&url, &a, 2, "whoami", &[JSON, auth_a])),
        gateway
    );
    assert_eq!(result_id(&call_as(&url, &b, 2, "whoami", &[JSON])), gateway);
    // And again in the other order, while A's session is in use.
    assert_eq!(
        result_id(&call_as(&url, &a, 3, "whoami", &[JSON, auth_a])),
        gateway
    );
    assert_eq!(result_id(&call_as(&url, &b, 3, "whoami", &[JSON])), gateway);
    // Every call reached the server with the gateway's credential, none with A's token.
    let calls = std::fs::read_to_string(r.calls.path()).unwrap();
    let seen: Vec<serde_json::Value> = calls
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(seen.len(), 4, "{calls}");
    assert!(seen.iter().all(|c| c["auth"] == gateway), "{calls}");
    assert!(!calls.contains("token-a"), "{calls}");
}

#[test]
fn sessionless_upstream_server_messages_stay_on_their_own_stream() {
    // Before: a notification sent on A's answer stream went to the newest stream of the
    // shared relay, which could be B's.
    let r = start_with(&["--sessionless"], &[]);
    let url = r.url();
    let a = initialize_as(&url, Some("Bearer token-a"));
    let b = initialize_as(&url, Some("Bearer token-b"));
    let run = |sid: String, who: &'static str| {
        let url = url.clone();
        std::thread::spawn(move || {
            let auth = format!("authorization: Bearer token-{who}");
            call_as(&url, &sid, 7, &format!("note-{who}"), &[SSE, &auth])
        })
    };
    let (ta, tb) = (run(a, "a"), run(b, "b"));
    let (ea, eb) = (ta.join().unwrap(), tb.join().unwrap());
    for (ans, mine, theirs) in [(&ea, "note-a", "note-b"), (&eb, "note-b", "note-a")] {
        let ev = events(&ans.body);
        assert_eq!(ev.len(), 2, "{}", ans.body);
        assert_eq!(ev[0].1["params"]["data"], mine);
        assert_eq!(ev[1].1["result"]["structuredContent"]["id"], mine);
        assert!(!ans.body.contains(theirs), "{}", ans.body);
    }
}

/// `--screen redact` on the Streamable HTTP front, two callers with different tokens calling
/// at once: each gets its own result cleaned (`[redacted]` where the injected instruction was,
/// in the text and in the structured content), never the other's text, and once both sessions
/// end the proxy is back to its idle threads.
/// The callers of the two-caller tests, each with its own credentials and session, after a
/// warm-up session has come and gone: the proxy's pid, its idle thread count, the callers
/// and their session ids.
fn two_callers(r: &Running) -> (u32, u64, [(&'static str, &'static str); 2], Vec<String>) {
    let url = r.url();
    let pid = r.proxy.as_ref().unwrap().id();
    let warm = initialize(&url);
    assert_eq!(call(&url, "DELETE", Some(&warm), &[], "").status, 200);
    let idle = settle(pid, threads_and_rss(pid).0);
    let callers = [("a", "Bearer token-a"), ("b", "Bearer token-b")];
    let sessions = callers
        .iter()
        .map(|(_, token)| initialize_as(&url, Some(token)))
        .collect();
    (pid, idle, callers, sessions)
}

/// Ends both callers' sessions; the proxy is back to its idle thread count.
fn end_both(url: &str, pid: u32, idle: u64, callers: &[(&str, &str)], sessions: &[String]) {
    for ((_, token), sid) in callers.iter().zip(sessions) {
        let auth = format!("authorization: {token}");
        assert_eq!(call(url, "DELETE", Some(sid), &[&auth], "").status, 200);
    }
    assert!(
        settle(pid, idle) <= idle,
        "threads after both sessions ended"
    );
}

#[test]
fn screen_redact_cleans_each_callers_own_result_and_nothing_crosses() {
    let r = start_with(&["--sessionless"], &["--screen", "redact"]);
    let url = r.url();
    let (pid, idle, callers, sessions) = two_callers(&r);
    std::thread::scope(|scope| {
        for ((name, token), sid) in callers.iter().zip(&sessions) {
            let url = &url;
            scope.spawn(move || {
                let auth = format!("authorization: {token}");
                let other = if *name == "a" { "b" } else { "a" };
                for i in 0..6 {
                    let a = call_as(url, sid, i, &format!("inject-{name}"), &[JSON, &auth]);
                    assert_eq!(a.status, 200, "{}", a.body);
                    assert_eq!(
                        result_id(&a),
                        format!("inject-{name}: the report for team {name} is ready. [redacted].")
                    );
                    let v: serde_json::Value = serde_json::from_str(&a.body).unwrap();
                    let text = v["result"]["content"][0]["text"].as_str().unwrap();
                    assert!(text.contains("[redacted]"), "{text}");
                    assert!(!a.body.to_lowercase().contains("ignore all"), "{}", a.body);
                    assert!(!a.body.contains(&format!("team {other}")), "{}", a.body);
                }
            });
        }
    });
    end_both(&url, pid, idle, &callers, &sessions);
}

#[test]
fn two_clients_with_the_same_jsonrpc_id_each_get_their_own_answer() {
    // Before: B's waiter for id 5 replaced A's, and A got a 504 while its answer came.
    let r = start_with(&["--sessionless"], &[]);
    let url = r.url();
    let a = initialize(&url);
    let b = initialize(&url);
    let run = |sid: String, arg: &'static str| {
        let url = url.clone();
        std::thread::spawn(move || call_as(&url, &sid, 5, arg, &[JSON]))
    };
    let (ta, tb) = (run(a.clone(), "slow-a"), run(b, "slow-b"));
    let (ra, rb) = (ta.join().unwrap(), tb.join().unwrap());
    assert_eq!(
        (ra.status, rb.status),
        (200, 200),
        "{} / {}",
        ra.body,
        rb.body
    );
    assert_eq!(result_id(&ra), "slow-a");
    assert_eq!(result_id(&rb), "slow-b");
    // In one session, an id still waiting for its answer is not taken twice.
    let first = run(a.clone(), "slow-c");
    std::thread::sleep(Duration::from_millis(300));
    let again = call_as(&url, &a, 5, "slow-d", &[JSON]);
    assert_eq!(again.status, 409, "{}", again.body);
    assert_eq!(result_id(&first.join().unwrap()), "slow-c");
}

#[test]
fn a_session_id_alone_is_not_a_credential() {
    // Before: a request carrying only A's Mcp-Session-Id was sent upstream with A's token.
    let r = start(&[]);
    let url = r.url();
    let a = initialize_as(&url, Some("Bearer token-a"));
    let calls = || std::fs::read_to_string(r.calls.path()).unwrap();
    for headers in [&[JSON][..], &[JSON, "authorization: Bearer token-b"]] {
        let stolen = call_as(&url, &a, 2, "whoami", headers);
        assert_eq!(stolen.status, 403, "{}", stolen.body);
        assert!(stolen.body.contains("other credentials"), "{}", stolen.body);
    }
    assert_eq!(call(&url, "GET", Some(&a), &[SSE], "").status, 403);
    assert_eq!(call(&url, "DELETE", Some(&a), &[], "").status, 403);
    assert!(calls().is_empty(), "{}", calls());
    // The session is still A's, and works with A's credentials (which the upstream never
    // sees: no credential was configured for it, and A's is not passed through).
    let auth_a = "authorization: Bearer token-a";
    assert_eq!(
        result_id(&call_as(&url, &a, 3, "whoami", &[JSON, auth_a])),
        "none"
    );
    assert!(!calls().contains("token-a"), "{}", calls());
    assert_eq!(call(&url, "DELETE", Some(&a), &[auth_a], "").status, 200);
}

/// One HTTP/1.1 exchange on a fresh connection (`Connection: close`): status and body.
fn raw(addr: SocketAddr, method: &str, headers: &[&str], body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\naccept: application/json\r\ncontent-length: {}\r\n",
        body.len()
    );
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// Threads and resident memory (KiB) of a process.
fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    };
    (field("Threads:"), field("VmRSS:"))
}

/// Waits (up to 10 s) until the process is back to at most `threads` threads; its count.
fn settle(pid: u32, threads: u64) -> u64 {
    let t = Instant::now();
    loop {
        let (n, _) = threads_and_rss(pid);
        if n <= threads || t.elapsed() > Duration::from_secs(10) {
            return n;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn init_body(client: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"{client}","version":"1"}}}}}}"#
    )
}

#[cfg(target_os = "linux")]
#[test]
fn failed_and_abandoned_initializations_release_their_relays() {
    // Before: 60 initialize POSTs took the proxy from 3 to 483 threads, never released; an
    // upstream answering initialize with HTTP 500 leaked the same way.
    let r = start(&["--max-sessions", "8"]);
    let addr = r.proxy_addr.unwrap();
    let pid = r.proxy.as_ref().unwrap().id();
    // Warm up: one whole session, so the runtime's threads exist.
    let url = r.url();
    let sid = initialize(&url);
    assert_eq!(call(&url, "DELETE", Some(&sid), &[], "").status, 200);
    let (base, _) = threads_and_rss(pid);
    let base = settle(pid, base);
    let (_, rss_before) = threads_and_rss(pid);
    // Initializations the upstream refuses (HTTP 500, a JSON-RPC error): no session, nothing
    // left running.
    for i in 0..600 {
        let client = if i % 2 == 0 { "fail-500" } else { "fail-error" };
        let (status, out) = raw(addr, "POST", &[], &init_body(client));
        assert_eq!(status, 200, "{out}");
        assert!(out.contains("\"error\""), "{out}");
        assert!(
            !out.to_ascii_lowercase().contains("mcp-session-id"),
            "{out}"
        );
    }
    // Requests without a session: a relay each, ended with the answer.
    for i in 0..600 {
        let (status, out) = raw(
            addr,
            "POST",
            &[],
            &format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"ping"}}"#),
        );
        assert_eq!(status, 200, "{out}");
    }
    assert!(
        settle(pid, base) <= base,
        "threads after failed initializations"
    );
    // Operators heard of the failing upstream, once (the lines are rate-limited per kind).
    let log = r.stderr.lock().unwrap().clone();
    assert_eq!(log.matches("failed (HTTP 5xx)").count(), 1, "{log}");
    // Abandoned sessions stay until they idle out, within the cap: the ninth is refused.
    let mut abandoned = Vec::new();
    for _ in 0..8 {
        let (status, out) = raw(addr, "POST", &[], &init_body("curl"));
        assert_eq!(status, 200, "{out}");
        let sid = out
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("mcp-session-id: ")
                    .map(str::to_owned)
            })
            .unwrap();
        abandoned.push(sid.trim().to_owned());
    }
    for _ in 0..200 {
        assert_eq!(raw(addr, "POST", &[], &init_body("curl")).0, 503);
        assert_eq!(
            raw(
                addr,
                "POST",
                &[],
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
            )
            .0,
            503
        );
    }
    let (busy, _) = threads_and_rss(pid);
    assert!(
        busy > base,
        "{busy} threads with 8 sessions, {base} without"
    );
    // Ended, they give everything back.
    for sid in &abandoned {
        assert_eq!(call(&url, "DELETE", Some(sid), &[], "").status, 200);
    }
    assert!(
        settle(pid, base) <= base,
        "threads after the sessions ended"
    );
    let (_, rss_after) = threads_and_rss(pid);
    assert!(
        rss_after < rss_before + 32 * 1024,
        "resident memory grew from {rss_before} KiB to {rss_after} KiB"
    );
    // And the proxy still serves.
    let sid = initialize(&url);
    assert_eq!(
        result_id(&tool_call(&url, &sid, 1, r#"{"id":"ok"}"#, JSON)),
        "ok"
    );
}

#[test]
fn dns_rebinding_host_is_refused() {
    // Before: only Origin was checked; a browser after a DNS rebinding sends the attacker's
    // name as Host and no Origin, and was served the event stream.
    let r = start(&[]);
    let addr = r.proxy_addr.unwrap();
    let url = r.url();
    let rebound = "host: rebind.attacker.example";
    assert_eq!(call(&url, "GET", None, &[SSE, rebound], "").status, 421);
    let init = init_body("curl");
    assert_eq!(
        call(&url, "POST", None, &[JSON, rebound], &init).status,
        421
    );
    let port = format!("host: rebind.attacker.example:{}", addr.port());
    assert_eq!(call(&url, "POST", None, &[JSON, &port], &init).status, 421);
    // Loopback names are served.
    for host in [format!("localhost:{}", addr.port()), format!("{addr}")] {
        let h = format!("host: {host}");
        assert_eq!(
            call(&url, "POST", None, &[JSON, &h], &init).status,
            200,
            "{host}"
        );
    }
    // An operator's allowlist replaces the default.
    let r = start(&["--allow-host", "mcp.internal.example"]);
    let url = r.url();
    let named = "host: mcp.internal.example";
    assert_eq!(call(&url, "POST", None, &[JSON, named], &init).status, 200);
    assert_eq!(call(&url, "POST", None, &[JSON], &init).status, 421);
}

#[test]
fn a_trickling_body_is_cut_at_the_request_timeout() {
    // Before: a POST whose body came at 2 bytes a second held its connection indefinitely.
    let r = start(&["--request-timeout", "1"]);
    let mut s = TcpStream::connect(r.proxy_addr.unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    s.write_all(b"POST /mcp HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{")
        .unwrap();
    let t = Instant::now();
    let mut out = Vec::new();
    let mut buf = [0u8; 1024];
    while t.elapsed() < Duration::from_secs(8) {
        let _ = s.write_all(b" ");
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => {}
        }
        if !out.is_empty() {
            break;
        }
    }
    let out = String::from_utf8_lossy(&out);
    assert!(out.starts_with("HTTP/1.1 408"), "{out}");
    assert!(t.elapsed() < Duration::from_secs(4), "{:?}", t.elapsed());
}

#[test]
fn connections_past_the_cap_wait_for_a_place() {
    let r = start(&["--max-connections", "2"]);
    let addr = r.proxy_addr.unwrap();
    let url = r.url();
    let held: Vec<TcpStream> = (0..2).map(|_| TcpStream::connect(addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let init = init_body("curl");
    let mut cmd = Command::new("curl");
    cmd.args([
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--max-time",
        "1",
    ])
    .args([
        "-H",
        "content-type: application/json",
        "--data-binary",
        &init,
        &url,
    ]);
    let out = cmd.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "000",
        "served past the cap"
    );
    drop(held);
    let a = call(&url, "POST", None, &[JSON], &init);
    assert_eq!(a.status, 200);
}

#[test]
fn an_unreachable_upstream_is_reported_once_per_kind() {
    // Before: clients got `-32603 the upstream is unavailable` and standard error stayed silent.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(format!("http://127.0.0.1:{port}/mcp"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(proxy.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr: SocketAddr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .parse()
        .unwrap();
    for _ in 0..3 {
        let (status, out) = raw(addr, "POST", &[], &init_body("curl"));
        assert_eq!(status, 200, "{out}");
        assert!(out.contains("the upstream is unavailable"), "{out}");
    }
    let _ = proxy.kill();
    let _ = proxy.wait();
    let mut rest = String::new();
    let _ = err.read_to_string(&mut rest);
    let want = format!("jsongate: upstream 127.0.0.1:{port}: connection refused");
    assert_eq!(rest.lines().filter(|l| *l == want).count(), 1, "{rest}");
}

#[test]
fn malformed_upstream_urls_are_refused_before_listening() {
    for (url, says) in [
        ("http://127.0.0.1:9/mcp?x=1", "query"),
        ("http://127.0.0.1:9/mcp#f", "fragment"),
        ("http://user@127.0.0.1:9/mcp", "user"),
        ("http://127.0.0.1:0/mcp", "port"),
        ("http://127.0.0.1:70000/mcp", "65535"),
        ("ftp://127.0.0.1:9/mcp", "http://"),
    ] {
        let out = Command::new("timeout")
            .args(["10", env!("CARGO_BIN_EXE_jsongate")])
            .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream", url])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{url}: {err}");
        assert!(
            err.contains(says) && !err.contains("listening on"),
            "{url}: {err}"
        );
    }
}

#[test]
fn sighup_does_not_stop_the_listener() {
    let mut r = start(&[]);
    let url = r.url();
    let pid = r.proxy.as_ref().unwrap().id();
    let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).unwrap());
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    assert!(r.proxy.as_mut().unwrap().running());
    let sid = initialize(&url);
    assert_issued_here(&sid);
}

/// The tool names of a `tools/list` answer.
fn listed(a: &Answer) -> Vec<String> {
    let (_, m) = messages(a).pop().expect("an answer");
    m["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{m}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

const LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;

#[test]
fn first_use_pins_hold_for_clients_without_a_session_and_across_sessions() {
    // Before: each request of a client without a session (the 2026-07-28 protocol never
    // initializes) was a relay of its own with pins of its own, so every listing was a first
    // use: after a rug pull the widened and the added tool were listed and called.
    let r = start_with(&["--sessionless"], &[]);
    let url = r.url();
    assert_eq!(
        listed(&call(&url, "POST", None, &[JSON], LIST)),
        ["get_invoice"]
    );
    let sid = initialize(&url);
    assert_eq!(
        listed(&call(&url, "POST", Some(&sid), &[JSON], LIST)),
        ["get_invoice"]
    );
    // The rug pull (the call itself is judged against the definition pinned before it).
    let a = call(
        &url,
        "POST",
        None,
        &[JSON],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"rugpull"}}}"#,
    );
    assert_eq!(result_id(&a), "rugpull");
    // Without a session, in the open session and in a new one: neither the changed nor the
    // added tool is listed, and neither can be called.
    let fresh = initialize(&url);
    for session in [None, Some(sid.as_str()), Some(fresh.as_str())] {
        let l = listed(&call(&url, "POST", session, &[JSON], LIST));
        assert!(l.is_empty(), "{session:?}: {l:?}");
        for (name, args) in [("get_invoice", r#"{"id":"ok"}"#), ("export_all", "{}")] {
            let a = call(
                &url,
                "POST",
                session,
                &[JSON],
                &format!(
                    r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"{name}","arguments":{args}}}}}"#
                ),
            );
            let (_, m) = messages(&a).pop().unwrap();
            assert!(
                m["result"]["isError"] == true || m.get("error").is_some(),
                "{session:?} {name}: {m}"
            );
        }
    }
    let calls = std::fs::read_to_string(r.calls.path()).unwrap();
    assert_eq!(
        calls.lines().count(),
        1,
        "only the rug pull reached the server: {calls}"
    );
}

#[test]
fn a_client_that_does_not_read_its_stream_costs_a_bounded_buffer() {
    // Before: every server message for a stream the client did not read was queued for it
    // without bound (and an upstream faster than the relay queued in front of the relay).
    let r = start(&[]);
    let addr = r.proxy_addr.unwrap();
    let url = r.url();
    let pid = r.proxy.as_ref().unwrap().id();
    let sid = initialize(&url);
    let (_, before) = threads_and_rss(pid);
    let body = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_invoice","arguments":{"id":"flood20000"}}}"#;
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: close\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\n\
         mcp-session-id: {sid}\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The server sends 20,000 messages of 1 KiB; the client reads nothing for 6 seconds.
    let mut peak = before;
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(6) {
        peak = peak.max(threads_and_rss(pid).1);
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        peak < before + 12 * 1024,
        "resident memory went from {before} KiB to {peak} KiB"
    );
    // Then it reads: some notifications were dropped, the answer comes last.
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let notes = out.matches("notifications/message").count();
    assert!(notes < 20_000, "{notes} notifications");
    let last = out.rsplit("data: ").next().unwrap().lines().next().unwrap();
    let last: serde_json::Value = serde_json::from_str(last).unwrap();
    assert_eq!(last["id"], 7, "{last}");
    assert_eq!(
        last["result"]["structuredContent"]["id"], "flood20000",
        "{last}"
    );
}

#[test]
fn messages_waiting_for_the_upstream_are_bounded_per_session() {
    // Before: each notification a client posted became an upstream exchange at once, however
    // many were still waiting for a slow upstream.
    let r = start(&[]);
    let addr = r.proxy_addr.unwrap();
    let url = r.url();
    let sid = initialize(&url);
    let other = initialize(&url);
    let header = format!("mcp-session-id: {sid}");
    let note = r#"{"jsonrpc":"2.0","method":"notifications/slow"}"#;
    let statuses: Vec<u16> = (0..200)
        .map(|_| raw(addr, "POST", &[&header], note).0)
        .collect();
    let accepted = statuses.iter().filter(|&&s| s == 202).count();
    // At most MAX_BACKLOG (128), and a few more while the relay has some in hand.
    assert!(
        (100..=136).contains(&accepted) && statuses[199] == 429,
        "{accepted} accepted, {:?}",
        &statuses[120..]
    );
    // A request of the same session is refused too; another session is not affected.
    assert_eq!(tool_call(&url, &sid, 1, r#"{"id":"ok"}"#, JSON).status, 429);
    assert_eq!(
        result_id(&tool_call(&url, &other, 1, r#"{"id":"ok"}"#, JSON)),
        "ok"
    );
}

#[test]
fn two_callers_at_once_keep_their_own_credentials_and_give_everything_back() {
    // Two clients with different tokens, each with its own session, calling at the same time
    // through a session-less upstream (nothing upstream tells them apart): every call reaches
    // the server with its own caller's token, neither can use the other's session, and once
    // both sessions end the proxy is back to its idle threads.
    let r = start_with(&["--sessionless"], &[]);
    let url = r.url();
    let pid = r.proxy.as_ref().unwrap().id();
    // Warm up: one whole session, so the runtime's threads exist.
    let warm = initialize(&url);
    assert_eq!(call(&url, "DELETE", Some(&warm), &[], "").status, 200);
    let idle = settle(pid, threads_and_rss(pid).0);
    let callers = [("a", "Bearer token-a"), ("b", "Bearer token-b")];
    let sessions: Vec<String> = callers
        .iter()
        .map(|(_, token)| initialize_as(&url, Some(token)))
        .collect();
    std::thread::scope(|scope| {
        for ((name, token), sid) in callers.iter().zip(&sessions) {
            let url = &url;
            scope.spawn(move || {
                let auth = format!("authorization: {token}");
                for i in 0..10 {
                    // Alternately a quick call and one the server answers after a second, so
                    // the two callers' exchanges overlap.
                    let arg = if i % 2 == 0 { "whoami" } else { "slow" };
                    let a = call_as(url, sid, i, arg, &[JSON, &auth]);
                    // No caller's token reaches the upstream.
                    let want = if arg == "whoami" { "none" } else { "slow" };
                    assert_eq!(result_id(&a), want, "{name} call {i}");
                }
            });
        }
    });
    // Each session refuses the other caller's token, and no token at all.
    let (a, b) = (&sessions[0], &sessions[1]);
    assert_eq!(
        call_as(
            &url,
            a,
            50,
            "whoami",
            &[JSON, "authorization: Bearer token-b"]
        )
        .status,
        403
    );
    assert_eq!(
        call_as(
            &url,
            b,
            50,
            "whoami",
            &[JSON, "authorization: Bearer token-a"]
        )
        .status,
        403
    );
    assert_eq!(call_as(&url, a, 51, "whoami", &[JSON]).status, 403);
    // Every call reached the server, none with a caller's token.
    let calls = std::fs::read_to_string(r.calls.path()).unwrap();
    assert!(!calls.contains("token-"), "{calls}");
    assert_eq!(calls.lines().count(), 20, "{calls}");
    // Neither caller can end the other's session; each ends its own, and the two sessions
    // give their relays back; their ids are gone.
    let auth = |token: &str| format!("authorization: {token}");
    assert_eq!(
        call(&url, "DELETE", Some(a), &[&auth("Bearer token-b")], "").status,
        403
    );
    assert_eq!(call(&url, "DELETE", Some(b), &[], "").status, 403);
    for ((_, token), sid) in callers.iter().zip(&sessions) {
        assert_eq!(
            call(&url, "DELETE", Some(sid), &[&auth(token)], "").status,
            200
        );
    }
    assert!(
        settle(pid, idle) <= idle,
        "threads after both sessions ended"
    );
    for ((_, token), sid) in callers.iter().zip(&sessions) {
        let auth = format!("authorization: {token}");
        assert_eq!(call_as(&url, sid, 60, "whoami", &[JSON, &auth]).status, 404);
    }
}

#[test]
fn provenance_is_each_sessions_own_and_a_planted_value_never_reaches_a_sink_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let policy = dir.path().join("policy.json");
    std::fs::write(
        &policy,
        br#"{"policy":1,"tools":{"get_invoice":{"arguments":{"type":"object"},"requires":[],"sinks":["/id"]}}}"#,
    )
    .unwrap();
    let r = start_with(
        &["--sessionless"],
        &["--policy", policy.to_str().unwrap(), "--grants", ""],
    );
    let url = r.url();
    let (pid, idle, callers, sessions) = two_callers(&r);
    let calls = || std::fs::read_to_string(r.calls.path()).unwrap();
    std::thread::scope(|scope| {
        for ((name, token), sid) in callers.iter().zip(&sessions) {
            let url = &url;
            scope.spawn(move || {
                let auth = format!("authorization: {token}");
                let other = if *name == "a" { "b" } else { "a" };
                // Each caller's result plants a payee of its own.
                let a = call_as(url, sid, 1, &format!("pay-{name}"), &[JSON, &auth]);
                assert_eq!(a.status, 200, "{}", a.body);
                assert!(result_id(&a).contains(&format!("m-{name}@ev.example")));
                for i in 0..4 {
                    // Following it: refused by the proxy (nobody can be asked).
                    let mine = format!("M-{name}@ev.example");
                    let a = call_as(url, sid, 10 + i, &mine, &[JSON, &auth]);
                    assert_eq!(a.status, 200, "{}", a.body);
                    assert!(
                        a.body.contains("untrusted_origin") && a.body.contains("\"isError\":true"),
                        "{}",
                        a.body
                    );
                    // The other caller's planted value means nothing in this session.
                    let theirs = format!("m-{other}@ev.example");
                    let b = call_as(url, sid, 20 + i, &theirs, &[JSON, &auth]);
                    assert_eq!(result_id(&b), theirs, "{}", b.body);
                }
            });
        }
    });
    // A request with no session before it: what its client saw is not known, so an address
    // at the sink asks; a sink with no identifier-like value passes.
    let lone = |arg: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"get_invoice","arguments":{{"id":"{arg}"}}}}}}"#
        );
        call(
            &url,
            "POST",
            None,
            &[JSON, "authorization: Bearer token-c"],
            &body,
        )
    };
    let asked = lone("x@ev.example");
    assert!(asked.body.contains("untrusted_origin"), "{}", asked.body);
    assert_eq!(result_id(&lone("ok")), "ok");
    for name in ["a", "b"] {
        // The server saw each planted value only from the session that did not plant it.
        let mine = format!("\"M-{name}@ev.example\"");
        assert!(!calls().contains(&mine), "{}", calls());
    }
    end_both(&url, pid, idle, &callers, &sessions);
}
