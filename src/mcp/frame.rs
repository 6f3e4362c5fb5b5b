//! Newline framing of the stdio transport: a reader that hands out each line in pieces as
//! they arrive (so a line is scanned while it streams and an oversized one is never
//! buffered), and [`IdFinder`], which recovers the top-level `"id"` of a line that failed
//! the strict scan, so that the request it answers can still be answered.

use std::io::{self, Read};

use sha2::{Digest, Sha256};

use super::reply::hex;
use super::Id;
use crate::scan::{Flow, Scanner, Sink};
use crate::{Error, Limits};

/// Bytes read from the stream at a time.
const CHUNK: usize = 64 * 1024;

/// One piece of the current line.
#[derive(Debug, PartialEq, Eq)]
pub enum Piece<'a> {
    /// More bytes of the current line (never containing `\n`).
    Data(&'a [u8]),
    /// The `\n` that ends the current line (not included in any piece).
    End,
    /// The stream ended (a line without its `\n` ends here too).
    Eof,
}

/// Splits a byte stream into lines, without ever holding more than one chunk.
pub struct LineReader<R> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    /// The last piece handed out ended a line or the stream.
    eof: bool,
}

impl<R: Read> LineReader<R> {
    /// A reader over `inner`.
    pub fn new(inner: R) -> Self {
        LineReader {
            inner,
            buf: vec![0; CHUNK].into_boxed_slice(),
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next piece of the current line.
    ///
    /// # Errors
    /// Read errors other than `Interrupted`.
    pub fn next_piece(&mut self) -> io::Result<Piece<'_>> {
        if self.eof {
            return Ok(Piece::Eof);
        }
        if self.start == self.end {
            let n = loop {
                match self.inner.read(&mut self.buf) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.eof = true;
                return Ok(Piece::Eof);
            }
            self.start = 0;
            self.end = n;
        }
        let pending = &self.buf[self.start..self.end];
        match memchr::memchr(b'\n', pending) {
            Some(0) => {
                self.start += 1;
                Ok(Piece::End)
            }
            Some(i) => {
                let piece = &self.buf[self.start..self.start + i];
                // The newline itself is handed out as `End` by the next call.
                self.start += i;
                Ok(Piece::Data(piece))
            }
            None => {
                let piece = &self.buf[self.start..self.end];
                self.start = self.end;
                Ok(Piece::Data(piece))
            }
        }
    }
}

/// Longest id text recovered (longer ids are not recovered).
const MAX_ID: usize = 256;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Want {
    /// Inside the top-level object, a member name may come next.
    Key,
    /// After a top-level name, before its `:`.
    Colon,
    /// After a top-level `:`, the value comes next.
    Value,
    /// Inside a top-level value, or after one.
    Rest,
}

/// A lenient, bounded pass over the bytes of a line that failed the strict scan, looking for
/// the value of a top-level member named exactly `"id"` (a number, a plain string or `null`).
/// It never keeps more than 256 bytes. A line with two different top-level ids, or
/// none, recovers nothing.
///
/// The recovered id only chooses which pending request gets the proxy's error answer: a
/// server could name any pending id in a valid response anyway, so trusting it gives a
/// hostile server nothing new.
#[derive(Debug)]
pub struct IdFinder {
    depth: u32,
    in_string: bool,
    escape: bool,
    want: Want,
    /// Collecting a top-level name (`Some(bytes)`) while `in_string`.
    key: Option<Vec<u8>>,
    /// The name just read was `id`.
    key_is_id: bool,
    /// Collecting the id value.
    value: Option<Vec<u8>>,
    value_is_string: bool,
    value_ok: bool,
    found: Option<Id>,
    ambiguous: bool,
    /// Depth of the message objects: 1 for a line that is an object, 2 for a batch (an
    /// array of messages); 0 until the first bracket.
    msg_depth: u32,
    /// The ids of a batch's messages.
    batch: Vec<Id>,
}

/// Most ids recovered from one batch line.
const MAX_BATCH_IDS: usize = 64;

/// What [`IdFinder`] recovered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Recovered {
    /// No id (or not looked for).
    None,
    /// The line's one top-level id.
    One(Id),
    /// The line names two different top-level ids.
    Ambiguous,
    /// The line is a batch (an array): the ids of its messages that name exactly one.
    Batch(Vec<Id>),
}

impl Default for IdFinder {
    fn default() -> Self {
        Self::new()
    }
}

impl IdFinder {
    /// A finder at the start of a line.
    pub fn new() -> Self {
        IdFinder {
            depth: 0,
            in_string: false,
            escape: false,
            want: Want::Rest,
            key: None,
            key_is_id: false,
            value: None,
            value_is_string: false,
            value_ok: true,
            found: None,
            ambiguous: false,
            msg_depth: 0,
            batch: Vec::new(),
        }
    }

    /// Reads more bytes of the line.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.byte(b);
        }
    }

    /// Everything recovered.
    pub fn result(mut self) -> Recovered {
        self.end_value();
        if self.msg_depth == 2 {
            self.end_element();
            return Recovered::Batch(self.batch);
        }
        match (self.ambiguous, self.found) {
            (true, _) => Recovered::Ambiguous,
            (false, Some(id)) => Recovered::One(id),
            (false, None) => Recovered::None,
        }
    }

    /// A batch element ended: keep its id.
    fn end_element(&mut self) {
        if let Some(id) = self.found.take() {
            if !self.ambiguous && self.batch.len() < MAX_BATCH_IDS {
                self.batch.push(id);
            }
        }
        self.ambiguous = false;
    }

    fn end_value(&mut self) {
        let Some(v) = self.value.take() else {
            return;
        };
        if !self.value_ok || v.is_empty() {
            return;
        }
        let Ok(text) = String::from_utf8(v) else {
            return;
        };
        let id = if self.value_is_string {
            Id::Str(text)
        } else if text == "null" {
            Id::Null
        } else if text.starts_with(|c: char| c == '-' || c.is_ascii_digit())
            && text
                .bytes()
                .all(|c| c.is_ascii_digit() || b"-+.eE".contains(&c))
        {
            // Kept as written: `2.0` is matched to a pending `2` as an imitation.
            Id::Num(text)
        } else {
            return;
        };
        match &self.found {
            Some(f) if *f != id => self.ambiguous = true,
            _ => self.found = Some(id),
        }
    }

    fn byte(&mut self, b: u8) {
        if self.in_string {
            if self.escape {
                self.escape = false;
                // Escaped names and ids are not recovered.
                if let Some(k) = &mut self.key {
                    k.clear();
                    k.extend_from_slice(b"~esc~");
                }
                if self.value.is_some() && self.value_is_string {
                    self.value_ok = false;
                }
            } else if b == b'\\' {
                self.escape = true;
            } else if b == b'"' {
                self.in_string = false;
                if let Some(k) = self.key.take() {
                    self.key_is_id = k == b"id";
                    self.want = Want::Colon;
                } else if self.value.is_some() && self.value_is_string {
                    self.end_value();
                }
            } else {
                if let Some(k) = &mut self.key {
                    if k.len() < 8 {
                        k.push(b);
                    } else {
                        k.clear();
                        k.extend_from_slice(b"~long~");
                    }
                }
                if let Some(v) = &mut self.value {
                    if self.value_is_string {
                        if v.len() < MAX_ID && b >= 0x20 {
                            v.push(b);
                        } else {
                            self.value_ok = false;
                        }
                    }
                }
            }
            return;
        }
        // A bare (number or literal) id value ends at the first byte that cannot be in it.
        if self.value.is_some() && !self.value_is_string {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'+' | b'.') {
                if let Some(v) = &mut self.value {
                    if v.len() < MAX_ID {
                        v.push(b);
                    } else {
                        self.value_ok = false;
                    }
                }
                return;
            }
            self.end_value();
        }
        match b {
            b' ' | b'\t' | b'\r' | b'\n' => {}
            b'"' => {
                self.in_string = true;
                if self.depth == self.msg_depth && self.want == Want::Key {
                    self.key = Some(Vec::new());
                } else if self.depth == self.msg_depth && self.want == Want::Value && self.key_is_id
                {
                    self.value = Some(Vec::new());
                    self.value_is_string = true;
                    self.value_ok = true;
                    self.want = Want::Rest;
                } else if self.depth == self.msg_depth && self.want == Want::Value {
                    self.want = Want::Rest;
                }
            }
            b'{' | b'[' => {
                if self.msg_depth == 0 {
                    self.msg_depth = if b == b'{' { 1 } else { 2 };
                }
                self.depth = self.depth.saturating_add(1);
                if self.depth == self.msg_depth && b == b'{' {
                    self.want = Want::Key;
                } else if self.depth == self.msg_depth + 1 {
                    self.want = Want::Rest;
                }
            }
            b'}' | b']' => {
                if self.msg_depth == 2 && self.depth == 2 && b == b'}' {
                    self.end_value();
                    self.end_element();
                }
                self.depth = self.depth.saturating_sub(1);
                if self.depth == self.msg_depth {
                    self.want = Want::Rest;
                }
            }
            b':' if self.depth == self.msg_depth && self.want == Want::Colon => {
                self.want = Want::Value;
            }
            b',' if self.depth == self.msg_depth => self.want = Want::Key,
            _ => {
                if self.depth == self.msg_depth && self.want == Want::Value {
                    self.want = Want::Rest;
                    if self.key_is_id {
                        self.value = Some(vec![b]);
                        self.value_is_string = false;
                        self.value_ok = true;
                    }
                }
            }
        }
    }
}

/// Reads one line's pieces into `buf` while scanning them; stops buffering (but keeps
/// reading to the end of the line) once the scan has failed or stopped.
pub(super) struct LineIn<R> {
    pub(super) reader: LineReader<R>,
    pub(super) scanner: Scanner,
    pub(super) buf: Vec<u8>,
}

/// How reading one line ended.
pub(super) struct Line {
    /// The scan failed (malformed, limit crossed); the line was not kept.
    pub(super) error: Option<Error>,
    /// The sink stopped the scan (its verdict is in the sink); the line was not kept.
    pub(super) stopped: bool,
    /// The line was empty or only whitespace (ignored).
    pub(super) blank: bool,
    /// Size of the whole line (without its newline).
    pub(super) size: u64,
    /// SHA-256 of the whole line, for a line that was not kept.
    pub(super) sha256: Option<String>,
    /// What was recovered of the ids of a line that failed.
    pub(super) recovered: Recovered,
    /// The line's first byte that is not whitespace.
    pub(super) first: Option<u8>,
    /// The stream ended after this line.
    pub(super) eof: bool,
}

impl<R: Read> LineIn<R> {
    pub(super) fn new(reader: R, limits: Limits) -> Self {
        LineIn {
            reader: LineReader::new(reader),
            scanner: Scanner::new(limits),
            buf: Vec::new(),
        }
    }

    /// Reads the next line into `sink` (and `self.buf`, unless the scan failed or
    /// stopped). `None` at the end of the stream.
    pub(super) fn next<S: Sink>(&mut self, sink: &mut S) -> io::Result<Option<Line>> {
        self.buf.clear();
        self.scanner.reset();
        let mut error = None;
        let mut stopped = false;
        let mut discard: Option<(IdFinder, Sha256, u64)> = None;
        let mut eof = false;
        let mut first = None;
        loop {
            match self.reader.next_piece()? {
                Piece::Data(d) => {
                    if first.is_none() {
                        first = d.iter().copied().find(|b| !b.is_ascii_whitespace());
                    }
                    if let Some((f, h, n)) = &mut discard {
                        f.feed(d);
                        h.update(d);
                        *n += d.len() as u64;
                        continue;
                    }
                    let r = self.scanner.feed(d, sink);
                    self.buf.extend_from_slice(d);
                    match r {
                        Ok(Flow::Continue) => continue,
                        Ok(Flow::Stop) => stopped = true,
                        Err(e) => error = Some(e),
                    }
                    // Decided: keep reading to the end of the line, without keeping it.
                    let mut f = IdFinder::new();
                    f.feed(&self.buf);
                    let mut h = Sha256::new();
                    h.update(&self.buf);
                    discard = Some((f, h, self.buf.len() as u64));
                    self.buf.clear();
                }
                Piece::End => break,
                Piece::Eof => {
                    eof = true;
                    break;
                }
            }
        }
        if let Some((f, h, n)) = discard {
            return Ok(Some(Line {
                error,
                stopped,
                blank: false,
                size: n,
                sha256: Some(hex(&h.finalize())),
                recovered: f.result(),
                first,
                eof,
            }));
        }
        if self.buf.iter().all(u8::is_ascii_whitespace) {
            if eof {
                return Ok(None);
            }
            return Ok(Some(Line {
                error: None,
                stopped: false,
                blank: true,
                size: self.buf.len() as u64,
                sha256: None,
                recovered: Recovered::None,
                first,
                eof,
            }));
        }
        let error = self.scanner.finish(sink).err();
        let recovered = match &error {
            Some(_) => {
                let mut f = IdFinder::new();
                f.feed(&self.buf);
                f.result()
            }
            None => Recovered::None,
        };
        Ok(Some(Line {
            error,
            stopped: false,
            blank: false,
            size: self.buf.len() as u64,
            sha256: None,
            recovered,
            first,
            eof,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(input: &[u8]) -> Vec<String> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        loop {
            match r.next_piece().unwrap() {
                Piece::Data(d) => out.push(String::from_utf8_lossy(d).into_owned()),
                Piece::End => out.push("<nl>".into()),
                Piece::Eof => {
                    out.push("<eof>".into());
                    break;
                }
            }
        }
        out
    }

    #[test]
    fn lines_and_a_last_line_without_newline() {
        assert_eq!(pieces(b"ab\n\ncd"), ["ab", "<nl>", "<nl>", "cd", "<eof>"]);
        assert_eq!(pieces(b"x\r\n"), ["x\r", "<nl>", "<eof>"]);
        assert_eq!(pieces(b""), ["<eof>"]);
    }

    #[test]
    fn long_lines_come_in_chunks() {
        let mut line = vec![b'a'; CHUNK * 2 + 5];
        line.push(b'\n');
        let mut r = LineReader::new(&line[..]);
        let mut total = 0;
        while let Piece::Data(d) = r.next_piece().unwrap() {
            assert!(d.len() <= CHUNK);
            total += d.len();
        }
        assert_eq!(total, CHUNK * 2 + 5);
    }

    fn find(line: &str) -> Option<Id> {
        let mut f = IdFinder::new();
        f.feed(line.as_bytes());
        match f.result() {
            Recovered::One(id) => Some(id),
            _ => None,
        }
    }

    #[test]
    fn finds_top_level_ids_only() {
        assert_eq!(
            find(r#"{"jsonrpc":"2.0","id":7,"result":{"x":[1,"#),
            Some(Id::Num("7".into()))
        );
        assert_eq!(
            find(r#"{"result":{"id":1,"a":[{"id":2}]},"id":"q-1"}"#),
            Some(Id::Str("q-1".into()))
        );
        assert_eq!(find(r#"{"result":"\"id\":5","id":null}"#), Some(Id::Null));
        assert_eq!(find(r#"{"result":{"deep":[[[["#), None);
        assert_eq!(find(r#"[{"id":1}]"#), None);
    }

    #[test]
    fn two_different_ids_recover_nothing() {
        assert_eq!(find(r#"{"id":1,"id":2}"#), None);
        assert_eq!(
            find(r#"{"id":1,"x":{"a":1,"a":2},"id":1}"#),
            Some(Id::Num("1".into()))
        );
    }

    #[test]
    fn a_batch_gives_the_id_of_each_message() {
        let mut f = IdFinder::new();
        f.feed(br#"[{"id":1,"result":{"id":9}},{"jsonrpc":"2.0","id":"b"},{"id":3,"id":4},{"x":[{"id":5}]},{"id":6"#);
        assert_eq!(
            f.result(),
            Recovered::Batch(vec![
                Id::Num("1".into()),
                Id::Str("b".into()),
                Id::Num("6".into())
            ])
        );
    }

    #[test]
    fn escaped_or_odd_ids_are_not_recovered() {
        assert_eq!(find(r#"{"id":"a\"b"}"#), None);
        assert_eq!(find(r#"{"\u0069d":3}"#), None);
        assert_eq!(find(r#"{"id":1.5}"#), Some(Id::Num("1.5".into())));
        assert_eq!(find(r#"{"id":true}"#), None);
    }
}
