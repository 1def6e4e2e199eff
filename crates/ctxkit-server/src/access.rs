//! Who may use a listening server, as a request's headers say: its bearer token, and which
//! `Origin` a loopback server without a token takes (none, or the server's own address and port).
//!
//! A browser sends `Origin` with every WebSocket handshake, and a page on any site may open one to
//! a loopback address, so a request with an `Origin` is taken for a web page's unless it carries
//! the token. One origin is no page's: the address and port the connection reached, which this
//! server holds and where it serves no page (a DNS-rebinding page's origin names the attacker's
//! host, not an IP address). Programs that build an `Origin` from the URL they connect to send
//! exactly that: Python's websocket-client sends `http://127.0.0.1:PORT` by default, and was
//! refused. Another loopback name or address on the same port (`localhost`, or `[::1]` for a
//! server on 127.0.0.1) is not taken: another local account may serve a page there, and this
//! user's browser show it.

use std::net::{IpAddr, SocketAddr};

use hyper::Request;
use hyper::body::Incoming;
use hyper::header;

/// The token of an `Authorization: Bearer TOKEN` value; the scheme's name is case-insensitive
/// (RFC 7235: `bearer`, `BEARER`), spaces around the token are not part of it.
pub(crate) fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.trim_start().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
}

/// Whether the request may come from a web page: it has an `Origin` other than the address it
/// reached (`local`, unknown: any `Origin`), or more than one.
pub(crate) fn from_a_web_page(request: &Request<Incoming>, local: Option<SocketAddr>) -> bool {
    let mut origins = request.headers().get_all(header::ORIGIN).iter();
    let Some(origin) = origins.next() else {
        return false;
    };
    let own = match (origin.to_str(), local) {
        (Ok(origin), Some(local)) => is_own_address(origin, local),
        (Err(_), _) | (_, None) => false,
    };
    !own || origins.next().is_some()
}

/// Whether `origin`, an `Origin` header's value, is the server's own address `local`: scheme
/// `http` or `https`, the IP address itself (IPv6 in brackets) and its port (left out only when it
/// is the scheme's default), nothing more.
pub(crate) fn is_own_address(origin: &str, local: SocketAddr) -> bool {
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    let default_port = if scheme.eq_ignore_ascii_case("http") {
        80
    } else if scheme.eq_ignore_ascii_case("https") {
        443
    } else {
        return false;
    };
    let Some((address, port)) = split_authority(authority) else {
        return false;
    };
    let port = match port {
        None => default_port,
        // Digits only: `+80`, a path (`:80/`) or an empty port are not a port.
        Some(digits) if !digits.is_empty() && digits.bytes().all(|byte| byte.is_ascii_digit()) => {
            match digits.parse::<u16>() {
                Ok(port) => port,
                Err(_) => return false,
            }
        }
        Some(_) => return false,
    };
    address == local.ip() && port == local.port()
}

/// The IP address of an origin's authority and the text after its `:`, if any: `[v6]:port` or
/// `v4:port`. A name, user information or anything after the port is no address.
fn split_authority(authority: &str) -> Option<(IpAddr, Option<&str>)> {
    if let Some(bracketed) = authority.strip_prefix('[') {
        let (inside, rest) = bracketed.split_once(']')?;
        let address = inside.parse::<std::net::Ipv6Addr>().ok()?;
        let port = match rest {
            "" => None,
            rest => Some(rest.strip_prefix(':')?),
        };
        return Some((IpAddr::V6(address), port));
    }
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let address = host.parse::<std::net::Ipv4Addr>().ok()?;
    Some((IpAddr::V4(address), port))
}

#[cfg(test)]
mod tests {
    use super::is_own_address;

    #[test]
    fn only_the_servers_own_address_and_port_are_its_own() {
        let local = "127.0.0.1:8765".parse().unwrap();
        for own in [
            "http://127.0.0.1:8765",
            "https://127.0.0.1:8765",
            "HTTP://127.0.0.1:8765",
        ] {
            assert!(is_own_address(own, local), "{own}");
        }
        for other in [
            "http://127.0.0.1:8766",
            "http://127.0.0.1",
            "http://localhost:8765",
            "http://[::1]:8765",
            "http://127.0.0.2:8765",
            "http://127.0.0.1.evil.example:8765",
            "http://evil.example:8765",
            "http://user@127.0.0.1:8765",
            "http://127.0.0.1:8765/",
            "http://127.0.0.1:+8765",
            "http://127.0.0.1:",
            "http://127.0.0.1:08765x",
            "ws://127.0.0.1:8765",
            "ftp://127.0.0.1:8765",
            "127.0.0.1:8765",
            "null",
            "",
        ] {
            assert!(!is_own_address(other, local), "{other}");
        }
    }

    #[test]
    fn an_ipv6_server_and_a_default_port() {
        let local = "[::1]:8765".parse().unwrap();
        assert!(is_own_address("http://[::1]:8765", local));
        assert!(is_own_address("http://[0:0:0:0:0:0:0:1]:8765", local));
        assert!(!is_own_address("http://127.0.0.1:8765", local));
        assert!(!is_own_address("http://[::1]8765", local));
        let on_80 = "127.0.0.1:80".parse().unwrap();
        assert!(is_own_address("http://127.0.0.1", on_80));
        assert!(!is_own_address("https://127.0.0.1", on_80));
    }
}
