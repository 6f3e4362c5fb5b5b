//! What the proxy writes itself: JSON-RPC error responses, the `isError` result that
//! replaces a rejected one or answers a refused call, the reasons they give (class, schema
//! keyword location and byte offset, never upstream text), and audit lines for operators.

use super::message::Finding;
use super::{Id, LineFacts, Out, Shared};
use crate::gate::Timestamp;
use crate::select::write_json_string;

pub(super) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// `{"jsonrpc":"2.0","id":ID,"error":{"code":CODE,"message":MESSAGE}}`.
pub(super) fn error_response(id: &Id, code: i32, message: &str) -> Vec<u8> {
    let mut s = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"error\":{{\"code\":{code},\"message\":",
        id.to_json()
    );
    write_json_string(&mut s, message);
    s.push_str("}}");
    s.into_bytes()
}

/// The replacement result: `isError` with one text item.
pub(super) fn error_result(id: &Id, text: &str) -> Vec<u8> {
    let mut s = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":",
        id.to_json()
    );
    write_json_string(&mut s, text);
    s.push_str("}],\"isError\":true,\"resultType\":\"complete\"}}");
    s.into_bytes()
}

/// The agent-facing reason for a rejected result: class, keyword location (from the
/// tool's declared schema) and byte offset; never upstream text.
pub(super) fn result_reason(f: &Finding) -> String {
    let mut s = format!("jsongate: the tool result was rejected ({}", f.class);
    if f.class == "screen" {
        if let Some(k) = &f.keyword {
            s.push_str(": instruction-like text, pattern ");
            s.push_str(k);
        }
    }
    if let Some(k) = &f.keyword_location {
        let k: String = k.chars().take(200).collect();
        s.push_str(": schema keyword ");
        s.push_str(if k.is_empty() { "/" } else { &k });
        s.push_str(" not satisfied by the structured content");
    }
    if let Some(o) = f.offset {
        s.push_str(" at byte ");
        s.push_str(&o.to_string());
        s.push_str(" of the response");
    }
    s.push_str("); nothing from it was passed on.");
    s
}

/// The reason for a refused call (arguments are the client's own text, so the pointer may
/// be given in full).
pub(super) fn call_reason(f: &Finding, what: &str) -> String {
    let mut s = format!("jsongate: the call was not forwarded: {what} ({}", f.class);
    if let Some(k) = &f.keyword_location {
        s.push_str(", schema keyword ");
        s.push_str(if k.is_empty() { "/" } else { k });
    }
    if let Some(p) = &f.pointer {
        s.push_str(", at ");
        s.push_str(p);
    }
    s.push(')');
    s.push('.');
    s
}

#[allow(clippy::too_many_arguments)]
pub(super) fn audit(
    shared: &Shared,
    outs: &mut Vec<Out>,
    tool: Option<&str>,
    id: Option<&Id>,
    direction: &str,
    verdict: &str,
    finding: Option<&Finding>,
    facts: &LineFacts<'_>,
) {
    if shared.audit.is_none() {
        return;
    }
    let mut s = String::from("{\"time\":");
    write_json_string(&mut s, &Timestamp::now().to_rfc3339());
    s.push_str(",\"tool\":");
    match tool {
        Some(t) => write_json_string(&mut s, t),
        None => s.push_str("null"),
    }
    s.push_str(",\"id\":");
    s.push_str(&id.map_or_else(|| "null".to_owned(), Id::to_json));
    s.push_str(",\"direction\":");
    write_json_string(&mut s, direction);
    s.push_str(",\"verdict\":");
    write_json_string(&mut s, verdict);
    let opt = |s: &mut String, k: &str, v: Option<&str>| {
        s.push_str(",\"");
        s.push_str(k);
        s.push_str("\":");
        match v {
            Some(v) => write_json_string(s, v),
            None => s.push_str("null"),
        }
    };
    opt(&mut s, "class", finding.map(|f| f.class));
    opt(
        &mut s,
        "keyword",
        finding.and_then(|f| f.keyword.as_deref()),
    );
    opt(
        &mut s,
        "keyword_location",
        finding.and_then(|f| f.keyword_location.as_deref()),
    );
    opt(
        &mut s,
        "pointer",
        finding.and_then(|f| f.pointer.as_deref()),
    );
    s.push_str(",\"offset\":");
    match finding.and_then(|f| f.offset) {
        Some(o) => s.push_str(&o.to_string()),
        None => s.push_str("null"),
    }
    s.push_str(",\"bytes\":");
    s.push_str(&facts.size.to_string());
    s.push_str(",\"sha256\":");
    if finding.is_some() {
        write_json_string(&mut s, &facts.sha());
    } else {
        s.push_str("null");
    }
    s.push('}');
    outs.push(Out::Audit(s));
}
