//! The two validator tiers against each other. Schemas are generated from the fuzz bytes in
//! the keyword set the specialised tier runs (`properties`, `required`,
//! `additionalProperties`, `propertyNames`, `items`/`prefixItems`, counts, `type`, scalar
//! `enum`/`const`, bounds, lengths, `pattern`, `$ref` to `$defs`) with, now and then, a
//! keyword that sends the schema to the general tier; instances come from the same bytes,
//! built from the schema's names and constants. Whatever tier runs, the result of
//! `Tier::Auto` must equal `Tier::General`'s exactly (verdict, keyword, locations, pointer,
//! offset, line and column), one-shot and fed in two pieces.
#![no_main]
use std::fmt::Write as _;

use jsongate::{Flow, Limits, Scanner, Schema, Tier, Validator};
use libfuzzer_sys::fuzz_target;

#[path = "gen/mod.rs"]
mod gen;

use gen::Bytes;

const NAMES: [&str; 6] = ["kind", "id", "a", "b", "x~y", "é"];
const SCALARS: [&str; 13] = [
    "1", "-2", "2.5", "0", "\"a\"", "\"id\"", "\"\"", "true", "null", "1e2", "1.0", "\"v0\"",
    "\"v1\"",
];
const PATTERNS: [&str; 5] = ["^a", "^it-[0-9]{2}$", "b$", "^[a-z]*$", "x"];

fn schema(b: &mut Bytes<'_>, depth: u32, out: &mut String) {
    if depth == 0 || b.0.is_empty() {
        out.push_str(
            [
                "true",
                "false",
                r#"{"type":"integer"}"#,
                r#"{"maxLength":1}"#,
            ][b.below(4)],
        );
        return;
    }
    let mut parts: Vec<String> = Vec::new();
    for _ in 0..1 + b.below(4) {
        let mut p = String::new();
        match b.byte() % 23 {
            0 => {
                let t = [
                    "object", "array", "string", "integer", "number", "boolean", "null",
                ];
                write!(p, r#""type":"{}""#, t[b.below(t.len())]).unwrap();
            }
            1 => p.push_str(r#""type":["string","null"]"#),
            2 | 3 => {
                p.push_str(r#""properties":{"#);
                for i in 0..1 + b.below(3) {
                    if i > 0 {
                        p.push(',');
                    }
                    write!(p, r#""{}":"#, NAMES[b.below(NAMES.len())]).unwrap();
                    schema(b, depth - 1, &mut p);
                }
                p.push('}');
            }
            4 => {
                p.push_str(r#""required":["#);
                for i in 0..1 + b.below(3) {
                    if i > 0 {
                        p.push(',');
                    }
                    write!(p, r#""{}""#, NAMES[b.below(NAMES.len())]).unwrap();
                }
                p.push(']');
            }
            5 => {
                p.push_str(r#""additionalProperties":"#);
                schema(b, depth - 1, &mut p);
            }
            6 => {
                p.push_str(r#""items":"#);
                schema(b, depth - 1, &mut p);
            }
            7 => {
                p.push_str(r#""prefixItems":["#);
                schema(b, depth - 1, &mut p);
                p.push(']');
            }
            8 => write!(p, r#""maxItems":{}"#, b.below(3)).unwrap(),
            9 => write!(p, r#""minItems":{}"#, b.below(3)).unwrap(),
            10 => write!(p, r#""maxProperties":{}"#, b.below(3)).unwrap(),
            11 => write!(p, r#""minProperties":{}"#, b.below(3)).unwrap(),
            12 => {
                p.push_str(r#""enum":["#);
                for i in 0..1 + b.below(9) {
                    if i > 0 {
                        p.push(',');
                    }
                    p.push_str(SCALARS[b.below(SCALARS.len())]);
                }
                p.push(']');
            }
            13 => write!(p, r#""const":{}"#, SCALARS[b.below(SCALARS.len())]).unwrap(),
            14 => write!(p, r#""minimum":{}"#, ["0", "1", "-1.5", "100"][b.below(4)]).unwrap(),
            15 => write!(p, r#""exclusiveMaximum":{}"#, ["0", "2", "2.5"][b.below(3)]).unwrap(),
            16 => write!(p, r#""multipleOf":{}"#, ["2", "0.5"][b.below(2)]).unwrap(),
            17 => write!(
                p,
                r#""minLength":{},"maxLength":{}"#,
                b.below(2),
                1 + b.below(3)
            )
            .unwrap(),
            18 => write!(p, r#""pattern":"{}""#, PATTERNS[b.below(PATTERNS.len())]).unwrap(),
            19 => {
                p.push_str(r#""propertyNames":"#);
                schema(b, depth - 1, &mut p);
            }
            20 => write!(p, r##""$ref":"#/$defs/d{}""##, b.below(2)).unwrap(),
            21 => {
                // `uniqueItems` over items that are scalars (the specialised tier hashes them).
                let items = [
                    r#"{"type":"number"}"#,
                    r#"{"enum":[1,"a",1.0,2,true]}"#,
                    r#"{"type":["string","integer"]}"#,
                ];
                write!(
                    p,
                    r#""uniqueItems":true,"items":{}"#,
                    items[b.below(items.len())]
                )
                .unwrap();
            }
            // Now and then a keyword only the general tier runs.
            _ => {
                let g = [
                    r#""uniqueItems":true"#,
                    r#""anyOf":[true,{"type":"string"}]"#,
                    r#""contains":{"const":1}"#,
                ];
                p.push_str(g[b.below(g.len())]);
            }
        }
        parts.push(p);
    }
    write!(out, "{{{}}}", parts.join(",")).unwrap();
}

fn instance(b: &mut Bytes<'_>, depth: u32, out: &mut String) {
    match (depth, b.byte() % 5) {
        (0, _) | (_, 0 | 1) => out.push_str(SCALARS[b.below(SCALARS.len())]),
        (_, 2) => {
            out.push('[');
            for i in 0..b.below(4) {
                if i > 0 {
                    out.push(',');
                }
                instance(b, depth - 1, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..b.below(5) {
                if i > 0 {
                    out.push(',');
                }
                write!(out, r#""{}":"#, NAMES[b.below(NAMES.len())]).unwrap();
                instance(b, depth - 1, out);
            }
            out.push('}');
        }
    }
}

fn run(
    v: &mut Validator,
    doc: &[u8],
    at: usize,
    limits: Limits,
) -> Result<(), jsongate::Rejection> {
    let mut s = Scanner::new(limits);
    v.reset();
    let out = s.feed(&doc[..at], v).and_then(|f| match f {
        Flow::Stop => Ok(Flow::Stop),
        Flow::Continue => s.feed(&doc[at..], v),
    });
    let out = out.and_then(|_| s.finish(v));
    v.verdict(&s, out)
}

fuzz_target!(|data: &[u8]| {
    let mut b = Bytes(data);
    let mut text = String::new();
    let depth = 1 + u32::from(b.byte() % 4);
    schema(&mut b, depth, &mut text);
    let mut defs = Vec::new();
    for i in 0..2 {
        let mut d = String::new();
        schema(&mut b, depth.saturating_sub(1), &mut d);
        defs.push(format!(r#""d{i}":{d}"#));
    }
    let defs = defs.join(",");
    let dispatch = b.byte() % 3 == 0;
    if dispatch {
        // A root `oneOf`/`anyOf` of objects told apart by `kind` (the dispatched shape, or
        // a near miss of it when a branch's extra keywords break the conditions).
        let mut branches = Vec::new();
        for i in 0..2 + b.below(2) {
            let mut extra = String::new();
            schema(&mut b, depth, &mut extra);
            let extra = extra
                .strip_prefix('{')
                .and_then(|e| e.strip_suffix('}'))
                .unwrap_or("");
            let pin = [
                r#"{"const":"v@"}"#,
                r#"{"enum":["v@",7]}"#,
                r#"{"type":"string","const":"v@"}"#,
            ][b.below(3)]
            .replace('@', &i.to_string());
            let sep = if extra.is_empty() { "" } else { "," };
            branches.push(format!(
                r#"{{"type":"object","required":["kind"],"properties":{{"kind":{pin}}}{sep}{extra}}}"#
            ));
        }
        let word = ["oneOf", "anyOf"][b.below(2)];
        text = format!(
            r#"{{"{word}":[{}],"$defs":{{{defs}}}}}"#,
            branches.join(",")
        );
    }
    let text = match text.strip_suffix('}') {
        _ if dispatch => text.clone(),
        Some(body) if body.len() > 1 => format!(r#"{body},"$defs":{{{defs}}}}}"#),
        _ => format!(r#"{{"items":{text},"$defs":{{{defs}}}}}"#),
    };
    let Ok(compiled) = Schema::compile(text.as_bytes()) else {
        return;
    };
    let mut doc = String::new();
    instance(&mut b, 4, &mut doc);
    let limits = Limits::new().max_bytes(64 * 1024);
    let mut auto = Validator::new(&compiled);
    let mut general = Validator::new(&compiled).tier(Tier::General);
    let a = auto.validate_slice(doc.as_bytes(), limits);
    let g = general.validate_slice(doc.as_bytes(), limits);
    assert_eq!(
        a,
        g,
        "schema {text}\ninstance {doc}\nspecialised: {}",
        auto.specialised()
    );
    let at = b.below(doc.len() + 1);
    assert_eq!(
        run(&mut auto, doc.as_bytes(), at, limits),
        g,
        "split at {at}: {text} / {doc}"
    );
});
