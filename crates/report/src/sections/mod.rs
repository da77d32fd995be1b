//! The report's sections, one module each; every section runs its experiments, writes its CSV
//! files and plots, and returns its Markdown.

pub mod dataset;
pub mod hashing;
pub mod memory;
pub mod scale;
pub mod sizing;
pub mod sweeps;
pub mod validity;
