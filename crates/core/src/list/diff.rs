//! A [`Blocklist`]'s entries as a delta sees them ([`ListView::of_blocklist`]), for `diff`.

use std::path::Path;

use super::model::Blocklist;
use crate::delta::ListView;
use crate::error::{Error, Result};

impl ListView {
    /// The view of a blocklist file, which must have a verification section (the only record
    /// of its entries) and not be CaBF (whose section holds other fingerprints).
    pub fn of_blocklist(list: &Blocklist, path: &Path) -> Result<Self> {
        if list.kind() == crate::Kind::Near {
            return Err(Error::NearNoDelta {
                path: path.to_path_buf(),
            });
        }
        if list.kind() == crate::Kind::Cabf {
            return Err(Error::DeltaUnsuitable {
                path: path.to_path_buf(),
                problem: "a CaBF blocklist cannot be compared or patched; build the list as \
                          blocked, cuckoo or counting with a verification section"
                    .into(),
            });
        }
        if list.kind() == crate::Kind::Compact {
            return Err(Error::DeltaUnsuitable {
                path: path.to_path_buf(),
                problem: "a compact list holds its entries' fingerprint prefixes, not the \
                          fingerprints a delta names; diff the --verify lists built from the \
                          same sources (`publish` ships those compact, with deltas)"
                    .into(),
            });
        }
        let table = list.verification().ok_or_else(|| Error::DeltaUnsuitable {
            path: path.to_path_buf(),
            problem: "the blocklist has no verification section, so its entries are not known; \
                      diff the list files, or build both versions with their verification section"
                .into(),
        })?;
        let entries = table
            .fingerprints()
            .as_slice()
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let ids = match table.set_of().get(i) {
                    Some(&set) => table.sets().get(set).to_vec(),
                    None => vec![0],
                };
                (v, ids)
            })
            .collect();
        let meta = list.meta();
        Ok(ListView {
            scheme: meta.scheme,
            probes_per_item: meta.probes_per_item,
            version: Some(meta.version),
            target_fpp: meta.target_fpp,
            entries,
            categories: list.categories().iter().map(|c| c.name.clone()).collect(),
            exceptions: list
                .resolver()
                .exceptions()
                .sorted_keys()
                .into_iter()
                .map(str::to_string)
                .collect(),
            origin: path.to_path_buf(),
            universe: None,
            tops: list.resolver().tops().as_slice().to_vec(),
        })
    }
}
