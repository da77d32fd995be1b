//! Section 12, threats to validity, and the closing note on how the plots were checked.

use crate::context::Context;

/// Writes section 9; `load_at_start` and `load_now` are the machine's load averages when the run
/// began and now (`phishbloom_lab::measure::machine::load_average`).
pub fn render(ctx: &Context, load_at_start: Option<&str>, load_now: Option<&str>) -> String {
    let mut md = String::from("## 12. Threats to validity\n\n");
    md.push_str(
        "- **Synthetic keys.** Sections 3, 4, 6, 7 and 8 use generated keys (`kw-<hex>`, phone \
         numbers, `spam-kw-<hex>`; section 8's deltas add `add-<hex>.changes.test` entries), not real URLs or keywords; section 11's domain lists and clean URLs are \
         generated the way the benchmarks' `gen_domains.py` and `gen_urls.py` make them. A Bloom filter sees keys only \
         through its hash, so this matters only if xxh3 treated structured keys worse than \
         random ones; sections 2 and 5, on the real URLs of `dataset.csv`, show the same rates \
         as theory, which argues it does not. Real query streams repeat keys, which would make \
         the per-query rate differ from the per-distinct-key rate measured here.\n\
         - **Statistics.** Each rate is a binomial count with a 95 % Wilson interval; about 1 \
         point in 20 should miss theory at that level, and 1 in 370 beyond 3 σ. Points with few \
         false positives (the smallest rates) carry wide intervals, shown as error bars and \
         counts; at p = 10⁻⁷ the measurement only bounds the rate.\n\
         - **Independence.** Every sweep point builds its own filter but all use the same member \
         keys; their errors are independent through the queries (fresh non-members per point), \
         not through the keys, so the spread of one filter's fill around its mean is not \
         sampled. At n ≥ 10⁴ that spread is far below the binomial error.\n",
    );
    md.push_str(&format!(
        "- **Machine noise.** Times are wall-clock on a shared 2-core virtual machine (load \
         average {} at the start of this run, {} at the end; another process was using a core), \
         so only ratios measured back to back in the same run are reported, and even those \
         shift with the load: the 1-thread/2-thread build ratio in section 7 in particular \
         depends on whether the second core was free.\n",
        load_at_start.unwrap_or("unknown"),
        load_now.unwrap_or("unknown"),
    ));
    md.push_str(&format!(
        "- **Not measured.** The hash set at 10⁸ keys (≈ 6 GiB by the layout formula; the formula \
         is checked against the sets built at smaller n, whose heap bytes are computed from their \
         real capacities, with the resident-memory growth beside them), false-positive rates below \
         about 10⁻⁶ (they would need 10⁹+ queries), the URL-semantics matcher (`phishbloom eval` \
         reports it), adversarial keys chosen to collide, and any machine but this one.{}\n\n",
        if ctx.settings.quick {
            " This is a `--quick` run: sizes are shrunk for speed, and the intervals are wide."
        } else {
            ""
        }
    ));
    md
}
