//! Filter patterns of settings arrays, package filters and manifests: plain include globs,
//! `!` exclude globs, `+` force-include and `-` force-exclude exact paths.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobMatcher};

use ctxkit_settings::{relative_path, to_slash};

/// Whether an entry is a pattern rather than a path: starts with `!`, `+`, `-` or contains a
/// glob character.
pub(crate) fn is_pattern(entry: &str) -> bool {
    is_override_pattern(entry) || has_glob(entry)
}

/// `!`, `+` or `-` prefix.
pub(crate) fn is_override_pattern(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

/// Contains `*` or `?`.
pub(crate) fn has_glob(entry: &str) -> bool {
    entry.contains('*') || entry.contains('?')
}

/// A glob with minimatch's defaults: `*`/`?` do not cross `/`, `**` does, braces and classes,
/// and wildcards do not match a leading `.` of a path segment.
#[derive(Debug, Clone)]
pub(crate) struct Glob {
    matcher: Option<GlobMatcher>,
    allows_dot_segments: bool,
}

impl Glob {
    pub(crate) fn new(pattern: &str) -> Self {
        let matcher = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .ok()
            .map(|glob| glob.compile_matcher());
        let allows_dot_segments = pattern.starts_with('.') || pattern.contains("/.");
        Self {
            matcher,
            allows_dot_segments,
        }
    }

    pub(crate) fn is_match(&self, candidate: &str) -> bool {
        let Some(matcher) = &self.matcher else {
            return false;
        };
        if !self.allows_dot_segments
            && candidate
                .split('/')
                .any(|segment| segment.starts_with('.') && segment != "." && segment != "..")
        {
            return false;
        }
        matcher.is_match(candidate)
    }
}

/// The strings a candidate file is matched by: relative path, name, absolute path, and for a
/// `SKILL.md` also its directory's relative path, name and absolute path.
struct CandidateForms {
    glob_forms: Vec<String>,
    exact_forms: Vec<String>,
}

fn candidate_forms(path: &Path, base: &Path) -> CandidateForms {
    let relative = to_slash(&relative_path(base, path));
    let name = path
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let absolute = to_slash(path);
    let mut glob_forms = vec![relative.clone(), name.clone(), absolute.clone()];
    let mut exact_forms = vec![relative, absolute];
    if name == "SKILL.md"
        && let Some(parent) = path.parent()
    {
        let parent_relative = to_slash(&relative_path(base, parent));
        let parent_name = parent
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default();
        let parent_absolute = to_slash(parent);
        glob_forms.extend([
            parent_relative.clone(),
            parent_name,
            parent_absolute.clone(),
        ]);
        exact_forms.extend([parent_relative, parent_absolute]);
    }
    CandidateForms {
        glob_forms,
        exact_forms,
    }
}

fn normalize_exact(pattern: &str) -> String {
    let stripped = pattern
        .strip_prefix("./")
        .or_else(|| pattern.strip_prefix(".\\"))
        .unwrap_or(pattern);
    stripped.replace('\\', "/")
}

fn matches_any_glob(forms: &CandidateForms, globs: &[Glob]) -> bool {
    globs
        .iter()
        .any(|glob| forms.glob_forms.iter().any(|form| glob.is_match(form)))
}

fn matches_any_exact(forms: &CandidateForms, exact: &[String]) -> bool {
    exact
        .iter()
        .any(|pattern| forms.exact_forms.iter().any(|form| form == pattern))
}

struct SplitPatterns {
    includes: Vec<Glob>,
    excludes: Vec<Glob>,
    force_includes: Vec<String>,
    force_excludes: Vec<String>,
}

fn split(patterns: &[String]) -> SplitPatterns {
    let mut split = SplitPatterns {
        includes: Vec::new(),
        excludes: Vec::new(),
        force_includes: Vec::new(),
        force_excludes: Vec::new(),
    };
    for pattern in patterns {
        if let Some(rest) = pattern.strip_prefix('!') {
            split.excludes.push(Glob::new(rest));
        } else if let Some(rest) = pattern.strip_prefix('+') {
            split.force_includes.push(normalize_exact(rest));
        } else if let Some(rest) = pattern.strip_prefix('-') {
            split.force_excludes.push(normalize_exact(rest));
        } else {
            split.includes.push(Glob::new(pattern));
        }
    }
    split
}

/// The enabled subset of `candidates` under `patterns` (relative forms against `base`).
pub(crate) fn apply_patterns(
    candidates: &[PathBuf],
    patterns: &[String],
    base: &Path,
) -> HashSet<PathBuf> {
    let split = split(patterns);
    let mut enabled = HashSet::new();
    for candidate in candidates {
        let forms = candidate_forms(candidate, base);
        let included = split.includes.is_empty() || matches_any_glob(&forms, &split.includes);
        let excluded = matches_any_glob(&forms, &split.excludes);
        let forced_in = matches_any_exact(&forms, &split.force_includes);
        let forced_out = matches_any_exact(&forms, &split.force_excludes);
        if ((included && !excluded) || forced_in) && !forced_out {
            enabled.insert(candidate.clone());
        }
    }
    enabled
}

/// The files of a package entry with `autoload: false` that its patterns name, each with its
/// enabled flag, as Pi 1.6's `applyAutoloadDisabledPatterns`: patterns apply in order and the
/// last one naming a file decides (`+`/`-` exact paths, plain and `!` globs; `-` and `!`
/// disable). A file no pattern names is left out, so the user's entry of the same package can
/// still bring it.
pub(crate) fn apply_autoload_disabled_patterns(
    candidates: &[PathBuf],
    patterns: &[String],
    base: &Path,
) -> Vec<(PathBuf, bool)> {
    let forms: Vec<CandidateForms> = candidates
        .iter()
        .map(|candidate| candidate_forms(candidate, base))
        .collect();
    let mut named: Vec<(PathBuf, bool)> = Vec::new();
    for pattern in patterns {
        let enabled = !(pattern.starts_with('-') || pattern.starts_with('!'));
        let matches: Box<dyn Fn(&CandidateForms) -> bool> =
            if let Some(exact) = pattern.strip_prefix(['+', '-']) {
                let exact = [normalize_exact(exact)];
                Box::new(move |forms| matches_any_exact(forms, &exact))
            } else {
                let glob = [Glob::new(pattern.strip_prefix('!').unwrap_or(pattern))];
                Box::new(move |forms| matches_any_glob(forms, &glob))
            };
        for (candidate, candidate_forms) in candidates.iter().zip(&forms) {
            if !matches(candidate_forms) {
                continue;
            }
            match named.iter_mut().find(|(path, _)| path == candidate) {
                Some((_, flag)) => *flag = enabled,
                None => named.push((candidate.clone(), enabled)),
            }
        }
    }
    named
}

/// Whether an auto-discovered file stays enabled under the override entries (`!`, `+`,
/// `-`) of the same scope's settings array; plain entries are ignored here.
pub(crate) fn is_enabled_by_overrides(path: &Path, entries: &[String], base: &Path) -> bool {
    let overrides: Vec<String> = entries
        .iter()
        .filter(|entry| is_override_pattern(entry))
        .cloned()
        .collect();
    if overrides.is_empty() {
        return true;
    }
    let split = split(&overrides);
    let forms = candidate_forms(path, base);
    let mut enabled = !matches_any_glob(&forms, &split.excludes);
    if matches_any_exact(&forms, &split.force_includes) {
        enabled = true;
    }
    if matches_any_exact(&forms, &split.force_excludes) {
        enabled = false;
    }
    enabled
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimatch_like_globs() {
        assert!(Glob::new("*.ts").is_match("a.ts"));
        assert!(!Glob::new("*.ts").is_match("dir/a.ts"));
        assert!(Glob::new("**/a.ts").is_match("dir/sub/a.ts"));
        assert!(Glob::new("**/a.ts").is_match("a.ts"));
        assert!(!Glob::new("*").is_match(".hidden"));
        assert!(Glob::new(".*").is_match(".hidden"));
        assert!(Glob::new("{a,b}.md").is_match("b.md"));
    }

    #[test]
    fn pattern_application() {
        let base = Path::new("/p");
        let files: Vec<PathBuf> = [
            "/p/extensions/alpha.ts",
            "/p/extensions/beta.ts",
            "/p/extensions/gamma.ts",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let patterns: Vec<String> = ["**/alpha.ts", "**/beta.ts", "!**/beta.ts"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let enabled = apply_patterns(&files, &patterns, base);
        assert_eq!(enabled, HashSet::from([files[0].clone()]));
        let patterns = vec!["!**/*".to_owned(), "+./extensions/gamma.ts".to_owned()];
        assert_eq!(
            apply_patterns(&files, &patterns, base),
            HashSet::from([files[2].clone()])
        );
    }

    #[test]
    fn autoload_disabled_patterns_name_files_and_the_last_one_decides() {
        let base = Path::new("/p");
        let files: Vec<PathBuf> = ["/p/skills/a/SKILL.md", "/p/skills/b/SKILL.md", "/p/x.md"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let patterns = |list: &[&str]| list.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            apply_autoload_disabled_patterns(&files, &patterns(&["+skills/b/SKILL.md"]), base),
            vec![(files[1].clone(), true)]
        );
        assert_eq!(
            apply_autoload_disabled_patterns(&files, &patterns(&["skills/*", "-skills/a"]), base),
            vec![(files[0].clone(), false), (files[1].clone(), true)]
        );
        assert_eq!(
            apply_autoload_disabled_patterns(&files, &patterns(&["!x.md"]), base),
            vec![(files[2].clone(), false)]
        );
        assert!(apply_autoload_disabled_patterns(&files, &[], base).is_empty());
    }

    #[test]
    fn overrides_on_skill_directories() {
        let base = Path::new("/a");
        let skill = Path::new("/a/skills/my-skill/SKILL.md");
        assert!(!is_enabled_by_overrides(
            skill,
            &["-skills/my-skill".to_owned()],
            base
        ));
        assert!(is_enabled_by_overrides(
            skill,
            &["-my-skill".to_owned()],
            base
        ));
        assert!(!is_enabled_by_overrides(
            skill,
            &["!my-skill".to_owned()],
            base
        ));
        assert!(is_enabled_by_overrides(
            skill,
            &["skills/*".to_owned()],
            base
        ));
    }
}
