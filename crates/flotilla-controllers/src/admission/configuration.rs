//! The Validating- and MutatingWebhookConfigurations that register karmada-webhook's admission with an API
//! server: Karmada's object and webhook names, paths, rules, selectors, failure policy and timeouts
//! (karmada-webhook's `webhook-configuration.yaml`), pointed at wherever this process serves them.

use std::collections::BTreeMap;

use flotilla_api::names::labels;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use kube::Client;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};

/// The configuration's name, as Karmada's.
pub const CONFIGURATION_NAME: &str = "validating-config";
/// The mutating configuration's name, as Karmada's.
pub const MUTATING_CONFIGURATION_NAME: &str = "mutating-config";
/// The deletion protection webhook's name.
pub const DELETION_PROTECTION_WEBHOOK: &str = "resourcedeletionprotection.karmada.io";
/// Where deletion protection is served.
pub const DELETION_PROTECTION_PATH: &str = "/validate-resourcedeletionprotection";
/// The customization validation webhook's name.
pub const CUSTOMIZATION_WEBHOOK: &str = "resourceinterpretercustomization.karmada.io";
/// Where customization validation is served.
pub const CUSTOMIZATION_PATH: &str = "/validate-resourceinterpretercustomization";
/// The admission of one kind: the webhooks' name, the paths' last part (`/validate-<path>`, `/mutate-<path>`),
/// the kind's group, plural and scope, and the operations its validating and mutating webhooks are sent (none
/// when the kind has no such webhook).
struct KindWebhook {
    name: &'static str,
    path: &'static str,
    group: &'static str,
    plural: &'static str,
    scope: &'static str,
    validated: Option<&'static [&'static str]>,
    mutated: Option<&'static [&'static str]>,
}

const CREATE_UPDATE: Option<&[&str]> = Some(&["CREATE", "UPDATE"]);
const CREATE: Option<&[&str]> = Some(&["CREATE"]);

/// Karmada's webhooks of single kinds, in its order.
const KIND_WEBHOOKS: [KindWebhook; 9] = [
    KindWebhook {
        name: "propagationpolicy.karmada.io",
        path: "propagationpolicy",
        group: "policy.karmada.io",
        plural: "propagationpolicies",
        scope: "Namespaced",
        validated: CREATE_UPDATE,
        mutated: CREATE_UPDATE,
    },
    KindWebhook {
        name: "clusterpropagationpolicy.karmada.io",
        path: "clusterpropagationpolicy",
        group: "policy.karmada.io",
        plural: "clusterpropagationpolicies",
        scope: "Cluster",
        validated: CREATE_UPDATE,
        mutated: CREATE_UPDATE,
    },
    KindWebhook {
        name: "overridepolicy.karmada.io",
        path: "overridepolicy",
        group: "policy.karmada.io",
        plural: "overridepolicies",
        scope: "Namespaced",
        validated: CREATE_UPDATE,
        mutated: CREATE_UPDATE,
    },
    KindWebhook {
        name: "clusteroverridepolicy.karmada.io",
        path: "clusteroverridepolicy",
        group: "policy.karmada.io",
        plural: "clusteroverridepolicies",
        scope: "Cluster",
        validated: CREATE_UPDATE,
        mutated: None,
    },
    KindWebhook {
        name: "config.karmada.io",
        path: "resourceinterpreterwebhookconfiguration",
        group: "config.karmada.io",
        plural: "resourceinterpreterwebhookconfigurations",
        scope: "Cluster",
        validated: CREATE_UPDATE,
        mutated: None,
    },
    KindWebhook {
        name: "resourcebinding.karmada.io",
        path: "resourcebinding",
        group: "work.karmada.io",
        plural: "resourcebindings",
        scope: "Namespaced",
        validated: CREATE_UPDATE,
        mutated: CREATE,
    },
    KindWebhook {
        name: "clusterresourcebinding.karmada.io",
        path: "clusterresourcebinding",
        group: "work.karmada.io",
        plural: "clusterresourcebindings",
        scope: "Cluster",
        validated: None,
        mutated: CREATE,
    },
    KindWebhook {
        name: "work.karmada.io",
        path: "work",
        group: "work.karmada.io",
        plural: "works",
        scope: "Namespaced",
        validated: None,
        mutated: CREATE_UPDATE,
    },
    KindWebhook {
        name: "clustertaintpolicy.karmada.io",
        path: "clustertaintpolicy",
        group: "policy.karmada.io",
        plural: "clustertaintpolicies",
        scope: "Cluster",
        validated: CREATE_UPDATE,
        mutated: None,
    },
];

/// The field manager that registers the configuration.
pub const FIELD_MANAGER: &str = "flotilla-controller-manager";

/// Where the API server reaches the webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A base URL (`https://host:port`, no path); each webhook's path is appended.
    Url(String),
    /// A Service in the control plane; each webhook's path is set on the reference.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// Its port (the API server's default, 443, when unset).
        port: Option<i32>,
    },
}

impl Endpoint {
    fn client_config(&self, path: &str, ca_bundle: Option<&[u8]>) -> WebhookClientConfig {
        let (url, service) = match self {
            Endpoint::Url(base) => (Some(format!("{}{path}", base.trim_end_matches('/'))), None),
            Endpoint::Service {
                namespace,
                name,
                port,
            } => (
                None,
                Some(ServiceReference {
                    namespace: namespace.clone(),
                    name: name.clone(),
                    path: Some(path.to_owned()),
                    port: *port,
                }),
            ),
        };
        WebhookClientConfig {
            ca_bundle: ca_bundle.map(|pem| ByteString(pem.to_vec())),
            url,
            service,
        }
    }
}

/// Karmada's two webhooks, served at `endpoint` with a certificate `ca_bundle` (PEM) verifies (without one, the
/// API server trusts its system roots).
pub fn validating_webhook_configuration(
    endpoint: &Endpoint,
    ca_bundle: Option<&[u8]>,
) -> ValidatingWebhookConfiguration {
    let deletion_protection = ValidatingWebhook {
        name: DELETION_PROTECTION_WEBHOOK.to_owned(),
        rules: Some(vec![rule(&["DELETE"], "*", "*", "*")]),
        client_config: endpoint.client_config(DELETION_PROTECTION_PATH, ca_bundle),
        // Only labelled objects are sent; the webhook then checks the value.
        object_selector: Some(LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: labels::DELETION_PROTECTED.to_owned(),
                operator: "Exists".to_owned(),
                values: None,
            }]),
            match_labels: None,
        }),
        failure_policy: Some("Fail".to_owned()),
        side_effects: "None".to_owned(),
        admission_review_versions: vec!["v1".to_owned()],
        timeout_seconds: Some(3),
        ..ValidatingWebhook::default()
    };
    let customization = ValidatingWebhook {
        name: CUSTOMIZATION_WEBHOOK.to_owned(),
        rules: Some(vec![rule(
            &["CREATE", "UPDATE"],
            "config.karmada.io",
            "resourceinterpretercustomizations",
            "Cluster",
        )]),
        client_config: endpoint.client_config(CUSTOMIZATION_PATH, ca_bundle),
        failure_policy: Some("Fail".to_owned()),
        side_effects: "None".to_owned(),
        admission_review_versions: vec!["v1".to_owned()],
        timeout_seconds: Some(10),
        ..ValidatingWebhook::default()
    };
    let kinds = KIND_WEBHOOKS.iter().filter_map(|kind| {
        Some(ValidatingWebhook {
            name: kind.name.to_owned(),
            rules: Some(vec![kind.rule(kind.validated?)]),
            client_config: endpoint.client_config(&format!("/validate-{}", kind.path), ca_bundle),
            failure_policy: Some("Fail".to_owned()),
            // Karmada's binding validation may record quota usage, which a dry run must not.
            side_effects: if kind.plural == "resourcebindings" {
                "NoneOnDryRun"
            } else {
                "None"
            }
            .to_owned(),
            admission_review_versions: vec!["v1".to_owned()],
            timeout_seconds: Some(3),
            ..ValidatingWebhook::default()
        })
    });
    ValidatingWebhookConfiguration {
        metadata: metadata(CONFIGURATION_NAME),
        webhooks: Some(kinds.chain([customization, deletion_protection]).collect()),
    }
}

/// Karmada's mutating webhooks for the kinds Flotilla defaults at admission, served at `endpoint`.
pub fn mutating_webhook_configuration(
    endpoint: &Endpoint,
    ca_bundle: Option<&[u8]>,
) -> MutatingWebhookConfiguration {
    let webhooks = KIND_WEBHOOKS
        .iter()
        .filter_map(|kind| {
            Some(MutatingWebhook {
                name: kind.name.to_owned(),
                rules: Some(vec![kind.rule(kind.mutated?)]),
                client_config: endpoint.client_config(&format!("/mutate-{}", kind.path), ca_bundle),
                failure_policy: Some("Fail".to_owned()),
                side_effects: "None".to_owned(),
                admission_review_versions: vec!["v1".to_owned()],
                timeout_seconds: Some(3),
                ..MutatingWebhook::default()
            })
        })
        .collect();
    MutatingWebhookConfiguration {
        metadata: metadata(MUTATING_CONFIGURATION_NAME),
        webhooks: Some(webhooks),
    }
}

fn metadata(name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        labels: Some(BTreeMap::from([(
            "app".to_owned(),
            "karmada-webhook".to_owned(),
        )])),
        ..ObjectMeta::default()
    }
}

impl KindWebhook {
    /// The rule sending the kind's `operations` to a webhook.
    fn rule(&self, operations: &[&str]) -> RuleWithOperations {
        rule(operations, self.group, self.plural, self.scope)
    }
}

fn rule(operations: &[&str], group: &str, resource: &str, scope: &str) -> RuleWithOperations {
    RuleWithOperations {
        operations: Some(operations.iter().map(|op| (*op).to_owned()).collect()),
        api_groups: Some(vec![group.to_owned()]),
        api_versions: Some(vec!["*".to_owned()]),
        resources: Some(vec![resource.to_owned()]),
        scope: Some(scope.to_owned()),
    }
}

/// Creates or updates a configuration (server-side apply, forced: this process owns it; k8s-openapi writes its
/// `apiVersion` and `kind`).
///
/// # Errors
/// When the API server refuses the write.
pub async fn register<K>(client: &Client, configuration: &K) -> crate::Result<()>
where
    K: kube::Resource<DynamicType = (), Scope = k8s_openapi::ClusterResourceScope>
        + Clone
        + serde::Serialize
        + serde::de::DeserializeOwned
        + std::fmt::Debug,
{
    let api: Api<K> = Api::all(client.clone());
    let name = configuration.meta().name.clone().unwrap_or_default();
    api.patch(
        &name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(configuration),
    )
    .await
    .map_err(|source| crate::Error::Kube {
        action: "apply",
        object: format!("{} {name}", K::kind(&())),
        source,
    })?;
    Ok(())
}
