//! `jsongate serve`: the reverse proxy for HTTP tool APIs, each route gated by a contract.

use std::process::ExitCode;

use clap::{Args, Subcommand};

use super::args::{self, Source};

/// Reverse proxy for HTTP tool APIs, each route gated by a contract
#[derive(Args, Debug)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "\
Each route (method, path prefix) of the configuration names an upstream base URL (https://,
or http:// to loopback unless the route sets allow_plaintext) and a gate contract; the
caller receives the gate's envelope, one audit line per request goes to the config's audit
file (default: stderr), never with a header value. The caller's Authorization is never
forwarded; a route's upstream_headers carry the upstream's own credentials. Prints
'listening on IP:PORT' on stderr once ready; SIGTERM or SIGINT stop accepting and let
in-flight requests finish; SIGHUP reloads the TLS certificate (nothing else).
'jsongate serve schema' prints the configuration's schema.

EXIT STATUS:
    0 stopped by a signal, 2 usage, configuration or I/O error"
)]
pub struct ServeArgs {
    #[command(subcommand)]
    what: Option<ServeCmd>,
    /// the configuration (format: jsongate serve schema)
    #[arg(long, value_name = "FILE", value_parser = args::source)]
    config: Option<Source>,
    /// listen address, over the config's (port 0: any free port)
    #[arg(long, value_name = "IP:PORT")]
    listen: Option<String>,
    #[command(flatten)]
    tls: args::ListenTlsArgs,
}

#[derive(Subcommand, Debug)]
enum ServeCmd {
    /// Print the JSON Schema of the configuration
    Schema,
}

/// `jsongate serve --config FILE [--listen ADDR]` and `jsongate serve schema`.
pub fn serve(a: &ServeArgs) -> Result<ExitCode, args::Failure> {
    use jsongate::http::serve::{run, ServeConfig, SERVE_SCHEMA};
    if let Some(ServeCmd::Schema) = a.what {
        args::print(SERVE_SCHEMA);
        return Ok(ExitCode::SUCCESS);
    }
    let src = a
        .config
        .as_ref()
        .ok_or("serve: --config FILE is required")?;
    let mut cfg = src
        .load(ServeConfig::from_file, ServeConfig::from_slice)
        .map_err(|e| format!("serve config '{}': {e}", src.name()))?;
    if let Some(l) = &a.listen {
        cfg = cfg.listen(
            l.parse()
                .map_err(|_| format!("--listen: '{l}' is not IP:PORT"))?,
        );
    }
    if let Some(t) = a.tls.load()? {
        cfg = cfg.tls(t);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    rt.block_on(async move {
        let listen = cfg.get_listen();
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(|e| format!("cannot listen on {listen}: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        let stop = shutdown_signal();
        eprintln!("listening on {addr}");
        run(cfg, listener, stop)
            .await
            .map_err(|e| format!("serve: {e}"))
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Installs the signal handlers at once, so that a signal arriving before the server is first
/// polled is not lost (nor, for SIGHUP, fatal), and resolves on SIGTERM or SIGINT (Ctrl-C
/// elsewhere). SIGHUP, which would otherwise end the process, is not fatal: a TLS listener
/// reloads its certificate on it (see `jsongate::tls`), nothing else is reloaded. Call it
/// inside the runtime, before saying "listening on".
pub fn shutdown_signal() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let term = signal(SignalKind::terminate());
        let int = signal(SignalKind::interrupt());
        let mut hup = signal(SignalKind::hangup()).ok();
        Box::pin(async move {
            let (Ok(mut term), Ok(mut int)) = (term, int) else {
                return std::future::pending().await;
            };
            loop {
                let hangup = async {
                    match hup.as_mut() {
                        Some(h) => h.recv().await,
                        None => std::future::pending().await,
                    }
                };
                tokio::select! {
                    _ = term.recv() => return,
                    _ = int.recv() => return,
                    Some(()) = hangup => {}
                }
            }
        })
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        })
    }
}
