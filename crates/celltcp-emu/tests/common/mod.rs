//! Helpers shared by the emulator's tests.

/// A UDP datagram of `len` bytes from `src` to `dst` as Linux would send it (IPv4 without
/// options; the header checksum is not checked on the way in, and rebuilt on the way out).
pub fn udp(src: [u8; 4], dst: [u8; 4], ident: u16, ttl: u8, df: bool, len: usize) -> Vec<u8> {
    let mut b = vec![0u8; len];
    b[0] = 0x45;
    b[2..4].copy_from_slice(&(len as u16).to_be_bytes());
    b[4..6].copy_from_slice(&ident.to_be_bytes());
    b[6] = if df { 0x40 } else { 0 };
    b[8] = ttl;
    b[9] = 17;
    b[12..16].copy_from_slice(&src);
    b[16..20].copy_from_slice(&dst);
    b[20..22].copy_from_slice(&5001u16.to_be_bytes());
    b[22..24].copy_from_slice(&5201u16.to_be_bytes());
    b[24..26].copy_from_slice(&((len - 20) as u16).to_be_bytes());
    b
}
