//! A fast hasher for maps the interpreter reads on every step (state fields by name,
//! compiled templates by address). Their keys come from the workflow and the program, not
//! from outside input, so the standard library's DoS-resistant SipHash (about 150
//! instructions for a short name) buys nothing there. This is the `FxHash` of rustc.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// `FxHash`: one rotate, xor and multiply per word.
#[derive(Clone, Copy, Debug, Default)]
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
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0; 8];
            word[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(word));
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
pub(crate) type FxHashMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_it_stored() {
        let mut map: FxHashMap<String, usize> = FxHashMap::default();
        for i in 0..1000 {
            map.insert(format!("field_{i}"), i);
        }
        assert!((0..1000).all(|i| map.get(format!("field_{i}").as_str()) == Some(&i)));
        assert_eq!(map.get("field_1000"), None);
    }
}
