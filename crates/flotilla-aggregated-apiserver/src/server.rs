//! The HTTPS server, on the binary's one serving loop (`flotilla_serving`): hands each request the client
//! certificates of its connection, and serves HTTP/2 or HTTP/1.1 until shut down.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use flotilla_serving::{Peer, RequestBody, Transport};
use flotilla_webhook::TlsIdentity;
use kube::Client;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::authn::{FrontProxy, PeerCertificates};
use crate::authz::Authorizer;
use crate::cache::Members;
use crate::proxy::{Clients, Connections, Proxy};
use crate::router::{self, Shared};
use crate::tls;

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
    let tls = tls::server_config(identity)?;
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
    let server = flotilla_serving::Server::new(
        listener,
        Transport::Tls(tls),
        move |peer: &Peer| {
            let certificates = PeerCertificates(peer.certificates.clone());
            let shared = shared.clone();
            hyper::service::service_fn(move |mut request: hyper::Request<RequestBody>| {
                request.extensions_mut().insert(certificates.clone());
                let shared = shared.clone();
                async move { Ok::<_, Infallible>(router::handle(shared, request.map(Body::new)).await) }
            })
        },
    );
    server.run(shutdown).await;
    background.cancel();
    tracing::info!(%addr, "karmada-aggregated-apiserver stopped");
    Ok(())
}
