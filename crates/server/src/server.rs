//! [`Server`]: binds the HTTP and Redis-protocol listeners, accepts connections with the
//! timeouts of [`Limits`](crate::Limits), reloads lists (SIGHUP, files replaced on disk) and shuts down
//! gracefully (SIGTERM or SIGINT: stop accepting, let requests in flight finish, exit).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;

use phishbloom_tls::{self as tls, Stream, Tls};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::error::{Error, Result};
use crate::Shared;

/// The bound listeners of a server about to run.
pub struct Server {
    shared: Arc<Shared>,
    http: Option<TcpListener>,
    resp: Option<TcpListener>,
}

impl Server {
    /// Binds the HTTP and Redis-protocol addresses (either may be absent; port 0 picks a free
    /// port, see [`Server::http_addr`]).
    pub async fn bind(shared: Arc<Shared>, http: Option<&str>, resp: Option<&str>) -> Result<Self> {
        async fn listen(addr: Option<&str>) -> Result<Option<TcpListener>> {
            let Some(addr) = addr else { return Ok(None) };
            TcpListener::bind(addr)
                .await
                .map(Some)
                .map_err(|cause| Error::Bind {
                    addr: addr.to_owned(),
                    cause,
                })
        }
        Ok(Server {
            shared,
            http: listen(http).await?,
            resp: listen(resp).await?,
        })
    }

    /// The HTTP address bound.
    pub fn http_addr(&self) -> Option<SocketAddr> {
        self.http.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// The Redis-protocol address bound.
    pub fn resp_addr(&self) -> Option<SocketAddr> {
        self.resp.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Serves until `shutdown` is cancelled, then stops accepting, lets connections finish
    /// what they are doing (up to the drain timeout) and returns. Files are polled for
    /// replacement every reload interval.
    pub async fn run(self, shutdown: CancellationToken) {
        let tracker = TaskTracker::new();
        let shared = self.shared;
        if let Some(listener) = self.http {
            let router = crate::http::router(shared.clone());
            tracker.spawn(accept(
                listener,
                shutdown.clone(),
                tracker.clone(),
                shared.clone(),
                move |stream, shared, stop| serve_http(stream, router.clone(), shared, stop),
            ));
        }
        if let Some(listener) = self.resp {
            tracker.spawn(accept(
                listener,
                shutdown.clone(),
                tracker.clone(),
                shared.clone(),
                crate::resp::serve_connection,
            ));
        }
        tracker.spawn(poll_files(shared.clone(), shutdown.clone()));
        tracker.close();
        shutdown.cancelled().await;
        if tokio::time::timeout(shared.limits.drain_timeout, tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "connections still open after {:?}; exiting anyway",
                shared.limits.drain_timeout
            );
        }
    }
}

/// Reloads lists whose files changed, every reload interval, on the blocking pool.
async fn poll_files(shared: Arc<Shared>, shutdown: CancellationToken) {
    // The lists were just loaded: the first look is one interval from now, not at once (an
    // immediate tick would race with a file replaced right after start-up).
    let period = shared.limits.reload_interval;
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = ticker.tick() => {
                let shared = shared.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    shared.lists.reload(false);
                    if let Some(tls) = &shared.tls {
                        tls.reload_if_changed();
                    }
                })
                .await;
            }
        }
    }
}

/// Reloads every list with a file now (SIGHUP), on the blocking pool.
pub async fn reload_all(shared: Arc<Shared>) {
    let _ = tokio::task::spawn_blocking(move || {
        shared.lists.reload(true);
        if let Some(tls) = &shared.tls {
            tls.reload_if_changed();
        }
    })
    .await;
}

/// Waits for SIGTERM or SIGINT (then cancels `shutdown`), reloading every list on SIGHUP
/// meanwhile.
pub async fn handle_signals(shared: Arc<Shared>, shutdown: CancellationToken) -> Result<()> {
    use tokio::signal::unix::{signal, SignalKind};
    let install =
        |kind: SignalKind| signal(kind).map_err(|e| Error::io("installing a signal handler", e));
    let mut hangup = install(SignalKind::hangup())?;
    let mut terminate = install(SignalKind::terminate())?;
    let mut interrupt = install(SignalKind::interrupt())?;
    loop {
        tokio::select! {
            _ = hangup.recv() => {
                tracing::info!("SIGHUP: reloading every list");
                reload_all(shared.clone()).await;
            }
            _ = terminate.recv() => break,
            _ = interrupt.recv() => break,
        }
    }
    tracing::info!("shutting down: no new connections; finishing requests in flight");
    shutdown.cancel();
    Ok(())
}

/// Accepts connections until `shutdown`, each served by `serve` on its own task.
async fn accept<F, Fut>(
    listener: TcpListener,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    shared: Arc<Shared>,
    serve: F,
) where
    F: Fn(Stream, Arc<Shared>, CancellationToken) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let serve = Arc::new(serve);
    loop {
        let accepted = tokio::select! {
            _ = shutdown.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                let metrics = shared.lists.metrics().clone();
                metrics.connections.inc();
                let acceptor = shared.tls.as_ref().map(Tls::acceptor);
                let (serve, shared, shutdown) = (serve.clone(), shared.clone(), shutdown.clone());
                tracker.spawn(async move {
                    // The handshake has the time a request's headers have.
                    let timeout = shared.limits.header_timeout;
                    if let Some(stream) = tls::accept(stream, acceptor, timeout).await {
                        serve(stream, shared, shutdown).await;
                    }
                    metrics.connections.dec();
                });
            }
            Err(error) => {
                // Out of file descriptors and the like: wait a little rather than spin.
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// When the connection last moved a byte, shared between the stream and its watchdog.
#[derive(Clone)]
pub(crate) struct Activity {
    start: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    pub(crate) fn new() -> Self {
        Activity {
            start: Instant::now(),
            last_ms: Arc::new(AtomicU64::new(0)),
        }
    }

    fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    pub(crate) fn idle_for(&self) -> Duration {
        let now = self.start.elapsed().as_millis() as u64;
        Duration::from_millis(now.saturating_sub(self.last_ms.load(Ordering::Relaxed)))
    }
}

/// A stream that records each read and write that moves bytes.
struct Tracked {
    inner: Stream,
    activity: Activity,
}

impl AsyncRead for Tracked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.activity.touch();
        }
        poll
    }
}

impl AsyncWrite for Tracked {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, data);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        poll
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.activity.touch();
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Serves one HTTP/1.1 connection: headers must arrive within the header timeout, a
/// connection that moves no byte for the idle timeout is closed, and on shutdown the request in
/// flight finishes before the connection closes.
async fn serve_http(
    stream: Stream,
    router: axum::Router,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) {
    let activity = Activity::new();
    let io = TokioIo::new(Tracked {
        inner: stream,
        activity: activity.clone(),
    });
    let service = TowerToHyperService::new(router);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(shared.limits.header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(io, service);
    tokio::pin!(conn);
    let idle = shared.limits.idle_timeout;
    let mut watchdog = tokio::time::interval((idle / 4).max(Duration::from_millis(10)));
    let mut draining = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(error) = result {
                    tracing::debug!(%error, "HTTP connection ended with an error");
                }
                return;
            }
            _ = shutdown.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
            _ = watchdog.tick() => {
                if activity.idle_for() >= idle {
                    tracing::debug!("closing an idle HTTP connection");
                    return;
                }
            }
        }
    }
}

/// The addresses a server listens on, as [`run_blocking`] reports them once bound.
#[derive(Clone, Copy, Debug)]
pub struct Bound {
    /// The HTTP address.
    pub http: Option<SocketAddr>,
    /// The Redis-protocol address.
    pub resp: Option<SocketAddr>,
}

/// Runs a server on its own multi-threaded runtime (`threads` workers, 0: one per core) until
/// SIGTERM or SIGINT, reloading on SIGHUP; calls `ready` once the listeners are bound. Returns
/// after the graceful drain.
pub fn run_blocking(
    shared: Arc<Shared>,
    http: Option<&str>,
    resp: Option<&str>,
    threads: usize,
    ready: impl FnOnce(Bound),
) -> Result<()> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if threads > 0 {
        builder.worker_threads(threads);
    }
    let runtime = builder
        .build()
        .map_err(|e| Error::io("starting the server's runtime", e))?;
    runtime.block_on(async {
        let server = Server::bind(shared.clone(), http, resp).await?;
        let shutdown = CancellationToken::new();
        let signals = tokio::spawn(handle_signals(shared.clone(), shutdown.clone()));
        ready(Bound {
            http: server.http_addr(),
            resp: server.resp_addr(),
        });
        server.run(shutdown.clone()).await;
        signals.abort();
        Ok(())
    })
}
