//! The MCP relay with arbitrary server output. A fixed client script (handshake, a listing,
//! calls that make the proxy list tools itself, a task result, a ping) is read first; then
//! the fuzz input is what the server writes (its first byte also picks the screening mode).
//! Checks: no panic, no hang; no line the client receives is empty, and each is strict JSON,
//! either a server line forwarded byte for byte, a message the proxy wrote itself (an
//! error response or an `isError` replacement whose text starts with "jsongate: "), or a
//! server listing with some of its tools removed (pinning and screening of definitions);
//! and
//! every request of the script gets exactly one answer (the server's output ends, so a
//! missing answer is a request the relay lost, an extra one an answer it made up).
#![no_main]
use std::io::{Read, Write};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};

use jsongate::json::Value;
use jsongate::mcp::{Config, Proxy, Screen};
use jsongate::Limits;
use libfuzzer_sys::fuzz_target;

/// The ids of the script's requests, as JSON.
const REQUESTS: [&str; 6] = ["0", "1", "2", "3", "4", "\"p\""];

const CLIENT: &str = concat!(
    r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","arguments":{"n":1}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"b","arguments":{},"task":{}}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":4,"method":"tasks/result","params":{"taskId":"t"}}"#,
    "\n",
    r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#,
    "\n",
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
    let screen = match data.first().map(|b| b % 3) {
        Some(1) => Some(Screen::Flag),
        Some(2) => Some(Screen::Reject),
        _ => None,
    };
    let mut config = Config::default().limits(Limits::new().max_bytes(2048).max_depth(32));
    if let Some(screen) = screen {
        config = config.screen(screen);
    }
    let server_out = After {
        gate: Some(rx),
        data: std::io::Cursor::new(data.to_vec()),
    };
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
    let body = out
        .strip_suffix(b"\n")
        .expect("the output ends with a whole line");
    let mut answers = std::collections::HashMap::<String, usize>::new();
    for line in body.split(|&b| b == b'\n') {
        assert!(!line.is_empty(), "an empty line reached the client");
        assert!(
            jsongate::check(line, Limits::new()).is_ok(),
            "not strict JSON: {}",
            String::from_utf8_lossy(line)
        );
        let forwarded = server_lines.contains(&line);
        let own = line.starts_with(br#"{"jsonrpc":"2.0","id":"#)
            && line.windows(10).any(|w| w == b"jsongate: ");
        // Lines are read with jsongate's own value, which keeps numbers as their text: a
        // server line may carry any number the grammar allows (`1e400` is valid JSON, out of
        // range for serde_json's `Value`), and the proxy forwards it as it is.
        let v = Value::parse(line, Limits::new()).unwrap();
        // A listing from which the proxy removed tools (not pinned, changed, poisoned,
        // listed twice, too large) is a server line with some of its tools left out.
        let filtered = !forwarded
            && !own
            && v.pointer("/result/tools")
                .and_then(Value::as_array)
                .is_some_and(|kept| {
                    server_lines.iter().any(|l| {
                        let Ok(mut s) = Value::parse(l, Limits::new()) else {
                            return false;
                        };
                        // (`pointer`, not indexing: a server line may be any JSON value.)
                        let Some(all) = s.pointer("/result/tools").and_then(Value::as_array) else {
                            return false;
                        };
                        let gone: Vec<usize> = (0..all.len())
                            .filter(|&i| !kept.contains(&all[i]))
                            .collect();
                        for i in gone.into_iter().rev() {
                            assert!(s.remove_pointer(&format!("/result/tools/{i}")));
                        }
                        s == v
                    })
                });
        assert!(
            forwarded || own || filtered,
            "unexpected line: {}",
            String::from_utf8_lossy(line)
        );
        if v.get("method").is_none() {
            let id = v
                .get("id")
                .map_or_else(|| "null".to_owned(), Value::to_json);
            *answers.entry(id).or_default() += 1;
        }
    }
    for id in REQUESTS {
        assert_eq!(
            answers.remove(id),
            Some(1),
            "request {id}: not answered exactly once"
        );
    }
    assert!(answers.is_empty(), "answers to no request: {answers:?}");
});
