//! Structural comparison of two normalised documents: every place where they differ, as a JSON pointer with
//! the value on each side (absent when one side lacks the key or element).

use serde_json::Value;

/// One place where the documents differ.
#[derive(Debug, Clone)]
pub(crate) struct Difference {
    /// JSON pointer into the documents (`/body/metadata/labels/app`).
    pub pointer: String,
    /// The embedded server's value, `None` when absent.
    pub embedded: Option<Value>,
    /// The real kube-apiserver's value, `None` when absent.
    pub real: Option<Value>,
}

/// Every difference between `embedded` and `real`, in document order. Objects are compared key by key and
/// arrays element by element, so a missing field is one difference rather than a changed parent.
pub(crate) fn differences(embedded: &Value, real: &Value) -> Vec<Difference> {
    let mut out = Vec::new();
    walk(String::new(), Some(embedded), Some(real), &mut out);
    out
}

fn walk(pointer: String, e: Option<&Value>, r: Option<&Value>, out: &mut Vec<Difference>) {
    match (e, r) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                walk(format!("{pointer}/{}", escape(k)), a.get(k), b.get(k), out);
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => {
            for i in 0..a.len().max(b.len()) {
                walk(format!("{pointer}/{i}"), a.get(i), b.get(i), out);
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push(Difference {
            pointer,
            embedded: a.cloned(),
            real: b.cloned(),
        }),
    }
}

/// A JSON pointer token: `~` and `/` escaped (label keys and annotations contain `/`).
pub(crate) fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `pattern` covers `pointer`: it matches the pointer or one of its parents, where a `*` token matches
/// any one token and a `**` token any number of tokens (zero included).
pub(crate) fn covers(pattern: &str, pointer: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').skip(1).collect();
    let q: Vec<&str> = pointer.split('/').skip(1).collect();
    covers_tokens(&p, &q)
}

fn covers_tokens(p: &[&str], q: &[&str]) -> bool {
    match p.split_first() {
        None => true,
        Some((&"**", rest)) => (0..=q.len()).any(|skip| covers_tokens(rest, &q[skip..])),
        Some((first, rest)) => q.split_first().is_some_and(|(token, tail)| {
            (*first == "*" || first == token) && covers_tokens(rest, tail)
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::covers;

    #[test]
    fn patterns_cover_pointers_and_their_children() {
        assert!(covers("/body", "/body/metadata/uid"));
        assert!(covers("", "/body"));
        assert!(!covers("/body/metadata", "/body/meta"));
        assert!(covers("/body/items/*/kind", "/body/items/3/kind"));
        assert!(!covers("/body/items/*/kind", "/body/items/3/apiVersion"));
        assert!(covers(
            "/**/managedFields",
            "/events/0/object/metadata/managedFields/0/time"
        ));
        assert!(covers("/**/managedFields", "/managedFields"));
        assert!(!covers("/**/managedFields", "/body/metadata/labels"));
    }
}
