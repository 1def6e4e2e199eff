//! The jail against races: a folder swapped for a symlink while reads and writes run.

use std::os::unix::fs::symlink;
use std::path::Path;

use super::{jail_on, scene};
use crate::JailError;
use crate::testing::Swapper;

/// A folder of the project swapped back and forth for a symlink out of it while writes run (600
/// at least, and on until the race ran: some writes went into the folder, some were refused the
/// link): nothing lands outside.
#[test]
fn a_folder_swapped_for_a_symlink_during_writes_puts_nothing_outside() {
    let scene = scene();
    let outside = scene.home.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let jail = jail_on(&scene.project, &scene);
    let work = scene.project.join("work");
    let swapper = Swapper::folder_or_link(work.clone(), outside.clone());
    let (mut written, mut refused) = (0, 0);
    let started = std::time::Instant::now();
    let mut n = 0;
    while swapper.goes_on(n, 600, written > 0 && refused > 0, started) {
        match jail.write_atomic(&Path::new("work").join(format!("{n}.txt")), b"x") {
            Ok(()) => written += 1,
            // Beneath the root the link is no folder: `work` cannot be opened, nor made.
            Err(error) if !error.is_not_found() => refused += 1,
            Err(_) => {}
        }
        swapper.attempted();
        n += 1;
    }
    let swaps = swapper.stop();
    let leaked = std::fs::read_dir(&outside).unwrap().count();
    assert_eq!(leaked, 0, "files written outside the root");
    assert!(
        written > 0 && refused > 0 && swaps >= 100,
        "the race did not run in {n} writes ({swaps} swaps): {written} written, {refused} refused"
    );
}

/// QA (second round), the race on reads: a folder of the project swapped back and forth for a
/// symlink to ctxkit's home while `read` runs (600 times at least), through the project's jail and
/// through the whole-system jail an approved outside read uses. The secret never comes back:
/// beneath the project the link fails in the kernel, and the real path of what `/` opened is
/// denied. The race must have run: each jail read the decoy of the folder and was refused the
/// link (without the swapper's pause on the link, a loaded machine's reads met only the folder or
/// nothing, and the test proved nothing).
#[test]
fn a_folder_swapped_for_a_symlink_to_the_home_during_reads_reads_nothing_of_it() {
    let scene = scene();
    let work = scene.project.join("work");
    let swapper = Swapper::start(
        work.clone(),
        {
            // Whole at once (a read between the creation and the write saw it empty).
            let written = scene.project.join("decoy");
            move |work| {
                let _ = std::fs::remove_file(work);
                let _ = std::fs::create_dir(work);
                let _ = std::fs::write(&written, "decoy");
                let _ = std::fs::rename(&written, work.join("settings.json"));
            }
        },
        {
            let home = scene.home.join(".ctxkit");
            move |work| {
                let _ = std::fs::remove_dir_all(work);
                let _ = symlink(&home, work);
            }
        },
    );
    let jails = [
        jail_on(&scene.project, &scene),
        jail_on(Path::new("/"), &scene),
    ];
    let name = work.join("settings.json");
    let mut decoys = [0; 2];
    let mut refused = [0; 2];
    let raced = |decoys: &[usize; 2], refused: &[usize; 2]| {
        decoys.iter().chain(refused).all(|&count| count > 0)
    };
    let mut rounds = 0;
    let started = std::time::Instant::now();
    while swapper.goes_on(rounds, 600, raced(&decoys, &refused), started) {
        for (index, jail) in jails.iter().enumerate() {
            match jail.read(&name, 1024) {
                Ok((bytes, _)) => {
                    assert_eq!(bytes, b"decoy");
                    decoys[index] += 1;
                }
                Err(error @ (JailError::Escapes { .. } | JailError::Denied { .. })) => {
                    assert!(!format!("{error}").contains("sk-secret"));
                    refused[index] += 1;
                }
                Err(_) => {}
            }
        }
        swapper.attempted();
        rounds += 1;
    }
    let swaps = swapper.stop();
    assert!(
        raced(&decoys, &refused) && swaps >= 100,
        "the race did not run in {rounds} rounds ({swaps} swaps): decoys read {decoys:?}, links refused {refused:?}"
    );
}

/// QA (second round): a write is judged guarded by its name before it runs; a folder swapped for a
/// symlink into `.git` between that judgement and the write put the file in `.git/hooks`. A jail
/// given the guarded places judges the folder it opened for the write, so 600 writes while `work`
/// flips between a folder and a link to `.git/hooks` put nothing there.
#[test]
fn a_folder_swapped_for_a_link_into_git_during_guarded_writes_puts_nothing_there() {
    let scene = scene();
    let hooks = scene.project.join(".git/hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    let mut jail = jail_on(&scene.project, &scene);
    jail.guard_writes(
        &scene.project,
        &[scene.project.join("hook.sh")],
        &[".git", ".ctxkit"],
    );
    for path in [
        ".git/config",
        "sub/.GIT/config",
        "a/.ctxkit/settings.json",
        "hook.sh",
    ] {
        let error = jail.write_atomic(Path::new(path), b"x").unwrap_err();
        assert!(
            matches!(error, JailError::Guarded { .. }),
            "{path}: {error:?}"
        );
    }
    jail.write_atomic(Path::new("src/ok.rs"), b"x").unwrap();
    let work = scene.project.join("work");
    let swapper = Swapper::folder_or_link(work.clone(), ".git/hooks".into());
    // The race ran: some writes went into the folder, some were refused the link.
    let (mut written, mut guarded) = (0, 0);
    let started = std::time::Instant::now();
    let mut n = 0;
    while swapper.goes_on(n, 600, written > 0 && guarded > 0, started) {
        match jail.write_atomic(&Path::new("work").join(format!("pre-commit-{n}")), b"x") {
            Ok(()) => written += 1,
            Err(JailError::Guarded { .. }) => guarded += 1,
            Err(_) => {}
        }
        swapper.attempted();
        n += 1;
    }
    let swaps = swapper.stop();
    assert!(
        written > 0 && guarded > 0 && swaps >= 100,
        "the race did not run in {n} writes ({swaps} swaps): {written} written, {guarded} refused"
    );
    assert_eq!(std::fs::read_dir(&hooks).unwrap().count(), 0);
    // A jail on `/` (a write approved outside the project) guards the project's folders too, and
    // a guarded name outside it (QA 2026-12-07: an "always" for a folder outside covered its
    // repository's hooks); only a guarded name counts there.
    let mut system = jail_on(Path::new("/"), &scene);
    system.guard_writes(&scene.project, &[], &[".git"]);
    for guarded in [
        scene.project.join(".git/config"),
        scene.home.join("other/.git/config"),
    ] {
        let error = system.write_atomic(&guarded, b"x").unwrap_err();
        assert!(matches!(error, JailError::Guarded { .. }), "{error:?}");
    }
    system
        .write_atomic(&scene.home.join("other/notes.txt"), b"x")
        .unwrap();
}
