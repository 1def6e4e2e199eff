//! Directory scans that decide which files are resources: skill entries, extension entries,
//! recursive and direct file collection, with `.gitignore`/`.ignore`/`.fdignore` honoured and
//! entries visited in byte order so "first wins" rules are deterministic.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use serde_json::Value;

use crate::folders::read_package_file;
use ctxkit_settings::ResourceKind;
use ctxkit_settings::{relative_path, resolve_against, to_slash};

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The ignore rules collected during one scan, all relative to the scan root (the reference's
/// quirk: nested patterns are prefixed with their directory and so become anchored).
#[derive(Debug)]
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Option<Gitignore>,
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: None,
        }
    }

    /// Adds the ignore files found in `directory`.
    pub(crate) fn add_directory(&mut self, directory: &Path) {
        let relative = to_slash(&relative_path(&self.root, directory));
        let prefix = if relative == "." {
            String::new()
        } else {
            format!("{relative}/")
        };
        let mut added = false;
        for name in IGNORE_FILE_NAMES {
            let Some(content) = read_package_file(&directory.join(name)) else {
                continue;
            };
            for line in content.lines() {
                if let Some(pattern) = prefix_pattern(line, &prefix) {
                    self.lines.push(pattern);
                    added = true;
                }
            }
        }
        if added {
            let mut builder = GitignoreBuilder::new(&self.root);
            for line in &self.lines {
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    /// Whether `path` (below the root) is ignored.
    pub(crate) fn is_ignored(&self, path: &Path, is_directory: bool) -> bool {
        self.matcher
            .as_ref()
            .is_some_and(|matcher| matcher.matched(path, is_directory).is_ignore())
    }
}

fn prefix_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let (negated, pattern) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (
            false,
            line.strip_prefix('\\')
                .filter(|rest| rest.starts_with('!'))
                .unwrap_or(line),
        ),
    };
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated {
        format!("!{prefixed}")
    } else {
        prefixed
    })
}

/// What a directory entry is, symlinks followed (`None`: broken link or unreadable).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryType {
    File,
    Directory,
    Other,
}

pub fn entry_type(path: &Path) -> Option<EntryType> {
    let metadata = fs::metadata(path).ok()?;
    Some(if metadata.is_file() {
        EntryType::File
    } else if metadata.is_dir() {
        EntryType::Directory
    } else {
        EntryType::Other
    })
}

/// Directory entries sorted by the raw bytes of their names (names that are not UTF-8 are
/// skipped).
pub fn sorted_entries(directory: &Path) -> Vec<(String, PathBuf)> {
    let Ok(read) = fs::read_dir(directory) else {
        return Vec::new();
    };
    let mut entries: Vec<(String, PathBuf)> = read
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            Some((name, entry.path()))
        })
        .collect();
    entries.sort_by(|left, right| left.0.as_bytes().cmp(right.0.as_bytes()));
    entries
}

/// The real folder a walk stays in: a folder whose real place (symlinks followed) lies outside it
/// is not walked into but listed as found, so the caller's confinement refuses it with one
/// warning. QA (2026-12-07): a project's `.agents/skills/root -> /` walked the whole disk at every
/// start, untrusted, reading `.gitignore` files all over it to refuse each `SKILL.md` found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Bound<'a>(Option<&'a Path>);

impl<'a> Bound<'a> {
    /// No bound: a user's own folder, whose links lead where the user chose.
    pub(crate) const NONE: Bound<'static> = Bound(None);

    /// Walks stay in `real_folder` (already canonical).
    pub(crate) fn within(real_folder: &'a Path) -> Self {
        Self(Some(real_folder))
    }
}

/// What a walk does with a folder it meets ([`Visits::visit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Visit {
    /// Walk into it.
    Enter,
    /// Its real place was walked already (through another name).
    Seen,
    /// Its real place lies outside the bound.
    Leaves,
}

/// The folders one walk has entered, by real place, and the real folder it stays in. Walks follow
/// symlinks, so a folder is known by its canonical path: a link back to an ancestor (`up -> ..`)
/// or many links to one folder would otherwise make the walk endless or exponential (two links to
/// `.` in a globbed folder made 2^40 paths). Each folder is resolved once.
pub(crate) struct Visits<'a> {
    entered: HashSet<PathBuf>,
    bound: Bound<'a>,
}

impl<'a> Visits<'a> {
    pub(crate) fn new(bound: Bound<'a>) -> Self {
        Self {
            entered: HashSet::new(),
            bound,
        }
    }

    /// Whether to walk into `directory`; entering it is recorded.
    pub(crate) fn visit(&mut self, directory: &Path) -> Visit {
        let real = fs::canonicalize(directory);
        if let Some(folder) = self.bound.0
            && !real.as_ref().is_ok_and(|real| real.starts_with(folder))
        {
            return Visit::Leaves;
        }
        if self
            .entered
            .insert(real.unwrap_or_else(|_| directory.to_path_buf()))
        {
            Visit::Enter
        } else {
            Visit::Seen
        }
    }
}

fn skipped_name(name: &str) -> bool {
    name.starts_with('.') || name == "node_modules"
}

/// How root-level `.md` files of a skills directory are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkillScanMode {
    /// `skills/` directories: root-level `.md` files are skills too.
    Pi,
    /// `.agents/skills`: only `SKILL.md` files.
    Agents,
}

/// Skill entries under `root`: a directory holding a `SKILL.md` file is that one skill
/// and is not descended; in [`SkillScanMode::Pi`] root-level `.md` files are skills.
pub fn collect_skill_entries(root: &Path, mode: SkillScanMode) -> Vec<PathBuf> {
    collect_skill_entries_in(root, mode, Bound::NONE)
}

/// [`collect_skill_entries`] staying in `bound` ([`Bound`]).
pub(crate) fn collect_skill_entries_in(
    root: &Path,
    mode: SkillScanMode,
    bound: Bound<'_>,
) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(root);
    let mut out = Vec::new();
    let mut visits = Visits::new(bound);
    walk_skills(root, (root, mode), &mut rules, &mut visits, &mut out);
    out
}

/// Enters `directory` when [`Visits::visit`] says so; a folder that leaves the bound is listed.
fn enter(directory: &Path, visits: &mut Visits<'_>, out: &mut Vec<PathBuf>) -> bool {
    if entry_type(directory) != Some(EntryType::Directory) {
        return false;
    }
    match visits.visit(directory) {
        Visit::Enter => true,
        Visit::Seen => false,
        Visit::Leaves => {
            out.push(directory.to_owned());
            false
        }
    }
}

fn walk_skills(
    directory: &Path,
    (root, mode): (&Path, SkillScanMode),
    rules: &mut IgnoreRules,
    visits: &mut Visits<'_>,
    out: &mut Vec<PathBuf>,
) {
    if !enter(directory, visits, out) {
        return;
    }
    rules.add_directory(directory);
    let entries = sorted_entries(directory);
    if let Some((_, skill)) = entries.iter().find(|(name, _)| name == "SKILL.md")
        && entry_type(skill) == Some(EntryType::File)
        && !rules.is_ignored(skill, false)
    {
        out.push(skill.clone());
        return;
    }
    for (name, path) in entries {
        if skipped_name(&name) {
            continue;
        }
        match entry_type(&path) {
            Some(EntryType::File) => {
                if mode == SkillScanMode::Pi
                    && directory == root
                    && name.ends_with(".md")
                    && !rules.is_ignored(&path, false)
                {
                    out.push(path);
                }
            }
            Some(EntryType::Directory) => {
                if !rules.is_ignored(&path, true) {
                    walk_skills(&path, (root, mode), rules, visits, out);
                }
            }
            Some(EntryType::Other) | None => {}
        }
    }
}

/// Every file below `root` whose name ends with `suffix`, recursively (package, manifest and
/// settings directories for prompts and themes), staying in `bound`.
pub(crate) fn collect_files_recursive(root: &Path, suffix: &str, bound: Bound<'_>) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(root);
    let mut out = Vec::new();
    let mut visits = Visits::new(bound);
    walk_files(root, suffix, &mut rules, &mut visits, &mut out);
    out
}

fn walk_files(
    directory: &Path,
    suffix: &str,
    rules: &mut IgnoreRules,
    visits: &mut Visits<'_>,
    out: &mut Vec<PathBuf>,
) {
    if !enter(directory, visits, out) {
        return;
    }
    rules.add_directory(directory);
    for (name, path) in sorted_entries(directory) {
        if skipped_name(&name) {
            continue;
        }
        match entry_type(&path) {
            Some(EntryType::Directory) => {
                if !rules.is_ignored(&path, true) {
                    walk_files(&path, suffix, rules, visits, out);
                }
            }
            Some(EntryType::File) => {
                if name.ends_with(suffix) && !rules.is_ignored(&path, false) {
                    out.push(path);
                }
            }
            Some(EntryType::Other) | None => {}
        }
    }
}

/// Direct files of `directory` ending with `suffix` (auto-discovered `prompts/` and `themes/`).
pub(crate) fn collect_direct_files(directory: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(directory);
    rules.add_directory(directory);
    sorted_entries(directory)
        .into_iter()
        .filter(|(name, path)| {
            !skipped_name(name)
                && name.ends_with(suffix)
                && entry_type(path) == Some(EntryType::File)
                && !rules.is_ignored(path, false)
        })
        .map(|(_, path)| path)
        .collect()
}

/// Reads the package manifest: the `ctxkit` key of `<dir>/package.json`, else the `pi` key.
/// `None` when the file is missing, unparsable, or has neither key (or it is `null`).
pub(crate) fn read_manifest(directory: &Path) -> Option<serde_json::Map<String, Value>> {
    let text = read_package_file(&directory.join("package.json"))?;
    let package: Value = serde_json::from_str(&text).ok()?;
    let manifest = ["ctxkit", "pi"]
        .iter()
        .find_map(|key| package.get(*key).filter(|value| !value.is_null()))?;
    Some(manifest.as_object().cloned().unwrap_or_default())
}

/// The string entries of a manifest key.
pub(crate) fn manifest_entries(
    manifest: &serde_json::Map<String, Value>,
    kind: ResourceKind,
) -> Option<Vec<String>> {
    ctxkit_settings::string_items(manifest.get(kind.key()))
}

/// The extension-directory rule: manifest `extensions` entries that exist, else
/// `index.ts`, else `index.js`; `None` when none apply.
pub(crate) fn extension_entries_of_directory(directory: &Path) -> Option<Vec<PathBuf>> {
    if let Some(entries) = read_manifest(directory)
        .as_ref()
        .and_then(|manifest| manifest_entries(manifest, ResourceKind::Extensions))
        .filter(|entries| !entries.is_empty())
    {
        let existing: Vec<PathBuf> = entries
            .iter()
            .map(|entry| resolve_against(directory, Path::new(entry)))
            .filter(|path| path.exists())
            .collect();
        if !existing.is_empty() {
            return Some(existing);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|name| directory.join(name))
        .find(|path| path.exists())
        .map(|path| vec![path])
}

/// Extensions of a directory: its own entries if it has any, else its direct `.ts` /
/// `.js` files and, one level down, each subdirectory's own entries.
pub(crate) fn collect_extension_entries(directory: &Path) -> Vec<PathBuf> {
    if entry_type(directory) != Some(EntryType::Directory) {
        return Vec::new();
    }
    if let Some(entries) = extension_entries_of_directory(directory) {
        return entries;
    }
    let mut rules = IgnoreRules::new(directory);
    rules.add_directory(directory);
    let mut out = Vec::new();
    for (name, path) in sorted_entries(directory) {
        if skipped_name(&name) {
            continue;
        }
        match entry_type(&path) {
            Some(EntryType::File) => {
                if (name.ends_with(".ts") || name.ends_with(".js"))
                    && !rules.is_ignored(&path, false)
                {
                    out.push(path);
                }
            }
            Some(EntryType::Directory) => {
                if !rules.is_ignored(&path, true) {
                    out.extend(extension_entries_of_directory(&path).unwrap_or_default());
                }
            }
            Some(EntryType::Other) | None => {}
        }
    }
    out
}

/// The type collector applied to a directory, staying in `bound`.
pub(crate) fn collect_resource_files(
    directory: &Path,
    kind: ResourceKind,
    bound: Bound<'_>,
) -> Vec<PathBuf> {
    match kind {
        ResourceKind::Extensions => collect_extension_entries(directory),
        ResourceKind::Skills => collect_skill_entries_in(directory, SkillScanMode::Pi, bound),
        ResourceKind::Prompts => collect_files_recursive(directory, ".md", bound),
        ResourceKind::Themes => collect_files_recursive(directory, ".json", bound),
    }
}

/// Expands existing paths: a file is itself, a directory goes through the type collector
/// (staying in `bound`), missing paths are dropped.
pub(crate) fn collect_from_paths(
    paths: &[PathBuf],
    kind: ResourceKind,
    bound: Bound<'_>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for path in paths {
        match entry_type(path) {
            Some(EntryType::File) => out.push(path.clone()),
            Some(EntryType::Directory) => out.extend(collect_resource_files(path, kind, bound)),
            Some(EntryType::Other) | None => {}
        }
    }
    out
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// QA (2026-12-07): `.agents/skills/root -> /` walked the whole disk at every start. A
    /// bounded walk lists the folder that leads out (for the caller's confinement to refuse) and
    /// reads nothing below it; a link that stays inside is walked.
    #[test]
    fn a_bounded_walk_does_not_go_through_a_link_out_of_its_folder() {
        let temp = tempfile::tempdir().unwrap();
        let project = fs::canonicalize(temp.path()).unwrap().join("project");
        let root = project.join(".agents/skills");
        fs::create_dir_all(root.join("inside")).unwrap();
        fs::write(root.join("inside/SKILL.md"), "---\nname: inside\n---\n").unwrap();
        let outside = project.parent().unwrap().join("outside/far");
        fs::create_dir_all(&outside).unwrap();
        fs::write(outside.join("SKILL.md"), "---\nname: far\n---\n").unwrap();
        fs::write(outside.join("note.md"), "x").unwrap();
        std::os::unix::fs::symlink(outside.parent().unwrap(), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("inside"), root.join("alias")).unwrap();
        let skills =
            collect_skill_entries_in(&root, SkillScanMode::Agents, Bound::within(&project));
        assert_eq!(
            skills,
            vec![root.join("alias/SKILL.md"), root.join("out")],
            "{skills:?}"
        );
        let notes = collect_files_recursive(&root, ".md", Bound::within(&project));
        assert_eq!(
            notes,
            vec![root.join("alias/SKILL.md"), root.join("out")],
            "{notes:?}"
        );
        // Unbounded (a user's own folder), the link is followed.
        let own = collect_skill_entries(&root, SkillScanMode::Agents);
        assert!(own.contains(&root.join("out/far/SKILL.md")), "{own:?}");
    }

    #[test]
    fn symlink_loops_and_fans_are_walked_once() {
        let temp = tempfile::tempdir().unwrap();
        let root = temp.path().join("skills");
        fs::create_dir_all(root.join("a")).unwrap();
        fs::write(root.join("a/SKILL.md"), "---\nname: a\n---\n").unwrap();
        fs::create_dir_all(root.join("loop")).unwrap();
        std::os::unix::fs::symlink("..", root.join("loop/up")).unwrap();
        std::os::unix::fs::symlink("../loop", root.join("loop/self")).unwrap();
        std::os::unix::fs::symlink("self2", root.join("self1")).unwrap();
        std::os::unix::fs::symlink("self1", root.join("self2")).unwrap();
        // A fan: each level links twice to the next (2^20 paths without the visited set).
        for level in 0..20 {
            let directory = root.join(format!("fan{level}"));
            fs::create_dir_all(&directory).unwrap();
            for link in ["x", "y"] {
                std::os::unix::fs::symlink(format!("../fan{}", level + 1), directory.join(link))
                    .unwrap();
            }
            fs::write(directory.join("note.md"), "x").unwrap();
        }
        let (sender, receiver) = std::sync::mpsc::channel();
        let scanned = root.clone();
        std::thread::spawn(move || {
            let skills = collect_skill_entries(&scanned, SkillScanMode::Pi);
            let notes = collect_files_recursive(&scanned, ".md", Bound::NONE);
            let _ = sender.send((skills, notes));
        });
        let (skills, notes) = receiver
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the walk ends");
        assert_eq!(skills, vec![root.join("a/SKILL.md")]);
        // Each real file once: a/SKILL.md and the twenty notes.
        assert_eq!(notes.len(), 21, "{notes:?}");
    }
}
