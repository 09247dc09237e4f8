// SPDX-License-Identifier: GPL-2.0

//! The free paths of a cache: the lock-free fast path into the CPU's active slab, the
//! slow path onto a slab's shared list (and between lists under the node lock), and bulk
//! free. The design is described once, in the crate documentation (`rust/rslub.rs`).

use super::{commit, CacheCore, CpuSlab, BASE_TAG, NO_SLAB};
use crate::{
    arch,
    inject::{inject, Point},
    params::Profile,
    sanitize,
    shim::IrqDisabled,
    slab::{self, FreePtr, Slab, ON_CPU_PARTIAL},
    stats::Stat,
};
use core::{mem::offset_of, ptr, ptr::NonNull};

impl CacheCore {
    /// Frees `object` (`kmem_cache_free`).
    ///
    /// Fast path: the object lies in this CPU's active slab; push it on the CPU free list
    /// with one `cmpxchg16b` on (freelist, tid).
    ///
    /// Once the object is free, the cache may be destroyed by another CPU (destruction
    /// allows frees of objects still allocated to race with it): no path touches the cache
    /// after the update that frees the object, except to release a node lock that
    /// destruction takes before it counts (see [`CacheCore::shutdown`]).
    ///
    /// # Safety
    ///
    /// `object` must have been allocated from this cache and not freed since, and must not
    /// be used afterwards.
    #[inline]
    pub(crate) unsafe fn free(&self, object: NonNull<u8>) {
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_ptr(object.as_ptr()) }
    }

    /// [`CacheCore::free`] as the C API calls it: `object` may also be null (nothing to
    /// do). Null, `init_on_free` and debug caches never match the fast path's compare
    /// (see [`CpuSlab`]'s `base`), so the fast path tests none of them.
    ///
    /// # Safety
    ///
    /// `object` must be null or as for [`CacheCore::free`].
    #[inline(always)]
    pub(crate) unsafe fn free_ptr(&self, object: *mut u8) {
        // A constant: only KASAN and kmemleak kernels take the sanitizer path.
        if sanitize::ON {
            // SAFETY: The caller's guarantees pass on.
            return unsafe { self.free_sanitized(object) };
        }
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_raw(object) }
    }

    /// [`CacheCore::free_ptr`] without telling the sanitizers.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_ptr`].
    #[inline(always)]
    pub(super) unsafe fn free_raw(&self, object: *mut u8) {
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object::<0>(object) }
    }

    /// The free fast path, and the way into the slow path: with `TAG` 0, the path of
    /// every free; with [`BASE_TAG`], the path of a cache with `free_special` once
    /// [`CacheCore::free_unusual`] has done what it needs.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_ptr`]; with `TAG` [`BASE_TAG`], `object` is not null.
    #[inline(always)]
    unsafe fn free_object<const TAG: u64>(&self, object: *mut u8) {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const BASE: usize = offset_of!(CpuSlab, base);
        const FREE_FAST: usize = CacheCore::stat_offset(Stat::FreeFast);
        let pcpu = self.pcpu();
        // As in `alloc_node`: one CPU's copy, `tid` first; the commit fails on any other
        // CPU, so the active slab compared here is the one the commit checks.
        // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
        let c = unsafe { arch::raw_cpu_ptr(pcpu) };
        // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
        let tid = unsafe { arch::read_once::<TID>(c) };
        inject!(self, Point::FreeTidRead);
        // SAFETY: As above.
        let base = unsafe { arch::read_once::<BASE>(c) } ^ TAG;
        // An active slab of the fallback order matches no object (`FALLBACK_TAG`).
        if !FreePtr::same_slab(object, base as usize as *mut u8, self.slab_mask) {
            return if TAG == 0 {
                // SAFETY: The caller's guarantees pass on.
                unsafe { self.free_slow(object) }
            } else {
                // SAFETY: As above; not null (caller), and already zeroed.
                unsafe { self.free_to_slab(object) }
            };
        }
        inject!(self, Point::FreeSlabRead);
        // SAFETY: As above.
        let head = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
        // SAFETY: `object` is in the CPU's active slab, so not null, and the caller owns
        // it: a free-to-be object of this cache.
        unsafe { self.fp.set(object, head) };
        // Counted before the commit, which is the last touch of the cache.
        // SAFETY: The `free_fast` counter of this cache's per-cpu area.
        unsafe { arch::this_cpu_inc_at::<FREE_FAST>(pcpu) };
        // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
        if unsafe { commit(pcpu, head, tid, object) } {
            return;
        }
        // Not freed: the object is still live, so is the cache.
        // SAFETY: As above.
        unsafe { arch::this_cpu_dec_at::<FREE_FAST>(pcpu) };
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_retry::<TAG>(object) }
    }

    /// [`CacheCore::free_object`] again after a failed commit (the task was interrupted,
    /// preempted or moved between its reads and its commit): rare, so out of line, and
    /// the fast path is straight-line code (no loop for the compiler to align with
    /// padding that every call would run through).
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_object`].
    #[cold]
    #[inline(never)]
    unsafe fn free_retry<const TAG: u64>(&self, object: *mut u8) {
        self.stat(Stat::CommitFailed);
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object::<TAG>(object) }
    }

    /// Where the fast path sends every free it does not do: null, a cache with
    /// `free_special`, an object outside this CPU's active slab.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_ptr`].
    #[inline(never)]
    unsafe fn free_slow(&self, object: *mut u8) {
        if object.is_null() {
            return;
        }
        if self.free_special {
            // SAFETY: The caller's guarantees pass on.
            return unsafe { self.free_unusual(object) };
        }
        // SAFETY: As above.
        unsafe { self.free_to_slab(object) }
    }

    /// [`CacheCore::free`] with `init_on_free`, or into a debug cache.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`]; a debug cache checks what it can of that.
    #[cold]
    unsafe fn free_unusual(&self, object: *mut u8) {
        if self.is_debug() {
            return self.free_debug(object);
        }
        self.zero(object);
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object::<BASE_TAG>(object) }
    }

    /// The free slow path (`__slab_free`): the object is not in this CPU's active slab.
    /// Push it on its slab's shared list with `lock cmpxchg16b`; a slab that was full goes
    /// onto this CPU's partial list; only when a slab on a node list becomes empty (or,
    /// with `cpu_partial` 0, when one becomes partial) take the node lock.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`].
    unsafe fn free_to_slab(&self, object: *mut u8) {
        // SAFETY: A pointer passed to free is a direct-map address (an object of some
        // slab, by the caller's contract); its slab is read only if the page is one of
        // this cache's.
        let Some(slab) = (unsafe { slab::slab_if_of(object, self.shadow.as_ptr()) }) else {
            return self.foreign_free(object);
        };
        self.stat(Stat::FreeSlow);
        // SAFETY: One object is a chain of one.
        unsafe { self.free_chain(slab, object, object, 1) }
    }

    /// Frees `count` objects of `slab` chained from `head` to `tail` through their free
    /// pointers (the free pointer of `tail` is set here), with one update of the slab.
    /// The caller counts it (`free_slow`).
    ///
    /// # Safety
    ///
    /// The objects are live objects of this cache in `slab`, owned by the caller and not
    /// used afterwards; the chain links exactly them.
    pub(super) unsafe fn free_chain(
        &self,
        slab: *mut Slab,
        head: *mut u8,
        tail: *mut u8,
        count: u32,
    ) {
        const FREE_FROZEN: usize = CacheCore::stat_offset(Stat::FreeFrozen);
        const SLAB: usize = offset_of!(CpuSlab, slab);
        let pcpu = self.pcpu();
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        loop {
            let old = s.state();
            if old.moves_on_free(count) {
                // The slab changes lists (full to partial, or empty): out of line, as a
                // tail call (which is why `old` is read there again).
                // SAFETY: As for this function.
                return unsafe { self.free_chain_moving(slab, head, tail, count) };
            }
            // A frozen slab (some CPU's active slab), one on a CPU's partial list (which
            // gives it back, empty or not, when it gives its list back), or one on a node
            // list that stays there: the objects go on its shared list, nothing else
            // changes. Counted before the update, which is the last touch of the cache.
            if old.frozen() {
                // This CPU's own active slab, which the fast path cannot see as such when
                // it is of the fallback order (`FALLBACK_TAG`): out of line, as a tail
                // call, so that this loop makes no call and needs no frame. Only frees
                // into frozen slabs pay for the test (a load and a compare).
                // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`, so `raw_cpu_ptr`
                // gives one CPU's copy, live, whose `slab` is an aligned `u64`.
                if unsafe { arch::read_once::<SLAB>(arch::raw_cpu_ptr(pcpu)) }
                    == slab as usize as u64
                {
                    // SAFETY: As for this function.
                    return unsafe { self.free_to_own_slab(slab, head, tail, count) };
                }
                // The offset folded into the instruction (`this_cpu_inc_at`): no register
                // holds it across the loop.
                // SAFETY: The `free_frozen` counter of this cache's per-cpu area.
                unsafe { arch::this_cpu_inc_at::<FREE_FROZEN>(pcpu) };
            }
            // SAFETY: As for this function.
            if unsafe { s.try_splice(self.fp, old, head, tail, count, None) }.is_some() {
                return;
            }
            if old.frozen() {
                // SAFETY: As above.
                unsafe { arch::this_cpu_dec_at::<FREE_FROZEN>(pcpu) };
            }
        }
    }

    /// [`CacheCore::free_chain`] into a frozen slab, without looking at whose it is: the
    /// objects go on its shared list (`FREE_FROZEN`). Where the free of a chain into this
    /// CPU's own active slab ends when [`CacheCore::free_to_own_slab`] finds the fast
    /// path's update not to apply; a slab no longer frozen goes back to
    /// [`CacheCore::free_chain`].
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_chain`].
    #[inline(never)]
    unsafe fn free_chain_frozen(&self, slab: *mut Slab, head: *mut u8, tail: *mut u8, count: u32) {
        const FREE_FROZEN: usize = CacheCore::stat_offset(Stat::FreeFrozen);
        let pcpu = self.pcpu();
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        loop {
            let old = s.state();
            if !old.frozen() {
                // SAFETY: As for this function.
                return unsafe { self.free_chain(slab, head, tail, count) };
            }
            // SAFETY: The `free_frozen` counter of this cache's per-cpu area.
            unsafe { arch::this_cpu_inc_at::<FREE_FROZEN>(pcpu) };
            // SAFETY: As for this function.
            if unsafe { s.try_splice(self.fp, old, head, tail, count, None) }.is_some() {
                return;
            }
            // SAFETY: As above.
            unsafe { arch::this_cpu_dec_at::<FREE_FROZEN>(pcpu) };
        }
    }

    /// The free fast path's update, for a chain of objects of this CPU's active slab
    /// when that slab is of the fallback order: its `base` carries
    /// [`FALLBACK_TAG`](super::FALLBACK_TAG), so the fast path sent the free here. 6.12's
    /// `do_slab_free()` compares the object's slab with the CPU's whatever its order
    /// (slub.c:4636-4667): the chain goes on the CPU's free list with one `cmpxchg16b` on
    /// (freelist, tid), and counts `count` fast frees instead of the slow one the caller
    /// counted. Where it does not (`slab` is not, or no longer, the active slab of the CPU
    /// the task runs on, or is of the cache's order: the fast path decided for it
    /// already, as 6.12's decides once), the chain goes on the slab's shared list
    /// ([`CacheCore::free_chain_frozen`]).
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_chain`].
    #[inline(never)]
    unsafe fn free_to_own_slab(&self, slab: *mut Slab, head: *mut u8, tail: *mut u8, count: u32) {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const SLAB: usize = offset_of!(CpuSlab, slab);
        const FREE_FAST: usize = CacheCore::stat_offset(Stat::FreeFast);
        const FREE_SLOW: usize = CacheCore::stat_offset(Stat::FreeSlow);
        // SAFETY: The objects are live, so their slab is.
        if unsafe { (*slab).span() } == !self.slab_mask + 1 {
            // SAFETY: As for this function.
            return unsafe { self.free_chain_frozen(slab, head, tail, count) };
        }
        let pcpu = self.pcpu();
        loop {
            // As in `free_object`: one CPU's copy, `tid` first; the commit fails on any
            // other CPU, and on this one after any change of its active slab since.
            // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
            let c = unsafe { arch::raw_cpu_ptr(pcpu) };
            // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
            let tid = unsafe { arch::read_once::<TID>(c) };
            // SAFETY: As above.
            if unsafe { arch::read_once::<SLAB>(c) } != slab as usize as u64 {
                // SAFETY: As for this function.
                return unsafe { self.free_chain_frozen(slab, head, tail, count) };
            }
            // SAFETY: As above.
            let first = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
            // SAFETY: `tail` is an object of `slab` the caller owns.
            unsafe { self.fp.set(tail, first) };
            // Counted before the commit, which is the last touch of the cache: the slow
            // free the caller counted becomes `count` fast ones.
            // SAFETY: The counters of this cache's per-cpu area.
            unsafe {
                arch::this_cpu_dec_at::<FREE_SLOW>(pcpu);
                arch::this_cpu_add(pcpu, FREE_FAST, u64::from(count));
            }
            // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`; on success the chain,
            // objects of that CPU's active slab, heads its free list.
            if unsafe { commit(pcpu, first, tid, head) } {
                return;
            }
            // Not freed: the objects are still live, so is the cache. Taken back (the
            // addition of `2^64 - count` subtracts `count`).
            // SAFETY: As above.
            unsafe {
                arch::this_cpu_inc_at::<FREE_SLOW>(pcpu);
                arch::this_cpu_add(pcpu, FREE_FAST, u64::from(count).wrapping_neg());
            }
            self.stat(Stat::CommitFailed);
        }
    }

    /// [`CacheCore::free_chain`] for a slab that changes lists (neither frozen nor on a
    /// CPU's partial list): a full slab goes onto this CPU's partial list, without the
    /// node lock (`put_cpu_partial`); with `cpu_partial` 0, or for a partial slab
    /// becoming empty, the node lock decides. A slab that is neither any more (the state
    /// changed since the caller read it) goes back to [`CacheCore::free_chain`].
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_chain`].
    #[inline(never)]
    unsafe fn free_chain_moving(&self, slab: *mut Slab, head: *mut u8, tail: *mut u8, count: u32) {
        // SAFETY: The objects are live, so their slab is.
        let old = unsafe { (*slab).state() };
        if !old.moves_on_free(count) {
            // SAFETY: As for this function.
            return unsafe { self.free_chain(slab, head, tail, count) };
        }
        if !old.freelist.is_null() || self.cpu_partial() == 0 {
            // SAFETY: As for this function.
            return unsafe { self.free_chain_locked(slab, head, tail, count) };
        }
        // A full slab, partial or even empty now: as SLUB, onto this CPU's list without
        // the node lock; the list gives empty slabs back (or reuses them) later. This
        // touches the cache after the update that frees the objects, which the other
        // free paths avoid (see [`CacheCore::free`]); here it is safe: until this CPU
        // puts the slab on its list it is on none, and destruction counts every object
        // of such a slab as in use, so it keeps the cache. Interrupts go off before the
        // update, so no flush of this CPU runs in between.
        let irq = IrqDisabled::new();
        // SAFETY: The objects are live, so their slab is; the caller's guarantees pass on.
        if unsafe { (*slab).try_splice(self.fp, old, head, tail, count, Some(ON_CPU_PARTIAL)) }
            .is_some()
        {
            self.put_cpu_partial(slab, &irq);
            return;
        }
        drop(irq);
        // The state changed meanwhile: decide again.
        // SAFETY: As for this function.
        unsafe { self.free_chain(slab, head, tail, count) }
    }

    /// The part of the free slow path that may move the slab between lists. All of it
    /// runs under the node lock, including giving an emptied slab back: destruction takes
    /// every node lock before it counts what is left, so it never sees a slab half gone.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_chain`].
    pub(super) unsafe fn free_chain_locked(
        &self,
        slab: *mut Slab,
        head: *mut u8,
        tail: *mut u8,
        count: u32,
    ) {
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        let node = self.node(s.node);
        let min_partial = self.min_partial();
        self.stat(Stat::FreeLocked);
        let irq = IrqDisabled::new();
        let mut g = self.lock_node(node, &irq);
        // SAFETY: The caller owns the chain, objects of `slab`.
        let (old, new) = unsafe { s.splice(self.fp, head, tail, count, None) };
        if old.frozen() {
            // A CPU took the slab meanwhile; it will sort it out.
            return;
        }
        // SAFETY: `slab` is a live slab of this node and the lock is held.
        let on_partial = unsafe { g.list().contains(slab) };
        if !old.freelist.is_null() && !on_partial {
            // Being deactivated by the CPU that had it: it places the slab itself.
            return;
        }
        // Partial slabs the node holds: as 6.12 counts them (slub.c:4571), this one too
        // if it is on the list; the tuned profile counts only the others, so that a node
        // keeps `min_partial` slabs besides the one emptied (one more empty slab).
        let held = match self.profile() {
            Profile::Classic => g.list().len(),
            Profile::Tuned => g.list().len() - u32::from(on_partial),
        };
        if new.inuse() == 0 && held >= min_partial {
            if on_partial {
                // SAFETY: `slab` is on this list; lock held.
                unsafe { g.list().remove(slab) };
                self.stat(Stat::FreeRemovePartial);
            }
            inject!(self, Point::FreeDiscard);
            // SAFETY: Empty, off the lists, not frozen: nothing refers to it any more.
            // Freeing pages under a spinlock is allowed.
            unsafe { self.discard(slab) };
            return;
        }
        if old.freelist.is_null() {
            // Was full, so on no list: now partial (or empty and kept).
            // SAFETY: `slab` is a live slab of this node on no list; lock held.
            unsafe { g.list().add(slab, false) };
            self.stat(Stat::FreeAddPartial);
        }
    }

    /// Frees every object of `objects` (null entries are skipped), with one update per
    /// chain of objects of one slab: onto this CPU's free list if the slab is its active
    /// slab, else onto the slab's shared list. How the chains are found is the profile's:
    ///
    /// - classic, as 6.12's `kmem_cache_free_bulk`: from the end of the array, each object
    ///   and the objects of its slab met before the third of another slab
    ///   (`build_detached_freelist`, which moves them to the end of what is left of the
    ///   array, so the entries come back reordered); as 6.12's `do_slab_free()`, a chain
    ///   of the CPU's active slab counts its objects as fast frees (`stat_add(s,
    ///   FREE_FASTPATH, cnt)`, slub.c:4667), any other chain one slow free (`__slab_free`);
    /// - tuned: from the start, each run of consecutive objects of one slab (what bulk
    ///   allocation hands out), the objects of the active slab one by one onto this CPU's
    ///   list, each counted as a fast free (as classic counts them), any other run one
    ///   slow free; 9 to 15 instructions an object fewer than the look-ahead
    ///   (`make bench`, bulk16 and bulk128) on such arrays, more slow updates on arrays
    ///   that mix slabs (a backed cache's callers may pass those).
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`], for each element.
    pub(crate) unsafe fn free_bulk(&self, objects: &mut [*mut u8]) {
        if sanitize::ON {
            for &object in objects.iter() {
                // SAFETY: The caller's guarantees, for each element.
                unsafe { self.free_sanitized(object) };
            }
            return;
        }
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_bulk_raw(objects) }
    }

    /// [`CacheCore::free_bulk`] without telling the sanitizers.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_bulk`].
    pub(super) unsafe fn free_bulk_raw(&self, objects: &mut [*mut u8]) {
        if self.is_debug() {
            for &object in objects.iter().filter(|o| !o.is_null()) {
                self.free_debug(object);
            }
            return;
        }
        if self.init_on_free {
            for &object in objects.iter().filter(|o| !o.is_null()) {
                self.zero(object);
            }
        }
        match self.profile() {
            // SAFETY: The caller's guarantees pass on.
            Profile::Classic => unsafe { self.free_detached::<false>(objects) },
            // SAFETY: The caller's guarantees pass on.
            Profile::Tuned => unsafe { self.free_runs::<false>(objects) },
        };
    }

    /// [`CacheCore::free_bulk`] of an array that may hold pointers on no slab of this
    /// cache (a backed cache's `kmem_cache_free_bulk()`: the kernel's objects from before
    /// the backing): frees the cache's own objects and moves every other pointer to the
    /// front of the array, where the free would report it; returns how many it moved
    /// there, for the caller to free where they belong once interrupts are back on. `None`,
    /// with nothing freed, where this cache looks at each object before it frees it (debug
    /// checks, sanitizers, `init_on_free`): the caller must sort the array itself then.
    ///
    /// # Safety
    ///
    /// Each non-null element must be a direct-map address that is either a live object of
    /// this cache, given up by the caller, or an object of a slab that is not this
    /// cache's.
    #[inline(always)]
    pub(crate) unsafe fn free_bulk_mixed(&self, objects: &mut [*mut u8]) -> Option<usize> {
        if sanitize::ON || self.is_debug() || self.init_on_free {
            return None;
        }
        Some(match self.profile() {
            Profile::Classic => {
                // SAFETY: The caller's guarantees; what is not this cache's is kept.
                let kept = unsafe { self.free_detached::<true>(objects) };
                // The kept pointers are at the end: to the front (rarely any: a call
                // to copy nothing would cost a bulk free of 16 one instruction an object).
                if kept != 0 {
                    objects.copy_within(objects.len() - kept.., 0);
                }
                kept
            }
            // SAFETY: As above.
            Profile::Tuned => unsafe { self.free_runs::<true>(objects) },
        })
    }

    /// [`CacheCore::free_bulk`]'s chains under the tuned profile: runs of consecutive
    /// objects of one slab. A pointer on no slab of this cache is reported, or with
    /// `KEEP` kept: moved to the front of the array (over entries already done), and
    /// counted in the value returned.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_bulk`], or with `KEEP` [`CacheCore::free_bulk_mixed`].
    unsafe fn free_runs<const KEEP: bool>(&self, objects: &mut [*mut u8]) -> usize {
        let mut kept = 0;
        let _irq = IrqDisabled::new();
        // Interrupts are off: this CPU's copy is ours. Borrowed anew for each use, as the
        // slow path below takes it too (for the CPU's partial list).
        let cp = self.cpu.this_cpu();
        let mut fast = 0u64;
        // The CPU's active slab as last seen, and its block (a slab is a naturally aligned
        // block of pages): an object is in it when its address differs from the block's
        // only in the bits below the block's size, which needs no look at its page. With
        // no active slab (`NO_SLAB`), a block no pointer is in (address 1, every bit).
        let mut active = (NO_SLAB, 1usize, usize::MAX);
        let mut i = 0;
        while i < objects.len() {
            let first = objects[i];
            i += 1;
            if first.is_null() {
                continue;
            }
            // SAFETY: See `cp`; no other reference to it is live here.
            let c = unsafe { &mut *cp };
            if c.slab != active.0 {
                active = if c.slab == NO_SLAB {
                    (NO_SLAB, 1, usize::MAX)
                } else {
                    // SAFETY: The CPU's active slab, live while it is (interrupts off).
                    let s = unsafe { &*c.slab };
                    (c.slab, s.base() as usize, !(s.span() - 1))
                };
            }
            if (first as usize ^ active.1) & active.2 == 0 {
                // SAFETY: The caller owns `first`, an object of this cache in the pages of
                // the CPU's active slab.
                unsafe { self.fp.set(first, c.freelist) };
                c.freelist = first;
                fast += 1;
                continue;
            }
            // SAFETY: As above.
            let Some(slab) = (unsafe { slab::slab_if_of(first, self.shadow.as_ptr()) }) else {
                if KEEP {
                    // `objects[..i]` are done: `kept` is at most `i - 1`, `first`'s place.
                    objects[kept] = first;
                    kept += 1;
                } else {
                    self.foreign_free(first);
                }
                continue;
            };
            // Chain the run of objects of the same slab in front of `first`: those in its
            // naturally aligned block of pages (a null entry ends the run).
            // SAFETY: `first` lies on a slab page of this cache (checked), which holds
            // `slab`, live while the caller owns `first`.
            let outside = !(unsafe { (*slab).span() } - 1);
            let of_slab = |o: *mut u8| !o.is_null() && (o as usize ^ first as usize) & outside == 0;
            let (mut head, mut count) = (first, 1u32);
            while i < objects.len() && of_slab(objects[i]) {
                // SAFETY: The caller owns `objects[i]`.
                unsafe { self.fp.set(objects[i], head) };
                head = objects[i];
                count += 1;
                i += 1;
            }
            self.stat(Stat::FreeSlow);
            // SAFETY: `head`..`first` chains `count` objects of `slab` owned by the caller;
            // the slow path takes its own locks (interrupts may already be off).
            unsafe { self.free_chain(slab, head, first, count) };
        }
        // SAFETY: `cp` is this CPU's copy, interrupts still off; `fast` counts what went
        // on its list above.
        unsafe { self.free_bulk_end(cp, fast) };
        kept
    }

    /// [`CacheCore::free_bulk`]'s chains under the classic profile: 6.12's
    /// `build_detached_freelist`. A pointer on no slab of this cache is reported, or with
    /// `KEEP` kept: moved to the end of the array (over entries already done), and counted
    /// in the value returned.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_bulk`], or with `KEEP` [`CacheCore::free_bulk_mixed`].
    unsafe fn free_detached<const KEEP: bool>(&self, objects: &mut [*mut u8]) -> usize {
        let mut kept = 0;
        let _irq = IrqDisabled::new();
        // Interrupts are off: this CPU's copy is ours. Borrowed anew for each use, as the
        // slow path below takes it too (for the CPU's partial list).
        let cp = self.cpu.this_cpu();
        let mut fast = 0u64;
        let mut size = objects.len();
        while size > 0 {
            size -= 1;
            let tail = objects[size];
            if tail.is_null() {
                continue;
            }
            // SAFETY: The caller guarantees a live object of this cache, or with `KEEP` one
            // of another slab: a direct-map address either way. On a kernel slab the word
            // read is the kernel's own (`slab_list`: a `struct slab` in the memmap, a
            // `kmem_cache_node`'s list head, or poison), never a live slab of rslub's, so
            // it is not the CPU's active slab, and the ownership test below decides.
            let mut slab = unsafe { slab::slab_of(tail) };
            // The CPU's active slab is this cache's, unless there is none (`NO_SLAB`, 1,
            // which a stale pointer's page may hold: see `free_runs`).
            // SAFETY: See `cp`; no other reference to it is live here.
            if slab == NO_SLAB || slab != unsafe { (*cp).slab } {
                // SAFETY: As above.
                let Some(own) = (unsafe { slab::slab_if_of(tail, self.shadow.as_ptr()) }) else {
                    if KEEP {
                        // `objects[size..]` are done, `tail`'s place included, and at
                        // least `kept + 1` of them.
                        let end = objects.len() - 1 - kept;
                        objects[end] = tail;
                        kept += 1;
                    } else {
                        self.foreign_free(tail);
                    }
                    continue;
                };
                slab = own;
            }
            // SAFETY: The caller owns `tail`, an object of `slab`.
            unsafe { self.fp.set(tail, ptr::null_mut()) };
            // The objects of `slab` are those in its naturally aligned block of pages.
            // SAFETY: `tail` is an object of this cache (checked, or on this CPU's active
            // slab), so `slab` is its live slab.
            let outside = !(unsafe { (*slab).span() } - 1);
            let (mut head, mut count) = (tail, 1u32);
            // `objects[same..size]` are chained already; the rest is `objects[..same]`.
            let mut same = size;
            let mut lookahead = 3;
            while size > 0 {
                size -= 1;
                let object = objects[size];
                if !object.is_null() && (object as usize ^ tail as usize) & outside == 0 {
                    // SAFETY: The caller owns `object`, an object of `slab`.
                    unsafe { self.fp.set(object, head) };
                    head = object;
                    count += 1;
                    same -= 1;
                    objects.swap(size, same);
                    continue;
                }
                lookahead -= 1;
                if lookahead == 0 {
                    break;
                }
            }
            size = same;
            // SAFETY: See `cp`; no other reference to it is live here.
            let c = unsafe { &mut *cp };
            if slab == c.slab {
                // SAFETY: The caller owns the chain, objects of the CPU's active slab.
                unsafe { self.fp.set(tail, c.freelist) };
                c.freelist = head;
                // Each object of the chain is a fast free (6.12 slub.c:4667).
                fast += u64::from(count);
                continue;
            }
            self.stat(Stat::FreeSlow);
            // SAFETY: `head`..`tail` chains `count` objects of `slab` owned by the caller;
            // the slow path takes its own locks (interrupts may already be off).
            unsafe { self.free_chain(slab, head, tail, count) };
        }
        // SAFETY: `cp` is this CPU's copy, interrupts still off; `fast` counts what went
        // on its list above.
        unsafe { self.free_bulk_end(cp, fast) };
        kept
    }

    /// The end of a bulk free that put `fast` objects on this CPU's list: its `tid`
    /// advances (a fast path preempted meanwhile retries) and they are counted, one fast
    /// free each.
    ///
    /// # Safety
    ///
    /// `cp` is this CPU's copy; `fast` counts the objects the caller put on its list in
    /// this same section with interrupts off, which are still off (so that,
    /// when it is not 0, this CPU still has an active slab of this cache, and destruction,
    /// which flushes every CPU first, cannot have freed the cache).
    unsafe fn free_bulk_end(&self, cp: *mut CpuSlab, fast: u64) {
        // Only if objects went on this CPU's list: then this CPU still has its active
        // slab, so the cache is not being destroyed (destruction flushes every CPU,
        // which waits for interrupts to come back on here). Otherwise the last update
        // above may have freed the last object, and the cache must not be touched.
        if fast != 0 {
            // SAFETY: `cp` is this CPU's copy, interrupts off (the caller's guarantee).
            unsafe { (*cp).advance() };
            // SAFETY: Per-cpu counter of this cache.
            unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::FreeFast), fast) };
        }
    }
}
