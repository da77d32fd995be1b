//! The commands that change a list: `add`, `remove`, `merge`, `diff` and `apply`. Files are
//! changed in place under a lock and replaced atomically; on any error they are left as they
//! were.

use phishbloom_blocklist::BlocklistFile;
use phishbloom_blocklist::DeltaFile;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use phishbloom_blocklist::atomic::{write_atomic, EditLock};
use phishbloom_blocklist::documents::DocumentFormat;
use phishbloom_blocklist::entries::{read_entries, EntrySource, Role};
use phishbloom_blocklist::near::read_near_docs;
use phishbloom_blocklist::now;
use phishbloom_blocklist::source::{read_list, read_list_groups, Format, ListOptions};
use phishbloom_blocklist::Input;
use phishbloom_core::delta::{Additions, AnyDelta, Delta, DiffOptions, ListView};
use phishbloom_core::engine::DEFAULT_EXPRESSION_BOUND;
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::Change;
use phishbloom_core::{fmt, Blocklist, Kind};

use crate::args::{ApplyArgs, ChangeArgs, DiffArgs, MergeArgs};
use crate::commands::plural;

/// `add`: the items (and the `--from` list) join the list; for a near-duplicate list the
/// items (and `--from`) are document files, fingerprinted as the list's were.
pub fn add(args: &ChangeArgs) -> anyhow::Result<ExitCode> {
    change(args, "added", |list, items| {
        if list.kind() == Kind::Near {
            let paths: Vec<PathBuf> = items
                .iter()
                .map(|item| PathBuf::from(String::from_utf8_lossy(item).into_owned()))
                .collect();
            let method = list.near_engine()?.method();
            let (docs, _) = read_near_docs(
                &paths,
                DocumentFormat::Auto,
                &method,
                args.category.as_deref(),
            )?;
            return Ok(list.add_near(docs)?);
        }
        if list.meta().scheme == KeyScheme::Expressions {
            warn_public_suffixes(items);
        }
        Ok(list.add(items, args.category.as_deref())?)
    })
}

/// Warns about items that are domain entries of a public suffix (`com`, `co.uk`): each lists
/// every site registered under it, as `build` warns.
fn warn_public_suffixes(items: &[&[u8]]) {
    let suffixes: Vec<String> = items
        .iter()
        .filter_map(|item| match phishbloom_url::Entry::parse(item) {
            Ok(phishbloom_url::Entry::Domain { host })
                if phishbloom_blocklist::entries::is_public_suffix(&host) =>
            {
                Some(format!("{host:?}"))
            }
            _ => None,
        })
        .collect();
    if !suffixes.is_empty() {
        eprintln!(
            "phishbloom: warning: {} {} a public suffix, listing every site registered under it",
            suffixes.join(", "),
            if suffixes.len() == 1 {
                "is"
            } else {
                "are each"
            }
        );
    }
}

/// `remove`: the items (and the `--from` list) leave the list (or `--category`).
pub fn remove(args: &ChangeArgs) -> anyhow::Result<ExitCode> {
    change(args, "removed", |list, items| {
        Ok(list.remove(items, args.category.as_deref())?)
    })
}

/// Locks, opens, changes and saves the file; prints what changed.
fn change(
    args: &ChangeArgs,
    verb: &str,
    apply: impl FnOnce(&mut Blocklist, &[&[u8]]) -> phishbloom_blocklist::Result<Change>,
) -> anyhow::Result<ExitCode> {
    let _lock = EditLock::acquire(&args.file, args.lock_timeout)?;
    let mut list = Blocklist::open(&args.file)?;
    let mut items: Vec<Vec<u8>> = args.items.iter().map(|i| i.as_bytes().to_vec()).collect();
    let mut inputs = Vec::new();
    if let Some(from) = &args.from {
        let input = Input::from_arg(from);
        inputs.extend(input.file().map(Path::to_path_buf));
        if list.kind() == Kind::Near {
            // A near-duplicate list's documents: the file itself is read as documents.
            items.push(from.as_bytes().to_vec());
        } else {
            items.extend(read_items(&input, list.meta().scheme)?);
        }
    }
    let slices: Vec<&[u8]> = items.iter().map(Vec::as_slice).collect();
    let change = apply(&mut list, &slices)?;
    save(&list, &args.file, &inputs)?;
    let near = list.kind() == Kind::Near;
    let unchanged = match (verb, change.unchanged) {
        (_, 0) => String::new(),
        ("added", n) if near => {
            format!(" ({} replaced a document of the same name)", fmt::count(n))
        }
        ("added", n) => format!(" ({} already listed)", fmt::count(n)),
        (_, n) => format!(" ({} not in that category)", fmt::count(n)),
    };
    println!(
        "{}: {verb} {}{unchanged}; {}",
        args.file.display(),
        if near {
            plural(change.changed, "document", "documents")
        } else {
            plural(change.changed, "entry", "entries")
        },
        state(&list)
    );
    Ok(ExitCode::SUCCESS)
}

/// The entries (or keys) of a list, read as `build` reads it.
fn read_items(input: &Input, scheme: KeyScheme) -> anyhow::Result<Vec<Vec<u8>>> {
    let options = ListOptions {
        format: Format::Auto,
        scheme,
        ..ListOptions::default()
    };
    if scheme == KeyScheme::Expressions {
        let source = EntrySource::List {
            input: input.clone(),
            options,
            category: None,
            role: Role::Block,
        };
        let (set, _) = read_entries(&[source])?;
        Ok(set
            .entries
            .iter()
            .map(|e| e.to_key_string().into_bytes())
            .collect())
    } else {
        let (keys, _) = read_list(input, &options, &mut |_| {})?;
        Ok(keys.iter().map(<[u8]>::to_vec).collect())
    }
}

/// Saves the list over `path`, naming the file in the error.
fn save(list: &Blocklist, path: &Path, inputs: &[PathBuf]) -> anyhow::Result<()> {
    list.save(path, inputs).with_context(|| {
        format!(
            "cannot write the blocklist; {} was left as it was",
            path.display()
        )
    })?;
    Ok(())
}

/// `list "NAME" version V, N entries, set fingerprint F`.
fn state(list: &Blocklist) -> String {
    let meta = list.meta();
    format!(
        "list {:?} version {}, {}{} entries, set fingerprint {}",
        meta.name,
        meta.version,
        if meta.exact_count { "" } else { "~" },
        fmt::count(meta.entries),
        meta.fingerprint
    )
}

/// `merge`: the union of two blocklists.
pub fn merge(args: &MergeArgs) -> anyhow::Result<ExitCode> {
    let mut first = Blocklist::open(&args.first)?;
    let second = Blocklist::open(&args.second)?;
    first.merge(&second).with_context(|| {
        format!(
            "cannot merge {} into {}",
            args.second.display(),
            args.first.display()
        )
    })?;
    // The output may be the first file (its content is in memory), never the second.
    save(&first, &args.output, std::slice::from_ref(&args.second))?;
    println!(
        "{}: merged {} and {}; {}",
        args.output.display(),
        args.first.display(),
        args.second.display(),
        state(&first)
    );
    Ok(ExitCode::SUCCESS)
}

/// `diff`: the delta from OLD to NEW.
pub fn diff(args: &DiffArgs) -> anyhow::Result<ExitCode> {
    let old = Version::read(&args.old)?;
    let new = Version::read(&args.new)?;
    if let (Version::Near(old, _), Version::Near(new, _)) = (&old, &new) {
        return diff_near(args, old, new);
    }
    // A list beside a blocklist is read the blocklist's way.
    let like = [&old, &new].into_iter().find_map(|v| match v {
        Version::File(view) => Some((view.scheme, view.probes_per_item)),
        Version::Near(..) | Version::List(_) => None,
    });
    let category = args.category.clone().unwrap_or_else(|| stem(&args.old));
    let old = old.view(args, like, &category)?;
    let new = new.view(args, like, &category)?;
    let options = DiffOptions {
        compact: args.compact,
        patch_fpp: args.patch_fpp,
        fpp: args.fpp,
        created: now(),
    };
    let delta = Delta::between(&old, &new, &options)?;
    let bytes = delta.to_bytes();
    let inputs: Vec<PathBuf> = [&args.old, &args.new]
        .into_iter()
        .filter(|a| *a != "-")
        .map(PathBuf::from)
        .collect();
    write_atomic(&args.output, &inputs, &[&bytes])?;
    let changes = delta.added.len() as u64 + delta.removed_count + delta.recategorized.len() as u64;
    let form = match &delta.added {
        Additions::Exact(_) => "exact: whole fingerprints".to_string(),
        Additions::Prefixes { bits, .. } => format!("compact: {bits}-bit prefixes"),
        Additions::Filter(filter) => format!(
            "compact: a ribbon filter of {}-bit results in {} slots",
            filter.bits(),
            filter.slots()
        ),
        Additions::Table { universe, .. } => {
            format!("a compact table's prefixes of a universe of {universe}")
        }
    };
    println!(
        "{}: +{} −{} entries, {} recategorized, {} ({form}, {:.2} bytes per change)",
        args.output.display(),
        fmt::count(delta.added.len() as u64),
        fmt::count(delta.removed_count),
        fmt::count(delta.recategorized.len() as u64),
        fmt::bytes(bytes.len() as u64),
        bytes.len() as f64 / changes.max(1) as f64,
    );
    println!(
        "  from {} to {} (set fingerprint {})",
        describe_version(delta.base.version, delta.base.entries),
        describe_version(delta.target.version, delta.target.entries),
        delta.target.fingerprint
    );
    Ok(ExitCode::SUCCESS)
}

/// `diff` of two near-duplicate list files: the documents removed and added (delta format 5).
fn diff_near(args: &DiffArgs, old: &Blocklist, new: &Blocklist) -> anyhow::Result<ExitCode> {
    let delta = old.near_delta_to(new, now())?;
    let bytes = delta.to_bytes();
    let inputs = [PathBuf::from(&args.old), PathBuf::from(&args.new)];
    write_atomic(&args.output, &inputs, &[&bytes])?;
    let changes = delta.removed.len() + delta.added.len();
    println!(
        "{}: +{} −{} documents (a replaced one counts in both), {} ({:.1} bytes per change)",
        args.output.display(),
        fmt::count(delta.added.len() as u64),
        fmt::count(delta.removed.len() as u64),
        fmt::bytes(bytes.len() as u64),
        bytes.len() as f64 / changes.max(1) as f64,
    );
    println!(
        "  from version {} ({} documents) to version {} (set fingerprint {})",
        delta.base.version,
        fmt::count(delta.base.entries),
        delta.target_version,
        delta.target_fingerprint
    );
    Ok(ExitCode::SUCCESS)
}

fn describe_version(version: u64, entries: u64) -> String {
    match version {
        0 => format!("{} entries", fmt::count(entries)),
        v => format!("version {v} ({} entries)", fmt::count(entries)),
    }
}

/// A version given to `diff`: a blocklist file (already read), a near-duplicate list file
/// (whose documents a near delta compares), or a list to read.
enum Version {
    File(ListView),
    Near(Box<Blocklist>, PathBuf),
    List(Input),
}

impl Version {
    /// A blocklist file if it starts with the blocklist magic, else a list.
    fn read(arg: &str) -> anyhow::Result<Version> {
        let input = Input::from_arg(arg);
        let Some(path) = input.file() else {
            return Ok(Version::List(input));
        };
        let mut magic = [0u8; 8];
        let is_blocklist = std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
            && magic == phishbloom_core::format::MAGIC;
        if !is_blocklist {
            return Ok(Version::List(input));
        }
        let list = Blocklist::open(path)?;
        if list.kind() == Kind::Near {
            return Ok(Version::Near(Box::new(list), path.to_path_buf()));
        }
        Ok(Version::File(ListView::of_blocklist(&list, path)?))
    }

    fn view(
        self,
        args: &DiffArgs,
        like: Option<(KeyScheme, u32)>,
        category: &str,
    ) -> anyhow::Result<ListView> {
        let input = match self {
            Version::File(view) => return Ok(view),
            Version::Near(list, path) => {
                return Ok(ListView::of_blocklist(&list, &path)?);
            }
            Version::List(input) => input,
        };
        let scheme = match like {
            Some((scheme, _)) => scheme,
            None if args.fold_case => KeyScheme::Folded,
            None if args.exact => KeyScheme::Exact,
            None => KeyScheme::Expressions,
        };
        let options = ListOptions {
            format: Format::Auto,
            scheme,
            ..ListOptions::default()
        };
        let mut view = if scheme == KeyScheme::Expressions {
            let probes = args
                .expressions
                .or(like.map(|(_, e)| e))
                .unwrap_or(DEFAULT_EXPRESSION_BOUND);
            let source = EntrySource::List {
                input,
                options,
                category: Some(category.to_string()),
                role: Role::Block,
            };
            let (set, _) = read_entries(&[source])?;
            ListView::of_entries(&set, probes)
        } else {
            let (groups, _) = read_list_groups(&input, &options, category, &mut |_| {})?;
            ListView::of_keys(&groups, scheme)
        };
        view.target_fpp = args.fpp;
        Ok(view)
    }
}

/// A list argument's name as `build` would name its category: the file's stem.
fn stem(arg: &str) -> String {
    match Input::from_arg(arg) {
        Input::Path(path) => path
            .file_stem()
            .map_or_else(|| "list".into(), |s| s.to_string_lossy().into_owned()),
        Input::Stdin => "stdin".into(),
    }
}

/// `apply`: the delta, checked, then saved over the file.
pub fn apply(args: &ApplyArgs) -> anyhow::Result<ExitCode> {
    let _lock = EditLock::acquire(&args.file, args.lock_timeout)?;
    let mut list = Blocklist::open(&args.file)?;
    let delta = AnyDelta::open(&args.delta)?;
    let applied = list.apply_any(&delta)?;
    save(&list, &args.file, std::slice::from_ref(&args.delta))?;
    let changes = match delta {
        AnyDelta::Near(_) => format!(
            "+{} −{} documents (a replaced one counts in both)",
            fmt::count(applied.added),
            fmt::count(applied.removed)
        ),
        AnyDelta::Entries(_) => format!(
            "+{} −{} entries, {} recategorized",
            fmt::count(applied.added),
            fmt::count(applied.removed),
            fmt::count(applied.recategorized)
        ),
    };
    println!(
        "{}: applied {}: {changes}; {} (the one the delta promised)",
        args.file.display(),
        args.delta.display(),
        state(&list)
    );
    if applied.kept > 0 {
        println!(
            "  {} removed entries still answer: a {} filter without a verification section cannot \
             forget them (they count as false positives until the file is rebuilt or fetched whole)",
            fmt::count(applied.kept),
            list.kind()
        );
    }
    Ok(ExitCode::SUCCESS)
}
