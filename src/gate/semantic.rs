//! Semantic checks: what a schema cannot say, bound to the request.
//!
//! Checks run only after the upstream document satisfied its schema, on the values the
//! selector kept (by output field name), against the caller's [`Context`]: the request's
//! values and the caller's clock. Each check reports its own reason as a fixed code; no
//! upstream text ever goes into a failure.

use std::collections::BTreeMap;
use std::fmt;

use super::envelope::FailureCode;
use crate::json::Value;
use crate::schema::regex::Regex;
use crate::select::Projection;

/// A point in time: seconds and nanoseconds since the Unix epoch (UTC).
///
/// # Example
/// ```
/// use jsongate::gate::Timestamp;
/// let t = Timestamp::parse_rfc3339("2024-05-01T12:00:00Z").unwrap();
/// assert_eq!(t, Timestamp::from_unix(1_714_564_800, 0));
/// assert_eq!(t.to_rfc3339(), "2024-05-01T12:00:00Z");
/// assert!(Timestamp::now() > t);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

impl Timestamp {
    /// A timestamp from Unix seconds and nanoseconds (`nanos` is clamped below 10⁹).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Timestamp;
    /// assert_eq!(Timestamp::from_unix(0, 0).to_rfc3339(), "1970-01-01T00:00:00Z");
    /// ```
    pub fn from_unix(secs: i64, nanos: u32) -> Timestamp {
        Timestamp {
            secs,
            nanos: nanos.min(999_999_999),
        }
    }

    /// The system clock.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Context, Timestamp};
    /// let ctx = Context::new().now(Timestamp::now()); // what a caller gives freshness checks
    /// assert!(ctx.clock().unwrap().unix_secs() > 1_700_000_000);
    /// ```
    pub fn now() -> Timestamp {
        match std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
            Ok(d) => Timestamp::from_unix(
                i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                d.subsec_nanos(),
            ),
            Err(_) => Timestamp::from_unix(0, 0),
        }
    }

    /// Seconds since the Unix epoch.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Timestamp;
    /// assert_eq!(Timestamp::from_unix(86_400, 5).unix_secs(), 86_400);
    /// ```
    pub fn unix_secs(&self) -> i64 {
        self.secs
    }

    /// Parses an RFC 3339 `date-time` (`2024-05-01T12:00:00Z`, `…T12:00:00.25+02:00`; `T`
    /// and `Z` in either case). Calendar dates are checked (leap years included); a leap
    /// second (`:60`) is accepted and counted as the next second.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Timestamp;
    /// let t = Timestamp::parse_rfc3339("1970-01-02T00:00:01+01:00").unwrap();
    /// assert_eq!(t.unix_secs(), 86_400 + 1 - 3_600);
    /// assert!(Timestamp::parse_rfc3339("2023-02-29T00:00:00Z").is_none());
    /// assert!(Timestamp::parse_rfc3339("2024-01-01 00:00:00").is_none());
    /// ```
    pub fn parse_rfc3339(s: &str) -> Option<Timestamp> {
        let b = s.as_bytes();
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let d = b.get(r)?;
            if d.iter().all(u8::is_ascii_digit) {
                Some(d.iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0')))
            } else {
                None
            }
        };
        let sep = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
        if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt") && sep(13, b":") && sep(16, b":")) {
            return None;
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        let days_in_month = match month {
            1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
            4 | 6 | 9 | 11 => 30,
            2 if leap => 29,
            2 => 28,
            _ => return None,
        };
        if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
            return None;
        }
        let mut i = 19;
        let mut nanos = 0u32;
        if b.get(i) == Some(&b'.') {
            let start = i + 1;
            i = start;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                if i - start < 9 {
                    nanos = nanos * 10 + u32::from(b[i] - b'0');
                }
                i += 1;
            }
            if i == start {
                return None;
            }
            for _ in (i - start)..9 {
                nanos *= 10;
            }
        }
        let offset = match b.get(i)? {
            b'Z' | b'z' if i + 1 == b.len() => 0,
            &c @ (b'+' | b'-') if i + 6 == b.len() && b[i + 3] == b':' => {
                let (h, m) = (num(i + 1..i + 3)?, num(i + 4..i + 6)?);
                if h > 23 || m > 59 {
                    return None;
                }
                let o = h * 3600 + m * 60;
                if c == b'-' {
                    -o
                } else {
                    o
                }
            }
            _ => return None,
        };
        let days = days_from_civil(year, month, day);
        let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
        Some(Timestamp { secs, nanos })
    }

    /// Formats as RFC 3339 in UTC (`2024-05-01T12:00:00Z`, with a fraction only when the
    /// nanoseconds are not zero).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Timestamp;
    /// let t = Timestamp::parse_rfc3339("2024-02-29T23:59:59+01:00").unwrap();
    /// assert_eq!(t.to_rfc3339(), "2024-02-29T22:59:59Z");
    /// ```
    pub fn to_rfc3339(&self) -> String {
        let days = self.secs.div_euclid(86_400);
        let rem = self.secs.rem_euclid(86_400);
        let (y, m, d) = civil_from_days(days);
        let mut s = format!(
            "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60
        );
        if self.nanos != 0 {
            let frac = format!("{:09}", self.nanos);
            s.push('.');
            s.push_str(frac.trim_end_matches('0'));
        }
        s.push('Z');
        s
    }

    /// `self - other` in whole seconds (rounded toward negative infinity for the fraction).
    fn seconds_since(&self, other: &Timestamp) -> i128 {
        let a = i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos);
        let b = i128::from(other.secs) * 1_000_000_000 + i128::from(other.nanos);
        (a - b).div_euclid(1_000_000_000)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_rfc3339())
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// What the gate's caller knows about the request: its values (`project_id=p-1`) and the
/// clock to judge freshness against.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Timestamp};
/// let ctx = Context::new().value("change_id", "c-1").now(Timestamp::from_unix(1_714_564_800, 0));
/// assert_eq!(ctx.get("change_id"), Some("c-1"));
/// assert_eq!(ctx.clock().map(|t| t.unix_secs()), Some(1_714_564_800));
/// ```
#[derive(Clone, Debug, Default)]
pub struct Context {
    values: BTreeMap<String, String>,
    now: Option<Timestamp>,
}

impl Context {
    /// An empty context without a clock.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Context;
    /// let ctx = Context::new();
    /// assert_eq!((ctx.get("anything"), ctx.clock()), (None, None));
    /// ```
    pub fn new() -> Context {
        Context::default()
    }

    /// Adds a request value.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Context;
    /// let ctx = Context::new().value("project_id", "p-1").value("project_id", "p-2");
    /// assert_eq!(ctx.get("project_id"), Some("p-2")); // the last value set wins
    /// ```
    #[must_use]
    pub fn value(mut self, key: &str, value: &str) -> Context {
        self.values.insert(key.to_owned(), value.to_owned());
        self
    }

    /// Sets the clock freshness checks compare against.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Context, Timestamp};
    /// assert!(Context::new().now(Timestamp::now()).clock().is_some());
    /// ```
    #[must_use]
    pub fn now(mut self, now: Timestamp) -> Context {
        self.now = Some(now);
        self
    }

    /// The request value `key`.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::Context;
    /// assert_eq!(Context::new().value("k", "v").get("k"), Some("v"));
    /// ```
    pub fn get(&self, key: &str) -> Option<&str> {
        self.values.get(key).map(String::as_str)
    }

    /// The caller's clock, if set.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{Context, Timestamp};
    /// let t = Timestamp::from_unix(10, 0);
    /// assert_eq!(Context::new().now(t).clock(), Some(t));
    /// ```
    pub fn clock(&self) -> Option<Timestamp> {
        self.now
    }
}

/// The values the selector kept, by output field name.
///
/// # Example
/// ```
/// use jsongate::gate::{CheckFailure, Context, Fields, SemanticCheck};
/// /// Reads one field, as a custom check does.
/// struct HasId;
/// impl SemanticCheck for HasId {
///     fn name(&self) -> &str { "has_id" }
///     fn fields(&self) -> Vec<&str> { vec!["id"] }
///     fn check(&self, f: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> {
///         match f.get("id") {
///             Some(_) => Ok(()),
///             None => Err(CheckFailure { code: jsongate::gate::FailureCode::Mismatch,
///                 check: "has_id".into(), field: "id".into(), reason: "missing" }),
///         }
///     }
/// }
/// let contract = jsongate::gate::Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"id":{"pointer":"/id"}}}"#,
///   std::path::Path::new("."))?;
/// let gate = jsongate::gate::Gate::new(&contract)?.with_check(Box::new(HasId))?;
/// let req = jsongate::gate::Request::new("r-1", Context::new());
/// assert!(gate.run_slice(br#"{"id":1}"#, &req).unwrap().audit.accepted);
/// assert!(!gate.run_slice(b"{}", &req).unwrap().audit.accepted);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Fields<'a> {
    projection: &'a Projection,
    values: &'a [Option<Value>],
}

impl<'a> Fields<'a> {
    pub(crate) fn new(projection: &'a Projection, values: &'a [Option<Value>]) -> Self {
        Fields { projection, values }
    }

    /// The value of field `name`, if the document had it.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, FailureCode, Fields, Gate, Request, SemanticCheck};
    /// /// `end` must not come before `start` (both integers).
    /// struct Ordered;
    /// impl SemanticCheck for Ordered {
    ///     fn name(&self) -> &str { "ordered" }
    ///     fn fields(&self) -> Vec<&str> { vec!["start", "end"] }
    ///     fn check(&self, f: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> {
    ///         let n = |k| f.get(k).and_then(|v| v.as_number_text()).and_then(|t| t.parse::<i64>().ok());
    ///         match (n("start"), n("end")) {
    ///             (Some(s), Some(e)) if s <= e => Ok(()),
    ///             _ => Err(CheckFailure { code: FailureCode::Mismatch, check: "ordered".into(), field: "end".into(), reason: "before_start" }),
    ///         }
    ///     }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{"type":"object"}}],
    ///   "fields":{"start":{"pointer":"/span/0"},"end":{"pointer":"/span/1"}}}"#, std::path::Path::new("."))?;
    /// let gate = Gate::new(&contract)?.with_check(Box::new(Ordered))?;
    /// let req = Request::new("r-1", Context::new());
    /// assert!(gate.run_slice(br#"{"span":[3,9]}"#, &req).unwrap().audit.accepted);
    /// assert!(!gate.run_slice(br#"{"span":[9,3]}"#, &req).unwrap().audit.accepted);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        self.values.get(self.projection.position(name)?)?.as_ref()
    }
}

/// A failed check: its code for the agent, and for operators which check failed, on which
/// field, and a fixed reason (`not_equal`, `missing`, `wrong_type`, `too_old`, `in_future`,
/// `bad_timestamp`, `not_owned`, or a custom check's own).
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, Gate, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],
///   "fields":{"id":{"pointer":"/id"}},
///   "checks":[{"check":"equals","field":"id","context":"id"}]}"#, std::path::Path::new("."))?;
/// let req = Request::new("r-1", Context::new().value("id", "a"));
/// let d = Gate::new(&contract)?.run_slice(br#"{"id":"b"}"#, &req).unwrap();
/// let e = d.audit.error.unwrap(); // the check's failure, as operators see it
/// assert_eq!((e.kind.as_str(), e.reason.as_deref()), ("check", Some("not_equal")));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckFailure {
    /// The failure code the agent sees.
    pub code: FailureCode,
    /// The check's name (`equals`, `fresh`, `belongs_to`, or a custom name).
    pub check: String,
    /// The output field the check looked at.
    pub field: String,
    /// A fixed reason code (never upstream text).
    pub reason: &'static str,
}

/// A semantic check. Implement it for checks the built-in ones cannot express and add them
/// with [`Gate::with_check`](super::Gate::with_check).
///
/// # Example
/// ```
/// use jsongate::gate::{CheckFailure, Context, FailureCode, Fields, SemanticCheck};
/// struct NonNegative;
/// impl SemanticCheck for NonNegative {
///     fn name(&self) -> &str { "non_negative" }
///     fn check(&self, f: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> {
///         match f.get("count").and_then(|v| v.as_number_text()) {
///             Some(n) if !n.starts_with('-') => Ok(()),
///             _ => Err(CheckFailure { code: FailureCode::Mismatch, check: "non_negative".into(),
///                                     field: "count".into(), reason: "negative" }),
///         }
///     }
/// }
/// ```
pub trait SemanticCheck: Send + Sync {
    /// The check's name, for the audit record.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, FailureCode, Fields, Gate, Request, SemanticCheck};
    /// struct Never;
    /// impl SemanticCheck for Never {
    ///     fn name(&self) -> &str { "never" }
    ///     fn check(&self, _: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> {
    ///         Err(CheckFailure { code: FailureCode::Mismatch, check: self.name().into(), field: String::new(), reason: "refused" })
    ///     }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// let d = Gate::new(&contract)?.with_check(Box::new(Never))?.run_slice(b"{}", &Request::new("r", Context::new())).unwrap();
    /// assert_eq!(d.audit.error.unwrap().check.as_deref(), Some("never")); // the name, in the audit record
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    fn name(&self) -> &str;
    /// Checks the selected fields against the request.
    ///
    /// # Errors
    /// The failure, with a code and a fixed reason.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, FailureCode, Fields, Gate, Request, SemanticCheck};
    /// /// The field `owner` must be the request's `user`.
    /// struct Owner;
    /// impl SemanticCheck for Owner {
    ///     fn name(&self) -> &str { "owner" }
    ///     fn context_keys(&self) -> Vec<&str> { vec!["user"] }
    ///     fn fields(&self) -> Vec<&str> { vec!["owner"] }
    ///     fn check(&self, f: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
    ///         if f.get("owner").and_then(|v| v.as_str()) == ctx.get("user") { return Ok(()) }
    ///         Err(CheckFailure { code: FailureCode::Mismatch, check: "owner".into(), field: "owner".into(), reason: "not_owner" })
    ///     }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{"owner":{"pointer":"/owner"}}}"#, std::path::Path::new("."))?;
    /// let gate = Gate::new(&contract)?.with_check(Box::new(Owner))?;
    /// let req = Request::new("r", Context::new().value("user", "ana"));
    /// assert!(gate.run_slice(br#"{"owner":"ana"}"#, &req).unwrap().audit.accepted);
    /// let d = gate.run_slice(br#"{"owner":"bo"}"#, &req).unwrap();
    /// assert_eq!(d.audit.error.unwrap().reason.as_deref(), Some("not_owner"));
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    fn check(&self, fields: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure>;
    /// Request values this check needs; the gate refuses to run without them.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, Fields, Gate, Request, SemanticCheck};
    /// struct NeedsTenant;
    /// impl SemanticCheck for NeedsTenant {
    ///     fn name(&self) -> &str { "needs_tenant" }
    ///     fn context_keys(&self) -> Vec<&str> { vec!["tenant"] }
    ///     fn check(&self, _: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> { Ok(()) }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// let gate = Gate::new(&contract)?.with_check(Box::new(NeedsTenant))?;
    /// let err = gate.run_slice(b"{}", &Request::new("r", Context::new())).unwrap_err();
    /// assert_eq!(err.to_string(), "check 'needs_tenant' needs the request value 'tenant'");
    /// assert!(gate.run_slice(b"{}", &Request::new("r", Context::new().value("tenant", "t1"))).is_ok());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    fn context_keys(&self) -> Vec<&str> {
        Vec::new()
    }
    /// Whether the check needs the caller's clock.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, Fields, Gate, Request, SemanticCheck, Timestamp};
    /// struct Clocked;
    /// impl SemanticCheck for Clocked {
    ///     fn name(&self) -> &str { "clocked" }
    ///     fn needs_clock(&self) -> bool { true }
    ///     fn check(&self, _: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
    ///         assert!(ctx.clock().is_some()); // the gate never calls it without one
    ///         Ok(())
    ///     }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
    /// let gate = Gate::new(&contract)?.with_check(Box::new(Clocked))?;
    /// assert!(gate.run_slice(b"{}", &Request::new("r", Context::new())).is_err());
    /// assert!(gate.run_slice(b"{}", &Request::new("r", Context::new().now(Timestamp::now()))).is_ok());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    fn needs_clock(&self) -> bool {
        false
    }
    /// Output fields this check reads (they must exist in the contract).
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::{CheckFailure, Context, Contract, Fields, Gate, SemanticCheck};
    /// struct ReadsTotal;
    /// impl SemanticCheck for ReadsTotal {
    ///     fn name(&self) -> &str { "reads_total" }
    ///     fn fields(&self) -> Vec<&str> { vec!["total"] }
    ///     fn check(&self, _: &Fields<'_>, _: &Context) -> Result<(), CheckFailure> { Ok(()) }
    /// }
    /// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
    ///   "upstream":[{"version":"v1","schema":{}}],"fields":{"count":{"pointer":"/count"}}}"#, std::path::Path::new("."))?;
    /// // `total` is not a field of the contract: the check is refused when it is added.
    /// assert!(Gate::new(&contract)?.with_check(Box::new(ReadsTotal)).is_err());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    fn fields(&self) -> Vec<&str> {
        Vec::new()
    }
}

/// The text a field compares as: a string's contents or a number's exact text.
pub(super) fn scalar_text(v: &Value) -> Option<&str> {
    v.as_str().or_else(|| v.as_number_text())
}

/// The field must equal the request value `context` (strings compare exactly; a number
/// compares by its exact text).
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, Equals, FailureCode, Gate, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"id":{"pointer":"/id"}}}"#,
///   std::path::Path::new("."))?;
/// let check = Equals { field: "id".into(), context: "asked_id".into(), code: FailureCode::Mismatch };
/// let gate = Gate::new(&contract)?.with_check(Box::new(check))?;
/// let req = Request::new("r-1", Context::new().value("asked_id", "42"));
/// assert!(gate.run_slice(br#"{"id":42}"#, &req).unwrap().audit.accepted); // numbers by their text
/// assert!(!gate.run_slice(br#"{"id":43}"#, &req).unwrap().audit.accepted);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Equals {
    /// Output field.
    pub field: String,
    /// Request value key.
    pub context: String,
    /// Code on failure (default [`FailureCode::Mismatch`]).
    pub code: FailureCode,
}

impl SemanticCheck for Equals {
    fn name(&self) -> &'static str {
        "equals"
    }
    fn check(&self, f: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
        let fail = |reason| failure(self.code, "equals", &self.field, reason);
        let v = f.get(&self.field).ok_or_else(|| fail("missing"))?;
        let text = scalar_text(v).ok_or_else(|| fail("wrong_type"))?;
        match ctx.get(&self.context) {
            Some(want) if want == text => Ok(()),
            _ => Err(fail("not_equal")),
        }
    }
    fn context_keys(&self) -> Vec<&str> {
        vec![&self.context]
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.field]
    }
}

/// The field is an RFC 3339 timestamp not older than `max_age_seconds` and not later than
/// `now + max_skew_seconds`.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, FailureCode, Fresh, Gate, Request, Timestamp};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"at":{"pointer":"/at"}}}"#,
///   std::path::Path::new("."))?;
/// let check = Fresh { field: "at".into(), max_age_seconds: 300, max_skew_seconds: 5, code: FailureCode::Stale };
/// let gate = Gate::new(&contract)?.with_check(Box::new(check))?;
/// let now = Timestamp::parse_rfc3339("2024-05-01T12:00:00Z").unwrap();
/// let req = Request::new("r-1", Context::new().now(now));
/// assert!(gate.run_slice(br#"{"at":"2024-05-01T11:58:00Z"}"#, &req).unwrap().audit.accepted);
/// let old = gate.run_slice(br#"{"at":"2024-05-01T10:00:00Z"}"#, &req).unwrap();
/// assert_eq!(old.envelope.code(), Some(FailureCode::Stale));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct Fresh {
    /// Output field.
    pub field: String,
    /// Oldest accepted age, in seconds.
    pub max_age_seconds: u64,
    /// How far in the future a timestamp may lie (clock skew), in seconds.
    pub max_skew_seconds: u64,
    /// Code on failure (default [`FailureCode::Stale`]).
    pub code: FailureCode,
}

impl SemanticCheck for Fresh {
    fn name(&self) -> &'static str {
        "fresh"
    }
    fn check(&self, f: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
        let fail = |reason| failure(self.code, "fresh", &self.field, reason);
        let v = f.get(&self.field).ok_or_else(|| fail("missing"))?;
        let s = v.as_str().ok_or_else(|| fail("wrong_type"))?;
        let t = Timestamp::parse_rfc3339(s).ok_or_else(|| fail("bad_timestamp"))?;
        let now = ctx.clock().ok_or_else(|| fail("no_clock"))?;
        let age = now.seconds_since(&t);
        if age > i128::from(self.max_age_seconds) {
            Err(fail("too_old"))
        } else if -age > i128::from(self.max_skew_seconds) {
            Err(fail("in_future"))
        } else {
            Ok(())
        }
    }
    fn needs_clock(&self) -> bool {
        true
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.field]
    }
}

/// The field (a string) must belong to the asked resource: start with a prefix, or match a
/// whole-string pattern, in which `{key}` stands for the request value `key` (inserted
/// literally, regex metacharacters escaped).
///
/// # Example
/// ```
/// use jsongate::gate::{BelongsTo, Context, Contract, FailureCode, Gate, Ownership, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"run":{"pointer":"/run"}}}"#,
///   std::path::Path::new("."))?;
/// let check = BelongsTo {
///     field: "run".into(),
///     rule: Ownership::Prefix("{project_id}/".into()),
///     code: FailureCode::Mismatch,
/// };
/// let gate = Gate::new(&contract)?.with_check(Box::new(check))?;
/// let req = Request::new("r-1", Context::new().value("project_id", "p-1"));
/// assert!(gate.run_slice(br#"{"run":"p-1/run-7"}"#, &req).unwrap().audit.accepted);
/// assert!(!gate.run_slice(br#"{"run":"p-2/run-7"}"#, &req).unwrap().audit.accepted);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub struct BelongsTo {
    /// Output field.
    pub field: String,
    /// `Prefix("{project_id}/")` or `Pattern("{project_id}-run-[0-9]+")`.
    pub rule: Ownership,
    /// Code on failure (default [`FailureCode::Mismatch`]).
    pub code: FailureCode,
}

/// How [`BelongsTo`] decides ownership. Templates use `{key}` for request values.
///
/// # Example
/// ```
/// use jsongate::gate::{BelongsTo, Context, Contract, FailureCode, Gate, Ownership, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],"fields":{"run":{"pointer":"/run"}}}"#,
///   std::path::Path::new("."))?;
/// // The whole field must match; `{project_id}` is inserted literally (`.` is not a wildcard).
/// let check = BelongsTo { field: "run".into(), rule: Ownership::Pattern("{project_id}-run-[0-9]+".into()), code: FailureCode::Mismatch };
/// let gate = Gate::new(&contract)?.with_check(Box::new(check))?;
/// let req = Request::new("r-1", Context::new().value("project_id", "p.1"));
/// assert!(gate.run_slice(br#"{"run":"p.1-run-42"}"#, &req).unwrap().audit.accepted);
/// assert!(!gate.run_slice(br#"{"run":"pX1-run-42"}"#, &req).unwrap().audit.accepted);
/// assert!(!gate.run_slice(br#"{"run":"p.1-run-42-old"}"#, &req).unwrap().audit.accepted);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug)]
pub enum Ownership {
    /// The field starts with this template.
    Prefix(String),
    /// The whole field matches this regex template.
    Pattern(String),
}

impl Ownership {
    fn template(&self) -> &str {
        match self {
            Ownership::Prefix(t) | Ownership::Pattern(t) => t,
        }
    }
}

/// Splits a template into literal text and `{key}` references.
pub(crate) fn template_keys(t: &str) -> Vec<&str> {
    let mut keys = Vec::new();
    let mut rest = t;
    while let Some(open) = rest.find('{') {
        match rest[open..].find('}') {
            Some(close) => {
                let key = &rest[open + 1..open + close];
                // A key starts with a letter or `_`, so a quantifier (`{2}`) is never one.
                let named = key
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
                if named && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                    keys.push(key);
                }
                rest = &rest[open + close + 1..];
            }
            None => break,
        }
    }
    keys
}

fn fill(t: &str, ctx: &Context, escape: bool) -> Option<String> {
    let mut out = t.to_owned();
    for key in template_keys(t) {
        let v = ctx.get(key)?;
        let v = if escape {
            crate::schema::regex::escape(v)
        } else {
            v.to_owned()
        };
        out = out.replace(&format!("{{{key}}}"), &v);
    }
    Some(out)
}

/// Patterns filled from the context, compiled, most recent first: a session's checks fill
/// the same pattern with the same values, so each is compiled once, not on every check.
static COMPILED: std::sync::Mutex<Vec<(String, std::sync::Arc<Regex>)>> =
    std::sync::Mutex::new(Vec::new());

/// How many filled patterns [`COMPILED`] keeps.
const COMPILED_KEPT: usize = 64;

/// The whole-string matcher for the filled `belongs_to` pattern `p` (an ECMA-262 pattern),
/// from [`COMPILED`] or compiled now; `None` when it does not compile (it matches nothing).
fn compiled(p: &str) -> Option<std::sync::Arc<Regex>> {
    let mut kept = COMPILED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(i) = kept.iter().position(|(k, _)| k == p) {
        let hit = kept.remove(i);
        let re = std::sync::Arc::clone(&hit.1);
        kept.insert(0, hit);
        return Some(re);
    }
    let re = std::sync::Arc::new(Regex::new(&format!("^(?:{p})$")).ok()?);
    kept.insert(0, (p.to_owned(), std::sync::Arc::clone(&re)));
    kept.truncate(COMPILED_KEPT);
    Some(re)
}

impl SemanticCheck for BelongsTo {
    fn name(&self) -> &'static str {
        "belongs_to"
    }
    fn check(&self, f: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
        let fail = |reason| failure(self.code, "belongs_to", &self.field, reason);
        let v = f.get(&self.field).ok_or_else(|| fail("missing"))?;
        let s = scalar_text(v).ok_or_else(|| fail("wrong_type"))?;
        let ok = match &self.rule {
            Ownership::Prefix(t) => {
                s.starts_with(&fill(t, ctx, false).ok_or_else(|| fail("no_context"))?)
            }
            Ownership::Pattern(t) => {
                let p = fill(t, ctx, true).ok_or_else(|| fail("no_context"))?;
                match compiled(&p) {
                    Some(re) => re.is_match(s).map_err(|_| fail("budget_exceeded"))?,
                    None => false,
                }
            }
        };
        if ok {
            Ok(())
        } else {
            Err(fail("not_owned"))
        }
    }
    fn context_keys(&self) -> Vec<&str> {
        template_keys(self.rule.template())
    }
    fn fields(&self) -> Vec<&str> {
        vec![&self.field]
    }
}

pub(super) fn failure(
    code: FailureCode,
    check: &str,
    field: &str,
    reason: &'static str,
) -> CheckFailure {
    CheckFailure {
        code,
        check: check.to_owned(),
        field: field.to_owned(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trip_and_rejections() {
        for s in [
            "2024-02-29T23:59:59Z",
            "1969-12-31T23:59:59.5Z",
            "2000-01-01T00:00:00Z",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(s).unwrap().to_rfc3339(), s);
        }
        let t = Timestamp::parse_rfc3339("2024-05-01t12:00:00.123456789123-01:30").unwrap();
        assert_eq!(t.to_rfc3339(), "2024-05-01T13:30:00.123456789Z");
        for bad in [
            "2024-13-01T00:00:00Z",
            "2024-04-31T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2024-01-01T24:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0100",
            "2024-01-01T00:00:00Zjunk",
            "２024-01-01T00:00:00Z",
        ] {
            assert!(Timestamp::parse_rfc3339(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn freshness_window_and_skew() {
        let p = Projection::new([("t", "/t")]).unwrap();
        let check = Fresh {
            field: "t".into(),
            max_age_seconds: 60,
            max_skew_seconds: 5,
            code: FailureCode::Stale,
        };
        let now = Timestamp::parse_rfc3339("2024-05-01T12:00:00Z").unwrap();
        let ctx = Context::new().now(now);
        let run = |s: &str| {
            let vals = [Some(Value::String(s.into()))];
            check
                .check(&Fields::new(&p, &vals), &ctx)
                .map_err(|e| e.reason)
        };
        assert_eq!(run("2024-05-01T11:59:00Z"), Ok(()));
        assert_eq!(run("2024-05-01T11:58:59Z"), Err("too_old"));
        assert_eq!(run("2024-05-01T12:00:05Z"), Ok(()));
        assert_eq!(run("2024-05-01T12:00:05.5Z"), Err("in_future"));
        assert_eq!(run("yesterday"), Err("bad_timestamp"));
    }

    #[test]
    fn belongs_to_escapes_context_values() {
        let p = Projection::new([("id", "/id")]).unwrap();
        let check = BelongsTo {
            field: "id".into(),
            rule: Ownership::Pattern("{project}-run-[0-9]+".into()),
            code: FailureCode::Mismatch,
        };
        let ctx = Context::new().value("project", "p.1");
        let run = |s: &str| {
            let vals = [Some(Value::String(s.into()))];
            check
                .check(&Fields::new(&p, &vals), &ctx)
                .map_err(|e| e.reason)
        };
        assert_eq!(run("p.1-run-42"), Ok(()));
        assert_eq!(run("pX1-run-42"), Err("not_owned"));
        assert_eq!(run("p.1-run-42\nx"), Err("not_owned"));
        assert_eq!(check.context_keys(), ["project"]);
    }

    #[test]
    fn belongs_to_patterns_are_ecma_262() {
        let p = Projection::new([("id", "/id")]).unwrap();
        let check = BelongsTo {
            field: "id".into(),
            // `\d` is ASCII in ECMA-262; a lookahead needs the backtracking matcher.
            rule: Ownership::Pattern(r"{org}/\d{2}(?=$)".into()),
            code: FailureCode::Mismatch,
        };
        let run = |org: &str, s: &str| {
            let ctx = Context::new().value("org", org);
            let vals = [Some(Value::String(s.into()))];
            check
                .check(&Fields::new(&p, &vals), &ctx)
                .map_err(|e| e.reason)
        };
        // Context values with characters Unicode mode refuses to see escaped (`-`) or needs
        // escaped (`/`, `(`) match literally.
        assert_eq!(run("a-b/c(", "a-b/c(/42"), Ok(()));
        assert_eq!(run("a-b/c(", "a-b/c(/٤٢"), Err("not_owned"));
        assert_eq!(run("a.b", "axb/42"), Err("not_owned"));
        // The same filled pattern again is served compiled.
        for _ in 0..3 {
            assert_eq!(run("a-b/c(", "a-b/c(/42"), Ok(()));
        }
        let kept = COMPILED.lock().unwrap();
        assert_eq!(
            kept.iter()
                .filter(|(k, _)| k == r"a\-b\/c\(/\d{2}(?=$)" || k == r"a-b\/c\(/\d{2}(?=$)")
                .count(),
            1
        );
    }
}
