//! The JSON <-> Lua bridge: Karmada's conversions, except that values keep their JSON shape (docs/INTERPRETER.md).
//!
//! Objects enter Lua lazily. A JSON object or array becomes a table with the `LAZY` metatable and a slot number
//! under a hidden key; the slot keeps the JSON members not yet handed to Lua (the *remainder*). Reading a member of
//! an object moves just that member into the table (children stay lazy); assigning a member drops it from the
//! remainder. Anything that looks at a whole table (`pairs`, `next`, `#`, `table.*`, `unpack`) and any access to an
//! array first moves every remaining member, after which the table carries a shape marker (`OBJ` or `ARR`) so that it
//! leaves Lua as the same JSON type even when empty. On the way out a table's remainder is reused as it was; so a
//! script that reads two fields of a Deployment converts two fields, not the tree.
//!
//! Invariants:
//! * a lazy table's members are its raw entries plus its remainder, which never share a key; scripts cannot see the
//!   hidden key or bypass the metamethods (the sandbox blocks `rawget`, `rawset`, `getmetatable`, `setmetatable` and
//!   wraps every library function that reads whole tables);
//! * values Lua cannot hold exactly (JSON `null` members, integers beyond 2^53, integral floats like `3.0`) stay in the
//!   remainder, or, once moved, are kept aside per table and put back on the way out if the script did not change
//!   them; `null` array elements become the `null` light userdata so that positions are kept;
//! * slots belong to one call: [`Bridge::reset`] drops them and bumps a generation so a stale table can never read
//!   another call's data.

mod encode;
mod fetch;

use std::cell::RefCell;
use std::collections::HashMap;

use mlua::{Either, Lua, Table, Value as LuaValue};
use serde_json::{Number, Value};

/// Why a Lua value could not become JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct ConvertError(pub String);

/// Largest magnitude at which every integer is exactly representable as a double (2^53).
const EXACT_INT: u64 = 1 << 53;
/// Slot numbers encode the call generation above this factor, so stale lazy tables are detected.
const GENERATION_FACTOR: f64 = 4_294_967_296.0;

/// Child code for a member that is an empty JSON object.
const EMPTY_OBJECT: f64 = -1.0;
/// Child code for a member that is an empty JSON array.
const EMPTY_ARRAY: f64 = -2.0;

/// Presized empty tables the prelude clones for lazy tables, so filling them does not rehash: objects with room for
/// 2^k members (1-based index k+1, k < 7), then arrays with room for 2^k elements (index 8 + k).
pub(crate) const TEMPLATES: usize = 14;

/// One value the bridge hands to Lua as a function result, pushed without creating an mlua reference: a key or
/// string, a number, a boolean, or the `null` light userdata.
pub(crate) type Member = Either<String, Either<f64, Either<bool, LuaValue>>>;

fn number_member(n: f64) -> Member {
    Either::Right(Either::Left(n))
}

fn bool_member(b: bool) -> Member {
    Either::Right(Either::Right(Either::Left(b)))
}

/// A member the Lua value cannot represent exactly, restored on output if the script left it alone.
#[derive(Clone, Debug)]
struct Residue {
    key: PathSeg,
    original: Value,
    /// The number the script saw, or `None` for a `null` object member (absent in Lua).
    seen: Option<f64>,
}

/// One step of a path inside a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum PathSeg {
    Key(String),
    Index(usize),
}

/// The shape a table carries, read from its metatable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Lazy,
    Object,
    Array,
    Unmarked,
}

/// A typed library result kept beside its table.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Typed {
    /// From `kube.accuratePodRequirements`.
    Requirements(flotilla_api::work::v1alpha2::ReplicaRequirements),
}

#[derive(Default)]
struct CallData {
    generation: u32,
    /// Remainders of lazy tables, by slot.
    slots: Vec<Option<Value>>,
    /// Tables with residues, by address; the table handle keeps the address from being reused during the call.
    residues: HashMap<usize, (Table, Vec<Residue>)>,
    /// Residues of members read one at a time from a lazy table, by its slot (the table is not at hand then);
    /// they move to `residues` when the table is read whole.
    slot_residues: HashMap<usize, Vec<Residue>>,
    /// Typed forms of library results, by slot.
    typed: HashMap<usize, Typed>,
    /// Per slot: whether the script has looked into its table (read, assigned or walked a member). A lazy table
    /// whose slot is not marked still has all its members in its remainder.
    touched: Vec<bool>,
    /// Slots of typed results whose JSON is not made yet (they hold `null` meanwhile); see [`Bridge::realize`].
    pending: Vec<usize>,
}

/// How lazy tables leave Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The final result of a call: remainders are moved out of their slots.
    Take,
    /// An argument to a library function: the script may still use the table, so remainders are copied.
    Copy,
}

/// Per-state bridge data, kept in the Lua state's app data.
pub(crate) struct Bridge {
    lazy_mt: Table,
    obj_mt: Table,
    arr_mt: Table,
    lazy_ptr: usize,
    obj_ptr: usize,
    arr_ptr: usize,
    calls: RefCell<CallData>,
    /// Prefix of placeholders for remainders in a result; it contains a random part, so no script can produce one.
    marker: String,
}

impl Bridge {
    /// Creates the bridge over the prelude's metatables.
    pub(crate) fn new(lazy_mt: Table, obj_mt: Table, arr_mt: Table) -> Self {
        let lazy_ptr = lazy_mt.to_pointer() as usize;
        let marker = {
            use std::hash::{BuildHasher, Hasher};
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_usize(lazy_ptr);
            format!("\u{fdd0}flotilla-lazy-{:016x}:", hasher.finish())
        };
        Bridge {
            lazy_ptr,
            obj_ptr: obj_mt.to_pointer() as usize,
            arr_ptr: arr_mt.to_pointer() as usize,
            lazy_mt,
            obj_mt,
            arr_mt,
            calls: RefCell::new(CallData::default()),
            marker,
        }
    }

    /// Forgets every slot of the finished call.
    pub(crate) fn reset(&self) {
        let mut calls = self.calls.borrow_mut();
        calls.slots.clear();
        calls.touched.clear();
        calls.residues.clear();
        calls.slot_residues.clear();
        calls.typed.clear();
        calls.pending.clear();
        calls.generation = calls.generation.wrapping_add(1) % 1_000_000;
    }

    /// Converts a JSON value for a script, lazily for non-empty objects and arrays.
    pub(crate) fn push(&self, lua: &Lua, value: Value) -> mlua::Result<LuaValue> {
        match value {
            Value::Object(map) if map.is_empty() => self.marked(lua, &self.obj_mt),
            Value::Array(items) if items.is_empty() => self.marked(lua, &self.arr_mt),
            container @ (Value::Object(_) | Value::Array(_)) => {
                let t = lua.create_table_with_capacity(0, 1)?;
                t.set_metatable(Some(self.lazy_mt.clone()))?;
                t.raw_set(&self.lazy_mt, self.slot(container))?;
                Ok(LuaValue::Table(t))
            }
            Value::Null => Ok(LuaValue::Nil),
            Value::Bool(b) => Ok(LuaValue::Boolean(b)),
            Value::Number(n) => Ok(LuaValue::Number(number_to_f64(&n))),
            Value::String(s) => Ok(LuaValue::String(lua.create_string(&s)?)),
        }
    }

    /// The slot code of a JSON container for the prelude to turn into a table, or the value back when it is a
    /// scalar.
    pub(crate) fn container(&self, value: Value) -> Result<f64, Value> {
        match value {
            Value::Object(map) if map.is_empty() => Ok(EMPTY_OBJECT),
            Value::Array(items) if items.is_empty() => Ok(EMPTY_ARRAY),
            container @ (Value::Object(_) | Value::Array(_)) => Ok(self.slot(container)),
            scalar => Err(scalar),
        }
    }

    fn marked(&self, lua: &Lua, mt: &Table) -> mlua::Result<LuaValue> {
        let t = lua.create_table()?;
        t.set_metatable(Some(mt.clone()))?;
        Ok(LuaValue::Table(t))
    }

    /// Keeps a container as a lazy table's remainder; returns its slot number.
    fn slot(&self, value: Value) -> f64 {
        let mut calls = self.calls.borrow_mut();
        calls.slots.push(Some(value));
        calls.touched.push(false);
        f64::from(calls.generation) * GENERATION_FACTOR + (calls.slots.len() - 1) as f64
    }

    /// The slot index a slot number names, if it belongs to the current call.
    fn index(&self, slot: f64) -> Result<usize, ConvertError> {
        let generation = (slot / GENERATION_FACTOR).floor();
        if generation != f64::from(self.calls.borrow().generation) {
            return Err(ConvertError(
                "a table from an earlier call cannot be used".to_owned(),
            ));
        }
        Ok((slot - generation * GENERATION_FACTOR) as usize)
    }

    /// The slot index of a lazy table of the current call.
    fn slot_of(&self, t: &Table) -> Result<usize, ConvertError> {
        let slot: Option<f64> = t
            .raw_get(&self.lazy_mt)
            .map_err(|e| ConvertError(e.to_string()))?;
        self.index(slot.ok_or_else(|| ConvertError("lazy table without a slot".to_owned()))?)
    }

    fn shape(&self, t: &Table) -> Shape {
        match t.metatable() {
            None => Shape::Unmarked,
            Some(mt) => match mt.to_pointer() as usize {
                p if p == self.lazy_ptr => Shape::Lazy,
                p if p == self.obj_ptr => Shape::Object,
                p if p == self.arr_ptr => Shape::Array,
                _ => Shape::Unmarked,
            },
        }
    }

    /// Whether `t` is a lazy table the script has not looked into: all its members are still in its remainder.
    ///
    /// Every way into a lazy table's members goes through `get`, `forget` or `fetch` (scripts cannot reach its raw
    /// entries), and those mark the slot, so this does not need to walk the table.
    fn untouched(&self, t: &Table) -> bool {
        self.shape(t) == Shape::Lazy
            && self.slot_of(t).is_ok_and(|index| {
                !self
                    .calls
                    .borrow()
                    .touched
                    .get(index)
                    .copied()
                    .unwrap_or(true)
            })
    }

    /// Records that the script looked into the table of slot `index`.
    fn touch(&self, index: usize) {
        if let Some(touched) = self.calls.borrow_mut().touched.get_mut(index) {
            *touched = true;
        }
    }

    /// Runs `f` on a script's value as JSON, borrowing it when it is an untouched lazy table (no copy), for
    /// library functions that only read their argument. `f` must not call back into Lua.
    pub(crate) fn with_json<R>(
        &self,
        value: &LuaValue,
        f: impl FnOnce(&Value) -> R,
    ) -> Result<R, ConvertError> {
        self.realize()?;
        if let LuaValue::Table(t) = value
            && self.untouched(t)
        {
            let index = self.slot_of(t)?;
            let calls = self.calls.borrow();
            let held = calls.slots.get(index).and_then(Option::as_ref);
            return held
                .map(f)
                .ok_or_else(|| ConvertError("lazy table lost its value".to_owned()));
        }
        Ok(f(&self.to_json(value, Mode::Copy)?))
    }

    /// Pushes a library result that has a typed form as a lazy table, keeping that form: if the script returns
    /// the table untouched, [`Bridge::typed`] gives the value back and its JSON is never made. Any other look at a
    /// lazy table first makes the JSON of every such result ([`Bridge::realize`]).
    pub(crate) fn push_typed(&self, lua: &Lua, typed: Typed) -> mlua::Result<LuaValue> {
        let t = lua.create_table_with_capacity(0, 1)?;
        t.set_metatable(Some(self.lazy_mt.clone()))?;
        let code = self.slot(Value::Null);
        t.raw_set(&self.lazy_mt, code)?;
        let index = self.index(code).map_err(|e| mlua::Error::runtime(e.0))?;
        let mut calls = self.calls.borrow_mut();
        calls.typed.insert(index, typed);
        calls.pending.push(index);
        Ok(LuaValue::Table(t))
    }

    /// Makes the JSON of the typed results still waiting for it, before anything reads a lazy table's remainder.
    fn realize(&self) -> Result<(), ConvertError> {
        let mut calls = self.calls.borrow_mut();
        if calls.pending.is_empty() {
            return Ok(());
        }
        for index in std::mem::take(&mut calls.pending) {
            let json = match calls.typed.get(&index) {
                Some(Typed::Requirements(r)) => {
                    serde_json::to_value(r).map_err(|e| ConvertError(e.to_string()))?
                }
                None => continue,
            };
            if let Some(slot) = calls.slots.get_mut(index) {
                *slot = Some(json);
            }
        }
        Ok(())
    }

    /// The typed form kept by [`Bridge::push_typed`], if `value` is that table, untouched. It is given away: a
    /// table whose JSON was never made cannot be read afterwards (results are converted once, at the end).
    pub(crate) fn typed(&self, value: &LuaValue) -> Option<Typed> {
        let LuaValue::Table(t) = value else {
            return None;
        };
        if !self.untouched(t) {
            return None;
        }
        let index = self.slot_of(t).ok()?;
        let mut calls = self.calls.borrow_mut();
        let typed = calls.typed.remove(&index)?;
        if let Some(at) = calls.pending.iter().position(|i| *i == index) {
            calls.pending.swap_remove(at);
            if let Some(slot) = calls.slots.get_mut(index) {
                *slot = None;
            }
        }
        Some(typed)
    }
}

/// A JSON number as the Lua double a script sees.
pub(crate) fn number_to_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(0.0)
}

/// Whether a JSON number comes back unchanged from its double: integers within 2^53, and non-integral floats.
fn number_round_trips(n: &Number, f: f64) -> bool {
    if let Some(i) = n.as_i64() {
        return i.unsigned_abs() <= EXACT_INT;
    }
    if n.is_u64() {
        return false;
    }
    f.fract() != 0.0
}
