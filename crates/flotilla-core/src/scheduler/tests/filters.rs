//! Filter plugins, their reasons, and the FitError message.

use flotilla_api::names::taints;
use flotilla_api::policy::v1alpha1::{Placement, SpreadConstraint, SpreadFieldValue};
use flotilla_api::work::v1alpha2::GracefulEvictionTask;
use k8s_openapi::api::core::v1::{Taint, Toleration};

use super::*;
use crate::scheduler::ErrorKind;
use crate::scheduler::filter::{self, FitError, tolerates};

fn taint(key: &str, value: Option<&str>, effect: &str) -> Taint {
    Taint {
        key: key.into(),
        value: value.map(Into::into),
        effect: effect.into(),
        time_added: None,
    }
}

fn toleration(
    key: Option<&str>,
    operator: Option<&str>,
    value: Option<&str>,
    effect: Option<&str>,
) -> Toleration {
    Toleration {
        key: key.map(Into::into),
        operator: operator.map(Into::into),
        value: value.map(Into::into),
        effect: effect.map(Into::into),
        toleration_seconds: None,
    }
}

#[test]
fn toleration_semantics() {
    let t = taint("k", Some("v"), "NoSchedule");
    let cases = [
        (
            "equal key and value",
            toleration(Some("k"), None, Some("v"), None),
            true,
        ),
        (
            "explicit Equal",
            toleration(Some("k"), Some("Equal"), Some("v"), Some("NoSchedule")),
            true,
        ),
        (
            "value differs",
            toleration(Some("k"), Some("Equal"), Some("w"), None),
            false,
        ),
        (
            "exists ignores value",
            toleration(Some("k"), Some("Exists"), None, None),
            true,
        ),
        (
            "empty key exists tolerates all",
            toleration(None, Some("Exists"), None, None),
            true,
        ),
        (
            "effect must match",
            toleration(Some("k"), Some("Exists"), None, Some("NoExecute")),
            false,
        ),
        (
            "other key",
            toleration(Some("j"), Some("Exists"), None, None),
            false,
        ),
        (
            "unknown operator",
            toleration(Some("k"), Some("Gt"), Some("v"), None),
            false,
        ),
    ];
    for (what, tol, want) in cases {
        assert_eq!(tolerates(&tol, &t), want, "{what}");
    }
}

#[test]
fn filter_reasons() {
    let spec = binding(1, Placement::default());
    let mut no_api = cluster("m", 10);
    no_api.status.as_mut().unwrap().api_enablements.clear();
    assert_eq!(
        filter::filter(&spec, &Placement::default(), "", &no_api).unwrap_err(),
        filter::REASON_API_MISSING
    );

    let mut tainted = cluster("m", 10);
    tainted.spec.taints = vec![
        taint("a", None, "PreferNoSchedule"),
        taint(taints::NOT_READY, None, "NoSchedule"),
    ];
    assert_eq!(
        filter::filter(&spec, &Placement::default(), "", &tainted).unwrap_err(),
        "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}"
    );
    tainted.spec.taints = vec![taint("team", Some("x"), "NoExecute")];
    assert_eq!(
        filter::filter(&spec, &Placement::default(), "", &tainted).unwrap_err(),
        "cluster(s) had untolerated taint {team=x:NoExecute}"
    );
    let tolerant = Placement {
        cluster_tolerations: vec![toleration(Some("team"), Some("Exists"), None, None)],
        ..Default::default()
    };
    assert_eq!(filter::filter(&spec, &tolerant, "", &tainted), Ok(()));

    let affinity = Placement {
        cluster_affinity: Some(names_affinity(&["other"])),
        ..Default::default()
    };
    assert_eq!(
        filter::filter(&spec, &affinity, "", &cluster("m", 1)).unwrap_err(),
        filter::REASON_AFFINITY
    );

    for (field, reason) in [
        (SpreadFieldValue::Provider, filter::REASON_NO_PROVIDER),
        (SpreadFieldValue::Region, filter::REASON_NO_REGION),
        (SpreadFieldValue::Zone, filter::REASON_NO_ZONES),
    ] {
        let p = Placement {
            spread_constraints: vec![SpreadConstraint {
                spread_by_field: Some(field),
                ..Default::default()
            }],
            ..Default::default()
        };
        assert_eq!(
            filter::filter(&spec, &p, "", &cluster("m", 1)).unwrap_err(),
            reason
        );
    }

    let mut evicting = spec.clone();
    evicting.graceful_eviction_tasks = vec![GracefulEvictionTask {
        from_cluster: "m".into(),
        reason: "X".into(),
        producer: "p".into(),
        ..Default::default()
    }];
    assert_eq!(
        filter::filter(&evicting, &Placement::default(), "", &cluster("m", 1)).unwrap_err(),
        filter::REASON_EVICTING
    );
}

#[test]
fn clusters_already_targeted_skip_api_and_taint_checks() {
    let mut spec = binding(1, Placement::default());
    spec.clusters = targets(&[("m", 1)]);
    let mut c = cluster("m", 10);
    c.status.as_mut().unwrap().api_enablements.clear();
    c.spec.taints = vec![taint(taints::UNREACHABLE, None, "NoSchedule")];
    assert_eq!(filter::filter(&spec, &Placement::default(), "", &c), Ok(()));
}

#[test]
fn fit_error_message_format() {
    let mut no_api = cluster("a", 1);
    no_api.status.as_mut().unwrap().api_enablements.clear();
    let mut not_ready = cluster("b", 1);
    not_ready.spec.taints = vec![taint(taints::NOT_READY, None, "NoSchedule")];
    let mut deleting = cluster("d", 1);
    deleting.metadata.deletion_timestamp = Some(
        k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::UNIX_EPOCH),
    );
    let placement = Placement {
        cluster_affinity: Some(names_affinity(&["a", "b", "d"])),
        ..Default::default()
    };
    let clusters = vec![no_api, not_ready, cluster("c", 1), deleting];
    let outcome = run(&binding(1, placement), &clusters);
    let err = outcome.error.expect("fit error");
    assert_eq!(
        err.message,
        "0/4 clusters are available: 1 cluster(s) did not have the API resource, \
         1 cluster(s) did not match the placement cluster affinity constraint, \
         1 cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}."
    );
    assert!(matches!(err.kind, ErrorKind::NoClusterFit(ref f) if !f.is_transient()));
    assert_eq!(
        outcome.clusters,
        Some(Vec::new()),
        "a FitError patches an empty result"
    );

    assert_eq!(
        FitError::default().to_string(),
        "0/0 clusters are available: no cluster exists."
    );
    // Go sorts the formatted histogram lines as strings.
    let many = FitError {
        num_all_clusters: 12,
        diagnosis: (0..12)
            .map(|i| {
                (
                    format!("c{i}"),
                    if i < 10 {
                        "x".to_owned()
                    } else {
                        "y".to_owned()
                    },
                )
            })
            .collect(),
    };
    assert_eq!(many.to_string(), "0/12 clusters are available: 10 x, 2 y.");
}

#[test]
fn transient_fit_errors() {
    let fit = |reasons: &[&str]| FitError {
        num_all_clusters: reasons.len(),
        diagnosis: reasons
            .iter()
            .enumerate()
            .map(|(i, r)| (i.to_string(), (*r).to_owned()))
            .collect(),
    };
    assert!(fit(&[filter::REASON_API_MISSING]).is_transient());
    assert!(
        fit(&[
            "cluster(s) had untolerated taint {cluster.karmada.io/not-ready:NoSchedule}",
            filter::REASON_API_MISSING
        ])
        .is_transient()
    );
    assert!(
        fit(&["cluster(s) had untolerated taint {cluster.karmada.io/unreachable:NoExecute}"])
            .is_transient()
    );
    assert!(!fit(&[filter::REASON_API_MISSING, filter::REASON_AFFINITY]).is_transient());
    assert!(!fit(&["cluster(s) had untolerated taint {team=x:NoSchedule}"]).is_transient());
    assert!(!fit(&[]).is_transient());
}
