//! Approvals: how an `ask` reaches a person and comes back as `allow` or `deny`.
//!
//! [`Approval::request`] stores a pending record `approval:ID` in the state store (tool,
//! SHA-256 of the arguments, reason) under a fresh random id; an operator grants or refuses
//! it with [`Approval::answer`] (`jsongate approve ID [--deny]`), which takes the pending
//! record (so an id is answered once) and stores the answer under `answer:ID`. The call's
//! compact arguments are kept beside it (`approval-arguments:ID`, up to
//! [`MAX_KEPT_ARGUMENTS`]) so that the person can see what they approve
//! ([`Approval::pending`], `jsongate approve --show ID`), checked against the digest.
//! [`Approval::wait`] takes that answer (single use) within a bounded time. An answer counts
//! only for the exact tool and arguments digest that were asked about: an answer for other
//! arguments, a refusal or no answer in time is [`Reason::NotApproved`](super::Reason),
//! a denial, and [`Decision::approved`](super::Decision::approved) turns only an `ask` into
//! `allow`.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::policy::Call;
use crate::json::{ObjectWriter, Value};
use crate::state::{StateError, StateErrorKind, Store};
use crate::Limits;

/// How often [`Approval::wait`] looks for an answer.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::action::{Approval, ApprovalOutcome, Call, APPROVAL_POLL};
/// use jsongate::state::MemoryStore;
/// assert_eq!(APPROVAL_POLL, Duration::from_millis(50));
/// // `wait` looks for an answer every APPROVAL_POLL; with no time to wait it looks once.
/// let store = MemoryStore::new();
/// let call = Call::parse(br#"{"tool":"send_mail","arguments":{"to":"a@example.com"}}"#, jsongate::Limits::new())?;
/// let a = Approval::request(&store, &call, 60_000, 0)?;
/// assert_eq!(a.wait(&store, Duration::ZERO, || 0)?, ApprovalOutcome::TimedOut);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub const APPROVAL_POLL: Duration = Duration::from_millis(50);

/// Most bytes of a call's compact arguments an approval keeps beside its record, for the
/// person answering (`jsongate approve --show`); larger arguments are not kept.
///
/// # Example
/// ```
/// assert_eq!(jsongate::action::MAX_KEPT_ARGUMENTS, 32 * 1024);
/// ```
pub const MAX_KEPT_ARGUMENTS: usize = 32 * 1024;

/// The SHA-256 (hex) of a call's tool and compact arguments: what an approval is bound to.
///
/// # Example
/// ```
/// use jsongate::action::{arguments_digest, Call};
/// use jsongate::Limits;
/// let a = Call::parse(br#"{"tool":"send","arguments":{"to":"a"}}"#, Limits::new())?;
/// let same = Call::parse(br#"{"tool":"send","arguments":{ "to" : "a" }}"#, Limits::new())?;
/// let other = Call::parse(br#"{"tool":"send","arguments":{"to":"b"}}"#, Limits::new())?;
/// assert_eq!(arguments_digest(&a).len(), 64);
/// assert_eq!(arguments_digest(&a), arguments_digest(&same)); // compact arguments: spacing does not count
/// assert_ne!(arguments_digest(&a), arguments_digest(&other));
/// # Ok::<(), jsongate::json::ConfigError>(())
/// ```
pub fn arguments_digest(call: &Call) -> String {
    let mut h = Sha256::new();
    h.update(call.tool.as_bytes());
    h.update([0]);
    h.update(call.arguments.to_json().as_bytes());
    h.finalize().iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// One approval asked for.
///
/// # Example
/// ```
/// use jsongate::action::{arguments_digest, Approval, Call};
/// use jsongate::state::MemoryStore;
/// let store = MemoryStore::new();
/// let call = Call::parse(br#"{"tool":"delete_repo","arguments":{"name":"demo"}}"#, jsongate::Limits::new())?;
/// let a = Approval::request(&store, &call, 60_000, 0)?;
/// assert_eq!(a.id.len(), 32);
/// assert_eq!((a.tool.as_str(), a.arguments_sha256.clone()), ("delete_repo", arguments_digest(&call)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Approval {
    /// The id the operator answers (32 hex digits).
    pub id: String,
    /// The tool.
    pub tool: String,
    /// [`arguments_digest`] of the call.
    pub arguments_sha256: String,
}

/// How an approval ended.
///
/// # Example
/// ```
/// use jsongate::action::{Approval, ApprovalOutcome, Call};
/// use jsongate::state::MemoryStore;
/// let store = MemoryStore::new();
/// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
/// let a = Approval::request(&store, &call, 60_000, 0)?;
/// Approval::answer(&store, &a.id, false, 60_000, 0)?; // the operator refuses
/// assert_eq!(a.poll(&store, 0)?, Some(ApprovalOutcome::Refused));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ApprovalOutcome {
    /// Approved, for these exact arguments.
    Granted,
    /// Refused by the operator.
    Refused,
    /// An answer for another tool or other arguments.
    Mismatch,
    /// No answer in time.
    TimedOut,
}

impl ApprovalOutcome {
    /// `granted`, `refused`, `mismatch` or `timed_out`.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::ApprovalOutcome;
    /// assert_eq!(ApprovalOutcome::Granted.as_str(), "granted");
    /// assert_eq!(ApprovalOutcome::TimedOut.as_str(), "timed_out");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalOutcome::Granted => "granted",
            ApprovalOutcome::Refused => "refused",
            ApprovalOutcome::Mismatch => "mismatch",
            ApprovalOutcome::TimedOut => "timed_out",
        }
    }
}

fn random_id() -> String {
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !filled {
        // No /dev/urandom: the standard library's per-process random hash keys.
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos()),
            );
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

impl Approval {
    /// The record as stored (`answer` adds `"granted"`).
    fn record(&self, granted: Option<bool>) -> String {
        let mut s = String::new();
        let mut o = ObjectWriter::new(&mut s);
        o.str("id", &self.id)
            .str("tool", &self.tool)
            .str("arguments_sha256", &self.arguments_sha256);
        if let Some(g) = granted {
            o.bool("granted", g);
        }
        o.finish();
        s
    }

    fn parse(text: &str) -> Option<(Approval, Option<bool>)> {
        let v = Value::parse(text.as_bytes(), Limits::new().max_bytes(1 << 16)).ok()?;
        let s = |k| Some(v.get(k)?.as_str()?.to_owned());
        Some((
            Approval {
                id: s("id")?,
                tool: s("tool")?,
                arguments_sha256: s("arguments_sha256")?,
            },
            v.get("granted").and_then(Value::as_bool),
        ))
    }

    /// The record as one JSON line (`{"id","tool","arguments_sha256"}`), for the operator.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, Call};
    /// use jsongate::state::MemoryStore;
    /// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&MemoryStore::new(), &call, 60_000, 0)?;
    /// let line = a.to_json();
    /// assert!(line.starts_with(&format!(r#"{{"id":"{}","tool":"send","arguments_sha256":""#, a.id)));
    /// assert!(!line.contains("granted"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn to_json(&self) -> String {
        self.record(None)
    }

    /// Asks for an approval of `call`: stores the pending record for `ttl_ms`.
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, Call};
    /// use jsongate::state::{MemoryStore, Store};
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{"to":"ops"}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 1_000)?;
    /// // Pending under `approval:ID` until answered or expired.
    /// assert!(store.get(&format!("approval:{}", a.id), 1_000)?.is_some());
    /// assert!(store.get(&format!("approval:{}", a.id), 61_000)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn request(
        store: &dyn Store,
        call: &Call,
        ttl_ms: u64,
        now_ms: u64,
    ) -> Result<Approval, StateError> {
        let a = Approval {
            id: random_id(),
            tool: call.tool.clone(),
            arguments_sha256: arguments_digest(call),
        };
        if !store.put_new(
            &format!("approval:{}", a.id),
            &a.record(None),
            ttl_ms,
            now_ms,
        )? {
            return Err(StateError::new(
                StateErrorKind::Unavailable,
                "approval id already in use",
            ));
        }
        let args = call.arguments.to_json();
        if args.len() <= MAX_KEPT_ARGUMENTS {
            store.put_new(
                &format!("approval-arguments:{}", a.id),
                &args,
                ttl_ms,
                now_ms,
            )?;
        }
        Ok(a)
    }

    /// The pending approval `id` and the arguments it is for, without answering it: for
    /// the person deciding. The arguments are `None` when they were not kept (over
    /// [`MAX_KEPT_ARGUMENTS`]); kept arguments that do not match the approval's digest (a
    /// store written behind its back) are an error, never shown as the call's.
    ///
    /// # Errors
    /// The store failed, or what it holds is not an approval and its arguments.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, Call};
    /// use jsongate::state::MemoryStore;
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{"to":"ops@example.com"}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 0)?;
    /// let (pending, args) = Approval::pending(&store, &a.id, 0)?.unwrap();
    /// assert_eq!(pending, a);
    /// assert_eq!(args.unwrap().to_json(), r#"{"to":"ops@example.com"}"#);
    /// Approval::answer(&store, &a.id, true, 60_000, 0)?;
    /// assert!(Approval::pending(&store, &a.id, 0)?.is_none()); // answered: no longer pending
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn pending(
        store: &dyn Store,
        id: &str,
        now_ms: u64,
    ) -> Result<Option<(Approval, Option<Value>)>, StateError> {
        let corrupt = |what: &str| {
            StateError::new(StateErrorKind::Corrupt, format!("approval '{id}': {what}"))
        };
        let Some(text) = store.get(&format!("approval:{id}"), now_ms)? else {
            return Ok(None);
        };
        let Some((a, _)) = Approval::parse(&text) else {
            return Err(corrupt("the pending record is not one"));
        };
        let Some(args) = store.get(&format!("approval-arguments:{id}"), now_ms)? else {
            return Ok(Some((a, None)));
        };
        let limits = Limits::new().max_bytes(MAX_KEPT_ARGUMENTS as u64);
        let arguments = Value::parse(args.as_bytes(), limits)
            .map_err(|_| corrupt("the kept arguments are not JSON"))?;
        let call = Call {
            tool: a.tool.clone(),
            arguments,
        };
        if arguments_digest(&call) != a.arguments_sha256 {
            return Err(corrupt(
                "the kept arguments do not match the approval's digest",
            ));
        }
        Ok(Some((a, Some(call.arguments))))
    }

    /// An operator's answer to the pending approval `id`: takes the pending record and
    /// stores the answer for `ttl_ms`. `None` when no such approval is pending (unknown,
    /// expired, or answered already).
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, Call};
    /// use jsongate::state::MemoryStore;
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 0)?;
    /// assert_eq!(Approval::answer(&store, &a.id, true, 60_000, 0)?, Some(a.clone()));
    /// assert_eq!(Approval::answer(&store, &a.id, true, 60_000, 0)?, None); // answered once only
    /// assert_eq!(Approval::answer(&store, "no-such-id", true, 60_000, 0)?, None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer(
        store: &dyn Store,
        id: &str,
        granted: bool,
        ttl_ms: u64,
        now_ms: u64,
    ) -> Result<Option<Approval>, StateError> {
        let Some(text) = store.take(&format!("approval:{id}"), now_ms)? else {
            return Ok(None);
        };
        let Some((a, _)) = Approval::parse(&text) else {
            return Err(StateError::new(
                StateErrorKind::Corrupt,
                format!("approval '{id}': the pending record is not one"),
            ));
        };
        store.put_new(
            &format!("answer:{id}"),
            &a.record(Some(granted)),
            ttl_ms,
            now_ms,
        )?;
        Ok(Some(a))
    }

    /// Takes the answer to this approval if there is one yet (single use), without
    /// waiting: `None` while nobody answered.
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, ApprovalOutcome, Call};
    /// use jsongate::state::MemoryStore;
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 0)?;
    /// assert_eq!(a.poll(&store, 0)?, None); // nobody answered yet
    /// Approval::answer(&store, &a.id, true, 60_000, 0)?;
    /// assert_eq!(a.poll(&store, 0)?, Some(ApprovalOutcome::Granted));
    /// assert_eq!(a.poll(&store, 0)?, None); // the answer is single use
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn poll(
        &self,
        store: &dyn Store,
        now_ms: u64,
    ) -> Result<Option<ApprovalOutcome>, StateError> {
        let Some(text) = store.take(&format!("answer:{}", self.id), now_ms)? else {
            return Ok(None);
        };
        Ok(Some(match Approval::parse(&text) {
            Some((a, Some(true))) if a == *self => ApprovalOutcome::Granted,
            Some((a, Some(false))) if a.id == self.id => ApprovalOutcome::Refused,
            _ => ApprovalOutcome::Mismatch,
        }))
    }

    /// Gives up on this approval: withdraws the pending record, so whoever answers now
    /// finds nothing pending. An answer given before that is still taken and counts;
    /// otherwise the outcome is [`ApprovalOutcome::TimedOut`].
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Example
    /// ```
    /// use jsongate::action::{Approval, ApprovalOutcome, Call};
    /// use jsongate::state::MemoryStore;
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 0)?;
    /// assert_eq!(a.withdraw(&store, 0)?, ApprovalOutcome::TimedOut);
    /// assert_eq!(Approval::answer(&store, &a.id, true, 60_000, 0)?, None); // too late to answer
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn withdraw(&self, store: &dyn Store, now_ms: u64) -> Result<ApprovalOutcome, StateError> {
        if store
            .take(&format!("approval:{}", self.id), now_ms)?
            .is_some()
        {
            return Ok(ApprovalOutcome::TimedOut);
        }
        Ok(self
            .poll(store, now_ms)?
            .unwrap_or(ApprovalOutcome::TimedOut))
    }

    /// Waits up to `timeout` for the answer to this approval and takes it (single use).
    /// `now` is the caller's clock in milliseconds (for the memory and file stores).
    ///
    /// # Errors
    /// The store failed.
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::action::{Approval, ApprovalOutcome, Call};
    /// use jsongate::state::MemoryStore;
    /// let store = MemoryStore::new();
    /// let call = Call::parse(br#"{"tool":"send","arguments":{}}"#, jsongate::Limits::new())?;
    /// let a = Approval::request(&store, &call, 60_000, 0)?;
    /// Approval::answer(&store, &a.id, true, 60_000, 0)?; // answered before the wait: no sleeping
    /// assert_eq!(a.wait(&store, Duration::from_secs(30), || 0)?, ApprovalOutcome::Granted);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn wait(
        &self,
        store: &dyn Store,
        timeout: Duration,
        now: impl Fn() -> u64,
    ) -> Result<ApprovalOutcome, StateError> {
        let start = Instant::now();
        loop {
            if let Some(o) = self.poll(store, now())? {
                return Ok(o);
            }
            if start.elapsed() >= timeout {
                return self.withdraw(store, now());
            }
            std::thread::sleep(APPROVAL_POLL.min(timeout.saturating_sub(start.elapsed())));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::MemoryStore;

    fn call(args: &str) -> Call {
        Call {
            tool: "send".into(),
            arguments: Value::parse(args.as_bytes(), Limits::new()).unwrap(),
        }
    }

    #[test]
    fn an_answer_is_taken_once_and_bound_to_the_arguments() {
        let s = MemoryStore::new();
        let a = Approval::request(&s, &call(r#"{"to":"a"}"#), 60_000, 0).unwrap();
        assert_eq!(a.id.len(), 32);
        assert!(Approval::answer(&s, &a.id, true, 60_000, 0)
            .unwrap()
            .is_some());
        // Answered already: nothing pending.
        assert!(Approval::answer(&s, &a.id, true, 60_000, 0)
            .unwrap()
            .is_none());
        let t = Duration::from_millis(10);
        assert_eq!(a.wait(&s, t, || 0).unwrap(), ApprovalOutcome::Granted);
        assert_eq!(a.wait(&s, t, || 0).unwrap(), ApprovalOutcome::TimedOut);
    }

    #[test]
    fn an_answer_for_other_arguments_is_a_mismatch() {
        let s = MemoryStore::new();
        let a = Approval::request(&s, &call(r#"{"to":"a"}"#), 60_000, 0).unwrap();
        let other = Approval {
            arguments_sha256: arguments_digest(&call(r#"{"to":"b"}"#)),
            ..a.clone()
        };
        s.put_new(
            &format!("answer:{}", a.id),
            &other.record(Some(true)),
            1000,
            0,
        )
        .unwrap();
        let t = Duration::from_millis(10);
        assert_eq!(a.wait(&s, t, || 0).unwrap(), ApprovalOutcome::Mismatch);
        let b = Approval::request(&s, &call(r#"{"to":"a"}"#), 60_000, 0).unwrap();
        assert_ne!(a.id, b.id);
        Approval::answer(&s, &b.id, false, 1000, 0).unwrap();
        assert_eq!(b.wait(&s, t, || 0).unwrap(), ApprovalOutcome::Refused);
    }

    #[test]
    fn a_withdrawn_approval_cannot_be_answered_and_an_earlier_answer_still_counts() {
        let s = MemoryStore::new();
        let a = Approval::request(&s, &call(r#"{"to":"a"}"#), 60_000, 0).unwrap();
        assert_eq!(a.poll(&s, 0).unwrap(), None);
        assert_eq!(a.withdraw(&s, 0).unwrap(), ApprovalOutcome::TimedOut);
        assert!(Approval::answer(&s, &a.id, true, 1000, 0)
            .unwrap()
            .is_none());
        let b = Approval::request(&s, &call(r#"{"to":"a"}"#), 60_000, 0).unwrap();
        Approval::answer(&s, &b.id, true, 1000, 0).unwrap();
        assert_eq!(b.withdraw(&s, 0).unwrap(), ApprovalOutcome::Granted);
        assert_eq!(b.poll(&s, 0).unwrap(), None);
    }
}
