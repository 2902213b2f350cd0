//! JSON names of the core/v1 messages of cluster-level and controller kinds (Node, Endpoints,
//! PersistentVolumeClaim, ResourceQuota, LimitRange, PodTemplate, ReplicationController), generated like
//! `core_v1.rs`.

use super::json::message;
use k8s_pb::api::core::v1 as core;

message!(core::AttachedVolume {
    name => "name", device_path => "devicePath",
});
message!(core::ConfigMapNodeConfigSource {
    namespace => "namespace", name => "name", uid => "uid", resource_version => "resourceVersion",
    kubelet_config_key => "kubeletConfigKey",
});
message!(core::ContainerImage {
    names => "names", size_bytes => "sizeBytes",
});
message!(core::DaemonEndpoint {
    port => "Port",
});
message!(core::EndpointAddress {
    ip => "ip", hostname => "hostname", node_name => "nodeName", target_ref => "targetRef",
});
message!(core::EndpointPort {
    name => "name" keep, port => "port" keep, protocol => "protocol" keep, app_protocol => "appProtocol" keep,
});
message!(core::EndpointSubset {
    addresses => "addresses", not_ready_addresses => "notReadyAddresses", ports => "ports",
});
message!(core::Endpoints {
    metadata => "metadata", subsets => "subsets",
});
message!(core::LimitRange {
    metadata => "metadata", spec => "spec",
});
message!(core::LimitRangeItem {
    r#type => "type", max => "max", min => "min", default => "default", default_request => "defaultRequest",
    max_limit_request_ratio => "maxLimitRequestRatio",
});
message!(core::LimitRangeSpec {
    limits => "limits",
});
message!(core::Node {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::NodeAddress {
    r#type => "type", address => "address",
});
message!(core::NodeCondition {
    r#type => "type", status => "status", last_heartbeat_time => "lastHeartbeatTime",
    last_transition_time => "lastTransitionTime", reason => "reason", message => "message",
});
message!(core::NodeConfigSource {
    config_map => "configMap",
});
message!(core::NodeConfigStatus {
    assigned => "assigned", active => "active", last_known_good => "lastKnownGood", error => "error",
});
message!(core::NodeDaemonEndpoints {
    kubelet_endpoint => "kubeletEndpoint",
});
message!(core::NodeFeatures {
    supplemental_groups_policy => "supplementalGroupsPolicy",
});
message!(core::NodeRuntimeHandler {
    name => "name", features => "features",
});
message!(core::NodeRuntimeHandlerFeatures {
    recursive_read_only_mounts => "recursiveReadOnlyMounts", user_namespaces => "userNamespaces",
});
message!(core::NodeSpec {
    pod_cidr => "podCIDR", pod_cid_rs => "podCIDRs", provider_id => "providerID", unschedulable => "unschedulable",
    taints => "taints", config_source => "configSource", external_id => "externalID",
});
message!(core::NodeStatus {
    capacity => "capacity", allocatable => "allocatable", phase => "phase", conditions => "conditions",
    addresses => "addresses", daemon_endpoints => "daemonEndpoints", node_info => "nodeInfo", images => "images",
    volumes_in_use => "volumesInUse", volumes_attached => "volumesAttached", config => "config",
    runtime_handlers => "runtimeHandlers", features => "features", declared_features => "declaredFeatures",
});
message!(core::NodeSwapStatus {
    capacity => "capacity",
});
message!(core::NodeSystemInfo {
    machine_id => "machineID", system_uuid => "systemUUID", boot_id => "bootID", kernel_version => "kernelVersion",
    os_image => "osImage", container_runtime_version => "containerRuntimeVersion",
    kubelet_version => "kubeletVersion", kube_proxy_version => "kubeProxyVersion",
    operating_system => "operatingSystem", architecture => "architecture", swap => "swap",
});
message!(core::PodTemplate {
    metadata => "metadata", template => "template",
});
message!(core::ReplicationController {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::ReplicationControllerCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(core::ReplicationControllerSpec {
    replicas => "replicas" keep, min_ready_seconds => "minReadySeconds", selector => "selector",
    template => "template",
});
message!(core::ReplicationControllerStatus {
    replicas => "replicas", fully_labeled_replicas => "fullyLabeledReplicas", ready_replicas => "readyReplicas",
    available_replicas => "availableReplicas", observed_generation => "observedGeneration",
    conditions => "conditions",
});
message!(core::ResourceQuota {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::ResourceQuotaSpec {
    hard => "hard", scopes => "scopes", scope_selector => "scopeSelector",
});
message!(core::ResourceQuotaStatus {
    hard => "hard", used => "used",
});
message!(core::ScopeSelector {
    match_expressions => "matchExpressions",
});
message!(core::ScopedResourceSelectorRequirement {
    scope_name => "scopeName", operator => "operator", values => "values",
});
message!(core::Taint {
    key => "key", value => "value", effect => "effect", time_added => "timeAdded",
});
