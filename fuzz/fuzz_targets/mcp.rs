//! The MCP relay with arbitrary server output. A fixed client script (handshake, a listing,
//! calls that make the proxy list tools itself, a task result, a ping) is read first; then
//! the fuzz input is what the server writes. Checks: no panic, no hang; every line the
//! client receives is strict JSON, and is either a server line forwarded byte for byte or a
//! message the proxy wrote itself (an error response or an `isError` replacement whose text
//! starts with "jsongate: ").
#![no_main]
use std::io::{Read, Write};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};

use jsongate::mcp::{Config, Proxy};
use jsongate::Limits;
use libfuzzer_sys::fuzz_target;

const CLIENT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#, "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"n":1}}}"#, "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b","arguments":{},"task":{}}}"#, "\n",
    r#"{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t"}}"#, "\n",
    r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#, "\n",
);

/// Serves `data` once the client side has been read completely.
struct After {
    gate: Option<Receiver<()>>,
    data: std::io::Cursor<Vec<u8>>,
}

impl Read for After {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(g) = self.gate.take() {
            let _ = g.recv();
        }
        self.data.read(buf)
    }
}

#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fuzz_target!(|data: &[u8]| {
    let (tx, rx) = channel();
    let to_client = Sink::default();
    let config = Config {
        limits: Limits::new().max_bytes(2048).max_depth(32),
        ..Config::default()
    };
    let server_out = After { gate: Some(rx), data: std::io::Cursor::new(data.to_vec()) };
    Proxy::new(config)
        .run(
            std::io::Cursor::new(CLIENT.as_bytes().to_vec()),
            to_client.clone(),
            Sink::default(),
            server_out,
            Box::new(move || {
                let _ = tx.send(());
            }),
        )
        .unwrap();
    let out = to_client.0.lock().unwrap().clone();
    let server_lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    assert_eq!(out.last().copied().unwrap_or(b'\n'), b'\n');
    for line in out.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        assert!(
            jsongate::check(line, Limits::new()).is_ok(),
            "not strict JSON: {}",
            String::from_utf8_lossy(line)
        );
        let forwarded = server_lines.contains(&line);
        let own = line.starts_with(br#"{"jsonrpc":"2.0","id":"#)
            && line.windows(10).any(|w| w == b"jsongate: ");
        assert!(forwarded || own, "unexpected line: {}", String::from_utf8_lossy(line));
    }
});
