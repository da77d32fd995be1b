//! `phishbloom._phishbloom`: the extension module under the Python package `phishbloom`
//! (python/). Each class is a thin shell over the crates the CLI uses — a Bloom filter of keys
//! ([`phishbloom_core::KeyFilter`]), blocklists opened or built as `build` builds them, verdicts
//! in the columns of `check --json` — that only converts Python values and maps errors; no rule
//! is written twice.

use pyo3::prelude::*;
use pyo3::types::PyBytes;

mod arrow;
mod bloom;
mod errors;
mod list;

/// The calculator's rows for `expected_items` keys at rate `fpp` (what `phishbloom plan
/// --json` prints), as a JSON array the Python side turns into dicts.
#[pyfunction]
#[pyo3(signature = (expected_items, fpp, key_bytes = 22))]
fn plan_json(expected_items: i128, fpp: f64, key_bytes: u64) -> PyResult<String> {
    let items = errors::count("expected_items", expected_items)?;
    let rows = phishbloom_core::plan::plan(items, fpp, key_bytes).map_err(errors::core)?;
    // PlanRow serializes plain numbers and names: it cannot fail.
    Ok(serde_json::to_string(&rows).expect("plan rows serialize"))
}

/// The key a URL or host is hashed as in a list of whole URL keys (`KeyScheme::Url`: spaces
/// trimmed, `http://` or `https://` dropped, the host lowercased, one trailing `/` dropped):
/// what seed 000's experiment and `phishbloom demo`'s whole-key step put in their filters.
/// `None` for a line that holds no key.
#[pyfunction]
fn url_key<'py>(py: Python<'py>, url: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyBytes>>> {
    let raw = list::item_bytes(url)?;
    let mut key = Vec::new();
    let found = phishbloom_core::keys::KeyScheme::Url.normalize_into(raw, &mut key);
    Ok(found.then(|| PyBytes::new(py, &key)))
}

/// The module: its classes and functions (the Python package re-exports them).
#[pymodule]
fn _phishbloom(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<bloom::BloomFilter>()?;
    module.add_class::<list::Blocklist>()?;
    module.add_class::<list::Verdict>()?;
    module.add_class::<arrow::VerdictColumns>()?;
    module.add_function(wrap_pyfunction!(plan_json, module)?)?;
    module.add_function(wrap_pyfunction!(url_key, module)?)?;
    Ok(())
}
