//! Per-component random streams.
//!
//! Each component (a link's loss model, a flow's start jitter, a RED queue) draws from its own
//! ChaCha8 stream seeded by `(run seed, component id)`. Adding a component therefore does not shift
//! any other component's random numbers, and the same seed gives a bit-identical run. The two values
//! are mixed with SplitMix64 (Steele, Lea, Flood 2014) into a 256-bit ChaCha key.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The random number generator every component uses.
pub type SimRng = ChaCha8Rng;

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A stable id for a component from its kind and name (FNV-1a), so streams survive reordering of
/// the scenario file.
pub fn component_id(kind: &str, name: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in kind.bytes().chain([0u8]).chain(name.bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// The stream of component `component` in the run seeded with `run_seed`.
pub fn component_rng(run_seed: u64, component: u64) -> SimRng {
    let mut state = run_seed ^ component.rotate_left(17);
    let mut key = [0u8; 32];
    for chunk in key.chunks_mut(8) {
        chunk.copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    // mix the component id in twice so (a, b) and (b, a) differ
    state ^= component;
    let last = splitmix64(&mut state);
    for (k, b) in key.iter_mut().zip(last.to_le_bytes()) {
        *k ^= b;
    }
    ChaCha8Rng::from_seed(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn same_seed_same_stream_and_components_independent() {
        let a1: Vec<u64> = (0..8).map(|_| 0).scan(component_rng(1, 7), |r, _: u64| Some(r.gen())).collect();
        let a2: Vec<u64> = (0..8).map(|_| 0).scan(component_rng(1, 7), |r, _: u64| Some(r.gen())).collect();
        let b: Vec<u64> = (0..8).map(|_| 0).scan(component_rng(1, 8), |r, _: u64| Some(r.gen())).collect();
        let c: Vec<u64> = (0..8).map(|_| 0).scan(component_rng(2, 7), |r, _: u64| Some(r.gen())).collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        assert_ne!(a1, c);
    }

    #[test]
    fn component_ids_depend_on_kind_and_name() {
        assert_ne!(component_id("link", "a"), component_id("flow", "a"));
        assert_ne!(component_id("link", "ab"), component_id("linka", "b"));
        assert_eq!(component_id("link", "a"), component_id("link", "a"));
    }

    #[test]
    fn uniform_draws_have_the_right_mean() {
        let mut r = component_rng(42, component_id("t", "u"));
        let n = 100_000;
        let mean: f64 = (0..n).map(|_| r.gen::<f64>()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
    }
}
