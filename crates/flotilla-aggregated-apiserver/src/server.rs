//! The HTTPS server: accepts connections, completes the TLS handshake, hands each request the client
//! certificates of its connection, and serves HTTP/2 or HTTP/1.1 until shut down.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use flotilla_webhook::TlsIdentity;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use kube::Client;
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::authn::{FrontProxy, PeerCertificates};
use crate::authz::Authorizer;
use crate::cache::Members;
use crate::proxy::{Clients, Connections, Proxy};
use crate::router::{self, Shared};
use crate::tls;

/// How long a client may take to finish the TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `cluster.karmada.io/v1alpha1` over HTTPS on `listener` with the serving certificate `identity`,
/// reaching the control plane through `client`, until `shutdown` is cancelled.
///
/// `client`'s identity must be allowed to impersonate users, groups, uids and extras, create
/// SubjectAccessReviews, and list and watch Clusters, Secrets and the ConfigMap
/// `kube-system/extension-apiserver-authentication` (the controller manager's identity is).
///
/// # Guarantees
/// Every request but `/healthz`, `/livez`, `/readyz` and `/version` is authenticated as coming from the
/// front proxy (see [`crate`]); when `shutdown` is cancelled the server stops accepting, ends every open
/// connection (watches and upgraded connections included) and its watches of the control plane, and returns.
///
/// # Errors
/// [`Error::Identity`] or [`Error::Tls`] when the certificate is unusable, [`Error::LocalAddr`] when the
/// listener is not bound. Failures of single connections are logged, never returned.
pub async fn serve(
    listener: TcpListener,
    identity: &TlsIdentity,
    client: Client,
    shutdown: CancellationToken,
) -> Result<(), Error> {
    let acceptor = TlsAcceptor::from(tls::server_config(identity)?);
    let addr = listener.local_addr().map_err(Error::LocalAddr)?;
    let background = shutdown.child_token();
    let front_proxy = FrontProxy::watch(client.clone(), background.clone());
    let members = Arc::new(Members::start(client.clone(), background.clone()));
    let shared = Arc::new(Shared {
        client: client.clone(),
        front_proxy: front_proxy.clone(),
        members: members.clone(),
        proxy: Proxy {
            control_plane: Clients {
                requests: client.clone(),
                upgrades: client.clone(),
            },
            front_proxy,
            authorizer: Authorizer::new(client),
            members,
            connections: Connections::default(),
            shutdown: background.clone(),
        },
    });
    tracing::info!(%addr, "karmada-aggregated-apiserver serving cluster.karmada.io/v1alpha1");
    // Dropping the set when the loop ends aborts every open connection.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            () = shutdown.cancelled() => break,
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, peer)) => {
                    connections.spawn(connection(acceptor.clone(), stream, peer, shared.clone()));
                }
                Err(error) => {
                    // Out of file descriptors and the like: back off instead of spinning.
                    tracing::warn!(%error, "failed to accept a connection");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
        }
    }
    background.cancel();
    connections.shutdown().await;
    tracing::info!(%addr, "karmada-aggregated-apiserver stopped");
    Ok(())
}

async fn connection(
    acceptor: TlsAcceptor,
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
) {
    let tls = match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => tls,
        Ok(Err(error)) => {
            tracing::debug!(%peer, %error, "TLS handshake failed");
            return;
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            return;
        }
    };
    let certificates = PeerCertificates(Arc::new(
        tls.get_ref()
            .1
            .peer_certificates()
            .map(|chain| chain.iter().map(|c| c.clone().into_owned()).collect())
            .unwrap_or_default(),
    ));
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(certificates.clone());
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(router::handle(shared, request.map(Body::new)).await) }
    });
    // With upgrades: a proxied exec or port-forward takes the connection over once the member switched.
    if let Err(error) = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
        .serve_connection_with_upgrades(TokioIo::new(tls), service)
        .await
    {
        tracing::debug!(%peer, %error, "connection ended with an error");
    }
}
