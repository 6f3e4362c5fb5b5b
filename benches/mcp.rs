//! The MCP relay's latency: one `tools/call` round trip from a client to a server and back,
//! measured three ways in the same run, over in-process Unix socket pairs with the server on
//! a thread of its own:
//!
//! - `direct`: the client talks to the server (no relay);
//! - `copy_relay`: through a relay that copies lines both ways without looking at them
//!   (two threads, the cost of the extra hop alone);
//! - `jsongate`: through [`jsongate::mcp::Proxy`]: every line scanned, the arguments
//!   validated against the tool's `inputSchema`, the result's `structuredContent` against
//!   its `outputSchema`, the result forwarded unchanged.
//!
//! Two result sizes: `small` (a 150-byte result, the usual tool call) and `64k` (a result
//! carrying 64 KiB of text). The difference `jsongate − copy_relay` is what validation
//! adds; `copy_relay − direct` is what any stdio relay costs.
//!
//! Before timing, each setup is checked to return the expected bytes; otherwise the bench
//! panics. Run: `cargo bench --bench mcp` (or `-- --quick`).

#[macro_use]
mod harness;

use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

use criterion::Criterion;
use jsongate::mcp::{Config, Proxy};

const TOOLS: &str = r#"{"jsonrpc":"2.0","id":"L","result":{"tools":[{"name":"lookup","inputSchema":{"type":"object","properties":{"q":{"type":"string","maxLength":64},"n":{"type":"integer","minimum":1}},"required":["q"],"additionalProperties":false},"outputSchema":{"type":"object","properties":{"approved":{"type":"boolean"},"count":{"type":"integer"},"items":{"type":"array","items":{"type":"string"}}},"required":["approved","count"],"additionalProperties":false}}]}}"#;
const CALL: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup","arguments":{"q":"invoices 2026","n":3}}}"#;

fn result(text_bytes: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{}"}}],"structuredContent":{{"approved":true,"count":3,"items":["a","b","c"]}}}}}}"#,
        "x".repeat(text_bytes)
    )
}

/// A server on a thread: answers `tools/list` with [`TOOLS`] and anything else with
/// `reply`. Returns the client's ends (write requests, read responses).
fn server(reply: String) -> (UnixStream, BufReader<UnixStream>) {
    let (client_end, server_end) = UnixStream::pair().unwrap();
    std::thread::spawn(move || {
        let mut out = server_end.try_clone().unwrap();
        let mut r = BufReader::new(server_end);
        let mut line = Vec::new();
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line).unwrap_or(0) == 0 {
                return;
            }
            let answer = if line.windows(10).any(|w| w == b"tools/list") {
                TOOLS.as_bytes()
            } else {
                reply.as_bytes()
            };
            if out
                .write_all(answer)
                .and_then(|()| out.write_all(b"\n"))
                .is_err()
            {
                return;
            }
        }
    });
    let read = BufReader::new(client_end.try_clone().unwrap());
    (client_end, read)
}

/// A relay that copies lines both ways without looking at them.
fn copy_relay(reply: String) -> (UnixStream, BufReader<UnixStream>) {
    let (to_server, mut from_server) = server(reply);
    let (client_end, relay_end) = UnixStream::pair().unwrap();
    let mut relay_out = relay_end.try_clone().unwrap();
    std::thread::spawn(move || {
        let mut to_server = to_server;
        let mut r = BufReader::new(relay_end);
        let mut line = Vec::new();
        while r.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            if to_server.write_all(&line).is_err() {
                return;
            }
            line.clear();
        }
    });
    std::thread::spawn(move || {
        let mut line = Vec::new();
        while from_server.read_until(b'\n', &mut line).unwrap_or(0) > 0 {
            if relay_out.write_all(&line).is_err() {
                return;
            }
            line.clear();
        }
    });
    let read = BufReader::new(client_end.try_clone().unwrap());
    (client_end, read)
}

/// The jsongate proxy in front of the server.
fn proxied(reply: String) -> (UnixStream, BufReader<UnixStream>) {
    let (to_server, from_server) = server(reply);
    let (client_end, proxy_end) = UnixStream::pair().unwrap();
    let proxy_out = proxy_end.try_clone().unwrap();
    std::thread::spawn(move || {
        Proxy::new(Config::default()).run(
            proxy_end,
            proxy_out,
            to_server,
            from_server.into_inner(),
            Box::new(|| {}),
        )
    });
    let read = BufReader::new(client_end.try_clone().unwrap());
    (client_end, read)
}

fn round_trip(w: &mut UnixStream, r: &mut BufReader<UnixStream>, req: &[u8], buf: &mut Vec<u8>) {
    w.write_all(req).unwrap();
    buf.clear();
    r.read_until(b'\n', buf).unwrap();
}

fn mcp(c: &mut Criterion) {
    let mut request = CALL.as_bytes().to_vec();
    request.push(b'\n');
    let mut group = c.benchmark_group("mcp/round_trip");
    for (size, text) in [("small", 0), ("64k", 64 * 1024)] {
        let reply = result(text);
        let want = format!("{reply}\n");
        for (name, make) in [
            ("direct", server as fn(String) -> _),
            ("copy_relay", copy_relay),
            ("jsongate", proxied),
        ] {
            let (mut w, mut r) = make(reply.clone());
            let mut buf = Vec::new();
            // Learn the tools, then check one call returns the result unchanged.
            round_trip(
                &mut w,
                &mut r,
                b"{\"jsonrpc\":\"2.0\",\"id\":\"L\",\"method\":\"tools/list\"}\n",
                &mut buf,
            );
            assert_eq!(buf, format!("{TOOLS}\n").as_bytes(), "{name}");
            round_trip(&mut w, &mut r, &request, &mut buf);
            assert_eq!(
                buf,
                want.as_bytes(),
                "{name}: {}",
                String::from_utf8_lossy(&buf)
            );
            group.bench_function(format!("{size}/{name}"), |b| {
                b.iter(|| {
                    round_trip(&mut w, &mut r, &request, &mut buf);
                    black_box(buf.len())
                });
            });
        }
    }
    group.finish();
}

bench_main!(mcp, 50, 3);
