// SPDX-License-Identifier: GPL-2.0

//! Helpers the suites share: cache arguments, allocating and freeing many objects,
//! pinning the test's task, and skipping what the machine cannot run.

use crate::{
    cache::{CacheArgs, CacheCore},
    gfp::Gfp,
    shim,
    slab::FreePtr,
    test_shim::{pin_current, skip},
    topology::{online_nodes, Topology},
};
use core::ptr::NonNull;
use kernel::{cpu::CpuId, prelude::*};

/// A cache of `size`-byte objects named `name`, no alignment, flags or constructor.
pub(crate) fn args(name: &CStr, size: u32) -> CacheArgs<'_> {
    CacheArgs {
        name,
        size,
        align: 0,
        flags: 0,
        ctor: None,
        freeptr_offset: None,
    }
}

/// Allocates `n` objects from `c` on `node` (`NO_NODE`: any) with `GFP_KERNEL`.
pub(crate) fn alloc_n(c: &CacheCore, n: usize, node: i32) -> KVec<usize> {
    let mut v = KVec::with_capacity(n, GFP_KERNEL).expect("memory");
    for _ in 0..n {
        let p = c.alloc_node(Gfp::KERNEL, node).expect("object");
        v.push(p.as_ptr() as usize, GFP_KERNEL).expect("memory");
    }
    v
}

/// Frees `p`, an object the suite allocated from `c` and frees once.
pub(crate) fn free(c: &CacheCore, p: usize) {
    // SAFETY: the suites pass objects they allocated from `c` and free once.
    unsafe { c.free(NonNull::new(p as *mut u8).expect("non-null")) };
}

/// Frees every object of `objs` (see [`free`]).
pub(crate) fn free_all(c: &CacheCore, objs: &[usize]) {
    for &p in objs {
        free(c, p);
    }
}

/// The slabs of `c` on all nodes.
pub(crate) fn slabs(c: &CacheCore) -> i64 {
    online_nodes().map(|n| c.node_counts(n).0).sum()
}

/// Moves the test's task to CPU `cpu` and keeps it there.
pub(crate) fn pin(cpu: u32) {
    pin_current(Some(CpuId::from_u32(cpu).expect("cpu"))).expect("pin");
}

/// Lets the test's task run on any CPU again.
pub(crate) fn unpin() {
    pin_current(None).expect("unpin");
}

/// Whether 2 CPUs are online; if not, marks the test skipped (it then returns).
pub(crate) fn have_two_cpus() -> bool {
    let ok = Topology::read().online_cpus >= 2;
    if !ok {
        skip(c"needs 2 online CPUs");
    }
    ok
}

/// Whether 2 NUMA nodes are online; if not, marks the test skipped (it then returns).
pub(crate) fn have_two_nodes() -> bool {
    let ok = Topology::read().online_nodes >= 2;
    if !ok {
        skip(c"needs 2 NUMA nodes");
    }
    ok
}

/// The first node (by id) with memory other than `local`; if there is none, marks the
/// test skipped (it then returns).
pub(crate) fn other_memory_node(local: u32) -> Option<u32> {
    let far = online_nodes().find(|&n| n != local && shim::node_has_memory(n as i32));
    if far.is_none() {
        skip(c"needs 2 NUMA nodes with memory");
    }
    far
}

/// Whether free pointers are stored hardened; reports SKIP, with the reason, when the
/// build has them plain (`make RSLUB_HARDENED=n`), where the tests of what hardening
/// catches have nothing to test.
pub(crate) fn hardened() -> bool {
    if !FreePtr::HARDENED {
        skip(c"built with RSLUB_HARDENED=n: free pointers are stored plain");
    }
    FreePtr::HARDENED
}
