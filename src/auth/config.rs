//! The `auth` configuration object of a network front, and what the front publishes about
//! itself as an RFC 9728 protected resource.
//!
//! This module owns reading and checking the configuration (unknown members refused, every
//! error with the JSON Pointer of the value at fault) into an [`AuthConfig`], from which an
//! [`Authenticator`](super::Authenticator) is built, and the Protected Resource Metadata
//! document and its well-known URL. It reads the `jwks_file` it names and nothing else:
//! fetching a `jwks_url` is the front's.
//!
//! ```json
//! {"resource": "https://gw.example/mcp",
//!  "issuer": "https://idp.example",
//!  "jwks_file": "keys/jwks.json",
//!  "algorithms": ["RS256", "ES256", "EdDSA"], "leeway_s": 60,
//!  "required_scopes": ["mcp:tools"],
//!  "authorization_servers": ["https://idp.example"],
//!  "scopes_supported": ["mcp:tools"],
//!  "resource_name": "Example gateway",
//!  "api_keys": [{"sha256": "<64 hex digits>", "subject": "ci-bot", "scopes": ["mcp:tools"]}]}
//! ```
//!
//! `resource` is required; `jwks_file` (relative to the configuration's directory) and
//! `jwks_url` exclude each other and need `issuer`; at least one of them or a non-empty
//! `api_keys` is required. URLs are `https://`, or `http://` on a loopback host (`localhost`,
//! `127.x.y.z`, `[::1]`), with a lowercase host and no user information, query or fragment.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use crate::json::{ConfigError, ObjectWriter, Value};

use super::apikey::parse_sha256_hex;
use super::jwk::MAX_JWKS_BYTES;
use super::{scope_char, usable_name, Alg, ApiKeys, Jwks, DEFAULT_LEEWAY_S};

/// The well-known URI suffix of RFC 9728 §3.
const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

/// The largest `leeway_s` accepted: 10 minutes.
const MAX_LEEWAY_S: u64 = 600;

const MEMBERS: [&str; 11] = [
    "resource",
    "issuer",
    "jwks_file",
    "jwks_url",
    "algorithms",
    "leeway_s",
    "required_scopes",
    "authorization_servers",
    "scopes_supported",
    "resource_name",
    "api_keys",
];

const KEY_MEMBERS: [&str; 3] = ["sha256", "subject", "scopes"];

/// Where the signing keys come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum KeySource {
    None,
    File(PathBuf, Jwks),
    Url(String),
}

/// A checked `auth` configuration object.
///
/// # Example
/// ```
/// use jsongate::auth::{ApiKeys, AuthConfig};
/// let text = format!(
///     r#"{{"resource":"https://gw.example/mcp","issuer":"https://idp.example",
///         "jwks_url":"https://idp.example/.well-known/jwks.json",
///         "required_scopes":["mcp:tools"],
///         "api_keys":[{{"sha256":"{}","subject":"ci-bot","scopes":["mcp:tools"]}}]}}"#,
///     ApiKeys::sha256_hex("k-1")
/// );
/// let config = AuthConfig::from_slice(text.as_bytes(), std::path::Path::new(".")).unwrap();
/// assert_eq!(config.jwks_url(), Some("https://idp.example/.well-known/jwks.json"));
/// assert_eq!(config.well_known_path(), "/.well-known/oauth-protected-resource/mcp");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfig {
    pub(super) resource: String,
    /// Where the path of `resource` starts (its length when it has none).
    pub(super) path_at: usize,
    pub(super) issuer: Option<String>,
    pub(super) keys: KeySource,
    pub(super) algorithms: Vec<Alg>,
    pub(super) leeway: u64,
    pub(super) required_scopes: Vec<String>,
    pub(super) authorization_servers: Vec<String>,
    pub(super) scopes_supported: Vec<String>,
    pub(super) resource_name: Option<String>,
    pub(super) api_keys: ApiKeys,
}

/// An `invalid` error at `/auth/…tokens`, its message prefixed with `auth/…tokens: `.
fn invalid(tokens: &[&str], message: &str) -> ConfigError {
    let mut pointer = String::from("/auth");
    let mut path = String::from("auth");
    for t in tokens {
        crate::pointer::push_name(&mut pointer, t);
        path.push('/');
        path.push_str(t);
    }
    ConfigError::invalid(format!("{path}: {message}")).at(pointer)
}

fn string<'v>(doc: &'v Value, name: &str) -> Result<Option<&'v str>, ConfigError> {
    match doc.get(name) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(invalid(&[name], "expected a string")),
    }
}

/// An array of strings, each checked by `check` (which returns why it is refused).
fn strings(
    doc: &Value,
    tokens: &[&str],
    check: fn(&str) -> Result<(), &'static str>,
) -> Result<Option<Vec<String>>, ConfigError> {
    let mut v = doc;
    for t in tokens {
        match v.get(t) {
            Some(x) => v = x,
            None => return Ok(None),
        }
    }
    let items = v
        .as_array()
        .ok_or_else(|| invalid(tokens, "expected an array of strings"))?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let index = i.to_string();
        let at = [tokens, &[index.as_str()]].concat();
        let s = item
            .as_str()
            .ok_or_else(|| invalid(&at, "expected a string"))?;
        check(s).map_err(|why| invalid(&at, why))?;
        out.push(s.to_owned());
    }
    Ok(Some(out))
}

fn scope_token(s: &str) -> Result<(), &'static str> {
    if !s.is_empty() && s.chars().all(scope_char) {
        Ok(())
    } else {
        Err("not a scope token (visible ASCII, no space, quote or backslash)")
    }
}

fn url(s: &str) -> Result<(), &'static str> {
    check_url(s).map(|_| ())
}

/// Checks an `https://` URL (or `http://` on a loopback host) and returns where its path
/// starts.
fn check_url(s: &str) -> Result<usize, &'static str> {
    let (scheme, rest) = if let Some(rest) = s.strip_prefix("https://") {
        ("https", rest)
    } else if let Some(rest) = s.strip_prefix("http://") {
        ("http", rest)
    } else {
        return Err("expected an https:// URL (or http:// on a loopback host)");
    };
    let authority = rest.split('/').next().unwrap_or_default();
    let path = &rest[authority.len()..];
    if authority.is_empty() {
        return Err("the URL has no host");
    }
    if authority.contains('@') {
        return Err("the URL must not carry user information");
    }
    if !authority
        .bytes()
        .all(|b| matches!(b, b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b':' | b'[' | b']'))
    {
        return Err("the URL's host must be lowercase letters, digits, '-', '.' or an IP address");
    }
    let host = match authority.rfind(':') {
        Some(colon) if !authority[colon..].contains(']') => {
            let port = &authority[colon + 1..];
            if port.parse::<u16>().map_or(true, |p| p == 0) {
                return Err("the URL's port is not a port number");
            }
            &authority[..colon]
        }
        _ => authority,
    };
    if host.is_empty() || (host.contains(':') && !(host.starts_with('[') && host.ends_with(']'))) {
        return Err("the URL has no host");
    }
    if path.contains(['?', '#']) {
        return Err("the URL must not have a query or fragment");
    }
    if !path.chars().all(scope_char) {
        return Err("the URL's path must be visible ASCII (percent-encode the rest)");
    }
    let loopback = host == "localhost"
        || host == "[::1]"
        || host.strip_prefix("127.").is_some_and(|r| {
            r.split('.').count() == 3 && r.split('.').all(|n| n.parse::<u8>().is_ok())
        });
    if scheme == "http" && !loopback {
        return Err("http:// is only accepted on a loopback host; use https://");
    }
    Ok(s.len() - path.len())
}

impl AuthConfig {
    /// Reads the `auth` object `auth`; `dir` is the directory `jwks_file` is relative to.
    /// Errors point into the front's configuration as `/auth/…` (the member this object is).
    ///
    /// # Errors
    /// A [`ConfigError`] (kind `invalid`, or `read` for the JWKS file) with the pointer of the
    /// value at fault: an unknown member, a member of the wrong type, a URL that is not
    /// `https://` (or loopback `http://`), a missing `resource`, `issuer` missing while keys
    /// are given, both `jwks_file` and `jwks_url`, no credential source at all, an unknown
    /// algorithm, a leeway above 600 s, a malformed scope, API key digest or subject, a key
    /// listed twice, or a JWKS file that cannot be read or used.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::AuthConfig;
    /// use jsongate::json::Value;
    /// use jsongate::Limits;
    /// let doc = Value::parse(br#"{"resource":"https://gw.example/mcp","jwks_url":"https://idp.example/jwks"}"#, Limits::new()).unwrap();
    /// let e = AuthConfig::from_value(&doc, std::path::Path::new(".")).unwrap_err();
    /// assert_eq!(e.pointer(), "/auth/issuer");
    /// assert_eq!(e.message(), "auth/issuer: required with jwks_file or jwks_url");
    /// ```
    pub fn from_value(auth: &Value, dir: &Path) -> Result<AuthConfig, ConfigError> {
        let members = auth
            .as_object()
            .ok_or_else(|| invalid(&[], "expected an object"))?;
        if let Some((name, _)) = members.iter().find(|(n, _)| !MEMBERS.contains(&n.as_str())) {
            return Err(invalid(&[name], "unknown member"));
        }
        let resource = string(auth, "resource")?
            .ok_or_else(|| invalid(&["resource"], "required"))?
            .to_owned();
        let path_at = check_url(&resource).map_err(|why| invalid(&["resource"], why))?;
        let issuer = string(auth, "issuer")?.map(str::to_owned);
        if let Some(i) = &issuer {
            url(i).map_err(|why| invalid(&["issuer"], why))?;
        }
        let keys = match (string(auth, "jwks_file")?, string(auth, "jwks_url")?) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    &["jwks_url"],
                    "give jwks_file or jwks_url, not both",
                ))
            }
            (Some(file), None) => {
                let path = dir.join(file);
                let jwks = read_jwks(&path)?;
                KeySource::File(path, jwks)
            }
            (None, Some(u)) => {
                url(u).map_err(|why| invalid(&["jwks_url"], why))?;
                KeySource::Url(u.to_owned())
            }
            (None, None) => KeySource::None,
        };
        if keys != KeySource::None && issuer.is_none() {
            return Err(invalid(&["issuer"], "required with jwks_file or jwks_url"));
        }
        let algorithms = match strings(auth, &["algorithms"], |a| {
            Alg::from_name(a)
                .map(|_| ())
                .ok_or("not one of RS256, ES256, EdDSA")
        })? {
            None => Alg::ALL.to_vec(),
            Some(names) if names.is_empty() => {
                return Err(invalid(&["algorithms"], "at least one algorithm is needed"))
            }
            Some(names) => names.iter().filter_map(|n| Alg::from_name(n)).collect(),
        };
        let leeway = match auth.get("leeway_s") {
            None => DEFAULT_LEEWAY_S,
            Some(v) => v.as_u64().filter(|&s| s <= MAX_LEEWAY_S).ok_or_else(|| {
                invalid(
                    &["leeway_s"],
                    "expected a whole number of seconds, at most 600",
                )
            })?,
        };
        let required_scopes = strings(auth, &["required_scopes"], scope_token)?.unwrap_or_default();
        let authorization_servers = strings(auth, &["authorization_servers"], url)?
            .unwrap_or_else(|| issuer.iter().cloned().collect());
        let scopes_supported = strings(auth, &["scopes_supported"], scope_token)?
            .unwrap_or_else(|| required_scopes.clone());
        let resource_name = string(auth, "resource_name")?.map(str::to_owned);
        if resource_name.as_deref().is_some_and(|n| !usable_name(n)) {
            return Err(invalid(
                &["resource_name"],
                "expected 1 to 256 characters without control characters",
            ));
        }
        let api_keys = api_keys(auth)?;
        if keys == KeySource::None && api_keys.is_empty() {
            return Err(invalid(&[], "give jwks_file, jwks_url or api_keys"));
        }
        Ok(AuthConfig {
            resource,
            path_at,
            issuer,
            keys,
            algorithms,
            leeway,
            required_scopes,
            authorization_servers,
            scopes_supported,
            resource_name,
            api_keys,
        })
    }

    /// Parses `bytes` as the `auth` object and reads it ([`AuthConfig::from_value`]).
    ///
    /// # Errors
    /// A [`ConfigError`] of kind `syntax` when the bytes are not one JSON document within
    /// 1 MiB (duplicate members refused), else as [`AuthConfig::from_value`].
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::AuthConfig;
    /// use std::path::Path;
    /// let e = AuthConfig::from_slice(br#"{"resource":"https://gw.example","tls":1}"#, Path::new(".")).unwrap_err();
    /// assert_eq!((e.pointer(), e.message()), ("/auth/tls", "auth/tls: unknown member"));
    /// ```
    pub fn from_slice(bytes: &[u8], dir: &Path) -> Result<AuthConfig, ConfigError> {
        let doc = Value::parse(bytes, crate::Limits::new().max_bytes(1 << 20))
            .map_err(|e| ConfigError::syntax("auth configuration", &e))?;
        AuthConfig::from_value(&doc, dir)
    }

    /// The canonical URI of this protected resource (RFC 8707, RFC 9728 `resource`): the
    /// audience tokens must name.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/mcp","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.resource(), "https://gw.example/mcp");
    /// ```
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The issuer tokens must come from, if JWTs are accepted.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/mcp","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.issuer(), None);
    /// ```
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The URL the front fetches the key set from (then hands it to
    /// [`Authenticator::set_jwks`](super::Authenticator::set_jwks)), if the configuration names one.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/mcp","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.jwks_url(), None);
    /// ```
    pub fn jwks_url(&self) -> Option<&str> {
        match &self.keys {
            KeySource::Url(u) => Some(u),
            _ => None,
        }
    }

    /// The JWKS file read (resolved against the configuration's directory), if any.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/mcp","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.jwks_file(), None);
    /// ```
    pub fn jwks_file(&self) -> Option<&Path> {
        match &self.keys {
            KeySource::File(p, _) => Some(p),
            _ => None,
        }
    }

    /// The scopes every request needs.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/mcp","required_scopes":["a"],"api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.required_scopes(), ["a"]);
    /// ```
    pub fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The RFC 9728 Protected Resource Metadata document (compact JSON): `resource`,
    /// `authorization_servers` (default: the issuer) and `scopes_supported` (default: the
    /// required scopes) when not empty, `bearer_methods_supported: ["header"]`, and
    /// `resource_name` when configured.
    ///
    /// # Example
    /// ```
    /// use jsongate::auth::AuthConfig;
    /// let c = AuthConfig::from_slice(br#"{"resource":"https://gw.example/mcp",
    ///     "issuer":"https://idp.example","jwks_url":"https://idp.example/jwks",
    ///     "required_scopes":["mcp:tools"]}"#, std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.resource_metadata_document(), concat!(
    ///     r#"{"resource":"https://gw.example/mcp","authorization_servers":["https://idp.example"],"#,
    ///     r#""scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"]}"#));
    /// ```
    pub fn resource_metadata_document(&self) -> String {
        let mut out = String::new();
        let mut o = ObjectWriter::new(&mut out);
        o.str("resource", &self.resource);
        for (name, items) in [
            ("authorization_servers", &self.authorization_servers),
            ("scopes_supported", &self.scopes_supported),
        ] {
            if !items.is_empty() {
                let mut a = o.array(name);
                for item in items {
                    a.str(item);
                }
            }
        }
        o.array("bearer_methods_supported").str("header");
        if let Some(name) = &self.resource_name {
            o.str("resource_name", name);
        }
        o.finish();
        out
    }

    /// The URL of the metadata document (RFC 9728 §3.1): the well-known segment between
    /// the host and the resource's path, `https://gw.example/.well-known/oauth-protected-resource/mcp`
    /// for `https://gw.example/mcp`; for a resource without a path (or `/`), just
    /// `https://gw.example/.well-known/oauth-protected-resource`.
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example:8443/mcp","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.resource_metadata_url(), "https://gw.example:8443/.well-known/oauth-protected-resource/mcp");
    /// ```
    pub fn resource_metadata_url(&self) -> String {
        format!(
            "{}{}",
            &self.resource[..self.path_at],
            self.well_known_path()
        )
    }

    /// The request path the front serves the metadata document on:
    /// `/.well-known/oauth-protected-resource` followed by the resource's path (none for `/`).
    ///
    /// # Example
    /// ```
    /// # let c = jsongate::auth::AuthConfig::from_slice(format!(r#"{{"resource":"https://gw.example/","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#, "0".repeat(64)).as_bytes(), std::path::Path::new(".")).unwrap();
    /// assert_eq!(c.well_known_path(), "/.well-known/oauth-protected-resource");
    /// ```
    pub fn well_known_path(&self) -> String {
        let path = &self.resource[self.path_at..];
        if path == "/" {
            WELL_KNOWN.to_owned()
        } else {
            format!("{WELL_KNOWN}{path}")
        }
    }
}

/// Reads and checks the JWKS file at `path` (at most 64 KiB are read).
fn read_jwks(path: &Path) -> Result<Jwks, ConfigError> {
    let what = format!("auth/jwks_file '{}'", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_JWKS_BYTES as u64 + 1).read_to_end(&mut bytes))
        .map_err(|e| ConfigError::read(&what, &e).at("/auth/jwks_file"))?;
    Jwks::from_slice(&bytes)
        .map_err(|e| ConfigError::invalid(format!("{what}: {e}")).at("/auth/jwks_file"))
}

fn api_keys(auth: &Value) -> Result<ApiKeys, ConfigError> {
    let Some(list) = auth.get("api_keys") else {
        return Ok(ApiKeys::new());
    };
    let list = list
        .as_array()
        .ok_or_else(|| invalid(&["api_keys"], "expected an array"))?;
    let mut keys = ApiKeys::new();
    for (i, entry) in list.iter().enumerate() {
        let i = i.to_string();
        let members = entry
            .as_object()
            .ok_or_else(|| invalid(&["api_keys", &i], "expected an object"))?;
        if let Some((name, _)) = members
            .iter()
            .find(|(n, _)| !KEY_MEMBERS.contains(&n.as_str()))
        {
            return Err(invalid(&["api_keys", &i, name], "unknown member"));
        }
        let sha256 = entry
            .get("sha256")
            .and_then(Value::as_str)
            .and_then(parse_sha256_hex)
            .ok_or_else(|| {
                invalid(
                    &["api_keys", &i, "sha256"],
                    "expected the key's SHA-256 as 64 hexadecimal digits",
                )
            })?;
        if keys.contains(&sha256) {
            return Err(invalid(
                &["api_keys", &i, "sha256"],
                "the same key is listed twice",
            ));
        }
        let subject = entry
            .get("subject")
            .and_then(Value::as_str)
            .filter(|s| usable_name(s))
            .ok_or_else(|| {
                invalid(
                    &["api_keys", &i, "subject"],
                    "expected 1 to 256 characters without control characters",
                )
            })?;
        let scopes = strings(entry, &["scopes"], scope_token)
            .map_err(|e| {
                let inner = e
                    .pointer()
                    .strip_prefix("/auth")
                    .unwrap_or_default()
                    .to_owned();
                let message = e
                    .message()
                    .strip_prefix("auth")
                    .unwrap_or_default()
                    .to_owned();
                ConfigError::invalid(format!("auth/api_keys/{i}{message}"))
                    .at(format!("/auth/api_keys/{i}{inner}"))
            })?
            .unwrap_or_default();
        keys = keys.key(sha256, subject, scopes);
    }
    Ok(keys)
}

#[cfg(test)]
mod tests {
    use super::super::testkit::{self, ISSUER, NOW, RESOURCE};
    use super::*;
    use crate::json::ConfigErrorKind;

    fn config(text: &str) -> Result<AuthConfig, ConfigError> {
        AuthConfig::from_slice(text.as_bytes(), Path::new("."))
    }

    fn refusal(text: &str) -> (String, String) {
        let e = config(text).unwrap_err();
        (e.pointer().to_owned(), e.message().to_owned())
    }

    fn with_keys(resource: &str) -> AuthConfig {
        config(&format!(
            r#"{{"resource":"{resource}","api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#,
            ApiKeys::sha256_hex("k")
        ))
        .unwrap()
    }

    #[test]
    fn metadata_url_with_and_without_a_path() {
        for (resource, url, path) in [
            (
                "https://gw.example/mcp",
                "https://gw.example/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource/mcp",
            ),
            (
                "https://gw.example",
                "https://gw.example/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource",
            ),
            (
                "https://gw.example/",
                "https://gw.example/.well-known/oauth-protected-resource",
                "/.well-known/oauth-protected-resource",
            ),
            (
                "https://gw.example:8443/a/b/",
                "https://gw.example:8443/.well-known/oauth-protected-resource/a/b/",
                "/.well-known/oauth-protected-resource/a/b/",
            ),
            (
                "http://127.0.0.1:8080/mcp",
                "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource/mcp",
            ),
        ] {
            let c = with_keys(resource);
            assert_eq!(c.resource_metadata_url(), url);
            assert_eq!(c.well_known_path(), path);
        }
    }

    #[test]
    fn the_metadata_document_is_escaped_json_with_defaults() {
        let c = config(
            r#"{"resource":"https://gw.example/mcp","issuer":"https://idp.example",
                "jwks_url":"https://idp.example/jwks","required_scopes":["mcp:tools"],
                "resource_name":"Gate \"one\" \\ é"}"#,
        )
        .unwrap();
        let doc = c.resource_metadata_document();
        assert_eq!(
            doc,
            r#"{"resource":"https://gw.example/mcp","authorization_servers":["https://idp.example"],"scopes_supported":["mcp:tools"],"bearer_methods_supported":["header"],"resource_name":"Gate \"one\" \\ é"}"#
        );
        let v = Value::parse(doc.as_bytes(), crate::Limits::new()).unwrap();
        assert_eq!(
            v.get("resource_name").and_then(Value::as_str),
            Some("Gate \"one\" \\ é")
        );
        let c = config(&format!(
            r#"{{"resource":"https://gw.example","authorization_servers":["https://a.example","https://b.example"],
                "scopes_supported":["x","y"],"api_keys":[{{"sha256":"{}","subject":"s"}}]}}"#,
            "0".repeat(64)
        ))
        .unwrap();
        assert_eq!(
            c.resource_metadata_document(),
            r#"{"resource":"https://gw.example","authorization_servers":["https://a.example","https://b.example"],"scopes_supported":["x","y"],"bearer_methods_supported":["header"]}"#
        );
        assert_eq!(
            with_keys("https://gw.example").resource_metadata_document(),
            r#"{"resource":"https://gw.example","bearer_methods_supported":["header"]}"#
        );
    }

    #[test]
    fn configuration_errors_point_at_the_value() {
        let keys = format!(
            r#""api_keys":[{{"sha256":"{}","subject":"s"}}]"#,
            "0".repeat(64)
        );
        let r = |members: &str| refusal(&format!("{{{members}}}"));
        let p = |pointer: &str, message: &str| (pointer.to_owned(), message.to_owned());
        assert_eq!(r(&keys), p("/auth/resource", "auth/resource: required"));
        assert_eq!(refusal("[]"), p("/auth", "auth: expected an object"));
        let res = r#""resource":"https://gw.example/mcp""#;
        assert_eq!(
            r(res),
            p("/auth", "auth: give jwks_file, jwks_url or api_keys")
        );
        assert_eq!(
            r(&format!(r#"{res},"api_keys":[]"#)),
            p("/auth", "auth: give jwks_file, jwks_url or api_keys")
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"jwks_uri":"x""#)),
            p("/auth/jwks_uri", "auth/jwks_uri: unknown member")
        );
        for (resource, why) in [
            (
                "http://gw.example/mcp",
                "http:// is only accepted on a loopback host; use https://",
            ),
            (
                "ftp://gw.example",
                "expected an https:// URL (or http:// on a loopback host)",
            ),
            (
                "https://Gw.example",
                "the URL's host must be lowercase letters, digits, '-', '.' or an IP address",
            ),
            (
                "https://u@gw.example",
                "the URL must not carry user information",
            ),
            (
                "https://gw.example/mcp?x=1",
                "the URL must not have a query or fragment",
            ),
            (
                "https://gw.example/#f",
                "the URL must not have a query or fragment",
            ),
            ("https:///mcp", "the URL has no host"),
            ("https://:443/", "the URL has no host"),
            ("https://a:b:443/", "the URL has no host"),
            (
                "https://gw.example:0/",
                "the URL's port is not a port number",
            ),
            (
                "https://gw.example:x/",
                "the URL's port is not a port number",
            ),
            (
                "https://gw.example/a b",
                "the URL's path must be visible ASCII (percent-encode the rest)",
            ),
            (
                "https://gw.example/a\"b",
                "the URL's path must be visible ASCII (percent-encode the rest)",
            ),
        ] {
            let text = format!(r#"{{"resource":{},{keys}}}"#, crate::json::quote(resource));
            assert_eq!(
                refusal(&text),
                p("/auth/resource", &format!("auth/resource: {why}")),
                "{resource}"
            );
        }
        for ok in [
            "http://localhost:3000/mcp",
            "http://[::1]:3000",
            "http://127.1.2.3/",
            "https://[2001:db8::1]:8443/x",
        ] {
            assert!(with_keys(ok).resource() == ok);
        }
        assert_eq!(
            r(&format!(r#"{res},"jwks_url":"https://idp.example/jwks""#)),
            p(
                "/auth/issuer",
                "auth/issuer: required with jwks_file or jwks_url"
            )
        );
        let iss = r#""issuer":"https://idp.example""#;
        assert_eq!(
            r(&format!(
                r#"{res},{iss},"jwks_url":"http://idp.example/jwks""#
            ))
            .0,
            "/auth/jwks_url"
        );
        assert_eq!(
            r(&format!(
                r#"{res},{iss},"jwks_url":"https://i/j","jwks_file":"j.json""#
            )),
            p(
                "/auth/jwks_url",
                "auth/jwks_url: give jwks_file or jwks_url, not both"
            )
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"issuer":7"#)),
            p("/auth/issuer", "auth/issuer: expected a string")
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"algorithms":["RS256","HS256"]"#)),
            p(
                "/auth/algorithms/1",
                "auth/algorithms/1: not one of RS256, ES256, EdDSA"
            )
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"algorithms":[]"#)).0,
            "/auth/algorithms"
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"algorithms":"RS256""#)),
            p(
                "/auth/algorithms",
                "auth/algorithms: expected an array of strings"
            )
        );
        for leeway in ["601", "-1", "1.5", "\"60\""] {
            assert_eq!(
                r(&format!(r#"{res},{keys},"leeway_s":{leeway}"#)),
                p(
                    "/auth/leeway_s",
                    "auth/leeway_s: expected a whole number of seconds, at most 600"
                )
            );
        }
        assert_eq!(
            r(&format!(r#"{res},{keys},"required_scopes":["a","b c"]"#)),
            p(
                "/auth/required_scopes/1",
                "auth/required_scopes/1: not a scope token (visible ASCII, no space, quote or backslash)"
            )
        );
        assert_eq!(
            r(&format!(
                r#"{res},{keys},"authorization_servers":["https://a","http://b"]"#
            ))
            .0,
            "/auth/authorization_servers/1"
        );
        assert_eq!(
            r(&format!(r#"{res},{keys},"resource_name":"a\u0000""#)).0,
            "/auth/resource_name"
        );
        let e = config(&format!(r#"{{{res},{keys},"issuer":"x","issuer":"y"}}"#)).unwrap_err();
        assert_eq!(
            (e.kind(), e.pointer()),
            (ConfigErrorKind::Syntax, "/issuer")
        );
    }

    #[test]
    fn api_key_entries_are_checked() {
        let res = r#""resource":"https://gw.example/mcp""#;
        let hex = ApiKeys::sha256_hex("k");
        let r = |entries: &str| refusal(&format!(r#"{{{res},"api_keys":[{entries}]}}"#));
        let good = format!(r#"{{"sha256":"{hex}","subject":"ci"}}"#);
        assert_eq!(
            r(&format!(
                r#"{good},{{"sha256":"{}","subject":"ci","scope":["a"]}}"#,
                "1".repeat(64)
            )),
            (
                "/auth/api_keys/1/scope".into(),
                "auth/api_keys/1/scope: unknown member".into()
            )
        );
        assert_eq!(
            r(&format!(r#"{{"sha256":"{}","subject":"ci"}}"#, &hex[1..])).0,
            "/auth/api_keys/0/sha256"
        );
        assert_eq!(
            r(&format!(
                "{good},{}",
                good.replace(&hex, &hex.to_uppercase())
            )),
            (
                "/auth/api_keys/1/sha256".into(),
                "auth/api_keys/1/sha256: the same key is listed twice".into()
            )
        );
        assert_eq!(
            r(&format!(r#"{{"sha256":"{hex}"}}"#)).0,
            "/auth/api_keys/0/subject"
        );
        assert_eq!(
            r(&format!(r#"{{"sha256":"{hex}","subject":""}}"#)).0,
            "/auth/api_keys/0/subject"
        );
        assert_eq!(
            r(&format!(r#"{{"sha256":"{hex}","subject":"ci","scopes":["ok","no good"]}}"#)),
            (
                "/auth/api_keys/0/scopes/1".into(),
                "auth/api_keys/0/scopes/1: not a scope token (visible ASCII, no space, quote or backslash)".into()
            )
        );
        assert_eq!(r("7").0, "/auth/api_keys/0");
        let e = refusal(&format!(r#"{{{res},"api_keys":{{}}}}"#));
        assert_eq!(e.0, "/auth/api_keys");
    }

    #[test]
    fn the_jwks_file_is_read_relative_to_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("keys")).unwrap();
        std::fs::write(dir.path().join("keys/jwks.json"), testkit::keys().jwks()).unwrap();
        let text = format!(
            r#"{{"resource":"{RESOURCE}","issuer":"{ISSUER}","jwks_file":"keys/jwks.json"}}"#
        );
        let c = AuthConfig::from_slice(text.as_bytes(), dir.path()).unwrap();
        assert_eq!(
            c.jwks_file(),
            Some(dir.path().join("keys/jwks.json").as_path())
        );
        assert_eq!(c.issuer(), Some(ISSUER));
        let auth = super::super::Authenticator::new(c);
        assert_eq!(auth.jwks().len(), 3);
        let token = testkit::keys().token(
            Alg::Es256,
            &format!(
                r#"{{"iss":"{ISSUER}","aud":"{RESOURCE}","sub":"u","exp":{}}}"#,
                NOW + 60
            ),
        );
        let header = format!("Bearer {token}");
        assert_eq!(
            auth.authenticate(Some(header.as_bytes()), NOW)
                .unwrap()
                .subject,
            "u"
        );

        let e = AuthConfig::from_slice(text.as_bytes(), &dir.path().join("nowhere")).unwrap_err();
        assert_eq!(
            (e.kind(), e.pointer()),
            (ConfigErrorKind::Read, "/auth/jwks_file")
        );
        std::fs::write(dir.path().join("keys/jwks.json"), r#"{"keys":[]}"#).unwrap();
        let e = AuthConfig::from_slice(text.as_bytes(), dir.path()).unwrap_err();
        assert_eq!(
            (e.kind(), e.pointer()),
            (ConfigErrorKind::Invalid, "/auth/jwks_file")
        );
        assert!(
            e.message()
                .ends_with("keys/jwks.json': no usable signing key"),
            "{e}"
        );
    }
}
