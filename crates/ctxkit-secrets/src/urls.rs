//! Credentials inside URLs (`https://user:token@host/repo`, `git:user:pass@host/path`): shown
//! nowhere, never named in a directory, never written to a project's settings (which are usually
//! committed), never in a tool result or a provider's error (through [`crate::redact`]). The one
//! reader of a URL's user information.

/// `text` with the user information of every URL in it (`scheme://userinfo@`, `git:userinfo@`)
/// replaced by `<redacted>`. A bare `git@` (the usual SSH user) is kept. Text without any is
/// returned as it is, uncopied (every line `ctxkit` prints passes here).
pub fn redact_credentials(text: &str) -> std::borrow::Cow<'_, str> {
    let found = userinfo_ranges(text);
    if found.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut result = String::with_capacity(text.len());
    let mut copied = 0;
    for range in found {
        result.push_str(&text[copied..range.start]);
        result.push_str("<redacted>");
        copied = range.end;
    }
    result.push_str(&text[copied..]);
    std::borrow::Cow::Owned(result)
}

/// The credentials the URLs in `text` hold, to redact wherever they appear on their own (a
/// base URL's password printed without its URL): each user information as written, and its
/// password part (after the first `:`) when it has one.
pub fn url_credentials(text: &str) -> Vec<String> {
    let mut credentials = Vec::new();
    for range in userinfo_ranges(text) {
        let userinfo = &text[range];
        credentials.push(userinfo.to_owned());
        if let Some((_, password)) = userinfo.split_once(':') {
            credentials.push(password.to_owned());
        }
    }
    credentials
}

/// Where the user information of each URL in `text` lies (`scheme://userinfo@`, `git:userinfo@`;
/// a bare `git@`, the usual SSH user, is not credentials), in order.
fn userinfo_ranges(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut found = Vec::new();
    // The search for the next URL resumes at `position`.
    let mut position = 0;
    while let Some((start, prefix_length)) = next_authority(&text[position..]) {
        let authority_start = position + start + prefix_length;
        let authority = &text[authority_start..];
        let end = authority.find(ends_authority).unwrap_or(authority.len());
        match authority[..end].rfind('@') {
            Some(at) if &authority[..at] != "git" && at > 0 => {
                found.push(authority_start..authority_start + at);
                position = authority_start + at;
            }
            Some(_) | None => position = authority_start,
        }
    }
    found
}

/// Whether `character` cannot be part of a URL's authority (RFC 3986: the path, query and
/// fragment start there, and the others are never in a URL), so a `user:pass@` is looked for
/// before it. A backslash ends it too: in JSON text, `https://host\nuser@example.com` is a URL
/// then a line break, not credentials.
fn ends_authority(character: char) -> bool {
    character.is_whitespace() || "/?#\\\"'<>`{}|^".contains(character)
}

/// Whether `text` holds credentials [`redact_credentials`] would hide.
pub fn has_credentials(text: &str) -> bool {
    redact_credentials(text) != text
}

/// The next `://` or `git:` (not followed by `//`): where it starts and its length.
fn next_authority(text: &str) -> Option<(usize, usize)> {
    // Every search stops at the first `://`: a later match could not come first (one that
    // straddles it is `…://`, which is not a candidate), and scanning past it on every call made
    // redacting a long line with many URLs (a `serve` view) quadratic.
    let full = text.find("://");
    let head = &text[..full.unwrap_or(text.len())];
    // A URL joined onto a path has lost one slash (`/cwd/https:/user:pass@host/…`).
    let collapsed = ["https:/", "http:/", "ssh:/"]
        .iter()
        .filter_map(|prefix| {
            head.match_indices(prefix)
                .find(|(index, _)| !text[index + prefix.len()..].starts_with('/'))
                .map(|(index, _)| (index, prefix.len()))
        })
        .min();
    let scheme = full
        .map(|index| (index, 3))
        .into_iter()
        .chain(collapsed)
        .min();
    let shorthand = head
        .match_indices("git:")
        .find(|(index, _)| !text[index + 4..].starts_with("//"))
        .map(|(index, _)| (index, 4));
    match (scheme, shorthand) {
        (Some(scheme), Some(shorthand)) => Some(if scheme.0 <= shorthand.0 {
            scheme
        } else {
            shorthand
        }),
        (found @ Some(_), None) | (None, found @ Some(_)) => found,
        (None, None) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credentials_of_urls_are_listed_with_their_passwords() {
        assert_eq!(
            url_credentials("base https://gwuser:hunter2pass@gw.example.com/v1 and git@host:x"),
            ["gwuser:hunter2pass", "hunter2pass"]
        );
        assert_eq!(url_credentials("https://token@github.com/x"), ["token"]);
        assert!(url_credentials("https://example.com").is_empty());
    }

    #[test]
    fn a_url_ends_at_its_path_query_fragment_or_an_escape() {
        let json = r#"{"text":"Docs at https://docs.example.com\nuser.email=alice@example.com"}"#;
        assert_eq!(redact_credentials(json), json);
        for kept in [
            "https://host?to=me@example.com",
            "https://host#me@example.com",
            "redis://{user}@{host}",
        ] {
            assert_eq!(redact_credentials(kept), kept);
        }
        assert_eq!(
            redact_credentials("https://me:pass@host?x=1"),
            "https://<redacted>@host?x=1"
        );
    }

    #[test]
    fn a_long_line_of_many_urls_is_redacted_in_linear_time() {
        // 80,000 URLs without credentials and one with: quadratic scanning took seconds at 20,000
        // (sixteen times that here), linear scanning takes milliseconds, so 10 s holds on a
        // loaded machine and still tells them apart.
        let mut line = "see https://example.com/a and ".repeat(80_000);
        line.push_str("http://user:pw@host/x");
        let started = std::time::Instant::now();
        let redacted = redact_credentials(&line);
        assert!(redacted.ends_with("http://<redacted>@host/x"));
        assert_eq!(
            redacted.len(),
            line.len() - "user:pw".len() + "<redacted>".len()
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
    }

    #[test]
    fn user_information_is_redacted_everywhere() {
        assert_eq!(
            redact_credentials(
                "Installed https://user:pass@host.example/repo and git:me:pw@h/p@v1"
            ),
            "Installed https://<redacted>@host.example/repo and git:<redacted>@h/p@v1"
        );
        assert_eq!(
            redact_credentials("\"baseUrl\": \"http://ghp_TOKEN@proxy:8080/v1\""),
            "\"baseUrl\": \"http://<redacted>@proxy:8080/v1\""
        );
        for kept in [
            "git@github.com:user/repo",
            "git:github.com/user/repo@v1",
            "https://github.com/user/repo",
            "ssh://git@host/repo",
            "npm:@scope/name@1.2.3",
        ] {
            assert_eq!(redact_credentials(kept), kept);
            assert!(!has_credentials(kept));
        }
        assert!(has_credentials("git:user:secret@host/path"));
        // Issue 33, item 15: a URL joined onto a path (one slash lost).
        assert_eq!(
            redact_credentials(
                "Path does not exist: `/w/https:/user:hunter2pass@example.com/r.git`"
            ),
            "Path does not exist: `/w/https:/<redacted>@example.com/r.git`"
        );
    }
}
