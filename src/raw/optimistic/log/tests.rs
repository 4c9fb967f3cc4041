//! The log's unit tests: slab capacities.

use super::append::slab_capacity;
use super::*;

/// An unlimited log's first slabs are 1, 2, 4 and 8 KiB blocks, then
/// whole ones; a limited log's are whole from the first.
#[test]
fn slab_capacities() {
    let unlimited: Vec<usize> = (0..6).map(|k| slab_capacity(k, MAX_SLABS)).collect();
    let overhead = 16 * 1024 - SLAB_BYTES;
    let blocks = [1024, 2048, 4096, 8192, 16384, 16384];
    assert_eq!(unlimited, blocks.map(|b| b - overhead));
    assert!((0..6).all(|k| slab_capacity(k, MAX_SLABS - 1) == SLAB_BYTES));
    assert!((0..6).all(|k| slab_capacity(k, 2) == SLAB_BYTES));
}
