//! The layering check: within each crate, the top-level modules name each other in one direction only, so that
//! a crate reads as layers and the compiler's module tree cannot hide a knot.
//!
//! [`module_graph`] reads a crate from its root file as the compiler does (`mod` declarations followed to their
//! files, `#[path]` honoured) and records, for each top-level module, the other top-level modules its code names:
//! `crate::x` paths and `super::` paths that climb out of the module, in `use` items, in code and in macro
//! bodies. Code under `#[cfg(test)]` is left out: a test may drive its module through a layer above it. Doc
//! comments are not code. [`cycles`] then finds the modules that reach each other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// Why a crate could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A source file could not be read.
    #[error("failed to read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A source file is not Rust the parser understands.
    #[error("failed to parse {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// One edge: `from` names `to`, at these places (`file:line`).
pub type Edges = BTreeMap<(String, String), BTreeSet<String>>;

/// The top-level modules of a crate and the edges between them.
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Every top-level module.
    pub modules: BTreeSet<String>,
    /// Who names whom, with where.
    pub edges: Edges,
}

/// Reads the crate whose root file is `root` (`src/lib.rs` or `src/main.rs`).
///
/// # Errors
/// A file the root's `mod` declarations lead to that cannot be read or parsed.
pub fn module_graph(root: &Path) -> Result<ModuleGraph, Error> {
    let file = parse(root)?;
    let dir = root.parent().unwrap_or(Path::new("."));
    let mut graph = ModuleGraph::default();
    let mut tops = Vec::new();
    for item in &file.items {
        if let syn::Item::Mod(m) = item
            && !is_test(&m.attrs)
        {
            let name = m.ident.to_string();
            graph.modules.insert(name.clone());
            tops.push((name, m));
        }
    }
    for (name, m) in tops {
        let mut reader = Reader {
            top: &name,
            modules: &graph.modules,
            edges: &mut graph.edges,
            file: root.to_path_buf(),
            depth: 0,
        };
        reader.module(m, dir)?;
    }
    Ok(graph)
}

/// The groups of top-level modules that reach each other (strongly connected components of more than one
/// module), each sorted, ignoring the `allowed` edges.
pub fn cycles(graph: &ModuleGraph, allowed: &BTreeSet<(String, String)>) -> Vec<Vec<String>> {
    let next = |m: &String| -> Vec<String> {
        graph
            .edges
            .keys()
            .filter(|(from, to)| from == m && !allowed.contains(&(from.clone(), to.clone())))
            .map(|(_, to)| to.clone())
            .collect()
    };
    // Two modules are in one cycle when each reaches the other.
    let reach: BTreeMap<&String, BTreeSet<String>> = graph
        .modules
        .iter()
        .map(|m| {
            let mut seen = BTreeSet::new();
            let mut stack = next(m);
            while let Some(n) = stack.pop() {
                if seen.insert(n.clone()) {
                    stack.extend(next(&n));
                }
            }
            (m, seen)
        })
        .collect();
    let mut done = BTreeSet::new();
    let mut out = Vec::new();
    for m in &graph.modules {
        if done.contains(m) || !reach[m].contains(m) {
            continue;
        }
        let group: Vec<String> = reach[m]
            .iter()
            .filter(|n| reach.get(n).is_some_and(|r| r.contains(m)))
            .cloned()
            .collect();
        done.extend(group.iter().cloned());
        out.push(group);
    }
    out
}

fn parse(path: &Path) -> Result<syn::File, Error> {
    let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_path_buf(),
        source,
    })?;
    syn::parse_file(&text).map_err(|e| Error::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

/// Whether attributes hold `#[cfg(test)]` (or a `cfg` that names `test`, such as `cfg(all(test, unix))`).
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.meta
                .require_list()
                .is_ok_and(|l| mentions_test(l.tokens.clone()))
    })
}

fn mentions_test(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "test",
        TokenTree::Group(g) => mentions_test(g.stream()),
        _ => false,
    })
}

/// Reads one top-level module's code, recording the other top-level modules it names.
struct Reader<'a> {
    /// The top-level module being read.
    top: &'a str,
    modules: &'a BTreeSet<String>,
    edges: &'a mut Edges,
    /// The file being read, for the places edges are recorded at.
    file: PathBuf,
    /// How deep below the top-level module the code being read is (`super::` climbs one).
    depth: usize,
}

impl Reader<'_> {
    /// Reads module `m`, declared in a file whose child modules live in `dir`.
    fn module(&mut self, m: &syn::ItemMod, dir: &Path) -> Result<(), Error> {
        let name = m.ident.to_string();
        if let Some((_, items)) = &m.content {
            // An inline module's children live in a directory named after it.
            let child_dir = dir.join(&name);
            return self.items(items, &child_dir);
        }
        let explicit = m.attrs.iter().find_map(|a| {
            let syn::Meta::NameValue(nv) = &a.meta else {
                return None;
            };
            if !nv.path.is_ident("path") {
                return None;
            }
            match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            }
        });
        let (path, child_dir) = match explicit {
            Some(p) => {
                let path = dir.join(p);
                let child_dir = path.parent().unwrap_or(dir).to_path_buf();
                (path, child_dir)
            }
            None => {
                let flat = dir.join(format!("{name}.rs"));
                if flat.exists() {
                    (flat, dir.join(&name))
                } else {
                    (dir.join(&name).join("mod.rs"), dir.join(&name))
                }
            }
        };
        let file = parse(&path)?;
        let outer = std::mem::replace(&mut self.file, path);
        let result = self.items(&file.items, &child_dir);
        self.file = outer;
        result
    }

    fn items(&mut self, items: &[syn::Item], dir: &Path) -> Result<(), Error> {
        for item in items {
            if let syn::Item::Mod(m) = item {
                if is_test(&m.attrs) {
                    continue;
                }
                self.depth += 1;
                let result = self.module(m, dir);
                self.depth -= 1;
                result?;
            } else if !item_is_test(item) {
                self.visit_item(item);
            }
        }
        Ok(())
    }

    /// Records the top-level module a path names, if it names another one: `crate::x::...`, or `super::`
    /// climbing past the top-level module (`super::super::x` one level down).
    fn path(&mut self, segments: &[String], line: usize) {
        let target = match segments.first().map(String::as_str) {
            Some("crate") => segments.get(1),
            Some("super") => {
                let climbs = segments.iter().take_while(|s| *s == "super").count();
                if climbs > self.depth {
                    segments.get(climbs)
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(to) = target
            && to != self.top
            && self.modules.contains(to)
        {
            self.edges
                .entry((self.top.to_string(), to.clone()))
                .or_default()
                .insert(format!("{}:{line}", self.file.display()));
        }
    }

    /// Paths inside macro bodies, which the parser leaves as tokens: `crate :: x` and `super :: x` sequences.
    fn tokens(&mut self, tokens: TokenStream) {
        let flat: Vec<TokenTree> = tokens.into_iter().collect();
        let mut i = 0;
        while i < flat.len() {
            match &flat[i] {
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Ident(id) if id == "crate" || id == "super" => {
                    let mut segments = vec![id.to_string()];
                    let mut j = i + 1;
                    while let (
                        Some(TokenTree::Punct(a)),
                        Some(TokenTree::Punct(b)),
                        Some(TokenTree::Ident(next)),
                    ) = (flat.get(j), flat.get(j + 1), flat.get(j + 2))
                    {
                        if a.as_char() != ':' || b.as_char() != ':' {
                            break;
                        }
                        segments.push(next.to_string());
                        j += 3;
                    }
                    self.path(&segments, id.span().start().line);
                    i = j;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
    }

    /// The paths a `use` tree names, each from its root.
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.path(prefix, n.ident.span().start().line);
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.path(prefix, r.ident.span().start().line);
                prefix.pop();
            }
            syn::UseTree::Glob(g) => {
                self.path(prefix, g.star_token.span.start().line);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

fn item_is_test(item: &syn::Item) -> bool {
    let attrs = match item {
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        _ => return false,
    };
    is_test(attrs)
}

impl<'ast> Visit<'ast> for Reader<'_> {
    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.path(&segments, line);
        syn::visit::visit_path(self, p);
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }

    fn visit_item_mod(&mut self, _m: &'ast syn::ItemMod) {
        // Modules are read by `Reader::items`, which knows their files and depth.
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if !is_test(&f.attrs) {
            syn::visit::visit_impl_item_fn(self, f);
        }
    }
}

#[cfg(test)]
mod tests;
