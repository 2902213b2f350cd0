//! The accept loop: a bounded number of connections, a growing back-off when accepting fails, and shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::connection::{self, Serving};
use crate::{BoxError, Options, Peer, RequestBody};

/// The first pause after a failed accept, doubled on each further failure up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(5);
/// The longest pause between attempts while accepting fails.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// What a server speaks on its connections.
#[derive(Clone)]
pub enum Transport {
    /// Plain HTTP (metrics and health listeners).
    Plain,
    /// HTTPS with this configuration (its certificate resolver may be [`crate::certificate::Reloading`]).
    Tls(Arc<rustls::ServerConfig>),
}

/// Counters of one server's accept loop, for tests and metrics.
#[derive(Debug, Default)]
pub struct Stats {
    accepted: AtomicU64,
    failed_accepts: AtomicU64,
}

impl Stats {
    /// Connections accepted so far.
    pub fn accepted(&self) -> u64 {
        self.accepted.load(Ordering::Relaxed)
    }

    /// Calls to `accept` that failed so far (out of file descriptors, say).
    pub fn failed_accepts(&self) -> u64 {
        self.failed_accepts.load(Ordering::Relaxed)
    }
}

/// One HTTP server: a listener, what it speaks, and the service each connection gets.
pub struct Server<M> {
    listener: TcpListener,
    transport: Transport,
    options: Options,
    make_service: M,
    stats: Arc<Stats>,
}

impl<M, S, B> Server<M>
where
    M: Fn(&Peer) -> S + Send + Sync + 'static,
    S: hyper::service::Service<Request<RequestBody>, Response = Response<B>> + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    /// A server on `listener` speaking `transport`, serving each connection with the service `make_service`
    /// makes for its peer, with the default [`Options`].
    pub fn new(listener: TcpListener, transport: Transport, make_service: M) -> Self {
        Self {
            listener,
            transport,
            options: Options::default(),
            make_service,
            stats: Arc::default(),
        }
    }

    /// The same server with the bounds `options`.
    pub fn options(mut self, options: Options) -> Self {
        self.options = options;
        self
    }

    /// The server's counters, which keep counting while it runs.
    pub fn stats(&self) -> Arc<Stats> {
        self.stats.clone()
    }

    /// The address the server listens on.
    ///
    /// # Errors
    /// When the listener has none (it is not bound).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves until `shutdown` is cancelled.
    ///
    /// # Guarantees
    /// At most [`Options::max_connections`] connections are open at once. When `shutdown` is cancelled the
    /// server stops accepting, every connection stops taking requests, those in flight get
    /// [`Options::shutdown_grace`] to finish, and the future returns once every connection is closed. Dropping the
    /// future closes every connection at once.
    pub async fn run(self, shutdown: CancellationToken) {
        let Server {
            listener,
            transport,
            options,
            make_service,
            stats,
        } = self;
        let serving = Arc::new(Serving {
            http: connection::http(&options),
            tls: match transport {
                Transport::Plain => None,
                Transport::Tls(config) => Some(tokio_rustls::TlsAcceptor::from(config)),
            },
            shutdown: shutdown.clone(),
            options,
        });
        let make_service = Arc::new(make_service);
        let slots = Arc::new(Semaphore::new(serving.options.max_connections));
        let mut backoff = Backoff::default();
        // Dropping the set (the future dropped) aborts every connection.
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
                (stream, addr, slot) = accept(&listener, &slots, &mut backoff, &stats) => {
                    let (serving, make_service) = (serving.clone(), make_service.clone());
                    connections.spawn(async move {
                        serving.connection(stream, addr, &*make_service).await;
                        drop(slot);
                    });
                }
            }
        }
        drop(listener);
        // Each connection ends itself within the grace period; the margin covers a slow last write.
        let grace = serving.options.shutdown_grace + Duration::from_secs(1);
        let drained = tokio::time::timeout(grace, async {
            while connections.join_next().await.is_some() {}
        });
        if drained.await.is_err() {
            connections.shutdown().await;
        }
    }
}

/// Waits for a free connection slot, then accepts one connection, pausing after failures.
///
/// Cancel-safe: dropped while waiting, it has taken nothing (the back-off keeps its streak).
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
    backoff: &mut Backoff,
    stats: &Stats,
) -> (TcpStream, SocketAddr, OwnedSemaphorePermit) {
    // At the bound: no accept until a connection closes; new clients wait in the kernel's backlog.
    let Ok(slot) = slots.clone().acquire_owned().await else {
        // The semaphore is never closed.
        return std::future::pending().await;
    };
    loop {
        match listener.accept().await {
            Ok((stream, addr)) => {
                backoff.succeeded();
                stats.accepted.fetch_add(1, Ordering::Relaxed);
                return (stream, addr, slot);
            }
            Err(error) => {
                stats.failed_accepts.fetch_add(1, Ordering::Relaxed);
                // The listener stays readable while the error lasts (out of descriptors: the connection waits
                // in the backlog), so retrying at once would spin.
                backoff.failed(&error).await;
            }
        }
    }
}

/// The pause after failed accepts: 5 ms doubling to 1 s, logged once when a streak starts and once when it ends.
/// Public for listeners that are not HTTP (a Unix control socket) and accept in a loop of their own.
#[derive(Debug, Default)]
pub struct Backoff {
    delay: Option<Duration>,
    failures: u64,
}

impl Backoff {
    /// Pauses after a failed accept: the first pause of a streak, or twice the last one, up to a second.
    pub async fn failed(&mut self, error: &std::io::Error) {
        let delay = match self.delay {
            None => {
                tracing::warn!(%error, "failed to accept a connection; retrying with a growing pause until it works");
                FIRST_BACKOFF
            }
            Some(delay) => (delay * 2).min(MAX_BACKOFF),
        };
        self.delay = Some(delay);
        self.failures += 1;
        tokio::time::sleep(delay).await;
    }

    /// Ends a streak of failures.
    pub fn succeeded(&mut self) {
        if self.delay.take().is_some() {
            tracing::info!(failures = self.failures, "accepting connections again");
        }
        self.failures = 0;
    }
}
