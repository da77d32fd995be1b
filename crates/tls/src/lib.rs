//! TLS on phishbloom's listeners (`serve`'s HTTP and Redis-protocol listeners, `dns`' metrics
//! listener): the certificate chain and key read from PEM files into a rustls configuration,
//! swapped for a new one when either file changes (the server checks with its lists, on every
//! reload tick and SIGHUP; a bad new pair is logged and the old one kept), and [`Stream`], a
//! connection with or without TLS, which every handler serves alike.

use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, SystemTime};

use arc_swap::ArcSwap;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

/// What can go wrong reading a certificate and its key.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A TLS certificate or key that cannot be used.
    #[error(
        "{path}: {problem} (the certificate file must hold a PEM certificate chain, the \
         server's first, and the key file its PEM private key)"
    )]
    Tls {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The server's certificate and key, and the configuration made from them.
pub struct Tls {
    cert: PathBuf,
    key: PathBuf,
    config: ArcSwap<ServerConfig>,
    /// The files' modification times and lengths when last read.
    stamp: Mutex<Stamp>,
}

/// What identifies a version of the two files.
type Stamp = [(Option<SystemTime>, u64); 2];

fn stamp_of(cert: &Path, key: &Path) -> Stamp {
    [cert, key]
        .map(|path| std::fs::metadata(path).map_or((None, 0), |m| (m.modified().ok(), m.len())))
}

impl Tls {
    /// Reads the certificate chain at `cert` and the private key at `key` (PEM).
    pub fn load(cert: &Path, key: &Path) -> Result<Self> {
        let stamp = stamp_of(cert, key);
        let config = server_config(cert, key)?;
        Ok(Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
            config: ArcSwap::from_pointee(config),
            stamp: Mutex::new(stamp),
        })
    }

    /// Reads the files again when either changed; a pair that cannot be used is refused (and
    /// logged) and the configuration in use kept.
    pub fn reload_if_changed(&self) {
        let now = stamp_of(&self.cert, &self.key);
        let mut stamp = self.stamp.lock().unwrap_or_else(PoisonError::into_inner);
        if *stamp == now {
            return;
        }
        match server_config(&self.cert, &self.key) {
            Ok(config) => {
                self.config.store(Arc::new(config));
                *stamp = now;
                tracing::info!(cert = %self.cert.display(), "TLS certificate reloaded");
            }
            // Kept unchanged: a certificate written in two steps is read again next tick.
            Err(error) => {
                tracing::warn!(%error, "TLS certificate not reloaded; the old one is kept")
            }
        }
    }

    /// The acceptor of new connections, with the configuration in use now.
    pub fn acceptor(&self) -> TlsAcceptor {
        TlsAcceptor::from(self.config.load_full())
    }
}

/// A new connection as its handler reads it: in the clear without `acceptor`, else after the TLS
/// handshake, which has `timeout` to finish. `None` when the handshake fails or runs out of time
/// (a client that speaks no TLS, a scanner): the connection is dropped.
pub async fn accept(
    stream: TcpStream,
    acceptor: Option<TlsAcceptor>,
    timeout: Duration,
) -> Option<Stream> {
    let Some(acceptor) = acceptor else {
        return Some(Stream::Plain(stream));
    };
    match tokio::time::timeout(timeout, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(Stream::Tls(Box::new(tls))),
        Ok(Err(error)) => {
            tracing::debug!(%error, "TLS handshake failed");
            None
        }
        Err(_) => None,
    }
}

/// A rustls server configuration (HTTP/1.1 over TLS 1.2 and 1.3) from PEM files.
fn server_config(cert: &Path, key: &Path) -> Result<ServerConfig> {
    let bad = |path: &Path, problem: String| Error::Tls {
        path: path.to_path_buf(),
        problem,
    };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| bad(cert, format!("cannot read a certificate: {e}")))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| bad(cert, format!("not a PEM certificate: {e}")))?;
    if chain.is_empty() {
        return Err(bad(cert, "holds no certificate".into()));
    }
    let private = PrivateKeyDer::from_pem_file(key)
        .map_err(|e| bad(key, format!("not a PEM private key: {e}")))?;
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(cert, e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| bad(key, format!("does not fit the certificate: {e}")))
}

/// A connection, in the clear or over TLS.
pub enum Stream {
    /// Plain TCP.
    Plain(TcpStream),
    /// TLS over TCP (boxed: its buffers are large).
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, data),
            Stream::Tls(s) => Pin::new(s).poll_write(cx, data),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Stream::Tls(s) => Pin::new(s).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        match self {
            Stream::Plain(s) => s.is_write_vectored(),
            Stream::Tls(s) => s.is_write_vectored(),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_or_foreign_file_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("cert.pem");
        std::fs::write(&text, "not a certificate\n").unwrap();
        let error = Tls::load(&text, &text).err().unwrap().to_string();
        assert!(error.contains("cert.pem: holds no certificate"), "{error}");
        let error = Tls::load(&dir.path().join("none"), &text)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("cannot read a certificate"), "{error}");
    }
}
