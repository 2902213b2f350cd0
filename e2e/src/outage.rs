//! Taking a member away and bringing it back, in either world. An in-process environment stops the member's
//! API server through the code `flotilla member stop|start` runs (connections refused, nothing deleted); any
//! other environment (the kube world, an external `flotilla up`) gets what Karmada's own e2e does: the Cluster's
//! `spec.apiEndpoint` points at a dead address (a free port of 127.0.0.1, so connections are refused at once)
//! and is restored afterwards, also when the scenario fails ([`Undo`]).

use std::sync::Arc;

use anyhow::Context;
use flotilla::cmd::up::member::MemberServer;
use kube::Client;
use kube::api::{Patch, PatchParams};
use serde_json::json;

use crate::env::Env;
use crate::resources::{CLUSTER, text};
use crate::undo::Undo;

/// A member taken away; [`Outage::bring_back`] ends it.
pub struct Outage {
    member: String,
    way: Way,
}

enum Way {
    /// The in-process member's server is stopped; the environment shuts down with the scenario anyway.
    InProcess(Arc<MemberServer>),
    /// The Cluster's `apiEndpoint` is dead until this is run (or dropped).
    Endpoint(Undo),
}

impl Env {
    /// Takes member `name` away from the control plane: from now on it cannot be reached.
    ///
    /// # Errors
    /// When there is no such member, or it cannot be taken away.
    pub async fn take_member_away(&self, name: &str) -> anyhow::Result<Outage> {
        if let Some(environment) = &self.owned {
            environment.stop_member(name).await?;
            return Ok(Outage {
                member: name.to_string(),
                way: Way::InProcess(environment.member_server(name)?),
            });
        }
        let cluster = CLUSTER
            .get(&self.karmada, None, name)
            .await
            .map_err(anyhow::Error::msg)?
            .with_context(|| format!("no Cluster named {name}"))?;
        let original = text(&cluster, "/spec/apiEndpoint")
            .with_context(|| format!("Cluster {name} has no spec.apiEndpoint"))?
            .to_string();
        let dead = dead_address()?;
        set_endpoint(&self.karmada, name, &dead).await?;
        eprintln!("e2e: {name} taken away: its apiEndpoint {original} replaced by {dead}");
        let cluster = name.to_string();
        let undo = Undo::new(
            self,
            format!("restore Cluster {name}'s apiEndpoint {original}"),
            move |client| async move { set_endpoint(&client, &cluster, &original).await },
        );
        Ok(Outage {
            member: name.to_string(),
            way: Way::Endpoint(undo),
        })
    }
}

impl Outage {
    /// The member taken away.
    pub fn member(&self) -> &str {
        &self.member
    }

    /// Brings the member back.
    ///
    /// # Errors
    /// When it cannot be brought back.
    pub async fn bring_back(self, env: &Env) -> anyhow::Result<()> {
        match self.way {
            Way::InProcess(server) => server.start_again().await,
            Way::Endpoint(undo) => undo.run(&env.karmada).await,
        }?;
        eprintln!("e2e: {} brought back", self.member);
        Ok(())
    }
}

/// `https://127.0.0.1:<port>` where nothing listens: a port just given by the system and released.
fn dead_address() -> anyhow::Result<String> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))
        .context("failed to find a free port for a dead apiEndpoint")?;
    let port = listener.local_addr()?.port();
    drop(listener);
    Ok(format!("https://127.0.0.1:{port}"))
}

async fn set_endpoint(client: &Client, cluster: &str, endpoint: &str) -> anyhow::Result<()> {
    let patch = json!({"spec": {"apiEndpoint": endpoint}});
    CLUSTER
        .api(client, None)
        .patch(cluster, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .with_context(|| format!("failed to set Cluster {cluster}'s apiEndpoint to {endpoint}"))?;
    Ok(())
}
