//! The `jsongate` binary, run for real: exit codes (0 accepted, 1 rejected, 2 usage or I/O
//! error), the one-line JSON verdict and its fields, every error kind and every `--max-*` flag
//! through the command line, the three ways to give the input, `--help`, and that reading stops
//! at the verdict.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::common::{run_in, Run};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

fn fixture_arg(name: &str) -> String {
    fixture(name).to_str().expect("UTF-8 path").to_owned()
}

fn run(args: &[&str], stdin: &[u8]) -> Run {
    run_in(None, args, stdin)
}

/// Runs `jsongate check ARGS` and returns the exit code and the verdict line, parsed. Checks
/// that the verdict is exactly one line, that nothing went to stderr, and that the exit code
/// matches `valid`.
fn check(args: &[&str], stdin: &[u8]) -> (i32, Value) {
    let mut all = vec!["check"];
    all.extend_from_slice(args);
    let r = run(&all, stdin);
    assert_eq!(r.stderr, "", "stderr of check {args:?}");
    assert!(
        r.stdout.ends_with('\n') && r.stdout.matches('\n').count() == 1,
        "not one line: {:?}",
        r.stdout
    );
    let v: Value = serde_json::from_str(&r.stdout).expect("verdict line is JSON");
    let expected_code = i32::from(v["valid"] != json!(true));
    assert_eq!(r.code, expected_code, "exit code for {}", r.stdout);
    (r.code, v)
}

/// Runs `jsongate check ARGS` expecting a rejection, and returns the `error` object.
fn rejected(args: &[&str], stdin: &[u8]) -> Value {
    let (code, v) = check(args, stdin);
    assert_eq!(code, 1, "expected a rejection, got {v}");
    let err = v["error"].clone();
    for field in ["offset", "line", "column"] {
        assert!(err[field].is_u64(), "{field} in {v}");
    }
    assert!(
        err["pointer"].is_string() && err["message"].is_string(),
        "{v}"
    );
    err
}

/// Runs `jsongate ARGS` expecting a usage/configuration/I-O error (exit 2, message on stderr,
/// nothing on stdout), and returns stderr.
fn usage_error(args: &[&str], stdin: &[u8]) -> String {
    let r = run(args, stdin);
    assert_eq!(r.code, 2, "exit code of {args:?}: stdout {:?}", r.stdout);
    assert_eq!(r.stdout, "", "stdout of {args:?}");
    assert!(
        r.stderr.starts_with("jsongate: "),
        "stderr of {args:?}: {:?}",
        r.stderr
    );
    r.stderr
}

#[test]
fn valid_input_prints_the_exact_verdict_line_and_exits_0() {
    let r = run(&["check"], b"[1, 2]\n");
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "{\"valid\":true,\"bytes_read\":7}\n")
    );
    let (_, v) = check(&[], b"[1, 2]\n");
    assert_eq!(v, json!({"valid": true, "bytes_read": 7}));
}

#[test]
fn invalid_input_prints_the_exact_verdict_line_and_exits_1() {
    let r = run(&["check"], br#"{"approved":false,"approved":true}"#);
    assert_eq!(r.code, 1);
    assert_eq!(
        r.stdout,
        "{\"valid\":false,\"bytes_read\":28,\"error\":{\"kind\":\"duplicate_name\",\"offset\":27,\
         \"line\":1,\"column\":28,\"pointer\":\"/approved\",\"message\":\"duplicate member name\"}}\n"
    );
}

#[test]
fn error_fields_give_line_column_and_pointer() {
    let (_, v) = check(&[], b"{\n  \"a\": 1,\n  \"a\": 2\n}\n");
    assert_eq!(
        v,
        json!({"valid": false, "bytes_read": 17, "error": {
            "kind": "duplicate_name", "offset": 16, "line": 3, "column": 5,
            "pointer": "/a", "message": "duplicate member name"}})
    );
}

#[test]
fn pointer_and_message_are_escaped_json_strings() {
    // The pointer escapes `/` and `~` (RFC 6901) and the line escapes the quote (RFC 8259).
    let err = rejected(&[], br#"{"a/b~":{"x\"y":1,"x\"y":2}}"#);
    assert_eq!(err["pointer"], json!("/a~1b~0/x\"y"));
    let err = rejected(&[], br#"["\ud800"]"#);
    assert_eq!(err["message"], json!("\\u escape leaves a lone surrogate"));
}

#[test]
fn bundled_fixtures_give_the_documented_verdicts() {
    let (_, v) = check(&[&fixture_arg("tool-result.json")], b"");
    let len = std::fs::metadata(fixture("tool-result.json"))
        .unwrap()
        .len();
    assert_eq!(v, json!({"valid": true, "bytes_read": len}));

    let err = rejected(&[&fixture_arg("duplicate-approved.json")], b"");
    assert_eq!(err["kind"], json!("duplicate_name"));
    assert_eq!(err["pointer"], json!("/result/approved"));

    let err = rejected(&[&fixture_arg("deep.json")], b"");
    assert_eq!(err["kind"], json!("too_deep"));
    assert_eq!(err["offset"], json!(jsongate::DEFAULT_MAX_DEPTH));
    let (code, _) = check(&["--max-depth", "200", &fixture_arg("deep.json")], b"");
    assert_eq!(code, 0);
}

/// Flags, input, and the expected kind, offset and pointer.
type KindCase<'a> = (&'a [&'a str], &'a [u8], &'a str, u64, &'a str);

#[test]
fn every_error_kind_is_reported_through_the_cli() {
    let deep = "[".repeat(129);
    let dir = tempfile::tempdir().unwrap();
    let strict = dir.path().join("strict.json");
    std::fs::write(
        &strict,
        br#"{"properties":{"approved":{"type":"boolean"}},"additionalProperties":false}"#,
    )
    .unwrap();
    let strict = strict.to_string_lossy().to_string();
    // Two alternatives per nesting level: evaluations double with depth.
    let nested = dir.path().join("nested.json");
    std::fs::write(
        &nested,
        br##"{"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}"##,
    )
    .unwrap();
    let nested = nested.to_string_lossy().to_string();
    // `a` applies itself to the value it is given: only a document with `loop` reaches it.
    let cycle = dir.path().join("cycle.json");
    std::fs::write(
        &cycle,
        br##"{"properties":{"loop":{"$ref":"#/$defs/a"}},"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"}]}}}"##,
    )
    .unwrap();
    let cycle = cycle.to_string_lossy().to_string();
    let cases: &[KindCase] = &[
        (&["--max-bytes", "4"], b"[1,2]", "too_large", 4, "/1"),
        (&[], deep.as_bytes(), "too_deep", 128, &"/0".repeat(128)),
        (
            &["--max-name-bytes", "3"],
            br#"{"abcd":1}"#,
            "name_too_long",
            5,
            "",
        ),
        (
            &["--max-string-bytes", "3"],
            br#"["abcd"]"#,
            "string_too_long",
            5,
            "/0",
        ),
        (
            &["--max-number-bytes", "3"],
            b"[1234]",
            "number_too_long",
            4,
            "/0",
        ),
        (
            &["--max-members", "1"],
            br#"{"a":1,"b":2}"#,
            "too_many_members",
            7,
            "",
        ),
        (&["--max-items", "2"], b"[1,2,3]", "too_many_items", 5, ""),
        (&[], br#"{"a":1,"\u0061":2}"#, "duplicate_name", 14, "/a"),
        (&[], b"[\"\xff\"]", "invalid_utf8", 2, "/0"),
        (&[], br#"["\ud800"]"#, "lone_surrogate", 8, "/0"),
        (
            &["--profile", "i-json"],
            br#"{"k":"\uFFFF"}"#,
            "noncharacter",
            11,
            "/k",
        ),
        (&[], b"[1,]", "syntax", 3, ""),
        (
            &["--schema", &strict],
            br#"{"approved":true,"admin_override":true}"#,
            "schema",
            17,
            "/admin_override",
        ),
        (
            &["--schema", &nested, "--eval-budget", "100"],
            b"[[[[[[[[[[]]]]]]]]]]",
            "budget_exceeded",
            5,
            "/0/0/0/0",
        ),
        (
            &["--schema", &cycle],
            br#"{"ok":1,"loop":{}}"#,
            "schema_cycle",
            15,
            "/loop",
        ),
    ];
    let mut kinds: Vec<&str> = Vec::new();
    for &(flags, input, kind, offset, pointer) in cases {
        let err = rejected(flags, input);
        assert_eq!(err["kind"], json!(kind), "{flags:?} {err}");
        assert_eq!(err["offset"], json!(offset), "{flags:?} {err}");
        assert_eq!(err["pointer"], json!(pointer), "{flags:?} {err}");
        kinds.push(kind);
    }
    // Every kind the help text documents is covered by the table above.
    let help = run(&["--help"], b"").stdout;
    let documented = help.split("ERROR KINDS:").nth(1).unwrap();
    let documented = documented.split("EXIT STATUS:").next().unwrap();
    for kind in documented.split([',', ' ', '\n']).filter(|s| !s.is_empty()) {
        assert!(
            kinds.contains(&kind),
            "kind {kind} not produced through the CLI"
        );
    }
}

/// A document that needs exactly `n` of what `flag` limits.
fn sized_doc(flag: &str, n: usize) -> Vec<u8> {
    let list = |item: &dyn Fn(usize) -> String| (0..n).map(item).collect::<Vec<_>>().join(",");
    let doc = match flag {
        "--max-bytes" => format!("\"{}\"", "a".repeat(n - 2)),
        "--max-depth" => format!("{}{}", "[".repeat(n), "]".repeat(n)),
        "--max-name-bytes" => format!("{{\"{}\":0}}", "n".repeat(n)),
        "--max-string-bytes" => format!("[\"{}\"]", "é".repeat(n / 2) + &"s".repeat(n % 2)),
        "--max-number-bytes" => format!("[-{}]", "9".repeat(n - 1)),
        "--max-members" => format!("{{{}}}", list(&|i| format!("\"m{i}\":{i}"))),
        "--max-items" => format!("[{}]", list(&|i| i.to_string())),
        _ => unreachable!("{flag}"),
    };
    doc.into_bytes()
}

#[test]
fn every_limit_flag_accepts_n_rejects_n_plus_1_and_lifts_with_unlimited() {
    let flags = [
        ("--max-bytes", 10, "too_large"),
        ("--max-depth", 5, "too_deep"),
        ("--max-name-bytes", 6, "name_too_long"),
        ("--max-string-bytes", 7, "string_too_long"),
        ("--max-number-bytes", 4, "number_too_long"),
        ("--max-members", 3, "too_many_members"),
        ("--max-items", 4, "too_many_items"),
    ];
    for (flag, n, kind) in flags {
        let (at_n, over) = (sized_doc(flag, n), sized_doc(flag, n + 1));
        let n_text = n.to_string();
        let inline = format!("{flag}={n}");
        for args in [vec![flag, n_text.as_str()], vec![inline.as_str()]] {
            let (code, v) = check(&args, &at_n);
            assert_eq!(
                code,
                0,
                "{args:?} on {:?}: {v}",
                String::from_utf8_lossy(&at_n)
            );
            let err = rejected(&args, &over);
            assert_eq!(err["kind"], json!(kind), "{args:?}");
            assert!(err["message"].as_str().unwrap().contains(&n_text), "{err}");
        }
        let unlimited = format!("{flag}=unlimited");
        for args in [vec![flag, "unlimited"], vec![unlimited.as_str()]] {
            assert_eq!(check(&args, &over).0, 0, "{args:?}");
        }
    }
}

#[test]
fn the_last_occurrence_of_a_flag_wins() {
    let doc = sized_doc("--max-depth", 3);
    assert_eq!(check(&["--max-depth", "1", "--max-depth=3"], &doc).0, 0);
    assert_eq!(check(&["--max-depth=3", "--max-depth", "2"], &doc).0, 1);
}

#[test]
fn input_from_stdin_dash_and_file_gives_the_same_verdict() {
    for name in ["tool-result.json", "duplicate-approved.json", "deep.json"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        let from_stdin = check(&[], &bytes);
        let from_dash = check(&["-"], &bytes);
        let from_file = check(&[&fixture_arg(name)], b"ignored: stdin is not read");
        assert_eq!(from_stdin, from_dash, "{name}");
        assert_eq!(from_stdin, from_file, "{name}");
    }
    // Options may come after the input argument too.
    let path = fixture_arg("deep.json");
    assert_eq!(check(&[&path, "--max-depth", "200"], b"").0, 0);
    assert_eq!(
        check(&["-", "--max-depth=200"], &std::fs::read(&path).unwrap()).0,
        0
    );
}

#[test]
fn usage_errors_exit_2() {
    let deep = fixture_arg("deep.json");
    let cases: &[(&[&str], &str)] = &[
        (&[], "missing command"),
        (&["frobnicate"], "unknown command"),
        (
            &["check", "--max-dpeth", "3"],
            "unknown option '--max-dpeth'",
        ),
        (&["check", "-x"], "unknown option '-x'"),
        (
            &["check", "--draft", "5"],
            "--draft: '5' is not one of 2020-12, 2019-09, 7, 6, 4",
        ),
        (
            &["check", "--draft"],
            "--draft needs 2020-12, 2019-09, 7, 6 or 4",
        ),
        (&["check", "--max-depth"], "--max-depth needs a value"),
        (
            &["check", "--max-depth", "abc"],
            "not a non-negative integer",
        ),
        (
            &["check", "--max-depth", "-1"],
            "not a non-negative integer",
        ),
        (&["check", "--max-items=1.5"], "not a non-negative integer"),
        (&["check", "--max-bytes="], "'' is not a size"),
        (&["check", "--max-bytes", "12 parsecs"], "is not a size"),
        (
            &["check", "--max-bytes", "18446744073709551616"],
            "is too large (write 'unlimited' for no bound)",
        ),
        (
            &["check", "--max-bytes", "17179869184GiB"],
            "is too large (write 'unlimited' for no bound)",
        ),
        (
            &["check", "--max-depth", "18446744073709551616"],
            "not a non-negative integer",
        ),
        (
            &["check", "--max-members", "Unlimited"],
            "not a non-negative integer",
        ),
        (
            &["check", "-", &deep, "-"],
            "standard input can be read once",
        ),
        (
            &["check", "no/such/file.json"],
            "cannot open 'no/such/file.json'",
        ),
    ];
    for &(args, message) in cases {
        let stderr = usage_error(args, b"[]");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
    // A directory is an I/O error that names it, not a verdict.
    let dir = fixture_arg("");
    assert!(usage_error(&["check", &dir], b"")
        .contains(&format!("cannot read '{dir}': it is a directory")));
}

#[test]
fn help_lists_every_flag_and_default() {
    let defaults = [
        ("--max-bytes", jsongate::DEFAULT_MAX_BYTES),
        ("--max-depth", jsongate::DEFAULT_MAX_DEPTH),
        ("--max-name-bytes", jsongate::DEFAULT_MAX_NAME_BYTES),
        ("--max-string-bytes", jsongate::DEFAULT_MAX_STRING_BYTES),
        ("--max-number-bytes", jsongate::DEFAULT_MAX_NUMBER_BYTES),
        ("--max-members", jsongate::DEFAULT_MAX_MEMBERS),
        ("--max-items", jsongate::DEFAULT_MAX_ITEMS),
    ];
    for args in [&["--help"][..], &["-h"], &["check", "--help"]] {
        let r = run(args, b"");
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
        for (flag, default) in defaults {
            let line = r.stdout.lines().find(|l| l.trim_start().starts_with(flag));
            let line = line.unwrap_or_else(|| panic!("{flag} missing from {args:?}"));
            assert!(line.contains(&format!("[default: {default}")), "{line}");
        }
        for other in ["-h, --help", "unlimited", "check", "FILE", "EXIT STATUS"] {
            assert!(r.stdout.contains(other), "{other} missing from {args:?}");
        }
    }
    let v = run(&["--version"], b"");
    assert_eq!(
        v.stdout,
        format!("jsongate {}\n", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_file_stops_being_read_at_the_verdict() {
    // 20 MB of junk after an early duplicate name: more than the default byte limit, so a
    // scanner that kept reading would report too_large (or a syntax error) instead.
    let head = br#"{"approved":false,"approved":true}"#;
    let dir = tempfile::tempdir().unwrap();
    let mut verdicts = Vec::new();
    for (i, junk) in [&b"\0"[..], b"[", b" ", b"\xff"].into_iter().enumerate() {
        let path = dir.path().join(format!("junk{i}.json"));
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        f.write_all(head).unwrap();
        for _ in 0..20 {
            f.write_all(&junk.repeat(1 << 20)).unwrap();
        }
        f.into_inner().unwrap().sync_all().unwrap();
        let (_, v) = check(&[path.to_str().unwrap()], b"");
        assert_eq!(v["error"]["kind"], json!("duplicate_name"), "{v}");
        assert_eq!(
            v["bytes_read"],
            json!(v["error"]["offset"].as_u64().unwrap() + 1)
        );
        verdicts.push(v);
    }
    assert!(verdicts.windows(2).all(|w| w[0] == w[1]), "{verdicts:?}");
    assert_eq!(verdicts[0]["bytes_read"], json!(28));
}

#[test]
fn stdin_stops_being_read_at_the_verdict() {
    // The writer offers 256 MiB; the binary must exit after the first chunk, so the pipe
    // breaks long before that.
    let mut child = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .arg("check")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let block = vec![b'['; 1 << 20];
    let mut written = 0usize;
    let _ = stdin.write_all(b"[1,,");
    while written < 256 << 20 {
        if stdin.write_all(&block).is_err() {
            break;
        }
        written += block.len();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bytes_read"], json!(4), "{v}");
    assert_eq!(v["error"]["offset"], json!(3), "{v}");
    assert!(
        written < 16 << 20,
        "the binary kept reading: {written} bytes accepted"
    );
}

/// `--draft` names the dialect of a schema without `$schema`, and of the resources it
/// reaches: draft-04's boolean `exclusiveMaximum` is refused as 2020-12, read as draft-04.
#[test]
fn draft_names_the_dialect_of_schema_and_resources() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    let remote = dir.path().join("r.json");
    std::fs::write(&schema, r#"{"$ref":"http://example.com/r.json"}"#).unwrap();
    std::fs::write(&remote, r#"{"maximum":3,"exclusiveMaximum":true}"#).unwrap();
    let s = schema.to_str().unwrap();
    let res = format!("http://example.com/r.json={}", remote.display());
    let base = ["--schema", s, "--resource", &res];
    let with = |draft: &'static str| {
        let mut a = base.to_vec();
        a.extend(["--draft", draft]);
        a
    };
    assert_eq!(check(&with("4"), b"2").0, 0);
    assert_eq!(check(&with("4"), b"3").0, 1);
    assert_eq!(check(&with("draft-04"), b"3").0, 1);
    // As 2020-12 the resource's `exclusiveMaximum: true` is no number.
    let e = usage_error(&[&["check"][..], &base].concat(), b"3");
    assert!(e.contains("exclusiveMaximum"), "{e}");
}
