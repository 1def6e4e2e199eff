//! Prints how many exact identifiers of the summarized span the offline summary keeps, against plain
//! truncation of the span to the same length, for session files at several keep budgets:
//! `cargo run --release -p ctxkit-compaction --example offline_recall -- FILE...`

#![allow(
    clippy::print_stdout,
    reason = "an example program that prints its report"
)]

use std::error::Error;
use std::path::PathBuf;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, OfflineSummarizer, Prompts, compact, identifier_recall,
    prepare_compaction, serialize_messages,
};
use ctxkit_session::Session;
use tokio_util::sync::CancellationToken;

fn main() -> Result<(), Box<dyn Error>> {
    let files: Vec<PathBuf> = std::env::args().skip(1).map(PathBuf::from).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    println!(
        "| session | keep | identifiers | offline summary | head truncation | tail truncation |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for file in files {
        let session = Session::open(&file)?;
        for keep in [500, 2_000, 8_000, 20_000] {
            let settings = CompactionSettings {
                enabled: true,
                reserve_tokens: 4_000,
                keep_recent_tokens: keep,
            };
            let Ok(preparation) = prepare_compaction(&session, None, settings)? else {
                continue;
            };
            let result = runtime.block_on(compact(
                &preparation,
                &OfflineSummarizer,
                &Prompts::default(),
                &CompactOptions::default(),
                &CancellationToken::new(),
            ))?;
            let span = serialize_messages(&preparation.messages_to_summarize);
            let history = result
                .summary
                .split("\n\n---\n\n")
                .next()
                .unwrap_or_default();
            let report = identifier_recall(&span, history);
            println!(
                "| {} | {keep} | {} | {:.0}% | {:.0}% | {:.0}% |",
                file.file_name()
                    .map(|name| name.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                report.identifiers,
                report.summary * 100.0,
                report.head_truncation * 100.0,
                report.tail_truncation * 100.0
            );
        }
    }
    Ok(())
}
