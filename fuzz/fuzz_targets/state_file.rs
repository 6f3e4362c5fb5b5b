//! The state file (`decide --state FILE`) with arbitrary bytes in place of its content.
//! Checks: no panic; a file the store cannot read is refused and left exactly as it was (an
//! operation never "repairs" a foreign or truncated file); a file it can read takes an
//! operation, and what the store writes back reads again and holds what was recorded.
#![no_main]
use jsongate::state::{FileStore, Store};
use libfuzzer_sys::fuzz_target;

const NOW: u64 = 1_000_000;

fuzz_target!(|data: &[u8]| {
    let dir = std::env::temp_dir().join(format!("jsongate-fuzz-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("state.json");
    std::fs::write(&path, data).unwrap();
    let store = FileStore::new(&path);
    match store.extend_deadline("fuzz:deadline", NOW + 500, NOW) {
        Err(_) => {
            let after = std::fs::read(&path).unwrap();
            assert_eq!(after, data, "a refused state file was changed");
        }
        Ok(deadline) => {
            assert!(deadline >= NOW + 500);
            // What was written reads back, with the deadline in it.
            let again = FileStore::new(&path);
            assert_eq!(
                again.deadline("fuzz:deadline", NOW).unwrap(),
                Some(deadline)
            );
        }
    }
});
