//! Helper of `benches/build.sh` (the two `build` speed figures): generates a list of keys
//! and runs the floor peer that a streamed build is compared with.
//!
//! ```text
//! build_bench gen LINES PATH     write LINES keys (≈ 20 bytes a line, 1 in 16 a duplicate)
//! build_bench floor PATH LINES   read PATH, xxh3-64 each line, set one bit per line, one thread
//! ```
//!
//! The floor is what a build cannot beat on one core: read the file through a fixed buffer,
//! split it at `\n` with `memchr`, hash each line with xxh3-64 and set one bit of an array as
//! large as the blocked filter `build --exact` makes for LINES keys at 1 % (one random write per
//! line, to the same memory a real filter would touch). It prints the set bits so the work
//! cannot be optimized away.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::process::ExitCode;
use std::time::Instant;

use phishbloom_filter::rng::SplitMix64;
use phishbloom_filter::{BlockedBloomFilter, Filter};

/// One line in this many repeats an earlier key (the "some duplicates" of the benchmark).
const DUPLICATE_EVERY: u64 = 16;

/// Shortest and longest generated key, in bytes: uniform lengths with a mean of 19.5, so a line
/// with its `\n` averages ≈ 20.5 bytes (a 10⁷-line file is 208 MB).
const KEY_LENGTHS: (u64, u64) = (12, 27);

/// Bytes read at a time by the floor (the same order as the build's own buffer).
const READ_BUFFER: usize = 1 << 20;

/// The `index`-th distinct key: base-36 digits of a SplitMix64 stream seeded by `index`.
fn key(index: u64, out: &mut Vec<u8>) {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut rng = SplitMix64::new(index);
    let length = KEY_LENGTHS.0 + rng.below(KEY_LENGTHS.1 - KEY_LENGTHS.0 + 1);
    let mut word = rng.next_u64();
    let mut left = 12; // 36^12 < 2^64: twelve digits per word
    for _ in 0..length {
        if left == 0 {
            word = rng.next_u64();
            left = 12;
        }
        out.push(DIGITS[(word % 36) as usize]);
        word /= 36;
        left -= 1;
    }
}

fn generate(lines: u64, path: &str) -> std::io::Result<()> {
    let mut out = BufWriter::with_capacity(READ_BUFFER, File::create(path)?);
    let mut rng = SplitMix64::new(0x5eed);
    let mut distinct = 0u64;
    let mut line = Vec::with_capacity(64);
    for _ in 0..lines {
        line.clear();
        if distinct > 0 && rng.below(DUPLICATE_EVERY) == 0 {
            key(rng.below(distinct), &mut line);
        } else {
            key(distinct, &mut line);
            distinct += 1;
        }
        line.push(b'\n');
        out.write_all(&line)?;
    }
    out.flush()?;
    eprintln!("{lines} lines, {distinct} distinct keys");
    Ok(())
}

fn floor(path: &str, lines: u64) -> std::io::Result<()> {
    let started = Instant::now();
    // The bits of the blocked filter `build --exact` sizes for this many keys at 1 %.
    let num_bits = BlockedBloomFilter::new(lines.max(1), 0.01)
        .map_err(std::io::Error::other)?
        .num_bits();
    let mut bits = vec![0u64; num_bits.div_ceil(64) as usize];
    let mut file = File::open(path)?;
    let mut buffer = vec![0u8; READ_BUFFER];
    let mut filled = 0;
    let mut seen = 0u64;
    let mut set = |line: &[u8]| {
        let bit = phishbloom_filter::fast_range(xxhash_rust::xxh3::xxh3_64(line), num_bits);
        bits[(bit / 64) as usize] |= 1 << (bit % 64);
        seen += 1;
    };
    loop {
        let read = file.read(&mut buffer[filled..])?;
        let end = filled + read;
        let mut start = 0;
        for at in memchr::memchr_iter(b'\n', &buffer[..end]) {
            set(&buffer[start..at]);
            start = at + 1;
        }
        if read == 0 {
            if start < end {
                set(&buffer[start..end]);
            }
            break;
        }
        buffer.copy_within(start..end, 0);
        filled = end - start;
        if filled == buffer.len() {
            return Err(std::io::Error::other("a line longer than the buffer"));
        }
    }
    let ones: u64 = bits.iter().map(|w| u64::from(w.count_ones())).sum();
    println!(
        "floor: {seen} lines, {num_bits} bits, {ones} set, {:.3} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let count = |i: usize| args.get(i).and_then(|s| s.parse::<u64>().ok());
    let result = match (args.get(1).map(String::as_str), args.len()) {
        (Some("gen"), 4) => match count(2) {
            Some(lines) => generate(lines, &args[3]),
            None => Err(std::io::Error::other("LINES must be a number")),
        },
        (Some("floor"), 4) => match count(3) {
            Some(lines) => floor(&args[2], lines),
            None => Err(std::io::Error::other("LINES must be a number")),
        },
        _ => Err(std::io::Error::other(
            "usage: build_bench gen LINES PATH | build_bench floor PATH LINES",
        )),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("build_bench: {error}");
            ExitCode::from(2)
        }
    }
}
