//! `enum` and `const`: the compiled constants ([`Const`]), the compile step of the two
//! keywords, the record of their scalar constants ([`Values`]) with the one check both
//! validator tiers call on a scalar, the first-event test of a constant ([`starts`]) that
//! the general tier's streaming comparison of container constants begins with, and what a
//! failure expected.
//!
//! A constant is a node of the program (a container constant's items and members are nodes
//! too, so the general tier can compare them as they stream by); node ids here are the
//! program's (`u32`). The record keeps only the scalar constants, so that a scalar value
//! is compared without following nodes: strings by length and the two key words of
//! [`crate::scan::name_words`] (which identify a string of up to 16 bytes), then byte for
//! byte only when longer; an `enum` of [`EnumTable::MIN_ALTERNATIVES`] or more is one table
//! lookup. Budget units: for an `enum`, one, plus one per 8 alternatives and per 16 bytes
//! read (per 64 bytes for a table); for each `const` of a node, one per 64 bytes read; a
//! node that is itself a constant costs nothing beyond its evaluation.

use std::fmt::Write as _;

use super::{cut, Keyword, MAX_CONSTANT_CHARS};
use crate::json::{write_string, Value};
use crate::scan::{name_words, Event, SHORT_NAME};
use crate::schema::decimal::Decimal;
use crate::schema::Draft;

/// A constant of the schema (`const`, an `enum` alternative, or an item or member of one).
#[derive(Debug)]
pub(crate) enum Const {
    Null,
    Bool(bool),
    Number(Decimal),
    String(Box<str>),
    /// The items' nodes.
    Array(Vec<u32>),
    /// Members sorted by name, with their values' nodes.
    Object(Vec<(Box<str>, u32)>),
}

/// Whether the first event of a value can still equal the constant `c` (for a scalar:
/// whether it does); `num` is the event's exact value, when parsed already.
pub(crate) fn starts(c: &Const, ev: &Event<'_>, num: Option<&Decimal>) -> bool {
    match (c, ev) {
        (Const::Null, Event::Null) => true,
        (Const::Bool(a), Event::Bool(b)) => a == b,
        (Const::String(a), Event::String(b)) => &**a == *b,
        (Const::Number(a), Event::Number(n)) => match num {
            Some(d) => a == d,
            None => Decimal::parse(n.as_str()).is_some_and(|d| &d == a),
        },
        (Const::Array(_), Event::BeginArray) | (Const::Object(_), Event::BeginObject) => true,
        _ => false,
    }
}

/// The `const` and `enum` of one schema object, each constant compiled to a node.
#[derive(Debug, Default)]
pub(crate) struct Compiled {
    /// The node of `const`.
    pub(crate) konst: Option<u32>,
    /// The nodes of `enum`'s alternatives, in order.
    pub(crate) alternatives: Option<Vec<u32>>,
}

/// Compiles the `const` (from draft-06) and `enum` of the schema object `v` written in
/// `draft`; `constant` compiles one constant to a node, `err` makes the error for a message.
pub(crate) fn compile<E>(
    v: &Value,
    draft: Draft,
    err: impl Fn(String) -> E,
    constant: &mut dyn FnMut(&Value) -> Result<u32, E>,
) -> Result<Compiled, E> {
    let mut out = Compiled::default();
    if let Some(c) = v.get(Keyword::Const.name()) {
        if Keyword::Const.in_draft(draft) {
            out.konst = Some(constant(c)?);
        }
    }
    if let Some(e) = v.get(Keyword::Enum.name()) {
        let a = e
            .as_array()
            .ok_or_else(|| err(format!("'{}' must be an array", Keyword::Enum.name())))?;
        let mut ids = Vec::with_capacity(a.len());
        for x in a {
            ids.push(constant(x)?);
        }
        out.alternatives = Some(ids);
    }
    Ok(out)
}

/// The scalar alternatives of an `enum` with many of them: a scalar is looked up here in
/// constant (strings, booleans, null) or logarithmic (numbers, exact decimals) time instead
/// of being compared with every alternative. Container alternatives are left out (no scalar
/// equals one).
#[derive(Clone, Debug, Default)]
pub(crate) struct EnumTable {
    strings: hashbrown::HashSet<Box<str>, foldhash::fast::FixedState>,
    /// Sorted, without duplicates.
    numbers: Vec<Decimal>,
    null: bool,
    truth: bool,
    falsity: bool,
}

impl EnumTable {
    /// Alternatives from which a table is built (fewer are scanned).
    pub(crate) const MIN_ALTERNATIVES: usize = 8;

    fn new<'a>(alternatives: impl Iterator<Item = &'a Const>) -> EnumTable {
        let mut t = EnumTable::default();
        for c in alternatives {
            match c {
                Const::Null => t.null = true,
                Const::Bool(true) => t.truth = true,
                Const::Bool(false) => t.falsity = true,
                Const::String(s) => {
                    t.strings.insert(s.clone());
                }
                Const::Number(d) => t.numbers.push(d.clone()),
                Const::Array(_) | Const::Object(_) => {}
            }
        }
        t.numbers.sort();
        t.numbers.dedup();
        t
    }

    /// Whether a scalar event is one of the alternatives (`num`: its exact value, when
    /// parsed already).
    fn contains(&self, ev: &Event<'_>, num: Option<&Decimal>) -> bool {
        match ev {
            Event::Null => self.null,
            Event::Bool(true) => self.truth,
            Event::Bool(false) => self.falsity,
            Event::String(s) => self.strings.contains(*s),
            Event::Number(n) => {
                let owned;
                let d = match num {
                    Some(d) => Some(d),
                    None => {
                        owned = Decimal::parse(n.as_str());
                        owned.as_ref()
                    }
                };
                d.is_some_and(|d| self.numbers.binary_search(d).is_ok())
            }
            _ => false,
        }
    }
}

/// A scalar constant (or, as a `const` beside others, a container one, which no scalar
/// equals).
#[derive(Clone, Debug)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    String(Key),
    Number(Decimal),
    Container,
}

/// A string constant with its key: length and the two words that, up to 16 bytes, hold every
/// byte.
#[derive(Clone, Debug)]
pub(crate) struct Key {
    len: usize,
    a: u64,
    b: u64,
    text: Box<str>,
}

impl Key {
    fn new(text: &str) -> Key {
        let (a, b) = name_words(text.as_bytes());
        Key {
            len: text.len(),
            a,
            b,
            text: text.into(),
        }
    }

    /// Whether `s` (whose key words are `ab`) is this string.
    #[inline(always)]
    fn is(&self, s: &str, ab: (u64, u64)) -> bool {
        self.len == s.len()
            && self.a == ab.0
            && self.b == ab.1
            && (s.len() <= SHORT_NAME || *self.text == *s)
    }
}

impl Scalar {
    /// The constant `c` when it is a scalar.
    pub(crate) fn of(c: &Const) -> Option<Scalar> {
        Some(match c {
            Const::Null => Scalar::Null,
            Const::Bool(b) => Scalar::Bool(*b),
            Const::String(s) => Scalar::String(Key::new(s)),
            Const::Number(d) => Scalar::Number(d.clone()),
            Const::Array(_) | Const::Object(_) => return None,
        })
    }

    /// Whether the scalar event `ev` equals it; `num` is the event's exact value, when
    /// parsed already.
    #[inline]
    fn matches(&self, ev: &Event<'_>, num: Option<&Decimal>) -> bool {
        match (self, ev) {
            (Scalar::Null, Event::Null) => true,
            (Scalar::Bool(a), Event::Bool(b)) => a == b,
            (Scalar::String(k), Event::String(s)) => k.is(s, name_words(s.as_bytes())),
            (Scalar::Number(a), Event::Number(n)) => match num {
                Some(d) => a == d,
                None => Decimal::parse(n.as_str()).is_some_and(|d| &d == a),
            },
            _ => false,
        }
    }
}

/// How an `enum` is searched.
#[derive(Clone, Debug)]
enum Enum {
    /// Many alternatives: one lookup.
    Table(Box<EnumTable>),
    /// Few alternatives, all strings: key compares.
    Strings(Box<[Key]>),
    /// Few alternatives of several kinds: each scalar one compared.
    Scan(Box<[Scalar]>),
}

/// The `enum` and `const` of one node (or the node that is itself a constant), for scalar
/// values.
#[derive(Clone, Debug)]
pub(crate) struct Values {
    enum_: Option<Enum>,
    /// Alternatives of the `enum` (its cost grows with them).
    alternatives: u64,
    consts: Box<[Scalar]>,
    /// Whether each constant costs units for the bytes it reads (a node's `const` keyword
    /// does; a node that is a constant does not).
    consts_cost: bool,
}

/// Units for reading a string event's text at `bytes_per_unit` (0 for other events).
#[inline(always)]
fn text_cost(ev: &Event<'_>, bytes_per_unit: u64) -> u64 {
    match ev {
        Event::String(s) => s.len() as u64 / bytes_per_unit,
        _ => 0,
    }
}

impl Values {
    /// The record of a node's `const` and `enum` (`node` finds a constant's node); `None`
    /// when it has neither.
    pub(crate) fn new<'a>(
        konst: Option<u32>,
        alternatives: Option<&[u32]>,
        node: impl Fn(u32) -> Option<&'a Const>,
    ) -> Option<Box<Values>> {
        let scalar = |id: u32| node(id).and_then(Scalar::of);
        let enum_ = alternatives.map(|alts| {
            if alts.len() >= EnumTable::MIN_ALTERNATIVES {
                return Enum::Table(Box::new(EnumTable::new(
                    alts.iter().filter_map(|&a| node(a)),
                )));
            }
            let strings: Option<Box<[Key]>> = alts
                .iter()
                .map(|&a| match node(a) {
                    Some(Const::String(s)) => Some(Key::new(s)),
                    _ => None,
                })
                .collect();
            match strings {
                Some(keys) => Enum::Strings(keys),
                None => Enum::Scan(alts.iter().filter_map(|&a| scalar(a)).collect()),
            }
        });
        if enum_.is_none() && konst.is_none() {
            return None;
        }
        Some(Box::new(Values {
            enum_,
            alternatives: alternatives.map_or(0, |a| a.len() as u64),
            // A container constant stays, failing every scalar (as `propertyNames` may ask).
            consts: konst
                .iter()
                .map(|&c| scalar(c).unwrap_or(Scalar::Container))
                .collect(),
            consts_cost: true,
        }))
    }

    /// The record of a node that is the constant `s`.
    pub(crate) fn constant(s: Scalar) -> Values {
        Values {
            enum_: None,
            alternatives: 0,
            consts: Box::new([s]),
            consts_cost: false,
        }
    }

    /// Checks a scalar event (`num`: its exact value, when parsed), adding the units spent;
    /// the keyword that fails, `enum` before `const`.
    #[inline]
    pub(crate) fn check(
        &self,
        ev: &Event<'_>,
        num: Option<&Decimal>,
        units: &mut u64,
    ) -> Result<(), &'static str> {
        if let Some(e) = &self.enum_ {
            let hit = match e {
                Enum::Table(t) => {
                    *units += 1 + text_cost(ev, 64);
                    t.contains(ev, num)
                }
                Enum::Strings(keys) => {
                    *units += 1 + self.alternatives / 8 + text_cost(ev, 16);
                    match ev {
                        Event::String(s) => {
                            let ab = name_words(s.as_bytes());
                            keys.iter().any(|k| k.is(s, ab))
                        }
                        _ => false,
                    }
                }
                Enum::Scan(alts) => {
                    *units += 1 + self.alternatives / 8 + text_cost(ev, 16);
                    alts.iter().any(|a| a.matches(ev, num))
                }
            };
            if !hit {
                return Err(Keyword::Enum.name());
            }
        }
        for c in &*self.consts {
            if self.consts_cost {
                *units += text_cost(ev, 64);
            }
            if !c.matches(ev, num) {
                return Err(Keyword::Const.name());
            }
        }
        Ok(())
    }

    /// [`check`](Self::check) for a string value, with its key words computed once.
    #[inline]
    pub(crate) fn check_string(&self, s: &str, units: &mut u64) -> Result<(), &'static str> {
        if self.enum_.is_none() && self.consts.is_empty() {
            return Ok(());
        }
        let ab = name_words(s.as_bytes());
        let cost16 = s.len() as u64 / 16;
        if let Some(e) = &self.enum_ {
            let hit = match e {
                Enum::Table(t) => {
                    *units += 1 + s.len() as u64 / 64;
                    t.strings.contains(s)
                }
                Enum::Strings(keys) => {
                    *units += 1 + self.alternatives / 8 + cost16;
                    keys.iter().any(|k| k.is(s, ab))
                }
                Enum::Scan(alts) => {
                    *units += 1 + self.alternatives / 8 + cost16;
                    alts.iter()
                        .any(|a| matches!(a, Scalar::String(k) if k.is(s, ab)))
                }
            };
            if !hit {
                return Err(Keyword::Enum.name());
            }
        }
        for c in &*self.consts {
            if self.consts_cost {
                *units += s.len() as u64 / 64;
            }
            if !matches!(c, Scalar::String(k) if k.is(s, ab)) {
                return Err(Keyword::Const.name());
            }
        }
        Ok(())
    }
}

/// Alternatives of an `enum` named in a message before the rest is only counted.
const MAX_ALTERNATIVES: usize = 8;

/// What a failure of `keyword` (`const` or `enum`) expected: `expected "a"`, `expected one
/// of 1, 2, … (9 in all)`; `None` for other keywords or when the node has no such keyword.
pub(crate) fn expected<'a>(
    keyword: Keyword,
    konst: Option<u32>,
    alternatives: Option<&[u32]>,
    node: &dyn Fn(u32) -> Option<&'a Const>,
) -> Option<String> {
    match keyword {
        Keyword::Const => konst.map(|c| format!("expected {}", constant(c, node))),
        Keyword::Enum => alternatives.map(|alts| {
            let mut s = String::from("expected one of ");
            for (i, &a) in alts.iter().take(MAX_ALTERNATIVES).enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&constant(a, node));
            }
            if alts.len() > MAX_ALTERNATIVES {
                let _ = write!(s, ", … ({} in all)", alts.len());
            }
            s
        }),
        _ => None,
    }
}

/// The constant at `id` as JSON text, cut to [`MAX_CONSTANT_CHARS`].
pub(crate) fn constant<'a>(id: u32, node: &dyn Fn(u32) -> Option<&'a Const>) -> String {
    let mut out = String::new();
    write_constant(id, node, &mut out, 0);
    cut(out)
}

fn write_constant<'a>(
    id: u32,
    node: &dyn Fn(u32) -> Option<&'a Const>,
    out: &mut String,
    depth: usize,
) {
    // Deep or long constants are cut anyway: stop writing once enough is there.
    if depth > 8 || out.len() > 4 * MAX_CONSTANT_CHARS {
        out.push('…');
        return;
    }
    let Some(c) = node(id) else {
        return;
    };
    match c {
        Const::Null => out.push_str("null"),
        Const::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Const::Number(d) => out.push_str(&d.plain()),
        Const::String(s) => write_string(out, s),
        Const::Array(items) => {
            out.push('[');
            for (i, &x) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_constant(x, node, out, depth + 1);
            }
            out.push(']');
        }
        Const::Object(members) => {
            out.push('{');
            for (i, (name, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, name);
                out.push(':');
                write_constant(*x, node, out, depth + 1);
            }
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::scan::{Event, Number};
    use crate::schema::decimal::Decimal;
    use crate::schema::program::NodeKind;
    use crate::Schema;

    fn check(schema: &str, ev: &Event<'_>) -> (Result<(), &'static str>, u64) {
        let s = Schema::compile(schema.as_bytes()).unwrap();
        let p = s.program();
        let NodeKind::Keywords(k) = &p.nodes[p.root as usize].kind else {
            panic!("{schema}")
        };
        let v = k.values.as_deref().unwrap();
        let num = match ev {
            Event::Number(n) => Decimal::parse(n.as_str()),
            _ => None,
        };
        let mut units = 0;
        let r = v.check(ev, num.as_ref(), &mut units);
        if let Event::String(s) = ev {
            let mut again = 0;
            assert_eq!(v.check_string(s, &mut again), r, "{schema}");
            assert_eq!(again, units, "{schema}");
        }
        (r, units)
    }

    #[test]
    fn string_enums_compare_keys_at_every_length() {
        for len in [0, 1, 3, 4, 8, 9, 16, 17, 40] {
            let a = "a".repeat(len);
            let mut b = a.clone();
            if len > 0 {
                b.replace_range(len / 2..len / 2 + 1, "b");
            }
            let schema = format!(r#"{{"enum":["{a}","z"]}}"#);
            assert_eq!(check(&schema, &Event::String(&a)).0, Ok(()), "{len}");
            if len > 0 {
                assert_eq!(check(&schema, &Event::String(&b)).0, Err("enum"), "{len}");
            }
        }
    }

    #[test]
    fn mixed_and_large_enums_and_consts() {
        let one = Number::parse("1.0").unwrap();
        assert_eq!(
            check(r#"{"enum":[1,"a",null]}"#, &Event::Number(one)).0,
            Ok(())
        );
        assert_eq!(
            check(r#"{"enum":[1,"a",null]}"#, &Event::Bool(true)).0,
            Err("enum")
        );
        let many = r#"{"enum":["a","b","c","d","e","f","g","h",1]}"#;
        assert_eq!(check(many, &Event::String("h")), (Ok(()), 1));
        assert_eq!(check(many, &Event::String("i")).0, Err("enum"));
        assert_eq!(
            check(many, &Event::Number(Number::parse("1e0").unwrap())).0,
            Ok(())
        );
        assert_eq!(check(many, &Event::Null).0, Err("enum"));
        assert_eq!(check(r#"{"const":"x"}"#, &Event::String("x")), (Ok(()), 0));
        assert_eq!(
            check(r#"{"const":"x"}"#, &Event::String("y")).0,
            Err("const")
        );
        assert_eq!(
            check(r#"{"enum":["x"],"const":"y"}"#, &Event::String("x")).0,
            Err("const")
        );
        assert_eq!(
            check(r#"{"const":[]}"#, &Event::String("x")).0,
            Err("const")
        );
        assert_eq!(check(r#"{"enum":[[],"x"]}"#, &Event::String("x")).0, Ok(()));
        assert_eq!(check(r#"{"enum":[{}]}"#, &Event::Null).0, Err("enum"));
    }

    #[test]
    fn the_expected_text_names_the_constants_and_counts_the_rest() {
        let s =
            Schema::compile(br#"{"enum":[1,2,3,4,5,6,7,8,9],"const":{"a":[true,null]}}"#).unwrap();
        let p = s.program();
        let NodeKind::Keywords(k) = &p.nodes[p.root as usize].kind else {
            panic!()
        };
        let node = |id: u32| match &p.nodes[id as usize].kind {
            NodeKind::Const(c) => Some(c),
            _ => None,
        };
        let konst = k.consts.first().map(|c| c.node);
        assert_eq!(
            super::expected(super::Keyword::Enum, konst, k.enum_.as_deref(), &node).unwrap(),
            "expected one of 1, 2, 3, 4, 5, 6, 7, 8, … (9 in all)"
        );
        assert_eq!(
            super::expected(super::Keyword::Const, konst, k.enum_.as_deref(), &node).unwrap(),
            r#"expected {"a":[true,null]}"#
        );
        assert_eq!(
            super::expected(super::Keyword::Type, konst, None, &node),
            None
        );
    }
}
