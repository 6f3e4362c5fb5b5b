//! The exception hierarchy, and the conversion of the engine's typed errors into it.
//!
//! ```text
//! JsongateError (ValueError)   kind, offset, pointer
//! ├── ScanError                the stream was stopped: malformed JSON, duplicate name, …
//! │   └── LimitExceeded        a limit or the evaluation budget (adds `limit`)
//! ├── ValidationError          well-formed, but the schema is not satisfied
//! ├── SchemaError              the schema does not compile
//! └── ConfigError              a contract, policy, call, caller or request that cannot be used
//! ```
//!
//! Every instance carries every attribute its class documents (`None` where it does not
//! apply). Messages name schema keywords and positions, never document content.

use jsongate::{CompileError, CompileErrorKind, Error, ErrorKind, Violation};
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyType;
use pyo3::IntoPyObjectExt;

create_exception!(
    jsongate,
    JsongateError,
    PyValueError,
    "Base class of every error jsongate raises (a `ValueError`)."
);
create_exception!(
    jsongate,
    ScanError,
    JsongateError,
    "The document was not read to its end: malformed JSON, a duplicate member name, bad UTF-8."
);
create_exception!(
    jsongate,
    LimitExceeded,
    ScanError,
    "The document crossed a limit (bytes, depth, lengths, counts) or the evaluation budget."
);
create_exception!(
    jsongate,
    ValidationError,
    JsongateError,
    "The document is well-formed JSON but does not satisfy the schema."
);
create_exception!(
    jsongate,
    SchemaError,
    JsongateError,
    "The schema could not be compiled (invalid, unknown reference, or a compile budget)."
);
create_exception!(
    jsongate,
    ConfigError,
    JsongateError,
    "A contract, policy, tool call, caller or request that cannot be used as given."
);

/// An instance of `ty` with message `msg` and the attributes `attrs`.
fn raise(
    py: Python<'_>,
    ty: &Bound<'_, PyType>,
    msg: String,
    attrs: &[(&str, Py<PyAny>)],
) -> PyErr {
    match ty.call1((msg,)) {
        Ok(inst) => {
            for (k, v) in attrs {
                if let Err(e) = inst.setattr(*k, v.clone_ref(py)) {
                    return e;
                }
            }
            PyErr::from_value(inst)
        }
        Err(e) => e,
    }
}

fn obj<'py, T: IntoPyObject<'py>>(py: Python<'py>, v: T) -> Py<PyAny> {
    v.into_py_any(py).unwrap_or_else(|_| py.None())
}

/// The limit a kind carries, if it is a limit.
fn limit_of(kind: &ErrorKind) -> Option<u64> {
    match kind {
        ErrorKind::TooLarge { limit }
        | ErrorKind::TooDeep { limit }
        | ErrorKind::NameTooLong { limit }
        | ErrorKind::StringTooLong { limit }
        | ErrorKind::NumberTooLong { limit }
        | ErrorKind::TooManyMembers { limit }
        | ErrorKind::TooManyItems { limit }
        | ErrorKind::BudgetExceeded { limit } => Some(*limit),
        _ => None,
    }
}

/// A stopped scan as `ScanError`, or `LimitExceeded` for a crossed limit.
pub fn scan_error(py: Python<'_>, e: &Error) -> PyErr {
    let limit = limit_of(e.kind());
    let ty = if limit.is_some() {
        py.get_type::<LimitExceeded>()
    } else {
        py.get_type::<ScanError>()
    };
    raise(
        py,
        &ty,
        e.to_string(),
        &[
            ("kind", obj(py, e.kind().code())),
            ("offset", obj(py, e.offset())),
            ("line", obj(py, e.line())),
            ("column", obj(py, e.column())),
            ("pointer", obj(py, e.pointer())),
            ("limit", obj(py, limit)),
        ],
    )
}

/// A schema violation as `ValidationError` (`kind` is `"schema"`).
pub fn violation_error(py: Python<'_>, v: &Violation) -> PyErr {
    raise(
        py,
        &py.get_type::<ValidationError>(),
        v.to_string(),
        &violation_attrs(py, v),
    )
}

/// The attributes of a `ValidationError` for `v`.
pub fn violation_attrs(py: Python<'_>, v: &Violation) -> [(&'static str, Py<PyAny>); 9] {
    [
        ("kind", obj(py, "schema")),
        ("keyword", obj(py, v.keyword())),
        ("keyword_location", obj(py, v.keyword_location())),
        ("absolute_keyword_location", obj(py, v.absolute_location())),
        ("pointer", obj(py, v.instance_pointer())),
        ("offset", obj(py, v.offset())),
        ("line", obj(py, v.line())),
        ("column", obj(py, v.column())),
        ("message", obj(py, v.message())),
    ]
}

/// A `ValidationError` instance (not raised) for `v`.
pub fn violation_value(py: Python<'_>, v: &Violation) -> Py<PyAny> {
    violation_error(py, v).into_value(py).into_any()
}

/// A compile error as `SchemaError` (`kind` is `"invalid"` or `"budget"`).
pub fn schema_error(py: Python<'_>, e: &CompileError) -> PyErr {
    let (kind, budget, limit) = match e.kind() {
        CompileErrorKind::Budget { budget, limit } => {
            ("budget", Some(budget.name().to_owned()), Some(limit))
        }
        _ => ("invalid", None, None),
    };
    raise(
        py,
        &py.get_type::<SchemaError>(),
        e.to_string(),
        &[
            ("kind", obj(py, kind)),
            ("location", obj(py, e.location())),
            ("budget", obj(py, budget)),
            ("limit", obj(py, limit)),
            ("offset", py.None()),
            ("pointer", py.None()),
        ],
    )
}

/// A configuration problem as `ConfigError` with `kind` (`"contract"`, `"policy"`, `"call"`,
/// `"caller"`, `"request"`, `"limits"`, `"options"`).
pub fn config_error(py: Python<'_>, kind: &str, msg: impl std::fmt::Display) -> PyErr {
    raise(
        py,
        &py.get_type::<ConfigError>(),
        msg.to_string(),
        &[
            ("kind", obj(py, kind)),
            ("offset", py.None()),
            ("pointer", py.None()),
        ],
    )
}

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("JsongateError", py.get_type::<JsongateError>())?;
    m.add("ScanError", py.get_type::<ScanError>())?;
    m.add("LimitExceeded", py.get_type::<LimitExceeded>())?;
    m.add("ValidationError", py.get_type::<ValidationError>())?;
    m.add("SchemaError", py.get_type::<SchemaError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    Ok(())
}
