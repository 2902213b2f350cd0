//! The bundled customizations: they load, target their directory, and pass their own testdata.

use std::collections::BTreeSet;
use std::path::Path;

use flotilla_api::config::v1alpha1::InterpreterOperation;
use kube::core::GroupVersionKind;
use serde_json::json;

use super::*;
use crate::lua::VmConfig;

fn vm() -> LuaVm {
    LuaVm::new(VmConfig {
        concurrency: 2,
        ..VmConfig::default()
    })
}

#[test]
fn every_bundled_document_loads_and_matches_its_directory() {
    let all = customizations().expect("bundled customizations load");
    assert_eq!(all.len(), 27);
    let kinds: BTreeSet<String> = all
        .iter()
        .map(|ric| format!("{} {}", ric.spec.target.api_version, ric.spec.target.kind))
        .collect();
    assert_eq!(kinds.len(), 27, "one customization per kind");
    for kind in [
        "apps.kruise.io/v1alpha1 BroadcastJob",
        "apps.kruise.io/v1alpha1 CloneSet",
        "apps.kruise.io/v1alpha1 AdvancedCronJob",
        "apps.kruise.io/v1alpha1 DaemonSet",
        "apps.kruise.io/v1alpha1 SidecarSet",
        "apps.kruise.io/v1alpha1 UnitedDeployment",
        "apps.kruise.io/v1beta1 StatefulSet",
        "argoproj.io/v1alpha1 Workflow",
        "batch.volcano.sh/v1alpha1 Job",
        "flink.apache.org/v1beta1 FlinkDeployment",
        "helm.toolkit.fluxcd.io/v2beta1 HelmRelease",
        "kustomize.toolkit.fluxcd.io/v1 Kustomization",
        "source.toolkit.fluxcd.io/v1 GitRepository",
        "source.toolkit.fluxcd.io/v1beta2 Bucket",
        "source.toolkit.fluxcd.io/v1beta2 HelmChart",
        "source.toolkit.fluxcd.io/v1beta2 HelmRepository",
        "source.toolkit.fluxcd.io/v1beta2 OCIRepository",
        "kyverno.io/v1 ClusterPolicy",
        "kyverno.io/v1 Policy",
        "kubeflow.org/v1 Notebook",
        "kubeflow.org/v1 PyTorchJob",
        "kubeflow.org/v1 TFJob",
        "kubeflow.org/v2beta1 MPIJob",
        "ray.io/v1 RayCluster",
        "ray.io/v1 RayJob",
        "ray.io/v1 RayService",
        "sparkoperator.k8s.io/v1beta2 SparkApplication",
    ] {
        assert!(kinds.contains(kind), "{kind} is bundled");
    }
    for ric in all {
        assert_eq!(
            crate::customization::validate_scripts(ric),
            Ok(()),
            "{:?} compiles",
            ric.metadata.name
        );
    }
}

/// The operations Karmada's bundled customization implements for each kind, and nothing else.
#[test]
fn each_kind_implements_the_operations_of_the_inventory() {
    use InterpreterOperation::*;
    let layer = ThirdPartyLayer::new(vm());
    let expect = |api_version: &str, kind: &str, ops: &[InterpreterOperation]| {
        let (group, version) = api_version.split_once('/').unwrap();
        let gvk = GroupVersionKind::gvk(group, version, kind);
        for op in InterpreterOperation::DISPATCHED {
            let handled = matches!(layer.handles(&gvk, &op), Handles::Yes(_));
            assert_eq!(handled, ops.contains(&op), "{api_version} {kind} {op}");
        }
    };
    let flux = [
        InterpretHealth,
        AggregateStatus,
        Retain,
        InterpretStatus,
        InterpretDependency,
    ];
    expect(
        "apps.kruise.io/v1alpha1",
        "AdvancedCronJob",
        &[AggregateStatus, InterpretDependency],
    );
    expect(
        "apps.kruise.io/v1alpha1",
        "BroadcastJob",
        &[
            InterpretReplica,
            ReviseReplica,
            InterpretHealth,
            AggregateStatus,
            Retain,
            InterpretStatus,
            InterpretDependency,
        ],
    );
    let workload = [
        InterpretReplica,
        ReviseReplica,
        AggregateStatus,
        InterpretStatus,
        InterpretHealth,
        InterpretDependency,
    ];
    expect("apps.kruise.io/v1alpha1", "CloneSet", &workload);
    expect("apps.kruise.io/v1beta1", "StatefulSet", &workload);
    expect(
        "apps.kruise.io/v1alpha1",
        "DaemonSet",
        &[
            AggregateStatus,
            InterpretStatus,
            InterpretHealth,
            InterpretDependency,
        ],
    );
    expect(
        "argoproj.io/v1alpha1",
        "Workflow",
        &[
            InterpretReplica,
            ReviseReplica,
            InterpretHealth,
            Retain,
            InterpretDependency,
        ],
    );
    expect("helm.toolkit.fluxcd.io/v2beta1", "HelmRelease", &flux);
    expect("kustomize.toolkit.fluxcd.io/v1", "Kustomization", &flux);
    expect("source.toolkit.fluxcd.io/v1", "GitRepository", &flux);
    for kind in ["Bucket", "HelmChart", "HelmRepository", "OCIRepository"] {
        expect("source.toolkit.fluxcd.io/v1beta2", kind, &flux);
    }
    expect(
        "kyverno.io/v1",
        "ClusterPolicy",
        &[InterpretHealth, AggregateStatus, InterpretStatus],
    );
    expect(
        "kyverno.io/v1",
        "Policy",
        &[InterpretHealth, AggregateStatus, InterpretStatus],
    );
    expect(
        "apps.kruise.io/v1alpha1",
        "SidecarSet",
        &[
            InterpretReplica,
            Retain,
            AggregateStatus,
            InterpretStatus,
            InterpretHealth,
            InterpretDependency,
        ],
    );
    expect("apps.kruise.io/v1alpha1", "UnitedDeployment", &workload);
    expect(
        "batch.volcano.sh/v1alpha1",
        "Job",
        &[
            InterpretComponent,
            InterpretHealth,
            AggregateStatus,
            InterpretStatus,
        ],
    );
    expect(
        "flink.apache.org/v1beta1",
        "FlinkDeployment",
        &[
            InterpretReplica,
            InterpretComponent,
            InterpretHealth,
            AggregateStatus,
            InterpretStatus,
        ],
    );
    expect(
        "kubeflow.org/v1",
        "Notebook",
        &[
            InterpretReplica,
            InterpretHealth,
            AggregateStatus,
            InterpretStatus,
        ],
    );
    let training = [
        InterpretComponent,
        InterpretHealth,
        AggregateStatus,
        InterpretDependency,
    ];
    expect("kubeflow.org/v1", "PyTorchJob", &training);
    expect("kubeflow.org/v1", "TFJob", &training);
    expect(
        "kubeflow.org/v2beta1",
        "MPIJob",
        &[
            InterpretComponent,
            InterpretHealth,
            AggregateStatus,
            InterpretStatus,
        ],
    );
    expect(
        "ray.io/v1",
        "RayCluster",
        &[InterpretComponent, InterpretHealth, AggregateStatus],
    );
    expect("ray.io/v1", "RayJob", &training);
    expect(
        "ray.io/v1",
        "RayService",
        &[
            InterpretReplica,
            ReviseReplica,
            InterpretHealth,
            AggregateStatus,
            InterpretDependency,
        ],
    );
    expect(
        "sparkoperator.k8s.io/v1beta2",
        "SparkApplication",
        &[
            InterpretComponent,
            InterpretHealth,
            AggregateStatus,
            InterpretStatus,
        ],
    );
    // Exact version match: another version of a bundled kind is not handled.
    let other = GroupVersionKind::gvk("apps.kruise.io", "v1beta1", "CloneSet");
    assert!(matches!(
        layer.handles(&other, &InterpretReplica),
        Handles::No(_)
    ));
}

#[test]
fn bundled_testdata_passes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("thirdparty");
    let report = crate::testdata::run_dir(&dir, &vm()).expect("testdata runs");
    assert!(report.passed(), "{report}");
    // Every operation of every kind has at least one case.
    let kinds = report.results.iter().map(|r| {
        r.file
            .parent()
            .and_then(Path::parent)
            .map(Path::to_path_buf)
    });
    assert_eq!(kinds.collect::<BTreeSet<_>>().len(), 27, "{report}");
}

#[tokio::test]
async fn the_layer_answers_through_the_async_contract() {
    let layer = ThirdPartyLayer::new(vm());
    let object = json!({
        "apiVersion": "apps.kruise.io/v1alpha1",
        "kind": "CloneSet",
        "metadata": {"name": "sample", "namespace": "default"},
        "spec": {"replicas": 4, "template": {"spec": {"containers": [{"name": "c", "image": "i"}]}}}
    });
    let response = layer
        .interpret(Request::InterpretReplica {
            object: object.clone(),
        })
        .await
        .unwrap();
    assert_eq!(
        response,
        Response::Replicas {
            replicas: 4,
            requirements: None
        }
    );
    let mut broken = object;
    broken["spec"] = json!(null);
    let err = layer
        .interpret(Request::InterpretReplica { object: broken })
        .await
        .unwrap_err();
    let text = crate::facade::error_text(&err);
    assert!(
        text.contains("third-party") && text.contains("CloneSet default/sample"),
        "{text}"
    );
    assert!(
        text.contains("GetReplicas") && text.contains("declarative-configuration-cloneset"),
        "{text}"
    );
}
