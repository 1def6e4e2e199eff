//! Text an agent put into a user message that the user did not type: Claude Code's system
//! reminders and slash-command wrappers (`<system-reminder>`, `<command-name>`,
//! `<local-command-stdout>`), Codex's environment and instruction blocks (`<environment_context>`,
//! `<user_instructions>`, `# AGENTS.md instructions for …` with its `<INSTRUCTIONS>` block). A
//! summary's goal and a session's "first message" are the user's words, so these are left out of
//! both. A pure text function (no I/O), shared by the listing and the offline summarizer.

/// The heading Codex puts before the `AGENTS.md` text it injects.
const AGENTS_MD_HEADING: &str = "# AGENTS.md instructions for ";
const INSTRUCTIONS_END: &str = "</INSTRUCTIONS>";

/// `text` without injected blocks: a tag of lowercase letters with a `-` or `_` in its name
/// (`<system-reminder>`, `<environment_context>`) up to its own end tag, and Codex's `AGENTS.md`
/// heading through `</INSTRUCTIONS>`. Other text, and tags that are not closed, stay as they are.
pub fn strip_injected_context(text: &str) -> String {
    let text = strip_agents_md(text);
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(open) = rest.find('<') {
        let after = &rest[open + 1..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-' || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let closing = format!("</{name}>");
        let injected = (name.contains('-') || name.contains('_'))
            && !name.starts_with(['-', '_'])
            && after[name_len..].starts_with('>');
        match rest.find(closing.as_str()).filter(|_| injected) {
            Some(close) if close > open => {
                out.push_str(&rest[..open]);
                rest = &rest[close + closing.len()..];
            }
            Some(_) | None => {
                out.push_str(&rest[..=open]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Whether `text` holds nothing but injected context (and blanks).
pub fn is_injected_context(text: &str) -> bool {
    !text.trim().is_empty() && strip_injected_context(text).trim().is_empty()
}

fn strip_agents_md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(AGENTS_MD_HEADING) {
        let Some(end) = rest[start..].find(INSTRUCTIONS_END) else {
            break;
        };
        out.push_str(&rest[..start]);
        rest = &rest[start + end + INSTRUCTIONS_END.len()..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn injected_blocks_of_each_agent_are_left_out() {
        let codex = "# AGENTS.md instructions for /home/dev/app\n\n<INSTRUCTIONS>\nUse tabs.\n</INSTRUCTIONS>";
        assert!(is_injected_context(codex));
        let environment =
            "<environment_context>\n  <cwd>/home/dev/app</cwd>\n</environment_context>";
        assert!(is_injected_context(environment));
        assert!(is_injected_context(
            "<user_instructions>Be brief</user_instructions>"
        ));
        let claude = "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args></command-args>";
        assert!(is_injected_context(claude));
        assert_eq!(
            strip_injected_context("Fix the bug<system-reminder>x\ny</system-reminder> now"),
            "Fix the bug now"
        );
        // The user's own words, markup included, stay.
        assert!(!is_injected_context(
            "Why does <T> fail in a <b>bold</b> way?"
        ));
        assert_eq!(
            strip_injected_context("a < b and c_d > e"),
            "a < b and c_d > e"
        );
    }
}
