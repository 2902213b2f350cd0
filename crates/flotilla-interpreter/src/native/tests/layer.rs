use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
use kube::core::GroupVersionKind;

use super::super::{NativeLayer, enabled};
use crate::layer::{Handles, Layer};

#[test]
fn enabled_rules_follow_the_coverage_matrix() {
    let deployment = GroupVersionKind::gvk("apps", "v1", "Deployment");
    let widget = GroupVersionKind::gvk("example.io", "v1", "Widget");
    let old_deployment = GroupVersionKind::gvk("apps", "v1beta2", "Deployment");
    for op in Op::DISPATCHED {
        assert_eq!(
            enabled(&deployment, &op),
            op != Op::InterpretComponent,
            "{op} on Deployment"
        );
        assert_eq!(
            enabled(&widget, &op),
            op == Op::InterpretStatus,
            "{op} on a custom kind"
        );
        assert_eq!(
            enabled(&old_deployment, &op),
            op == Op::InterpretStatus,
            "{op} matches exact versions only"
        );
    }
    let cron = GroupVersionKind::gvk("batch", "v1", "CronJob");
    assert!(enabled(&cron, &Op::AggregateStatus) && enabled(&cron, &Op::InterpretDependency));
    assert!(!enabled(&cron, &Op::InterpretHealth) && !enabled(&cron, &Op::Retain));
    assert!(!enabled(&deployment, &Op::Prune));
    let layer = NativeLayer::new();
    assert!(
        matches!(layer.handles(&widget, &Op::InterpretStatus), Handles::Yes(rule) if rule.contains("whole-status"))
    );
    assert!(
        matches!(layer.handles(&widget, &Op::InterpretHealth), Handles::No(reason) if reason.contains("example.io/v1, Kind=Widget"))
    );
}
