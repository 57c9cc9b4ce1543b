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
//!   paragraph `Checks: <ID>, <ID> (weaker: <what it leaves out>), ...`
//!   naming the invariants it checks, each ID it checks only in part
//!   followed by a qualifier. Its name is `<file stem>::<fn>`
//!   (`queue::basic`): the name libtest gives it, the name a model prints
//!   and the name `cargo test` filters on.
//! - Each invariant's evidence is in `verification/<section>.md`, written
//!   by `ci/summary.py`: under `### <ID>`, one item per test that names it,
//!   `- [`<test>`](<link>): <status>; full` or `...; weaker: <qualifier>`,
//!   listing exactly the tests that name it, with their qualifiers; and
//!   under `## Tests`, an entry `### `<test>`` for every test, with its
//!   rerun command (`ci/summary.py check` checks the rest of each line).
//!
//! Failures print what is wrong and the command that rewrites it. With
//! `MODELSYNC_BLESS=1` the README's list of primitives is rewritten in
//! place instead.
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

/// `(module, path)` of every file of a test target's modules: `<t>/<m>.rs`
/// and the files it includes, `<t>/<m>/*.rs` (a component's models, whose
/// tests are the module's: `<m>::<fn>`).
fn module_files(folder: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for (stem, path) in modules_of(folder) {
        found.push((stem.clone(), path));
        let Ok(entries) = fs::read_dir(Path::new(ROOT).join(folder).join(&stem)) else {
            continue;
        };
        let mut parts: Vec<String> = entries
            .map(|entry| entry.unwrap().path())
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "rs"))
            .map(|p| {
                format!(
                    "{folder}/{stem}/{}",
                    p.file_name().unwrap().to_string_lossy()
                )
            })
            .collect();
        parts.sort();
        found.extend(parts.into_iter().map(|part| (stem.clone(), part)));
    }
    found
}

/// One entry of a `Checks:` paragraph: an invariant's ID, and what the
/// test leaves out of it when it checks only a weaker form.
#[derive(Debug, PartialEq)]
struct Check {
    id: String,
    weaker: Option<String>,
}

fn is_id(s: &str) -> bool {
    s.split_once('-').is_some_and(|(p, n)| {
        !p.is_empty() && p.chars().all(|c| c.is_ascii_uppercase()) && n.parse::<u32>().is_ok()
    })
}

/// `Q-1, Q-8 (weaker: capacity 2, so ...).` -> its checks; `Err` says what
/// it cannot read.
fn checks_in(text: &str) -> Result<Vec<Check>, String> {
    let text = text.trim();
    let text = text.strip_suffix('.').unwrap_or(text);
    let mut items = vec![String::new()];
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                items.push(String::new());
                continue;
            }
            _ => {}
        }
        items.last_mut().unwrap().push(c);
    }
    items
        .iter()
        .map(|item| {
            let item = item.trim();
            let (id, rest) = item.split_once(' ').unwrap_or((item, ""));
            let weaker = match rest.trim() {
                "" => None,
                rest => Some(
                    rest.strip_prefix("(weaker:")
                        .and_then(|r| r.strip_suffix(')'))
                        .map(|r| r.trim().to_string())
                        .filter(|r| !r.is_empty())
                        .ok_or_else(|| {
                            format!("`{item}`: after an ID only `(weaker: <what it leaves out>)`")
                        })?,
                ),
            };
            if !is_id(id) {
                return Err(format!("`{item}` is not an ID like Q-1"));
            }
            Ok(Check {
                id: id.to_string(),
                weaker,
            })
        })
        .collect()
}

/// A test found in a module's source.
#[derive(Debug, PartialEq)]
struct Test {
    /// `<module>::<fn>`, as libtest names it.
    name: String,
    checks: Vec<Check>,
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
        let mut doc = Vec::new();
        let (mut std_only, mut not_loom) = (false, false);
        for above in lines[..i].iter().rev().map(|l| l.trim()) {
            if !(above.starts_with("///") || above.starts_with("#[")) {
                break;
            }
            std_only |= above == "#[cfg(not(any(loom, shuttle)))]";
            not_loom |= above == "#[cfg(not(loom))]";
            if let Some(text) = above.strip_prefix("///") {
                doc.push(text.trim());
            }
        }
        doc.reverse();
        // Its `Checks:` paragraph, which may run over several lines.
        let checks = doc
            .split(|line| line.is_empty())
            .map(|para| para.join(" "))
            .find_map(|para| para.strip_prefix("Checks:").map(str::to_string))
            .unwrap_or_else(|| {
                panic!("{module}::{name} has no `Checks: <IDs>` line in its doc comment")
            });
        let checks = checks_in(&checks)
            .unwrap_or_else(|e| panic!("{module}::{name}: its `Checks:` line: {e}"));
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
        for (stem, path) in module_files(target) {
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

/// What a test's evidence row says of one invariant: `None` if it checks
/// all of it, else what it leaves out.
type Qualifier = Option<String>;

struct Doc {
    /// ID -> the tests its evidence lists, with their qualifiers; an ID
    /// with no evidence in `verification/` maps to `None`.
    evidence: BTreeMap<String, Option<BTreeMap<String, Qualifier>>>,
    /// `## ` headings.
    sections: Vec<String>,
    /// The tests that have an entry under `## Tests` in `verification/`.
    entries: BTreeSet<String>,
}

const STATUS_BEGIN: &str = "<!-- status ";

/// Reads the invariants of VERIFICATION.md (each with its status block
/// under its heading) and their evidence and the tests' entries in
/// `verification/*.md`; panics on a status block out of its place.
fn read_verification_md() -> Doc {
    let text = read("VERIFICATION.md");
    let mut evidence: BTreeMap<String, Option<BTreeMap<String, Qualifier>>> = BTreeMap::new();
    let mut sections = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with("### ") && !line.contains(':') {
            // A heading that is not an invariant's (no `ID:`) ends the last one.
            current = None;
        } else if let Some(heading) = line.strip_prefix("### ") {
            let id = heading.split(':').next().unwrap().trim().to_string();
            assert!(
                is_id(&id),
                "VERIFICATION.md: invariant heading `{line}` must start with an ID like `Q-1:`"
            );
            assert!(
                evidence.insert(id.clone(), None).is_none(),
                "VERIFICATION.md: {id} is defined twice"
            );
            current = Some(id);
        } else if let Some(heading) = line.strip_prefix("## ") {
            sections.push(heading.to_string());
            current = None;
        } else if let Some(rest) = line.strip_prefix(STATUS_BEGIN) {
            let id = rest.split(':').next().unwrap().to_string();
            assert!(
                current.as_deref() == Some(id.as_str()),
                "VERIFICATION.md: the status of {id} is not under its heading"
            );
        }
    }
    let mut entries = BTreeSet::new();
    for file in evidence_files() {
        read_evidence_file(&file, &mut evidence, &mut entries);
    }
    Doc {
        evidence,
        sections,
        entries,
    }
}

/// `verification/*.md`, the evidence files.
fn evidence_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(Path::new(ROOT).join("verification"))
        .expect("verification/: run `python3 ci/summary.py`")
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files
}

/// One evidence file: each `### <ID>` of its `## Invariants` with its
/// items, and each `### `<test>`` entry of its `## Tests`.
fn read_evidence_file(
    file: &Path,
    evidence: &mut BTreeMap<String, Option<BTreeMap<String, Qualifier>>>,
    entries: &mut BTreeSet<String>,
) {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let text = fs::read_to_string(file).unwrap();
    let mut part = "";
    let mut id: Option<String> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            part = if heading == "Invariants" {
                "invariants"
            } else {
                "tests"
            };
            id = None;
        } else if let Some(heading) = line.strip_prefix("### ") {
            if part == "tests" {
                entries.insert(heading.trim_matches('`').to_string());
                continue;
            }
            let heading = heading.trim().to_string();
            let slot = evidence.get_mut(&heading).unwrap_or_else(|| {
                panic!("verification/{name}: evidence for {heading}, which VERIFICATION.md does not define")
            });
            assert!(
                slot.is_none(),
                "{heading} has evidence twice (verification/{name})"
            );
            *slot = Some(BTreeMap::new());
            id = Some(heading);
        } else if let (Some(id), Some(item)) = (&id, line.strip_prefix("- [`")) {
            let (test, rest) = item.split_once("`]").unwrap();
            let (_, after_link) = rest.split_once("): ").unwrap_or_else(|| {
                panic!("verification/{name}: {id}'s item for {test} has no `): <status>`")
            });
            let qualifier = match after_link.split_once("; ").map(|(_, c)| c) {
                Some("full") => None,
                Some(c) if c.starts_with("weaker: ") => {
                    c.strip_prefix("weaker: ").map(str::to_string)
                }
                other => panic!(
                    "verification/{name}: {id}'s item for {test} says {other:?}, not `full` or \
                     `weaker: ...`"
                ),
            };
            let rows = evidence.get_mut(id).and_then(Option::as_mut).unwrap();
            assert!(
                rows.insert(test.to_string(), qualifier).is_none(),
                "verification/{name}: {id}'s evidence lists {test} twice"
            );
        }
    }
}

/// Every ID has a test, every test names known IDs, test names are unique,
/// and each invariant's evidence table lists exactly the tests that name
/// its ID, with their qualifiers.
///
/// Checks: V-1.
#[test]
fn every_invariant_has_a_test_and_every_test_a_known_invariant() {
    let doc = read_verification_md();
    let mut claimed: BTreeMap<String, BTreeMap<String, Qualifier>> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut names = BTreeSet::new();
    for (target, test) in all_tests() {
        if !names.insert(test.name.clone()) {
            errors.push(format!(
                "{target}: a second test is named {}; names must be unique across models and \
                 proptests so that `cargo test <name>` and the evidence tables mean one test",
                test.name
            ));
        }
        if test.checks.is_empty() {
            errors.push(format!("{}: `Checks:` names no invariant", test.name));
        }
        for check in test.checks {
            if !doc.evidence.contains_key(&check.id) {
                errors.push(format!(
                    "{} names unknown invariant {}",
                    test.name, check.id
                ));
            }
            claimed
                .entry(check.id)
                .or_default()
                .insert(test.name.clone(), check.weaker);
        }
    }
    for (id, listed) in &doc.evidence {
        let actual = claimed.get(id).cloned().unwrap_or_default();
        if actual.is_empty() {
            errors.push(format!("{id} has no test"));
        } else if let Some(listed) = listed {
            for (test, qualifier) in &actual {
                match listed.get(test) {
                    None => errors.push(format!("{id}: its evidence lacks {test}")),
                    Some(q) if q != qualifier => errors.push(format!(
                        "{id}: its evidence gives {test} the qualifier {q:?}, \
                         its `Checks:` line {qualifier:?}"
                    )),
                    Some(_) => {}
                }
            }
            for test in listed.keys().filter(|t| !actual.contains_key(*t)) {
                errors.push(format!(
                    "{id}: its evidence lists {test}, which does not name it"
                ));
            }
        } else {
            errors.push(format!("{id}: no evidence in verification/"));
        }
    }
    assert!(
        errors.is_empty(),
        "The evidence in verification/ is out of date (`python3 ci/summary.py` rewrites it):\n{}",
        errors.join("\n")
    );
}

/// The checker itself: a test without `Checks:` is rejected, IDs and
/// qualifiers are parsed from a `Checks:` paragraph over several lines,
/// a malformed entry is refused, cfg attributes are seen, and a test in an
/// inline module (whose libtest name would gain a segment) is refused.
///
/// Checks: V-1.
#[test]
fn checker_parses_and_rejects() {
    let source = "/// Does a thing.\n///\n/// Checks: Q-1, Q-2 (weaker: capacity 2,\n/// so one item).\n#[cfg(not(loom))]\n#[test]\nfn thing() {}\n";
    assert_eq!(
        tests_in("t", source),
        vec![Test {
            name: "t::thing".to_string(),
            checks: vec![
                Check {
                    id: "Q-1".to_string(),
                    weaker: None
                },
                Check {
                    id: "Q-2".to_string(),
                    weaker: Some("capacity 2, so one item".to_string())
                },
            ],
            std_only: false,
            not_loom: true,
        }]
    );
    for bad in [
        "Q-1 Q-2.",
        "Q-1 (stronger: x).",
        "q-1.",
        "Q-1 (weaker: ).",
        "Q-1,, Q-2.",
    ] {
        assert!(checks_in(bad).is_err(), "accepted `Checks: {bad}`");
    }
    let missing = "/// Does a thing.\n#[test]\nfn thing() {}\n";
    assert!(std::panic::catch_unwind(|| tests_in("t", missing)).is_err());
    let nested = "mod inner {\n    /// Checks: Q-1.\n    #[test]\n    fn thing() {}\n}\n";
    assert!(std::panic::catch_unwind(|| tests_in("t", nested)).is_err());
}

/// Every test that VERIFICATION.md, the README or a comment of the code
/// names in backquotes (`queue::basic`) exists: a renamed or removed test
/// does not live on in prose. A span naming a function of the library
/// (`oneshot::channel`) is not a test's name.
///
/// Checks: V-1.
#[test]
fn every_test_the_documents_name_exists() {
    let tests: BTreeSet<String> = all_tests().into_iter().map(|(_, t)| t.name).collect();
    let modules: BTreeSet<String> = tests
        .iter()
        .map(|t| t.split("::").next().unwrap().to_string())
        .collect();
    let mut files: Vec<PathBuf> = ["VERIFICATION.md", "README.md"]
        .iter()
        .map(|f| Path::new(ROOT).join(f))
        .collect();
    for dir in ["src", "models", "specs", "proptests", "benches"] {
        rust_files(&Path::new(ROOT).join(dir), &mut files);
    }
    let library_fn = |module: &str, name: &str| {
        let mut sources = Vec::new();
        rust_files(&Path::new(ROOT).join("src").join(module), &mut sources);
        sources.push(Path::new(ROOT).join(format!("src/{module}.rs")));
        sources.iter().any(|f| {
            fs::read_to_string(f).is_ok_and(|text| {
                ["(", "<"]
                    .iter()
                    .any(|open| text.contains(&format!("fn {name}{open}")))
            })
        })
    };
    let mut unknown = BTreeSet::new();
    for file in files {
        let text = fs::read_to_string(&file).unwrap();
        // Spans within a line: a code fence's backquotes then stay apart.
        for span in text
            .lines()
            .flat_map(|line| line.split('`').skip(1).step_by(2))
        {
            let Some((module, name)) = span.split_once("::") else {
                continue;
            };
            let plain = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if plain
                && modules.contains(module)
                && !tests.contains(span)
                && !library_fn(module, name)
            {
                let rel = file.strip_prefix(ROOT).unwrap().display().to_string();
                unknown.insert(format!("{rel}: {span}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "these name tests that do not exist: {unknown:?}"
    );
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

/// Every test has its entry in `verification/` (its status, its rerun
/// command and, for a loom model, its recorded result line: written by
/// `ci/summary.py`), and every entry names a test.
///
/// Checks: V-3.
#[test]
fn every_test_has_its_evidence_entry() {
    let doc = read_verification_md();
    let tests: BTreeSet<String> = all_tests().into_iter().map(|(_, t)| t.name).collect();
    let missing: Vec<_> = tests.difference(&doc.entries).collect();
    let unknown: Vec<_> = doc.entries.difference(&tests).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "verification/ is out of date (run `python3 ci/summary.py`): tests without an entry \
         {missing:?}, entries for no test {unknown:?}"
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

/// Source files that may name std's synchronisation types: the shim itself
/// and this file, which spells the forbidden paths out. (The model harness,
/// which counts across executions outside the model with std's types, is
/// the `modelsync-check` crate in `check/`, outside the folders looked at.)
const MAY_NAME_STD_SYNC: &[&str] = &["src/sync/", "proptests/verification.rs", "build.rs"];

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
/// are named only in `src/sync` (and the harness crate, `check/`), so every
/// primitive and every model goes through the shim.
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
