//! The signing keys of the sync protocol (docs/SYNC.md, "Keys"): a publisher's Ed25519
//! [`SecretKey`] and the [`PublicKey`] clients trust, their text forms, and the signature of an
//! index body under [`SIGNING_CONTEXT`], with the hexadecimal and SHA-256 forms they are written
//! in.

use std::fmt::Write as _;

use ed25519_dalek::{Signer as _, Verifier as _};
use serde::{Deserialize, Serialize};
use sha2::Digest as _;

use crate::error::{Error, Result};

/// The bytes signed before an index body: binds a signature to this use, so a signature made
/// for anything else with the same key can never pass as an index's.
pub const SIGNING_CONTEXT: &[u8] = b"phishbloom index v1\n";

/// An index's signature: the key that made it (its [`PublicKey::id`]) and the Ed25519
/// signature in hexadecimal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The signing key's id.
    pub key: String,
    /// 128 hexadecimal digits.
    pub ed25519: String,
}

/// SHA-256 of `data` in lowercase hexadecimal.
pub fn sha256_hex(data: &[u8]) -> String {
    hex(&sha2::Sha256::digest(data))
}

/// Lowercase hexadecimal of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Writing to a String cannot fail.
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The bytes of an even-length hexadecimal string, if it is one.
pub(crate) fn unhex(text: &str) -> Option<Vec<u8>> {
    let text = text.as_bytes();
    if !text.len().is_multiple_of(2) {
        return None;
    }
    text.chunks(2)
        .map(|pair| {
            let digit = |c: u8| (c as char).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

/// The first word of a public key's text form.
const PUBLIC_TAG: &str = "phishbloom-ed25519-public";

/// The first word of a secret key's text form.
const SECRET_TAG: &str = "phishbloom-ed25519-secret";

/// The value of the one `TAG HEX` line of a key's text form (`#` lines are comments).
fn key_line<'a>(origin: &str, text: &'a str, tag: &str) -> Result<&'a str> {
    let bad = |problem: String| Error::BadKey {
        origin: origin.to_string(),
        problem,
    };
    let mut lines = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'));
    let line = lines
        .next()
        .ok_or_else(|| bad(format!("empty; a key is one line `{tag} HEX`")))?;
    let value = line
        .strip_prefix(tag)
        .map(str::trim)
        .ok_or_else(|| bad(format!("does not start with `{tag}`")))?;
    if lines.next().is_some() {
        return Err(bad("more than one key line".into()));
    }
    Ok(value)
}

/// An Ed25519 public key: the key a client trusts. Text form (docs/SYNC.md): `#` comment
/// lines, then `phishbloom-ed25519-public HEX` (32 bytes, 64 hexadecimal digits).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicKey(pub(crate) ed25519_dalek::VerifyingKey);

impl PublicKey {
    /// Reads a public key's text form; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<PublicKey> {
        let value = key_line(origin, text, PUBLIC_TAG)?;
        let bad = |problem: &str| Error::BadKey {
            origin: origin.to_string(),
            problem: problem.to_string(),
        };
        let bytes: [u8; 32] = unhex(value)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("the key is not 64 hexadecimal digits"))?;
        ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map(PublicKey)
            .map_err(|_| bad("not a valid Ed25519 public key"))
    }

    /// The text form, with a comment line naming the key.
    pub fn to_text(&self, comment: &str) -> String {
        format!(
            "# phishbloom list-signing public key: {comment}\n{PUBLIC_TAG} {}\n",
            hex(self.0.as_bytes())
        )
    }

    /// Its 32 bytes in hexadecimal (64 digits), as a key rotation names it.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// A short id naming the key in signatures: the first 16 hexadecimal digits of the
    /// SHA-256 of its 32 bytes.
    pub fn id(&self) -> String {
        sha256_hex(self.0.as_bytes())[..16].to_string()
    }

    /// Checks `signature` over `signed` (an index body's bytes).
    pub(super) fn verify(
        &self,
        origin: &str,
        signed: &[u8],
        signature: Option<&Signature>,
    ) -> Result<()> {
        let refuse = |problem: String| Error::Untrusted {
            origin: origin.to_string(),
            problem,
        };
        let signature = signature
            .ok_or_else(|| refuse(format!("it is not signed (trusted key {})", self.id())))?;
        if signature.key != self.id() {
            return Err(refuse(format!(
                "it is signed by key {}, not by the trusted key {}",
                signature.key,
                self.id()
            )));
        }
        let bytes: [u8; 64] = unhex(&signature.ed25519)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| refuse("its signature is not 128 hexadecimal digits".into()))?;
        let mut message = Vec::with_capacity(SIGNING_CONTEXT.len() + signed.len());
        message.extend_from_slice(SIGNING_CONTEXT);
        message.extend_from_slice(signed);
        self.0
            .verify(&message, &ed25519_dalek::Signature::from_bytes(&bytes))
            .map_err(|_| {
                refuse(format!(
                    "its signature by key {} does not verify: the index was changed after signing",
                    self.id()
                ))
            })
    }
}

/// An Ed25519 secret key: the publisher's. Text form: `#` comment lines, then
/// `phishbloom-ed25519-secret HEX` (the 32-byte seed). Keep it private.
#[derive(Clone)]
pub struct SecretKey(pub(crate) ed25519_dalek::SigningKey);

impl SecretKey {
    /// The key of a 32-byte seed (from a secure random source: `phishbloom keygen`).
    pub fn from_seed(seed: [u8; 32]) -> SecretKey {
        SecretKey(ed25519_dalek::SigningKey::from_bytes(&seed))
    }

    /// Reads a secret key's text form; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<SecretKey> {
        let value = key_line(origin, text, SECRET_TAG)?;
        let seed: [u8; 32] = unhex(value)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| Error::BadKey {
                origin: origin.to_string(),
                problem: "the key is not 64 hexadecimal digits".into(),
            })?;
        Ok(SecretKey::from_seed(seed))
    }

    /// The text form, with a comment line naming the key.
    pub fn to_text(&self, comment: &str) -> String {
        format!(
            "# phishbloom list-signing SECRET key: {comment} (keep it private)\n{SECRET_TAG} {}\n",
            hex(self.0.as_bytes())
        )
    }

    /// Its public key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// Signs an index body's bytes.
    pub(super) fn sign(&self, body: &[u8]) -> Signature {
        let mut message = Vec::with_capacity(SIGNING_CONTEXT.len() + body.len());
        message.extend_from_slice(SIGNING_CONTEXT);
        message.extend_from_slice(body);
        Signature {
            key: self.public().id(),
            ed25519: hex(&self.0.sign(&message).to_bytes()),
        }
    }
}
