//! The `.agents/skills` folders of the project's ancestors (up to the git root), without those
//! another local user owns above the project.

use std::path::{Path, PathBuf};

use crate::diagnostics::ResourceDiagnostic;
use ctxkit_jail::LocalUsers;
use ctxkit_settings::Environment;

/// `<d>/.agents/skills` for d = cwd up to the git root (or filesystem root), nearest first
/// (`ctxkit_settings::project_agent_skill_dirs`, which the trust of the project lists too). Above
/// cwd, a folder another local user owns (`.agents` or `.agents/skills`, or where a link of theirs
/// leads) is skipped with a warning into `diagnostics`: on a shared machine anyone may create
/// `/tmp/.agents/skills`.
pub(super) fn ancestor_agent_skill_dirs(
    environment: &Environment,
    users: &LocalUsers,
    diagnostics: &mut Vec<ResourceDiagnostic>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for candidate in ctxkit_settings::project_agent_skill_dirs(environment) {
        let Some(directory) = candidate.parent().and_then(Path::parent) else {
            continue;
        };
        let owner = (directory != environment.cwd)
            .then(|| {
                let agents = directory.join(".agents");
                users
                    .other_owner(&agents)
                    .or_else(|| users.other_owner(&candidate))
            })
            .flatten();
        match owner {
            Some(uid) => diagnostics.push(ResourceDiagnostic::warning(
                format!(
                    "Skipped skills folder: `{}` belongs to another user (uid {uid}); above \
                     the project only yours and root's are read",
                    candidate.display()
                ),
                &candidate,
            )),
            None => out.push(candidate),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_jail::testing::owned_by_another_user;

    /// QA: another local user's `/tmp/.agents/skills` reached the system prompt of anyone working
    /// under `/tmp` (no git root stops the walk there). It is skipped with a warning; the
    /// project's own folder is read.
    #[test]
    fn another_users_skills_folder_above_the_project_is_skipped() {
        let world = tempfile::tempdir().unwrap();
        let shared = world.path().join("shared");
        let cwd = shared.join("work/project");
        let planted = shared.join(".agents/skills");
        std::fs::create_dir_all(planted.join("evil")).unwrap();
        std::fs::create_dir_all(cwd.join(".agents/skills")).unwrap();
        let environment = Environment::new(world.path().join("home"), &cwd);
        let mut diagnostics = Vec::new();
        let own = LocalUsers::of_process();
        let found = ancestor_agent_skill_dirs(&environment, &own, &mut diagnostics);
        assert!(found.contains(&planted), "{found:?}");
        assert!(diagnostics.is_empty(), "{diagnostics:?}");

        let users = owned_by_another_user(&[&shared.join(".agents"), &planted]);
        let found = ancestor_agent_skill_dirs(&environment, &users, &mut diagnostics);
        assert!(!found.contains(&planted), "{found:?}");
        assert!(found.contains(&cwd.join(".agents/skills")), "{found:?}");
        assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
        assert!(
            diagnostics[0].message().starts_with(&format!(
                "Skipped skills folder: `{}` belongs to another user",
                planted.display()
            )),
            "{diagnostics:?}"
        );
    }
}
