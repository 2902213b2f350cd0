//! The test layout's own check. Suites are built as one binary each (`autotests = false`, a `tests/main.rs`
//! declaring every file as a module) so that the test command's build fits CI's disk; the price is that Cargo
//! no longer finds a new test file by itself. [`assert_every_test_file_is_built`] fails instead of letting a
//! new file sit unbuilt and unrun.

use std::path::Path;

/// Fails unless every `tests/*.rs` and `tests/*/main.rs` of the crate at `manifest_dir` is built: declared as
/// `mod NAME;` in `tests/main.rs`, or the `path` of a `[[test]]` in the crate's Cargo.toml.
pub fn assert_every_test_file_is_built(manifest_dir: &str) {
    let root = Path::new(manifest_dir);
    let tests = root.join("tests");
    let read = |path: &Path| {
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let main = std::fs::read_to_string(tests.join("main.rs")).unwrap_or_default();
    let manifest = read(&root.join("Cargo.toml"));
    let entries = std::fs::read_dir(&tests).unwrap_or_else(|e| panic!("{}: {e}", tests.display()));
    let mut unbuilt = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
            continue;
        };
        let (module, target) = if path.is_dir() {
            if !path.join("main.rs").is_file() {
                continue; // a module directory (support/, common/) or fixtures
            }
            (name.clone(), format!("tests/{name}/main.rs"))
        } else if let Some(stem) = name.strip_suffix(".rs") {
            if stem == "main" {
                continue;
            }
            (stem.to_owned(), format!("tests/{name}"))
        } else {
            continue;
        };
        let declared = main
            .lines()
            .any(|line| line.trim() == format!("mod {module};"));
        let listed = manifest.contains(&format!("path = \"{target}\""));
        if !declared && !listed {
            unbuilt.push(target);
        }
    }
    unbuilt.sort();
    assert!(
        unbuilt.is_empty(),
        "{} builds no test from {unbuilt:?}: declare each as a module in tests/main.rs, or give it a [[test]] in Cargo.toml",
        root.display()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crate_with(files: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("a temporary directory");
        for (path, text) in files {
            let path = dir.path().join(path);
            std::fs::create_dir_all(path.parent().expect("a parent")).expect("a directory");
            std::fs::write(path, text).expect("a file");
        }
        dir
    }

    #[test]
    fn declared_and_listed_files_pass() {
        let dir = crate_with(&[
            (
                "Cargo.toml",
                "[[test]]\nname = \"alone\"\npath = \"tests/alone.rs\"\n",
            ),
            ("tests/main.rs", "mod support;\nmod scenario;\n"),
            ("tests/scenario.rs", ""),
            ("tests/alone.rs", ""),
            ("tests/support/mod.rs", ""),
        ]);
        assert_every_test_file_is_built(dir.path().to_str().expect("a UTF-8 path"));
    }

    #[test]
    #[should_panic(expected = "tests/forgotten.rs")]
    fn a_file_neither_declared_nor_listed_fails() {
        let dir = crate_with(&[
            ("Cargo.toml", ""),
            ("tests/main.rs", "mod scenario;\n"),
            ("tests/scenario.rs", ""),
            ("tests/forgotten.rs", ""),
        ]);
        assert_every_test_file_is_built(dir.path().to_str().expect("a UTF-8 path"));
    }
}
