//! phishbloom's text: what turns e-mail and text into the tokens and phrase hashes that a
//! keyword blocklist is built from and scanned with — the counterpart of `phishbloom-url` for
//! text.
//!
//! # Modules
//! - [`normalize`] — Unicode NFKC and simple case folding, the same for keywords and text.
//! - [`tokens`] — UAX #29 word tokens (one per character in scripts written without spaces),
//!   each with its byte range in the text and its hash.
//! - [`phrase`] — the phrase hash: one function for keywords and for n-grams, each n-gram's
//!   hash in O(1) from the previous one; [`phrase::normalize_phrase`] for keyword lists.
//! - [`pieces`] — a text read in pieces cut where decoding and tokenization cannot look
//!   across, for scanning a document of any size in bounded memory.
//! - [`simhash`] — SimHash fingerprints of documents (shingles of tokens), with an exact
//!   hash for short texts: near-duplicate lists.
//! - [`minhash`] — MinHash sketches of documents (one permutation, densified, b bits a bin)
//!   with posting keys, the resemblance estimate, a match threshold of stated false-match
//!   rate, and the boilerplate shingles dropped from both sides.
//! - [`line`] — a line without the `\r` of a CRLF ending: the one rule every reader uses.
//! - [`mail`] — documents: plain text, RFC 5322 messages (MIME-decoded with `mail-parser`),
//!   mbox files.
//! - [`Error`] — what can go wrong, naming the input.
//!
//! # Example
//! ```
//! use phishbloom_text::phrase::{normalize_phrase, normalized_phrase_hash, phrase_hash};
//! use phishbloom_text::tokens::Tokens;
//!
//! # fn main() -> Result<(), phishbloom_text::Error> {
//! // A keyword, normalized and hashed as `build --keywords` does.
//! let mut tokens = Tokens::new();
//! let mut keyword = String::new();
//! normalize_phrase("ＦＲＥＥ  Money", &mut tokens, &mut keyword)?;
//! assert_eq!(keyword, "free money");
//!
//! // The same phrase inside text, as `scan` finds it: tokens 2 and 3.
//! let text = "Claim your free-money now";
//! tokens.tokenize(text);
//! assert_eq!(normalized_phrase_hash(&keyword), phrase_hash(&tokens.hashes()[2..4]));
//! let (start, _) = tokens.span(2);
//! let (_, end) = tokens.span(3);
//! assert_eq!(&text[start..end], "free-money");
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

mod error;
pub mod line;
pub mod mail;
pub mod minhash;
pub mod normalize;
pub mod phrase;
pub mod pieces;
pub mod simhash;
pub mod tokens;

pub use error::{Error, Result};
