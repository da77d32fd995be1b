//! List formats through the real executable: the lists admins already have — hosts files,
//! AdBlock / uBlock Origin rules, PhishTank's and URLhaus's CSVs, OpenPhish's feed, gzip'd or
//! not — are recognized by their content (or forced with `--format`), their entries answer
//! `listed`, AdBlock `@@` exceptions answer `allowed`, and the build summary counts every
//! skipped line by its reason. The fixtures are written by the tests, in the shapes the real
//! feeds have (a few dozen lines each); nothing is fetched.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::*;

/// Random-looking but fixed phishing host names: `{brand}-{word}{n}.example`.
fn hosts_family(seed: u64, count: usize) -> Vec<String> {
    const BRANDS: [&str; 8] = [
        "paypal",
        "appleid",
        "office365",
        "netflix",
        "chase",
        "dhl",
        "metamask",
        "amazon",
    ];
    const WORDS: [&str; 6] = ["login", "verify", "secure", "account", "update", "support"];
    let mut random = SplitMix(seed);
    (0..count)
        .map(|i| {
            let brand = BRANDS[random.below(BRANDS.len())];
            let word = WORDS[random.below(WORDS.len())];
            format!("{brand}-{word}{i}.example")
        })
        .collect()
}

/// Runs `phishbloom build -o OUTPUT ARGS…`, asserts success, and returns what it printed.
fn build(output: &Path, args: &[&str]) -> String {
    let out = phishbloom()
        .arg("build")
        .arg("-o")
        .arg(output)
        .args(args)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    String::from_utf8(out).unwrap()
}

/// The summary's `skipped:` line, without its indentation.
fn skipped_line(summary: &str) -> &str {
    summary
        .lines()
        .find_map(|l| l.trim().strip_prefix("skipped: "))
        .unwrap_or_else(|| panic!("no skipped line in\n{summary}"))
}

fn path_str(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A StevenBlack-shaped hosts file: a comment header, the 14 localhost lines, custom-record
/// comments, then `0.0.0.0 NAME` lines (with trailing comments, tabs, two names on a line),
/// and `generated` more names. Returns the text and the names it blocks.
fn hosts_file(generated: usize) -> (String, Vec<String>) {
    let mut text = String::from(
        "# Title: StevenBlack/hosts with the phishing extension\n\
         #\n\
         # This hosts file is a merged collection of hosts from reputable sources,\n\
         # with a dash of crowd sourcing via GitHub\n\
         #\n\
         # Date: 02 January 2025 07:12:43 (UTC)\n\
         # Number of unique domains: 40\n\
         #\n\
         # ===============================================================\n\
         \n\
         127.0.0.1 localhost\n\
         127.0.0.1 localhost.localdomain\n\
         127.0.0.1 local\n\
         255.255.255.255 broadcasthost\n\
         ::1 localhost\n\
         ::1 ip6-localhost\n\
         ::1 ip6-loopback\n\
         fe80::1%lo0 localhost\n\
         ff00::0 ip6-localnet\n\
         ff00::0 ip6-mcastprefix\n\
         ff02::1 ip6-allnodes\n\
         ff02::2 ip6-allrouters\n\
         ff02::3 ip6-allhosts\n\
         0.0.0.0 0.0.0.0\n\
         \n\
         # Custom host records are listed here.\n\
         \n\
         # End of custom host records.\n\
         # Start StevenBlack\n\
         \n\
         #=====================================\n\
         # Title: Hosts contributed by Steven Black\n\
         # http://stevenblack.com\n\
         \n\
         0.0.0.0 paypal-login-verify.example\n\
         0.0.0.0 secure-appleid-check.example # reported 2024-12-30\n\
         127.0.0.1 wallet-connect-sync.example metamask-restore.example\n\
         0.0.0.0\ttab-separated.example\n",
    );
    let mut names: Vec<String> = strings(&[
        "paypal-login-verify.example",
        "secure-appleid-check.example",
        "wallet-connect-sync.example",
        "metamask-restore.example",
        "tab-separated.example",
    ]);
    for name in hosts_family(17, generated) {
        text += &format!("0.0.0.0 {name}\n");
        names.push(name);
    }
    text += "# End StevenBlack\n";
    (text, names)
}

/// The hosts file's comment lines (`#` at the start): 9 in the header box, 6 around the custom
/// records, 1 after the generated names.
const HOSTS_COMMENTS: usize = 16;

#[test]
fn a_hosts_file_is_recognized_and_its_localhost_lines_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let (text, names) = hosts_file(30);
    let input = dir.path().join("hosts");
    std::fs::write(&input, &text).unwrap();
    let list = dir.path().join("h.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(hosts)"), "{summary}");
    assert_eq!(
        skipped_line(&summary),
        format!("{HOSTS_COMMENTS} comments, 14 localhost lines")
    );
    assert!(
        summary.contains(&format!("entries: {} domain, 0 URL", names.len())),
        "{summary}"
    );
    let mut items: Vec<String> = names.iter().map(|n| format!("http://{n}/")).collect();
    items.push("https://login.paypal-login-verify.example/signin?x=1".into());
    let mut expected = vec!["listed"; items.len()];
    items.extend(strings(&[
        "localhost",
        "http://local/",
        "ip6-localhost.example",
    ]));
    expected.extend(["clean"; 3]);
    assert_eq!(verdicts(&list, &items), expected);
}

#[test]
fn a_gzipped_hosts_file_builds() {
    let dir = tempfile::tempdir().unwrap();
    let (text, names) = hosts_file(20);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let input = dir.path().join("hosts.gz");
    std::fs::write(&input, gz.finish().unwrap()).unwrap();
    let list = dir.path().join("gz.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(hosts)"), "{summary}");
    assert!(
        skipped_line(&summary).ends_with("14 localhost lines"),
        "{summary}"
    );
    let items: Vec<String> = names.iter().map(|n| format!("https://{n}/a")).collect();
    assert_eq!(verdicts(&list, &items), vec!["listed"; items.len()]);
}

/// An AdBlock / uBlock Origin list: header, `!` comments, domain rules with and without
/// options, exceptions, cosmetic, regex, path and wildcard rules, modifiers, and `generated`
/// more `||NAME^` rules. Returns the text, the blocked domains and the allowed ones.
fn adblock_list(generated: usize) -> (String, Vec<String>, Vec<String>) {
    let mut text = String::from(
        "[Adblock Plus 2.0]\n\
         ! Title: Phishing URL Blocklist (AdGuard / uBlock Origin)\n\
         ! Expires: 1 day (update frequency)\n\
         ! Homepage: https://example.org/phishing-filter\n\
         ! License: CC0\n\
         !\n\
         ||paypal-secure-login.example^\n\
         ||apple-id-unlock.example^$document\n\
         ||wallet-drainer.example^$third-party\n\
         ||cdn.tracker.example^$script,domain=news.example|blog.example\n\
         ||office365-mfa.example^$all\n\
         ||evil-hosting.example^\n\
         @@||docs.office365-mfa.example^\n\
         @@||status.evil-hosting.example^$document\n\
         @@||news.example^$generichide\n\
         example.com##.ad-banner\n\
         example.com#@#.sponsored\n\
         news.example#?#div:has(> a[href*=\"promo\"])\n\
         ##.cookie-notice\n\
         shop.example##+js(set-constant, adblock, false)\n\
         /banner[0-9]+\\.gif/\n\
         /^https?:\\/\\/[a-z]+\\.top\\//$document\n\
         ||evil-cdn.example/payload/*.js\n\
         ||*.phish-kit.example^\n\
         /wp-admin/includes/login.php\n\
         ||tracker.example^$removeparam=utm_source\n\
         ||ads.example^$badfilter\n\
         ! Generated rules follow\n",
    );
    let mut blocked = strings(&[
        "paypal-secure-login.example",
        "apple-id-unlock.example",
        "wallet-drainer.example",
        "cdn.tracker.example",
        "office365-mfa.example",
        "evil-hosting.example",
    ]);
    for name in hosts_family(29, generated) {
        text += &format!("||{name}^\n");
        blocked.push(name);
    }
    let allowed = strings(&["docs.office365-mfa.example", "status.evil-hosting.example"]);
    (text, blocked, allowed)
}

#[test]
fn adblock_rules_block_domains_allow_exceptions_and_count_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (text, blocked, allowed) = adblock_list(25);
    let input = dir.path().join("phishing-filter.txt");
    std::fs::write(&input, &text).unwrap();
    let list = dir.path().join("ab.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(adblock)"), "{summary}");
    assert_eq!(
        skipped_line(&summary),
        "6 comments, 1 header, 6 cosmetic rules, 2 regex rules, 3 path or wildcard rules, \
         2 rules that modify rather than block"
    );
    assert!(
        summary.contains("exceptions in the list: 2 (@@ rules)"),
        "{summary}"
    );
    assert!(
        summary.contains(&format!("entries: {} domain, 0 URL", blocked.len())),
        "{summary}"
    );
    let mut items: Vec<String> = blocked.iter().map(|d| format!("https://{d}/x")).collect();
    let mut expected = vec!["listed"; items.len()];
    items.extend(allowed.iter().map(|d| format!("https://{d}/help")));
    expected.extend(vec!["allowed"; allowed.len()]);
    // Skipped rules block nothing.
    items.extend(strings(&[
        "https://example.com/",
        "https://evil-cdn.example/payload/a.js",
        "https://x.phish-kit.example/",
        "https://tracker.example/?utm_source=a",
        "https://ads.example/",
    ]));
    expected.extend(["clean"; 5]);
    assert_eq!(verdicts(&list, &items), expected);
}

/// PhishTank's `online-valid.csv`: its header and rows (one URL with a comma, quoted).
fn phishtank_csv(rows: usize) -> (String, Vec<String>) {
    let mut text = String::from(
        "phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target\n",
    );
    let mut urls = Vec::new();
    let targets = ["PayPal", "Microsoft", "Other", "Facebook", "Apple"];
    for (i, host) in hosts_family(41, rows).into_iter().enumerate() {
        let id = 8_601_230 + i;
        let url = match i % 3 {
            0 => format!("https://{host}/webapps/signin/index.php"),
            1 => format!("http://{host}/wp-content/upgrade/secure/login.html?session={id}"),
            _ => format!("https://{host}/a,b/verify"),
        };
        let quoted = if url.contains(',') {
            format!("\"{url}\"")
        } else {
            url.clone()
        };
        text += &format!(
            "{id},{quoted},http://www.phishtank.com/phish_detail.php?phish_id={id},\
             2025-01-02T0{h}:15:02+00:00,yes,2025-01-02T0{h}:20:11+00:00,yes,{target}\n",
            h = i % 10,
            target = targets[i % targets.len()],
        );
        urls.push(url);
    }
    (text, urls)
}

#[test]
fn phishtank_csv_gzipped_is_read_by_its_url_column() {
    let dir = tempfile::tempdir().unwrap();
    let (text, urls) = phishtank_csv(30);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    // PhishTank's download name: not `.csv`, so only the content says CSV.
    let input = dir.path().join("online-valid.csv.gz");
    std::fs::write(&input, gz.finish().unwrap()).unwrap();
    let list = dir.path().join("pt.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(phishtank)"), "{summary}");
    assert!(
        summary.contains(&format!("entries: 0 domain, {} URL", urls.len())),
        "{summary}"
    );
    assert!(!summary.contains("skipped:"), "{summary}");
    let mut items = urls.clone();
    items.push("https://www.phishtank.com/phish_detail.php?phish_id=8601230".into());
    let mut expected = vec!["listed"; urls.len()];
    expected.push("clean");
    assert_eq!(verdicts(&list, &items), expected);
}

/// URLhaus's `csv.txt`: the comment box, the commented header, quoted rows (IP hosts with
/// ports, domains, tags holding commas).
fn urlhaus_csv(rows: usize) -> (String, Vec<String>) {
    let mut text = String::from(
        "################################################################\n\
         # abuse.ch URLhaus Database Dump (CSV - recent URLs only)      #\n\
         # Last updated: 2025-01-02 12:00:04 (UTC)                      #\n\
         #                                                              #\n\
         # Terms Of Use: https://urlhaus.abuse.ch/api/                  #\n\
         # For questions please contact urlhaus [at] abuse.ch           #\n\
         ################################################################\n\
         #\n\
         # id,dateadded,url,url_status,last_online,threat,tags,urlhaus_link,reporter\n",
    );
    let mut urls = Vec::new();
    let mut random = SplitMix(53);
    for (i, host) in hosts_family(59, rows).into_iter().enumerate() {
        let id = 3_312_345 + i;
        let url = if i % 2 == 0 {
            format!(
                "http://{}.{}.{}.{}:{}/i",
                1 + random.below(220),
                random.below(256),
                random.below(256),
                1 + random.below(254),
                30_000 + random.below(30_000)
            )
        } else {
            format!("https://{host}/bins/sora.arm7")
        };
        let (status, tags) = if i % 3 == 0 {
            ("offline", "32-bit,elf,mips,Mozi")
        } else {
            ("online", "exe,AgentTesla")
        };
        text += &format!(
            "\"{id}\",\"2025-01-02 11:{m:02}:07\",\"{url}\",\"{status}\",\"2025-01-02 11:{m:02}:07\",\
             \"malware_download\",\"{tags}\",\"https://urlhaus.abuse.ch/url/{id}/\",\"geenensp\"\n",
            m = i % 60,
        );
        urls.push(url);
    }
    (text, urls)
}

#[test]
fn urlhaus_csv_with_its_comment_box_is_read_by_its_url_column() {
    let dir = tempfile::tempdir().unwrap();
    let (text, urls) = urlhaus_csv(24);
    let input = dir.path().join("csv.txt");
    std::fs::write(&input, &text).unwrap();
    let list = dir.path().join("uh.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(urlhaus)"), "{summary}");
    assert_eq!(skipped_line(&summary), "8 comments");
    assert!(
        summary.contains(&format!("{} rows: {} selected", urls.len(), urls.len())),
        "{summary}"
    );
    assert_eq!(verdicts(&list, &urls), vec!["listed"; urls.len()]);
    // The label options apply: only the online URLs.
    let online = dir.path().join("online.bloom");
    build(
        &online,
        &[
            path_str(&input),
            "--format",
            "urlhaus",
            "--label-column",
            "url_status",
            "--label-value",
            "online",
        ],
    );
    let expected: Vec<&str> = (0..urls.len())
        .map(|i| if i % 3 == 0 { "clean" } else { "listed" })
        .collect();
    assert_eq!(verdicts(&online, &urls), expected);
}

#[test]
fn an_openphish_feed_is_plain_lines() {
    let dir = tempfile::tempdir().unwrap();
    let paths = [
        "/signin/",
        "/wp-includes/js/office/index.html",
        "/#/login",
        "/verify.php?id=3",
    ];
    let urls: Vec<String> = hosts_family(71, 36)
        .into_iter()
        .enumerate()
        .map(|(i, host)| {
            let scheme = if i % 4 == 0 { "http" } else { "https" };
            format!("{scheme}://{host}{}", paths[i % paths.len()])
        })
        .collect();
    let input = dir.path().join("feed.txt");
    std::fs::write(&input, urls.join("\n") + "\n").unwrap();
    let list = dir.path().join("op.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(lines)"), "{summary}");
    assert!(summary.contains("36 rows: 36 selected"), "{summary}");
    assert!(!summary.contains("skipped:"), "{summary}");
    assert_eq!(verdicts(&list, &urls), vec!["listed"; urls.len()]);
    // Forced, it reads the same and says so.
    let summary = build(&list, &["--format", "openphish", path_str(&input)]);
    assert!(summary.contains("(openphish)"), "{summary}");
    assert_eq!(verdicts(&list, &urls), vec!["listed"; urls.len()]);
}

#[test]
fn format_forces_what_detection_would_not_choose() {
    let dir = tempfile::tempdir().unwrap();
    // Mostly bare names: detected as lines, where the hosts line is rejected as an entry.
    let input = dir.path().join("mixed.txt");
    std::fs::write(
        &input,
        "a.example\nb.example\nc.example\n0.0.0.0 d.example\n",
    )
    .unwrap();
    let items = strings(&["http://a.example/", "http://d.example/"]);
    let list = dir.path().join("m.bloom");
    let summary = build(&list, &[path_str(&input)]);
    assert!(summary.contains("(lines)"), "{summary}");
    assert_eq!(verdicts(&list, &items), ["listed", "clean"]);
    let summary = build(&list, &["--format", "hosts", path_str(&input)]);
    assert!(summary.contains("(hosts)"), "{summary}");
    assert_eq!(verdicts(&list, &items), ["listed", "listed"]);

    // Standard input: detected, or forced.
    let (text, blocked, _) = adblock_list(3);
    for args in [&["-"][..], &["--format", "adblock", "-"][..]] {
        let out = phishbloom()
            .arg("build")
            .arg("-o")
            .arg(&list)
            .args(args)
            .write_stdin(text.clone())
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        assert!(String::from_utf8_lossy(&out).contains("(adblock)"));
        assert_eq!(verdicts(&list, &blocked[..1]), ["listed"], "{args:?}");
    }
    let (text, urls) = urlhaus_csv(6);
    phishbloom()
        .args(["build", "--format", "urlhaus", "-", "-o"])
        .arg(&list)
        .write_stdin(text)
        .assert()
        .success();
    assert_eq!(verdicts(&list, &urls), vec!["listed"; urls.len()]);

    // Whole keys are lines or CSV: the entry formats are refused with --exact.
    let (text, _) = hosts_file(10);
    let hosts = dir.path().join("hosts.txt");
    std::fs::write(&hosts, text).unwrap();
    assert_error(
        phishbloom()
            .args([
                "build",
                "--exact",
                "--format",
                "hosts",
                path_str(&hosts),
                "-o",
            ])
            .arg(dir.path().join("x.bloom")),
        &["--format hosts", "--exact"],
    );
    assert!(!dir.path().join("x.bloom").exists());
}

#[test]
fn an_allow_list_in_adblock_form_gives_exceptions() {
    let dir = tempfile::tempdir().unwrap();
    let (text, names) = hosts_file(5);
    let hosts: PathBuf = dir.path().join("hosts");
    std::fs::write(&hosts, text).unwrap();
    let allow = dir.path().join("allow.txt");
    std::fs::write(
        &allow,
        format!(
            "! my exceptions\n@@||help.{}^\n||status.{}^\n",
            names[0], names[1]
        ),
    )
    .unwrap();
    let list = dir.path().join("a.bloom");
    build(
        &list,
        &[path_str(&hosts), "--allow", path_str(&allow), "--verify"],
    );
    let items = vec![
        format!("https://help.{}/", names[0]),
        format!("https://status.{}/", names[1]),
        format!("https://{}/", names[0]),
    ];
    assert_eq!(verdicts(&list, &items), ["allowed", "allowed", "listed"]);
}
