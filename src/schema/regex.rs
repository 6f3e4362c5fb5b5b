//! ECMA-262 regular expressions for `pattern` and `patternProperties`.
//!
//! This module owns parsing an ECMA-262 pattern (with the `u` flag, as JSON Schema
//! recommends), rejecting what ECMA-262 rejects, and translating the rest into the syntax of
//! the `regex` crate, whose matching is linear in the haystack. Patterns that need
//! look-around or backreferences, which no linear engine supports, run on this module's own
//! backtracking matcher ([`backtrack`]) with ECMA-262's semantics and a step budget that
//! covers all the work of a search: running out of it is reported as [`BudgetExceeded`],
//! never a hang. Compiled size is bounded too, so a hostile schema cannot make us build a
//! huge automaton.
//!
//! What the translation preserves (the `u` flag semantics, on haystacks that are valid
//! Unicode): `\d` `\w` `\s` and their negations are ECMA's sets (ASCII digits and word
//! characters; ECMA `WhiteSpace` and `LineTerminator`), `.` excludes only the four line
//! terminators, `\b` is the ASCII word boundary, `^` and `$` match only at the ends of the
//! haystack, `[]` matches nothing and `[^]` anything, `\uXXXX` pairs combine into one code
//! point, and a lone surrogate (which a Rust string cannot hold) matches nothing. Matching is
//! an unanchored search.
//!
//! One deliberate departure: a pattern to compile reads `\` before ASCII punctuation that is
//! not a syntax character (`\<`, `\"`, `\-`) as that character (Annex B's identity escape, as
//! Python `re` and most JSON Schema implementations do); the `regex` format's syntax check
//! ([`is_ecma_regex`]) keeps the strict `u` grammar.
//!
//! Known departures, all outside what ordinary schemas write:
//! - modifier groups (`(?i:…)`, `(?-s:…)`, ES2025) are read but give
//!   [`RegexError::Unsupported`];
//! - a backreference to a name that several groups share (ES2025 allows one name in
//!   different alternatives) gives [`RegexError::Unsupported`];
//! - `\p{Script=…}` values are matched by the `regex` crate's loose rules (case and `_`
//!   insensitive) where ECMA wants the exact name; a property the `regex` crate does not know
//!   (for example `Changes_When_NFKC_Casefolded`) gives [`RegexError::Unsupported`];
//! - Unicode property tables are those of the `regex-syntax` crate's Unicode version.
// Wired in by the validator (`pattern`, `patternProperties`, `format: regex`); until then
// nothing outside the tests calls this module.
#![allow(dead_code)]

use std::fmt::{self, Write as _};

mod backtrack;
mod simple;

/// Upper bound, in bytes, of one compiled program (the `regex` crate's `size_limit`).
pub(crate) const SIZE_LIMIT: usize = 4 << 20;
/// Upper bound, in bytes, of one lazy DFA cache (the `regex` crate's `dfa_size_limit`).
pub(crate) const DFA_SIZE_LIMIT: usize = 4 << 20;
/// Steps (instructions run and alternatives retried) one backtracking search may take
/// before giving up with [`BudgetExceeded`]: some milliseconds of work at most.
pub(crate) const BACKTRACK_BUDGET: usize = 4_000_000;
/// Deepest nesting of groups and look-arounds accepted.
pub(crate) const MAX_NESTING: usize = 40;
/// Largest repetition count (`{n}`, `{n,m}`) accepted.
pub(crate) const MAX_REPEAT: u64 = 100_000;

/// A compiled ECMA-262 pattern (`u` flag semantics), searched unanchored.
#[derive(Clone, Debug)]
pub(crate) struct Regex {
    source: Box<str>,
    engine: Engine,
    /// The named groups, in pattern order, with their 1-based indexes (ES2025 lets a name
    /// repeat in different alternatives).
    names: Box<[(String, u32)]>,
    /// A direct matcher taking the place of `engine` for literal, prefix, suffix and
    /// anchored class-sequence patterns ([`simple`]).
    simple: Option<simple::Simple>,
}

#[derive(Clone, Debug)]
enum Engine {
    /// No look-around or backreference: the `regex` crate, linear time.
    Linear(::regex::Regex),
    /// Look-around or backreferences: backtracking within a budget.
    Backtrack(backtrack::Program),
}

/// Why a pattern was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum RegexError {
    /// Not a valid ECMA-262 pattern (with the `u` flag).
    Syntax(String),
    /// Valid ECMA-262 that these engines cannot run faithfully.
    Unsupported(String),
    /// The pattern would compile to more than the size or nesting limits allow.
    TooBig(String),
}

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Syntax(m) => write!(f, "invalid ECMA-262 regular expression: {m}"),
            Self::Unsupported(m) => write!(f, "unsupported regular expression: {m}"),
            Self::TooBig(m) => write!(f, "regular expression too large: {m}"),
        }
    }
}

impl std::error::Error for RegexError {}

/// A backtracking search ran out of its step budget before finding an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BudgetExceeded;

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("regular expression exceeded its backtracking budget")
    }
}

impl std::error::Error for BudgetExceeded {}

impl Regex {
    /// Compiles an ECMA-262 pattern with the default [`BACKTRACK_BUDGET`].
    pub(crate) fn new(pattern: &str) -> Result<Regex, RegexError> {
        Self::with_budget(pattern, BACKTRACK_BUDGET)
    }

    /// Compiles an ECMA-262 pattern; a backtracking search may take `budget` steps.
    pub(crate) fn with_budget(pattern: &str, budget: usize) -> Result<Regex, RegexError> {
        let parsed = Parser::parse(pattern)?;
        let simple = if parsed.backtracking {
            None
        } else {
            simple::Simple::from_node(&parsed.root)
        };
        let engine = if parsed.backtracking {
            Engine::Backtrack(backtrack::Program::compile(
                &parsed.root,
                parsed.groups,
                budget,
            )?)
        } else {
            let mut out = String::with_capacity(pattern.len() * 2);
            emit(&parsed.root, &mut out);
            let re = ::regex::RegexBuilder::new(&out)
                .size_limit(SIZE_LIMIT)
                .dfa_size_limit(DFA_SIZE_LIMIT)
                .nest_limit(1000)
                .build()
                .map_err(|e| match e {
                    ::regex::Error::CompiledTooBig(limit) => {
                        RegexError::TooBig(format!("compiled program exceeds {limit} bytes"))
                    }
                    other => RegexError::Unsupported(last_line(&other.to_string())),
                })?;
            Engine::Linear(re)
        };
        Ok(Regex {
            source: pattern.into(),
            engine,
            names: parsed.names.into(),
            simple,
        })
    }

    /// Whether the pattern matches anywhere in `haystack`.
    pub(crate) fn is_match(&self, haystack: &str) -> Result<bool, BudgetExceeded> {
        if let Some(s) = &self.simple {
            return Ok(s.is_match(haystack));
        }
        match &self.engine {
            Engine::Linear(re) => Ok(re.is_match(haystack)),
            Engine::Backtrack(program) => program.is_match(haystack, program.budget()).0,
        }
    }

    /// Like [`is_match`](Self::is_match), charging the backtracking steps taken to
    /// `remaining` (a budget shared by several searches, e.g. one per document) and stopping
    /// when it or the per-search budget runs out. Linear-time searches are not charged.
    pub(crate) fn is_match_within(
        &self,
        haystack: &str,
        remaining: &mut usize,
    ) -> Result<bool, BudgetExceeded> {
        if let Some(s) = &self.simple {
            return Ok(s.is_match(haystack));
        }
        match &self.engine {
            Engine::Linear(re) => Ok(re.is_match(haystack)),
            Engine::Backtrack(program) => {
                let (result, steps) = program.is_match(haystack, program.budget().min(*remaining));
                *remaining = remaining.saturating_sub(steps);
                result
            }
        }
    }

    /// The groups of the leftmost match in `haystack`, by index (0 is the whole match), or
    /// `None` when there is none. Linear-time patterns only ([`is_linear`](Self::is_linear)):
    /// for the others it is always `None`.
    pub(crate) fn captures<'h>(&self, haystack: &'h str) -> Option<Vec<Option<&'h str>>> {
        match &self.engine {
            Engine::Linear(re) => re
                .captures(haystack)
                .map(|c| c.iter().map(|m| m.map(|m| m.as_str())).collect()),
            Engine::Backtrack(_) => None,
        }
    }

    /// The named groups, in pattern order, with their 1-based indexes.
    pub(crate) fn group_names(&self) -> &[(String, u32)] {
        &self.names
    }

    /// The ECMA-262 source pattern.
    pub(crate) fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether matching is linear-time (no look-around or backreference).
    pub(crate) fn is_linear(&self) -> bool {
        matches!(self.engine, Engine::Linear(_))
    }
}

fn last_line(message: &str) -> String {
    message
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or(message)
        .trim()
        .to_owned()
}

// ---------------------------------------------------------------------------------------------
// Syntax tree

/// Sorted, merged, inclusive code point ranges.
type Ranges = Vec<(u32, u32)>;

const MAX_CHAR: u32 = 0x10_FFFF;
const DIGIT: &[(u32, u32)] = &[(0x30, 0x39)];
const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
/// ECMA `WhiteSpace` (TAB VT FF SP NBSP ZWNBSP and Zs) plus `LineTerminator` (LF CR LS PS).
const SPACE: &[(u32, u32)] = &[
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
];
const LINE_TERMINATORS: &[(u32, u32)] = &[(0x0A, 0x0A), (0x0D, 0x0D), (0x2028, 0x2029)];
const SURROGATES: (u32, u32) = (0xD800, 0xDFFF);

fn normalize(mut r: Ranges) -> Ranges {
    r.sort_unstable();
    let mut out: Ranges = Vec::with_capacity(r.len());
    for (lo, hi) in r {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn complement(r: &[(u32, u32)]) -> Ranges {
    let mut out = Vec::with_capacity(r.len() + 1);
    let mut next = 0u32;
    for &(lo, hi) in r {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi.saturating_add(1);
    }
    if next <= MAX_CHAR {
        out.push((next, MAX_CHAR));
    }
    out
}

/// A Unicode property escape, already checked against ECMA-262's tables.
#[derive(Clone, Debug)]
struct Property {
    negated: bool,
    /// The text to put between `\p{` and `}` for the `regex` crate.
    spec: String,
}

/// A set of code points: a class, `.`, `\d`, `\p{…}` and the like.
#[derive(Clone, Debug, Default)]
struct Set {
    negated: bool,
    ranges: Ranges,
    properties: Vec<Property>,
}

#[derive(Debug)]
enum Node {
    Empty,
    /// One code point (a lone surrogate matches nothing).
    Char(u32),
    Set(Set),
    Start,
    End,
    WordBoundary {
        negated: bool,
    },
    /// A group; `capture` is its 1-based index when it captures.
    Group {
        capture: Option<u32>,
        body: Box<Node>,
    },
    Look {
        behind: bool,
        negated: bool,
        body: Box<Node>,
    },
    /// A backreference, resolved to a group index.
    Backref(u32),
    Repeat {
        body: Box<Node>,
        min: u32,
        max: Option<u32>,
        greedy: bool,
    },
    Concat(Vec<Node>),
    Alt(Vec<Node>),
}

// ---------------------------------------------------------------------------------------------
/// A set of group names.
pub(crate) type Names = std::collections::HashSet<String>;

/// Union of two name sets, iterating the smaller.
pub(crate) fn union(a: Names, b: Names) -> Names {
    let (mut big, small) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    big.extend(small);
    big
}

/// Adds `other` to `into`, iterating the smaller; `Err(name)` with a name in both (two
/// groups of that name might both participate in a match).
pub(crate) fn merge_disjoint(into: &mut Names, other: Names) -> Result<(), String> {
    let current = std::mem::take(into);
    let (mut big, small) = if current.len() >= other.len() {
        (current, other)
    } else {
        (other, current)
    };
    for name in small {
        if big.contains(&name) {
            return Err(name);
        }
        big.insert(name);
    }
    *into = big;
    Ok(())
}

/// Code points in both `ID_Start` and `ID_Continue` but in neither XID property (the
/// `unicode-ident` crate implements the XID ones).
fn is_id_but_not_xid(c: char) -> bool {
    matches!(
        c,
        '\u{37A}' | '\u{309B}' | '\u{309C}' | '\u{FC5E}'..='\u{FC63}' | '\u{FDFA}' | '\u{FDFB}'
    ) || matches!(
        c,
        '\u{FE70}'
            | '\u{FE72}'
            | '\u{FE74}'
            | '\u{FE76}'
            | '\u{FE78}'
            | '\u{FE7A}'
            | '\u{FE7C}'
            | '\u{FE7E}'
    )
}

/// ECMAScript `IdentifierStartChar` (the first character of a group name): `ID_Start`, `$`
/// or `_`.
pub(crate) fn is_id_start(c: char) -> bool {
    c == '$'
        || c == '_'
        || unicode_ident::is_xid_start(c)
        || is_id_but_not_xid(c)
        || matches!(c, '\u{E33}' | '\u{EB3}' | '\u{FF9E}' | '\u{FF9F}')
}

/// ECMAScript `IdentifierPartChar` (the other characters of a group name): `ID_Continue`,
/// `$`, ZWNJ or ZWJ.
pub(crate) fn is_id_continue(c: char) -> bool {
    c == '$'
        || c == '\u{200C}'
        || c == '\u{200D}'
        || unicode_ident::is_xid_continue(c)
        || is_id_but_not_xid(c)
}

/// Whether `name` is a `General_Category` value or alias ECMA-262 accepts in `\p{…}`.
pub(crate) fn is_general_category(name: &str) -> bool {
    general_category(name).is_some()
}

/// Whether `value` has the shape of a `Script`/`Script_Extensions` value: a letter, then
/// letters, digits and `_` (the list itself grows with each Unicode version).
pub(crate) fn is_script_value(value: &str) -> bool {
    let mut chars = value.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

// Parser (ECMA-262 Pattern grammar, [+UnicodeMode, +NamedCaptureGroups])

struct Parsed {
    root: Node,
    /// How many capturing groups the pattern has.
    groups: u32,
    /// The named groups, in pattern order, with their indexes.
    names: Vec<(String, u32)>,
    /// Whether the pattern needs look-around or backreferences.
    backtracking: bool,
}

enum BackrefTarget {
    Number(u64),
    Name(String),
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
    /// Groups may nest this deep ([`MAX_NESTING`] for a pattern to compile; unbounded for a
    /// syntax check, which keeps no tree).
    max_depth: usize,
    /// Whether to keep the tree (a syntax check replaces each closed group by `Empty`, so
    /// memory stays flat however deep the nesting).
    build: bool,
    groups: u32,
    names: Vec<(String, u32)>,
    /// Group names defined so far in the alternative being parsed (ES2025 allows a name
    /// twice only in different alternatives of one disjunction).
    alt_names: Names,
    /// Backreference targets in parse order, resolved once all groups are known.
    backrefs: Vec<BackrefTarget>,
    backtracking: bool,
    /// The first repetition count above [`MAX_REPEAT`], reported once syntax is known good.
    too_big: Option<String>,
    /// The first construct that is valid syntax but has no matcher here, reported likewise.
    unsupported: Option<&'static str>,
    /// Whether `\` before ASCII punctuation that is not a syntax character (`\<`, `\"`,
    /// `\@`, …) is that character, as ECMA-262 Annex B (non-`u` mode), Python `re` and most
    /// JSON Schema implementations read it; the `u` grammar refuses it.
    identity_punctuation: bool,
}

fn syntax<T>(message: impl Into<String>) -> Result<T, RegexError> {
    Err(RegexError::Syntax(message.into()))
}

fn is_syntax_char(c: char) -> bool {
    matches!(
        c,
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
    )
}

/// What an open group is, kept until its `)`.
enum Open {
    /// The whole pattern.
    Root,
    /// `(...)`, `(?:...)`, `(?<name>...)` or `(?ims-ims:...)`.
    Group {
        capture: Option<u32>,
        name: Option<String>,
        modifiers: bool,
    },
    /// `(?=...)`, `(?!...)`, `(?<=...)`, `(?<!...)`: never quantified.
    Look { behind: bool, negated: bool },
}

/// One open group (or the whole pattern) being read.
struct Frame {
    open: Open,
    /// The alternatives closed with `|`.
    alternatives: Vec<Node>,
    /// The terms of the current alternative.
    terms: Vec<Node>,
    /// The group names defined in the closed alternatives.
    defined: Names,
    /// The names of the enclosing alternative, set aside while this group is open.
    outer: Names,
}

/// A sequence of terms as one node.
fn concat(mut terms: Vec<Node>) -> Node {
    match terms.len() {
        0 => Node::Empty,
        1 => terms.pop().unwrap_or(Node::Empty),
        _ => Node::Concat(terms),
    }
}

/// `text` as an ECMA-262 pattern that matches exactly it: every syntax character and `/`
/// escaped (the only identity escapes Unicode mode allows).
pub(crate) fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_syntax_char(c) || c == '/' {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Whether `pattern` is a syntactically valid ECMA-262 pattern in Unicode mode (the `regex`
/// format): read by the same parser as a `pattern`, with no nesting limit and no tree kept,
/// so it takes linear memory and no recursion whatever the input. Valid syntax with no
/// matcher here (modifier groups, counts above [`MAX_REPEAT`]) is still valid syntax.
pub(crate) fn is_ecma_regex(pattern: &str) -> bool {
    !matches!(
        Parser::read(pattern, false, false),
        Err(RegexError::Syntax(_))
    )
}

impl Parser {
    /// Reads a pattern to compile: the `u` grammar, except that an escaped ASCII punctuation
    /// character is that character (Annex B's identity escape, which schemas written for
    /// Python or non-`u` ECMA-262 engines use, e.g. `[^\<\>]`). The `regex` format keeps the
    /// strict `u` grammar ([`is_ecma_regex`]).
    fn parse(pattern: &str) -> Result<Parsed, RegexError> {
        Self::read(pattern, true, true)
    }

    /// Reads `pattern`; with `build`, keeps its tree (groups nested at most
    /// [`MAX_NESTING`] deep) and resolves its backreferences in it; `identity_punctuation`
    /// accepts Annex B's identity escapes of ASCII punctuation.
    fn read(pattern: &str, build: bool, identity_punctuation: bool) -> Result<Parsed, RegexError> {
        let mut p = Parser {
            chars: pattern.chars().collect(),
            pos: 0,
            depth: 0,
            max_depth: if build { MAX_NESTING } else { usize::MAX },
            build,
            groups: 0,
            names: Vec::new(),
            alt_names: Names::new(),
            backrefs: Vec::new(),
            backtracking: false,
            too_big: None,
            unsupported: None,
            identity_punctuation,
        };
        let mut root = p.pattern()?;
        // Backreferences may point forward, so they are resolved once all groups are known.
        let mut resolved = Vec::with_capacity(p.backrefs.len());
        for target in &p.backrefs {
            resolved.push(match target {
                BackrefTarget::Number(n) => match u32::try_from(*n) {
                    Ok(n) if n >= 1 && n <= p.groups => n,
                    _ => {
                        return syntax(format!(
                            "backreference \\{n} to a group that does not exist"
                        ))
                    }
                },
                BackrefTarget::Name(name) => {
                    let mut groups = p.names.iter().filter(|(n, _)| n == name);
                    match (groups.next(), groups.next()) {
                        (Some(&(_, index)), None) => index,
                        (None, _) => {
                            return syntax(format!("backreference to unknown group name <{name}>"))
                        }
                        (Some(_), Some(_)) => {
                            return Err(RegexError::Unsupported(format!(
                                "backreference to <{name}>, a name of several groups"
                            )))
                        }
                    }
                }
            });
        }
        if build {
            let mut next = resolved.into_iter();
            resolve_backrefs(&mut root, &mut next);
        }
        if let Some(m) = p.too_big {
            return Err(RegexError::TooBig(m));
        }
        if let Some(m) = p.unsupported {
            return Err(RegexError::Unsupported(m.to_owned()));
        }
        Ok(Parsed {
            root,
            groups: p.groups,
            names: p.names,
            backtracking: p.backtracking,
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn looking_at(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    /// The whole pattern, read with an explicit stack of open groups (no recursion on
    /// nesting): each `(` pushes a frame, each `|` closes an alternative of the innermost
    /// frame, each `)` pops it into a term of the frame below.
    fn pattern(&mut self) -> Result<Node, RegexError> {
        let mut stack = vec![Frame {
            open: Open::Root,
            alternatives: Vec::new(),
            terms: Vec::new(),
            defined: Names::new(),
            outer: Names::new(),
        }];
        loop {
            let Some(top) = stack.last_mut() else {
                return syntax("unmatched ')'");
            };
            match self.peek() {
                Some('|') => {
                    self.pos += 1;
                    top.alternatives
                        .push(concat(std::mem::take(&mut top.terms)));
                    let closed = std::mem::take(&mut self.alt_names);
                    top.defined = union(std::mem::take(&mut top.defined), closed);
                }
                end @ (None | Some(')')) => {
                    let Some(f) = stack.pop() else {
                        return syntax("unmatched ')'");
                    };
                    let mut alternatives = f.alternatives;
                    alternatives.push(concat(f.terms));
                    let body = if alternatives.len() == 1 {
                        alternatives.pop().unwrap_or(Node::Empty)
                    } else {
                        Node::Alt(alternatives)
                    };
                    let mut inner = union(f.defined, std::mem::take(&mut self.alt_names));
                    self.alt_names = f.outer;
                    let node = match f.open {
                        Open::Root if end.is_none() => return Ok(body),
                        Open::Root => return syntax("unmatched ')'"),
                        _ if end.is_none() => return syntax("unterminated group"),
                        Open::Look { behind, negated } => {
                            self.pos += 1;
                            self.define(inner)?;
                            Node::Look {
                                behind,
                                negated,
                                body: Box::new(body),
                            }
                        }
                        Open::Group {
                            capture,
                            name,
                            modifiers,
                        } => {
                            self.pos += 1;
                            if let Some(name) = name {
                                if !inner.insert(name.clone()) {
                                    return syntax(format!("duplicate group name <{name}>"));
                                }
                            }
                            self.define(inner)?;
                            if modifiers {
                                self.unsupported.get_or_insert(
                                    "modifier groups (?ims-ims:...) are not supported",
                                );
                            }
                            let group = Node::Group {
                                capture,
                                body: Box::new(body),
                            };
                            self.quantifier(group)?
                        }
                    };
                    self.depth -= 1;
                    let Some(top) = stack.last_mut() else {
                        return syntax("unmatched ')'");
                    };
                    top.terms.push(if self.build { node } else { Node::Empty });
                }
                Some(_) => match self.open_group()? {
                    Some(open) => {
                        if self.depth >= self.max_depth {
                            return Err(RegexError::TooBig(format!(
                                "groups nested deeper than {MAX_NESTING}"
                            )));
                        }
                        self.depth += 1;
                        let outer = std::mem::take(&mut self.alt_names);
                        stack.push(Frame {
                            open,
                            alternatives: Vec::new(),
                            terms: Vec::new(),
                            defined: Names::new(),
                            outer,
                        });
                    }
                    None => {
                        let term = self.term()?;
                        if let Some(top) = stack.last_mut() {
                            top.terms.push(term);
                        }
                    }
                },
            }
        }
    }

    /// Adds the names defined inside a group (and the group's own) to the current
    /// alternative; a name already defined there is a syntax error.
    fn define(&mut self, inner: Names) -> Result<(), RegexError> {
        match merge_disjoint(&mut self.alt_names, inner) {
            Ok(()) => Ok(()),
            Err(name) => syntax(format!("duplicate group name <{name}>")),
        }
    }

    /// A term that opens no group: an assertion, or an atom and its quantifier.
    fn term(&mut self) -> Result<Node, RegexError> {
        // Assertions: never quantifiable with the `u` flag (the next atom() call rejects a
        // following quantifier as "nothing to repeat").
        if self.eat('^') {
            return Ok(Node::Start);
        }
        if self.eat('$') {
            return Ok(Node::End);
        }
        if self.looking_at("\\b") || self.looking_at("\\B") {
            let negated = self.peek_at(1) == Some('B');
            self.pos += 2;
            // The `regex` crate's `(?-u:\B)` can match inside a multi-byte character of a
            // `&str`, and its `is_match` then disagrees with `find` (rust-lang/regex#264
            // family): `\B` is left to the backtracking matcher.
            self.backtracking |= negated;
            return Ok(Node::WordBoundary { negated });
        }
        let atom = self.atom()?;
        self.quantifier(atom)
    }

    /// Consumes the opening of a group or look-around when one comes next (through its
    /// name or modifiers and their `:`), and says what it opens.
    fn open_group(&mut self) -> Result<Option<Open>, RegexError> {
        for (open, behind, negated) in [
            ("(?=", false, false),
            ("(?!", false, true),
            ("(?<=", true, false),
            ("(?<!", true, true),
        ] {
            if self.looking_at(open) {
                self.pos += open.chars().count();
                self.backtracking = true;
                return Ok(Some(Open::Look { behind, negated }));
            }
        }
        if !self.eat('(') {
            return Ok(None);
        }
        let group = |capture, name, modifiers| {
            Ok(Some(Open::Group {
                capture,
                name,
                modifiers,
            }))
        };
        if self.eat('?') {
            if self.eat(':') {
                return group(None, None, false);
            }
            if self.eat('<') {
                let name = self.group_name()?;
                let index = self.next_group();
                self.names.push((name.clone(), index));
                return group(Some(index), Some(name), false);
            }
            if matches!(self.peek(), Some('i' | 'm' | 's' | '-')) {
                self.modifiers()?;
                return group(None, None, true);
            }
            return syntax(
                "invalid group: '(?' must be followed by ':', '=', '!', '<=', '<!', '<name>' \
                 or modifiers",
            );
        }
        let index = self.next_group();
        group(Some(index), None, false)
    }

    fn quantifier(&mut self, atom: Node) -> Result<Node, RegexError> {
        let (min, max) = match self.peek() {
            Some('*') => {
                self.pos += 1;
                (0, None)
            }
            Some('+') => {
                self.pos += 1;
                (1, None)
            }
            Some('?') => {
                self.pos += 1;
                (0, Some(1))
            }
            Some('{') => {
                let start = self.pos;
                let Some(bounds) = self.braced_quantifier()? else {
                    self.pos = start;
                    return syntax("incomplete quantifier '{'");
                };
                bounds
            }
            _ => return Ok(atom),
        };
        let greedy = !self.eat('?');
        Ok(Node::Repeat {
            body: Box::new(atom),
            min,
            max,
            greedy,
        })
    }

    /// `{n}`, `{n,}` or `{n,m}`; `None` if the text is not one of those.
    fn braced_quantifier(&mut self) -> Result<Option<(u32, Option<u32>)>, RegexError> {
        self.pos += 1; // '{'
        let Some(min) = self.decimal() else {
            return Ok(None);
        };
        let max = if self.eat(',') {
            if self.peek() == Some('}') {
                None
            } else {
                let Some(max) = self.decimal() else {
                    return Ok(None);
                };
                Some(max)
            }
        } else {
            Some(min.clone())
        };
        if !self.eat('}') {
            return Ok(None);
        }
        if let Some(max) = &max {
            if (min.len(), &min) > (max.len(), max) {
                return syntax("numbers out of order in {} quantifier");
            }
        }
        let min = self.count(&min);
        let max = max.map(|m| self.count(&m));
        Ok(Some((min, max)))
    }

    /// Decimal digits, leading zeros stripped ("0" stays "0").
    fn decimal(&mut self) -> Option<String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            return None;
        }
        let digits: String = self.chars[start..self.pos].iter().collect();
        let trimmed = digits.trim_start_matches('0');
        Some(if trimmed.is_empty() {
            "0".to_owned()
        } else {
            trimmed.to_owned()
        })
    }

    /// A repetition count, or a note that it is above [`MAX_REPEAT`].
    fn count(&mut self, digits: &str) -> u32 {
        match digits.parse::<u64>() {
            Ok(n) if n <= MAX_REPEAT => u32::try_from(n).unwrap_or(u32::MAX),
            _ => {
                if self.too_big.is_none() {
                    self.too_big = Some(format!("repetition count {digits} exceeds {MAX_REPEAT}"));
                }
                0
            }
        }
    }

    /// An atom that opens no group: [`Self::pattern`] reads `(`, `|` and `)` itself.
    fn atom(&mut self) -> Result<Node, RegexError> {
        let Some(c) = self.bump() else {
            return syntax("unexpected end of pattern");
        };
        match c {
            '.' => Ok(Node::Set(Set {
                negated: true,
                ranges: LINE_TERMINATORS.to_vec(),
                properties: Vec::new(),
            })),
            '[' => self.class().map(Node::Set),
            '\\' => self.atom_escape(),
            '*' | '+' | '?' => syntax(format!("nothing to repeat before '{c}'")),
            '{' => syntax("lone quantifier bracket '{'"),
            '}' | ']' => syntax(format!("lone '{c}'")),
            _ => Ok(Node::Char(u32::from(c))),
        }
    }

    /// The flags of a modifier group, `(?` already consumed, through its `:`: `ims` letters
    /// to add, then optionally `-` and letters to remove, each letter at most once in all,
    /// not both lists empty.
    fn modifiers(&mut self) -> Result<(), RegexError> {
        let mut seen = [false; 3];
        let mut take = |p: &mut Self| -> Result<usize, RegexError> {
            let mut count = 0;
            while let Some(i) = p.peek().and_then(|c| "ims".find(c)) {
                if std::mem::replace(&mut seen[i], true) {
                    return syntax("a modifier repeated in one group");
                }
                p.pos += 1;
                count += 1;
            }
            Ok(count)
        };
        let added = take(self)?;
        if self.eat('-') && added + take(self)? == 0 {
            return syntax("a modifier group '(?-:' that names no modifier");
        }
        if !self.eat(':') {
            return syntax("modifiers must be followed by ':'");
        }
        Ok(())
    }

    fn next_group(&mut self) -> u32 {
        self.groups = self.groups.saturating_add(1);
        self.groups
    }

    /// `RegExpIdentifierName` then `>`, the `<` already consumed.
    fn group_name(&mut self) -> Result<String, RegexError> {
        let mut name = String::new();
        loop {
            let c = match self.bump() {
                None => return syntax("unterminated group name"),
                Some('>') => break,
                Some('\\') => {
                    if !self.eat('u') {
                        return syntax("invalid escape in group name");
                    }
                    match self.unicode_escape()?.and_then(char::from_u32) {
                        Some(c) => c,
                        None => return syntax("invalid escape in group name"),
                    }
                }
                Some(c) => c,
            };
            let ok = if name.is_empty() {
                is_id_start(c)
            } else {
                is_id_continue(c)
            };
            if !ok {
                return syntax(format!("invalid character '{c}' in group name"));
            }
            name.push(c);
        }
        if name.is_empty() {
            return syntax("empty group name");
        }
        Ok(name)
    }

    fn add_backref(&mut self, target: BackrefTarget) -> Node {
        self.backrefs.push(target);
        self.backtracking = true;
        // Resolved to the real index once the whole pattern is parsed.
        Node::Backref(0)
    }

    /// After `\` outside a class.
    fn atom_escape(&mut self) -> Result<Node, RegexError> {
        let Some(c) = self.peek() else {
            return syntax("'\\' at end of pattern");
        };
        match c {
            '1'..='9' => {
                let mut n: u64 = 0;
                while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
                    n = n.saturating_mul(10).saturating_add(u64::from(d));
                    self.pos += 1;
                }
                Ok(self.add_backref(BackrefTarget::Number(n)))
            }
            'k' => {
                self.pos += 1;
                if !self.eat('<') {
                    return syntax("'\\k' must be followed by '<name>'");
                }
                let name = self.group_name()?;
                Ok(self.add_backref(BackrefTarget::Name(name)))
            }
            _ => match self.class_escape(false)? {
                ClassAtom::Char(c) => Ok(Node::Char(c)),
                ClassAtom::Set(set) => Ok(Node::Set(set)),
            },
        }
    }

    /// A class-escape or character-escape after `\` (both contexts); `in_class` allows
    /// `\b` (backspace) and `\-`.
    fn class_escape(&mut self, in_class: bool) -> Result<ClassAtom, RegexError> {
        let Some(c) = self.bump() else {
            return syntax("'\\' at end of pattern");
        };
        let set = |ranges: &[(u32, u32)], negated: bool| {
            ClassAtom::Set(Set {
                negated: false,
                ranges: if negated {
                    complement(ranges)
                } else {
                    ranges.to_vec()
                },
                properties: Vec::new(),
            })
        };
        Ok(match c {
            'd' => set(DIGIT, false),
            'D' => set(DIGIT, true),
            'w' => set(WORD, false),
            'W' => set(WORD, true),
            's' => set(SPACE, false),
            'S' => set(SPACE, true),
            'p' | 'P' => ClassAtom::Set(self.property(c == 'P')?),
            'f' => ClassAtom::Char(0x0C),
            'n' => ClassAtom::Char(0x0A),
            'r' => ClassAtom::Char(0x0D),
            't' => ClassAtom::Char(0x09),
            'v' => ClassAtom::Char(0x0B),
            'b' if in_class => ClassAtom::Char(0x08),
            '-' if in_class => ClassAtom::Char(u32::from('-')),
            'c' => match self.bump() {
                Some(l) if l.is_ascii_alphabetic() => ClassAtom::Char(u32::from(l) % 32),
                _ => return syntax("'\\c' must be followed by an ASCII letter"),
            },
            '0' => {
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return syntax("invalid decimal escape");
                }
                ClassAtom::Char(0)
            }
            'x' => {
                let (Some(h), Some(l)) = (
                    self.peek().and_then(|c| c.to_digit(16)),
                    self.peek_at(1).and_then(|c| c.to_digit(16)),
                ) else {
                    return syntax("'\\x' must be followed by two hex digits");
                };
                self.pos += 2;
                ClassAtom::Char(h * 16 + l)
            }
            'u' => match self.unicode_escape()? {
                Some(c) => ClassAtom::Char(c),
                None => return syntax("invalid Unicode escape"),
            },
            c if is_syntax_char(c) || c == '/' => ClassAtom::Char(u32::from(c)),
            c if self.identity_punctuation && c.is_ascii_punctuation() => {
                ClassAtom::Char(u32::from(c))
            }
            c => return syntax(format!("invalid escape '\\{c}'")),
        })
    }

    /// After `\u`: `{hex}` or `XXXX`, combining a `\uXXXX\uXXXX` surrogate pair. `None` if
    /// malformed.
    fn unicode_escape(&mut self) -> Result<Option<u32>, RegexError> {
        if self.eat('{') {
            let mut value: u32 = 0;
            let mut any = false;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                any = true;
                value = value.saturating_mul(16).saturating_add(d);
            }
            if !any || !self.eat('}') {
                return Ok(None);
            }
            if value > MAX_CHAR {
                return syntax("Unicode escape above U+10FFFF");
            }
            return Ok(Some(value));
        }
        let Some(lead) = self.hex4(0) else {
            return Ok(None);
        };
        self.pos += 4;
        if (0xD800..0xDC00).contains(&lead) && self.looking_at("\\u") {
            if let Some(trail) = self.hex4(2) {
                if (0xDC00..0xE000).contains(&trail) {
                    self.pos += 6;
                    return Ok(Some(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00)));
                }
            }
        }
        Ok(Some(lead))
    }

    fn hex4(&self, ahead: usize) -> Option<u32> {
        (0..4).try_fold(0u32, |acc, i| {
            let d = self.peek_at(ahead + i)?.to_digit(16)?;
            Some(acc * 16 + d)
        })
    }

    /// After `\p` or `\P`: `{name}` or `{name=value}`.
    fn property(&mut self, negated: bool) -> Result<Set, RegexError> {
        if !self.eat('{') {
            return syntax("'\\p' must be followed by '{'");
        }
        let mut text = String::new();
        loop {
            match self.bump() {
                None => return syntax("unterminated property escape"),
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => text.push(c),
                Some(c) => return syntax(format!("invalid character '{c}' in property escape")),
            }
        }
        let spec = match text.split_once('=') {
            Some((name, value)) => match name {
                "General_Category" | "gc" => match general_category(value) {
                    Some(v) => format!("gc={v}"),
                    None => return syntax(format!("unknown General_Category value '{value}'")),
                },
                "Script" | "sc" | "Script_Extensions" | "scx" => {
                    let key = if name.starts_with("Script_") || name == "scx" {
                        "scx"
                    } else {
                        "sc"
                    };
                    if !is_script_value(value) {
                        return syntax(format!("invalid script name '{value}'"));
                    }
                    format!("{key}={value}")
                }
                _ => return syntax(format!("unknown Unicode property '{name}'")),
            },
            None => {
                if let Some(v) = general_category(&text) {
                    format!("gc={v}")
                } else if BINARY_PROPERTIES.contains(&text.as_str()) {
                    text
                } else {
                    return syntax(format!("unknown Unicode property '{text}'"));
                }
            }
        };
        // Surrogates cannot occur in a Rust string and the `regex` crate has no table for
        // them: `\p{Cs}` matches nothing, `\P{Cs}` everything.
        if spec == "gc=Cs" {
            return Ok(Set {
                negated: false,
                ranges: if negated {
                    vec![(0, MAX_CHAR)]
                } else {
                    Vec::new()
                },
                properties: Vec::new(),
            });
        }
        Ok(Set {
            negated: false,
            ranges: Vec::new(),
            properties: vec![Property { negated, spec }],
        })
    }

    /// After `[`.
    fn class(&mut self) -> Result<Set, RegexError> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        let mut properties = Vec::new();
        loop {
            let first = match self.peek() {
                None => return syntax("unterminated character class"),
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                _ => self.class_atom()?,
            };
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let last = self.class_atom()?;
                let (ClassAtom::Char(lo), ClassAtom::Char(hi)) = (&first, &last) else {
                    return syntax("character class escape used as a range bound");
                };
                if lo > hi {
                    return syntax("range out of order in character class");
                }
                ranges.push((*lo, *hi));
                continue;
            }
            match first {
                ClassAtom::Char(c) => ranges.push((c, c)),
                ClassAtom::Set(s) => {
                    ranges.extend(s.ranges);
                    properties.extend(s.properties);
                }
            }
        }
        Ok(Set {
            negated,
            ranges: normalize(ranges),
            properties,
        })
    }

    fn class_atom(&mut self) -> Result<ClassAtom, RegexError> {
        match self.bump() {
            None => syntax("unterminated character class"),
            Some('\\') => {
                match self.peek() {
                    Some('B') => return syntax("'\\B' is not allowed in a character class"),
                    Some('1'..='9') => {
                        return syntax("backreference is not allowed in a character class")
                    }
                    Some('k') => return syntax("'\\k' is not allowed in a character class"),
                    _ => {}
                }
                self.class_escape(true)
            }
            Some(c) => Ok(ClassAtom::Char(u32::from(c))),
        }
    }
}

enum ClassAtom {
    Char(u32),
    Set(Set),
}

/// Replaces each `Backref(0)` placeholder, in parse order, by its resolved group index.
fn resolve_backrefs(node: &mut Node, resolved: &mut impl Iterator<Item = u32>) {
    match node {
        Node::Backref(index) => *index = resolved.next().unwrap_or(0),
        Node::Group { body, .. } | Node::Look { body, .. } | Node::Repeat { body, .. } => {
            resolve_backrefs(body, resolved);
        }
        Node::Concat(nodes) | Node::Alt(nodes) => {
            for n in nodes {
                resolve_backrefs(n, resolved);
            }
        }
        Node::Empty
        | Node::Char(_)
        | Node::Set(_)
        | Node::Start
        | Node::End
        | Node::WordBoundary { .. } => {}
    }
}

/// The ECMA-262 `General_Category` value names and aliases (table "Value aliases and
/// canonical values for the Unicode property `General_Category`"), mapped to a name the `regex` crate
/// knows.
fn general_category(name: &str) -> Option<&'static str> {
    const TABLE: &[(&str, &str)] = &[
        ("Cased_Letter", "LC"),
        ("LC", "LC"),
        ("Close_Punctuation", "Pe"),
        ("Pe", "Pe"),
        ("Connector_Punctuation", "Pc"),
        ("Pc", "Pc"),
        ("Control", "Cc"),
        ("Cc", "Cc"),
        ("cntrl", "Cc"),
        ("Currency_Symbol", "Sc"),
        ("Sc", "Sc"),
        ("Dash_Punctuation", "Pd"),
        ("Pd", "Pd"),
        ("Decimal_Number", "Nd"),
        ("Nd", "Nd"),
        ("digit", "Nd"),
        ("Enclosing_Mark", "Me"),
        ("Me", "Me"),
        ("Final_Punctuation", "Pf"),
        ("Pf", "Pf"),
        ("Format", "Cf"),
        ("Cf", "Cf"),
        ("Initial_Punctuation", "Pi"),
        ("Pi", "Pi"),
        ("Letter", "L"),
        ("L", "L"),
        ("Letter_Number", "Nl"),
        ("Nl", "Nl"),
        ("Line_Separator", "Zl"),
        ("Zl", "Zl"),
        ("Lowercase_Letter", "Ll"),
        ("Ll", "Ll"),
        ("Mark", "M"),
        ("M", "M"),
        ("Combining_Mark", "M"),
        ("Math_Symbol", "Sm"),
        ("Sm", "Sm"),
        ("Modifier_Letter", "Lm"),
        ("Lm", "Lm"),
        ("Modifier_Symbol", "Sk"),
        ("Sk", "Sk"),
        ("Nonspacing_Mark", "Mn"),
        ("Mn", "Mn"),
        ("Number", "N"),
        ("N", "N"),
        ("Open_Punctuation", "Ps"),
        ("Ps", "Ps"),
        ("Other", "C"),
        ("C", "C"),
        ("Other_Letter", "Lo"),
        ("Lo", "Lo"),
        ("Other_Number", "No"),
        ("No", "No"),
        ("Other_Punctuation", "Po"),
        ("Po", "Po"),
        ("Other_Symbol", "So"),
        ("So", "So"),
        ("Paragraph_Separator", "Zp"),
        ("Zp", "Zp"),
        ("Private_Use", "Co"),
        ("Co", "Co"),
        ("Punctuation", "P"),
        ("P", "P"),
        ("punct", "P"),
        ("Separator", "Z"),
        ("Z", "Z"),
        ("Space_Separator", "Zs"),
        ("Zs", "Zs"),
        ("Spacing_Mark", "Mc"),
        ("Mc", "Mc"),
        ("Surrogate", "Cs"),
        ("Cs", "Cs"),
        ("Symbol", "S"),
        ("S", "S"),
        ("Titlecase_Letter", "Lt"),
        ("Lt", "Lt"),
        ("Unassigned", "Cn"),
        ("Cn", "Cn"),
        ("Uppercase_Letter", "Lu"),
        ("Lu", "Lu"),
    ];
    TABLE.iter().find(|(n, _)| *n == name).map(|&(_, v)| v)
}

/// ECMA-262's binary Unicode properties (table "Binary Unicode property aliases"), long names
/// and aliases, exactly as ECMA spells them.
pub(crate) const BINARY_PROPERTIES: &[&str] = &[
    "ASCII",
    "ASCII_Hex_Digit",
    "AHex",
    "Alphabetic",
    "Alpha",
    "Any",
    "Assigned",
    "Bidi_Control",
    "Bidi_C",
    "Bidi_Mirrored",
    "Bidi_M",
    "Case_Ignorable",
    "CI",
    "Cased",
    "Changes_When_Casefolded",
    "CWCF",
    "Changes_When_Casemapped",
    "CWCM",
    "Changes_When_Lowercased",
    "CWL",
    "Changes_When_NFKC_Casefolded",
    "CWKCF",
    "Changes_When_Titlecased",
    "CWT",
    "Changes_When_Uppercased",
    "CWU",
    "Dash",
    "Default_Ignorable_Code_Point",
    "DI",
    "Deprecated",
    "Dep",
    "Diacritic",
    "Dia",
    "Emoji",
    "Emoji_Component",
    "EComp",
    "Emoji_Modifier",
    "EMod",
    "Emoji_Modifier_Base",
    "EBase",
    "Emoji_Presentation",
    "EPres",
    "Extended_Pictographic",
    "ExtPict",
    "Extender",
    "Ext",
    "Grapheme_Base",
    "Gr_Base",
    "Grapheme_Extend",
    "Gr_Ext",
    "Hex_Digit",
    "Hex",
    "IDS_Binary_Operator",
    "IDSB",
    "IDS_Trinary_Operator",
    "IDST",
    "ID_Continue",
    "IDC",
    "ID_Start",
    "IDS",
    "Ideographic",
    "Ideo",
    "Join_Control",
    "Join_C",
    "Logical_Order_Exception",
    "LOE",
    "Lowercase",
    "Lower",
    "Math",
    "Noncharacter_Code_Point",
    "NChar",
    "Pattern_Syntax",
    "Pat_Syn",
    "Pattern_White_Space",
    "Pat_WS",
    "Quotation_Mark",
    "QMark",
    "Radical",
    "Regional_Indicator",
    "RI",
    "Sentence_Terminal",
    "STerm",
    "Soft_Dotted",
    "SD",
    "Terminal_Punctuation",
    "Term",
    "Unified_Ideograph",
    "UIdeo",
    "Uppercase",
    "Upper",
    "Variation_Selector",
    "VS",
    "White_Space",
    "space",
    "XID_Continue",
    "XIDC",
    "XID_Start",
    "XIDS",
];

// ---------------------------------------------------------------------------------------------
// Emitter: the syntax tree as a `regex` crate pattern. Every character that is not
// an ASCII letter or digit is written as `\x{…}`, so nothing is read as a metacharacter, a
// class operator (`&&`, `--`, `~~`, nested `[`) or a flag.

/// Matches nothing.
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";
/// Matches any one character.
const ANY: &str = r"[\x{0}-\x{10FFFF}]";

fn emit_char(c: u32, out: &mut String) {
    match char::from_u32(c) {
        Some(ch) if ch.is_ascii_alphanumeric() => out.push(ch),
        Some(_) => {
            let _ = write!(out, "\\x{{{c:X}}}");
        }
        None => out.push_str(NEVER),
    }
}

fn emit_ranges(ranges: &[(u32, u32)], out: &mut String) {
    for &(lo, hi) in ranges {
        // Surrogates cannot occur in a Rust string and cannot be written in its regexes.
        let parts = [
            (lo, hi.min(SURROGATES.0 - 1)),
            (lo.max(SURROGATES.1 + 1), hi),
        ];
        for (lo, hi) in parts {
            if lo > hi {
                continue;
            }
            let _ = write!(out, "\\x{{{lo:X}}}");
            if hi > lo {
                let _ = write!(out, "-\\x{{{hi:X}}}");
            }
        }
    }
}

fn usable(ranges: &[(u32, u32)]) -> bool {
    ranges
        .iter()
        .any(|&(lo, hi)| lo < SURROGATES.0 || hi > SURROGATES.1)
}

fn emit_set(set: &Set, out: &mut String) {
    if set.properties.is_empty() && !usable(&set.ranges) {
        out.push_str(if set.negated { ANY } else { NEVER });
        return;
    }
    out.push('[');
    if set.negated {
        out.push('^');
    }
    emit_ranges(&set.ranges, out);
    for p in &set.properties {
        let _ = write!(out, "\\{}{{{}}}", if p.negated { 'P' } else { 'p' }, p.spec);
    }
    out.push(']');
}

/// Writes `node` in the `regex` crate's syntax (only for trees without look-around or
/// backreferences).
fn emit(node: &Node, out: &mut String) {
    match node {
        Node::Empty => {}
        Node::Char(c) => emit_char(*c, out),
        Node::Set(set) => emit_set(set, out),
        Node::Start => out.push_str(r"\A"),
        Node::End => out.push_str(r"\z"),
        Node::WordBoundary { negated } => {
            out.push_str(if *negated { r"(?-u:\B)" } else { r"(?-u:\b)" });
        }
        Node::Group { capture, body } => {
            // Capturing groups stay capturing, so the `regex` crate numbers them as ECMA-262
            // does (by their opening parenthesis) and `captures` can report them.
            out.push_str(if capture.is_some() { "(" } else { "(?:" });
            emit(body, out);
            out.push(')');
        }
        // Patterns with these run on the backtracking matcher instead.
        Node::Look { .. } | Node::Backref(_) => out.push_str(NEVER),
        Node::Repeat {
            body,
            min,
            max,
            greedy,
        } => {
            let needs_group = !matches!(**body, Node::Char(_) | Node::Set(_) | Node::Group { .. });
            if needs_group {
                out.push_str("(?:");
            }
            emit(body, out);
            if needs_group {
                out.push(')');
            }
            match max {
                Some(max) => {
                    let _ = write!(out, "{{{min},{max}}}");
                }
                None => {
                    let _ = write!(out, "{{{min},}}");
                }
            }
            if !greedy {
                out.push('?');
            }
        }
        Node::Concat(nodes) => {
            for n in nodes {
                emit(n, out);
            }
        }
        Node::Alt(nodes) => {
            // Alternatives only occur at the top or directly inside a group or look-around,
            // whose parentheses delimit them.
            for (i, n) in nodes.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(n, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{BudgetExceeded, Regex, RegexError};
    use std::time::{Duration, Instant};

    fn re(pattern: &str) -> Regex {
        match Regex::new(pattern) {
            Ok(r) => r,
            Err(e) => panic!("{pattern:?} failed to compile: {e}"),
        }
    }

    fn m(pattern: &str, haystack: &str) -> bool {
        re(pattern).is_match(haystack).expect("within budget")
    }

    fn syntax_error(pattern: &str) -> bool {
        matches!(Regex::new(pattern), Err(RegexError::Syntax(_)))
    }

    #[test]
    fn a_group_name_may_repeat_only_in_different_alternatives() {
        assert!(m("(?<a>x)|(?<a>y)", "y"));
        assert!(m("^(?:(?<a>x)|(?<a>y))|(?<a>z)$", "z"));
        assert!(m("(?<a>x)|((?<a>y)|(?<a>z))", "z"));
        for bad in [
            "(?<a>x)(?<a>y)",
            "((?<a>x)|y)(?<a>z)",
            "(?<a>(?<a>x))",
            "(?<a>x)|(?<b>y)(?=(?<b>z))",
            "(?<a>x)(?:y|(?<a>z))",
        ] {
            assert!(syntax_error(bad), "{bad}");
        }
        // Which of two groups a backreference names is not supported (the syntax is valid).
        assert!(matches!(
            Regex::new(r"(?<a>x)|(?<a>y)\k<a>"),
            Err(RegexError::Unsupported(_))
        ));
        assert!(m(r"(?<a>x)\k<a>|(?<b>y)", "xx"));
    }

    #[test]
    fn group_names_are_ecmascript_identifiers() {
        // U+309B is ID_Start (Other_ID_Start) but not alphabetic; U+2E2F is alphabetic but
        // Pattern_Syntax, so not ID_Start.
        assert!(m("(?<\u{309B}>x)", "x"));
        assert!(m("(?<$_\u{200C}1>x)", "x"));
        assert!(syntax_error("(?<\u{2E2F}>x)"));
        assert!(syntax_error("(?<1a>x)"));
    }

    /// Tokens of random patterns: the two syntax readers (this parser, which builds the tree
    /// that is matched, and the `format: regex` checker) must agree on every pattern made of
    /// them (none nests `MAX_NESTING` deep).
    const TOKENS: &[&str] = &[
        "a",
        "\\d",
        "\\w",
        ".",
        "^",
        "$",
        "|",
        "(",
        ")",
        "(?:",
        "(?=",
        "(?!",
        "(?<=",
        "(?<!",
        "(?<n>",
        "(?<m>",
        "\\k<n>",
        "\\1",
        "\\2",
        "[",
        "]",
        "[^",
        "-",
        "a-z",
        "z-a",
        "\\p{L}",
        "\\p{Lu}",
        "\\p{Script=Greek}",
        "\\p{Foo}",
        "\\P{ASCII}",
        "*",
        "+",
        "?",
        "{2}",
        "{2,}",
        "{2,1}",
        "{",
        "}",
        "\\u0041",
        "\\u{1F600}",
        "\\u{110000}",
        "\\x41",
        "\\c",
        "\\cA",
        "\\b",
        "\\B",
        "\\0",
        "\\00",
        "\\a",
        "\\-",
        "\\/",
        "\\.",
        "\\",
        "\u{e9}",
        "(?i:",
        "(?ms-i:",
        "(?-:",
        "(?ii:",
        "(?s-",
        "(?x:",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        #[test]
        fn compiling_and_checking_syntax_agree(
            picks in proptest::collection::vec(0..TOKENS.len(), 0..12)
        ) {
            let pattern: String = picks.iter().map(|&i| TOKENS[i]).collect();
            let parsed = !matches!(
                super::Parser::read(&pattern, true, false),
                Err(RegexError::Syntax(_))
            );
            let checked = super::is_ecma_regex(&pattern);
            proptest::prop_assert_eq!(parsed, checked, "{}", pattern);
        }
    }

    #[test]
    fn format_accepts_valid_patterns() {
        for ok in [
            "", "a", "a|b|", "^a$", "(a)(?:b)(?=c)(?!d)(?<=e)(?<!f)", "a*?b+?c??d{2}e{2,}?f{2,3}", "a{0010,10}",
            "[]", "[^]", "[a-z\\d-]", "[-a]", "[a-]", "[--a]", "[\\b\\-\\]]", "[\\u{0}-\\u{10FFFF}]", "[\\uD83D\\uDE00-\\u{1F64F}]",
            "\\cZ\\ca\\0\\x41\\u0041\\u{41}\\f\\n\\r\\t\\v\\/\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|",
            "\\p{L}\\P{Lu}\\p{gc=Nd}\\p{Script=Greek}\\p{scx=Latn}\\p{ASCII_Hex_Digit}\\p{Any}",
            "(a)\\1", "\\1(a)", "(?<a>x)\\k<a>", "\\k<a>(?<a>x)", "(?<$_a1>.)", "(?<\\u0061>.)(?<\\u{62}c>.)", "(?<é>.)", "(?<ünïcödé>.)",
            "(?<a>x)|(?<a>y)", "((?<a>x)|(?<a>y))", "(?:(?<a>x)|(?<a>y))|(?<a>z)",
            "(?i:a)(?m-s:b)(?-i:c)(?ims:d)", "a/b", "\\]", "\u{1F600}+", "(?:a)+", "(a){2}",
        ] {
            assert!(super::is_ecma_regex(ok), "{ok}");
        }
    }

    #[test]
    fn format_rejects_invalid_patterns() {
        for bad in [
            "(",
            ")",
            "a)",
            "(a",
            "[",
            "[a",
            "]",
            "{",
            "}",
            "a{",
            "a{1",
            "a{,1}",
            "a{2,1}",
            "a{1}{2}",
            "*a",
            "a**",
            "a???",
            "a|*",
            "^*",
            "$+",
            "\\b*",
            "(?=a)*",
            "(?<=a)+",
            "[z-a]",
            "[\\d-z]",
            "[a-\\w]",
            "[\\B]",
            "[\\1]",
            "\\a",
            "\\e",
            "\\-",
            "\\c",
            "\\c1",
            "\\x4",
            "\\u12",
            "\\u{}",
            "\\u{110000}",
            "\\00",
            "\\01",
            "\\1",
            "(a)\\2",
            "\\k<a>",
            "\\k",
            "\\ka",
            "(?<a>x)\\k<b>",
            "(?<a>x)(?<a>y)",
            "(?<a>(?<a>x))",
            "((?<a>x)|y)(?<a>z)",
            "(?<1a>x)",
            "(?<>x)",
            "(?<a-b>x)",
            "(?<a",
            "(?P<n>x)",
            "(?#c)",
            "(?i)a",
            "(?ii:a)",
            "(?i-i:a)",
            "(?-:a)",
            "(?x:a)",
            "\\p",
            "\\p{}",
            "\\p{Foo}",
            "\\p{L=Lu}",
            "\\p{gc=Foo}",
            "\\p{Script=}",
            "\\p{Basic_Emoji}",
            "\\p{L",
            "^(abc]",
        ] {
            assert!(!super::is_ecma_regex(bad), "{bad}");
        }
    }

    #[test]
    fn patterns_read_escaped_ascii_punctuation_as_the_character_but_the_format_does_not() {
        // The design's example schema: `^[^\<\>\n]{1,50}$` (Annex B, Python `re`).
        let design = r"^[^\<\>\n]{1,50}$";
        assert!(m(design, "plain title"));
        assert!(!m(design, "a <b> tag"));
        assert!(!m(design, "two\nlines"));
        assert!(!m(design, ""));
        assert!(!m(design, &"x".repeat(51)));
        assert!(!super::is_ecma_regex(design));
        for c in "!\"#%&',-:;<=>@_`~".chars() {
            let outside = format!("^a\\{c}b$");
            let inside = format!("^[\\{c}]$");
            assert!(m(&outside, &format!("a{c}b")), "{outside}");
            assert!(!m(&outside, "a\\b"), "{outside}");
            assert!(m(&inside, &c.to_string()), "{inside}");
            assert!(!m(&inside, "\\"), "{inside}");
            if c != '-' {
                assert!(!super::is_ecma_regex(&outside), "{outside}");
            }
        }
        // Letters stay refused: `\a`, `\e` or PCRE's `\z` and `\A` read as letters would
        // silently mean something else than their author meant.
        for bad in [r"\a", r"\e", r"\z", r"\A", r"\Z", r"[\q]", r"\é"] {
            assert!(syntax_error(bad), "{bad}");
        }
    }

    #[test]
    fn format_check_does_not_recurse_on_nesting() {
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(super::is_ecma_regex(&deep));
        assert!(!super::is_ecma_regex(&"(".repeat(100_000)));
        let many = "(?<a>x)|".repeat(20_000);
        assert!(super::is_ecma_regex(&many));
    }

    #[test]
    fn captures_are_numbered_by_opening_parenthesis() {
        let r = re("(?<user>[a-z]+)(?:@(?<host>[a-z.]+))?( x)?");
        assert_eq!(
            r.group_names(),
            &[("user".to_owned(), 1), ("host".to_owned(), 2)]
        );
        let c = r.captures("bob@example.org x").unwrap();
        assert_eq!(
            c,
            [
                Some("bob@example.org x"),
                Some("bob"),
                Some("example.org"),
                Some(" x")
            ]
        );
        let c = r.captures("bob").unwrap();
        assert_eq!(c, [Some("bob"), Some("bob"), None, None]);
        assert!(r.captures("123").is_none());
        // Duplicate names in different alternatives: each has its own index.
        let r = re("(?<d>[0-9]+)|(?<d>[a-z]+)");
        assert_eq!(r.group_names(), &[("d".to_owned(), 1), ("d".to_owned(), 2)]);
        assert_eq!(r.captures("ab").unwrap(), [Some("ab"), None, Some("ab")]);
        // Backtracking patterns report no captures.
        assert!(re("(a)\\1").captures("aa").is_none());
    }

    #[test]
    fn escape_makes_a_literal() {
        for text in ["a.b", "^$\\.*+?()[]{}|/", "x-y", "é😀", ""] {
            let r = re(&format!("^{}$", super::escape(text)));
            assert!(m(r.as_str(), text), "{text}");
            assert!(!m(r.as_str(), &format!("{text}!")), "{text}");
        }
        assert!(!m(&format!("^{}$", super::escape("a.b")), "axb"));
    }

    #[test]
    fn compiled_regexes_are_send_and_sync() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Regex>();
    }

    #[test]
    fn literals_and_unanchored_search() {
        assert!(m("abc", "xxabcxx"));
        assert!(!m("abc", "ab c"));
        assert!(m("", "anything"));
        assert!(m("a.c", "a-c"));
        assert!(m("é+", "café"));
        assert!(m("😀", "x😀y"));
        assert_eq!(re("a|b").as_str(), "a|b");
    }

    #[test]
    fn anchors_are_not_multiline() {
        assert!(m("^abc$", "abc"));
        assert!(!m("^abc$", "abc\n"));
        assert!(!m("^abc$", "x\nabc"));
        assert!(!m("^b", "a\nb"));
        assert!(!m("a$", "a\nb"));
    }

    #[test]
    fn dot_excludes_line_terminators_only() {
        for lt in ["\n", "\r", "\u{2028}", "\u{2029}"] {
            assert!(!m("^.$", lt), "{lt:?}");
        }
        for c in ["a", "\t", "\u{0B}", "\u{85}", "😀", "\u{0}"] {
            assert!(m("^.$", c), "{c:?}");
        }
    }

    #[test]
    fn digit_word_space_classes_are_ecma() {
        assert!(m(r"^\d$", "7"));
        assert!(!m(r"^\d$", "\u{07C0}"));
        assert!(m(r"^\D$", "\u{07C0}"));
        assert!(m(r"^\w+$", "az_AZ09"));
        assert!(!m(r"^\w$", "é"));
        assert!(m(r"^\W$", "é"));
        for s in [
            " ", "\t", "\u{0B}", "\u{0C}", "\u{A0}", "\u{FEFF}", "\n", "\r", "\u{2028}",
            "\u{2029}", "\u{2003}", "\u{1680}", "\u{3000}", "\u{202F}", "\u{205F}",
        ] {
            assert!(m(r"^\s$", s), "{s:?}");
            assert!(!m(r"^\S$", s), "{s:?}");
        }
        for s in ["\u{1}", "\u{2013}", "\u{85}", "\u{180E}", "x"] {
            assert!(!m(r"^\s$", s), "{s:?}");
            assert!(m(r"^\S$", s), "{s:?}");
        }
        assert!(m(r"^[\d\s]+$", "1 2\t3"));
        assert!(m(r"^[^\W]+$", "abc"));
        assert!(!m(r"^[^\W]+$", "a-c"));
        assert!(m(r"^[\D]$", "x"));
    }

    #[test]
    fn control_escapes() {
        assert!(m(r"^\cC$", "\u{3}"));
        assert!(m(r"^\cc$", "\u{3}"));
        assert!(m(r"^\cJ$", "\n"));
        assert!(m(r"^[\cA-\cC]+$", "\u{1}\u{2}\u{3}"));
        assert!(m(r"^\t\n\v\f\r$", "\t\n\u{B}\u{C}\r"));
        assert!(m(r"^\0$", "\0"));
        assert!(syntax_error(r"\c1"));
        assert!(syntax_error(r"\c"));
        assert!(syntax_error(r"\01"));
    }

    #[test]
    fn hex_and_unicode_escapes() {
        assert!(m(r"^\x41\u0042\u{43}\u{0001F600}$", "ABC😀"));
        assert!(m(r"^\uD83D\uDE00$", "😀"));
        assert!(m(r"^[\uD83D\uDE00-\uD83D\uDE4F]$", "🙂"));
        assert!(m(r"^\uD83D\uDC32*$", "🐲🐲"));
        assert!(!m(r"^\uD83D\uDC32*$", "🐉"));
        // A lone surrogate matches nothing in a Rust string, alone or in a class.
        assert!(!m(r"\uD83D", "😀"));
        assert!(m(r"a\uD800?b", "ab"));
        assert!(!m(r"[\uD800-\uDFFF]", "😀x"));
        assert!(m(r"[^\uD800]", "x"));
        assert!(m(r"^[\uD7FF-\uE000]+$", "\u{D7FF}\u{E000}"));
        assert!(syntax_error(r"\x4"));
        assert!(syntax_error(r"\u12"));
        assert!(syntax_error(r"\u{110000}"));
        assert!(syntax_error(r"\u{}"));
    }

    #[test]
    fn identity_escapes_are_syntax_characters_and_ascii_punctuation_only() {
        assert!(m(r"^\^\$\\\.\*\+\?\(\)\[\]\{\}\|\/$", r"^$\.*+?()[]{}|/"));
        for bad in [r"\a", r"\e", r"\z", r"\A", r"\ ", r"\é"] {
            assert!(syntax_error(bad), "{bad}");
        }
        for bad in [r"\-", r"\_"] {
            assert!(!super::is_ecma_regex(bad), "{bad}");
        }
        assert!(syntax_error("\\"));
    }

    #[test]
    fn character_classes() {
        assert!(m("^[a-c]+$", "abcba"));
        assert!(!m("^[a-c]+$", "abd"));
        assert!(m("^[^a-c]+$", "xyz"));
        assert!(m("^[-a]+$", "-a-"));
        assert!(m("^[a-]+$", "-a-"));
        assert!(m("^[a-c-e]+$", "a-e"));
        assert!(!m("^[a-c-e]+$", "d"));
        assert!(m("^[--0]+$", "-./0"));
        assert!(m(r"^[\b]$", "\u{8}"));
        assert!(m(r"^[\-]$", "-"));
        assert!(m(r"^[[]$", "["));
        assert!(m(r"^[&&|~~]+$", "&|~"));
        assert!(m(r"^[\]]$", "]"));
        assert!(m(r"^[.]$", "."));
        assert!(!m(r"^[.]$", "x"));
        assert!(!m("[]", "anything"));
        assert!(m("^a[]?b$", "ab"));
        assert!(m("^[^]$", "\n"));
        assert!(m("^[^]+$", "a\u{2028}😀"));
        assert!(syntax_error("[z-a]"));
        assert!(syntax_error(r"[\d-z]"));
        assert!(syntax_error(r"[a-\d]"));
        assert!(syntax_error("[abc"));
        assert!(syntax_error(r"[\B]"));
        assert!(syntax_error(r"[\1]"));
    }

    #[test]
    fn word_boundaries_are_ascii() {
        assert!(m(r"\bfoo\b", "a foo b"));
        assert!(!m(r"\bfoo\b", "afoo"));
        assert!(m(r"\bfoo", "éfoo"));
        assert!(m(r"\Boo", "foo"));
        assert!(!m(r"\Bfoo", "éfoo"));
        assert!(!m(r"^\b$", ""));
        assert!(syntax_error(r"\b+"));
        // The same on the backtracking path.
        assert!(m(r"\bfoo(?=!)", "éfoo!"));
        assert!(!m(r"\Bfoo(?=!)", "éfoo!"));
        assert!(!m(r"\bfoo\b(?=!)", "afoo!"));
    }

    #[test]
    fn quantifiers() {
        assert!(m("^a{3}$", "aaa"));
        assert!(!m("^a{3}$", "aa"));
        assert!(m("^a{2,}$", "aaaa"));
        assert!(m("^a{1,2}$", "aa"));
        assert!(!m("^a{1,2}$", "aaa"));
        assert!(m("^a{0}$", ""));
        assert!(m("^a{001,02}$", "aa"));
        assert!(m("^(?:ab)+?$", "abab"));
        assert!(m("^a*?b??c+?d{1,2}?$", "cd"));
        assert!(syntax_error("a{2,1}"));
        assert!(syntax_error("a{99999999999999999999,1}"));
        assert!(syntax_error("a{"));
        assert!(syntax_error("a{1"));
        assert!(syntax_error("a{,5}"));
        assert!(syntax_error("{1}"));
        assert!(syntax_error("a**"));
        assert!(syntax_error("a+*"));
        assert!(syntax_error("*a"));
        assert!(syntax_error("^*"));
        assert!(syntax_error("(?=a)*"));
        assert!(syntax_error("}"));
        assert!(syntax_error("]"));
        assert!(matches!(
            Regex::new("a{0,100001}"),
            Err(RegexError::TooBig(_))
        ));
        assert!(matches!(
            Regex::new("a{0,99999999999999999999999}"),
            Err(RegexError::TooBig(_))
        ));
    }

    #[test]
    fn groups_and_alternation() {
        assert!(m("^(ab|cd)+$", "abcdab"));
        assert!(m("^(?:ab|)$", ""));
        assert!(m("^(?<year>[0-9]{4})-(?<m>[0-9]{2})$", "2024-01"));
        assert!(m("^(|a)b$", "b"));
        assert!(syntax_error("(ab"));
        assert!(syntax_error("ab)"));
        assert!(syntax_error("(?P<name>x)"));
        assert!(syntax_error("(?#comment)"));
        assert!(syntax_error("(?i)abc"));
        // ES2025 modifier groups: valid syntax, no matcher.
        assert!(matches!(
            Regex::new("(?i:abc)"),
            Err(RegexError::Unsupported(_))
        ));
        assert!(syntax_error("(?<>x)"));
        assert!(syntax_error("(?<1a>x)"));
        assert!(syntax_error("(?<a>x)(?<a>y)"));
        assert!(m(r"^(?<\u0061b>x)\k<ab>$", "xx"));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}a{}", "(".repeat(10_000), ")".repeat(10_000));
        assert!(matches!(Regex::new(&deep), Err(RegexError::TooBig(_))));
        let ok = format!("{}a{}", "(?:".repeat(30), ")*".repeat(30));
        assert!(m(&ok, "aaa"));
        let deep_look = format!("{}a{}", "(?=".repeat(30), ")".repeat(30));
        assert!(m(&deep_look, "a"));
    }

    #[test]
    fn lookaround() {
        assert!(m("foo(?=bar)", "foobar"));
        assert!(!m("foo(?=bar)", "foobaz"));
        assert!(m("foo(?!bar)", "foobaz"));
        assert!(m("(?<=\\$)[0-9]+", "cost: $42"));
        assert!(!m("(?<=\\$)[0-9]+", "cost: 42"));
        assert!(m("(?<!-)\\b[0-9]+", "x 42"));
        assert!(!m("^(?<!-)[0-9]+$", "-42"));
        assert!(m("(?<=a+)b", "aab"));
        assert!(!m("(?<=a+)b", "cb"));
        assert!(m("^(?=.*[A-Z])(?=.*[0-9]).{8,}$", "passWord1"));
        assert!(!m("^(?=.*[A-Z])(?=.*[0-9]).{8,}$", "password1"));
        assert!(!re("(?=a)").is_linear());
        assert!(re("a+").is_linear());
    }

    #[test]
    fn backreferences() {
        assert!(m(r"^(a|b)\1$", "aa"));
        assert!(!m(r"^(a|b)\1$", "ab"));
        assert!(m(r"^(?<q>['\x22]).*\k<q>$", "'x'"));
        assert!(!m(r"^(?<q>['\x22]).*\k<q>$", "'x\""));
        // A reference to a group that has not matched matches the empty string.
        assert!(m(r"^\1(a)$", "a"));
        assert!(m(r"^(?:(a)|b)\1$", "b"));
        assert!(m(r"^(a\1)$", "a"));
        // Forward named reference.
        assert!(m(r"^\k<x>(?<x>a)$", "a"));
        assert!(m(r"^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\10$", "abcdefghijj"));
        assert!(!m(r"^(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)\10$", "abcdefghija0"));
        assert!(m(r"^(a)\1{2}$", "aaa"));
        assert!(syntax_error(r"(a)\2"));
        assert!(syntax_error(r"\1"));
        assert!(syntax_error(r"\k<nope>(?<x>a)"));
        assert!(syntax_error(r"\k"));
        assert!(syntax_error(r"(?<a>.)\k"));
        // Look-behinds match right to left: the group to the right is captured first.
        assert!(m(r"(?<=\1(a))b", "aab"));
        assert!(!m(r"(?<=\1(a))b", "xab"));
        assert!(m(r"^(a)(?<=\1)$", "a"));
        // Captures inside a quantified group are reset on every iteration.
        assert!(m(r"^(?:(a)|b)*\1$", "ab"));
        assert!(!m(r"^(?:(a)|b)*\1$", "ba"));
        assert!(m(r"^(?:(a)|b)*\1$", "baa"));
        assert!(m(r"^(?:(a)|(b))*\1\2$", "abb"));
        // An iteration that matches empty once the minimum is met fails.
        assert!(m(r"^(?:a?)*(?=x)", "x"));
        assert!(m(r"^(a*)+\1$", "aa"));
        // Look-arounds are atomic, negative ones keep no captures.
        assert!(!m(r"^(?=(a+))a*b\1$", "aaaba"));
        assert!(m(r"(?=(a+))a*b\1", "baaabac"));
        assert!(m(r"^(?=(a+?))\1b$", "ab"));
        assert!(m(r"^(?!(a))\1b$", "b"));
    }

    #[test]
    fn unicode_property_escapes() {
        assert!(m(r"^\p{Letter}+$", "Hello\u{3c0}"));
        assert!(!m(r"^\p{L}+$", "123"));
        assert!(m(r"^\P{L}+$", "123"));
        assert!(m(r"^\p{digit}+$", "\u{9ea}\u{9e8}"));
        assert!(m(r"^\p{gc=Lu}$", "A"));
        assert!(m(r"^\p{General_Category=Decimal_Number}$", "5"));
        assert!(m(r"^\p{Script=Greek}+$", "\u{3c0}\u{3b1}"));
        assert!(m(r"^\p{sc=Grek}$", "\u{3c0}"));
        assert!(m(r"^\p{scx=Grek}$", "\u{3c0}"));
        assert!(m(r"^\p{Script_Extensions=Latin}$", "a"));
        assert!(m(r"^\p{ASCII_Hex_Digit}+$", "09afAF"));
        assert!(m(r"^\p{Any}$", "\u{10FFFF}"));
        assert!(m(r"^\p{Emoji_Presentation}$", "😀"));
        assert!(m(r"^[\p{L}\d_]+$", "é_9"));
        assert!(m(r"^[^\p{L}]+$", "123"));
        assert!(m(r"^[\P{L}]+$", "123"));
        assert!(!m(r"\p{Cs}", "abc😀"));
        assert!(m(r"^\P{Surrogate}+$", "abc😀"));
        assert!(m(r"\p{L}(?=\d)", "a1"));
        assert!(syntax_error(r"\p{letter}"));
        assert!(syntax_error(r"\p{IsGreek}"));
        assert!(syntax_error(r"\p{Foo=Bar}"));
        assert!(syntax_error(r"\p{gc=Nope}"));
        assert!(syntax_error(r"\pL"));
        assert!(syntax_error(r"\p{L"));
        assert!(syntax_error(r"\p{RGI_Emoji}"));
        assert!(syntax_error(r"[\p{L}-z]"));
        assert!(matches!(
            Regex::new(r"\p{Script=NotAScript}"),
            Err(RegexError::Unsupported(_))
        ));
    }

    #[test]
    fn size_is_bounded() {
        assert!(matches!(
            Regex::new(r"(?:\p{L}{100}){1000}"),
            Err(RegexError::TooBig(_))
        ));
        assert!(matches!(
            Regex::new(r"(?:a{1000}){1000}"),
            Err(RegexError::TooBig(_))
        ));
        // The backtracking matcher counts repetitions instead of unrolling them.
        let r = re(r"(?=(?:\p{L}{100}){1000})");
        assert_eq!(r.is_match(&"é".repeat(100_000)), Ok(true));
        // Unanchored, a failing search retries at every offset: the budget stops it.
        assert_eq!(r.is_match(&"é".repeat(99_999)), Err(BudgetExceeded));
        let anchored = re(r"^(?=(?:\p{L}{100}){1000})");
        assert_eq!(anchored.is_match(&"é".repeat(99_999)), Ok(false));
        let long = format!("(?=a){}", "b".repeat(70_000));
        assert!(matches!(Regex::new(&long), Err(RegexError::TooBig(_))));
        assert!(Regex::new(r"^\p{L}{1,64}$").is_ok());
    }

    #[test]
    fn catastrophic_patterns_finish_quickly() {
        let evil = format!("{}!", "a".repeat(40));
        let start = Instant::now();
        assert!(!m("^(a+)+$", &evil));
        assert!(!m("^(a|a)*$", &evil));
        assert!(!m("^(a|aa)+$", &format!("{}!", "a".repeat(5000))));
        assert!(re("^(a+)+$").is_linear());
        // The backtracking path: either an answer or the budget error, quickly.
        let long = format!("{}!", "a".repeat(5000));
        for pattern in [
            r"^(a+)+\1$",
            r"^(?=(a+)+$)",
            r"^(a*)*\1b$",
            r"(?<=(a+)+)b",
            r"^((a|a)*)*(?!x)$",
        ] {
            let r = re(pattern);
            for hay in [&evil, &long] {
                let t = Instant::now();
                let result = r.is_match(hay);
                assert!(
                    matches!(result, Ok(false) | Err(BudgetExceeded)),
                    "{pattern}: {result:?}"
                );
                assert!(
                    t.elapsed() < Duration::from_secs(2),
                    "{pattern} took {:?}",
                    t.elapsed()
                );
            }
        }
        let r = Regex::with_budget(r"^(a*)*\1b$", 1000).expect("compiles");
        assert_eq!(r.is_match(&evil), Err(BudgetExceeded));
        // A budget shared across searches.
        let r = re(r"a(?=b)");
        let mut remaining = 1_000;
        assert_eq!(r.is_match_within("xxab", &mut remaining), Ok(true));
        assert!(remaining < 1_000 && remaining > 900, "{remaining}");
        let mut remaining = 50;
        assert_eq!(
            r.is_match_within(&"a".repeat(100), &mut remaining),
            Err(BudgetExceeded)
        );
        assert_eq!(remaining, 0);
        let mut remaining = 0;
        assert_eq!(re("a+").is_match_within("aaa", &mut remaining), Ok(true));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn errors_display() {
        let e = Regex::new("(").unwrap_err();
        assert!(e
            .to_string()
            .starts_with("invalid ECMA-262 regular expression"));
        assert!(BudgetExceeded.to_string().contains("budget"));
    }

    #[test]
    fn never_panics_on_odd_input() {
        let samples = [
            "",
            "\\",
            "(",
            ")",
            "[",
            "]",
            "{",
            "}",
            "[^",
            "(?",
            "(?<",
            "(?<a",
            "\\u{",
            "\\u{1",
            "\\x",
            "\\c",
            "\\p",
            "\\p{",
            "\\k<",
            "a{1,",
            "[a-",
            "[\\",
            "(?<=",
            "\\uD800\\u",
            "\\uD800\\uDC0",
            "[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]",
            "\u{0}",
            "x{4294967296}",
            "\\18446744073709551616",
            "(?<é>a)\\k<é>",
            "[\\s-\\S]",
            "a|*",
            "||",
            "(|)",
        ];
        for s in samples {
            let _ = Regex::new(s).map(|r| r.is_match("some text \u{2028} 😀 aaa"));
        }
    }

    // --- Differential: the backtracking matcher against the `regex` crate -------------------

    fn backtracking(pattern: &str) -> super::backtrack::Program {
        let parsed = super::Parser::parse(pattern).expect("valid pattern");
        super::backtrack::Program::compile(&parsed.root, parsed.groups, 1_000_000)
            .expect("compiles")
    }

    fn pattern_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let atom = prop::sample::select(vec![
            "a", "b", ".", "[ab]", "[^a]", r"\d", r"\D", r"\s", r"\w", r"\W", r"\b", r"\B", "^",
            "$", "1", r"\n", "[]", "[^]", r"\u{E9}", "é",
        ])
        .prop_map(str::to_owned);
        atom.prop_recursive(4, 24, 4, |inner| {
            let quant = prop::sample::select(vec![
                "*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,}", "{2,3}?",
            ]);
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(|v| v.concat()),
                prop::collection::vec(inner.clone(), 2..4)
                    .prop_map(|v| format!("(?:{})", v.join("|"))),
                (inner.clone(), quant).prop_map(|(p, q)| format!("(?:{p}){q}")),
                inner.prop_map(|p| format!("({p})")),
            ]
        })
    }

    /// Patterns of the shapes the direct matcher takes, and near misses it must refuse.
    fn simple_pattern_strategy() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let atom = prop::sample::select(vec![
            "a", "b", "1", "-", r"\.", "é", "[ab]", "[a-z]", r"\d", "[0-9_]", "[b1]", ".", "[^a]",
        ]);
        let quant =
            prop::sample::select(vec!["", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "{1,3}"]);
        (
            any::<bool>(),
            prop::collection::vec((atom, quant), 0..5),
            any::<bool>(),
        )
            .prop_map(|(start, pieces, end)| {
                let mut p = String::new();
                if start {
                    p.push('^');
                }
                for (a, q) in pieces {
                    p.push_str(a);
                    p.push_str(q);
                }
                if end {
                    p.push('$');
                }
                p
            })
    }

    #[test]
    fn simple_matcher_takes_the_common_shapes() {
        for p in [
            "^it-[0-9]{6}$",
            "^[A-Z]{3}$",
            "^[a-z0-9_-]+$",
            r"^\d{4}-\d{2}-\d{2}$",
            "abc",
            "^v1/",
            r"\.json$",
            "^é[a-z]+$",
            "",
        ] {
            assert!(Regex::new(p).unwrap().simple.is_some(), "{p}");
        }
        for p in [
            "^[a-z]*a$",
            "a|b",
            "^(ab)+$",
            "[a-z]+",
            "^.*$",
            "^[^a]+$",
            "^a?b?$",
            r"^\w+\b",
        ] {
            assert!(Regex::new(p).unwrap().simple.is_none(), "{p}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn backtracking_agrees_with_linear(
            pattern in pattern_strategy(),
            haystacks in proptest::collection::vec("[ab1 \né_-]{0,10}", 8),
        ) {
            // Patterns with an assertion under a quantifier are not ECMA; skip what fails to parse.
            if let Ok(linear) = Regex::new(&pattern).map(|r| r.engine) {
                let super::Engine::Linear(linear) = linear else { return Ok(()) };
                let program = backtracking(&pattern);
                for h in &haystacks {
                    proptest::prop_assert_eq!(
                        program.is_match(h, usize::MAX).0,
                        Ok(linear.is_match(h)),
                        "pattern {:?} haystack {:?}", pattern, h
                    );
                }
            }
        }

        #[test]
        fn simple_matcher_agrees_with_linear(
            pattern in simple_pattern_strategy(),
            haystacks in proptest::collection::vec("[ab1 \né_.-]{0,12}", 12),
        ) {
            let r = Regex::new(&pattern).unwrap();
            let super::Engine::Linear(linear) = &r.engine else { return Ok(()) };
            if let Some(s) = &r.simple {
                // Besides random text, strings the pattern itself generates (mostly matches).
                let mut samples = haystacks.clone();
                if let Ok(gen) = proptest::string::string_regex(pattern.trim_start_matches('^').trim_end_matches('$')) {
                    use proptest::strategy::{Strategy, ValueTree};
                    let mut runner = proptest::test_runner::TestRunner::deterministic();
                    for _ in 0..8 {
                        let v = gen.new_tree(&mut runner).unwrap().current();
                        samples.push(format!("{v}x"));
                        samples.push(v);
                    }
                }
                for h in &samples {
                    proptest::prop_assert_eq!(
                        s.is_match(h),
                        linear.is_match(h),
                        "pattern {:?} haystack {:?}", pattern, h
                    );
                }
            }
        }

        #[test]
        fn never_panics_on_random_patterns(pattern in "[ab()\\[\\]{}|^$.*+?:=!<>,0-9dDwWsSbBkpPuxc-]{0,16}") {
            if let Ok(r) = Regex::new(&pattern) {
                let _ = r.is_match("ab(c)[d]{1,2} 123 é\n");
            }
        }
    }

    // --- JSON-Schema-Test-Suite -----------------------------------------------------------

    use serde_json::Value;

    /// Known disagreements with the suite: (file, group description, test description, why).
    const EXPECTED_FAILURES: &[(&str, &str, &str, &str)] = &[];

    fn load(file: &str) -> Vec<Value> {
        serde_json::from_slice::<Value>(&crate::schema::suite::read(file))
            .expect("suite file is JSON")
            .as_array()
            .expect("array")
            .clone()
    }

    /// Just enough of JSON Schema for the pattern suites; anything else fails the test.
    fn valid(schema: &Value, instance: &Value) -> bool {
        let obj = match schema {
            Value::Bool(b) => return *b,
            Value::Object(o) => o,
            other => panic!("not a schema: {other}"),
        };
        for (keyword, value) in obj {
            let ok = match keyword.as_str() {
                "$schema" => true,
                "type" => match value.as_str().expect("single type") {
                    "string" => instance.is_string(),
                    "object" => instance.is_object(),
                    "null" => instance.is_null(),
                    "boolean" => instance.is_boolean(),
                    "number" => instance.is_number(),
                    "integer" => instance.as_f64().is_some_and(|f| f.fract() == 0.0),
                    t => panic!("type {t}"),
                },
                "maximum" => instance
                    .as_f64()
                    .is_none_or(|f| f <= value.as_f64().expect("number")),
                "pattern" => match instance {
                    Value::String(s) => re(value.as_str().expect("pattern string"))
                        .is_match(s)
                        .expect("budget"),
                    _ => true,
                },
                "patternProperties" | "additionalProperties" => {
                    let Value::Object(members) = instance else {
                        continue;
                    };
                    let patterns = obj.get("patternProperties").and_then(Value::as_object);
                    members.iter().all(|(name, member)| {
                        let mut matched = false;
                        let mut ok = true;
                        for (p, sub) in patterns.into_iter().flatten() {
                            if re(p).is_match(name).expect("budget") {
                                matched = true;
                                ok &= valid(sub, member);
                            }
                        }
                        if keyword == "patternProperties" {
                            ok
                        } else {
                            matched || valid(value, member)
                        }
                    })
                }
                k => panic!("keyword {k} not supported by this test"),
            };
            if !ok {
                return false;
            }
        }
        true
    }

    fn run_file(file: &str, failures: &mut Vec<String>, ran: &mut usize) {
        let groups = load(file);
        for group in groups {
            let gd = group["description"].as_str().unwrap_or_default();
            for test in group["tests"].as_array().expect("tests") {
                let td = test["description"].as_str().unwrap_or_default();
                let expected = test["valid"].as_bool().expect("valid");
                let got = if group["schema"].get("format").is_some() {
                    // `format: regex`: a string is valid if it is an ECMA-262 pattern.
                    match &test["data"] {
                        Value::String(p) => match Regex::new(p) {
                            Ok(_) => true,
                            Err(RegexError::Syntax(_)) => false,
                            Err(e) => panic!("{p:?}: {e}"),
                        },
                        _ => true,
                    }
                } else {
                    valid(&group["schema"], &test["data"])
                };
                *ran += 1;
                let known = EXPECTED_FAILURES
                    .iter()
                    .any(|&(f, g, t, _)| f == file && g == gd && t == td);
                if (got != expected) != known {
                    failures.push(format!(
                        "{file}: {gd} / {td}: expected {expected}, got {got}"
                    ));
                }
            }
        }
    }

    #[test]
    fn json_schema_test_suite() {
        let mut failures = Vec::new();
        let mut ran = 0;
        for file in [
            "pattern.json",
            "patternProperties.json",
            "optional/ecmascript-regex.json",
            "optional/non-bmp-regex.json",
            "optional/format/ecmascript-regex.json",
            "optional/format/regex.json",
        ] {
            run_file(file, &mut failures, &mut ran);
        }
        crate::schema::suite::finish("regex", ran, &failures);
    }
}
