//! Screening, both stages: arbitrary bytes as a document (`screen`) and as one string
//! (`screen_str`, `screen_definition_str`, `learned_score`). Checks: no panic; every finding
//! spans whole characters of its string; a learned finding names at most `MAX_EVIDENCE`
//! short words and lies where stage 2 scored a window above the threshold; phrase and rule
//! findings name none.
#![no_main]
use jsongate::screen::{
    learned_score, screen, screen_definition_str, screen_str, LEARNED_PATTERN, MAX_EVIDENCE,
    MAX_EVIDENCE_LEN,
};
use jsongate::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = screen(data, Limits::new());
    let text = String::from_utf8_lossy(data);
    let mut found = Vec::new();
    screen_str(&text, "/t", false, 0, &mut found);
    for f in &found {
        assert!(
            f.offset + f.len <= text.len(),
            "{f:?} past the end of {text:?}"
        );
        assert!(
            text.is_char_boundary(f.offset) && text.is_char_boundary(f.offset + f.len),
            "{f:?} cuts a character of {text:?}"
        );
        if f.pattern == LEARNED_PATTERN {
            assert!(f.evidence.len() <= MAX_EVIDENCE, "{f:?}");
            assert!(
                f.evidence.iter().all(|e| e.len() <= MAX_EVIDENCE_LEN
                    && e.chars().all(|c| c == ' ' || c.is_alphabetic())),
                "{f:?}"
            );
            let s = learned_score(&text);
            assert!(s.best.is_some_and(|b| b > s.threshold), "{f:?} but {s:?}");
        } else {
            assert!(f.evidence.is_empty(), "{f:?}");
        }
    }
    let mut def = Vec::new();
    screen_definition_str(&text, "/d", false, &mut def);
});
