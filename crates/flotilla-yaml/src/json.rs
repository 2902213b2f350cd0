//! A YAML document as the JSON value kubectl makes of it (sigs.k8s.io/yaml's YAML-to-JSON step).
//!
//! serde-saphyr resolves scalars; this visitor adds what sigs.k8s.io/yaml does on the way to JSON and
//! no serde-saphyr option does: keys that resolve to booleans or numbers become their text, and a
//! whole float becomes an integer, as Go's JSON encoding and Kubernetes' JSON decoding make it.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The JSON value of one YAML document, read as kubectl reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Json(pub Value);

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor).map(Json)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        float(v).map(Value::Number)
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        Json::deserialize(deserializer).map(|json| json.0)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Json(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some((Key(key), Json(value))) = map.next_entry()? {
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

/// A float as it comes out of Go's JSON encoding and back into Kubernetes' decoder: a whole number
/// below 1e21 prints without a fraction and is read back as an integer when it fits one.
fn float<E: de::Error>(v: f64) -> Result<Number, E> {
    if v.fract() == 0.0 && v.abs() < 1e21 {
        // The casts are exact: the value is whole and inside the type's range.
        if v >= i64::MIN as f64 && v < i64::MAX as f64 {
            #[allow(clippy::cast_possible_truncation)]
            return Ok(Number::from(v as i64));
        }
        if v >= 0.0 && v < u64::MAX as f64 {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            return Ok(Number::from(v as u64));
        }
    }
    Number::from_f64(v).ok_or_else(|| E::custom(format!("JSON has no number {v}")))
}

/// A mapping key as sigs.k8s.io/yaml turns it into a JSON key: booleans and numbers become their text.
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(KeyVisitor).map(Key)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = String;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string, number or boolean mapping key")
    }

    fn visit_bool<E>(self, v: bool) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_i64<E>(self, v: i64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_u64<E>(self, v: u64) -> Result<String, E> {
        Ok(v.to_string())
    }

    fn visit_f64<E>(self, v: f64) -> Result<String, E> {
        Ok(float_key(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<String, E> {
        Ok(v.to_owned())
    }

    fn visit_string<E>(self, v: String) -> Result<String, E> {
        Ok(v)
    }

    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(E::custom("a mapping key is null, which JSON cannot hold"))
    }

    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        self.visit_unit()
    }
}

/// A float key's text as sigs.k8s.io/yaml writes it: Go's `%g` of the nearest `float32`, shortest
/// digits, with an exponent (at least two digits) below 1e-4 and from 1e6 up.
fn float_key(v: f64) -> String {
    if v.is_nan() {
        return ".nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    #[allow(clippy::cast_possible_truncation)]
    let single = v as f32;
    // Rust's `{:e}` gives the shortest digits that read back as the same float32, like Go's -1 precision.
    let scientific = format!("{single:e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("`{:e}` always writes an exponent");
    let exponent: i32 = exponent.parse().expect("`{:e}` writes an integer exponent");
    if (-4..6).contains(&exponent) {
        return single.to_string();
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::float_key;

    #[test]
    fn float_keys_print_as_go_does() {
        assert_eq!(float_key(1.5), "1.5");
        assert_eq!(float_key(1000.0), "1000");
        assert_eq!(float_key(123456.0), "123456");
        assert_eq!(float_key(1e6), "1e+06");
        assert_eq!(float_key(0.0001), "0.0001");
        assert_eq!(float_key(0.00001), "1e-05");
        assert_eq!(float_key(0.1), "0.1");
        assert_eq!(float_key(1.25e22), "1.25e+22");
    }
}
