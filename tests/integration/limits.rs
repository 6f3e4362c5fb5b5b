//! Limits and duplicate names.
//!
//! Each of the seven limits accepts a document at exactly N and rejects one at N+1, with the
//! limit's own kind (carrying the limit), the offset of the first byte past it, and the
//! pointer of the value concerned, in every chunking. Lengths count UTF-8 bytes after
//! unescaping. The decision needs nothing after the crossing byte: the input cut right after
//! it is rejected by `feed` alone, and garbage after it changes nothing.
//!
//! Duplicate names are compared after unescaping, per object, at any member count, in time
//! linear in the number of members.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use jsongate::{check, ErrorKind, Event, Flow, Ignore, Limits, Outcome, Scanner, UNLIMITED};

use crate::harness::{assert_split_invariant, run_bytewise, run_once};

/// Sets one limit.
type Set = fn(Limits, u64) -> Limits;

/// One limit at its edge, as `(n, ok, over, offset, pointer)`: `ok` passes with the limit at
/// `n`; `over` fails with the limit's kind at `offset` for `pointer`, and passes once the
/// limit is `n + 1`.
type Edge = (u64, &'static str, &'static str, u64, &'static str);

fn check_edges(set: Set, kind: fn(u64) -> ErrorKind, edges: &[Edge]) {
    for &(n, ok, over, offset, pointer) in edges {
        let at_n = set(Limits::new(), n);
        let run = assert_split_invariant(ok.as_bytes(), at_n);
        assert_eq!(run.result, Ok(Outcome::Complete), "{ok} at {n}");

        let run = assert_split_invariant(over.as_bytes(), at_n);
        let e = run.err();
        assert_eq!(
            (e.kind(), e.offset(), e.pointer()),
            (&kind(n), offset, pointer),
            "{over} at {n}"
        );

        let above = set(Limits::new(), n + 1);
        let run = run_once(over.as_bytes(), above);
        assert_eq!(run.result, Ok(Outcome::Complete), "{over} at {}", n + 1);

        // No read-ahead: the bytes up to the crossing byte decide, in `feed` already...
        let cut = &over.as_bytes()[..=offset as usize];
        let mut s = Scanner::new(at_n);
        assert_eq!(s.feed(cut, &mut Ignore).as_ref(), Err(e), "{over} cut");
        // ...and whatever follows is never looked at.
        let mut garbage = cut.to_vec();
        garbage.extend_from_slice(b"\xff\0}]garbage\"");
        assert_eq!(run_once(&garbage, at_n).result.as_ref(), Err(e));
        assert_eq!(run_bytewise(&garbage, at_n).result.as_ref(), Err(e));
    }
}

#[test]
fn max_bytes_counts_every_byte_including_whitespace() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (6, "[1, 2]", "[1, 23]", 6, "/1"),
        (6, "[1, 2]", "[1, 2] ", 6, ""),
        (6, " [12] ", "\n [12] ", 6, ""),
        (6, "\"abcd\"", "\"abcde\"", 6, ""),
        (1, "1", "12", 1, ""),
    ];
    check_edges(
        Limits::max_bytes,
        |limit| ErrorKind::TooLarge { limit },
        edges,
    );
}

#[test]
fn max_depth_counts_open_containers() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (3, "[[[1]]]", "[[[[1]]]]", 3, "/0/0/0"),
        (3, r#"{"a":{"b":{"c":1}}}"#, r#"{"a":{"b":{"c":{}}}}"#, 15, "/a/b/c"),
        // A top-level scalar is depth 0.
        (0, "1", "[]", 0, ""),
    ];
    check_edges(
        Limits::max_depth,
        |limit| ErrorKind::TooDeep { limit },
        edges,
    );
}

#[test]
fn max_name_bytes_counts_utf8_after_unescaping() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (3, r#"{"abc":1}"#, r#"{"abcd":1}"#, 5, ""),
        // Two escaped 2-byte characters are 4 bytes, though 12 bytes of input; the escape
        // that crosses is detected at its last hex digit.
        (3, r#"{"a\u00e9":1}"#, r#"{"\u00e9\u00e9":1}"#, 13, ""),
        // A raw 3-byte character, then the byte that crosses.
        (5, "{\"ab\u{20ac}\":1}", "{\"ab\u{20ac}c\":1}", 7, ""),
        // \n is one byte.
        (2, r#"{"a\n":1}"#, r#"{"a\n\n":1}"#, 6, ""),
        // The pointer of the member with the empty name is "/".
        (0, r#"{"":1}"#, r#"{"":{"a":1}}"#, 6, "/"),
    ];
    check_edges(
        Limits::max_name_bytes,
        |limit| ErrorKind::NameTooLong { limit },
        edges,
    );
}

#[test]
fn max_string_bytes_counts_utf8_after_unescaping() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (3, r#"["abc"]"#, r#"["abcd"]"#, 5, "/0"),
        (3, r#"["a\nb"]"#, r#"["a\n\nb"]"#, 7, "/0"),
        // The escape that crosses is detected at its last hex digit.
        (3, r#"["a\u00e9"]"#, r#"["ab\u00e9"]"#, 9, "/0"),
        // A surrogate pair is one 4-byte character.
        (4, r#"["\ud83d\ude00"]"#, r#"["\ud83d\ude00x"]"#, 14, "/0"),
        (4, r#"{"k":"\u20ac!"}"#, r#"{"k":"\u20ac!!"}"#, 13, "/k"),
        // A raw 4-byte character whose last byte crosses.
        (5, "[\"a\u{1f600}\"]", "[\"ab\u{1f600}\"]", 7, "/0"),
        (0, r#"[""]"#, r#"["",["a"]]"#, 6, "/1/0"),
    ];
    check_edges(
        Limits::max_string_bytes,
        |limit| ErrorKind::StringTooLong { limit },
        edges,
    );
}

#[test]
fn max_number_bytes_counts_the_number_text() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (3, "[123]", "[1234]", 4, "/0"),
        (6, "[-1.5e3]", "[-1.5e30]", 7, "/0"),
        // At top level the number ends only at the end of input.
        (3, "123", "1234", 3, ""),
        (2, r#"{"a":-1}"#, r#"{"a":-10}"#, 7, "/a"),
    ];
    check_edges(
        Limits::max_number_bytes,
        |limit| ErrorKind::NumberTooLong { limit },
        edges,
    );
}

#[test]
fn max_members_counts_members_of_each_object() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (2, r#"{"a":1,"b":2}"#, r#"{"a":1,"b":2,"c":3}"#, 13, ""),
        // Each object counts its own members.
        (2, r#"{"x":{"a":1,"b":2},"y":{"a":1,"b":2}}"#, r#"{"x":{"a":1,"b":2},"y":{"a":1,"b":2,"c":3}}"#, 36, "/y"),
        (0, "[{}]", r#"[{},{"a":1}]"#, 5, "/1"),
    ];
    check_edges(
        Limits::max_members,
        |limit| ErrorKind::TooManyMembers { limit },
        edges,
    );
}

#[test]
fn max_items_counts_items_of_each_array() {
    #[rustfmt::skip]
    let edges: &[Edge] = &[
        (2, "[1,2]", "[1,2,3]", 5, ""),
        (2, "[[1,2],[3,4]]", "[[1,2],[3,4,5]]", 12, "/1"),
        (2, r#"{"a":[{},[]]}"#, r#"{"a":[{},[],null]}"#, 12, "/a"),
        (0, "[]", "[ 1]", 2, ""),
    ];
    check_edges(
        Limits::max_items,
        |limit| ErrorKind::TooManyItems { limit },
        edges,
    );
}

#[test]
fn unlimited_lifts_each_limit() {
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let long_string = format!("[\"{}\"]", "x".repeat(5 << 20));
    let long_number = format!("[{}]", "9".repeat(1000));
    let wide = format!("[{}0]", "0,".repeat(1_100_000));
    let members: Vec<String> = (0..70_000).map(|i| format!("\"{i}\":0")).collect();
    let many = format!("{{{}}}", members.join(","));
    let long_name = format!("{{\"{}\":0}}", "n".repeat(5000));
    let cases: [(&str, &[u8], Set); 6] = [
        ("depth", deep.as_bytes(), Limits::max_depth),
        ("string", long_string.as_bytes(), Limits::max_string_bytes),
        ("number", long_number.as_bytes(), Limits::max_number_bytes),
        ("items", wide.as_bytes(), Limits::max_items),
        ("members", many.as_bytes(), Limits::max_members),
        ("name", long_name.as_bytes(), Limits::max_name_bytes),
    ];
    for (what, doc, set) in cases {
        // Rejected by the default...
        let lifted_bytes = Limits::new().max_bytes(UNLIMITED);
        assert!(check(doc, lifted_bytes).is_err(), "{what}");
        // ...accepted once that one limit is UNLIMITED, and with everything unlimited.
        assert_eq!(check(doc, set(lifted_bytes, UNLIMITED)), Ok(()), "{what}");
        assert_eq!(check(doc, Limits::unlimited()), Ok(()), "{what}");
    }
    // max_bytes: 17 MiB of whitespace around a value.
    let mut big = vec![b' '; 17 << 20];
    big[0] = b'0';
    let e = check(&big, Limits::new()).unwrap_err();
    assert_eq!(e.kind(), &ErrorKind::TooLarge { limit: 16 << 20 });
    assert_eq!(e.offset(), 16 << 20);
    assert_eq!(check(&big, Limits::new().max_bytes(UNLIMITED)), Ok(()));
}

#[test]
fn limits_apply_in_every_chunking_when_the_crossing_token_is_split() {
    // Each crossing token straddles many chunk boundaries in the split tests; here also the
    // scanner is reused across documents with different splits.
    let limits = Limits::new().max_string_bytes(8).max_name_bytes(4);
    let doc = "{\"na\u{e9}\":\"\u{1f600}\u{1f600}\\u00e9\"}";
    let e = assert_split_invariant(doc.as_bytes(), limits).err().clone();
    assert_eq!(e.kind(), &ErrorKind::StringTooLong { limit: 8 });
    let ok = "{\"na\u{e9}\":\"\u{1f600}\u{1f600}\"}";
    assert_eq!(
        assert_split_invariant(ok.as_bytes(), limits).result,
        Ok(Outcome::Complete)
    );
}

/// A multi-byte character that the limit cuts in the middle: the byte that crosses is the
/// first one past the limit (inside the character), whether or not a chunk also cuts it.
#[test]
fn multibyte_character_crossing_a_length_limit_is_reported_at_the_same_byte_in_every_chunking() {
    for (doc, limit, offset) in [
        ("[\"ab\u{1f600}\"]", 3, 5),
        ("[\"ab\u{20ac}\"]", 3, 5),
        ("[\"ab\u{20ac}\"]", 4, 6),
        ("[\"abc\u{e9}\"]", 3, 5),
        ("{\"ab\u{20ac}\":1}", 3, 5),
    ] {
        let limits = Limits::new().max_string_bytes(limit).max_name_bytes(limit);
        let e = assert_split_invariant(doc.as_bytes(), limits).err().clone();
        assert_eq!(e.offset(), offset, "{doc} with {limit}");
    }
}

#[test]
fn multibyte_character_crossing_a_length_limit_gives_the_same_kind_in_every_chunking() {
    for (doc, kind) in [
        ("[\"ab\u{1f600}\"]", ErrorKind::StringTooLong { limit: 3 }),
        ("{\"ab\u{20ac}\":1}", ErrorKind::NameTooLong { limit: 3 }),
    ] {
        let limits = Limits::new().max_string_bytes(3).max_name_bytes(3);
        assert_eq!(run_once(doc.as_bytes(), limits).err().offset(), 5, "{doc}");
        for cut in 0..=doc.len() {
            let r = crate::harness::run_splits(doc.as_bytes(), limits, &[cut]);
            assert_eq!(r.err().kind(), &kind, "{doc} cut at {cut}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Duplicate names.

#[test]
fn duplicate_names_are_compared_after_unescaping() {
    for (doc, offset, pointer) in [
        (r#"{"a":1,"\u0061":2}"#, 14, "/a"),
        (r#"{"a/b":1,"a\/b":2}"#, 14, "/a~1b"),
        (r#"{"~":1,"\u007e":2}"#, 14, "/~0"),
        (r#"{"\n":1,"\u000a":2}"#, 15, "/\n"),
        (r#"{"":1,"":2}"#, 7, "/"),
        (r#"{"x":[{"\ud83d\ude00":1,"😀":2}]}"#, 29, "/x/0/😀"),
    ] {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        let e = run.err();
        assert_eq!(
            (e.kind(), e.offset(), e.pointer()),
            (&ErrorKind::DuplicateName, offset, pointer),
            "{doc}"
        );
    }
}

#[test]
fn names_differing_in_case_or_normalization_are_distinct() {
    for doc in [
        r#"{"A":1,"a":2}"#,
        "{\"\u{e9}\":1,\"e\u{301}\":2}",
        r#"{"\u00e9":1,"e\u0301":2}"#,
        r#"{"a":1,"a ":2," a":3}"#,
    ] {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        assert_eq!(run.result, Ok(Outcome::Complete), "{doc}");
    }
}

#[test]
fn each_object_has_its_own_names() {
    for doc in [
        r#"{"a":{"a":1},"b":{"a":2}}"#,
        r#"[{"a":1},{"a":1}]"#,
        r#"{"a":{"a":{"a":{}}}}"#,
        r#"{"a":[{"b":1}],"b":[{"a":1,"b":2}]}"#,
    ] {
        let run = assert_split_invariant(doc.as_bytes(), Limits::new());
        assert_eq!(run.result, Ok(Outcome::Complete), "{doc}");
    }
    // The outer object still remembers its names after a nested object closed.
    let doc = r#"{"a":{"x":1,"y":{"z":2}},"b":3,"a":4}"#;
    let e = assert_split_invariant(doc.as_bytes(), Limits::new())
        .err()
        .clone();
    assert_eq!(
        (e.kind(), e.offset(), e.pointer()),
        (&ErrorKind::DuplicateName, 33, "/a")
    );
}

/// `{"k0":0,...,"k{n-1}":0,"k{dup}":1}`: the offset of the last name's closing quote.
fn object_with_duplicate(n: usize, dup: usize) -> (Vec<u8>, u64) {
    let mut doc = String::from("{");
    for i in 0..n {
        write!(doc, "\"k{i}\":0,").unwrap();
    }
    write!(doc, "\"k{dup}\"").unwrap();
    let close = doc.len() as u64 - 1;
    doc.push_str(":1}");
    (doc.into_bytes(), close)
}

#[test]
fn duplicates_are_found_at_any_member_count() {
    let limits = Limits::new().max_members(UNLIMITED);
    for n in [1, 7, 8, 9, 100, 100_000] {
        for dup in [0, n / 2, n - 1] {
            let (doc, close) = object_with_duplicate(n, dup);
            let e = check(&doc, limits).unwrap_err();
            assert_eq!(
                (e.kind(), e.offset(), e.pointer()),
                (
                    &ErrorKind::DuplicateName,
                    close,
                    format!("/k{dup}").as_str()
                ),
                "{n} members, duplicate of k{dup}"
            );
        }
        // Without the duplicate it passes.
        let (mut doc, _) = object_with_duplicate(n, n);
        let at = doc.len() - 3;
        doc.truncate(at);
        doc.extend_from_slice(b":1}");
        assert_eq!(check(&doc, limits), Ok(()), "{n} members");
    }
    // Also when fed in small chunks (names are then decoded into the scratch buffer).
    let (doc, close) = object_with_duplicate(100, 42);
    let e = crate::harness::run_random(&doc, limits, 7, 5).err().clone();
    assert_eq!((e.offset(), e.pointer()), (close, "/k42"));
}

/// Time to scan `doc` once.
fn time_scan(scanner: &mut Scanner, doc: &[u8]) -> Duration {
    let start = Instant::now();
    let mut names = 0u64;
    let mut count = |e: Event<'_>, _: u64| {
        names += u64::from(matches!(e, Event::Name(_)));
        Flow::Continue
    };
    assert_eq!(scanner.scan_slice(doc, &mut count), Ok(Outcome::Complete));
    assert!(names >= 50_000);
    start.elapsed()
}

#[test]
fn duplicate_checking_is_near_linear_in_members() {
    let object = |n: usize| {
        let members: Vec<String> = (0..n).map(|i| format!("\"member-{i}\":{i}")).collect();
        format!("{{{}}}", members.join(",")).into_bytes()
    };
    let (small, large) = (object(50_000), object(200_000));
    let mut scanner = Scanner::new(Limits::new().max_members(UNLIMITED));
    // Linear work gives about 4x (a little more from caches); quadratic work would take
    // minutes at this size. The machine may be busy (other tests run beside this one): take
    // the best of three interleaved runs, measure again if that is slow, and allow 12x. The
    // exact, load-independent bound is the comparison count pinned in `scan::names` tests.
    let mut ratios = Vec::new();
    for _ in 0..3 {
        let (mut best_small, mut best_large) = (Duration::MAX, Duration::MAX);
        for _ in 0..3 {
            best_small = best_small.min(time_scan(&mut scanner, &small));
            best_large = best_large.min(time_scan(&mut scanner, &large));
        }
        let ratio = best_large.as_secs_f64() / best_small.as_secs_f64();
        if ratio < 12.0 {
            return;
        }
        ratios.push(format!("{ratio:.1} ({best_small:?} vs {best_large:?})"));
    }
    panic!("4x the members took more than 12x the time: {ratios:?}");
}
