//! `phishbloom._phishbloom`: the extension module under the Python package `phishbloom`
//! (python/). Each class is a thin shell over the crates the CLI uses — a Bloom filter of keys
//! ([`phishbloom_core::KeyFilter`]), blocklists opened or built as `build` builds them, verdicts
//! in the columns of `check --json` — that only converts Python values and maps errors; no rule
//! is written twice.

use pyo3::prelude::*;

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

/// The module: its classes and functions (the Python package re-exports them).
#[pymodule]
fn _phishbloom(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<bloom::BloomFilter>()?;
    module.add_class::<list::Blocklist>()?;
    module.add_class::<list::Verdict>()?;
    module.add_class::<arrow::VerdictColumns>()?;
    module.add_function(wrap_pyfunction!(plan_json, module)?)?;
    Ok(())
}
