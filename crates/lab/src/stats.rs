//! Statistics of the measurements: the measured-rate record with its Wilson interval (defined
//! beside the product's own evaluation, [`phishbloom_blocklist::eval`], and used here as is),
//! and the median of repeated timings.

pub use phishbloom_blocklist::eval::{wilson_interval, Measurement, Z_95};

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
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[]), 0.0);
    }
}
