//! `ctxkit trust [--yes|--revoke]`: the project's settings that need trust and its resources that
//! wait for it (`ctxkit_settings::protected_resources`), shown, then trusted after a yes on a
//! terminal, at once with `--yes`, or forgotten with `--revoke`. The chat's `/trust` shares the
//! lines and the revoke.

use std::io::{BufRead as _, Write};

use anyhow::Result;

use super::settings::ProcessSettings;
use crate::Outcome;

/// `ctxkit trust [--revoke]`.
/// What `ctxkit trust` does: trust after asking on a terminal, trust at once (`--yes`), or revoke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustDecision {
    Ask,
    Trust,
    Revoke,
}

impl TrustDecision {
    /// `ctxkit trust [--revoke] [--yes]`: revoking needs no confirmation; trusting asks unless
    /// `--yes` says it was read.
    pub fn from_flags(revoke: bool, yes: bool) -> Self {
        match (revoke, yes) {
            (true, _) => Self::Revoke,
            (false, true) => Self::Trust,
            (false, false) => Self::Ask,
        }
    }
}

/// Forgets the project's trust (`ctxkit trust --revoke`, `/trust revoke`) and says so. The record
/// goes even while the settings hold nothing that needs trust (a branch without them checked
/// out): kept, it trusted the same settings again when they came back.
pub fn revoke_trust(
    environment: &ctxkit_settings::Environment,
    settings: &ctxkit_settings::SettingsManager,
    pending: &ctxkit_settings::ProjectTrust,
) -> Result<String> {
    ctxkit_settings::set_project_trust(environment, settings, true)?;
    let project = pending.project.display();
    Ok(if pending.held.is_empty() {
        format!(
            "Revoked: `{project}` is not trusted; settings that need trust, if it gets any, \
             will not apply until it is trusted again"
        )
    } else {
        format!(
            "Revoked: the {} of `{project}` that need trust no longer apply",
            what_waits(pending)
        )
    })
}

pub fn trust(
    process: &ProcessSettings<'_>,
    decision: TrustDecision,
    out: &mut dyn Write,
) -> Result<Outcome> {
    let environment = process.environment()?;
    let settings = process.settings()?;
    let pending = ctxkit_settings::project_trust(environment, settings)?;
    let project = pending.project.display().to_string();
    if decision == TrustDecision::Revoke {
        let revoked = revoke_trust(environment, settings, &pending)?;
        writeln!(out, "{revoked}")?;
        return Ok(Outcome::Success);
    }
    if pending.held.is_empty() {
        writeln!(
            out,
            "The settings of `{project}` change nothing that needs trust; nothing to trust"
        )?;
        return Ok(Outcome::Success);
    }
    let lines = review_lines(&pending);
    let what = what_waits(&pending);
    // Nothing changed since the user trusted it: not asked again (QA 2026-12-07: "that need
    // trust", and exit 2 off a terminal, for a project trusted as it is).
    if pending.trusted {
        writeln!(
            out,
            "The {what} of `{project}` are trusted as they are; nothing to do"
        )?;
        return Ok(Outcome::Success);
    }
    if decision == TrustDecision::Ask {
        writeln!(out, "The {what} of `{project}` that need trust:")?;
        for line in &lines {
            writeln!(out, "  {line}")?;
        }
        out.flush()?;
        if !confirm_on_terminal("Trust them? [y/N] ")? {
            writeln!(out, "Not trusted; nothing changed")?;
            return Ok(Outcome::Success);
        }
    }
    ctxkit_settings::set_project_trust(environment, settings, false)?;
    writeln!(
        out,
        "Trusted the {what} of `{project}`; these apply from now on:"
    )?;
    for line in &lines {
        writeln!(out, "  {line}")?;
    }
    Ok(Outcome::Success)
}

/// What `ctxkit trust` and the chat's `/trust` show before asking: each held setting with its
/// value, then the project files the settings run as code, which trusting covers as they are now (QA
/// 2026-12-07: a changed script was trusted again with only the unchanged command shown), those
/// changed since the last trust marked.
pub(crate) fn review_lines(pending: &ctxkit_settings::ProjectTrust) -> Vec<String> {
    let mut lines = held_setting_lines(&pending.held);
    if pending.hook_scripts.is_empty() {
        return lines;
    }
    let scripts: Vec<String> = pending
        .hook_scripts
        .iter()
        .map(|script| {
            let shown = format!("`{}`", crate::render::terminal_safe(script));
            if pending.changed_scripts.contains(script) {
                format!("{shown} (changed since you trusted it)")
            } else {
                shown
            }
        })
        .collect();
    lines.push(format!(
        "these settings run these project files, trusted as they are now (read them first): {}",
        scripts.join(", ")
    ));
    lines
}

/// What of a project waits for trust, as the trust messages name it: its settings, and its
/// resources when some wait too (`ctxkit_settings::protected_resources`).
pub(crate) fn what_waits(pending: &ctxkit_settings::ProjectTrust) -> &'static str {
    if pending.held.iter().any(|held| held.resource) {
        "settings and resources"
    } else {
        "settings"
    }
}

/// The lines showing each held key: the key, its value (API keys, header values and URL
/// credentials masked) and, for a key ctxkit does not know, what that means. A value is shown
/// whole, never cut, since what is trusted is all of it: a short one after the key, a longer one
/// as indented JSON on the lines below (a cut line hid a second hook that `y` then trusted).
pub(super) fn held_setting_lines(held: &[ctxkit_settings::HeldSetting]) -> Vec<String> {
    let mut lines = Vec::new();
    for setting in held {
        let unknown = if setting.known {
            ""
        } else {
            "  (not a ctxkit setting: ctxkit never reads it; another tool may)"
        };
        let Some(value) = &setting.value else {
            lines.push(format!("{}{unknown}", setting.key));
            continue;
        };
        let compact = ctxkit_secrets::redact_credentials(&value.to_string()).into_owned();
        if compact.chars().count() <= HELD_VALUE_INLINE_CHARS {
            lines.push(format!("{} = {compact}{unknown}", setting.key));
            continue;
        }
        lines.push(format!("{} ={unknown}", setting.key));
        let pretty = serde_json::to_string_pretty(value).unwrap_or(compact);
        let pretty = ctxkit_secrets::redact_credentials(&pretty).into_owned();
        lines.extend(pretty.lines().map(|line| format!("    {line}")));
    }
    lines
}

/// The longest value shown on its key's line; a longer one is shown as indented JSON below it.
const HELD_VALUE_INLINE_CHARS: usize = 100;

/// Asks `question` on the terminal and reads a yes; off a terminal, refuses: trusting runs the
/// project's commands and may send data elsewhere, so a script says `--yes`.
fn confirm_on_terminal(question: &str) -> Result<bool> {
    use std::io::IsTerminal as _;
    let stdin = std::io::stdin();
    if !stdin.is_terminal() {
        // A way of running it that cannot work, not bad input: a usage error (exit 2).
        return Err(crate::usage::UsageError {
            message: "`ctxkit trust` asks before trusting, and there is no terminal to ask on"
                .to_owned(),
            hint: "run it in a terminal, or pass `--yes` to trust what is shown above".to_owned(),
        }
        .into());
    }
    let mut stderr = std::io::stderr().lock();
    write!(stderr, "{question}")?;
    stderr.flush()?;
    let mut answer = String::new();
    stdin.lock().read_line(&mut answer)?;
    Ok(matches!(answer.trim().to_lowercase().as_str(), "y" | "yes"))
}
