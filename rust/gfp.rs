// SPDX-License-Identifier: GPL-2.0

//! Allocation flags (`gfp_t`) as rslub's API takes them.
//!
//! The kernel crate's `Flags` cannot be built from, or turned back into, a raw `gfp_t`
//! outside the kernel crate, and the C API receives raw masks; so rslub carries its own
//! small wrapper and derives the kernel crate's flags from it where it needs them.

use kernel::{
    alloc::{flags, Flags},
    bindings,
};

/// A `gfp_t` mask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Gfp(u32);

impl Gfp {
    /// `GFP_KERNEL`: may sleep.
    #[cfg_attr(not(rslub_kunit), expect(dead_code))]
    pub(crate) const KERNEL: Gfp = Gfp(bindings::GFP_KERNEL);

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

    /// `__GFP_THISNODE`: only the node asked for.
    pub(crate) const THISNODE: u32 = 1 << bindings::___GFP_THISNODE_BIT;
    /// `__GFP_NOWARN`: no warning on failure.
    pub(crate) const NOWARN: u32 = bindings::__GFP_NOWARN;
    /// `__GFP_DIRECT_RECLAIM`: the allocation may sleep to reclaim.
    const DIRECT_RECLAIM: u32 = 1 << bindings::___GFP_DIRECT_RECLAIM_BIT;

    /// Whether the allocation may sleep (`gfpflags_allow_blocking()`).
    pub(crate) fn may_sleep(self) -> bool {
        self.0 & Self::DIRECT_RECLAIM != 0
    }

    /// Flags of the same blocking behaviour for the kernel crate's allocators.
    pub(crate) fn kernel_flags(self) -> Flags {
        if self.may_sleep() {
            flags::GFP_KERNEL
        } else {
            flags::GFP_NOWAIT | flags::__GFP_NOWARN
        }
    }
}
