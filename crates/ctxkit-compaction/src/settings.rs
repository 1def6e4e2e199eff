//! Compaction settings, with the reference's defaults and defaults that adapt to small context windows.

/// How and when to compact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens kept free for the model's reply; compaction triggers above window − reserve.
    pub reserve_tokens: u64,
    /// Roughly how many tokens of recent messages stay verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    /// The reference's defaults: enabled, reserve 16384, keep 20000.
    fn default() -> Self {
        Self {
            enabled: true,
            reserve_tokens: 16_384,
            keep_recent_tokens: 20_000,
        }
    }
}

impl CompactionSettings {
    /// The expected longest summary, 0.8 × reserve (what Pi 0.87 asked of the model). Since Pi 1.6
    /// requests carry no limit of their own; this only sizes fit checks and the offline summarizer.
    pub fn max_summary_tokens(&self) -> u64 {
        self.reserve_tokens * 4 / 5
    }

    /// The expected longest turn-prefix summary, 0.5 × reserve (Pi 0.87's limit; sizes fit checks).
    pub fn max_turn_prefix_tokens(&self) -> u64 {
        self.reserve_tokens / 2
    }

    /// Defaults scaled to a model's context window: the reference's values for windows of 128k and
    /// more; for smaller windows a reserve of 1/8 and a keep budget of 1/4 of the window, so an 8k or
    /// 32k model neither compacts every turn nor keeps more than it can hold.
    pub fn for_context_window(context_window: u64) -> Self {
        let defaults = Self::default();
        if context_window == 0 || context_window >= 131_072 {
            return defaults;
        }
        Self {
            enabled: true,
            reserve_tokens: (context_window / 8).clamp(512, defaults.reserve_tokens),
            keep_recent_tokens: (context_window / 4).clamp(512, defaults.keep_recent_tokens),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_windows_get_proportional_budgets() {
        assert_eq!(
            CompactionSettings::for_context_window(200_000),
            CompactionSettings::default()
        );
        assert_eq!(
            CompactionSettings::for_context_window(0),
            CompactionSettings::default()
        );
        let small = CompactionSettings::for_context_window(8192);
        assert_eq!(
            (small.reserve_tokens, small.keep_recent_tokens),
            (1024, 2048)
        );
        let medium = CompactionSettings::for_context_window(32_768);
        assert_eq!(
            (medium.reserve_tokens, medium.keep_recent_tokens),
            (4096, 8192)
        );
        assert_eq!(CompactionSettings::default().max_summary_tokens(), 13_107);
    }
}
