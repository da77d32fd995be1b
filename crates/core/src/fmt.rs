//! Numbers for people: thousands separators, binary byte units, rates with three significant
//! digits, intervals. One copy for the command line and the report.

/// `12345678` → `12,345,678`.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Bytes in binary units: `12,416` → `12.1 KiB`.
pub fn bytes(value: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut size = value as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < UNITS.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{value} B")
    } else {
        format!("{size:.1} {}", UNITS[unit])
    }
}

/// A probability as a percentage with enough digits to see small rates: `0.00934` → `0.934 %`.
pub fn percent(rate: f64) -> String {
    let pct = rate * 100.0;
    if pct == 0.0 {
        "0 %".to_string()
    } else if pct >= 0.1 {
        format!("{pct:.3} %")
    } else {
        format!("{pct:.2e} %")
    }
}

/// A rate with three significant digits: `0.0081923` → `0.00819`, `9.012e-6` → `9.01e-6`.
pub fn rate(value: f64) -> String {
    if value == 0.0 {
        "0".to_string()
    } else if value >= 1e-3 {
        let decimals = (2 - value.log10().floor() as i32).max(0) as usize;
        format!("{value:.decimals$}")
    } else {
        format!("{value:.2e}")
    }
}

/// A 95 % interval: `[0.00791, 0.00846]`.
pub fn interval(low: f64, high: f64) -> String {
    format!("[{}, {}]", rate(low), rate(high))
}

/// A ratio or other real with `digits` decimals.
pub fn real(value: f64, digits: usize) -> String {
    format!("{value:.digits$}")
}

/// A power of ten as `10^e` when `value` is one, else with separators.
pub fn power_of_ten(value: u64) -> String {
    let exponent = (value as f64).log10().round() as u32;
    if 10u64.checked_pow(exponent) == Some(value) && exponent >= 3 {
        format!("10^{exponent}")
    } else {
        count(value)
    }
}

/// Seconds since the Unix epoch as a UTC date and time: `1795415811` → `2026-11-23 06:36:51 UTC`.
pub fn utc(seconds: u64) -> String {
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01.
///
/// Source: Howard Hinnant, "chrono-Compatible Low-Level Date Algorithms", `civil_from_days`
/// (eras of 400 years = 146,097 days, years starting in March so the leap day is last).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468; // days from 0000-03-01 to 1970-01-01
    let era = z / 146_097;
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153; // 0 = March
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        // `date -u -d @1795415811` and a leap day (`date -u -d 2024-02-29 +%s` = 1709164800).
        assert_eq!(utc(1_795_415_811), "2026-11-23 06:36:51 UTC");
        assert_eq!(utc(1_709_164_800 + 86_399), "2024-02-29 23:59:59 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
    }

    #[test]
    fn percentages() {
        assert_eq!(percent(0.00934), "0.934 %");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(1e-6), "1.00e-4 %");
    }

    #[test]
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(98_985), "98,985");
        assert_eq!(bytes(12_416), "12.1 KiB");
        assert_eq!(bytes(119_813_248), "114.3 MiB");
        assert_eq!(rate(0.0081923), "0.00819");
        assert_eq!(rate(0.0523), "0.0523");
        assert_eq!(rate(0.5), "0.500");
        assert_eq!(rate(9.012e-6), "9.01e-6");
        assert_eq!(rate(0.0), "0");
        assert_eq!(power_of_ten(100_000_000), "10^8");
        assert_eq!(power_of_ten(10_327), "10,327");
    }
}
