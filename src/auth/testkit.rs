//! Test-only: signing keys and real signed tokens for the auth module's tests. RSA comes from
//! the committed test key `fixtures/auth/rsa-test.pk8`; EC and Ed25519 keys are generated
//! (or, for the committed JWKS fixture, read from `fixtures/auth/*.pk8`).

use std::sync::OnceLock;

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    EcdsaKeyPair, Ed25519KeyPair, KeyPair as _, RsaKeyPair, ECDSA_P256_SHA256_ASN1_SIGNING,
    ECDSA_P256_SHA256_FIXED_SIGNING, RSA_PKCS1_SHA256,
};
use base64::Engine as _;

use super::Alg;

pub(crate) const ISSUER: &str = "https://idp.example";
pub(crate) const RESOURCE: &str = "https://gw.example/mcp";
/// The clock of the tests: 2025-06-15.
pub(crate) const NOW: u64 = 1_750_000_000;

const RSA_PK8: &[u8] = include_bytes!("../../fixtures/auth/rsa-test.pk8");
const EC_PK8: &[u8] = include_bytes!("../../fixtures/auth/ec-test.pk8");
const ED_PK8: &[u8] = include_bytes!("../../fixtures/auth/ed25519-test.pk8");

pub(crate) fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub(crate) fn unb64(s: &str) -> Vec<u8> {
    super::b64url(s).expect("base64url")
}

/// One key of each type, with the kids `rsa-1`, `ec-1`, `ed-1`.
pub(crate) struct Keys {
    rsa: RsaKeyPair,
    ec_pk8: Vec<u8>,
    ec: EcdsaKeyPair,
    ed: Ed25519KeyPair,
}

/// The shared keys most tests use.
pub(crate) fn keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(Keys::generated)
}

impl Keys {
    /// The committed RSA key, fresh EC and Ed25519 keys.
    pub(crate) fn generated() -> Keys {
        let rng = SystemRandom::new();
        let ec = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let ed = Ed25519KeyPair::generate_pkcs8(&rng).unwrap();
        Keys {
            rsa: RsaKeyPair::from_pkcs8(RSA_PK8).unwrap(),
            ec: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, ec.as_ref()).unwrap(),
            ec_pk8: ec.as_ref().to_vec(),
            ed: Ed25519KeyPair::from_pkcs8(ed.as_ref()).unwrap(),
        }
    }

    /// The three committed keys (`fixtures/auth/*.pk8`), whose public halves are
    /// `fixtures/auth/jwks.json`.
    pub(crate) fn committed() -> Keys {
        Keys {
            rsa: RsaKeyPair::from_pkcs8(RSA_PK8).unwrap(),
            ec: EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, EC_PK8).unwrap(),
            ec_pk8: EC_PK8.to_vec(),
            ed: Ed25519KeyPair::from_pkcs8(ED_PK8).unwrap(),
        }
    }

    pub(crate) fn kid(alg: Alg) -> &'static str {
        match alg {
            Alg::Rs256 => "rsa-1",
            Alg::Es256 => "ec-1",
            Alg::EdDsa => "ed-1",
        }
    }

    /// The RSA key's modulus and exponent, read from its DER `RSAPublicKey`
    /// (`SEQUENCE { n INTEGER, e INTEGER }`), leading zero bytes removed.
    pub(crate) fn rsa_components(&self) -> (Vec<u8>, Vec<u8>) {
        let der = self.rsa_public_der();
        // One DER element at `at`: its content's range and the offset after it.
        let element = |at: usize| -> (usize, usize) {
            let first = der[at + 1];
            let (len, head) = if first < 0x80 {
                (usize::from(first), 2)
            } else {
                let n = usize::from(first & 0x7f);
                let len = der[at + 2..at + 2 + n]
                    .iter()
                    .fold(0usize, |l, &b| (l << 8) | usize::from(b));
                (len, 2 + n)
            };
            (at + head, at + head + len)
        };
        let (seq, _) = element(0);
        let (n_at, n_end) = element(seq);
        let (e_at, e_end) = element(n_end);
        let strip = |b: &[u8]| {
            let z = b.iter().take_while(|&&x| x == 0).count();
            b[z..].to_vec()
        };
        (strip(&der[n_at..n_end]), strip(&der[e_at..e_end]))
    }

    /// The RSA public key as DER `RSAPublicKey`.
    pub(crate) fn rsa_public_der(&self) -> Vec<u8> {
        self.rsa.public_key().as_ref().to_vec()
    }

    pub(crate) fn rsa_jwk(&self, kid: &str, extra: &str) -> String {
        let (n, e) = self.rsa_components();
        format!(
            r#"{{"kty":"RSA","n":"{}","e":"{}","kid":"{kid}"{extra}}}"#,
            b64(&n),
            b64(&e)
        )
    }

    pub(crate) fn ec_jwk(&self, kid: &str, extra: &str) -> String {
        let point = self.ec.public_key().as_ref();
        format!(
            r#"{{"kty":"EC","crv":"P-256","x":"{}","y":"{}","kid":"{kid}"{extra}}}"#,
            b64(&point[1..33]),
            b64(&point[33..])
        )
    }

    pub(crate) fn ed_jwk(&self, kid: &str, extra: &str) -> String {
        format!(
            r#"{{"kty":"OKP","crv":"Ed25519","x":"{}","kid":"{kid}"{extra}}}"#,
            b64(self.ed.public_key().as_ref())
        )
    }

    /// The JWKS of the three keys.
    pub(crate) fn jwks(&self) -> String {
        format!(
            r#"{{"keys":[{},{},{}]}}"#,
            self.rsa_jwk("rsa-1", r#","use":"sig","alg":"RS256""#),
            self.ec_jwk("ec-1", r#","use":"sig""#),
            self.ed_jwk("ed-1", "")
        )
    }

    /// A compact JWS of `header` and `claims` (JSON texts, taken as they are), signed with
    /// this set's key for `alg`.
    pub(crate) fn sign(&self, alg: Alg, header: &str, claims: &str) -> String {
        let input = format!("{}.{}", b64(header.as_bytes()), b64(claims.as_bytes()));
        let rng = SystemRandom::new();
        let signature = match alg {
            Alg::Rs256 => {
                let mut sig = vec![0; self.rsa.public_modulus_len()];
                self.rsa
                    .sign(&RSA_PKCS1_SHA256, &rng, input.as_bytes(), &mut sig)
                    .unwrap();
                sig
            }
            Alg::Es256 => self
                .ec
                .sign(&rng, input.as_bytes())
                .unwrap()
                .as_ref()
                .to_vec(),
            Alg::EdDsa => self.ed.sign(input.as_bytes()).as_ref().to_vec(),
        };
        format!("{input}.{}", b64(&signature))
    }

    /// A token with the usual header (`alg`, the key's `kid`, `typ`).
    pub(crate) fn token(&self, alg: Alg, claims: &str) -> String {
        let header = format!(
            r#"{{"alg":"{}","kid":"{}","typ":"at+jwt"}}"#,
            alg.name(),
            Keys::kid(alg)
        );
        self.sign(alg, &header, claims)
    }

    /// An ECDSA signature in ASN.1 DER (what JOSE does not use) by the EC key.
    pub(crate) fn ec_sign_der(&self, message: &[u8]) -> Vec<u8> {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_ASN1_SIGNING, &self.ec_pk8).unwrap();
        der.sign(&rng, message).unwrap().as_ref().to_vec()
    }
}
