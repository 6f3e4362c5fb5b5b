//! The agent-facing envelope: a fixed success or failure shape, and its JSON Schema derived
//! from a contract.
//!
//! The envelope is the only thing the agent reads. A success carries exactly the exposed
//! fields; a failure carries a code from a closed set and whether a retry may help, and
//! never any upstream text.

use std::fmt;

use crate::json::{ObjectWriter, Value};

/// The envelope schema's description of the failure codes.
const CODES_DESCRIPTION: &str = "NOT_FOUND: the asked resource does not exist. \
UPSTREAM_UNAVAILABLE: the upstream could not be reached, failed or broke off (transient). \
RATE_LIMITED: the upstream asks to slow down (transient). INVALID_RESPONSE: the response is \
malformed, over a limit, or does not match the contract. STALE: the response is too old \
(transient). MISMATCH: the response is about something other than what was asked. \
UNAUTHORIZED: the upstream refused the call's credentials or authority (401/403); a new \
authorisation decision is needed, not a retry.";

/// Why the agent gets no data. A closed set: agents and hosts can match on it exhaustively.
///
/// # Example
/// ```
/// use jsongate::gate::FailureCode;
/// assert_eq!(FailureCode::ALL.len(), 7);
/// assert_eq!(FailureCode::Stale.to_string(), "STALE");
/// assert!(FailureCode::RateLimited.transient() && !FailureCode::Mismatch.transient());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureCode {
    /// The upstream says the asked resource does not exist.
    NotFound,
    /// The upstream could not be reached, failed, or broke off.
    UpstreamUnavailable,
    /// The upstream asks to slow down.
    RateLimited,
    /// The response is malformed, over a limit, or does not match the contract's schema.
    InvalidResponse,
    /// The response is too old (or dated in the future beyond the allowed skew).
    Stale,
    /// The response is about something other than what was asked.
    Mismatch,
    /// The upstream refused the call's credentials or authority (HTTP 401 or 403): a new
    /// authorisation decision is needed, never a retry (the retry decision is `reauthorize`).
    Unauthorized,
}

impl FailureCode {
    /// Every code, in a fixed order.
    pub const ALL: [FailureCode; 7] = [
        FailureCode::NotFound,
        FailureCode::UpstreamUnavailable,
        FailureCode::RateLimited,
        FailureCode::InvalidResponse,
        FailureCode::Stale,
        FailureCode::Mismatch,
        FailureCode::Unauthorized,
    ];

    /// The code as the agent sees it (`"NOT_FOUND"`, …).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::FailureCode;
    /// assert_eq!(FailureCode::UpstreamUnavailable.as_str(), "UPSTREAM_UNAVAILABLE");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            FailureCode::NotFound => "NOT_FOUND",
            FailureCode::UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
            FailureCode::RateLimited => "RATE_LIMITED",
            FailureCode::InvalidResponse => "INVALID_RESPONSE",
            FailureCode::Stale => "STALE",
            FailureCode::Mismatch => "MISMATCH",
            FailureCode::Unauthorized => "UNAUTHORIZED",
        }
    }

    /// The code named `s`.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::FailureCode;
    /// assert_eq!(FailureCode::parse("STALE"), Some(FailureCode::Stale));
    /// assert_eq!(FailureCode::parse("stale"), None);
    /// ```
    pub fn parse(s: &str) -> Option<FailureCode> {
        FailureCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Whether a new attempt can produce a different answer at all: transport failures, rate
    /// limits and stale data can; a wrong shape or a mismatch cannot (they stop and alert).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::FailureCode;
    /// let transient: Vec<&str> = FailureCode::ALL.iter().filter(|c| c.transient()).map(|c| c.as_str()).collect();
    /// assert_eq!(transient, ["UPSTREAM_UNAVAILABLE", "RATE_LIMITED", "STALE"]);
    /// ```
    pub fn transient(self) -> bool {
        matches!(
            self,
            FailureCode::UpstreamUnavailable | FailureCode::RateLimited | FailureCode::Stale
        )
    }
}

impl fmt::Display for FailureCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The agent-facing result.
///
/// # Example
/// ```
/// use jsongate::gate::Envelope;
/// use jsongate::json::Value;
/// let e = Envelope::Success { data: Value::Object(vec![("n".into(), Value::Number("1".into()))]) };
/// assert_eq!(e.render("t", "r-1"), r#"{"tool":"t","request_id":"r-1","outcome":"success","data":{"n":1}}"#);
/// assert_eq!(e.code(), None);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Envelope {
    /// `{"tool","request_id","outcome":"success","data":{…}}`
    Success {
        /// The exposed fields, built fresh.
        data: Value,
    },
    /// `{"tool","request_id","outcome":"failure","error":{"code","retryable"}}`
    Failure {
        /// Why.
        code: FailureCode,
        /// Whether the contract's retry policy allows another attempt for this code.
        retryable: bool,
    },
}

impl Envelope {
    /// The envelope's JSON line (without a newline). `tool` and `request_id` come from the
    /// contract and the caller, never from the upstream.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Envelope, FailureCode};
    /// let e = Envelope::Failure { code: FailureCode::NotFound, retryable: false };
    /// assert_eq!(e.render("review", "r-1"),
    ///     r#"{"tool":"review","request_id":"r-1","outcome":"failure","error":{"code":"NOT_FOUND","retryable":false}}"#);
    /// ```
    pub fn render(&self, tool: &str, request_id: &str) -> String {
        let mut out = String::new();
        let mut o = ObjectWriter::new(&mut out);
        o.str("tool", tool).str("request_id", request_id);
        match self {
            Envelope::Success { data } => {
                o.str("outcome", "success").value("data", data);
            }
            Envelope::Failure { code, retryable } => {
                o.str("outcome", "failure");
                o.object("error")
                    .str("code", code.as_str())
                    .bool("retryable", *retryable);
            }
        }
        o.finish();
        out
    }

    /// The failure code, if this is a failure.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Envelope, FailureCode};
    /// let e = Envelope::Failure { code: FailureCode::Stale, retryable: true };
    /// assert_eq!(e.code(), Some(FailureCode::Stale));
    /// ```
    pub fn code(&self) -> Option<FailureCode> {
        match self {
            Envelope::Failure { code, .. } => Some(*code),
            Envelope::Success { .. } => None,
        }
    }
}

/// The envelope schema of a tool: `oneOf` success / failure, closed objects, `const` tool,
/// `data` with exactly the exposed `fields` (`(name, required)`), codes from the closed set.
///
/// # Example
/// ```
/// use jsongate::gate::envelope_schema;
/// use jsongate::{Limits, Schema, Validator};
/// let schema = Schema::compile(envelope_schema("status", &[("state", true), ("note", false)]).as_bytes()).unwrap();
/// let mut v = Validator::new(&schema);
/// let ok = br#"{"tool":"status","request_id":"r","outcome":"success","data":{"state":"up"}}"#;
/// let extra = br#"{"tool":"status","request_id":"r","outcome":"success","data":{"state":"up","x":1}}"#;
/// assert!(v.validate_slice(ok, Limits::new()).is_ok());
/// assert!(v.validate_slice(extra, Limits::new()).is_err());
/// ```
pub fn envelope_schema(tool: &str, fields: &[(&str, bool)]) -> String {
    let s = |x: &str| Value::String(x.to_owned());
    let obj = |m: Vec<(&str, Value)>| {
        Value::Object(m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
    };
    let names = |xs: &[&str]| Value::Array(xs.iter().map(|x| s(x)).collect());
    let konst = |x: &str| obj(vec![("const", s(x))]);
    let data = obj(vec![
        ("type", s("object")),
        ("additionalProperties", Value::Bool(false)),
        (
            "required",
            Value::Array(fields.iter().filter(|f| f.1).map(|f| s(f.0)).collect()),
        ),
        (
            "properties",
            Value::Object(
                fields
                    .iter()
                    .map(|f| (f.0.to_owned(), Value::Bool(true)))
                    .collect(),
            ),
        ),
    ]);
    let error = obj(vec![
        ("type", s("object")),
        ("additionalProperties", Value::Bool(false)),
        ("required", names(&["code", "retryable"])),
        (
            "properties",
            obj(vec![
                (
                    "code",
                    obj(vec![
                        (
                            "enum",
                            Value::Array(FailureCode::ALL.iter().map(|c| s(c.as_str())).collect()),
                        ),
                        ("description", s(CODES_DESCRIPTION)),
                    ]),
                ),
                ("retryable", obj(vec![("type", s("boolean"))])),
            ]),
        ),
    ]);
    let branch = |outcome: &str, key: &str, body: Value| {
        obj(vec![
            ("type", s("object")),
            ("additionalProperties", Value::Bool(false)),
            ("required", names(&["tool", "request_id", "outcome", key])),
            (
                "properties",
                obj(vec![
                    ("tool", konst(tool)),
                    (
                        "request_id",
                        obj(vec![
                            ("type", s("string")),
                            ("minLength", Value::Number("1".into())),
                            (
                                crate::schema::keywords::Keyword::MaxLength.name(),
                                Value::Number(super::request_id::MAX_REQUEST_ID_BYTES.to_string()),
                            ),
                        ]),
                    ),
                    ("outcome", konst(outcome)),
                    (key, body),
                ]),
            ),
        ])
    };
    obj(vec![
        ("$schema", s("https://json-schema.org/draft/2020-12/schema")),
        ("title", s(&format!("jsongate envelope for tool {tool}"))),
        (
            "oneOf",
            Value::Array(vec![
                branch("success", "data", data),
                branch("failure", "error", error),
            ]),
        ),
    ])
    .to_json()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Limits, Schema, Validator};

    #[test]
    fn derived_schema_accepts_rendered_envelopes_and_rejects_extras() {
        let schema =
            Schema::compile(envelope_schema("t", &[("a", true), ("b", false)]).as_bytes()).unwrap();
        let mut v = Validator::new(&schema);
        let ok = Envelope::Success {
            data: Value::Object(vec![("a".into(), Value::Null)]),
        };
        assert!(v
            .validate_slice(ok.render("t", "r").as_bytes(), Limits::new())
            .is_ok());
        for code in FailureCode::ALL {
            let f = Envelope::Failure {
                code,
                retryable: true,
            };
            assert!(v
                .validate_slice(f.render("t", "r").as_bytes(), Limits::new())
                .is_ok());
        }
        let extra = Envelope::Success {
            data: Value::Object(vec![("a".into(), Value::Null), ("c".into(), Value::Null)]),
        };
        assert!(v
            .validate_slice(extra.render("t", "r").as_bytes(), Limits::new())
            .is_err());
        assert!(v
            .validate_slice(ok.render("u", "r").as_bytes(), Limits::new())
            .is_err());
        assert!(v
            .validate_slice(ok.render("t", "").as_bytes(), Limits::new())
            .is_err());
        let missing = Envelope::Success {
            data: Value::Object(vec![]),
        };
        assert!(v
            .validate_slice(missing.render("t", "r").as_bytes(), Limits::new())
            .is_err());
    }
}
