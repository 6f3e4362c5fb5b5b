//! Vectorised classification of string bodies — the crate's only `unsafe` code.
//!
//! [`string_run`] finds the first byte of a string body that ends the plain run (`"`, `\`,
//! or a control byte below 0x20) and reports whether any byte before it is non-ASCII. The
//! implementation is chosen once at run time: AVX2 where the CPU has it, SSE2 on any other
//! x86-64, and a portable scalar loop everywhere else. The scalar loop is always compiled and
//! is the oracle the vector versions are tested against.
//!
//! [`Run::as_str`] turns a classified run into `&str`; all-ASCII runs skip UTF-8 validation,
//! which is sound because the ASCII flag can only be set by this module after checking every
//! byte.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

/// A plain run of string-body bytes, classified by [`string_run`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Run<'a> {
    bytes: &'a [u8],
    ascii: bool,
}

impl<'a> Run<'a> {
    /// Number of bytes in the run (index of the stopping byte, or the input length).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether every byte of the run is below 0x80.
    #[inline]
    pub(crate) fn is_ascii(&self) -> bool {
        self.ascii
    }

    /// The run as text, or `None` when it is not well-formed UTF-8 (including a sequence cut
    /// at its end).
    #[inline]
    pub(crate) fn as_str(&self) -> Option<&'a str> {
        if self.ascii {
            // SAFETY: `ascii` is only true when `classify` saw every byte of `bytes` below
            // 0x80 (see `string_run` and each backend), and ASCII is valid UTF-8.
            Some(unsafe { std::str::from_utf8_unchecked(self.bytes) })
        } else {
            simdutf8::basic::from_utf8(self.bytes).ok()
        }
    }
}

/// Bytes validated as UTF-8 at once, ahead of the strings that need them (so a string of
/// CJK text or emoji costs no validation call of its own): a window of the chunk being
/// scanned, extended a few KiB at a time and only when a string reaches past it, so no more
/// than one window of work is done past the byte that decides a document.
pub(crate) struct Utf8Window<'a> {
    buf: &'a [u8],
    from: usize,
    to: usize,
}

/// Bytes validated ahead at a time.
const UTF8_WINDOW: usize = 4096;

impl<'a> Utf8Window<'a> {
    /// A window over `buf`, nothing validated yet.
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Utf8Window {
            buf,
            from: 0,
            to: 0,
        }
    }

    /// `buf[a..b]` as text when it is well-formed UTF-8: the same answer as
    /// `simdutf8::basic::from_utf8(&buf[a..b]).ok()`, without validating again bytes the
    /// window has validated already.
    #[inline]
    pub(crate) fn text<'b>(&mut self, buf: &'b [u8], a: usize, b: usize) -> Option<&'b str> {
        let bytes = buf.get(a..b)?;
        let inside = |i: usize| buf.get(i).is_some_and(|&x| x & 0xC0 == 0x80);
        if std::ptr::eq(self.buf, buf) && !inside(a) && !inside(b) {
            if a < self.from || b > self.to {
                let end = (a + UTF8_WINDOW).max(b).min(buf.len());
                self.from = a;
                self.to = match simdutf8::compat::from_utf8(&buf[a..end]) {
                    Ok(_) => end,
                    Err(e) => a + e.valid_up_to(),
                };
            }
            if self.from <= a && b <= self.to {
                // SAFETY: `buf` is the slice the window was made over (same address and
                // length, borrowed immutably for `'a`, so unchanged); `buf[from..to]` was
                // found well-formed by simdutf8; `from <= a <= b <= to`, and neither `a` nor
                // `b` is a continuation byte's index, so both are character boundaries of
                // that well-formed text and `buf[a..b]` is well-formed UTF-8 itself.
                return Some(unsafe { std::str::from_utf8_unchecked(bytes) });
            }
        }
        simdutf8::basic::from_utf8(bytes).ok()
    }
}

/// `bytes` as text when every byte is ASCII (the number grammar's bytes always are), with
/// no UTF-8 validation beyond that check; `""` otherwise.
#[inline(always)]
pub(crate) fn ascii_str(bytes: &[u8]) -> &str {
    if bytes.is_ascii() {
        // SAFETY: every byte was just checked to be below 0x80, and ASCII is valid UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    } else {
        ""
    }
}

/// A reusable byte buffer that only ever holds well-formed UTF-8: every mutator takes text
/// (`&str`, `char`) or an ASCII byte, so [`as_str`](Self::as_str) needs no validation.
#[derive(Default, Debug)]
pub(crate) struct Utf8Buf(Vec<u8>);

impl Utf8Buf {
    #[inline]
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    pub(crate) fn push_str(&mut self, s: &str) {
        self.0.extend_from_slice(s.as_bytes());
    }
    #[inline]
    pub(crate) fn push_char(&mut self, c: char) {
        let mut tmp = [0u8; 4];
        self.0.extend_from_slice(c.encode_utf8(&mut tmp).as_bytes());
    }
    /// Appends an ASCII byte; other bytes are ignored (callers only pass ASCII).
    #[inline]
    pub(crate) fn push_ascii(&mut self, b: u8) {
        if b.is_ascii() {
            self.0.push(b);
        }
    }
    #[inline]
    pub(crate) fn as_bytes(&self) -> &[u8] {
        &self.0
    }
    #[inline]
    pub(crate) fn as_str(&self) -> &str {
        // SAFETY: the buffer is only extended with `&str` contents, encoded `char`s and ASCII
        // bytes (see the mutators above), so it always holds well-formed UTF-8.
        unsafe { std::str::from_utf8_unchecked(&self.0) }
    }
}

/// Backends, in the order they are preferred.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    Scalar = 1,
    #[cfg(target_arch = "x86_64")]
    Sse2 = 2,
    #[cfg(target_arch = "x86_64")]
    Avx2 = 3,
}

static SELECTED: AtomicU8 = AtomicU8::new(0);

/// The backend this CPU runs, detected once.
#[inline]
pub(crate) fn selected() -> Backend {
    match SELECTED.load(Ordering::Relaxed) {
        1 => Backend::Scalar,
        #[cfg(target_arch = "x86_64")]
        2 => Backend::Sse2,
        #[cfg(target_arch = "x86_64")]
        3 => Backend::Avx2,
        _ => detect(),
    }
}

#[cold]
fn detect() -> Backend {
    let b = available().last().copied().unwrap_or(Backend::Scalar);
    SELECTED.store(b as u8, Ordering::Relaxed);
    b
}

/// Every backend this CPU can run, scalar first.
pub(crate) fn available() -> Vec<Backend> {
    #[allow(unused_mut)]
    let mut v = vec![Backend::Scalar];
    #[cfg(target_arch = "x86_64")]
    {
        // SSE2 is part of the x86-64 baseline.
        v.push(Backend::Sse2);
        if std::is_x86_feature_detected!("avx2") {
            v.push(Backend::Avx2);
        }
    }
    v
}

/// Classifies the plain run at the start of `body` with the detected backend.
#[inline]
#[cfg(test)]
pub(crate) fn string_run(body: &[u8]) -> Run<'_> {
    string_run_with(selected(), body)
}

/// Classifies the plain run at the start of `body` with a given backend (tests compare them).
#[inline]
pub(crate) fn string_run_with(backend: Backend, body: &[u8]) -> Run<'_> {
    let (len, ascii) = match backend {
        Backend::Scalar => scalar(body),
        // SAFETY: SSE2 is in the x86-64 baseline, so the target feature is always present.
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 => unsafe { sse2(body) },
        // SAFETY: `Backend::Avx2` is only produced by `available`, after
        // `is_x86_feature_detected!("avx2")` returned true on this CPU.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => unsafe { avx2(body) },
    };
    Run {
        bytes: &body[..len],
        ascii,
    }
}

/// The plain run at the start of `body` when it ends within the first 16 bytes: one SSE2
/// block compare, inlined into the caller, since most names and strings are that short.
/// `None` when `body` is shorter than 16 bytes or the run is longer: then
/// [`string_run_with`] classifies it. Gives the same runs as every backend (tested).
#[inline(always)]
pub(crate) fn string_run_head(body: &[u8]) -> Option<Run<'_>> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        if body.len() < 16 {
            return None;
        }
        // SAFETY: SSE2 is part of the x86-64 baseline (enabled for every x86-64 build), and
        // `body.len() >= 16`, so the unaligned 16-byte load reads inside `body`.
        let (mask, hi) = unsafe {
            let v = _mm_loadu_si128(body.as_ptr().cast::<__m128i>());
            let ctl = _mm_set1_epi8(0x1f);
            let is_ctl = _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl);
            let hit = _mm_or_si128(
                _mm_or_si128(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)),
                    _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8)),
                ),
                is_ctl,
            );
            (_mm_movemask_epi8(hit) as u32, _mm_movemask_epi8(v) as u32)
        };
        if mask == 0 {
            return None;
        }
        let t = mask.trailing_zeros();
        Some(Run {
            bytes: &body[..t as usize],
            ascii: hi & ((1u32 << t) - 1) == 0,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = body;
        None
    }
}

#[inline]
fn stops(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Portable oracle: one byte at a time.
fn scalar(body: &[u8]) -> (usize, bool) {
    let mut high = 0u8;
    for (i, &b) in body.iter().enumerate() {
        if stops(b) {
            return (i, high < 0x80);
        }
        high |= b;
    }
    (body.len(), high < 0x80)
}

/// Finishes a vector loop on the last, partial block.
#[inline]
fn tail(body: &[u8], start: usize, ascii: bool) -> (usize, bool) {
    let (n, a) = scalar(&body[start..]);
    (start + n, ascii && a)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
unsafe fn sse2(body: &[u8]) -> (usize, bool) {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    let quote = _mm_set1_epi8(b'"' as i8);
    let slash = _mm_set1_epi8(b'\\' as i8);
    let ctl = _mm_set1_epi8(0x1f);
    let mut i = 0;
    let mut high = 0u32;
    while i + 16 <= body.len() {
        // SAFETY: `i + 16 <= body.len()`, so the 16 bytes read lie inside `body`; the load is
        // unaligned, which `_mm_loadu_si128` allows.
        let v = unsafe { _mm_loadu_si128(body.as_ptr().add(i).cast::<__m128i>()) };
        let is_ctl = _mm_cmpeq_epi8(_mm_max_epu8(v, ctl), ctl);
        let hit = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, slash)),
            is_ctl,
        );
        let mask = _mm_movemask_epi8(hit) as u32;
        let hi = _mm_movemask_epi8(v) as u32;
        if mask != 0 {
            let t = mask.trailing_zeros();
            high |= hi & ((1u32 << t) - 1);
            return (i + t as usize, high == 0);
        }
        high |= hi;
        i += 16;
    }
    tail(body, i, high == 0)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn avx2(body: &[u8]) -> (usize, bool) {
    use std::arch::x86_64::{
        __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_movemask_epi8,
        _mm256_or_si256, _mm256_set1_epi8,
    };
    let quote = _mm256_set1_epi8(b'"' as i8);
    let slash = _mm256_set1_epi8(b'\\' as i8);
    let ctl = _mm256_set1_epi8(0x1f);
    let mut i = 0;
    let mut high = 0u32;
    while i + 32 <= body.len() {
        // SAFETY: `i + 32 <= body.len()`, so the 32 bytes read lie inside `body`; the load is
        // unaligned, which `_mm256_loadu_si256` allows.
        let v = unsafe { _mm256_loadu_si256(body.as_ptr().add(i).cast::<__m256i>()) };
        let is_ctl = _mm256_cmpeq_epi8(_mm256_max_epu8(v, ctl), ctl);
        let hit = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, slash)),
            is_ctl,
        );
        let mask = _mm256_movemask_epi8(hit) as u32;
        let hi = _mm256_movemask_epi8(v) as u32;
        if mask != 0 {
            let t = mask.trailing_zeros();
            high |= hi & ((1u64 << t) - 1) as u32;
            return (i + t as usize, high == 0);
        }
        high |= hi;
        i += 32;
    }
    // SAFETY: the SSE2 backend is in the x86-64 baseline.
    let (n, a) = unsafe { sse2(&body[i..]) };
    (i + n, a && high == 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check_all(body: &[u8]) {
        let want = scalar(body);
        for b in available() {
            let r = string_run_with(b, body);
            assert_eq!((r.len(), r.is_ascii()), want, "backend {b:?} on {body:?}");
        }
        if let Some(r) = string_run_head(body) {
            assert_eq!((r.len(), r.is_ascii()), want, "head block on {body:?}");
        }
    }

    #[test]
    fn stops_at_each_special_byte_in_every_lane() {
        for len in 0..80 {
            for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for pos in 0..len {
                    let mut v = vec![b'a'; len];
                    v[pos] = stop;
                    check_all(&v);
                    if pos > 0 {
                        v[pos - 1] = 0xC3;
                        check_all(&v);
                    }
                    let mut w = v.clone();
                    w.push(0xff);
                    check_all(&w);
                }
            }
        }
    }

    proptest! {
        #[test]
        fn utf8_window_agrees_with_validation(
            buf in proptest::collection::vec(prop_oneof![4 => 0x20u8..0x7f, 2 => 0x80u8..0xc0, 2 => 0xc2u8..0xf5, 1 => any::<u8>()], 0..9000),
            cuts in proptest::collection::vec((0usize..9000, 0usize..300), 1..40),
        ) {
            let mut w = Utf8Window::new(&buf);
            let mut pos = 0;
            for (skip, len) in cuts {
                let a = (pos + skip % 97).min(buf.len());
                let b = (a + len).min(buf.len());
                pos = b;
                prop_assert_eq!(w.text(&buf, a, b), simdutf8::basic::from_utf8(&buf[a..b]).ok());
            }
            // A different slice is never taken for the window's own.
            let copy = buf.clone();
            prop_assert_eq!(w.text(&copy, 0, copy.len()), simdutf8::basic::from_utf8(&copy).ok());
        }
    }

    #[test]
    fn utf8_buf_holds_only_text() {
        let mut b = Utf8Buf::default();
        b.push_str("caf");
        b.push_char('é');
        b.push_ascii(b'!');
        b.push_ascii(0xff); // ignored: not ASCII
        assert_eq!(b.as_str(), "café!");
        assert_eq!(b.len(), 6);
        b.clear();
        assert_eq!(b.as_str(), "");
    }

    #[test]
    fn as_str_validates_non_ascii() {
        let r = string_run(b"\xc3\xa9t\xc3\xa9\"");
        assert_eq!(r.as_str(), Some("été"));
        let bad = string_run(b"\xc3(\"");
        assert_eq!(bad.as_str(), None);
        assert_eq!(string_run(b"plain\\").as_str(), Some("plain"));
    }

    proptest! {
        #[test]
        fn vector_backends_match_scalar(body in proptest::collection::vec(any::<u8>(), 0..200)) {
            check_all(&body);
        }

        #[test]
        fn mostly_plain_bodies_match_scalar(
            body in proptest::collection::vec(prop_oneof![8 => 0x20u8..0x7f, 1 => 0x80u8..=0xff, 1 => any::<u8>()], 0..300)
        ) {
            check_all(&body);
        }
    }
}
