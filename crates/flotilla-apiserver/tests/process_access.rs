//! kubectl (the PyPI 1.37 build and the machine's 1.32 dispatcher) on kinds and subresources beyond plain
//! CRUD: `autoscale` (1.32 writes `autoscaling/v1`, 1.37 `autoscaling/v2`: one object, two views), `auth can-i`
//! and `auth whoami` (review resources posted as protobuf), `create token` (bound ServiceAccount tokens),
//! PriorityClasses, and the stored-only kinds a Karmada installation applies (webhook configurations,
//! APIServices, RuntimeClasses); what a fresh cluster shows (the `kubernetes` Service, `kube-root-ca.crt`, which
//! the Python client verifies the server with) and the Pod admission defaults `kubectl run` gets.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use crate::support;

use serde_json::json;
use support::{Harness, get_json, header, kubectl_bins, kubectl_namespaces, must, must_quiet, row};

#[test]
fn autoscale_writes_either_hpa_version_and_both_read_the_same_object() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (_, bin, ns) in &kubectl_namespaces(kc, "hpa") {
        must(
            bin,
            kc,
            &["-n", ns, "create", "deployment", "web", "--image=nginx"],
        );
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "autoscale",
                "deployment",
                "web",
                "--max=4",
                "--cpu-percent=60",
            ],
        );
        let v2 = get_json(
            bin,
            kc,
            &[
                "-n",
                ns,
                "get",
                "horizontalpodautoscalers.v2.autoscaling",
                "web",
            ],
        );
        assert_eq!(v2["spec"]["minReplicas"], 1, "{v2}");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}])
        );
        let v1 = get_json(
            bin,
            kc,
            &[
                "-n",
                ns,
                "get",
                "horizontalpodautoscalers.v1.autoscaling",
                "web",
            ],
        );
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60, "{v1}");
        assert_eq!(v1["metadata"]["uid"], v2["metadata"]["uid"]);
        must(
            bin,
            kc,
            &[
                "-n",
                ns,
                "patch",
                "horizontalpodautoscalers.v1.autoscaling",
                "web",
                "-p",
                r#"{"spec":{"targetCPUUtilizationPercentage":75}}"#,
            ],
        );
        let table = must_quiet(bin, kc, &["-n", ns, "get", "hpa"]);
        assert_eq!(
            header(&table),
            [
                "NAME",
                "REFERENCE",
                "TARGETS",
                "MINPODS",
                "MAXPODS",
                "REPLICAS",
                "AGE"
            ]
        );
        assert!(
            table.contains("Deployment/web") && table.contains("cpu: <unknown>/75%"),
            "{table}"
        );
        let described = must_quiet(bin, kc, &["-n", ns, "describe", "hpa", "web"]);
        assert!(
            described.contains("/ 75%") && described.contains("Min replicas:"),
            "{described}"
        );
    }
}

#[test]
fn auth_can_i_and_whoami_answer_for_the_admin() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for bin in kubectl_bins() {
        assert_eq!(
            must_quiet(&bin, kc, &["auth", "can-i", "create", "pods"]).trim(),
            "yes"
        );
        assert_eq!(
            must_quiet(&bin, kc, &["auth", "can-i", "get", "/healthz"]).trim(),
            "yes"
        );
        let rules = must_quiet(&bin, kc, &["auth", "can-i", "--list", "-n", "default"]);
        assert!(rules.contains("*.*"), "{rules}");
        let me = get_json(&bin, kc, &["auth", "whoami"]);
        assert_eq!(me["status"]["userInfo"]["username"], "system:admin", "{me}");
        // A bound token from `create token` authenticates as its ServiceAccount.
        let sa = format!("bot{}", bin.len());
        must(&bin, kc, &["create", "serviceaccount", &sa]);
        let token = must_quiet(&bin, kc, &["create", "token", &sa]);
        let as_bot = get_json(&bin, kc, &["--token", token.trim(), "auth", "whoami"]);
        assert_eq!(
            as_bot["status"]["userInfo"]["username"],
            format!("system:serviceaccount:default:{sa}")
        );
        let creatable = must_quiet(&bin, kc, &["api-resources", "--verbs=create", "-o", "name"]);
        assert!(
            creatable.contains("selfsubjectaccessreviews.authorization.k8s.io"),
            "{creatable}"
        );
        let listable = must_quiet(&bin, kc, &["api-resources", "--verbs=list", "-o", "name"]);
        assert!(
            !listable.contains("review"),
            "reviews cannot be listed:\n{listable}"
        );
    }
}

#[test]
fn priority_classes_are_served_with_the_system_ones_seeded() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let name = format!("high{i}");
        must(
            bin,
            kc,
            &[
                "create",
                "priorityclass",
                &name,
                "--value=1000",
                "--description=important",
            ],
        );
        let table = must_quiet(bin, kc, &["get", "pc"]);
        assert_eq!(
            header(&table),
            ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
        );
        for want in [
            name.as_str(),
            "system-node-critical",
            "system-cluster-critical",
            "PreemptLowerPriority",
        ] {
            assert!(table.contains(want), "{bin} get pc lacks {want}:\n{table}");
        }
        let described = must_quiet(bin, kc, &["describe", "priorityclass", &name]);
        assert!(
            described.contains("important") && described.contains("1000"),
            "{described}"
        );
    }
}

fn karmada_install(operations: &str) -> String {
    format!(
        r#"apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {{name: karmada-config}}
webhooks:
- name: propagationpolicy.karmada.io
  rules:
  - {{operations: [{operations}], apiGroups: ["policy.karmada.io"], apiVersions: ["*"], resources: ["propagationpolicies"]}}
  clientConfig: {{url: "https://karmada-webhook.karmada-system.svc:443/validate-propagationpolicy"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {{name: mutating-config}}
webhooks:
- name: propagationpolicy.karmada.io
  rules:
  - {{operations: ["CREATE"], apiGroups: ["policy.karmada.io"], apiVersions: ["*"], resources: ["propagationpolicies"]}}
  clientConfig: {{url: "https://karmada-webhook.karmada-system.svc:443/mutate-propagationpolicy"}}
  sideEffects: None
  admissionReviewVersions: ["v1"]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {{name: v1alpha1.cluster.karmada.io}}
spec:
  group: cluster.karmada.io
  version: v1alpha1
  groupPriorityMinimum: 2000
  versionPriority: 10
  service: {{name: karmada-aggregated-apiserver, namespace: karmada-system}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: gvisor}}
handler: runsc
"#
    )
}

#[test]
fn a_karmada_installs_webhook_configurations_apiservices_and_runtime_classes_apply_again_and_again()
{
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let first = h.file("install1.yaml", &karmada_install(r#""CREATE""#));
    let second = h.file("install2.yaml", &karmada_install(r#""CREATE", "UPDATE""#));
    for bin in kubectl_bins() {
        // Re-applying needs the webhooks list to merge by name, as upstream's patch metadata says.
        must(&bin, kc, &["apply", "-f", &first]);
        must(&bin, kc, &["apply", "-f", &second]);
        let (code, out, err) = support::kubectl_split(&bin, kc, &["diff", "-f", &second]);
        assert_eq!(code, Some(0), "{out}{err}");
        let webhook = get_json(
            &bin,
            kc,
            &["get", "validatingwebhookconfiguration", "karmada-config"],
        );
        let hook = &webhook["webhooks"][0];
        assert_eq!(hook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]));
        assert_eq!(hook["rules"][0]["scope"], "*", "{webhook}");
        assert_eq!(hook["failurePolicy"], "Fail");
        assert_eq!(hook["timeoutSeconds"], 10);
        let tables = must_quiet(
            &bin,
            kc,
            &[
                "get",
                "validatingwebhookconfigurations,apiservices,runtimeclasses",
            ],
        );
        for want in [
            "WEBHOOKS",
            "karmada-system/karmada-aggregated-apiserver",
            // The aggregator's availability check, in kube-aggregator's words (no such Service here).
            "False (ServiceNotFound)",
            "HANDLER",
            "runsc",
        ] {
            assert!(tables.contains(want), "{bin} lacks {want}:\n{tables}");
        }
    }
}

/// What `kubectl get` shows of a fresh cluster (the `kubernetes` Service, the CA ConfigMap) and what `kubectl
/// run` gets from Pod admission: the `default` ServiceAccount and its token volume (unless automount is off), the
/// two 300 s NoExecute tolerations, priority 0
/// or the named class's value, and a refusal for a class that does not exist.
#[test]
fn a_fresh_cluster_and_pod_admission_look_like_kube_apiserver() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let port = h.port().to_string();
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let svcs = must_quiet(bin, kc, &["get", "svc", "-n", "default"]);
        assert_eq!(
            row(&svcs, "kubernetes")[..5],
            ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
        );
        // v1 Endpoints answer with kube-apiserver's deprecation warning; EndpointSlices without one.
        let (code, eps, warning) =
            support::kubectl_split(bin, kc, &["get", "ep", "kubernetes", "-n", "default"]);
        assert_eq!(code, Some(0), "{eps}{warning}");
        assert_eq!(
            warning.trim(),
            "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
        );
        assert_eq!(row(&eps, "kubernetes")[1], format!("127.0.0.1:{port}"));
        let slices = must_quiet(bin, kc, &["get", "endpointslices", "-n", "default"]);
        assert_eq!(
            header(&slices),
            ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
        );
        assert_eq!(
            row(&slices, "kubernetes")[1..4],
            ["IPv4", &port, "127.0.0.1"]
        );
        let bindings = must_quiet(bin, kc, &["get", "clusterrolebinding", "-o", "wide"]);
        let admin = row(&bindings, "cluster-admin");
        assert_eq!(admin[1], "ClusterRole/cluster-admin", "{bindings}");
        assert!(admin.contains(&"system:masters".to_string()), "{bindings}");
        let described = must_quiet(bin, kc, &["describe", "clusterrole", "cluster-admin"]);
        assert!(
            described.contains("*.*") && described.contains("[*]"),
            "{described}"
        );
        let cms = must_quiet(bin, kc, &["get", "cm", "-n", "kube-system"]);
        assert_eq!(row(&cms, "kube-root-ca.crt")[1], "1", "{cms}");

        let plain = format!("plain{i}");
        must(bin, kc, &["run", &plain, "--image=nginx"]);
        let pod = get_json(bin, kc, &["get", "pod", &plain]);
        let spec = &pod["spec"];
        assert_eq!(spec["serviceAccountName"], json!("default"), "{pod}");
        assert_eq!(spec["priority"], json!(0), "{pod}");
        assert_eq!(spec["preemptionPolicy"], json!("PreemptLowerPriority"));
        let volume = spec["volumes"][0]["name"].as_str().unwrap_or_default();
        assert!(volume.starts_with("kube-api-access-"), "{pod}");
        assert_eq!(
            spec["containers"][0]["volumeMounts"],
            json!([{"name": volume, "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}])
        );
        assert_eq!(
            spec["tolerations"],
            json!([
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ])
        );
        let critical = format!("critical{i}");
        must(
            bin,
            kc,
            &[
                "run",
                &critical,
                "--image=nginx",
                r#"--overrides={"spec":{"priorityClassName":"system-cluster-critical","automountServiceAccountToken":false}}"#,
            ],
        );
        let pod = get_json(bin, kc, &["get", "pod", &critical]);
        assert_eq!(pod["spec"]["priority"], json!(2_000_000_000), "{pod}");
        assert!(pod["spec"].get("volumes").is_none(), "{pod}");
        let (ok, text) = support::kubectl(
            bin,
            kc,
            &[
                "run",
                "nope",
                "--image=nginx",
                r#"--overrides={"spec":{"priorityClassName":"missing"}}"#,
            ],
        );
        assert!(
            !ok && text.contains(
                r#"pods "nope" is forbidden: no PriorityClass with name missing was found"#
            ),
            "{bin}: {text}"
        );
    }
}

/// The Python client, configured the way an in-cluster client is (the CA from `kube-root-ca.crt`, a bearer
/// token), verifies the server with it.
#[test]
fn python_client_trusts_the_published_ca() {
    let h = Harness::start();
    let script = r#"
import sys, tempfile
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
base = client.Configuration.get_default_copy()
ca = client.CoreV1Api().read_namespaced_config_map("kube-root-ca.crt", "default").data["ca.crt"]
with tempfile.NamedTemporaryFile("w", suffix=".crt", delete=False) as f:
    f.write(ca)
cfg = client.Configuration()
cfg.host, cfg.api_key, cfg.ssl_ca_cert, cfg.verify_ssl = base.host, base.api_key, f.name, True
v1 = client.CoreV1Api(client.ApiClient(cfg))
assert v1.read_namespaced_service("kubernetes", "default").spec.ports[0].port == 443
assert v1.read_namespaced_service_account("default", "default").metadata.name == "default"
print("ok")
"#;
    support::run_python(script, &h.kubeconfig);
}

/// DefaultIngressClass and DefaultStorageClass: new Ingresses and claims that name no class get the default
/// one (the newest StorageClass when several are marked); two default IngressClasses refuse such an Ingress.
#[test]
fn ingresses_and_claims_get_the_default_class() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let classes = h.file(
        "classes.yaml",
        r#"apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: nginx, annotations: {ingressclass.kubernetes.io/is-default-class: "true"}}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: standard, annotations: {storageclass.kubernetes.io/is-default-class: "true"}}
provisioner: rancher.io/local-path
"#,
    );
    let claim = |name: &str, class: &str| {
        format!(
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {{name: {name}}}\nspec: {{{class}accessModes: [ReadWriteOnce], resources: {{requests: {{storage: 1Gi}}}}}}\n"
        )
    };
    for (i, bin) in kubectl_bins().iter().enumerate() {
        must(bin, kc, &["apply", "-f", &classes]);
        let ing = format!("web{i}");
        let rule = format!("--rule=foo{i}.com/bar=svc1:8080");
        must(bin, kc, &["create", "ingress", &ing, &rule]);
        let got = get_json(bin, kc, &["get", "ingress", &ing]);
        assert_eq!(got["spec"]["ingressClassName"], json!("nginx"), "{got}");
        let (pvc, none) = (format!("data{i}"), format!("none{i}"));
        let file = h.file("pvc.yaml", &claim(&pvc, ""));
        must(bin, kc, &["apply", "-f", &file]);
        let got = get_json(bin, kc, &["get", "pvc", &pvc]);
        assert_eq!(got["spec"]["storageClassName"], json!("standard"), "{got}");
        // An empty class name means "no class" and stays.
        let file = h.file("pvc.yaml", &claim(&none, "storageClassName: '', "));
        must(bin, kc, &["apply", "-f", &file]);
        let got = get_json(bin, kc, &["get", "pvc", &none]);
        assert_eq!(got["spec"]["storageClassName"], json!(""), "{got}");
    }
    let bin = &kubectl_bins()[0];
    let other = h.file(
        "other.yaml",
        "apiVersion: networking.k8s.io/v1\nkind: IngressClass\nmetadata: {name: other}\nspec: {controller: example.com/x}\n",
    );
    must(bin, kc, &["apply", "-f", &other]);
    // A second default StorageClass, created later (or in the same second, when the name breaks the tie): it wins.
    let fast = h.file(
        "fast.yaml",
        "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: fast, annotations: {storageclass.kubernetes.io/is-default-class: \"true\"}}\nprovisioner: example.com/fast\n",
    );
    must(bin, kc, &["apply", "-f", &fast]);
    let file = h.file("pvc.yaml", &claim("later", ""));
    must(bin, kc, &["apply", "-f", &file]);
    let got = get_json(bin, kc, &["get", "pvc", "later"]);
    assert_eq!(got["spec"]["storageClassName"], json!("fast"), "{got}");
    let ann = "ingressclass.kubernetes.io/is-default-class=true";
    must(bin, kc, &["annotate", "ingressclass", "other", ann]);
    let (ok, text) = support::kubectl(
        bin,
        kc,
        &["create", "ingress", "late", "--rule=x.com/=s:80"],
    );
    assert!(
        !ok && text.contains("2 default IngressClasses were found, only 1 allowed"),
        "{text}"
    );
}

/// LimitRanger: a Pod created in a namespace with a LimitRange gets its container defaults (the LimitRange's
/// own defaults filled from max) and the annotation naming what was set.
#[test]
fn limit_ranges_default_new_pods() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let range = h.file(
        "range.yaml",
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: limits}\nspec:\n  limits:\n  - type: Container\n    max: {cpu: '2'}\n    defaultRequest: {memory: 64Mi}\n",
    );
    for (i, bin) in kubectl_bins().iter().enumerate() {
        must(bin, kc, &["apply", "-f", &range]);
        let stored = get_json(bin, kc, &["get", "limitrange", "limits"]);
        assert_eq!(stored["spec"]["limits"][0]["default"], json!({"cpu": "2"}));
        let pod = format!("limited{i}");
        must(bin, kc, &["run", &pod, "--image=nginx"]);
        let got = get_json(bin, kc, &["get", "pod", &pod]);
        assert_eq!(
            got["spec"]["containers"][0]["resources"],
            json!({"limits": {"cpu": "2"}, "requests": {"cpu": "2", "memory": "64Mi"}}),
            "{got}"
        );
        assert_eq!(
            got["metadata"]["annotations"]["kubernetes.io/limit-ranger"],
            json!(format!(
                "LimitRanger plugin set: cpu, memory request for container {pod}; cpu limit for container {pod}"
            ))
        );
        assert_eq!(got["status"]["qosClass"], json!("Burstable"));
    }
}
