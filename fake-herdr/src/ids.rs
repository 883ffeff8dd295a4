//! Herdr's public id numbers: bijective base-32 with the alphabet
//! `123456789ABCDEFGHJKMNPQRSTVWXYZ0` (1 -> `1`, 10 -> `A`, 32 -> `0`, 33 -> `11`).

const ALPHABET: &[u8; 32] = b"123456789ABCDEFGHJKMNPQRSTVWXYZ0";

/// Encode `n` (>= 1) in bijective base-32. `0` encodes as the empty string.
pub fn encode(mut n: u64) -> String {
    let mut digits = Vec::new();
    while n > 0 {
        n -= 1;
        digits.push(ALPHABET[(n % 32) as usize] as char);
        n /= 32;
    }
    digits.iter().rev().collect()
}

/// Workspace id for a workspace number: `w<enc>`.
pub fn workspace_id(n: u64) -> String {
    format!("w{}", encode(n))
}

/// Tab id: `<ws>:t<enc>`.
pub fn tab_id(ws: &str, n: u64) -> String {
    format!("{ws}:t{}", encode(n))
}

/// Pane id: `<ws>:p<enc>`.
pub fn pane_id(ws: &str, n: u64) -> String {
    format!("{ws}:p{}", encode(n))
}
