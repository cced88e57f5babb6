//! Which addresses webhook deliveries may reach: the one classification
//! used both when an endpoint is registered and when the client connects.
//!
//! An address is *internal* (refused) unless it is public unicast:
//!
//! - IPv4: `0.0.0.0/8`, `10.0.0.0/8`, `100.64.0.0/10`, `127.0.0.0/8`,
//!   `169.254.0.0/16`, `172.16.0.0/12`, `192.0.0.0/24`, `192.0.2.0/24`,
//!   `192.88.99.0/24` (6to4 relays), `192.168.0.0/16`, `198.18.0.0/15`,
//!   `198.51.100.0/24`, `203.0.113.0/24`, `224.0.0.0/4` (multicast) and
//!   `240.0.0.0/4` (reserved, broadcast included).
//! - IPv6 that embeds an IPv4 address is judged by that address:
//!   IPv4-mapped `::ffff:0:0/96`, the NAT64 well-known prefix
//!   `64:ff9b::/96` (last 32 bits) and 6to4 `2002::/16` (bits 16 to 48). A
//!   public IPv4 address stays public in these forms, as the packets go to
//!   it.
//! - Every other IPv6 address outside global unicast `2000::/3` is refused:
//!   loopback, unspecified, IPv4-compatible `::/96`, discard-only
//!   `100::/64`, local-use NAT64 `64:ff9b:1::/48` (where the IPv4 address
//!   sits depends on a local prefix length), unique-local `fc00::/7`,
//!   link-local `fe80::/10`, site-local `fec0::/10` and multicast
//!   `ff00::/8`.
//! - Inside `2000::/3`: the IETF protocol assignments `2001::/23` are
//!   refused whole. That covers Teredo `2001::/32` (a tunnel whose far end
//!   is an IPv4 client we cannot vouch for), benchmarking `2001:2::/48` and
//!   ORCHID `2001:10::/28` and `2001:20::/28`; no webhook endpoint lives
//!   there. The documentation ranges `2001:db8::/32` and `3fff::/20` are
//!   refused too.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The IPv4 networks deliveries must not reach: (network, prefix length).
const INTERNAL_V4: [(Ipv4Addr, u32); 15] = [
    (Ipv4Addr::new(0, 0, 0, 0), 8),
    (Ipv4Addr::new(10, 0, 0, 0), 8),
    (Ipv4Addr::new(100, 64, 0, 0), 10),
    (Ipv4Addr::new(127, 0, 0, 0), 8),
    (Ipv4Addr::new(169, 254, 0, 0), 16),
    (Ipv4Addr::new(172, 16, 0, 0), 12),
    (Ipv4Addr::new(192, 0, 0, 0), 24),
    (Ipv4Addr::new(192, 0, 2, 0), 24),
    (Ipv4Addr::new(192, 88, 99, 0), 24),
    (Ipv4Addr::new(192, 168, 0, 0), 16),
    (Ipv4Addr::new(198, 18, 0, 0), 15),
    (Ipv4Addr::new(198, 51, 100, 0), 24),
    (Ipv4Addr::new(203, 0, 113, 0), 24),
    (Ipv4Addr::new(224, 0, 0, 0), 4),
    (Ipv4Addr::new(240, 0, 0, 0), 4),
];

/// The parts of global unicast `2000::/3` deliveries must not reach.
const INTERNAL_GLOBAL_V6: [(Ipv6Addr, u32); 3] = [
    // IETF protocol assignments: Teredo, benchmarking, ORCHID, ...
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23),
    // Documentation.
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20),
];

/// Global unicast.
const GLOBAL_UNICAST: (Ipv6Addr, u32) = (Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3);

/// The NAT64 well-known prefix (RFC 6052).
const NAT64: (Ipv6Addr, u32) = (Ipv6Addr::new(0x64, 0xff9b, 0, 0, 0, 0, 0, 0), 96);

/// 6to4 (RFC 3056).
const SIX_TO_FOUR: (Ipv6Addr, u32) = (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16);

/// Whether an address is one deliveries must not reach (see the module
/// documentation for the ranges).
#[must_use]
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_internal_v4(v4),
        IpAddr::V6(v6) => is_internal_v6(v6),
    }
}

fn is_internal_v4(ip: Ipv4Addr) -> bool {
    INTERNAL_V4
        .iter()
        .any(|&(net, len)| in_network(u32::from(ip), u32::from(net), len))
}

fn is_internal_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return is_internal_v4(v4);
    }
    let bits = u128::from(ip);
    let within = |(net, len): (Ipv6Addr, u32)| in_network(bits, u128::from(net), len);
    let [_, _, a, b, c, d, ..] = ip.octets();
    let [.., w, x, y, z] = ip.octets();
    if within(NAT64) {
        return is_internal_v4(Ipv4Addr::new(w, x, y, z));
    }
    if within(SIX_TO_FOUR) {
        return is_internal_v4(Ipv4Addr::new(a, b, c, d));
    }
    !within(GLOBAL_UNICAST) || INTERNAL_GLOBAL_V6.into_iter().any(within)
}

/// Whether `ip` is in the network `net`/`len` (`len` at most the width of
/// `T`; a longer one matches only `net` itself).
fn in_network<T>(ip: T, net: T, len: u32) -> bool
where
    T: Prefix,
{
    ip.masked(len) == net.masked(len)
}

/// An address as an integer whose leading bits can be kept.
trait Prefix: Copy + PartialEq {
    /// The value with only its first `len` bits kept.
    fn masked(self, len: u32) -> Self;
}

impl Prefix for u32 {
    fn masked(self, len: u32) -> Self {
        let mask = u32::MAX
            .checked_shl(u32::BITS.saturating_sub(len))
            .unwrap_or(0);
        self & mask
    }
}

impl Prefix for u128 {
    fn masked(self, len: u32) -> Self {
        let mask = u128::MAX
            .checked_shl(u128::BITS.saturating_sub(len))
            .unwrap_or(0);
        self & mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts how every address of `table` is classified.
    fn check(table: &[(&str, bool)]) {
        for &(text, internal) in table {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(
                is_internal(ip),
                internal,
                "{text} should be {}",
                if internal { "internal" } else { "public" }
            );
        }
    }

    const INTERNAL: bool = true;
    const PUBLIC: bool = false;

    #[test]
    fn ipv4() {
        check(&[
            ("0.0.0.0", INTERNAL),
            ("0.255.255.255", INTERNAL),
            ("10.1.2.3", INTERNAL),
            ("100.64.0.1", INTERNAL),
            ("100.127.255.255", INTERNAL),
            ("127.0.0.1", INTERNAL),
            ("127.255.0.9", INTERNAL),
            ("169.254.169.254", INTERNAL),
            ("172.16.0.1", INTERNAL),
            ("172.31.255.255", INTERNAL),
            ("192.0.0.8", INTERNAL),
            ("192.0.2.1", INTERNAL),
            ("192.88.99.1", INTERNAL),
            ("192.168.1.1", INTERNAL),
            ("198.18.0.1", INTERNAL),
            ("198.19.255.255", INTERNAL),
            ("198.51.100.7", INTERNAL),
            ("203.0.113.9", INTERNAL),
            ("224.0.0.1", INTERNAL),
            ("239.255.255.250", INTERNAL),
            ("240.0.0.1", INTERNAL),
            ("255.255.255.255", INTERNAL),
            // Neighbours of the ranges, and well-known public addresses.
            ("1.1.1.1", PUBLIC),
            ("8.8.8.8", PUBLIC),
            ("9.255.255.255", PUBLIC),
            ("11.0.0.0", PUBLIC),
            ("93.184.216.34", PUBLIC),
            ("100.63.255.255", PUBLIC),
            ("100.128.0.0", PUBLIC),
            ("126.255.255.255", PUBLIC),
            ("128.0.0.0", PUBLIC),
            ("169.253.255.255", PUBLIC),
            ("172.15.255.255", PUBLIC),
            ("172.32.0.0", PUBLIC),
            ("192.0.1.1", PUBLIC),
            ("192.0.3.1", PUBLIC),
            ("192.88.98.1", PUBLIC),
            ("192.169.0.0", PUBLIC),
            ("198.17.255.255", PUBLIC),
            ("198.20.0.0", PUBLIC),
            ("198.51.101.1", PUBLIC),
            ("203.0.114.1", PUBLIC),
            ("223.255.255.255", PUBLIC),
        ]);
    }

    #[test]
    fn ipv6_embedding_ipv4() {
        check(&[
            // IPv4-mapped.
            ("::ffff:127.0.0.1", INTERNAL),
            ("::ffff:10.0.0.1", INTERNAL),
            ("::ffff:169.254.169.254", INTERNAL),
            ("::ffff:8.8.8.8", PUBLIC),
            // IPv4-compatible (deprecated): refused whatever it embeds.
            ("::127.0.0.1", INTERNAL),
            ("::10.0.0.1", INTERNAL),
            ("::8.8.8.8", INTERNAL),
            // NAT64, well-known prefix: judged by the last 32 bits.
            ("64:ff9b::7f00:1", INTERNAL),
            ("64:ff9b::a9fe:a9fe", INTERNAL),
            ("64:ff9b::c0a8:101", INTERNAL),
            ("64:ff9b::808:808", PUBLIC),
            // NAT64, local-use prefix: refused.
            ("64:ff9b:1::7f00:1", INTERNAL),
            ("64:ff9b:1::808:808", INTERNAL),
            // 6to4: judged by bits 16 to 48.
            ("2002:7f00:1::1", INTERNAL),
            ("2002:a00:1::1", INTERNAL),
            ("2002:c058:6301::1", INTERNAL),
            ("2002:808:808::1", PUBLIC),
            // Teredo (client 127.0.0.1, and client 8.8.8.8): refused.
            ("2001:0:4136:e378:8000:63bf:80ff:fffe", INTERNAL),
            ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", INTERNAL),
        ]);
    }

    #[test]
    fn ipv6() {
        check(&[
            ("::", INTERNAL),
            ("::1", INTERNAL),
            ("ff02::1", INTERNAL),
            ("ff0e::1", INTERNAL),
            ("fc00::1", INTERNAL),
            ("fd12:3456::1", INTERNAL),
            ("fe80::1", INTERNAL),
            ("febf::1", INTERNAL),
            ("fec0::1", INTERNAL),
            ("100::1", INTERNAL),
            ("2001:db8::1", INTERNAL),
            ("3fff::1", INTERNAL),
            ("3fff:fff::1", INTERNAL),
            ("2001:2::1", INTERNAL),
            ("2001:10::1", INTERNAL),
            ("2001:20::1", INTERNAL),
            ("2001:1ff::1", INTERNAL),
            ("::ffff:0:7f00:1", INTERNAL),
            ("1fff:ffff::1", INTERNAL),
            ("4000::1", INTERNAL),
            // Global unicast.
            ("2001:200::1", PUBLIC),
            ("2001:4860:4860::8888", PUBLIC),
            ("2001:db9::1", PUBLIC),
            ("2606:4700::1111", PUBLIC),
            ("2a00:1450:4001::1", PUBLIC),
            ("3ffe::1", PUBLIC),
            ("3fff:1000::1", PUBLIC),
        ]);
    }

    #[test]
    fn prefix_lengths_at_the_edges() {
        assert!(in_network(7_u32, 0, 0));
        assert!(in_network(7_u32, 7, 32));
        assert!(!in_network(7_u32, 6, 32));
        assert!(in_network(u128::MAX, 0, 0));
        assert!(!in_network(1_u128, 0, 128));
    }
}
