//! What a data dir remembers of how `flotilla up` was started, so that a plain restart brings back what the
//! objects stored there rely on: the example webhook, whose registration every Workload operation consults.
//! Kept in `DIR/up-options.json`; a flag given on the command line wins and is remembered in turn.

use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};

/// The file, inside the data dir.
const FILE: &str = "up-options.json";

/// The remembered options.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remembered {
    /// Serve the example Workload interpreter webhook and register it.
    pub webhook_example: bool,
}

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// What `dir` remembers, or `None` for a data dir never started (or started before options were remembered).
///
/// # Errors
/// When the file exists but cannot be read or parsed (naming it).
pub fn load(dir: &Path) -> anyhow::Result<Option<Remembered>> {
    let file = path(dir);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", file.display())),
    };
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{} is not valid (expected e.g. {{\"webhookExample\": true}}); fix or delete it",
            file.display()
        )
    })
}

/// Remembers `options` in `dir` (which must exist).
///
/// # Errors
/// When the file cannot be written.
pub fn save(dir: &Path, options: &Remembered) -> anyhow::Result<()> {
    let file = path(dir);
    let text = serde_json::to_string_pretty(options).context("failed to encode the options")?;
    std::fs::write(&file, text + "\n").with_context(|| format!("failed to write {}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_option_loads_back_and_a_fresh_dir_remembers_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        assert_eq!(load(dir.path()).expect("no file is fine"), None);
        let options = Remembered {
            webhook_example: true,
        };
        save(dir.path(), &options).expect("saved");
        assert_eq!(load(dir.path()).expect("loads"), Some(options));
    }

    #[test]
    fn a_damaged_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(path(dir.path()), "{not json").expect("written");
        let error = format!("{:#}", load(dir.path()).expect_err("refused"));
        assert!(error.contains(FILE), "{error}");
    }
}
