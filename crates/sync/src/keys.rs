//! `keygen`: a new Ed25519 key pair for signing published lists, written as two text files —
//! NAME (the secret key, readable by its owner only) and NAME.pub (for clients' `--trust`).

use std::io::Write;
use std::path::{Path, PathBuf};

use phishbloom_core::sync::{PublicKey, SecretKey};

use crate::error::{Error, Result};

/// Writes a new key pair: `name` (mode 0600) and `name.pub`; refuses to overwrite either.
/// Returns the public key.
pub fn keygen(name: &Path) -> Result<PublicKey> {
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| {
        Error::io(
            name,
            "make a key (the operating system's random source failed)",
            std::io::Error::other(e.to_string()),
        )
    })?;
    let secret = SecretKey::from_seed(seed);
    let public = secret.public();
    let comment = name
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let public_path = public_path(name);
    create_new(name, secret.to_text(&comment).as_bytes(), 0o600)?;
    if let Err(e) = create_new(&public_path, public.to_text(&comment).as_bytes(), 0o644) {
        // Not half a pair: the secret key goes too.
        let _ = std::fs::remove_file(name);
        return Err(e);
    }
    Ok(public)
}

/// The public key's file: NAME.pub.
pub fn public_path(name: &Path) -> PathBuf {
    let mut path = name.as_os_str().to_os_string();
    path.push(".pub");
    PathBuf::from(path)
}

/// Reads a secret key file.
pub fn read_secret(path: &Path) -> Result<SecretKey> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read", e))?;
    Ok(SecretKey::parse(&path.display().to_string(), &text)?)
}

/// Reads a public key file.
pub fn read_public(path: &Path) -> Result<PublicKey> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, "read", e))?;
    Ok(PublicKey::parse(&path.display().to_string(), &text)?)
}

/// Creates `path`, which must not exist, with `mode`, holding `bytes`.
fn create_new(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| Error::io(path, "create (an existing key is never overwritten)", e))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(path, "write", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_pair_is_written_once_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let name = dir.path().join("publisher");
        let public = keygen(&name).unwrap();
        assert_eq!(read_public(&public_path(&name)).unwrap(), public);
        assert_eq!(read_secret(&name).unwrap().public(), public);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&name).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert!(keygen(&name).is_err());
        assert!(read_secret(&public_path(&name)).is_err());
    }
}
