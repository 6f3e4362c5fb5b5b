//! Upstream URLs given by operators (`serve` routes, `mcp-proxy --upstream`): parsed once, at
//! start, with `http::Uri` (RFC 3986), and refused with a message naming what is wrong rather
//! than read loosely (a query taken for part of the host, credentials in the URL).

use http::Uri;

/// An upstream base URL, split into what a connection and a request need.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upstream {
    /// `host:port` to connect to (port 80 when the URL names none).
    pub authority: String,
    /// The base path, `/` when the URL has none; never with a query or fragment.
    pub path: String,
}

/// Parses an operator's upstream URL: `http://HOST[:PORT][/PATH]`.
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
/// assert!(parse_upstream("https://example.com/").unwrap_err().contains("http://"));
/// assert!(parse_upstream("http://example.com:99999/").unwrap_err().contains("port"));
/// # Ok::<(), String>(())
/// ```
pub fn parse_upstream(url: &str) -> Result<Upstream, String> {
    if !url.starts_with("http://") {
        return Err(format!(
            "upstream '{url}' is not an http:// URL (only plain HTTP upstreams are supported)"
        ));
    }
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
    Ok(Upstream {
        authority: format!("{}:{port}", auth.host()),
        path,
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
            ("https://example.com/", "http://"),
            ("https://x/mcp", "http://"),
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
        ] {
            let u = parse_upstream(url).unwrap();
            assert_eq!((u.authority.as_str(), u.path.as_str()), (authority, path));
        }
    }
}
