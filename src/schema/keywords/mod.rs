//! The JSON Schema keywords jsongate knows, as one table: [`Keyword`] names each one once,
//! with the dialects that define it, its kind (identifier, reference, applicator, assertion,
//! annotation), how its value holds subschemas, and the properties the rest of the crate
//! asks about (does it descend into members or items, is it an upper or a lower bound, does a
//! `false` subschema under it fail with its own name). Every list of keyword names in the
//! crate is a filter over [`Keyword::ALL`]: the compiler's index of subschemas, the output
//! formats' location walker, the MCP reasons' masking of author-chosen names, the pin diff's
//! classification and the runtime's naming of `false` subschemas.
//!
//! One file per keyword group holds the group's compile step, its compact record, the one
//! check both validator tiers call, what a violation means ([`summary`]) and what a failure
//! expected, for the messages a person reads (the MCP proxy's masked wording of an
//! upstream's own schema is still `crate::mcp::expect`'s). The groups moved here so far:
//! - [`array`]: `uniqueItems` with the counts of items;
//! - [`count`]: `minItems`, `maxItems`, `minProperties`, `maxProperties`;
//! - [`number`]: `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`;
//! - [`string`]: `minLength`, `maxLength`, `pattern`, and `format` where it asserts;
//! - [`types`]: `type`, as the one bit set of JSON types both tiers read;
//! - [`values`]: `enum` and `const`, and the compiled constants they hold.
//!
//! The other groups (objects, arrays, applicators, `unevaluated*`,
//! references) still have their compile step in `super::compile`, their fields in
//! `super::program::Keywords`, and their checks in each tier.

pub(crate) mod array;
pub(crate) mod count;
pub(crate) mod number;
pub(crate) mod string;
pub(crate) mod types;
pub(crate) mod values;

use super::Draft;
use crate::json::write_string;

/// Why a value fails a group's check (both tiers read it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The keyword that said no.
    Keyword(&'static str),
    /// A pattern search ran out of its budget (the document is then rejected as over
    /// budget, at `pattern`).
    Budget,
}

/// What a violation of the keyword named `keyword` means, in a few words (`string length is
/// out of bounds`), for the groups that live here; `None` for the others.
pub(crate) fn summary(keyword: &str) -> Option<&'static str> {
    let k = Keyword::from_name(keyword)?;
    number::summary(k).or_else(|| string::summary(k))
}

/// Characters of one constant written in a message before it is cut.
pub(crate) const MAX_CONSTANT_CHARS: usize = 64;

/// A schema string as a JSON string, cut to [`MAX_CONSTANT_CHARS`].
pub(crate) fn quoted(s: &str) -> String {
    let mut out = String::new();
    write_string(&mut out, s);
    cut(out)
}

/// `s` cut after [`MAX_CONSTANT_CHARS`] characters, with `…` where it was cut.
pub(crate) fn cut(s: String) -> String {
    match s.char_indices().nth(MAX_CONSTANT_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s,
    }
}

/// What a keyword is for.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // read by the MCP layers only
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Names or describes the schema resource itself (`$schema`, `$id`, `$anchor`, …).
    Identifier,
    /// Follows a reference to another subschema (`$ref`, `$dynamicRef`, `$recursiveRef`).
    Reference,
    /// Applies subschemas (to the same value, its members or its items) or holds them.
    Applicator,
    /// Passes or fails a value on its own (`type`, `minimum`, `required`, `format`, …).
    Assertion,
    /// Only annotates (`title`, `description`, `default`, …): never fails a value.
    Annotation,
}

/// How a keyword's value holds subschemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Holds {
    /// It holds none.
    Nothing,
    /// One subschema (`not`, `additionalProperties`).
    One,
    /// One subschema, or in drafts before 2020-12 an array of them (`items`).
    OneOrArray,
    /// An array of subschemas (`allOf`, `prefixItems`).
    Array,
    /// An object whose values are subschemas (`properties`, `$defs`).
    Map,
    /// A reference to one subschema elsewhere (`$ref`).
    Reference,
}

/// Which bound a keyword sets on a count or a number.
#[cfg_attr(not(feature = "mcp"), allow(dead_code))] // read by the MCP layers only
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// `maximum`, `maxLength`, … : raising it widens what is accepted.
    Upper,
    /// `minimum`, `minLength`, … : lowering it widens what is accepted.
    Lower,
}

/// Drafts as bits, for [`Keyword::dialects`].
const D4: u8 = 1;
const D6: u8 = 2;
const D7: u8 = 4;
const D2019: u8 = 8;
const D2020: u8 = 16;
const ALL_DRAFTS: u8 = D4 | D6 | D7 | D2019 | D2020;
const FROM6: u8 = D6 | D7 | D2019 | D2020;
const FROM7: u8 = D7 | D2019 | D2020;
const FROM2019: u8 = D2019 | D2020;
const TO7: u8 = D4 | D6 | D7;

macro_rules! keywords {
    ($( $(#[$doc:meta])* $v:ident = $name:literal, $kind:ident, $holds:ident, $drafts:expr; )*) => {
        /// A JSON Schema keyword of any supported draft. [`Keyword::ALL`] lists them in the
        /// order the compiler indexes subschemas (single ones, `items`, arrays, maps).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub(crate) enum Keyword {
            $( $(#[$doc])* $v, )*
        }

        impl Keyword {
            /// Every keyword, in declaration order.
            pub(crate) const ALL: &'static [Keyword] = &[$(Keyword::$v),*];

            /// The keyword as a schema writes it.
            #[inline]
            pub(crate) const fn name(self) -> &'static str {
                match self { $(Keyword::$v => $name,)* }
            }

            /// What the keyword is for.
            #[inline]
            #[cfg_attr(not(feature = "mcp"), allow(dead_code))] // read by the MCP layers only
            pub(crate) const fn kind(self) -> Kind {
                match self { $(Keyword::$v => Kind::$kind,)* }
            }

            /// How its value holds subschemas.
            #[inline]
            pub(crate) const fn holds(self) -> Holds {
                match self { $(Keyword::$v => Holds::$holds,)* }
            }

            /// Whether `draft` defines the keyword.
            pub(crate) const fn in_draft(self, draft: Draft) -> bool {
                let bits: u8 = match self { $(Keyword::$v => $drafts,)* };
                bits & draft_bit(draft) != 0
            }
        }
    };
}

const fn draft_bit(d: Draft) -> u8 {
    match d {
        Draft::Draft4 => D4,
        Draft::Draft6 => D6,
        Draft::Draft7 => D7,
        Draft::Draft201909 => D2019,
        Draft::Draft202012 => D2020,
    }
}

keywords! {
    Schema = "$schema", Identifier, Nothing, ALL_DRAFTS;
    Id = "$id", Identifier, Nothing, FROM6;
    /// Draft-04's `id`.
    LegacyId = "id", Identifier, Nothing, D4;
    Anchor = "$anchor", Identifier, Nothing, FROM2019;
    DynamicAnchor = "$dynamicAnchor", Identifier, Nothing, D2020;
    RecursiveAnchor = "$recursiveAnchor", Identifier, Nothing, D2019;
    Vocabulary = "$vocabulary", Identifier, Nothing, FROM2019;
    Comment = "$comment", Annotation, Nothing, FROM7;
    Ref = "$ref", Reference, Reference, ALL_DRAFTS;
    DynamicRef = "$dynamicRef", Reference, Reference, D2020;
    RecursiveRef = "$recursiveRef", Reference, Reference, D2019;
    AdditionalProperties = "additionalProperties", Applicator, One, ALL_DRAFTS;
    PropertyNames = "propertyNames", Applicator, One, FROM6;
    Contains = "contains", Applicator, One, FROM6;
    Not = "not", Applicator, One, ALL_DRAFTS;
    If = "if", Applicator, One, FROM7;
    Then = "then", Applicator, One, FROM7;
    Else = "else", Applicator, One, FROM7;
    UnevaluatedItems = "unevaluatedItems", Applicator, One, FROM2019;
    UnevaluatedProperties = "unevaluatedProperties", Applicator, One, FROM2019;
    AdditionalItems = "additionalItems", Applicator, One, D4 | D6 | D7 | D2019;
    ContentSchema = "contentSchema", Applicator, One, FROM2019;
    Items = "items", Applicator, OneOrArray, ALL_DRAFTS;
    AllOf = "allOf", Applicator, Array, ALL_DRAFTS;
    AnyOf = "anyOf", Applicator, Array, ALL_DRAFTS;
    OneOf = "oneOf", Applicator, Array, ALL_DRAFTS;
    PrefixItems = "prefixItems", Applicator, Array, D2020;
    Properties = "properties", Applicator, Map, ALL_DRAFTS;
    PatternProperties = "patternProperties", Applicator, Map, ALL_DRAFTS;
    Defs = "$defs", Applicator, Map, FROM2019;
    Definitions = "definitions", Applicator, Map, TO7;
    DependentSchemas = "dependentSchemas", Applicator, Map, FROM2019;
    /// Drafts 4 to 7: `dependentSchemas` and `dependentRequired` in one.
    Dependencies = "dependencies", Applicator, Map, TO7;
    Type = "type", Assertion, Nothing, ALL_DRAFTS;
    Enum = "enum", Assertion, Nothing, ALL_DRAFTS;
    Const = "const", Assertion, Nothing, FROM6;
    MultipleOf = "multipleOf", Assertion, Nothing, ALL_DRAFTS;
    Maximum = "maximum", Assertion, Nothing, ALL_DRAFTS;
    ExclusiveMaximum = "exclusiveMaximum", Assertion, Nothing, ALL_DRAFTS;
    Minimum = "minimum", Assertion, Nothing, ALL_DRAFTS;
    ExclusiveMinimum = "exclusiveMinimum", Assertion, Nothing, ALL_DRAFTS;
    MaxLength = "maxLength", Assertion, Nothing, ALL_DRAFTS;
    MinLength = "minLength", Assertion, Nothing, ALL_DRAFTS;
    Pattern = "pattern", Assertion, Nothing, ALL_DRAFTS;
    MaxItems = "maxItems", Assertion, Nothing, ALL_DRAFTS;
    MinItems = "minItems", Assertion, Nothing, ALL_DRAFTS;
    UniqueItems = "uniqueItems", Assertion, Nothing, ALL_DRAFTS;
    MaxContains = "maxContains", Assertion, Nothing, FROM2019;
    MinContains = "minContains", Assertion, Nothing, FROM2019;
    MaxProperties = "maxProperties", Assertion, Nothing, ALL_DRAFTS;
    MinProperties = "minProperties", Assertion, Nothing, ALL_DRAFTS;
    Required = "required", Assertion, Nothing, ALL_DRAFTS;
    DependentRequired = "dependentRequired", Assertion, Nothing, FROM2019;
    /// An assertion only where format assertion is on; an annotation otherwise.
    Format = "format", Assertion, Nothing, ALL_DRAFTS;
    ContentEncoding = "contentEncoding", Assertion, Nothing, FROM7;
    ContentMediaType = "contentMediaType", Assertion, Nothing, FROM7;
    Title = "title", Annotation, Nothing, ALL_DRAFTS;
    Description = "description", Annotation, Nothing, ALL_DRAFTS;
    Default = "default", Annotation, Nothing, ALL_DRAFTS;
    Examples = "examples", Annotation, Nothing, FROM6;
    Deprecated = "deprecated", Annotation, Nothing, FROM2019;
    ReadOnly = "readOnly", Annotation, Nothing, FROM7;
    WriteOnly = "writeOnly", Annotation, Nothing, FROM7;
}

/// How many keywords hold subschemas as `h` does.
const fn count_holding(h: Holds) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < Keyword::ALL.len() {
        if Keyword::ALL[i].holds() as u8 == h as u8 {
            n += 1;
        }
        i += 1;
    }
    n
}

/// The keywords that hold subschemas as `h` does, in [`Keyword::ALL`]'s order.
const fn filter_holding<const N: usize>(h: Holds) -> [Keyword; N] {
    let mut out = [Keyword::Schema; N];
    let (mut i, mut n) = (0, 0);
    while i < Keyword::ALL.len() {
        if Keyword::ALL[i].holds() as u8 == h as u8 {
            out[n] = Keyword::ALL[i];
            n += 1;
        }
        i += 1;
    }
    out
}

const HOLDING_ONE: [Keyword; count_holding(Holds::One)] = filter_holding(Holds::One);
const HOLDING_ARRAY: [Keyword; count_holding(Holds::Array)] = filter_holding(Holds::Array);
const HOLDING_MAP: [Keyword; count_holding(Holds::Map)] = filter_holding(Holds::Map);

impl Keyword {
    /// The keywords whose value holds subschemas as `h` does (one, an array, a map), in
    /// [`Keyword::ALL`]'s order, which is the order the compiler indexes them in. Computed
    /// from the table when the crate is built.
    pub(crate) fn holding(h: Holds) -> &'static [Keyword] {
        match h {
            Holds::One => &HOLDING_ONE,
            Holds::Array => &HOLDING_ARRAY,
            Holds::Map => &HOLDING_MAP,
            Holds::Nothing | Holds::OneOrArray | Holds::Reference => &[],
        }
    }

    /// The keyword written `name`, in any draft.
    pub(crate) fn from_name(name: &str) -> Option<Keyword> {
        Keyword::ALL.iter().copied().find(|k| k.name() == name)
    }

    /// Whether its subschemas apply to a member or an item of the value (one more instance
    /// segment), not to the value itself.
    pub(crate) fn descends(self) -> bool {
        use Keyword as K;
        matches!(
            self,
            K::Properties
                | K::PatternProperties
                | K::AdditionalProperties
                | K::PropertyNames
                | K::Items
                | K::AdditionalItems
                | K::PrefixItems
                | K::Contains
                | K::UnevaluatedItems
                | K::UnevaluatedProperties
        )
    }

    /// Whether the keyword's absence means a `true` subschema, so that adding it can only
    /// narrow what is accepted (`additionalProperties`, `items`, …).
    pub(crate) fn open_when_absent(self) -> bool {
        use Keyword as K;
        matches!(
            self,
            K::AdditionalProperties
                | K::UnevaluatedProperties
                | K::Items
                | K::AdditionalItems
                | K::UnevaluatedItems
                | K::PropertyNames
        )
    }

    /// Whether a `false` subschema reached through this keyword fails with the keyword's
    /// name (`additionalProperties: false` names `additionalProperties`, not `false`).
    pub(crate) fn names_false(self) -> bool {
        self.open_when_absent() || self == Keyword::Contains
    }
}

/// The facts the MCP layers read: the reasons' masking of author-chosen names
/// (`crate::mcp::reply`) and the pin diff's classification (`crate::mcp::pin`).
#[cfg_attr(not(feature = "mcp"), allow(dead_code))]
impl Keyword {
    /// Whether `name` is a keyword that can be a segment of a keyword location: any keyword
    /// but identifiers and annotations, which never fail and hold no subschema.
    pub(crate) fn structural(name: &str) -> bool {
        Keyword::from_name(name)
            .is_some_and(|k| !matches!(k.kind(), Kind::Identifier | Kind::Annotation))
    }

    /// Whether the next segment of a location after this keyword is a name the schema's
    /// author chose (a property, a definition, a dependency's key).
    pub(crate) fn names_follow(self) -> bool {
        self.holds() == Holds::Map || self == Keyword::DependentRequired
    }

    /// The bound the keyword sets, if it is one.
    pub(crate) fn bound(self) -> Option<Bound> {
        use Keyword as K;
        match self {
            K::Maximum
            | K::ExclusiveMaximum
            | K::MaxLength
            | K::MaxItems
            | K::MaxProperties
            | K::MaxContains => Some(Bound::Upper),
            K::Minimum
            | K::ExclusiveMinimum
            | K::MinLength
            | K::MinItems
            | K::MinProperties
            | K::MinContains => Some(Bound::Lower),
            _ => None,
        }
    }

    /// Whether the keyword's presence can only restrict what is accepted while a change of
    /// its value cannot be ordered (`pattern`, `const`, `format`, `multipleOf`, content).
    pub(crate) fn restricts(self) -> bool {
        use Keyword as K;
        matches!(
            self,
            K::Const
                | K::Pattern
                | K::Format
                | K::MultipleOf
                | K::ContentMediaType
                | K::ContentEncoding
        )
    }

    /// Whether the keyword only annotates.
    pub(crate) fn is_annotation(self) -> bool {
        self.kind() == Kind::Annotation
    }
}

#[cfg(test)]
mod tests {
    use super::{Holds, Keyword, Kind};
    use crate::Draft;

    #[test]
    fn names_are_unique_and_round_trip() {
        for (i, k) in Keyword::ALL.iter().enumerate() {
            assert_eq!(Keyword::from_name(k.name()), Some(*k));
            assert!(Keyword::ALL[..i].iter().all(|o| o.name() != k.name()));
        }
        assert_eq!(Keyword::from_name("maxlength"), None);
    }

    #[test]
    fn every_draft_has_the_core_and_each_keyword_some_draft() {
        let drafts = [
            Draft::Draft4,
            Draft::Draft6,
            Draft::Draft7,
            Draft::Draft201909,
            Draft::Draft202012,
        ];
        for k in Keyword::ALL {
            assert!(drafts.iter().any(|d| k.in_draft(*d)), "{k:?}");
        }
        assert!(Keyword::LegacyId.in_draft(Draft::Draft4));
        assert!(!Keyword::Id.in_draft(Draft::Draft4));
        assert!(!Keyword::PrefixItems.in_draft(Draft::Draft201909));
        assert!(Keyword::RecursiveRef.in_draft(Draft::Draft201909));
        assert!(!Keyword::DynamicRef.in_draft(Draft::Draft201909));
    }

    #[test]
    fn properties_agree_with_kind_and_holds() {
        for &k in Keyword::ALL {
            if k.descends() || k.names_false() {
                assert_eq!(k.kind(), Kind::Applicator, "{k:?}");
            }
            if k.bound().is_some() || k.restricts() {
                assert_eq!(k.kind(), Kind::Assertion, "{k:?}");
            }
            assert_eq!(k.holds() == Holds::Reference, k.kind() == Kind::Reference);
        }
        assert!(Keyword::structural("$ref") && !Keyword::structural("title"));
        for h in [Holds::One, Holds::Array, Holds::Map] {
            let all: Vec<_> = Keyword::ALL.iter().filter(|k| k.holds() == h).collect();
            assert_eq!(all, Keyword::holding(h).iter().collect::<Vec<_>>());
        }
        assert!(!Keyword::structural("$id") && !Keyword::structural("nope"));
    }
}
