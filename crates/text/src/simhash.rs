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
    /// Tokens per shingle (`w`) of the lookup fingerprint, the one the tables index.
    pub shingle: u32,
    /// Tokens per shingle of the check fingerprint, a second SimHash that every match must
    /// also be near (0: none).
    pub check_shingle: u32,
    /// The largest distance of the check fingerprints for a match (with `check_shingle` > 0).
    pub check_distance: u32,
    /// Documents with fewer tokens are fingerprinted exactly ([`Fingerprint::Exact`]).
    pub min_tokens: u32,
    /// How shingles are weighted (both fingerprints).
    pub weighting: Weighting,
}

/// The most tokens per shingle: beyond a few words a shingle is as fragile as the whole text.
pub const MAX_SHINGLE: u32 = 16;

impl Default for SimHashParams {
    /// Words (`w = 1`, tf weights) for the lookup, checked by word pairs (`w = 2`, tf) within
    /// 8 bits, and the exact fallback below 12 tokens: chosen by measurement (`cargo run
    /// --release -p phishbloom-lab-cli -- near`, docs/report/near.md) on real prose (The Debian
    /// Administrator's Handbook, 367 documents of ~3 KB, 184 known and 183 unrelated from
    /// disjoint pages), at distance 3.
    ///
    /// One SimHash cannot both find edited copies and keep unrelated texts apart: editing 2 %
    /// of a text's words changes ~4 % of its word pairs, so `w = 2` alone finds only 0.326 of
    /// such copies within 3 bits; words alone (`w = 1`) find 0.984 of them but put unrelated
    /// texts of one language close (17.2 ± 5.5 bits: one of 183 matched, ~6·10⁴ expected
    /// among 10⁷). So the words' SimHash finds candidates and the word pairs' confirms them:
    /// unrelated texts are 30.8 ± 4.0 bits apart in it. Among check widths 2 and 3 and check
    /// distances 6…16, the lab's rule (no unrelated match at k = 3, ≤ 0.005 expected false
    /// matches per unrelated text against 10⁷ known ones, then the best worst recall over
    /// 1 %/2 % words, reordered paragraphs and greeting) picks word pairs within 8: 2 %-edited
    /// copies found 0.957 (1 %: 0.984, reordered: 0.902, greeting: 0.973) at precision 1.000,
    /// 0 of 183 unrelated texts matched, 9.5·10⁻⁴ expected false matches at 10⁷ (the two
    /// distances taken as independent; measured dependence ×1.32 at most gives 1.3·10⁻³).
    /// Within 10 finds more (2 %: 0.978) but expects 1.4·10⁻² false matches at 10⁷. tf-idf
    /// gains nothing (measured) and would need document frequencies in the file; set weights
    /// lose recall (2 %: 0.57). Short texts: from 12 tokens on no unrelated window matched;
    /// below it the exact hash of the tokens (Rspamd's fallback) stands in.
    fn default() -> Self {
        SimHashParams {
            shingle: 1,
            check_shingle: 2,
            check_distance: 8,
            min_tokens: 12,
            weighting: Weighting::Tf,
        }
    }
}

/// A document's fingerprint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Fingerprint {
    /// The SimHashes of a document of at least [`SimHashParams::min_tokens`] tokens.
    Sim {
        /// The lookup fingerprint (shingles of [`SimHashParams::shingle`] tokens).
        key: u64,
        /// The check fingerprint (shingles of [`SimHashParams::check_shingle`] tokens; 0
        /// without one).
        check: u64,
    },
    /// The hash of a shorter document's whole token sequence.
    Exact(u64),
}

impl Fingerprint {
    /// The 64 bits looked up: the lookup SimHash, or the exact hash.
    pub fn bits(self) -> u64 {
        match self {
            Fingerprint::Sim { key, .. } | Fingerprint::Exact(key) => key,
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
        let w = params.shingle.clamp(1, MAX_SHINGLE) as usize;
        let hashes: &[KeyHash] = self.tokens.hashes();
        if hashes.len() < (params.min_tokens as usize).max(w) {
            return Fingerprint::Exact(phrase_hash(hashes).h1);
        }
        let key = self.of_shingles(w, params.weighting);
        let check = match params.check_shingle.min(MAX_SHINGLE) as usize {
            0 => 0,
            w => self.of_shingles(w, params.weighting),
        };
        Fingerprint::Sim { key, check }
    }

    /// The SimHash of the shingles of `w` tokens of the tokens last tokenized (none when there
    /// are fewer than `w` tokens: 0).
    fn of_shingles(&mut self, w: usize, weighting: Weighting) -> u64 {
        self.features.clear();
        self.features.extend(
            self.tokens
                .hashes()
                .windows(w)
                .map(|shingle| phrase_hash(shingle).h1),
        );
        if weighting == Weighting::Set {
            self.features.sort_unstable();
            self.features.dedup();
        }
        simhash(self.features.iter().map(|&f| (f, 1)))
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

    /// The check fingerprint (word pairs) under the defaults.
    fn check(hasher: &mut SimHasher, words: &[String]) -> u64 {
        match hasher
            .fingerprint(&words.join(" "), &SimHashParams::default())
            .0
        {
            Fingerprint::Sim { check, .. } => check,
            Fingerprint::Exact(_) => panic!("a long text has SimHashes"),
        }
    }

    #[test]
    fn the_check_fingerprint_moves_little_for_one_word_and_far_for_another_text() {
        let mut h = SimHasher::new();
        let mut rng = SplitMix64::new(5);
        let (mut near, mut far) = (0u32, 0u32);
        for _ in 0..50 {
            let mut words = text(&mut rng, 500);
            let a = check(&mut h, &words);
            words[rng.below(500) as usize] = "zebra".into();
            near += hamming(a, check(&mut h, &words));
            let other: Vec<String> = (0..300).map(|_| format!("w{}", rng.next_u64())).collect();
            far += hamming(a, check(&mut h, &other));
        }
        // One word changes two of ~500 word pairs; an unrelated text is Binomial(64, ½): the
        // mean of 50 pairs has sd 4/√50 ≈ 0.57, so ±3 is over five standard deviations.
        assert!(f64::from(near) / 50.0 <= 3.0, "mean distance {}", near / 50);
        assert!(
            (f64::from(far) / 50.0 - 32.0).abs() < 3.0,
            "mean {}",
            far / 50
        );
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
