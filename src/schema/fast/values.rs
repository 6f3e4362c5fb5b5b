//! `enum` and `const` on scalar values.
//!
//! Only scalar constants reach the specialised tier. Strings are compared by length and the
//! two key words of [`crate::scan::name_words`] (which identify a string of up to 16 bytes),
//! then byte for byte only when longer; a large `enum` is one table lookup. Budget units are
//! the general tier's: for an `enum`, one, plus one per 8 alternatives and per 16 bytes read
//! (per 64 bytes for a table); for each `const` of a node, one per 64 bytes read; a node that
//! is itself a constant costs nothing beyond its evaluation.

use super::kind;
use crate::scan::{name_words, Event, SHORT_NAME};
use crate::schema::decimal::Decimal;
use crate::schema::program::{Const, EnumTable, Keywords, NodeKind, Program, Scalar as Lookup};

/// A scalar constant (or, as a `const` beside others, a container one, which no scalar
/// equals).
#[derive(Debug)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    String(Key),
    Number(Decimal),
    Container,
}

/// A string constant with its key: length and the two words that, up to 16 bytes, hold every
/// byte.
#[derive(Debug)]
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

    /// The kinds of value that can equal it.
    pub(crate) fn kind(&self) -> u8 {
        match self {
            Scalar::Null => kind::NULL,
            Scalar::Bool(_) => kind::BOOL,
            Scalar::String(_) => kind::STRING,
            Scalar::Number(_) => kind::INT | kind::NUM,
            Scalar::Container => 0,
        }
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
#[derive(Debug)]
enum Enum {
    /// Many alternatives: one lookup.
    Table(Box<EnumTable>),
    /// Few alternatives, all strings: key compares.
    Strings(Box<[Key]>),
    /// Few alternatives of several kinds: each compared.
    Scan(Box<[Scalar]>),
}

/// The `enum` and `const` of one node (or the node that is itself a constant).
#[derive(Debug)]
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
    /// The record of `k`'s `enum` and `const`; `None` when it has neither.
    pub(crate) fn lower(p: &Program, k: &Keywords) -> Option<Values> {
        let scalar = |id: u32| match &p.nodes[id as usize].kind {
            NodeKind::Const(c) => Scalar::of(c),
            _ => None,
        };
        let enum_ = k.enum_.as_ref().map(|alts| {
            if let Some(t) = &k.enum_table {
                Enum::Table(t.clone())
            } else if let Some(strings) = &k.enum_strings {
                Enum::Strings(strings.iter().map(|s| Key::new(s)).collect())
            } else {
                Enum::Scan(alts.iter().filter_map(|&a| scalar(a)).collect())
            }
        });
        if enum_.is_none() && k.consts.is_empty() {
            return None;
        }
        Some(Values {
            enum_,
            alternatives: k.enum_.as_ref().map_or(0, |a| a.len() as u64),
            // A container constant stays, failing every scalar (as `propertyNames` may ask).
            consts: k
                .consts
                .iter()
                .map(|c| scalar(c.node).unwrap_or(Scalar::Container))
                .collect(),
            consts_cost: true,
        })
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

    /// Checks a scalar event (`num`: its exact value, when parsed), adding the units spent.
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
                    table_hit(t, ev, num)
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
                return Err("enum");
            }
        }
        for c in &*self.consts {
            if self.consts_cost {
                *units += text_cost(ev, 64);
            }
            if !c.matches(ev, num) {
                return Err("const");
            }
        }
        Ok(())
    }
}

impl Values {
    /// [`check`](Self::check) for a string value.
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
                    t.contains(Lookup::String(s))
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
                return Err("enum");
            }
        }
        for c in &*self.consts {
            if self.consts_cost {
                *units += s.len() as u64 / 64;
            }
            if !matches!(c, Scalar::String(k) if k.is(s, ab)) {
                return Err("const");
            }
        }
        Ok(())
    }
}

/// Whether a scalar event is in a large `enum`'s table.
fn table_hit(t: &EnumTable, ev: &Event<'_>, num: Option<&Decimal>) -> bool {
    match ev {
        Event::Null => t.contains(Lookup::Null),
        Event::Bool(b) => t.contains(Lookup::Bool(*b)),
        Event::String(s) => t.contains(Lookup::String(s)),
        Event::Number(n) => {
            let owned;
            let d = match num {
                Some(d) => Some(d),
                None => {
                    owned = Decimal::parse(n.as_str());
                    owned.as_ref()
                }
            };
            d.is_some_and(|d| t.contains(Lookup::Number(d)))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::Values;
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
        let v = Values::lower(p, k).unwrap();
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
}
