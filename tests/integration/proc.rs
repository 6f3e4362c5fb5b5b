//! Processes the network tests start: a server that prints `listening on ADDR` (jsongate's
//! fronts) or its port (the Python test servers) as its first line, killed when dropped, and
//! curl as an MCP client.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// A child process killed (and reaped) when dropped: a failing assertion leaves nothing
/// running.
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Killed {
    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.0.try_wait().ok().flatten().is_none()
    }

    /// Its pid.
    pub fn id(&self) -> u32 {
        self.0.id()
    }
}

/// A jsongate front started from `cmd`: the process, the address it listens on, and what it
/// writes to stderr after that line (kept as it comes). `Err` with everything it wrote when
/// it did not start (a configuration error).
pub fn listening(cmd: &mut Command) -> Result<(Killed, SocketAddr, Arc<Mutex<String>>), String> {
    let mut child = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let Some(addr) = line.trim().strip_prefix("listening on ") else {
        let mut rest = String::new();
        let _ = err.read_to_string(&mut rest);
        let _ = child.wait();
        return Err(format!("{line}{rest}"));
    };
    let addr = addr.parse().unwrap();
    let stderr = Arc::new(Mutex::new(String::new()));
    let keep = Arc::clone(&stderr);
    std::thread::spawn(move || {
        let mut line = String::new();
        while err.read_line(&mut line).is_ok_and(|n| n > 0) {
            keep.lock().unwrap().push_str(&line);
            line.clear();
        }
    });
    Ok((Killed(child), addr, stderr))
}

/// A test server started from `cmd` that prints its port as its first line.
pub fn with_port(cmd: &mut Command) -> (Killed, u16) {
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("a port: {line}"));
    (Killed(child), port)
}

/// One MCP request with curl (`curl_args` first, e.g. `--cacert`): status, lower-cased
/// head, body.
pub fn mcp_curl(
    curl_args: &[&str],
    url: &str,
    session: Option<&str>,
    headers: &[String],
    body: &str,
) -> (u16, String, String) {
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-i", "--max-time", "20"])
        .args(curl_args)
        .args(["-H", "content-type: application/json"])
        .args(["-H", "accept: application/json, text/event-stream"]);
    if let Some(s) = session {
        cmd.args(["-H", &format!("mcp-session-id: {s}")]);
    }
    for h in headers {
        cmd.args(["-H", h]);
    }
    let out = cmd.args(["-d", body, url]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n");
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// The session id a response head carries.
pub fn session_id(head: &str) -> Option<String> {
    head.lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .map(|s| s.trim().to_owned())
}
