//! The jail against the attacks it exists for.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use super::*;
use crate::testing::owned_by_another_user;

mod races;

/// A home holding a project, ctxkit's home and a credential beside it.
struct Scene {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn scene() -> Scene {
    let dir = tempfile::tempdir().unwrap();
    let home = std::fs::canonicalize(dir.path()).unwrap();
    let project = home.join("project");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "fn main() {}").unwrap();
    std::fs::create_dir_all(home.join(".ctxkit")).unwrap();
    std::fs::write(
        home.join(".ctxkit/settings.json"),
        "{\"apiKey\":\"sk-secret\"}",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE KEY").unwrap();
    Scene {
        _dir: dir,
        home,
        project,
    }
}

fn jail_on(root: &Path, scene: &Scene) -> Jail {
    let mut jail = Jail::open_bare(root).unwrap();
    jail.deny(&scene.home.join(".ctxkit"));
    jail.deny_always(&scene.home.join(".ssh"));
    jail
}

#[test]
fn reads_inside_the_root() {
    let scene = scene();
    let jail = jail_on(&scene.project, &scene);
    let text = jail.read_to_string(Path::new("src/lib.rs"), 1024).unwrap();
    assert_eq!(text, "fn main() {}");
    let absolute = scene.project.join("src/lib.rs");
    assert_eq!(jail.read(&absolute, 1024).unwrap().1, 12);
    let mut names: Vec<_> = jail.read_dir(Path::new("")).unwrap();
    names.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        names,
        [DirEntry {
            name: "src".into(),
            is_dir: true
        }]
    );
}

#[test]
fn symlinks_and_dot_dots_out_of_the_root_are_refused() {
    let scene = scene();
    symlink(scene.home.join(".ssh/id_rsa"), scene.project.join("key")).unwrap();
    symlink("../.ctxkit/settings.json", scene.project.join("AGENTS.md")).unwrap();
    symlink(&scene.home, scene.project.join("up")).unwrap();
    let jail = jail_on(&scene.project, &scene);
    for attack in [
        "key",
        "AGENTS.md",
        "up/.ssh/id_rsa",
        "../.ssh/id_rsa",
        "src/../../.ctxkit/settings.json",
    ] {
        let error = jail.read(Path::new(attack), 1024).unwrap_err();
        assert!(
            matches!(error, JailError::Escapes { .. } | JailError::Denied { .. }),
            "{attack}: {error}"
        );
    }
    let error = jail
        .read(&scene.home.join(".ssh/id_rsa"), 1024)
        .unwrap_err();
    assert!(matches!(error, JailError::Outside { .. }), "{error}");
}

#[test]
fn with_the_project_at_home_ctxkit_and_credentials_stay_closed() {
    let scene = scene();
    symlink(".ctxkit/settings.json", scene.home.join("AGENTS.md")).unwrap();
    symlink(".ssh", scene.home.join("keys")).unwrap();
    let jail = jail_on(&scene.home, &scene);
    for attack in [
        ".ctxkit/settings.json",
        "AGENTS.md",
        ".ssh/id_rsa",
        "keys/id_rsa",
        "project/../.ssh/id_rsa",
    ] {
        let error = jail.read(Path::new(attack), 1024).unwrap_err();
        assert!(
            matches!(error, JailError::Denied { .. }),
            "{attack}: {error}"
        );
    }
    assert!(jail.read_dir(Path::new(".ctxkit")).is_err());
    assert!(jail.is_denied(Path::new(".ctxkit/sessions")));
    let error = jail
        .write_atomic(Path::new(".ctxkit/settings.json"), b"{}")
        .unwrap_err();
    assert!(matches!(error, JailError::Denied { .. }), "{error}");
    assert!(
        std::fs::read_to_string(scene.home.join(".ctxkit/settings.json"))
            .unwrap()
            .contains("sk-secret")
    );
    // A jail on ctxkit's own agent folder reads its files; credentials stay closed there too.
    let agent = scene.home.join(".ctxkit/agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("AGENTS.md"), "global").unwrap();
    symlink(
        scene.home.join(".ssh/id_rsa"),
        agent.join("APPEND_SYSTEM.md"),
    )
    .unwrap();
    let own = jail_on(&agent, &scene);
    assert_eq!(
        own.read_to_string(Path::new("AGENTS.md"), 64).unwrap(),
        "global"
    );
    assert!(own.read(Path::new("APPEND_SYSTEM.md"), 64).is_err());
    let keys = jail_on(&scene.home.join(".ssh"), &scene);
    assert!(matches!(
        keys.read(Path::new("id_rsa"), 64).unwrap_err(),
        JailError::Denied { .. }
    ));
}

#[test]
fn very_deep_and_very_long_paths_are_refused_without_resolving() {
    let scene = scene();
    let jail = jail_on(&scene.project, &scene);
    let deep: PathBuf = std::iter::repeat_n("a", 20_000)
        .collect::<PathBuf>()
        .join("x.txt");
    assert!(matches!(
        jail.read(&deep, 1).unwrap_err(),
        JailError::TooDeep { .. } | JailError::TooLong { .. }
    ));
    let deep: PathBuf = std::iter::repeat_n("a", MAX_DEPTH + 1).collect();
    assert!(matches!(
        jail.read(&deep, 1).unwrap_err(),
        JailError::TooDeep { .. }
    ));
    assert!(matches!(
        jail.write_atomic(&deep, b"x").unwrap_err(),
        JailError::TooDeep { .. }
    ));
}

#[test]
fn special_files_are_not_read_and_never_block() {
    let scene = scene();
    let fifo = scene.project.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let jail = jail_on(&scene.project, &scene);
    assert!(matches!(
        jail.read(Path::new("pipe"), 10).unwrap_err(),
        JailError::NotRegular { .. }
    ));
    assert!(matches!(
        jail.read(Path::new("src"), 10).unwrap_err(),
        JailError::NotRegular { .. }
    ));
}

#[test]
fn writes_replace_atomically_and_leave_nothing_on_failure() {
    let scene = scene();
    let jail = jail_on(&scene.project, &scene);
    jail.write_atomic(Path::new("new/dir/file.txt"), b"hello")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(scene.project.join("new/dir/file.txt")).unwrap(),
        "hello"
    );
    // A symlink at the name is replaced, not followed out of the root.
    symlink(
        scene.home.join("outside.txt"),
        scene.project.join("link.txt"),
    )
    .unwrap();
    jail.write_atomic(Path::new("link.txt"), b"inside").unwrap();
    assert!(!scene.home.join("outside.txt").exists());
    // A directory at the name: refused, nothing left behind.
    assert!(jail.write_atomic(Path::new("src"), b"x").is_err());
    let names: Vec<_> = std::fs::read_dir(&scene.project)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".tmp"))
        .collect();
    assert!(names.is_empty(), "{names:?}");
    // A parent that is a symlink out of the root: refused, nothing written outside.
    symlink(&scene.home, scene.project.join("escape")).unwrap();
    assert!(
        jail.write_atomic(Path::new("escape/evil.txt"), b"x")
            .is_err()
    );
    assert!(!scene.home.join("evil.txt").exists());
}

#[test]
fn remove_file_stays_beneath_the_root_and_refuses_folders() {
    let scene = scene();
    let jail = jail_on(&scene.project, &scene);
    jail.write_atomic(Path::new("made.txt"), b"x").unwrap();
    jail.remove_file(Path::new("made.txt")).unwrap();
    assert!(!scene.project.join("made.txt").exists());
    assert!(jail.remove_file(Path::new("src")).is_err());
    assert!(scene.project.join("src/lib.rs").exists());
    // A parent that is a symlink out of the root: refused, the file outside stays.
    std::fs::write(scene.home.join("keep.txt"), "keep").unwrap();
    symlink(&scene.home, scene.project.join("escape")).unwrap();
    assert!(jail.remove_file(Path::new("escape/keep.txt")).is_err());
    assert!(scene.home.join("keep.txt").exists());
    // A denied place: refused.
    let home_jail = jail_on(&scene.home, &scene);
    assert!(
        home_jail
            .remove_file(Path::new(".ctxkit/settings.json"))
            .is_err()
    );
    assert!(scene.home.join(".ctxkit/settings.json").exists());
}

/// Issue (QA): on a shared machine another user's `/tmp/AGENTS.md` reached the system prompt of
/// anyone working under `/tmp`. A file read from above the project must be the user's or root's,
/// judged on the opened file.
#[test]
fn a_file_of_another_user_is_not_read_where_ownership_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("AGENTS.md");
    std::fs::write(&file, "planted").unwrap();
    let own = LocalUsers::of_process();
    assert_eq!(read_in_folder_owned(&file, 100, &own).unwrap(), "planted");
    let users = owned_by_another_user(&[&file]);
    let error = read_in_folder_owned(&file, 100, &users).unwrap_err();
    assert!(matches!(error, JailError::OtherOwner { .. }), "{error}");
    assert!(
        error.to_string().contains("belongs to another user"),
        "{error}"
    );
    // Plain reads do not ask.
    assert_eq!(read_in_folder(&file, 100).unwrap(), "planted");
    // A link another user made to the user's own file is refused by the link's owner.
    let link = dir.path().join("CLAUDE.md");
    let target = dir.path().join("mine.md");
    std::fs::write(&target, "mine").unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let users = owned_by_another_user(&[&link]);
    assert!(matches!(
        read_in_folder_owned(&link, 100, &users),
        Err(JailError::OtherOwner { .. })
    ));
}

/// QA (second round): `ln ~/.ssh/id_rsa notes.txt` in the project (an approved command, a build
/// script, an unpacked archive) and `read notes.txt` showed the key without a question: the
/// descriptor's real path is the project's name. A file with several names is refused when one of
/// them lies in a denied place; one linked within the project is read; a write replaces the
/// project's name and never reaches the linked file.
#[test]
fn a_hard_link_to_a_denied_file_is_refused_by_any_name() {
    let scene = scene();
    let jail = jail_on(&scene.project, &scene);
    std::fs::hard_link(
        scene.home.join(".ssh/id_rsa"),
        scene.project.join("notes.txt"),
    )
    .unwrap();
    std::fs::hard_link(
        scene.home.join(".ctxkit/settings.json"),
        scene.project.join("src/config.json"),
    )
    .unwrap();
    std::fs::hard_link(
        scene.project.join("src/lib.rs"),
        scene.project.join("copy.rs"),
    )
    .unwrap();
    let error = jail.read(Path::new("notes.txt"), 1024).unwrap_err();
    assert!(matches!(error, JailError::HardLink { .. }), "{error:?}");
    assert!(error.is_denied_place());
    let shown = error.to_string();
    assert!(shown.contains("is a hard link to"), "{shown}");
    assert!(shown.contains(".ssh/id_rsa"), "{shown}");
    let error = jail
        .read_to_string(Path::new("src/config.json"), 1024)
        .unwrap_err();
    assert!(matches!(error, JailError::HardLink { .. }), "{error:?}");
    assert_eq!(
        jail.read_to_string(Path::new("copy.rs"), 1024).unwrap(),
        "fn main() {}"
    );
    // A jail on ctxkit's own folder reads its files, hard links or not.
    let own = jail_on(&scene.home.join(".ctxkit"), &scene);
    assert!(own.read(Path::new("settings.json"), 1024).is_ok());
    jail.write_atomic(Path::new("notes.txt"), b"replaced")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(scene.home.join(".ssh/id_rsa")).unwrap(),
        "PRIVATE KEY"
    );
}

/// QA r98: resource files saved with a byte-order mark (skills, prompt templates, context files,
/// themes) are read without it, as Pi 1.6 reads them; a mark inside the text stays.
#[test]
fn resource_reads_drop_a_leading_byte_order_mark() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("SKILL.md");
    std::fs::write(&file, "\u{feff}---\nname: x\n---\n\u{feff}").unwrap();
    assert_eq!(
        read_in_folder(&file, 100).unwrap(),
        "---\nname: x\n---\n\u{feff}"
    );
    let own = LocalUsers::of_process();
    assert_eq!(
        read_in_folder_owned(&file, 100, &own).unwrap(),
        "---\nname: x\n---\n\u{feff}"
    );
}

/// The denied places looked at for a path beneath the root are those beneath it or holding it
/// (QA r99, for speed): a root inside a credential place still opens nothing, and a place denied
/// after the first check is looked at too.
#[test]
fn places_near_the_root_are_all_that_can_deny_and_all_are_kept() {
    let scene = scene();
    std::fs::create_dir_all(scene.home.join(".ssh/inner")).unwrap();
    std::fs::write(scene.home.join(".ssh/inner/config"), "Host x").unwrap();
    let jail = jail_on(&scene.home.join(".ssh/inner"), &scene);
    let error = jail.read(Path::new("config"), 1024).unwrap_err();
    assert!(matches!(error, JailError::Denied { .. }), "{error}");
    let mut jail = jail_on(&scene.project, &scene);
    assert!(!jail.is_denied(Path::new("src/lib.rs")));
    jail.deny(&scene.project.join("src"));
    assert!(jail.is_denied(Path::new("src/lib.rs")));
    assert!(jail.read(Path::new("src/lib.rs"), 1024).is_err());
}

#[test]
fn a_name_stored_decomposed_is_found_by_its_composed_spelling_and_the_other_way() {
    // QA r107: macOS stores `Café-Übersicht.md` decomposed (NFD) and the model asks for it
    // composed (NFC); `read` said no such file, and a write made a second file beside it.
    let scene = scene();
    let decomposed = "Cafe\u{301}-U\u{308}bersicht.md";
    std::fs::write(scene.project.join(decomposed), "# Übersicht").unwrap();
    std::fs::create_dir(scene.project.join("re\u{301}sume\u{301}")).unwrap();
    std::fs::write(scene.project.join("Ünïcode.md"), "composed").unwrap();
    let jail = jail_on(&scene.project, &scene);
    let composed = Path::new("Café-Übersicht.md");
    assert_eq!(jail.read_to_string(composed, 1024).unwrap(), "# Übersicht");
    assert!(jail.is_file(composed) && jail.is_dir(Path::new("résumé")));
    assert!(jail.read_dir(Path::new("résumé")).unwrap().is_empty());
    let asked = "U\u{308}ni\u{308}code.md";
    assert_eq!(
        jail.read_to_string(Path::new(asked), 1024).unwrap(),
        "composed"
    );
    jail.write_atomic(composed, b"# neu").unwrap();
    assert_eq!(
        std::fs::read_to_string(scene.project.join(decomposed)).unwrap(),
        "# neu"
    );
    assert!(!scene.project.join("Café-Übersicht.md").exists());
    // A name stored in neither spelling is still not found.
    assert!(jail.read(Path::new("Crème.md"), 1024).is_err());
}

#[test]
fn the_other_spelling_of_a_name_reaches_no_further_than_the_first() {
    let scene = scene();
    // Outside the project: a file in NFD beside it, and a folder a link in NFD leads to.
    std::fs::write(scene.home.join("Cafe\u{301}.md"), "outside").unwrap();
    std::fs::create_dir(scene.home.join("elsewhere")).unwrap();
    std::fs::write(scene.home.join("elsewhere/notes.md"), "outside").unwrap();
    symlink(
        scene.home.join("elsewhere"),
        scene.project.join("Re\u{301}sume\u{301}"),
    )
    .unwrap();
    symlink(scene.home.join(".ssh"), scene.project.join("cle\u{301}s")).unwrap();
    let jail = jail_on(&scene.project, &scene);
    for path in [
        "../Café.md",
        "Résumé/notes.md",
        "clés/id_rsa",
        "src/../../Café.md",
    ] {
        assert!(jail.read(Path::new(path), 1024).is_err(), "{path}");
        assert!(!jail.is_file(Path::new(path)), "{path}");
    }
    assert!(jail.read_dir(Path::new("Résumé")).is_err());
    // A write by the composed name is not led out by the link's decomposed one: it makes the
    // composed folder in the project, as it did before spellings were retried.
    jail.write_atomic(Path::new("Résumé/notes.md"), b"x")
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(scene.project.join("Résumé/notes.md")).unwrap(),
        "x"
    );
    assert_eq!(
        std::fs::read_to_string(scene.home.join("elsewhere/notes.md")).unwrap(),
        "outside"
    );
}
