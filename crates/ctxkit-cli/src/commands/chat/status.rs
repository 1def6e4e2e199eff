//! The status line after each prompt (and after `/compact`, a `/tree` move and a resumed
//! session): how full the context is, and what the session spent so far. The context figure is
//! the last reply's usage plus estimates of what followed it (as Pi's footer); with no reply's
//! usage to go by (right after a compaction, when every reply so far failed), ctxkit's estimate of
//! the next request, marked `~`, until a reply's usage replaces it.

use anyhow::Result;
use ctxkit_engine::ContextStatus;
use ctxkit_summarizer::ConversationPrefix;

use super::Chat;

impl Chat {
    /// Shows the status line.
    pub async fn usage_line(&self) {
        let spent = crate::commands::spend::status_parts(&self.spend().await);
        let context = match self.context_figure().await {
            Ok(Some(figure)) => Some(figure.fragment()),
            Ok(None) | Err(_) => None,
        };
        if context.is_some() || spent.is_some() {
            let columns = crate::cli::terminal_columns().unwrap_or(usize::MAX);
            self.ui.info(&fitted_status(context, spent, columns));
        }
    }

    /// How full the context is; `None` when the model's window is unknown.
    pub(super) async fn context_figure(&self) -> Result<Option<Figure>> {
        let status = self.engine.context_status().await?;
        Ok(status.map(|status| Figure::of(&status, self.request_overhead())))
    }

    /// Where the chat stands: the session and its leaf (a command that changes either shows the
    /// status line after it).
    pub(super) async fn position(&self) -> (String, Option<String>) {
        self.engine
            .with_session(|session| {
                (
                    session.id().to_owned(),
                    session.leaf_id().map(str::to_owned),
                )
            })
            .await
    }

    /// What the session file records as spent (every branch). Counted on from the last count:
    /// only the entries appended since are read (the status line follows every turn).
    pub(super) async fn spend(&self) -> ctxkit_session::SessionSpend {
        let free = crate::commands::spend::free_models(&self.llm_options.model_costs);
        self.engine
            .with_session(|session| {
                let Ok(mut cache) = self.spend_cache.lock() else {
                    return ctxkit_session::session_spend(session.entries(), &free);
                };
                SpendCache::counted(&mut cache, session, free)
            })
            .await
    }

    /// ctxkit's estimate of what a request adds to its messages: the system prompt and tools.
    pub(super) fn request_overhead(&self) -> u64 {
        ctxkit_compaction::estimate_prefix_tokens(&ConversationPrefix {
            provider: String::new(),
            model: String::new(),
            system_prompt: self.agent.options().system_prompt.clone(),
            messages: Vec::new(),
            request_messages: 0,
            tools: self.agent.tools().definitions(),
            reasoning: None,
            cache: ctxkit_summarizer::CacheHints::default(),
        })
    }
}

/// The spend counted so far of one session, under the free models it was counted with.
pub(super) struct SpendCache {
    session: String,
    free: ctxkit_session::FreeModels,
    tally: ctxkit_session::SpendTally,
}

impl SpendCache {
    /// The spend of `session`, counting on from `cache` when it counted a start of this session
    /// with these free models, from the first entry otherwise (another session, `/reload`).
    fn counted(
        cache: &mut Option<Self>,
        session: &ctxkit_session::Session,
        free: ctxkit_session::FreeModels,
    ) -> ctxkit_session::SessionSpend {
        let entries = session.entries();
        let reusable = cache.as_ref().is_some_and(|cached| {
            cached.session == session.id()
                && cached.free == free
                && cached.tally.entries() <= entries.len()
        });
        let cached = match cache {
            Some(cached) if reusable => cached,
            _ => cache.insert(Self {
                session: session.id().to_owned(),
                free,
                tally: ctxkit_session::SpendTally::default(),
            }),
        };
        let counted = cached.tally.entries();
        cached.tally.add(&entries[counted..], &cached.free);
        *cached.tally.spend()
    }
}

/// The context's tokens as shown: an estimate (`estimated`) holds the system prompt and tools.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Figure {
    pub tokens: u64,
    /// The window in force: the provider's stated limit once it showed one below the model's
    /// window (compactions fire against it, so the gauge reads against it too).
    pub window: u64,
    /// The model's configured window (`contextWindow`).
    pub configured: u64,
    pub percent: f64,
    pub estimated: bool,
}

impl Figure {
    /// `status` as shown: an estimate of the messages gets `overhead`, the system prompt and tools.
    fn of(status: &ContextStatus, overhead: u64) -> Self {
        let tokens = if status.estimated {
            status.tokens + overhead
        } else {
            status.tokens
        };
        Self {
            tokens,
            window: status.context_window,
            configured: status.configured_window,
            percent: tokens as f64 / status.context_window.max(1) as f64 * 100.0,
            estimated: status.estimated,
        }
    }

    /// `12000`, or `~12000` for an estimate.
    pub(super) fn tokens_shown(&self) -> String {
        let mark = if self.estimated { "~" } else { "" };
        format!("{mark}{}", self.tokens)
    }

    /// `12%`, or `50% of the provider's limit` when the window in force is the limit the
    /// provider stated (round 97: the gauge read 28% of the configured window while compactions
    /// fired near the stated limit).
    pub(super) fn percent_shown(&self) -> String {
        if self.window < self.configured {
            format!("{:.0}% of the provider's limit", self.percent)
        } else {
            format!("{:.0}%", self.percent)
        }
    }

    /// `16000 configured` beside a stated limit in force; `None` when the window is the model's.
    pub(super) fn configured_shown(&self) -> Option<String> {
        (self.window < self.configured).then(|| format!("{} configured", self.configured))
    }

    /// `context 12000/100000 tokens, 12%` (`~12000` for an estimate).
    fn fragment(&self) -> String {
        let configured = self
            .configured_shown()
            .map_or_else(String::new, |configured| format!(" ({configured})"));
        format!(
            "context {}/{} tokens, {}{configured}",
            self.tokens_shown(),
            self.window,
            self.percent_shown()
        )
    }
}

/// The status line of the context figure and what was spent (with the cache share) in
/// `columns`: whole when it fits, else without the cache share, then the context figure alone (a
/// tester's 80-column terminal cut `0% cach` / `e reads]` after every prompt).
fn fitted_status(
    context: Option<String>,
    spent: Option<(String, Option<String>)>,
    columns: usize,
) -> String {
    let fits = |text: &str| unicode_width::UnicodeWidthStr::width(text) < columns;
    let line = |parts: &[&str]| format!("[{}]", parts.join(" · "));
    let (spent, share) = spent.map_or((None, None), |(spent, share)| (Some(spent), share));
    let with_share = spent
        .as_deref()
        .map(|spent| share.map_or_else(|| spent.to_owned(), |share| format!("{spent}, {share}")));
    let whole: Vec<&str> = context
        .iter()
        .chain(&with_share)
        .map(String::as_str)
        .collect();
    let full = line(&whole);
    if fits(&full) {
        return full;
    }
    let shorter: Vec<&str> = context.iter().chain(&spent).map(String::as_str).collect();
    let without_share = line(&shorter);
    if fits(&without_share) || shorter.len() == 1 {
        return without_share;
    }
    line(&shorter[..1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_counted_context_is_shown_as_counted_and_an_estimate_is_marked_with_its_overhead() {
        let counted = ContextStatus {
            tokens: 12_000,
            context_window: 100_000,
            configured_window: 100_000,
            estimated: false,
        };
        assert_eq!(
            Figure::of(&counted, 3_000).fragment(),
            "context 12000/100000 tokens, 12%"
        );
        let estimated = ContextStatus {
            estimated: true,
            ..counted
        };
        assert_eq!(
            Figure::of(&estimated, 3_000).fragment(),
            "context ~15000/100000 tokens, 15%"
        );
    }

    #[test]
    fn a_limit_the_provider_stated_is_the_window_shown() {
        let limited = ContextStatus {
            tokens: 4_542,
            context_window: 9_000,
            configured_window: 16_000,
            estimated: false,
        };
        assert_eq!(
            Figure::of(&limited, 0).fragment(),
            "context 4542/9000 tokens, 50% of the provider's limit (16000 configured)"
        );
    }

    #[test]
    fn the_status_line_gives_up_the_cache_share_then_the_spending_to_fit() {
        let parts = |columns| {
            fitted_status(
                Some("context 1248/32000 tokens, 4%".to_owned()),
                Some((
                    "tokens 1.2k in / 10 out, price unknown".to_owned(),
                    Some("0% cache reads".to_owned()),
                )),
                columns,
            )
        };
        let whole = parts(120);
        assert_eq!(
            whole,
            "[context 1248/32000 tokens, 4% · tokens 1.2k in / 10 out, price unknown, 0% cache reads]"
        );
        assert_eq!(
            parts(80),
            "[context 1248/32000 tokens, 4% · tokens 1.2k in / 10 out, price unknown]"
        );
        assert_eq!(parts(60), "[context 1248/32000 tokens, 4%]");
    }
}
