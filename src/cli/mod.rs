//! The `jsongate` command line on `clap`: the subcommands, their dispatch, and how usage
//! errors are reported.
//!
//! Exit codes: 0 accepted, 1 rejected, 2 usage, configuration or I/O error (message on
//! stderr, `jsongate: ` first), 3 ask (`decide` only); `--help` and `--version` exit 0.
//! Each subcommand lives in its own module; what they print on stdout is written by the
//! library (`verdict_json`, `Decision::to_json`, ...) and only printed here.

mod args;
mod check;
mod decide;
mod gate;
mod mcp;
mod serve;

use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser, Subcommand};

const TOP_AFTER: &str = "\
Limits of check, mcp-proxy and mcp-pin (N: an integer or 'unlimited'; SIZE: N, or N with
KiB, MiB, GiB, kB, MB or GB, as in 16MiB):
    --max-bytes SIZE       input bytes, whitespace included     [default: 16777216 (16 MiB)]
    --max-depth N          nesting depth ([] and {} are 1)       [default: 128]
    --max-name-bytes SIZE  UTF-8 bytes of one member name        [default: 4096]
    --max-string-bytes SIZE UTF-8 bytes of one string value       [default: 4194304 (4 MiB)]
    --max-number-bytes SIZE bytes of one number's text            [default: 128]
    --max-members N        members of one object                 [default: 65536]
    --max-items N          items of one array                    [default: 1000000]
    (mcp-proxy and mcp-pin: --max-bytes is per message, default 4194304)

FILE arguments read standard input when given as '-' (one reader of it per command).

ERROR KINDS:
    too_large, too_deep, name_too_long, string_too_long, number_too_long, too_many_members,
    too_many_items, duplicate_name, invalid_utf8, lone_surrogate, noncharacter, syntax,
    schema, budget_exceeded, schema_cycle

EXIT STATUS:
    0 accepted (decide: allow), 1 rejected (decide: deny), 2 usage, configuration or I/O
    error (message on stderr), 3 ask (decide only)

Run 'jsongate COMMAND --help' for the options of one command.";

/// jsongate — streaming, bounded-memory JSON gate for untrusted tool output
#[derive(Parser)]
#[command(
    name = "jsongate",
    version,
    about = "jsongate — streaming, bounded-memory JSON gate for untrusted tool output",
    after_help = TOP_AFTER,
    args_override_self = true,
    subcommand_required = true,
    max_term_width = 100
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Check(check::CheckArgs),
    Gate(gate::GateArgs),
    Contract(gate::ContractArgs),
    Render(gate::RenderArgs),
    Screen(gate::ScreenArgs),
    Decide(decide::DecideArgs),
    Approve(decide::ApproveArgs),
    McpProxy(Box<mcp::ProxyArgs>),
    McpPin(mcp::McpPinArgs),
    Pin(mcp::PinArgs),
    Serve(serve::ServeArgs),
    /// Print the JSON Schema of policy files
    Policy(SchemaOnly),
    /// Print the JSON Schema of decision records
    Decision(DecisionSchema),
    /// Print the JSON Schema of alert files
    Alerts(SchemaOnly),
    /// Print the JSON Schema of plans
    Plan(SchemaOnly),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(after_help = "\
Install, for example:
    jsongate completions bash > ~/.local/share/bash-completion/completions/jsongate
    jsongate completions zsh > ~/.zfunc/_jsongate      (with fpath+=~/.zfunc)
    jsongate completions fish > ~/.config/fish/completions/jsongate.fish")]
    Completions {
        /// the shell
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into DIR
    #[command(after_help = "\
    jsongate man | man -l -
    jsongate man --dir /usr/local/share/man/man1")]
    Man {
        /// write jsongate.1 and jsongate-COMMAND.1 for every command into DIR
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

/// `policy schema` and its kin.
#[derive(clap::Args)]
struct SchemaOnly {
    #[command(subcommand)]
    what: PrintSchema,
}

#[derive(Subcommand)]
enum PrintSchema {
    /// Print the JSON Schema
    Schema,
}

/// `decision schema [--policy FILE]`.
#[derive(clap::Args)]
struct DecisionSchema {
    #[command(subcommand)]
    what: DecisionWhat,
}

#[derive(Subcommand)]
enum DecisionWhat {
    /// Print the JSON Schema (with --policy: grant and required names limited to its capabilities)
    Schema {
        /// narrow grant and required to the capabilities this policy's tools require
        #[arg(long, value_name = "FILE", value_parser = args::source)]
        policy: Option<args::Source>,
    },
}

/// Runs the command line; the process's exit code.
pub fn main() -> ExitCode {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `jsongate help --help` and `jsongate help check -h` ask for the help they name.
    if argv.get(1).is_some_and(|a| a == "help") {
        let first = argv.drain(..2).collect::<Vec<_>>();
        argv.retain(|a| a != "--help" && a != "-h");
        argv.splice(..0, first);
    }
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => return clap_error(&e, &argv),
    };
    match run(cli.command) {
        Ok(code) => code,
        Err(args::Failure::Usage(msg)) => {
            eprintln!("jsongate: {msg}");
            eprintln!("Try 'jsongate {}--help'.", command_path(&argv));
            ExitCode::from(2)
        }
        Err(args::Failure::Run(msg)) => {
            eprintln!("jsongate: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, args::Failure> {
    use jsongate::action::{DECISION_SCHEMA, PLAN_SCHEMA, POLICY_SCHEMA};
    match command {
        Command::Check(a) => check::run(&a),
        Command::Gate(a) => gate::gate(&a),
        Command::Contract(a) => gate::contract(&a),
        Command::Render(a) => gate::render(&a),
        Command::Screen(a) => gate::screen(&a),
        Command::Decide(a) => decide::decide(&a),
        Command::Approve(a) => decide::approve(&a),
        Command::McpProxy(a) => mcp::proxy(&a),
        Command::McpPin(a) => mcp::mcp_pin(&a),
        Command::Pin(a) => mcp::pin(&a),
        Command::Serve(a) => serve::serve(&a),
        Command::Policy(_) => Ok(schema(POLICY_SCHEMA)),
        Command::Decision(DecisionSchema {
            what: DecisionWhat::Schema { policy: None },
        }) => Ok(schema(DECISION_SCHEMA)),
        Command::Decision(DecisionSchema {
            what: DecisionWhat::Schema { policy: Some(p) },
        }) => {
            let policy = decide::load_policy(&p)?;
            args::println(&policy.decision_schema());
            Ok(ExitCode::SUCCESS)
        }
        Command::Alerts(_) => Ok(schema(jsongate::gate::ALERTS_SCHEMA)),
        Command::Plan(_) => Ok(schema(PLAN_SCHEMA)),
        Command::Completions { shell } => {
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "jsongate", &mut out);
            args::print(&String::from_utf8_lossy(&out));
            Ok(ExitCode::SUCCESS)
        }
        Command::Man { dir } => man(dir.as_deref()),
    }
}

fn schema(text: &str) -> ExitCode {
    args::print(text);
    ExitCode::SUCCESS
}

/// `jsongate man [--dir DIR]`: with `--dir`, one page per command (`jsongate.1`,
/// `jsongate-check.1`, …); without it, the same pages one after another on standard output, so
/// that `jsongate man | man -l -` shows every command's options.
fn man(dir: Option<&std::path::Path>) -> Result<ExitCode, args::Failure> {
    fn pages(cmd: &clap::Command, out: &mut Vec<u8>) -> std::io::Result<()> {
        clap_mangen::Man::new(cmd.clone()).render(out)?;
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            pages(sub, out)?;
        }
        Ok(())
    }
    let cmd = Cli::command();
    match dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .and_then(|()| clap_mangen::generate_to(cmd, dir))
                .map_err(|e| format!("cannot write man pages to '{}': {e}", dir.display()))?;
        }
        None => {
            // As `generate_to` prepares it: built, so that every subcommand carries its full
            // name (`jsongate-contract-diff`), and without clap's `help` subcommand.
            let mut cmd = cmd.disable_help_subcommand(true);
            cmd.build();
            let mut out = Vec::new();
            pages(&cmd, &mut out).map_err(|e| format!("man: {e}"))?;
            args::print(&String::from_utf8_lossy(&out));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The subcommands named on the command line (`contract diff `), for messages.
fn command_path(argv: &[std::ffi::OsString]) -> String {
    let mut cmd = Cli::command();
    let mut path = String::new();
    for a in argv.iter().skip(1) {
        let a = a.to_string_lossy();
        if a.starts_with('-') {
            break;
        }
        let Some(sub) = cmd.find_subcommand(a.as_ref()).cloned() else {
            break;
        };
        path.push_str(sub.get_name());
        path.push(' ');
        cmd = sub;
    }
    path
}

/// Reports a parse failure: help and version on stdout (exit 0), a usage error as
/// `jsongate: MESSAGE`, the usage line and a pointer to `--help` on stderr (exit 2).
fn clap_error(e: &clap::Error, argv: &[std::ffi::OsString]) -> ExitCode {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        args::print(&e.render().to_string());
        return ExitCode::SUCCESS;
    }
    let path = command_path(argv);
    eprintln!("jsongate: {}", usage_message(e, path.trim_end()));
    if let Some(ContextValue::StyledStr(u)) = e.get(ContextKind::Usage) {
        eprintln!("{u}");
    }
    eprintln!("Try 'jsongate {path}--help'.");
    ExitCode::from(2)
}

/// The message of a usage error, in the words the hand-written parser used before clap.
fn usage_message(e: &clap::Error, path: &str) -> String {
    let s = |k| match e.get(k) {
        Some(ContextValue::String(s)) => s.clone(),
        Some(ContextValue::Strings(v)) => v.join(", "),
        Some(ContextValue::StyledStr(s)) => s.to_string(),
        _ => String::new(),
    };
    let list = |k| match e.get(k) {
        Some(ContextValue::Strings(v)) => v.clone(),
        Some(ContextValue::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    };
    // `--max-depth <N>` → `--max-depth`.
    let flag = || {
        let a = s(ContextKind::InvalidArg);
        let a = a.split([' ', '=']).next().unwrap_or_default();
        a.trim_start_matches('<').trim_end_matches('>').to_owned()
    };
    let suggestion = |k| {
        let v = list(k);
        match v.first() {
            Some(x) => format!(" (did you mean '{x}'?)"),
            None => String::new(),
        }
    };
    match e.kind() {
        ErrorKind::UnknownArgument => {
            let arg = s(ContextKind::InvalidArg);
            if arg.starts_with('-') && arg != "-" {
                format!(
                    "unknown option '{arg}'{}",
                    suggestion(ContextKind::SuggestedArg)
                )
            } else if ["gate", "decide", "screen"].contains(&path) {
                "only one input file may be given".into()
            } else {
                format!("unexpected argument '{arg}'")
            }
        }
        ErrorKind::InvalidSubcommand => format!(
            "unknown command '{}'{}",
            s(ContextKind::InvalidSubcommand),
            suggestion(ContextKind::SuggestedSubcommand)
        ),
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            if path.is_empty() =>
        {
            "missing command".into()
        }
        ErrorKind::MissingSubcommand | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let subs = Cli::command()
                .get_subcommands()
                .find(|c| c.get_name() == path.split(' ').next().unwrap_or(""))
                .map(|c| {
                    c.get_subcommands()
                        .map(|s| format!("'{}'", s.get_name()))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default();
            format!("{path} needs {}", or_list(&subs))
        }
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e).map_or_else(
                || format!("'{}' is not valid", s(ContextKind::InvalidValue)),
                ToString::to_string,
            );
            format!("{}: {why}", flag())
        }
        ErrorKind::InvalidValue => {
            let valid = list(ContextKind::ValidValue);
            let value = s(ContextKind::InvalidValue);
            match (value.is_empty(), valid.is_empty()) {
                (true, true) => format!("{} needs a value", flag()),
                (true, false) => format!("{} needs {}", flag(), or_list(&valid)),
                (false, _) => format!("{}: '{value}' is not {}", flag(), or_list(&valid)),
            }
        }
        ErrorKind::MissingRequiredArgument => {
            let missing = list(ContextKind::InvalidArg);
            format!("{path} needs {}", missing.join(" and "))
        }
        ErrorKind::ArgumentConflict => format!(
            "{} cannot be used with {}",
            s(ContextKind::InvalidArg),
            s(ContextKind::PriorArg)
        ),
        _ => {
            // Clap's own wording, first line, without its `error: ` prefix.
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_owned()
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
