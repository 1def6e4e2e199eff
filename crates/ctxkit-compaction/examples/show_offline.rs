//! Prints the offline compaction summary of a session file: `cargo run -p ctxkit-compaction --example show_offline -- FILE [KEEP]`

#![allow(
    clippy::print_stdout,
    reason = "an example program that prints its report"
)]

use std::error::Error;
use std::path::PathBuf;

use ctxkit_compaction::{
    CompactOptions, CompactionSettings, OfflineSummarizer, Prompts, compact, prepare_compaction,
};
use ctxkit_session::Session;
use tokio_util::sync::CancellationToken;

fn main() -> Result<(), Box<dyn Error>> {
    let file = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: show_offline FILE [KEEP]")?,
    );
    let keep = std::env::args()
        .nth(2)
        .map(|keep| keep.parse())
        .transpose()?
        .unwrap_or(2_000);
    let session = Session::open(&file)?;
    let settings = CompactionSettings {
        keep_recent_tokens: keep,
        ..CompactionSettings::default()
    };
    let Ok(preparation) = prepare_compaction(&session, None, settings)? else {
        return Err("no plan".into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread().build()?;
    let result = runtime.block_on(compact(
        &preparation,
        &OfflineSummarizer,
        &Prompts::default(),
        &CompactOptions::default(),
        &CancellationToken::new(),
    ))?;
    println!("{}", result.summary);
    Ok(())
}
