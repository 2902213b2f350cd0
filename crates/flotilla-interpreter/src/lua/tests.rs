//! Lua VM tests: every operation, result rules, sandbox refusals, budgets, isolation and lossless conversion.

use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ResourceHealth};
use serde_json::{Value, json};

use super::*;
use crate::layer::{Request, Response};

fn vm() -> LuaVm {
    LuaVm::new(VmConfig {
        concurrency: 2,
        ..VmConfig::default()
    })
}

fn deployment() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "nginx", "namespace": "default", "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "paused": false,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx", "resources": {}}]}
            }
        },
        "status": {"replicas": 3, "readyReplicas": 3}
    })
}

/// Runs `source`'s function for `input`.
fn run(source: &str, input: impl Into<Input>) -> Result<Response, ScriptError> {
    let vm = vm();
    let script = vm.script("test", source);
    vm.call_blocking(&script, input)
}

fn health(source: &str, object: Value) -> Result<bool, ScriptError> {
    match run(source, Request::InterpretHealth { object })? {
        Response::Healthy(h) => Ok(h),
        other => panic!("unexpected {other:?}"),
    }
}

/// Evaluates a Lua expression inside `InterpretHealth` and returns `tostring` of it through an error message.
fn eval(expression: &str) -> String {
    let source = format!("function InterpretHealth(obj) error(tostring({expression}), 0) end");
    let err = health(&source, json!({"kind": "X"})).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Runtime, "{err}");
    err.message
}

fn object(response: Response) -> Value {
    match response {
        Response::Object(v) => v,
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn revise_replica_changes_only_what_the_script_wrote() {
    let source = "function ReviseReplica(obj, desiredReplica)\n obj.spec.replicas = desiredReplica\n return obj\nend";
    let out = object(
        run(
            source,
            Request::ReviseReplica {
                object: deployment(),
                replicas: 5,
            },
        )
        .unwrap(),
    );
    let mut want = deployment();
    want["spec"]["replicas"] = json!(5);
    assert_eq!(out, want);
    assert!(out["spec"]["replicas"].is_i64(), "integers stay integers");
}

#[test]
fn retain_reads_both_objects() {
    let source = "function Retain(desiredObj, observedObj)\n desiredObj.spec.paused = observedObj.spec.paused\n \
                  desiredObj.status = observedObj.status\n return desiredObj\nend";
    let mut observed = deployment();
    observed["spec"]["paused"] = json!(true);
    observed["status"] = json!({"replicas": 7, "conditions": []});
    let out = object(
        run(
            source,
            Request::Retain {
                desired: deployment(),
                observed: observed.clone(),
            },
        )
        .unwrap(),
    );
    assert_eq!(out["spec"]["paused"], json!(true));
    assert_eq!(out["status"], observed["status"]);
}

#[test]
fn aggregate_status_sums_items_and_sees_nil_without_items() {
    let source = "function AggregateStatus(desiredObj, statusItems)\n if statusItems == nil then return desiredObj end\n \
                  local replicas = 0\n for i = 1, #statusItems do\n  local s = statusItems[i].status\n  \
                  if s ~= nil and s.replicas ~= nil then replicas = replicas + s.replicas end\n  \
                  if statusItems[i].applied ~= true then replicas = replicas + 100 end\n end\n \
                  desiredObj.status.replicas = replicas\n return desiredObj\nend";
    let item = |name: &str, replicas: i64, applied: bool| AggregatedStatusItem {
        cluster_name: name.to_owned(),
        status: Some(json!({"replicas": replicas})),
        applied,
        applied_message: String::new(),
        health: Some(ResourceHealth::Healthy),
    };
    let items = vec![
        item("member1", 1, true),
        item("member2", 2, true),
        item("member3", 4, false),
    ];
    let out = object(run(source, Input::aggregate_status(deployment(), Some(items))).unwrap());
    assert_eq!(out["status"]["replicas"], json!(107));
    let out = object(run(source, Input::aggregate_status(deployment(), None)).unwrap());
    assert_eq!(out, deployment());
}

#[test]
fn health_must_be_a_boolean() {
    let source =
        "function InterpretHealth(obj)\n return obj.status.readyReplicas == obj.spec.replicas\nend";
    assert!(health(source, deployment()).unwrap());
    let source = "function InterpretHealth(obj)\n if obj.status.readyReplicas == 0 then return true end\nend";
    let err = health(source, deployment()).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Result);
    assert_eq!(err.message, "result type nil is not bool");
    assert_eq!(err.function, "InterpretHealth");
}

#[test]
fn reflect_status_must_be_a_table() {
    let source = "function ReflectStatus(obj)\n return obj.status\nend";
    let out = run(
        source,
        Request::InterpretStatus {
            object: deployment(),
        },
    )
    .unwrap();
    assert_eq!(
        out,
        Response::Status(Some(json!({"replicas": 3, "readyReplicas": 3})))
    );
    let out = run(
        "function ReflectStatus(obj) return {} end",
        Request::InterpretStatus {
            object: deployment(),
        },
    );
    assert_eq!(out.unwrap(), Response::Status(Some(json!({}))));
    let err = run(
        "function ReflectStatus(obj) return nil end",
        Request::InterpretStatus {
            object: deployment(),
        },
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "expect the returned replica type is table but got nil"
    );
}

#[test]
fn replicas_must_be_a_number() {
    let source = "function GetReplicas(obj) return obj.spec.replicas, nil end";
    let out = run(
        source,
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap();
    assert_eq!(
        out,
        Response::Replicas {
            replicas: 3,
            requirements: None
        }
    );
    let source = "function GetReplicas(obj) return 2.9, {resourceRequest = {cpu = '100m', memory = 0.5}} end";
    let Response::Replicas {
        replicas,
        requirements,
    } = run(
        source,
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap()
    else {
        panic!("replicas")
    };
    assert_eq!(replicas, 2, "truncated toward zero");
    let requests = requirements.unwrap().resource_request;
    assert_eq!(requests["cpu"].0, "100m");
    assert_eq!(requests["memory"].0, "500m");
    let err = run(
        "function GetReplicas(obj) return '3' end",
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap_err();
    assert_eq!(err.message, "result type string is not number");
    let err = run(
        "function GetReplicas(obj) return 1, 'x' end",
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "expect the returned requires type is table but got string"
    );
}

#[test]
fn typed_results_drop_empty_values_as_karmada_does() {
    // A claim built from absent template fields is an empty table: no claim at all, as in Karmada, while an
    // input's empty list copied in (`resources = {}` of the container) goes too.
    let source = "function GetReplicas(obj)\n local r = {nodeClaim = {}}\n \
                  r.nodeClaim.nodeSelector = obj.spec.template.spec.nodeSelector\n \
                  r.resourceRequest = obj.spec.template.spec.containers[1].resources\n \
                  r.namespace = 'ns'\n return obj.spec.replicas + 1, r\nend";
    let out = run(
        source,
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap();
    let Response::Replicas {
        replicas,
        requirements: Some(requirements),
    } = out
    else {
        panic!("replicas: {out:?}")
    };
    assert_eq!(replicas, 4);
    assert!(requirements.node_claim.is_none(), "{requirements:?}");
    assert!(requirements.resource_request.is_empty());
    assert_eq!(requirements.namespace, "ns");

    // Only the empty values the script returned go: a claim whose one member was empty stays, empty.
    let source = "function GetReplicas(obj) return 1, {nodeClaim = {tolerations = {}}} end";
    let Response::Replicas {
        requirements: Some(requirements),
        ..
    } = run(
        source,
        Request::InterpretReplica {
            object: deployment(),
        },
    )
    .unwrap()
    else {
        panic!("replicas")
    };
    let claim = requirements.node_claim.expect("claim kept");
    assert!(claim.tolerations.is_empty() && claim.node_selector.is_empty());
}

#[test]
fn components_and_dependencies_decode_typed() {
    let source = "function GetComponents(obj) return {{name = 'a', replicas = 2}, {Name = 'b', REPLICAS = 1}} end";
    let Response::Components(components) = run(
        source,
        Request::InterpretComponent {
            object: deployment(),
        },
    )
    .unwrap() else {
        panic!("components")
    };
    assert_eq!(
        components
            .iter()
            .map(|c| (c.name.as_str(), c.replicas))
            .collect::<Vec<_>>(),
        [("a", 2), ("b", 1)]
    );
    let out = run(
        "function GetComponents(obj) return nil end",
        Request::InterpretComponent {
            object: deployment(),
        },
    );
    assert_eq!(out.unwrap(), Response::Components(Vec::new()));
    let err = run(
        "function GetComponents(obj) return {{name = 'a', replicas = 2.5}} end",
        Request::InterpretComponent {
            object: deployment(),
        },
    )
    .unwrap_err();
    assert!(
        err.message.starts_with("json unmarshal obj failed"),
        "{err}"
    );

    let source = "function GetDependencies(obj)\n local refs = {}\n \
                  refs[1] = {apiVersion = 'v1', kind = 'ConfigMap', name = 'cm', namespace = obj.metadata.namespace}\n \
                  return refs\nend";
    let Response::Dependencies(refs) = run(
        source,
        Request::InterpretDependency {
            object: deployment(),
        },
    )
    .unwrap() else {
        panic!("dependencies")
    };
    assert_eq!(refs.len(), 1);
    assert_eq!(
        (
            refs[0].kind.as_str(),
            refs[0].name.as_str(),
            refs[0].namespace.as_str()
        ),
        ("ConfigMap", "cm", "default")
    );
    let out = run(
        "function GetDependencies(obj) return {} end",
        Request::InterpretDependency {
            object: deployment(),
        },
    );
    assert_eq!(out.unwrap(), Response::Dependencies(Vec::new()));
}

#[test]
fn objects_must_keep_their_kind() {
    let source = "function ReviseReplica(obj, n) obj.kind = nil return obj end";
    let err = run(
        source,
        Request::ReviseReplica {
            object: deployment(),
            replicas: 1,
        },
    )
    .unwrap_err();
    assert_eq!(err.message, "Object 'Kind' is missing");
    let err = run(
        "function ReviseReplica(obj, n) return 1 end",
        Request::ReviseReplica {
            object: deployment(),
            replicas: 1,
        },
    )
    .unwrap_err();
    assert_eq!(
        err.message,
        "expect the returned requires type is table but got number"
    );
}

#[test]
fn missing_function_is_reported_with_karmadas_text() {
    let err = health("function Other() end", deployment()).unwrap_err();
    assert_eq!(
        (err.kind, err.message.as_str()),
        (
            ScriptErrorKind::MissingFunction,
            "not found function InterpretHealth"
        )
    );
    let err = health("InterpretHealth = 3", deployment()).unwrap_err();
    assert_eq!(err.message, "InterpretHealth is not a function: number");
    let err = health("function InterpretHealth(obj) return true", deployment()).unwrap_err();
    assert_eq!(err.kind, ScriptErrorKind::Compile);
}

#[test]
fn numbers_print_as_go_does() {
    assert_eq!(eval("3/1"), "3");
    assert_eq!(eval("0.1"), "0.1");
    assert_eq!(eval("1234567.5"), "1.2345675e+06");
    assert_eq!(
        eval("string.format('%s|%d|%5.2f', 2.5, 2.7, 3.14159)"),
        "2.5|2| 3.14"
    );
    assert_eq!(eval("math.floor(2.5)"), "2");
    assert_eq!(eval("tonumber('1e3')"), "nil");
    assert_eq!(eval("tonumber(' 0x10 ')"), "16");
    assert_eq!(eval("math.huge > 1e308 and math.huge < 1/0"), "true");
    assert_eq!(eval("_VERSION"), "Lua 5.1");
}

#[test]
fn lua51_names_exist() {
    assert_eq!(eval("unpack({1, 2, 3})"), "1");
    assert_eq!(eval("table.getn({1, 2, 3})"), "3");
    assert_eq!(eval("table.maxn({1, 2, 3})"), "3");
    assert_eq!(eval("math.mod(7, 3)"), "1");
    assert_eq!(eval("math.pow(2, 10)"), "1024");
    assert_eq!(eval("select('#', string.gfind('a b', '%a+'))"), "1");
    assert_eq!(
        eval(
            "(function() local out = {} for w in string.gfind('a b c', '%a+') do out[#out+1] = w end return table.concat(out, ',') end)()"
        ),
        "a,b,c"
    );
    assert_eq!(eval("('ABC'):lower()"), "abc");
    assert_eq!(eval("string.find('a.b', '.', 1, true)"), "2");
    assert_eq!(eval("type(os.time())"), "number");
    assert_eq!(eval("#os.date('!%Y-%m-%dT%H:%M:%SZ')"), "20");
    assert_eq!(eval("type(require('kube').resourceAdd)"), "function");
}

#[test]
fn sandbox_refuses_what_karmada_refuses() {
    for name in [
        "collectgarbage",
        "dofile",
        "getfenv",
        "getmetatable",
        "load",
        "loadfile",
        "loadstring",
        "rawequal",
        "rawget",
        "rawset",
        "setfenv",
        "setmetatable",
        "module",
        "newproxy",
    ] {
        let message = eval(&format!("select(2, pcall({name}, {{}}))"));
        assert_eq!(
            message,
            format!(
                "call function {name} is not supported in karmada customized resourceinterpreter."
            ),
            "{name}"
        );
    }
    for name in ["rep", "gsub", "dump"] {
        let message = eval(&format!("select(2, pcall(string.{name}, 'x', 2))"));
        assert!(
            message.starts_with(&format!(
                "The Lua function string.{name} is not supported by Karmada."
            )),
            "{message}"
        );
    }
    assert_eq!(eval("type(io)"), "nil");
    assert_eq!(eval("type(debug)"), "nil");
    assert_eq!(eval("type(coroutine)"), "nil");
    assert_eq!(eval("type(os.exit)"), "nil");
    assert_eq!(eval("type(os.getenv)"), "nil");
    assert_eq!(eval("type(os.clock)"), "nil");
    assert_eq!(eval("type(utf8)"), "nil");
    assert_eq!(eval("type(bit32)"), "nil");
    assert_eq!(eval("type(buffer)"), "nil");
    assert_eq!(
        eval("select(2, pcall(package.loadlib))"),
        "loadlib is not supported"
    );
    assert!(eval("select(2, pcall(require, 'json'))").contains("module json not found"));
    assert!(eval("select(2, pcall(function() string.upper = nil end))").contains("readonly"));
    let message = eval(
        "select(2, pcall(function() local s = 'x' for i = 1, 20 do s = s .. s end return string.upper(s) end))",
    );
    assert!(
        message.contains(
            "string length 1048576 exceeds the maximum allowed input string length 1000000"
        ),
        "{message}"
    );
}

#[test]
fn globals_do_not_leak_between_calls_or_scripts() {
    let vm = vm();
    let first = vm.script("first", "leaked = 'yes'\ncounter = (counter or 0) + 1\nfunction InterpretHealth(obj) helper = true return counter == 1 end");
    let second = vm.script("second", "function InterpretHealth(obj) return leaked == nil and helper == nil and counter == nil end");
    for _ in 0..3 {
        assert_eq!(
            vm.call_blocking(
                &first,
                Request::InterpretHealth {
                    object: deployment()
                }
            )
            .unwrap(),
            Response::Healthy(true)
        );
        assert_eq!(
            vm.call_blocking(
                &second,
                Request::InterpretHealth {
                    object: deployment()
                }
            )
            .unwrap(),
            Response::Healthy(true)
        );
    }
    // A script without the function does not find one a previous script defined (no stale globals: Karmada's pooled
    // states keep them).
    let missing = vm.script("missing", "local x = 1");
    let err = vm
        .call_blocking(
            &missing,
            Request::InterpretHealth {
                object: deployment(),
            },
        )
        .unwrap_err();
    assert_eq!(err.message, "not found function InterpretHealth");
}

#[test]
fn generalized_iteration_sees_only_members() {
    let source = "function ReviseReplica(obj)
      local spec = obj.spec
      local seen = spec.replicas
      local keys = {}
      for k in spec do keys[#keys + 1] = type(k) end
      obj.kinds = table.concat(keys, ',')
      return obj
    end";
    let out = object(
        run(
            source,
            Request::ReviseReplica {
                object: deployment(),
                replicas: 1,
            },
        )
        .unwrap(),
    );
    assert!(
        out["kinds"]
            .as_str()
            .unwrap()
            .split(',')
            .all(|k| k == "string"),
        "{}",
        out["kinds"]
    );
    let mut want = deployment();
    want["kinds"] = out["kinds"].clone();
    assert_eq!(out, want);
}

/// A script's globals are one plain table: a global that shadows a library name and is then assigned nil is nil,
/// as Karmada's FlinkDeployment AggregateStatus relies on (`error = ''`, later `error = currentStatus.error`).
#[test]
fn a_global_that_shadows_a_library_name_stays_nil_once_assigned_nil() {
    let source = r#"
        function InterpretHealth(obj)
            error = ''
            error = obj.status.error
            if error ~= nil then
                return false
            end
            print = nil
            tostring = 'shadow'
            return type(print) == 'nil' and tostring == 'shadow' and type(pairs) == 'function'
        end"#;
    let object = json!({"kind": "X", "status": {}});
    assert_eq!(health(source, object.clone()), Ok(true));
    // The library is intact for the next call, in the same state.
    let vm = vm();
    let script = vm.script("shadow", source);
    for _ in 0..3 {
        assert!(matches!(
            vm.call_blocking(
                &script,
                Request::InterpretHealth {
                    object: object.clone()
                }
            ),
            Ok(Response::Healthy(true))
        ));
    }
    assert_eq!(eval("type(error)"), "function");
}
