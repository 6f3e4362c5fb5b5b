//! Duplicate member-name detection for every open object.
//!
//! Names are compared after unescaping (the scanner hands over decoded text), byte for byte,
//! so `"a"` and `"\u0061"` collide while `"A"`/`"a"` and NFC/NFD forms do not. Each nesting
//! depth owns one reusable set; opening an object clears the set of its depth, so a scanner
//! that is reset or reused does not allocate again. Small objects are checked by a linear scan;
//! past [`LINEAR`] members a hash table keyed with a per-scanner random seed takes over, so
//! crafted names cannot force collisions and cost stays linear in the number of members.
//!
//! This module also remembers the current member name of each open object, which the scanner
//! needs to build JSON Pointers for errors.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Objects with at most this many members are checked by a linear scan.
const LINEAR: usize = 16;

#[derive(Default)]
struct NameSet {
    /// The names of the object, back to back.
    bytes: Vec<u8>,
    /// `(start, len)` of each name in `bytes`, in document order.
    entries: Vec<(usize, usize)>,
    /// Indices into `entries`, built once the object has more than `LINEAR` members.
    table: HashTable<usize>,
}

impl NameSet {
    fn clear(&mut self) {
        self.bytes.clear();
        self.entries.clear();
        self.table.clear();
    }

    fn name(&self, i: usize) -> &[u8] {
        let (s, l) = self.entries[i];
        &self.bytes[s..s + l]
    }
}

/// One set of names per nesting depth.
pub(crate) struct Names {
    sets: Vec<NameSet>,
    hasher: foldhash::quality::RandomState,
    /// Name comparisons made (tests pin that the work stays linear).
    #[cfg(test)]
    compares: std::cell::Cell<u64>,
}

impl Names {
    pub(crate) fn new() -> Self {
        Names {
            sets: Vec::new(),
            hasher: foldhash::quality::RandomState::default(),
            #[cfg(test)]
            compares: std::cell::Cell::new(0),
        }
    }

    /// Starts a fresh object at `depth` (1-based).
    #[inline]
    pub(crate) fn open(&mut self, depth: usize) {
        if self.sets.len() < depth {
            self.sets.resize_with(depth, NameSet::default);
        }
        self.sets[depth - 1].clear();
    }

    /// Records `name` in the object at `depth`; returns `false` if it was already there.
    #[inline]
    pub(crate) fn insert(&mut self, depth: usize, name: &[u8]) -> bool {
        let set = &mut self.sets[depth - 1];
        let n = set.entries.len();
        if n < LINEAR {
            if set
                .entries
                .iter()
                .any(|&(s, l)| l == name.len() && &set.bytes[s..s + l] == name)
            {
                return false;
            }
        } else {
            let hasher = &self.hasher;
            if n == LINEAR {
                // Build the table from the names seen so far.
                for i in 0..n {
                    let h = hasher.hash_one(set.name(i));
                    let NameSet {
                        bytes,
                        entries,
                        table,
                    } = &mut *set;
                    table.insert_unique(h, i, |&j| {
                        let (s, l) = entries[j];
                        hasher.hash_one(&bytes[s..s + l])
                    });
                }
            }
            let h = hasher.hash_one(name);
            let NameSet {
                bytes,
                entries,
                table,
            } = &mut *set;
            #[cfg(test)]
            let compares = &self.compares;
            let eq = |&j: &usize| {
                #[cfg(test)]
                compares.set(compares.get() + 1);
                let (s, l) = entries[j];
                &bytes[s..s + l] == name
            };
            if table.find(h, eq).is_some() {
                return false;
            }
            table.insert_unique(h, n, |&j| {
                let (s, l) = entries[j];
                hasher.hash_one(&bytes[s..s + l])
            });
        }
        let start = set.bytes.len();
        set.bytes.extend_from_slice(name);
        set.entries.push((start, name.len()));
        true
    }

    /// The most recent member name of the object at `depth` (used for pointers).
    pub(crate) fn last(&self, depth: usize) -> &[u8] {
        match self
            .sets
            .get(depth - 1)
            .and_then(|s| s.entries.last().map(|&(a, l)| (s, a, l)))
        {
            Some((s, a, l)) => &s.bytes[a..a + l],
            None => &[],
        }
    }

    /// Bytes retained for names across all depths (for memory accounting in tests).
    #[cfg(test)]
    pub(crate) fn retained(&self) -> usize {
        self.sets.iter().map(|s| s.bytes.capacity()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_duplicates_below_and_above_the_linear_threshold() {
        let mut n = Names::new();
        n.open(1);
        for i in 0..100 {
            assert!(n.insert(1, format!("k{i}").as_bytes()));
        }
        for i in [0, 7, 8, 9, 15, 16, 17, 99] {
            assert!(!n.insert(1, format!("k{i}").as_bytes()), "k{i}");
        }
        assert!(n.insert(1, b"K0"));
        assert_eq!(n.last(1), b"K0");
    }

    #[test]
    fn work_is_linear_in_members() {
        // Names that share long prefixes and lengths, as a collision attempt would.
        let mut n = Names::new();
        n.open(1);
        let count = 200_000u64;
        for i in 0..count {
            assert!(n.insert(1, format!("member-{i:012}").as_bytes()));
        }
        assert!(!n.insert(1, b"member-000000000042"));
        // The first objects' worth of linear checks, then about one comparison per insert
        // (hash-tag false positives are rare).
        let c = n.compares.get();
        assert!(c < 2 * count, "{c} comparisons for {count} members");
    }

    #[test]
    fn depths_are_independent_and_reopening_clears() {
        let mut n = Names::new();
        n.open(1);
        assert!(n.insert(1, b"a"));
        n.open(2);
        assert!(n.insert(2, b"a"));
        n.open(2);
        assert!(n.insert(2, b"a"));
        assert!(!n.insert(1, b"a"));
    }

    #[test]
    fn empty_name_is_a_name() {
        let mut n = Names::new();
        n.open(1);
        assert!(n.insert(1, b""));
        assert!(!n.insert(1, b""));
        assert!(n.retained() < 1024);
    }
}
