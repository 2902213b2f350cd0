//! karmada-webhook's validations served by the controller manager (issue 18 item 2, issue 16 item 8): a protected
//! Deployment and Namespace cannot be deleted until their label is removed, not even by deleting the namespace
//! that holds the Deployment (Karmada's `deletion protection` specs); a ResourceInterpreterCustomization whose Lua
//! does not compile, or whose rule clashes with another's for the same target, is refused.
//!
//! Both worlds check the registration and the refusals: the embedded server calls admission webhooks as
//! kube-apiserver does.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::config::v1alpha1::ResourceInterpreterCustomization;
use k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use kube::Client;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::web_deployment;
use flotilla_e2e::{Env, Options, wait_for};

const LABEL: &str = "resourcetemplate.karmada.io/deletion-protected";
const PROTECTED: &str = "This resource is protected, please make sure to remove the label: resourcetemplate.karmada.io/deletion-protected";

flotilla_e2e::scenario!(
    protected_objects_and_invalid_customizations_are_refused,
    "admission",
    Options::default(),
    admission
);

async fn admission(env: &Env, ns: &str) -> anyhow::Result<()> {
    registered(env).await?;
    let protected_ns = format!("{ns}-protected");
    let holder_ns = format!("{ns}-holder");
    let mut result = refusals(env, ns, &protected_ns).await;
    if result.is_ok() {
        result = held(env, &holder_ns).await;
    }
    // Whatever happened, leave nothing protected behind, or the namespaces could never be deleted.
    unprotect(env, ns, &protected_ns).await;
    unprotect(env, &holder_ns, &holder_ns).await;
    let rics: Api<ResourceInterpreterCustomization> = Api::all(env.karmada.clone());
    for name in ["broken", "first", "second"] {
        let _ = rics
            .delete(&format!("{ns}-{name}"), &DeleteParams::default())
            .await;
    }
    let _ = Api::<Namespace>::all(env.karmada.clone())
        .delete(&protected_ns, &DeleteParams::default())
        .await;
    result
}

/// The controller manager registered Karmada's validating webhooks.
async fn registered(env: &Env) -> anyhow::Result<()> {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(env.karmada.clone());
    let configuration = api.get("validating-config").await?;
    let names: Vec<String> = configuration
        .webhooks
        .unwrap_or_default()
        .into_iter()
        .map(|webhook| webhook.name)
        .collect();
    assert_eq!(
        names,
        [
            "propagationpolicy.karmada.io",
            "clusterpropagationpolicy.karmada.io",
            "overridepolicy.karmada.io",
            "clusteroverridepolicy.karmada.io",
            "config.karmada.io",
            "resourcebinding.karmada.io",
            "clustertaintpolicy.karmada.io",
            "resourceinterpretercustomization.karmada.io",
            "resourcedeletionprotection.karmada.io"
        ]
    );
    Ok(())
}

async fn refusals(env: &Env, ns: &str, protected_ns: &str) -> anyhow::Result<()> {
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), ns);
    let namespaces: Api<Namespace> = Api::all(env.karmada.clone());
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(deployment())?,
        )
        .await?;
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(
                json!({"metadata": {"name": protected_ns, "labels": {LABEL: "Always"}}}),
            )?,
        )
        .await?;

    let refused = deployments.delete("web", &DeleteParams::default()).await;
    expect_refused(
        "deleting the protected Deployment",
        refused.map(|_| ()),
        PROTECTED,
    );
    let refused = namespaces
        .delete(protected_ns, &DeleteParams::default())
        .await;
    expect_refused(
        "deleting the protected Namespace",
        refused.map(|_| ()),
        PROTECTED,
    );
    assert!(deployments.get_opt("web").await?.is_some());
    assert!(namespaces.get_opt(protected_ns).await?.is_some());

    // Another value of the label protects nothing; removing it lifts the protection.
    let never = json!({"metadata": {"labels": {LABEL: "Never"}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&never))
        .await?;
    deployments.delete("web", &DeleteParams::default()).await?;
    wait_for("the Deployment to be gone", || async {
        match deployments.get_opt("web").await {
            Ok(None) => Ok(()),
            Ok(Some(_)) => Err("still there".to_owned()),
            Err(error) => Err(error.to_string()),
        }
    })
    .await?;
    unlabel(&namespaces, protected_ns).await?;
    namespaces
        .delete(protected_ns, &DeleteParams::default())
        .await?;
    namespace_gone(&namespaces, protected_ns).await?;

    customizations(&env.karmada, ns).await
}

/// A protected Deployment in a namespace that is not protected keeps both: the namespace controller's delete of
/// the Deployment is refused like anyone's, so the namespace stays terminating, reporting the refusal in its
/// `NamespaceDeletionContentFailure` condition, until the label goes.
async fn held(env: &Env, holder_ns: &str) -> anyhow::Result<()> {
    let namespaces: Api<Namespace> = Api::all(env.karmada.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": holder_ns}}))?,
        )
        .await?;
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), holder_ns);
    deployments
        .create(
            &PostParams::default(),
            &serde_json::from_value(deployment())?,
        )
        .await?;
    namespaces
        .delete(holder_ns, &DeleteParams::default())
        .await?;
    wait_for(
        "the namespace controller to report the refused delete",
        || async {
            let namespace = namespaces.get(holder_ns).await.map_err(|e| e.to_string())?;
            let refused = namespace
                .status
                .and_then(|s| s.conditions)
                .unwrap_or_default()
                .into_iter()
                .any(|c| {
                    c.type_ == "NamespaceDeletionContentFailure"
                        && c.status == "True"
                        && c.message.as_deref().unwrap_or_default().contains(PROTECTED)
                });
            refused.then_some(()).ok_or_else(|| {
                "no NamespaceDeletionContentFailure=True naming the protection yet".to_owned()
            })
        },
    )
    .await?;
    assert!(
        deployments.get_opt("web").await?.is_some(),
        "the protected Deployment survived its namespace's deletion"
    );
    let unlabelled = json!({"metadata": {"labels": {LABEL: null}}});
    deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&unlabelled))
        .await?;
    namespace_gone(&namespaces, holder_ns).await?;
    Ok(())
}

/// Waits until the namespace `name` (and so all it held) is gone.
async fn namespace_gone(namespaces: &Api<Namespace>, name: &str) -> anyhow::Result<()> {
    wait_for(&format!("namespace {name} to be gone"), || async {
        match namespaces.get_opt(name).await {
            Ok(None) => Ok(()),
            Ok(Some(_)) => Err("still there (terminating)".to_owned()),
            Err(error) => Err(error.to_string()),
        }
    })
    .await
}

async fn customizations(client: &Client, ns: &str) -> anyhow::Result<()> {
    let rics: Api<ResourceInterpreterCustomization> = Api::all(client.clone());
    // A target of this scenario's own, so that other scenarios' customizations never clash with it.
    let kind = format!("Gadget{}", ns.rsplit('-').next().unwrap_or_default());
    let broken = ric(
        &format!("{ns}-broken"),
        &kind,
        json!({"replicaResource": {"luaScript": "function GetReplicas(obj) return string.format( end"}}),
    );
    let refused = rics
        .create(&PostParams::default(), &serde_json::from_value(broken)?)
        .await;
    expect_refused(
        "creating a customization whose Lua does not compile",
        refused.map(|_| ()),
        "InterpreterOperation(InterpretReplica) Lua script error: ",
    );

    let retain = json!({"retention": {"luaScript": "function Retain(desired, observed) return desired end"}});
    rics.create(
        &PostParams::default(),
        &serde_json::from_value(ric(&format!("{ns}-first"), &kind, retain.clone()))?,
    )
    .await?;
    let refused = rics
        .create(
            &PostParams::default(),
            &serde_json::from_value(ric(&format!("{ns}-second"), &kind, retain))?,
        )
        .await;
    expect_refused(
        "creating a customization clashing with another",
        refused.map(|_| ()),
        &format!(
            "conflicting with InterpreterOperation(Retain) of existing ResourceInterpreterCustomization({ns}-first)"
        ),
    );
    // Another operation of the same target does not clash.
    let health = json!({"healthInterpretation": {"luaScript": "function InterpretHealth(observed) return true end"}});
    rics.create(
        &PostParams::default(),
        &serde_json::from_value(ric(&format!("{ns}-second"), &kind, health))?,
    )
    .await?;
    Ok(())
}

fn expect_refused(what: &str, result: Result<(), kube::Error>, message: &str) {
    match result {
        Err(kube::Error::Api(status)) => assert!(
            status.message.contains(message),
            "{what}: refused with {:?}, expected a message containing {message:?}",
            status.message
        ),
        Err(error) => panic!("{what}: failed with {error}, expected a refusal"),
        Ok(()) => panic!("{what}: allowed, expected a refusal containing {message:?}"),
    }
}

fn deployment() -> Value {
    let mut web = web_deployment();
    web["metadata"]["labels"][LABEL] = json!("Always");
    web
}

fn ric(name: &str, kind: &str, customizations: Value) -> Value {
    json!({
        "apiVersion": "config.karmada.io/v1alpha1", "kind": "ResourceInterpreterCustomization",
        "metadata": {"name": name},
        "spec": {"target": {"apiVersion": "e2e.flotilla.io/v1", "kind": kind}, "customizations": customizations}
    })
}

async fn unlabel(namespaces: &Api<Namespace>, name: &str) -> kube::Result<()> {
    let unlabelled = json!({"metadata": {"labels": {LABEL: null}}});
    namespaces
        .patch(name, &PatchParams::default(), &Patch::Merge(&unlabelled))
        .await
        .map(|_| ())
}

/// Best effort: removes the label from what the scenario protected.
async fn unprotect(env: &Env, ns: &str, protected_ns: &str) {
    let unlabelled = json!({"metadata": {"labels": {LABEL: null}}});
    let deployments: Api<Deployment> = Api::namespaced(env.karmada.clone(), ns);
    let _ = deployments
        .patch("web", &PatchParams::default(), &Patch::Merge(&unlabelled))
        .await;
    let _ = unlabel(&Api::all(env.karmada.clone()), protected_ns).await;
}
