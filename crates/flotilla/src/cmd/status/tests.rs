use pretty_assertions::assert_eq;
use serde_json::json;

use super::*;

fn snapshot(interpreter: bool) -> Snapshot {
    serde_json::from_value(json!({
        "generatedAt": "2026-11-25T10:00:00Z",
        "interpreter": interpreter,
        "templates": [{
            "template": {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "nginx"},
            "policy": {"apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
                       "namespace": "default", "name": "nginx-propagation"},
            "binding": {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ResourceBinding",
                        "namespace": "default", "name": "nginx-deployment"},
            "replicas": 2,
            "conditions": [{"type": "Scheduled", "status": "True", "reason": "Success", "message": ""}],
            "clusters": [{"name": "member1", "replicas": 1}, {"name": "member2", "replicas": 1}],
            "works": [{"namespace": "karmada-es-member1", "name": "nginx-687f7fb96f", "cluster": "member1",
                       "applied": {"type": "Applied", "status": "True", "reason": "AppliedSuccessful", "message": ""},
                       "health": "Healthy"}],
            "aggregated": [{"cluster": "member1", "applied": true, "appliedMessage": "", "health": "Healthy",
                            "status": {"readyReplicas": 1}},
                           {"cluster": "member2", "applied": false, "appliedMessage": "member2 is unreachable",
                            "health": null, "status": null}],
            "operations": [{"operation": "InterpretHealth", "layer": "webhook", "rule": "workload-hook",
                            "latencyMs": 1.234, "calls": 4, "at": "2026-11-25T09:59:59Z", "failed": false,
                            "lastError": "connection refused", "lastErrorAt": "2026-11-25T09:58:00Z"}]
        }, {
            "template": {"apiVersion": "v1", "kind": "Namespace", "name": "team"},
            "policy": null,
            "binding": {"apiVersion": "work.karmada.io/v1alpha2", "kind": "ClusterResourceBinding", "name": "team-namespace"},
            "replicas": 0, "conditions": [], "clusters": [], "works": [], "aggregated": [], "operations": []
        }]
    }))
    .unwrap()
}

#[test]
fn text_shows_every_step_of_each_journey() {
    let expected = "\
Deployment default/nginx (apps/v1)
  policy        PropagationPolicy default/nginx-propagation
  binding       ResourceBinding default/nginx-deployment, 2 replicas
  scheduled     True Success
  clusters      member1=1 member2=1
  fully applied not yet
  works         member1  karmada-es-member1/nginx-687f7fb96f  Applied=True  Healthy
  status        member1  applied  Healthy  {\"readyReplicas\":1}
                member2  not applied: member2 is unreachable  health unknown  no status
  interpreter   InterpretHealth     webhook (workload-hook)  1.23 ms  4 calls  last error at 2026-11-25T09:58:00Z: connection refused
  events        kubectl get events -n default --field-selector involvedObject.kind=Deployment,involvedObject.name=nginx,involvedObject.namespace=default

Namespace team (v1)
  policy        none
  binding       ClusterResourceBinding team-namespace, 0 replicas
  scheduled     not yet
  clusters      none
  fully applied not yet
  works         none yet
  status        none yet
  interpreter   no call yet
  events        kubectl get events -n default --field-selector involvedObject.kind=Namespace,involvedObject.name=team
";
    assert_eq!(render(&snapshot(true)), expected);
}

#[test]
fn text_says_when_the_layers_are_not_known_and_when_nothing_is_bound() {
    let text = render(&snapshot(false));
    assert!(
        text.contains("  interpreter   not known (read from the API"),
        "{text}"
    );
    assert!(!text.contains("webhook (workload-hook)"), "{text}");
    assert_eq!(
        render(&Snapshot::default()),
        "no template is bound yet: apply a template and a PropagationPolicy that selects it\n"
    );
}

#[test]
fn a_data_dir_without_a_running_up_is_a_one_line_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = page_of_data_dir(Some(dir.path().to_owned())).unwrap_err();
    let text = format!("{err:#}");
    assert!(
        text.starts_with("no flotilla up is running with data dir") && !text.contains('\n'),
        "{text}"
    );
}
