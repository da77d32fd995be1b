//! Fuzz target: any byte sequence read as a DNS packet by `phishbloom dns` — as a client's
//! query (`answer::first`: FORMERR, REFUSED, a blocked answer or a query to forward) and, when
//! it parses, as an upstream's answer to itself (`answer::after_upstream`: its CNAMEs checked
//! against the list) — gives an answer that parses as a response with the packet's id, or no
//! answer: never a panic. An answer of this server's own is never larger than the query plus
//! one OPT record with the longest Extended DNS Error text (no amplification).
//! Run with `fuzz/run SECONDS dns_query` or `cargo +nightly fuzz run dns_query`.

#![no_main]

use std::sync::OnceLock;

use hickory_proto::op::Message;
use libfuzzer_sys::fuzz_target;
use phishbloom_core::engine::Scratch;
use phishbloom_core::{Blocklist, BuildOptions, EntrySet};
use phishbloom_dns::answer::{after_upstream, first, First};
use phishbloom_dns::policy::{BlockWith, Named, Policy};
use phishbloom_url::Entry;

/// A policy over a small list, built once.
fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let entries = ["evil.com", "bad.org/login", "a.b.example.net"]
            .iter()
            .map(|line| Entry::parse(line.as_bytes()).expect("a valid entry"))
            .collect();
        let set = EntrySet::uncategorized(entries, "fuzz");
        let list = Blocklist::from_entries(&set, &BuildOptions::default()).expect("it builds");
        Policy::new(
            vec![Named {
                name: "fuzz".into(),
                list,
            }],
            BlockWith::Null,
        )
    })
}

/// Bytes an answer of this server's own may add to its query: an OPT record (11 bytes), the
/// Extended DNS Error option (6 bytes and at most 200 of text), an address record (at most
/// 2 + 10 + 16 bytes with a compressed name), and the slack of name compression differences.
const MOST_ADDED: usize = 11 + 6 + 200 + 28 + 64;

fuzz_target!(|data: &[u8]| {
    let mut scratch = Scratch::default();
    for admitted in [true, false] {
        match first(data, admitted, policy(), &mut scratch) {
            First::Nothing => {}
            First::Answer(answer, _) => {
                let parsed = Message::from_vec(&answer).expect("an answer of ours parses");
                assert_eq!(answer[..2], data[..2], "the query's id");
                assert!(parsed.header().message_type() == hickory_proto::op::MessageType::Response);
                assert!(answer.len() <= data.len() + MOST_ADDED, "amplified");
            }
            First::Forward(query) => {
                // The packet as an upstream's answer to itself.
                if let Ok(response) = Message::from_vec(data) {
                    let (answer, _) =
                        after_upstream(&query, data.to_vec(), &response, policy(), &mut scratch);
                    assert!(!answer.is_empty());
                }
            }
        }
    }
});
