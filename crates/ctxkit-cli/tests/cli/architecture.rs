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
    // `commands/settings.rs` reads them once per process; every command gets that value (and
    // it reads another project's for `serve`'s runs, `settings_of_project`).
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
        "#[doc(hidden)]\npub type HiddenAlias = EngineSettingsError;\n",
    );
    write(
        "ctxkit-agent/src/lib.rs",
        "pub use ctxkit_engine::Engine;\n",
    );
    write(
        "ctxkit-resources/src/lib.rs",
        "pub use ::ctxkit_settings::SettingsManager;\n",
    );
    assert_eq!(
        second_paths(crates.path()),
        [
            "ctxkit-engine/src/deep/settings.rs:1: #[doc(hidden)]",
            "ctxkit-llm/src/lib.rs:2: pub use ctxkit_overflow::*;",
            "ctxkit-resources/src/lib.rs:1: pub use ::ctxkit_settings::SettingsManager;",
        ]
    );
}

/// `source` with the text of comments, string literals and character literals blanked (newlines
/// kept), so braces and `fn` in them do not count as code.
fn code_only(source: &str) -> Vec<u8> {
    let bytes = source.as_bytes();
    let mut code = bytes.to_vec();
    let blank = |code: &mut Vec<u8>, from: usize, to: usize| {
        for byte in &mut code[from..to.min(bytes.len())] {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
    };
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        if rest.starts_with(b"//") {
            let end = rest
                .iter()
                .position(|&byte| byte == b'\n')
                .map_or(bytes.len(), |n| at + n);
            blank(&mut code, at, end);
            at = end;
        } else if rest.starts_with(b"/*") {
            let end = source[at + 2..]
                .find("*/")
                .map_or(bytes.len(), |n| at + 2 + n + 2);
            blank(&mut code, at, end);
            at = end;
        } else if let Some(hashes) = raw_string_start(rest) {
            let open = rest.iter().position(|&byte| byte == b'"').unwrap_or(0) + 1;
            let close = format!("\"{}", "#".repeat(hashes));
            let end = source[at + open..]
                .find(&close)
                .map_or(bytes.len(), |n| at + open + n + close.len());
            blank(&mut code, at, end);
            at = end;
        } else if rest[0] == b'"' {
            let mut end = at + 1;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            blank(&mut code, at, end + 1);
            at = end + 1;
        } else if rest[0] == b'\'' {
            // A character literal ('x', '\n', '\u{1F600}', '{'), not a lifetime ('a).
            let close = if rest.get(1) == Some(&b'\\') {
                rest.iter()
                    .skip(2)
                    .position(|&byte| byte == b'\'')
                    .map(|n| n + 2)
            } else {
                let width = source[at + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(1 + width) == Some(&b'\'')).then_some(1 + width)
            };
            match close {
                Some(close) => {
                    blank(&mut code, at, at + close + 1);
                    at += close + 1;
                }
                None => at += 1,
            }
        } else {
            at += 1;
        }
    }
    code
}

/// The number of `#` of a raw string literal starting at `rest` (`r"`, `r#"`, `br##"`…), if any.
fn raw_string_start(rest: &[u8]) -> Option<usize> {
    let after_prefix = rest
        .strip_prefix(b"br")
        .or_else(|| rest.strip_prefix(b"r"))?;
    let hashes = after_prefix
        .iter()
        .take_while(|&&byte| byte == b'#')
        .count();
    (after_prefix.get(hashes) == Some(&b'"')).then_some(hashes)
}

/// The index of the brace that closes the one at `open`.
fn closing_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (at, &byte) in code.iter().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return at;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// `(name, first line, lines)` of each function with a body in `source`, outside `#[cfg(test)]`
/// modules.
fn function_lengths(source: &str) -> Vec<(String, usize, usize)> {
    let code = code_only(source);
    let text = String::from_utf8_lossy(&code).into_owned();
    let mut test_modules = Vec::new();
    for (at, _) in text.match_indices("#[cfg(test)]") {
        let after = text[at + "#[cfg(test)]".len()..].trim_start();
        if after.starts_with("mod ") || after.starts_with("pub(crate) mod ") {
            let open = at + text[at..].find('{').unwrap_or(0);
            test_modules.push(at..closing_brace(&code, open));
        }
    }
    let line_of = |at: usize| code[..at].iter().filter(|&&byte| byte == b'\n').count() + 1;
    let mut found = Vec::new();
    for (at, _) in text.match_indices("fn ") {
        let word_start = at == 0 || !(code[at - 1].is_ascii_alphanumeric() || code[at - 1] == b'_');
        if !word_start || test_modules.iter().any(|module| module.contains(&at)) {
            continue;
        }
        let name: String = text[at + 3..]
            .chars()
            .take_while(|character| character.is_alphanumeric() || *character == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body's brace: the first `{` outside the parameters' parentheses, unless a `;` ends
        // a declaration first.
        let mut depth = 0i32;
        let mut body = None;
        for (offset, &byte) in code[at..].iter().enumerate() {
            match byte {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b';' if depth == 0 => break,
                b'{' if depth == 0 => {
                    body = Some(at + offset);
                    break;
                }
                _ => {}
            }
        }
        if let Some(open) = body {
            let first = line_of(at);
            found.push((name, first, line_of(closing_brace(&code, open)) - first + 1));
        }
    }
    found
}

/// Functions longer than `limit` lines in the workspace crates' `src`, outside tests.
fn long_functions(crates: &Path, limit: usize) -> Vec<String> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(crates).unwrap() {
        let source_dir = entry.unwrap().path().join("src");
        if source_dir.is_dir() {
            files.extend(rust_files(&source_dir));
        }
    }
    let mut found = Vec::new();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy();
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (function, line, lines) in function_lengths(&text) {
            if lines > limit {
                let relative = file.strip_prefix(crates).unwrap().display();
                found.push(format!("{relative}:{line}: `{function}` has {lines} lines"));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn no_function_outside_tests_is_longer_than_150_lines() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    assert_eq!(long_functions(&crates, 150), Vec::<String>::new());
}

#[test]
fn function_lengths_ignore_braces_in_text_and_test_modules() {
    let source = r####"
/// Has { in a comment.
fn short(value: &[u8; 2]) -> char {
    let text = "}}} fn fake() {";
    let raw = r#"" } "#;
    let brace = '{';
    let escaped = '\'';
    brace
}

trait Declared {
    fn declared(&self) -> usize;
}

fn generic<'a, T: Fn() -> &'a str>(make: T) -> &'a str {
    /* } */
    make()
}

#[cfg(test)]
mod tests {
    fn helper() {
    }
}
"####;
    assert_eq!(
        function_lengths(source),
        [("short".to_owned(), 3, 7), ("generic".to_owned(), 15, 4)]
    );
}

/// `file:line` of each read of the process environment (`std::env::var`, `var_os`, `vars`,
/// `vars_os`) in the binary's sources other than `cli.rs`, which declares every variable.
fn environment_reads_outside_cli(source_dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(source_dir) {
        if file == source_dir.join("cli.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = String::from_utf8_lossy(&code_only(&text)).into_owned();
        for (number, line) in code.lines().enumerate() {
            if line.contains("env::var") {
                let relative = file.strip_prefix(source_dir).unwrap().display();
                found.push(format!("{relative}:{}", number + 1));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn only_cli_rs_reads_environment_variables_in_the_binary() {
    let source_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    assert_eq!(
        environment_reads_outside_cli(&source_dir),
        Vec::<String>::new()
    );
}

#[test]
fn an_environment_read_outside_cli_rs_is_found() {
    let source_dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(source_dir.path().join("commands")).unwrap();
    std::fs::write(
        source_dir.path().join("cli.rs"),
        "fn color() -> bool { std::env::var_os(\"NO_COLOR\").is_none() }\n",
    )
    .unwrap();
    std::fs::write(
        source_dir.path().join("commands/ui.rs"),
        "// std::env::var in a comment\nfn color() -> bool {\n    std::env::var_os(\"NO_COLOR\").is_none()\n}\n",
    )
    .unwrap();
    assert_eq!(
        environment_reads_outside_cli(source_dir.path()),
        ["commands/ui.rs:3"]
    );
}

/// The public fields of `struct_name` in `source` (a `pub struct … { pub field: Type, … }`).
fn public_fields(source: &str, struct_name: &str) -> Vec<String> {
    let start = source
        .find(&format!("pub struct {struct_name} {{"))
        .unwrap_or_else(|| panic!("no `pub struct {struct_name}`"));
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    body.lines()
        .filter_map(|line| line.trim().strip_prefix("pub "))
        .filter_map(|field| {
            field
                .split_once(':')
                .map(|(name, _)| name.trim().to_owned())
        })
        .filter(|name| !name.starts_with("struct"))
        .collect()
}

#[test]
fn the_embedding_guide_names_every_agent_and_engine_option() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let guide = std::fs::read_to_string(root.join("docs/embedding.md")).unwrap();
    for (file, options) in [
        ("crates/ctxkit-agent/src/agent.rs", "AgentOptions"),
        ("crates/ctxkit-engine/src/engine.rs", "EngineOptions"),
    ] {
        let source = std::fs::read_to_string(root.join(file)).unwrap();
        let fields = public_fields(&source, options);
        assert!(fields.len() >= 6, "{options}: {fields:?}");
        let listed = guide
            .split(&format!("{options} {{"))
            .nth(1)
            .and_then(|rest| rest.split('}').next())
            .unwrap_or_else(|| panic!("docs/embedding.md writes `{options} {{ … }}`"));
        let listed: Vec<&str> = listed
            .split(',')
            .map(|name| name.trim())
            .filter(|name| !name.is_empty())
            .collect();
        let mut missing: Vec<&String> = fields
            .iter()
            .filter(|field| !listed.contains(&field.as_str()))
            .collect();
        missing.sort();
        assert!(
            missing.is_empty(),
            "docs/embedding.md's `{options}` leaves out {missing:?}"
        );
    }
}
