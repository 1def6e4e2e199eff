//! What a command that measures reported: a `time`d run's wall time and its tool's own timing
//! (`built in 21.48s`, `ready in 1870 ms`), a `du` size, a `wc -l` count. A passing build that
//! was timed keeps those numbers on its line instead of a bare "passed".

/// Programs that measure what follows them or what they are given.
const MEASURING: &[&str] = &["time", "du", "wc", "hyperfine"];

/// Words that name what a timing measured (`built in 21.48s`, `ready in 1870 ms`, `Done in 3s`).
const TIMED_VERBS: &[&str] = &["ready", "done", "built", "took", "started"];

/// Whether a command measures: one of its segments (apart by `&&`, `;`, `|`) starts with `time`,
/// `du`, `wc` or `hyperfine`, or a dev server reports how long it took to start (`ready in`).
pub(crate) fn measures(command: &str, output: &str) -> bool {
    let timed = command
        .split(['&', ';', '|'])
        .filter_map(|segment| segment.split_whitespace().next())
        .any(|first| MEASURING.contains(&first));
    timed || output.lines().any(|line| line.contains("ready in "))
}

/// A duration word (`21.48s`, `1870`, `0m23.901s`) with its unit when apart (`1870 ms`).
fn duration(word: &str, next: Option<&str>) -> Option<String> {
    let word = word.trim_end_matches([',', '.', ')']);
    if !word.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let digits = word
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(word.len());
    let unit = &word[digits..];
    if ["ms", "s", "m", "min"].contains(&unit) || unit.starts_with('m') && unit.ends_with('s') {
        return Some(word.to_owned());
    }
    let next = next.map(|next| next.trim_end_matches([',', '.', ')']))?;
    (unit.is_empty() && ["ms", "s", "sec", "seconds"].contains(&next))
        .then(|| format!("{word} {next}"))
}

/// The timing a line reports, labelled: `real 0m23.901s`, or `built in 21.48s` with the verb
/// before `in` (`compiled … in 96410 ms` is `compiled in 96410 ms`).
fn timing(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.first() == Some(&"real") {
        return duration(words.get(1)?, None).map(|value| format!("real {value}"));
    }
    let at = words.iter().position(|word| *word == "in")?;
    let value = duration(words.get(at + 1)?, words.get(at + 2).copied())?;
    let label = words[..at]
        .iter()
        .rev()
        .take(4)
        .map(|word| word.trim_matches(|c: char| !c.is_alphanumeric()))
        .find(|word| {
            let lower = word.to_lowercase();
            TIMED_VERBS.contains(&lower.as_str()) || lower.len() > 3 && lower.ends_with("ed")
        })
        .or_else(|| words[..at].last().copied())?;
    Some(format!("{label} in {value}"))
}

/// A `du` line's size and path (`3.3M\tdist` is `dist 3.3M`).
fn size(line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let (amount, path) = (words.next()?, words.next()?);
    let digits = amount
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
        .unwrap_or(amount.len());
    let unit = &amount[digits..];
    let sized = digits > 0
        && ["B", "K", "M", "G", "T", "KB", "MB", "GB"].contains(&unit)
        && words.next().is_none()
        && !path.starts_with(|c: char| c.is_ascii_digit());
    sized.then(|| format!("{path} {amount}"))
}

/// What a measuring command's output reported, short and in order: timings, sizes, and the
/// count a `wc -l` printed; `None` when it printed none of them.
pub(crate) fn measured_values(command: &str, output: &str) -> Option<String> {
    let counts = command.contains("wc -l");
    let mut values: Vec<String> = Vec::new();
    for line in output.lines().map(str::trim) {
        let value = timing(line).or_else(|| size(line)).or_else(|| {
            let count = line.split_whitespace().next()?;
            (counts && count.chars().all(|c| c.is_ascii_digit()) && line.len() < 60)
                .then(|| format!("wc -l {count}"))
        });
        if let Some(value) = value.filter(|value| !values.contains(value)) {
            values.push(value);
        }
    }
    (!values.is_empty()).then(|| values.join(", "))
}

/// Units a stated measurement ends with (`840 ms`, `12.4s`, `412 GB`, `1.31 billion`, `95%`).
const UNITS: &[&str] = &[
    "ms", "s", "sec", "secs", "seconds", "min", "mins", "minutes", "h", "hours", "b", "kb", "mb",
    "gb", "tb", "kib", "mib", "gib", "%", "rows", "million", "billion", "req/s", "rps", "qps",
];

/// How many measured values (a number with its unit, joined or apart) a sentence states.
pub(crate) fn stated_values(sentence: &str) -> usize {
    let words: Vec<&str> = sentence
        .split(|c: char| c.is_whitespace() || "(),;:`~≈".contains(c))
        .filter(|word| !word.is_empty())
        .collect();
    let unit = |text: &str| {
        let bare = text.trim_end_matches(['.', '!', '?']).to_lowercase();
        UNITS.contains(&bare.as_str())
    };
    words
        .iter()
        .enumerate()
        .filter(|(index, word)| {
            let digits = word
                .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == ','))
                .unwrap_or(word.len());
            digits > 0
                && word.starts_with(|c: char| c.is_ascii_digit())
                && if digits < word.len() {
                    // `12.4s`, `48.2M`, `840ms`.
                    unit(&word[digits..]) || ["m", "k"].contains(&&word[digits..])
                } else {
                    words.get(index + 1).is_some_and(|next| unit(next))
                }
        })
        .count()
}

/// The assistant's own statements of what was measured (`the report drops from 12.4 s to 1.9 s`,
/// `events is 412 GB, about 1.31 billion rows`): in a message stating three measured values or
/// more, its sentences that state one, joined to a line; the four most recent such messages.
pub(crate) fn stated_measurements(assistant_texts: &[&str]) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for text in assistant_texts {
        let measuring: Vec<String> = crate::extract::sentences(text)
            .into_iter()
            .filter(|sentence| {
                !sentence.starts_with(['|', '`', '#', '-']) && stated_values(sentence) > 0
            })
            .collect();
        let values: usize = measuring
            .iter()
            .map(|sentence| stated_values(sentence))
            .sum();
        if values >= 3 {
            found.push(crate::offline::text::clip(
                &measuring.join(" ").replace("**", ""),
                420,
            ));
        }
    }
    let skip = found.len().saturating_sub(4);
    found.split_off(skip)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timed_build_keeps_its_timings_and_sizes() {
        let output = "✓ 12 modules transformed.\n✓ built in 4.52s\n\nreal\t0m5.210s\n1.8M\tout";
        let command = "time npx esbuild-run && du -sh out";
        assert!(measures(command, output));
        assert_eq!(
            measured_values(command, output).as_deref(),
            Some("built in 4.52s, real 0m5.210s, out 1.8M")
        );
    }

    #[test]
    fn a_count_and_a_tool_timing_apart_from_its_unit() {
        let output = "bundler 2.0 compiled with 1 warning in 7310 ms\n920K\tbuild\n12";
        let command = "npm run bundle && du -sh build && ls build/*.css | wc -l";
        assert!(measures(command, output));
        assert_eq!(
            measured_values(command, output).as_deref(),
            Some("compiled in 7310 ms, build 920K, wc -l 12")
        );
    }

    #[test]
    fn a_dev_server_start_is_a_measurement() {
        let output = "  DEVSRV v1.0  ready in 640 ms\n\n  ➜  Local:   http://localhost:4000/";
        assert!(measures("npx devsrv --port 4000", output));
        assert_eq!(
            measured_values("npx devsrv --port 4000", output).as_deref(),
            Some("ready in 640 ms")
        );
    }

    #[test]
    fn the_assistants_stated_measurements_are_kept() {
        let texts = [
            "Done: the cache is on. Tests pass.",
            "Before: the index is 3.2 GB, 90 million rows. After the rewrite p95 goes from 640 ms to 210ms. The reason is the planner.",
            "It took 2 s.",
        ];
        assert_eq!(
            stated_measurements(&texts),
            [
                "Before: the index is 3.2 GB, 90 million rows. After the rewrite p95 goes from 640 ms to 210ms."
            ]
        );
    }

    #[test]
    fn an_untimed_command_does_not_measure() {
        let output = "Finished `dev` profile in 3.2s\n2 passed";
        assert!(!measures("cargo test -p core", output));
        assert!(!measures("cargo timeout-check", output));
        assert_eq!(measured_values("time true", "nothing here"), None);
    }
}
