//! Optional file context for summaries (off by default): the current contents of the most important
//! files the summarized span touched — modified first, then most mentioned, then most recent; at most
//! five files of at most 1000 lines each, within a token cap. Choosing is pure; the caller reads the
//! files and passes their text in.

use ctxkit_tokens::utf16_len;

use crate::prepare::Preparation;
use crate::runner::serialize_messages;

/// Limits of the file context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileContextLimits {
    pub max_files: usize,
    pub max_lines_per_file: usize,
    /// Estimated tokens (UTF-16 units / 4) for all files together.
    pub max_tokens: u64,
}

impl Default for FileContextLimits {
    fn default() -> Self {
        Self {
            max_files: 5,
            max_lines_per_file: 1000,
            max_tokens: 8000,
        }
    }
}

/// One file's current text as read by the caller (not a context file such as `AGENTS.md`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CurrentFile {
    pub path: String,
    pub text: String,
}

/// The touched files in order of importance: modified before read-only, then by how often the span
/// mentions them, then by how late; at most `limits.max_files`.
pub fn rank_context_files(preparation: &Preparation, limits: &FileContextLimits) -> Vec<String> {
    let lists = preparation.file_operations.lists();
    let span = format!(
        "{}\n{}",
        serialize_messages(&preparation.messages_to_summarize),
        serialize_messages(&preparation.turn_prefix_messages)
    );
    let mut ranked: Vec<(bool, usize, usize, &String)> = lists
        .modified_files
        .iter()
        .map(|path| (true, path))
        .chain(lists.read_files.iter().map(|path| (false, path)))
        .map(|(modified, path)| {
            let mentions = span.matches(path.as_str()).count();
            let last = span.rfind(path.as_str()).unwrap_or(0);
            (modified, mentions, last, path)
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then(b.1.cmp(&a.1))
            .then(b.2.cmp(&a.2))
            .then(a.3.cmp(b.3))
    });
    ranked
        .into_iter()
        .take(limits.max_files)
        .map(|(_, _, _, path)| path.clone())
        .collect()
}

/// The `<file-context>` block for the request: each file cut to its first lines, files dropped once the
/// token cap is reached. Empty when no file fits.
pub fn file_context_block(files: &[CurrentFile], limits: &FileContextLimits) -> String {
    let budget_units = usize::try_from(limits.max_tokens)
        .unwrap_or(usize::MAX)
        .saturating_mul(4);
    let mut used = 0;
    let mut parts = Vec::new();
    for file in files.iter().take(limits.max_files) {
        let lines: Vec<&str> = file.text.lines().collect();
        let mut body = lines
            .iter()
            .take(limits.max_lines_per_file)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        if lines.len() > limits.max_lines_per_file {
            body.push_str(&format!(
                "\n[... {} more lines]",
                lines.len() - limits.max_lines_per_file
            ));
        }
        let part = format!("<file path=\"{}\">\n{body}\n</file>", file.path);
        let size = utf16_len(&part);
        if used + size > budget_units {
            continue;
        }
        used += size;
        parts.push(part);
    }
    if parts.is_empty() {
        return String::new();
    }
    format!(
        "<file-context>\nCurrent contents of files the conversation touched (for reference; summarize the \
         conversation, not these files):\n{}\n</file-context>\n\n",
        parts.join("\n")
    )
}

/// The file-context block for a plan: the ranked files read from disk (relative paths against
/// `cwd`), those that cannot be read left out. Every file is opened beneath `cwd` through a jail:
/// a path the conversation named outside the project, a symlink out of it, ctxkit's own files
/// and the user's credentials are left out, never sent to the summary model.
pub fn read_file_context(preparation: &Preparation, cwd: &std::path::Path) -> String {
    let limits = FileContextLimits::default();
    let Ok(jail) = ctxkit_jail::Jail::open(cwd) else {
        return String::new();
    };
    let files: Vec<CurrentFile> = rank_context_files(preparation, &limits)
        .into_iter()
        .filter_map(|path| {
            let text = jail
                .read_to_string(std::path::Path::new(&path), ctxkit_jail::MAX_RESOURCE_BYTES)
                .ok()?;
            Some(CurrentFile { path, text })
        })
        .collect();
    file_context_block(&files, &limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_cut_and_capped() {
        let limits = FileContextLimits {
            max_files: 2,
            max_lines_per_file: 2,
            max_tokens: 40,
        };
        let files = vec![
            CurrentFile {
                path: "a.rs".into(),
                text: "one\ntwo\nthree".into(),
            },
            CurrentFile {
                path: "big.rs".into(),
                text: "x".repeat(400),
            },
            CurrentFile {
                path: "c.rs".into(),
                text: "never".into(),
            },
        ];
        let block = file_context_block(&files, &limits);
        assert!(block.contains("<file path=\"a.rs\">\none\ntwo\n[... 1 more lines]\n</file>"));
        assert!(!block.contains("big.rs"), "over the cap");
        assert!(!block.contains("c.rs"), "over the file limit");
        assert_eq!(file_context_block(&[], &limits), "");
    }
}
