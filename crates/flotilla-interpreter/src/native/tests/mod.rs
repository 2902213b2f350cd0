//! Table tests of the native handlers, one module per operation, with fixtures built from small JSON
//! fragments merged into a minimal object of each kind.

mod aggregate;
mod dependencies;
mod health;
mod kinds;
mod layer;
mod reflect;
mod replica;
mod retain;

use serde_json::{Value, json};

use super::{NativeError, interpret};
use crate::layer::{Request, Response};

/// A minimal object of `api_version`/`kind` named `web` in namespace `ns`, with `extra` merged in.
pub(super) fn mk(api_version: &str, kind: &str, extra: Value) -> Value {
    let mut object = json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": "web", "namespace": "ns"}});
    merge(&mut object, extra);
    object
}

/// Deep-merges `patch` into `target` (objects merge, everything else replaces).
pub(super) fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

/// Runs a request that must succeed.
pub(super) fn ok(request: Request) -> Response {
    match interpret(request) {
        Ok(r) => r,
        Err(e) => panic!("native call failed: {e}"),
    }
}

/// Runs a request that must fail, returning the message.
pub(super) fn err(request: Request) -> String {
    match interpret(request) {
        Ok(r) => panic!("expected an error, got {r:?}"),
        Err(e) => error_chain(&e),
    }
}

/// The message and its sources.
pub(super) fn error_chain(e: &NativeError) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// The object of an object response.
pub(super) fn object(response: Response) -> Value {
    match response {
        Response::Object(o) => o,
        other => panic!("expected an object, got {other:?}"),
    }
}
