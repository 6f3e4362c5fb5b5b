//! The intent a model states for a tool call (`decide --intent`, `params._meta.intent` of an
//! MCP `tools/call`): recorded in audit lines only, never in a decision record, never shown
//! to the agent and never consulted by a decision. It is untrusted text, so it is bounded
//! ([`MAX_INTENT_BYTES`], cut at a character boundary, the cut said) and written escaped as
//! one JSON string.

use crate::json::ObjectWriter;

/// The most bytes of an intent kept; a longer one is cut and recorded as cut.
pub const MAX_INTENT_BYTES: usize = 512;

/// A stated intent, bounded.
///
/// # Example
/// ```
/// use jsongate::action::{Intent, MAX_INTENT_BYTES};
/// use jsongate::json::ObjectWriter;
/// let short = Intent::new("find the overdue invoice");
/// assert_eq!((short.text(), short.truncated()), ("find the overdue invoice", false));
/// let long = Intent::new(&"é".repeat(400)); // 800 bytes
/// assert!(long.truncated() && long.text().len() <= MAX_INTENT_BYTES);
/// let mut line = String::new();
/// let mut o = ObjectWriter::new(&mut line);
/// Intent::new("say \"hi\"\n").write(&mut o);
/// o.finish();
/// assert_eq!(line, r#"{"intent":"say \"hi\"\n"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Intent {
    text: Box<str>,
    truncated: bool,
}

impl Intent {
    /// `text`, cut to at most [`MAX_INTENT_BYTES`] at a character boundary.
    #[must_use]
    pub fn new(text: &str) -> Intent {
        let mut end = text.len().min(MAX_INTENT_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Intent {
            text: text[..end].into(),
            truncated: end < text.len(),
        }
    }

    /// The text kept.
    #[must_use]
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the stated text was longer than [`MAX_INTENT_BYTES`].
    #[must_use]
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// Writes `"intent":TEXT` and, when cut, `"intent_truncated":true` into an audit line.
    pub fn write(&self, o: &mut ObjectWriter<'_>) {
        o.str("intent", &self.text);
        if self.truncated {
            o.bool("intent_truncated", true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_is_cut_at_the_bound_on_a_character_boundary() {
        let exact = "a".repeat(MAX_INTENT_BYTES);
        assert!(!Intent::new(&exact).truncated());
        let over = format!("{exact}b");
        let i = Intent::new(&over);
        assert_eq!((i.text(), i.truncated()), (exact.as_str(), true));
        // A three-byte character straddling the bound is dropped whole.
        let straddle = format!("{}€", "a".repeat(MAX_INTENT_BYTES - 1));
        let i = Intent::new(&straddle);
        assert_eq!(i.text().len(), MAX_INTENT_BYTES - 1);
        assert!(i.truncated());
    }
}
