//! `phishbloom.BloomFilter`: rbloom's verbs over [`KeyFilter`]. Keys are hashed by their bytes —
//! a `str` as UTF-8, `bytes` as they are, an `int` as its decimal digits — with the crate's
//! stable hash, so a filter answers the same in every process, on every machine, and in
//! `phishbloom check` (a saved filter is a blocklist file of exact keys).

use std::borrow::Cow;
use std::path::PathBuf;

use phishbloom_blocklist::BlocklistFile;
use phishbloom_core::{Blocklist, KeyFilter};
use phishbloom_filter::LayoutKind;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyString, PyTuple};

use crate::errors;

/// Calls `f` with the bytes `key` is hashed as, borrowed where Python keeps them.
pub fn with_key<R>(key: &Bound<'_, PyAny>, f: impl FnOnce(&[u8]) -> R) -> PyResult<R> {
    if let Ok(text) = key.cast::<PyString>() {
        return Ok(f(text.to_str()?.as_bytes()));
    }
    if let Ok(bytes) = key.cast::<PyBytes>() {
        return Ok(f(bytes.as_bytes()));
    }
    if let Ok(bytes) = key.cast::<PyByteArray>() {
        return Ok(f(&bytes.to_vec()));
    }
    // `True` is an int to Python but would hash as "True": refused rather than guessed.
    if key.cast::<PyInt>().is_ok() && key.cast::<PyBool>().is_err() {
        let digits = key.str()?;
        return Ok(f(digits.to_str()?.as_bytes()));
    }
    Err(errors::wrong_type(format!(
        "a key is a str, bytes or int; got {}",
        key.get_type().name()?
    )))
}

/// The bytes of a `str` or `bytes` key where Python holds them; `None` for other keys.
fn borrowed_key<'a>(key: &'a Bound<'_, PyAny>) -> Option<&'a [u8]> {
    if let Ok(text) = key.cast::<PyString>() {
        return text.to_str().ok().map(str::as_bytes);
    }
    key.cast::<PyBytes>().ok().map(|bytes| bytes.as_bytes())
}

/// A Bloom filter of keys (str, bytes or int): never a false negative, false positives at
/// about `fp_rate` once `expected_items` distinct keys are in.
#[pyclass(module = "phishbloom", name = "BloomFilter")]
pub struct BloomFilter {
    inner: KeyFilter,
}

/// Keys `update` hashes and probes as one batch ([`KeyFilter::insert_batch`]).
const UPDATE_BATCH: usize = 256;

impl BloomFilter {
    fn of(inner: KeyFilter) -> Self {
        BloomFilter { inner }
    }

    /// Adds Python keys as one batch.
    fn insert_batch(&mut self, keys: &[Bound<'_, PyAny>]) -> PyResult<()> {
        // Keys Python holds as UTF-8 or bytes are borrowed; an int's digits are made here.
        let bytes = keys
            .iter()
            .map(|key| match borrowed_key(key) {
                Some(view) => Ok(Cow::Borrowed(view)),
                None => with_key(key, |made| Cow::Owned(made.to_vec())),
            })
            .collect::<PyResult<Vec<Cow<'_, [u8]>>>>()?;
        let views: Vec<&[u8]> = bytes.iter().map(|key| key.as_ref()).collect();
        self.inner.insert_batch(&views);
        Ok(())
    }

    /// A copy of this filter combined with each of `others` by `combine`.
    fn combined(
        &self,
        others: &Bound<'_, PyTuple>,
        combine: fn(&mut KeyFilter, &KeyFilter) -> phishbloom_core::Result<()>,
    ) -> PyResult<Self> {
        let mut result = self.inner.clone();
        for other in others.iter() {
            let other = other.cast::<BloomFilter>()?.borrow();
            combine(&mut result, &other.inner).map_err(errors::core)?;
        }
        Ok(Self::of(result))
    }
}

#[pymethods]
impl BloomFilter {
    /// An empty filter for `expected_items` keys at false-positive rate `fp_rate`.
    #[new]
    #[pyo3(signature = (expected_items, fp_rate, *, layout = "blocked"))]
    fn new(expected_items: i128, fp_rate: f64, layout: &str) -> PyResult<Self> {
        let items = errors::count("expected_items", expected_items)?;
        if !(fp_rate > 0.0 && fp_rate < 1.0) {
            return Err(errors::parameter(format!(
                "fp_rate must be between 0 and 1 (exclusive); got {fp_rate}"
            )));
        }
        let layout = layout.parse::<LayoutKind>().map_err(errors::parameter)?;
        let filter = KeyFilter::new(items, fp_rate, layout).map_err(errors::core)?;
        Ok(Self::of(filter))
    }

    /// Adds a key; True when the filter did not answer for it before.
    fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_key(key, |bytes| self.inner.insert(bytes))
    }

    /// Adds every key of every iterable.
    #[pyo3(signature = (*iterables))]
    fn update(&mut self, iterables: &Bound<'_, PyTuple>) -> PyResult<()> {
        for iterable in iterables.iter() {
            if let Ok(other) = iterable.cast::<BloomFilter>() {
                let other = other.borrow();
                self.inner.union(&other.inner).map_err(errors::core)?;
                continue;
            }
            let mut keys = Vec::with_capacity(UPDATE_BATCH);
            for key in iterable.try_iter()? {
                keys.push(key?);
                if keys.len() == UPDATE_BATCH {
                    self.insert_batch(&keys)?;
                    keys.clear();
                }
            }
            self.insert_batch(&keys)?;
        }
        Ok(())
    }

    fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
        with_key(key, |bytes| self.inner.contains(bytes))
    }

    /// Keys added (each counted when the filter did not yet answer for it); after `|` or `&`,
    /// the estimate from the bits.
    fn __len__(&self) -> usize {
        self.inner.len() as usize
    }

    fn __bool__(&self) -> bool {
        !self.inner.is_empty()
    }

    /// Distinct keys estimated from the bits set (Swamidass–Baldi).
    #[getter]
    fn approx_items(&self) -> f64 {
        self.inner.estimated_len()
    }

    /// The keys the filter was sized for.
    #[getter]
    fn expected_items(&self) -> u64 {
        self.inner.capacity()
    }

    /// The false-positive rate it was sized for.
    #[getter]
    fn fp_rate(&self) -> f64 {
        self.inner.target_fpp()
    }

    /// The false-positive rate the bits set now imply.
    fn expected_fp_rate(&self) -> f64 {
        self.inner.expected_fpp()
    }

    /// Bits in the filter.
    #[getter]
    fn size_in_bits(&self) -> u64 {
        self.inner.num_bits()
    }

    /// Bit positions set per key.
    #[getter]
    fn hash_functions(&self) -> u32 {
        self.inner.num_hashes()
    }

    /// "blocked", "classic" or "split".
    #[getter]
    fn layout(&self) -> &'static str {
        self.inner.layout().name()
    }

    fn __or__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.combined(&PyTuple::new(other.py(), [other])?, KeyFilter::union)
    }

    fn __and__(&self, other: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.combined(&PyTuple::new(other.py(), [other])?, KeyFilter::intersect)
    }

    fn __ior__(&mut self, other: PyRef<'_, BloomFilter>) -> PyResult<()> {
        self.inner.union(&other.inner).map_err(errors::core)
    }

    fn __iand__(&mut self, other: PyRef<'_, BloomFilter>) -> PyResult<()> {
        self.inner.intersect(&other.inner).map_err(errors::core)
    }

    /// A new filter holding the keys of this one and of every other.
    #[pyo3(signature = (*others))]
    fn union(&self, others: &Bound<'_, PyTuple>) -> PyResult<Self> {
        self.combined(others, KeyFilter::union)
    }

    /// A new filter of the bits this one and every other set.
    #[pyo3(signature = (*others))]
    fn intersection(&self, others: &Bound<'_, PyTuple>) -> PyResult<Self> {
        self.combined(others, KeyFilter::intersect)
    }

    /// Whether every bit set here is set in `other`.
    fn issubset(&self, other: PyRef<'_, BloomFilter>) -> PyResult<bool> {
        self.inner.is_subset(&other.inner).map_err(errors::core)
    }

    /// Whether every bit set in `other` is set here.
    fn issuperset(&self, other: PyRef<'_, BloomFilter>) -> PyResult<bool> {
        other.inner.is_subset(&self.inner).map_err(errors::core)
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<BloomFilter>().is_ok_and(|other| {
            let other = other.borrow();
            let (a, b) = (self.inner.bloom(), other.inner.bloom());
            a.params() == b.params() && a.bit_bytes() == b.bit_bytes()
        })
    }

    /// A copy.
    fn copy(&self) -> Self {
        Self::of(self.inner.clone())
    }

    /// Forgets every key.
    fn clear(&mut self) {
        self.inner.clear()
    }

    /// Writes the filter to `path` atomically, as a blocklist file of exact keys.
    fn save(&self, path: PathBuf) -> PyResult<()> {
        self.inner
            .blocklist()
            .save(&path, &[])
            .map(|_| ())
            .map_err(errors::blocklist)
    }

    /// The filter saved at `path` (by `save`, or `phishbloom build --exact`).
    #[classmethod]
    fn load(_class: &Bound<'_, pyo3::types::PyType>, path: PathBuf) -> PyResult<Self> {
        let list = Blocklist::open(&path).map_err(errors::blocklist)?;
        KeyFilter::from_blocklist(list)
            .map(Self::of)
            .map_err(errors::core)
    }

    /// The file image `save` writes.
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.to_bytes())
    }

    /// The filter of a file image.
    #[classmethod]
    fn from_bytes(_class: &Bound<'_, pyo3::types::PyType>, data: &[u8]) -> PyResult<Self> {
        KeyFilter::from_bytes("<bytes>", data)
            .map(Self::of)
            .map_err(errors::core)
    }

    /// Pickling: the file image, read back by `from_bytes`.
    fn __reduce__<'py>(
        slf: &Bound<'py, Self>,
    ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
        let from_bytes = slf.get_type().getattr("from_bytes")?;
        Ok((from_bytes, (slf.borrow().to_bytes(slf.py()),)))
    }

    fn __repr__(&self) -> String {
        format!(
            "<BloomFilter {} of {} keys at {}, {} bits, {} hashes, {} added>",
            self.inner.layout().name(),
            self.inner.capacity(),
            self.inner.target_fpp(),
            self.inner.num_bits(),
            self.inner.num_hashes(),
            self.inner.len()
        )
    }
}
