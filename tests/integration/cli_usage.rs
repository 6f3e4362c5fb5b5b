//! The command line as a conventional tool: every subcommand's own `--help` (exit 0, only its
//! options), `--flag=value` beside `--flag value`, `-` for standard input wherever a file is
//! read (and one reader of it at most), `--version`, the shell completions and the man page,
//! usage errors (exit 2, `jsongate: ` on stderr), and `check --lines` for NDJSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use super::common::{run_in, Run};

fn run(args: &[&str], stdin: &[u8]) -> Run {
    run_in(None, args, stdin)
}

fn fixture(rel: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
        .to_str()
        .expect("UTF-8 path")
        .to_owned()
}

/// A usage or configuration error: exit 2, nothing on stdout, `jsongate: ` first on stderr.
fn usage_error(args: &[&str], stdin: &[u8]) -> String {
    let r = run(args, stdin);
    assert_eq!(
        r.code, 2,
        "{args:?}: stdout {:?} stderr {:?}",
        r.stdout, r.stderr
    );
    assert_eq!(r.stdout, "", "{args:?}");
    assert!(
        r.stderr.starts_with("jsongate: "),
        "{args:?}: {:?}",
        r.stderr
    );
    r.stderr
}

/// Every subcommand (and sub-subcommand) with one option only it has, and one it has not.
const SUBCOMMANDS: &[(&[&str], &str, &str)] = &[
    (&["check"], "--max-depth", "--contract"),
    (&["gate"], "--request-id", "--max-depth"),
    (&["contract"], "envelope-schema", "--max-depth"),
    (&["contract", "test"], "DIR", "--max-depth"),
    (&["contract", "diff"], "OLD", "--request-id"),
    (
        &["contract", "schema"],
        "Usage: jsongate contract schema",
        "--max-depth",
    ),
    (
        &["contract", "envelope-schema"],
        "--contract",
        "--request-id",
    ),
    (&["render"], "FILE", "--max-depth"),
    (&["screen"], "--contract", "--max-depth"),
    (&["decide"], "--grants", "--max-depth"),
    (&["approve"], "--deny", "--grants"),
    (&["mcp-proxy"], "--screen-tools", "--request-id"),
    (&["mcp-pin"], "--out", "--screen-tools"),
    (&["pin"], "diff", "--max-depth"),
    (&["pin", "diff"], "OLD", "--max-depth"),
    (
        &["pin", "schema"],
        "Usage: jsongate pin schema",
        "--max-depth",
    ),
    (&["serve"], "--config", "--max-depth"),
    (
        &["serve", "schema"],
        "Usage: jsongate serve schema",
        "--config",
    ),
    (&["policy"], "schema", "--max-depth"),
    (
        &["policy", "schema"],
        "Usage: jsongate policy schema",
        "--max-depth",
    ),
    (&["decision"], "schema", "--max-depth"),
    (&["alerts"], "schema", "--max-depth"),
    (&["plan"], "schema", "--max-depth"),
    (&["completions"], "SHELL", "--max-depth"),
    (&["man"], "--dir", "--max-depth"),
];

#[test]
fn every_subcommand_has_its_own_help_and_exits_0() {
    for &(sub, has, has_not) in SUBCOMMANDS {
        for help in ["--help", "-h"] {
            let args = [sub, &[help]].concat();
            let r = run(&args, b"");
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
            let usage = format!("Usage: jsongate {}", sub.join(" "));
            assert!(r.stdout.contains(&usage), "{args:?}: {}", r.stdout);
            assert!(r.stdout.contains(has), "{has} missing from {args:?}");
            assert!(
                !r.stdout.contains(has_not),
                "{has_not} in {args:?}: the help of another subcommand"
            );
        }
        // `jsongate help SUB` says the same.
        let mut args = vec!["help"];
        args.extend_from_slice(sub);
        let r = run(&args, b"");
        assert_eq!(r.code, 0, "{args:?}");
        assert!(r.stdout.contains(has), "{has} missing from {args:?}");
    }
    // The top-level help lists every subcommand with a one-line description.
    let top = run(&["--help"], b"").stdout;
    for &(sub, ..) in SUBCOMMANDS.iter().filter(|(s, ..)| s.len() == 1) {
        let line = top
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{} ", sub[0])))
            .unwrap_or_else(|| panic!("{} missing from --help", sub[0]));
        assert!(line.split_whitespace().count() > 2, "{line}");
    }
}

#[test]
fn version_and_short_version() {
    for flag in ["--version", "-V"] {
        let r = run(&[flag], b"");
        assert_eq!(r.code, 0);
        assert_eq!(
            r.stdout,
            format!("jsongate {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
}

#[test]
fn flag_equals_value_works_on_every_subcommand() {
    let contract = fixture("gate/review-status/contract.json");
    let response = fixture("gate/review-status/responses/approved.json");
    let spaced = run(
        &[
            "gate",
            "--contract",
            &contract,
            "--request-id",
            "r1",
            "--context",
            "change_id=c-42",
            &response,
        ],
        b"",
    );
    let c = format!("--contract={contract}");
    let joined = run(
        &[
            "gate",
            &c,
            "--request-id=r1",
            "--context=change_id=c-42",
            &response,
        ],
        b"",
    );
    assert_eq!(spaced.code, 0, "{}", spaced.stderr);
    assert_eq!(
        (joined.code, &joined.stdout),
        (0, &spaced.stdout),
        "{}",
        joined.stderr
    );

    let policy = fixture("action/policy.json");
    let call = fixture("action/calls/read_inbox.json");
    let spaced = run(
        &[
            "decide",
            "--policy",
            &policy,
            "--grants",
            "read_inbox",
            &call,
        ],
        b"",
    );
    let p = format!("--policy={policy}");
    let joined = run(&["decide", &p, "--grants=read_inbox", &call], b"");
    assert_eq!((joined.code, &joined.stdout), (spaced.code, &spaced.stdout));
    assert!(joined.stdout.contains("\"decision\""), "{}", joined.stdout);
    // An empty value is a value.
    let empty = run(&["decide", &p, "--grants=", &call], b"");
    let spaced_empty = run(&["decide", &p, "--grants", "", &call], b"");
    assert_eq!(empty.stdout, spaced_empty.stdout);

    let sc = fixture("action/screen/contract.json");
    let ticket = fixture("action/screen/ticket.json");
    let spaced = run(&["screen", "--contract", &sc, &ticket], b"");
    let joined = run(&["screen", &format!("--contract={sc}"), &ticket], b"");
    assert_eq!((joined.code, &joined.stdout), (spaced.code, &spaced.stdout));

    let e = format!("--contract={contract}");
    let r = run(&["contract", "envelope-schema", &e], b"");
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with('{'));

    // Options that fail are reported the same way in both spellings.
    for args in [
        &["mcp-proxy", "--screen=maybe", "--", "true"][..],
        &["mcp-proxy", "--screen", "maybe", "--", "true"],
    ] {
        assert!(usage_error(args, b"").contains("--screen: 'maybe' is not flag, redact or reject"));
    }
    let e = usage_error(
        &["serve", "--listen=nowhere", "--config=/no/such.json"],
        b"",
    );
    assert!(e.contains("/no/such.json"), "{e}");
    let e = usage_error(&["approve", "abc", "--state=/no/such/dir/state.json"], b"");
    assert!(e.contains("--state"), "{e}");
    for args in [
        &["mcp-pin", "--timeout=0", "--out=x.lock", "--", "true"][..],
        &["mcp-pin", "--timeout", "0", "--out", "x.lock", "--", "true"],
    ] {
        assert!(usage_error(args, b"").contains("--timeout: '0' is not a positive integer"));
    }
}

#[test]
fn dash_reads_schema_and_document_from_standard_input() {
    let schema = std::fs::read(fixture("tool-result.schema.json")).unwrap();
    let injected = fixture("tool-result-injected.json");
    let from_file = run(
        &[
            "check",
            "--schema",
            &fixture("tool-result.schema.json"),
            &injected,
        ],
        b"",
    );
    let from_stdin = run(&["check", "--schema", "-", &injected], &schema);
    assert_eq!(from_file.code, 1);
    assert_eq!(
        (from_stdin.code, &from_stdin.stdout),
        (1, &from_file.stdout),
        "{}",
        from_stdin.stderr
    );
    // The document from standard input with the schema from a file: `-` or nothing.
    let doc = std::fs::read(&injected).unwrap();
    let s = fixture("tool-result.schema.json");
    assert_eq!(
        run(&["check", "--schema", &s, "-"], &doc).stdout,
        from_file.stdout
    );
    assert_eq!(
        run(&["check", "--schema", &s], &doc).stdout,
        from_file.stdout
    );
    // Both from standard input is refused before anything is read.
    for args in [
        &["check", "--schema", "-"][..],
        &["check", "--schema", "-", "-"],
        &["check", "--schema=-", "--resource", "urn:x=-", &injected],
    ] {
        let e = usage_error(args, &schema);
        assert!(
            e.contains("standard input can be read once"),
            "{args:?}: {e}"
        );
    }
    // `-` for configuration files elsewhere: a contract, a policy, lockfiles.
    let dir = fixture("gate/review-status");
    let contract = std::fs::read(fixture("gate/review-status/contract.json")).unwrap();
    let r = run_in(
        Some(Path::new(&dir)),
        &[
            "gate",
            "--contract",
            "-",
            "--request-id",
            "r1",
            "--context",
            "change_id=c-42",
            "responses/approved.json",
        ],
        &contract,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("\"outcome\":\"success\""), "{}", r.stdout);
    let e = usage_error(
        &["gate", "--contract", "-", "--request-id", "r1"],
        &contract,
    );
    assert!(e.contains("standard input can be read once"), "{e}");
    let policy = std::fs::read(fixture("action/policy.json")).unwrap();
    let call = fixture("action/calls/read_inbox.json");
    let from_file = run(
        &[
            "decide",
            "--policy",
            &fixture("action/policy.json"),
            "--grants",
            "read_inbox",
            &call,
        ],
        b"",
    );
    let r = run(
        &["decide", "--policy", "-", "--grants", "read_inbox", &call],
        &policy,
    );
    assert_eq!(
        (r.code, &r.stdout),
        (from_file.code, &from_file.stdout),
        "{}",
        r.stderr
    );
    let r = run(
        &["contract", "envelope-schema", "--contract", "-"],
        &contract,
    );
    assert_eq!(
        r.code, 2,
        "a relative schema_file read from the current directory: {}",
        r.stdout
    );
    let r = run_in(
        Some(Path::new(&dir)),
        &["contract", "envelope-schema", "--contract", "-"],
        &contract,
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let e = usage_error(&["contract", "diff", "-", "-"], &contract);
    assert!(e.contains("standard input can be read once"), "{e}");
    // Over stdio, mcp-proxy's standard input is the protocol.
    let e = usage_error(&["mcp-proxy", "--policy", "-", "--", "true"], &policy);
    assert!(e.contains("standard input carries the MCP messages"), "{e}");
}

#[test]
fn usage_errors_name_the_problem_and_the_subcommand() {
    let cases: &[(&[&str], &str)] = &[
        (&["gate", "--contract", "c.json"], "gate needs --request-id"),
        (&["decide", "--grants", "a"], "decide needs --policy"),
        (
            &["contract"],
            "contract needs 'test', 'diff', 'lint', 'schema' or 'envelope-schema'",
        ),
        (&["policy"], "policy needs 'schema'"),
        (&["pin", "diff", "a"], "pin diff needs"),
        (&["chek"], "unknown command 'chek' (did you mean 'check'?)"),
        (
            &["check", "--max-dept=3"],
            "unknown option '--max-dept' (did you mean '--max-depth'?)",
        ),
        (
            &["check", "--output", "verbose"],
            "--output: 'verbose' is not flag, basic or detailed",
        ),
        (&["check", "--profile"], "--profile needs rfc8259 or i-json"),
        (
            &["check", "--lines", "--output", "flag"],
            "cannot be used with",
        ),
        (
            &["completions", "tcsh"],
            "SHELL: 'tcsh' is not bash, elvish, fish, powershell or zsh",
        ),
        (
            &[
                "decide",
                "--policy",
                "p",
                "--grants",
                "a",
                "--on-state-error",
                "maybe",
            ],
            "deny or allow",
        ),
        (&["mcp-proxy", "--max-depth", "3"], "-- SERVER_COMMAND"),
        (
            &["mcp-pin", "--out", "x.lock"],
            "mcp-pin needs -- SERVER_COMMAND",
        ),
        (&["approve", "abc"], "approve needs --state"),
    ];
    for &(args, message) in cases {
        let stderr = usage_error(args, b"");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        let sub = args[0];
        if sub != "chek" {
            assert!(
                stderr.contains(&format!("Try 'jsongate {sub}")),
                "{args:?}: {stderr}"
            );
        }
    }
}

#[test]
fn completions_for_each_shell_are_scripts_the_shell_parses() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let r = run(&["completions", shell], b"");
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{shell}");
        for sub in ["check", "mcp-proxy", "max-depth"] {
            assert!(r.stdout.contains(sub), "{shell}: {sub} missing");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("completion");
        std::fs::write(&path, &r.stdout).unwrap();
        let check: Option<(&str, &[&str])> = match shell {
            "bash" => Some(("bash", &["-n"])),
            "zsh" => Some(("zsh", &["-n"])),
            "fish" => Some(("fish", &["--no-execute"])),
            _ => None,
        };
        let Some((bin, flags)) = check else { continue };
        match Command::new(bin)
            .args(flags)
            .arg(&path)
            .stderr(Stdio::piped())
            .output()
        {
            Ok(out) => assert!(
                out.status.success(),
                "{bin} does not parse the completion: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
            Err(_) => eprintln!("SKIPPED: {bin} is not installed: its completion is not parsed"),
        }
    }
    // Bash really completes with it: subcommands, then a subcommand's options.
    let script = run(&["completions", "bash"], b"").stdout;
    let probe = format!(
        "{script}\nCOMP_WORDS=(jsongate che); COMP_CWORD=1; _jsongate jsongate che jsongate; \
         echo \"${{COMPREPLY[@]}}\"\nCOMP_WORDS=(jsongate check --max-d); COMP_CWORD=2; \
         _jsongate jsongate --max-d check; echo \"${{COMPREPLY[@]}}\"\n"
    );
    let out = Command::new("bash").arg("-c").arg(&probe).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("check"), "{text}");
    assert_eq!(lines.next(), Some("--max-depth"), "{text}");
}

#[test]
fn the_man_page_renders() {
    let r = run(&["man"], b"");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""));
    assert!(
        r.stdout.starts_with(".ie \\n(.g .ds Aq") || r.stdout.contains(".TH jsongate 1"),
        "{}",
        &r.stdout[..200.min(r.stdout.len())]
    );
    assert!(r.stdout.contains(".TH jsongate 1"));
    for sub in ["check", "mcp\\-proxy", "decide"] {
        assert!(r.stdout.contains(sub), "{sub} missing from the man page");
    }
    // Every command's own page follows, with its options: a subcommand's flag, a nested
    // subcommand's page, and no page for clap's `help`.
    for page in [
        ".TH jsongate-check 1",
        ".TH jsongate-mcp-proxy 1",
        ".TH jsongate-contract-diff 1",
    ] {
        assert!(r.stdout.contains(page), "{page} missing from the man page");
    }
    assert!(
        r.stdout.contains("\\-\\-screen\\-tools"),
        "mcp-proxy options missing"
    );
    assert!(!r.stdout.contains(".TH jsongate-help"));
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["man", "--dir", dir.path().to_str().unwrap()], b"");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let check = dir.path().join("jsongate-check.1");
    let page = std::fs::read_to_string(&check).expect("jsongate-check.1 written");
    assert!(page.contains("max\\-depth"), "{page}");
    assert!(dir.path().join("jsongate.1").exists());
    assert!(dir.path().join("jsongate-contract-diff.1").exists());
    match Command::new("groff")
        .args(["-man", "-Tutf8", "-ww"])
        .arg(&check)
        .output()
    {
        Ok(out) => {
            assert!(out.status.success());
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("max-depth"), "{text}");
            assert!(text.contains("EXIT STATUS"), "{text}");
        }
        Err(_) => eprintln!("SKIPPED: groff is not installed: the man page is not rendered"),
    }
}

/// `check --lines ARGS` on `input`: the exit code and the verdict lines, parsed.
fn lines(args: &[&str], input: &[u8]) -> (i32, Vec<Value>) {
    let mut all = vec!["check", "--lines"];
    all.extend_from_slice(args);
    let r = run(&all, input);
    assert_eq!(r.stderr, "", "{args:?}");
    let v = r
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("verdict line is JSON"))
        .collect();
    (r.code, v)
}

#[test]
fn lines_gives_one_verdict_per_line_and_the_worst_exit_code() {
    let (code, v) = lines(&[], b"{\"a\":1}\n[1,2]\n\"x\"\n");
    assert_eq!(code, 0);
    assert_eq!(
        v,
        vec![
            json!({"line": 1, "valid": true, "bytes_read": 7}),
            json!({"line": 2, "valid": true, "bytes_read": 5}),
            json!({"line": 3, "valid": true, "bytes_read": 3}),
        ]
    );
    // The exact bytes of a line: the line number, then check's verdict.
    let r = run(&["check", "--lines"], b"{\"a\":1,\"a\":2}\n");
    assert_eq!(
        r.stdout,
        "{\"line\":1,\"valid\":false,\"bytes_read\":10,\"error\":{\"kind\":\"duplicate_name\",\
         \"offset\":9,\"line\":1,\"column\":10,\"pointer\":\"/a\",\"message\":\"duplicate member name\"}}\n"
    );
    assert_eq!(r.code, 1);

    // Invalid only, and mixed: exit 1, every line judged on its own.
    let (code, v) = lines(&[], b"[1,]\n{\"a\":\n");
    assert_eq!(code, 1);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0]["error"]["kind"], json!("syntax"));
    assert_eq!(v[1]["error"]["kind"], json!("syntax"));
    let (code, v) = lines(&[], b"[1]\n[1,]\n{}\n");
    assert_eq!(code, 1);
    let valid: Vec<_> = v.iter().map(|x| x["valid"].clone()).collect();
    assert_eq!(valid, vec![json!(true), json!(false), json!(true)]);
    assert_eq!(
        v[1]["error"]["offset"],
        json!(3),
        "offsets are within the line"
    );

    // A final line without a newline counts; empty lines are skipped but counted; CRLF ends
    // are whitespace; no input is no verdict.
    let (code, v) = lines(&[], b"\n[1]\r\n\r\n\n  \n{}");
    assert_eq!(code, 1, "a line of spaces is a document without a value");
    let numbers: Vec<_> = v.iter().map(|x| x["line"].clone()).collect();
    assert_eq!(numbers, vec![json!(2), json!(5), json!(6)]);
    assert_eq!(v[0]["valid"], json!(true));
    assert_eq!(v[1]["error"]["kind"], json!("syntax"));
    assert_eq!(v[2], json!({"line": 6, "valid": true, "bytes_read": 2}));
    assert_eq!(lines(&[], b""), (0, vec![]));
    assert_eq!(lines(&[], b"\n\n"), (0, vec![]));
}

#[test]
fn lines_apply_the_limits_and_the_schema_to_each_line() {
    // Each line has the whole budget: three lines of 8 bytes pass --max-bytes 8.
    let (code, v) = lines(&["--max-bytes=8"], b"[1,2,33]\n[4,5,66]\n\"123456\"\n");
    assert_eq!(code, 0, "{v:?}");
    assert_eq!(v.len(), 3);
    let (code, v) = lines(&["--max-bytes", "8"], b"[1,2,333]\n[1]\n");
    assert_eq!(code, 1);
    assert_eq!(v[0]["error"]["kind"], json!("too_large"));
    assert_eq!(v[0]["bytes_read"], json!(8));
    assert_eq!(v[1], json!({"line": 2, "valid": true, "bytes_read": 3}));
    let (_, v) = lines(&["--max-depth=2"], b"[[1]]\n[[[1]]]\n");
    assert_eq!(v[0]["valid"], json!(true));
    assert_eq!(v[1]["error"]["kind"], json!("too_deep"));

    // With a schema (and several errors collected), every line validated on its own.
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("s.json");
    std::fs::write(&schema, br#"{"items":{"type":"integer"}}"#).unwrap();
    let s = schema.to_str().unwrap();
    let (code, v) = lines(
        &["--schema", s, "--errors=3"],
        b"[1,2]\n[1,\"a\",\"b\"]\n[3]\n",
    );
    assert_eq!(code, 1);
    assert_eq!(v[0]["valid"], json!(true));
    assert_eq!(v[1]["error"]["keyword"], json!("type"));
    assert_eq!(v[1]["errors"].as_array().map(Vec::len), Some(2));
    assert_eq!(v[2]["valid"], json!(true));

    // A file, standard input and `-` agree.
    let path = dir.path().join("in.ndjson");
    std::fs::write(&path, b"[1]\n[1,]\n").unwrap();
    let p = path.to_str().unwrap();
    assert_eq!(lines(&[p], b""), lines(&["-"], b"[1]\n[1,]\n"));
    assert_eq!(lines(&[], b"[1]\n[1,]\n"), lines(&["-"], b"[1]\n[1,]\n"));
}
