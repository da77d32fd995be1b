//! Section 1, sizing: the formulas in brief and the dataset's n, m, k and bytes for both
//! layouts, beside seed 000's and seed 002's printed figures.

use phishbloom_filter::math::{self, BLOCK_BITS};

use crate::context::{markdown_table, Context};
use crate::error::Result;
use crate::output::{num, Table};
use crate::theory;
use phishbloom_blocklist::fmt;

/// Seed 000's printed figures: n = 88,647 phishing URLs, m ≈ 849,587 bits, "≈ 106 KB".
const SEED_000_N: u64 = 88_647;
const SEED_000_M: u64 = 849_587;
/// Seed 002's printed m for n = 10⁸ at p = 0.01 ("≈ 958,505,832 (约958MB)") and rate (0.0103).
const SEED_002_M: u64 = 958_505_832;
const SEED_002_RATE: f64 = 0.0103;
/// Seed 002's n: "亿级规模", 10⁸ keywords.
pub const SEED_002_N: u64 = 100_000_000;
/// The target rate of seeds 000 and 002: 1 %.
pub const TARGET: f64 = 0.01;

/// One sized filter.
struct Sized {
    case: &'static str,
    n: u64,
    layout: &'static str,
    m: u64,
    k: u32,
    theory: f64,
    printed: String,
}

/// Writes the section; `dataset_n` is the number of distinct phishing keys read from the data.
pub fn run(ctx: &mut Context, dataset_n: u64) -> Result<String> {
    let mut sized = Vec::new();
    for (case, n, printed) in [
        ("dataset.csv phishing rows", dataset_n, "—".to_string()),
        (
            "seed 000's n",
            SEED_000_N,
            format!("m ≈ {}, k ≈ 7, ≈ 106 KB", fmt::count(SEED_000_M)),
        ),
        (
            "seed 002's n",
            SEED_002_N,
            format!(
                "m ≈ {}, k = 7, rate ≈ {SEED_002_RATE} (\"约958MB\")",
                fmt::count(SEED_002_M)
            ),
        ),
    ] {
        let m = checked(math::optimal_num_bits(n, TARGET))?;
        let k = math::optimal_num_hashes(n, m);
        sized.push(Sized {
            case,
            n,
            layout: "classic",
            m,
            k,
            theory: math::classic_fpp(m, n as f64, k),
            printed,
        });
        let (m, k) = checked(math::blocked_size(n, TARGET))?;
        sized.push(Sized {
            case,
            n,
            layout: "blocked",
            m,
            k,
            theory: math::blocked_fpp(m, n as f64, k, BLOCK_BITS),
            printed: "—".to_string(),
        });
    }

    let mut table = Table::new(&[
        "case",
        "n",
        "p",
        "layout",
        "m_bits",
        "k",
        "bytes",
        "mib",
        "bits_per_key",
        "theory_rate",
        "seed_printed",
    ]);
    let mut rows = Vec::new();
    for s in &sized {
        let bytes = s.m.div_ceil(8);
        table.push(vec![
            s.case.to_string(),
            s.n.to_string(),
            num(TARGET),
            s.layout.to_string(),
            s.m.to_string(),
            s.k.to_string(),
            bytes.to_string(),
            num(theory::bits_to_mib(s.m)),
            num(s.m as f64 / s.n as f64),
            num(s.theory),
            s.printed.clone(),
        ]);
        rows.push(vec![
            s.case.to_string(),
            fmt::count(s.n),
            s.layout.to_string(),
            fmt::count(s.m),
            s.k.to_string(),
            format!("{} ({})", fmt::count(bytes), fmt::bytes(bytes)),
            fmt::real(s.m as f64 / s.n as f64, 2),
            fmt::rate(s.theory),
            s.printed.clone(),
        ]);
    }
    let csv = ctx.write_csv("sizing.csv", &table)?;

    let seed0 = &sized[2];
    let seed2 = &sized[4];
    let dataset = &sized[0];
    let dataset_blocked = &sized[1];
    let exact_002 = -(SEED_002_N as f64) * TARGET.ln() / (std::f64::consts::LN_2.powi(2));
    let mut md = String::from("## 1. Sizing\n\n");
    md.push_str(
        "A classic Bloom filter sets k bits per key among m. After n keys a given bit is still 0 \
         with probability (1 − 1/m)^{kn} ≈ e^{−kn/m}, so a non-member finds all k of its bits set \
         with probability **(1 − e^{−kn/m})^k** (seed 001, seed 002 step 2). Minimising its \
         logarithm over k gives **k = (m/n)·ln 2**, where each bit is 1 with probability ½ and the \
         rate is 2^{−k}; solving 2^{−(m/n) ln 2} = p for m gives **m = −n·ln p / (ln 2)²** \
         (seeds 000, 002, 004). phishbloom rounds m up (so the rate is at most p) and k to the \
         nearest integer (Guava's rule, seed 004). The blocked layout puts all k bits of a key in \
         one 512-bit block (one cache line); keys spread over blocks unevenly, so at equal m its \
         rate is higher, and it is sized with the exact per-block formula (see section 4) to the \
         smallest whole number of blocks that meets p.\n\n",
    );
    md.push_str(&markdown_table(
        &[
            "case",
            "n",
            "layout",
            "m (bits)",
            "k",
            "bytes",
            "bits/key",
            "theory rate",
            "seed printed",
        ],
        &rows,
    ));
    md.push_str(&format!(
        "\n*Data: [{csv}]({csv}).*\n\n\
         - **The dataset.** `dataset.csv` has {} distinct phishing keys (the `isMalicious = -1` \
         rows after the key normalization of `phishbloom build`). At p = 1 % the classic filter \
         needs m = {} bits, k = {}, {} bytes; the blocked layout needs {} bits ({} bytes, k = {}), \
         {:.1} % more, for its lower-quality spread.\n\
         - **Seed 000** quotes n = 88,647 for this file, m ≈ 849,587 bits and \"≈ 106 KB\". For \
         n = 88,647 the formula gives {:.2}, so m = {} bits (the printed 849,587 is {} lower: a \
         one-digit slip), {} bytes = {} — \"106 KB\" in decimal kilobytes, so that part is right. \
         But the published file has {} distinct phishing keys, not 88,647 (88,647 is not the count \
         of any label; the seed's copy of the CSV may have been another version), so the filter it \
         describes is {:.1}× larger than this dataset needs.\n\
         - **Seed 002** sizes 10⁸ keywords at 1 %: −10⁸·ln 0.01/(ln 2)² = {:.2}, so m = {} bits \
         with the ceiling (the printed 958,505,832 is a rounding slip, {} bits low). That is {} \
         bytes = **{:.1} MiB**, not \"958 MB\": the seed read bits as bytes (8× too large). k = {} \
         and the rate is {} (the seed prints ≈ {SEED_002_RATE}, from rounding m to 9.58·10⁸ \
         inside the exponent).\n\n",
        fmt::count(dataset.n),
        fmt::count(dataset.m),
        dataset.k,
        fmt::count(dataset.m.div_ceil(8)),
        fmt::count(dataset_blocked.m),
        fmt::count(dataset_blocked.m / 8),
        dataset_blocked.k,
        (dataset_blocked.m as f64 / dataset.m as f64 - 1.0) * 100.0,
        -(SEED_000_N as f64) * TARGET.ln() / std::f64::consts::LN_2.powi(2),
        fmt::count(seed0.m),
        seed0.m - SEED_000_M,
        fmt::count(seed0.m.div_ceil(8)),
        fmt::bytes(seed0.m.div_ceil(8)),
        fmt::count(dataset.n),
        seed0.m as f64 / dataset.m as f64,
        exact_002,
        fmt::count(seed2.m),
        seed2.m - SEED_002_M,
        fmt::count(seed2.m.div_ceil(8)),
        theory::bits_to_mib(seed2.m),
        seed2.k,
        fmt::rate(seed2.theory),
    ));
    Ok(md)
}

/// Maps a sizing failure; the sizes here are fixed and valid, so a failure is a bug.
fn checked<T>(result: phishbloom_filter::Result<T>) -> Result<T> {
    result.map_err(|source| crate::error::Error::Filter {
        experiment: "sizing",
        num_bits: 0,
        num_hashes: 0,
        source,
    })
}
