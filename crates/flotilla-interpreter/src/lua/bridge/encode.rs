//! Lua to JSON (as Karmada encodes, with the lossless shapes of docs/INTERPRETER.md): tables by their shape marker,
//! new tables by their first key, remainders of lazy tables reused as they are.

use std::collections::HashMap;

use mlua::{Table, Value as LuaValue};
use serde_json::{Map, Number, Value};

use super::{Bridge, ConvertError, Mode, PathSeg, Residue, Shape};
use crate::lua::gofmt::{TWO_POW_63, number_to_string};

/// Deepest nesting accepted from a script, far beyond any Kubernetes object, to refuse pathological results.
const MAX_DEPTH: usize = 512;

struct Output {
    mode: Mode,
    /// Tables being converted, outermost first, to refuse cycles.
    tables: Vec<usize>,
    /// Slots whose remainder a placeholder stands for, with their number of uses.
    placeholders: HashMap<usize, usize>,
}

impl Bridge {
    /// Converts a script's value to JSON. `nil` is `null`.
    pub(crate) fn to_json(&self, value: &LuaValue, mode: Mode) -> Result<Value, ConvertError> {
        self.realize()?;
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
        let shape = self.shape(t);
        let mut entries: Vec<(LuaValue, LuaValue)> = Vec::new();
        for pair in t.pairs::<LuaValue, LuaValue>() {
            let (key, value) = pair.map_err(|e| ConvertError(e.to_string()))?;
            // The slot number of a lazy table is not a member.
            if shape == Shape::Lazy
                && matches!(&key, LuaValue::Table(k) if k.to_pointer() as usize == self.lazy_ptr)
            {
                continue;
            }
            entries.push((key, value));
        }
        let lazy = if shape == Shape::Lazy {
            Some(self.slot_of(t)?)
        } else {
            None
        };
        if let Some(index) = lazy
            && entries.is_empty()
        {
            return self.remainder(index, out);
        }
        let as_array = match shape {
            Shape::Array => true,
            // A lazy table with members of its own is a partly read object (arrays are read whole).
            Shape::Object | Shape::Lazy => false,
            // A new table decides by its first key, as Karmada's encoder does; a new empty table is an object
            // (Karmada's is an array, later deleted).
            Shape::Unmarked => matches!(
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
        let residues = {
            let calls = self.calls.borrow();
            match lazy {
                Some(index) => calls.slot_residues.get(&index).cloned(),
                None => calls
                    .residues
                    .get(&ptr)
                    .map(|(_, residues)| residues.clone()),
            }
        };
        if let Some(residues) = residues {
            restore(&mut result, residues);
        }
        if let (Some(index), Value::Object(map)) = (lazy, &mut result) {
            match out.mode {
                Mode::Copy => {
                    if let Some(Some(Value::Object(rest))) = self.calls.borrow().slots.get(index) {
                        map.extend(rest.iter().map(|(k, v)| (k.clone(), v.clone())));
                    }
                }
                Mode::Take => {
                    *out.placeholders.entry(index).or_default() += 1;
                    map.insert(format!("{}{index}", self.marker), Value::Null);
                }
            }
        }
        Ok(result)
    }

    /// An untouched lazy table: its whole remainder, copied, or (for a result) a placeholder filled in at the end.
    fn remainder(&self, index: usize, out: &mut Output) -> Result<Value, ConvertError> {
        match out.mode {
            Mode::Copy => self
                .calls
                .borrow()
                .slots
                .get(index)
                .and_then(Option::clone)
                .ok_or_else(|| ConvertError("lazy table lost its value".to_owned())),
            // Moved only once the result is complete: the same table may appear twice.
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

    /// Puts remainders in place of their placeholders: moved on their last use, copied before. A string placeholder
    /// stands for a whole value; a placeholder key merges a remainder into the object holding it.
    fn fill(
        &self,
        at: &mut Value,
        remaining: &mut HashMap<usize, usize>,
        slots: &mut [Option<Value>],
    ) -> Result<(), ConvertError> {
        match at {
            Value::String(text) => {
                if let Some(index) = self.placeholder(text) {
                    *at = use_slot(remaining, slots, index)?;
                }
            }
            Value::Object(map) => {
                let merges: Vec<(String, usize)> = map
                    .keys()
                    .filter_map(|k| self.placeholder(k).map(|index| (k.clone(), index)))
                    .collect();
                for (key, index) in merges {
                    map.remove(&key);
                    if let Value::Object(rest) = use_slot(remaining, slots, index)? {
                        map.extend(rest);
                    }
                }
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

    fn placeholder(&self, text: &str) -> Option<usize> {
        text.strip_prefix(self.marker.as_str())
            .and_then(|n| n.parse::<usize>().ok())
    }
}

/// A slot's remainder for one placeholder: moved on its last use, copied before.
fn use_slot(
    remaining: &mut HashMap<usize, usize>,
    slots: &mut [Option<Value>],
    index: usize,
) -> Result<Value, ConvertError> {
    let count = remaining
        .get_mut(&index)
        .ok_or_else(|| ConvertError("unknown lazy table".to_owned()))?;
    *count -= 1;
    let held = slots
        .get_mut(index)
        .ok_or_else(|| ConvertError("unknown lazy table".to_owned()))?;
    if *count == 0 {
        held.take()
    } else {
        held.clone()
    }
    .ok_or_else(|| ConvertError("lazy table lost its value".to_owned()))
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

/// A Lua number as JSON: integral values in the int64 range are integers, others
/// floats; NaN and infinities cannot be encoded.
pub(crate) fn f64_to_json(n: f64) -> Result<Value, ConvertError> {
    if !n.is_finite() {
        return Err(ConvertError(format!(
            "cannot encode number {} to JSON",
            number_to_string(n)
        )));
    }
    if n.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&n) {
        return Ok(Value::Number(Number::from(n as i64)));
    }
    Number::from_f64(n)
        .map(Value::Number)
        .ok_or_else(|| ConvertError(format!("cannot encode number {n} to JSON")))
}
