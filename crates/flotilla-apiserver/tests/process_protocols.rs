//! The protocol modules (strategic merge patch, server-side apply, selectors, protobuf bodies) as real clients
//! drive them: kubectl (the PyPI 1.37 build and the machine's 1.32 dispatcher) and the Python client, each a
//! separate process talking HTTPS to a server started here.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use serde_json::{Value, json};

use crate::support;

use support::*;

fn container_images(deploy: &Value) -> Vec<String> {
    deploy["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "{}={}",
                c["name"].as_str().unwrap_or(""),
                c["image"].as_str().unwrap_or("")
            )
        })
        .collect()
}

fn deployment_yaml(name: &str, containers: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  replicas: 2\n  \
         selector: {{matchLabels: {{app: {name}}}}}\n  template:\n    metadata: {{labels: {{app: {name}}}}}\n    spec:\n      \
         containers:\n{containers}"
    )
}

#[test]
fn kubectl_apply_twice_merges_containers_strategically() {
    let h = Harness::start();
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let name = format!("web{i}");
        let v1 = deployment_yaml(
            &name,
            "      - {name: a, image: 'nginx:1.26', env: [{name: X, value: '1'}]}\n      - {name: b, image: busybox}\n",
        );
        let f = h.file(&format!("{name}-1.yaml"), &v1);
        must(bin, &h.kubeconfig, &["apply", "--validate=false", "-f", &f]);
        // Second apply: new image and env value for a, b removed, c added; kubectl sends a strategic merge
        // patch with $setElementOrder and a delete directive for b.
        let v2 = deployment_yaml(
            &name,
            "      - {name: a, image: 'nginx:1.27', env: [{name: X, value: '2'}]}\n      - {name: c, image: redis}\n",
        );
        let f = h.file(&format!("{name}-2.yaml"), &v2);
        assert!(
            must(bin, &h.kubeconfig, &["apply", "--validate=false", "-f", &f])
                .contains("configured")
        );
        let got = get_json(bin, &h.kubeconfig, &["get", "deployment", &name]);
        assert_eq!(container_images(&got), ["a=nginx:1.27", "c=redis"], "{bin}");
        assert_eq!(
            got["spec"]["template"]["spec"]["containers"][0]["env"],
            json!([{"name": "X", "value": "2"}])
        );
        assert_eq!(got["spec"]["replicas"], 2);
    }
}

#[test]
fn kubectl_patch_types_and_selectors() {
    let h = Harness::start();
    let f = h.file(
        "web.yaml",
        &deployment_yaml("web", "      - {name: a, image: 'nginx:1.26'}\n"),
    );
    let bins = kubectl_bins();
    must(
        &bins[0],
        &h.kubeconfig,
        &["apply", "--validate=false", "-f", &f],
    );
    for bin in &bins {
        let kc = &h.kubeconfig;
        let smp =
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}"#;
        must(
            bin,
            kc,
            &["patch", "deployment", "web", "--type=strategic", "-p", smp],
        );
        must(
            bin,
            kc,
            &[
                "patch",
                "deployment",
                "web",
                "--type=merge",
                "-p",
                r#"{"metadata":{"labels":{"env":"a"}}}"#,
            ],
        );
        must(
            bin,
            kc,
            &[
                "patch",
                "deployment",
                "web",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/replicas","value":3}]"#,
            ],
        );
        let got = get_json(bin, kc, &["get", "deployment", "web"]);
        // A strategic merge patch without $setElementOrder puts new elements first, as on a real server.
        assert_eq!(
            container_images(&got),
            ["side=busybox", "a=nginx:1.26"],
            "{bin}"
        );
        assert_eq!(got["spec"]["replicas"], 3);
        let (ok, text) = kubectl(
            bin,
            kc,
            &[
                "patch",
                "deployment",
                "web",
                "--type=json",
                "-p",
                r#"[{"op":"test","path":"/spec/replicas","value":9}]"#,
            ],
        );
        // kube-apiserver answers a failed `test` with its generic 422
        // (reason Invalid, no details), which kubectl prints as below.
        assert!(
            !ok && text.contains("The request is invalid: the server rejected our request"),
            "failed JSON-patch test must be 422: {text}"
        );
        // Undo the side container for the next kubectl.
        must(
            bin,
            kc,
            &[
                "patch",
                "deployment",
                "web",
                "--type=strategic",
                "-p",
                r#"{"spec":{"template":{"spec":{"containers":[{"name":"side","$patch":"delete"}]}}}}"#,
            ],
        );

        assert_eq!(
            must(
                bin,
                kc,
                &[
                    "get",
                    "deployments",
                    "-l",
                    "env in (a,b),!legacy",
                    "-o",
                    "name"
                ]
            )
            .trim(),
            "deployment.apps/web"
        );
        assert_eq!(
            must(
                bin,
                kc,
                &["get", "deployments", "-l", "env notin (a)", "-o", "name"]
            )
            .trim(),
            ""
        );
        assert_eq!(
            must(
                bin,
                kc,
                &[
                    "get",
                    "deployments",
                    "--field-selector",
                    "metadata.name=web",
                    "-o",
                    "name"
                ]
            )
            .trim(),
            "deployment.apps/web"
        );
        let (ok, text) = kubectl(bin, kc, &["get", "deployments", "-l", "app:web"]);
        assert!(!ok && text.contains("unable to parse requirement: <nil>: Invalid value: \"app:web\": name part must consist of"), "{text}");
        let (ok, text) = kubectl(
            bin,
            kc,
            &["get", "pods", "--field-selector", "spec.bogus=1"],
        );
        assert!(
            !ok && text.contains("field label not supported: spec.bogus"),
            "{text}"
        );
    }
}

#[test]
fn kubectl_server_side_apply_owns_conflicts_and_prunes() {
    let h = Harness::start();
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let kc = &h.kubeconfig;
        let name = format!("ssa{i}");
        let cm = |data: &str| {
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\ndata: {data}\n"
            )
        };
        let first = h.file(&format!("{name}-a.yaml"), &cm("{a: '1', b: '2'}"));
        must(
            bin,
            kc,
            &["apply", "--validate=false", "--server-side", "-f", &first],
        );
        let got = get_json(
            bin,
            kc,
            &["get", "configmap", &name, "--show-managed-fields"],
        );
        let entry = &got["metadata"]["managedFields"][0];
        assert_eq!(
            (entry["manager"].as_str(), entry["operation"].as_str()),
            (Some("kubectl"), Some("Apply"))
        );
        assert_eq!(entry["fieldsV1"], json!({"f:data": {"f:a": {}, "f:b": {}}}));

        let other = h.file(&format!("{name}-o.yaml"), &cm("{a: '9'}"));
        let (ok, text) = kubectl(
            bin,
            kc,
            &[
                "apply",
                "--validate=false",
                "--server-side",
                "--field-manager=other",
                "-f",
                &other,
            ],
        );
        assert!(
            !ok && text
                .contains("Apply failed with 1 conflict: conflict with \"kubectl\": .data.a"),
            "{text}"
        );
        must(
            bin,
            kc,
            &[
                "apply",
                "--validate=false",
                "--server-side",
                "--field-manager=other",
                "--force-conflicts",
                "-f",
                &other,
            ],
        );
        // kubectl no longer owns `a`; dropping `b` from its configuration removes it.
        let shrink = h.file(&format!("{name}-b.yaml"), &cm("{}"));
        must(
            bin,
            kc,
            &["apply", "--validate=false", "--server-side", "-f", &shrink],
        );
        let got = get_json(bin, kc, &["get", "configmap", &name]);
        assert_eq!(got["data"], json!({"a": "9"}), "{bin}");
    }
}

#[test]
fn new_kubectl_creates_with_protobuf_bodies() {
    let h = Harness::start();
    // client-go >= 0.32 sends these as application/vnd.kubernetes.protobuf and never falls back to JSON.
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let kc = &h.kubeconfig;
        let ns = format!("team-{i}");
        must(bin, kc, &["create", "namespace", &ns]);
        must(
            bin,
            kc,
            &[
                "create",
                "deployment",
                "web",
                "-n",
                &ns,
                "--image=nginx:1.27",
                "--replicas=0",
                "--port=8080",
            ],
        );
        must(
            bin,
            kc,
            &[
                "create",
                "secret",
                "generic",
                "creds",
                "-n",
                &ns,
                "--from-literal=user=admin",
            ],
        );
        must(
            bin,
            kc,
            &[
                "create",
                "configmap",
                "settings",
                "-n",
                &ns,
                "--from-literal=mode=fast",
            ],
        );
        must(bin, kc, &["create", "serviceaccount", "agent", "-n", &ns]);
        must(
            bin,
            kc,
            &[
                "create",
                "clusterrolebinding",
                &format!("agent-{i}"),
                "--clusterrole=view",
                &format!("--serviceaccount={ns}:agent"),
            ],
        );
        let deploy = get_json(bin, kc, &["get", "deployment", "web", "-n", &ns]);
        assert_eq!(
            deploy["spec"]["replicas"], 0,
            "pointer zero survives protobuf: {deploy}"
        );
        assert_eq!(
            deploy["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"],
            8080
        );
        let secret = get_json(bin, kc, &["get", "secret", "creds", "-n", &ns]);
        assert_eq!(secret["data"]["user"], "YWRtaW4=");
        let cm = get_json(bin, kc, &["get", "configmap", "settings", "-n", &ns]);
        assert_eq!(cm["data"], json!({"mode": "fast"}));
        let crb = get_json(
            bin,
            kc,
            &["get", "clusterrolebinding", &format!("agent-{i}")],
        );
        assert_eq!(
            crb["subjects"],
            json!([{"kind": "ServiceAccount", "name": "agent", "namespace": ns}])
        );
        assert_eq!(
            crb["roleRef"],
            json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"})
        );
        must(
            bin,
            kc,
            &[
                "create",
                "ingress",
                "web",
                "-n",
                &ns,
                "--rule=web.example.com/=web:80",
            ],
        );
        must(
            bin,
            kc,
            &[
                "create",
                "poddisruptionbudget",
                "web",
                "-n",
                &ns,
                "--selector=app=web",
                "--min-available=1",
            ],
        );
        must(
            bin,
            kc,
            &["create", "quota", "small", "-n", &ns, "--hard=pods=10"],
        );
        let ingress = get_json(bin, kc, &["get", "ingress", "web", "-n", &ns]);
        assert_eq!(
            ingress["spec"]["rules"][0]["host"], "web.example.com",
            "{ingress}"
        );
        assert_eq!(
            ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"]["number"],
            80
        );
        let pdb = get_json(bin, kc, &["get", "poddisruptionbudget", "web", "-n", &ns]);
        assert_eq!(pdb["spec"]["minAvailable"], 1, "{pdb}");
        let quota = get_json(bin, kc, &["get", "resourcequota", "small", "-n", &ns]);
        assert_eq!(quota["spec"]["hard"], json!({"pods": "10"}));
        let namespace = get_json(bin, kc, &["get", "namespace", &ns]);
        assert_eq!(namespace["metadata"]["name"], ns.as_str());
    }
}

#[test]
fn python_client_patches_and_selectors() {
    let h = Harness::start();
    let f = h.file(
        "py.yaml",
        &deployment_yaml("py", "      - {name: a, image: 'nginx:1.26'}\n"),
    );
    must(
        &kubectl_bins()[0],
        &h.kubeconfig,
        &["apply", "--validate=false", "-f", &f],
    );
    let script = r#"
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
apps, v1 = client.AppsV1Api(), client.CoreV1Api()
# A dict body on a built-in kind goes out as a strategic merge patch.
d = apps.patch_namespaced_deployment("py", "default", {"metadata": {"labels": {"env": "b"}}, "spec": {"template": {"spec": {"containers": [{"name": "z", "image": "zz"}]}}}})
assert [c.name for c in d.spec.template.spec.containers] == ["z", "a"], d.spec.template.spec.containers
# A list body is a JSON patch.
d = apps.patch_namespaced_deployment("py", "default", [{"op": "replace", "path": "/spec/replicas", "value": 5}])
assert d.spec.replicas == 5
names = [x.metadata.name for x in apps.list_namespaced_deployment("default", label_selector="env in (a,b)").items]
assert names == ["py"], names
assert apps.list_namespaced_deployment("default", label_selector="env,env!=b").items == []
assert [x.metadata.name for x in apps.list_namespaced_deployment("default", field_selector="metadata.name=py").items] == ["py"]
try:
    v1.list_namespaced_config_map("default", label_selector="x in (")
    raise SystemExit("bad selector accepted")
except client.exceptions.ApiException as e:
    assert e.status == 400, e.status
print("ok")
"#;
    run_python(script, &h.kubeconfig);
}
