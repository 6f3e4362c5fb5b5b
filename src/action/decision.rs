//! The decision record and the invariant it carries.
//!
//! A [`Decision`] can only be made by [`Decision::from_facts`], which derives `decision` and
//! `reason` from the facts; there is no other constructor and no setter, so
//! `decision == allow ⇒ toolAllowed ∧ argumentsValid ∧ required ⊆ grant ∧ no rule failed`
//! (and no failure carried from a received record) holds for every value of the type.
//! Records received as JSON are [`Claim`]s, never decisions:
//! [`Policy::recheck`](super::Policy::recheck) turns a claim back into a decision by
//! recomputing the facts and carrying the claim's own failure, so it can only keep or
//! tighten what the record says.

use std::fmt;

use crate::config::{self, Shipped};
use crate::json::{ConfigError, ConfigErrorKind, ObjectWriter, Value};

use super::rules::RuleFailure;

/// The JSON Schema every decision record satisfies (also used to read received records).
///
/// # Example
/// ```
/// use jsongate::action::{validate_record, DECISION_SCHEMA};
/// use jsongate::{Limits, Schema, Validator};
/// assert!(DECISION_SCHEMA.contains(r#""$id": "urn:jsongate:decision:1""#));
/// // Any JSON Schema validator can check records against it; validate_record does just that.
/// let schema = Schema::compile(DECISION_SCHEMA.as_bytes())?;
/// let record = br#"{"tool":"t","argumentsValid":true,"toolAllowed":true,"grant":[],"required":[],"decision":"allow","reason":"ok"}"#;
/// assert!(Validator::new(&schema).validate_slice(record, Limits::new()).is_ok());
/// assert!(validate_record(record).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const DECISION_SCHEMA: &str = include_str!("decision.schema.json");

/// `allow`, `deny` or `ask` (a person decides).
///
/// # Example
/// ```
/// use jsongate::action::{Decision, Facts, Verdict};
/// let d = Decision::from_facts(Facts { tool: "t".into(), tool_allowed: true, arguments_valid: true, ..Facts::default() });
/// assert_eq!(d.verdict(), Verdict::Allow);
/// assert_eq!(Verdict::Ask.as_str(), "ask");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every condition holds.
    Allow,
    /// Some condition failed.
    Deny,
    /// Every condition holds but the tool needs a person's approval.
    Ask,
}

impl Verdict {
    /// `"allow"`, `"deny"` or `"ask"`.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Verdict;
    /// assert_eq!(Verdict::Deny.as_str(), "deny");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allow => "allow",
            Verdict::Deny => "deny",
            Verdict::Ask => "ask",
        }
    }

    fn parse(s: &str) -> Option<Verdict> {
        [Verdict::Allow, Verdict::Deny, Verdict::Ask]
            .into_iter()
            .find(|v| v.as_str() == s)
    }
}

/// Why: a closed set, in the order the checks run, every denial before the reasons that
/// ask (`Ord` follows that order: an earlier check's failure is the stricter one).
///
/// # Example
/// ```
/// use jsongate::action::Reason;
/// assert!(Reason::ToolNotAllowlisted < Reason::NeedsApproval); // denials come first
/// assert_eq!(Reason::PathEscape.to_string(), "path_escape");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reason {
    /// Allowed.
    Ok,
    /// The tool is not on the policy's allowlist.
    ToolNotAllowlisted,
    /// The arguments do not satisfy the tool's schema, or name an undeclared argument.
    ArgumentsInvalid,
    /// A path leaves the workspace.
    PathEscape,
    /// A URL is not https or its host is not allowlisted.
    HostNotAllowed,
    /// A string is longer than its cap.
    FieldTooLong,
    /// A string contains a forbidden substring.
    ForbiddenSubstring,
    /// A value does not match the session's context (`equals_context`, `in_context_list`).
    ContextMismatch,
    /// The session's grants lack a capability the tool requires.
    GrantMissing,
    /// The shared state could not be read or written and the deployment denies then
    /// (`on_state_error: deny`, the default).
    StateUnavailable,
    /// The tool's rate limit (or the read-only mode it triggered) is in force.
    RateLimited,
    /// A person was asked and did not approve in time, refused, or approved other
    /// arguments.
    NotApproved,
    /// A sink argument carries a value that first reached the agent in untrusted output
    /// (a tool result): a person decides.
    UntrustedOrigin,
    /// The call is outside the task's plan: a person decides.
    OutsidePlan,
    /// The tool always needs a person's approval.
    NeedsApproval,
}

impl Reason {
    /// Every reason, in check order.
    pub const ALL: [Reason; 15] = [
        Reason::Ok,
        Reason::ToolNotAllowlisted,
        Reason::ArgumentsInvalid,
        Reason::PathEscape,
        Reason::HostNotAllowed,
        Reason::FieldTooLong,
        Reason::ForbiddenSubstring,
        Reason::ContextMismatch,
        Reason::GrantMissing,
        Reason::StateUnavailable,
        Reason::RateLimited,
        Reason::NotApproved,
        Reason::UntrustedOrigin,
        Reason::OutsidePlan,
        Reason::NeedsApproval,
    ];

    /// The `snake_case` name used in records.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Reason;
    /// assert_eq!(Reason::GrantMissing.as_str(), "grant_missing");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Ok => "ok",
            Reason::ToolNotAllowlisted => "tool_not_allowlisted",
            Reason::ArgumentsInvalid => "arguments_invalid",
            Reason::PathEscape => "path_escape",
            Reason::HostNotAllowed => "host_not_allowed",
            Reason::FieldTooLong => "field_too_long",
            Reason::ForbiddenSubstring => "forbidden_substring",
            Reason::ContextMismatch => "context_mismatch",
            Reason::GrantMissing => "grant_missing",
            Reason::StateUnavailable => "state_unavailable",
            Reason::RateLimited => "rate_limited",
            Reason::NotApproved => "not_approved",
            Reason::UntrustedOrigin => "untrusted_origin",
            Reason::OutsidePlan => "outside_plan",
            Reason::NeedsApproval => "needs_approval",
        }
    }

    /// Whether this reason asks a person rather than denies.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Reason;
    /// assert!(Reason::OutsidePlan.asks() && !Reason::RateLimited.asks());
    /// ```
    #[must_use]
    pub fn asks(self) -> bool {
        matches!(
            self,
            Reason::UntrustedOrigin | Reason::OutsidePlan | Reason::NeedsApproval
        )
    }

    /// The reason named `s`.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::Reason;
    /// assert_eq!(Reason::parse("rate_limited"), Some(Reason::RateLimited));
    /// assert_eq!(Reason::parse("RATE_LIMITED"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was established about one call; [`Decision::from_facts`] derives the verdict.
///
/// # Example
/// ```
/// use jsongate::action::{Decision, Facts, Reason};
/// let facts = Facts { tool: "t".into(), tool_allowed: true, arguments_valid: true, ask: true, ..Facts::default() };
/// assert_eq!(Decision::from_facts(facts).reason(), Reason::NeedsApproval);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Facts {
    /// The tool name as called.
    pub tool: String,
    /// The tool is on the allowlist.
    pub tool_allowed: bool,
    /// The arguments satisfied the tool's schema and named only declared arguments.
    pub arguments_valid: bool,
    /// Where and why the arguments did not (recorded as `invalid` when it decides).
    pub arguments_error: Option<ArgumentsError>,
    /// The session's grants.
    pub grant: Vec<String>,
    /// The capabilities the tool requires.
    pub required: Vec<String>,
    /// Semantic rules that failed.
    pub rule_failures: Vec<RuleFailure>,
    /// The rate limit is in force for this call.
    pub rate_limited: bool,
    /// The tool always needs approval.
    pub ask: bool,
    /// The call is outside the session's plan.
    pub outside_plan: bool,
    /// A sink argument carries a value untrusted output introduced
    /// ([`Provenance`](super::Provenance)).
    pub untrusted: Option<super::Untrusted>,
    /// What a person said when asked: `Some(true)` approved these exact arguments,
    /// `Some(false)` did not (refused, timed out, or approved other arguments).
    pub approval: Option<bool>,
    /// The shared state failed and the deployment denies then (`state_unavailable`).
    pub state_unavailable: bool,
    /// The shared state's failure, when there was one (recorded as `stateError`, whatever
    /// the deployment chose).
    pub state_error: Option<String>,
    /// A failure carried over from a received record by
    /// [`Policy::recheck`](super::Policy::recheck): it decides unless a check that runs
    /// earlier fails too, so a recorded failure is never lost (`Ok` carries nothing).
    pub carried: Option<Reason>,
}

/// Where the arguments failed the tool's schema, so that the caller can mend the call: the
/// pointer into the arguments, the failing keyword and what the policy's schema expected
/// (the policy is the operator's own text, so its constraints are quoted; the arguments'
/// values never are).
///
/// # Example
/// ```
/// use jsongate::action::{Call, Grants, Policy, RateState};
/// let p = Policy::from_slice(br#"{"policy":1,"tools":{"page":{"arguments":{"type":"object",
///     "properties":{"n":{"type":"integer","maximum":10}}},"requires":[]}}}"#)?;
/// let call = Call::parse(br#"{"tool":"page","arguments":{"n":11}}"#, p.limits())?;
/// let d = p.decide(&call, &Grants::new::<[&str; 0], &str>([]), &RateState::new(), 0);
/// let e = d.facts().arguments_error.as_ref().unwrap();
/// assert_eq!((e.pointer.as_str(), e.keyword.as_str()), ("/n", "maximum"));
/// assert!(e.expected.contains("expected at most 10"), "{}", e.expected);
/// assert!(d.to_json().contains(r#""invalid":{"pointer":"/n","keyword":"maximum","#));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArgumentsError {
    /// JSON Pointer into the arguments (`""`: the arguments as a whole).
    pub pointer: String,
    /// The failing keyword (`type`, `maximum`, `required`, …).
    pub keyword: String,
    /// What the schema expected, in words (at most [`MAX_EXPECTED_CHARS`] characters).
    pub expected: String,
}

/// The longest `expected` text of an [`ArgumentsError`], in characters (longer ones end with
/// `…`).
pub const MAX_EXPECTED_CHARS: usize = 300;

impl ArgumentsError {
    /// An error at `pointer` for `keyword`, its text cut to [`MAX_EXPECTED_CHARS`].
    pub(crate) fn new(pointer: &str, keyword: &str, expected: &str) -> ArgumentsError {
        let cut = |s: &str| match s.char_indices().nth(MAX_EXPECTED_CHARS) {
            Some((i, _)) => format!("{}…", &s[..i]),
            None => s.to_owned(),
        };
        ArgumentsError {
            pointer: cut(pointer),
            keyword: keyword.to_owned(),
            expected: cut(expected),
        }
    }
}

/// A decision whose verdict follows from its facts (see the module docs).
///
/// # Example
/// ```
/// use jsongate::action::{Decision, Facts, Reason, Verdict};
/// let facts = Facts {
///     tool: "send_email".into(),
///     tool_allowed: true,
///     arguments_valid: true,
///     grant: vec!["read_inbox".into()],
///     required: vec!["send_email".into()],
///     ..Facts::default()
/// };
/// let d = Decision::from_facts(facts);
/// assert_eq!((d.verdict(), d.reason()), (Verdict::Deny, Reason::GrantMissing));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    facts: Facts,
    verdict: Verdict,
    reason: Reason,
}

impl Decision {
    /// The only constructor: the first failed condition (in check order, a carried failure
    /// at its own place in that order) denies; a call outside the plan, or to a tool marked
    /// `ask`, asks, unless a person approved it (allow) or did not (deny, `not_approved`);
    /// otherwise allow.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Decision, Facts, Reason};
    /// let d = Decision::from_facts(Facts { tool: "t".into(), ..Facts::default() });
    /// assert_eq!(d.reason(), Reason::ToolNotAllowlisted);
    /// ```
    pub fn from_facts(mut facts: Facts) -> Decision {
        let mut seen = Vec::with_capacity(facts.grant.len());
        facts.grant.retain(|g| {
            let new = !seen.contains(g);
            seen.push(g.clone());
            new
        });
        let missing = facts.required.iter().any(|r| !facts.grant.contains(r));
        let reason = if !facts.tool_allowed {
            Reason::ToolNotAllowlisted
        } else if !facts.arguments_valid {
            Reason::ArgumentsInvalid
        } else if let Some(f) = facts.rule_failures.first() {
            f.reason
        } else if missing {
            Reason::GrantMissing
        } else if facts.state_unavailable {
            Reason::StateUnavailable
        } else if facts.rate_limited {
            Reason::RateLimited
        } else if facts.untrusted.is_some() || facts.outside_plan || facts.ask {
            match facts.approval {
                Some(true) => Reason::Ok,
                Some(false) => Reason::NotApproved,
                None if facts.untrusted.is_some() => Reason::UntrustedOrigin,
                None if facts.outside_plan => Reason::OutsidePlan,
                None => Reason::NeedsApproval,
            }
        } else {
            Reason::Ok
        };
        // `Reason` is ordered as the checks run: the earlier of the two failures decides.
        let reason = match facts.carried {
            Some(c) if c != Reason::Ok && (reason == Reason::Ok || c < reason) => c,
            _ => reason,
        };
        let verdict = match reason {
            Reason::Ok => Verdict::Allow,
            r if r.asks() => Verdict::Ask,
            _ => Verdict::Deny,
        };
        Decision {
            facts,
            verdict,
            reason,
        }
    }

    /// `allow`, `deny` or `ask`.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Decision, Facts, Verdict};
    /// let d = Decision::from_facts(Facts { tool: "t".into(), tool_allowed: true, arguments_valid: true, rate_limited: true, ..Facts::default() });
    /// assert_eq!(d.verdict(), Verdict::Deny);
    /// ```
    pub fn verdict(&self) -> Verdict {
        self.verdict
    }

    /// Why.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Decision, Facts, Reason};
    /// let d = Decision::from_facts(Facts { tool: "t".into(), tool_allowed: true, arguments_valid: true, rate_limited: true, ..Facts::default() });
    /// assert_eq!(d.reason(), Reason::RateLimited);
    /// ```
    pub fn reason(&self) -> Reason {
        self.reason
    }

    /// This decision after a person's answer: only an `ask` changes, to `allow` when the
    /// answer is [`Granted`](super::ApprovalOutcome::Granted) and to `deny`
    /// (`not_approved`) otherwise. An approval never overrides a denial.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{ApprovalOutcome, Decision, Facts, Verdict};
    /// let asks = Decision::from_facts(Facts { tool: "t".into(), tool_allowed: true, arguments_valid: true, ask: true, ..Facts::default() });
    /// assert_eq!(asks.verdict(), Verdict::Ask);
    /// assert_eq!(asks.approved(ApprovalOutcome::Granted).verdict(), Verdict::Allow);
    /// assert_eq!(asks.approved(ApprovalOutcome::TimedOut).verdict(), Verdict::Deny);
    /// ```
    #[must_use]
    pub fn approved(&self, outcome: super::ApprovalOutcome) -> Decision {
        if self.verdict != Verdict::Ask {
            return self.clone();
        }
        let mut facts = self.facts.clone();
        facts.approval = Some(outcome == super::ApprovalOutcome::Granted);
        Decision::from_facts(facts)
    }

    /// The facts the verdict was derived from.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Decision, Facts};
    /// let d = Decision::from_facts(Facts { tool: "search".into(), ..Facts::default() });
    /// assert_eq!(d.facts().tool, "search");
    /// ```
    pub fn facts(&self) -> &Facts {
        &self.facts
    }

    /// The record as one JSON line (it satisfies [`DECISION_SCHEMA`]).
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{validate_record, Decision, Facts};
    /// let d = Decision::from_facts(Facts { tool: "search".into(), tool_allowed: true, arguments_valid: true, ..Facts::default() });
    /// let line = d.to_json();
    /// assert!(line.starts_with(r#"{"tool":"search","argumentsValid":true"#), "{line}");
    /// assert!(line.ends_with(r#""decision":"allow","reason":"ok"}"#), "{line}");
    /// assert!(validate_record(line.as_bytes()).is_ok()); // it satisfies DECISION_SCHEMA
    /// ```
    pub fn to_json(&self) -> String {
        let f = &self.facts;
        let mut out = String::new();
        let mut o = ObjectWriter::new(&mut out);
        o.str("tool", &f.tool)
            .bool("argumentsValid", f.arguments_valid)
            .bool("toolAllowed", f.tool_allowed);
        for (name, xs) in [("grant", &f.grant), ("required", &f.required)] {
            let mut a = o.array(name);
            for x in xs {
                a.str(x);
            }
        }
        if let Some(e) = f
            .arguments_error
            .as_ref()
            .filter(|_| self.reason == Reason::ArgumentsInvalid)
        {
            o.object("invalid")
                .str("pointer", &e.pointer)
                .str("keyword", &e.keyword)
                .str("expected", &e.expected);
        }
        if let Some(r) = f.rule_failures.first().filter(|r| r.reason == self.reason) {
            o.object("failed")
                .str("rule", r.rule)
                .str("pointer", &r.pointer);
        }
        if let Some(u) = f
            .untrusted
            .as_ref()
            .filter(|_| self.reason == Reason::UntrustedOrigin)
        {
            u.write(&mut o.object("origin"));
        }
        if let Some(e) = &f.state_error {
            o.str("stateError", e);
        }
        o.str("decision", self.verdict.as_str())
            .str("reason", self.reason.as_str());
        o.finish();
        out
    }
}

/// A decision record received from elsewhere: what it claims, not a [`Decision`].
///
/// # Example
/// ```
/// use jsongate::action::{Claim, Reason, Verdict};
/// let claim = Claim::parse(br#"{"tool":"send","argumentsValid":true,"toolAllowed":true,
///     "grant":["mail"],"required":["mail"],"decision":"allow","reason":"ok"}"#)?;
/// assert_eq!((claim.tool.as_str(), claim.verdict, claim.reason), ("send", Verdict::Allow, Reason::Ok));
/// assert_eq!(claim.grant, ["mail"]);
/// # Ok::<(), jsongate::action::ClaimError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Claim {
    /// The tool.
    pub tool: String,
    /// Claimed `argumentsValid`.
    pub arguments_valid: bool,
    /// Claimed `toolAllowed`.
    pub tool_allowed: bool,
    /// Claimed grants.
    pub grant: Vec<String>,
    /// Claimed required capabilities.
    pub required: Vec<String>,
    /// Claimed verdict.
    pub verdict: Verdict,
    /// Claimed reason.
    pub reason: Reason,
}

/// A received record that is not a decision record at all.
///
/// # Example
/// ```
/// use jsongate::action::{Claim, ClaimErrorKind};
/// let err = Claim::parse(br#"{"tool":"send"}"#).unwrap_err();
/// assert_eq!(err.kind(), ClaimErrorKind::Schema);
/// assert!(err.message().starts_with("decision record does not satisfy the decision schema"), "{err}");
/// assert_eq!(err.to_string(), err.message());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimError(Box<(ClaimErrorKind, String)>);

kind_message_error!(ClaimError, ClaimErrorKind);

/// Why a received record is not a decision record, as a [`ClaimError`] says.
///
/// # Example
/// ```
/// use jsongate::action::{Claim, ClaimErrorKind};
/// assert_eq!(Claim::parse(b"not json").unwrap_err().kind(), ClaimErrorKind::Syntax);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClaimErrorKind {
    /// Not one strict JSON document within the record's limits.
    Syntax,
    /// JSON that does not satisfy [`DECISION_SCHEMA`].
    Schema,
}

impl ClaimError {
    /// The configuration loader's error about a record, with its message.
    fn of(e: &ConfigError) -> ClaimError {
        let kind = match e.kind() {
            ConfigErrorKind::Syntax | ConfigErrorKind::Read => ClaimErrorKind::Syntax,
            _ => ClaimErrorKind::Schema,
        };
        ClaimError::new(kind, e.to_string())
    }
}

static DECISION: Shipped = Shipped::new("decision record", "the decision schema", DECISION_SCHEMA);

/// Checks `record` against [`DECISION_SCHEMA`].
///
/// # Errors
/// A message saying why it is not a decision record.
///
/// # Example
/// ```
/// use jsongate::action::validate_record;
/// let ok = br#"{"tool":"t","argumentsValid":false,"toolAllowed":true,"grant":[],"required":[],"decision":"deny","reason":"arguments_invalid"}"#;
/// assert!(validate_record(ok).is_ok());
/// assert!(validate_record(br#"{"tool":"t","decision":"allow"}"#).is_err());
/// assert!(validate_record(b"not json").is_err());
/// ```
pub fn validate_record(record: &[u8]) -> Result<(), ClaimError> {
    config::check(record, &DECISION).map_err(|e| ClaimError::of(&e))
}

impl Claim {
    /// Reads a received record; it must satisfy [`DECISION_SCHEMA`] (so even a claim is
    /// internally consistent about `allow` ⇒ `ok`).
    ///
    /// # Errors
    /// The bytes are not a decision record.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Claim, Verdict};
    /// let claim = Claim::parse(br#"{"tool":"t","argumentsValid":true,"toolAllowed":true,"grant":[],"required":[],"decision":"ask","reason":"needs_approval"}"#)?;
    /// assert_eq!(claim.verdict, Verdict::Ask);
    /// // A record that allows for a reason other than `ok` is not a decision record.
    /// assert!(Claim::parse(br#"{"tool":"t","argumentsValid":true,"toolAllowed":true,"grant":[],"required":[],"decision":"allow","reason":"rate_limited"}"#).is_err());
    /// # Ok::<(), jsongate::action::ClaimError>(())
    /// ```
    pub fn parse(record: &[u8]) -> Result<Claim, ClaimError> {
        let v = config::load(record, &DECISION).map_err(|e| ClaimError::of(&e))?;
        let s = |k| v.get(k).and_then(Value::as_str).unwrap_or_default();
        let b = |k| v.get(k).and_then(Value::as_bool).unwrap_or(false);
        let list = |k| -> Vec<String> {
            v.get(k)
                .and_then(Value::as_array)
                .unwrap_or(&[])
                .iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        };
        Ok(Claim {
            tool: s("tool").to_owned(),
            arguments_valid: b("argumentsValid"),
            tool_allowed: b("toolAllowed"),
            grant: list("grant"),
            required: list("required"),
            verdict: Verdict::parse(s("decision")).unwrap_or(Verdict::Deny),
            reason: Reason::parse(s("reason")).unwrap_or(Reason::ArgumentsInvalid),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_compiles_and_records_satisfy_it() {
        let _ = DECISION.schema();
        let d = Decision::from_facts(Facts {
            tool: "t".into(),
            tool_allowed: true,
            arguments_valid: true,
            grant: vec!["a".into(), "a".into()],
            required: vec!["a".into()],
            ..Facts::default()
        });
        assert_eq!(d.verdict(), Verdict::Allow);
        validate_record(d.to_json().as_bytes()).unwrap();
        assert_eq!(Claim::parse(d.to_json().as_bytes()).unwrap().grant, ["a"]);
    }

    #[test]
    fn schema_refuses_inconsistent_records() {
        let bad = br#"{"tool":"t","argumentsValid":false,"toolAllowed":true,"grant":[],
            "required":[],"decision":"allow","reason":"ok"}"#;
        assert!(Claim::parse(bad).is_err());
        let bad = br#"{"tool":"t","argumentsValid":true,"toolAllowed":true,"grant":[],
            "required":[],"decision":"deny","reason":"ok"}"#;
        assert!(Claim::parse(bad).is_err());
        let bad = br#"{"tool":"t","argumentsValid":true,"toolAllowed":true,"grant":[],
            "required":[],"decision":"allow","reason":"ok","extra":1}"#;
        assert!(Claim::parse(bad).is_err());
    }

    #[test]
    fn a_carried_failure_is_kept_unless_an_earlier_check_fails() {
        let facts = Facts {
            tool: "t".into(),
            tool_allowed: true,
            arguments_valid: true,
            carried: Some(Reason::PathEscape),
            ..Facts::default()
        };
        let d = Decision::from_facts(facts.clone());
        assert_eq!(
            (d.verdict(), d.reason()),
            (Verdict::Deny, Reason::PathEscape)
        );
        // An earlier failure replaces it; a later one does not.
        let earlier = Facts {
            arguments_valid: false,
            ..facts.clone()
        };
        assert_eq!(
            Decision::from_facts(earlier).reason(),
            Reason::ArgumentsInvalid
        );
        let later = Facts {
            required: vec!["x".into()],
            rate_limited: true,
            ..facts.clone()
        };
        assert_eq!(Decision::from_facts(later).reason(), Reason::PathEscape);
        let nothing = Facts {
            carried: Some(Reason::Ok),
            ..facts
        };
        assert_eq!(Decision::from_facts(nothing).verdict(), Verdict::Allow);
    }

    #[test]
    fn reasons_round_trip() {
        for r in Reason::ALL {
            assert_eq!(Reason::parse(r.as_str()), Some(r));
            assert!(DECISION_SCHEMA.contains(&format!("\"{r}\"")));
        }
    }
}
