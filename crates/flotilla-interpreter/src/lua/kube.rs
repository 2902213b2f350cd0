//! The `kube` library scripts `require` (interpreter spec §4.6): quantity arithmetic and the native pod-template
//! computations, so that scripts get exactly the native layer's answers.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use mlua::{Lua, MultiValue, Table, Value as LuaValue};

use k8s_openapi::api::core::v1::{
    Affinity, Container, NodeAffinity, NodeSelector, PodSpec, ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use serde::Deserialize;
use serde_json::Value;

use super::bridge::Typed;
use super::call::lua_type;
use super::sandbox::with_bridge;
use crate::quantity::Quantity;

/// Builds the (read-only once frozen) library table.
pub(crate) fn library(lua: &Lua) -> mlua::Result<Table> {
    let kube = lua.create_table()?;
    kube.raw_set("resourceAdd", lua.create_function(resource_add)?)?;
    kube.raw_set(
        "getResourceQuantity",
        lua.create_function(get_resource_quantity)?,
    )?;
    kube.raw_set(
        "accuratePodRequirements",
        lua.create_function(accurate_pod_requirements)?,
    )?;
    kube.raw_set(
        "getPodDependencies",
        lua.create_function(get_pod_dependencies)?,
    )?;
    Ok(kube)
}

fn parse(value: &LuaValue, function: &str, position: usize) -> mlua::Result<Quantity> {
    match value {
        LuaValue::Nil => Ok(Quantity::ZERO),
        LuaValue::String(s) => {
            let text = s.to_str()?;
            Quantity::parse(&text).map_err(|e| {
                mlua::Error::runtime(format!(
                    "{function}: cannot parse quantity {:?}: {e}",
                    &*text
                ))
            })
        }
        other => Err(mlua::Error::runtime(format!(
            "bad argument #{position} to {function} (string expected, got {})",
            lua_type(other)
        ))),
    }
}

/// `kube.resourceAdd(q1, q2, ...)`: the canonical sum, in the format of the first non-zero addend.
fn resource_add(_: &Lua, args: MultiValue) -> mlua::Result<String> {
    let mut sum = Quantity::ZERO;
    for (i, arg) in args.iter().enumerate() {
        sum = sum.add(parse(arg, "resourceAdd", i + 1)?);
    }
    Ok(sum.to_string())
}

/// `kube.getResourceQuantity(q)`: the approximate value of a quantity as a number.
fn get_resource_quantity(_: &Lua, args: MultiValue) -> mlua::Result<f64> {
    if args.len() != 1 {
        return Err(mlua::Error::runtime(
            "getResourceQuantity only accepts one argument",
        ));
    }
    let q = parse(&args[0], "getResourceQuantity", 1)?;
    let value = q.as_f64();
    if value < 0.0 || value.is_infinite() {
        return Err(mlua::Error::runtime(format!(
            "getResourceQuantity: quantity {q} is negative or infinite"
        )));
    }
    Ok(value)
}

/// `kube.accuratePodRequirements(podTemplate)`: the native replica requirements of a pod template, or nil.
fn accurate_pod_requirements(lua: &Lua, args: MultiValue) -> mlua::Result<LuaValue> {
    if args.len() != 1 {
        return Err(mlua::Error::runtime(
            "getPodRequirements only accepts one argument",
        ));
    }
    let template = template(lua, &args[0], "accuratePodRequirements", requirements_view)?;
    let requirements = crate::native::pod::replica_requirements(&template)
        .map_err(|e| mlua::Error::runtime(format!("accuratePodRequirements: {e}")))?;
    match requirements {
        None => Ok(LuaValue::Nil),
        Some(requirements) => {
            let json = serde_json::to_value(&requirements).map_err(mlua::Error::external)?;
            with_bridge(lua, |bridge| {
                bridge.push_typed(lua, json, Typed::Requirements(requirements))
            })
        }
    }
}

/// `kube.getPodDependencies(podTemplate, namespace)`: the native pod dependencies, an empty list when none
/// (Flotilla decision 14).
fn get_pod_dependencies(lua: &Lua, args: MultiValue) -> mlua::Result<LuaValue> {
    if args.len() != 2 {
        return Err(mlua::Error::runtime(
            "getPodDependencies only accepts two arguments",
        ));
    }
    let template = template(lua, &args[0], "getPodDependencies", whole)?;
    let namespace = match &args[1] {
        LuaValue::Nil => "default".to_owned(),
        LuaValue::String(s) => s.to_str()?.to_owned(),
        LuaValue::Number(n) => super::gofmt::number_to_string(*n),
        LuaValue::Integer(i) => i.to_string(),
        other => {
            return Err(mlua::Error::runtime(format!(
                "bad argument #2 to getPodDependencies (string expected, got {})",
                lua_type(other)
            )));
        }
    };
    let dependencies = match &template.spec {
        Some(spec) => crate::native::pod::dependencies(spec, &namespace),
        None => Vec::new(),
    };
    let json = serde_json::to_value(dependencies).map_err(mlua::Error::external)?;
    with_bridge(lua, |bridge| bridge.push(lua, json))
}

/// A pod template argument decoded with `decode` (as Go decodes it into a `PodTemplateSpec`). The script keeps its
/// table; an untouched one is read in place.
fn template(
    lua: &Lua,
    value: &LuaValue,
    function: &str,
    decode: fn(&Value) -> Result<PodTemplateSpec, serde_json::Error>,
) -> mlua::Result<PodTemplateSpec> {
    if !matches!(value, LuaValue::Table(_)) {
        return Err(mlua::Error::runtime(format!(
            "bad argument #1 to {function} (table expected, got {})",
            lua_type(value)
        )));
    }
    let decoded = with_bridge(lua, |bridge| {
        bridge
            .with_json(value, |json| {
                // A new empty table stands for an empty template, whatever shape it would encode to.
                if json.as_array().is_some_and(Vec::is_empty) {
                    return Ok(PodTemplateSpec::default());
                }
                decode(json)
            })
            .map_err(|e| mlua::Error::runtime(format!("{function}: {e}")))
    })?;
    decoded.map_err(|e| mlua::Error::runtime(format!("{function}: json unmarshal obj failed: {e}")))
}

/// The whole template (dependencies are read from every container and volume).
fn whole(template: &Value) -> Result<PodTemplateSpec, serde_json::Error> {
    PodTemplateSpec::deserialize(template)
}

/// The part of a pod template the replica requirements are computed from (interpreter spec §3.2): node selector,
/// tolerations, required node affinity, overhead, and each container's name and resources. Decoding only this
/// makes the call several times cheaper for realistic templates; the native computation reads nothing else, so
/// the answer is the same. Unlike Karmada, a wrong type in a field outside this view is not an error here.
fn requirements_view(template: &Value) -> Result<PodTemplateSpec, serde_json::Error> {
    let view = TemplateView::deserialize(template)?;
    let Some(spec) = view.spec else {
        return Ok(PodTemplateSpec::default());
    };
    let containers = |list: Option<Vec<ContainerView>>| -> Vec<Container> {
        list.unwrap_or_default()
            .into_iter()
            .map(|c| Container {
                name: c.name.unwrap_or_default(),
                resources: c.resources,
                ..Container::default()
            })
            .collect()
    };
    let affinity = spec
        .affinity
        .and_then(|a| a.node_affinity)
        .and_then(|n| n.required_during_scheduling_ignored_during_execution)
        .map(|required| Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(required),
                ..NodeAffinity::default()
            }),
            ..Affinity::default()
        });
    Ok(PodTemplateSpec {
        metadata: None,
        spec: Some(PodSpec {
            containers: containers(spec.containers),
            init_containers: Some(containers(spec.init_containers)).filter(|c| !c.is_empty()),
            overhead: spec.overhead,
            node_selector: spec.node_selector,
            tolerations: spec.tolerations,
            affinity,
            ..PodSpec::default()
        }),
    })
}

/// The fields of a pod template [`requirements_view`] decodes; everything else is skipped unread.
#[derive(Deserialize)]
struct TemplateView {
    spec: Option<SpecView>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecView {
    containers: Option<Vec<ContainerView>>,
    init_containers: Option<Vec<ContainerView>>,
    overhead: Option<std::collections::BTreeMap<String, K8sQuantity>>,
    node_selector: Option<std::collections::BTreeMap<String, String>>,
    tolerations: Option<Vec<Toleration>>,
    affinity: Option<AffinityView>,
}

#[derive(Deserialize)]
struct ContainerView {
    name: Option<String>,
    resources: Option<ResourceRequirements>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AffinityView {
    node_affinity: Option<NodeAffinityView>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeAffinityView {
    required_during_scheduling_ignored_during_execution: Option<NodeSelector>,
}
