//! Keeps VERIFICATION.md, the README and the tree in step.
//!
//! - A *primitive* is a module of the library: `src/<p>.rs` or
//!   `src/<p>/mod.rs` (the shim, `src/sync/`, is not one). Its declaration
//!   in `src/lib.rs` is the only list a new primitive is added to; every
//!   other list is derived from the tree, and this file fails the test
//!   suite, naming what is missing, when a primitive lacks its models, its
//!   property tests, its benchmarks or its VERIFICATION.md section.
//! - Every invariant is a heading `### <ID>: <title>` (IDs like `Q-1`).
//! - Every test in `models/` and `proptests/` carries, in its doc comment, a
//!   line `Checks: <ID>, <ID>, ...` naming the invariants it checks. Its
//!   name is `<file stem>::<fn>` (`queue::basic`): the name libtest gives
//!   it, the name a model prints and the name `cargo test` filters on.
//! - Under each invariant, VERIFICATION.md has a line
//!   `Checked by: <name>, ...` listing exactly the tests that name it.
//!
//! Failures print the correct text. With `MODELSYNC_BLESS=1` the derived
//! parts (`Checked by:` lines, the README's list of primitives) are
//! rewritten in place instead.
#![cfg(not(miri))] // reads the tree, which Miri's isolation forbids

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(rel: &str) -> String {
    fs::read_to_string(Path::new(ROOT).join(rel)).unwrap_or_else(|e| panic!("read {rel}: {e}"))
}

fn bless() -> bool {
    std::env::var_os("MODELSYNC_BLESS").is_some()
}

/// The library's primitives, derived from `src/`: `(name, source file)`.
fn primitives() -> Vec<(String, String)> {
    let mut found = Vec::new();
    for entry in fs::read_dir(Path::new(ROOT).join("src")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "sync" {
            continue;
        }
        if path.is_dir() && path.join("mod.rs").is_file() {
            found.push((name.clone(), format!("src/{name}/mod.rs")));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push((name.clone(), format!("src/{name}.rs")));
        }
    }
    found.sort();
    assert!(found.len() >= 4, "found only {found:?} in src/");
    found
}

/// `(stem, path)` of every module file of a test target's folder.
fn modules_of(folder: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = fs::read_dir(Path::new(ROOT).join(folder))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|stem| stem != "main")
        .map(|stem| (stem.clone(), format!("{folder}/{stem}.rs")))
        .collect();
    found.sort();
    found
}

fn ids_in(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .map(|s| s.trim_end_matches('.'))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// A test found in a module's source.
#[derive(Debug, PartialEq)]
struct Test {
    /// `<module>::<fn>`, as libtest names it.
    name: String,
    checks: Vec<String>,
    /// Compiled only for std (`cfg(not(any(loom, shuttle)))`): not a model
    /// that loom or shuttle run.
    std_only: bool,
    /// Compiled out under loom (`cfg(not(loom))`).
    not_loom: bool,
}

/// Every `#[test]` in `source`, the module `module`. Tests must sit at the
/// module's top level (proptest! blocks included), so that their names
/// are `module::fn`.
fn tests_in(module: &str, source: &str) -> Vec<Test> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    let mut inline_module = None;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        let declares_module = ["mod ", "pub mod ", "pub(crate) mod ", "pub(super) mod "]
            .iter()
            .any(|p| trimmed.starts_with(p));
        if declares_module && trimmed.ends_with('{') {
            inline_module = Some(i + 1);
        }
        if trimmed != "#[test]" {
            continue;
        }
        if let Some(at) = inline_module {
            panic!(
                "{module}: #[test] at line {} follows the inline module at line {at}; keep \
                 tests at the top level so that their names are {module}::<fn>",
                i + 1
            );
        }
        let name = lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| l.starts_with("fn ") || l.contains(" fn "))
            .and_then(|l| l.split("fn ").nth(1))
            .and_then(|l| l.split(['(', '<']).next())
            .unwrap_or_else(|| {
                panic!(
                    "{module}: cannot find the fn after #[test] at line {}",
                    i + 1
                )
            })
            .to_string();
        // The doc comment and attributes directly above `#[test]`.
        let mut checks = None;
        let (mut std_only, mut not_loom) = (false, false);
        for above in lines[..i].iter().rev().map(|l| l.trim()) {
            if !(above.starts_with("///") || above.starts_with("#[")) {
                break;
            }
            std_only |= above == "#[cfg(not(any(loom, shuttle)))]";
            not_loom |= above == "#[cfg(not(loom))]";
            if let Some(rest) = above.trim_start_matches('/').trim().strip_prefix("Checks:") {
                checks = Some(ids_in(rest));
            }
        }
        let checks = checks.unwrap_or_else(|| {
            panic!("{module}::{name} has no `Checks: <IDs>` line in its doc comment")
        });
        found.push(Test {
            name: format!("{module}::{name}"),
            checks,
            std_only,
            not_loom,
        });
    }
    found
}

/// Every test of the `models` and `proptests` targets: `(target, test)`.
fn all_tests() -> Vec<(&'static str, Test)> {
    let mut all = Vec::new();
    for target in ["models", "proptests"] {
        for (stem, path) in modules_of(target) {
            let source = read(&path);
            // A whole-file std-only module (the proptests target is).
            let file_std_only = target == "proptests";
            for mut test in tests_in(&stem, &source) {
                test.std_only |= file_std_only;
                all.push((target, test));
            }
        }
    }
    all
}

struct Doc {
    text: String,
    /// ID -> the tests its `Checked by:` line lists.
    checked_by: BTreeMap<String, BTreeSet<String>>,
    /// `## ` headings.
    sections: Vec<String>,
    /// Rows of the model table: the model names in its first column.
    table_models: BTreeSet<String>,
}

fn read_verification_md() -> Doc {
    let text = read("VERIFICATION.md");
    let mut checked_by = BTreeMap::new();
    let mut sections = Vec::new();
    let mut table_models = BTreeSet::new();
    let mut current: Option<String> = None;
    let mut in_model_table = false;
    for line in text.lines() {
        if line.starts_with("| model |") {
            in_model_table = true;
            continue;
        }
        if in_model_table {
            match line.strip_prefix("| `") {
                Some(row) => {
                    table_models.insert(row.split('`').next().unwrap().to_string());
                }
                None if line.starts_with("|---") => {}
                None => in_model_table = false,
            }
        }
        if let Some(heading) = line.strip_prefix("### ") {
            let id = heading.split(':').next().unwrap().trim().to_string();
            assert!(
                id.split_once('-').is_some_and(|(p, n)| !p.is_empty()
                    && p.chars().all(|c| c.is_ascii_uppercase())
                    && n.parse::<u32>().is_ok()),
                "VERIFICATION.md: invariant heading `{line}` must start with an ID like `Q-1:`"
            );
            assert!(
                checked_by.insert(id.clone(), BTreeSet::new()).is_none(),
                "VERIFICATION.md: {id} is defined twice"
            );
            current = Some(id);
        } else if let Some(heading) = line.strip_prefix("## ") {
            sections.push(heading.to_string());
            current = None;
        } else if let Some(list) = line.strip_prefix("Checked by:") {
            let id = current
                .clone()
                .unwrap_or_else(|| panic!("VERIFICATION.md: `{line}` is not under an invariant"));
            let tests = list
                .split(',')
                .map(|t| t.trim().trim_matches('`').trim_end_matches('.').to_string())
                .filter(|t| !t.is_empty());
            checked_by.get_mut(&id).unwrap().extend(tests);
        }
    }
    Doc {
        text,
        checked_by,
        sections,
        table_models,
    }
}

/// Rewrites VERIFICATION.md with one `Checked by:` line under each
/// invariant, as the tests' `Checks:` lines say (`MODELSYNC_BLESS=1`).
fn bless_checked_by(text: &str, claimed: &BTreeMap<String, BTreeSet<String>>) {
    let mut out: Vec<String> = Vec::new();
    // The invariant whose section this is, and whether its line is written.
    let mut current: Option<(String, bool)> = None;
    let line_for = |id: &str| checked_by_line(&claimed.get(id).cloned().unwrap_or_default());
    // Writes a missing `Checked by:` line at the end of the section.
    let flush = |out: &mut Vec<String>, current: &Option<(String, bool)>| {
        if let Some((id, false)) = current {
            let blanks = out.iter().rev().take_while(|l| l.is_empty()).count();
            out.truncate(out.len() - blanks);
            out.push(String::new());
            out.push(line_for(id));
            out.push(String::new());
        }
    };
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("### ") {
            flush(&mut out, &current);
            current = Some((heading.split(':').next().unwrap().trim().to_string(), false));
        } else if line.starts_with("## ") {
            flush(&mut out, &current);
            current = None;
        } else if line.starts_with("Checked by:") {
            if let Some((id, written)) = current.as_mut() {
                if !*written {
                    out.push(line_for(id));
                    *written = true;
                }
            }
            continue;
        }
        out.push(line.to_string());
    }
    flush(&mut out, &current);
    fs::write(
        Path::new(ROOT).join("VERIFICATION.md"),
        out.join("\n") + "\n",
    )
    .unwrap();
}

/// `Checked by:` lines as the tests' `Checks:` lines say they should be.
fn checked_by_line(tests: &BTreeSet<String>) -> String {
    let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
    format!("Checked by: {}", names.join(", "))
}

/// Every ID has a test, every test names known IDs, test names are unique,
/// and VERIFICATION.md lists exactly the tests that check each ID.
///
/// Checks: V-1.
#[test]
fn every_invariant_has_a_test_and_every_test_a_known_invariant() {
    let doc = read_verification_md();
    let mut claimed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (target, test) in all_tests() {
        if !names.insert(test.name.clone()) {
            errors.push(format!(
                "{target}: a second test is named {}; names must be unique across models and \
                 proptests so that `cargo test <name>` and `Checked by:` mean one test",
                test.name
            ));
        }
        if test.checks.is_empty() {
            errors.push(format!("{}: `Checks:` names no invariant", test.name));
        }
        for id in test.checks {
            if !doc.checked_by.contains_key(&id) {
                errors.push(format!("{} names unknown invariant {id}", test.name));
            }
            claimed.entry(id).or_default().insert(test.name.clone());
        }
    }
    for (id, listed) in &doc.checked_by {
        let actual = claimed.get(id).cloned().unwrap_or_default();
        if actual.is_empty() {
            errors.push(format!("{id} has no test"));
        } else if &actual != listed {
            errors.push(format!(
                "{id}: VERIFICATION.md lists {listed:?}, the tests say:\n{}",
                checked_by_line(&actual)
            ));
        }
    }
    if bless() && !errors.is_empty() {
        bless_checked_by(&doc.text, &claimed);
        return;
    }
    assert!(
        errors.is_empty(),
        "VERIFICATION.md is out of date (MODELSYNC_BLESS=1 rewrites `Checked by:` lines):\n{}",
        errors.join("\n")
    );
}

/// The checker itself: a test without `Checks:` is rejected, IDs are
/// parsed from a `Checks:` line, cfg attributes are seen, and a test in an
/// inline module (whose libtest name would gain a segment) is refused.
///
/// Checks: V-1.
#[test]
fn checker_parses_and_rejects() {
    let source = "/// Does a thing.\n///\n/// Checks: Q-1, Q-2.\n#[cfg(not(loom))]\n#[test]\nfn thing() {}\n";
    assert_eq!(
        tests_in("t", source),
        vec![Test {
            name: "t::thing".to_string(),
            checks: vec!["Q-1".to_string(), "Q-2".to_string()],
            std_only: false,
            not_loom: true,
        }]
    );
    let missing = "/// Does a thing.\n#[test]\nfn thing() {}\n";
    assert!(std::panic::catch_unwind(|| tests_in("t", missing)).is_err());
    let nested = "mod inner {\n    /// Checks: Q-1.\n    #[test]\n    fn thing() {}\n}\n";
    assert!(std::panic::catch_unwind(|| tests_in("t", nested)).is_err());
}

/// The first sentence of a module's `//!` doc: what the README lists.
fn summary_of(source_file: &str) -> String {
    let source = read(source_file);
    let mut text = String::new();
    for line in source.lines() {
        let Some(doc) = line.strip_prefix("//!") else {
            break;
        };
        let doc = doc.trim();
        if doc.is_empty() {
            break;
        }
        text.push_str(if text.is_empty() { "" } else { " " });
        text.push_str(doc);
    }
    let end = text.find(". ").map_or(text.len(), |i| i + 1);
    text[..end].to_string()
}

const README_BEGIN: &str = "<!-- primitives: generated by proptests/verification.rs from each module's first doc sentence -->";
const README_END: &str = "<!-- end of primitives -->";

/// Every primitive has its models, property tests, benchmarks and
/// VERIFICATION.md section, and the README lists it; the failure names
/// what is missing.
///
/// Checks: V-3.
#[test]
fn every_primitive_has_its_files_and_sections() {
    let doc = read_verification_md();
    let mut errors = Vec::new();
    let mut readme_list = String::new();
    for (p, source) in primitives() {
        for folder in ["models", "proptests", "benches"] {
            if !Path::new(ROOT).join(format!("{folder}/{p}.rs")).is_file() {
                errors.push(format!("primitive `{p}` ({source}) has no {folder}/{p}.rs"));
            }
        }
        let path = source.trim_end_matches("mod.rs").trim_end_matches(".rs");
        let marker = if source.ends_with("mod.rs") {
            format!("`{path}`")
        } else {
            format!("`{path}.rs`")
        };
        if !doc.sections.iter().any(|s| s.contains(&marker)) {
            errors.push(format!(
                "primitive `{p}` has no section in VERIFICATION.md: a `## ` heading naming {marker}"
            ));
        }
        readme_list.push_str(&format!("- `modelsync::{p}`: {}\n", summary_of(&source)));
    }
    for folder in ["models", "proptests", "benches"] {
        for (stem, path) in modules_of(folder) {
            let known = primitives().iter().any(|(p, _)| *p == stem);
            let belongs = known
                || (folder == "proptests"
                    && ["verification", "linearizability"].contains(&stem.as_str()));
            if !belongs {
                errors.push(format!("{path} belongs to no primitive in src/"));
            }
        }
    }
    let readme = read("README.md");
    let expected = format!("{README_BEGIN}\n{readme_list}{README_END}");
    match (readme.find(README_BEGIN), readme.find(README_END)) {
        (Some(begin), Some(end)) if readme[begin..end + README_END.len()] == expected => {}
        (Some(begin), Some(end)) if bless() => {
            let updated = format!(
                "{}{expected}{}",
                &readme[..begin],
                &readme[end + README_END.len()..]
            );
            fs::write(Path::new(ROOT).join("README.md"), updated).unwrap();
        }
        _ => errors.push(format!(
            "README.md's list of primitives is out of date (MODELSYNC_BLESS=1 rewrites it); \
             it should read:\n{expected}"
        )),
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// Every loom or shuttle model has a row in VERIFICATION.md's model table
/// (rewritten by `ci/model_table.py`), and every row names a model.
///
/// Checks: V-3.
#[test]
fn model_table_lists_every_model() {
    let doc = read_verification_md();
    let models: BTreeSet<String> = all_tests()
        .into_iter()
        .filter(|(target, t)| *target == "models" && !t.std_only)
        .map(|(_, t)| t.name)
        .collect();
    let missing: Vec<_> = models.difference(&doc.table_models).collect();
    let unknown: Vec<_> = doc.table_models.difference(&models).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "VERIFICATION.md's model table is out of date (run `python3 ci/model_table.py`): \
         missing rows {missing:?}, rows for no model {unknown:?}"
    );
}

/// Every relative link in the repository's Markdown points at a file in
/// the repository: it stands alone.
///
/// Checks: V-4.
#[test]
fn markdown_links_stay_inside_the_repository() {
    let mut files = Vec::new();
    markdown_files(Path::new(ROOT), &mut files);
    let root = Path::new(ROOT).canonicalize().unwrap();
    let mut errors = Vec::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        for link in text.split("](").skip(1) {
            let target = link.split(')').next().unwrap().split('#').next().unwrap();
            if target.is_empty() || target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let resolved = file.parent().unwrap().join(target);
            let inside = resolved.canonicalize().is_ok_and(|p| p.starts_with(&root));
            if !inside {
                errors.push(format!("{}: link to {target}", file.display()));
            }
        }
    }
    assert!(
        errors.is_empty(),
        "links outside the repository or to no file:\n{}",
        errors.join("\n")
    );
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy();
        if name.starts_with('.') || name == "target" {
            continue;
        }
        if path.is_dir() {
            markdown_files(&path, out);
        } else if name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// Source files that may name std's synchronisation types: the shim itself,
/// the model harness (it counts across executions, outside the model), and
/// this file, which spells the forbidden paths out.
const MAY_NAME_STD_SYNC: &[&str] = &[
    "src/sync/",
    "models/harness/",
    "proptests/verification.rs",
    "build.rs",
];

/// Paths that bypass the shim: loom and shuttle cannot see accesses made
/// through them, so a model would silently miss those interleavings.
const FORBIDDEN: &[&str] = &[
    "std::sync::atomic",
    "core::sync::atomic",
    "std::sync::Mutex",
    "std::sync::RwLock",
    "std::sync::Condvar",
    "std::sync::Barrier",
    "std::cell::UnsafeCell",
    "core::cell::UnsafeCell",
    "std::thread::spawn",
    "std::thread::scope",
    "std::thread::yield_now",
    "std::thread::park",
    "std::thread::Builder",
    "std::thread::current",
    "std::hint::spin_loop",
    "core::hint::spin_loop",
];

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `std::sync::{Arc, Mutex}`-style imports hide the type behind braces;
/// expand them so that the forbidden-path check sees `std::sync::Mutex`.
fn expand_braces(line: &str) -> Vec<String> {
    let mut out = vec![line.to_string()];
    if let (Some(open), Some(close)) = (line.find("::{"), line.rfind('}')) {
        let prefix_start = line[..open]
            .rfind(|c: char| c.is_whitespace() || c == '(')
            .map_or(0, |i| i + 1);
        let prefix = &line[prefix_start..open];
        for part in line[open + 3..close].split(',') {
            out.push(format!("{prefix}::{}", part.trim()));
        }
    }
    out
}

/// `std::sync::atomic`, `Mutex`, `Condvar`, `UnsafeCell` and thread spawning
/// are named only in `src/sync` (and the harness), so every primitive and
/// every model goes through the shim.
///
/// Checks: V-2.
#[test]
fn sync_types_are_named_only_in_the_shim() {
    let mut files = Vec::new();
    for dir in ["src", "models", "proptests", "benches"] {
        rust_files(&Path::new(ROOT).join(dir), &mut files);
    }
    assert!(files.len() > 5, "found only {files:?}");
    let mut errors = Vec::new();
    for file in files {
        let rel = file
            .strip_prefix(ROOT)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if MAY_NAME_STD_SYNC
            .iter()
            .any(|allowed| rel.starts_with(allowed))
        {
            continue;
        }
        for (n, line) in fs::read_to_string(&file).unwrap().lines().enumerate() {
            // A benchmark that measures std's own primitive as a peer marks
            // the line `// shim-exempt: <why>`.
            if line.contains("// shim-exempt: ") {
                continue;
            }
            let code = line.split("//").next().unwrap();
            for expanded in expand_braces(code) {
                if let Some(bad) = FORBIDDEN.iter().find(|f| expanded.contains(*f)) {
                    errors.push(format!(
                        "{rel}:{}: names `{bad}`; use modelsync::sync",
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

/// The forbidden-path check sees through brace imports.
///
/// Checks: V-2.
#[test]
fn brace_imports_are_expanded() {
    let lines = expand_braces("use std::sync::{Arc, Mutex};");
    assert!(
        lines.iter().any(|l| l.contains("std::sync::Mutex")),
        "{lines:?}"
    );
}
