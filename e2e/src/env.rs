//! The environment a scenario runs against, in one of two worlds. The embedded world is an external Flotilla named
//! by `KARMADA_KUBECONFIG` and `MEMBERS_KUBECONFIG`, or one started in-process (the library behind `flotilla up`)
//! on free ports in a temporary data dir. The kube world is real kube-apiservers with real workload controllers
//! and KWOK nodes, with `flotilla controller-manager` against the control plane, as
//! `FLOTILLA_LOCAL_UP_MODE=kube hack/local-up.sh --webhook-example` leaves them: `FLOTILLA_E2E_KUBE_DIR` names
//! the directory holding its `karmada.config` and `members.config` (hack/test.sh starts one and sets it).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use flotilla::cmd::up::{Environment, UpConfig, install};
use flotilla_api::config::v1alpha1::ResourceInterpreterWebhookConfiguration;
use flotilla_controllers::features::FeatureGates;
use flotilla_webhook::example::{CONFIGURATION_NAME, ExampleConfig, RunningWebhook};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use rand::Rng;
use serde_json::Value;

use crate::kubectl::Kubectl;
use crate::resources::{
    self, CLUSTER, DEPLOYMENT, EVENT, RESOURCE_BINDING, WORK, WORKLOAD, WORKLOAD_REBALANCER,
};

/// `--cluster-failure-threshold` and `--cluster-success-threshold` of an in-process environment.
const IN_PROCESS_CLUSTER_THRESHOLD: Duration = Duration::from_secs(3);

/// Context of the control plane in `karmada.config`.
const KARMADA_CONTEXT: &str = "karmada-apiserver";

/// Which API servers a scenario runs against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum World {
    /// Flotilla's embedded API servers and simulated members (or an external environment named by
    /// `KARMADA_KUBECONFIG` and `MEMBERS_KUBECONFIG`).
    Embedded,
    /// Real kube-apiservers with real workload controllers, named by `FLOTILLA_E2E_KUBE_DIR`.
    Kube,
}

/// What a scenario needs from its environment.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// The example Workload interpreter webhook is registered (`flotilla up --webhook-example`).
    pub webhook_example: bool,
    /// An in-process environment's feature gates: `Some(value)` is Karmada's defaults changed by this
    /// `--feature-gates` value (`Some("")`: Karmada's defaults, Failover off); `None` is what `flotilla up` runs
    /// (Karmada's local-up: every alpha and beta gate). An external environment keeps its own.
    pub feature_gates: Option<&'static str>,
}

/// A namespace a scenario owns.
#[derive(Clone, Debug)]
pub struct TestNamespace {
    /// Its name (`e2e-<scenario>-<random>`).
    pub name: String,
}

/// The environment of one scenario.
pub struct Env {
    /// The world it runs in.
    pub world: World,
    /// Client of the control plane.
    pub karmada: Client,
    /// Clients of the members, by name, in kubeconfig order.
    pub members: Vec<(String, Client)>,
    /// Kubeconfig of the control plane.
    pub karmada_config: PathBuf,
    /// Context of the control plane in [`Env::karmada_config`].
    pub karmada_context: String,
    /// Kubeconfig of the members (one context each).
    pub members_config: PathBuf,
    pub(crate) owned: Option<Environment>,
    data_dir: Option<tempfile::TempDir>,
    webhook: Option<RunningWebhook>,
}

/// Whether `NO_CLEANUP` asks to keep what a scenario created.
pub(crate) fn no_cleanup() -> bool {
    std::env::var_os("NO_CLEANUP").is_some_and(|v| !v.is_empty() && v != "0")
}

pub(crate) async fn client_for(path: &Path, context: Option<&str>) -> anyhow::Result<Client> {
    let file = Kubeconfig::read_from(path)
        .with_context(|| format!("failed to read kubeconfig {}", path.display()))?;
    let options = KubeConfigOptions {
        context: context.map(str::to_string),
        ..KubeConfigOptions::default()
    };
    let config = Config::from_custom_kubeconfig(file, &options)
        .await
        .with_context(|| format!("failed to load kubeconfig {}", path.display()))?;
    Client::try_from(config).context("failed to create a client")
}

impl Env {
    /// The embedded world's environment: the one named by `KARMADA_KUBECONFIG`/`MEMBERS_KUBECONFIG`, or a fresh
    /// in-process one.
    ///
    /// # Errors
    /// When the kubeconfigs cannot be used or the in-process environment cannot start.
    pub async fn start(options: Options) -> anyhow::Result<Env> {
        Env::start_in(World::Embedded, options).await
    }

    /// The environment of `world`.
    ///
    /// # Errors
    /// When the kubeconfigs cannot be used, the in-process environment cannot start, or the kube world is not
    /// running.
    pub async fn start_in(world: World, options: Options) -> anyhow::Result<Env> {
        let env = match world {
            World::Kube => {
                let dir = std::env::var_os("FLOTILLA_E2E_KUBE_DIR").map(PathBuf::from).context(
                    "the kube world is not running: FLOTILLA_E2E_KUBE_DIR must name the KUBE_DIR of \
                     `FLOTILLA_LOCAL_UP_MODE=kube hack/local-up.sh --webhook-example` (hack/test.sh starts one)",
                )?;
                Env::external(dir.join("karmada.config"), dir.join("members.config")).await?
            }
            World::Embedded => match (
                std::env::var_os("KARMADA_KUBECONFIG"),
                std::env::var_os("MEMBERS_KUBECONFIG"),
            ) {
                (Some(karmada), Some(members)) => {
                    Env::external(karmada.into(), members.into()).await?
                }
                _ => Env::in_process(options).await?,
            },
        };
        let mut env = env;
        env.world = world;
        if options.webhook_example && env.owned.is_none() {
            env.ensure_webhook().await?;
        }
        Ok(env)
    }

    async fn external(karmada_config: PathBuf, members_config: PathBuf) -> anyhow::Result<Env> {
        let file = Kubeconfig::read_from(&karmada_config)
            .with_context(|| format!("failed to read {}", karmada_config.display()))?;
        let karmada_context = if file.contexts.iter().any(|c| c.name == KARMADA_CONTEXT) {
            KARMADA_CONTEXT.to_string()
        } else {
            file.current_context.clone().unwrap_or_default()
        };
        let karmada = client_for(&karmada_config, Some(&karmada_context)).await?;
        let members_file = Kubeconfig::read_from(&members_config)
            .with_context(|| format!("failed to read {}", members_config.display()))?;
        let mut members = Vec::new();
        for context in &members_file.contexts {
            members.push((
                context.name.clone(),
                client_for(&members_config, Some(&context.name)).await?,
            ));
        }
        Ok(Env {
            world: World::Kube,
            karmada,
            members,
            karmada_config,
            karmada_context,
            members_config,
            owned: None,
            data_dir: None,
            webhook: None,
        })
    }

    async fn in_process(options: Options) -> anyhow::Result<Env> {
        let data_dir = tempfile::Builder::new()
            .prefix("flotilla-e2e-")
            .tempdir()
            .context("failed to create a temporary data dir")?;
        let mut config = UpConfig::new(data_dir.path());
        config.port = 0;
        config.webhook_example = options.webhook_example;
        config.simulator_delay = Duration::from_millis(50);
        if let Some(gates) = options.feature_gates {
            config.feature_gates = FeatureGates::parse(gates)
                .with_context(|| format!("invalid feature gates {gates:?}"))?;
        }
        // A member taken away (crate::outage) turns not Ready, and back, within seconds rather than Karmada's 30.
        config.cluster_failure_threshold = IN_PROCESS_CLUSTER_THRESHOLD;
        config.cluster_success_threshold = IN_PROCESS_CLUSTER_THRESHOLD;
        let environment = Environment::start(&config, &|_| {}).await?;
        let members = environment
            .members
            .iter()
            .map(|m| (m.name.clone(), m.client.clone()))
            .collect();
        Ok(Env {
            world: World::Embedded,
            karmada: environment.control_client.clone(),
            members,
            karmada_config: environment.karmada_config.clone(),
            karmada_context: KARMADA_CONTEXT.to_string(),
            members_config: environment.members_config.clone(),
            owned: Some(environment),
            data_dir: Some(data_dir),
            webhook: None,
        })
    }

    /// Registers the example webhook with an external control plane unless it already is.
    async fn ensure_webhook(&mut self) -> anyhow::Result<()> {
        let api: Api<ResourceInterpreterWebhookConfiguration> = Api::all(self.karmada.clone());
        if api
            .get_opt(CONFIGURATION_NAME)
            .await
            .context("failed to read the webhook configuration")?
            .is_some()
        {
            return Ok(());
        }
        let webhook = flotilla_webhook::example::serve(ExampleConfig::default())
            .await
            .context("failed to start the example webhook")?;
        install::webhook_configuration(&self.karmada, &webhook.webhook_configuration()).await?;
        self.webhook = Some(webhook);
        Ok(())
    }

    /// The client of member `name`.
    ///
    /// # Errors
    /// When there is no such member.
    pub fn member(&self, name: &str) -> anyhow::Result<&Client> {
        self.members
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .with_context(|| format!("no member named {name}"))
    }

    /// The control plane's URL, as its kubeconfig names it (`https://HOST:PORT`).
    ///
    /// # Errors
    /// When the kubeconfig cannot be read.
    pub async fn karmada_url(&self) -> anyhow::Result<String> {
        Ok(self
            .karmada_client_config()
            .await?
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_owned())
    }

    /// A client of the control plane that authenticates with the bearer `token` instead of the kubeconfig's
    /// credentials (a ServiceAccount's, to act as another user).
    ///
    /// # Errors
    /// When the kubeconfig cannot be read or the client cannot be built.
    pub async fn karmada_client_as(&self, token: &str) -> anyhow::Result<Client> {
        self.karmada_client_with(kube::config::AuthInfo {
            token: Some(token.to_owned().into()),
            ..kube::config::AuthInfo::default()
        })
        .await
    }

    /// A client of the control plane that authenticates with `auth_info` (a token, a client certificate)
    /// instead of the kubeconfig's credentials.
    ///
    /// # Errors
    /// When the kubeconfig cannot be read or the client cannot be built.
    pub async fn karmada_client_with(
        &self,
        auth_info: kube::config::AuthInfo,
    ) -> anyhow::Result<Client> {
        let mut config = self.karmada_client_config().await?;
        config.auth_info = auth_info;
        Client::try_from(config).context("failed to create a client")
    }

    async fn karmada_client_config(&self) -> anyhow::Result<Config> {
        let file = Kubeconfig::read_from(&self.karmada_config)
            .with_context(|| format!("failed to read {}", self.karmada_config.display()))?;
        let options = KubeConfigOptions {
            context: Some(self.karmada_context.clone()),
            ..KubeConfigOptions::default()
        };
        Config::from_custom_kubeconfig(file, &options)
            .await
            .with_context(|| format!("failed to load {}", self.karmada_config.display()))
    }

    /// Runs `kubectl` against the control plane.
    ///
    /// # Errors
    /// When kubectl fails.
    pub async fn kubectl_karmada(
        &self,
        kubectl: &Kubectl,
        args: &[&str],
    ) -> anyhow::Result<String> {
        kubectl
            .run(&self.karmada_config, Some(&self.karmada_context), args)
            .await
    }

    /// Creates a fresh namespace `e2e-<scenario>-<random>` in the control plane.
    ///
    /// # Errors
    /// When it cannot be created.
    pub async fn namespace(&self, scenario: &str) -> anyhow::Result<TestNamespace> {
        let suffix: String = rand::rng()
            .sample_iter(rand::distr::Alphanumeric)
            .take(6)
            .map(|c| char::from(c).to_ascii_lowercase())
            .collect();
        let name = format!("e2e-{scenario}-{suffix}");
        let api: Api<Namespace> = Api::all(self.karmada.clone());
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        api.create(&PostParams::default(), &ns)
            .await
            .with_context(|| format!("failed to create namespace {name}"))?;
        Ok(TestNamespace { name })
    }

    /// Ends a scenario: on failure dumps the state around `ns`; deletes `ns` unless `NO_CLEANUP`; stops an
    /// in-process environment. Returns the scenario's result.
    ///
    /// # Errors
    /// The scenario's error.
    pub async fn finish(
        mut self,
        ns: &TestNamespace,
        result: anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        if result.is_err() {
            eprintln!("{}", self.dump(&ns.name).await);
        }
        if no_cleanup() {
            let kept = self.data_dir.take().map(tempfile::TempDir::keep);
            eprintln!(
                "NO_CLEANUP: kept namespace {}{}",
                ns.name,
                kept.map(|d| format!(" and data dir {} (flotilla up --data-dir it)", d.display()))
                    .unwrap_or_default()
            );
        } else {
            let api: Api<Namespace> = Api::all(self.karmada.clone());
            let _ = api.delete(&ns.name, &DeleteParams::default()).await;
        }
        self.stop().await;
        result
    }

    /// Stops what this environment started itself (an in-process Flotilla, the example webhook); an external one
    /// keeps running.
    pub async fn stop(mut self) {
        if let Some(webhook) = self.webhook.take() {
            webhook.shutdown().await;
        }
        if let Some(environment) = self.owned.take() {
            environment.shutdown().await;
        }
    }

    /// Clusters, bindings, Works, events and member objects related to `ns`, for a failure report.
    pub async fn dump(&self, ns: &str) -> String {
        let mut out = format!("==== state of namespace {ns} ====\n");
        let mut section = |title: &str, items: Result<Vec<Value>, String>| {
            out.push_str(&format!("-- {title}\n"));
            match items {
                Ok(items) => {
                    for item in items {
                        out.push_str(&resources::brief(&item));
                        out.push('\n');
                    }
                }
                Err(e) => out.push_str(&format!("{e}\n")),
            }
        };
        section("clusters", CLUSTER.list(&self.karmada, None).await);
        section(
            "resourcebindings",
            RESOURCE_BINDING.list(&self.karmada, Some(ns)).await,
        );
        let works = WORK.list(&self.karmada, None).await.map(|ws| {
            ws.into_iter()
                .filter(|w| w.to_string().contains(&format!("\"{ns}\"")))
                .collect()
        });
        section("works", works);
        let rebalancers = WORKLOAD_REBALANCER
            .list(&self.karmada, None)
            .await
            .map(|rs| {
                rs.into_iter()
                    .filter(|r| r.to_string().contains(&format!("\"{ns}\"")))
                    .collect()
            });
        section("workload rebalancers naming it", rebalancers);
        section("events", EVENT.list(&self.karmada, Some(ns)).await);
        section(
            "templates: deployments",
            DEPLOYMENT.list(&self.karmada, Some(ns)).await,
        );
        section(
            "templates: workloads",
            WORKLOAD.list(&self.karmada, Some(ns)).await,
        );
        for (name, client) in &self.members {
            section(
                &format!("{name}: deployments"),
                DEPLOYMENT.list(client, Some(ns)).await,
            );
            section(
                &format!("{name}: workloads"),
                WORKLOAD.list(client, Some(ns)).await,
            );
        }
        out
    }
}
