// SPDX-License-Identifier: GPL-2.0

//! The allocation paths of a cache: the lock-free fast path, the slow path that refills
//! the CPU's active slab (from the slab's shared list, the partial lists, or a new slab),
//! new slabs from the page allocator, and bulk allocation. The design is described once,
//! in the crate documentation (`rust/rslub.rs`).

use super::{commit, partial, CacheCore, CpuSlab, BASE_TAG, NO_NODE, NO_SLAB};
use crate::{
    arch,
    gfp::Gfp,
    inject::{inject, Point},
    layout,
    mm::SlabPages,
    sanitize,
    shim::{self, IrqDisabled},
    slab::{FreePtr, Geometry, Slab},
    stats::Stat,
};
#[cfg(rslub_inject)]
use core::ptr::NonNull;
use core::{mem::offset_of, ptr};
use kernel::{error::code::ENOMEM, prelude::*, sync::atomic::Relaxed};

/// The largest object that [`CacheCore::alloc_fast_only`] zeroes, with preemption off: a
/// few cache lines' worth of stores; a larger one is zeroed by the full path, with
/// preemption on, as 6.12's `slab_post_alloc_hook()` zeroes every object.
pub(crate) const FAST_ZERO_MAX: u32 = 1024;

impl CacheCore {
    /// Allocates an object, on the local node if it can (`kmem_cache_alloc`). The
    /// `Result` forms are the suites'; the C API takes [`CacheCore::alloc_ptr`].
    #[cfg(rslub_inject)]
    #[inline]
    pub(crate) fn alloc(&self, gfp: Gfp) -> Result<NonNull<u8>> {
        self.alloc_node(gfp, NO_NODE)
    }

    /// Allocates an object from node `node` (`NO_NODE`: any, the local one preferred). A
    /// node without memory, online or not, or no node id at all, is no constraint: as in
    /// 6.12, the object comes from any node.
    #[cfg(rslub_inject)]
    #[inline]
    pub(crate) fn alloc_node(&self, gfp: Gfp, node: i32) -> Result<NonNull<u8>> {
        NonNull::new(self.alloc_ptr(gfp, node)).ok_or(ENOMEM)
    }

    /// [`CacheCore::alloc_node`] as the C API returns it: null on failure.
    ///
    /// Fast path: take the head of this CPU's free list with one `cmpxchg16b` on
    /// (freelist, tid), without a lock, an atomic bus operation or interrupts off. The
    /// slow path and the zeroing path are tail calls.
    #[inline(always)]
    pub(crate) fn alloc_ptr(&self, gfp: Gfp, node: i32) -> *mut u8 {
        // A constant: only KASAN and kmemleak kernels take the sanitizer path.
        if sanitize::ON {
            return self.alloc_sanitized(gfp, node);
        }
        self.alloc_raw(gfp, node)
    }

    /// [`CacheCore::alloc_ptr`] without telling the sanitizers.
    #[inline(always)]
    pub(super) fn alloc_raw(&self, gfp: Gfp, node: i32) -> *mut u8 {
        // One `or` (from memory) and one test on the fast path: the flags with the
        // cache's bits in them are the caller's wherever the test falls through.
        let gfp = gfp.with(self.alloc_clears);
        if gfp.any(Gfp::CLEARS) {
            return self.alloc_zeroed(gfp, node);
        }
        self.alloc_object(gfp, node)
    }

    /// `gfp` with the cache's own `alloc_clears` in it (`init_on_alloc`, `init_on_free`):
    /// the allocation clears something where that has any of [`Gfp::CLEARS`]. One `or`
    /// from memory; where the test falls through, the flags are the caller's.
    #[inline(always)]
    pub(crate) fn with_clears(&self, gfp: Gfp) -> Gfp {
        gfp.with(self.alloc_clears)
    }

    /// From a caller's `gfp` (with the cache's `alloc_clears` in it or not): the flags
    /// for [`CacheCore::clear_new`], with `alloc_clears` in them, and those for the
    /// allocation itself, without the cache's [`Gfp::WIPE_FREE_PTR`], which is no kernel
    /// flag. A caller's own bit 31 stays in those (unless the cache sets the mark too), for
    /// the slow path's `unexpected_gfp()` to report, as 6.12's `GFP_SLAB_BUG_MASK` check
    /// does.
    #[inline(always)]
    fn clearing_flags(&self, gfp: Gfp) -> (Gfp, Gfp) {
        (gfp.with(self.alloc_clears), self.without_mark(gfp))
    }

    /// `gfp` (with the cache's `alloc_clears` in it or not) without the cache's own
    /// [`Gfp::WIPE_FREE_PTR`]: flags the kernel may be given. `__GFP_ZERO` from the
    /// cache's `init_on_alloc` may stay: the kernel's allocator zeroes such an object too
    /// (a cache with a constructor, `SLAB_TYPESAFE_BY_RCU` or `SLAB_POISON` has no clearing
    /// bits, as the kernel's `slab_want_init_on_alloc()` has it).
    #[inline(always)]
    pub(crate) fn without_mark(&self, gfp: Gfp) -> Gfp {
        gfp.without(self.alloc_clears & Gfp::WIPE_FREE_PTR)
    }

    /// [`CacheCore::alloc_ptr`] for `__GFP_ZERO`, or a cache whose allocations clear
    /// something (`init_on_alloc`, `init_on_free`): `gfp` as
    /// [`CacheCore::clearing_flags`] takes it.
    #[inline(never)]
    #[cold]
    pub(super) fn alloc_zeroed(&self, gfp: Gfp, node: i32) -> *mut u8 {
        let (clear, gfp) = self.clearing_flags(gfp);
        let object = self.alloc_object(gfp, node);
        if !object.is_null() {
            self.clear_new(object, clear);
        }
        object
    }

    /// Clears `object`, just allocated with `gfp` (the cache's `alloc_clears` in it): all
    /// of it for `__GFP_ZERO`, else its free pointer alone where the cache's
    /// `alloc_clears` is [`Gfp::WIPE_FREE_PTR`] (not for the bit from a caller).
    #[inline(always)]
    pub(super) fn clear_new(&self, object: *mut u8, gfp: Gfp) {
        if gfp.has(Gfp::ZERO) {
            self.zero(object);
        } else if self.alloc_clears == Gfp::WIPE_FREE_PTR {
            // SAFETY: `object` is an object of this cache owned by the caller; its free
            // pointer overlaps it (`WIPE_FREE_PTR`), at an offset aligned for a pointer,
            // and lies inside its stride (`Layout`: `free_offset + POINTER_SIZE <= size`).
            unsafe {
                object
                    .add(self.layout.free_offset as usize)
                    .cast::<usize>()
                    .write(0)
            };
        }
    }

    /// The allocation fast path alone, for a caller that must not take the slow paths
    /// where it stands: the backing layer's fast paths, which must not sleep
    /// (`rust/back/fast.rs`). The object, zeroed where
    /// [`CacheCore::alloc_ptr`] would zero it, or null wherever that would do more than
    /// its fast path: the CPU's free list empty or of another node, a free pointer to
    /// sort out, a commit that failed, or a sanitizer to tell; and an object to zero above
    /// [`FAST_ZERO_MAX`] bytes, which 6.12 zeroes with preemption on. Never sleeps.
    #[inline(always)]
    pub(crate) fn alloc_fast_only(&self, gfp: Gfp, node: i32) -> *mut u8 {
        if sanitize::ON {
            return ptr::null_mut();
        }
        let gfp = self.with_clears(gfp);
        if gfp.any(Gfp::CLEARS) {
            return self.alloc_fast_only_clearing(gfp, node);
        }
        self.alloc_object_in::<true>(gfp, node)
    }

    /// [`CacheCore::alloc_fast_only`] where the allocation clears something
    /// ([`CacheCore::with_clears`]); `gfp` with the cache's `alloc_clears` in it or not.
    /// Inlined, so that a caller may keep it out of its own fast path: `rust/back/fast.rs`
    /// calls it from cold functions of its own, whose plain path then saves no register
    /// for it. A caller that makes the test itself and calls this for those leaves the
    /// other path with no test of its own (the compiler folds the second test into the
    /// first), as [`CacheCore::alloc_fast_only`] does.
    #[inline(always)]
    pub(crate) fn alloc_fast_only_clearing(&self, gfp: Gfp, node: i32) -> *mut u8 {
        if sanitize::ON {
            return ptr::null_mut();
        }
        let (clear, gfp) = self.clearing_flags(gfp);
        if clear.has(Gfp::ZERO) && self.layout.object_size > FAST_ZERO_MAX {
            return ptr::null_mut();
        }
        let object = self.alloc_object_in::<true>(gfp, node);
        if !object.is_null() {
            self.clear_new(object, clear);
        }
        object
    }

    /// The allocation fast path, and the way into the slow path; null on failure.
    #[inline(always)]
    pub(super) fn alloc_object(&self, gfp: Gfp, node: i32) -> *mut u8 {
        self.alloc_object_in::<false>(gfp, node)
    }

    /// [`CacheCore::alloc_object`], or with `FAST_ONLY` its fast path alone: null where
    /// the other would leave it.
    #[inline(always)]
    fn alloc_object_in<const FAST_ONLY: bool>(&self, gfp: Gfp, node: i32) -> *mut u8 {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const NODE: usize = offset_of!(CpuSlab, node);
        let pcpu = self.pcpu();
        // One CPU's copy, read through one pointer: the task may migrate at any point
        // below, but every value comes from the CPU whose `tid` the commit checks. The
        // commit runs on the CPU the task is on then; `tid` carries the CPU number,
        // so on any other CPU it fails, and on that CPU any change since the `tid`
        // was read (an interrupt, another task) has advanced it.
        // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
        let c = unsafe { arch::raw_cpu_ptr(pcpu) };
        // `tid` first: `read_once` keeps the loads in program order, and x86 does not
        // reorder loads with loads.
        // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
        let tid = unsafe { arch::read_once::<TID>(c) };
        // SAFETY: As above.
        let object = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
        // Not with preemption off: a suite's hook may sleep (the race suites drive this
        // path through the C API; the fast path alone is the same code).
        if !FAST_ONLY {
            inject!(self, Point::AllocHeadRead);
        }
        if object.is_null()
            // SAFETY: As above.
            || (node != NO_NODE && unsafe { arch::read_once::<NODE>(c) } != node as u64)
        {
            return if FAST_ONLY {
                ptr::null_mut()
            } else {
                self.alloc_slow(gfp, node)
            };
        }
        if !FAST_ONLY {
            inject!(self, Point::AllocNodeRead);
        }
        // SAFETY: `object` was on a CPU free list of this cache an instant ago, so it is
        // direct-map memory of a slab, or of pages since given back; the direct map
        // stays mapped (caches refuse `debug_pagealloc`, see `check_machine`), and a
        // value read from a reused object is discarded by the failing `cmpxchg16b`.
        let next = unsafe { self.fp.get(object) };
        // A free pointer must stay in its slab: anything else (or the end of the list)
        // is sorted out with interrupts off, where no reuse can race. Unhardened, the end
        // of the list is committed as it is, and a corrupted pointer goes unnoticed.
        if FreePtr::HARDENED && !FreePtr::same_slab(object, next, self.slab_mask) {
            return if FAST_ONLY {
                ptr::null_mut()
            } else {
                self.alloc_unusual(gfp, node)
            };
        }
        // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
        if unsafe { commit(pcpu, object, tid, next) } {
            // SAFETY: The `alloc_fast` counter of this cache's per-cpu area.
            unsafe { arch::this_cpu_inc_at::<{ Self::stat_offset(Stat::AllocFast) }>(pcpu) };
            return object;
        }
        if FAST_ONLY {
            // Counted as `alloc_retry()` counts it; the caller's full path tries afresh.
            // Through `pcpu`, still in a register: the cache itself is not needed again,
            // and its register is free for the caller's miss.
            // SAFETY: The `commit_failed` counter of this cache's per-cpu area.
            unsafe { arch::this_cpu_inc_at::<{ Self::stat_offset(Stat::CommitFailed) }>(pcpu) };
            return ptr::null_mut();
        }
        self.alloc_retry(gfp, node)
    }

    /// [`CacheCore::alloc_object`] again after a failed commit: rare, so out of line (see
    /// `free_retry`).
    #[cold]
    #[inline(never)]
    fn alloc_retry(&self, gfp: Gfp, node: i32) -> *mut u8 {
        self.stat(Stat::CommitFailed);
        self.alloc_object(gfp, node)
    }

    /// Zeroes the object at `object` (`__GFP_ZERO`, `init_on_alloc`, `init_on_free`).
    pub(super) fn zero(&self, object: *mut u8) {
        // SAFETY: `object` is an object of this cache owned by the caller, `object_size`
        // bytes long.
        unsafe { ptr::write_bytes(object, 0, self.layout.object_size as usize) };
    }

    /// The allocation slow path (`___slab_alloc`), with interrupts off on this CPU except
    /// while a new slab comes from the page allocator. Returns null on failure (no
    /// memory): a plain pointer keeps the fast path's caller
    /// free of a stack slot for the result.
    ///
    /// For an explicit node, as SLUB: a node without memory is no constraint; otherwise
    /// that node's partial slabs, then a new slab of that node only, without sleeping
    /// (`Gfp::for_this_node_only`); if that fails, partial slabs of the other nodes, then
    /// a new slab wherever the page allocator finds one with the caller's flags.
    #[inline(never)]
    pub(super) fn alloc_slow(&self, gfp: Gfp, node: i32) -> *mut u8 {
        if self.is_debug() {
            return self.alloc_debug(gfp, node);
        }
        // A node that is not online, or has no memory for slabs, is no constraint (6.12
        // slub.c:3756-3763 tests `slab_nodes`, the nodes with normal memory).
        let node = if node != NO_NODE && !shim::node_has_memory(node) {
            NO_NODE
        } else {
            node
        };
        // First try the node asked for only; `__GFP_THISNODE` from the caller means only.
        let mut this_node_first = node != NO_NODE && !gfp.has(Gfp::THISNODE);
        let mut irq = IrqDisabled::new();
        self.stat(Stat::AllocSlow);
        loop {
            // SAFETY: Interrupts are off, so this CPU's copy is ours until `irq` drops and
            // the fast paths of tasks preempted on this CPU will fail their `cmpxchg16b`
            // on the advanced `tid`.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            let slab = c.slab;
            if slab != NO_SLAB {
                if node != NO_NODE && c.node != node as u64 {
                    self.stat(Stat::NodeMismatch);
                    self.deactivate_active(c);
                    continue;
                }
                // SAFETY: `slab` is frozen by this CPU (invariant), hence live.
                if !partial::pfmemalloc_match(unsafe { &*slab }, gfp) {
                    // A slab of the emergency reserves, and a caller not entitled to
                    // them: it goes back (SLUB's `deactivate_slab` on a mismatch).
                    self.deactivate_active(c);
                    continue;
                }
                let mut object = c.freelist;
                if object.is_null() {
                    // SAFETY: `slab` is frozen by this CPU (invariant), hence live.
                    object = unsafe { (*slab).take_freelist() };
                    if object.is_null() {
                        // The slab is full and `take_freelist` unfroze it: it is on no
                        // list until a free makes it partial.
                        c.clear_active();
                        self.stat(Stat::DeactivateBypass);
                        continue;
                    }
                    self.stat(Stat::RefillFromSlab);
                }
                return self.load_object(c, object);
            }
            if let Some((slab, object)) = self.get_cpu_partial(c, node, gfp) {
                self.install(c, slab, object);
                return self.load_object(c, object);
            }
            let only_node = node != NO_NODE && (this_node_first || gfp.has(Gfp::THISNODE));
            if let Some((slab, object)) = self.get_partial(c, node, only_node, gfp, &irq) {
                self.install(c, slab, object);
                return self.load_object(c, object);
            }
            // A new slab; the page allocator may sleep, so interrupts go back on, and
            // the task may come back on another CPU.
            drop(irq);
            let flags = if this_node_first {
                gfp.for_this_node_only()
            } else {
                gfp
            };
            let new = self.new_slab(flags, node);
            irq = IrqDisabled::new();
            let Ok((slab, object)) = new else {
                if this_node_first {
                    // The node cannot give a slab now: other nodes' partial slabs next.
                    this_node_first = false;
                    continue;
                }
                self.stat(Stat::AllocFailed);
                return ptr::null_mut();
            };
            // SAFETY: As above, for the CPU we are on now.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            // SAFETY: Just made, frozen for this CPU: live.
            if !partial::pfmemalloc_match(unsafe { &*slab }, gfp) {
                // Reserve pages for a caller not entitled to them (the page allocator
                // gave them in another context): this object only; the slab goes to
                // the node, where only entitled callers take it (SLUB's `___slab_alloc`).
                // SAFETY: `object` heads the new slab's private list, ours.
                let rest = unsafe { self.checked_next(object, !((*slab).span() - 1)) };
                // SAFETY: Frozen by us, with its private list `rest`; given up here.
                unsafe { self.deactivate(slab, rest) };
                return object;
            }
            if c.slab != NO_SLAB {
                self.flush(c);
            }
            self.install(c, slab, object);
            return self.load_object(c, object);
        }
    }

    /// Makes `slab` (frozen by the caller, its free list starting at `object`) this CPU's
    /// active slab.
    pub(super) fn install(&self, c: &mut CpuSlab, slab: *mut Slab, object: *mut u8) {
        let tag = if self.free_special { BASE_TAG } else { 0 };
        c.set_active(slab, object, tag, !self.slab_mask + 1);
    }

    /// Hands out `object`, the head of this CPU's free list, keeping the rest.
    pub(super) fn load_object(&self, c: &mut CpuSlab, object: *mut u8) -> *mut u8 {
        // SAFETY: `object` is a free object of this cache owned by this CPU (the head of
        // its list, which the caller holds with interrupts off).
        c.freelist = unsafe { self.checked_next(object, c.mask) };
        c.advance();
        object
    }

    /// The free pointer of `object`, a free object this CPU owns (its private list, with
    /// interrupts off, or the caller's own list) in a slab whose size is `mask`'s
    /// (`!(bytes - 1)`): no reuse can
    /// race, so a pointer out of the slab is corruption. It is reported and the list cut
    /// there: the objects after it are never handed out (nor freed: their slab keeps them
    /// counted in use).
    ///
    /// # Safety
    ///
    /// `object` must be a free object of this cache that the caller owns, in a slab whose
    /// size is `mask`'s.
    pub(super) unsafe fn checked_next(&self, object: *mut u8, mask: usize) -> *mut u8 {
        // SAFETY: `object` is a free object of this cache owned by the caller.
        let next = unsafe { self.fp.get(object) };
        if next.is_null() || FreePtr::same_slab(object, next, mask) {
            return next;
        }
        self.freelist_corrupted(object, next);
        // SAFETY: As above.
        unsafe { self.fp.set(object, ptr::null_mut()) };
        ptr::null_mut()
    }

    /// Reports a free pointer found out of its slab (once per cache; each is counted).
    #[cold]
    pub(super) fn freelist_corrupted(&self, object: *mut u8, next: *mut u8) {
        if self.stats().get(Stat::FreelistCorrupt) == 0 {
            pr_err!(
                "cache {}: free pointer of free object {:p} overwritten (decodes to {:p}, outside its slab); its free list is cut there\n",
                self.name(),
                object,
                next
            );
        }
        self.stat(Stat::FreelistCorrupt);
    }

    /// The fast path's free pointer check failed: the end of the CPU's list, a reuse
    /// racing with the fast path, or corruption. With interrupts off the head and its
    /// free pointer are this CPU's alone: hands the head out, and leaves the CPU's list
    /// with what [`Self::checked_next`] says follows it.
    #[cold]
    #[inline(never)]
    pub(super) fn alloc_unusual(&self, gfp: Gfp, node: i32) -> *mut u8 {
        {
            let _irq = IrqDisabled::new();
            // SAFETY: Interrupts are off: this CPU's copy is ours.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            let object = c.freelist;
            if !object.is_null() && (node == NO_NODE || c.node == node as u64) {
                self.stat(Stat::AllocFast);
                return self.load_object(c, object);
            }
        }
        self.alloc_slow(gfp, node)
    }

    /// Allocates and formats a new slab, frozen, for the calling CPU, with the flags of
    /// [`crate::gfp`]: the preferred order may fail quietly (then the smallest order that
    /// holds one object, with `gfp` as given), the metadata takes the reclaim bits of
    /// `gfp`. Interrupts must be on if `gfp` may sleep.
    pub(super) fn new_slab(&self, gfp: Gfp, node: i32) -> Result<(*mut Slab, *mut u8)> {
        let l = &self.layout;
        if gfp.slab_bug_bits() != 0 || (self.ctor.is_some() && gfp.has(Gfp::ZERO)) {
            self.unexpected_gfp(gfp);
        }
        let gfp = gfp.for_pages();
        // 6.12's `s->allocflags` (`calculate_sizes()`): reclaimable page blocks for a
        // `SLAB_RECLAIM_ACCOUNT` cache.
        let gfp = if l.reclaim_account {
            gfp.with(Gfp::RECLAIMABLE)
        } else {
            gfp
        };
        let min_order = layout::get_order(u64::from(l.size));
        let (pages, order) = if l.order > min_order {
            match self.alloc_pages(gfp.for_preferred_order(), node, l.order) {
                Some(p) => (p, l.order),
                None => {
                    let p = self.alloc_pages(gfp, node, min_order).ok_or(ENOMEM)?;
                    // Counted once the smaller order gave pages, as 6.12's
                    // `allocate_slab()` (slub.c:2650-2659): a fallback that fails too
                    // is none.
                    self.stat(Stat::OrderFallback);
                    (p, min_order)
                }
            }
        } else {
            (self.alloc_pages(gfp, node, l.order).ok_or(ENOMEM)?, l.order)
        };
        let g = Geometry {
            size: l.size,
            fp: self.fp,
            objects: layout::order_objects(order, l.stride()),
            seq: self.random_seq.as_deref(),
        };
        let (slab, object) = Slab::new_frozen(pages, g, ptr::from_ref(self).cast(), self.ctor);
        if sanitize::KASAN {
            // Every object is free and the leftover no object: red zone to KASAN, until
            // an object is handed out. After the constructors, whose writes KASAN checks.
            // SAFETY: The slab's pages, direct-map and granule aligned, ours.
            unsafe { shim::kasan_poison(slab.base(), slab.span(), false) };
        }
        let meta = gfp.for_metadata();
        if inject!(self, Point::MetaAlloc { gfp: meta.raw() }) {
            return Err(ENOMEM);
        }
        let slab = slab.publish(meta, self.shadow.as_ptr())?;
        // SAFETY: Just published, live.
        let s = unsafe { slab.as_ref() };
        self.node(s.node).slab_added(s.objects, s.nr_pages());
        self.stat(Stat::NewSlab);
        Ok((slab.as_ptr(), object))
    }

    /// Reports flags a caller must not pass, as SLUB's `new_slab()` does (with the stack):
    /// bits of `GFP_SLAB_BUG_MASK` (every time, as `kmalloc_fix_flags()`; the caller then
    /// drops them), and `__GFP_ZERO` for a cache with a constructor (once per cache: the
    /// object is zeroed, so the constructor's work is lost).
    #[cold]
    #[inline(never)]
    fn unexpected_gfp(&self, gfp: Gfp) {
        let bad = gfp.slab_bug_bits();
        let mut reported = false;
        if bad != 0 {
            inject!(self, Point::UnexpectedGfp { bad });
            pr_warn!(
                "cache {}: unexpected gfp: {:#x}. Fixing up to gfp: {:#x}. Fix your code!\n",
                self.name(),
                bad,
                gfp.raw() & !bad
            );
            reported = true;
        }
        if self.ctor.is_some()
            && gfp.has(Gfp::ZERO)
            && self.zero_with_ctor_reported.xchg(1, Relaxed) == 0
        {
            pr_warn!(
                "cache {}: __GFP_ZERO with a constructor zeroes the constructed object. Fix your code!\n",
                self.name()
            );
            reported = true;
        }
        if reported {
            shim::dump_stack();
        }
    }

    /// `2^order` pages on `node` with exactly `gfp`.
    pub(super) fn alloc_pages(&self, gfp: Gfp, node: i32, order: u32) -> Option<SlabPages> {
        if inject!(
            self,
            Point::PageAlloc {
                gfp: gfp.raw(),
                order,
                node
            }
        ) {
            return None;
        }
        #[cfg(rslub_inject)]
        if let Some(pages) = crate::inject::take_given_pages(self.id(), order) {
            return Some(pages);
        }
        SlabPages::alloc(node, gfp, order)
    }

    /// Fills `out` with objects; on failure frees what it took and returns the error,
    /// leaving `out` all null.
    pub(crate) fn alloc_bulk(&self, gfp: Gfp, out: &mut [*mut u8]) -> Result {
        self.alloc_bulk_raw(gfp, out)?;
        if sanitize::ON {
            for &object in out.iter() {
                self.sanitize_alloc(object, gfp);
            }
        }
        Ok(())
    }

    /// [`CacheCore::alloc_bulk`] without telling the sanitizers.
    fn alloc_bulk_raw(&self, gfp: Gfp, out: &mut [*mut u8]) -> Result {
        let mut i = 0;
        while i < out.len() {
            {
                let _irq = IrqDisabled::new();
                // SAFETY: Interrupts are off: this CPU's copy is ours.
                let c = unsafe { &mut *self.cpu.this_cpu() };
                let mut taken = 0u64;
                // Read once: the loop's stores through raw pointers keep the compiler
                // from hoisting it.
                let mask = c.mask;
                while i < out.len() && !c.freelist.is_null() {
                    let object = c.freelist;
                    // SAFETY: `object` is on this CPU's private free list.
                    c.freelist = unsafe { self.checked_next(object, mask) };
                    out[i] = object;
                    i += 1;
                    taken += 1;
                }
                c.advance();
                // SAFETY: Per-cpu counter of this cache.
                unsafe {
                    arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::AllocFast), taken)
                };
            }
            if i < out.len() {
                let object = self.alloc_slow(gfp, NO_NODE);
                if object.is_null() {
                    // SAFETY: `out[..i]` were just allocated from this cache, and not yet
                    // handed to the sanitizers.
                    unsafe { self.free_bulk_raw(&mut out[..i]) };
                    out[..i].fill(ptr::null_mut());
                    return Err(ENOMEM);
                }
                out[i] = object;
                i += 1;
            }
        }
        if self.with_clears(gfp).any(Gfp::CLEARS) {
            let (clear, _) = self.clearing_flags(gfp);
            for &object in out.iter() {
                self.clear_new(object, clear);
            }
        }
        Ok(())
    }
}
