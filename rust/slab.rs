// SPDX-License-Identifier: GPL-2.0

//! A slab: its pages, its objects' free list, and its state word.
//!
//! The metadata lives outside the slab's pages (so page-sized objects waste nothing) in a
//! [`Slab`] allocated from a cache of the kernel's that rslub never serves
//! ([`crate::shim::meta_alloc`]); the slab's head page points at it (see [`crate::mm`]).
//!
//! `freelist` and `counters` form one 16-byte unit, changed only with `lock cmpxchg16b`,
//! so a CPU that does not own the slab can free into it without a lock:
//!
//! - `freelist`: first free object that no CPU holds. Each free object stores the next
//!   one at the cache's free pointer offset; the last stores null.
//! - `counters`: `inuse` (low 32 bits) and `FROZEN` (bit 32). A frozen slab is some
//!   CPU's active slab; that CPU holds a private free list of it (in its per-cpu data),
//!   counted as in use here. Objects freed into a frozen slab by other CPUs collect on
//!   `freelist` until the owner takes them back.
//!
//! A slab that is not frozen is on its node's partial list when it has free objects
//! (`on`, under the node lock), or on a CPU's partial list (`cpu_next`, with that CPU's
//! interrupts off), or on no list when full (`inuse == objects`) or in between lists.

use crate::{
    arch,
    gfp::Gfp,
    mm::{self, SlabPages},
};
use core::{
    cell::UnsafeCell,
    ptr::{self, NonNull},
};
use kernel::{
    bindings,
    error::{code::ENOMEM, Result},
    sync::atomic::{Atomic, Relaxed},
};

/// Which list of its node a slab is on ([`Links::on`]): none. (Not [`ON_CPU_PARTIAL`], a
/// bit of the counters.)
pub(crate) const ON_NO_LIST: u8 = 0;
/// On the partial list.
pub(crate) const ON_PARTIAL: u8 = 1;
/// On the full list (debug caches only).
pub(crate) const ON_FULL: u8 = 2;

/// The slab holding `addr` ([`mm::meta_of`]): meaningful only for an address on a slab
/// whose pages rslub owns.
///
/// # Safety
///
/// `addr` must be a direct-map address.
#[inline(always)]
pub(crate) unsafe fn slab_of(addr: *const u8) -> *mut Slab {
    // SAFETY: A direct-map address (caller).
    unsafe { mm::meta_of(addr) }
}

/// [`slab_of`] given the slab's head page ([`mm::meta_of_head`]).
///
/// # Safety
///
/// `head` must be the head page of a slab page (a valid `struct page`).
#[inline(always)]
pub(crate) unsafe fn slab_of_head(head: *const bindings::page) -> *mut Slab {
    // SAFETY: A valid head page (caller).
    unsafe { mm::meta_of_head(head) }
}

/// The slab holding `addr` if its page's cache is `shadow` ([`mm::meta_if_of`]).
///
/// # Safety
///
/// `addr` must be a direct-map address (of any page).
#[inline(always)]
pub(crate) unsafe fn slab_if_of(addr: *const u8, shadow: *const u8) -> Option<*mut Slab> {
    // SAFETY: A direct-map address (caller).
    unsafe { mm::meta_if_of(addr, shadow) }
}

/// Slabs given back by `TYPESAFE_BY_RCU` caches whose grace period has not ended yet
/// ([`Slab::free_after_grace_period`]): their pages are still out of the page allocator.
static AWAITING_GRACE_PERIOD: Atomic<usize> = Atomic::new(0);

/// How many slabs wait for a grace period before their pages go back (all caches).
#[cfg_attr(not(rslub_kunit), expect(dead_code))]
pub(crate) fn awaiting_grace_period() -> usize {
    AWAITING_GRACE_PERIOD.load(Relaxed)
}

/// Bit of `counters` set while the slab is a CPU's active slab.
pub(crate) const FROZEN: u64 = 1 << 32;
/// Bit of `counters` set while the slab is on a CPU's partial list: a free that empties
/// it then needs no node lock (the CPU gives empty slabs back when it gives its list
/// back, under that lock).
pub(crate) const ON_CPU_PARTIAL: u64 = 1 << 33;
/// Bits of `counters` holding `inuse`.
pub(crate) const INUSE_MASK: u64 = FROZEN - 1;

/// A snapshot of the 16-byte state unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct State {
    /// First free object not held by a CPU, or null.
    pub(crate) freelist: *mut u8,
    /// `inuse | FROZEN | ON_CPU_PARTIAL`.
    pub(crate) counters: u64,
}

impl State {
    /// Objects not free from the slab's point of view (a frozen slab counts its owner's
    /// private free list as in use).
    pub(crate) fn inuse(&self) -> u32 {
        (self.counters & INUSE_MASK) as u32
    }

    /// Whether the slab is some CPU's active slab.
    pub(crate) fn frozen(&self) -> bool {
        self.counters & FROZEN != 0
    }

    /// The flag bits ([`FROZEN`], [`ON_CPU_PARTIAL`]).
    pub(crate) fn flags(&self) -> u64 {
        self.counters & !INUSE_MASK
    }

    /// Whether freeing `count` of its objects moves the slab between lists: it is neither
    /// frozen nor on a CPU's partial list, and it was full or becomes empty. (The flags
    /// are tested with a shift, where `flags() != 0` would hold the 64-bit mask in a
    /// register.)
    pub(crate) fn moves_on_free(&self, count: u32) -> bool {
        self.counters >> INUSE_MASK.count_ones() == 0
            && (self.inuse() == count || self.freelist.is_null())
    }
}

/// Makes `counters` from its parts.
pub(crate) fn counters(inuse: u32, frozen: bool) -> u64 {
    u64::from(inuse) | if frozen { FROZEN } else { 0 }
}

/// Links of a slab on a list of its node, protected by the node lock.
#[derive(Clone, Copy)]
pub(crate) struct Links {
    pub(crate) prev: *mut Slab,
    pub(crate) next: *mut Slab,
    /// Which list of its node ([`ON_PARTIAL`], ...).
    pub(crate) on: u8,
}

/// A slab's list links, or, once the slab is discarded and waits for a grace period
/// before its pages go back ([`Slab::free_after_grace_period`]), its RCU callback: a
/// discarded slab is on no list (SLUB's `slab_list` and `rcu_head` share a union too).
#[repr(C)]
union LinksOrRcu {
    links: Links,
    rcu: bindings::callback_head,
}

/// A slab's metadata.
///
/// # Invariants
///
/// - `pages` holds `objects` objects of `size` bytes starting at its address; the free
///   pointer of an object is at `free_offset`.
/// - Every object is in exactly one of: `freelist`'s chain, the private free list of the
///   CPU that froze the slab, or in use by a caller; `inuse` counts the last two.
/// - `freelist` and `counters` are 16-byte aligned and adjacent, and are only written by
///   [`Slab::update`] (or before the slab is published).
/// - `links` is only accessed under the lock of node `node` of the owning cache, and
///   holds [`Links`] until [`Slab::free_after_grace_period`] makes it an RCU callback.
#[repr(C, align(16))]
pub(crate) struct Slab {
    freelist: Atomic<u64>,
    counters: Atomic<u64>,
    /// The owning cache (a `CacheCore`).
    pub(crate) cache: *const u8,
    /// Node the pages are on.
    pub(crate) node: u32,
    /// Objects in the slab.
    pub(crate) objects: u32,
    links: UnsafeCell<LinksOrRcu>,
    /// The next slab on the per-CPU partial list holding this one (null: the last, or on
    /// none); only the CPU whose list holds the slab touches it, with interrupts off.
    cpu_next: UnsafeCell<*mut Slab>,
    pages: SlabPages,
}

// A slab's metadata is a 96-byte object (of `rslub_meta`, packed as `kmalloc-96`): a field
// that makes it larger costs a third more metadata for every slab (`make bench`'s memory
// table), so it must say why.
const _: () = assert!(core::mem::size_of::<Slab>() == 96);

// SAFETY: The state unit is only changed atomically; `links` only under the node lock;
// `cpu_next` only by the CPU whose partial list holds the slab, with interrupts off; the
// rest is immutable after creation.
unsafe impl Send for Slab {}
// SAFETY: As above.
unsafe impl Sync for Slab {}

/// Object geometry the slab needs, from the cache layout.
#[derive(Clone, Copy)]
pub(crate) struct Geometry<'a> {
    pub(crate) size: u32,
    pub(crate) fp: FreePtr,
    pub(crate) objects: u32,
    /// The cache's random order of object indices (`CONFIG_SLAB_FREELIST_RANDOM`), for a
    /// slab of the cache's order: a permutation of `0..seq.len()`.
    pub(crate) seq: Option<&'a [u32]>,
}

/// The object indices of a new slab in free list order: in address order, or, with a
/// random sequence, SLUB's `shuffle_freelist()`: from a random position of the cache's
/// sequence onwards, wrapping, skipping the indices a slab of a fallback order has not.
struct FreeOrder<'a> {
    seq: &'a [u32],
    pos: usize,
    objects: u32,
    left: u32,
}

impl<'a> FreeOrder<'a> {
    fn new(g: &Geometry<'a>) -> Self {
        // Shuffled only with two objects or more, and a sequence covering them all.
        let seq = g
            .seq
            .filter(|s| g.objects >= 2 && s.len() >= g.objects as usize)
            .unwrap_or(&[]);
        let pos = if seq.is_empty() {
            0
        } else {
            // `get_random_u32_below(len)`, by multiply-shift.
            ((u64::from(crate::shim::random_u32()) * seq.len() as u64) >> 32) as usize
        };
        Self {
            seq,
            pos,
            objects: g.objects,
            left: g.objects,
        }
    }
}

impl Iterator for FreeOrder<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let i = self.objects - self.left;
        self.left -= 1;
        if self.seq.is_empty() {
            return Some(i);
        }
        loop {
            let idx = self.seq[self.pos];
            self.pos = if self.pos + 1 == self.seq.len() {
                0
            } else {
                self.pos + 1
            };
            if idx < self.objects {
                return Some(idx);
            }
        }
    }
}

impl Slab {
    /// Makes the metadata of a new slab on `pages` and links all objects into one free
    /// list (in address order, or shuffled, see [`Geometry::seq`]), running `ctor` once
    /// on each. The slab is returned frozen, with all objects counted in use and its free
    /// list handed to the caller (the CPU that will own it).
    pub(crate) fn new_frozen(
        pages: SlabPages,
        g: Geometry<'_>,
        cache: *const u8,
        ctor: Option<unsafe extern "C" fn(*mut core::ffi::c_void)>,
    ) -> (Self, *mut u8) {
        let base = pages.addr().as_ptr();
        let node = pages.node();
        // In bounds: every index is below `objects`, and `objects * size` bytes fit in
        // the pages.
        let at = |i: u32| base.wrapping_add((i * g.size) as usize);
        let mut order = FreeOrder::new(&g);
        // At least one object per slab (layout invariant).
        let head = at(order.next().unwrap_or(0));
        let mut obj = head;
        loop {
            if let Some(ctor) = ctor {
                // SAFETY: `obj` is a fresh object of the cache; the constructor's contract
                // (set at cache creation) is to initialise one object.
                unsafe { ctor(obj.cast()) };
            }
            let next = order.next().map_or(ptr::null_mut(), at);
            // SAFETY: `obj` is inside the pages and the free pointer offset is inside the
            // object and pointer aligned (layout invariant); nobody else sees the slab yet.
            unsafe { g.fp.set(obj, next) };
            if next.is_null() {
                break;
            }
            obj = next;
        }
        // INVARIANT: all objects are on the returned free list, which the caller holds as
        // the owning CPU's private list; they are counted in use, and the slab is frozen.
        let slab = Self {
            freelist: Atomic::new(0),
            counters: Atomic::new(counters(g.objects, true)),
            cache,
            node,
            objects: g.objects,
            links: UnsafeCell::new(LinksOrRcu {
                links: Links {
                    prev: ptr::null_mut(),
                    next: ptr::null_mut(),
                    on: ON_NO_LIST,
                },
            }),
            cpu_next: UnsafeCell::new(ptr::null_mut()),
            pages,
        };
        (slab, head)
    }

    /// Moves `self` into memory of its own from [`crate::shim::meta_alloc`] (with `gfp`, on
    /// the slab's node) and makes the pages a slab page of the cache `shadow` describes
    /// ([`crate::mm::Shadow`]), the metadata recorded for `crate::slab::slab_of`.
    /// Returns the metadata's address, to be given back with [`Slab::free`]; on failure
    /// `self`, and with it the pages, is dropped.
    pub(crate) fn publish(self, gfp: Gfp, shadow: *const u8) -> Result<NonNull<Slab>> {
        // Of the size and alignment of a `Slab` (the cache's).
        let p = crate::shim::meta_alloc(gfp, self.node as i32);
        let p = NonNull::new(p.cast::<Slab>()).ok_or(ENOMEM)?;
        // It holds the address of the slab's first object (`pages`), which kmemleak would
        // take for a reference to that object: not scanned, nor reported (the head page's
        // `slab_list.next` refers to it, but kmemleak skips the `struct page` of a head
        // frozen at count 0). Scanning only its cache pointer (`kmemleak_scan_area()`)
        // kept a slab's first object from being reported: not understood yet.
        crate::shim::kmemleak_ignore(p.as_ptr().cast(), false);
        // SAFETY: `p` is fresh memory of the size and alignment of a `Slab`.
        unsafe { p.as_ptr().write(self) };
        // SAFETY: `p` holds the slab now, and nobody else sees it yet.
        let me = unsafe { &mut *p.as_ptr() };
        me.pages.set_owner(p.as_ptr().cast(), shadow, me.objects);
        Ok(p)
    }

    /// Drops the slab metadata at `slab` and its pages (a [`Slab::publish`] undone).
    ///
    /// # Safety
    ///
    /// `slab` must come from [`Slab::publish`], and nothing may use it, its pages or its
    /// objects afterwards.
    pub(crate) unsafe fn free(slab: NonNull<Slab>) {
        // SAFETY: The caller gives the slab up; it was written by `publish`. Dropping it
        // makes its pages plain pages again before they go back.
        unsafe { ptr::drop_in_place(slab.as_ptr()) };
        // SAFETY: The memory came from `meta_alloc` in `publish`.
        unsafe { crate::shim::meta_free(slab.as_ptr().cast()) };
    }

    /// [`Slab::free`] after an RCU grace period (SLUB's `rcu_free_slab()`), for a cache
    /// whose freed objects lockless readers may still look at (`TYPESAFE_BY_RCU`): until
    /// then the pages stay this slab's, mapped, and every object on them an object of the
    /// cache. The callback touches neither the cache nor its node.
    ///
    /// # Safety
    ///
    /// `slab` must come from [`Slab::publish`], be empty and on no list, and be given up
    /// by its cache, once: rslub never touches the metadata again. Readers that found an
    /// object on it before may still read, even write, it until the callback (the
    /// cache's users' contract, which holds only for as long as they are inside
    /// `rcu_read_lock()`). The module must not go before the callback has run
    /// (`rcu_barrier()`: destroying such a cache and unloading the module wait).
    pub(crate) unsafe fn free_after_grace_period(slab: NonNull<Slab>) {
        /// The callback.
        ///
        /// # Safety
        ///
        /// `head` must be the `rcu` of the `links` of a slab `free_after_grace_period`
        /// was given, called once.
        unsafe extern "C" fn free_now(head: *mut bindings::callback_head) {
            // `rcu` is at offset 0 of the `#[repr(C)]` union, which is `links`.
            let slab = head
                .cast::<u8>()
                .wrapping_sub(core::mem::offset_of!(Slab, links))
                .cast::<Slab>();
            // SAFETY: `slab` is the slab `free_after_grace_period` was given (its callback
            // head is inside it), from `Slab::publish`, given up by its caller.
            unsafe { Slab::free(NonNull::new_unchecked(slab)) };
            AWAITING_GRACE_PERIOD.fetch_sub(1, Relaxed);
        }
        AWAITING_GRACE_PERIOD.fetch_add(1, Relaxed);
        // SAFETY: The caller gives the slab up, once, and it is on no list: nothing reads
        // its links again, so they may become the callback head, which `call_rcu` owns
        // until `free_now` runs, after every reader that may have seen the slab's objects
        // has left its read-side section; the module outlives the callback (caller).
        unsafe {
            let head = &raw mut (*(*slab.as_ptr()).links.get()).rcu;
            bindings::call_rcu(head, Some(free_now));
        }
    }

    /// Pages of the slab.
    pub(crate) fn nr_pages(&self) -> u64 {
        self.pages.nr_pages()
    }

    /// Bytes of the slab's pages, a power of two: the pages are a naturally aligned block
    /// of that size (the page allocator aligns `2^order` pages to their size, and the
    /// direct map keeps that alignment, its base being at least 1 GiB aligned).
    pub(crate) fn span(&self) -> usize {
        (self.nr_pages() as usize) << kernel::page::PAGE_SHIFT
    }

    /// Whether the pages came from the emergency reserves: then the slab serves only
    /// callers entitled to them (SLUB's `pfmemalloc_match()`), except through the fast
    /// path of the CPU that holds it, as in SLUB.
    pub(crate) fn pfmemalloc(&self) -> bool {
        self.pages.pfmemalloc()
    }

    /// The address of the first object.
    pub(crate) fn base(&self) -> *mut u8 {
        self.pages.addr().as_ptr()
    }

    /// A consistent snapshot of the state unit (one `lock cmpxchg16b` that writes back
    /// what it read).
    pub(crate) fn snapshot(&self) -> State {
        loop {
            let s = self.state();
            if self.update(s, s) {
                return s;
            }
        }
    }

    /// Reads the state unit (two loads; [`Slab::update`] validates them together).
    pub(crate) fn state(&self) -> State {
        State {
            freelist: arch::load_relaxed(&self.freelist) as usize as *mut u8,
            counters: arch::load_relaxed(&self.counters),
        }
    }

    /// Sets [`ON_CPU_PARTIAL`] (`on`: the slab goes onto a CPU's partial list) or clears
    /// it (it leaves that list, for its node's list or the page allocator). Returns the
    /// state after.
    pub(crate) fn set_on_cpu_partial(&self, on: bool) -> State {
        loop {
            let old = self.state();
            let new = State {
                counters: old.counters & !ON_CPU_PARTIAL | if on { ON_CPU_PARTIAL } else { 0 },
                ..old
            };
            if self.update(old, new) {
                return new;
            }
        }
    }

    /// Replaces the state unit with `new` if it still equals `old`.
    pub(crate) fn update(&self, old: State, new: State) -> bool {
        let unit = self.freelist.as_ptr().cast::<u64>();
        // SAFETY: `freelist` and `counters` are adjacent and 16-byte aligned (`repr(C,
        // align(16))`, type invariant), live as long as `self`, and only ever written with
        // this instruction once published; CX16 is checked at module load.
        unsafe {
            arch::cmpxchg16b(
                unit,
                [old.freelist as u64, old.counters],
                [new.freelist as u64, new.counters],
            )
        }
    }

    /// Puts the chain of `count` objects `head`..`tail` (linked through their free
    /// pointers; `tail`'s is set here) in front of the shared free list and takes them off
    /// `inuse`, in one update; `frozen` sets the frozen bit (`None`: as it is), the other
    /// flags stay. An empty chain (`tail` null, `count` 0) changes only the counters.
    /// Returns the state before and after the update.
    ///
    /// # Safety
    ///
    /// The chain's objects must be objects of this slab, counted in `inuse`, that the
    /// caller owns and gives up.
    pub(crate) unsafe fn splice(
        &self,
        fp: FreePtr,
        head: *mut u8,
        tail: *mut u8,
        count: u32,
        frozen: Option<bool>,
    ) -> (State, State) {
        loop {
            let old = self.state();
            let flags = frozen.map(|f| old.flags() & !FROZEN | if f { FROZEN } else { 0 });
            // SAFETY: As the caller guarantees.
            if let Some(new) = unsafe { self.try_splice(fp, old, head, tail, count, flags) } {
                return (old, new);
            }
        }
    }

    /// One try of [`Slab::splice`], against `old`, a state read before, with the flag
    /// bits `flags` ([`FROZEN`], [`ON_CPU_PARTIAL`]; `None`: as they are) after it: the
    /// new state, or `None` if
    /// the state is not `old` any more (nothing changed then, but the free pointer of
    /// `tail`, which the caller still owns).
    ///
    /// # Safety
    ///
    /// As for [`Slab::splice`].
    pub(crate) unsafe fn try_splice(
        &self,
        fp: FreePtr,
        old: State,
        head: *mut u8,
        tail: *mut u8,
        count: u32,
        flags: Option<u64>,
    ) -> Option<State> {
        let first = if tail.is_null() {
            old.freelist
        } else {
            // SAFETY: `tail` is an object of this slab the caller owns.
            unsafe { fp.set(tail, old.freelist) };
            head
        };
        let new = State {
            freelist: first,
            counters: match flags {
                // `inuse` counts the chain, so the subtraction stays in its bits.
                None => old.counters - u64::from(count),
                Some(flags) => u64::from(old.inuse() - count) | flags,
            },
        };
        self.update(old, new).then_some(new)
    }

    /// The link of a per-CPU partial list.
    ///
    /// # Safety
    ///
    /// The caller must be the CPU whose partial list holds the slab (or is about to), with
    /// interrupts off, or own that CPU's list otherwise (a dead CPU's, or destruction), and
    /// hold no other reference to the link.
    #[expect(clippy::mut_from_ref)]
    pub(crate) unsafe fn cpu_next(&self) -> &mut *mut Slab {
        // SAFETY: As the caller guarantees: no one else touches the link now.
        unsafe { &mut *self.cpu_next.get() }
    }

    /// The node-lock protected links.
    ///
    /// # Safety
    ///
    /// The caller must hold the lock of the slab's node, and not hold another reference
    /// to these links; the slab must not have been given to
    /// [`Slab::free_after_grace_period`].
    #[expect(clippy::mut_from_ref)]
    pub(crate) unsafe fn links(&self) -> &mut Links {
        // SAFETY: The caller holds the node lock, which serialises all access to `links`;
        // a slab whose metadata is still used holds `Links` there (type invariant).
        unsafe { &mut (*self.links.get()).links }
    }

    /// Takes the whole shared free list for the CPU that owns (or is about to own) the
    /// slab (`get_freelist()`): afterwards every object counts as in use, and the slab
    /// stays frozen if it got objects, or is unfrozen (full, on no list) if there were
    /// none; either way it is on no CPU's partial list.
    pub(crate) fn take_freelist(&self) -> *mut u8 {
        loop {
            let old = self.state();
            let new = State {
                freelist: ptr::null_mut(),
                counters: counters(self.objects, !old.freelist.is_null()),
            };
            if self.update(old, new) {
                return old.freelist;
            }
        }
    }
}

/// How a cache stores the free pointer inside a free object, hardened as SLUB's
/// `CONFIG_SLAB_FREELIST_HARDENED`: the stored word is the pointer mixed with the cache's
/// random value and with the byte-swapped address of the word itself. An attacker who
/// overwrites a free object cannot place a pointer of their choice on the free list
/// without knowing the random value, and a plain address written there decodes to a
/// value far from the slab, which the allocation paths check ([`FreePtr::same_slab`]).
///
/// # Invariants
///
/// `offset` is the cache's free pointer offset: inside the object's stride, pointer
/// aligned; `random` never changes for the cache's lifetime.
#[derive(Clone, Copy)]
pub(crate) struct FreePtr {
    offset: u32,
    #[cfg_attr(
        rslub_unhardened,
        expect(
            dead_code,
            reason = "drawn all the same; RSLUB_HARDENED=n does not mix it in"
        )
    )]
    random: usize,
}

impl FreePtr {
    /// The codec of a cache with free pointers at `offset` (from its [`Layout`]) and the
    /// random value `random`, drawn once at cache creation.
    ///
    /// [`Layout`]: crate::layout::Layout
    pub(crate) fn new(offset: u32, random: u64) -> Self {
        // INVARIANT: the layout's free pointer offset; a value fixed from now on.
        Self {
            offset,
            random: random as usize,
        }
    }

    /// The stored form of `v` in the word at `slot`, and back (the mix is an involution).
    #[cfg(not(rslub_unhardened))]
    #[inline(always)]
    fn mix(self, slot: *mut u8, v: usize) -> usize {
        v ^ self.random ^ (slot as usize).swap_bytes()
    }

    /// Built with `RSLUB_HARDENED=n`: stored as it is.
    #[cfg(rslub_unhardened)]
    #[inline(always)]
    fn mix(self, _slot: *mut u8, v: usize) -> usize {
        v
    }

    /// Whether free pointers are stored mixed (the build's choice, `RSLUB_HARDENED`).
    pub(crate) const HARDENED: bool = cfg!(not(rslub_unhardened));

    /// Writes `next` as the free pointer of `obj`.
    ///
    /// # Safety
    ///
    /// `obj` must be a free object of a slab of this cache, owned by the caller.
    #[inline(always)]
    pub(crate) unsafe fn set(self, obj: *mut u8, next: *mut u8) {
        let slot = obj.wrapping_add(self.offset as usize);
        // SAFETY: The caller guarantees `obj + offset` is a pointer-aligned word inside a
        // free object it owns (type invariant: `offset` is inside the stride).
        unsafe { slot.cast::<usize>().write(self.mix(slot, next as usize)) };
    }

    /// Reads the free pointer of `obj`, which may be racing with its reuse (see
    /// [`crate::arch::read_word_unchecked`]): then the value is garbage, and the caller's
    /// commit must fail.
    ///
    /// # Safety
    ///
    /// `obj` must point into a slab's mapped memory of this cache.
    #[inline(always)]
    pub(crate) unsafe fn get(self, obj: *mut u8) -> *mut u8 {
        // SAFETY: The caller guarantees the word is mapped; `offset` keeps it pointer
        // aligned (type invariant).
        let v = unsafe { arch::read_word_unchecked(obj, self.offset as usize) };
        self.mix(obj.wrapping_add(self.offset as usize), v) as *mut u8
    }

    /// Whether `next` can be the free pointer of `obj`: in the same naturally aligned
    /// block of `mask`'s size (`!(size - 1)`: a slab's pages are such a block). Null, the
    /// end of a list, fails too, for the caller to tell apart off the fast path.
    #[inline(always)]
    pub(crate) fn same_slab(obj: *mut u8, next: *mut u8, mask: usize) -> bool {
        (obj as usize ^ next as usize) & mask == 0
    }
}
