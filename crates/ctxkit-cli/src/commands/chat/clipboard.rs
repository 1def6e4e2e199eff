//! Text to the user's clipboard, by the routes Pi 1.6's `/copy` takes: the desktop's own tool
//! (`wl-copy`, `xclip`, `xsel`, `pbcopy`, `termux-clipboard-set`), and the terminal's OSC 52
//! sequence where the tool cannot reach the user's clipboard: over SSH or Mosh (the clipboard is
//! the client's), and on a machine with no desktop (a container, a server). OSC 52 cannot be
//! checked, so a desktop whose tools all failed is reported, not trusted to the terminal.

use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

/// The longest OSC 52 payload sent (base64 characters), as Pi's: terminals drop longer ones.
const OSC52_LIMIT: usize = 100_000;

/// How long a clipboard tool may take before it is killed and the next one tried.
const TOOL_TIMEOUT: Duration = Duration::from_secs(5);

/// What decides the route: the system and the environment variables that name a desktop, a
/// remote login or the user's choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Surroundings {
    pub macos: bool,
    pub wayland: bool,
    pub x11: bool,
    pub termux: bool,
    /// SSH or Mosh, or `CTXKIT_CLIPBOARD_OSC52=1` (a multiplexer attached from elsewhere).
    pub remote: bool,
}

impl Surroundings {
    pub(super) fn of_this_process() -> Self {
        let set = crate::cli::clipboard_variable_set;
        Self {
            macos: cfg!(target_os = "macos"),
            wayland: set("WAYLAND_DISPLAY"),
            x11: set("DISPLAY"),
            termux: set("TERMUX_VERSION"),
            remote: set("SSH_CONNECTION")
                || set("SSH_CLIENT")
                || set("MOSH_CONNECTION")
                || set(crate::cli::CLIPBOARD_OSC52),
        }
    }

    /// No desktop to own a clipboard: the terminal is the only route.
    fn headless(&self) -> bool {
        !self.macos && !self.wayland && !self.x11 && !self.termux
    }

    /// The desktop's tools, in the order they are tried.
    pub(super) fn tools(&self) -> Vec<(&'static str, &'static [&'static str])> {
        let mut tools: Vec<(&'static str, &'static [&'static str])> = Vec::new();
        if self.macos {
            tools.push(("pbcopy", &[]));
        }
        if self.termux {
            tools.push(("termux-clipboard-set", &[]));
        }
        if self.wayland {
            tools.push(("wl-copy", &[]));
        }
        if self.x11 {
            tools.push(("xclip", &["-selection", "clipboard"]));
            tools.push(("xsel", &["--clipboard", "--input"]));
        }
        tools
    }
}

/// How the text was copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Copied {
    /// By this tool of the desktop.
    ByTool(&'static str),
    /// Sent to the terminal as OSC 52 (and by this tool, when one also took it).
    ByTerminal(Option<&'static str>),
}

/// The first of the desktop's tools that takes `text` (run by `run_tool`), if any.
pub(super) fn copy_by_tool(
    text: &str,
    surroundings: &Surroundings,
    run_tool: impl Fn(&str, &[&str], &str) -> bool,
) -> Option<&'static str> {
    surroundings
        .tools()
        .into_iter()
        .find(|(program, arguments)| run_tool(program, arguments, text))
        .map(|(program, _)| program)
}

/// Finishes a copy of `text` that `tool` took or not: as OSC 52 through `send_to_terminal` too
/// when remote, or when there is no desktop. `send_to_terminal` says whether the sequence
/// reached a terminal. The error is one line with what to install.
pub(super) fn copy(
    text: &str,
    surroundings: &Surroundings,
    tool: Option<&'static str>,
    send_to_terminal: impl FnOnce(&str) -> bool,
) -> Result<Copied, String> {
    let wants_terminal = surroundings.remote || (tool.is_none() && surroundings.headless());
    if wants_terminal {
        match osc52(text) {
            Some(sequence) => {
                if send_to_terminal(&sequence) {
                    return Ok(Copied::ByTerminal(tool));
                }
                if tool.is_none() {
                    return Err("Clipboard unavailable: not at a terminal to send it to".to_owned());
                }
            }
            None if tool.is_none() => {
                return Err(format!(
                    "Clipboard unavailable: the text is too long for the terminal's clipboard \
                     sequence (OSC 52 takes {OSC52_LIMIT} base64 characters); /export writes \
                     the session to a file"
                ));
            }
            None => {}
        }
    }
    match tool {
        Some(tool) => Ok(Copied::ByTool(tool)),
        None => Err(unavailable(surroundings)),
    }
}

/// Why nothing took the text, and what to install.
fn unavailable(surroundings: &Surroundings) -> String {
    let hint = if surroundings.termux {
        "install the Termux:API app and the `termux-api` package"
    } else if surroundings.wayland {
        "install `wl-clipboard` (`wl-copy`) or check Wayland access"
    } else if surroundings.x11 {
        "install `xclip` or `xsel`, or check X11 access"
    } else if surroundings.macos {
        "`pbcopy` failed"
    } else {
        "no clipboard tool answered"
    };
    format!("Clipboard unavailable: {hint}")
}

/// The OSC 52 sequence that sets the clipboard to `text`; `None` when it is too long.
fn osc52(text: &str) -> Option<String> {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    (encoded.len() <= OSC52_LIMIT).then(|| format!("\x1b]52;c;{encoded}\x07"))
}

/// Runs a clipboard tool with `text` on its standard input, from `/`, in its own process group
/// (a tool that stays to own the selection must not hold the chat's folder or take its Ctrl-Z),
/// without pipes it could keep open. Whether it exited with success within the timeout.
pub(super) fn run_tool(program: &str, arguments: &[&str], text: &str) -> bool {
    let child = Command::new(program)
        .args(arguments)
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn();
    let Ok(mut child) = child else {
        return false;
    };
    if let Some(mut stdin) = child.stdin.take() {
        // Written beside the wait: a tool that hangs without reading (an X server that does not
        // answer) would block a write larger than the pipe past the timeout. Killed, it closes
        // the pipe and the write ends. A tool may exit before it reads everything; its exit
        // status says whether it copied.
        let bytes = text.as_bytes().to_vec();
        std::thread::spawn(move || {
            let _ = stdin.write_all(&bytes);
        });
    }
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) if started.elapsed() < TOOL_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(None) | Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return false;
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::cell::RefCell;

    use super::*;

    fn x11() -> Surroundings {
        Surroundings {
            x11: true,
            ..Surroundings::default()
        }
    }

    #[test]
    fn a_desktop_copies_by_its_first_tool_that_works_and_sends_nothing_to_the_terminal() {
        let tried = RefCell::new(Vec::new());
        let tool = copy_by_tool("hi", &x11(), |program: &str, _: &[&str], text: &str| {
            tried
                .borrow_mut()
                .push((program.to_owned(), text.to_owned()));
            program == "xsel"
        });
        let copied = copy("hi", &x11(), tool, |_| {
            panic!("a desktop's copy is not sent to the terminal")
        });
        assert_eq!(copied, Ok(Copied::ByTool("xsel")));
        assert_eq!(
            tried.into_inner(),
            [("xclip".into(), "hi".into()), ("xsel".into(), "hi".into())]
        );
    }

    #[test]
    fn a_desktop_whose_tools_fail_says_what_to_install_rather_than_trust_osc52() {
        let tool = copy_by_tool("hi", &x11(), |_, _, _| false);
        let copied = copy("hi", &x11(), tool, |_| true);
        assert_eq!(
            copied,
            Err("Clipboard unavailable: install `xclip` or `xsel`, or check X11 access".into())
        );
    }

    #[test]
    fn without_a_desktop_the_terminal_gets_the_text_as_osc52() {
        let sent = RefCell::new(String::new());
        let tool = copy_by_tool("hello world", &Surroundings::default(), |_, _, _| {
            panic!("no tool without a desktop")
        });
        let copied = copy("hello world", &Surroundings::default(), tool, |sequence| {
            *sent.borrow_mut() = sequence.to_owned();
            true
        });
        assert_eq!(copied, Ok(Copied::ByTerminal(None)));
        assert_eq!(sent.into_inner(), "\x1b]52;c;aGVsbG8gd29ybGQ=\x07");
    }

    #[test]
    fn a_remote_login_sends_osc52_besides_the_remote_desktops_tool() {
        let remote = Surroundings {
            remote: true,
            ..x11()
        };
        let tool = copy_by_tool("hi", &remote, |program, _, _| program == "xclip");
        let copied = copy("hi", &remote, tool, |_| true);
        assert_eq!(copied, Ok(Copied::ByTerminal(Some("xclip"))));
    }

    #[test]
    fn text_too_long_for_osc52_or_no_terminal_is_refused_with_the_reason() {
        let long = "x".repeat(80_000);
        let copied = copy(&long, &Surroundings::default(), None, |_| true);
        assert!(copied.unwrap_err().contains("too long"));
        let copied = copy("hi", &Surroundings::default(), None, |_| false);
        assert_eq!(
            copied,
            Err("Clipboard unavailable: not at a terminal to send it to".into())
        );
    }

    #[test]
    fn a_tool_gets_the_text_on_its_input_and_a_failing_or_missing_one_is_false() {
        let folder = tempfile::tempdir().unwrap();
        let out = folder.path().join("copied");
        let script = format!("cat > '{}'", out.display());
        assert!(run_tool("sh", &["-c", &script], "héllo"));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "héllo");
        assert!(!run_tool("sh", &["-c", "exit 1"], "x"));
        assert!(!run_tool("ctxkit-no-such-clipboard-tool", &[], "x"));
    }

    #[test]
    fn a_tool_that_hangs_without_reading_a_long_text_is_given_up_on() {
        let long = "x".repeat(1 << 20);
        let started = Instant::now();
        assert!(!run_tool("sleep", &["30"], &long));
        assert!(started.elapsed() < TOOL_TIMEOUT + Duration::from_secs(5));
    }
}
