//! How jsongate creates the files it writes: state files and their locks, audit and alert
//! logs, raw copies, rendered blocks and pin locks. Each of them is created private (mode
//! 0600 on Unix, given by the `open` that creates it, so the file is never readable by others,
//! not even for a moment) and is never reached through a symbolic link: a link at the last
//! component of the path is refused (`O_NOFOLLOW`) with an error that names the path, so a
//! link planted where jsongate writes cannot send the write to another file.
//!
//! A file that already exists keeps its mode and its content semantics: an append file is
//! appended to, a truncated file truncated, a replaced file replaced. Links in the directories
//! above the file are part of the path the operator chose and are followed. Other platforms
//! have neither the mode nor the flag: files get the platform's defaults, and a link is
//! refused by a check before the open (not atomic with it).
//!
//! This module decides how a file is opened, never what it holds or where it lives; it
//! depends on nothing else in the crate. The binary compiles this same file as its own
//! module (it cannot reach the library's private items), and neither side uses every
//! function.

use std::fs::{File, OpenOptions};
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};

/// The mode of every file created here (Unix).
#[cfg(unix)]
const PRIVATE_MODE: u32 = 0o600;

/// How many random temporary names [`write_atomic_private`] tries before it gives up.
const TEMP_ATTEMPTS: usize = 16;

/// Open options that create files private and refuse a symbolic link at the last component.
fn private() -> OpenOptions {
    let mut o = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.mode(PRIVATE_MODE)
            .custom_flags(nix::fcntl::OFlag::O_NOFOLLOW.bits());
    }
    o
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

fn refused(path: &Path, kind: io::ErrorKind) -> io::Error {
    io::Error::new(
        kind,
        format!(
            "'{}' is a symbolic link and was refused (jsongate does not follow a symbolic link \
             to a file it writes)",
            path.display()
        ),
    )
}

/// Opens `path` with `o`; a failure caused by a symbolic link (`ELOOP`, or `EMLINK` on some
/// BSDs) is reported as such, naming the path.
fn open(o: &OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(not(unix))]
    if is_link(path) {
        return Err(refused(path, io::ErrorKind::InvalidInput));
    }
    o.open(path).map_err(|e| {
        if e.kind() != io::ErrorKind::NotFound && is_link(path) {
            refused(path, e.kind())
        } else {
            e
        }
    })
}

/// Opens `path` for appending, creating it (mode 0600) when missing.
///
/// # Errors
/// The path is a symbolic link (refused), or it cannot be opened.
pub(crate) fn open_append_private(path: &Path) -> io::Result<File> {
    open(private().create(true).append(true), path)
}

/// Opens `path` for reading and writing (a lock file: its content is never touched),
/// creating it (mode 0600) when missing and never truncating it.
///
/// # Errors
/// The path is a symbolic link (refused), or it cannot be opened.
pub(crate) fn open_lock_private(path: &Path) -> io::Result<File> {
    open(
        private()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false),
        path,
    )
}

/// The bytes of `path`, a file jsongate wrote (state), read without following a symbolic
/// link at it.
///
/// # Errors
/// The path is a symbolic link (refused), it does not exist (`NotFound`, passed through so
/// that the caller can treat a missing file as empty), or it cannot be read.
pub(crate) fn read_nofollow(path: &Path) -> io::Result<Vec<u8>> {
    // The mode in `private()` only applies to a file being created; this open creates none.
    let mut f = open(private().read(true), path)?;
    let mut out = Vec::new();
    io::Read::read_to_end(&mut f, &mut out)?;
    Ok(out)
}

/// Writes `bytes` to `path` in place: created (mode 0600) when missing, truncated otherwise
/// (so a device such as `/dev/null` still works).
///
/// # Errors
/// The path is a symbolic link (refused), or it cannot be opened or written.
pub(crate) fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = open(private().write(true).create(true).truncate(true), path)?;
    f.write_all(bytes)
}

/// Replaces `path` with `bytes` crash-safely: a new file with a random name beside it
/// (`PATH.<16 hex digits>.tmp`, created with `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600) is
/// written, `fsync`ed and renamed over `path`, and the directory is `fsync`ed (Unix). A
/// reader sees the old content or the new one, never a mix; the temporary file is removed on
/// any error. Because the temporary name is random and exclusive, nothing planted beside
/// `path` can be written through.
///
/// # Errors
/// `path` is a symbolic link (refused: checked before writing; a link planted after the
/// check is replaced by the rename, never followed), or a step fails.
pub(crate) fn write_atomic_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    if is_link(path) {
        return Err(refused(path, io::ErrorKind::InvalidInput));
    }
    let (tmp, mut f) = create_temp(path)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    let replaced = written.and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = replaced {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    sync_dir(path)
}

/// A new, empty, private file beside `path` with a random name, and that name.
fn create_temp(path: &Path) -> io::Result<(PathBuf, File)> {
    let mut o = private();
    o.write(true).create_new(true);
    for _ in 0..TEMP_ATTEMPTS {
        let tmp = temp_name(path)?;
        match open(&o, &tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "no free temporary name beside '{}' after {TEMP_ATTEMPTS} attempts",
            path.display()
        ),
    ))
}

/// `PATH.<16 random hex digits>.tmp`: in the same directory, so the rename stays on one
/// file system.
fn temp_name(path: &Path) -> io::Result<PathBuf> {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).map_err(|e| io::Error::other(e.to_string()))?;
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{:016x}.tmp", u64::from_le_bytes(b)));
    Ok(PathBuf::from(name))
}

/// `fsync` of the directory holding `path`, so that a rename into it survives a crash.
fn sync_dir(path: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir).and_then(|d| d.sync_all())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        Ok(())
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt as _};

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn created_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let (a, l, w, r) = (
            dir.path().join("a"),
            dir.path().join("l"),
            dir.path().join("w"),
            dir.path().join("r"),
        );
        writeln!(open_append_private(&a).unwrap(), "one").unwrap();
        writeln!(open_append_private(&a).unwrap(), "two").unwrap();
        open_lock_private(&l).unwrap();
        write_private(&w, b"w").unwrap();
        write_atomic_private(&r, b"r1").unwrap();
        write_atomic_private(&r, b"r2").unwrap();
        for p in [&a, &l, &w, &r] {
            assert_eq!(mode(p), 0o600, "{}", p.display());
        }
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "one\ntwo\n");
        assert_eq!(read_nofollow(&r).unwrap(), b"r2");
        // Nothing but the four files: the temporary files were renamed away.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 4);
    }

    #[test]
    fn existing_files_keep_their_content_and_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("log");
        std::fs::write(&p, "old\n").unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        writeln!(open_append_private(&p).unwrap(), "new").unwrap();
        open_lock_private(&p).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "old\nnew\n");
        assert_eq!(mode(&p), 0o640);
    }

    #[test]
    fn a_link_at_the_path_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, "precious").unwrap();
        let link = dir.path().join("link");
        symlink(&target, &link).unwrap();
        let errors = [
            open_append_private(&link).map(drop).unwrap_err(),
            open_lock_private(&link).map(drop).unwrap_err(),
            read_nofollow(&link).map(drop).unwrap_err(),
            write_private(&link, b"x").unwrap_err(),
            write_atomic_private(&link, b"x").unwrap_err(),
        ];
        for e in errors {
            let text = e.to_string();
            assert!(
                text.contains(&format!("'{}' is a symbolic link", link.display())),
                "{text}"
            );
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        assert!(is_link(&link), "the link itself is left as it was");
        // A dangling link is refused too (nothing is created at its target).
        let nowhere = dir.path().join("nowhere");
        let dangling = dir.path().join("dangling");
        symlink(&nowhere, &dangling).unwrap();
        assert!(open_append_private(&dangling).is_err());
        assert!(write_private(&dangling, b"x").is_err());
        assert!(!nowhere.exists());
    }

    #[test]
    fn a_missing_file_reads_as_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_nofollow(&dir.path().join("none")).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn temporary_names_are_random_and_beside_the_target() {
        let p = Path::new("/some/dir/state.json");
        let (a, b) = (temp_name(p).unwrap(), temp_name(p).unwrap());
        assert_ne!(a, b);
        for t in [&a, &b] {
            let s = t.to_str().unwrap();
            assert!(s.starts_with("/some/dir/state.json."), "{s}");
            assert_eq!(t.extension().unwrap(), "tmp");
            assert_eq!(s.len(), "/some/dir/state.json.".len() + 16 + 4, "{s}");
        }
    }

    #[test]
    fn a_failed_replacement_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory at the target: the rename fails after the temporary file was written.
        let target = dir.path().join("busy");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("inside"), "x").unwrap();
        assert!(write_atomic_private(&target, b"new").is_err());
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, [std::ffi::OsString::from("busy")]);
    }
}
