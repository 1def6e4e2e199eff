//! Guarded places: folders of the root a write goes to only with the user's approval (`.git`, whose
//! config and hooks run at the user's next `git status`; ctxkit's project folder; hook scripts).
//! The caller judges a path by its name before it asks; the jail judges again the folder it has
//! opened for the write, by where that folder really is, so a folder swapped for a symlink into
//! `.git` between the judgement and the write puts nothing there.

use std::path::{Path, PathBuf};

use cap_std::fs::Dir;

use crate::{Jail, JailError, places};

impl Jail {
    /// Refuses writes ([`JailError::Guarded`]) to `places` and beneath any folder of `project`
    /// named one of `names` (compared without regard to ASCII case). `project` may be the root or
    /// lie beneath it (a jail on `/` for a write the user approved outside the project).
    pub fn guard_writes(
        &mut self,
        project: &Path,
        places: &[PathBuf],
        names: &'static [&'static str],
    ) {
        self.guarded_base = project.to_owned();
        self.guarded = places.to_vec();
        self.guarded_names = names;
    }

    /// Refuses the write of `name` in `dir` (opened for `relative`'s parent) when it lands in a
    /// guarded place.
    pub(crate) fn check_guarded(
        &self,
        dir: &Dir,
        relative: &Path,
        name: &Path,
    ) -> Result<(), JailError> {
        if self.guarded.is_empty() && self.guarded_names.is_empty() {
            return Ok(());
        }
        let folder = places::real_path(dir)
            .unwrap_or_else(|| self.root.join(relative.parent().unwrap_or(Path::new(""))));
        let target = folder.join(name);
        let named = target.strip_prefix(&self.guarded_base).is_ok_and(|inside| {
            inside.components().any(|component| {
                let component = component.as_os_str().as_encoded_bytes();
                self.guarded_names
                    .iter()
                    .any(|guarded| component.eq_ignore_ascii_case(guarded.as_bytes()))
            })
        });
        if named || self.guarded.iter().any(|place| target.starts_with(place)) {
            return Err(JailError::Guarded { path: target });
        }
        Ok(())
    }
}
