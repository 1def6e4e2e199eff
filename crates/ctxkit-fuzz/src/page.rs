//! A session file of any bytes exported as a web page (`ctxkit export`): a session holds what a
//! model and the files it read wrote, so its text is someone else's. Whatever it holds, the page
//! has exactly the template's script elements and comments (no string closes the data element or
//! opens another), the data element reads back as the data the page was built from, and a known
//! secret (`@SECRET@` in the input) is nowhere in it.

use ctxkit_session::Session;
use ctxkit_web::{PageOptions, Redactor, build_page_data, export_page};
use serde_json::Value;

/// The placeholder the input writes the secret as.
const SECRET_PLACEHOLDER: &str = "@SECRET@";
/// A key the user has (as `ctxkit export` reads it from the environment): never on the page.
const SECRET: &str = "fuzz-key-7c1e0b9a44d2f3";
/// Where the data element starts and ends in the template.
const DATA_OPEN: &str = r#"<script type="application/json" id="session-data">"#;
const DATA_CLOSE: &str = "</script>";

/// How often each tag that opens or closes an element the data must not add appears.
fn tag_counts(page: &str) -> [usize; 4] {
    let lower = page.to_ascii_lowercase();
    ["<script", "</script", "<!--", "<style"].map(|tag| lower.matches(tag).count())
}

fn options() -> PageOptions {
    let redactor = Redactor::new(vec![SECRET.to_owned()], &[]).unwrap();
    PageOptions::new("fuzzed session".to_owned(), redactor)
}

/// The page of a session of no entries: the template's own tags.
fn template_counts() -> [usize; 4] {
    thread_local! {
        static COUNTS: [usize; 4] = {
            let path = crate::scratch_path();
            let header = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-12-03T09:00:00.000Z","cwd":"/p"}"#;
            std::fs::write(&path, header).unwrap();
            let session = Session::open(&path).unwrap();
            let mut page = Vec::new();
            export_page(&session, &options(), &mut page).unwrap();
            tag_counts(&String::from_utf8(page).unwrap())
        };
    }
    COUNTS.with(|counts| *counts)
}

/// Exports `data` (with `@SECRET@` replaced) as a page; see the module's documentation.
pub fn session_page(data: &[u8]) {
    let expected = template_counts();
    let text = String::from_utf8_lossy(data).replace(SECRET_PLACEHOLDER, SECRET);
    let path = crate::scratch_path();
    std::fs::write(&path, text.as_bytes()).unwrap();
    let Ok(session) = Session::open(&path) else {
        return;
    };
    let options = options();
    let mut page = Vec::new();
    if export_page(&session, &options, &mut page).is_err() {
        return;
    }
    let page = String::from_utf8(page).expect("the page is UTF-8");
    assert_eq!(tag_counts(&page), expected, "the data added an element");
    let start = page.find(DATA_OPEN).expect("the data element") + DATA_OPEN.len();
    let end = start
        + page[start..]
            .find(DATA_CLOSE)
            .expect("the data element's end");
    // The secret is looked for as the page shows it: in the data's strings once decoded (its
    // escaped text may hold the secret's characters by chance: `\f` then `uzz-…`), and as
    // written everywhere else.
    assert!(
        !page[..start].contains(SECRET) && !page[end..].contains(SECRET),
        "the page shows the secret"
    );
    let embedded: Value = serde_json::from_str(&page[start..end]).expect("the data reads back");
    assert!(!holds_secret(&embedded), "the page's data holds the secret");
    let built = build_page_data(&session, &options).expect("the same data builds");
    assert!(embedded == built, "the page's data is not the data built");
}

/// Whether any string of `value`, or any key, holds the secret.
fn holds_secret(value: &Value) -> bool {
    match value {
        Value::String(text) => text.contains(SECRET),
        Value::Array(items) => items.iter().any(holds_secret),
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key.contains(SECRET) || holds_secret(value)),
        Value::Null | Value::Bool(_) | Value::Number(_) => false,
    }
}
