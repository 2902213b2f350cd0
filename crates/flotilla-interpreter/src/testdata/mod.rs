//! The customization test runner: cases in Karmada's third-party testdata format, run
//! against the customizations beside them, as `flotilla interpret test DIR` does for any user's directory.
//!
//! A directory is either one kind's (a `customizations.yaml` and a `testdata/` directory next to it) or a tree of
//! them. Every file under `testdata/` is a YAML (or JSON) stream of cases, one per document.

mod compare;

use std::path::{Path, PathBuf};

use flotilla_api::config::v1alpha1::{InterpreterOperation, ResourceInterpreterCustomization};
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::{Map, Value};

use crate::lua::{Input, LuaVm, RuleSet, compile_error};
use crate::{LayerKind, Request, Response};

/// One case as written in a testdata file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Case {
    /// `name`.
    pub name: String,
    /// `operation`, as written.
    pub operation: String,
    /// `desiredObj`.
    pub desired: Option<Value>,
    /// `observedObj`.
    pub observed: Option<Value>,
    /// `statusItems`; `None` reaches the script as `nil`.
    pub status_items: Option<Vec<AggregatedStatusItem>>,
    /// `inputReplicas`.
    pub input_replicas: i64,
    /// `output`: expected results by name.
    pub output: Map<String, Value>,
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseResult {
    /// The file the case came from.
    pub file: PathBuf,
    /// The case's name.
    pub name: String,
    /// `Ok` when the case passed, otherwise why it failed.
    pub outcome: Result<(), String>,
}

/// Every case run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// One result per case, in file and document order.
    pub results: Vec<CaseResult>,
}

impl Report {
    /// The failed cases.
    pub fn failures(&self) -> impl Iterator<Item = &CaseResult> {
        self.results.iter().filter(|r| r.outcome.is_err())
    }

    /// Whether every case passed (and there was at least one).
    pub fn passed(&self) -> bool {
        !self.results.is_empty() && self.failures().next().is_none()
    }
}

impl std::fmt::Display for Report {
    /// One line per case (`PASS file: name` or `FAIL file: name: reason`), then a summary line.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for result in &self.results {
            match &result.outcome {
                Ok(()) => writeln!(f, "PASS {}: {}", result.file.display(), result.name)?,
                Err(reason) => writeln!(
                    f,
                    "FAIL {}: {}: {reason}",
                    result.file.display(),
                    result.name
                )?,
            }
        }
        let failed = self.failures().count();
        write!(f, "{} passed, {failed} failed", self.results.len() - failed)
    }
}

/// Why a directory could not be tested at all.
#[derive(Debug, thiserror::Error)]
pub enum TestdataError {
    /// A file or directory could not be read.
    #[error("failed to read {path}")]
    Read {
        /// The path.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A `customizations.yaml` does not decode.
    #[error("failed to decode customizations in {path}: {reason}")]
    Customizations {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// No `customizations.yaml` with a `testdata/` directory beside it was found.
    #[error("no customizations.yaml with a testdata directory under {0}")]
    Empty(PathBuf),
}

/// Runs every case under `dir` (one kind's directory or a tree of them).
///
/// # Errors
/// [`TestdataError`] when nothing can be run; failing cases are reported in the [`Report`], not as errors.
pub fn run_dir(dir: &Path, vm: &LuaVm) -> Result<Report, TestdataError> {
    let mut report = Report::default();
    let mut found = false;
    for file in files(dir)? {
        if file.file_name().is_some_and(|n| n == "customizations.yaml") {
            let testdata = file.with_file_name("testdata");
            if testdata.is_dir() {
                found = true;
                let customizations = read_customizations(&file)?;
                report
                    .results
                    .extend(run_kind(vm, &customizations, &testdata)?.results);
            }
        }
    }
    if !found {
        return Err(TestdataError::Empty(dir.to_owned()));
    }
    Ok(report)
}

/// Runs the cases of every file under `testdata` against `customizations`.
///
/// # Errors
/// [`TestdataError::Read`] when a file cannot be read; a file that does not parse fails its cases instead.
pub fn run_kind(
    vm: &LuaVm,
    customizations: &[ResourceInterpreterCustomization],
    testdata: &Path,
) -> Result<Report, TestdataError> {
    let rules = RuleSet::build(vm, customizations);
    let mut report = Report::default();
    for file in files(testdata)? {
        let text = std::fs::read_to_string(&file).map_err(|source| TestdataError::Read {
            path: file.clone(),
            source,
        })?;
        match parse_cases(&text) {
            Ok(cases) => {
                for case in cases {
                    let outcome = run_case(vm, &rules, customizations, &case);
                    report.results.push(CaseResult {
                        file: file.clone(),
                        name: case.name,
                        outcome,
                    });
                }
            }
            Err(reason) => report.results.push(CaseResult {
                file: file.clone(),
                name: "(file)".to_owned(),
                outcome: Err(format!("cannot parse test cases: {reason}")),
            }),
        }
    }
    Ok(report)
}

/// Decodes every document of a `customizations.yaml`.
///
/// # Errors
/// [`TestdataError`] when the file cannot be read or a document is not a customization.
pub fn read_customizations(
    path: &Path,
) -> Result<Vec<ResourceInterpreterCustomization>, TestdataError> {
    let text = std::fs::read_to_string(path).map_err(|source| TestdataError::Read {
        path: path.to_owned(),
        source,
    })?;
    let fail = |reason: String| TestdataError::Customizations {
        path: path.to_owned(),
        reason,
    };
    flotilla_yaml::from_str_multiple(&text).map_err(|e| fail(crate::facade::error_text(&e)))
}

/// Every file under `dir`, recursively, in name order.
fn files(dir: &Path) -> Result<Vec<PathBuf>, TestdataError> {
    let read = |path: &Path| {
        std::fs::read_dir(path).map_err(|source| TestdataError::Read {
            path: path.to_owned(),
            source,
        })
    };
    let mut out = Vec::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(at) = pending.pop() {
        for entry in read(&at)? {
            let path = entry
                .map_err(|source| TestdataError::Read {
                    path: at.clone(),
                    source,
                })?
                .path();
            if path.is_dir() {
                pending.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Parses a stream of cases; keys are matched case-insensitively, as Go's decoder does.
///
/// # Errors
/// The YAML error, or a field of the wrong type.
pub fn parse_cases(text: &str) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    let documents: Vec<Value> =
        flotilla_yaml::from_str_multiple(text).map_err(|e| crate::facade::error_text(&e))?;
    for value in documents {
        let Value::Object(fields) = value else {
            if value.is_null() {
                continue;
            }
            return Err("a test case must be a mapping".to_owned());
        };
        let mut case = Case::default();
        for (key, value) in fields {
            match key.to_ascii_lowercase().as_str() {
                "name" => case.name = value.as_str().unwrap_or_default().to_owned(),
                "operation" => case.operation = value.as_str().unwrap_or_default().to_owned(),
                "desiredobj" => case.desired = Some(value).filter(|v| !v.is_null()),
                "observedobj" => case.observed = Some(value).filter(|v| !v.is_null()),
                "statusitems" if !value.is_null() => {
                    let items = compare::normalize_item_keys(value);
                    case.status_items = Some(
                        serde_json::from_value(items).map_err(|e| format!("statusItems: {e}"))?,
                    );
                }
                "inputreplicas" => case.input_replicas = value.as_i64().unwrap_or_default(),
                "output" => case.output = value.as_object().cloned().unwrap_or_default(),
                _ => {}
            }
        }
        cases.push(case);
    }
    Ok(cases)
}

/// Runs one case as `flotilla interpret` runs an operation, then compares what it produced with `output`.
fn run_case(
    vm: &LuaVm,
    rules: &RuleSet,
    customizations: &[ResourceInterpreterCustomization],
    case: &Case,
) -> Result<(), String> {
    let operation = InterpreterOperation::DISPATCHED
        .into_iter()
        .find(|op| op.as_str().eq_ignore_ascii_case(&case.operation))
        .ok_or_else(|| format!("unknown operation {:?}", case.operation))?;
    for ric in customizations {
        if let Some(message) = ric
            .spec
            .customizations
            .script(&operation)
            .and_then(compile_error)
        {
            return Err(format!(
                "InterpreterOperation({operation}) Lua script error: {message}"
            ));
        }
    }
    let input = input_of(&operation, case)?;
    let gvk = crate::layer::gvk_of(input.object()).map_err(|e| e.to_string())?;
    if let crate::Handles::No(_) = rules.handles(&gvk, &operation, LayerKind::Customization) {
        return Err("rule is not enabled".to_owned());
    }
    let response = rules
        .interpret_blocking(vm, LayerKind::Customization, input)
        .map_err(|e| crate::facade::error_text(&e))?;
    let produced =
        produced(&operation, response).map_err(|e| format!("cannot encode the result: {e}"))?;
    for (name, actual) in &produced {
        if let Some(expected) = case.output.get(*name) {
            compare::result(name, expected, actual).map_err(|diff| format!("{name}: {diff}"))?;
        }
    }
    for name in case.output.keys() {
        if !produced.iter().any(|(produced, _)| produced == name) {
            return Err(format!("output {name:?} was not produced by {operation}"));
        }
    }
    Ok(())
}

/// The script's arguments: Retain takes both objects, every other operation exactly one of them.
fn input_of(operation: &InterpreterOperation, case: &Case) -> Result<Input, String> {
    if *operation == InterpreterOperation::Retain {
        let desired = case
            .desired
            .clone()
            .ok_or("desired, desired-file options are not set")?;
        let observed = case
            .observed
            .clone()
            .ok_or("observed, observed-file options are not set")?;
        return Ok(Request::Retain { desired, observed }.into());
    }
    let object = match (&case.desired, &case.observed) {
        (Some(_), Some(_)) => {
            return Err(
                "you can not specify both desired-file and observed-file options".to_owned(),
            );
        }
        (None, None) => return Err("desired-file, observed-file options are not set".to_owned()),
        (Some(object), None) | (None, Some(object)) => object.clone(),
    };
    if *operation == InterpreterOperation::AggregateStatus {
        return Ok(Input::aggregate_status(object, case.status_items.clone()));
    }
    Ok(match operation {
        InterpreterOperation::InterpretReplica => Request::InterpretReplica { object },
        InterpreterOperation::InterpretComponent => Request::InterpretComponent { object },
        InterpreterOperation::ReviseReplica => Request::ReviseReplica {
            object,
            replicas: case.input_replicas,
        },
        InterpreterOperation::InterpretStatus => Request::InterpretStatus { object },
        InterpreterOperation::InterpretHealth => Request::InterpretHealth { object },
        _ => Request::InterpretDependency { object },
    }
    .into())
}

/// The named results of an operation, as `flotilla interpret` prints them (karmadactl's names).
///
/// # Errors
/// A result that cannot be encoded as JSON (not expected of well-formed results).
pub fn produced(
    operation: &InterpreterOperation,
    response: Response,
) -> Result<Vec<(&'static str, Value)>, serde_json::Error> {
    Ok(match response {
        Response::Replicas {
            replicas,
            requirements,
        } => {
            vec![
                ("replica", Value::from(replicas)),
                ("requires", serde_json::to_value(requirements)?),
            ]
        }
        Response::Components(components) => vec![("components", serde_json::to_value(components)?)],
        Response::Object(object) => {
            let name = match operation {
                InterpreterOperation::Retain => "retained",
                InterpreterOperation::ReviseReplica => "revised",
                _ => "aggregatedStatus",
            };
            vec![(name, object)]
        }
        Response::Status(status) => vec![("status", status.unwrap_or(Value::Null))],
        Response::Healthy(healthy) => vec![("healthy", Value::Bool(healthy))],
        Response::Dependencies(refs) => vec![("dependencies", serde_json::to_value(refs)?)],
    })
}

#[cfg(test)]
mod tests;
