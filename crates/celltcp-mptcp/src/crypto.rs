//! SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), and the MPTCP uses of them (RFC 8684):
//! the token and IDSN of a key (§2.1, §3.1) and the MP_JOIN / ADD_ADDR authentication (§3.2,
//! §3.4.1). Written here (about a hundred lines) so the crate needs no dependency; checked
//! against the FIPS 180-4 examples and the RFC 4231 test vectors.

const K: [u32; 64] = [
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
];

fn compress(h: &mut [u32; 8], block: &[u8]) {
    let mut w = [0u32; 64];
    for (i, c) in block.chunks_exact(4).enumerate() {
        w[i] = u32::from_be_bytes([c[0], c[1], c[2], c[3]]);
    }
    for i in 16..64 {
        let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
        let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16]
            .wrapping_add(s0)
            .wrapping_add(w[i - 7])
            .wrapping_add(s1);
    }
    let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut hh] = *h;
    for i in 0..64 {
        let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
        let ch = (e & f) ^ (!e & g);
        let t1 = hh
            .wrapping_add(s1)
            .wrapping_add(ch)
            .wrapping_add(K[i])
            .wrapping_add(w[i]);
        let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
        let maj = (a & b) ^ (a & c) ^ (b & c);
        let t2 = s0.wrapping_add(maj);
        hh = g;
        g = f;
        f = e;
        e = d.wrapping_add(t1);
        d = c;
        c = b;
        b = a;
        a = t1.wrapping_add(t2);
    }
    for (x, y) in h.iter_mut().zip([a, b, c, d, e, f, g, hh]) {
        *x = x.wrapping_add(y);
    }
}

/// SHA-256 of `parts` concatenated (FIPS 180-4 §6.2).
pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut h: [u32; 8] = [
        0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab,
        0x5be0cd19,
    ];
    let mut buf = Vec::with_capacity(128);
    let mut total: u64 = 0;
    for p in parts {
        buf.extend_from_slice(p);
        total += p.len() as u64;
    }
    buf.push(0x80);
    while buf.len() % 64 != 56 {
        buf.push(0);
    }
    buf.extend_from_slice(&(total * 8).to_be_bytes());
    for block in buf.chunks_exact(64) {
        compress(&mut h, block);
    }
    let mut out = [0u8; 32];
    for (i, x) in h.iter().enumerate() {
        out[4 * i..4 * i + 4].copy_from_slice(&x.to_be_bytes());
    }
    out
}

/// HMAC-SHA256 (RFC 2104 with B = 64, L = 32).
pub fn hmac_sha256(key: &[u8], msg: &[u8]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&sha256(&[key]));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let ipad: Vec<u8> = k.iter().map(|b| b ^ 0x36).collect();
    let opad: Vec<u8> = k.iter().map(|b| b ^ 0x5c).collect();
    let inner = sha256(&[&ipad, msg]);
    sha256(&[&opad, &inner])
}

/// The token of a key: the most significant 32 bits of SHA-256(key) (RFC 8684 §2.1, §3.1,
/// "The token MUST be a truncated (most significant 32 bits) SHA-256 hash of the key").
pub fn token(key: u64) -> u32 {
    let h = sha256(&[&key.to_be_bytes()]);
    u32::from_be_bytes([h[0], h[1], h[2], h[3]])
}

/// The Initial Data Sequence Number of a key: the least significant 64 bits of SHA-256(key)
/// (RFC 8684 §3.1). The first data byte has DSN `idsn + 1` (the SYN's place, as in TCP).
pub fn idsn(key: u64) -> u64 {
    let h = sha256(&[&key.to_be_bytes()]);
    u64::from_be_bytes(h[24..32].try_into().unwrap())
}

/// The MP_JOIN HMAC (RFC 8684 §3.2): `HMAC(Key = key_1 || key_2, Msg = nonce_1 || nonce_2)`.
/// In the SYN/ACK the responder B sends `join_hmac(key_b, key_a, r_b, r_a)` truncated to its
/// leftmost 64 bits; in the third ACK the initiator A sends `join_hmac(key_a, key_b, r_a, r_b)`
/// truncated to 160 bits.
pub fn join_hmac(key_1: u64, key_2: u64, nonce_1: u32, nonce_2: u32) -> [u8; 32] {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&key_1.to_be_bytes());
    k[8..].copy_from_slice(&key_2.to_be_bytes());
    let mut m = [0u8; 8];
    m[..4].copy_from_slice(&nonce_1.to_be_bytes());
    m[4..].copy_from_slice(&nonce_2.to_be_bytes());
    hmac_sha256(&k, &m)
}

/// The ADD_ADDR HMAC (RFC 8684 §3.4.1): `HMAC(Key = key_sender || key_receiver,
/// Msg = address id || address || port)` (port 0, 2 bytes, when absent), truncated to the
/// leftmost 64 bits.
pub fn add_addr_hmac(key_sender: u64, key_receiver: u64, id: u8, addr: [u8; 4], port: u16) -> u64 {
    let mut k = [0u8; 16];
    k[..8].copy_from_slice(&key_sender.to_be_bytes());
    k[8..].copy_from_slice(&key_receiver.to_be_bytes());
    let mut m = [0u8; 7];
    m[0] = id;
    m[1..5].copy_from_slice(&addr);
    m[5..].copy_from_slice(&port.to_be_bytes());
    let h = hmac_sha256(&k, &m);
    u64::from_be_bytes(h[..8].try_into().unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn sha256_fips_180_examples() {
        // FIPS 180-4 / NIST CSRC examples: "abc", the empty string, the two-block message.
        assert_eq!(
            hex(&sha256(&[b"abc"])),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            hex(&sha256(&[b""])),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let m = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
        assert_eq!(
            hex(&sha256(&[m])),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        // split input gives the same digest
        assert_eq!(sha256(&[&m[..10], &m[10..]]), sha256(&[m]));
    }

    #[test]
    fn hmac_sha256_rfc4231_vectors() {
        // RFC 4231 §4.2 (test case 1), §4.3 (2), §4.7 (6: key longer than the block).
        assert_eq!(
            hex(&hmac_sha256(&[0x0b; 20], b"Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        );
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert_eq!(
            hex(&hmac_sha256(
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
        // RFC 4231 §4.4 (test case 3): 20 x 0xaa key, 50 x 0xdd data.
        assert_eq!(
            hex(&hmac_sha256(&[0xaa; 20], &[0xdd; 50])),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        );
    }

    #[test]
    fn token_and_idsn_are_the_two_ends_of_sha256_of_the_key() {
        // RFC 8684 §3.1: token = top 32 bits, IDSN = low 64 bits of SHA-256(Key) (key big-endian).
        let key = 0x0102_0304_0506_0708u64;
        let h = sha256(&[&[1, 2, 3, 4, 5, 6, 7, 8]]);
        assert_eq!(token(key).to_be_bytes(), h[..4]);
        assert_eq!(idsn(key).to_be_bytes(), h[24..]);
        assert_ne!(token(key), token(key + 1));
    }

    #[test]
    fn join_hmac_is_hmac_of_concatenated_keys_and_nonces() {
        // RFC 8684 §3.2: HMAC(Key=(Key-A+Key-B), Msg=(R-A+R-B)); the two directions differ.
        let (ka, kb, ra, rb) = (
            0x1111_2222_3333_4444u64,
            0x5555_6666_7777_8888u64,
            0xaabb_ccddu32,
            0x0102_0304u32,
        );
        let mut k = Vec::new();
        k.extend_from_slice(&ka.to_be_bytes());
        k.extend_from_slice(&kb.to_be_bytes());
        let mut m = Vec::new();
        m.extend_from_slice(&ra.to_be_bytes());
        m.extend_from_slice(&rb.to_be_bytes());
        assert_eq!(join_hmac(ka, kb, ra, rb), hmac_sha256(&k, &m));
        assert_ne!(join_hmac(ka, kb, ra, rb), join_hmac(kb, ka, rb, ra));
    }
}
