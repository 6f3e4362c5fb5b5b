//! Chunking must not matter: the document (the input after 2 bytes that pick the split point)
//! scanned in one piece and fed in two pieces gives the same events (with offsets), verdict,
//! error (kind, offset, line, column, pointer) and bytes read — under the default limits, under
//! tight ones (so limits are also crossed at chunk boundaries) and under the I-JSON profile.
//! A sink that does not read string text ([`Sink::wants_text`], so escaped strings are only
//! checked, not decoded) gets the same events apart from that text, verdict and bytes read.
#![no_main]
use jsongate::{Event, Flow, Limits, Scanner, Sink};
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
        let whole = run(None);
        assert_eq!(whole, run(Some(at)), "split at {at}");
        let mut s = Scanner::new(limits);
        let mut blind = Blind(Vec::new());
        let verdict = s.scan_slice(doc, &mut blind);
        let events: Vec<String> = whole.2.iter().map(|e| blank(e)).collect();
        assert_eq!(
            (verdict, s.bytes_read(), blind.0),
            (whole.0, whole.1, events)
        );
    }
});

/// Records events like the closure sinks above, with string values' text blanked, and does not
/// want string text.
struct Blind(Vec<String>);

impl Sink for Blind {
    fn event(&mut self, ev: Event<'_>, at: u64) -> Flow {
        let ev = match ev {
            Event::String(_) => Event::String(""),
            ev => ev,
        };
        self.0.push(format!("{ev:?}@{at}"));
        Flow::Continue
    }
    fn wants_text(&self) -> bool {
        false
    }
}

/// An event line of the closure sinks with a string value's text blanked.
fn blank(line: &str) -> String {
    match line.strip_prefix("String(") {
        Some(rest) => format!("String(\"\"){}", &rest[rest.rfind(')').unwrap() + 1..]),
        None => line.to_owned(),
    }
}
