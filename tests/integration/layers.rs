//! The crate's layers depend one way only. Each module may use the modules of lower layers,
//! never one of its own layer or above, so there is no cycle:
//!
//! base (`builder`, `error`, `fsx`, `limits`, `pointer`) ← `scan` ← `json` ← `schema` ← `validate` ←
//! `config` ← `select` ← `verdict` ← `state` ← `screen` ← `gate` | `action` ← `http` ← `mcp`
//!
//! (the MCP relay's Streamable HTTP transport reads content types with `http`'s helper; the
//! binary, `main.rs`, sits on top and may use anything). Read from the sources: every
//! `crate::…` path outside the test modules (at the end of each file), with the crate-root
//! re-exports (`crate::Schema`, `crate::Validator`, …) mapped to the module that defines
//! them. The checker itself is tested on synthetic sources with an upward, a sideways and a
//! downward edge, so that a reader that stopped finding paths would fail too.

use std::collections::BTreeSet;
use std::path::Path;

const LAYERS: &[&[&str]] = &[
    &["builder", "error", "fsx", "limits", "pointer", "tls"],
    &["scan"],
    &["json"],
    &["schema"],
    &["validate"],
    &["config"],
    &["select"],
    &["verdict", "de"],
    &["state", "auth"],
    &["screen"],
    &["gate", "action"],
    &["http"],
    &["mcp"],
];

/// The module of a crate-root name.
fn module_of(name: &str) -> Option<&'static str> {
    Some(match name {
        "Error" | "ErrorKind" | "Syntax" => "error",
        "Limits" | "UNLIMITED" => "limits",
        "Event" | "Flow" | "Ignore" | "Number" | "NumberError" | "NumberErrorKind" | "Outcome"
        | "Position" | "Scanner" | "Sink" | "READ_CHUNK" => "scan",
        "CompileBudget" | "CompileError" | "CompileErrorKind" | "Draft" | "Schema"
        | "SchemaOptions" => "schema",
        "Rejection" | "Validator" | "Violation" | "OutputFormat" | "Watcher" => "validate",
        "verdict_json" | "JsonLines" | "LineVerdict" => "verdict",
        "from_slice" | "from_slice_with" | "from_reader" | "Tape" | "TypedError" | "Mismatch" => {
            "de"
        }
        n if n.starts_with("DEFAULT_MAX_SCHEMA")
            || n.starts_with("DEFAULT_EVAL")
            || n == "DEFAULT_MAX_ANCHORS"
            || n == "DEFAULT_MAX_REF_DEPTH"
            || n == "DEFAULT_MAX_COMPILE_STEPS" =>
        {
            "schema"
        }
        n if n.starts_with("DEFAULT_MAX") => "limits",
        n => LAYERS.iter().flat_map(|l| l.iter()).find(|m| **m == n)?,
    })
}

fn rank(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module {module} is in no layer"))
}

/// The source without its trailing test module and without comments.
fn code(text: &str) -> String {
    let body = text.split("#[cfg(test)]\nmod tests").next().unwrap_or(text);
    body.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segments named after every `crate::` in `code`.
fn uses(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split at commas outside nested braces.
            let (mut depth, mut item_start, mut end) = (0, true, group.len());
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        end = i;
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if item_start && !c.is_whitespace() => {
                        item_start = false;
                        out.insert(ident(&group[i..]));
                    }
                    _ => {}
                }
            }
            let _ = end;
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

/// The edges of `module`'s source `text` that go up or sideways, as
/// `"{file} uses crate::{name} ({target})"`.
fn bad_edges(module: &str, file: &str, text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for used in uses(&code(text)) {
        let Some(target) = module_of(&used) else {
            continue;
        };
        if target != module && rank(target) >= rank(module) {
            out.push(format!("{file} uses crate::{used} ({target})"));
        }
    }
    out
}

/// Every `.rs` file of `module` under `src`: `src/{module}.rs` and the files of `src/{module}/`.
fn sources(src: &Path, module: &str) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let single = src.join(format!("{module}.rs"));
    if single.exists() {
        files.push(single);
    }
    let mut dirs = vec![src.join(module)];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    files
}

#[test]
fn layers_depend_downwards_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut violations = Vec::new();
    let mut checked = 0;
    for layer in LAYERS {
        for &module in *layer {
            let files = sources(&src, module);
            assert!(!files.is_empty(), "no source for module {module}");
            for f in files {
                checked += 1;
                let text = std::fs::read_to_string(&f).unwrap();
                let name = f.strip_prefix(&src).unwrap().display().to_string();
                violations.extend(bad_edges(module, &name, &text));
            }
        }
    }
    assert!(checked > 50, "only {checked} files read");
    assert!(
        violations.is_empty(),
        "upward or sideways dependencies:\n{}",
        violations.join("\n")
    );
}

#[test]
fn every_module_of_the_crate_is_in_a_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    let mut modules = Vec::new();
    for line in code(&lib).lines() {
        let line = line.trim();
        let rest = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("pub(crate) mod "))
            .or_else(|| line.strip_prefix("mod "));
        if let Some(name) = rest.and_then(|r| r.strip_suffix(';')) {
            modules.push(name.to_owned());
        }
    }
    assert!(modules.len() > 10, "only {modules:?} read from lib.rs");
    for m in &modules {
        assert!(
            LAYERS.iter().any(|l| l.contains(&m.as_str())),
            "module {m} is in no layer: add it to LAYERS"
        );
    }
}

#[test]
fn the_checker_fails_on_an_upward_or_sideways_edge() {
    // json below schema: json using schema is an edge up.
    let up = "use crate::schema::Schema;\nfn f() {}\n";
    assert_eq!(
        bad_edges("json", "json/x.rs", up),
        ["json/x.rs uses crate::schema (schema)"]
    );
    // A crate-root re-export counts as its defining module.
    assert_eq!(
        bad_edges("schema", "schema/x.rs", "use crate::{Limits, Validator};"),
        ["schema/x.rs uses crate::Validator (validate)"]
    );
    // gate and action share a layer: neither may use the other.
    assert_eq!(
        bad_edges(
            "gate",
            "gate/x.rs",
            "let p = crate::action::Policy::default();"
        ),
        ["gate/x.rs uses crate::action (action)"]
    );
    // config sits above validate and below select.
    assert_eq!(
        bad_edges("config", "config.rs", "use crate::select::Projection;"),
        ["config.rs uses crate::select (select)"]
    );
    // Downward edges, uses of the module itself, and paths in comments or in the trailing
    // test module pass.
    let fine = "use crate::json::Value;\nuse crate::validate::x;\n// crate::gate::Gate\n\
                use crate::{scan::Event, Limits};\n#[cfg(test)]\nmod tests {\n    use crate::mcp::Relay;\n}\n";
    assert!(bad_edges("config", "config.rs", fine).is_empty());
    assert!(bad_edges("json", "json/a.rs", "use crate::json::write_string;").is_empty());
}

#[test]
fn the_reader_finds_grouped_and_plain_paths() {
    let found = uses("use crate::{scan::{Event, Flow}, Limits};\nlet x = crate::Validator::new();");
    let want: BTreeSet<String> = ["scan", "Limits", "Validator"].map(String::from).into();
    assert_eq!(found, want);
    assert_eq!(module_of("Validator"), Some("validate"));
    assert_eq!(module_of("DEFAULT_MAX_DEPTH"), Some("limits"));
    assert_eq!(module_of("DEFAULT_MAX_SCHEMA_NODES"), Some("schema"));
    assert_eq!(module_of("json"), Some("json"));
    assert_eq!(module_of("config"), Some("config"));
}

/// Files outside `src/schema/keywords/` that still name keywords with string literals, with
/// the most each may hold. The keyword groups not yet moved into `schema/keywords/` keep
/// their names where their code is; moving a group lowers these numbers, and a new literal
/// anywhere fails [`keyword_names_live_in_the_keyword_table`].
const KEYWORD_LITERALS_LEFT: &[(&str, usize)] = &[
    ("src/schema/compile.rs", 45),
    ("src/validate/mod.rs", 19),
    ("src/validate/runtime.rs", 12),
    ("src/mcp/expect.rs", 16),
    // Moved from src/mcp/pin/diff.rs with the classifier, not added.
    ("src/schema/compare.rs", 10),
    ("src/validate/explain.rs", 5),
    ("src/schema/program.rs", 6),
    ("src/gate/envelope.rs", 6),
    ("src/schema/fast/object.rs", 1),
    ("src/validate/runtime/fast.rs", 1),
    ("src/action/policy.rs", 1),
    ("src/schema/mod.rs", 1),
];

/// The keyword names of the table in `src/schema/keywords/mod.rs` that are not also ordinary
/// member names elsewhere (MCP's `type`, `title` and `description`, the gate's `required`):
/// the `$`-prefixed and camelCase ones, and a few distinctive words.
fn distinctive_keyword_names(table: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in table.lines() {
        // `    MaxLength = "maxLength", Assertion, Nothing, ALL_DRAFTS;`
        let Some((_, rest)) = line.split_once(" = \"") else {
            continue;
        };
        let Some((name, _)) = rest.split_once("\", ") else {
            continue;
        };
        let plain_word = name.chars().all(|c| c.is_ascii_lowercase());
        let distinctive = [
            "minimum",
            "maximum",
            "contains",
            "dependencies",
            "definitions",
        ];
        if !plain_word || distinctive.contains(&name) {
            names.insert(name.to_owned());
        }
    }
    names
}

/// The string literals of `code` (outside raw strings) that are exactly one of `names`.
fn keyword_literals(code: &str, names: &BTreeSet<String>) -> usize {
    let mut n = 0;
    let b = code.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'"' && (i == 0 || !(b[i - 1] == b'#' || b[i - 1] == b'r' || b[i - 1] == b'\''))
        {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            if j < b.len() && names.contains(&code[i + 1..j]) {
                n += 1;
            }
            i = j + 1;
        } else if b[i] == b'r' && b.get(i + 1) == Some(&b'#') {
            // A raw string (a schema or JSON text): skip to its end.
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            let close = format!("\"{}", "#".repeat(hashes));
            let from = i + 1 + hashes + 1;
            i = code
                .get(from..)
                .and_then(|s| s.find(&close))
                .map_or(b.len(), |k| from + k + close.len());
        } else {
            i += 1;
        }
    }
    n
}

#[test]
fn keyword_names_live_in_the_keyword_table() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let table = std::fs::read_to_string(root.join("src/schema/keywords/mod.rs")).unwrap();
    let names = distinctive_keyword_names(&table);
    assert!(names.contains("maxLength") && names.contains("$ref") && !names.contains("type"));
    let mut over = Vec::new();
    let mut dirs = vec![root.join("src")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            if p.is_dir() {
                if rel != "src/schema/keywords" {
                    dirs.push(p);
                }
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            let body = text
                .split("#[cfg(test)]\nmod tests")
                .next()
                .unwrap_or(&text);
            // Comment lines dropped (not the text after `//` in a line, which may be a URL).
            let body: Vec<&str> = body
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect();
            let n = keyword_literals(&body.join("\n"), &names);
            let allowed = KEYWORD_LITERALS_LEFT
                .iter()
                .find(|(f, _)| *f == rel)
                .map_or(0, |(_, n)| *n);
            if n > allowed {
                over.push(format!(
                    "{rel}: {n} keyword-name literals (at most {allowed})"
                ));
            } else if n < allowed {
                over.push(format!(
                    "{rel}: {n} keyword-name literals, fewer than its ceiling {allowed}: lower it"
                ));
            }
        }
    }
    assert!(
        over.is_empty(),
        "name keywords through schema::keywords::Keyword, not string literals:\n{}",
        over.join("\n")
    );
}

#[test]
fn the_keyword_literal_reader_skips_raw_strings_and_counts_plain_ones() {
    let names: BTreeSet<String> = ["maxLength".to_owned()].into();
    let src = "let a = \"maxLength\"; let s = r#\"{\"maxLength\":1}\"#; let b = \"maxLength2\";\n\
               let c = [\"maxLength\", \"x\\\"maxLength\"];";
    assert_eq!(keyword_literals(src, &names), 2);
}
