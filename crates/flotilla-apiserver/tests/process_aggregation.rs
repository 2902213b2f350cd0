//! Clients we did not write against kube-aggregator in the embedded server, with a fake aggregated API server
//! (`tests/support/backend.rs`) behind an APIService: kubectl's discovery (`api-resources`, `get --raw`), reads
//! and writes through the proxy, `explain` from the proxied OpenAPI v3 document, `auth whoami` with
//! impersonation; and the Python client reading the aggregated resources and impersonating.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use crate::support;

#[path = "support/backend.rs"]
mod backend;

use backend::{Backend, GROUP, Trust, VERSION};
use serde_json::json;
use support::{Harness, get_json, kubectl_bins, must, must_quiet, row};

const NS: &str = "aggregated";

/// Starts a backend trusting the harness's front proxy and registers it as `v1.things.example.com` through an
/// ExternalName Service, as Flotilla registers its aggregated API server.
fn register(h: &Harness) -> Backend {
    let kc = &h.kubeconfig;
    let bin = &kubectl_bins()[0];
    let cm = get_json(
        bin,
        kc,
        &[
            "-n",
            "kube-system",
            "get",
            "configmap",
            "extension-apiserver-authentication",
        ],
    );
    let backend = h.rt.block_on(Backend::start(
        "backend.aggregated.svc",
        Trust::from_configmap_data(&cm["data"]),
    ));
    let manifest = json!({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "backend", "namespace": NS},
         "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}},
        {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": format!("{VERSION}.{GROUP}")},
         "spec": {"group": GROUP, "version": VERSION, "groupPriorityMinimum": 2000, "versionPriority": 200,
                  "caBundle": backend.ca_bundle,
                  "service": {"namespace": NS, "name": "backend", "port": backend.addr.port()}}}]});
    let file = h.file("register.json", &manifest.to_string());
    must(bin, kc, &["apply", "-f", &file]);
    must(
        bin,
        kc,
        &[
            "wait",
            "--for=condition=Available",
            "--timeout=60s",
            &format!("apiservice/{VERSION}.{GROUP}"),
        ],
    );
    backend
}

#[test]
fn kubectl_discovers_reads_writes_and_explains_an_aggregated_api() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    let backend = register(&h);
    for (i, bin) in kubectl_bins().iter().enumerate() {
        let apiservices = must_quiet(bin, kc, &["get", "apiservices"]);
        let cells = row(&apiservices, &format!("{VERSION}.{GROUP}"));
        assert_eq!(
            cells[1..3],
            [format!("{NS}/backend"), "True".to_string()],
            "{apiservices}"
        );
        let resources = must_quiet(bin, kc, &["api-resources", "--api-group", GROUP]);
        let cells = row(&resources, "widgets");
        assert_eq!(
            cells[1..],
            ["wd", "things.example.com/v1", "true", "Widget"],
            "{bin}: {resources}"
        );
        let raw = must_quiet(
            bin,
            kc,
            &["get", "--raw", &format!("/apis/{GROUP}/{VERSION}")],
        );
        let raw: serde_json::Value = serde_json::from_str(&raw).unwrap();
        assert_eq!(raw["groupVersion"], format!("{GROUP}/{VERSION}"));
        let name = format!("w{i}");
        let widget = json!({"apiVersion": format!("{GROUP}/{VERSION}"), "kind": "Widget",
            "metadata": {"name": name, "namespace": NS}, "spec": {"size": i}});
        let file = h.file(&format!("widget{i}.json"), &widget.to_string());
        must(bin, kc, &["create", "-f", &file]);
        let got = get_json(bin, kc, &["-n", NS, "get", "wd", &name]);
        assert_eq!(got["spec"]["size"], i);
        must(bin, kc, &["-n", NS, "label", "widget", &name, "color=red"]);
        let got = get_json(bin, kc, &["-n", NS, "get", "widgets", &name]);
        assert_eq!(got["metadata"]["labels"]["color"], "red");
        must(
            bin,
            kc,
            &["-n", NS, "delete", "widget", &name, "--wait=false"],
        );
    }
    // kubectl 1.37 explains from the backend's OpenAPI v3 document, fetched through the proxy.
    if let Some(bin) = kubectl_bins().iter().find(|b| b.contains(".venv")) {
        let explained = must_quiet(bin, kc, &["explain", "widgets.spec"]);
        assert!(
            explained.contains("What the widget should be."),
            "{explained}"
        );
    }
    let seen = backend.seen_under(&format!("/apis/{GROUP}/{VERSION}/namespaces/{NS}/widgets"));
    assert!(seen.iter().any(|s| s.method == "PATCH"), "{seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.all("x-remote-user") == ["system:admin"])
    );
}

#[test]
fn kubectl_auth_whoami_shows_who_it_impersonates() {
    let h = Harness::start();
    let kc = &h.kubeconfig;
    for bin in kubectl_bins() {
        let me = get_json(
            &bin,
            kc,
            &[
                "auth",
                "whoami",
                "--as",
                "jane",
                "--as-group",
                "dev",
                "--as-group",
                "ops",
            ],
        );
        assert_eq!(
            me["status"]["userInfo"],
            json!({"username": "jane", "groups": ["dev", "ops", "system:authenticated"]}),
            "{bin}"
        );
        let sa = get_json(
            &bin,
            kc,
            &["auth", "whoami", "--as", "system:serviceaccount:team:bot"],
        );
        assert_eq!(
            sa["status"]["userInfo"]["groups"],
            json!([
                "system:serviceaccounts",
                "system:serviceaccounts:team",
                "system:authenticated"
            ])
        );
        let (ok, text) = support::kubectl(&bin, kc, &["auth", "whoami", "--as-group", "dev"]);
        assert!(!ok, "{text}");
        // A bound token's user carries its ServiceAccount's uid, as kube's token authenticator gives it.
        let name = format!("bot{}", bin.len());
        must(&bin, kc, &["create", "serviceaccount", &name]);
        let uid = get_json(&bin, kc, &["get", "serviceaccount", &name])["metadata"]["uid"].clone();
        let token = must_quiet(&bin, kc, &["create", "token", &name]);
        let bot = get_json(&bin, kc, &["--token", token.trim(), "auth", "whoami"]);
        assert_eq!(bot["status"]["userInfo"]["uid"], uid);
    }
}

#[test]
fn the_python_client_reads_an_aggregated_api_and_impersonates() {
    let h = Harness::start();
    let _backend = register(&h);
    let script = format!(
        r#"
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
objects = client.CustomObjectsApi()
objects.create_namespaced_custom_object("{GROUP}", "{VERSION}", "{NS}", "widgets",
    {{"apiVersion": "{GROUP}/{VERSION}", "kind": "Widget", "metadata": {{"name": "py"}}, "spec": {{"size": 3}}}})
listed = objects.list_namespaced_custom_object("{GROUP}", "{VERSION}", "{NS}", "widgets")
assert [w["metadata"]["name"] for w in listed["items"]] == ["py"], listed
groups = client.ApisApi().get_api_versions().groups
mine = [g for g in groups if g.name == "{GROUP}"][0]
assert mine.preferred_version.version == "{VERSION}", mine
api = client.ApiClient()
api.set_default_header("Impersonate-User", "jane")
api.set_default_header("Impersonate-Group", "dev")
review = client.AuthenticationV1Api(api).create_self_subject_review(
    client.V1SelfSubjectReview(api_version="authentication.k8s.io/v1", kind="SelfSubjectReview"))
assert review.status.user_info.username == "jane", review
assert review.status.user_info.groups == ["dev", "system:authenticated"], review
print("ok")
"#
    );
    support::run_python(&script, &h.kubeconfig);
}
