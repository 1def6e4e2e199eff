//! The digest's tests: which tokens are names, how they are ranked, capped and left out.

use super::*;

#[test]
fn the_names_of_a_tool_calls_arguments_are_read_from_every_string_in_order() {
    let arguments = serde_json::json!({"path": "src/a.rs",
        "edits": [{"old": "parse_header", "new": "parse_head"}], "count": 2, "dry": null});
    assert_eq!(
        names_in_json(&arguments),
        ["src/a.rs", "parse_header", "parse_head"]
    );
}

#[test]
fn names_are_paths_symbols_codes_and_urls_not_words() {
    let text = "error[E0308]: mismatched types in src/parser/header.rs:41:9\n\
                the Result of parse_header and readHeader from io::Error is plain\n\
                see https://example.com/docs/a_b for v1.2.3 and Cargo.toml\n\
                WARN nothing to do; 12:00:00.000 ok";
    let names = digest_names(text, 20, 1000);
    assert_eq!(
        names,
        vec![
            "E0308",
            "src/parser/header.rs",
            "parse_header",
            "readHeader",
            "io::Error",
            "https://example.com/docs/a_b",
            "v1.2.3",
            "Cargo.toml",
        ]
    );
}

#[test]
fn terminal_escapes_are_not_part_of_a_name() {
    let text = "\u{1b}[1;33mWarning_one:\u{1b}[0m unused build_opt in \u{1b}[36msrc/main.rs";
    assert_eq!(
        digest_names(text, 20, 1000),
        vec!["Warning_one", "build_opt", "src/main.rs"]
    );
    // Without the escape character the digits stay: `3mm_gap` is a name.
    assert_eq!(digest_names("[3mm_gap]", 20, 1000), vec!["3mm_gap"]);
}

#[test]
fn data_config_and_log_files_are_names_in_any_case() {
    let names = digest_names(
        "wrote out.csv, read app.CONF and run.log; see notes",
        20,
        1000,
    );
    assert_eq!(names, vec!["out.csv", "app.CONF", "run.log"]);
}

#[test]
fn failure_lines_rank_first_then_repeated_names() {
    let mut text = String::new();
    for line in 0..40 {
        text.push_str(&format!(
            "src/common/util.rs:{line}: let value_of = read_all();\n"
        ));
    }
    text.push_str("12:00:00.000 ERROR upstream rejected request_id 7f3a9c2e\n");
    text.push_str("build/out/deep_path.rs:3: fine\n");
    let names = digest_names(&text, 2, 1000);
    // The failure line's symbol and hash come first.
    assert_eq!(names, vec!["request_id", "7f3a9c2e"]);
    // Then the names on 40 lines, the path before the symbols (written in the order they
    // first appear), before the path named once.
    let names = digest_names(&text, 3, 1000);
    assert_eq!(names, vec!["src/common/util.rs", "request_id", "7f3a9c2e"]);
    let names = digest_names(&text, 6, 1000);
    assert_eq!(
        names,
        vec![
            "src/common/util.rs",
            "value_of",
            "read_all",
            "request_id",
            "7f3a9c2e",
            "build/out/deep_path.rs"
        ]
    );
    // A name's repetitions outrank its shape: a symbol on two lines before a path on one.
    assert_eq!(
        digest_names(
            "see lib/once.rs
parse_header
parse_header
",
            1,
            1000
        ),
        ["parse_header"]
    );
}

#[test]
fn digits_earn_nothing_and_symbols_and_file_names_rank_first() {
    // A listing's dated and numbered names no longer outrank its header's symbol or a
    // source file.
    let text = "Mode LastWriteTime Length Name\n2026-03-30.md\n127.md\nv2.4.1 a2b3c4 run.py\n";
    assert_eq!(digest_names(text, 1, 1000), ["LastWriteTime"]);
    assert_eq!(
        digest_names(text, 3, 1000),
        ["LastWriteTime", "2026-03-30.md", "127.md"]
    );
    assert_eq!(
        digest_names("a2b3c4 v2.4.1 parse_header", 1, 1000),
        ["parse_header"]
    );
}

#[test]
fn the_caps_grow_with_the_omitted_text() {
    // Up to 4,000 omitted characters: the settings' caps.
    assert_eq!(digest_caps(0, 8, 160), (8, 160));
    assert_eq!(digest_caps(4_000, 8, 160), (8, 160));
    // Then 4% of the omitted characters, names in proportion, up to the most.
    assert_eq!(digest_caps(10_000, 8, 160), (20, 400));
    assert_eq!(digest_caps(40_000, 8, 160), (50, DIGEST_MAX_CHARS));
    assert_eq!(digest_caps(usize::MAX, 8, 160), (50, DIGEST_MAX_CHARS));
    // No digest stays none; a larger setting holds.
    assert_eq!(digest_caps(40_000, 0, 160), (0, 160));
    assert_eq!(digest_caps(40_000, 8, 0), (8, 0));
    assert_eq!(digest_caps(40_000, 32, 2_000), (32, 2_000));
    // A long listing keeps more of its names.
    let listing: String = (0..2_000)
        .map(|index| format!("note_{index:04}.md\n"))
        .collect();
    let (names, chars) = digest_caps(listing.len(), 8, 160);
    let digest = digest_names(&listing, names, chars);
    assert!(
        digest.len() > 40 && digest.len() <= names,
        "{}",
        digest.len()
    );
    assert!(digest.iter().map(|name| name.len() + 2).sum::<usize>() <= chars + 2);
}

#[test]
fn caps_bound_the_names_and_the_characters() {
    let text = (0..50)
        .map(|index| format!("item_{index:03}\n"))
        .collect::<String>();
    assert_eq!(
        digest_names(&text, 3, 1000),
        vec!["item_000", "item_001", "item_002"]
    );
    // 8 + 2 + 8 = 18 characters fit in 20; a third name does not.
    assert_eq!(digest_names(&text, 10, 20), vec!["item_000", "item_001"]);
    assert!(digest_names(&text, 0, 1000).is_empty());
    assert!(digest_names(&text, 5, 0).is_empty());
    assert!(digest_names(&text, 5, 7).is_empty());
}

#[test]
fn same_text_same_digest_and_no_separators_inside_names() {
    let text = "fn a_b(x: [u8; 4]) -> C::D, e.rs; ü_ß f_g]h,i";
    let first = digest_names(text, 12, 200);
    assert_eq!(first, digest_names(text, 12, 200));
    for name in &first {
        assert!(!name.contains([',', ';', ']', ' ', '\n']), "{name}");
    }
    assert_eq!(first, vec!["a_b", "C::D", "e.rs", "ü_ß", "f_g"]);
}

#[test]
fn names_in_any_script_are_kept_whole() {
    // QA r107: only ASCII was a name's, so these came out as `parse_`, `e_berechnen` and
    // `BERSICHT_MAX_SIZE`, names the project does not have, and the path was lost.
    let text = "pub fn parse_订单(input: &str) -> u32\n\
                fn größe_berechnen() reads config/設定.toml\n\
                const ÜBERSICHT_MAX_SIZE: usize = 8; cafe\u{301}_name and 汇率表_3";
    assert_eq!(
        names_in(text),
        [
            "parse_订单",
            "u32",
            "größe_berechnen",
            "config/設定.toml",
            "ÜBERSICHT_MAX_SIZE",
            "cafe\u{301}_name",
            "汇率表_3",
        ]
    );
    // Where a name meets Chinese prose with no space between, the name ends; letters and digits
    // alone in such prose are no name.
    assert_eq!(
        names_in("错误：文件config/設定.toml不存在，共有3个文件，见src/main.rs第12行"),
        ["config/設定.toml", "src/main.rs"]
    );
    // Counted in characters: 15 characters, 29 bytes.
    assert_eq!(
        digest_names("a parse_订单_订单_订单 b", 5, 15),
        ["parse_订单_订单_订单"]
    );
    assert_eq!(digest_names("38µs 12μs", 5, 100), Vec::<&str>::new());
}

#[test]
fn failure_initials_cover_every_failure_word() {
    for word in FAILURE_WORDS {
        assert!(FAILURE_INITIALS.contains(&word.as_bytes()[0]), "{word}");
    }
}

#[test]
fn failure_lines_are_found_in_any_case() {
    assert!(reports_failure("test result: FAILED. 3 passed"));
    assert!(reports_failure("thread 'main' Panicked at"));
    assert!(reports_failure("warning: unused"));
    assert!(!reports_failure("all 12 tests passed"));
    assert!(!reports_failure(""));
}

#[test]
fn dates_times_and_measurements_are_not_names() {
    let text = "2026-11-26T10:30:00Z ERROR req-1f3a91c1 failed: ERR-4471 in src/q.rs:101 after 38ms\n\
                2026-11-26T10:31:00Z INFO took 1.5GiB and 12.5s, 3x slower, build v1.2.3";
    let names = digest_names(text, 10, 400);
    assert_eq!(names, ["req-1f3a91c1", "ERR-4471", "src/q.rs", "v1.2.3"]);
    assert!(is_time_or_measure("2026-11-26"));
    assert!(is_time_or_measure("10:30:00.123Z"));
    assert!(!is_time_or_measure("E0308"));
    assert!(!is_time_or_measure("7b3e0d2"));
    assert!(!is_time_or_measure("3f9a"));
}

#[test]
fn line_numbers_and_edge_punctuation_are_trimmed() {
    assert_eq!(trim_name("src/a.rs:12:"), "src/a.rs");
    assert_eq!(trim_name("a.rs:12:3"), "a.rs");
    assert_eq!(trim_name("...end."), "end");
    assert_eq!(trim_name("http://x.y/"), "http://x.y");
    assert_eq!(trim_name("12:00:00"), "12");
    // A grep context line's number (QA: `retry.rs-1` … `retry.rs-59` listed, never the file);
    // a name with a number of its own keeps it.
    assert_eq!(trim_name("src/net/retry.rs-12-"), "src/net/retry.rs");
    assert_eq!(trim_name("AGENT-PROTOCOL.md-10"), "AGENT-PROTOCOL.md");
    assert_eq!(trim_name("agent.sh-18-set"), "agent.sh");
    assert_eq!(trim_name("LED-482"), "LED-482");
    assert_eq!(trim_name("v1.2.3-10"), "v1.2.3-10");
    assert_eq!(trim_name("docs/2024-05-01"), "docs/2024-05-01");
    assert_eq!(shape("12.5"), None);
    assert_eq!(shape("ab"), None);
    assert_eq!(shape(&"a_".repeat(100)), None);
}

/// The runs as the definition reads: character by character, a run ended by a character that is
/// no name character or by a name meeting prose written without spaces.
fn runs_by_characters(text: &str) -> Vec<&str> {
    let mut runs = Vec::new();
    let mut start: Option<usize> = None;
    let mut previous: Option<char> = None;
    for (at, character) in text.char_indices() {
        if let Some(from) = start {
            let ends = !is_name_character(character)
                || previous.is_some_and(|before| ends_name_between(before, character));
            if ends {
                runs.push(&text[from..at]);
                start = None;
            }
        }
        if start.is_none() && is_name_character(character) {
            start = Some(at);
        }
        previous = Some(character);
    }
    if let Some(from) = start {
        runs.push(&text[from..]);
    }
    runs
}

/// The runs are read byte by byte where the text is ASCII (most tool output): the same runs as
/// character by character, in ASCII, in any script and where the two meet.
#[test]
fn name_runs_read_by_bytes_are_the_runs_read_by_characters() {
    let texts = [
        "src/a.rs:12: error[E0308] in parse_header (v1.2.3) at https://x.io/a_b#c @me",
        "pub fn parse_订单(input) 文件config 設定.toml不存在 größe_berechnen ü_ß",
        "ไฟล์config.toml ok — “quoted” café_au_lait 共有3个文件 日本語abc123def",
        "\u{1b}[1;33mWarning_one:\u{1b}[0m\tx\n\r\\nWe a\u{2028}b 😀abc_def😀 ...",
        "",
        "a",
        "日",
        "-",
        "๏abc ๏ไทย abc๏def",
    ];
    for text in texts {
        let by_bytes: Vec<&str> = NameRuns { rest: text }.collect();
        assert_eq!(by_bytes, runs_by_characters(text), "{text}");
    }
}
