//! The JSON writer: string literals for JSON text built by hand (envelopes, audit lines,
//! records, messages) and for [`Value::write_json`](super::Value::write_json). Every JSON
//! string the crate writes goes through [`write_string`], so there is one escaping rule.

use std::fmt::Write as _;

/// Appends `s` as a JSON string literal: `"` and `\` escaped, `\n`, `\r` and `\t` as such,
/// the other control characters (below U+0020) as `\u00XX`, and U+2028 and U+2029 as
/// `\u2028`/`\u2029` so the text is also safe to embed in JavaScript.
///
/// # Example
/// ```
/// let mut out = String::new();
/// jsongate::json::write_string(&mut out, "a\"b\\\n\u{1}\u{2028}é");
/// assert_eq!(out, r#""a\"b\\\n\u0001\u2028é""#);
/// ```
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let mut plain = 0;
    for (i, c) in s.char_indices() {
        let escape = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => "",
            _ => continue,
        };
        out.push_str(&s[plain..i]);
        plain = i + c.len_utf8();
        if escape.is_empty() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push_str(escape);
        }
    }
    out.push_str(&s[plain..]);
    out.push('"');
}

/// `s` as a JSON string literal, in a new `String` ([`write_string`]).
///
/// # Example
/// ```
/// assert_eq!(jsongate::json::quote("tab\there"), r#""tab\there""#);
/// ```
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_control_character_is_escaped_and_the_text_reads_back() {
        let all: String = (0u32..0x80)
            .chain([0x7f, 0x2028, 0x2029, 0xfffe, 0x1f600])
            .filter_map(char::from_u32)
            .collect();
        let text = quote(&all);
        assert!(text.bytes().all(|b| b >= 0x20), "{text}");
        assert!(!text.contains('\u{2028}') && !text.contains('\u{2029}'));
        let back = crate::json::Value::parse(text.as_bytes(), crate::Limits::new()).unwrap();
        assert_eq!(back.as_str(), Some(all.as_str()));
    }

    #[test]
    fn short_escapes_where_json_has_them() {
        assert_eq!(quote("\u{8}\u{c}\u{1f}"), r#""\u0008\u000c\u001f""#);
        assert_eq!(quote("\n\r\t\"\\/"), r#""\n\r\t\"\\/""#);
        assert_eq!(quote(""), r#""""#);
    }
}
