//! The layout of one record (an entry: id and bytes) in the log, and a
//! reference to a published one.
//!
//! A record is `[len: LEB128, 1 to 5 bytes][id: 7 bytes][bytes]`,
//! byte-aligned: no header padding, so a 72-byte name costs 80 bytes. The id
//! is little-endian, read unaligned with the length's last byte and shifted
//! out: one load. An id below 2^54 (every id `get_id` makes is below 2^51)
//! fits; a larger one (only a caller's `register` can give it) keeps its low
//! 54 bits there with bit 55 set, and its high 10 bits in 2 bytes after the
//! name, where they move nothing a hit reads. Bit 54 marks a *numbered*
//! record (the striped shard's, `striped`): a 4-byte number follows the
//! name, before a wide id's high bytes. A hit tests both marks at once, so
//! an unmarked id costs it nothing more.

use core::marker::PhantomData;
use core::ptr::NonNull;

/// The largest name a record holds (the length is a `u32`).
pub(crate) const MAX_LEN: usize = u32::MAX as usize;

/// Ids below this take [`NARROW`] bytes; the others [`WIDE`].
const WIDE_FROM: u64 = 1 << 54;
/// The id field's mark of a wide id.
const WIDE_MARK: u64 = 1 << 55;
/// The id field's mark of a numbered record.
const NUMBERED_MARK: u64 = 1 << 54;
/// Bytes of a record's number.
const NUMBER: usize = 4;
/// Bytes of a narrow id.
const NARROW: usize = 7;
/// Bytes of a wide id.
const WIDE: usize = 9;

#[inline]
fn id_size(id: u64) -> usize {
    if id < WIDE_FROM {
        NARROW
    } else {
        WIDE
    }
}

/// Bytes a record of `id` and `len` bytes of name takes, numbered or not,
/// or `None` past [`MAX_LEN`].
#[inline]
pub(crate) fn record_size(id: u64, len: usize, numbered: bool) -> Option<usize> {
    if len > MAX_LEN {
        return None;
    }
    Some(varint_size(len) + id_size(id) + len + if numbered { NUMBER } else { 0 })
}

#[inline]
fn varint_size(len: usize) -> usize {
    match len {
        0..=0x7F => 1,
        0x80..=0x3FFF => 2,
        0x4000..=0x1F_FFFF => 3,
        0x20_0000..=0xFFF_FFFF => 4,
        _ => 5,
    }
}

/// Writes the record of `(id, bytes)` at `dst`, with `number` if given.
///
/// # Safety
///
/// `dst` must be valid for writes of
/// `record_size(id, bytes.len(), number.is_some())` bytes (which must be
/// `Some`), and nothing may read them concurrently.
#[inline(always)]
pub(crate) unsafe fn write(dst: NonNull<u8>, id: u64, bytes: &[u8], number: Option<u32>) {
    let mut at = dst.as_ptr();
    let mut len = bytes.len() as u32;
    // SAFETY: the record fits at `dst` (the caller's contract), and the
    // header, id and bytes are written in order within it.
    unsafe {
        loop {
            let low = (len & 0x7F) as u8;
            len >>= 7;
            if len == 0 {
                at.write(low);
                at = at.add(1);
                break;
            }
            at.write(low | 0x80);
            at = at.add(1);
        }
        let mut low = if id < WIDE_FROM {
            id
        } else {
            id & (WIDE_FROM - 1) | WIDE_MARK
        };
        if number.is_some() {
            low |= NUMBERED_MARK;
        }
        core::ptr::copy_nonoverlapping(low.to_le_bytes().as_ptr(), at, NARROW);
        at = at.add(NARROW);
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), at, bytes.len());
        at = at.add(bytes.len());
        if let Some(number) = number {
            at.cast::<[u8; NUMBER]>()
                .write_unaligned(number.to_le_bytes());
            at = at.add(NUMBER);
        }
        if id >= WIDE_FROM {
            at.cast::<[u8; 2]>()
                .write_unaligned(((id >> 54) as u16).to_le_bytes());
        }
    }
}

/// A published record, valid as long as the shard it lives in is borrowed.
#[derive(Clone, Copy)]
pub(crate) struct Entry<'a> {
    /// The first byte of the record's `id`.
    id_at: NonNull<u8>,
    len: u32,
    _shard: PhantomData<&'a ()>,
}

impl<'a> Entry<'a> {
    /// The record at `at`.
    ///
    /// # Safety
    ///
    /// `at` must point to a record written by [`write`] whose writing
    /// happened before this call (it was published with release and found
    /// with acquire, or the caller is its writer), in memory that is not
    /// written again and stays allocated for `'a`.
    #[inline]
    pub(crate) unsafe fn at(at: NonNull<u8>) -> Entry<'a> {
        let mut p = at.as_ptr();
        // SAFETY: a complete record starts at `at` (the caller's contract):
        // its first byte is the length's.
        let first = unsafe { p.read() };
        if first < 0x80 {
            // Names under 128 bytes, the common case: a one-byte length.
            return Entry {
                // SAFETY: the id follows the length, within the record.
                id_at: unsafe { NonNull::new_unchecked(p.add(1)) },
                len: u32::from(first),
                _shard: PhantomData,
            };
        }
        let mut len = 0u32;
        let mut shift = 0;
        // SAFETY: a complete record starts at `at` (the caller's contract);
        // its LEB128 length ends within its first 5 bytes.
        unsafe {
            loop {
                let byte = p.read();
                p = p.add(1);
                len |= u32::from(byte & 0x7F) << shift;
                if byte & 0x80 == 0 {
                    break;
                }
                shift += 7;
            }
            Entry {
                id_at: NonNull::new_unchecked(p),
                len,
                _shard: PhantomData,
            }
        }
    }

    /// The id's first 7 bytes (bit 55: the wide mark; bit 54: the
    /// numbered one).
    #[inline]
    fn low_id(self) -> u64 {
        // SAFETY: the length's last byte and the id's 7 bytes are 8 bytes of
        // a complete, immutable record that lives for `'a` (`Entry::at`).
        let word = unsafe {
            self.id_at
                .as_ptr()
                .sub(1)
                .cast::<[u8; 8]>()
                .read_unaligned()
        };
        u64::from_le_bytes(word) >> 8
    }

    /// The id the entry is stored under.
    #[inline]
    pub(crate) fn id(self) -> u64 {
        let low = self.low_id();
        // One test for both marks: an unmarked id is the hit's case.
        if low & (WIDE_MARK | NUMBERED_MARK) == 0 {
            return low;
        }
        self.marked_id(low)
    }

    /// [`id`](Self::id) of a record with a mark: a numbered record's
    /// narrow id at once (the striped shard's hit), a wide id out of line.
    #[inline(always)]
    fn marked_id(self, low: u64) -> u64 {
        if low & WIDE_MARK == 0 {
            return low & !NUMBERED_MARK;
        }
        self.wide_id(low)
    }

    /// [`id`](Self::id) of a record with a wide id.
    #[cold]
    #[inline(never)]
    fn wide_id(self, low: u64) -> u64 {
        let id = low & (WIDE_FROM - 1);
        // SAFETY: a wide id's 2 high bytes follow the name and the number,
        // if any, in the record (reached from `id_at`, whose provenance
        // covers the record).
        let high = u16::from_le_bytes(unsafe {
            self.name_end()
                .add(self.number_size(low))
                .cast::<[u8; 2]>()
                .read_unaligned()
        });
        id | u64::from(high) << 54
    }

    /// Bytes of number after the name, for a record whose id field is
    /// `low`.
    #[inline]
    fn number_size(self, low: u64) -> usize {
        if low & NUMBERED_MARK == 0 {
            0
        } else {
            NUMBER
        }
    }

    /// The record's number, if it was written with one.
    #[inline]
    pub(crate) fn number(self) -> Option<u32> {
        if self.low_id() & NUMBERED_MARK == 0 {
            return None;
        }
        // SAFETY: a numbered record's 4 bytes of number follow its name
        // (reached from `id_at`, whose provenance covers the record).
        let number = unsafe { self.name_end().cast::<[u8; NUMBER]>().read_unaligned() };
        Some(u32::from_le_bytes(number))
    }

    /// The name's bytes.
    #[inline]
    pub(crate) fn bytes(self) -> &'a [u8] {
        // SAFETY: `len` bytes follow the id in the same complete, immutable
        // record, which lives for `'a` (`Entry::at`).
        unsafe { core::slice::from_raw_parts(self.id_at.as_ptr().add(NARROW), self.len as usize) }
    }

    /// The address just past the record: where the next one in its slab
    /// starts.
    #[inline]
    pub(crate) fn end(self) -> *const u8 {
        let low = self.low_id();
        let wide = if low & WIDE_MARK == 0 {
            0
        } else {
            WIDE - NARROW
        };
        self.name_end()
            .wrapping_add(self.number_size(low) + wide)
            .cast_const()
    }

    /// The address just past the name.
    #[inline]
    fn name_end(self) -> *mut u8 {
        self.id_at.as_ptr().wrapping_add(NARROW + self.len as usize)
    }
}

#[cfg(all(test, not(interner_loom)))]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_length_class() {
        let ids = [
            0,
            1,
            crate::MAX_ID,
            WIDE_FROM - 1,
            WIDE_FROM,
            WIDE_FROM + 0xDEAD,
            WIDE_MARK - 1,
            WIDE_MARK,
            WIDE_MARK | NUMBERED_MARK,
            u64::MAX - 1,
            u64::MAX,
        ];
        for len in [0usize, 1, 0x7F, 0x80, 0x3FFF, 0x4000, 70_000] {
            // Made once a length: Miri interprets each byte's push.
            let bytes: Vec<u8> = (0..len).map(|i| i as u8).collect();
            // The longest name with the first eight ids, unnumbered, only:
            // Miri interprets each case, and the long name's dominate.
            let long = len > 0x4000;
            let (ids, numbers) = if long {
                (&ids[..8], &[None][..])
            } else {
                (&ids[..], &[None, Some(0xFEDC_BA98)][..])
            };
            for &id in ids {
                for &number in numbers {
                    let size = record_size(id, len, number.is_some()).unwrap();
                    let mut buf = vec![0u8; size + 3];
                    let at = NonNull::new(buf.as_mut_ptr().wrapping_add(3)).unwrap();
                    // SAFETY: `buf` has room for the record at offset 3.
                    unsafe { write(at, id, &bytes, number) };
                    // SAFETY: just written, and `buf` outlives `entry`.
                    let entry = unsafe { Entry::at(at) };
                    assert_eq!(entry.bytes().len(), len);
                    assert_eq!(entry.id(), id);
                    assert_eq!(entry.number(), number);
                    assert_eq!(entry.bytes(), &bytes[..]);
                    assert_eq!(entry.end() as usize - at.as_ptr() as usize, size);
                }
            }
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(record_size(crate::MAX_ID, 72, false), Some(80));
        assert_eq!(record_size(crate::MAX_ID, 72, true), Some(84));
        assert_eq!(record_size(u64::MAX, 72, false), Some(82));
        assert_eq!(record_size(u64::MAX, 72, true), Some(86));
        assert_eq!(record_size(1, 200, false), Some(209));
        assert_eq!(record_size(1, MAX_LEN + 1, false), None);
    }
}
