//! A direct matcher for the patterns schemas write most: literals, prefixes and suffixes
//! (`abc`, `^v1/`, `\.json$`) and anchored sequences of ASCII classes with counts
//! (`^it-[0-9]{6}$`, `^[A-Z]{3}$`, `^[a-z0-9_-]+$`, `^\d{4}-\d{2}-\d{2}$`).
//!
//! Written here rather than left to the `regex` crate because these searches run once per
//! string value on the validator's hot path, where the crate's general search costs several
//! hundred instructions on a ten-byte id and this loop a few dozen (measured with
//! callgrind on the gateway bench's item ids). Only patterns whose meaning is unambiguous
//! under a greedy left-to-right reading are taken: every piece with a variable count is
//! followed by a piece that needs at least one character of a disjoint set, or ends the
//! pattern. Anything else (alternation, groups with several pieces repeated, non-ASCII or
//! negated classes, look-around, unanchored classes) stays with the general engines. The
//! `regex` crate's answer on the same pattern is the oracle in the tests.

use super::Node;

/// One element of a sequence: a character class (or one literal character) with counts.
#[derive(Clone, Debug)]
pub(super) struct Piece {
    /// ASCII members as a 128-bit set.
    set: [u64; 2],
    /// A literal run of characters, as UTF-8 (matched once; `set` is then empty).
    literal: Option<Box<[u8]>>,
    min: u32,
    max: u32,
}

impl Piece {
    #[inline]
    fn has(&self, b: u8) -> bool {
        b < 128 && self.set[usize::from(b >> 6)] & (1u64 << (b & 63)) != 0
    }

    fn single_byte(&self) -> Option<u8> {
        let n = self.set[0].count_ones() + self.set[1].count_ones();
        if n != 1 || self.literal.is_some() {
            return None;
        }
        let b = if self.set[0] != 0 {
            self.set[0].trailing_zeros()
        } else {
            64 + self.set[1].trailing_zeros()
        };
        Some(b as u8)
    }
}

#[derive(Clone, Debug)]
pub(super) enum Simple {
    /// Anchored at the start: pieces read greedily; `end` anchors the end too.
    Sequence { pieces: Box<[Piece]>, end: bool },
    /// A literal anywhere.
    Contains(Box<[u8]>),
    /// A literal at the end.
    EndsWith(Box<[u8]>),
}

impl Simple {
    /// The direct matcher for `root`, when the pattern is of a shape it handles.
    pub(super) fn from_node(root: &Node) -> Option<Simple> {
        let mut flat = Vec::new();
        flatten(root, &mut flat)?;
        let start = matches!(flat.first(), Some(Node::Start));
        if start {
            flat.remove(0);
        }
        let end = matches!(flat.last(), Some(Node::End));
        if end {
            flat.pop();
        }
        let mut pieces = Vec::with_capacity(flat.len());
        for n in flat {
            pieces.push(piece(n)?);
        }
        if !start {
            // Without a start anchor only literals: a search for them.
            let mut lit = Vec::new();
            for p in &pieces {
                match (&p.literal, p.single_byte()) {
                    (Some(l), _) => lit.extend_from_slice(l),
                    (None, Some(b)) if p.min == 1 && p.max == 1 => lit.push(b),
                    _ => return None,
                }
            }
            let lit = lit.into_boxed_slice();
            return Some(if end {
                Simple::EndsWith(lit)
            } else {
                Simple::Contains(lit)
            });
        }
        // Runs of single characters read as one literal.
        let mut merged: Vec<Piece> = Vec::with_capacity(pieces.len());
        for p in pieces {
            let byte = if p.min == 1 && p.max == 1 {
                p.single_byte()
            } else {
                None
            };
            let one: Option<Vec<u8>> = match (&p.literal, byte) {
                (Some(l), _) => Some(l.to_vec()),
                (None, Some(b)) => Some(vec![b]),
                _ => None,
            };
            match (one, merged.last_mut()) {
                (Some(bytes), Some(last)) if last.literal.is_some() => {
                    let mut l = last.literal.take().unwrap_or_default().into_vec();
                    l.extend_from_slice(&bytes);
                    last.literal = Some(l.into_boxed_slice());
                }
                (Some(bytes), _) => merged.push(Piece {
                    set: [0; 2],
                    literal: Some(bytes.into_boxed_slice()),
                    min: 1,
                    max: 1,
                }),
                (None, _) => merged.push(p),
            }
        }
        let pieces = merged;
        // Greedy reading is exact only where a variable piece cannot give back characters.
        for (i, p) in pieces.iter().enumerate() {
            if p.min == p.max {
                continue;
            }
            match pieces.get(i + 1) {
                None => {}
                Some(next) => {
                    let disjoint = match &next.literal {
                        Some(l) => !p.has(l[0]),
                        None => p.set[0] & next.set[0] == 0 && p.set[1] & next.set[1] == 0,
                    };
                    if !disjoint || next.min == 0 {
                        return None;
                    }
                }
            }
        }
        Some(Simple::Sequence {
            pieces: pieces.into_boxed_slice(),
            end,
        })
    }

    /// Whether the pattern matches `haystack` (valid UTF-8, as every instance string is).
    #[inline]
    pub(super) fn is_match(&self, haystack: &str) -> bool {
        let b = haystack.as_bytes();
        match self {
            Simple::Contains(lit) => memchr::memmem::find(b, lit).is_some(),
            Simple::EndsWith(lit) => b.ends_with(lit),
            Simple::Sequence { pieces, end } => {
                let mut i = 0;
                let last = pieces.len().wrapping_sub(1);
                for (k, p) in pieces.iter().enumerate() {
                    if let Some(lit) = &p.literal {
                        if !b[i..].starts_with(lit) {
                            return false;
                        }
                        i += lit.len();
                        continue;
                    }
                    // The last piece of an unanchored end needs only its minimum.
                    let want = if k == last && !*end { p.min } else { p.max };
                    let mut n = 0;
                    while n < want && i < b.len() && p.has(b[i]) {
                        i += 1;
                        n += 1;
                    }
                    if n < p.min {
                        return false;
                    }
                }
                !*end || i == b.len()
            }
        }
    }
}

/// The pattern as a flat list of nodes (groups dissolved), if it has no alternation.
fn flatten<'a>(n: &'a Node, out: &mut Vec<&'a Node>) -> Option<()> {
    match n {
        Node::Empty => {}
        Node::Concat(v) => {
            for x in v {
                flatten(x, out)?;
            }
        }
        Node::Group { body, .. } => flatten(body, out)?,
        Node::Char(_) | Node::Set(_) | Node::Repeat { .. } => out.push(n),
        Node::Start if out.is_empty() => out.push(n),
        Node::End => out.push(n),
        _ => return None,
    }
    Some(())
}

/// One piece for a character, a class, or a repetition of one of them.
fn piece(n: &Node) -> Option<Piece> {
    let (atom, min, max) = match n {
        Node::Repeat { body, min, max, .. } => {
            let mut body = &**body;
            while let Node::Group { body: inner, .. } = body {
                body = inner;
            }
            (body, *min, max.unwrap_or(u32::MAX))
        }
        // `End` inside the sequence (`a$b`) is not a piece.
        Node::Char(_) | Node::Set(_) => (n, 1, 1),
        _ => return None,
    };
    if min > max {
        return None;
    }
    let mut set = [0u64; 2];
    match atom {
        Node::Char(c) if *c < 128 => set[(*c >> 6) as usize] |= 1 << (c & 63),
        Node::Char(c) => {
            // A literal character beyond ASCII, exactly once (a lone surrogate: no).
            let ch = char::from_u32(*c)?;
            if (min, max) != (1, 1) {
                return None;
            }
            let mut buf = [0u8; 4];
            return Some(Piece {
                set,
                literal: Some(ch.encode_utf8(&mut buf).as_bytes().into()),
                min,
                max,
            });
        }
        Node::Set(s) if !s.negated && s.properties.is_empty() => {
            for &(lo, hi) in &s.ranges {
                if hi >= 128 {
                    return None;
                }
                for c in lo..=hi {
                    set[(c >> 6) as usize] |= 1 << (c & 63);
                }
            }
        }
        _ => return None,
    }
    Some(Piece {
        set,
        literal: None,
        min,
        max,
    })
}
