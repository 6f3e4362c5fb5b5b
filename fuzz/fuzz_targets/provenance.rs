//! Provenance: arbitrary bytes as a provenance record file (`decide --provenance`) and as the
//! text of a tool result. Checks: no panic; a record file that reads writes back records that
//! read again to as many values; every value the extractor finds in a result is found again
//! in a sink that holds just that value (its normalised form; a host inside a URL), and the
//! tracker that recorded the result knows its origin unless it saturated (fails closed).
#![no_main]
use jsongate::action::{values_of, Provenance, ValueKind};
use jsongate::json::Value;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = Provenance::from_records(data) {
        let again =
            Provenance::from_records(p.to_records().as_bytes()).expect("written records read");
        assert_eq!(again.len(), p.len());
    }
    let text = String::from_utf8_lossy(data);
    let found = values_of(&text);
    let mut tracked = Provenance::new();
    tracked.record("t", "1", &Value::String(text.clone().into_owned()));
    for (kind, v) in found {
        let sink = match kind {
            ValueKind::Host => format!("https://{v}/"),
            _ => v.clone(),
        };
        assert!(
            values_of(&sink).iter().any(|(_, w)| *w == v),
            "{kind} {v:?} from {text:?} is not found again in {sink:?}"
        );
        assert!(
            tracked.saturated() || tracked.origin_of(&v).is_some(),
            "{v:?}"
        );
    }
});
