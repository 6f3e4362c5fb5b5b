//! The SSE parser of the Streamable HTTP transport with arbitrary bytes: the first byte is
//! the event bound, the next two choose split points. Checks: no panic; the same events
//! whatever the split (including a `\r\n` cut in two); no event holds more than the bound
//! plus one byte, and one that reaches it is marked over the limit.
#![no_main]
use jsongate::mcp::sse::{parse_all, SseParser};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let [max, a, b, input @ ..] = data else {
        return;
    };
    let max = usize::from(*max);
    let want = parse_all(input, max);
    let (i, j) = (
        usize::from(*a) % (input.len() + 1),
        usize::from(*b) % (input.len() + 1),
    );
    let (i, j) = (i.min(j), i.max(j));
    let mut got = Vec::new();
    let mut p = SseParser::new(max);
    for piece in [&input[..i], &input[i..j], &input[j..]] {
        p.feed(piece, &mut |e| got.push(e));
    }
    assert_eq!(got, want);
    assert!(want
        .iter()
        .all(|e| e.data.len() <= max + 1 && (e.data.len() <= max || e.over_limit)));
});
