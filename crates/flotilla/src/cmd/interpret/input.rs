//! Reading `flotilla interpret`'s inputs: files, directories or `-` (stdin), each holding YAML or JSON, one or
//! many documents.

use std::io::Read;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use flotilla_api::work::v1alpha2::AggregatedStatusItem;
use serde_json::Value;

/// One document and where it came from.
#[derive(Debug, Clone)]
pub(super) struct Document {
    /// The file it was read from (`-` for stdin).
    pub source: String,
    /// The document.
    pub value: Value,
}

/// Every document of every source; directories contribute their `.yaml`, `.yml` and `.json` files (sorted,
/// and their subdirectories too with `recursive`).
pub(super) fn documents(sources: &[String], recursive: bool) -> anyhow::Result<Vec<Document>> {
    let mut out = Vec::new();
    for source in sources {
        for file in files(source, recursive)? {
            let text = read(&file)?;
            for value in parse_stream(&text).with_context(|| format!("failed to parse {file}"))? {
                out.push(Document {
                    source: file.clone(),
                    value,
                });
            }
        }
    }
    Ok(out)
}

/// The ResourceInterpreterCustomizations of `-f`; any other document is an error naming it.
pub(super) fn customizations(
    sources: &[String],
    recursive: bool,
) -> anyhow::Result<Vec<flotilla_api::config::v1alpha1::ResourceInterpreterCustomization>> {
    documents(sources, recursive)?
        .into_iter()
        .map(|document| {
            let kind = document
                .value
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if kind != "ResourceInterpreterCustomization" {
                bail!(
                    "{}: not a ResourceInterpreterCustomization, got kind {kind:?}",
                    document.source
                );
            }
            serde_json::from_value(document.value).with_context(|| {
                format!(
                    "{}: invalid ResourceInterpreterCustomization",
                    document.source
                )
            })
        })
        .collect()
}

/// The single object of an object file (`--desired-file`, `--observed-file`), refused where karmadactl refuses it
/// (metadata that does not decode as Kubernetes' `ObjectMeta`).
pub(super) fn single_object(source: &str) -> anyhow::Result<Value> {
    let documents = documents(&[source.to_owned()], false)?;
    let object = match documents.len() {
        1 => documents
            .into_iter()
            .map(|d| d.value)
            .next()
            .unwrap_or_default(),
        0 => bail!("no object found in {source}"),
        n => bail!("get {n} objects, expect one at most"),
    };
    flotilla_interpreter::decode::object(&object).with_context(|| source.to_owned())?;
    Ok(object)
}

/// The AggregatedStatusItems of a status file (`--status-file`), decoded as karmadactl decodes them.
pub(super) fn status_items(source: &str) -> anyhow::Result<Vec<AggregatedStatusItem>> {
    documents(&[source.to_owned()], false)?
        .into_iter()
        .enumerate()
        .map(|(i, document)| {
            flotilla_interpreter::decode::status_item(&document.value)
                .with_context(|| format!("document {} of {source}", i + 1))
        })
        .collect()
}

/// Parses a YAML (or JSON, which is YAML) stream, skipping empty documents.
pub(super) fn parse_stream(text: &str) -> anyhow::Result<Vec<Value>> {
    Ok(flotilla_yaml::from_str_multiple(text)?)
}

fn files(source: &str, recursive: bool) -> anyhow::Result<Vec<String>> {
    if source == "-" {
        return Ok(vec![source.to_owned()]);
    }
    let path = Path::new(source);
    if !path.is_dir() {
        return Ok(vec![source.to_owned()]);
    }
    let mut found = Vec::new();
    walk(path, recursive, &mut found)?;
    found.sort();
    Ok(found.into_iter().map(|p| p.display().to_string()).collect())
}

fn walk(dir: &Path, recursive: bool, found: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("failed to read directory {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("failed to read directory {}", dir.display()))?
            .path();
        if path.is_dir() {
            if recursive {
                walk(&path, recursive, found)?;
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
        {
            found.push(path);
        }
    }
    Ok(())
}

fn read(file: &str) -> anyhow::Result<String> {
    if file == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("failed to read stdin")?;
        return Ok(text);
    }
    std::fs::read_to_string(file).with_context(|| format!("failed to read {file}"))
}
