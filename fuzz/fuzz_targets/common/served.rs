//! Served lists for the server's fuzz targets: two small blocklists written once per process to
//! a temporary directory and opened as `phishbloom serve` opens them — `phish` (URL entries,
//! blocked Bloom filter with verification: listed `evil.com`, `bad.org/login`) and `leaked`
//! (exact keys, cuckoo: listed `hunter2`, `letmein`) — and a way to put the files back when an
//! input wrote to them, so every input starts from the same lists.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::EntrySet;
use phishbloom_core::{Blocklist, BuildOptions, KeyList, Kind};
use phishbloom_core::keys::KeyScheme;
use phishbloom_server::{Limits, ListSpec, Lists, Shared, Token};
use phishbloom_url::Entry;

/// The token that allows writes (`AUTH t`).
pub const TOKEN: &[u8] = b"t";

/// One list as it starts: its name, file, the file's bytes, and the version served (held, so
/// that a version made by an input is told apart by its address) with its file checksum.
struct Pristine {
    name: String,
    path: PathBuf,
    bytes: Vec<u8>,
    version: Arc<phishbloom_server::lists::Served>,
    checksum: Option<u64>,
}

impl Pristine {
    fn of(lists: &Lists, name: &str, path: PathBuf) -> Pristine {
        let version = lists.get(name.as_bytes()).unwrap().load();
        Pristine {
            name: name.into(),
            bytes: std::fs::read(&path).unwrap(),
            path,
            checksum: version.file_checksum(),
            version,
        }
    }

    /// Whether the list served is still this one, unchanged.
    fn unchanged(&self, lists: &Lists) -> bool {
        let now = lists.get(self.name.as_bytes()).unwrap().load();
        Arc::ptr_eq(&now, &self.version) && now.file_checksum() == self.checksum
    }
}

/// The lists and how they started.
pub struct Served {
    /// What a connection shares: the lists, default limits, the token [`TOKEN`].
    pub shared: Arc<Shared>,
    pristine: Mutex<Vec<Pristine>>,
}

/// The process's served lists, made on first use.
pub fn served() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        // In memory where there is a tmpfs: a write's fsyncs then cost nothing.
        let base = Some(PathBuf::from("/dev/shm"))
            .filter(|p| p.is_dir())
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("phishbloom-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        let phish = dir.join("phish.bloom");
        let entries = vec![
            Entry::parse(b"evil.com").unwrap(),
            Entry::parse(b"bad.org/login").unwrap(),
        ];
        let options = BuildOptions {
            name: "phish".into(),
            verify: true,
            capacity: Some(64),
            ..BuildOptions::default()
        };
        Blocklist::from_entries(&EntrySet::uncategorized(entries, "phishing"), &options)
            .unwrap()
            .save(&phish, &[])
            .unwrap();
        let leaked = dir.join("leaked.bloom");
        let mut keys = KeyList::default();
        keys.push(b"hunter2");
        keys.push(b"letmein");
        let options = BuildOptions {
            name: "leaked".into(),
            kind: Kind::Cuckoo,
            verify: true,
            capacity: Some(64),
            ..BuildOptions::default()
        };
        Blocklist::from_keys(&[("leaked".into(), keys)], KeyScheme::Exact, &options)
            .unwrap()
            .save(&leaked, &[])
            .unwrap();
        let specs = [
            ListSpec::parse(phish.to_str().unwrap()).unwrap(),
            ListSpec::parse(leaked.to_str().unwrap()).unwrap(),
        ];
        let lists = Lists::open(&specs, Arc::default()).unwrap();
        // Putting a file back is going back a version.
        lists.set_allow_rollback(true);
        let pristine = vec![
            Pristine::of(&lists, "phish", phish),
            Pristine::of(&lists, "leaked", leaked),
        ];
        Served {
            shared: Arc::new(Shared::new(lists, Limits::default(), Token::new(TOKEN))),
            pristine: Mutex::new(pristine),
        }
    })
}

impl Served {
    /// Puts back the files an input wrote to (and reloads them), and drops the filters it
    /// created over the Redis protocol (their keys are among `args`, the arguments it sent).
    pub fn restore<'a>(&self, args: impl IntoIterator<Item = &'a [u8]>) {
        let lists = &self.shared.lists;
        let mut pristine = self.pristine.lock().unwrap();
        if pristine.iter().any(|p| !p.unchanged(lists)) {
            for p in pristine.iter() {
                // By rename, as a writer does: a new file, whatever the clock's resolution.
                let temporary = p.path.with_extension("restore");
                std::fs::write(&temporary, &p.bytes).unwrap();
                std::fs::rename(&temporary, &p.path).unwrap();
            }
            let report = lists.reload(true);
            assert!(report.failed.is_empty(), "{:?}", report.failed);
            for p in pristine.iter_mut() {
                *p = Pristine::of(lists, &p.name, p.path.clone());
                assert_eq!(
                    p.bytes.len(),
                    std::fs::metadata(&p.path).unwrap().len() as usize
                );
            }
        }
        let adhoc = self.shared.lists.adhoc();
        if !adhoc.is_empty() {
            for arg in args {
                adhoc.remove(arg);
            }
            assert!(adhoc.is_empty(), "a filter created under a key never sent");
        }
    }
}
