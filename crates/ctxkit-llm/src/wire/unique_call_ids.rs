//! Every tool-call id once per request. Anthropic refuses a request whose `tool_use` ids repeat
//! ("`tool_use` ids must be unique"), and Responses and Gemini pair a result with its call by id.
//! Ids repeat in real sessions: a compatible server that sends no id (its calls were named
//! `call_0`, `call_1` in every reply), a transcript another agent wrote twice on one path, a reply
//! retried by a client. A call whose id an earlier call of the request already used is sent under
//! a new id, and so are the results that answer it; the session keeps the ids it holds.
//!
//! Ids are compared in every form a provider sends them ([`sent_keys`]): whole as Anthropic and
//! Gemini spell it ([`portable_id`]: `call.1` and `call_1` are one id there, and so are
//! `call_A|fc_1` and `call_A_fc_1`), cut to OpenAI's 40 characters, and the call part of a
//! Responses id (`call_A|fc_1` goes to Responses as `call_A`). A new id's call part is at most 40
//! characters, and a Responses id keeps its item part.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};

use ctxkit_protocol::ContentBlock;

use super::conversation::{Turn, portable_id};

/// The longest id given to a repeated call: what OpenAI's Chat Completions takes.
const NEW_ID_LIMIT: usize = 40;

/// Renames, in `turns`, each call whose id an earlier call used, with the results answering it.
pub(crate) fn make_call_ids_unique(turns: &mut [Turn<'_>]) {
    let mut used: HashSet<String> = HashSet::new();
    // The current reply's calls by the id the session holds: the ids they are sent under, in the
    // reply's order, for the results after it (a reply may repeat an id; each result answers the
    // first call of its id not answered yet, as `OpenToolCalls` pairs them).
    let mut sent_as: HashMap<String, VecDeque<String>> = HashMap::new();
    for turn in turns.iter_mut() {
        match turn {
            Turn::Assistant(reply) => {
                sent_as.clear();
                rename_repeated_calls(reply, &mut used, &mut sent_as);
            }
            Turn::ToolResult { id, .. } => {
                if let Some(new_id) = sent_as.get_mut(id.as_ref()).and_then(VecDeque::pop_front)
                    && new_id != *id
                {
                    *id = Cow::Owned(new_id);
                }
            }
            Turn::User(_) => sent_as.clear(),
        }
    }
}

/// Gives the calls of `reply` whose id is in `used` a new one (the reply is copied only then),
/// adds every call's id as sent to `used`, and, when any was renamed, each to `sent_as`.
fn rename_repeated_calls(
    reply: &mut Cow<'_, ctxkit_protocol::AssistantMessage>,
    used: &mut HashSet<String>,
    sent_as: &mut HashMap<String, VecDeque<String>>,
) {
    let mut seen = HashSet::new();
    let repeats = reply
        .content
        .iter()
        .filter_map(ContentBlock::as_tool_call)
        .any(|call| {
            // An id's forms are often one string: each counts once.
            let keys: HashSet<String> = sent_keys(&call.id).into_iter().collect();
            keys.into_iter()
                .any(|key| used.contains(&key) || !seen.insert(key))
        });
    if !repeats {
        used.extend(seen);
        return;
    }
    for block in &mut reply.to_mut().content {
        let ContentBlock::ToolCall(call) = block else {
            continue;
        };
        let keys = sent_keys(&call.id);
        let new_id = if keys.iter().all(|key| !used.contains(key)) {
            call.id.clone()
        } else {
            let item = call.id.split_once('|').map(|(_, item)| item);
            unused_id(&keys[2], item, used)
        };
        used.extend(sent_keys(&new_id));
        sent_as
            .entry(call.id.clone())
            .or_default()
            .push_back(new_id.clone());
        call.id = new_id;
    }
}

/// The forms a provider sends call id `id` in: whole with Anthropic's characters (at most 64),
/// that cut to OpenAI's 40, and its call part (before a Responses id's `|`) cut the same way.
fn sent_keys(id: &str) -> [String; 3] {
    let whole = portable_id(id);
    let cut: String = whole.chars().take(NEW_ID_LIMIT).collect();
    let call = id.split_once('|').map_or(id, |(call, _)| call);
    let call: String = portable_id(call).chars().take(NEW_ID_LIMIT).collect();
    [whole, cut, call]
}

/// `call`'s start with `_2`, `_3`, … after it (and `|item` when the id had an item part): the
/// first id none of whose forms `used` holds.
fn unused_id(call: &str, item: Option<&str>, used: &HashSet<String>) -> String {
    (2u64..)
        .map(|number| {
            let suffix = format!("_{number}");
            let start: String = call
                .chars()
                .take(NEW_ID_LIMIT.saturating_sub(suffix.len()))
                .collect();
            match item {
                Some(item) => format!("{start}{suffix}|{item}"),
                None => format!("{start}{suffix}"),
            }
        })
        .find(|candidate| sent_keys(candidate).iter().all(|key| !used.contains(key)))
        .unwrap_or_else(|| call.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::wire::conversation::turns;
    use crate::wire::test_support::message;

    fn reply(ids: &[&str]) -> ctxkit_protocol::AgentMessage {
        let calls: Vec<_> = ids
            .iter()
            .map(|id| json!({"type": "toolCall", "id": id, "name": "read", "arguments": {}}))
            .collect();
        message(
            json!({"role": "assistant", "content": calls, "stopReason": "toolUse",
            "provider": "vllm", "api": "openai-completions", "model": "m"}),
        )
    }

    fn result(id: &str, text: &str) -> ctxkit_protocol::AgentMessage {
        message(
            json!({"role": "toolResult", "toolCallId": id, "toolName": "read",
            "content": [{"type": "text", "text": text}], "isError": false}),
        )
    }

    /// The ids of the calls and results as sent, in order (`c` a call, `r` a result).
    fn sent_ids(messages: &[ctxkit_protocol::AgentMessage]) -> Vec<String> {
        let mut shape = Vec::new();
        for turn in turns(messages) {
            match turn {
                Turn::Assistant(reply) => shape.extend(
                    reply
                        .content
                        .iter()
                        .filter_map(ContentBlock::as_tool_call)
                        .map(|call| format!("c {}", call.id)),
                ),
                Turn::ToolResult { id, parts, .. } => shape.push(format!(
                    "r {id} {}",
                    crate::wire::conversation::joined_text(&parts)
                )),
                Turn::User(_) => shape.push("user".to_owned()),
            }
        }
        shape
    }

    #[test]
    fn a_server_naming_every_replys_calls_call_0_gets_them_renamed_with_their_results() {
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&["call_0", "call_1"]),
            result("call_0", "a"),
            result("call_1", "b"),
            reply(&["call_0"]),
            result("call_0", "c"),
            message(json!({"role": "user", "content": "again"})),
            reply(&["call_0"]),
        ];
        assert_eq!(
            sent_ids(&messages),
            [
                "user",
                "c call_0",
                "c call_1",
                "r call_0 a",
                "r call_1 b",
                "c call_0_2",
                "r call_0_2 c",
                "user",
                "c call_0_3",
                // The last reply's call is answered as no result: the session ended there.
                "r call_0_3 No result provided",
            ]
        );
    }

    #[test]
    fn ids_that_read_as_one_where_they_are_sent_are_repeats_and_a_new_id_fits_forty_characters() {
        let long = "x".repeat(70);
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&["call.1", long.as_str()]),
            result("call.1", "a"),
            result(&long, "b"),
            reply(&["call_1", long.as_str()]),
            result("call_1", "c"),
            result(&long, "d"),
        ];
        let shape = sent_ids(&messages);
        assert_eq!(shape[5], "c call_1_2");
        let renamed = format!("{}_2", "x".repeat(38));
        assert_eq!(shape[6], format!("c {renamed}"));
        assert_eq!(shape[7], "r call_1_2 c");
        assert_eq!(shape[8], format!("r {renamed} d"));
    }

    /// Verifier (2026-12-07, third round): `call_A|fc_1` and `call_A_fc_1` go to Anthropic and
    /// Chat Completions as one id.
    #[test]
    fn a_responses_id_and_its_spelling_elsewhere_are_repeats() {
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&["call_A|fc_1"]),
            result("call_A|fc_1", "a"),
            reply(&["call_A_fc_1"]),
            result("call_A_fc_1", "b"),
        ];
        assert_eq!(
            sent_ids(&messages),
            [
                "user",
                "c call_A|fc_1",
                "r call_A|fc_1 a",
                "c call_A_fc_1_2",
                "r call_A_fc_1_2 b"
            ]
        );
    }

    /// Verifier (2026-12-07): `call_A|fc_1` and `call_A|fc_2` go to Responses as one `call_id`,
    /// and two 45-character ids alike in their first 40 as one id to OpenAI's Chat Completions.
    #[test]
    fn ids_alike_where_a_provider_cuts_them_are_repeats() {
        let long = "x".repeat(40);
        let (first, second) = (format!("{long}AAAAA"), format!("{long}BBBBB"));
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&[
                "call_A|fc_1",
                "call_A|fc_2",
                first.as_str(),
                second.as_str(),
            ]),
            result("call_A|fc_1", "a"),
            result("call_A|fc_2", "b"),
            result(&first, "c"),
            result(&second, "d"),
        ];
        let shape = sent_ids(&messages);
        let renamed = format!("{}_2", "x".repeat(38));
        assert_eq!(
            shape,
            [
                "user".to_owned(),
                "c call_A|fc_1".to_owned(),
                "c call_A_2|fc_2".to_owned(),
                format!("c {first}"),
                format!("c {renamed}"),
                "r call_A|fc_1 a".to_owned(),
                "r call_A_2|fc_2 b".to_owned(),
                format!("r {first} c"),
                format!("r {renamed} d"),
            ]
        );
    }

    #[test]
    fn a_reply_repeating_an_id_has_each_result_answer_its_own_call() {
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&["call_0", "call_0"]),
            result("call_0", "a"),
            result("call_0", "b"),
        ];
        assert_eq!(
            sent_ids(&messages),
            [
                "user",
                "c call_0",
                "c call_0_2",
                "r call_0 a",
                "r call_0_2 b"
            ]
        );
    }

    /// The request Anthropic refused with "`tool_use` ids must be unique": a session started on a
    /// server that names no call, continued on Anthropic.
    #[test]
    fn anthropic_is_sent_each_tool_use_id_once_with_its_result() {
        let request = crate::chat::ChatRequest {
            system_prompt: "system".into(),
            messages: vec![
                message(json!({"role": "user", "content": "go"})),
                reply(&["call_0"]),
                result("call_0", "a"),
                reply(&["call_0"]),
                result("call_0", "b"),
            ],
            tools: Vec::new(),
            max_tokens: Some(100),
            reasoning: None,
            cache_retention: None,
            cache: ctxkit_summarizer::CacheHints::default(),
            projected_input_tokens: None,
        };
        let config = crate::wire::test_support::config("anthropic/claude-sonnet-4-5");
        let wire = crate::wire::anthropic_tools::build(&config, &request);
        let messages = wire.body["messages"].as_array().unwrap();
        let ids = |role: &str, kind: &str, key: &str| -> Vec<String> {
            messages
                .iter()
                .filter(|message| message["role"] == role)
                .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
                .filter(|block| block["type"] == kind)
                .map(|block| block[key].as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(ids("assistant", "tool_use", "id"), ["call_0", "call_0_2"]);
        assert_eq!(
            ids("user", "tool_result", "tool_use_id"),
            ["call_0", "call_0_2"]
        );
    }

    #[test]
    fn a_request_without_repeats_is_sent_as_the_session_holds_it() {
        let messages = vec![
            message(json!({"role": "user", "content": "go"})),
            reply(&["toolu_1"]),
            result("toolu_1", "a"),
            reply(&["toolu_2"]),
            result("toolu_2", "b"),
        ];
        let turns = turns(&messages);
        assert!(turns.iter().all(|turn| match turn {
            Turn::Assistant(reply) => matches!(**reply, Cow::Borrowed(_)),
            Turn::ToolResult { id, .. } => matches!(id, Cow::Borrowed(_)),
            Turn::User(_) => true,
        }));
    }
}
