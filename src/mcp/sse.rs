//! A push-fed parser of `text/event-stream` (the WHATWG server-sent events format), as MCP's
//! Streamable HTTP transport uses it: bytes in any split, events out, with a bound on the
//! bytes one event may hold.
//!
//! It owns no I/O. Line ends are `\r\n`, `\n` or `\r` (also split across pieces); `data`
//! lines are joined with `\n`; `id` and `event` are kept; comments and `retry` are ignored.
//! An event whose data would pass the bound keeps its first `max_event_bytes + 1` bytes and is
//! marked [`SseEvent::over_limit`], so the caller refuses it without holding the rest. An event
//! the stream never finishes is not emitted.

/// One event.
///
/// # Example
/// ```
/// use jsongate::mcp::sse::{parse_all, SseEvent};
/// let events = parse_all(b"id: 7\nevent: message\ndata: {\"a\":\ndata: 1}\n\n", 1024);
/// assert_eq!(events, [SseEvent { id: Some("7".into()), event: Some("message".into()),
///     data: b"{\"a\":\n1}".to_vec(), over_limit: false }]);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `id` field, when the event had one.
    pub id: Option<String>,
    /// The `event` field (the type), when the event had one.
    pub event: Option<String>,
    /// The `data` lines joined with `\n` (at most `max_event_bytes + 1` bytes).
    pub data: Vec<u8>,
    /// The data passed `max_event_bytes`; the rest was dropped unread.
    pub over_limit: bool,
}

/// The parser. See the [module documentation](self).
///
/// # Example
/// ```
/// use jsongate::mcp::sse::SseParser;
/// let mut p = SseParser::new(1 << 20);
/// let mut data = Vec::new();
/// // Any split, even inside a `\r\n`.
/// for piece in [&b"data: one\r"[..], b"\n\r\ndata: t", b"wo\n\n"] {
///     p.feed(piece, &mut |e| data.push(String::from_utf8(e.data).unwrap()));
/// }
/// assert_eq!(data, ["one", "two"]);
/// ```
#[derive(Debug)]
pub struct SseParser {
    max: usize,
    line: Vec<u8>,
    /// The current line passed the bound: the rest of it is dropped.
    line_over: bool,
    /// The last byte was `\r` (a `\n` right after it ends nothing more).
    after_cr: bool,
    event: SseEvent,
    has_data: bool,
}

impl SseParser {
    /// A parser whose events hold at most `max_event_bytes` bytes of data.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::sse::SseParser;
    /// let mut p = SseParser::new(4);
    /// let mut got = Vec::new();
    /// p.feed(b"data: 12345678\n\n", &mut |e| got.push(e));
    /// assert!(got[0].over_limit); // past the bound: marked, and only 4 + 1 bytes kept
    /// assert_eq!(got[0].data, b"12345");
    /// ```
    pub fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            max: max_event_bytes,
            line: Vec::new(),
            line_over: false,
            after_cr: false,
            event: SseEvent::default(),
            has_data: false,
        }
    }

    /// Feeds the next piece; `on_event` gets every event it completes.
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::sse::SseParser;
    /// let mut p = SseParser::new(1024);
    /// let mut n = 0;
    /// p.feed(b": a comment\nretry: 10\ndata: x\n", &mut |_| n += 1);
    /// assert_eq!(n, 0); // not ended by a blank line yet
    /// p.feed(b"\n", &mut |_| n += 1);
    /// assert_eq!(n, 1);
    /// ```
    pub fn feed(&mut self, mut bytes: &[u8], on_event: &mut dyn FnMut(SseEvent)) {
        if self.after_cr && !bytes.is_empty() {
            // A `\r\n` split between pieces ends one line, not two.
            self.after_cr = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while !bytes.is_empty() {
            match memchr::memchr2(b'\n', b'\r', bytes) {
                None => {
                    self.push(bytes);
                    return;
                }
                Some(i) => {
                    self.push(&bytes[..i]);
                    let cr = bytes[i] == b'\r';
                    bytes = &bytes[i + 1..];
                    if cr {
                        match bytes.first() {
                            Some(b'\n') => bytes = &bytes[1..],
                            Some(_) => {}
                            None => self.after_cr = true,
                        }
                    }
                    self.end_line(on_event);
                }
            }
        }
    }

    /// The stream ended: an event not ended by a blank line is dropped (as the format says).
    ///
    /// # Example
    /// ```
    /// use jsongate::mcp::sse::SseParser;
    /// let mut p = SseParser::new(1024);
    /// let mut n = 0;
    /// p.feed(b"data: cut off", &mut |_| n += 1);
    /// p.finish(); // the stream ended mid-event: the event is dropped
    /// p.feed(b"\n\n", &mut |_| n += 1);
    /// assert_eq!(n, 0);
    /// ```
    pub fn finish(&mut self) {
        self.line.clear();
        self.event = SseEvent::default();
        self.has_data = false;
        self.line_over = false;
    }

    fn push(&mut self, bytes: &[u8]) {
        // A line is at most the event bound plus the longest field name and its colon.
        let room = (self.max + 16).saturating_sub(self.line.len());
        if bytes.len() > room {
            self.line.extend_from_slice(&bytes[..room]);
            self.line_over = true;
        } else {
            self.line.extend_from_slice(bytes);
        }
    }

    fn end_line(&mut self, on_event: &mut dyn FnMut(SseEvent)) {
        let line = std::mem::take(&mut self.line);
        let over = std::mem::replace(&mut self.line_over, false);
        if line.is_empty() && !over {
            if self.has_data {
                let mut e = std::mem::take(&mut self.event);
                self.has_data = false;
                e.over_limit |= e.data.len() > self.max;
                on_event(e);
            } else {
                // An event without data is not dispatched; its id still counts in the
                // format, but MCP resumes only on events that carried a message.
                self.event = SseEvent::default();
            }
            return;
        }
        let (name, value) = match memchr::memchr(b':', &line) {
            Some(0) => return,
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (&line[..], &b""[..]),
        };
        match name {
            b"data" => {
                if self.has_data {
                    self.append(b"\n");
                }
                self.has_data = true;
                self.append(value);
                if over {
                    self.event.over_limit = true;
                }
            }
            b"id" if !value.contains(&0) && !over => {
                self.event.id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"event" if !over => {
                self.event.event = Some(String::from_utf8_lossy(value).into_owned());
            }
            _ => {}
        }
        self.line = line;
        self.line.clear();
    }

    fn append(&mut self, bytes: &[u8]) {
        let room = (self.max + 1).saturating_sub(self.event.data.len());
        if bytes.len() > room {
            self.event.data.extend_from_slice(&bytes[..room]);
            self.event.over_limit = true;
        } else {
            self.event.data.extend_from_slice(bytes);
        }
    }
}

/// Every event of `input` fed in one piece (for tests and the fuzz target's oracle).
///
/// # Example
/// ```
/// use jsongate::mcp::sse::parse_all;
/// let events = parse_all(b"data: a\n\ndata: b\r\n\r\ndata: unfinished", 64);
/// assert_eq!(events.iter().map(|e| e.data.as_slice()).collect::<Vec<_>>(), [b"a", b"b"]);
/// ```
pub fn parse_all(input: &[u8], max_event_bytes: usize) -> Vec<SseEvent> {
    let mut out = Vec::new();
    let mut p = SseParser::new(max_event_bytes);
    p.feed(input, &mut |e| out.push(e));
    p.finish();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_line_ends_and_splits() {
        let input = b": comment\r\nid: 7\r\nevent: message\r\ndata: {\"a\":\r\ndata:1}\r\n\r\n\
                      data: x\n\nid:8\rdata: y\r\rretry: 5\n\n";
        let want = vec![
            SseEvent {
                id: Some("7".into()),
                event: Some("message".into()),
                data: b"{\"a\":\n1}".to_vec(),
                over_limit: false,
            },
            SseEvent {
                data: b"x".to_vec(),
                ..SseEvent::default()
            },
            SseEvent {
                id: Some("8".into()),
                data: b"y".to_vec(),
                ..SseEvent::default()
            },
        ];
        assert_eq!(parse_all(input, 100), want);
        for i in 0..=input.len() {
            for j in i..=input.len() {
                let mut got = Vec::new();
                let mut p = SseParser::new(100);
                for piece in [&input[..i], &input[i..j], &input[j..]] {
                    p.feed(piece, &mut |e| got.push(e));
                }
                assert_eq!(got, want, "split at {i}, {j}");
            }
        }
    }

    #[test]
    fn an_event_over_the_bound_is_marked_and_not_held() {
        let mut input = b"data: ".to_vec();
        input.extend(std::iter::repeat_n(b'a', 1000));
        input.extend_from_slice(b"\ndata: more\n\ndata: ok\n\n");
        let got = parse_all(&input, 10);
        assert_eq!(got.len(), 2);
        assert!(got[0].over_limit);
        assert_eq!(got[0].data.len(), 11);
        assert_eq!(got[1].data, b"ok");
        assert!(!got[1].over_limit);
    }

    #[test]
    fn an_unfinished_event_is_dropped() {
        assert_eq!(parse_all(b"data: {\"id\":1", 100), Vec::new());
        assert_eq!(parse_all(b"id: 1\n\n", 100), Vec::new());
    }
}
