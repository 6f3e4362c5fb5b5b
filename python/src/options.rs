//! Reading the keyword arguments Python callers give: limits, drafts, JSON documents given as
//! Python values.

use jsongate::{Draft, Limits, UNLIMITED};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::config_error;

/// The names a `limits` mapping may use, in the order `DEFAULT_LIMITS` lists them.
pub const LIMIT_NAMES: [&str; 7] = [
    "max_bytes",
    "max_depth",
    "max_name_bytes",
    "max_string_bytes",
    "max_number_bytes",
    "max_members",
    "max_items",
];

/// `limits` as the engine's [`Limits`], starting from `base`: a mapping of limit names to
/// integers (`None` lifts a limit), plus `"i_json": bool`.
///
/// # Errors
/// `ConfigError` (kind `"limits"`) for an unknown name or a value that is not a
/// non-negative integer or `None`; `TypeError` for something that is not a mapping.
pub fn limits(py: Python<'_>, given: Option<&Bound<'_, PyDict>>, base: Limits) -> PyResult<Limits> {
    let mut out = base;
    let Some(d) = given else {
        return Ok(out);
    };
    for (k, v) in d.iter() {
        let name: String = k.extract()?;
        if name == "i_json" {
            let on: bool = v
                .extract()
                .map_err(|_| config_error(py, "limits", "limits: 'i_json' must be a bool"))?;
            out = out.i_json(on);
            continue;
        }
        let n = if v.is_none() {
            UNLIMITED
        } else if v.is_instance_of::<PyBool>() {
            return Err(config_error(
                py,
                "limits",
                format!("limits: '{name}' must be an integer or None"),
            ));
        } else {
            v.extract::<u64>().map_err(|_| {
                config_error(
                    py,
                    "limits",
                    format!("limits: '{name}' must be a non-negative integer or None"),
                )
            })?
        };
        out = out.set_by_name(&name, n).ok_or_else(|| {
            config_error(
                py,
                "limits",
                format!(
                    "limits: unknown limit '{name}' (known: {}, i_json)",
                    LIMIT_NAMES.join(", ")
                ),
            )
        })?;
    }
    Ok(out)
}

/// The draft named `s`: `"2020-12"`, `"2019-09"`, `"7"`, `"6"` or `"4"` (also `"draft7"`,
/// `"draft-07"`, …), as `jsongate check --draft` reads it.
///
/// # Errors
/// `ConfigError` (kind `"options"`) for any other name.
pub fn draft(py: Python<'_>, s: &str) -> PyResult<Draft> {
    let t = s.strip_prefix("draft").unwrap_or(s);
    let t = t.strip_prefix('-').unwrap_or(t);
    let t = match t {
        "202012" => "2020-12",
        "201909" => "2019-09",
        t => t,
    };
    Draft::from_name(t).ok_or_else(|| {
        config_error(
            py,
            "options",
            format!("unknown draft '{s}' (known: 2020-12, 2019-09, 7, 6, 4)"),
        )
    })
}

/// `json.dumps`, imported once.
fn dumps(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static DUMPS: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    DUMPS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("json")?.getattr("dumps")?.unbind())
        })
        .map(|f| f.bind(py))
}

/// The JSON text of a parsed Python value: `json.dumps` with `allow_nan=False` (NaN and
/// infinities, non-string keys of other kinds and cycles are refused with its
/// `ValueError`/`TypeError`), compact when `compact`.
fn dumped<'py>(
    py: Python<'py>,
    v: &Bound<'py, PyAny>,
    compact: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    kwargs.set_item("ensure_ascii", false)?;
    if compact {
        kwargs.set_item("separators", (",", ":"))?;
    }
    let text = dumps(py)?.call((v,), Some(&kwargs))?;
    Ok(text.cast_into::<PyString>()?.into_any())
}

/// A document to validate: JSON text (`str`, `bytes`, …) is kept; an already parsed value
/// (`dict`, `list`, `tuple`, `bool`, `int`, `float`, `None`) becomes its compact JSON text
/// ([`dumped`]), so that it gets the same verdict, keyword and pointer as the same value sent
/// as text; offsets count in that text.
pub fn instance<'py>(py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if v.is_instance_of::<PyDict>()
        || v.is_instance_of::<PyList>()
        || v.is_instance_of::<PyTuple>()
        || v.is_instance_of::<PyBool>()
        || v.is_instance_of::<PyInt>()
        || v.is_instance_of::<PyFloat>()
        || v.is_none()
    {
        return dumped(py, v, true);
    }
    Ok(v.clone())
}

/// A JSON document given either as text (`str`, `bytes`, …) or as a Python value (`dict`,
/// `list`, `bool`): values are serialised ([`dumped`]), text is kept.
pub fn document<'py>(py: Python<'py>, v: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
    if v.is_instance_of::<PyDict>() || v.is_instance_of::<PyList>() || v.is_instance_of::<PyBool>()
    {
        return dumped(py, v, false);
    }
    Ok(v.clone())
}
