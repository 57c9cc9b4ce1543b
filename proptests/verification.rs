//! Keeps VERIFICATION.md honest.
//!
//! - Every invariant is a heading `### <ID>: <title>` (IDs like `Q-1`).
//! - Every test in `models/` and `proptests/` carries, in its doc comment, a
//!   line `Checks: <ID>, <ID>, ...` naming the invariants it checks.
//! - Under each invariant, VERIFICATION.md has a line
//!   `Checked by: target::test, ...` listing exactly the tests that name it.
//!
//! This test fails when an ID has no test, a test names an unknown ID, a
//! test has no `Checks:` line, or a `Checked by:` line disagrees with the
//! tests' own `Checks:` lines (the failure prints the correct line).
#![cfg(not(any(loom, shuttle)))]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Test targets as Cargo.toml declares them: `(name, path)`.
fn test_targets() -> Vec<(String, String)> {
    let manifest = fs::read_to_string(Path::new(ROOT).join("Cargo.toml")).unwrap();
    let mut targets = Vec::new();
    let mut name = None;
    for line in manifest.lines() {
        let line = line.trim();
        if line == "[[test]]" {
            name = None;
        } else if let Some(v) = line.strip_prefix("name = ") {
            name = Some(v.trim_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("path = ") {
            if let Some(n) = name.take() {
                targets.push((n, v.trim_matches('"').to_string()));
            }
        }
    }
    targets
}

fn ids_in(text: &str) -> Vec<String> {
    text.split(|c: char| c == ',' || c.is_whitespace())
        .map(|s| s.trim_end_matches('.'))
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// `(target::test, ids)` for every `#[test]` in the target's file, with the
/// module path for tests in inline modules.
fn tests_in(target: &str, source: &str) -> Vec<(String, Vec<String>)> {
    let lines: Vec<&str> = source.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.trim() != "#[test]" {
            continue;
        }
        let name = lines[i + 1..]
            .iter()
            .map(|l| l.trim())
            .find(|l| l.starts_with("fn ") || l.contains(" fn "))
            .and_then(|l| l.split("fn ").nth(1))
            .and_then(|l| l.split(['(', '<']).next())
            .unwrap_or_else(|| {
                panic!(
                    "{target}: cannot find the fn after #[test] at line {}",
                    i + 1
                )
            })
            .to_string();
        // The doc comment and attributes directly above `#[test]`.
        let mut checks = None;
        for above in lines[..i].iter().rev().map(|l| l.trim()) {
            if !(above.starts_with("///") || above.starts_with("#[")) {
                break;
            }
            if let Some(rest) = above.trim_start_matches('/').trim().strip_prefix("Checks:") {
                checks = Some(ids_in(rest));
            }
        }
        let checks = checks.unwrap_or_else(|| {
            panic!("{target}::{name} has no `Checks: <IDs>` line in its doc comment")
        });
        found.push((format!("{target}::{name}"), checks));
    }
    found
}

struct Doc {
    /// ID -> the tests its `Checked by:` line lists.
    checked_by: BTreeMap<String, BTreeSet<String>>,
}

fn read_verification_md() -> Doc {
    let text = fs::read_to_string(Path::new(ROOT).join("VERIFICATION.md")).unwrap();
    let mut checked_by = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
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
        } else if line.starts_with("## ") {
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
    Doc { checked_by }
}

/// Every ID has a test, every test names known IDs, and VERIFICATION.md
/// lists exactly the tests that check each ID.
///
/// Checks: V-1.
#[test]
fn every_invariant_has_a_test_and_every_test_a_known_invariant() {
    let doc = read_verification_md();
    let mut claimed: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut errors = Vec::new();
    for (target, path) in test_targets() {
        let source = fs::read_to_string(Path::new(ROOT).join(&path)).unwrap();
        for (test, ids) in tests_in(&target, &source) {
            if ids.is_empty() {
                errors.push(format!("{test}: `Checks:` names no invariant"));
            }
            for id in ids {
                if !doc.checked_by.contains_key(&id) {
                    errors.push(format!("{test} names unknown invariant {id}"));
                }
                claimed.entry(id).or_default().insert(test.clone());
            }
        }
    }
    for (id, listed) in &doc.checked_by {
        let actual = claimed.get(id).cloned().unwrap_or_default();
        if actual.is_empty() {
            errors.push(format!("{id} has no test"));
        } else if &actual != listed {
            let line: Vec<String> = actual.iter().map(|t| format!("`{t}`")).collect();
            errors.push(format!(
                "{id}: VERIFICATION.md lists {listed:?}, the tests say:\nChecked by: {}",
                line.join(", ")
            ));
        }
    }
    assert!(
        errors.is_empty(),
        "VERIFICATION.md is out of date:\n{}",
        errors.join("\n")
    );
}

/// The checker itself: a test without `Checks:` is rejected, and IDs are
/// parsed from a `Checks:` line.
///
/// Checks: V-1.
#[test]
fn checker_parses_and_rejects() {
    let source = "/// Does a thing.\n///\n/// Checks: Q-1, Q-2.\n#[test]\nfn thing() {}\n";
    assert_eq!(
        tests_in("t", source),
        vec![(
            "t::thing".to_string(),
            vec!["Q-1".to_string(), "Q-2".to_string()]
        )]
    );
    let missing = "/// Does a thing.\n#[test]\nfn thing() {}\n";
    assert!(std::panic::catch_unwind(|| tests_in("t", missing)).is_err());
}

/// Source files that may name std's synchronisation types: the shim itself,
/// the model harness (it counts across executions, outside the model), and
/// this file, which spells the forbidden paths out.
const MAY_NAME_STD_SYNC: &[&str] = &["src/sync/", "models/harness/", "proptests/verification.rs"];

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
