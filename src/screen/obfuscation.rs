//! Obfuscation folding for text that is read by a model but written to evade a matcher: tool
//! definitions (names, descriptions, schema members). It owns the *variants* of one string
//! that definition screening matches besides the string itself:
//!
//! - **folded**: letters that look like ASCII letters (UTS #39 confusable skeletons of the
//!   non-ASCII characters, through `unicode-security`: Cyrillic `а`, Greek `ο`, mathematical
//!   bold `𝐢`) become those letters; digits and `@`/`$` inside words that also hold letters
//!   fold as leetspeak (`1gn0r3` → `ignore`);
//! - **split**: the folded text with identifiers split at `_`, `-` and camelCase
//!   (`ignoreAllPrevious_instructions` → `ignore all previous instructions`). Tool and member
//!   names such as `drop_table` or `deleteAllFiles` are ordinary, so tool-request findings of
//!   this variant do not count (see `screen_definition_str`);
//! - **joined**: letters spaced out one by one (`i g n o r e  a l l`) joined into words, a run
//!   of two or more spaces (or a `/`) separating the words;
//! - **decoded**: runs of base64 (standard or URL-safe, at least [`MIN_BASE64`] characters)
//!   or hex (at least [`MIN_HEX`] digits) that decode to printable UTF-8 text, at most
//!   [`MAX_DECODED`] runs and [`MAX_DECODED_BYTES`] bytes per string.
//!
//! Only variants that differ from the string are returned. Result screening does not use
//! them (its throughput and its benign text matter more there); definitions are small and
//! listed once per session.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// Shortest base64 run decoded (characters).
pub const MIN_BASE64: usize = 16;
/// Shortest hex run decoded (digits).
pub const MIN_HEX: usize = 16;
/// Most encoded runs decoded per string.
pub const MAX_DECODED: usize = 4;
/// Most bytes decoded per string, all runs together.
pub const MAX_DECODED_BYTES: usize = 4096;

/// What produced a variant (see the module header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Variant {
    Folded,
    Split,
    Joined,
    Decoded,
}

/// The variants of `s` worth matching besides `s` itself, each with what produced it.
pub(super) fn variants(s: &str) -> Vec<(String, Variant)> {
    let mut out: Vec<(String, Variant)> = Vec::new();
    let push = |v: String, how: Variant, out: &mut Vec<(String, Variant)>| {
        if v != s && !out.iter().any(|(x, _)| *x == v) {
            out.push((v, how));
        }
    };
    let folded = fold(s, false);
    push(folded.clone(), Variant::Folded, &mut out);
    push(fold(s, true), Variant::Split, &mut out);
    if let Some(j) = join_spaced(&folded) {
        push(j, Variant::Joined, &mut out);
    }
    for d in decoded(s) {
        let f = fold(&d, false);
        push(d, Variant::Decoded, &mut out);
        push(f, Variant::Decoded, &mut out);
    }
    out
}

/// Confusables and leetspeak, and with `split` identifier splitting (see the module header).
fn fold(s: &str, split: bool) -> String {
    let mut skel = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_ascii() {
            skel.push(c);
            continue;
        }
        let k: String = unicode_security::confusable_detection::skeleton(&c.to_string()).collect();
        match k.as_str() {
            // The skeleton of `m`-like letters is `rn`; the letter is what the reader sees.
            "rn" => skel.push('m'),
            k if k.is_ascii() && !k.is_empty() && k.len() <= 2 => skel.push_str(k),
            _ => skel.push(c),
        }
    }
    let mut out = String::with_capacity(skel.len() + 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let letters = word.chars().any(char::is_alphabetic);
        let leet = letters
            && word
                .chars()
                .any(|c| c.is_ascii_digit() || c == '@' || c == '$');
        let mut prev: Option<char> = None;
        for c in word.chars() {
            let c = if leet { leet_letter(c) } else { c };
            if split && (c == '_' || c == '-') {
                out.push(' ');
                prev = None;
                continue;
            }
            if split && c.is_uppercase() && prev.is_some_and(char::is_lowercase) {
                out.push(' ');
            }
            out.push(c);
            prev = Some(c);
        }
        word.clear();
    };
    for c in skel.chars() {
        if c.is_alphanumeric() || matches!(c, '_' | '-' | '@' | '$') {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

fn leet_letter(c: char) -> char {
    match c {
        '0' => 'o',
        '1' => 'i',
        '3' => 'e',
        '4' | '@' => 'a',
        '5' | '$' => 's',
        '7' => 't',
        _ => c,
    }
}

/// Letters spaced out one by one joined into words; `None` when `s` has no run of four or
/// more single letters.
fn join_spaced(s: &str) -> Option<String> {
    // Words are separated by two or more whitespace characters or a `/`; letters by one.
    let mut groups: Vec<String> = Vec::new();
    let mut any = false;
    for group in split_groups(s) {
        let tokens: Vec<&str> = group.split_whitespace().collect();
        let single = tokens.len() >= 2 && tokens.iter().all(|t| t.chars().count() == 1);
        if single {
            any |= tokens.len() >= 4;
            groups.push(tokens.concat());
        } else {
            groups.push(tokens.join(" "));
        }
    }
    any.then(|| groups.join(" "))
}

fn split_groups(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let sep = if b[i] == b'/' {
            1
        } else if b[i].is_ascii_whitespace() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            if j - i >= 2 {
                j - i
            } else {
                0
            }
        } else {
            0
        };
        if sep > 0 {
            out.push(&s[start..i]);
            i += sep;
            start = i;
        } else {
            i += 1;
        }
    }
    out.push(&s[start..]);
    out
}

/// Printable text hidden in base64 or hex runs of `s`, bounded (see the module header).
fn decoded(s: &str) -> Vec<String> {
    const LENIENT: GeneralPurposeConfig = GeneralPurposeConfig::new()
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, LENIENT);
    let url = GeneralPurpose::new(&base64::alphabet::URL_SAFE, LENIENT);
    let mut out = Vec::new();
    let mut budget = MAX_DECODED_BYTES;
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && out.len() < MAX_DECODED && budget > 0 {
        let is_b64 = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'-' | b'_');
        if !is_b64(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_b64(b[i]) {
            i += 1;
        }
        let end = i;
        while i < b.len() && b[i] == b'=' {
            i += 1;
        }
        // No more characters than the bytes still allowed can need.
        let run = &s[start..end.min(start + budget * 4 / 3 + 4)];
        let hex = run.len() >= MIN_HEX
            && run.len() % 2 == 0
            && run.bytes().all(|c| c.is_ascii_hexdigit());
        let bytes = if hex {
            (0..run.len())
                .step_by(2)
                .filter_map(|k| u8::from_str_radix(&run[k..k + 2], 16).ok())
                .collect::<Vec<u8>>()
        } else if run.len() >= MIN_BASE64
            && run
                .bytes()
                .any(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        {
            let engine = if run.contains(['-', '_']) {
                &url
            } else {
                &standard
            };
            match engine.decode(run) {
                Ok(v) => v,
                Err(_) => continue,
            }
        } else {
            continue;
        };
        if let Ok(text) = String::from_utf8(bytes) {
            if printable(&text) {
                budget = budget.saturating_sub(text.len());
                out.push(text);
            }
        }
    }
    out
}

/// Mostly letters and spaces: text, not key material that happens to decode.
fn printable(t: &str) -> bool {
    let n = t.chars().count();
    if n < 8 {
        return false;
    }
    let letters = t.chars().filter(|c| c.is_alphabetic() || *c == ' ').count();
    let control = t
        .chars()
        .filter(|c| c.is_control() && !c.is_whitespace())
        .count();
    control == 0 && letters * 10 >= n * 7 && t.contains(' ')
}
