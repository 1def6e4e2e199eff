//! `docs/protocol.md` against the server: its method table lists every method `initialize`
//! reports, each once, and nothing else; the files it names exist.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::server::start_with;

fn repository() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The methods of the `## Methods` table, in order (duplicates kept).
fn documented_methods(text: &str) -> Vec<String> {
    let section = text
        .split("\n## Methods\n")
        .nth(1)
        .expect("docs/protocol.md has a `## Methods` section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(method, _)| method.to_owned())
        .collect()
}

#[tokio::test]
async fn the_protocol_doc_lists_every_method_of_the_server_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut client = start_with(dir.path(), None);
    let init = client.call("initialize", Value::Null).await;
    let served: BTreeSet<String> = init["result"]["methods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|method| method.as_str().unwrap().to_owned())
        .collect();
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let listed = documented_methods(&text);
    let unique: BTreeSet<String> = listed.iter().cloned().collect();
    assert_eq!(
        listed.len(),
        unique.len(),
        "a method listed twice: {listed:?}"
    );
    assert_eq!(
        unique, served,
        "docs/protocol.md's method table and the server differ"
    );
}

#[test]
fn the_protocol_doc_names_only_files_that_exist() {
    let text = std::fs::read_to_string(repository().join("docs/protocol.md")).unwrap();
    let named: Vec<&str> = text
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|span| span.starts_with("crates/"))
        .collect();
    assert!(!named.is_empty());
    for path in named {
        assert!(
            repository().join(path).exists(),
            "docs/protocol.md names `{path}`, which does not exist"
        );
    }
}

#[test]
fn a_repeated_method_is_caught() {
    let text = "intro\n## Methods\n\n| method | params |\n|---|---|\n| `a` | x |\n| `a` | y |\n\n## Next\n| `b` | z |\n";
    assert_eq!(documented_methods(text), ["a", "a"]);
}
