//! One `## ` section's run: a fresh directory with the fixtures, the stand-ins for the pages'
//! hosts and ports, and each step run and compared with what the page shows.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::fixtures::write_fixtures;
use super::markdown::{Block, Step};
use super::matcher::{compare, is_elision, output_matches, render};
use super::servers::{line_reader, Background, Daemon, StaticServer};

/// The `SOURCE_DATE_EPOCH` the examples were made with: 2026-11-23 08:02:48 UTC.
const SOURCE_DATE_EPOCH: &str = "1795420968";

/// How long one foreground command may run (the slowest, a build over UT1 data, takes about
/// a second in a debug build).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a background command (a server) may take to print the lines its page shows.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(30);

/// A failed step: where it is, and what went wrong.
pub(super) struct Failure {
    /// The page's path from the repository root.
    pub(super) page: String,
    /// The `## ` heading of its section.
    pub(super) section: String,
    /// The page's line of the `$`.
    pub(super) line: usize,
    /// The command as the page writes it.
    pub(super) command: String,
    /// What differs.
    pub(super) problem: String,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{} (section \"{}\"): $ {}\n  {}",
            self.page,
            self.line,
            self.section,
            self.command,
            self.problem.trim_end().replace('\n', "\n  ")
        )
    }
}

/// What running one section's blocks came to.
#[derive(Default)]
pub(super) struct Outcome {
    /// Commands run.
    pub(super) steps: usize,
    /// The steps that did not do what the page shows.
    pub(super) failures: Vec<Failure>,
    /// The blocks marked skipped: `PAGE:LINE (SECTION): REASON`.
    pub(super) skipped: Vec<String>,
}

/// Runs `blocks`, the console blocks of one `## ` section of `page`, in a fresh directory in
/// which `../shared` is `shared`.
pub(super) fn run_section(shared: &Path, page: &str, blocks: &[&Block]) -> Outcome {
    let mut outcome = Outcome::default();
    let mut section = Section::new(shared);
    for block in blocks {
        if let Some(reason) = &block.skip {
            outcome.skipped.push(format!(
                "{page}:{} ({}): {reason}",
                block.line, block.section
            ));
            continue;
        }
        for step in &block.steps {
            outcome.steps += 1;
            if let Err(problem) = section.step(step) {
                outcome.failures.push(Failure {
                    page: page.to_string(),
                    section: block.section.clone(),
                    line: step.line,
                    command: step.command.clone(),
                    problem,
                });
            }
        }
        // `echo $?` reads the status of the command above it in the same block only.
        section.status = 0;
    }
    outcome
}

/// One section's run: its directory, the stand-ins for the page's hosts and ports, and the
/// processes it started.
///
/// Fields drop in order: the servers stop before their directory is removed (a daemon's pid
/// file is in it).
struct Section {
    /// Servers the page started in this section (background processes and daemons).
    background: Vec<Background>,
    daemons: Vec<Daemon>,
    /// Serves `work/` for `https://lists.example.org`.
    files: Option<StaticServer>,
    /// Holds `work/` and `shared`; removed when the section ends.
    dir: tempfile::TempDir,
    /// The working directory of every command.
    work: PathBuf,
    /// `(the page's text, the text used here)`: replaced in commands, and back in their output.
    stand_ins: Vec<(String, String)>,
    /// The last command's exit status (`echo $?` on a page reads it).
    status: i32,
}

impl Section {
    fn new(shared: &Path) -> Section {
        let dir = tempfile::Builder::new()
            .prefix("phishbloom-readme-")
            .tempdir()
            .expect("create a temporary directory");
        let work = dir.path().join("work");
        std::fs::create_dir(&work).expect("create work/");
        std::os::unix::fs::symlink(shared, dir.path().join("shared")).expect("link shared");
        write_fixtures(&work);
        // `sync … /var/lib/phishbloom/phish.bloom`: a directory of the section's own.
        let var = dir.path().join("var/lib/phishbloom/");
        std::fs::create_dir_all(&var).expect("create var/lib/phishbloom");
        let stand_ins = vec![(
            "/var/lib/phishbloom/".to_string(),
            var.to_string_lossy().into_owned(),
        )];
        Section {
            dir,
            work,
            stand_ins,
            status: 0,
            background: Vec::new(),
            daemons: Vec::new(),
            files: None,
        }
    }

    /// `sh -c SCRIPT` in the work directory, with the binary under test first on `PATH`.
    fn shell(&self, script: &str) -> Command {
        let bin = Path::new(env!("CARGO_BIN_EXE_phishbloom"))
            .parent()
            .expect("the binary is in a directory");
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut paths = vec![bin.to_path_buf()];
        paths.extend(std::env::split_paths(&path));
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(script)
            .current_dir(&self.work)
            .env("PATH", std::env::join_paths(paths).expect("PATH joins"))
            .env("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH)
            .env("NO_COLOR", "1")
            .env_remove("RUST_LOG")
            .env_remove("PHISHBLOOM_REDIS_PASSWORD")
            .env_remove("REDISCLI_AUTH")
            .stdin(Stdio::null());
        command
    }

    /// The page's command as it runs here: the page's hosts and ports replaced by the stand-ins,
    /// which are started on first use — `redis-server` gets a free port, a pid file and this
    /// section's directory; `https://lists.example.org` is a [`StaticServer`] of `work/`;
    /// `phishbloom serve` listens on ports the system picks (learnt from what it prints).
    fn prepare(&mut self, command: &str) -> String {
        if command.contains("https://lists.example.org") && self.files.is_none() {
            let files = StaticServer::start(&self.work);
            self.stand_ins.push((
                "https://lists.example.org".into(),
                format!("http://{}", files.address),
            ));
            self.files = Some(files);
        }
        let mut command = command.to_string();
        if command.starts_with("redis-server ") {
            let port = phishbloom_testing::redis_server::free_port(false);
            let pidfile = self.dir.path().join("redis.pid");
            command += &format!(
                " --port {port} --bind 127.0.0.1 --dir {dir} --pidfile {pidfile} \
                 --logfile {dir}/redis.log",
                dir = self.dir.path().display(),
                pidfile = pidfile.display()
            );
            self.daemons.push(Daemon { pidfile });
            self.stand_ins
                .push(("127.0.0.1:6379".into(), format!("127.0.0.1:{port}")));
        }
        if command.starts_with("phishbloom serve ") {
            for flag in ["--http", "--resp"] {
                let mut words: Vec<String> = command.split(' ').map(str::to_string).collect();
                if let Some(at) = words.iter().position(|w| w == flag) {
                    if let Some(address) = words.get_mut(at + 1) {
                        *address = "127.0.0.1:0".into();
                    }
                }
                command = words.join(" ");
            }
        }
        for (readme, here) in &self.stand_ins {
            command = command.replace(readme, here);
        }
        command
    }

    /// `output` with the stand-ins' text replaced by the page's, the longest first (a port
    /// `127.0.0.1:3456` must not replace the start of `127.0.0.1:34567`).
    fn restore(&self, output: &str) -> String {
        let mut stand_ins: Vec<&(String, String)> = self.stand_ins.iter().collect();
        stand_ins.sort_by_key(|(_, here)| std::cmp::Reverse(here.len()));
        let mut output = output.to_string();
        for (readme, here) in stand_ins {
            output = output.replace(here, readme);
        }
        output
    }

    /// Runs a command to its end; returns what it printed and its exit status.
    fn run(&mut self, script: &str) -> Result<(Vec<String>, i32), String> {
        let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
        let mut child = {
            let mut command = self.shell(&format!("(exit {}); {script}", self.status));
            let stderr = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
            command.stdout(writer).stderr(stderr);
            command.spawn().map_err(|e| format!("cannot run sh: {e}"))?
            // `command`, holding our ends of the pipe's writer, is dropped here.
        };
        let lines = line_reader(reader);
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("still running after {COMMAND_TIMEOUT:?}; killed"));
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        let mut output = Vec::new();
        // The pipe closes when the command and everything it started are done with it (a
        // daemon closes its standard streams).
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => output.push(line),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err("exited, but something it started holds its output open".into())
                }
            }
        }
        let code = status.code().unwrap_or(128);
        self.status = code;
        Ok((output, code))
    }

    /// Starts a command that keeps running (a server) and returns the first `count` lines it
    /// prints; it runs until the section ends.
    fn start(&mut self, script: &str, count: usize) -> Result<Vec<String>, String> {
        let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
        let child = {
            let mut command = self.shell(&format!("exec {script}"));
            let stderr = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
            command.stdout(writer).stderr(stderr);
            command.spawn().map_err(|e| format!("cannot run sh: {e}"))?
        };
        self.background.push(Background { child });
        let lines = line_reader(reader);
        let deadline = Instant::now() + BACKGROUND_TIMEOUT;
        let mut output = Vec::new();
        while output.len() < count {
            match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) => output.push(line),
                Err(_) => {
                    return Err(format!(
                        "printed {} of the {count} lines the page shows within {:?}:\n{}",
                        output.len(),
                        BACKGROUND_TIMEOUT,
                        output.join("\n")
                    ))
                }
            }
        }
        // Later lines (logs) are read and dropped by the reader thread, so the server never
        // blocks on a full pipe.
        std::thread::spawn(move || lines.into_iter().for_each(drop));
        Ok(output)
    }

    /// After `serve` printed its addresses, the page's addresses stand for them.
    fn learn_serve_addresses(&mut self, readme_command: &str, printed: &[String]) {
        let words: Vec<&str> = readme_command.split(' ').collect();
        let readme_address = |flag: &str| {
            let at = words.iter().position(|w| *w == flag)?;
            words.get(at + 1).map(|a| a.to_string())
        };
        for line in printed {
            let (scheme, flag) = match line.split_once(' ') {
                Some(("http", _)) => ("http://", "--http"),
                Some(("resp", _)) => ("redis://", "--resp"),
                _ => continue,
            };
            let (Some(readme), Some(here)) = (
                readme_address(flag),
                line.split_once(scheme).map(|(_, a)| a.to_string()),
            ) else {
                continue;
            };
            if flag == "--resp" {
                // `redis-cli -p PORT`.
                let port = |a: &str| a.rsplit(':').next().unwrap_or("").to_string();
                self.stand_ins.push((
                    format!("-p {}", port(&readme)),
                    format!("-p {}", port(&here)),
                ));
            }
            self.stand_ins.push((readme, here));
        }
    }

    /// Waits until the redis-server the page started answers (`--daemonize yes` returns before).
    fn wait_for_redis(&self) -> Result<(), String> {
        let Some(port) = self
            .stand_ins
            .iter()
            .find(|(readme, _)| readme == "127.0.0.1:6379")
            .map(|(_, here)| here.clone())
        else {
            return Ok(());
        };
        let deadline = Instant::now() + BACKGROUND_TIMEOUT;
        while Instant::now() < deadline {
            if let Ok(mut stream) = TcpStream::connect(&port) {
                let mut reply = [0u8; 7];
                if stream.write_all(b"PING\r\n").is_ok()
                    && stream.read_exact(&mut reply).is_ok()
                    && &reply == b"+PONG\r\n"
                {
                    return Ok(());
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err("redis-server did not answer PING".into())
    }

    /// Runs one step and says what is wrong with it, if anything.
    fn step(&mut self, step: &Step) -> Result<(), String> {
        let script = self.prepare(&step.command);
        let background =
            step.command.starts_with("phishbloom serve ") || step.command.contains(" --every ");
        let (printed, status) = if background {
            if step.expected.iter().any(|l| is_elision(l)) {
                return Err("a server's output must be shown whole (no `...`)".into());
            }
            let printed = self.start(&script, step.expected.len())?;
            if step.command.starts_with("phishbloom serve ") {
                self.learn_serve_addresses(&step.command, &printed);
            }
            (printed, 0)
        } else {
            let (printed, status) = self.run(&script)?;
            if step.command.starts_with("redis-server ") {
                self.wait_for_redis()?;
            }
            (printed, status)
        };
        let mut actual: Vec<String> = printed
            .iter()
            .map(|l| self.restore(l).trim_end().to_string())
            .collect();
        while actual.last().is_some_and(|l| l.is_empty()) {
            actual.pop();
        }
        let mut problems = String::new();
        if !output_matches(&step.expected, &actual) {
            problems += &format!(
                "output differs (- the page, + actual, ~ under a `...`):\n{}",
                render(&compare(&step.expected, &actual))
            );
        }
        let shows_error = step
            .expected
            .iter()
            .any(|l| l.contains("error") || l.starts_with("NOAUTH"));
        if status > 1 && !shows_error {
            problems += &format!("exit status {status}, and the page shows no error\n");
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}
