// SPDX-License-Identifier: GPL-2.0

//! What the kernel's sanitizers see of rslub's objects: KASAN's shadow and quarantine,
//! and kmemleak's records.
//!
//! The kernel's allocator tells KASAN and kmemleak about every object it hands out and
//! takes back (`slab_post_alloc_hook()`, `slab_free_hook()` in `mm/slub.c`); an object of
//! rslub's would be invisible to both without the same. On a kernel with either of them
//! (a debug kernel: nothing here is compiled in otherwise, see [`ON`]) every allocation
//! and every free of every cache passes through `cache/sanitize_paths.rs`:
//!
//! - KASAN (generic mode only): a new slab is poisoned whole as red zone
//!   (`KASAN_SLAB_REDZONE`), an object handed out is unpoisoned over its `object_size`
//!   (the last granule partly), and a freed one is poisoned as freed (`KASAN_SLAB_FREE`).
//!   A use after free or an overflow of an rslub object then gives the same report as
//!   with the kernel's allocator ("slab-use-after-free", "slab-out-of-bounds"), though
//!   without the kernel's allocation and free stacks (a cache with `U` keeps rslub's).
//!   rslub's own accesses to free objects and red zones (free pointers, debug checks)
//!   are not instrumented: the Rust code is built with `KASAN_SANITIZE := n` (`Kbuild`),
//!   as `mm/` builds `slub.o`. A free of an object KASAN's shadow says is not allocated
//!   is rslub's to report (a double free, or a free of an object never handed out).
//! - A freed object is not reused at once: LIFO reuse would hand it out again before a
//!   stale pointer to it is used, and hide the use after free. Each cache keeps its last
//!   frees in a [`Quarantine`] (KASAN keeps the kernel's in one of its own), poisoned,
//!   and frees the oldest for real when it is full. Shrinking (the shrinker's too) and
//!   destroying the cache empty it first. A cache of KASAN's kernel also gets a red zone
//!   after every object ([`red_zone`], as `kasan_cache_create()` gives the kernel's), so
//!   that an overflow reads poison rather than the next object.
//! - `init_on_free` zeroes an object when it is freed, before the quarantine.
//! - kmemleak: every object handed out is recorded (`kmemleak_alloc()`), so that one
//!   nothing refers to any more is reported as a leak, and, as important, so that
//!   kmemleak scans it for pointers to other objects (slab pages are not scanned on their
//!   own: without the record, a kmalloc'ed object referenced only from an rslub object
//!   would be reported as leaked). Every free drops the record. kmemleak's own caches
//!   (`SLAB_NOLEAKTRACE`) are never backed ([`crate::back`]).

use crate::shim::IrqDisabled;
use kernel::{alloc::flags::GFP_KERNEL, new_spinlock, prelude::*, sync::SpinLock};

/// Whether rslub's objects are KASAN's to check (generic KASAN).
pub(crate) const KASAN: bool = cfg!(CONFIG_KASAN_GENERIC);

/// Whether rslub's objects are kmemleak's to track.
pub(crate) const KMEMLEAK: bool = cfg!(CONFIG_DEBUG_KMEMLEAK);

/// Whether allocations and frees pass through the sanitizer paths at all: a constant, so
/// that on other kernels the fast paths carry not one instruction for them.
pub(crate) const ON: bool = KASAN || KMEMLEAK;

/// The bytes of red zone KASAN wants after an object of `size` bytes (the kernel's
/// `optimal_redzone()`, `mm/kasan/generic.c`).
pub(crate) fn red_zone(size: u32) -> u32 {
    match size {
        0..=48 => 16,
        49..=96 => 32,
        97..=448 => 64,
        449..=3968 => 128,
        3969..=16128 => 256,
        16129..=32256 => 512,
        32257..=64512 => 1024,
        _ => 2048,
    }
}

/// Bytes of objects a cache's quarantine holds at most, as a count of objects between
/// [`MIN_QUARANTINE`] and [`MAX_QUARANTINE`].
const QUARANTINE_BYTES: u32 = 256 * 1024;
/// Fewest objects a quarantine holds (caches of large objects).
const MIN_QUARANTINE: u32 = 16;
/// Most objects a quarantine holds (caches of small objects).
const MAX_QUARANTINE: u32 = 1024;

/// The number of objects of `size` bytes a cache's quarantine holds: 0 without KASAN.
pub(crate) fn quarantine_capacity(size: u32) -> u32 {
    if !KASAN {
        return 0;
    }
    (QUARANTINE_BYTES / size.max(1)).clamp(MIN_QUARANTINE, MAX_QUARANTINE)
}

/// A ring of object addresses.
///
/// # Invariants
///
/// `len <= slots.len()`; the objects are `slots[(head + i) % slots.len()]` for `i` in
/// `0..len`, oldest first.
struct Ring {
    slots: KVec<usize>,
    head: usize,
    len: usize,
}

/// A cache's recently freed objects, poisoned, not yet back on a free list.
///
/// # Invariants
///
/// Every object in it is an object of the owning cache that its caller freed, which
/// nothing but the quarantine refers to.
#[pin_data]
pub(crate) struct Quarantine {
    /// Taken with interrupts off (frees come from interrupts too); a leaf lock.
    #[pin]
    ring: SpinLock<Ring>,
}

impl Quarantine {
    /// A quarantine of `capacity` objects (0: none, every free goes through at once).
    pub(crate) fn new(capacity: u32) -> Result<impl PinInit<Self>> {
        let mut slots = KVec::with_capacity(capacity as usize, GFP_KERNEL)?;
        slots.resize(capacity as usize, 0, GFP_KERNEL)?;
        // INVARIANT: empty.
        Ok(pin_init!(Self {
            ring <- new_spinlock!(
                Ring {
                    slots,
                    head: 0,
                    len: 0
                },
                "rslub_quarantine"
            ),
        }))
    }

    /// Puts `object` in; returns the object that leaves to make room (the oldest), or
    /// `object` itself if the quarantine holds none.
    pub(crate) fn put(&self, object: *mut u8) -> Option<*mut u8> {
        let _irq = IrqDisabled::new();
        let mut r = self.ring.lock();
        let cap = r.slots.len();
        if cap == 0 {
            return Some(object);
        }
        let tail = (r.head + r.len) % cap;
        if r.len < cap {
            // INVARIANT: one more, at the end.
            r.slots[tail] = object as usize;
            r.len += 1;
            return None;
        }
        // Full: the oldest leaves, the new one takes its slot (now the end).
        let head = r.head;
        let oldest = core::mem::replace(&mut r.slots[head], object as usize);
        r.head = (head + 1) % cap;
        Some(oldest as *mut u8)
    }

    /// Takes the oldest object out, if any.
    pub(crate) fn take(&self) -> Option<*mut u8> {
        let _irq = IrqDisabled::new();
        let mut r = self.ring.lock();
        if r.len == 0 {
            return None;
        }
        let head = r.head;
        // Cleared: the slots are kmalloc'ed memory, which kmemleak scans; an address left
        // there would count as a reference to the object once it is handed out again.
        let oldest = core::mem::replace(&mut r.slots[head], 0);
        // INVARIANT: one fewer, from the front.
        r.head = (head + 1) % r.slots.len();
        r.len -= 1;
        Some(oldest as *mut u8)
    }

    /// Objects in it now.
    pub(crate) fn len(&self) -> u32 {
        let _irq = IrqDisabled::new();
        // A local, dropped before `_irq`: a guard left a temporary of the tail expression
        // would be dropped after it (edition 2021), holding the lock with interrupts on
        // (lockdep: inconsistent {IN-SOFTIRQ-W} -> {SOFTIRQ-ON-W} usage, with skb frees
        // into the quarantine from softirqs).
        let r = self.ring.lock();
        r.len as u32
    }
}
