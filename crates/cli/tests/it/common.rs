//! What the executable's tests share: running `phishbloom`, building a list with it, reading
//! its `info --json`, the verdicts of `check`, and asserting a failed run.

#![allow(dead_code)] // Each test file uses the part it needs.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// The `phishbloom` executable under test.
pub fn phishbloom() -> Command {
    Command::cargo_bin("phishbloom").unwrap()
}

/// Runs `phishbloom build -o <output> <args>`, asserts that it succeeded, and returns `output`.
pub fn build_list<I, S>(output: PathBuf, args: I) -> PathBuf
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    phishbloom()
        .arg("build")
        .arg("-o")
        .arg(&output)
        .args(args)
        .assert()
        .success();
    output
}

/// What `phishbloom info --json <list>` prints, parsed.
pub fn info_json(list: &Path) -> serde_json::Value {
    let output = phishbloom().args(["info", "--json"]).arg(list).output();
    // The executable was built for these tests, and `info --json` prints JSON on success.
    let output = output.expect("phishbloom runs");
    serde_json::from_slice(&output.stdout).expect("info --json prints JSON")
}

/// Asserts a failed run — exit 2, one line on stderr mentioning each of `needles` — and
/// returns that line.
pub fn assert_error(command: &mut Command, needles: &[&str]) -> String {
    let output = command.assert().code(2).get_output().clone();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "{needle:?} not in {stderr}");
    }
    stderr
}

/// The verdict column of `check FILE` for `items` on standard input: one per item (exit 0 when
/// one is listed, 1 when none is; anything else fails the test).
pub fn verdicts(file: &Path, items: &[String]) -> Vec<String> {
    let output = phishbloom()
        .arg("check")
        .arg(file)
        .write_stdin(items.join("\n"))
        .output()
        .unwrap();
    assert!(matches!(output.status.code(), Some(0 | 1)), "{output:?}");
    let verdicts: Vec<String> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| l.split('\t').nth(1).unwrap_or("").to_string())
        .collect();
    assert_eq!(verdicts.len(), items.len(), "one answer per item");
    verdicts
}

/// A small deterministic pseudo-random generator (splitmix64) for generated fixtures: the same
/// seed gives the same data on every machine, with no dependency.
pub struct SplitMix(pub u64);

impl SplitMix {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    /// Shuffles `items` in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// How many of each numbered entry family [`write_ut1_tree`] writes (`evil0…evil199.example`…).
pub const UT1_FAMILY: usize = 200;

/// Punycode hosts listed by [`write_ut1_tree`] (under `.example`, category phishing), with the
/// Unicode label each one encodes.
pub const UT1_IDN: [(&str, &str); 4] = [
    ("bücher", "xn--bcher-kva"),
    ("münchen", "xn--mnchen-3ya"),
    ("пример", "xn--e1afmkfd"),
    ("例え", "xn--r8jz45g"),
];

/// Writes a UT1-style tree in `dir` — `phishing` and `gambling` folders, each with `domains`
/// and `urls`, and the exceptions folder `liste_blanche` — and returns the three folders (to
/// give to `build --ut1`). With `i` below [`UT1_FAMILY`]:
///
/// | entry | category |
/// | --- | --- |
/// | `evil{i}.example`, `192.168.7.{1..=20}`, the [`UT1_IDN`] hosts | phishing (domains) |
/// | `both{i}.example` (i < 60) | phishing and gambling (domains) |
/// | `host{i}.example/login`, `docs.evil{i}.example/malware` | phishing (urls) |
/// | `host{i}.example/login` (i < 30) | also gambling (urls) |
/// | `bet{i}.example` | gambling (domains) |
/// | `casino{i}.example/poker` | gambling (urls) |
///
/// Exceptions (`liste_blanche`): `docs.evil{i}.example`, `bet{i}.example` for i a multiple of
/// 5 (domains), `host{i}.example/login/help` (urls).
pub fn write_ut1_tree(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<(&str, &str, String)> = Vec::new();
    let lines = |f: &dyn Fn(usize) -> Option<String>| -> String {
        (0..UT1_FAMILY).filter_map(f).map(|l| l + "\n").collect()
    };
    let mut phishing_domains = lines(&|i| Some(format!("evil{i}.example")));
    phishing_domains += &lines(&|i| (i < 60).then(|| format!("both{i}.example")));
    for j in 1..=20 {
        phishing_domains += &format!("192.168.7.{j}\n");
    }
    for (_, puny) in UT1_IDN {
        phishing_domains += &format!("{puny}.example\n");
    }
    files.push(("phishing", "domains", phishing_domains));
    let mut phishing_urls = lines(&|i| Some(format!("host{i}.example/login")));
    phishing_urls += &lines(&|i| Some(format!("docs.evil{i}.example/malware")));
    files.push(("phishing", "urls", phishing_urls));
    let mut gambling_domains = lines(&|i| Some(format!("bet{i}.example")));
    gambling_domains += &lines(&|i| (i < 60).then(|| format!("both{i}.example")));
    files.push(("gambling", "domains", gambling_domains));
    let mut gambling_urls = lines(&|i| Some(format!("casino{i}.example/poker")));
    gambling_urls += &lines(&|i| (i < 30).then(|| format!("host{i}.example/login")));
    files.push(("gambling", "urls", gambling_urls));
    let mut allow_domains = lines(&|i| Some(format!("docs.evil{i}.example")));
    allow_domains += &lines(&|i| i.is_multiple_of(5).then(|| format!("bet{i}.example")));
    files.push(("liste_blanche", "domains", allow_domains));
    let allow_urls = lines(&|i| Some(format!("host{i}.example/login/help")));
    files.push(("liste_blanche", "urls", allow_urls));
    for (folder, file, text) in &files {
        std::fs::create_dir_all(dir.join(folder)).unwrap();
        std::fs::write(dir.join(folder).join(file), text).unwrap();
    }
    ["phishing", "gambling", "liste_blanche"]
        .iter()
        .map(|f| dir.join(f))
        .collect()
}

/// Builds `NAME.bloom` in `dir` "the README's way" from [`write_ut1_tree`]'s tree:
/// `build --ut1 phishing gambling liste_blanche --verify --name NAME` (no `--capacity`), plus
/// `extra` options.
pub fn build_ut1_list(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let folders = write_ut1_tree(&dir.join(format!("{name}-ut1")));
    let mut args: Vec<std::ffi::OsString> = vec!["--ut1".into()];
    args.extend(folders.into_iter().map(Into::into));
    args.extend(["--verify".into(), "--name".into(), name.into()]);
    args.extend(extra.iter().map(Into::into));
    build_list(dir.join(format!("{name}.bloom")), args)
}

/// Whether `program` is on `PATH`.
pub fn installed(program: &str) -> bool {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .any(|dir| dir.join(program).is_file())
}

/// Says loudly on stderr that `test` is skipped, and `why` — or fails it when `CI` is set: CI
/// installs everything a test needs (`.ci/run`), so there nothing passes by skipping.
pub fn skip(test: &str, why: &str) {
    assert!(
        std::env::var_os("CI").is_none(),
        "{test} cannot run in CI: {why}"
    );
    eprintln!("\n=== SKIPPED {test}: {why} ===\n");
}

/// A throw-away redis-server on a free loopback port, or `None` after [`skip`] when
/// redis-server is not installed.
pub fn redis_server_or_skip(test: &str) -> Option<phishbloom_testing::redis_server::RedisServer> {
    if installed("redis-server") && installed("redis-cli") {
        return Some(phishbloom_testing::redis_server::RedisServer::start());
    }
    skip(
        test,
        "redis-server/redis-cli are not installed (apt-get install -y redis-server redis-tools; \
         .ci/run does)",
    );
    None
}
