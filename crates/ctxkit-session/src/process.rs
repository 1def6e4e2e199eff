//! Facts about processes that the leftovers of killed ones are judged by: which user this process
//! is (whether a process id still runs is `ctxkit_jail::is_running`, which judges the temporary
//! files of whole-file writes too).

/// The user id of this process (who owns the files it makes); `None` without `/proc`.
pub fn current_user_id() -> Option<u32> {
    use std::os::unix::fs::MetadataExt as _;
    std::fs::metadata("/proc/self")
        .ok()
        .map(|metadata| metadata.uid())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_user() {
        assert!(current_user_id().is_some());
    }
}
