//! Skills, frontmatter-driven prompt templates and argument substitution.

use std::path::{Path, PathBuf};

use ctxkit_packages::ResourceDiagnostic;
use ctxkit_resources::{
    Skill, expand_prompt_template, expand_skill_command, format_skills_for_prompt,
    load_prompt_templates, load_skill_file, load_skills, parse_command_args, substitute_args,
};

use crate::common::{World, write};

fn skill(dir: &Path, name: &str, frontmatter: &str) -> PathBuf {
    let path = dir.join(name).join("SKILL.md");
    write(&path, &format!("---\n{frontmatter}\n---\nBody"));
    path
}

fn messages(diagnostics: &[ResourceDiagnostic]) -> Vec<String> {
    diagnostics
        .iter()
        .map(ResourceDiagnostic::message)
        .collect()
}

/// Skill files with valid, missing, too long or mismatched names and descriptions load or are
/// skipped, each with the warning that says why.
#[test]
fn skill_files_load_or_are_skipped_with_the_expected_warning() {
    let world = World::new();
    let dir = world.root.join("skills");
    let long_name = "a".repeat(65);
    let long_description = "d".repeat(1025);
    // (directory, frontmatter, loaded, expected message fragment or "" for none)
    let cases: Vec<(&str, String, bool, &str)> = vec![
        (
            "valid-skill",
            "name: valid-skill\ndescription: ok".into(),
            true,
            "",
        ),
        // Pi 1.6 neither requires nor warns about a name other than the folder's (QA r98).
        (
            "name-mismatch",
            "name: different-name\ndescription: ok".into(),
            true,
            "",
        ),
        (
            "invalid-name-chars",
            "name: Invalid_Name\ndescription: ok".into(),
            true,
            "invalid characters",
        ),
        (
            "long-name",
            format!("name: {long_name}\ndescription: ok"),
            true,
            "exceeds 64 characters (65)",
        ),
        (
            "consecutive-hyphens",
            "name: bad--name\ndescription: ok".into(),
            true,
            "consecutive hyphens",
        ),
        (
            "-bad-",
            "description: ok".into(),
            true,
            "must not start or end with a hyphen",
        ),
        (
            "missing-description",
            "name: missing-description".into(),
            false,
            "description is required",
        ),
        (
            "unknown-field",
            "name: unknown-field\ndescription: ok\nlicense: MIT\nallowed-tools: [a]".into(),
            true,
            "",
        ),
        (
            "long-description",
            format!("name: long-description\ndescription: {long_description}"),
            true,
            "description exceeds 1024 characters (1025)",
        ),
        // Loaded under its folder's name, as Pi 1.6 loads it (QA r98: it was dropped).
        (
            "numeric-name",
            "name: 123\ndescription: ok".into(),
            true,
            "",
        ),
    ];
    for (directory, frontmatter, loaded, fragment) in cases {
        let path = skill(&dir, directory, &frontmatter);
        let (skill, diagnostics) = load_skill_file(&path);
        if directory == "numeric-name" {
            assert_eq!(
                skill.as_ref().map(|s| s.name.as_str()),
                Some("numeric-name")
            );
        }
        assert_eq!(skill.is_some(), loaded, "{directory}: {diagnostics:?}");
        let messages = messages(&diagnostics);
        if fragment.is_empty() {
            assert!(messages.is_empty(), "{directory}: {messages:?}");
        } else {
            assert!(
                messages.iter().any(|message| message.contains(fragment)),
                "{directory}: {messages:?}"
            );
        }
    }
    let path = dir.join("no-frontmatter/SKILL.md");
    write(&path, "just text");
    let (skill, diagnostics) = load_skill_file(&path);
    assert!(skill.is_none());
    assert_eq!(messages(&diagnostics), vec!["description is required"]);
    let (skill, _) = load_skill_file(&skill_path_with(&dir, "name-mismatch"));
    assert_eq!(skill.unwrap().name, "different-name");
}

fn skill_path_with(dir: &Path, name: &str) -> PathBuf {
    dir.join(name).join("SKILL.md")
}

/// A skill whose frontmatter is not valid YAML is not loaded and yields exactly one warning.
#[test]
fn invalid_yaml_frontmatter_skips_the_skill_with_one_warning() {
    let world = World::new();
    let path = world.root.join("invalid-yaml/SKILL.md");
    write(
        &path,
        "---\nname: invalid-yaml\ndescription: [unclosed bracket\n---\nBody",
    );
    let (skill, diagnostics) = load_skill_file(&path);
    assert!(skill.is_none());
    assert_eq!(diagnostics.len(), 1);
    assert!(
        diagnostics[0].message().contains("at line"),
        "{diagnostics:?}"
    );
}

/// `disable-model-invocation: true` marks the skill and keeps it out of the system prompt's list.
#[test]
fn skills_with_model_invocation_disabled_are_left_out_of_the_prompt() {
    let world = World::new();
    let hidden = skill(
        &world.root,
        "hidden",
        "name: hidden\ndescription: d\ndisable-model-invocation: true",
    );
    let quoted = skill(
        &world.root,
        "quoted",
        "name: quoted\ndescription: d\ndisable-model-invocation: \"true\"",
    );
    let hidden = load_skill_file(&hidden).0.unwrap();
    let quoted = load_skill_file(&quoted).0.unwrap();
    assert!(hidden.disable_model_invocation);
    assert!(!quoted.disable_model_invocation);
    assert_eq!(format_skills_for_prompt(std::slice::from_ref(&hidden)), "");
    let block = format_skills_for_prompt(&[hidden, quoted]);
    assert!(
        block.contains("<name>quoted</name>") && !block.contains("<name>hidden</name>"),
        "{block}"
    );
}

/// The skills block of the system prompt escapes `&`, `<`, `>` and quotes in names, descriptions
/// and paths.
#[test]
fn the_skills_prompt_block_escapes_xml() {
    let skill = Skill {
        name: "a&b".into(),
        description: "it's <x>".into(),
        file_path: "/p/S.md".into(),
        base_dir: "/p".into(),
        disable_model_invocation: false,
        metadata: None,
    };
    let block = format_skills_for_prompt(&[skill]);
    let expected = "\n\nThe following skills provide specialized instructions for specific tasks.\nUse the read tool to load a skill's file when the task matches its description.\nResolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.\n\n<available_skills>\n  <skill>\n    <name>a&amp;b</name>\n    <description>it&apos;s &lt;x&gt;</description>\n    <location>/p/S.md</location>\n  </skill>\n</available_skills>";
    assert_eq!(block, expected);
}

/// Root-level skill files without a `name` are named after their directory (so they collide and the
/// first wins), and symlinked skill files are skipped.
#[test]
fn nameless_root_skill_files_collide_and_symlinks_are_skipped() {
    let world = World::new();
    let dir = world.root.join("skills");
    write(dir.join("a.md"), "---\ndescription: a\n---\n");
    write(dir.join("b.md"), "---\ndescription: b\n---\n");
    write(dir.join("c.md"), "---\nname: c\ndescription: c\n---\n");
    let set = load_skills(std::slice::from_ref(&dir), &world.cwd(), &world.env.home);
    let names: Vec<&str> = set.skills.iter().map(|skill| skill.name.as_str()).collect();
    assert_eq!(names, vec!["skills", "c"]);
    assert_eq!(set.skills[0].file_path, dir.join("a.md"));
    let collisions: Vec<&ResourceDiagnostic> = set
        .diagnostics
        .iter()
        .filter(|d| d.severity() == "collision")
        .collect();
    assert_eq!(collisions.len(), 1);
    assert!(
        collisions[0].message().starts_with("skill \"skills\": `"),
        "{:?}",
        collisions[0]
    );
    // A standalone `skills/c.md` has no folder of its own to match (QA r98).
    assert!(
        !messages(&set.diagnostics)
            .iter()
            .any(|message| message.contains("does not match parent directory")),
        "{:?}",
        set.diagnostics
    );
    #[cfg(unix)]
    {
        let other = world.root.join("other");
        std::fs::create_dir_all(&other).unwrap();
        std::os::unix::fs::symlink(dir.join("c.md"), other.join("link.md")).unwrap();
        let set = load_skills(&[dir, other.join("link.md")], &world.cwd(), &world.env.home);
        assert_eq!(set.skills.len(), 2);
        assert_eq!(
            set.diagnostics
                .iter()
                .filter(|d| d.severity() == "collision")
                .count(),
            1
        );
    }
}

/// `/skill:name args` expands to the skill's body wrapped with its location, followed by the
/// arguments.
#[test]
fn skill_commands_expand_to_the_skill_body_with_its_directory() {
    let world = World::new();
    let path = skill(&world.root, "foo", "name: foo\ndescription: d");
    write(&path, "---\nname: foo\ndescription: d\n---\nDo X");
    let skill = load_skill_file(&path).0.unwrap();
    let dir = path.parent().unwrap().display().to_string();
    let expanded =
        expand_skill_command("/skill:foo some args", std::slice::from_ref(&skill)).unwrap();
    assert_eq!(
        expanded.as_deref(),
        Some(format!("<skill name=\"foo\" location=\"{}\">\nReferences are relative to {dir}.\n\nDo X\n</skill>\n\nsome args", path.display()).as_str())
    );
    assert_eq!(
        expand_skill_command("/skill:unknown x", &[skill]).unwrap(),
        None
    );
}

/// A prompt template's record takes its description and argument hint from the frontmatter, or the
/// first non-empty line (cut to a limit) when there is none.
#[test]
fn prompt_templates_take_their_description_from_frontmatter_or_first_line() {
    let world = World::new();
    let dir = world.root.join("prompts");
    write(
        dir.join("review.md"),
        "---\ndescription: user\nargument-hint: \"<x>\"\n---\nUser body",
    );
    let long_line = "x".repeat(85);
    write(dir.join("long.md"), &format!("\n\n{long_line}\nmore"));
    let set = load_prompt_templates(&[dir], &world.cwd(), &world.env.home);
    let review = set.templates.iter().find(|t| t.name == "review").unwrap();
    assert_eq!(
        (
            review.description.as_str(),
            review.argument_hint.as_deref(),
            review.content.as_str()
        ),
        ("user", Some("<x>"), "User body")
    );
    let long = set.templates.iter().find(|t| t.name == "long").unwrap();
    assert_eq!(long.description, format!("{}...", "x".repeat(60)));
}

/// What Pi 1.6.0's own functions make of each input (`data/pi_template_args.mjs` wrote the file).
const PI_TEMPLATE_ARGS: &str = include_str!("data/pi_template_args.json");

fn pi_cases(section: &str) -> Vec<serde_json::Value> {
    let document: serde_json::Value = serde_json::from_str(PI_TEMPLATE_ARGS).unwrap();
    document[section].as_array().unwrap().clone()
}

fn string_list(value: &serde_json::Value) -> Vec<String> {
    serde_json::from_value(value.clone()).unwrap()
}

/// Placeholders (`$1`, `$@`, `$ARGUMENTS`, `${1:-default}`, `${@:-default}`, `${@:N:L}`, …) are
/// filled as Pi 1.6.0 fills them, in one pass: inserted text is never expanded again.
#[test]
fn template_arguments_fill_placeholders_as_pi_does() {
    let cases = pi_cases("substitute");
    assert!(cases.len() > 40);
    for case in cases {
        let template = case["template"].as_str().unwrap();
        let args = string_list(&case["args"]);
        assert_eq!(
            substitute_args(template, &args),
            case["output"].as_str().unwrap(),
            "{template:?} {args:?}"
        );
    }
}

/// Command arguments split as Pi 1.6.0 splits them: quotes open only at an argument's start, `\"`
/// inside double quotes is a quote, an empty quoted string is an argument, an unclosed quote is text.
#[test]
fn command_arguments_split_as_pi_does() {
    let cases = pi_cases("split");
    assert!(cases.len() > 40);
    for case in cases {
        let input = case["input"].as_str().unwrap();
        assert_eq!(
            parse_command_args(input),
            string_list(&case["args"]),
            "{input:?}"
        );
    }
}

/// The template's name ends at the first whitespace of any kind, as Pi 1.6.0's.
#[test]
fn a_template_name_ends_at_whitespace_as_pi_does() {
    let world = World::new();
    let dir = world.root.join("prompts");
    write(dir.join("t.md"), "[$1|$2]");
    let set = load_prompt_templates(&[dir], &world.cwd(), &world.env.home);
    for case in pi_cases("expand") {
        let input = case["input"].as_str().unwrap();
        let expected = case["output"].as_str().unwrap();
        let expanded = expand_prompt_template(input, &set.templates);
        assert_eq!(expanded.as_deref().unwrap_or(input), expected, "{input:?}");
        assert_eq!(expanded.is_some(), expected != input, "{input:?}");
    }
}

/// `/name args` expands the prompt template of that name with the parsed arguments; other text is
/// left as it is.
#[test]
fn slash_commands_expand_prompt_templates_with_their_arguments() {
    let world = World::new();
    let dir = world.root.join("prompts");
    write(dir.join("review.md"), "Review $1 then $@");
    write(
        dir.join("component.md"),
        "Create a React component named $1 with features: $ARGUMENTS",
    );
    let set = load_prompt_templates(&[dir], &world.cwd(), &world.env.home);
    let templates = &set.templates;
    assert_eq!(
        expand_prompt_template("/review a b", templates).as_deref(),
        Some("Review a then a b")
    );
    assert_eq!(
        expand_prompt_template("/review", templates).as_deref(),
        Some("Review  then ")
    );
    for unchanged in ["/reviewx a", " /review a"] {
        assert_eq!(
            expand_prompt_template(unchanged, templates),
            None,
            "{unchanged:?}"
        );
    }
    assert_eq!(
        expand_prompt_template(
            "/component Button \"onClick handler\" \"disabled support\"",
            templates
        )
        .as_deref(),
        Some(
            "Create a React component named Button with features: Button onClick handler disabled support"
        )
    );
}

/// QA (2026-12-07): a template the jail refuses (a hard link to ctxkit's own `auth.json`; here one
/// over the size limit) and a FIFO named `*.md` were dropped without a word, where a skill's are
/// warned about. Both are skipped and said; the ordinary template beside them loads.
#[test]
fn a_template_the_jail_refuses_or_that_is_no_file_is_skipped_with_a_warning() {
    let world = World::new();
    let dir = world.root.join("prompts");
    write(dir.join("ok.md"), "fine");
    // Over the jail's limit for a resource file: refused as a hard link into ctxkit's home is.
    let limit = usize::try_from(ctxkit_jail::MAX_RESOURCE_BYTES).unwrap();
    write(dir.join("huge.md"), &"x".repeat(limit + 1));
    let fifo = dir.join("pipe.md");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let set = load_prompt_templates(&[dir], &world.cwd(), &world.env.home);
    let names: Vec<&str> = set.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["ok"]);
    let said = messages(&set.diagnostics);
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said.iter()
            .any(|line| line.contains("Prompt template skipped: not a regular file")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|line| line.contains("Prompt template skipped:") && line.contains("huge.md")),
        "{said:?}"
    );
}
