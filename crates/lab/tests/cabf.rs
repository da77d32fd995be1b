//! CaBF and the BBF baselines on UT1 (when present) or generated lists: no false negatives, and
//! the orderings the experiments found, asserted with a margin at a fixed seed.

use std::path::PathBuf;

use phishbloom_blocklist::entries::{read_entries, EntrySource};
use phishbloom_core::engine::cabf::{entry_components, url_components, Split};
use phishbloom_filter::cabf::{longest_prefix, PrefixFilter, PrefixTable, Structure};
use phishbloom_filter::rng::SplitMix64;
use phishbloom_url::{canonicalize, Entry};

fn ut1() -> Option<PathBuf> {
    if std::env::var_os("PHISHBLOOM_TEST_GENERATED").is_some() {
        return None;
    }
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/ut1");
    dir.join("phishing/urls").is_file().then_some(dir)
}

fn word(rng: &mut SplitMix64) -> String {
    (0..3 + rng.below(6))
        .map(|_| char::from(b'a' + rng.below(26) as u8))
        .collect()
}

/// UT1 phishing + malware + gambling, or a generated list of the same mix.
fn entries() -> Vec<Entry> {
    if let Some(dir) = ut1() {
        let sources = ["phishing", "malware", "gambling"].map(|c| EntrySource::Ut1(dir.join(c)));
        return read_entries(&sources).unwrap().0.entries;
    }
    // Like real lists: hosts carry several URL entries, and path segments repeat across hosts.
    let mut rng = SplitMix64::new(5);
    let hosts: Vec<String> = (0..3_000)
        .map(|i| {
            format!(
                "{}.{}.{}",
                word(&mut rng),
                word(&mut rng),
                ["com", "net", "org"][i % 3]
            )
        })
        .collect();
    let segments: Vec<String> = (0..300).map(|_| word(&mut rng)).collect();
    let pick = |items: &[String], rng: &mut SplitMix64| {
        items[rng.below(items.len() as u64) as usize].clone()
    };
    (0..30_000)
        .map(|i| {
            let host = pick(&hosts, &mut rng);
            let line = match i % 4 {
                0 => host,
                1 => format!("{host}/{}", pick(&segments, &mut rng)),
                _ => format!(
                    "{host}/{}/{}/{}",
                    pick(&segments, &mut rng),
                    pick(&segments, &mut rng),
                    word(&mut rng)
                ),
            };
            Entry::parse(line.as_bytes()).unwrap()
        })
        .collect()
}

fn structures(entries: &[Vec<String>], bits: u64) -> Vec<Box<dyn PrefixFilter>> {
    Structure::PAPER
        .iter()
        .map(|s| s.build(entries, 8, bits, None).unwrap())
        .collect()
}

#[test]
fn no_structure_misses_a_listed_prefix() {
    let list = entries();
    for split in [Split::Slash, Split::ReversedHost] {
        let components: Vec<Vec<String>> =
            list.iter().map(|e| entry_components(split, e)).collect();
        let table = PrefixTable::new(&components);
        for structure in structures(&components, 10 * components.len() as u64) {
            let mut candidates = Vec::new();
            for (entry, sequence) in list.iter().zip(&components).step_by(7) {
                // The entry itself, and a URL below it: the entry is found as a prefix.
                let below = format!(
                    "http://{}/zz/yy?q=1",
                    entry.to_key_string().trim_end_matches('/')
                );
                let url = canonicalize(below.as_bytes()).unwrap();
                let query = url_components(split, &url, url.host());
                for q in [sequence, &query] {
                    structure.probe(q, &mut candidates);
                    assert!(
                        candidates[sequence.len() - 1],
                        "{} missed {entry} ({split:?})",
                        structure.name()
                    );
                    assert!(
                        longest_prefix(&*structure, Some(&table), q, &mut candidates)
                            >= sequence.len()
                    );
                }
            }
        }
    }
}

/// Member-query false-positive rate per prefix probe (the paper's setup).
fn member_fpp(filter: &dyn PrefixFilter, table: &PrefixTable, members: &[Vec<String>]) -> f64 {
    let (mut fp, mut negatives) = (0u64, 0u64);
    let mut candidates = Vec::new();
    for query in members {
        filter.probe(query, &mut candidates);
        for len in 1..=query.len() {
            if !table.contains(query, len) {
                negatives += 1;
                fp += u64::from(candidates[len - 1]);
            }
        }
    }
    fp as f64 / negatives.max(1) as f64
}

#[test]
fn correlation_check_and_cardinality_adaptation_help_at_equal_memory() {
    let list = entries();
    let components: Vec<Vec<String>> = list
        .iter()
        .map(|e| entry_components(Split::ReversedHost, e))
        .collect();
    let table = PrefixTable::new(&components);
    let bits = 10 * components.len() as u64;
    let fpp = |structure: Structure| {
        let filter = structure.build(&components, 8, bits, None).unwrap();
        member_fpp(&*filter, &table, &components)
    };
    let cabf = fpp(Structure::Cabf);
    let no_check = fpp(Structure::CabfNoCheck);
    let minus = fpp(Structure::CabfMinus);
    // Measured at 10 bits/entry, member queries: UT1 CaBF 0.085, without check 0.99, CaBF− 0.75;
    // the generated list 0.032, 1.0, 0.86. A 4× margin keeps both orderings meaningful.
    println!("member fpp: CaBF {cabf}, no check {no_check}, CaBF- {minus}");
    assert!(cabf * 4.0 < no_check, "check: {cabf} vs {no_check}");
    assert!(cabf * 4.0 < minus, "adaptation: {cabf} vs {minus}");
}
