//! `phishbloom completions SHELL` and `phishbloom man [COMMAND]`, generated from the command
//! line's own definitions: a script each shell accepts, and roff pages that name every flag.

use std::process::Command as Process;

use crate::common::{installed, phishbloom};

/// What `phishbloom ARGS` prints; it must succeed.
fn printed(args: &[&str]) -> String {
    let output = phishbloom().args(args).output().expect("phishbloom runs");
    assert!(output.status.success(), "{args:?}: {output:?}");
    String::from_utf8(output.stdout).expect("the output is UTF-8")
}

#[test]
fn completions_are_generated_for_every_shell() {
    let bash = printed(&["completions", "bash"]);
    assert!(bash.contains("_phishbloom()"), "{bash}");
    assert!(bash.contains("complete -F _phishbloom"), "{bash}");
    // Subcommands and their flags are completed.
    assert!(
        bash.contains("build") && bash.contains("--verify"),
        "{bash}"
    );
    let zsh = printed(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef phishbloom"), "{zsh}");
    let fish = printed(&["completions", "fish"]);
    assert!(fish.contains("complete -c phishbloom"), "{fish}");
    let powershell = printed(&["completions", "powershell"]);
    assert!(
        powershell.contains("Register-ArgumentCompleter"),
        "{powershell}"
    );
}

#[test]
fn bash_accepts_the_completion_script_and_completes_a_subcommand() {
    assert!(
        installed("bash"),
        "bash is part of every machine CI runs on"
    );
    let script = printed(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("phishbloom.bash");
    std::fs::write(&path, script).unwrap();
    // Source the script, then ask its function what `phishbloom bu<TAB>` completes to.
    let probe = format!(
        "source {}; COMP_WORDS=(phishbloom bu); COMP_CWORD=1; COMP_LINE='phishbloom bu'; \
         COMP_POINT=${{#COMP_LINE}}; _phishbloom phishbloom bu phishbloom; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display()
    );
    let output = Process::new("bash").args(["-c", &probe]).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let replies = String::from_utf8_lossy(&output.stdout);
    assert!(replies.lines().any(|l| l == "build"), "{replies}");
}

#[test]
fn man_prints_roff_pages_for_the_binary_and_each_command() {
    let page = printed(&["man"]);
    assert!(page.contains(".TH phishbloom 1"), "{page}");
    assert!(
        page.contains("build"),
        "the page lists the commands: {page}"
    );
    let build = printed(&["man", "build"]);
    assert!(build.contains(".TH phishbloom-build 1"), "{build}");
    assert!(
        build.contains("\\-\\-verify"),
        "every flag of build is on its page: {build}"
    );
    let output = phishbloom()
        .args(["man", "no-such-command"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("no command `no-such-command`") && error.contains("build"),
        "{error}"
    );
}
