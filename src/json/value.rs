//! The crate's one owned JSON value, and a [`Sink`] that builds one from scanner events.
//!
//! This is not a general document model: it holds the few values a contract exposes, the
//! agent's freshly built output, schemas, and small configuration documents (contracts,
//! policies, lockfiles). Instance documents are never materialised. Numbers keep their exact
//! text; objects keep member order; building and writing use explicit stacks, never
//! recursion, so a value as deep as the limits allow cannot overflow the stack.

use std::fmt;

use super::write_string;
use crate::pointer::{array_index, tokens};
use crate::scan::{Event, Flow, Scanner, Sink};
use crate::{Error, Limits};

/// An owned JSON value. Numbers keep their exact text; objects keep their member order.
///
/// # Example
/// ```
/// use jsongate::{json::Value, Limits};
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
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, ErrorKind, Limits};
    /// let v = Value::parse(br#"{"n":1.50,"tags":["a"]}"#, Limits::new()).unwrap();
    /// assert_eq!(v.get("n"), Some(&Value::Number("1.50".into())));
    /// let err = Value::parse(br#"{"a":1,"a":2}"#, Limits::new()).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::DuplicateName);
    /// ```
    pub fn parse(bytes: &[u8], limits: Limits) -> Result<Value, Error> {
        let mut b = ValueBuilder::new();
        Scanner::new(limits).scan_slice(bytes, &mut b)?;
        // A complete scan with a builder that never stops always yields a value.
        Ok(b.take().unwrap_or(Value::Null))
    }

    /// The member `name` of an object.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(br#"{"id":"c-1"}"#, Limits::new()).unwrap();
    /// assert_eq!(v.get("id").and_then(Value::as_str), Some("c-1"));
    /// assert_eq!(v.get("missing"), None);
    /// assert_eq!(Value::Null.get("id"), None);
    /// ```
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at JSON Pointer `pointer` (RFC 6901), or `None`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(br#"{"a/b":[{"c":true}]}"#, Limits::new()).unwrap();
    /// assert_eq!(v.pointer("/a~1b/0/c"), Some(&Value::Bool(true)));
    /// assert_eq!(v.pointer(""), Some(&v));
    /// assert_eq!(v.pointer("/a~1b/01"), None); // not a canonical index
    /// ```
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        let mut v = self;
        for t in &tokens(pointer)? {
            v = v.child(t)?;
        }
        Some(v)
    }

    /// Follows one reference token (already unescaped): a member of an object, or the item
    /// of an array at a canonical decimal index (`"0"`, `"12"`; not `"01"` or `"+1"`).
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(br#"{"a":[true]}"#, Limits::new()).unwrap();
    /// assert_eq!(v.child("a").and_then(|a| a.child("0")), Some(&Value::Bool(true)));
    /// assert_eq!(v.child("a").and_then(|a| a.child("00")), None);
    /// ```
    pub fn child(&self, token: &str) -> Option<&Value> {
        match self {
            Value::Object(_) => self.get(token),
            Value::Array(a) => a.get(usize::try_from(array_index(token)?).ok()?),
            _ => None,
        }
    }

    /// Removes the value at JSON Pointer `pointer` (a member from its object, an item from
    /// its array); returns whether there was one. The root cannot be removed.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let mut v = Value::parse(br#"{"a":{"b":1,"c":[1,2]}}"#, Limits::new()).unwrap();
    /// assert!(v.remove_pointer("/a/c/0"));
    /// assert!(v.remove_pointer("/a/b"));
    /// assert!(!v.remove_pointer("/x"));
    /// assert_eq!(v.to_json(), r#"{"a":{"c":[2]}}"#);
    /// ```
    pub fn remove_pointer(&mut self, pointer: &str) -> bool {
        let Some(tokens) = tokens(pointer) else {
            return false;
        };
        let Some((last, parents)) = tokens.split_last() else {
            return false;
        };
        let Some(v) = self.walk_mut(parents) else {
            return false;
        };
        match v {
            Value::Object(m) => match m.iter().position(|(k, _)| k == last) {
                Some(i) => {
                    m.remove(i);
                    true
                }
                None => false,
            },
            Value::Array(a) => match array_index(last).filter(|&i| (i as usize) < a.len()) {
                Some(i) => {
                    a.remove(i as usize);
                    true
                }
                None => false,
            },
            _ => false,
        }
    }

    /// The value at JSON Pointer `pointer`, to change in place.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let mut v = Value::parse(br#"{"a":["x"]}"#, Limits::new()).unwrap();
    /// *v.pointer_mut("/a/0").unwrap() = Value::String("y".into());
    /// assert_eq!(v.to_json(), r#"{"a":["y"]}"#);
    /// assert!(v.pointer_mut("/a/1").is_none());
    /// ```
    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        self.walk_mut(&tokens(pointer)?)
    }

    fn walk_mut<T: AsRef<str>>(&mut self, path: &[T]) -> Option<&mut Value> {
        let mut v = self;
        for t in path {
            let t = t.as_ref();
            v = match v {
                Value::Object(m) => m.iter_mut().find(|(k, _)| k == t).map(|(_, x)| x)?,
                Value::Array(a) => a.get_mut(usize::try_from(array_index(t)?).ok()?)?,
                _ => return None,
            };
        }
        Some(v)
    }

    /// The string, if this is a string.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// assert_eq!(Value::String("x".into()).as_str(), Some("x"));
    /// assert_eq!(Value::Number("1".into()).as_str(), None);
    /// ```
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// assert_eq!(Value::Bool(false).as_bool(), Some(false));
    /// assert_eq!(Value::Null.as_bool(), None);
    /// ```
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number's exact text, if this is a number.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(b"[1.0e+3, 12345678901234567890123]", Limits::new()).unwrap();
    /// let texts: Vec<&str> = v.as_array().unwrap().iter().filter_map(Value::as_number_text).collect();
    /// assert_eq!(texts, ["1.0e+3", "12345678901234567890123"]); // exact, never rounded
    /// ```
    pub fn as_number_text(&self) -> Option<&str> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The non-negative integer, if this is a number written as one (digits only, no
    /// fraction or exponent) that fits in `u64`: how configuration files give counts.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// assert_eq!(Value::Number("42".into()).as_u64(), Some(42));
    /// assert_eq!(Value::Number("-1".into()).as_u64(), None);
    /// assert_eq!(Value::Number("4e1".into()).as_u64(), None);
    /// ```
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number_text()?.parse().ok()
    }

    /// The non-negative integer in any notation (`5`, `5.0`, `5e0`) that fits in `u64`: how
    /// JSON Schema reads `keyword: N` values.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// let n = |t: &str| Value::Number(t.into()).as_whole_u64();
    /// assert_eq!((n("5"), n("5.0"), n("1e2")), (Some(5), Some(5), Some(100)));
    /// assert_eq!((n("1.5"), n("-1")), (None, None));
    /// assert_eq!(Value::Number("5.0".into()).as_u64(), None);
    /// ```
    pub fn as_whole_u64(&self) -> Option<u64> {
        let t = self.as_number_text()?;
        if let Ok(v) = t.parse::<u64>() {
            return Some(v);
        }
        let f: f64 = t.parse().ok()?;
        // Exact integral values only; `u64::MAX as f64` is 2^64, out of range.
        (f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64)
    }

    /// The members, if this is an object.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(br#"{"b":1,"a":2}"#, Limits::new()).unwrap();
    /// let names: Vec<&str> = v.as_object().unwrap().iter().map(|(n, _)| n.as_str()).collect();
    /// assert_eq!(names, ["b", "a"]); // document order
    /// ```
    pub fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is an array.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(b"[null,true]", Limits::new()).unwrap();
    /// assert_eq!(v.as_array(), Some(&[Value::Null, Value::Bool(true)][..]));
    /// assert_eq!(Value::Null.as_array(), None);
    /// ```
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// `"null"`, `"boolean"`, `"number"`, `"string"`, `"array"` or `"object"`.
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(br#"[1,"s",{},[],null,false]"#, Limits::new()).unwrap();
    /// let names: Vec<&str> = v.as_array().unwrap().iter().map(Value::type_name).collect();
    /// assert_eq!(names, ["number", "string", "object", "array", "null", "boolean"]);
    /// ```
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
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// let mut out = String::from("data: ");
    /// Value::Object(vec![("n".into(), Value::Number("1".into()))]).write_json(&mut out);
    /// assert_eq!(out, r#"data: {"n":1}"#);
    /// ```
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
                    write_string(out, k);
                    continue;
                }
                Step::Value(v) => v,
            };
            match v {
                Value::Null => out.push_str("null"),
                Value::Bool(true) => out.push_str("true"),
                Value::Bool(false) => out.push_str("false"),
                Value::Number(n) => out.push_str(n),
                Value::String(s) => write_string(out, s),
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
    ///
    /// # Example
    /// ```
    /// use jsongate::{json::Value, Limits};
    /// let v = Value::parse(b"{ \"a\" : [ 1 , \"\\u0041\" ] }", Limits::new()).unwrap();
    /// assert_eq!(v.to_json(), r#"{"a":[1,"A"]}"#); // compact, escapes decoded
    /// ```
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

/// A [`Sink`] that builds one [`Value`] from the events of one value (a document or a
/// subtree), with an explicit stack.
///
/// # Example
/// ```
/// use jsongate::json::{Value, ValueBuilder};
/// use jsongate::{scan, Limits};
/// let mut b = ValueBuilder::new();
/// scan(br#"{"ok":true}"#, Limits::new(), &mut b).unwrap();
/// assert_eq!(b.take().unwrap().get("ok"), Some(&Value::Bool(true)));
/// ```
#[derive(Debug, Default)]
pub struct ValueBuilder {
    stack: Vec<(Option<String>, Value)>,
    name: Option<String>,
    done: Option<Value>,
}

impl ValueBuilder {
    /// An empty builder.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ValueBuilder;
    /// let b = ValueBuilder::new();
    /// assert!(!b.is_done());
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a complete value has been built.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::ValueBuilder;
    /// use jsongate::Event;
    /// let mut b = ValueBuilder::new();
    /// b.push(&Event::BeginArray);
    /// assert!(!b.is_done());
    /// b.push(&Event::EndArray);
    /// assert!(b.is_done());
    /// ```
    pub fn is_done(&self) -> bool {
        self.done.is_some()
    }

    /// Takes the built value (if complete) and makes the builder ready for the next one.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{Value, ValueBuilder};
    /// use jsongate::Event;
    /// let mut b = ValueBuilder::new();
    /// b.push(&Event::Null);
    /// assert_eq!(b.take(), Some(Value::Null));
    /// assert_eq!(b.take(), None); // ready for the next value
    /// ```
    pub fn take(&mut self) -> Option<Value> {
        self.stack.clear();
        self.name = None;
        self.done.take()
    }

    /// Handles one event; returns `true` when the value is complete.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::{Value, ValueBuilder};
    /// use jsongate::Event;
    /// let mut b = ValueBuilder::new();
    /// assert!(!b.push(&Event::BeginObject));
    /// assert!(!b.push(&Event::Name("a")));
    /// assert!(!b.push(&Event::Bool(true)));
    /// assert!(b.push(&Event::EndObject));
    /// assert_eq!(b.take().unwrap().to_json(), r#"{"a":true}"#);
    /// ```
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_documents_in_order() {
        let v = Value::parse(br#"{"b":[1,{"c":null}],"a":"x","t":true}"#, Limits::new()).unwrap();
        let m = v.as_object().unwrap();
        assert_eq!(m[0].0, "b");
        assert_eq!(v.get("a").unwrap().as_str(), Some("x"));
        let inner = v.get("b").unwrap().child("1").unwrap();
        assert_eq!(inner.get("c"), Some(&Value::Null));
        assert_eq!(v.get("t"), Some(&Value::Bool(true)));
        assert_eq!(v.pointer("/b/1/c"), Some(&Value::Null));
        assert_eq!(v.pointer("/b/01"), None);
        assert_eq!(v.pointer("b"), None);
    }

    #[test]
    fn numbers_keep_their_exact_text() {
        let text = b"[1.000,-0,1E400,123456789012345678901234567890]";
        let v = Value::parse(text, Limits::new()).unwrap();
        assert_eq!(v.to_json().as_bytes(), text);
        assert_eq!(v.child("2").and_then(Value::as_number_text), Some("1E400"));
    }

    #[test]
    fn rejects_what_the_scanner_rejects() {
        let e = Value::parse(br#"{"a":1,"\u0061":2}"#, Limits::new()).unwrap_err();
        assert_eq!(e.kind(), &crate::ErrorKind::DuplicateName);
        let e = Value::parse(b"[[[1]]]", Limits::new().max_depth(2)).unwrap_err();
        assert_eq!(e.kind(), &crate::ErrorKind::TooDeep { limit: 2 });
    }

    #[test]
    fn deep_values_build_and_write_without_recursion() {
        let depth = 20_000;
        let text = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        let v = Value::parse(text.as_bytes(), Limits::new().max_depth(depth as u64)).unwrap();
        assert_eq!(v.to_json(), text);
        // Dropping a deep value is the caller's stack: take it apart iteratively here.
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if let Value::Array(a) = x {
                stack.extend(a);
            }
        }
    }
}
