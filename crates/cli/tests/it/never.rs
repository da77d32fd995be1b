//! `build --never FILE`: every member of a universe answers clean from a list with a real
//! false-positive rate, every entry is still listed, `info` shows the cost, and a member an
//! entry lists is refused with its line.

use crate::common::{self, SplitMix};

/// `count` distinct generated hosts with `prefix`.
fn hosts(prefix: &str, count: usize, rng: &mut SplitMix) -> Vec<String> {
    (0..count)
        .map(|i| format!("{prefix}{i}-{:x}.example", rng.next_u64() & 0xFFFF))
        .collect()
}

#[test]
fn a_one_percent_list_built_with_never_answers_clean_for_every_member_and_lists_every_entry() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = SplitMix(39);
    let mut entries = hosts("evil", 20_000, &mut rng);
    entries.extend((0..5_000).map(|i| format!("host{i}.example/login")));
    let universe = hosts("good", 100_000, &mut rng);
    let list = dir.path().join("entries.txt");
    std::fs::write(&list, entries.join("\n")).unwrap();
    let never = dir.path().join("never.txt");
    std::fs::write(&never, format!("# our sites\n\n{}\n", universe.join("\n"))).unwrap();
    // Without the gate every expression is probed: at 1 % a URL, hundreds of members hit.
    let build = |name: &str, extra: &[&str]| {
        let mut args: Vec<std::ffi::OsString> = vec![list.clone().into(), "--no-host-gate".into()];
        args.extend(extra.iter().map(Into::into));
        common::build_list(dir.path().join(name), args)
    };
    let plain = build("plain.bloom", &[]);
    let warned = common::verdicts(&plain, &universe)
        .iter()
        .filter(|v| *v == "listed")
        .count();
    // Binomial(10⁵, ≈1 % at one expression's share of the per-URL rate): hundreds at least.
    assert!(warned > 50, "only {warned} false positives to overrule");
    for (name, kind) in [
        ("never.bloom", "blocked"),
        ("never-compact.bloom", "compact"),
    ] {
        let fpp = if kind == "compact" { "1e-4" } else { "0.01" };
        let never_arg = never.to_str().unwrap();
        let built = build(name, &["--kind", kind, "--fpp", fpp, "--never", never_arg]);
        assert!(
            common::verdicts(&built, &universe)
                .iter()
                .all(|v| v == "clean"),
            "{kind}"
        );
        let listed: Vec<String> = entries.iter().map(|e| format!("http://{e}/x")).collect();
        assert!(
            common::verdicts(&built, &listed)
                .iter()
                .all(|v| v == "listed"),
            "{kind}"
        );
        let info = common::info_json(&built);
        let overruled = info["never"].as_u64().unwrap();
        assert!(
            kind == "compact" || overruled >= warned as u64,
            "{kind}: {overruled}"
        );
    }
    let text = common::phishbloom()
        .arg("info")
        .arg(dir.path().join("never.bloom"))
        .output()
        .unwrap()
        .stdout;
    assert!(String::from_utf8_lossy(&text).contains("never-warn"));
}

#[test]
fn a_never_member_that_an_entry_lists_is_refused_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("entries.txt");
    std::fs::write(&list, "evil.example\nbad.example/login\n").unwrap();
    let never = dir.path().join("never.txt");
    std::fs::write(
        &never,
        "good.example\n# ours\nhttps://www.bad.example/login/x\n",
    )
    .unwrap();
    let output = dir.path().join("x.bloom");
    common::assert_error(
        common::phishbloom()
            .arg("build")
            .arg(&list)
            .arg("--never")
            .arg(&never)
            .arg("-o")
            .arg(&output),
        &["never.txt:3", "bad.example/login", "cannot answer clean"],
    );
    assert!(!output.exists());
}
