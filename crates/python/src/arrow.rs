//! Verdicts for a column of URLs through the Arrow C data interface: the URLs are read where
//! pyarrow holds them (no copy), answered on every core with the GIL released, and handed back
//! as columns named as `check --json` names its fields.

use std::ffi::CStr;
use std::sync::Arc;

use arrow_array::builder::{BooleanBuilder, ListBuilder, StringBuilder};
use arrow_array::cast::AsArray;
use arrow_array::ffi::{from_ffi, to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::{make_array, Array, ArrayRef, StructArray};
use arrow_schema::{DataType, Field};
use phishbloom_core::engine::Scratch;
use phishbloom_core::resolve::Verdict;
use phishbloom_core::Blocklist;
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyCapsuleMethods};

use crate::errors;

const SCHEMA: &CStr = c"arrow_schema";
const ARRAY: &CStr = c"arrow_array";

/// Items answered per `check_batch` call: enough for the batch's prefetches to overlap, few
/// enough that its verdicts stay in cache before they become column values.
const BATCH: usize = 1024;

/// The array an object exporting `__arrow_c_array__` (a pyarrow array) holds, imported without
/// copying its buffers.
pub fn import(object: &Bound<'_, PyAny>) -> PyResult<ArrayRef> {
    let (schema, array): (Bound<'_, PyCapsule>, Bound<'_, PyCapsule>) =
        object.call_method0("__arrow_c_array__")?.extract()?;
    let schema = schema
        .pointer_checked(Some(SCHEMA))?
        .cast::<FFI_ArrowSchema>();
    let array = array.pointer_checked(Some(ARRAY))?.cast::<FFI_ArrowArray>();
    // SAFETY: the capsules are named as the Arrow PyCapsule interface names them, so they point
    // to a valid ArrowSchema and ArrowArray. The array is moved out and an empty (released) one
    // left behind, as the interface asks of a consumer: the capsule's destructor then releases
    // nothing, and the buffers live until the imported array is dropped. The schema is only read.
    let data = unsafe {
        let array = std::ptr::replace(array.as_ptr(), FFI_ArrowArray::empty());
        from_ffi(array, schema.as_ref())
    }
    .map_err(|e| errors::wrong_type(format!("cannot read the Arrow array: {e}")))?;
    Ok(make_array(data))
}

/// The items of a string or binary column (`None` for a null), by row.
enum Items<'a> {
    Utf8(&'a arrow_array::StringArray),
    LargeUtf8(&'a arrow_array::LargeStringArray),
    Utf8View(&'a arrow_array::StringViewArray),
    Binary(&'a arrow_array::BinaryArray),
    LargeBinary(&'a arrow_array::LargeBinaryArray),
    /// A column of nulls only (pyarrow's type for `[]` and `[None, None]`).
    Null,
}

impl<'a> Items<'a> {
    fn of(array: &'a ArrayRef) -> PyResult<Self> {
        Ok(match array.data_type() {
            DataType::Utf8 => Items::Utf8(array.as_string::<i32>()),
            DataType::LargeUtf8 => Items::LargeUtf8(array.as_string::<i64>()),
            DataType::Utf8View => Items::Utf8View(array.as_string_view()),
            DataType::Binary => Items::Binary(array.as_binary::<i32>()),
            DataType::LargeBinary => Items::LargeBinary(array.as_binary::<i64>()),
            DataType::Null => Items::Null,
            other => {
                return Err(errors::wrong_type(format!(
                    "check_many takes strings or bytes; got an Arrow column of {other}"
                )))
            }
        })
    }

    fn get(&self, row: usize) -> Option<&'a [u8]> {
        fn at<'v, A: Array>(
            array: &A,
            row: usize,
            value: impl FnOnce() -> &'v [u8],
        ) -> Option<&'v [u8]> {
            array.is_valid(row).then(value)
        }
        match self {
            Items::Utf8(a) => at(*a, row, || a.value(row).as_bytes()),
            Items::LargeUtf8(a) => at(*a, row, || a.value(row).as_bytes()),
            Items::Utf8View(a) => at(*a, row, || a.value(row).as_bytes()),
            Items::Binary(a) => at(*a, row, || a.value(row)),
            Items::LargeBinary(a) => at(*a, row, || a.value(row)),
            Items::Null => None,
        }
    }
}

/// The verdict columns of some rows, built as they are answered.
struct Columns {
    verdict: StringBuilder,
    listed: BooleanBuilder,
    entry: StringBuilder,
    entry_kind: StringBuilder,
    categories: ListBuilder<StringBuilder>,
    categories_exact: BooleanBuilder,
    exception: StringBuilder,
    exception_kind: StringBuilder,
    error: StringBuilder,
    /// Clean rows answered and not yet written: written as one run (most rows are clean).
    clean_run: usize,
}

impl Columns {
    /// Columns with room for `rows` rows: grown once, not by doubling (a copy and fresh pages
    /// each time, a fifth of the time of a column of mostly clean URLs).
    fn with_capacity(rows: usize) -> Self {
        // "clean" and "listed" are 5 and 6 bytes; entries are rarer, and grow when they come.
        let names = || StringBuilder::with_capacity(rows, rows * 6);
        let sparse = || StringBuilder::with_capacity(rows, 0);
        Columns {
            verdict: names(),
            listed: BooleanBuilder::with_capacity(rows),
            entry: sparse(),
            entry_kind: sparse(),
            categories: ListBuilder::with_capacity(StringBuilder::new(), rows),
            categories_exact: BooleanBuilder::with_capacity(rows),
            exception: sparse(),
            exception_kind: sparse(),
            error: sparse(),
            clean_run: 0,
        }
    }

    /// A row for a null item: null in every column.
    fn push_null(&mut self) {
        self.write_clean_run();
        self.verdict.append_null();
        self.listed.append_null();
        self.append_nulls_after_listed(1);
    }

    /// A row for a clean item: "clean", not listed, the rest null (written with its run).
    fn push_clean(&mut self) {
        self.clean_run += 1;
    }

    /// Writes the clean rows answered so far, a column at a time.
    fn write_clean_run(&mut self) {
        let run = std::mem::take(&mut self.clean_run);
        if run == 0 {
            return;
        }
        for _ in 0..run {
            self.verdict.append_value("clean");
        }
        self.listed.append_n(run, false);
        self.append_nulls_after_listed(run);
    }

    /// `n` nulls in every column after `listed`.
    fn append_nulls_after_listed(&mut self, n: usize) {
        self.entry.append_nulls(n);
        self.entry_kind.append_nulls(n);
        self.categories.append_nulls(n);
        self.categories_exact.append_nulls(n);
        self.exception.append_nulls(n);
        self.exception_kind.append_nulls(n);
        self.error.append_nulls(n);
    }

    /// A row for a verdict: what `check --json` writes for it, a column per field.
    fn push(&mut self, verdict: &Verdict) {
        self.write_clean_run();
        self.verdict.append_value(verdict.status.name());
        self.listed.append_value(verdict.listed());
        let hit = verdict.hit.as_ref();
        self.entry.append_option(hit.map(|h| &h.expression));
        self.entry_kind.append_option(hit.map(|h| h.kind));
        if hit.is_some() {
            for category in &verdict.categories {
                self.categories.values().append_value(category);
            }
            self.categories.append(true);
            self.categories_exact.append_value(verdict.categories_exact);
        } else {
            self.categories.append_null();
            self.categories_exact.append_null();
        }
        let exception = verdict.exception.as_ref();
        self.exception
            .append_option(exception.map(|h| &h.expression));
        self.exception_kind.append_option(exception.map(|h| h.kind));
        self.error.append_option(verdict.error.as_ref());
    }

    fn finish(mut self) -> StructArray {
        self.write_clean_run();
        let string = |name: &str| Field::new(name, DataType::Utf8, true);
        let boolean = |name: &str| Field::new(name, DataType::Boolean, true);
        let list = Field::new_list(
            "categories",
            Field::new_list_field(DataType::Utf8, true),
            true,
        );
        let columns: Vec<(Arc<Field>, ArrayRef)> = vec![
            (Arc::new(string("verdict")), Arc::new(self.verdict.finish())),
            (Arc::new(boolean("listed")), Arc::new(self.listed.finish())),
            (Arc::new(string("entry")), Arc::new(self.entry.finish())),
            (
                Arc::new(string("entry_kind")),
                Arc::new(self.entry_kind.finish()),
            ),
            (Arc::new(list), Arc::new(self.categories.finish())),
            (
                Arc::new(boolean("categories_exact")),
                Arc::new(self.categories_exact.finish()),
            ),
            (
                Arc::new(string("exception")),
                Arc::new(self.exception.finish()),
            ),
            (
                Arc::new(string("exception_kind")),
                Arc::new(self.exception_kind.finish()),
            ),
            (Arc::new(string("error")), Arc::new(self.error.finish())),
        ];
        StructArray::from(columns)
    }
}

/// Rows per column set: small enough that its buffers (about 40 bytes a row) come from the
/// allocator's heap rather than fresh pages of their own, which cost a page fault each 4 KiB.
const CHUNK: usize = 1 << 16;

/// Answers the rows `range` of `items` into columns.
fn answer(list: &Blocklist, items: &Items<'_>, range: std::ops::Range<usize>) -> StructArray {
    let mut columns = Columns::with_capacity(range.len());
    let mut scratch = Scratch::default();
    let mut batch: Vec<&[u8]> = Vec::with_capacity(BATCH);
    let mut nulls: Vec<bool> = Vec::with_capacity(BATCH);
    let mut start = range.start;
    while start < range.end {
        let end = (start + BATCH).min(range.end);
        batch.clear();
        nulls.clear();
        for row in start..end {
            let item = items.get(row);
            nulls.push(item.is_none());
            batch.extend(item);
        }
        // Answers come for the non-null rows, in order; the null rows before each are
        // written first, and those after the last at the end.
        let mut row = 0;
        list.each_check(&batch, &mut scratch, |answer| {
            while nulls[row] {
                columns.push_null();
                row += 1;
            }
            match answer {
                Some(verdict) => columns.push(&verdict),
                None => columns.push_clean(),
            }
            row += 1;
        });
        for _ in row..nulls.len() {
            columns.push_null();
        }
        start = end;
    }
    columns.finish()
}

/// The verdicts of `array`'s rows on `threads` threads: column sets of at most [`CHUNK`] rows,
/// in row order.
pub fn check_column(
    list: &Blocklist,
    array: &ArrayRef,
    threads: usize,
) -> PyResult<Vec<StructArray>> {
    let items = Items::of(array)?;
    let rows = array.len();
    if rows == 0 {
        // No rows: one empty set, so that the caller always has the columns' types.
        return Ok(vec![Columns::with_capacity(0).finish()]);
    }
    let threads = threads.clamp(1, rows.div_ceil(BATCH).max(1));
    let share = rows.div_ceil(threads);
    Ok(std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let range = (t * share).min(rows)..((t + 1) * share).min(rows);
                let items = &items;
                scope.spawn(move || {
                    (range.start..range.end)
                        .step_by(CHUNK)
                        .map(|start| answer(list, items, start..(start + CHUNK).min(range.end)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            // A panic in a thread is a bug: it is raised again here, as a single thread would.
            .flat_map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    }))
}

/// Verdict columns for some rows, exported through `__arrow_c_array__` (a record batch to
/// `pyarrow.record_batch`).
#[pyclass(module = "phishbloom", name = "VerdictColumns", frozen)]
pub struct VerdictColumns {
    columns: StructArray,
}

impl VerdictColumns {
    /// Columns to hand to Python.
    pub fn new(columns: StructArray) -> Self {
        VerdictColumns { columns }
    }
}

#[pymethods]
impl VerdictColumns {
    /// The Arrow PyCapsule interface: the columns as a struct array, exported without a copy.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        // The schema is ours; a consumer asking for another casts afterwards.
        let _ = requested_schema;
        let (array, schema) = to_ffi(&self.columns.to_data())
            .map_err(|e| errors::wrong_type(format!("cannot export the verdicts: {e}")))?;
        Ok((
            PyCapsule::new_with_value(py, schema, SCHEMA)?,
            PyCapsule::new_with_value(py, array, ARRAY)?,
        ))
    }

    fn __len__(&self) -> usize {
        self.columns.len()
    }
}
