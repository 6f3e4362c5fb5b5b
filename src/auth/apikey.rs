//! Static API keys, for callers without an authorization server (CI jobs, scripts).
//!
//! This module owns [`ApiKeys`]: the configured keys, kept only as SHA-256 hashes with the
//! subject and scopes each one stands for, and the check of a presented key. The presented
//! key is hashed and the hash compared with every configured one in constant time, without
//! stopping at a match, so the time taken says nothing about which bytes, or which entry,
//! matched. It must never keep or log a presented key.
//!
//! Plain SHA-256 is the right hash for these: API keys are long random strings (generate at
//! least 128 bits, e.g. `openssl rand -base64 32`), not passwords, so a slow salted hash would
//! add cost per request and no protection.

use sha2::{Digest as _, Sha256};

use super::{AuthError, AuthErrorKind, Identity, Via};

/// The configured API keys (possibly none).
///
/// # Example
/// ```
/// use jsongate::auth::{ApiKeys, AuthErrorKind};
/// // Configuration files hold the hex digest: `printf %s "$KEY" | sha256sum`.
/// let hex = ApiKeys::sha256_hex("s3cret-ci-key");
/// assert_eq!(hex.len(), 64);
/// let keys = ApiKeys::new().key(ApiKeys::sha256("s3cret-ci-key"), "ci-bot", ["tools:read"]);
/// assert_eq!(keys.verify("s3cret-ci-key").unwrap().subject, "ci-bot");
/// assert_eq!(keys.verify("s3cret-ci-kez").unwrap_err().kind(), AuthErrorKind::ApiKey);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ApiKeys {
    entries: Vec<Entry>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    sha256: [u8; 32],
    subject: String,
    scopes: Vec<String>,
}

impl ApiKeys {
    /// No keys: every key presented is refused.
    ///
    /// # Example
    /// ```
    /// assert!(jsongate::auth::ApiKeys::new().is_empty());
    /// ```
    pub fn new() -> ApiKeys {
        ApiKeys::default()
    }

    /// Adds the key whose SHA-256 digest is `sha256`, standing for `subject` with `scopes`.
    /// (The configuration loader checks subjects, scopes and duplicates; this does not.)
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::ApiKeys;
    /// let keys = ApiKeys::new()
    ///     .key(ApiKeys::sha256("a"), "bot-a", ["read"])
    ///     .key(ApiKeys::sha256("b"), "bot-b", Vec::<String>::new());
    /// assert_eq!(keys.len(), 2);
    /// assert!(keys.verify("b").unwrap().scopes.is_empty());
    /// ```
    #[must_use]
    pub fn key<I, S>(mut self, sha256: [u8; 32], subject: impl Into<String>, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.entries.push(Entry {
            sha256,
            subject: subject.into(),
            scopes: scopes.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// The SHA-256 digest of `key`, as configured keys are stored.
    ///
    /// # Example
    /// ```
    /// let d = jsongate::auth::ApiKeys::sha256("abc");
    /// assert_eq!(d[..4], [0xba, 0x78, 0x16, 0xbf]);
    /// ```
    pub fn sha256(key: &str) -> [u8; 32] {
        Sha256::digest(key.as_bytes()).into()
    }

    /// The SHA-256 digest of `key` in lowercase hexadecimal, as configuration files give it.
    ///
    /// # Example
    /// ```
    /// assert_eq!(
    ///     jsongate::auth::ApiKeys::sha256_hex("abc"),
    ///     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    /// );
    /// ```
    pub fn sha256_hex(key: &str) -> String {
        use std::fmt::Write as _;
        ApiKeys::sha256(key)
            .iter()
            .fold(String::with_capacity(64), |mut s, b| {
                // Writing to a String cannot fail.
                let _ = write!(s, "{b:02x}");
                s
            })
    }

    /// How many keys are configured.
    ///
    /// # Example
    /// ```
    /// assert_eq!(jsongate::auth::ApiKeys::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is configured.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::ApiKeys;
    /// assert!(!ApiKeys::new().key([0; 32], "x", ["s"]).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn contains(&self, sha256: &[u8; 32]) -> bool {
        self.entries.iter().any(|e| &e.sha256 == sha256)
    }

    /// Who `presented` (the bearer token) stands for.
    ///
    /// # Errors
    /// [`AuthErrorKind::ApiKey`] when it is not one of the configured keys.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::{ApiKeys, Via};
    /// let keys = ApiKeys::new().key(ApiKeys::sha256("k-1"), "ci-bot", ["mcp:tools"]);
    /// let who = keys.verify("k-1").unwrap();
    /// assert_eq!((who.subject.as_str(), who.via), ("ci-bot", Via::ApiKey));
    /// assert_eq!(keys.verify("k-2").unwrap_err().message(), "API key not recognised");
    /// ```
    pub fn verify(&self, presented: &str) -> Result<Identity, AuthError> {
        let digest = ApiKeys::sha256(presented);
        let mut found = None;
        for entry in &self.entries {
            // Every byte of every entry is compared; no early exit.
            let difference = entry
                .sha256
                .iter()
                .zip(&digest)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            let matched = std::hint::black_box(difference) == 0;
            found = if matched && found.is_none() {
                Some(entry)
            } else {
                found
            };
        }
        let entry =
            found.ok_or_else(|| AuthError::new(AuthErrorKind::ApiKey, "API key not recognised"))?;
        Ok(Identity {
            subject: entry.subject.clone(),
            client_id: None,
            scopes: entry.scopes.clone(),
            via: Via::ApiKey,
        })
    }
}

/// The 32 bytes of a 64-digit hexadecimal SHA-256 digest (either case).
pub(crate) fn parse_sha256_hex(hex: &str) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let mut out = [0u8; 32];
    for (o, pair) in out.iter_mut().zip(hex.as_bytes().chunks(2)) {
        let digit = |b: u8| char::from(b).to_digit(16);
        *o = u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_right_key_gives_its_identity_and_others_are_refused() {
        let keys = ApiKeys::new()
            .key(ApiKeys::sha256("key-a"), "bot-a", ["read"])
            .key(ApiKeys::sha256("key-b"), "bot-b", ["read", "write"]);
        let b = keys.verify("key-b").unwrap();
        assert_eq!(
            b,
            Identity {
                subject: "bot-b".into(),
                client_id: None,
                scopes: vec!["read".into(), "write".into()],
                via: Via::ApiKey,
            }
        );
        assert_eq!(keys.verify("key-a").unwrap().subject, "bot-a");
        for wrong in [
            "",
            "key-c",
            "key-a ",
            "KEY-A",
            "key-",
            &ApiKeys::sha256_hex("key-a"),
        ] {
            let e = keys.verify(wrong).unwrap_err();
            assert_eq!(
                (e.kind(), e.status(), e.message()),
                (AuthErrorKind::ApiKey, 401, "API key not recognised"),
                "{wrong}"
            );
        }
        assert!(ApiKeys::new().verify("key-a").is_err());
    }

    #[test]
    fn hex_digests_round_trip() {
        let hex = ApiKeys::sha256_hex("key-a");
        assert_eq!(parse_sha256_hex(&hex), Some(ApiKeys::sha256("key-a")));
        assert_eq!(
            parse_sha256_hex(&hex.to_uppercase()),
            Some(ApiKeys::sha256("key-a"))
        );
        assert_eq!(parse_sha256_hex(&hex[1..]), None);
        assert_eq!(parse_sha256_hex(&format!("{hex}0")), None);
        assert_eq!(parse_sha256_hex(&format!("g{}", &hex[1..])), None);
        assert_eq!(parse_sha256_hex(&format!("+{}", &hex[1..])), None);
        assert_eq!(parse_sha256_hex(&"é".repeat(32)), None);
        assert!(ApiKeys::new()
            .key(ApiKeys::sha256("x"), "s", ["a"])
            .contains(&ApiKeys::sha256("x")));
    }
}
