//! Upstream URLs given by operators (`serve` routes, `mcp-proxy --upstream`): parsed once, at
//! start, with `http::Uri` (RFC 3986), and refused with a message naming what is wrong rather
//! than read loosely (a query taken for part of the host, credentials in the URL).

use http::Uri;

/// An upstream base URL, split into what a connection and a request need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// `host:port` to connect to (port 80, or 443 for `https`, when the URL names none).
    pub authority: String,
    /// The base path, `/` when the URL has none; never with a query or fragment.
    pub path: String,
    /// `https://`: the connection is TLS, verified against `host`.
    pub tls: bool,
    /// The host as the URL names it (an IPv6 literal in brackets): the name TLS verifies.
    pub host: String,
    /// The `Host` header sent upstream: the URL's authority, without a default port.
    pub host_header: String,
}

impl Upstream {
    /// Whether the host is a loopback address or name (`localhost`, `*.localhost`,
    /// `127.0.0.0/8`, `::1`): plain HTTP to it never leaves the machine.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::parse_upstream;
    /// assert!(parse_upstream("http://127.0.0.2:9/")?.is_loopback());
    /// assert!(parse_upstream("http://[::1]:9/")?.is_loopback());
    /// assert!(parse_upstream("http://localhost/")?.is_loopback());
    /// assert!(!parse_upstream("http://10.0.0.5/")?.is_loopback());
    /// assert!(!parse_upstream("http://localhost.example.com/")?.is_loopback());
    /// # Ok::<(), String>(())
    /// ```
    pub fn is_loopback(&self) -> bool {
        let h = self.host.to_ascii_lowercase();
        let bare = h.trim_start_matches('[').trim_end_matches(']');
        match bare.parse::<std::net::IpAddr>() {
            Ok(ip) => ip.is_loopback(),
            Err(_) => bare == "localhost" || bare.ends_with(".localhost"),
        }
    }

    /// Refuses plain HTTP to an upstream off this machine unless `allowed`: credentials and
    /// tool results would cross the network readable and forgeable.
    ///
    /// # Errors
    /// The message names the URL and the option that allows it.
    ///
    /// # Example
    /// ```
    /// use jsongate::http::parse_upstream;
    /// assert!(parse_upstream("http://10.0.0.5/")?.check_plaintext(false).is_err());
    /// assert!(parse_upstream("http://10.0.0.5/")?.check_plaintext(true).is_ok());
    /// assert!(parse_upstream("https://10.0.0.5/")?.check_plaintext(false).is_ok());
    /// assert!(parse_upstream("http://127.0.0.1:9/")?.check_plaintext(false).is_ok());
    /// # Ok::<(), String>(())
    /// ```
    pub fn check_plaintext(&self, allowed: bool) -> Result<(), String> {
        if self.tls || allowed || self.is_loopback() {
            return Ok(());
        }
        Err(format!(
            "upstream 'http://{}' is plain HTTP to another host: use https://, or allow plain HTTP explicitly",
            self.host_header
        ))
    }
}

/// Parses an operator's upstream URL: `http://HOST[:PORT][/PATH]` or
/// `https://HOST[:PORT][/PATH]`.
///
/// Refused, each with its own message: another scheme, a missing or empty host, a port that
/// is not a number in 1..=65535, user information (`user@`; credentials belong in headers),
/// a query or fragment (a base URL has neither), and anything `http::Uri` cannot parse.
///
/// # Errors
/// The message names the URL and what is wrong with it.
///
/// # Example
/// ```
/// use jsongate::http::parse_upstream;
/// let u = parse_upstream("http://127.0.0.1:8931/mcp")?;
/// assert_eq!((u.authority.as_str(), u.path.as_str()), ("127.0.0.1:8931", "/mcp"));
/// assert_eq!(parse_upstream("http://localhost")?.authority, "localhost:80");
/// assert_eq!(parse_upstream("http://[::1]:9000")?.path, "/");
/// let e = parse_upstream("http://127.0.0.1:9?x=1").unwrap_err();
/// assert!(e.contains("query"), "{e}");
/// assert!(parse_upstream("http://user:pw@example.com/").unwrap_err().contains("user information"));
/// let u = parse_upstream("https://api.example.com/v1")?;
/// assert_eq!((u.authority.as_str(), u.host_header.as_str(), u.tls), ("api.example.com:443", "api.example.com", true));
/// assert!(parse_upstream("ftp://example.com/").unwrap_err().contains("http://"));
/// assert!(parse_upstream("http://example.com:99999/").unwrap_err().contains("port"));
/// # Ok::<(), String>(())
/// ```
pub fn parse_upstream(url: &str) -> Result<Upstream, String> {
    let tls = if url.starts_with("https://") {
        true
    } else if url.starts_with("http://") {
        false
    } else {
        return Err(format!(
            "upstream '{url}' is not an http:// or https:// URL"
        ));
    };
    if url.contains('#') {
        return Err(format!(
            "upstream '{url}' has a fragment; a base URL has none"
        ));
    }
    let uri: Uri = url
        .parse()
        .map_err(|e| format!("upstream '{url}' is not a valid URL: {e}"))?;
    let Some(auth) = uri.authority() else {
        return Err(format!("upstream '{url}' has no host"));
    };
    if auth.as_str().contains('@') {
        return Err(format!(
            "upstream '{url}' has user information; send credentials in headers, not in the URL"
        ));
    }
    if auth.host().is_empty() || auth.host() == "[]" {
        return Err(format!("upstream '{url}' has no host"));
    }
    if uri.query().is_some() {
        return Err(format!("upstream '{url}' has a query; a base URL has none"));
    }
    // What follows the host: `""` or `:PORT` (`http` reads a port that is not a `u16` as no
    // port at all, which would mean 80).
    let port = match &auth.as_str()[auth.host().len()..] {
        "" if tls => 443,
        "" => 80,
        ":" => return Err(format!("upstream '{url}' has an empty port")),
        p => match p[1..].parse::<u16>() {
            Ok(0) => {
                return Err(format!(
                    "upstream '{url}': port 0 is not a port to connect to"
                ))
            }
            Ok(n) => n,
            Err(_) => {
                return Err(format!(
                "upstream '{url}' is not a valid URL: port '{}' is not a number from 1 to 65535",
                &p[1..]
            ))
            }
        },
    };
    let path = match uri.path() {
        "" => "/".to_owned(),
        p => p.to_owned(),
    };
    let default = if tls { 443 } else { 80 };
    Ok(Upstream {
        authority: format!("{}:{port}", auth.host()),
        path,
        tls,
        host: auth.host().to_owned(),
        host_header: if port == default {
            auth.host().to_owned()
        } else {
            format!("{}:{port}", auth.host())
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_urls_are_refused_with_their_fault() {
        for (url, fault) in [
            ("http://127.0.0.1:9?x=1", "query"),
            ("http://127.0.0.1:9/mcp?x=1", "query"),
            ("http://127.0.0.1:9/#top", "fragment"),
            ("http://u@127.0.0.1:9/", "user information"),
            ("http://u:p@127.0.0.1:9/", "user information"),
            ("http://127.0.0.1:99999/", "not a number from 1 to 65535"),
            ("http://[::1]:65536/", "not a number from 1 to 65535"),
            ("http://127.0.0.1:x/", "not a valid URL"),
            ("http://127.0.0.1:0/", "port 0"),
            ("http://127.0.0.1:/", "empty port"),
            ("http:///mcp", "not a valid URL"),
            ("http://", "not a valid URL"),
            ("https://u@example.com/", "user information"),
            ("https://x:0/mcp", "port 0"),
            ("https://x/mcp?q", "query"),
            ("http://u@x/", "user information"),
            ("http://user@example.com/", "user information"),
            ("ftp://example.com/", "http://"),
            ("127.0.0.1:9", "http://"),
            ("http://exa mple.com/", "not a valid URL"),
        ] {
            let e = parse_upstream(url).expect_err(url);
            assert!(e.contains(fault), "{url}: {e}");
            assert!(e.contains(url), "{url}: {e}");
        }
    }

    #[test]
    fn upstream_urls_keep_host_port_and_path() {
        for (url, authority, path) in [
            ("http://127.0.0.1:8931/mcp", "127.0.0.1:8931", "/mcp"),
            ("http://example.com", "example.com:80", "/"),
            ("http://example.com/", "example.com:80", "/"),
            ("http://[::1]:9000/a/b/", "[::1]:9000", "/a/b/"),
            ("http://h:1/p%20q", "h:1", "/p%20q"),
            ("http://127.0.0.1:9/mcp", "127.0.0.1:9", "/mcp"),
            ("http://localhost:3000", "localhost:3000", "/"),
            ("https://example.com", "example.com:443", "/"),
            ("https://example.com:8443/mcp", "example.com:8443", "/mcp"),
            ("https://[::1]/x", "[::1]:443", "/x"),
        ] {
            let u = parse_upstream(url).unwrap();
            assert_eq!((u.authority.as_str(), u.path.as_str()), (authority, path));
            assert_eq!(u.tls, url.starts_with("https"));
        }
        let host = |u: &str| parse_upstream(u).unwrap().host_header;
        assert_eq!(host("http://example.com:80/"), "example.com");
        assert_eq!(host("https://example.com:443/"), "example.com");
        assert_eq!(host("https://example.com:80/"), "example.com:80");
        assert_eq!(host("http://[::1]:9000/"), "[::1]:9000");
    }
}
