//! Adapters that drive a [`Scanner`] from a complete slice or a `std::io::Read`.
//!
//! These are thin: they only move bytes into [`Scanner::feed`] and call
//! [`Scanner::finish`]. The reader adapter reads in fixed-size chunks into a buffer the
//! scanner keeps, so memory stays constant whatever the input size, and it stops reading as
//! soon as the verdict is known.

use std::io::Read;

use super::{Flow, Outcome, Scanner, Sink};
use crate::error::{Error, ErrorKind};

/// Size of the chunks the reader adapter reads.
///
/// # Example
/// ```
/// use jsongate::{Ignore, Limits, Scanner, READ_CHUNK};
/// // A reader that yields at most READ_CHUNK bytes per call is read to the end.
/// let doc = format!("[{}0]", "0,".repeat(READ_CHUNK));
/// let mut s = Scanner::new(Limits::new().max_bytes(1 << 20));
/// s.scan_read(doc.as_bytes(), &mut Ignore).unwrap();
/// assert_eq!(s.bytes_read(), doc.len() as u64);
/// ```
pub const READ_CHUNK: usize = 64 * 1024;

impl Scanner {
    /// Scans one complete document held in `input` (after [`reset`](Self::reset)).
    ///
    /// # Errors
    /// The first violation in the document.
    ///
    /// # Example
    /// ```
    /// use jsongate::{Ignore, Limits, Outcome, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// assert_eq!(s.scan_slice(b"[1, 2]", &mut Ignore).unwrap(), Outcome::Complete);
    /// assert!(s.scan_slice(b"[1, 2", &mut Ignore).is_err());
    /// ```
    pub fn scan_slice<S: Sink + ?Sized>(
        &mut self,
        input: &[u8],
        sink: &mut S,
    ) -> Result<Outcome, Error> {
        self.reset();
        if self.feed(input, sink)? == Flow::Stop {
            return Ok(Outcome::Stopped);
        }
        self.finish(sink)
    }

    /// Scans one document read from `reader` in chunks of [`READ_CHUNK`] bytes (after
    /// [`reset`](Self::reset)). Reading stops at the first error or when the sink stops.
    ///
    /// # Errors
    /// The first violation in the document, or [`ErrorKind::Io`] if reading fails (its
    /// offset is the number of bytes read before the failure).
    ///
    /// # Example
    /// ```
    /// use jsongate::{ErrorKind, Ignore, Limits, Outcome, Scanner};
    /// let mut s = Scanner::new(Limits::new());
    /// let file: &[u8] = b"{\"ok\": true}";
    /// assert_eq!(s.scan_read(file, &mut Ignore).unwrap(), Outcome::Complete);
    /// // Reading stops at the limit: the rest of an oversized stream is never read.
    /// let mut s = Scanner::new(Limits::new().max_bytes(4));
    /// let endless = std::io::repeat(b' ');
    /// let err = s.scan_read(endless, &mut Ignore).unwrap_err();
    /// assert!(matches!(err.kind(), ErrorKind::TooLarge { limit: 4 }));
    /// ```
    pub fn scan_read<R: Read, S: Sink + ?Sized>(
        &mut self,
        mut reader: R,
        sink: &mut S,
    ) -> Result<Outcome, Error> {
        self.reset();
        let mut buf = std::mem::take(&mut self.read_buf);
        buf.resize(READ_CHUNK, 0);
        let result = loop {
            let n = match reader.read(&mut buf) {
                Ok(0) => break self.finish(sink),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    let at = self.offset;
                    let err = self.error(ErrorKind::Io(e.kind()), at, None);
                    break Err(self.fail(err));
                }
            };
            match self.feed(&buf[..n], sink) {
                Ok(Flow::Continue) => {}
                Ok(Flow::Stop) => break Ok(Outcome::Stopped),
                Err(e) => break Err(e),
            }
        };
        self.read_buf = buf;
        result
    }
}
