//! The user's prohibitions: which sentences of a request state one, and which part of a sentence
//! that both asks and forbids is the request. Constraints & Preferences holds the prohibitions,
//! the Goal the rest.

/// Words that make a sentence a standing instruction: a prohibition, in the languages sessions
/// are held in. (Softer words such as "keep", "only", "should", "must" or "ください" marked
/// ordinary requests as constraints and cost more than they kept: docs/summaries.md.)
const PROHIBITION_MARKERS: &[&str] = &[
    "don't",
    "do not",
    "never",
    "no new",
    "not allowed",
    "不要",
    "别",
    "禁止",
    "ないで",
    "nicht",
    "kein",
    "niemals",
    "ne pas",
    "jamais",
    "nunca",
    "não",
    "non ",
    "nie ",
    // Korean's negative imperative (`하지 마세요`, `바꾸지 말고`) and "forbidden".
    "지 마",
    "지 말",
    "금지",
    // Russian's negative imperatives (a bare `не ` negates statements too: `тесты не проходят`).
    "нельзя",
    "не надо",
    "не нужно",
    "запрещ",
    "не трогай",
    "не меняй",
    "не изменяй",
    "не удаляй",
    "не используй",
    "не добавляй",
    "не делай",
    // Arabic's "forbidden", "must not", and negative imperatives (`لا ت…` alone also opens a
    // statement: `الاختبارات لا تعمل`, the tests do not work).
    "ممنوع",
    "يجب ألا",
    "يجب عدم",
    "لا يجب",
    "لا تقم",
    "لا تستخدم",
    "لا تغير",
    "لا تحذف",
    "لا تعدل",
    "لا تلمس",
    "لا تضف",
];

/// The English markers that are a prohibition only when they open a clause addressed to the
/// agent ("Don't …", "…, and never …", "you don't …"): after another subject they state a fact
/// ("I don't know why …", "it never happens on Linux", "the tests do not pass").
const CLAUSE_MARKERS: &[&str] = &["don't", "do not", "never"];

/// Words that may stand between a clause's start and its prohibition without making it a
/// statement: conjunctions, politeness, the agent as subject, and modals ("you should never").
const CLAUSE_OPENERS: &[&str] = &[
    "and", "but", "or", "so", "then", "also", "just", "please", "you", "should", "must", "to",
    "still", "ever", "and,", "but,", "so,", "also,", "please,",
];

/// Characters of a sentence above which it is prose, not a standing instruction.
const INSTRUCTION_MAX_CHARS: usize = 400;

/// Where a sentence's first prohibition starts (a byte offset into `lower`), if it states one.
fn prohibition_start(lower: &str) -> Option<usize> {
    marker_start(lower, PROHIBITION_MARKERS)
}

/// Where the first of `markers` that states a prohibition starts in `lower`.
fn marker_start(lower: &str, markers: &[&'static str]) -> Option<usize> {
    markers
        .iter()
        .flat_map(|marker| {
            lower
                .match_indices(marker)
                .map(move |(at, _)| (at, *marker))
        })
        .filter(|(at, marker)| {
            !CLAUSE_MARKERS.contains(marker) || opens_clause(lower, *at, marker.len())
        })
        .map(|(at, _)| at)
        .min()
}

/// Whether the marker at `at` opens a clause addressed to the agent: at the sentence's or a
/// clause's start (after punctuation), or after an opener (`and`, `please`, `you`, `should`).
fn opens_clause(lower: &str, at: usize, length: usize) -> bool {
    let before = lower[..at].trim_end();
    // A marker inside a word (`whenever`, `nevertheless`) is not one.
    let inside_word = lower[..at]
        .chars()
        .next_back()
        .is_some_and(char::is_alphanumeric)
        || lower[at + length..]
            .chars()
            .next()
            .is_some_and(char::is_alphanumeric);
    if inside_word {
        return false;
    }
    match before.split_whitespace().next_back() {
        None => true,
        Some(word) => {
            word.ends_with([',', ';', ':', '(', '—', '-', '"', '.'])
                || CLAUSE_OPENERS.contains(&word)
        }
    }
}

/// A sentence with typographic apostrophes as ASCII ones, lower-cased: what the markers match.
fn normalized(sentence: &str) -> String {
    sentence.replace('\u{2019}', "'").to_lowercase()
}

/// Whether a sentence of the user's states a prohibition (a question does not).
pub fn is_instruction(sentence: &str) -> bool {
    !sentence.ends_with('?')
        && sentence.chars().count() <= INSTRUCTION_MAX_CHARS
        && prohibition_start(&normalized(sentence)).is_some()
}

/// Words a request part may end with before its prohibition clause (`Fix it, and`).
const TRAILING_JOINERS: &[&str] = &["and", "but", "or", "so", "then", "also", "just", "please"];

/// The words of a sentence that both asks and forbids which ask: `Fix it with Decimal.` of "Fix it
/// with Decimal, and don't change the CSV export format."; `None` when the sentence is all
/// prohibition or states none. The sentence stays whole under Constraints, where the prohibition
/// keeps its reason ("We support 3.9 until March, so don't drop it from the matrix": the clause
/// alone says nothing of what "it" is).
pub fn request_part(sentence: &str) -> Option<String> {
    if !is_instruction(sentence) {
        return None;
    }
    let lower = normalized(sentence);
    // Only an English prohibition opens its own clause; elsewhere the negation sits inside the
    // clause it negates (`bitte nichts benutzen`, `(vorbei, nicht gekündigt)`), and the sentence
    // stays whole.
    let start = prohibition_start(&lower)?;
    if marker_start(&lower, CLAUSE_MARKERS) != Some(start) {
        return None;
    }
    // The clause the prohibition is in starts after the last separator before it.
    let clause = [", ", "; ", ": ", " — ", " and ", " but "]
        .iter()
        .filter_map(|separator| {
            lower[..start]
                .rfind(separator)
                .map(|at| at + separator.len())
        })
        .max()?;
    // Lower-casing may move byte offsets (non-ASCII letters): work on the original only when they
    // agree.
    if lower.len() != sentence.len() || !sentence.is_char_boundary(clause) {
        return None;
    }
    let mut request = sentence[..clause].trim_end();
    loop {
        let trimmed = request.trim_end_matches([',', ';', ':', '—', ' ']);
        let without = TRAILING_JOINERS.iter().find_map(|joiner| {
            trimmed
                .strip_suffix(joiner)
                .filter(|rest| rest.ends_with(' '))
        });
        match without {
            Some(rest) => request = rest.trim_end(),
            None => {
                request = trimmed;
                break;
            }
        }
    }
    // A request of one word (`So, don't …`) is no request.
    if request.split_whitespace().count() < 2 {
        return None;
    }
    Some(format!("{request}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (sentence, whether it states a prohibition)
    const CASES: &[(&str, bool)] = &[
        ("Don't add new dependencies.", true),
        ("Please do not touch the public API.", true),
        (
            "Fix it with Decimal, and don't change the CSV export format.",
            true,
        ),
        ("You should never push to main.", true),
        ("Never touch the public API in tallyho/api.py", true),
        ("Keep going, but don’t rename the module.", true),
        ("No new crates.", true),
        ("Ändere die API nicht.", true),
        ("main 브랜치에 직접 푸시하지 마세요.", true),
        ("새 의존성은 추가하지 말고 표준 라이브러리만 쓰세요.", true),
        ("Не трогай публичный API в api/routes.py.", true),
        ("Новые зависимости добавлять нельзя.", true),
        ("لا تستخدم مكتبات جديدة في requirements.txt.", true),
        ("ممنوع تغيير المخطط.", true),
        ("테스트가 통과하지 않습니다.", false),
        ("Тесты не проходят на CI.", false),
        ("الاختبارات لا تعمل على CI.", false),
        (
            "I don't know why the nightly export job crashes on Windows.",
            false,
        ),
        ("It never happens on Linux.", false),
        ("We do not have a staging server yet.", false),
        ("The tests do not pass on CI.", false),
        ("It doesn't happen on Linux.", false),
        ("Why don't you use a set?", false),
        ("This runs whenever the job starts.", false),
        ("Nevertheless, the export works.", false),
    ];

    #[test]
    fn a_prohibition_is_an_instruction_to_the_agent_not_a_statement_with_a_negation() {
        for (sentence, expected) in CASES {
            assert_eq!(is_instruction(sentence), *expected, "{sentence}");
        }
    }

    /// (sentence, its request when it both asks and forbids)
    const SPLITS: &[(&str, Option<&str>)] = &[
        (
            "Fix it with Decimal, and don't change the CSV export format.",
            Some("Fix it with Decimal."),
        ),
        (
            "Rename the flag but never break the old spelling.",
            Some("Rename the flag."),
        ),
        (
            "We still support 3.9 until the March release, so don't just drop it from the matrix.",
            Some("We still support 3.9 until the March release."),
        ),
        ("Don't add new dependencies.", None),
        ("Please, don't push.", None),
        ("I don't know why it crashes.", None),
        (
            "Wichtig: wir bleiben auf Django 4.2 LTS, bitte nichts benutzen, was es erst ab Django 5 gibt.",
            None,
        ),
    ];

    #[test]
    fn a_sentence_that_asks_and_forbids_keeps_its_request() {
        for (sentence, expected) in SPLITS {
            assert_eq!(request_part(sentence).as_deref(), *expected, "{sentence}");
        }
    }
}
