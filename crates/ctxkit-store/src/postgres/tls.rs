//! TLS to the database, chosen by the store URL's `sslmode` and `sslrootcert` (libpq's names).
//!
//! Without `sslmode` (or with `disable`) the connection is plain TCP, as before TLS was supported.
//! `require`, `verify-ca` and `verify-full` all encrypt and verify the server: its certificate
//! must chain to a trusted root and name the URL's host. libpq's `require` checks neither and its
//! `verify-ca` skips the name; ctxkit sends sessions (people's code, their conversations) only to a
//! server it has verified. The roots are the file `sslrootcert` names (PEM; a private CA such as a
//! cloud provider's), else the Mozilla roots built in (`sslrootcert=system` says so). `sslcert` and
//! `sslkey` (PEM, together) give a client certificate for a server that asks for one; the key file
//! must be readable by its owner only, as libpq requires. `prefer` and `allow` are refused: they
//! fall back to plain text without telling anyone. Each file is named by an absolute path (ctxkit
//! runs in a project, maybe a cloned one: a relative `sslrootcert=ca.pem` would trust the CA a
//! repository commits) and read as a settings file is (`ctxkit_jail::read_regular`: a regular file
//! of at most [`MAX_TLS_FILE_BYTES`], never waiting on a FIFO).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Result, StoreError};

/// How a store URL asks to connect.
#[derive(Debug)]
pub(crate) struct Connection {
    /// The driver's settings (ctxkit's own parameters taken out).
    pub(crate) config: tokio_postgres::Config,
    pub(crate) tls: Tls,
}

/// Plain TCP, or TLS verified against these roots.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Tls {
    Plain,
    Verified(Verified),
}

/// Verified TLS: the server's roots, and this client's certificate if it has one.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Verified {
    pub(crate) roots: Roots,
    pub(crate) client: Option<ClientIdentity>,
}

/// The PEM files of a client certificate (its chain) and its private key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ClientIdentity {
    pub(crate) certificate: PathBuf,
    pub(crate) key: PathBuf,
}

/// Where the trusted roots come from.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Roots {
    BuiltIn,
    File(PathBuf),
}

/// Reads `url` (a `postgres://` URL) without touching any file: its driver settings and its TLS.
pub(crate) fn read_url(url: &str) -> Result<Connection> {
    let invalid = |reason: String| StoreError::InvalidUrl {
        url: crate::url::redact_url(url),
        reason,
    };
    let mut parsed = url::Url::parse(url).map_err(|error| invalid(error.to_string()))?;
    let mut mode = None;
    let mut files = TlsFiles::default();
    // The other parameters are kept as written (re-encoding them would change what the driver
    // reads: it does not take `+` for a space).
    let mut kept: Vec<&str> = Vec::new();
    let query = parsed.query().unwrap_or("").to_owned();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let mut decoded = url::form_urlencoded::parse(pair.as_bytes());
        match decoded.next() {
            Some((key, value)) if key == "sslmode" => mode = Some(value.into_owned()),
            Some((key, value)) if key == "sslrootcert" => files.root = Some(value.into_owned()),
            Some((key, value)) if key == "sslcert" => files.certificate = Some(value.into_owned()),
            Some((key, value)) if key == "sslkey" => files.key = Some(value.into_owned()),
            _ => kept.push(pair),
        }
    }
    let tls = choose(mode.as_deref(), files).map_err(invalid)?;
    let driver_mode = match tls {
        Tls::Plain => "sslmode=disable",
        Tls::Verified(_) => "sslmode=require",
    };
    kept.push(driver_mode);
    parsed.set_query(Some(&kept.join("&")));
    let config = parsed
        .as_str()
        .parse::<tokio_postgres::Config>()
        .map_err(|error| invalid(crate::error::describe(&error)))?;
    Ok(Connection { config, tls })
}

/// The files a URL names for TLS (`sslrootcert`, `sslcert`, `sslkey`).
#[derive(Debug, Default)]
struct TlsFiles {
    root: Option<String>,
    certificate: Option<String>,
    key: Option<String>,
}

fn choose(mode: Option<&str>, files: TlsFiles) -> std::result::Result<Tls, String> {
    let verified = match mode {
        None | Some("disable") => false,
        Some("require" | "verify-ca" | "verify-full") => true,
        Some(fallback @ ("prefer" | "allow")) => {
            return Err(format!(
                "`sslmode={fallback}` falls back to plain text unseen: use `sslmode=require` \
                 (encrypted and verified; `sslrootcert=FILE` for a private CA) or leave it out \
                 for plain TCP"
            ));
        }
        Some(other) => {
            return Err(format!(
                "unknown `sslmode={other}` (disable, require, verify-ca or verify-full)"
            ));
        }
    };
    if !verified {
        return match [&files.root, &files.certificate, &files.key] {
            [None, None, None] => Ok(Tls::Plain),
            _ => Err("`sslrootcert`, `sslcert` and `sslkey` are read only with \
                      `sslmode=require`, `verify-ca` or `verify-full`"
                .to_owned()),
        };
    }
    let roots = match files.root {
        None => Roots::BuiltIn,
        Some(file) if file == "system" => Roots::BuiltIn,
        Some(file) if file.is_empty() => return Err("`sslrootcert` is empty".to_owned()),
        Some(file) => Roots::File(absolute("sslrootcert", file)?),
    };
    let client = match (files.certificate, files.key) {
        (None, None) => None,
        (Some(certificate), Some(key)) if !certificate.is_empty() && !key.is_empty() => {
            Some(ClientIdentity {
                certificate: absolute("sslcert", certificate)?,
                key: absolute("sslkey", key)?,
            })
        }
        _ => return Err("a client certificate needs both `sslcert` and `sslkey`".to_owned()),
    };
    Ok(Tls::Verified(Verified { roots, client }))
}

/// The file a TLS parameter names, when it is an absolute path: ctxkit runs in the user's
/// project, which may be a cloned one, and a relative name would be read there.
fn absolute(parameter: &str, file: String) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(file);
    if path.is_absolute() {
        return Ok(path);
    }
    Err(format!(
        "`{parameter}={}` is not an absolute path: it would be read in the directory ctxkit runs \
         in, a project's, whose files are not the user's choice; name the file from `/`",
        path.display()
    ))
}

/// The largest certificate or key file read (PEM; a bundle of every public root is under 300 KiB).
pub(crate) const MAX_TLS_FILE_BYTES: u64 = 1024 * 1024;

/// The whole of a TLS file: a regular file of at most [`MAX_TLS_FILE_BYTES`], opened without
/// waiting (a FIFO or a device is refused, never read), and not empty; `parameter` names it in the
/// error.
fn read_tls_file(parameter: &'static str, path: &Path) -> Result<Vec<u8>> {
    let problem = |problem: String| tls_file(parameter, path, problem);
    let (bytes, size) = ctxkit_jail::read_regular(path, MAX_TLS_FILE_BYTES)
        .map_err(|error| problem(unreadable_because(&error)))?;
    if u64::try_from(bytes.len()).unwrap_or(u64::MAX) < size {
        return Err(problem(format!(
            "it is larger than {MAX_TLS_FILE_BYTES} bytes"
        )));
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(problem("the file is empty".to_owned()));
    }
    Ok(bytes)
}

fn tls_file(parameter: &'static str, path: &Path, problem: String) -> StoreError {
    StoreError::TlsFile {
        parameter,
        path: path.to_owned(),
        problem,
    }
}

/// Why a TLS file could not be read, without repeating its path.
fn unreadable_because(error: &ctxkit_jail::JailError) -> String {
    if let ctxkit_jail::JailError::Io { source, .. } = error {
        io_problem(source)
    } else {
        error.to_string()
    }
}

fn io_problem(error: &std::io::Error) -> String {
    let kind = error.kind();
    if kind == std::io::ErrorKind::NotFound {
        "there is no such file".to_owned()
    } else if kind == std::io::ErrorKind::PermissionDenied {
        "ctxkit may not read it (permission denied)".to_owned()
    } else {
        error.to_string()
    }
}

/// Why a file that should hold PEM certificates yielded none: PEM of another kind (a key), binary
/// (a DER certificate), or text without a certificate.
fn why_no_certificate(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let label = text.lines().find_map(|line| {
        line.trim()
            .strip_prefix("-----BEGIN ")
            .and_then(|rest| rest.strip_suffix("-----"))
    });
    match label {
        Some(label) => {
            format!("it holds a PEM `{label}`, not a certificate (`-----BEGIN CERTIFICATE-----`)")
        }
        None if std::str::from_utf8(bytes).is_err() => "it is binary, not PEM text (a DER \
             certificate? `openssl x509 -inform der -in FILE -out ca.pem` converts one)"
            .to_owned(),
        None => "it holds no PEM certificate (no `-----BEGIN CERTIFICATE-----` line)".to_owned(),
    }
}

/// The connector for verified TLS: the roots read (a file's certificates, or the built-in ones),
/// and the client's certificate and key when it has them.
pub(crate) fn connector(verified: &Verified) -> Result<MakeRustlsConnect> {
    let mut store = rustls::RootCertStore::empty();
    match &verified.roots {
        Roots::BuiltIn => store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
        Roots::File(path) => add_file_roots(&mut store, path)?,
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|error| StoreError::Tls {
            reason: error.to_string(),
        })?
        .with_root_certificates(store);
    let config = match &verified.client {
        None => config.with_no_client_auth(),
        Some(identity) => {
            let (chain, key) = read_identity(identity)?;
            config
                .with_client_auth_cert(chain, key)
                .map_err(|error| StoreError::Tls {
                    reason: format!(
                        "the client certificate `{}` and key `{}` do not go together: {error}",
                        identity.certificate.display(),
                        identity.key.display()
                    ),
                })?
        }
    };
    Ok(MakeRustlsConnect::new(config))
}

type Identity = (
    Vec<rustls::pki_types::CertificateDer<'static>>,
    rustls::pki_types::PrivateKeyDer<'static>,
);

/// The client's certificate chain and private key; a key others may read is refused.
fn read_identity(identity: &ClientIdentity) -> Result<Identity> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let key_path = &identity.key;
    let key_problem = |problem: String| tls_file("sslkey", key_path, problem);
    let mode = std::fs::metadata(key_path)
        .map_err(|error| key_problem(io_problem(&error)))?
        .permissions();
    if std::os::unix::fs::PermissionsExt::mode(&mode) & 0o077 != 0 {
        return Err(key_problem(
            "the private key is readable by others; `chmod 600` it".to_owned(),
        ));
    }
    let key_bytes = read_tls_file("sslkey", key_path)?;
    let key = PrivateKeyDer::from_pem_slice(&key_bytes)
        .map_err(|error| key_problem(format!("it holds no PEM private key ({error})")))?;
    let path = &identity.certificate;
    let bytes = read_tls_file("sslcert", path)?;
    let chain = CertificateDer::pem_slice_iter(&bytes)
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|error| tls_file("sslcert", path, format!("it is not valid PEM: {error}")))?;
    if chain.is_empty() {
        return Err(tls_file("sslcert", path, why_no_certificate(&bytes)));
    }
    Ok((chain, key))
}

fn add_file_roots(store: &mut rustls::RootCertStore, path: &Path) -> Result<()> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let problem = |problem: String| tls_file("sslrootcert", path, problem);
    let bytes = read_tls_file("sslrootcert", path)?;
    let mut added = 0;
    for certificate in CertificateDer::pem_slice_iter(&bytes) {
        let certificate =
            certificate.map_err(|error| problem(format!("it is not valid PEM: {error}")))?;
        store
            .add(certificate)
            .map_err(|error| problem(format!("it holds a certificate that is no CA's: {error}")))?;
        added += 1;
    }
    if added == 0 {
        return Err(problem(why_no_certificate(&bytes)));
    }
    Ok(())
}

/// Whether a connection failed for the server's certificate (rustls's words, under the driver's).
pub(crate) fn is_certificate_refusal(reason: &str) -> bool {
    reason.contains("invalid peer certificate")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls_of(url: &str) -> std::result::Result<Tls, String> {
        read_url(url)
            .map(|connection| connection.tls)
            .map_err(|error| error.to_string())
    }

    #[test]
    fn no_sslmode_is_plain_and_the_driver_is_told_so() {
        let connection =
            read_url("postgres://u@db.example/x?application_name=a%20b&options=-c%20x%3Dy")
                .unwrap();
        assert_eq!(connection.tls, Tls::Plain);
        assert_eq!(connection.config.get_options(), Some("-c x=y"));
        assert_eq!(
            connection.config.get_ssl_mode(),
            tokio_postgres::config::SslMode::Disable
        );
        assert_eq!(connection.config.get_application_name(), Some("a b"));
    }

    #[test]
    fn every_verifying_mode_verifies_against_the_named_roots() {
        for mode in ["require", "verify-ca", "verify-full"] {
            let connection = read_url(&format!(
                "postgres://u@db/x?sslmode={mode}&sslrootcert=/ca.pem"
            ))
            .unwrap();
            assert_eq!(
                connection.tls,
                Tls::Verified(Verified {
                    roots: Roots::File(PathBuf::from("/ca.pem")),
                    client: None
                })
            );
            assert_eq!(
                connection.config.get_ssl_mode(),
                tokio_postgres::config::SslMode::Require
            );
        }
        let built_in = || {
            Tls::Verified(Verified {
                roots: Roots::BuiltIn,
                client: None,
            })
        };
        assert_eq!(
            tls_of("postgres://u@db/x?sslmode=require&sslrootcert=system"),
            Ok(built_in())
        );
        assert_eq!(
            tls_of("postgres://u@db/x?sslmode=verify-full"),
            Ok(built_in())
        );
        assert_eq!(
            tls_of("postgres://u@db/x?sslmode=require&sslcert=/c.pem&sslkey=/k.pem"),
            Ok(Tls::Verified(Verified {
                roots: Roots::BuiltIn,
                client: Some(ClientIdentity {
                    certificate: PathBuf::from("/c.pem"),
                    key: PathBuf::from("/k.pem"),
                }),
            }))
        );
    }

    #[test]
    fn a_silent_fallback_or_a_stray_root_file_is_refused_with_the_way_out() {
        let prefer = tls_of("postgres://u:secret@db/x?sslmode=prefer").unwrap_err();
        assert!(prefer.contains("sslmode=require"), "{prefer}");
        assert!(!prefer.contains("secret"), "{prefer}");
        let unknown = tls_of("postgres://u@db/x?sslmode=strict").unwrap_err();
        assert!(unknown.contains("verify-full"), "{unknown}");
        let stray = tls_of("postgres://u@db/x?sslrootcert=/ca.pem").unwrap_err();
        assert!(stray.contains("sslmode=require"), "{stray}");
        let half = tls_of("postgres://u@db/x?sslmode=require&sslcert=/c.pem").unwrap_err();
        assert!(half.contains("both `sslcert` and `sslkey`"), "{half}");
    }

    fn verified_by(roots: Roots, client: Option<ClientIdentity>) -> Verified {
        Verified { roots, client }
    }

    #[test]
    fn a_root_file_without_certificates_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("ca.pem");
        std::fs::write(&file, "not a certificate\n").unwrap();
        let error = connector(&verified_by(Roots::File(file.clone()), None))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("no PEM certificate"), "{error}");
        assert!(error.contains(&file.display().to_string()), "{error}");
        let missing = connector(&verified_by(Roots::File(dir.path().join("gone.pem")), None))
            .err()
            .unwrap()
            .to_string();
        assert!(missing.contains("gone.pem"), "{missing}");
    }

    /// A bad `sslrootcert` file was named with its path said twice and a hint about the server's
    /// certificate: the error says which parameter's file it is and what is wrong with it.
    #[test]
    fn a_bad_root_file_says_what_is_wrong_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let key =
            "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n";
        let cases: [(&str, &[u8], &str); 5] = [
            ("empty.pem", b"", "the file is empty"),
            ("blank.pem", b"\n  \n", "the file is empty"),
            (
                "text.pem",
                b"hello\n",
                "no `-----BEGIN CERTIFICATE-----` line",
            ),
            (
                "key.pem",
                key.as_bytes(),
                "a PEM `PRIVATE KEY`, not a certificate",
            ),
            (
                "ca.der",
                &[0x30, 0x82, 0x01, 0xff, 0xa0],
                "binary, not PEM text",
            ),
        ];
        for (name, contents, problem) in cases {
            let file = dir.path().join(name);
            std::fs::write(&file, contents).unwrap();
            let error = connector(&verified_by(Roots::File(file.clone()), None))
                .err()
                .unwrap();
            let StoreError::TlsFile {
                parameter, path, ..
            } = &error
            else {
                panic!("{name}: {error:?}");
            };
            assert_eq!((*parameter, path), ("sslrootcert", &file));
            let text = error.to_string();
            assert!(text.contains(problem), "{name}: {text}");
            assert_eq!(text.matches(name).count(), 1, "{text}");
        }
        let gone = dir.path().join("gone.pem");
        let error = connector(&verified_by(Roots::File(gone.clone()), None))
            .err()
            .unwrap()
            .to_string();
        let expected = format!(
            "`sslrootcert` file `{}`: there is no such file",
            gone.display()
        );
        assert!(error.ends_with(&expected), "{error}");
    }

    #[test]
    fn a_client_key_others_may_read_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("client.key");
        std::fs::write(&key, "-----BEGIN PRIVATE KEY-----\n").unwrap();
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
        let identity = ClientIdentity {
            certificate: dir.path().join("client.crt"),
            key: key.clone(),
        };
        let error = connector(&verified_by(Roots::BuiltIn, Some(identity)))
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("chmod 600"), "{error}");
    }

    /// The process runs in a project, maybe a cloned one: a relative file would be the project's
    /// (`sslrootcert=ca.pem` trusting whatever CA a repository commits).
    #[test]
    fn a_relative_tls_file_is_refused_before_anything_reads_it() {
        for url in [
            "postgres://u:secret@db/x?sslmode=require&sslrootcert=ca.pem",
            "postgres://u:secret@db/x?sslmode=verify-full&sslrootcert=./certs/ca.pem",
            "postgres://u:secret@db/x?sslmode=require&sslcert=client.crt&sslkey=/k.pem",
            "postgres://u:secret@db/x?sslmode=require&sslcert=/c.pem&sslkey=../client.key",
        ] {
            let error = tls_of(url).unwrap_err();
            assert!(error.contains("absolute path"), "{url}: {error}");
            assert!(!error.contains("secret"), "{error}");
        }
    }

    /// A FIFO would wait for a writer forever, a device or a huge file would be read whole.
    #[test]
    fn a_tls_file_that_is_no_regular_file_or_too_large_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("ca.pem");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let huge = dir.path().join("huge.pem");
        std::fs::File::create(&huge)
            .unwrap()
            .set_len(64 * 1024 * 1024)
            .unwrap();
        let key = dir.path().join("client.key");
        let made = std::process::Command::new("mkfifo")
            .arg(&key)
            .status()
            .unwrap();
        assert!(made.success());
        std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let cases = [
            (verified_by(Roots::File(fifo), None), "regular file"),
            (
                verified_by(Roots::File(PathBuf::from("/dev/zero")), None),
                "regular file",
            ),
            (verified_by(Roots::File(huge), None), "larger than"),
            (
                verified_by(
                    Roots::BuiltIn,
                    Some(ClientIdentity {
                        certificate: PathBuf::from("/dev/zero"),
                        key,
                    }),
                ),
                "regular file",
            ),
        ];
        for (verified, expected) in cases {
            let (sender, receiver) = std::sync::mpsc::channel();
            std::thread::spawn(move || {
                let _ = sender.send(connector(&verified).err().map(|error| error.to_string()));
            });
            let error = receiver
                .recv_timeout(std::time::Duration::from_secs(10))
                .expect("the connector answered within 10 s")
                .expect("an error");
            assert!(error.contains(expected), "{expected}: {error}");
        }
    }
}
