//! `type`: one bit set of JSON types that both validator tiers read, the compile step of
//! the keyword, the check of a value's first event against it, and what a failure expected.
//!
//! The same bits say what a schema's `type` allows and what kind of value an event begins:
//! [`NULL`], [`BOOLEAN`], [`OBJECT`], [`ARRAY`], [`STRING`], and two for numbers, which
//! split them in two classes: [`INTEGER`] (the integers) and [`NUMBER`] (every other
//! number). A schema's `number` is both bits, its `integer` the first; [`INTEGER_LITERAL`]
//! marks a draft-04 set, where only numbers written without a fraction or exponent are
//! integers. An instance number is classed by its value in the general tier ([`of`]: `1.0`
//! is an integer) and by how it is written in the specialised one ([`written`]), which then
//! leaves `1.0` under `"type":"integer"` to the general tier.

use super::Keyword;
use crate::json::Value;
use crate::scan::Event;
use crate::schema::decimal::Decimal;
use crate::schema::Draft;

pub(crate) const NULL: u8 = 1;
pub(crate) const BOOLEAN: u8 = 2;
pub(crate) const OBJECT: u8 = 4;
pub(crate) const ARRAY: u8 = 8;
pub(crate) const STRING: u8 = 16;
/// Numbers with a zero fractional part (`1`, `1.0`, `1e2`); for [`written`], numbers written
/// without a fraction or exponent.
pub(crate) const INTEGER: u8 = 32;
/// Numbers that are not [`INTEGER`]s.
pub(crate) const NUMBER: u8 = 64;
/// Beside [`INTEGER`] in a schema's set: only numbers written without a fraction or exponent
/// are integers (draft-04's definition, so `1.0` is not).
pub(crate) const INTEGER_LITERAL: u8 = 128;
/// Every scalar kind.
pub(crate) const SCALARS: u8 = NULL | BOOLEAN | STRING | INTEGER | NUMBER;
/// Every kind of value.
pub(crate) const ALL: u8 = SCALARS | OBJECT | ARRAY;

/// The `type` of the schema object `v` written in `draft` as a set; `None` when it has none.
/// `err` makes the error for a message.
pub(crate) fn compile<E>(
    v: &Value,
    draft: Draft,
    err: impl Fn(String) -> E,
) -> Result<Option<u8>, E> {
    let Some(t) = v.get(Keyword::Type.name()) else {
        return Ok(None);
    };
    let one = |s: &str| {
        Ok(match s {
            "null" => NULL,
            "boolean" => BOOLEAN,
            "object" => OBJECT,
            "array" => ARRAY,
            "number" => NUMBER | INTEGER,
            "string" => STRING,
            "integer" => INTEGER,
            other => return Err(err(format!("unknown type '{other}'"))),
        })
    };
    let mut set = match t {
        Value::String(s) => one(s)?,
        Value::Array(a) => {
            let mut set = 0;
            for x in a {
                set |= one(x
                    .as_str()
                    .ok_or_else(|| err("'type' entries must be strings".into()))?)?;
            }
            set
        }
        _ => return Err(err("'type' must be a string or an array".into())),
    };
    if draft == Draft::Draft4 {
        // Draft-04's integers are written without a fraction or exponent.
        set |= INTEGER_LITERAL;
    }
    Ok(Some(set))
}

/// The kind of value the event `ev` begins, a number classed by its value (`num`: its exact
/// value, when parsed already); 0 for an event that begins no value.
#[inline(always)]
pub(crate) fn of(ev: &Event<'_>, num: Option<&Decimal>) -> u8 {
    match ev {
        Event::Number(n) => {
            if n.is_integer() || num.is_some_and(Decimal::is_integer) {
                NUMBER | INTEGER
            } else {
                NUMBER
            }
        }
        _ => written(ev, ALL),
    }
}

/// The kind of value the event `ev` begins, for a node whose `type` passes `accept`: a
/// number is [`INTEGER`] unless `accept` tells the two classes apart (only `integer`
/// without `number` does) and it is written with a fraction or an exponent. Other checks
/// treat every number alike, so the text is not read for them.
#[inline(always)]
pub(crate) fn written(ev: &Event<'_>, accept: u8) -> u8 {
    match ev {
        Event::Null => NULL,
        Event::Bool(_) => BOOLEAN,
        Event::BeginObject => OBJECT,
        Event::BeginArray => ARRAY,
        Event::String(_) => STRING,
        Event::Number(n) => {
            if accept & NUMBER == 0 && !n.is_integer() {
                NUMBER
            } else {
                INTEGER
            }
        }
        Event::Name(_) | Event::EndObject | Event::EndArray => 0,
    }
}

/// The kinds of value [`written`] classes that pass the set `t` with no further reading.
#[inline]
pub(crate) const fn accept(t: u8) -> u8 {
    t & ALL
}

/// Whether the value the event `ev` begins passes the set `t` (`num`: its exact value, when
/// parsed already). A number under `integer` without `number` is read for its value unless
/// it is written as an integer; in draft-04, it must be.
#[inline(always)]
pub(crate) fn check(t: u8, ev: &Event<'_>, num: Option<&Decimal>) -> bool {
    match ev {
        Event::Number(n) if t & NUMBER == 0 => {
            t & INTEGER != 0
                && (n.is_integer()
                    || t & INTEGER_LITERAL == 0
                        && match num {
                            Some(d) => d.is_integer(),
                            None => Decimal::parse(n.as_str()).is_some_and(|d| d.is_integer()),
                        })
        }
        _ => t & of(ev, num) != 0,
    }
}

/// What a failure of the set `t` expected: `expected integer`, `expected string or null`.
pub(crate) fn expected(t: u8) -> String {
    let mut names = Vec::new();
    for (bit, name) in [
        (NULL, "null"),
        (BOOLEAN, "boolean"),
        (OBJECT, "object"),
        (ARRAY, "array"),
        (NUMBER, "number"),
        (STRING, "string"),
    ] {
        if t & bit != 0 {
            names.push(name);
        }
    }
    if t & INTEGER != 0 && t & NUMBER == 0 {
        names.push(if t & INTEGER_LITERAL != 0 {
            "integer (written without fraction or exponent)"
        } else {
            "integer"
        });
    }
    match names.split_last() {
        Some((last, [])) => format!("expected {last}"),
        Some((last, rest)) => format!("expected {} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::Number;

    fn set(schema: &str, draft: Draft) -> u8 {
        let v = Value::parse(schema.as_bytes(), crate::Limits::new()).unwrap();
        compile(&v, draft, |m| m).unwrap().unwrap()
    }

    #[test]
    fn numbers_are_classed_by_value_in_general_and_by_writing_when_asked() {
        let one = Number::parse("1.0").unwrap();
        let int = set(r#"{"type":"integer"}"#, Draft::Draft202012);
        let int4 = set(r#"{"type":"integer"}"#, Draft::Draft4);
        let num = set(r#"{"type":"number"}"#, Draft::Draft202012);
        assert!(check(int, &Event::Number(one), None));
        assert!(!check(int4, &Event::Number(one), None));
        assert!(check(num, &Event::Number(one), None));
        assert!(!check(
            int,
            &Event::Number(Number::parse("1.5").unwrap()),
            None
        ));
        // The specialised tier leaves `1.0` under `integer` to the general one…
        assert_eq!(written(&Event::Number(one), accept(int)) & accept(int), 0);
        // …and reads no number's text where every number passes.
        assert_eq!(written(&Event::Number(one), accept(num)), INTEGER);
        assert_eq!(accept(int4), INTEGER);
        let exact = Decimal::parse("1.0");
        assert_eq!(of(&Event::Number(one), exact.as_ref()), NUMBER | INTEGER);
        // Unparsed, only the writing is read (`check` parses where it matters).
        assert_eq!(of(&Event::Number(one), None), NUMBER);
        assert!(!check(
            set(r#"{"type":["string","null"]}"#, Draft::Draft7),
            &Event::Bool(true),
            None
        ));
    }

    #[test]
    fn type_errors_and_expected_texts() {
        let v = Value::parse(br#"{"type":"float"}"#, crate::Limits::new()).unwrap();
        assert_eq!(
            compile(&v, Draft::Draft7, |m| m).unwrap_err(),
            "unknown type 'float'"
        );
        let v = Value::parse(br#"{"type":[1]}"#, crate::Limits::new()).unwrap();
        assert_eq!(
            compile(&v, Draft::Draft7, |m| m).unwrap_err(),
            "'type' entries must be strings"
        );
        let v = Value::parse(br#"{"type":{}}"#, crate::Limits::new()).unwrap();
        assert_eq!(
            compile(&v, Draft::Draft7, |m| m).unwrap_err(),
            "'type' must be a string or an array"
        );
        assert_eq!(
            expected(set(r#"{"type":["string","null"]}"#, Draft::Draft7)),
            "expected null or string"
        );
        assert_eq!(
            expected(set(r#"{"type":"integer"}"#, Draft::Draft4)),
            "expected integer (written without fraction or exponent)"
        );
        assert_eq!(
            expected(set(r#"{"type":["integer","number"]}"#, Draft::Draft7)),
            "expected number"
        );
    }
}
