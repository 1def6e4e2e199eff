//! Differential conformance: ctxkit against what Pi returned for the committed corpora, regenerated
//! by `conformance/regenerate.sh`: Pi 0.73.1 on `corpus/` (`vectors/`), Pi 0.87.1 on `corpus/`
//! (`vectors-087/`) and on `corpus-087/` (`vectors-corpus-087/`), Pi 1.6.0 (today's reference) on
//! `corpus-16/` (`vectors-corpus-16/`). Pi 1.6.0's answers on `corpus/` and `corpus-087/` are
//! byte-for-byte 0.87.1's (its session layer did not change; `regenerate.sh` records them again
//! and fails if they differ), so `vectors-087/` and `vectors-corpus-087/` are 1.6.0's too. Every
//! deliberate divergence is asserted here as ctxkit's own behaviour and listed in
//! `docs/pi-compatibility.md`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ctxkit_protocol::repair_lone_surrogates;
use ctxkit_session::{
    ContextForm, DiagnosticKind, LeafSelector, Session, SessionError, read_session_info,
};
use serde_json::{Value, json};

fn conformance_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../conformance")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    serde_json::from_str(&repair_lone_surrogates(&text)).unwrap()
}

/// Numbers compared as doubles (JavaScript has no other kind); absent keys in `optional` read as null.
fn normalize(value: &Value) -> Value {
    match value {
        Value::Number(number) => number.as_f64().map_or(Value::Null, |float| json!(float)),
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| (key.clone(), normalize(value)))
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::String(_) => value.clone(),
    }
}

/// Replaces reference ids by ours (migration makes fresh random ids on both sides).
fn map_ids(value: &Value, ids: &HashMap<String, String>) -> Value {
    match value {
        Value::String(text) => ids
            .get(text)
            .map_or_else(|| value.clone(), |id| Value::String(id.clone())),
        Value::Array(items) => Value::Array(items.iter().map(|item| map_ids(item, ids)).collect()),
        Value::Object(object) => Value::Object(
            object
                .iter()
                .map(|(key, value)| {
                    (
                        ids.get(key).cloned().unwrap_or_else(|| key.clone()),
                        map_ids(value, ids),
                    )
                })
                .collect(),
        ),
        Value::Null | Value::Bool(_) | Value::Number(_) => value.clone(),
    }
}

struct Checker {
    file: String,
    failures: Vec<String>,
    /// The categories (`context`, `llm`, `tree`, `info`, `load`) with a mismatch in this file.
    failed: std::collections::BTreeSet<&'static str>,
}

impl Checker {
    fn same(&mut self, what: &str, ours: &Value, reference: &Value) {
        let (ours, reference) = (normalize(ours), normalize(reference));
        if ours != reference {
            let category = if what.ends_with(": llm") {
                "llm"
            } else if what.starts_with("context") || what.starts_with("branch") {
                "context"
            } else if what == "tree" {
                "tree"
            } else if what.starts_with("info") {
                "info"
            } else {
                "load"
            };
            self.failed.insert(category);
            self.failures.push(format!(
                "{}: {what}\n    ctxkit:    {ours}\n    reference: {reference}",
                self.file
            ));
        }
    }

    fn fail(&mut self, message: String) {
        self.failed.insert("load");
        self.failures.push(message);
    }
}

/// Files Pi overwrites with a fresh header (data loss); ctxkit refuses them and leaves them untouched.
/// (Pi 0.87.1 only appends a missing final newline, which is no loss.)
fn reference_destroys(vector: &Value, kind: &str, original: &[u8]) -> bool {
    let repaired_only = !original.is_empty()
        && vector["load"]["rewrittenContent"]
            .as_str()
            .is_some_and(|content| content.as_bytes().starts_with(original));
    kind == "bad" && vector["load"]["rewritten"] == json!(true) && !repaired_only
}

/// Checks every file of `corpus` against `vectors`; returns the mismatches and a pass-count line.
fn check_corpus(corpus: &str, vectors: &str) -> (Vec<String>, String) {
    let dir = conformance_dir();
    let manifest = read_json(&dir.join(corpus).join("manifest.json"));
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut failed_by_category: HashMap<&'static str, usize> = HashMap::new();
    for item in manifest.as_array().unwrap() {
        let file = item["file"].as_str().unwrap();
        let kind = item["kind"].as_str().unwrap();
        let stem = file.trim_end_matches(".jsonl");
        let vector = read_json(&dir.join(vectors).join(format!("{stem}.json")));
        let source = dir.join(corpus).join(file);
        let mut checker = Checker {
            file: file.to_owned(),
            failures: Vec::new(),
            failed: Default::default(),
        };
        check_file(&mut checker, &source, &vector, kind);
        for category in &checker.failed {
            *failed_by_category.entry(category).or_default() += 1;
        }
        failures.append(&mut checker.failures);
        checked += 1;
    }
    let counts = ["load", "context", "llm", "tree", "info"]
        .iter()
        .map(|category| {
            let failed = failed_by_category.get(category).copied().unwrap_or(0);
            format!("{category} {}/{checked}", checked - failed)
        })
        .collect::<Vec<_>>()
        .join(", ");
    (failures, format!("{corpus} vs {vectors}: {counts}"))
}

fn assert_corpus(corpus: &str, vectors: &str, minimum: usize) {
    let (failures, counts) = check_corpus(corpus, vectors);
    #[expect(
        clippy::print_stderr,
        reason = "the pass counts, shown with --nocapture"
    )]
    {
        eprintln!("{counts}");
    }
    let files = read_json(&conformance_dir().join(corpus).join("manifest.json"))
        .as_array()
        .map_or(0, Vec::len);
    assert!(files >= minimum, "corpus too small: {files}");
    assert!(
        failures.is_empty(),
        "{counts}\n{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn ctxkit_matches_the_reference_on_the_corpus() {
    assert_corpus("corpus", "vectors", 30);
}

#[test]
fn ctxkit_matches_pi_087_on_the_corpus() {
    assert_corpus("corpus", "vectors-087", 30);
}

#[test]
fn ctxkit_matches_pi_087_on_its_new_entries() {
    assert_corpus("corpus-087", "vectors-corpus-087", 10);
}

#[test]
fn ctxkit_matches_pi_16_on_the_files_for_its_changes() {
    assert_corpus("corpus-16", "vectors-corpus-16", 6);
}

fn check_file(checker: &mut Checker, source: &Path, vector: &Value, kind: &str) {
    let before = std::fs::read(source).unwrap();
    let opened = Session::open(source);
    assert_eq!(
        std::fs::read(source).unwrap(),
        before,
        "{}: opening modified the file",
        checker.file
    );

    if checker.file == "bad-versionless-tree.jsonl" {
        // Pi re-migrates it as v1 (new ids, flattened); ctxkit keeps its tree.
        let session = opened.unwrap();
        let original: Vec<String> = String::from_utf8(before)
            .unwrap()
            .lines()
            .skip(1)
            .map(|line| {
                serde_json::from_str::<Value>(line).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .collect();
        let ours: Vec<&str> = session.entries().iter().map(|entry| entry.id()).collect();
        assert_eq!(ours, original, "ids must survive");
        return;
    }
    let refused_by_087 = vector["load"]["error"]
        .as_str()
        .is_some_and(|error| error.contains("is not a valid pi session"));
    if kind == "bom" {
        // Pi 0.87.1 refuses a file that starts with a byte-order mark; ctxkit reads it (0.73.1 did).
        match opened {
            Ok(session) => assert!(
                !session.entries().is_empty(),
                "{}: the BOM file must be read",
                checker.file
            ),
            Err(error) => checker.fail(format!("{}: BOM file refused: {error}", checker.file)),
        }
        return;
    }
    if reference_destroys(vector, kind, &before) || refused_by_087 {
        match opened {
            Err(SessionError::NotASession { .. }) => return,
            other => {
                checker.fail(format!(
                    "{}: expected a refusal, got {other:?}",
                    checker.file
                ));
                return;
            }
        }
    }
    let session = match opened {
        Ok(session) => session,
        Err(error) => {
            checker.fail(format!("{}: failed to open: {error}", checker.file));
            return;
        }
    };
    if vector["load"].get("error").is_some() {
        // Pi crashes on a `null` line; ctxkit skips it and reports it.
        assert!(
            session
                .diagnostics()
                .iter()
                .any(|diagnostic| diagnostic.kind == DiagnosticKind::NotAnObject),
            "{}: the null line must be reported",
            checker.file
        );
        return;
    }
    let load = &vector["load"];
    // Pi keeps lines that are not objects with an id as id-less entries (and tree roots); ctxkit skips
    // and reports them. Compare what remains.
    let has_id = |value: &&Value| value.get("id").is_some_and(Value::is_string);
    let reference_entries: Vec<Value> = load["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(has_id)
        .cloned()
        .collect();
    // Legacy files get fresh ids on both sides; map the reference's onto ours by position.
    let mut ids = HashMap::new();
    if kind == "legacy" {
        assert_eq!(
            reference_entries.len(),
            session.entries().len(),
            "{}: entry count",
            checker.file
        );
        for (reference, ours) in reference_entries.iter().zip(session.entries()) {
            if let Some(id) = reference["id"].as_str() {
                ids.insert(id.to_owned(), ours.id().to_owned());
            }
        }
    }
    let mapped = |value: &Value| map_ids(value, &ids);

    let header = serde_json::to_value(session.header()).unwrap();
    checker.same("header", &header, &load["header"]);
    let ours: Vec<Value> = session
        .entries()
        .iter()
        .map(|entry| ctxkit_protocol::from_str_repaired(&entry.raw().unwrap()).unwrap())
        .collect();
    checker.same(
        "entries",
        &Value::Array(ours),
        &mapped(&Value::Array(reference_entries)),
    );
    checker.same(
        "leafId",
        &json!(session.leaf_id()),
        &mapped(&load["leafId"]),
    );
    checker.same(
        "sessionName",
        &json!(session.session_name()),
        &load["sessionName"],
    );
    for (target, label) in load["labels"].as_object().unwrap() {
        let target = ids.get(target).cloned().unwrap_or_else(|| target.clone());
        checker.same(
            &format!("label of {target}"),
            &json!(session.label(&target)),
            label,
        );
    }

    let hangs = vector
        .get("skippedLeaves")
        .is_some_and(|skipped| skipped.as_array().is_some_and(|list| !list.is_empty()));
    if !hangs {
        let tree = serde_json::to_value(session.tree_record().nodes).unwrap();
        let reference_tree: Vec<Value> = vector["tree"]
            .as_array()
            .unwrap()
            .iter()
            .filter(has_id)
            .map(|node| {
                let mut node = mapped(node);
                for key in ["parentId", "role", "label"] {
                    node.as_object_mut()
                        .unwrap()
                        .entry(key)
                        .or_insert(Value::Null);
                }
                node
            })
            .collect();
        checker.same("tree", &tree, &Value::Array(reference_tree));
    }

    for context in vector["contexts"].as_array().unwrap() {
        let leaf = mapped(&context["leafId"]);
        let selector = match leaf.as_str() {
            None => LeafSelector::BeforeFirst,
            Some("__default__") => LeafSelector::Current,
            Some(id) => LeafSelector::Entry(id),
        };
        let what = format!("context at {leaf}");
        let record = session
            .context_record(selector, ContextForm::Session)
            .unwrap();
        checker.same(
            &format!("{what}: messages"),
            &Value::Array(record.messages),
            &mapped(&context["messages"]),
        );
        checker.same(
            &format!("{what}: thinkingLevel"),
            &json!(record.thinking_level),
            &context["thinkingLevel"],
        );
        checker.same(
            &format!("{what}: model"),
            &serde_json::to_value(&record.model).unwrap(),
            &context["model"],
        );
        let llm = session.context_record(selector, ContextForm::Llm).unwrap();
        checker.same(
            &format!("{what}: llm"),
            &Value::Array(llm.messages),
            &mapped(&context["llm"]),
        );
    }

    if let Some(branches) = vector["branches"].as_object() {
        for (id, path) in branches {
            let id = ids.get(id).cloned().unwrap_or_else(|| id.clone());
            let ours: Vec<&str> = session
                .branch_path(Some(&id))
                .iter()
                .map(|entry| entry.id())
                .collect();
            checker.same(&format!("branch to {id}"), &json!(ours), &mapped(path));
        }
    }

    if let Some(info) = vector["info"].as_object() {
        let ours = serde_json::to_value(read_session_info(source).unwrap()).unwrap();
        for key in [
            "id",
            "cwd",
            "name",
            "parentSessionPath",
            "created",
            "modified",
            "messageCount",
            "firstMessage",
        ] {
            checker.same(
                &format!("info.{key}"),
                &ours[key],
                info.get(key).unwrap_or(&Value::Null),
            );
        }
    }
}
