//! The lockfile parser with arbitrary bytes. Checks: no panic; a lock that is read is
//! written back to text that reads as the same lock (names, hashes, canonical definitions,
//! server); every definition is canonical (canonicalising its text again gives the same
//! SHA-256); comparing the lock with itself reports no change; and screening a definition
//! (and the input read as one string), obfuscation variants included, never panics.
#![no_main]
use jsongate::mcp::pin::{diff::diff_locks, Definition, Lock};
use jsongate::screen::screen_definition_str;
use jsongate::Limits;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        let mut found = Vec::new();
        screen_definition_str(s, "", false, &mut found);
        assert!(found.iter().all(|f| f.offset <= s.len()));
    }
    let Ok(lock) = Lock::from_slice(data) else {
        return;
    };
    let again = Lock::from_slice(lock.to_json().as_bytes()).expect("a written lock reads back");
    assert_eq!(again, lock);
    for d in lock.tools() {
        let e = Definition::from_slice(d.canonical().as_bytes(), Limits::new()).unwrap();
        assert_eq!(e.sha256(), d.sha256());
        assert_eq!(e.canonical(), d.canonical());
        let _ = e.screen();
    }
    assert!(diff_locks(&lock, &again).is_empty());
});
