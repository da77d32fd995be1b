//! A headless Chromium with the extension following a signed list that `publish` writes to a
//! static site (The Update Framework's threats, as `sync` meets them): the list's key handed
//! over to a new one by a signed rotation is followed, and an index signed by the old key alone
//! is then refused; an index past its expiry is refused; each refusal keeps the copy held and
//! shows "!" on the badge.

use super::chromium::{console_lines, install_extension, launch, Browser, Processes};
use super::*;
use crate::sync::{add, hosts, list, publish, StaticServer};

/// The extension in a headless Chromium, following one list published at `site` (a static
/// server), its options page open to ask it things.
struct Following {
    dir: tempfile::TempDir,
    source: PathBuf,
    site: PathBuf,
    browser: Browser,
    page: String,
    _server: StaticServer,
    _processes: Processes,
}

impl Following {
    /// The extension's status (its `status` message) after asking it to sync every list now.
    fn synced(&self) -> Value {
        let out = self.browser.evaluate(
            &self.page,
            "chrome.runtime.sendMessage({type: 'sync'}).then(JSON.stringify)",
        );
        let answer: Value = serde_json::from_str(&out).unwrap_or_default();
        let text = answer["result"]["value"].as_str().unwrap_or("{}");
        serde_json::from_str(text).unwrap_or_default()
    }

    /// Syncs until `done` holds for the list's status, or panics with `what` after `timeout`;
    /// that status.
    fn sync_until(&self, timeout: Duration, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + timeout;
        loop {
            let status = self.synced();
            let list = &status["lists"][0];
            if done(list) {
                return list.clone();
            }
            let log = console_lines(self.dir.path());
            assert!(Instant::now() < deadline, "{what}: {status}\n{log}");
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// The toolbar badge's text.
    fn badge(&self) -> Value {
        let out = self
            .browser
            .evaluate(&self.page, "chrome.action.getBadgeText({})");
        serde_json::from_str::<Value>(&out).unwrap_or_default()["result"]["value"].clone()
    }

    /// Moves the site to `keep` and `from` where it was (the static server reads its files by
    /// path at each request).
    fn serve_instead(&self, from: &Path, keep: &Path) {
        std::fs::rename(&self.site, keep).unwrap();
        std::fs::rename(from, &self.site).unwrap();
    }
}

/// The version a list's status holds.
fn version(list: &Value) -> Option<u64> {
    list["info"]["version"].as_u64()
}

/// A key's path as an argument.
fn arg(path: &Path) -> String {
    path.to_str().unwrap().to_owned()
}

/// The text of the public key of `key` (`phishbloom keygen`'s `KEY.pub`).
fn public(key: &Path) -> String {
    std::fs::read_to_string(format!("{}.pub", key.display())).unwrap()
}

/// A list published signed by `old`, followed by the extension trusting `old` (its first sync
/// done: it waits for the browser's policy answer, seconds without a policy service).
fn follow_signed_list(dist: &Path, old: &Path) -> Following {
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 50), 1_000);
    let site = dir.path().join("site");
    publish(&source, &site, &["--sign", &arg(old)]);
    let server = StaticServer::start(&site);
    let extension = dir.path().join("extension");
    let config = serde_json::json!({
        "lists": [server.url.clone()],
        "update_seconds": 3600,
        "trust": public(old),
    });
    install_extension(dist, &extension, &config);
    let profile = dir.path().join("profile");
    let (chromium, browser, extension_id) = launch(dir.path(), &profile, &extension, &[]);
    let page = browser.open(&format!("chrome-extension://{extension_id}/options.html"));
    let following = Following {
        dir,
        source,
        site,
        browser,
        page,
        _server: server,
        _processes: Processes(vec![chromium]),
    };
    let list = following.sync_until(Duration::from_secs(90), "never synced", |l| {
        version(l) == Some(1)
    });
    assert_eq!(list["error"], "", "{list}");
    following
}

#[test]
fn chromium_follows_a_key_rotation_and_refuses_an_old_key_or_an_expired_index() {
    let test = "chromium_follows_a_key_rotation_and_refuses_an_old_key_or_an_expired_index";
    let Some(dist) = prerequisites(test, &["chromium"]) else {
        return;
    };
    let keys = tempfile::tempdir().unwrap();
    let (old, new) = (keys.path().join("old"), keys.path().join("new"));
    for key in [&old, &new] {
        common::phishbloom()
            .arg("keygen")
            .arg(key)
            .assert()
            .success();
    }
    let f = follow_signed_list(&dist, &old);

    // The new key takes over, vouched for by the old one: followed, and kept.
    add(&f.source, &hosts("b", 5));
    let rotate = ["--sign", &arg(&new), "--rotate-from", &arg(&old)];
    publish(&f.source, &f.site, &rotate);
    let list = f.sync_until(Duration::from_secs(20), "no rotation", |l| {
        version(l) == Some(2)
    });
    assert_eq!(list["error"], "", "{list}");
    let new_key = public(&new).lines().last().unwrap().to_owned();
    assert!(
        list["trusted"].as_str().unwrap().contains(&new_key),
        "{list}"
    );

    // A mirror signed by the old key alone, of a newer version: refused, the copy kept.
    add(&f.source, &hosts("c", 5));
    let mirror = f.dir.path().join("mirror");
    publish(&f.source, &mirror, &["--sign", &arg(&old)]);
    let good = f.dir.path().join("good");
    f.serve_instead(&mirror, &good);
    let list = f.sync_until(Duration::from_secs(20), "old key taken", |l| {
        l["error"].as_str().is_some_and(|e| !e.is_empty())
    });
    let error = list["error"].as_str().unwrap();
    assert!(error.contains("not by the trusted key"), "{list}");
    assert_eq!(version(&list), Some(2), "{list}");
    assert_eq!(f.badge(), "!");

    // The publisher's own site again, its index current for one second only: once past it,
    // refused with its date, the copy kept.
    f.serve_instead(&good, &f.dir.path().join("bad"));
    publish(
        &f.source,
        &f.site,
        &["--sign", &arg(&new), "--expires", "1s"],
    );
    std::thread::sleep(Duration::from_millis(1500));
    let list = f.sync_until(Duration::from_secs(20), "expired taken", |l| {
        l["error"]
            .as_str()
            .is_some_and(|e| e.contains("expired at"))
    });
    assert_eq!(version(&list), Some(2), "{list}");
    assert_eq!(f.badge(), "!");
    // Published again (current for a week), it is followed.
    publish(&f.source, &f.site, &["--sign", &arg(&new)]);
    let list = f.sync_until(Duration::from_secs(20), "not followed", |l| {
        version(l) == Some(3)
    });
    assert_eq!(list["error"], "", "{list}");
}
