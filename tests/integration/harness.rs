//! Drivers shared by the scanner tests: owned copies of events, and ways to feed the same
//! bytes in different chunkings (one shot, byte by byte, given split points, seeded random
//! chunk sizes, a `Read` that returns short reads).
//!
//! Everything here only drives the public API; no test logic or expectations live here.

#![allow(dead_code)]

use std::io::Read;

use jsongate::{Error, Event, Flow, Limits, Outcome, Scanner, Sink};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// An event copied out of the scanner (events borrow from the chunk or the scratch buffer).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ev {
    BeginObject,
    EndObject,
    BeginArray,
    EndArray,
    Name(String),
    String(String),
    Number(String),
    Bool(bool),
    Null,
}

impl From<Event<'_>> for Ev {
    fn from(e: Event<'_>) -> Self {
        match e {
            Event::BeginObject => Ev::BeginObject,
            Event::EndObject => Ev::EndObject,
            Event::BeginArray => Ev::BeginArray,
            Event::EndArray => Ev::EndArray,
            Event::Name(s) => Ev::Name(s.to_owned()),
            Event::String(s) => Ev::String(s.to_owned()),
            Event::Number(n) => Ev::Number(n.as_str().to_owned()),
            Event::Bool(b) => Ev::Bool(b),
            Event::Null => Ev::Null,
        }
    }
}

/// Everything observable about one scan: the events with their start offsets, the verdict,
/// and how many bytes the scanner says it consumed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Run {
    pub events: Vec<(Ev, u64)>,
    pub result: Result<Outcome, Error>,
    pub bytes_read: u64,
}

impl Run {
    /// The error, panicking with the run if the scan succeeded.
    pub fn err(&self) -> &Error {
        match &self.result {
            Ok(o) => panic!("expected an error, got {o:?} with events {:?}", self.events),
            Err(e) => e,
        }
    }

    /// Just the events, without offsets.
    pub fn evs(&self) -> Vec<Ev> {
        self.events.iter().map(|(e, _)| e.clone()).collect()
    }
}

/// Feeds `input` cut at the given increasing split points, then finishes.
pub fn run_splits(input: &[u8], limits: Limits, splits: &[usize]) -> Run {
    let mut events = Vec::new();
    let mut sink = |e: Event<'_>, at: u64| {
        events.push((Ev::from(e), at));
        Flow::Continue
    };
    let mut s = Scanner::new(limits);
    let mut prev = 0;
    let mut result = None;
    for &cut in splits.iter().chain(std::iter::once(&input.len())) {
        assert!(prev <= cut && cut <= input.len(), "bad split {cut}");
        match s.feed(&input[prev..cut], &mut sink) {
            Ok(Flow::Continue) => {}
            Ok(Flow::Stop) => {
                result = Some(Ok(Outcome::Stopped));
                break;
            }
            Err(e) => {
                result = Some(Err(e));
                break;
            }
        }
        prev = cut;
    }
    let result = result.unwrap_or_else(|| s.finish(&mut sink));
    Run {
        events,
        result,
        bytes_read: s.bytes_read(),
    }
}

/// The whole input in one `feed`.
pub fn run_once(input: &[u8], limits: Limits) -> Run {
    run_splits(input, limits, &[])
}

/// One byte per `feed`.
pub fn run_bytewise(input: &[u8], limits: Limits) -> Run {
    let splits: Vec<usize> = (1..input.len()).collect();
    run_splits(input, limits, &splits)
}

/// Random split points (chunk sizes `1..=max_chunk`) from a seeded RNG.
pub fn random_splits(len: usize, seed: u64, max_chunk: usize) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut splits = Vec::new();
    let mut at = 0;
    loop {
        at += rng.gen_range(1..=max_chunk.max(1));
        if at >= len {
            return splits;
        }
        splits.push(at);
    }
}

/// Random chunk sizes (`1..=max_chunk`) from a seeded RNG.
pub fn run_random(input: &[u8], limits: Limits, seed: u64, max_chunk: usize) -> Run {
    run_splits(input, limits, &random_splits(input.len(), seed, max_chunk))
}

/// A reader that hands out at most a few bytes per `read` (sizes from a seeded RNG), and
/// sometimes reports `Interrupted`, which readers may do and callers must retry.
pub struct ShortReads<'a> {
    data: &'a [u8],
    rng: StdRng,
    max: usize,
}

impl<'a> ShortReads<'a> {
    pub fn new(data: &'a [u8], seed: u64, max: usize) -> Self {
        ShortReads {
            data,
            rng: StdRng::seed_from_u64(seed),
            max,
        }
    }
}

impl Read for ShortReads<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.rng.gen_ratio(1, 10) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        let n = self
            .rng
            .gen_range(1..=self.max)
            .min(buf.len())
            .min(self.data.len());
        buf[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Scans through `Scanner::scan_read` over a [`ShortReads`] reader.
pub fn run_reader(input: &[u8], limits: Limits, seed: u64, max_read: usize) -> Run {
    let mut events = Vec::new();
    let mut sink = |e: Event<'_>, at: u64| {
        events.push((Ev::from(e), at));
        Flow::Continue
    };
    let mut s = Scanner::new(limits);
    let result = s.scan_read(ShortReads::new(input, seed, max_read), &mut sink);
    Run {
        events,
        result,
        bytes_read: s.bytes_read(),
    }
}

/// Every 2-way split and 1-byte feeding must give exactly the run of the one-shot scan. Returns that run.
pub fn assert_split_invariant(input: &[u8], limits: Limits) -> Run {
    let whole = run_once(input, limits);
    for cut in 0..=input.len() {
        let r = run_splits(input, limits, &[cut]);
        assert_same(&whole, &r, input, &format!("split at {cut}"));
    }
    let r = run_bytewise(input, limits);
    assert_same(&whole, &r, input, "1-byte feeding");
    whole
}

/// Describes how two runs of the same input differ (verdict, events, bytes read after an
/// error), or `None` if they agree.
pub fn diff(expected: &Run, actual: &Run) -> Option<String> {
    if expected.result != actual.result {
        return Some(format!(
            "verdict {:?} instead of {:?}",
            actual.result, expected.result
        ));
    }
    if expected.events != actual.events {
        let at = expected
            .events
            .iter()
            .zip(&actual.events)
            .position(|(a, b)| a != b)
            .unwrap_or(expected.events.len().min(actual.events.len()));
        return Some(format!(
            "events differ at #{at}: {:?} instead of {:?} ({} vs {} events)",
            actual.events.get(at),
            expected.events.get(at),
            actual.events.len(),
            expected.events.len()
        ));
    }
    if expected.result.is_err() && expected.bytes_read != actual.bytes_read {
        return Some(format!(
            "bytes_read {} instead of {} after the error",
            actual.bytes_read, expected.bytes_read
        ));
    }
    None
}

/// Panics if two runs of the same input differ (see [`diff`]).
pub fn assert_same(expected: &Run, actual: &Run, input: &[u8], how: &str) {
    if let Some(d) = diff(expected, actual) {
        let shown = String::from_utf8_lossy(&input[..input.len().min(200)]);
        panic!("{how}: {d}\ninput: {shown:?}");
    }
}

/// Whether a borrowed event equals an owned one (without allocating).
pub fn same_event(e: &Event<'_>, ev: &Ev) -> bool {
    match (e, ev) {
        (Event::BeginObject, Ev::BeginObject)
        | (Event::EndObject, Ev::EndObject)
        | (Event::BeginArray, Ev::BeginArray)
        | (Event::EndArray, Ev::EndArray)
        | (Event::Null, Ev::Null) => true,
        (Event::Name(a), Ev::Name(b)) | (Event::String(a), Ev::String(b)) => a == b,
        (Event::Number(a), Ev::Number(b)) => a.as_str() == b,
        (Event::Bool(a), Ev::Bool(b)) => a == b,
        _ => false,
    }
}

/// A sink that compares each event with an expected list as it arrives (fast on big inputs:
/// nothing is copied) and remembers the first mismatch.
pub struct Expect<'a> {
    expected: &'a [(Ev, u64)],
    next: usize,
    mismatch: Option<String>,
}

impl<'a> Expect<'a> {
    pub fn new(expected: &'a [(Ev, u64)]) -> Self {
        Expect {
            expected,
            next: 0,
            mismatch: None,
        }
    }

    /// The first mismatch, or a complaint about missing events.
    pub fn finish(self) -> Result<(), String> {
        if let Some(m) = self.mismatch {
            return Err(m);
        }
        if self.next != self.expected.len() {
            return Err(format!(
                "only {} of {} events",
                self.next,
                self.expected.len()
            ));
        }
        Ok(())
    }
}

impl Sink for Expect<'_> {
    fn event(&mut self, e: Event<'_>, at: u64) -> Flow {
        if self.mismatch.is_none() {
            match self.expected.get(self.next) {
                Some((ev, off)) if same_event(&e, ev) && *off == at => {}
                want => {
                    self.mismatch = Some(format!(
                        "event #{} is {:?} at {at}, expected {want:?}",
                        self.next,
                        Ev::from(e)
                    ));
                }
            }
        }
        self.next += 1;
        Flow::Continue
    }
}
