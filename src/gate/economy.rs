//! Result economy: the budget of one agent-facing output (bytes and an approximate token
//! count) and the one cut a contract may allow.
//!
//! A structured result over the budget is refused (`INVALID_RESPONSE`, audit kind
//! `over_budget`), never silently shortened. Only a string field the contract names in
//! `truncate_field` may be cut, at a character boundary, with an explicit marker, and only as
//! far as needed for the whole output to fit. This module measures and cuts; the gate decides.

use crate::json::Value;

/// Appended to a string the budget cut.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, Gate, Request, TRUNCATION_MARKER};
/// assert_eq!(TRUNCATION_MARKER, " [truncated]");
/// // `truncate_field` may be cut, with the marker, to keep the output within `max_output_bytes`.
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"logs","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"text":{"pointer":"/text"}},
///   "max_output_bytes":120,"truncate_field":"text"}"#, std::path::Path::new("."))?;
/// let body = format!(r#"{{"text":"{}"}}"#, "x".repeat(500));
/// let d = Gate::new(&contract)?.run_slice(body.as_bytes(), &Request::new("r-1", Context::new())).unwrap();
/// assert!(d.audit.accepted && d.output.len() <= 120);
/// assert!(d.output.contains(&format!("x{TRUNCATION_MARKER}\"")), "{}", d.output);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const TRUNCATION_MARKER: &str = " [truncated]";

/// The approximate token count of `s`: one token per started group of four ASCII letters or
/// digits, one per other visible ASCII character (punctuation), one per non-ASCII character
/// (a CJK character is about one token), whitespace free. It over-counts English prose
/// (about 1.3 times a BPE tokenizer's count) rather than under-counting.
///
/// # Example
/// ```
/// use jsongate::gate::approx_tokens;
/// assert_eq!(approx_tokens("hello world"), 4); // "hell" "o" "worl" "d"
/// assert_eq!(approx_tokens(r#"{"a":1}"#), 7);
/// assert_eq!(approx_tokens("忽略指令"), 4);
/// ```
pub fn approx_tokens(s: &str) -> u64 {
    let mut tokens = 0u64;
    let mut run = 0u64;
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            run += 1;
            continue;
        }
        tokens += run.div_ceil(4);
        run = 0;
        if !c.is_whitespace() {
            tokens += 1;
        }
    }
    tokens + run.div_ceil(4)
}

/// A contract's output budget.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Budget {
    pub(crate) max_bytes: Option<u64>,
    pub(crate) max_tokens: Option<u64>,
    /// The exposed string field that may be cut to fit.
    pub(crate) truncate_field: Option<String>,
}

/// How an output met its budget.
pub(crate) enum Fit {
    /// As it was.
    Fits,
    /// After cutting the truncate field by this many bytes of its text.
    Cut(u64),
    /// It does not fit and may not be cut (far enough).
    Over,
}

impl Budget {
    pub(crate) fn is_set(&self) -> bool {
        self.max_bytes.is_some() || self.max_tokens.is_some()
    }

    fn fits(&self, out: &str) -> bool {
        self.max_bytes.is_none_or(|m| out.len() as u64 <= m)
            && self.max_tokens.is_none_or(|m| approx_tokens(out) <= m)
    }

    /// Checks `output` (the rendering of `data`); when it is over and the contract allows,
    /// cuts the truncate field of `data` and re-renders into `output` with `render`.
    pub(crate) fn fit(
        &self,
        data: &mut Value,
        output: &mut String,
        render: impl Fn(&Value) -> String,
    ) -> Fit {
        if self.fits(output) {
            return Fit::Fits;
        }
        let Some(name) = &self.truncate_field else {
            return Fit::Over;
        };
        let Value::Object(members) = data else {
            return Fit::Over;
        };
        let Some(Value::String(original)) = members
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
        else {
            return Fit::Over;
        };
        // Cutting k bytes of text removes at least k bytes of output (escapes only ever
        // lengthen), so a cut of the excess plus the marker fits the byte budget; the token
        // budget is met by halving the kept text until it holds.
        let excess = self
            .max_bytes
            .map_or(0, |m| (output.len() as u64).saturating_sub(m));
        let mut keep = original
            .len()
            .saturating_sub(usize::try_from(excess).unwrap_or(usize::MAX))
            .saturating_sub(TRUNCATION_MARKER.len());
        loop {
            while !original.is_char_boundary(keep) {
                keep -= 1;
            }
            let cut = format!("{}{TRUNCATION_MARKER}", &original[..keep]);
            if let Some((_, v)) = members.iter_mut().find(|(k, _)| k == name) {
                *v = Value::String(cut);
            }
            let candidate = render(&Value::Object(members.clone()));
            if self.fits(&candidate) {
                *output = candidate;
                *data = Value::Object(members.clone());
                return Fit::Cut((original.len() - keep) as u64);
            }
            if keep == 0 {
                // Even the marker alone does not fit: refuse, with the data as it was.
                if let Some((_, v)) = members.iter_mut().find(|(k, _)| k == name) {
                    *v = Value::String(original);
                }
                return Fit::Over;
            }
            keep /= 2;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(v: &Value) -> String {
        v.to_json()
    }

    #[test]
    fn cut_at_a_character_boundary_with_the_marker() {
        let b = Budget {
            max_bytes: Some(40),
            max_tokens: None,
            truncate_field: Some("t".into()),
        };
        let mut data = Value::Object(vec![("t".into(), Value::String("é".repeat(30)))]);
        let mut out = render(&data);
        let Fit::Cut(n) = b.fit(&mut data, &mut out, render) else {
            panic!("not cut")
        };
        assert!(out.len() <= 40, "{out}");
        assert!(out.ends_with(" [truncated]\"}"), "{out}");
        assert_eq!(n % 2, 0, "whole characters only");
        assert_eq!(out, render(&data));
    }

    #[test]
    fn over_without_a_truncate_field_or_when_nothing_fits() {
        let mut b = Budget {
            max_bytes: Some(10),
            max_tokens: None,
            truncate_field: None,
        };
        let mut data = Value::Object(vec![("t".into(), Value::String("x".repeat(30)))]);
        let mut out = render(&data);
        assert!(matches!(b.fit(&mut data, &mut out, render), Fit::Over));
        b.truncate_field = Some("t".into());
        assert!(matches!(b.fit(&mut data, &mut out, render), Fit::Over));
        assert_eq!(
            data.get("t").and_then(Value::as_str),
            Some(&*"x".repeat(30))
        );
    }

    #[test]
    fn token_budget() {
        let b = Budget {
            max_bytes: None,
            max_tokens: Some(20),
            truncate_field: Some("t".into()),
        };
        let mut data = Value::Object(vec![("t".into(), Value::String("word ".repeat(40)))]);
        let mut out = render(&data);
        assert!(matches!(b.fit(&mut data, &mut out, render), Fit::Cut(_)));
        assert!(approx_tokens(&out) <= 20);
    }
}
