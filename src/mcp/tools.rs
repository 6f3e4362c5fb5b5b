//! What the proxy knows of the server's tools: each tool's `inputSchema` and `outputSchema`,
//! compiled once from a `tools/list` page (draft 2020-12 unless the schema's `$schema`
//! names 2019-09 or draft-07; `$ref`s resolve only inside the schema, never over the
//! network), and forgotten on `notifications/tools/list_changed`.

use std::collections::HashMap;
use std::sync::Arc;

use super::message::{Message, ToolSpans};
use crate::{Limits, Schema};

/// Most tools remembered at once.
pub const MAX_TOOLS: usize = 10_000;

/// A tool whose schemas compiled.
#[derive(Debug)]
pub struct Tool {
    /// The tool's name.
    pub name: String,
    /// Its `inputSchema`.
    pub input: Schema,
    /// Its `outputSchema`, if it declares one.
    pub output: Option<Schema>,
}

/// A listed tool: usable, or unusable with the reason (for operators; fixed text).
#[derive(Clone, Debug)]
pub enum Known {
    /// Its schemas compiled.
    Usable(Arc<Tool>),
    /// Calls to it are refused, with this class.
    Unusable(&'static str),
}

/// How schemas are compiled.
#[derive(Clone, Copy, Debug)]
pub struct CompileOptions {
    /// Whether `format` asserts.
    pub format_assertion: bool,
    /// Evaluation budget per validated document, if not the default.
    pub eval_budget: Option<u64>,
    /// Limits for reading the schema text.
    pub limits: Limits,
}

/// The tools learnt so far.
#[derive(Debug, Default)]
pub struct Tools {
    map: HashMap<String, Known>,
    /// A listing of every page finished since the last `list_changed`.
    pub complete: bool,
}

impl Tools {
    /// What is known of `name`.
    pub fn get(&self, name: &str) -> Option<&Known> {
        self.map.get(name)
    }

    /// Forgets everything (`notifications/tools/list_changed`).
    pub fn clear(&mut self) {
        self.map.clear();
        self.complete = false;
    }

    /// Learns the tools of one `tools/list` page read from `line`.
    pub fn learn(&mut self, msg: &Message, line: &[u8], opts: CompileOptions) {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for t in &msg.tools {
            if let Some(n) = &t.name {
                *seen.entry(n).or_default() += 1;
            }
        }
        for t in &msg.tools {
            let Some(name) = &t.name else { continue };
            if self.map.len() >= MAX_TOOLS && !self.map.contains_key(name) {
                // Past the cap, further tools stay unknown (calls to them are refused).
                break;
            }
            let known = if seen[name.as_str()] > 1 {
                Known::Unusable("tool_listed_twice")
            } else {
                compile(name, t, line, opts)
            };
            self.map.insert(name.clone(), known);
        }
    }
}

fn compile(name: &str, t: &ToolSpans, line: &[u8], opts: CompileOptions) -> Known {
    if t.bad_schema {
        return Known::Unusable("schema_not_object");
    }
    let Some(input) = t.input else {
        return Known::Unusable("no_input_schema");
    };
    let mut o = Schema::options()
        .format_assertion(opts.format_assertion)
        .limits(opts.limits);
    if let Some(b) = opts.eval_budget {
        o = o.eval_budget(b);
    }
    let Ok(input) = o.compile(&line[input.0..input.1]) else {
        return Known::Unusable("input_schema_unusable");
    };
    let output = match t.output.map(|(a, b)| o.compile(&line[a..b])) {
        None => None,
        Some(Ok(s)) => Some(s),
        Some(Err(_)) => return Known::Unusable("output_schema_unusable"),
    };
    Known::Usable(Arc::new(Tool {
        name: name.to_owned(),
        input,
        output,
    }))
}
