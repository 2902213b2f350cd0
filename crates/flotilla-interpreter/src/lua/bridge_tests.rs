//! The JSON <-> Lua bridge: lossless round trips (property tests), lazy tables seen through every library
//! function, and the encoding rules for values scripts build (Karmada's, but lossless: docs/INTERPRETER.md).

use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

use super::*;
use crate::layer::{Request, Response};

fn revise(source: &str, object: Value) -> Result<Value, ScriptError> {
    let vm = LuaVm::default();
    let script = vm.script("bridge", source);
    match vm.call_blocking(
        &script,
        Request::ReviseReplica {
            object,
            replicas: 0,
        },
    )? {
        Response::Object(v) => Ok(v),
        other => panic!("unexpected {other:?}"),
    }
}

fn wrap(data: Value) -> Value {
    json!({"kind": "X", "data": data})
}

/// Touches every table, so every level is materialized, then returns the object.
const WALK: &str =
    "local function walk(t) for k, v in pairs(t) do if type(v) == 'table' then walk(v) end end end
function ReviseReplica(obj) walk(obj) return obj end";

/// Reads every member and writes it back in place.
const REWRITE: &str = "local function rewrite(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  for _, k in ipairs(keys) do
    local v = t[k]
    if type(v) == 'table' then rewrite(v) end
    t[k] = v
  end
end
function ReviseReplica(obj) rewrite(obj) return obj end";

fn arbitrary_json() -> impl Strategy<Value = Value> {
    let number = prop_oneof![
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        (-1000i32..1000).prop_map(|i| Value::from(f64::from(i))),
    ];
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number,
        ".{0,8}".prop_map(Value::String)
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,6}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Reads (and writes back) a few members at two levels, leaving the rest in the bridge's remainder.
const PARTIAL: &str = "function ReviseReplica(obj)
  if type(obj.data) ~= 'table' then return obj end
  for _, k in ipairs({'a', 'b', 'x'}) do
    local v = obj.data[k]
    if type(v) == 'table' then
      local inner = v.a
      v.b = v.b
    end
    if k == 'b' then obj.data[k] = v end
  end
  obj.data.missing = nil
  return obj
end";

fn small_keys_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<i64>().prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::String)
    ];
    leaf.prop_recursive(3, 32, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[abcx]{0,2}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Walks `obj.data` with `pairs`, recording each member's path in visit order, and returns the object with the
/// record in `visited`.
const VISIT: &str = "local seen = {}
local function walk(t, path)
  for k, v in pairs(t) do
    local here = path .. '/' .. tostring(k)
    seen[#seen + 1] = here
    if type(v) == 'table' then walk(v, here) end
  end
end
function ReviseReplica(obj)
  if type(obj.data) == 'table' then walk(obj.data, '') end
  obj.visited = seen
  return obj
end";

/// The paths `VISIT` records for `value`: members in the order the JSON object holds them (a `null` member is
/// absent in Lua), array elements by 1-based index (a `null` element is the `null` userdata, so it is visited).
fn visit_order(value: &Value, path: &str, out: &mut Vec<Value>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map.iter().filter(|(_, v)| !v.is_null()) {
                let here = format!("{path}/{k}");
                out.push(Value::String(here.clone()));
                visit_order(v, &here, out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                let here = format!("{path}/{}", i + 1);
                out.push(Value::String(here.clone()));
                visit_order(v, &here, out);
            }
        }
        _ => {}
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Identity through Lua down to the text: key order, `{}` against `[]`, `3` against `3.0`, integers beyond
    /// 2^53 and `null`s all survive a walk of every table, and the walk visits each object's keys in its order
    /// (issue 16).
    #[test]
    fn objects_walked_with_pairs_come_back_as_they_were(data in arbitrary_json()) {
        let object = wrap(data.clone());
        let mut out = revise(VISIT, object.clone()).unwrap();
        let visited = out.as_object_mut().and_then(|m| m.remove("visited")).unwrap_or(Value::Null);
        prop_assert_eq!(serde_json::to_string(&out).unwrap(), serde_json::to_string(&object).unwrap());
        let mut want = Vec::new();
        visit_order(&data, "", &mut want);
        // An empty record is a new empty table, which leaves Lua as an object.
        let visited = match visited {
            Value::Object(m) if m.is_empty() => Value::Array(Vec::new()),
            other => other,
        };
        prop_assert_eq!(visited, Value::Array(want));
    }

    #[test]
    fn untouched_objects_round_trip(data in arbitrary_json()) {
        let object = wrap(data);
        prop_assert_eq!(revise("function ReviseReplica(obj) return obj end", object.clone()).unwrap(), object);
    }

    #[test]
    fn materialized_objects_round_trip(data in arbitrary_json()) {
        let object = wrap(data);
        prop_assert_eq!(revise(WALK, object.clone()).unwrap(), object);
    }

    #[test]
    fn partly_read_objects_round_trip(data in small_keys_json()) {
        let object = wrap(data);
        prop_assert_eq!(revise(PARTIAL, object.clone()).unwrap(), object);
    }

    #[test]
    fn rewritten_objects_round_trip(data in arbitrary_json()) {
        let object = wrap(data);
        prop_assert_eq!(revise(REWRITE, object.clone()).unwrap(), object);
    }
}

#[test]
fn shapes_numbers_and_nulls_survive() {
    let object = wrap(json!({
        "emptyObject": {}, "emptyArray": [], "nested": {"a": [[], {}, null, 1, 2.5, 3.0]},
        "big": 9007199254740993i64, "huge": u64::MAX, "negativeZero": -0.0, "nullMember": null
    }));
    for source in [WALK, REWRITE] {
        let out = revise(source, object.clone()).unwrap();
        assert_eq!(out, object);
        assert!(out["data"]["nested"]["a"][4].is_f64() && out["data"]["nested"]["a"][3].is_i64());
    }
}

#[test]
fn new_values_encode_by_their_lua_shape() {
    let source = "function ReviseReplica(obj)
      obj.empty = {}
      obj.list = {1, 2, 3}
      obj.map = {a = 1}
      obj.integral = 6 / 2
      obj.fraction = 1 / 4
      obj.text = 'x' .. 1
      obj.data.emptyArray = {}
      table.insert(obj.data.items, {name = 'c'})
      return obj
    end";
    let out = revise(
        source,
        wrap(json!({"emptyArray": [1], "items": [{"name": "a"}, {"name": "b"}]})),
    )
    .unwrap();
    assert_eq!(out["empty"], json!({}), "a new empty table is an object");
    assert_eq!(out["list"], json!([1, 2, 3]));
    assert_eq!(out["map"], json!({"a": 1}));
    assert!(out["integral"].is_i64() && out["integral"] == json!(3));
    assert_eq!(out["fraction"], json!(0.25));
    assert_eq!(out["text"], json!("x1"));
    assert_eq!(
        out["data"]["emptyArray"],
        json!({}),
        "a replaced table takes its new shape"
    );
    assert_eq!(
        out["data"]["items"],
        json!([{"name": "a"}, {"name": "b"}, {"name": "c"}])
    );
}

#[test]
fn lazy_tables_answer_every_library_function() {
    let source = "function ReviseReplica(obj)
      local items = obj.data.items
      local out = {}
      out.len = #obj.data.items
      out.getn = table.getn(obj.data.list)
      out.maxn = table.maxn(obj.data.list)
      out.concat = table.concat(obj.data.words, '-')
      out.unpacked = select('#', unpack(obj.data.list))
      local keys = {}
      for k in pairs(obj.data.map) do keys[#keys + 1] = k end
      table.sort(keys)
      out.keys = table.concat(keys, ',')
      local n = 0
      for _, v in ipairs(obj.data.list) do n = n + v end
      out.sum = n
      out.first = next(obj.data.single)
      table.sort(obj.data.unsorted)
      table.remove(obj.data.words, 1)
      obj.data.added = true
      obj.out = out
      return obj
    end";
    let data = json!({"items": [1, 2, 3], "list": [1, 2, 3, 4], "words": ["a", "b"], "map": {"y": 1, "x": 2},
        "single": {"only": 1}, "unsorted": [3, 1, 2]});
    let out = revise(source, wrap(data)).unwrap();
    assert_eq!(
        out["out"],
        json!({"len": 3, "getn": 4, "maxn": 4, "concat": "a-b", "unpacked": 4, "keys": "x,y", "sum": 10, "first": "only"})
    );
    assert_eq!(out["data"]["unsorted"], json!([1, 2, 3]));
    assert_eq!(out["data"]["words"], json!(["b"]));
    assert_eq!(out["data"]["added"], json!(true));
}

#[test]
fn null_array_elements_are_kept_and_visible() {
    let source = "function ReviseReplica(obj)
      obj.count = #obj.data
      obj.kindOfHole = type(obj.data[2])
      return obj
    end";
    let out = revise(source, wrap(json!([1, null, 3]))).unwrap();
    assert_eq!(out["data"], json!([1, null, 3]));
    assert_eq!(
        (out["count"].clone(), out["kindOfHole"].clone()),
        (json!(3), json!("userdata"))
    );
}

#[test]
fn the_same_table_may_appear_twice() {
    let source =
        "function ReviseReplica(obj) obj.copy = obj.data obj.again = obj.data return obj end";
    let out = revise(source, wrap(json!({"deep": {"a": [1, 2]}}))).unwrap();
    assert_eq!(out["copy"], out["data"]);
    assert_eq!(out["again"], out["data"]);
}

#[test]
fn values_json_cannot_hold_are_refused() {
    let err = |source: &str| revise(source, wrap(json!({}))).unwrap_err().message;
    assert_eq!(
        err("function ReviseReplica(obj) obj.f = print return obj end"),
        "cannot encode function to JSON"
    );
    assert_eq!(
        err("function ReviseReplica(obj) obj.x = obj return obj end"),
        "cannot encode recursively nested tables to JSON"
    );
    assert_eq!(
        err("function ReviseReplica(obj) obj.x = {[1] = 1, [3] = 3} return obj end"),
        "cannot encode sparse array"
    );
    assert!(err("function ReviseReplica(obj) obj.x = {1, a = 2} return obj end").contains("mixed"));
    assert!(
        err("function ReviseReplica(obj) obj.x = 0/0 return obj end")
            .starts_with("cannot encode number NaN")
    );
    assert!(
        err("function ReviseReplica(obj) obj.x = 1/0 return obj end")
            .starts_with("cannot encode number +Inf")
    );
}
