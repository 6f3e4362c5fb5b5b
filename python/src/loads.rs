//! `loads`: Python objects from a JSON document in the same pass that checks it (and, given a
//! `Schema`, validates it).
//!
//! One scan feeds each event to a builder and, while the schema's verdict is open, to the
//! validator: no second parse, no intermediate tree. The builder keeps a stack of open
//! containers (a dict with its pending key, or the items of a list, which become a `list` in
//! one call when the array ends). Strings are the scanner's (borrowed or unescaped once);
//! integers without a fraction or exponent become `int` (exact at any size), others `float`
//! (correctly rounded) or, with `decimal=True`, `decimal.Decimal` of the exact text, as
//! `json.loads(parse_float=Decimal)` would. A validator that has decided a violation stops
//! the scan at that byte; one that has decided a pass early stops receiving events while the
//! scan goes on to build the rest.
//!
//! Member names repeat (every item of an array of records has the same ones, and every
//! answer of one tool), so each name up to [`KEY_CACHE_BYTES`] long is made into a `str` once
//! and reused across documents and calls: fewer objects, and dict insertion with the hash the
//! `str` already carries (as orjson does). The cache holds at most [`KEY_CACHE_ENTRIES`]
//! names and starts over when full, so ever-new names cannot grow it; it holds names only,
//! never values, and a cached name is the same `str` whoever sent it. The scanner is kept
//! between calls too (its buffers are reused; a call with other limits makes a new one).
//!
//! The interpreter lock is held throughout (objects are built as events arrive). `bytes` are
//! read in place (they cannot change); a `bytearray` or `memoryview` is copied first, because
//! building objects may run Python code (a collection's finalisers) that could resize it.

use std::sync::Mutex;

use jsongate::{Event, Flow, Limits, Position, Rejection, Scanner, Sink, Watcher};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString};

use crate::errors::{scan_error, violation_error};
use crate::options;
use crate::schema::Schema;

/// Longest member name the cache keeps.
const KEY_CACHE_BYTES: usize = 64;
/// Most names the cache keeps per call.
const KEY_CACHE_ENTRIES: usize = 4096;

type KeyCache = hashbrown::HashMap<Box<str>, Py<PyString>, foldhash::fast::FixedState>;

/// What `loads` keeps between calls: the name cache and a scanner.
#[derive(Default)]
struct Kept {
    keys: KeyCache,
    scanner: Option<Box<Scanner>>,
}

/// Taken for a whole call (the interpreter lock is held, so only a call made from inside
/// another, by a finaliser, can find it taken; that call works with fresh ones).
static KEPT: Mutex<Option<Kept>> = Mutex::new(None);

enum Frame<'py> {
    Object(Bound<'py, PyDict>, Option<Bound<'py, PyString>>),
    Array(Vec<Bound<'py, PyAny>>),
}

struct Builder<'py, 'v> {
    py: Python<'py>,
    stack: Vec<Frame<'py>>,
    keys: &'v mut KeyCache,
    root: Option<Bound<'py, PyAny>>,
    failed: Option<PyErr>,
    decimal: Option<Bound<'py, PyAny>>,
    /// The validator, while its verdict is open (none without a schema).
    watch: Option<Watcher<'v>>,
}

impl<'py> Builder<'py, '_> {
    fn number(&self, n: jsongate::Number<'_>) -> PyResult<Bound<'py, PyAny>> {
        let py = self.py;
        if let Some(i) = small_int(n.as_str().as_bytes()) {
            return Ok(i.into_pyobject(py)?.into_any());
        }
        if n.is_integer() {
            if let Ok(i) = n.as_i64() {
                return Ok(i.into_pyobject(py)?.into_any());
            }
            if let Ok(u) = n.as_u64() {
                return Ok(u.into_pyobject(py)?.into_any());
            }
            return py.get_type::<PyInt>().call1((n.as_str(),));
        }
        if let Some(decimal) = &self.decimal {
            return decimal.call1((n.as_str(),));
        }
        // Beyond f64's range the text still has a value: Python's own float() reads it
        // (as `inf`, as json.loads does).
        match n.as_f64() {
            Ok(f) => Ok(PyFloat::new(py, f).into_any()),
            Err(_) => py.get_type::<PyFloat>().call1((n.as_str(),)),
        }
    }

    fn value(&mut self, v: Bound<'py, PyAny>) -> PyResult<()> {
        match self.stack.last_mut() {
            Some(Frame::Array(items)) => items.push(v),
            Some(Frame::Object(dict, key)) => {
                let key = key.take().expect("a member's name precedes its value");
                dict.set_item(key, v)?;
            }
            None => self.root = Some(v),
        }
        Ok(())
    }

    fn build(&mut self, event: &Event<'_>) -> PyResult<()> {
        let py = self.py;
        match *event {
            Event::BeginObject => self.stack.push(Frame::Object(PyDict::new(py), None)),
            Event::BeginArray => self.stack.push(Frame::Array(Vec::new())),
            Event::EndObject => {
                if let Some(Frame::Object(dict, _)) = self.stack.pop() {
                    self.value(dict.into_any())?;
                }
            }
            Event::EndArray => {
                if let Some(Frame::Array(items)) = self.stack.pop() {
                    self.value(PyList::new(py, items)?.into_any())?;
                }
            }
            Event::Name(name) => {
                let s = if name.len() > KEY_CACHE_BYTES {
                    PyString::new(py, name)
                } else if let Some(s) = self.keys.get(name) {
                    s.bind(py).clone()
                } else {
                    let s = PyString::new(py, name);
                    if self.keys.len() >= KEY_CACHE_ENTRIES {
                        self.keys.clear();
                    }
                    self.keys.insert(name.into(), s.clone().unbind());
                    s
                };
                if let Some(Frame::Object(_, key)) = self.stack.last_mut() {
                    *key = Some(s);
                }
            }
            Event::String(s) => self.value(PyString::new(py, s).into_any())?,
            Event::Number(n) => {
                let v = self.number(n)?;
                self.value(v)?;
            }
            Event::Bool(b) => self.value(b.into_pyobject(py)?.to_owned().into_any())?,
            Event::Null => self.value(py.None().into_bound(py))?,
        }
        Ok(())
    }
}

impl Builder<'_, '_> {
    /// Hands the event to the validator (while its verdict is open), then builds.
    fn step(&mut self, event: Event<'_>, at: Position) -> Flow {
        if let Some(w) = self.watch.as_mut() {
            if w.event_at(event, at) == Flow::Stop {
                // A violation (or an exhausted budget): the verdict is in; read no more.
                return Flow::Stop;
            }
        }
        match self.build(&event) {
            Ok(()) => Flow::Continue,
            Err(e) => {
                self.failed = Some(e);
                Flow::Stop
            }
        }
    }
}

impl Sink for Builder<'_, '_> {
    fn event(&mut self, event: Event<'_>, offset: u64) -> Flow {
        self.step(event, Position::on_one_line(offset))
    }

    fn event_at(&mut self, event: Event<'_>, at: Position) -> Flow {
        self.step(event, at)
    }
}

/// The value of an integer literal of at most 18 digits (which cannot overflow `i64`), in
/// one pass; `None` for anything else (a fraction, an exponent, more digits).
fn small_int(text: &[u8]) -> Option<i64> {
    let (negative, digits) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(b - b'0');
    }
    Some(if negative { -v } else { v })
}

/// Documents at least this long are built with the cyclic garbage collector paused (see
/// [`GcPause`]).
const PAUSE_GC_AT: usize = 4096;

/// Pauses Python's cyclic garbage collector while a large document's objects are built, and
/// resumes it on drop (also on errors). Every new dict and list counts towards a collection,
/// so building a large document otherwise runs many collections that traverse the
/// half-built tree again and again (a fifth of the instructions of a 1.7 MB document); after
/// the resume, one collection sees it once. Nothing can notice the pause: the interpreter
/// lock is held throughout, so no other Python code runs meanwhile (beyond finalisers).
struct GcPause<'py>(Option<Bound<'py, PyAny>>);

impl<'py> GcPause<'py> {
    fn new(py: Python<'py>, len: usize) -> PyResult<Self> {
        if len < PAUSE_GC_AT {
            return Ok(GcPause(None));
        }
        let gc = py.import("gc")?;
        if !gc.call_method0("isenabled")?.is_truthy()? {
            return Ok(GcPause(None));
        }
        gc.call_method0("disable")?;
        Ok(GcPause(Some(gc.into_any())))
    }
}

impl Drop for GcPause<'_> {
    fn drop(&mut self) {
        if let Some(gc) = &self.0 {
            // `gc.enable()` cannot fail; were it to, the collector would stay paused, which
            // costs memory but not correctness, so the error is not raised from a drop.
            let _ = gc.call_method0("enable");
        }
    }
}

fn decimal_type(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static DECIMAL: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    DECIMAL
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(py.import("decimal")?.getattr("Decimal")?.unbind())
        })
        .map(|d| d.bind(py))
}

/// The document's bytes with the interpreter lock held: `bytes` in place, anything else
/// copied (see the module header).
fn owned_or_borrowed<'a>(data: &'a Bound<'_, PyAny>, copy: &'a mut Vec<u8>) -> PyResult<&'a [u8]> {
    if let Ok(b) = data.cast::<PyBytes>() {
        return Ok(b.as_bytes());
    }
    *copy = crate::input::copy_bytes(data)?;
    Ok(copy)
}

/// Parses `data` (`bytes`, `bytearray`, `memoryview` or `str`) into Python objects
/// (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`) in one strict pass within
/// `limits`, validated against `schema` (a `Schema`) in the same pass when one is given.
/// Raises `ScanError`/`LimitExceeded` for a document that is not strict JSON within the
/// limits and `ValidationError` for one that violates the schema, as `Schema.validate`
/// does. With `decimal=True`, numbers with a fraction or exponent become `decimal.Decimal`.
#[pyfunction]
#[pyo3(signature = (data, schema=None, *, limits=None, decimal=false))]
pub fn loads<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    schema: Option<&Bound<'py, Schema>>,
    limits: Option<&Bound<'py, PyDict>>,
    decimal: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let base = schema.map_or_else(Limits::new, |s| s.get().default_limits());
    let limits = options::limits(py, limits, base)?;
    let mut copy = Vec::new();
    let bytes = owned_or_borrowed(data, &mut copy)?;
    let mut validator = schema.map(|s| s.get().take());
    let mut guard = KEPT.try_lock().ok();
    let mut fresh = Kept::default();
    let kept = match guard.as_deref_mut() {
        Some(k) => k.get_or_insert_with(Kept::default),
        None => &mut fresh,
    };
    let mut scanner = match kept.scanner.take() {
        Some(mut s) if *s.limits() == limits => {
            s.reset();
            s
        }
        _ => Box::new(Scanner::new(limits)),
    };
    let pause = GcPause::new(py, bytes.len())?;
    let mut b = Builder {
        py,
        stack: Vec::new(),
        keys: &mut kept.keys,
        root: None,
        failed: None,
        decimal: if decimal {
            Some(decimal_type(py)?.clone())
        } else {
            None
        },
        watch: validator.as_mut().map(Watcher::new),
    };
    let out = scanner.scan_slice(bytes, &mut b);
    let (root, failed) = (b.root.take(), b.failed.take());
    drop(b);
    drop(pause);
    let verdict = match validator.as_ref() {
        Some(v) => v.verdict(&scanner, out),
        None => out.map(|_| ()).map_err(Rejection::Error),
    };
    kept.scanner = Some(scanner);
    drop(guard);
    if let (Some(s), Some(v)) = (schema, validator) {
        s.get().put(v);
    }
    if let Some(e) = failed {
        return Err(e);
    }
    match verdict {
        Ok(()) => Ok(root.expect("an accepted document has a value")),
        Err(Rejection::Error(e)) => Err(scan_error(py, &e)),
        Err(Rejection::Violation(v)) => Err(violation_error(py, &v)),
    }
}
