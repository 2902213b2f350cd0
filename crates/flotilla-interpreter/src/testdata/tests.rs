//! The runner against a user-style directory: passing and failing cases, and each comparison rule.

use std::path::Path;

use super::*;

const CUSTOMIZATIONS: &str = r#"
apiVersion: config.karmada.io/v1alpha1
kind: ResourceInterpreterCustomization
metadata:
  name: example
spec:
  target:
    apiVersion: example.io/v1
    kind: Widget
  customizations:
    replicaResource:
      luaScript: |
        function GetReplicas(obj)
          return obj.spec.replicas, {resourceRequest = {cpu = obj.spec.cpu}}
        end
    statusAggregation:
      luaScript: |
        function AggregateStatus(obj, items)
          obj.status = {total = 0, updated = os.date("!%Y-%m-%dT%H:%M:%SZ")}
          for _, item in ipairs(items or {}) do
            obj.status.total = obj.status.total + item.status.count
          end
          return obj
        end
    healthInterpretation:
      luaScript: |
        function InterpretHealth(obj)
          return obj.status.ready
        end
    dependencyInterpretation:
      luaScript: |
        function GetDependencies(obj)
          return {{apiVersion = "v1", kind = "Secret", name = "b"}, {apiVersion = "v1", kind = "ConfigMap", name = "a"}}
        end
"#;

const CASES: &str = r#"
name: replicas and quantities compare by value
operation: interpretreplica
desiredObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}, spec: {replicas: 2, cpu: "1"}}
output:
  replica: 2
  requires:
    resourceRequest: {cpu: 1000m}
---
name: excluded timestamps and empty values
operation: AggregateStatus
desiredObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w, labels: {}}}
statusItems:
  - {clusterName: member1, status: {count: 2}}
  - {ClusterName: member2, STATUS: {count: 3}}
output:
  aggregatedStatus:
    apiVersion: example.io/v1
    kind: Widget
    metadata: {name: w}
    status: {total: 5, updated: "{{EXCLUDE}}"}
---
name: dependencies compare sorted
operation: InterpretDependency
observedObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}}
output:
  dependencies:
    - {apiVersion: v1, kind: ConfigMap, name: a}
    - {apiVersion: v1, kind: Secret, name: b}
---
name: wrong health
operation: InterpretHealth
observedObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}, status: {ready: true}}
output:
  healthy: false
---
name: a whole float is an integer
operation: AggregateStatus
desiredObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}}
statusItems: [{clusterName: m, status: {count: 1}}]
output:
  aggregatedStatus: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}, status: {total: 1.0, updated: "{{EXCLUDE}}"}}
---
name: integers and fractions differ
operation: AggregateStatus
desiredObj: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}}
statusItems: [{clusterName: m, status: {count: 1}}]
output:
  aggregatedStatus: {apiVersion: example.io/v1, kind: Widget, metadata: {name: w}, status: {total: 1.5, updated: "{{EXCLUDE}}"}}
---
name: not enabled
operation: Retain
desiredObj: {apiVersion: example.io/v1, kind: Widget}
observedObj: {apiVersion: example.io/v1, kind: Widget}
---
name: both objects
operation: InterpretHealth
desiredObj: {apiVersion: example.io/v1, kind: Widget}
observedObj: {apiVersion: example.io/v1, kind: Widget}
---
name: unknown output
operation: InterpretHealth
observedObj: {apiVersion: example.io/v1, kind: Widget, status: {ready: true}}
output:
  replica: 1
---
name: script error
operation: InterpretHealth
observedObj: {apiVersion: example.io/v1, kind: Widget}
"#;

fn write(dir: &Path) {
    std::fs::create_dir_all(dir.join("testdata/more")).unwrap();
    std::fs::write(dir.join("customizations.yaml"), CUSTOMIZATIONS).unwrap();
    std::fs::write(dir.join("testdata/cases.yaml"), CASES).unwrap();
    // Every file counts, whatever its name, in subdirectories too.
    std::fs::write(
        dir.join("testdata/more/anything.json"),
        r#"{"name": "json case", "operation": "InterpretHealth", "observedObj": {"apiVersion": "example.io/v1", "kind": "Widget", "status": {"ready": false}}, "output": {"healthy": false}}"#,
    )
    .unwrap();
}

#[test]
fn runner_reports_each_case() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("example.io/v1/Widget"));
    let report = run_dir(dir.path(), &LuaVm::default()).unwrap();
    let outcome = |name: &str| {
        report
            .results
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("{name} ran"))
            .outcome
            .clone()
    };
    assert_eq!(outcome("replicas and quantities compare by value"), Ok(()));
    assert_eq!(outcome("excluded timestamps and empty values"), Ok(()));
    assert_eq!(outcome("dependencies compare sorted"), Ok(()));
    assert_eq!(outcome("json case"), Ok(()));
    assert!(
        outcome("wrong health")
            .unwrap_err()
            .contains("expected false, got true")
    );
    // Karmada re-encodes the expected output to JSON, where Go writes a whole float as an integer.
    assert_eq!(outcome("a whole float is an integer"), Ok(()));
    assert!(outcome("integers and fractions differ").is_err());
    assert_eq!(
        outcome("not enabled"),
        Err("rule is not enabled".to_owned())
    );
    assert!(
        outcome("both objects")
            .unwrap_err()
            .contains("can not specify both")
    );
    assert!(
        outcome("unknown output")
            .unwrap_err()
            .contains("\"replica\" was not produced")
    );
    let err = outcome("script error").unwrap_err();
    assert!(
        err.contains("InterpretHealth") && err.contains("example"),
        "{err}"
    );
    assert!(!report.passed());
    assert_eq!(report.failures().count(), 6, "{report}");
    assert!(
        report.to_string().ends_with("5 passed, 6 failed"),
        "{report}"
    );
}

#[test]
fn a_directory_without_customizations_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        run_dir(dir.path(), &LuaVm::default()),
        Err(TestdataError::Empty(_))
    ));
}
