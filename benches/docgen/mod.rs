//! Deterministic generators for tool-result–shaped JSON documents.
//!
//! Used by the benches (`benches/*.rs`, `benches/compare/benches/*.rs`) and, through a `#[path]` include, by the integration tests in
//! `tests/integration/memory.rs`. Everything is derived from a fixed-seed LCG, so the same
//! call always yields the same bytes. Every generated document is valid strict JSON (no
//! duplicate names, no lone surrogates, all limits of `Limits::new()` respected except
//! `max_bytes` for the large ones).
#![allow(dead_code)]

use std::fmt::Write as _;

/// A tiny deterministic pseudo-random generator (64-bit LCG, Knuth's constants).
pub struct Lcg(u64);

impl Lcg {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Lcg(seed ^ 0x9E37_79B9_7F4A_7C15)
    }

    /// The next 32 pseudo-random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 32) as u32
    }

    /// A pseudo-random index below `n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.next_u32() as usize % n
    }

    /// A pseudo-random element of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

/// A small tool-call success envelope (about 150 bytes).
pub fn success_envelope() -> Vec<u8> {
    br#"{"ok":true,"tool":"web_search","request_id":"req_8f3a2c1b9d","elapsed_ms":42,"result":{"status":"success","message":"Operation completed","count":3}}"#
        .to_vec()
}

const WORDS: &[&str] = &[
    "agent", "result", "search", "query", "stream", "bounded", "memory", "parser", "token",
    "limit", "document", "release", "version", "server", "client", "request", "response",
    "latency", "cache", "index",
];

const CJK: &[&str] = &[
    "東京の天気",
    "検索結果",
    "数据流",
    "解析器",
    "인공지능",
    "日本語のテキスト",
    "机器学习模型",
    "한국어 문서",
];

const LATIN1_ESCAPED: &[&str] = &[
    r"caf\u00e9",
    r"na\u00efve",
    r"r\u00e9sum\u00e9",
    r"\u00fcber",
];

/// A search-results document of at least `target_len` bytes: an object with a `results`
/// array whose snippets contain `\n`, `\"`, `\u00e9`-style escapes and raw CJK text.
pub fn search_results(target_len: usize) -> Vec<u8> {
    let mut rng = Lcg::new(1);
    let mut s = String::with_capacity(target_len + 4096);
    s.push_str(r#"{"query":"bounded memory json \"streaming\" parser caf\u00e9 東京","#);
    s.push_str(r#""engine":"example","page":1,"results":["#);
    let mut rank = 0u32;
    while s.len() < target_len {
        if rank > 0 {
            s.push(',');
        }
        rank += 1;
        let w1 = rng.pick(WORDS);
        let w2 = rng.pick(WORDS);
        let _ = write!(
            s,
            r#"{{"rank":{rank},"url":"https://example.com/{w1}/{w2}?id={}&lang=ja","title":"{} {w1} {w2} \u2014 {}","#,
            rng.next_u32(),
            rng.pick(CJK),
            rng.pick(LATIN1_ESCAPED),
        );
        s.push_str(r#""snippet":""#);
        let sentences = 3 + rng.below(4);
        for k in 0..sentences {
            if k > 0 {
                s.push_str(r"\n");
            }
            let _ = write!(
                s,
                r#"The {} {} said \"{} {}\" about {} ({}) and {}."#,
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.pick(CJK),
                rng.pick(LATIN1_ESCAPED),
                rng.pick(CJK),
            );
        }
        let _ = write!(
            s,
            r#"","score":0.{:04},"lang":"{}","cached":{},"tags":["{}","{}"],"meta":null}}"#,
            rng.below(10_000),
            ["ja", "zh", "ko", "en", "fr"][rng.below(5)],
            rng.below(2) == 0,
            rng.pick(WORDS),
            rng.pick(WORDS),
        );
    }
    let _ = write!(s, r#"],"total":{rank},"truncated":false}}"#);
    s.into_bytes()
}

const LEVELS: &[&str] = &["DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"];
const SERVICES: &[&str] = &["api-gateway", "auth", "billing", "search", "worker"];
const METHODS: &[&str] = &["GET", "GET", "POST", "PUT", "DELETE"];
const MESSAGES: &[&str] = &[
    "request completed",
    "cache miss, fetching from origin",
    "retrying upstream call",
    "user \"admin\" logged in",
    "slow query detected:\n  SELECT * FROM items",
    "payload rejected: invalid field",
];

/// Appends one log record (an object of strings, numbers, a nested object and an array,
/// about 330 bytes) derived from `i`.
pub fn log_record(i: u64, out: &mut Vec<u8>) {
    let mut rng = Lcg::new(i);
    let secs = i % 86_400;
    let mut s = String::with_capacity(400);
    let _ = write!(
        s,
        r#"{{"ts":"2024-05-01T{:02}:{:02}:{:02}.{:03}Z","level":"{}","service":"{}","host":"node-{:02}","msg":"{}","#,
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        rng.below(1000),
        rng.pick(LEVELS),
        rng.pick(SERVICES),
        rng.below(32),
        rng.pick(MESSAGES)
            .replace('"', r#"\""#)
            .replace('\n', r"\n"),
    );
    let _ = write!(
        s,
        r#""http":{{"method":"{}","path":"/v1/items/{}","status":{},"latency_ms":{}.{:03},"bytes":{}}},"#,
        rng.pick(METHODS),
        rng.next_u32() % 100_000,
        [200, 200, 201, 204, 404, 500][rng.below(6)],
        rng.below(2000),
        rng.below(1000),
        rng.next_u32() % 1_000_000,
    );
    let _ = write!(
        s,
        r#""user_id":{},"trace_id":"{:08x}{:08x}{:08x}{:08x}","sampled":{},"error":null,"tags":["prod","eu-west-{}","{}"]}}"#,
        rng.next_u32(),
        rng.next_u32(),
        rng.next_u32(),
        rng.next_u32(),
        rng.next_u32(),
        rng.below(2) == 0,
        1 + rng.below(3),
        rng.pick(WORDS),
    );
    out.extend_from_slice(s.as_bytes());
}

/// A log document of at least `target_len` bytes: a top-level array of [`log_record`]s.
pub fn logs(target_len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(target_len + 1024);
    out.push(b'[');
    let mut i = 0u64;
    while out.len() < target_len {
        if i > 0 {
            out.push(b',');
        }
        log_record(i, &mut out);
        i += 1;
    }
    out.push(b']');
    out
}

const KINDS: &[&str] = &["article", "issue", "commit", "page", "file"];
const OWNERS: &[&str] = &["infra", "search", "billing", "platform"];

/// An MCP `tools/call` response of at least `target_len` bytes (one item for ~200 B), the shape
/// a gateway validates most: a JSON-RPC envelope whose `structuredContent` holds closed
/// objects with patterned ids, enums, date-times, URLs, integers and numbers in ranges, and a
/// short `content` text. Matches `benches/schemas/gateway.schema.json`.
pub fn gateway_result(target_len: usize) -> Vec<u8> {
    let mut rng = Lcg::new(7);
    let mut items = String::new();
    let mut n = 0u32;
    // The envelope around the items takes about 140 bytes.
    while n == 0 || items.len() + 140 < target_len {
        if n > 0 {
            items.push(',');
        }
        n += 1;
        let _ = write!(
            items,
            r#"{{"id":"it-{:06}","kind":"{}","title":"{} {}","url":"https://example.com/{}/{n}","updated":"2026-11-{:02}T{:02}:{:02}:00Z","score":0.{:03},"owner":"{}","size":{}}}"#,
            rng.below(1_000_000),
            rng.pick(KINDS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS),
            1 + rng.below(28),
            rng.below(24),
            rng.below(60),
            rng.below(1000),
            rng.pick(OWNERS),
            rng.below(100_000),
        );
    }
    format!(
        r#"{{"jsonrpc":"2.0","id":17,"result":{{"content":[{{"type":"text","text":"{n} items"}}],"structuredContent":{{"items":[{items}],"total":{n},"cursor":null}},"isError":false}}}}"#
    )
    .into_bytes()
}
