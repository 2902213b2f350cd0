//! Access to member clusters: one client per Cluster, built from its `apiEndpoint` and the Secret its
//! `secretRef` names (`token`, `caBundle`), plus the member's informers (started lazily for every resource a
//! Work carries) and its served resources.
//!
//! In a `flotilla agent` ([`Members::for_agent`]) there is one member, the one the agent runs beside, with the
//! client the agent was given: no Secret is read. Which clusters a process does the member side for is
//! [`Members::serves`]: the control plane every Push cluster, an agent only its own (Pull) cluster.
//!
//! Controllers that react to member changes register an informer hook ([`Members::add_informer_hook`]); every
//! member informer, whenever and by whomever it is started, gets every hook's handlers.

pub(crate) mod client;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use client::build_watched_client;
use flotilla_api::cluster::v1alpha1::{Cluster, ClusterSyncMode};
use flotilla_client::RateLimit;
use flotilla_client::leader::Fence;
use k8s_openapi::api::core::v1::Secret;
use kube::api::DynamicObject;
use kube::core::GroupVersionKind;
use kube::{Api, Client, ResourceExt};

use crate::discovery::{ServedResource, resolve_kind};
use crate::error::{Error, Result};
use crate::objects::split_api_version;
use crate::resources::dynamic_api;
use crate::runtime::{Informer, Informers};

/// Called for every member informer when it starts: `(cluster, resource, informer)`.
pub(crate) type InformerHook =
    Arc<dyn Fn(&str, &ServedResource, &Arc<Informer<DynamicObject>>) + Send + Sync>;

/// One member cluster: its client, informers and served resources.
pub(crate) struct Member {
    /// The cluster's name.
    pub cluster: String,
    /// Client of the member's API server.
    pub client: Client,
    informers: Informers,
    started: Mutex<Vec<ServedResource>>,
    served: Mutex<HashMap<GroupVersionKind, ServedResource>>,
    hooks: Arc<RwLock<Vec<InformerHook>>>,
    /// Set when the member answered 401: the credentials were rotated, the next [`Members::get`] rebuilds.
    rejected: Arc<AtomicBool>,
}

impl Member {
    /// Whether the member rejected this client's credentials (401) since it was built.
    pub(crate) fn credentials_rejected(&self) -> bool {
        self.rejected.load(Ordering::Relaxed)
    }

    /// The member's served resource for `apiVersion`/`kind` (cached after the first lookup).
    ///
    /// # Errors
    /// `Waiting` when the member does not serve the kind; `Kube` when the member could not be asked.
    pub(crate) async fn resolve(&self, api_version: &str, kind: &str) -> Result<ServedResource> {
        let (group, version) = split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        if let Some(found) = self
            .served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&gvk)
        {
            return Ok(found.clone());
        }
        let not_served = || {
            Error::waiting(format!(
                "{api_version} {kind} to be served by cluster {}",
                self.cluster
            ))
        };
        match resolve_kind(&self.client, &gvk).await {
            Ok(Some(found)) => {
                self.served
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(gvk, found.clone());
                Ok(found)
            }
            Ok(None) => Err(not_served()),
            Err(err) if flotilla_client::api_error::is_not_found(&err) => Err(not_served()),
            Err(source) => Err(Error::kube(
                "discover",
                format!("{api_version} {kind} in cluster {}", self.cluster),
                source,
            )),
        }
    }

    /// Forgets a cached lookup (the member answered NotFound for the resource itself).
    pub(crate) fn forget_resource(&self, api_version: &str, kind: &str) {
        let (group, version) = split_api_version(api_version);
        self.served
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&GroupVersionKind::gvk(group, version, kind));
    }

    /// The member informer of `served`, started (with every hook's handlers) on first use.
    pub(crate) fn informer(&self, served: &ServedResource) -> Arc<Informer<DynamicObject>> {
        if let Some(found) = self.informers.dynamic_if_started(&served.resource) {
            return found;
        }
        let informer = self.informers.dynamic(&served.resource);
        let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        if !started.contains(served) {
            started.push(served.clone());
            for hook in self
                .hooks
                .read()
                .unwrap_or_else(PoisonError::into_inner)
                .iter()
            {
                hook(&self.cluster, served, &informer);
            }
        }
        informer
    }

    /// The member informer of `served` if it is running.
    pub(crate) fn informer_if_started(
        &self,
        served: &ServedResource,
    ) -> Option<Arc<Informer<DynamicObject>>> {
        self.informers.dynamic_if_started(&served.resource)
    }

    /// A dynamic API for `served` objects in `namespace`.
    pub(crate) fn api(&self, served: &ServedResource, namespace: &str) -> Api<DynamicObject> {
        dynamic_api(&self.client, served, namespace)
    }

    fn started_resources(&self) -> Vec<ServedResource> {
        self.started
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn shutdown(&self) {
        self.informers.shutdown();
    }
}

struct Entry {
    fingerprint: String,
    secret_version: String,
    member: Arc<Member>,
}

/// Every member cluster's access, shared by all controllers.
#[derive(Clone)]
pub(crate) struct Members {
    control: Client,
    timeout: Duration,
    limit: RateLimit,
    /// The leader election's fence, which every member client's writes pass.
    fence: Option<Fence>,
    entries: Arc<Mutex<HashMap<String, Entry>>>,
    hooks: Arc<RwLock<Vec<InformerHook>>>,
    /// Set by [`Members::shutdown`]: members built afterwards (by a task still finishing) start no informers.
    closed: Arc<AtomicBool>,
    /// In an agent, the one cluster it serves, whose client is fixed.
    agent: Option<Arc<Member>>,
}

impl Members {
    /// Member access reading credentials through `control` (the control-plane client); each member's
    /// client times requests out after `timeout`, is rate limited by `limit` and writes only while `fence`
    /// (when there is one) allows.
    pub(crate) fn new(
        control: Client,
        timeout: Duration,
        limit: RateLimit,
        fence: Option<Fence>,
    ) -> Self {
        Members {
            control,
            timeout,
            limit,
            fence,
            entries: Arc::default(),
            hooks: Arc::default(),
            closed: Arc::default(),
            agent: None,
        }
    }

    /// Member access of an agent: only `cluster`, through `member` (the agent's own client of it).
    pub(crate) fn for_agent(
        control: Client,
        cluster: &str,
        member: Client,
        limit: RateLimit,
    ) -> Self {
        let hooks: Arc<RwLock<Vec<InformerHook>>> = Arc::default();
        let agent = Arc::new(Member {
            cluster: cluster.to_owned(),
            client: member.clone(),
            informers: Informers::new(member, cluster),
            started: Mutex::default(),
            served: Mutex::default(),
            hooks: hooks.clone(),
            rejected: Arc::default(),
        });
        let members = Members {
            control,
            timeout: Duration::ZERO,
            limit,
            fence: None,
            entries: Arc::default(),
            hooks,
            closed: Arc::default(),
            agent: Some(agent.clone()),
        };
        members.lock().insert(
            cluster.to_owned(),
            Entry {
                fingerprint: String::new(),
                secret_version: String::new(),
                member: agent,
            },
        );
        members
    }

    /// Whether this process does the member side (execution, work status, cluster status) of `cluster`: the
    /// control plane for Push clusters, an agent for its own cluster only.
    pub(crate) fn serves(&self, cluster: &Cluster) -> bool {
        match &self.agent {
            Some(agent) => agent.cluster == cluster.name_any(),
            None => cluster.spec.sync_mode == ClusterSyncMode::Push,
        }
    }

    /// Whether this process may release the Works of cluster `name` once that Cluster is gone: the control
    /// plane any cluster's, an agent only its own cluster's.
    pub(crate) fn serves_name(&self, name: &str) -> bool {
        self.agent
            .as_ref()
            .is_none_or(|agent| agent.cluster == name)
    }

    /// The agent's member, or why `cluster` is not served here; `None` when member access is built from
    /// Secrets (the control plane) and `cluster` is a Push cluster.
    fn fixed(&self, cluster: &Cluster) -> Option<Result<Arc<Member>>> {
        let name = cluster.name_any();
        match &self.agent {
            Some(agent) if agent.cluster == name => Some(Ok(agent.clone())),
            Some(agent) => Some(Err(Error::MemberClient {
                cluster: name,
                reason: format!("this agent serves only cluster {}", agent.cluster),
            })),
            None if cluster.spec.sync_mode == ClusterSyncMode::Pull => Some(Err(Error::MemberClient {
                cluster: name,
                reason: "the cluster is in Pull mode: its agent reaches it, the control plane does not".into(),
            })),
            None => None,
        }
    }

    /// Registers a hook every member informer gets (also those already running).
    pub(crate) fn add_informer_hook(&self, hook: InformerHook) {
        self.hooks
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .push(hook.clone());
        let members: Vec<Arc<Member>> = self
            .lock()
            .values()
            .map(|entry| entry.member.clone())
            .collect();
        for member in members {
            for served in member.started_resources() {
                if let Some(informer) = member.informer_if_started(&served) {
                    hook(&member.cluster, &served, &informer);
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The member of `cluster`, building its client if needed, or rebuilding it (from a fresh read of the
    /// Secret) if the Cluster's connection settings changed or the member answered 401 to the cached client.
    ///
    /// # Errors
    /// `MemberClient` when the Cluster or its Secret does not allow building a client; `Kube` when the Secret
    /// could not be read.
    pub(crate) async fn get(&self, cluster: &Cluster) -> Result<Arc<Member>> {
        if let Some(fixed) = self.fixed(cluster) {
            return fixed;
        }
        let name = cluster.name_any();
        let fingerprint = fingerprint(cluster);
        if let Some(entry) = self.lock().get(&name)
            && entry.fingerprint == fingerprint
            && !entry.member.credentials_rejected()
        {
            return Ok(entry.member.clone());
        }
        self.rebuild(cluster, fingerprint, None).await
    }

    /// Re-reads the cluster's Secret and rebuilds the client if the credentials changed (called on every
    /// status collection, so rotated tokens are picked up within one period).
    ///
    /// # Errors
    /// As [`Members::get`].
    pub(crate) async fn refresh(&self, cluster: &Cluster) -> Result<Arc<Member>> {
        if let Some(fixed) = self.fixed(cluster) {
            return fixed;
        }
        let secret = self.read_secret(cluster).await?;
        let version = secret.resource_version().unwrap_or_default();
        let fingerprint = fingerprint(cluster);
        if let Some(entry) = self.lock().get(&cluster.name_any())
            && entry.fingerprint == fingerprint
            && entry.secret_version == version
            && !entry.member.credentials_rejected()
        {
            return Ok(entry.member.clone());
        }
        self.rebuild(cluster, fingerprint, Some(secret)).await
    }

    /// The member of `cluster` if a client was built before.
    pub(crate) fn cached(&self, cluster: &str) -> Option<Arc<Member>> {
        self.lock().get(cluster).map(|entry| entry.member.clone())
    }

    /// Drops the member of `cluster` and stops its informers (cluster deleted, or credentials rejected).
    pub(crate) fn remove(&self, cluster: &str) {
        if self
            .agent
            .as_ref()
            .is_some_and(|agent| agent.cluster == cluster)
        {
            // The agent's member is its reason to run: it stays until the agent stops.
            return;
        }
        if let Some(entry) = self.lock().remove(cluster) {
            entry.member.shutdown();
        }
    }

    /// Stops every member's informers.
    pub(crate) fn shutdown(&self) {
        let mut entries = self.lock();
        self.closed.store(true, Ordering::SeqCst);
        for (_, entry) in entries.drain() {
            entry.member.shutdown();
        }
    }

    async fn read_secret(&self, cluster: &Cluster) -> Result<Secret> {
        let name = cluster.name_any();
        let Some(secret_ref) = &cluster.spec.secret_ref else {
            return Err(Error::MemberClient {
                cluster: name,
                reason: "spec.secretRef is not set".into(),
            });
        };
        let api: Api<Secret> = Api::namespaced(self.control.clone(), &secret_ref.namespace);
        api.get(&secret_ref.name).await.map_err(|source| {
            Error::kube(
                "get",
                format!("Secret {}/{}", secret_ref.namespace, secret_ref.name),
                source,
            )
        })
    }

    async fn rebuild(
        &self,
        cluster: &Cluster,
        fingerprint: String,
        secret: Option<Secret>,
    ) -> Result<Arc<Member>> {
        let name = cluster.name_any();
        let secret = match secret {
            Some(secret) => secret,
            None => self.read_secret(cluster).await?,
        };
        let secret_version = secret.resource_version().unwrap_or_default();
        let rejected = Arc::new(AtomicBool::new(false));
        let client = build_watched_client(
            cluster,
            &secret,
            self.timeout,
            self.limit,
            self.fence.as_ref(),
            rejected.clone(),
        )
        .await?;
        let member = Arc::new(Member {
            cluster: name.clone(),
            client: client.clone(),
            informers: Informers::new(client, &name),
            started: Mutex::default(),
            served: Mutex::default(),
            hooks: self.hooks.clone(),
            rejected,
        });
        let mut entries = self.lock();
        if self.closed.load(Ordering::SeqCst) {
            member.shutdown();
            return Ok(member);
        }
        let previous = entries.insert(
            name,
            Entry {
                fingerprint,
                secret_version,
                member: member.clone(),
            },
        );
        drop(entries);
        if let Some(previous) = previous {
            // Keep watching what was watched before, now through the new client.
            previous.member.shutdown();
            for served in previous.member.started_resources() {
                member.informer(&served);
            }
        }
        Ok(member)
    }
}

fn fingerprint(cluster: &Cluster) -> String {
    let spec = &cluster.spec;
    let secret = spec
        .secret_ref
        .as_ref()
        .map(|r| format!("{}/{}", r.namespace, r.name))
        .unwrap_or_default();
    let headers: Vec<String> = spec
        .proxy_header
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    format!(
        "{}|{}|{}|{}|{}",
        spec.api_endpoint,
        secret,
        spec.insecure_skip_tls_verification,
        spec.proxy_url,
        headers.join(",")
    )
}

#[cfg(test)]
mod tests;
