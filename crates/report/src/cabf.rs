//! The CaBF experiment's write-up: `results.csv`, three SVG figures in the style of seed 003's
//! Figs. 3–5, and a Markdown summary that sets our numbers beside the paper's claims.

use std::path::{Path, PathBuf};

use phishbloom_lab::cabf_experiment::Point as Measured;

use crate::error::Result;
use crate::output::write_atomic_text;
use crate::plot::{render, Axis, LegendAt, Panel, Point, Series, Style, PALETTE};

/// The structures, in plotting order, with their colours and markers.
const STRUCTURES: [(&str, usize, Style); 5] = [
    ("BBF-", 6, Style::Crosses),
    ("BBF+", 0, Style::Squares),
    ("CaBF-", 3, Style::Triangles),
    ("CaBF", 1, Style::Circles),
    ("CaBF (no check)", 2, Style::Dashed),
];

/// The command that runs the experiment (its options follow).
pub const COMMAND: &str = lab_command!("experiment cabf");

/// Rates below this are drawn at it (a log axis cannot show 0; such points had no false
/// positive among ~10⁶ probes).
const FLOOR: f64 = 1e-7;

/// Writes `results.csv`, `fig3-memory.svg`, `fig4-set-size.svg`, `fig5-hashes.svg` and
/// `README.md` under `out`; returns the files written.
pub fn write(out: &Path, points: &[Measured], command: &str, seconds: f64) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out).map_err(|source| crate::Error::CreateDir {
        path: out.to_path_buf(),
        source,
    })?;
    let mut files = vec![out.join("results.csv")];
    write_atomic_text(&files[0], &csv(points))?;
    for (figure, title, x_label, x_of) in figures() {
        let path = out.join(format!("{figure}.svg"));
        let panels: Vec<Panel> = ["member", "foreign"]
            .iter()
            .map(|query| panel(points, figure, query, x_label, x_of))
            .collect();
        write_atomic_text(&path, &render(&path, title, &panels, (1200, 520))?)?;
        files.push(path);
    }
    let readme = out.join("README.md");
    write_atomic_text(&readme, &summary(points, command, seconds))?;
    files.push(readme);
    Ok(files)
}

type XOf = fn(&Measured) -> f64;

fn figures() -> [(&'static str, &'static str, &'static str, XOf); 3] {
    [
        (
            "fig3-memory",
            "False positives vs memory (UT1, n = 200,000 entries, slash split)",
            "memory (bits per entry)",
            |p| p.bits as f64 / p.n as f64,
        ),
        (
            "fig4-set-size",
            "False positives vs set size (UT1, m = 1.6 Mbit, slash split)",
            "entries n (thousands)",
            |p| p.n as f64 / 1e3,
        ),
        (
            "fig5-hashes",
            "BBF+ vs CaBF as k grows (UT1, 8 bits per entry, slash split)",
            "hash functions k per filter",
            |p| f64::from(p.k),
        ),
    ]
}

fn panel(points: &[Measured], figure: &str, query: &str, x_label: &str, x_of: XOf) -> Panel {
    let rate = |p: &Measured| {
        if query == "member" {
            p.member_fpp
        } else {
            p.foreign_fpp
        }
    };
    let chosen: Vec<&Measured> = points
        .iter()
        .filter(|p| p.figure == figure && p.dataset == "ut1" && p.split == "slash")
        .collect();
    let series: Vec<Series> = STRUCTURES
        .iter()
        .filter_map(|&(name, color, style)| {
            let mut xy: Vec<Point> = chosen
                .iter()
                .filter(|p| p.structure == name)
                .map(|p| Point::at(x_of(p), rate(p).max(FLOOR)))
                .collect();
            xy.sort_by(|a, b| a.x.total_cmp(&b.x));
            (!xy.is_empty()).then(|| Series::new(name, PALETTE[color], style, xy))
        })
        .collect();
    let xs = series.iter().flat_map(|s| s.points.iter().map(|p| p.x));
    let (low, high) = xs.fold((f64::MAX, f64::MIN), |(l, h), x| (l.min(x), h.max(x)));
    let ys = series.iter().flat_map(|s| s.points.iter().map(|p| p.y));
    let (y_low, y_high) = ys.fold((1.0f64, FLOOR), |(l, h), y| (l.min(y), h.max(y)));
    let title = if query == "member" {
        "queries: every member's prefixes (paper's setup)"
    } else {
        "queries: foreign URLs (dataset's benign rows)"
    };
    Panel {
        title: title.to_string(),
        x: Axis::linear(x_label, low.min(high), high.max(low + 1.0)),
        y: Axis::log(
            "false-positive rate per prefix probe",
            y_low,
            y_high.max(y_low * 10.0),
        ),
        series,
        legend: LegendAt::LowerLeft,
    }
}

fn csv(points: &[Measured]) -> String {
    let mut out = String::from(
        "figure,dataset,split,structure,n,bits,k,member_fpp,foreign_fpp,foreign_lpm_error,probes\n",
    );
    for p in points {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{:e},{:e},{:e},{}\n",
            p.figure,
            p.dataset,
            p.split,
            p.structure,
            p.n,
            p.bits,
            p.k,
            p.member_fpp,
            p.foreign_fpp,
            p.foreign_lpm_error,
            p.probes
        ));
    }
    out
}

/// Finds one point.
fn at<'a>(
    points: &'a [Measured],
    figure: &str,
    dataset: &str,
    split: &str,
    structure: &str,
    bits_per_entry: f64,
) -> Option<&'a Measured> {
    points.iter().find(|p| {
        p.figure == figure
            && p.dataset == dataset
            && p.split == split
            && p.structure == structure
            && ((p.bits as f64 / p.n as f64) - bits_per_entry).abs() < 0.5
    })
}

/// A table of Fig. 3 at every memory size for one corpus and split.
fn fig3_table(points: &[Measured], dataset: &str, split: &str) -> String {
    let mut out = String::from("| bits/entry | query | BBF- | BBF+ | CaBF- | CaBF | CaBF (no check) | BBF+ ÷ CaBF (> 1: CaBF better) |\n|---|---|---|---|---|---|---|---|\n");
    let mut sizes: Vec<f64> = points
        .iter()
        .filter(|p| p.figure == "fig3-memory" && p.dataset == dataset && p.split == split)
        .map(|p| (p.bits as f64 / p.n as f64).round())
        .collect();
    sizes.dedup();
    for bpe in sizes {
        for query in ["member", "foreign"] {
            let rate = |s: &str| {
                at(points, "fig3-memory", dataset, split, s, bpe).map(|p| {
                    if query == "member" {
                        p.member_fpp
                    } else {
                        p.foreign_fpp
                    }
                })
            };
            let cells: Vec<String> = STRUCTURES
                .iter()
                .map(|(s, _, _)| rate(s).map_or("–".into(), |r| format!("{r:.2e}")))
                .collect();
            let ratio = match (rate("BBF+"), rate("CaBF")) {
                (Some(b), Some(c)) if c > 0.0 => format!("{:.2}×", b / c),
                _ => "–".into(),
            };
            out.push_str(&format!(
                "| {bpe} | {query} | {} | {ratio} |\n",
                cells.join(" | ")
            ));
        }
    }
    out
}

fn summary(points: &[Measured], command: &str, seconds: f64) -> String {
    format!(
        "# CaBF vs BBF on real blocklists\n\n\
         Regenerate with `{command}` ({seconds:.0} s on this 2-core machine). Every number below is in \
         [`results.csv`](results.csv).\n\n\
         Seed 003 (Zhou et al.) stores the i-th component of every listed URL in the i-th of p = 8 \
         parallel Bloom filters, sized in proportion to their element counts, and ties the \
         components of one URL together with a correlation check value `V = Σᵢ Σⱼ H_ij / 2^j`. It \
         reports false-positive rates 2× to 10× below the length-grouped BBF+ at equal memory, and \
         BBF+'s rate with 2–4 hash functions instead of ~10. We built all four structures \
         (`crates/lookup/src/cabf.rs`) and measured them on the UT1 blacklists (all categories' \
         `urls` and `domains`, the kind of list the paper used) and on dataset.csv's phishing rows, \
         averaging 10 random subsets per point (fixed seed). The check value is stored in a Bloom \
         filter that counts against the same memory budget (one more filter, sized like the others).\n\n\
         A false positive is, as in the paper, a prefix probe the structure reports present and the \
         exact prefix table does not confirm. **Member queries** probe every prefix of every listed \
         entry (the paper's setup); **foreign queries** probe every prefix of the dataset's 33,312 \
         benign URLs, which the lists do not hold.\n\n\
         ![Fig. 3](fig3-memory.svg)\n\n![Fig. 4](fig4-set-size.svg)\n\n![Fig. 5](fig5-hashes.svg)\n\n\
         ## Where the paper's claims hold and where they do not\n\n\
         - **Cardinality adaptation holds.** CaBF beats CaBF− by one to two orders of magnitude at \
         every memory size (UT1, slash split, 10 bits/entry: member {m_cabf:.2e} vs {m_cabf_minus:.2e}), and \
         BBF+ beats BBF− likewise: the first filters hold far more elements than the last.\n\
         - **The correlation check holds.** Without it, every unlisted prefix of a listed URL passes \
         (member rate {m_nocheck:.2e}); with it, {m_cabf:.2e}.\n\
         - **CaBF vs BBF+ does not hold for member queries.** At equal memory BBF+ is better at every \
         size on UT1 (10 bits/entry: {m_bbf:.2e} vs CaBF {m_cabf:.2e}, {member_ratio:.1}× in BBF+'s favour): \
         a member's unlisted prefixes consist of components that *are* present, so only the check \
         filter stands between them and a false match, and it holds one element per entry with the \
         same bits per element as every other filter, while BBF+ spends all its memory on whole \
         prefixes.\n\
         - **For foreign URLs CaBF is close to BBF+, and ahead only with much memory.** Foreign \
         queries are mostly stopped by the component filters: at 10 bits/entry CaBF and BBF+ are \
         close ({f_cabf:.2e} vs {f_bbf:.2e}) and up to 16 bits/entry BBF+ stays slightly ahead \
         (Fig. 3); only at Fig. 4's smallest set (32 bits/entry, n = 50,000) does CaBF pull ahead, \
         {f4_cabf:.2e} vs BBF+ {f4_bbf:.2e}, the paper's 'gain grows with memory' in one point.\n\
         - **Fewer hash functions (Fig. 5):** on foreign queries CaBF with k = 2–3 reaches BBF+'s \
         rate at its best k; on member queries it does not.\n\
         - **Splits.** The reversed-host split (labels `com`, `evil`, `www`) makes domain entries \
         prefixes of their subdomains, but doubles the probes per URL and puts few, very common \
         labels in the first filters; for CaBF it is worse than the slash split at every \
         memory size, for BBF+ neither split wins at every size. \
         The product's CaBF engine (`build --kind cabf`) uses the slash split and looks a URL up \
         once per host suffix, which gives it the same semantics as the expression matcher.\n\n\
         **Which engine phishbloom uses by default:** the expression-based blocked Bloom matcher. \
         On these lists CaBF is not more accurate per bit than BBF+ where it matters most (URLs \
         under listed sites), and its lookups cost more (see the closing note's benchmark); \
         `--kind cabf` remains available.\n\n\
         ## Fig. 3 in numbers (UT1, slash split)\n\n{ut1_slash}\n\
         ## Fig. 3 in numbers (UT1, reversed-host split)\n\n{ut1_reversed}\n\
         ## Fig. 3 in numbers (dataset.csv phishing rows, slash split)\n\n{ds_slash}\n",
        m_cabf = rate(points, "CaBF", true),
        m_cabf_minus = rate(points, "CaBF-", true),
        m_nocheck = rate(points, "CaBF (no check)", true),
        m_bbf = rate(points, "BBF+", true),
        member_ratio = rate(points, "CaBF", true) / rate(points, "BBF+", true).max(f64::MIN_POSITIVE),
        f_cabf = rate(points, "CaBF", false),
        f_bbf = rate(points, "BBF+", false),
        f4_cabf = fig4(points, "CaBF"),
        f4_bbf = fig4(points, "BBF+"),
        ut1_slash = fig3_table(points, "ut1", "slash"),
        ut1_reversed = fig3_table(points, "ut1", "reversed-host"),
        ds_slash = fig3_table(points, "dataset", "slash"),
    )
}

/// UT1, slash split, Fig. 3 at 10 bits/entry.
fn rate(points: &[Measured], structure: &str, member: bool) -> f64 {
    at(points, "fig3-memory", "ut1", "slash", structure, 10.0).map_or(f64::NAN, |p| {
        if member {
            p.member_fpp
        } else {
            p.foreign_fpp
        }
    })
}

/// UT1, slash split, Fig. 4 at its smallest set (most bits per entry), foreign queries.
fn fig4(points: &[Measured], structure: &str) -> f64 {
    points
        .iter()
        .filter(|p| {
            p.figure == "fig4-set-size"
                && p.dataset == "ut1"
                && p.split == "slash"
                && p.structure == structure
        })
        .min_by_key(|p| p.n)
        .map_or(f64::NAN, |p| p.foreign_fpp)
}
