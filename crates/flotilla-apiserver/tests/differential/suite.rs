//! Runs cases against both servers and judges the outcome against the allowlist.

use std::collections::BTreeSet;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::allowlist::{Entry, Matcher};
use super::compare::{Difference, differences};
use super::corpus::{Case, Compare, Step, substitute, substitute_value};
use super::normalize::Normalizer;
use super::report::{Outcome, describe, explain};
use super::runner::{self, Reply, Vars, is_watch};
use super::servers::Target;

/// Everything a run produced.
#[derive(Default)]
pub(crate) struct Run {
    /// One per step of every case, setup included.
    pub outcomes: Vec<Outcome>,
    /// Errors of the corpus or the harness (not differences between the servers): they are never allowlisted.
    pub errors: Vec<String>,
    /// Names of the cases that ran.
    pub cases: BTreeSet<String>,
    /// Whether every case of the corpus ran (no `FLOTILLA_DIFF_CASES` filter).
    pub whole_corpus: bool,
    /// How long each case took, slowest first (to keep the run short).
    pub durations: Vec<(String, Duration)>,
}

/// Runs `cases`, `parallel` at a time; the steps of one case run in order, each on both servers at once.
pub(crate) async fn run(cases: &[Case], embedded: &Target, real: &Target, parallel: usize) -> Run {
    // Start the cases that wait longest first, so that their waits overlap the rest instead of ending the run.
    let mut by_cost: Vec<&Case> = cases.iter().collect();
    by_cost.sort_by_key(|c| std::cmp::Reverse(cost(c)));
    let results: Vec<(Vec<Outcome>, Vec<String>, Duration)> = futures::stream::iter(by_cost)
        .map(|case| async move {
            let started = Instant::now();
            let (outcomes, errors) = run_case(case, embedded, real).await;
            (outcomes, errors, started.elapsed())
        })
        .buffer_unordered(parallel.max(1))
        .collect()
        .await;
    let mut run = Run::default();
    for (outcomes, errors, took) in results {
        if let Some(first) = outcomes.first() {
            run.durations.push((first.case.clone(), took));
        }
        run.outcomes.extend(outcomes);
        run.errors.extend(errors);
    }
    run.durations.sort_by_key(|(_, d)| std::cmp::Reverse(*d));
    run.cases = cases.iter().map(|c| c.name.clone()).collect();
    // Report in corpus order, not completion order.
    let order: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
    run.outcomes
        .sort_by_key(|o| order.iter().position(|c| *c == o.case));
    run
}

/// A rough measure of how long a case takes: waits for controllers dominate, then process starts and watches
/// (each watch lasts its timeoutSeconds).
fn cost(case: &Case) -> usize {
    case.named_steps()
        .map(|(_, step, _)| {
            if step.until.is_some() {
                5
            } else if step.kubectl.is_some() || step.path.as_deref().is_some_and(is_watch) {
                1
            } else {
                0
            }
        })
        .sum()
}

async fn run_case(case: &Case, embedded: &Target, real: &Target) -> (Vec<Outcome>, Vec<String>) {
    let mut errors = Vec::new();
    let ns = case.name.as_str();
    let (a, b) = tokio::join!(prepare_namespace(embedded, ns), prepare_namespace(real, ns));
    for (target, result) in [(embedded, a), (real, b)] {
        if let Err(e) = result {
            errors.push(format!(
                "case {ns}: preparing its namespace on {} failed: {e}",
                target.label
            ));
        }
    }
    let mut vars_a: Vars = embedded.initial_vars(ns);
    let mut vars_b: Vars = real.initial_vars(ns);
    let mut norm_a = Normalizer::default();
    let mut norm_b = Normalizer::default();
    let mut outcomes = Vec::new();
    for (name, step, setup) in case.named_steps() {
        let ((reply_a, met_a), (reply_b, met_b)) = tokio::join!(
            runner::run(step, embedded, ns, &mut vars_a),
            runner::run(step, real, ns, &mut vars_b),
        );
        let at = format!("{}.yaml case {} step {name}", case.file, case.name);
        if let Some(code) = step.expect
            && reply_b.code() != code
        {
            errors.push(format!(
                "{at}: the corpus expects {code} from kube-apiserver, which answered {}: {}",
                reply_b.code(),
                brief(&reply_b)
            ));
        }
        if !met_b {
            errors.push(format!(
                "{at}: kube-apiserver never met the step's `until` condition; last reply: {}",
                brief(&reply_b)
            ));
        }
        if setup && !reply_b.succeeded() {
            errors.push(format!(
                "{at}: setup failed on kube-apiserver: {}",
                brief(&reply_b)
            ));
        }
        for doc in request_documents(step, &vars_a) {
            norm_a.learn_request(&doc);
        }
        for doc in request_documents(step, &vars_b) {
            norm_b.learn_request(&doc);
        }
        let watch = step.path.as_deref().is_some_and(is_watch);
        let (doc_a, doc_b) = if step.compare == Compare::Until {
            (json!({ "untilMet": met_a }), json!({ "untilMet": met_b }))
        } else if setup {
            // Setup replies are not compared, and must not count as sightings of resourceVersions: a setup write
            // one server answers differently would otherwise change how the first compared step reads.
            (
                norm_a.reply_unsighted(&reply_a, watch, met_a),
                norm_b.reply_unsighted(&reply_b, watch, met_b),
            )
        } else {
            (
                norm_a.reply(&reply_a, watch, met_a),
                norm_b.reply(&reply_b, watch, met_b),
            )
        };
        let diffs = if setup {
            // Setup only has to succeed; its responses are not part of the comparison.
            if reply_a.succeeded() {
                Vec::new()
            } else {
                vec![Difference {
                    pointer: String::new(),
                    embedded: Some(doc_a.clone()),
                    real: Some(json!("(succeeded)")),
                }]
            }
        } else {
            differences(&doc_a, &doc_b)
        };
        outcomes.push(Outcome {
            file: case.file.clone(),
            case: case.name.clone(),
            doc: case.doc.clone().unwrap_or_default(),
            step: name,
            request: describe(step),
            embedded: doc_a,
            real: doc_b,
            differences: diffs,
        });
    }
    (outcomes, errors)
}

/// The documents a step sends (its body, raw body or kubectl stdin), as far as they parse.
fn request_documents(step: &Step, vars: &Vars) -> Vec<Value> {
    let mut docs = Vec::new();
    if let Some(body) = &step.body {
        docs.push(substitute_value(body, vars));
    }
    for text in [&step.raw, &step.stdin].into_iter().flatten() {
        if let Ok(v) = flotilla_yaml::from_str::<Value>(&substitute(text, vars)) {
            docs.push(v);
        }
    }
    docs
}

/// One line about a reply, for corpus errors.
fn brief(reply: &Reply) -> String {
    let text = match reply {
        Reply::Http { status, body, .. } => format!("{status} {body}"),
        Reply::Kubectl {
            exit,
            stdout,
            stderr,
        } => format!("exit {exit}: {stdout}{stderr}"),
        Reply::Alpn(p) => format!("ALPN {p:?}"),
        Reply::Failed(e) => e.clone(),
    };
    text.chars().take(400).collect()
}

/// Creates the case's namespace and waits for what every namespace gets from the servers' controllers (the
/// `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap), so that lists in the case do not depend on
/// whether those controllers were quick.
async fn prepare_namespace(target: &Target, ns: &str) -> Result<(), String> {
    let create: Step = serde_json::from_value(json!({
        "method": "POST",
        "path": "/api/v1/namespaces",
        "body": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
    }))
    .map_err(|e| e.to_string())?;
    let mut vars = Vars::new();
    let (reply, _) = runner::run(&create, target, ns, &mut vars).await;
    if !reply.succeeded() {
        return Err(format!("creating the namespace: {}", brief(&reply)));
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    for path in [
        format!("/api/v1/namespaces/{ns}/serviceaccounts/default"),
        format!("/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt"),
    ] {
        let get: Step = serde_json::from_value(json!({"method": "GET", "path": path}))
            .map_err(|e| e.to_string())?;
        loop {
            let (reply, _) = runner::run(&get, target, ns, &mut vars).await;
            if reply.succeeded() {
                break;
            }
            if Instant::now() >= deadline {
                return Err(format!("{path} did not appear: {}", brief(&reply)));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    Ok(())
}

/// The verdict: the failure text for unallowed differences, stale allowlist entries and corpus errors, or
/// `None` when the run passes. Also returns how many differences the allowlist covered.
pub(crate) fn judge(run: &Run, allowlist: &[Entry]) -> (Option<String>, usize) {
    let mut matcher = Matcher::new(allowlist);
    let mut failures = Vec::new();
    let mut allowed = 0;
    for outcome in &run.outcomes {
        let unallowed: Vec<&Difference> = outcome
            .differences
            .iter()
            .filter(|d| {
                matcher
                    .allow(&outcome.case, &outcome.step, &d.pointer)
                    .is_none()
            })
            .collect();
        allowed += outcome.differences.len() - unallowed.len();
        if !unallowed.is_empty() {
            failures.push(explain(outcome, &unallowed));
        }
    }
    let stale = matcher.stale(&run.cases, run.whole_corpus);
    if failures.is_empty() && stale.is_empty() && run.errors.is_empty() {
        return (None, allowed);
    }
    let mut text = String::new();
    if !run.errors.is_empty() {
        text.push_str("corpus or harness errors (fix the corpus; these cannot be allowlisted):\n");
        for e in &run.errors {
            text.push_str(&format!("  {e}\n"));
        }
    }
    if !stale.is_empty() {
        text.push_str(
            "allowlist entries that match no difference any more (delete them from tests/differential/allowlist.yaml):\n",
        );
        for s in &stale {
            text.push_str(&format!("  {s}\n"));
        }
    }
    if !failures.is_empty() {
        text.push_str(&format!(
            "{} step(s) differ between the embedded server and kube-apiserver; fix the server, or list the \
             difference with a reason in tests/differential/allowlist.yaml:\n\n",
            failures.len()
        ));
        text.push_str(&failures.join("\n"));
    }
    (Some(text), allowed)
}
