//! JSON names of the core/v1 messages reachable from the supported core kinds (generated once from k8s-pb's
//! field list and k8s-openapi's JSON names, then kept by hand; `keep` marks Go pointer fields).

use super::json::message;
use k8s_pb::api::core::v1 as core;

message!(core::Affinity {
    node_affinity => "nodeAffinity", pod_affinity => "podAffinity", pod_anti_affinity => "podAntiAffinity",
});
message!(core::AppArmorProfile {
    r#type => "type", localhost_profile => "localhostProfile" keep,
});
message!(core::AwsElasticBlockStoreVolumeSource {
    volume_id => "volumeID", fs_type => "fsType", partition => "partition", read_only => "readOnly",
});
message!(core::AzureDiskVolumeSource {
    disk_name => "diskName", disk_uri => "diskURI", caching_mode => "cachingMode" keep, fs_type => "fsType" keep,
    read_only => "readOnly" keep, kind => "kind" keep,
});
message!(core::AzureFileVolumeSource {
    secret_name => "secretName", share_name => "shareName", read_only => "readOnly",
});
message!(core::CSIVolumeSource {
    driver => "driver", read_only => "readOnly" keep, fs_type => "fsType" keep,
    volume_attributes => "volumeAttributes", node_publish_secret_ref => "nodePublishSecretRef",
});
message!(core::Capabilities {
    add => "add", drop => "drop",
});
message!(core::CephFsVolumeSource {
    monitors => "monitors", path => "path", user => "user", secret_file => "secretFile", secret_ref => "secretRef",
    read_only => "readOnly",
});
message!(core::CinderVolumeSource {
    volume_id => "volumeID", fs_type => "fsType", read_only => "readOnly", secret_ref => "secretRef",
});
message!(core::ClientIpConfig {
    timeout_seconds => "timeoutSeconds" keep,
});
message!(core::ClusterTrustBundleProjection {
    name => "name" keep, signer_name => "signerName" keep, label_selector => "labelSelector",
    optional => "optional" keep, path => "path",
});
message!(core::ConfigMap {
    metadata => "metadata", immutable => "immutable" keep, data => "data", binary_data => "binaryData",
});
message!(core::ConfigMapEnvSource {
    local_object_reference => "localObjectReference" inline, optional => "optional" keep,
});
message!(core::ConfigMapKeySelector {
    local_object_reference => "localObjectReference" inline, key => "key", optional => "optional" keep,
});
message!(core::ConfigMapProjection {
    local_object_reference => "localObjectReference" inline, items => "items", optional => "optional" keep,
});
message!(core::ConfigMapVolumeSource {
    local_object_reference => "localObjectReference" inline, items => "items", default_mode => "defaultMode" keep,
    optional => "optional" keep,
});
message!(core::Container {
    name => "name", image => "image", command => "command", args => "args", working_dir => "workingDir",
    ports => "ports", env_from => "envFrom", env => "env", resources => "resources",
    resize_policy => "resizePolicy", restart_policy => "restartPolicy" keep,
    restart_policy_rules => "restartPolicyRules", volume_mounts => "volumeMounts",
    volume_devices => "volumeDevices", liveness_probe => "livenessProbe", readiness_probe => "readinessProbe",
    startup_probe => "startupProbe", lifecycle => "lifecycle",
    termination_message_path => "terminationMessagePath", termination_message_policy => "terminationMessagePolicy",
    image_pull_policy => "imagePullPolicy", security_context => "securityContext", stdin => "stdin",
    stdin_once => "stdinOnce", tty => "tty",
});
message!(core::ContainerExtendedResourceRequest {
    container_name => "containerName", resource_name => "resourceName", request_name => "requestName",
});
message!(core::ContainerPort {
    name => "name", host_port => "hostPort", container_port => "containerPort", protocol => "protocol",
    host_ip => "hostIP",
});
message!(core::ContainerResizePolicy {
    resource_name => "resourceName", restart_policy => "restartPolicy",
});
message!(core::ContainerRestartRule {
    action => "action", exit_codes => "exitCodes",
});
message!(core::ContainerRestartRuleOnExitCodes {
    operator => "operator", values => "values",
});
message!(core::ContainerState {
    waiting => "waiting", running => "running", terminated => "terminated",
});
message!(core::ContainerStateRunning {
    started_at => "startedAt",
});
message!(core::ContainerStateTerminated {
    exit_code => "exitCode", signal => "signal", reason => "reason", message => "message",
    started_at => "startedAt", finished_at => "finishedAt", container_id => "containerID",
});
message!(core::ContainerStateWaiting {
    reason => "reason", message => "message",
});
message!(core::ContainerStatus {
    name => "name", state => "state", last_state => "lastState", ready => "ready", restart_count => "restartCount",
    image => "image", image_id => "imageID", container_id => "containerID", started => "started",
    allocated_resources => "allocatedResources", resources => "resources", volume_mounts => "volumeMounts",
    user => "user", allocated_resources_status => "allocatedResourcesStatus", stop_signal => "stopSignal",
});
message!(core::ContainerUser {
    linux => "linux",
});
message!(core::DownwardAPIProjection {
    items => "items",
});
message!(core::DownwardAPIVolumeFile {
    path => "path", field_ref => "fieldRef", resource_field_ref => "resourceFieldRef", mode => "mode" keep,
});
message!(core::DownwardAPIVolumeSource {
    items => "items", default_mode => "defaultMode" keep,
});
message!(core::EmptyDirVolumeSource {
    medium => "medium", size_limit => "sizeLimit",
});
message!(core::EnvFromSource {
    prefix => "prefix", config_map_ref => "configMapRef", secret_ref => "secretRef",
});
message!(core::EnvVar {
    name => "name", value => "value", value_from => "valueFrom",
});
message!(core::EnvVarSource {
    field_ref => "fieldRef", resource_field_ref => "resourceFieldRef", config_map_key_ref => "configMapKeyRef",
    secret_key_ref => "secretKeyRef", file_key_ref => "fileKeyRef",
});
message!(core::EphemeralContainer {
    ephemeral_container_common => "ephemeralContainerCommon" inline,
    target_container_name => "targetContainerName",
});
message!(core::EphemeralContainerCommon {
    name => "name", image => "image", command => "command", args => "args", working_dir => "workingDir",
    ports => "ports", env_from => "envFrom", env => "env", resources => "resources",
    resize_policy => "resizePolicy", restart_policy => "restartPolicy" keep,
    restart_policy_rules => "restartPolicyRules", volume_mounts => "volumeMounts",
    volume_devices => "volumeDevices", liveness_probe => "livenessProbe", readiness_probe => "readinessProbe",
    startup_probe => "startupProbe", lifecycle => "lifecycle",
    termination_message_path => "terminationMessagePath", termination_message_policy => "terminationMessagePolicy",
    image_pull_policy => "imagePullPolicy", security_context => "securityContext", stdin => "stdin",
    stdin_once => "stdinOnce", tty => "tty",
});
message!(core::EphemeralVolumeSource {
    volume_claim_template => "volumeClaimTemplate",
});
message!(core::Event {
    metadata => "metadata", involved_object => "involvedObject", reason => "reason", message => "message",
    source => "source", first_timestamp => "firstTimestamp", last_timestamp => "lastTimestamp", count => "count",
    r#type => "type", event_time => "eventTime", series => "series", action => "action", related => "related",
    reporting_component => "reportingComponent", reporting_instance => "reportingInstance",
});
message!(core::EventSeries {
    count => "count", last_observed_time => "lastObservedTime",
});
message!(core::EventSource {
    component => "component", host => "host",
});
message!(core::ExecAction {
    command => "command",
});
message!(core::FcVolumeSource {
    target_ww_ns => "targetWWNs", lun => "lun", fs_type => "fsType", read_only => "readOnly", wwids => "wwids",
});
message!(core::FileKeySelector {
    volume_name => "volumeName", path => "path", key => "key", optional => "optional" keep,
});
message!(core::FlexVolumeSource {
    driver => "driver", fs_type => "fsType", secret_ref => "secretRef", read_only => "readOnly",
    options => "options",
});
message!(core::FlockerVolumeSource {
    dataset_name => "datasetName", dataset_uuid => "datasetUUID",
});
message!(core::GcePersistentDiskVolumeSource {
    pd_name => "pdName", fs_type => "fsType", partition => "partition", read_only => "readOnly",
});
message!(core::GitRepoVolumeSource {
    repository => "repository", revision => "revision", directory => "directory",
});
message!(core::GlusterfsVolumeSource {
    endpoints => "endpoints", path => "path", read_only => "readOnly",
});
message!(core::GrpcAction {
    port => "port", service => "service" keep,
});
message!(core::HostAlias {
    ip => "ip", hostnames => "hostnames",
});
message!(core::HostIp {
    ip => "ip",
});
message!(core::HostPathVolumeSource {
    path => "path", r#type => "type" keep,
});
message!(core::HttpGetAction {
    path => "path", port => "port", host => "host", scheme => "scheme", http_headers => "httpHeaders",
});
message!(core::HttpHeader {
    name => "name", value => "value",
});
message!(core::ImageVolumeSource {
    reference => "reference", pull_policy => "pullPolicy",
});
message!(core::IscsiVolumeSource {
    target_portal => "targetPortal", iqn => "iqn", lun => "lun", iscsi_interface => "iscsiInterface",
    fs_type => "fsType", read_only => "readOnly", portals => "portals", chap_auth_discovery => "chapAuthDiscovery",
    chap_auth_session => "chapAuthSession", secret_ref => "secretRef", initiator_name => "initiatorName" keep,
});
message!(core::KeyToPath {
    key => "key", path => "path", mode => "mode" keep,
});
message!(core::Lifecycle {
    post_start => "postStart", pre_stop => "preStop", stop_signal => "stopSignal" keep,
});
message!(core::LifecycleHandler {
    exec => "exec", http_get => "httpGet", tcp_socket => "tcpSocket", sleep => "sleep",
});
message!(core::LinuxContainerUser {
    uid => "uid", gid => "gid", supplemental_groups => "supplementalGroups",
});
message!(core::LoadBalancerIngress {
    ip => "ip", hostname => "hostname", ip_mode => "ipMode" keep, ports => "ports",
});
message!(core::LoadBalancerStatus {
    ingress => "ingress",
});
message!(core::LocalObjectReference {
    name => "name",
});
message!(core::ModifyVolumeStatus {
    target_volume_attributes_class_name => "targetVolumeAttributesClassName", status => "status",
});
message!(core::Namespace {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::NamespaceCondition {
    r#type => "type", status => "status", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(core::NamespaceSpec {
    finalizers => "finalizers",
});
message!(core::NamespaceStatus {
    phase => "phase", conditions => "conditions",
});
message!(core::NfsVolumeSource {
    server => "server", path => "path", read_only => "readOnly",
});
message!(core::NodeAffinity {
    required_during_scheduling_ignored_during_execution => "requiredDuringSchedulingIgnoredDuringExecution",
    preferred_during_scheduling_ignored_during_execution => "preferredDuringSchedulingIgnoredDuringExecution",
});
message!(core::NodeSelector {
    node_selector_terms => "nodeSelectorTerms",
});
message!(core::NodeSelectorRequirement {
    key => "key", operator => "operator", values => "values",
});
message!(core::NodeSelectorTerm {
    match_expressions => "matchExpressions", match_fields => "matchFields",
});
message!(core::ObjectFieldSelector {
    api_version => "apiVersion", field_path => "fieldPath",
});
message!(core::ObjectReference {
    kind => "kind", namespace => "namespace", name => "name", uid => "uid", api_version => "apiVersion",
    resource_version => "resourceVersion", field_path => "fieldPath",
});
message!(core::PersistentVolumeClaim {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::PersistentVolumeClaimCondition {
    r#type => "type", status => "status", last_probe_time => "lastProbeTime",
    last_transition_time => "lastTransitionTime", reason => "reason", message => "message",
});
message!(core::PersistentVolumeClaimSpec {
    access_modes => "accessModes", selector => "selector", resources => "resources", volume_name => "volumeName",
    storage_class_name => "storageClassName" keep, volume_mode => "volumeMode" keep, data_source => "dataSource",
    data_source_ref => "dataSourceRef", volume_attributes_class_name => "volumeAttributesClassName" keep,
});
message!(core::PersistentVolumeClaimStatus {
    phase => "phase", access_modes => "accessModes", capacity => "capacity", conditions => "conditions",
    allocated_resources => "allocatedResources", allocated_resource_statuses => "allocatedResourceStatuses",
    current_volume_attributes_class_name => "currentVolumeAttributesClassName",
    modify_volume_status => "modifyVolumeStatus",
});
message!(core::PersistentVolumeClaimTemplate {
    metadata => "metadata", spec => "spec",
});
message!(core::PersistentVolumeClaimVolumeSource {
    claim_name => "claimName", read_only => "readOnly",
});
message!(core::PhotonPersistentDiskVolumeSource {
    pd_id => "pdID", fs_type => "fsType",
});
message!(core::Pod {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::PodAffinity {
    required_during_scheduling_ignored_during_execution => "requiredDuringSchedulingIgnoredDuringExecution",
    preferred_during_scheduling_ignored_during_execution => "preferredDuringSchedulingIgnoredDuringExecution",
});
message!(core::PodAffinityTerm {
    label_selector => "labelSelector", namespaces => "namespaces", topology_key => "topologyKey",
    namespace_selector => "namespaceSelector", match_label_keys => "matchLabelKeys",
    mismatch_label_keys => "mismatchLabelKeys",
});
message!(core::PodAntiAffinity {
    required_during_scheduling_ignored_during_execution => "requiredDuringSchedulingIgnoredDuringExecution",
    preferred_during_scheduling_ignored_during_execution => "preferredDuringSchedulingIgnoredDuringExecution",
});
message!(core::PodCertificateProjection {
    signer_name => "signerName", key_type => "keyType", max_expiration_seconds => "maxExpirationSeconds",
    credential_bundle_path => "credentialBundlePath", key_path => "keyPath",
    certificate_chain_path => "certificateChainPath", user_annotations => "userAnnotations",
});
message!(core::PodCondition {
    r#type => "type", observed_generation => "observedGeneration", status => "status",
    last_probe_time => "lastProbeTime", last_transition_time => "lastTransitionTime", reason => "reason",
    message => "message",
});
message!(core::PodDnsConfig {
    nameservers => "nameservers", searches => "searches", options => "options",
});
message!(core::PodDnsConfigOption {
    name => "name", value => "value" keep,
});
message!(core::PodExtendedResourceClaimStatus {
    request_mappings => "requestMappings", resource_claim_name => "resourceClaimName",
});
message!(core::PodIp {
    ip => "ip",
});
message!(core::PodOs {
    name => "name",
});
message!(core::PodReadinessGate {
    condition_type => "conditionType",
});
message!(core::PodResourceClaim {
    name => "name", resource_claim_name => "resourceClaimName",
    resource_claim_template_name => "resourceClaimTemplateName",
});
message!(core::PodResourceClaimStatus {
    name => "name", resource_claim_name => "resourceClaimName",
});
message!(core::PodSchedulingGate {
    name => "name",
});
message!(core::PodSecurityContext {
    se_linux_options => "seLinuxOptions", windows_options => "windowsOptions", run_as_user => "runAsUser" keep,
    run_as_group => "runAsGroup" keep, run_as_non_root => "runAsNonRoot" keep,
    supplemental_groups => "supplementalGroups", supplemental_groups_policy => "supplementalGroupsPolicy" keep,
    fs_group => "fsGroup" keep, sysctls => "sysctls", fs_group_change_policy => "fsGroupChangePolicy" keep,
    seccomp_profile => "seccompProfile", app_armor_profile => "appArmorProfile",
    se_linux_change_policy => "seLinuxChangePolicy" keep,
});
message!(core::PodSpec {
    volumes => "volumes", init_containers => "initContainers", containers => "containers",
    ephemeral_containers => "ephemeralContainers", restart_policy => "restartPolicy",
    termination_grace_period_seconds => "terminationGracePeriodSeconds" keep,
    active_deadline_seconds => "activeDeadlineSeconds" keep, dns_policy => "dnsPolicy",
    node_selector => "nodeSelector", service_account_name => "serviceAccountName",
    service_account => "serviceAccount", automount_service_account_token => "automountServiceAccountToken" keep,
    node_name => "nodeName", host_network => "hostNetwork", host_pid => "hostPID", host_ipc => "hostIPC",
    share_process_namespace => "shareProcessNamespace" keep, security_context => "securityContext",
    image_pull_secrets => "imagePullSecrets", hostname => "hostname", subdomain => "subdomain",
    affinity => "affinity", scheduler_name => "schedulerName", tolerations => "tolerations",
    host_aliases => "hostAliases", priority_class_name => "priorityClassName", priority => "priority" keep,
    dns_config => "dnsConfig", readiness_gates => "readinessGates", runtime_class_name => "runtimeClassName" keep,
    enable_service_links => "enableServiceLinks" keep, preemption_policy => "preemptionPolicy" keep,
    overhead => "overhead", topology_spread_constraints => "topologySpreadConstraints",
    set_hostname_as_fqdn => "setHostnameAsFQDN" keep, os => "os", host_users => "hostUsers" keep,
    scheduling_gates => "schedulingGates", resource_claims => "resourceClaims", resources => "resources",
    hostname_override => "hostnameOverride" keep, workload_ref => "workloadRef",
});
message!(core::PodStatus {
    observed_generation => "observedGeneration", phase => "phase", conditions => "conditions",
    message => "message", reason => "reason", nominated_node_name => "nominatedNodeName", host_ip => "hostIP",
    host_ips => "hostIPs", pod_ip => "podIP", pod_ips => "podIPs", start_time => "startTime",
    init_container_statuses => "initContainerStatuses", container_statuses => "containerStatuses",
    qos_class => "qosClass", ephemeral_container_statuses => "ephemeralContainerStatuses", resize => "resize",
    resource_claim_statuses => "resourceClaimStatuses",
    extended_resource_claim_status => "extendedResourceClaimStatus", allocated_resources => "allocatedResources",
    resources => "resources",
});
message!(core::PodTemplateSpec {
    metadata => "metadata", spec => "spec",
});
message!(core::PortStatus {
    port => "port", protocol => "protocol", error => "error" keep,
});
message!(core::PortworxVolumeSource {
    volume_id => "volumeID", fs_type => "fsType", read_only => "readOnly",
});
message!(core::PreferredSchedulingTerm {
    weight => "weight", preference => "preference",
});
message!(core::Probe {
    handler => "handler" inline, initial_delay_seconds => "initialDelaySeconds",
    timeout_seconds => "timeoutSeconds", period_seconds => "periodSeconds",
    success_threshold => "successThreshold", failure_threshold => "failureThreshold",
    termination_grace_period_seconds => "terminationGracePeriodSeconds" keep,
});
message!(core::ProbeHandler {
    exec => "exec", http_get => "httpGet", tcp_socket => "tcpSocket", grpc => "grpc",
});
message!(core::ProjectedVolumeSource {
    sources => "sources", default_mode => "defaultMode" keep,
});
message!(core::QuobyteVolumeSource {
    registry => "registry", volume => "volume", read_only => "readOnly", user => "user", group => "group",
    tenant => "tenant",
});
message!(core::RbdVolumeSource {
    monitors => "monitors", image => "image", fs_type => "fsType", pool => "pool", user => "user",
    keyring => "keyring", secret_ref => "secretRef", read_only => "readOnly",
});
message!(core::ResourceClaim {
    name => "name", request => "request",
});
message!(core::ResourceFieldSelector {
    container_name => "containerName", resource => "resource", divisor => "divisor",
});
message!(core::ResourceHealth {
    resource_id => "resourceID", health => "health",
});
message!(core::ResourceRequirements {
    limits => "limits", requests => "requests", claims => "claims",
});
message!(core::ResourceStatus {
    name => "name", resources => "resources",
});
message!(core::ScaleIoVolumeSource {
    gateway => "gateway", system => "system", secret_ref => "secretRef", ssl_enabled => "sslEnabled",
    protection_domain => "protectionDomain", storage_pool => "storagePool", storage_mode => "storageMode",
    volume_name => "volumeName", fs_type => "fsType", read_only => "readOnly",
});
message!(core::SeLinuxOptions {
    user => "user", role => "role", r#type => "type", level => "level",
});
message!(core::SeccompProfile {
    r#type => "type", localhost_profile => "localhostProfile" keep,
});
message!(core::Secret {
    metadata => "metadata", immutable => "immutable" keep, data => "data", string_data => "stringData",
    r#type => "type",
});
message!(core::SecretEnvSource {
    local_object_reference => "localObjectReference" inline, optional => "optional" keep,
});
message!(core::SecretKeySelector {
    local_object_reference => "localObjectReference" inline, key => "key", optional => "optional" keep,
});
message!(core::SecretProjection {
    local_object_reference => "localObjectReference" inline, items => "items", optional => "optional" keep,
});
message!(core::SecretVolumeSource {
    secret_name => "secretName", items => "items", default_mode => "defaultMode" keep, optional => "optional" keep,
});
message!(core::SecurityContext {
    capabilities => "capabilities", privileged => "privileged" keep, se_linux_options => "seLinuxOptions",
    windows_options => "windowsOptions", run_as_user => "runAsUser" keep, run_as_group => "runAsGroup" keep,
    run_as_non_root => "runAsNonRoot" keep, read_only_root_filesystem => "readOnlyRootFilesystem" keep,
    allow_privilege_escalation => "allowPrivilegeEscalation" keep, proc_mount => "procMount" keep,
    seccomp_profile => "seccompProfile", app_armor_profile => "appArmorProfile",
});
message!(core::Service {
    metadata => "metadata", spec => "spec", status => "status",
});
message!(core::ServiceAccount {
    metadata => "metadata", secrets => "secrets", image_pull_secrets => "imagePullSecrets",
    automount_service_account_token => "automountServiceAccountToken" keep,
});
message!(core::ServiceAccountTokenProjection {
    audience => "audience", expiration_seconds => "expirationSeconds" keep, path => "path",
});
message!(core::ServicePort {
    name => "name", protocol => "protocol", app_protocol => "appProtocol" keep, port => "port",
    target_port => "targetPort", node_port => "nodePort",
});
message!(core::ServiceSpec {
    ports => "ports", selector => "selector", cluster_ip => "clusterIP", cluster_ips => "clusterIPs",
    r#type => "type", external_ips => "externalIPs", session_affinity => "sessionAffinity",
    load_balancer_ip => "loadBalancerIP", load_balancer_source_ranges => "loadBalancerSourceRanges",
    external_name => "externalName", external_traffic_policy => "externalTrafficPolicy",
    health_check_node_port => "healthCheckNodePort", publish_not_ready_addresses => "publishNotReadyAddresses",
    session_affinity_config => "sessionAffinityConfig", ip_families => "ipFamilies",
    ip_family_policy => "ipFamilyPolicy" keep,
    allocate_load_balancer_node_ports => "allocateLoadBalancerNodePorts" keep,
    load_balancer_class => "loadBalancerClass" keep, internal_traffic_policy => "internalTrafficPolicy" keep,
    traffic_distribution => "trafficDistribution" keep,
});
message!(core::ServiceStatus {
    load_balancer => "loadBalancer", conditions => "conditions",
});
message!(core::SessionAffinityConfig {
    client_ip => "clientIP",
});
message!(core::SleepAction {
    seconds => "seconds",
});
message!(core::StorageOsVolumeSource {
    volume_name => "volumeName", volume_namespace => "volumeNamespace", fs_type => "fsType",
    read_only => "readOnly", secret_ref => "secretRef",
});
message!(core::Sysctl {
    name => "name", value => "value",
});
message!(core::TcpSocketAction {
    port => "port", host => "host",
});
message!(core::Toleration {
    key => "key", operator => "operator", value => "value", effect => "effect",
    toleration_seconds => "tolerationSeconds" keep,
});
message!(core::TopologySpreadConstraint {
    max_skew => "maxSkew", topology_key => "topologyKey", when_unsatisfiable => "whenUnsatisfiable",
    label_selector => "labelSelector", min_domains => "minDomains" keep,
    node_affinity_policy => "nodeAffinityPolicy" keep, node_taints_policy => "nodeTaintsPolicy" keep,
    match_label_keys => "matchLabelKeys",
});
message!(core::TypedLocalObjectReference {
    api_group => "apiGroup", kind => "kind", name => "name",
});
message!(core::TypedObjectReference {
    api_group => "apiGroup", kind => "kind", name => "name", namespace => "namespace",
});
message!(core::Volume {
    name => "name", volume_source => "volumeSource" inline,
});
message!(core::VolumeDevice {
    name => "name", device_path => "devicePath",
});
message!(core::VolumeMount {
    name => "name", read_only => "readOnly", recursive_read_only => "recursiveReadOnly", mount_path => "mountPath",
    sub_path => "subPath", mount_propagation => "mountPropagation", sub_path_expr => "subPathExpr",
});
message!(core::VolumeMountStatus {
    name => "name", mount_path => "mountPath", read_only => "readOnly", recursive_read_only => "recursiveReadOnly",
});
message!(core::VolumeProjection {
    secret => "secret", downward_api => "downwardAPI", config_map => "configMap",
    service_account_token => "serviceAccountToken", cluster_trust_bundle => "clusterTrustBundle",
    pod_certificate => "podCertificate",
});
message!(core::VolumeResourceRequirements {
    limits => "limits", requests => "requests",
});
message!(core::VolumeSource {
    host_path => "hostPath", empty_dir => "emptyDir", gce_persistent_disk => "gcePersistentDisk",
    aws_elastic_block_store => "awsElasticBlockStore", git_repo => "gitRepo", secret => "secret", nfs => "nfs",
    iscsi => "iscsi", glusterfs => "glusterfs", persistent_volume_claim => "persistentVolumeClaim", rbd => "rbd",
    flex_volume => "flexVolume", cinder => "cinder", cephfs => "cephfs", flocker => "flocker",
    downward_api => "downwardAPI", fc => "fc", azure_file => "azureFile", config_map => "configMap",
    vsphere_volume => "vsphereVolume", quobyte => "quobyte", azure_disk => "azureDisk",
    photon_persistent_disk => "photonPersistentDisk", projected => "projected",
    portworx_volume => "portworxVolume", scale_io => "scaleIO", storageos => "storageos", csi => "csi",
    ephemeral => "ephemeral", image => "image",
});
message!(core::VsphereVirtualDiskVolumeSource {
    volume_path => "volumePath", fs_type => "fsType", storage_policy_name => "storagePolicyName",
    storage_policy_id => "storagePolicyID",
});
message!(core::WeightedPodAffinityTerm {
    weight => "weight", pod_affinity_term => "podAffinityTerm",
});
message!(core::WindowsSecurityContextOptions {
    gmsa_credential_spec_name => "gmsaCredentialSpecName" keep, gmsa_credential_spec => "gmsaCredentialSpec" keep,
    run_as_user_name => "runAsUserName" keep, host_process => "hostProcess" keep,
});
message!(core::WorkloadReference {
    name => "name", pod_group => "podGroup", pod_group_replica_key => "podGroupReplicaKey",
});
