//! Key rotation for signed sync indexes (docs/SYNC.md, "Rotating the key"): a statement by
//! which a list's signing key hands over to a new one, signed by the old key. An index signed by
//! the new key carries the statements from every key before it, so that a client trusting an
//! old key follows them to the key that signed, and from then on trusts that key alone: an index
//! signed by the old key without a statement is refused.

use serde::{Deserialize, Serialize};

use super::keys::{hex, unhex, PublicKey, SecretKey};
use crate::error::{Error, Result};

/// What a hand-over signs, before the new key's 32 bytes (so that no index signature can be
/// taken for a hand-over, nor one for the other).
pub const ROTATION_CONTEXT: &[u8] = b"phishbloom key rotation v1\n";

/// One hand-over: the key of id `by` vouches for the public key `key`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rotation {
    /// The new public key: 64 hexadecimal digits.
    pub key: String,
    /// The id of the key handing over ([`PublicKey::id`]).
    pub by: String,
    /// The old key's Ed25519 signature of [`ROTATION_CONTEXT`] and the new key's 32 bytes:
    /// 128 hexadecimal digits.
    pub ed25519: String,
}

impl SecretKey {
    /// This key's hand-over to `to`.
    pub fn hand_over(&self, to: &PublicKey) -> Rotation {
        use ed25519_dalek::Signer;
        let message = [ROTATION_CONTEXT, to.0.as_bytes()].concat();
        Rotation {
            key: to.to_hex(),
            by: self.public().id(),
            ed25519: hex(&self.0.sign(&message).to_bytes()),
        }
    }
}

impl Rotation {
    /// The new key, when `from` signed this hand-over; else why not.
    fn verify(&self, origin: &str, from: &PublicKey) -> Result<PublicKey> {
        let refuse = |problem: String| Error::Untrusted {
            origin: origin.to_string(),
            problem,
        };
        let key: [u8; 32] = unhex(&self.key)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                refuse("a key rotation names a key that is not 64 hexadecimal digits".into())
            })?;
        let new = ed25519_dalek::VerifyingKey::from_bytes(&key)
            .map_err(|_| refuse("a key rotation names an invalid Ed25519 key".into()))?;
        let signature: [u8; 64] = unhex(&self.ed25519)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| {
                refuse("a key rotation's signature is not 128 hexadecimal digits".into())
            })?;
        let message = [ROTATION_CONTEXT, &key].concat();
        from.0
            .verify_strict(&message, &ed25519_dalek::Signature::from_bytes(&signature))
            .map_err(|_| {
                refuse(format!(
                    "the rotation from key {} does not verify: it was not made with that key",
                    from.id()
                ))
            })?;
        Ok(PublicKey(new))
    }
}

/// A publish directory's kept hand-overs (`rotations.json`): a JSON array.
pub fn to_json(rotations: &[Rotation]) -> Vec<u8> {
    // Strings only: serializing cannot fail.
    serde_json::to_vec(rotations).expect("rotations serialize")
}

/// Reads kept hand-overs; `origin` names them in errors.
pub fn from_json(origin: &str, bytes: &[u8]) -> Result<Vec<Rotation>> {
    serde_json::from_slice(bytes).map_err(|e| Error::BadIndex {
        origin: origin.to_string(),
        problem: format!("not a list of key rotations: {e}"),
    })
}

/// The key a client trusting `trusted` trusts after the hand-overs in `rotations` (in order,
/// each checked against the key it starts from; statements from other keys are skipped): the
/// last key reached, `trusted` itself when none starts from it.
pub fn follow(origin: &str, trusted: &PublicKey, rotations: &[Rotation]) -> Result<PublicKey> {
    let mut key = trusted.clone();
    for rotation in rotations {
        if rotation.by == key.id() {
            key = rotation.verify(origin, &key)?;
        }
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_hand_overs_leads_from_the_trusted_key_to_the_last() {
        let (a, b, c) = (
            SecretKey::from_seed([1; 32]),
            SecretKey::from_seed([2; 32]),
            SecretKey::from_seed([3; 32]),
        );
        let chain = [a.hand_over(&b.public()), b.hand_over(&c.public())];
        assert_eq!(follow("i", &a.public(), &chain).unwrap(), c.public());
        assert_eq!(follow("i", &b.public(), &chain).unwrap(), c.public());
        // A client already at the last key stays there; one of another key is not moved.
        assert_eq!(follow("i", &c.public(), &chain).unwrap(), c.public());
        let other = SecretKey::from_seed([9; 32]).public();
        assert_eq!(follow("i", &other, &chain).unwrap(), other);
    }

    #[test]
    fn a_forged_hand_over_is_refused() {
        let (a, b, mallory) = (
            SecretKey::from_seed([1; 32]),
            SecretKey::from_seed([2; 32]),
            SecretKey::from_seed([6; 32]),
        );
        // Mallory claims that a handed over to her key, signing with her own.
        let mut forged = mallory.hand_over(&mallory.public());
        forged.by = a.public().id();
        let error = follow("i", &a.public(), &[forged]).unwrap_err().to_string();
        assert!(error.contains("does not verify"), "{error}");
        // A genuine statement edited to name another key fails too.
        let mut edited = a.hand_over(&b.public());
        edited.key = mallory.public().to_hex();
        assert!(follow("i", &a.public(), &[edited]).is_err());
    }
}
