//! String keywords: `minLength`, `maxLength`, `pattern`, and `format` where it asserts.
//!
//! Lengths are counted in characters only when the byte length leaves doubt (a string has
//! between a quarter of its bytes and all of them as characters). The work is charged to the
//! evaluation budget as the general tier charges it: one unit per 64 bytes counted, one plus
//! one per 16 bytes for each pattern search and format check.

use super::Stop;
use crate::schema::format;
use crate::schema::program::Keywords;
use crate::schema::regex::Regex;

/// The string keywords of one node.
#[derive(Debug)]
pub(crate) struct StringChecks {
    /// `minLength`, 0 when absent.
    min_length: u64,
    /// `maxLength`, `u64::MAX` when absent.
    max_length: u64,
    pattern: Option<Regex>,
    format: Option<Box<str>>,
}

impl StringChecks {
    /// The record of `k`'s string keywords; `None` when it has none.
    pub(crate) fn lower(k: &Keywords) -> Option<StringChecks> {
        let any = k.min_length.is_some()
            || k.max_length.is_some()
            || k.pattern.is_some()
            || k.format.is_some();
        any.then(|| StringChecks {
            min_length: k.min_length.unwrap_or(0),
            max_length: k.max_length.unwrap_or(u64::MAX),
            pattern: k.pattern.clone(),
            format: k.format.clone(),
        })
    }

    /// Checks a string value, adding the units spent to `units`.
    #[inline]
    pub(crate) fn check(&self, s: &str, units: &mut u64) -> Result<(), Stop> {
        let bytes = s.len() as u64;
        if bytes > self.max_length || bytes.div_ceil(4) < self.min_length {
            *units += bytes / 64;
            let len = s.chars().count() as u64;
            if len < self.min_length {
                return Err(Stop::Keyword("minLength"));
            }
            if len > self.max_length {
                return Err(Stop::Keyword("maxLength"));
            }
        }
        if let Some(re) = &self.pattern {
            *units += 1 + bytes / 16;
            match re.is_match(s) {
                Ok(true) => {}
                Ok(false) => return Err(Stop::Keyword("pattern")),
                Err(_) => return Err(Stop::Budget),
            }
        }
        if let Some(f) = &self.format {
            *units += 1 + bytes / 16;
            if format::check(f, s) == Some(false) {
                return Err(Stop::Keyword("format"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Stop, StringChecks};
    use crate::schema::program::NodeKind;
    use crate::Schema;

    fn checks(schema: &str) -> StringChecks {
        let s = Schema::options()
            .format_assertion(true)
            .compile(schema.as_bytes())
            .unwrap();
        let p = s.program();
        match &p.nodes[p.root as usize].kind {
            NodeKind::Keywords(k) => StringChecks::lower(k).unwrap(),
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
