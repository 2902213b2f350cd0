//! Small helpers shared by the per-kind status builders: reading integers, omitting zero counters the way Go's
//! `omitempty` does, keeping condition timestamps stable, and a revision hash of a pod template.

use serde_json::{Map, Value, json};

/// `obj` at JSON pointer `path` as an integer, when present and integral.
pub(crate) fn int_at(obj: &Value, path: &str) -> Option<i64> {
    obj.pointer(path).and_then(Value::as_i64)
}

/// `metadata.generation`, which the API server always sets (1 if it is somehow absent).
pub(crate) fn generation(obj: &Value) -> i64 {
    int_at(obj, "/metadata/generation").unwrap_or(1)
}

/// `metadata.name`.
pub(crate) fn name(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The object's current `status` (an empty map when absent or not a map).
pub(crate) fn status_of(obj: &Value) -> Map<String, Value> {
    obj.get("status")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Sets `key` to `value`, or removes it when the value is zero (Go's `omitempty` on a counter).
pub(crate) fn put_nonzero(status: &mut Map<String, Value>, key: &str, value: i64) {
    if value == 0 {
        status.remove(key);
    } else {
        status.insert(key.into(), json!(value));
    }
}

/// A timestamp kept from the current status when set, else `now` (start times never move).
pub(crate) fn kept_time(current: &Map<String, Value>, key: &str, now: &str) -> Value {
    match current.get(key) {
        Some(Value::String(s)) if !s.is_empty() => Value::String(s.clone()),
        _ => Value::String(now.into()),
    }
}

/// One condition a simulated controller wants to report.
pub(crate) struct Cond<'a> {
    /// `type`.
    pub kind: &'a str,
    /// `status` (`True`, `False`, `Unknown`).
    pub status: &'a str,
    /// `reason`; empty leaves the field out.
    pub reason: &'a str,
    /// `message`; empty leaves the field out.
    pub message: String,
}

/// Which timestamp fields a kind's conditions carry besides `lastTransitionTime`.
#[derive(Clone, Copy)]
pub(crate) enum Stamps {
    /// Deployments: `lastUpdateTime` (moves when reason or message change) and `lastTransitionTime`.
    Update,
    /// Jobs: `lastProbeTime` and `lastTransitionTime`.
    Probe,
    /// Pods: `lastTransitionTime`, and `lastProbeTime` always null (the kubelet does not probe conditions).
    NullProbe,
}

/// The conditions list for `wanted`, keeping the timestamps of conditions that did not change, as the real
/// controllers do (so a settled object is never rewritten).
pub(crate) fn conditions(
    current: &Map<String, Value>,
    wanted: &[Cond<'_>],
    stamps: Stamps,
    now: &str,
) -> Value {
    let existing = current
        .get("conditions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let out: Vec<Value> = wanted
        .iter()
        .map(|c| {
            let old = existing
                .iter()
                .find(|e| e.get("type").and_then(Value::as_str) == Some(c.kind));
            let same_status =
                old.is_some_and(|o| o.get("status").and_then(Value::as_str) == Some(c.status));
            let same_text = old.is_some_and(|o| {
                o.get("reason").and_then(Value::as_str).unwrap_or("") == c.reason
                    && o.get("message").and_then(Value::as_str).unwrap_or("") == c.message
            });
            let old_time = |key: &str| {
                old.and_then(|o| o.get(key))
                    .filter(|v| v.is_string())
                    .cloned()
                    .unwrap_or_else(|| Value::String(now.into()))
            };
            let transition = if same_status {
                old_time("lastTransitionTime")
            } else {
                Value::String(now.into())
            };
            let mut m = Map::new();
            m.insert("type".into(), json!(c.kind));
            m.insert("status".into(), json!(c.status));
            match stamps {
                Stamps::Update => {
                    let update = if same_status && same_text {
                        old_time("lastUpdateTime")
                    } else {
                        Value::String(now.into())
                    };
                    m.insert("lastUpdateTime".into(), update);
                }
                Stamps::Probe => {
                    let probe = if same_status && same_text {
                        old_time("lastProbeTime")
                    } else {
                        Value::String(now.into())
                    };
                    m.insert("lastProbeTime".into(), probe);
                }
                Stamps::NullProbe => {
                    m.insert("lastProbeTime".into(), Value::Null);
                }
            }
            m.insert("lastTransitionTime".into(), transition);
            if !c.reason.is_empty() {
                m.insert("reason".into(), json!(c.reason));
            }
            if !c.message.is_empty() {
                m.insert("message".into(), json!(c.message));
            }
            Value::Object(m)
        })
        .collect();
    Value::Array(out)
}

/// A short, stable hash of a pod template, used where the real controllers name a revision
/// (`<name>-<hash>`); it changes whenever the template does. Spelled as the real controllers spell theirs: the
/// decimal digits of a 32-bit hash, each mapped into Kubernetes' vowel-free alphabet (`SafeEncodeString`), so it
/// has their length and characters (`5d46bb5569`), though not their value (theirs hashes Go's dump of the type).
pub(crate) fn template_hash(obj: &Value) -> String {
    let template = obj
        .pointer("/spec/template")
        .map(Value::to_string)
        .unwrap_or_default();
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    fnv32(template.as_bytes())
        .to_string()
        .bytes()
        .map(|digit| char::from(ALPHABET[usize::from(digit) % ALPHABET.len()]))
        .collect()
}

/// The current time in RFC 3339 at second precision, as status timestamps are written.
pub(crate) fn now() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// FNV-1a, 32 bits: stable across processes and versions, unlike the standard library's hasher.
pub(crate) fn fnv32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}
