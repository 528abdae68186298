//! MPTCP options with their bytes on the wire (RFC 8684 §3, option kind 30, IANA subtypes of
//! §8): MP_CAPABLE v1 (§3.1, Figure 4), MP_JOIN for SYN, SYN/ACK and ACK (§3.2, Figures 5-7),
//! DSS (§3.3, Figure 9), ADD_ADDR (§3.4.1, Figure 15), REMOVE_ADDR (§3.4.2, Figure 16) and
//! MP_FASTCLOSE (§3.5, Figure 18).
//!
//! [`MptcpOpt::encode`] gives a [`celltcp_net::MptcpOption`] (the raw bytes a
//! [`celltcp_net::TcpSegment`] carries, counted in its header length and written to pcap) and
//! [`MptcpOpt::decode`] reads one back, refusing a malformed option with a one-line error.
//! Not encoded: MP_PRIO, MP_FAIL, MP_TCPRST and IPv6 addresses (celltcp is IPv4-only).

use celltcp_net::{Ipv4, MptcpOption};

/// TCP option kind of MPTCP (IANA, RFC 8684 §8).
pub const KIND: u8 = 30;

pub const SUBTYPE_CAPABLE: u8 = 0x0;
pub const SUBTYPE_JOIN: u8 = 0x1;
pub const SUBTYPE_DSS: u8 = 0x2;
pub const SUBTYPE_ADD_ADDR: u8 = 0x3;
pub const SUBTYPE_REMOVE_ADDR: u8 = 0x4;
pub const SUBTYPE_FASTCLOSE: u8 = 0x7;

/// MP_CAPABLE version 1 (RFC 8684 §3.1).
pub const VERSION: u8 = 1;
/// MP_CAPABLE flag A: checksum required (§3.1).
pub const FLAG_CHECKSUM: u8 = 0x80;
/// MP_CAPABLE flag H: HMAC-SHA256 (§3.1; the only algorithm defined).
pub const FLAG_HMAC_SHA256: u8 = 0x01;

/// The keys an MP_CAPABLE carries: none on the SYN, the responder's on the SYN/ACK, the
/// initiator's then the responder's on the third ACK (and on the first data, v1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CapableKeys {
    None,
    One(u64),
    Two { sender: u64, receiver: u64 },
}

/// A DSS mapping (RFC 8684 §3.3.1): `len` bytes of the data sequence space starting at `dsn`
/// are carried by the subflow from relative subflow sequence number `ssn` (the first payload
/// byte of a subflow is 1). A DATA_FIN occupies one octet of `len` (§3.3.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub dsn: u64,
    /// Send the DSN as 8 bytes (flag m); else its low 32 bits.
    pub dsn64: bool,
    pub ssn: u32,
    pub len: u16,
    /// The DSS checksum (§3.3.1), present when negotiated.
    pub checksum: Option<u16>,
}

/// A Data Sequence Signal (RFC 8684 §3.3, Figure 9).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dss {
    /// The DATA_ACK (flag A) and whether it is sent as 8 bytes (flag a).
    pub data_ack: Option<u64>,
    pub ack64: bool,
    pub mapping: Option<Mapping>,
    /// Flag F (§3.3.3): the mapping's last octet is the DATA_FIN.
    pub data_fin: bool,
}

/// One MPTCP option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MptcpOpt {
    /// MP_CAPABLE v1: flags (A..H), keys, and on the first data the data-level length (and
    /// checksum) of the implied mapping DSN = IDSN + 1, SSN = 1.
    Capable {
        flags: u8,
        keys: CapableKeys,
        data_len: Option<u16>,
        checksum: Option<u16>,
    },
    /// MP_JOIN on a SYN: the receiver's token and the sender's random nonce.
    JoinSyn {
        backup: bool,
        addr_id: u8,
        token: u32,
        nonce: u32,
    },
    /// MP_JOIN on a SYN/ACK: the leftmost 64 bits of the responder's HMAC and its nonce.
    JoinSynAck {
        backup: bool,
        addr_id: u8,
        hmac: u64,
        nonce: u32,
    },
    /// MP_JOIN on the third ACK: the leftmost 160 bits of the initiator's HMAC.
    JoinAck {
        hmac: [u8; 20],
    },
    Dss(Dss),
    /// ADD_ADDR (IPv4): `hmac` present unless this is the echo (flag E).
    AddAddr {
        echo: bool,
        addr_id: u8,
        addr: Ipv4,
        port: Option<u16>,
        hmac: Option<u64>,
    },
    /// REMOVE_ADDR with up to 8 address ids (`ids[..n]`).
    RemoveAddr {
        ids: [u8; 8],
        n: u8,
    },
    /// MP_FASTCLOSE with the receiver's key.
    FastClose {
        receiver_key: u64,
    },
}

impl MptcpOpt {
    /// The option's bytes, kind and length included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![KIND, 0];
        match *self {
            MptcpOpt::Capable {
                flags,
                keys,
                data_len,
                checksum,
            } => {
                b.push(SUBTYPE_CAPABLE << 4 | VERSION);
                b.push(flags);
                match keys {
                    CapableKeys::None => {}
                    CapableKeys::One(k) => b.extend_from_slice(&k.to_be_bytes()),
                    CapableKeys::Two { sender, receiver } => {
                        b.extend_from_slice(&sender.to_be_bytes());
                        b.extend_from_slice(&receiver.to_be_bytes());
                    }
                }
                if let Some(l) = data_len {
                    b.extend_from_slice(&l.to_be_bytes());
                    if let Some(c) = checksum {
                        b.extend_from_slice(&c.to_be_bytes());
                    }
                }
            }
            MptcpOpt::JoinSyn {
                backup,
                addr_id,
                token,
                nonce,
            } => {
                b.extend_from_slice(&[SUBTYPE_JOIN << 4 | backup as u8, addr_id]);
                b.extend_from_slice(&token.to_be_bytes());
                b.extend_from_slice(&nonce.to_be_bytes());
            }
            MptcpOpt::JoinSynAck {
                backup,
                addr_id,
                hmac,
                nonce,
            } => {
                b.extend_from_slice(&[SUBTYPE_JOIN << 4 | backup as u8, addr_id]);
                b.extend_from_slice(&hmac.to_be_bytes());
                b.extend_from_slice(&nonce.to_be_bytes());
            }
            MptcpOpt::JoinAck { hmac } => {
                b.extend_from_slice(&[SUBTYPE_JOIN << 4, 0]);
                b.extend_from_slice(&hmac);
            }
            MptcpOpt::Dss(d) => {
                let mut flags = 0u8;
                if d.data_fin {
                    flags |= 0x10;
                }
                if let Some(m) = d.mapping {
                    flags |= 0x04 | if m.dsn64 { 0x08 } else { 0 };
                }
                if d.data_ack.is_some() {
                    flags |= 0x01 | if d.ack64 { 0x02 } else { 0 };
                }
                b.extend_from_slice(&[SUBTYPE_DSS << 4, flags]);
                if let Some(a) = d.data_ack {
                    if d.ack64 {
                        b.extend_from_slice(&a.to_be_bytes());
                    } else {
                        b.extend_from_slice(&(a as u32).to_be_bytes());
                    }
                }
                if let Some(m) = d.mapping {
                    if m.dsn64 {
                        b.extend_from_slice(&m.dsn.to_be_bytes());
                    } else {
                        b.extend_from_slice(&(m.dsn as u32).to_be_bytes());
                    }
                    b.extend_from_slice(&m.ssn.to_be_bytes());
                    b.extend_from_slice(&m.len.to_be_bytes());
                    if let Some(c) = m.checksum {
                        b.extend_from_slice(&c.to_be_bytes());
                    }
                }
            }
            MptcpOpt::AddAddr {
                echo,
                addr_id,
                addr,
                port,
                hmac,
            } => {
                b.extend_from_slice(&[SUBTYPE_ADD_ADDR << 4 | echo as u8, addr_id]);
                b.extend_from_slice(&addr.octets());
                if let Some(p) = port {
                    b.extend_from_slice(&p.to_be_bytes());
                }
                if let Some(h) = hmac {
                    b.extend_from_slice(&h.to_be_bytes());
                }
            }
            MptcpOpt::RemoveAddr { ids, n } => {
                b.push(SUBTYPE_REMOVE_ADDR << 4);
                b.extend_from_slice(&ids[..n as usize]);
            }
            MptcpOpt::FastClose { receiver_key } => {
                b.extend_from_slice(&[SUBTYPE_FASTCLOSE << 4, 0]);
                b.extend_from_slice(&receiver_key.to_be_bytes());
            }
        }
        b[1] = b.len() as u8;
        b
    }

    /// The option as a segment carries it.
    pub fn encode(&self) -> MptcpOption {
        let b = self.to_bytes();
        MptcpOption::from_bytes(&b).unwrap_or_else(|| {
            panic!(
                "MPTCP option of {} bytes over the 28 celltcp carries",
                b.len()
            )
        })
    }

    /// Reads one option from its bytes (kind and length included).
    pub fn decode(b: &[u8]) -> Result<MptcpOpt, String> {
        if b.len() < 3 || b[0] != KIND || b[1] as usize != b.len() {
            return Err(format!("mptcp option: expected kind 30 and a length equal to the {} bytes given, got {:02x?}", b.len(), &b[..b.len().min(3)]));
        }
        let be64 = |s: &[u8]| u64::from_be_bytes(s.try_into().unwrap());
        let be32 = |s: &[u8]| u32::from_be_bytes(s.try_into().unwrap());
        let be16 = |s: &[u8]| u16::from_be_bytes(s.try_into().unwrap());
        let len = b.len();
        let bad = |what: &str| {
            Err(format!(
                "mptcp option subtype {:#x}: length {len} is not valid for {what}",
                b[2] >> 4
            ))
        };
        match b[2] >> 4 {
            SUBTYPE_CAPABLE => {
                if b[2] & 0x0f != VERSION {
                    return Err(format!(
                        "mp_capable: version {} is not supported; expected {VERSION}",
                        b[2] & 0x0f
                    ));
                }
                let flags = b[3];
                let (keys, rest) = match len {
                    4 => (CapableKeys::None, &b[4..]),
                    12 => (CapableKeys::One(be64(&b[4..12])), &b[12..]),
                    20 | 22 | 24 => (
                        CapableKeys::Two {
                            sender: be64(&b[4..12]),
                            receiver: be64(&b[12..20]),
                        },
                        &b[20..],
                    ),
                    _ => return bad("MP_CAPABLE (4, 12, 20, 22 or 24)"),
                };
                let data_len = (rest.len() >= 2).then(|| be16(&rest[..2]));
                let checksum = (rest.len() == 4).then(|| be16(&rest[2..4]));
                Ok(MptcpOpt::Capable {
                    flags,
                    keys,
                    data_len,
                    checksum,
                })
            }
            SUBTYPE_JOIN => match len {
                12 => Ok(MptcpOpt::JoinSyn {
                    backup: b[2] & 1 != 0,
                    addr_id: b[3],
                    token: be32(&b[4..8]),
                    nonce: be32(&b[8..12]),
                }),
                16 => Ok(MptcpOpt::JoinSynAck {
                    backup: b[2] & 1 != 0,
                    addr_id: b[3],
                    hmac: be64(&b[4..12]),
                    nonce: be32(&b[12..16]),
                }),
                24 => Ok(MptcpOpt::JoinAck {
                    hmac: b[4..24].try_into().unwrap(),
                }),
                _ => bad("MP_JOIN (12, 16 or 24)"),
            },
            SUBTYPE_DSS => {
                if len < 4 {
                    return bad("DSS");
                }
                let f = b[3];
                let mut d = Dss {
                    data_fin: f & 0x10 != 0,
                    ack64: f & 0x02 != 0,
                    ..Default::default()
                };
                let mut i = 4;
                if f & 0x01 != 0 {
                    let n = if d.ack64 { 8 } else { 4 };
                    if len < i + n {
                        return bad("DSS with its DATA_ACK");
                    }
                    d.data_ack = Some(if d.ack64 {
                        be64(&b[i..i + 8])
                    } else {
                        be32(&b[i..i + 4]) as u64
                    });
                    i += n;
                }
                if f & 0x04 != 0 {
                    let dsn64 = f & 0x08 != 0;
                    let n = if dsn64 { 8 } else { 4 };
                    if len != i + n + 6 && len != i + n + 8 {
                        return bad("DSS with its mapping");
                    }
                    let dsn = if dsn64 {
                        be64(&b[i..i + 8])
                    } else {
                        be32(&b[i..i + 4]) as u64
                    };
                    i += n;
                    let ssn = be32(&b[i..i + 4]);
                    let dl = be16(&b[i + 4..i + 6]);
                    let checksum = (len == i + 8).then(|| be16(&b[i + 6..i + 8]));
                    d.mapping = Some(Mapping {
                        dsn,
                        dsn64,
                        ssn,
                        len: dl,
                        checksum,
                    });
                } else if len != i {
                    return bad("DSS without a mapping");
                }
                Ok(MptcpOpt::Dss(d))
            }
            SUBTYPE_ADD_ADDR => {
                let echo = b[2] & 1 != 0;
                let (port, hmac) = match (len, echo) {
                    (8, true) => (None, None),
                    (10, true) => (Some(be16(&b[8..10])), None),
                    (16, false) => (None, Some(be64(&b[8..16]))),
                    (18, false) => (Some(be16(&b[8..10])), Some(be64(&b[10..18]))),
                    _ => return bad("an IPv4 ADD_ADDR (8 or 10 with E, 16 or 18 without)"),
                };
                Ok(MptcpOpt::AddAddr {
                    echo,
                    addr_id: b[3],
                    addr: Ipv4(be32(&b[4..8])),
                    port,
                    hmac,
                })
            }
            SUBTYPE_REMOVE_ADDR => {
                if len > 11 {
                    return bad("REMOVE_ADDR (at most 8 ids here)");
                }
                let mut ids = [0u8; 8];
                ids[..len - 3].copy_from_slice(&b[3..]);
                Ok(MptcpOpt::RemoveAddr {
                    ids,
                    n: (len - 3) as u8,
                })
            }
            SUBTYPE_FASTCLOSE => {
                if len != 12 {
                    return bad("MP_FASTCLOSE (12)");
                }
                Ok(MptcpOpt::FastClose {
                    receiver_key: be64(&b[4..12]),
                })
            }
            s => Err(format!(
                "mptcp option: subtype {s:#x} is not modelled; expected one of 0x0-0x4, 0x7"
            )),
        }
    }

    /// The option a segment carries, if any.
    pub fn from_segment(o: &MptcpOption) -> Option<Result<MptcpOpt, String>> {
        (!o.is_empty()).then(|| MptcpOpt::decode(o.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rt(o: MptcpOpt) -> Vec<u8> {
        let b = o.to_bytes();
        assert_eq!(MptcpOpt::decode(&b), Ok(o), "{b:02x?}");
        assert_eq!(o.encode().as_bytes(), &b[..]);
        b
    }

    #[test]
    fn mp_capable_lengths_match_rfc8684_figure_4() {
        // §3.1: SYN 4, SYN/ACK 12, ACK 20, ACK with data 22, with checksum 24; byte 2 = subtype
        // 0 | version 1; byte 3 = flags (H = HMAC-SHA256).
        let syn = rt(MptcpOpt::Capable {
            flags: FLAG_HMAC_SHA256,
            keys: CapableKeys::None,
            data_len: None,
            checksum: None,
        });
        assert_eq!(syn, [30, 4, 0x01, 0x01]);
        let sa = rt(MptcpOpt::Capable {
            flags: 0x01,
            keys: CapableKeys::One(0x1122334455667788),
            data_len: None,
            checksum: None,
        });
        assert_eq!(
            sa,
            [30, 12, 0x01, 0x01, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88]
        );
        let keys = CapableKeys::Two {
            sender: 1,
            receiver: 2,
        };
        let ack = rt(MptcpOpt::Capable {
            flags: 0x01,
            keys,
            data_len: None,
            checksum: None,
        });
        assert_eq!(ack.len(), 20);
        assert_eq!(
            &ack[4..20],
            &[0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2]
        );
        assert_eq!(
            rt(MptcpOpt::Capable {
                flags: 0x01,
                keys,
                data_len: Some(1420),
                checksum: None
            })
            .len(),
            22
        );
        let c = rt(MptcpOpt::Capable {
            flags: 0x81,
            keys,
            data_len: Some(1420),
            checksum: Some(0xbeef),
        });
        assert_eq!(&c[20..], &[0x05, 0x8c, 0xbe, 0xef]);
    }

    #[test]
    fn mp_join_layouts_match_rfc8684_figures_5_to_7() {
        // §3.2: SYN 12 (token, nonce), SYN/ACK 16 (64-bit truncated HMAC, nonce), ACK 24 (160 bits).
        let s = rt(MptcpOpt::JoinSyn {
            backup: true,
            addr_id: 2,
            token: 0xdeadbeef,
            nonce: 0x01020304,
        });
        assert_eq!(s, [30, 12, 0x11, 2, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4]);
        let sa = rt(MptcpOpt::JoinSynAck {
            backup: false,
            addr_id: 0,
            hmac: 0x0102030405060708,
            nonce: 9,
        });
        assert_eq!(sa, [30, 16, 0x10, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 9]);
        let a = rt(MptcpOpt::JoinAck { hmac: [7; 20] });
        assert_eq!(a.len(), 24);
        assert_eq!(&a[..4], &[30, 24, 0x10, 0]);
    }

    #[test]
    fn dss_layout_matches_rfc8684_figure_9() {
        // §3.3: flags byte `reserved(3) F m M a A`; DATA_ACK, DSN, SSN, length, checksum.
        let d = Dss {
            data_ack: Some(0x0102030405060708),
            ack64: true,
            mapping: Some(Mapping {
                dsn: 0x1112131415161718,
                dsn64: true,
                ssn: 0x21222324,
                len: 0x3132,
                checksum: None,
            }),
            data_fin: false,
        };
        let b = rt(MptcpOpt::Dss(d));
        assert_eq!(
            b,
            [
                30, 26, 0x20, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16,
                0x17, 0x18, 0x21, 0x22, 0x23, 0x24, 0x31, 0x32
            ]
        );
        // 26 bytes pad to 28: with timestamps a full segment of 1420 payload bytes is 1500 B.
        assert_eq!(MptcpOpt::Dss(d).encode().padded_len(), 28);
        // A pure DATA_ACK of 4 bytes: 8; of 8 bytes: 12.
        let ack4 = rt(MptcpOpt::Dss(Dss {
            data_ack: Some(5),
            ..Default::default()
        }));
        assert_eq!(ack4, [30, 8, 0x20, 0x01, 0, 0, 0, 5]);
        assert_eq!(
            rt(MptcpOpt::Dss(Dss {
                data_ack: Some(5),
                ack64: true,
                ..Default::default()
            }))
            .len(),
            12
        );
        // DATA_FIN with 32-bit DSN and checksum, no ack: F|M = 0x14, 4 + 4 + 4 + 2 + 2 = 16.
        let fin = Dss {
            data_fin: true,
            mapping: Some(Mapping {
                dsn: 77,
                dsn64: false,
                ssn: 0,
                len: 1,
                checksum: Some(0),
            }),
            ..Default::default()
        };
        let b = rt(MptcpOpt::Dss(fin));
        assert_eq!(b[..4], [30, 16, 0x20, 0x14]);
        // Full DSS with checksum: 28, the largest option celltcp carries.
        let full = Dss {
            mapping: Some(Mapping {
                checksum: Some(1),
                ..d.mapping.unwrap()
            }),
            ..d
        };
        assert_eq!(rt(MptcpOpt::Dss(full)).len(), 28);
    }

    #[test]
    fn add_addr_remove_addr_fastclose_layouts() {
        // §3.4.1 Figure 15 (IPv4: 16 with HMAC, 18 with port; echo 8/10), §3.4.2 Figure 16,
        // §3.5 Figure 18.
        let a = rt(MptcpOpt::AddAddr {
            echo: false,
            addr_id: 3,
            addr: Ipv4::new(10, 0, 1, 2),
            port: None,
            hmac: Some(0xa1a2a3a4a5a6a7a8),
        });
        assert_eq!(
            a,
            [30, 16, 0x30, 3, 10, 0, 1, 2, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8]
        );
        assert_eq!(
            rt(MptcpOpt::AddAddr {
                echo: false,
                addr_id: 3,
                addr: Ipv4::new(10, 0, 1, 2),
                port: Some(80),
                hmac: Some(1)
            })
            .len(),
            18
        );
        assert_eq!(
            rt(MptcpOpt::AddAddr {
                echo: true,
                addr_id: 3,
                addr: Ipv4::new(10, 0, 1, 2),
                port: None,
                hmac: None
            }),
            [30, 8, 0x31, 3, 10, 0, 1, 2]
        );
        let mut ids = [0; 8];
        ids[..2].copy_from_slice(&[4, 5]);
        assert_eq!(rt(MptcpOpt::RemoveAddr { ids, n: 2 }), [30, 5, 0x40, 4, 5]);
        assert_eq!(
            rt(MptcpOpt::FastClose {
                receiver_key: 0x0102030405060708
            }),
            [30, 12, 0x70, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn malformed_options_are_refused_with_the_reason() {
        assert!(MptcpOpt::decode(&[30, 5, 0x20, 0x01, 0])
            .unwrap_err()
            .contains("DATA_ACK"));
        assert!(MptcpOpt::decode(&[30, 4, 0x00, 0x01, 0])
            .unwrap_err()
            .contains("length"));
        assert!(MptcpOpt::decode(&[30, 4, 0x02, 0x01])
            .unwrap_err()
            .contains("version 2"));
        assert!(MptcpOpt::decode(&[30, 4, 0x90, 0])
            .unwrap_err()
            .contains("0x9"));
        assert!(
            MptcpOpt::decode(&[30, 13, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
                .unwrap_err()
                .contains("MP_JOIN")
        );
    }
}
