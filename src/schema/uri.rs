//! URI references (RFC 3986): splitting, resolution against a base, and JSON Pointer
//! fragments.
//!
//! Schema identifiers are compared as resolved strings without fragment. This module does
//! no I/O and knows nothing of schemas.

/// A URI reference split into its five components (RFC 3986 appendix B).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Uri {
    pub(crate) scheme: Option<String>,
    pub(crate) authority: Option<String>,
    pub(crate) path: String,
    pub(crate) query: Option<String>,
    pub(crate) fragment: Option<String>,
}

impl Uri {
    pub(crate) fn parse(s: &str) -> Uri {
        let mut rest = s;
        let mut u = Uri::default();
        if let Some(i) = rest.find('#') {
            u.fragment = Some(rest[i + 1..].to_string());
            rest = &rest[..i];
        }
        if let Some(i) = rest.find('?') {
            u.query = Some(rest[i + 1..].to_string());
            rest = &rest[..i];
        }
        if let Some(i) = rest.find(':') {
            let scheme = &rest[..i];
            if !scheme.is_empty()
                && !scheme.contains('/')
                && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            {
                u.scheme = Some(scheme.to_ascii_lowercase());
                rest = &rest[i + 1..];
            }
        }
        if let Some(r) = rest.strip_prefix("//") {
            let end = r.find('/').unwrap_or(r.len());
            u.authority = Some(r[..end].to_string());
            rest = &r[end..];
        }
        u.path = rest.to_string();
        u
    }

    /// Resolves `reference` against `self` (RFC 3986 section 5.2.2).
    pub(crate) fn resolve(&self, reference: &str) -> Uri {
        let r = Uri::parse(reference);
        let mut t = Uri::default();
        if r.scheme.is_some() {
            t.scheme = r.scheme;
            t.authority = r.authority;
            t.path = remove_dot_segments(&r.path);
            t.query = r.query;
        } else {
            if r.authority.is_some() {
                t.authority = r.authority;
                t.path = remove_dot_segments(&r.path);
                t.query = r.query;
            } else {
                if r.path.is_empty() {
                    t.path.clone_from(&self.path);
                    t.query = if r.query.is_some() {
                        r.query
                    } else {
                        self.query.clone()
                    };
                } else {
                    if r.path.starts_with('/') {
                        t.path = remove_dot_segments(&r.path);
                    } else {
                        t.path = remove_dot_segments(&merge(self, &r.path));
                    }
                    t.query = r.query;
                }
                t.authority.clone_from(&self.authority);
            }
            t.scheme.clone_from(&self.scheme);
        }
        t.fragment = r.fragment;
        t
    }

    /// The URI without its fragment, as text.
    pub(crate) fn base(&self) -> String {
        let mut s = String::new();
        if let Some(sc) = &self.scheme {
            s.push_str(sc);
            s.push(':');
        }
        if let Some(a) = &self.authority {
            s.push_str("//");
            s.push_str(a);
        }
        s.push_str(&self.path);
        if let Some(q) = &self.query {
            s.push('?');
            s.push_str(q);
        }
        s
    }
}

fn merge(base: &Uri, path: &str) -> String {
    if base.authority.is_some() && base.path.is_empty() {
        return format!("/{path}");
    }
    match base.path.rfind('/') {
        Some(i) => format!("{}{}", &base.path[..=i], path),
        None => path.to_string(),
    }
}

pub(crate) fn remove_dot_segments(path: &str) -> String {
    // RFC 3986 section 5.2.4, step by step.
    let mut input = path.to_string();
    let mut out = String::with_capacity(path.len());
    let pop = |out: &mut String| {
        let cut = out.rfind('/').unwrap_or(0);
        out.truncate(cut);
    };
    while !input.is_empty() {
        if let Some(r) = input.strip_prefix("../") {
            input = r.to_string();
        } else if let Some(r) = input.strip_prefix("./") {
            input = r.to_string();
        } else if let Some(r) = input.strip_prefix("/./") {
            input = format!("/{r}");
        } else if input == "/." {
            input = "/".into();
        } else if let Some(r) = input.strip_prefix("/../") {
            input = format!("/{r}");
            pop(&mut out);
        } else if input == "/.." {
            input = "/".into();
            pop(&mut out);
        } else if input == "." || input == ".." {
            input.clear();
        } else {
            let start = usize::from(input.starts_with('/'));
            let end = input[start..].find('/').map_or(input.len(), |i| i + start);
            out.push_str(&input[..end]);
            input = input[end..].to_string();
        }
    }
    out
}

/// Decodes `%XX` escapes (as used in URI fragments); invalid escapes are kept as they are.
pub(crate) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Splits a JSON Pointer (`/a/b~1c`) into unescaped reference tokens; `None` if malformed.
pub(crate) fn pointer_tokens(pointer: &str) -> Option<Vec<String>> {
    if pointer.is_empty() {
        return Some(Vec::new());
    }
    let rest = pointer.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(base: &str, r: &str) -> String {
        let u = Uri::parse(base).resolve(r);
        let mut s = u.base();
        if let Some(f) = u.fragment {
            s.push('#');
            s.push_str(&f);
        }
        s
    }

    #[test]
    fn rfc3986_examples() {
        let b = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("g?y", "http://a/b/c/g?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("", "http://a/b/c/d;p?q"),
            (".", "http://a/b/c/"),
            ("./", "http://a/b/c/"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../..", "http://a/"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
        ] {
            assert_eq!(res(b, r), want, "{r}");
        }
    }

    #[test]
    fn urns_and_fragments() {
        assert_eq!(
            res(
                "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed",
                "#/$defs/bar"
            ),
            "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#/$defs/bar"
        );
        assert_eq!(res("http://x/y.json", "urn:example:foo"), "urn:example:foo");
        assert_eq!(percent_decode("/a%25b%22"), "/a%b\"");
        assert_eq!(
            pointer_tokens("/a~1b/~0"),
            Some(vec!["a/b".into(), "~".into()])
        );
    }
}
