//! The JSON writer: string literals ([`write_string`]) and objects and arrays written member
//! by member ([`ObjectWriter`], [`ArrayWriter`]) for the lines the crate emits (envelopes,
//! audit lines, records, messages), and for [`Value::write_json`](super::Value::write_json).
//! Every JSON string the crate writes goes through [`write_string`], so there is one escaping
//! rule; every object it writes by member goes through [`ObjectWriter`], so separators and
//! brackets are written in one place. The writers append to a `String` as they go (no
//! [`Value`](super::Value) is built), so a per-message line costs what writing its text
//! costs.

use std::fmt::Write as _;

use super::Value;

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

/// Writes one JSON object into a `String`, member by member, in the order given (compact:
/// no spaces). The object is opened by [`new`](Self::new) and closed by
/// [`finish`](Self::finish) or when the writer is dropped.
///
/// # Example
/// ```
/// use jsongate::json::{ObjectWriter, Value};
/// let mut out = String::new();
/// let mut o = ObjectWriter::new(&mut out);
/// o.str("tool", "t\"1").u64("bytes", 42).bool("ok", true).opt_str("reason", None);
/// let mut e = o.object("error");
/// e.str("code", "STALE");
/// e.finish();
/// o.array("ids").u64(1).str("x"); // closed when the temporary writer drops
/// o.value("data", &Value::Number("1.50".into())).raw("extra", "[1,2]");
/// o.finish();
/// assert_eq!(out, r#"{"tool":"t\"1","bytes":42,"ok":true,"reason":null,"error":{"code":"STALE"},"ids":[1,"x"],"data":1.50,"extra":[1,2]}"#);
/// ```
#[derive(Debug)]
pub struct ObjectWriter<'a> {
    out: &'a mut String,
    empty: bool,
    braces: bool,
}

impl<'a> ObjectWriter<'a> {
    /// Opens an object at the end of `out`.
    pub fn new(out: &'a mut String) -> ObjectWriter<'a> {
        out.push('{');
        ObjectWriter {
            out,
            empty: true,
            braces: true,
        }
    }

    /// Reopens the object `out` ends with, to append members: its closing `}` is taken off
    /// and put back when the writer closes. `None` if `out` does not end with `}`.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ObjectWriter;
    /// let mut record = String::from(r#"{"a":1}"#);
    /// ObjectWriter::reopen(&mut record).unwrap().u64("b", 2);
    /// assert_eq!(record, r#"{"a":1,"b":2}"#);
    /// assert!(ObjectWriter::reopen(&mut String::from("[]")).is_none());
    /// ```
    pub fn reopen(out: &'a mut String) -> Option<ObjectWriter<'a>> {
        if !out.ends_with('}') {
            return None;
        }
        out.pop();
        let empty = out.ends_with('{');
        Some(ObjectWriter {
            out,
            empty,
            braces: true,
        })
    }

    /// Writes members only, without the braces: text another object splices in with
    /// [`raw_members`](Self::raw_members) (an audit line's extra members).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ObjectWriter;
    /// let mut extra = String::new();
    /// ObjectWriter::members(&mut extra).str("a", "x").u64("b", 1);
    /// assert_eq!(extra, r#""a":"x","b":1"#);
    /// ```
    pub fn members(out: &'a mut String) -> ObjectWriter<'a> {
        ObjectWriter {
            out,
            empty: true,
            braces: false,
        }
    }

    /// Writes the separator and `name:`, and hands back the text for the member's value,
    /// which the caller must write (one JSON value).
    pub fn member(&mut self, name: &str) -> &mut String {
        if !std::mem::take(&mut self.empty) {
            self.out.push(',');
        }
        write_string(self.out, name);
        self.out.push(':');
        self.out
    }

    /// A string member.
    pub fn str(&mut self, name: &str, value: &str) -> &mut Self {
        let out = self.member(name);
        write_string(out, value);
        self
    }

    /// A string member, `null` for `None`.
    pub fn opt_str(&mut self, name: &str, value: Option<&str>) -> &mut Self {
        match value {
            Some(v) => self.str(name, v),
            None => self.null(name),
        }
    }

    /// An integer member.
    pub fn u64(&mut self, name: &str, value: u64) -> &mut Self {
        let out = self.member(name);
        // Writing to a String cannot fail.
        let _ = write!(out, "{value}");
        self
    }

    /// A signed integer member.
    pub fn i64(&mut self, name: &str, value: i64) -> &mut Self {
        let out = self.member(name);
        let _ = write!(out, "{value}");
        self
    }

    /// An integer member, `null` for `None`.
    pub fn opt_u64(&mut self, name: &str, value: Option<u64>) -> &mut Self {
        match value {
            Some(v) => self.u64(name, v),
            None => self.null(name),
        }
    }

    /// A `true`/`false` member.
    pub fn bool(&mut self, name: &str, value: bool) -> &mut Self {
        self.raw(name, if value { "true" } else { "false" })
    }

    /// A `null` member.
    pub fn null(&mut self, name: &str) -> &mut Self {
        self.raw(name, "null")
    }

    /// A member whose value is already JSON text (a number's exact text, a line written
    /// elsewhere); written as it is.
    pub fn raw(&mut self, name: &str, json: &str) -> &mut Self {
        self.member(name).push_str(json);
        self
    }

    /// A member holding `value`.
    pub fn value(&mut self, name: &str, value: &Value) -> &mut Self {
        value.write_json(self.member(name));
        self
    }

    /// Members already written as JSON text (`"a":1,"b":2`, without braces), spliced in
    /// as they are; nothing for an empty text.
    pub fn raw_members(&mut self, members: &str) -> &mut Self {
        if !members.is_empty() {
            if !std::mem::take(&mut self.empty) {
                self.out.push(',');
            }
            self.out.push_str(members);
        }
        self
    }

    /// An object member: its members go to the writer returned, which closes it.
    pub fn object(&mut self, name: &str) -> ObjectWriter<'_> {
        ObjectWriter::new(self.member(name))
    }

    /// An array member: its items go to the writer returned, which closes it.
    pub fn array(&mut self, name: &str) -> ArrayWriter<'_> {
        ArrayWriter::new(self.member(name))
    }

    /// Closes the object (as dropping the writer does).
    pub fn finish(self) {}
}

impl Drop for ObjectWriter<'_> {
    fn drop(&mut self) {
        if self.braces {
            self.out.push('}');
        }
    }
}

/// Writes one JSON array into a `String`, item by item (compact). Opened by
/// [`new`](Self::new), closed by [`finish`](Self::finish) or when dropped.
///
/// # Example
/// ```
/// use jsongate::json::ArrayWriter;
/// let mut out = String::new();
/// let mut a = ArrayWriter::new(&mut out);
/// a.str("a").u64(2).raw("null");
/// a.object().str("k", "v");
/// a.finish();
/// assert_eq!(out, r#"["a",2,null,{"k":"v"}]"#);
/// ```
#[derive(Debug)]
pub struct ArrayWriter<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> ArrayWriter<'a> {
    /// Opens an array at the end of `out`.
    pub fn new(out: &'a mut String) -> ArrayWriter<'a> {
        out.push('[');
        ArrayWriter { out, empty: true }
    }

    /// Writes the separator and hands back the text for the next item, which the caller
    /// must write (one JSON value).
    pub fn item(&mut self) -> &mut String {
        if !std::mem::take(&mut self.empty) {
            self.out.push(',');
        }
        self.out
    }

    /// A string item.
    pub fn str(&mut self, value: &str) -> &mut Self {
        write_string(self.item(), value);
        self
    }

    /// An integer item.
    pub fn u64(&mut self, value: u64) -> &mut Self {
        let _ = write!(self.item(), "{value}");
        self
    }

    /// An item that is already JSON text, written as it is.
    pub fn raw(&mut self, json: &str) -> &mut Self {
        self.item().push_str(json);
        self
    }

    /// An item holding `value`.
    pub fn value(&mut self, value: &Value) -> &mut Self {
        value.write_json(self.item());
        self
    }

    /// An object item: its members go to the writer returned, which closes it.
    pub fn object(&mut self) -> ObjectWriter<'_> {
        ObjectWriter::new(self.item())
    }

    /// Closes the array (as dropping the writer does).
    pub fn finish(self) {}
}

impl Drop for ArrayWriter<'_> {
    fn drop(&mut self) {
        self.out.push(']');
    }
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

    #[test]
    fn writers_close_what_they_open_and_separate_members() {
        let mut out = String::new();
        {
            let mut o = ObjectWriter::new(&mut out);
            o.raw_members("");
            o.raw_members(r#""a":1"#).i64("b", -2).opt_u64("c", None);
            o.object("d");
            o.array("e").object();
        }
        assert_eq!(out, r#"{"a":1,"b":-2,"c":null,"d":{},"e":[{}]}"#);
        let mut out = String::from("x");
        ArrayWriter::new(&mut out).value(&Value::Null).u64(0);
        ObjectWriter::new(&mut out)
            .raw_members(r#""z":0"#)
            .str("\n", "");
        assert_eq!(out, r#"x[null,0]{"z":0,"\n":""}"#);
    }
}
