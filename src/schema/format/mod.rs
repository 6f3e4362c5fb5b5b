//! The `format` keyword's assertion checks (JSON Schema 2020-12, format-assertion
//! vocabulary): one validity predicate per known format name, each following the RFC
//! or standard the specification cites, as the official test suite reads it.
//!
//! This module owns only the string predicates. Non-string instances are always valid
//! for `format` and never reach [`check`]; deciding whether `format` asserts at all
//! (annotation vs. assertion vocabulary) is the validator's business.
//!
//! Every predicate is panic-free on any input and runs in time linear in the input
//! (the IDNA work is bounded by the 63-octet label and 253-octet name limits, checked
//! before any quadratic step; the regex checker is `O(n log n)` in the worst case
//! because of duplicate group-name bookkeeping).

// Nothing calls `check`/`is_known` until the validator wires the `format` keyword in.
#![allow(dead_code)]

mod date_time;
mod duration;
mod email;
mod hostname;
mod idn;
mod idna_table;
mod ip;
mod pointer;
mod punycode;
mod uri;
mod uri_template;
mod uuid;

/// The format names this module asserts, in the order the specification lists them.
pub(crate) const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// Returns None for an unknown format name (unknown formats are annotations only),
/// Some(valid) otherwise.
pub(crate) fn check(format: &str, value: &str) -> Option<bool> {
    let valid = match format {
        "date-time" => date_time::is_date_time(value),
        "date" => date_time::is_date(value),
        "time" => date_time::is_time(value),
        "duration" => duration::is_duration(value),
        "email" => email::is_email(value),
        "idn-email" => email::is_idn_email(value),
        "hostname" => hostname::is_hostname(value),
        "idn-hostname" => hostname::is_idn_hostname(value),
        "ipv4" => ip::is_ipv4(value),
        "ipv6" => ip::is_ipv6(value),
        "uri" => uri::is_uri(value),
        "uri-reference" => uri::is_uri_reference(value),
        "iri" => uri::is_iri(value),
        "iri-reference" => uri::is_iri_reference(value),
        "uuid" => uuid::is_uuid(value),
        "uri-template" => uri_template::is_uri_template(value),
        "json-pointer" => pointer::is_json_pointer(value),
        "relative-json-pointer" => pointer::is_relative_json_pointer(value),
        "regex" => crate::schema::regex::is_ecma_regex(value),
        _ => return None,
    };
    Some(valid)
}

/// Whether `format` is one this module knows.
pub(crate) fn is_known(format: &str) -> bool {
    KNOWN_FORMATS.contains(&format)
}

/// Whether `format` names a format of `draft` (later names are unknown, so annotations only,
/// in the drafts before them): draft-04 has six, draft-06 adds the URI references, templates
/// and JSON Pointers, draft-07 the dates, times, IRIs, international names and `regex`,
/// 2019-09 `duration` and `uuid`.
pub(crate) fn known_in(format: &str, draft: crate::Draft) -> bool {
    use crate::Draft;
    const DRAFT4: &[&str] = &["date-time", "email", "hostname", "ipv4", "ipv6", "uri"];
    const DRAFT6: &[&str] = &["uri-reference", "uri-template", "json-pointer"];
    const LATER: &[&str] = &["duration", "uuid"];
    let since_6 = DRAFT6.contains(&format);
    let since_2019 = LATER.contains(&format);
    match draft {
        Draft::Draft4 => DRAFT4.contains(&format),
        Draft::Draft6 => DRAFT4.contains(&format) || since_6,
        Draft::Draft7 => is_known(format) && !since_2019,
        _ => is_known(format),
    }
}

#[cfg(test)]
mod tests {
    use super::{check, is_known, KNOWN_FORMATS};

    /// Suite cases this module knowingly gets wrong: (file, data, reason).
    /// Empty: every string case in the draft 2020-12 optional/format suite passes.
    const EXPECTED_FAILURES: &[(&str, &str, &str)] = &[];

    fn suite_dir() -> std::path::PathBuf {
        std::path::Path::new(crate::schema::suite::DRAFT2020).join("optional/format")
    }

    #[test]
    fn official_suite_format_cases() {
        let dir = suite_dir();
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()))
            .map(|entry| entry.expect("directory entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no suite files in {}", dir.display());

        let mut failures = Vec::new();
        let mut expected_seen = Vec::new();
        let mut total = 0usize;
        let mut per_format = std::collections::BTreeMap::<String, (usize, usize)>::new();
        for path in &files {
            let file = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("?")
                .to_owned();
            let text = std::fs::read_to_string(path).expect("suite file is readable");
            let groups: serde_json::Value =
                serde_json::from_str(&text).expect("suite file is JSON");
            for group in groups.as_array().expect("suite file is an array") {
                let format = group["schema"]["format"]
                    .as_str()
                    .expect("schema has a format");
                for case in group["tests"].as_array().expect("tests array") {
                    let Some(data) = case["data"].as_str() else {
                        continue;
                    };
                    let want = case["valid"].as_bool().expect("valid flag");
                    // Unknown formats only annotate: the instance is valid.
                    let got = check(format, data).unwrap_or(true);
                    total += 1;
                    let entry = per_format.entry(format.to_owned()).or_default();
                    entry.1 += 1;
                    let expected_failure = EXPECTED_FAILURES
                        .iter()
                        .any(|(f, d, _)| *f == file && *d == data);
                    if got == want {
                        entry.0 += 1;
                        assert!(
                            !expected_failure,
                            "{file}: {data:?} is listed as an expected failure but passes"
                        );
                    } else if expected_failure {
                        expected_seen.push((file.clone(), data.to_owned()));
                    } else {
                        failures.push(format!(
                            "{file} [{format}] {:?}: {data:?} expected {want}, got {got}",
                            case["description"].as_str().unwrap_or("")
                        ));
                    }
                }
            }
        }
        for (format, (pass, all)) in &per_format {
            println!("{format}: {pass}/{all}");
        }
        assert!(
            failures.is_empty(),
            "{} of {total} suite cases fail:\n{}",
            failures.len(),
            failures.join("\n")
        );
        assert_eq!(
            expected_seen.len(),
            EXPECTED_FAILURES.len(),
            "stale expected-failure entries"
        );
    }

    #[test]
    fn known_formats_are_checked() {
        for format in KNOWN_FORMATS {
            assert!(is_known(format));
            assert!(check(format, "").is_some(), "{format}");
        }
        for unknown in ["", "unknown", "DATE", "date-time ", "int32", "binary"] {
            assert!(!is_known(unknown));
            assert_eq!(check(unknown, "anything"), None);
        }
    }

    /// Format names follow the draft that introduced them: `uuid` is a 2019-09 name, so a
    /// draft-07 `"format":"uuid"` is an unknown format (an annotation).
    #[test]
    fn format_names_per_draft() {
        use super::known_in;
        use crate::Draft;
        assert!(known_in("ipv4", Draft::Draft4));
        assert!(!known_in("uri-reference", Draft::Draft4));
        assert!(known_in("uri-reference", Draft::Draft6));
        assert!(!known_in("date", Draft::Draft6));
        assert!(known_in("date", Draft::Draft7));
        assert!(!known_in("uuid", Draft::Draft7));
        assert!(known_in("uuid", Draft::Draft201909));
        for f in KNOWN_FORMATS {
            assert!(known_in(f, Draft::Draft202012));
        }
    }

    /// Large inputs of shapes that would expose quadratic behaviour finish quickly.
    #[test]
    fn long_inputs_stay_linear() {
        const N: usize = 100_000;
        let inputs = [
            "a".repeat(N),
            "a.".repeat(N),
            "é".repeat(N),
            "(".repeat(N),
            "(?:a|".repeat(N),
            "[a-z]".repeat(N),
            "\\1".repeat(N),
            format!("{}{}", "(?<a>x)|".repeat(N), "\\k<a>".repeat(N)),
            format!("P{}D", "1".repeat(N)),
            format!("PT{}", "1H".repeat(N)),
            format!("\"{}\"@example.com", "a".repeat(N)),
            format!("{}@example.com", "a.".repeat(N)),
            format!(
                "http://{}@{}/{}",
                "u:".repeat(N),
                "h".repeat(N),
                "p/".repeat(N)
            ),
            "{a}".repeat(N),
            "/~0".repeat(N),
            format!("0{}", "/a".repeat(N)),
            "1:".repeat(N),
            "xn--".repeat(N),
        ];
        let start = std::time::Instant::now();
        for format in KNOWN_FORMATS {
            for input in &inputs {
                let _ = check(format, input);
            }
        }
        // Generous even for unoptimized builds on a slow machine; quadratic behaviour
        // on these inputs would take minutes.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn no_panic_on_awkward_input() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "\u{0}".into(),
            "é".into(),
            "\u{10FFFF}".into(),
            "xn--".into(),
            "[".into(),
            "%".into(),
            "\\".into(),
            "{".into(),
            "(?<".into(),
            "\\u{".into(),
            "P".into(),
            "T".into(),
            "::".into(),
            "@".into(),
            "\"".into(),
        ];
        // Every prefix of some non-ASCII-heavy strings, to hit byte boundaries.
        for s in [
            "2020-01-01T23:59:60.5+01:00",
            "ü@[IPv6:::1]",
            "http://ƒø.ß/?q=é#x",
            "\\p{Script=Greek}[^\\u{1F600}-\\u{1F64F}]",
        ] {
            for (i, _) in s.char_indices() {
                samples.push(s[..i].to_owned());
                samples.push(s[i..].to_owned());
            }
        }
        for format in KNOWN_FORMATS {
            for s in &samples {
                let _ = check(format, s);
            }
        }
    }
}
