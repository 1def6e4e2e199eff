use super::*;

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn a_saved_key_is_read_back_and_the_file_is_private() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("nested").join(CREDENTIALS_FILE_NAME);
    assert_eq!(saved_keys(&path).unwrap(), SavedKeys::default());
    save_key(&path, "anthropic", "sk-ant-first").unwrap();
    save_key(&path, "openai", "sk-openai").unwrap();
    save_key(&path, "anthropic", "sk-ant-second").unwrap();
    let saved = saved_keys(&path).unwrap();
    assert_eq!(saved.keys["anthropic"], "sk-ant-second");
    assert_eq!(saved.keys["openai"], "sk-openai");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written["anthropic"],
        serde_json::json!({"type": "api_key", "key": "sk-ant-second"})
    );
    #[cfg(unix)]
    assert_eq!(mode(&path), 0o600);
}

#[cfg(unix)]
#[test]
fn an_old_file_readable_by_others_is_made_private_by_the_next_save() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(CREDENTIALS_FILE_NAME);
    std::fs::write(&path, "{}").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    save_key(&path, "google", "AIza-key").unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn entries_ctxkit_does_not_use_are_kept_and_named() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(CREDENTIALS_FILE_NAME);
    let pi_file = serde_json::json!({
        "anthropic": {"type": "oauth", "access": "a", "refresh": "r", "expires": 1},
        "openai": {"type": "api_key", "key": "!pass show openai"},
        "groq": {"type": "api_key", "key": "$GROQ_KEY"},
        "xai": {"type": "api_key", "key": "literal$$dollar"},
    });
    std::fs::write(&path, pi_file.to_string()).unwrap();
    let saved = saved_keys(&path).unwrap();
    assert_eq!(saved.keys.len(), 1);
    assert_eq!(saved.keys["xai"], "literal$dollar");
    let mut skipped: Vec<&str> = saved
        .skipped
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    skipped.sort_unstable();
    assert_eq!(skipped, ["anthropic", "groq", "openai"]);
    // Saving another provider's key keeps them all as written.
    save_key(&path, "mistral", "m-key").unwrap();
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(written["anthropic"], pi_file["anthropic"]);
    assert_eq!(written["openai"], pi_file["openai"]);
    assert_eq!(written["groq"], pi_file["groq"]);
}

#[test]
fn keys_are_written_with_pis_escapes_and_read_back_the_same() {
    for key in ["plain", "with$dollar", "!bang-first", "$start", "a$!b"] {
        let written = escaped(key);
        assert_eq!(
            unescaped(&written).as_deref(),
            Some(key),
            "{key} as {written}"
        );
    }
    assert_eq!(escaped("!x"), "$!x");
    assert_eq!(escaped("a$b"), "a$$b");
}

#[test]
fn removing_a_key_keeps_the_others_and_says_whether_there_was_one() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(CREDENTIALS_FILE_NAME);
    assert!(!remove_key(&path, "anthropic").unwrap());
    assert!(!path.exists(), "nothing created to remove nothing");
    save_key(&path, "anthropic", "sk-ant").unwrap();
    save_key(&path, "openai", "sk-openai").unwrap();
    assert!(remove_key(&path, "anthropic").unwrap());
    assert!(!remove_key(&path, "anthropic").unwrap());
    let saved = saved_keys(&path).unwrap();
    assert_eq!(saved.keys.keys().collect::<Vec<_>>(), ["openai"]);
}

#[test]
fn a_broken_file_is_named_and_never_overwritten() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(CREDENTIALS_FILE_NAME);
    for (text, reason) in [
        ("{\"anthropic\": ", "invalid JSON at line 1"),
        ("[]", "expected a JSON object of providers"),
        (
            "{\"openai\": \"sk-bare\"}",
            "the entry of `openai` is not an object",
        ),
    ] {
        std::fs::write(&path, text).unwrap();
        let message = saved_keys(&path).unwrap_err().to_string();
        assert!(message.contains(reason), "{message}");
        assert!(message.contains(CREDENTIALS_FILE_NAME), "{message}");
        assert!(save_key(&path, "groq", "g").is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }
}

#[test]
fn the_debug_form_never_shows_a_key() {
    let mut saved = SavedKeys::default();
    saved
        .keys
        .insert("anthropic".to_owned(), "sk-ant-secret".to_owned());
    let shown = format!("{saved:?}");
    assert!(shown.contains("anthropic") && !shown.contains("sk-ant-secret"));
}

#[test]
fn pis_lock_is_taken_and_released_and_a_stale_one_taken_over() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join(CREDENTIALS_FILE_NAME);
    let lock = home.path().join("auth.json.lock");
    save_key(&path, "openai", "sk-one").unwrap();
    assert!(!lock.exists(), "the lock folder is removed after the write");
    // A lock Pi holds now: the writer waits for it, then writes.
    std::fs::create_dir(&lock).unwrap();
    let releaser = {
        let lock = lock.clone();
        std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            std::fs::remove_dir(lock).unwrap();
        })
    };
    let started = std::time::Instant::now();
    save_key(&path, "groq", "g-key").unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(150));
    releaser.join().unwrap();
    // A lock left by a writer that died long ago, and a plain file of that name, are taken over.
    std::fs::create_dir(&lock).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
    std::fs::File::open(&lock)
        .unwrap()
        .set_modified(old)
        .unwrap();
    save_key(&path, "xai", "x-key").unwrap();
    std::fs::write(&lock, "").unwrap();
    save_key(&path, "mistral", "m-key").unwrap();
    assert!(!lock.exists());
    assert_eq!(saved_keys(&path).unwrap().keys.len(), 4);
}
