//! The history (and branch) summary's sections: each filled from the conversation and merged with
//! the earlier summary, whatever format that one had — earlier items first, finished ones moved from
//! In Progress to Done, nothing dropped except by the budget, which says so.

use crate::extract::{Conversation, Part, identifiers};
use crate::offline::facts::Facts;
use crate::offline::followups::{
    asks_nothing, changes_rule, correction_task, finished_at_end, is_correction, is_question,
    is_workflow_follow_up,
};
use crate::offline::items::{
    FILES_PRIORITY, context_file_rules, decisions, fact_items, last_report, progress_items,
    without_trailing_note,
};
use crate::offline::measures::stated_measurements;
use crate::offline::merge;
use crate::offline::previous::{Slot, carried, earlier};
use crate::offline::render::{Item, Section, Style};
use crate::offline::say;
use crate::offline::tail::tail;
use crate::offline::text::{
    Language, clean_request, clip, constraints_in, dedup_key, strip_injected,
};
use crate::offline::work::{Outcome, Work, is_file_operation};

/// What the summarized span is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Span {
    /// History before a compaction's cut: the work goes on after it.
    History,
    /// A branch the user is leaving: nothing on it will be answered.
    Branch,
}

pub(crate) fn sections(
    conversation: &Conversation,
    language: Language,
    span: Span,
) -> Vec<Section> {
    let parts = &conversation.parts;
    let (previous, branches) = earlier(conversation);
    let work = Work::from_parts(parts);
    let modified: Vec<String> = work.files.iter().map(|file| file.path.clone()).collect();
    let mut facts = Facts::collect(parts, &work, &modified);
    // On a branch being left, the base branch gone back to is not the branch of the work.
    if span == Span::Branch
        && let Some(base) = &facts.returned_to
    {
        facts.branches.retain(|branch| branch != base);
    }

    let mut goal = Section::new("## Goal", Style::Bullet);
    goal.max_items = 16;
    let requests: Vec<(usize, String)> = parts
        .iter()
        .enumerate()
        .filter_map(|(index, part)| match part {
            Part::User(text) if !text.starts_with("Ran `") && carried(text).is_none() => {
                clean_request(text, 260).map(|clean| (index, clean))
            }
            Part::User(_)
            | Part::Assistant(_)
            | Part::Thinking(_)
            | Part::ToolCalls(_)
            | Part::ToolResult(_) => None,
        })
        .collect();
    let mut earlier_rules = Vec::new();
    let mut earlier_latest = None;
    for item in previous.of(Slot::Goal) {
        // The earlier summary's latest request is the latest no more, unless nothing newer came.
        let item = match ["**Latest:**", "**最新：**"]
            .iter()
            .find_map(|mark| item.strip_prefix(mark))
        {
            Some(rest) => {
                earlier_latest = Some(rest.trim().to_owned());
                rest.trim()
            }
            None => item,
        };
        // A quoted user message that states a rule ("never block health checks") is a constraint.
        let unquoted = item.trim_matches('"');
        if unquoted.len() < 120 && !constraints_in(unquoted).is_empty() {
            earlier_rules.push(unquoted.to_owned());
        } else {
            goal.push(item, 60);
        }
    }
    if requests.is_empty()
        && let Some(latest) = earlier_latest
        && let Some(item) = goal.items.iter_mut().find(|item| item.text == latest)
    {
        item.text = format!("{} {latest}", say(language, "**Latest:**", "**最新：**"));
        item.priority = 100;
    }
    let latest = requests.last().map(|(index, _)| *index);
    // A workflow follow-up ("rebase on main and push") that later work answered is told by that
    // work's line in Progress; the Goal keeps the tasks. The latest one too, once the span
    // finished it: a command ran after it, none failed or is pending, and the assistant answered.
    let mut follow_ups = 0;
    let mut previous_request: Option<String> = None;
    for (order, (index, request)) in requests.iter().enumerate() {
        if (Some(*index) != latest || (order > 0 && finished_at_end(parts, &work, *index)))
            && is_workflow_follow_up(request)
            && work.commands.iter().any(|run| run.position > *index)
        {
            follow_ups += 1;
            continue;
        }
        // A question the assistant answered is not a goal (the answer is in Progress), nor is a
        // check-in or a report that something works.
        if Some(*index) != latest
            && (is_question(request) || asks_nothing(request))
            && parts
                .iter()
                .skip(index + 1)
                .any(|part| matches!(part, Part::Assistant(_)))
        {
            continue;
        }
        // Repeats of one request (`… (iteration 3)`) keep the latest wording.
        let key = dedup_key(without_trailing_note(request));
        goal.items
            .retain(|item| dedup_key(without_trailing_note(&item.text)) != key);
        // A request that takes back or corrects the one just before it replaces that one's line:
        // what was taken back is no longer asked for. The span's first request states the task,
        // which a correction amends rather than withdraws: the two share one line.
        let corrected = previous_request.take().filter(|before| {
            is_correction(request) && goal.items.last().is_some_and(|item| item.text == *before)
        });
        let request = match &corrected {
            Some(before) if order == 1 => format!("{before} → {request}"),
            Some(_) => correction_task(request).to_owned(),
            None => request.clone(),
        };
        let text = if Some(*index) == latest {
            format!("{} {request}", say(language, "**Latest:**", "**最新：**"))
        } else {
            previous_request = Some(request.clone());
            request
        };
        let mut priority = if Some(*index) == latest {
            100
        } else if order == 0 {
            72
        } else {
            40 + (order * 30 / requests.len().max(1)) as u32
        };
        if corrected.is_some()
            && let Some(before) = goal.items.pop()
        {
            priority = priority.max(before.priority);
        }
        goal.push(text, priority);
    }
    // Requests past the Goal's limit were handled (only the latest can be open): the 24 most recent
    // that name something go to Done, several to a line, so their specifics stay within reach.
    let mut handled: Vec<String> = Vec::new();
    let mut not_repeated = follow_ups;
    if goal.items.len() > goal.max_items {
        let mut ranked: Vec<usize> = (0..goal.items.len()).collect();
        ranked.sort_by(|first, second| {
            goal.items[*second]
                .priority
                .cmp(&goal.items[*first].priority)
                .then(second.cmp(first))
        });
        let mut overflow: Vec<usize> = ranked.split_off(goal.max_items);
        overflow.sort_unstable();
        for index in overflow.iter().rev() {
            let text = goal.items.remove(*index).text;
            // Only requests that name something (a path, a symbol, a code) are worth the room.
            let names_something = text.contains('`') || !identifiers(&text).is_empty();
            if names_something && handled.len() < 24 && !text.contains("'/") {
                handled.insert(0, clip(&text, 120));
            } else {
                not_repeated += 1;
            }
        }
    }
    if let Some(focus) = &conversation.focus {
        goal.push(
            format!(
                "{} {}",
                say(language, "Focus for this summary:", "本次摘要重点："),
                clip(focus, 200)
            ),
            95,
        );
    }

    let mut constraints = Section::new("## Constraints & Preferences", Style::Bullet);
    constraints.max_items = 14;
    // An earlier rule a request of the span changed ("no more .bak files") is replaced by it.
    let changed = |rule: &str| {
        requests
            .iter()
            .any(|(_, request)| changes_rule(request, rule))
    };
    for item in previous.of(Slot::Constraints) {
        if !changed(item) {
            constraints.push(item, 86);
        }
    }
    for item in earlier_rules {
        if !changed(&item) {
            constraints.push(item, 86);
        }
    }
    // A request the next one takes back ("forget that", "no wait —") states no rule; the span's
    // first request, the task, keeps its rules.
    let retracted: Vec<usize> = requests
        .windows(2)
        .skip(1)
        .filter(|pair| is_correction(&pair[1].1))
        .map(|pair| pair[0].0)
        .collect();
    for (index, part) in parts.iter().enumerate() {
        if let Part::User(text) = part
            && !text.starts_with("Ran `")
            && carried(text).is_none()
            && !retracted.contains(&index)
        {
            // A sentence that only takes the request before back states no rule.
            for constraint in constraints_in(correction_task(&strip_injected(text))) {
                constraints.push(constraint, 85);
            }
        }
    }
    context_file_rules(parts, &mut constraints);

    // Tokens of the work finished in this span, for moving earlier open items to Done.
    let done_tokens = merge::done_tokens(&work, &modified);
    let commit_messages: Vec<String> = work
        .commits
        .iter()
        .map(|(_, _, message)| message.clone())
        .collect();

    let mut done = Section::new("### Done", Style::Done);
    let mut in_progress = Section::new("### In Progress", Style::Todo);
    let mut blocked = Section::new("### Blocked", Style::Bullet);
    let mut next = Section::new("## Next Steps", Style::Numbered);
    // The earlier "Edited …"/"Wrote …" lines join the span's into one account of the files.
    let mut earlier_files: Vec<crate::offline::work::FileChange> = Vec::new();
    // The earlier summary's other Done items are folded into a few lines once the span's are in.
    let mut earlier_done: Vec<&str> = Vec::new();
    for item in previous.of(Slot::Done) {
        match merge::earlier_files(item) {
            Some(files) => earlier_files.extend(files),
            None => earlier_done.push(item),
        }
    }
    for chunk in handled.chunks(3) {
        done.push(
            format!(
                "{} {}",
                say(language, "Earlier requests:", "更早的请求："),
                chunk.join(" | ")
            ),
            35,
        );
    }
    if not_repeated > 0 {
        done.push(
            match language {
                Language::English => {
                    format!("({not_repeated} more earlier requests, follow-ups without a name in them, not repeated)")
                }
                Language::Chinese => format!("（另有 {not_repeated} 条更早的后续请求未列出）"),
            },
            34,
        );
    }
    // Open items of the earlier summary stay open unless the new work finished them; when the
    // session has moved on to several new requests since, they are marked as not confirmed.
    let moved_on = requests.len() >= 3;
    let mut finished_earlier: Vec<&str> = Vec::new();
    for (slot, section) in [
        (Slot::InProgress, &mut in_progress),
        (Slot::Next, &mut next),
        (Slot::Blocked, &mut blocked),
    ] {
        for item in previous.of(slot) {
            if merge::finished(item, &done_tokens, &commit_messages) {
                // A reported failure of a command that passes now is superseded by its new line; a
                // planned step that a commit or an opened pull request of the span tells is told
                // by that line.
                let told = slot == Slot::Next
                    && merge::told_by_own_line(item, &done_tokens, &commit_messages);
                if !merge::is_failure_report(item) && !told {
                    finished_earlier.push(item);
                }
            } else if moved_on {
                section.push(
                    format!(
                        "{item} {}",
                        say(
                            language,
                            "(from the earlier summary; not confirmed since)",
                            "（来自先前摘要；之后未确认）"
                        )
                    ),
                    50,
                );
            } else {
                section.push(item, 80);
            }
        }
    }
    for item in progress_items(&work, &earlier_files, language) {
        done.push(item.text, item.priority);
    }
    let latest_position = requests.last().map_or(0, |(index, _)| *index);
    for run in &work.commands {
        if run.last == Outcome::Cancelled {
            blocked.push(
                format!(
                    "`{}` {}",
                    run.command,
                    say(
                        language,
                        "was cancelled before it finished (result unknown)",
                        "未完成即被取消（结果未知）"
                    )
                ),
                60,
            );
        }
    }
    for (index, run) in work.failing().into_iter().enumerate() {
        if is_file_operation(&run.command) && run.position < latest_position {
            continue;
        }
        if let Outcome::Failed(error) = &run.last {
            blocked.push(
                format!(
                    "`{}` {}: {error}",
                    run.command,
                    say(language, "fails", "失败")
                ),
                96 - index.min(10) as u32,
            );
        }
    }
    match span {
        Span::History => tail(
            parts,
            &requests,
            &work,
            language,
            &mut in_progress,
            &mut next,
        ),
        Span::Branch => {
            next.empty = Some(say(
                language,
                "(none: the user left this branch)",
                "（无：用户已离开此分支）",
            ));
        }
    }
    // On a branch being left the last report tells what the branch found out (the measurements,
    // what blocked it), and nothing later will: it keeps more of it.
    let report_limit = match span {
        Span::History => 280,
        Span::Branch => 600,
    };
    let report = last_report(parts, report_limit);
    let mut assistant_texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Assistant(text) => Some(text.as_str()),
            Part::User(_) | Part::Thinking(_) | Part::ToolCalls(_) | Part::ToolResult(_) => None,
        })
        .collect();
    // The last report has its own line.
    if report.is_some() {
        assistant_texts.pop();
    }
    for measured in stated_measurements(&assistant_texts) {
        done.push(
            format!("{} {measured}", say(language, "Measured:", "测量结果：")),
            68,
        );
    }
    if let Some(report) = report {
        done.push(
            format!("{} {report}", say(language, "Last report:", "最后的汇报：")),
            66,
        );
    }
    // What the earlier summary said was done, and its open items this span finished, each told
    // once and folded, not repeated beside the span's own lines.
    let folded = merge::fold_earlier_done(&earlier_done, &done.items, language);
    let finished_line = merge::finished_line(&finished_earlier, language);
    let new_items = std::mem::take(&mut done.items);
    for (text, priority) in folded
        .into_iter()
        .map(|text| (text, 55))
        .chain(finished_line.map(|text| (text, 68)))
    {
        done.push(text, priority);
    }
    for item in new_items {
        done.push(item.text, item.priority);
    }

    let mut decisions_section = Section::new("## Key Decisions", Style::Bullet);
    decisions_section.max_items = 10;
    for item in previous.of(Slot::Decisions) {
        decisions_section.push(item, 52);
    }
    let found = decisions(parts);
    let count = found.len();
    for (index, decision) in found.into_iter().enumerate() {
        decisions_section.push(decision, 40 + (index * 10 / count.max(1)) as u32);
    }

    let mut critical = Section::new("## Critical Context", Style::Bullet);
    for item in branches {
        critical.push(
            format!(
                "{} {item}",
                say(language, "On an abandoned branch:", "已放弃的分支：")
            ),
            60,
        );
    }
    // Identifiers that the other lines already name are not listed again; a path or symbol the
    // user's own request names is told by that request, whatever its rank.
    let goal_said = goal.items.iter().map(|item| Item {
        text: item.text.clone(),
        priority: item.priority.max(FILES_PRIORITY),
    });
    let said: Vec<Item> = [
        &constraints,
        &done,
        &in_progress,
        &blocked,
        &decisions_section,
        &next,
        &critical,
    ]
    .iter()
    .flat_map(|section| section.items.iter().cloned())
    .chain(goal_said)
    .chain(previous.of(Slot::Critical).map(|text| Item {
        text: text.to_owned(),
        priority: 70,
    }))
    .collect();
    let earlier_critical: Vec<&str> = previous.of(Slot::Critical).collect();
    let passed: Vec<&str> = work
        .commands
        .iter()
        .filter(|run| run.last == Outcome::Passed)
        .map(|run| run.command.as_str())
        .collect();
    let settled = |item: &str| {
        item.split('`')
            .nth(1)
            .is_some_and(|command| passed.contains(&command))
    };
    let fresh = fact_items(&facts, &work, language, &said);
    for item in merge::merge_critical(&earlier_critical, fresh, settled) {
        critical.push(item.text, item.priority);
    }
    vec![
        goal,
        constraints,
        Section::new("## Progress", Style::HeadingOnly),
        done,
        in_progress,
        blocked,
        decisions_section,
        next,
        critical,
    ]
}
