//! What a person deciding on a call is shown of its arguments (an elicitation prompt, the
//! line `decide --approval-wait` prints, `jsongate approve --show`): the tool's sink
//! arguments first (the values its policy rules read: paths, URLs, recipients bound to
//! context, screened text), then every other argument by name, each value cut on its own.
//! Padding one argument can therefore never push a sink, or any other argument's name, past
//! a cut. Values are the call's compact JSON with the characters that change how text looks
//! without being seen (bidirectional controls, zero-width characters, line and paragraph
//! separators, the byte-order mark) written as `\uXXXX` escapes: what is shown is what would
//! be sent, escaped, never interpreted.

use std::fmt::Write as _;

use super::policy::ToolPolicy;
use crate::json::Value;

/// How much of a call a prompt shows.
///
/// # Example
/// ```
/// use jsongate::action::ShowLimits;
/// let l = ShowLimits::PROMPT;
/// assert!(l.value_chars < ShowLimits::FULL.value_chars);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShowLimits {
    /// Characters of one value's JSON text shown before it is cut.
    pub value_chars: usize,
    /// Arguments shown beyond the sinks (which are always shown); the rest are counted.
    pub more: usize,
}

impl ShowLimits {
    /// For a prompt: 200 characters a value, 16 arguments beyond the sinks.
    pub const PROMPT: ShowLimits = ShowLimits {
        value_chars: 200,
        more: 16,
    };
    /// For `jsongate approve --show`: 4,000 characters a value, 256 arguments.
    pub const FULL: ShowLimits = ShowLimits {
        value_chars: 4000,
        more: 256,
    };
}

/// The sink pointers of a tool: its declared `sinks` (whose values are traced to their
/// origin), then the pointer of each of its rules, in rule order, each once.
///
/// # Example
/// ```
/// use jsongate::action::{sinks, Policy};
/// let p = Policy::from_slice(br#"{"policy":1,"tools":{"send":{"arguments":{"type":"object"},"requires":[],
///   "rules":[{"rule":"equals_context","pointer":"/to","context":"team"},
///            {"rule":"max_length","pointer":"/body","max_chars":9},
///            {"rule":"forbid","pointer":"/to","substrings":["x"]}]}}}"#)?;
/// assert_eq!(sinks(p.tool("send").unwrap()), ["/to", "/body"]);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub fn sinks(tool: &ToolPolicy) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let declared = tool.sinks.iter().map(String::as_str);
    for p in declared.chain(tool.rules.iter().map(super::rules::Rule::pointer)) {
        if !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// One line per argument: each sink in `sinks` (its pointer and value, `(absent)` when the
/// call has none there), then every other top-level argument (`/name`), at most `limits.more`
/// of them, then how many were left out. Arguments that are not an object are one line,
/// `(arguments)`.
///
/// # Example
/// ```
/// use jsongate::action::{show_arguments, ShowLimits};
/// use jsongate::json::Value;
/// use jsongate::Limits;
/// let pad = "x".repeat(5000);
/// let args = Value::parse(format!(r#"{{"body":"{pad}","to":"attacker@example.com\u202e"}}"#).as_bytes(), Limits::new())?;
/// let shown = show_arguments(&args, &["/to"], ShowLimits::PROMPT);
/// let lines: Vec<&str> = shown.lines().collect();
/// assert_eq!(lines[0], r#"/to = "attacker@example.com\u202e""#); // the sink first, the override escaped
/// assert!(lines[1].starts_with(r#"/body = "xxx"#) && lines[1].ends_with("… (+4802 bytes)"));
/// # Ok::<(), jsongate::Error>(())
/// ```
pub fn show_arguments(arguments: &Value, sinks: &[&str], limits: ShowLimits) -> String {
    let mut out = String::new();
    let Value::Object(members) = arguments else {
        entry(&mut out, "(arguments)", Some(arguments), limits);
        return out;
    };
    for s in sinks {
        entry(&mut out, &display(s), arguments.pointer(s), limits);
    }
    let rest: Vec<&(String, Value)> = members
        .iter()
        .filter(|(k, _)| !sinks.contains(&pointer_of(k).as_str()))
        .collect();
    for (k, v) in rest.iter().take(limits.more) {
        entry(&mut out, &display(&pointer_of(k)), Some(v), limits);
    }
    if rest.len() > limits.more {
        let _ = writeln!(
            out,
            "… {} more arguments not shown",
            rest.len() - limits.more
        );
    }
    out
}

/// The JSON pointer of a top-level member.
fn pointer_of(name: &str) -> String {
    let mut p = String::new();
    crate::pointer::push_name(&mut p, name);
    p
}

fn entry(out: &mut String, label: &str, v: Option<&Value>, limits: ShowLimits) {
    let Some(v) = v else {
        let _ = writeln!(out, "{label} (absent)");
        return;
    };
    let json = display(&v.to_json());
    match json.char_indices().nth(limits.value_chars) {
        Some((at, _)) => {
            let _ = writeln!(
                out,
                "{label} = {}… (+{} bytes)",
                &json[..at],
                json.len() - at
            );
        }
        None => {
            let _ = writeln!(out, "{label} = {json}");
        }
    }
}

/// `text` with every control character and every character that changes how text looks
/// without being seen written as `\uXXXX` (JSON text stays valid: such characters only
/// occur inside its strings).
pub(crate) fn display(text: &str) -> String {
    let mut s = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() || invisible(c) {
            let _ = write!(s, "\\u{:04x}", u32::from(c));
        } else {
            s.push(c);
        }
    }
    s
}

pub(crate) fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{061c}' | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Limits;

    fn args(text: &str) -> Value {
        Value::parse(text.as_bytes(), Limits::new()).unwrap()
    }

    #[test]
    fn padding_never_hides_a_sink_or_another_arguments_name() {
        let pad = "p".repeat(10_000);
        let a = args(&format!(
            r#"{{"note":"{pad}","subject":"{pad}","to":"attacker@example.com"}}"#
        ));
        // Without sinks every argument is still named, each value cut on its own.
        let shown = show_arguments(&a, &[], ShowLimits::PROMPT);
        assert!(shown.contains(r#"/to = "attacker@example.com""#), "{shown}");
        assert!(shown.len() < 1000, "{}", shown.len());
        // A sink comes first, whatever precedes it in the call.
        let shown = show_arguments(&a, &["/to"], ShowLimits::PROMPT);
        assert!(
            shown.starts_with(r#"/to = "attacker@example.com""#),
            "{shown}"
        );
        assert_eq!(shown.matches("/to").count(), 1);
    }

    #[test]
    fn invisible_and_control_characters_are_escaped_and_absent_sinks_said() {
        let a = args(r#"{"to":"a\u202eb\u200bc\u2028d","x\u0007":1}"#);
        let shown = show_arguments(&a, &["/to", "/cc/0"], ShowLimits::PROMPT);
        assert_eq!(
            shown,
            "/to = \"a\\u202eb\\u200bc\\u2028d\"\n/cc/0 (absent)\n/x\\u0007 = 1\n"
        );
    }

    #[test]
    fn arguments_past_the_count_are_counted_and_a_non_object_is_one_line() {
        let many: Vec<String> = (0..20).map(|i| format!(r#""a{i}":{i}"#)).collect();
        let a = args(&format!("{{{}}}", many.join(",")));
        let shown = show_arguments(&a, &["/a19"], ShowLimits::PROMPT);
        assert!(shown.starts_with("/a19 = 19\n"), "{shown}");
        assert!(shown.ends_with("… 3 more arguments not shown\n"), "{shown}");
        assert_eq!(
            show_arguments(&args("[1]"), &["/to"], ShowLimits::PROMPT),
            "(arguments) = [1]\n"
        );
    }
}
