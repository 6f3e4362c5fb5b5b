//! Resource limits enforced by the scanner while it reads.
//!
//! This module owns the [`Limits`] value and its documented defaults. It does no checking
//! itself: the scanner compares against these numbers at the first byte that would cross one.
//!
//! | limit | default | what it counts |
//! |---|---|---|
//! | [`max_bytes`](Limits::max_bytes) | [`DEFAULT_MAX_BYTES`] (16 MiB) | every input byte, whitespace included |
//! | [`max_depth`](Limits::max_depth) | [`DEFAULT_MAX_DEPTH`] (128) | open arrays/objects; a top-level scalar is depth 0, `[]` is depth 1 |
//! | [`max_name_bytes`](Limits::max_name_bytes) | [`DEFAULT_MAX_NAME_BYTES`] (4 KiB) | UTF-8 bytes of one member name, after unescaping |
//! | [`max_string_bytes`](Limits::max_string_bytes) | [`DEFAULT_MAX_STRING_BYTES`] (4 MiB) | UTF-8 bytes of one string value, after unescaping |
//! | [`max_number_bytes`](Limits::max_number_bytes) | [`DEFAULT_MAX_NUMBER_BYTES`] (128) | bytes of one number's text |
//! | [`max_members`](Limits::max_members) | [`DEFAULT_MAX_MEMBERS`] (65,536) | members of one object |
//! | [`max_items`](Limits::max_items) | [`DEFAULT_MAX_ITEMS`] (1,000,000) | items of one array |
//!
//! Every limit can be lifted with [`UNLIMITED`] (or [`Limits::unlimited`] for all of them).
//! Lifting a limit lifts the bound on the memory it protects, too: with unlimited depth the
//! nesting stack grows with the input.

/// Value of a limit that never triggers.
///
/// # Example
/// ```
/// use jsongate::{check, Limits, UNLIMITED};
/// let long = format!("\"{}\"", "x".repeat(5 << 20));
/// assert!(check(long.as_bytes(), Limits::new()).is_err());
/// assert!(check(long.as_bytes(), Limits::new().max_string_bytes(UNLIMITED)).is_ok());
/// ```
pub const UNLIMITED: u64 = u64::MAX;
/// Default for [`Limits::max_bytes`]: 16 MiB.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_BYTES};
/// assert_eq!(Limits::new().get_max_bytes(), DEFAULT_MAX_BYTES);
/// ```
pub const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;
/// Default for [`Limits::max_depth`]: 128 nested arrays/objects.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_DEPTH};
/// assert_eq!(Limits::new().get_max_depth(), DEFAULT_MAX_DEPTH);
/// ```
pub const DEFAULT_MAX_DEPTH: u64 = 128;
/// Default for [`Limits::max_name_bytes`]: 4 KiB.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_NAME_BYTES};
/// assert_eq!(Limits::new().get_max_name_bytes(), DEFAULT_MAX_NAME_BYTES);
/// ```
pub const DEFAULT_MAX_NAME_BYTES: u64 = 4 * 1024;
/// Default for [`Limits::max_string_bytes`]: 4 MiB.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_STRING_BYTES};
/// assert_eq!(Limits::new().get_max_string_bytes(), DEFAULT_MAX_STRING_BYTES);
/// ```
pub const DEFAULT_MAX_STRING_BYTES: u64 = 4 * 1024 * 1024;
/// Default for [`Limits::max_number_bytes`]: 128 bytes of number text.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_NUMBER_BYTES};
/// assert_eq!(Limits::new().get_max_number_bytes(), DEFAULT_MAX_NUMBER_BYTES);
/// ```
pub const DEFAULT_MAX_NUMBER_BYTES: u64 = 128;
/// Default for [`Limits::max_members`]: 65,536 members per object.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_MEMBERS};
/// assert_eq!(Limits::new().get_max_members(), DEFAULT_MAX_MEMBERS);
/// ```
pub const DEFAULT_MAX_MEMBERS: u64 = 65_536;
/// Default for [`Limits::max_items`]: 1,000,000 items per array.
///
/// # Example
/// ```
/// use jsongate::{Limits, DEFAULT_MAX_ITEMS};
/// assert_eq!(Limits::new().get_max_items(), DEFAULT_MAX_ITEMS);
/// ```
pub const DEFAULT_MAX_ITEMS: u64 = 1_000_000;

/// The limits a scanner enforces. Built with consuming setters:
///
/// # Example
/// ```
/// use jsongate::{Limits, UNLIMITED};
/// let limits = Limits::new().max_depth(16).max_bytes(UNLIMITED);
/// assert_eq!(limits.get_max_depth(), 16);
/// assert_eq!(limits.get_max_bytes(), UNLIMITED);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Limits {
    pub(crate) bytes: u64,
    pub(crate) depth: u64,
    pub(crate) name_bytes: u64,
    pub(crate) string_bytes: u64,
    pub(crate) number_bytes: u64,
    pub(crate) members: u64,
    pub(crate) items: u64,
    /// The I-JSON profile's rejection of noncharacters (off: RFC 8259 accepts them).
    pub(crate) noncharacters: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Self::new()
    }
}

macro_rules! limit_accessors {
    ($($field:ident, $set:ident, $get:ident, $default:ident, $kind:ident, $doc:literal, $what:literal;)*) => {$(
        #[doc = concat!("Sets the maximum ", $what, " ([`UNLIMITED`] lifts it). Default: [`", stringify!($default), "`].")]
        ///
        /// # Example
        /// ```
        #[doc = concat!("use jsongate::{check, ErrorKind, Limits};")]
        #[doc = concat!("let doc = br#\"", $doc, "\"#;")]
        #[doc = concat!("assert!(check(doc, Limits::new().", stringify!($set), "(9)).is_ok());")]
        #[doc = concat!("let err = check(doc, Limits::new().", stringify!($set), "(1)).unwrap_err();")]
        #[doc = concat!("assert_eq!(err.kind(), &ErrorKind::", stringify!($kind), " { limit: 1 });")]
        /// ```
        #[must_use]
        pub const fn $set(mut self, limit: u64) -> Self {
            self.$field = limit;
            self
        }
        #[doc = concat!("The maximum ", $what, ".")]
        ///
        /// # Example
        /// ```
        #[doc = concat!("use jsongate::{Limits, ", stringify!($default), "};")]
        #[doc = concat!("assert_eq!(Limits::new().", stringify!($get), "(), ", stringify!($default), ");")]
        #[doc = concat!("assert_eq!(Limits::new().", stringify!($set), "(7).", stringify!($get), "(), 7);")]
        /// ```
        pub const fn $get(&self) -> u64 {
            self.$field
        }
    )*};
}

impl Limits {
    /// The documented defaults (see the module table); the same as [`Limits::default`].
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, ErrorKind, Limits, DEFAULT_MAX_DEPTH};
    /// assert_eq!(Limits::new(), Limits::default());
    /// assert_eq!(Limits::new().get_max_depth(), DEFAULT_MAX_DEPTH);
    /// let deep = "[".repeat(129) + &"]".repeat(129);
    /// let err = check(deep.as_bytes(), Limits::new()).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::TooDeep { limit: DEFAULT_MAX_DEPTH });
    /// ```
    pub const fn new() -> Self {
        Self {
            bytes: DEFAULT_MAX_BYTES,
            depth: DEFAULT_MAX_DEPTH,
            name_bytes: DEFAULT_MAX_NAME_BYTES,
            string_bytes: DEFAULT_MAX_STRING_BYTES,
            number_bytes: DEFAULT_MAX_NUMBER_BYTES,
            members: DEFAULT_MAX_MEMBERS,
            items: DEFAULT_MAX_ITEMS,
            noncharacters: false,
        }
    }

    /// Every limit lifted. Duplicate names and the strict grammar are still enforced.
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, ErrorKind, Limits, UNLIMITED};
    /// let deep = "[".repeat(500) + &"]".repeat(500);
    /// assert!(check(deep.as_bytes(), Limits::unlimited()).is_ok());
    /// assert_eq!(Limits::unlimited().get_max_bytes(), UNLIMITED);
    /// let err = check(br#"{"a":1,"a":2}"#, Limits::unlimited()).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::DuplicateName);
    /// ```
    pub const fn unlimited() -> Self {
        Self {
            bytes: UNLIMITED,
            depth: UNLIMITED,
            name_bytes: UNLIMITED,
            string_bytes: UNLIMITED,
            number_bytes: UNLIMITED,
            members: UNLIMITED,
            items: UNLIMITED,
            noncharacters: false,
        }
    }

    /// Sets the limit called `name` (`"max_bytes"`, `"max_depth"`, `"max_name_bytes"`,
    /// `"max_string_bytes"`, `"max_number_bytes"`, `"max_members"`, `"max_items"`, as in
    /// contract and policy files); `None` for any other name.
    ///
    /// # Example
    /// ```
    /// use jsongate::Limits;
    /// let l = Limits::new().set_by_name("max_depth", 8).unwrap();
    /// assert_eq!(l.get_max_depth(), 8);
    /// assert!(Limits::new().set_by_name("max_width", 8).is_none());
    /// ```
    #[must_use]
    pub const fn set_by_name(self, name: &str, limit: u64) -> Option<Self> {
        Some(match name.as_bytes() {
            b"max_bytes" => self.max_bytes(limit),
            b"max_depth" => self.max_depth(limit),
            b"max_name_bytes" => self.max_name_bytes(limit),
            b"max_string_bytes" => self.max_string_bytes(limit),
            b"max_number_bytes" => self.max_number_bytes(limit),
            b"max_members" => self.max_members(limit),
            b"max_items" => self.max_items(limit),
            _ => return None,
        })
    }

    /// Every limit by the name [`set_by_name`](Self::set_by_name) takes, in that order
    /// (for reports, diffs of two contracts' limits and bindings).
    ///
    /// # Example
    /// ```
    /// use jsongate::Limits;
    /// let named = Limits::new().max_depth(8).by_name();
    /// assert_eq!(named[1], ("max_depth", 8));
    /// let again = named
    ///     .iter()
    ///     .try_fold(Limits::unlimited(), |l, &(n, v)| l.set_by_name(n, v))
    ///     .unwrap();
    /// assert_eq!(again.by_name(), named);
    /// ```
    pub const fn by_name(&self) -> [(&'static str, u64); 7] {
        [
            ("max_bytes", self.bytes),
            ("max_depth", self.depth),
            ("max_name_bytes", self.name_bytes),
            ("max_string_bytes", self.string_bytes),
            ("max_number_bytes", self.number_bytes),
            ("max_members", self.members),
            ("max_items", self.items),
        ]
    }

    /// The I-JSON profile (RFC 7493 §2.1): also reject strings and member names that contain
    /// a Unicode noncharacter (U+FDD0–U+FDEF, and U+FFFE/U+FFFF in every plane), raw or
    /// written as a `\u` escape, with [`ErrorKind::Noncharacter`](crate::ErrorKind). Off by
    /// default: RFC 8259 accepts them.
    ///
    /// # Example
    /// ```
    /// use jsongate::{check, ErrorKind, Limits};
    /// assert!(check(br#""\uFFFF""#, Limits::new()).is_ok());
    /// let err = check(br#""\uFFFF""#, Limits::new().i_json(true)).unwrap_err();
    /// assert_eq!(err.kind(), &ErrorKind::Noncharacter);
    /// ```
    #[must_use]
    pub const fn i_json(mut self, on: bool) -> Self {
        self.noncharacters = on;
        self
    }

    /// Whether the I-JSON profile is on (see [`i_json`](Self::i_json)).
    ///
    /// # Example
    /// ```
    /// use jsongate::Limits;
    /// assert!(!Limits::new().get_i_json());
    /// assert!(Limits::new().i_json(true).get_i_json());
    /// ```
    pub const fn get_i_json(&self) -> bool {
        self.noncharacters
    }

    limit_accessors! {
        bytes, max_bytes, get_max_bytes, DEFAULT_MAX_BYTES, TooLarge, "[1, 2]",
            "number of input bytes, whitespace included";
        depth, max_depth, get_max_depth, DEFAULT_MAX_DEPTH, TooDeep, "[[1]]",
            "nesting depth (a top-level scalar is depth 0, `[]` depth 1)";
        name_bytes, max_name_bytes, get_max_name_bytes, DEFAULT_MAX_NAME_BYTES, NameTooLong,
            r#"{"ab":1}"#, "UTF-8 length of a member name after unescaping";
        string_bytes, max_string_bytes, get_max_string_bytes, DEFAULT_MAX_STRING_BYTES,
            StringTooLong, r#""ab""#, "UTF-8 length of a string value after unescaping";
        number_bytes, max_number_bytes, get_max_number_bytes, DEFAULT_MAX_NUMBER_BYTES,
            NumberTooLong, "12", "length of a number's text";
        members, max_members, get_max_members, DEFAULT_MAX_MEMBERS, TooManyMembers,
            r#"{"a":1,"b":2}"#, "number of members in one object";
        items, max_items, get_max_items, DEFAULT_MAX_ITEMS, TooManyItems, "[1,2]",
            "number of items in one array";
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_documented_constants() {
        let l = Limits::default();
        assert_eq!(l.get_max_bytes(), 16 << 20);
        assert_eq!(l.get_max_depth(), 128);
        assert_eq!(l.get_max_name_bytes(), 4096);
        assert_eq!(l.get_max_string_bytes(), 4 << 20);
        assert_eq!(l.get_max_number_bytes(), 128);
        assert_eq!(l.get_max_members(), 65_536);
        assert_eq!(l.get_max_items(), 1_000_000);
    }

    #[test]
    fn unlimited_lifts_everything() {
        let l = Limits::unlimited();
        assert_eq!(l.get_max_bytes(), UNLIMITED);
        assert_eq!(l.get_max_items(), UNLIMITED);
        assert_eq!(Limits::new().max_items(3).get_max_items(), 3);
    }
}
