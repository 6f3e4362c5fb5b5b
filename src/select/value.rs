//! A small owned JSON value for what the selector keeps, and a [`Sink`] that builds one from
//! scanner events.
//!
//! This is not a general document model: it holds the few values a contract exposes, the
//! agent's freshly built output, and small configuration documents (contracts). Numbers keep
//! their exact text; objects keep member order.

use std::fmt::{self, Write as _};

use crate::scan::{Event, Flow, Scanner, Sink};
use crate::{Error, Limits};

/// An owned JSON value. Numbers keep their exact text; objects keep their member order.
///
/// # Example
/// ```
/// use jsongate::{select::Value, Limits};
/// let v = Value::parse(br#"{"a":[1,"x\n"],"b":null}"#, Limits::new()).unwrap();
/// assert_eq!(v.pointer("/a/1").and_then(Value::as_str), Some("x\n"));
/// assert_eq!(v.to_json(), r#"{"a":[1,"x\n"],"b":null}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `null`
    Null,
    /// `true` or `false`
    Bool(bool),
    /// A number, as its exact JSON text.
    Number(String),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// An object, members in document order (names are unique: the scanner rejects
    /// duplicates).
    Object(Vec<(String, Value)>),
}

impl Value {
    /// Parses one complete document with the strict profile and `limits`.
    ///
    /// # Errors
    /// The scanner's first error (syntax, limit, duplicate name, encoding).
    pub fn parse(bytes: &[u8], limits: Limits) -> Result<Value, Error> {
        let mut b = ValueBuilder::new();
        Scanner::new(limits).scan_slice(bytes, &mut b)?;
        // A complete scan with a builder that never stops always yields a value.
        Ok(b.take().unwrap_or(Value::Null))
    }

    /// The member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at JSON Pointer `pointer` (RFC 6901), or `None`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        let tokens = super::parse_pointer(pointer).ok()?;
        let mut v = self;
        for t in &tokens {
            v = match v {
                Value::Object(_) => v.get(t)?,
                Value::Array(a) => a.get(super::array_index(t)? as usize)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// Removes the value at JSON Pointer `pointer` (a member from its object, an item from
    /// its array); returns whether there was one. The root cannot be removed.
    ///
    /// # Example
    /// ```
    /// use jsongate::{select::Value, Limits};
    /// let mut v = Value::parse(br#"{"a":{"b":1,"c":[1,2]}}"#, Limits::new()).unwrap();
    /// assert!(v.remove_pointer("/a/c/0"));
    /// assert!(v.remove_pointer("/a/b"));
    /// assert!(!v.remove_pointer("/x"));
    /// assert_eq!(v.to_json(), r#"{"a":{"c":[2]}}"#);
    /// ```
    pub fn remove_pointer(&mut self, pointer: &str) -> bool {
        let Ok(tokens) = super::parse_pointer(pointer) else {
            return false;
        };
        let Some((last, parents)) = tokens.split_last() else {
            return false;
        };
        let mut v = self;
        for t in parents {
            v = match v {
                Value::Object(m) => match m.iter_mut().find(|(k, _)| k == t) {
                    Some((_, x)) => x,
                    None => return false,
                },
                Value::Array(a) => {
                    match super::array_index(t).and_then(|i| a.get_mut(i as usize)) {
                        Some(x) => x,
                        None => return false,
                    }
                }
                _ => return false,
            };
        }
        match v {
            Value::Object(m) => match m.iter().position(|(k, _)| k == last) {
                Some(i) => {
                    m.remove(i);
                    true
                }
                None => false,
            },
            Value::Array(a) => match super::array_index(last).filter(|&i| (i as usize) < a.len()) {
                Some(i) => {
                    a.remove(i as usize);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number's exact text, if this is a number.
    pub fn as_number_text(&self) -> Option<&str> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The non-negative integer, if this is a number that is one and fits in `u64`.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number_text()?.parse().ok()
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// `"null"`, `"boolean"`, `"number"`, `"string"`, `"array"` or `"object"`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// Appends the compact JSON text of this value.
    pub fn write_json(&self, out: &mut String) {
        // An explicit stack: values built from scanner events may be as deep as the limits
        // allow, so no recursion here either.
        enum Step<'a> {
            Value(&'a Value),
            Text(&'static str),
            Name(&'a str),
        }
        let mut stack = vec![Step::Value(self)];
        while let Some(step) = stack.pop() {
            let v = match step {
                Step::Text(t) => {
                    out.push_str(t);
                    continue;
                }
                Step::Name(k) => {
                    write_json_string(out, k);
                    continue;
                }
                Step::Value(v) => v,
            };
            match v {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Number(n) => out.push_str(n),
                Value::String(s) => write_json_string(out, s),
                Value::Array(a) => {
                    out.push('[');
                    stack.push(Step::Text("]"));
                    for (i, x) in a.iter().enumerate().rev() {
                        stack.push(Step::Value(x));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(m) => {
                    out.push('{');
                    stack.push(Step::Text("}"));
                    for (i, (k, x)) in m.iter().enumerate().rev() {
                        stack.push(Step::Value(x));
                        stack.push(Step::Text(":"));
                        stack.push(Step::Name(k));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
            }
        }
    }

    /// The compact JSON text of this value.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        self.write_json(&mut s);
        s
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}

/// Appends `s` as a JSON string literal (control characters, `"` and `\` escaped; U+2028 and
/// U+2029 escaped too, so the text is also safe to embed in JavaScript).
pub fn write_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A [`Sink`] that builds one [`Value`] from the events of one value (a document or a
/// subtree), with an explicit stack.
#[derive(Debug, Default)]
pub struct ValueBuilder {
    stack: Vec<(Option<String>, Value)>,
    name: Option<String>,
    done: Option<Value>,
}

impl ValueBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a complete value has been built.
    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }

    /// Takes the built value (if complete) and makes the builder ready for the next one.
    pub fn take(&mut self) -> Option<Value> {
        self.stack.clear();
        self.name = None;
        self.done.take()
    }

    /// Handles one event; returns `true` when the value is complete.
    pub fn push(&mut self, event: &Event<'_>) -> bool {
        let v = match *event {
            Event::Name(n) => {
                self.name = Some(n.to_owned());
                return false;
            }
            Event::BeginObject => {
                self.stack
                    .push((self.name.take(), Value::Object(Vec::new())));
                return false;
            }
            Event::BeginArray => {
                self.stack
                    .push((self.name.take(), Value::Array(Vec::new())));
                return false;
            }
            Event::EndObject | Event::EndArray => match self.stack.pop() {
                Some((name, v)) => {
                    self.name = name;
                    v
                }
                None => return false,
            },
            Event::String(s) => Value::String(s.to_owned()),
            Event::Number(n) => Value::Number(n.as_str().to_owned()),
            Event::Bool(b) => Value::Bool(b),
            Event::Null => Value::Null,
        };
        match self.stack.last_mut() {
            None => {
                self.done = Some(v);
                true
            }
            Some((_, Value::Array(a))) => {
                a.push(v);
                false
            }
            Some((_, Value::Object(m))) => {
                m.push((self.name.take().unwrap_or_default(), v));
                false
            }
            Some(_) => false,
        }
    }
}

impl Sink for ValueBuilder {
    fn event(&mut self, event: Event<'_>, _offset: u64) -> Flow {
        self.push(&event);
        Flow::Continue
    }
}
