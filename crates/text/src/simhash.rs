//! SimHash: one 64-bit fingerprint per document, such that near-copies get fingerprints a few
//! bits apart (Charikar, "Similarity Estimation Techniques from Rounding Algorithms", STOC
//! 2002; used for near-duplicate pages by Manku, Jain and Das Sarma, WWW 2007).
//!
//! A document's features are its shingles: every run of `w` consecutive tokens ([`crate::tokens`]:
//! UAX #29 words, NFKC and case folding, one token per character in scripts without spaces),
//! each hashed to 64 bits by [`crate::phrase::phrase_hash`] — the same hash `scan` gives a
//! phrase, so features cost one multiply-fold per token of the shingle. For each of the 64 bit
//! positions, the fingerprint's bit is 1 when the features with a 1 there outweigh those with a
//! 0. Changing a few words changes the features around them only, so the sums move a little and
//! few bits flip; two unrelated documents agree on each bit with probability ½ (their distance
//! is Binomial(64, ½): 32 ± 4).
//!
//! A short text has too few features for the sums to be stable (Rspamd's fuzzy storage falls
//! back to an exact hash for short texts, and so does this): below [`SimHashParams::min_tokens`]
//! tokens a document is fingerprinted by [`Fingerprint::Exact`], the hash of its whole token
//! sequence, which matches only a copy with the same words.

use phishbloom_filter::KeyHash;

use crate::phrase::phrase_hash;
use crate::tokens::Tokens;

/// How shingles are weighted in the sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Weighting {
    /// Each occurrence of a shingle counts once (term frequency).
    Tf,
    /// Each distinct shingle counts once, however often it occurs.
    Set,
}

impl Weighting {
    /// The code stored in a near-duplicate list.
    pub fn code(self) -> u8 {
        match self {
            Weighting::Tf => 0,
            Weighting::Set => 1,
        }
    }

    /// The weighting of a stored code.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Weighting::Tf),
            1 => Some(Weighting::Set),
            _ => None,
        }
    }

    /// The name users see.
    pub fn name(self) -> &'static str {
        match self {
            Weighting::Tf => "tf",
            Weighting::Set => "set",
        }
    }
}

/// How documents are fingerprinted; a near-duplicate list stores these, and its queries use
/// them, so the list's documents and the ones checked against it agree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimHashParams {
    /// Tokens per shingle (`w`).
    pub shingle: u32,
    /// Documents with fewer tokens are fingerprinted exactly ([`Fingerprint::Exact`]).
    pub min_tokens: u32,
    /// How shingles are weighted.
    pub weighting: Weighting,
}

/// The most tokens per shingle: beyond a few words a shingle is as fragile as the whole text.
pub const MAX_SHINGLE: u32 = 16;

impl Default for SimHashParams {
    /// `w = 2` with tf weights, and the exact fallback below 12 tokens: chosen by measurement
    /// (`cargo run --release -p phishbloom-lab-cli -- near`, docs/report/near.md) on real prose
    /// (The Debian Administrator's Handbook, 367 documents of ~3 KB, 184 known and 183
    /// unrelated from disjoint pages), at distance 3. The rule: no unrelated document matched,
    /// at most 0.005 expected false matches per unrelated document against 10⁷ known ones
    /// (normal fit of the unrelated distances), then the best worst-case recall over 1 % and
    /// 2 % of the words edited, reordered paragraphs and a new greeting. `w = 1` finds the most
    /// copies (tf: 0.984 at 2 % edited) but puts unrelated texts of one language close
    /// (distances 17.2 ± 5.5, one false match of 183; ~6·10⁴ expected at 10⁷), `w = 1` set
    /// has 0.009 expected; `w = 2` tf keeps unrelated distances at 30.8 ± 4.0 (6·10⁻⁵
    /// expected) and finds 0.538 / 0.326 of the copies with 1 % / 2 % of their words edited,
    /// 0.293 reordered, 0.755 with a new greeting; `w ≥ 3` and set weighting find fewer (each
    /// edited word moves `w` features). The target (recall ≥ 0.95 at 2 %) is not met
    /// by 64-bit SimHash at k = 3: it needs `k` ≈ 7 or more (recall 0.832 at k = 6).
    /// tf-idf (document frequencies of the known documents, which a list does not store) was
    /// measured too and gains nothing at `w = 2` (0.201 at 2 %). Short texts: random windows
    /// of 8…128 tokens had unrelated distances of 32 ± 4; one unrelated 8-token window matched
    /// (1 of 183), none from 12 tokens on, so the exact fallback covers texts below 12 tokens.
    /// SimHash finds few edited short copies (1.1 % at 12 tokens, 3.3 % at 16; the exact hash
    /// none). Templated short mails sharing most words were not measured.
    fn default() -> Self {
        SimHashParams {
            shingle: 2,
            min_tokens: 12,
            weighting: Weighting::Tf,
        }
    }
}

/// A document's fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fingerprint {
    /// The SimHash of a document of at least [`SimHashParams::min_tokens`] tokens.
    Sim(u64),
    /// The hash of a shorter document's whole token sequence.
    Exact(u64),
}

impl Fingerprint {
    /// The 64 bits.
    pub fn bits(self) -> u64 {
        match self {
            Fingerprint::Sim(v) | Fingerprint::Exact(v) => v,
        }
    }
}

/// The Hamming distance of two fingerprints.
pub fn hamming(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

/// The SimHash of weighted 64-bit features: bit `i` is set when the features with bit `i` set
/// weigh more than those without (Charikar 2002, section 3, with ±1 hyperplanes per bit).
pub fn simhash(features: impl IntoIterator<Item = (u64, i32)>) -> u64 {
    let mut sums = [0i64; 64];
    for (feature, weight) in features {
        let weight = i64::from(weight);
        for (bit, sum) in sums.iter_mut().enumerate() {
            // Branch-free: +weight for a 1 bit, −weight for a 0 bit.
            let one = ((feature >> bit) & 1) as i64;
            *sum += weight * (2 * one - 1);
        }
    }
    sums.iter()
        .enumerate()
        .fold(0u64, |acc, (bit, &sum)| acc | (u64::from(sum > 0) << bit))
}

/// Fingerprints documents, keeping its buffers between them.
#[derive(Clone, Debug, Default)]
pub struct SimHasher {
    tokens: Tokens,
    features: Vec<u64>,
}

impl SimHasher {
    /// A hasher with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// The fingerprint of `text` under `params`, and its number of tokens.
    pub fn fingerprint(&mut self, text: &str, params: &SimHashParams) -> (Fingerprint, usize) {
        self.tokens.tokenize(text);
        (self.of_tokens(params), self.tokens.len())
    }

    /// The fingerprint of the tokens last tokenized.
    fn of_tokens(&mut self, params: &SimHashParams) -> Fingerprint {
        let hashes: &[KeyHash] = self.tokens.hashes();
        let w = params.shingle.clamp(1, MAX_SHINGLE) as usize;
        if hashes.len() < (params.min_tokens as usize).max(w) {
            return Fingerprint::Exact(phrase_hash(hashes).h1);
        }
        self.features.clear();
        self.features
            .extend(hashes.windows(w).map(|shingle| phrase_hash(shingle).h1));
        if params.weighting == Weighting::Set {
            self.features.sort_unstable();
            self.features.dedup();
        }
        Fingerprint::Sim(simhash(self.features.iter().map(|&f| (f, 1))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_filter::rng::SplitMix64;

    const WORDS: &[&str] = &[
        "account",
        "verify",
        "your",
        "password",
        "bank",
        "please",
        "click",
        "the",
        "link",
        "below",
        "within",
        "hours",
        "security",
        "team",
        "update",
        "billing",
        "information",
        "suspended",
        "login",
        "confirm",
        "identity",
        "unusual",
        "activity",
        "detected",
        "we",
        "have",
        "noticed",
        "sign",
        "in",
        "attempt",
        "from",
        "new",
        "device",
        "customer",
        "service",
        "thank",
        "you",
        "for",
        "choosing",
        "our",
        "online",
        "banking",
        "today",
    ];

    fn text(rng: &mut SplitMix64, words: usize) -> Vec<String> {
        (0..words)
            .map(|_| WORDS[rng.below(WORDS.len() as u64) as usize].to_string())
            .collect()
    }

    fn fp(hasher: &mut SimHasher, words: &[String]) -> u64 {
        hasher
            .fingerprint(&words.join(" "), &SimHashParams::default())
            .0
            .bits()
    }

    #[test]
    fn identical_texts_are_at_distance_zero_whatever_their_case_and_spacing() {
        let mut h = SimHasher::new();
        let mut rng = SplitMix64::new(1);
        let words = text(&mut rng, 400);
        let a = fp(&mut h, &words);
        let shouted = words.join("  ").to_uppercase();
        let b = h.fingerprint(&shouted, &SimHashParams::default()).0.bits();
        assert_eq!(hamming(a, b), 0);
    }

    #[test]
    fn one_changed_word_moves_few_bits() {
        let mut h = SimHasher::new();
        let mut rng = SplitMix64::new(2);
        let mut total = 0;
        for _ in 0..50 {
            let mut words = text(&mut rng, 500);
            let a = fp(&mut h, &words);
            let at = rng.below(500) as usize;
            words[at] = "zebra".into();
            total += hamming(a, fp(&mut h, &words));
        }
        // Three features of ~500 change: a handful of the 64 sums cross zero at most.
        assert!(
            total as f64 / 50.0 <= 3.0,
            "mean distance {}",
            total as f64 / 50.0
        );
    }

    #[test]
    fn unrelated_texts_are_about_32_bits_apart() {
        // Binomial(64, ½): mean 32, sd 4; the mean of 200 pairs has sd 4/√200 ≈ 0.28, so ±1.5
        // is more than five standard deviations (texts of distinct random words).
        let mut h = SimHasher::new();
        let mut rng = SplitMix64::new(3);
        let mut sum = 0u64;
        for _ in 0..200 {
            let a: Vec<String> = (0..300).map(|_| format!("w{}", rng.next_u64())).collect();
            let b: Vec<String> = (0..300).map(|_| format!("w{}", rng.next_u64())).collect();
            sum += u64::from(hamming(fp(&mut h, &a), fp(&mut h, &b)));
        }
        let mean = sum as f64 / 200.0;
        assert!((mean - 32.0).abs() < 1.5, "mean distance {mean}");
    }

    #[test]
    fn short_texts_fall_back_to_an_exact_hash() {
        let mut h = SimHasher::new();
        let params = SimHashParams::default();
        let (a, n) = h.fingerprint("Your parcel is waiting: pay the fee", &params);
        assert_eq!(n, 7);
        assert!(matches!(a, Fingerprint::Exact(_)));
        let (b, _) = h.fingerprint("YOUR parcel is   waiting -- pay the fee!", &params);
        assert_eq!(a, b);
        let (c, _) = h.fingerprint("Your parcel is waiting: pay the fees", &params);
        assert_ne!(a, c);
    }

    #[test]
    fn set_weighting_ignores_repeats() {
        let mut h = SimHasher::new();
        let set = SimHashParams {
            weighting: Weighting::Set,
            ..SimHashParams::default()
        };
        let mut rng = SplitMix64::new(4);
        let words = text(&mut rng, 200);
        let once = words.join(" ");
        let twice = format!("{once} {once}");
        let (a, _) = h.fingerprint(&once, &set);
        let (b, _) = h.fingerprint(&twice, &set);
        // The doubled text adds only the one shingle across the seam.
        assert!(hamming(a.bits(), b.bits()) <= 2);
        assert_eq!(
            Weighting::from_code(Weighting::Set.code()),
            Some(Weighting::Set)
        );
    }
}
