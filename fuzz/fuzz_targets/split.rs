//! Chunking must not matter: the document (the input after 2 bytes that pick the split point)
//! scanned in one piece and fed in two pieces gives the same events (with offsets), verdict,
//! error (kind, offset, line, column, pointer) and bytes read — under the default limits, under
//! tight ones (so limits are also crossed at chunk boundaries) and under the I-JSON profile.
#![no_main]
use jsongate::{Event, Flow, Limits, Scanner};
use libfuzzer_sys::fuzz_target;

/// Tight limits, so that limits are crossed at chunk boundaries too.
const TIGHT: Limits = Limits::new()
    .max_bytes(3000)
    .max_depth(24)
    .max_name_bytes(24)
    .max_string_bytes(64)
    .max_number_bytes(24)
    .max_members(16)
    .max_items(32);

fuzz_target!(|data: &[u8]| {
    let Some((head, doc)) = data.split_first_chunk::<2>() else {
        return;
    };
    let at = usize::from(u16::from_le_bytes(*head)) % (doc.len() + 1);
    for limits in [Limits::new(), TIGHT, TIGHT.i_json(true)] {
        let run = |split: Option<usize>| {
            let (mut s, mut events) = (Scanner::new(limits), Vec::new());
            let mut sink = |ev: Event<'_>, at: u64| {
                events.push(format!("{ev:?}@{at}"));
                Flow::Continue
            };
            let verdict = match split {
                None => s.scan_slice(doc, &mut sink),
                Some(at) => (s.feed(&doc[..at], &mut sink))
                    .and_then(|_| s.feed(&doc[at..], &mut sink))
                    .and_then(|_| s.finish(&mut sink)),
            };
            (verdict, s.bytes_read(), events)
        };
        assert_eq!(run(None), run(Some(at)), "split at {at}");
    }
});
