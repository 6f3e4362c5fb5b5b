//! The audit record: one JSON line per decision, for operators only.
//!
//! It says what was decided and why, with enough to find the bytes again (their SHA-256 and
//! size) but without the bytes themselves. Instance pointers may contain upstream member
//! names: the record is never shown to the agent and never mixed into its output.

use sha2::{Digest, Sha256};

use super::envelope::FailureCode;
use super::retry::RetryDecision;
use super::semantic::Timestamp;
use super::Upstream;
use crate::json::Value;
use crate::screen::{Action, Finding};

/// What went wrong, for operators. Which fields are set depends on the kind: `schema` sets
/// keyword, schema path, pointer and offset; scanner kinds (`syntax`, `duplicate_name`,
/// `too_large`, …) set pointer and offset; `check` sets check, field and reason; `line_format`
/// sets line and reason; `missing_field` sets field and pointer; `upstream_error` sets the
/// upstream error shape's index as `keyword`; `screen` (a screening `reject`) sets the
/// pattern id as `keyword`, the data pointer as `pointer` and the class as `reason`.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, Gate, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object","properties":{"n":{"type":"integer"}}}}],
///   "fields":{"n":{"pointer":"/n"}}}"#, std::path::Path::new("."))?;
/// let d = Gate::new(&contract)?.run_slice(br#"{"n":"seven"}"#, &Request::new("r-1", Context::new())).unwrap();
/// let e = d.audit.error.unwrap();
/// assert_eq!((e.kind.as_str(), e.keyword.as_deref(), e.pointer.as_deref()), ("schema", Some("type"), Some("/n")));
/// assert!(e.check.is_none() && e.line.is_none());
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AuditError {
    /// `schema`, a scanner error code, `check`, `line_format`, `missing_field`,
    /// `upstream_error`, `screen`, `over_budget`, `breaker_open`, `transport` or `envelope`.
    pub kind: String,
    /// The failing schema keyword.
    pub keyword: Option<String>,
    /// Location of the keyword in the schema (through `$ref`s).
    pub schema_path: Option<String>,
    /// JSON Pointer of the instance value.
    pub pointer: Option<String>,
    /// Byte offset where the verdict was decided.
    pub offset: Option<u64>,
    /// 1-based line (command output).
    pub line: Option<u64>,
    /// Name of the failing semantic check.
    pub check: Option<String>,
    /// Output field the check or the requirement concerns.
    pub field: Option<String>,
    /// A fixed reason code.
    pub reason: Option<String>,
}

/// One decision, as operators see it.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, Gate, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"status","version":"3",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"state":{"pointer":"/state"}}}"#,
///   std::path::Path::new("."))?;
/// let req = Request::new("r-1", Context::new().value("session_id", "s-9")).attempt(2, std::time::Duration::ZERO);
/// let a = Gate::new(&contract)?.run_slice(br#"{"state":"up"}"#, &req).unwrap().audit;
/// assert!(a.accepted && a.error.is_none());
/// assert_eq!((a.tool.as_str(), a.contract_version.as_str(), a.bytes), ("status", "3", 14));
/// assert_eq!((a.attempt, a.session_id.as_deref()), (Some(2), Some("s-9")));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditRecord {
    /// When the decision was made (the caller's clock).
    pub time: Timestamp,
    /// The caller-issued request id.
    pub request_id: String,
    /// The contract's tool name.
    pub tool: String,
    /// The contract's version.
    pub contract_version: String,
    /// Whether the response reached the agent.
    pub accepted: bool,
    /// The failure code, for a rejection.
    pub code: Option<FailureCode>,
    /// The upstream shape (contract `upstream[].version`) the response matched.
    pub upstream_version: Option<String>,
    /// Details of a rejection.
    pub error: Option<AuditError>,
    /// Bytes read from the upstream.
    pub bytes: u64,
    /// SHA-256 of the bytes read, lowercase hex.
    pub sha256: String,
    /// Microseconds from the first byte read to the verdict.
    pub duration_us: u64,
    /// Where a bounded copy of the raw bytes was written, if one was.
    pub raw_copy: Option<String>,
    /// Screening findings in the agent-facing data, with the action each one chose.
    pub screen: Vec<(Finding, Action)>,
    /// Pointers (into the agent-facing data) of strings that screening's `redact` cleaned.
    pub cleaned: Vec<String>,
    /// Bytes of the agent-facing output line.
    pub output_bytes: u64,
    /// Its approximate token count ([`approx_tokens`](super::approx_tokens)).
    pub output_tokens: u64,
    /// Bytes of text the output budget cut from the contract's `truncate_field`.
    pub truncated_bytes: Option<u64>,
    /// The attempt number the caller gave (1-based).
    pub attempt: Option<u32>,
    /// The retry policy's decision for a failure of that attempt.
    pub retry: Option<RetryDecision>,
    /// The caller's session id (context value `session_id`).
    pub session_id: Option<String>,
    /// The caller's agent id (context value `agent_id`).
    pub agent_id: Option<String>,
    /// The upstream endpoint or command and its status, as the caller gave them.
    pub upstream: Option<Upstream>,
}

impl AuditRecord {
    /// The record as one JSON line (no newline).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Context, Contract, Gate, Request};
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// let line = Gate::new(&contract)?.run_slice(b"[]", &Request::new("r-1", Context::new())).unwrap().audit.to_json();
    /// assert!(line.starts_with(r#"{"time":"#) && !line.ends_with('\n'));
    /// assert!(line.contains(&format!(r#""jsongate":"{}""#, jsongate::VERSION)));
    /// assert!(line.contains(r#""verdict":"rejected""#), "{line}");
    /// assert!(jsongate::json::Value::parse(line.as_bytes(), jsongate::Limits::new()).is_ok());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn to_json(&self) -> String {
        let s = |x: &str| Value::String(x.to_owned());
        let n = |x: u64| Value::Number(x.to_string());
        let opt_s = |x: &Option<String>| x.as_deref().map_or(Value::Null, s);
        let mut m = vec![
            ("time", s(&self.time.to_rfc3339())),
            ("jsongate", s(env!("CARGO_PKG_VERSION"))),
            ("tool", s(&self.tool)),
            ("contract_version", s(&self.contract_version)),
            ("request_id", s(&self.request_id)),
            (
                "verdict",
                s(if self.accepted {
                    "accepted"
                } else {
                    "rejected"
                }),
            ),
            ("code", self.code.map_or(Value::Null, |c| s(c.as_str()))),
            ("upstream_version", opt_s(&self.upstream_version)),
        ];
        for (k, v) in [
            ("session_id", &self.session_id),
            ("agent_id", &self.agent_id),
        ] {
            if let Some(v) = v {
                m.push((k, s(v)));
            }
        }
        if let Some(u) = &self.upstream {
            let mut um = vec![("endpoint".to_owned(), s(&u.endpoint))];
            if let Some(st) = u.status {
                um.push(("status".to_owned(), Value::Number(st.to_string())));
            }
            m.push(("upstream", Value::Object(um)));
        }
        if let Some(a) = self.attempt {
            m.push(("attempt", n(u64::from(a))));
        }
        if let Some(r) = self.retry {
            let o = match r {
                RetryDecision::Retry { after } => vec![
                    ("decision".to_owned(), s("retry")),
                    (
                        "after_ms".to_owned(),
                        n(u64::try_from(after.as_millis()).unwrap_or(u64::MAX)),
                    ),
                ],
                RetryDecision::Stop(why) => vec![
                    ("decision".to_owned(), s("stop")),
                    ("reason".to_owned(), s(why.as_str())),
                ],
            };
            m.push(("retry", Value::Object(o)));
        }
        if let Some(e) = &self.error {
            let mut em = vec![("kind", s(&e.kind))];
            let strs = [
                ("keyword", &e.keyword),
                ("schema_path", &e.schema_path),
                ("pointer", &e.pointer),
            ];
            em.extend(strs.iter().filter_map(|(k, v)| Some((*k, s(v.as_ref()?)))));
            em.extend(e.offset.map(|o| ("offset", n(o))));
            em.extend(e.line.map(|o| ("line", n(o))));
            let strs = [
                ("check", &e.check),
                ("field", &e.field),
                ("reason", &e.reason),
            ];
            em.extend(strs.iter().filter_map(|(k, v)| Some((*k, s(v.as_ref()?)))));
            m.push((
                "error",
                Value::Object(em.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()),
            ));
        }
        if !self.screen.is_empty() {
            let found = self
                .screen
                .iter()
                .map(|(f, a)| {
                    let mut o = vec![
                        ("pointer".to_owned(), s(&f.pointer)),
                        ("in".to_owned(), s(if f.in_name { "name" } else { "value" })),
                        ("pattern".to_owned(), s(f.pattern)),
                        ("class".to_owned(), s(f.class.as_str())),
                        ("offset".to_owned(), n(f.offset as u64)),
                    ];
                    if !f.evidence.is_empty() {
                        let e = f.evidence.iter().map(|x| s(x)).collect();
                        o.push(("evidence".to_owned(), Value::Array(e)));
                    }
                    o.push(("action".to_owned(), s(a.as_str())));
                    Value::Object(o)
                })
                .collect();
            m.push(("screen", Value::Array(found)));
        }
        if !self.cleaned.is_empty() {
            m.push((
                "cleaned",
                Value::Array(self.cleaned.iter().map(|p| s(p)).collect()),
            ));
        }
        m.push(("bytes", n(self.bytes)));
        m.push(("sha256", s(&self.sha256)));
        m.push(("output_bytes", n(self.output_bytes)));
        m.push(("output_tokens", n(self.output_tokens)));
        if let Some(t) = self.truncated_bytes {
            m.push(("truncated_bytes", n(t)));
        }
        m.push(("duration_us", n(self.duration_us)));
        if let Some(p) = &self.raw_copy {
            m.push(("raw_copy", s(p)));
        }
        Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()).to_json()
    }
}

/// Hashes and counts the bytes read from the upstream, and keeps a bounded copy of the first
/// ones when asked to.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawTap {
    hasher: Sha256,
    bytes: u64,
    copy: Option<(Vec<u8>, usize)>,
}

impl RawTap {
    pub(crate) fn new(copy_limit: Option<usize>) -> Self {
        RawTap {
            hasher: Sha256::new(),
            bytes: 0,
            copy: copy_limit.map(|l| (Vec::new(), l)),
        }
    }

    pub(crate) fn update(&mut self, chunk: &[u8]) {
        self.hasher.update(chunk);
        self.bytes += chunk.len() as u64;
        if let Some((buf, limit)) = &mut self.copy {
            let room = limit.saturating_sub(buf.len());
            buf.extend_from_slice(&chunk[..room.min(chunk.len())]);
        }
    }

    pub(crate) fn finish(self) -> (u64, String, Option<Vec<u8>>) {
        let digest = self.hasher.finalize();
        let mut hex = String::with_capacity(64);
        for b in digest {
            hex.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
            hex.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
        }
        (self.bytes, hex, self.copy.map(|(b, _)| b))
    }
}

/// A reader that passes every byte it reads through a [`RawTap`].
pub(crate) struct TapReader<'a, R> {
    pub(crate) inner: R,
    pub(crate) tap: &'a mut RawTap,
}

impl<R: std::io::Read> std::io::Read for TapReader<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.tap.update(&buf[..n]);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_of_known_input_and_bounded_copy() {
        let mut t = RawTap::new(Some(2));
        t.update(b"a");
        t.update(b"bc");
        let (n, hex, copy) = t.finish();
        assert_eq!(n, 3);
        assert_eq!(
            hex,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(copy.as_deref(), Some(&b"ab"[..]));
    }
}
