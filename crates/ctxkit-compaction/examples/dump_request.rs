//! temp
#![allow(clippy::print_stdout, clippy::unwrap_used)]
use ctxkit_compaction::*;
use ctxkit_session::Session;
use std::path::PathBuf;
fn main() {
    let file = PathBuf::from(std::env::args().nth(1).unwrap());
    let keep: u64 = std::env::args()
        .nth(2)
        .map(|k| k.parse().unwrap())
        .unwrap_or(2000);
    let session = Session::open(&file).unwrap();
    let settings = CompactionSettings {
        keep_recent_tokens: keep,
        ..CompactionSettings::default()
    };
    let Ok(preparation) = prepare_compaction(&session, None, settings).unwrap() else {
        panic!("no plan")
    };
    let request = history_request(
        &preparation,
        &Prompts::default(),
        &OfflineSummarizer,
        &CompactOptions::default(),
    );
    println!("{}", request.user_text);
    println!("=====MAX {}", request.max_tokens);
}
