//! Running the server as a child process: its stdin and stdout are piped through the
//! [`Proxy`], its stderr is the proxy's own (passed through untouched). `SIGINT`, `SIGTERM`
//! and `SIGHUP` sent to the proxy are forwarded to the child. When the client closes its
//! side, the child's stdin is closed; a child still running after [`GRACE`] gets `SIGTERM`,
//! and one still running after another [`GRACE`] gets `SIGKILL` (the MCP stdio shutdown
//! sequence). When the child closes its stdout, pending requests are answered with errors
//! and the proxy ends with the child's exit status.

use std::ffi::OsString;
use std::io;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::{Config, Proxy};

/// How long a child may take to exit after its input closed, and again after `SIGTERM`.
///
/// # Example
/// ```
/// use std::time::Duration;
/// use jsongate::mcp::child::GRACE;
/// // After the client closes: GRACE, then SIGTERM, another GRACE, then SIGKILL.
/// assert_eq!(GRACE, Duration::from_secs(2));
/// assert!(GRACE * 2 < Duration::from_secs(5)); // a stuck server is gone within about 4 s
/// ```
pub const GRACE: Duration = Duration::from_secs(2);

/// Runs `command` (program and arguments) behind a proxy over this process's stdin and
/// stdout, and returns the child's exit status.
///
/// # Errors
/// The command could not be started, or reading from it failed.
///
/// # Panics
/// Never: the child's stdin and stdout are always piped.
///
/// # Example
/// ```
/// use std::io::ErrorKind;
/// use jsongate::mcp::{child::run_command, Config};
/// // What `jsongate mcp-proxy -- my-server --stdio` does (it takes over stdin and stdout):
/// // run_command(Config::default(), &["my-server".into(), "--stdio".into()])?
/// let err = run_command(Config::default(), &[]).unwrap_err();
/// assert_eq!((err.kind(), err.to_string().as_str()), (ErrorKind::InvalidInput, "no server command"));
/// ```
pub fn run_command(config: Config, command: &[OsString]) -> io::Result<ExitStatus> {
    let (program, args) = command
        .split_first()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no server command"))?;
    let signals = catch_signals()?;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let pid = child.id();
    let exited = Arc::new(AtomicBool::new(false));
    forward_signals(signals, pid, Arc::clone(&exited))?;
    let stdin = child.stdin.take().expect("piped stdin");
    let stdout = child.stdout.take().expect("piped stdout");
    let on_client_closed: Box<dyn FnOnce() + Send> = {
        let exited = Arc::clone(&exited);
        Box::new(move || escalate(pid, exited))
    };
    let proxy = Proxy::new(config);
    let end = proxy.run(io::stdin(), io::stdout(), stdin, stdout, on_client_closed);
    // The server closed its output (or the client went away): it gets the same grace.
    escalate(pid, Arc::clone(&exited));
    let status = child.wait();
    exited.store(true, Ordering::SeqCst);
    end?;
    status
}

/// Ends the child unless it exits by itself: `SIGTERM` after [`GRACE`], `SIGKILL` after
/// another.
fn escalate(pid: u32, exited: Arc<AtomicBool>) {
    std::thread::spawn(move || {
        for sig in [Signal::Term, Signal::Kill] {
            std::thread::sleep(GRACE);
            if exited.load(Ordering::SeqCst) {
                return;
            }
            send(pid, sig);
        }
    });
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

#[cfg(unix)]
fn send(pid: u32, sig: Signal) {
    use nix::sys::signal::{kill, Signal as S};
    use nix::unistd::Pid;
    let s = match sig {
        Signal::Term => S::SIGTERM,
        Signal::Kill => S::SIGKILL,
    };
    if let Ok(p) = i32::try_from(pid) {
        let _ = kill(Pid::from_raw(p), s);
    }
}

#[cfg(not(unix))]
fn send(_pid: u32, _sig: Signal) {}

/// Signals to forward, registered before the child starts so none is missed.
#[cfg(unix)]
struct Forward(signal_hook::iterator::Signals);

#[cfg(unix)]
fn catch_signals() -> io::Result<Forward> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    Ok(Forward(signal_hook::iterator::Signals::new([
        SIGINT, SIGTERM, SIGHUP,
    ])?))
}

#[cfg(unix)]
fn forward_signals(signals: Forward, pid: u32, exited: Arc<AtomicBool>) -> io::Result<()> {
    use nix::sys::signal::{kill, Signal as S};
    use nix::unistd::Pid;
    let mut signals = signals.0;
    std::thread::Builder::new()
        .name("mcp-signals".into())
        .spawn(move || {
            for sig in signals.forever() {
                if exited.load(Ordering::SeqCst) {
                    return;
                }
                let (Ok(p), Ok(s)) = (i32::try_from(pid), S::try_from(sig)) else {
                    continue;
                };
                let _ = kill(Pid::from_raw(p), s);
            }
        })?;
    Ok(())
}

#[cfg(not(unix))]
struct Forward;

#[cfg(not(unix))]
fn catch_signals() -> io::Result<Forward> {
    Ok(Forward)
}

#[cfg(not(unix))]
fn forward_signals(_: Forward, _pid: u32, _exited: Arc<AtomicBool>) -> io::Result<()> {
    Ok(())
}
