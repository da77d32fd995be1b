//! Host canonicalization: dots, case, IPv4 forms, IPv6 literals and IDN to punycode, per the Safe Browsing v4 rules.
//!
//! The rules, from <https://developers.google.com/safe-browsing/v4/urls-hashing#canonicalization>,
//! "To canonicalize the hostname": remove all leading and trailing dots,
//! replace consecutive dots with a single dot, normalize an address that
//! parses as IPv4 to 4 dot-separated decimal values (handling octal, hex and
//! fewer than four components), lowercase the whole string; and (Overview of
//! that page) convert an internationalized domain name to its ASCII punycode.

use crate::escape::push_escaped;

/// Longest decoded host (in bytes) handed to IDNA processing.
///
/// Punycode encoding is quadratic in the label length, so a megabyte-long
/// hostile host must not reach it. DNS names are at most 253 octets in ASCII
/// form; 1024 bytes of UTF-8 is comfortably above any real name. Longer
/// non-ASCII hosts are percent-escaped instead, as for IDNA failures.
const MAX_IDNA_INPUT: usize = 1024;

/// A canonical host: ASCII, escaped, ready to be written into the URL.
pub(crate) struct Host {
    /// The canonical host text.
    pub(crate) text: String,
    /// Whether it is an IPv4 address (dotted quad) or a bracketed IPv6 literal.
    pub(crate) is_ip: bool,
}

/// Canonicalizes a fully percent-unescaped host. `None` if nothing is left.
pub(crate) fn canonicalize_host(decoded: &[u8]) -> Option<Host> {
    canonicalize_host_inner(decoded, true)
}

fn canonicalize_host_inner(decoded: &[u8], allow_idna: bool) -> Option<Host> {
    // Safe Browsing: trim leading/trailing dots, collapse runs of dots, lowercase.
    let host = trim_collapse_lowercase(decoded);
    if host.is_empty() {
        return None;
    }
    if is_ipv6_literal(&host) {
        // Kept bracketed and lowercase; is_ipv6_literal checked it is ASCII.
        let text = host.iter().map(|&b| char::from(b)).collect();
        return Some(Host { text, is_ip: true });
    }
    if !host.is_ascii() {
        // IDN to punycode. Hosts that are not UTF-8, too long, or that IDNA
        // rejects are percent-escaped below instead (never a panic).
        if allow_idna && host.len() <= MAX_IDNA_INPUT && std::str::from_utf8(&host).is_ok() {
            if let Ok(ascii) = idna::domain_to_ascii_cow(&host, idna::AsciiDenyList::URL) {
                // The IDNA result is ASCII; run it through the same rules
                // again (it may map to dots or to an IP address, e.g. for
                // full-width digits) so a second canonicalization of our own
                // output sees an already-canonical host.
                return canonicalize_host_inner(ascii.as_bytes(), false);
            }
        }
    } else if let Some(ip) = parse_ipv4(&host) {
        return Some(Host {
            text: format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]),
            is_ip: true,
        });
    }
    let mut text = String::with_capacity(host.len());
    // Only the Safe Browsing set: the URL was unescaped before it was split, so a host holds
    // no `/ ? @ :` that a second parse could take for a delimiter.
    push_escaped(&mut text, &host, b"");
    Some(Host { text, is_ip: false })
}

/// Removes leading and trailing dots, collapses runs of dots, lowercases ASCII.
fn trim_collapse_lowercase(host: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(host.len());
    let mut pending_dot = false;
    for &b in host {
        if b == b'.' {
            pending_dot = !out.is_empty();
        } else {
            if pending_dot {
                out.push(b'.');
                pending_dot = false;
            }
            out.push(b.to_ascii_lowercase());
        }
    }
    out
}

/// Whether `host` (already lowercased) is a bracketed IPv6 literal such as
/// `[::1]` or `[::ffff:1.2.3.4]`: brackets around hex digits, colons and dots,
/// with at least one colon. Not a full address validation: the text is kept
/// as is, lowercased.
fn is_ipv6_literal(host: &[u8]) -> bool {
    let Some(inner) = host.strip_prefix(b"[").and_then(|h| h.strip_suffix(b"]")) else {
        return false;
    };
    inner.contains(&b':')
        && inner
            .iter()
            .all(|&b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b) || b == b':' || b == b'.')
}

/// Parses `host` as an IPv4 address in any form `inet_aton` accepts: one to
/// four dot-separated parts, each decimal, octal (leading `0`) or hex (`0x`);
/// the last part fills all remaining bytes. Safe Browsing: "The client should
/// handle any legal IP-address encoding, including octal, hex, and fewer than
/// four components." E.g. `3279880203` is `195.127.0.11`.
///
/// Case does not matter: the `0x` of a hex part may be `0X`, hex digits are read in either case,
/// and no other letter is part of a number; so on any host this is the answer for the host
/// lowercased (the fast path asks before it lowercases).
pub(crate) fn parse_ipv4(host: &[u8]) -> Option<[u8; 4]> {
    let mut parts = [0u32; 4];
    let mut count = 0;
    for part in host.split(|&b| b == b'.') {
        if count == 4 {
            return None;
        }
        parts[count] = parse_ipv4_number(part)?;
        count += 1;
    }
    // `count` is 1..=4 here: `split` yields at least one part.
    let (leading, last) = (&parts[..count - 1], parts[count - 1]);
    if leading.iter().any(|&p| p > 255) {
        return None;
    }
    // The last part holds the remaining 5 - count bytes.
    let last_bits = 8 * (5 - count as u32);
    if last_bits < 32 && last >= (1u32 << last_bits) {
        return None;
    }
    let mut value = last;
    for (i, &p) in leading.iter().enumerate() {
        value |= p << (24 - 8 * i as u32);
    }
    Some(value.to_be_bytes())
}

/// Parses one IPv4 part: `0x…` or `0X…` hex (`0x` alone is 0), `0…` octal, else
/// decimal. `None` if it is not a number or exceeds 32 bits.
fn parse_ipv4_number(part: &[u8]) -> Option<u32> {
    let (digits, radix) = if let Some(hex) = part
        .strip_prefix(b"0x")
        .or_else(|| part.strip_prefix(b"0X"))
    {
        (hex, 16)
    } else if part.len() > 1 && part[0] == b'0' {
        (&part[1..], 8)
    } else {
        (part, 10)
    };
    if digits.is_empty() && radix != 16 {
        return None;
    }
    let mut acc: u64 = 0;
    for &d in digits {
        let v = char::from(d).to_digit(radix)?;
        // `acc` <= u32::MAX before this step, so `acc * 16 + 15` fits in u64.
        acc = acc * u64::from(radix) + u64::from(v);
        if acc > u64::from(u32::MAX) {
            return None;
        }
    }
    u32::try_from(acc).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(h: &[u8]) -> Option<(String, bool)> {
        canonicalize_host(h).map(|h| (h.text, h.is_ip))
    }

    #[test]
    fn dots_and_case() {
        assert_eq!(
            canon(b"..WWW..Evil...COM.."),
            Some(("www.evil.com".into(), false))
        );
        assert_eq!(canon(b"...."), None);
        assert_eq!(canon(b""), None);
    }

    #[test]
    fn ipv4_forms() {
        let cases: &[(&[u8], &str)] = &[
            (b"3279880203", "195.127.0.11"),
            (b"195.127.0.11", "195.127.0.11"),
            (b"0xc3.0177.0.11", "195.127.0.11"),
            (b"0xC37F000B", "195.127.0.11"),
            (b"195.127.11", "195.127.0.11"),
            (b"195.8323083", "195.127.0.11"),
            (b"1.2.3.4.", "1.2.3.4"),
            (b"0", "0.0.0.0"),
            (b"0x", "0.0.0.0"),
            (b"017700000001", "127.0.0.1"),
            (b"0XC37F000B", "195.127.0.11"),
            (b"0Xc3.0X7F.0.0Xb", "195.127.0.11"),
        ];
        for (input, want) in cases {
            assert_eq!(canon(input), Some((want.to_string(), true)), "{input:?}");
        }
        for not_ip in [
            &b"1.2.3.4.5"[..],
            b"256.1.1.1",
            b"1.2.3.256",
            b"4294967296",
            b"08",
            b"0x1g",
            b"1.2.3.4a",
            b"99999999999999999999999999",
        ] {
            assert_eq!(canon(not_ip).map(|h| h.1), Some(false), "{not_ip:?}");
        }
    }

    #[test]
    fn ipv4_parsing_ignores_case() {
        for (upper, lower) in [
            (&b"0X7F.1"[..], &b"0x7f.1"[..]),
            (b"0XC3.0X7F.0.0XB", b"0xc3.0x7f.0.0xb"),
            (b"0XG", b"0xg"),
            (b"0X", b"0x"),
            (b"1.2.3.0XFF", b"1.2.3.0xff"),
        ] {
            assert_eq!(parse_ipv4(upper), parse_ipv4(lower), "{upper:?}");
        }
        assert_eq!(parse_ipv4(b"0X7F.1"), Some([127, 0, 0, 1]));
    }

    #[test]
    fn ipv6_literals_stay_bracketed() {
        assert_eq!(canon(b"[::1]"), Some(("[::1]".into(), true)));
        assert_eq!(canon(b"[FE80::ABCD]"), Some(("[fe80::abcd]".into(), true)));
        // Not a literal: kept as it is here; the URL parser then refuses the host.
        assert_eq!(canon(b"[zz]"), Some(("[zz]".into(), false)));
    }

    #[test]
    fn idn_to_punycode_and_fallbacks() {
        assert_eq!(
            canon("Bücher.DE".as_bytes()),
            Some(("xn--bcher-kva.de".into(), false))
        );
        // Full-width letters and the ideographic full stop map to ASCII.
        assert_eq!(
            canon("ｅｘａｍｐｌｅ。com".as_bytes()),
            Some(("example.com".into(), false))
        );
        // Full-width digits map to an IP address, which is then normalized.
        assert_eq!(
            canon("１２７.０.０.１".as_bytes()),
            Some(("127.0.0.1".into(), true))
        );
        // Not UTF-8: escaped.
        assert_eq!(canon(b"\x01\x80.com"), Some(("%01%80.com".into(), false)));
        // UTF-8 that IDNA rejects (a full-width solidus maps to `/`): escaped.
        assert_eq!(
            canon("a／b.com".as_bytes()),
            Some(("a%EF%BC%8Fb.com".into(), false))
        );
        // Too long for IDNA: escaped, no quadratic punycode work.
        let long = "é".repeat(100_000);
        let (text, _) = canon(long.as_bytes()).unwrap_or_default();
        assert_eq!(text, "%C3%A9".repeat(100_000));
    }

    #[test]
    fn only_the_safe_browsing_set_is_escaped() {
        // The parser splits at `/ ? @ :` after unescaping, so hosts never hold them; `#`, `%`,
        // bytes <= 0x20 and >= 0x7F are escaped, and nothing else (`;` and brackets stay).
        assert_eq!(canon(b"host#.com"), Some(("host%23.com".into(), false)));
        assert_eq!(canon(b"a b%.com"), Some(("a%20b%25.com".into(), false)));
        assert_eq!(canon(b"abcd123;[]"), Some(("abcd123;[]".into(), false)));
    }
}
