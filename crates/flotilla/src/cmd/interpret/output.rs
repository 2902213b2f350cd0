//! `flotilla interpret`'s output: a YAML stream with one document per named result, each introduced by
//! `---` and `# [i/n] NAME:` (cli spec), as karmadactl prints it.

use std::fmt::Write;

use flotilla_api::config::v1alpha1::InterpreterOperation as Op;
use flotilla_interpreter::{Explanation, Response};
use serde_json::Value;

/// The named results of a response, in karmadactl's order and with its names.
pub fn named_results(response: Response) -> anyhow::Result<Vec<(&'static str, Value)>> {
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
        Response::Status(status) => vec![("status", status.unwrap_or(Value::Null))],
        Response::Healthy(healthy) => vec![("healthy", Value::Bool(healthy))],
        Response::Dependencies(refs) => vec![("dependencies", serde_json::to_value(refs)?)],
        Response::Object(object) => vec![("object", object)],
    })
}

/// The name of an object result per operation.
pub fn object_name(operation: Op) -> &'static str {
    match operation {
        Op::Retain => "retained",
        Op::ReviseReplica => "revised",
        Op::AggregateStatus => "aggregatedStatus",
        _ => "object",
    }
}

/// Renders results as the YAML stream.
pub fn render(results: &[(&str, Value)]) -> anyhow::Result<String> {
    let mut out = String::new();
    let n = results.len();
    for (i, (name, value)) in results.iter().enumerate() {
        writeln!(out, "---")?;
        writeln!(out, "# [{}/{n}] {name}:", i + 1)?;
        // serde_json's maps are sorted, so keys come out sorted as karmadactl prints them.
        out.push_str(&serde_yaml::to_string(value)?);
    }
    Ok(out)
}

/// `--explain`: the explanation as YAML comment lines, so the output stays a valid YAML stream.
pub fn explain(explanation: &Explanation) -> String {
    explanation
        .to_string()
        .lines()
        .map(|line| format!("# {line}\n"))
        .collect()
}
