//! QA of resources, trust and packages: a trusted repository seen from a subfolder, a checkout an
//! interrupted clone left, what `list --json` says of a project's held entries, the notes of
//! `install -l`, and prompt templates named like chat commands.

use std::path::Path;
use std::process::Command;

use crate::resources::{World, git, skill};

/// `ctxkit` in `cwd` with the world's home; exit code, stdout and stderr, the root shown as `[ROOT]`.
fn ctxkit_in(world: &World, cwd: &Path, args: &[&str]) -> String {
    let mut command: Command = world.command(args);
    let output = command.current_dir(cwd).output().unwrap();
    let text = format!(
        "exit: {}\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    text.replace(&world.root.display().to_string(), "[ROOT]")
}

/// D1: after `ctxkit trust` at a repository's root, `ctxkit resources` in `repo/crates/foo` loads
/// the repository's `.agents/skills` (Pi 1.6 applies the nearest saved decision up the tree); a
/// nested project with hooks of its own there is not trusted by it, and its hooks do not run.
#[test]
fn a_trusted_repository_is_trusted_in_its_subfolders_for_what_it_showed() {
    let world = World::new();
    let repo = world.project();
    git(&world, &repo, &["init", "-q"]);
    world.write(
        "proj/.agents/skills/repo-skill/SKILL.md",
        &skill("repo-skill", "The repo skill"),
    );
    let subfolder = repo.join("crates/foo");
    std::fs::create_dir_all(&subfolder).unwrap();
    let before = ctxkit_in(&world, &subfolder, &["resources"]);
    assert!(before.contains("this project is not trusted"), "{before}");
    let trusted = ctxkit_in(&world, &repo, &["trust", "--yes"]);
    assert!(trusted.starts_with("exit: 0"), "{trusted}");
    let after = ctxkit_in(&world, &subfolder, &["resources"]);
    assert!(after.contains("  repo-skill  "), "{after}");
    assert!(!after.contains("not trusted"), "{after}");

    // Attack: a nested project in the trusted repository brings a hook of its own (resources
    // runs no hook; it says whether each would run).
    let marker = world.root.join("tmp/hook-ran");
    world.write(
        "proj/crates/foo/.ctxkit/settings.json",
        &serde_json::json!({"hooks": [{"command": ["touch", marker.display().to_string()]}]})
            .to_string(),
    );
    let nested = ctxkit_in(&world, &subfolder, &["resources"]);
    assert!(nested.contains("project, not trusted: not run"), "{nested}");
    assert!(!nested.contains("  repo-skill  "), "{nested}");
}

/// S1: `ctxkit list --json` keeps the project entries that wait for trust, saying so.
#[test]
fn list_json_names_the_project_entries_that_wait_for_trust() {
    let world = World::new();
    world.write(
        "proj/vendor/pkg/skills/vs/SKILL.md",
        &skill("vs", "Vendored"),
    );
    world.write(
        "proj/.ctxkit/settings.json",
        r#"{"packages":["npm:left-pad","../vendor/pkg"]}"#,
    );
    let listed = world.ctxkit(&["list", "--json"]);
    let json = listed
        .strip_prefix("exit: 0\n")
        .and_then(|text| text.split("--- stderr").next())
        .unwrap();
    let records: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        records,
        serde_json::json!([
            {"source": "../vendor/pkg", "scope": "project", "filtered": false,
             "installedPath": "[ROOT]/proj/vendor/pkg", "waitsForTrust": true,
             "heldBecause": null},
            {"source": "npm:left-pad", "scope": "project", "filtered": false,
             "installedPath": null, "waitsForTrust": true, "heldBecause": "runsCodeToInstall"},
        ]),
        "{listed}"
    );
    world.ctxkit(&["trust", "--yes"]);
    let trusted = world.ctxkit(&["list", "--json"]);
    assert!(!trusted.contains("\"waitsForTrust\": true"), "{trusted}");
    assert!(trusted.contains("npm:left-pad"), "{trusted}");
}

/// D2: `ctxkit install -l ./vendor/pkg` in an untrusted project says its skills wait for trust, as
/// a git or npm source's install does.
#[test]
fn install_local_of_a_path_in_an_untrusted_project_says_it_waits_for_trust() {
    let world = World::new();
    world.write(
        "proj/vendor/pkg/skills/vs/SKILL.md",
        &skill("vs", "Vendored"),
    );
    let installed = world.ctxkit(&["install", "-l", "./vendor/pkg"]);
    assert!(
        installed.contains(
            "note: `./vendor/pkg` waits for trust in this project (this project is not trusted)"
        ),
        "{installed}"
    );
    world.ctxkit(&["trust", "--yes"]);
    world.write("proj/other/skills/o/SKILL.md", &skill("o", "Other"));
    let trusted = world.ctxkit(&["install", "-l", "./other"]);
    // Trusted, the project's packages load (the place was trusted, as in Pi): no note.
    assert!(!trusted.contains("waits for trust"), "{trusted}");
}

/// D3: a `git clone` killed during an install leaves the checkout with only its `.git`. The next
/// `ctxkit resources` names it, and `ctxkit install` of the same source clones it again.
#[test]
fn an_interrupted_clone_is_cloned_again_and_named_until_then() {
    let world = World::new();
    world.write("repos/pack/skills/s1/SKILL.md", &skill("s1", "S one"));
    let repo = world.root.join("repos/pack");
    git(&world, &repo, &["init", "-q", "-b", "main"]);
    git(&world, &repo, &["add", "-A"]);
    git(&world, &repo, &["commit", "-q", "-m", "one"]);
    let source = format!("git:file://{}", repo.display());
    let installed = world.ctxkit(&["install", &source]);
    assert!(installed.starts_with("exit: 0"), "{installed}");
    // What a killed clone leaves: `.git` with the origin, no commit.
    let checkout = world.home().join(format!("git/file{}", repo.display()));
    std::fs::remove_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&checkout).unwrap();
    git(&world, &checkout, &["init", "-q"]);
    let origin = format!("file://{}", repo.display());
    git(&world, &checkout, &["remote", "add", "origin", &origin]);

    let named = world.ctxkit(&["resources"]);
    assert!(
        named.contains("is an incomplete checkout in `[ROOT]/home/git/file[ROOT]/repos/pack` (an install was interrupted): `ctxkit update` clones it again"),
        "{named}"
    );
    let again = world.ctxkit(&["install", &source]);
    assert!(again.starts_with("exit: 0"), "{again}");
    assert!(checkout.join("skills/s1/SKILL.md").is_file(), "{again}");
    let loaded = world.ctxkit(&["resources"]);
    assert!(loaded.contains("  s1  "), "{loaded}");
    // Nothing is left beside it.
    let siblings: Vec<_> = std::fs::read_dir(checkout.parent().unwrap())
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(siblings, [std::ffi::OsString::from("pack")]);

    // `ctxkit update` recovers the same way.
    std::fs::remove_dir_all(&checkout).unwrap();
    std::fs::create_dir_all(&checkout).unwrap();
    git(&world, &checkout, &["init", "-q"]);
    git(&world, &checkout, &["remote", "add", "origin", &origin]);
    let updated = world.ctxkit(&["update"]);
    assert!(updated.starts_with("exit: 0"), "{updated}");
    assert!(checkout.join("skills/s1/SKILL.md").is_file(), "{updated}");
}

/// S2: `npm:/abs/x-1.0.0.tgz` (Pi 1.6 takes it) is refused with the form ctxkit takes.
#[test]
fn a_tarball_by_path_names_the_form_to_install() {
    let world = World::new();
    let refused = world.ctxkit(&["install", "npm:/abs/np-1.0.0.tgz"]);
    assert!(refused.starts_with("exit: 3"), "{refused}");
    assert!(
        refused.contains("hint: install it as `ctxkit install npm:np@file:/abs/np-1.0.0.tgz`"),
        "{refused}"
    );
}

/// S3: a prompt template named like a chat command is listed, with a warning that the chat's own
/// command wins.
#[test]
fn a_prompt_template_named_like_a_chat_command_is_warned_of() {
    let world = World::new();
    world.write("home/prompts/model.md", "TEMPLATE MODEL BODY $1\n");
    world.write("home/prompts/review.md", "Review $@\n");
    let listed = world.ctxkit(&["resources"]);
    assert!(
        listed.contains(
            "Prompt template `/model` has the name of a chat command: `/model` in `ctxkit chat` \
             runs the command, never the template; rename the file to use it"
        ),
        "{listed}"
    );
    assert!(!listed.contains("`/review` has the name"), "{listed}");
}
