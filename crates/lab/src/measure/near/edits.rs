//! The edits a phishing campaign makes to a known mail or page, applied to corpus documents
//! with a seeded RNG: words substituted, inserted or deleted at a rate, paragraphs reordered,
//! the greeting replaced by the recipient's name and a tracking token appended.

use phishbloom_filter::rng::SplitMix64;

use crate::corpus::Document;

/// One kind of edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Edit {
    /// `round(percent × words / 100)` (at least one) single-word edits, each a substitution,
    /// an insertion or a deletion with equal probability, at uniform positions; new words are
    /// drawn from the corpus's words (so by their frequency in real prose).
    Words {
        /// Percent of the words edited.
        percent: u32,
    },
    /// The paragraphs in a random order (Fisher–Yates).
    Reorder,
    /// `Dear <First> <Last>,` in place of the first paragraph when that is a line of at most
    /// [`GREETING_WORDS`] words (a heading, a salutation), else before it; and a line
    /// `Ref: <16 hex digits>` appended: the changes of a mail merge.
    Greeting,
}

/// The edits measured, in the report's order.
pub const EDITS: [Edit; 7] = [
    Edit::Words { percent: 1 },
    Edit::Words { percent: 2 },
    Edit::Words { percent: 5 },
    Edit::Words { percent: 10 },
    Edit::Words { percent: 20 },
    Edit::Reorder,
    Edit::Greeting,
];

/// The longest first paragraph a greeting replaces (longer ones are kept, the greeting put
/// before them).
pub const GREETING_WORDS: usize = 12;

const FIRST: &[&str] = &[
    "Anna", "Bruno", "Chloé", "David", "Emma", "Farid", "Grace", "Hugo", "Ines", "Jonas", "Kemal",
    "Lena", "Marco", "Nadia", "Olivier", "Priya",
];
const LAST: &[&str] = &[
    "Martin", "Schmidt", "Rossi", "García", "Nowak", "Dubois", "Smith", "Jansen", "Silva",
    "Kowalski", "Müller", "Bernard",
];

impl Edit {
    /// A short label for tables: `2 % words`, `reordered`, `greeting + token`.
    pub fn label(self) -> String {
        match self {
            Edit::Words { percent } => format!("{percent} % words"),
            Edit::Reorder => "reordered paragraphs".into(),
            Edit::Greeting => "greeting + token".into(),
        }
    }

    /// The edited copy of `doc`'s text; `vocabulary` holds the words new ones are drawn from.
    pub fn apply(self, doc: &Document, vocabulary: &[String], rng: &mut SplitMix64) -> String {
        match self {
            Edit::Words { percent } => edit_words(&doc.text(), percent, vocabulary, rng),
            Edit::Reorder => {
                let mut paragraphs = doc.paragraphs.clone();
                for i in (1..paragraphs.len()).rev() {
                    let j = rng.below(i as u64 + 1) as usize;
                    paragraphs.swap(i, j);
                }
                paragraphs.join("\n\n")
            }
            Edit::Greeting => {
                let name = format!(
                    "{} {}",
                    FIRST[rng.below(FIRST.len() as u64) as usize],
                    LAST[rng.below(LAST.len() as u64) as usize]
                );
                let mut paragraphs = doc.paragraphs.clone();
                let greeting = format!("Dear {name},");
                match paragraphs.first_mut() {
                    Some(first) if first.split_whitespace().count() <= GREETING_WORDS => {
                        *first = greeting;
                    }
                    _ => paragraphs.insert(0, greeting),
                }
                paragraphs.push(format!("Ref: {:016x}", rng.next_u64()));
                paragraphs.join("\n\n")
            }
        }
    }
}

/// Words edited for a rate: `round(percent × words / 100)`, at least one.
pub fn edits_for(words: usize, percent: u32) -> usize {
    ((words as f64 * f64::from(percent) / 100.0).round() as usize).max(1)
}

/// `text` with [`edits_for`] single-word edits (see [`Edit::Words`]); paragraph breaks stay.
pub fn edit_words(text: &str, percent: u32, vocabulary: &[String], rng: &mut SplitMix64) -> String {
    // Words, with "\n\n" standing for a paragraph break that no edit touches.
    let mut words: Vec<String> = Vec::new();
    for (i, paragraph) in text.split("\n\n").enumerate() {
        if i > 0 {
            words.push("\n\n".into());
        }
        words.extend(paragraph.split_whitespace().map(str::to_string));
    }
    let count = words.iter().filter(|w| *w != "\n\n").count();
    let draw = |rng: &mut SplitMix64| -> String {
        if vocabulary.is_empty() {
            "edited".into()
        } else {
            vocabulary[rng.below(vocabulary.len() as u64) as usize].clone()
        }
    };
    for _ in 0..edits_for(count, percent) {
        let at = rng.below(words.len().max(1) as u64) as usize;
        match rng.below(3) {
            0 if at < words.len() && words[at] != "\n\n" => words[at] = draw(rng),
            1 => {
                let word = draw(rng);
                words.insert(at, word);
            }
            2 if at < words.len() && words[at] != "\n\n" => {
                words.remove(at);
            }
            // A substitution or deletion that fell on a paragraph break inserts instead.
            _ => {
                let word = draw(rng);
                words.insert(at, word);
            }
        }
    }
    let mut out = String::with_capacity(text.len() + 64);
    for word in &words {
        if word == "\n\n" {
            out.push_str("\n\n");
        } else {
            if !out.is_empty() && !out.ends_with('\n') {
                out.push(' ');
            }
            out.push_str(word);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document {
            name: "d".into(),
            paragraphs: (0..5)
                .map(|p| {
                    (0..40)
                        .map(|w| format!("p{p}w{w}"))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect(),
        }
    }

    #[test]
    fn word_edits_change_about_the_rate_and_keep_paragraphs() {
        let vocabulary = vec!["new".to_string()];
        let mut rng = SplitMix64::new(7);
        let edited = Edit::Words { percent: 5 }.apply(&doc(), &vocabulary, &mut rng);
        assert_eq!(edited.split("\n\n").count(), 5);
        let before: Vec<String> = doc().text().split_whitespace().map(String::from).collect();
        let after: Vec<&str> = edited.split_whitespace().collect();
        // 10 edits of 200 words: the length moves by at most 10, and at most 10 words are new.
        assert!((after.len() as i64 - 200).abs() <= 10);
        let new = after.iter().filter(|w| **w == "new").count();
        assert!((1..=10).contains(&new), "{new}");
        assert!(before.len() == 200);
    }

    #[test]
    fn the_same_seed_gives_the_same_copy() {
        let vocabulary = vec!["x".to_string(), "y".to_string()];
        for edit in EDITS {
            let a = edit.apply(&doc(), &vocabulary, &mut SplitMix64::new(3));
            let b = edit.apply(&doc(), &vocabulary, &mut SplitMix64::new(3));
            assert_eq!(a, b, "{edit:?}");
        }
    }

    #[test]
    fn greeting_replaces_the_first_paragraph_and_appends_a_token() {
        // A 40-word first paragraph is kept: the greeting goes before it.
        let edited = Edit::Greeting.apply(&doc(), &[], &mut SplitMix64::new(1));
        let paragraphs: Vec<&str> = edited.split("\n\n").collect();
        assert!(paragraphs[0].starts_with("Dear ") && paragraphs[0].ends_with(','));
        assert!(paragraphs[6].starts_with("Ref: "));
        assert_eq!(paragraphs[1], doc().paragraphs[0]);
        // A heading is replaced.
        let mut titled = doc();
        titled.paragraphs[0] = "6.2.1. Initialization".into();
        let edited = Edit::Greeting.apply(&titled, &[], &mut SplitMix64::new(1));
        let paragraphs: Vec<&str> = edited.split("\n\n").collect();
        assert_eq!(paragraphs.len(), 6);
        assert_eq!(paragraphs[1], titled.paragraphs[1]);
    }

    #[test]
    fn reorder_keeps_every_paragraph() {
        let edited = Edit::Reorder.apply(&doc(), &[], &mut SplitMix64::new(5));
        let mut a: Vec<&str> = edited.split("\n\n").collect();
        let text = doc().text();
        let mut b: Vec<&str> = text.split("\n\n").collect();
        assert_ne!(a, b);
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b);
    }
}
