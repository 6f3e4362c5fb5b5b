//! The file backend: one host, any number of processes.
//!
//! Each operation takes an exclusive `flock` on `FILE.lock` (a shared one for reads),
//! bounded by [`FileStore::lock_timeout`], reads `FILE`, applies the operation and, when the
//! state changed, writes a new file beside it with a random name (`FILE.<hex>.tmp`, created
//! exclusively), `fsync`s it, renames it over `FILE` and `fsync`s the directory. A process
//! killed at any point leaves either the old state or the new one, never a mix (and at worst
//! a stray `FILE.<hex>.tmp`, which no later writer opens). The lock lives on its own file
//! because the state file is replaced at every write.
//!
//! `FILE` and `FILE.lock` are created with mode 0600, and a symbolic link at either is
//! refused with an error naming it: a link planted there cannot make a write
//! land on another file.
//!
//! Format ([`FILE_FORMAT`]): `{"jsongate_state":1,"entries":{KEY:SLOT}}` with `SLOT` one of
//! `{"log":[ms…],"expires":ms}`, `{"num":n,"expires":ms}`, `{"text":s,"expires":ms}`
//! (`expires` 0: never). A missing file is an empty state; anything else that is not this
//! format (another version, a truncated or foreign file, an empty file) is an error, and the
//! file is left as it is.

use std::collections::VecDeque;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nix::fcntl::{Flock, FlockArg};

use super::map::{Entry, Map, Slot};
use super::{StateError, StateErrorKind, Store, Take};
use crate::fsx;
use crate::json::{ObjectWriter, Value};
use crate::Limits;

/// The state file format this build reads and writes.
///
/// # Example
/// ```
/// use jsongate::state::{FileStore, Store, FILE_FORMAT};
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("state");
/// FileStore::new(&path).put_new("k", "v", 60_000, 0)?;
/// let text = std::fs::read_to_string(&path).unwrap();
/// assert!(text.starts_with(&format!("{{\"jsongate_state\":{FILE_FORMAT},")));
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
pub const FILE_FORMAT: u64 = 1;

/// State in one file, shared by the processes of one host.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::state::{FileStore, Store};
/// let dir = tempfile::tempdir().unwrap();
/// let store = FileStore::new(&dir.path().join("state")).lock_timeout(Duration::from_secs(1));
/// assert!(store.put_new("approval:7", "pending", 60_000, 0)?);
/// // A later process on the same host (here: a new handle) reads what the first one wrote.
/// assert_eq!(FileStore::new(&dir.path().join("state")).get("approval:7", 1)?.as_deref(), Some("pending"));
/// assert!(store.describe().starts_with("file:"));
/// # Ok::<(), jsongate::state::StateError>(())
/// ```
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
    lock_path: PathBuf,
    lock_timeout: Duration,
}

fn io_err(path: &Path, what: &str, e: impl std::fmt::Display) -> StateError {
    StateError::new(
        StateErrorKind::Io,
        format!("state file '{}': {what}: {e}", path.display()),
    )
}

impl FileStore {
    /// State kept in `path` (created on the first write).
    ///
    /// # Example
    /// ```
    /// use jsongate::state::{FileStore, Store};
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("state");
    /// // Two handles (two processes, in practice) on one file share its state.
    /// let (a, b) = (FileStore::new(&path), FileStore::new(&path));
    /// assert!(a.window_take("k", 1, 60_000, 0)?.admitted);
    /// assert!(!b.window_take("k", 1, 60_000, 1)?.admitted);
    /// # Ok::<(), jsongate::state::StateError>(())
    /// ```
    pub fn new(path: &Path) -> FileStore {
        let with = |ext: &str| {
            let mut p = path.as_os_str().to_owned();
            p.push(ext);
            PathBuf::from(p)
        };
        FileStore {
            path: path.to_owned(),
            lock_path: with(".lock"),
            lock_timeout: Duration::from_secs(5),
        }
    }

    /// How long an operation waits for the lock before it fails (default 5 s).
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::state::{FileStore, Store};
    /// let dir = tempfile::tempdir().unwrap();
    /// let s = FileStore::new(&dir.path().join("state")).lock_timeout(Duration::from_millis(200));
    /// assert_eq!(s.get_lock_timeout(), Duration::from_millis(200));
    /// assert!(s.describe().starts_with("file:"));
    /// ```
    #[must_use]
    pub fn lock_timeout(mut self, t: Duration) -> FileStore {
        self.lock_timeout = t;
        self
    }

    /// The value set by [`lock_timeout`](Self::lock_timeout).
    ///
    /// # Example
    /// ```
    /// use std::time::Duration;
    /// use jsongate::state::FileStore;
    /// let dir = tempfile::tempdir().unwrap();
    /// let s = FileStore::new(&dir.path().join("state"));
    /// assert_eq!(s.get_lock_timeout(), Duration::from_secs(5));
    /// assert_eq!(s.lock_timeout(Duration::from_millis(200)).get_lock_timeout(), Duration::from_millis(200));
    /// ```
    pub fn get_lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    fn lock(&self, exclusive: bool) -> Result<Flock<File>, StateError> {
        let mut file = fsx::open_lock_private(&self.lock_path)
            .map_err(|e| io_err(&self.lock_path, "cannot open lock", e))?;
        let arg = if exclusive {
            FlockArg::LockExclusiveNonblock
        } else {
            FlockArg::LockSharedNonblock
        };
        let start = Instant::now();
        let mut pause = Duration::from_micros(50);
        loop {
            match Flock::lock(file, arg) {
                Ok(l) => return Ok(l),
                Err((f, nix::errno::Errno::EWOULDBLOCK | nix::errno::Errno::EINTR)) => {
                    if start.elapsed() >= self.lock_timeout {
                        return Err(StateError::new(
                            StateErrorKind::Unavailable,
                            format!(
                                "state file '{}': still locked after {} ms",
                                self.path.display(),
                                self.lock_timeout.as_millis()
                            ),
                        ));
                    }
                    file = f;
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
                Err((_, e)) => return Err(io_err(&self.lock_path, "cannot lock", e)),
            }
        }
    }

    /// The state as stored (empty when the file does not exist), and its bytes.
    fn load(&self) -> Result<(Map, Vec<u8>), StateError> {
        let bytes = match fsx::read_nofollow(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok((Map::default(), Vec::new()))
            }
            Err(e) => return Err(io_err(&self.path, "cannot read", e)),
        };
        let map = parse(&bytes).map_err(|why| {
            StateError::new(
                StateErrorKind::Corrupt,
                format!(
                    "state file '{}' is not a jsongate state file of format {FILE_FORMAT}: {why}",
                    self.path.display()
                ),
            )
        })?;
        Ok((map, bytes))
    }

    fn save(&self, map: &Map) -> Result<(), StateError> {
        fsx::write_atomic_private(&self.path, render(map).as_bytes())
            .map_err(|e| io_err(&self.path, "cannot write", e))
    }

    /// One operation under the exclusive lock; the file is rewritten when it changed.
    fn update<T>(&self, now: u64, f: impl FnOnce(&mut Map) -> T) -> Result<T, StateError> {
        let _lock = self.lock(true)?;
        let (mut map, old) = self.load()?;
        let out = f(&mut map);
        map.purge(now);
        if render(&map).as_bytes() != old.as_slice() {
            self.save(&map)?;
        }
        Ok(out)
    }

    /// One read under a shared lock; nothing is written.
    fn read<T>(&self, f: impl FnOnce(&mut Map) -> T) -> Result<T, StateError> {
        let _lock = self.lock(false)?;
        let (mut map, _) = self.load()?;
        Ok(f(&mut map))
    }
}

fn render(map: &Map) -> String {
    let mut out = String::new();
    let mut o = ObjectWriter::new(&mut out);
    o.u64("jsongate_state", FILE_FORMAT);
    let mut entries = o.object("entries");
    for (k, e) in &map.entries {
        let mut entry = entries.object(k);
        match &e.slot {
            Slot::Log(l) => {
                let mut log = entry.array("log");
                for &t in l {
                    log.u64(t);
                }
            }
            Slot::Num(n) => {
                entry.u64("num", *n);
            }
            Slot::Text(t) => {
                entry.str("text", t);
            }
        }
        entry.u64("expires", e.expires);
    }
    entries.finish();
    o.finish();
    out.push('\n');
    out
}

fn parse(bytes: &[u8]) -> Result<Map, String> {
    let limits = Limits::new()
        .max_bytes(256 << 20)
        .max_members(1 << 24)
        .max_items(1 << 24);
    let v = Value::parse(bytes, limits).map_err(|e| e.to_string())?;
    match v.get("jsongate_state").and_then(Value::as_u64) {
        Some(FILE_FORMAT) => {}
        Some(n) => return Err(format!("it is format {n}")),
        None => return Err("no 'jsongate_state' format number".into()),
    }
    let members = v.as_object().unwrap_or(&[]);
    if let Some((k, _)) = members
        .iter()
        .find(|(k, _)| k != "jsongate_state" && k != "entries")
    {
        return Err(format!("unknown member '{k}'"));
    }
    let entries = v
        .get("entries")
        .and_then(Value::as_object)
        .ok_or("no 'entries' object")?;
    let mut map = Map::default();
    for (k, e) in entries {
        let bad = || format!("entry '{k}' is malformed");
        let expires = e.get("expires").and_then(Value::as_u64).ok_or_else(bad)?;
        let slot = if let Some(l) = e.get("log") {
            let l = l.as_array().ok_or_else(bad)?;
            let log: Option<VecDeque<u64>> = l.iter().map(Value::as_u64).collect();
            Slot::Log(log.ok_or_else(bad)?)
        } else if let Some(n) = e.get("num") {
            Slot::Num(n.as_u64().ok_or_else(bad)?)
        } else if let Some(t) = e.get("text") {
            Slot::Text(t.as_str().ok_or_else(bad)?.to_owned())
        } else {
            return Err(bad());
        };
        if e.as_object().map_or(0, <[_]>::len) != 2 {
            return Err(bad());
        }
        map.entries.insert(k.clone(), Entry { slot, expires });
    }
    Ok(map)
}

impl Store for FileStore {
    fn window_take(
        &self,
        key: &str,
        limit: u64,
        window: u64,
        now: u64,
    ) -> Result<Take, StateError> {
        self.update(now, |m| m.window_take(key, limit, window, now))
    }

    fn trip(
        &self,
        key: &str,
        threshold: u64,
        window: u64,
        cooldown: u64,
        now: u64,
    ) -> Result<Option<u64>, StateError> {
        self.update(now, |m| m.trip(key, threshold, window, cooldown, now))
    }

    fn extend_deadline(&self, key: &str, until: u64, now: u64) -> Result<u64, StateError> {
        self.update(now, |m| m.extend_deadline(key, until, now))
    }

    fn deadline(&self, key: &str, now: u64) -> Result<Option<u64>, StateError> {
        self.read(|m| m.deadline(key, now))
    }

    fn advance(&self, key: &str, to: u64, ttl: u64, now: u64) -> Result<bool, StateError> {
        self.update(now, |m| m.advance(key, to, ttl, now))
    }

    fn put_new(&self, key: &str, value: &str, ttl: u64, now: u64) -> Result<bool, StateError> {
        self.update(now, |m| m.put_new(key, value, ttl, now))
    }

    fn get(&self, key: &str, now: u64) -> Result<Option<String>, StateError> {
        self.read(|m| m.get(key, now))
    }

    fn take(&self, key: &str, now: u64) -> Result<Option<String>, StateError> {
        self.update(now, |m| m.take(key, now))
    }

    fn describe(&self) -> String {
        format!("file:{}", self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_survives_reopening_and_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let s = FileStore::new(&path);
        assert!(s.window_take("w", 1, 1000, 0).unwrap().admitted);
        assert!(s.put_new("r", "a \"quoted\" record", 1000, 0).unwrap());
        assert_eq!(s.extend_deadline("d", 500, 0).unwrap(), 500);
        let s = FileStore::new(&path);
        assert!(!s.window_take("w", 1, 1000, 10).unwrap().admitted);
        assert_eq!(
            s.take("r", 10).unwrap().as_deref(),
            Some("a \"quoted\" record")
        );
        assert_eq!(s.take("r", 10).unwrap(), None);
        assert_eq!(s.deadline("d", 10).unwrap(), Some(500));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\"jsongate_state\":1,"), "{text}");
    }

    #[test]
    fn foreign_truncated_or_other_version_files_are_errors_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        let s = FileStore::new(&path);
        assert!(s.window_take("w", 5, 1000, 0).unwrap().admitted);
        let good = std::fs::read(&path).unwrap();
        for (bytes, says) in [
            (&good[..good.len() / 2], "not a jsongate state file"),
            (&b""[..], "not a jsongate state file"),
            (
                &br#"{"jsongate_state":2,"entries":{}}"#[..],
                "it is format 2",
            ),
            (&br#"{"blocks":[1,2]}"#[..], "no 'jsongate_state'"),
            (
                &br#"{"jsongate_state":1,"entries":{"k":{"log":[1]}}}"#[..],
                "malformed",
            ),
        ] {
            std::fs::write(&path, bytes).unwrap();
            let e = s.window_take("w", 5, 1000, 0).unwrap_err();
            assert_eq!(e.kind(), StateErrorKind::Corrupt);
            assert!(e.message().contains(says), "{e}");
            assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes,
                "the file is left as it was"
            );
        }
    }

    #[test]
    fn a_lock_held_elsewhere_times_out_as_unavailable() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(&dir.path().join("s.json")).lock_timeout(Duration::from_millis(50));
        let held = s.lock(true).unwrap();
        let e = s.get("k", 0).unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Unavailable);
        drop(held);
        assert_eq!(s.get("k", 0).unwrap(), None);
    }

    #[test]
    fn state_and_lock_files_are_created_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.json");
        FileStore::new(&path).put_new("k", "v", 60_000, 0).unwrap();
        for p in [path.clone(), dir.path().join("s.json.lock")] {
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", p.display());
        }
        // Only the state and its lock: the temporary file was renamed away.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn a_link_planted_at_the_old_temporary_name_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "precious").unwrap();
        let path = dir.path().join("s.json");
        // Earlier versions wrote `s.json.tmp` with create+truncate and followed this link.
        std::os::unix::fs::symlink(&target, dir.path().join("s.json.tmp")).unwrap();
        let s = FileStore::new(&path);
        assert!(s.put_new("k", "v", 60_000, 0).unwrap());
        assert_eq!(s.get("k", 1).unwrap().as_deref(), Some("v"));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        assert!(std::fs::symlink_metadata(dir.path().join("s.json.tmp"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[test]
    fn a_link_at_the_state_or_lock_path_is_refused_with_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        let good = b"{\"jsongate_state\":1,\"entries\":{}}";
        std::fs::write(&target, good).unwrap();
        let state = dir.path().join("s.json");
        std::os::unix::fs::symlink(&target, &state).unwrap();
        let e = FileStore::new(&state)
            .put_new("k", "v", 60_000, 0)
            .unwrap_err();
        assert_eq!(e.kind(), StateErrorKind::Io);
        let says = format!("'{}' is a symbolic link and was refused", state.display());
        assert!(e.message().contains(&says), "{e}");
        // A read is refused too: the state is never taken from where a link points.
        assert!(FileStore::new(&state).get("k", 0).is_err());

        let other = dir.path().join("t.json");
        std::os::unix::fs::symlink(&target, dir.path().join("t.json.lock")).unwrap();
        let e = FileStore::new(&other).get("k", 0).unwrap_err();
        let says = format!(
            "'{}.lock' is a symbolic link and was refused",
            other.display()
        );
        assert!(e.message().contains(&says), "{e}");
        assert!(!other.exists());
        assert_eq!(
            std::fs::read(&target).unwrap(),
            good,
            "the target is untouched"
        );
    }
}
