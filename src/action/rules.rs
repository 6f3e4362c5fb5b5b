//! Semantic argument rules: what JSON Schema cannot say about a valid string.
//!
//! Path containment (lexical, then against the file system when a workspace is given),
//! https-only URLs with a host allowlist, length caps, forbidden substrings, and argument
//! names outside the schema. Each rule reads one value by JSON Pointer; it never changes it.

use std::path::{Component, Path, PathBuf};

use super::Reason;
use crate::select::Value;

/// One semantic rule on the value at `pointer` in the arguments.
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
}

/// A rule that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleFailure {
    /// The decision reason it maps to.
    pub reason: Reason,
    /// The pointer of the offending value in the arguments.
    pub pointer: String,
}

impl Rule {
    /// The pointer the rule reads.
    pub fn pointer(&self) -> &str {
        match self {
            Rule::Path { pointer }
            | Rule::Url { pointer, .. }
            | Rule::MaxLength { pointer, .. }
            | Rule::Forbid { pointer, .. } => pointer,
        }
    }

    fn reason(&self) -> Reason {
        match self {
            Rule::Path { .. } => Reason::PathEscape,
            Rule::Url { .. } => Reason::HostNotAllowed,
            Rule::MaxLength { .. } => Reason::FieldTooLong,
            Rule::Forbid { .. } => Reason::ForbiddenSubstring,
        }
    }

    /// Checks the rule against `args`. An absent value passes (the schema decides whether
    /// it is required); a value that is not a string fails.
    ///
    /// `workspace` is the canonical workspace root, when paths are checked against the
    /// file system.
    pub fn check(&self, args: &Value, workspace: Option<&Path>) -> Result<(), RuleFailure> {
        let Some(v) = args.pointer(self.pointer()) else {
            return Ok(());
        };
        let ok = v.as_str().is_some_and(|s| match self {
            Rule::Path { .. } => path_contained(s, workspace),
            Rule::Url { hosts, .. } => url_allowed(s, hosts),
            Rule::MaxLength { max_chars, .. } => s.chars().count() as u64 <= *max_chars,
            Rule::Forbid { substrings, .. } => {
                let lower = s.to_lowercase();
                !substrings.iter().any(|f| lower.contains(f.as_str()))
            }
        });
        if ok {
            Ok(())
        } else {
            Err(RuleFailure {
                reason: self.reason(),
                pointer: self.pointer().to_owned(),
            })
        }
    }
}

/// Whether `path` stays inside the workspace.
///
/// Lexically: `\` counts as a separator, NUL is refused, `.` is dropped, `..` pops a
/// component and may never climb above the root; an absolute path is refused unless it lies
/// under `workspace`. With `workspace` (canonical), each existing prefix is resolved on the
/// file system, so a symlink pointing outside is an escape even when the text looks inside.
pub fn path_contained(path: &str, workspace: Option<&Path>) -> bool {
    if path.is_empty() || path.contains('\0') {
        return false;
    }
    let text = path.replace('\\', "/");
    let p = Path::new(&text);
    let rel: PathBuf = if p.is_absolute() {
        match workspace.and_then(|w| p.strip_prefix(w).ok()) {
            Some(r) => r.to_path_buf(),
            None => return false,
        }
    } else {
        p.to_path_buf()
    };
    // Lexical pass: `..` never climbs above the root.
    let mut depth = 0usize;
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => match depth.checked_sub(1) {
                Some(d) => depth = d,
                None => return false,
            },
            Component::Normal(_) => depth += 1,
            Component::RootDir | Component::Prefix(_) => return false,
        }
    }
    match workspace {
        None => true,
        Some(root) => resolves_inside(root, &rel),
    }
}

/// Walks `rel` from `root` the way the OS would: a component that exists and is a symlink is
/// replaced by its canonical target; every step must stay under `root`.
fn resolves_inside(root: &Path, rel: &Path) -> bool {
    let mut cur = root.to_path_buf();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !cur.pop() {
                    return false;
                }
            }
            Component::Normal(name) => {
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
            Component::RootDir | Component::Prefix(_) => return false,
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

/// Names of the top-level arguments that `allowed` does not list (used when the argument
/// schema lists `properties` but does not close the object with `additionalProperties`).
pub fn unknown_names<'a>(args: &'a Value, allowed: &[String]) -> Vec<&'a str> {
    args.as_object()
        .unwrap_or(&[])
        .iter()
        .map(|(k, _)| k.as_str())
        .filter(|k| !allowed.iter().any(|a| a == k))
        .collect()
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
        ] {
            assert!(!path_contained(bad, None), "{bad}");
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
