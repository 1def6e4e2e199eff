//! The system prompt against Pi 1.6.0's, on the cases of `conformance/prompt-cases-16.json`:
//! `conformance/vectors-prompt-16.json` holds what Pi's `buildSystemPrompt` built for each
//! (`conformance/record-prompts.mjs` records it:
//! `PI_DIR=<dir with node_modules/@earendil-works/pi-coding-agent@1.6.0> node conformance/record-prompts.mjs`).
//! With a custom prompt (`SYSTEM.md`) ctxkit's prompt is Pi's, byte for byte. Without one, each
//! has its own default: Pi's preamble and its `tools`, `rules` and `docs` sections are Pi's
//! (docs/pi-compatibility.md), and everything after them is the same.

use std::path::{Path, PathBuf};

use ctxkit_resources::{
    ContextFile, Skill, SystemPromptParts, assemble_system_prompt, format_skills_for_prompt,
};
use serde_json::Value;

const DEFAULT_PROMPT: &str = "DEFAULT PROMPT OF CTXKIT";

/// Pi's sections that only its default prompt has.
const PI_DEFAULT_ONLY: [&str; 4] = ["preamble", "tools", "rules", "docs"];

fn conformance(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../conformance")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

fn text(value: &Value) -> String {
    value.as_str().unwrap().to_owned()
}

fn skill(value: &Value) -> Skill {
    let file_path = PathBuf::from(text(&value["filePath"]));
    Skill {
        name: text(&value["name"]),
        description: text(&value["description"]),
        base_dir: file_path.parent().unwrap().to_owned(),
        file_path,
        disable_model_invocation: value["disableModelInvocation"].as_bool().unwrap_or(false),
        metadata: None,
    }
}

fn ctxkit_prompt(case: &Value) -> String {
    let append: Vec<String> = case["append"]
        .as_array()
        .unwrap()
        .iter()
        .map(text)
        .collect();
    let context_files: Vec<ContextFile> = case["contextFiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| ContextFile {
            path: PathBuf::from(text(&file["path"])),
            content: text(&file["content"]),
        })
        .collect();
    let skills: Vec<Skill> = case["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(skill)
        .collect();
    let custom_prompt = case["customPrompt"].as_str();
    let skills_block = format_skills_for_prompt(&skills);
    let cwd = PathBuf::from(text(&case["cwd"]));
    assemble_system_prompt(&SystemPromptParts {
        default_prompt: DEFAULT_PROMPT,
        custom_prompt,
        append: &append,
        context_files: &context_files,
        skills_block: &skills_block,
        cwd: &cwd,
    })
}

/// Pi's prompt with its default preamble sections replaced by ctxkit's default prompt, when the
/// case has no custom prompt of its own.
fn expected(case: &Value, pi: &Value) -> String {
    let custom = case["customPrompt"]
        .as_str()
        .filter(|custom| !custom.is_empty());
    let Some(custom) = custom else {
        let mut pieces = vec![DEFAULT_PROMPT.to_owned()];
        for section in pi["sections"].as_array().unwrap() {
            if !PI_DEFAULT_ONLY.contains(&section["name"].as_str().unwrap()) {
                pieces.push(text(&section["text"]));
            }
        }
        return pieces.join("\n\n");
    };
    assert_eq!(pi["sections"][0]["text"], custom);
    text(&pi["prompt"])
}

#[test]
fn the_system_prompt_is_what_pi_builds_of_each_case() {
    let cases = conformance("prompt-cases-16.json");
    let vectors = conformance("vectors-prompt-16.json");
    let cases = cases["cases"].as_array().unwrap();
    let results = vectors["results"].as_array().unwrap();
    assert_eq!(
        cases.len(),
        results.len(),
        "record-prompts.mjs is out of date"
    );
    for (case, pi) in cases.iter().zip(results) {
        let name = case["name"].as_str().unwrap();
        assert_eq!(pi["name"], name, "record-prompts.mjs is out of date");
        assert_eq!(ctxkit_prompt(case), expected(case, pi), "case `{name}`");
    }
}
