//! Recognising copies of known phishing mails and pages, measured on real text
//! ([`crate::corpus`]: The Debian Administrator's Handbook, manual pages and the Rust library's
//! documentation, cut into ~3 KB documents): the MinHash sketches near-duplicate lists use
//! beside their peers on all three ([`corpora`], [`sketch_scale`]), and the SimHash study that
//! chose the SimHash method's defaults on the handbook (the rest of this module).
//!
//! The corpus's pages are shuffled with a fixed seed and split in two: documents of the first
//! half are the *known* list, documents of the other half are *unrelated* queries (no page is
//! on both sides, so no unrelated document is derived from a known one). Every known document
//! is copied once per [`edits::EDITS`] kind. Then:
//!
//! - [`quality`] — for every shingle width `w` = 1…5 and weighting (tf, set, tf-idf), the
//!   recall of each edit kind (the copy's own original within distance `k`, `k` = 0…6), the
//!   unrelated documents with any match, and the distances of all unrelated pairs beside
//!   Binomial(64, ½).
//! - [`checked`] — the lookup fingerprint of words (`w` = 1, tf and set) confirmed by a check
//!   fingerprint of word pairs or triples, for every check distance of
//!   [`checked::CHECK_DISTANCES`]; [`choose`] picks the defaults among single and checked
//!   configurations by a stated rule.
//! - [`lengths`] — texts of a given number of tokens under the chosen configuration, to place
//!   `min_tokens`.
//! - [`peers`] — the chosen configuration (lookup through Manku's tables, confirmed by the
//!   check) beside brute force over both fingerprints and a MinHash-LSH index (the `gaoya`
//!   crate) on the same documents: recall, precision and speed.
//! - [`scale`] — 10⁷ random fingerprints with planted near ones: build, bytes, candidates and
//!   lookup time of 4 and 20 tables beside brute force.
//! - [`corpora`] — every system on every corpus: recall per edit, false matches judged by true
//!   resemblance, bytes and lookup time.
//! - [`sketch_scale`] — sketches at 10⁷ documents beside the SimHash tables.

pub mod checked;
mod choice;
pub mod corpora;
pub mod edits;
pub mod fingerprints;
mod lengths;
pub mod peers;
mod quality;
pub mod scale;
pub mod sketch_scale;
mod texts;

pub use choice::{choose, config_of, quality, Choice, Config, CorpusSummary, Quality, SweepRow};
pub use lengths::{choose_min_tokens, lengths, LengthRow};
pub use quality::{
    distance_stats, evaluate, fingerprint_texts, DistanceStats, EditRecall, QualityRow,
    RunFingerprints, TARGET_EDITS,
};
pub use texts::{split_by_page, texts, texts_of, token_window, vocabulary, Texts};

use crate::error::Result;
use crate::measure::Settings;
use fingerprints::Weights;

/// The largest distance the sweeps report (`k` = 0…`KMAX`).
pub const KMAX: usize = 6;

/// The distance the lookups use (Manku et al.'s k = 3 for 64-bit fingerprints).
pub const K: u32 = 3;

/// The list size the choice plans for: 10⁷ known documents, the scale a mail system plans for.
pub const PLANNED_LIST: f64 = 1e7;

/// The most false matches an unrelated document may expect against a list of
/// [`PLANNED_LIST`] documents (the acceptance bound: 0.5 % of unrelated documents).
pub const PLANNED_FALSE: f64 = 0.005;

/// The seed of the page split, the edits and the windows.
pub const SEED: u64 = 2207;

/// Shingle widths compared.
pub const WIDTHS: [u32; 5] = [1, 2, 3, 4, 5];

/// Weightings compared.
pub const WEIGHTS: [Weights; 3] = [Weights::Tf, Weights::Set, Weights::TfIdf];

/// Text lengths (tokens) of the short-text study. It starts at 8: shorter texts (a subject
/// line, a link's text) are the exact hash's case whatever the measurement (a one-word edit
/// changes most of their shingles).
pub const LENGTHS: [usize; 9] = [8, 12, 16, 24, 32, 48, 64, 96, 128];

/// How big the section's experiments are.
#[derive(Clone, Debug, PartialEq)]
pub struct NearSizes {
    /// Most corpus documents used (the full corpus is ~1,200).
    pub max_documents: usize,
    /// Fingerprints of the scale experiment (10⁷ at full size).
    pub scale_fingerprints: usize,
    /// Lookups timed per table shape (half planted near a stored fingerprint, half random).
    pub scale_queries: usize,
    /// Brute-force lookups timed at scale (each reads every fingerprint).
    pub scale_brute_queries: usize,
}

impl NearSizes {
    /// Full (`quick == false`) or quick sizes.
    pub fn new(quick: bool) -> Self {
        if quick {
            NearSizes {
                max_documents: 300,
                scale_fingerprints: 100_000,
                scale_queries: 2_000,
                scale_brute_queries: 50,
            }
        } else {
            NearSizes {
                max_documents: usize::MAX,
                scale_fingerprints: 10_000_000,
                scale_queries: 20_000,
                scale_brute_queries: 100,
            }
        }
    }
}

/// Everything the section measured.
#[derive(Clone, Debug)]
pub struct NearReport {
    /// MinHash sketches beside SimHash, gaoya and Rspamd's rule on three corpora.
    pub corpora: Vec<corpora::CorpusRow>,
    /// The sketches at scale beside the SimHash tables.
    pub sketch_scale: sketch_scale::SketchScale,
    /// Quality: configurations, the choice, short texts.
    pub quality: Quality,
    /// The chosen configuration beside its peers.
    pub peers: Vec<peers::PeerRow>,
    /// The tables at scale beside brute force.
    pub scale: Vec<scale::ScaleRow>,
    /// Sizes in force.
    pub sizes: NearSizes,
}

/// Runs the whole section.
pub fn run(settings: &Settings) -> Result<NearReport> {
    let sizes = NearSizes::new(settings.quick);
    settings.progress.say("near: reading the corpus");
    let texts = texts(&sizes)?;
    let quality = quality(settings, &texts);
    settings.progress.say("near: peers");
    let peers = peers::run(&texts, &quality.config())?;
    settings.progress.say("near: scale");
    let scale = scale::run(settings, &sizes)?;
    settings.progress.say("near: sketches on three corpora");
    let corpora = corpora::run(&sizes)?;
    settings.progress.say("near: sketches at scale");
    let sketch_scale = sketch_scale::run(&sizes)?;
    Ok(NearReport {
        corpora,
        sketch_scale,
        quality,
        peers,
        scale,
        sizes,
    })
}
