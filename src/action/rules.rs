//! Semantic argument rules: what JSON Schema cannot say about a valid string.
//!
//! Path containment (lexical in both the POSIX and the Windows reading, then against the file
//! system when a workspace is given), https-only URLs with a host allowlist, length caps,
//! forbidden substrings, and values bound to the session's [`CallerContext`] (`equals_context`: an
//! account id must be the caller's; `in_context_list`: a project must be one of the
//! caller's). Each rule reads one value by JSON Pointer in the arguments object;
//! it never changes it. Argument names outside the schema are the policy's business (the
//! validator finds them, see `policy.rs`), not a rule's.

use std::path::{Component, Path};

use super::Reason;
use crate::json::Value;

/// One semantic rule on the value at `pointer` in the arguments.
///
/// # Example
/// ```
/// use jsongate::action::{Reason, Rule};
/// use jsongate::json::Value;
/// use jsongate::Limits;
/// let rule = Rule::Url { pointer: "/url".into(), hosts: vec!["*.example.com".into()] };
/// let args = |s: &str| Value::parse(s.as_bytes(), Limits::new()).unwrap();
/// assert!(rule.check(&args(r#"{"url":"https://docs.example.com/a"}"#), None).is_ok());
/// let err = rule.check(&args(r#"{"url":"http://docs.example.com/a"}"#), None).unwrap_err();
/// assert_eq!((err.reason, err.rule), (Reason::HostNotAllowed, "url"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The string is a path that stays inside the workspace root.
    Path {
        /// Where the path is in the arguments.
        pointer: String,
    },
    /// The string is an `https` URL whose host is in `hosts` (`*.example.com` admits
    /// subdomains of `example.com`, not the domain itself).
    Url {
        /// Where the URL is in the arguments.
        pointer: String,
        /// Allowed hosts, lowercase.
        hosts: Vec<String>,
    },
    /// The string has at most `max_chars` Unicode scalar values.
    MaxLength {
        /// Where the string is.
        pointer: String,
        /// The cap.
        max_chars: u64,
    },
    /// The string contains none of `substrings` (compared case-insensitively).
    Forbid {
        /// Where the string is.
        pointer: String,
        /// Forbidden substrings, lowercase.
        substrings: Vec<String>,
    },
    /// The value (a string, or an integer compared by its text) equals the session's
    /// context value `key`, which must hold exactly one value.
    EqualsContext {
        /// Where the value is.
        pointer: String,
        /// The context key (`account_id`, `project`, …).
        key: String,
    },
    /// The value (as for [`Rule::EqualsContext`]) is one of the session's context values
    /// under `key`.
    InContextList {
        /// Where the value is.
        pointer: String,
        /// The context key.
        key: String,
    },
}

/// What the session says about its caller, for [`Rule::EqualsContext`] and
/// [`Rule::InContextList`]: each key holds a list of values.
///
/// # Example
/// ```
/// use jsongate::action::{CallerContext, Rule};
/// use jsongate::json::Value;
/// let ctx = CallerContext::new().value("project", "p-1").value("project", "p-2");
/// let rule = Rule::InContextList { pointer: "/project".into(), key: "project".into() };
/// let args = Value::parse(br#"{"project":"p-2"}"#, jsongate::Limits::new()).unwrap();
/// assert!(rule.check_in(&args, None, &ctx).is_ok());
/// assert!(rule.check_in(&args, None, &CallerContext::new()).is_err());
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallerContext {
    entries: Vec<(String, Vec<String>)>,
}

impl CallerContext {
    /// No values.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::CallerContext;
    /// assert!(CallerContext::new().get("account_id").is_empty());
    /// assert_eq!(CallerContext::new(), CallerContext::default());
    /// ```
    pub fn new() -> CallerContext {
        CallerContext::default()
    }

    /// Adds `value` to `key`'s list.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::CallerContext;
    /// let ctx = CallerContext::new().value("project", "a").value("project", "b").value("account_id", "u-9");
    /// assert_eq!(ctx.get("project"), ["a", "b"]); // a second value is added, not replaced
    /// assert_eq!(ctx.get("account_id"), ["u-9"]);
    /// ```
    #[must_use]
    pub fn value(mut self, key: &str, value: &str) -> CallerContext {
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, v)) => v.push(value.to_owned()),
            None => self.entries.push((key.to_owned(), vec![value.to_owned()])),
        }
        self
    }

    /// `key` with `value` as its only value (`None`: without the key).
    pub(crate) fn replaced(mut self, key: &str, value: Option<&str>) -> CallerContext {
        self.entries.retain(|(k, _)| k != key);
        if let Some(v) = value {
            self.entries.push((key.to_owned(), vec![v.to_owned()]));
        }
        self
    }

    /// The values under `key` (empty when it has none).
    ///
    /// # Example
    /// ```
    /// use jsongate::action::CallerContext;
    /// let ctx = CallerContext::new().value("account_id", "u-9");
    /// assert_eq!(ctx.get("account_id"), ["u-9"]);
    /// assert!(ctx.get("project").is_empty());
    /// ```
    pub fn get(&self, key: &str) -> &[String] {
        self.entries
            .iter()
            .find(|(k, _)| k == key)
            .map_or(&[], |(_, v)| v.as_slice())
    }

    /// Every value under every key (the session's trusted context for provenance).
    pub(crate) fn all_values(&self) -> impl Iterator<Item = &str> {
        self.entries
            .iter()
            .flat_map(|(_, v)| v.iter().map(String::as_str))
    }
}

/// A rule that did not hold.
///
/// # Example
/// ```
/// use jsongate::action::{Reason, Rule, RuleFailure};
/// use jsongate::json::Value;
/// let rule = Rule::MaxLength { pointer: "/title".into(), max_chars: 5 };
/// let args = Value::parse(br#"{"title":"far too long"}"#, jsongate::Limits::new()).unwrap();
/// assert_eq!(rule.check(&args, None), Err(RuleFailure {
///     reason: Reason::FieldTooLong, rule: "max_length", pointer: "/title".into() }));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFailure {
    /// The decision reason it maps to.
    pub reason: Reason,
    /// The rule's name as the policy spells it (`path`, `equals_context`, …).
    pub rule: &'static str,
    /// The pointer of the offending value in the arguments.
    pub pointer: String,
}

impl Rule {
    /// The pointer the rule reads.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Rule;
    /// assert_eq!(Rule::Path { pointer: "/file".into() }.pointer(), "/file");
    /// ```
    pub fn pointer(&self) -> &str {
        match self {
            Rule::Path { pointer }
            | Rule::Url { pointer, .. }
            | Rule::MaxLength { pointer, .. }
            | Rule::Forbid { pointer, .. }
            | Rule::EqualsContext { pointer, .. }
            | Rule::InContextList { pointer, .. } => pointer,
        }
    }

    /// The rule's name as the policy spells it.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Rule;
    /// assert_eq!(Rule::Forbid { pointer: "/q".into(), substrings: vec![] }.name(), "forbid");
    /// assert_eq!(Rule::EqualsContext { pointer: "/a".into(), key: "a".into() }.name(), "equals_context");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Rule::Path { .. } => "path",
            Rule::Url { .. } => "url",
            Rule::MaxLength { .. } => "max_length",
            Rule::Forbid { .. } => "forbid",
            Rule::EqualsContext { .. } => "equals_context",
            Rule::InContextList { .. } => "in_context_list",
        }
    }

    fn reason(&self) -> Reason {
        match self {
            Rule::Path { .. } => Reason::PathEscape,
            Rule::Url { .. } => Reason::HostNotAllowed,
            Rule::MaxLength { .. } => Reason::FieldTooLong,
            Rule::Forbid { .. } => Reason::ForbiddenSubstring,
            Rule::EqualsContext { .. } | Rule::InContextList { .. } => Reason::ContextMismatch,
        }
    }

    /// Checks the rule against `args`. Arguments that are not an object fail (their shape
    /// must not hide a value from the rule); in an object, an absent value passes (the
    /// schema decides whether it is required) and a value that is not a string fails.
    ///
    /// `workspace` is the canonical workspace root, when paths are checked against the
    /// file system. Context rules see an empty context here, so they fail; see
    /// [`check_in`](Self::check_in).
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Reason, Rule};
    /// use jsongate::json::Value;
    /// let rule = Rule::Path { pointer: "/file".into() };
    /// let args = |s: &str| Value::parse(s.as_bytes(), jsongate::Limits::new()).unwrap();
    /// assert!(rule.check(&args(r#"{"file":"src/lib.rs"}"#), None).is_ok());
    /// assert_eq!(rule.check(&args(r#"{"file":"../etc/passwd"}"#), None).unwrap_err().reason, Reason::PathEscape);
    /// assert!(rule.check(&args(r#"{"other":1}"#), None).is_ok()); // absent: the schema decides
    /// assert!(rule.check(&args(r#"{"file":7}"#), None).is_err()); // not a string
    /// assert!(rule.check(&args(r#"["src/lib.rs"]"#), None).is_err()); // not an object
    /// ```
    pub fn check(&self, args: &Value, workspace: Option<&Path>) -> Result<(), RuleFailure> {
        self.check_in(args, workspace, &CallerContext::new())
    }

    /// As [`check`](Self::check), with the session's context for the context rules. For
    /// those, an absent value fails too: a value bound to the caller must be there.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{CallerContext, Rule};
    /// use jsongate::json::Value;
    /// let rule = Rule::EqualsContext { pointer: "/account".into(), key: "account_id".into() };
    /// let ctx = CallerContext::new().value("account_id", "1042");
    /// let args = |s: &str| Value::parse(s.as_bytes(), jsongate::Limits::new()).unwrap();
    /// assert!(rule.check_in(&args(r#"{"account":"1042"}"#), None, &ctx).is_ok());
    /// assert!(rule.check_in(&args(r#"{"account":1042}"#), None, &ctx).is_ok()); // an integer by its text
    /// assert!(rule.check_in(&args(r#"{"account":"7"}"#), None, &ctx).is_err());
    /// assert!(rule.check_in(&args("{}"), None, &ctx).is_err()); // a context value must be there
    /// ```
    pub fn check_in(
        &self,
        args: &Value,
        workspace: Option<&Path>,
        context: &CallerContext,
    ) -> Result<(), RuleFailure> {
        if let Rule::EqualsContext { key, .. } | Rule::InContextList { key, .. } = self {
            let values = context.get(key);
            let v = match args {
                Value::Object(_) => args.pointer(self.pointer()),
                _ => None,
            };
            let text = match v {
                Some(Value::String(s)) => Some(s.as_str()),
                Some(Value::Number(n)) if n.bytes().all(|b| b.is_ascii_digit() || b == b'-') => {
                    Some(n.as_str())
                }
                _ => None,
            };
            let ok = text.is_some_and(|t| match self {
                Rule::EqualsContext { .. } => values.len() == 1 && values[0] == t,
                _ => values.iter().any(|v| v == t),
            });
            return if ok { Ok(()) } else { Err(self.failure()) };
        }
        let found = match args {
            Value::Object(_) => match args.pointer(self.pointer()) {
                Some(v) => Some(v),
                None => return Ok(()),
            },
            _ => None,
        };
        let ok = found.and_then(Value::as_str).is_some_and(|s| match self {
            Rule::Path { .. } => path_contained(s, workspace),
            Rule::Url { hosts, .. } => url_allowed(s, hosts),
            Rule::MaxLength { max_chars, .. } => s.chars().count() as u64 <= *max_chars,
            Rule::Forbid { substrings, .. } => {
                let lower = s.to_lowercase();
                !substrings.iter().any(|f| lower.contains(f.as_str()))
            }
            Rule::EqualsContext { .. } | Rule::InContextList { .. } => false,
        });
        if ok {
            Ok(())
        } else {
            Err(self.failure())
        }
    }

    fn failure(&self) -> RuleFailure {
        RuleFailure {
            reason: self.reason(),
            rule: self.name(),
            pointer: self.pointer().to_owned(),
        }
    }
}

/// Whether `path` stays inside the workspace.
///
/// The path is judged twice, in its POSIX reading (only `/` separates) and in its Windows
/// reading (`/` and `\` separate), and is contained only when both stay inside; so `a\b` is
/// one name on POSIX and two on Windows, and `a\b/../..` escapes on POSIX although it would
/// not on Windows. In each reading, lexically:
/// - an empty path, a NUL, a leading `~` (home-directory expansion) are refused;
/// - a colon anywhere is refused: drive letters (`C:\x`, `C:/x`, drive-relative `c:x`),
///   NTFS streams (`a.txt:s`), URL schemes (`file:///etc/passwd`);
/// - two leading separators in any spelling (`\\server\share`, `//server`, `\\?\C:\`,
///   `\\.\device`) are refused: UNC and device paths;
/// - an absolute path (one leading separator) is admitted only under `workspace`;
/// - `.` and empty components are dropped, `..` pops a component and may never climb above
///   the root;
/// - a component of three or more dots only (`...`) is a name: POSIX reads it so, and Windows
///   too (as a last component it is trimmed to the directory holding it, still inside);
/// - any other component made only of dots and spaces (`.. `, `. .`) is refused: Windows
///   trims trailing dots and spaces, so it may name `..`;
/// - a Windows reserved device name (`CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`,
///   `LPT0`–`LPT9`, also with `¹²³`, `CONIN$`, `CONOUT$`), with any extension, in any
///   directory, is refused: it opens a device, not a file;
/// - characters that Windows' best-fit code-page conversion turns into `.`, `/`, `\` or `:`
///   (full-width forms, `∕`, `⁄`, `∖`, `¥`, `₩`, `․`, `‥`, …) are refused.
///
/// Percent-encoding is not decoded: `%2e%2e` is a name. With `workspace` (canonical), each
/// existing prefix of each reading is resolved on the file system, so a symlink pointing
/// outside is an escape even when the text looks inside.
///
/// # Example
/// ```
/// use jsongate::action::path_contained;
/// assert!(path_contained("docs/readme.md", None));
/// assert!(path_contained("a/../b", None));
/// assert!(!path_contained("a/../../b", None));
/// assert!(!path_contained("C:\\Windows", None));
/// assert!(!path_contained("reports/NUL.txt", None));
/// assert!(!path_contained("/etc/passwd", None)); // absolute: only under a workspace
/// ```
pub fn path_contained(path: &str, workspace: Option<&Path>) -> bool {
    if path.is_empty() || path.contains('\0') || path.starts_with('~') {
        return false;
    }
    if path.chars().any(|c| c == ':' || LOOK_ALIKES.contains(&c)) {
        return false;
    }
    let posix = |c: char| c == '/';
    let windows = |c: char| c == '/' || c == '\\';
    let Some(posix_rel) = lexical(path, posix, workspace) else {
        return false;
    };
    let Some(windows_rel) = lexical(path, windows, workspace) else {
        return false;
    };
    match workspace {
        None => true,
        Some(root) => {
            resolves_inside(root, &windows_rel)
                && (posix_rel == windows_rel || resolves_inside(root, &posix_rel))
        }
    }
}

/// Characters that Windows' best-fit mapping from Unicode to an ANSI code page turns into a
/// separator, a dot or a colon (full-width and small forms, mathematical slashes, the yen and
/// won signs that code pages 932 and 949 put at `\`, dot leaders).
const LOOK_ALIKES: &[char] = &[
    '\u{ff0f}', '\u{2215}', '\u{2044}', '\u{29f8}', // `/`
    '\u{ff3c}', '\u{fe68}', '\u{2216}', '\u{29f5}', '\u{29f9}', '\u{a5}', '\u{20a9}', // `\`
    '\u{ff0e}', '\u{fe52}', '\u{2024}', '\u{2025}', '\u{2026}', // `.`
    '\u{ff1a}', '\u{fe55}', '\u{fe13}', '\u{2236}', '\u{a789}', // `:`
];

/// One reading of `path` (components split where `sep` holds): the components relative to
/// the root, `..` kept for the walk on disk, or `None` when it escapes lexically.
fn lexical<'p>(
    path: &'p str,
    sep: impl Fn(char) -> bool + Copy,
    workspace: Option<&Path>,
) -> Option<Vec<&'p str>> {
    let mut parts = path.split(sep).peekable();
    if path.starts_with(sep) {
        // Absolute: `/x` (`\x`); `//x`, `\\x`, `/\x`, `\/x` are UNC or device paths.
        parts.next();
        if path[1..].starts_with(sep) {
            return None;
        }
        let root = workspace?;
        for name in root.components() {
            match name {
                Component::RootDir => {}
                Component::Normal(n) => {
                    if parts.next() != Some(n.to_str()?) {
                        return None;
                    }
                }
                _ => return None,
            }
        }
    }
    let mut rel = Vec::new();
    let mut depth = 0usize;
    for part in parts {
        match part {
            "" | "." => {}
            ".." => {
                depth = depth.checked_sub(1)?;
                rel.push(part);
            }
            // `.`, `..` and `` are matched above: three dots or more.
            _ if part.bytes().all(|b| b == b'.') => {
                depth += 1;
                rel.push(part);
            }
            _ if part.chars().all(|c| c == '.' || c == ' ') => return None,
            _ if reserved_device(part) => return None,
            _ => {
                depth += 1;
                rel.push(part);
            }
        }
    }
    Some(rel)
}

/// Whether `name` is a Windows reserved device name, with or without an extension (`CON`,
/// `nul.txt`, `Com1 `).
fn reserved_device(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).trim_end_matches(' ');
    let upper = stem.to_ascii_uppercase();
    match upper.as_str() {
        "CON" | "PRN" | "AUX" | "NUL" | "CONIN$" | "CONOUT$" => true,
        _ => ["COM", "LPT"].iter().any(|p| {
            upper.strip_prefix(p).is_some_and(|n| {
                let mut c = n.chars();
                matches!(
                    (c.next(), c.next()),
                    (Some('0'..='9' | '\u{b9}' | '\u{b2}' | '\u{b3}'), None)
                )
            })
        }),
    }
}

/// Walks `rel` from `root` the way the OS would: a component that exists and is a symlink is
/// replaced by its canonical target; every step must stay under `root`.
fn resolves_inside(root: &Path, rel: &[&str]) -> bool {
    let mut cur = root.to_path_buf();
    for &name in rel {
        if name == ".." {
            if !cur.pop() {
                return false;
            }
        } else {
            cur.push(name);
            if let Ok(meta) = std::fs::symlink_metadata(&cur) {
                if meta.file_type().is_symlink() {
                    match std::fs::canonicalize(&cur) {
                        Ok(target) => cur = target,
                        // A dangling or looping link: its target cannot be shown inside.
                        Err(_) => return false,
                    }
                }
            }
        }
        if !cur.starts_with(root) {
            return false;
        }
    }
    true
}

/// Whether `url` is `https://HOST[:PORT][/…]` with HOST in `hosts`.
///
/// Refused: other schemes, user info (`user@host`), backslashes, whitespace and control
/// characters anywhere, percent-encoding or a trailing dot in the host, an empty host.
///
/// # Example
/// ```
/// use jsongate::action::url_allowed;
/// let hosts = ["api.example.com".to_owned(), "*.cdn.example.com".to_owned()];
/// assert!(url_allowed("https://api.example.com/v1?q=1", &hosts));
/// assert!(url_allowed("https://img.cdn.example.com/a.png", &hosts));
/// assert!(!url_allowed("https://cdn.example.com/", &hosts)); // `*.` admits subdomains only
/// assert!(!url_allowed("http://api.example.com/", &hosts));
/// assert!(!url_allowed("https://user@api.example.com/", &hosts));
/// ```
pub fn url_allowed(url: &str, hosts: &[String]) -> bool {
    if url
        .chars()
        .any(|c| c.is_whitespace() || c.is_control() || c == '\\')
    {
        return false;
    }
    let Some(scheme_end) = url.find("://") else {
        return false;
    };
    if !url[..scheme_end].eq_ignore_ascii_case("https") {
        return false;
    }
    let rest = &url[scheme_end + 3..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains('@') || authority.contains('%') {
        return false;
    }
    let host = match authority.rsplit_once(':') {
        Some((h, port)) if !h.contains(']') || h.ends_with(']') => {
            if port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
                return false;
            }
            h
        }
        _ => authority,
    };
    let host = host.to_ascii_lowercase();
    if host.is_empty() || host.ends_with('.') {
        return false;
    }
    hosts.iter().any(|h| match h.strip_prefix("*.") {
        Some(domain) => host
            .strip_suffix(domain)
            .is_some_and(|sub| sub.len() > 1 && sub.ends_with('.')),
        None => *h == host,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_containment() {
        for ok in ["a.txt", "./a/b", "a/../b", "a/./b/..", "dir/"] {
            assert!(path_contained(ok, None), "{ok}");
        }
        for bad in [
            "../../etc/passwd",
            "a/../../b",
            "/etc/passwd",
            "..\\..\\windows",
            "",
            "a\0b",
            "..",
            "C:\\Windows\\win.ini",
            "C:/Windows/win.ini",
            "\\\\server\\share",
            "a\\b/../../x",
        ] {
            assert!(!path_contained(bad, None), "{bad}");
        }
    }

    #[test]
    fn a_file_named_three_dots_is_a_name_not_an_escape() {
        for ok in ["...", "a/...", ".../b", "..../x", "a\\...\\b"] {
            assert!(path_contained(ok, None), "{ok}");
        }
        // Still refused: dots with spaces (Windows trims them, `.. ` may read `..`), and a
        // `...` that does not undo a climb above the root.
        for bad in [".. ", ". .", "a/.. /..", "../...", ".../../.."] {
            assert!(!path_contained(bad, None), "{bad}");
        }
    }

    #[test]
    fn reserved_device_names() {
        for dev in [
            "CON",
            "con.txt",
            "Nul",
            "aux ",
            "COM1",
            "lpt9.log",
            "COM\u{b9}",
            "CONIN$",
        ] {
            assert!(reserved_device(dev), "{dev}");
        }
        for name in ["COM", "COM10", "CONFIG", "console", "nul_", "lpt"] {
            assert!(!reserved_device(name), "{name}");
        }
    }

    #[test]
    fn urls() {
        let hosts = vec![
            "api.example.com".to_owned(),
            "*.docs.example.org".to_owned(),
        ];
        for ok in [
            "https://api.example.com/v1?q=1",
            "HTTPS://API.example.com:443/",
            "https://a.docs.example.org",
        ] {
            assert!(url_allowed(ok, &hosts), "{ok}");
        }
        for bad in [
            "http://api.example.com/",
            "https://evil.com/api.example.com",
            "https://api.example.com@evil.com/",
            "https://api.example.com.evil.com/",
            "https://docs.example.org/",
            "https://api.example.com./",
            "https://api.example.com:x/",
            "https://api%2eexample.com/",
            "ftp://api.example.com/",
            "https:// api.example.com/",
            "api.example.com",
        ] {
            assert!(!url_allowed(bad, &hosts), "{bad}");
        }
    }

    #[test]
    fn rules_on_values() {
        let args = Value::parse(br#"{"s":"Hello SECRET","n":3}"#, crate::Limits::new()).unwrap();
        let forbid = Rule::Forbid {
            pointer: "/s".into(),
            substrings: vec!["secret".into()],
        };
        assert_eq!(
            forbid.check(&args, None).unwrap_err().reason,
            Reason::ForbiddenSubstring
        );
        let cap = |n| Rule::MaxLength {
            pointer: "/s".into(),
            max_chars: n,
        };
        assert!(cap(12).check(&args, None).is_ok());
        assert!(cap(11).check(&args, None).is_err());
        let not_string = Rule::Path {
            pointer: "/n".into(),
        };
        assert!(not_string.check(&args, None).is_err());
        let absent = Rule::Path {
            pointer: "/missing".into(),
        };
        assert!(absent.check(&args, None).is_ok());
    }
}
