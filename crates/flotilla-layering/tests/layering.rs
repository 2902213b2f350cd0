//! Every crate of the workspace is layered: its top-level modules never name each other in a cycle. A failure
//! lists the modules of each cycle and the edges between them with where they are, so that the name in the
//! wrong place can be moved to the layer that owns it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Edges that may close a cycle, each with the reason it is the lesser evil: (crate, from, to, reason). Keep
/// this list as short as possible.
const ALLOWED: &[(&str, &str, &str, &str)] = &[];

/// The root file of every crate in the workspace (its `lib.rs`, or `main.rs` for a binary-only crate).
fn crate_roots(workspace: &Path) -> Vec<(String, PathBuf)> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(workspace.join("crates"))
        .expect("crates/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    dirs.push(workspace.join("e2e"));
    dirs.sort();
    let mut roots = Vec::new();
    for dir in dirs {
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for root in ["src/lib.rs", "src/main.rs"] {
            let path = dir.join(root);
            if path.exists() {
                roots.push((format!("{name} ({root})"), path));
            }
        }
    }
    roots
}

#[test]
fn no_crate_has_a_cycle_among_its_top_level_modules() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the workspace");
    let roots = crate_roots(&workspace);
    assert!(roots.len() > 10, "found the workspace's crates: {roots:?}");
    let mut report = String::new();
    for (name, root) in &roots {
        let crate_name = name.split(' ').next().unwrap_or_default();
        let allowed: BTreeSet<(String, String)> = ALLOWED
            .iter()
            .filter(|(c, ..)| *c == crate_name)
            .map(|(_, from, to, _)| ((*from).to_string(), (*to).to_string()))
            .collect();
        let graph = flotilla_layering::module_graph(root).unwrap_or_else(|e| panic!("{name}: {e}"));
        for unused in allowed.iter().filter(|e| !graph.edges.contains_key(*e)) {
            report.push_str(&format!(
                "{name}: the allowed edge {} -> {} no longer exists; remove it from ALLOWED\n",
                unused.0, unused.1
            ));
        }
        for cycle in flotilla_layering::cycles(&graph, &allowed) {
            report.push_str(&format!(
                "{name}: {} modules import each other: {}\n",
                cycle.len(),
                cycle.join(", ")
            ));
            for ((from, to), places) in &graph.edges {
                if cycle.contains(from)
                    && cycle.contains(to)
                    && !allowed.contains(&(from.clone(), to.clone()))
                {
                    let prefix = format!("{}/", workspace.display());
                    let places: Vec<&str> = places
                        .iter()
                        .take(3)
                        .map(|p| p.strip_prefix(&prefix).unwrap_or(p))
                        .collect();
                    report.push_str(&format!("    {from} -> {to}  at {places:?}\n"));
                }
            }
        }
    }
    assert!(report.is_empty(), "\n{report}");
}
