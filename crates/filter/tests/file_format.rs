//! Every error path of loading a filter file, atomic saving, and no panic on any byte sequence.

use std::path::{Path, PathBuf};

use phishbloom_filter::format::{HEADER_LEN, MAGIC};
use phishbloom_filter::{AnyFilter, BlockedBloomFilter, BloomFilter, Error};
use proptest::prelude::*;
use xxhash_rust::xxh3::xxh3_64;

/// A small saved classic filter with a few keys, and its bytes.
fn saved_classic(dir: &Path) -> (PathBuf, Vec<u8>) {
    let mut filter = BloomFilter::new(100, 0.01).unwrap();
    for key in ["a", "b", "c"] {
        filter.insert(key);
    }
    filter.set_key_scheme(3, 24);
    let path = dir.join("classic.bloom");
    filter.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// Writes `bytes` to a fresh file and loads it.
fn load_bytes(dir: &Path, bytes: &[u8]) -> Result<AnyFilter, Error> {
    let path = dir.join("edited.bloom");
    std::fs::write(&path, bytes).unwrap();
    let from_file = AnyFilter::load(&path);
    // The in-memory parser must agree with the mapped one on every input.
    let from_memory = AnyFilter::from_bytes(&path, bytes);
    assert_eq!(from_file.is_ok(), from_memory.is_ok());
    from_file
}

/// An in-place change to a file image.
type Edit = fn(&mut Vec<u8>);

/// Recomputes the trailer so that a header edit is not caught by the checksum.
fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - 8;
    let checksum = xxh3_64(&bytes[..body]);
    bytes[body..].copy_from_slice(&checksum.to_le_bytes());
}

#[test]
fn a_saved_file_loads_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = saved_classic(dir.path());
    assert_eq!(&bytes[..8], &MAGIC);
    assert_eq!(bytes.len() % 8, 0);
    let filter = AnyFilter::load(&path).unwrap();
    assert!(filter.contains(b"a") && filter.contains(b"b") && filter.contains(b"c"));
    assert_eq!(filter.items(), 3);
    assert_eq!(filter.expected_items(), Some(100));
    assert_eq!(filter.target_fpp(), Some(0.01));
    assert_eq!(filter.key_scheme(), 3);
    assert_eq!(filter.key_param(), 24);
}

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let error = AnyFilter::load("/nonexistent/filter.bloom").unwrap_err();
    assert!(
        matches!(error, Error::Io { action: "open", .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("/nonexistent/filter.bloom"));
}

#[test]
fn directory_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let error = AnyFilter::load(dir.path()).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(error.to_string().contains("directory"), "{error}");
}

#[test]
fn empty_and_short_files_are_truncated() {
    let dir = tempfile::tempdir().unwrap();
    for len in [0, 4, 8, 40, HEADER_LEN + 7] {
        let (_, bytes) = saved_classic(dir.path());
        let error = load_bytes(dir.path(), &bytes[..len]).unwrap_err();
        assert!(matches!(error, Error::Truncated { .. }), "{len}: {error:?}");
    }
}

#[test]
fn cut_file_is_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let (_, bytes) = saved_classic(dir.path());
    let error = load_bytes(dir.path(), &bytes[..bytes.len() - 100]).unwrap_err();
    let Error::Truncated { expected, got, .. } = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (expected, got),
        (bytes.len() as u64, bytes.len() as u64 - 100)
    );
}

#[test]
fn wrong_magic_is_bad_magic() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut bytes) = saved_classic(dir.path());
    bytes[1] = b'X';
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(matches!(error, Error::BadMagic { .. }), "{error:?}");
    let error = load_bytes(dir.path(), b"url,isMalicious\nevil.com,-1\n").unwrap_err();
    assert!(
        error.to_string().contains("not a phishbloom filter file"),
        "{error}"
    );
}

#[test]
fn unknown_version_is_a_version_error() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut bytes) = saved_classic(dir.path());
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(
        matches!(
            error,
            Error::Version {
                expected: 1,
                got: 2,
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn bit_array_length_that_does_not_match_m_is_a_size_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut bytes) = saved_classic(dir.path());
    let data_len = u64::from_le_bytes(bytes[56..64].try_into().unwrap());
    bytes[56..64].copy_from_slice(&(data_len + 64).to_le_bytes());
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(matches!(error, Error::SizeMismatch { .. }), "{error:?}");
    // So is m edited to need another length.
    let (_, mut bytes) = saved_classic(dir.path());
    bytes[16..24].copy_from_slice(&(1u64 << 30).to_le_bytes());
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(matches!(error, Error::SizeMismatch { num_bits, .. } if num_bits == 1 << 30));
}

#[test]
fn trailing_bytes_are_a_size_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut bytes) = saved_classic(dir.path());
    bytes.extend_from_slice(&[0; 64]);
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(
        matches!(
            error,
            Error::SizeMismatch {
                what: "file length",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn flipped_bits_anywhere_are_caught() {
    let dir = tempfile::tempdir().unwrap();
    let (_, bytes) = saved_classic(dir.path());
    for offset in 0..bytes.len() {
        let mut edited = bytes.clone();
        edited[offset] ^= 0x10;
        let error = AnyFilter::from_bytes("edited", &edited).unwrap_err();
        if offset >= HEADER_LEN {
            // Bit array and trailer: only the checksum can tell.
            assert!(
                matches!(error, Error::ChecksumMismatch { .. }),
                "{offset}: {error:?}"
            );
        }
    }
    // One flipped bit in the bit array, through the file path.
    let mut edited = bytes.clone();
    edited[HEADER_LEN + 3] ^= 1;
    let error = load_bytes(dir.path(), &edited).unwrap_err();
    assert!(matches!(error, Error::ChecksumMismatch { .. }), "{error:?}");
    assert!(error.to_string().contains("corrupted"), "{error}");
}

#[test]
fn out_of_range_fields_are_invalid_header_even_with_a_valid_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let edits: [(&str, Edit); 6] = [
        ("layout", |b| b[12] = 7),
        ("hash strategy", |b| b[13] = 9),
        ("reserved", |b| b[15] = 1),
        ("num_hashes", |b| {
            b[24..28].copy_from_slice(&0u32.to_le_bytes())
        }),
        ("num_hashes", |b| {
            b[24..28].copy_from_slice(&65u32.to_le_bytes())
        }),
        ("target fpp (bits)", |b| {
            b[40..48].copy_from_slice(&1.5f64.to_le_bytes())
        }),
    ];
    for (field, edit) in edits {
        let (_, mut bytes) = saved_classic(dir.path());
        edit(&mut bytes);
        reseal(&mut bytes);
        let error = load_bytes(dir.path(), &bytes).unwrap_err();
        assert!(
            matches!(error, Error::InvalidHeader { field: f, .. } if f == field),
            "{field}: {error:?}"
        );
    }
    let (_, mut bytes) = saved_classic(dir.path());
    bytes[16..24].copy_from_slice(&0u64.to_le_bytes());
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(
        matches!(
            error,
            Error::InvalidHeader {
                field: "num_bits",
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn blocked_file_with_a_partial_block_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut bytes) = saved_classic(dir.path());
    // m = 1000 bits needs two 64-byte blocks, as this file has, but is no whole number of blocks.
    bytes[12] = 1;
    bytes[16..24].copy_from_slice(&1000u64.to_le_bytes());
    reseal(&mut bytes);
    let error = load_bytes(dir.path(), &bytes).unwrap_err();
    assert!(matches!(error, Error::InvalidHeader { .. }), "{error:?}");
}

#[test]
fn loading_the_other_layout_is_a_wrong_layout_error() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = saved_classic(dir.path());
    let error = BlockedBloomFilter::load(&path).unwrap_err();
    assert!(
        matches!(
            error,
            Error::WrongLayout {
                expected: "blocked",
                found: "classic",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(BloomFilter::load(&path).is_ok());
}

#[test]
fn save_is_atomic_and_leaves_no_temporary_files() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before) = saved_classic(dir.path());
    let mut bigger = BlockedBloomFilter::new(10_000, 0.001).unwrap();
    bigger.insert("x");
    bigger.save(&path).unwrap();
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("classic.bloom")]);
    assert_ne!(std::fs::read(&path).unwrap(), before);
    assert!(BlockedBloomFilter::load(&path).unwrap().contains("x"));

    let missing_dir = dir.path().join("no/such/dir/f.bloom");
    let error = bigger.save(&missing_dir).unwrap_err();
    assert!(matches!(error, Error::Io { .. }), "{error:?}");
    assert!(!missing_dir.exists());
}

#[test]
fn a_loaded_filter_can_grow_without_touching_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let (path, before) = saved_classic(dir.path());
    let mut filter = BloomFilter::load(&path).unwrap();
    filter.insert("new key");
    assert!(filter.contains("new key"));
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "copy-on-write mapping wrote the file"
    );
}

/// One valid file image, built once for the property tests.
fn valid_image() -> &'static Vec<u8> {
    static IMAGE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    IMAGE.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        saved_classic(dir.path()).1
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = AnyFilter::from_bytes("fuzz", &bytes);
    }

    #[test]
    fn arbitrary_bytes_after_a_valid_header_never_panic(
        tail in prop::collection::vec(any::<u8>(), 0..300), cut in 0usize..64
    ) {
        let mut image = valid_image().clone();
        image.truncate(cut.min(image.len()));
        image.extend_from_slice(&tail);
        let _ = AnyFilter::from_bytes("fuzz", &image);
    }
}

#[test]
fn to_bytes_is_exactly_the_saved_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut filter = BlockedBloomFilter::new(1_000, 0.01).unwrap();
    filter.insert("x");
    let path = dir.path().join("f.bloom");
    filter.save(&path).unwrap();
    assert_eq!(filter.to_bytes(), std::fs::read(&path).unwrap());
}
