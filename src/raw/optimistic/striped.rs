//! The striped shard: one NC's entries in several *stripes*, each a
//! [`RawShard`] with its own writer lock, log and by-bytes table, so that
//! two misses into one NC take different locks and write different lines
//! unless their bytes' hashes pick the same stripe.
//!
//! * **The stripe** is picked by bits of the bytes' hash that the tables
//!   do not use (they place by the low 32): a hit computes the hash it
//!   computes anyway, picks the stripe and probes it lock-free, as the
//!   optimistic shard's hit does. The stripes share one seed.
//! * **Numbers.** Two strings of one id (a conflict) hash to different
//!   stripes, so first-wins needs an order across stripes. A miss takes a
//!   number from the NC's counter (`fetch_add`, release) under its
//!   stripe's lock and writes it into its record (`record`'s numbered
//!   mark): a stripe's records are in increasing number order. A
//!   predicted miss (`StripeGuard::insert_unless_found`) appends before it
//!   probes, so it takes its number first; if the probe finds its bytes,
//!   the append is taken back, never published, and its number is left
//!   unused. Such gaps (and those of appends refused after their number)
//!   change nothing below: no record holds the number, and every argument
//!   is about the records that exist; but a spent number that asks for a
//!   settle (below) still gets one ([`Found`], [`Refused`]).
//! * **The settle** (under the by-id map's exclusive lock) loads the
//!   counter first (the bound, acquire), then each stripe's published end,
//!   and takes from each stripe the prefix of its new records numbered
//!   below the bound, all of them in number order, into the one by-id
//!   map: the first entry of an id is kept, a later one with other bytes
//!   is a conflict (recorded once, when taken), one with the same bytes
//!   (two concurrent registers of one pair) is dropped. Why it is exact:
//!   a record it takes was numbered before the bound was loaded. A record
//!   it leaves with a smaller number was not published when its stripe's
//!   end was read, so its intern had not returned when the taken one was
//!   numbered: the two were concurrent, and the settle that takes the
//!   later of them decides, once. An intern that returned before another
//!   began holds the smaller number and is taken no later (the acquire
//!   load of the bound synchronises with the later one's numbering, which
//!   the earlier one's publication happened before). So first-wins and
//!   the conflicts' order follow the calls' order across threads, and a
//!   settle holds every intern that returned before it began.
//! * **Walks** read the settled entries in the order settles took them,
//!   a position being an index into that order.
//! * **Lookups without the map's lock**, as the optimistic shard's
//!   (`IdSide::holds_first`): a settle stores each stripe's settled end
//!   (release) after it set the NC's flag if it left any entry unmapped
//!   (shadowed by an earlier string of its id); an entry found by its
//!   bytes at or before its stripe's end (acquire), the flag clear, holds
//!   its id first.
//! * **Numbers wrap** (32 bits): a settle takes the records numbered in
//!   the 2^31 below its bound. Every 2^30th number, the miss that took it
//!   settles, so no published record waits 2^31 numbers for a settle.

use hashbrown::hash_map::Entry as MapEntry;
use hashbrown::HashMap;

use super::log::{AppendError, Ref};
use super::record::Entry;
use super::shard::{ByBytes, Probe, RawShard, WriteGuard};
use crate::raw::alloc::AllocError;
use crate::raw::bytes::HashSeed;
use crate::sync::{self, AtomicBool, AtomicU32, Ordering, RwLock};

/// The stripes an NC moves to. Two writers meet on a stripe when their
/// names pick the same one (about one miss in 2 × `STRIPES` of each at two
/// threads), and a miss that meets the other's lock costs several: 64
/// stripes insert about 7% faster than 16 at two threads (`fill`, 10^6
/// names), the 256-thread cell's 99th percentile a third lower, for about
/// 1 MiB more of a moved NC's slack (`docs/history.md`, "64 stripes").
#[cfg(not(interner_loom))]
const STRIPES: usize = 64;
/// In loom builds, two: enough for every order across stripes.
#[cfg(interner_loom)]
const STRIPES: usize = 2;

/// A miss whose number is a multiple of this settles the NC.
const SETTLE_EVERY: u32 = 1 << 30;

/// The first number: close below the wrap, so that every NC's numbers
/// cross it early, where the tests see it.
const FIRST_NUMBER: u32 = u32::MAX - 255;

/// One stripe, on lines of its own.
#[repr(align(128))]
struct Stripe(RawShard);

/// The NC's counter of numbers, on a line of its own.
#[repr(align(128))]
struct Counter(AtomicU32);

/// Where an entry is: its stripe and its ref there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place {
    stripe: u32,
    at: Ref,
}

impl Place {
    #[inline]
    fn pack(self) -> u64 {
        u64::from(self.stripe) << 32 | u64::from(self.at.to_bits())
    }

    #[inline]
    fn unpack(bits: u64) -> Place {
        Place {
            stripe: (bits >> 32) as u32,
            at: Ref::from_bits(bits as u32),
        }
    }
}

/// A record a settle takes: its number, relative to the settle's bound
/// (negative: below it), and its place.
type Taken = (i32, Place);

/// The by-id map over every stripe and what the settles took.
struct StripedIds {
    /// Each id's first entry (a packed [`Place`]).
    map: HashMap<u64, u64, foldhash::fast::RandomState>,
    /// The entries that hold their id first, in the order settles took
    /// them (packed [`Place`]s): what walks read.
    order: Vec<u64>,
    /// Entries and bytes of string data in `order`.
    entries: usize,
    bytes: usize,
}

/// One NC's striped shard.
pub(crate) struct StripedShard {
    stripes: Box<[Stripe]>,
    next: Counter,
    ids: RwLock<StripedIds>,
    /// Each stripe's position after its last settled record, stored
    /// (release) by the settle that moved it, under the by-id map's
    /// exclusive lock: settles read it under the map's lock, lookups
    /// without it.
    settled_ends: Box<[AtomicU32]>,
    /// Whether a settle ever left an entry unmapped (an earlier string,
    /// or the same bytes, held its id); set before the ends it stored.
    any_shadowed: AtomicBool,
    seed: HashSeed,
}

impl StripedShard {
    /// An empty, open shard of `stripes` stripes (a power of two, at most
    /// 2^16), each as [`RawShard::try_new`] makes it with
    /// `capacity / stripes` entries of room, `byte_cap` and `slab_limit`
    /// (which the caller applies to the NC with one stripe).
    #[cfg(test)]
    fn try_new(
        stripes: usize,
        capacity: usize,
        byte_cap: usize,
        slab_limit: usize,
    ) -> Result<Self, AllocError> {
        Self::try_new_seeded(stripes, capacity, byte_cap, slab_limit, HashSeed::new())
    }

    /// The stripes of an NC whose shard `base` met contention: placed by
    /// `base`'s seed, so that a hash computed for `base` picks and probes
    /// a stripe; no cap, no slab limit (an NC with either never moves).
    pub(crate) fn try_new_after(base: &RawShard) -> Result<Self, AllocError> {
        Self::try_new_seeded(STRIPES, 0, usize::MAX, super::MAX_SLABS, base.seed())
    }

    fn try_new_seeded(
        stripes: usize,
        capacity: usize,
        byte_cap: usize,
        slab_limit: usize,
        seed: HashSeed,
    ) -> Result<Self, AllocError> {
        assert!(stripes.is_power_of_two() && stripes <= 1 << 16);
        let mut made = Vec::new();
        made.try_reserve_exact(stripes).map_err(|_| AllocError)?;
        for _ in 0..stripes {
            let stripe = RawShard::try_new_seeded(capacity / stripes, byte_cap, slab_limit, seed)?;
            made.push(Stripe(stripe));
        }
        let mut settled_ends = Vec::new();
        settled_ends
            .try_reserve_exact(stripes)
            .map_err(|_| AllocError)?;
        settled_ends.extend((0..stripes).map(|_| AtomicU32::new(Ref::default().to_bits())));
        Ok(StripedShard {
            stripes: made.into_boxed_slice(),
            next: Counter(AtomicU32::new(FIRST_NUMBER)),
            ids: RwLock::new(StripedIds {
                map: HashMap::default(),
                order: Vec::new(),
                entries: 0,
                bytes: 0,
            }),
            settled_ends: settled_ends.into_boxed_slice(),
            any_shadowed: AtomicBool::new(false),
            seed,
        })
    }

    /// The bytes' hash: the stripe and the placement in its table.
    #[inline]
    pub(crate) fn bytes_hash(&self, bytes: &[u8]) -> u64 {
        crate::raw::bytes::hash_bytes(bytes, self.seed)
    }

    /// The stripe of `hash`'s index.
    #[inline]
    fn stripe_index(&self, hash: u64) -> usize {
        (hash >> 32) as usize & (self.stripes.len() - 1)
    }

    /// The stripe of `hash`.
    #[inline]
    fn stripe(&self, hash: u64) -> &RawShard {
        &self.stripes[self.stripe_index(hash)].0
    }

    /// The entry holding exactly `bytes` (of hash `hash`, by this
    /// shard's seed) in their stripe, found lock-free as
    /// [`RawShard::find_by_hash`] finds it (it may miss one inserted
    /// concurrently, never returns a wrong one), open or closed.
    #[inline]
    pub(crate) fn find_by_hash(&self, hash: u64, bytes: &[u8]) -> Option<Entry<'_>> {
        self.stripe(hash).find_by_hash(hash, bytes)
    }

    /// [`find_by_hash`](Self::find_by_hash), and whether the entry is
    /// known without a lock to hold its id first: it lies at or before its
    /// stripe's settled end and no settle left an entry unmapped. `false`
    /// says only "ask the by-id map".
    #[inline]
    pub(crate) fn find_settled_by_hash(
        &self,
        hash: u64,
        bytes: &[u8],
    ) -> Option<(Entry<'_>, bool)> {
        let stripe = self.stripe_index(hash);
        let (at, entry) = self.stripes[stripe].0.find_ref_by_hash(hash, bytes)?;
        // Acquire: with the end, the flag as the settle that stored it
        // left it (or later); the flag then needs no ordering of its own.
        let end = Ref::from_bits(self.settled_ends[stripe].load(Ordering::Acquire));
        Some((
            entry,
            at <= end && !self.any_shadowed.load(Ordering::Relaxed),
        ))
    }

    /// Stripe `stripe`'s settled end, for a settle or a reader holding the
    /// by-id map's lock (shared or exclusive): only a settle stores it,
    /// under the exclusive lock, whose acquire shows this thread the last
    /// store, so the load needs no ordering of its own.
    #[inline]
    fn settled_end(&self, stripe: usize) -> Ref {
        Ref::from_bits(self.settled_ends[stripe].load(Ordering::Relaxed))
    }

    /// [`find_by_hash`](Self::find_by_hash) of the name of `probe`.
    #[inline]
    pub(crate) fn find_probed(&self, hash: u64, probe: Probe<'_>) -> Option<Entry<'_>> {
        self.stripe(hash).find_probed(hash, probe)
    }

    /// Prefetches the line of the first bucket a probe of `hash` reads in
    /// its stripe ([`RawShard::prefetch_bucket`]): for a miss predicted
    /// without the lock-free probe.
    #[inline(always)]
    pub(crate) fn prefetch_bucket(&self, hash: u64) {
        self.stripe(hash).prefetch_bucket(hash);
    }

    /// Opens or closes every stripe, each under its writer lock.
    pub(crate) fn set_open(&self, open: bool) {
        for stripe in &*self.stripes {
            stripe.0.write().set_open(open);
        }
    }

    /// The writer lock of `hash`'s stripe.
    #[inline]
    pub(crate) fn write(&self, hash: u64) -> StripeGuard<'_> {
        let stripe = self.stripe_index(hash);
        StripeGuard {
            shard: self,
            stripe: stripe as u32,
            guard: self.stripes[stripe].0.write_stripe(),
        }
    }

    /// [`write`](Self::write) if no thread holds the stripe's lock now,
    /// without a wait.
    #[inline]
    pub(crate) fn try_write(&self, hash: u64) -> Option<StripeGuard<'_>> {
        let stripe = self.stripe_index(hash);
        Some(StripeGuard {
            shard: self,
            stripe: stripe as u32,
            guard: self.stripes[stripe].0.try_write()?,
        })
    }

    /// The next number from the NC's counter, for a record of a stripe
    /// whose lock the caller holds.
    #[inline(always)]
    fn take_number(&self) -> u32 {
        // Release: a settle whose bound reads past this number sees what
        // happened before it, such as another stripe's publication of an
        // intern that returned before this one began. Taken under the
        // stripe's lock, so the stripe's records are in number order.
        self.next.0.fetch_add(1, Ordering::Release)
    }

    /// The entry at `place`.
    ///
    /// # Safety
    ///
    /// `place` names a record whose publication the caller acquired (it
    /// was read from the by-id map under its lock, after the settle that
    /// stored it acquired the stripe's end), or the caller wrote it.
    #[inline]
    unsafe fn entry(&self, place: Place) -> Entry<'_> {
        // SAFETY: the caller's contract.
        unsafe { self.stripes[place.stripe as usize].0.entry_at(place.at) }
    }

    /// The entry that holds `id` first, if the by-id map holds it (as of
    /// the last settle), and its place.
    pub(crate) fn find_mapped(&self, id: u64) -> Option<(Place, Entry<'_>)> {
        let place = Place::unpack(*sync::read(&self.ids).map.get(&id)?);
        // SAFETY: read from the map under its lock (the settle that stored
        // it acquired the stripe's end past it). Records are immutable and
        // live as long as the shard, so no lock needs to be held.
        Some((place, unsafe { self.entry(place) }))
    }

    /// Calls `f` on every entry settled from position `from` on (`0`, the
    /// start, or a value this shard returned), in the order settles took
    /// them, and returns the position after them. Under the map's shared
    /// lock, which holds settles off.
    pub(crate) fn walk_settled(&self, from: usize, mut f: impl FnMut(Entry<'_>)) -> usize {
        let ids = sync::read(&self.ids);
        for &place in ids.order.get(from..).unwrap_or_default() {
            // SAFETY: read from the map's order under its lock.
            f(unsafe { self.entry(Place::unpack(place)) });
        }
        ids.order.len().max(from)
    }

    /// Entries and bytes of string data that hold their id first, as of
    /// the last settle.
    pub(crate) fn held(&self) -> (usize, usize) {
        let ids = sync::read(&self.ids);
        (ids.entries, ids.bytes)
    }

    /// Settles the by-id map (the module's rule): `conflict(id, kept,
    /// rejected)` for each record taken whose id an earlier entry holds
    /// with other bytes, `base`'s entries first: the frozen shard whose
    /// entries every stripe's follow, which the caller settled wholly
    /// before (its map holds each of its ids). All or nothing: on an
    /// allocation failure the map is unchanged and the records wait for
    /// the next settle.
    pub(crate) fn settle(
        &self,
        base: Option<&RawShard>,
        mut conflict: impl FnMut(u64, &[u8], &[u8]),
    ) -> Result<(), AllocError> {
        {
            // The map's shared lock held while the ends are compared
            // (`settled_end`).
            let _map = sync::read(&self.ids);
            let current = self
                .stripes
                .iter()
                .enumerate()
                .all(|(stripe, raw)| raw.0.log_end() == self.settled_end(stripe));
            if current {
                return Ok(());
            }
        }
        let mut ids = sync::write(&self.ids);
        let bound = self.next.0.load(Ordering::Acquire);
        let mut taken: Vec<Taken> = Vec::new();
        let mut positions = Vec::new();
        positions
            .try_reserve_exact(self.stripes.len())
            .map_err(|_| AllocError)?;
        for (stripe, raw) in self.stripes.iter().enumerate() {
            let from = self.settled_end(stripe);
            let end = raw.0.log_end();
            let mut to = from;
            let mut failed = false;
            raw.0.walk_log(from, end, |at, entry| {
                let number = entry.number().expect("a striped record is numbered");
                let below = number.wrapping_sub(bound) as i32;
                // The stripe's prefix numbered below the bound.
                if below >= 0 || failed {
                    return;
                }
                if taken.try_reserve(1).is_err() {
                    failed = true;
                    return;
                }
                let place = Place {
                    stripe: stripe as u32,
                    at,
                };
                taken.push((below, place));
                to = to.max(at);
            });
            if failed {
                return Err(AllocError);
            }
            positions.push(to);
        }
        ids.map.try_reserve(taken.len()).map_err(|_| AllocError)?;
        ids.order.try_reserve(taken.len()).map_err(|_| AllocError)?;
        taken.sort_unstable_by_key(|&(below, _)| below);
        let ids = &mut *ids;
        for (_, place) in taken {
            // SAFETY: walked from the stripe's log up to its end, acquired
            // above.
            let entry = unsafe { self.entry(place) };
            let id = entry.id();
            if let Some(kept) = base.and_then(|base| base.find_mapped_by_id(id)) {
                self.any_shadowed.store(true, Ordering::Relaxed);
                if !crate::raw::bytes_eq(kept.bytes(), entry.bytes()) {
                    conflict(id, kept.bytes(), entry.bytes());
                }
                continue;
            }
            match ids.map.entry(id) {
                MapEntry::Vacant(vacant) => {
                    vacant.insert(place.pack());
                    ids.order.push(place.pack());
                    ids.entries += 1;
                    ids.bytes += entry.bytes().len();
                }
                MapEntry::Occupied(kept) => {
                    self.any_shadowed.store(true, Ordering::Relaxed);
                    // SAFETY: a place the map holds.
                    let kept = unsafe { self.entry(Place::unpack(*kept.get())) };
                    if !crate::raw::bytes_eq(kept.bytes(), entry.bytes()) {
                        conflict(id, kept.bytes(), entry.bytes());
                    }
                }
            }
        }
        for (stripe, (end, at)) in self.settled_ends.iter().zip(positions).enumerate() {
            if self.settled_end(stripe) != at {
                // Release: a lookup that acquires the end sees the flag set
                // if an entry before it is unmapped.
                end.store(at.to_bits(), Ordering::Release);
            }
        }
        Ok(())
    }
}

/// A stripe's writer lock, held.
pub(crate) struct StripeGuard<'a> {
    shard: &'a StripedShard,
    stripe: u32,
    guard: WriteGuard<'a>,
}

/// Where [`StripeGuard::insert`] put an entry, and whether its number asks
/// the caller to settle the NC (every [`SETTLE_EVERY`]th).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inserted {
    /// The entry's place.
    pub(crate) place: Place,
    /// Whether the caller must settle the NC after releasing the guard.
    pub(crate) settle: bool,
}

impl<'a> StripeGuard<'a> {
    /// Whether the stripe is open (so is the NC: a close closes every
    /// stripe under its lock).
    #[inline]
    pub(crate) fn is_open(&self) -> bool {
        self.shard.stripes[self.stripe as usize].0.is_open()
    }

    /// The entry holding exactly `bytes` (of hash `hash`) in the stripe's
    /// table, or how to index them ([`WriteGuard::find_by_hash`]).
    #[inline]
    pub(crate) fn find_by_hash(&self, hash: u64, bytes: &[u8]) -> Result<Entry<'a>, ByBytes<'a>> {
        self.guard.find_by_hash(hash, bytes)
    }

    /// The most slabs the stripe's log may have.
    pub(crate) fn slab_limit(&self) -> usize {
        self.guard.slab_limit()
    }

    /// Appends `id → bytes` numbered (the module's rule) to the stripe, and
    /// indexes it by its bytes if `by_bytes` is given
    /// ([`WriteGuard::insert_hashed`]). A refusal spends its number
    /// ([`Refused`]).
    #[inline]
    pub(crate) fn insert(
        &mut self,
        id: u64,
        bytes: &[u8],
        by_bytes: Option<ByBytes<'a>>,
    ) -> Result<Inserted, Refused> {
        let number = self.shard.take_number();
        let settle = asks_to_settle(number);
        let at = self
            .guard
            .insert_hashed(id, bytes, by_bytes, Some(number))
            .map_err(|error| Refused { error, settle })?;
        Ok(self.inserted(at, settle))
    }

    /// A predicted miss's insert ([`WriteGuard::insert_unless_found`]):
    /// the numbered append made first, while the bucket's line the caller
    /// prefetched is on its way, then the probe, exact under the stripe's
    /// lock; `Ok(Err)` if the stripe holds `bytes` (of hash `hash`), the
    /// append taken back. A number so spent leaves a gap, which a settle
    /// passes over (it takes the records numbered below its bound, and no
    /// record holds that number); if it is one that asks for a settle, the
    /// caller settles all the same ([`Found::settle`]).
    #[inline]
    pub(crate) fn insert_unless_found(
        &mut self,
        id: u64,
        bytes: &[u8],
        hash: u64,
    ) -> Result<Result<Inserted, Found<'a>>, Refused> {
        let shard = self.shard;
        let mut taken = None;
        let take = || *taken.insert(shard.take_number());
        let outcome = self.guard.insert_unless_found(id, bytes, hash, Some(take));
        let settle = taken.is_some_and(asks_to_settle);
        let outcome = outcome.map_err(|error| Refused { error, settle })?;
        Ok(match outcome {
            Ok(at) => Ok(self.inserted(at, settle)),
            Err(entry) => Err(Found { entry, settle }),
        })
    }

    /// Where the record at `at` in the stripe is, and whether its number
    /// asks for a settle.
    #[inline(always)]
    fn inserted(&self, at: Ref, settle: bool) -> Inserted {
        Inserted {
            place: Place {
                stripe: self.stripe,
                at,
            },
            settle,
        }
    }
}

/// Whether the miss that took `number` settles the NC after it releases
/// its stripe (every [`SETTLE_EVERY`]th).
#[inline(always)]
fn asks_to_settle(number: u32) -> bool {
    number.is_multiple_of(SETTLE_EVERY)
}

/// A stripe's append refused ([`AppendError`]: the stripe is unchanged),
/// and whether the number it had taken, now spent, asks the caller to
/// settle the NC after releasing the guard: a number that asks for a
/// settle must get one whatever became of its record, or a record
/// published after the last settle could wait past the window a settle
/// takes (the module's rule on wrapping numbers).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Refused {
    /// Why the append was refused.
    pub(crate) error: AppendError,
    /// Whether the caller must settle the NC after releasing the guard.
    pub(crate) settle: bool,
}

/// The entry that [`StripeGuard::insert_unless_found`] found, and whether
/// the number its taken-back append spent asks the caller to settle the NC
/// after releasing the guard.
#[derive(Clone, Copy)]
pub(crate) struct Found<'a> {
    /// The stripe's entry of the bytes.
    pub(crate) entry: Entry<'a>,
    /// Whether the caller must settle the NC after releasing the guard.
    pub(crate) settle: bool,
}

#[cfg(all(test, not(interner_loom)))]
mod tests;
