// SPDX-License-Identifier: GPL-2.0

//! A cache's accounting: its per-CPU event counters (bumped with one `%gs`-relative
//! instruction, summed when read), its slabs and objects per node, and the memory its
//! slabs take. The design is described once, in the crate documentation
//! (`rust/rslub.rs`).

use super::{CacheCore, CpuSlab};
use crate::{
    arch, layout,
    percpu::possible_cpus,
    slab::Slab,
    stats::{Stat, Stats},
};
use core::{mem::offset_of, ptr};
use kernel::bindings;

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

    /// Slabs and objects per node: `(slabs, objects, partial slabs)` of node `nid`.
    pub(crate) fn node_counts(&self, nid: u32) -> (i64, i64, u32) {
        let n = self.node(nid);
        (n.nr_slabs(), n.total_objects(), n.nr_partial())
    }

    /// The memory the cache holds now: its slabs on all nodes, the bytes of their pages,
    /// and the bytes of the metadata rslub keeps for each slab outside it (a `Slab` from
    /// `kmalloc`, rounded up to its size class). Counters read without a lock: a snapshot.
    pub(crate) fn footprint(&self) -> Footprint {
        let slabs: i64 = (0..self.nodes.len() as u32)
            .map(|nid| self.node(nid).nr_slabs())
            .sum();
        let slabs = slabs.max(0) as u64;
        // SAFETY: A pure function of its argument.
        let meta = unsafe { bindings::kmalloc_size_roundup(size_of::<Slab>()) } as u64;
        Footprint {
            slabs,
            page_bytes: slabs * u64::from(layout::slab_bytes(self.layout.order)),
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
