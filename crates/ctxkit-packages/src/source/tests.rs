//! Data-driven checks of source parsing and identity: every source form, the git table, and the
//! safety rules.

use std::path::Path;

use super::*;

#[derive(Debug)]
struct GitCase {
    input: &'static str,
    repo: &'static str,
    host: &'static str,
    path: &'static str,
    git_ref: Option<&'static str>,
}

const GIT_CASES: &[GitCase] = &[
    GitCase {
        input: "git:github.com/user/repo@v1",
        repo: "https://github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("v1"),
    },
    GitCase {
        input: "https://github.com/user/repo@v1",
        repo: "https://github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("v1"),
    },
    GitCase {
        input: "git:git@github.com:user/repo@v1",
        repo: "git@github.com:user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("v1"),
    },
    GitCase {
        input: "git:git@github.com:user/repo@v1.0.0",
        repo: "git@github.com:user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("v1.0.0"),
    },
    GitCase {
        input: "ssh://git@github.com/user/repo@v1",
        repo: "ssh://git@github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("v1"),
    },
    GitCase {
        input: "https://github.com/user/repo@feature/branch",
        repo: "https://github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: Some("feature/branch"),
    },
    GitCase {
        input: "https://github.com/user/repo.git",
        repo: "https://github.com/user/repo.git",
        host: "github.com",
        path: "user/repo",
        git_ref: None,
    },
    GitCase {
        input: "ssh://git@example.com:2222/team/repo.git@v3",
        repo: "ssh://git@example.com:2222/team/repo.git",
        host: "example.com",
        path: "team/repo",
        git_ref: Some("v3"),
    },
    GitCase {
        input: "git:example.com/group/sub/repo@main",
        repo: "https://example.com/group/sub/repo",
        host: "example.com",
        path: "group/sub/repo",
        git_ref: Some("main"),
    },
    GitCase {
        input: "git:localhost/a/b",
        repo: "https://localhost/a/b",
        host: "localhost",
        path: "a/b",
        git_ref: None,
    },
    GitCase {
        input: "https://gitlab.com/group/sub/project",
        repo: "https://gitlab.com/group/sub/project",
        host: "gitlab.com",
        path: "group/sub/project",
        git_ref: None,
    },
    GitCase {
        input: "https://bitbucket.org/user/repo",
        repo: "https://bitbucket.org/user/repo",
        host: "bitbucket.org",
        path: "user/repo",
        git_ref: None,
    },
    GitCase {
        input: "https://codeberg.org/user/repo@v2",
        repo: "https://codeberg.org/user/repo",
        host: "codeberg.org",
        path: "user/repo",
        git_ref: Some("v2"),
    },
    GitCase {
        input: "git:https://github.com/user/repo",
        repo: "https://github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: None,
    },
    // Fixed reference bugs (identity unchanged, clone URL usable).
    GitCase {
        input: "git://host.example/u/r",
        repo: "git://host.example/u/r",
        host: "host.example",
        path: "u/r",
        git_ref: None,
    },
    GitCase {
        input: "git:git://host.example/u/r",
        repo: "git://host.example/u/r",
        host: "host.example",
        path: "u/r",
        git_ref: None,
    },
    GitCase {
        input: "https://github.com/u/r#v2",
        repo: "https://github.com/u/r",
        host: "github.com",
        path: "u/r",
        git_ref: Some("v2"),
    },
    GitCase {
        input: "https://github.com/u/r/tree/main",
        repo: "https://github.com/u/r",
        host: "github.com",
        path: "u/r",
        git_ref: Some("main"),
    },
    GitCase {
        input: "git:user/repo",
        repo: "https://github.com/user/repo",
        host: "github.com",
        path: "user/repo",
        git_ref: None,
    },
    GitCase {
        input: "HTTPS://GitHub.com/User/Repo",
        repo: "HTTPS://GitHub.com/User/Repo",
        host: "github.com",
        path: "User/Repo",
        git_ref: None,
    },
];

/// Every git source form (URLs, `git:` shorthands, scp-like, with or without a ref) parses into the
/// repository, host, path and ref in the table; a ref makes it pinned.
#[test]
fn git_sources_parse_into_repo_host_path_and_ref() {
    for case in GIT_CASES {
        let parsed = parse_git_url(case.input).unwrap_or_else(|| panic!("{case:?} not git"));
        assert_eq!(parsed.repo, case.repo, "{case:?}");
        assert_eq!(parsed.host, case.host, "{case:?}");
        assert_eq!(parsed.path, case.path, "{case:?}");
        assert_eq!(parsed.git_ref.as_deref(), case.git_ref, "{case:?}");
        assert_eq!(parsed.is_pinned(), case.git_ref.is_some(), "{case:?}");
    }
}

/// `npm:` sources parse into the package name and the spec npm is given, pinned when they carry a
/// version.
#[test]
fn npm_sources_parse_into_name_and_spec() {
    let cases: &[(&str, &str, &str, bool)] = &[
        (
            "npm:@scope/pkg@1.2.3",
            "@scope/pkg",
            "@scope/pkg@1.2.3",
            true,
        ),
        ("npm:pkg", "pkg", "pkg", false),
        // A tag or a range is no pin (`update` takes its newest); an exact version is.
        ("npm:pkg@latest", "pkg", "pkg@latest", false),
        ("npm: pkg@1", "pkg", "pkg@1", false),
        ("npm:pkg@1.2.3", "pkg", "pkg@1.2.3", true),
        ("npm:pkg@v1.2.3", "pkg", "pkg@v1.2.3", true),
        ("npm:@scope/pkg", "@scope/pkg", "@scope/pkg", false),
    ];
    for (input, name, spec, pinned) in cases {
        let PackageSource::Npm(npm) = PackageSource::parse(input).unwrap() else {
            panic!("{input} not npm");
        };
        assert_eq!(
            (npm.name.as_str(), npm.spec.as_str(), npm.is_pinned()),
            (*name, *spec, *pinned),
            "{input}"
        );
    }
    assert_eq!(
        PackageSource::parse("npm:@scope/pkg@1.2.3")
            .unwrap()
            .identity(Path::new("/c"), Path::new("/h")),
        "npm:@scope/pkg"
    );
}

/// A source without `npm:`, `git:` or a URL scheme is a local path, however much it looks like a
/// repository (`github.com/user/repo`, `user/repo`, ` npm:pkg` after a space), and so is a `git:`
/// source whose host has no dot or an incomplete URL.
#[test]
fn sources_without_a_scheme_or_git_prefix_are_local_paths() {
    for input in [
        "./packages/agent-timers",
        "../packages/agent-timers",
        "github.com/user/repo",
        "user/repo",
        "some-name",
        "github:user/repo",
        "git:myhost/a/b",
        "  npm:pkg",
        "git:myhost.io/team",
    ] {
        assert!(
            matches!(PackageSource::parse(input).unwrap(), PackageSource::Local { ref path } if path == input),
            "{input}"
        );
    }
    for input in [
        "github.com/user/repo",
        "git@github.com:user/repo",
        "user/repo",
    ] {
        assert_eq!(parse_git_url(input), None, "{input}");
    }
}

/// The forms of one repository (protocols, `.git`, scp-like, a ref) share one identity; different
/// repositories do not.
#[test]
fn git_identity_ignores_protocol_suffix_and_ref() {
    let base = Path::new("/c");
    let home = Path::new("/h");
    for input in [
        "https://github.com/user/repo",
        "https://github.com/user/repo.git",
        "ssh://git@github.com/user/repo",
        "git:https://github.com/user/repo",
        "git:github.com/user/repo",
        "git:git@github.com:user/repo",
        "git:git@github.com:user/repo.git",
        "https://github.com/user/repo@v1.0.0",
    ] {
        assert_eq!(
            PackageSource::parse(input).unwrap().identity(base, home),
            "git:github.com/user/repo",
            "{input}"
        );
    }
    assert_ne!(
        PackageSource::parse("https://github.com/user/repo1")
            .unwrap()
            .identity(base, home),
        PackageSource::parse("git:git@github.com:user/repo2")
            .unwrap()
            .identity(base, home)
    );
}

/// A local source's identity is its path resolved against the scope's directory, so `./x` differs
/// between the user and the project.
#[test]
fn local_identity_is_the_path_resolved_against_the_scope() {
    let source = PackageSource::parse("./x").unwrap();
    let home = Path::new("/h");
    assert_eq!(
        source.identity(Path::new("/h/.ctxkit"), home),
        "local:/h/.ctxkit/x"
    );
    assert_eq!(
        source.identity(Path::new("/c/.ctxkit"), home),
        "local:/c/.ctxkit/x"
    );
    assert_eq!(source.identity(Path::new("/c"), home), "local:/c/x");
    assert_eq!(
        PackageSource::parse("./x/")
            .unwrap()
            .identity(Path::new("/c"), home),
        "local:/c/x"
    );
    assert_eq!(
        PackageSource::parse("~/x")
            .unwrap()
            .identity(Path::new("/c"), home),
        "local:/h/x"
    );
}

#[test]
fn unsafe_sources_are_rejected() {
    type Check = fn(&SourceError) -> bool;
    let cases: &[(&str, Check)] = &[
        ("", |error| matches!(error, SourceError::Empty)),
        ("npm:", |error| matches!(error, SourceError::Empty)),
        ("-rf", |error| {
            matches!(error, SourceError::LeadingDash { .. })
        }),
        ("npm:--global", |error| {
            matches!(error, SourceError::LeadingDash { .. })
        }),
        ("npm:@scope/-x", |error| {
            matches!(error, SourceError::LeadingDash { .. })
        }),
        ("git:github.com/user/repo@--upload-pack=x", |error| {
            matches!(error, SourceError::LeadingDash { .. })
        }),
        ("https://example.com/a/../../etc", |error| {
            matches!(error, SourceError::ParentComponent { .. })
        }),
        ("git:example.com/../x/y", |error| {
            matches!(error, SourceError::ParentComponent { .. })
        }),
        ("npm:../evil", |error| {
            matches!(error, SourceError::ParentComponent { .. })
        }),
        ("npm:pkg\n--global", |error| {
            matches!(error, SourceError::ControlCharacter { .. })
        }),
        ("./x\u{1b}[31m", |error| {
            matches!(error, SourceError::ControlCharacter { .. })
        }),
    ];
    for (input, check) in cases {
        let error = PackageSource::parse(input).unwrap_err();
        assert!(check(&error), "{input:?} → {error:?}");
        let message = error.to_string();
        assert!(!message.contains('\n'), "{message}");
    }
    // Relative local paths with `..` stay allowed.
    assert!(PackageSource::parse("../packages/x").is_ok());
}

#[test]
fn git_file_urls_need_the_prefix() {
    let git = parse_git_url("git:file:///srv/repos/team/ext.git@v2").unwrap();
    assert_eq!(git.repo, "file:///srv/repos/team/ext.git");
    assert_eq!(git.host, "file");
    assert_eq!(git.path, "srv/repos/team/ext");
    assert_eq!(git.git_ref.as_deref(), Some("v2"));
    assert_eq!(
        PackageSource::parse("git:file:///srv/repos/ext")
            .unwrap()
            .identity(Path::new("/w"), Path::new("/h")),
        "git:file/srv/repos/ext"
    );
    assert!(parse_git_url("file:///srv/repos/ext").is_none());
    assert!(matches!(
        PackageSource::parse("file:///srv/repos/ext").unwrap(),
        PackageSource::Local { .. }
    ));
    assert!(parse_git_url("git:file:///one").is_none());
    assert!(PackageSource::parse("git:file:///srv/../etc/x").is_err());
}

/// Issue 17, defects 8 and 9: npm version specs that are paths, `file:` or URLs, and credentials in
/// git shorthands that ended up in directory names.
#[test]
fn npm_specs_are_validated_whole_and_git_credentials_stay_out_of_the_host() {
    for bad in [
        "npm:foo@../../../../tmp/x",
        "npm:foo@file:/etc",
        "npm:foo@https://evil.example/x.tgz",
        "npm:foo@git+ssh://host/x",
        "npm:foo@/abs/path",
        "npm:pkg@",
        "npm:foo bar",
        "npm:@scope/",
    ] {
        assert!(
            matches!(
                PackageSource::parse(bad),
                Err(SourceError::InvalidNpmSpec { .. })
            ),
            "{bad}: {:?}",
            PackageSource::parse(bad)
        );
    }
    for good in [
        "npm:foo@^1.2.3",
        "npm:foo@>=1 <2",
        "npm:@scope/pkg@next",
        "npm:Foo.Bar_x",
    ] {
        assert!(PackageSource::parse(good).is_ok(), "{good}");
    }
    let PackageSource::Git(git) =
        PackageSource::parse("git:user:secret@host.example/team/repo").unwrap()
    else {
        panic!("not git");
    };
    assert_eq!(git.host, "host.example");
    assert!(!git.path.contains("secret"));
    assert!(git.repo.contains("user:secret@"), "cloning still uses them");
    // The one file spec kept: a packed tarball, extracted like a download.
    assert!(PackageSource::parse("npm:foo@file:/tmp/packed/foo-1.0.0.tgz").is_ok());
    assert!(PackageSource::parse("npm:foo@file:/tmp/../etc/x.tgz").is_err());
}

/// Issue 33, item 15: `https://user:hunter2pass@example.com/repo.git` was taken as a local path
/// (`//` collapsed to `/`) and the error line showed the password. Every URL form is a git source
/// or an error naming the source with its credentials redacted, never a local path.
#[test]
fn urls_are_git_sources_or_errors_never_local_paths() {
    let secret = "hunter2pass";
    for input in [
        "https://user:hunter2pass@example.com/repo.git",
        "https://user:hunter2pass@example.com/repo",
        "https://user:hunter2pass@example.com/repo.git@v1",
        "https://example.com/repo.git",
        "http://user:hunter2pass@example.com/repo.git",
        "http://example.com/repo@main",
        "ssh://user:hunter2pass@example.com/repo.git",
        "ssh://git@example.com/repo",
        "git://example.com/repo.git",
        "https://github.com/user",
        "https://user:hunter2pass@example.com",
        "git@github.com:user/repo",
        "git@example.com:team/repo.git@v2",
        "user:hunter2pass@example.com:team/repo.git",
    ] {
        match PackageSource::parse(input) {
            Ok(PackageSource::Local { .. }) => panic!("{input} was taken as a local path"),
            Ok(PackageSource::Npm(_)) => panic!("{input} was taken as npm"),
            Ok(PackageSource::Git(_)) => panic!("{input} has no owner/repo path"),
            Err(error) => {
                let message = error.to_string();
                assert!(!message.contains(secret), "{message}");
                assert!(
                    message.contains("is not a git repository URL"),
                    "{input}: {message}"
                );
            }
        }
    }
    for (input, repo, git_ref) in [
        (
            "https://user:hunter2pass@example.com/team/repo.git",
            "https://user:hunter2pass@example.com/team/repo.git",
            None,
        ),
        (
            "https://example.com/team/repo@v1",
            "https://example.com/team/repo",
            Some("v1"),
        ),
        (
            "http://example.com/team/repo.git",
            "http://example.com/team/repo.git",
            None,
        ),
        (
            "ssh://git@example.com/team/repo.git@main",
            "ssh://git@example.com/team/repo.git",
            Some("main"),
        ),
        (
            "git:git@example.com:team/repo.git",
            "git@example.com:team/repo.git",
            None,
        ),
        (
            "git:git@example.com:team/repo@v2",
            "git@example.com:team/repo",
            Some("v2"),
        ),
    ] {
        match PackageSource::parse(input) {
            Ok(PackageSource::Git(git)) => {
                assert_eq!(git.repo, repo, "{input}");
                assert_eq!(git.git_ref.as_deref(), git_ref, "{input}");
            }
            other => panic!("{input}: {other:?}"),
        }
    }
}

/// QA S2: `npm:/abs/np-1.0.0.tgz` (what `npm pack` hands a user; Pi 1.6 takes it) is refused with
/// the form ctxkit takes, the name guessed from the file name, instead of "not an npm package
/// name".
#[test]
fn a_tarball_without_its_name_is_refused_with_the_form_to_use() {
    for (source, expected) in [
        ("npm:/abs/np-1.0.0.tgz", "npm:np@file:/abs/np-1.0.0.tgz"),
        (
            "npm:./dist/my-tool-2.3.4-beta.1.tgz",
            "npm:my-tool@file:./dist/my-tool-2.3.4-beta.1.tgz",
        ),
        ("npm:/abs/packed.tar.gz", "npm:NAME@file:/abs/packed.tar.gz"),
    ] {
        match PackageSource::parse(source) {
            Err(SourceError::TarballWithoutName { suggestion, .. }) => {
                assert_eq!(suggestion, expected, "{source}");
            }
            other => panic!("{source}: {other:?}"),
        }
    }
    assert!(PackageSource::parse("npm:np@file:/abs/np-1.0.0.tgz").is_ok());
    assert!(matches!(
        PackageSource::parse("npm:foo@/abs/path"),
        Err(SourceError::InvalidNpmSpec { .. })
    ));
}

/// QA 2026-12-07: `npm:x@^1.0.0`, `@latest` and `@file:….tgz` never matched the installed
/// version as text, so each was installed again at every start. As in Pi 1.6: a range is checked
/// against the installed version, a tag or a tarball takes any.
#[test]
fn an_installed_npm_package_is_taken_when_its_version_is_within_the_entry() {
    let npm = |text: &str| match PackageSource::parse(text).unwrap() {
        PackageSource::Npm(npm) => npm,
        other @ (PackageSource::Git(_) | PackageSource::Local { .. }) => panic!("{other:?}"),
    };
    let cases = [
        ("npm:x@^1.0.0", Some("1.4.2"), true),
        ("npm:x@^1.0.0", Some("2.0.0"), false),
        ("npm:x@1.2.3", Some("1.2.3"), true),
        ("npm:x@1.2.3", Some("1.2.4"), false),
        ("npm:x@~1.2", Some("1.2.9"), true),
        ("npm:x@1.x || 3", Some("3.1.0"), true),
        ("npm:x@latest", Some("9.9.9"), true),
        ("npm:x@file:vendor/x-1.0.0.tgz", Some("1.0.0"), true),
        ("npm:x", Some("0.1.0"), true),
        ("npm:x", None, false),
        ("npm:x@^1", Some("not a version"), false),
    ];
    for (source, installed, accepted) in cases {
        assert_eq!(
            npm(source).accepts_installed(installed),
            accepted,
            "{source} {installed:?}"
        );
    }
}
