//! The action boundary: decisions on tool calls a model proposes (`allow`, `deny`, `ask`)
//! and screening of untrusted free text before a model reads it.
//!
//! A call passes, in order: the tool is on the policy's allowlist, its arguments are an
//! object, satisfy the tool's JSON Schema (the crate's [`Validator`](crate::Validator), the
//! policy's limits) and name only declared arguments (as `unevaluatedProperties` sees them),
//! the semantic [`Rule`]s hold (path containment in POSIX and Windows readings, https host
//! allowlist, length caps, forbidden substrings, values bound to the session's [`CallerContext`]),
//! the session's grants include every capability the tool requires, and the tool's rate
//! limit admits it (counted in a shared [`state`](crate::state) store). A call whose sink
//! argument carries a value that first reached the agent in untrusted output
//! ([`Provenance`]: `untrusted_origin`), a call outside the session's [`Plan`]
//! (`outside_plan`), or to a tool marked `ask`, then asks a person; an
//! [`Approval`] bound to the exact tool and arguments, taken once, turns that into `allow`,
//! and anything else (refused, timed out, other arguments) into `deny` (`not_approved`). The [`Decision`] type makes `allow` unconstructible unless all of
//! that holds; [`Policy::recheck`] of a received record never turns its failure into
//! `allow`.
//!
//! This module depends on the scanner, schema, validator, select and screen layers only; nothing
//! below it depends on it.
//!
//! # Example
//! ```
//! use jsongate::action::{Call, Policy, RateState, Reason, Grants, Verdict};
//! use jsongate::Limits;
//! let policy = Policy::from_slice(br#"{"policy":1,"tools":{"send_email":{
//!     "arguments":{"type":"object","additionalProperties":false,
//!                  "properties":{"to":{"type":"string"},"body":{"type":"string"}}},
//!     "requires":["send_email"]}}}"#).unwrap();
//! let call = Call::parse(br#"{"tool":"send_email","arguments":{"to":"a@b.c","body":"hi"}}"#,
//!     Limits::new()).unwrap();
//! let d = policy.decide(&call, &Grants::new(["read_inbox"]), &RateState::new(), 0);
//! assert_eq!((d.verdict(), d.reason()), (Verdict::Deny, Reason::GrantMissing));
//! assert_eq!(d.to_json(), r#"{"tool":"send_email","argumentsValid":true,"toolAllowed":true,"grant":["read_inbox"],"required":["send_email"],"decision":"deny","reason":"grant_missing"}"#);
//! ```

mod approval;
mod decision;
mod intent;
mod plan;
mod policy;
mod provenance;
mod rules;
mod show;

pub use approval::{
    arguments_digest, Approval, ApprovalOutcome, APPROVAL_POLL, MAX_KEPT_ARGUMENTS,
};
pub use decision::{
    validate_record, ArgumentsError, Claim, ClaimError, ClaimErrorKind, Decision, Facts, Reason,
    Verdict, DECISION_SCHEMA, MAX_EXPECTED_CHARS,
};
pub use intent::{Intent, MAX_INTENT_BYTES};
pub use plan::{Plan, PlanStep, DEFAULT_PLAN_TTL_MS, PLAN_SCHEMA};
pub use policy::{
    Call, Grants, PastLimit, Policy, RateLimit, RateState, ToolPolicy, POLICY_SCHEMA,
};
pub use provenance::{
    provenance_records, value_digest, values_of, Origin, Provenance, Untrusted, ValueDigest,
    ValueKind, MAX_TRACKED_VALUES,
};
pub use rules::{path_contained, url_allowed, CallerContext, Rule, RuleFailure};
pub use show::{show_arguments, sinks, ShowLimits};
