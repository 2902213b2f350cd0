//! The few gnostic `openapi.v2` messages our v2 document uses, encoded with prost.
//!
//! Field numbers follow gnostic's `OpenAPIv2.proto`. `oneof` members are declared as plain optional fields with
//! the same numbers, which is the same wire encoding.

use super::{PATCH_QUERY_PARAMETERS, ServedResource, TITLE};
use prost::Message;

#[derive(Clone, PartialEq, Message)]
pub(super) struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Definitions {}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Paths {
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct PathItem {
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct Operation {
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `oneof { Parameter parameter = 1; JsonReference json_reference = 2; }`
#[derive(Clone, PartialEq, Message)]
pub(super) struct ParametersItem {
    #[prost(message, optional, tag = "1")]
    pub parameter: Option<Parameter>,
}

/// `oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; }`
#[derive(Clone, PartialEq, Message)]
pub(super) struct Parameter {
    #[prost(message, optional, tag = "2")]
    pub non_body_parameter: Option<NonBodyParameter>,
}

/// `oneof { ...; QueryParameterSubSchema query_parameter_sub_schema = 3; ... }`
#[derive(Clone, PartialEq, Message)]
pub(super) struct NonBodyParameter {
    #[prost(message, optional, tag = "3")]
    pub query_parameter_sub_schema: Option<QueryParameterSubSchema>,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct QueryParameterSubSchema {
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
}

#[derive(Clone, PartialEq, Message)]
pub(super) struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// gnostic's `Any`: extension values travel as YAML text (field 2).
#[derive(Clone, PartialEq, Message)]
pub(super) struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// YAML for a `x-kubernetes-group-version-kind` value; the empty core group is quoted as YAML requires.
fn gvk_yaml(r: &ServedResource<'_>) -> String {
    let group = if r.group.is_empty() {
        "\"\"".to_string()
    } else {
        r.group.to_string()
    };
    format!("group: {group}\nkind: {}\nversion: {}\n", r.kind, r.version)
}

fn query_parameter(name: &str, ty: &str) -> ParametersItem {
    ParametersItem {
        parameter: Some(Parameter {
            non_body_parameter: Some(NonBodyParameter {
                query_parameter_sub_schema: Some(QueryParameterSubSchema {
                    r#in: "query".into(),
                    name: name.into(),
                    r#type: ty.into(),
                    unique_items: true,
                }),
            }),
        }),
    }
}

fn patch_operation(r: &ServedResource<'_>) -> Operation {
    Operation {
        operation_id: r.operation_id(),
        produces: vec!["application/json".into(), "application/yaml".into()],
        consumes: r
            .patch_types(false)
            .into_iter()
            .map(str::to_string)
            .collect(),
        parameters: PATCH_QUERY_PARAMETERS
            .iter()
            .map(|(name, ty)| query_parameter(name, ty))
            .collect(),
        vendor_extension: vec![
            NamedAny {
                name: "x-kubernetes-action".into(),
                value: Some(Any {
                    yaml: "patch\n".into(),
                }),
            },
            NamedAny {
                name: "x-kubernetes-group-version-kind".into(),
                value: Some(Any { yaml: gvk_yaml(r) }),
            },
        ],
    }
}

pub(super) fn build(resources: &[ServedResource<'_>], server_version: &str) -> Document {
    let path = resources
        .iter()
        .map(|r| NamedPathItem {
            name: r.object_path(),
            value: Some(PathItem {
                patch: Some(patch_operation(r)),
            }),
        })
        .collect();
    Document {
        swagger: "2.0".into(),
        info: Some(Info {
            title: TITLE.into(),
            version: server_version.into(),
        }),
        paths: Some(Paths { path }),
        definitions: Some(Definitions {}),
    }
}

pub(super) fn document(resources: &[ServedResource<'_>], server_version: &str) -> Vec<u8> {
    build(resources, server_version).encode_to_vec()
}
