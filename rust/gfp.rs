// SPDX-License-Identifier: GPL-2.0

//! Allocation flags (`gfp_t`) as rslub's API takes them, and the flags rslub derives from
//! a caller's for the allocations it makes on the caller's behalf.
//!
//! The kernel crate's `Flags` cannot be built from a raw `gfp_t` outside the kernel crate,
//! and the C API receives raw masks; so rslub carries its own small wrapper. Every
//! allocation rslub makes for a caller (slab pages, slab metadata) passes on the caller's
//! reclaim and context bits, as SLUB does:
//!
//! - the preferred slab order may fail quietly and cheaply: no warning, no retry, no
//!   `__GFP_NOFAIL`, and no reclaim at all when reclaim was allowed (SLUB's
//!   `allocate_slab()`); the smallest order that holds one object gets the caller's flags;
//! - an explicit node is first tried with `GFP_NOWAIT | __GFP_THISNODE` (keeping only the
//!   caller's `__GFP_NOMEMALLOC` and `__GFP_ACCOUNT`), before partial slabs of other nodes
//!   and the page allocator's own fallback (SLUB's `___slab_alloc()`);
//! - metadata takes the caller's reclaim bits (`GFP_RECLAIM_MASK` of `mm/internal.h`):
//!   `GFP_NOFS` stays out of the file system, `GFP_NOIO` out of block I/O, `__GFP_NOFAIL`
//!   does not fail, `GFP_ATOMIC` keeps `__GFP_HIGH`.
//! - slab pages take only the caller's reclaim and constraint bits (`GFP_RECLAIM_MASK |
//!   GFP_CONSTRAINT_MASK`, SLUB's `new_slab()`), and `__GFP_COMP` as SLUB's do
//!   (`crate::mm`): `__GFP_ZERO` zeroes objects one by one, and `__GFP_ACCOUNT` would
//!   charge a whole slab to whoever allocated first;
//! - bits no slab allocation may carry (`GFP_SLAB_BUG_MASK`: `__GFP_DMA32`,
//!   `__GFP_HIGHMEM`, bits the kernel does not define) are reported and removed, as
//!   `kmalloc_fix_flags()` does.

use kernel::bindings;

/// A `gfp_t` mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gfp(u32);

/// The bit of `___GFP_<name>_BIT`.
const fn bit(b: u32) -> u32 {
    1 << b
}

// rslub's mark is no kernel flag.
const _: () = assert!(Gfp::WIPE_FREE_PTR >> bindings::___GFP_LAST_BIT != 0);
const _: () = assert!(Gfp::WIPE_FREE_PTR & ((1 << bindings::___GFP_LAST_BIT) - 1) == 0);

impl Gfp {
    /// `__GFP_HIGH`: may use the emergency reserves.
    pub(crate) const HIGH: u32 = bit(bindings::___GFP_HIGH_BIT);
    /// `__GFP_IO`: may start block I/O.
    pub(crate) const IO: u32 = bit(bindings::___GFP_IO_BIT);
    /// `__GFP_FS`: may call into the file system.
    pub(crate) const FS: u32 = bit(bindings::___GFP_FS_BIT);
    /// `__GFP_ZERO`: the memory must be zeroed.
    pub(crate) const ZERO: u32 = bit(bindings::___GFP_ZERO_BIT);
    /// `__GFP_DIRECT_RECLAIM`: may sleep to reclaim.
    pub(crate) const DIRECT_RECLAIM: u32 = bit(bindings::___GFP_DIRECT_RECLAIM_BIT);
    /// `__GFP_KSWAPD_RECLAIM`: may wake kswapd.
    pub(crate) const KSWAPD_RECLAIM: u32 = bit(bindings::___GFP_KSWAPD_RECLAIM_BIT);
    /// `__GFP_RECLAIM`.
    pub(crate) const RECLAIM: u32 = Self::DIRECT_RECLAIM | Self::KSWAPD_RECLAIM;
    /// `__GFP_NOWARN`: no warning on failure.
    pub(crate) const NOWARN: u32 = bit(bindings::___GFP_NOWARN_BIT);
    /// `__GFP_RETRY_MAYFAIL`.
    pub(crate) const RETRY_MAYFAIL: u32 = bit(bindings::___GFP_RETRY_MAYFAIL_BIT);
    /// `__GFP_NOFAIL`: must not fail.
    pub(crate) const NOFAIL: u32 = bit(bindings::___GFP_NOFAIL_BIT);
    /// `__GFP_NORETRY`: fail rather than try hard.
    pub(crate) const NORETRY: u32 = bit(bindings::___GFP_NORETRY_BIT);
    /// `__GFP_MEMALLOC`.
    pub(crate) const MEMALLOC: u32 = bit(bindings::___GFP_MEMALLOC_BIT);
    /// `__GFP_NOMEMALLOC`: never the emergency reserves.
    pub(crate) const NOMEMALLOC: u32 = bit(bindings::___GFP_NOMEMALLOC_BIT);
    /// `__GFP_THISNODE`: only the node asked for.
    pub(crate) const THISNODE: u32 = bit(bindings::___GFP_THISNODE_BIT);
    /// `__GFP_ACCOUNT`.
    pub(crate) const ACCOUNT: u32 = bit(bindings::___GFP_ACCOUNT_BIT);
    /// `__GFP_RECLAIMABLE`: pages from reclaimable page blocks (the slabs of a
    /// `SLAB_RECLAIM_ACCOUNT` cache, as 6.12's `s->allocflags`).
    pub(crate) const RECLAIMABLE: u32 = bit(bindings::___GFP_RECLAIMABLE_BIT);
    /// `__GFP_HARDWALL`: only the task's cpuset's nodes.
    pub(crate) const HARDWALL: u32 = bit(bindings::___GFP_HARDWALL_BIT);
    /// `__GFP_COMP`: a compound page.
    pub(crate) const COMP: u32 = bit(bindings::___GFP_COMP_BIT);
    /// `__GFP_DMA32`.
    pub(crate) const DMA32: u32 = bit(bindings::___GFP_DMA32_BIT);
    /// `__GFP_HIGHMEM`.
    pub(crate) const HIGHMEM: u32 = bit(bindings::___GFP_HIGHMEM_BIT);
    /// Not a kernel flag: rslub's mark, in a cache's bits that every allocation or's into
    /// the caller's flags, for "clear the free pointer" (`init_on_free`, see
    /// `CacheCore::alloc_clears`). Above every bit of the kernel's (`___GFP_LAST_BIT`),
    /// and taken off before the flags go anywhere (`Gfp::CLEARS`).
    pub(crate) const WIPE_FREE_PTR: u32 = 1 << 31;
    /// The bits that send an allocation to the path that clears the object, or its free
    /// pointer: one test on the fast path for both.
    pub(crate) const CLEARS: u32 = Self::ZERO | Self::WIPE_FREE_PTR;
    /// `GFP_CONSTRAINT_MASK` (`mm/internal.h`): where the pages may come from.
    pub(crate) const CONSTRAINT_MASK: u32 = Self::HARDWALL | Self::THISNODE;
    /// `GFP_SLAB_BUG_MASK` (`mm/internal.h`): bits a slab allocation must not carry.
    pub(crate) const SLAB_BUG_MASK: u32 =
        Self::DMA32 | Self::HIGHMEM | !((1u32 << bindings::___GFP_LAST_BIT) - 1);
    /// `__GFP_NOLOCKDEP` where lockdep has it, else nothing.
    #[cfg(CONFIG_LOCKDEP)]
    const NOLOCKDEP: u32 = bit(bindings::___GFP_NOLOCKDEP_BIT);
    #[cfg(not(CONFIG_LOCKDEP))]
    const NOLOCKDEP: u32 = 0;
    /// `GFP_RECLAIM_MASK` (`mm/internal.h`): the bits that say how hard an allocation may
    /// try and what it may call into.
    pub(crate) const RECLAIM_MASK: u32 = Self::RECLAIM
        | Self::HIGH
        | Self::IO
        | Self::FS
        | Self::NOWARN
        | Self::RETRY_MAYFAIL
        | Self::NOFAIL
        | Self::NORETRY
        | Self::MEMALLOC
        | Self::NOMEMALLOC
        | Self::NOLOCKDEP;

    /// `GFP_KERNEL`: may sleep, reclaim, do I/O and call the file system.
    #[cfg_attr(not(rslub_kunit), expect(dead_code))]
    pub(crate) const KERNEL: Gfp = Gfp(Self::RECLAIM | Self::IO | Self::FS);
    /// `GFP_NOWAIT`: does not sleep, may wake kswapd.
    pub(crate) const NOWAIT: Gfp = Gfp(Self::KSWAPD_RECLAIM | Self::NOWARN);

    /// A mask from C.
    pub(crate) const fn from_raw(raw: u32) -> Self {
        Self(raw)
    }

    /// The raw mask.
    pub(crate) const fn raw(self) -> u32 {
        self.0
    }

    /// The same mask with `extra` added.
    pub(crate) const fn with(self, extra: u32) -> Self {
        Self(self.0 | extra)
    }

    /// The same mask without `bits`.
    pub(crate) const fn without(self, bits: u32) -> Self {
        Self(self.0 & !bits)
    }

    /// Whether every bit of `bits` is set.
    pub(crate) const fn has(self, bits: u32) -> bool {
        self.0 & bits == bits
    }

    /// Whether any bit of `bits` is set.
    pub(crate) const fn any(self, bits: u32) -> bool {
        self.0 & bits != 0
    }

    /// Whether the allocation may sleep (`gfpflags_allow_blocking()`).
    #[cfg_attr(not(rslub_kunit), expect(dead_code))]
    pub(crate) fn may_sleep(self) -> bool {
        self.has(Self::DIRECT_RECLAIM)
    }

    /// The flags for slab pages: the caller's reclaim and constraint bits only (see the
    /// module documentation), and `__GFP_COMP`: a slab is one compound block, as SLUB's;
    /// `__GFP_ZERO` is among those dropped (objects are zeroed one by one, on allocation,
    /// when asked).
    pub(crate) const fn for_pages(self) -> Self {
        Self(self.0 & (Self::RECLAIM_MASK | Self::CONSTRAINT_MASK) | Self::COMP)
    }

    /// The bits of `GFP_SLAB_BUG_MASK` the mask carries (0: none).
    pub(crate) const fn slab_bug_bits(self) -> u32 {
        self.0 & Self::SLAB_BUG_MASK
    }

    /// The flags for the preferred (higher) slab order, when a smaller one can still hold
    /// an object: may fail quietly and cheaply, and does not reclaim.
    pub(crate) const fn for_preferred_order(self) -> Self {
        let g = self
            .with(Self::NOWARN | Self::NORETRY)
            .without(Self::NOFAIL);
        if g.has(Self::DIRECT_RECLAIM) {
            g.with(Self::NOMEMALLOC).without(Self::RECLAIM)
        } else {
            g
        }
    }

    /// The flags of the first, opportunistic try on an explicit node: that node only,
    /// without sleeping or warning.
    pub(crate) const fn for_this_node_only(self) -> Self {
        Self(self.0 & (Self::NOWAIT.0 | Self::NOMEMALLOC | Self::ACCOUNT))
            .with(Self::NOWARN | Self::THISNODE)
    }

    /// The flags for a slab's metadata: the caller's reclaim and context bits only.
    pub(crate) const fn for_metadata(self) -> Self {
        Self(self.0 & Self::RECLAIM_MASK)
    }
}
