//! The help the command line gives.

use clap::CommandFactory as _;

use super::Cli;

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
