//! The `jsongate` command: argument parsing, I/O and exit codes around the library. The
//! command line itself is in `cli/` (one module per group of subcommands).

mod cli;
// The library's file-creation module (private mode, no symbolic links), compiled again here
// because the binary cannot reach the library's private items; each side uses only some of it.
#[allow(dead_code)]
mod fsx;

fn main() -> std::process::ExitCode {
    cli::main()
}
