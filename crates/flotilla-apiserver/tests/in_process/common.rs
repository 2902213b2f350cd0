//! Shared fixtures: starting a server and a kube-rs client for it, waiting on conditions.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use serde_json::{Value, json};

use flotilla_apiserver::{RunningServer, Server, ServerConfig};

/// Starts a server on a free port with two seeded nodes.
pub(crate) async fn start(dir: &Path) -> (RunningServer, Client) {
    start_on(dir, "127.0.0.1:0".parse().expect("addr")).await
}

/// Starts a server on `addr` (a fixed port lets a client outlive a restart).
pub(crate) async fn start_on(dir: &Path, addr: SocketAddr) -> (RunningServer, Client) {
    start_with(dir, addr, |_| {}).await
}

/// Starts a server on `addr` with two seeded nodes and `adjust` applied to its configuration.
pub(crate) async fn start_with(
    dir: &Path,
    addr: SocketAddr,
    adjust: impl FnOnce(&mut ServerConfig),
) -> (RunningServer, Client) {
    let mut cfg = ServerConfig::new(addr, dir);
    cfg.nodes = 2;
    adjust(&mut cfg);
    let server = Server::start(cfg).await.expect("server starts");
    let client = client_for(&server).await;
    (server, client)
}

/// A kube-rs client using the server's kubeconfig.
pub(crate) async fn client_for(server: &RunningServer) -> Client {
    flotilla_testing::client_from_yaml(&server.kubeconfig("flotilla"), None).await
}

/// Polls `f` until it holds, failing after 15 s.
pub(crate) async fn eventually<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    flotilla_testing::eventually_within(Duration::from_secs(15), what, || {
        let check = f();
        async move { check.await.then_some(()) }
    })
    .await;
}

/// A ConfigMap named `name` with extra metadata merged in.
pub(crate) fn mk_cm(name: &str, metadata: Value) -> ConfigMap {
    let mut m = json!({"name": name});
    if let (Some(m), Some(extra)) = (m.as_object_mut(), metadata.as_object()) {
        m.extend(extra.clone());
    }
    serde_json::from_value(json!({"metadata": m, "data": {"k": "v"}})).expect("configmap")
}

/// Lets user `user` do everything to `resources` (of any group) in namespace `ns`: a Role and its RoleBinding,
/// written by the admin.
pub(crate) async fn grant(client: &Client, ns: &str, user: &str, resources: &[&str]) {
    let rules = json!([{"apiGroups": ["*"], "resources": resources, "verbs": ["*"]}]);
    grant_rules(client, ns, &format!("{user}-access"), user, rules).await;
}

/// Lets user `user` do `verbs` to the one object `name` of core resource `resource` in namespace `ns`: a Role
/// and its RoleBinding, written by the admin.
pub(crate) async fn grant_named(
    client: &Client,
    ns: &str,
    user: &str,
    resource: &str,
    name: &str,
    verbs: &[&str],
) {
    let rules = json!([{"apiGroups": [""], "resources": [resource], "resourceNames": [name], "verbs": verbs}]);
    grant_rules(
        client,
        ns,
        &format!("{resource}-{name}-access"),
        user,
        rules,
    )
    .await;
}

/// Role `name` in `ns` with `rules`, bound to user `user`, written by the admin.
async fn grant_rules(client: &Client, ns: &str, name: &str, user: &str, rules: serde_json::Value) {
    use k8s_openapi::api::rbac::v1::{Role, RoleBinding};
    use kube::api::{Api, PostParams};
    let role: Role =
        serde_json::from_value(json!({"metadata": {"name": name}, "rules": rules})).expect("role");
    Api::<Role>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &role)
        .await
        .expect("role created");
    let binding: RoleBinding = serde_json::from_value(json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}))
    .expect("binding");
    Api::<RoleBinding>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding created");
}
