// SPDX-License-Identifier: GPL-2.0

//! Partial slabs across CPUs and nodes: each CPU's partial list (`put_cpu_partial`,
//! `unfreeze_partials`), taking a partial slab for a CPU (its own list's, its node's, then
//! other nodes': `get_any_partial`, as the cache's profile walks them), and giving a
//! CPU's active slab back to its node (`deactivate`), or an empty slab to the page
//! allocator.
//!
//! A CPU's partial list (classic SLUB's `CONFIG_SLUB_CPU_PARTIAL`) holds slabs that a
//! free on that CPU made partial (they were full, on no list), and slabs a refill from
//! the node took in one go. They are not frozen and on no node list; a free into one of
//! them only pushes onto its shared list (a free that empties one leaves it where it
//! is). The CPU takes its next active slab from this list before the node's, without
//! the node lock, and gives the list back to the nodes when it would hold more than
//! `cpu_partial` objects' worth of slabs, when it flushes (shrink, destroy) and when it
//! goes offline.

use super::{CacheCore, CpuSlab, RemoteWalk, NO_NODE, RATIO_SCALE};
use crate::params::Profile;
use crate::{
    gfp::Gfp,
    inject::{inject, Point},
    shim::{self, IrqDisabled},
    slab::Slab,
    stats::Stat,
};
use core::{ptr, ptr::NonNull};

impl CacheCore {
    /// Gives this CPU's active slab back to its node (6.12's `flush_slab`, counted as
    /// `cpuslab_flush`). Interrupts are off, or the cache is being destroyed and no CPU
    /// uses it.
    pub(super) fn flush(&self, c: &mut CpuSlab) {
        self.stat(Stat::CpuSlabFlush);
        self.deactivate_active(c);
    }

    /// Gives this CPU's active slab back to its node without counting a flush: an
    /// allocation that cannot use it (another node, the emergency reserves), as 6.12's
    /// `goto deactivate_slab` in `___slab_alloc` (slub.c:3818-3829). Interrupts are off.
    pub(super) fn deactivate_active(&self, c: &mut CpuSlab) {
        let (slab, freelist) = (c.slab, c.freelist);
        c.clear_active();
        // SAFETY: `slab` was this CPU's active slab, frozen by it, and `freelist` its
        // private free list.
        unsafe { self.deactivate(slab, freelist) };
    }

    /// Unfreezes `slab`, splicing the private free list `freelist` back, and puts the slab
    /// where it belongs: partial list, page allocator (empty, enough partials), or nowhere
    /// (full).
    ///
    /// # Safety
    ///
    /// `slab` must be frozen by the caller, who owns the private free list `freelist` of
    /// it and gives both up.
    pub(super) unsafe fn deactivate(&self, slab: *mut Slab, freelist: *mut u8) {
        // SAFETY: The caller holds the slab frozen, so it is live.
        let s = unsafe { &*slab };
        // Stage one: count the private free objects and find the last. Written so that
        // each step updates the two only once (`count` and `tail` copied per object cost
        // five instructions each).
        let (mut count, mut tail) = (0u32, freelist);
        if !freelist.is_null() {
            let mask = !(s.span() - 1);
            count = 1;
            loop {
                // SAFETY: `tail` is on the caller's private free list, of `slab`.
                let next = unsafe { self.checked_next(tail, mask) };
                if next.is_null() {
                    break;
                }
                tail = next;
                count += 1;
            }
        }
        // Stage two: unfreeze, putting the private objects in front of the shared ones.
        // SAFETY: `freelist`..`tail` are the caller's private objects of `slab`.
        let (old, new) = unsafe { s.splice(self.fp, freelist, tail, count, Some(false)) };
        // Objects other CPUs freed into it meanwhile: it goes to the tail of the node
        // list, behind the slabs this CPU filled least recently (6.12 slub.c:3123-3131).
        let to_head = old.freelist.is_null();
        if !to_head {
            self.stat(Stat::DeactivateRemoteFrees);
        }
        // Stage three: place the slab.
        let node = self.node(s.node);
        if new.inuse() == 0 && node.nr_partial() >= self.min_partial() {
            self.stat(Stat::DeactivateEmpty);
            // Empty and the node has enough partial slabs. Not on any list (it was
            // frozen), and with nothing allocated from it no free can race.
            // SAFETY: `slab` is on no list and no CPU holds it.
            unsafe { self.discard(slab) };
        } else if !new.freelist.is_null() {
            self.stat(if to_head {
                Stat::DeactivateToHead
            } else {
                Stat::DeactivateToTail
            });
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            // SAFETY: `slab` is a live slab of this node; a free that raced with stage two
            // saw it unfrozen but off the list and left it to us, so it is on no list.
            unsafe { g.list().add(slab, to_head) };
        } else {
            self.stat(Stat::DeactivateFull);
        }
    }

    /// Puts `slab` on this CPU's partial list (`put_cpu_partial`), giving the list back to
    /// the nodes first if it holds `cpu_partial`'s worth already. The caller's update made
    /// `slab` partial or empty (it was full, not frozen, on no list) and marked it
    /// `ON_CPU_PARTIAL`.
    pub(super) fn put_cpu_partial(&self, slab: *mut Slab, _irq: &IrqDisabled) {
        // SAFETY: Interrupts are off: this CPU's copy is ours.
        let c = unsafe { &mut *self.cpu.this_cpu() };
        if c.partial_slabs >= self.cpu_partial_slabs() {
            self.unfreeze_partials(c);
            self.stat(Stat::CpuPartialDrain);
        }
        // INVARIANT: `slab` is not frozen, on no list and marked `ON_CPU_PARTIAL` (the
        // caller's update), and goes on this CPU's list.
        // SAFETY: `slab` is live and its link ours: not frozen and on no list, it can only
        // be placed (or given back) by the caller, whose update made it so; a free that
        // empties it meanwhile only splices its objects (`free_chain`).
        unsafe { *(*slab).cpu_next() = c.partial };
        c.partial = slab;
        c.partial_slabs += 1;
        self.stat(Stat::CpuPartialFree);
    }

    /// Takes slabs off the head of this CPU's partial list until one is on `node` (any
    /// for `NO_NODE`) and may serve `gfp`, and returns it frozen, with its free list;
    /// each slab that may not goes back to its node on the way (6.12 slub.c:3850-3865).
    /// Interrupts are off.
    pub(super) fn get_cpu_partial(
        &self,
        c: &mut CpuSlab,
        node: i32,
        gfp: Gfp,
    ) -> Option<(*mut Slab, *mut u8)> {
        loop {
            let slab = c.partial;
            if slab.is_null() {
                return None;
            }
            // SAFETY: On this CPU's list (invariant), so live.
            let s = unsafe { &*slab };
            // INVARIANT: the first slab leaves the list and the count.
            // SAFETY: This CPU's list, interrupts off.
            c.partial = core::mem::replace(unsafe { s.cpu_next() }, ptr::null_mut());
            c.partial_slabs -= 1;
            if (node != NO_NODE && s.node != node.unsigned_abs()) || !pfmemalloc_match(s, gfp) {
                // A list of one slab, ours (off this CPU's list, its link cleared).
                self.put_partials(slab);
                continue;
            }
            // Not frozen, with free objects (only frees touched it since it was put
            // there): `take_freelist` freezes it for this CPU and hands them over.
            let object = s.take_freelist();
            if object.is_null() {
                // Cannot happen (objects are only added while it is here); it is full,
                // so on no list, as a full slab must be.
                continue;
            }
            self.stat(Stat::CpuPartialAlloc);
            return Some((slab, object));
        }
    }

    /// Gives every slab of this CPU's partial list back to its node (`__put_partials`):
    /// to the node's partial list or, empty when the node keeps `min_partial` partial
    /// slabs already, to the page allocator. Interrupts are off, or the caller owns the
    /// list (a dead CPU's, destruction).
    pub(super) fn unfreeze_partials(&self, c: &mut CpuSlab) {
        let p = core::mem::replace(&mut c.partial, ptr::null_mut());
        c.partial_slabs = 0;
        self.put_partials(p);
    }

    /// Gives the slabs chained from `p` through their CPU links back to their nodes
    /// (6.12's `__put_partials`): to the tail of the node's partial list or, empty when
    /// the node keeps `min_partial` partial slabs already, to the page allocator. The
    /// caller took the chain off a CPU's partial list (it is ours).
    fn put_partials(&self, mut p: *mut Slab) {
        let irq = IrqDisabled::new();
        // One lock for a run of slabs of the same node, as SLUB's `__put_partials`.
        let mut locked: Option<(u32, crate::node::NodeGuard<'_>)> = None;
        while !p.is_null() {
            // SAFETY: `p` was on the list we took (invariant): live, its link ours.
            let s = unsafe { &*p };
            // SAFETY: As above.
            let next = core::mem::replace(unsafe { s.cpu_next() }, ptr::null_mut());
            let g = match &mut locked {
                Some((nid, g)) if *nid == s.node => g,
                _ => {
                    // The previous node's lock goes first: one node lock at a time.
                    locked = None;
                    &mut locked
                        .insert((s.node, self.lock_node(self.node(s.node), &irq)))
                        .1
                }
            };
            // While on the list, frees may have emptied it without any lock; from the
            // update that takes it off, a free that empties it needs this lock. So
            // `inuse` 0 here stays 0 (there is no object left to free), and a slab added
            // to the node's list is seen there by the next free that empties it.
            let st = s.set_on_cpu_partial(false);
            if st.inuse() == 0 && g.list().len() >= self.min_partial() {
                self.stat(Stat::DeactivateEmpty);
                // SAFETY: Empty, not frozen, on no list: nothing refers to it. Pages may
                // go back under the spinlock.
                unsafe { self.discard(p) };
            } else {
                // SAFETY: A live slab of this node on no list; lock held.
                unsafe { g.list().add(p, false) };
                self.stat(Stat::FreeAddPartial);
            }
            p = next;
        }
        drop(locked);
    }

    /// Finds a partial slab: on `node` (or the local node for `NO_NODE`), then, unless
    /// `only_node`, on the other nodes. Returns the slab frozen and its free list.
    pub(super) fn get_partial(
        &self,
        c: &mut CpuSlab,
        node: i32,
        only_node: bool,
        gfp: Gfp,
        irq: &IrqDisabled,
    ) -> Option<(*mut Slab, *mut u8)> {
        self.stat(Stat::GetPartial);
        let local = if node == NO_NODE {
            shim::numa_mem_id()
        } else {
            node
        };
        if !shim::node_online(local) {
            return None;
        }
        self.stat(Stat::NodesTried);
        if let Some(r) = self.get_partial_node(c, local.unsigned_abs(), gfp, irq) {
            self.stat(Stat::RefillNodePartial);
            return Some(r);
        }
        if only_node {
            return None;
        }
        self.get_any_partial(c, local.unsigned_abs(), gfp, irq)
    }

    /// Takes the first partial slab of node `nid` that may serve `gfp`, frozen, with its
    /// free list, and, with the same lock, up to `cpu_partial_slabs / 2 + 1` more such
    /// slabs for this CPU's partial list, whatever it holds already, as 6.12's
    /// `get_partial_node` (slub.c:2913-2930; the allocation path empties that list
    /// before it comes here). A slab of the emergency reserves is skipped for a caller
    /// not entitled to them (`pfmemalloc_match()`).
    pub(super) fn get_partial_node(
        &self,
        c: &mut CpuSlab,
        nid: u32,
        gfp: Gfp,
        irq: &IrqDisabled,
    ) -> Option<(*mut Slab, *mut u8)> {
        let node = self.node(nid);
        if node.nr_partial() == 0 {
            return None;
        }
        let mut g = self.lock_node(node, irq);
        let slab = g.list().find(|s| pfmemalloc_match(s, gfp))?;
        // SAFETY: `slab` is on this node's list and the lock is held.
        unsafe { g.list().remove(slab) };
        // SAFETY: A slab on a partial list is live. Not frozen and with free objects, all
        // of which are on its shared list: `take_freelist` returns them and freezes it.
        let object = unsafe { (*slab).take_freelist() };
        debug_assert!(!object.is_null());
        let limit = self.cpu_partial_slabs();
        let mut moved = 0;
        while limit != 0 && moved <= limit / 2 {
            let Some(more) = g.list().find(|s| pfmemalloc_match(s, gfp)) else {
                break;
            };
            moved += 1;
            // INVARIANT: off the node list, not frozen, with free objects: onto this
            // CPU's list, marked so (a free that empties it then leaves it there).
            // SAFETY: On this node's list, lock held; then on no list, its link ours.
            unsafe {
                g.list().remove(more);
                (*more).set_on_cpu_partial(true);
                *(*more).cpu_next() = c.partial;
            }
            c.partial = more;
            c.partial_slabs += 1;
            self.stat(Stat::CpuPartialNode);
        }
        self.stat(Stat::AllocFromPartial);
        Some((slab, object))
    }

    /// Looks for a partial slab on other nodes (`get_any_partial`), on a share of calls
    /// set by `remote_node_defrag_ratio`, and only on nodes that hold more than
    /// `min_partial` partial slabs and that the task's cpuset allows:
    /// - [`RemoteWalk::Zonelist`] (the classic profile): 6.12's walk, zone by zone
    ///   through the zonelist of the task's policy node (`mempolicy_slab_node()`), the
    ///   local node included, also on one node, again if the task's cpuset changed
    ///   meanwhile (6.12 slub.c:2973-2990);
    /// - [`RemoteWalk::NodesOnce`] (tuned): each other node than `local` (tried
    ///   already) once, nearest first, none on one node (seed thread 003).
    pub(super) fn get_any_partial(
        &self,
        c: &mut CpuSlab,
        local: u32,
        gfp: Gfp,
        irq: &IrqDisabled,
    ) -> Option<(*mut Slab, *mut u8)> {
        let walk = self.remote_walk();
        if walk == RemoteWalk::NodesOnce && !self.multi_node {
            return None;
        }
        let ratio = self.remote_node_defrag_ratio();
        // 6.12 draws with `get_cycles() % 1024`. A time-stamp counter sampled by a loop of
        // regular period is not uniform modulo 1024 (under QEMU a test saw 114 walks in
        // 399 at ratio 512), so the tuned profile draws from the CRNG, which makes the
        // ratio the probability it is documented as.
        let draw = match self.profile() {
            Profile::Classic => (shim::get_cycles() % u64::from(RATIO_SCALE)) as u32,
            Profile::Tuned => shim::random_u32() % RATIO_SCALE,
        };
        if ratio == 0 || draw > ratio {
            self.stat(Stat::RemoteWalkSkipped);
            return None;
        }
        self.stat(Stat::RemoteWalk);
        let min_partial = self.min_partial();
        loop {
            let seq = shim::mems_allowed_begin();
            let order = match walk {
                RemoteWalk::NodesOnce => self.near.get(local as usize)?,
                RemoteWalk::Zonelist => {
                    let start = shim::mempolicy_slab_node();
                    self.zonelist.get(start.unsigned_abs() as usize)?
                }
            };
            for &nid in order.iter() {
                inject!(self, Point::RemoteNode(u32::from(nid)));
                self.stat(Stat::RemoteNodesTried);
                self.stat(Stat::NodesTried);
                if self.node(u32::from(nid)).nr_partial() > min_partial
                    && shim::cpuset_node_allowed(i32::from(nid), gfp.raw())
                {
                    if let Some(r) = self.get_partial_node(c, u32::from(nid), gfp, irq) {
                        self.stat(Stat::RefillRemotePartial);
                        return Some(r);
                    }
                }
            }
            if walk == RemoteWalk::NodesOnce || !shim::mems_allowed_retry(seq) {
                return None;
            }
        }
    }

    /// Gives an empty slab back to the page allocator: at once, or for a
    /// `TYPESAFE_BY_RCU` cache after a grace period (its node stops counting it now, as
    /// SLUB's `discard_slab()` does).
    ///
    /// # Safety
    ///
    /// `slab` must be empty, on no list and held by no CPU; nothing may use it afterwards.
    pub(super) unsafe fn discard(&self, slab: *mut Slab) {
        // SAFETY: The caller gives up the slab, which is live until here.
        let (nid, objects, pages) = unsafe { ((*slab).node, (*slab).objects, (*slab).nr_pages()) };
        self.node(nid).slab_removed(objects, pages);
        self.stat(Stat::SlabFreed);
        // SAFETY: The slab came from `Slab::publish` in `new_slab` (non-null), and the
        // caller gives it up, empty and on no list, once. The callback of a
        // `TYPESAFE_BY_RCU` cache's slab is module code: destroying the cache and
        // unloading the module wait for it (`registry`'s `teardown()` and `exit()`).
        unsafe {
            let slab = NonNull::new_unchecked(slab);
            if self.layout.typesafe_by_rcu {
                Slab::free_after_grace_period(slab);
            } else {
                Slab::free(slab);
            }
        }
    }
}

/// Whether slab `s` may serve an allocation with `gfp` (SLUB's `pfmemalloc_match()`): a
/// slab of the emergency reserves only serves callers entitled to them. The entitlement
/// (context and task flags) is only looked at for such a slab.
pub(super) fn pfmemalloc_match(s: &Slab, gfp: Gfp) -> bool {
    !s.pfmemalloc() || shim::pfmemalloc_allowed(gfp.raw())
}
