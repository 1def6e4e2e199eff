//! `bash`: the shell's `-c` ([`super::Shell`]: bash unless `shellPath` names another) in the working directory, stdout and stderr interleaved, with a time limit and
//! cancellation. The command runs in its own process group, which is killed as a whole on timeout
//! or cancel (so a Ctrl-C in the terminal reaches ctxkit, not the command).

use std::collections::VecDeque;
use std::io::Read;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::limit::Keep;
use super::{ToolContext, ToolOutcome};

/// How long output is still collected after the command exits (background processes may hold the
/// pipe open).
const DRAIN_GRACE: Duration = Duration::from_millis(200);
/// Output is kept up to this many bytes, its end: earlier bytes are dropped (and said to be).
const MAX_CAPTURE: usize = 64 * 1024 * 1024;
/// A running command's watcher is told its output at most this often,
const PROGRESS_EVERY: Duration = Duration::from_millis(100);
/// … its last lines, this many,
const PROGRESS_LINES: usize = 5;
/// … read from at most this many of its last bytes.
const PROGRESS_BYTES: usize = 4096;

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BashEnd {
    /// It exited with this code (`None`: killed by a signal).
    Exited(Option<i32>),
    /// It ran past the time limit and was killed.
    TimedOut(Duration),
    /// The user interrupted it.
    Cancelled,
}

impl BashEnd {
    /// The status line added after the output, `None` for a command that exited with 0.
    pub fn status(self) -> Option<String> {
        match self {
            Self::Exited(Some(0)) => None,
            Self::Exited(Some(code)) => Some(format!("Command exited with code {code}")),
            Self::Exited(None) => Some("Command was killed by a signal".to_owned()),
            Self::TimedOut(limit) => Some(format!(
                "Command timed out after {}s and was killed",
                limit.as_secs()
            )),
            Self::Cancelled => Some(
                ctxkit_engine::InterruptCause::User
                    .command_cancelled()
                    .to_owned(),
            ),
        }
    }
}

/// A finished command: its output (both streams in order, trailing newlines removed, not yet
/// bounded or redacted), how many newlines ended it, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BashRun {
    pub output: String,
    /// The newlines taken off the end of `output`: the saved full output keeps them.
    pub trailing_newlines: usize,
    /// The output's first bytes that were not kept (beyond the capture's limit); `output` says
    /// so on its first line.
    pub dropped_bytes: usize,
    pub end: BashEnd,
}

/// Runs `command`; `timeout` overrides the context's default.
pub fn run_bash(
    command: &str,
    timeout: Option<Duration>,
    call_id: &str,
    context: &ToolContext,
) -> ToolOutcome {
    // A project that is ctxkit's home or among the user's credentials: `read` and `write`
    // refuse its files one by one, and the model's `bash` would run among them (QA: started in
    // `~/.ctxkit`, or through a committed link to it, `bash` printed the key in
    // `settings.json`). `serve`'s `agent.run` refuses such a project before it starts. The
    // user's own `!command` runs there: the user typed it.
    if let Some(refusal) = context.workspace.project_refusal() {
        return ToolOutcome::error(format!("`bash` refused: {refusal}"));
    }
    match execute_bash(command, timeout, context) {
        Ok(run) => run_outcome(run, call_id, context),
        Err(error) => ToolOutcome::error(error),
    }
}

/// What the model is shown of a finished command: its output's end within the limits (the whole
/// saved when cut), how it ended, and how much came before what was kept.
fn run_outcome(run: BashRun, call_id: &str, context: &ToolContext) -> ToolOutcome {
    let status = match run.end {
        // Why: the user, or the server stopping, or its client gone (the engine knows).
        BashEnd::Cancelled => Some(cancelled_status(context)),
        end @ (BashEnd::Exited(_) | BashEnd::TimedOut(_)) => end.status(),
    };
    // The saved full output is the command's, byte for byte (QA r105: its last newline was
    // dropped); the model is shown it without the trailing newlines. One copy of a flood's
    // output, not two.
    let mut full = run.output;
    let shown = full.len();
    if shown > 0 {
        full.push_str(&"\n".repeat(run.trailing_newlines));
    }
    // The model is shown the command's output without the line that counts what was dropped
    // (the saved file keeps it): bounded with it, a one-line output was "the last 1 of 2 lines"
    // (QA 2026-12-07). The note after it says how much came before.
    let marker = dropped_marker(run.dropped_bytes).len().min(shown);
    // A flood of blank lines kept only blank lines: not "(no output)" (QA 2026-12-07).
    let nothing = if run.dropped_bytes > 0 {
        "(blank lines only)"
    } else {
        "(no output)"
    };
    let body = full
        .get(marker..shown)
        .filter(|body| !body.is_empty())
        .unwrap_or(nothing);
    let bound = |text: &str| super::limit::bound_within(text, Keep::Tail, context.max_output_bytes);
    let mut outcome = super::outcome_within(
        body,
        super::Saved::Full(&full),
        bound,
        call_id,
        context,
        status.is_some(),
    );
    if run.dropped_bytes > 0 {
        // The line saying so opens the output, and the tail shown leaves it out: the model took
        // a flood's 64 MB kept for the whole (QA 2026-12-07: 4 GB came, 4 GB were dropped).
        outcome.text.push_str(&format!(
            "\n\n[The command wrote {} bytes more before these, which the counts above leave \
             out; they were not kept]",
            run.dropped_bytes
        ));
    }
    if let Some(status) = status {
        outcome.text.push_str("\n\n");
        outcome.text.push_str(&status);
    }
    outcome
}

/// The status line of a command cancelled with its turn, naming who cancelled it.
fn cancelled_status(context: &ToolContext) -> String {
    context
        .engine
        .as_ref()
        .map_or(ctxkit_engine::InterruptCause::User, |engine| {
            engine.interrupt_cause()
        })
        .command_cancelled()
        .to_owned()
}

/// Runs `command` with the context's shell in the context's directory, without the secret variables the
/// context does not pass, until it exits, `timeout` (else the context's default) passes or the
/// context's cancel fires. The same for the `bash` tool and the user's `!cmd` in the chat.
pub fn execute_bash(
    command: &str,
    timeout: Option<Duration>,
    context: &ToolContext,
) -> Result<BashRun, String> {
    execute_bash_capped(command, timeout, context, MAX_CAPTURE)
}

/// [`execute_bash`], keeping the last `max_capture` bytes of the output.
fn execute_bash_capped(
    command: &str,
    timeout: Option<Duration>,
    context: &ToolContext,
    max_capture: usize,
) -> Result<BashRun, String> {
    let timeout = timeout.unwrap_or(context.bash_timeout);
    // Opened through the project's jail; the descriptor is held until the child has started.
    let working_directory = context.workspace.working_directory(&context.cwd)?;
    let program = context.shell.program()?;
    let mut shell = super::running::own_session(&program);
    // Provider keys and other credentials stay with ctxkit: a model asked to print the
    // environment must not find them (unless `chat.passEnv` names them).
    let variables = std::env::vars_os().filter_map(|(name, value)| {
        Some((
            name.into_string().ok()?,
            value.to_string_lossy().into_owned(),
        ))
    });
    for name in ctxkit_secrets::secret_variables_for_child(variables, &context.pass_env) {
        shell.env_remove(name);
    }
    // Those passed on purpose, from where ctxkit keeps them once out of its own environment.
    shell.envs(ctxkit_secrets::passed_secret_variables(&context.pass_env));
    let spawned = shell
        .arg("-c")
        // One pipe for both streams, so the output keeps its order.
        .arg(context.shell.script(command))
        .current_dir(working_directory.path_for_child())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    drop(working_directory);
    let mut child =
        spawned.map_err(|error| format!("Cannot start `{}`: {error}", program.display()))?;
    // Until it is reaped: a chat ended by a signal kills its group (`running`).
    let _running = super::running::Running::register(child.id());
    // Bounded: a flood (`yes`) waits on the pipe rather than piling up chunks in memory (QA
    // 2026-12-07: 750 MB for any flood, 11 times what the capture keeps).
    let (sender, receiver) = mpsc::sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT);
    if let Some(mut stdout) = child.stdout.take() {
        std::thread::spawn(move || {
            let mut buffer = [0u8; 8192];
            while let Ok(read) = stdout.read(&mut buffer) {
                if read == 0 || sender.send(buffer[..read].to_vec()).is_err() {
                    break;
                }
            }
        });
    }
    let mut capture = Capture::new(max_capture);
    // What the watcher was last told, and when: told at most every `PROGRESS_EVERY` (a flood is
    // not a report per chunk), and of output that then stops too.
    let (mut reported, mut unreported) = (Instant::now(), false);
    let started = Instant::now();
    let end = loop {
        match child.try_wait() {
            Ok(Some(status)) => break BashEnd::Exited(status.code()),
            Ok(None) => {}
            Err(_) => break BashEnd::Exited(None),
        }
        if context.cancel.is_cancelled() {
            kill_group(&mut child);
            break BashEnd::Cancelled;
        }
        if started.elapsed() >= timeout {
            kill_group(&mut child);
            break BashEnd::TimedOut(timeout);
        }
        if let Ok(chunk) = receiver.recv_timeout(Duration::from_millis(20)) {
            capture.push(&chunk);
            // Whatever else came meanwhile, before the next check of the command.
            while let Ok(chunk) = receiver.try_recv() {
                capture.push(&chunk);
            }
            unreported = true;
        }
        if let Some(progress) = &context.progress
            && unreported
            && reported.elapsed() >= PROGRESS_EVERY
        {
            progress.report(capture.last_lines(PROGRESS_LINES));
            (reported, unreported) = (Instant::now(), false);
        }
    };
    let drain_until = Instant::now() + DRAIN_GRACE;
    while let Some(left) = drain_until.checked_duration_since(Instant::now()) {
        match receiver.recv_timeout(left) {
            Ok(chunk) => capture.push(&chunk),
            Err(_) => break,
        }
    }
    let dropped_bytes = capture.dropped;
    let mut output = capture.text();
    let kept = output.trim_end_matches('\n').len();
    let trailing_newlines = output.len() - kept;
    output.truncate(kept);
    Ok(BashRun {
        output,
        trailing_newlines,
        dropped_bytes,
        end,
    })
}

/// The line that opens a command's kept output when its first `dropped` bytes were not kept
/// (empty when none were).
fn dropped_marker(dropped: usize) -> String {
    if dropped == 0 {
        return String::new();
    }
    format!("[{dropped} earlier bytes of output were dropped]\n")
}

/// Chunks of output read ahead of the capture at most.
const CHUNKS_IN_FLIGHT: usize = 64;

/// The end of a command's output: at most `max` bytes, the earlier ones dropped and counted. A
/// flood's last lines (its result, its error) are what the model is shown, so they are what is
/// kept; QA's 1 GB of output left the model only "[932891140 more bytes … dropped]". A ring: the
/// oldest bytes go as new ones come, never more than `max` held.
struct Capture {
    max: usize,
    bytes: VecDeque<u8>,
    dropped: usize,
}

impl Capture {
    fn new(max: usize) -> Self {
        Self {
            max,
            bytes: VecDeque::new(),
            dropped: 0,
        }
    }

    /// Adds `chunk`, dropping the oldest bytes beyond `max`.
    fn push(&mut self, chunk: &[u8]) {
        let skipped = chunk.len().saturating_sub(self.max);
        let chunk = &chunk[skipped..];
        let excess = (self.bytes.len() + chunk.len()).saturating_sub(self.max);
        self.bytes.drain(..excess);
        self.dropped += skipped + excess;
        self.bytes.extend(chunk);
    }

    /// The last `count` lines of the output so far, as a running command's progress: escapes
    /// left out, a line redrawn with carriage returns (a progress bar) shown as last drawn.
    fn last_lines(&self, count: usize) -> String {
        let start = self.bytes.len().saturating_sub(PROGRESS_BYTES);
        let tail: Vec<u8> = self.bytes.range(start..).copied().collect();
        let lossy = String::from_utf8_lossy(&tail);
        let text = anstream::adapter::strip_str(&lossy).to_string();
        let lines: Vec<&str> = text
            .trim_end_matches(['\n', '\r'])
            .lines()
            .map(|line| line.rsplit('\r').next().unwrap_or(line))
            .collect();
        lines[lines.len().saturating_sub(count)..].join("\n")
    }

    /// The kept output as text, after a line saying how many earlier bytes were dropped. Terminal
    /// escape sequences (colours, cursor moves: `ls --color=always`, `git -c color.ui=always`) are
    /// left out, as Pi leaves them out: noise to the model, and raw escapes on the screen.
    fn text(mut self) -> String {
        let lossy = String::from_utf8_lossy(self.bytes.make_contiguous());
        let mut text = dropped_marker(self.dropped);
        text.reserve(lossy.len());
        for piece in anstream::adapter::strip_str(&lossy) {
            text.push_str(piece);
        }
        text
    }
}

/// Kills the command's process group (the command and everything it started), then reaps it.
fn kill_group(child: &mut Child) {
    if !super::running::kill_process_group(child.id()) {
        let _ = child.kill();
    }
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::super::test_support::context;
    use super::*;

    #[test]
    fn terminal_escapes_are_left_out_and_tabs_kept() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let run = execute_bash(
            "printf 'before\\033[2J\\033[Hafter \\033[31mRED\\033[0m\\tX\\n'",
            None,
            &context,
        )
        .unwrap();
        assert_eq!(run.output, "beforeafter RED\tX");
    }

    /// QA r102 (chat), finding 7: a running command showed nothing until it ended, so a long
    /// test run looked like a hang. Its watcher is told its last lines while it runs, and of
    /// output that then pauses (the `sleep` after `tick 1`).
    #[test]
    fn a_running_command_reports_its_last_lines_while_it_runs() {
        let dir = tempfile::tempdir().unwrap();
        let mut context = context(dir.path());
        let (progress, mut reports) = crate::ToolProgress::channel();
        context.progress = Some(progress);
        let running = std::thread::spawn(move || {
            execute_bash(
                "echo tick 1; sleep 0.5; echo tick 2; sleep 0.5; echo done",
                None,
                &context,
            )
        });
        let mut seen = Vec::new();
        // Read until the command's context, and the handle in it, is dropped.
        while reports.has_changed().is_ok() {
            if reports.has_changed().unwrap_or(false) {
                seen.push(reports.borrow_and_update().clone());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let run = running.join().unwrap().unwrap();
        assert_eq!(run.output, "tick 1\ntick 2\ndone");
        assert!(seen.iter().any(|report| report == "tick 1"), "{seen:?}");
        assert!(
            seen.iter().any(|report| report == "tick 1\ntick 2"),
            "{seen:?}"
        );
    }

    /// The last lines as a terminal would show them: escapes out, a progress bar redrawn with
    /// carriage returns as last drawn, at most the count asked for.
    #[test]
    fn progress_shows_the_last_lines_as_last_drawn() {
        let mut capture = Capture::new(1024);
        capture.push(b"first\nsecond\nloading 10%\rloading 50%\n\x1b[31mred\x1b[0m\n");
        assert_eq!(capture.last_lines(2), "loading 50%\nred");
        assert_eq!(capture.last_lines(9), "first\nsecond\nloading 50%\nred");
        assert_eq!(Capture::new(8).last_lines(3), "");
    }

    /// QA 2026-12-07: a flood held twice the capture's limit, and many copies of it after. The
    /// ring holds at most its limit, the oldest bytes going first, counted.
    #[test]
    fn the_capture_holds_at_most_its_limit() {
        let mut capture = Capture::new(10);
        capture.push(b"0123456");
        capture.push(b"789abc");
        assert_eq!((capture.bytes.len(), capture.dropped), (10, 3));
        capture.push(&[b'x'; 25]);
        assert_eq!((capture.bytes.len(), capture.dropped), (10, 28));
        capture.push(b"END");
        assert_eq!(
            capture.text(),
            "[31 earlier bytes of output were dropped]\nxxxxxxxEND"
        );
    }

    #[test]
    fn output_keeps_both_streams_in_order_and_reports_the_exit_code() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let outcome = run_bash("echo one; echo two >&2; echo three", None, "c", &context);
        assert_eq!(outcome.text, "one\ntwo\nthree");
        assert!(!outcome.is_error);
        let outcome = run_bash("pwd", None, "c", &context);
        assert_eq!(
            std::fs::canonicalize(outcome.text.trim()).unwrap(),
            std::fs::canonicalize(dir.path()).unwrap()
        );
        let outcome = run_bash("echo failing; exit 3", None, "c", &context);
        assert!(outcome.is_error);
        assert_eq!(outcome.text, "failing\n\nCommand exited with code 3");
        let outcome = run_bash("true", None, "c", &context);
        assert_eq!(outcome.text, "(no output)");
    }

    #[test]
    fn commands_run_in_bash_after_the_prefix_or_in_the_shell_named() {
        let dir = tempfile::tempdir().unwrap();
        let mut context = context(dir.path());
        // The tool is called bash, and models write bash: `[[`, arrays, `set -o pipefail`.
        let outcome = run_bash(
            "set -o pipefail; words=(a b); [[ ${#words[@]} -eq 2 ]] && echo bash",
            None,
            "c",
            &context,
        );
        assert_eq!(outcome.text, "bash");
        context.shell.command_prefix = Some("greet() { echo \"hi $1\"; }".to_owned());
        let outcome = run_bash("greet there", None, "c", &context);
        assert_eq!(outcome.text, "hi there");
        context.shell.path = Some(dir.path().join("no-such-shell"));
        let outcome = run_bash("true", None, "c", &context);
        assert!(outcome.is_error);
        assert!(
            outcome.text.contains("no-such-shell`, does not exist"),
            "{}",
            outcome.text
        );
    }

    /// Run in a child process (see the next test) with provider keys in its environment.
    #[test]
    fn secret_probe() {
        if std::env::var_os("CTXKIT_SECRET_PROBE").is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut context = context(dir.path());
        let outcome = run_bash("env", None, "c", &context);
        assert!(
            !outcome.text.contains("sk-probe-SECRET"),
            "{}",
            outcome.text
        );
        assert!(
            !outcome.text.contains("ghp_probeSECRET"),
            "{}",
            outcome.text
        );
        assert!(outcome.text.contains("CTXKIT_SECRET_PROBE=1"));
        context.pass_env = vec!["GITHUB_TOKEN".to_owned()];
        let outcome = run_bash(
            "test \"$GITHUB_TOKEN\" = ghp_probeSECRET && echo passed; env",
            None,
            "c",
            &context,
        );
        assert!(outcome.text.starts_with("passed"), "{}", outcome.text);
        // The command has it; the conversation does not.
        assert!(outcome.text.contains("GITHUB_TOKEN=<redacted>"));
        assert!(!outcome.text.contains("sk-probe-SECRET"));
    }

    #[test]
    fn commands_never_see_provider_keys_unless_passed() {
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tools::bash::tests::secret_probe", "--nocapture"])
            .env("CTXKIT_SECRET_PROBE", "1")
            .env("OPENAI_API_KEY", "sk-probe-SECRET-0123456789")
            .env("GITHUB_TOKEN", "ghp_probeSECRET")
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// QA 2026-12-07: a command kept the chat's terminal, so it could type into the chat
    /// (`TIOCSTI`) or read what the user typed. It leads a session of its own, without a
    /// terminal.
    #[test]
    fn a_command_runs_in_a_session_of_its_own_without_a_terminal() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let outcome = run_bash(
            "read -r _ _ _ _ _ session _ < /proc/$$/stat; \
             if [ \"$session\" = \"$$\" ]; then echo own-session; fi; \
             if (: < /dev/tty) 2>/dev/null; then echo has-tty; else echo no-tty; fi",
            None,
            "c",
            &context,
        );
        assert_eq!(
            outcome.text.trim(),
            "own-session\nno-tty",
            "{}",
            outcome.text
        );
    }

    #[test]
    fn a_timeout_kills_the_whole_process_group() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let started = Instant::now();
        let outcome = run_bash(
            "sleep 120 & echo started; wait",
            Some(Duration::from_millis(300)),
            "c",
            &context,
        );
        // The group's `sleep` takes two minutes: done within 30 s (a loaded machine's margin) is
        // the timeout killing it.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(outcome.is_error);
        assert!(outcome.text.starts_with("started"), "{}", outcome.text);
        assert!(outcome.text.contains("timed out"), "{}", outcome.text);
    }

    #[test]
    fn cancelling_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let cancel = context.cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            cancel.cancel();
        });
        let started = Instant::now();
        let outcome = run_bash("sleep 120", None, "c", &context);
        // The command takes two minutes: done within 30 s (a loaded machine's margin) is the
        // cancel.
        assert!(started.elapsed() < Duration::from_secs(30));
        assert!(outcome.text.contains("cancelled"), "{}", outcome.text);
    }

    /// QA (second round): 1 GB of `a` then `echo END` left the model only "[932891140 more bytes
    /// of output were dropped]": the first 64 MiB were kept, the end (what the model is shown of a
    /// command) dropped. The end is kept now.
    #[test]
    fn a_flood_keeps_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let run = execute_bash_capped(
            "head -c 3000000 /dev/zero | tr '\\0' a; echo; echo END",
            None,
            &context,
            1_000_000,
        )
        .unwrap();
        assert_eq!(run.dropped_bytes, 2_000_005);
        assert!(
            run.output.ends_with("a\nEND"),
            "{}",
            &run.output[run.output.len() - 20..]
        );
        assert!(
            run.output
                .starts_with("[2000005 earlier bytes of output were dropped]\naaa"),
            "{}",
            &run.output[..60]
        );
        // The kept million bytes, less the last newline, after the line that counts the rest.
        assert_eq!(
            run.output.len(),
            999_999 + "[2000005 earlier bytes of output were dropped]\n".len()
        );
        let outcome = run_bash(
            "head -c 3000000 /dev/zero | tr '\\0' a; echo END",
            None,
            "flood",
            &context,
        );
        assert!(outcome.text.contains("aaaEND"), "{}", &outcome.text[..200]);
    }

    /// QA 2026-12-07: a flood of one long line was told to the model as "the last 1 of 2 lines",
    /// the line counting what was dropped counted with it, and nothing said how much came before.
    #[test]
    fn what_a_flood_dropped_is_said_and_not_counted_as_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let line = "x".repeat(200_000);
        let run = BashRun {
            output: format!("{}{line}", dropped_marker(123_456)),
            trailing_newlines: 1,
            dropped_bytes: 123_456,
            end: BashEnd::Exited(Some(0)),
        };
        let outcome = run_outcome(run, "flood", &context);
        assert!(
            outcome
                .text
                .contains("showing all 1 lines, the first one cut (51200 of 200000 bytes"),
            "{}",
            &outcome.text[outcome.text.len() - 400..]
        );
        assert!(
            outcome.text.ends_with(
                "[The command wrote 123456 bytes more before these, which the counts above leave \
                 out; they were not kept]"
            ),
            "{}",
            &outcome.text[outcome.text.len() - 400..]
        );
        let saved = outcome.details.unwrap()["fullOutputPath"]
            .as_str()
            .unwrap()
            .to_owned();
        let saved = std::fs::read_to_string(saved).unwrap();
        assert_eq!(saved, format!("{}{line}\n", dropped_marker(123_456)));
    }

    #[test]
    fn long_output_keeps_the_tail_and_saves_everything() {
        let dir = tempfile::tempdir().unwrap();
        let context = context(dir.path());
        let outcome = run_bash("seq 1 5000", None, "call_b", &context);
        assert!(
            outcome.text.starts_with("3001\n"),
            "{}",
            &outcome.text[..20]
        );
        assert!(outcome.text.contains("showing the last 2000 of 5000 lines"));
        let saved = std::fs::read_to_string(dir.path().join(".outputs/call_b.txt")).unwrap();
        assert_eq!(saved.lines().count(), 5000);
        // Byte for byte what the command wrote (QA r105: the last newline was dropped, and
        // `wc -l` of the saved output said 4999).
        let expected: String = (1..=5000).map(|number| format!("{number}\n")).collect();
        assert_eq!(saved, expected);
    }
}
