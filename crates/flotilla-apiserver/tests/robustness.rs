//! Arbitrary input never panics the protocol modules: every request-controlled string or body either parses
//! or is refused with an error. Inputs come from a seeded generator, so a failure reproduces exactly.
#![allow(clippy::unwrap_used, clippy::panic)]

use flotilla_registry::fields::FieldSelector;
use flotilla_registry::kind_info::KindInfo;
use flotilla_registry::patch::{self, PatchType};
use flotilla_registry::selector::Selector;
use flotilla_registry::table::jsonpath::JsonPath;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value, json};

const CASES: usize = 2000;

const DEPLOY: KindInfo<'static> = KindInfo {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    namespaced: true,
    crd_version: None,
};

fn live() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w", "finalizers": ["a"]},
        "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}]}]}}}})
}

/// A string of up to `max` characters drawn from `alphabet`.
fn text(rng: &mut StdRng, alphabet: &str, max: usize) -> String {
    let chars: Vec<char> = alphabet.chars().collect();
    let len = rng.random_range(0..=max);
    (0..len)
        .map(|_| chars[rng.random_range(0..chars.len())])
        .collect()
}

/// Keys that make merges, directives and merge keys likely.
const KEYS: &[&str] = &[
    "name",
    "a",
    "b",
    "containers",
    "ports",
    "containerPort",
    "finalizers",
    "metadata",
    "spec",
    "template",
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
    "op",
    "path",
    "value",
];

fn value(rng: &mut StdRng, depth: u32) -> Value {
    let kind = if depth == 0 {
        rng.random_range(0..4)
    } else {
        rng.random_range(0..6)
    };
    match kind {
        0 => Value::Null,
        1 => Value::Bool(rng.random()),
        2 => Value::from(rng.random_range(-2i64..100)),
        3 => Value::String(text(rng, "abc$/.:-replacedelete", 8)),
        4 => Value::Array(
            (0..rng.random_range(0..4))
                .map(|_| value(rng, depth - 1))
                .collect(),
        ),
        _ => {
            let mut m = Map::new();
            for _ in 0..rng.random_range(0..4) {
                let key = KEYS[rng.random_range(0..KEYS.len())].to_string();
                m.insert(key, value(rng, depth - 1));
            }
            Value::Object(m)
        }
    }
}

#[test]
fn label_selectors_parse_or_refuse() {
    let mut rng = StdRng::seed_from_u64(1);
    for _ in 0..CASES {
        let input = text(&mut rng, "abx01=!(),. -/_<>inotin", 24);
        if let Ok(sel) = Selector::parse(&input) {
            // What we print parses back to the same requirements.
            let again = Selector::parse(&sel.to_string())
                .unwrap_or_else(|e| panic!("{input:?} -> {sel}: {e}"));
            assert_eq!(again.requirements(), sel.requirements(), "{input:?}");
            let _ = sel.matches(Some(&json!({"a": "b"})));
        }
    }
}

#[test]
fn field_selectors_and_jsonpaths_parse_or_refuse() {
    let mut rng = StdRng::seed_from_u64(2);
    for _ in 0..CASES {
        let input = text(&mut rng, "metadata.name=!,\\ab", 24);
        let _ = FieldSelector::parse_for_kind(&input, &DEPLOY).map(|f| f.matches(&live()));
        let path = text(&mut rng, "ab.[]*?@=()'\"0-{}$", 24);
        if let Ok(p) = JsonPath::parse(&path) {
            let _ = p.find(&live());
        }
    }
}

#[test]
fn patches_apply_or_refuse() {
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..CASES {
        let body = value(&mut rng, 4).to_string();
        for t in [PatchType::Json, PatchType::Merge, PatchType::Strategic] {
            let _ = patch::apply_patch(t, &live(), body.as_bytes(), &DEPLOY);
        }
    }
}

#[test]
fn server_side_apply_applies_or_refuses() {
    let mut rng = StdRng::seed_from_u64(4);
    let opts = patch::apply::WriteOptions {
        manager: "m",
        subresource: None,
        now: "2026-11-22T10:00:00Z",
        reset_fields: &[],
    };
    for _ in 0..CASES {
        let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "w"}, "spec": value(&mut rng, 4)});
        let force = rng.random();
        if let Ok(out) = patch::apply::apply(Some(&live()), &config, &DEPLOY, &opts, force) {
            let again = patch::apply::apply(Some(&out), &config, &DEPLOY, &opts, force).unwrap();
            assert_eq!(
                again, out,
                "re-applying the same configuration is a no-op: {config}"
            );
        }
    }
}

#[test]
fn protobuf_bodies_decode_or_refuse() {
    let mut rng = StdRng::seed_from_u64(5);
    for _ in 0..CASES {
        let mut body = flotilla_apiserver::protobuf::MAGIC.to_vec();
        body.extend((0..rng.random_range(0..64)).map(|_| rng.random::<u8>()));
        let _ = flotilla_apiserver::protobuf::decode(&body);
    }
}
