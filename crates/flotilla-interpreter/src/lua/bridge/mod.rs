//! The JSON <-> Lua bridge (interpreter spec §4.5 and the lossless decisions of §0).
//!
//! Objects enter Lua lazily: a JSON object or array becomes an empty table with the `LAZY` metatable, and its
//! members are created only when the script first looks inside (index, assignment, `#`, `pairs`, `table.*`). Once
//! materialized, a table carries a shape marker (`OBJ` or `ARR`) so that it leaves Lua as the same JSON type even
//! when empty. On the way out a table still lazy is known to be unchanged and its original JSON is reused as is; so a
//! script that reads two fields of a Deployment converts two levels of it, not the whole tree.
//!
//! Invariants:
//! * a lazy table's contents equal its slot's JSON, because every way to read or write a table materializes it first
//!   (scripts cannot call `rawget`, `rawset`, `next` or `setmetatable` directly: the sandbox wraps or blocks them);
//! * values Lua cannot hold exactly (JSON `null` members, integers beyond 2^53, integral floats like `3.0`) are kept
//!   aside per table and put back on the way out if the script did not change them; `null` array elements become the
//!   `null` light userdata so that positions are kept;
//! * slots belong to one call: [`Bridge::reset`] drops them and bumps a generation so a stale table can never read
//!   another call's data.

use std::cell::RefCell;
use std::collections::HashMap;

use mlua::{Either, Lua, Table, Value as LuaValue, Variadic};
use serde_json::{Map, Number, Value};

use super::gofmt::TWO_POW_63;

/// Why a Lua value could not become JSON.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConvertError(pub String);

/// Largest magnitude at which every integer is exactly representable as a double (2^53).
const EXACT_INT: u64 = 1 << 53;
/// Slot numbers encode the call generation above this factor, so stale lazy tables are detected.
const GENERATION_FACTOR: f64 = 4_294_967_296.0;
/// Deepest nesting accepted from a script, far beyond any Kubernetes object, to refuse pathological results.
const MAX_DEPTH: usize = 512;

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

/// One value `fetch` hands to Lua, pushed without creating an mlua reference: a key or string, a number, a
/// boolean, or the `null` light userdata.
pub(crate) type Member = Either<String, Either<f64, Either<bool, LuaValue>>>;

/// Child code for a member that is an empty JSON object.
const EMPTY_OBJECT: f64 = -1.0;
/// Child code for a member that is an empty JSON array.
const EMPTY_ARRAY: f64 = -2.0;

/// Presized empty tables the prelude clones for lazy tables, so filling them does not rehash: objects with room for
/// 2^k members (1-based index k+1, k < 7), then arrays with room for 2^k elements (index 8 + k).
pub(crate) const TEMPLATES: usize = 14;

/// The template for a container (see [`TEMPLATES`]).
fn template(value: &Value) -> f64 {
    let (n, base) = match value {
        Value::Array(items) => (items.len(), 8),
        Value::Object(map) => (map.len(), 1),
        _ => (0, 1),
    };
    let k = (usize::BITS - n.saturating_sub(1).leading_zeros()).min(6) as usize;
    (base + k) as f64
}

/// What a JSON member becomes in Lua.
enum Child {
    /// A slot number or empty-container code, and the template to presize it with.
    Container(f64, f64),
    /// A value Lua holds directly.
    Scalar(Member),
    /// A `null` object member (absent in Lua) or a `null` array element (the `null` light userdata).
    Absent,
}

/// The shape a table carries, read from its metatable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    Lazy,
    Object,
    Array,
    Unmarked,
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
    /// Prefix of placeholder strings for untouched subtrees in a result; it contains a random part, so no script
    /// can produce one.
    marker: String,
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
    slots: Vec<Option<Value>>,
    /// Tables with residues, by address; the table handle keeps the address from being reused during the call.
    residues: HashMap<usize, (Table, Vec<Residue>)>,
    /// Typed forms of library results, by slot.
    typed: HashMap<usize, Typed>,
}

/// How lazy tables leave Lua.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The final result of a call: unchanged subtrees are moved out of their slots.
    Take,
    /// An argument to a library function: the script may still use the table, so subtrees are copied.
    Copy,
}

impl Bridge {
    /// Creates the metatables; `lazy_mt` must already carry the materializing metamethods.
    pub(crate) fn new(lazy_mt: Table, obj_mt: Table, arr_mt: Table) -> Self {
        let lazy_ptr = lazy_mt.to_pointer() as usize;
        Bridge {
            lazy_ptr,
            obj_ptr: obj_mt.to_pointer() as usize,
            arr_ptr: arr_mt.to_pointer() as usize,
            lazy_mt,
            obj_mt,
            arr_mt,
            calls: RefCell::new(CallData::default()),
            marker: {
                use std::hash::{BuildHasher, Hasher};
                let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
                hasher.write_usize(lazy_ptr);
                format!("\u{fdd0}flotilla-lazy-{:016x}:", hasher.finish())
            },
        }
    }

    /// Forgets every slot of the finished call.
    pub(crate) fn reset(&self) {
        let mut calls = self.calls.borrow_mut();
        calls.slots.clear();
        calls.residues.clear();
        calls.typed.clear();
        calls.generation = calls.generation.wrapping_add(1) % 1_000_000;
    }

    /// Converts a JSON value for a script, lazily for non-empty objects and arrays.
    pub(crate) fn push(&self, lua: &Lua, value: Value) -> mlua::Result<LuaValue> {
        match value {
            Value::Object(map) if !map.is_empty() => self.lazy(lua, Value::Object(map)),
            Value::Array(items) if !items.is_empty() => self.lazy(lua, Value::Array(items)),
            Value::Object(_) => self.marked(lua, &self.obj_mt, 0, 0),
            Value::Array(_) => self.marked(lua, &self.arr_mt, 0, 0),
            Value::Null => Ok(LuaValue::Nil),
            Value::Bool(b) => Ok(LuaValue::Boolean(b)),
            Value::Number(n) => Ok(LuaValue::Number(number_to_f64(&n))),
            Value::String(s) => Ok(LuaValue::String(lua.create_string(&s)?)),
        }
    }

    /// The slot code of a JSON container for the prelude to turn into a table, or the value back when it is a scalar.
    pub(crate) fn container(&self, value: Value) -> Result<f64, Value> {
        match value {
            Value::Object(map) if map.is_empty() => Ok(EMPTY_OBJECT),
            Value::Array(items) if items.is_empty() => Ok(EMPTY_ARRAY),
            container @ (Value::Object(_) | Value::Array(_)) => Ok(self.slot(container)),
            scalar => Err(scalar),
        }
    }

    fn marked(&self, lua: &Lua, mt: &Table, narr: usize, nrec: usize) -> mlua::Result<LuaValue> {
        let t = lua.create_table_with_capacity(narr, nrec)?;
        t.set_metatable(Some(mt.clone()))?;
        Ok(LuaValue::Table(t))
    }

    fn lazy(&self, lua: &Lua, value: Value) -> mlua::Result<LuaValue> {
        let t = lua.create_table_with_capacity(0, 1)?;
        t.set_metatable(Some(self.lazy_mt.clone()))?;
        t.raw_set(&self.lazy_mt, self.slot(value))?;
        Ok(LuaValue::Table(t))
    }

    /// The members of a lazy table, for the prelude's `materialize` to store (interpreter spec §4.5).
    ///
    /// Returns `is_array`, the number `m` of container members, then `m` triples (key, child, template) where child
    /// is a slot number for a new lazy table, [`EMPTY_OBJECT`] or [`EMPTY_ARRAY`], then (key, scalar) pairs. Keys of arrays are
    /// 1-based indices. One call returning many values costs far less than one mlua call per member.
    pub(crate) fn fetch(&self, t: &Table, slot: f64) -> mlua::Result<Variadic<Member>> {
        let value = {
            let mut calls = self.calls.borrow_mut();
            let generation = (slot / GENERATION_FACTOR).floor();
            let index = (slot - generation * GENERATION_FACTOR) as usize;
            if generation != f64::from(calls.generation) {
                return Err(mlua::Error::runtime(
                    "a table from an earlier call cannot be used",
                ));
            }
            calls.slots.get_mut(index).and_then(Option::take)
        };
        let mut residues = Vec::new();
        let (is_array, containers, scalars) = match value {
            Some(Value::Object(map)) => {
                let mut containers = Vec::new();
                let mut scalars = Vec::with_capacity(map.len() * 2);
                for (key, child) in map {
                    match self.child(child, &mut residues, false, || PathSeg::Key(key.clone())) {
                        Child::Container(code, size) => {
                            containers.push((Either::Left(key), code, size))
                        }
                        Child::Scalar(v) => {
                            scalars.push(Either::Left(key));
                            scalars.push(v);
                        }
                        Child::Absent => {}
                    }
                }
                (false, containers, scalars)
            }
            Some(Value::Array(items)) => {
                let mut containers = Vec::new();
                let mut scalars = Vec::with_capacity(items.len() * 2);
                for (i, child) in items.into_iter().enumerate() {
                    let key = Either::Right(Either::Left((i + 1) as f64));
                    match self.child(child, &mut residues, true, || PathSeg::Index(i)) {
                        Child::Container(code, size) => containers.push((key, code, size)),
                        Child::Scalar(v) => {
                            scalars.push(key);
                            scalars.push(v);
                        }
                        Child::Absent => {}
                    }
                }
                (true, containers, scalars)
            }
            // Already materialized through another handle: nothing more to add.
            _ => (false, Vec::new(), Vec::new()),
        };
        if !residues.is_empty() {
            self.calls
                .borrow_mut()
                .residues
                .insert(t.to_pointer() as usize, (t.clone(), residues));
        }
        let mut out = Vec::with_capacity(2 + containers.len() * 2 + scalars.len());
        out.push(Either::Right(Either::Right(Either::Left(is_array))));
        out.push(Either::Right(Either::Left(containers.len() as f64)));
        for (key, code, size) in containers {
            out.push(key);
            out.push(Either::Right(Either::Left(code)));
            out.push(Either::Right(Either::Left(size)));
        }
        out.extend(scalars);
        Ok(Variadic::from(out))
    }

    fn child(
        &self,
        value: Value,
        residues: &mut Vec<Residue>,
        in_array: bool,
        path: impl FnOnce() -> PathSeg,
    ) -> Child {
        match value {
            // Array positions must be kept, so a `null` element is the `null` light userdata (interpreter spec §0).
            Value::Null if in_array => {
                Child::Scalar(Either::Right(Either::Right(Either::Right(LuaValue::NULL))))
            }
            Value::Null => {
                residues.push(Residue {
                    key: path(),
                    original: Value::Null,
                    seen: None,
                });
                Child::Absent
            }
            Value::Bool(b) => Child::Scalar(Either::Right(Either::Right(Either::Left(b)))),
            Value::Number(n) => {
                let f = number_to_f64(&n);
                if !number_round_trips(&n, f) {
                    residues.push(Residue {
                        key: path(),
                        original: Value::Number(n),
                        seen: Some(f),
                    });
                }
                Child::Scalar(Either::Right(Either::Left(f)))
            }
            Value::String(s) => Child::Scalar(Either::Left(s)),
            Value::Object(map) if map.is_empty() => Child::Container(EMPTY_OBJECT, 0.0),
            Value::Array(items) if items.is_empty() => Child::Container(EMPTY_ARRAY, 0.0),
            container => {
                let size = template(&container);
                Child::Container(self.slot(container), size)
            }
        }
    }

    /// Keeps a container for a lazy table; returns its slot number.
    fn slot(&self, value: Value) -> f64 {
        let mut calls = self.calls.borrow_mut();
        calls.slots.push(Some(value));
        f64::from(calls.generation) * GENERATION_FACTOR + (calls.slots.len() - 1) as f64
    }

    fn shape(&self, t: &Table) -> Shape {
        match t.metatable() {
            None => Shape::Unmarked,
            Some(mt) => {
                let p = mt.to_pointer() as usize;
                if p == self.lazy_ptr {
                    Shape::Lazy
                } else if p == self.obj_ptr {
                    Shape::Object
                } else if p == self.arr_ptr {
                    Shape::Array
                } else {
                    Shape::Unmarked
                }
            }
        }
    }

    /// Converts a script's value to JSON (interpreter spec §4.5 step 1, with §0's lossless shapes). `nil` is `null`.
    pub(crate) fn to_json(&self, value: &LuaValue, mode: Mode) -> Result<Value, ConvertError> {
        let mut out = Output {
            mode,
            tables: Vec::new(),
            placeholders: HashMap::new(),
        };
        let mut root = self.value_to_json(value, &mut out)?;
        if !out.placeholders.is_empty() {
            let mut calls = self.calls.borrow_mut();
            self.fill(&mut root, &mut out.placeholders, &mut calls.slots)?;
            if out.placeholders.values().any(|n| *n != 0) {
                return Err(ConvertError("lazy table placeholder vanished".to_owned()));
            }
        }
        Ok(root)
    }

    fn value_to_json(&self, value: &LuaValue, out: &mut Output) -> Result<Value, ConvertError> {
        Ok(match value {
            LuaValue::Nil => Value::Null,
            LuaValue::Boolean(b) => Value::Bool(*b),
            LuaValue::Integer(i) => Value::Number(Number::from(*i)),
            LuaValue::Number(n) => f64_to_json(*n)?,
            LuaValue::String(s) => {
                Value::String(String::from_utf8_lossy(&s.as_bytes()).into_owned())
            }
            LuaValue::LightUserData(ud) if ud.0.is_null() => Value::Null,
            LuaValue::Table(t) => self.table_to_json(t, out)?,
            other => {
                return Err(ConvertError(format!(
                    "cannot encode {} to JSON",
                    other.type_name()
                )));
            }
        })
    }

    fn table_to_json(&self, t: &Table, out: &mut Output) -> Result<Value, ConvertError> {
        let shape = self.shape(t);
        if shape == Shape::Lazy {
            return self.lazy_to_json(t, out);
        }
        let ptr = t.to_pointer() as usize;
        if out.tables.contains(&ptr) {
            return Err(ConvertError(
                "cannot encode recursively nested tables to JSON".to_owned(),
            ));
        }
        if out.tables.len() >= MAX_DEPTH {
            return Err(ConvertError(format!(
                "cannot encode tables nested deeper than {MAX_DEPTH} levels"
            )));
        }
        let mut entries: Vec<(LuaValue, LuaValue)> = Vec::new();
        for pair in t.pairs::<LuaValue, LuaValue>() {
            entries.push(pair.map_err(|e| ConvertError(e.to_string()))?);
        }
        let as_array = match shape {
            Shape::Array => true,
            Shape::Object => false,
            // A new table decides by its first key, as Karmada's encoder does; a new empty table is an object (§0).
            _ => matches!(
                entries.first(),
                Some((LuaValue::Integer(_) | LuaValue::Number(_), _))
            ),
        };
        out.tables.push(ptr);
        let result = if as_array {
            self.array_to_json(entries, out)
        } else {
            self.object_to_json(entries, out)
        };
        out.tables.pop();
        let mut result = result?;
        let residues = self
            .calls
            .borrow()
            .residues
            .get(&ptr)
            .map(|(_, residues)| residues.clone());
        if let Some(residues) = residues {
            restore(&mut result, residues);
        }
        Ok(result)
    }

    /// The slot index of a lazy table of the current call.
    fn slot_of(&self, t: &Table) -> Result<usize, ConvertError> {
        let slot: Option<f64> = t
            .raw_get(&self.lazy_mt)
            .map_err(|e| ConvertError(e.to_string()))?;
        let slot = slot.ok_or_else(|| ConvertError("lazy table without a slot".to_owned()))?;
        let generation = (slot / GENERATION_FACTOR).floor();
        if generation != f64::from(self.calls.borrow().generation) {
            return Err(ConvertError(
                "a table from an earlier call cannot be used".to_owned(),
            ));
        }
        Ok((slot - generation * GENERATION_FACTOR) as usize)
    }

    /// Runs `f` on a script's value as JSON, borrowing it when it is an untouched lazy table (no copy), for
    /// library functions that only read their argument. `f` must not call back into Lua.
    pub(crate) fn with_json<R>(
        &self,
        value: &LuaValue,
        f: impl FnOnce(&Value) -> R,
    ) -> Result<R, ConvertError> {
        if let LuaValue::Table(t) = value
            && self.shape(t) == Shape::Lazy
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

    /// Pushes a library result that has a typed form, keeping that form: if the script returns the table untouched,
    /// [`Bridge::typed`] gives the value back without converting it again.
    pub(crate) fn push_typed(
        &self,
        lua: &Lua,
        json: Value,
        typed: Typed,
    ) -> mlua::Result<LuaValue> {
        let value = self.push(lua, json)?;
        if let LuaValue::Table(t) = &value
            && let Ok(index) = self.slot_of(t)
        {
            self.calls.borrow_mut().typed.insert(index, typed);
        }
        Ok(value)
    }

    /// The typed form kept by [`Bridge::push_typed`], if `value` is that table, still untouched.
    pub(crate) fn typed(&self, value: &LuaValue) -> Option<Typed> {
        let LuaValue::Table(t) = value else { return None };
        if self.shape(t) != Shape::Lazy {
            return None;
        }
        let index = self.slot_of(t).ok()?;
        self.calls.borrow_mut().typed.remove(&index)
    }

    fn lazy_to_json(&self, t: &Table, out: &mut Output) -> Result<Value, ConvertError> {
        let index = self.slot_of(t)?;
        let calls = self.calls.borrow();
        match out.mode {
            Mode::Copy => calls
                .slots
                .get(index)
                .and_then(Option::clone)
                .ok_or_else(|| ConvertError("lazy table lost its value".to_owned())),
            // Untouched subtrees are moved into the result once it is complete: the same table may appear twice.
            Mode::Take => {
                *out.placeholders.entry(index).or_default() += 1;
                Ok(Value::String(format!("{}{index}", self.marker)))
            }
        }
    }

    fn object_to_json(
        &self,
        entries: Vec<(LuaValue, LuaValue)>,
        out: &mut Output,
    ) -> Result<Value, ConvertError> {
        let mut map = Map::new();
        for (key, value) in entries {
            let LuaValue::String(key) = key else {
                return Err(ConvertError(
                    "cannot encode mixed or invalid key types".to_owned(),
                ));
            };
            let key = String::from_utf8_lossy(&key.as_bytes()).into_owned();
            let value = self.value_to_json(&value, out)?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }

    fn array_to_json(
        &self,
        entries: Vec<(LuaValue, LuaValue)>,
        out: &mut Output,
    ) -> Result<Value, ConvertError> {
        let n = entries.len();
        let mut items: Vec<Option<LuaValue>> = vec![None; n];
        for (key, value) in entries {
            let index = match key {
                LuaValue::Integer(i) => i as f64,
                LuaValue::Number(f) => f,
                _ => {
                    return Err(ConvertError(
                        "cannot encode mixed or invalid key types".to_owned(),
                    ));
                }
            };
            if index.fract() != 0.0 || index < 1.0 || index > n as f64 {
                return Err(ConvertError("cannot encode sparse array".to_owned()));
            }
            items[index as usize - 1] = Some(value);
        }
        let mut array = Vec::with_capacity(n);
        for item in items {
            let Some(item) = item else {
                return Err(ConvertError("cannot encode sparse array".to_owned()));
            };
            array.push(self.value_to_json(&item, out)?);
        }
        Ok(Value::Array(array))
    }

    /// Puts unchanged subtrees in place of their placeholders: moved on their last use, copied before.
    fn fill(
        &self,
        at: &mut Value,
        remaining: &mut HashMap<usize, usize>,
        slots: &mut [Option<Value>],
    ) -> Result<(), ConvertError> {
        match at {
            Value::String(text) => {
                let Some(index) = text
                    .strip_prefix(self.marker.as_str())
                    .and_then(|n| n.parse::<usize>().ok())
                else {
                    return Ok(());
                };
                let count = remaining
                    .get_mut(&index)
                    .ok_or_else(|| ConvertError("unknown lazy table".to_owned()))?;
                *count -= 1;
                let held = slots
                    .get_mut(index)
                    .ok_or_else(|| ConvertError("unknown lazy table".to_owned()))?;
                *at = if *count == 0 {
                    held.take()
                } else {
                    held.clone()
                }
                .ok_or_else(|| ConvertError("lazy table lost its value".to_owned()))?;
            }
            Value::Object(map) => {
                for value in map.values_mut() {
                    self.fill(value, remaining, slots)?;
                }
            }
            Value::Array(items) => {
                for value in items {
                    self.fill(value, remaining, slots)?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

struct Output {
    mode: Mode,
    /// Tables being converted, outermost first, to refuse cycles.
    tables: Vec<usize>,
    /// Lazy slots referenced by placeholders, with their number of uses.
    placeholders: HashMap<usize, usize>,
}

/// Puts back members Lua could not hold exactly, where the script left them as they were.
fn restore(result: &mut Value, residues: Vec<Residue>) {
    for residue in residues {
        let slot = match (&residue.key, &mut *result) {
            (PathSeg::Key(k), Value::Object(map)) => {
                if residue.seen.is_none() {
                    map.entry(k.clone()).or_insert(Value::Null);
                    continue;
                }
                map.get_mut(k)
            }
            (PathSeg::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        // Unchanged means the script left exactly the number it was given, which encodes as it did then.
        if let (Some(slot), Some(seen)) = (slot, residue.seen)
            && f64_to_json(seen).is_ok_and(|given| *slot == given)
        {
            *slot = residue.original;
        }
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

/// A Lua number as JSON (interpreter spec §0 and §4.5): integral values in the int64 range are integers, others
/// floats; NaN and infinities cannot be encoded.
pub(crate) fn f64_to_json(n: f64) -> Result<Value, ConvertError> {
    if !n.is_finite() {
        return Err(ConvertError(format!(
            "cannot encode number {} to JSON",
            crate::lua::gofmt::number_to_string(n)
        )));
    }
    if n.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&n) {
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| ConvertError(format!("cannot encode number {n} to JSON")))
}
