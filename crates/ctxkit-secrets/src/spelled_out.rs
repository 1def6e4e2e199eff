//! A key spelled out by a dump. `xxd`, `hexdump -C`, `od -c`, `od -tx1` and `sed 's/./& /g'` put
//! spaces, offsets and line breaks between its bytes, and `rev` turns it round: no spelling of
//! the key stands in such a text, yet anyone (a model too) reads the key off it at a glance (QA
//! 2026-12-07: `xxd .env` sent a configured key to the session and the provider). Such a text is
//! looked at twice more, its white space taken out and its characters reversed, and withheld
//! whole when either view holds a key or a piece of one.

use crate::fragments::Fragments;

/// What stands for a text that spells a key out.
pub(crate) const WITHHELD: &str = "<redacted: this text spells out a key ctxkit keeps from the \
     model (in a hex or character dump, reversed or spaced out), so none of it is shown>";

/// Whether `text` (already redacted of every plain spelling) spells one of `secrets` out.
/// `fragments` holds the secrets' own windows (a dump read back is searched for the secret, not for
/// its hex: the numbers `3331`…`3338` read back are the hex of `12345678`). `skeletons` holds the secrets' letters and digits alone, in lower case, and `short` those
/// skeletons too short for its windows. Read on every tool result and every file `grep` searches:
/// one pass builds the text's own skeleton (its letters and digits, lower case: any separator,
/// any case, `od -c`'s columns, `sed 's/./& /g'`, `['s', 'k', …]`), read forwards and backwards
/// (`rev`); numeric dumps are read back only where the text holds enough numbers to be one.
pub(crate) fn spells_out_a_key(
    text: &str,
    fragments: &Fragments,
    skeletons: &Fragments,
    short: &[String],
) -> bool {
    let skeleton: String = text
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|character| character.to_ascii_lowercase())
        .collect();
    let reversed: String = skeleton.chars().rev().collect();
    let holds_skeleton = |view: &str| {
        skeletons.finds(view) || short.iter().any(|secret| view.contains(secret.as_str()))
    };
    if holds_skeleton(&skeleton) || holds_skeleton(&reversed) {
        return true;
    }
    // A dump's offsets and its hex column stand between the key's characters from one line to
    // the next (QA: `od -c`, `xxd`, `hexdump -C` and `xxd -c 8` of a 26-character key showed it
    // whole): its lines without their offsets, and its text column alone, are read too.
    let (without_offsets, columns) = dump_views(text);
    if !columns.is_empty() && (fragments.finds(&columns) || holds_skeleton(&skeleton_of(&columns)))
    {
        return true;
    }
    if !without_offsets.is_empty() && holds_skeleton(&skeleton_of(&without_offsets)) {
        return true;
    }
    decoded_dumps(text)
        .iter()
        .any(|bytes| fragments.finds(&String::from_utf8_lossy(bytes)))
}

/// Whether a numeric dump in `text` stands for a piece of a secret: read on the text before
/// redaction too, where a dump's line break had cut the secret's hex spelling into pieces the
/// redaction took apart (QA: `xxd -p` showed the key's first bytes before `<redacted>`).
pub(crate) fn dump_holds_a_key(text: &str, fragments: &Fragments) -> bool {
    decoded_dumps(text)
        .iter()
        .any(|bytes| fragments.finds(&String::from_utf8_lossy(bytes)))
}

/// `text`'s letters and digits alone, in lower case.
fn skeleton_of(text: &str) -> String {
    text.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|character| character.to_ascii_lowercase())
        .collect()
}

/// Two views of the dump lines of `text` (a line starting with an offset: six or more hex digits,
/// `xxd`'s with a `:`): each such line without its offset, joined (`od -c`'s characters), and
/// each one's text column, joined (`xxd`'s after the hex groups, `hexdump -C`'s between `|`s).
/// Both empty when no line is a dump's.
fn dump_views(text: &str) -> (String, String) {
    let mut without_offsets = String::new();
    let mut columns = String::new();
    for line in text.lines() {
        let Some(rest) = after_offset(line) else {
            continue;
        };
        without_offsets.push_str(rest);
        without_offsets.push(' ');
        if let (Some(start), Some(end)) = (rest.find('|'), rest.rfind('|'))
            && start < end
        {
            columns.push_str(&rest[start + 1..end]);
        } else if line
            .split_whitespace()
            .next()
            .is_some_and(|offset| offset.ends_with(':'))
            && let Some(gap) = rest.trim_start().find("  ")
        {
            columns.push_str(rest.trim_start()[gap..].trim_start());
        }
    }
    (without_offsets, columns)
}

/// The rest of a dump's line after its offset, when it starts with one.
fn after_offset(line: &str) -> Option<&str> {
    let offset = line.split_whitespace().next()?;
    let digits = offset.strip_suffix(':').unwrap_or(offset);
    let is_offset = digits.len() >= 6 && digits.bytes().all(|byte| byte.is_ascii_hexdigit());
    if !is_offset {
        return None;
    }
    let start = line.find(offset)? + offset.len();
    line.get(start..)
}

/// The bytes a numeric dump in `text` stands for, read each way a dump tool writes them: hex
/// bytes (`xxd`, `od -tx1`, `hexdump -C`, `xxd -i`'s `0x73,`), hex words of two or four bytes in
/// both byte orders (`xxd`'s `736b`, `hexdump`'s and `od -x`'s little-endian `6b73`), octal bytes
/// (`od -to1`) and octal words (`od`'s default, little-endian). A line's first number when it is
/// six digits or more is its offset, left out.
fn decoded_dumps(text: &str) -> Vec<Vec<u8>> {
    let mut views = vec![Vec::new(); 5];
    for line in text.lines() {
        let tokens: Vec<&str> = line
            .split(|character: char| !character.is_ascii_hexdigit())
            .filter(|token| !token.is_empty())
            .collect();
        // A line of one number is no offset and its data (QA: `xxd -p -c 4`, `od -An -tx4 -w4`
        // showed the key a word a line).
        let offset = tokens.len() > 1 && tokens.first().is_some_and(|first| first.len() >= 6);
        for token in tokens.iter().skip(usize::from(offset)) {
            push_token(token, &mut views);
        }
    }
    views.retain(|view| view.len() >= crate::fragments::FRAGMENT_BYTES);
    views
}

/// One number of a dump, into each view it can be read in: big-endian hex, little-endian hex,
/// octal bytes, octal little-endian words.
fn push_token(token: &str, views: &mut [Vec<u8>]) {
    if let (2 | 4 | 8, Ok(value)) = (token.len(), u64::from_str_radix(token, 16)) {
        let bytes = value.to_be_bytes();
        let big = &bytes[8 - token.len() / 2..];
        views[0].extend_from_slice(big);
        views[1].extend(big.iter().rev());
    } else if token.len() > 8 && token.len().is_multiple_of(2) {
        // A run of hex bytes (`xxd -p`'s 60 digits a line).
        let bytes = (0..token.len())
            .step_by(2)
            .filter_map(|at| token.get(at..at + 2))
            .filter_map(|pair| u8::from_str_radix(pair, 16).ok());
        views[0].extend(bytes);
    }
    // Bytes in decimal (`od -An -tu1`, `od -td1`, a language's list of a file's bytes).
    if (1..=3).contains(&token.len())
        && token.bytes().all(|digit| digit.is_ascii_digit())
        && let Ok(byte) = token.parse::<u8>()
    {
        views[4].push(byte);
    }
    if token.bytes().all(|digit| (b'0'..=b'7').contains(&digit)) {
        match (token.len(), u32::from_str_radix(token, 8)) {
            (3, Ok(byte)) => {
                if let Ok(byte) = u8::try_from(byte) {
                    views[2].push(byte);
                }
            }
            (6, Ok(word)) => {
                if let Ok(word) = u16::try_from(word) {
                    views[3].extend_from_slice(&word.to_le_bytes());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::Redactor;

    const KEY: &str = "sk-test-SECRETKEYVALUE0123456789abcdef";

    fn dump(bytes: &[u8], group: usize) -> String {
        bytes
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let hex: Vec<String> = chunk
                    .chunks(group)
                    .map(|pair| pair.iter().map(|byte| format!("{byte:02x}")).collect())
                    .collect();
                format!("{:08x}: {}\n", line * 16, hex.join(" "))
            })
            .collect()
    }

    /// The dumps a tester's model ran on `.env`: each spelled the key out to the provider.
    #[test]
    fn a_key_in_a_dump_or_spelled_backwards_is_withheld() {
        let redactor = Redactor::new([KEY]);
        let file = format!("OPENAI_API_KEY={KEY}\n");
        let spaced: String = KEY.chars().flat_map(|character| [character, ' ']).collect();
        let od_c: String = file
            .as_bytes()
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let characters: String = chunk
                    .iter()
                    .map(|byte| format!("   {}", *byte as char))
                    .collect();
                format!("{:07o}{characters}\n", line * 16)
            })
            .collect();
        let reversed: String = KEY.chars().rev().collect();
        // A verifier's second list: `hexdump` and `od -x` (little-endian words), `od` (octal
        // words), `od -to1`, `xxd -i`, other separators, upper case.
        let words_le: String = file
            .as_bytes()
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let words: Vec<String> = chunk
                    .chunks(2)
                    .map(|pair| match pair {
                        [low, high] => format!("{high:02x}{low:02x}"),
                        [low] => format!("00{low:02x}"),
                        _ => String::new(),
                    })
                    .collect();
                format!("{:07x} {}\n", line * 16, words.join(" "))
            })
            .collect();
        let octal_words: String = file
            .as_bytes()
            .chunks(16)
            .enumerate()
            .map(|(line, chunk)| {
                let words: Vec<String> = chunk
                    .chunks(2)
                    .map(|pair| {
                        let word = u16::from_le_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
                        format!("{word:06o}")
                    })
                    .collect();
                format!("{:07o} {}\n", line * 16, words.join(" "))
            })
            .collect();
        let octal_bytes: String = file.bytes().map(|byte| format!("{byte:03o} ")).collect();
        let c_array: String = file.bytes().map(|byte| format!("0x{byte:02x}, ")).collect();
        let dashed: String = KEY.chars().flat_map(|character| [character, '-']).collect();
        let listed = format!("{:?}", KEY.chars().collect::<Vec<_>>());
        for (name, text) in [
            ("hexdump", words_le),
            ("od", octal_words),
            ("od -to1", octal_bytes),
            ("xxd -i", c_array),
            ("sed s/./&-/g", dashed),
            ("list()", listed),
            ("xxd", dump(file.as_bytes(), 2)),
            ("od -tx1", dump(file.as_bytes(), 1)),
            ("od -c", od_c),
            ("spaced", spaced),
            ("rev", reversed),
        ] {
            let shown = redactor.redact_known(&text);
            assert_eq!(shown, super::WITHHELD, "{name}: {text}");
        }
    }

    /// `tr a-z A-Z` of a key mostly in small letters: no piece of it stands as it is.
    #[test]
    fn a_key_in_other_case_is_withheld() {
        let key = "sk-proj-qatestsecretkeyvalue0123456789abcdef";
        let redactor = Redactor::new([key]);
        let shown = redactor.redact_known(&format!("OPENAI_API_KEY={}", key.to_uppercase()));
        assert_eq!(shown, super::WITHHELD);
    }

    /// QA (verification): a key of 26 characters was read whole off `od -c`, `xxd`,
    /// `hexdump -C` and `xxd -c 8`, whose offsets and hex columns broke every 16-character run.
    #[test]
    fn a_short_key_across_a_dumps_lines_is_withheld() {
        let key = "sk-SECRETMOCKKEY1234567890";
        let redactor = Redactor::new([key]);
        let dumps = [
            "0000000   O   P   E   N   A   I   _   A   P   I   _   K   E   Y   =   s\n0000020   k   -   S   E   C   R   E   T   M   O   C   K   K   E   Y   1\n0000040   2   3   4   5   6   7   8   9   0  \\n\n0000052\n",
            "00000000: 4f50 454e 4149 5f41 5049 5f4b 4559 3d73  OPENAI_API_KEY=s\n00000010: 6b2d 5345 4352 4554 4d4f 434b 4b45 5931  k-SECRETMOCKKEY1\n00000020: 3233 3435 3637 3839 300a                 234567890.\n",
            "00000000  4f 50 45 4e 41 49 5f 41  50 49 5f 4b 45 59 3d 73  |OPENAI_API_KEY=s|\n00000010  6b 2d 53 45 43 52 45 54  4d 4f 43 4b 4b 45 59 31  |k-SECRETMOCKKEY1|\n00000020  32 33 34 35 36 37 38 39  30 0a                    |234567890.|\n0000002a\n",
            "00000000: 4b45 593d 736b 2d53  KEY=sk-S\n00000008: 4543 5245 544d 4f43  ECRETMOC\n00000010: 4b4b 4559 3132 3334  KKEY1234\n00000018: 3536 3738 3930 0a    567890.\n",
        ];
        for dump in dumps {
            assert_eq!(redactor.redact_known(dump), super::WITHHELD, "{dump}");
        }
    }

    /// QA (second verification): `xxd -p`, `xxd -p -c 4`, `od -An -tx4 -w4`, `od -An -tu1` and a
    /// list of the file's bytes in decimal showed the key.
    #[test]
    fn a_key_in_plain_hex_words_or_decimal_bytes_is_withheld() {
        let key = "sk-SECRETMOCKKEY1234567890";
        let redactor = Redactor::new([key]);
        let file = format!("OPENAI_API_KEY={key}\n").into_bytes();
        // `xxd -p`: 30 bytes a line, the key across two lines.
        let plain: String = file
            .chunks(30)
            .map(|line| {
                line.iter()
                    .map(|byte| format!("{byte:02x}"))
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        let words: String = file
            .chunks(4)
            .map(|word| {
                word.iter()
                    .map(|byte| format!("{byte:02x}"))
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        let little: String = file
            .chunks(4)
            .map(|word| {
                word.iter()
                    .rev()
                    .map(|byte| format!("{byte:02x}"))
                    .collect::<String>()
                    + "\n"
            })
            .collect();
        let decimal: String = file.iter().map(|byte| format!(" {byte:3}")).collect();
        let list = format!("{:?}", file);
        for dump in [plain, words, little, decimal, list] {
            assert_eq!(redactor.redact_known(&dump), super::WITHHELD, "{dump}");
        }
    }

    /// QA: with a key holding `1234567890`, `seq 1 20000` was withheld whole (its digits spell
    /// the hex of the key's `12345678`), and so was every file `grep` searched with such numbers.
    #[test]
    fn numbers_that_spell_a_keys_hex_are_no_spelling_of_the_key() {
        let redactor = Redactor::new(["sk-SECRETMOCKKEY1234567890"]);
        let numbers: String = (1..=20_000).map(|number| format!("{number}\n")).collect();
        assert_eq!(redactor.redact_known(&numbers), numbers);
        let spaced: String = "sk-SECRETMOCKKEY1234567890"
            .chars()
            .flat_map(|character| [character, ' '])
            .collect();
        assert_eq!(redactor.redact_known(&spaced), super::WITHHELD);
    }

    #[test]
    fn a_dump_without_a_key_is_shown_as_it_is() {
        let redactor = Redactor::new([KEY]);
        let text = dump(b"just some ordinary bytes of a file, nothing secret", 2);
        assert_eq!(redactor.redact_known(&text), text);
        let plain = format!("key={KEY} and the rest");
        assert_eq!(redactor.redact_known(&plain), "key=<redacted> and the rest");
    }
}
