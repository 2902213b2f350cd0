//! The differential test against Karmada's own answers (issue 16): every case under `karmada_interpret/cases` runs
//! through `flotilla interpret`, and its parsed results must equal what Karmada answered for the same files, as
//! recorded beside the case (`NAME.answer.yaml`), unless `karmada_interpret/allowlist.txt` lists the case with a
//! reason. A case without a recorded answer fails, and so does an allowlist entry whose case now agrees.
//! `karmada_interpret/README.md` says how the corpus is laid out and how to record answers again (the ignored test
//! `record_karmada_answers` below does the recording, given Karmada's tools built by hand).
#![allow(clippy::panic, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};
use serde_json::Value;

const BIN: &str = env!("CARGO_BIN_EXE_flotilla");
/// The Karmada release whose answers are recorded.
const KARMADA_VERSION: &str = "v1.18.2";
const KARMADA_COMMIT: &str = "0533b555e040596f4fff9b6a344efbaeed71d0cc";
/// Runs per case when recording: Karmada fills Lua tables from Go maps, whose order is random.
const RECORD_RUNS: usize = 10;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/karmada_interpret")
}

/// One case: the inputs of one `interpret` run (see the README for each field).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    description: String,
    operation: String,
    /// A Lua script, wrapped into a customization for `operation` targeting the object's kind.
    #[serde(default)]
    script: Option<String>,
    /// A whole customization document (or several), used as it is.
    #[serde(default)]
    customization: Option<String>,
    /// `thirdparty` or `native`: no customization; Flotilla's bundled layers answer.
    #[serde(default)]
    layer: Option<String>,
    /// The customization's target when the object cannot give it.
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    desired: Option<String>,
    #[serde(default)]
    observed: Option<String>,
    /// The status file's text; absent means no `--status-file`.
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    desired_replica: Option<i64>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Target {
    api_version: String,
    kind: String,
}

/// What Karmada answered, over several runs.
#[derive(Debug, Deserialize, Serialize)]
struct Recorded {
    karmada: String,
    commit: String,
    tool: String,
    runs: usize,
    /// Each distinct answer seen.
    answers: Vec<Run>,
}

/// One run's raw output.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
struct Run {
    exit: i32,
    stdout: String,
    stderr: String,
}

/// The result a run stands for, the thing compared.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// The named results, in order.
    Results(Vec<(String, Value)>),
    /// The input files were refused before anything ran.
    Refused(String),
    /// No rule for the operation.
    NotEnabled,
    /// The operation failed.
    Failed(String),
}

/// Every case, by its path under `cases/` without `.yaml`.
fn cases() -> BTreeMap<String, PathBuf> {
    fn walk(dir: &Path, base: &Path, out: &mut BTreeMap<String, PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, base, out);
                continue;
            }
            let name = path
                .strip_prefix(base)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if let Some(name) = name.strip_suffix(".yaml")
                && !name.ends_with(".answer")
            {
                out.insert(name.to_owned(), path);
            }
        }
    }
    let base = corpus().join("cases");
    let mut out = BTreeMap::new();
    walk(&base, &base, &mut out);
    out
}

fn load(path: &Path) -> Case {
    let text = std::fs::read_to_string(path).unwrap();
    flotilla_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The customization field that holds the script of each operation.
fn customization_field(operation: &str) -> &'static str {
    match operation.to_ascii_lowercase().as_str() {
        "retain" => "retention",
        "interpretreplica" => "replicaResource",
        "interpretcomponent" => "componentResource",
        "revisereplica" => "replicaRevision",
        "interpretstatus" => "statusReflection",
        "aggregatestatus" => "statusAggregation",
        "interprethealth" => "healthInterpretation",
        "interpretdependency" => "dependencyInterpretation",
        other => panic!("unknown operation {other}"),
    }
}

/// The apiVersion and kind of an object file's text.
fn target_of(text: &str) -> Option<(String, String)> {
    let object: Value = flotilla_yaml::from_str(text).ok()?;
    Some((
        object["apiVersion"].as_str()?.to_owned(),
        object["kind"].as_str()?.to_owned(),
    ))
}

/// Writes the case's files into `dir`; returns the arguments both tools take, without any `-f`, and the
/// customization file if the case has one.
fn materialize(case: &Case, dir: &Path) -> (Vec<String>, Option<PathBuf>) {
    let mut args = vec!["--operation".to_owned(), case.operation.clone()];
    let mut object_text = None;
    for (flag, name, text) in [
        ("--desired-file", "desired.yaml", &case.desired),
        ("--observed-file", "observed.yaml", &case.observed),
        ("--status-file", "status.yaml", &case.status),
    ] {
        if let Some(text) = text {
            let path = dir.join(name);
            std::fs::write(&path, text).unwrap();
            args.extend([flag.to_owned(), path.display().to_string()]);
            if flag != "--status-file" && object_text.is_none() {
                object_text = Some(text.as_str());
            }
        }
    }
    if let Some(n) = case.desired_replica {
        args.extend(["--desired-replica".to_owned(), n.to_string()]);
    }
    let customization = match (&case.script, &case.customization) {
        (Some(script), None) => {
            let (api_version, kind) = match &case.target {
                Some(t) => (t.api_version.clone(), t.kind.clone()),
                None => object_text.and_then(target_of).expect(
                    "a case with a script needs an object with apiVersion and kind, or a target",
                ),
            };
            let mut script_block = String::new();
            for line in script.lines() {
                writeln!(script_block, "        {line}").unwrap();
            }
            Some(format!(
                "apiVersion: config.karmada.io/v1alpha1\nkind: ResourceInterpreterCustomization\nmetadata:\n  \
                 name: case\nspec:\n  target:\n    apiVersion: {api_version}\n    kind: {kind}\n  customizations:\n    \
                 {}:\n      luaScript: |\n{script_block}",
                customization_field(&case.operation)
            ))
        }
        (None, Some(text)) => Some(text.clone()),
        (None, None) => None,
        (Some(_), Some(_)) => panic!("a case has a script or a customization, not both"),
    };
    let file = customization.map(|text| {
        let path = dir.join("customization.yaml");
        std::fs::write(&path, text).unwrap();
        path
    });
    (args, file)
}

/// Runs `program` with `args`.
fn execute(program: &Path, args: &[String]) -> Run {
    let out = Command::new(program)
        .args(args)
        .env("RUST_LOG", "off")
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    Run {
        exit: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The named YAML documents of an `interpret` output stream (`---`, `# [i/n] NAME:`, the document).
fn documents(stdout: &str) -> Result<Vec<(String, Value)>, String> {
    let mut docs: Vec<(String, String)> = Vec::new();
    let lines: Vec<&str> = stdout.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let header = lines
            .get(i + 1)
            .and_then(|l| l.strip_prefix("# ["))
            .and_then(|l| l.split_once("] "))
            .and_then(|(_, name)| name.strip_suffix(':'));
        match (lines[i], header) {
            ("---", Some(name)) => {
                docs.push((name.to_owned(), String::new()));
                i += 2;
            }
            (line, _) => {
                let Some((_, text)) = docs.last_mut() else {
                    return Err(format!("output before the first document: {line:?}"));
                };
                text.push_str(line);
                text.push('\n');
                i += 1;
            }
        }
    }
    docs.into_iter()
        .map(|(name, text)| {
            flotilla_yaml::from_str::<Value>(&text)
                .map(|value| (name.clone(), value))
                .map_err(|e| format!("document {name}: {e}"))
        })
        .collect()
}

/// Karmada's answer: results on stdout; `Execute OP error: ...` (exit 0) when the operation failed; `error: ...`
/// (exit 1) when the inputs were refused.
fn karmada_outcome(run: &Run) -> Outcome {
    let results = documents(&run.stdout).unwrap_or_else(|e| panic!("Karmada's answer: {e}"));
    if !results.is_empty() {
        return Outcome::Results(results);
    }
    let stderr = run.stderr.trim();
    // A failed operation is reported on the line that starts with `Execute` (klog's lines may come before it).
    let execute = stderr
        .find("Execute ")
        .filter(|at| *at == 0 || stderr[..*at].ends_with('\n'));
    if let Some((_, message)) =
        execute.and_then(|at| stderr[at + "Execute ".len()..].split_once(" error: "))
    {
        if message == "rule is not enabled" {
            return Outcome::NotEnabled;
        }
        return Outcome::Failed(message.to_owned());
    }
    Outcome::Refused(stderr.trim_start_matches("error: ").to_owned())
}

/// Flotilla's answer: results (exit 0), or one `error:` line naming what failed.
fn flotilla_outcome(run: &Run) -> Outcome {
    if run.exit == 0 {
        return Outcome::Results(documents(&run.stdout).unwrap_or_else(|e| panic!("{e}")));
    }
    let stderr = run.stderr.trim();
    let message = stderr.trim_start_matches("error: ");
    if message.starts_with("rule is not enabled") {
        Outcome::NotEnabled
    } else if let Some(rest) = message.strip_prefix("failed to execute ") {
        Outcome::Failed(rest.split_once(": ").map_or(rest, |(_, m)| m).to_owned())
    } else {
        Outcome::Refused(message.to_owned())
    }
}

/// Whether two outcomes agree: the same kind, and for results the same names and values. Messages are not
/// compared (the engines word them differently). karmadactl prints results through Go's `float64`, so numbers
/// compare as doubles, and a Go nil list (`null`) equals an empty one.
fn agree(karmada: &Outcome, flotilla: &Outcome) -> bool {
    match (karmada, flotilla) {
        (Outcome::Results(a), Outcome::Results(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b)
                    .all(|((na, va), (nb, vb))| na == nb && same(va, vb, true))
        }
        (Outcome::Refused(_), Outcome::Refused(_))
        | (Outcome::NotEnabled, Outcome::NotEnabled)
        | (Outcome::Failed(_), Outcome::Failed(_)) => true,
        _ => false,
    }
}

/// Whether Karmada's answers differ only in the order of their dependency lists: the native layer builds them from
/// Go sets, in random order within a kind; then any order agrees.
fn unordered_dependencies(answers: &[Outcome]) -> bool {
    let sorted = |outcome: &Outcome| match outcome {
        Outcome::Results(results) => Some(
            results
                .iter()
                .map(|(name, value)| match (name.as_str(), value) {
                    ("dependencies", Value::Array(items)) => {
                        let mut items: Vec<String> = items.iter().map(Value::to_string).collect();
                        items.sort();
                        items.join(",")
                    }
                    _ => value.to_string(),
                })
                .collect::<Vec<_>>(),
        ),
        _ => None,
    };
    answers.len() > 1
        && answers
            .iter()
            .all(|a| sorted(a).is_some() && sorted(a) == sorted(&answers[0]))
}

/// `outcome` with its dependency list sorted.
fn sort_dependencies(outcome: &Outcome) -> Outcome {
    let mut outcome = outcome.clone();
    if let Outcome::Results(results) = &mut outcome {
        for (name, value) in results {
            if let (true, Value::Array(items)) = (name == "dependencies", value) {
                items.sort_by_key(Value::to_string);
            }
        }
    }
    outcome
}

/// The paths at which two values differ, for a readable failure.
fn differences(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => differences(p, q, &format!("{path}.{k}"), out),
                    (p, q) => out.push(format!(
                        "{path}.{k}: Karmada {}, Flotilla {}",
                        p.map_or("absent".to_owned(), Value::to_string),
                        q.map_or("absent".to_owned(), Value::to_string)
                    )),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                differences(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if same(a, b, false) => {}
        _ => out.push(format!("{path}: Karmada {a}, Flotilla {b}")),
    }
}

/// What differs between Karmada's first answer and ours, briefly.
fn explain(theirs: &Outcome, ours: &Outcome) -> String {
    match (theirs, ours) {
        (Outcome::Results(a), Outcome::Results(b)) if a.len() == b.len() => {
            let mut out = Vec::new();
            for ((name, p), (_, q)) in a.iter().zip(b) {
                differences(p, q, name, &mut out);
            }
            out.join("\n    ")
        }
        _ => format!("Karmada {theirs:?}\n    Flotilla {ours:?}"),
    }
}

fn same(a: &Value, b: &Value, top: bool) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q, false))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| same(p, q, false)))
        }
        (Value::Null, Value::Array(y)) | (Value::Array(y), Value::Null) if top => y.is_empty(),
        _ => a == b,
    }
}

/// `case: reason` lines; `#` starts a comment.
fn allowlist() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(corpus().join("allowlist.txt")).unwrap();
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (case, reason) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("allowlist.txt:{}: expected `case: reason`", n + 1));
        assert!(
            !reason.trim().is_empty(),
            "allowlist.txt:{}: no reason",
            n + 1
        );
        assert!(
            out.insert(case.to_owned(), reason.to_owned()).is_none(),
            "allowlist.txt:{}: {case} listed twice",
            n + 1
        );
    }
    out
}

fn answer_path(case: &Path) -> PathBuf {
    case.with_extension("answer.yaml")
}

/// Runs `flotilla interpret` on a case.
fn flotilla(case: &Case) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let (mut args, customization) = materialize(case, dir.path());
    if let Some(file) = customization {
        args.splice(0..0, ["-f".to_owned(), file.display().to_string()]);
    }
    args.insert(0, "interpret".to_owned());
    execute(Path::new(BIN), &args)
}

/// The cases whose name contains `KARMADA_CASES` (all when unset), and whether that is all of them.
fn selected() -> (BTreeMap<String, PathBuf>, bool) {
    let only = std::env::var("KARMADA_CASES").unwrap_or_default();
    let mut cases = cases();
    cases.retain(|name, _| name.contains(&only));
    (cases, only.is_empty())
}

#[test]
fn flotilla_answers_as_karmada_does() {
    let (cases, all) = selected();
    let mut allowed = allowlist();
    if all {
        assert!(cases.len() >= 100, "the corpus holds {} cases", cases.len());
    } else {
        allowed.retain(|name, _| cases.contains_key(name));
    }
    let mut failures = Vec::new();
    let mut operations = std::collections::BTreeSet::new();
    for (name, path) in &cases {
        let case = load(path);
        assert!(
            !case.description.trim().is_empty(),
            "{name}: no description"
        );
        operations.insert(case.operation.to_ascii_lowercase());
        let recorded: Recorded = match std::fs::read_to_string(answer_path(path)) {
            Ok(text) => flotilla_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}")),
            Err(_) => {
                failures.push(format!(
                    "{name}: no recorded answer (record it: see README.md)"
                ));
                continue;
            }
        };
        assert_eq!(
            (recorded.karmada.as_str(), recorded.commit.as_str()),
            (KARMADA_VERSION, KARMADA_COMMIT),
            "{name}: recorded from another Karmada"
        );
        let ours = flotilla(&case);
        let mut theirs: Vec<Outcome> = recorded.answers.iter().map(karmada_outcome).collect();
        theirs.dedup();
        let mut outcome = flotilla_outcome(&ours);
        if unordered_dependencies(&theirs) {
            theirs = vec![sort_dependencies(&theirs[0])];
            outcome = sort_dependencies(&outcome);
        }
        let agrees = theirs.iter().any(|t| agree(t, &outcome));
        match (agrees, allowed.remove(name)) {
            (true, None) | (false, Some(_)) => {}
            (true, Some(reason)) => failures.push(format!(
                "{name}: agrees with Karmada now; remove it from allowlist.txt ({reason})"
            )),
            (false, None) => failures.push(format!(
                "{name}: {} ({} Karmada answers)\n    {}\n    (Flotilla's stderr: {})",
                case.description,
                theirs.len(),
                explain(&theirs[0], &outcome),
                ours.stderr.trim()
            )),
        }
    }
    for (name, _) in allowed {
        failures.push(format!("allowlist.txt names {name}, which is not a case"));
    }
    for op in [
        "retain",
        "interpretreplica",
        "interpretcomponent",
        "revisereplica",
        "interpretstatus",
        "aggregatestatus",
        "interprethealth",
        "interpretdependency",
    ] {
        assert!(!all || operations.contains(op), "no case runs {op}");
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// Whether `line` is a klog line (`E1125 03:24:04.516549    6386 lua.go:170] ...`): diagnostics, not the answer.
fn is_klog(line: &str) -> bool {
    let bytes = line.as_bytes();
    bytes.len() > 6
        && b"IWEF".contains(&bytes[0])
        && bytes[1..5].iter().all(u8::is_ascii_digit)
        && bytes[5] == b' '
        && line.contains("] ")
}

/// Records Karmada's answers for every case (or those whose name contains `KARMADA_CASES`), as the README says.
/// `KARMADACTL` is karmadactl built by hand at the pinned release; `KARMADA_NATIVE` the program that runs its
/// native interpreter; `KARMADA_SOURCE` the release's source tree, for the bundled third-party customizations.
#[test]
#[ignore = "records Karmada's answers: needs Karmada's tools built by hand (see karmada_interpret/README.md)"]
fn record_karmada_answers() {
    let var = |name: &str| {
        PathBuf::from(std::env::var(name).unwrap_or_else(|_| panic!("set {name} (see README.md)")))
    };
    let (karmadactl, native, source) = (
        var("KARMADACTL"),
        var("KARMADA_NATIVE"),
        var("KARMADA_SOURCE"),
    );
    for (name, path) in selected().0 {
        let case = load(&path);
        let dir = tempfile::tempdir().unwrap();
        let (mut args, customization) = materialize(&case, dir.path());
        let (program, tool) = match (customization, case.layer.as_deref()) {
            (Some(file), None) => {
                args.splice(0..0, ["-f".to_owned(), file.display().to_string()]);
                (karmadactl.clone(), "karmadactl interpret")
            }
            (None, Some("thirdparty")) => {
                let text = case
                    .desired
                    .as_deref()
                    .or(case.observed.as_deref())
                    .unwrap();
                let (api_version, kind) = target_of(text).unwrap();
                let file = source
                    .join("pkg/resourceinterpreter/default/thirdparty/resourcecustomizations")
                    .join(api_version)
                    .join(kind)
                    .join("customizations.yaml");
                args.splice(0..0, ["-f".to_owned(), file.display().to_string()]);
                (
                    karmadactl.clone(),
                    "karmadactl interpret with Karmada's bundled customization",
                )
            }
            (None, Some("native")) => (native.clone(), "Karmada's native interpreter"),
            other => panic!("{name}: cannot record {other:?}"),
        };
        if program == karmadactl {
            args.insert(0, "interpret".to_owned());
        }
        let mut answers: Vec<Run> = Vec::new();
        for _ in 0..RECORD_RUNS {
            let mut run = execute(&program, &args);
            // Temporary paths differ between runs and machines, and klog's lines carry times and process ids.
            for text in [&mut run.stdout, &mut run.stderr] {
                *text = text.replace(&dir.path().display().to_string(), "CASE");
            }
            run.stderr = run
                .stderr
                .lines()
                .filter(|line| !is_klog(line))
                .map(|line| format!("{line}\n"))
                .collect();
            if !answers.contains(&run) {
                answers.push(run);
            }
        }
        let recorded = Recorded {
            karmada: KARMADA_VERSION.to_owned(),
            commit: KARMADA_COMMIT.to_owned(),
            tool: tool.to_owned(),
            runs: RECORD_RUNS,
            answers,
        };
        let text = format!(
            "# Karmada's answer for {name}.yaml; recorded by `record_karmada_answers` (README.md).\n{}",
            flotilla_yaml::to_string(&recorded).unwrap()
        );
        std::fs::write(answer_path(&path), text).unwrap();
    }
}
