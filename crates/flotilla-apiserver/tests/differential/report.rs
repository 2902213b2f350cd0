//! What a person reads when the suite fails: per difference the case, step and request, the differing values,
//! and a line diff of the two normalised responses.

use std::fmt::Write;

use serde_json::Value;

use super::compare::Difference;
use super::corpus::{Action, Step};

/// One step's comparison.
pub(crate) struct Outcome {
    /// The corpus file (without `.yaml`).
    pub file: String,
    /// The case's name.
    pub case: String,
    /// What the case shows (its `doc`).
    pub doc: String,
    /// The step's name.
    pub step: String,
    /// The request, as written in the corpus.
    pub request: String,
    /// The embedded server's normalised response.
    pub embedded: Value,
    /// The real kube-apiserver's normalised response.
    pub real: Value,
    /// Where they differ.
    pub differences: Vec<Difference>,
}

/// The request of a step as the corpus writes it (variables unsubstituted).
pub(crate) fn describe(step: &Step) -> String {
    let mut out = String::new();
    match step.action() {
        Some(Action::Http { method, path }) => {
            let _ = write!(out, "{method} {path}");
            for (k, v) in &step.headers {
                let _ = write!(out, "\n  {k}: {v}");
            }
            if let Some(body) = &step.body {
                let _ = write!(out, "\n  body: {}", clip(&body.to_string(), 600));
            }
            if let Some(raw) = &step.raw {
                let _ = write!(out, "\n  raw body: {}", clip(raw, 600));
            }
        }
        Some(Action::Kubectl(args)) => {
            let _ = write!(out, "kubectl {}", args.join(" "));
            if let Some(stdin) = &step.stdin {
                let _ = write!(out, "\n  stdin: {}", clip(stdin, 600));
            }
        }
        Some(Action::Alpn(protocols)) => {
            let _ = write!(out, "TLS handshake offering ALPN {protocols:?}");
        }
        Some(Action::Reviews) => {
            out.push_str("the AdmissionReviews the webhook received");
        }
        None => out.push_str("(no action)"),
    }
    if let Some(until) = &step.until {
        let _ = write!(
            out,
            "\n  repeated until status={:?} {:?} matches {:?}",
            until.status, until.pointer, until.matches
        );
    }
    out
}

/// The failure text for one step's unallowed differences.
pub(crate) fn explain(outcome: &Outcome, unallowed: &[&Difference]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "=== {}.yaml case {} step {} ===",
        outcome.file, outcome.case, outcome.step
    );
    if !outcome.doc.is_empty() {
        let _ = writeln!(out, "case: {}", outcome.doc.trim());
    }
    let _ = writeln!(out, "request: {}", outcome.request);
    let _ = writeln!(out, "differences (embedded | kube-apiserver):");
    for d in unallowed {
        let _ = writeln!(
            out,
            "  {}: {} | {}",
            if d.pointer.is_empty() {
                "(whole)"
            } else {
                &d.pointer
            },
            show(d.embedded.as_ref()),
            show(d.real.as_ref())
        );
    }
    let _ = writeln!(out, "normalised responses (- embedded, + kube-apiserver):");
    out.push_str(&line_diff(
        &pretty(&outcome.embedded),
        &pretty(&outcome.real),
    ));
    out
}

fn show(v: Option<&Value>) -> String {
    v.map_or_else(|| "(absent)".to_string(), |v| clip(&v.to_string(), 300))
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(n).collect::<String>())
    }
}

/// A unified-style diff of two texts by lines (longest common subsequence), with three lines of context
/// around each change.
pub(crate) fn line_diff(a: &str, b: &str) -> String {
    let a: Vec<&str> = a.lines().collect();
    let b: Vec<&str> = b.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of a[i..] and b[j..].
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            ops.push((' ', a[i]));
            i += 1;
            j += 1;
        } else if i < a.len() && (j == b.len() || lcs[i + 1][j] >= lcs[i][j + 1]) {
            // Removals first, so that each changed stretch reads embedded, then kube-apiserver.
            ops.push(('-', a[i]));
            i += 1;
        } else {
            ops.push(('+', b[j]));
            j += 1;
        }
    }
    const CONTEXT: usize = 3;
    let near_change = |k: usize| {
        let lo = k.saturating_sub(CONTEXT);
        let hi = (k + CONTEXT + 1).min(ops.len());
        ops[lo..hi].iter().any(|(c, _)| *c != ' ')
    };
    let mut out = String::new();
    let mut skipped = false;
    for (k, (c, line)) in ops.iter().enumerate() {
        if near_change(k) {
            if skipped {
                out.push_str("  ...\n");
                skipped = false;
            }
            let _ = writeln!(out, "{c} {line}");
        } else {
            skipped = true;
        }
    }
    if skipped {
        out.push_str("  ...\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::line_diff;

    #[test]
    fn a_changed_line_reads_embedded_then_kube_apiserver() {
        let diff = line_diff("a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(diff, "  a\n- b\n+ B\n  c\n");
    }

    #[test]
    fn far_unchanged_lines_are_elided() {
        let a: String = (0..20).map(|i| format!("{i}\n")).collect();
        let b = a.replace("10\n", "ten\n");
        let diff = line_diff(&a, &b);
        assert!(diff.starts_with("  ...\n  7\n"), "{diff}");
        assert!(diff.ends_with("  13\n  ...\n"), "{diff}");
    }
}
