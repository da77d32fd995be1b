//! Fuzz target: lines squid sends its external ACL helper (`[ID ]URL[ extras]`), answered by
//! `squid::run` (the `squid-helper` loop: the line parser, then the check) over the served
//! lists of `common/served.rs` (`phish` lists `evil.com`).
//!
//! Checks: no panic or error; one answer line per request line that holds a word (blank lines
//! get none), each `[ID ]OK message=…` or `[ID ]ERR`, the channel ID echoed when the line's
//! first word is digits followed by another word.

#![no_main]

#[path = "common/served.rs"]
mod served;

use libfuzzer_sys::fuzz_target;
use phishbloom_server::squid;

fuzz_target!(|data: &[u8]| {
    let served = served::served();
    let mut output = Vec::new();
    squid::run(&served.shared.lists, data, &mut output).expect("reading and writing memory");
    let mut answers = output.split(|&b| b == b'\n');
    assert_eq!(output.last().copied().unwrap_or(b'\n'), b'\n');
    let lines = data.strip_suffix(b"\n").unwrap_or(data);
    if !data.is_empty() {
        for line in lines.split(|&b| b == b'\n') {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let mut words = line
                .split(|b| b.is_ascii_whitespace())
                .filter(|w| !w.is_empty());
            let Some(first) = words.next() else { continue };
            let answer = answers.next().expect("an answer for every request");
            let answer = match words.next() {
                Some(_) if first.iter().all(u8::is_ascii_digit) => answer
                    .strip_prefix(first)
                    .and_then(|a| a.strip_prefix(b" "))
                    .expect("the channel ID first"),
                _ => answer,
            };
            assert!(
                answer == b"ERR"
                    || answer
                        .strip_prefix(b"OK message=")
                        .is_some_and(|label| !label.is_empty()
                            && label.iter().all(|&b| b > b' ' && b < 0x7f && b != b'"')),
                "answer {:?}",
                String::from_utf8_lossy(answer)
            );
        }
    }
    assert_eq!(
        answers.next(),
        Some(&b""[..]),
        "no answer beyond the requests"
    );
    assert_eq!(answers.next(), None);
    // Answering changes no list (a reading path that wrote would be put back here).
    served.restore([]);
});
