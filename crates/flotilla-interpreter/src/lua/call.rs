//! One operation through one script: the global function it must define, the arguments that function receives and
//! the rules its results must follow, as in Karmada.

use flotilla_api::config::v1alpha1::{DependentObjectReference, InterpreterOperation};
use flotilla_api::work::v1alpha2::{AggregatedStatusItem, ReplicaRequirements};
use mlua::{Lua, Value as LuaValue};
use serde_json::Value;

use super::bridge::{Bridge, Mode, Typed};
use super::error::{ScriptError, ScriptErrorKind, lua_message};
use super::sandbox::{Arg, DefineError, Sandbox};
use super::typed;
use super::vm::{Limits, Script};
use crate::layer::{Input, Request, Response};

/// The global function a script defines for an operation.
pub fn function_name(operation: &InterpreterOperation) -> &'static str {
    match operation {
        InterpreterOperation::InterpretReplica => "GetReplicas",
        InterpreterOperation::InterpretComponent => "GetComponents",
        InterpreterOperation::ReviseReplica => "ReviseReplica",
        InterpreterOperation::Retain => "Retain",
        InterpreterOperation::AggregateStatus => "AggregateStatus",
        InterpreterOperation::InterpretStatus => "ReflectStatus",
        InterpreterOperation::InterpretHealth => "InterpretHealth",
        InterpreterOperation::InterpretDependency => "GetDependencies",
        InterpreterOperation::All
        | InterpreterOperation::Prune
        | InterpreterOperation::Other(_) => "",
    }
}

/// Runs `script` for `input` in `sandbox` under `limits`.
///
/// Errors: a [`ScriptError`] naming the script and function for compile errors, runtime errors, a passed deadline,
/// an exceeded memory limit, a missing function or a result that breaks the operation's rules.
pub(crate) fn run(
    sandbox: &mut Sandbox,
    script: &Script,
    input: Input,
    limits: &Limits,
) -> Result<Response, ScriptError> {
    let function = function_name(&input.operation());
    let result = execute(sandbox, script, function, input, limits);
    sandbox.disarm();
    sandbox.finish();
    result.map_err(|(kind, message)| ScriptError::new(script.name(), function, kind, message))
}

fn execute(
    sandbox: &mut Sandbox,
    script: &Script,
    function: &'static str,
    input: Input,
    limits: &Limits,
) -> Result<Response, (ScriptErrorKind, String)> {
    let runtime = |e: mlua::Error| (ScriptErrorKind::Runtime, lua_message(&e));
    let bytecode = script
        .bytecode()
        .map_err(|message| (ScriptErrorKind::Compile, message))?;
    sandbox
        .load_chunk(script.id(), script.name(), bytecode)
        .map_err(runtime)?;
    let operation = input.operation();
    let args = {
        let bridge = sandbox.bridge().map_err(runtime)?;
        arguments(&sandbox.lua, &bridge, input).map_err(runtime)?
    };
    // The budget covers the script (chunk and function), not the conversions around it, which are bounded by the
    // input and by what the script built within its budget.
    sandbox.arm(limits.timeout, limits.memory);
    let invoked = sandbox.invoke(script.id(), function, args);
    let deadline_passed = sandbox.deadline_passed();
    sandbox.disarm();
    let results = invoked.map_err(|e| match e {
        DefineError::Missing(message) => (ScriptErrorKind::MissingFunction, message),
        DefineError::Lua(_) if deadline_passed => (
            ScriptErrorKind::Deadline,
            format!(
                "CPU deadline of {:?} exceeded: context deadline exceeded",
                limits.timeout
            ),
        ),
        DefineError::Lua(e) if is_memory_error(&e) => (
            ScriptErrorKind::Memory,
            format!("memory limit of {} bytes exceeded", limits.memory),
        ),
        DefineError::Lua(e) => runtime(e),
    })?;
    let bridge = sandbox.bridge().map_err(runtime)?;
    results_of(&bridge, operation, results).map_err(|message| (ScriptErrorKind::Result, message))
}

/// Applies Karmada's result rules to a function's results: GetReplicas returns a number and optionally a
/// requirements table; GetComponents a table or nil (no components); ReviseReplica, Retain and AggregateStatus an
/// object that keeps its `kind`; ReflectStatus a table (nil is an error); InterpretHealth a boolean (nil is an
/// error); GetDependencies a table of references.
fn results_of(
    bridge: &Bridge,
    operation: InterpreterOperation,
    (first, second): (LuaValue, LuaValue),
) -> Result<Response, String> {
    let to_json = |value: &LuaValue| bridge.to_json(value, Mode::Take).map_err(|e| e.0);
    let not_table = |value: &LuaValue| {
        format!(
            "expect the returned requires type is table but got {}",
            lua_type(value)
        )
    };
    match operation {
        InterpreterOperation::InterpretReplica => {
            let replicas = typed::replicas(&first)?;
            let requirements = match &second {
                LuaValue::Nil => None,
                // `kube.accuratePodRequirements` returned unchanged: its typed answer needs no conversion
                // beyond what Karmada's JSON round trip does to its quantities.
                LuaValue::Table(_) if let Some(Typed::Requirements(r)) = bridge.typed(&second) => {
                    Some(typed::redecoded(r))
                }
                LuaValue::Table(_) => Some(typed::decode::<ReplicaRequirements>(
                    to_json(&second)?,
                    typed::Target::Requirements,
                )?),
                other => return Err(not_table(other)),
            };
            Ok(Response::Replicas {
                replicas,
                requirements,
            })
        }
        InterpreterOperation::InterpretComponent => match &first {
            LuaValue::Nil => Ok(Response::Components(Vec::new())),
            LuaValue::Table(_) => Ok(Response::Components(typed::decode(
                to_json(&first)?,
                typed::Target::Components,
            )?)),
            other => Err(not_table(other)),
        },
        InterpreterOperation::ReviseReplica
        | InterpreterOperation::Retain
        | InterpreterOperation::AggregateStatus => {
            let LuaValue::Table(_) = &first else {
                return Err(not_table(&first));
            };
            let json = to_json(&first)?;
            if json
                .get("kind")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err("Object 'Kind' is missing".to_owned());
            }
            Ok(Response::Object(json))
        }
        InterpreterOperation::InterpretStatus => match &first {
            LuaValue::Table(_) => Ok(Response::Status(Some(to_json(&first)?))),
            other => Err(format!(
                "expect the returned replica type is table but got {}",
                lua_type(other)
            )),
        },
        InterpreterOperation::InterpretHealth => match first {
            LuaValue::Boolean(healthy) => Ok(Response::Healthy(healthy)),
            other => Err(format!("result type {} is not bool", lua_type(&other))),
        },
        InterpreterOperation::InterpretDependency => match &first {
            LuaValue::Table(_) => Ok(Response::Dependencies(typed::decode::<
                Vec<DependentObjectReference>,
            >(
                to_json(&first)?,
                typed::Target::Dependencies,
            )?)),
            other => Err(not_table(other)),
        },
        InterpreterOperation::All
        | InterpreterOperation::Prune
        | InterpreterOperation::Other(_) => {
            Err(format!("operation {operation} has no Lua function"))
        }
    }
}

/// The Lua arguments of each function: the desired or observed object, and ReviseReplica's replica count,
/// Retain's observed object or AggregateStatus's status items (`nil` when absent).
fn arguments(lua: &Lua, bridge: &Bridge, input: Input) -> mlua::Result<[Arg; 2]> {
    let items_absent = input.items_absent();
    let request = input.into_request();
    let object = |value: Value| -> mlua::Result<Arg> {
        Ok(match bridge.container(value) {
            Ok(code) => Arg::Container(code),
            Err(scalar) => Arg::Plain(bridge.push(lua, scalar)?),
        })
    };
    Ok(match request {
        Request::InterpretReplica { object: o }
        | Request::InterpretComponent { object: o }
        | Request::InterpretStatus { object: o }
        | Request::InterpretHealth { object: o }
        | Request::InterpretDependency { object: o } => [object(o)?, Arg::Plain(LuaValue::Nil)],
        Request::ReviseReplica {
            object: o,
            replicas,
        } => [object(o)?, Arg::Plain(LuaValue::Number(replicas as f64))],
        Request::Retain { desired, observed } => [object(desired)?, object(observed)?],
        Request::AggregateStatus { object: o, items } => [
            object(o)?,
            if items_absent {
                Arg::Plain(LuaValue::Nil)
            } else {
                object(status_items(items))?
            },
        ],
    })
}

/// Status items as Karmada serialises them (`applied` absent when false, empty strings and health absent), handed to
/// the script lazily like the objects.
fn status_items(items: Vec<AggregatedStatusItem>) -> Value {
    let items = items
        .into_iter()
        .map(|item| {
            let mut map = serde_json::Map::new();
            map.insert("clusterName".to_owned(), Value::String(item.cluster_name));
            if let Some(status) = item.status {
                map.insert("status".to_owned(), status);
            }
            if item.applied {
                map.insert("applied".to_owned(), Value::Bool(true));
            }
            if !item.applied_message.is_empty() {
                map.insert(
                    "appliedMessage".to_owned(),
                    Value::String(item.applied_message),
                );
            }
            if let Some(health) = item.health {
                map.insert(
                    "health".to_owned(),
                    Value::String(health.as_str().to_owned()),
                );
            }
            Value::Object(map)
        })
        .collect();
    Value::Array(items)
}

/// Lua's name for a value's type, as Karmada's messages print it.
pub(crate) fn lua_type(value: &LuaValue) -> &'static str {
    match value {
        LuaValue::Integer(_) => "number",
        LuaValue::LightUserData(_) => "userdata",
        other => other.type_name(),
    }
}

/// Whether the call ran out of its memory budget (also when a script caught the error and raised it again).
fn is_memory_error(error: &mlua::Error) -> bool {
    match error {
        mlua::Error::MemoryError(_) => true,
        mlua::Error::RuntimeError(message) if message.contains("not enough memory") => true,
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            is_memory_error(cause)
        }
        _ => false,
    }
}
