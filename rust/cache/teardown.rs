// SPDX-License-Identifier: GPL-2.0

//! Flushing, shrinking and destruction: giving every CPU's active slab back (from a
//! worker on each CPU, or for a CPU that went offline), empty slabs to the page allocator
//! (`kmem_cache_shrink`, the shrinker), and counting what is left when a cache goes.

use super::{CacheCore, CpuSlab, LiveObjects, NO_SLAB};
use crate::{
    arch,
    inject::{inject, Point},
    percpu::possible_cpus,
    shim::{self, IrqDisabled},
    stats::Stat,
};
use crate::{params::Profile, slab::Slab};
use core::ptr;
use kernel::cpu::CpuId;
#[cfg(rslub_inject)]
use kernel::prelude::*;

/// `kmem_cache_shrink` moves partial slabs with up to this many free objects to the head
/// of their node's list (6.12's `SHRINK_PROMOTE_MAX`).
pub(crate) const SHRINK_PROMOTE_MAX: usize = 32;

impl CacheCore {
    /// Gives a CPU's active slab and partial list back to the nodes. Interrupts are off
    /// on that CPU, or the caller owns its copy.
    fn flush_cpu(&self, c: &mut CpuSlab) {
        if c.slab != NO_SLAB {
            self.flush(c);
        }
        if !c.partial.is_null() {
            self.unfreeze_partials(c);
        }
    }

    /// Gives this CPU's active slab and partial list back, with interrupts off.
    pub(super) fn flush_this_cpu(&self) {
        let _irq = IrqDisabled::new();
        // SAFETY: Interrupts are off: this CPU's copy is ours.
        self.flush_cpu(unsafe { &mut *self.cpu.this_cpu() });
    }

    /// [`CacheCore::flush_this_cpu`] for the suites, which pin themselves to the CPU.
    #[cfg(rslub_inject)]
    pub(crate) fn flush_current_cpu(&self) {
        self.flush_this_cpu();
    }

    /// The first 16 slabs on node `nid`'s partial list, head first, as addresses (for the
    /// suites, which compare the order with 6.12's). Nothing is allocated under the node
    /// lock (in whole-kernel mode that could take another node lock).
    #[cfg(rslub_inject)]
    pub(crate) fn partial_order(&self, nid: u32) -> Result<KVec<usize>> {
        let (mut first, mut n) = ([0usize; 16], 0);
        {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(self.node(nid), &irq);
            let mut p = g.list().first();
            while let Some(slab) = p {
                if n == first.len() {
                    break;
                }
                first[n] = slab as usize;
                n += 1;
                // SAFETY: On this list, lock held.
                let next = unsafe { (*slab).links().next };
                p = (!next.is_null()).then_some(next);
            }
        }
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        v.extend_from_slice(&first[..n], GFP_KERNEL)?;
        Ok(v)
    }

    /// Gives `cpu`'s active slab and partial list back (CPU hotplug: `cpu` went offline).
    ///
    /// # Safety
    ///
    /// `cpu` must be dead: nothing runs on it, so nothing uses its per-CPU copy (no other
    /// CPU ever writes another's).
    pub(crate) unsafe fn flush_dead_cpu(&self, cpu: CpuId) {
        // Node locks are taken with interrupts off.
        let _irq = IrqDisabled::new();
        // SAFETY: `cpu` is dead (caller): its copy is ours.
        self.flush_cpu(unsafe { &mut *self.cpu.on(cpu) });
    }

    /// Walks each node's partial list under its lock: the empty slabs beyond the node's
    /// first `keep` partial slabs, up to `max_pages` pages, are counted and, with `free`,
    /// given back. Returns their pages, and (meaningful with `free`) the objects still
    /// allocated: per node, its objects less the free ones of the partial slabs it keeps,
    /// counted under the node lock, which every free that moves a slab between lists or
    /// gives one back holds from its update to its end.
    ///
    /// With `promote` (`kmem_cache_shrink`), the partial slabs with the fewest free
    /// objects, up to [`SHRINK_PROMOTE_MAX`], move to the head of the list, fewest
    /// first, so that allocations fill them before the others (6.12's
    /// `__kmem_cache_do_shrink`, slub.c:5779-5835).
    fn sweep_empty(&self, keep: u32, max_pages: u64, free: bool, promote: bool) -> (u64, u64) {
        let (mut pages, mut live) = (0u64, 0u64);
        for node in self.nodes.iter() {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            // Per count of free objects, the slabs taken off the list to go back at its
            // head, chained through their list links in the order met.
            let mut promoted =
                [(ptr::null_mut::<Slab>(), ptr::null_mut::<Slab>()); SHRINK_PROMOTE_MAX];
            let mut free_objects = 0i64;
            // Partial slabs left once the ones counted so far are gone.
            let mut left = g.list().len();
            let mut p = g.list().first();
            while let Some(slab) = p {
                // SAFETY: `slab` is on this list and the lock is held.
                let (next, st, objects, n) = unsafe {
                    let s = &*slab;
                    (s.links().next, s.state(), s.objects, s.nr_pages())
                };
                if st.inuse() == 0 && left > keep && pages < max_pages {
                    pages += n;
                    left -= 1;
                    if free {
                        // SAFETY: On this list, lock held; then empty, off the lists,
                        // held by no CPU (partial slabs are not frozen), and nothing
                        // allocated from it can be freed. Freeing pages under a spinlock
                        // is allowed.
                        unsafe {
                            g.list().remove(slab);
                            self.discard(slab);
                        }
                    }
                } else {
                    let free_here = objects - st.inuse();
                    free_objects += i64::from(free_here);
                    if promote && (1..=SHRINK_PROMOTE_MAX as u32).contains(&free_here) {
                        let (head, tail) = &mut promoted[free_here as usize - 1];
                        // SAFETY: On this list, lock held; then off it, its links ours
                        // until it goes back below.
                        unsafe {
                            g.list().remove(slab);
                            if tail.is_null() {
                                *head = slab;
                            } else {
                                (**tail).links().next = slab;
                            }
                        }
                        *tail = slab;
                    }
                }
                p = (!next.is_null()).then_some(next);
            }
            // Back at the head: the slabs with one free object first, each run in the
            // reverse of the order met, as 6.12's `list_move()` and `list_splice()` leave
            // them.
            for &(head, _) in promoted.iter().rev() {
                let mut q = head;
                while !q.is_null() {
                    // SAFETY: Taken off this list above, lock still held; `next` read
                    // before `add` rewrites the links.
                    unsafe {
                        let next = (*q).links().next;
                        g.list().add(q, true);
                        q = next;
                    }
                }
            }
            live += (node.total_objects() - free_objects).max(0) as u64;
        }
        (pages, live)
    }

    /// Gives every empty partial slab back to the page allocator; returns the objects
    /// still allocated (see [`CacheCore::sweep_empty`]).
    pub(super) fn discard_empty_partials(&self) -> u64 {
        self.sweep_empty(0, u64::MAX, true, false).1
    }

    /// Pages the shrinker could give back now ([`CacheCore::shrink_empty`]).
    /// None under the classic profile: 6.12 has no slab shrinker, and keeps those slabs
    /// until `kmem_cache_shrink` (its quarantined objects, under KASAN, still count).
    pub(crate) fn reclaimable_pages(&self) -> u64 {
        let pages = if self.profile() == Profile::Tuned {
            self.sweep_empty(self.min_partial(), u64::MAX, false, false)
                .0
        } else {
            0
        };
        // Quarantined objects may hold slabs that would be empty: at least a page, so
        // that the shrinker calls `shrink_empty`, which gives them back first.
        if self.quarantined() != 0 {
            pages.max(1)
        } else {
            pages
        }
    }

    /// The shrinker's work: gives back empty slabs beyond each node's `min_partial`
    /// partial slabs, up to `max_pages` pages; returns the pages given back. Leaves the
    /// CPUs' active slabs alone (no waiting on other CPUs from memory reclaim).
    pub(crate) fn shrink_empty(&self, max_pages: u64) -> u64 {
        self.drain_quarantine();
        if self.profile() == Profile::Classic {
            return 0;
        }
        let (pages, _) = self.sweep_empty(self.min_partial(), max_pages, true, false);
        // SAFETY: Per-cpu counter of this cache.
        unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::ShrinkerPages), pages) };
        pages
    }

    /// Gives every online CPU's active slab and partial list back to the nodes, running
    /// on each CPU with CPU hotplug held off (6.12's `flush_all()`). Safe while the cache
    /// is in use, and from memory reclaim; may sleep.
    pub(crate) fn flush_all(&self) {
        shim::run_on_each_cpu(&shim::CpusHeld::new(), &|| self.flush_this_cpu());
    }

    /// Flushes every online CPU's active slab and gives every empty slab back
    /// (`kmem_cache_shrink`), running on each CPU as SLUB's `flush_all()` does. Safe
    /// while the cache is in use, and from memory reclaim; may sleep.
    pub(crate) fn shrink(&self) {
        self.drain_quarantine();
        self.flush_all();
        self.sweep_empty(0, u64::MAX, true, true);
    }

    /// Flushes every CPU's active slab, gives every empty slab back, and returns how many
    /// objects are still allocated; their slabs stay. With none, nothing of the cache is
    /// in use any more and it may be freed: a free racing with this call either finished
    /// before the count or is counted (see [`CacheCore::free`]).
    ///
    /// # Safety
    ///
    /// No CPU may use the cache during or after the call, except to free objects still
    /// allocated. CPU hotplug is held off for the whole of it: a CPU that came up or went
    /// down between the flush and the walk below would be missed by both.
    pub(crate) unsafe fn shutdown(&self) -> LiveObjects {
        // Quarantined objects are freed ones: given back first, or they count as live.
        self.drain_quarantine();
        let cpus = shim::CpusHeld::new();
        shim::run_on_each_cpu(&cpus, &|| self.flush_this_cpu());
        for cpu in possible_cpus() {
            // SAFETY: Online CPUs were flushed above and offline ones cannot run, and no
            // CPU allocates from the cache any more (caller): the active slab is ours.
            // An online CPU's partial list is not: a free racing with destruction may
            // have put a slab there since its flush (then the count below finds that
            // slab's objects in use, and the cache is kept).
            let c = unsafe { &mut *self.cpu.on(cpu) };
            if c.slab != NO_SLAB {
                self.flush(c);
            }
            if !shim::cpu_online(cpu) && !c.partial.is_null() {
                self.unfreeze_partials(c);
            }
        }
        inject!(self, Point::ShutdownFlushed);
        LiveObjects(self.discard_empty_partials())
        // `cpus` drops here: hotplug may run again.
    }
}
