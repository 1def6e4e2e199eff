//! In Progress and Next Steps judged from the end of the span: what the latest request still needs.

use crate::extract::{Part, sentences};
use crate::offline::render::Section;
use crate::offline::say;
use crate::offline::text::{Language, clip};
use crate::offline::work::{Outcome, Work};

/// In Progress and Next Steps from the end of the span: a pending tool call, a failing command, an
/// unanswered request, or a question to the user.
pub(crate) fn tail(
    parts: &[Part],
    requests: &[(usize, String)],
    work: &Work,
    language: Language,
    in_progress: &mut Section,
    next: &mut Section,
) {
    let Some((request_index, request)) = requests.last() else {
        return;
    };
    let answer = parts
        .iter()
        .enumerate()
        .skip(request_index + 1)
        .filter_map(|(index, part)| match part {
            Part::Assistant(text) => Some((index, text.as_str())),
            Part::User(_) | Part::Thinking(_) | Part::ToolCalls(_) | Part::ToolResult(_) => None,
        })
        .next_back();
    let failing: Vec<_> = work
        .failing()
        .into_iter()
        .filter(|run| run.position > *request_index)
        .collect();
    let open = !work.pending.is_empty() || !failing.is_empty() || answer.is_none();
    if open {
        in_progress.push(request.clone(), 98);
    }
    if let Some(pending) = work.pending.first() {
        next.push(
            format!(
                "{} `{}`",
                say(
                    language,
                    "Check the result of the pending call",
                    "查看尚未返回的调用结果："
                ),
                clip(pending, 160)
            ),
            97,
        );
    }
    for run in failing {
        if let Outcome::Failed(error) = &run.last {
            next.push(
                format!(
                    "{} `{}` ({error})",
                    say(language, "Make it pass:", "修复使其通过："),
                    run.command
                ),
                96,
            );
        }
    }
    match answer {
        None => {
            if next.items.is_empty() {
                next.empty = Some(say(
                    language,
                    "(none besides answering the latest request, in Goal and In Progress)",
                    "（无：处理最新请求，见目标与进行中）",
                ));
            }
        }
        Some((_, text)) if work.pending.is_empty() => {
            let question = sentences(text)
                .into_iter()
                .rev()
                .find(|sentence| sentence.ends_with(['?', '？']));
            if let Some(question) = question {
                next.push(
                    format!(
                        "{} {}",
                        say(language, "Wait for the user's answer to:", "等待用户回答："),
                        clip(&question, 220)
                    ),
                    94,
                );
            }
        }
        Some(_) => {}
    }
    if !open && next.items.is_empty() {
        next.empty = Some(say(
            language,
            "(none recorded: the latest request looked finished)",
            "（无：最新请求看来已完成）",
        ));
    }
}
