//! `check`, `Schema` and the incremental `Validator`: the scanner and the streaming
//! validator, one document at a time.
//!
//! A `Schema` is compiled once and shared between threads; each call borrows a validator
//! from a small pool, so validating many small documents allocates nothing per call.

use std::sync::Mutex;

use jsongate::{Error, Flow, Limits, Outcome, Rejection, Scanner, Schema as Compiled, Violation};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{scan_error, schema_error, violation_error, violation_value};
use crate::input::with_bytes;
use crate::options;

/// At most this many idle validators are kept per schema.
const POOL: usize = 8;

/// Checks that `data` is one strict JSON document (RFC 8259 plus I-JSON's rules: duplicate
/// member names are rejected after unescaping) within `limits`. Returns `None`; raises
/// `ScanError` (or `LimitExceeded`) at the first violation.
#[pyfunction]
#[pyo3(signature = (data, limits=None))]
pub fn check(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    limits: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let limits = options::limits(py, limits, Limits::new())?;
    with_bytes(py, data, |b| jsongate::check(b, limits))?.map_err(|e| scan_error(py, &e))
}

/// A compiled JSON Schema (draft 2020-12 by default): immutable and safe to share between
/// threads.
#[pyclass(frozen, module = "jsongate")]
pub struct Schema {
    compiled: Compiled,
    limits: Limits,
    pool: Mutex<Vec<jsongate::Validator>>,
}

impl Schema {
    /// A validator from the pool (or a new one); give it back with [`put`](Self::put).
    pub(crate) fn take(&self) -> jsongate::Validator {
        self.pool
            .lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_else(|| jsongate::Validator::new(&self.compiled))
    }

    pub(crate) fn put(&self, v: jsongate::Validator) {
        if let Ok(mut p) = self.pool.lock() {
            if p.len() < POOL {
                p.push(v);
            }
        }
    }

    /// The limits documents get unless a call gives others.
    pub(crate) fn default_limits(&self) -> Limits {
        self.limits
    }

    fn limits(&self, py: Python<'_>, given: Option<&Bound<'_, PyDict>>) -> PyResult<Limits> {
        options::limits(py, given, self.limits)
    }

    /// Validates `data`, returning the verdict (the validator goes back to the pool).
    fn run(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        limits: Limits,
    ) -> PyResult<Result<(), Rejection>> {
        let data = options::instance(py, data)?;
        let mut v = self.take();
        let r = with_bytes(py, &data, |b| v.validate_slice(b, limits));
        self.put(v);
        r
    }
}

fn rejection(py: Python<'_>, r: Rejection) -> PyErr {
    match r {
        Rejection::Error(e) => scan_error(py, &e),
        Rejection::Violation(v) => violation_error(py, &v),
    }
}

#[pymethods]
impl Schema {
    /// Compiles `schema` (JSON text as `str`/`bytes`, or a `dict`/`bool`). `draft` applies
    /// to schemas without `$schema`; `format_assertion` makes `format` a check instead of an
    /// annotation; `resources` maps URIs to documents that `$ref`s may name (nothing is ever
    /// fetched); `limits` are the default limits for documents; `eval_budget` caps the work
    /// per document (units: docs/reference/limits.md).
    #[new]
    #[pyo3(signature = (schema, *, draft="2020-12", format_assertion=false, resources=None, limits=None, eval_budget=None))]
    fn new(
        py: Python<'_>,
        schema: &Bound<'_, PyAny>,
        draft: &str,
        format_assertion: bool,
        resources: Option<&Bound<'_, PyDict>>,
        limits: Option<&Bound<'_, PyDict>>,
        eval_budget: Option<u64>,
    ) -> PyResult<Self> {
        let mut opts = Compiled::options()
            .draft(options::draft(py, draft)?)
            .format_assertion(format_assertion);
        if let Some(n) = eval_budget {
            opts = opts.eval_budget(n);
        }
        if let Some(res) = resources {
            for (uri, doc) in res.iter() {
                let uri: String = uri.extract()?;
                let doc = options::document(py, &doc)?;
                opts = with_bytes(py, &doc, |b| opts.resource(&uri, b))?;
            }
        }
        let schema = options::document(py, schema)?;
        let compiled =
            with_bytes(py, &schema, |b| opts.compile(b))?.map_err(|e| schema_error(py, &e))?;
        Ok(Schema {
            compiled,
            limits: options::limits(py, limits, Limits::new())?,
            pool: Mutex::new(Vec::new()),
        })
    }

    /// Returns `None` when `data` satisfies the schema; raises `ValidationError` at the
    /// first violation, `ScanError`/`LimitExceeded` when the document is not read to its end.
    #[pyo3(signature = (data, limits=None))]
    fn validate(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        limits: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        let limits = self.limits(py, limits)?;
        self.run(py, data, limits)?.map_err(|r| rejection(py, r))
    }

    /// Whether `data` is well-formed, within the limits and satisfies the schema.
    #[pyo3(signature = (data, limits=None))]
    fn is_valid(
        &self,
        py: Python<'_>,
        data: &Bound<'_, PyAny>,
        limits: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<bool> {
        let limits = self.limits(py, limits)?;
        Ok(self.run(py, data, limits)?.is_ok())
    }

    /// Every violation (up to `max_errors`) as `ValidationError` instances, in document
    /// order; empty when `data` is valid. A document that is not read to its end raises
    /// `ScanError`/`LimitExceeded` instead.
    #[pyo3(signature = (data, limits=None, max_errors=100))]
    fn iter_errors<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
        limits: Option<&Bound<'py, PyDict>>,
        max_errors: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        let limits = self.limits(py, limits)?;
        let data = options::instance(py, data)?;
        let mut v = jsongate::Validator::new(&self.compiled).max_errors(max_errors);
        let r = with_bytes(py, &data, |b| v.validate_slice(b, limits))?;
        if let Err(Rejection::Error(e)) = r {
            return Err(scan_error(py, &e));
        }
        let found: Vec<Violation> = match (r, v.violations()) {
            (Err(Rejection::Violation(first)), []) => vec![*first],
            (_, all) => all.to_vec(),
        };
        let list = PyList::empty(py);
        for x in &found {
            list.append(violation_value(py, x))?;
        }
        list.call_method0("__iter__")
    }

    /// An incremental `Validator` for one document at a time, fed in chunks.
    #[pyo3(signature = (limits=None))]
    fn validator(&self, py: Python<'_>, limits: Option<&Bound<'_, PyDict>>) -> PyResult<Validator> {
        let limits = self.limits(py, limits)?;
        Ok(Validator::make(&self.compiled, limits))
    }

    fn __repr__(&self) -> String {
        format!("<jsongate.Schema {:?}>", self.compiled)
    }
}

/// An incremental validator: `feed` chunks as they arrive (split anywhere), then `finish`.
/// Any split of the same bytes gives the same verdict. After `finish` (or `reset`) it takes
/// the next document.
#[pyclass(module = "jsongate")]
pub struct Validator {
    scanner: Scanner,
    engine: jsongate::Validator,
    /// Set once the verdict no longer depends on later bytes.
    decided: Option<Result<Outcome, Error>>,
}

impl Validator {
    fn make(schema: &Compiled, limits: Limits) -> Validator {
        Validator {
            scanner: Scanner::new(limits),
            engine: jsongate::Validator::new(schema),
            decided: None,
        }
    }
}

#[pymethods]
impl Validator {
    /// A validator for `schema` (a `Schema`), with `limits`.
    #[new]
    #[pyo3(signature = (schema, limits=None))]
    fn new(
        py: Python<'_>,
        schema: &Bound<'_, Schema>,
        limits: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let s = schema.get();
        let limits = s.limits(py, limits)?;
        Ok(Validator::make(&s.compiled, limits))
    }

    /// Feeds the next chunk. Returns `True` while more input is needed, `False` once the
    /// verdict is decided (later chunks are not read; `finish` reports it).
    fn feed(&mut self, py: Python<'_>, chunk: &Bound<'_, PyAny>) -> PyResult<bool> {
        if self.decided.is_some() {
            return Ok(false);
        }
        let (scanner, engine) = (&mut self.scanner, &mut self.engine);
        match with_bytes(py, chunk, |b| scanner.feed(b, engine))? {
            Ok(Flow::Continue) => Ok(true),
            Ok(Flow::Stop) => {
                self.decided = Some(Ok(Outcome::Stopped));
                Ok(false)
            }
            Err(e) => {
                self.decided = Some(Err(e));
                Ok(false)
            }
        }
    }

    /// Marks the end of the document: returns `None` if it is valid, raises as
    /// `Schema.validate` does otherwise. The validator is then ready for the next document.
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let out = match self.decided.take() {
            Some(r) => r,
            None => self.scanner.finish(&mut self.engine),
        };
        let verdict = self.engine.verdict(&self.scanner, out);
        self.reset();
        verdict.map_err(|r| rejection(py, r))
    }

    /// Drops the document in progress.
    fn reset(&mut self) {
        self.scanner.reset();
        self.engine.reset();
        self.decided = None;
    }

    /// Bytes of the current document consumed so far.
    #[getter]
    fn bytes_read(&self) -> u64 {
        self.scanner.bytes_read()
    }
}
