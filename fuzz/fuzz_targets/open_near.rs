//! Fuzz target: a mutated near-duplicate list with every checksum recomputed
//! (`format::reseal`, as `open_keywords` does), so that mutations reach the near sections (the
//! fingerprinting parameters, the permuted tables, the exact hashes, the document records); a
//! list that opens is asked about two documents and a few fingerprints, edited and re-encoded.
//! Seeds: near-duplicate lists with 1 to 5 tables and short documents (`fuzz/run` makes them).
//!
//! Checks: no panic; a near list refuses `check`; every lookup within the list's distance
//! answers, each match at most that distance and the nearest first, and equals comparing with
//! every document's fingerprints (the lookup key within the distance, the check within the
//! check distance); a distance beyond the list's is an error; the re-encoded list
//! opens and answers the same; removing a document by name and adding it back restores the set
//! fingerprint (when the names are unique, as written).

#![no_main]

use libfuzzer_sys::fuzz_target;
use phishbloom_core::format::reseal;
use phishbloom_core::{Blocklist, Kind};
use phishbloom_text::simhash::{Fingerprint as DocFingerprint, SimHasher};

/// A document like the seeds' (the first) and one unlike them.
const DOCUMENTS: [&str; 2] = [
    "Dear customer, your account has been suspended. Verify your identity within 24 hours \
     at the link below or your access will be closed. Security team.",
    "Minutes of the meeting: the budget was approved.",
];

fuzz_target!(|data: &[u8]| {
    let mut bytes = data.to_vec();
    reseal(&mut bytes);
    let Ok(mut list) = Blocklist::from_bytes("fuzz-input", &bytes) else {
        return;
    };
    let _ = list.describe();
    if list.kind() != Kind::Near {
        return;
    }
    assert!(list.require_checkable().is_err());
    let engine = list.near_engine().expect("a near list has its engine");
    let distance = engine.tables().distance();
    let params = *engine.params();
    let docs: Vec<_> = engine.docs().collect();
    let mut hasher = SimHasher::new();
    let mut queries: Vec<DocFingerprint> = DOCUMENTS
        .iter()
        .map(|d| engine.fingerprint(d, &mut hasher))
        .collect();
    queries.extend(docs.iter().take(3).map(|d| d.fingerprint));
    let tail = |at: usize| {
        u64::from_le_bytes(
            data.get(at..at + 8)
                .and_then(|b| b.try_into().ok())
                .unwrap_or([0; 8]),
        )
    };
    queries.push(DocFingerprint::Sim {
        key: tail(0),
        check: tail(8),
    });
    let answers: Vec<_> = queries
        .iter()
        .map(|&q| {
            let found = list
                .near_fingerprint(q, Some(distance))
                .expect("a lookup within the list's distance answers");
            assert!(found.windows(2).all(|w| w[0].distance <= w[1].distance));
            // Brute force over the documents: the same names.
            let mut expected: Vec<&str> = docs
                .iter()
                .filter(|d| match (d.fingerprint, q) {
                    (
                        DocFingerprint::Sim { key: a, check: c },
                        DocFingerprint::Sim { key: b, check: e },
                    ) => {
                        (a ^ b).count_ones() <= distance
                            && (params.check_shingle == 0
                                || (c ^ e).count_ones() <= params.check_distance)
                    }
                    (DocFingerprint::Exact(a), DocFingerprint::Exact(b)) => a == b,
                    _ => false,
                })
                .map(|d| d.name.as_str())
                .collect();
            let mut names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
            expected.sort_unstable();
            names.sort_unstable();
            assert_eq!(names, expected);
            assert!(list.near_fingerprint(q, Some(distance + 1)).is_err());
            found
        })
        .collect();
    let again = Blocklist::from_bytes("re-encoded", &list.to_bytes())
        .expect("a near list that opens must re-encode to a file that opens");
    for (q, answer) in queries.iter().zip(&answers) {
        assert_eq!(&again.near_fingerprint(*q, None).unwrap(), answer);
    }
    // Names are unique as written; a reader does not check it (that would cost a sort of every
    // name at every open), and an edit keeps one document per name.
    let mut names: Vec<&str> = docs.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    let unique = names.windows(2).all(|w| w[0] != w[1]);
    if let Some(first) = docs.first().filter(|_| unique) {
        // The stored set fingerprint is the file's word; an edit recomputes it from the
        // documents, so compare two recomputed ones.
        list.add_near(Vec::new()).unwrap();
        let before = list.meta().fingerprint;
        list.remove_near(&[first.name.as_bytes()]).unwrap();
        let categories: Vec<String> = first
            .categories
            .iter()
            .filter_map(|&id| list_category(&again, id))
            .collect();
        list.add_near(vec![phishbloom_core::NamedDoc {
            fingerprint: first.fingerprint,
            name: first.name.clone(),
            categories,
        }])
        .unwrap();
        assert_eq!(list.meta().fingerprint, before);
    }
});

/// The name of category `id` of `list`.
fn list_category(list: &Blocklist, id: u16) -> Option<String> {
    list.categories().get(id as usize).map(|c| c.name.clone())
}
