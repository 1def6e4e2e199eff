//! ARCHITECTURE.md's table of dependency edges is what `cargo metadata` says.

use std::collections::BTreeMap;
use std::path::Path;

/// Crate → its direct ctxkit dependencies (short names), from the table in ARCHITECTURE.md.
fn documented() -> BTreeMap<String, Vec<String>> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ARCHITECTURE.md");
    let text = std::fs::read_to_string(path).unwrap();
    let table = text
        .split("## Dependency edges")
        .nth(1)
        .expect("a `## Dependency edges` section");
    table
        .lines()
        .filter(|line| line.starts_with("| `ctxkit-"))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
            let name = cells[0].trim_matches('`').to_owned();
            let deps = match cells[1] {
                "—" => Vec::new(),
                list => list
                    .split(", ")
                    .map(|dep| format!("ctxkit-{dep}"))
                    .collect(),
            };
            (name, deps)
        })
        .collect()
}

fn actual() -> BTreeMap<String, Vec<String>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|package| {
            let mut deps: Vec<String> = package["dependencies"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|dep| dep["kind"].is_null())
                .filter_map(|dep| dep["name"].as_str())
                .filter(|name| name.starts_with("ctxkit-"))
                .map(str::to_owned)
                .collect();
            deps.sort();
            (package["name"].as_str().unwrap().to_owned(), deps)
        })
        .collect()
}

#[test]
fn the_documented_dependency_edges_are_the_real_ones() {
    assert_eq!(documented(), actual());
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_cli_plans_no_compaction_itself() {
    // What a compaction would cover is the engine's answer (`Engine::plan`), never the CLI's.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&source);
    assert!(files.len() > 10, "{files:?}");
    let planning: Vec<_> = files
        .iter()
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            text.contains("prepare_compaction") || text.contains("NoPlanReason")
        })
        .collect();
    assert!(planning.is_empty(), "{planning:?}");
}

#[test]
fn the_cli_reads_the_settings_files_in_one_place() {
    // `commands/settings.rs` reads them once per process; every command gets that value.
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let readers: Vec<_> = rust_files(&source)
        .into_iter()
        .filter(|file| {
            let text = std::fs::read_to_string(file).unwrap();
            text.contains("SettingsManager::load") || text.contains("Environment::from_process")
        })
        .collect();
    assert_eq!(readers, [source.join("commands/settings.rs")]);
}

/// `crate/path:line: text` of each line in a workspace crate's `src` (other than `ctxkit-agent`,
/// the embedder's entry crate) that re-exports a sibling's item or hides an item from the docs.
fn second_paths(crates: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let crate_dir = entry.unwrap().path();
        let name = crate_dir
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if name == "ctxkit-agent" || !crate_dir.join("src").is_dir() {
            continue;
        }
        for file in rust_files(&crate_dir.join("src")) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (number, line) in text.lines().enumerate() {
                let code = line.trim_start();
                let reexport = code.starts_with("pub use ")
                    && code["pub use ".len()..]
                        .trim_start_matches("::")
                        .starts_with("ctxkit_");
                if reexport || code.starts_with("#[doc(hidden)]") {
                    let relative = file.strip_prefix(crates).unwrap().display();
                    found.push(format!("{relative}:{}: {code}", number + 1));
                }
            }
        }
    }
    found.sort();
    found
}

#[test]
fn only_the_entry_crate_re_exports_a_sibling_and_nothing_is_hidden() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert_eq!(second_paths(&crates), Vec::<String>::new());
}

#[test]
fn a_re_export_facade_or_a_hidden_alias_is_found() {
    let crates = tempfile::tempdir().unwrap();
    let write = |relative: &str, text: &str| {
        let path = crates.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "ctxkit-llm/src/lib.rs",
        "mod overflow {\n    pub use ctxkit_overflow::*;\n}\npub use crate::chat::ChatRequest;\n",
    );
    write(
        "ctxkit-engine/src/deep/settings.rs",
        "#[doc(hidden)]\npub type SettingsError = EngineSettingsError;\n",
    );
    write(
        "ctxkit-agent/src/lib.rs",
        "pub use ctxkit_engine::Engine;\n",
    );
    write(
        "ctxkit-resources/src/lib.rs",
        "pub use ::ctxkit_settings::SettingsError;\n",
    );
    assert_eq!(
        second_paths(crates.path()),
        [
            "ctxkit-engine/src/deep/settings.rs:1: #[doc(hidden)]",
            "ctxkit-llm/src/lib.rs:2: pub use ctxkit_overflow::*;",
            "ctxkit-resources/src/lib.rs:1: pub use ::ctxkit_settings::SettingsError;",
        ]
    );
}
