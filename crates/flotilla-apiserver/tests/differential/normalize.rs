//! Every normalisation rule, in one place. A reply becomes a JSON document (status code, the headers that
//! matter, the body) in which values that legitimately differ between two correct servers, or between two runs
//! of one server, are replaced by placeholders. Each rule says why its value is volatile.
//!
//! One `Normalizer` serves one case on one server, so concurrent cases do not disturb each other. Stand-ins are
//! named after the object that carries the value (`<uid:a>`, and `<rv:a:changed>` when `a` shows a
//! resourceVersion other than at its previous sighting): equal behaviour gives equal documents, and a difference
//! in one step (a write one server refused) does not shift the stand-ins of every later step.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value, json};

use super::runner::Reply;

/// RFC 3339 timestamps, whole strings: creation, deletion, managedFields and condition times record when the
/// request ran.
static TIMESTAMP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")
        .expect("timestamp pattern")
});
/// UUIDs anywhere in a string: uids are random per object and appear in metadata, owner references,
/// preconditions, Status details and error messages.
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
        .expect("uuid pattern")
});
/// The resourceVersions in a too-old message are counter values of each server's store.
static TOO_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"too old resource version: \d+ \(\d+\)").expect("too-old pattern")
});
/// `https://127.0.0.1:PORT` and `127.0.0.1:PORT` in kubectl output: each server listens on its own free port.
static ADDRESS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(https://)?127\.0\.0\.1:\d+").expect("address pattern"));
/// kubectl's AGE column and other short durations (`0s`, `3m2s`): they count wall-clock time since creation.
static AGE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^(\d+[smhd])+$").expect("age pattern"));
/// The projected token volume the ServiceAccount admission adds to Pods is named with a random suffix.
static TOKEN_VOLUME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"kube-api-access-[a-z0-9]{5}").expect("volume pattern"));
/// The characters upstream appends to a `generateName` prefix (five of them, consonants and digits that cannot
/// spell words).
const GENERATED_SUFFIX: &str = "[bcdfghjklmnpqrstvwxz2456789]{5}";
/// A line of `kubectl` output holding a certificate authority's data.
static CA_DATA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"certificate-authority-data: \S+").expect("ca data pattern"));

/// The annotation that marks the bookmark ending a watch's initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// Stand-ins for one case on one server.
#[derive(Default)]
pub(crate) struct Normalizer {
    /// uid -> stand-in.
    uids: HashMap<String, String>,
    /// resourceVersion -> stand-in, for versions met outside an object's metadata.
    resource_versions: HashMap<String, String>,
    /// Per object name, how many distinct uids it has shown.
    uid_count: HashMap<String, usize>,
    /// Per object name, the resourceVersion it showed last.
    last_rv: HashMap<String, String>,
    /// `generateName` prefixes seen in requests and responses, with the pattern of names made from them.
    prefixes: Vec<(String, Regex)>,
    /// Generated names and their stand-ins.
    generated: HashMap<String, String>,
}

impl Normalizer {
    /// The comparable document of a reply.
    pub(crate) fn reply(&mut self, reply: &Reply, watch: bool, until_met: bool) -> Value {
        let mut doc = match reply {
            Reply::Http {
                status,
                headers,
                body,
                ended,
            } => {
                let mut doc = Map::new();
                doc.insert("status".into(), json!(status));
                // Only these headers carry behaviour; the rest (Audit-Id, priority-and-fairness uids, Date,
                // Content-Length, Cache-Control) are per request or per deployment.
                let headers: Map<String, Value> =
                    headers.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
                doc.insert("headers".into(), Value::Object(headers));
                if watch {
                    doc.insert("events".into(), self.watch_events(body));
                    doc.insert("ended".into(), json!(ended));
                } else {
                    doc.insert("body".into(), self.body(body));
                }
                Value::Object(doc)
            }
            Reply::Kubectl {
                exit,
                stdout,
                stderr,
            } => json!({
                "exit": exit,
                "stdout": self.kubectl_output(stdout),
                "stderr": self.kubectl_output(stderr),
            }),
            Reply::Alpn(protocol) => json!({ "alpn": protocol }),
            Reply::Failed(message) => json!({ "failed": message }),
        };
        if !until_met && let Value::Object(m) = &mut doc {
            m.insert("untilMet".into(), json!(false));
        }
        doc
    }

    /// The comparable document of a reply that must not count as a sighting of the resourceVersions it shows
    /// (uids and generated names it shows are still learnt).
    pub(crate) fn reply_unsighted(&mut self, reply: &Reply, watch: bool, until_met: bool) -> Value {
        let sightings = self.last_rv.clone();
        let doc = self.reply(reply, watch, until_met);
        self.last_rv = sightings;
        doc
    }

    /// A body: JSON normalised as a value, anything else as (normalised) text.
    fn body(&mut self, body: &str) -> Value {
        match serde_json::from_str::<Value>(body) {
            Ok(v) => self.value(v),
            Err(_) => Value::String(self.text(body)),
        }
    }

    /// A watch stream: one event per line. Bookmarks other than the one ending the initial events are dropped:
    /// servers send them on their own schedule (upstream about once a minute, and on some stream ends), so
    /// their presence says nothing about behaviour.
    fn watch_events(&mut self, body: &str) -> Value {
        let mut events = Vec::new();
        for line in body.lines().filter(|l| !l.trim().is_empty()) {
            let Ok(mut event) = serde_json::from_str::<Value>(line) else {
                events.push(json!({ "unparsed": self.text(line) }));
                continue;
            };
            if event["type"] == "BOOKMARK" {
                let ends_initial = event
                    .pointer("/object/metadata/annotations")
                    .and_then(|a| a.get(INITIAL_EVENTS_END))
                    .is_some();
                if !ends_initial {
                    continue;
                }
                // A bookmark's resourceVersion is the store's counter at that moment, moved by every write on
                // the server, not only this case's.
                if let Some(rv) = event.pointer_mut("/object/metadata/resourceVersion") {
                    *rv = json!("<bookmark-rv>");
                }
            }
            events.push(self.value(event));
        }
        Value::Array(events)
    }

    /// kubectl's stdout or stderr: JSON when it parses, otherwise text lines.
    fn kubectl_output(&mut self, out: &str) -> Value {
        if let Ok(v) = serde_json::from_str::<Value>(out) {
            return self.value(v);
        }
        // `-o yaml` output: compared as the document it is, so the same rules apply.
        if out.starts_with("apiVersion:")
            && let Ok(v) = flotilla_yaml::from_str::<Value>(out)
        {
            return self.value(v);
        }
        let text = CA_DATA
            .replace_all(out, "certificate-authority-data: <ca-data>")
            .into_owned();
        Value::Array(
            text.lines()
                .map(|line| {
                    let line = self.text(line);
                    // Columns are padded to their widest cell, which an age changes, so cells are compared
                    // with single spaces between them; a whole cell that is a duration is an age.
                    let cells: Vec<&str> = line
                        .split_whitespace()
                        .map(|c| {
                            if AGE.is_match(c) {
                                "<age>"
                            } else if TIMESTAMP.is_match(c) {
                                "<time>"
                            } else {
                                c
                            }
                        })
                        .collect();
                    Value::String(cells.join(" "))
                })
                .collect(),
        )
    }

    /// Learns the `generateName` prefixes a request carries (its JSON body, or kubectl's stdin), so that a
    /// generated name is recognised even where only an error message shows it.
    pub(crate) fn learn_request(&mut self, body: &Value) {
        self.learn_prefixes(body);
    }

    /// A JSON value: first learns the generated names and identities it carries, then rewrites it.
    pub(crate) fn value(&mut self, mut v: Value) -> Value {
        self.learn_prefixes(&v);
        self.learn_identities(&v);
        self.rewrite(&mut v, None);
        v
    }

    fn learn_prefixes(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                // Upstream cuts the prefix to 58 characters so that the name fits 63.
                let kept: String = m
                    .get("generateName")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .chars()
                    .take(58)
                    .collect();
                if !kept.is_empty() && !self.prefixes.iter().any(|(p, _)| *p == kept) {
                    let pattern = format!("{}{GENERATED_SUFFIX}", regex::escape(&kept));
                    if let Ok(re) = Regex::new(&pattern) {
                        self.prefixes.push((kept, re));
                        // Longest first, so that a prefix of a prefix does not claim its names.
                        self.prefixes
                            .sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
                    }
                }
                m.values().for_each(|x| self.learn_prefixes(x));
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn_prefixes(x)),
            _ => {}
        }
    }

    /// Gives the uid of every object with a name a stand-in named after it.
    fn learn_identities(&mut self, v: &Value) {
        match v {
            Value::Object(m) => {
                if let Some(Value::Object(meta)) = m.get("metadata")
                    && let Some(name) = meta.get("name").and_then(Value::as_str)
                {
                    let name = self.names(name);
                    if let Some(uid) = meta.get("uid").and_then(Value::as_str)
                        && !self.uids.contains_key(uid)
                    {
                        let n = self.uid_count.entry(name.clone()).or_default();
                        *n += 1;
                        let stand_in = if *n == 1 {
                            format!("<uid:{name}>")
                        } else {
                            format!("<uid:{name}#{n}>")
                        };
                        self.uids.insert(uid.to_string(), stand_in);
                    }
                }
                m.values().for_each(|x| self.learn_identities(x));
            }
            Value::Array(a) => a.iter().for_each(|x| self.learn_identities(x)),
            _ => {}
        }
    }

    /// Replaces generated names in `s` by `<prefix><generated-N>`, N counting the names made from that
    /// prefix in the order they were first seen.
    fn names(&mut self, s: &str) -> String {
        let mut out = s.to_string();
        for (prefix, re) in &self.prefixes {
            let found: Vec<String> = re.find_iter(&out).map(|m| m.as_str().to_string()).collect();
            for name in found {
                let count = self
                    .generated
                    .keys()
                    .filter(|g| g.starts_with(prefix.as_str()))
                    .count();
                let stand_in = self
                    .generated
                    .entry(name.clone())
                    .or_insert_with(|| format!("{prefix}<generated-{}>", count + 1))
                    .clone();
                out = out.replace(&name, &stand_in);
            }
        }
        out
    }

    /// Rewrites volatile values in place; `key` is the key under which `v` sits in its parent object.
    fn rewrite(&mut self, v: &mut Value, key: Option<&str>) {
        match v {
            Value::Object(m) => {
                self.rewrite_object(m);
                // Keys carry volatile values too: managedFields name list items by uid (`k:{"uid":"..."}`).
                let entries = std::mem::take(m);
                for (k, mut x) in entries {
                    self.rewrite(&mut x, Some(&k));
                    let k = if k.contains('-') { self.text(&k) } else { k };
                    m.insert(k, x);
                }
            }
            // Elements of a list sit under their list's key for the rules above (`clusterIPs`).
            Value::Array(a) => a.iter_mut().for_each(|x| self.rewrite(x, key)),
            Value::String(s) => {
                *s = match key {
                    Some("resourceVersion") => self.resource_version(s),
                    // Service cluster IPs are allocated at random from the service CIDR.
                    Some("clusterIP" | "clusterIPs") if s.parse::<std::net::IpAddr>().is_ok() => {
                        "<cluster-ip>".into()
                    }
                    _ => self.text(s),
                };
            }
            _ => {}
        }
    }

    /// Rules that need to see an object as a whole.
    fn rewrite_object(&mut self, m: &mut Map<String, Value>) {
        let is_list = m.get("items").is_some_and(Value::is_array)
            || m.get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k == "Table");
        if is_list && let Some(Value::Object(meta)) = m.get_mut("metadata") {
            // A list's resourceVersion is the store's counter when the list was served, moved by every write on
            // the server (other cases, the servers' own controllers), not only this case's.
            if meta.contains_key("resourceVersion") {
                meta.insert("resourceVersion".into(), json!("<list-rv>"));
            }
            // Continue tokens are opaque and encode the server's counter.
            if let Some(Value::String(c)) = meta.get_mut("continue")
                && !c.is_empty()
            {
                *c = "<continue>".into();
            }
        }
        if m.get("kind").and_then(Value::as_str) == Some("Table")
            && let Some(Value::Array(rows)) = m.get_mut("rows")
        {
            // Age cells count wall-clock time since creation.
            for cell in rows
                .iter_mut()
                .filter_map(|r| r.get_mut("cells").and_then(Value::as_array_mut))
                .flatten()
            {
                if cell.as_str().is_some_and(|c| AGE.is_match(c)) {
                    *cell = json!("<age>");
                }
            }
        }
        if let Some(Value::Object(meta)) = m.get_mut("metadata")
            && let Some(name) = meta.get("name").and_then(Value::as_str).map(str::to_string)
            && let Some(Value::String(rv)) = meta.get_mut("resourceVersion")
            && !rv.is_empty()
            && !rv.starts_with('<')
        {
            // An object's resourceVersion is a store counter value, different on each server; what behaviour
            // shows is whether it changed since the object was last seen (a write happened, or a no-op did not).
            let name = self.names(&name);
            *rv = match self.last_rv.insert(name.clone(), rv.clone()) {
                None => format!("<rv:{name}>"),
                Some(previous) if previous == *rv => format!("<rv:{name}:unchanged>"),
                Some(_) => format!("<rv:{name}:changed>"),
            };
        }
        if let Some(Value::Object(meta)) = m.get_mut("metadata")
            && let Some(Value::Array(managed)) = meta.get_mut("managedFields")
        {
            // kube-apiserver orders managedFields entries by their time, at one-second resolution: whether two
            // writes fell into the same second decides their order, so compare them in an order of their own.
            managed.sort_by_key(|e| {
                ["manager", "operation", "subresource"].map(|k| {
                    e.get(k)
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                })
            });
        }
        // kube-apiserver's list items carry no kind: a CSR is also told by its spec.
        let csr = m.get("kind").and_then(Value::as_str) == Some("CertificateSigningRequest")
            || m.get("spec")
                .is_some_and(|s| s.get("signerName").is_some() && s.get("request").is_some());
        if csr && let Some(Value::Object(spec)) = m.get_mut("spec") {
            // The server records who asked: the test reaches the real server with a client certificate
            // (system:admin, system:masters, and the certificate's hash in `extra`) and the embedded one with
            // a bearer token (no `extra`), a difference of the harness, not of the servers.
            for field in ["username", "uid", "groups", "extra"] {
                if spec.contains_key(field) || field == "extra" {
                    spec.insert(field.into(), json!("<requesting-user>"));
                }
            }
        }
        if let Some(Value::Object(data)) = m.get_mut("data") {
            // kube-root-ca.crt carries each cluster's own CA certificate.
            if let Some(ca) = data.get_mut("ca.crt")
                && ca.as_str().is_some_and(|s| s.contains("BEGIN CERTIFICATE"))
            {
                *ca = json!("<cluster-ca>");
            }
        }
    }

    /// A resourceVersion outside an object's metadata (a precondition, a Status detail) becomes an ordinal among
    /// those values: equal versions stay equal while the values (store counters) differ per server.
    fn resource_version(&mut self, rv: &str) -> String {
        if rv.is_empty() || rv.starts_with('<') {
            return rv.to_string();
        }
        let next = self.resource_versions.len() + 1;
        self.resource_versions
            .entry(rv.to_string())
            .or_insert_with(|| format!("<rv-{next}>"))
            .clone()
    }

    /// String rules: timestamps, uids, generated names, addresses, too-old messages.
    fn text(&mut self, s: &str) -> String {
        if TIMESTAMP.is_match(s) {
            return "<time>".into();
        }
        let mut out = self.names(s);
        if UUID.is_match(&out) {
            let found: Vec<String> = UUID
                .find_iter(&out)
                .map(|m| m.as_str().to_string())
                .collect();
            for uid in found {
                let next = self.uids.len() + 1;
                let stand_in = self
                    .uids
                    .entry(uid.clone())
                    .or_insert_with(|| format!("<uid-{next}>"))
                    .clone();
                out = out.replace(&uid, &stand_in);
            }
        }
        let out = ADDRESS.replace_all(&out, "<server>");
        let out = TOKEN_VOLUME.replace_all(&out, "kube-api-access-<generated>");
        TOO_OLD
            .replace_all(&out, "too old resource version: <rv> (<rv>)")
            .into_owned()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Normalizer;

    #[test]
    fn volatile_values_become_stand_ins_named_after_their_object() {
        let mut n = Normalizer::default();
        let first = n.value(json!({
            "kind": "ConfigMap",
            "metadata": {"name": "gen-x7k2p", "generateName": "gen-", "uid": "0b2c7f0e-1d2e-4f3a-8b9c-0d1e2f3a4b5c",
                         "resourceVersion": "41", "creationTimestamp": "2026-11-25T01:06:11Z"},
        }));
        assert_eq!(first["metadata"]["name"], "gen-<generated-1>");
        assert_eq!(first["metadata"]["uid"], "<uid:gen-<generated-1>>");
        assert_eq!(
            first["metadata"]["resourceVersion"],
            "<rv:gen-<generated-1>>"
        );
        assert_eq!(first["metadata"]["creationTimestamp"], "<time>");
        let again = n.value(json!({"metadata": {"name": "gen-x7k2p", "resourceVersion": "41"}}));
        assert_eq!(
            again["metadata"]["resourceVersion"],
            "<rv:gen-<generated-1>:unchanged>"
        );
        let later = n.value(json!({"metadata": {"name": "gen-x7k2p", "resourceVersion": "57"}}));
        assert_eq!(
            later["metadata"]["resourceVersion"],
            "<rv:gen-<generated-1>:changed>"
        );
        let message = n.value(json!(
            "the UID in record (0b2c7f0e-1d2e-4f3a-8b9c-0d1e2f3a4b5c) differs"
        ));
        assert_eq!(
            message,
            "the UID in record (<uid:gen-<generated-1>>) differs"
        );
    }

    #[test]
    fn lists_lose_their_counter_and_token_and_managed_fields_their_order() {
        let mut n = Normalizer::default();
        let list = n.value(json!({
            "metadata": {"resourceVersion": "99", "continue": "opaque"},
            "items": [{"metadata": {"name": "a", "managedFields": [{"manager": "zed"}, {"manager": "alice"}]}}],
        }));
        assert_eq!(
            list["metadata"],
            json!({"resourceVersion": "<list-rv>", "continue": "<continue>"})
        );
        assert_eq!(
            list["items"][0]["metadata"]["managedFields"][0]["manager"],
            "alice"
        );
    }

    #[test]
    fn only_the_bookmark_ending_initial_events_is_kept() {
        let mut n = Normalizer::default();
        let body = [
            r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"5"}}}"#,
            r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"6","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
        ]
        .join("\n");
        let events = n.watch_events(&body);
        assert_eq!(events.as_array().map(Vec::len), Some(1));
        assert_eq!(
            events[0]["object"]["metadata"]["resourceVersion"],
            "<bookmark-rv>"
        );
    }
}
