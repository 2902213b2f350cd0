//! How long a client may take at each step, and how many connections a server holds open.

use std::time::Duration;

/// The bounds one server applies to its clients.
///
/// The defaults follow kube-apiserver's `http.Server` where it sets one (`ReadHeaderTimeout` 32 s, `IdleTimeout`
/// 90 s) and Go's `net/http` TLS handshake bound of 10 s otherwise.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a client may take to complete the TLS handshake after its connection is accepted; for a
    /// plain-HTTP server, how long it may take to start its first request.
    pub handshake_timeout: Duration,
    /// How long a client may take to send the headers of an HTTP/1 request, counted from when the server waits
    /// for them (hyper's `header_read_timeout`, which also closes an HTTP/1 keep-alive connection left idle that
    /// long).
    pub header_read_timeout: Duration,
    /// How long a connection may stay open with no request in flight (an HTTP/2 connection the client keeps
    /// but does not use, one whose protocol never became clear) before the server closes it gracefully.
    pub idle_timeout: Duration,
    /// How long reading one request's body may take, counted from the first read: a slow or silent sender fails
    /// the read with [`crate::BodyError::TimedOut`] rather than holding the request forever.
    pub body_timeout: Duration,
    /// How often an HTTP/2 connection is pinged to find a peer that went away (`None`: never); a ping not
    /// answered within the same interval closes the connection.
    pub http2_keepalive: Option<Duration>,
    /// The most connections open at once (TLS handshakes included); at the bound the server stops accepting.
    pub max_connections: usize,
    /// How long requests in flight may take to finish once shutdown begins, before their connections close.
    pub shutdown_grace: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            handshake_timeout: Duration::from_secs(10),
            header_read_timeout: Duration::from_secs(32),
            idle_timeout: Duration::from_secs(90),
            body_timeout: Duration::from_secs(60),
            http2_keepalive: Some(Duration::from_secs(30)),
            // Below common open-file limits with room left for the process's own files and clients.
            max_connections: 4096,
            shutdown_grace: Duration::from_secs(5),
        }
    }
}
