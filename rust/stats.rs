// SPDX-License-Identifier: GPL-2.0

//! Per-cache statistics: one counter array per CPU, bumped with a single `%gs`-relative
//! `inc` (no lock, no atomic), summed over the CPUs when read.

use kernel::{c_str, fmt, str::CStr};

macro_rules! stats {
    ($($(#[doc = $doc:literal])* $variant:ident = $file:literal,)*) => {
        /// A counted event.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(usize)]
        pub(crate) enum Stat {
            $($(#[doc = $doc])* $variant,)*
        }

        impl Stat {
            /// Every event, in counter order.
            pub(crate) const ALL: [Stat; NR_STATS] = [$(Stat::$variant,)*];

            /// The counter's name, and the name of its own file: SLUB's (`SLUB_STATS`)
            /// where SLUB counted the same event.
            pub(crate) const fn file_name(self) -> &'static CStr {
                match self {
                    $(Stat::$variant => c_str!($file),)*
                }
            }

            /// [`Stat::file_name`] as text: the `stats` file and the benchmarks' records
            /// use it.
            pub(crate) const fn file_str(self) -> &'static str {
                match self {
                    $(Stat::$variant => $file,)*
                }
            }
        }

        /// Number of counters.
        pub(crate) const NR_STATS: usize = [$($file,)*].len();
    };
}

stats! {
    /// Allocation served by the per-cpu fast path.
    AllocFast = "alloc_fastpath",
    /// Allocation that took the slow path.
    AllocSlow = "alloc_slowpath",
    /// Free served by the per-cpu fast path.
    FreeFast = "free_fastpath",
    /// Free that took the slow path (the object's slab is not this CPU's active slab).
    FreeSlow = "free_slowpath",
    /// Slow free into a slab that is some CPU's active slab: lock-free.
    FreeFrozen = "free_frozen",
    /// Slow free that had to take the node lock (slab became partial or empty).
    FreeLocked = "free_locked",
    /// A free, or a CPU giving its partial list back, put a slab on a node's partial list
    /// (`FREE_ADD_PARTIAL`).
    FreeAddPartial = "free_add_partial",
    /// A free emptied a slab on a node's partial list, which went back to the page
    /// allocator (`FREE_REMOVE_PARTIAL`).
    FreeRemovePartial = "free_remove_partial",
    /// The active slab's freelist was refilled from objects freed by other CPUs.
    RefillFromSlab = "alloc_refill",
    /// The active slab came from a node's partial list, local or remote
    /// (`ALLOC_FROM_PARTIAL`).
    AllocFromPartial = "alloc_from_partial",
    /// A partial slab was taken from the local (or requested) node.
    RefillNodePartial = "refill_node_partial",
    /// A partial slab was taken from another node by the remote walk.
    RefillRemotePartial = "refill_remote_partial",
    /// A new slab was allocated from the page allocator.
    NewSlab = "alloc_slab",
    /// An empty slab was given back to the page allocator.
    SlabFreed = "free_slab",
    /// Searches for a partial slab (`get_partial`).
    GetPartial = "get_partial",
    /// Node partial lists looked at by those searches, local and remote.
    NodesTried = "get_partial_nodes_tried",
    /// Remote walks started (`get_any_partial`).
    RemoteWalk = "remote_walks",
    /// Remote nodes looked at by the remote walks.
    RemoteNodesTried = "remote_nodes_tried",
    /// Remote walks skipped by `remote_node_defrag_ratio`.
    RemoteWalkSkipped = "remote_walk_skipped",
    /// `alloc_node()` asked for another node than the active slab's.
    NodeMismatch = "alloc_node_mismatch",
    /// An active slab was given back to its node (deactivated).
    CpuSlabFlush = "cpuslab_flush",
    /// A deactivated slab was full: it goes on no list (`DEACTIVATE_FULL`).
    DeactivateFull = "deactivate_full",
    /// A deactivated slab, or one of a CPU's partial list given back, was empty and went
    /// back to the page allocator (`DEACTIVATE_EMPTY`).
    DeactivateEmpty = "deactivate_empty",
    /// A deactivated slab went to the head of its node's partial list
    /// (`DEACTIVATE_TO_HEAD`).
    DeactivateToHead = "deactivate_to_head",
    /// A deactivated slab, which other CPUs had freed objects into, went to the tail of
    /// its node's partial list (`DEACTIVATE_TO_TAIL`).
    DeactivateToTail = "deactivate_to_tail",
    /// A deactivated slab had objects other CPUs freed into it meanwhile
    /// (`DEACTIVATE_REMOTE_FREES`).
    DeactivateRemoteFrees = "deactivate_remote_frees",
    /// The active slab was full, with nothing freed into it: the slow path let it go
    /// without the node lists (`DEACTIVATE_BYPASS`).
    DeactivateBypass = "deactivate_bypass",
    /// A fast path's `cmpxchg16b` failed (an interrupt, or a migration, came between
    /// its reads and its commit) and it started again (`CMPXCHG_DOUBLE_CPU_FAIL`).
    CommitFailed = "cmpxchg_double_cpu_fail",
    /// An allocation failed (no memory).
    AllocFailed = "alloc_failed",
    /// A new slab got the smallest order instead of the preferred one (`order_fallback`).
    OrderFallback = "order_fallback",
    /// A node lock was taken (partial list work on a slow path).
    NodeLock = "node_lock",
    /// A node lock was taken while another CPU held it: this one waited.
    NodeLockContended = "node_lock_contended",
    /// Nanoseconds spent waiting for node locks other CPUs held (`CLOCK_MONOTONIC`).
    NodeLockWaitNs = "node_lock_wait_ns",
    /// A free pointer was found outside its slab (overwritten): the list was cut there.
    FreelistCorrupt = "freelist_corrupt",
    /// Problems the debug checks found and reported (`rust/debug.rs`), and frees of
    /// pointers that are not objects of the cache.
    DebugErrors = "debug_errors",
    /// Pages the shrinker gave back (empty slabs beyond `min_partial`).
    ShrinkerPages = "shrinker_pages",
    /// A CPU's active slab came from its partial list (SLUB's `CPU_PARTIAL_ALLOC`).
    CpuPartialAlloc = "cpu_partial_alloc",
    /// A free made a full slab partial and put it on the CPU's partial list
    /// (`CPU_PARTIAL_FREE`).
    CpuPartialFree = "cpu_partial_free",
    /// A refill from a node took a slab for the CPU's partial list too
    /// (`CPU_PARTIAL_NODE`).
    CpuPartialNode = "cpu_partial_node",
    /// A CPU's partial list was full and went back to the nodes (`CPU_PARTIAL_DRAIN`).
    CpuPartialDrain = "cpu_partial_drain",
}

/// Counter values summed over all CPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stats(pub(crate) [u64; NR_STATS]);

impl Stats {
    /// All zero.
    pub(crate) const ZERO: Self = Self([0; NR_STATS]);

    /// The value of `s`.
    pub(crate) fn get(&self, s: Stat) -> u64 {
        self.0[s as usize]
    }

    /// Adds one CPU's counters.
    pub(crate) fn add(&mut self, counters: &[u64; NR_STATS]) {
        for (sum, v) in self.0.iter_mut().zip(counters) {
            *sum = sum.wrapping_add(*v);
        }
    }

    /// The difference `self - before`, counter by counter.
    #[cfg_attr(not(rslub_kunit), expect(dead_code))]
    pub(crate) fn since(&self, before: &Stats) -> Stats {
        let mut d = *self;
        for (v, b) in d.0.iter_mut().zip(&before.0) {
            *v = v.wrapping_sub(*b);
        }
        d
    }
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for s in Stat::ALL {
            writeln!(f, "{} {}", s.file_str(), self.get(s))?;
        }
        Ok(())
    }
}
