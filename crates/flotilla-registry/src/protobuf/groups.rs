//! JSON names of the networking, policy, scheduling, authentication, discovery and autoscaling messages of the
//! kinds `kubectl create` and controllers write (Ingress, PodDisruptionBudget, PriorityClass, TokenRequest,
//! EndpointSlice, HorizontalPodAutoscaler at `autoscaling/v2` and at `autoscaling/v1`, which kubectl 1.32's
//! `autoscale` sends).

use super::json::message;
use k8s_pb::api::authentication::v1 as authentication;
use k8s_pb::api::autoscaling::v1 as autoscaling_v1;
use k8s_pb::api::autoscaling::v2 as autoscaling;
use k8s_pb::api::discovery::v1 as discovery;
use k8s_pb::api::networking::v1 as networking;
use k8s_pb::api::policy::v1 as policy;
use k8s_pb::api::scheduling::v1 as scheduling;

message!(networking::HttpIngressPath {
    path => "path", path_type => "pathType", backend => "backend",
});
message!(networking::HttpIngressRuleValue {
    paths => "paths",
});
message!(networking::Ingress {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(networking::IngressBackend {
    service => "service", resource => "resource",
});
message!(networking::IngressLoadBalancerIngress {
    ip => "ip", hostname => "hostname", ports => "ports",
});
message!(networking::IngressLoadBalancerStatus {
    ingress => "ingress",
});
message!(networking::IngressPortStatus {
    port => "port", protocol => "protocol", error => "error",
});
message!(networking::IngressRule {
    host => "host", ingress_rule_value => "ingressRuleValue" inline,
});
message!(networking::IngressRuleValue {
    http => "http",
});
message!(networking::IngressServiceBackend {
    name => "name", port => "port",
});
message!(networking::IngressSpec {
    ingress_class_name => "ingressClassName" keep, default_backend => "defaultBackend", tls => "tls",
    rules => "rules",
});
message!(networking::IngressStatus {
    load_balancer => "loadBalancer",
});
message!(networking::IngressTls {
    hosts => "hosts", secret_name => "secretName",
});
message!(networking::ServiceBackendPort {
    name => "name", number => "number",
});
message!(policy::PodDisruptionBudget {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(policy::PodDisruptionBudgetSpec {
    min_available => "minAvailable", selector => "selector", max_unavailable => "maxUnavailable",
    unhealthy_pod_eviction_policy => "unhealthyPodEvictionPolicy",
});
message!(policy::PodDisruptionBudgetStatus {
    observed_generation => "observedGeneration", disrupted_pods => "disruptedPods",
    disruptions_allowed => "disruptionsAllowed", current_healthy => "currentHealthy",
    desired_healthy => "desiredHealthy", expected_pods => "expectedPods", conditions => "conditions",
});
message!(scheduling::PriorityClass {
    metadata => "metadata", value => "value", global_default => "globalDefault", description => "description",
    preemption_policy => "preemptionPolicy" keep,
});
message!(authentication::BoundObjectReference {
    kind => "kind", api_version => "apiVersion", name => "name", u_id => "uid",
});
message!(authentication::TokenRequest {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(authentication::TokenRequestSpec {
    audiences => "audiences", expiration_seconds => "expirationSeconds" keep, bound_object_ref => "boundObjectRef",
});
message!(authentication::TokenRequestStatus {
    token => "token", expiration_timestamp => "expirationTimestamp",
});
message!(discovery::Endpoint {
    addresses => "addresses", conditions => "conditions", hostname => "hostname" keep, target_ref => "targetRef",
    deprecated_topology => "deprecatedTopology", node_name => "nodeName" keep, zone => "zone" keep,
    hints => "hints",
});
message!(discovery::EndpointConditions {
    ready => "ready" keep, serving => "serving" keep, terminating => "terminating" keep,
});
message!(discovery::EndpointHints {
    for_zones => "forZones", for_nodes => "forNodes",
});
message!(discovery::EndpointPort {
    name => "name" keep, protocol => "protocol" keep, port => "port" keep, app_protocol => "appProtocol" keep,
});
message!(discovery::EndpointSlice {
    metadata => "metadata", address_type => "addressType", endpoints => "endpoints", ports => "ports",
});
message!(discovery::ForNode {
    name => "name",
});
message!(discovery::ForZone {
    name => "name",
});
message!(autoscaling::ContainerResourceMetricSource {
    name => "name", target => "target", container => "container",
});
message!(autoscaling::ContainerResourceMetricStatus {
    name => "name", current => "current", container => "container",
});
message!(autoscaling::CrossVersionObjectReference {
    kind => "kind", name => "name", api_version => "apiVersion",
});
message!(autoscaling::ExternalMetricSource {
    metric => "metric", target => "target",
});
message!(autoscaling::ExternalMetricStatus {
    metric => "metric", current => "current",
});
message!(autoscaling::HorizontalPodAutoscaler {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(autoscaling::HorizontalPodAutoscalerBehavior {
    scale_up => "scaleUp", scale_down => "scaleDown",
});
message!(autoscaling::HorizontalPodAutoscalerCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(autoscaling::HorizontalPodAutoscalerSpec {
    scale_target_ref => "scaleTargetRef", min_replicas => "minReplicas" keep, max_replicas => "maxReplicas",
    metrics => "metrics", behavior => "behavior",
});
message!(autoscaling::HorizontalPodAutoscalerStatus {
    observed_generation => "observedGeneration", last_scale_time => "lastScaleTime",
    current_replicas => "currentReplicas", desired_replicas => "desiredReplicas",
    current_metrics => "currentMetrics", conditions => "conditions",
});
message!(autoscaling::HpaScalingPolicy {
    r#type => "type", value => "value", period_seconds => "periodSeconds",
});
message!(autoscaling::HpaScalingRules {
    stabilization_window_seconds => "stabilizationWindowSeconds" keep, select_policy => "selectPolicy" keep,
    policies => "policies", tolerance => "tolerance" keep,
});
message!(autoscaling::MetricIdentifier {
    name => "name", selector => "selector",
});
message!(autoscaling::MetricSpec {
    r#type => "type", object => "object", pods => "pods", resource => "resource",
    container_resource => "containerResource", external => "external",
});
message!(autoscaling::MetricStatus {
    r#type => "type", object => "object", pods => "pods", resource => "resource",
    container_resource => "containerResource", external => "external",
});
message!(autoscaling::MetricTarget {
    r#type => "type", value => "value", average_value => "averageValue",
    average_utilization => "averageUtilization",
});
message!(autoscaling::MetricValueStatus {
    value => "value", average_value => "averageValue", average_utilization => "averageUtilization",
});
message!(autoscaling::ObjectMetricSource {
    described_object => "describedObject", target => "target", metric => "metric",
});
message!(autoscaling::ObjectMetricStatus {
    metric => "metric", current => "current", described_object => "describedObject",
});
message!(autoscaling::PodsMetricSource {
    metric => "metric", target => "target",
});
message!(autoscaling::PodsMetricStatus {
    metric => "metric", current => "current",
});
message!(autoscaling::ResourceMetricSource {
    name => "name", target => "target",
});
message!(autoscaling::ResourceMetricStatus {
    name => "name", current => "current",
});
message!(autoscaling_v1::HorizontalPodAutoscaler {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(autoscaling_v1::HorizontalPodAutoscalerSpec {
    scale_target_ref => "scaleTargetRef", min_replicas => "minReplicas" keep, max_replicas => "maxReplicas",
    target_cpu_utilization_percentage => "targetCPUUtilizationPercentage" keep,
});
message!(autoscaling_v1::HorizontalPodAutoscalerStatus {
    observed_generation => "observedGeneration", last_scale_time => "lastScaleTime",
    current_replicas => "currentReplicas", desired_replicas => "desiredReplicas",
    current_cpu_utilization_percentage => "currentCPUUtilizationPercentage" keep,
});
message!(autoscaling_v1::CrossVersionObjectReference {
    kind => "kind", name => "name", api_version => "apiVersion",
});
