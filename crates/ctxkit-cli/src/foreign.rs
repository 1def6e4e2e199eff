//! Another agent's session named where a ctxkit session file belongs: told apart from a damaged
//! file the way `ctxkit import` tells formats apart (`ctxkit_import::detect_file_format`), so the
//! error's hint names the command that reads it instead of `ctxkit check`, which cannot help.

use std::path::Path;

/// What to run on `path` when another agent wrote it; `None` when `ctxkit import` would refuse it
/// (a Pi session without its header, a file of no known format, one that cannot be read).
pub(crate) fn import_hint(path: &Path) -> Option<String> {
    let format = ctxkit_import::detect_file_format(path).ok()?;
    Some(format!(
        "it is {}: run `ctxkit import {}` to convert it (`ctxkit export` and `ctxkit simulate` \
         read it as it is)",
        format.described(),
        path.display()
    ))
}
