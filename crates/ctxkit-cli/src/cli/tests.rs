//! The help the command line gives.

use clap::CommandFactory as _;

use super::{Cli, with_pi_one_shots, with_pi_short_forms};

/// Every option of every command, with the path of commands it belongs to.
fn options(command: &clap::Command, path: &str, out: &mut Vec<(String, clap::Arg)>) {
    for argument in command.get_arguments() {
        if argument.get_long().is_some() && !argument.is_hide_set() {
            out.push((path.to_owned(), argument.clone()));
        }
    }
    for sub in command.get_subcommands() {
        options(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

/// QA finding 5d: `--json` of `resources` and `list` (and of a dozen other commands) had no help.
#[test]
fn every_option_says_what_it_does() {
    let mut found = Vec::new();
    options(&Cli::command(), "ctxkit", &mut found);
    let silent: Vec<String> = found
        .iter()
        .filter(|(_, argument)| argument.get_help().is_none())
        .map(|(path, argument)| format!("{path} --{}", argument.get_long().unwrap_or_default()))
        .collect();
    assert!(silent.is_empty(), "options without help: {silent:?}");
}

/// QA finding 5c: `trust --help` said "Trust the hooks", but trust covers every held setting.
#[test]
fn trust_says_it_covers_every_held_setting() {
    let command = Cli::command();
    let trust = command.find_subcommand("trust").unwrap();
    let about = trust.get_about().unwrap().to_string();
    assert!(!about.contains("Trust the hooks"), "{about}");
    assert!(about.contains("llm.baseUrl"), "{about}");
}

fn words(line: &str) -> Vec<std::ffi::OsString> {
    line.split(' ').map(std::ffi::OsString::from).collect()
}

/// Pi's `-nt`, `-nbt` and `-xt` are taken as their long forms after `chat` and before `--` (clap's
/// short options are one letter), and stay as they are anywhere else.
#[test]
fn pi_short_forms_of_several_letters_are_taken_in_chat() {
    assert_eq!(
        with_pi_short_forms(words("ctxkit chat -nt -nbt -xt bash -p -- -nt")),
        words("ctxkit chat --no-tools --no-builtin-tools --exclude-tools bash -p -- -nt")
    );
    assert_eq!(
        with_pi_short_forms(words("ctxkit chat -nc -ns -np -na -n x")),
        words("ctxkit chat --no-context-files --no-skills --no-prompt-templates --no-approve -n x")
    );
    // Pi's `-ne` is `--no-extensions`; it was read as `-n e`, naming the session `e`.
    assert_eq!(
        with_pi_short_forms(words("ctxkit chat -ne -p hi")),
        words("ctxkit chat --no-extensions -p hi")
    );
    assert_eq!(
        with_pi_short_forms(words("ctxkit sessions -nt")),
        words("ctxkit sessions -nt")
    );
}

/// The tool flags parse as Pi's, and a `--tools` list Pi refuses is a usage error.
#[test]
fn the_tool_flags_parse_as_pi_takes_them() {
    use clap::Parser as _;
    let cli = Cli::try_parse_from(with_pi_short_forms(
        words("ctxkit chat -t read,_grep_ -xt bash,,w* -nbt -p hi")
            .into_iter()
            .map(|word| word.to_string_lossy().replace('_', " ").into()),
    ))
    .unwrap();
    let super::Command::Chat(args) = cli.command else {
        panic!("not a chat: {:?}", cli.command);
    };
    assert_eq!(args.tools.unwrap().0, ["read", "grep"]);
    assert_eq!(args.exclude_tools.unwrap().0, ["bash", "w*"]);
    assert!(args.no_builtin_tools && !args.no_tools && args.print);
    let error = Cli::try_parse_from(words("ctxkit chat --tools read,+bash")).unwrap_err();
    assert_eq!(error.kind(), clap::error::ErrorKind::ValueValidation);
    assert!(
        error
            .to_string()
            .contains("tool names cannot be mixed with +name or -name entries"),
        "{error}"
    );
}

/// Pi's `--list-models [search]` is `ctxkit models` (every model without a search), not a chat.
#[test]
fn list_models_is_the_models_command() {
    use clap::Parser as _;
    let listed = |line: &str| {
        // `_` stands for a space inside one argument.
        let arguments = words(line)
            .into_iter()
            .map(|word| std::ffi::OsString::from(word.to_string_lossy().replace('_', " ")));
        let cli = with_pi_one_shots(Cli::try_parse_from(arguments).unwrap());
        let super::Command::Models { search, json } = cli.command else {
            return None;
        };
        assert!(!json);
        Some(search)
    };
    assert_eq!(listed("ctxkit chat --list-models"), Some(Vec::new()));
    assert_eq!(
        listed("ctxkit chat --list-models openai_gpt-5"),
        Some(vec!["openai".to_owned(), "gpt-5".to_owned()])
    );
    assert_eq!(
        listed("ctxkit chat --model x --list-models sonnet"),
        Some(vec!["sonnet".to_owned()])
    );
    assert_eq!(listed("ctxkit chat -p hi"), None);
}

/// Pi's `--export <file> [output]` is `ctxkit export`: to the path given after it, else to
/// `ctxkit-session-<name>.html` in the current directory, as Pi names it.
#[test]
fn export_is_the_export_command() {
    use clap::Parser as _;
    let exported = |line: &str| {
        let cli = with_pi_one_shots(Cli::try_parse_from(words(line)).unwrap());
        let super::Command::Export { web, html, out } = cli.command else {
            return None;
        };
        assert!(html);
        Some((web.file.unwrap(), out))
    };
    assert_eq!(
        exported("ctxkit chat --export s/2026_abc.jsonl"),
        Some((
            "s/2026_abc.jsonl".into(),
            "ctxkit-session-2026_abc.html".into()
        ))
    );
    assert_eq!(
        exported("ctxkit chat --export s.jsonl page.html"),
        Some(("s.jsonl".into(), "page.html".into()))
    );
    assert_eq!(exported("ctxkit chat -p hi"), None);
}
