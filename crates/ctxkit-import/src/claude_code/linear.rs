//! Rebuilding the conversation Claude Code showed its model when Claude called several tools in one
//! reply.
//!
//! Claude Code writes each content block of a streamed reply as its own `assistant` record (all with
//! the reply's `message.id`, each the child of the previous block), and each tool's result as a
//! `user` record whose parent is the block that called it. The result of every call but the last
//! then sits on a side branch, and following `parentUuid` from the leaf loses it. Before sending,
//! Claude Code merges the blocks of one message id back into one reply and the results into the turn
//! after it; this does the same to the tree: the fragments of one reply become one assistant entry
//! (the first fragment's), and sibling result records are chained one after another under it.

use std::collections::HashMap;

use ctxkit_protocol::{AgentMessage, AssistantMessage, ContentBlock, EntryKind};

use super::{Record, Sym};

/// Per uuid (by `Sym::index`): a record index, or `NONE`.
type RecordOf = Vec<u32>;
const NONE: u32 = u32::MAX;

fn record_of(table: &RecordOf, sym: Sym) -> Option<usize> {
    match table.get(sym.index()) {
        Some(&NONE) | None => None,
        Some(&index) => usize::try_from(index).ok(),
    }
}

fn set_record(table: &mut RecordOf, sym: Sym, index: usize) {
    if let Some(slot) = table.get_mut(sym.index()) {
        *slot = u32::try_from(index).unwrap_or(NONE);
    }
}

/// Merges reply fragments and chains sibling results; returns nothing, the records' parents are
/// rewritten in place and merged fragments are marked `removed`. `uuid_count`: how many uuids the
/// transcript has (the length of the per-uuid tables).
pub(super) fn relink_parallel_calls(records: &mut [Record], uuid_count: usize) {
    // uuid → its first record.
    let mut index_of: RecordOf = vec![NONE; uuid_count];
    for (index, record) in records.iter().enumerate().rev() {
        if let Some(uuid) = record.uuid {
            set_record(&mut index_of, uuid, index);
        }
    }
    merge_fragments(records, &index_of);
    chain_sibling_results(records);
}

/// Merges each fragment into the first record of its reply: a record whose `message.id` a kept
/// reply already has, and whose parent (past non-conversation records) is one of that reply's
/// fragments or a result answering it.
fn merge_fragments(records: &mut [Record], index_of: &RecordOf) {
    // uuid of a fragment (merged or head) → index of its reply's head.
    let mut reply_of: RecordOf = vec![NONE; index_of.len()];
    let mut heads: HashMap<(Sym, bool), usize> = HashMap::new();
    for index in 0..records.len() {
        let Some(message_id) = records[index].message_id else {
            continue;
        };
        let parent = conversational_parent(records, index_of, records[index].parent_uuid);
        let key = (message_id, records[index].sidechain);
        let head = heads.get(&key).copied().filter(|&head| {
            let Some(parent) = parent else {
                return false;
            };
            if record_of(&reply_of, parent) == Some(head) {
                return true;
            }
            // A result record under one of the reply's fragments.
            record_of(index_of, parent).is_some_and(|result| {
                records[result].tool_results
                    && records[result]
                        .parent_uuid
                        .and_then(|grandparent| record_of(&reply_of, grandparent))
                        == Some(head)
            })
        });
        let uuid = records[index].uuid;
        match head {
            Some(head) => {
                let fragment = std::mem::take(&mut records[index].entries);
                if let Some(reply) = assistant_of(&mut records[head]) {
                    for stored in fragment {
                        if let Some(EntryKind::Message(message)) = stored.into_kind()
                            && let AgentMessage::Assistant(part) = *message
                        {
                            absorb(reply, part);
                        }
                    }
                }
                records[index].removed = true;
                records[index].alias_of = records[head].uuid;
                if let Some(uuid) = uuid {
                    set_record(&mut reply_of, uuid, head);
                }
            }
            None => {
                heads.insert(key, index);
                if let Some(uuid) = uuid {
                    set_record(&mut reply_of, uuid, index);
                }
            }
        }
    }
    // Children of merged fragments hang under the reply.
    let aliases: HashMap<Sym, Sym> = records
        .iter()
        .filter_map(|record| Some((record.uuid?, record.alias_of?)))
        .collect();
    for record in records.iter_mut() {
        if let Some(target) = record.parent_uuid.and_then(|parent| aliases.get(&parent)) {
            record.parent_uuid = Some(*target);
        }
    }
}

/// The nearest ancestor that is a `user` or `assistant` record, skipping records Claude Code writes
/// between a reply's blocks (`progress`, `attachment`, `system`).
fn conversational_parent(
    records: &[Record],
    index_of: &RecordOf,
    mut parent: Option<Sym>,
) -> Option<Sym> {
    for _ in 0..records.len() {
        let Some(index) = parent.and_then(|uuid| record_of(index_of, uuid)) else {
            break;
        };
        if records[index].conversational {
            break;
        }
        parent = records[index].parent_uuid;
    }
    parent
}

/// The assistant message of a record's entries (its last assistant entry), structured again
/// from its line to take the fragments.
fn assistant_of(record: &mut Record) -> Option<&mut AssistantMessage> {
    record
        .entries
        .iter_mut()
        .rev()
        .filter(|stored| stored.is_assistant())
        .find_map(|stored| match stored.kind_mut()? {
            EntryKind::Message(message) => match message.as_mut() {
                AgentMessage::Assistant(assistant) => Some(assistant),
                AgentMessage::User(_)
                | AgentMessage::ToolResult(_)
                | AgentMessage::BashExecution(_)
                | AgentMessage::Custom(_)
                | AgentMessage::BranchSummary(_)
                | AgentMessage::CompactionSummary(_)
                | AgentMessage::Unknown(_) => None,
            },
            EntryKind::ThinkingLevelChange(_)
            | EntryKind::ModelChange(_)
            | EntryKind::Compaction(_)
            | EntryKind::BranchSummary(_)
            | EntryKind::Custom(_)
            | EntryKind::CustomMessage(_)
            | EntryKind::Label(_)
            | EntryKind::SessionInfo(_)
            | EntryKind::ContextEdit(_)
            | EntryKind::Usage(_)
            | EntryKind::Unknown { .. } => None,
        })
}

/// Appends a later fragment of the same reply: its blocks, its usage (each fragment repeats the
/// reply's, the last is final) and its stop reason (a reply that called tools stops for them).
fn absorb(reply: &mut AssistantMessage, part: AssistantMessage) {
    reply.content.extend(part.content);
    if part.usage.is_some() {
        reply.usage = part.usage;
    }
    let calls_tools = reply
        .content
        .iter()
        .any(|block| matches!(block, ContentBlock::ToolCall(_)));
    let stop = match part.stop_reason.as_deref() {
        Some("error") => "error",
        Some("length") => "length",
        _ if calls_tools => "toolUse",
        Some(other) => other,
        None => "stop",
    };
    reply.stop_reason = Some(stop.to_owned());
    if part.error_message.is_some() {
        reply.error_message = part.error_message;
    }
}

/// The children (record indexes, in file order) of every parent with two result records or more,
/// and of those results: the only records `chain_sibling_results` moves. A transcript's other
/// records are not listed (a million of them would take hundreds of megabytes).
fn result_families(records: &[Record]) -> HashMap<Sym, Vec<usize>> {
    let mut results_under: HashMap<Sym, usize> = HashMap::new();
    for record in records
        .iter()
        .filter(|record| !record.removed && record.tool_results)
    {
        if let Some(parent) = record.parent_uuid {
            *results_under.entry(parent).or_default() += 1;
        }
    }
    let mut listed: std::collections::HashSet<Sym> = results_under
        .into_iter()
        .filter(|(_, results)| *results >= 2)
        .map(|(parent, _)| parent)
        .collect();
    let members: Vec<Sym> = records
        .iter()
        .filter(|record| !record.removed && record.tool_results)
        .filter(|record| {
            record
                .parent_uuid
                .is_some_and(|parent| listed.contains(&parent))
        })
        .filter_map(|record| record.uuid)
        .collect();
    listed.extend(members);
    let mut children: HashMap<Sym, Vec<usize>> = HashMap::new();
    for (index, record) in records.iter().enumerate() {
        if record.removed {
            continue;
        }
        if let Some(parent) = record.parent_uuid
            && listed.contains(&parent)
        {
            children.entry(parent).or_default().push(index);
        }
    }
    children
}

/// Chains result records that share a parent, in file order, and moves what followed them (a later
/// child of that parent or of a result but the last) under the last result before it.
fn chain_sibling_results(records: &mut [Record]) {
    let children = result_families(records);
    let mut groups: Vec<&Vec<usize>> = children.values().collect();
    groups.sort_by_key(|group| group.first().copied());
    for kids in groups {
        let results: Vec<usize> = kids
            .iter()
            .copied()
            .filter(|&kid| records[kid].tool_results)
            .collect();
        let (Some(&first), Some(&last)) = (results.first(), results.last()) else {
            continue;
        };
        if results.len() < 2 {
            continue;
        }
        for pair in results.windows(2) {
            records[pair[1]].parent_uuid = records[pair[0]].uuid;
        }
        let mut followers: Vec<usize> = kids
            .iter()
            .copied()
            .filter(|kid| !results.contains(kid) && *kid > first)
            .collect();
        for member in &results {
            if *member == last {
                continue;
            }
            if let Some(grandchildren) = records[*member].uuid.and_then(|uuid| children.get(&uuid))
            {
                followers.extend(grandchildren.iter().copied());
            }
        }
        for follower in followers {
            if let Some(&before) = results.iter().rev().find(|&&member| member < follower) {
                records[follower].parent_uuid = records[before].uuid;
            }
        }
    }
}
