//! The verdict over one or more replays, like for like: each strategy beside no management and the
//! reference's compaction on the same sessions, window, provider and checks (cost, cache read
//! share, overflows, recall), and the settings the replays recommend, as the `ctxkit config set`
//! lines a user would run.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Strategy;
use super::recall::RecallSample;
use super::report::{SimulationReport, StrategyReport, headline, recall_cell};

/// One strategy summed over the replays, beside the two baselines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VerdictRow {
    pub strategy: Strategy,
    pub name: &'static str,
    /// Requests and summaries, with the provider's cache rule, dollars.
    pub cost: f64,
    /// `cost` over no management's on the same sessions (`None` when it was not replayed).
    pub cost_vs_no_management: Option<f64>,
    /// `cost` over the reference compaction's on the same sessions.
    pub cost_vs_reference: Option<f64>,
    /// Sessions where this strategy did worse than no management: more requests refused, or as
    /// many and a higher cost. (No management's cost on a session where it was refused is only
    /// what its answered requests cost: the session could not have gone on as recorded, so a
    /// strategy that answered more of it is not dearer.)
    pub dearer_than_no_management: usize,
    /// Input tokens read from the cache over all input tokens.
    pub cache_read_share: f64,
    /// Requests above the window (refused and recovered ones included).
    pub overflows: usize,
    /// Requests above the window that went out anyway: the provider refused them (not billed).
    pub unanswerable: usize,
    /// Recall at naming calls (real sessions) or of the final view (generated ones).
    pub recall: RecallSample,
    pub sessions: usize,
}

/// What the replays recommend.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    pub strategy: Strategy,
    pub name: &'static str,
    /// The settings that give it, as a settings document over an empty one.
    pub document: Value,
    /// `ctxkit config set KEY VALUE`, one per key (none: the defaults are the recommendation).
    pub commands: Vec<String>,
    /// Why it was chosen, one sentence.
    pub reason: String,
}

/// The defaults beside the cheapest other strategy, like for like: the margin a user with an empty
/// settings file gets, and the recall it keeps against the reference's compaction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DefaultsMargin {
    /// The cheapest strategy whose settings differ from the defaults' (provider-side compaction
    /// included), replayed on every session, with no request refused.
    pub against: &'static str,
    pub against_cost: f64,
    pub defaults_cost: f64,
    /// How much less the defaults cost, as a share of `against_cost` (negative when they cost more).
    pub cheaper_by: f64,
    pub recall: RecallSample,
    /// The reference compaction's recall, when it was replayed.
    pub reference_recall: Option<RecallSample>,
}

/// The defaults' margin over the cheapest other strategy; `None` when the defaults or every other
/// strategy were left out, or every other one had a request refused.
pub fn defaults_margin(reports: &[SimulationReport]) -> Option<DefaultsMargin> {
    margin_of(&verdict_rows(reports), reports)
}

/// [`defaults_margin`] from the verdict rows of `reports`.
fn margin_of(rows: &[VerdictRow], reports: &[SimulationReport]) -> Option<DefaultsMargin> {
    let window = reports.first()?.context_window;
    let settings_of = |strategy: Strategy| serde_json::to_value(strategy.settings(window)).ok();
    let defaults_settings = settings_of(Strategy::Defaults)?;
    let defaults = rows.iter().find(|row| row.strategy == Strategy::Defaults)?;
    let against = rows
        .iter()
        .filter(|row| row.unanswerable == 0 && row.sessions == reports.len())
        .filter(|row| settings_of(row.strategy).as_ref() != Some(&defaults_settings))
        .min_by(|a, b| a.cost.total_cmp(&b.cost))?;
    let reference = rows
        .iter()
        .find(|row| row.strategy == Strategy::ReferenceCompaction);
    Some(DefaultsMargin {
        against: against.name,
        against_cost: against.cost,
        defaults_cost: defaults.cost,
        cheaper_by: 1.0 - defaults.cost / against.cost.max(f64::MIN_POSITIVE),
        recall: defaults.recall,
        reference_recall: reference.map(|row| row.recall),
    })
}

/// The margin as one sentence of the verdict.
fn margin_sentence(margin: &DefaultsMargin) -> String {
    let (amount, direction) = if margin.cheaper_by >= 0.0 {
        (margin.cheaper_by, "less")
    } else {
        (-margin.cheaper_by, "more")
    };
    let reference = match &margin.reference_recall {
        Some(reference) => format!(
            " against the reference compaction's {}",
            recall_cell(reference)
        ),
        None => String::new(),
    };
    format!(
        "The defaults cost {:.1}% {direction} than the cheapest other strategy with no request \
         refused ({}, ${:.2} against ${:.2}); recall {}{reference}.",
        amount * 100.0,
        margin.against,
        margin.defaults_cost,
        margin.against_cost,
        recall_cell(&margin.recall),
    )
}

/// The verdict rows, in report order (strategies absent from a replay are left out of it).
pub fn verdict_rows(reports: &[SimulationReport]) -> Vec<VerdictRow> {
    let mut sums: Vec<Sums> = Vec::new();
    for report in reports {
        let find = |wanted: Strategy| {
            report
                .strategies
                .iter()
                .find(|strategy| strategy.strategy == wanted)
        };
        let (none, reference) = (
            find(Strategy::NoManagement),
            find(Strategy::ReferenceCompaction),
        );
        for strategy in &report.strategies {
            let position = match sums
                .iter()
                .position(|sum| sum.strategy == strategy.strategy)
            {
                Some(position) => position,
                None => {
                    sums.push(Sums::new(strategy));
                    sums.len() - 1
                }
            };
            sums[position].add(strategy, none, reference);
        }
    }
    sums.into_iter().map(Sums::row).collect()
}

/// One strategy's sums while the replays are read.
struct Sums {
    strategy: Strategy,
    name: &'static str,
    cost: f64,
    /// No management's and the reference's costs on the same sessions (`None` once a session
    /// lacked the baseline).
    none_cost: Option<f64>,
    reference_cost: Option<f64>,
    dearer: usize,
    read_tokens: u64,
    input_tokens: u64,
    overflows: usize,
    unanswerable: usize,
    recall: RecallSample,
    sessions: usize,
}

impl Sums {
    fn new(strategy: &StrategyReport) -> Self {
        Self {
            strategy: strategy.strategy,
            name: strategy.name,
            cost: 0.0,
            none_cost: Some(0.0),
            reference_cost: Some(0.0),
            dearer: 0,
            read_tokens: 0,
            input_tokens: 0,
            overflows: 0,
            unanswerable: 0,
            recall: RecallSample::default(),
            sessions: 0,
        }
    }

    fn add(
        &mut self,
        strategy: &StrategyReport,
        none: Option<&StrategyReport>,
        reference: Option<&StrategyReport>,
    ) {
        self.sessions += 1;
        self.cost += strategy.total_cost_with_cache;
        self.overflows += strategy.overflows;
        self.unanswerable += strategy.refused_requests;
        self.recall.add(headline(strategy).0);
        self.read_tokens += strategy.shared_prefix_tokens;
        self.input_tokens += strategy.input_tokens.total;
        if let Some(none) = none
            && worse_than(strategy, none)
        {
            self.dearer += 1;
        }
        self.none_cost = self
            .none_cost
            .zip(none)
            .map(|(sum, none)| sum + none.total_cost_with_cache);
        self.reference_cost = self
            .reference_cost
            .zip(reference)
            .map(|(sum, reference)| sum + reference.total_cost_with_cache);
    }

    fn row(self) -> VerdictRow {
        let cost = self.cost;
        let ratio = |base: f64| if base > 0.0 { cost / base } else { 1.0 };
        VerdictRow {
            strategy: self.strategy,
            name: self.name,
            cost,
            cost_vs_no_management: self.none_cost.map(ratio),
            cost_vs_reference: self.reference_cost.map(ratio),
            dearer_than_no_management: self.dearer,
            cache_read_share: if self.input_tokens == 0 {
                0.0
            } else {
                self.read_tokens as f64 / self.input_tokens as f64
            },
            overflows: self.overflows,
            unanswerable: self.unanswerable,
            recall: self.recall,
            sessions: self.sessions,
        }
    }
}

/// Whether `strategy` did worse than `baseline` on one session: more requests refused, or as many
/// and a higher cost.
pub fn worse_than(strategy: &StrategyReport, baseline: &StrategyReport) -> bool {
    match strategy.refused_requests.cmp(&baseline.refused_requests) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => {
            strategy.total_cost_with_cache > baseline.total_cost_with_cache + 1e-9
        }
    }
}

/// The settings document that gives `strategy` to a user with an empty settings file, or `None`
/// when no setting does (provider-side compaction is the provider's).
pub fn settings_document(strategy: Strategy, context_window: u64) -> Option<Value> {
    match strategy {
        Strategy::Defaults => Some(Value::Object(Map::new())),
        Strategy::Recommended => Some(serde_json::json!({"contextStrategy": "recommended"})),
        Strategy::ProviderCompaction => None,
        Strategy::NoManagement
        | Strategy::ReferenceCompaction
        | Strategy::Transforms
        | Strategy::RecommendedBefore
        | Strategy::RecommendedNoWindow
        | Strategy::RecommendedFreshSummaries
        | Strategy::DefaultsBefore => {
            // The peers start from the reference strategy (every key at its own default).
            let reference = serde_json::json!({"contextStrategy": "reference"});
            let base = ctxkit_engine::EngineSettings::from_settings(
                &ctxkit_settings::Settings::read(&reference),
            );
            let base = serde_json::to_value(base).ok()?;
            let wanted = serde_json::to_value(strategy.settings(context_window)).ok()?;
            let mut keys = Map::new();
            difference(&base, &wanted, "", &mut keys);
            let mut document = Map::new();
            document.insert("contextStrategy".to_owned(), "reference".into());
            document.extend(keys);
            Some(Value::Object(document))
        }
    }
}

/// The keys of `wanted` whose values differ from `base`, as a nested document.
fn difference(base: &Value, wanted: &Value, key: &str, document: &mut Map<String, Value>) {
    match (base, wanted) {
        (Value::Object(base), Value::Object(wanted)) => {
            for (name, value) in wanted {
                let mut inner = Map::new();
                difference(
                    base.get(name).unwrap_or(&Value::Null),
                    value,
                    name,
                    &mut inner,
                );
                if let Some(found) = inner.remove(name) {
                    document.insert(name.clone(), found);
                }
            }
            if !document.is_empty() && !key.is_empty() {
                let inner = std::mem::take(document);
                document.insert(key.to_owned(), Value::Object(inner));
            }
        }
        (base, wanted) if base != wanted => {
            document.insert(key.to_owned(), wanted.clone());
        }
        _ => {}
    }
}

/// `ctxkit config set` lines for a settings document (strings as typed, other values as JSON).
pub fn config_set_lines(document: &Value) -> Vec<String> {
    fn walk(value: &Value, key: &str, lines: &mut Vec<String>) {
        match value {
            Value::Object(map) if !map.is_empty() => {
                for (name, inner) in map {
                    walk(inner, &format!("{key}.{name}"), lines);
                }
            }
            Value::String(text) => lines.push(format!("ctxkit config set {key} {text}")),
            Value::Array(_) | Value::Object(_) => {
                lines.push(format!("ctxkit config set {key} '{value}'"));
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {
                lines.push(format!("ctxkit config set {key} {value}"));
            }
        }
    }
    let mut lines = Vec::new();
    if let Value::Object(map) = document {
        for (name, inner) in map {
            walk(inner, name, &mut lines);
        }
    }
    lines
}

/// A strategy other than the defaults is recommended only when it costs at least this share less
/// than the defaults over the sessions replayed: a smaller difference is within what one more
/// session moves, and not worth a settings change.
pub const MATERIAL_SAVING: f64 = 0.05;

/// The strategy the replays recommend: the cheapest a user can set whose every request a provider
/// would answer, never one that leaves the context unmanaged (no management answers a session
/// shorter than the window, and overflows the first longer one), and the defaults unless another
/// is `MATERIAL_SAVING` cheaper. Ties go to the earlier in report order (`defaults` first).
pub fn recommend(reports: &[SimulationReport]) -> Option<Recommendation> {
    let window = reports.first()?.context_window;
    let rows = verdict_rows(reports);
    let row = choose(&rows, reports.len(), window)?;
    let document = settings_document(row.strategy, window)?;
    let defaults = rows.iter().find(|row| row.strategy == Strategy::Defaults);
    let reason = match defaults {
        Some(defaults) if defaults.strategy == row.strategy => {
            match rows
                .iter()
                .filter(|other| {
                    other.cost < defaults.cost && eligible(other, reports.len(), window)
                })
                .min_by(|a, b| a.cost.total_cmp(&b.cost))
            {
                Some(cheapest) => format!(
                    "the cheapest strategy a user can set, {}, is {:.1}% cheaper on these \
                     sessions, less than the {:.0}% a settings change should save",
                    cheapest.name,
                    (1.0 - cheapest.cost / defaults.cost.max(f64::MIN_POSITIVE)) * 100.0,
                    MATERIAL_SAVING * 100.0
                ),
                None => "an empty settings file is already the cheapest of the strategies a \
                         user can set"
                    .to_owned(),
            }
        }
        Some(defaults) => format!(
            "{:.1}% cheaper than the defaults on these sessions (${:.2} against ${:.2})",
            (1.0 - row.cost / defaults.cost.max(f64::MIN_POSITIVE)) * 100.0,
            row.cost,
            defaults.cost
        ),
        None => format!("the cheapest of the strategies replayed (${:.2})", row.cost),
    };
    Some(Recommendation {
        strategy: row.strategy,
        name: row.name,
        commands: config_set_lines(&document),
        document,
        reason,
    })
}

/// Whether a strategy can be recommended at all: replayed on every session, every request
/// answered, the context managed, and settings a user can write.
fn eligible(row: &VerdictRow, sessions: usize, window: u64) -> bool {
    row.unanswerable == 0
        && row.sessions == sessions
        && row.strategy != Strategy::NoManagement
        && settings_document(row.strategy, window).is_some()
}

/// The row [`recommend`] picks: the cheapest eligible one, and the defaults over it unless it
/// saves [`MATERIAL_SAVING`].
fn choose(rows: &[VerdictRow], sessions: usize, window: u64) -> Option<&VerdictRow> {
    let cheapest = rows
        .iter()
        .filter(|row| eligible(row, sessions, window))
        .fold(None::<&VerdictRow>, |best, row| match best {
            Some(chosen) if chosen.cost <= row.cost + 1e-9 => best,
            _ => Some(row),
        })?;
    let defaults = rows
        .iter()
        .find(|row| row.strategy == Strategy::Defaults && eligible(row, sessions, window));
    match defaults {
        Some(defaults) if cheapest.cost > defaults.cost * (1.0 - MATERIAL_SAVING) => Some(defaults),
        _ => Some(cheapest),
    }
}

fn versus(ratio: Option<f64>) -> String {
    match ratio {
        Some(ratio) => format!("{:+.1}%", (ratio - 1.0) * 100.0),
        None => "—".to_owned(),
    }
}

/// The verdict table and the recommendation, as markdown.
pub fn render_verdict(reports: &[SimulationReport]) -> String {
    let mut out = format!(
        "## Verdict ({} session{}, like for like)\n\n\
         Each strategy beside no management and the reference's compaction on the same sessions, \
         window, provider and checks. Cost is requests plus summaries with the provider's cache \
         rule; a request above the window that no compaction brought under it is refused by the \
         provider and not billed, and the session could not have gone on as recorded.\n\n\
         | Strategy | Total, cache | vs no management | vs reference compaction | Dearer than no \
         management | Cache read share | Overflows (refused) | Recall |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n",
        reports.len(),
        if reports.len() == 1 { "" } else { "s" },
    );
    let rows = verdict_rows(reports);
    for row in &rows {
        let _ = writeln!(
            out,
            "| {} | ${:.2} | {} | {} | {} of {} | {:.1}% | {} ({}) | {} |",
            row.name,
            row.cost,
            versus(row.cost_vs_no_management),
            versus(row.cost_vs_reference),
            row.dearer_than_no_management,
            row.sessions,
            row.cache_read_share * 100.0,
            row.overflows,
            row.unanswerable,
            recall_cell(&row.recall),
        );
    }
    out.push('\n');
    if let Some(margin) = margin_of(&rows, reports) {
        let _ = writeln!(out, "{}\n", margin_sentence(&margin));
    }
    match recommend(reports) {
        Some(recommendation) if recommendation.commands.is_empty() => {
            let _ = writeln!(
                out,
                "Recommended: **{}** — {}. No settings to change.",
                recommendation.name, recommendation.reason
            );
        }
        Some(recommendation) => {
            let _ = writeln!(
                out,
                "Recommended: **{}** — {}. To use it:\n\n```\n{}\n```",
                recommendation.name,
                recommendation.reason,
                recommendation.commands.join("\n")
            );
        }
        None => out.push_str(
            "Recommended: nothing — every strategy a user can set sent a request no provider \
             would answer on these sessions (a larger window, or compaction on).\n",
        ),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ctxkit_engine::EngineSettings;

    /// The printed lines are true: applied to an empty settings document they give the strategy's
    /// settings, as the product reads them.
    #[test]
    fn each_settings_document_resolves_to_its_strategy() {
        for strategy in [
            Strategy::Defaults,
            Strategy::NoManagement,
            Strategy::ReferenceCompaction,
            Strategy::Transforms,
            Strategy::Recommended,
            Strategy::DefaultsBefore,
        ] {
            let document = settings_document(strategy, 200_000).unwrap();
            let resolved =
                EngineSettings::from_settings(&ctxkit_settings::Settings::read(&document));
            assert_eq!(
                serde_json::to_value(&resolved).unwrap(),
                serde_json::to_value(strategy.settings(200_000)).unwrap(),
                "{strategy:?}: {document}"
            );
        }
        assert!(settings_document(Strategy::ProviderCompaction, 200_000).is_none());
        assert_eq!(
            config_set_lines(&settings_document(Strategy::NoManagement, 200_000).unwrap()),
            [
                "ctxkit config set contextStrategy reference",
                "ctxkit config set compaction.enabled false",
                "ctxkit config set transforms.pruneEnabled false",
                "ctxkit config set transforms.dropOldThinking false",
                "ctxkit config set transforms.windowEnabled false",
            ]
        );
    }

    fn row(strategy: Strategy, cost: f64) -> VerdictRow {
        VerdictRow {
            strategy,
            name: strategy.name(),
            cost,
            cost_vs_no_management: None,
            cost_vs_reference: None,
            dearer_than_no_management: 0,
            cache_read_share: 0.0,
            overflows: 0,
            unanswerable: 0,
            recall: RecallSample::default(),
            sessions: 1,
        }
    }

    fn chosen(rows: &[VerdictRow]) -> Strategy {
        choose(rows, 1, 200_000).expect("a choice").strategy
    }

    /// One short session where doing nothing was 1.8% cheaper must not tell the user to switch
    /// every management off: the next long session would overflow.
    #[test]
    fn an_unmanaged_context_is_never_recommended() {
        let rows = [
            row(Strategy::NoManagement, 0.982),
            row(Strategy::Defaults, 1.0),
            row(Strategy::ReferenceCompaction, 1.01),
        ];
        assert_eq!(chosen(&rows), Strategy::Defaults);
    }

    #[test]
    fn a_settings_change_is_recommended_only_for_a_material_saving() {
        let small = [
            row(Strategy::Defaults, 1.0),
            row(Strategy::ReferenceCompaction, 0.97),
        ];
        assert_eq!(chosen(&small), Strategy::Defaults);
        let material = [
            row(Strategy::Defaults, 1.0),
            row(Strategy::ReferenceCompaction, 0.94),
        ];
        assert_eq!(chosen(&material), Strategy::ReferenceCompaction);
    }

    #[test]
    fn a_strategy_with_a_refused_request_or_a_missing_session_is_not_recommended() {
        let mut refused = row(Strategy::ReferenceCompaction, 0.5);
        refused.unanswerable = 1;
        let mut partial = row(Strategy::Transforms, 0.5);
        partial.sessions = 0;
        let rows = [row(Strategy::Defaults, 1.0), refused, partial];
        assert_eq!(chosen(&rows), Strategy::Defaults);
        // Without the defaults among the rows, the cheapest eligible one.
        let rows = [
            row(Strategy::Transforms, 0.9),
            row(Strategy::Recommended, 0.8),
        ];
        assert_eq!(chosen(&rows), Strategy::Recommended);
    }

    #[test]
    fn config_set_lines_type_strings_as_typed_and_the_rest_as_json() {
        let lines = config_set_lines(&serde_json::json!({
            "contextStrategy": "recommended",
            "compaction": {"enabled": false, "keepRecentTokens": 5000},
            "hooks": [],
        }));
        assert_eq!(
            lines,
            [
                "ctxkit config set contextStrategy recommended",
                "ctxkit config set compaction.enabled false",
                "ctxkit config set compaction.keepRecentTokens 5000",
                "ctxkit config set hooks '[]'",
            ]
        );
        assert!(config_set_lines(&serde_json::json!({})).is_empty());
    }
}
