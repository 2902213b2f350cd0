//! A member of `flotilla up` that can be taken away and brought back (`flotilla member stop|start`, and the e2e
//! scenarios through the same methods): stopping ends its API server and its workload simulator, so connecting
//! to its address is refused, as when a real cluster's API server goes down; starting serves the same data dir
//! (store, certificates, token) on the same address again, so the Cluster object and every client stay valid.
//! Nothing is deleted either way.

use std::sync::{Arc, Weak};
use std::time::Duration;

use anyhow::{Context, bail};
use flotilla_store::Store;
use flotilla_apiserver::{RunningServer, Server, ServerConfig};
use flotilla_simulator::{Simulator, SimulatorConfig};

/// How long a stopped server's last users (watches, connections ending) may hold its store before a start
/// gives up waiting for it.
const STORE_RELEASE_TIMEOUT: Duration = Duration::from_secs(10);

/// A member's API server and simulator, running or stopped.
pub struct MemberServer {
    name: String,
    /// The configuration it was first started with, on the address it got (a free port stays the same).
    config: ServerConfig,
    url: String,
    admin_token: String,
    ca_pem: String,
    state: tokio::sync::Mutex<State>,
}

#[derive(Default)]
struct State {
    server: Option<RunningServer>,
    simulator: Option<(kube::Client, SimulatorConfig)>,
    running_simulator: Option<Simulator>,
    /// The store of the last stopped server, until everything that used it has let go.
    released: Option<Weak<Store>>,
}

impl MemberServer {
    /// Starts member `name`'s API server.
    ///
    /// # Errors
    /// When the server cannot start (port in use, data dir locked by another process).
    pub async fn start(name: &str, mut config: ServerConfig) -> anyhow::Result<MemberServer> {
        let server = start_server(name, config.clone()).await?;
        config.listen = server.local_addr();
        Ok(MemberServer {
            name: name.to_string(),
            config,
            url: server.url(),
            admin_token: server.admin_token().to_string(),
            ca_pem: server.ca_pem().to_string(),
            state: tokio::sync::Mutex::new(State {
                server: Some(server),
                ..State::default()
            }),
        })
    }

    /// The member's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The `https://` URL of its API server.
    pub fn url(&self) -> String {
        self.url.clone()
    }

    /// A kubeconfig reaching it, with the given context (and cluster, user) name, as
    /// [`RunningServer::kubeconfig`] renders it (the same while stopped).
    pub fn kubeconfig(&self, context: &str) -> String {
        flotilla_apiserver::kubeconfig::render(&self.url, &self.ca_pem, &self.admin_token, context)
    }

    /// The admin bearer token.
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// The CA certificate (PEM) clients must trust.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// Runs a workload simulator with `client` against the member while it runs (again after each start).
    pub async fn start_simulator(&self, client: kube::Client, config: SimulatorConfig) {
        let mut state = self.state.lock().await;
        if state.server.is_some() && state.running_simulator.is_none() {
            state.running_simulator = Some(Simulator::start(client.clone(), config.clone()));
        }
        state.simulator = Some((client, config));
    }

    /// Whether its API server runs.
    pub async fn running(&self) -> bool {
        self.state.lock().await.server.is_some()
    }

    /// Stops the simulator and the API server (its store flushed); connections to its address are refused.
    ///
    /// # Errors
    /// When it is already stopped.
    pub async fn stop(&self) -> anyhow::Result<()> {
        let mut state = self.state.lock().await;
        let Some(server) = state.server.take() else {
            bail!("member {} is already stopped", self.name);
        };
        if let Some(simulator) = state.running_simulator.take() {
            simulator.shutdown().await;
        }
        state.released = Some(Arc::downgrade(server.store()));
        server.shutdown().await;
        Ok(())
    }

    /// Starts the API server again on the same address with the same data dir, and its simulator.
    ///
    /// # Errors
    /// When it already runs, or the server cannot start (its address was taken meanwhile, say).
    pub async fn start_again(&self) -> anyhow::Result<()> {
        let mut state = self.state.lock().await;
        if state.server.is_some() {
            bail!("member {} is already running", self.name);
        }
        if let Some(store) = state.released.take() {
            // The store's files can be opened once per process: wait for the old server's last tasks.
            let deadline = tokio::time::Instant::now() + STORE_RELEASE_TIMEOUT;
            while store.strong_count() > 0 {
                if tokio::time::Instant::now() >= deadline {
                    bail!(
                        "member {}'s previous server still holds its store after {}s",
                        self.name,
                        STORE_RELEASE_TIMEOUT.as_secs()
                    );
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
        state.server = Some(start_server(&self.name, self.config.clone()).await?);
        if let Some((client, config)) = state.simulator.clone() {
            state.running_simulator = Some(Simulator::start(client, config));
        }
        Ok(())
    }

    /// Stops everything for good (nothing when already stopped).
    pub async fn shutdown(&self) {
        let mut state = self.state.lock().await;
        if let Some(simulator) = state.running_simulator.take() {
            simulator.shutdown().await;
        }
        if let Some(server) = state.server.take() {
            server.shutdown().await;
        }
    }
}

async fn start_server(name: &str, config: ServerConfig) -> anyhow::Result<RunningServer> {
    let addr = config.listen;
    let dir = config.data_dir.clone();
    Server::start(config).await.with_context(|| {
        format!(
            "failed to start the {name} API server on {addr} with data dir {}",
            dir.display()
        )
    })
}

/// The member named `name` of `members`.
///
/// # Errors
/// When there is none, naming the members there are.
pub fn find<'a>(members: &'a [Arc<MemberServer>], name: &str) -> anyhow::Result<&'a Arc<MemberServer>> {
    members.iter().find(|m| m.name == name).with_context(|| {
        let known: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        format!("no member named {name} (members: {})", known.join(", "))
    })
}
