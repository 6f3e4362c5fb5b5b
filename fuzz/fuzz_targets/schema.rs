//! A schema and an instance, separated by the first NUL byte: compiling may fail, but never
//! panic; when it compiles, validating one-shot and fed in two pieces (at a point chosen by
//! the schema's length) must give the same verdict and the same violation.
#![no_main]
use jsongate::{Flow, Limits, Scanner, Schema, Validator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(nul) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (schema, doc) = (&data[..nul], &data[nul + 1..]);
    let Ok(schema) = Schema::options().eval_budget(100_000).compile(schema) else {
        return;
    };
    let limits = Limits::new().max_bytes(4096);
    let mut v = Validator::new(&schema).max_errors(1 + nul % 3);
    let whole = v.validate_slice(doc, limits);
    let at = nul % (doc.len() + 1);
    let (mut s, mut w) = (
        Scanner::new(limits),
        Validator::new(&schema).max_errors(1 + nul % 3),
    );
    let out = s.feed(&doc[..at], &mut w).and_then(|f| match f {
        Flow::Stop => Ok(Flow::Stop),
        Flow::Continue => s.feed(&doc[at..], &mut w),
    });
    let out = out.and_then(|_| s.finish(&mut w));
    assert_eq!(whole, w.verdict(&s, out), "split at {at}");
});
