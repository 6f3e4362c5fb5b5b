//! Replays of the inputs the fuzz targets found, kept in `fuzz/regressions/<target>-<name>`.
//! Each test is named after its file and says what went wrong; a test stays `#[ignore]`d
//! (with the reason) while its bug is open, so `cargo test` stays green, and is un-ignored
//! by the fix.

use std::path::PathBuf;

use jsongate::{Error, ErrorKind, Event, Flow, Limits, Outcome, Scanner};

fn saved(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz")
        .join("regressions")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The tight limits of the `split` fuzz target (`fuzz/fuzz_targets/split.rs`).
fn split_target_tight() -> Limits {
    Limits::new()
        .max_bytes(3000)
        .max_depth(24)
        .max_name_bytes(24)
        .max_string_bytes(64)
        .max_number_bytes(24)
        .max_members(16)
        .max_items(32)
}

/// A `split` target input: the first 2 bytes (little endian) pick the split point of the rest.
fn split_input(data: &[u8]) -> (usize, &[u8]) {
    let (head, doc) = data.split_at(2);
    let at = usize::from(u16::from_le_bytes([head[0], head[1]])) % (doc.len() + 1);
    (at, doc)
}

type Scan = (Result<Outcome, Error>, u64, Vec<String>);

/// Scans `doc` fed in the given chunks (one chunk = one-shot): verdict, bytes read, events.
fn scan_chunks(doc: &[u8], cuts: &[usize], limits: Limits) -> Scan {
    let (mut s, mut events) = (Scanner::new(limits), Vec::new());
    let mut sink = |ev: Event<'_>, at: u64| {
        events.push(format!("{ev:?}@{at}"));
        Flow::Continue
    };
    let mut start = 0;
    let mut fed = Ok(Flow::Continue);
    for &end in cuts.iter().chain([doc.len()].iter()) {
        fed = fed.and_then(|_| s.feed(&doc[start..end], &mut sink));
        start = end;
    }
    let verdict = fed.and_then(|_| s.finish(&mut sink));
    (verdict, s.bytes_read(), events)
}

/// Checks that every split into two chunks and byte-at-a-time feeding give exactly the same
/// events, verdict, error and bytes read as the one-shot scan.
fn same_in_every_chunking(doc: &[u8], limits: Limits) {
    let one_shot = scan_chunks(doc, &[], limits);
    for at in 0..=doc.len() {
        assert_eq!(scan_chunks(doc, &[at], limits), one_shot, "split at {at}");
    }
    let bytewise: Vec<usize> = (1..doc.len()).collect();
    let bytewise = scan_chunks(doc, &bytewise, limits);
    assert_eq!(bytewise, one_shot, "byte at a time");
}

/// The kind and offset of the one-shot scan's error.
fn one_shot_error(doc: &[u8], limits: Limits) -> (ErrorKind, u64) {
    let e = jsongate::check(doc, limits).expect_err("rejected");
    (e.kind().clone(), e.offset())
}

/// BUG-F1: `"<ED A0>` (ED A0 starts a surrogate, never valid) split after ED and ended there
/// was `unexpected end` instead of `invalid_utf8`: the cut-sequence path checked only that
/// appended bytes were continuation bytes, not the lead byte's narrower second-byte range.
#[test]
fn split_utf8_invalid_prefix_at_end() {
    let data = saved("split-utf8-invalid-prefix-at-end");
    let (at, doc) = split_input(&data);
    assert_eq!((at, doc), (2, &b"\"\xed\xa0"[..]));
    for limits in [Limits::new(), split_target_tight()] {
        same_in_every_chunking(doc, limits);
        assert_eq!(one_shot_error(doc, limits), (ErrorKind::InvalidUtf8, 1));
    }
}

/// BUG-F2: a UTF-8 lead byte cut by a chunk boundary, followed by a byte that both crosses
/// the name length limit and proves the sequence invalid: one-shot said `name_too_long`, the
/// split scan `invalid_utf8`. Either may win, but not depending on the chunking.
#[test]
fn split_utf8_cut_at_name_limit() {
    let data = saved("split-utf8-cut-at-name-limit");
    let (_, doc) = split_input(&data);
    for limits in [Limits::new(), split_target_tight()] {
        same_in_every_chunking(doc, limits);
    }
    let l = Limits::new().max_string_bytes(2);
    same_in_every_chunking(b"[\"a\xd0.\"]", l);
    same_in_every_chunking(b"[\"a\xe2\x82.\"]", l.max_string_bytes(3));
}

/// BUG-F3: a name limit crossed inside a 4-byte UTF-8 sequence cut by a chunk boundary was
/// reported at the sequence's last byte (offset 27) instead of the first byte past the limit
/// (offset 26, as `Error::offset` documents and the one-shot scan reports).
#[test]
fn split_utf8_cut_crossing_name_limit() {
    let data = saved("split-utf8-cut-crossing-name-limit");
    let (_, doc) = split_input(&data);
    same_in_every_chunking(doc, split_target_tight());
    same_in_every_chunking(doc, Limits::new());
    let tight = (ErrorKind::NameTooLong { limit: 24 }, 26);
    assert_eq!(one_shot_error(doc, split_target_tight()), tight);
    let (doc, limits) = ("[\"ab€\"]".as_bytes(), Limits::new().max_string_bytes(3));
    same_in_every_chunking(doc, limits);
    assert_eq!(
        one_shot_error(doc, limits),
        (ErrorKind::StringTooLong { limit: 3 }, 5)
    );
}

/// BUG-F3, at the end of input: when the input ends while the sequence that crosses the
/// limit is still cut, the limit error was lost and the verdict became `unexpected end`.
#[test]
fn split_utf8_cut_crossing_name_limit_at_end() {
    let data = saved("split-utf8-cut-crossing-name-limit-at-end");
    let (_, doc) = split_input(&data);
    same_in_every_chunking(doc, split_target_tight());
    let tight = (ErrorKind::NameTooLong { limit: 24 }, 28);
    assert_eq!(one_shot_error(doc, split_target_tight()), tight);
    let (doc, limits) = (b"[\"a\xe6\xa2", Limits::new().max_string_bytes(2));
    same_in_every_chunking(doc, limits);
    assert_eq!(
        one_shot_error(doc, limits),
        (ErrorKind::StringTooLong { limit: 2 }, 4)
    );
}

/// BUG-F4: a truncated UTF-8 sequence (`F0 9D`, then the closing quote) cut by a chunk
/// boundary was reported as `name_too_long` at the quote, although the name's 24 bytes are
/// within the limit: the one-shot scan (and the right answer) is `invalid_utf8` at the lead.
#[test]
fn split_utf8_truncated_by_quote_at_name_limit() {
    let data = saved("split-utf8-truncated-by-quote-at-name-limit");
    let (_, doc) = split_input(&data);
    for limits in [Limits::new(), split_target_tight()] {
        same_in_every_chunking(doc, limits);
        assert_eq!(one_shot_error(doc, limits), (ErrorKind::InvalidUtf8, 24));
    }
    for (doc, limit) in [(&b"[\"a\xe2\"]"[..], 2), (b"[\"a\xf0\x9d\"]", 3)] {
        let limits = Limits::new().max_string_bytes(limit);
        same_in_every_chunking(doc, limits);
        assert_eq!(one_shot_error(doc, limits), (ErrorKind::InvalidUtf8, 3));
    }
}

/// Not a scanner bug: the `differential` target disagreed with `serde_json`'s default (fast,
/// approximate) float parsing, which rejects `1.7976931348623158e308` as out of range although
/// it rounds to `f64::MAX`. The target now builds `serde_json` with `float_roundtrip`; this pins
/// jsongate's side: accepted, and `Number::as_f64` overflows exactly past `f64::MAX`.
#[test]
fn differential_near_f64_max() {
    let doc = saved("differential-near-f64-max");
    let mut values = Vec::new();
    let mut sink = |ev: Event<'_>, _| {
        if let Event::Number(n) = ev {
            values.push(n.as_f64().map_err(|e| e.kind()));
        }
        Flow::Continue
    };
    let outcome = jsongate::scan(&doc, Limits::unlimited(), &mut sink);
    assert_eq!(outcome, Ok(Outcome::Complete));
    let out_of_range = Err(jsongate::NumberErrorKind::OutOfRange);
    assert_eq!(values, [Ok(f64::MAX), out_of_range, Ok(-f64::MAX)]);
}

/// The `mcp` fuzz target's client script (`fuzz/fuzz_targets/mcp.rs`) and its request ids.
const MCP_SCRIPT: &str = concat!(
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

/// What the client receives when the `mcp` target's script meets `server` as the server's
/// output (written once the script has been read).
fn mcp_replay(server: Vec<u8>) -> Vec<u8> {
    use jsongate::mcp::{Config, Proxy};
    use std::io::{Read, Write};
    use std::sync::mpsc::{channel, Receiver};
    use std::sync::{Arc, Mutex};

    struct After(Option<Receiver<()>>, std::io::Cursor<Vec<u8>>);
    impl Read for After {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if let Some(g) = self.0.take() {
                let _ = g.recv();
            }
            self.1.read(buf)
        }
    }
    #[derive(Clone, Default)]
    struct Out(Arc<Mutex<Vec<u8>>>);
    impl Write for Out {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let (tx, rx) = channel();
    let client = Out::default();
    let config = Config::default().limits(Limits::new().max_bytes(2048).max_depth(32));
    Proxy::new(config)
        .run(
            std::io::Cursor::new(MCP_SCRIPT.as_bytes().to_vec()),
            client.clone(),
            Out::default(),
            After(Some(rx), std::io::Cursor::new(server)),
            Box::new(move || {
                let _ = tx.send(());
            }),
        )
        .unwrap();
    let out = client.0.lock().unwrap().clone();
    out
}

/// BUG-M1 (issue 10): a result whose `error` member comes before a `structuredContent` that
/// violates the schema, id first: the scan stopped at the violation, the line was not kept,
/// and the proxy relayed what it had kept of it, an empty line (audited `passed`); the
/// client never got an answer to request 2. The `mcp` target's old oracle skipped empty
/// lines and counted no answers. (Now the held call may still wait for its tool's schemas
/// when that line arrives, which then answers nothing; either way every request gets exactly
/// one answer, and `mcp::an_error_or_incomplete_result_before_…` pins the inline path.)
#[test]
fn mcp_error_before_violating_structured_content() {
    let out = mcp_replay(saved("mcp-error-before-violating-structured-content"));
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap().split('\n').collect();
    assert!(lines.iter().all(|l| !l.is_empty()), "{text}");
    let mut ids: Vec<String> = lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["id"].to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["\"p\"", "0", "1", "2", "3", "4"], "{text}");
}

/// The compile worker (`mcp::tools::spawn`) was left running when the relay ended: with a
/// listing still compiling, its allocations outlived `Proxy::run`, which the `mcp` target's
/// leak check reported. The coordinator now stops the worker from starting another job and
/// joins it, so `run` returns with no thread of its own left. (The fuzz smoke replays this
/// input with leak detection on; here every request still gets one well-formed answer.)
#[test]
fn mcp_compile_worker_outlives_relay() {
    let out = mcp_replay(saved("mcp-compile-worker-outlives-relay"));
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap().split('\n').collect();
    assert!(lines.iter().all(|l| !l.is_empty()), "{text}");
    for l in &lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{l}");
    }
}

/// Not a relay bug: the `mcp` target's oracle indexed a server line that was a bare number as
/// an object (`serde_json`'s `IndexMut` panics there) while looking for a filtered listing.
/// The relay's answers to this input are whole, well-formed lines.
#[test]
fn mcp_oracle_indexes_a_number_line() {
    let out = mcp_replay(saved("mcp-oracle-indexes-a-number-line"));
    let text = String::from_utf8(out).unwrap();
    for l in text.strip_suffix('\n').unwrap().split('\n') {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{l}");
    }
}

/// Not a relay bug: a server notification whose `jsonrpc` member is `1e400` (valid JSON, out
/// of range for `serde_json`'s `Value` without `arbitrary_precision`) is forwarded as it is,
/// and the `mcp` target's oracle, which read every relayed line with `serde_json`, panicked
/// on it. The oracle now reads lines with `jsongate::json::Value` (numbers kept as text).
#[test]
fn mcp_oracle_reads_a_number_beyond_f64() {
    use jsongate::json::Value;
    let server = saved("mcp-oracle-reads-a-number-beyond-f64");
    let out = mcp_replay(server.clone());
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.strip_suffix('\n').unwrap().split('\n').collect();
    let relayed = lines
        .iter()
        .find(|l| l.contains("1e400"))
        .unwrap_or_else(|| panic!("the 1e400 line was not relayed: {text}"));
    assert!(server
        .split(|&b| b == b'\n')
        .any(|l| l == relayed.as_bytes()));
    assert!(serde_json::from_str::<serde_json::Value>(relayed).is_err());
    let v = Value::parse(relayed.as_bytes(), Limits::new()).unwrap();
    assert_eq!(v.get("jsonrpc"), Some(&Value::Number("1e400".into())));
    let mut ids: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let v = Value::parse(l.as_bytes(), Limits::new()).unwrap();
            v.get("method")
                .is_none()
                .then(|| v.get("id").map_or("null".into(), Value::to_json))
        })
        .collect();
    ids.sort();
    assert_eq!(ids, ["\"p\"", "0", "1", "2", "3", "4"], "{text}");
}

/// `jwt`: a JWKS whose RSA key has an empty `n` panicked counting the modulus's bits
/// (0 * 8 - 8 underflowed); now that key is refused and the set's other keys are read.
#[test]
fn jwt_empty_rsa_modulus() {
    let data = saved("jwt-empty-rsa-modulus");
    assert_eq!(data[0] % 4, 1, "a JWKS input");
    let set = jsongate::auth::Jwks::from_slice(&data[1..]).expect("the usable keys are kept");
    assert!(!set.is_empty());
    assert!(
        set.refusals().iter().any(|r| r.contains("RSA modulus")),
        "{:?}",
        set.refusals()
    );
}
