//! `edit` against Pi 1.6.0's, on the cases of `conformance/edit-cases-16.json`:
//! `conformance/vectors-edit-16.json` holds what Pi's tool made of each (`record-edits.mjs`
//! records it). ctxkit makes the same file, or refuses where Pi refuses, except in the cases
//! marked `ctxkit` (its divergences, docs/pi-compatibility.md), which say what it does instead.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ctxkit_agent::{ToolContext, ToolRegistry, Workspace};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

fn conformance(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn context(project: &Path) -> ToolContext {
    ToolContext {
        cwd: project.to_owned(),
        output_dir: project.join(".outputs"),
        bash_timeout: Duration::from_secs(1),
        shell: Default::default(),
        pass_env: Vec::new(),
        cancel: CancellationToken::new(),
        engine: None,
        workspace: Arc::new(Workspace::new(project)),
        approved: ctxkit_agent::Approved::default(),
        auto_resize_images: true,
        max_output_bytes: 50 * 1024,
        progress: None,
    }
}

#[test]
fn edit_makes_what_pi_makes_of_each_case() {
    let cases = conformance("edit-cases-16.json");
    let vectors = conformance("vectors-edit-16.json");
    let cases = cases["cases"].as_array().unwrap();
    let results = vectors["results"].as_array().unwrap();
    assert_eq!(
        cases.len(),
        results.len(),
        "record-edits.mjs is out of date"
    );
    let registry = ToolRegistry::coding();
    let mut differences = Vec::new();
    for (case, pi) in cases.iter().zip(results) {
        let name = case["name"].as_str().unwrap();
        assert_eq!(pi["name"], name, "record-edits.mjs is out of date");
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file.txt");
        let before = case["file"].as_str().unwrap();
        std::fs::write(&file, before).unwrap();
        let mut arguments = case["arguments"].clone();
        arguments["path"] = Value::from("file.txt");
        let outcome = registry.run("edit", &arguments, "call", &context(dir.path()));
        let after = std::fs::read_to_string(&file).unwrap();
        let made = (!outcome.is_error).then_some(after.as_str());
        assert!(
            made.is_some() || after == before,
            "{name}: a refused edit changed the file"
        );
        let expected = match case.get("ctxkit") {
            Some(own) => own.as_str(),
            None => pi["ok"]
                .as_bool()
                .unwrap()
                .then(|| pi["file"].as_str().unwrap()),
        };
        if made != expected {
            differences.push(format!(
                "{name}: ctxkit {made:?} ({}), expected {expected:?}",
                outcome.text
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
