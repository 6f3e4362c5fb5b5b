//! `regex` format: whether a string is a syntactically valid ECMA-262 (ES2025)
//! regular expression pattern, read in Unicode mode (the `u` flag) as JSON Schema
//! recommends, so without the Annex B web-compatibility leniencies: no octal or
//! identity escapes for letters (`\a`), no lone `{`, `}` or `]`, no quantified
//! lookarounds, backreferences must name existing groups.
//!
//! Covered: alternatives, groups (capturing, named, non-capturing, lookahead and
//! lookbehind, `(?ims-ims:...)` modifiers), quantifiers with the `{n,m}` order check,
//! character classes with range order checks, every escape form, `\p{...}`/`\P{...}`
//! against the `General_Category` values and binary properties ES supports, group-name
//! identifiers (`ID_Start`/`ID_Continue` via `unicode-ident`), and ES2025 duplicate named
//! groups (allowed only in different alternatives).
//!
//! Lenient by design: `\p{Script=...}` / `\p{Script_Extensions=...}` values are
//! checked only for shape (letters, digits, `_`) since their list grows with every
//! Unicode version. Not handled: the `v` flag's set notation (a different mode).
//!
//! The parser is iterative (no recursion on nesting) and `O(n log n)`: names are kept
//! in per-group sets merged smaller-into-larger.

use crate::schema::regex::{
    is_general_category, is_id_continue, is_id_start, is_script_value, merge_disjoint, union,
    Names, BINARY_PROPERTIES,
};

/// Whether `pattern` is a valid ECMA-262 pattern in Unicode mode.
pub(crate) fn is_ecma_regex(pattern: &str) -> bool {
    Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        groups: 0,
        names: Names::new(),
        max_backref: 0,
        named_refs: Vec::new(),
    }
    .parse()
    .is_some()
}

/// One open group (or the whole pattern) and the names defined in it so far.
struct Frame {
    /// Group name, for a named capturing group.
    name: Option<String>,
    /// Whether a quantifier may follow the group (not for lookarounds).
    quantifiable: bool,
    /// Names from the alternatives already closed with `|`.
    disjunction: Names,
    /// Names from the current alternative.
    alternative: Names,
}

impl Frame {
    fn new(name: Option<String>, quantifiable: bool) -> Self {
        Frame {
            name,
            quantifiable,
            disjunction: Names::new(),
            alternative: Names::new(),
        }
    }
}

/// A class atom: one code point, or a class escape such as `\d` (not a range end).
enum ClassAtom {
    Char(u32),
    Set,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    /// Capturing groups seen.
    groups: u64,
    /// Every group name defined.
    names: Names,
    /// Largest numeric backreference.
    max_backref: u64,
    /// Names used by `\k<...>`.
    named_refs: Vec<String>,
}

impl Parser {
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
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn parse(&mut self) -> Option<()> {
        let mut stack = vec![Frame::new(None, false)];
        let mut quantifiable = false;
        while let Some(c) = self.bump() {
            quantifiable = match c {
                '|' => {
                    let frame = stack.last_mut()?;
                    let alternative = std::mem::take(&mut frame.alternative);
                    frame.disjunction = union(std::mem::take(&mut frame.disjunction), alternative);
                    false
                }
                '(' => {
                    stack.push(self.group_open()?);
                    false
                }
                ')' => {
                    if stack.len() < 2 {
                        return None;
                    }
                    let frame = stack.pop()?;
                    let mut names = union(frame.disjunction, frame.alternative);
                    if let Some(name) = frame.name {
                        if !names.insert(name) {
                            return None;
                        }
                    }
                    merge_disjoint(&mut stack.last_mut()?.alternative, names).ok()?;
                    frame.quantifiable
                }
                '^' | '$' => false,
                '\\' => self.atom_escape()?,
                '[' => {
                    self.class()?;
                    true
                }
                '*' | '+' | '?' if quantifiable => {
                    self.eat('?');
                    false
                }
                '{' if quantifiable => {
                    self.braced_quantifier()?;
                    self.eat('?');
                    false
                }
                '*' | '+' | '?' | '{' | '}' | ']' => return None,
                _ => true,
            };
        }
        if stack.len() != 1 || self.max_backref > self.groups {
            return None;
        }
        self.named_refs
            .iter()
            .all(|name| self.names.contains(name))
            .then_some(())
    }

    /// After `(`: the group's kind, as a new frame.
    fn group_open(&mut self) -> Option<Frame> {
        if !self.eat('?') {
            self.groups += 1;
            return Some(Frame::new(None, true));
        }
        match self.bump()? {
            ':' => Some(Frame::new(None, true)),
            '=' | '!' => Some(Frame::new(None, false)),
            '<' if matches!(self.peek(), Some('=' | '!')) => {
                self.pos += 1;
                Some(Frame::new(None, false))
            }
            '<' => {
                let name = self.group_name()?;
                self.groups += 1;
                self.names.insert(name.clone());
                Some(Frame::new(Some(name), true))
            }
            'i' | 'm' | 's' | '-' => {
                self.pos -= 1;
                self.modifiers()?;
                Some(Frame::new(None, true))
            }
            _ => None,
        }
    }

    /// `(?ims-ims:`: after `(?`, through the `:`.
    fn modifiers(&mut self) -> Option<()> {
        let mut seen = [false; 3];
        let mut take = |p: &mut Self| -> Option<usize> {
            let mut count = 0;
            while let Some(i) = p.peek().and_then(|c| "ims".find(c)) {
                if std::mem::replace(&mut seen[i], true) {
                    return None;
                }
                p.pos += 1;
                count += 1;
            }
            Some(count)
        };
        let added = take(self)?;
        if self.eat('-') {
            let removed = take(self)?;
            if added + removed == 0 {
                return None;
            }
        }
        self.eat(':').then_some(())
    }

    /// `<name>` after the `<` was consumed: the decoded name.
    fn group_name(&mut self) -> Option<String> {
        let mut name = String::new();
        loop {
            let c = match self.bump()? {
                '>' if !name.is_empty() => return Some(name),
                '\\' => {
                    if self.bump()? != 'u' {
                        return None;
                    }
                    char::from_u32(self.unicode_escape()?)?
                }
                c => c,
            };
            let ok = if name.is_empty() {
                is_id_start(c)
            } else {
                is_id_continue(c)
            };
            if !ok {
                return None;
            }
            name.push(c);
        }
    }

    /// After `\` outside a class: whether the escape is a quantifiable atom.
    fn atom_escape(&mut self) -> Option<bool> {
        match self.peek()? {
            'b' | 'B' => {
                self.pos += 1;
                Some(false)
            }
            '1'..='9' => {
                let mut value = 0u64;
                while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
                    value = value.saturating_mul(10).saturating_add(u64::from(d));
                    self.pos += 1;
                }
                self.max_backref = self.max_backref.max(value);
                Some(true)
            }
            'k' => {
                self.pos += 1;
                if !self.eat('<') {
                    return None;
                }
                let name = self.group_name()?;
                self.named_refs.push(name);
                Some(true)
            }
            _ => self.class_escape(false).map(|_| true),
        }
    }

    /// A `[...]` class after its `[`.
    fn class(&mut self) -> Option<()> {
        self.eat('^');
        loop {
            if self.eat(']') {
                return Some(());
            }
            let low = self.class_atom()?;
            if self.peek() == Some('-') && !matches!(self.peek_at(1), None | Some(']')) {
                self.pos += 1;
                let high = self.class_atom()?;
                match (low, high) {
                    (ClassAtom::Char(a), ClassAtom::Char(b)) if a <= b => {}
                    _ => return None,
                }
            }
        }
    }

    fn class_atom(&mut self) -> Option<ClassAtom> {
        match self.bump()? {
            '\\' => self.class_escape(true),
            c => Some(ClassAtom::Char(u32::from(c))),
        }
    }

    /// After `\`: a character or class escape (`in_class` admits `\b` and `\-`).
    fn class_escape(&mut self, in_class: bool) -> Option<ClassAtom> {
        let c = self.bump()?;
        let value = match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => return Some(ClassAtom::Set),
            'p' | 'P' => {
                self.property()?;
                return Some(ClassAtom::Set);
            }
            'b' if in_class => 8,
            '-' if in_class => u32::from('-'),
            'f' => 0x0C,
            'n' => 0x0A,
            'r' => 0x0D,
            't' => 0x09,
            'v' => 0x0B,
            'c' => {
                let letter = self.bump().filter(char::is_ascii_alphabetic)?;
                u32::from(letter) % 32
            }
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => 0,
            'x' => {
                let (h, l) = (self.hex_digit()?, self.hex_digit()?);
                h * 16 + l
            }
            'u' => self.unicode_escape()?,
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => u32::from(c),
            _ => return None,
        };
        Some(ClassAtom::Char(value))
    }

    fn hex_digit(&mut self) -> Option<u32> {
        let d = self.peek()?.to_digit(16)?;
        self.pos += 1;
        Some(d)
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            value = value * 16 + self.hex_digit()?;
        }
        Some(value)
    }

    /// After `\u`: `XXXX`, a `\uXXXX\uXXXX` surrogate pair, or `{X...}`.
    fn unicode_escape(&mut self) -> Option<u32> {
        if self.eat('{') {
            let mut value = 0u32;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                value = value.checked_mul(16)?.checked_add(d)?;
                if value > 0x10_FFFF {
                    return None;
                }
                digits += 1;
                self.pos += 1;
            }
            return (digits > 0 && self.eat('}')).then_some(value);
        }
        let lead = self.hex4()?;
        if (0xD800..0xDC00).contains(&lead)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            let save = self.pos;
            self.pos += 2;
            match self.hex4() {
                Some(trail) if (0xDC00..0xE000).contains(&trail) => {
                    return Some(0x10000 + ((lead - 0xD800) << 10) + (trail - 0xDC00));
                }
                _ => self.pos = save,
            }
        }
        Some(lead)
    }

    /// After `\p` / `\P`: `{Name}` or `{Name=Value}`.
    fn property(&mut self) -> Option<()> {
        if !self.eat('{') {
            return None;
        }
        let mut name = String::new();
        let mut value: Option<String> = None;
        loop {
            match self.bump()? {
                '}' => break,
                '=' if value.is_none() && !name.is_empty() => value = Some(String::new()),
                c if c.is_ascii_alphanumeric() || c == '_' => {
                    value.as_mut().unwrap_or(&mut name).push(c);
                }
                _ => return None,
            }
        }
        let ok = match value {
            None => is_general_category(&name) || BINARY_PROPERTIES.contains(&name.as_str()),
            Some(value) => match name.as_str() {
                "General_Category" | "gc" => is_general_category(&value),
                "Script" | "sc" | "Script_Extensions" | "scx" => is_script_value(&value),
                _ => false,
            },
        };
        ok.then_some(())
    }

    /// After `{` following an atom: `n}`, `n,}` or `n,m}` with n <= m.
    fn braced_quantifier(&mut self) -> Option<()> {
        let low = self.decimal()?;
        if self.eat(',') && self.peek() != Some('}') {
            let high = self.decimal()?;
            if compare_decimal(&low, &high) == std::cmp::Ordering::Greater {
                return None;
            }
        }
        self.eat('}').then_some(())
    }

    /// A non-empty run of decimal digits, without leading zeros.
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
        Some(trimmed.to_owned())
    }
}

/// Compares two decimal strings without leading zeros.
fn compare_decimal(a: &str, b: &str) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::is_ecma_regex;

    #[test]
    fn valid_patterns() {
        for ok in [
            "", "a", "a|b|", "^a$", "(a)(?:b)(?=c)(?!d)(?<=e)(?<!f)", "a*?b+?c??d{2}e{2,}?f{2,3}", "a{0010,10}",
            "[]", "[^]", "[a-z\\d-]", "[-a]", "[a-]", "[--a]", "[\\b\\-\\]]", "[\\u{0}-\\u{10FFFF}]", "[\\uD83D\\uDE00-\\u{1F64F}]",
            "\\cZ\\ca\\0\\x41\\u0041\\u{41}\\f\\n\\r\\t\\v\\/\\^\\$\\\\\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|",
            "\\p{L}\\P{Lu}\\p{gc=Nd}\\p{Script=Greek}\\p{scx=Latn}\\p{ASCII_Hex_Digit}\\p{Any}",
            "(a)\\1", "\\1(a)", "(?<a>x)\\k<a>", "\\k<a>(?<a>x)", "(?<$_a1>.)", "(?<\\u0061>.)(?<\\u{62}c>.)", "(?<é>.)", "(?<ünïcödé>.)",
            "(?<a>x)|(?<a>y)", "((?<a>x)|(?<a>y))", "(?:(?<a>x)|(?<a>y))|(?<a>z)",
            "(?i:a)(?m-s:b)(?-i:c)(?ims:d)", "a/b", "\\]", "\u{1F600}+", "(?:a)+", "(a){2}",
        ] {
            assert!(is_ecma_regex(ok), "{ok}");
        }
    }

    #[test]
    fn invalid_patterns() {
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
            assert!(!is_ecma_regex(bad), "{bad}");
        }
    }

    #[test]
    fn deep_nesting_does_not_recurse() {
        let deep = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(is_ecma_regex(&deep));
        assert!(!is_ecma_regex(&"(".repeat(100_000)));
        let many = "(?<a>x)|".repeat(20_000);
        assert!(is_ecma_regex(&many));
    }
}
