//! The processes a section starts and the stand-ins for the hosts the pages name: a static
//! file server for `https://lists.example.org`, servers run in the background, and a
//! `redis-server` started with `--daemonize yes`; each stops when dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A small HTTP/1.1 server of a directory's files (the stand-in for
/// `https://lists.example.org`, where the pages publish with `publish`).
pub(super) struct StaticServer {
    pub(super) address: String,
    stop: Arc<AtomicBool>,
}

impl StaticServer {
    pub(super) fn start(root: &Path) -> StaticServer {
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

/// A process a page started in the background (a server), stopped with SIGTERM when dropped.
pub(super) struct Background {
    pub(super) child: Child,
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

/// A redis-server a page started with `--daemonize yes`: stopped (by its pid file) when dropped.
pub(super) struct Daemon {
    pub(super) pidfile: PathBuf,
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
pub(super) fn line_reader(output: impl Read + Send + 'static) -> Receiver<String> {
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
