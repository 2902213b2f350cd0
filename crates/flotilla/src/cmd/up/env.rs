//! The embedded environment `flotilla up` runs: a control-plane API server, N member API servers with seeded
//! Nodes and a workload simulator each, optionally the example interpreter webhook, and the controllers with
//! karmada-webhook's validations (served on a free port and registered; docs/ADMISSION.md). member3 is a Pull
//! member served by an in-process agent ([`pull_member`]), as in Karmada's local-up.
//!
//! It is a library so that tests and benchmarks can run the same environment in-process on free ports.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use flotilla_simulator::SimulatorConfig;
use flotilla_controllers::enabled_controllers::ControllerSelection;
use flotilla_controllers::features::FeatureGates;
use flotilla_client::RateLimit;
use flotilla_join::{Credentials, Registration};
use flotilla_controllers::manager::ManagerOptions;
use flotilla_webhook::example::{ExampleConfig, RunningWebhook};

use super::control::{self, ControlEndpoint};
use super::member::{self, MemberServer};
use super::controllers::{CONTROLLERS_TIMEOUT, InProcessControllers};
use super::pull_member::{self, InProcessAgent};
use super::{install, kubeconfigs};
use crate::cmd::aggregated_apiserver::{self, RunningAggregated};
use crate::cmd::apiserver::InflightArgs;
use crate::cmd::karmada_webhook;
use flotilla_aggregated_apiserver::names::SERVICE_HOST;
use flotilla_aggregated_apiserver::register::Endpoint as AggregatedEndpoint;
use flotilla_controllers::admission;
use flotilla_controllers::admission::configuration::Endpoint;

/// How often the cluster status controller collects each member's status. Karmada's 10 s would make a CRD
/// propagated to the in-process members unschedulable for up to 10 s (API enablements are collected with the
/// status); collecting from an in-process member every second costs next to nothing.
const CLUSTER_STATUS_INTERVAL: Duration = Duration::from_secs(1);

/// How to run the environment.
#[derive(Clone, Debug)]
pub struct UpConfig {
    /// Number of members (`member1` .. `memberN`).
    pub members: usize,
    /// Where everything is stored; a second start on the same directory resumes.
    pub data_dir: PathBuf,
    /// Control plane on 127.0.0.1:`port`, member i on `port + i`; 0 gives every server a free port.
    pub port: u16,
    /// Run a workload simulator per member.
    pub simulator: bool,
    /// How long the simulators take to report a workload's new status.
    pub simulator_delay: Duration,
    /// Whether the simulators create ReplicaSets, Pods and Jobs as the real controllers do.
    pub simulator_children: bool,
    /// Serve the example Workload interpreter webhook and register it.
    pub webhook_example: bool,
    /// Nodes seeded into each member.
    pub nodes_per_member: usize,
    /// Run the controllers (off only for tests of the environment itself).
    pub controllers: bool,
    /// Let the controllers publish Kubernetes Events (off only to measure what they cost).
    pub events: bool,
    /// Karmada's feature gates the controllers run with.
    pub feature_gates: FeatureGates,
    /// Client-side rate limit of the controllers towards the control plane (`--kube-api-qps`/`-burst`).
    pub kube_api: RateLimit,
    /// Client-side rate limit of the controllers towards each member (`--cluster-api-qps`/`-burst`).
    pub cluster_api: RateLimit,
    /// Where the controllers serve the status page and `/metrics`; `None`: 127.0.0.1 on `port - 1` (any free
    /// port when `port` is 0 or 1).
    pub status_addr: Option<SocketAddr>,
    /// How long a member must look unhealthy before its Ready turns False, and healthy before it turns True again
    /// (`--cluster-failure-threshold`, `--cluster-success-threshold`; Karmada: 30 s each).
    pub cluster_failure_threshold: Duration,
    /// See [`UpConfig::cluster_failure_threshold`].
    pub cluster_success_threshold: Duration,
    /// `--max-requests-inflight` and `--max-mutating-requests-inflight` of every embedded API server.
    pub inflight: InflightArgs,
}

impl UpConfig {
    /// The defaults of `flotilla up` for a data dir.
    pub fn new(data_dir: impl Into<PathBuf>) -> Self {
        UpConfig {
            members: 3,
            data_dir: data_dir.into(),
            port: 7443,
            simulator: true,
            simulator_delay: flotilla_simulator::DEFAULT_DELAY,
            simulator_children: true,
            webhook_example: false,
            nodes_per_member: 3,
            controllers: true,
            events: true,
            feature_gates: FeatureGates::local_up(),
            kube_api: RateLimit::default(),
            cluster_api: RateLimit::default(),
            status_addr: None,
            cluster_failure_threshold: Duration::from_secs(30),
            cluster_success_threshold: Duration::from_secs(30),
            inflight: InflightArgs::default(),
        }
    }
}

/// One member cluster of the environment.
pub struct Member {
    /// Its name (`memberN`), also its Cluster's and kubeconfig context's name.
    pub name: String,
    /// Its API server (and simulator), which `flotilla member stop|start` stops and starts.
    pub server: Arc<MemberServer>,
    /// A client of its API server.
    pub client: kube::Client,
}

/// The running environment.
pub struct Environment {
    /// The control-plane ("karmada-apiserver") server.
    pub control: RunningServer,
    /// A client of the control plane.
    pub control_client: kube::Client,
    /// The members, in order.
    pub members: Vec<Member>,
    /// The example webhook, when started.
    pub webhook: Option<RunningWebhook>,
    /// `DIR/karmada.config`.
    pub karmada_config: PathBuf,
    /// `DIR/members.config`.
    pub members_config: PathBuf,
    /// The status page's URL (also written to `DIR/status.url` for `flotilla status`), when controllers run.
    pub status_url: Option<String>,
    /// The controllers, which can be restarted while the API servers run.
    pub controllers: Option<InProcessControllers>,
    /// karmada-webhook's validations, served and registered with the controllers.
    admission: Option<flotilla_webhook::RunningServer>,
    /// Karmada's aggregated API server (`cluster.karmada.io` and `clusters/{name}/proxy`), registered with the
    /// control plane's aggregator.
    aggregated: RunningAggregated,
    /// `DIR/control.sock`, for `flotilla member stop|start`.
    endpoint: Option<ControlEndpoint>,
    /// The agent serving the Pull member (member3), when there is one and controllers run.
    pub agent: Option<InProcessAgent>,
}

/// The file in the data dir that names the status page's URL while `flotilla up` runs.
pub const STATUS_URL_FILE: &str = "status.url";

/// Where the status page is served: as configured, else just below the control plane's port.
fn status_addr(config: &UpConfig) -> SocketAddr {
    config.status_addr.unwrap_or_else(|| {
        let port = config.port.saturating_sub(1);
        SocketAddr::from((Ipv4Addr::LOCALHOST, port))
    })
}

fn listen(port: u16, offset: usize) -> anyhow::Result<SocketAddr> {
    if port == 0 {
        return Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)));
    }
    let port = u16::try_from(usize::from(port) + offset)
        .ok()
        .filter(|p| *p != 0)
        .with_context(|| format!("port {port} + {offset} is not a valid port"))?;
    Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
}

async fn start_server(config: ServerConfig, what: &str) -> anyhow::Result<RunningServer> {
    let addr = config.listen;
    let dir = config.data_dir.clone();
    Server::start(config).await.with_context(|| {
        format!(
            "failed to start the {what} API server on {addr} with data dir {}",
            dir.display()
        )
    })
}

impl Environment {
    /// Starts everything and returns once members are registered, kubeconfigs written and (with the simulator)
    /// simulators running. `progress` receives one short line per step.
    ///
    /// # Errors
    /// When a server cannot start (port in use, data dir locked by another `flotilla up`), the CRDs cannot be
    /// installed, or a member cannot be registered.
    pub async fn start(config: &UpConfig, progress: &dyn Fn(&str)) -> anyhow::Result<Environment> {
        if config.members == 0 {
            bail!("--members must be at least 1");
        }
        let dir = &config.data_dir;
        std::fs::create_dir_all(dir)
            .with_context(|| format!("failed to create the data dir {}", dir.display()))?;
        let mut control_config = ServerConfig::new(listen(config.port, 0)?, dir.join("karmada"));
        config.inflight.apply(&mut control_config);
        let control = start_server(control_config, "control-plane").await?;
        progress(&format!("control plane serving on {}", control.url()));
        let control_kubeconfig = control.kubeconfig(kubeconfigs::KARMADA_CONTEXT);
        let control_client = kubeconfigs::client(&control_kubeconfig, config.kube_api).await?;

        let mut members = Vec::with_capacity(config.members);
        for i in 1..=config.members {
            let name = format!("member{i}");
            let mut server_config = ServerConfig::new(listen(config.port, i)?, dir.join(&name));
            server_config.nodes = config.nodes_per_member;
            config.inflight.apply(&mut server_config);
            let server = Arc::new(MemberServer::start(&name, server_config).await?);
            let client = kubeconfigs::client(&server.kubeconfig(&name), config.cluster_api).await?;
            progress(&format!("{name} serving on {}", server.url()));
            members.push(Member {
                name,
                server,
                client,
            });
        }

        let count = install::crds(&control_client).await?;
        progress(&format!("installed {count} CRDs"));
        // Before anything reads or writes a Cluster: a data dir from an earlier run still registers the
        // aggregated API at that run's port.
        let aggregated = serve_aggregated(&control_client).await?;
        progress(&format!(
            "cluster.karmada.io served by the aggregated API server at https://{}",
            aggregated.local_addr()
        ));
        // Before anything writes a kind karmada-webhook admits: a data dir from an earlier run still registers
        // its webhooks at that run's port, and they fail closed.
        let admission = if config.controllers {
            let server = serve_admission(&control_client, &config.feature_gates).await?;
            progress(&format!(
                "karmada-webhook admission at https://{}",
                server.local_addr()
            ));
            Some(server)
        } else {
            None
        };
        install::cluster_proxy_admin(&control_client).await?;
        install::bootstrap_token_configuration(&control_client, &control.url(), control.ca_pem())
            .await?;
        let mut push = Vec::new();
        let mut agent_bootstrap = None;
        for (i, member) in members.iter().enumerate() {
            if pull_member::is_pull(i + 1) {
                let kubeconfig = member.server.kubeconfig(&member.name);
                agent_bootstrap = Some(
                    pull_member::register(
                        &control_client,
                        &control_kubeconfig,
                        &member.name,
                        &kubeconfig,
                    )
                    .await?,
                );
                progress(&format!(
                    "registered {} as a Pull cluster (served by the in-process agent)",
                    member.name
                ));
            } else {
                register(&control_client, member).await?;
                push.push(member.name.as_str());
            }
        }
        progress(&format!("registered {} as Push clusters", push.join(", ")));

        let webhook = if config.webhook_example {
            let webhook = flotilla_webhook::example::serve(ExampleConfig::default())
                .await
                .context("failed to start the example interpreter webhook")?;
            install::webhook_configuration(&control_client, &webhook.webhook_configuration())
                .await?;
            progress(&format!("example interpreter webhook at {}", webhook.url()));
            Some(webhook)
        } else {
            // A registration left by an earlier run would send every Workload operation to a dead port.
            if install::remove_webhook_configuration(
                &control_client,
                flotilla_webhook::example::CONFIGURATION_NAME,
            )
            .await?
            {
                progress("removed the example webhook's registration, as it is not served");
            }
            None
        };

        if config.simulator {
            for member in &members {
                let simulator = SimulatorConfig {
                    delay: config.simulator_delay,
                    children: config.simulator_children,
                    cluster: member.name.clone(),
                    // Each member's simulated kubelet answers its pods' logs and exec.
                    kubelet: true,
                };
                member
                    .server
                    .start_simulator(member.client.clone(), simulator)
                    .await;
            }
            progress("workload simulators running");
        }

        let controllers = if config.controllers {
            let mut options = ManagerOptions {
                disable_events: !config.events,
                admin_addr: Some(status_addr(config)),
                ..ManagerOptions::default()
            };
            options.controllers.cluster_status_update_frequency = CLUSTER_STATUS_INTERVAL;
            options.controllers.feature_gates = config.feature_gates.clone();
            options.controllers.cluster_api = config.cluster_api;
            options.controllers.cluster_failure_threshold = config.cluster_failure_threshold;
            options.controllers.cluster_success_threshold = config.cluster_success_threshold;
            // As Karmada's own deployment runs them (`--controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer`).
            options.controllers.controllers = ControllerSelection::karmada_deployment();
            // As Karmada's deployment also does (`--enable-no-execute-taint-eviction=true`).
            options.controllers.enable_no_execute_taint_eviction = true;
            let controllers = InProcessControllers::start(control_client.clone(), options).await?;
            progress("controllers running");
            Some(controllers)
        } else {
            None
        };
        let agent = match (members.get(pull_member::PULL_MEMBER - 1), agent_bootstrap) {
            (Some(member), Some(bootstrap)) if config.controllers => {
                let settings = pull_member::settings(config, &member.name, CLUSTER_STATUS_INTERVAL);
                let agent = InProcessAgent::start(
                    bootstrap,
                    member.server.kubeconfig(&member.name),
                    settings,
                )
                .await?;
                progress(&format!("agent of {} running", member.name));
                Some(agent)
            }
            _ => None,
        };
        if config.controllers {
            install::clusters_ready(&control_client, members.len(), CONTROLLERS_TIMEOUT).await?;
            progress("every member cluster is Ready");
        }

        let karmada_config = dir.join("karmada.config");
        let members_config = dir.join("members.config");
        write(&karmada_config, &control_kubeconfig)?;
        let member_configs: Vec<String> = members
            .iter()
            .map(|m| m.server.kubeconfig(&m.name))
            .collect();
        write(&members_config, &kubeconfigs::merge(&member_configs)?)?;
        let status_url = controllers
            .as_ref()
            .and_then(InProcessControllers::admin_addr)
            .map(|addr| format!("http://{addr}/"));
        if let Some(url) = &status_url {
            let file = dir.join(STATUS_URL_FILE);
            std::fs::write(&file, format!("{url}\n"))
                .with_context(|| format!("failed to write {}", file.display()))?;
            progress(&format!("status page at {url}"));
        }
        let servers = members.iter().map(|m| m.server.clone()).collect();
        let endpoint = match control::serve(dir, servers) {
            Ok(endpoint) => Some(endpoint),
            Err(e) => {
                progress(&format!("`flotilla member stop|start` unavailable: {e:#}"));
                None
            }
        };
        Ok(Environment {
            control,
            control_client,
            members,
            webhook,
            karmada_config,
            members_config,
            status_url,
            controllers,
            admission,
            aggregated,
            endpoint,
            agent,
        })
    }

    /// Takes member `name` away: its API server stops (connections refused) and its simulator with it; nothing
    /// is deleted. What `flotilla member stop` asks a running `up` to do.
    ///
    /// # Errors
    /// When there is no such member or it is already stopped.
    pub async fn stop_member(&self, name: &str) -> anyhow::Result<()> {
        self.member_server(name)?.stop().await
    }

    /// Brings member `name` back on the same address with the same store. What `flotilla member start` asks a
    /// running `up` to do.
    ///
    /// # Errors
    /// When there is no such member, it already runs, or its server cannot start.
    pub async fn start_member(&self, name: &str) -> anyhow::Result<()> {
        self.member_server(name)?.start_again().await
    }

    /// The server of member `name`.
    ///
    /// # Errors
    /// When there is no such member.
    pub fn member_server(&self, name: &str) -> anyhow::Result<Arc<MemberServer>> {
        let servers: Vec<Arc<MemberServer>> =
            self.members.iter().map(|m| m.server.clone()).collect();
        member::find(&servers, name).cloned()
    }

    /// The controllers' Prometheus metrics in text format (`None` without controllers).
    pub fn controller_metrics(&self) -> Option<String> {
        self.controllers
            .as_ref()
            .and_then(InProcessControllers::metrics)
    }

    /// Stops everything in reverse order of start and flushes every store.
    pub async fn shutdown(self) {
        if self.status_url.is_some()
            && let Some(dir) = self.karmada_config.parent()
        {
            // `flotilla status` then says nothing runs rather than failing to connect.
            let _ = std::fs::remove_file(dir.join(STATUS_URL_FILE));
        }
        if let Some(endpoint) = self.endpoint {
            endpoint.shutdown().await;
        }
        if let Some(agent) = &self.agent {
            agent.stop().await;
        }
        if let Some(controllers) = &self.controllers {
            controllers.stop().await;
        }
        if let Some(webhook) = self.webhook {
            webhook.shutdown().await;
        }
        if let Some(admission) = self.admission {
            admission.shutdown().await;
        }
        self.aggregated.shutdown().await;
        // Each member's simulator stops before its server: nothing should write to a member shutting down.
        for member in self.members {
            member.server.shutdown().await;
        }
        self.control.shutdown().await;
    }
}

/// Serves karmada-webhook's validations on a free port of 127.0.0.1 with a self-signed certificate and registers
/// them with the control plane, as `flotilla controller-manager --webhook-self-signed` does. The embedded server
/// consults them once it calls admission webhooks.
async fn serve_admission(
    control: &kube::Client,
    feature_gates: &FeatureGates,
) -> anyhow::Result<flotilla_webhook::RunningServer> {
    let host = Ipv4Addr::LOCALHOST.to_string();
    let generated = flotilla_webhook::generate_self_signed(&[&host])
        .context("failed to generate the webhook's serving certificate")?;
    let server = karmada_webhook::serve(
        control,
        SocketAddr::from((Ipv4Addr::LOCALHOST, 0)),
        &generated.identity,
        &admission::Options {
            // As Karmada's own deployment runs karmada-webhook.
            allow_no_execute_taint_policy: true,
            feature_gates: feature_gates.clone(),
        },
    )
    .await?;
    let endpoint = Endpoint::Url(format!("https://{}", server.local_addr()));
    karmada_webhook::register(control, &endpoint, Some(generated.ca_bundle())).await?;
    Ok(server)
}

/// How long `up` waits for the control plane's aggregator to route `cluster.karmada.io` to its aggregated API
/// server (in-process: well under a second).
const AGGREGATED_API_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `cluster.karmada.io` on a free port of 127.0.0.1 with a self-signed certificate, registers it with the
/// control plane's aggregator behind the ExternalName Service Karmada's name, as `flotilla controller-manager
/// --aggregated-apiserver-self-signed --aggregated-apiserver-url https://127.0.0.1:PORT` does, and waits until
/// the aggregator routes to it.
async fn serve_aggregated(control: &kube::Client) -> anyhow::Result<RunningAggregated> {
    let host = Ipv4Addr::LOCALHOST.to_string();
    let generated = flotilla_webhook::generate_self_signed(&[SERVICE_HOST, &host])
        .context("failed to generate the aggregated API server's serving certificate")?;
    // Bound first: the registration names the port.
    let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .await
        .context("failed to listen for the aggregated API server")?;
    let port = listener
        .local_addr()
        .context("failed to read the aggregated API server's address")?
        .port();
    let register = (
        AggregatedEndpoint::External { host, port },
        generated.ca_bundle().to_vec(),
    );
    let running =
        aggregated_apiserver::start_on(control, listener, &generated.identity, Some(&register))
            .await?;
    if let Err(error) = aggregated_apiserver::wait_available(control, AGGREGATED_API_TIMEOUT).await {
        running.shutdown().await;
        return Err(error);
    }
    Ok(running)
}

/// Registers an embedded member in Push mode as `flotilla join` does, its admin token as the control plane's
/// credentials (the member's own ServiceAccount token controller issues the impersonator's).
async fn register(control: &kube::Client, member: &Member) -> anyhow::Result<()> {
    let id = flotilla_join::member_id(&member.client)
        .await
        .with_context(|| format!("failed to read the id of {}", member.name))?;
    let impersonator = flotilla_join::member::impersonator_token(&member.client, flotilla_join::member::TOKEN_TIMEOUT)
        .await
        .with_context(|| format!("failed to obtain the impersonator's token from {}", member.name))?;
    let registration = Registration {
        name: member.name.clone(),
        api_endpoint: member.server.url(),
        credentials: Some(Credentials {
            token: member.server.admin_token().to_string(),
            ca_bundle: Some(member.server.ca_pem().as_bytes().to_vec()),
        }),
        impersonator_token: Some(impersonator.token),
        id,
        ..Registration::default()
    };
    flotilla_join::register(control, &registration)
        .await
        .with_context(|| format!("failed to register {} with the control plane", member.name))?;
    Ok(())
}

fn write(path: &Path, content: &str) -> anyhow::Result<()> {
    flotilla_apiserver::kubeconfig::write(path, content)
        .with_context(|| format!("failed to write {}", path.display()))
}
