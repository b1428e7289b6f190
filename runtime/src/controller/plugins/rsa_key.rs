//! The ssh plugin's key pair, in the formats Volcano's ssh plugin writes (Go's
//! `rsa.GenerateKey(rand.Reader, 2048)`, `x509.MarshalPKCS1PrivateKey` in a PEM block
//! `RSA PRIVATE KEY`, `ssh.MarshalAuthorizedKey`): an RSA 2048-bit key, the private half PKCS#1
//! PEM, the public half one OpenSSH `authorized_keys` line `ssh-rsa <base64>\n`. Generated
//! with the RustCrypto `rsa` crate from the operating system's random source.

use base64::Engine;
use rsa::pkcs1::{EncodeRsaPrivateKey, LineEnding};
use rsa::traits::PublicKeyParts;
use rsa::PrivateKey;

/// Key size in bits, Volcano's.
pub const BITS: usize = 2048;

/// A key pair as the Secret holds it.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPair {
    /// `id_rsa`: PKCS#1 PEM (`-----BEGIN RSA PRIVATE KEY-----`), LF line endings.
    pub private_pem: String,
    /// `id_rsa.pub` and `authorized_keys`: `ssh-rsa <base64>\n`.
    pub public_line: String,
}

impl std::fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyPair").field("public_line", &self.public_line).finish_non_exhaustive()
    }
}

/// Appends an SSH `string` (u32 big-endian length, then the bytes).
fn put_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

/// Appends an SSH `mpint` of the unsigned big-endian `bytes` (no leading zero bytes, one zero
/// byte added when the high bit is set so it reads as positive).
fn put_mpint(out: &mut Vec<u8>, bytes: &[u8]) {
    let start = bytes.iter().position(|b| *b != 0).unwrap_or(bytes.len());
    let trimmed = &bytes[start..];
    if trimmed.first().is_some_and(|b| b & 0x80 != 0) {
        let mut v = Vec::with_capacity(trimmed.len() + 1);
        v.push(0);
        v.extend_from_slice(trimmed);
        put_string(out, &v);
    } else {
        put_string(out, trimmed);
    }
}

/// The OpenSSH `authorized_keys` line of the RSA public key (exponent `e`, modulus `n`, both
/// unsigned big-endian): `ssh-rsa <base64 of string "ssh-rsa", mpint e, mpint n>\n`.
pub fn authorized_key_line(e: &[u8], n: &[u8]) -> String {
    let mut blob = Vec::new();
    put_string(&mut blob, b"ssh-rsa");
    put_mpint(&mut blob, e);
    put_mpint(&mut blob, n);
    format!("ssh-rsa {}\n", base64::engine::general_purpose::STANDARD.encode(blob))
}

/// Generates a fresh key pair (CPU-heavy: tens to hundreds of milliseconds; run it off the
/// async workers).
///
/// Errors: the random source failed, or encoding failed.
pub fn generate() -> Result<KeyPair, String> {
    let mut rng = getrandom::SysRng;
    let key = PrivateKey::new(&mut rng, BITS).map_err(|e| format!("generating an RSA key: {e}"))?;
    let pem = key.to_pkcs1_pem(LineEnding::LF).map_err(|e| format!("encoding the RSA key: {e}"))?;
    Ok(KeyPair { private_pem: pem.to_string(), public_line: authorized_key_line(&key.e_bytes(), &key.n_bytes()) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::pkcs1::DecodeRsaPrivateKey;

    #[test]
    fn mpint_and_string_encoding() {
        // RFC 4251 §5 examples: 0x80 needs a leading zero, leading zeros go
        let mut v = Vec::new();
        put_mpint(&mut v, &[0x00, 0x80]);
        assert_eq!(v, [0, 0, 0, 2, 0x00, 0x80]);
        let mut v = Vec::new();
        put_mpint(&mut v, &[0x00, 0x00, 0x09, 0xa3]);
        assert_eq!(v, [0, 0, 0, 2, 0x09, 0xa3]);
        let mut v = Vec::new();
        put_mpint(&mut v, &[]);
        assert_eq!(v, [0, 0, 0, 0]);
        // e = 65537, n = 0xc5: a known blob
        let line = authorized_key_line(&[0x01, 0x00, 0x01], &[0xc5]);
        let b64 = line.strip_prefix("ssh-rsa ").unwrap().trim_end();
        let blob = base64::engine::general_purpose::STANDARD.decode(b64).unwrap();
        assert_eq!(blob, [&[0, 0, 0, 7][..], b"ssh-rsa", &[0, 0, 0, 3, 1, 0, 1], &[0, 0, 0, 2, 0, 0xc5]].concat());
        assert!(line.ends_with('\n'));
    }

    #[test]
    fn generated_pair_matches_and_reads_back() {
        let pair = generate().unwrap();
        assert!(pair.private_pem.starts_with("-----BEGIN RSA PRIVATE KEY-----\n"), "{}", &pair.private_pem[..40]);
        let key = PrivateKey::from_pkcs1_pem(&pair.private_pem).unwrap();
        assert_eq!(key.n().bit_width(), BITS as u32);
        assert_eq!(pair.public_line, authorized_key_line(&key.e_bytes(), &key.n_bytes()));
        assert_ne!(generate().unwrap(), pair, "each job gets its own key");
    }
}
