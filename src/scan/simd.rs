//! Vectorised classification of string bodies — the crate's only `unsafe` code.
//!
//! [`string_run_with`] finds the first byte of a string body that ends the plain run (`"`,
//! `\`, or a control byte below 0x20) and reports whether any byte before it is non-ASCII;
//! [`string_run_head`] does the same for a run that ends within the first 16 bytes, inlined
//! into the caller. The algorithm is written once, generic over a small [`Vector`] trait
//! (memchr's design), and instantiated for SSE2 (16 bytes) and AVX2 (32 bytes) on x86-64 and
//! for NEON (16 bytes, part of the aarch64 baseline) on aarch64. The instance is detected
//! once per process ([`selected`]: AVX2 where the CPU has it, SSE2 on any other x86-64, NEON
//! on aarch64, a portable scalar loop elsewhere); a scanner takes the answer once, when it is
//! made, and passes it with each call. That match on a one-byte [`Backend`] was measured
//! against a function pointer kept in the scanner and against a global pointer swapped in on
//! first use (memchr's "ifunc"): the pointers cost the grammar loop more register moves. The
//! scalar loop is always compiled and is the oracle every instance is tested against.
//!
//! [`Run::as_str`] turns a classified run into `&str`; all-ASCII runs skip UTF-8 validation,
//! which is sound because the ASCII flag can only be set by this module after checking every
//! byte. The scanner's other unchecked UTF-8 conversions live here too ([`Utf8Window`],
//! [`ascii_str`], [`Utf8Buf`]), each with the check that makes it sound next to it.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

/// A plain run of string-body bytes, classified by [`string_run_with`].
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
            // SAFETY: `ascii` is only true when this module saw every byte of `bytes` below
            // 0x80 (see `scalar`, `first_block` and `run`), and ASCII is valid UTF-8.
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

/// An instance of the classifier, by the target features it needs, in the order they are
/// preferred. A value other than `Scalar` is only made after checking that the CPU has
/// those features ([`selected`], [`available`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    Scalar = 1,
    #[cfg(target_arch = "x86_64")]
    Sse2 = 2,
    #[cfg(target_arch = "x86_64")]
    Avx2 = 3,
    #[cfg(target_arch = "aarch64")]
    Neon = 4,
}

/// The detected backend (0: not yet).
static SELECTED: AtomicU8 = AtomicU8::new(0);

/// The fastest backend this CPU runs, detected once per process: AVX2 where it has it, SSE2
/// on any other x86-64, NEON on aarch64 (part of its baseline), the scalar loop elsewhere.
/// A scanner reads it once, when it is made.
#[inline]
pub(crate) fn selected() -> Backend {
    match SELECTED.load(Ordering::Relaxed) {
        1 => Backend::Scalar,
        #[cfg(target_arch = "x86_64")]
        2 => Backend::Sse2,
        #[cfg(target_arch = "x86_64")]
        3 => Backend::Avx2,
        #[cfg(target_arch = "aarch64")]
        4 => Backend::Neon,
        _ => detect(),
    }
}

#[cold]
fn detect() -> Backend {
    let b = available().last().copied().unwrap_or(Backend::Scalar);
    SELECTED.store(b as u8, Ordering::Relaxed);
    b
}

/// Every backend this CPU runs, scalar first.
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
    #[cfg(target_arch = "aarch64")]
    v.push(Backend::Neon);
    v
}

/// Classifies the plain run at the start of `body` (it ends before the first `"`, `\\` or
/// byte below 0x20, or at the end of `body`) with a given backend: a scanner passes the one
/// it took from [`selected`], tests compare them all.
#[inline]
pub(crate) fn string_run_with(backend: Backend, body: &[u8]) -> Run<'_> {
    let (len, ascii) = match backend {
        Backend::Scalar => scalar(body),
        // SAFETY: SSE2 is in the x86-64 baseline, so the target feature is always present.
        #[cfg(target_arch = "x86_64")]
        Backend::Sse2 => unsafe { x86::sse2(body) },
        // SAFETY: `Backend::Avx2` is only produced by `available`, after
        // `is_x86_feature_detected!("avx2")` returned true on this CPU.
        #[cfg(target_arch = "x86_64")]
        Backend::Avx2 => unsafe { x86::avx2(body) },
        #[cfg(target_arch = "aarch64")]
        Backend::Neon => neon::neon(body),
    };
    Run {
        bytes: &body[..len],
        ascii,
    }
}

/// Classifies the plain run at the start of `body` with the detected backend.
#[cfg(test)]
pub(crate) fn string_run(body: &[u8]) -> Run<'_> {
    string_run_with(selected(), body)
}

/// The plain run at the start of `body` when it ends within the first 16 bytes: one block of
/// the baseline vector (SSE2, NEON), inlined into the caller, since most names and strings
/// are that short. `None` when `body` is shorter than 16 bytes or the run is longer (or there
/// is no baseline vector): then [`string_run_with`] classifies it. Gives the same runs as
/// every classifier (tested).
#[inline(always)]
pub(crate) fn string_run_head(body: &[u8]) -> Option<Run<'_>> {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        if body.len() < Baseline::BYTES {
            return None;
        }
        // SAFETY: the baseline vector's features are enabled for every build of this target
        // (SSE2 on x86-64, NEON on aarch64), and `body` holds at least one vector.
        let (len, ascii) = unsafe { first_block::<Baseline>(body) }?;
        Some(Run {
            bytes: &body[..len],
            ascii,
        })
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = body;
        None
    }
}

#[inline]
fn stops(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// Portable oracle: one byte at a time. Returns the index of the first stopping byte (or
/// `body.len()`) and whether every byte before it is ASCII.
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

/// What the generic algorithm needs of a SIMD vector of bytes (memchr's `Vector`): every
/// operation is lane-wise on unsigned bytes.
///
/// # Safety
///
/// Implementations are intrinsics wrappers: every method may only be called where the target
/// features of the implementing type are enabled (at compile time or, for AVX2, in a function
/// compiled with `#[target_feature]` after detection), and `load` reads `BYTES` bytes.
trait Vector: Copy {
    /// Lanes (bytes) per vector.
    const BYTES: usize;
    /// One or more bits per lane, as `movemask` makes them.
    type Mask: Mask;
    /// Every lane `b`.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled.
    unsafe fn splat(b: u8) -> Self;
    /// `BYTES` bytes from `p`, which need not be aligned.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled and `p..p + BYTES` is readable.
    unsafe fn load(p: *const u8) -> Self;
    /// 0xFF where the lanes are equal, 0 elsewhere.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled.
    unsafe fn eq(self, other: Self) -> Self;
    /// Lane-wise unsigned maximum.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled.
    unsafe fn max(self, other: Self) -> Self;
    /// Lane-wise bitwise or.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled.
    unsafe fn or(self, other: Self) -> Self;
    /// The lanes whose top bit is set, as a mask.
    ///
    /// # Safety
    ///
    /// The type's target features are enabled.
    unsafe fn movemask(self) -> Self::Mask;
}

/// A set of lanes, from [`Vector::movemask`].
trait Mask: Copy {
    /// Whether any lane is set.
    fn any(self) -> bool;
    /// The lowest set lane; `self.any()` must hold.
    fn first(self) -> usize;
    /// Whether `self` has a lane below the lowest lane of `hits`; `hits.any()` must hold.
    fn any_below(self, hits: Self) -> bool;
}

/// One bit per lane (SSE2, AVX2).
impl Mask for u32 {
    #[inline(always)]
    fn any(self) -> bool {
        self != 0
    }
    #[inline(always)]
    fn first(self) -> usize {
        self.trailing_zeros() as usize
    }
    #[inline(always)]
    fn any_below(self, hits: Self) -> bool {
        // The lanes below the first hit (`first() < 32`, as `hits` is not empty); the
        // callers use `first()` too, so its `tzcnt` is shared.
        self & ((1u32 << hits.first()) - 1) != 0
    }
}

/// The three splatted bytes the classifier compares with.
#[derive(Clone, Copy)]
struct Stops<V> {
    quote: V,
    slash: V,
    /// 0x1f: `max(v, 0x1f) == 0x1f` exactly when `v < 0x20`.
    ctl: V,
}

impl<V: Vector> Stops<V> {
    /// # Safety
    ///
    /// `V`'s target features are enabled.
    #[inline(always)]
    unsafe fn new() -> Self {
        Stops {
            quote: V::splat(b'"'),
            slash: V::splat(b'\\'),
            ctl: V::splat(0x1f),
        }
    }

    /// The lanes of `v` that stop a plain run.
    ///
    /// # Safety
    ///
    /// `V`'s target features are enabled.
    #[inline(always)]
    unsafe fn hits(self, v: V) -> V::Mask {
        let ctl = v.max(self.ctl).eq(self.ctl);
        v.eq(self.quote).or(v.eq(self.slash)).or(ctl).movemask()
    }
}

/// The run when it stops within the first vector of `body`: `(index, ascii)`, or `None` when
/// the first vector has no stopping byte.
///
/// # Safety
///
/// `V`'s target features are enabled and `body.len() >= V::BYTES`.
#[inline(always)]
unsafe fn first_block<V: Vector>(body: &[u8]) -> Option<(usize, bool)> {
    let v = V::load(body.as_ptr());
    let hits = Stops::<V>::new().hits(v);
    if hits.any() {
        Some((hits.first(), !v.movemask().any_below(hits)))
    } else {
        None
    }
}

/// The classifier, written once for every vector (memchr's `arch/generic`): whole vectors
/// from the start, then one last vector that ends at the end of `body` and overlaps bytes
/// already seen (they hold no stopping byte, and their high bits are already counted).
///
/// # Safety
///
/// `V`'s target features are enabled and `body.len() >= V::BYTES`.
#[inline(always)]
unsafe fn run<V: Vector>(body: &[u8]) -> (usize, bool) {
    debug_assert!(body.len() >= V::BYTES);
    let stops = Stops::<V>::new();
    let p = body.as_ptr();
    let n = body.len();
    // The or of every vector before the current one: its top bits say whether a byte
    // before the run's end is non-ASCII.
    let mut seen = V::splat(0);
    let mut i = 0;
    while i + V::BYTES <= n {
        // SAFETY: `i + BYTES <= n`, so the vector read lies inside `body`.
        let v = unsafe { V::load(p.add(i)) };
        let hits = stops.hits(v);
        if hits.any() {
            let ascii = !seen.movemask().any() && !v.movemask().any_below(hits);
            return (i + hits.first(), ascii);
        }
        seen = seen.or(v);
        i += V::BYTES;
    }
    if i < n {
        let at = n - V::BYTES;
        // SAFETY: `n >= BYTES` (the caller's contract), so `at..n` lies inside `body`.
        let v = unsafe { V::load(p.add(at)) };
        let hits = stops.hits(v);
        if hits.any() {
            let ascii = !seen.movemask().any() && !v.movemask().any_below(hits);
            return (at + hits.first(), ascii);
        }
        seen = seen.or(v);
    }
    (n, !seen.movemask().any())
}

/// The vector the inlined head block uses: one every build of the target has.
#[cfg(target_arch = "x86_64")]
type Baseline = std::arch::x86_64::__m128i;
#[cfg(target_arch = "aarch64")]
type Baseline = std::arch::aarch64::uint8x16_t;

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{run, scalar, Vector};
    use std::arch::x86_64::{
        __m128i, __m256i, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8,
        _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm_cmpeq_epi8, _mm_loadu_si128,
        _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };

    // Each method has the `# Safety` contract of its declaration in `Vector`.
    impl Vector for __m128i {
        const BYTES: usize = 16;
        type Mask = u32;
        #[inline(always)]
        unsafe fn splat(b: u8) -> Self {
            _mm_set1_epi8(b as i8)
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller makes 16 bytes at `p` readable; `loadu` needs no alignment.
            unsafe { _mm_loadu_si128(p.cast::<__m128i>()) }
        }
        #[inline(always)]
        unsafe fn eq(self, other: Self) -> Self {
            _mm_cmpeq_epi8(self, other)
        }
        #[inline(always)]
        unsafe fn max(self, other: Self) -> Self {
            _mm_max_epu8(self, other)
        }
        #[inline(always)]
        unsafe fn or(self, other: Self) -> Self {
            _mm_or_si128(self, other)
        }
        #[inline(always)]
        unsafe fn movemask(self) -> u32 {
            _mm_movemask_epi8(self) as u32
        }
    }

    // Each method has the `# Safety` contract of its declaration in `Vector`.
    impl Vector for __m256i {
        const BYTES: usize = 32;
        type Mask = u32;
        #[inline(always)]
        unsafe fn splat(b: u8) -> Self {
            _mm256_set1_epi8(b as i8)
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller makes 32 bytes at `p` readable; `loadu` needs no alignment.
            unsafe { _mm256_loadu_si256(p.cast::<__m256i>()) }
        }
        #[inline(always)]
        unsafe fn eq(self, other: Self) -> Self {
            _mm256_cmpeq_epi8(self, other)
        }
        #[inline(always)]
        unsafe fn max(self, other: Self) -> Self {
            _mm256_max_epu8(self, other)
        }
        #[inline(always)]
        unsafe fn or(self, other: Self) -> Self {
            _mm256_or_si256(self, other)
        }
        #[inline(always)]
        unsafe fn movemask(self) -> u32 {
            _mm256_movemask_epi8(self) as u32
        }
    }

    /// The SSE2 instance; bodies shorter than a vector go to the scalar loop.
    ///
    /// # Safety
    ///
    /// The CPU has SSE2 (every x86-64 does).
    #[target_feature(enable = "sse2")]
    pub(super) unsafe fn sse2(body: &[u8]) -> (usize, bool) {
        if body.len() < 16 {
            return scalar(body);
        }
        // SAFETY: SSE2 is enabled in this function and `body` holds at least 16 bytes.
        unsafe { run::<__m128i>(body) }
    }

    /// The AVX2 instance; bodies shorter than a vector go to the SSE2 instance.
    ///
    /// # Safety
    ///
    /// The CPU has AVX2 (`is_x86_feature_detected!("avx2")` returned true).
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn avx2(body: &[u8]) -> (usize, bool) {
        if body.len() < 32 {
            // SAFETY: AVX2 implies SSE2.
            return unsafe { sse2(body) };
        }
        // SAFETY: AVX2 is enabled in this function (the caller's contract) and `body` holds
        // at least 32 bytes.
        unsafe { run::<__m256i>(body) }
    }
}

#[cfg(target_arch = "aarch64")]
mod neon {
    use super::{run, scalar, Mask, Vector};
    use std::arch::aarch64::{
        uint8x16_t, vceqq_u8, vcltzq_s8, vdupq_n_u8, vget_lane_u64, vld1q_u8, vmaxq_u8, vorrq_u8,
        vreinterpret_u64_u8, vreinterpretq_s8_u8, vreinterpretq_u16_u8, vshrn_n_u16,
    };

    /// Four bits per lane (NEON has no `movemask`; memchr's `NeonMoveMask`).
    #[derive(Clone, Copy)]
    pub(super) struct Nibbles(u64);

    impl Mask for Nibbles {
        #[inline(always)]
        fn any(self) -> bool {
            self.0 != 0
        }
        #[inline(always)]
        fn first(self) -> usize {
            (self.0.trailing_zeros() >> 2) as usize
        }
        #[inline(always)]
        fn any_below(self, hits: Self) -> bool {
            self.0 & hits.0.wrapping_sub(1) & !hits.0 != 0
        }
    }

    // Each method has the `# Safety` contract of its declaration in `Vector`.
    impl Vector for uint8x16_t {
        const BYTES: usize = 16;
        type Mask = Nibbles;
        #[inline(always)]
        unsafe fn splat(b: u8) -> Self {
            vdupq_n_u8(b)
        }
        #[inline(always)]
        unsafe fn load(p: *const u8) -> Self {
            // SAFETY: the caller makes 16 bytes at `p` readable; `vld1q_u8` needs no
            // alignment beyond a byte's.
            unsafe { vld1q_u8(p) }
        }
        #[inline(always)]
        unsafe fn eq(self, other: Self) -> Self {
            vceqq_u8(self, other)
        }
        #[inline(always)]
        unsafe fn max(self, other: Self) -> Self {
            vmaxq_u8(self, other)
        }
        #[inline(always)]
        unsafe fn or(self, other: Self) -> Self {
            vorrq_u8(self, other)
        }
        #[inline(always)]
        unsafe fn movemask(self) -> Nibbles {
            // Each lane to 0xFF or 0 by its top bit, then each pair of lanes narrowed to one
            // byte of two nibbles.
            let full = vcltzq_s8(vreinterpretq_s8_u8(self));
            let narrowed = vshrn_n_u16::<4>(vreinterpretq_u16_u8(full));
            Nibbles(vget_lane_u64::<0>(vreinterpret_u64_u8(narrowed)))
        }
    }

    /// The NEON instance (NEON is part of the aarch64 baseline); bodies shorter than a
    /// vector go to the scalar loop.
    pub(super) fn neon(body: &[u8]) -> (usize, bool) {
        if body.len() < 16 {
            return scalar(body);
        }
        // SAFETY: NEON is enabled for every aarch64 build, and `body` holds a vector.
        unsafe { run::<uint8x16_t>(body) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The specification, independent of [`scalar`]: the first stopping byte, and whether
    /// the bytes before it are ASCII.
    fn spec(body: &[u8]) -> (usize, bool) {
        let n = body.iter().position(|&b| stops(b)).unwrap_or(body.len());
        (n, body[..n].is_ascii())
    }

    fn check_all(body: &[u8]) {
        let want = scalar(body);
        assert_eq!(want, spec(body), "scalar on {body:?}");
        for b in available() {
            let r = string_run_with(b, body);
            assert_eq!((r.len(), r.is_ascii()), want, "backend {b:?} on {body:?}");
        }
        let r = string_run(body);
        assert_eq!(
            (r.len(), r.is_ascii()),
            want,
            "selected instance on {body:?}"
        );
        if let Some(r) = string_run_head(body) {
            assert_eq!((r.len(), r.is_ascii()), want, "head block on {body:?}");
        }
        #[cfg(target_arch = "x86_64")]
        if body.len() >= 32 {
            for (name, got) in x86_first_blocks(body) {
                if let Some(got) = got {
                    assert_eq!(got, want, "{name} first block on {body:?}");
                }
            }
        }
    }

    /// The first-block step of each x86-64 instance (the SSE2 one is also the inlined head).
    #[cfg(target_arch = "x86_64")]
    fn x86_first_blocks(body: &[u8]) -> Vec<(&'static str, Option<(usize, bool)>)> {
        use std::arch::x86_64::{__m128i, __m256i};
        /// # Safety
        ///
        /// The CPU has AVX2 and `body.len() >= 32`.
        #[target_feature(enable = "avx2")]
        unsafe fn avx2_first_block(body: &[u8]) -> Option<(usize, bool)> {
            // SAFETY: AVX2 is enabled here, and the caller gives a whole vector.
            unsafe { first_block::<__m256i>(body) }
        }
        assert!(body.len() >= 32);
        // SAFETY: SSE2 is in the x86-64 baseline; the body holds a vector.
        let mut v = vec![("sse2", unsafe { first_block::<__m128i>(body) })];
        if std::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 was just detected; the body holds a vector.
            v.push(("avx2", unsafe { avx2_first_block(body) }));
        }
        v
    }

    /// The selected instance is the last one this CPU runs, and on x86-64 both vector
    /// instances are listed when the CPU has them, so the tests here run each of them.
    #[test]
    fn every_instance_on_this_cpu_is_tested() {
        let all = available();
        assert_eq!(all[0], Backend::Scalar);
        #[cfg(target_arch = "x86_64")]
        {
            assert_eq!(all[1], Backend::Sse2);
            if std::is_x86_feature_detected!("avx2") {
                assert_eq!(all[2..], [Backend::Avx2]);
            } else {
                eprintln!("no AVX2 on this CPU: the AVX2 instance is not tested");
                assert_eq!(all.len(), 2);
            }
        }
        #[cfg(target_arch = "aarch64")]
        assert_eq!(all[1..], [Backend::Neon]);
        assert_eq!(selected(), *all.last().unwrap());
        // Detected once, then read back.
        assert_eq!(selected(), *all.last().unwrap());
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

    /// A non-ASCII byte in every lane, before and after the stop, and with no stop at all
    /// (the overlapping last vector).
    #[test]
    fn high_byte_in_every_lane() {
        for len in 0..80 {
            for high in 0..len {
                let mut v = vec![b'a'; len];
                v[high] = 0x80;
                check_all(&v);
                for stop in 0..len {
                    if stop != high {
                        let mut w = v.clone();
                        w[stop] = b'"';
                        check_all(&w);
                    }
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
