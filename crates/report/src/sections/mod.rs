//! The report's sections, one module each: every section renders what the lab measured for it
//! (`phishbloom_lab::measure`) into its CSV files, plots and Markdown.

pub mod changes;
pub mod dataset;
pub mod hashing;
pub mod keywords;
pub mod memory;
pub mod near;
pub mod peers;
pub mod scale;
pub mod sizing;
pub mod sweeps;
pub mod validity;
