//! The server's methods: parameters in, engine call, JSON out.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use ctxkit_session::{Session, SessionError};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::errors::engine_error;
use crate::wire;
use crate::{Answer, MethodError, PROTOCOL_VERSION, Shared, codes, forward_events};
use ctxkit_engine::{
    CheckReport, Decision, Engine, EngineError, EngineOptions, HookSet, SkipReason,
};

/// The methods handled by [`context_method`].
const CONTEXT_METHODS: &[&str] = &[
    "message.append",
    "view.get",
    "transcript.get",
    "context.usage",
    "check.before_prompt",
    "check.after_run",
    "compact",
    "compact.cancel",
    "pruned.fetch",
    "recall",
];
/// The methods handled by [`tree_method`].
const TREE_METHODS: &[&str] = &[
    "tree.get",
    "tree.navigate",
    "branch_summary.cancel",
    "fork",
    "clone",
    "forget",
];
/// The methods handled by [`pin_method`].
const PIN_METHODS: &[&str] = &["pin.add", "pin.remove", "pin.list"];
/// The other methods, handled by [`dispatch`] itself.
const OTHER_METHODS: &[&str] = &[
    "initialize",
    "session.create",
    "session.open",
    "session.info",
    "model.set",
    "session.name",
    "label.set",
    "compaction.list",
    "compaction.undo",
    "sessions.list",
    "agent.run",
    "agent.cancel",
    "agent.steer",
    "agent.follow_up",
    "shutdown",
];

/// Every method, as `initialize` lists them.
pub(crate) fn methods() -> Vec<&'static str> {
    OTHER_METHODS
        .iter()
        .chain(CONTEXT_METHODS)
        .chain(TREE_METHODS)
        .chain(PIN_METHODS)
        .copied()
        .collect()
}

/// A method's parameters as `T` (`crate::params`: by name, every field known).
pub(crate) fn params<T: DeserializeOwned>(value: Value) -> Result<T, MethodError> {
    crate::params::decode(value)
}

fn to_json(value: impl serde::Serialize) -> Result<Value, MethodError> {
    serde_json::to_value(value)
        .map_err(|error| MethodError::new(codes::ENGINE_ERROR, error.to_string()))
}

pub(crate) async fn engine(shared: &Shared) -> Result<Engine, MethodError> {
    shared.engine.read().await.clone().ok_or_else(|| {
        MethodError::new(
            codes::NO_SESSION,
            "no session is open: call `session.create` or `session.open` first",
        )
    })
}

fn decision_name(decision: Decision) -> &'static str {
    match decision {
        Decision::Skip(SkipReason::Disabled) => "skip_disabled",
        Decision::Skip(SkipReason::NoReply) => "skip_no_reply",
        Decision::Skip(SkipReason::Aborted) => "skip_aborted",
        Decision::Skip(SkipReason::Stale) => "skip_stale",
        Decision::Skip(SkipReason::UnknownWindow) => "skip_unknown_window",
        Decision::Skip(SkipReason::NoUsage) => "skip_no_usage",
        Decision::Skip(SkipReason::UnderThreshold) => "skip_under_threshold",
        Decision::Skip(SkipReason::OverflowHandled) => "skip_overflow_handled",
        Decision::Skip(SkipReason::NothingToCompact) => "skip_nothing_to_compact",
        Decision::RecoveryExhausted => "recovery_exhausted",
        Decision::Overflow => "overflow",
        Decision::Threshold { .. } => "threshold",
    }
}

fn report_json(report: CheckReport) -> Result<Value, MethodError> {
    Ok(json!({
        "decision": decision_name(report.decision),
        "compaction": to_json(report.compaction.map(wire::CompactionResult::from))?,
        "retry": report.retry,
    }))
}

/// `session.open`: a file (`path`), or a session of the database store by `id`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenParams {
    #[serde(default)]
    path: Option<PathBuf>,
    #[serde(default)]
    id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelParams {
    /// Required; `null` clears the model.
    #[serde(deserialize_with = "Option::deserialize")]
    model: Option<wire::Model>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AppendParams {
    message: Value,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FocusParams {
    #[serde(default)]
    focus: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkParams {
    entry_id: String,
    #[serde(default)]
    position: wire::Position,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinParams {
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    entry_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PinIdParams {
    pin_id: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForgetParams {
    from_id: String,
    #[serde(default)]
    to_id: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FetchParams {
    tool_call_id: String,
    /// The call's arguments (a `ctxkit://tool-call/` marker) instead of its result.
    #[serde(default)]
    call: bool,
}

/// Makes `opened` the client's session. Nothing here fails: the session open until now is given
/// up only once the new one is open, so a refused `session.open` or `session.create` (which never
/// gets here) leaves it open and writable.
pub(crate) async fn install(
    shared: &Arc<Shared>,
    opened: crate::mirror::Opened,
) -> Result<Value, MethodError> {
    let session = crate::mirror::replace(shared, opened).await;
    let project = crate::projects::of_session(shared, session.cwd());
    let engine = Engine::new(
        session,
        EngineOptions {
            settings: shared.config.settings.clone(),
            model: shared.config.model.clone(),
            summarizer: Arc::clone(&shared.config.summarizer),
            prompts: shared.config.prompts.clone(),
            hooks: HookSet::new(),
            thinking_level: None,
            project: Some(project),
        },
    );
    // A client's own loop sends its requests itself: its status line (`context.usage`) shows the
    // provider's count, which holds the client's system prompt and tools.
    engine
        .set_unrecorded_overhead(ctxkit_engine::UnrecordedOverhead::FromProviderCount)
        .await;
    forward_events(shared, &engine);
    let info = session_info(&engine).await;
    crate::agent_run::stop_warming(shared);
    shared.steered.clear();
    *shared.engine.write().await = Some(engine);
    Ok(info)
}

async fn session_info(engine: &Engine) -> Value {
    let compacting = engine.is_compacting();
    info_json(&engine.facts().await, compacting)
}

/// `session.info`'s answer.
pub(crate) fn info_json(facts: &ctxkit_engine::SessionFacts, compacting: bool) -> Value {
    json!({
        "session_id": facts.session_id,
        "session_file": facts.session_file.as_ref().map(|path| path.display().to_string()),
        "cwd": facts.cwd,
        "leaf_id": facts.leaf_id,
        "entries": facts.entries,
        "name": facts.name,
        "is_compacting": compacting,
        // QA: a file whose last line was cut in half opened as if whole, one entry short.
        "problems": facts
            .problems
            .iter()
            .map(|(line, message)| json!({"line": line, "message": message}))
            .collect::<Vec<_>>(),
    })
}

pub(crate) async fn dispatch(
    shared: &Arc<Shared>,
    method: &str,
    raw: Value,
) -> Result<Answer, MethodError> {
    crate::params::none(method, &raw)?;
    if method == "view.get" {
        return view(shared).await;
    }
    if method == "transcript.get" {
        return crate::pages::transcript(&engine(shared).await?, raw).await;
    }
    dispatch_value(shared, method, raw).await.map(Answer::Value)
}

/// The model's view, written as JSON text straight from its messages: the view is the largest
/// answer of a turn, and a `Value` tree of it cost more than building it (`docs/benchmarks.md`).
async fn view(shared: &Arc<Shared>) -> Result<Answer, MethodError> {
    let engine = engine(shared).await?;
    crate::pages::check_view_length(&engine).await?;
    let view = engine.model_view().await.map_err(engine_error)?;
    // A client's own loop sends this view next: its reply's usage counts it.
    engine.note_view_sent().await;
    let answer = wire::ViewAnswer::from(&view);
    serde_json::value::to_raw_value(&answer)
        .map(Answer::Text)
        .map_err(|error| MethodError::new(codes::ENGINE_ERROR, error.to_string()))
}

/// The methods whose answer is built as a `Value`.
async fn dispatch_value(
    shared: &Arc<Shared>,
    method: &str,
    raw: Value,
) -> Result<Value, MethodError> {
    if CONTEXT_METHODS.contains(&method) {
        return context_method(shared, method, raw).await;
    }
    if TREE_METHODS.contains(&method) {
        if matches!(method, "fork" | "clone") {
            return fork(shared, method, raw).await;
        }
        return tree_method(shared, method, raw).await;
    }
    if PIN_METHODS.contains(&method) {
        return pin_method(shared, method, raw).await;
    }
    match method {
        "session.name" => crate::session_methods::name(shared, raw).await,
        "label.set" => crate::session_methods::label(shared, raw).await,
        "compaction.list" => crate::session_methods::compactions(shared).await,
        "compaction.undo" => crate::session_methods::undo(shared).await,
        "sessions.list" => crate::session_methods::sessions(shared, raw).await,
        "agent.run" => crate::agent_run::run(shared, raw).await,
        "agent.cancel" => crate::agent_run::cancel(shared).await,
        "agent.steer" => crate::steer::steer(shared, raw).await,
        "agent.follow_up" => crate::steer::follow_up(shared, raw).await,
        "initialize" => Ok(json!({
            "protocol_version": PROTOCOL_VERSION,
            "server": "ctxkit",
            "version": env!("CARGO_PKG_VERSION"),
            "methods": methods(),
        })),
        "session.create" => crate::session_methods::create(shared, raw).await,
        "session.open" => {
            let params: OpenParams = params(raw)?;
            let opened = match (params.id, params.path, &shared.config.store) {
                (Some(id), None, Some(binding)) => {
                    crate::mirror::open(shared, binding, &id).await?
                }
                (None, Some(path), _) => {
                    crate::mirror::Opened::file(Session::open(&path).map_err(|error| {
                        let foreign = matches!(error, SessionError::NotASession { .. });
                        let mut refused = engine_error(EngineError::Session(error));
                        let hint = shared.config.foreign_hint.filter(|_| foreign);
                        if let Some(hint) = hint.and_then(|hint| hint(&path)) {
                            refused.message = format!("{}; {hint}", refused.message);
                        }
                        refused
                    })?)
                }
                (Some(_), None, None) => {
                    return Err(MethodError::new(
                        codes::INVALID_PARAMS,
                        "invalid params: `id` opens a session of a database store \
                         (`--store postgres://…`); pass the session file's `path`",
                    ));
                }
                (Some(_), Some(_), _) | (None, None, _) => {
                    return Err(MethodError::new(
                        codes::INVALID_PARAMS,
                        "invalid params: pass either `path` (a session file) or `id` (a stored session)",
                    ));
                }
            };
            install(shared, opened).await
        }
        "session.info" => Ok(session_info(&engine(shared).await?).await),
        "model.set" => {
            let params: ModelParams = params(raw)?;
            engine(shared)
                .await?
                .set_model(params.model.map(Into::into))
                .await;
            Ok(json!({}))
        }
        other => Err(MethodError::new(
            codes::METHOD_NOT_FOUND,
            format!("unknown method `{other}` (see `initialize` for the list)"),
        )),
    }
}

/// The model's context: appends, the view, usage, the compaction checks, manual compaction.
async fn context_method(
    shared: &Arc<Shared>,
    method: &str,
    raw: Value,
) -> Result<Value, MethodError> {
    match method {
        "message.append" => {
            let params: AppendParams = params(raw)?;
            let message = super::validate::validate_message(params.message).map_err(|reason| {
                MethodError::new(codes::INVALID_PARAMS, format!("invalid params: {reason}"))
            })?;
            let engine = engine(shared).await?;
            super::validate::check_tool_result_pairs(&engine, &message).await?;
            let id = engine.append(message).await.map_err(engine_error)?;
            Ok(json!({ "entry_id": id }))
        }
        "context.usage" => to_json(
            engine(shared)
                .await?
                .context_usage()
                .await
                .map_err(engine_error)?
                .map(wire::Usage::from),
        ),
        "check.before_prompt" => report_json(
            engine(shared)
                .await?
                .before_prompt()
                .await
                .map_err(engine_error)?,
        ),
        "check.after_run" => report_json(
            engine(shared)
                .await?
                .after_run()
                .await
                .map_err(engine_error)?,
        ),
        "compact" => {
            let params: FocusParams = params(raw)?;
            let engine = engine(shared).await?;
            // A `compact.cancel` read after this request (pipelined right behind it, or sent
            // while it waited its turn) cancels it, as it would a running one.
            let cancelled = shared.compact_cancels.load(Ordering::SeqCst)
                != shared.compact_cancels_before_running.load(Ordering::SeqCst);
            let compacted = if cancelled {
                engine.compact_cancelled().await
            } else {
                // Another writer refuses the compaction before its summary is paid for.
                engine.hold_lock().await.map_err(engine_error)?;
                engine.compact(params.focus).await
            };
            to_json(wire::CompactionResult::from(
                compacted.map_err(engine_error)?,
            ))
        }
        "compact.cancel" => {
            engine(shared).await?.cancel_compaction();
            Ok(json!({}))
        }
        "pruned.fetch" => {
            let params: FetchParams = params(raw)?;
            let engine = engine(shared).await?;
            let id = &params.tool_call_id;
            let (text, what) = if params.call {
                (engine.fetch_tool_call(id).await, "tool call")
            } else {
                (engine.fetch_pruned(id).await, "tool result")
            };
            match text.map_err(engine_error)? {
                Some(text) => Ok(json!({ "text": text })),
                None => Err(MethodError {
                    code: codes::ENGINE_ERROR,
                    message: format!("no {what} with call id `{id}`"),
                    kind: Some("entry_not_found"),
                }),
            }
        }
        "recall" => crate::recall::recall(shared, raw).await,
        other => Err(MethodError::new(
            codes::METHOD_NOT_FOUND,
            format!("unknown method `{other}` (see `initialize` for the list)"),
        )),
    }
}

/// The session tree: navigation with branch summaries, forks, clones, forgetting a span.
/// `fork` and `clone`: the engine goes on in a new session; on a database store it is stored as
/// a new session whose lease this client takes (`mirror::adopt_fork`).
async fn fork(shared: &Arc<Shared>, method: &str, raw: Value) -> Result<Value, MethodError> {
    let engine = engine(shared).await?;
    let outcome = if method == "clone" {
        engine.clone_session().await
    } else {
        let params: ForkParams = params(raw)?;
        engine.fork(&params.entry_id, params.position.into()).await
    }
    .map_err(engine_error)?;
    let session_id = engine.with_session(|session| session.id().to_owned()).await;
    let forked = wire::Forked::new(outcome, session_id);
    let on_database = shared.mirror.lock().await.is_some();
    if let Some(path) = &forked.session_file
        && on_database
    {
        // The new file is written whole before it is stored (a fork holds no reply yet).
        engine.flush_pending().await.map_err(engine_error)?;
        crate::mirror::adopt_fork(shared, std::path::Path::new(path)).await?;
    }
    to_json(forked)
}

async fn tree_method(shared: &Arc<Shared>, method: &str, raw: Value) -> Result<Value, MethodError> {
    match method {
        "tree.get" => {
            let engine = engine(shared).await?;
            let record = engine.with_session(|session| session.tree_record()).await;
            to_json(record)
        }
        "tree.navigate" => {
            let params: wire::Navigate = params(raw)?;
            let target_id = params.target_id.clone();
            to_json(wire::Navigated::from(
                engine(shared)
                    .await?
                    .navigate_recorded(&target_id, params.into())
                    .await
                    .map_err(engine_error)?,
            ))
        }
        "branch_summary.cancel" => {
            engine(shared).await?.cancel_branch_summary();
            Ok(json!({}))
        }
        "forget" => {
            let params: ForgetParams = params(raw)?;
            to_json(wire::Forgotten::from(
                engine(shared)
                    .await?
                    .forget(&params.from_id, params.to_id.as_deref(), params.summary)
                    .await
                    .map_err(engine_error)?,
            ))
        }
        other => Err(MethodError::new(
            codes::METHOD_NOT_FOUND,
            format!("unknown method `{other}` (see `initialize` for the list)"),
        )),
    }
}

/// Pinned context.
async fn pin_method(shared: &Arc<Shared>, method: &str, raw: Value) -> Result<Value, MethodError> {
    match method {
        "pin.add" => {
            let params: PinParams = params(raw)?;
            let engine = engine(shared).await?;
            let pin = match (params.text, params.entry_id) {
                (Some(text), None) => engine.pin_text(&text).await,
                (None, Some(entry_id)) => engine.pin_entry(&entry_id).await,
                (Some(_), Some(_)) | (None, None) => {
                    return Err(MethodError::new(
                        codes::INVALID_PARAMS,
                        "`pin.add` takes either `text` or `entry_id`",
                    ));
                }
            };
            to_json(wire::PinRecord::from(pin.map_err(engine_error)?))
        }
        "pin.remove" => {
            let params: PinIdParams = params(raw)?;
            engine(shared)
                .await?
                .unpin(&params.pin_id)
                .await
                .map_err(engine_error)?;
            Ok(json!({}))
        }
        "pin.list" => {
            let pins = engine(shared).await?.pins().await;
            let pins: Vec<wire::PinRecord> = pins.into_iter().map(Into::into).collect();
            Ok(json!({ "pins": to_json(pins)? }))
        }
        other => Err(MethodError::new(
            codes::METHOD_NOT_FOUND,
            format!("unknown method `{other}` (see `initialize` for the list)"),
        )),
    }
}
