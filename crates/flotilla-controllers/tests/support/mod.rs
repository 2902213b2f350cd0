//! In-process harness: one control-plane API server and member API servers (each with the workload
//! simulator), Karmada's CRDs installed, members registered in Push mode, and the controller manager running
//! against the control plane. Waits are condition polls with deadlines, never fixed sleeps.

#![allow(dead_code, clippy::unwrap_used, clippy::panic)]

use std::sync::Arc;
use std::time::Duration;

use flotilla_api::cluster::v1alpha1::{
    Cluster, ClusterSpec, ClusterSyncMode, LocalSecretReference,
};
use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use flotilla_controllers::manager::{self, ManagerHandle, ManagerOptions};
use flotilla_controllers::runtime::Backoff;
use flotilla_controllers::{Interpreter, Options};
use flotilla_simulator::{Simulator, SimulatorConfig};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{Namespace, Secret};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{ObjectMeta, PostParams};
use kube::{Api, Client};

pub(crate) use flotilla_testing::eventually;

/// A client for a running server.
pub(crate) async fn client_for(server: &RunningServer, name: &str) -> Client {
    flotilla_testing::client_from_yaml(&server.kubeconfig(name), None).await
}

/// One member cluster.
pub(crate) struct MemberEnv {
    /// Its name.
    pub name: String,
    /// Its server.
    pub server: RunningServer,
    /// A client for it.
    pub client: Client,
    simulator: Simulator,
}

/// The whole environment.
pub(crate) struct Env {
    /// The control plane.
    pub control: RunningServer,
    /// A client for the control plane.
    pub client: Client,
    /// The members.
    pub members: Vec<MemberEnv>,
    /// The running controllers.
    pub manager: Option<ManagerHandle>,
    _dirs: Vec<tempfile::TempDir>,
}

/// Options that make controllers react quickly in tests.
pub(crate) fn fast_options() -> Options {
    Options {
        backoff: Backoff {
            base: Duration::from_millis(50),
            max: Duration::from_secs(1),
        },
        discovery_interval: Duration::from_secs(2),
        cluster_status_update_frequency: Duration::from_secs(1),
        ..Options::default()
    }
}

pub(crate) async fn start_server(dirs: &mut Vec<tempfile::TempDir>) -> RunningServer {
    let dir = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new("127.0.0.1:0".parse().unwrap(), dir.path());
    config.nodes = 2;
    dirs.push(dir);
    Server::start(config).await.unwrap()
}

/// The client configuration of `server`'s admin kubeconfig, for tests that build their own client stack.
pub(crate) async fn server_config(server: &RunningServer) -> kube::Config {
    use kube::config::{KubeConfigOptions, Kubeconfig};
    let kubeconfig = Kubeconfig::from_yaml(&server.kubeconfig("test")).unwrap();
    kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap()
}

/// Installs Karmada's CRDs and waits until they are served.
pub(crate) async fn install_crds(client: &Client) {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in flotilla_api::crds::all() {
        api.create(&PostParams::default(), &crd).await.unwrap();
    }
    eventually("Karmada's CRDs to be served", || async {
        let list = client
            .list_api_group_resources("cluster.karmada.io/v1alpha1")
            .await
            .ok()?;
        let works = client
            .list_api_group_resources("work.karmada.io/v1alpha1")
            .await
            .ok()?;
        let policies = client
            .list_api_group_resources("policy.karmada.io/v1alpha1")
            .await
            .ok()?;
        (!list.resources.is_empty()
            && !works.resources.is_empty()
            && !policies.resources.is_empty())
        .then_some(())
    })
    .await;
}

/// Registers a member as `karmadactl join` does: Secret `karmada-cluster/<name>` and a Push Cluster.
pub(crate) async fn register(control: &Client, name: &str, member: &RunningServer) {
    register_with(control, name, member, |_| {}).await;
}

/// As [`register`], with `edit` applied to the Cluster's spec before it is created.
pub(crate) async fn register_with(
    control: &Client,
    name: &str,
    member: &RunningServer,
    edit: impl FnOnce(&mut ClusterSpec),
) {
    let namespaces: Api<Namespace> = Api::all(control.clone());
    let ns = Namespace {
        metadata: ObjectMeta {
            name: Some("karmada-cluster".into()),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    };
    let _ = namespaces.create(&PostParams::default(), &ns).await;
    let secrets: Api<Secret> = Api::namespaced(control.clone(), "karmada-cluster");
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(
            [
                (
                    "token".to_owned(),
                    ByteString(member.admin_token().as_bytes().to_vec()),
                ),
                (
                    "caBundle".to_owned(),
                    ByteString(member.ca_pem().as_bytes().to_vec()),
                ),
            ]
            .into(),
        ),
        ..Secret::default()
    };
    secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    let clusters: Api<Cluster> = Api::all(control.clone());
    let mut spec = ClusterSpec {
        sync_mode: ClusterSyncMode::Push,
        api_endpoint: member.url(),
        secret_ref: Some(LocalSecretReference {
            namespace: "karmada-cluster".into(),
            name: name.into(),
        }),
        ..ClusterSpec::default()
    };
    edit(&mut spec);
    let cluster = Cluster::new(name, spec);
    clusters
        .create(&PostParams::default(), &cluster)
        .await
        .unwrap();
}

impl Env {
    /// A control plane with CRDs, `members` registered members, and the manager with the native interpreter.
    pub(crate) async fn start(members: usize) -> Env {
        Env::start_with(members, fast_options()).await
    }

    /// As [`Env::start`], with explicit controller options.
    pub(crate) async fn start_with(members: usize, options: Options) -> Env {
        Env::start_prepared(members, options, |_| async {}).await
    }

    /// As [`Env::start_with`], running `prepare` with the control plane's client once the CRDs are installed and
    /// the members registered, before the controllers start (objects they must find in their first list).
    pub(crate) async fn start_prepared<F, Fut>(members: usize, options: Options, prepare: F) -> Env
    where
        F: FnOnce(Client) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        let mut dirs = Vec::new();
        let control = start_server(&mut dirs).await;
        let client = client_for(&control, "karmada").await;
        install_crds(&client).await;
        let mut member_envs = Vec::new();
        for i in 1..=members {
            let name = format!("member{i}");
            let server = start_server(&mut dirs).await;
            let member_client = client_for(&server, &name).await;
            let simulator = Simulator::start(
                member_client.clone(),
                SimulatorConfig {
                    delay: Duration::from_millis(50),
                    cluster: name.clone(),
                    ..SimulatorConfig::default()
                },
            );
            register(&client, &name, &server).await;
            member_envs.push(MemberEnv {
                name,
                server,
                client: member_client,
                simulator,
            });
        }
        let interpreter: Arc<dyn Interpreter> = Arc::new(
            flotilla_interpreter::ResourceInterpreter::builder()
                .native()
                .build()
                .unwrap(),
        );
        prepare(client.clone()).await;
        let manager = manager::start(
            client.clone(),
            interpreter,
            ManagerOptions {
                controllers: options,
                ..ManagerOptions::default()
            },
        )
        .await
        .unwrap();
        manager.wait_ready().await;
        Env {
            control,
            client,
            members: member_envs,
            manager: Some(manager),
            _dirs: dirs,
        }
    }

    /// The member named `name`.
    pub(crate) fn member(&self, name: &str) -> &MemberEnv {
        self.members.iter().find(|m| m.name == name).unwrap()
    }

    /// Stops everything.
    pub(crate) async fn stop(mut self) {
        if let Some(manager) = self.manager.take() {
            manager.shutdown().await.unwrap();
        }
        for member in self.members {
            member.simulator.shutdown().await;
            member.server.shutdown().await;
        }
        self.control.shutdown().await;
    }
}
