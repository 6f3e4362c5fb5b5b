//! `ToolDefinition`: one MCP tool definition in the engine's canonical form, its SHA-256
//! (the pin), the screening of its strings, and the classified changes between two of them.

use jsongate::mcp::pin::{diff::diff_tools, Definition};
use jsongate::Limits;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{config_error, scan_error};
use crate::input::with_bytes;
use crate::options;

/// One tool definition (the object a `tools/list` answer holds), read strictly and
/// canonicalised: members sorted, numbers by value. Two listings that differ only in member
/// order, whitespace, escapes or number spelling have the same `sha256`.
#[pyclass(frozen, module = "jsongate")]
pub struct ToolDefinition {
    def: Definition,
}

#[pymethods]
impl ToolDefinition {
    /// Reads a definition given as JSON text or a `dict`. Raises `ScanError` for text that is
    /// not strict JSON, `ConfigError` (kind `"tool"`) for an object without a string `name`
    /// or one larger than 256 KiB.
    #[new]
    fn new(py: Python<'_>, definition: &Bound<'_, PyAny>) -> PyResult<Self> {
        let text = options::document(py, definition)?;
        match with_bytes(py, &text, |b| Definition::from_slice(b, Limits::new()))? {
            Ok(def) => Ok(ToolDefinition { def }),
            Err(e) => match e.scan_error() {
                Some(scan) => Err(scan_error(py, scan)),
                None => Err(config_error(py, "tool", e)),
            },
        }
    }

    /// The tool's name.
    #[getter]
    fn name(&self) -> &str {
        self.def.name()
    }

    /// SHA-256 of the canonical text (64 lowercase hex digits): what a pin records.
    #[getter]
    fn sha256(&self) -> &str {
        self.def.sha256()
    }

    /// The canonical text that is hashed.
    #[getter]
    fn canonical(&self) -> &str {
        self.def.canonical()
    }

    /// Instruction-like or hidden text anywhere in the definition (name, description,
    /// annotations, every string inside its schemas), as `(pointer, pattern)` pairs in
    /// document order; never the text itself.
    fn screen(&self) -> Vec<(String, &'static str)> {
        self.def
            .screen()
            .into_iter()
            .map(|f| (f.pointer, f.pattern))
            .collect()
    }

    /// The changes from `pinned` to this definition, each a `dict` with `kind`
    /// (`"input_widened"`, `"output_narrowed"`, `"text_changed"`, …), `dangerous` (whether
    /// it may let more through than was approved), `pointer` and `keyword`.
    fn changes_since<'py>(
        &self,
        py: Python<'py>,
        pinned: &Bound<'py, ToolDefinition>,
    ) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for c in diff_tools(pinned.get().def.value(), self.def.value()) {
            let d = PyDict::new(py);
            d.set_item("kind", c.kind.as_str())?;
            d.set_item("dangerous", c.kind.dangerous())?;
            d.set_item("pointer", &c.pointer)?;
            d.set_item("keyword", c.keyword.as_deref())?;
            list.append(d)?;
        }
        Ok(list)
    }

    fn __repr__(&self) -> String {
        format!(
            "<jsongate.ToolDefinition {:?} sha256={}>",
            self.def.name(),
            &self.def.sha256()[..12]
        )
    }
}
