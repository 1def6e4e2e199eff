//! Each model call of a Codex rollout recorded on its reply, as Pi records its own: the usage of
//! the `token_count` event its response got (a null event, or one repeated when only rate limits
//! changed, counting nothing), on the response's last reply, whether the version wrote the event
//! after the response's items or before them.

use ctxkit_import::import_file;
use ctxkit_protocol::EntryKind;

use crate::shapes::shape;

/// Every reply of the imported file in order: its usage as `input/cacheRead/output=total`, or `-`
/// for the zeros of a reply the rollout counted nothing for.
fn reply_usages(name: &str) -> Vec<String> {
    let session = import_file(&shape(name), None).unwrap();
    session
        .entries()
        .iter()
        .filter_map(|entry| {
            if let EntryKind::Message(message) = &entry.kind {
                message.as_assistant()
            } else {
                None
            }
        })
        .map(|reply| {
            // Every reply carries a complete usage, as Pi requires of an assistant message.
            let usage = reply.usage.as_ref().expect("every reply has usage");
            let cost = usage.cost.as_ref().expect("every usage has a cost");
            assert_eq!(usage.cache_write, 0);
            if usage.part_tokens() == 0 {
                // No count for this reply: zeros, which no token estimate takes as a count.
                assert_eq!((usage.total_tokens, cost.total), (0, 0.0));
                return "-".to_owned();
            }
            // Priced at the model's list prices.
            assert!(cost.total > 0.0);
            format!(
                "{}/{}/{}={}",
                usage.input, usage.cache_read, usage.output, usage.total_tokens
            )
        })
        .collect()
}

#[test]
fn a_count_written_after_its_response_goes_on_the_response_last_reply() {
    // Reasoning, a message and two calls are one response (the two calls one reply, with the
    // usage of the last); then one call; then the answer; then an aborted turn's reasoning (no
    // count); then a reply whose count came before it.
    let usages = reply_usages("codex-usage-after-items.jsonl");
    assert_eq!(
        usages,
        [
            "-",
            "-",
            "3000/1000/300=4300",
            "632/3968/120=4720",
            "720/4480/90=5290",
            "-",
            "820/4480/40=5340",
        ]
    );
    // The calls sum to the rollout's last running total, 19650: none is counted twice.
    let summed: u64 = usages
        .iter()
        .filter_map(|usage| usage.rsplit_once('=')?.1.parse::<u64>().ok())
        .sum();
    assert_eq!(summed, 19650);
}

#[test]
fn a_count_written_before_its_response_goes_on_that_response() {
    assert_eq!(
        reply_usages("codex-usage-before-items.jsonl"),
        ["-", "3000/0/80=3080", "456/2944/50=3450"]
    );
}
