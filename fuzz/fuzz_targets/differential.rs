//! Accept/reject must agree with `serde_json::from_slice::<Value>` wherever the strict profile
//! agrees with serde_json. Limits are lifted except depth: serde_json refuses nesting deeper than
//! 127, so jsongate gets `max_depth(127)`. The only legitimate differences:
//! - duplicate member names: serde_json keeps the last one, the strict profile (I-JSON)
//!   rejects them (`duplicate_name`);
//! - numbers whose magnitude overflows `f64`: jsongate hands numbers over as exact text of any
//!   size, serde_json's `Value` (without `arbitrary_precision`) rejects them as out of range.
//!   serde_json is built with `float_roundtrip`, so it rounds exactly as `Number::as_f64` does
//!   and both agree on which numbers overflow (`1.7976931348623158e308` is `f64::MAX`).
//!
//! Everything else (grammar, UTF-8, lone surrogates, control characters, BOM, depth) must agree.
#![no_main]
use jsongate::{ErrorKind, Event, Flow, Limits};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut huge_number = false;
    let gate = jsongate::scan(
        data,
        Limits::unlimited().max_depth(127),
        &mut |ev: Event<'_>, _| {
            huge_number |= matches!(ev, Event::Number(n) if n.as_f64().is_err());
            Flow::Continue
        },
    );
    let serde = serde_json::from_slice::<serde_json::Value>(data);
    match (&gate, &serde) {
        (Ok(_), Ok(_)) | (Err(_), Err(_)) => {}
        (Err(e), Ok(_)) if *e.kind() == ErrorKind::DuplicateName => {}
        (Ok(_), Err(_)) if huge_number => {}
        _ => panic!("jsongate {gate:?} vs serde_json {serde:?}"),
    }
});
