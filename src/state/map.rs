//! The state both local backends keep: a map from key to slot, and every operation of
//! [`Store`](super::Store) on it. The memory backend holds one under a mutex; the file
//! backend reads one, applies one operation and writes it back under a file lock. Expired
//! slots are dropped as they are met and before the map is written.

use std::collections::{BTreeMap, VecDeque};

use super::Take;

/// One key's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Slot {
    /// Event times, oldest first (a window or a breaker count).
    Log(VecDeque<u64>),
    /// A number: a deadline or a cursor.
    Num(u64),
    /// A small record.
    Text(String),
}

/// A slot and when it expires (`0`: never).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Entry {
    pub(super) slot: Slot,
    pub(super) expires: u64,
}

/// Keys in order, so a written file is stable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Map {
    pub(super) entries: BTreeMap<String, Entry>,
}

fn drop_old(log: &mut VecDeque<u64>, window_ms: u64, now: u64) {
    while log
        .front()
        .is_some_and(|&t| now.saturating_sub(t) >= window_ms)
    {
        log.pop_front();
    }
}

impl Map {
    /// The live entry at `key` (an expired one is removed).
    fn live(&mut self, key: &str, now: u64) -> Option<&mut Entry> {
        if self
            .entries
            .get(key)
            .is_some_and(|e| e.expires != 0 && now >= e.expires)
        {
            self.entries.remove(key);
        }
        self.entries.get_mut(key)
    }

    /// Drops every expired entry.
    pub(super) fn purge(&mut self, now: u64) {
        self.entries
            .retain(|_, e| e.expires == 0 || now < e.expires);
    }

    fn log(&mut self, key: &str, now: u64) -> &mut VecDeque<u64> {
        let fresh = !matches!(
            self.live(key, now),
            Some(Entry {
                slot: Slot::Log(_),
                ..
            })
        );
        if fresh {
            self.entries.insert(
                key.to_owned(),
                Entry {
                    slot: Slot::Log(VecDeque::new()),
                    expires: 0,
                },
            );
        }
        match self.entries.get_mut(key) {
            Some(Entry {
                slot: Slot::Log(l), ..
            }) => l,
            _ => unreachable!("inserted above"),
        }
    }

    fn num(&mut self, key: &str, now: u64) -> u64 {
        match self.live(key, now) {
            Some(Entry {
                slot: Slot::Num(n), ..
            }) => *n,
            _ => 0,
        }
    }

    pub(super) fn window_take(&mut self, key: &str, limit: u64, window_ms: u64, now: u64) -> Take {
        let log = self.log(key, now);
        drop_old(log, window_ms, now);
        let take = if (log.len() as u64) < limit {
            log.push_back(now);
            Take {
                admitted: true,
                now_ms: now,
                frees_at_ms: now,
            }
        } else {
            Take {
                admitted: false,
                now_ms: now,
                frees_at_ms: log.front().map_or(now, |&t| t.saturating_add(window_ms)),
            }
        };
        let expires = log.back().map_or(now, |&t| t.saturating_add(window_ms));
        if let Some(e) = self.entries.get_mut(key) {
            e.expires = expires.max(now + 1);
        }
        take
    }

    pub(super) fn trip(
        &mut self,
        key: &str,
        threshold: u64,
        window_ms: u64,
        cooldown_ms: u64,
        now: u64,
    ) -> Option<u64> {
        let deadline_key = format!("{key}:open");
        let open_until = self.num(&deadline_key, now);
        let log = self.log(key, now);
        drop_old(log, window_ms, now);
        log.push_back(now);
        // Never more than the events that can open it: memory is bounded by the threshold.
        while log.len() as u64 > threshold.max(1) {
            log.pop_front();
        }
        let opened = log.len() as u64 >= threshold && now >= open_until;
        if opened {
            log.clear();
        }
        let expires = now.saturating_add(window_ms).max(now + 1);
        if let Some(e) = self.entries.get_mut(key) {
            e.expires = expires;
        }
        if !opened {
            return None;
        }
        let until = now.saturating_add(cooldown_ms);
        Some(self.extend_deadline(&deadline_key, until, now))
    }

    pub(super) fn extend_deadline(&mut self, key: &str, until: u64, now: u64) -> u64 {
        let cur = self.num(key, now);
        if until > cur && until > now {
            self.entries.insert(
                key.to_owned(),
                Entry {
                    slot: Slot::Num(until),
                    expires: until,
                },
            );
            return until;
        }
        cur
    }

    pub(super) fn deadline(&mut self, key: &str, now: u64) -> Option<u64> {
        Some(self.num(key, now)).filter(|&d| d > now)
    }

    pub(super) fn advance(&mut self, key: &str, to: u64, ttl_ms: u64, now: u64) -> bool {
        let present = self.live(key, now).is_some();
        let cur = self.num(key, now);
        if present && cur > to {
            return false;
        }
        self.entries.insert(
            key.to_owned(),
            Entry {
                slot: Slot::Num(to),
                expires: now.saturating_add(ttl_ms.max(1)),
            },
        );
        true
    }

    pub(super) fn put_new(&mut self, key: &str, value: &str, ttl_ms: u64, now: u64) -> bool {
        if self.live(key, now).is_some() {
            return false;
        }
        self.entries.insert(
            key.to_owned(),
            Entry {
                slot: Slot::Text(value.to_owned()),
                expires: now.saturating_add(ttl_ms.max(1)),
            },
        );
        true
    }

    pub(super) fn get(&mut self, key: &str, now: u64) -> Option<String> {
        match self.live(key, now) {
            Some(Entry {
                slot: Slot::Text(t),
                ..
            }) => Some(t.clone()),
            _ => None,
        }
    }

    pub(super) fn take(&mut self, key: &str, now: u64) -> Option<String> {
        let t = self.get(key, now)?;
        self.entries.remove(key);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_admits_its_limit_then_frees_with_its_oldest_event() {
        let mut m = Map::default();
        assert!(m.window_take("k", 2, 1000, 0).admitted);
        assert!(m.window_take("k", 2, 1000, 10).admitted);
        let t = m.window_take("k", 2, 1000, 20);
        assert_eq!((t.admitted, t.frees_at_ms), (false, 1000));
        assert!(m.window_take("k", 2, 1000, 1000).admitted);
        assert!(!m.window_take("k", 2, 1000, 1009).admitted);
        // A zero limit admits nothing.
        assert!(!m.window_take("z", 0, 1000, 0).admitted);
    }

    #[test]
    fn a_breaker_opens_at_its_threshold_once_per_cooldown() {
        let mut m = Map::default();
        assert_eq!(m.trip("b", 2, 1000, 500, 0), None);
        assert_eq!(m.trip("b", 2, 1000, 500, 10), Some(510));
        assert_eq!(m.deadline("b:open", 509), Some(510));
        assert_eq!(m.deadline("b:open", 510), None);
        // Events outside the window do not count.
        assert_eq!(m.trip("b", 2, 1000, 500, 600), None);
        assert_eq!(m.trip("b", 2, 1000, 500, 1700), None);
    }

    #[test]
    fn deadlines_only_rise_and_cursors_only_advance() {
        let mut m = Map::default();
        assert_eq!(m.extend_deadline("d", 100, 0), 100);
        assert_eq!(m.extend_deadline("d", 50, 0), 100);
        assert!(m.advance("c", 2, 1000, 0));
        assert!(m.advance("c", 2, 1000, 0));
        assert!(!m.advance("c", 1, 1000, 0));
        assert!(m.advance("c", 5, 1000, 0));
        // Expired, it starts over.
        assert!(m.advance("c", 0, 1000, 5000));
    }

    #[test]
    fn records_are_single_use_and_expire() {
        let mut m = Map::default();
        assert!(m.put_new("r", "x", 100, 0));
        assert!(!m.put_new("r", "y", 100, 0));
        assert_eq!(m.get("r", 50).as_deref(), Some("x"));
        assert_eq!(m.take("r", 50).as_deref(), Some("x"));
        assert_eq!(m.take("r", 50), None);
        assert!(m.put_new("s", "x", 100, 0));
        assert_eq!(m.get("s", 100), None);
        m.purge(100);
        assert!(m.entries.is_empty());
    }
}
