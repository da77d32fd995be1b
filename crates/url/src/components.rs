//! Splitting a canonical URL into components (host, labels, path segments) for component-wise filters such as a CaBF engine.

use crate::CanonicalUrl;

/// Non-empty path segments of the URL (the query is not included).
fn path_segments(url: &CanonicalUrl) -> impl Iterator<Item = &str> {
    url.path().split('/').filter(|s| !s.is_empty())
}

/// The host, then each path segment; the query is not included.
///
/// `http://www.evil.com/a/b/?x` gives `["www.evil.com", "a", "b"]`.
pub fn components_by_slash(url: &CanonicalUrl) -> Vec<&str> {
    std::iter::once(url.host())
        .chain(path_segments(url))
        .collect()
}

/// The host labels in reverse order, then each path segment; the query is
/// not included. An IP host is one component, not reversed.
///
/// `http://www.evil.com/a/b` gives `["com", "evil", "www", "a", "b"]`.
pub fn components_reversed_host(url: &CanonicalUrl) -> Vec<&str> {
    let mut out: Vec<&str> = if url.is_ip_host() {
        vec![url.host()]
    } else {
        url.host().rsplit('.').collect()
    };
    out.extend(path_segments(url));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonicalize;

    fn url(s: &str) -> CanonicalUrl {
        canonicalize(s.as_bytes()).expect("test URL is valid")
    }

    #[test]
    fn by_slash() {
        assert_eq!(
            components_by_slash(&url("http://www.evil.com/a/b/?x=1/2")),
            ["www.evil.com", "a", "b"]
        );
        assert_eq!(components_by_slash(&url("evil.com")), ["evil.com"]);
    }

    #[test]
    fn reversed_host() {
        assert_eq!(
            components_reversed_host(&url("http://www.evil.com/a/b")),
            ["com", "evil", "www", "a", "b"]
        );
        assert_eq!(components_reversed_host(&url("localhost/")), ["localhost"]);
        assert_eq!(
            components_reversed_host(&url("http://3279880203/blah")),
            ["195.127.0.11", "blah"]
        );
    }
}
