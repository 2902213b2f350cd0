//! The per-call budgets: the CPU deadline (also inside built-in calls, and not catchable by `pcall`) and the memory
//! limit; a state stays usable after either.

use std::time::{Duration, Instant};

use serde_json::json;

use super::*;
use crate::layer::{Request, Response};

/// Runs `source`'s InterpretHealth on `vm`.
fn health(vm: &LuaVm, name: &str, source: &str) -> Result<Response, ScriptError> {
    let script = vm.script(name, source);
    vm.call_blocking(
        &script,
        Request::InterpretHealth {
            object: json!({"kind": "X"}),
        },
    )
}

/// A failure of the given kind, which names the script and the function.
fn failure(vm: &LuaVm, name: &str, source: &str, kind: ScriptErrorKind) {
    let err = health(vm, name, source).unwrap_err();
    assert_eq!(err.kind, kind, "{err}");
    assert!(
        err.to_string().contains(name) && err.to_string().contains("InterpretHealth"),
        "{err}"
    );
}

fn still_usable(vm: &LuaVm) {
    assert_eq!(
        health(vm, "ok", "function InterpretHealth(obj) return true end").unwrap(),
        Response::Healthy(true)
    );
}

#[test]
fn tight_loops_stop_at_the_deadline() {
    let vm = LuaVm::new(VmConfig {
        limits: Limits {
            timeout: Duration::from_secs(1),
            ..Limits::default()
        },
        ..VmConfig::default()
    });
    let started = Instant::now();
    failure(
        &vm,
        "spin",
        "function InterpretHealth(obj) while true do end end",
        ScriptErrorKind::Deadline,
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
    // pcall cannot swallow the deadline.
    failure(
        &vm,
        "pcall",
        "function InterpretHealth(obj) while true do pcall(function() while true do end end) end end",
        ScriptErrorKind::Deadline,
    );
    // Heavy pattern matching inside a built-in is interrupted too.
    failure(
        &vm,
        "pattern",
        "function InterpretHealth(obj) local s = 'a' for i = 1, 17 do s = s .. s end \
         while true do string.find(s, '(.-)(.-)(.-)(.-)b') end end",
        ScriptErrorKind::Deadline,
    );
    still_usable(&vm);
}

#[test]
fn memory_limit_stops_runaway_allocation() {
    let vm = LuaVm::new(VmConfig {
        limits: Limits {
            memory: 8 * 1024 * 1024,
            ..Limits::default()
        },
        ..VmConfig::default()
    });
    failure(
        &vm,
        "hog",
        "function InterpretHealth(obj) local t = {} local i = 1 while true do t[i] = {i, i, i} i = i + 1 end end",
        ScriptErrorKind::Memory,
    );
    failure(
        &vm,
        "strings",
        "function InterpretHealth(obj) local s = 'x' while true do s = s .. s end end",
        ScriptErrorKind::Memory,
    );
    still_usable(&vm);
}
