//! Compile budgets: how much work and memory one schema may cost to compile.
//!
//! In a proxy the schema comes from the same untrusted server as the document, so compiling
//! is attack surface. Compilation is linear in the schema's size (no re-walk per node, labels
//! shared between joined `$ref` edges), and these budgets cap that size in every dimension an
//! attacker could inflate. Each exhausted budget is a [`CompileError`](super::CompileError)
//! whose [`kind`](super::CompileError::kind) names it and carries its limit.
//!
//! | budget | default | counts |
//! |---|---|---|
//! | [`Nodes`](CompileBudget::Nodes) | [`DEFAULT_MAX_SCHEMA_NODES`] (100,000) | compiled subschemas and constants |
//! | [`Bytes`](CompileBudget::Bytes) | [`DEFAULT_MAX_SCHEMA_BYTES`] (16 MiB) | bytes of the schema plus every resource it loads |
//! | [`RefDepth`](CompileBudget::RefDepth) | [`DEFAULT_MAX_REF_DEPTH`] (1,000) | subschemas applied in place to one value, one inside the other (`$ref`, `allOf`, … chains) |
//! | [`Anchors`](CompileBudget::Anchors) | [`DEFAULT_MAX_ANCHORS`] (10,000) | `$id` resources, `$anchor`s and `$dynamicAnchor`s |
//! | [`Steps`](CompileBudget::Steps) | [`DEFAULT_MAX_COMPILE_STEPS`] (20,000,000) | compile work: one per location indexed, keyword read, edge, constant, pattern byte |

use std::fmt;

/// Default bound on the number of compiled subschemas and constants.
///
/// # Example
/// ```
/// use jsongate::{Schema, DEFAULT_MAX_SCHEMA_NODES};
/// let wide = format!("{{\"enum\":[{}0]}}", "0,".repeat(DEFAULT_MAX_SCHEMA_NODES));
/// assert!(Schema::compile(wide.as_bytes()).is_err());
/// assert!(Schema::options().max_nodes(usize::MAX).compile(wide.as_bytes()).is_ok());
/// ```
pub const DEFAULT_MAX_SCHEMA_NODES: usize = 100_000;
/// Default bound on the bytes of the schema and the resources it loads: 16 MiB.
///
/// # Example
/// ```
/// use jsongate::{CompileBudget, CompileErrorKind, Schema, DEFAULT_MAX_SCHEMA_BYTES};
/// let big = format!("{{\"description\":\"{}\"}}", "x".repeat(DEFAULT_MAX_SCHEMA_BYTES as usize));
/// let err = Schema::options().compile(big.as_bytes()).unwrap_err();
/// assert_eq!(
///     err.kind(),
///     CompileErrorKind::Budget { budget: CompileBudget::Bytes, limit: DEFAULT_MAX_SCHEMA_BYTES }
/// );
/// ```
pub const DEFAULT_MAX_SCHEMA_BYTES: u64 = 16 * 1024 * 1024;
/// Default bound on the depth of in-place application chains (`$ref` → `$ref` → …).
///
/// # Example
/// ```
/// use jsongate::{CompileBudget, CompileErrorKind, Schema, DEFAULT_MAX_REF_DEPTH};
/// // A chain of `$ref`s one link longer than the default.
/// let defs: Vec<String> = (0..=DEFAULT_MAX_REF_DEPTH)
///     .map(|i| format!("\"d{i}\":{{\"$ref\":\"#/$defs/d{}\"}}", i + 1))
///     .collect();
/// let schema = format!("{{\"$ref\":\"#/$defs/d0\",\"$defs\":{{{},\"d{}\":{{}}}}}}",
///     defs.join(","), DEFAULT_MAX_REF_DEPTH + 1);
/// let err = Schema::compile(schema.as_bytes()).unwrap_err();
/// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::RefDepth, .. }));
/// ```
pub const DEFAULT_MAX_REF_DEPTH: u64 = 1_000;
/// Default bound on `$id` resources and anchors.
///
/// # Example
/// ```
/// use jsongate::{CompileBudget, CompileErrorKind, Schema, DEFAULT_MAX_ANCHORS};
/// let defs: Vec<String> = (0..=DEFAULT_MAX_ANCHORS).map(|i| format!("\"d{i}\":{{\"$anchor\":\"a{i}\"}}")).collect();
/// let schema = format!("{{\"$defs\":{{{}}}}}", defs.join(","));
/// let err = Schema::options().validate_schema(false).compile(schema.as_bytes()).unwrap_err();
/// assert!(matches!(err.kind(), CompileErrorKind::Budget { budget: CompileBudget::Anchors, .. }));
/// ```
pub const DEFAULT_MAX_ANCHORS: u64 = 10_000;
/// Default bound on compile steps.
///
/// # Example
/// ```
/// use jsongate::{Schema, DEFAULT_MAX_COMPILE_STEPS};
/// // An ordinary schema takes a few steps per keyword, far below the default.
/// assert!(Schema::compile(br#"{"properties":{"id":{"type":"string","pattern":"^c-[0-9]+$"}}}"#).is_ok());
/// assert!(Schema::options().max_compile_steps(DEFAULT_MAX_COMPILE_STEPS).compile(b"{}").is_ok());
/// ```
pub const DEFAULT_MAX_COMPILE_STEPS: u64 = 20_000_000;

/// A compile budget that a schema exhausted (see the module table for what each counts).
///
/// # Example
/// ```
/// use jsongate::{CompileBudget, CompileErrorKind, Schema};
/// let err = Schema::options().max_nodes(1).compile(br#"{"not":{"type":"string"}}"#).unwrap_err();
/// let CompileErrorKind::Budget { budget, limit } = err.kind() else { panic!("{err}") };
/// assert_eq!((budget, limit), (CompileBudget::Nodes, 1));
/// assert_eq!(budget.name(), "nodes");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompileBudget {
    /// Compiled subschemas and constants.
    Nodes,
    /// Bytes of the schema and the resources it loads.
    Bytes,
    /// Depth of subschemas applied in place to one value.
    RefDepth,
    /// `$id` resources and anchors.
    Anchors,
    /// Compile steps.
    Steps,
}

impl CompileBudget {
    /// A stable name: `nodes`, `bytes`, `ref_depth`, `anchors`, `steps`.
    ///
    /// # Example
    /// ```
    /// use jsongate::CompileBudget;
    /// assert_eq!(CompileBudget::RefDepth.name(), "ref_depth");
    /// assert_eq!(CompileBudget::Steps.name(), "steps");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CompileBudget::Nodes => "nodes",
            CompileBudget::Bytes => "bytes",
            CompileBudget::RefDepth => "ref_depth",
            CompileBudget::Anchors => "anchors",
            CompileBudget::Steps => "steps",
        }
    }

    pub(crate) fn describe(self, limit: u64) -> String {
        match self {
            CompileBudget::Nodes => {
                format!("schema has more than {limit} subschemas and constants")
            }
            CompileBudget::Bytes => {
                format!("schema and its resources are larger than {limit} bytes")
            }
            CompileBudget::RefDepth => format!(
                "schema applies more than {limit} subschemas in place, one inside the other"
            ),
            CompileBudget::Anchors => format!("schema has more than {limit} resources and anchors"),
            CompileBudget::Steps => format!("compiling the schema takes more than {limit} steps"),
        }
    }
}

impl fmt::Display for CompileBudget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The limits one compilation runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Bounds {
    pub(crate) nodes: usize,
    pub(crate) bytes: u64,
    pub(crate) ref_depth: u64,
    pub(crate) anchors: u64,
    pub(crate) steps: u64,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            nodes: DEFAULT_MAX_SCHEMA_NODES,
            bytes: DEFAULT_MAX_SCHEMA_BYTES,
            ref_depth: DEFAULT_MAX_REF_DEPTH,
            anchors: DEFAULT_MAX_ANCHORS,
            steps: DEFAULT_MAX_COMPILE_STEPS,
        }
    }
}
