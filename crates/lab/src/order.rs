//! The order cells run in: repetition r of every cell before repetition r+1 of any, and
//! within a round a fresh shuffle, so slow drift of the machine (a warming CPU, a backup
//! starting) spreads over all variants instead of biasing the ones that always run late.
//!
//! The shuffle is a pure function of a seed and the round, so the seed recorded in the
//! results (`order_seed`) reproduces the order, and a resumed run keeps it. Not a source
//! of randomness for anything measured.

use std::time::{SystemTime, UNIX_EPOCH};

/// Seeds stay below 2^53 so that every JSON reader (JavaScript included) reads them exactly.
const SEED_MASK: u64 = (1 << 53) - 1;

/// A fresh seed from the clock and the process id.
pub fn new_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut state = nanos ^ (u64::from(std::process::id()) << 32);
    splitmix(&mut state) & SEED_MASK
}

/// The order of `n` cells in round `round`: a permutation of `0..n`.
pub fn round_order(n: usize, seed: u64, round: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut state = seed ^ (round as u64).wrapping_mul(0xA076_1D64_78BD_642F);
    // Fisher-Yates.
    for i in (1..n).rev() {
        let j = (splitmix(&mut state) % (i as u64 + 1)) as usize;
        order.swap(i, j);
    }
    order
}

/// SplitMix64: small, fast and well mixed; plenty for an order.
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_is_a_permutation_reproduced_by_its_seed() {
        let seed = new_seed();
        assert!(seed <= SEED_MASK);
        for round in 0..5 {
            let mut order = round_order(20, seed, round);
            assert_eq!(order, round_order(20, seed, round));
            order.sort_unstable();
            assert_eq!(order, (0..20).collect::<Vec<_>>());
        }
        assert_ne!(round_order(20, seed, 0), round_order(20, seed, 1));
        assert_ne!(round_order(20, 1, 0), round_order(20, 2, 0));
        assert!(round_order(0, seed, 0).is_empty());
        assert_eq!(round_order(1, seed, 3), vec![0]);
    }
}
