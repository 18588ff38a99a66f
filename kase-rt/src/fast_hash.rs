//! A fast hasher for kase's hot maps (the unfolding's, the RC11 `psc`
//! verdicts, the repeat rule's states). Their keys are event ids, thread
//! indices, names and hashes that kase itself hands out, never chosen by an
//! adversary, so SipHash's protection is not needed and its cost is (a
//! tenth of an execution's time on small models). The mixing is FxHash's
//! (rustc's), written out here rather than taken as a dependency.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FxHash: multiply-rotate per word.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher(u64);

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl FxHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A `HashMap` with [`FxHasher`].
pub(crate) type Map<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// A `HashSet` with [`FxHasher`].
pub(crate) type Set<T> = HashSet<T, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hash;

    fn hash(value: impl Hash) -> u64 {
        let mut h = FxHasher::default();
        value.hash(&mut h);
        h.finish()
    }

    #[test]
    fn different_keys_hash_differently() {
        assert_ne!(hash((1u32, Some(2u32))), hash((2u32, Some(1u32))));
        assert_ne!(hash(vec![1u32, 2]), hash(vec![1u32, 2, 0]));
        assert_eq!(hash([3u32, 4]), hash([3u32, 4]));
        let mut set = Set::default();
        assert!(set.insert(7u32) && !set.insert(7));
    }
}
