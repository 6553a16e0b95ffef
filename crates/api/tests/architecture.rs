//! The shape of the libraries: no two top-level modules of a crate depend
//! on each other, directly or through others (a cycle makes every module
//! in it part of every other's change).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The library crates whose modules must not form a cycle.
const CRATES: &[&str] = &[
    "model", "formats", "store", "index", "api", "redact", "web", "pick", "mcp",
];

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    out
}

/// The `crate::NAME` and `use crate::{NAME, …}` references of `text`,
/// outside comments and unit tests.
fn references(text: &str) -> BTreeSet<String> {
    let code = text.split("#[cfg(test)]").next().unwrap_or_default();
    let mut out = BTreeSet::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        let mut rest = line;
        while let Some(i) = rest.find("crate::") {
            rest = &rest[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let name: String = item
                        .trim()
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    if !name.is_empty() {
                        out.insert(name);
                    }
                }
            } else {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        }
    }
    out
}

/// Top-level module -> the top-level modules it refers to.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for f in rust_files(src) {
        let rel = f.strip_prefix(src).unwrap();
        let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" || module == "bin" {
            continue;
        }
        let refs = references(&std::fs::read_to_string(&f).unwrap());
        graph
            .entry(module.clone())
            .or_default()
            .extend(refs.into_iter().filter(|r| *r != module));
    }
    let names: BTreeSet<String> = graph.keys().cloned().collect();
    for deps in graph.values_mut() {
        deps.retain(|d| names.contains(d));
    }
    graph
}

/// Returns a cycle of `graph` (its modules in order), if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m.to_string());
            return Some(cycle);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_string());
        for d in graph.get(m).into_iter().flatten() {
            if let Some(c) = visit(d, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(m.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for m in graph.keys() {
        if let Some(c) = visit(m, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn no_crate_has_a_cycle_of_modules() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for name in CRATES {
        let src = crates.join(name).join("src");
        let graph = module_graph(&src);
        assert!(
            graph.len() > 1 || *name == "redact",
            "{name}: no modules read"
        );
        if let Some(cycle) = find_cycle(&graph) {
            panic!(
                "crates/{name}: modules depend on each other in a cycle: {}",
                cycle.join(" -> ")
            );
        }
    }
}

#[test]
fn the_checker_finds_a_planted_cycle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "use crate::b::X;\n").unwrap();
    std::fs::write(dir.path().join("b.rs"), "use crate::{c, d};\n").unwrap();
    std::fs::write(
        dir.path().join("c.rs"),
        "// crate::a in a comment\nfn f() { crate::a::g() }\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("d.rs"), "pub struct D;\n").unwrap();
    let cycle = find_cycle(&module_graph(dir.path())).expect("the cycle a -> b -> c -> a");
    assert_eq!(cycle.first(), cycle.last());
    assert_eq!(cycle.len(), 4, "{cycle:?}");
    std::fs::write(dir.path().join("c.rs"), "// crate::a only in a comment\n").unwrap();
    assert_eq!(find_cycle(&module_graph(dir.path())), None);
}
