//! The `phishbloom` binary: parses the command line, delegates to the library crates, and maps
//! errors to exit codes (0 success / listed, 1 nothing listed, 2 error).

mod args;
mod commands;
mod hints;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A server writes to sockets whose clients may leave at any moment: for it a closed
    // connection must be that connection's error (EPIPE), not a signal that ends the process
    // and every other client's connection with it. Every other command is a filter.
    if !matches!(cli.command, Command::Serve(_) | Command::Dns(_)) {
        restore_default_sigpipe();
    }
    let result = match cli.command {
        Command::Plan(args) => commands::plan::run(&args),
        Command::Build(args) => commands::build::run(&args),
        Command::Check(args) => commands::check::run(&args),
        Command::Scan(args) => commands::scan::run(&args),
        Command::Eval(args) => commands::eval::run(&args),
        Command::Info(args) => commands::info::run(&args),
        Command::Demo(args) => commands::demo::run(&args),
        Command::Add(args) => commands::edit::add(&args),
        Command::Remove(args) => commands::edit::remove(&args),
        Command::Merge(args) => commands::edit::merge(&args),
        Command::Diff(args) => commands::edit::diff(&args),
        Command::Apply(args) => commands::edit::apply(&args),
        Command::Publish(args) => commands::publish::publish(&args),
        Command::Sync(args) => commands::publish::sync(&args),
        Command::Keygen(args) => commands::publish::keygen(&args),
        Command::Canon(args) => commands::canon::run(&args),
        Command::Redis(command) => commands::redis::run(&command),
        Command::Serve(args) => commands::serve::run(&args),
        Command::SquidHelper(args) => commands::squid_helper::run(&args),
        Command::Dns(args) => commands::dns::run(&args),
        Command::Completions(args) => commands::completions::completions(&args),
        Command::Man(args) => commands::completions::man(&args),
    };
    match result {
        Ok(code) => code,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            // One line per error (scripts read it); the flags that fix it close the line.
            match hints::for_error(&error) {
                Some(hint) => eprintln!("phishbloom: error: {error:#} ({hint})"),
                None => eprintln!("phishbloom: error: {error:#}"),
            }
            ExitCode::from(2)
        }
    }
}

/// Makes a closed output pipe (`phishbloom plan … | head`) end the process quietly, as it does
/// for every Unix filter, instead of surfacing as a failed `println!` (a panic). Rust programs
/// start with SIGPIPE ignored; this puts back the default action. Not for `serve` (see `main`).
fn restore_default_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called in `main` right after the arguments are parsed, before any thread exists;
    // `signal` with SIG_DFL only changes this process's disposition for SIGPIPE and has no
    // memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Whether the error is a closed output pipe (`phishbloom check f | head`): not worth a message.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<phishbloom_blocklist::Error>()
                .is_some_and(phishbloom_blocklist::Error::is_broken_pipe)
    })
}
