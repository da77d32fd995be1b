//! The key a client trusts after a rotation: kept beside its copy (`FILE.trust`), named by the
//! key the user trusts (`sync --trust`) it was reached from, so that the next run starts from it
//! — and so refuses the old key alone — while a client given another key starts afresh.

use std::path::{Path, PathBuf};

use phishbloom_blocklist::atomic::write_atomic;
use phishbloom_core::sync::PublicKey;

use crate::error::{Error, Result};

/// Where the key a copy's list rotated to is kept: `FILE.trust`.
pub fn adopted_path(file: &Path) -> PathBuf {
    let mut path = file.as_os_str().to_owned();
    path.push(".trust");
    PathBuf::from(path)
}

/// The first line of an adopted key's file, naming the key it was reached from.
fn header(root: &PublicKey) -> String {
    format!(
        "# phishbloom: the key this list rotated to, from the trusted key {}",
        root.id()
    )
}

/// The key to trust for the copy `file` when the user trusts `root`: the key kept in
/// `FILE.trust` if it was reached from `root`, else `root`.
pub fn effective(file: &Path, root: &PublicKey) -> PublicKey {
    let path = adopted_path(file);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return root.clone();
    };
    let reached_from_root = text.lines().next() == Some(header(root).as_str());
    match PublicKey::parse(&path.display().to_string(), &text) {
        Ok(key) if reached_from_root => key,
        // Another trusted key, or a damaged file: start from the key the user gave.
        _ => root.clone(),
    }
}

/// Keeps `key`, reached from `root` by rotation, as the key to trust for `file`.
pub fn adopt(file: &Path, root: &PublicKey, key: &PublicKey) -> Result<()> {
    let path = adopted_path(file);
    let text = format!("{}\n{}", header(root), key.to_text("adopted by rotation"));
    write_atomic(&path, &[], &[text.as_bytes()]).map_err(Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use phishbloom_core::sync::SecretKey;

    #[test]
    fn an_adopted_key_is_used_only_from_the_key_it_was_reached_from() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("copy.bloom");
        let (root, new, other) = (
            SecretKey::from_seed([1; 32]).public(),
            SecretKey::from_seed([2; 32]).public(),
            SecretKey::from_seed([3; 32]).public(),
        );
        assert_eq!(effective(&file, &root), root);
        adopt(&file, &root, &new).unwrap();
        assert_eq!(adopted_path(&file), dir.path().join("copy.bloom.trust"));
        assert_eq!(effective(&file, &root), new);
        assert_eq!(effective(&file, &other), other);
        std::fs::write(adopted_path(&file), "damaged").unwrap();
        assert_eq!(effective(&file, &root), root);
    }
}
