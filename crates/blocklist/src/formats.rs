//! The list formats admins already have, recognized from their content: hosts files, AdBlock /
//! uBlock Origin domain rules, PhishTank's and URLhaus's CSV dumps and OpenPhish's feed (one URL
//! per line, the plain format). This module decides which format a list is ([`detect`]) and
//! turns one line of a hosts file or an AdBlock list into what it blocks or allows
//! ([`parse_hosts_line`], [`parse_adblock_line`]); every line that holds nothing to block is
//! given a reason ([`Skip`]) that the build summary counts. Reading the lines and the CSVs is
//! [`crate::source`]'s.
//!
//! Choices made for AdBlock rules, which describe requests more finely than a blocklist of
//! domains and URLs can:
//! - `||evil.example^` blocks the domain (and, as every domain entry, its subdomains);
//!   `@@||good.example^` is an exception to it.
//! - Options that restrict a rule to some requests (`$third-party`, `$script`,
//!   `$domain=a.example`, …) are ignored: the domain is blocked for every request. A phishing
//!   or malware domain listed for one kind of request is not one to visit either.
//! - Options that make a rule change requests rather than block them (`$badfilter`,
//!   `$removeparam`, `$csp`, `$redirect-rule`, …) make it a skipped *modifier rule*; an
//!   exception whose options only stop element hiding (`@@||a.example^$generichide`) is a
//!   *cosmetic rule*, not an exception.
//! - Cosmetic rules (`##`, `#@#`, `#?#`, …), regular expressions (`/…/`) and rules with a path,
//!   a port or a wildcard (`||a.example/ads/*`, `/banner/`) are skipped and counted.
//! - A bare host name on a line is a domain rule, as uBlock Origin reads it, and a hosts-file
//!   line in an AdBlock list is read as one.

use std::net::{IpAddr, Ipv6Addr};

/// How a list is written: the formats `build` reads (its `--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ListFormat {
    /// One entry (or key) per line.
    Lines,
    /// CSV with a header row; the key column found by name.
    Csv,
    /// A hosts file: `ADDRESS NAME…` lines, `#` comments.
    Hosts,
    /// AdBlock Plus / uBlock Origin filter rules: `||domain^` blocks, `@@||domain^` allows.
    Adblock,
    /// PhishTank's CSV dump: `phish_id,url,phish_detail_url,…`, the `url` column.
    Phishtank,
    /// URLhaus's CSV dump: `#` comment lines, a `# id,dateadded,url,…` header, quoted fields.
    Urlhaus,
    /// OpenPhish's feed: one URL per line, read as [`ListFormat::Lines`].
    Openphish,
}

impl ListFormat {
    /// The name the build summary and `--format` use.
    pub fn name(self) -> &'static str {
        match self {
            ListFormat::Lines => "lines",
            ListFormat::Csv => "csv",
            ListFormat::Hosts => "hosts",
            ListFormat::Adblock => "adblock",
            ListFormat::Phishtank => "phishtank",
            ListFormat::Urlhaus => "urlhaus",
            ListFormat::Openphish => "openphish",
        }
    }

    /// Whether the list is a CSV (read by column).
    pub fn is_csv(self) -> bool {
        matches!(
            self,
            ListFormat::Csv | ListFormat::Phishtank | ListFormat::Urlhaus
        )
    }

    /// Whether lines of this format name domains and URLs rather than hold whole keys: every
    /// format but plain lines and CSV, which may hold any key.
    pub fn is_entry_format(self) -> bool {
        !matches!(self, ListFormat::Lines | ListFormat::Csv)
    }
}

/// Why a line gave nothing to block, as the build summary counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Skip {
    /// A comment: `#` (hosts files, URLhaus, plain entry lists) or `!` (AdBlock).
    Comment,
    /// An AdBlock list's `[Adblock Plus 2.0]` header.
    Header,
    /// A hosts line for the machine itself: `localhost`, `broadcasthost`, `ip6-*` names, or a
    /// loopback, link-local or multicast IPv6 address.
    Localhost,
    /// An AdBlock element-hiding rule (`##`, `#@#`, `#?#`, …), or an exception that only stops
    /// element hiding.
    Cosmetic,
    /// An AdBlock regular expression (`/…/`).
    Regex,
    /// An AdBlock rule with a path, a port or a wildcard: not a whole domain.
    PathRule,
    /// An AdBlock rule that changes requests rather than blocks them (`$badfilter`,
    /// `$removeparam`, `$csp`, …).
    Modifier,
    /// An AdBlock exception in a list of whole keys, which has no exceptions.
    Exception,
}

impl Skip {
    /// Every reason, in the order the summary lists them.
    pub const ALL: [Skip; 8] = [
        Skip::Comment,
        Skip::Header,
        Skip::Localhost,
        Skip::Cosmetic,
        Skip::Regex,
        Skip::PathRule,
        Skip::Modifier,
        Skip::Exception,
    ];

    /// What the summary calls `count` lines skipped for this reason (`12 comments`).
    pub fn describe(self, count: u64) -> &'static str {
        let one = count == 1;
        match self {
            Skip::Comment if one => "comment",
            Skip::Comment => "comments",
            Skip::Header if one => "header",
            Skip::Header => "headers",
            Skip::Localhost if one => "localhost line",
            Skip::Localhost => "localhost lines",
            Skip::Cosmetic if one => "cosmetic rule",
            Skip::Cosmetic => "cosmetic rules",
            Skip::Regex if one => "regex rule",
            Skip::Regex => "regex rules",
            Skip::PathRule if one => "path or wildcard rule",
            Skip::PathRule => "path or wildcard rules",
            Skip::Modifier if one => "rule that modifies rather than blocks",
            Skip::Modifier => "rules that modify rather than block",
            Skip::Exception if one => "exception rule (a list of keys has no exceptions)",
            Skip::Exception => "exception rules (a list of keys has no exceptions)",
        }
    }
}

/// What one line of a hosts file or an AdBlock list holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// Nothing: an empty line or only spaces.
    Blank,
    /// Domains (or URLs) to block: one for an AdBlock rule, one or more for a hosts line.
    Block(Vec<&'a [u8]>),
    /// A domain that stays allowed (an AdBlock `@@` exception).
    Allow(&'a [u8]),
    /// Nothing to block, for this reason.
    Skip(Skip),
    /// Not a line of this format, and why.
    Malformed(&'static str),
}

/// How many lines at the start of a list [`detect`] looks at.
pub const DETECT_LINES: usize = 200;

/// Which format `head` (the start of a list, decompressed) is written in: PhishTank's or
/// URLhaus's CSV by their header, an AdBlock list by its `[Adblock …]` header or when most of
/// its first [`DETECT_LINES`] lines that are not `#` comments are AdBlock rules or `!`
/// comments, a hosts file when most of them are `ADDRESS NAME` lines; otherwise
/// [`ListFormat::Csv`] when `csv_name` (the file is named `*.csv`), else
/// [`ListFormat::Lines`]. An OpenPhish feed is plain lines. Never fails: an unknown format is
/// read as lines, whose own checks refuse a list that is mostly not entries.
pub fn detect(head: &[u8], csv_name: bool) -> ListFormat {
    let lines = head
        .split(|&b| b == b'\n')
        .map(<[u8]>::trim_ascii)
        .filter(|line| !line.is_empty())
        .take(DETECT_LINES);
    let (mut hosts, mut adblock, mut other) = (0usize, 0usize, 0usize);
    for (index, line) in lines.enumerate() {
        let lower = line.to_ascii_lowercase();
        if index == 0 && lower.starts_with(b"phish_id,url,") {
            return ListFormat::Phishtank;
        }
        if index == 0 && (lower.starts_with(b"[adblock") || lower.starts_with(b"[ublock")) {
            return ListFormat::Adblock;
        }
        if is_urlhaus_header(&lower) {
            return ListFormat::Urlhaus;
        }
        if lower.starts_with(b"!") || is_cosmetic(line) {
            adblock += 1;
        } else if lower.starts_with(b"#") {
            // A comment in a hosts file, a plain list and URLhaus alike: no vote.
        } else if lower.starts_with(b"||") || lower.starts_with(b"@@") {
            adblock += 1;
        } else if hosts_address(line).is_some() {
            hosts += 1;
        } else {
            other += 1;
        }
    }
    let votes = hosts + adblock + other;
    if votes > 0 && hosts * 2 > votes {
        ListFormat::Hosts
    } else if votes > 0 && adblock * 2 > votes {
        ListFormat::Adblock
    } else if csv_name {
        ListFormat::Csv
    } else {
        ListFormat::Lines
    }
}

/// Whether a (lower-cased, trimmed) line is URLhaus's commented header, `# id,dateadded,url,…`.
pub fn is_urlhaus_header(lower: &[u8]) -> bool {
    lower.starts_with(b"#")
        && lower[1..]
            .trim_ascii_start()
            .starts_with(b"id,dateadded,url")
}

/// The address field of a hosts line and what follows it, if the line starts with an IP
/// address followed by at least one more field.
fn hosts_address(line: &[u8]) -> Option<(IpAddr, &[u8])> {
    let line = line.trim_ascii();
    let end = line.iter().position(u8::is_ascii_whitespace)?;
    let address = parse_ip(&line[..end])?;
    Some((address, line[end..].trim_ascii()))
}

/// An IP address, IPv6 with an optional zone (`fe80::1%lo0`).
fn parse_ip(field: &[u8]) -> Option<IpAddr> {
    let text = std::str::from_utf8(field).ok()?;
    let text = text.split_once('%').map_or(text, |(address, _)| address);
    text.parse().ok()
}

/// Whether an IPv6 address is the machine's own or its link's: loopback, link-local
/// (`fe80::/10`) or multicast. `::` (unspecified) is a sinkhole like `0.0.0.0`, not one.
fn is_local_v6(address: &Ipv6Addr) -> bool {
    address.is_loopback() || address.is_multicast() || address.segments()[0] & 0xffc0 == 0xfe80
}

/// Whether a host name on a hosts line is the machine's own rather than one to block.
fn is_local_name(name: &[u8]) -> bool {
    const LOCAL: [&[u8]; 5] = [
        b"localhost",
        b"localhost.localdomain",
        b"local",
        b"broadcasthost",
        b"0.0.0.0",
    ];
    LOCAL.iter().any(|local| name.eq_ignore_ascii_case(local))
        || name.len() > 4 && name[..4].eq_ignore_ascii_case(b"ip6-")
}

/// One line of a hosts file: `0.0.0.0 evil.example`, `127.0.0.1 a.example b.example` (several
/// names), `#` comments (also after the names), `localhost`-like names and lines for the
/// loopback, link-local and multicast IPv6 addresses skipped. A line holding a single name and
/// no address is that name (some hosts-style lists mix them in).
pub fn parse_hosts_line(line: &[u8]) -> Line<'_> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Line::Blank;
    }
    if line[0] == b'#' {
        return Line::Skip(Skip::Comment);
    }
    // A trailing comment; `#` is in no host name.
    let line = match memchr::memchr(b'#', line) {
        Some(at) => line[..at].trim_ascii(),
        None => line,
    };
    fn names_of(rest: &[u8]) -> Vec<&[u8]> {
        rest.split(u8::is_ascii_whitespace)
            .filter(|name| !name.is_empty())
            .collect()
    }
    let (names, local_address) = match hosts_address(line) {
        Some((address, rest)) => {
            let local = matches!(address, IpAddr::V6(v6) if is_local_v6(&v6));
            (names_of(rest), local)
        }
        None if parse_ip(line).is_some() => return Line::Malformed("an address without a name"),
        None if !line.iter().any(u8::is_ascii_whitespace) => (vec![line], false),
        None => return Line::Malformed("not `ADDRESS NAME…`: the first field is no IP address"),
    };
    if local_address {
        return Line::Skip(Skip::Localhost);
    }
    let names: Vec<&[u8]> = names.into_iter().filter(|n| !is_local_name(n)).collect();
    if names.is_empty() {
        return Line::Skip(Skip::Localhost);
    }
    Line::Block(names)
}

/// Whether an AdBlock line is an element-hiding (cosmetic) rule or a scriptlet: `##`, `#@#`,
/// `#?#`, `#@?#`, `#$#`, `#@$#`, `#%#`, `#@%#` between its domains and its selector.
fn is_cosmetic(line: &[u8]) -> bool {
    const MARKERS: [&[u8]; 8] = [
        b"##", b"#@#", b"#?#", b"#@?#", b"#$#", b"#@$#", b"#%#", b"#@%#",
    ];
    memchr::memchr_iter(b'#', line).any(|at| MARKERS.iter().any(|m| line[at..].starts_with(m)))
}

/// Options that make a rule change requests rather than block them.
const MODIFIER_OPTIONS: [&str; 12] = [
    "badfilter",
    "removeparam",
    "queryprune",
    "csp",
    "redirect-rule",
    "replace",
    "urltransform",
    "uritransform",
    "removeheader",
    "permissions",
    "header",
    "cookie",
];

/// Options of an exception that only stop element hiding or scriptlets.
const HIDING_OPTIONS: [&str; 9] = [
    "elemhide",
    "ehide",
    "generichide",
    "ghide",
    "specifichide",
    "shide",
    "content",
    "jsinject",
    "stealth",
];

/// The name of an option (`domain` of `domain=a.example`, `third-party` of `~third-party`),
/// lower-cased.
fn option_name(option: &[u8]) -> String {
    let option = option.trim_ascii();
    let option = option.strip_prefix(b"~").unwrap_or(option);
    let name = option.split(|&b| b == b'=').next().unwrap_or_default();
    String::from_utf8_lossy(name).to_ascii_lowercase()
}

/// Whether a byte can be part of a host name in a rule: ASCII letters, digits, `-`, `.`, `_`,
/// and any byte of a non-ASCII (internationalized) name.
fn is_host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_') || b >= 0x80
}

/// One line of an AdBlock Plus / uBlock Origin list: `||evil.example^` (with any `$options`)
/// blocks the domain, `@@||good.example^` allows it, `!` comments and `[Adblock Plus 2.0]`
/// headers are skipped, cosmetic, regular-expression, path and wildcard rules are skipped
/// and named; see the [module documentation](self) for the choices made.
pub fn parse_adblock_line(line: &[u8]) -> Line<'_> {
    let line = line.trim_ascii();
    if line.is_empty() {
        return Line::Blank;
    }
    if line[0] == b'!' {
        return Line::Skip(Skip::Comment);
    }
    if line[0] == b'[' && line.ends_with(b"]") {
        return Line::Skip(Skip::Header);
    }
    if is_cosmetic(line) {
        return Line::Skip(Skip::Cosmetic);
    }
    if line[0] == b'#' {
        return Line::Skip(Skip::Comment);
    }
    if hosts_address(line).is_some() {
        return parse_hosts_line(line);
    }
    let (allow, rule) = match line.strip_prefix(b"@@") {
        Some(rule) => (true, rule),
        None => (false, line),
    };
    // A regular expression may hold `$`: it is recognized before options are split off.
    if rule.len() > 1 && rule[0] == b'/' {
        let body = match memchr::memrchr(b'$', rule) {
            Some(at) if rule[..at].ends_with(b"/") && at > 1 => &rule[..at],
            _ => rule,
        };
        return Line::Skip(if body.len() > 1 && body.ends_with(b"/") {
            Skip::Regex
        } else {
            Skip::PathRule
        });
    }
    let (body, options) = match memchr::memchr(b'$', rule) {
        Some(at) => (&rule[..at], Some(&rule[at + 1..])),
        None => (rule, None),
    };
    if let Some(options) = options {
        let names: Vec<String> = options.split(|&b| b == b',').map(option_name).collect();
        if names
            .iter()
            .any(|name| MODIFIER_OPTIONS.contains(&name.as_str()))
        {
            return Line::Skip(Skip::Modifier);
        }
        if allow
            && !names.is_empty()
            && names
                .iter()
                .all(|name| HIDING_OPTIONS.contains(&name.as_str()))
        {
            return Line::Skip(Skip::Cosmetic);
        }
    }
    let domain = match body.strip_prefix(b"||") {
        Some(rest) => {
            let end = rest
                .iter()
                .position(|&b| !is_host_byte(b))
                .unwrap_or(rest.len());
            let (domain, tail) = rest.split_at(end);
            if domain.is_empty() || !matches!(tail, b"" | b"^" | b"^|" | b"|") {
                return Line::Skip(Skip::PathRule);
            }
            domain
        }
        // A bare host name, as uBlock Origin reads it: `evil.example`.
        None if body.contains(&b'.') && body.iter().all(|&b| is_host_byte(b)) => body,
        None => return Line::Skip(Skip::PathRule),
    };
    if allow {
        Line::Allow(domain)
    } else {
        Line::Block(vec![domain])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(names: &[&'static str]) -> Line<'static> {
        Line::Block(names.iter().map(|n| n.as_bytes()).collect())
    }

    #[test]
    fn hosts_lines() {
        let cases: [(&str, Line); 16] = [
            ("0.0.0.0 evil.example", block(&["evil.example"])),
            (
                "127.0.0.1\ta.example  b.example # two",
                block(&["a.example", "b.example"]),
            ),
            ("  0.0.0.0 evil.example#no space", block(&["evil.example"])),
            ("# StevenBlack hosts", Line::Skip(Skip::Comment)),
            ("   ", Line::Blank),
            ("127.0.0.1 localhost", Line::Skip(Skip::Localhost)),
            (
                "127.0.0.1 localhost.localdomain",
                Line::Skip(Skip::Localhost),
            ),
            ("255.255.255.255 broadcasthost", Line::Skip(Skip::Localhost)),
            ("::1 localhost ip6-localhost", Line::Skip(Skip::Localhost)),
            ("fe80::1%lo0 localhost", Line::Skip(Skip::Localhost)),
            ("ff02::2 ip6-allrouters", Line::Skip(Skip::Localhost)),
            ("0.0.0.0 0.0.0.0", Line::Skip(Skip::Localhost)),
            (":: sinkholed.example", block(&["sinkholed.example"])),
            ("bare.example", block(&["bare.example"])),
            ("0.0.0.0", Line::Malformed("an address without a name")),
            (
                "evil.example extra",
                Line::Malformed("not `ADDRESS NAME…`: the first field is no IP address"),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(parse_hosts_line(line.as_bytes()), expected, "{line:?}");
        }
    }

    #[test]
    fn adblock_lines() {
        let cases: [(&str, Line); 24] = [
            ("||evil.example^", block(&["evil.example"])),
            ("||evil.example^$third-party", block(&["evil.example"])),
            (
                "||evil.example^$script,domain=a.example|b.example",
                block(&["evil.example"]),
            ),
            ("||evil.example", block(&["evil.example"])),
            ("||evil.example^|", block(&["evil.example"])),
            ("plain.example", block(&["plain.example"])),
            ("0.0.0.0 hosts.example", block(&["hosts.example"])),
            ("@@||good.example^", Line::Allow(b"good.example")),
            ("@@||good.example^$document", Line::Allow(b"good.example")),
            ("@@||good.example^$generichide", Line::Skip(Skip::Cosmetic)),
            ("! Title: EasyList", Line::Skip(Skip::Comment)),
            ("[Adblock Plus 2.0]", Line::Skip(Skip::Header)),
            ("example.com##.ad-banner", Line::Skip(Skip::Cosmetic)),
            ("##.ad", Line::Skip(Skip::Cosmetic)),
            ("example.com#@#.ad", Line::Skip(Skip::Cosmetic)),
            ("example.com#?#div:has(> a)", Line::Skip(Skip::Cosmetic)),
            (
                "example.com##+js(set-constant, a, b)",
                Line::Skip(Skip::Cosmetic),
            ),
            ("/banner\\d+\\.gif/", Line::Skip(Skip::Regex)),
            ("/^https?:\\/\\/x/$script", Line::Skip(Skip::Regex)),
            ("/ads/banner.", Line::Skip(Skip::PathRule)),
            ("||evil.example/login/*", Line::Skip(Skip::PathRule)),
            ("||*.evil.example^", Line::Skip(Skip::PathRule)),
            ("||evil.example^$badfilter", Line::Skip(Skip::Modifier)),
            ("||x.example^$removeparam=utm", Line::Skip(Skip::Modifier)),
        ];
        for (line, expected) in cases {
            assert_eq!(parse_adblock_line(line.as_bytes()), expected, "{line:?}");
        }
        assert_eq!(parse_adblock_line(b"   "), Line::Blank);
        assert_eq!(
            parse_adblock_line(b"# a comment"),
            Line::Skip(Skip::Comment)
        );
    }

    #[test]
    fn detection_by_content() {
        let d = |text: &str| detect(text.as_bytes(), false);
        assert_eq!(
            d("phish_id,url,phish_detail_url,submission_time,verified,verification_time,online,target\n"),
            ListFormat::Phishtank
        );
        assert_eq!(
            d("#####\n# abuse.ch URLhaus\n#\n# id,dateadded,url,url_status\n\"1\",\"x\"\n"),
            ListFormat::Urlhaus
        );
        assert_eq!(d("[Adblock Plus 2.0]\nanything\n"), ListFormat::Adblock);
        assert_eq!(
            d("! Title: list\n||a.example^\n@@||b.example^\nc.example##.ad\n"),
            ListFormat::Adblock
        );
        assert_eq!(
            d("# hosts\n127.0.0.1 localhost\n0.0.0.0 a.example\n0.0.0.0 b.example\n"),
            ListFormat::Hosts
        );
        // OpenPhish's feed, and URLs with fragments, are plain lines.
        assert_eq!(
            d("https://evil.example/login.php\nhttp://bad.example/#/x##y\nhttps://a.example/\n"),
            ListFormat::Lines
        );
        assert_eq!(d("evil.example\nbad.example\n"), ListFormat::Lines);
        assert_eq!(detect(b"url,label\nx,1\n", true), ListFormat::Csv);
        assert_eq!(detect(b"", false), ListFormat::Lines);
        // A list of domains with a hosts line or two stays a list.
        assert_eq!(
            d("a.example\nb.example\nc.example\n0.0.0.0 d.example\n"),
            ListFormat::Lines
        );
    }

    #[test]
    fn skip_reasons_have_names_for_one_and_many() {
        for reason in Skip::ALL {
            assert_ne!(reason.describe(1), reason.describe(2));
        }
    }

    proptest::proptest! {
        /// No line of any format panics a parser or the detector, whatever its bytes.
        #[test]
        fn no_line_panics(line in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200)) {
            let _ = parse_hosts_line(&line);
            let _ = parse_adblock_line(&line);
            let _ = detect(&line, false);
        }

        /// Nor does a line made of the bytes these formats give meaning to.
        #[test]
        fn no_rule_like_line_panics(line in "[|@^$#!/*.,=~ a-z0-9:%\\[\\]-]{0,60}") {
            for parsed in [parse_hosts_line(line.as_bytes()), parse_adblock_line(line.as_bytes())] {
                if let Line::Block(names) = parsed {
                    assert!(names.iter().all(|n| !n.is_empty()));
                }
            }
            let _ = detect(line.as_bytes(), true);
        }
    }
}
