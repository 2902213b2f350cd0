//! What a Pull-mode agent may do in the control plane, as `karmadactl register` grants it to user
//! `system:karmada:agent:<cluster>` and nothing more:
//!
//! * ClusterRole `system:karmada:<cluster>:agent`: its own Cluster (get, delete; `clusters/status` update), Clusters
//!   in general (create, list, watch), the interpreter's configuration (get, list, watch), namespaces (get),
//!   Leases (get, create, update), CertificateSigningRequests (get, create), Services (list, watch) and Events
//!   (create, patch, update; and, beyond Karmada's role, `events.k8s.io` Events, which Flotilla's agent writes);
//! * Role `system:karmada:<cluster>:agent-secret` in `karmada-cluster`: its two reported Secrets (get, patch) and
//!   Secrets in general (create);
//! * Role `system:karmada:<cluster>:agent-work` in `karmada-es-<cluster>`: Works (get, list, watch, create,
//!   update, delete; `works/status` patch, update);
//!
//! each bound to the agent's user alone. So an agent cannot read another member's Works nor write another
//! Cluster.

use flotilla_api::names::{agents, namespaces, registration};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{Error, Result, ensure_namespace, system_labels};

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The field manager of what registration grants.
const FIELD_MANAGER: &str = "flotilla-register";

fn rule(groups: &[&str], resources: &[&str], names: &[&str], verbs: &[&str]) -> PolicyRule {
    let owned = |items: &[&str]| items.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    PolicyRule {
        api_groups: Some(owned(groups)),
        resources: Some(owned(resources)),
        resource_names: (!names.is_empty()).then(|| owned(names)),
        verbs: owned(verbs),
        non_resource_urls: None,
    }
}

fn meta(name: String, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: namespace.map(str::to_owned),
        labels: Some(system_labels()),
        ..ObjectMeta::default()
    }
}

fn agent_subject(cluster: &str) -> Vec<Subject> {
    vec![Subject {
        api_group: Some(RBAC_GROUP.to_owned()),
        kind: "User".to_owned(),
        name: agents::user(cluster),
        namespace: None,
    }]
}

fn role_ref(kind: &str, name: String) -> RoleRef {
    RoleRef {
        api_group: Some(RBAC_GROUP.to_owned()),
        kind: kind.to_owned(),
        name,
    }
}

/// The agent's ClusterRole and its binding.
pub fn cluster_role(cluster: &str) -> (ClusterRole, ClusterRoleBinding) {
    let name = agents::cluster_role(cluster);
    let role = ClusterRole {
        metadata: meta(name.clone(), None),
        rules: Some(vec![
            rule(
                &["cluster.karmada.io"],
                &["clusters"],
                &[cluster],
                &["get", "delete"],
            ),
            rule(
                &["cluster.karmada.io"],
                &["clusters"],
                &[],
                &["create", "list", "watch"],
            ),
            rule(
                &["cluster.karmada.io"],
                &["clusters/status"],
                &[cluster],
                &["update"],
            ),
            rule(
                &["config.karmada.io"],
                &[
                    "resourceinterpreterwebhookconfigurations",
                    "resourceinterpretercustomizations",
                ],
                &[],
                &["get", "list", "watch"],
            ),
            rule(&[""], &["namespaces"], &[], &["get"]),
            rule(
                &["coordination.k8s.io"],
                &["leases"],
                &[],
                &["get", "create", "update"],
            ),
            rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests"],
                &[],
                &["get", "create"],
            ),
            rule(&[""], &["services"], &[], &["list", "watch"]),
            rule(&[""], &["events"], &[], &["patch", "create", "update"]),
            // Beyond Karmada's role: Flotilla's agent publishes `events.k8s.io/v1` Events, karmada-agent core
            // ones; without this an agent's Events (SyncSucceed and the like) would be refused.
            rule(&["events.k8s.io"], &["events"], &[], &["create", "patch"]),
        ]),
        aggregation_rule: None,
    };
    let binding = ClusterRoleBinding {
        metadata: meta(name.clone(), None),
        role_ref: role_ref("ClusterRole", name),
        subjects: Some(agent_subject(cluster)),
    };
    (role, binding)
}

/// The Roles (with their bindings) in `karmada-cluster` and in the execution namespace.
pub fn roles(cluster: &str) -> Vec<(Role, RoleBinding)> {
    let secrets = agents::secret_role(cluster);
    let works = agents::work_role(cluster);
    let execution = namespaces::execution_space(cluster);
    let impersonator = registration::impersonator_secret(cluster);
    let bound = |name: String, namespace: &str, rules: Vec<PolicyRule>| {
        (
            Role {
                metadata: meta(name.clone(), Some(namespace)),
                rules: Some(rules),
            },
            RoleBinding {
                metadata: meta(name.clone(), Some(namespace)),
                role_ref: role_ref("Role", name),
                subjects: Some(agent_subject(cluster)),
            },
        )
    };
    vec![
        bound(
            secrets,
            namespaces::KARMADA_CLUSTER,
            vec![
                rule(
                    &[""],
                    &["secrets"],
                    &[cluster, &impersonator],
                    &["get", "patch"],
                ),
                rule(&[""], &["secrets"], &[], &["create"]),
            ],
        ),
        bound(
            works,
            &execution,
            vec![
                rule(
                    &["work.karmada.io"],
                    &["works"],
                    &[],
                    &["get", "create", "list", "watch", "update", "delete"],
                ),
                rule(
                    &["work.karmada.io"],
                    &["works/status"],
                    &[],
                    &["patch", "update"],
                ),
            ],
        ),
    ]
}

/// Grants the agent of `cluster` its rights in the control plane (creating the namespaces its Roles live in),
/// or brings them back to what they should be. Idempotent.
///
/// # Errors
/// `Kube` naming the object that could not be written.
pub async fn grant(control: &Client, cluster: &str) -> Result<()> {
    ensure_namespace(control, namespaces::KARMADA_CLUSTER, "the control plane").await?;
    ensure_namespace(
        control,
        &namespaces::execution_space(cluster),
        "the control plane",
    )
    .await?;
    let (role, binding) = cluster_role(cluster);
    apply(Api::all(control.clone()), &role).await?;
    apply(Api::all(control.clone()), &binding).await?;
    for (role, binding) in roles(cluster) {
        let namespace = role.namespace().unwrap_or_default();
        apply(Api::namespaced(control.clone(), &namespace), &role).await?;
        apply(Api::namespaced(control.clone(), &namespace), &binding).await?;
    }
    Ok(())
}

/// Takes back what [`grant`] gave the agent of `cluster` (what is already gone is fine; the Role in the
/// execution namespace goes with that namespace, as the cluster controller removes it).
///
/// # Errors
/// `Kube` naming the object that could not be deleted.
pub async fn revoke(control: &Client, cluster: &str) -> Result<()> {
    let (role, binding) = cluster_role(cluster);
    delete(Api::<ClusterRoleBinding>::all(control.clone()), &binding).await?;
    delete(Api::<ClusterRole>::all(control.clone()), &role).await?;
    for (role, binding) in roles(cluster) {
        let namespace = role.namespace().unwrap_or_default();
        delete(
            Api::<RoleBinding>::namespaced(control.clone(), &namespace),
            &binding,
        )
        .await?;
        delete(Api::<Role>::namespaced(control.clone(), &namespace), &role).await?;
    }
    Ok(())
}

async fn delete<K>(api: Api<K>, object: &K) -> Result<()>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    match api.delete(&name, &Default::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(source) => Err(Error::kube(
            "delete",
            format!("{} {name}", K::kind(&())),
            source,
        )),
    }
}

async fn apply<K>(api: Api<K>, object: &K) -> Result<K>
where
    K: Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + std::fmt::Debug,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let what = match object.meta().namespace.as_deref() {
        Some(namespace) => format!("{} {namespace}/{name}", K::kind(&())),
        None => format!("{} {name}", K::kind(&())),
    };
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(object),
    )
    .await
    .map_err(|source| Error::kube("apply", what, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_bound_to_its_own_cluster_and_execution_namespace_only() {
        let (role, binding) = cluster_role("member3");
        assert_eq!(role.name_any(), "system:karmada:member3:agent");
        assert_eq!(binding.role_ref.name, role.name_any());
        let subjects = binding.subjects.unwrap_or_default();
        assert_eq!(subjects.len(), 1);
        assert_eq!(subjects[0].name, "system:karmada:agent:member3");
        let rules = role.rules.unwrap_or_default();
        let status = rules
            .iter()
            .find(|r| r.resources.as_deref() == Some(&["clusters/status".to_owned()]))
            .expect("a clusters/status rule");
        assert_eq!(
            status.resource_names.as_deref(),
            Some(&["member3".to_owned()][..])
        );
        let roles = roles("member3");
        let namespaces: Vec<_> = roles
            .iter()
            .map(|(r, _)| r.namespace().unwrap_or_default())
            .collect();
        assert_eq!(namespaces, ["karmada-cluster", "karmada-es-member3"]);
        let secrets = roles[0].0.rules.clone().unwrap_or_default();
        assert_eq!(
            secrets[0].resource_names.as_deref(),
            Some(&["member3".to_owned(), "member3-impersonator".to_owned()][..])
        );
    }
}
