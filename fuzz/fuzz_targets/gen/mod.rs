//! Schemas and instances generated from fuzz bytes, shaped like the attacks on the engine:
//! `$ref` chains through `$defs`, wide in-place fan-out (`allOf`/`anyOf`/`oneOf` repeated many
//! times from one byte), dynamic anchors, `unevaluated*` over applicators, large `enum`s and
//! long arrays and objects. Every byte string is a valid input; the output is valid JSON.
#![allow(dead_code)]

use std::fmt::Write as _;

/// A cursor over the fuzz bytes (zeros once they run out).
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    pub fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }
    pub fn below(&mut self, n: usize) -> usize {
        usize::from(self.byte()) % n.max(1)
    }
    /// A count that is usually small and sometimes large (up to `max`).
    pub fn count(&mut self, max: usize) -> usize {
        match self.byte() {
            b @ 0..=200 => usize::from(b % 4),
            b => (usize::from(b - 200) * max / 55).min(max),
        }
    }
}

const DEFS: usize = 8;
/// Bound on the text one repetition produces, so the generator itself stays small.
const ROOM: usize = 64 * 1024;
const NAMES: [&str; 4] = ["a", "b", "ab", "x"];

fn list(b: &mut Bytes<'_>, depth: u32, out: &mut String) {
    let first = schema(b, depth);
    let n = (1 + b.count(300)).min(ROOM / first.len().max(1)).max(1);
    out.push('[');
    for i in 0..n {
        if i > 0 {
            out.push(',');
        }
        // Wide fan-out from one byte: the same subschema, repeated.
        out.push_str(&first);
    }
    out.push(']');
}

/// One subschema.
pub fn schema(b: &mut Bytes<'_>, depth: u32) -> String {
    if depth == 0 || b.0.is_empty() {
        return ["true", r#"{"type":"integer"}"#, r#"{"minLength":1}"#][b.below(3)].into();
    }
    let d = depth - 1;
    let mut s = String::new();
    match b.byte() % 20 {
        0 => s.push_str("true"),
        1 => s.push_str("false"),
        2 => write!(s, r##"{{"$ref":"#/$defs/d{}"}}"##, b.below(DEFS)).unwrap(),
        k @ 3..=5 => {
            s.push_str(["{\"allOf\":", "{\"anyOf\":", "{\"oneOf\":"][usize::from(k - 3)]);
            list(b, d, &mut s);
            s.push('}');
        }
        6 => write!(s, r#"{{"not":{}}}"#, schema(b, d)).unwrap(),
        7 => {
            let (i, t, e) = (schema(b, d), schema(b, d), schema(b, d));
            write!(s, r#"{{"if":{i},"then":{t},"else":{e}}}"#).unwrap();
        }
        8 => write!(s, r#"{{"items":{}}}"#, schema(b, d)).unwrap(),
        9 => {
            s.push_str("{\"prefixItems\":");
            list(b, d, &mut s);
            s.push('}');
        }
        10 => {
            let n = NAMES[b.below(4)];
            write!(
                s,
                r#"{{"properties":{{"{n}":{}}},"required":["{n}"]}}"#,
                schema(b, d)
            )
            .unwrap();
        }
        11 => write!(s, r#"{{"patternProperties":{{"^a|b$":{}}}}}"#, schema(b, d)).unwrap(),
        12 => write!(s, r#"{{"additionalProperties":{}}}"#, schema(b, d)).unwrap(),
        13 => write!(
            s,
            r#"{{"allOf":[{}],"unevaluatedProperties":false}}"#,
            schema(b, d)
        )
        .unwrap(),
        14 => write!(
            s,
            r#"{{"anyOf":[{}],"unevaluatedItems":{}}}"#,
            schema(b, d),
            schema(b, d)
        )
        .unwrap(),
        15 => {
            let n = 1 + b.count(2_000);
            let alts: Vec<String> = (0..n).map(|i| i.to_string()).collect();
            write!(s, r#"{{"enum":[{},"a",null]}}"#, alts.join(",")).unwrap();
        }
        16 => s.push_str(r#"{"const":{"a":[1,2.0,"x"]}}"#),
        17 => s.push_str(r#"{"pattern":"^(a|b)*c$","maxLength":64,"minimum":-5}"#),
        18 => s.push_str(r##"{"$dynamicRef":"#node"}"##),
        _ => write!(s, r#"{{"contains":{},"uniqueItems":true}}"#, schema(b, d)).unwrap(),
    }
    s
}

/// A whole schema document: `$defs` (referencing each other, so chains and cycles through
/// child values occur), a dynamic anchor and a root.
pub fn document(b: &mut Bytes<'_>) -> String {
    let depth = 1 + u32::from(b.byte() % 4);
    let defs: Vec<String> = (0..DEFS)
        .map(|i| format!(r#""d{i}":{}"#, schema(b, depth)))
        .collect();
    format!(
        r#"{{"$dynamicAnchor":"node","$defs":{{{}}},"allOf":[{}]}}"#,
        defs.join(","),
        schema(b, depth)
    )
}

/// An instance: nested arrays and objects, sometimes long.
pub fn instance(b: &mut Bytes<'_>, depth: u32, out: &mut String) {
    match (depth, b.byte() % 6) {
        (0, _) | (_, 0) => out.push_str(["1", "\"ac\"", "null", "2.5", "\"x\"", "-7"][b.below(6)]),
        (_, 1 | 2) => {
            let n = b.count(5_000);
            out.push('[');
            let mut item = String::new();
            instance(b, depth - 1, &mut item);
            let n = n.min(4 * ROOM / item.len().max(1));
            for i in 0..n {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&item);
            }
            out.push(']');
        }
        _ => {
            let n = b.count(2_000);
            out.push('{');
            for i in 0..n {
                if out.len() > 4 * ROOM {
                    break;
                }
                if i > 0 {
                    out.push(',');
                }
                let name = NAMES[i % 4];
                write!(out, r#""{name}{i}":"#).unwrap();
                instance(b, depth - 1, out);
            }
            out.push('}');
        }
    }
}
