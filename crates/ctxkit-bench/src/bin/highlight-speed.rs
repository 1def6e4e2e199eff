//! `highlight-speed FILE LANGUAGE [REPEAT]`: colours FILE's code as the chat does (each line cut
//! into pieces by `ctxkit-highlight`, each piece written between its colour's escapes), REPEAT
//! times (default 20), and prints `{"lines", "bytes", "medianMs", "outputBytes"}`. Its reference
//! side is `bench/side-by-side/pi-highlight.mjs` (Pi 1.6.0's `highlightCode`).

use std::time::Instant;

use anyhow::{Context, Result, bail};

fn main() -> Result<()> {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [file, language, rest @ ..] = arguments.as_slice() else {
        bail!("usage: highlight-speed FILE LANGUAGE [REPEAT]");
    };
    let repeat: usize = match rest.first() {
        Some(text) => text.parse().context("REPEAT is a count")?,
        None => 20,
    };
    let code = std::fs::read_to_string(file).with_context(|| format!("cannot read {file}"))?;
    let mut times = Vec::with_capacity(repeat);
    let mut output_bytes = 0;
    for _ in 0..repeat.max(1) {
        let started = Instant::now();
        let shown = painted(&code, language)?;
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        output_bytes = shown.iter().map(String::len).sum::<usize>();
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let measurement = serde_json::json!({
        "lines": code.split('\n').count(),
        "bytes": code.len(),
        "medianMs": (median * 100.0).round() / 100.0,
        "outputBytes": output_bytes,
    });
    #[expect(
        clippy::print_stdout,
        reason = "the measurement is this binary's output"
    )]
    {
        println!("{measurement}");
    }
    Ok(())
}

/// The code's lines as a terminal is sent them.
fn painted(code: &str, language: &str) -> Result<Vec<String>> {
    let Some(lines) = ctxkit_highlight::highlight(code, language) else {
        bail!("`{language}` is not a language ctxkit colours, or the file is over the limit");
    };
    Ok(lines
        .iter()
        .map(|pieces| {
            let mut line = String::new();
            for piece in pieces {
                // A colour per token as the chat sends it; the code's length is what counts.
                let code = if piece.token.is_some() { "35" } else { "39" };
                line.push_str("\x1b[");
                line.push_str(code);
                line.push('m');
                line.push_str(piece.text);
                line.push_str("\x1b[0m");
            }
            line
        })
        .collect())
}
