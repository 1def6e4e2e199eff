//! Pi's chat flags ctxkit refuses on purpose, each with what to use instead, before anything
//! starts: a Pi user's command line gets a reason, not clap's "unexpected argument" (which
//! suggested `--model` for `--mode`).

use crate::cli::ChatArgs;
use crate::usage::UsageError;

/// The first of Pi's refused flags `args` holds, as a usage error (exit 2). `--mode text` is how
/// the chat prints and passes.
pub fn refuse_pi_only_flags(args: &ChatArgs) -> Result<(), UsageError> {
    if args.api_key.is_some() {
        // The key itself is never repeated.
        return Err(UsageError {
            message: "ctxkit takes no API key on the command line: every local user can read a \
                      process's arguments"
                .to_owned(),
            hint: "save it with `ctxkit login PROVIDER` (typed without echo), or set the \
                   provider's variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, …)"
                .to_owned(),
        });
    }
    if let Some(mode) = args.mode.as_deref().filter(|mode| *mode != "text") {
        return Err(UsageError {
            message: format!("`--mode {mode}`: ctxkit's chat prints text only"),
            hint: "`ctxkit serve --stdio` speaks JSON-RPC to another program; `-p` prints the \
                   answer alone"
                .to_owned(),
        });
    }
    if let Some(path) = args.extension_paths.first() {
        return Err(UsageError {
            message: format!("`--extension {path}`: ctxkit runs no extension code"),
            hint: "`ctxkit resources` lists the extensions a Pi setup would load; the chat's \
                   tools are its own"
                .to_owned(),
        });
    }
    Ok(())
}
