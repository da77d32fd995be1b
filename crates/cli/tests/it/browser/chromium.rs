//! A headless Chromium with the extension loaded, following a list on `phishbloom serve`:
//! listed pages end on the warning page (also behind a server redirect, and a prerendered page
//! once shown), clean and allowed ones load, a web page can neither frame the warning page nor
//! continue from it while "continue anyway" in its own tab loads the page, and an entry added
//! on the server after start is warned within the update interval.

use super::*;

/// Child processes killed (with their process groups: Chromium's helpers too) when dropped.
pub(super) struct Processes(pub(super) Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            // SAFETY: kill(2) on the process group of our own child; no memory is involved.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Whether the origin was asked for the prerendered page (the speculation check is only
/// meaningful when the browser did prerender).
static PRERENDERED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A tiny web origin on a free loopback port: every path answers a page titled
/// `origin page`, except `/redirect` (a 302 to `http://evil1.example/from-redirect`),
/// `/frame` (frames `evil1.example/in-frame` and `docs.evil1.example/in-frame`; its title counts
/// what loaded in them) and `/embed?URL` (frames URL and `docs.evil1.example/in-frame-control`);
/// the page at `/speculate` also asks for a prefetch and a prerender of `/login/…` on its own
/// host, and `/speculate-activate` prerenders `/login/prerendered-then-shown` then goes there.
fn start_origin() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut reader = BufReader::new(&stream);
                let mut first = String::new();
                if reader.read_line(&mut first).is_err() {
                    return;
                }
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                    line.clear();
                }
                let path = first.split(' ').nth(1).unwrap_or("/");
                if path.starts_with("/login/prerendered") {
                    PRERENDERED.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                let answer = if path.starts_with("/speculate-activate") {
                    // Prerenders a listed URL of its own site, then goes there (activating the
                    // prerendered page: no request, no new navigation).
                    let body = "<!doctype html><title>origin page</title>\
                        <script type=\"speculationrules\">{\"prerender\": [{\"source\": \
                        \"list\", \"urls\": [\"/login/prerendered-then-shown\"]}]}</script>\
                        <script>setTimeout(() => { location.href = \
                        \"/login/prerendered-then-shown\"; }, 1500);</script>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else if let Some(framed) = path.strip_prefix("/embed?") {
                    // Frames the URL after `?` (the extension's warning page) and, as a
                    // control, a cross-site page (an out-of-process frame DevTools lists).
                    let body = format!(
                        "<!doctype html><title>embedding page</title>\
                         <iframe src=\"{framed}\"></iframe>\
                         <iframe src=\"http://docs.evil1.example/in-frame-control\"></iframe>"
                    );
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else if path.starts_with("/speculate") {
                    // A page that asks for a prefetch and a prerender of a listed URL of its
                    // own site (phish3.example/login is listed, phish3.example is not).
                    let body = "<!doctype html><title>origin page</title>\
                        <link rel=\"prefetch\" href=\"/login/prefetched\">\
                        <script type=\"speculationrules\">{\"prerender\": [{\"source\": \
                        \"list\", \"urls\": [\"/login/prerendered\"]}], \"prefetch\": [{\
                        \"source\": \"list\", \"urls\": [\"/login/speculated\"]}]}</script>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else if path.starts_with("/frame") {
                    // Its title counts the frames inside each of its two frames (a number a
                    // cross-origin parent may read): 1 where the origin's page loaded, 0 in
                    // a blocked frame's error page.
                    let body = "<!doctype html><title>frames</title>\
                        <iframe src=\"http://evil1.example/in-frame\"></iframe>\
                        <iframe src=\"http://docs.evil1.example/in-frame\"></iframe>\
                        <script>setInterval(() => { document.title = \
                        `frames ${frames[0].length},${frames[1].length}`; }, 100);</script>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else if path.starts_with("/redirect") {
                    "HTTP/1.1 302 Found\r\nLocation: http://evil1.example/from-redirect\r\n\
                     Content-Length: 0\r\nConnection: close\r\n\r\n"
                        .to_owned()
                } else if path.starts_with("/in-frame") {
                    let body = "<!doctype html><title>origin page</title>\
                        <iframe src=\"about:blank\"></iframe>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                } else {
                    let body = "<!doctype html><title>origin page</title><p>hello</p>";
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\
                         Connection: close\r\n\r\n{body}",
                        body.len()
                    )
                };
                let _ = (&stream).write_all(answer.as_bytes());
            });
        }
    });
    port
}

/// Copies the built extension to `to`, with `config` as its config.json.
pub(super) fn install_extension(from: &Path, to: &Path, config: &Value) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    std::fs::write(to.join("config.json"), config.to_string()).unwrap();
}

/// A headless Chromium observed through its DevTools HTTP endpoints.
pub(super) struct Browser {
    devtools: String,
    http: reqwest::blocking::Client,
}

impl Browser {
    /// The targets (`/json/list`).
    fn targets(&self) -> Vec<Value> {
        self.http
            .get(format!("{}/json/list", self.devtools))
            .send()
            .and_then(|r| r.json())
            .unwrap_or_default()
    }

    /// Opens a tab on `url`; its target id.
    pub(super) fn open(&self, url: &str) -> String {
        let target: Value = self
            .http
            .put(format!("{}/json/new?{url}", self.devtools))
            .send()
            .unwrap()
            .json()
            .unwrap();
        target["id"].as_str().unwrap().to_owned()
    }

    /// The URL and title of the tab `id` now.
    fn tab(&self, id: &str) -> Option<(String, String)> {
        self.targets().into_iter().find(|t| t["id"] == id).map(|t| {
            (
                t["url"].as_str().unwrap_or("").to_owned(),
                t["title"].as_str().unwrap_or("").to_owned(),
            )
        })
    }

    /// Polls tab `id` until `done(url, title)` or `timeout`; the last URL and title.
    fn wait_tab(
        &self,
        id: &str,
        timeout: Duration,
        done: impl Fn(&str, &str) -> bool,
    ) -> (bool, String, String) {
        let deadline = Instant::now() + timeout;
        loop {
            let (url, title) = self.tab(id).unwrap_or_default();
            if done(&url, &title) {
                return (true, url, title);
            }
            if Instant::now() > deadline {
                return (false, url, title);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Evaluates `expression` in the page of tab `id` as a user's action would (through the
    /// DevTools protocol over its WebSocket, with a Rust client: Debian's node 18 has none);
    /// the protocol's answer.
    pub(super) fn evaluate(&self, id: &str, expression: &str) -> String {
        let target = self.targets().into_iter().find(|t| t["id"] == id);
        let socket = target
            .as_ref()
            .and_then(|t| t["webSocketDebuggerUrl"].as_str())
            .unwrap_or_else(|| panic!("no DevTools socket for tab {id}: {target:?}"))
            .to_owned();
        let (mut ws, _) = tungstenite::connect(socket.as_str())
            .unwrap_or_else(|e| panic!("DevTools socket of tab {id}: {e}"));
        if let tungstenite::stream::MaybeTlsStream::Plain(stream) = ws.get_ref() {
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
        }
        let request = serde_json::json!({
            "id": 1,
            "method": "Runtime.evaluate",
            // A promise is awaited: its value is the result.
            "params": { "expression": expression, "userGesture": true, "awaitPromise": true },
        });
        ws.send(tungstenite::Message::text(request.to_string()))
            .unwrap();
        loop {
            let message = ws
                .read()
                .unwrap_or_else(|e| panic!("evaluating {expression:?} in tab {id}: {e}"));
            let Ok(text) = message.to_text() else {
                continue;
            };
            let Ok(answer) = serde_json::from_str::<Value>(text) else {
                continue;
            };
            if answer["id"] == 1 {
                let _ = ws.close(None);
                let result = if answer["result"].is_null() {
                    &answer["error"]
                } else {
                    &answer["result"]
                };
                return result.to_string();
            }
        }
    }

    /// Closes the tab `id`.
    fn close(&self, id: &str) {
        let _ = self
            .http
            .get(format!("{}/json/close/{id}", self.devtools))
            .send();
    }
}

/// Opens a new tab on `url` (with `?attempt=N`) every 400 ms until one ends on the warning
/// page; how many tabs that took, or `None` after `timeout`.
fn warn_eventually(
    browser: &Browser,
    url: &str,
    timeout: Duration,
    warned: &dyn Fn(&str, &str) -> bool,
) -> Option<usize> {
    let started = Instant::now();
    for attempt in 1.. {
        let tab = browser.open(&format!("{url}?attempt={attempt}"));
        if browser.wait_tab(&tab, Duration::from_millis(400), warned).0 {
            return Some(attempt);
        }
        browser.close(&tab);
        if started.elapsed() > timeout {
            return None;
        }
    }
    None
}

/// The extension's console lines Chromium logged to `dir/chromium.log`.
pub(super) fn console_lines(dir: &Path) -> String {
    let log = std::fs::read_to_string(dir.join("chromium.log")).unwrap_or_default();
    let console: Vec<&str> = log.lines().filter(|l| l.contains("CONSOLE")).collect();
    console.join("\n")
}

/// Starts a headless Chromium on `profile` with `extension` loaded and `rules` as its host
/// resolver rules (its log appended to `dir/chromium.log`); waits for its DevTools port and the
/// extension's service worker. The process (its own process group), the browser and the
/// extension's id.
pub(super) fn launch(
    dir: &Path,
    profile: &Path,
    extension: &Path,
    rules: &[String],
) -> (Child, Browser, String) {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("chromium.log"))
        .unwrap();
    let port_file = profile.join("DevToolsActivePort");
    let _ = std::fs::remove_file(&port_file);
    let mut chromium = Command::new("chromium")
        .args([
            "--headless=new",
            "--no-sandbox",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-features=DisableLoadExtensionCommandLineSwitch",
            "--remote-debugging-port=0",
            // The extension's console lines go to chromium.log (shown when the test fails).
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--load-extension={}", extension.display()))
        .arg(format!(
            "--disable-extensions-except={}",
            extension.display()
        ))
        .arg(format!("--host-resolver-rules={}", rules.join(", ")))
        .arg("about:blank")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .process_group(0)
        .spawn()
        .expect("chromium starts");
    // The DevTools port Chromium picked.
    if !serve_common::eventually(Duration::from_secs(30), || port_file.exists()) {
        let _ = chromium.kill();
        panic!(
            "chromium did not open its DevTools port: {}",
            std::fs::read_to_string(dir.join("chromium.log")).unwrap_or_default()
        );
    }
    let mut port = String::new();
    serve_common::eventually(Duration::from_secs(5), || {
        port = std::fs::read_to_string(&port_file).unwrap_or_default();
        port.contains('\n')
    });
    let browser = Browser {
        devtools: format!(
            "http://127.0.0.1:{}",
            port.lines().next().unwrap_or("").trim()
        ),
        http: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
    };
    // The extension's service worker is running: it loaded.
    let mut extension_id = String::new();
    let loaded = serve_common::eventually(Duration::from_secs(30), || {
        let worker = browser.targets().into_iter().find(|t| {
            t["type"] == "service_worker"
                && t["url"]
                    .as_str()
                    .is_some_and(|u| u.ends_with("/background.mjs"))
        });
        if let Some(worker) = worker {
            let url = worker["url"].as_str().unwrap_or("");
            extension_id = url.split('/').nth(2).unwrap_or("").to_owned();
        }
        !extension_id.is_empty()
    });
    if !loaded {
        let targets = browser.targets();
        let _ = chromium.kill();
        panic!(
            "the extension's service worker never ran: {targets:?}\n{}",
            console_lines(dir)
        );
    }
    (chromium, browser, extension_id)
}

#[test]
fn chromium_warns_before_a_listed_page_loads_and_follows_server_adds() {
    let Some(dist) = prerequisites(
        "chromium_warns_before_a_listed_page_loads",
        &["chromium", "node"],
    ) else {
        return;
    };
    let mut dir = tempfile::tempdir().unwrap();
    // PHISHBLOOM_KEEP_TEST_DIR=1 keeps the profile, logs and lists for a look after a failure.
    if std::env::var_os("PHISHBLOOM_KEEP_TEST_DIR").is_some() {
        dir.disable_cleanup(true);
        eprintln!("test files in {}", dir.path().display());
    }
    let entries = serve_common::phish_entries();
    let list = serve_common::build_urls_sized(dir.path(), "phish", &entries, 2_000);
    let token = dir.path().join("token");
    std::fs::write(&token, "browser-test-token\n").unwrap();
    let mut processes = Processes(Vec::new());
    let server = serve_common::Server::start(
        dir.path(),
        &[
            list.to_str().unwrap(),
            "--token-file",
            token.to_str().unwrap(),
            "--sync-interval",
            "1",
        ],
    );
    let origin = start_origin();
    let update_seconds = 2;
    let extension = dir.path().join("extension");
    let config = serde_json::json!({
        "lists": [format!("{}/v1/lists/phish", server.http)],
        "update_seconds": update_seconds,
    });
    install_extension(&dist, &extension, &config);
    let hosts = [
        "evil1.example",
        "docs.evil1.example",
        "phish3.example",
        "good.example",
        "added.example",
    ];
    let rules: Vec<String> = hosts
        .iter()
        .map(|h| format!("MAP {h} 127.0.0.1:{origin}"))
        .collect();
    let profile = dir.path().join("profile");
    let (chromium, browser, extension_id) = launch(dir.path(), &profile, &extension, &rules);
    processes.0.push(chromium);
    let chromium_log = || console_lines(dir.path());
    let warning_prefix = format!("chrome-extension://{extension_id}/warning.html?id=");
    let warned = |url: &str, title: &str| {
        url.starts_with(&warning_prefix) && title.contains("dangerous site blocked")
    };
    let origin_page = |expected: &str| {
        let expected = expected.to_owned();
        move |url: &str, title: &str| url.starts_with(&expected) && title == "origin page"
    };

    // The extension downloads nothing before the browser answers its policy read (which
    // lists, which key), and Chromium without a policy service answers that late (seconds,
    // more while tabs keep opening): wait for the first download before opening any tab.
    let started = Instant::now();
    let downloaded = serve_common::eventually(Duration::from_secs(90), || {
        chromium_log().contains("/v1/lists/phish: version ")
    });
    assert!(
        downloaded,
        "the list was never downloaded\n{}\n{}",
        server.log(),
        chromium_log()
    );
    eprintln!("first download {:?} after start", started.elapsed());
    // A listed domain and a listed path end on the warning page.
    let attempts = warn_eventually(
        &browser,
        "http://evil1.example/",
        Duration::from_secs(30),
        &warned,
    )
    .unwrap_or_else(|| {
        panic!(
            "evil1.example never warned\n{}\n{}",
            server.log(),
            chromium_log()
        )
    });
    eprintln!(
        "first warning {:?} after start ({attempts} tabs)",
        started.elapsed()
    );
    let tab = browser.open("http://phish3.example/login/step?x=1");
    let (ok, url, title) = browser.wait_tab(&tab, Duration::from_secs(15), warned);
    assert!(ok, "phish3.example/login/step: {url} {title:?}");
    // A server redirect to a listed page is no bypass.
    let tab = browser.open("http://good.example/redirect");
    let (ok, url, title) = browser.wait_tab(&tab, Duration::from_secs(15), warned);
    assert!(ok, "redirect to evil1.example: {url} {title:?}");

    // A clean page and an allowed one (an exception in the list) load, and stay loaded.
    let clean = browser.open("http://good.example/");
    let allowed = browser.open("http://docs.evil1.example/help");
    let before_add = browser.open("http://added.example/");
    for (tab, url) in [
        (&clean, "http://good.example/"),
        (&allowed, "http://docs.evil1.example/help"),
        (&before_add, "http://added.example/"),
    ] {
        let (ok, found, title) = browser.wait_tab(tab, Duration::from_secs(15), origin_page(url));
        assert!(ok, "{url} did not load: {found} {title:?}");
    }
    std::thread::sleep(Duration::from_millis(1_500));
    for (tab, url) in [
        (&clean, "http://good.example/"),
        (&before_add, "http://added.example/"),
    ] {
        let (found, title) = browser.tab(tab).unwrap_or_default();
        assert!(
            origin_page(url)(&found, &title),
            "{url} was left: {found} {title:?}"
        );
    }

    // Prefetches and prerenders of a listed URL are no false warning for the page that asked.
    let speculating = browser.open("http://phish3.example/speculate");
    let expected = origin_page("http://phish3.example/speculate");
    let (ok, url, title) = browser.wait_tab(&speculating, Duration::from_secs(15), &expected);
    assert!(ok, "phish3.example/speculate did not load: {url} {title:?}");
    std::thread::sleep(Duration::from_millis(2_000));
    let (url, title) = browser.tab(&speculating).unwrap_or_default();
    assert!(
        expected(&url, &title),
        "a speculation warned the page: {url} {title:?}"
    );
    eprintln!(
        "the browser prerendered the listed page: {}",
        PRERENDERED.load(std::sync::atomic::Ordering::Relaxed)
    );

    // A prerendered listed page that is then shown (activated: no request, no navigation
    // event the redirect rule or the guards see) ends on the warning page.
    let activating = browser.open("http://phish3.example/speculate-activate");
    let (ok, url, title) = browser.wait_tab(&activating, Duration::from_secs(15), warned);
    assert!(
        ok,
        "the prerendered listed page was shown: {url} {title:?}\n{}",
        chromium_log()
    );

    // A listed subframe is blocked (its page replaced by an error page), an allowed one loads,
    // and the page around them stays.
    let framing = browser.open("http://good.example/frame");
    let (ok, url, title) = browser.wait_tab(&framing, Duration::from_secs(15), |url, title| {
        url == "http://good.example/frame" && title == "frames 0,1"
    });
    assert!(ok, "the listed frame was not blocked: {url} {title:?}");

    // A web page cannot frame the warning page (to trick a click on "continue"): the frame
    // never shows it, while a cross-site control frame beside it loads (and is listed).
    let target_url = "http://phish3.example/login/framed";
    let warned_tab = browser.open(target_url);
    let (ok, warning_url, title) = browser.wait_tab(&warned_tab, Duration::from_secs(15), warned);
    assert!(ok, "{target_url} not warned: {warning_url} {title:?}");
    let embedding = browser.open(&format!("http://good.example/embed?{warning_url}"));
    // The ids of the out-of-process frames whose URL starts with `prefix` (DevTools lists
    // them; their titles there are their URLs).
    let frames = |prefix: &str| -> Vec<String> {
        browser
            .targets()
            .into_iter()
            .filter(|t| {
                t["type"] == "iframe" && t["url"].as_str().unwrap_or("").starts_with(prefix)
            })
            .map(|t| t["id"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let control = "http://docs.evil1.example/in-frame-control";
    let listed = serve_common::eventually(Duration::from_secs(15), || !frames(control).is_empty());
    assert!(
        listed,
        "the control frame is not listed: {:?}",
        browser.targets()
    );
    std::thread::sleep(Duration::from_millis(1_000));
    // Whatever the frame holds, it is not the warning page, and a click on its "continue"
    // (a clickjacked user's) passes nothing.
    for frame in frames(&format!("chrome-extension://{extension_id}/")) {
        let title = browser.evaluate(&frame, "document.title");
        assert!(
            !title.contains("dangerous site blocked"),
            "a web page framed the warning page: {title}"
        );
        browser.evaluate(&frame, "document.getElementById('continue')?.click()");
    }
    let (url, title) = browser.tab(&embedding).unwrap_or_default();
    assert_eq!(title, "embedding page", "{url}");
    std::thread::sleep(Duration::from_millis(500));
    let again = browser.open(target_url);
    let (ok, url, title) = browser.wait_tab(&again, Duration::from_secs(15), warned);
    assert!(
        ok,
        "{target_url} passed from a framed page: {url} {title:?}"
    );
    // In its own tab, "continue anyway" passes the entry: the listed page then loads.
    let (found, title) = browser.tab(&warned_tab).unwrap_or_default();
    assert!(warned(&found, &title), "{found} {title:?}");
    browser.evaluate(&warned_tab, "document.getElementById('continue').click()");
    let (ok, url, title) = browser.wait_tab(
        &warned_tab,
        Duration::from_secs(15),
        origin_page(target_url),
    );
    assert!(
        ok,
        "continue did not load {target_url}: {url} {title:?}\n{}",
        chromium_log()
    );

    // An entry added on the server is warned within the update interval.
    let added = reqwest::blocking::Client::new()
        .post(format!("{}/v1/lists/phish/entries", server.http))
        .bearer_auth("browser-test-token")
        .json(&serde_json::json!({"entries": ["added.example"]}))
        .send()
        .unwrap();
    assert!(added.status().is_success(), "{:?}", added.text());
    let added_at = Instant::now();
    let limit = Duration::from_secs(update_seconds * 5 + 10);
    let attempt = warn_eventually(&browser, "http://added.example/", limit, &warned)
        .unwrap_or_else(|| panic!("added.example never warned\n{}", server.log()));
    let elapsed = added_at.elapsed();
    eprintln!("time from the server-side add to a warning: {elapsed:?} ({attempt} tabs)");
    assert!(
        elapsed < Duration::from_secs(update_seconds + 5),
        "warned only after {elapsed:?}"
    );

    // A restart needs no download: with the server gone, the list stored in the extension's
    // IndexedDB is loaded again and warns at once (the entry added above included).
    drop(processes);
    drop(server);
    let (chromium, browser, _) = launch(dir.path(), &profile, &extension, &rules);
    let _processes = Processes(vec![chromium]);
    let restarted = Instant::now();
    for url in ["http://added.example/", "http://evil1.example/"] {
        warn_eventually(&browser, url, Duration::from_secs(15), &warned)
            .unwrap_or_else(|| panic!("{url} not warned after a restart\n{}", chromium_log()));
    }
    eprintln!(
        "warned {:?} after a restart without the server",
        restarted.elapsed()
    );
}
