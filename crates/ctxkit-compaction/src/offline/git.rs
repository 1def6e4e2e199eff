//! What git commands and their output tell about the work: the branches it was done on, and which
//! commands merely list commits made earlier (so their hashes are not commits of this session).

use crate::offline::work::command_core;

/// Git verbs whose output lists existing commits (`git log --oneline`, `git show`).
const LISTING_VERBS: [&str; 6] = ["log", "show", "reflog", "rev-list", "shortlog", "blame"];

/// Whether `command` runs a git command whose output lists commits made before it.
pub(crate) fn lists_commits(command: &str) -> bool {
    let mut tokens = command.split_whitespace();
    while let Some(token) = tokens.next() {
        if token == "git"
            && tokens
                .clone()
                .find(|word| !word.starts_with('-'))
                .is_some_and(|verb| LISTING_VERBS.contains(&verb))
        {
            return true;
        }
    }
    false
}

/// Branch names seen in git commands and their output, and the ones the work was done on: created
/// (`git checkout -b`, `git switch -c`), pushed upstream (`git push -u origin x`) or committed on.
#[derive(Debug, Default)]
pub(crate) struct Branches {
    seen: Vec<String>,
    worked_on: Vec<String>,
    /// The branch the last checkout or switch went to, unless work was done on it since.
    last_switch: Option<String>,
}

/// Whether a word after `git checkout` names a file rather than a branch: a name with a file
/// extension (`Cargo.toml`, `src/main.rs`); a version-like branch (`release/2.1`) is not one.
fn looks_like_path(name: &str) -> bool {
    let last = name.rsplit('/').next().unwrap_or(name);
    last.rsplit_once('.').is_some_and(|(stem, extension)| {
        !stem.is_empty()
            && !extension.is_empty()
            && extension.len() <= 5
            && extension.chars().all(|c| c.is_ascii_alphabetic())
    })
}

/// Branches a session goes back to when it leaves its work (the project's base branches).
const BASE_BRANCHES: &[&str] = &["main", "master", "develop", "development", "trunk"];

fn accept(name: &str) -> bool {
    // `git push origin v0.8.0` pushes a tag.
    let version = name
        .trim_start_matches('v')
        .starts_with(|character: char| character.is_ascii_digit());
    !name.is_empty() && !version && !name.starts_with(['-', '$', '.']) && name != "HEAD"
}

fn push(list: &mut Vec<String>, name: &str) {
    if accept(name) && !list.iter().any(|existing| existing == name) {
        list.push(name.to_owned());
    }
}

impl Branches {
    fn add(&mut self, name: &str, worked_on: bool) {
        push(&mut self.seen, name);
        if worked_on {
            push(&mut self.worked_on, name);
            if self.last_switch.as_deref() == Some(name) {
                self.last_switch = None;
            }
        }
    }

    /// A checkout of or switch to an existing branch.
    fn switch(&mut self, name: &str) {
        self.add(name, false);
        self.last_switch = Some(name.to_owned());
    }

    /// The branch a commit of the session was made on.
    pub(crate) fn committed_on(&mut self, name: &str) {
        self.add(name, true);
    }

    /// Branch names from a git command line.
    pub(crate) fn read_command(&mut self, command: &str) {
        let core = command_core(command);
        let mut tokens = core.split_whitespace();
        while let Some(token) = tokens.next() {
            if token != "git" {
                continue;
            }
            let Some(verb) = tokens.next() else { break };
            let arguments: Vec<&str> = tokens
                .clone()
                .take_while(|word| !matches!(*word, "&&" | ";" | "|"))
                .collect();
            let flagged = |flags: &[&str]| arguments.iter().any(|word| flags.contains(word));
            let rest: Vec<&str> = arguments
                .iter()
                .copied()
                .filter(|word| !word.starts_with('-'))
                .collect();
            match verb {
                // `git checkout main -- Cargo.toml` and `git checkout Cargo.toml` restore files:
                // no branch is switched to.
                "checkout" | "switch"
                    if !arguments.contains(&"--")
                        && rest.len() == 1
                        && !rest.iter().any(|name| looks_like_path(name)) =>
                {
                    if let Some(name) = rest.first() {
                        if flagged(&["-b", "-B", "-c", "-C", "--create"]) {
                            self.add(name, true);
                        } else {
                            self.switch(name);
                        }
                    }
                }
                "push" => {
                    if let Some(name) = rest.get(1) {
                        let upstream = flagged(&["-u", "--set-upstream"]);
                        self.add(name.trim_start_matches("HEAD:"), upstream);
                    }
                }
                _ => {}
            }
        }
    }

    /// Branch names from git's output (`On branch x`, `Switched to a new branch 'x'`).
    pub(crate) fn read_output(&mut self, output: &str) {
        for line in output.lines() {
            let line = line.trim();
            for (prefix, created) in [
                ("On branch ", false),
                ("Switched to a new branch ", true),
                ("Switched to branch ", false),
            ] {
                if let Some(name) = line.strip_prefix(prefix) {
                    let name = name.trim_matches(['\'', '"']);
                    if prefix == "Switched to branch " {
                        self.switch(name);
                    } else {
                        self.add(name, created);
                    }
                }
            }
        }
    }

    /// The branches worth naming, in order of first appearance: the ones the work was done on when
    /// there are any (a branch merely checked out, or the base a PR targets, is not where the work
    /// is), else every branch seen.
    pub(crate) fn into_list(self) -> Vec<String> {
        if self.worked_on.is_empty() {
            self.seen
        } else {
            self.worked_on
        }
    }

    /// The base branch (`main`) the session switched back to at its end, when no work was done on
    /// it: in the summary of a branch being left, that is where the user returns, not the branch
    /// of the work.
    pub(crate) fn returned_to(&self) -> Option<String> {
        self.last_switch
            .clone()
            .filter(|name| BASE_BRANCHES.contains(&name.as_str()) && !self.worked_on.contains(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listing_commands_are_told_from_others() {
        for command in [
            "git log --oneline -3",
            "git status && git log --oneline -3",
            "cd infra && terraform workspace show && git log -5",
            "git --no-pager show HEAD~1",
        ] {
            assert!(lists_commits(command), "{command}");
        }
        for command in [
            "git commit -m \"log parsing\"",
            "git status",
            "cargo test log",
            "git push -u origin show-more",
        ] {
            assert!(!lists_commits(command), "{command}");
        }
    }

    #[test]
    fn branches_worked_on_replace_the_ones_merely_seen() {
        let mut branches = Branches::default();
        branches.read_command("git checkout main && git pull");
        branches.read_output("On branch develop\nnothing to commit");
        branches
            .read_command("cd x && git checkout -b fix/parser && git push -u origin fix/parser");
        branches.read_command("git switch main");
        assert_eq!(branches.into_list(), ["fix/parser"]);

        let mut branches = Branches::default();
        branches.read_output("On branch develop");
        branches.read_output("[feature/x 1a2b3c4] message\nSwitched to a new branch 'spike/y'");
        branches.committed_on("feature/x");
        assert_eq!(branches.into_list(), ["spike/y", "feature/x"]);
    }

    #[test]
    fn without_work_on_a_branch_every_branch_seen_is_kept() {
        let mut branches = Branches::default();
        branches.read_command("git checkout release/2.1 && git push origin v2.1.0 HEAD");
        branches.read_output("On branch main");
        assert_eq!(branches.into_list(), ["release/2.1", "main"]);
    }

    #[test]
    fn restoring_files_names_no_branch() {
        let mut branches = Branches::default();
        branches.read_command("git checkout main -- Cargo.toml");
        branches.read_command("git checkout -- src/lib.rs && git status");
        branches.read_command("git checkout package.json && git checkout release/2.1");
        branches.read_command("git checkout HEAD~1 src/a.rs src/b.rs");
        assert_eq!(branches.into_list(), ["release/2.1"]);
    }

    #[test]
    fn the_base_branch_gone_back_to_at_the_end_is_told_apart() {
        let mut branches = Branches::default();
        branches.read_command("git checkout perf/size");
        branches.read_command("git checkout Cargo.toml && git checkout main");
        branches.read_output("Switched to branch 'main'");
        assert_eq!(branches.returned_to().as_deref(), Some("main"));

        // Work done on the base branch after the switch keeps it.
        let mut branches = Branches::default();
        branches.read_command("git switch main");
        branches.committed_on("main");
        assert_eq!(branches.returned_to(), None);

        // A feature branch switched to is where the work is.
        let mut branches = Branches::default();
        branches.read_command("git switch feat/export");
        assert_eq!(branches.returned_to(), None);
    }
}
