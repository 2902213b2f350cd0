//! One sandboxed Lua state: Karmada's library set, the bridge's metatables, a CPU deadline
//! checked by Luau's interrupt and a memory limit, and a cache of loaded chunks.
//!
//! Invariants: the globals every script sees live in one read-only table (the prelude's result); each call runs
//! its chunk in a fresh environment table that falls back to it, so nothing a script defines outlives its call.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use mlua::{Function, Lua, LuaOptions, MultiValue, StdLib, Table, Value as LuaValue, VmState};

use super::bridge::Bridge;
use super::gofmt::{self, DateOutput};
use super::kube;

/// The budget of the running call, shared by the interrupt callback and the bridge (kept in the state's app data).
pub(crate) struct Budget {
    /// When this state was made; deadlines are nanoseconds after it.
    base: Instant,
    /// Nanoseconds after `base` at which the running call must stop; 0 when no call runs.
    at: AtomicU64,
    /// Interrupts seen, to sample the clock.
    ticks: AtomicU64,
    /// A memory limit the bridge lifted and the next interrupt puts back (0: none).
    pending_limit: AtomicUsize,
    /// The running call is past its deadline.
    expired: AtomicBool,
}

/// Marker error raised by the interrupt when the deadline has passed.
#[derive(Debug, thiserror::Error)]
#[error("context deadline exceeded")]
pub(crate) struct DeadlineExceeded;

/// One Lua state ready to run scripts.
pub(crate) struct Sandbox {
    pub(crate) lua: Lua,
    /// The prelude's `invoke(chunk, name, ...)`.
    invoke: Function,
    deadline: Arc<Budget>,
    chunks: HashMap<u64, Function>,
}

/// Most chunks a state keeps loaded; past it the cache starts over (scripts are recompiled from cached bytecode).
const MAX_CHUNKS: usize = 512;

impl Sandbox {
    /// Builds a state with the restricted libraries.
    pub(crate) fn new() -> mlua::Result<Sandbox> {
        let lua = Lua::new_with(
            StdLib::STRING | StdLib::TABLE | StdLib::MATH | StdLib::OS,
            LuaOptions::new(),
        )?;

        // A call allocates a few kilobytes that are garbage once it returns; letting the heap grow to eight times
        // its live size between cycles spends far less time collecting, for a heap of well under a megabyte.
        lua.gc_set_mode(mlua::state::GcMode::Incremental(
            mlua::state::GcIncParams::default().goal(800),
        ));

        let deadline = Arc::new(Budget {
            base: Instant::now(),
            at: AtomicU64::new(0),
            ticks: AtomicU64::new(0),
            pending_limit: AtomicUsize::new(0),
            expired: AtomicBool::new(false),
        });
        lua.set_app_data(deadline.clone());

        let lazy_mt = lua.create_table()?;
        let obj_mt = lua.create_table()?;
        let arr_mt = lua.create_table()?;
        lua.set_app_data(Bridge::new(lazy_mt.clone(), obj_mt.clone(), arr_mt.clone()));

        let host = lua.create_table()?;
        host.raw_set("lazy", lazy_mt)?;
        host.raw_set("obj", obj_mt)?;
        let templates = lua.create_table()?;
        for i in 0..super::bridge::TEMPLATES {
            // One hash slot more than the members, for the slot number the lazy table carries.
            let (narr, nrec) = if i < 7 {
                (0, (1 << i) + 1)
            } else {
                (1 << (i - 7), 1)
            };
            templates.raw_set(i + 1, lua.create_table_with_capacity(narr, nrec)?)?;
        }
        host.raw_set("templates", templates)?;
        host.raw_set("arr", arr_mt)?;
        host.raw_set(
            "get",
            lua.create_function({
                let budget = deadline.clone();
                move |lua, (slot, key): (f64, String)| {
                    with_bridge_budget(lua, Some(&budget), |bridge| bridge.get(slot, &key))
                }
            })?,
        )?;
        host.raw_set(
            "forget",
            lua.create_function({
                let budget = deadline.clone();
                move |lua, (slot, key, nil): (f64, String, bool)| {
                    with_bridge_budget(lua, Some(&budget), |bridge| bridge.forget(slot, &key, nil))
                }
            })?,
        )?;
        host.raw_set(
            "fetch",
            lua.create_function({
                let budget = deadline.clone();
                move |lua, (t, slot): (Table, f64)| {
                    with_bridge_budget(lua, Some(&budget), |bridge| bridge.fetch(&t, slot))
                }
            })?,
        )?;
        host.raw_set(
            "number_to_string",
            lua.create_function(|_, n: f64| Ok(gofmt::number_to_string(n)))?,
        )?;
        host.raw_set(
            "parse_number",
            lua.create_function(|_, s: mlua::LuaString| {
                Ok(std::str::from_utf8(&s.as_bytes())
                    .ok()
                    .and_then(gofmt::parse_number))
            })?,
        )?;
        host.raw_set("print", lua.create_function(print)?)?;
        host.raw_set("os_time", lua.create_function(os_time)?)?;
        host.raw_set("os_date", lua.create_function(os_date)?)?;
        host.raw_set("kube", kube::library(&lua)?)?;

        let prelude_env = lua.create_table()?;
        for pair in lua.globals().pairs::<LuaValue, LuaValue>() {
            let (k, v) = pair?;
            prelude_env.raw_set(k, v)?;
        }
        prelude_env.set_safeenv(true);
        prelude_env.set_readonly(true);
        let (globals, invoke): (Table, Function) = lua
            .load(include_str!("prelude.lua"))
            .set_name("=prelude")
            .set_environment(prelude_env)
            .call(host)?;
        freeze(&globals)?;

        let watch = deadline.clone();
        // The callback runs at every Lua call and return, and only on this state's thread: plain loads and stores
        // are enough, and spare the locked read-modify-write instructions.
        lua.set_interrupt(move |lua| {
            let pending = watch.pending_limit.load(Ordering::Relaxed);
            if pending != 0 {
                watch.pending_limit.store(0, Ordering::Relaxed);
                lua.set_memory_limit(pending)?;
            }
            // Reading the clock costs more than the rest of the callback: look at it every 64th interrupt. Once the
            // deadline has passed every interrupt raises, so a script cannot catch the error and carry on.
            if watch.expired.load(Ordering::Relaxed) {
                return Err(mlua::Error::external(DeadlineExceeded));
            }
            let n = watch.ticks.load(Ordering::Relaxed);
            watch.ticks.store(n.wrapping_add(1), Ordering::Relaxed);
            if n.is_multiple_of(64) {
                let at = watch.at.load(Ordering::Relaxed);
                if at != 0 && watch.base.elapsed().as_nanos() as u64 > at {
                    watch.expired.store(true, Ordering::Relaxed);
                    return Err(mlua::Error::external(DeadlineExceeded));
                }
            }
            Ok(VmState::Continue)
        });
        Ok(Sandbox {
            lua,
            invoke,
            deadline,
            chunks: HashMap::new(),
        })
    }

    /// Starts a call's budget: the CPU deadline and `memory` bytes on top of what the state holds now.
    ///
    /// The memory limit takes effect at the first interrupt, that is as soon as the script's chunk is called: the
    /// trusted prelude code before it pushes the arguments through mlua's fast paths, which a limit disables.
    pub(crate) fn arm(&self, timeout: Duration, memory: usize) {
        self.deadline.expired.store(false, Ordering::Relaxed);
        let at = self.deadline.base.elapsed() + timeout;
        self.deadline
            .at
            .store(at.as_nanos().max(1) as u64, Ordering::Relaxed);
        let limit = self.lua.used_memory().saturating_add(memory).max(1);
        self.deadline.pending_limit.store(limit, Ordering::Relaxed);
    }

    /// Ends a call's budget: no deadline, and no memory limit until the next `arm` sets a fresh one.
    pub(crate) fn disarm(&self) {
        self.deadline.at.store(0, Ordering::Relaxed);
        self.deadline.pending_limit.store(0, Ordering::Relaxed);
        let _ = self.lua.set_memory_limit(0);
    }

    /// Forgets the objects of the finished call.
    pub(crate) fn finish(&self) {
        if let Some(bridge) = self.lua.app_data_ref::<Bridge>() {
            bridge.reset();
        }
    }

    /// Whether the current call's deadline has passed.
    pub(crate) fn deadline_passed(&self) -> bool {
        if self.deadline.expired.load(Ordering::Relaxed) {
            return true;
        }
        let at = self.deadline.at.load(Ordering::Relaxed);
        at != 0 && self.deadline.base.elapsed().as_nanos() as u64 > at
    }

    /// Loads the chunk of a compiled script, once per state; [`Sandbox::invoke`] runs it by `id`.
    pub(crate) fn load_chunk(&mut self, id: u64, name: &str, bytecode: &[u8]) -> mlua::Result<()> {
        if self.chunks.contains_key(&id) {
            return Ok(());
        }
        if self.chunks.len() >= MAX_CHUNKS {
            self.chunks.clear();
        }
        let chunk = self
            .lua
            .load(bytecode)
            .set_name(format!("={name}"))
            .set_mode(mlua::chunk::ChunkMode::Binary)
            .into_function()?;
        self.chunks.insert(id, chunk);
        Ok(())
    }

    /// Runs the loaded chunk `id` in a fresh environment, then calls the global `function` it defined with `args`.
    ///
    /// Errors: the chunk or the function raising, or `function` missing or not a function (Karmada's texts).
    pub(crate) fn invoke(
        &self,
        id: u64,
        function: &'static str,
        args: [Arg; 2],
    ) -> Result<(LuaValue, LuaValue), DefineError> {
        let chunk = self
            .chunks
            .get(&id)
            .ok_or_else(|| DefineError::Lua(mlua::Error::runtime("script chunk is not loaded")))?;
        let [(c1, a1), (c2, a2)] = args.map(Arg::into_pair);
        // The chunk is passed by reference: pushing it then costs no registry reference of its own. No operation
        // reads more than two results, so they are taken as a fixed tuple (no list allocated).
        let (defined, first, second): (LuaValue, LuaValue, LuaValue) = self
            .invoke
            .call((chunk, function, c1, a1, c2, a2))
            .map_err(DefineError::Lua)?;
        match defined {
            LuaValue::Boolean(true) => Ok((first, second)),
            _ => {
                let message = match first {
                    LuaValue::String(s) => s.to_string_lossy(),
                    _ => format!("not found function {function}"),
                };
                Err(DefineError::Missing(message))
            }
        }
    }

    /// The bridge of this state.
    pub(crate) fn bridge(&self) -> mlua::Result<mlua::AppDataRef<'_, Bridge>> {
        self.lua
            .app_data_ref::<Bridge>()
            .ok_or_else(|| mlua::Error::runtime("lua bridge is missing"))
    }
}

/// One argument of a script function.
pub(crate) enum Arg {
    /// A JSON container, as a bridge slot code; the prelude makes the table.
    Container(f64),
    /// Any other value.
    Plain(LuaValue),
}

impl Arg {
    fn into_pair(self) -> (bool, LuaValue) {
        match self {
            Arg::Container(code) => (true, LuaValue::Number(code)),
            Arg::Plain(value) => (false, value),
        }
    }
}

/// Why a script could not provide its function.
pub(crate) enum DefineError {
    /// Loading or running the chunk failed.
    Lua(mlua::Error),
    /// The function is absent or not a function.
    Missing(String),
}

/// Runs `f` with this state's bridge, from a callback during a call.
///
/// The memory limit is lifted meanwhile, and until the next interrupt (the callback's return or the script's next
/// call or loop): under a limit mlua wraps every API call in a protected call and pushes returned strings through
/// references, which makes conversions several times slower. Bridge work is bounded by data the call was given or a
/// library computed, and what it allocates still counts against the limit once it is back.
pub(crate) fn with_bridge<R>(
    lua: &Lua,
    f: impl FnOnce(&Bridge) -> mlua::Result<R>,
) -> mlua::Result<R> {
    with_bridge_budget(lua, None, f)
}

/// [`with_bridge`] for the bridge's own callbacks, which hold the state's budget and so spare looking it up on
/// every member a script reads.
fn with_bridge_budget<R>(
    lua: &Lua,
    budget: Option<&Budget>,
    f: impl FnOnce(&Bridge) -> mlua::Result<R>,
) -> mlua::Result<R> {
    let bridge = lua
        .app_data_ref::<Bridge>()
        .ok_or_else(|| mlua::Error::runtime("lua bridge is missing"))?;
    let limit = lua.set_memory_limit(0)?;
    if limit != 0 {
        match budget {
            Some(budget) => budget.pending_limit.store(limit, Ordering::Relaxed),
            None => {
                if let Some(budget) = lua.app_data_ref::<Arc<Budget>>() {
                    budget.pending_limit.store(limit, Ordering::Relaxed);
                }
            }
        }
    }
    f(&bridge)
}

/// Makes the globals and every library table read-only, so no script can change what the next one sees.
fn freeze(globals: &Table) -> mlua::Result<()> {
    for pair in globals.pairs::<LuaValue, LuaValue>() {
        let (_, value) = pair?;
        if let LuaValue::Table(t) = value
            && !t.is_readonly()
        {
            freeze(&t)?;
        }
    }
    globals.set_readonly(true);
    Ok(())
}

/// `print`: arguments as `tostring` shows them, tab-separated, on standard output (as Karmada does).
fn print(lua: &Lua, args: MultiValue) -> mlua::Result<()> {
    let tostring: Function = lua.globals().raw_get("tostring")?;
    let mut line = Vec::new();
    for (i, arg) in args.into_iter().enumerate() {
        if i > 0 {
            line.push(b'\t');
        }
        let text = match arg {
            LuaValue::Number(n) => gofmt::number_to_string(n).into_bytes(),
            LuaValue::String(s) => s.as_bytes().to_vec(),
            other => tostring.call::<mlua::LuaString>(other)?.as_bytes().to_vec(),
        };
        line.extend_from_slice(&text);
    }
    line.push(b'\n');
    let _ = std::io::stdout().lock().write_all(&line);
    Ok(())
}

/// `os.time([t])`: seconds since the epoch, now or for the local time a table describes (hour defaults to 12).
fn os_time(_: &Lua, table: Option<Table>) -> mlua::Result<i64> {
    let Some(t) = table else {
        return Ok(jiff::Timestamp::now().as_second());
    };
    let field = |name: &str, default: Option<i64>| -> mlua::Result<i64> {
        match t.get::<Option<f64>>(name)? {
            Some(v) => Ok(v as i64),
            None => default.ok_or_else(|| {
                mlua::Error::runtime(format!("field '{name}' missing in date table"))
            }),
        }
    };
    let (year, month, day) = (
        field("year", None)?,
        field("month", None)?,
        field("day", None)?,
    );
    let (hour, min, sec) = (
        field("hour", Some(12))?,
        field("min", Some(0))?,
        field("sec", Some(0))?,
    );
    // Go's time.Date normalises out-of-range fields; do the same by adding them as spans to a valid base date.
    let base = jiff::civil::date(2000, 1, 1).at(0, 0, 0, 0);
    let span = jiff::Span::new()
        .try_years(year - 2000)
        .and_then(|s| s.try_months(month - 1))
        .and_then(|s| s.try_days(day - 1))
        .and_then(|s| s.try_hours(hour))
        .and_then(|s| s.try_minutes(min))
        .and_then(|s| s.try_seconds(sec))
        .map_err(|e| mlua::Error::runtime(format!("os.time: {e}")))?;
    let civil = base
        .checked_add(span)
        .map_err(|e| mlua::Error::runtime(format!("os.time: {e}")))?;
    let zoned = civil
        .to_zoned(jiff::tz::TimeZone::system())
        .map_err(|e| mlua::Error::runtime(format!("os.time: {e}")))?;
    Ok(zoned.timestamp().as_second())
}

/// `os.date([format[, time]])`, see [`gofmt::os_date`].
fn os_date(
    lua: &Lua,
    (format, time): (Option<mlua::LuaString>, Option<f64>),
) -> mlua::Result<LuaValue> {
    let format = format.map(|f| String::from_utf8_lossy(&f.as_bytes()).into_owned());
    let out = gofmt::os_date(
        format.as_deref(),
        time.map(|t| t as i64),
        jiff::Timestamp::now(),
        &jiff::tz::TimeZone::system(),
    );
    match out {
        DateOutput::Text(text) => Ok(LuaValue::String(lua.create_string(text)?)),
        DateOutput::Table(d) => {
            let t = lua.create_table_with_capacity(0, 9)?;
            for (k, v) in [
                ("year", d.year),
                ("month", d.month),
                ("day", d.day),
                ("hour", d.hour),
                ("min", d.min),
                ("sec", d.sec),
                ("wday", d.wday),
                ("yday", 0),
            ] {
                t.raw_set(k, v)?;
            }
            t.raw_set("isdst", false)?;
            Ok(LuaValue::Table(t))
        }
    }
}
