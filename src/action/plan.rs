//! Task plans: the tools one task is expected to call, optionally in order and with counts.
//!
//! A plan is checked against [`PLAN_SCHEMA`] and against the policy it runs under (every
//! step must name an allowlisted tool, once). [`Policy::decide`](super::Policy::decide)
//! consults the session's plan after every other check: a call to a tool the plan does not
//! name, past its step's `max_calls`, or (in an ordered plan) to a step before one already
//! taken is `ask` with reason `outside_plan`. A plan never turns a denial into anything
//! else and never allows by itself.
//!
//! Counts and order live in the state store under `plan:TASK:…`, so replicas and successive
//! `decide` runs that share a store and a task id share them. A call's count is taken before
//! its order is checked; the two are separate atomic steps, and a race between them can only
//! make a later call outside the plan, never admit one.

use std::fmt;
use std::path::Path;

use super::policy::Policy;

use crate::config::{self, Shipped};
use crate::json::{ConfigError, Value};
use crate::state::{StateError, Store};

/// The JSON Schema of plan files (format 1).
///
/// # Example
/// ```
/// use jsongate::action::{Plan, Policy, PLAN_SCHEMA};
/// use jsongate::{Limits, Schema, Validator};
/// assert!(PLAN_SCHEMA.contains(r#""$id": "urn:jsongate:plan:1""#));
/// let schema = Schema::compile(PLAN_SCHEMA.as_bytes())?;
/// let plan = br#"{"plan":1,"task":"triage-7","steps":[{"tool":"read"}]}"#;
/// assert!(Validator::new(&schema).validate_slice(plan, Limits::new()).is_ok());
/// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]}}}"#)?;
/// assert!(Plan::from_slice(plan, &policy).is_ok());
/// assert!(Plan::from_slice(br#"{"plan":1,"task":"t","steps":[]}"#, &policy).is_err()); // minItems 1
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const PLAN_SCHEMA: &str = include_str!("plan.schema.json");

/// Default time a task's counts and order are kept: one day.
///
/// # Example
/// ```
/// use jsongate::action::{Call, Grants, Plan, Policy, RateState, Reason, DEFAULT_PLAN_TTL_MS};
/// assert_eq!(DEFAULT_PLAN_TTL_MS, 24 * 60 * 60 * 1000);
/// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]}}}"#)?;
/// // No `ttl_seconds`: the task's count is kept for a day, then forgotten.
/// let plan = Plan::from_slice(br#"{"plan":1,"task":"t1","steps":[{"tool":"read","max_calls":1}]}"#, &policy)?;
/// let (g, rate) = (Grants::new(Vec::<String>::new()).plan(plan), RateState::new());
/// let call = Call::parse(br#"{"tool":"read"}"#, policy.limits())?;
/// assert_eq!(policy.decide(&call, &g, &rate, 0).reason(), Reason::Ok);
/// assert_eq!(policy.decide(&call, &g, &rate, 1).reason(), Reason::OutsidePlan);
/// assert_eq!(policy.decide(&call, &g, &rate, DEFAULT_PLAN_TTL_MS + 1).reason(), Reason::Ok);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub const DEFAULT_PLAN_TTL_MS: u64 = 86_400_000;

/// One step of a plan.
///
/// # Example
/// ```
/// use jsongate::action::{Plan, PlanStep, Policy};
/// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]},"send":{"arguments":true,"requires":[]}}}"#)?;
/// let plan = Plan::from_slice(br#"{"plan":1,"task":"t","steps":[{"tool":"read"},{"tool":"send","max_calls":1}]}"#, &policy)?;
/// assert_eq!(plan.steps()[0], PlanStep { tool: "read".into(), max_calls: None });
/// assert_eq!(plan.steps()[1].max_calls, Some(1));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanStep {
    /// The tool.
    pub tool: String,
    /// Calls of this step within the task (`None`: any number).
    pub max_calls: Option<u64>,
}

/// A compiled plan.
///
/// # Example
/// ```
/// use jsongate::action::{Call, Grants, Plan, Policy, RateState, Reason};
/// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]},"send":{"arguments":true,"requires":[]}}}"#)?;
/// // Ordered: once `send` is called, `read` is outside the plan.
/// let plan = Plan::from_slice(br#"{"plan":1,"task":"t","ordered":true,"steps":[{"tool":"read"},{"tool":"send"}]}"#, &policy)?;
/// let (g, rate) = (Grants::new(Vec::<String>::new()).plan(plan), RateState::new());
/// let call = |t: &str| Call::parse(format!(r#"{{"tool":"{t}"}}"#).as_bytes(), policy.limits());
/// assert_eq!(policy.decide(&call("read")?, &g, &rate, 0).reason(), Reason::Ok);
/// assert_eq!(policy.decide(&call("send")?, &g, &rate, 0).reason(), Reason::Ok);
/// assert_eq!(policy.decide(&call("read")?, &g, &rate, 0).reason(), Reason::OutsidePlan);
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    task: String,
    ordered: bool,
    ttl_ms: u64,
    steps: Vec<PlanStep>,
}

static PLAN: Shipped = Shipped::new("plan", "the plan schema", PLAN_SCHEMA);

fn err(msg: impl Into<String>) -> ConfigError {
    ConfigError::invalid(msg)
}

impl Plan {
    /// Reads a plan and checks it against `policy`.
    ///
    /// # Errors
    /// As [`from_slice`](Self::from_slice), or the file cannot be read.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Plan, Policy};
    /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]}}}"#)?;
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("plan.json");
    /// std::fs::write(&path, br#"{"plan":1,"task":"t1","steps":[{"tool":"read"}]}"#).unwrap();
    /// assert_eq!(Plan::from_file(&path, &policy)?.task(), "t1");
    /// assert!(Plan::from_file(&dir.path().join("missing.json"), &policy).is_err());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn from_file(path: &Path, policy: &Policy) -> Result<Plan, ConfigError> {
        let bytes = PLAN
            .read(path)
            .map_err(|e| ConfigError::read(format_args!("plan '{}'", path.display()), &e))?;
        Plan::from_slice(&bytes, policy)
    }

    /// Reads a plan ([`PLAN_SCHEMA`]) and checks it against `policy`.
    ///
    /// # Errors
    /// Not JSON, not a plan, a step naming a tool the policy does not allowlist, or a tool
    /// named by two steps.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Call, Plan, Policy, RateState, Reason, Grants};
    /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{
    ///     "read":{"arguments":true,"requires":[]},"send":{"arguments":true,"requires":[]}}}"#).unwrap();
    /// let plan = Plan::from_slice(br#"{"plan":1,"task":"t1","steps":[{"tool":"read","max_calls":1}]}"#,
    ///     &policy).unwrap();
    /// let s = Grants::new(Vec::<String>::new()).plan(plan);
    /// let call = |t: &str| Call { tool: t.into(), arguments: jsongate::json::Value::Object(vec![]) };
    /// let rate = RateState::new();
    /// assert_eq!(policy.decide(&call("read"), &s, &rate, 0).reason(), Reason::Ok);
    /// assert_eq!(policy.decide(&call("read"), &s, &rate, 0).reason(), Reason::OutsidePlan);
    /// assert_eq!(policy.decide(&call("send"), &s, &rate, 0).reason(), Reason::OutsidePlan);
    /// ```
    pub fn from_slice(bytes: &[u8], policy: &Policy) -> Result<Plan, ConfigError> {
        let doc = config::load(bytes, &PLAN)?;
        let mut steps: Vec<PlanStep> = Vec::new();
        for (i, s) in config::items(&doc, "steps") {
            let at = |member: &str| config::pointer(&["steps", &i, member]);
            let tool = s.get("tool").and_then(Value::as_str).unwrap_or_default();
            if policy.tool(tool).is_none() {
                return Err(err(format!(
                    "plan names tool '{tool}', which the policy does not allowlist"
                ))
                .at(at("tool")));
            }
            if steps.iter().any(|p| p.tool == tool) {
                return Err(err(format!("plan names tool '{tool}' in two steps")).at(at("tool")));
            }
            let max_calls = match s.get("max_calls") {
                None => None,
                Some(n) => Some(
                    n.as_u64()
                        .ok_or_else(|| err("plan: max_calls too large").at(at("max_calls")))?,
                ),
            };
            steps.push(PlanStep {
                tool: tool.to_owned(),
                max_calls,
            });
        }
        let ttl_ms = match doc.get("ttl_seconds") {
            None => DEFAULT_PLAN_TTL_MS,
            Some(n) => n
                .as_u64()
                .ok_or_else(|| err("plan: ttl_seconds too large").at("/ttl_seconds"))?
                .saturating_mul(1000),
        };
        Ok(Plan {
            task: doc
                .get("task")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            ordered: doc.get("ordered").and_then(Value::as_bool).unwrap_or(false),
            ttl_ms,
            steps,
        })
    }

    /// The task id.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Plan, Policy};
    /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"read":{"arguments":true,"requires":[]}}}"#)?;
    /// let plan = Plan::from_slice(br#"{"plan":1,"task":"triage-42","steps":[{"tool":"read"}]}"#, &policy)?;
    /// assert_eq!(plan.task(), "triage-42");
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn task(&self) -> &str {
        &self.task
    }

    /// The steps, in order.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Plan, Policy};
    /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"a":{"arguments":true,"requires":[]},"b":{"arguments":true,"requires":[]}}}"#)?;
    /// let plan = Plan::from_slice(br#"{"plan":1,"task":"t","steps":[{"tool":"b"},{"tool":"a"}]}"#, &policy)?;
    /// assert_eq!(plan.steps().iter().map(|s| s.tool.as_str()).collect::<Vec<_>>(), ["b", "a"]);
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn steps(&self) -> &[PlanStep] {
        &self.steps
    }

    /// Whether steps are taken in order.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Plan, Policy};
    /// let policy = Policy::from_slice(br#"{"policy":1,"tools":{"a":{"arguments":true,"requires":[]}}}"#)?;
    /// let plan = |o: &str| Plan::from_slice(format!(r#"{{"plan":1,"task":"t",{o}"steps":[{{"tool":"a"}}]}}"#).as_bytes(), &policy);
    /// assert!(!plan("")?.ordered()); // unordered unless the plan says so
    /// assert!(plan(r#""ordered":true,"#)?.ordered());
    /// # Ok::<(), jsongate::json::ConfigError>(())
    /// ```
    pub fn ordered(&self) -> bool {
        self.ordered
    }

    /// Whether a call to `tool` is inside the plan at `now_ms`; takes its count (and moves
    /// the order) when it is.
    ///
    /// # Errors
    /// The store failed.
    pub(crate) fn admit(
        &self,
        store: &dyn Store,
        tool: &str,
        now_ms: u64,
    ) -> Result<bool, StateError> {
        let Some(i) = self.steps.iter().position(|s| s.tool == tool) else {
            return Ok(false);
        };
        if let Some(max) = self.steps[i].max_calls {
            let key = format!("plan:{}:count:{tool}", self.task);
            if !store.window_take(&key, max, self.ttl_ms, now_ms)?.admitted {
                return Ok(false);
            }
        }
        if self.ordered {
            let key = format!("plan:{}:cursor", self.task);
            return store.advance(&key, i as u64, self.ttl_ms, now_ms);
        }
        Ok(true)
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan '{}' ({} steps)", self.task, self.steps.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::MemoryStore;

    fn policy() -> Policy {
        Policy::from_slice(
            br#"{"policy":1,"tools":{"a":{"arguments":true,"requires":[]},
                "b":{"arguments":true,"requires":[]},"c":{"arguments":true,"requires":[]}}}"#,
        )
        .unwrap()
    }

    #[test]
    fn plan_schema_compiles_and_bad_plans_are_refused() {
        let _ = PLAN.schema();
        let p = policy();
        for (bad, says) in [
            (
                &br#"{"plan":1,"task":"t","steps":[{"tool":"zz"}]}"#[..],
                "does not allowlist",
            ),
            (
                &br#"{"plan":1,"task":"t","steps":[{"tool":"a"},{"tool":"a"}]}"#[..],
                "two steps",
            ),
            (&br#"{"plan":1,"task":"t","steps":[]}"#[..], "plan schema"),
            (
                &br#"{"plan":2,"task":"t","steps":[{"tool":"a"}]}"#[..],
                "plan schema",
            ),
            (
                &br#"{"plan":1,"task":"t","steps":[{"tool":"a","x":1}]}"#[..],
                "plan schema",
            ),
            (&br#"{"plan":1,"task":"t","#[..], "not valid JSON"),
        ] {
            let e = Plan::from_slice(bad, &p).unwrap_err();
            assert!(e.message().contains(says), "{e}");
        }
    }

    #[test]
    fn plan_errors_name_the_step_member() {
        let p =
            Policy::from_slice(br#"{"policy":1,"tools":{"a":{"arguments":true,"requires":[]}}}"#)
                .unwrap();
        let twice = br#"{"plan":1,"task":"t","steps":[{"tool":"a"},{"tool":"a"}]}"#;
        let e = Plan::from_slice(twice, &p).unwrap_err();
        assert_eq!(e.kind(), crate::json::ConfigErrorKind::Invalid);
        assert_eq!(e.pointer(), "/steps/1/tool");
        assert_eq!(e.to_string(), "plan names tool 'a' in two steps");
        let unknown = br#"{"plan":1,"task":"t","steps":[{"tool":"b"}]}"#;
        assert_eq!(
            Plan::from_slice(unknown, &p).unwrap_err().pointer(),
            "/steps/0/tool"
        );
        let extra = br#"{"plan":1,"task":"t","steps":[{"tool":"a","x":1}]}"#;
        let e = Plan::from_slice(extra, &p).unwrap_err();
        assert_eq!(e.kind(), crate::json::ConfigErrorKind::Schema);
        assert_eq!(e.pointer(), "/steps/0/x");
    }

    #[test]
    fn ordered_plans_refuse_earlier_steps_and_counts_run_out() {
        let p = Plan::from_slice(
            br#"{"plan":1,"task":"t","ordered":true,
                "steps":[{"tool":"a"},{"tool":"b","max_calls":2},{"tool":"c"}]}"#,
            &policy(),
        )
        .unwrap();
        let s = MemoryStore::new();
        let ok = |t| p.admit(&s, t, 0).unwrap();
        assert!(ok("a"));
        assert!(ok("a"));
        assert!(ok("b"));
        assert!(!ok("a"), "a step before the one taken");
        assert!(ok("b"));
        assert!(!ok("b"), "past max_calls");
        assert!(ok("c"));
        assert!(!ok("b"));
        assert!(!ok("zz"));
    }
}
