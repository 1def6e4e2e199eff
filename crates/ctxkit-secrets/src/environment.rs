//! Secret environment variables taken out of ctxkit's own process: read once at start-up, removed
//! from the process environment (so a child reading `/proc/<ctxkit pid>/environ` finds none of
//! them), and kept in memory for the code that needs them (providers, `chat.passEnv`).

use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The secret variables the process started with, once [`take_secret_environment`] ran.
static TAKEN: OnceLock<BTreeMap<String, String>> = OnceLock::new();

/// [`take_secret_environment`] was called while other threads ran: changing the environment then
/// is undefined behaviour, so nothing was changed. Call it first thing in `main`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadsRunning(pub usize);

impl std::fmt::Display for ThreadsRunning {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "secret variables must leave the environment before threads start ({} are running)",
            self.0
        )
    }
}

impl std::error::Error for ThreadsRunning {}

/// Keeps this process's memory, environment and open descriptors from the other processes of its
/// user, the commands the model runs among them (`prctl(PR_SET_DUMPABLE, 0)`): `/proc/<pid>/mem`
/// would hand them the keys ctxkit holds, `/proc/<pid>/fd/0` the terminal the chat reads (QA
/// 2026-12-07: a command typed into the chat and read the user's keys through it). Root still
/// can; a child is unaffected (`execve` makes it dumpable again). Whether the kernel agreed.
#[allow(
    unsafe_code,
    reason = "prctl with integer arguments, no memory handed over"
)]
pub fn keep_process_private() -> bool {
    // SAFETY: PR_SET_DUMPABLE takes integer arguments only; nothing is read or written through
    // a pointer.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 }
}

/// Reads every secret variable ([`crate::is_secret_entry`]: by its name, or a URL holding
/// credentials) of this process's environment
/// into memory and removes it from the environment — on Linux also from the process's initial
/// environment block, which `/proc/<pid>/environ` shows and `unsetenv` leaves as it was; returns
/// how many were taken. Later calls change nothing and return 0. On Linux it is refused (nothing
/// changed) unless this is the process's only thread, which it checks: run it first thing in
/// `main`, before an async runtime is built. Elsewhere the values are kept in memory and the
/// environment is left alone (it cannot be checked to be single-threaded).
pub fn take_secret_environment() -> Result<usize, ThreadsRunning> {
    if TAKEN.get().is_some() {
        return Ok(0);
    }
    let taken: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .filter(|(name, value)| crate::is_secret_entry(name, value))
        .collect();
    #[cfg(target_os = "linux")]
    {
        let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
        if threads != 1 {
            return Err(ThreadsRunning(threads));
        }
        remove_from_environment(&taken);
    }
    let count = taken.len();
    let _ = TAKEN.set(taken);
    Ok(count)
}

/// Removes the `taken` variables from the environment and wipes their text from the initial
/// environment block. Only called while the process has one thread.
#[cfg(target_os = "linux")]
#[allow(
    unsafe_code,
    reason = "the one place the process environment is changed, checked single-threaded"
)]
fn remove_from_environment(taken: &BTreeMap<String, String>) {
    // The entries' text, found before `unsetenv` forgets where it is.
    let mut entries: Vec<*mut libc::c_char> = Vec::new();
    // SAFETY: single-threaded (checked by the caller), so nothing changes `environ` meanwhile; it
    // is a null-terminated array of pointers to null-terminated strings.
    unsafe {
        let mut cursor = libc::environ;
        while !cursor.is_null() && !(*cursor).is_null() {
            let entry = std::ffi::CStr::from_ptr(*cursor).to_bytes();
            let name = entry.split(|&byte| byte == b'=').next().unwrap_or_default();
            if taken.keys().any(|secret| secret.as_bytes() == name) {
                entries.push(*cursor);
            }
            cursor = cursor.add(1);
        }
    }
    for name in taken.keys() {
        // SAFETY: this is the process's only thread (checked by the caller), so nothing reads or
        // writes the environment at the same time.
        unsafe { std::env::remove_var(name) };
    }
    for entry in entries {
        // SAFETY: `entry` points to a null-terminated string that `environ` no longer lists
        // (`unsetenv` neither frees nor moves it); its bytes up to the terminator are overwritten.
        unsafe {
            let length = libc::strlen(entry);
            std::ptr::write_bytes(entry, 0, length);
        }
    }
}

/// The value of the environment variable `name`: the one taken at start-up for a secret
/// variable, else the process environment's.
pub fn environment_variable(name: &str) -> Option<String> {
    TAKEN
        .get()
        .and_then(|taken| taken.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
}

/// The secret variables a child process is given on purpose (`chat.passEnv` names them): their
/// values as taken at start-up, or as still in the environment.
pub fn passed_secret_variables(pass: &[String]) -> Vec<(String, String)> {
    pass.iter()
        .filter(|name| {
            crate::is_secret_variable(name)
                || TAKEN
                    .get()
                    .is_some_and(|taken| taken.contains_key(name.as_str()))
        })
        .filter_map(|name| Some((name.clone(), environment_variable(name)?)))
        .collect()
}

/// Every secret value this process knows from its environment (taken at start-up or still
/// there), for redaction.
pub fn secret_environment_values() -> Vec<String> {
    let mut values: Vec<String> = TAKEN
        .get()
        .map(|taken| taken.values().cloned().collect())
        .unwrap_or_default();
    values.extend(
        std::env::vars_os()
            .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
            .filter(|(name, value)| crate::is_secret_entry(name, value))
            .map(|(_, value)| value),
    );
    // A URL's password printed without the URL (`printenv URL | cut -c9-`) is the secret too.
    let credentials: Vec<String> = values
        .iter()
        .flat_map(|value| crate::url_credentials(value))
        .collect();
    values.extend(credentials);
    values.retain(|value| value.trim().len() >= 8);
    values.sort();
    values.dedup();
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn the_environment_is_left_alone_while_other_threads_run() {
        // The test harness runs this test on a thread of its own.
        let error = take_secret_environment().unwrap_err();
        assert!(error.0 >= 2, "{error}");
        assert!(TAKEN.get().is_none());
        assert!(error.to_string().contains("before threads start"));
    }
}
