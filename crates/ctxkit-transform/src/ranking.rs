//! The ranking of an omitted text's names (see `digest`), kept for the texts cut most recently.
//! A result cut for one request is cut the same way for the next (the prune boundary only moves
//! forward), and ranking its names was most of a cut's work: a view built again at every request
//! of a chat or a replay, or at every entry of an exported page, now ranks each cut text once,
//! whichever thread builds the view. What a view can already read is left out after the ranking,
//! which keeps the order of the names that remain, so the digest is the same byte for byte.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher as _;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use crate::digest::{reports_failure, shape, tokens, trim_name};

/// A ranked name of an omitted text: its bytes there, and its place among the names in order of
/// first appearance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ranked {
    pub start: usize,
    pub end: usize,
    pub first: usize,
}

/// The most names (and texts) held; past it the rankings are let go. About 5 MB. Exporting a
/// 1,918-entry session ranks 350 texts of 7,400 names in all.
const MAX_HELD: usize = 200_000;

/// Rankings by the hashes of the omitted and the kept text and the omitted text's length.
#[derive(Default)]
struct Rankings {
    by_text: HashMap<(u64, u64, usize), Arc<[Ranked]>>,
    held: usize,
}

/// Shared by every thread: views built on several threads at once hold the same results, and
/// each thread ranked each of them again (a fifth of an export's CPU went to ranking names).
static RANKINGS: LazyLock<Mutex<Rankings>> = LazyLock::new(Mutex::default);

fn rankings() -> std::sync::MutexGuard<'static, Rankings> {
    RANKINGS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The names of `omitted` not among those of `kept`, best first (the module `digest` says how),
/// as ranked before when the same texts were.
pub(crate) fn ranked_names(omitted: &str, kept: &str) -> Arc<[Ranked]> {
    let hasher = foldhash::fast::FixedState::with_seed(0);
    let key = (
        hasher.hash_one(omitted),
        hasher.hash_one(kept),
        omitted.len(),
    );
    if let Some(found) = rankings().by_text.get(&key).cloned() {
        return found;
    }
    // Ranked without the lock: two threads ranking one text at once each rank it (the same).
    let ranked: Arc<[Ranked]> = rank(omitted, kept).into();
    let mut rankings = rankings();
    if rankings.held + ranked.len() + 1 > MAX_HELD {
        rankings.by_text.clear();
        rankings.held = 0;
    }
    if rankings.by_text.insert(key, Arc::clone(&ranked)).is_none() {
        rankings.held += ranked.len() + 1;
    }
    ranked
}

/// A name's score on a line that reports a failure, above any shape's.
const FAILURE_SCORE: u32 = 3;

/// A name while its mentions are counted.
struct Candidate<'a> {
    name: &'a str,
    first: usize,
    count: usize,
    score: u32,
}

/// The ranking itself: names on a failure line first, then the names the text repeats most, then
/// by each name's best score (a failure line +3, a path or URL +1, a symbol +1), ties to the
/// earlier name.
fn rank(omitted: &str, kept: &str) -> Vec<Ranked> {
    // Hashed fast (the names are counted, never listed in the maps' order).
    let kept_names: HashSet<&str, foldhash::fast::FixedState> =
        kept.split('\n').flat_map(tokens).map(trim_name).collect();
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    let mut index: HashMap<&str, usize, foldhash::fast::FixedState> = HashMap::default();
    for line in omitted.split('\n') {
        let mut failure: Option<bool> = None;
        for token in tokens(line) {
            let name = trim_name(token);
            let Some(shape) = shape(name) else {
                continue;
            };
            if kept_names.contains(name) {
                continue;
            }
            let failure = *failure.get_or_insert_with(|| reports_failure(line));
            let score = FAILURE_SCORE * u32::from(failure)
                + u32::from(shape.path_or_url)
                + u32::from(shape.symbol);
            match index.get(name) {
                Some(&at) => {
                    if let Some(candidate) = candidates.get_mut(at) {
                        candidate.count += 1;
                        candidate.score = candidate.score.max(score);
                    }
                }
                None => {
                    index.insert(name, candidates.len());
                    candidates.push(Candidate {
                        name,
                        first: candidates.len(),
                        count: 1,
                        score,
                    });
                }
            }
        }
    }
    candidates.sort_by_key(|candidate| {
        let failure = candidate.score >= FAILURE_SCORE;
        (
            std::cmp::Reverse(failure),
            std::cmp::Reverse(candidate.count),
            std::cmp::Reverse(candidate.score),
            candidate.first,
        )
    });
    // Every name is a slice of `omitted`: its place is its distance from the text's start.
    let base = omitted.as_ptr() as usize;
    candidates
        .into_iter()
        .map(|candidate| {
            let start = candidate.name.as_ptr() as usize - base;
            Ranked {
                start,
                end: start + candidate.name.len(),
                first: candidate.first,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The second ranking of the same texts is the first one, held; another kept text is ranked
    /// anew.
    #[test]
    fn the_same_texts_are_ranked_once() {
        let omitted = "error: src/a.rs failed\nparse_header in src/b.rs\nsrc/a.rs again";
        let first = ranked_names(omitted, "");
        // Another copy of the same text: what is held is found by the text, not by its address.
        let copy = String::from(omitted);
        let again = ranked_names(&copy, "");
        assert!(Arc::ptr_eq(&first, &again));
        let names: Vec<&str> = first
            .iter()
            .map(|name| &omitted[name.start..name.end])
            .collect();
        assert_eq!(names, ["src/a.rs", "parse_header", "src/b.rs"]);
        let without = ranked_names(omitted, "src/a.rs");
        assert!(!Arc::ptr_eq(&first, &without));
        assert!(
            without
                .iter()
                .all(|name| &omitted[name.start..name.end] != "src/a.rs")
        );
    }
}
