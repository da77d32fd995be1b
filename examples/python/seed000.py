"""Seed 000's experiment in Python: a Bloom filter of the phishing URLs of dataset.csv.

Reads the labelled dataset with pandas, puts every phishing URL (``isMalicious = -1``) in a
``phishbloom.BloomFilter`` sized for p = 1 % — as the key ``phishbloom.url_key`` makes of it,
demo's whole-key rule — and measures it as step 3 of ``phishbloom demo``
does, in both layouts: false negatives over the phishing URLs (must be 0), and the
false-positive rate, with its Wilson 95 % interval, over the benign URLs and over 1,000,000
random ``http://xxxxxxxxxx.com`` URLs. Every number printed equals the one ``demo`` prints.

Differences from ``demo``: the "theory" column is not printed, and nor are the memory and
bits/key columns (they follow from m and n).

Run from anywhere::

    python examples/python/seed000.py [path/to/dataset.csv]

The dataset defaults to ``../shared/data/dataset.csv`` relative to the repository root.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import phishbloom

DEFAULT_DATASET = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "dataset.csv"
FPP = 0.01
RANDOM_URLS = 1_000_000
RANDOM_SEED = 2026  # demo's seed of the random URLs
Z_95 = 1.959963984540054  # the 0.975 quantile of the standard normal distribution


def wilson_interval(hits: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval for ``hits`` successes in ``trials`` Bernoulli trials.

    E. B. Wilson, "Probable inference, the law of succession, and statistical inference",
    Journal of the American Statistical Association 22 (1927), 209-212. It stays inside [0, 1]
    and is sensible at zero hits, unlike the normal approximation.
    """
    if trials == 0:
        return 0.0, 1.0
    p = hits / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    center = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    low = 0.0 if hits == 0 else max(center - half, 0.0)
    high = 1.0 if hits == trials else min(center + half, 1.0)
    return low, high


def random_urls(count: int, seed: int) -> list[str]:
    """Demo's random URLs: ``http://`` + 10 letters + ``.com``, each letter ``(x * 26) >> 64``
    of the next SplitMix64 output (Steele, Lea & Flood 2014) — the crate's generator,
    vectorized: the i-th state is ``seed + i * golden`` modulo 2^64."""
    golden = np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = np.uint64(seed) + np.arange(1, count * 10 + 1, dtype=np.uint64) * golden
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z ^= z >> np.uint64(31)
    # The high 64 bits of the 128-bit product z * 26, from its two 32-bit halves.
    high, low = z >> np.uint64(32), z & np.uint64(0xFFFFFFFF)
    letters = (high * np.uint64(26) + ((low * np.uint64(26)) >> np.uint64(32))) >> np.uint64(32)
    names = (letters.astype(np.uint8) + ord("a")).reshape(count, 10)
    return [f"http://{name.tobytes().decode()}.com" for name in names]


def percent(rate: float) -> str:
    """A rate as demo prints it: ``0.985 %``, or ``9.27e-2 %`` under 0.1 %."""
    pct = rate * 100
    if pct == 0:
        return "0 %"
    return f"{pct:.3f} %" if pct >= 0.1 else f"{pct:.2e} %".replace("e-0", "e-")


def false_positives(name: str, bloom: phishbloom.BloomFilter, queries: list[bytes]) -> str:
    """One row: how many of the non-member ``queries`` the filter answers, with the rate."""
    hits = sum(key in bloom for key in queries)
    low, high = wilson_interval(hits, len(queries))
    return (
        f"  {name:<8} {len(queries):>9,} {hits:>6,} {percent(hits / len(queries)):>9}"
        f"  [{percent(low)}, {percent(high)}]"
    )


def main(dataset: Path) -> None:
    """Builds the filter in each layout and prints its measurements."""
    rows = pd.read_csv(dataset, dtype=str, keep_default_na=False)
    phishing = set(rows.url[rows.isMalicious == "-1"].map(phishbloom.url_key))
    benign = sorted(set(rows.url[rows.isMalicious == "1"].map(phishbloom.url_key)) - phishing)
    generated = map(phishbloom.url_key, random_urls(RANDOM_URLS, RANDOM_SEED))
    random = [key for key in generated if key not in phishing]
    print(f"{len(rows):,} rows; {len(phishing):,} distinct phishing keys; p = {percent(FPP)}")
    for layout in ("classic", "blocked"):
        bloom = phishbloom.BloomFilter(len(phishing), FPP, layout=layout)
        bloom.update(phishing)
        missed = sum(key not in bloom for key in phishing)
        print(
            f"{layout:<8} n = {len(phishing):,}, m = {bloom.size_in_bits:,}, "
            f"k = {bloom.hash_functions}, false negatives {missed}"
        )
        print(false_positives("benign", bloom, benign))
        print(false_positives("random", bloom, random))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_DATASET)
