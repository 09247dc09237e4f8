// SPDX-License-Identifier: GPL-2.0

//! The allocation fast paths of the direct-call replacements (`rust/back/direct.S`,
//! `rslub_dr_alloc*()` in `rust/back/hook.c`): a backed cache's allocation, with
//! preemption off and its slot checked, tries the fast path of its rslub cache alone
//! ([`CacheCore::alloc_fast_only`]); where that is not enough, it leaves through the
//! miss function of its replacement as a tail call, given the arguments it still has in
//! registers (not the slot: the miss looks it up again), so that it saves none. Built
//! with the trampolines only (`RSLUB_DIRECT`, `rust/back/direct.h`).

use crate::{
    cache::{CacheCore, NO_NODE},
    gfp::Gfp,
};
use core::ffi::{c_int, c_uint, c_void};
use kernel::bindings;

extern "C" {
    // The misses, called with preemption off and returning with it off (hook.c).
    fn rslub_dr_alloc_miss(s: *mut bindings::kmem_cache, gfp: c_uint) -> *mut c_void;
    fn rslub_dr_alloc_lru_miss(
        s: *mut bindings::kmem_cache,
        lru: *mut bindings::list_lru,
        gfp: c_uint,
    ) -> *mut c_void;
    fn rslub_dr_alloc_node_miss(
        s: *mut bindings::kmem_cache,
        gfp: c_uint,
        node: c_int,
    ) -> *mut c_void;
}

/// The fast path of an allocation from the rslub cache `rc`, which backs the kernel cache
/// `s`: the object, or whatever `rslub_dr_alloc_miss(s, gfp)` returns.
///
/// # Safety
///
/// Preemption must be off, and a slot must have been seen backing `s` with `rc` since it
/// was turned off (the grace period that unbacking waits out keeps `rc` live until it is
/// turned on again); `s` and `gfp` must be as `rslub_dr_alloc()` was given them.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast(
    rc: *mut c_void,
    gfp: c_uint,
    s: *mut bindings::kmem_cache,
) -> *mut c_void {
    // SAFETY: `rc` is live until preemption is back on (caller).
    let object = unsafe { fast(rc, gfp, NO_NODE) };
    if !object.is_null() {
        return object;
    }
    // SAFETY: With preemption off, `rslub_dr_alloc()`'s own arguments (caller).
    unsafe { rslub_dr_alloc_miss(s, gfp) }
}

/// [`rslub_backed_alloc_fast`] for `kmem_cache_alloc_lru()` (`lru` goes to its miss).
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast`], with `rslub_dr_alloc_lru()`'s arguments.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast_lru(
    rc: *mut c_void,
    gfp: c_uint,
    s: *mut bindings::kmem_cache,
    lru: *mut bindings::list_lru,
) -> *mut c_void {
    // SAFETY: `rc` is live until preemption is back on (caller).
    let object = unsafe { fast(rc, gfp, NO_NODE) };
    if !object.is_null() {
        return object;
    }
    // SAFETY: With preemption off, `rslub_dr_alloc_lru()`'s own arguments (caller).
    unsafe { rslub_dr_alloc_lru_miss(s, lru, gfp) }
}

/// [`rslub_backed_alloc_fast`] on `node` (`NUMA_NO_NODE`: any).
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast`], with `rslub_dr_alloc_node()`'s arguments.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast_node(
    rc: *mut c_void,
    gfp: c_uint,
    node: c_int,
    s: *mut bindings::kmem_cache,
) -> *mut c_void {
    // SAFETY: `rc` is live until preemption is back on (caller).
    let object = unsafe { fast(rc, gfp, node) };
    if !object.is_null() {
        return object;
    }
    // SAFETY: With preemption off, `rslub_dr_alloc_node()`'s own arguments (caller).
    unsafe { rslub_dr_alloc_node_miss(s, gfp, node) }
}

/// The fast path of `rc` alone; null where it is not enough.
///
/// # Safety
///
/// `rc` must be a live rslub cache.
#[inline(always)]
unsafe fn fast(rc: *mut c_void, gfp: c_uint, node: c_int) -> *mut c_void {
    // SAFETY: A live rslub cache (caller).
    let cache = unsafe { &*rc.cast::<CacheCore>() };
    cache.alloc_fast_only(Gfp::from_raw(gfp), node).cast()
}
