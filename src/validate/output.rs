//! The specification's output formats (JSON Schema 2020-12, section 12.4): `flag`, `basic`
//! and `detailed`, written from a verdict and the violations a [`Validator`] collected.
//!
//! Streaming-friendly: nothing here re-evaluates the document or keeps more than the
//! violations already collected (at most [`Validator::max_errors`]); the hierarchy of
//! `detailed` is rebuilt from their keyword and instance locations. Annotations are not
//! collected, so a valid document is `{"valid":true}` in every format.

use std::fmt::Write as _;

use super::{Rejection, Validator, Violation};
use crate::json::write_string;
use crate::schema::keywords::{Holds, Keyword};

/// One of the output formats of JSON Schema 2020-12 (section 12.4).
///
/// # Example
/// ```
/// use jsongate::{Limits, OutputFormat, Schema, Validator};
/// let schema = Schema::compile(br#"{"type":"string"}"#)?;
/// let mut v = Validator::new(&schema);
/// let r = v.validate_slice(b"1", Limits::new());
/// assert_eq!(v.output(&r, OutputFormat::Flag, None), r#"{"valid":false}"#);
/// let r = v.validate_slice(br#""s""#, Limits::new());
/// assert_eq!(v.output(&r, OutputFormat::Detailed, None), r#"{"valid":true}"#);
/// # Ok::<(), jsongate::CompileError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputFormat {
    /// `{"valid":false}`: the verdict alone.
    Flag,
    /// The verdict and a flat list of output units, one per violation collected.
    Basic,
    /// The violations nested as the schema nests the subschemas that failed.
    Detailed,
}

impl OutputFormat {
    /// `flag`, `basic` or `detailed`.
    ///
    /// # Example
    /// ```
    /// use jsongate::OutputFormat;
    /// assert_eq!(OutputFormat::from_name("basic"), Some(OutputFormat::Basic));
    /// assert_eq!(OutputFormat::from_name("verbose"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<OutputFormat> {
        Some(match name {
            "flag" => OutputFormat::Flag,
            "basic" => OutputFormat::Basic,
            "detailed" => OutputFormat::Detailed,
            _ => return None,
        })
    }
}

impl Validator {
    /// The verdict of the last document (`result`, as [`validate_slice`](Self::validate_slice)
    /// or [`verdict`](Self::verdict) returned it) in `format`, as one line of JSON that the
    /// specification's output schema accepts. Each violation is an output unit with its
    /// `keywordLocation`, `absoluteKeywordLocation` (the subschema's absolute location and
    /// the keyword; the schema's own base, when it has no `$id`, is replaced by
    /// `schema_uri` when given), `instanceLocation` and `error` ([`Violation::message`]);
    /// a document rejected before any schema verdict (malformed, over a limit) is one unit
    /// at the root whose `error` is the scanner's.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Limits, OutputFormat, Schema, Validator};
    /// let schema = Schema::compile(br#"{"properties":{"n":{"type":"integer"}}}"#)?;
    /// let mut v = Validator::new(&schema).max_errors(10);
    /// let r = v.validate_slice(br#"{"n":"x"}"#, Limits::new());
    /// assert_eq!(v.output(&r, OutputFormat::Flag, None), r#"{"valid":false}"#);
    /// assert!(v.output(&r, OutputFormat::Basic, None).starts_with(
    ///     r#"{"valid":false,"keywordLocation":"","instanceLocation":"","errors":[{"valid":false,"keywordLocation":"/properties/n/type""#
    /// ));
    /// # Ok::<(), jsongate::CompileError>(())
    /// ```
    pub fn output(
        &self,
        result: &Result<(), Rejection>,
        format: OutputFormat,
        schema_uri: Option<&str>,
    ) -> String {
        let mut out = String::new();
        let err = match result {
            Ok(()) => return r#"{"valid":true}"#.into(),
            Err(_) if format == OutputFormat::Flag => return r#"{"valid":false}"#.into(),
            Err(e) => e,
        };
        let violations: Vec<&Violation> = match err {
            Rejection::Error(e) => {
                out.push_str(r#"{"valid":false,"keywordLocation":"","instanceLocation":"#);
                write_string(&mut out, e.pointer());
                out.push_str(r#","error":"#);
                write_string(&mut out, &format!("{} ({})", e.kind(), e.kind().code()));
                out.push('}');
                return out;
            }
            Rejection::Violation(first) => {
                let mut all: Vec<&Violation> = self.violations().iter().collect();
                if all.is_empty() {
                    all.push(first);
                }
                all
            }
        };
        match format {
            OutputFormat::Basic => {
                out.push_str(
                    r#"{"valid":false,"keywordLocation":"","instanceLocation":"","errors":["#,
                );
                for (i, v) in violations.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    unit(&mut out, v, schema_uri);
                }
                out.push_str("]}");
            }
            _ => {
                let mut root = Node::default();
                for v in &violations {
                    root.insert(v);
                }
                root.write(&mut out, "", "", schema_uri);
            }
        }
        out
    }
}

/// One violation as an output unit.
fn unit(out: &mut String, v: &Violation, schema_uri: Option<&str>) {
    out.push_str(r#"{"valid":false,"keywordLocation":"#);
    write_string(out, v.keyword_location());
    let absolute = v.absolute_keyword_location();
    let absolute = match schema_uri {
        Some(u) => absolute.replace(crate::schema::INTERNAL_BASE, u),
        None => absolute,
    };
    let absolute = match absolute.split_once('#') {
        Some((base, fragment)) => format!("{base}#{}", fragment_encoded(fragment)),
        None => absolute,
    };
    if !absolute.is_empty() {
        out.push_str(r#","absoluteKeywordLocation":"#);
        write_string(out, &absolute);
    }
    out.push_str(r#","instanceLocation":"#);
    write_string(out, v.instance_pointer());
    out.push_str(r#","error":"#);
    write_string(out, &v.message());
    out.push('}');
}

/// A JSON Pointer as a URI fragment (RFC 3986 section 3.5; RFC 6901 section 6): every
/// character a fragment may not hold is percent-encoded as UTF-8.
fn fragment_encoded(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for c in pointer.chars() {
        let plain = c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/?".contains(c);
        if plain {
            out.push(c);
        } else {
            let mut buf = [0; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// A subschema that failed, in the `detailed` hierarchy: its subschemas that failed, then
/// the violations of its own keywords.
#[derive(Default)]
struct Node<'v> {
    /// (keyword location, instance location) of each failed subschema below, in order.
    children: Vec<((String, String), Node<'v>)>,
    own: Vec<&'v Violation>,
}

impl<'v> Node<'v> {
    /// Files `v` under the subschemas its keyword location goes through, up to the first
    /// `$ref` (past it a subschema's absolute location is not known here, and the output
    /// schema wants one), with the instance location each of them applies to.
    fn insert(&mut self, v: &'v Violation) {
        let segments: Vec<&str> = v.keyword_location().split('/').skip(1).collect();
        let instance: Vec<&str> = v.instance_pointer().split('/').skip(1).collect();
        let (mut node, mut i, mut depth) = (self, 0, 0);
        let mut keyword_at = String::new();
        while let Some(&kw) = segments.get(i) {
            let Some(keyword) = Keyword::from_name(kw) else {
                break;
            };
            let width = match keyword.holds() {
                Holds::Map | Holds::Array if i + 2 < segments.len() => 2,
                Holds::One | Holds::OneOrArray | Holds::Reference if i + 1 < segments.len() => 1,
                _ => break,
            };
            if keyword.holds() == Holds::Reference {
                break;
            }
            for s in &segments[i..i + width] {
                keyword_at.push('/');
                keyword_at.push_str(s);
            }
            if keyword.descends() && depth < instance.len() {
                depth += 1;
            }
            let mut instance_at = String::new();
            for s in &instance[..depth] {
                instance_at.push('/');
                instance_at.push_str(s);
            }
            let key = (keyword_at.clone(), instance_at);
            let pos = match node.children.iter().position(|(k, _)| *k == key) {
                Some(p) => p,
                None => {
                    node.children.push((key, Node::default()));
                    node.children.len() - 1
                }
            };
            node = &mut node.children[pos].1;
            i += width;
        }
        node.own.push(v);
    }

    fn write(&self, out: &mut String, keyword_at: &str, instance_at: &str, uri: Option<&str>) {
        if self.children.is_empty() && self.own.len() == 1 && !keyword_at.is_empty() {
            unit(out, self.own[0], uri);
            return;
        }
        let _ = write!(out, r#"{{"valid":false,"keywordLocation":"#);
        write_string(out, keyword_at);
        out.push_str(r#","instanceLocation":"#);
        write_string(out, instance_at);
        out.push_str(r#","errors":["#);
        let mut first = true;
        for ((k, i), child) in &self.children {
            if !first {
                out.push(',');
            }
            first = false;
            child.write(out, k, i, uri);
        }
        for v in &self.own {
            if !first {
                out.push(',');
            }
            first = false;
            unit(out, v, uri);
        }
        out.push_str("]}");
    }
}
