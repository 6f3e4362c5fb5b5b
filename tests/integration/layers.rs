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
    &["verdict"],
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
        "Rejection" | "Validator" | "Violation" | "OutputFormat" => "validate",
        "verdict_json" | "JsonLines" | "LineVerdict" => "verdict",
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
