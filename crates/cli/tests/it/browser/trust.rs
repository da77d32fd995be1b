//! A headless Chromium with the extension following a signed list that `publish` writes to a
//! static site (The Update Framework's threats, as `sync` meets them): the list's key handed
//! over to a new one by a signed rotation is followed, and an index signed by the old key alone
//! is then refused; an index past its expiry is refused; each refusal keeps the copy held and
//! shows "!" on the badge.

use super::chromium::{console_lines, install_extension, launch, Browser, Processes};
use super::*;
use crate::sync::{add, hosts, list, publish, StaticServer};

/// The extension's status (its `status` message) after asking it to sync every list now.
fn synced(browser: &Browser, page: &str) -> Value {
    let out = browser.evaluate(
        page,
        "chrome.runtime.sendMessage({type: 'sync'}).then(JSON.stringify)",
    );
    let answer: Value = serde_json::from_str(&out).unwrap_or_default();
    let text = answer["result"]["value"].as_str().unwrap_or("{}");
    serde_json::from_str(text).unwrap_or_default()
}

/// Syncs until `done` holds for the list's status (the first entry of `lists`), or panics with
/// `what` after `timeout`; that status.
fn sync_until(
    browser: &Browser,
    page: &str,
    timeout: Duration,
    what: &str,
    log: impl Fn() -> String,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = Instant::now() + timeout;
    loop {
        let status = synced(browser, page);
        let list = &status["lists"][0];
        if done(list) {
            return list.clone();
        }
        assert!(Instant::now() < deadline, "{what}: {status}\n{}", log());
        std::thread::sleep(Duration::from_millis(300));
    }
}

/// Moves `site` to `keep` and `from` to `site` (the static server reads its files by path at
/// each request).
fn swap(site: &Path, from: &Path, keep: &Path) {
    std::fs::rename(site, keep).unwrap();
    std::fs::rename(from, site).unwrap();
}

#[test]
fn chromium_follows_a_key_rotation_and_refuses_an_old_key_or_an_expired_index() {
    let test = "chromium_follows_a_key_rotation_and_refuses_an_old_key_or_an_expired_index";
    let Some(dist) = prerequisites(test, &["chromium"]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let source = list(dir.path(), "phish", &hosts("a", 50), 1_000);
    let (old, new) = (dir.path().join("old"), dir.path().join("new"));
    for key in [&old, &new] {
        common::phishbloom()
            .arg("keygen")
            .arg(key)
            .assert()
            .success();
    }
    let arg = |p: &Path| p.to_str().unwrap().to_owned();
    let public = |p: &Path| std::fs::read_to_string(format!("{}.pub", p.display())).unwrap();
    let site = dir.path().join("site");
    publish(&source, &site, &["--sign", &arg(&old)]);
    let server = StaticServer::start(&site);
    let extension = dir.path().join("extension");
    let config = serde_json::json!({
        "lists": [server.url.clone()],
        "update_seconds": 3600,
        "trust": public(&old),
    });
    install_extension(&dist, &extension, &config);
    let profile = dir.path().join("profile");
    let (chromium, browser, extension_id) = launch(dir.path(), &profile, &extension, &[]);
    let _processes = Processes(vec![chromium]);
    let log = || console_lines(dir.path());
    let page = browser.open(&format!("chrome-extension://{extension_id}/options.html"));
    let version = |list: &Value| list["info"]["version"].as_u64();
    // The first sync waits for the browser's policy answer (seconds without a policy service).
    let list = sync_until(
        &browser,
        &page,
        Duration::from_secs(90),
        "never synced",
        log,
        |l| version(l) == Some(1),
    );
    assert_eq!(list["error"], "", "{list}");

    // The new key takes over, vouched for by the old one: followed, and kept.
    add(&source, &hosts("b", 5));
    publish(
        &source,
        &site,
        &["--sign", &arg(&new), "--rotate-from", &arg(&old)],
    );
    let new_key = public(&new).lines().last().unwrap().to_owned();
    let list = sync_until(
        &browser,
        &page,
        Duration::from_secs(20),
        "no rotation",
        log,
        |l| version(l) == Some(2),
    );
    assert_eq!(list["error"], "", "{list}");
    assert!(
        list["trusted"].as_str().unwrap().contains(&new_key),
        "{list}"
    );

    // A mirror signed by the old key alone, of a newer version: refused, the copy kept.
    add(&source, &hosts("c", 5));
    let mirror = dir.path().join("mirror");
    publish(&source, &mirror, &["--sign", &arg(&old)]);
    swap(&site, &mirror, &dir.path().join("good"));
    let list = sync_until(
        &browser,
        &page,
        Duration::from_secs(20),
        "old key taken",
        log,
        |l| l["error"].as_str().is_some_and(|e| !e.is_empty()),
    );
    assert!(
        list["error"]
            .as_str()
            .unwrap()
            .contains("not by the trusted key"),
        "{list}"
    );
    assert_eq!(version(&list), Some(2), "{list}");
    let badge = |browser: &Browser| {
        let out = browser.evaluate(&page, "chrome.action.getBadgeText({})");
        serde_json::from_str::<Value>(&out).unwrap_or_default()["result"]["value"].clone()
    };
    assert_eq!(badge(&browser), "!");

    // The publisher's own site again, its index current for one second only: once past it,
    // refused with its date, the copy kept.
    swap(&site, &dir.path().join("good"), &dir.path().join("bad"));
    publish(&source, &site, &["--sign", &arg(&new), "--expires", "1s"]);
    std::thread::sleep(Duration::from_millis(1500));
    let list = sync_until(
        &browser,
        &page,
        Duration::from_secs(20),
        "expired taken",
        log,
        |l| {
            l["error"]
                .as_str()
                .is_some_and(|e| e.contains("expired at"))
        },
    );
    assert_eq!(version(&list), Some(2), "{list}");
    assert_eq!(badge(&browser), "!");
    // Published again (current for a week), it is followed.
    publish(&source, &site, &["--sign", &arg(&new)]);
    let list = sync_until(
        &browser,
        &page,
        Duration::from_secs(20),
        "not followed",
        log,
        |l| version(l) == Some(3),
    );
    assert_eq!(list["error"], "", "{list}");
}
