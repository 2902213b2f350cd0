//! Iteration order (issue 16, item 3): `pairs`, `next` and generalized iteration over a table made from a JSON
//! object visit its keys in the object's own order, deterministically, then the keys a script added, in the order
//! it added them (gopher-lua keeps a table's keys in insertion order, and Karmada fills a table in the object's
//! order).

use serde_json::{Value, json};

use super::*;
use crate::layer::{Request, Response};

/// The names of the components a script returns, in order.
fn component_names(source: &str, object: Value) -> Vec<String> {
    let vm = LuaVm::new(VmConfig::default());
    let script = vm.script("order", source);
    match vm.call_blocking(&script, Request::InterpretComponent { object }) {
        Ok(Response::Components(components)) => components.into_iter().map(|c| c.name).collect(),
        other => panic!("unexpected {other:?}"),
    }
}

/// A script that lists `spec.parts`' keys with `iterate` (a Lua expression over `parts` driving a generic `for`).
fn lister(prepare: &str, iterate: &str) -> String {
    format!(
        "function GetComponents(obj)
           local parts = obj.spec.parts
           {prepare}
           local out = {{}}
           for k, v in {iterate} do
             table.insert(out, {{name = k, replicas = 1}})
           end
           return out
         end"
    )
}

/// Keys that Luau's hash order puts out of the object's order, some upper case, one not ASCII.
fn parts() -> Value {
    let mut map = serde_json::Map::new();
    for key in [
        "Worker", "Launcher", "alpha", "Zed", "beta", "a10", "a9", "émile", "_x", "0",
    ] {
        map.insert(key.to_owned(), json!(1));
    }
    json!({"kind": "Thing", "spec": {"parts": Value::Object(map)}})
}

fn object_order(object: &Value) -> Vec<String> {
    object["spec"]["parts"]
        .as_object()
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// serde_json's maps in this workspace keep keys in byte order (its `preserve_order` feature is off), which is
/// also how kube-apiserver stores custom resources; the bridge hands members to Lua in the map's order.
#[test]
fn objects_hold_their_keys_in_byte_order() {
    let order = object_order(&parts());
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

#[test]
fn pairs_visits_an_objects_keys_in_its_order() {
    let want = object_order(&parts());
    for _ in 0..5 {
        assert_eq!(component_names(&lister("", "pairs(parts)"), parts()), want);
    }
}

#[test]
fn next_and_generalized_iteration_follow_the_same_order() {
    let want = object_order(&parts());
    assert_eq!(component_names(&lister("", "next, parts"), parts()), want);
    assert_eq!(component_names(&lister("", "parts"), parts()), want);
}

/// Members read one by one before the walk keep their place in the object's order.
#[test]
fn members_read_before_the_walk_keep_their_place() {
    let prepare = "local w = parts.Worker local z = parts.Zed local e = parts['émile']";
    assert_eq!(
        component_names(&lister(prepare, "pairs(parts)"), parts()),
        object_order(&parts())
    );
}

/// Keys a script adds come after the object's own, in the order it added them; a member it changed stays put.
#[test]
fn keys_a_script_adds_follow_in_insertion_order() {
    let mut want = object_order(&parts());
    want.extend(["zz", "Added", "mid"].map(str::to_owned));
    let before = "parts.zz = 1 parts.Launcher = 2 parts.Added = 1";
    assert_eq!(
        component_names(
            &lister(&format!("{before} parts.mid = 1"), "pairs(parts)"),
            parts()
        ),
        want
    );
    // The same when the object was walked whole first (its members already moved into the table).
    let walked = format!("for _ in pairs(parts) do end {before} parts.mid = 1");
    assert_eq!(
        component_names(&lister(&walked, "pairs(parts)"), parts()),
        want
    );
    // And for an empty object, which is a table of the script's keys only.
    let empty = json!({"kind": "Thing", "spec": {"parts": {}}});
    assert_eq!(
        component_names(
            &lister("parts.b = 1 parts.a = 1 parts.c = 1", "pairs(parts)"),
            empty
        ),
        ["b", "a", "c"]
    );
}

/// A removed member is skipped, and removing members during the walk is allowed, as in Lua.
#[test]
fn removed_members_are_skipped() {
    let mut want = object_order(&parts());
    want.retain(|k| k != "Zed" && k != "beta");
    let source = lister("parts.Zed = nil", "pairs(parts)");
    let source = source.replace(
        "table.insert(out",
        "if k == 'alpha' then parts.beta = nil end table.insert(out",
    );
    assert_eq!(component_names(&source, parts()), want);
}

/// Karmada's bundled MPIJob components come from `pairs` over `spec.mpiReplicaSpecs`: Launcher, then Worker.
#[test]
fn replica_specs_come_out_launcher_first() {
    let source = "function GetComponents(obj)
        local out = {}
        for name, spec in pairs(obj.spec.mpiReplicaSpecs) do
          table.insert(out, {name = string.lower(name), replicas = spec.replicas})
        end
        return out
      end";
    let object = json!({"kind": "MPIJob", "spec": {"mpiReplicaSpecs": {
        "Worker": {"replicas": 2}, "Launcher": {"replicas": 1}}}});
    for _ in 0..5 {
        assert_eq!(
            component_names(source, object.clone()),
            ["launcher", "worker"]
        );
    }
}
