//! `Contract`: a tool contract compiled once, applied to one response at a time, returning
//! the agent-facing envelope and the operators' audit record.

use std::path::Path;

use jsongate::gate::{Context, Contract as Spec, Delivery, FailureCode, Gate, Request, Timestamp};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyFloat, PyInt, PyString};

use crate::errors::config_error;
use crate::input::with_bytes;

/// `json.loads`, imported once.
pub fn loads<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    static LOADS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let f = LOADS.get_or_try_init(py, || {
        Ok::<_, PyErr>(py.import("json")?.getattr("loads")?.unbind())
    })?;
    f.bind(py).call1((text,))
}

/// The clock a caller gives: `None` (the system clock), seconds since the Unix epoch, an
/// aware `datetime`, or RFC 3339 text.
fn timestamp(py: Python<'_>, now: Option<&Bound<'_, PyAny>>) -> PyResult<Timestamp> {
    let Some(now) = now else {
        return Ok(Timestamp::now());
    };
    let secs: f64 = if let Ok(s) = now.cast::<PyString>() {
        let text = s.to_cow()?;
        return Timestamp::parse_rfc3339(&text).ok_or_else(|| {
            config_error(
                py,
                "request",
                format!("now: not an RFC 3339 time: {text:?}"),
            )
        });
    } else if now.is_instance_of::<PyFloat>() || now.is_instance_of::<PyInt>() {
        now.extract()?
    } else {
        // A datetime (naive ones are read as local time, as `datetime.timestamp` does).
        now.call_method0("timestamp")?.extract()?
    };
    if !secs.is_finite() {
        return Err(config_error(py, "request", "now: not a finite time"));
    }
    let whole = secs.floor();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(Timestamp::from_unix(
        whole as i64,
        ((secs - whole) * 1e9) as u32,
    ))
}

fn request(
    py: Python<'_>,
    request_id: &str,
    context: Option<&Bound<'_, PyDict>>,
    now: Option<&Bound<'_, PyAny>>,
) -> PyResult<Request> {
    let mut ctx = Context::new().now(timestamp(py, now)?);
    if let Some(d) = context {
        for (k, v) in d.iter() {
            let k: String = k.extract()?;
            let v: String = v.extract().map_err(|_| {
                config_error(py, "request", format!("context: '{k}' must be a string"))
            })?;
            ctx = ctx.value(&k, &v);
        }
    }
    Ok(Request::new(request_id, ctx))
}

/// A tool contract (the JSON format `jsongate contract` reads), compiled: limits, upstream
/// schemas, semantic checks, the exposed fields, screening and the envelope. Immutable and
/// safe to share between threads.
#[pyclass(frozen, module = "jsongate")]
pub struct Contract {
    gate: Gate,
}

#[pymethods]
impl Contract {
    /// Reads and compiles the contract file at `path` (its `schema_file`s are read relative
    /// to it).
    #[new]
    fn new(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Self> {
        let spec = Spec::from_file(&path).map_err(|e| config_error(py, "contract", e))?;
        Self::compile(py, &spec)
    }

    /// A contract from JSON text (or a `dict`); `schema_file`s are read relative to
    /// `base_dir`.
    #[staticmethod]
    #[pyo3(signature = (text, base_dir=None))]
    fn from_json(
        py: Python<'_>,
        text: &Bound<'_, PyAny>,
        base_dir: Option<std::path::PathBuf>,
    ) -> PyResult<Self> {
        let text = crate::options::document(py, text)?;
        let dir = base_dir.unwrap_or_else(|| ".".into());
        let spec = with_bytes(py, &text, |b| Spec::from_slice(b, Path::new(&dir)))?
            .map_err(|e| config_error(py, "contract", e))?;
        Self::compile(py, &spec)
    }

    /// The contract's tool name.
    #[getter]
    fn tool(&self) -> &str {
        self.gate.contract().tool()
    }

    /// The contract's version.
    #[getter]
    fn version(&self) -> &str {
        self.gate.contract().version()
    }

    /// The JSON Schema (text) every envelope of this contract satisfies.
    #[getter]
    fn envelope_schema(&self) -> &str {
        self.gate.envelope_schema()
    }

    /// Gates one upstream response. `request_id` is the caller's id (bound into the
    /// envelope; the upstream cannot replace it); `context` maps names to the request values
    /// the contract's checks compare against (`session_id` and `agent_id` also go to the
    /// audit record); `now` is the clock for freshness checks (default: the system clock).
    /// Returns a `GateResult`; raises `ConfigError` (kind `"request"`) only when the request
    /// lacks something the contract needs. A rejected response is a result, not an
    /// exception.
    #[pyo3(signature = (data, request_id, context=None, now=None))]
    fn gate(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        request_id: &str,
        context: Option<&Bound<'_, PyDict>>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<GateResult> {
        let req = request(py, request_id, context, now)?;
        let gate = &self.gate;
        let d = with_bytes(py, data, |b| gate.run_slice(b, &req))?
            .map_err(|e| config_error(py, "request", e))?;
        Ok(GateResult::from(d))
    }

    /// The decision when no response could be read: the tool raised, timed out or was
    /// refused at the transport. `code` is `"UPSTREAM_UNAVAILABLE"`, `"RATE_LIMITED"` or
    /// `"NOT_FOUND"` (any code of the closed set is accepted).
    #[pyo3(signature = (code, request_id, context=None, now=None))]
    fn failure(
        &self,
        py: Python<'_>,
        code: &str,
        request_id: &str,
        context: Option<&Bound<'_, PyDict>>,
        now: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<GateResult> {
        let code = FailureCode::parse(code)
            .ok_or_else(|| config_error(py, "request", format!("unknown failure code '{code}'")))?;
        let req = request(py, request_id, context, now)?;
        let d = self
            .gate
            .transport_failure(code, &req)
            .map_err(|e| config_error(py, "request", e))?;
        Ok(GateResult::from(d))
    }

    fn __repr__(&self) -> String {
        format!(
            "<jsongate.Contract tool={:?} version={:?}>",
            self.tool(),
            self.version()
        )
    }
}

impl Contract {
    fn compile(py: Python<'_>, spec: &Spec) -> PyResult<Self> {
        let gate = Gate::new(spec).map_err(|e| config_error(py, "contract", e))?;
        Ok(Contract { gate })
    }
}

/// One gate decision: what the agent gets (`envelope`, `output`) and what operators get
/// (`audit`).
#[pyclass(frozen, module = "jsongate")]
pub struct GateResult {
    output: String,
    audit_json: String,
    rendered: Option<String>,
    accepted: bool,
    code: Option<&'static str>,
}

impl From<Delivery> for GateResult {
    fn from(d: Delivery) -> Self {
        GateResult {
            audit_json: d.audit.to_json(),
            accepted: d.audit.accepted,
            code: d.envelope.code().map(FailureCode::as_str),
            output: d.output,
            rendered: d.rendered,
        }
    }
}

#[pymethods]
impl GateResult {
    /// Whether the response reached the agent (`outcome` is `"success"`).
    #[getter]
    fn accepted(&self) -> bool {
        self.accepted
    }

    /// The failure code (`"INVALID_RESPONSE"`, `"MISMATCH"`, …), `None` on success.
    #[getter]
    fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// The envelope as one JSON line: the only thing the agent should see.
    #[getter]
    fn output(&self) -> &str {
        &self.output
    }

    /// The envelope as a `dict` (a new one at each access).
    #[getter]
    fn envelope<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        loads(py, &self.output)
    }

    /// The audit record as one JSON line.
    #[getter]
    fn audit_json(&self) -> &str {
        &self.audit_json
    }

    /// The audit record as a `dict` (verdict, error kind, keyword location, pointer,
    /// offset, SHA-256 of the raw bytes, sizes, timings).
    #[getter]
    fn audit<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        loads(py, &self.audit_json)
    }

    /// The agent-facing text block, when the contract asks for one (`"render"`).
    #[getter]
    fn rendered(&self) -> Option<&str> {
        self.rendered.as_deref()
    }

    fn __repr__(&self) -> String {
        format!("<jsongate.GateResult {}>", self.output)
    }
}
