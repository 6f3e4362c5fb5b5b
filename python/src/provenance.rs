//! `Provenance`: the identifier-like values that reached an agent in untrusted output, so
//! that `Policy.decide` asks (`untrusted_origin`) for a call whose sink argument carries one.
//! A thin wrapper over `jsongate::action::Provenance`.

use std::sync::{Mutex, MutexGuard};

use jsongate::action::Provenance as Tracked;
use jsongate::json::Value;
use jsongate::Limits;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::config_error;
use crate::input::with_bytes;
use crate::options;

/// The values one agent session was handed by untrusted output (tool results), kept as
/// digests with their origin (tool, request id, pointer), bounded, failing closed when full.
/// Pass it to `Policy.decide(..., provenance=...)`.
#[pyclass(frozen, module = "jsongate")]
pub struct Provenance {
    inner: Mutex<Tracked>,
}

impl Provenance {
    pub(crate) fn lock(&self, py: Python<'_>) -> PyResult<MutexGuard<'_, Tracked>> {
        self.inner
            .lock()
            .map_err(|_| config_error(py, "provenance", "the provenance state was poisoned"))
    }
}

/// A document given as a `dict`/`list`/`str` value or JSON text, as a JSON value.
fn value(py: Python<'_>, doc: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let text = options::document(py, doc)?;
    with_bytes(py, &text, |b| Value::parse(b, Limits::new()))?
        .map_err(|e| config_error(py, what, e))
}

#[pymethods]
impl Provenance {
    /// Nothing tracked.
    #[new]
    fn new() -> Self {
        Provenance {
            inner: Mutex::new(Tracked::new()),
        }
    }

    /// Reads provenance record lines (what `jsongate gate --provenance` and `screen
    /// --provenance` write, or `to_records`). Raises `ConfigError` (kind `"provenance"`)
    /// naming the first bad line.
    #[staticmethod]
    fn from_records(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let p = with_bytes(py, text, Tracked::from_records)?
            .map_err(|e| config_error(py, "provenance", e))?;
        Ok(Provenance {
            inner: Mutex::new(p),
        })
    }

    /// Records the values of `result` (a `dict`, a `list`, or JSON text) as handed to the
    /// agent by `tool` for the request `request_id`.
    fn record(
        &self,
        py: Python<'_>,
        tool: &str,
        request_id: &str,
        result: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let v = value(py, result, "result")?;
        self.lock(py)?.record(tool, request_id, &v);
        Ok(())
    }

    /// Notes the arguments of a call the model made: values no untrusted output carried
    /// before stay the model's own.
    fn note_call(&self, py: Python<'_>, arguments: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = value(py, arguments, "arguments")?;
        self.lock(py)?.note_call(&v);
        Ok(())
    }

    /// Where the (normalised) value `v` first reached the agent, as a `dict` with `tool`,
    /// `request_id`, `pointer` and `kind`; `None` when no untrusted output carried it first.
    fn origin_of<'py>(&self, py: Python<'py>, v: &str) -> PyResult<Option<Bound<'py, PyDict>>> {
        let p = self.lock(py)?;
        let Some(o) = p.origin_of(v) else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("tool", &o.tool)?;
        d.set_item("request_id", &o.request_id)?;
        d.set_item("pointer", &o.pointer)?;
        d.set_item("kind", o.kind.as_str())?;
        Ok(Some(d))
    }

    /// The tracked values as provenance record lines.
    fn to_records(&self, py: Python<'_>) -> PyResult<String> {
        Ok(self.lock(py)?.to_records())
    }

    /// Whether more values were seen than can be tracked (every identifier-like sink value
    /// then asks).
    #[getter]
    fn saturated(&self, py: Python<'_>) -> PyResult<bool> {
        Ok(self.lock(py)?.saturated())
    }

    fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
        Ok(self.lock(py)?.len())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let p = self.lock(py)?;
        Ok(format!(
            "<jsongate.Provenance {} values{}>",
            p.len(),
            if p.saturated() { ", saturated" } else { "" }
        ))
    }
}

/// The identifier-like values of `text`, normalised, as `(kind, value)` pairs (`kind`:
/// `"email"`, `"host"`, `"iban"`, `"number"`, `"phone"`, `"path"`, `"short"`).
#[pyfunction]
pub fn provenance_values(text: &str) -> Vec<(&'static str, String)> {
    jsongate::action::values_of(text)
        .into_iter()
        .map(|(k, v)| (k.as_str(), v))
        .collect()
}
