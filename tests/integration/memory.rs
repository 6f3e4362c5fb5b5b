//! Memory: the scanner's heap stays bounded whatever the document size.
//!
//! A counting global allocator (wrapping `System`) keeps current and peak live bytes per
//! thread, so the figures measured on a test's thread are not disturbed by tests running in
//! parallel on other threads. It is installed for the whole integration-test binary; it only
//! adds two thread-local counter updates per allocation.
//!
//! The Linux-only test runs the real `jsongate check` binary on a 200 MB document piped in
//! and reads the child's peak resident set (`VmHWM`) while it is still reading.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use jsongate::{Ignore, Limits, Outcome, Scanner, READ_CHUNK, UNLIMITED};

#[path = "../../benches/docgen/mod.rs"]
pub(crate) mod docgen;

/// Forwards to [`System`], counting live and peak bytes of the calling thread.
struct Counting;

thread_local! {
    // Const-initialised, no destructor: touching these never allocates, so the allocator
    // cannot recurse into itself.
    static CURRENT: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Records `delta` live bytes on this thread (negative for frees). Memory freed on another
/// thread than the one that allocated it makes per-thread counts drift, which is why the
/// tests below only compare counts taken on their own thread around their own work.
fn record(delta: isize) {
    // `try_with`: during thread teardown the slots may be gone; such frees are not counted.
    let _ = CURRENT.try_with(|c| {
        let now = c.get() + delta;
        c.set(now);
        let _ = PEAK.try_with(|p| {
            if now > p.get() {
                p.set(now);
            }
        });
    });
}

/// `n` as a signed count (a `Layout`'s size never exceeds `isize::MAX`).
fn signed(n: usize) -> isize {
    isize::try_from(n).unwrap_or(isize::MAX)
}

pub(crate) fn current() -> isize {
    CURRENT.with(Cell::get)
}

pub(crate) fn peak() -> isize {
    PEAK.with(Cell::get)
}

pub(crate) fn reset_peak() {
    PEAK.with(|p| p.set(current()));
}

#[allow(unsafe_code)]
// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// `GlobalAlloc` contract holds exactly as it does for `System`; the bookkeeping around the
// calls only touches const-initialised thread-locals and never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract (non-zero size layout),
        // which is passed on unchanged.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            record(signed(layout.size()));
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`: the caller's contract is passed on unchanged.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            record(signed(layout.size()));
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, i.e. by `System`, with `layout`
        // (the caller guarantees both).
        unsafe { System.dealloc(ptr, layout) };
        record(-signed(layout.size()));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`, and `new_size` is valid for it
        // (the caller guarantees both).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            record(signed(new_size) - signed(layout.size()));
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const MIB: isize = 1 << 20;
/// How far a bigger document's peak may exceed a smaller one's and still count as "not
/// growing": a few token-sized buffers, far below any document size here.
const SLACK: isize = 16 << 10;

/// Feeds `doc` in 64 KiB chunks (the CLI's read size) and finishes.
fn feed_all(scanner: &mut Scanner, doc: &[u8]) {
    scanner.reset();
    for chunk in doc.chunks(READ_CHUNK) {
        scanner.feed(chunk, &mut Ignore).unwrap();
    }
    assert_eq!(scanner.finish(&mut Ignore).unwrap(), Outcome::Complete);
}

#[test]
fn counting_allocator_sees_this_threads_allocations() {
    let before = current();
    reset_peak();
    let v = vec![0u8; 100_000];
    assert_eq!(current() - before, 100_000);
    drop(v);
    assert_eq!(current(), before);
    assert!(peak() - before >= 100_000);
}

#[test]
fn scanner_peak_heap_does_not_grow_with_document_size() {
    let limits = Limits::new().max_bytes(UNLIMITED);
    // Built before any measurement; only the scanner's own allocations are counted below.
    let docs: Vec<(usize, Vec<u8>)> = [1, 10, 50]
        .into_iter()
        .map(|mb| (mb, docgen::logs(mb * 1_000_000)))
        .collect();

    // A fresh scanner per document: peak live bytes from before `Scanner::new` to `finish`.
    let mut fresh = Vec::new();
    for (mb, doc) in &docs {
        let base = current();
        reset_peak();
        let mut scanner = Scanner::new(limits);
        feed_all(&mut scanner, doc);
        let p = peak() - base;
        eprintln!(
            "memory: fresh scanner, {mb} MB document ({} bytes): peak heap {p} bytes",
            doc.len()
        );
        fresh.push(p);
        drop(scanner);
    }

    // One scanner reused for every document: its whole footprint (retained buffers
    // included) at the peak of each scan.
    let base = current();
    let mut scanner = Scanner::new(limits);
    let mut reused = Vec::new();
    for (mb, doc) in &docs {
        reset_peak();
        feed_all(&mut scanner, doc);
        let p = peak() - base;
        eprintln!("memory: reused scanner, {mb} MB document: peak heap {p} bytes");
        reused.push(p);
    }

    for p in fresh.iter().chain(&reused) {
        assert!(*p < MIB, "peak heap {p} bytes is not below 1 MiB");
    }
    // Not growing with size: the 50 MB scan peaks within a few KiB of the 1 MB one. (The
    // scratch buffer's capacity follows the longest token split across a chunk boundary or
    // escaped, which may differ by a few bytes between documents; it does not follow size.)
    assert!(
        fresh[2] <= fresh[0] + SLACK,
        "fresh-scanner peaks grow with size: {fresh:?}"
    );
    assert!(
        reused[2] <= reused[0] + SLACK,
        "reused-scanner peaks grow with size: {reused:?}"
    );
}

/// `VmHWM` (peak resident set) of process `pid`, in bytes.
#[cfg(target_os = "linux")]
fn vm_hwm(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .expect("VmHWM in /proc/<pid>/status");
    let kib: u64 = line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .unwrap();
    kib * 1024
}

#[cfg(target_os = "linux")]
#[test]
fn check_binary_peak_rss_stays_small_on_200_mb_stdin() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    const TARGET: usize = 200_000_000;
    const RSS_LIMIT: u64 = 32 << 20;

    let mut child = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args([
            "check",
            "--max-bytes",
            "unlimited",
            "--max-items",
            "unlimited",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn jsongate");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();

    // About 1 MB of records, each followed by a comma, written again and again: the
    // document is never held whole in this process.
    let mut chunk = Vec::with_capacity((1 << 20) + 1024);
    let mut i = 0u64;
    while chunk.len() < 1 << 20 {
        docgen::log_record(i, &mut chunk);
        chunk.push(b',');
        i += 1;
    }
    let mut tail = Vec::new();
    docgen::log_record(i, &mut tail);
    tail.push(b']');

    stdin.write_all(b"[").unwrap();
    let mut written = 1usize;
    while written + chunk.len() + tail.len() <= TARGET {
        stdin.write_all(&chunk).unwrap();
        written += chunk.len();
    }
    // A pipe holds at most a few dozen KiB, so once `write_all` has returned the child has
    // already read all but the last sliver of what was written. It is still running: the
    // closing `]` has not been sent and stdin is open.
    let hwm = vm_hwm(pid);
    assert!(
        child.try_wait().unwrap().is_none(),
        "jsongate exited before the end of the document"
    );

    stdin.write_all(&tail).unwrap();
    written += tail.len();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "memory: jsongate check on {written} bytes of stdin: VmHWM {hwm} bytes ({} KiB) before the last chunk",
        hwm / 1024
    );
    assert!(
        out.status.success(),
        "status {:?}, stdout {stdout}, stderr {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.trim_end(),
        format!("{{\"valid\":true,\"bytes_read\":{written}}}")
    );
    assert!(
        hwm < RSS_LIMIT,
        "peak RSS {hwm} bytes while checking is not below 32 MiB"
    );
}

/// `check --lines`: a 200 MB line past `--max-bytes` is rejected at the limit and the rest of
/// it is read and dropped without being buffered; the next line is judged on its own.
#[cfg(target_os = "linux")]
#[test]
fn check_lines_peak_rss_stays_small_on_a_200_mb_line() {
    use std::io::Write;
    use std::process::{Command, Stdio};

    const TARGET: usize = 200_000_000;
    const RSS_LIMIT: u64 = 32 << 20;

    let mut child = Command::new(env!("CARGO_BIN_EXE_jsongate"))
        .args(["check", "--lines", "--max-bytes=1000", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn jsongate");
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"[1]\n\"").unwrap();
    let chunk = vec![b'a'; 1 << 20];
    let mut written = 0;
    while written < TARGET {
        stdin.write_all(&chunk).unwrap();
        written += chunk.len();
    }
    let hwm = vm_hwm(pid);
    assert!(child.try_wait().unwrap().is_none(), "jsongate exited early");
    stdin.write_all(b"\"\n{\"next\":true}\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    eprintln!(
        "memory: jsongate check --lines on a {written}-byte line: VmHWM {} KiB",
        hwm / 1024
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{stdout}");
    assert_eq!(lines[0], r#"{"line":1,"valid":true,"bytes_read":3}"#);
    assert!(
        lines[1].starts_with(
            r#"{"line":2,"valid":false,"bytes_read":1000,"error":{"kind":"too_large""#
        ),
        "{}",
        lines[1]
    );
    assert_eq!(lines[2], r#"{"line":3,"valid":true,"bytes_read":13}"#);
    assert!(hwm < RSS_LIMIT, "peak RSS {hwm} bytes is not below 32 MiB");
}
