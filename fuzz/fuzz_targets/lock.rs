//! The lockfile parser with arbitrary bytes. Checks: no panic; a lock that is read is
//! written back to text that reads as the same lock (names, hashes, canonical definitions,
//! server); every definition is canonical (canonicalising its text again gives the same
//! SHA-256); and comparing the lock with itself reports no change.
#![no_main]
use jsongate::mcp::pin::{diff::diff_locks, Definition, Lock};
use jsongate::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(lock) = Lock::from_slice(data) else {
        return;
    };
    let again = Lock::from_slice(lock.to_json().as_bytes()).expect("a written lock reads back");
    assert_eq!(again, lock);
    for d in lock.tools() {
        let e = Definition::from_slice(d.canonical().as_bytes(), Limits::new()).unwrap();
        assert_eq!(e.sha256(), d.sha256());
        assert_eq!(e.canonical(), d.canonical());
    }
    assert!(diff_locks(&lock, &again).is_empty());
});
