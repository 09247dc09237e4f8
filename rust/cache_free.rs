// SPDX-License-Identifier: GPL-2.0

//! The free paths of a cache: the lock-free fast path into the CPU's active slab, the
//! slow path onto a slab's shared list (and between lists under the node lock), and bulk
//! free. The design is described once, in the crate documentation (`rust/rslub.rs`).

use super::{commit, CacheCore, CpuSlab};
use crate::{
    arch,
    inject::{inject, Point},
    mm,
    shim::IrqDisabled,
    slab::Slab,
    stats::Stat,
};
use core::{mem::offset_of, ptr, ptr::NonNull};

impl CacheCore {
    /// Frees `object` (`kmem_cache_free`).
    ///
    /// Fast path: the object's slab is this CPU's active slab; push it on the CPU free
    /// list with one `cmpxchg16b` on (freelist, tid).
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
        if self.free_special {
            // SAFETY: The caller's guarantees pass on.
            return unsafe { self.free_unusual(object.as_ptr()) };
        }
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object(object.as_ptr()) }
    }

    /// [`CacheCore::free`] with `init_on_free`, or into a debug cache.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`]; a debug cache checks what it can of that.
    #[inline(never)]
    #[cold]
    pub(super) unsafe fn free_unusual(&self, object: *mut u8) {
        if self.is_debug() {
            return self.free_debug(object);
        }
        self.zero(object);
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object(object) }
    }

    /// The free fast path, and the way into the slow path.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`].
    #[inline(always)]
    pub(super) unsafe fn free_object(&self, object: *mut u8) {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const SLAB: usize = offset_of!(CpuSlab, slab);
        const FREE_FAST: usize = CacheCore::stat_offset(Stat::FreeFast);
        // SAFETY: `object` is a live object of this cache (caller), inside one of its slabs.
        let slab = unsafe { mm::slab_of(object) };
        let pcpu = self.pcpu();
        loop {
            // As in `alloc_node`: one CPU's copy, `tid` first; the commit fails on any
            // other CPU, so the active slab compared here is the one the commit checks.
            // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
            let c = unsafe { arch::raw_cpu_ptr(pcpu) };
            // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
            let tid = unsafe { arch::read_once::<TID>(c) };
            inject!(self, Point::FreeTidRead);
            // SAFETY: As above.
            if unsafe { arch::read_once::<SLAB>(c) } != slab as u64 {
                // SAFETY: The caller's guarantees pass on.
                return unsafe { self.free_slow(slab, object) };
            }
            inject!(self, Point::FreeSlabRead);
            // SAFETY: As above.
            let head = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
            // SAFETY: The caller owns `object`, a free-to-be object of this cache.
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
        }
    }

    /// The free slow path (`__slab_free`): the slab is not this CPU's active slab. Push
    /// the object on the slab's shared list with `lock cmpxchg16b`; a slab that was full
    /// goes onto this CPU's partial list; only when a slab on a node list becomes empty
    /// (or, with `cpu_partial` 0, when one becomes partial) take the node lock.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`]; `slab` is what the object's page holds as its slab
    /// (checked here).
    #[inline(never)]
    pub(super) unsafe fn free_slow(&self, slab: *mut Slab, object: *mut u8) {
        if !self.owns(object) {
            return self.foreign_free(object);
        }
        // SAFETY: One object is a chain of one.
        unsafe { self.free_chain(slab, object, object, 1) }
    }

    /// Whether `object` lies on a slab page of this cache ([`mm::owning_cache`]): a
    /// pointer that is not an object of this cache never reaches the fast path's commit
    /// (its slab is no active slab of this cache), so the slow paths catch it here.
    #[inline(always)]
    pub(super) fn owns(&self, object: *const u8) -> bool {
        // SAFETY: A pointer passed to free is a direct-map address (an object of some
        // slab, by the caller's contract, which this checks without following anything).
        unsafe { mm::owning_cache(object) == ptr::from_ref(self) as usize }
    }

    /// Frees `count` objects of `slab` chained from `head` to `tail` through their free
    /// pointers (the free pointer of `tail` is set here), with one update of the slab.
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
        self.stat(Stat::FreeSlow);
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        loop {
            let old = s.state();
            let inuse = old.inuse() - count;
            if !old.frozen() && inuse != 0 && old.freelist.is_null() && self.cpu_partial() != 0 {
                // Full to partial: onto this CPU's partial list, without the node lock
                // (`put_cpu_partial`). This touches the cache after the update that frees
                // the objects, which the other free paths avoid (see
                // [`CacheCore::free`]); here it is safe: other objects of the slab are in
                // use, and until this CPU puts it on its list the slab is on none, and
                // destruction counts every object of such a slab as in use. Interrupts go
                // off before the update, so no flush of this CPU runs in between.
                let irq = IrqDisabled::new();
                // SAFETY: As for this function.
                if unsafe { s.try_splice(self.fp, old, head, tail, count, false) }.is_some() {
                    self.put_cpu_partial(slab, &irq);
                    return;
                }
                continue;
            }
            if !old.frozen() && (inuse == 0 || old.freelist.is_null()) {
                // SAFETY: As for this function.
                return unsafe { self.free_chain_locked(slab, head, tail, count) };
            }
            // Counted before the update, which is the last touch of the cache.
            if old.frozen() {
                self.stat(Stat::FreeFrozen);
            }
            // SAFETY: As for this function.
            if unsafe { s.try_splice(self.fp, old, head, tail, count, old.frozen()) }.is_some() {
                return;
            }
            if old.frozen() {
                self.stat_sub(Stat::FreeFrozen);
            }
        }
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
        // "Already holds at least min_partial partial slabs": not counting this one.
        let others = g.list().len() - u32::from(on_partial);
        if new.inuse() == 0 && others >= min_partial {
            if on_partial {
                // SAFETY: `slab` is on this list; lock held.
                unsafe { g.list().remove(slab) };
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
        }
    }

    /// Frees every object of `objects`. Objects of this CPU's active slab go on its free
    /// list; a run of objects of another slab is chained and freed with one update of
    /// that slab (SLUB's detached free lists, for the common case of objects that were
    /// allocated together).
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`], for each element.
    pub(crate) unsafe fn free_bulk(&self, objects: &[*mut u8]) {
        if self.is_debug() {
            for &object in objects {
                self.free_debug(object);
            }
            return;
        }
        if self.init_on_free {
            for &object in objects {
                self.zero(object);
            }
        }
        let _irq = IrqDisabled::new();
        // Interrupts are off: this CPU's copy is ours. Borrowed anew for each use, as the
        // slow path below takes it too (for the CPU's partial list).
        let cp = self.cpu.this_cpu();
        let mut fast = 0u64;
        let mut i = 0;
        while i < objects.len() {
            let first = objects[i];
            // SAFETY: The caller guarantees a live object of this cache.
            let slab = unsafe { mm::slab_of(first) };
            i += 1;
            // SAFETY: See `cp`; no other reference to it is live here.
            let c = unsafe { &mut *cp };
            if slab == c.slab {
                // SAFETY: The caller owns `first`, an object of the CPU's active slab.
                unsafe { self.fp.set(first, c.freelist) };
                c.freelist = first;
                fast += 1;
                continue;
            }
            if !self.owns(first) {
                self.foreign_free(first);
                continue;
            }
            // Chain the run of objects of the same slab in front of `first`.
            let (mut head, mut count) = (first, 1u32);
            // SAFETY: As above, for each object.
            while i < objects.len() && unsafe { mm::slab_of(objects[i]) } == slab {
                // SAFETY: The caller owns `objects[i]`.
                unsafe { self.fp.set(objects[i], head) };
                head = objects[i];
                count += 1;
                i += 1;
            }
            // SAFETY: `head`..`first` chains `count` objects of `slab` owned by the caller;
            // the slow path takes its own locks (interrupts may already be off).
            unsafe { self.free_chain(slab, head, first, count) };
        }
        // Only if objects went on this CPU's list: then this CPU still has its active
        // slab, so the cache is not being destroyed (destruction flushes every CPU,
        // which waits for interrupts to come back on here). Otherwise the last update
        // above may have freed the last object, and the cache must not be touched.
        if fast != 0 {
            // SAFETY: See `cp`.
            unsafe { (*cp).advance() };
            // SAFETY: Per-cpu counter of this cache.
            unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::FreeFast), fast) };
        }
    }
}
