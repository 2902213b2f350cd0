//! The ResourceInterpreterWebhookConfiguration CRD, built by hand: its `webhooks` sit at the top level of the
//! object (like admission webhook configurations), which kube's derive cannot express.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionNames, CustomResourceDefinitionSpec,
    CustomResourceDefinitionVersion, CustomResourceValidation, JSONSchemaProps,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use serde_json::json;

use crate::config::v1alpha1::{
    ResourceInterpreterWebhook, ResourceInterpreterWebhookConfiguration,
};

/// The kind's description in the CRD.
pub(super) const DESCRIPTION: &str =
    "ResourceInterpreterWebhookConfiguration registers webhooks that interpret kinds of resources.";

/// The CRD, with a schema generated the way kube's derive generates one, around the top-level `webhooks`.
pub(super) fn crd() -> CustomResourceDefinition {
    type Riwc = ResourceInterpreterWebhookConfiguration;
    let webhook = super::schema_generator()
        .into_root_schema_for::<ResourceInterpreterWebhook>()
        .to_value();
    let schema = json!({
        "type": "object",
        "properties": {
            "webhooks": {
                "description": "The webhooks and the operations and kinds each answers for.",
                "type": "array",
                "items": webhook,
            },
        },
        "required": ["webhooks"],
    });
    let kind = Riwc::kind(&()).into_owned();
    let plural = Riwc::plural(&()).into_owned();
    let group = Riwc::group(&()).into_owned();
    CustomResourceDefinition {
        metadata: ObjectMeta {
            name: Some(format!("{plural}.{group}")),
            ..Default::default()
        },
        spec: CustomResourceDefinitionSpec {
            group,
            names: CustomResourceDefinitionNames {
                categories: Some(vec!["karmada-io".to_owned()]),
                singular: Some(kind.to_ascii_lowercase()),
                kind,
                plural,
                ..Default::default()
            },
            scope: "Cluster".to_owned(),
            versions: vec![CustomResourceDefinitionVersion {
                name: Riwc::version(&()).into_owned(),
                served: true,
                storage: true,
                schema: Some(CustomResourceValidation {
                    open_api_v3_schema: serde_json::from_value::<JSONSchemaProps>(schema).ok(),
                }),
                ..Default::default()
            }],
            ..Default::default()
        },
        status: None,
    }
}
