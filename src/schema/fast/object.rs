//! Object keywords: `properties`, `additionalProperties`, `propertyNames`, `required`,
//! `dependentRequired` (and draft-07 `dependencies` with arrays), beside the record of
//! `minProperties` and `maxProperties` (`crate::schema::keywords::count`'s, whose checks
//! both tiers call).
//!
//! The names a node knows (its `properties` and the names it watches for `required` and
//! `dependentRequired`) form one member table. A member name is found by its key (length and
//! the two words of [`crate::scan::name_words`], which identify a name of up to 16 bytes):
//! first at the entry after the one the previous member matched, since documents usually
//! list members in the order their schema does, then by a linear scan, or by a hash lookup
//! when the table is large. Presence is recorded as a bit per watched name, so `required` at
//! the object's end is one mask test (names past the 64th are listed).

use super::{Edges, To, NONE};
use crate::scan::{name_words, SHORT_NAME};
use crate::schema::keywords::count::{Counted, Counts};
use crate::schema::program::{Keywords, Program};

/// Tables with more entries than this are searched by hash after the expected entry.
const LINEAR: usize = 16;

/// What a member name means to its object's subschema.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member {
    /// Index in the node's `properties` (for the pointer of a failure below), or [`NONE`].
    pub(crate) prop: u32,
    /// The edge (into `Plan::edges`) `properties` gives the member's value, or [`NONE`].
    pub(crate) edge: u32,
    /// The member's bit among the first 64 watched names (0 when it is not one of them).
    pub(crate) bit: u64,
    /// Its index among the watched names when that is 64 or more, or [`NONE`].
    pub(crate) far: u32,
    /// Whether the member is a property whose value gets a subschema to evaluate, and its
    /// presence is at most a bit below 64: the case the runtime handles in a few stores.
    pub(crate) direct: bool,
}

#[derive(Debug)]
struct Entry {
    len: usize,
    a: u64,
    b: u64,
    name: Box<[u8]>,
    member: Member,
}

/// The object keywords of one node (one that looks at member names at all).
#[derive(Debug)]
pub(crate) struct ObjectPlan {
    entries: Box<[Entry]>,
    /// Entry by name, for large tables.
    index: Option<hashbrown::HashMap<Box<[u8]>, u32, foldhash::fast::FixedState>>,
    /// The edge of members `properties` does not name, or [`NONE`].
    pub(crate) additional: u32,
    /// The edge of `propertyNames`, or [`NONE`].
    pub(crate) property_names: u32,
    /// `minProperties`, `maxProperties` (the keyword group's own record).
    pub(crate) counts: Counts,
    /// `required` as watched-name bits below 64, and the indices of the others.
    required_mask: u64,
    required_far: Box<[u32]>,
    /// `dependentRequired`: a watched name, and those it requires.
    dependent: Box<[(u32, Box<[u32]>)]>,
    dependent_keyword: &'static str,
    /// Units the general tier charges for the presence checks at the object's end.
    pub(crate) end_units: u64,
    /// Whether a member `properties` does not name is looked at (by `additionalProperties`
    /// or `propertyNames`), so a failure below it needs its name.
    pub(crate) copy_unknown: bool,
}

impl ObjectPlan {
    /// The record that checks nothing (for objects under a node without object keywords).
    pub(crate) fn empty() -> ObjectPlan {
        ObjectPlan {
            entries: Box::new([]),
            index: None,
            additional: NONE,
            property_names: NONE,
            counts: Counts::none(Counted::Properties),
            required_mask: 0,
            required_far: Box::new([]),
            dependent: Box::new([]),
            dependent_keyword: "dependentRequired",
            end_units: 0,
            copy_unknown: false,
        }
    }

    /// The record of `k`'s object keywords; `None` when it reads no member name.
    pub(crate) fn lower(p: &Program, k: &Keywords, edges: &mut Edges) -> Option<ObjectPlan> {
        if !k.names_wanted {
            return None;
        }
        let mut entries: Vec<Entry> = Vec::new();
        for n in k.properties.iter().map(|(n, _)| n).chain(k.watch.iter()) {
            if entries.iter().any(|e| *e.name == *n.as_bytes()) {
                continue;
            }
            let prop = k.properties.iter().position(|(q, _)| q == n);
            let watch = k.watch.iter().position(|w| w == n);
            let (a, b) = name_words(n.as_bytes());
            let edge = prop.map_or(NONE, |i| edges.add(p, &k.properties[i].1));
            entries.push(Entry {
                len: n.len(),
                a,
                b,
                name: n.as_bytes().into(),
                member: Member {
                    prop: prop.map_or(NONE, |i| i as u32),
                    edge,
                    bit: match watch {
                        Some(w) if w < 64 => 1 << w,
                        _ => 0,
                    },
                    far: match watch {
                        Some(w) if w >= 64 => w as u32,
                        _ => NONE,
                    },
                    direct: edge != NONE
                        && edges.to(edge) == To::Schema
                        && watch.is_none_or(|w| w < 64),
                },
            });
        }
        let index = (entries.len() > LINEAR).then(|| {
            entries
                .iter()
                .enumerate()
                .map(|(i, e)| (e.name.clone(), i as u32))
                .collect()
        });
        Some(ObjectPlan {
            entries: entries.into_boxed_slice(),
            index,
            additional: k
                .additional_properties
                .as_ref()
                .map_or(NONE, |c| edges.add(p, c)),
            property_names: k.property_names.as_ref().map_or(NONE, |c| edges.add(p, c)),
            counts: k
                .properties_count
                .as_deref()
                .cloned()
                .unwrap_or(Counts::none(Counted::Properties)),
            required_mask: k.required_mask,
            required_far: k.required_far.clone().into_boxed_slice(),
            dependent: k
                .dependent_required_watch
                .iter()
                .map(|(key, names)| (*key, names.clone().into_boxed_slice()))
                .collect(),
            dependent_keyword: k.dependent_required_keyword(),
            end_units: (k.required_watch.len() + k.dependent_required_watch.len()) as u64 / 8,
            copy_unknown: k.additional_properties.is_some() || k.property_names.is_some(),
        })
    }

    /// What `name` means here, if the table knows it. `hint` is the entry expected next; it
    /// is moved past the entry found.
    #[inline]
    pub(crate) fn member(&self, name: &[u8], hint: &mut u32) -> Option<&Member> {
        let n = name.len();
        let (a, b) = name_words(name);
        let is =
            |e: &Entry| e.a == a && e.b == b && e.len == n && (n <= SHORT_NAME || *e.name == *name);
        let h = *hint as usize;
        if let Some(e) = self.entries.get(h) {
            if is(e) {
                *hint = h as u32 + 1;
                return Some(&e.member);
            }
        }
        let i = match &self.index {
            Some(ix) => *ix.get(name)? as usize,
            None => self.entries.iter().position(is)?,
        };
        *hint = i as u32 + 1;
        Some(&self.entries[i].member)
    }

    /// The member at the entry `hint` expects, if `name` is that one (moving `hint` past
    /// it): [`member`](Self::member) without the search.
    #[inline(always)]
    pub(crate) fn expected(&self, name: &[u8], hint: &mut u32) -> Option<&Member> {
        let e = self.entries.get(*hint as usize)?;
        let n = name.len();
        if e.len != n || (n > SHORT_NAME && *e.name != *name) {
            return None;
        }
        let (a, b) = name_words(name);
        if e.a != a || e.b != b {
            return None;
        }
        *hint += 1;
        Some(&e.member)
    }

    /// The keyword an object of `count` members fails at its end, if any. `first` holds the
    /// watched names seen as bits below 64, `seen` answers for any index.
    #[inline]
    pub(crate) fn end(
        &self,
        count: u64,
        first: u64,
        seen: impl Fn(u32) -> bool,
    ) -> Option<&'static str> {
        if self.counts.end(count).is_none()
            && first & self.required_mask == self.required_mask
            && self.required_far.is_empty()
            && self.dependent.is_empty()
        {
            return None;
        }
        self.end_slow(count, first, seen)
    }

    #[inline(never)]
    fn end_slow(&self, count: u64, first: u64, seen: impl Fn(u32) -> bool) -> Option<&'static str> {
        if let Some(kw) = self.counts.end(count) {
            return Some(kw);
        }
        if first & self.required_mask != self.required_mask
            || self.required_far.iter().any(|&i| !seen(i))
        {
            return Some("required");
        }
        if self
            .dependent
            .iter()
            .any(|(key, names)| seen(*key) && names.iter().any(|&n| !seen(n)))
        {
            return Some(self.dependent_keyword);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::{Edges, ObjectPlan, NONE};
    use crate::schema::program::NodeKind;
    use crate::Schema;

    fn plan(schema: &str) -> ObjectPlan {
        let s = Schema::compile(schema.as_bytes()).unwrap();
        let p = s.program();
        match &p.nodes[p.root as usize].kind {
            NodeKind::Keywords(k) => ObjectPlan::lower(p, k, &mut Edges::default()).unwrap(),
            _ => panic!("{schema}"),
        }
    }

    #[test]
    fn members_are_found_in_any_order_and_size() {
        for count in [1, 3, 16, 17, 40] {
            let names: Vec<String> = (0..count)
                .map(|i| format!("name-{i}-{}", "x".repeat(i % 20)))
                .collect();
            let props: Vec<String> = names
                .iter()
                .map(|n| format!(r#""{n}":{{"type":"string"}}"#))
                .collect();
            let o = plan(&format!(
                r#"{{"properties":{{{}}},"required":["{}","other"]}}"#,
                props.join(","),
                names[0]
            ));
            let mut hint = 0;
            // In order: every lookup hits the expected entry.
            for (i, n) in names.iter().enumerate() {
                let mut expected = hint;
                let e = o.expected(n.as_bytes(), &mut expected).unwrap();
                let m = o.member(n.as_bytes(), &mut hint).unwrap();
                assert_eq!((m.prop, hint), (i as u32, i as u32 + 1));
                assert_eq!((e.prop, expected), (m.prop, hint));
                assert!(e.direct);
            }
            let mut expected = 0;
            let last = names[names.len() - 1].as_bytes();
            assert_eq!(o.expected(last, &mut expected).is_none(), count > 1);
            // Backwards, and unknown names.
            for (i, n) in names.iter().enumerate().rev() {
                assert_eq!(o.member(n.as_bytes(), &mut hint).unwrap().prop, i as u32);
            }
            assert!(o.member(b"name-x", &mut hint).is_none());
            assert!(o.member(b"name-0-x", &mut hint).is_none());
            let other = o.member(b"other", &mut hint).unwrap();
            assert_eq!((other.prop, other.bit, other.far), (NONE, 2, NONE));
            assert_eq!(o.member(names[0].as_bytes(), &mut hint).unwrap().bit, 1);
        }
    }

    #[test]
    fn end_checks_in_order() {
        let o = plan(r#"{"minProperties":2,"required":["a"],"dependentRequired":{"b":["c"]}}"#);
        assert_eq!(o.end(1, 0b1, |_| true), Some("minProperties"));
        assert_eq!(o.end(2, 0b0, |_| false), Some("required"));
        // Watched: a (0), b (1), c (2).
        let seen = |bits: u64| move |i: u32| bits & (1 << i) != 0;
        assert_eq!(o.end(2, 0b011, seen(0b011)), Some("dependentRequired"));
        assert_eq!(o.end(2, 0b111, seen(0b111)), None);
        assert_eq!(o.end(2, 0b001, seen(0b001)), None);
    }
}
