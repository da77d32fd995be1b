//! The formulas the lab's measurements are sized by and the report prints beside them, where the
//! filter crate does not already provide them: each is one small function with its source.
//!
//! The filter's own rates come from `phishbloom_filter::math` (`classic_fpp`, the exact
//! per-block `blocked_fpp`, `optimal_num_bits`, `information_bound_bits_per_key`).

/// Seed 001's (and seed 002's) rate formula in its asymptotic form, `(1 − e^{−k/r})^k` with
/// `r = m/n` bits per key.
///
/// Source: seed 001, "错误率估计" (the table of m/n ∈ {10, 20, 30} × k ∈ {5…8} is this function);
/// Broder & Mitzenmacher, "Network Applications of Bloom Filters" (2004), §2.1.
pub fn asymptotic_fpp(bits_per_key: f64, num_hashes: u32) -> f64 {
    let k = f64::from(num_hashes);
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// The continuous optimum of [`asymptotic_fpp`] over k: `k* = r·ln 2`.
///
/// Source: seed 002, step 3 (set d/dk ln P = 0), and seed 001 ("k = (m/n) ln 2 ≈ 0.7 m/n").
pub fn optimal_hashes_continuous(bits_per_key: f64) -> f64 {
    bits_per_key * std::f64::consts::LN_2
}

/// False-positive rate of an exact table of `bits`-bit fingerprints of `n` keys:
/// `1 − (1 − 2^{−b})^n`, the chance that a non-member's fingerprint equals at least one of n
/// uniformly random fingerprints.
///
/// Source: seed 001, "散列法 — 假阳性" (the 32-bit password-fingerprint table). Computed as
/// `−expm1(n·ln1p(−2^{−b}))` so that small rates keep their digits.
pub fn fingerprint_fpp(n: u64, bits: u32) -> f64 {
    let miss = (-(2f64).powi(-(bits as i32))).ln_1p();
    -(n as f64 * miss).exp_m1()
}

/// Standard deviation of a measured rate of `queries` Bernoulli trials with probability `p`:
/// `√(p(1−p)/Q)` (the binomial distribution's variance divided by Q²).
pub fn binomial_sigma(p: f64, queries: u64) -> f64 {
    (p * (1.0 - p) / queries.max(1) as f64).sqrt()
}

/// Queries needed for `target` expected false positives at rate `p`, clamped to
/// `[min, max]`: the relative error of the measured rate is then about `1/√target`.
pub fn queries_for(p: f64, target: f64, min: u64, max: u64) -> u64 {
    if p <= 0.0 || !p.is_finite() {
        return max;
    }
    ((target / p).ceil() as u64).clamp(min, max)
}

/// How many bits per key a structure with rate `rate` spends above the information-theoretic
/// minimum: `b − log2(1/ε)`.
///
/// Source: Carter, Floyd, Gill, Markowsky & Wegman (STOC 1978): any approximate-membership
/// structure needs at least `log2(1/ε)` bits per key.
pub fn bits_over_bound(bits_per_key: f64, rate: f64) -> f64 {
    bits_per_key - (1.0 / rate).log2()
}

/// Bits per key of an optimal classic Bloom filter at rate p: `log₂(1/p) / ln 2 ≈ 1.44·log₂(1/p)`
/// (`m/n = −ln p / (ln 2)²`), the information bound times `log₂ e`.
///
/// Source: Broder & Mitzenmacher, "Network Applications of Bloom Filters" (2004), §2.1 — the
/// formula `phishbloom_filter::math::optimal_num_bits` rounds up for a given n.
pub fn bloom_bits_per_key(rate: f64) -> f64 {
    phishbloom_filter::math::information_bound_bits_per_key(rate) / std::f64::consts::LN_2
}

/// Bits per key of a cuckoo filter with buckets of 4 at rate p and load α, without rounding the
/// fingerprint to whole bits: `(log₂(1/p) + 3) / α`.
///
/// Source: Fan, Andersen, Kaminsky & Mitzenmacher, "Cuckoo Filter: Practically Better Than
/// Bloom" (CoNEXT 2014), §5.2, with `f = log₂(2b/p)` and b = 4. The filter crate's
/// `cuckoo::cuckoo_bits_per_key` is the same with `f` rounded up to whole bits, as built.
pub fn cuckoo_bits_per_key_continuous(rate: f64, load: f64) -> f64 {
    (phishbloom_filter::math::information_bound_bits_per_key(rate) + 3.0) / load
}

/// Bits per key of a 3-wise binary fuse filter of `fingerprint_bits`-bit fingerprints over `n`
/// keys: `f · max(1.125, 0.875 + 0.25·ln(10⁶)/ln n)` — 1.125·f from a million keys on, more
/// for smaller sets (the array is sized by this factor, rounded to whole segments).
///
/// Source: Graf & Lemire, "Binary Fuse Filters: Fast and Smaller Than Xor Filters" (ACM JEA 27,
/// 2022), §4 (the size factor of the 3-wise construction, as in their reference code and in
/// `xorf`'s `size_factor`).
pub fn binary_fuse_bits_per_key(fingerprint_bits: u32, n: u64) -> f64 {
    let factor = (0.875 + 0.25 * 1e6f64.ln() / (n.max(2) as f64).ln()).max(1.125);
    f64::from(fingerprint_bits) * factor
}

/// False-positive rate of a binary fuse (or xor) filter of `fingerprint_bits`-bit fingerprints:
/// `2^−f` (a non-member's fingerprint equals the XOR of its three slots by chance).
///
/// Source: Graf & Lemire, "Xor Filters: Faster and Smaller Than Bloom and Cuckoo Filters"
/// (ACM JEA 25, 2020), §3.
pub fn binary_fuse_fpp(fingerprint_bits: u32) -> f64 {
    2f64.powi(-(fingerprint_bits as i32))
}

/// Bits per value of a Golomb–Rice coded sorted set of `count` values spread uniformly over a
/// universe of `universe` values: `log₂(U/n) + 1.5` (the Rice remainder of `log₂(U/n)` bits and
/// a unary quotient of about 1.5 bits on average with the best parameter).
///
/// Source: Golomb, "Run-length encodings" (IEEE Trans. IT 1966); Putze, Sanders & Singler,
/// "Cache-, Hash- and Space-Efficient Bloom Filters" (WEA 2007), §4 (Golomb-coded sets, about
/// `log₂(1/p) + 1.5` bits per key for `U = n/p`); the filter crate's `golomb` module.
pub fn golomb_bits_per_value(universe: f64, count: u64) -> f64 {
    (universe / count.max(1) as f64).log2() + 1.5
}

/// The fewest bits per key of any set representation that answers members and lets strangers
/// through at rate `p`: `log₂(1/p)` (Carter, Floyd, Gill, Markowsky & Wegman, "Exact and
/// approximate membership testers", STOC 1978) — the bound a compact delta's additions are
/// measured against.
pub fn membership_bound_bits(p: f64) -> f64 {
    (1.0 / p).log2()
}

/// Bits as MiB (2²⁰ bytes): `bits / 8 / 1,048,576`.
pub fn bits_to_mib(bits: u64) -> f64 {
    bits as f64 / 8.0 / 1_048_576.0
}

/// Bytes as MiB (2²⁰ bytes).
pub fn bytes_to_mib(bytes: u64) -> f64 {
    bytes as f64 / 1_048_576.0
}

/// P(X ≤ `k`) for X ~ Binomial(64, ½): the chance that two unrelated 64-bit SimHash
/// fingerprints land within distance `k` (Charikar 2002: each bit agrees with probability
/// 1 − θ/π, ½ for orthogonal feature vectors), summed exactly: Σ C(64, i) / 2⁶⁴.
pub fn binomial_64_half_cdf(k: u32) -> f64 {
    let mut c = 1.0f64;
    let mut sum = 0.0;
    for i in 0..=k.min(64) {
        if i > 0 {
            c *= f64::from(64 - i + 1) / f64::from(i);
        }
        sum += c;
    }
    sum / 2f64.powi(64)
}

/// The standard normal's upper tail Q(z) = P(Z > z), z ≥ 0: Abramowitz and Stegun 26.2.17
/// (absolute error < 7.5·10⁻⁸) below z = 5, and the first terms of the asymptotic series
/// φ(z)/z · (1 − 1/z² + 3/z⁴ − 15/z⁶) (A&S 26.2.12) from z = 5 on, where the tail is below the
/// first formula's error.
pub fn normal_upper_tail(z: f64) -> f64 {
    if z < 0.0 {
        return 1.0 - normal_upper_tail(-z);
    }
    let phi = (-z * z / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt();
    if z >= 5.0 {
        let z2 = z * z;
        return phi / z * (1.0 - 1.0 / z2 + 3.0 / (z2 * z2) - 15.0 / (z2 * z2 * z2));
    }
    let t = 1.0 / (1.0 + 0.231_641_9 * z);
    let poly = t
        * (0.319_381_530
            + t * (-0.356_563_782
                + t * (1.781_477_937 + t * (-1.821_255_978 + t * 1.330_274_429))));
    phi * poly
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asymptotic_formula_gives_seed_001s_table() {
        // Printed in seed 001 (three significant digits).
        assert!((asymptotic_fpp(10.0, 7) - 0.00819).abs() < 5e-6);
        assert!((asymptotic_fpp(20.0, 8) - 0.00014).abs() < 5e-6);
        assert!((asymptotic_fpp(30.0, 8) - 9.01e-6).abs() < 5e-8);
    }

    #[test]
    fn the_optimum_minimises_the_rate() {
        let r = 10.0;
        let k = optimal_hashes_continuous(r);
        assert!((k - 6.931).abs() < 1e-3);
        // At the optimum the rate is 2^{-k} (seed 002, step 3).
        let at = |k: f64| (1.0 - (-k / r).exp()).powf(k);
        assert!((at(k) - 0.5f64.powf(k)).abs() < 1e-12);
        assert!(at(k) < at(k - 0.5) && at(k) < at(k + 0.5));
    }

    #[test]
    fn fingerprint_rate_matches_seed_001() {
        // Seed 001: 2^16 words with 32-bit fingerprints: rate < 1/65,525 (it is ≈ 1/65,536).
        let rate = fingerprint_fpp(1 << 16, 32);
        assert!((rate - 1.0 / 65_536.0).abs() / rate < 1e-4, "{rate}");
        // 10^8 keys: 1 − e^{−10^8/2^32} ≈ 0.0230.
        assert!((fingerprint_fpp(100_000_000, 32) - 0.02301).abs() < 1e-4);
    }

    #[test]
    fn helpers() {
        assert!((binomial_sigma(0.01, 10_000) - 0.000_995).abs() < 1e-6);
        assert_eq!(queries_for(0.01, 1000.0, 10, 1_000_000), 100_000);
        assert_eq!(queries_for(1e-9, 1000.0, 10, 1_000_000), 1_000_000);
        assert_eq!(queries_for(0.5, 1000.0, 10_000, 1_000_000), 10_000);
        assert!((bits_over_bound(10.0, 0.5f64.powi(7)) - 3.0).abs() < 1e-12);
        // Seed 002: 958,505,838 bits ≈ 114.26 MiB.
        assert!((bits_to_mib(958_505_838) - 114.26).abs() < 0.01);
    }

    #[test]
    fn space_formulas_of_the_kinds_that_change() {
        // 1.44·log₂(100) = 9.585 bits per key at 1 %: the classic optimum's m/n.
        assert!((bloom_bits_per_key(0.01) - 9.585).abs() < 1e-3);
        let m = phishbloom_filter::math::optimal_num_bits(1_000_000, 0.01).unwrap();
        assert!((m as f64 / 1e6 - bloom_bits_per_key(0.01)).abs() < 1e-5);
        // (6.644 + 3) / 0.95 = 10.15 (the built filter rounds f up to 10: 10.53).
        assert!((cuckoo_bits_per_key_continuous(0.01, 0.95) - 10.152).abs() < 1e-3);
        // 1.125 × 8 = 9 bits from 10⁶ keys on; 0.875 + 0.25·1.5 = 1.25 at 10⁴.
        assert!((binary_fuse_bits_per_key(8, 1_000_000) - 9.0).abs() < 1e-9);
        assert!((binary_fuse_bits_per_key(16, 10_000) - 20.0).abs() < 1e-9);
        assert_eq!(binary_fuse_fpp(8), 1.0 / 256.0);
        // 1,000 values over 2^17: log₂(131.072) + 1.5 = 8.53 bits each.
        assert!((golomb_bits_per_value(131_072.0, 1_000) - 8.534).abs() < 1e-3);
    }

    #[test]
    fn tails_match_known_values() {
        // C(64,0..=3) = 1 + 64 + 2016 + 41664 = 43745.
        assert!((binomial_64_half_cdf(3) - 43_745.0 / 2f64.powi(64)).abs() < 1e-25);
        assert!((binomial_64_half_cdf(64) - 1.0).abs() < 1e-12);
        assert!((normal_upper_tail(1.959_964) - 0.025).abs() < 1e-6);
        assert!((normal_upper_tail(6.0) - 9.865_876e-10).abs() < 1e-12);
        assert!((normal_upper_tail(-1.0) - 0.841_344_7).abs() < 1e-6);
    }
}
