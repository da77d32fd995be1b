//! Readings of the machine the measurements run on: the process's resident memory and the load
//! averages (Linux `/proc`; `None` elsewhere).

/// Resident memory of this process in bytes, from `/proc/self/statm` (Linux); `None` elsewhere.
pub fn resident_bytes() -> Option<u64> {
    /// Page size of x86-64 and most aarch64 Linux kernels; statm counts pages.
    const PAGE_BYTES: u64 = 4096;
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * PAGE_BYTES)
}

/// Growth of the resident memory from `before` to now, if both readings exist.
pub fn resident_growth(before: Option<u64>) -> Option<u64> {
    before
        .zip(resident_bytes())
        .map(|(b, a)| a.saturating_sub(b))
}

/// The machine's load averages (1, 5, 15 minutes) from `/proc/loadavg`, if readable.
pub fn load_average() -> Option<String> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    Some(
        text.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_are_plausible_on_linux() {
        if !std::path::Path::new("/proc/self/statm").is_file() {
            return;
        }
        // A running test binary holds at least one page.
        assert!(resident_bytes().is_some_and(|b| b >= 4096));
        let load = load_average().expect("/proc/loadavg beside /proc/self/statm");
        assert_eq!(load.split(", ").count(), 3, "{load}");
    }
}
