//! Keys recognised by their shape, whoever's they are: provider API keys (`sk-…`, `AIza…`), GitHub,
//! Slack, npm, GitLab, Hugging Face, PyPI, SendGrid, DigitalOcean, Shopify and Databricks tokens,
//! Google OAuth access tokens, Slack webhooks, JSON Web Tokens, Stripe keys, AWS access key ids,
//! GitHub Copilot session tokens, NVIDIA and Perplexity keys, Discord and Telegram bot tokens,
//! Mailgun, Twilio and Heroku keys, `rt_` refresh tokens, bearer values and private key blocks,
//! also split by characters that draw nothing (a reader sees one key). Text meant to be
//! kept apart from its source or shown to others (a summary, a shared page) leaves them out; tool
//! output does not (the model edits files that hold such strings, and an edit must match them).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// The keys that start a word. A word starts after a word boundary, or right after a JSON escape
/// of a line break or a tab (`first\nsk-…`: text that is JSON, such as a tool's raw output or a
/// call's arguments as written, puts a letter before a key at the start of a line). Their
/// prefixes are short or could end a word (`task-…`, `nsfw_…`), so a letter before them makes
/// them part of that word.
const WORD_SHAPES: &[&str] = &[
    r"sk-[A-Za-z0-9_\-]{16,}",
    r"AIza[0-9A-Za-z_\-]{35}",
    r"(?i:bearer)\s+[A-Za-z0-9._\-]{20,}",
    r"hf_[A-Za-z0-9]{30,}",
    // SendGrid, DigitalOcean, Shopify and Databricks tokens, Google OAuth access tokens, Slack
    // webhooks.
    r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}",
    r"do[opr]_v1_[a-f0-9]{64}",
    r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}",
    r"dapi[a-f0-9]{32}",
    r"ya29\.[0-9A-Za-z_\-]{30,}",
    r"hooks\.slack\.com/services/[A-Za-z0-9]+/[A-Za-z0-9]+/[A-Za-z0-9]{16,}",
    // A JSON Web Token: three base64url parts, the first two JSON objects (`eyJ`).
    r"eyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}",
    // GitHub Copilot's session token (`tid=…;exp=…;…;8kp=1:…`, the `access` of Pi's
    // `github-copilot` login), its fields to the next blank or quote.
    r"tid=[A-Za-z0-9_\-]{8,};exp=[0-9]{9,}(?:;[^\s\x22'\\<>]*)?",
    // Cerebras and Replicate API keys.
    r"csk-[A-Za-z0-9]{40,}",
    r"r8_[A-Za-z0-9]{30,}",
    // Fireworks, Vercel's AI Gateway, Notion and Supabase tokens, Bedrock's API keys and Google's
    // OAuth refresh tokens (a verifier's list).
    r"fw_[A-Za-z0-9]{20,}",
    r"vck_[A-Za-z0-9]{30,}",
    r"ntn_[A-Za-z0-9]{40,}",
    r"sbp_[a-f0-9]{40}",
    r"ABSK[A-Za-z0-9+/=]{40,}",
    r"1//0[A-Za-z0-9_\-]{40,}",
    // Twilio's API keys (QA: a shared page showed them whole). Mailgun's `key-<32 hex>` has no
    // shape of its own (`cache-key-<md5>` is everywhere in build logs): it goes as the value of a
    // secret's name (`MAILGUN_API_KEY=key-…`).
    r"SK[0-9a-fA-F]{32}\b",
    // A Discord bot token: the bot's id in base64 (`M`, `N` or `O` first), a time stamp and an
    // HMAC, dot-separated; a Telegram bot token: the bot's id, a colon and `AA` + 33 characters.
    r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}",
    r"[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}",
    // An OAuth refresh token of the `rt_` form (OpenAI's, the `refresh` of Pi's `openai-codex`
    // login): taken only when [`is_random_token`] says it is not a name (`rt_sigqueueinfo`).
    r"rt_[A-Za-z0-9_\-.]{40,}",
];

/// The keys whose prefix no word ends in, found wherever they start: glued to a name
/// (`prod_sk-ant-api03-…`, `OLD_sk-proj-…`, `tok_ghp_…`) or to an escape (`%22sk-proj-…`,
/// `key%3Dghp_…`), as a file name or a variable holding one writes them (QA: a shared page showed
/// such keys whole, where the same key after a blank or `/` was redacted).
const GLUED_SHAPES: &[&str] = &[
    r"sk-(?:ant|proj|svcacct|admin|or-v1)-[A-Za-z0-9_\-]{16,}",
    r"(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}",
    r"github_pat_[A-Za-z0-9_]{20,}",
    r"xox[abposr]-[A-Za-z0-9\-]{10,}",
    // AWS access key ids: long-term (`AKIA`) and temporary (`ASIA`, with a session token), also
    // in a file name (`AKIA…_2024.csv`).
    r"(?:AKIA|ASIA)[0-9A-Z]{16}",
    // Stripe's secret and restricted keys, npm and GitLab tokens, PyPI's upload tokens (a
    // macaroon whose base64 opens with `pypi.org`'s identifier).
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{20,}",
    r"npm_[A-Za-z0-9]{36}",
    r"glpat-[A-Za-z0-9_\-]{20,}",
    r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{20,}",
    // NVIDIA, Perplexity, Groq, xAI and Tavily API keys, LangSmith's (QA 2026-12-07: Groq's and
    // xAI's, providers `ctxkit models` lists, reached a shared page whole from an imported session).
    r"nvapi-[A-Za-z0-9_\-]{40,}",
    r"pplx-[A-Za-z0-9]{32,}",
    r"gsk_[A-Za-z0-9]{40,}",
    r"xai-[A-Za-z0-9]{40,}",
    r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{24,}",
    r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}",
    // Together, Pinecone, Sentry, Linear and Heroku tokens.
    r"tgp_v1_[A-Za-z0-9_\-]{30,}",
    r"pcsk_[A-Za-z0-9_]{40,}",
    r"sntrys_[A-Za-z0-9+/=_\-]{40,}",
    r"lin_api_[A-Za-z0-9]{30,}",
    r"HRKU-[A-Za-z0-9_\-]{30,}",
];

/// The prefix of the shapes a name could take ([`is_random_token`] decides).
const NAME_LIKE_PREFIX: &str = "rt_";

/// Whether `token` reads as random characters, not a name: it mixes capitals, small letters and
/// digits, as a base64 string of its length does and an identifier seldom does.
fn is_random_token(token: &str) -> bool {
    let has = |test: fn(&char) -> bool| token.chars().any(|character| test(&character));
    has(char::is_ascii_uppercase) && has(char::is_ascii_lowercase) && has(char::is_ascii_digit)
}

/// A private key block (PEM's `PRIVATE KEY`, PGP's `PRIVATE KEY BLOCK`), to its END line or to
/// the end of the text (a clipped block).
const KEY_BLOCK: &str = r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\z)";

/// A value given to a name that says it is a secret (`aws_secret_access_key = …`,
/// `AWS_SESSION_TOKEN=…`, `"SecretAccessKey": "…"`, `DB_PASSWORD: …`, `MYSQL_PWD=…`, the headers
/// `api-key: …` (Azure OpenAI's) and `x-api-key: …` (Anthropic's), `private_key = …`,
/// `SECRET_KEY_BASE=…`): keys and
/// passwords with no shape of their own. The name is group 1, what joins it to the value group 2
/// (a closing quote, JSON-escaped or not, `:` or `=`), then the value: a quoted one whole, to its
/// closing quote (`"…"`, `'…'`, JSON's `\"…\"`), a bare one to the next blank, quote or line end,
/// whatever its characters (`Sup3rSecret!`, `p@ssw0rd99`). Which values go is
/// [`is_assigned_secret`]'s call.
const ASSIGNED: &str = concat!(
    r#"\b([A-Za-z0-9_\-]*?(?i:api[_\-]?key|secret(?:[_\-]?access)?[_\-]?key(?:[_\-]?base)?|"#,
    r#"private[_\-]?key|session[_\-]?token|access[_\-]?token|auth[_\-]?token|secret|password|"#,
    r#"passwd|passphrase|token|_pwd|_pass|account[_\-]?key|shared[_\-]?access[_\-]?key|"#,
    r#"connection[_\-]?string))"#,
    r#"(\\?["']?\s*[:=]\s*)"#,
    r#"(?:\\"(?P<escaped>(?:[^"\\\r\n]|\\[^"\r\n])+)\\""#,
    r#"|"(?P<double>[^"\r\n]+)""#,
    r#"|'(?P<single>[^'\r\n]+)'"#,
    r#"|(?:\\?["'])?(?P<bare>(?:[^\s"'\\]|\\[^\s"'\\nrtbfu/])+))"#,
);

/// The shortest value given to a secret's name that is taken for one: shorter ones are settings
/// and placeholders (`token: abc1`).
const ASSIGNED_MINIMUM_CHARACTERS: usize = 6;

/// A value of digits alone shorter than this is a setting (`max_token=4096`, `"token": 12345`),
/// not a secret; a longer one is taken for a numeric key.
const ASSIGNED_NUMBER_CHARACTERS: usize = 12;

/// Whether `value`, given to a secret's name, is one: at least
/// [`ASSIGNED_MINIMUM_CHARACTERS`] long with a digit in it (`password = os.environ`,
/// `token: string` are code), and not a short number (a setting).
fn is_assigned_secret(value: &str) -> bool {
    let characters = value.chars().count();
    let has_digit = value.chars().any(|character| character.is_ascii_digit());
    let only_digits = value.chars().all(|character| character.is_ascii_digit());
    characters >= ASSIGNED_MINIMUM_CHARACTERS
        && has_digit
        && !(only_digits && characters < ASSIGNED_NUMBER_CHARACTERS)
}

/// Compiled once; `None` only if a constant above were not a valid pattern (a unit test holds).
/// The escape before a key, if any, is group 1, kept when the key is replaced.
static SHAPE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let words = WORD_SHAPES.join("|");
    let glued = GLUED_SHAPES.join("|");
    Regex::new(&format!(
        r"(?:({WORD_LEAD})|(?-u:\b))(?:{words})|{glued}|{KEY_BLOCK}"
    ))
    .ok()
});

/// What may come right before a key of [`WORD_SHAPES`] besides a word boundary (an ASCII one: a
/// letter of another script before a key, `キーはsk-…`, starts it), kept when the key is replaced:
/// a JSON escape of a line break or a tab, or of any character (`\u0022sk-…`), a percent escape
/// (`%22sk-…`, `%253D…`), and `_`, which joins a key to a name (`DEEPSEEK_KEY_sk-…`,
/// `GOOGLE_AIza…`, `jwt_eyJ…`; QA: all shown whole on a shared page).
const WORD_LEAD: &str = r"\\[bfnrt]|\\u[0-9a-fA-F]{4}|%[0-9A-Fa-f]{2}|_";

/// Whether `key`, found by the generic `sk-` shape, is one: a provider's `sk-` key holds a digit,
/// a name written with `sk-` (`sk-learn-and-numpy-tutorial`, `use_sk-learn_and_pandas`) holds none.
fn is_plain_sk_key(key: &str) -> bool {
    let distinct = [
        "sk-ant-",
        "sk-proj-",
        "sk-svcacct-",
        "sk-admin-",
        "sk-or-v1-",
    ];
    distinct.iter().any(|prefix| key.starts_with(prefix))
        || key.bytes().any(|byte| byte.is_ascii_digit())
}

static ASSIGNED_SECRET: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(ASSIGNED).ok());

/// [`SHAPE`] and [`ASSIGNED_SECRET`] in one search, without their word boundaries: it matches
/// wherever either does (and in more places). A Unicode `\b` makes the regex engine leave its
/// fast automaton for a slower one on any text holding a non-ASCII character; without one, the
/// text is searched once by the automaton, and most texts, which hold no key, are let go after it.
static CANDIDATE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    let words = WORD_SHAPES.join("|").replace(r"\b", "");
    let glued = GLUED_SHAPES.join("|");
    let assigned = ASSIGNED.strip_prefix(r"\b")?;
    Regex::new(&format!("(?:{words})|{glued}|{KEY_BLOCK}|{assigned}")).ok()
});

/// `text` with every key of a known shape, and every value given to a secret's name, replaced by
/// `<redacted>`.
pub fn redact_key_shapes(text: &str) -> Cow<'_, str> {
    match redact_split_keys(text) {
        Cow::Borrowed(text) => redact_visible_shapes(text),
        Cow::Owned(joined) => Cow::Owned(redact_visible_shapes(&joined).into_owned()),
    }
}

/// [`redact_key_shapes`] of the keys as written, none split.
fn redact_visible_shapes(text: &str) -> Cow<'_, str> {
    let shaped = match CANDIDATE.as_ref() {
        Some(candidate) if !candidate.is_match(text) => Cow::Borrowed(text),
        Some(_) | None => redact_found_shapes(text),
    };
    crate::command_passwords::redact_command_passwords(shaped)
}

/// Whether `character` hides inside a key that a reader sees whole (`sk-proj-Zw\u{200b}sp…`):
/// what draws nothing or reorders text (`ctxkit_protocol::is_invisible`), and the combining
/// grapheme joiner, variation selectors and tag characters, which draw nothing either but belong
/// in an emoji sequence, so a file name holding one is no odd name (QA: U+2061, U+200E, U+202A,
/// U+2066, U+034F, U+FE0F and the tags each hid a key's split).
fn is_invisible(character: char) -> bool {
    ctxkit_protocol::is_invisible(character)
        || matches!(
            character,
            '\u{34f}' | '\u{fe00}'..='\u{fe0f}' | '\u{e0000}'..='\u{e007f}'
        )
}

/// `text` with every key that only a character drawing nothing splits replaced by `<redacted>`:
/// the shapes are looked for in the text without those characters, and what they find there is
/// replaced where it lies in `text` (QA: a key split by U+200B reached a shared page whole).
fn redact_split_keys(text: &str) -> Cow<'_, str> {
    if !text.contains(is_invisible) {
        return Cow::Borrowed(text);
    }
    let Some(shape) = SHAPE.as_ref() else {
        return Cow::Borrowed(text);
    };
    // The text without them, and for each of its bytes the offset of that byte in `text`.
    let mut visible = String::with_capacity(text.len());
    let mut origin = Vec::with_capacity(text.len());
    for (offset, character) in text.char_indices() {
        if !is_invisible(character) {
            visible.push(character);
            origin.extend(offset..offset + character.len_utf8());
        }
    }
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    for found in shape.find_iter(&visible) {
        let (Some(&start), Some(&last)) = (origin.get(found.start()), origin.get(found.end() - 1))
        else {
            continue;
        };
        let end = text[last..]
            .chars()
            .next()
            .map_or(text.len(), |character| last + character.len_utf8());
        if start < copied || !text[start..end].contains(is_invisible) {
            continue;
        }
        out.push_str(&text[copied..start]);
        out.push_str("<redacted>");
        copied = end;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// [`redact_key_shapes`] of a text that may hold a key.
fn redact_found_shapes(text: &str) -> Cow<'_, str> {
    let shaped = match SHAPE.as_ref() {
        Some(shape) => shape.replace_all(text, |found: &regex::Captures<'_>| {
            let escape = found.get(1).map_or("", |escape| escape.as_str());
            let key = &found[0][escape.len()..];
            if key.starts_with(NAME_LIKE_PREFIX) && !is_random_token(key) {
                return found[0].to_owned();
            }
            if key.starts_with("sk-") && !is_plain_sk_key(key) {
                return found[0].to_owned();
            }
            format!("{escape}<redacted>")
        }),
        None => Cow::Borrowed(text),
    };
    let Some(assigned) = ASSIGNED_SECRET.as_ref() else {
        return shaped;
    };
    if !assigned.is_match(&shaped) {
        return shaped;
    }
    let redacted = assigned.replace_all(&shaped, |found: &regex::Captures<'_>| {
        let whole = &found[0];
        match assigned_value(found) {
            Some((before, value)) if is_assigned_secret(value) => {
                let after = before + value.len();
                format!("{}<redacted>{}", &whole[..before], &whole[after..])
            }
            Some(_) | None => whole.to_owned(),
        }
    });
    Cow::Owned(redacted.into_owned())
}

/// The value of a match of [`ASSIGNED`], and where it starts in the match.
fn assigned_value<'text>(found: &regex::Captures<'text>) -> Option<(usize, &'text str)> {
    let start = found.get(0).map_or(0, |whole| whole.start());
    ["escaped", "double", "single"]
        .iter()
        .find_map(|group| found.name(group))
        .map(|value| (value.start() - start, value.as_str()))
        .or_else(|| {
            // A bare value ends before the punctuation that closes what holds it
            // (`{token: 12345678}`, `f(password=abc123)`).
            let bare = found.name("bare")?;
            let value = bare.as_str().trim_end_matches([',', ';', ')', ']', '}']);
            Some((bare.start() - start, value))
        })
}

/// The values [`redact_key_shapes`] redacts in `text` as given to a secret's name
/// (`DB_PASSWORD=Sup3rSecret`) that hold a letter (a date or a number given to `token:` is a
/// setting more often than not), without escapes (a value holding a backslash is left out): what
/// shows them apart from their name elsewhere (a digest of a cut output listing `Sup3rSecret`, a
/// reply repeating it) redacts them as known secrets. QA (web): a shared page redacted the
/// assignment and showed the value in the model's view and in the reply.
pub fn assigned_secrets(text: &str) -> Vec<String> {
    let (Some(candidate), Some(assigned)) = (CANDIDATE.as_ref(), ASSIGNED_SECRET.as_ref()) else {
        return Vec::new();
    };
    if !candidate.is_match(text) {
        return Vec::new();
    }
    let mut values: Vec<String> = Vec::new();
    for found in assigned.captures_iter(text) {
        if let Some((_, value)) = assigned_value(&found)
            && is_assigned_secret(value)
            && value.chars().any(char::is_alphabetic)
            && !value.contains('\\')
            && !values.iter().any(|known| known == value)
        {
            values.push(value.to_owned());
        }
    }
    values
}

/// [`crate::redact`] with no known secret, then [`redact_key_shapes`]: for text kept apart from its
/// source (a summary, a verbatim checkpoint) or shown to others.
pub fn redact_for_keeping(text: &str) -> String {
    redact_key_shapes(&crate::redact(text, std::iter::empty())).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shapes_compile_and_each_is_redacted() {
        assert!(SHAPE.is_some());
        assert!(ASSIGNED_SECRET.is_some());
        assert!(CANDIDATE.is_some());
        let text = "sk-ant-api03-abcdefghijklmnopqrstuv ghp_abcdefghijklmnopqrstuvwxyz1234 \
                    AKIAABCDEFGHIJKLMNOP xoxb-1234567890-abcdef \
                    -----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY----- tail";
        let redacted = redact_key_shapes(text);
        for gone in ["sk-ant", "ghp_", "AKIAABCD", "xoxb-", "MIIE"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        assert!(redacted.ends_with(" tail"), "{redacted}");
    }

    /// QA (web): keys glued to a name or an escape before them, in a file name after them, split
    /// by a character that draws nothing, and Azure, Heroku, Mailgun and Twilio keys reached a
    /// shared page whole.
    #[test]
    fn glued_split_and_further_keys_are_redacted() {
        let proj = "sk-proj-abcdefghijklmnopqrstuvwx";
        let ghp = "ghp_abcdefghijklmnopqrstuvwxyz1234";
        for (text, gone) in [
            (
                "/home/u/keys/prod_sk-ant-api03-abcdefghijklmnopqrstuv.txt".to_owned(),
                "sk-ant",
            ),
            (format!("auth=%22{proj}%22"), "sk-proj"),
            (format!("key%3D{ghp}"), "ghp_"),
            (
                format!("OLD_{proj} my_{proj} tok_{ghp} p{ghp}"),
                "abcdefghij",
            ),
            (
                "AKIAIOSFODNN7EXAMPL2_2024.csv xAKIAIOSFODNN7EXAMPL2".to_owned(),
                "IOSFODNN",
            ),
            (
                "sk-proj-Zw\u{200b}spabcdefghijklmnopqrstuvwx done".to_owned(),
                "spabcdef",
            ),
            (
                "HRKU-abcdefgh-ijkl-mnop-qrst-uvwxyz0123456789".to_owned(),
                "HRKU",
            ),
            (
                "MAILGUN_API_KEY=key-0123456789abcdef0123456789abcdef".to_owned(),
                "key-0123",
            ),
            // Glued to a name by `_`, after a letter of another script, after escapes.
            (
                "DEEPSEEK_KEY_sk-0123456789abcdef0123456789abcdef".to_owned(),
                "0123456789abcdef",
            ),
            (
                "キーはsk-0123456789abcdef0123456789abcdef です".to_owned(),
                "0123456789abcdef",
            ),
            (
                "auth=%22sk-0123456789abcdef0123456789abcdef%22".to_owned(),
                "0123456789abcdef",
            ),
            (
                "auth\\u003dsk-0123456789abcdef0123456789abcdef".to_owned(),
                "0123456789abcdef",
            ),
            (
                "GOOGLE_AIzaSyA1234567890abcdefghijklmnopqrstuv".to_owned(),
                "AIzaSy",
            ),
            (
                "twilio_SK0123456789abcdef0123456789abcdef".to_owned(),
                "SK0123",
            ),
            (
                "jwt_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop".to_owned(),
                "eyJzdWIi",
            ),
            // Split by other characters that draw nothing.
            (
                "sk-proj-Zw\u{2061}spabcdefghijklmnopqrstuvwx".to_owned(),
                "spabcdef",
            ),
            (
                "ghp_abcdefghij\u{200e}klmnopqrstuvwxyz1234".to_owned(),
                "klmnop",
            ),
            (
                "ghp_abcdefghij\u{e0020}klmnopqrstuvwxyz1234".to_owned(),
                "klmnop",
            ),
            (
                "twilio SK0123456789abcdef0123456789ABCDEF".to_owned(),
                "SK0123",
            ),
            (
                "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=a;\
                 AccountKey=QUJDREVGR0hJSktMTU5PUFFSU1RVVldY0123==;EndpointSuffix=core"
                    .to_owned(),
                "QUJDREVG",
            ),
            (
                "blob AccountKey=QUJDREVGR0hJSktMTU5PUFFSU1RVVldY0123==; x".to_owned(),
                "QUJDREVG",
            ),
        ] {
            let redacted = redact_key_shapes(&text);
            assert!(!redacted.contains(gone), "{text}: {redacted}");
            assert!(redacted.contains("<redacted>"), "{text}: {redacted}");
        }
        // A split key's neighbours stay as they were.
        assert_eq!(
            redact_key_shapes("a \u{200b}b sk-proj-Zw\u{200b}spabcdefghijklmnopqrstuvwx done"),
            "a \u{200b}b <redacted> done"
        );
    }

    #[test]
    fn the_values_given_to_secret_names_are_listed_once() {
        let raw = r#"{"text":"DB_PASSWORD=Tr0ub4dor&3x\nAPI_KEY: \"k3y-value-1\"\nDB_PASSWORD=Tr0ub4dor&3x\ntoken: abc1 max_token=4096"}"#;
        assert_eq!(assigned_secrets(raw), ["Tr0ub4dor&3x", "k3y-value-1"]);
        assert!(assigned_secrets("nothing secret here").is_empty());
    }

    #[test]
    fn ordinary_text_is_left_as_it_is() {
        let text = "the sk-learn docs, task-1234 and skeleton keys, \
                    task-management-service-configuration, use_sk-learn_and_pandas_together, \
                    monkey-0123456789abcdef0123456789abcdef, ASK0123456789abcdef0123456789abcdef, \
                    cache-key-d41d8cd98f00b204e9800998ecf8427e, sk-learn-and-numpy-and-pandas-tutorial";
        assert_eq!(redact_key_shapes(text), text);
        assert!(matches!(
            redact_key_shapes("the sk-learn docs"),
            Cow::Borrowed(_)
        ));
        assert_eq!(
            redact_for_keeping("Authorization: Bearer abcDEF123456789xyz0"),
            "Authorization: Bearer <redacted>"
        );
    }

    /// Keys of services a repository's `.env` often holds: a summary of a span that printed one
    /// repeated it (the shapes were provider and GitHub/Slack/AWS keys only).
    #[test]
    fn stripe_npm_gitlab_and_hugging_face_keys_are_redacted() {
        let text = "STRIPE_KEY=sk_live_51HabcdefghijklmnopqrstuvWXYZ rk_test_abcdefghijklmnopqrstuvwx \
                    //registry.npmjs.org/:_authToken=npm_abcdefghijklmnopqrstuvwxyz0123456789 \
                    glpat-abcdefghij1234567890 HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyzABCDEFGH";
        let redacted = redact_key_shapes(text);
        for gone in ["sk_live_", "rk_test_", "npm_abc", "glpat-", "hf_abc"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        let plain = "the npm_config docs, sk_live mode and hf_hub downloads";
        assert_eq!(redact_key_shapes(plain), plain);
    }

    /// QA r104: a PyPI token the user pasted was copied into a summary's goal verbatim, where a
    /// GitHub token in the same sentence was redacted. Each row: a key of its service's shape.
    const SERVICE_KEYS: &[&str] = &[
        "pypi-AgEIcHlwaS5vcmcCJGE3ZDFkNTYyLTk4ZjItNDc0OS1iOGE2LTQ1YjUxN2Y0ZTNhNwACKlsz",
        "SG.abcdefghijklmnopqrstuv.abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ",
        "dop_v1_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "shpat_0123456789abcdef0123456789abcdef",
        "dapi0123456789abcdef0123456789abcdef",
        "ya29.a0AfH6SMBabcdefghijklmnopqrstuvwxyz0123",
        "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnopqrstuvwx",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "tid=0a1b2c3d4e5f60718293a4b5c6d7e8f9;exp=1790000000;sku=monthly_subscriber;proxy-ep=proxy.individual.githubcopilot.com;st=dotcom;chat=1;8kp=1:9f8e7d6c5b4a39281706f5e4d3c2b1a0",
        "rt_Xk2v9QpL3mN8rT5wY1zA4bC7dE0fG6hJ9kL2mN5pQ8rS1tU4vW7xY0zA3bC6dE9f",
        // QA (2026-12-07): a Discord bot token a user pasted reached a page and a summary whole.
        "MTQ3NzE2OTk5NjM4MTE2NTYxMA.GaBcDe.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "7123456789:AAH3kP9vQw2xYz4AbCdEfGhIjKlMnOpQrSt",
        "nvapi-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGh",
        "pplx-0123456789abcdef0123456789abcdef0123",
        "gsk_Q7mXaBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789aBcDeFgHiJkLmN",
        "xai-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCd",
        "csk-abcdefghijklmnopqrstuvwxyz0123456789abcdefghijkl",
        "r8_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789A",
        "tvly-dev-AbCdEfGhIjKlMnOpQrStUvWxYz012345",
        "lsv2_pt_0123456789abcdef0123456789abcdef_0123456789",
        "fw_3ZAbCdEfGhIjKlMnOpQrStUvWx",
        "tgp_v1_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "vck_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "pcsk_2AbCdE_FgHiJkLmNoPqRsTuVwXyZ0123456789AbCdEfGhIj",
        "sntrys_eyJpYXQiOjE2ODQ4MjQzNjkuNDI4MDY2LCJ1cmwiOiJodHRwczovL3NlbnRyeS5pbyJ9",
        "lin_api_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "ntn_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEf",
        "sbp_0123456789abcdef0123456789abcdef01234567",
        "ABSKQmVkcm9ja0FQSUtleS1hYmNkZWZnaGlqa2xtbm9wcXJzdHV2d3h5ejAxMjM0NTY3ODk=",
        "1//0AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKl",
    ];

    #[test]
    fn keys_of_further_services_are_redacted_and_their_neighbours_kept() {
        for key in SERVICE_KEYS {
            let text = format!("my token is {key} if you need it");
            let redacted = redact_key_shapes(&text);
            let tail = &key[key.len() - 12..];
            assert!(!redacted.contains(tail), "{redacted}");
            assert!(
                redacted.starts_with("my token is ")
                    && redacted.ends_with("<redacted> if you need it"),
                "{redacted}"
            );
        }
        let plain = "pip install pypi-tools; the SG.1 group; ya29 docs; shpat_ prefix; eyJ0 header; \
                     Module.method.call; 12:30 AA meeting; nvapi-docs; pplx-api; gsk_ docs; \
                     xai-sdk; csk-notes; r8_model; tvly-search";
        assert_eq!(redact_key_shapes(plain), plain);
    }

    /// QA r108 (F2): a Copilot session token and an OAuth refresh token of Pi's logins reached a
    /// shared page whole. A name of the refresh token's form is not one, nor a short `tid=`.
    #[test]
    fn login_tokens_are_redacted_and_names_of_their_form_kept() {
        let copilot = "Authorization: Bearer tid=0a1b2c3d4e5f6071;exp=1790000000;8kp=1:abc\" tail";
        assert_eq!(
            redact_key_shapes(copilot),
            "Authorization: Bearer <redacted>\" tail"
        );
        let refresh = r#""refresh": "rt_Xk2v9QpL3mN8rT5wY1zA4bC7dE0fG6hJ9kL2mN5pQ8rS1tU.x9Z""#;
        assert_eq!(redact_key_shapes(refresh), r#""refresh": "<redacted>""#);
        let plain = "rt_multi_thread_runtime_configuration_builder_v2 and rt_sigqueueinfo; \
                     tid=7;exp=1 in a test";
        assert_eq!(redact_key_shapes(plain), plain);
    }

    /// Text that is JSON (a tool's raw output, a call's arguments as written) escapes a line break
    /// as `\n`: a key at the start of a line then follows a letter, with no word boundary before it.
    #[test]
    fn a_key_after_an_escaped_line_break_or_tab_is_redacted_and_the_escape_kept() {
        let json = r#"{"keys":"first\nsk-proj-abcdefghijklmnopqrstuv\tghp_abcdefghijklmnopqrstuvwxyz1234\rAKIAABCDEFGHIJKLMNOP"}"#;
        let redacted = redact_key_shapes(json);
        for gone in ["sk-proj", "ghp_", "AKIAABCD"] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        assert_eq!(
            redacted,
            r#"{"keys":"first\n<redacted>\t<redacted>\r<redacted>"}"#
        );
        // A word that merely ends in `n` before `sk-` is not a line break.
        let plain = "the ask-questions-and-answers-list";
        assert_eq!(redact_key_shapes(plain), plain);
    }

    /// QA r104: a `.env` printed by a tool showed its passwords on the shared page: a value given
    /// to a secret's name was taken only at 12 characters or more of `[A-Za-z0-9/+=_.-]`. Each row:
    /// the text, then what the page shows of it.
    const ASSIGNED_CASES: &[(&str, &str)] = &[
        ("DB_PASSWORD=Sup3rSecret!", "DB_PASSWORD=<redacted>"),
        ("MYSQL_PASSWORD=p@ssw0rd99", "MYSQL_PASSWORD=<redacted>"),
        ("API_TOKEN=ab12cd34ef", "API_TOKEN=<redacted>"),
        ("password=Tr0ub4dor&3", "password=<redacted>"),
        (
            "DB_PASSWORD=Sup3r$ecret tail",
            "DB_PASSWORD=<redacted> tail",
        ),
        ("DB_PASSWORD=Sup3r.Secret", "DB_PASSWORD=<redacted>"),
        (
            "export DB_PASSWORD=\"Sup3rSecret!\"",
            "export DB_PASSWORD=\"<redacted>\"",
        ),
        ("MYSQL_PWD=Sup3rSecret", "MYSQL_PWD=<redacted>"),
        ("DB_PASS=hunter22", "DB_PASS=<redacted>"),
        (
            "GPG_PASSPHRASE='correct horse 9'",
            "GPG_PASSPHRASE='<redacted>'",
        ),
        (
            "{\"password\": \"my s3cret phrase\", \"user\": \"bob\"}",
            "{\"password\": \"<redacted>\", \"user\": \"bob\"}",
        ),
        (
            r#"{\"DB_PASSWORD\": \"p@ss w0rd\"}"#,
            r#"{\"DB_PASSWORD\": \"<redacted>\"}"#,
        ),
        (
            r#"{"text":"DB_PASSWORD=Sup3rSecret!\nNEXT=1"}"#,
            r#"{"text":"DB_PASSWORD=<redacted>\nNEXT=1"}"#,
        ),
        ("token: 123456789012345", "token: <redacted>"),
        // Settings, placeholders and code, left as they are: no digit, a number under 12 digits,
        // under 6 characters, or a name that only starts with a secret's.
        ("token_count=12", "token_count=12"),
        ("password_min_length=8", "password_min_length=8"),
        ("PASSWORD_RESET_TTL=3600", "PASSWORD_RESET_TTL=3600"),
        ("max_token=4096", "max_token=4096"),
        ("{\"token\": 12345678}", "{\"token\": 12345678}"),
        ("{token: abc12345}", "{token: <redacted>}"),
        ("token: abc1", "token: abc1"),
        ("password = os.environ", "password = os.environ"),
        ("PWD=/home/user1/project", "PWD=/home/user1/project"),
        ("OLDPWD=/srv/app2", "OLDPWD=/srv/app2"),
        // QA (2026-12-07): Azure OpenAI's and Anthropic's key headers, a private key and Rails'
        // secret reached a shared page whole.
        (
            "-H \"api-key: 3f2a9c1d7e4b4a6f8c0d2e1f5a7b9c3d\"",
            "-H \"api-key: <redacted>\"",
        ),
        ("X-Api-Key: 7d1e0c2b9a8f4e3d6c5b", "X-Api-Key: <redacted>"),
        (
            "{\"x-api-key\": \"7d1e0c2b9a8f4e3d6c5b\"}",
            "{\"x-api-key\": \"<redacted>\"}",
        ),
        (
            "private_key = \"7d1e0c2b9a8f\"",
            "private_key = \"<redacted>\"",
        ),
        ("SECRET_KEY_BASE=7d1e0c2b9a8f", "SECRET_KEY_BASE=<redacted>"),
        (
            "x-api-key: ${ANTHROPIC_API_KEY}",
            "x-api-key: ${ANTHROPIC_API_KEY}",
        ),
        (
            "private_key_path = keys/id_ed25519",
            "private_key_path = keys/id_ed25519",
        ),
    ];

    #[test]
    fn a_value_with_a_digit_given_to_a_secret_name_is_redacted_whatever_its_characters() {
        for (text, shown) in ASSIGNED_CASES {
            assert_eq!(redact_key_shapes(text), *shown, "{text}");
        }
    }

    /// QA (2026-12-05): a shared page showed a PGP private key, an AWS secret key given to its
    /// name in the three ways AWS tools write it, and a temporary (`ASIA`) key id.
    #[test]
    fn pgp_key_blocks_and_values_given_to_a_secret_name_are_redacted() {
        let text = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF0\n-----END PGP PRIVATE KEY BLOCK-----\n\
                    aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\
                    export AWS_SECRET_ACCESS_KEY=je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY\n\
                    {\"SecretAccessKey\": \"9drTJvcXLB89EXAMPLELB8923FB892xMFI\", \"SessionToken\": \"FwoGZXIvYXdzEXAMPLE1\"}\n\
                    ASIAIOSFODNN7EXAMPLE\n\
                    {\\\"DB_PASSWORD\\\": \\\"hunter2hunter2\\\"}";
        let redacted = redact_key_shapes(text);
        for gone in [
            "lQOYBF0", "wJalr", "je7Mt", "9drTJ", "FwoGZ", "ASIAIOSF", "hunter2",
        ] {
            assert!(!redacted.contains(gone), "{gone}: {redacted}");
        }
        assert!(
            redacted.contains("aws_secret_access_key = <redacted>"),
            "{redacted}"
        );
        assert!(
            redacted.contains("\"SessionToken\": \"<redacted>\""),
            "{redacted}"
        );
        // Names and values that are code, not keys.
        let code = "password = os.environ; MAX_TOKENS=4096; token: string; \
                    TOKEN_LIMIT=4096000000000; secret_key_base = Rails.application";
        assert_eq!(redact_key_shapes(code), code);
    }

    /// The one search that lets a text without a key go finds every text the shapes redact
    /// something of, beside non-ASCII characters too (where the shapes' word boundaries are
    /// Unicode's): each text is redacted exactly as the shapes alone redact it.
    #[test]
    fn the_first_search_lets_go_only_texts_the_shapes_leave_alone() {
        let key = "sk-ant-api03-abcdefghijklmnopqrstuv";
        let texts = [
            "plain words, café and 日本語, no key at all".to_owned(),
            format!("é{key}"),
            format!("日{key} and ({key})"),
            format!("\\n{key}"),
            "AKIAABCDEFGHIJKLMNOPé AKIAABCDEFGHIJKLMNOP".to_owned(),
            "ſecret = Sup3rSecret! and \u{212A}EY_password: p@ssw0rd99".to_owned(),
            "DB_PASSWORD=hunter22 — “quoted” token: abc1".to_owned(),
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\nabc\n-----END PGP PRIVATE KEY BLOCK-----"
                .to_owned(),
            "Bearer abcdefghijklmnopqrstuvwxyz ünïcödé".to_owned(),
            "token: string, password = os.environ, max_token=4096".to_owned(),
        ];
        for text in &texts {
            assert_eq!(redact_key_shapes(text), redact_found_shapes(text), "{text}");
        }
        assert!(matches!(redact_key_shapes(&texts[0]), Cow::Borrowed(_)));
    }
}
