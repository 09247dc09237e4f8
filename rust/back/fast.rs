// SPDX-License-Identifier: GPL-2.0

//! The fast paths of the direct-call replacements (`rust/back/direct.S`): an allocation
//! trampoline that finds the slot backing its cache jumps here with it, with preemption
//! on, and the fast path of the slot's rslub cache alone runs
//! ([`CacheCore::alloc_fast_only`]), as SLUB's runs with preemption on (its commit
//! checks the CPU's `tid`). The slot is held by the trampoline's check of its `kc` and by
//! never sleeping: `rslub_hook_unback()` clears `kc`, then waits for RCU Tasks (every
//! task to sleep of its own accord, or to be in user space or idle, plus an RCU grace
//! period) before it takes `rc`. Where the fast path is not enough, it leaves through the
//! miss of its entry point as a tail call (`rslub_dr_alloc*_miss()`, `rust/back/trampoline.c`),
//! given the function's own arguments, still in their registers, so that it saves none
//! and moves none; the miss looks the cache up again. An allocation that clears
//! something (`__GFP_ZERO`, `init_on_alloc`, `init_on_free`) leaves at once, by a tail
//! call too, for a function of its own that ends in the same miss: the others' path
//! keeps no register for it. Built with the trampolines only (`RSLUB_DIRECT`,
//! `rust/back/direct.h`).
//!
//! A backed cache's `kmem_cache_free_bulk()` (`rslub_r_free_bulk()`, with preemption
//! off and the slot checked) goes to its rslub cache's bulk free in one pass, which hands
//! what is not its own (the kernel's objects) back to C at the front of the array, to be
//! freed once preemption is on again, instead of a pass of C's over the array first
//! ([`rslub_backed_free_bulk`]).

use crate::{
    cache::{CacheCore, NO_NODE},
    gfp::Gfp,
};
use core::ffi::{c_int, c_uint, c_void};
use kernel::bindings;

extern "C" {
    // Lockdep kernels: warns where RCU does not watch (trampoline.c).
    #[cfg(CONFIG_PROVE_RCU)]
    fn rslub_dr_check_watching();
    // The misses: the full allocation, with preemption on (trampoline.c).
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

/// A slot of the backing index (`struct rslub_backing`, `rust/back/hook.h`, which asserts
/// this layout): the kernel cache it backs and the rslub cache that backs it.
#[repr(C)]
pub(crate) struct Slot {
    _kc: *mut bindings::kmem_cache,
    rc: *mut c_void,
}

/// The rslub cache of `slot`.
///
/// # Safety
///
/// `slot` must have been seen backing a cache, as the entry points below require.
#[inline(always)]
unsafe fn rc_of(slot: *const Slot) -> *mut c_void {
    // SAFETY: A slot of the static array (caller); its `rc`, aligned, does not change
    // while it backs the cache it was seen backing (caller), read once as C reads it.
    unsafe { core::ptr::read_volatile(&raw const (*slot).rc) }
}

/// The fast path of `kmem_cache_alloc(s, gfp)` from the rslub cache of `slot`, which
/// backs `s`: the object, or whatever `rslub_dr_alloc_miss(s, gfp)` returns.
///
/// # Safety
///
/// `slot` must be a slot whose `kc` the caller read as `s` (not null) since it last slept
/// of its own accord, and the caller must not sleep until this returns (RCU Tasks keeps
/// the slot's `rc` live until then: `rslub_hook_unback()`); `s` and `gfp` must be as
/// `kmem_cache_alloc()` was given them.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast(
    s: *mut bindings::kmem_cache,
    gfp: c_uint,
    slot: *const Slot,
) -> *mut c_void {
    // SAFETY: The caller's guarantees.
    let rc = unsafe { rc_of(slot) };
    // SAFETY: `rc` is live until this returns (caller); the clearing path takes this
    // function's arguments, the miss the caller's, each with the flags it is handed.
    unsafe {
        fast(
            rc,
            gfp,
            NO_NODE,
            |gfp| alloc_clearing(rc, gfp, s),
            |gfp| rslub_dr_alloc_miss(s, gfp),
        )
    }
}

/// [`rslub_backed_alloc_fast`] for an allocation that clears something, `gfp` with the
/// cache's clearing bits in it ([`CacheCore::with_clears`]).
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast`].
#[inline(never)]
#[cold]
unsafe fn alloc_clearing(
    rc: *mut c_void,
    gfp: c_uint,
    s: *mut bindings::kmem_cache,
) -> *mut c_void {
    // SAFETY: The caller's guarantees; the miss takes the caller's arguments.
    unsafe { clearing(rc, gfp, NO_NODE, |gfp| rslub_dr_alloc_miss(s, gfp)) }
}

/// [`rslub_backed_alloc_fast`] for `kmem_cache_alloc_lru(s, lru, gfp)` (`lru` goes to
/// its miss).
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast`], with `kmem_cache_alloc_lru()`'s arguments.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast_lru(
    s: *mut bindings::kmem_cache,
    lru: *mut bindings::list_lru,
    gfp: c_uint,
    slot: *const Slot,
) -> *mut c_void {
    // SAFETY: The caller's guarantees.
    let rc = unsafe { rc_of(slot) };
    // SAFETY: As in `rslub_backed_alloc_fast`, with `kmem_cache_alloc_lru()`'s arguments.
    unsafe {
        fast(
            rc,
            gfp,
            NO_NODE,
            |gfp| alloc_lru_clearing(rc, gfp, s, lru),
            |gfp| rslub_dr_alloc_lru_miss(s, lru, gfp),
        )
    }
}

/// [`rslub_backed_alloc_fast_lru`] for an allocation that clears something, `gfp` as
/// [`alloc_clearing`] takes it.
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast_lru`].
#[inline(never)]
#[cold]
unsafe fn alloc_lru_clearing(
    rc: *mut c_void,
    gfp: c_uint,
    s: *mut bindings::kmem_cache,
    lru: *mut bindings::list_lru,
) -> *mut c_void {
    // SAFETY: As in `alloc_clearing`, with `kmem_cache_alloc_lru()`'s arguments.
    unsafe { clearing(rc, gfp, NO_NODE, |gfp| rslub_dr_alloc_lru_miss(s, lru, gfp)) }
}

/// [`rslub_backed_alloc_fast`] for `kmem_cache_alloc_node(s, gfp, node)` (`NUMA_NO_NODE`:
/// any node).
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast`], with `kmem_cache_alloc_node()`'s arguments.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_alloc_fast_node(
    s: *mut bindings::kmem_cache,
    gfp: c_uint,
    node: c_int,
    slot: *const Slot,
) -> *mut c_void {
    // SAFETY: The caller's guarantees.
    let rc = unsafe { rc_of(slot) };
    // SAFETY: As in `rslub_backed_alloc_fast`, with `kmem_cache_alloc_node()`'s arguments.
    unsafe {
        fast(
            rc,
            gfp,
            node,
            |gfp| alloc_node_clearing(rc, gfp, node, s),
            |gfp| rslub_dr_alloc_node_miss(s, gfp, node),
        )
    }
}

/// [`rslub_backed_alloc_fast_node`] for an allocation that clears something, `gfp` as
/// [`alloc_clearing`] takes it.
///
/// # Safety
///
/// As for [`rslub_backed_alloc_fast_node`].
#[inline(never)]
#[cold]
unsafe fn alloc_node_clearing(
    rc: *mut c_void,
    gfp: c_uint,
    node: c_int,
    s: *mut bindings::kmem_cache,
) -> *mut c_void {
    // SAFETY: As in `alloc_clearing`, with `kmem_cache_alloc_node()`'s arguments.
    unsafe { clearing(rc, gfp, node, |gfp| rslub_dr_alloc_node_miss(s, gfp, node)) }
}

/// The body of every entry point above: the fast path of `rc` on `node` with the caller's
/// `gfp`, else `miss(gfp)`; an allocation that clears something goes to `clearing` at
/// once, given `gfp` with the cache's clearing bits ([`CacheCore::with_clears`]). Both
/// calls are tail calls once inlined.
///
/// # Safety
///
/// `rc` must be live until this returns, as the entry points say; `clearing` and `miss`
/// must be callable in that context.
#[inline(always)]
unsafe fn fast(
    rc: *mut c_void,
    gfp: c_uint,
    node: c_int,
    clearing: impl FnOnce(c_uint) -> *mut c_void,
    miss: impl FnOnce(c_uint) -> *mut c_void,
) -> *mut c_void {
    // Where RCU does not watch, nothing holds `rc` (see the C function): lockdep kernels
    // check that no allocation comes from there.
    #[cfg(CONFIG_PROVE_RCU)]
    // SAFETY: No precondition.
    unsafe {
        rslub_dr_check_watching()
    };
    // SAFETY: `rc` is live until this returns (caller).
    let cache = unsafe { cache(rc) };
    let gfp = cache.with_clears(Gfp::from_raw(gfp));
    if gfp.any(Gfp::CLEARS) {
        return clearing(gfp.raw());
    }
    // The caller's flags: the test fell through.
    let gfp = gfp.raw();
    let object = cache.alloc_fast_only(Gfp::from_raw(gfp), node);
    if !object.is_null() {
        return object.cast();
    }
    miss(gfp)
}

/// The body of the clearing functions above: the clearing fast path of `rc` on `node`,
/// `gfp` with the cache's clearing bits in it, else `miss` given them without rslub's own
/// mark ([`CacheCore::without_mark`]), at most the cache's own `__GFP_ZERO` added to the
/// caller's.
///
/// # Safety
///
/// As for [`fast`].
#[inline(always)]
unsafe fn clearing(
    rc: *mut c_void,
    gfp: c_uint,
    node: c_int,
    miss: impl FnOnce(c_uint) -> *mut c_void,
) -> *mut c_void {
    // SAFETY: `rc` is live until this returns (caller).
    let cache = unsafe { cache(rc) };
    let object = cache.alloc_fast_only_clearing(Gfp::from_raw(gfp), node);
    if !object.is_null() {
        return object.cast();
    }
    miss(cache.without_mark(Gfp::from_raw(gfp)).raw())
}

/// `kmem_cache_free_bulk(s, nr, p)` of a kernel cache that the rslub cache `rc` backs: the
/// array in one pass of `rc`'s bulk free, which moves every pointer that is not on a slab
/// of `rc` (the kernel's objects, from before the backing) to the front of the array;
/// returns how many it moved there, for the caller to free where they belong once
/// preemption is back on. `usize::MAX`, with nothing freed, where `rc` looks at each
/// object before it frees it ([`CacheCore::free_bulk_mixed`]): the caller sorts the array
/// then.
///
/// # Safety
///
/// Preemption must be off, and a slot must have been seen backing the kernel cache with
/// `rc` since it was turned off; unless `nr` is 0, `p` must hold `nr` pointers, each null
/// or a live object of that kernel cache (whoever allocated it), given up by the caller.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_backed_free_bulk(
    rc: *mut c_void,
    nr: usize,
    p: *mut *mut c_void,
) -> usize {
    // Not reached today (the trampoline and the handler give an empty array to the
    // kernel), but an empty slice needs a non-null `p`, which a count of 0 does not promise.
    if nr == 0 {
        return 0;
    }
    // SAFETY: `p` holds `nr` pointers (caller), which the free may reorder, as SLUB's.
    let objects = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr) };
    // SAFETY: `rc` is live until preemption is back on (caller); every object is one of
    // the kernel cache's, so in the direct map, and either `rc`'s or on another slab.
    unsafe { cache(rc).free_bulk_mixed(objects) }.unwrap_or(usize::MAX)
}

/// The rslub cache `rc`.
///
/// # Safety
///
/// `rc` must be a live rslub cache, and stay live while the reference is used.
#[inline(always)]
unsafe fn cache<'a>(rc: *mut c_void) -> &'a CacheCore {
    // SAFETY: A live rslub cache (caller).
    unsafe { &*rc.cast::<CacheCore>() }
}
