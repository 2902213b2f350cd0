//! JSON to Lua: handing a lazy table's members to the prelude, one at a time (`get`) or all at once (`fetch`).
//!
//! Both return plain values for the prelude to store, because one call returning several values costs far less
//! than one mlua call per table operation.

use mlua::{Either, Table, Value as LuaValue, Variadic};
use serde_json::Value;

use super::{
    Bridge, EMPTY_ARRAY, EMPTY_OBJECT, Member, PathSeg, Residue, bool_member, number_member,
    number_round_trips, number_to_f64,
};

/// What a JSON member becomes in Lua.
enum Child {
    /// A slot number or empty-container code, and the template to presize the table with.
    Container(f64, f64),
    /// A value Lua holds directly.
    Scalar(Member),
    /// A `null` object member: absent in Lua.
    Absent,
}

/// `get`'s answer: its kind, then the value or container code, then the container's template. A fixed
/// tuple rather than a list, so answering allocates nothing.
pub(crate) type Got = (f64, Option<Member>, Option<f64>);

/// `get`'s answer kinds (first result).
const NOTHING: f64 = 0.0;
const SCALAR: f64 = 1.0;
const CONTAINER: f64 = 2.0;
const WHOLE: f64 = 3.0;

/// `forget`'s answers (the prelude spells them out as numbers).
const KEPT_KEY: f64 = 0.0;
const NEW_KEY: f64 = 1.0;
const WHOLE_TABLE: f64 = 2.0;

/// The template for a container (see [`super::TEMPLATES`]).
fn template(value: &Value) -> f64 {
    let (n, base) = match value {
        Value::Array(items) => (items.len(), 8),
        Value::Object(map) => (map.len(), 1),
        _ => (0, 1),
    };
    let k = (usize::BITS - n.saturating_sub(1).leading_zeros()).min(6) as usize;
    (base + k) as f64
}

impl Bridge {
    /// One member of a lazy object, moved out of its remainder: `(0)` when absent (a `null` member stays in the
    /// remainder, so it is kept on the way out), `(1, value)`, or `(2, code, template)` for a container. For an
    /// array (or a remainder already handed over) the answer is `(3)`: the prelude then moves every member.
    ///
    /// Keys are strings: the prelude reads a table whole for any other key.
    pub(crate) fn get(&self, slot: f64, key: &str) -> mlua::Result<Got> {
        let index = self.index(slot).map_err(|e| mlua::Error::runtime(e.0))?;
        self.realize().map_err(|e| mlua::Error::runtime(e.0))?;
        self.touch(index);
        let child = {
            let mut calls = self.calls.borrow_mut();
            match calls.slots.get_mut(index) {
                // One lookup: a `null` member (rare) is put back, as it stays in the remainder.
                Some(Some(Value::Object(map))) => match map.remove(key) {
                    None => return Ok((NOTHING, None, None)),
                    Some(Value::Null) => {
                        map.insert(key.to_owned(), Value::Null);
                        return Ok((NOTHING, None, None));
                    }
                    some => some,
                },
                _ => return Ok((WHOLE, None, None)),
            }
        };
        let Some(child) = child else {
            return Ok((NOTHING, None, None));
        };
        let mut residues = Vec::new();
        let out = match self.child(child, &mut residues, false, || PathSeg::Key(key.to_owned())) {
            Child::Container(code, template) => {
                (CONTAINER, Some(number_member(code)), Some(template))
            }
            Child::Scalar(value) => (SCALAR, Some(value), None),
            Child::Absent => (NOTHING, None, None),
        };
        if !residues.is_empty() {
            self.calls
                .borrow_mut()
                .slot_residues
                .entry(index)
                .or_default()
                .extend(residues);
        }
        Ok(out)
    }

    /// Drops a member of a lazy object's remainder before the script assigns it. Answers [`KEPT_KEY`] when the
    /// object had the key (it keeps its place in the object's order), [`NEW_KEY`] when it did not, and
    /// [`WHOLE_TABLE`] for an array, which the prelude then moves whole first. Assigning nil to a `null` member
    /// keeps it, as nil is how Lua sees it.
    pub(crate) fn forget(&self, slot: f64, key: &str, nil: bool) -> mlua::Result<f64> {
        let index = self.index(slot).map_err(|e| mlua::Error::runtime(e.0))?;
        self.realize().map_err(|e| mlua::Error::runtime(e.0))?;
        self.touch(index);
        let mut calls = self.calls.borrow_mut();
        match calls.slots.get_mut(index) {
            Some(Some(Value::Object(map))) => {
                if nil && map.get(key).is_some_and(Value::is_null) {
                    return Ok(KEPT_KEY);
                }
                Ok(if map.remove(key).is_some() {
                    KEPT_KEY
                } else {
                    NEW_KEY
                })
            }
            _ => Ok(WHOLE_TABLE),
        }
    }

    /// Every remaining member of a lazy table, for the prelude's `materialize`.
    ///
    /// Returns `is_array`, the number `m` of container members, then `m` triples (key, code, template), then (key,
    /// scalar) pairs; keys of arrays are 1-based indices. An already emptied remainder gives no members.
    pub(crate) fn fetch(&self, t: &Table, slot: f64) -> mlua::Result<Variadic<Member>> {
        let index = self.index(slot).map_err(|e| mlua::Error::runtime(e.0))?;
        self.realize().map_err(|e| mlua::Error::runtime(e.0))?;
        self.touch(index);
        let value = self
            .calls
            .borrow_mut()
            .slots
            .get_mut(index)
            .and_then(Option::take);
        let mut residues = Vec::new();
        let mut containers = Vec::new();
        let mut scalars = Vec::new();
        let is_array = matches!(value, Some(Value::Array(_)));
        match value {
            Some(Value::Object(map)) => {
                scalars.reserve(map.len() * 2);
                for (key, child) in map {
                    match self.child(child, &mut residues, false, || PathSeg::Key(key.clone())) {
                        Child::Container(code, template) => {
                            containers.push((Either::Left(key), code, template))
                        }
                        Child::Scalar(value) => scalars.extend([Either::Left(key), value]),
                        Child::Absent => {}
                    }
                }
            }
            Some(Value::Array(items)) => {
                scalars.reserve(items.len() * 2);
                for (i, child) in items.into_iter().enumerate() {
                    let key = number_member((i + 1) as f64);
                    match self.child(child, &mut residues, true, || PathSeg::Index(i)) {
                        Child::Container(code, template) => containers.push((key, code, template)),
                        Child::Scalar(value) => scalars.extend([key, value]),
                        Child::Absent => {}
                    }
                }
            }
            _ => {}
        }
        self.keep_residues(t, index, residues);
        let mut out = Vec::with_capacity(2 + containers.len() * 3 + scalars.len());
        out.push(bool_member(is_array));
        out.push(number_member(containers.len() as f64));
        for (key, code, template) in containers {
            out.extend([key, number_member(code), number_member(template)]);
        }
        out.extend(scalars);
        Ok(Variadic::from(out))
    }

    fn keep_residues(&self, t: &Table, index: usize, mut residues: Vec<Residue>) {
        let mut calls = self.calls.borrow_mut();
        if let Some(earlier) = calls.slot_residues.remove(&index) {
            residues.extend(earlier);
        }
        if residues.is_empty() {
            return;
        }
        let entry = calls
            .residues
            .entry(t.to_pointer() as usize)
            .or_insert_with(|| (t.clone(), Vec::new()));
        entry.1.extend(residues);
    }

    fn child(
        &self,
        value: Value,
        residues: &mut Vec<Residue>,
        in_array: bool,
        path: impl FnOnce() -> PathSeg,
    ) -> Child {
        match value {
            // Array positions must be kept, so a `null` element is the `null` light userdata (Karmada drops it).
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
            Value::Bool(b) => Child::Scalar(bool_member(b)),
            Value::Number(n) => {
                let f = number_to_f64(&n);
                if !number_round_trips(&n, f) {
                    residues.push(Residue {
                        key: path(),
                        original: Value::Number(n),
                        seen: Some(f),
                    });
                }
                Child::Scalar(number_member(f))
            }
            Value::String(s) => Child::Scalar(Either::Left(s)),
            Value::Object(map) if map.is_empty() => Child::Container(EMPTY_OBJECT, 0.0),
            Value::Array(items) if items.is_empty() => Child::Container(EMPTY_ARRAY, 0.0),
            container => {
                let template = template(&container);
                Child::Container(self.slot(container), template)
            }
        }
    }
}
