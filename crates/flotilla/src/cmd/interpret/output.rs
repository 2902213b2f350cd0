//! `flotilla interpret`'s output: a YAML stream with one document per named result, each introduced by
//! `---` and `# [i/n] NAME:`, as karmadactl prints it.

use std::fmt::Write;

use flotilla_interpreter::Explanation;
use serde_json::Value;

/// Renders results as the YAML stream.
pub(super) fn render(results: &[(&str, Value)]) -> anyhow::Result<String> {
    let mut out = String::new();
    let n = results.len();
    for (i, (name, value)) in results.iter().enumerate() {
        writeln!(out, "---")?;
        writeln!(out, "# [{}/{n}] {name}:", i + 1)?;
        // serde_json's maps are sorted, so keys come out sorted as karmadactl prints them.
        out.push_str(&flotilla_yaml::to_string(value)?);
    }
    Ok(out)
}

/// `--explain`: the explanation as YAML comment lines, so the output stays a valid YAML stream.
pub(super) fn explain(explanation: &Explanation) -> String {
    explanation
        .to_string()
        .lines()
        .map(|line| format!("# {line}\n"))
        .collect()
}
