//! The Python binding of jsongate (`jsongate._jsongate`): a thin layer over the engine's
//! public API, built with `PyO3` for the stable ABI of `CPython` 3.9 and later.
//!
//! Nothing here decides anything: the scanner, the validator, the gate, the policy and the
//! screen are the crate's own. This layer converts inputs (`input`), options (`options`) and
//! errors (`errors`), and releases the interpreter lock while the engine reads a document
//! whose bytes cannot change meanwhile.
#![deny(unsafe_code)]

mod action;
mod caller;
mod errors;
mod gate;
mod input;
mod loads;
mod options;
mod provenance;
mod schema;
mod tools;

use pyo3::prelude::*;
use pyo3::types::PyDict;

#[pymodule]
fn _jsongate(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    errors::register(m)?;
    m.add_function(wrap_pyfunction!(schema::check, m)?)?;
    m.add_function(wrap_pyfunction!(loads::loads, m)?)?;
    m.add_function(wrap_pyfunction!(action::screen, m)?)?;
    m.add_function(wrap_pyfunction!(action::screen_definition, m)?)?;
    m.add_function(wrap_pyfunction!(action::learned_score, m)?)?;
    m.add_function(wrap_pyfunction!(action::redact_text, m)?)?;
    m.add_class::<schema::Schema>()?;
    m.add_class::<schema::Validator>()?;
    m.add_class::<gate::Contract>()?;
    m.add_class::<gate::GateResult>()?;
    m.add_class::<action::Policy>()?;
    m.add_class::<caller::Caller>()?;
    m.add_class::<action::Decision>()?;
    m.add_class::<provenance::Provenance>()?;
    m.add_function(wrap_pyfunction!(provenance::provenance_values, m)?)?;
    m.add_class::<action::Finding>()?;
    m.add_class::<tools::ToolDefinition>()?;
    let defaults = PyDict::new(py);
    for (k, v) in jsongate::Limits::new().by_name() {
        defaults.set_item(k, v)?;
    }
    m.add("DEFAULT_LIMITS", defaults)?;
    m.add("RELEASE_GIL_AT", input::RELEASE_AT)?;
    // The core crate's version (what audit records name), not this binding's.
    m.add("ENGINE_VERSION", jsongate::VERSION)?;
    Ok(())
}
