//! One sync of a list, driven by its caller's downloads: [`Session`] reads the index (its
//! signature checked against a trusted key), plans with [`Index::plan`] as `phishbloom sync`
//! does, names each download in turn, checks and applies what arrives, falls back to the whole
//! file when a delta chain fails, and confirms the version and set fingerprint the index
//! promised. The caller (JavaScript) only fetches the paths it is told, relative to the list's
//! base URL, and stores the list it ends with.
//!
//! Also [`next_poll`]: when to poll again (the publisher's least interval; Safe Browsing's
//! back-off after failures, as `phishbloom sync --every` waits).

use phishbloom_core::delta::Delta;
use phishbloom_core::sync::{DeltaLink, Download, Index, LocalState, Plan, PublicKey};
use phishbloom_core::Blocklist;

use crate::Loaded;

/// What a session does next.
enum Step {
    /// Download and apply `links[at]` to the list being built.
    Delta { links: Vec<DeltaLink>, at: usize },
    /// Download the whole file (`after`: why a chain was given up, if one was).
    Whole {
        file: Download,
        after: Option<String>,
    },
    /// Nothing more to download: finish.
    Done,
}

/// One sync in progress.
pub struct Session {
    index: Index,
    step: Step,
    /// The list being built: the local copy the deltas apply to, or the whole file read.
    working: Option<Blocklist>,
    /// The local list's file image, for a chain (read again into `working` at the first delta).
    local: Option<Vec<u8>>,
    /// How the list was reached: `current`, `whole`, `deltas`, or `whole after …`.
    via: String,
    /// Bytes handed to the session.
    downloaded: u64,
    /// Whether the list changes (false when the copy was current).
    changes: bool,
}

impl Session {
    /// Reads `index` (the bytes of `BASE/index.json`; `origin` names it in errors), checks
    /// its signature when `trust` (a public key's text form) is given, refuses it past its
    /// expiry at `now` (seconds since the Unix epoch), and plans from `local` (the list held,
    /// if any). A published version older than the local one is refused unless
    /// `allow_rollback`.
    pub fn begin(
        origin: &str,
        index: &[u8],
        trust: Option<&str>,
        local: Option<&Loaded>,
        allow_rollback: bool,
        now: u64,
    ) -> Result<Session, String> {
        let trust = trust
            .map(|text| PublicKey::parse("the trusted key", text))
            .transpose()
            .map_err(|e| e.to_string())?;
        let index = Index::from_json(origin, index, trust.as_ref()).map_err(|e| e.to_string())?;
        index
            .check_current(origin, now)
            .map_err(|e| e.to_string())?;
        let plan = index
            .plan(local.map(|l| LocalState::of(&l.list)), allow_rollback)
            .map_err(|e| e.to_string())?;
        let (step, local, via) = match plan {
            Plan::Current => (Step::Done, None, "current"),
            Plan::Whole(file) => (Step::Whole { file, after: None }, None, "whole"),
            Plan::Chain(links) => (
                Step::Delta { links, at: 0 },
                local.map(|l| l.list.to_bytes()),
                "deltas",
            ),
        };
        Ok(Session {
            changes: !matches!(step, Step::Done),
            index,
            step,
            working: None,
            local,
            via: via.to_owned(),
            downloaded: 0,
        })
    }

    /// The plan and index facts, as JSON: `name`, `version`, `min_interval`, `expires` (0:
    /// never), `plan` (`current`, `whole` or `deltas`), and `trusted`: the text form of the key
    /// that verified the index — the trusted key, or the one its hand-overs led to, which is
    /// the key to trust from now on (`null` when no key was trusted).
    pub fn summary(&self) -> serde_json::Value {
        let body = &self.index.body;
        let trusted = self.index.verified_by.as_ref();
        serde_json::json!({
            "name": body.name,
            "version": body.version,
            "min_interval": body.min_interval,
            "expires": body.expires,
            "plan": self.via,
            "trusted": trusted.map(|key| key.to_text("the key that signs this list")),
        })
    }

    /// The next download — its path relative to the base URL and its promised length — or
    /// `None` when the session can finish.
    pub fn next(&self) -> Option<(&str, u64)> {
        match &self.step {
            Step::Delta { links, at } => {
                links.get(*at).map(|l| (l.file.path.as_str(), l.file.bytes))
            }
            Step::Whole { file, .. } => Some((file.path.as_str(), file.bytes)),
            Step::Done => None,
        }
    }

    /// Takes the download [`Session::next`] named: its bytes, or the reason it could not be
    /// fetched. A failed delta (download, check or apply) switches to the whole file; a
    /// failed whole file ends the session with the error.
    pub fn give(&mut self, download: Result<&[u8], &str>) -> Result<(), String> {
        if let Ok(bytes) = download {
            self.downloaded += bytes.len() as u64;
        }
        match std::mem::replace(&mut self.step, Step::Done) {
            Step::Delta { links, at } => {
                // `at` is always a link of `links`: a plan's chain is never empty, and the
                // step only moves to `at + 1` while that is below `links.len()`.
                let Some(link) = links.get(at) else {
                    return Err("the sync has no such delta".to_owned());
                };
                match self.apply(link, download) {
                    Ok(()) if at + 1 < links.len() => self.step = Step::Delta { links, at: at + 1 },
                    Ok(()) => match self.confirmed() {
                        Ok(()) => self.step = Step::Done,
                        Err(why) => self.fall_back(why),
                    },
                    Err(why) => self.fall_back(why),
                }
                Ok(())
            }
            Step::Whole { file, after } => {
                let bytes = download.map_err(str::to_owned)?;
                file.check(bytes).map_err(|e| e.to_string())?;
                let list = Blocklist::from_bytes(&file.path, bytes).map_err(|e| e.to_string())?;
                self.index.confirm(&list).map_err(|e| e.to_string())?;
                self.working = Some(list);
                self.via = match after {
                    Some(why) => format!("whole after: {why}"),
                    None => "whole".to_owned(),
                };
                Ok(())
            }
            Step::Done => Err("the sync has nothing more to download".to_owned()),
        }
    }

    /// Checks and applies one delta to the list being built.
    fn apply(&mut self, link: &DeltaLink, download: Result<&[u8], &str>) -> Result<(), String> {
        let bytes = download.map_err(str::to_owned)?;
        link.file.check(bytes).map_err(|e| e.to_string())?;
        let delta = Delta::from_bytes(link.file.path.as_ref(), bytes).map_err(|e| e.to_string())?;
        if self.working.is_none() {
            let image = self
                .local
                .take()
                .ok_or("no local list to apply deltas to")?;
            let list =
                Blocklist::from_bytes("the local list", &image).map_err(|e| e.to_string())?;
            self.working = Some(list);
        }
        let list = self.working.as_mut().ok_or("no list to apply deltas to")?;
        list.apply(&delta).map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Whether the list built is the one the index promised.
    fn confirmed(&self) -> Result<(), String> {
        let list = self.working.as_ref().ok_or("no list was built")?;
        self.index.confirm(list).map_err(|e| e.to_string())
    }

    /// Gives up a chain: the whole file next.
    fn fall_back(&mut self, why: String) {
        self.working = None;
        self.step = Step::Whole {
            file: self.index.body.file.clone(),
            after: Some(why),
        };
    }

    /// Ends the session: the list reached (`None` when the copy was current) and what
    /// happened, as JSON (`plan`/`via`, `downloaded` bytes). An error if downloads remain.
    pub fn finish(mut self) -> Result<(Option<Blocklist>, serde_json::Value), String> {
        if let Some((path, _)) = self.next() {
            return Err(format!("the sync still needs {path}"));
        }
        let list = if self.changes {
            let list = self.working.take().ok_or("no list was built")?;
            self.index.confirm(&list).map_err(|e| e.to_string())?;
            Some(list)
        } else {
            None
        };
        let mut summary = self.summary();
        summary["via"] = serde_json::Value::from(self.via.clone());
        summary["downloaded"] = serde_json::Value::from(self.downloaded);
        summary["changed"] = serde_json::Value::from(list.is_some());
        Ok((list, summary))
    }
}

/// Seconds to wait before the next poll: the core's rule, shared with `phishbloom sync`.
pub use phishbloom_core::sync::next_poll;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::image;
    use phishbloom_core::sync::{IndexBody, SecretKey};

    /// An index for `list` (its image at `file`), signed by `key` when given, with `deltas`.
    fn index_of(image: &[u8], deltas: Vec<DeltaLink>, key: Option<&SecretKey>) -> Vec<u8> {
        let list = Blocklist::from_bytes("x", image).unwrap();
        IndexBody::describe(&list, Download::of("file", image), deltas).to_json(key)
    }

    /// Version 1 of a list, and version 2 with one more entry, and the delta between them.
    fn versions() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
        let v1 = image("t", &["evil.com"]);
        let mut list = Blocklist::from_bytes("t", &v1).unwrap();
        let old = Loaded::from_bytes("t", &v1).unwrap();
        list.add(&[b"worse.org".as_slice()], None).unwrap();
        let v2 = list.to_bytes();
        let delta = delta_between(&old.list, &list);
        (v1, v2, delta)
    }

    /// The delta from `old` to `new`, as `phishbloom diff` writes it.
    fn delta_between(old: &Blocklist, new: &Blocklist) -> Vec<u8> {
        use phishbloom_core::delta::{DiffOptions, ListView};
        let view = |l: &Blocklist| ListView::of_blocklist(l, "x".as_ref()).unwrap();
        Delta::between(&view(old), &view(new), &DiffOptions::default())
            .unwrap()
            .to_bytes()
    }

    fn link(delta: &[u8]) -> DeltaLink {
        DeltaLink {
            from: 1,
            to: 2,
            published: 0,
            file: Download::of("delta?from=1", delta),
        }
    }

    fn run(session: &mut Session, serve: impl Fn(&str) -> Result<Vec<u8>, String>) {
        while let Some((path, _)) = session.next() {
            let path = path.to_owned();
            let answer = serve(&path);
            session
                .give(answer.as_deref().map_err(String::as_str))
                .unwrap();
        }
    }

    #[test]
    fn a_first_sync_takes_the_whole_file_then_a_delta() {
        let (v1, v2, delta) = versions();
        let index = index_of(&v1, vec![], None);
        let mut session = Session::begin("i", &index, None, None, false, 1).unwrap();
        assert_eq!(session.next(), Some(("file", v1.len() as u64)));
        run(&mut session, |_| Ok(v1.clone()));
        let (list, summary) = session.finish().unwrap();
        assert_eq!(summary["via"], "whole");
        let local = Loaded {
            list: list.unwrap(),
            scratch: Default::default(),
        };
        let index = index_of(&v2, vec![link(&delta)], None);
        let mut session = Session::begin("i", &index, None, Some(&local), false, 1).unwrap();
        assert_eq!(session.summary()["plan"], "deltas");
        run(&mut session, |path| {
            assert_eq!(path, "delta?from=1");
            Ok(delta.clone())
        });
        let (list, summary) = session.finish().unwrap();
        assert_eq!(summary["via"], "deltas");
        assert_eq!(summary["downloaded"], delta.len());
        let mut loaded = Loaded {
            list: list.unwrap(),
            scratch: Default::default(),
        };
        assert_eq!(loaded.list.meta().version, 2);
        let verdict = loaded.list.check(b"http://worse.org/", &mut loaded.scratch);
        assert!(verdict.listed());
        let session = Session::begin("i", &index, None, Some(&loaded), false, 1).unwrap();
        assert_eq!(session.next(), None);
        let (list, summary) = session.finish().unwrap();
        assert!(list.is_none());
        assert_eq!(summary["via"], "current");
    }

    #[test]
    fn a_corrupt_or_missing_delta_falls_back_to_the_whole_file() {
        let (v1, v2, delta) = versions();
        let local = Loaded::from_bytes("t", &v1).unwrap();
        let index = index_of(&v2, vec![link(&delta)], None);
        let mut bad = delta.clone();
        bad[10] ^= 1;
        for answer in [Ok(bad), Err("404 Not Found".to_owned())] {
            let mut session = Session::begin("i", &index, None, Some(&local), false, 1).unwrap();
            run(&mut session, |path| match path {
                "file" => Ok(v2.clone()),
                _ => answer.clone(),
            });
            let (list, summary) = session.finish().unwrap();
            assert!(summary["via"]
                .as_str()
                .unwrap()
                .starts_with("whole after: "));
            assert_eq!(list.unwrap().meta().version, 2);
        }
        // A corrupt whole file ends the sync with its error.
        let mut session = Session::begin("i", &index, None, None, false, 1).unwrap();
        let mut bad = v2.clone();
        bad[20] ^= 1;
        let error = session.give(Ok(&bad)).unwrap_err();
        assert!(error.contains("SHA-256"), "{error}");
    }

    #[test]
    fn a_trusted_key_refuses_unsigned_and_foreign_indexes_and_rollback_is_refused() {
        let (v1, v2, _) = versions();
        let key = SecretKey::from_seed([7; 32]);
        let other = SecretKey::from_seed([8; 32]);
        let trust = key.public().to_text("test");
        let signed = index_of(&v1, vec![], Some(&key));
        assert!(Session::begin("i", &signed, Some(&trust), None, false, 1).is_ok());
        for index in [
            index_of(&v1, vec![], None),
            index_of(&v1, vec![], Some(&other)),
        ] {
            let error = Session::begin("i", &index, Some(&trust), None, false, 1)
                .err()
                .unwrap();
            assert!(error.contains("i"), "{error}");
        }
        assert!(Session::begin("i", &signed, Some("not a key"), None, false, 1).is_err());
        let newer = Loaded::from_bytes("t", &v2).unwrap();
        assert!(Session::begin("i", &signed, None, Some(&newer), false, 1).is_err());
        let session = Session::begin("i", &signed, None, Some(&newer), true, 1).unwrap();
        assert_eq!(session.summary()["plan"], "whole");
    }

    #[test]
    fn an_index_past_its_expiry_is_refused() {
        let (v1, _, _) = versions();
        let list = Blocklist::from_bytes("x", &v1).unwrap();
        let mut body = IndexBody::describe(&list, Download::of("file", &v1), vec![]);
        body.expires = 1_000;
        let index = body.to_json(None);
        assert!(Session::begin("i", &index, None, None, false, 999).is_ok());
        let refused = Session::begin("i", &index, None, None, false, 1_000)
            .err()
            .unwrap();
        assert!(refused.contains("expired at 1970-01-01"), "{refused}");
    }
}
