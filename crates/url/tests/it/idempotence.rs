//! Property tests: canonicalization never panics, always yields ASCII, and is idempotent, for arbitrary bytes and for URL-shaped strings.

use phishbloom_url::canonicalize;
use proptest::prelude::*;

/// Canonicalizes `input` and, on success, checks the output is ASCII, its
/// components add up, and canonicalizing it again gives the same URL.
fn check(input: &[u8]) -> Result<(), TestCaseError> {
    let Ok(first) = canonicalize(input) else {
        return Ok(()); // errors are fine; panics are not
    };
    let s = first.as_str();
    prop_assert!(s.is_ascii(), "non-ASCII output {s:?}");
    let rebuilt = format!(
        "{}://{}{}{}",
        first.scheme(),
        first.host(),
        first.path(),
        first.query().map(|q| format!("?{q}")).unwrap_or_default()
    );
    prop_assert_eq!(&rebuilt, s);
    prop_assert!(first.path().starts_with('/'));
    prop_assert!(!first.host().is_empty());
    let second = canonicalize(s.as_bytes());
    prop_assert_eq!(
        second.as_ref(),
        Ok(&first),
        "not idempotent for input {:?}",
        String::from_utf8_lossy(input)
    );
    prop_assert_eq!(first.expressions().count(), first.expression_count());
    Ok(())
}

/// Pieces URL-like inputs are glued from: delimiters, escapes (also of
/// delimiters and of `%`), dots, IPv4/IPv6 forms, non-ASCII text and bytes.
fn url_piece() -> impl Strategy<Value = Vec<u8>> {
    let fixed: Vec<&'static [u8]> = vec![
        b"http://",
        b"HTTPS://",
        b"//",
        b"/",
        b"?",
        b"#",
        b"@",
        b":",
        b":80",
        b".",
        b"..",
        b"/./",
        b"/../",
        b"%",
        b"%25",
        b"%2",
        b"%2e",
        b"%2E",
        b"%2F",
        b"%3F",
        b"%3f",
        b"%23",
        b"%40",
        b"%3A",
        b"%5B",
        b"%5D",
        b"%00",
        b"%20",
        b"%C3%A9",
        b"%FF",
        b"%zz",
        b"[",
        b"]",
        b"[::1]",
        b"0x",
        b"0",
        b"012",
        b"255",
        b"3279880203",
        b"www.",
        b"evil.com",
        b"xn--",
        b"\t",
        b"\r\n",
        b" ",
        b"\x01",
        b"\x80",
        b"\xff",
        b"\\",
        "é".as_bytes(),
        "Ü".as_bytes(),
        "。".as_bytes(),
        "１".as_bytes(),
        "／".as_bytes(),
        "ß".as_bytes(),
        "\u{200d}".as_bytes(),
        "\u{ad}".as_bytes(),
    ];
    prop_oneof![
        proptest::sample::select(fixed).prop_map(|b| b.to_vec()),
        "[a-zA-Z0-9]{1,6}".prop_map(String::into_bytes),
    ]
}

fn url_shaped() -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(url_piece(), 0..24).prop_map(|pieces| pieces.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn idempotent_on_arbitrary_bytes(input in proptest::collection::vec(any::<u8>(), 0..200)) {
        check(&input)?;
    }

    #[test]
    fn idempotent_on_url_shaped_strings(input in url_shaped()) {
        check(&input)?;
    }

    #[test]
    fn idempotent_on_url_shaped_with_prefix(pieces in url_shaped(), scheme in prop::bool::ANY) {
        let mut input = if scheme { b"http://".to_vec() } else { Vec::new() };
        input.extend(pieces);
        check(&input)?;
    }
}

/// Inputs that broke (or could break) idempotence while developing; kept as regressions.
#[test]
fn idempotence_regressions() {
    let cases: &[&[u8]] = &[
        b"http://h/..%3Fx",
        b"http://h/.%3F",
        b"http://a%2Fb.com/",
        b"http://a%3A80/",
        b"http://a%40b/",
        b"http://.[::1]/",
        b"http://%5B::1%5D/",
        b"http://[zz]:80/x",
        b"http://[a%3Ab]x/",
        "http://［::1］/".as_bytes(),
        "http://１２７.０.０.１/".as_bytes(),
        b"http://h/%254g",
        b"http://h/%%32%35",
        b"http://h/a?%2523",
        b"x%2F%2F/",
    ];
    for case in cases {
        if let Err(e) = check(case) {
            panic!("{:?}: {e}", String::from_utf8_lossy(case));
        }
    }
}
