// SPDX-License-Identifier: GPL-2.0

//! The allocation and free paths of debug caches, reports of misuse, and `validate`.
//!
//! A debug cache (any of `F`, `Z`, `P`, `U`: see [`crate::debug`]) never has a CPU active
//! slab, so its fast paths always fall through to here: an allocation takes one object
//! off a partial slab under the node lock, a free puts one back under the node lock.
//! Full slabs go on the node's full list, so that `validate` sees every slab. All of a
//! debug slab's changes happen under its node lock; the state unit is still only written
//! with [`Slab::update`].
//!
//! Every non-debug cache catches frees of pointers that are not its objects in the free
//! slow path too ([`CacheCore::foreign_free`]): an object of another cache, or of a page
//! that is not rslub's, always reaches it (it is never in this CPU's active slab).

use super::{CacheCore, NO_NODE};
use crate::{
    debug::{self, Problem, POISON, SANITY},
    gfp::Gfp,
    shim::{self, IrqDisabled},
    slab::{self, Slab, State},
    stats::Stat,
};
use core::ptr;
use kernel::{alloc::flags::GFP_KERNEL, fmt, prelude::*, sync::atomic::Relaxed};

/// What a walk of every slab found (`validate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Validation {
    /// Slabs looked at.
    pub(crate) slabs: u64,
    /// Objects in them.
    pub(crate) objects: u64,
    /// Free objects among those.
    pub(crate) free: u64,
    /// Problems found (each reported).
    pub(crate) errors: u64,
}

impl core::fmt::Display for Validation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "slabs {} objects {} free {} errors {}",
            self.slabs, self.objects, self.free, self.errors
        )
    }
}

impl CacheCore {
    /// Whether this is a debug cache.
    #[inline(always)]
    pub(crate) fn is_debug(&self) -> bool {
        self.debug.flags() != 0
    }

    /// The owner records (allocation, free) of `object`, with `U`.
    #[cfg(rslub_inject)]
    pub(crate) fn owner_records(&self, object: usize) -> Option<[debug::Track; 2]> {
        // SAFETY: For the suites, which pass objects of this cache.
        unsafe { self.debug.tracks(object as *const u8) }
    }

    /// The last problem reported for this cache and the address it concerned.
    #[cfg(rslub_inject)]
    pub(crate) fn last_error(&self) -> Option<(Problem, usize)> {
        let p = Problem::from_u32(self.last_error.load(Relaxed))?;
        Some((p, self.last_error_at.load(Relaxed)))
    }

    /// Index of `p` in `s` if it is the start of one of its objects.
    pub(super) fn object_index(&self, s: &Slab, p: *const u8) -> Option<u32> {
        let off = (p as usize).wrapping_sub(s.base() as usize);
        let stride = self.stride();
        (off % stride == 0 && off / stride < s.objects as usize).then_some((off / stride) as u32)
    }

    /// The start of the object of slab `s` that holds `p` (a pointer into the slab), or
    /// `None` for a pointer past its last object.
    pub(crate) fn object_holding(&self, s: &Slab, p: *const u8) -> Option<*mut u8> {
        let i = (p as usize).wrapping_sub(s.base() as usize) / self.stride();
        (i < s.objects as usize).then(|| s.base().wrapping_add(i * self.stride().get()))
    }

    /// Whether `p` (a pointer into slab `s`) starts one of its objects: as
    /// `object_holding(s, p) == Some(p)`, in three instructions ([`crate::layout::ExactIndex`]).
    #[inline(always)]
    pub(crate) fn starts_object(&self, s: &Slab, p: *const u8) -> bool {
        let offset = (p as usize).wrapping_sub(s.base() as usize);
        self.exact_index.of(offset) < u64::from(s.objects)
    }

    /// Reports a free of `p`, a pointer into slab `s` that is not the start of an object;
    /// frees nothing.
    #[cold]
    pub(crate) fn not_an_object(&self, s: &Slab, p: *const u8) {
        let start = (p as usize).wrapping_sub(s.base() as usize) / self.stride();
        self.report(
            Problem::NotAnObject,
            p,
            false,
            fmt!(
                "object {} of its slab starts at {:p}; not freed",
                start,
                s.base().wrapping_add(start * self.layout.size as usize)
            ),
        );
    }

    /// The stride, as a divisor.
    fn stride(&self) -> core::num::NonZeroUsize {
        let s = self.layout.stride();
        core::num::NonZeroUsize::MIN.saturating_add(s.get() as usize - 1)
    }

    /// Reports `problem` at `at` (an object, or the pointer a caller passed), once, with
    /// `detail`; counts it and remembers it for [`CacheCore::last_error`]. With `U` and
    /// an object of this cache's, prints where it was last allocated and freed.
    #[cold]
    pub(super) fn report(
        &self,
        problem: Problem,
        at: *const u8,
        object: bool,
        detail: fmt::Arguments<'_>,
    ) {
        pr_err!(
            "cache {}: {} at {:p}: {}\n",
            self.name(),
            problem.what(),
            at,
            detail
        );
        if object {
            // SAFETY: `at` is the start of an object of this cache (caller).
            unsafe { debug::print_owners(&self.debug, at) };
        }
        self.last_error_at.store(at as usize, Relaxed);
        self.last_error.store(problem as u32, Relaxed);
        self.stat(Stat::DebugErrors);
    }

    /// A free of `object`, which is not an object of this cache's slabs (found in the free
    /// slow path of any cache, or by the debug free path): reports it and frees nothing.
    #[cold]
    #[inline(never)]
    pub(super) fn foreign_free(&self, object: *const u8) {
        let owner = crate::mm::owner_of(object).cast::<CacheCore>();
        if owner.is_null() {
            self.report(Problem::NotASlab, object, false, fmt!("not freed"));
        } else {
            // SAFETY: `owner_of` returns the cache of a live slab, which lives as long as
            // the slab does; only its name is read, for the report.
            let other = unsafe { (*owner).name() };
            self.report(
                Problem::WrongCache,
                object,
                false,
                fmt!("it belongs to cache {other}; not freed"),
            );
        }
    }

    // ----- allocation ---------------------------------------------------------------

    /// Allocates one object of a debug cache (every allocation comes here from the slow
    /// path). `node` as for [`CacheCore::alloc_ptr`].
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_debug(&self, gfp: Gfp, node: i32) -> *mut u8 {
        // A node without memory, or no node, is no constraint (as the non-debug path).
        let node = if node != NO_NODE && !shim::node_has_memory(node) {
            NO_NODE
        } else {
            node
        };
        let only_node = node != NO_NODE && gfp.has(Gfp::THISNODE);
        let mut nid = if node == NO_NODE {
            shim::numa_mem_id().unsigned_abs()
        } else {
            node.unsigned_abs()
        };
        self.stat(Stat::AllocSlow);
        loop {
            {
                let irq = IrqDisabled::new();
                if let Some(object) = self.alloc_debug_on(nid, &irq) {
                    return object;
                }
                if !only_node {
                    for &other in self.near[nid as usize].iter() {
                        if let Some(object) = self.alloc_debug_on(u32::from(other), &irq) {
                            return object;
                        }
                    }
                }
            }
            match self.new_debug_slab(gfp, node) {
                Some(n) => nid = n,
                None => {
                    self.stat(Stat::AllocFailed);
                    return ptr::null_mut();
                }
            }
        }
    }

    /// Takes an object off a partial slab of node `nid`, checking it; `None` when the node
    /// has no partial slab.
    fn alloc_debug_on(&self, nid: u32, irq: &IrqDisabled) -> Option<*mut u8> {
        let node = self.node(nid);
        if node.nr_partial() == 0 {
            return None;
        }
        let mut g = self.lock_node(node, irq);
        loop {
            let slab = g.list().first()?;
            // SAFETY: On the partial list, under its lock: live.
            let s = unsafe { &*slab };
            let old = s.state();
            let object = old.freelist;
            // SAFETY: `object` is the head of the slab's free list, which the node lock
            // gives us (every change of a debug slab is made under it).
            let next = unsafe { self.fp.get(object) };
            let next_ok = next.is_null() || self.object_index(s, next).is_some();
            let new = if next_ok {
                State {
                    freelist: next,
                    counters: slab::counters(old.inuse() + 1, false),
                }
            } else {
                // Cut the list here: every object on it counts in use from now on.
                State {
                    freelist: ptr::null_mut(),
                    counters: slab::counters(s.objects, false),
                }
            };
            if !s.update(old, new) {
                continue;
            }
            if new.freelist.is_null() {
                // SAFETY: On this node's partial list; lock held. Then full, on no list.
                unsafe {
                    g.list().remove(slab);
                    g.full().add(slab, false);
                }
            }
            if !next_ok {
                self.report(
                    Problem::FreeList,
                    object,
                    true,
                    fmt!(
                        "its free pointer decodes to {next:p}, not an object of its slab; the {} free objects left in the slab are left out",
                        s.objects - old.inuse()
                    ),
                );
                continue;
            }
            // SAFETY: `object` is ours now, the start of an object of this cache.
            if let Err((p, b)) = unsafe { self.debug.check_free(object) } {
                self.report(p, object, true, fmt!("{b}; left out"));
                continue;
            }
            // SAFETY: As above.
            unsafe { self.debug.mark_allocated(object) };
            return Some(object);
        }
    }

    /// Makes a new slab for a debug cache, formats its objects as free and puts it on its
    /// node's partial list. Returns its node. Interrupts must be on if `gfp` may sleep.
    fn new_debug_slab(&self, gfp: Gfp, node: i32) -> Option<u32> {
        let (slab, head) = self.new_slab(gfp, node).ok()?;
        // SAFETY: Just made, frozen for us: live, and its objects are ours.
        let s = unsafe { &*slab };
        for i in 0..s.objects {
            let object = s.base().wrapping_add((i * self.layout.size) as usize);
            // SAFETY: An object of a new slab we own.
            unsafe { self.debug.init_free(object) };
        }
        let irq = IrqDisabled::new();
        let mut g = self.lock_node(self.node(s.node), &irq);
        // The whole private list (all objects, from its head: the first object, or a
        // random one with `CONFIG_SLAB_FREELIST_RANDOM`) becomes the shared one.
        let old = s.state();
        let new = State {
            freelist: head,
            counters: slab::counters(0, false),
        };
        let updated = s.update(old, new);
        debug_assert!(updated);
        // SAFETY: A live slab of this node, on no list; lock held.
        unsafe { g.list().add(slab, false) };
        Some(s.node)
    }

    // ----- free ---------------------------------------------------------------------

    /// Frees `object` into a debug cache: checks the pointer (a slab of this cache, the
    /// start of an object, not free already), the red zone, then poisons, records the
    /// owner and puts it back. A bad free is reported and frees nothing.
    #[cold]
    #[inline(never)]
    pub(super) fn free_debug(&self, object: *mut u8) {
        if crate::mm::owner_of(object) != ptr::from_ref(self).cast() {
            return self.foreign_free(object);
        }
        // SAFETY: `owner_of` found this cache's live slab metadata on the page.
        let slab = unsafe { slab::slab_of(object) };
        // SAFETY: As above.
        let s = unsafe { &*slab };
        if self.object_index(s, object).is_none() {
            return self.not_an_object(s, object);
        }
        let irq = IrqDisabled::new();
        let node = self.node(s.node);
        let mut g = self.lock_node(node, &irq);
        if self.debug.has(SANITY) && self.on_freelist(s, object) {
            drop(g);
            return self.report(Problem::DoubleFree, object, true, fmt!("not freed"));
        }
        // SAFETY: The start of an object of this cache, checked above.
        if let Err((p, b)) = unsafe { self.debug.check_live(object) } {
            drop(g);
            let what = if p == Problem::DoubleFree {
                "not freed"
            } else {
                "not freed, left out"
            };
            return self.report(p, object, true, fmt!("{b}; {what}"));
        }
        if self.init_on_free && !self.debug.has(POISON) {
            self.zero(object);
        }
        // SAFETY: An allocated object of this cache, now the caller's to give back.
        unsafe { self.debug.mark_freed(object) };
        // SAFETY: As above; a chain of one.
        let (old, new) = unsafe { s.splice(self.fp, object, object, 1, Some(false)) };
        self.stat(Stat::FreeSlow);
        if old.freelist.is_null() {
            // SAFETY: A full slab of this node is on its full list; lock held.
            unsafe {
                g.full().remove(slab);
                g.list().add(slab, false);
            }
        }
        if new.inuse() == 0 && g.list().len() > self.min_partial() {
            // SAFETY: On the partial list, lock held; then empty and on no list: nothing
            // refers to it. Pages may go back under the spinlock.
            unsafe {
                g.list().remove(slab);
                self.discard(slab);
            }
        }
    }

    /// Whether `object` is on the free list of `s` (a double free). Under the node lock.
    fn on_freelist(&self, s: &Slab, object: *mut u8) -> bool {
        let mut p = s.state().freelist;
        let mut n = 0;
        while !p.is_null() && n <= s.objects {
            if p == object {
                return true;
            }
            if self.object_index(s, p).is_none() {
                return false;
            }
            // SAFETY: `p` is a free object of `s`, held under the node lock.
            p = unsafe { self.fp.get(p) };
            n += 1;
        }
        false
    }

    // ----- validate -----------------------------------------------------------------

    /// Walks every slab on the node lists (after giving back every CPU's active slab, so
    /// that all but those taken again meanwhile are there; a debug cache's full slabs
    /// too) and checks it: the free list stays in the slab and ends within its object
    /// count, free plus in use is the object count, and in a debug cache every free
    /// object's poison and red zone and every allocated object's red zone. Reports each
    /// problem; the slabs are left as they are. May sleep.
    pub(crate) fn validate(&self) -> Result<Validation> {
        shim::run_on_each_cpu(&shim::CpusHeld::new(), &|| self.flush_this_cpu());
        let words = self.layout.objects.div_ceil(64) as usize;
        let mut free = KVec::<u64>::with_capacity(words, GFP_KERNEL)?;
        free.resize(words, 0, GFP_KERNEL)?;
        let mut v = Validation::default();
        for node in self.nodes.iter() {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            for full in [false, true] {
                let list = if full { g.full() } else { g.list() };
                let mut p = list.first();
                while let Some(slab) = p {
                    // SAFETY: On a list of this node, lock held: live.
                    let s = unsafe { &*slab };
                    free.fill(0);
                    self.validate_slab(s, &mut free, &mut v);
                    // SAFETY: As above.
                    let next = unsafe { s.links().next };
                    p = (!next.is_null()).then_some(next);
                }
            }
        }
        Ok(v)
    }

    /// Checks one slab for [`CacheCore::validate`]; `free` is a zeroed bitmap of its
    /// objects.
    fn validate_slab(&self, s: &Slab, free: &mut [u64], v: &mut Validation) {
        v.slabs += 1;
        v.objects += u64::from(s.objects);
        // Objects are only pushed onto the free list of a slab on a list (other CPUs'
        // frees); none is taken off while we hold the lock: the chain from a snapshot
        // stays valid.
        let st = s.snapshot();
        let (mut p, mut prev) = (st.freelist, ptr::null_mut::<u8>());
        let mut n = 0u32;
        while !p.is_null() {
            let Some(i) = self.object_index(s, p) else {
                v.errors += 1;
                let (at, object) = if prev.is_null() {
                    (s.base(), false)
                } else {
                    (prev, true)
                };
                self.report(
                    Problem::FreeList,
                    at,
                    object,
                    fmt!("validate: free pointer number {n} of the slab's list decodes to {p:p}, not an object of the slab"),
                );
                return;
            };
            if n >= s.objects || free[i as usize / 64] & (1 << (i % 64)) != 0 {
                v.errors += 1;
                self.report(
                    Problem::FreeList,
                    p,
                    true,
                    fmt!("validate: the free list of its slab loops"),
                );
                return;
            }
            free[i as usize / 64] |= 1 << (i % 64);
            n += 1;
            if self.is_debug() {
                // SAFETY: A free object of a debug slab, held under the node lock.
                if let Err((prob, b)) = unsafe { self.debug.check_free(p) } {
                    v.errors += 1;
                    self.report(prob, p, true, fmt!("validate: {b}"));
                }
            }
            prev = p;
            // SAFETY: A free object of this slab (checked above); the chain is stable.
            p = unsafe { self.fp.get(p) };
        }
        v.free += u64::from(n);
        if n + st.inuse() != s.objects {
            v.errors += 1;
            self.report(
                Problem::Counts,
                s.base(),
                false,
                fmt!(
                    "validate: slab of {} objects has {} free and counts {} in use",
                    s.objects,
                    n,
                    st.inuse()
                ),
            );
        }
        if !self.is_debug() {
            return;
        }
        for i in 0..s.objects {
            if free[i as usize / 64] & (1 << (i % 64)) != 0 {
                continue;
            }
            let object = s.base().wrapping_add((i * self.layout.size) as usize);
            // SAFETY: An object of this slab; a debug slab only changes under the lock.
            if let Err((prob, b)) = unsafe { self.debug.check_live(object) } {
                // An object left out earlier has a free red zone and is not on the list.
                if prob == Problem::DoubleFree {
                    continue;
                }
                v.errors += 1;
                self.report(prob, object, true, fmt!("validate: {b}"));
            }
        }
    }
}
