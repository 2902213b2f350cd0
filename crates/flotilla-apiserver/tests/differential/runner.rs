//! Runs one step against one server and returns what came back, raw (normalisation is `normalize`'s job).

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use http_body_util::BodyExt;
use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::time::Instant;

use super::corpus::{Action, Step, Until, substitute, substitute_value};
use super::servers::{Target, tls_client};

/// How long one request or kubectl run may take before it counts as hanging.
const REQUEST_LIMIT: Duration = Duration::from_secs(30);
/// A watch ends by its `timeoutSeconds`; this much longer and the server did not end it.
const WATCH_GRACE: Duration = Duration::from_secs(10);

/// What one server answered to one step.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// An HTTP response; `body` is the whole body (every line of a watch stream).
    Http {
        /// Status code.
        status: u16,
        /// Headers that matter for comparison (`content-type`, `warning`), lower-case names.
        headers: BTreeMap<String, Vec<String>>,
        /// The body as text.
        body: String,
        /// A watch stream: the server ended it (by `timeoutSeconds`) within the grace period.
        ended: bool,
    },
    /// A kubectl run.
    Kubectl {
        /// Exit code (-1 when killed).
        exit: i32,
        /// Standard output.
        stdout: String,
        /// Standard error.
        stderr: String,
    },
    /// A TLS handshake: the negotiated ALPN protocol, if any.
    Alpn(Option<String>),
    /// The request could not be made or did not finish in time.
    Failed(String),
}

impl Reply {
    /// The status code, kubectl exit code, or -1.
    pub(crate) fn code(&self) -> i64 {
        match self {
            Reply::Http { status, .. } => i64::from(*status),
            Reply::Kubectl { exit, .. } => i64::from(*exit),
            Reply::Alpn(_) => 0,
            Reply::Failed(_) => -1,
        }
    }

    /// Whether a setup step succeeded.
    pub(crate) fn succeeded(&self) -> bool {
        match self {
            Reply::Http { status, .. } => (200..300).contains(status),
            Reply::Kubectl { exit, .. } => *exit == 0,
            Reply::Alpn(_) => true,
            Reply::Failed(_) => false,
        }
    }

    /// The body (or kubectl's stdout) parsed as JSON, if it is JSON.
    pub(crate) fn json(&self) -> Option<Value> {
        match self {
            Reply::Http { body, .. } => serde_json::from_str(body).ok(),
            Reply::Kubectl { stdout, .. } => serde_json::from_str(stdout).ok(),
            _ => None,
        }
    }
}

/// Variables a case's steps see on one server: `ns` and everything captured so far.
pub(crate) type Vars = BTreeMap<String, String>;

/// Runs `step` against `target`, repeating it under `until` until the condition holds or its deadline
/// passes, and records its captures in `vars`. Returns the last reply and whether `until` was met.
pub(crate) async fn run(step: &Step, target: &Target, ns: &str, vars: &mut Vars) -> (Reply, bool) {
    let deadline = Instant::now() + Duration::from_secs(step.timeout.unwrap_or(20));
    let (reply, met) = loop {
        let reply = run_once(step, target, ns, vars).await;
        let Some(until) = &step.until else {
            break (reply, true);
        };
        if holds(until, &reply) {
            break (reply, true);
        }
        if Instant::now() >= deadline {
            break (reply, false);
        }
        // Controllers act within milliseconds to seconds; poll often enough not to add much to the run.
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    if let Some(json) = reply.json() {
        for (var, pointer) in &step.capture {
            if let Some(v) = json.pointer(pointer) {
                let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                vars.insert(var.clone(), text);
            }
        }
    }
    (reply, met)
}

async fn run_once(step: &Step, target: &Target, ns: &str, vars: &Vars) -> Reply {
    match step.action() {
        Some(Action::Http { method, path }) => http(step, method, path, target, vars).await,
        Some(Action::Kubectl(args)) => {
            let args: Vec<String> = args.iter().map(|a| substitute(a, vars)).collect();
            let stdin = step.stdin.as_deref().map(|s| substitute(s, vars));
            kubectl(target, ns, &args, stdin.as_deref()).await
        }
        Some(Action::Alpn(protocols)) => alpn(target, protocols).await,
        Some(Action::Reviews) => reviews(target, ns),
        None => Reply::Failed("the step names no action".into()),
    }
}

/// Whether `reply` meets `until`.
pub(crate) fn holds(until: &Until, reply: &Reply) -> bool {
    if until.status.is_some_and(|s| s != reply.code()) {
        return false;
    }
    let Some(pointer) = &until.pointer else {
        return true;
    };
    let json = reply.json().unwrap_or(Value::Null);
    let actual = json.pointer(pointer);
    if until.exists.is_some_and(|e| e != actual.is_some()) {
        return false;
    }
    match (&until.matches, actual) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(expected), Some(actual)) => contains(actual, expected),
    }
}

/// `actual` contains `expected`: objects by the expected keys, arrays by an element for each expected one.
fn contains(actual: &Value, expected: &Value) -> bool {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => e
            .iter()
            .all(|(k, ev)| a.get(k).is_some_and(|av| contains(av, ev))),
        (Value::Array(a), Value::Array(e)) => {
            e.iter().all(|ev| a.iter().any(|av| contains(av, ev)))
        }
        (a, e) => a == e,
    }
}

/// Whether a request path may be a watch (its body is a stream of events ended by `timeoutSeconds`): the
/// legacy `/watch/` prefix, or any `watch` parameter but the false ones (kube-apiserver starts a watch for
/// values it cannot parse).
pub(crate) fn is_watch(path: &str) -> bool {
    let (route, _) = path.split_once('?').unwrap_or((path, ""));
    if route.starts_with("/api/v1/watch/")
        || (route.starts_with("/apis/") && route.split('/').nth(4) == Some("watch"))
    {
        return true;
    }
    path.split_once('?').is_some_and(|(_, q)| {
        q.split('&').any(|p| {
            p.strip_prefix("watch=")
                .is_some_and(|v| !matches!(v, "false" | "0" | "f" | "F" | "False" | "FALSE"))
        })
    })
}

async fn http(step: &Step, method: &str, path: &str, target: &Target, vars: &Vars) -> Reply {
    let path = substitute(path, vars);
    let mut builder = http::Request::builder().method(method).uri(&path);
    let mut body = Vec::new();
    if let Some(value) = &step.body {
        body = serde_json::to_vec(&substitute_value(value, vars)).unwrap_or_default();
    } else if let Some(raw) = &step.raw {
        body = substitute(raw, vars).into_bytes();
    }
    let has_content_type = step
        .headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("content-type"));
    if !body.is_empty() && !has_content_type {
        builder = builder.header("Content-Type", "application/json");
    }
    for (k, v) in &step.headers {
        builder = builder.header(k.as_str(), substitute(v, vars));
    }
    let request = match builder.body(kube::client::Body::from(body)) {
        Ok(r) => r,
        Err(e) => return Reply::Failed(format!("invalid request: {e}")),
    };
    let watch = is_watch(&path);
    let limit = if watch {
        watch_timeout(&path) + WATCH_GRACE
    } else {
        REQUEST_LIMIT
    };
    let deadline = Instant::now() + limit;
    // A step that authenticates itself (a ServiceAccount's token), or means to send no credentials at all, must
    // not also present the admin's identity.
    let own_credentials = step.anonymous
        || step
            .headers
            .keys()
            .any(|k| k.eq_ignore_ascii_case("authorization"));
    let client = if own_credentials {
        &target.bare
    } else {
        &target.client
    };
    let response = match tokio::time::timeout_at(deadline, client.send(request)).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => return Reply::Failed(format!("request failed: {e}")),
        Err(_) => return Reply::Failed(format!("no response within {limit:?}")),
    };
    let status = response.status().as_u16();
    let mut headers: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for name in ["content-type", "warning"] {
        let values: Vec<String> = response
            .headers()
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect();
        if !values.is_empty() {
            headers.insert(name.to_string(), values);
        }
    }
    // Read frame by frame so that a stream the server never ends still yields what it sent.
    let mut body = response.into_body();
    let mut bytes = Vec::new();
    let ended = loop {
        match tokio::time::timeout_at(deadline, body.frame()).await {
            Ok(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    bytes.extend_from_slice(data);
                }
            }
            Ok(Some(Err(e))) => {
                if !watch {
                    return Reply::Failed(format!("reading the body failed: {e}"));
                }
                break false;
            }
            Ok(None) => break true,
            Err(_) => {
                if !watch {
                    return Reply::Failed(format!("the body did not end within {limit:?}"));
                }
                break false;
            }
        }
    };
    Reply::Http {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
        ended,
    }
}

/// The `timeoutSeconds` of a watch path (a watch without one is given a short limit: the corpus must set it).
fn watch_timeout(path: &str) -> Duration {
    let secs = path
        .split_once('?')
        .and_then(|(_, q)| {
            q.split('&')
                .find_map(|p| p.strip_prefix("timeoutSeconds="))
                .and_then(|v| v.parse::<u64>().ok())
        })
        .unwrap_or(1);
    Duration::from_secs(secs)
}

/// The kubectl under test: PyPI's 1.37 when the test environment provides it, `kubectl` on PATH otherwise.
pub(crate) fn kubectl_bin() -> String {
    std::env::var("FLOTILLA_TEST_KUBECTL_NEW").unwrap_or_else(|_| "kubectl".to_string())
}

async fn kubectl(target: &Target, ns: &str, args: &[String], stdin: Option<&str>) -> Reply {
    let mut cmd = tokio::process::Command::new(kubectl_bin());
    cmd.env("KUBECONFIG", &target.kubeconfig)
        .env("KUBECACHEDIR", &target.kubectl_cache)
        .arg(format!("--namespace={ns}"))
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Reply::Failed(format!("cannot start {}: {e}", kubectl_bin())),
    };
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let _ = pipe.write_all(input.as_bytes()).await;
    }
    match tokio::time::timeout(REQUEST_LIMIT, child.wait_with_output()).await {
        Ok(Ok(out)) => Reply::Kubectl {
            exit: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        },
        Ok(Err(e)) => Reply::Failed(format!("kubectl failed: {e}")),
        Err(_) => Reply::Failed(format!("kubectl did not finish within {REQUEST_LIMIT:?}")),
    }
}

async fn alpn(target: &Target, protocols: &[String]) -> Reply {
    let config = tls_client(&target.ca_pem, protocols);
    let connector = tokio_rustls::TlsConnector::from(config);
    let name = match rustls_pki_types::ServerName::try_from("localhost") {
        Ok(n) => n,
        Err(e) => return Reply::Failed(format!("server name: {e}")),
    };
    let handshake = async {
        let tcp = tokio::net::TcpStream::connect(&target.address).await?;
        connector.connect(name, tcp).await
    };
    match tokio::time::timeout(REQUEST_LIMIT, handshake).await {
        Ok(Ok(tls)) => {
            let (_, session) = tls.get_ref();
            Reply::Alpn(
                session
                    .alpn_protocol()
                    .map(|p| String::from_utf8_lossy(p).into_owned()),
            )
        }
        Ok(Err(e)) => Reply::Failed(format!("TLS handshake failed: {e}")),
        Err(_) => Reply::Failed("TLS handshake timed out".into()),
    }
}

/// What the webhook was asked by `target` about namespace `ns`. The review's uid is random per call and the
/// requester differs by harness design (a client certificate on the real server, a token on the embedded one).
fn reviews(target: &Target, ns: &str) -> Reply {
    let Some(webhook) = &target.webhook else {
        return Reply::Failed("no webhook runs".into());
    };
    let requests: Vec<Value> = webhook
        .take(target.label, ns)
        .into_iter()
        .map(|mut r| {
            r["uid"] = Value::from("<review-uid>");
            r["userInfo"] = Value::from("<requesting-user>");
            r
        })
        .collect();
    Reply::Http {
        status: 200,
        headers: BTreeMap::new(),
        body: Value::Array(requests).to_string(),
        ended: false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{contains, is_watch};

    #[test]
    fn watches_are_told_by_parameter_or_legacy_path() {
        assert!(is_watch("/api/v1/configmaps?watch=true&timeoutSeconds=1"));
        assert!(is_watch("/api/v1/configmaps?timeoutSeconds=1&watch=1"));
        assert!(is_watch(
            "/api/v1/watch/namespaces/a/configmaps?timeoutSeconds=1"
        ));
        assert!(is_watch("/apis/apps/v1/watch/deployments"));
        assert!(!is_watch("/api/v1/configmaps?watch=false"));
        assert!(!is_watch("/api/v1/namespaces/watch/configmaps"));
    }

    #[test]
    fn contains_matches_listed_keys_and_elements() {
        let conditions = json!([{"type": "A", "status": "True", "reason": "x"}, {"type": "B", "status": "False"}]);
        assert!(contains(
            &conditions,
            &json!([{"type": "B", "status": "False"}])
        ));
        assert!(!contains(
            &conditions,
            &json!([{"type": "B", "status": "True"}])
        ));
        assert!(contains(&json!({"a": 1, "b": 2}), &json!({"a": 1})));
    }
}
