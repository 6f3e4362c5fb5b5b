//! The `signed` check: a field of the response is a compact JWS (a signed JWT) that must
//! verify against the keys of a key file (a JWKS document, or PEM public keys), from the named issuer, for the named audience,
//! within its validity at the request's clock; with `subject_field`, the token's `sub` must
//! equal another field of the response. This is how an upstream's identity claim (who
//! approved a change, which account a record belongs to) becomes evidence: the claim is
//! believed only when someone the operator trusts signed it.
//!
//! Verification is the caller-identity verifier's ([`crate::auth::Verifier`]): RS256,
//! ES256 and `EdDSA` (Ed25519), never `none` nor HMAC (a shared secret would let whoever can
//! verify also sign), `crit` refused, the token's size bounded. Every failure is the
//! check's fixed code (default `MISMATCH`) with a fixed reason; the token's text never
//! reaches the agent or the reason.

use std::sync::Arc;

use super::envelope::FailureCode;
use super::semantic::{CheckFailure, Context, Fields, SemanticCheck};
use crate::auth::{AuthErrorKind, Jwks, Verifier};

/// The field is a signed JWT that verifies (see the module documentation).
///
/// # Example
/// ```
/// use std::sync::Arc;
/// use jsongate::auth::{Jwks, Verifier};
/// use jsongate::gate::{Context, Contract, FailureCode, Gate, Request, Signed, Timestamp};
/// let contract = Contract::from_slice(br#"{"contract":1,"tool":"t","version":"1",
///   "upstream":[{"version":"v1","schema":{"type":"object"}}],
///   "fields":{"approval":{"pointer":"/approval"},"approver":{"pointer":"/approver"}}}"#,
///   std::path::Path::new("."))?;
/// let check = Signed {
///     field: "approval".into(),
///     verifier: Verifier::new("https://idp.example", "review-tool"),
///     keys: Arc::new(Jwks::default()),
///     subject_field: Some("approver".into()),
///     code: FailureCode::Mismatch,
/// };
/// let gate = Gate::new(&contract)?.with_check(Box::new(check))?;
/// let req = Request::new("r-1", Context::new().now(Timestamp::parse_rfc3339("2026-12-07T12:00:00Z").unwrap()));
/// // Not a signed token: refused with the fixed code, the claim never believed.
/// let d = gate.run_slice(br#"{"approval":"alice","approver":"alice"}"#, &req).unwrap();
/// assert_eq!(d.envelope.code(), Some(FailureCode::Mismatch));
/// assert_eq!(d.audit.error.unwrap().reason.as_deref(), Some("malformed"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Signed {
    /// The field holding the compact JWS.
    pub field: String,
    /// Issuer, audience, algorithms and bounds.
    pub verifier: Verifier,
    /// The keys it must verify against.
    pub keys: Arc<Jwks>,
    /// A field whose value must equal the token's `sub`.
    pub subject_field: Option<String>,
    /// Code on failure (default [`FailureCode::Mismatch`]).
    pub code: FailureCode,
}

impl SemanticCheck for Signed {
    fn name(&self) -> &'static str {
        "signed"
    }
    fn check(&self, f: &Fields<'_>, ctx: &Context) -> Result<(), CheckFailure> {
        let fail = |reason| super::semantic::failure(self.code, "signed", &self.field, reason);
        let v = f.get(&self.field).ok_or_else(|| fail("missing"))?;
        let token = v.as_str().ok_or_else(|| fail("wrong_type"))?;
        let now = ctx.clock().ok_or_else(|| fail("no_clock"))?;
        let now = u64::try_from(now.unix_secs()).unwrap_or(0);
        let who = self
            .verifier
            .verify(token, &self.keys, now)
            .map_err(|e| fail(reason(e.kind())))?;
        if let Some(sf) = &self.subject_field {
            let claimed = f
                .get(sf)
                .and_then(super::semantic::scalar_text)
                .ok_or_else(|| fail("subject_missing"))?;
            if claimed != who.subject {
                return Err(fail("subject_mismatch"));
            }
        }
        Ok(())
    }
    fn needs_clock(&self) -> bool {
        true
    }
    fn fields(&self) -> Vec<&str> {
        let mut v = vec![self.field.as_str()];
        v.extend(self.subject_field.as_deref());
        v
    }
}

/// The fixed reason for a verification failure.
fn reason(k: AuthErrorKind) -> &'static str {
    match k {
        AuthErrorKind::Expired => "expired",
        AuthErrorKind::NotYetValid => "not_yet_valid",
        AuthErrorKind::Issuer => "wrong_issuer",
        AuthErrorKind::Audience => "wrong_audience",
        AuthErrorKind::Signature => "bad_signature",
        AuthErrorKind::UnknownKey => "unknown_key",
        AuthErrorKind::Algorithm => "algorithm",
        AuthErrorKind::TooLong { .. } => "too_long",
        _ => "malformed",
    }
}
