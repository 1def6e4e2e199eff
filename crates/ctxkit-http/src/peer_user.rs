//! Which local user opened a loopback connection. A server on 127.0.0.1 without a token is open to
//! every account of the machine, not only to the user who started it (a sweep, as `nobody`, listed
//! and read another user's sessions and ran commands as them through `serve --listen`). Linux lists
//! each TCP socket with its owner in `/proc/net/tcp` and `/proc/net/tcp6`; the client's end of a
//! loopback connection is the socket whose local address is the connection's peer and whose remote
//! address is the server's end.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

/// The user id owning the client's end of the loopback connection from `peer` to `local`; `None`
/// when it is not found (not loopback, not Linux, the tables unreadable).
pub fn loopback_peer_uid(local: SocketAddr, peer: SocketAddr) -> Option<u32> {
    let (local, peer) = (canonical(local), canonical(peer));
    if !peer.ip().is_loopback() {
        return None;
    }
    ["/proc/net/tcp", "/proc/net/tcp6"]
        .iter()
        .find_map(|table| {
            let text = std::fs::read_to_string(table).ok()?;
            owner_in_table(&text, peer, local)
        })
}

/// This process's effective user id (`/proc/self/status`); `None` when it cannot be read.
pub fn process_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("Uid:"))?;
    line.split_whitespace().nth(2)?.parse().ok()
}

/// Whether a loopback connection from `peer` to `local` was opened by this process's user or by
/// root (who may read that user's files anyway). Unknown: no.
pub fn opened_by_this_user(local: SocketAddr, peer: SocketAddr) -> bool {
    match (loopback_peer_uid(local, peer), process_uid()) {
        (Some(owner), Some(current)) => owner == current || owner == 0,
        (Some(_), None) | (None, _) => false,
    }
}

/// An IPv4 address mapped into IPv6 (`::ffff:127.0.0.1`, what a dual-stack socket reports) as the
/// IPv4 address `/proc/net/tcp` lists it by.
fn canonical(address: SocketAddr) -> SocketAddr {
    match address.ip() {
        IpAddr::V6(ip) => match ip.to_ipv4_mapped() {
            Some(v4) => SocketAddr::new(IpAddr::V4(v4), address.port()),
            None => address,
        },
        IpAddr::V4(_) => address,
    }
}

/// The `uid` column of the line of `text` (a `/proc/net/tcp*` table) whose local address is
/// `socket` and whose remote address is `remote`.
fn owner_in_table(text: &str, socket: SocketAddr, remote: SocketAddr) -> Option<u32> {
    text.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local_field, remote_field, uid) = (fields.get(1)?, fields.get(2)?, fields.get(7)?);
        let (listed, listed_remote) = (parse_address(local_field)?, parse_address(remote_field)?);
        (canonical(listed) == socket && canonical(listed_remote) == remote)
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// `0100007F:1F90` (IPv4) or 32 hex digits and a port (IPv6): the address as the kernel prints it,
/// each 32-bit word in the machine's byte order, the port as a number.
fn parse_address(field: &str) -> Option<SocketAddr> {
    let (address, port) = field.split_once(':')?;
    let port = u16::from_str_radix(port, 16).ok()?;
    let words: Option<Vec<[u8; 4]>> = (0..address.len() / 8)
        .map(|index| {
            let word = address.get(index * 8..index * 8 + 8)?;
            Some(u32::from_str_radix(word, 16).ok()?.to_ne_bytes())
        })
        .collect();
    let bytes: Vec<u8> = words?.concat();
    let ip = match bytes.len() {
        4 => IpAddr::V4(Ipv4Addr::new(bytes[0], bytes[1], bytes[2], bytes[3])),
        16 => {
            let octets: [u8; 16] = bytes.try_into().ok()?;
            IpAddr::V6(Ipv6Addr::from(octets))
        }
        _ => return None,
    };
    Some(SocketAddr::new(ip, port))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_addresses_are_read() {
        let (v4, v6) = if cfg!(target_endian = "little") {
            ("0100007F:1F90", "00000000000000000000000001000000:0050")
        } else {
            ("7F000001:1F90", "00000000000000000000000000000001:0050")
        };
        assert_eq!(parse_address(v4), Some("127.0.0.1:8080".parse().unwrap()));
        assert_eq!(parse_address(v6), Some("[::1]:80".parse().unwrap()));
        assert_eq!(parse_address("zz:1"), None);
    }

    /// A real loopback connection: its client end is found, owned by this process's user.
    #[test]
    fn a_connection_of_this_process_is_this_users() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (_accepted, peer) = listener.accept().unwrap();
        assert_eq!(peer, client.local_addr().unwrap());
        let local = listener.local_addr().unwrap();
        assert_eq!(loopback_peer_uid(local, peer), process_uid());
        assert!(opened_by_this_user(local, peer));
        // Another port names no socket: unknown, so no.
        let elsewhere = SocketAddr::new(peer.ip(), peer.port().wrapping_add(1));
        assert!(!opened_by_this_user(local, elsewhere));
    }

    /// Set in the child of [`a_connection_of_another_user_is_not_this_users`]: the address it
    /// connects to.
    const CONNECT_TO: &str = "CTXKIT_HTTP_TEST_CONNECT_TO";

    /// Run as root, the test runs itself again as `nobody` (65534) to connect: that connection is
    /// not this user's, and the server without a token refuses it. Run as another user, the child
    /// is that user, and its connection is.
    #[test]
    fn a_connection_of_another_user_is_not_this_users() {
        use std::io::Read as _;
        use std::os::unix::process::CommandExt as _;
        if let Ok(address) = std::env::var(CONNECT_TO) {
            let mut stream = std::net::TcpStream::connect(address).unwrap();
            // Open until the server has looked the connection up and closed it.
            let _ = stream.read(&mut [0u8; 1]);
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let local = listener.local_addr().unwrap();
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "--exact",
                "peer_user::tests::a_connection_of_another_user_is_not_this_users",
                "--test-threads=1",
            ])
            .env(CONNECT_TO, local.to_string())
            .stdout(std::process::Stdio::null());
        let root = process_uid() == Some(0);
        if root {
            child.uid(65_534).gid(65_534);
        }
        let mut child = child.spawn().unwrap();
        let (stream, peer) = listener.accept().unwrap();
        let owner = loopback_peer_uid(local, peer);
        let by_this_user = opened_by_this_user(local, peer);
        drop(stream);
        assert!(child.wait().unwrap().success());
        if root {
            assert_eq!(owner, Some(65_534));
            assert!(!by_this_user);
        } else {
            assert_eq!(owner, process_uid());
            assert!(by_this_user);
        }
    }

    /// The table's owner column is what decides.
    #[test]
    fn the_owner_column_is_read() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:D431 0100007F:1F90 01 00000000:00000000 00:00000000 00000000 65534        0 4242 1 0 20 4 30 10 -1\n";
        let table = if cfg!(target_endian = "little") {
            table.to_owned()
        } else {
            table.replace("0100007F", "7F000001")
        };
        let client: SocketAddr = "127.0.0.1:54321".parse().unwrap();
        let server: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(owner_in_table(&table, client, server), Some(65534));
        assert_eq!(owner_in_table(&table, server, client), None);
    }
}
