use std::collections::BTreeSet;
use std::path::Path;

use super::*;

/// A crate of `files` (path, source) in a fresh directory; returns the directory and the root file.
fn fixture(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    for (path, source) in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, source).unwrap();
    }
    let root = dir.path().join("lib.rs");
    (dir, root)
}

fn edges(root: &Path) -> Vec<(String, String)> {
    module_graph(root).unwrap().edges.into_keys().collect()
}

fn pair(a: &str, b: &str) -> (String, String) {
    (a.to_string(), b.to_string())
}

#[test]
fn crate_paths_in_uses_code_and_macros_are_edges_and_doc_comments_are_not() {
    let (_dir, root) = fixture(&[
        ("lib.rs", "mod a; mod b; mod c; mod d;"),
        (
            "a.rs",
            "use crate::b::Thing;\n/// See `crate::c`.\nfn f() {}",
        ),
        (
            "b.rs",
            "pub struct Thing; fn g() -> u8 { crate::c::value() }",
        ),
        (
            "c.rs",
            "pub fn value() -> u8 { 1 } fn h() { tracing::info!(x = ?crate::d::X); }",
        ),
        ("d.rs", "pub const X: u8 = 1;"),
    ]);
    assert_eq!(
        edges(&root),
        [pair("a", "b"), pair("b", "c"), pair("c", "d")]
    );
}

#[test]
fn super_counts_only_when_it_climbs_out_of_the_top_level_module() {
    let (_dir, root) = fixture(&[
        ("lib.rs", "mod a; mod b;"),
        ("a/mod.rs", "mod inner; use super::b::X;"),
        ("a/inner.rs", "use super::sibling; use super::super::b::Y;"),
        ("b.rs", "pub struct X; pub struct Y;"),
    ]);
    assert_eq!(edges(&root), [pair("a", "b")]);
    let graph = module_graph(&root).unwrap();
    assert_eq!(
        graph.edges[&pair("a", "b")].len(),
        2,
        "both places are recorded"
    );
}

#[test]
fn test_code_is_left_out() {
    let (_dir, root) = fixture(&[
        ("lib.rs", "mod a; mod b;"),
        (
            "a.rs",
            "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nfn helper() { crate::b::f(); }\nfn real() {}",
        ),
        ("a/tests.rs", "use crate::b::f;"),
        ("b.rs", "pub fn f() {}"),
    ]);
    assert!(edges(&root).is_empty());
}

#[test]
fn modules_that_reach_each_other_form_one_cycle_unless_an_edge_is_allowed() {
    let (_dir, root) = fixture(&[
        ("lib.rs", "mod a; mod b; mod c; mod d;"),
        ("a.rs", "use crate::b::X;"),
        ("b.rs", "pub struct X; use crate::c::Y;"),
        ("c.rs", "pub struct Y; use crate::a::Z;"),
        ("d.rs", "use crate::a::Z;"),
    ]);
    let graph = module_graph(&root).unwrap();
    assert_eq!(
        cycles(&graph, &BTreeSet::new()),
        [vec!["a".to_string(), "b".to_string(), "c".to_string()]]
    );
    let allowed = BTreeSet::from([pair("c", "a")]);
    assert!(cycles(&graph, &allowed).is_empty());
}

#[test]
fn a_file_that_does_not_parse_is_named() {
    let (_dir, root) = fixture(&[("lib.rs", "mod a;"), ("a.rs", "fn (")]);
    let err = module_graph(&root).unwrap_err();
    assert!(err.to_string().contains("a.rs"), "{err}");
}
