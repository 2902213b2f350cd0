//! Turning decoded k8s-pb messages into the JSON a JSON client would have sent.
//!
//! k8s-pb's prost types carry no serde support, so every message used by a supported kind gets a
//! [`ToJson`] impl from the [`message!`] table: each Rust field paired with its JSON name. The macro
//! destructures the message exhaustively, so a k8s-pb upgrade that adds a field fails to compile instead of
//! silently dropping data.
//!
//! Zero values: Go's protobuf encoder writes every non-pointer field, empty or not, and Go's JSON encoder then
//! omits the empty ones (`omitempty`). We do the same: an empty string, `0` or `false` is left out, except for
//! fields marked `keep`, which are Go pointers whose zero means something (`replicas: 0`, `runAsUser: 0`,
//! `optional: false`). Present sub-messages are always emitted (Go emits non-pointer structs), except a zero
//! `Time`, which Go renders as `null`. Fields marked `inline` are Go embedded structs whose fields JSON puts in
//! the parent.

use base64::Engine;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{Duration, FieldsV1, MicroTime, Time};
use k8s_pb::apimachinery::pkg::runtime::RawExtension;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A message that has a JSON form.
pub(crate) trait ToJson {
    /// The JSON value; `Null` means "leave the field out".
    fn to_json(&self) -> Value;
}

/// How a field is emitted.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    /// Zero values are left out.
    Plain,
    /// Zero values are kept (Go pointer fields).
    Keep,
    /// The sub-message's fields go into the parent (Go embedded structs).
    Inline,
}

/// A field of a message, emitted under its JSON name.
pub(crate) trait Field {
    /// The JSON value of the field, or `None` to leave it out.
    fn value(&self, flag: Flag) -> Option<Value>;
}

/// Adds one field to `out`.
pub(crate) fn emit<F: Field + ?Sized>(
    out: &mut Map<String, Value>,
    name: &str,
    field: &F,
    flag: Flag,
) {
    match field.value(flag) {
        Some(Value::Object(inner)) if flag == Flag::Inline => out.extend(inner),
        Some(v) => {
            out.insert(name.to_string(), v);
        }
        None => {}
    }
}

fn scalar<T: Copy + PartialEq + Default + Into<Value>>(v: &Option<T>, flag: Flag) -> Option<Value> {
    v.filter(|x| flag == Flag::Keep || *x != T::default())
        .map(Into::into)
}

impl Field for Option<bool> {
    fn value(&self, flag: Flag) -> Option<Value> {
        scalar(self, flag)
    }
}

impl Field for Option<i32> {
    fn value(&self, flag: Flag) -> Option<Value> {
        scalar(self, flag)
    }
}

impl Field for Option<i64> {
    fn value(&self, flag: Flag) -> Option<Value> {
        scalar(self, flag)
    }
}

impl Field for Option<String> {
    fn value(&self, flag: Flag) -> Option<Value> {
        self.as_ref()
            .filter(|s| flag == Flag::Keep || !s.is_empty())
            .map(|s| Value::String(s.clone()))
    }
}

/// `bytes` fields are base64 in JSON, as Go encodes `[]byte`.
fn bytes(b: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(b))
}

impl Field for Option<Vec<u8>> {
    fn value(&self, flag: Flag) -> Option<Value> {
        self.as_ref()
            .filter(|b| flag == Flag::Keep || !b.is_empty())
            .map(|b| bytes(b))
    }
}

fn list<T>(items: &[T], each: impl Fn(&T) -> Value) -> Option<Value> {
    (!items.is_empty()).then(|| Value::Array(items.iter().map(each).collect()))
}

impl Field for Vec<String> {
    fn value(&self, _: Flag) -> Option<Value> {
        list(self, |s| Value::String(s.clone()))
    }
}

impl Field for Vec<i32> {
    fn value(&self, _: Flag) -> Option<Value> {
        list(self, |n| Value::from(*n))
    }
}

impl Field for Vec<i64> {
    fn value(&self, _: Flag) -> Option<Value> {
        list(self, |n| Value::from(*n))
    }
}

fn map<T>(items: &BTreeMap<String, T>, each: impl Fn(&T) -> Value) -> Option<Value> {
    (!items.is_empty())
        .then(|| Value::Object(items.iter().map(|(k, v)| (k.clone(), each(v))).collect()))
}

impl Field for BTreeMap<String, String> {
    fn value(&self, _: Flag) -> Option<Value> {
        map(self, |s| Value::String(s.clone()))
    }
}

impl Field for BTreeMap<String, Vec<u8>> {
    fn value(&self, _: Flag) -> Option<Value> {
        map(self, |b| bytes(b))
    }
}

impl<M: ToJson> Field for Option<M> {
    fn value(&self, _: Flag) -> Option<Value> {
        self.as_ref().map(ToJson::to_json).filter(|v| !v.is_null())
    }
}

impl<M: ToJson> Field for Vec<M> {
    fn value(&self, _: Flag) -> Option<Value> {
        list(self, ToJson::to_json)
    }
}

impl<M: ToJson> Field for BTreeMap<String, M> {
    fn value(&self, _: Flag) -> Option<Value> {
        map(self, ToJson::to_json)
    }
}

/// `metav1.Time`: RFC 3339 with second precision; the zero time is `null`.
impl ToJson for Time {
    fn to_json(&self) -> Value {
        let (seconds, nanos) = (self.seconds.unwrap_or(0), self.nanos.unwrap_or(0));
        if seconds == 0 && nanos == 0 {
            return Value::Null;
        }
        timestamp(seconds, 0).map_or(Value::Null, |t| {
            Value::String(t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        })
    }
}

/// `metav1.MicroTime`: RFC 3339 with microseconds; the zero time is `null`.
impl ToJson for MicroTime {
    fn to_json(&self) -> Value {
        let (seconds, nanos) = (self.seconds.unwrap_or(0), self.nanos.unwrap_or(0));
        if seconds == 0 && nanos == 0 {
            return Value::Null;
        }
        timestamp(seconds, nanos).map_or(Value::Null, |t| {
            Value::String(t.strftime("%Y-%m-%dT%H:%M:%S.%6fZ").to_string())
        })
    }
}

fn timestamp(seconds: i64, nanos: i32) -> Option<jiff::Timestamp> {
    jiff::Timestamp::new(seconds, nanos).ok()
}

/// `resource.Quantity`: its canonical string.
impl ToJson for Quantity {
    fn to_json(&self) -> Value {
        Value::String(self.string.clone().unwrap_or_default())
    }
}

/// `intstr.IntOrString`: a number for type 0, a string for type 1.
impl ToJson for IntOrString {
    fn to_json(&self) -> Value {
        match self.r#type.unwrap_or(0) {
            1 => Value::String(self.str_val.clone().unwrap_or_default()),
            _ => Value::from(self.int_val.unwrap_or(0)),
        }
    }
}

/// `metav1.FieldsV1`: its raw bytes are JSON.
impl ToJson for FieldsV1 {
    fn to_json(&self) -> Value {
        self.raw
            .as_deref()
            .and_then(|r| serde_json::from_slice(r).ok())
            .unwrap_or(Value::Null)
    }
}

/// `runtime.RawExtension`: raw bytes holding JSON.
impl ToJson for RawExtension {
    fn to_json(&self) -> Value {
        self.raw
            .as_deref()
            .and_then(|r| serde_json::from_slice(r).ok())
            .unwrap_or(Value::Null)
    }
}

/// `metav1.Duration`: Go's duration string (`1h2m3.5s`).
impl ToJson for Duration {
    fn to_json(&self) -> Value {
        Value::String(go_duration(self.duration.unwrap_or(0)))
    }
}

/// Go's `time.Duration.String()` for whole and fractional seconds (sub-second durations use `ms`/`µs`/`ns`).
pub(crate) fn go_duration(nanos: i64) -> String {
    if nanos == 0 {
        return "0s".to_string();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let n = nanos.unsigned_abs();
    if n < 1_000_000_000 {
        let (unit, div) = if n < 1_000 {
            ("ns", 1)
        } else if n < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{sign}{}{unit}", trim_fraction(n, div));
    }
    let (h, rest) = (n / 3_600_000_000_000, n % 3_600_000_000_000);
    let (m, rest) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = trim_fraction(rest, 1_000_000_000);
    match (h, m) {
        (0, 0) => format!("{sign}{seconds}s"),
        (0, m) => format!("{sign}{m}m{seconds}s"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}s"),
    }
}

fn trim_fraction(n: u64, div: u64) -> String {
    let (whole, frac) = (n / div, n % div);
    if frac == 0 {
        return whole.to_string();
    }
    let width = div.to_string().len() - 1;
    let digits = format!("{frac:0width$}");
    format!("{whole}.{}", digits.trim_end_matches('0'))
}

/// Declares the JSON form of a k8s-pb message: `message!(path::Type { rust_field => "jsonName" [keep|inline], ... });`
macro_rules! message {
    ($($seg:ident)::+ { $($field:ident => $json:literal $($flag:ident)?),* $(,)? }) => {
        impl $crate::protobuf::json::ToJson for $($seg)::+ {
            fn to_json(&self) -> ::serde_json::Value {
                let $($seg)::+ { $($field),* } = self;
                let mut out = ::serde_json::Map::new();
                $( $crate::protobuf::json::emit(&mut out, $json, $field, message!(@flag $($flag)?)); )*
                ::serde_json::Value::Object(out)
            }
        }
    };
    (@flag) => { $crate::protobuf::json::Flag::Plain };
    (@flag keep) => { $crate::protobuf::json::Flag::Keep };
    (@flag inline) => { $crate::protobuf::json::Flag::Inline };
}
pub(crate) use message;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let cases = [
            (0, "0s"),
            (1_500_000_000, "1.5s"),
            (90_000_000_000, "1m30s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_500_000_000, "1h2m3.5s"),
            (-2_000_000_000, "-2s"),
            (1_500_000, "1.5ms"),
            (750, "750ns"),
        ];
        for (n, want) in cases {
            assert_eq!(go_duration(n), want, "{n}");
        }
    }

    #[test]
    fn special_types() {
        assert_eq!(
            Time {
                seconds: Some(1_795_000_000),
                nanos: Some(5)
            }
            .to_json(),
            "2026-11-18T11:06:40Z"
        );
        assert_eq!(
            Time {
                seconds: None,
                nanos: None
            }
            .to_json(),
            Value::Null
        );
        assert_eq!(
            MicroTime {
                seconds: Some(1_795_000_000),
                nanos: Some(123_456_000)
            }
            .to_json(),
            "2026-11-18T11:06:40.123456Z"
        );
        assert_eq!(
            IntOrString {
                r#type: Some(1),
                int_val: None,
                str_val: Some("25%".into())
            }
            .to_json(),
            "25%"
        );
        assert_eq!(
            IntOrString {
                r#type: Some(0),
                int_val: Some(0),
                str_val: None
            }
            .to_json(),
            0
        );
        assert_eq!(
            Quantity {
                string: Some("100m".into())
            }
            .to_json(),
            "100m"
        );
        assert_eq!(
            FieldsV1 {
                raw: Some(br#"{"f:a":{}}"#.to_vec())
            }
            .to_json(),
            serde_json::json!({"f:a": {}})
        );
    }
}
