//! The result budget of the relay (`--max-result-bytes`): a `tools/call` result line over
//! the budget is refused when it carries structured content (never shortened), and plain
//! text content may be cut at a character boundary with an explicit marker when the
//! operator allows it (`--truncate-text`).
//!
//! This module only measures and cuts one line; the session decides what to do with it.

use crate::json::Value;
use crate::Limits;

/// Appended to every text item the budget cut.
///
/// # Example
/// ```
/// use jsongate::mcp::TEXT_TRUNCATION_MARKER;
/// let cut = format!("first part of a long log{TEXT_TRUNCATION_MARKER}");
/// assert!(cut.ends_with("[truncated by jsongate]"));
/// ```
pub const TEXT_TRUNCATION_MARKER: &str = "\n[truncated by jsongate]";

/// The line with its `result.content[*].text` items cut (last first) until the whole line,
/// re-serialised, fits in `max` bytes; `None` when it cannot fit (non-text content alone is
/// too large) or the line is not a result with text content.
pub(super) fn cut_text(line: &[u8], max: u64, limits: Limits) -> Option<Vec<u8>> {
    let mut v = Value::parse(line, limits).ok()?;
    let max = usize::try_from(max).unwrap_or(usize::MAX);
    let texts: Vec<usize> = content(&mut v)?
        .iter()
        .enumerate()
        .filter(|(_, c)| c.get("type").and_then(Value::as_str) == Some("text"))
        .map(|(i, _)| i)
        .collect();
    if texts.is_empty() {
        return None;
    }
    for &i in texts.iter().rev() {
        loop {
            let out = v.to_json();
            if out.len() <= max {
                return Some(out.into_bytes());
            }
            let excess = out.len() - max;
            let item = content(&mut v)?.get_mut(i)?;
            let Value::Object(members) = item else {
                return None;
            };
            let (_, Value::String(text)) = members.iter_mut().find(|(k, _)| k == "text")? else {
                return None;
            };
            let base = text
                .strip_suffix(TEXT_TRUNCATION_MARKER)
                .unwrap_or(text)
                .to_owned();
            if base.is_empty() {
                break;
            }
            // Removing k bytes of text removes at least k bytes of the line (escapes only
            // lengthen), so one cut of the excess plus the marker usually suffices.
            let mut keep = base
                .len()
                .saturating_sub(excess + TEXT_TRUNCATION_MARKER.len());
            while !base.is_char_boundary(keep) {
                keep -= 1;
            }
            *text = format!("{}{TEXT_TRUNCATION_MARKER}", &base[..keep]);
            if keep == 0 {
                let out = v.to_json();
                if out.len() <= max {
                    return Some(out.into_bytes());
                }
                break;
            }
        }
    }
    None
}

fn content(v: &mut Value) -> Option<&mut Vec<Value>> {
    let Value::Object(m) = v else { return None };
    let (_, result) = m.iter_mut().find(|(k, _)| k == "result")?;
    let Value::Object(r) = result else {
        return None;
    };
    match r.iter_mut().find(|(k, _)| k == "content")? {
        (_, Value::Array(items)) => Some(items),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_cut_to_fit_and_other_lines_are_not() {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "é".repeat(500)
        );
        let out = cut_text(line.as_bytes(), 200, Limits::new()).unwrap();
        assert!(out.len() <= 200);
        let s = String::from_utf8(out).unwrap();
        assert!(s.contains("\\n[truncated by jsongate]\""), "{s}");
        assert!(cut_text(
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            10,
            Limits::new()
        )
        .is_none());
        let img = r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"AAAAAAAAAAAAAAAAAAAA"},{"type":"text","text":"hi"}]}}"#;
        assert!(cut_text(img.as_bytes(), 60, Limits::new()).is_none());
    }
}
