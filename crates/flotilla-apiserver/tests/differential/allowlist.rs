//! The allowlist: differences the suite knows about, each with a reason. A difference fails the test unless an
//! entry covers it; an entry (or one of its pointers) that covers no difference fails it too, so fixing a bug
//! in the server is finished by deleting its line.

use std::collections::BTreeSet;
use std::path::Path;

use serde::Deserialize;

use super::compare::covers;

/// One known difference.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// The case's name, or `*` for a defect that shows in many cases.
    pub case: String,
    /// The step's name (`setup-<i>` for a setup step), or `*` for every step.
    pub step: String,
    /// JSON pointers into the compared documents (`/status`, `/body/metadata/managedFields`; `*` matches one
    /// token); every difference at or under one of them is covered. Absent: the whole step.
    #[serde(default)]
    pub pointers: Option<Vec<String>>,
    /// Why the servers differ: `bug: <what the real server does>` for a defect of the embedded server, or why
    /// the embedded server deliberately leaves this out.
    pub reason: String,
}

/// Loads the allowlist and checks that every entry has a reason.
pub(crate) fn load(path: &Path) -> Result<Vec<Entry>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let entries: Option<Vec<Entry>> =
        flotilla_yaml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let entries = entries.unwrap_or_default();
    for e in &entries {
        if e.reason.trim().is_empty() {
            return Err(format!(
                "{}: the entry for {}/{} has no reason",
                path.display(),
                e.case,
                e.step
            ));
        }
    }
    Ok(entries)
}

/// Tracks which entries and pointers covered something during a run.
pub(crate) struct Matcher<'a> {
    entries: &'a [Entry],
    /// (entry index, pointer index or None for a whole-step entry) that covered a difference.
    used: BTreeSet<(usize, Option<usize>)>,
}

impl<'a> Matcher<'a> {
    /// A matcher over `entries`.
    pub(crate) fn new(entries: &'a [Entry]) -> Self {
        Self {
            entries,
            used: BTreeSet::new(),
        }
    }

    /// The reason of the first entry covering a difference at `pointer` in `case`/`step`, if any. Every
    /// covering entry counts as used, so a specific entry and a wildcard one can both stay.
    pub(crate) fn allow(&mut self, case: &str, step: &str, pointer: &str) -> Option<&'a str> {
        let mut reason = None;
        for (i, e) in self.entries.iter().enumerate() {
            if (e.case != "*" && e.case != case) || (e.step != "*" && e.step != step) {
                continue;
            }
            let used = match &e.pointers {
                None => Some((i, None)),
                Some(pointers) => pointers
                    .iter()
                    .position(|p| covers(p, pointer))
                    .map(|j| (i, Some(j))),
            };
            if let Some(used) = used {
                self.used.insert(used);
                reason.get_or_insert(e.reason.as_str());
            }
        }
        reason
    }

    /// Entries, or pointers of entries, that covered nothing, among those whose case ran (wildcard entries
    /// only when the whole corpus ran).
    pub(crate) fn stale(&self, ran: &BTreeSet<String>, whole_corpus: bool) -> Vec<String> {
        let mut out = Vec::new();
        for (i, e) in self.entries.iter().enumerate() {
            let judged = if e.case == "*" {
                whole_corpus
            } else {
                ran.contains(&e.case)
            };
            if !judged {
                continue;
            }
            match &e.pointers {
                None if !self.used.contains(&(i, None)) => {
                    out.push(format!("{}/{} (whole step): {}", e.case, e.step, e.reason));
                }
                None => {}
                Some(pointers) => {
                    for (j, p) in pointers.iter().enumerate() {
                        if !self.used.contains(&(i, Some(j))) {
                            out.push(format!("{}/{} {p}: {}", e.case, e.step, e.reason));
                        }
                    }
                }
            }
        }
        out
    }
}

/// An allowlist covering every difference of a run, for a person to edit into the real one: existing reasons
/// are kept, new differences get `TODO`. Written when `FLOTILLA_DIFF_SKELETON` names a file.
pub(crate) fn skeleton(outcomes: &[super::report::Outcome], entries: &[Entry]) -> String {
    let mut matcher = Matcher::new(entries);
    let mut out = String::new();
    for o in outcomes.iter().filter(|o| !o.differences.is_empty()) {
        let mut pointers: Vec<&str> = Vec::new();
        let mut reasons: Vec<&str> = Vec::new();
        for d in &o.differences {
            if !pointers.contains(&d.pointer.as_str()) {
                pointers.push(&d.pointer);
            }
            let reason = matcher
                .allow(&o.case, &o.step, &d.pointer)
                .unwrap_or("TODO");
            if !reasons.contains(&reason) {
                reasons.push(reason);
            }
        }
        out.push_str(&format!("- case: {}\n  step: {}\n", o.case, o.step));
        if !pointers.contains(&"") {
            out.push_str("  pointers:\n");
            for p in pointers {
                out.push_str(&format!("  - {}\n", serde_json::Value::from(p)));
            }
        }
        out.push_str(&format!(
            "  reason: {}\n",
            serde_json::Value::from(reasons.join(" / "))
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::{Entry, Matcher};

    fn entry(case: &str, step: &str, pointers: Option<&[&str]>) -> Entry {
        Entry {
            case: case.into(),
            step: step.into(),
            pointers: pointers.map(|p| p.iter().map(|s| s.to_string()).collect()),
            reason: "bug: test".into(),
        }
    }

    #[test]
    fn entries_cover_their_pointers_and_report_the_unused_ones() {
        let entries = [
            entry("c", "s", Some(&["/body/message", "/body/details"])),
            entry("c", "t", None),
            entry("*", "*", Some(&["/**/managedFields"])),
        ];
        let mut m = Matcher::new(&entries);
        assert!(m.allow("c", "s", "/body/message").is_some());
        assert!(m.allow("c", "s", "/body/code").is_none());
        assert!(
            m.allow("other", "x", "/events/0/object/metadata/managedFields/1")
                .is_some()
        );
        let ran = BTreeSet::from(["c".to_string()]);
        let stale = m.stale(&ran, true);
        assert_eq!(stale.len(), 2, "{stale:?}");
        assert!(stale[0].contains("/body/details") && stale[1].contains("c/t"));
        // A filtered run judges only the entries of the cases it ran.
        assert_eq!(
            Matcher::new(&entries).stale(&BTreeSet::new(), false).len(),
            0
        );
    }
}
