//! What is blocked: a query name checked against every list as `check` checks the URL
//! `http://NAME/` — the name and each parent domain against domain entries, exceptions allowing,
//! the categories a list was told to keep — and how a blocked name is answered.

use std::net::IpAddr;
use std::str::FromStr;

use phishbloom_core::engine::Scratch;
use phishbloom_core::Blocklist;

use crate::error::Error;

/// A list and the name it is known by in answers.
pub struct Named {
    /// The name (the file's stem, or the list's own name).
    pub name: String,
    /// The list.
    pub list: Blocklist,
}

/// How a blocked name is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BlockWith {
    /// NXDOMAIN: the name does not exist (the default; what Pi-hole and AdGuard call "NXDOMAIN
    /// blocking").
    NxDomain,
    /// NOERROR with no answer.
    NoData,
    /// REFUSED.
    Refused,
    /// `0.0.0.0` to an A query and `::` to an AAAA query (no answer to other types).
    Null,
    /// This address to a query of its family (no answer to other types).
    Ip(IpAddr),
}

impl FromStr for BlockWith {
    type Err = Error;

    fn from_str(given: &str) -> Result<Self, Error> {
        Ok(match given {
            "nxdomain" => BlockWith::NxDomain,
            "nodata" => BlockWith::NoData,
            "refused" => BlockWith::Refused,
            "null" => BlockWith::Null,
            other => BlockWith::Ip(other.parse().map_err(|_| Error::BlockWith {
                given: other.to_string(),
            })?),
        })
    }
}

/// Why a name is blocked: the list, its entry, the entry's categories.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The list's name.
    pub list: String,
    /// The entry that lists the name.
    pub entry: String,
    /// Its categories.
    pub categories: Vec<String>,
    /// Whether the name is blocked for categories the operator chose (`--category`): RFC 8914's
    /// "Filtered" rather than "Blocked".
    pub filtered: bool,
}

impl Blocked {
    /// The Extended DNS Error text (RFC 8914 §2: UTF-8 for humans): the list, the entry and
    /// its categories.
    pub fn text(&self) -> String {
        let mut text = format!("phishbloom: {} lists {}", self.list, self.entry);
        if !self.categories.is_empty() {
            text.push_str(&format!(" ({})", self.categories.join(", ")));
        }
        text
    }
}

/// The lists and how a blocked name is answered.
pub struct Policy {
    lists: Vec<Named>,
    /// How a blocked name is answered.
    pub block_with: BlockWith,
    /// Whether the lists keep only categories the operator chose.
    filtered: bool,
}

impl Policy {
    /// Each list's name and when it was written (seconds since the Unix epoch; 0: unknown).
    pub fn written(&self) -> Vec<(&str, u64)> {
        self.lists
            .iter()
            .map(|named| (named.name.as_str(), named.list.meta().created))
            .collect()
    }

    /// A policy over `lists` (asked in order: the first that lists a name names it).
    pub fn new(lists: Vec<Named>, block_with: BlockWith) -> Self {
        Policy {
            lists,
            block_with,
            filtered: false,
        }
    }

    /// The policy, its blocks marked as filtered for categories the operator chose
    /// (`filtered`), which the Extended DNS Error says ("Filtered", code 17).
    pub fn filtered(mut self, filtered: bool) -> Self {
        self.filtered = filtered;
        self
    }

    /// Why `host` (a query name's labels joined by dots, without the root's: see
    /// [`crate::answer::host_of`]) is blocked, if it is: the first list whose verdict for
    /// `http://HOST/` is "listed" (an exception's "allowed" is not blocked).
    pub fn blocked(&self, host: &str, scratch: &mut Scratch) -> Option<Blocked> {
        if host.is_empty() {
            return None;
        }
        let item = format!("http://{host}/");
        self.lists.iter().find_map(|named| {
            let verdict = named.list.check(item.as_bytes(), scratch);
            verdict.listed().then(|| Blocked {
                list: named.name.clone(),
                entry: verdict
                    .hit
                    .as_ref()
                    .map_or_else(|| host.to_string(), |hit| hit.expression.clone()),
                categories: verdict.categories,
                filtered: self.filtered,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_with_reads_every_form_and_refuses_the_rest() {
        assert_eq!(
            "nxdomain".parse::<BlockWith>().unwrap(),
            BlockWith::NxDomain
        );
        assert_eq!("null".parse::<BlockWith>().unwrap(), BlockWith::Null);
        assert_eq!(
            "192.0.2.7".parse::<BlockWith>().unwrap(),
            BlockWith::Ip("192.0.2.7".parse().unwrap())
        );
        let error = "sinkhole".parse::<BlockWith>().unwrap_err().to_string();
        assert!(error.contains("nxdomain, nodata"), "{error}");
    }

    #[test]
    fn the_text_names_the_list_the_entry_and_its_categories() {
        let blocked = Blocked {
            list: "ut1".into(),
            entry: "evil.example".into(),
            categories: vec!["phishing".into()],
            filtered: false,
        };
        assert_eq!(
            blocked.text(),
            "phishbloom: ut1 lists evil.example (phishing)"
        );
    }
}
