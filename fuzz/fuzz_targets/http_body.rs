//! Fuzz target: request bodies of `POST /v1/check`, read as the route reads them — a JSON batch
//! `{"urls": [...]}` (`http::parse_batch`) when the first byte is even, else NDJSON lines (JSON
//! strings or `{"url": …}` objects, `http::parse_ndjson`) — and the URLs read answered by the
//! checker over the served lists of `common/served.rs`, each answer line written.
//!
//! Checks: no panic; every answer line is one line of JSON; NDJSON lines are numbered 1, 2, …
//! and read the same whether the body arrives whole or cut at a line's end (as a stream's
//! chunks are answered).

#![no_main]

#[path = "common/served.rs"]
mod served;

use std::borrow::Cow;

use libfuzzer_sys::fuzz_target;
use phishbloom_core::engine::Scratch;
use phishbloom_server::check::Checker;
use phishbloom_server::http::{parse_batch, parse_ndjson};

/// Answers `urls` and checks that each answer is one line of JSON.
fn answer(urls: &[&[u8]]) {
    let served = served::served();
    let checker = Checker::new(&served.shared.lists, None).unwrap();
    let mut scratch = Scratch::default();
    let mut answers = Vec::new();
    checker.check(urls, &mut scratch, &mut answers);
    assert_eq!(answers.len(), urls.len());
    let mut out = Vec::new();
    for (url, answer) in urls.iter().zip(&answers) {
        out.clear();
        checker.write_line(url, answer, &mut out);
        let line = out.strip_suffix(b"\n").expect("a line");
        assert!(!line.contains(&b'\n'));
        if let Err(error) = serde_json::from_slice::<serde_json::Value>(line) {
            panic!("{error}: {}", String::from_utf8_lossy(line));
        }
    }
}

type Lines<'a> = Vec<(usize, Result<Cow<'a, str>, String>)>;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    // Small caps, so that inputs reach them.
    let (max_batch, max_line) = (8, 256);
    if mode % 2 == 0 {
        if let Ok(urls) = parse_batch(body, max_batch) {
            assert!(urls.len() <= max_batch);
            let urls: Vec<&[u8]> = urls.iter().map(|u| u.as_bytes()).collect();
            answer(&urls);
        }
        served::served().restore([]);
        return;
    }
    let mut line_no = 0;
    let whole: Lines = parse_ndjson(body, &mut line_no, max_line);
    for (i, (n, _)) in whole.iter().enumerate() {
        assert_eq!(*n, i + 1);
    }
    assert_eq!(line_no, whole.len());
    // Cut after the line holding byte `mode`, as a chunk of the stream would end.
    let at = usize::from(mode).min(body.len());
    let cut = memchr(&body[at..]).map_or(body.len(), |i| at + i + 1);
    let mut line_no = 0;
    let mut pieces: Lines = parse_ndjson(&body[..cut], &mut line_no, max_line);
    pieces.extend(parse_ndjson(&body[cut..], &mut line_no, max_line));
    assert_eq!(whole, pieces);
    let urls: Vec<&[u8]> = whole
        .iter()
        .filter_map(|(_, line)| line.as_ref().ok().map(|u| u.as_bytes()))
        .collect();
    answer(&urls);
    served::served().restore([]);
});

/// The first newline in `bytes`.
fn memchr(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}
