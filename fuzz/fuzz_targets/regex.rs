//! An ECMA-262 pattern, as untrusted text twice over: as a schema's `pattern` (compiled) and as
//! an instance string under `format: regex` (checked by the same parser with no nesting limit
//! and no tree). Neither may panic or hang; a pattern that compiles is valid syntax once its
//! Annex B identity escapes (`\&`, `\<`: escaped ASCII punctuation that is not a syntax
//! character, which a `pattern` accepts and the format does not) are written in the `u`
//! grammar, so the format must accept that; and a compiled pattern is run on a few strings
//! made from the input.
#![no_main]
use jsongate::json::quote;
use jsongate::{Limits, Schema, Validator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let pattern = String::from_utf8_lossy(data);
    let limits = Limits::new();
    let format = Schema::options()
        .format_assertion(true)
        .compile(br#"{"format":"regex"}"#)
        .expect("the format schema compiles");
    let instance = quote(&pattern);
    let strict = quote(&without_identity_escapes(&pattern));
    let valid_syntax = Validator::new(&format)
        .validate_slice(strict.as_bytes(), limits)
        .is_ok();
    let schema = format!(r#"{{"pattern":{instance}}}"#);
    let Ok(compiled) = Schema::compile(schema.as_bytes()) else {
        return;
    };
    assert!(
        valid_syntax,
        "compiles as a pattern but fails format: regex: {pattern:?}"
    );
    let mut v = Validator::new(&compiled);
    let half = pattern.chars().count() / 2;
    let tail: String = pattern.chars().skip(half).collect();
    for haystack in [
        pattern.as_ref(),
        tail.as_str(),
        "",
        "aaaaaaaaaaaaaaaaaaaaaaaaaaaa!",
    ] {
        // A search that runs out of its step budget is a typed rejection, not a hang.
        let _ = v.validate_slice(quote(haystack).as_bytes(), limits);
    }
});

/// `pattern` with each Annex B identity escape written in the `u` grammar: `\-` as `\x2d`
/// (a `-` in a class would make a range), any other escaped ASCII punctuation that is not a
/// syntax character or `/` as the character itself.
fn without_identity_escapes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('-') => out.push_str("\\x2d"),
            Some(p) if p.is_ascii_punctuation() && !"^$\\.*+?()[]{}|/".contains(p) => out.push(p),
            Some(p) => {
                out.push('\\');
                out.push(p);
            }
            None => out.push('\\'),
        }
    }
    out
}
