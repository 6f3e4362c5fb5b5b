//! Projection: pick the few values a contract exposes while the document streams.
//!
//! A [`Projection`] is a set of JSON Pointers, each mapped to an output name, compiled once
//! into a path trie (immutable, shareable). A [`Selector`] is the per-document runtime: a
//! [`Sink`] of scanner events that skips every subtree no pointer leads into by counting
//! brackets, and decodes and keeps only the values the pointers name. The values it keeps are
//! new [`Value`]s; the upstream document is never re-serialised and never materialised.
//!
//! This module sits above the validator and below the gate: it knows nothing of schemas,
//! contracts or envelopes. It owns projection only: the value it builds, the JSON writer and
//! [`Tee`](crate::json::Tee) (one event stream to a validator and a selector) live in [`crate::json`].

use std::sync::Arc;

use crate::scan::{Event, Flow, Sink};

use crate::json::{Value, ValueBuilder};

/// Why a set of pointers could not be compiled into a [`Projection`].
///
/// # Example
/// ```
/// use jsongate::select::{Projection, SelectErrorKind};
/// let e = Projection::new([("a", "x")]).unwrap_err();
/// assert_eq!((e.kind(), e.message()), (SelectErrorKind::InvalidPointer, "'x' is not a JSON Pointer"));
/// let e = Projection::new([("a", "/x"), ("a", "/y")]).unwrap_err();
/// assert_eq!((e.kind(), e.message()), (SelectErrorKind::DuplicateName, "output name 'a' is used twice"));
/// let e = Projection::new([("a", "/x"), ("b", "/x/y")]).unwrap_err();
/// assert_eq!((e.kind(), e.to_string().as_str()), (SelectErrorKind::Overlap, "pointers '/x' and '/x/y' overlap"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectError(Box<(SelectErrorKind, String)>);

kind_message_error!(SelectError, SelectErrorKind);

/// What was wrong with a set of pointers, as a [`SelectError`] says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SelectErrorKind {
    /// The pointer is not an RFC 6901 JSON Pointer (does not start with `/`, or has a `~`
    /// not followed by `0` or `1`).
    InvalidPointer,
    /// Two fields have the same output name.
    DuplicateName,
    /// One pointer lies inside (or equals) another; each upstream value feeds at most one
    /// output field.
    Overlap,
}

impl SelectError {
    fn invalid_pointer(p: &str) -> SelectError {
        SelectError::new(
            SelectErrorKind::InvalidPointer,
            format!("'{p}' is not a JSON Pointer"),
        )
    }

    fn duplicate_name(n: &str) -> SelectError {
        SelectError::new(
            SelectErrorKind::DuplicateName,
            format!("output name '{n}' is used twice"),
        )
    }

    fn overlap(a: &str, b: &str) -> SelectError {
        SelectError::new(
            SelectErrorKind::Overlap,
            format!("pointers '{a}' and '{b}' overlap"),
        )
    }
}

/// Splits an RFC 6901 pointer into unescaped reference tokens (`""` is the whole document).
pub(crate) fn parse_pointer(pointer: &str) -> Result<Vec<String>, SelectError> {
    crate::pointer::tokens(pointer).ok_or_else(|| SelectError::invalid_pointer(pointer))
}

use crate::pointer::array_index;

#[derive(Debug, Default)]
struct Node {
    /// Child tokens: the member name, and the array index it also names (if canonical).
    children: Vec<(String, Option<u64>, u32)>,
    /// The output field this node's value feeds.
    field: Option<u32>,
}

#[derive(Debug)]
struct Compiled {
    nodes: Vec<Node>,
    names: Vec<String>,
    pointers: Vec<String>,
}

/// A compiled set of `(output name, JSON Pointer)` pairs: a path trie, built once and shared
/// (cloning is cheap).
///
/// # Example
/// ```
/// use jsongate::{scan, Limits};
/// use jsongate::json::Value;
/// use jsongate::select::{Projection, Selector};
/// let p = Projection::new([("approved", "/review/approved"), ("id", "/items/1/id")]).unwrap();
/// let mut sel = Selector::new(&p);
/// let doc = br#"{"review":{"approved":true,"note":"x"},"items":[{"id":1},{"id":2}]}"#;
/// scan(doc, Limits::new(), &mut sel).unwrap();
/// assert_eq!(sel.value(0), Some(&Value::Bool(true)));
/// assert_eq!(sel.to_object().to_json(), r#"{"approved":true,"id":2}"#);
/// ```
#[derive(Clone, Debug)]
pub struct Projection(Arc<Compiled>);

impl Projection {
    /// Compiles `(output name, pointer)` pairs.
    ///
    /// # Errors
    /// An invalid pointer, a repeated output name, or two pointers of which one lies inside
    /// the other.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// let p = Projection::new([("id", "/result/id"), ("first", "/result/items/0")]).unwrap();
    /// assert_eq!(p.len(), 2);
    /// assert!(Projection::new([("id", "/result"), ("x", "/result/id")]).is_err());
    /// ```
    pub fn new<I, N, P>(fields: I) -> Result<Projection, SelectError>
    where
        I: IntoIterator<Item = (N, P)>,
        N: AsRef<str>,
        P: AsRef<str>,
    {
        let mut c = Compiled {
            nodes: vec![Node::default()],
            names: Vec::new(),
            pointers: Vec::new(),
        };
        for (name, pointer) in fields {
            let (name, pointer) = (name.as_ref(), pointer.as_ref());
            if c.names.iter().any(|n| n == name) {
                return Err(SelectError::duplicate_name(name));
            }
            let field = c.names.len() as u32;
            let mut at = 0usize;
            for token in parse_pointer(pointer)? {
                if let Some(f) = c.nodes[at].field {
                    return Err(overlap(&c, f, pointer));
                }
                let found = c.nodes[at].children.iter().find(|(t, ..)| *t == token);
                at = if let Some(&(_, _, child)) = found {
                    child as usize
                } else {
                    let child = c.nodes.len();
                    c.nodes.push(Node::default());
                    let index = array_index(&token);
                    c.nodes[at].children.push((token, index, child as u32));
                    child
                };
            }
            if let Some(f) = c.nodes[at].field {
                return Err(overlap(&c, f, pointer));
            }
            if !c.nodes[at].children.is_empty() {
                let inner = first_field_below(&c, at);
                return Err(SelectError::overlap(pointer, &c.pointers[inner as usize]));
            }
            c.nodes[at].field = Some(field);
            c.names.push(name.to_owned());
            c.pointers.push(pointer.to_owned());
        }
        Ok(Projection(Arc::new(c)))
    }

    /// Number of fields.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// assert_eq!(Projection::new([("a", "/a"), ("b", "/b")]).unwrap().len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        self.0.names.len()
    }

    /// Whether there are no fields.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// assert!(Projection::new(Vec::<(&str, &str)>::new()).unwrap().is_empty());
    /// assert!(!Projection::new([("a", "/a")]).unwrap().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.0.names.is_empty()
    }

    /// The output name of field `i`.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// let p = Projection::new([("id", "/x/id")]).unwrap();
    /// assert_eq!((p.name(0), p.pointer(0)), ("id", "/x/id"));
    /// ```
    pub fn name(&self, i: usize) -> &str {
        &self.0.names[i]
    }

    /// The pointer of field `i`.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// let p = Projection::new([("a", "/x~1y")]).unwrap();
    /// assert_eq!(p.pointer(0), "/x~1y"); // as given, escaped
    /// ```
    pub fn pointer(&self, i: usize) -> &str {
        &self.0.pointers[i]
    }

    /// The index of the field named `name`.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::Projection;
    /// let p = Projection::new([("a", "/a"), ("b", "/b")]).unwrap();
    /// assert_eq!((p.position("b"), p.position("c")), (Some(1), None));
    /// ```
    pub fn position(&self, name: &str) -> Option<usize> {
        self.0.names.iter().position(|n| n == name)
    }
}

fn overlap(c: &Compiled, field: u32, pointer: &str) -> SelectError {
    SelectError::overlap(&c.pointers[field as usize], pointer)
}

fn first_field_below(c: &Compiled, mut at: usize) -> u32 {
    loop {
        if let Some(f) = c.nodes[at].field {
            return f;
        }
        at = c.nodes[at].children[0].2 as usize;
    }
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    node: u32,
    is_array: bool,
    next_index: u64,
}

/// The per-document runtime of a [`Projection`]: a [`Sink`] that keeps only the selected
/// values. Reusable: [`reset`](Self::reset) keeps its buffers.
///
/// Untracked subtrees cost one bracket count per container event; names outside the trie
/// are compared, never copied. A selected value is decoded into a fresh [`Value`].
///
/// # Example
/// ```
/// use jsongate::json::Value;
/// use jsongate::select::{Projection, Selector};
/// use jsongate::{Limits, Scanner};
/// let p = Projection::new([("state", "/status/state")]).unwrap();
/// let mut sel = Selector::new(&p);
/// let mut scanner = Scanner::new(Limits::new());
/// for (doc, state) in [(&br#"{"status":{"state":"up"}}"#[..], "up"), (br#"{"status":{"state":"down"}}"#, "down")] {
///     sel.reset();
///     scanner.reset();
///     scanner.scan_slice(doc, &mut sel).unwrap();
///     assert_eq!(sel.get("state"), Some(&Value::String(state.into())));
/// }
/// ```
#[derive(Debug)]
pub struct Selector {
    projection: Projection,
    slots: Vec<Option<Value>>,
    stack: Vec<Frame>,
    /// Depth inside a subtree no pointer leads into (0 when not skipping).
    skip: u64,
    /// The trie node of the next value, set by a member name.
    pending: Option<u32>,
    capture: Option<(u32, ValueBuilder)>,
    started: bool,
}

impl Selector {
    /// A selector for `projection`.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::{Projection, Selector};
    /// let p = Projection::new([("a", "/a")]).unwrap();
    /// let sel = Selector::new(&p);
    /// assert_eq!(sel.value(0), None);
    /// ```
    pub fn new(projection: &Projection) -> Selector {
        Selector {
            projection: projection.clone(),
            slots: vec![None; projection.len()],
            stack: Vec::new(),
            skip: 0,
            pending: None,
            capture: None,
            started: false,
        }
    }

    /// Prepares for the next document.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::{Projection, Selector};
    /// use jsongate::{scan, Limits};
    /// let p = Projection::new([("a", "/a")]).unwrap();
    /// let mut sel = Selector::new(&p);
    /// scan(br#"{"a":1}"#, Limits::new(), &mut sel).unwrap();
    /// assert!(sel.value(0).is_some());
    /// sel.reset();
    /// assert!(sel.value(0).is_none());
    /// ```
    pub fn reset(&mut self) {
        self.slots.iter_mut().for_each(|s| *s = None);
        self.stack.clear();
        self.skip = 0;
        self.pending = None;
        self.capture = None;
        self.started = false;
    }

    /// The projection this selector runs.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::{Projection, Selector};
    /// let p = Projection::new([("a", "/a")]).unwrap();
    /// assert_eq!(Selector::new(&p).projection().name(0), "a");
    /// ```
    pub fn projection(&self) -> &Projection {
        &self.projection
    }

    /// The value selected for field `i`, if the document had one at its pointer.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// use jsongate::select::{Projection, Selector};
    /// use jsongate::{scan, Limits};
    /// let p = Projection::new([("a", "/a"), ("b", "/b")]).unwrap();
    /// let mut sel = Selector::new(&p);
    /// scan(br#"{"b":[1]}"#, Limits::new(), &mut sel).unwrap();
    /// assert_eq!(sel.value(0), None);
    /// assert_eq!(sel.value(1), Some(&Value::Array(vec![Value::Number("1".into())])));
    /// ```
    pub fn value(&self, i: usize) -> Option<&Value> {
        self.slots.get(i).and_then(Option::as_ref)
    }

    /// The value selected for the field named `name`.
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// use jsongate::select::{Projection, Selector};
    /// use jsongate::{scan, Limits};
    /// let p = Projection::new([("ok", "/review/approved")]).unwrap();
    /// let mut sel = Selector::new(&p);
    /// scan(br#"{"review":{"approved":false}}"#, Limits::new(), &mut sel).unwrap();
    /// assert_eq!(sel.get("ok"), Some(&Value::Bool(false)));
    /// ```
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.value(self.projection.position(name)?)
    }

    /// Takes the selected values, in field order (the selector is then empty).
    ///
    /// # Example
    /// ```
    /// use jsongate::json::Value;
    /// use jsongate::select::{Projection, Selector};
    /// use jsongate::{scan, Limits};
    /// let p = Projection::new([("a", "/a"), ("z", "/z")]).unwrap();
    /// let mut sel = Selector::new(&p);
    /// scan(br#"{"a":"x"}"#, Limits::new(), &mut sel).unwrap();
    /// assert_eq!(sel.take_values(), [Some(Value::String("x".into())), None]);
    /// assert_eq!(sel.value(0), None);
    /// ```
    pub fn take_values(&mut self) -> Vec<Option<Value>> {
        let n = self.slots.len();
        std::mem::replace(&mut self.slots, vec![None; n])
    }

    /// A new object of the selected fields, in field order, leaving out absent ones.
    ///
    /// # Example
    /// ```
    /// use jsongate::select::{Projection, Selector};
    /// use jsongate::{scan, Limits};
    /// let p = Projection::new([("id", "/meta/id"), ("gone", "/nope")]).unwrap();
    /// let mut sel = Selector::new(&p);
    /// scan(br#"{"meta":{"id":7,"secret":"s"}}"#, Limits::new(), &mut sel).unwrap();
    /// assert_eq!(sel.to_object().to_json(), r#"{"id":7}"#);
    /// ```
    pub fn to_object(&self) -> Value {
        Value::Object(
            self.slots
                .iter()
                .enumerate()
                .filter_map(|(i, v)| Some((self.projection.name(i).to_owned(), v.clone()?)))
                .collect(),
        )
    }

    fn child(&self, node: u32, name: Option<&str>, index: Option<u64>) -> Option<u32> {
        let n = &self.projection.0.nodes[node as usize];
        n.children
            .iter()
            .find(|(t, i, _)| match (name, index) {
                (Some(name), _) => t == name,
                (None, Some(index)) => *i == Some(index),
                (None, None) => false,
            })
            .map(|&(.., c)| c)
    }

    fn on_event(&mut self, event: &Event<'_>) {
        if self.skip > 0 {
            match event {
                Event::BeginObject | Event::BeginArray => self.skip += 1,
                Event::EndObject | Event::EndArray => self.skip -= 1,
                _ => {}
            }
            return;
        }
        if let Some((field, b)) = &mut self.capture {
            if b.push(event) {
                let field = *field as usize;
                self.slots[field] = b.take();
                self.capture = None;
            }
            return;
        }
        let node = match event {
            Event::Name(n) => {
                self.pending = match self.stack.last() {
                    Some(top) if !top.is_array => self.child(top.node, Some(n), None),
                    _ => None,
                };
                return;
            }
            Event::EndObject | Event::EndArray => {
                self.stack.pop();
                return;
            }
            _ => match self.stack.last_mut() {
                None if !self.started => {
                    self.started = true;
                    Some(0)
                }
                None => None,
                Some(top) if top.is_array => {
                    let (node, index) = (top.node, top.next_index);
                    top.next_index += 1;
                    self.child(node, None, Some(index))
                }
                Some(_) => self.pending.take(),
            },
        };
        let opens = matches!(event, Event::BeginObject | Event::BeginArray);
        match node {
            None if opens => self.skip = 1,
            None => {}
            Some(n) => {
                if let Some(field) = self.projection.0.nodes[n as usize].field {
                    let mut b = ValueBuilder::new();
                    if b.push(event) {
                        self.slots[field as usize] = b.take();
                    } else {
                        self.capture = Some((field, b));
                    }
                } else if opens {
                    self.stack.push(Frame {
                        node: n,
                        is_array: matches!(event, Event::BeginArray),
                        next_index: 0,
                    });
                }
            }
        }
    }
}

impl Sink for Selector {
    #[inline]
    fn event(&mut self, event: Event<'_>, _offset: u64) -> Flow {
        self.on_event(&event);
        Flow::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{scan, Limits};

    fn select(pairs: &[(&str, &str)], doc: &str) -> String {
        let p = Projection::new(pairs.iter().copied()).unwrap();
        let mut s = Selector::new(&p);
        scan(doc.as_bytes(), Limits::new(), &mut s).unwrap();
        s.to_object().to_json()
    }

    #[test]
    fn picks_nested_members_and_indices() {
        let doc = r#"{"a":{"b":[10,{"c":"x"}],"z":{"b":1}},"q":[[1],[2,3]]}"#;
        assert_eq!(
            select(&[("c", "/a/b/1/c"), ("q", "/q/1"), ("n", "/nope")], doc),
            r#"{"c":"x","q":[2,3]}"#
        );
    }

    #[test]
    fn whole_document_and_escaped_tokens() {
        assert_eq!(select(&[("all", "")], "[1,{}]"), r#"{"all":[1,{}]}"#);
        assert_eq!(
            select(&[("v", "/a~1b/~0")], r#"{"a/b":{"~":true}}"#),
            r#"{"v":true}"#
        );
    }

    #[test]
    fn index_tokens_match_members_too_but_not_leading_zeros() {
        assert_eq!(select(&[("v", "/0")], r#"{"0":1}"#), r#"{"v":1}"#);
        assert_eq!(select(&[("v", "/01")], "[1,2]"), "{}");
        assert_eq!(select(&[("v", "/1")], "[1,2]"), r#"{"v":2}"#);
    }

    #[test]
    fn type_mismatch_on_the_path_selects_nothing() {
        assert_eq!(select(&[("v", "/a/b")], r#"{"a":"b"}"#), "{}");
        assert_eq!(select(&[("v", "/a/0")], r#"{"a":{"x":[0]}}"#), "{}");
    }

    #[test]
    fn skipped_subtrees_do_not_confuse_positions() {
        let doc = r#"{"x":{"a":{"a":1}},"a":{"a":2}}"#;
        assert_eq!(select(&[("v", "/a/a")], doc), r#"{"v":2}"#);
    }

    #[test]
    fn rejects_overlaps_duplicates_and_bad_pointers() {
        assert_eq!(
            Projection::new([("a", "/a"), ("b", "/a/b")])
                .unwrap_err()
                .kind(),
            SelectErrorKind::Overlap
        );
        assert_eq!(
            Projection::new([("a", "/a/b"), ("b", "/a")])
                .unwrap_err()
                .kind(),
            SelectErrorKind::Overlap
        );
        assert_eq!(
            Projection::new([("a", "/a"), ("a", "/b")])
                .unwrap_err()
                .kind(),
            SelectErrorKind::DuplicateName
        );
        assert_eq!(
            Projection::new([("a", "a")]).unwrap_err().kind(),
            SelectErrorKind::InvalidPointer
        );
        assert_eq!(
            Projection::new([("a", "/~2")]).unwrap_err().kind(),
            SelectErrorKind::InvalidPointer
        );
    }

    #[test]
    fn reset_forgets_the_previous_document() {
        let p = Projection::new([("a", "/a")]).unwrap();
        let mut s = Selector::new(&p);
        scan(br#"{"a":1}"#, Limits::new(), &mut s).unwrap();
        s.reset();
        scan(br#"{"b":1}"#, Limits::new(), &mut s).unwrap();
        assert_eq!(s.to_object().to_json(), "{}");
    }

    #[test]
    fn value_round_trips_strings_with_escapes() {
        let v = Value::parse(br#"{"a\"b":"\u2028\u0001\\"}"#, Limits::new()).unwrap();
        assert_eq!(v.to_json(), r#"{"a\"b":"\u2028\u0001\\"}"#);
    }
}
