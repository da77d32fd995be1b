//! Where a client reads a published list from: an http(s) URL (a `publish` directory on any
//! web server, or serve's `/v1/lists/NAME`) or a local directory, behind one small interface.

use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;

use crate::error::{Error, Result};

/// What a GET gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Fetched {
    /// The resource is the one named by the `ETag` sent (HTTP 304).
    NotModified,
    /// The body, and its `ETag` when the server gave one.
    Body {
        /// The bytes.
        bytes: Vec<u8>,
        /// The entity tag, for the next conditional request.
        etag: Option<String>,
    },
}

/// Reads the files of one published list, by their paths relative to its base.
pub trait Fetch: Send {
    /// Gets `path`, at most `limit` bytes; with `etag`, conditionally (`If-None-Match`).
    fn get(&self, path: &str, limit: u64, etag: Option<&str>) -> Result<Fetched>;

    /// The full name of `path`, for messages.
    fn locate(&self, path: &str) -> String;
}

/// Opens the base a user gave: `http://` or `https://` URLs over HTTP, anything else as a
/// local directory. `headers` (`Name: value`, e.g. an auth token) go with every request.
pub fn open(base: &str, headers: &[String]) -> Result<Box<dyn Fetch>> {
    open_with(base, headers, None)
}

/// [`open`], trusting also the certificate authority in `ca_pem` (PEM) for HTTPS: a
/// publisher behind an organisation's own CA.
pub fn open_with(base: &str, headers: &[String], ca_pem: Option<&[u8]>) -> Result<Box<dyn Fetch>> {
    let lower = base.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return Ok(Box::new(Http::with_ca(base, headers, ca_pem)?));
    }
    let root = PathBuf::from(base.strip_prefix("file://").unwrap_or(base));
    if !root.is_dir() {
        return Err(Error::BadBase { base: base.into() });
    }
    Ok(Box::new(Directory { root }))
}

/// A list published over HTTP or HTTPS.
pub struct Http {
    base: String,
    client: reqwest::blocking::Client,
}

/// How long one request may take, connection to last byte: long enough for a 100 MB file on
/// a slow link, short enough that a stalled server does not hold a client forever.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// The slowest transfer a download may keep up, in bytes a second, once [`PACE_GRACE`] has
/// passed: a server (or whoever sits between it and the client) trickling bytes to hold a
/// client on an old list for as long as it likes — TUF's "slow retrieval" attack — is cut off.
/// A 100 MB list at this rate would take 7 hours: no real link is that slow.
pub const MIN_RATE: u64 = 4 << 10;

/// Time a download has before [`MIN_RATE`] applies (slow starts, TLS, a cold server).
pub const PACE_GRACE: Duration = Duration::from_secs(10);

/// Redirects followed at most (within the base's origin).
const MAX_REDIRECTS: usize = 5;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

impl Http {
    /// A client of the list at `base` sending `headers`.
    pub fn new(base: &str, headers: &[String]) -> Result<Http> {
        Http::with_ca(base, headers, None)
    }

    /// [`Http::new`], trusting also the certificate authority `ca_pem` (PEM).
    pub fn with_ca(base: &str, headers: &[String], ca_pem: Option<&[u8]>) -> Result<Http> {
        let mut map = reqwest::header::HeaderMap::new();
        for header in headers {
            let bad = || Error::BadHeader {
                header: header.clone(),
            };
            let (name, value) = header.split_once(':').ok_or_else(bad)?;
            let name = reqwest::header::HeaderName::from_bytes(name.trim().as_bytes())
                .map_err(|_| bad())?;
            let mut value =
                reqwest::header::HeaderValue::from_str(value.trim()).map_err(|_| bad())?;
            value.set_sensitive(true);
            map.insert(name, value);
        }
        let mut builder = reqwest::blocking::Client::builder()
            .user_agent(concat!("phishbloom-sync/", env!("CARGO_PKG_VERSION")))
            // Redirects only within the base's origin (scheme, host and port): a header given
            // for the publisher (a token) never goes to another host, nor over plain HTTP.
            .redirect(reqwest::redirect::Policy::custom(|attempt| {
                let same_origin = attempt.previous().first().is_some_and(|first| {
                    first.scheme() == attempt.url().scheme()
                        && first.host_str() == attempt.url().host_str()
                        && first.port_or_known_default() == attempt.url().port_or_known_default()
                });
                if same_origin && attempt.previous().len() < MAX_REDIRECTS {
                    attempt.follow()
                } else {
                    attempt.stop()
                }
            }))
            .default_headers(map)
            .timeout(REQUEST_TIMEOUT)
            .connect_timeout(CONNECT_TIMEOUT);
        if let Some(pem) = ca_pem {
            let certificate = reqwest::Certificate::from_pem(pem).map_err(|e| Error::Http {
                url: base.into(),
                problem: format!("the CA certificate is not PEM: {}", error_chain(&e)),
            })?;
            builder = builder.add_root_certificate(certificate);
        }
        let client = builder.build().map_err(|e| Error::Http {
            url: base.into(),
            problem: format!("cannot make an HTTP client: {e}"),
        })?;
        Ok(Http {
            base: base.trim_end_matches('/').to_string(),
            client,
        })
    }
}

impl Fetch for Http {
    fn get(&self, path: &str, limit: u64, etag: Option<&str>) -> Result<Fetched> {
        let url = self.locate(path);
        // A request also ends when even MIN_RATE would have brought `limit` bytes: a server
        // that answers and then sends nothing cannot hold the client for REQUEST_TIMEOUT.
        let allowed = CONNECT_TIMEOUT + PACE_GRACE + Duration::from_secs(limit / MIN_RATE);
        let mut request = self.client.get(&url).timeout(allowed.min(REQUEST_TIMEOUT));
        if let Some(etag) = etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, etag);
        }
        let response = request.send().map_err(|e| Error::Http {
            url: url.clone(),
            problem: error_chain(&e),
        })?;
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED {
            if etag.is_none() {
                // Only an answer to If-None-Match may say "not modified".
                return Err(Error::Status {
                    url,
                    status: 304,
                    hint: " to a request that named no version (a broken proxy or cache?)",
                });
            }
            return Ok(Fetched::NotModified);
        }
        if !status.is_success() {
            let hint = match status.as_u16() {
                401 | 403 => " (does the server need a token?)",
                404 => " (is the URL a published list? it should hold index.json)",
                _ => "",
            };
            return Err(Error::Status {
                url,
                status: status.as_u16(),
                hint,
            });
        }
        let etag = response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let bytes = read_limited(Paced::new(response), limit, &url)?;
        Ok(Fetched::Body { bytes, etag })
    }

    fn locate(&self, path: &str) -> String {
        format!("{}/{path}", self.base)
    }
}

/// The error and its causes, on one line (reqwest's own message omits the cause).
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A reader that fails once, [`PACE_GRACE`] after it started, fewer than [`MIN_RATE`] bytes a
/// second on average have come.
struct Paced<R> {
    inner: R,
    started: std::time::Instant,
    read: u64,
}

impl<R: Read> Paced<R> {
    fn new(inner: R) -> Self {
        Paced {
            inner,
            started: std::time::Instant::now(),
            read: 0,
        }
    }
}

impl<R: Read> Read for Paced<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        let elapsed = self.started.elapsed();
        if n > 0 && elapsed > PACE_GRACE && self.read < MIN_RATE * elapsed.as_secs() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "{} bytes in {:.0} s, slower than {} bytes a second: the server (or a proxy) \
                     is stalling the download; the list was left as it was",
                    self.read,
                    elapsed.as_secs_f64(),
                    MIN_RATE
                ),
            ));
        }
        Ok(n)
    }
}

/// Reads at most `limit` bytes, refusing a longer body.
fn read_limited(reader: impl Read, limit: u64, url: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::Http {
            url: url.into(),
            problem: format!("reading the answer failed: {}", error_chain(&e)),
        })?;
    if bytes.len() as u64 > limit {
        return Err(Error::TooLong {
            url: url.into(),
            limit,
        });
    }
    Ok(bytes)
}

/// A list published into a local directory (or a mounted share).
pub struct Directory {
    root: PathBuf,
}

impl Fetch for Directory {
    fn get(&self, path: &str, limit: u64, _etag: Option<&str>) -> Result<Fetched> {
        // Paths come from the index: refuse any that would leave the directory.
        if path.split('/').any(|part| part == ".." || part.is_empty()) {
            return Err(Error::BadBase {
                base: self.locate(path),
            });
        }
        let full = self.root.join(path);
        let file = std::fs::File::open(&full).map_err(|e| Error::io(&full, "read", e))?;
        let bytes = read_limited(file, limit, &full.display().to_string())?;
        Ok(Fetched::Body { bytes, etag: None })
    }

    fn locate(&self, path: &str) -> String {
        self.root.join(path).display().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_are_urls_or_directories() {
        assert!(open("ftp://x/y", &[]).is_err());
        assert!(open("/nonexistent/phishbloom/dir", &[]).is_err());
        assert!(open("http://127.0.0.1:1/v1/lists/x", &[]).is_ok());
        assert!(matches!(
            open("http://127.0.0.1:1/", &["no colon".into()]),
            Err(Error::BadHeader { .. })
        ));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("index.json"), b"{}").unwrap();
        let fetch = open(dir.path().to_str().unwrap(), &[]).unwrap();
        assert_eq!(
            fetch.get("index.json", 10, None).unwrap(),
            Fetched::Body {
                bytes: b"{}".to_vec(),
                etag: None
            }
        );
        assert!(matches!(
            fetch.get("index.json", 1, None),
            Err(Error::TooLong { .. })
        ));
        assert!(fetch.get("../etc/passwd", 10, None).is_err());
    }

    /// A reader that hands out one byte a call.
    struct Trickle;

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf[0] = b'x';
            Ok(1)
        }
    }

    #[test]
    fn a_trickle_is_cut_off_once_the_grace_has_passed() {
        let mut paced = Paced::new(Trickle);
        let mut buf = [0u8; 16];
        // Within the grace every byte is taken.
        assert_eq!(paced.read(&mut buf).unwrap(), 1);
        paced.started -= PACE_GRACE + Duration::from_secs(1);
        let error = paced.read(&mut buf).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::TimedOut);
        assert!(
            error.to_string().contains("stalling the download"),
            "{error}"
        );
        // A reader that has kept up the rate is not.
        let mut fast = Paced::new(std::io::repeat(b'y'));
        fast.started -= PACE_GRACE + Duration::from_secs(1);
        let mut big = vec![0u8; 64 << 10];
        assert_eq!(fast.read(&mut big).unwrap(), big.len());
    }
}
