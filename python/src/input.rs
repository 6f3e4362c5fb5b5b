//! What a document may be given as, and how its bytes are reached without copying.
//!
//! `bytes` are read in place, and with the interpreter lock released once a document is large
//! enough for that to pay ([`RELEASE_AT`]): nothing can change them meanwhile. A `bytearray`
//! is read in place too, but with the lock held, so no Python code can write to it while the
//! scanner reads. A `memoryview` that covers the whole of a `bytes` or `bytearray` is read
//! through that object in the same way. Anything else costs one copy: a `str` is encoded to
//! UTF-8 (the stable ABI of `CPython` 3.9 has no borrowed UTF-8 view of a string), and other
//! `memoryview`s are copied with `tobytes()`. The buffer protocol itself is not in that ABI.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyMemoryView, PyString};

/// Documents at least this long are scanned with the interpreter lock released (when their
/// bytes cannot change meanwhile); below it, releasing and taking the lock back costs more
/// than it lets other threads do.
pub const RELEASE_AT: usize = 4096;

/// Where a document's bytes come from.
enum Source<'py> {
    /// An immutable object: its bytes may be read without the interpreter lock.
    Frozen(Bound<'py, PyBytes>),
    /// A `bytearray`: read in place, under the interpreter lock.
    Mutable(Bound<'py, PyByteArray>),
    /// A copy (an encoded `str`, a partial `memoryview`).
    Owned(Vec<u8>),
}

/// Runs `f` on the bytes of `obj`, with the interpreter lock released when that is safe and
/// worth it.
///
/// # Errors
/// A `TypeError` for an object that is not `bytes`, `bytearray`, `memoryview` or `str`; a
/// `UnicodeEncodeError` for a `str` with lone surrogates.
pub fn with_bytes<R, F>(py: Python<'_>, obj: &Bound<'_, PyAny>, f: F) -> PyResult<R>
where
    F: FnOnce(&[u8]) -> R + Send,
    R: Send,
{
    match source(obj)? {
        Source::Frozen(b) => {
            let data = b.as_bytes();
            Ok(if data.len() >= RELEASE_AT {
                py.detach(|| f(data))
            } else {
                f(data)
            })
        }
        Source::Mutable(b) => {
            // SAFETY: the interpreter lock is held for the whole of `f`, which runs no Python
            // code, so nothing can resize or write to the bytearray while the slice lives.
            #[allow(unsafe_code)]
            let data = unsafe { b.as_bytes() };
            Ok(f(data))
        }
        Source::Owned(v) => Ok(if v.len() >= RELEASE_AT {
            py.detach(|| f(&v))
        } else {
            f(&v)
        }),
    }
}

/// A copy of the bytes of `obj` (any of the types [`with_bytes`] takes).
///
/// # Errors
/// As [`with_bytes`].
pub fn copy_bytes(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    Ok(match source(obj)? {
        Source::Frozen(b) => b.as_bytes().to_vec(),
        Source::Mutable(b) => b.to_vec(),
        Source::Owned(v) => v,
    })
}

fn source<'py>(obj: &Bound<'py, PyAny>) -> PyResult<Source<'py>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Source::Frozen(b.clone()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Source::Owned(s.to_cow()?.into_owned().into_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Source::Mutable(b.clone()));
    }
    if let Ok(mv) = obj.cast::<PyMemoryView>() {
        let whole = |len: usize| -> PyResult<bool> {
            Ok(mv.getattr("c_contiguous")?.extract::<bool>()?
                && mv.getattr("nbytes")?.extract::<usize>()? == len)
        };
        let base = mv.getattr("obj")?;
        if let Ok(b) = base.cast::<PyBytes>() {
            if whole(b.as_bytes().len())? {
                return Ok(Source::Frozen(b.clone()));
            }
        } else if let Ok(b) = base.cast::<PyByteArray>() {
            if whole(b.len())? {
                return Ok(Source::Mutable(b.clone()));
            }
        }
        let copy = mv.call_method0("tobytes")?;
        return Ok(Source::Frozen(copy.cast_into::<PyBytes>()?));
    }
    Err(PyTypeError::new_err(format!(
        "expected bytes, bytearray, memoryview or str, not {}",
        obj.get_type().name()?
    )))
}
