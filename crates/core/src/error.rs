//! The error type of the check core: blocklist files that are damaged or not blocklist files at
//! all, lists that cannot take a change, deltas and sync indexes that do not fit, and the URL and
//! filter errors beneath. The core reads only from a [`crate::format::Source`]; what goes wrong
//! with files, inputs and outputs on a machine is `phishbloom-blocklist`'s error.
//!
//! Every message names the file and says what is wrong and what to do, once, in the library's own
//! terms; none names a command-line flag (the binary adds those).

use std::path::PathBuf;

/// Everything that can go wrong reading, checking and changing a list held in memory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading a file's bytes from its [`crate::format::Source`] failed (not a short file:
    /// that is [`Error::Truncated`]).
    #[error("{path}: cannot {action}: {error}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What was being read (`read`, `read the length of`, ...).
        action: &'static str,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A category name is not one of the list's.
    #[error("{path}: no category `{name}` in this list (it has: {available})")]
    UnknownCategory {
        /// The blocklist file.
        path: PathBuf,
        /// The name asked for.
        name: String,
        /// The list's categories, comma-separated.
        available: String,
    },

    /// The file does not start with the blocklist magic bytes.
    #[error(
        "{path}: not a phishbloom blocklist file (it starts with {found}); pass a file written \
         by `phishbloom build`"
    )]
    NotABlocklist {
        /// The file.
        path: PathBuf,
        /// Its first bytes, escaped.
        found: String,
    },

    /// The file is one of the format-1 files of phishbloom 0.1, which this version does not read.
    #[error(
        "{path}: this is {what} of phishbloom's first file format, which this version no longer \
         reads; rebuild the blocklist from its list with `phishbloom build` (a verification table \
         is now a section of the .bloom file)"
    )]
    OldFormat {
        /// The file.
        path: PathBuf,
        /// What kind of old file it is.
        what: &'static str,
    },

    /// The file's format version is newer than this build reads.
    #[error(
        "{path}: blocklist format version {found} is newer than this phishbloom reads (up to \
         {supported}); upgrade phishbloom, or rebuild the list with this version"
    )]
    Version {
        /// The file.
        path: PathBuf,
        /// The version recorded in the file.
        found: u32,
        /// The newest version this build reads.
        supported: u32,
    },

    /// The file is shorter than its header or section table says.
    #[error(
        "{path}: truncated: {got} bytes, but {expected} are needed; the copy is incomplete, copy \
         it again or rebuild it"
    )]
    Truncated {
        /// The file.
        path: PathBuf,
        /// The length the header implies (at least), in bytes.
        expected: u64,
        /// The length found.
        got: u64,
    },

    /// The file is longer than its header says.
    #[error(
        "{path}: {got} bytes, but its header says {expected}; something was appended or the \
         copy is damaged, copy it again or rebuild it"
    )]
    TrailingBytes {
        /// The file.
        path: PathBuf,
        /// The length the header records.
        expected: u64,
        /// The length found.
        got: u64,
    },

    /// A checksum does not match the bytes it covers.
    #[error(
        "{path}: checksum mismatch in the {section} (stored {stored:#018x}, computed \
         {computed:#018x}): the file is corrupted, copy it again or rebuild it"
    )]
    ChecksumMismatch {
        /// The file.
        path: PathBuf,
        /// What the checksum covers (`header`, `section table`, `filter section`, ...).
        section: String,
        /// The checksum stored in the file.
        stored: u64,
        /// The checksum of the bytes read.
        computed: u64,
    },

    /// Bytes that must be zero (padding between sections) are not.
    #[error(
        "{path}: the file is corrupted (non-zero padding at offset {offset}); copy it again or \
         rebuild it"
    )]
    BadPadding {
        /// The file.
        path: PathBuf,
        /// Where the padding starts.
        offset: u64,
    },

    /// The header records a kind this build does not know.
    #[error(
        "{path}: unknown blocklist kind {code}; the file was written by a newer phishbloom, \
         upgrade to read it"
    )]
    UnknownKind {
        /// The file.
        path: PathBuf,
        /// The kind code.
        code: u16,
    },

    /// A section this build does not know, and that readers must understand.
    #[error(
        "{path}: unknown required section {tag:#06x}; the file was written by a newer \
         phishbloom, upgrade to read it"
    )]
    UnknownSection {
        /// The file.
        path: PathBuf,
        /// The section tag.
        tag: u16,
    },

    /// A section the kind needs is absent.
    #[error("{path}: the {section} section is missing; the file is damaged, rebuild it")]
    MissingSection {
        /// The file.
        path: PathBuf,
        /// The section's name.
        section: &'static str,
    },

    /// A field holds a value no writer produces, or the structure is inconsistent.
    #[error("{path}: invalid {field} ({value}); the file is damaged, rebuild it")]
    InvalidField {
        /// The file.
        path: PathBuf,
        /// The field, named as docs/FORMAT.md names it.
        field: &'static str,
        /// Its value, or what is wrong with it.
        value: String,
    },

    /// Verification was required but the file has no verification section.
    #[error(
        "{path}: the blocklist has no verification section (it was built without \
         verification); rebuild it with verification to confirm hits"
    )]
    NoVerification {
        /// The file.
        path: PathBuf,
    },

    /// The blocklist holds keys of a scheme the operation cannot use.
    #[error("{path}: {problem}")]
    WrongScheme {
        /// The file.
        path: PathBuf,
        /// What does not fit.
        problem: String,
    },

    /// A line is not a blocklist entry (no host, too deep, …).
    #[error(transparent)]
    Entry(#[from] phishbloom_url::Error),

    /// An item to add or remove is not an entry of the list's kind.
    #[error("`{item}` is not a blocklist entry: {error}")]
    InvalidItem {
        /// The item, lossily decoded.
        item: String,
        /// Why.
        error: phishbloom_url::Error,
    },

    /// The list's structure cannot make this change.
    #[error(
        "{path}: cannot {action} a {kind} blocklist: its filter cannot forget an entry (and CaBF takes \
         none without a rebuild); a list that changes is a cuckoo or counting list with a \
         verification section, or a blocked one with a verification section (which then settles \
         removed entries)"
    )]
    CannotChange {
        /// The file (empty until the blocklist names it).
        path: PathBuf,
        /// The list's kind.
        kind: crate::kind::Kind,
        /// `add to` or `remove from`.
        action: &'static str,
    },

    /// A member of a never-warn list is listed by an entry, so it cannot answer clean.
    #[error(
        "member {} of the never-warn list is listed by the entry {entry:?}, so it cannot answer \
         clean; take the member out of the never-warn list or the entry out of the list",
        member + 1
    )]
    NeverListed {
        /// The member's index (from 0) among the members given.
        member: usize,
        /// The entry's key.
        entry: String,
    },

    /// A compact list asked to change in place.
    #[error(
        "{path}: cannot {action} a compact blocklist: its table is coded whole, so it changes only \
         by being built again from its sources"
    )]
    StaticList {
        /// The file.
        path: PathBuf,
        /// `add to`, `remove from`, `merge into`, `apply a delta to`.
        action: &'static str,
    },

    /// An option that does not apply to this kind of list.
    #[error("{what} cannot be used here: {why}")]
    Unsupported {
        /// The option.
        what: &'static str,
        /// Why, and what to use instead.
        why: &'static str,
    },

    /// A list that does not grow has no room for another entry.
    #[error(
        "{path}: the {kind} list is full: it holds {items} entries and has no room for the new ones, \
         and it does not grow; rebuild it with more room, or as a list that grows"
    )]
    Full {
        /// The file (empty until the blocklist names it).
        path: PathBuf,
        /// The list's kind.
        kind: crate::kind::Kind,
        /// Entries it holds.
        items: u64,
    },

    /// A key to remove is answered for by two layers of a growing list.
    #[error(
        "{path}: cannot remove the entry: {layers} layers of the growing list answer for it (its own \
         and another's false positive), and removing from the wrong one would drop another \
         entry; rebuild the list without it"
    )]
    AmbiguousRemoval {
        /// The file (empty until the blocklist names it).
        path: PathBuf,
        /// Layers that answer.
        layers: usize,
    },

    /// Two lists cannot be combined because a parameter differs.
    #[error(
        "the lists differ in {parameter} ({left} vs {right}); only lists built with the same \
         kind and sizing (kind, rate, capacity) can be merged — rebuild one like the other"
    )]
    Incompatible {
        /// What differs.
        parameter: &'static str,
        /// The first list's value.
        left: String,
        /// The second list's value.
        right: String,
    },

    /// Entries to add to a list of several categories, without saying which.
    #[error(
        "{path}: the list has several categories ({available}); name the category the entries join"
    )]
    CategoryNeeded {
        /// The file.
        path: PathBuf,
        /// Its categories.
        available: String,
    },

    /// Removal needs the exact list of entries, and this list has none.
    #[error(
        "{path}: cannot remove entries without the list's verification section (removing an \
         entry that is not in the list would make listed entries answer clean); build the list \
         with its verification section"
    )]
    RemoveNeedsVerification {
        /// The file.
        path: PathBuf,
    },

    /// Items to remove that are not in the list.
    #[error(
        "{path}: {count} item(s) to remove are not in the list (first: `{first}`); removing an \
         entry that is not there would make listed entries answer clean, so nothing was removed"
    )]
    NotListed {
        /// The file.
        path: PathBuf,
        /// How many.
        count: usize,
        /// The first of them.
        first: String,
    },

    /// A delta file that cannot be read.
    #[error("{path}: not a usable phishbloom delta: {problem}; fetch it again")]
    BadDelta {
        /// The delta file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },

    /// A delta or list that does not suit the operation.
    #[error("{path}: {problem}")]
    DeltaUnsuitable {
        /// The file.
        path: PathBuf,
        /// What does not fit, and what to do.
        problem: String,
    },

    /// A delta made for another version of the list.
    #[error(
        "{path}: the delta applies to {expected}, but the file is {found}; fetch the delta made \
         from this version, or the full file (the file was left as it was)"
    )]
    DeltaBase {
        /// The blocklist file.
        path: PathBuf,
        /// The base the delta names.
        expected: String,
        /// What the file is.
        found: String,
    },

    /// Applying a delta would not lead to the list it promises.
    #[error(
        "{path}: applying the delta would not give the list it promises ({detail}); the file \
         was left as it was — fetch the full file"
    )]
    DeltaCheck {
        /// The blocklist file.
        path: PathBuf,
        /// What differs.
        detail: String,
    },

    /// A capacity far beyond the entries, refused unless forced.
    #[error(
        "a capacity of {capacity} for {entries} entries is more than {ratio} times the list: \
         the file would be sized for a list that large (a typo such as 3e9 for 3e6?); give a \
         smaller capacity, or force it"
    )]
    CapacityTooLarge {
        /// The capacity asked for.
        capacity: u64,
        /// The entries the list has.
        entries: u64,
        /// The largest ratio taken unforced.
        ratio: u64,
    },

    /// A keyword list given to `check`.
    #[error(
        "{path}: a keyword list: it finds keywords and phrases inside text; use `phishbloom \
         scan {path} FILE…` (check answers whole URLs and keys)"
    )]
    KeywordList {
        /// The list.
        path: PathBuf,
    },

    /// A near-duplicate list given to `check`.
    #[error(
        "{path}: a near-duplicate list: it recognizes copies of known documents; use \
         `phishbloom scan {path} FILE…` (check answers whole URLs and keys)"
    )]
    NearList {
        /// The list.
        path: PathBuf,
    },

    /// A near-duplicate operation on a list of another kind.
    #[error(
        "{path}: a {kind} blocklist, not a near-duplicate list; build one with `phishbloom \
         build --near DOCS… -o FILE`"
    )]
    NotNear {
        /// The list.
        path: PathBuf,
        /// What it is.
        kind: crate::Kind,
    },

    /// `remove` of a document name a near-duplicate list does not hold.
    #[error(
        "{path}: no document named `{name}` in this near-duplicate list; `phishbloom info \
         --json {path}` lists the count, `phishbloom scan {path} FILE` the names that match"
    )]
    NearNameUnknown {
        /// The list.
        path: PathBuf,
        /// The name asked for.
        name: String,
    },

    /// A near-duplicate list compared as a list of entries.
    #[error(
        "{path}: a near-duplicate list holds documents, not entries: compare it with another \
         version of itself (`phishbloom diff OLD.bloom NEW.bloom`, a near delta)"
    )]
    NearNoDelta {
        /// The list.
        path: PathBuf,
    },

    /// A document printed by another method than the near-duplicate list's.
    #[error(
        "document `{name}` was fingerprinted for another kind of near-duplicate list than this \
         {method} one; fingerprint it with the list's own method (`phishbloom add LIST DOCS` does)"
    )]
    NearPrint {
        /// The document.
        name: String,
        /// The list's method (`minhash`, `simhash`).
        method: &'static str,
    },

    /// MinHash sketches an index cannot hold.
    #[error("near-duplicate sketches: {0}")]
    NearSketches(String),

    /// A near-duplicate list with more categories than ids can number.
    #[error(
        "{path}: {count} categories, more than {max}; give fewer distinct category names",
        max = crate::resolve::MAX_CATEGORIES
    )]
    NearTooManyCategories {
        /// The list.
        path: PathBuf,
        /// Categories asked for.
        count: usize,
    },

    /// An index that cannot be read (publish/sync protocol).
    #[error("{origin}: not a usable list index: {problem}")]
    BadIndex {
        /// Where the index came from.
        origin: String,
        /// What is wrong.
        problem: String,
    },

    /// An index that is not signed by the trusted key.
    #[error(
        "{origin}: refused: {problem}; the list was left as it was (check that the publisher \
         signs its index and that you trust the publisher's public key)"
    )]
    Untrusted {
        /// Where the index came from.
        origin: String,
        /// Why it is not trusted.
        problem: String,
    },

    /// A signing key that cannot be read.
    #[error("{origin}: not a phishbloom signing key: {problem}")]
    BadKey {
        /// The key file.
        origin: String,
        /// What is wrong.
        problem: String,
    },

    /// A download that is not what the index promised.
    #[error("{path}: the download is not the one the index names: {problem}")]
    Download {
        /// The download's path.
        path: String,
        /// What differs.
        problem: String,
    },

    /// A published version older than the one held.
    #[error(
        "{name}: the published version {published} is older than the local version {local}; \
         refusing to go back unless a rollback is allowed"
    )]
    Rollback {
        /// The list.
        name: String,
        /// The version held.
        local: u64,
        /// The version published.
        published: u64,
    },

    /// An index past the expiry its publisher signed into it.
    #[error(
        "{origin}: the index of list {name:?} expired at {} ({days} days ago): whoever serves it \
         may be withholding newer versions (a replayed or frozen index); the copy was kept as \
         it was — check the publisher (does it still publish?) and this machine's clock",
        crate::fmt::utc(*expired)
    )]
    Expired {
        /// Where the index was read.
        origin: String,
        /// The list.
        name: String,
        /// When it expired, in seconds since the Unix epoch.
        expired: u64,
        /// Whole days since then.
        days: u64,
    },

    /// An index of another list than the copy a client holds.
    #[error(
        "the index publishes list {published:?}, but the local copy holds list {local:?}; \
         refusing to replace one list by another (the list was left as it was; to follow \
         another list, sync it into a new file)"
    )]
    OtherList {
        /// The copy's list.
        local: String,
        /// The index's list.
        published: String,
    },

    /// A list reached by sync that is not the one the index promised.
    #[error("{name}: the index promised {promised}, the update gave {found}")]
    NotPromised {
        /// The list.
        name: String,
        /// What the index promised.
        promised: String,
        /// What the copy holds.
        found: String,
    },

    /// An error from the filter crate (sizing, parameters).
    #[error(transparent)]
    Filter(#[from] phishbloom_filter::Error),
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Builds an [`Error::Read`].
    pub fn read(path: impl Into<PathBuf>, action: &'static str, error: std::io::Error) -> Self {
        Error::Read {
            path: path.into(),
            action,
            error,
        }
    }

    /// Builds an [`Error::InvalidField`].
    pub fn invalid(path: impl Into<PathBuf>, field: &'static str, value: impl ToString) -> Self {
        Error::InvalidField {
            path: path.into(),
            field,
            value: value.to_string(),
        }
    }

    /// The error with its file named, for the errors of a structure that does not know its
    /// file ([`crate::structure::Layers`]); others are returned as they are.
    pub fn with_path(mut self, file: &std::path::Path) -> Self {
        if let Error::CannotChange { path, .. }
        | Error::CategoryNeeded { path, .. }
        | Error::Full { path, .. }
        | Error::AmbiguousRemoval { path, .. } = &mut self
        {
            if path.as_os_str().is_empty() {
                *path = file.to_path_buf();
            }
        }
        self
    }
}
