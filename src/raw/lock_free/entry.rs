//! One entry of the lock-free shard: a single allocation holding the id, the
//! length and the bytes, immutable once published, and tagged pointers to it.
//!
//! Entries are never freed while the shard is shared: only `clear` and drop
//! (exclusive access) free them, so a reference found through any slot stays
//! valid for as long as the shard is borrowed.

use core::alloc::Layout;
use core::marker::PhantomData;
use core::ptr::NonNull;

/// The fixed part of an entry; the bytes follow it.
#[repr(C)]
pub(crate) struct Header {
    id: u64,
    len: usize,
    /// In loom builds, a loom-tracked cell standing in for the bytes (which
    /// loom does not see): written after them, read before them, so a reader
    /// without a happens-before edge from the writer fails the model.
    #[cfg(interner_loom)]
    witness: crate::sync::UnsafeCell<()>,
}

/// The low bits of a pointer to a [`Header`] (8-aligned) that slots use as
/// tags.
pub(crate) const TAG_MASK: usize = 0b111;

/// The layout of an entry of `len` bytes, and the offset of its bytes.
fn layout(len: usize) -> Option<(Layout, usize)> {
    let (layout, offset) = Layout::new::<Header>()
        .extend(Layout::array::<u8>(len).ok()?)
        .ok()?;
    Some((layout.pad_to_align(), offset))
}

/// Allocates and writes the entry `(id, bytes)`; `None` if the allocation
/// fails. The caller owns it until it publishes it, and frees it with
/// [`free`].
pub(crate) fn alloc(id: u64, bytes: &[u8]) -> Option<NonNull<Header>> {
    let (layout, offset) = layout(bytes.len())?;
    // SAFETY: `layout` has a non-zero size (the header is 16 bytes).
    let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) })?.cast::<Header>();
    // SAFETY: `ptr` is a fresh allocation of `layout`, which holds a header
    // at offset 0 and `bytes.len()` bytes at `offset`; nothing else sees it.
    unsafe {
        ptr.as_ptr().write(Header {
            id,
            len: bytes.len(),
            #[cfg(interner_loom)]
            witness: crate::sync::UnsafeCell::new(()),
        });
        let dst = ptr.as_ptr().cast::<u8>().add(offset);
        core::ptr::copy_nonoverlapping(bytes.as_ptr(), dst, bytes.len());
        #[cfg(interner_loom)]
        (*ptr.as_ptr()).witness.with_mut(|_| ());
    }
    Some(ptr)
}

/// Frees an entry made by [`alloc`].
///
/// # Safety
///
/// `entry` came from [`alloc`], is freed once, and no reference to it is
/// used afterwards.
pub(crate) unsafe fn free(entry: NonNull<Header>) {
    // SAFETY: the header is initialised (`alloc`) and read before the free.
    let len = unsafe { (*entry.as_ptr()).len };
    let (layout, _) = layout(len).expect("the layout it was allocated with");
    // SAFETY: `entry` holds an initialised header (dropped in place for
    // loom's cell) in an allocation of `layout`, freed once (the caller's
    // contract).
    unsafe {
        core::ptr::drop_in_place(entry.as_ptr());
        std::alloc::dealloc(entry.as_ptr().cast(), layout);
    }
}

/// A published entry, valid for `'a`. A pointer, not a reference to the
/// header: the bytes after the header are reached through it, so it keeps
/// the whole allocation's provenance.
#[derive(Clone, Copy)]
pub(crate) struct EntryRef<'a> {
    header: NonNull<Header>,
    _entry: PhantomData<&'a Header>,
}

impl<'a> EntryRef<'a> {
    /// The entry `entry` points to (tag bits ignored).
    ///
    /// # Safety
    ///
    /// `entry` (untagged) came from [`alloc`]; its writing happened before
    /// this call (it was published with release and loaded with acquire, or
    /// the caller made it), and it is not freed for `'a`.
    #[inline]
    pub(crate) unsafe fn from_tagged(entry: *mut Header) -> EntryRef<'a> {
        let header = entry.map_addr(|a| a & !TAG_MASK);
        // SAFETY: entries are allocations, never null (the caller's
        // contract).
        let header = unsafe { NonNull::new_unchecked(header) };
        EntryRef {
            header,
            _entry: PhantomData,
        }
    }

    #[inline]
    fn header(self) -> &'a Header {
        #[cfg(interner_loom)]
        // SAFETY: as below.
        unsafe { &*self.header.as_ptr() }.witness.with(|_| ());
        // SAFETY: a complete entry that lives for `'a` (`from_tagged`), whose
        // header is never written after publication.
        unsafe { &*self.header.as_ptr() }
    }

    /// The untagged pointer, for comparisons and tagging.
    #[inline]
    pub(crate) fn as_ptr(self) -> *mut Header {
        self.header.as_ptr()
    }

    /// The id the entry is stored under.
    #[inline]
    pub(crate) fn id(self) -> u64 {
        self.header().id
    }

    /// The entry's bytes.
    #[inline]
    pub(crate) fn bytes(self) -> &'a [u8] {
        let len = self.header().len;
        let (_, offset) = layout(len).expect("allocated with it");
        // SAFETY: `len` bytes were written at `offset` in the entry's
        // allocation (whose provenance `header` carries) before it was
        // published, are never written again, and live for `'a`
        // (`from_tagged`).
        unsafe { core::slice::from_raw_parts(self.header.as_ptr().cast::<u8>().add(offset), len) }
    }
}
