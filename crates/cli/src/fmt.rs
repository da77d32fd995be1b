//! Human-readable numbers for terminal output: thousands separators, binary byte units, rates.

/// `12345678` → `12,345,678`.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Bytes in binary units: `12,416 B` → `12.1 KiB`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(count(0), "0");
        assert_eq!(count(98_985), "98,985");
        assert_eq!(count(1_000_000), "1,000,000");
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(12_416), "12.1 KiB");
        assert_eq!(bytes(119_813_248), "114.3 MiB");
        assert_eq!(percent(0.00934), "0.934 %");
        assert_eq!(percent(0.0), "0 %");
        assert_eq!(percent(1e-6), "1.00e-4 %");
    }
}
