//! Karmada's aggregated API (issue 18 item 10): `cluster.karmada.io` served by the controller manager's aggregated
//! API server behind the control plane's aggregator, and its `clusters/{name}/proxy` subresource, through which
//! karmadactl's member commands reach members (`karmadactl get|describe --operation-scope members`, `promote`,
//! `top` build their member client on `<control plane>/apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy/`).
//! kubectl with that `--server` is exactly such a client.
//!
//! Both worlds: the registration is Available; kubectl gets, describes and creates member objects through the proxy;
//! the member sees the caller (the impersonator's token, the caller's user and groups); `clusters/*/proxy` fans out
//! as Karmada's does; a member object promoted as `karmadactl promote` does is adopted, not recreated. A
//! ServiceAccount allowed to proxy member1 only is seen by member1 as itself; the control plane refuses it member2
//! and member1's own RBAC refuses it Nodes.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_api::policy::v1alpha1::PropagationPolicy;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use kube::Client;
use kube::api::{Api, DeleteParams, PostParams};
use serde_json::{Value, json};

use flotilla_e2e::resources::{DEPLOYMENT, RESOURCE_BINDING, web_deployment};
use flotilla_e2e::{Env, Kubectl, Options, Undo, steps, wait_for};

const PROXY: &str = "/apis/cluster.karmada.io/v1alpha1/clusters";

flotilla_e2e::scenario!(
    members_are_reached_through_the_cluster_proxy_as_the_caller,
    "proxy",
    Options::default(),
    cluster_proxy
);

async fn cluster_proxy(env: &Env, ns: &str) -> anyhow::Result<()> {
    registered(env).await?;
    // Objects made in the members themselves, as karmadactl finds them there, in the namespace the control plane
    // propagated (made in the member first, it would be a conflict the namespace's Work reports).
    for member in ["member1", "member2"] {
        let client = env.member(member)?;
        namespace_propagated(client, member, ns).await?;
        create_deployment(client, ns, "twin").await?;
    }
    create_deployment(env.member("member1")?, ns, "web").await?;
    create_deployment(env.member("member2")?, ns, "solo").await?;

    kubectl_through_the_proxy(env, ns).await?;
    all_clusters(env, ns).await?;
    promote(env, ns).await?;
    as_a_service_account(env, ns).await
}

/// The APIService is the aggregated API server's and Available; `v1alpha1` stays the preferred version over the
/// CRD's `storage` alias; the proxy subresource is discovered; every member has its impersonator.
async fn registered(env: &Env) -> anyhow::Result<()> {
    let api_service = Api::<APIService>::all(env.karmada.clone())
        .get("v1alpha1.cluster.karmada.io")
        .await?;
    let spec = api_service.spec.clone().unwrap_or_default();
    let service = spec.service.unwrap_or_default();
    assert_eq!(
        (service.namespace.as_deref(), service.name.as_deref()),
        (Some("karmada-system"), Some("karmada-aggregated-apiserver")),
        "{api_service:?}"
    );
    let available = api_service
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default()
        .into_iter()
        .any(|c| c.type_ == "Available" && c.status == "True");
    assert!(available, "the APIService is not Available");
    let group = get_json(&env.karmada, "/apis/cluster.karmada.io").await?;
    assert_eq!(group["preferredVersion"]["version"], "v1alpha1", "{group}");
    let resources = get_json(&env.karmada, "/apis/cluster.karmada.io/v1alpha1").await?;
    let names: Vec<&str> = resources["resources"]
        .as_array()
        .map(|r| r.iter().filter_map(|r| r["name"].as_str()).collect())
        .unwrap_or_default();
    assert!(names.contains(&"clusters/proxy"), "{names:?}");
    for (member, _) in &env.members {
        let cluster = get_json(
            &env.karmada,
            &format!("/apis/cluster.karmada.io/v1alpha1/clusters/{member}"),
        )
        .await?;
        let reference = &cluster["spec"]["impersonatorSecretRef"];
        assert_eq!(
            reference["name"],
            format!("{member}-impersonator"),
            "{cluster}"
        );
        let secret = Api::<Secret>::namespaced(env.karmada.clone(), "karmada-cluster")
            .get(&format!("{member}-impersonator"))
            .await?;
        assert!(
            secret.data.unwrap_or_default().contains_key("token"),
            "the impersonator Secret of {member} has no token"
        );
    }
    Ok(())
}

/// kubectl pointed at a member's proxy (as karmadactl's member factory points it) reads, describes and writes the
/// member's objects, and the member sees the caller.
async fn kubectl_through_the_proxy(env: &Env, ns: &str) -> anyhow::Result<()> {
    let kubectl = Kubectl::newest();
    let server = format!("{}{PROXY}/member1/proxy", env.karmada_url().await?);
    let through = |args: &[&str]| {
        let mut all = vec!["--server", server.as_str()];
        all.extend_from_slice(args);
        all.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| {
        let kubectl = kubectl.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            env.kubectl_karmada(&kubectl, &args).await
        }
    };
    let direct = Api::<Deployment>::namespaced(env.member("member1")?.clone(), ns)
        .get("web")
        .await?;
    let uid = run(through(&[
        "get",
        "deployment",
        "web",
        "-n",
        ns,
        "-o",
        "jsonpath={.metadata.uid}",
    ]))
    .await?;
    assert_eq!(Some(uid.trim()), direct.metadata.uid.as_deref());
    let described = run(through(&["describe", "deployment", "web", "-n", ns])).await?;
    assert!(
        described.contains("Name:") && described.contains("web") && described.contains(ns),
        "{described}"
    );

    let whoami = [
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ];
    let caller = env.kubectl_karmada(&kubectl, &whoami).await?;
    let seen = run(through(&whoami)).await?;
    assert_eq!(seen, caller, "member1 sees another user than the caller");
    let groups = run(through(&[
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.groups}",
    ]))
    .await?;
    assert!(
        groups.contains("system:masters"),
        "member1 sees groups {groups}"
    );

    run(through(&[
        "create",
        "configmap",
        "via-proxy",
        "-n",
        ns,
        "--from-literal=written=through-the-proxy",
    ]))
    .await?;
    let written = Api::<ConfigMap>::namespaced(env.member("member1")?.clone(), ns)
        .get("via-proxy")
        .await?;
    assert_eq!(
        written
            .data
            .unwrap_or_default()
            .get("written")
            .map(String::as_str),
        Some("through-the-proxy")
    );
    Ok(())
}

/// `clusters/*/proxy` (Karmada's `aggregate.go`): a list merges every member's items, a named object is proxied
/// to the one member that has it, and one that two members have is a conflict.
async fn all_clusters(env: &Env, ns: &str) -> anyhow::Result<()> {
    let deployments = format!("{PROXY}/*/proxy/apis/apps/v1/namespaces/{ns}/deployments");
    let list = get_json(&env.karmada, &deployments).await?;
    let mut names: Vec<&str> = list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    names.sort_unstable();
    assert_eq!(names, ["solo", "twin", "twin", "web"], "{list}");
    let solo = get_json(&env.karmada, &format!("{deployments}/solo")).await?;
    assert_eq!(solo["metadata"]["name"], "solo");
    let (status, body) = raw_get(&env.karmada, &format!("{deployments}/twin")).await?;
    assert_eq!(status, 409, "{body}");
    assert_eq!(
        body.trim(),
        "conflict resource, exist in more than one cluster: member1,member2"
    );
    Ok(())
}

/// What `karmadactl promote deployment web -n NS -C member1` does: the member's object becomes a template (with
/// `work.karmada.io/conflict-resolution: overwrite`) and a PropagationPolicy to member1 (conflictResolution
/// Overwrite, preserveResourcesOnDeletion); the control plane then adopts the member's object, same uid.
async fn promote(env: &Env, ns: &str) -> anyhow::Result<()> {
    let member = get_json(
        &env.karmada,
        &format!("{PROXY}/member1/proxy/apis/apps/v1/namespaces/{ns}/deployments/web"),
    )
    .await?;
    let uid = member["metadata"]["uid"].clone();
    let mut annotations = member["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    annotations["work.karmada.io/conflict-resolution"] = json!("overwrite");
    let template = json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": ns, "labels": member["metadata"]["labels"],
                     "annotations": annotations},
        "spec": member["spec"],
    });
    Api::<Deployment>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(template)?)
        .await?;
    let policy = json!({
        "apiVersion": "policy.karmada.io/v1alpha1", "kind": "PropagationPolicy",
        "metadata": {"name": "web-promoted", "namespace": ns},
        "spec": {
            "conflictResolution": "Overwrite",
            "placement": {"clusterAffinity": {"clusterNames": ["member1"]}},
            "preserveResourcesOnDeletion": true,
            "resourceSelectors": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}],
        }
    });
    Api::<PropagationPolicy>::namespaced(env.karmada.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(policy)?)
        .await?;
    steps::control_object(
        env,
        RESOURCE_BINDING,
        ns,
        "web-deployment",
        "the promoted Deployment's binding to be fully applied",
        |binding| {
            binding["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "FullyApplied" && c["status"] == "True")
            })
        },
    )
    .await?;
    let adopted = steps::member_object(
        env,
        "member1",
        DEPLOYMENT,
        ns,
        "web",
        "member1's Deployment to be managed by Karmada",
        |object| object["metadata"]["labels"]["karmada.io/managed"] == "true",
    )
    .await?;
    assert_eq!(
        adopted["metadata"]["uid"], uid,
        "the member's Deployment was recreated"
    );
    Ok(())
}

/// A ServiceAccount of the control plane with Karmada's e2e rights (`clusters/proxy` on member1, bound to it and
/// its groups): member1 sees it as itself once the unified-auth controller's Works let the impersonator act as it.
async fn as_a_service_account(env: &Env, ns: &str) -> anyhow::Result<()> {
    let name = format!("{ns}-tom");
    let rbac = json!({
        "role": {"metadata": {"name": name},
                 "rules": [{"apiGroups": ["cluster.karmada.io"], "resources": ["clusters/proxy"],
                            "resourceNames": ["member1"], "verbs": ["*"]}]},
        "binding": {"metadata": {"name": name},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                    "subjects": [{"kind": "ServiceAccount", "name": "tom", "namespace": ns},
                                 {"kind": "Group", "name": "system:serviceaccounts"},
                                 {"kind": "Group", "name": format!("system:serviceaccounts:{ns}")}]},
    });
    let roles: Api<ClusterRole> = Api::all(env.karmada.clone());
    let bindings: Api<ClusterRoleBinding> = Api::all(env.karmada.clone());
    let undo_name = name.clone();
    // Cluster-scoped: they outlive the namespace unless deleted, also when the scenario fails.
    let undo = Undo::new(
        env,
        format!("delete ClusterRole and ClusterRoleBinding {name}"),
        move |client| async move {
            let dp = DeleteParams::default();
            let _ = Api::<ClusterRoleBinding>::all(client.clone())
                .delete(&undo_name, &dp)
                .await;
            let _ = Api::<ClusterRole>::all(client)
                .delete(&undo_name, &dp)
                .await;
            Ok(())
        },
    );
    roles
        .create(
            &PostParams::default(),
            &serde_json::from_value(rbac["role"].clone())?,
        )
        .await?;
    bindings
        .create(
            &PostParams::default(),
            &serde_json::from_value(rbac["binding"].clone())?,
        )
        .await?;
    let accounts: Api<ServiceAccount> = Api::namespaced(env.karmada.clone(), ns);
    accounts
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "tom"}}))?,
        )
        .await?;
    let request =
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
    let issued: Value = accounts
        .create_subresource("token", "tom", &PostParams::default(), &request)
        .await?;
    let token = issued["status"]["token"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let tom = env.karmada_client_as(&token).await?;
    let user = format!("system:serviceaccount:{ns}:tom");

    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let whoami = format!("{PROXY}/member1/proxy/apis/authentication.k8s.io/v1/selfsubjectreviews");
    wait_for(
        "member1 to see the ServiceAccount through the proxy",
        || {
            let (tom, review, whoami, user) =
                (tom.clone(), review.clone(), whoami.clone(), user.clone());
            async move {
                let (status, body) = raw_post(&tom, &whoami, &review)
                    .await
                    .map_err(|e| e.to_string())?;
                let seen: Value = serde_json::from_str(&body).unwrap_or_default();
                if status == 201 && seen["status"]["userInfo"]["username"] == user.as_str() {
                    Ok(())
                } else {
                    Err(format!("{status}: {body}"))
                }
            }
        },
    )
    .await?;

    let (member2, body) = raw_get(&tom, &format!("{PROXY}/member2/proxy/api")).await?;
    let (nodes, nodes_body) = raw_get(&tom, &format!("{PROXY}/member1/proxy/api/v1/nodes")).await?;
    assert_eq!(member2, 403, "{body}");
    assert!(
        body.contains(&format!(
            "clusters.cluster.karmada.io \\\"member2\\\" is forbidden: User \\\"{user}\\\" cannot get resource \\\"clusters/proxy\\\" in API group \\\"cluster.karmada.io\\\" at the cluster scope"
        )),
        "{body}"
    );
    // member1 lets the impersonator act as the ServiceAccount, whose own rights there are member1's business:
    // none.
    assert_eq!(nodes, 403, "{nodes_body}");
    undo.run(&env.karmada).await
}

async fn namespace_propagated(client: &Client, member: &str, ns: &str) -> anyhow::Result<()> {
    let api: Api<Namespace> = Api::all(client.clone());
    wait_for(&format!("namespace {ns} in {member}"), || {
        let api = api.clone();
        async move {
            match api.get_opt(ns).await {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err("not there yet".to_owned()),
                Err(error) => Err(error.to_string()),
            }
        }
    })
    .await
}

async fn create_deployment(client: &Client, ns: &str, name: &str) -> anyhow::Result<()> {
    let mut deployment = web_deployment();
    deployment["metadata"]["name"] = json!(name);
    Api::<Deployment>::namespaced(client.clone(), ns)
        .create(&PostParams::default(), &serde_json::from_value(deployment)?)
        .await?;
    Ok(())
}

async fn get_json(client: &Client, path: &str) -> anyhow::Result<Value> {
    let (status, body) = raw_get(client, path).await?;
    anyhow::ensure!(status == 200, "GET {path}: {status} {body}");
    Ok(serde_json::from_str(&body)?)
}

async fn raw_get(client: &Client, path: &str) -> anyhow::Result<(u16, String)> {
    let request = http::Request::get(path).body(Vec::new())?;
    send(client, request).await
}

async fn raw_post(client: &Client, path: &str, body: &Value) -> anyhow::Result<(u16, String)> {
    let request = http::Request::post(path)
        .header("Content-Type", "application/json")
        .body(serde_json::to_vec(body)?)?;
    send(client, request).await
}

/// Sends `request` and returns the status and body whatever the status (kube's `request` turns a non-2xx into an
/// error and parses plain-text bodies poorly).
async fn send(client: &Client, request: http::Request<Vec<u8>>) -> anyhow::Result<(u16, String)> {
    let response = client.send(request.map(kube::client::Body::from)).await?;
    let status = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await?;
    Ok((status, String::from_utf8_lossy(&bytes).into_owned()))
}
