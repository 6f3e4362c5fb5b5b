//! Schema documents as small in-memory trees, read with jsongate's own scanner under limits.
//!
//! Only schemas (and other small configuration documents) are materialised; instance
//! documents never are. Building uses an explicit stack, never recursion, so a deep schema
//! cannot overflow the stack; depth is bounded by the limits it is read with.

use crate::scan::{Event, Flow, Scanner};
use crate::{Error, Limits};

/// A JSON value. Object members keep document order (duplicates are impossible: the scanner
/// rejects them).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Null,
    Bool(bool),
    /// A number's exact text.
    Number(Box<str>),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Value {
    /// Reads one JSON document.
    pub(crate) fn parse(bytes: &[u8], limits: Limits) -> Result<Value, Error> {
        let mut b = Builder::default();
        Scanner::new(limits).scan_slice(bytes, &mut |ev: Event<'_>, _| {
            b.event(ev);
            Flow::Continue
        })?;
        Ok(b.done.unwrap_or(Value::Null))
    }

    /// The member `key` of an object.
    pub(crate) fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_object(&self) -> Option<&[(String, Value)]> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// A non-negative integer (`5`, `5.0`, `5e0`), as `keyword: N` values are written.
    pub(crate) fn as_u64(&self) -> Option<u64> {
        let Value::Number(t) = self else { return None };
        if let Ok(v) = t.parse::<u64>() {
            return Some(v);
        }
        let f: f64 = t.parse().ok()?;
        // Exact integral values only; `u64::MAX as f64` is 2^64, out of range.
        (f >= 0.0 && f.fract() == 0.0 && f < 18_446_744_073_709_551_616.0).then_some(f as u64)
    }

    /// Follows one JSON Pointer reference token (already unescaped).
    pub(crate) fn child(&self, token: &str) -> Option<&Value> {
        match self {
            Value::Object(_) => self.get(token),
            Value::Array(a) => {
                if token.len() > 1 && token.starts_with('0') {
                    return None;
                }
                a.get(token.parse::<usize>().ok()?)
            }
            _ => None,
        }
    }

    /// The type name JSON Schema uses for this value (`integer` is not distinguished).
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

/// Builds a [`Value`] from events with an explicit stack.
#[derive(Default)]
struct Builder {
    stack: Vec<(Value, Option<String>)>,
    key: Option<String>,
    done: Option<Value>,
}

impl Builder {
    fn event(&mut self, ev: Event<'_>) {
        let v = match ev {
            Event::BeginObject | Event::BeginArray => {
                let c = if ev == Event::BeginObject {
                    Value::Object(Vec::new())
                } else {
                    Value::Array(Vec::new())
                };
                self.stack.push((c, self.key.take()));
                return;
            }
            Event::Name(n) => {
                self.key = Some(n.to_owned());
                return;
            }
            Event::EndObject | Event::EndArray => match self.stack.pop() {
                Some((v, key)) => {
                    self.key = key;
                    v
                }
                None => return,
            },
            Event::String(s) => Value::String(s.to_owned()),
            Event::Number(n) => Value::Number(n.as_str().into()),
            Event::Bool(b) => Value::Bool(b),
            Event::Null => Value::Null,
        };
        match self.stack.last_mut() {
            Some((Value::Object(m), _)) => m.push((self.key.take().unwrap_or_default(), v)),
            Some((Value::Array(a), _)) => a.push(v),
            _ => self.done = Some(v),
        }
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
    }

    #[test]
    fn integers_in_any_notation() {
        let n = |s: &str| Value::Number(s.into()).as_u64();
        assert_eq!(n("5"), Some(5));
        assert_eq!(n("5.0"), Some(5));
        assert_eq!(n("1e2"), Some(100));
        assert_eq!(n("1.5"), None);
        assert_eq!(n("-1"), None);
    }

    #[test]
    fn rejects_what_the_scanner_rejects() {
        assert!(Value::parse(br#"{"a":1,"a":2}"#, Limits::new()).is_err());
    }
}
