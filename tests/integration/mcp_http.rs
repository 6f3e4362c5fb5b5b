//! `jsongate mcp-proxy --upstream URL` (MCP Streamable HTTP) end to end on loopback: the real
//! binary between a Python MCP server on the Streamable HTTP transport
//! (`mcp_http_server.py`, JSON and SSE answers) and curl as the client.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};

struct Running {
    server: Child,
    proxy: Option<Child>,
    server_port: u16,
    proxy_addr: Option<SocketAddr>,
    calls: tempfile::NamedTempFile,
}

impl Drop for Running {
    fn drop(&mut self) {
        for c in [Some(&mut self.server), self.proxy.as_mut()]
            .into_iter()
            .flatten()
        {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn start(extra: &[&str]) -> Running {
    let calls = tempfile::NamedTempFile::new().unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/integration/mcp_http_server.py");
    let mut server = Command::new("python3")
        .arg(script)
        .arg(calls.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let server_port: u16 = line.trim().parse().unwrap();
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args(["mcp-proxy", "--listen", "127.0.0.1:0", "--upstream"])
        .arg(format!("http://127.0.0.1:{server_port}/mcp"))
        .args(extra)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(proxy.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .parse()
        .unwrap();
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    Running {
        server,
        proxy: Some(proxy),
        server_port,
        proxy_addr: Some(addr),
        calls,
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
    let a = call(
        url,
        "POST",
        None,
        &[JSON],
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}"#,
    );
    assert_eq!(a.status, 200, "{}", a.body);
    let sid = a
        .headers
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("the upstream's session id is relayed")
        .trim()
        .to_owned();
    let n = call(
        url,
        "POST",
        Some(&sid),
        &[JSON],
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    );
    assert_eq!(n.status, 202);
    sid
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
    let url = format!("http://{}/mcp", r.proxy_addr.unwrap());
    let sid = initialize(&url);
    assert_eq!(sid, "sess-7f3a");
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
    let url = format!("http://{}/mcp", r.proxy_addr.unwrap());
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
    let url = format!("http://{}/mcp", r.proxy_addr.unwrap());
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
