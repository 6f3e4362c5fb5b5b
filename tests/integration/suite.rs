//! `JSONTestSuite` (nst/JSONTestSuite) under the strict profile with default limits.
//!
//! - `y_*` must be accepted, except the named expected failures in [`Y_REJECTED`].
//! - `n_*` must be rejected.
//! - `i_*` (implementation-defined) and `test_transform/*` are decided by the tables below,
//!   which give the verdict and the reason; a file missing from its table fails the test, and
//!   so does a table entry whose file is gone.
//! - Every file gives the same verdict, error (kind, offset, line, column, pointer) and events
//!   whether scanned in one shot, one byte at a time, in seeded random chunk sizes, or through
//!   `scan_read` over a reader that returns short reads.

use std::fs;
use std::path::Path;

use jsongate::{ErrorKind, Limits, Outcome, Syntax};

use crate::common::data;
use crate::harness::{diff, run_bytewise, run_once, run_random, run_reader, Ev, Run};

/// What the strict profile decides for a file.
#[derive(Debug)]
enum Verdict {
    Accept,
    Reject(ErrorKind),
}
use Verdict::{Accept, Reject};

const fn syntax(s: Syntax) -> Verdict {
    Reject(ErrorKind::Syntax(s))
}

/// `y_` files the strict profile rejects on purpose.
const Y_REJECTED: &[(&str, ErrorKind, &str)] = &[
    (
        "y_object_duplicated_key.json",
        ErrorKind::DuplicateName,
        "I-JSON: member names must be unique",
    ),
    (
        "y_object_duplicated_key_and_value.json",
        ErrorKind::DuplicateName,
        "I-JSON: member names must be unique, even with equal values",
    ),
];

/// Every `i_` file: verdict under the strict profile with default limits, and why.
#[rustfmt::skip]
const I_TABLE: &[(&str, Verdict, &str)] = &[
    ("i_number_double_huge_neg_exp.json", Accept, "numbers are exact text; 123.456e-789 fits the 128-byte limit"),
    ("i_number_huge_exp.json", Reject(ErrorKind::NumberTooLong { limit: 128 }), "135 bytes of number text, over the default max_number_bytes"),
    ("i_number_neg_int_huge_exp.json", Accept, "numbers are exact text; -1e+9999 is short"),
    ("i_number_pos_double_huge_exp.json", Accept, "numbers are exact text; 1.5e+9999 is short"),
    ("i_number_real_neg_overflow.json", Accept, "numbers are exact text; overflow is the consumer's concern"),
    ("i_number_real_pos_overflow.json", Accept, "numbers are exact text; overflow is the consumer's concern"),
    ("i_number_real_underflow.json", Accept, "numbers are exact text; underflow is the consumer's concern"),
    ("i_number_too_big_neg_int.json", Accept, "integers of any size are exact text"),
    ("i_number_too_big_pos_int.json", Accept, "integers of any size are exact text"),
    ("i_number_very_big_negative_int.json", Accept, "integers of any size are exact text (48 bytes)"),
    ("i_object_key_lone_2nd_surrogate.json", Reject(ErrorKind::LoneSurrogate), "name \\uDFAA is a lone low surrogate"),
    ("i_string_1st_surrogate_but_2nd_missing.json", Reject(ErrorKind::LoneSurrogate), "\\uDADA then the closing quote"),
    ("i_string_1st_valid_surrogate_2nd_invalid.json", Reject(ErrorKind::LoneSurrogate), "\\uD888 followed by \\u1234, not a low surrogate"),
    ("i_string_UTF-16LE_with_BOM.json", syntax(Syntax::ExpectedValue), "UTF-16 input: 0xFF cannot start a value"),
    ("i_string_UTF-8_invalid_sequence.json", Reject(ErrorKind::InvalidUtf8), "0xFA is not UTF-8"),
    ("i_string_UTF8_surrogate_U+D800.json", Reject(ErrorKind::InvalidUtf8), "ED A0 80 encodes a surrogate, which UTF-8 forbids"),
    ("i_string_incomplete_surrogate_and_escape_valid.json", Reject(ErrorKind::LoneSurrogate), "\\uD800 followed by \\n"),
    ("i_string_incomplete_surrogate_pair.json", Reject(ErrorKind::LoneSurrogate), "\\uDd1e is a lone low surrogate"),
    ("i_string_incomplete_surrogates_escape_valid.json", Reject(ErrorKind::LoneSurrogate), "\\uD800\\uD800: two high surrogates"),
    ("i_string_invalid_lonely_surrogate.json", Reject(ErrorKind::LoneSurrogate), "\\ud800 then the closing quote"),
    ("i_string_invalid_surrogate.json", Reject(ErrorKind::LoneSurrogate), "\\ud800 followed by plain text"),
    ("i_string_invalid_utf-8.json", Reject(ErrorKind::InvalidUtf8), "0xFF is not UTF-8"),
    ("i_string_inverted_surrogates_U+1D11E.json", Reject(ErrorKind::LoneSurrogate), "low surrogate before high surrogate"),
    ("i_string_iso_latin_1.json", Reject(ErrorKind::InvalidUtf8), "Latin-1 0xE9 is a truncated UTF-8 sequence"),
    ("i_string_lone_second_surrogate.json", Reject(ErrorKind::LoneSurrogate), "\\uDFAA is a lone low surrogate"),
    ("i_string_lone_utf8_continuation_byte.json", Reject(ErrorKind::InvalidUtf8), "0x81 without a lead byte"),
    ("i_string_not_in_unicode_range.json", Reject(ErrorKind::InvalidUtf8), "F4 BF BF BF is above U+10FFFF"),
    ("i_string_overlong_sequence_2_bytes.json", Reject(ErrorKind::InvalidUtf8), "overlong encoding C0 AF"),
    ("i_string_overlong_sequence_6_bytes.json", Reject(ErrorKind::InvalidUtf8), "6-byte sequences are not UTF-8"),
    ("i_string_overlong_sequence_6_bytes_null.json", Reject(ErrorKind::InvalidUtf8), "6-byte overlong NUL"),
    ("i_string_truncated-utf-8.json", Reject(ErrorKind::InvalidUtf8), "E0 followed by FF, not a continuation byte"),
    ("i_string_utf16BE_no_BOM.json", syntax(Syntax::ExpectedValue), "UTF-16BE: NUL cannot start a value"),
    ("i_string_utf16LE_no_BOM.json", syntax(Syntax::ExpectedValue), "UTF-16LE: NUL after '[' cannot start a value"),
    ("i_structure_500_nested_arrays.json", Reject(ErrorKind::TooDeep { limit: 128 }), "500 levels, over the default max_depth of 128"),
    ("i_structure_UTF-8_BOM_empty_object.json", syntax(Syntax::ByteOrderMark), "no BOM in the strict profile"),
];

/// Every `test_transform` file: verdict under the strict profile with default limits, and why.
#[rustfmt::skip]
const TRANSFORM_TABLE: &[(&str, Verdict, &str)] = &[
    ("number_-9223372036854775808.json", Accept, "i64::MIN, exact text"),
    ("number_-9223372036854775809.json", Accept, "below i64::MIN, exact text"),
    ("number_1.0.json", Accept, "exact text keeps the fraction"),
    ("number_1.000000000000000005.json", Accept, "more digits than f64 holds, exact text"),
    ("number_1000000000000000.json", Accept, "exact text"),
    ("number_10000000000000000999.json", Accept, "above u64::MAX, exact text"),
    ("number_1e-999.json", Accept, "underflows f64, exact text"),
    ("number_1e6.json", Accept, "capital E exponent, exact text"),
    ("number_9223372036854775807.json", Accept, "i64::MAX, exact text"),
    ("number_9223372036854775808.json", Accept, "above i64::MAX, exact text"),
    ("object_key_nfc_nfd.json", Accept, "names are compared as bytes, no Unicode normalization"),
    ("object_key_nfd_nfc.json", Accept, "names are compared as bytes, no Unicode normalization"),
    ("object_same_key_different_values.json", Reject(ErrorKind::DuplicateName), "I-JSON: unique names"),
    ("object_same_key_same_value.json", Reject(ErrorKind::DuplicateName), "I-JSON: unique names, even with equal values"),
    ("object_same_key_unclear_values.json", Reject(ErrorKind::DuplicateName), "I-JSON: unique names (0 and -0)"),
    ("string_1_escaped_invalid_codepoint.json", Reject(ErrorKind::LoneSurrogate), "escaped lone surrogate \\uD800"),
    ("string_1_invalid_codepoint.json", Reject(ErrorKind::InvalidUtf8), "raw UTF-8-encoded surrogate ED A0 80"),
    ("string_2_escaped_invalid_codepoints.json", Reject(ErrorKind::LoneSurrogate), "two escaped high surrogates"),
    ("string_2_invalid_codepoints.json", Reject(ErrorKind::InvalidUtf8), "raw encoded surrogates"),
    ("string_3_escaped_invalid_codepoints.json", Reject(ErrorKind::LoneSurrogate), "three escaped high surrogates"),
    ("string_3_invalid_codepoints.json", Reject(ErrorKind::InvalidUtf8), "raw encoded surrogates"),
    ("string_with_escaped_NULL.json", Accept, "\\u0000 is a valid escape; only raw control bytes are refused"),
];

/// Sorted file names in a suite folder.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn parsing_dir() -> std::path::PathBuf {
    data("suites/json-test-suite/test_parsing")
}

fn transform_dir() -> std::path::PathBuf {
    data("suites/json-test-suite/test_transform")
}

/// Checks a one-shot scan of `name` against `verdict`; returns a description on mismatch.
fn check_verdict(name: &str, run: &Run, verdict: &Verdict) -> Option<String> {
    match (verdict, &run.result) {
        (Accept, Ok(Outcome::Complete)) => None,
        (Reject(kind), Err(e)) if e.kind() == kind => None,
        (v, r) => Some(format!("{name}: expected {v:?}, got {r:?}")),
    }
}

/// Fails with every mismatch at once.
fn report(what: &str, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} {what} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn suite_has_the_expected_files() {
    let names = files(&parsing_dir());
    let count = |p: &str| names.iter().filter(|n| n.starts_with(p)).count();
    assert_eq!((count("y_"), count("n_"), count("i_")), (95, 188, 35));
    assert_eq!(files(&transform_dir()).len(), 22);
}

#[test]
fn y_files_are_accepted_except_duplicate_names() {
    let mut failures = Vec::new();
    let mut seen_rejected = 0;
    for name in files(&parsing_dir()).iter().filter(|n| n.starts_with("y_")) {
        let bytes = fs::read(parsing_dir().join(name)).unwrap();
        let run = run_once(&bytes, Limits::new());
        let verdict = match Y_REJECTED.iter().find(|(n, ..)| n == name) {
            Some((_, kind, _)) => {
                seen_rejected += 1;
                Reject(kind.clone())
            }
            None => Accept,
        };
        failures.extend(check_verdict(name, &run, &verdict));
    }
    report("y_", &failures);
    assert_eq!(
        seen_rejected,
        Y_REJECTED.len(),
        "a named y_ failure is gone"
    );
}

#[test]
fn n_files_are_rejected() {
    let mut failures = Vec::new();
    for name in files(&parsing_dir()).iter().filter(|n| n.starts_with("n_")) {
        let bytes = fs::read(parsing_dir().join(name)).unwrap();
        let run = run_once(&bytes, Limits::new());
        match &run.result {
            Err(e) if !matches!(e.kind(), ErrorKind::Io(_)) => {}
            r => failures.push(format!("{name}: expected a rejection, got {r:?}")),
        }
    }
    report("n_", &failures);
}

/// Decides every file of `dir` with `prefix` by `table`; fails on files missing from the table
/// and on table entries without a file.
fn check_table(dir: &Path, prefix: &str, table: &[(&str, Verdict, &str)]) {
    let names: Vec<String> = files(dir)
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect();
    let mut failures = Vec::new();
    for name in &names {
        let Some((_, verdict, reason)) = table.iter().find(|(n, ..)| n == name) else {
            failures.push(format!("{name}: not in the table; decide it and say why"));
            continue;
        };
        let bytes = fs::read(dir.join(name)).unwrap();
        let run = run_once(&bytes, Limits::new());
        failures.extend(check_verdict(name, &run, verdict).map(|m| format!("{m} ({reason})")));
    }
    for (name, ..) in table {
        if !names.iter().any(|n| n == name) {
            failures.push(format!("{name}: in the table but not in {}", dir.display()));
        }
    }
    report("table", &failures);
}

#[test]
fn i_files_are_decided_by_the_table() {
    check_table(&parsing_dir(), "i_", I_TABLE);
}

#[test]
fn transform_files_are_decided_by_the_table() {
    check_table(&transform_dir(), "", TRANSFORM_TABLE);
}

#[test]
fn transform_numbers_and_strings_keep_their_exact_text() {
    for name in files(&transform_dir()) {
        let bytes = fs::read(transform_dir().join(&name)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        if name.starts_with("number_") {
            // Each is `[<number>]\n`.
            let inner = text.trim().trim_start_matches('[').trim_end_matches(']');
            let run = run_once(&bytes, Limits::new());
            assert_eq!(
                run.evs(),
                [Ev::BeginArray, Ev::Number(inner.into()), Ev::EndArray],
                "{name}"
            );
        }
    }
    let nul = fs::read(transform_dir().join("string_with_escaped_NULL.json")).unwrap();
    assert_eq!(
        run_once(&nul, Limits::new()).evs(),
        [Ev::BeginArray, Ev::String("A\0B".into()), Ev::EndArray]
    );
    // NFC "é" (C3 A9) and NFD "e\u{301}" are two different names.
    let nfc = fs::read(transform_dir().join("object_key_nfc_nfd.json")).unwrap();
    let names: Vec<Ev> = run_once(&nfc, Limits::new())
        .evs()
        .into_iter()
        .filter(|e| matches!(e, Ev::Name(_)))
        .collect();
    assert_eq!(
        names,
        [Ev::Name("\u{e9}".into()), Ev::Name("e\u{301}".into())]
    );
}

/// Seeds and maximum chunk sizes for the random chunkings.
const RANDOM: &[(u64, usize)] = &[(1, 3), (2, 7), (3, 16), (4, 64), (5, 500)];

/// Every way of delivering the bytes must give the run of the one-shot scan; returns the
/// differences found.
fn chunking_differences(dir: &Path, name: &str) -> Vec<String> {
    let bytes = fs::read(dir.join(name)).unwrap();
    let limits = Limits::new();
    let whole = run_once(&bytes, limits);
    let mut runs = vec![("1-byte feeding".to_string(), run_bytewise(&bytes, limits))];
    for &(seed, max) in RANDOM {
        let how = format!("random chunks, seed {seed}, max {max}");
        runs.push((how, run_random(&bytes, limits, seed, max)));
    }
    for &(seed, max) in &[(11, 1), (12, 5), (13, 100)] {
        let how = format!("scan_read, seed {seed}, reads of at most {max}");
        runs.push((how, run_reader(&bytes, limits, seed, max)));
    }
    runs.iter()
        .filter_map(|(how, run)| diff(&whole, run).map(|d| format!("{name} ({how}): {d}")))
        .collect()
}

fn all_chunking_differences(dir: &Path) -> Vec<String> {
    files(dir)
        .iter()
        .flat_map(|name| chunking_differences(dir, name))
        .collect()
}

#[test]
fn every_parsing_file_gives_the_same_result_in_every_chunking() {
    report("chunking", &all_chunking_differences(&parsing_dir()));
}

#[test]
fn every_transform_file_gives_the_same_result_in_every_chunking() {
    report("chunking", &all_chunking_differences(&transform_dir()));
}
