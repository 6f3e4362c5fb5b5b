//! Retry decisions: a pure function of the contract's policy, the failure, the attempts so
//! far and the time spent. No clock, no sleeping, no I/O: the caller does those.
//!
//! A retry is a new upstream call whose response goes through the whole gate again; nothing
//! of a rejected response is carried over.

use std::time::Duration;

use super::envelope::FailureCode;

/// A contract's retry policy.
///
/// # Example
/// ```
/// use jsongate::gate::{Context, Contract, FailureCode, Gate, Request};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "retry":{"max_attempts":3,"budget_ms":5000,"backoff_ms":100,"retry_on":["UPSTREAM_UNAVAILABLE"]},
///   "upstream":[{"version":"v1","schema":{}}],"fields":{}}"#, std::path::Path::new("."))?;
/// let gate = Gate::new(&contract)?;
/// let req = Request::new("r-1", Context::new());
/// let d = gate.transport_failure(FailureCode::UpstreamUnavailable, &req).unwrap();
/// assert!(d.output.ends_with(r#""retryable":true}}"#)); // the policy allows another attempt
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Total attempts allowed, the first included (1 means never retry).
    pub max_attempts: u32,
    /// Time budget for all attempts together.
    pub budget: Duration,
    /// Delay before the second attempt; doubled for each later one.
    pub backoff: Duration,
    /// Codes worth retrying (only transient codes are ever retried, whatever this says).
    pub retry_on: Vec<FailureCode>,
}

impl Default for RetryPolicy {
    /// One attempt: no retries.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 1,
            budget: Duration::ZERO,
            backoff: Duration::ZERO,
            retry_on: Vec::new(),
        }
    }
}

impl RetryPolicy {
    /// Whether a failure with `code` may be retried at all under this policy (what the
    /// envelope's `retryable` says).
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::gate::{FailureCode, RetryPolicy};
    /// let p = RetryPolicy {
    ///     max_attempts: 3,
    ///     budget: Duration::from_secs(5),
    ///     backoff: Duration::from_millis(100),
    ///     retry_on: vec![FailureCode::RateLimited, FailureCode::InvalidResponse],
    /// };
    /// assert!(p.retryable(FailureCode::RateLimited));
    /// assert!(!p.retryable(FailureCode::InvalidResponse)); // never: not transient
    /// assert!(!RetryPolicy::default().retryable(FailureCode::RateLimited)); // one attempt only
    /// ```
    pub fn retryable(&self, code: FailureCode) -> bool {
        self.max_attempts > 1 && code.transient() && self.retry_on.contains(&code)
    }
}

/// What to do after a failed attempt.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::gate::{decide_retry, FailureCode, RetryDecision, RetryPolicy, StopReason};
/// let p = RetryPolicy { max_attempts: 2, budget: Duration::from_secs(1), backoff: Duration::from_millis(50),
///     retry_on: vec![FailureCode::UpstreamUnavailable] };
/// assert_eq!(decide_retry(&p, FailureCode::UpstreamUnavailable, 1, Duration::ZERO),
///     RetryDecision::Retry { after: Duration::from_millis(50) });
/// assert_eq!(decide_retry(&p, FailureCode::UpstreamUnavailable, 2, Duration::ZERO),
///     RetryDecision::Stop(StopReason::AttemptsExhausted));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Call the upstream again after this delay, and gate the new response from scratch.
    Retry {
        /// Wait this long first.
        after: Duration,
    },
    /// Do not retry.
    Stop(StopReason),
}

/// Why no retry.
///
/// # Example
/// ```
/// use jsongate::gate::{decide_retry, FailureCode, RetryDecision, RetryPolicy, StopReason};
/// let d = decide_retry(&RetryPolicy::default(), FailureCode::Mismatch, 1, std::time::Duration::ZERO);
/// assert_eq!(d, RetryDecision::Stop(StopReason::Alert));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// The response broke the contract (`INVALID_RESPONSE`, `MISMATCH`): an operator must
    /// look; retrying would only hide it.
    Alert,
    /// The upstream refused the authorisation (`UNAUTHORIZED`): the same call would be
    /// refused again; a new authorisation decision (a grant, a token, an approval) must come
    /// first.
    Reauthorize,
    /// The code is not one the policy retries (`NOT_FOUND`, or not listed).
    NotRetryable,
    /// The attempts are used up.
    AttemptsExhausted,
    /// The next attempt would start after the time budget.
    BudgetExhausted,
}

impl StopReason {
    /// `"alert"`, `"reauthorize"`, `"not_retryable"`, `"attempts_exhausted"` or
    /// `"budget_exhausted"`.
    ///
    /// # Example
    /// ```
    /// use jsongate::gate::StopReason;
    /// assert_eq!(StopReason::BudgetExhausted.as_str(), "budget_exhausted");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            StopReason::Alert => "alert",
            StopReason::Reauthorize => "reauthorize",
            StopReason::NotRetryable => "not_retryable",
            StopReason::AttemptsExhausted => "attempts_exhausted",
            StopReason::BudgetExhausted => "budget_exhausted",
        }
    }
}

/// Decides whether to retry after attempt number `attempts` (1-based: 1 after the first
/// call) failed with `code`, `elapsed` after the first call started.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::gate::{decide_retry, FailureCode, RetryDecision, RetryPolicy, StopReason};
/// let p = RetryPolicy { max_attempts: 3, budget: Duration::from_secs(5),
///     backoff: Duration::from_millis(200), retry_on: vec![FailureCode::UpstreamUnavailable] };
/// let s = Duration::from_secs(1);
/// assert_eq!(decide_retry(&p, FailureCode::UpstreamUnavailable, 2, s),
///            RetryDecision::Retry { after: Duration::from_millis(400) });
/// assert_eq!(decide_retry(&p, FailureCode::UpstreamUnavailable, 3, s),
///            RetryDecision::Stop(StopReason::AttemptsExhausted));
/// assert_eq!(decide_retry(&p, FailureCode::InvalidResponse, 1, s),
///            RetryDecision::Stop(StopReason::Alert));
/// assert_eq!(decide_retry(&p, FailureCode::Unauthorized, 1, s),
///            RetryDecision::Stop(StopReason::Reauthorize));
/// ```
pub fn decide_retry(
    policy: &RetryPolicy,
    code: FailureCode,
    attempts: u32,
    elapsed: Duration,
) -> RetryDecision {
    if matches!(code, FailureCode::InvalidResponse | FailureCode::Mismatch) {
        return RetryDecision::Stop(StopReason::Alert);
    }
    if code == FailureCode::Unauthorized {
        return RetryDecision::Stop(StopReason::Reauthorize);
    }
    if !code.transient() || !policy.retry_on.contains(&code) {
        return RetryDecision::Stop(StopReason::NotRetryable);
    }
    if attempts >= policy.max_attempts {
        return RetryDecision::Stop(StopReason::AttemptsExhausted);
    }
    let shift = attempts.saturating_sub(1).min(31);
    let after = policy.backoff.saturating_mul(1u32 << shift);
    if elapsed.saturating_add(after) >= policy.budget {
        return RetryDecision::Stop(StopReason::BudgetExhausted);
    }
    RetryDecision::Retry { after }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            budget: Duration::from_secs(2),
            backoff: Duration::from_millis(100),
            retry_on: vec![FailureCode::UpstreamUnavailable, FailureCode::Stale],
        }
    }

    #[test]
    fn backoff_doubles_until_attempts_or_budget_run_out() {
        let p = policy();
        let z = Duration::ZERO;
        let ms = Duration::from_millis;
        let code = FailureCode::UpstreamUnavailable;
        assert_eq!(
            decide_retry(&p, code, 1, z),
            RetryDecision::Retry { after: ms(100) }
        );
        assert_eq!(
            decide_retry(&p, code, 3, z),
            RetryDecision::Retry { after: ms(400) }
        );
        assert_eq!(
            decide_retry(&p, code, 4, z),
            RetryDecision::Stop(StopReason::AttemptsExhausted)
        );
        assert_eq!(
            decide_retry(&p, code, 1, ms(1900)),
            RetryDecision::Stop(StopReason::BudgetExhausted)
        );
    }

    #[test]
    fn only_listed_transient_codes_retry() {
        let p = policy();
        let z = Duration::ZERO;
        assert_eq!(
            decide_retry(&p, FailureCode::RateLimited, 1, z),
            RetryDecision::Stop(StopReason::NotRetryable)
        );
        assert_eq!(
            decide_retry(&p, FailureCode::NotFound, 1, z),
            RetryDecision::Stop(StopReason::NotRetryable)
        );
        assert_eq!(
            decide_retry(&p, FailureCode::Mismatch, 1, z),
            RetryDecision::Stop(StopReason::Alert)
        );
        assert!(p.retryable(FailureCode::Stale));
        assert!(!p.retryable(FailureCode::InvalidResponse));
        assert!(!RetryPolicy::default().retryable(FailureCode::UpstreamUnavailable));
    }
}
