//! The in-memory backend: one process, any number of threads.

use std::sync::{Mutex, PoisonError};

use super::map::Map;
use super::{StateError, Store, Take};

/// State in this process only (the default).
///
/// # Example
/// ```
/// use jsongate::state::{MemoryStore, Store};
/// let s = MemoryStore::new();
/// assert_eq!(s.extend_deadline("read_only", 5_000, 0)?, 5_000);
/// assert_eq!(s.deadline("read_only", 1_000)?, Some(5_000));
/// assert_eq!(s.deadline("read_only", 6_000)?, None); // expired
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
#[derive(Debug, Default)]
pub struct MemoryStore {
    map: Mutex<Map>,
}

impl MemoryStore {
    /// Empty state.
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{MemoryStore, Store};
    /// assert_eq!(MemoryStore::new().get("anything", 0)?, None);
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    // The memory backend cannot fail; the `Result` is the interface's.
    #[allow(clippy::unnecessary_wraps)]
    fn with<T>(&self, f: impl FnOnce(&mut Map) -> T) -> Result<T, StateError> {
        let mut m = self.map.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(f(&mut m))
    }
}

impl Store for MemoryStore {
    fn window_take(
        &self,
        key: &str,
        limit: u64,
        window: u64,
        now: u64,
    ) -> Result<Take, StateError> {
        self.with(|m| m.window_take(key, limit, window, now))
    }

    fn trip(
        &self,
        key: &str,
        threshold: u64,
        window: u64,
        cooldown: u64,
        now: u64,
    ) -> Result<Option<u64>, StateError> {
        self.with(|m| m.trip(key, threshold, window, cooldown, now))
    }

    fn extend_deadline(&self, key: &str, until: u64, now: u64) -> Result<u64, StateError> {
        self.with(|m| m.extend_deadline(key, until, now))
    }

    fn deadline(&self, key: &str, now: u64) -> Result<Option<u64>, StateError> {
        self.with(|m| m.deadline(key, now))
    }

    fn advance(&self, key: &str, to: u64, ttl: u64, now: u64) -> Result<bool, StateError> {
        self.with(|m| m.advance(key, to, ttl, now))
    }

    fn put_new(&self, key: &str, value: &str, ttl: u64, now: u64) -> Result<bool, StateError> {
        self.with(|m| m.put_new(key, value, ttl, now))
    }

    fn get(&self, key: &str, now: u64) -> Result<Option<String>, StateError> {
        self.with(|m| m.get(key, now))
    }

    fn take(&self, key: &str, now: u64) -> Result<Option<String>, StateError> {
        self.with(|m| m.take(key, now))
    }

    fn describe(&self) -> String {
        "memory".into()
    }
}
