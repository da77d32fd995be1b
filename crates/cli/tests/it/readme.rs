//! README.md's console examples, executed: every ```` ```console ```` block is parsed, each
//! `$ COMMAND` runs with `sh -c` against the real `phishbloom` binary, and what it prints
//! (standard output and standard error, interleaved as they were written) must match the
//! lines README shows under it, so a renamed flag, a changed column or a stale number fails.
//!
//! # How README is read
//!
//! - A block's lines starting with `$ ` are commands; a command line ending in `\` continues
//!   on the next line; every other line is expected output of the command above it.
//! - In a command, text after two or more spaces and `# ` (outside quotes) is a comment for
//!   the reader (`… > gone.txt   # sites taken down`) and is not run.
//! - Expected output may use two wildcards, and only for values that differ from run to run
//!   (clock times, durations, random keys, ports), or to elide lines the example is not about:
//!   a line that is `...` alone (white space aside) stands for any number of lines (none
//!   included), and `[..]` inside a line for any text within that line. Everything else is
//!   compared exactly; only white space at the end of a line and blank lines at the end of the
//!   output are ignored.
//! - A command that exits with a status above 1 fails unless README shows an error for it.
//! - An HTML comment `<!-- readme-test: skip (REASON) -->` on the line before a block skips it;
//!   the test prints every skipped block and allows at most [`MAX_SKIPPED`].
//!
//! # Where it runs
//!
//! Each `## ` section of README runs in a fresh temporary directory `T/work` (blocks in README
//! order, sharing files within the section), with `T/shared` a symbolic link to the real
//! `../shared` beside the clone, so `../shared/data/...` resolves as README writes it. The
//! input files README uses without creating them ([`FIXTURES`]) are written first.
//! `SOURCE_DATE_EPOCH` pins the time `build` writes into a list, so checksums, ETags and dates
//! are the same on every run and are compared exactly. Servers README talks to run on free
//! loopback ports: README's addresses are replaced by the real ones in commands, and the real
//! ones by README's in output (see [`Section::prepare`]).
//!
//! Without `../shared/data` the test fails, unless `PHISHBLOOM_README_WITHOUT_DATA=1` says to
//! skip it (loudly).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// At most this many README blocks may be marked skipped: the browser extension's block
/// (it needs Debian's wasm toolchain and a Chromium with a display; `tests/browser.rs` builds
/// the extension and drives it headless instead).
const MAX_SKIPPED: usize = 1;

/// The `SOURCE_DATE_EPOCH` the examples were made with: 2026-11-23 08:02:48 UTC.
const SOURCE_DATE_EPOCH: &str = "1795420968";

/// How long one foreground command may run (the slowest, a build over UT1 data, takes about
/// a second in a debug build).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a background command (a server) may take to print the lines README shows.
const BACKGROUND_TIMEOUT: Duration = Duration::from_secs(30);

/// The environment variable that lets the test pass without `../shared/data`.
const WITHOUT_DATA: &str = "PHISHBLOOM_README_WITHOUT_DATA";

/// What a fixture file holds.
enum Content {
    /// This text.
    Text(&'static str),
    /// This text, gzip-compressed.
    Gzip(&'static str),
}

/// Input files README's commands read but do not create, written into each section's
/// directory. The printed outputs in README (counts, verdicts, offsets) are of these inputs.
const FIXTURES: &[(&str, Content)] = &[
    // The near-duplicate section: a known campaign (two messages), a copy of its bank
    // message sent to someone else with a dozen words changed, and an unrelated mail.
    (
        "campaign.mbox",
        Content::Text(
            r#"From desk@secure-bank.example Mon Nov 23 08:00:00 2026
Message-ID: <kit-bank-0412@secure-bank.example>
From: "Account Security" <desk@secure-bank.example>
To: alice@example.org
Subject: Action required: your online banking access is suspended

Dear Alice,

We have detected unusual sign-in activity on your online banking account from a device we do
not recognise. For your protection, access to online banking, card payments and transfers has
been temporarily suspended until you confirm your identity.

To restore full access, please verify your details within 24 hours using our secure
verification page. You will be asked to confirm your card number, expiry date and the
one-time code we send to your phone. If we do not hear from you within this time, your
account will be closed permanently and any pending payments will be returned to the sender.

Verify your account now: https://secure-bank.example/verify?ref=8f2c41d0

Please do not reply to this message; this mailbox is not monitored. If you have already
completed the verification, you can ignore this notice. Thank you for banking with us and for
helping us keep your money safe.

Kind regards,
Customer Protection Team
Security reference: 0412-7731-AB

From parcel@delivery-notice.example Mon Nov 23 09:00:00 2026
Message-ID: <kit-parcel-1187@delivery-notice.example>
From: "Parcel Service" <parcel@delivery-notice.example>
To: alice@example.org
Subject: Your parcel could not be delivered

Hello,

Our courier attempted to deliver your parcel today but nobody was available to sign for it.
The parcel is now held at our local depot. Because the sender did not pay the full customs
and handling charges, a small fee of 1.99 EUR is due before we can schedule a new delivery.

Please pay the outstanding fee and choose a new delivery date on our tracking page. Parcels
that are not claimed within five working days are returned to the sender and the fee can no
longer be refunded. You will need your tracking number and a valid payment card.

Track and reschedule: https://delivery-notice.example/track?id=DE44817

We apologise for the inconvenience and thank you for your understanding.

Delivery Support
"#,
        ),
    ),
    (
        "suspect.eml",
        Content::Text(
            r#"Message-ID: <x9-22817@mail-secure.example>
From: "Account Security" <alerts@mail-secure.example>
To: robert@example.net
Subject: Action required: your online banking access is suspended

Dear Robert,

We have detected unusual sign-in activity on your online banking account from a device we do
not recognise. For your safety, access to online banking, card payments and transfers has
been temporarily suspended until you confirm your identity.

To restore full access, please verify your details within 48 hours using our secure
verification page. You will be asked to confirm your card number, expiry date and the
one-time code we send to your mobile. If we do not hear from you within this time, your
account will be closed permanently and any pending payments will be returned to the sender.

Verify your account now: https://mail-secure.example/v?t=c77e019a

Please do not reply to this message; this mailbox is not monitored. If you have already
completed the verification, you can ignore this notice. Thank you for banking with us and for
helping us keep your money safe.

Kind regards,
Customer Protection Team
Security reference: 9035-1184-KD
"#,
        ),
    ),
    (
        "newsletter.eml",
        Content::Text(
            r#"Message-ID: <weekly-48@news.example>
From: "Garden Club" <news@news.example>
To: alice@example.org
Subject: This week in the garden club

Hello everyone,

The autumn planting day went well: thirty members came, and the new beds along the south wall
now hold tulips, crocuses and a row of young apple trees. Thanks to everyone who brought tools
and cake. Next Saturday we will prune the roses and clear the leaves from the pond; bring
gloves if you have them. The library has three new books on composting, and the seed swap
moves to the first Sunday of each month. Minutes of the last meeting are on the notice board.

See you in the garden,
Margaret
"#,
        ),
    ),
    // `check … --json > verdicts.jsonl`: any URLs will do (the output is not shown).
    (
        "urls.txt",
        Content::Text(
            "metamascks.com\nhttp://example.com/\nhttps://sig2fa.wixsite.com/sig2faverify\n",
        ),
    ),
    // The exceptions example: a hosting provider listed, one customer's site allowed.
    ("hosting.txt", Content::Text("evil-hosting.com\n")),
    ("customers.txt", Content::Text("docs.evil-hosting.com\n")),
    // A hosts file: 11 lines, 2 comments, 6 localhost lines, 4 names (two on one line).
    (
        "hosts.gz",
        Content::Gzip(
            "# Phishing hosts reported this week\n\
             # 0.0.0.0 blocks, 127.0.0.1 works too\n\
             127.0.0.1 localhost\n\
             127.0.0.1 localhost.localdomain\n\
             255.255.255.255 broadcasthost\n\
             ::1 localhost\n\
             ::1 ip6-localhost\n\
             fe80::1%lo0 localhost\n\
             0.0.0.0 metamask-restore.example\n\
             0.0.0.0 paypal-login-verify.example secure-appleid-check.example\n\
             127.0.0.1 wallet-connect-sync.example\n",
        ),
    ),
    // AdBlock rules: 8 lines, 2 domains blocked, 1 exception, 5 skipped.
    (
        "filters.txt",
        Content::Text(
            "[Adblock Plus 2.0]\n\
             ! Title: phishing filters\n\
             ||evil-hosting.example^\n\
             ||wallet-drainer.example^$third-party\n\
             @@||docs.evil-hosting.example^\n\
             example.com##.ad-banner\n\
             /banner[0-9]+\\.gif/\n\
             ||evil-cdn.example/payload/*.js\n",
        ),
    ),
    // The keyword list README shows with `cat`.
    (
        "spam-keywords.txt",
        Content::Text("free money\nclaim your prize\n免费赚钱\nwire transfer now\nViagra\n"),
    ),
    // The e-mail README shows with `cat`.
    (
        "offer.eml",
        Content::Text(
            "From: \"Prize Desk\" <desk@example.com>\n\
             To: you@example.org\n\
             Subject: =?UTF-8?B?546w5Zyo5YWN6LS56LWa6ZKx5ZWm?=\n\
             MIME-Version: 1.0\n\
             Content-Type: multipart/alternative; boundary=\"b\"\n\
             \n\
             --b\n\
             Content-Type: text/plain; charset=utf-8\n\
             Content-Transfer-Encoding: quoted-printable\n\
             \n\
             Dear friend, you won! Get FREE\n\
             money today: claim=20your prize before Friday.\n\
             --b\n\
             Content-Type: text/html; charset=utf-8\n\
             Content-Transfer-Encoding: base64\n\
             \n\
             PHA+UGxlYXNlIDxiPldJUkU8L2I+IHRyYW5zZmVyIG5vdy48L3A+\n\
             --b--\n",
        ),
    ),
    // NDJSON for `POST /v1/check`: a JSON string and a `{"url": …}` object.
    (
        "urls.ndjson.gz",
        Content::Gzip(
            "\"http://0001-5cf.pages.dev/awards\"\n{\"url\": \"https://example.org/\"}\n",
        ),
    ),
];

/// One `$` command of a block and the output README shows for it.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    /// README line of the `$`.
    line: usize,
    /// The command as README writes it (continuation lines joined, comment removed).
    command: String,
    /// The lines README shows under it.
    expected: Vec<String>,
}

/// One console block.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    /// README line of the opening fence.
    line: usize,
    /// The `## ` heading the block is under.
    section: String,
    /// The reason given by a `readme-test: skip` comment before the block.
    skip: Option<String>,
    /// Its commands, in order.
    steps: Vec<Step>,
}

/// The console blocks of a Markdown text.
fn parse_blocks(text: &str) -> Result<Vec<Block>, String> {
    let mut blocks = Vec::new();
    let mut section = String::from("(top)");
    let mut previous = "";
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    while let Some((number, line)) = lines.next() {
        if let Some(heading) = line.strip_prefix("## ") {
            section = heading.trim().to_string();
        }
        if line.trim_end() != "```console" {
            if !line.trim().is_empty() {
                previous = line;
            }
            continue;
        }
        let skip = previous
            .trim()
            .strip_prefix("<!-- readme-test: skip (")
            .and_then(|rest| rest.strip_suffix(") -->"))
            .map(str::to_string);
        let mut block = Block {
            line: number,
            section: section.clone(),
            skip,
            steps: Vec::new(),
        };
        let mut continued = false;
        loop {
            let Some((number, line)) = lines.next() else {
                return Err(format!(
                    "README.md:{}: console block never closed",
                    block.line
                ));
            };
            if line.trim_end() == "```" {
                break;
            }
            if continued {
                let step = block
                    .steps
                    .last_mut()
                    .expect("a continuation follows a command");
                step.command.push('\n');
                step.command.push_str(strip_comment(line));
                continued = line.ends_with('\\');
            } else if let Some(command) = line.strip_prefix("$ ") {
                block.steps.push(Step {
                    line: number,
                    command: strip_comment(command).to_string(),
                    expected: Vec::new(),
                });
                continued = line.ends_with('\\');
            } else if let Some(step) = block.steps.last_mut() {
                step.expected.push(line.trim_end().to_string());
            } else {
                return Err(format!("README.md:{number}: output before any `$` command"));
            }
        }
        previous = "```";
        blocks.push(block);
    }
    Ok(blocks)
}

/// `line` without a trailing reader's comment: two or more spaces, then `# `, outside quotes.
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut quote = None;
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None if b == b'\'' || b == b'"' => quote = Some(b),
            None if b == b'#'
                && i >= 2
                && bytes[i - 2..i] == *b"  "
                && matches!(bytes.get(i + 1), None | Some(b' ')) =>
            {
                return line[..i].trim_end();
            }
            None => {}
        }
    }
    line.trim_end()
}

/// Whether `line` matches `pattern`, in which each `[..]` stands for any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    // `split` yields at least one part.
    let first = parts.next().expect("split yields a first part");
    let Some(mut rest) = line.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Whether an expected line is the `...` that stands for any number of lines.
fn is_elision(line: &str) -> bool {
    line.trim() == "..."
}

/// One line of a comparison of expected and actual output.
#[derive(Debug, Clone, PartialEq)]
enum Diff {
    /// An actual line its expected line matched.
    Same(String),
    /// An actual line a `...` stands for.
    Elided(String),
    /// An expected line with no actual line for it.
    Missing(String),
    /// An actual line no expected line matched.
    Extra(String),
}

/// The cheapest alignment of `expected` (with `...` and `[..]`) against `actual`: matched lines
/// cost nothing, so the output matches exactly when no line is [`Diff::Missing`] or
/// [`Diff::Extra`].
fn compare(expected: &[String], actual: &[String]) -> Vec<Diff> {
    let (n, m) = (expected.len(), actual.len());
    // cost[i][j]: the fewest unmatched lines aligning expected[i..] with actual[j..].
    let mut cost = vec![vec![0usize; m + 1]; n + 1];
    for i in (0..=n).rev() {
        for j in (0..=m).rev() {
            cost[i][j] = if i == n {
                m - j
            } else if is_elision(&expected[i]) {
                let skip = cost[i + 1][j];
                if j < m {
                    skip.min(cost[i][j + 1])
                } else {
                    skip
                }
            } else {
                let mut best = cost[i + 1][j] + 1;
                if j < m {
                    best = best.min(cost[i][j + 1] + 1);
                    if line_matches(&expected[i], &actual[j]) {
                        best = best.min(cost[i + 1][j + 1]);
                    }
                }
                best
            };
        }
    }
    let mut diff = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i == n {
            diff.push(Diff::Extra(actual[j].clone()));
            j += 1;
        } else if is_elision(&expected[i]) {
            if j < m && cost[i][j] == cost[i][j + 1] {
                diff.push(Diff::Elided(actual[j].clone()));
                j += 1;
            } else {
                i += 1;
            }
        } else if j < m
            && line_matches(&expected[i], &actual[j])
            && cost[i][j] == cost[i + 1][j + 1]
        {
            diff.push(Diff::Same(actual[j].clone()));
            i += 1;
            j += 1;
        } else if cost[i][j] == cost[i + 1][j] + 1 {
            diff.push(Diff::Missing(expected[i].clone()));
            i += 1;
        } else {
            diff.push(Diff::Extra(actual[j].clone()));
            j += 1;
        }
    }
    diff
}

/// Whether `actual` matches `expected`.
fn output_matches(expected: &[String], actual: &[String]) -> bool {
    compare(expected, actual)
        .iter()
        .all(|d| matches!(d, Diff::Same(_) | Diff::Elided(_)))
}

/// A comparison for a failure message: `-` README's line, `+` the actual one, `~` an actual
/// line a `...` stands for (of a long run of them, the first and the last), two spaces for
/// lines that agree.
fn render(diff: &[Diff]) -> String {
    let mut text = String::new();
    let mut at = 0;
    while at < diff.len() {
        let line = match &diff[at] {
            Diff::Same(l) => format!("      {l}\n"),
            Diff::Missing(l) => format!("    - {l}\n"),
            Diff::Extra(l) => format!("    + {l}\n"),
            Diff::Elided(first) => {
                let run = diff[at..]
                    .iter()
                    .take_while(|d| matches!(d, Diff::Elided(_)))
                    .count();
                if run > 3 {
                    let Diff::Elided(last) = &diff[at + run - 1] else {
                        unreachable!("the run holds elided lines only")
                    };
                    text += &format!("    ~ {first}\n    ~ ({} more lines)\n", run - 2);
                    at += run - 1;
                    format!("    ~ {last}\n")
                } else {
                    format!("    ~ {first}\n")
                }
            }
        };
        text += &line;
        at += 1;
    }
    text
}

/// A small HTTP/1.1 server of a directory's files (the stand-in for
/// `https://lists.example.org`, where README publishes with `publish`).
struct StaticServer {
    address: String,
    stop: Arc<AtomicBool>,
}

impl StaticServer {
    fn start(root: &Path) -> StaticServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let address = listener
            .local_addr()
            .expect("a bound socket has an address")
            .to_string();
        listener
            .set_nonblocking(true)
            .expect("a listener can be non-blocking");
        let stop = Arc::new(AtomicBool::new(false));
        let (root, flag) = (root.to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let root = root.clone();
                        std::thread::spawn(move || serve_files(stream, &root));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        StaticServer { address, stop }
    }
}

impl Drop for StaticServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Answers one connection's GET requests with the files under `root` (keep-alive).
fn serve_files(stream: TcpStream, root: &Path) {
    // A stream accepted from a non-blocking listener may inherit the flag.
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    let Ok(clone) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(clone);
    let mut out = stream;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            if header.trim_end().is_empty() {
                break;
            }
        }
        let path = request.split(' ').nth(1).unwrap_or("/");
        let answer = match std::fs::read(root.join(path.trim_start_matches('/'))) {
            Ok(body) if !path.contains("..") => {
                let mut answer =
                    format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len())
                        .into_bytes();
                answer.extend_from_slice(&body);
                answer
            }
            _ => b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec(),
        };
        if out.write_all(&answer).is_err() {
            return;
        }
    }
}

/// A process README started in the background (a server), stopped with SIGTERM when dropped.
struct Background {
    child: Child,
}

impl Drop for Background {
    fn drop(&mut self) {
        stop_pid(self.child.id());
        // The process was signalled; reap it (an error means it is gone already).
        let _ = self.child.wait();
    }
}

/// Sends SIGTERM to `pid` and waits up to 5 s for it to exit, then SIGKILL.
fn stop_pid(pid: u32) {
    let pid = pid as libc::pid_t;
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is one this test started.
    unsafe { libc::kill(pid, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(5);
    // SAFETY: as above; signal 0 only asks whether the process exists.
    while Instant::now() < deadline && unsafe { libc::kill(pid, 0) } == 0 {
        if reaped_or_zombie(pid) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

/// Whether `pid` has exited (a zombie waiting for its parent counts as exited).
fn reaped_or_zombie(pid: libc::pid_t) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z')),
        Err(_) => true,
    }
}

/// A redis-server README started with `--daemonize yes`: stopped (by its pid file) when dropped.
struct Daemon {
    pidfile: PathBuf,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(pid) = std::fs::read_to_string(&self.pidfile)
            .ok()
            .and_then(|p| p.trim().parse::<u32>().ok())
        {
            stop_pid(pid);
        }
    }
}

/// The lines a process writes to its standard output and error, as they come.
fn line_reader(output: impl Read + Send + 'static) -> Receiver<String> {
    let (send, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A failed step, for the final report.
struct Failure {
    line: usize,
    command: String,
    problem: String,
}

/// One README section's run: its directory, the stand-ins for README's hosts and ports, and
/// the processes it started.
///
/// Fields drop in order: the servers stop before their directory is removed (a daemon's pid
/// file is in it).
struct Section {
    /// Servers README started in this section (background processes and daemons).
    background: Vec<Background>,
    daemons: Vec<Daemon>,
    /// Serves `work/` for `https://lists.example.org`.
    files: Option<StaticServer>,
    /// Holds `work/` and `shared`; removed when the section ends.
    dir: tempfile::TempDir,
    /// The working directory of every command.
    work: PathBuf,
    /// `(README's text, the text used here)`: replaced in commands, and back in their output.
    stand_ins: Vec<(String, String)>,
    /// The last command's exit status (`echo $?` in README reads it).
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
        for (name, content) in FIXTURES {
            let bytes = match content {
                Content::Text(text) => text.as_bytes().to_vec(),
                Content::Gzip(text) => {
                    let mut gz =
                        flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                    gz.write_all(text.as_bytes()).expect("gzip into memory");
                    gz.finish().expect("gzip into memory")
                }
            };
            std::fs::write(work.join(name), bytes).expect("write a fixture");
        }
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

    /// README's command as it runs here: README's hosts and ports replaced by the stand-ins,
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

    /// `output` with the stand-ins' text replaced by README's, the longest first (a port
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
                        "printed {} of the {count} lines README shows within {:?}:\n{}",
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

    /// After `serve` printed its addresses, README's addresses stand for them.
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

    /// Waits until the redis-server README started answers (`--daemonize yes` returns before).
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
                "output differs (- README, + actual, ~ under a `...`):\n{}",
                render(&compare(&step.expected, &actual))
            );
        }
        let shows_error = step
            .expected
            .iter()
            .any(|l| l.contains("error") || l.starts_with("NOAUTH"));
        if status > 1 && !shows_error {
            problems += &format!("exit status {status}, and README shows no error\n");
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems)
        }
    }
}

/// README.md, its console blocks run section by section.
#[test]
fn readme_console_examples_print_what_readme_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let shared = root.join("../shared");
    if !shared.join("data/dataset.csv").is_file() || !shared.join("data/ut1").is_dir() {
        let message = format!(
            "README's examples read {}/data (dataset.csv and ut1/), which is missing; put the \
             data beside the clone, or set {WITHOUT_DATA}=1 to skip this test",
            shared.display()
        );
        if std::env::var_os(WITHOUT_DATA).is_some_and(|v| v == "1") {
            eprintln!("\n=== SKIPPED the README examples: {message} ===\n");
            return;
        }
        panic!("{message}");
    }
    for tool in ["redis-server", "redis-cli", "curl"] {
        assert!(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths)
                .any(|dir| dir.join(tool).is_file()),
            "README's examples run `{tool}`, which is not installed \
             (apt-get install -y redis-server redis-tools curl; .ci/run does)"
        );
    }
    let shared = shared
        .canonicalize()
        .expect("the shared directory resolves");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let blocks = parse_blocks(&readme).unwrap_or_else(|e| panic!("{e}"));

    let started = Instant::now();
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut steps = 0;
    let mut sections: BTreeMap<usize, (String, Vec<&Block>)> = BTreeMap::new();
    for (index, block) in blocks.iter().enumerate() {
        let first = blocks[..index]
            .iter()
            .position(|b| b.section == block.section)
            .unwrap_or(index);
        sections
            .entry(first)
            .or_insert_with(|| (block.section.clone(), Vec::new()))
            .1
            .push(block);
    }
    for (name, blocks) in sections.values() {
        let mut section = Section::new(&shared);
        for block in blocks {
            if let Some(reason) = &block.skip {
                skipped.push(format!("README.md:{} ({name}): {reason}", block.line));
                continue;
            }
            for step in &block.steps {
                steps += 1;
                if let Err(problem) = section.step(step) {
                    failures.push(Failure {
                        line: step.line,
                        command: step.command.clone(),
                        problem,
                    });
                }
            }
            // `echo $?` reads the status of the command above it in the same block only.
            section.status = 0;
        }
    }

    eprintln!(
        "README examples: {} blocks, {steps} commands run in {:.1} s; {} failed; {} blocks skipped",
        blocks.len() - skipped.len(),
        started.elapsed().as_secs_f64(),
        failures.len(),
        skipped.len(),
    );
    for skip in &skipped {
        eprintln!("=== SKIPPED README block {skip}");
    }
    assert!(
        skipped.len() <= MAX_SKIPPED,
        "{} README blocks are marked skipped, at most {MAX_SKIPPED} may be:\n{}",
        skipped.len(),
        skipped.join("\n")
    );
    assert!(
        steps >= 50,
        "only {steps} README commands were found: is the parser still reading README?"
    );
    for (name, _) in FIXTURES {
        assert!(
            readme.contains(name),
            "the fixture {name} is not used by README any more: remove it"
        );
    }
    if !failures.is_empty() {
        let report: String = failures
            .iter()
            .map(|f| {
                format!(
                    "README.md:{}: $ {}\n  {}\n",
                    f.line,
                    f.command,
                    f.problem.trim_end().replace('\n', "\n  ")
                )
            })
            .collect();
        panic!(
            "{} README commands do not do what README shows:\n\n{report}",
            failures.len()
        );
    }
}

fn strings(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| l.to_string()).collect()
}

#[test]
fn matcher_compares_exactly_without_wildcards() {
    let expected = strings(&["n = 10,317 entries", "done"]);
    assert!(output_matches(
        &expected,
        &strings(&["n = 10,317 entries", "done"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,316 entries", "done"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,317 entries"])
    ));
    assert!(!output_matches(
        &expected,
        &strings(&["n = 10,317 entries", "done", "more"])
    ));
    assert!(!output_matches(&strings(&[]), &strings(&["anything"])));
    assert!(output_matches(&strings(&[]), &strings(&[])));
}

#[test]
fn matcher_in_line_wildcard_matches_any_text_within_the_line() {
    assert!(line_matches("built in [..] s; ok", "built in 0.03 s; ok"));
    assert!(line_matches("built in [..] s; ok", "built in  s; ok"));
    assert!(line_matches("[..]", ""));
    assert!(line_matches("a[..]b[..]c", "a-x-b-y-c"));
    assert!(line_matches("a[..]", "abc"));
    assert!(line_matches("[..]c", "abc"));
    assert!(!line_matches("built in [..] s; ok", "built in 0.03 s; ok!"));
    assert!(!line_matches("built in [..] s; ok", "made in 0.03 s; ok"));
    // The text around a wildcard is still exact.
    assert!(!line_matches(
        "key [..], 18,407 entries",
        "key 9f1c, 18,408 entries"
    ));
    // The last part may not overlap what an earlier part matched.
    assert!(!line_matches("ab[..]ba", "aba"));
    // No wildcard: the whole line.
    assert!(!line_matches("abc", "abcd"));
}

#[test]
fn matcher_ellipsis_line_matches_any_number_of_lines() {
    let expected = strings(&["head", "...", "tail"]);
    assert!(output_matches(&expected, &strings(&["head", "tail"])));
    assert!(output_matches(
        &expected,
        &strings(&["head", "x", "y", "tail"])
    ));
    assert!(!output_matches(&expected, &strings(&["head", "x"])));
    assert!(!output_matches(&expected, &strings(&["x", "head", "tail"])));
    assert!(output_matches(&strings(&["..."]), &strings(&[])));
    assert!(output_matches(
        &strings(&["a", "  ..."]),
        &strings(&["a", "  b"])
    ));
    assert!(output_matches(
        &strings(&["a", "..."]),
        &strings(&["a", "b", "c"])
    ));
    assert!(!output_matches(
        &strings(&["a", "..."]),
        &strings(&["b", "c"])
    ));
    // A `...` inside a line is literal text.
    assert!(!output_matches(
        &strings(&["a ... b"]),
        &strings(&["a x b"])
    ));
}

#[test]
fn matcher_diff_shows_the_changed_line() {
    let expected = strings(&["read x", "...", "n = 33,311 rows", "done in [..] s"]);
    let actual = strings(&["read x", "skipped", "n = 33,298 rows", "done in 0.1 s"]);
    assert_eq!(
        compare(&expected, &actual),
        vec![
            Diff::Same("read x".into()),
            Diff::Elided("skipped".into()),
            Diff::Elided("n = 33,298 rows".into()),
            Diff::Missing("n = 33,311 rows".into()),
            Diff::Same("done in 0.1 s".into()),
        ]
    );
}

#[test]
fn matcher_diff_shortens_long_runs_under_an_ellipsis() {
    let expected = strings(&["...", "end"]);
    let actual = strings(&["1", "2", "3", "4", "5", "end!"]);
    assert_eq!(
        render(&compare(&expected, &actual)),
        "    ~ 1\n    ~ (4 more lines)\n    ~ end!\n    - end\n"
    );
}

#[test]
fn parser_reads_commands_continuations_comments_and_skips() {
    let text =
        "## One\n\n```console\n$ a --x   # a note\nout 1\n$ b \\\n    -d 'x  # y'\n...\n```\n\n\
                ## Two\n<!-- readme-test: skip (needs a display) -->\n```console\n$ c\n```\n\
                ```sh\n$ not console\n```\n";
    let blocks = parse_blocks(text).expect("parses");
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0].section, "One");
    assert_eq!(blocks[0].skip, None);
    assert_eq!(
        blocks[0].steps,
        vec![
            Step {
                line: 4,
                command: "a --x".into(),
                expected: strings(&["out 1"]),
            },
            Step {
                line: 6,
                command: "b \\\n    -d 'x  # y'".into(),
                expected: strings(&["..."]),
            },
        ]
    );
    assert_eq!(blocks[1].section, "Two");
    assert_eq!(blocks[1].skip.as_deref(), Some("needs a display"));
    assert!(parse_blocks("```console\noutput first\n```\n").is_err());
    assert!(parse_blocks("```console\n$ never closed\n").is_err());
}
