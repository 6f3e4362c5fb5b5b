//! Duplicate member-name detection for every open object.
//!
//! Names are compared after unescaping (the scanner hands over decoded text), byte for byte,
//! so `"a"` and `"\u0061"` collide while `"A"`/`"a"` and NFC/NFD forms do not. Each nesting
//! depth owns one reusable set; opening an object clears the set of its depth, so a scanner
//! that is reset or reused does not allocate again. Small objects are checked by a linear scan,
//! which a 128-bit filter of the names so far spares most names (a name whose bit is clear is
//! new; the filter's hash is fixed, so crafted names can make every bit collide, which costs
//! at most the linear scan it replaces); past [`LINEAR`] members a hash table keyed with a
//! per-scanner random seed takes over, so crafted names cannot force collisions and cost
//! stays linear in the number of members.
//!
//! This module also remembers the current member name of each open object, which the scanner
//! needs to build JSON Pointers for errors.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Objects with at most this many members are checked by a linear scan. Measured with
/// callgrind on 2,000 objects of 48 short-named members each, the linear scan costs 9% fewer
/// instructions than the table (the keys compare in a few instructions each; the table hashes
/// every name); at 64 members the two are even, and past the switch every object pays one
/// rebuild of the table (8% more on objects of 49 to 64 members, 3% on 200). Objects with
/// 40 members (the users of the twitter corpus) scan 8% faster than with a switch at 32.
const LINEAR: usize = 48;

/// Names of at most this many bytes are identified by their [`Entry`] key alone.
const SHORT: usize = 16;

/// One name: its length and two words that, for names of up to [`SHORT`] bytes, hold every
/// byte (the first and last 8, overlapping, or for shorter names the first and last 4, or
/// for under 4 bytes each byte), so equal keys mean equal names with no copy of the text.
/// Longer names are copied into the set's buffer from `start` and compared byte for byte
/// when their keys are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    a: u64,
    b: u64,
    len: u32,
    start: u32,
}

/// The two key words of a name (see [`Entry`]): with the length, they identify every name
/// of up to 16 bytes. Shared with the validator's member tables.
#[inline(always)]
pub(crate) fn name_words(name: &[u8]) -> (u64, u64) {
    Entry::key(name)
}

/// Names of at most this many bytes are identified by their length and [`name_words`].
pub(crate) const SHORT_NAME: usize = SHORT;

impl Entry {
    #[inline(always)]
    fn key(name: &[u8]) -> (u64, u64) {
        let n = name.len();
        let word = |at: usize| u64::from_le_bytes(name[at..at + 8].try_into().unwrap_or([0; 8]));
        let half = |at: usize| {
            u64::from(u32::from_le_bytes(
                name[at..at + 4].try_into().unwrap_or([0; 4]),
            ))
        };
        match n {
            0 => (0, 0),
            1..=3 => (
                u64::from(name[0]) | u64::from(name[n / 2]) << 8 | u64::from(name[n - 1]) << 16,
                0,
            ),
            4..=8 => (half(0), half(n - 4)),
            _ => (word(0), word(n - 8)),
        }
    }

    /// The name's bytes, rebuilt from the key (short names) or read from `bytes`.
    fn text(&self, bytes: &[u8]) -> Vec<u8> {
        let n = self.len as usize;
        if n > SHORT {
            return bytes[self.start as usize..self.start as usize + n].to_vec();
        }
        let mut out = vec![0u8; n];
        let (a, b) = (self.a.to_le_bytes(), self.b.to_le_bytes());
        match n {
            0 => {}
            1..=3 => {
                out[0] = a[0];
                out[n / 2] = a[1];
                out[n - 1] = a[2];
            }
            4..=8 => {
                out[..4].copy_from_slice(&a[..4]);
                out[n - 4..].copy_from_slice(&b[..4]);
            }
            _ => {
                out[..8].copy_from_slice(&a);
                out[n - 8..].copy_from_slice(&b);
            }
        }
        out
    }
}

#[derive(Default)]
struct NameSet {
    /// A 128-bit filter of the names so far (one bit each, by [`filter_bit`]): a name whose
    /// bit is clear is new without comparing it to any other.
    filter: [u64; 2],
    /// The names of the object, in document order.
    entries: Vec<Entry>,
    /// Bytes of the names longer than [`SHORT`], back to back.
    bytes: Vec<u8>,
    /// Indices into `entries`, built once the object has more than `LINEAR` members.
    table: HashTable<usize>,
}

impl NameSet {
    fn clear(&mut self) {
        self.filter = [0; 2];
        self.bytes.clear();
        self.entries.clear();
        self.table.clear();
    }

    /// Whether entry `i` is `name` (whose key is `(a, b)`).
    #[inline]
    fn is(&self, i: usize, a: u64, b: u64, name: &[u8]) -> bool {
        let e = &self.entries[i];
        e.a == a
            && e.b == b
            && e.len as usize == name.len()
            && (name.len() <= SHORT
                || self.bytes[e.start as usize..e.start as usize + name.len()] == *name)
    }
}

/// The word and bit of a name's key in [`NameSet::filter`]: 7 bits of a multiplicative
/// hash of the key, which itself holds every byte of a short name and the first and last 8
/// of a long one.
#[inline(always)]
fn filter_bit(a: u64, b: u64, len: usize) -> (usize, u64) {
    let h = (a ^ b.rotate_left(29) ^ len as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 57;
    ((h >> 6) as usize, 1 << (h & 63))
}

/// The hash of entry `i` in the table: of its key for a short name (which it identifies),
/// of all its bytes for a long one (so names sharing their first and last bytes do not
/// collide on purpose).
fn entry_hash(
    hasher: foldhash::quality::RandomState,
    entries: &[Entry],
    bytes: &[u8],
    i: usize,
) -> u64 {
    let e = &entries[i];
    if e.len as usize <= SHORT {
        hasher.hash_one((e.a, e.b, e.len))
    } else {
        hasher.hash_one(&bytes[e.start as usize..e.start as usize + e.len as usize])
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
    #[inline(always)]
    pub(crate) fn insert(&mut self, depth: usize, name: &[u8]) -> bool {
        let (a, b) = Entry::key(name);
        let set = &mut self.sets[depth - 1];
        let n = set.entries.len();
        let (w, bit) = filter_bit(a, b, name.len());
        if n >= LINEAR || name.len() > SHORT || set.filter[w] & bit != 0 {
            return self.insert_slow(depth, name, a, b);
        }
        // A short name whose filter bit is clear: new.
        set.filter[w] |= bit;
        set.entries.push(Entry {
            a,
            b,
            len: name.len() as u32,
            start: 0,
        });
        true
    }

    /// [`insert`](Self::insert) for a long name, a large object, or a name whose filter
    /// bit is set.
    #[inline(never)]
    fn insert_slow(&mut self, depth: usize, name: &[u8], a: u64, b: u64) -> bool {
        let set = &mut self.sets[depth - 1];
        let n = set.entries.len();
        if n < LINEAR {
            let (w, bit) = filter_bit(a, b, name.len());
            if set.filter[w] & bit != 0 {
                #[cfg(test)]
                self.compares.set(self.compares.get() + n as u64);
                if (0..n).any(|i| set.is(i, a, b, name)) {
                    return false;
                }
            }
            set.filter[w] |= bit;
        } else {
            let hasher = &self.hasher;
            if n == LINEAR {
                // Build the table from the names seen so far.
                let NameSet {
                    table,
                    entries,
                    bytes,
                    ..
                } = &mut *set;
                for i in 0..n {
                    let h = entry_hash(*hasher, entries, bytes, i);
                    table.insert_unique(h, i, |&j| entry_hash(*hasher, entries, bytes, j));
                }
            }
            let h = if name.len() <= SHORT {
                hasher.hash_one((a, b, name.len() as u32))
            } else {
                hasher.hash_one(name)
            };
            #[cfg(test)]
            let compares = &self.compares;
            let found = set
                .table
                .find(h, |&j| {
                    #[cfg(test)]
                    compares.set(compares.get() + 1);
                    set.is(j, a, b, name)
                })
                .is_some();
            if found {
                return false;
            }
            let NameSet {
                table,
                entries,
                bytes,
                ..
            } = &mut *set;
            table.insert_unique(h, n, |&j| entry_hash(*hasher, entries, bytes, j));
        }
        let start = if name.len() > SHORT {
            let s = set.bytes.len();
            set.bytes.extend_from_slice(name);
            s
        } else {
            0
        };
        set.entries.push(Entry {
            a,
            b,
            len: name.len() as u32,
            start: start as u32,
        });
        true
    }

    /// The most recent member name of the object at `depth` (used for pointers).
    pub(crate) fn last(&self, depth: usize) -> Vec<u8> {
        match self.sets.get(depth - 1) {
            Some(s) => s.entries.last().map_or_else(Vec::new, |e| e.text(&s.bytes)),
            None => Vec::new(),
        }
    }

    /// Bytes retained for names across all depths (for memory accounting in tests).
    #[cfg(test)]
    pub(crate) fn retained(&self) -> usize {
        self.sets
            .iter()
            .map(|s| s.bytes.capacity() + s.entries.capacity() * std::mem::size_of::<Entry>())
            .sum()
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
    fn keys_identify_short_names_and_rebuild_them() {
        // Every length up to past the short bound, with names that differ in one byte only.
        for len in 0..=20usize {
            let mut n = Names::new();
            n.open(1);
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(n.insert(1, &base));
            assert_eq!(n.last(1), base);
            for at in 0..len {
                let mut other = base.clone();
                other[at] = b'Z';
                assert!(n.insert(1, &other), "len {len}, byte {at}");
                assert_eq!(n.last(1), other);
                assert!(!n.insert(1, &other));
            }
            assert!(!n.insert(1, &base));
        }
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
