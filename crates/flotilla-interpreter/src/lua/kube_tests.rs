//! The `kube` library (`require("kube")`), called from scripts.

use serde_json::{Value, json};

use super::*;
use crate::layer::{Request, Response};

/// Runs `body` as the body of GetReplicas with `obj` bound, returning its second result as JSON.
fn requirements(body: &str, object: Value) -> Result<Option<Value>, ScriptError> {
    let vm = LuaVm::default();
    let source = format!("local kube = require('kube')\nfunction GetReplicas(obj)\n{body}\nend");
    let script = vm.script("kube-test", &source);
    match vm.call_blocking(&script, Request::InterpretReplica { object })? {
        Response::Replicas { requirements, .. } => {
            Ok(requirements.map(|r| serde_json::to_value(r).unwrap()))
        }
        other => panic!("unexpected {other:?}"),
    }
}

/// Evaluates an expression using `kube` and returns it as a string through an error message.
fn eval(expression: &str) -> String {
    let vm = LuaVm::default();
    let source = format!(
        "local kube = require('kube')\nfunction InterpretHealth(obj) error(tostring({expression}), 0) end"
    );
    let script = vm.script("kube-eval", &source);
    vm.call_blocking(
        &script,
        Request::InterpretHealth {
            object: json!({"kind": "X"}),
        },
    )
    .unwrap_err()
    .message
}

fn template() -> Value {
    json!({
        "metadata": {"labels": {"app": "web"}},
        "spec": {
            "nodeSelector": {"disk": "ssd"},
            "tolerations": [{"key": "k", "operator": "Exists"}],
            "initContainers": [{"name": "init", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
            "containers": [
                {"name": "a", "image": "i", "resources": {"requests": {"cpu": "100m"}, "limits": {"memory": "1Gi"}}},
                {"name": "b", "image": "i", "resources": {"requests": {"cpu": "200m", "memory": "512Mi"}}}
            ],
            "serviceAccountName": "sa",
            "volumes": [{"name": "v", "configMap": {"name": "cm"}}, {"name": "s", "secret": {"secretName": "sec"}}]
        }
    })
}

#[test]
fn resource_add_sums_canonically() {
    assert_eq!(eval("kube.resourceAdd('100m', '1.2')"), "1300m");
    assert_eq!(eval("kube.resourceAdd('100M', '1.2G')"), "1300M");
    assert_eq!(eval("kube.resourceAdd(nil, '1Gi', nil, '512Mi')"), "1536Mi");
    assert_eq!(eval("kube.resourceAdd()"), "0");
    assert_eq!(eval("kube.resourceAdd(nil)"), "0");
    assert!(
        eval("select(2, pcall(kube.resourceAdd, '1', 2))")
            .contains("bad argument #2 to resourceAdd")
    );
    assert!(eval("select(2, pcall(kube.resourceAdd, 'lots'))").contains("cannot parse quantity"));
}

#[test]
fn get_resource_quantity_is_a_number() {
    assert_eq!(eval("kube.getResourceQuantity('100m')"), "0.1");
    assert_eq!(eval("kube.getResourceQuantity('1Gi')"), "1073741824");
    assert_eq!(eval("kube.getResourceQuantity(nil)"), "0");
    // Kubernetes multiplies the parsed integer by a power of ten, so the last bit follows the spelling.
    assert_eq!(
        eval("kube.getResourceQuantity('0.3')"),
        "0.30000000000000004"
    );
    assert_eq!(eval("kube.getResourceQuantity('2048m')"), "2.048");
    assert_eq!(eval("type(kube.getResourceQuantity('1'))"), "number");
    assert!(eval("select(2, pcall(kube.getResourceQuantity, '-1'))").contains("negative"));
    assert!(
        eval("select(2, pcall(kube.getResourceQuantity))").contains("only accepts one argument")
    );
}

#[test]
fn accurate_pod_requirements_match_the_native_computation() {
    let object = json!({"kind": "X", "spec": {"replicas": 1, "template": template()}});
    let got = requirements(
        "return 1, kube.accuratePodRequirements(obj.spec.template)",
        object,
    )
    .unwrap();
    assert_eq!(
        got,
        Some(json!({
            "nodeClaim": {"nodeSelector": {"disk": "ssd"}, "tolerations": [{"key": "k", "operator": "Exists"}]},
            "resourceRequest": {"cpu": "1", "memory": "1536Mi"}
        }))
    );
    // The template stays usable after the call, and a template with nothing to claim gives nil.
    let object = json!({"kind": "X", "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "i"}]}}}});
    let body = "local r = kube.accuratePodRequirements(obj.spec.template)\nassert(obj.spec.template.spec.containers[1].name == 'a')\nreturn 1, r";
    assert_eq!(requirements(body, object).unwrap(), None);
    let err = requirements(
        "return 1, kube.accuratePodRequirements()",
        json!({"kind": "X"}),
    )
    .unwrap_err();
    assert_eq!(err.message, "getPodRequirements only accepts one argument");
    let err = requirements(
        "return 1, kube.accuratePodRequirements({spec = {containers = 3}})",
        json!({"kind": "X"}),
    )
    .unwrap_err();
    assert!(err.message.contains("accuratePodRequirements"), "{err}");
}

#[test]
fn get_pod_dependencies_lists_references() {
    let vm = LuaVm::default();
    let script = vm.script(
        "deps",
        "local kube = require('kube')\nfunction GetDependencies(obj)\n return kube.getPodDependencies(obj.spec.template, obj.metadata.namespace)\nend",
    );
    let mut object = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"namespace": "shop"}, "spec": {"template": template()}});
    let Response::Dependencies(refs) = vm
        .call_blocking(
            &script,
            Request::InterpretDependency {
                object: object.clone(),
            },
        )
        .unwrap()
    else {
        panic!("dependencies")
    };
    let refs: Vec<(String, String, String)> = refs
        .into_iter()
        .map(|r| (r.kind, r.namespace, r.name))
        .collect();
    assert_eq!(
        refs,
        [
            ("ConfigMap".to_owned(), "shop".to_owned(), "cm".to_owned()),
            ("Secret".to_owned(), "shop".to_owned(), "sec".to_owned()),
            (
                "ServiceAccount".to_owned(),
                "shop".to_owned(),
                "sa".to_owned()
            ),
        ]
    );
    // No namespace means "default"; nothing found is an empty list, where Karmada's gives nil.
    object["metadata"] = json!({});
    object["spec"]["template"] = json!({"spec": {"containers": [{"name": "a", "image": "i"}]}});
    let out = vm
        .call_blocking(&script, Request::InterpretDependency { object })
        .unwrap();
    assert_eq!(out, Response::Dependencies(Vec::new()));
    assert!(
        eval("select(2, pcall(kube.getPodDependencies, {}))")
            .ends_with("getPodDependencies only accepts two arguments")
    );
    assert_eq!(
        eval("#kube.getPodDependencies({spec = {serviceAccountName = 'x'}}, nil)"),
        "1"
    );
    assert_eq!(
        eval("kube.getPodDependencies({spec = {serviceAccountName = 'x'}}, nil)[1].namespace"),
        "default"
    );
    assert!(eval("select(2, pcall(kube.getPodDependencies, {}, {}))").contains("bad argument #2"));
}

#[test]
fn the_library_is_read_only_and_shared_by_require() {
    assert_eq!(eval("require('kube') == kube"), "true");
    assert!(eval("select(2, pcall(function() kube.resourceAdd = nil end))").contains("readonly"));
}

#[test]
fn requirements_through_lua_equal_the_native_layers_answer() {
    let fixture: Value =
        serde_json::from_str(include_str!("../../benches/fixtures/deployment.json")).unwrap();
    let mut with_everything = template();
    with_everything["spec"]["overhead"] = json!({"cpu": "10m"});
    with_everything["spec"]["affinity"] = json!({"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "z", "operator": "In", "values": ["a"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference": {"matchExpressions": [{"key": "p", "operator": "Exists"}]}}]
    }, "podAntiAffinity": {}});
    for template in [
        fixture["spec"]["template"].clone(),
        with_everything,
        json!({"spec": {"containers": []}}),
    ] {
        let native = crate::native::requirements::template_requirements(&template, String::new)
            .unwrap()
            .map(|r| serde_json::to_value(r).unwrap());
        let object = json!({"kind": "X", "spec": {"template": template}});
        let via_lua = requirements(
            "return 1, kube.accuratePodRequirements(obj.spec.template)",
            object.clone(),
        )
        .unwrap();
        assert_eq!(via_lua, native);
        // The same through a table the script rebuilt (not lazy any more).
        let rebuilt = "local t = {metadata = obj.spec.template.metadata, spec = {}}\n\
            for k, v in pairs(obj.spec.template.spec) do t.spec[k] = v end\n\
            return 1, kube.accuratePodRequirements(t)";
        assert_eq!(requirements(rebuilt, object).unwrap(), native);
    }
}

#[test]
fn a_requirements_table_the_script_looks_into_reads_like_json() {
    let object = json!({"kind": "X", "spec": {"template": template()}});
    let native = crate::native::requirements::template_requirements(
        &object["spec"]["template"],
        String::new,
    )
    .unwrap()
    .map(|r| serde_json::to_value(r).unwrap());
    let expected = native.clone().unwrap();
    for body in [
        // Read one member, then return the table.
        "local r = kube.accuratePodRequirements(obj.spec.template)\nassert(r.resourceRequest.cpu == '1')\nreturn 1, r",
        // Walk it whole.
        "local r = kube.accuratePodRequirements(obj.spec.template)\nlocal n = 0\nfor k in pairs(r) do n = n + 1 end\nassert(n == 2)\nreturn 1, r",
        // Pass it to another library function (read in place or copied), then return it.
        "local r = kube.accuratePodRequirements(obj.spec.template)\nlocal again = kube.accuratePodRequirements({spec = {nodeSelector = r.nodeClaim.nodeSelector}})\nassert(again.nodeClaim.nodeSelector.disk == 'ssd')\nreturn 1, r",
        // Rebuild it from its members.
        "local r = kube.accuratePodRequirements(obj.spec.template)\nreturn 1, {nodeClaim = r.nodeClaim, resourceRequest = r.resourceRequest}",
    ] {
        assert_eq!(
            requirements(body, object.clone()).unwrap(),
            Some(expected.clone()),
            "{body}"
        );
    }
    // A template the script looked into first is read whole, members already in Lua included.
    let body = "assert(obj.spec.template.spec.containers[2].name == 'b')\nobj.spec.template.metadata = nil\nreturn 1, kube.accuratePodRequirements(obj.spec.template)";
    assert_eq!(requirements(body, object.clone()).unwrap(), native);
    // Two results in one call, one returned untouched and one looked into.
    let body = "local a = kube.accuratePodRequirements(obj.spec.template)\nlocal b = kube.accuratePodRequirements(obj.spec.template)\nassert(b.resourceRequest.memory == '1536Mi')\nreturn 1, a";
    assert_eq!(requirements(body, object).unwrap(), native);
}

/// Quantities in a script's replica requirements and components come back as Kubernetes decodes and encodes them
/// (issue 16, item 4): Karmada's bundled SparkApplication builds memory with `string.format("%f%s", ...)`, and its
/// FlinkDeployment passes `kube.getResourceQuantity`'s number.
#[test]
fn quantities_in_results_come_back_in_kubernetes_form() {
    let body = "return 1, {resourceRequest = {
        memory = string.format('%f%s', 1408, 'Mi'),
        cpu = kube.getResourceQuantity('2048m'),
        half = 0.5, thousand = 1000, milli = '1000m', spaced = ' 2 ', kept = '2.048', plus = '+1'}}";
    let got = requirements(body, json!({"kind": "X"})).unwrap();
    assert_eq!(
        got,
        Some(json!({"resourceRequest": {
            "memory": "1408Mi", "cpu": "2.048", "half": "500m", "thousand": "1k", "milli": "1",
            "spaced": "2", "kept": "2.048", "plus": "+1"}}))
    );
    let vm = LuaVm::default();
    let source = "local kube = require('kube')
        function GetComponents(obj)
          return {{name = 'a', replicas = 1, replicaRequirements = {resourceRequest = {
            memory = kube.getResourceQuantity('2048m'), cpu = string.format('%f', 0.25)}}}}
        end";
    let script = vm.script("components", source);
    let Ok(Response::Components(components)) = vm.call_blocking(
        &script,
        Request::InterpretComponent {
            object: json!({"kind": "X"}),
        },
    ) else {
        panic!("components")
    };
    let request = serde_json::to_value(&components[0].replica_requirements).unwrap();
    assert_eq!(
        request,
        json!({"resourceRequest": {"memory": "2.048", "cpu": "250m"}})
    );
    // Kubernetes refuses what is not a quantity, and so does the result.
    let err = requirements(
        "return 1, {resourceRequest = {cpu = 'lots'}}",
        json!({"kind": "X"}),
    )
    .unwrap_err();
    assert!(
        err.message.starts_with("json unmarshal obj failed")
            && err.message.contains("quantities must match"),
        "{err}"
    );
}

/// Karmada hands `kube.accuratePodRequirements`' answer to the script as JSON and decodes the script's result again,
/// so a quantity the native computation prints in binary form without a suffix (`1000000000`) comes back in the
/// decimal form Kubernetes gives that text (`1G`), also when the script returns the table untouched.
#[test]
fn requirements_returned_untouched_take_the_json_round_trip() {
    let template = json!({"spec": {"containers": [{"name": "a", "image": "a", "resources": {"requests": {
        "ephemeral-storage": "1G", "memory": "1000Mi", "cpu": "2"}}}]}});
    let object = json!({"kind": "X", "spec": {"template": template}});
    let want = Some(
        json!({"resourceRequest": {"ephemeral-storage": "1G", "memory": "1000Mi", "cpu": "2"}}),
    );
    let untouched = requirements(
        "return 1, kube.accuratePodRequirements(obj.spec.template)",
        object.clone(),
    );
    assert_eq!(untouched.unwrap(), want);
    // What the script sees is Karmada's JSON: the binary form.
    assert_eq!(
        eval(
            "kube.accuratePodRequirements({spec = {containers = {{name = 'a', resources = {requests = {['ephemeral-storage'] = '1G'}}}}}}).resourceRequest['ephemeral-storage']"
        ),
        "1000000000"
    );
    let read = requirements(
        "local r = kube.accuratePodRequirements(obj.spec.template)\nlocal seen = r.resourceRequest.cpu\nreturn 1, r",
        object,
    );
    assert_eq!(read.unwrap(), want);
}
