//! `Caller`: who a tool call is made for, as the application authenticated them (a subject,
//! the OAuth client, the scopes granted), checked once when it is built. `Policy.decide`
//! takes one as decision context; this module only reads and checks it, it decides nothing.
//!
//! The rules are the ones the crate's authentication applies to a verified credential: a
//! subject or client id is 1 to 256 characters without control characters; a scope is an
//! RFC 6749 scope token (visible ASCII, no space, `"` or `\`). Error messages name the field,
//! never its value.

use pyo3::prelude::*;
use pyo3::types::{PyMapping, PyString, PyTuple};

use crate::errors::config_error;

/// The most characters a subject or client id may have.
const MAX_NAME_CHARS: usize = 256;

/// Who a tool call is made for: `subject` (the user or service the application
/// authenticated), `client_id` (the OAuth client, if known) and `scopes` (what the credential
/// grants). Given to `Policy.decide(..., caller=)`, each scope is held as a grant besides the
/// session's, the policy context's `subject` and `client_id` are the caller's (for
/// `equals_context` rules), and rate limits are counted per subject. Immutable and hashable;
/// it never holds a credential.
///
/// `Caller(subject, client_id=None, scopes=())` raises `ConfigError` (kind `"caller"`) for a
/// subject or client id that is not 1 to 256 characters without control characters, or a
/// scope that is not an RFC 6749 scope token; `scopes` is any iterable of `str` (not a
/// `str`), repeats dropped.
#[pyclass(frozen, eq, hash, module = "jsongate")]
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Caller {
    subject: String,
    client_id: Option<String>,
    scopes: Vec<String>,
}

/// Whether `s` may be a subject or a client id.
fn usable_name(s: &str) -> bool {
    !s.is_empty() && s.chars().count() <= MAX_NAME_CHARS && !s.chars().any(char::is_control)
}

/// Whether `s` is an RFC 6749 scope token.
fn scope_token(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| matches!(c, '!'..='~') && c != '"' && c != '\\')
}

fn name(py: Python<'_>, field: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = v
        .cast::<PyString>()
        .map_err(|_| config_error(py, "caller", format!("caller: '{field}' must be a str")))?
        .to_cow()
        .map_err(|_| config_error(py, "caller", format!("caller: '{field}' is not valid text")))?;
    if !usable_name(&s) {
        return Err(config_error(
            py,
            "caller",
            format!(
                "caller: '{field}' must be 1 to {MAX_NAME_CHARS} characters without control characters"
            ),
        ));
    }
    Ok(s.into_owned())
}

fn scopes(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    let not_iterable = || {
        config_error(
            py,
            "caller",
            "caller: 'scopes' must be an iterable of str (not a str)",
        )
    };
    // A str is an iterable of one-character strs: never what was meant.
    if v.is_instance_of::<PyString>() {
        return Err(not_iterable());
    }
    let mut out: Vec<String> = Vec::new();
    for (i, item) in v.try_iter().map_err(|_| not_iterable())?.enumerate() {
        let item = item?;
        let s = item.cast::<PyString>().map_err(|_| {
            config_error(py, "caller", format!("caller: scopes[{i}] must be a str"))
        })?;
        let s = s.to_cow().unwrap_or_default();
        if !scope_token(&s) {
            return Err(config_error(
                py,
                "caller",
                format!("caller: scopes[{i}] is not a scope token (visible ASCII, no space, quote or backslash)"),
            ));
        }
        if !out.iter().any(|x| *x == s) {
            out.push(s.into_owned());
        }
    }
    Ok(out)
}

impl Caller {
    fn build(
        py: Python<'_>,
        subject: &Bound<'_, PyAny>,
        client_id: Option<&Bound<'_, PyAny>>,
        given_scopes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Caller> {
        Ok(Caller {
            subject: name(py, "subject", subject)?,
            client_id: client_id
                .filter(|c| !c.is_none())
                .map(|c| name(py, "client_id", c))
                .transpose()?,
            scopes: given_scopes
                .filter(|s| !s.is_none())
                .map(|s| scopes(py, s))
                .transpose()?
                .unwrap_or_default(),
        })
    }

    /// `given` as a caller: a `Caller`, or a mapping with `subject` and optionally
    /// `client_id` and `scopes` (no other key).
    ///
    /// # Errors
    /// `ConfigError` (kind `"caller"`) for anything else, or values `Caller(...)` refuses.
    pub fn from_py(py: Python<'_>, given: &Bound<'_, PyAny>) -> PyResult<Caller> {
        if let Ok(c) = given.cast::<Caller>() {
            return Ok(c.get().clone());
        }
        let map = given.cast::<PyMapping>().map_err(|_| {
            config_error(
                py,
                "caller",
                "caller: must be a jsongate.Caller or a mapping with 'subject', 'client_id', 'scopes'",
            )
        })?;
        let mut subject = None;
        let mut client_id = None;
        let mut given_scopes = None;
        for item in map.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            let key = k
                .cast::<PyString>()
                .ok()
                .and_then(|k| k.to_cow().ok().map(std::borrow::Cow::into_owned));
            match key.as_deref() {
                Some("subject") => subject = Some(v),
                Some("client_id") => client_id = Some(v),
                Some("scopes") => given_scopes = Some(v),
                other => {
                    let named = other.map_or_else(String::new, |k| format!(" '{k}'"));
                    return Err(config_error(
                        py,
                        "caller",
                        format!("caller: unknown key{named} (known: subject, client_id, scopes)"),
                    ));
                }
            }
        }
        let subject =
            subject.ok_or_else(|| config_error(py, "caller", "caller: 'subject' is missing"))?;
        Caller::build(py, &subject, client_id.as_ref(), given_scopes.as_ref())
    }

    /// The subject.
    pub fn subject_str(&self) -> &str {
        &self.subject
    }

    /// The client id, if known.
    pub fn client_id_str(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes, without repeats, in the order given.
    pub fn scope_list(&self) -> &[String] {
        &self.scopes
    }
}

#[pymethods]
impl Caller {
    /// Checks and keeps a caller (see the class documentation).
    #[new]
    #[pyo3(signature = (subject, client_id=None, scopes=None), text_signature = "(subject, client_id=None, scopes=())")]
    fn new(
        py: Python<'_>,
        subject: &Bound<'_, PyAny>,
        client_id: Option<&Bound<'_, PyAny>>,
        scopes: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        Caller::build(py, subject, client_id, scopes)
    }

    /// A caller from a mapping with `subject` and optionally `client_id` and `scopes` (no
    /// other key); a `Caller` is returned as it is. Raises `ConfigError` (kind `"caller"`)
    /// for anything else.
    #[staticmethod]
    fn from_mapping(py: Python<'_>, value: &Bound<'_, PyAny>) -> PyResult<Self> {
        Caller::from_py(py, value)
    }

    /// The subject: the user or service the application authenticated.
    #[getter]
    fn subject(&self) -> &str {
        &self.subject
    }

    /// The OAuth client the credential was issued to, or `None`.
    #[getter]
    fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes granted, as a tuple of `str`.
    #[getter]
    fn scopes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.scopes)
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let client_id = match &self.client_id {
            Some(c) => PyString::new(py, c).repr()?.to_string(),
            None => "None".to_owned(),
        };
        Ok(format!(
            "jsongate.Caller(subject={}, client_id={client_id}, scopes={})",
            PyString::new(py, &self.subject).repr()?,
            self.scopes(py)?.repr()?,
        ))
    }
}
