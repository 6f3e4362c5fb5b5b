//! The contract loader and the gate with arbitrary bytes: the first part of the input is a
//! contract file, the rest a request id and an upstream response. Checks: no panic; a
//! contract that loads builds a gate or a clear error; the request id is either refused
//! (`invalid_request_id`, `empty_request_id`) or carried into the envelope unchanged, and
//! then it is one the contract accepts; the envelope always satisfies the contract's own
//! envelope schema; the lint reads any contract that loads, and a contract diffed with
//! itself has no change.
#![no_main]
use jsongate::gate::{Context, Contract, Gate, Request, RequestErrorKind};
use jsongate::{Limits, Schema, Validator};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // contract \0 request id \0 response
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(contract), Some(id), Some(response)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let Ok(contract) = Contract::from_slice(contract, std::path::Path::new(".")) else {
        return;
    };
    // The lint reads any contract that loads without panicking; every warning has a kind
    // and an instance location (a pointer, or empty for the whole response).
    for w in jsongate::gate::lint_contract(&contract) {
        assert!(!w.kind.is_empty());
        assert!(w.location.is_empty() || w.location.starts_with('/'));
    }
    // Comparing a contract with itself finds nothing.
    if let Ok(changes) = jsongate::gate::diff_contracts(&contract, &contract) {
        assert!(changes.is_empty(), "{changes:?}");
    }
    let Ok(gate) = Gate::new(&contract) else {
        return;
    };
    let id = String::from_utf8_lossy(id);
    let req = Request::new(&id, Context::new());
    match gate.run_slice(response, &req) {
        Err(e) => {
            if matches!(
                e.kind(),
                RequestErrorKind::InvalidRequestId | RequestErrorKind::EmptyRequestId
            ) {
                assert!(!gate.accepts_request_id(&id) || id.is_empty());
            }
        }
        Ok(d) => {
            assert!(gate.accepts_request_id(&id));
            assert!(d.output.contains(&jsongate::json::quote(&id)));
            let schema = Schema::compile(gate.envelope_schema().as_bytes())
                .expect("the envelope schema compiles");
            let line = d.output.lines().next().unwrap_or_default();
            assert!(
                Validator::new(&schema)
                    .validate_slice(line.as_bytes(), Limits::unlimited())
                    .is_ok(),
                "{line}"
            );
        }
    }
});
