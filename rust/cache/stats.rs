// SPDX-License-Identifier: GPL-2.0

//! A cache's accounting: its per-CPU event counters (bumped with one `%gs`-relative
//! instruction, summed when read), its slabs and objects per node, and the memory its
//! slabs take. The design is described once, in the crate documentation
//! (`rust/rslub.rs`).

use super::{CacheCore, CpuSlab, NO_SLAB};
use crate::{
    arch, layout,
    percpu::{online_cpus, possible_cpus},
    shim::{self, IrqDisabled},
    slab::Slab,
    stats::{Stat, Stats},
    topology,
};
use core::{mem::offset_of, ptr};
use kernel::{
    cpu::CpuId,
    prelude::*,
    str::CString,
    sync::atomic::{Atomic, Relaxed},
};

/// What [`CacheCore::footprint`] counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    /// Slabs on all nodes (active, partial, full, on CPU lists).
    pub(crate) slabs: u64,
    /// Bytes of their pages.
    pub(crate) page_bytes: u64,
    /// Bytes of their metadata (`Slab`), kept outside the slabs.
    pub(crate) meta_bytes: u64,
}

/// What [`CacheCore::cpu_holdings`] counts.
pub(crate) struct CpuHoldings {
    /// Per online node: the CPUs' active slabs and the slabs on their partial lists there.
    pub(crate) per_node: KVec<(u32, u64)>,
    /// Per online CPU: the slabs on its partial list.
    pub(crate) partial_per_cpu: KVec<(CpuId, u32)>,
}

/// What [`CacheCore::node_objects`] counts.
pub(crate) struct NodeObjects {
    /// Objects of the node's slabs but the free ones on its partial list.
    pub(crate) in_use: u64,
    /// Objects in use in the slabs on its partial list.
    pub(crate) in_use_partial: u64,
}

impl CacheCore {
    /// Counter values summed over all CPUs.
    pub(crate) fn stats(&self) -> Stats {
        let mut s = Stats::ZERO;
        for c in possible_cpus() {
            // SAFETY: CPU `c`'s copy is live; the counters are plain integers, and a torn
            // or stale read only makes the snapshot slightly old.
            let counters = unsafe { ptr::read_volatile(&raw const (*self.cpu.on(c)).stats) };
            s.add(&counters);
        }
        s
    }

    /// Counter `s` of CPU `cpu`.
    pub(crate) fn stat_on(&self, cpu: CpuId, s: Stat) -> u64 {
        // SAFETY: CPU `cpu`'s copy is live and the counter an aligned `u64`, written only by
        // that CPU's single-instruction `inc`/`add` (`arch`, inline assembly): this
        // aligned 8-byte load sees the value before or after one of them, never a mix.
        unsafe { ptr::read_volatile(&raw const (*self.cpu.on(cpu)).stats[s as usize]) }
    }

    /// Sets counter `s` to 0 on every CPU (SLUB's `clear_stat()`). An increment racing
    /// with it on another CPU may survive or be lost, as in SLUB.
    pub(crate) fn clear_stat(&self, s: Stat) {
        for cpu in possible_cpus() {
            // SAFETY: CPU `cpu`'s copy is live and the counter an aligned `u64`; its other
            // writer is that CPU's single-instruction `inc`/`add` (inline assembly), and
            // this aligned 8-byte store is atomic against it: the counter ends as 0 or as
            // 0 plus what that CPU added after, or, when an `inc` read it just before,
            // as that `inc` leaves it (the clearing lost, as SLUB's can be).
            unsafe { ptr::write_volatile(&raw mut (*self.cpu.on(cpu)).stats[s as usize], 0) };
        }
    }

    /// Objects in use on node `nid`, as SLUB's `objects` and `objects_partial` count them:
    /// walks the node's partial list under its lock.
    pub(crate) fn node_objects(&self, nid: u32) -> NodeObjects {
        let node = self.node(nid);
        let (mut in_use_partial, mut free_partial) = (0u64, 0u64);
        {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            let mut p = g.list().first();
            while let Some(slab) = p {
                // SAFETY: On this node's list, lock held: live.
                let (next, inuse, objects) = unsafe {
                    let s = &*slab;
                    (s.links().next, s.state().inuse(), s.objects)
                };
                in_use_partial += u64::from(inuse);
                free_partial += u64::from(objects - inuse.min(objects));
                p = (!next.is_null()).then_some(next);
            }
        }
        NodeObjects {
            in_use: (node.total_objects().max(0) as u64).saturating_sub(free_partial),
            in_use_partial,
        }
    }

    /// What the CPUs hold (SLUB's `cpu_slabs` and `slabs_cpu_partial`). Each online CPU
    /// counts its own, with interrupts off, in a worker bound to it: the slabs it holds
    /// cannot go away meanwhile, and no field of another CPU is read while it changes.
    /// May sleep.
    pub(crate) fn cpu_holdings(&self) -> Result<CpuHoldings> {
        let mut per_node = KVec::with_capacity(self.nodes.len(), GFP_KERNEL)?;
        for _ in 0..self.nodes.len() {
            per_node.push(Atomic::new(0u64), GFP_KERNEL)?;
        }
        let nr_cpus = kernel::cpu::nr_cpu_ids() as usize;
        let mut partial = KVec::with_capacity(nr_cpus, GFP_KERNEL)?;
        for _ in 0..nr_cpus {
            partial.push(Atomic::new(0u32), GFP_KERNEL)?;
        }
        // Every slab's node is below `nodes.len()` (`nr_node_ids`) and every CPU below
        // `nr_cpu_ids`; `get` keeps a bounds check from becoming a panic in a worker.
        let count = |nid: u32| {
            if let Some(a) = per_node.get(nid as usize) {
                a.add(1, Relaxed);
            }
        };
        shim::run_on_each_cpu(&shim::CpusHeld::new(), &|| {
            let _irq = IrqDisabled::new();
            // SAFETY: Interrupts are off: this CPU's copy is ours.
            let c = unsafe { &*self.cpu.this_cpu() };
            if c.slab != NO_SLAB {
                // SAFETY: This CPU's active slab, frozen by it: live.
                count(unsafe { (*c.slab).node });
            }
            let mut p = c.partial;
            while !p.is_null() {
                // SAFETY: On this CPU's partial list (invariant): live, its link ours.
                let s = unsafe { &*p };
                count(s.node);
                // SAFETY: As above.
                p = unsafe { *s.cpu_next() };
            }
            // Interrupts are off: the task stays on this CPU.
            if let Some(a) = partial.get(CpuId::current().as_u32() as usize) {
                a.store(c.partial_slabs, Relaxed);
            }
        });
        let mut h = CpuHoldings {
            per_node: KVec::new(),
            partial_per_cpu: KVec::new(),
        };
        for nid in topology::online_nodes() {
            let n = per_node.get(nid as usize).map_or(0, |a| a.load(Relaxed));
            h.per_node.push((nid, n), GFP_KERNEL)?;
        }
        for cpu in online_cpus() {
            let n = partial
                .get(cpu.as_u32() as usize)
                .map_or(0, |a| a.load(Relaxed));
            h.partial_per_cpu.push((cpu, n), GFP_KERNEL)?;
        }
        Ok(h)
    }

    /// The constructor's symbol (`%pS`), if the cache has one.
    pub(crate) fn ctor_symbol(&self) -> Option<Result<CString>> {
        self.ctor.map(|f| shim::symbol(f as usize))
    }

    /// Slabs and objects per node: `(slabs, objects, partial slabs)` of node `nid`.
    pub(crate) fn node_counts(&self, nid: u32) -> (i64, i64, u32) {
        let n = self.node(nid);
        (n.nr_slabs(), n.total_objects(), n.nr_partial())
    }

    /// The memory the cache holds now: its slabs on all nodes, the bytes of their pages,
    /// and the bytes of the metadata rslub keeps for each slab outside it (a `Slab`).
    /// Counters read without a lock: a snapshot.
    pub(crate) fn footprint(&self) -> Footprint {
        let (slabs, pages) = (0..self.nodes.len() as u32)
            .map(|nid| (self.node(nid).nr_slabs(), self.node(nid).nr_pages()))
            .fold((0i64, 0i64), |(s, p), (ns, np)| (s + ns, p + np));
        let (slabs, pages) = (slabs.max(0) as u64, pages.max(0) as u64);
        // An object of `rslub_meta` (`shim::meta_alloc`), a cache of exactly this size
        // (a multiple of its alignment).
        let meta = size_of::<Slab>() as u64;
        Footprint {
            slabs,
            page_bytes: pages * u64::from(layout::PAGE_SIZE),
            meta_bytes: slabs * meta,
        }
    }

    /// Offset of counter `s` in a `CpuSlab`.
    pub(super) const fn stat_offset(s: Stat) -> usize {
        offset_of!(CpuSlab, stats) + s as usize * 8
    }

    /// Counts `s` on the current CPU.
    #[inline(always)]
    pub(super) fn stat(&self, s: Stat) {
        // SAFETY: The address is counter `s` of this cache's live per-cpu area.
        unsafe { arch::this_cpu_inc(self.pcpu(), Self::stat_offset(s)) };
    }
}
