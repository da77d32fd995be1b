//! `phishbloom completions SHELL` and `phishbloom man [COMMAND]`: the shell completion scripts
//! and the roff manual pages, generated from the same clap definitions that parse the command
//! line, so they cannot drift from it.

use std::io::Write as _;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::CommandFactory as _;

use crate::args::{Cli, CompletionsArgs, ManArgs};

/// The binary's name, as the scripts and pages name it.
const BIN: &str = "phishbloom";

/// Prints the completion script for the shell asked.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut command, BIN, &mut out);
    write_out(&out)
}

/// Prints the manual page of `phishbloom`, or of one of its subcommands (`phishbloom-build(1)`).
pub fn man(args: &ManArgs) -> anyhow::Result<ExitCode> {
    let mut command = Cli::command();
    command.build();
    let page = match &args.command {
        None => command,
        Some(name) => {
            let names: Vec<String> = command
                .get_subcommands()
                .filter(|sub| !sub.is_hide_set() && sub.get_name() != "help")
                .map(|sub| sub.get_name().to_string())
                .collect();
            let sub = command
                .find_subcommand(name)
                .with_context(|| {
                    format!(
                        "no command `{name}`; the commands are: {}",
                        names.join(", ")
                    )
                })?
                .clone();
            // Named as man pages of subcommands are: `phishbloom-build`.
            let page_name = format!("{BIN}-{}", sub.get_name());
            sub.name(page_name)
        }
    };
    let mut out = Vec::new();
    clap_mangen::Man::new(page)
        .render(&mut out)
        .context("render the manual page")?;
    write_out(&out)
}

/// Writes `bytes` to standard output.
fn write_out(bytes: &[u8]) -> anyhow::Result<ExitCode> {
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(bytes)
        .and_then(|()| stdout.flush())
        .context("write to standard output")?;
    Ok(ExitCode::SUCCESS)
}
