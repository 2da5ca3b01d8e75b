//! Every crate's modules import each other in layers, never in a loop: a
//! metric, a step or a protocol can be read (and changed) with only what
//! it imports in mind. Read from the sources of each crate of the
//! workspace: every `crate::…` and `super::…` path outside comments and
//! test modules is an edge to the module it names, and this crate's
//! registry reads every metric that `judged_metrics!` lists.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module path (`judged::steps::contexts`) -> the file's source, for the
/// crate whose sources are in `root`.
fn modules(root: &Path) -> BTreeMap<String, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path.strip_prefix(root).unwrap().with_extension("");
                let mut parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
                    parts.pop();
                }
                out.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The `src` folder of every crate of the workspace, by crate folder name.
fn crates() -> BTreeMap<String, std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("src").is_dir())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                p.join("src"),
            )
        })
        .collect()
}

/// The source without its test module and comments.
fn code(source: &str) -> String {
    let source = source
        .find("#[cfg(test)]\nmod tests")
        .map_or(source, |at| &source[..at]);
    source
        .lines()
        .map(|line| line.find("//").map_or(line, |at| &line[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The paths a source names after `prefix` (`crate::`), with `{a, b::c}`
/// groups expanded one level.
fn paths(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        if code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[at + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(rest.len());
        let head = rest[..end].trim_end_matches(':');
        if rest[end..].starts_with('{') && rest[..end].ends_with("::") {
            let group = &rest[end + 1..rest[end..].find('}').map_or(rest.len(), |e| end + e)];
            for item in group.split(',') {
                let item = item.split_whitespace().next().unwrap_or("");
                if !item.is_empty() && item != "self" {
                    out.push(format!("{head}::{item}"));
                }
            }
        }
        out.push(head.to_string());
    }
    out
}

/// The longest module that `path` starts with.
fn module_of<'a>(path: &str, modules: &'a BTreeSet<String>) -> Option<&'a String> {
    let parts: Vec<&str> = path.split("::").collect();
    (1..=parts.len())
        .rev()
        .find_map(|n| modules.get(&parts[..n].join("::")))
}

/// Module -> the modules it imports (not itself, not its ancestors: a
/// child may use what its parent declares), in the crate at `root`.
fn graph(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let sources = modules(root);
    let names: BTreeSet<String> = sources.keys().cloned().collect();
    let mut edges = BTreeMap::new();
    for (module, source) in &sources {
        let code = code(source);
        let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
        let named =
            paths(&code, "crate::")
                .into_iter()
                .chain(paths(&code, "super::").into_iter().map(|p| {
                    [parent, p.as_str()]
                        .join("::")
                        .trim_start_matches(':')
                        .to_string()
                }));
        let targets: BTreeSet<String> = named
            .filter_map(|p| module_of(&p, &names).cloned())
            .filter(|t| t != module && !module.starts_with(&format!("{t}::")) && !t.is_empty())
            .collect();
        edges.insert(module.clone(), targets);
    }
    // `JUDGED` (`judged::registry`) is the table `judged_metrics!` makes in
    // `judged/mod.rs` from the metrics it lists: the registry reads each.
    let Some(judged) = sources.get("judged") else {
        return edges;
    };
    let listed = code(judged);
    let listed = listed
        .split_once("judged_metrics! {")
        .and_then(|(_, rest)| rest.split_once('}'))
        .map_or("", |(list, _)| list);
    let registry = edges.entry("judged::registry".into()).or_default();
    registry.extend(
        listed
            .split(',')
            .map(str::trim)
            .filter(|m| !m.is_empty())
            .map(|m| format!("judged::{m}")),
    );
    edges
}

/// A loop of imports, if there is one.
fn find_loop(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = stack.iter().position(|n| n == node).unwrap_or(0);
                let mut cycle = stack[from..].to_vec();
                cycle.push(node.to_string());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_string(), Mark::Open);
        stack.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, edges, marks, stack) {
                return Some(cycle);
            }
        }
        stack.pop();
        marks.insert(node.to_string(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut marks, &mut Vec::new()))
}

#[test]
fn no_module_imports_itself_through_others() {
    let crates = crates();
    assert!(crates.len() > 10, "the workspace's crates were found");
    let edges = graph(&crates["assay-metrics"]);
    assert!(edges.len() > 40, "the sources were found");
    // The reader sees real edges: a metric imports the registry's types.
    assert!(edges["judged::faithfulness"].contains("judged::metric"));
    assert!(edges["judged::registry"].contains("judged::faithfulness"));
    let loops: Vec<String> = crates
        .iter()
        .filter_map(|(name, root)| {
            find_loop(&graph(root)).map(|cycle| format!("{name}: {}", cycle.join(" -> ")))
        })
        .collect();
    assert!(
        loops.is_empty(),
        "modules import each other in a loop:\n{}",
        loops.join("\n")
    );
}

#[test]
fn the_loop_finder_finds_a_loop() {
    let edges: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(
        find_loop(&edges).unwrap(),
        ["a", "b", "c", "a"].map(String::from)
    );
    let mut layered = edges;
    layered.get_mut("c").unwrap().clear();
    assert_eq!(find_loop(&layered), None);
}

#[test]
fn paths_are_read_with_their_groups() {
    let code = "use crate::judged::{steps, prompt::PromptId};\nlet x = super::common::f();";
    assert_eq!(
        paths(code, "crate::"),
        ["judged::steps", "judged::prompt::PromptId", "judged"]
    );
    assert_eq!(paths(code, "super::"), ["common::f"]);
}
