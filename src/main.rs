//! The `jsongate` command: argument parsing, I/O and exit codes around the library. The
//! command line itself is in `cli/` (one module per group of subcommands).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
