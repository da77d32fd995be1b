//! Statistics for measured rates and times: the Wilson score interval, a measured-rate record,
//! and the median of repeated timings.

/// z for a two-sided 95 % interval: the 0.975 quantile of the standard normal distribution.
pub const Z_95: f64 = 1.959_963_984_540_054;

/// The Wilson score interval for `hits` successes in `trials` Bernoulli trials at quantile `z`:
/// `(p̂ + z²/2n ± z·sqrt(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n)`.
///
/// Source: E. B. Wilson, "Probable inference, the law of succession, and statistical inference"
/// (JASA 1927). Unlike the normal approximation it stays inside [0, 1] and is sensible at zero
/// hits, which is common for false-positive counts. Returns (0, 1) for zero trials.
pub fn wilson_interval(hits: u64, trials: u64, z: f64) -> (f64, f64) {
    if trials == 0 {
        return (0.0, 1.0);
    }
    let n = trials as f64;
    let p = hits as f64 / n;
    let z2 = z * z;
    let denominator = 1.0 + z2 / n;
    let center = (p + z2 / (2.0 * n)) / denominator;
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt() / denominator;
    // At zero hits (all hits) the exact bound is 0 (1); rounding would leave a speck.
    let low = if hits == 0 {
        0.0
    } else {
        (center - half).max(0.0)
    };
    let high = if hits == trials {
        1.0
    } else {
        (center + half).min(1.0)
    };
    (low, high)
}

/// A measured false-positive rate with its 95 % Wilson interval and the theory beside it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Measurement {
    /// Queries made (non-members).
    pub queries: u64,
    /// Queries the filter answered "listed".
    pub false_positives: u64,
    /// `false_positives / queries`.
    pub rate: f64,
    /// Lower end of the 95 % Wilson interval.
    pub ci_low: f64,
    /// Upper end of the 95 % Wilson interval.
    pub ci_high: f64,
    /// The rate theory predicts for the filter's m, k and n.
    pub theoretical: f64,
}

impl Measurement {
    /// The measurement for `false_positives` out of `queries`, against `theoretical`.
    pub fn new(false_positives: u64, queries: u64, theoretical: f64) -> Self {
        let (ci_low, ci_high) = wilson_interval(false_positives, queries, Z_95);
        Measurement {
            queries,
            false_positives,
            rate: if queries == 0 {
                0.0
            } else {
                false_positives as f64 / queries as f64
            },
            ci_low,
            ci_high,
            theoretical,
        }
    }

    /// Whether the theoretical rate lies inside the 95 % interval.
    pub fn agrees_with_theory(&self) -> bool {
        (self.ci_low..=self.ci_high).contains(&self.theoretical)
    }
}

/// The median of timings or other samples (the mean of the two middle values for an even count;
/// 0 for none). Sorts a copy: samples are few.
pub fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wilson_matches_a_worked_example() {
        // 81 hits in 263 trials (Wikipedia "Binomial proportion confidence interval" example):
        // Wilson 95 % interval ≈ (0.2553, 0.3662).
        let (low, high) = wilson_interval(81, 263, Z_95);
        assert!((low - 0.2553).abs() < 5e-4, "{low}");
        assert!((high - 0.3662).abs() < 5e-4, "{high}");
    }

    #[test]
    fn wilson_is_sane_at_the_edges() {
        let (low, high) = wilson_interval(0, 1000, Z_95);
        assert_eq!(low, 0.0);
        assert!(high > 0.0 && high < 0.004, "{high}");
        assert_eq!(wilson_interval(0, 0, Z_95), (0.0, 1.0));
        let (low, high) = wilson_interval(1000, 1000, Z_95);
        assert!(low > 0.99 && high == 1.0);
    }

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }

    #[test]
    fn measurement_reports_agreement() {
        let m = Measurement::new(100, 10_000, 0.0101);
        assert_eq!(m.rate, 0.01);
        assert!(m.agrees_with_theory());
        assert!(!Measurement::new(300, 10_000, 0.01).agrees_with_theory());
    }
}
