//! The documents' code blocks, run so that they cannot rot: README.md and every file under
//! `docs/`.
//!
//! - ```` ```console ````: each `$ COMMAND` (a line ending in `\` continues it) runs with
//!   `sh -c` in one scratch folder per document (so a later block sees the files an earlier
//!   one wrote), with `fixtures/` and `tests/` of the checkout linked into it and the built
//!   `jsongate` first on `PATH`. The lines up to the next `$` are its standard output, exactly;
//!   `[..]` in a line matches any text, a line `...` any number of lines, and a last line
//!   `[exit N]` the exit status (0 when absent).
//! - ```` ```json ````: one JSON document, or JSON lines, each strict under the crate's scanner.
//! - ```` ```sh ````: commands that need what a test cannot have (an installation, a network
//!   server, a secret store). They are checked with `sh -n`, and every `--flag` given to a
//!   `jsongate` command must be one that command's `--help` lists.
//! - ```` ```rust ````: doctests (`src/lib.rs` includes the documents); ```` ```python ````:
//!   run by the Python package's tests (`python/tests/test_docs.py`).
//! - Every block names its language; ```` ```text ```` is prose laid out (a diagram, a
//!   synopsis, output shown on its own).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const LANGUAGES: &[&str] = &["console", "json", "sh", "rust", "python", "text", "toml"];

struct Block {
    file: PathBuf,
    line: usize,
    lang: String,
    body: Vec<String>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![root().join("README.md")];
    walk(&root().join("docs"), &mut out);
    out
}

fn blocks(file: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    file: file.to_path_buf(),
                    line: i + 1,
                    lang: info.trim().to_string(),
                    body: Vec::new(),
                });
            }
            (Some(_), Some("")) => out.push(open.take().unwrap()),
            (Some(b), _) => b.body.push(line.to_string()),
            (None, None) => {}
        }
    }
    assert!(
        open.is_none(),
        "{}: a code block is never closed",
        file.display()
    );
    out
}

fn all_blocks() -> Vec<Block> {
    documents().iter().flat_map(|f| blocks(f)).collect()
}

fn at(b: &Block) -> String {
    format!(
        "{}:{}",
        b.file.strip_prefix(root()).unwrap_or(&b.file).display(),
        b.line
    )
}

#[test]
fn every_block_names_a_known_language() {
    let blocks = all_blocks();
    assert!(blocks.len() > 40, "only {} blocks found", blocks.len());
    for b in &blocks {
        assert!(
            LANGUAGES.contains(&b.lang.as_str()),
            "{}: block language {:?} is not one of {LANGUAGES:?}",
            at(b),
            b.lang
        );
    }
}

/// `[..]` matches any text within the line.
fn line_matches(pattern: &str, actual: &str) -> bool {
    let parts: Vec<&str> = pattern.split("[..]").collect();
    if parts.len() == 1 {
        return pattern == actual;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !actual.starts_with(first) || actual.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &actual[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// A line `...` matches any number of lines.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => {
            (0..=actual.len()).any(|k| lines_match(rest, &actual[k..]))
        }
        Some((e, rest)) => {
            !actual.is_empty() && line_matches(e, actual[0]) && lines_match(rest, &actual[1..])
        }
    }
}

struct Step {
    command: String,
    output: Vec<String>,
    status: i32,
}

fn steps(b: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = b.body.iter();
    while let Some(line) = lines.next() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let mut command = cmd.to_string();
            while command.ends_with('\\') {
                command.pop();
                command.push(' ');
                command.push_str(lines.next().expect("a continued command").trim_start());
            }
            out.push(Step {
                command,
                output: Vec::new(),
                status: 0,
            });
            continue;
        }
        let step = out
            .last_mut()
            .unwrap_or_else(|| panic!("{}: output before the first `$ `", at(b)));
        if let Some(n) = line
            .strip_prefix("[exit ")
            .and_then(|r| r.strip_suffix(']'))
        {
            step.status = n.parse().expect("[exit N]");
        } else {
            step.output.push(line.clone());
        }
    }
    out
}

fn scratch() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for name in ["fixtures", "tests"] {
        #[cfg(unix)]
        std::os::unix::fs::symlink(root().join(name), dir.path().join(name)).unwrap();
        #[cfg(not(unix))]
        let _ = name;
    }
    dir
}

fn path_with_jsongate() -> std::ffi::OsString {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_jsongate"));
    let mut paths = vec![bin.parent().unwrap().to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

#[cfg(unix)]
#[test]
fn every_console_block_runs_and_prints_what_it_shows() {
    let path = path_with_jsongate();
    let mut by_file: BTreeMap<PathBuf, Vec<Block>> = BTreeMap::new();
    for b in all_blocks().into_iter().filter(|b| b.lang == "console") {
        by_file.entry(b.file.clone()).or_default().push(b);
    }
    assert!(
        by_file.len() >= 3,
        "console blocks in {} documents only",
        by_file.len()
    );
    let mut ran = 0;
    for blocks in by_file.values() {
        let dir = scratch();
        for b in blocks {
            let steps = steps(b);
            assert!(!steps.is_empty(), "{}: a console block without `$ `", at(b));
            for s in steps {
                let out = Command::new("sh")
                    .arg("-c")
                    .arg(&s.command)
                    .current_dir(dir.path())
                    .env("PATH", &path)
                    .stdin(Stdio::null())
                    .output()
                    .unwrap();
                let stdout = String::from_utf8_lossy(&out.stdout);
                let actual: Vec<&str> = stdout.lines().collect();
                let status = out.status.code().unwrap_or(-1);
                assert!(
                    status == s.status && lines_match(&s.output, &actual),
                    "{}: `{}`\nexpected (exit {}):\n{}\nactual (exit {status}):\n{stdout}\nstderr:\n{}",
                    at(b),
                    s.command,
                    s.status,
                    s.output.join("\n"),
                    String::from_utf8_lossy(&out.stderr)
                );
                ran += 1;
            }
        }
    }
    assert!(ran >= 10, "only {ran} commands ran");
}

#[test]
fn every_json_block_is_strict_json() {
    let limits = jsongate::Limits::new;
    let mut n = 0;
    for b in all_blocks().into_iter().filter(|b| b.lang == "json") {
        let text = b.body.join("\n");
        if jsongate::check(text.as_bytes(), limits()).is_ok() {
            n += 1;
            continue;
        }
        for (i, line) in b
            .body
            .iter()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
        {
            if let Err(e) = jsongate::check(line.as_bytes(), limits()) {
                panic!(
                    "{} (line {} of the block): neither one JSON document nor JSON lines: {e}",
                    at(&b),
                    i + 1
                );
            }
        }
        n += 1;
    }
    assert!(n > 10, "only {n} json blocks");
}

/// The `jsongate` words of a shell line: the subcommand path and the flags given to it.
fn jsongate_invocations(script: &str) -> Vec<(Vec<String>, Vec<String>)> {
    let joined = script.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let line = line.split(" #").next().unwrap_or(line);
        for segment in line.split(['|', ';', '&']) {
            let words: Vec<&str> = segment.split_whitespace().collect();
            let Some(start) = words.iter().position(|w| *w == "jsongate") else {
                continue;
            };
            let mut path = Vec::new();
            let mut flags = Vec::new();
            for w in &words[start + 1..] {
                if *w == "--" || w.starts_with('>') || w.starts_with('<') {
                    break;
                }
                if let Some(flag) = w.strip_prefix("--") {
                    flags.push(format!("--{}", flag.split('=').next().unwrap()));
                } else if flags.is_empty()
                    && w.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                    && !w.is_empty()
                {
                    path.push((*w).to_string());
                }
            }
            out.push((path, flags));
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn every_sh_block_parses_and_uses_only_real_flags() {
    let mut help: BTreeMap<Vec<String>, String> = BTreeMap::new();
    let mut checked = 0;
    for b in all_blocks().into_iter().filter(|b| b.lang == "sh") {
        let script = b.body.join("\n");
        let syntax = Command::new("sh")
            .arg("-n")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        assert!(
            syntax.status.success(),
            "{}: not valid sh: {}",
            at(&b),
            String::from_utf8_lossy(&syntax.stderr)
        );
        for (mut path, flags) in jsongate_invocations(&script) {
            // Positional arguments (file names, shells) are not subcommands.
            let text = loop {
                let text = help.entry(path.clone()).or_insert_with(|| {
                    let out = Command::new(env!("CARGO_BIN_EXE_jsongate"))
                        .args(&path)
                        .arg("--help")
                        .output()
                        .unwrap();
                    if out.status.success() {
                        String::from_utf8_lossy(&out.stdout).into_owned()
                    } else {
                        String::new()
                    }
                });
                if !text.is_empty() || path.is_empty() {
                    break text.clone();
                }
                path.pop();
            };
            for flag in flags {
                assert!(
                    text.contains(&format!("{flag} "))
                        || text.contains(&format!("{flag}\n"))
                        || text.contains(&format!("{flag}="))
                        || text.contains(&format!("{flag},")),
                    "{}: `jsongate {}` has no option {flag}",
                    at(&b),
                    path.join(" ")
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 20, "only {checked} flags checked");
}

/// GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped,
/// spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

fn anchors(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            out.push(anchor(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_resolves() {
    let mut checked = 0;
    for file in documents() {
        let text = std::fs::read_to_string(&file).unwrap();
        let mut fenced = false;
        for line in text.lines() {
            if line.starts_with("```") {
                fenced = !fenced;
                continue;
            }
            if fenced {
                continue;
            }
            for (i, _) in line.match_indices("](") {
                let rest = &line[i + 2..];
                let Some(end) = rest.find(')') else { continue };
                let target = &rest[..end];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, frag) = target.split_once('#').unwrap_or((target, ""));
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap().join(path)
                };
                assert!(
                    dest.exists(),
                    "{}: link to missing {target}",
                    file.display()
                );
                if !frag.is_empty() {
                    assert!(
                        anchors(&dest).iter().any(|a| a == frag),
                        "{}: no heading for #{frag} in {}",
                        file.display(),
                        dest.display()
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 30, "only {checked} links checked");
}

#[test]
fn the_line_matcher_is_strict() {
    assert!(line_matches("a[..]c", "abbbc"));
    assert!(line_matches("a[..]c", "ac"));
    assert!(!line_matches("a[..]c", "abbb"));
    assert!(!line_matches("abc", "abcd"));
    assert!(!line_matches("a[..]b[..]c", "acb"));
    assert!(!line_matches("ab[..]ba", "aba"));
    let lines = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
    assert!(lines_match(
        &lines(&["x", "...", "z"]),
        &["x", "y", "y", "z"]
    ));
    assert!(lines_match(&lines(&["x", "...", "z"]), &["x", "z"]));
    assert!(!lines_match(&lines(&["x", "...", "z"]), &["x", "y"]));
    assert!(!lines_match(&lines(&["x"]), &["x", "y"]));
}
