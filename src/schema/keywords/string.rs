//! String keywords: `minLength`, `maxLength`, `pattern`, and `format` where it asserts —
//! their compile step, their record ([`Strings`]), the one check both validator tiers run,
//! and what a failure expected.
//!
//! Lengths are counted in characters only when the byte length leaves doubt (a string has
//! between a quarter of its bytes and all of them as characters). The work is charged to the
//! evaluation budget: one unit per 64 bytes counted, one plus one per 16 bytes for each
//! pattern search and format check.

use super::{quoted, Keyword, Stop};
use crate::json::Value;
use crate::schema::format;
use crate::schema::regex::Regex;
use crate::schema::Draft;

/// What a violation of `k` means, in a few words; `None` for a keyword of another group.
pub(crate) fn summary(k: Keyword) -> Option<&'static str> {
    match k {
        Keyword::Pattern => Some("string does not match the pattern"),
        Keyword::Format => Some("string is not in the required format"),
        Keyword::MaxLength | Keyword::MinLength => Some("string length is out of bounds"),
        _ => None,
    }
}

/// The string keywords of one node.
#[derive(Clone, Debug)]
pub(crate) struct Strings {
    /// `minLength`, 0 when absent.
    min_length: u64,
    /// `maxLength`, `u64::MAX` when absent.
    max_length: u64,
    pattern: Option<Regex>,
    /// The asserted format (only when format assertion is on and the format is known).
    format: Option<Box<str>>,
}

/// What [`Strings::compile`] reads, beside the schema object.
pub(crate) struct Compile<'a, E> {
    /// Whether the validation vocabulary is on (`minLength`, `maxLength`, `pattern`).
    pub(crate) validation: bool,
    /// Whether `format` asserts.
    pub(crate) assert_format: bool,
    pub(crate) draft: Draft,
    /// The error for a message.
    pub(crate) err: &'a dyn Fn(String) -> E,
    /// Charges compile work (a pattern costs its length).
    pub(crate) step: &'a mut dyn FnMut(u64) -> Result<(), E>,
}

impl Strings {
    /// The string keywords of the schema object `v`; `None` when it has none.
    pub(crate) fn compile<E>(v: &Value, c: &mut Compile<'_, E>) -> Result<Option<Box<Strings>>, E> {
        let mut min_length = None;
        let mut max_length = None;
        let mut pattern = None;
        if c.validation {
            let uint = |k: Keyword| match v.get(k.name()) {
                None => Ok(None),
                Some(x) => x.as_whole_u64().map(Some).ok_or_else(|| {
                    (c.err)(format!("'{}' must be a non-negative integer", k.name()))
                }),
            };
            min_length = uint(Keyword::MinLength)?;
            max_length = uint(Keyword::MaxLength)?;
            if let Some(p) = v.get(Keyword::Pattern.name()) {
                let p = p
                    .as_str()
                    .ok_or_else(|| (c.err)("'pattern' must be a string".into()))?;
                (c.step)(p.len() as u64)?;
                let re =
                    Regex::new(p).map_err(|e| (c.err)(format!("invalid pattern '{p}': {e}")))?;
                pattern = Some(re);
            }
        }
        let format = match v.get(Keyword::Format.name()).and_then(Value::as_str) {
            Some(f) if c.assert_format && format::known_in(f, c.draft) => Some(f.into()),
            _ => None,
        };
        if min_length.is_none() && max_length.is_none() && pattern.is_none() && format.is_none() {
            return Ok(None);
        }
        Ok(Some(Box::new(Strings {
            min_length: min_length.unwrap_or(0),
            max_length: max_length.unwrap_or(u64::MAX),
            pattern,
            format,
        })))
    }

    /// Checks a string value, adding the units spent to `units`.
    #[inline(always)]
    pub(crate) fn check(&self, s: &str, units: &mut u64) -> Result<(), Stop> {
        let bytes = s.len() as u64;
        if bytes > self.max_length || bytes.div_ceil(4) < self.min_length {
            *units += bytes / 64;
            let len = s.chars().count() as u64;
            if len < self.min_length {
                return Err(Stop::Keyword(Keyword::MinLength.name()));
            }
            if len > self.max_length {
                return Err(Stop::Keyword(Keyword::MaxLength.name()));
            }
        }
        if let Some(re) = &self.pattern {
            *units += 1 + bytes / 16;
            match re.is_match(s) {
                Ok(true) => {}
                Ok(false) => return Err(Stop::Keyword(Keyword::Pattern.name())),
                Err(_) => return Err(Stop::Budget),
            }
        }
        if let Some(f) = &self.format {
            *units += 1 + bytes / 16;
            if format::check(f, s) == Some(false) {
                return Err(Stop::Keyword(Keyword::Format.name()));
            }
        }
        Ok(())
    }

    /// What a failure of `keyword` expected (`expected at most 3 characters`), for the
    /// messages a person reads; `None` for a keyword of another group.
    pub(crate) fn expected(&self, keyword: Keyword) -> Option<String> {
        let count = |what: &str, n: u64| match n {
            1 => format!("expected {what} 1 character"),
            n => format!("expected {what} {n} characters"),
        };
        Some(match keyword {
            Keyword::MinLength => count("at least", self.min_length),
            Keyword::MaxLength => count("at most", self.max_length),
            Keyword::Pattern => self
                .pattern
                .as_ref()
                .map(|r| format!("expected a match of the pattern {}", quoted(r.as_str())))
                .unwrap_or_default(),
            Keyword::Format => self
                .format
                .as_ref()
                .map(|f| format!("expected format {}", quoted(f)))
                .unwrap_or_default(),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{Stop, Strings};
    use crate::schema::program::NodeKind;
    use crate::Schema;

    fn checks(schema: &str) -> Strings {
        let s = Schema::options()
            .format_assertion(true)
            .compile(schema.as_bytes())
            .unwrap();
        let p = s.program();
        match &p.nodes[p.root as usize].kind {
            NodeKind::Keywords(k) => (**k.strings.as_ref().unwrap()).clone(),
            _ => panic!("{schema}"),
        }
    }

    #[test]
    fn lengths_count_characters_only_when_in_doubt() {
        let c = checks(r#"{"minLength":2,"maxLength":3}"#);
        let mut units = 0;
        assert_eq!(c.check("ab", &mut units), Ok(()));
        assert_eq!(units, 0);
        // Three characters in six bytes: counted.
        assert_eq!(c.check("ééé", &mut units), Ok(()));
        assert_eq!(c.check("a", &mut units), Err(Stop::Keyword("minLength")));
        assert_eq!(c.check("abcd", &mut units), Err(Stop::Keyword("maxLength")));
        let long = "x".repeat(200);
        let mut units = 0;
        assert_eq!(c.check(&long, &mut units), Err(Stop::Keyword("maxLength")));
        assert_eq!(units, 200 / 64);
    }

    #[test]
    fn pattern_then_format() {
        let c = checks(r#"{"pattern":"^[a-z]+$","format":"ipv4"}"#);
        let mut units = 0;
        assert_eq!(c.check("abc", &mut units), Err(Stop::Keyword("format")));
        assert_eq!(units, 2);
        assert_eq!(
            c.check("1.2.3.4", &mut units),
            Err(Stop::Keyword("pattern"))
        );
        let c = checks(r#"{"format":"ipv4"}"#);
        assert_eq!(c.check("1.2.3.4", &mut units), Ok(()));
    }
}
