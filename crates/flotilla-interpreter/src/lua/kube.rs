//! The `kube` library scripts `require`, with Karmada's four functions: quantity arithmetic and the native
//! pod-template computations, so that scripts get exactly the native layer's answers.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use mlua::{Lua, MultiValue, Table, Value as LuaValue};
use serde::Deserialize;

use super::bridge::Typed;
use super::call::lua_type;
use super::sandbox::with_bridge;
use crate::native::NativeError;
use crate::native::requirements::template_requirements;
use flotilla_apimachinery::quantity::{Quantity, approximate_f64};

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
    // Kubernetes' approximation depends on the spelling, not only the value (`0.3` is 0.30000000000000004).
    let value = match &args[0] {
        LuaValue::String(s) => approximate_f64(&s.to_str()?).map_err(|e| {
            mlua::Error::runtime(format!("getResourceQuantity: cannot parse quantity: {e}"))
        })?,
        _ => 0.0,
    };
    if value < 0.0 || value.is_infinite() {
        return Err(mlua::Error::runtime(format!(
            "getResourceQuantity: quantity {q} is negative or infinite"
        )));
    }
    Ok(value)
}

/// `kube.accuratePodRequirements(podTemplate)`: the native replica requirements of a pod template, or nil. An
/// untouched template is read in place, without converting or copying it.
fn accurate_pod_requirements(lua: &Lua, args: MultiValue) -> mlua::Result<LuaValue> {
    const FUNCTION: &str = "accuratePodRequirements";
    if args.len() != 1 {
        return Err(mlua::Error::runtime(
            "getPodRequirements only accepts one argument",
        ));
    }
    check_table(&args[0], FUNCTION)?;
    let computed = with_bridge(lua, |bridge| {
        bridge
            .with_json(&args[0], |json| {
                // A new empty table stands for an empty template, whatever shape it would encode to.
                if json.as_array().is_some_and(Vec::is_empty) {
                    return Ok(None);
                }
                template_requirements(json, || "pod template".to_owned())
            })
            .map_err(|e| mlua::Error::runtime(format!("{FUNCTION}: {e}")))
    })?;
    let requirements = computed.map_err(|e| match e {
        NativeError::Decode { source, .. } => {
            mlua::Error::runtime(format!("{FUNCTION}: json unmarshal obj failed: {source}"))
        }
        other => mlua::Error::runtime(format!("{FUNCTION}: {other}")),
    })?;
    match requirements {
        None => Ok(LuaValue::Nil),
        Some(requirements) => with_bridge(lua, |bridge| {
            bridge.push_typed(lua, Typed::Requirements(requirements))
        }),
    }
}

/// `kube.getPodDependencies(podTemplate, namespace)`: the native pod dependencies, an empty list when none (Karmada
/// returns nil, which fails a GetDependencies that returns it directly: docs/INTERPRETER.md).
fn get_pod_dependencies(lua: &Lua, args: MultiValue) -> mlua::Result<LuaValue> {
    if args.len() != 2 {
        return Err(mlua::Error::runtime(
            "getPodDependencies only accepts two arguments",
        ));
    }
    let template = template(lua, &args[0], "getPodDependencies")?;
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

/// Raises Lua's bad-argument error unless `value` is a table.
fn check_table(value: &LuaValue, function: &str) -> mlua::Result<()> {
    if matches!(value, LuaValue::Table(_)) {
        return Ok(());
    }
    Err(mlua::Error::runtime(format!(
        "bad argument #1 to {function} (table expected, got {})",
        lua_type(value)
    )))
}

/// A pod template argument decoded whole, as Go decodes it into a `PodTemplateSpec` (dependencies are read from
/// every container and volume). The script keeps its table; an untouched one is read in place.
fn template(lua: &Lua, value: &LuaValue, function: &str) -> mlua::Result<PodTemplateSpec> {
    check_table(value, function)?;
    let decoded = with_bridge(lua, |bridge| {
        bridge
            .with_json(value, |json| {
                // A new empty table stands for an empty template, whatever shape it would encode to.
                if json.as_array().is_some_and(Vec::is_empty) {
                    return Ok(PodTemplateSpec::default());
                }
                PodTemplateSpec::deserialize(json)
            })
            .map_err(|e| mlua::Error::runtime(format!("{function}: {e}")))
    })?;
    decoded.map_err(|e| mlua::Error::runtime(format!("{function}: json unmarshal obj failed: {e}")))
}
