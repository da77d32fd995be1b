//! The `phishbloom-lab` binary end to end: its commands, its errors, and the measurement worker
//! mode that the keyword section spawns it in.

use std::process::Command;

use phishbloom_lab::measure::keywords::CHILD_ENV;

fn lab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_phishbloom-lab"))
}

#[test]
fn help_lists_the_report_and_the_experiments() {
    let output = lab().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for command in ["report", "experiment"] {
        assert!(help.contains(command), "{command} missing: {help}");
    }
}

#[test]
fn a_missing_dataset_is_an_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let output = lab()
        .args(["report", "--quick", "--data"])
        .arg(dir.path().join("absent.csv"))
        .arg("--out")
        .arg(dir.path().join("report"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("phishbloom-lab: error:") && stderr.contains("absent.csv"),
        "{stderr}"
    );
}

#[test]
fn the_binary_serves_a_keyword_measurement_job_and_reports_its_peak_memory() {
    let dir = tempfile::tempdir().unwrap();
    let keywords = dir.path().join("keywords.txt");
    std::fs::write(&keywords, "free money\nwire transfer\n中奖\n").unwrap();
    let out = dir.path().join("keywords.bloom");
    // A `Job::Build`, as the keyword section serializes it for its child.
    let job = format!(
        r#"{{"Build":{{"keywords":{:?},"out":{:?},"verify":false}}}}"#,
        keywords.to_str().unwrap(),
        out.to_str().unwrap()
    );
    let output = lab().env(CHILD_ENV, job).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    assert!(stdout.contains("\"structure_bytes\":"), "{stdout}");
    if cfg!(target_os = "linux") {
        assert!(!stdout.contains("\"peak_rss\":null"), "{stdout}");
    }
    assert!(out.is_file());

    let output = lab().env(CHILD_ENV, "not a job").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
}
