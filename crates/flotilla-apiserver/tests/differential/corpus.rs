//! The corpus: YAML files under `corpus/`, each a list of cases. A case runs in its own namespace (named after
//! the case, identical on both servers) and is a list of steps; every step runs against both servers and their
//! normalised responses are compared. Setup steps run the same way but only have to succeed on both.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// One case: a name that is also its namespace, optional setup and the compared steps.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Case {
    /// Unique across the corpus and a DNS label: it names the case's namespace on both servers.
    pub name: String,
    /// What the case shows, for a reader of the corpus (not used by the runner).
    #[serde(default)]
    pub doc: Option<String>,
    /// Steps that prepare the case; they must succeed (2xx, exit 0) on both servers and are not compared.
    #[serde(default)]
    pub setup: Vec<Step>,
    /// The compared steps, in order.
    pub steps: Vec<Step>,
    /// The corpus file the case came from (filled in on load).
    #[serde(skip)]
    pub file: String,
}

/// One request to both servers: exactly one of an HTTP request (`method` and `path`), `kubectl` or `alpn`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
    /// Unique within the case; the allowlist names steps by it. Setup steps may leave it out.
    #[serde(default)]
    pub name: Option<String>,
    /// The HTTP method of a raw request.
    #[serde(default)]
    pub method: Option<String>,
    /// Path and query of a raw request; `{ns}` and captured `{var}`s are substituted in the path, headers,
    /// body and kubectl arguments.
    #[serde(default)]
    pub path: Option<String>,
    /// Request headers; `Content-Type: application/json` is added when a body is sent without one.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// A structured body, sent as JSON.
    #[serde(default)]
    pub body: Option<Value>,
    /// `true`: send the request with no credentials of the run's own (no client certificate, no token), as an
    /// anonymous client does; an `Authorization` header among `headers` is still sent.
    #[serde(default)]
    pub anonymous: bool,
    /// A body sent verbatim (YAML for apply patches, deliberately malformed JSON).
    #[serde(default)]
    pub raw: Option<String>,
    /// Arguments of a kubectl invocation (the case's namespace is passed with `--namespace`).
    #[serde(default)]
    pub kubectl: Option<Vec<String>>,
    /// Standard input of the kubectl invocation (for `-f -`).
    #[serde(default)]
    pub stdin: Option<String>,
    /// A TLS handshake offering these ALPN protocols; the result is the protocol the server chose.
    #[serde(default)]
    pub alpn: Option<Vec<String>>,
    /// `true`: the AdmissionReview requests the run's webhook received from the server about the case's
    /// namespace since the last such step (the result is a JSON list with each request's `hook`).
    #[serde(default)]
    pub reviews: Option<bool>,
    /// Values to remember from this step's response body (JSON pointer per variable), per server, for
    /// `{var}` in later steps: uids, resourceVersions, generated names and continue tokens differ between the
    /// servers, so a later request must use each server's own.
    #[serde(default)]
    pub capture: BTreeMap<String, String>,
    /// Repeat the step until its response meets this condition (or the deadline passes); for effects of the
    /// servers' controllers (garbage collection, namespace termination, CRD establishing) that land later.
    #[serde(default)]
    pub until: Option<Until>,
    /// Seconds to keep repeating an `until` step (default 20).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// What is compared: the normalised `response` (the default), or only whether the step's `until` was met
    /// (`until`), for waits whose final state one server reaches by a path that varies from run to run.
    #[serde(default)]
    pub compare: Compare,
    /// The status code the real kube-apiserver must answer (or exit code kubectl must return); a check on the
    /// corpus itself, so that a case written to show a 409 cannot silently test a 201 on both servers.
    #[serde(default)]
    pub expect: Option<i64>,
}

/// What a step's comparison covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Compare {
    /// The normalised response.
    #[default]
    Response,
    /// Only whether the `until` condition was met.
    Until,
}

/// What a step sends, borrowed from the step.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Action<'a> {
    /// A raw HTTP request.
    Http {
        /// The method.
        method: &'a str,
        /// Path and query.
        path: &'a str,
    },
    /// A kubectl invocation.
    Kubectl(&'a [String]),
    /// A TLS handshake offering these ALPN protocols.
    Alpn(&'a [String]),
    /// What the webhook was asked.
    Reviews,
}

impl Step {
    /// What the step sends; `None` when the step names no action or more than one.
    pub(crate) fn action(&self) -> Option<Action<'_>> {
        match (
            &self.method,
            &self.path,
            &self.kubectl,
            &self.alpn,
            self.reviews,
        ) {
            (Some(method), Some(path), None, None, None) => Some(Action::Http { method, path }),
            (None, None, Some(args), None, None) => Some(Action::Kubectl(args)),
            (None, None, None, Some(protocols), None) => Some(Action::Alpn(protocols)),
            (None, None, None, None, Some(true)) => Some(Action::Reviews),
            _ => None,
        }
    }
}

/// When an `until` step is done: every given part must hold.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Until {
    /// The response status code (or kubectl exit code).
    #[serde(default)]
    pub status: Option<i64>,
    /// A JSON pointer into the response body that `matches` tests.
    #[serde(default)]
    pub pointer: Option<String>,
    /// The value at `pointer` contains this one: objects by their listed keys, arrays by having an element
    /// that matches each listed element, scalars by equality.
    #[serde(default)]
    pub matches: Option<Value>,
    /// Whether `pointer` is present at all.
    #[serde(default)]
    pub exists: Option<bool>,
}

impl Case {
    /// The case's steps paired with their names; setup steps are called `setup-<i>`.
    pub(crate) fn named_steps(&self) -> impl Iterator<Item = (String, &Step, bool)> {
        let setup = self.setup.iter().enumerate().map(|(i, s)| {
            (
                s.name.clone().unwrap_or_else(|| format!("setup-{i}")),
                s,
                true,
            )
        });
        let steps = self
            .steps
            .iter()
            .map(|s| (s.name.clone().unwrap_or_default(), s, false));
        setup.chain(steps)
    }
}

/// Loads every `*.yaml` file under `dir`, in name order, and checks the corpus' own rules.
pub(crate) fn load(dir: &Path) -> Result<Vec<Case>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read corpus directory {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let file = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut parsed: Vec<Case> =
            flotilla_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        for case in &mut parsed {
            case.file = file.clone();
        }
        cases.extend(parsed);
    }
    check(&cases)?;
    Ok(cases)
}

/// The corpus' own rules: unique case names that are DNS labels, named and unique steps.
fn check(cases: &[Case]) -> Result<(), String> {
    let label = regex::Regex::new("^[a-z0-9]([-a-z0-9]*[a-z0-9])?$").map_err(|e| e.to_string())?;
    let mut names = HashSet::new();
    for case in cases {
        let at = format!("{}.yaml case {:?}", case.file, case.name);
        // The namespace gets a `-t` style suffix in some cases, so leave room under the 63-character limit.
        if !label.is_match(&case.name) || case.name.len() > 50 {
            return Err(format!(
                "{at}: the name must be a DNS label of at most 50 characters"
            ));
        }
        if !names.insert(case.name.clone()) {
            return Err(format!("{at}: the name is used twice"));
        }
        let mut steps = HashSet::new();
        for step in &case.steps {
            let Some(name) = &step.name else {
                return Err(format!("{at}: every compared step needs a name"));
            };
            if !steps.insert(name.clone()) || name.starts_with("setup-") {
                return Err(format!(
                    "{at}: step name {name:?} is used twice or reserved"
                ));
            }
        }
        for step in case.setup.iter().chain(&case.steps) {
            if step.action().is_none() {
                return Err(format!(
                    "{at}: step {:?} needs exactly one of method+path, kubectl or alpn",
                    step.name
                ));
            }
            if step.compare == Compare::Until && step.until.is_none() {
                return Err(format!("{at}: `compare: until` needs an `until`"));
            }
            if step.anonymous && !matches!(step.action(), Some(Action::Http { .. })) {
                return Err(format!("{at}: only a raw HTTP request can be `anonymous`"));
            }
            if step.body.is_some() && step.raw.is_some() {
                return Err(format!("{at}: a step has both body and raw"));
            }
            if let Some(until) = &step.until
                && (until.matches.is_some() || until.exists.is_some()) != until.pointer.is_some()
            {
                return Err(format!(
                    "{at}: `until` needs pointer together with matches or exists"
                ));
            }
        }
    }
    Ok(())
}

/// Replaces `{name}` with its value for every variable; unknown `{...}` stay as they are, so JSON in raw
/// bodies passes through.
pub(crate) fn substitute(text: &str, vars: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), v);
    }
    out
}

/// Substitutes variables in every string of a JSON value (keys included).
pub(crate) fn substitute_value(value: &Value, vars: &BTreeMap<String, String>) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, vars)),
        Value::Array(a) => Value::Array(a.iter().map(|v| substitute_value(v, vars)).collect()),
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (substitute(k, vars), substitute_value(v, vars)))
                .collect(),
        ),
        other => other.clone(),
    }
}
