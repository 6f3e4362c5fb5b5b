//! Strings and member names: the fast borrowed path, and the resumable decoder for strings
//! that contain escapes or are split across chunks.
//!
//! This module owns escape decoding, surrogate pairing, UTF-8 validation across chunk
//! boundaries, and the name/string length limits. Lengths are counted in UTF-8 bytes after
//! unescaping, and checked at the byte that would cross the limit.

use super::simd;
use super::{names::Names, Event, Flow, Frame, Position, Scanner, Sink};
use crate::error::{Error, ErrorKind, Syntax};

/// Where the decoder stands inside an escape sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Esc {
    #[default]
    None,
    /// After `\`.
    Backslash,
    /// After `\u` and `n` hex digits whose value so far is `v`.
    Unicode { n: u8, v: u16 },
}

/// State of a string being decoded into the scanner's scratch buffer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StrState {
    /// Whether this string is a member name.
    pub(crate) name: bool,
    /// Offset of the opening quote.
    start: u64,
    esc: Esc,
    /// A high surrogate waiting for its low half (`\uD83D` before `\uDE00`).
    high: Option<u16>,
    /// Bytes of a UTF-8 sequence cut by the end of a chunk.
    utf8: [u8; 4],
    utf8_len: u8,
    /// Offset of the first byte of `utf8` (errors in it are reported there, as for a
    /// sequence that is not cut).
    utf8_at: u64,
}

/// The value of each hex digit byte, `0xFF` for every other byte.
static HEX: [u8; 256] = {
    let mut t = [0xFFu8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// The value of a hex digit byte.
#[inline(always)]
fn hex_digit(b: u8) -> Option<u16> {
    let d = HEX[usize::from(b)];
    (d != 0xFF).then_some(u16::from(d))
}

/// Length of the UTF-8 sequence a lead byte starts (valid lead bytes only).
fn seq_len(lead: u8) -> usize {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        _ => 4,
    }
}

/// Whether `c` is a Unicode noncharacter: U+FDD0–U+FDEF, or U+xFFFE/U+xFFFF in any plane.
fn is_noncharacter(c: char) -> bool {
    let u = c as u32;
    (0xFDD0..=0xFDEF).contains(&u) || u & 0xFFFE == 0xFFFE
}

/// Index of the first byte of the first noncharacter in the well-formed UTF-8 `text`. Every
/// noncharacter's encoding holds a continuation byte `B7` (`EF B7 90..AF`) or `BF`
/// (`EF BF BE|BF`, `F0..F4 x8F|x9F|xAF|xBF BF BE|BF`), so only those bytes are looked at.
fn noncharacter(text: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = memchr::memchr2(0xB7, 0xBF, &text[from..]) {
        let k = from + k;
        let next = text.get(k + 1).copied();
        if k >= 1 && text[k - 1] == 0xEF {
            match (text[k], next) {
                (0xB7, Some(0x90..=0xAF)) | (0xBF, Some(0xBE | 0xBF)) => return Some(k - 1),
                _ => {}
            }
        }
        if text[k] == 0xBF
            && k >= 2
            && (0xF0..=0xF4).contains(&text[k - 2])
            && text[k - 1] & 0x0F == 0x0F
            && matches!(next, Some(0xBE | 0xBF))
        {
            return Some(k - 2);
        }
        from = k + 1;
    }
    None
}

/// The part of `rest` a text with `room` bytes left before its length limit may read: the
/// bytes that fit and one more (the byte that would cross the limit, or the end of the text).
#[inline(always)]
fn within(rest: &[u8], room: u64) -> &[u8] {
    if room < rest.len() as u64 {
        &rest[..room as usize + 1]
    } else {
        rest
    }
}

/// Hands a complete name or string to the sink; for a name, records it in its object first.
/// `Err(())` means the name is a duplicate.
#[inline(always)]
fn deliver<S: Sink + ?Sized>(
    names: &mut Names,
    (top, depth): (&mut Frame, usize),
    text: &str,
    name: bool,
    start: Position,
    sink: &mut S,
) -> Result<Flow, ()> {
    if name {
        // A name is read only inside an object: `top` is that object.
        if !names.insert(depth, text.as_bytes()) {
            return Err(());
        }
        top.count += 1;
        top.open = true;
        Ok(sink.event_at(Event::Name(text), start))
    } else {
        Ok(sink.event_at(Event::String(text), start))
    }
}

impl Scanner {
    fn text_limit(&self, name: bool) -> (u64, fn(u64) -> ErrorKind) {
        if name {
            (self.limits.name_bytes, |limit| ErrorKind::NameTooLong {
                limit,
            })
        } else {
            (self.limits.string_bytes, |limit| ErrorKind::StringTooLong {
                limit,
            })
        }
    }

    /// Decodes the escape starting at `buf[j]` (a backslash) when it lies whole in `buf`
    /// and is valid: a simple escape, a `\uXXXX` outside the surrogates, or a surrogate
    /// pair. Returns the index after it; `None` leaves everything else (cut escapes, errors,
    /// length limits) to the byte-wise decoder, which reports them at the right byte.
    #[inline]
    fn escape_at(&mut self, buf: &[u8], j: usize, limit: u64) -> Option<usize> {
        let (c, next) = self.whole_escape(buf, j)?;
        if (self.scratch.len() + c.len_utf8()) as u64 > limit {
            return None;
        }
        self.scratch.push_char(c);
        Some(next)
    }

    /// The character of the escape starting at `buf[j]` (a backslash) and the index after
    /// it, when the escape lies whole in `buf`, is valid, and (under the I-JSON profile) is
    /// not a noncharacter; `None` for everything the byte-wise decoder must report.
    #[inline(always)]
    fn whole_escape(&self, buf: &[u8], j: usize) -> Option<(char, usize)> {
        let hex4 = |at: usize| -> Option<u16> {
            let h = buf.get(at..at + 4)?;
            let d = [
                HEX[usize::from(h[0])],
                HEX[usize::from(h[1])],
                HEX[usize::from(h[2])],
                HEX[usize::from(h[3])],
            ];
            if (d[0] | d[1] | d[2] | d[3]) & 0xF0 != 0 {
                return None;
            }
            Some(
                u16::from(d[0]) << 12
                    | u16::from(d[1]) << 8
                    | u16::from(d[2]) << 4
                    | u16::from(d[3]),
            )
        };
        let (c, next) = match *buf.get(j + 1)? {
            b'"' => ('"', j + 2),
            b'\\' => ('\\', j + 2),
            b'/' => ('/', j + 2),
            b'b' => ('\u{8}', j + 2),
            b'f' => ('\u{c}', j + 2),
            b'n' => ('\n', j + 2),
            b'r' => ('\r', j + 2),
            b't' => ('\t', j + 2),
            b'u' => {
                let v = hex4(j + 2)?;
                match v {
                    0xD800..=0xDBFF => {
                        if buf.get(j + 6..j + 8)? != b"\\u" {
                            return None;
                        }
                        let lo = hex4(j + 8)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        let cp =
                            0x10000 + ((u32::from(v) - 0xD800) << 10) + (u32::from(lo) - 0xDC00);
                        (char::from_u32(cp)?, j + 12)
                    }
                    0xDC00..=0xDFFF => return None,
                    v => (char::from_u32(u32::from(v))?, j + 6),
                }
            }
            _ => return None,
        };
        if self.limits.noncharacters && is_noncharacter(c) {
            return None;
        }
        Some((c, next))
    }

    /// Checks, without decoding, the rest of the string value whose opening quote is `buf[i]`,
    /// from the backslash at `buf[j]`, its first `len` bytes being well-formed text within
    /// the limit; for a sink that does not read the text ([`Sink::wants_text`]). Whole valid
    /// escapes and plain runs are measured as the decoder would count them; on anything else
    /// (an error, the limit, the chunk's end, a noncharacter to look for) the decoder starts
    /// again at the opening quote, so errors are the decoder's own, at the same offsets.
    #[inline(never)]
    fn string_skip<S: Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        win: &mut simd::Utf8Window<'_>,
        i: usize,
        mut j: usize,
        mut len: u64,
        sink: &mut S,
    ) -> Result<(usize, Option<Flow>), Error> {
        let limit = self.limits.string_bytes;
        let redo = loop {
            // `buf[j]` is a backslash.
            let Some((c, next)) = self.whole_escape(buf, j) else {
                break true;
            };
            len += c.len_utf8() as u64;
            if len > limit {
                break true;
            }
            j = next;
            let room = limit - len;
            let window = within(&buf[j..], room);
            let run = simd::string_run_with(self.backend, window);
            let n = run.len();
            if n as u64 > room
                || (!run.is_ascii()
                    && (self.limits.noncharacters || win.text(buf, j, j + n).is_none()))
            {
                break true;
            }
            len += n as u64;
            j += n;
            match buf.get(j) {
                Some(b'\\') => {}
                Some(b'"') => break false,
                _ => break true,
            }
        };
        let base = self.offset;
        if redo {
            self.scratch.clear();
            self.str_state = StrState {
                name: false,
                start: base + i as u64,
                ..StrState::default()
            };
            return self.string_continue(buf, win, i + 1, base, sink);
        }
        let at = self.pos(base + i as u64);
        Ok((j + 1, Some(sink.event_at(Event::String(""), at))))
    }

    /// Starts the string whose opening quote is `buf[i]`. Returns the index after the string
    /// and `Some(flow)` when it was complete and delivered, or `None` when the chunk ended
    /// inside it (the scanner is then in the string state).
    ///
    /// The common case (whole in the chunk, no escape, within the limit, well-formed) is
    /// inlined into the grammar loop; everything else goes to [`Self::string_slow`].
    #[inline(always)]
    pub(super) fn string_start<S: Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        win: &mut simd::Utf8Window<'_>,
        i: usize,
        name: bool,
        sink: &mut S,
    ) -> Result<(usize, Option<Flow>), Error> {
        let limit = if name {
            self.limits.name_bytes
        } else {
            self.limits.string_bytes
        };
        let window = within(&buf[i + 1..], limit);
        let run = match simd::string_run_head(window) {
            Some(run) => run,
            None => simd::string_run_with(self.backend, window),
        };
        let n = run.len();
        if window.get(n) == Some(&b'"') && (run.is_ascii() || !self.limits.noncharacters) {
            let text = if run.is_ascii() {
                run.as_str()
            } else {
                win.text(buf, i + 1, i + 1 + n)
            };
            if let Some(text) = text {
                let start = self.offset + i as u64;
                let close = i + 1 + n;
                let at = self.pos(start);
                if let Ok(flow) = deliver(
                    &mut self.names,
                    (&mut self.top, self.depth),
                    text,
                    name,
                    at,
                    sink,
                ) {
                    return Ok((close + 1, Some(flow)));
                }
            }
        } else if window.get(n) == Some(&b'\\') && (run.is_ascii() || !self.limits.noncharacters) {
            // Well-formed text up to an escape: the decoder starts at the backslash with the
            // run already in its buffer, instead of finding the run again.
            let text = if run.is_ascii() {
                run.as_str()
            } else {
                win.text(buf, i + 1, i + 1 + n)
            };
            if let Some(text) = text {
                if !name && !sink.wants_text() {
                    let len = text.len() as u64;
                    return self.string_skip(buf, win, i, i + 1 + n, len, sink);
                }
                return self.string_escaped(buf, win, i, text, name, sink);
            }
        }
        self.string_slow(buf, win, i, name, sink)
    }

    /// Starts the decoder on the string whose opening quote is `buf[i]` and whose first
    /// `text.len()` bytes are `text` (well-formed, within the length limit), followed by a
    /// backslash.
    #[inline(never)]
    fn string_escaped<S: Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        win: &mut simd::Utf8Window<'_>,
        i: usize,
        text: &str,
        name: bool,
        sink: &mut S,
    ) -> Result<(usize, Option<Flow>), Error> {
        let base = self.offset;
        self.scratch.clear();
        self.scratch.push_str(text);
        self.str_state = StrState {
            name,
            start: base + i as u64,
            ..StrState::default()
        };
        self.string_continue(buf, win, i + 1 + text.len(), base, sink)
    }

    /// [`Self::string_start`] for every other case: noncharacters to look for, a duplicate
    /// name, or a string that is escaped, split, too long or malformed (decoded byte by
    /// byte by the resumable decoder, which reports errors at the right byte).
    #[inline(never)]
    fn string_slow<S: Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        win: &mut simd::Utf8Window<'_>,
        i: usize,
        name: bool,
        sink: &mut S,
    ) -> Result<(usize, Option<Flow>), Error> {
        let base = self.offset;
        let start = base + i as u64;
        let (limit, _) = self.text_limit(name);
        let window = within(&buf[i + 1..], limit);
        let run = simd::string_run_with(self.backend, window);
        let n = run.len();
        if window.get(n) == Some(&b'"') {
            if let Some(text) = run.as_str() {
                if self.limits.noncharacters && !run.is_ascii() {
                    if let Some(k) = noncharacter(text.as_bytes()) {
                        let at = start + 1 + k as u64;
                        return Err(self.error(ErrorKind::Noncharacter, at, None));
                    }
                }
                let close = i + 1 + n;
                // Here when the fast path could not deliver: text that needed the
                // noncharacter scan, or a duplicate name (which had no effect there).
                let at = self.pos(start);
                return match deliver(
                    &mut self.names,
                    (&mut self.top, self.depth),
                    text,
                    name,
                    at,
                    sink,
                ) {
                    Ok(flow) => Ok((close + 1, Some(flow))),
                    Err(()) => Err(self.error(
                        ErrorKind::DuplicateName,
                        base + close as u64,
                        Some(text.as_bytes()),
                    )),
                };
            }
        }
        // Escaped, split, too long or malformed: the resumable decoder sorts it out.
        self.scratch.clear();
        self.str_state = StrState {
            name,
            start,
            ..StrState::default()
        };
        self.string_continue(buf, win, i + 1, base, sink)
    }

    /// Continues decoding the current string from `buf[j]`.
    #[allow(clippy::too_many_lines)]
    pub(super) fn string_continue<S: Sink + ?Sized>(
        &mut self,
        buf: &[u8],
        win: &mut simd::Utf8Window<'_>,
        mut j: usize,
        base: u64,
        sink: &mut S,
    ) -> Result<(usize, Option<Flow>), Error> {
        let name = self.str_state.name;
        let (limit, too_long) = self.text_limit(name);
        loop {
            let Some(&b) = buf.get(j) else {
                return Ok((j, None));
            };
            let at = base + j as u64;
            let st = &mut self.str_state;

            // A UTF-8 sequence cut by the previous chunk boundary.
            if st.utf8_len > 0 {
                // As on the uncut path: a byte that would belong to the string's text and
                // lies past the length limit is a length error, checked before its encoding;
                // a quote, backslash or control byte ends the text, so the cut sequence is
                // then simply truncated.
                let ends_text = b == b'"' || b == b'\\' || b < 0x20;
                if !ends_text && (self.scratch.len() + st.utf8_len as usize) as u64 >= limit {
                    return Err(self.error(too_long(limit), at, None));
                }
                if b & 0xC0 != 0x80 {
                    let at = st.utf8_at;
                    return Err(self.error(ErrorKind::InvalidUtf8, at, None));
                }
                st.utf8[st.utf8_len as usize] = b;
                st.utf8_len += 1;
                j += 1;
                // Reject as soon as the prefix can no longer become a valid sequence
                // (overlong, surrogate, above U+10FFFF), as the uncut path does.
                if let Err(e) = simdutf8::compat::from_utf8(&st.utf8[..st.utf8_len as usize]) {
                    if e.error_len().is_some() {
                        let at = st.utf8_at;
                        return Err(self.error(ErrorKind::InvalidUtf8, at, None));
                    }
                }
                let need = seq_len(st.utf8[0]);
                if st.utf8_len as usize == need {
                    let seq = st.utf8;
                    st.utf8_len = 0;
                    let Ok(text) = simdutf8::basic::from_utf8(&seq[..need]) else {
                        let at = self.str_state.utf8_at;
                        return Err(self.error(ErrorKind::InvalidUtf8, at, None));
                    };
                    if (self.scratch.len() + need) as u64 > limit {
                        return Err(self.error(too_long(limit), at, None));
                    }
                    if self.limits.noncharacters && noncharacter(text.as_bytes()).is_some() {
                        let at = self.str_state.utf8_at;
                        return Err(self.error(ErrorKind::Noncharacter, at, None));
                    }
                    self.scratch.push_str(text);
                }
                continue;
            }

            match st.esc {
                Esc::None => {}
                Esc::Backslash => {
                    j += 1;
                    if b == b'u' {
                        st.esc = Esc::Unicode { n: 0, v: 0 };
                        continue;
                    }
                    st.esc = Esc::None;
                    if st.high.is_some() {
                        return Err(self.error(ErrorKind::LoneSurrogate, at, None));
                    }
                    let decoded = match b {
                        b'"' => b'"',
                        b'\\' => b'\\',
                        b'/' => b'/',
                        b'b' => 0x08,
                        b'f' => 0x0c,
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        _ => {
                            return Err(self.error(
                                ErrorKind::Syntax(Syntax::InvalidEscape),
                                at,
                                None,
                            ))
                        }
                    };
                    if self.scratch.len() as u64 >= limit {
                        return Err(self.error(too_long(limit), at, None));
                    }
                    self.scratch.push_ascii(decoded);
                    continue;
                }
                Esc::Unicode { n, v } => {
                    let Some(d) = hex_digit(b) else {
                        return Err(self.error(ErrorKind::Syntax(Syntax::InvalidEscape), at, None));
                    };
                    j += 1;
                    let v = (v << 4) | d;
                    if n < 3 {
                        st.esc = Esc::Unicode { n: n + 1, v };
                        continue;
                    }
                    st.esc = Esc::None;
                    let cp = match (st.high, v) {
                        (Some(h), 0xDC00..=0xDFFF) => {
                            st.high = None;
                            0x10000 + ((u32::from(h) - 0xD800) << 10) + (u32::from(v) - 0xDC00)
                        }
                        (Some(_), _) | (None, 0xDC00..=0xDFFF) => {
                            return Err(self.error(ErrorKind::LoneSurrogate, at, None));
                        }
                        (None, 0xD800..=0xDBFF) => {
                            st.high = Some(v);
                            continue;
                        }
                        (None, v) => u32::from(v),
                    };
                    // `cp` is a scalar value: surrogates were excluded above.
                    let c = char::from_u32(cp).unwrap_or(char::REPLACEMENT_CHARACTER);
                    if self.limits.noncharacters && is_noncharacter(c) {
                        return Err(self.error(ErrorKind::Noncharacter, at, None));
                    }
                    if (self.scratch.len() + c.len_utf8()) as u64 > limit {
                        return Err(self.error(too_long(limit), at, None));
                    }
                    self.scratch.push_char(c);
                    continue;
                }
            }

            if st.high.is_some() {
                if b == b'\\' {
                    st.esc = Esc::Backslash;
                    j += 1;
                    continue;
                }
                return Err(self.error(ErrorKind::LoneSurrogate, at, None));
            }

            // A plain run up to the next quote, backslash or control byte.
            let room = limit.saturating_sub(self.scratch.len() as u64);
            let window = within(&buf[j..], room);
            let run = simd::string_run_with(self.backend, window);
            let n = run.len();
            let plain = &window[..n];
            let checked = &plain[..n.min(room as usize)];
            // One validation per run: the ASCII flag, or simdutf8 on the rest.
            let valid = if run.is_ascii() {
                run.as_str()
            } else {
                win.text(buf, j, j + checked.len())
            };
            if let (Some(text), true) = (valid, self.limits.noncharacters && !run.is_ascii()) {
                if let Some(k) = noncharacter(text.as_bytes()) {
                    let at = base + (j + k) as u64;
                    return Err(self.error(ErrorKind::Noncharacter, at, None));
                }
            }
            match valid {
                Some(text) if n as u64 <= room => self.scratch.push_str(text),
                Some(_) => {
                    return Err(self.error(
                        too_long(limit),
                        base + (j + room as usize) as u64,
                        None,
                    ));
                }
                None => {
                    // Locate the problem (the slow path: errors and cut sequences only).
                    let Err(e) = simdutf8::compat::from_utf8(checked) else {
                        // Both validators agree in practice; never accept on a disagreement.
                        return Err(self.error(ErrorKind::InvalidUtf8, base + j as u64, None));
                    };
                    let good = e.valid_up_to();
                    if self.limits.noncharacters {
                        // What lies before the bad or cut sequence comes first.
                        if let Some(k) = noncharacter(&plain[..good]) {
                            let at = base + (j + k) as u64;
                            return Err(self.error(ErrorKind::Noncharacter, at, None));
                        }
                    }
                    let cut_by_chunk =
                        e.error_len().is_none() && j + n == buf.len() && n as u64 <= room;
                    if !cut_by_chunk {
                        let bad = base + (j + good) as u64;
                        // A sequence cut by the limit window is a length error, not an
                        // encoding error.
                        if e.error_len().is_none() && checked.len() < n {
                            return Err(self.error(
                                too_long(limit),
                                base + (j + checked.len()) as u64,
                                None,
                            ));
                        }
                        return Err(self.error(ErrorKind::InvalidUtf8, bad, None));
                    }
                    if let Ok(prefix) = simdutf8::basic::from_utf8(&plain[..good]) {
                        self.scratch.push_str(prefix);
                    }
                    let st = &mut self.str_state;
                    let tail = &plain[good..];
                    st.utf8[..tail.len()].copy_from_slice(tail);
                    st.utf8_len = tail.len() as u8;
                    st.utf8_at = base + (j + good) as u64;
                    j += n;
                    continue;
                }
            }
            j += n;
            let Some(&stop) = buf.get(j) else {
                return Ok((j, None));
            };
            match stop {
                b'"' => {
                    let close = base + j as u64;
                    let start = self.str_state.start;
                    let text = self.scratch.as_str();
                    let at = self.pos(start);
                    return match deliver(
                        &mut self.names,
                        (&mut self.top, self.depth),
                        text,
                        name,
                        at,
                        sink,
                    ) {
                        Ok(flow) => Ok((j + 1, Some(flow))),
                        Err(()) => {
                            let dup = self.scratch.as_bytes().to_vec();
                            Err(self.error(ErrorKind::DuplicateName, close, Some(&dup)))
                        }
                    };
                }
                b'\\' => {
                    // Whole escapes inside the chunk are decoded at once; an escape cut by
                    // the chunk end goes through the byte-wise state machine below.
                    match self.escape_at(buf, j, limit) {
                        Some(next) => j = next,
                        None => {
                            self.str_state.esc = Esc::Backslash;
                            j += 1;
                        }
                    }
                }
                _ => {
                    return Err(self.error(
                        ErrorKind::Syntax(Syntax::ControlCharacter),
                        base + j as u64,
                        None,
                    ))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_noncharacter, noncharacter};

    /// The byte search agrees with the definition on every scalar value.
    #[test]
    fn noncharacter_search_matches_the_definition() {
        let mut buf = [0u8; 4];
        for cp in 0..=0x10_FFFFu32 {
            let Some(c) = char::from_u32(cp) else {
                continue;
            };
            let text = format!("a{}", c.encode_utf8(&mut buf));
            let want = is_noncharacter(c).then_some(1);
            assert_eq!(noncharacter(text.as_bytes()), want, "U+{cp:04X}");
        }
        assert_eq!(
            noncharacter("\u{FDCF}\u{FDF0}\u{FFFD}\u{10FFFD}".as_bytes()),
            None
        );
        assert_eq!(noncharacter("\u{3FFFF}".as_bytes()), Some(0));
        assert_eq!(noncharacter("é\u{FDD0}".as_bytes()), Some(2));
    }
}
