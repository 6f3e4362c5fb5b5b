//! `Policy` (tool-call decisions: allow, deny, ask) and `screen` (instruction-like text in
//! untrusted strings).

use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use jsongate::action::{
    Call, Decision as Made, Grants, Policy as Compiled, Provenance as Tracked, RateState,
};
use jsongate::json::Value;
use jsongate::screen::Finding as Found;
use jsongate::Limits;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::caller::Caller;
use crate::errors::{config_error, scan_error};
use crate::gate::loads;
use crate::input::with_bytes;
use crate::options;
use crate::provenance::Provenance;

/// A tool-call policy (the JSON format `jsongate decide` reads): the allowlist, each tool's
/// argument schema, required grants, rules, approval and rate limit. The object keeps the
/// rate state of the calls it decided: use one per agent session (or share one to share the
/// limits).
#[pyclass(frozen, module = "jsongate")]
pub struct Policy {
    policy: Compiled,
    rate: Mutex<RateState>,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[pymethods]
impl Policy {
    /// Reads and compiles a policy: a path (`str`/`os.PathLike`), or a `dict`.
    #[new]
    fn new(py: Python<'_>, policy: &Bound<'_, PyAny>) -> PyResult<Self> {
        let compiled = if policy.is_instance_of::<PyDict>() {
            let text = options::document(py, policy)?;
            with_bytes(py, &text, Compiled::from_slice)?
        } else {
            let path: std::path::PathBuf = policy.extract()?;
            Compiled::from_file(&path)
        }
        .map_err(|e| config_error(py, "policy", e))?;
        Ok(Policy {
            policy: compiled,
            rate: Mutex::new(RateState::new()),
        })
    }

    /// A policy from JSON text.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let compiled = with_bytes(py, text, Compiled::from_slice)?
            .map_err(|e| config_error(py, "policy", e))?;
        Ok(Policy {
            policy: compiled,
            rate: Mutex::new(RateState::new()),
        })
    }

    /// Decides one proposed call, given as `{"tool": NAME, "arguments": {...}}` (a `dict` or
    /// JSON text). `grants` are the capabilities the session holds; `workspace`, when given,
    /// checks `path` rules against the file system under it (symlinks resolved); `now_ms` is
    /// the clock of the rate limit in milliseconds (default: the system clock).
    ///
    /// `caller` (a `Caller`, or a mapping with `subject`, `client_id`, `scopes`) is who the
    /// call is made for: its scopes are held as grants besides `grants`, the context values
    /// `subject` and `client_id` are the caller's (for `equals_context` and
    /// `in_context_list` rules), and rate limits are counted per subject (each caller has
    /// its own budget in this policy's state). The decision's `audit_json` names the subject.
    ///
    /// `provenance` (a `Provenance`) is what untrusted output handed the agent: a call whose
    /// sink argument (the policy's `"sinks"`) carries such a value asks, reason
    /// `"untrusted_origin"`, and the record's `"origin"` says where it came from. A call that
    /// is allowed is noted in it (its values are the model's own from then on).
    ///
    /// Returns a `Decision`; raises `ConfigError` (kind `"call"`) when `call` is not a call
    /// document, (kind `"caller"`) when `caller` is not a usable caller.
    #[pyo3(signature = (call, grants=Vec::new(), workspace=None, now_ms=None, *, caller=None, provenance=None))]
    #[allow(clippy::too_many_arguments)]
    fn decide(
        &self,
        py: Python<'_>,
        call: &Bound<'_, PyAny>,
        grants: Vec<String>,
        workspace: Option<std::path::PathBuf>,
        now_ms: Option<u64>,
        caller: Option<&Bound<'_, PyAny>>,
        provenance: Option<&Provenance>,
    ) -> PyResult<Decision> {
        let caller = caller
            .filter(|c| !c.is_none())
            .map(|c| Caller::from_py(py, c))
            .transpose()?;
        let text = options::document(py, call)?;
        let limits = self.policy.limits();
        let call = with_bytes(py, &text, |b| Call::parse(b, limits))?
            .map_err(|e| config_error(py, "call", e))?;
        let mut session = Grants::new(grants);
        if let Some(root) = workspace {
            session = session
                .workspace(&root)
                .map_err(|e| config_error(py, "call", e))?;
        }
        if let Some(who) = &caller {
            session = session.caller(who.subject_str(), who.client_id_str(), who.scope_list());
        }
        let at = now_ms.unwrap_or_else(self::now_ms);
        let rate = self
            .rate
            .lock()
            .map_err(|_| config_error(py, "policy", "the rate state was poisoned"))?;
        let mut seen = provenance.map(|p| p.lock(py)).transpose()?;
        let empty = Tracked::new();
        let traced = seen.as_deref().unwrap_or(&empty);
        let made = match &caller {
            // The same store, counted under the subject's own scope.
            Some(who) => {
                let theirs = rate.clone().subscope(who.subject_str());
                self.policy
                    .decide_traced(&call, &session, &theirs, at, traced)
            }
            None => self
                .policy
                .decide_traced(&call, &session, &rate, at, traced),
        };
        if let Some(p) = seen.as_deref_mut() {
            if made.verdict() == jsongate::action::Verdict::Allow && self.policy.tracks_provenance()
            {
                p.note_call(&call.arguments);
            }
        }
        Ok(Decision::new(
            made,
            caller.map(|c| c.subject_str().to_owned()),
        ))
    }
}

/// One decision: `verdict` (`"allow"`, `"deny"`, `"ask"`), `reason` (a closed set), the
/// record (`to_json`) that `jsongate decide` prints, and the audit line (`audit_json`: the
/// record, plus the caller's `subject` when one was given).
#[pyclass(frozen, module = "jsongate")]
pub struct Decision {
    verdict: &'static str,
    reason: &'static str,
    record: String,
    failures: Vec<(&'static str, String)>,
    subject: Option<String>,
}

impl Decision {
    fn new(d: Made, subject: Option<String>) -> Self {
        Decision {
            verdict: d.verdict().as_str(),
            reason: d.reason().as_str(),
            record: d.to_json(),
            failures: d
                .facts()
                .rule_failures
                .iter()
                .map(|f| (f.reason.as_str(), f.pointer.clone()))
                .collect(),
            subject,
        }
    }
}

#[pymethods]
impl Decision {
    /// `"allow"`, `"deny"` or `"ask"`.
    #[getter]
    fn verdict(&self) -> &'static str {
        self.verdict
    }

    /// Why: `"ok"`, `"tool_not_allowlisted"`, `"arguments_invalid"`, `"path_escape"`, ….
    #[getter]
    fn reason(&self) -> &'static str {
        self.reason
    }

    /// Whether the call may run without asking anyone.
    #[getter]
    fn allowed(&self) -> bool {
        self.verdict == "allow"
    }

    /// The rules that failed, as `(reason, pointer)` pairs.
    #[getter]
    fn rule_failures(&self) -> Vec<(&'static str, String)> {
        self.failures.clone()
    }

    /// The decision record as a `dict`.
    #[getter]
    fn record<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        loads(py, &self.record)
    }

    /// The decision record as one JSON line (the decision record format: no caller).
    fn to_json(&self) -> &str {
        &self.record
    }

    /// The subject of the caller the call was decided for, or `None`.
    #[getter]
    fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The audit line: the record, plus a last member `"subject"` when the call was decided
    /// for a caller (what the `jsongate.audit` logger receives from the guards).
    #[getter]
    fn audit_json(&self) -> String {
        audit_line(&self.record, self.subject.as_deref())
    }

    fn __repr__(&self) -> String {
        format!("<jsongate.Decision {}>", self.record)
    }
}

/// `record` (a JSON object) with `"subject": subject` as its last member, when given.
fn audit_line(record: &str, subject: Option<&str>) -> String {
    match (subject, record.strip_suffix('}')) {
        (Some(who), Some(open)) => {
            let who = Value::String(who.to_owned()).to_json();
            format!("{open},\"subject\":{who}}}")
        }
        _ => record.to_owned(),
    }
}

/// One instruction-like pattern found in a string of a document.
#[pyclass(frozen, module = "jsongate")]
pub struct Finding {
    /// JSON Pointer of the string (for a member name: of the member it names).
    #[pyo3(get)]
    pointer: String,
    /// Whether the string is a member name (else a string value).
    #[pyo3(get)]
    in_name: bool,
    /// The pattern id.
    #[pyo3(get)]
    pattern: &'static str,
    /// What kind of steering it looks like (`"override"`, `"role"`, `"exfiltration"`, …).
    #[pyo3(get, name = "class_")]
    class: &'static str,
    /// Byte offset of the match in the decoded string.
    #[pyo3(get)]
    offset: usize,
    /// Byte length of the match in the decoded string (0 for a match found only in an
    /// obfuscation variant of a definition string).
    #[pyo3(get)]
    length: usize,
    /// Byte offset of the string's token in the document.
    #[pyo3(get)]
    at: u64,
    /// For a stage-2 finding (pattern `"learned"`, class `"instruction"`): the n-grams that
    /// weighed most in its score, best first; empty for phrases and rules.
    #[pyo3(get)]
    evidence: Vec<String>,
}

impl From<Found> for Finding {
    fn from(f: Found) -> Self {
        Finding {
            pointer: f.pointer,
            in_name: f.in_name,
            pattern: f.pattern,
            class: f.class.as_str(),
            offset: f.offset,
            length: f.len,
            at: f.at,
            evidence: f.evidence,
        }
    }
}

#[pymethods]
impl Finding {
    /// The finding as `jsongate screen` prints it (`"in"` is `"name"` or `"value"`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("pointer", &self.pointer)?;
        d.set_item("in", if self.in_name { "name" } else { "value" })?;
        d.set_item("pattern", self.pattern)?;
        d.set_item("class", self.class)?;
        d.set_item("offset", self.offset)?;
        d.set_item("at", self.at)?;
        if !self.evidence.is_empty() {
            d.set_item("evidence", &self.evidence)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "<jsongate.Finding {} {} at {:?}>",
            self.class, self.pattern, self.pointer
        )
    }
}

/// Screens every string of a JSON document (member names and values) for instruction-like
/// text. Returns a list of `Finding`s (empty: no known pattern, never "safe"); raises
/// `ScanError` when the document is not strict JSON within `limits`.
#[pyfunction]
#[pyo3(signature = (data, limits=None))]
pub fn screen<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    limits: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyList>> {
    let limits = options::limits(py, limits, Limits::new())?;
    let found = with_bytes(py, data, |b| jsongate::screen::screen(b, limits))?
        .map_err(|e| scan_error(py, &e))?;
    PyList::new(py, found.into_iter().map(Finding::from))
}

/// Screens one string of a tool definition (a name, description or schema member) for
/// instruction-like text, also in its obfuscation variants (confusable letters, leetspeak,
/// identifiers split, spaced-out letters joined, base64 and hex runs decoded), as
/// `mcp-proxy --screen-tools` does. Returns a list of `Finding`s.
#[pyfunction]
#[pyo3(signature = (text, pointer="", in_name=false))]
pub fn screen_definition<'py>(
    py: Python<'py>,
    text: &str,
    pointer: &str,
    in_name: bool,
) -> PyResult<Bound<'py, PyList>> {
    let mut found = Vec::new();
    jsongate::screen::screen_definition_str(text, pointer, in_name, &mut found);
    PyList::new(py, found.into_iter().map(Finding::from))
}

/// What screening's stage 2 (the learned model) makes of one string: a dict with `windows`
/// (sentence windows the trigger lexicon selected), `best` (the highest window score, `None`
/// when nothing was scored) and `threshold` (a window scoring above it is a finding).
#[pyfunction]
pub fn learned_score<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyDict>> {
    let s = jsongate::screen::learned_score(text);
    let d = PyDict::new(py);
    d.set_item("windows", s.windows)?;
    d.set_item("best", s.best)?;
    d.set_item("threshold", s.threshold)?;
    Ok(d)
}

/// `text` with the spans of `findings` (each finding's `offset` and `length`, as `screen`
/// reports them for that string) replaced by `[redacted]`, widened to whole words, and `<`/`>`
/// turned into their full-width forms: the `redact` screening action on one string.
#[pyfunction]
pub fn redact_text(text: &str, findings: Vec<PyRef<'_, Finding>>) -> String {
    let spans: Vec<(usize, usize)> = findings.iter().map(|f| (f.offset, f.length)).collect();
    jsongate::screen::redact_text(text, &spans)
}
