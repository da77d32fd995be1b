//! The keys of the peer bench: URL-like synthetic keys of 20–80 bytes, seed 000's random URLs,
//! and the phishing dataset's URLs, each set in one contiguous string.

/// Random `http://xxxxxxxxxx.com` URLs that query case (a), seed 000's test at 100× its size.
pub(crate) const RANDOM_URLS: usize = 1_000_000;

/// Lowercase ASCII letters, `a` to `z`.
pub(crate) const LETTERS: usize = 26;

/// Letters in the host of a random URL of case (a), as in seed 000's test.
pub(crate) const RANDOM_HOST_LETTERS: usize = 10;

/// Shortest and longest synthetic key, in bytes.
pub(crate) const MIN_KEY_LEN: usize = 20;
pub(crate) const MAX_KEY_LEN: usize = 80;

/// Shortest and longest host label of a synthetic key.
pub(crate) const MIN_HOST: usize = 3;
pub(crate) const MAX_HOST: usize = 12;

/// Longest fixed part of a synthetic key: `https://` (8) + `.com` (4) + `/` + the stream tag.
pub(crate) const MAX_FIXED: usize = 14;

/// Top-level domains of synthetic keys.
pub(crate) const TLDS: [&str; 6] = [".com", ".net", ".org", ".io", ".cn", ".ru"];

/// Characters of a synthetic key's path.
pub(crate) const PATH_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789/-_.?=";

/// The tag after the first `/` of the path: it keeps members and non-members disjoint, so every
/// positive answer to a non-member query of case (b) is a false positive.
pub(crate) const MEMBER_TAG: u8 = b'm';
pub(crate) const NON_MEMBER_TAG: u8 = b'q';

/// SplitMix64 (Steele, Lea & Flood 2014): a tiny fixed-seed generator, the same as the tests'.
pub(crate) struct SplitMix64(pub(crate) u64);

impl SplitMix64 {
    pub(crate) fn next_u64(&mut self) -> u64 {
        // The golden-ratio increment and the two multipliers of the published algorithm.
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (Lemire's multiply-shift; the bias is below 2^-50 for these `n`).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// Many keys in one contiguous string, so 40M keys cost 40M × ~50 bytes and no allocation each.
#[derive(Default)]
pub(crate) struct KeyText {
    pub(crate) text: String,
    pub(crate) ends: Vec<usize>,
}

impl KeyText {
    pub(crate) fn push(&mut self, key: &str) {
        self.text.push_str(key);
        self.ends.push(self.text.len());
    }

    /// A slice of every key, in order.
    pub(crate) fn views(&self) -> Vec<&str> {
        let mut start = 0;
        self.ends
            .iter()
            .map(|&end| {
                let key = &self.text[start..end];
                start = end;
                key
            })
            .collect()
    }
}

/// `count` URL-like keys of 20–80 bytes (length uniform), tagged with `tag`:
/// `http[s]://<3–12 letters><tld>/<tag><path chars>`.
pub(crate) fn synthetic_keys(count: usize, seed: u64, tag: u8) -> KeyText {
    let mut rng = SplitMix64(seed);
    // Mean length is 50 bytes.
    let mut bytes = Vec::with_capacity(count * (MIN_KEY_LEN + MAX_KEY_LEN) / 2);
    let mut ends = Vec::with_capacity(count);
    for _ in 0..count {
        let len = MIN_KEY_LEN + rng.below(MAX_KEY_LEN - MIN_KEY_LEN + 1);
        let end = bytes.len() + len;
        let scheme: &[u8] = if rng.next_u64() & 1 == 0 {
            b"http://"
        } else {
            b"https://"
        };
        bytes.extend_from_slice(scheme);
        // Cap the host so that the fixed parts always fit in `len`.
        let host = (MIN_HOST + rng.below(MAX_HOST - MIN_HOST + 1)).min(len - MAX_FIXED);
        for _ in 0..host {
            bytes.push(b'a' + rng.below(LETTERS) as u8);
        }
        bytes.extend_from_slice(TLDS[rng.below(TLDS.len())].as_bytes());
        bytes.push(b'/');
        bytes.push(tag);
        while bytes.len() < end {
            bytes.push(PATH_CHARS[rng.below(PATH_CHARS.len())]);
        }
        ends.push(end);
    }
    KeyText {
        text: String::from_utf8(bytes).expect("synthetic keys are ASCII"),
        ends,
    }
}

/// The random queries of case (a): `http://` + 10 lowercase letters + `.com`.
pub(crate) fn random_urls(count: usize, seed: u64) -> KeyText {
    let mut rng = SplitMix64(seed);
    let mut keys = KeyText::default();
    let mut url = String::new();
    for _ in 0..count {
        url.clear();
        url.push_str("http://");
        for _ in 0..RANDOM_HOST_LETTERS {
            url.push(char::from(b'a' + rng.below(LETTERS) as u8));
        }
        url.push_str(".com");
        keys.push(&url);
    }
    keys
}

/// Phishing (label -1) and benign (label 1) URLs of `url,isMalicious` rows. Splits each line at
/// its last comma (URLs may contain commas); a URL in double quotes is unquoted (`""` → `"`).
pub(crate) fn read_dataset(text: &str) -> (KeyText, KeyText) {
    let (mut phishing, mut benign) = (KeyText::default(), KeyText::default());
    for line in text.lines().skip(1) {
        let Some((url, label)) = line.trim_end_matches('\r').rsplit_once(',') else {
            continue;
        };
        let url = match url.strip_prefix('"').and_then(|u| u.strip_suffix('"')) {
            Some(quoted) => quoted.replace("\"\"", "\""),
            None => url.to_owned(),
        };
        match label.trim() {
            "-1" => phishing.push(&url),
            "1" => benign.push(&url),
            _ => {}
        }
    }
    (phishing, benign)
}
