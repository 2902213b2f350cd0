//! The CustomResourceDefinitions of every kind Flotilla serves.
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;

/// raw
pub fn raw() -> Vec<CustomResourceDefinition> {
    vec![
        crate::policy::v1alpha1::PropagationPolicy::crd(),
        crate::policy::v1alpha1::OverridePolicy::crd(),
        crate::work::v1alpha2::ResourceBinding::crd(),
        crate::work::v1alpha1::Work::crd(),
        crate::cluster::v1alpha1::Cluster::crd(),
        crate::config::v1alpha1::ResourceInterpreterCustomization::crd(),
    ]
}
