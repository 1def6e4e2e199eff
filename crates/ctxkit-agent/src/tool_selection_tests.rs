//! The `defaultTools` setting and the tool flags against Pi 1.6's rules, as data: a setting and
//! flags in, the tools offered out.

use super::*;

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|entry| (*entry).to_owned()).collect()
}

fn selected(entries: Option<&[&str]>) -> Vec<String> {
    selected_with(entries, &ToolFlags::default())
}

fn selected_with(entries: Option<&[&str]>, flags: &ToolFlags) -> Vec<String> {
    let entries = entries.map(owned);
    select_tools(entries.as_deref(), flags)
        .registry
        .names()
        .map(str::to_owned)
        .collect()
}

fn flags(no_tools: NoTools, tools: Option<&[&str]>, exclude: &[&str]) -> ToolFlags {
    ToolFlags {
        no_tools,
        tools: tools.map(owned),
        exclude_tools: owned(exclude),
    }
}

#[test]
fn unset_offers_every_tool() {
    assert_eq!(
        selected(None),
        [
            "read", "write", "edit", "bash", "ls", "grep", "find", "recall"
        ]
    );
}

#[test]
fn plain_names_replace_the_selection_and_recall_stays() {
    assert_eq!(
        selected(Some(&["read", "grep", "find", "ls"])),
        ["read", "ls", "grep", "find", "recall"]
    );
    assert_eq!(selected(Some(&[])), ["recall"]);
}

#[test]
fn modifiers_change_the_default_selection_in_order() {
    assert_eq!(
        selected(Some(&["-bash", "-write", "+write"])),
        ["read", "write", "edit", "ls", "grep", "find", "recall"]
    );
    assert_eq!(
        selected(Some(&["read", "+bash", "-recall"])),
        ["read", "bash"]
    );
}

#[test]
fn names_ctxkit_has_no_tool_for_are_reported_once() {
    let entries = owned(&["read", "+codemode", "powershell", "fetch", "fetch"]);
    let selection = select_coding_tools(Some(&entries));
    let unknown = |entry: &str, pi_only| UnknownTool {
        entry: entry.to_owned(),
        pi_only,
        named_by: ToolListSource::DefaultTools,
    };
    assert_eq!(
        selection.unknown,
        [
            unknown("+codemode", true),
            unknown("powershell", true),
            unknown("fetch", false)
        ]
    );
    let names: Vec<&str> = selection.registry.names().collect();
    assert_eq!(names, ["read", "recall"]);
}

/// A case: the `defaultTools` setting, the flags, the tools offered.
type Case = (
    Option<&'static [&'static str]>,
    ToolFlags,
    &'static [&'static str],
);

/// Each row: the setting, the flags, the tools offered (Pi 1.6's `createAgentSession` over
/// ctxkit's tools, `recall` as an extension tool).
#[test]
fn the_flags_select_as_pi_does() {
    let setting: &'static [&'static str] = &["read", "bash"];
    let cases: [Case; 14] = [
        // An allowlist: only what it names; recall only when named or matched.
        (
            None,
            flags(NoTools::Unset, Some(&["read", "grep"]), &[]),
            &["read", "grep"],
        ),
        (
            Some(setting),
            flags(NoTools::Unset, Some(&["grep"]), &[]),
            &["grep"],
        ),
        (
            None,
            flags(NoTools::Unset, Some(&["read", "recall"]), &[]),
            &["read", "recall"],
        ),
        (
            None,
            flags(NoTools::Unset, Some(&["*"]), &["bash"]),
            &["read", "write", "edit", "ls", "grep", "find", "recall"],
        ),
        (
            None,
            flags(NoTools::Unset, Some(&["r*", " ", "f*d"]), &[]),
            &["read", "find", "recall"],
        ),
        (None, flags(NoTools::Unset, Some(&[]), &[]), &[]),
        // Modifiers change the setting's selection; recall stays unless `-recall`.
        (
            Some(setting),
            flags(NoTools::Unset, Some(&["+grep", "-bash"]), &[]),
            &["read", "grep", "recall"],
        ),
        (
            None,
            flags(NoTools::Unset, Some(&["-recall"]), &[]),
            &["read", "write", "edit", "bash", "ls", "grep", "find"],
        ),
        // `--no-tools`: nothing, recall included, unless `--tools` names it.
        (Some(setting), flags(NoTools::All, None, &[]), &[]),
        (None, flags(NoTools::All, Some(&["read"]), &[]), &["read"]),
        (None, flags(NoTools::All, Some(&["+read"]), &[]), &["read"]),
        // `--no-builtin-tools`: no built-in tool, recall stays.
        (
            Some(setting),
            flags(NoTools::Builtin, None, &[]),
            &["recall"],
        ),
        (
            None,
            flags(NoTools::Builtin, Some(&["+ls"]), &[]),
            &["ls", "recall"],
        ),
        // `--exclude-tools` comes last, recall included.
        (
            Some(setting),
            flags(NoTools::Unset, None, &["bash", "rec*"]),
            &["read"],
        ),
    ];
    for (setting, flags, expected) in cases {
        assert_eq!(
            selected_with(setting, &flags),
            expected,
            "{setting:?} {flags:?}"
        );
    }
}

#[test]
fn each_flag_says_which_of_its_names_name_no_tool() {
    let flags = flags(
        NoTools::Unset,
        Some(&["read", "mcp__*", "codemode"]),
        &["fetch", "read"],
    );
    let selection = select_tools(Some(&owned(&["nothing"])), &flags);
    let found: Vec<(&str, ToolListSource)> = selection
        .unknown
        .iter()
        .map(|unknown| (unknown.entry.as_str(), unknown.named_by))
        .collect();
    // The setting is not read beside a plain `--tools` list, so its names are not said.
    assert_eq!(
        found,
        [
            ("mcp__*", ToolListSource::ToolsFlag),
            ("codemode", ToolListSource::ToolsFlag),
            ("fetch", ToolListSource::ExcludeToolsFlag),
        ]
    );
}

#[test]
fn a_tools_list_pi_refuses_is_named() {
    assert_eq!(
        tool_list_problem(&owned(&["read", "+bash"])),
        Some(ToolListProblem::Mixed)
    );
    assert_eq!(
        tool_list_problem(&owned(&["+mcp__*"])),
        Some(ToolListProblem::PatternModifier("+mcp__*".to_owned()))
    );
    assert_eq!(tool_list_problem(&owned(&["+bash", "-write"])), None);
    assert_eq!(tool_list_problem(&owned(&["r*", "bash"])), None);
}

#[test]
fn star_patterns_match_any_characters() {
    assert!(matches_pattern("*", "read"));
    assert!(matches_pattern("r*d", "read"));
    assert!(matches_pattern("*a*", "bash"));
    assert!(!matches_pattern("r*d", "reader"));
    assert!(!matches_pattern("a*a", "a"));
    assert!(matches_pattern("a*a", "aa"));
}
