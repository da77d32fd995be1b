//! `phishbloom.Blocklist` and `phishbloom.Verdict`: a blocklist file opened, or built from
//! lists as `phishbloom build` builds it, asked about one URL or a column of them, and keyword
//! lists asked to scan a text.

use std::path::PathBuf;

use phishbloom_blocklist::atomic::check_output;
use phishbloom_blocklist::build::{apply_never, entry_sources, read_key_groups};
use phishbloom_blocklist::entries::read_entries;
use phishbloom_blocklist::plan_check::{BuildPlan, PlanField};
use phishbloom_blocklist::source::{Format, LabelFilter, ListOptions};
use phishbloom_blocklist::{BlocklistFile, Input};
use phishbloom_core::engine::{Scratch, DEFAULT_EXPRESSION_BOUND};
use phishbloom_core::keys::KeyScheme;
use phishbloom_core::scan::{ScanOptions, Scanner};
use phishbloom_core::{BuildOptions, Kind};
use phishbloom_filter::HashStrategy;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::arrow::{check_column, import, VerdictColumns};
use crate::errors;

/// The answer for one item, with the fields of `check --json`.
#[pyclass(module = "phishbloom", name = "Verdict", frozen, eq, get_all)]
#[derive(Clone, PartialEq)]
pub struct Verdict {
    /// "clean", "listed", "allowed" or "invalid".
    verdict: &'static str,
    /// Whether an entry lists the item (and no exception allows it).
    listed: bool,
    /// The entry that lists it (also when an exception allows it).
    entry: Option<String>,
    /// "domain" or "url".
    entry_kind: Option<String>,
    /// The entry's categories.
    categories: Vec<String>,
    /// Whether `categories` are exactly the entry's (else every one it may be in).
    categories_exact: bool,
    /// The exception that allows it.
    exception: Option<String>,
    /// "domain" or "url".
    exception_kind: Option<String>,
    /// Why an invalid item could not be checked.
    error: Option<String>,
}

impl From<phishbloom_core::resolve::Verdict> for Verdict {
    fn from(v: phishbloom_core::resolve::Verdict) -> Self {
        let listed = v.listed();
        let (entry, entry_kind) = v.hit.map_or((None, None), |h| {
            (Some(h.expression), Some(h.kind.to_string()))
        });
        let (exception, exception_kind) = v.exception.map_or((None, None), |h| {
            (Some(h.expression), Some(h.kind.to_string()))
        });
        Verdict {
            verdict: v.status.name(),
            listed,
            entry,
            entry_kind,
            categories: v.categories,
            categories_exact: v.categories_exact,
            exception,
            exception_kind,
            error: v.error,
        }
    }
}

#[pymethods]
impl Verdict {
    fn __bool__(&self) -> bool {
        self.listed
    }

    fn __repr__(&self) -> String {
        match &self.entry {
            Some(entry) => format!(
                "<Verdict {} by {} {entry:?} in {:?}>",
                self.verdict,
                self.entry_kind.as_deref().unwrap_or(""),
                self.categories
            ),
            None => format!("<Verdict {}>", self.verdict),
        }
    }
}

/// The bytes of an item: a str as UTF-8, bytes as they are.
pub fn item_bytes<'a>(item: &'a Bound<'_, PyAny>) -> PyResult<&'a [u8]> {
    if let Ok(text) = item.cast::<PyString>() {
        return Ok(text.to_str()?.as_bytes());
    }
    if let Ok(bytes) = item.cast::<PyBytes>() {
        return Ok(bytes.as_bytes());
    }
    Err(errors::wrong_type(format!(
        "an item to check is a str or bytes; got {}",
        item.get_type().name()?
    )))
}

/// The threads a call uses: as asked, else one per core.
fn threads(requested: Option<usize>) -> usize {
    requested
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A blocklist: URL entries, whole keys or keywords, as `phishbloom` builds and reads them.
#[pyclass(module = "phishbloom", name = "Blocklist", frozen)]
pub struct Blocklist {
    list: phishbloom_core::Blocklist,
}

/// The keyword arguments of `Blocklist.build`, as `phishbloom build` has them as flags.
#[derive(FromPyObject)]
#[pyo3(from_item_all)]
pub struct BuildArgs {
    output: Option<PathBuf>,
    category: Option<String>,
    ut1: Vec<PathBuf>,
    allow: Vec<PathBuf>,
    never: Option<PathBuf>,
    exact: bool,
    fold_case: bool,
    kind: String,
    fpp: Option<f64>,
    expressions: Option<u32>,
    verify: bool,
    capacity: Option<u64>,
    grow: bool,
    force: bool,
    host_gate: bool,
    format: String,
    column: String,
    label_column: Option<String>,
    label_value: Option<String>,
    all_rows: bool,
    category_column: Option<String>,
    name: Option<String>,
    threads: Option<usize>,
    hash: String,
    strict: bool,
}

impl BuildArgs {
    fn kind(&self) -> PyResult<Kind> {
        // A near-duplicate list is built from documents, by the CLI.
        Kind::from_name(&self.kind)
            .filter(|kind| Kind::FILTERS.contains(kind))
            .ok_or_else(|| {
                let names: Vec<&str> = Kind::FILTERS.iter().map(|kind| kind.name()).collect();
                errors::parameter(format!(
                    "kind must be one of {}; got {:?}",
                    names.join(", "),
                    self.kind
                ))
            })
    }

    fn format(&self) -> PyResult<Format> {
        Format::from_name(&self.format).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            errors::parameter(format!(
                "format must be one of {}; got {:?}",
                names.join(", "),
                self.format
            ))
        })
    }

    fn strategy(&self) -> PyResult<HashStrategy> {
        match self.hash.as_str() {
            "xxh3" => Ok(HashStrategy::Xxh3),
            "sha256" => Ok(HashStrategy::Sha256),
            other => Err(errors::parameter(format!(
                "hash must be \"xxh3\" or \"sha256\"; got {other:?}"
            ))),
        }
    }

    fn scheme(&self) -> KeyScheme {
        match (self.exact, self.fold_case) {
            (true, true) => KeyScheme::Folded,
            (true, false) => KeyScheme::Exact,
            (false, _) => KeyScheme::Expressions,
        }
    }

    /// The library's rules between options, refused in the keyword arguments' names.
    fn check(&self, kind: Kind) -> PyResult<()> {
        let plan = BuildPlan {
            scheme: self.scheme(),
            fold_case: self.fold_case,
            kind,
            strategy: self.strategy()?,
            grow: self.grow,
            capacity: self.capacity,
            expression_bound: self.expressions,
        };
        plan.check().map_err(|error| {
            let name = match error.field {
                PlanField::Kind => "kind",
                PlanField::Strategy => "hash",
                PlanField::FoldCase => "fold_case",
                PlanField::Grow => "grow",
                PlanField::Capacity => "capacity",
                PlanField::ExpressionBound => "expressions",
            };
            let value = error.value.map(|v| format!("={v:?}")).unwrap_or_default();
            errors::parameter(format!("{name}{value}: {}", error.rule))
        })
    }

    fn options(&self, kind: Kind, name: String) -> BuildOptions {
        let version = self.output.as_deref().map_or(1, |output| {
            phishbloom_core::Blocklist::read_meta(output)
                .map_or(1, |(_, meta)| meta.version.saturating_add(1))
        });
        BuildOptions {
            kind,
            fpp: self.fpp.unwrap_or(kind.default_fpp()),
            expression_bound: self.expressions.unwrap_or(DEFAULT_EXPRESSION_BOUND),
            // Checked by `BuildArgs::check` before a build.
            strategy: self.strategy().unwrap_or_default(),
            verify: self.verify,
            threads: threads(self.threads),
            name,
            version,
            created: phishbloom_blocklist::now(),
            capacity: self.capacity,
            grow: self.grow,
            force: self.force,
            host_gate: self.host_gate,
        }
    }
}

/// Builds the list `args` ask for from `sources` (the GIL released by the caller).
fn build(
    sources: &[PathBuf],
    args: &BuildArgs,
    kind: Kind,
) -> PyResult<phishbloom_core::Blocklist> {
    let name = args.name.clone().unwrap_or_else(|| {
        args.output
            .as_deref()
            .and_then(|o| o.file_stem())
            .map_or_else(|| "list".into(), |s| s.to_string_lossy().into_owned())
    });
    let options = args.options(kind, name);
    let scheme = args.scheme();
    let list_options = ListOptions {
        format: args.format()?,
        key_column: args.column.clone(),
        label: LabelFilter::from_options(
            args.label_column.as_deref(),
            args.label_value.as_deref(),
            args.all_rows,
        ),
        scheme,
        category_column: args.category_column.clone(),
    };
    let inputs: Vec<Input> = sources.iter().cloned().map(Input::Path).collect();
    let mut files: Vec<PathBuf> = sources.to_vec();
    let list = if args.exact {
        let groups = read_key_groups(
            &inputs,
            &list_options,
            args.category.as_deref(),
            &mut |_, _| {},
            &mut |_, _| {},
        )
        .map_err(errors::blocklist)?;
        phishbloom_core::Blocklist::from_keys(&groups, scheme, &options).map_err(errors::core)?
    } else {
        let allow: Vec<Input> = args.allow.iter().cloned().map(Input::Path).collect();
        let sources = entry_sources(
            &inputs,
            &list_options,
            args.category.as_deref(),
            &args.ut1,
            &allow,
        );
        files = sources.iter().flat_map(|s| s.files()).collect();
        let (set, summary) = read_entries(&sources).map_err(errors::blocklist)?;
        if args.strict && summary.public_suffixes > 0 {
            let examples: Vec<&str> = summary
                .public_suffix_examples
                .iter()
                .map(|(_, entry)| entry.as_str())
                .collect();
            return Err(errors::list(format!(
                "{} entries are public suffixes, each listing every site registered under it \
                 ({}); take them out of the list, or build without strict=True",
                summary.public_suffixes,
                examples.join(", ")
            )));
        }
        let mut list =
            phishbloom_core::Blocklist::from_entries(&set, &options).map_err(errors::core)?;
        if let Some(never) = &args.never {
            apply_never(&mut list, &set, never).map_err(errors::blocklist)?;
            files.push(never.clone());
        }
        list
    };
    if let Some(output) = &args.output {
        list.save(output, &files).map_err(errors::blocklist)?;
    }
    Ok(list)
}

#[pymethods]
impl Blocklist {
    /// The blocklist file at `path`, every checksum verified.
    #[staticmethod]
    fn open(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let list = py
            .detach(|| phishbloom_core::Blocklist::open(&path))
            .map_err(errors::blocklist)?;
        Ok(Blocklist { list })
    }

    /// Builds a blocklist from `sources` with `build`'s options (see the Python signature).
    #[staticmethod]
    fn _build(py: Python<'_>, sources: Vec<PathBuf>, args: BuildArgs) -> PyResult<Self> {
        let kind = args.kind()?;
        args.check(kind)?;
        if args.never.is_some() && args.exact {
            return Err(errors::parameter(
                "never applies to lists of URL entries, not exact keys",
            ));
        }
        if sources.is_empty() && args.ut1.is_empty() {
            return Err(errors::parameter(
                "give at least one source (or ut1 folders)",
            ));
        }
        if let Some(output) = &args.output {
            check_output(output, &sources).map_err(errors::blocklist)?;
        }
        let list = py.detach(|| build(&sources, &args, kind))?;
        Ok(Blocklist { list })
    }

    /// The verdict for one URL (or key, for a list of whole keys).
    fn check(&self, item: &Bound<'_, PyAny>) -> PyResult<Verdict> {
        let bytes = item_bytes(item)?;
        self.list.require_checkable().map_err(errors::core)?;
        let mut scratch = Scratch::default();
        Ok(self.list.check(bytes, &mut scratch).into())
    }

    /// The verdicts of an Arrow column of URLs, on `threads` threads with the GIL released.
    #[pyo3(signature = (array, threads = None))]
    fn _check_arrow(
        &self,
        py: Python<'_>,
        array: &Bound<'_, PyAny>,
        threads: Option<usize>,
    ) -> PyResult<Vec<VerdictColumns>> {
        self.list.require_checkable().map_err(errors::core)?;
        let array = import(array)?;
        let columns = py.detach(|| check_column(&self.list, &array, self::threads(threads)))?;
        Ok(columns.into_iter().map(VerdictColumns::new).collect())
    }

    /// Scans a text with a keyword list: the JSON of `scan --json`'s answer.
    #[pyo3(signature = (text, min_hits = 1))]
    fn _scan_json(&self, py: Python<'_>, text: &str, min_hits: u64) -> PyResult<String> {
        let options = ScanOptions {
            min_hits,
            confirm: true,
        };
        let verdict = py.detach(|| {
            let mut scanner = Scanner::new(&self.list, options)?;
            scanner.scan(text)
        });
        let verdict = verdict.map_err(errors::core)?;
        // DocumentVerdict serializes strings and numbers: it cannot fail.
        Ok(serde_json::to_string(&verdict).expect("a scan answer serializes"))
    }

    /// Writes the list to `path` atomically.
    fn save(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        py.detach(|| self.list.save(&path, &[]))
            .map(|_| ())
            .map_err(errors::blocklist)
    }

    /// The list's name.
    #[getter]
    fn name(&self) -> String {
        self.list.meta().name.clone()
    }

    /// The structure: blocked, classic, split, cuckoo, counting, cabf, compact.
    #[getter]
    fn kind(&self) -> &'static str {
        self.list.kind().name()
    }

    /// What it holds: url-expressions, exact, exact-folded, keywords.
    #[getter]
    fn scheme(&self) -> &'static str {
        self.list.meta().scheme.name()
    }

    /// Entries held.
    #[getter]
    fn entries(&self) -> u64 {
        self.list.meta().entries
    }

    /// The list's version.
    #[getter]
    fn version(&self) -> u64 {
        self.list.meta().version
    }

    /// The categories' names.
    #[getter]
    fn categories(&self) -> Vec<String> {
        self.list
            .categories()
            .iter()
            .map(|c| c.name.clone())
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "<Blocklist {:?} {} of {} entries ({}), version {}>",
            self.list.meta().name,
            self.list.kind().name(),
            self.list.meta().entries,
            self.list.meta().scheme.name(),
            self.list.meta().version
        )
    }
}
