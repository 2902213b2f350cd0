//! One accepted connection: the TLS handshake under its timeout, then HTTP/1.1 or HTTP/2 (with upgrades) until
//! the client leaves, the connection idles out, or the server shuts down.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use rustls::pki_types::CertificateDer;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::{BoxError, Options, RequestBody};

/// Who is at the other end of a connection, for the service that serves it.
#[derive(Debug, Clone)]
pub struct Peer {
    /// The client's address.
    pub addr: SocketAddr,
    /// The protocol the TLS handshake agreed on (ALPN), if any.
    pub alpn: Option<Vec<u8>>,
    /// The certificate chain the client presented in the TLS handshake, leaf first (empty when none).
    pub certificates: Arc<Vec<CertificateDer<'static>>>,
}

/// The HTTP side every connection of one server shares.
pub(crate) type Http = auto::Builder<TokioExecutor>;

/// hyper's builder with the bounds of `options`.
pub(crate) fn http(options: &Options) -> Http {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(options.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(options.http2_keepalive);
    if let Some(interval) = options.http2_keepalive {
        builder.http2().keep_alive_timeout(interval);
    }
    builder
}

/// Counts a connection's requests in flight, so that the connection knows when it is idle.
#[derive(Clone)]
struct Activity(Arc<watch::Sender<usize>>);

/// One request in flight; dropped when its response body is done (or dropped).
struct InFlight(Arc<watch::Sender<usize>>);

impl Activity {
    fn begin(&self) -> InFlight {
        self.0.send_modify(|n| *n += 1);
        InFlight(self.0.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// Resolves once no request has been in flight for `timeout` (`first` for the first wait).
async fn idle(mut requests: watch::Receiver<usize>, first: Duration, timeout: Duration) {
    let mut wait = first;
    loop {
        if *requests.borrow_and_update() == 0 {
            tokio::select! {
                () = tokio::time::sleep(wait) => return,
                changed = requests.changed() => if changed.is_err() { return },
            }
        } else if requests.changed().await.is_err() {
            return;
        }
        wait = timeout;
    }
}

/// The caller's service behind the request body bound and the activity count.
struct Service<S> {
    inner: S,
    activity: Activity,
    body_timeout: Duration,
}

/// The response body every connection writes: the service's, holding its request's place in the count.
type ResponseBody = UnsyncBoxBody<Bytes, BoxError>;

impl<S, B> hyper::service::Service<Request<Incoming>> for Service<S>
where
    S: hyper::service::Service<Request<RequestBody>, Response = Response<B>>,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    type Response = Response<ResponseBody>;
    type Error = BoxError;
    type Future =
        Pin<Box<dyn Future<Output = Result<Response<ResponseBody>, BoxError>> + Send + 'static>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let in_flight = self.activity.begin();
        let timeout = self.body_timeout;
        let response = self
            .inner
            .call(request.map(|body| RequestBody::new(body, timeout)));
        Box::pin(async move {
            let response = response.await.map_err(Into::into)?;
            Ok(response.map(|body| {
                body.map_frame(move |frame| {
                    // The closure owns the request's place in the count until the body is dropped.
                    let _ = &in_flight;
                    frame
                })
                .map_err(Into::into)
                .boxed_unsync()
            }))
        })
    }
}

/// How one server serves a connection: its HTTP settings, bounds and shutdown.
pub(crate) struct Serving {
    pub http: Http,
    pub tls: Option<tokio_rustls::TlsAcceptor>,
    pub options: Options,
    pub shutdown: CancellationToken,
}

impl Serving {
    /// Serves the connection `stream` from `addr` with the service `make_service` makes for it.
    pub(crate) async fn connection<M, S, B>(
        &self,
        stream: TcpStream,
        addr: SocketAddr,
        make_service: &M,
    ) where
        M: Fn(&Peer) -> S,
        S: hyper::service::Service<Request<RequestBody>, Response = Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        // Requests are small and interactive; Nagle's delay would only add latency.
        let _ = stream.set_nodelay(true);
        match &self.tls {
            None => {
                let peer = Peer {
                    addr,
                    alpn: None,
                    certificates: Arc::default(),
                };
                // No handshake: the first request must begin within the handshake timeout instead.
                let first = self.options.handshake_timeout;
                self.http(stream, &peer, first, make_service).await;
            }
            Some(acceptor) => {
                let handshake = acceptor.accept(stream);
                let tls = tokio::select! {
                    () = self.shutdown.cancelled() => return,
                    done = tokio::time::timeout(self.options.handshake_timeout, handshake) => match done {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(error)) => {
                            tracing::debug!(peer = %addr, %error, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(peer = %addr, "TLS handshake timed out");
                            return;
                        }
                    },
                };
                let session = tls.get_ref().1;
                let peer = Peer {
                    addr,
                    alpn: session.alpn_protocol().map(<[u8]>::to_vec),
                    certificates: Arc::new(
                        session
                            .peer_certificates()
                            .map(|chain| chain.iter().map(|c| c.clone().into_owned()).collect())
                            .unwrap_or_default(),
                    ),
                };
                let first = self.options.idle_timeout;
                self.http(tls, &peer, first, make_service).await;
            }
        }
    }

    async fn http<I, M, S, B>(&self, io: I, peer: &Peer, first: Duration, make_service: &M)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
        M: Fn(&Peer) -> S,
        S: hyper::service::Service<Request<RequestBody>, Response = Response<B>> + Send + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let (count, requests) = watch::channel(0);
        let service = Service {
            inner: make_service(peer),
            activity: Activity(Arc::new(count)),
            body_timeout: self.options.body_timeout,
        };
        // With upgrades: exec, attach and port-forward switch protocols and take the connection over.
        let connection = self
            .http
            .serve_connection_with_upgrades(TokioIo::new(io), service);
        tokio::pin!(connection);
        let idle = idle(requests, first, self.options.idle_timeout);
        tokio::pin!(idle);
        let mut closing: Option<Pin<Box<tokio::time::Sleep>>> = None;
        loop {
            tokio::select! {
                done = connection.as_mut() => {
                    if let Err(error) = done {
                        tracing::debug!(peer = %peer.addr, %error, "connection ended with an error");
                    }
                    return;
                }
                () = &mut idle, if closing.is_none() => {
                    connection.as_mut().graceful_shutdown();
                    closing = Some(Box::pin(tokio::time::sleep(self.options.shutdown_grace)));
                }
                () = self.shutdown.cancelled(), if closing.is_none() => {
                    connection.as_mut().graceful_shutdown();
                    closing = Some(Box::pin(tokio::time::sleep(self.options.shutdown_grace)));
                }
                () = async { if let Some(grace) = closing.as_mut() { grace.await } }, if closing.is_some() => {
                    tracing::debug!(peer = %peer.addr, "connection closed with requests in flight");
                    return;
                }
            }
        }
    }
}
