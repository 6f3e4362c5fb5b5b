//! `from_slice` (the token tape and its serde walk) against `serde_json::from_slice` on the
//! same bytes, into `serde_json::Value`: wherever both accept, the values are equal; an
//! accepted document is never lost between the validator's verdict and the walk (no
//! `Mismatch` for a `Value`, which holds anything except out-of-range numbers); and nothing
//! panics. The schema accepts everything, so the verdict is the scanner's; depth is held at
//! serde_json's 127.
#![no_main]
use jsongate::{from_slice, Limits, Schema, TypedError, Validator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let schema = Schema::compile(b"true").unwrap();
    let mut v = Validator::new(&schema);
    let ours = from_slice::<serde_json::Value>(&mut v, data, Limits::unlimited().max_depth(127));
    let theirs = serde_json::from_slice::<serde_json::Value>(data);
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{:?}", String::from_utf8_lossy(data)),
        (Ok(_), Err(e)) => panic!("jsongate accepted, serde_json refused ({e}): {data:?}"),
        // Out-of-range numbers: accepted by the scanner (exact text), refused by both walks.
        (Err(TypedError::Mismatch(m)), Err(_)) => {
            assert!(m.message().contains("out of range"), "{m}")
        }
        (Err(TypedError::Mismatch(m)), Ok(_)) => {
            panic!("an accepted document lost in the walk: {m}")
        }
        // Refusals: the strict profile refuses what serde_json accepts only for duplicate
        // names (the differential target pins that); either way nothing was built.
        (Err(TypedError::Rejected(_)), _) => {}
    }
});
