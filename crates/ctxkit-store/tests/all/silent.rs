//! A database that stops answering while its connections stay open (a frozen host, a network cut
//! the kernel has not noticed): every statement fails within its deadline instead of holding its
//! request, and with it a shutdown, for ever. The database is reached through a proxy on loopback
//! that can stop forwarding, as a SIGSTOPped host would.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use ctxkit_store::{PostgresStore, SessionStore as _, StoreError};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::backends::database_url;
use crate::suite::{entry_line, project, small_session};

/// A TCP forwarder whose traffic stops, both ways, while it is frozen; its connections stay open.
struct FreezableProxy {
    address: SocketAddr,
    frozen: watch::Sender<bool>,
}

impl FreezableProxy {
    async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (frozen, watching) = watch::channel(false);
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let server = TcpStream::connect(&upstream).await.unwrap();
                let (client_read, client_write) = client.into_split();
                let (server_read, server_write) = server.into_split();
                tokio::spawn(forward(client_read, server_write, watching.clone()));
                tokio::spawn(forward(server_read, client_write, watching.clone()));
            }
        });
        Self { address, frozen }
    }

    fn freeze(&self, frozen: bool) {
        self.frozen.send_replace(frozen);
    }
}

/// Copies `from` to `to`, holding what it read while frozen.
async fn forward(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut frozen: watch::Receiver<bool>,
) {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let Ok(read) = from.read(&mut buffer).await else {
            return;
        };
        if read == 0 {
            return;
        }
        if frozen.wait_for(|frozen| !frozen).await.is_err() {
            return;
        }
        if to.write_all(&buffer[..read]).await.is_err() {
            return;
        }
    }
}

/// `url` with its host and port replaced by `address`.
fn through(url: &str, address: SocketAddr) -> (String, String) {
    let mut parsed = url::Url::parse(url).unwrap();
    let upstream = format!(
        "{}:{}",
        parsed.host_str().unwrap(),
        parsed.port().unwrap_or(5432)
    );
    parsed.set_host(Some(&address.ip().to_string())).unwrap();
    parsed.set_port(Some(address.port())).unwrap();
    (parsed.to_string(), upstream)
}

#[tokio::test]
async fn a_silent_database_fails_each_statement_within_its_deadline() {
    let Some(url) = database_url() else { return };
    let (_, upstream) = through(&url, "127.0.0.1:1".parse().unwrap());
    let proxy = FreezableProxy::start(upstream).await;
    let (proxied, _) = through(&url, proxy.address);
    let store = PostgresStore::connect(&proxied).await.unwrap();
    let id = small_session(&store, &project(), 1).await;
    let lease = store
        .acquire(&id, "instance-1", Duration::from_secs(60))
        .await
        .unwrap();

    proxy.freeze(true);
    let started = Instant::now();
    let line = entry_line("e1", Some("e0"), "while the database is silent");
    let appended = tokio::time::timeout(
        Duration::from_secs(30),
        store.append(&lease, &[line], Duration::from_secs(60)),
    )
    .await
    .expect("the append is answered while the database stays silent");
    assert!(
        matches!(appended, Err(StoreError::Unresponsive { .. })),
        "{appended:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    let released = tokio::time::timeout(Duration::from_secs(30), store.release(&lease)).await;
    assert!(
        matches!(released, Ok(Err(StoreError::Unresponsive { .. }))),
        "{released:?}"
    );

    // Once the database answers again, so does the store.
    proxy.freeze(false);
    store.check().await.unwrap();
}
