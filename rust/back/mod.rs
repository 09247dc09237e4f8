// SPDX-License-Identifier: GPL-2.0

//! Backing kernel caches: an rslub cache serves the allocations of an existing
//! `kmem_cache`, and the frees of its objects, on an unpatched kernel; in whole-kernel
//! mode (`back=all`) every cache that allocates, and kmalloc (Documentation/backing.rst).
//!
//! # The layer
//!
//! - This file: the backing's state under one mutex ([`State`]): what is backed, what is
//!   draining, the names looked for, whether the hooks are registered. Backing checks a
//!   kernel cache and makes the rslub cache of the same geometry ([`prepare`]), then
//!   publishes it to the C side ([`publish`]); unbacking withdraws it and leaves the rslub
//!   cache draining until its last object comes back ([`release_drained`]). Also the
//!   decisions that need rslub's own types: which rslub cache owns a freed object
//!   ([`rslub_free_owned`]), usercopy's window ([`rslub_usercopy_bad`]).
//! - `kmalloc.rs`: kmalloc's size classes in whole-kernel mode.
//! - `file.rs`: the `back` debugfs file.
//! - `fast.rs`: the allocation fast paths the direct-call trampolines jump to.
//! - `*.c`, `hook.h`: what Rust cannot reach in 7.3 (`hook.h` says why): the index the
//!   hooks look a cache up in (`index.c`), the ftrace handlers (`handler.c`), the
//!   replacements of the kmem_cache API (`replace.c`), kmalloc's (`kmalloc.c`), RCU frees
//!   (`rcu.c`), usercopy (`usercopy.c`), sightings and watches (`sight.c`, `watch.c`),
//!   facts about a kernel cache (`kc.c`), the trampolines' callees (`trampoline.c`) and the
//!   registration of it all (`register.c`); `direct.S` holds the trampolines.
//!
//! # Paths
//!
//! Fast: a direct call from the kernel's `kmem_cache_alloc()` (and kin) to its trampoline
//! (`direct.S`), which finds the cache's slot in the index and jumps to rslub's fast path
//! (`fast.rs`), or back into the kernel's function for a cache rslub does not serve; a
//! free tests the object's slab page for one of rslub's shadows and frees it to its owner.
//! Where the trampoline's quick test cannot decide (a cache being sighted or watched), it
//! asks `rslub_d_alloc()`; a miss of the fast path, and the bulk allocation, go to their
//! callees (`trampoline.c`), which hold the slot by per-CPU counts and may sleep. The
//! functions without a direct call (`kmem_cache_destroy()`, `kmem_cache_charge()`), and
//! all of them on a kernel without direct calls or with `direct=0`, go through the ftrace
//! handler (`handler.c`), which decides and sends the call to its replacement
//! (`replace.c`). Objects keep going back where they came from, whatever the backing is
//! when they are freed.
//!
//! # Locks and lifetime
//!
//! The lock order is `rust/rslub.rs`'s. The handlers and trampolines take no lock: they
//! run with preemption off or under RCU, or hold a slot by its per-CPU counts, and an
//! unbacking waits for them (RCU Tasks while direct calls are registered) before it reuses
//! what they read. The hooks are registered while anything is backed, draining or looked
//! for, while whole-kernel mode is on or kmalloc's classes are served, and only then; they
//! hold the module. At exit the backing is closed first, then its file removed, then
//! checked ([`exit`]).

use crate::{
    cache::{CacheArgs, CacheCore},
    inject::{inject, Point},
    layout::{RECLAIM_ACCOUNT, TYPESAFE_BY_RCU},
    registry::Cache,
    slab,
};
use core::{
    ffi::{c_int, c_uint, c_ulong, c_void},
    ptr::{self, NonNull},
};
use kernel::{
    bindings,
    error::{
        code::{EBUSY, EEXIST, EINVAL, ENOENT, EOPNOTSUPP},
        to_result,
    },
    ffi::c_char,
    prelude::*,
};

mod ffi {
    use super::*;

    extern "C" {
        pub(super) fn rslub_hook_init() -> c_int;
        pub(super) fn rslub_hook_exit();
        pub(super) fn rslub_hook_quiesce();
        pub(super) fn rslub_rcu_barrier();
        pub(super) fn rslub_hook_back(
            kc: *const *mut bindings::kmem_cache,
            rc: *const *mut c_void,
            n: c_int,
        ) -> c_int;
        pub(super) fn rslub_hook_unback(kc: *mut bindings::kmem_cache) -> *mut c_void;
        pub(super) fn rslub_hook_drained(kc: *mut bindings::kmem_cache);
        pub(super) fn rslub_kc_info(
            kc: *mut bindings::kmem_cache,
            size: *mut c_uint,
            align: *mut c_uint,
            ctor: *mut Option<unsafe extern "C" fn(*mut c_void)>,
            flags: *mut c_ulong,
            name: *mut *const c_char,
        );
        pub(super) fn rslub_kc_refusal(kc: *mut bindings::kmem_cache) -> *const c_char;
        pub(super) fn rslub_kc_reclaim_account(kc: *mut bindings::kmem_cache) -> bool;
        pub(super) fn rslub_kc_typesafe_by_rcu(
            kc: *mut bindings::kmem_cache,
            offset: *mut c_uint,
        ) -> bool;
        pub(super) fn rslub_kc_known(name: *const c_char) -> *mut bindings::kmem_cache;
        pub(super) fn rslub_kc_sysfs_id(name: *const c_char, id: *mut c_char, len: usize) -> c_int;
        pub(super) fn rslub_kc_id(kc: *mut bindings::kmem_cache) -> *const c_char;
        pub(super) fn rslub_kc_usercopy(
            kc: *mut bindings::kmem_cache,
            offset: *mut c_uint,
            size: *mut c_uint,
        ) -> bool;
        pub(super) fn rslub_kc_hold(kc: *mut bindings::kmem_cache) -> bool;
        pub(super) fn rslub_kc_merge_size(kc: *mut bindings::kmem_cache) -> c_uint;
        pub(super) fn rslub_kc_release(kc: *mut bindings::kmem_cache);
        pub(super) fn rslub_kc_destroyed(kc: *mut bindings::kmem_cache) -> bool;
        pub(super) fn rslub_hook_watch(name: *const c_char) -> c_int;
        pub(super) fn rslub_hook_seen(slot: c_int) -> *mut bindings::kmem_cache;
        pub(super) fn rslub_hook_seen_destroyed(kc: *mut bindings::kmem_cache);
        pub(super) fn rslub_hook_seen_gone(slot: c_int) -> bool;
        pub(super) fn rslub_hook_unwatch(slot: c_int);
        pub(super) fn rslub_hook_all(on: bool, prefix: *const c_char) -> c_int;
        pub(super) fn rslub_sight_take() -> *mut bindings::kmem_cache;
        pub(super) fn rslub_sight_forget(kc: *mut bindings::kmem_cache) -> bool;
        #[cfg_attr(not(rslub_kunit), expect(dead_code, reason = "the suites stop it"))]
        pub(super) fn rslub_sight_flush();
        pub(super) fn rslub_sight_dropped() -> bool;
        pub(super) fn rslub_can_sight() -> bool;
        pub(super) fn rslub_kmalloc_caches(
            kcs: *mut *mut bindings::kmem_cache,
            max: c_int,
        ) -> c_int;
        pub(super) fn rslub_hook_kmalloc(
            kc: *const *mut bindings::kmem_cache,
            rc: *const *mut c_void,
            n: c_int,
        ) -> c_int;
        #[cfg(rslub_kunit)]
        pub(super) fn rslub_unhook_kmalloc();
        #[cfg(rslub_kunit)]
        pub(super) fn rslub_kmalloc_only(on: bool);
        #[cfg(rslub_inject)]
        pub(super) fn rslub_kmalloc_fail_next();
        #[cfg(rslub_inject)]
        pub(super) fn rslub_kmalloc_failed_served() -> bool;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_kmalloc_kv_vmalloc(on: bool);
        #[cfg(rslub_inject)]
        pub(super) fn rslub_kmalloc_hooked() -> bool;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_kmalloc_filtered() -> bool;
    }
}

#[cfg(all(
    CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS,
    CONFIG_DYNAMIC_FTRACE_WITH_JMP,
    CONFIG_X86_64
))]
mod fast;
mod file;
mod kmalloc;

/// Frees `obj`, a pointer on a slab page the hooks found rslub owns (its cache is one of
/// rslub's shadows, `rust/slab_page.c`, at the `kfree()` or `kmem_cache_free()` that
/// reaches here): its slab leads to its cache in two loads, without validating the page
/// again. A pointer that is not the start of an object (a caller's bug) is reported, and
/// nothing is freed.
///
/// # Safety
///
/// `obj` must lie on a live slab of an rslub cache; if it is the start of an object, the
/// object is live, freed by its owner, and not used afterwards.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_free_owned(obj: *mut c_void) {
    let obj = obj.cast::<u8>();
    // SAFETY: `obj` lies on a live rslub slab (caller), whose pages are in the direct map.
    unsafe { free_on(crate::slab::slab_of(obj), obj) };
}

/// [`rslub_free_owned`] of `obj`, whose slab's head page is `head`: what the direct-call
/// trampolines of `kfree()`, `kvfree()` and `kmem_cache_free()` jump to with the head page
/// their ownership test found (`rust/back/direct.S`), so that it is not found again.
///
/// # Safety
///
/// As for [`rslub_free_owned`]; `head` must be the head page of `obj`'s slab.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_free_owned_on(obj: *mut c_void, head: *const bindings::page) {
    // SAFETY: `head` is the head page of `obj`'s live rslub slab (caller).
    unsafe { free_on(crate::slab::slab_of_head(head), obj.cast()) };
}

/// Frees `obj`, a pointer on the live slab `slab` of an rslub cache: the object it starts,
/// or, where it starts none (a caller's bug), nothing, reported.
///
/// # Safety
///
/// As for [`rslub_free_owned`]; `slab` must be the metadata of `obj`'s slab.
#[inline(always)]
unsafe fn free_on(slab: *const slab::Slab, obj: *mut u8) {
    // SAFETY: `slab` is live (caller), and its `cache` is the live `CacheCore` it came from.
    let (slab, cache) = unsafe { (&*slab, &*(*slab).cache.cast::<CacheCore>()) };
    if !cache.starts_object(slab, obj) {
        return cache.not_an_object(slab, obj);
    }
    // SAFETY: The start of a live object of `cache` (checked; caller), freed once here.
    unsafe { cache.free(NonNull::new_unchecked(obj)) };
}

/// Frees the objects that hold the `n` addresses at `inside`, each an address inside a
/// live rslub object that its owner gave up (the `kvfree_rcu_head` of a `kfree_rcu()`,
/// once the grace period has passed: `rust/back/rcu.c`). Each object's start comes from
/// its slab's own geometry, exact for any address inside it; each run of consecutive
/// objects of one cache goes to that cache's bulk free, as the kernel's `kfree_rcu()`
/// batches go to `kfree_bulk()`. The array is rewritten.
///
/// # Safety
///
/// Each of the `n` addresses must lie inside a live object of an rslub cache, which its
/// owner gave up and does not use afterwards; `inside` must be valid for `n` reads and
/// writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_free_owned_at_bulk(inside: *mut *mut c_void, n: usize) {
    if n == 0 {
        return;
    }
    // SAFETY: Valid for `n` reads and writes (caller).
    let all = unsafe { core::slice::from_raw_parts_mut(inside.cast::<*mut u8>(), n) };
    // The object starts are written in place, from the front (`kept` never passes the
    // pointer being read); `start` is where the current cache's run of them begins.
    let (mut start, mut kept) = (0, 0);
    let mut run: Option<&CacheCore> = None;
    for j in 0..n {
        // SAFETY: Each lies in a live rslub object (caller), hence on its live slab.
        let (slab, cache) = unsafe { slab_and_cache(all[j]) };
        if let Some(r) = run.filter(|r| !core::ptr::eq(*r, cache)) {
            // SAFETY: Live objects of `r`, given up by their owners (caller), each once.
            unsafe { r.free_bulk(&mut all[start..kept]) };
            start = kept;
        }
        run = Some(cache);
        match cache.object_holding(slab, all[j]) {
            Some(obj) => {
                all[kept] = obj;
                kept += 1;
            }
            // A pointer that starts no object: reported, and left out.
            None => cache.not_an_object(slab, all[j]),
        }
    }
    if let Some(r) = run {
        // SAFETY: As above.
        unsafe { r.free_bulk(&mut all[start..kept]) };
    }
}

/// The slab holding `p`, and its cache, in two loads.
///
/// # Safety
///
/// `p` must lie on a live slab of an rslub cache; the references are used only while the
/// slab (and so its cache) lives.
unsafe fn slab_and_cache<'a>(p: *const u8) -> (&'a slab::Slab, &'a CacheCore) {
    // SAFETY: `p`'s page points at its live `Slab` (caller), whose `cache` is the live
    // `CacheCore` it came from.
    unsafe {
        let s = &*crate::slab::slab_of(p);
        (s, &*s.cache.cast::<CacheCore>())
    }
}

/// Hardened usercopy of `n` bytes at `ptr`, inside an rslub slab: whether the copy leaves
/// the object or its cache's usercopy window ([`CacheCore::usercopy_violation`]); if so,
/// `offset` is `ptr`'s offset in its object and `name` the cache's name, for the report.
///
/// # Safety
///
/// `ptr` must lie on a live slab of an rslub cache (the hooks checked it); `offset` and
/// `name` must be valid for writes.
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_usercopy_bad(
    ptr: *const c_void,
    n: c_ulong,
    offset: *mut c_ulong,
    name: *mut *const c_char,
) -> bool {
    // The handler found an rslub slab there, but a copy of freed memory (the bug class
    // this check is for) may find it gone since: ownership again, as the handler checks
    // it; a slab freed now is the kernel's to check.
    if crate::mm::owner_of(ptr.cast()).is_null() {
        return false;
    }
    // SAFETY: On a live rslub slab (caller; checked again just above).
    let (slab, cache) = unsafe { slab_and_cache(ptr.cast()) };
    match cache.usercopy_violation(slab, ptr.cast(), n as usize) {
        None => false,
        Some(off) => {
            // SAFETY: Valid for writes (caller); the name lives as long as the cache.
            unsafe {
                *offset = off as c_ulong;
                *name = cache.name().as_char_ptr();
            }
            true
        }
    }
}

/// The object size of `obj`'s cache: what `ksize()` of an rslub object returns (the
/// caller may use that many bytes, and no more: the rest of the stride can hold the free
/// pointer of a cache with a constructor).
///
/// # Safety
///
/// `obj` must be a live object of an rslub cache (the hooks checked it).
#[no_mangle]
pub(crate) unsafe extern "C" fn rslub_object_size(obj: *const c_void) -> usize {
    // SAFETY: A live rslub object (caller).
    unsafe { slab_and_cache(obj.cast()) }.1.layout().object_size as usize
}

/// Called by the hooks when a backed cache, or one found by name, is being destroyed by
/// one of its creators (`kmem_cache_destroy()`). With the `last` reference it is unbacked
/// first, so the table never points at a freed cache; objects rslub still holds for it
/// drain as after any unbacking.
///
/// A cache found by name and not backed yet ([`Found`]) is marked destroyed, under the
/// same lock, at any destroy of it: backing it afterwards is refused. Not only at the
/// last: another creator's destroy may already be inside the kernel's function, unseen,
/// and free the struct after this one drops its reference.
#[no_mangle]
pub(crate) extern "C" fn rslub_back_destroying(kc: *mut bindings::kmem_cache, last: bool) {
    if let Some(kc) = NonNull::new(kc) {
        // SAFETY: The cache is live until the kernel's `kmem_cache_destroy()`, which runs
        // after this returns.
        let kc = unsafe { KmemCache::from_raw(kc) };
        let mut st = BACK.lock();
        // SAFETY: No precondition; compares the pointer only.
        unsafe { ffi::rslub_hook_seen_destroyed(kc.as_ptr()) };
        if !last {
            return;
        }
        if let Ok(live) = unback_locked(&mut st, kc) {
            if live != 0 {
                pr_warn!(
                    "a backed cache was destroyed with {live} objects still allocated from rslub\n"
                );
            }
        }
    }
}

/// Called by the hooks after the kernel's `kmem_cache_destroy()` of a cache whole-kernel
/// mode sighted, once every creator has destroyed it (its struct still held by the
/// sighting): a backing the worker made after the destroy's unbacking goes, then the
/// sighting, and the hold on the cache's struct that it kept (the struct may be freed
/// then). Under the lock that [`rslub_back_sighted`] holds while it looks at a cache, so
/// it never reads a freed one. Drained caches are destroyed meanwhile: nobody writes
/// `drain` in whole-kernel mode.
#[no_mangle]
pub(crate) extern "C" fn rslub_back_destroyed(kc: *mut bindings::kmem_cache) {
    let Some(kc) = NonNull::new(kc) else {
        return;
    };
    // SAFETY: Held by its sighting until the forget below; nothing reads it after.
    let kc = unsafe { KmemCache::from_raw(kc) };
    let mut st = BACK.lock();
    if st.list.iter().any(|b| b.kc == kc && !b.draining) {
        let _ = unback_locked(&mut st, kc);
    }
    // SAFETY: `kc`'s struct is held by its sighting until this call drops it; nothing
    // reads it after.
    unsafe { ffi::rslub_sight_forget(kc.as_ptr()) };
    release_drained_locked(&mut st);
}

/// The worker of whole-kernel mode: backs every cache the hooks sighted since it last
/// ran (each once: the hooks sight a cache only once), or records why it cannot.
#[no_mangle]
pub(crate) extern "C" fn rslub_back_sighted() {
    loop {
        // One cache per hold of the lock: destroys wait for it.
        let mut st = BACK.lock();
        // SAFETY: No precondition; the lock is held, as taking a sighting requires.
        let Some(kc) = NonNull::new(unsafe { ffi::rslub_sight_take() }) else {
            break;
        };
        // SAFETY: A sighted cache's struct is held until its last destroy forgets the
        // sighting, under the lock held here; one destroyed since is not used below.
        let kc = unsafe { KmemCache::from_raw(kc) };
        back_sighted(&mut st, kc);
    }
}

/// Backs `kc`, sighted in whole-kernel mode (its struct held, the lock held), unless it
/// is destroyed, backed already, or one rslub cannot serve (recorded with its reason).
fn back_sighted(st: &mut State, kc: KmemCache) {
    // SAFETY: Held (caller).
    if unsafe { ffi::rslub_kc_destroyed(kc.as_ptr()) } {
        return;
    }
    if st.list.iter().any(|b| b.kc == kc && !b.draining) {
        return;
    }
    let why = match obstacle(st, kc) {
        Some((_, why)) => why,
        None => match back_locked(st, kc) {
            Ok(()) => return,
            // `prepare` or `publish` said why.
            Err(_) => c"see the kernel log",
        },
    };
    if let Ok(name) = kernel::str::CString::try_from(kc.name()) {
        // Lost if memory is short: the list only informs.
        let _ = st.refused.push(Refused { name, why }, GFP_KERNEL);
    }
}

/// Starts whole-kernel mode: from now on the hooks stay, every cache that allocates is
/// sighted and backed or refused by [`rslub_back_sighted`]. `prefix` limits it to the
/// caches whose name starts with it (the suites' own); without one, there is no way
/// back: the hooks hold the module until shutdown.
///
/// Without a prefix, kmalloc is served too ([`kmalloc`]), before any cache is sighted: a
/// failure up to then leaves nothing behind, and nothing fails after it.
fn start_all(st: &mut State, prefix: Option<&'static CStr>) -> Result {
    // SAFETY: No precondition.
    if !unsafe { ffi::rslub_can_sight() } {
        pr_err!("back=all: a cache's struct cannot be held without sysfs\n");
        return Err(EOPNOTSUPP);
    }
    hook(st)?;
    if prefix.is_none() {
        if let Err(e) = kmalloc::start(st) {
            // Nothing was served: the hooks go, or the failed load would leave them.
            unhook_if_idle(st);
            return Err(e);
        }
    }
    let prefix = prefix.map_or(ptr::null(), |p| p.as_char_ptr());
    // SAFETY: The hooks are registered; `prefix` is null or lives for ever. Cannot fail
    // where `rslub_can_sight()` holds.
    let r = unsafe { ffi::rslub_hook_all(true, prefix) };
    debug_assert_eq!(r, 0);
    st.all = true;
    Ok(())
}

/// Serves kmalloc from the size classes ([`kmalloc`]), for the calling task's calls from
/// this module only (so that no object of the kernel's outlives them), until
/// [`stop_kmalloc`].
#[cfg(rslub_kunit)]
pub(crate) fn start_kmalloc_for_suite() -> Result {
    let mut st = BACK.lock();
    // SAFETY: No precondition; before the hooks, so that they never serve anyone else.
    unsafe { ffi::rslub_kmalloc_only(true) };
    kmalloc::start(&mut st).inspect_err(|_| {
        // SAFETY: No precondition.
        unsafe { ffi::rslub_kmalloc_only(false) };
    })
}

/// Ends [`start_kmalloc_for_suite`]: no object of the classes may be left.
#[cfg(rslub_kunit)]
pub(crate) fn stop_kmalloc() {
    let mut st = BACK.lock();
    kmalloc::stop(&mut st);
    // SAFETY: No precondition; the hooks are gone.
    unsafe { ffi::rslub_kmalloc_only(false) };
}

/// Whole-kernel mode for the caches whose name starts with `prefix` (see [`start_all`]),
/// until [`stop_all`].
#[cfg(rslub_kunit)]
pub(crate) fn start_all_for(prefix: &'static CStr) -> Result {
    start_all(&mut BACK.lock(), Some(prefix))
}

/// Ends the whole-kernel mode of [`start_all_for`]: no cache is sighted any more, the
/// sightings and their holds go, the caches it backed stay backed. No sighted cache may
/// be being destroyed meanwhile.
#[cfg(rslub_kunit)]
pub(crate) fn stop_all() {
    // SAFETY: No precondition; waits for the worker, which takes the lock: not held here.
    unsafe {
        ffi::rslub_hook_all(false, ptr::null());
        // Sighting has stopped and the worker is done; takes the lock of destroys,
        // which comes before the backing lock.
        ffi::rslub_sight_flush();
    }
    let mut st = BACK.lock();
    st.all = false;
    st.refused = KVec::new();
    unhook_if_idle(&mut st);
}

/// A kernel `kmem_cache`.
///
/// # Invariants
///
/// Points at a live `struct kmem_cache` for as long as the value is used: its creator
/// does not destroy it while it is backed (unbacking comes first, see backing.rst), or,
/// for a backed cache whose last destroy unbacking missed (a merged cache's, see
/// `rslub_kc_hold()`), at its struct, still allocated: held until it is unbacked.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct KmemCache(NonNull<bindings::kmem_cache>);

// SAFETY: A handle to a kernel object that any CPU may use.
unsafe impl Send for KmemCache {}

impl KmemCache {
    /// A handle to the kernel cache at `kc`.
    ///
    /// # Safety
    ///
    /// `kc` must be a live `kmem_cache` that is not destroyed while the handle is used.
    pub(crate) unsafe fn from_raw(kc: NonNull<bindings::kmem_cache>) -> Self {
        // INVARIANT: the caller's guarantee.
        Self(kc)
    }

    fn as_ptr(self) -> *mut bindings::kmem_cache {
        self.0.as_ptr()
    }

    /// The cache's name in `/sys/kernel/slab` ([`sysfs_id`]), if it has one.
    fn id(self) -> Option<&'static CStr> {
        // SAFETY: A live cache (invariant).
        let id = unsafe { ffi::rslub_kc_id(self.as_ptr()) };
        // SAFETY: Null, or the cache's kobject name, a C string that lives as long as the
        // cache, which is all the caller may use it for.
        (!id.is_null()).then(|| unsafe { CStr::from_char_ptr(id) })
    }

    /// What rslub needs of the cache to serve it: object size, alignment, constructor,
    /// flags and name (its first creator's, for a merged cache).
    fn info(self) -> KcInfo {
        let mut i = KcInfo {
            size: 0,
            align: 0,
            ctor: None,
            flags: 0,
            name: c"",
        };
        let mut name = ptr::null();
        // SAFETY: A live cache (invariant); the pointers are valid for writes.
        unsafe {
            ffi::rslub_kc_info(
                self.as_ptr(),
                &mut i.size,
                &mut i.align,
                &mut i.ctor,
                &mut i.flags,
                &mut name,
            )
        };
        // SAFETY: A live cache's name is a C string that lives as long as the cache,
        // which is all the caller may use it for.
        i.name = unsafe { CStr::from_char_ptr(name) };
        i
    }

    /// The cache's name (its first creator's, for a merged cache).
    fn name(self) -> &'static CStr {
        self.info().name
    }

    /// Why rslub cannot serve this cache, if it cannot.
    fn refusal(self) -> Option<&'static CStr> {
        // SAFETY: A live cache (invariant).
        let r = unsafe { ffi::rslub_kc_refusal(self.as_ptr()) };
        // SAFETY: `rslub_kc_refusal` returns null or a static C string.
        (!r.is_null()).then(|| unsafe { CStr::from_char_ptr(r) })
    }
}

/// What [`KmemCache::info`] reads of a kernel cache.
struct KcInfo {
    size: c_uint,
    align: c_uint,
    ctor: Option<unsafe extern "C" fn(*mut c_void)>,
    flags: c_ulong,
    name: &'static CStr,
}

/// A backed cache, or one draining after unbacking.
struct Backing {
    kc: KmemCache,
    cache: Cache,
    draining: bool,
    /// Whether `kc`'s struct is held (`rslub_kc_hold()`) until it is unbacked.
    held: bool,
}

impl Backing {
    /// Whether the backed cache was destroyed by all its creators, though unbacking did
    /// not see the last destroy (see `rslub_kc_hold()`): unbacked by the next `drain`.
    fn destroyed(&self) -> bool {
        // SAFETY: A backed cache's struct is allocated while it is backed (`KmemCache`).
        !self.draining && self.held && unsafe { ffi::rslub_kc_destroyed(self.kc.as_ptr()) }
    }
}

/// Backed and draining caches, names being looked for, and whether the hooks are
/// registered.
pub(crate) struct State {
    list: KVec<Backing>,
    watching: u32,
    hooked: bool,
    /// Whole-kernel mode: every cache that allocates is backed, or refused, as it is
    /// sighted ([`rslub_back_sighted`]).
    all: bool,
    /// The caches whole-kernel mode sighted and could not back, and why.
    refused: KVec<Refused>,
    /// Whole-kernel mode's kmalloc size classes, while kmalloc is hooked.
    kmalloc: KVec<kmalloc::Class>,
    /// The module is going away ([`close`]): nothing more is backed, and the hooks are
    /// not registered again.
    closed: bool,
    /// The `back` file, until the exit removes it.
    file: Option<file::BackFile>,
}

/// A cache sighted in whole-kernel mode that rslub does not back.
struct Refused {
    name: kernel::str::CString,
    why: &'static CStr,
}

kernel::sync::global_lock! {
    // SAFETY: `init()` initialises it in the module initialiser before any other use.
    unsafe(uninit) static BACK: Mutex<State> = State {
        list: KVec::new(),
        watching: 0,
        hooked: false,
        all: false,
        refused: KVec::new(),
        kmalloc: KVec::new(),
        closed: false,
        file: None,
    };
}

/// The name of `name`'s cache in `/sys/kernel/slab`: with slab merging, a mergeable
/// cache's directory is named by its flags and size (`:0000200`) and every name created
/// into it (the first creator's too) is a symlink to it; `None` if there is no such entry.
/// May sleep.
fn sysfs_id(name: &CStr) -> Option<kernel::str::CString> {
    let mut buf = [0u8; 64];
    // SAFETY: `name` is a C string; `buf` is valid for `buf.len()` bytes.
    let r =
        unsafe { ffi::rslub_kc_sysfs_id(name.as_char_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let id = CStr::from_bytes_until_nul(&buf).ok()?;
    kernel::str::CString::try_from(id).ok()
}

/// How long [`back_name`] waits for a cache of that name to allocate.
const SEEN_WITHIN_MS: u32 = 1000;

/// Initialises the backing state and makes its `back` file under `root` (the module's
/// debugfs directory).
///
/// # Safety
///
/// Must be called exactly once, in the module initialiser, before any other function of
/// this module.
pub(crate) unsafe fn init(root: &kernel::debugfs::Dir) -> Result {
    // SAFETY: Called once, before any use (caller).
    unsafe { BACK.init() };
    let f = file::new(root)?;
    BACK.lock().file = Some(f);
    Ok(())
}

/// A kernel cache that passed the checks, with the rslub cache that is to serve it: no
/// allocation has reached that cache yet, so dropping it loses nothing.
struct Prepared {
    kc: KmemCache,
    cache: Cache,
    /// The kernel cache's flags, for the message.
    flags: c_ulong,
}

/// Checks that rslub can serve `kc` and makes the rslub cache of the same name, object
/// size, alignment and constructor, reserving room for it in `st`. Refuses, with a
/// message and changing nothing, a cache rslub cannot serve (`EINVAL`), one already
/// backed or still draining (`EEXIST`).
fn prepare(st: &mut State, kc: KmemCache) -> Result<Prepared> {
    let KcInfo {
        mut size,
        align,
        ctor,
        flags,
        name,
    } = kc.info();
    // A mergeable cache's object size grows when a larger alias is merged into it
    // (`__kmem_cache_alias()`, up to its stride, so that zeroing clears every alias's
    // whole object): serve the stride, which no alias exceeds.
    // SAFETY: A live cache (invariant).
    size = size.max(unsafe { ffi::rslub_kc_merge_size(kc.as_ptr()) });
    if let Some((e, why)) = obstacle(st, kc) {
        pr_err!("cannot back {name}: {why}\n");
        return Err(e);
    }
    // A `SLAB_TYPESAFE_BY_RCU` cache's free pointer goes where the kernel cache has it
    // inside the object (its `freeptr_offset`), else after the object.
    let mut offset = c_uint::MAX;
    // SAFETY: A live cache (invariant); the pointer is valid for writes.
    let typesafe = unsafe { ffi::rslub_kc_typesafe_by_rcu(kc.as_ptr(), &mut offset) };
    // The rslub cache has the kernel cache's name: a draining one of that name is in the
    // way (`EEXIST`) until its last object is freed.
    let cache = Cache::create(&CacheArgs {
        name,
        size,
        align,
        flags: if typesafe { TYPESAFE_BY_RCU } else { 0 }
            // SAFETY: A live cache (invariant).
            | if unsafe { ffi::rslub_kc_reclaim_account(kc.as_ptr()) } {
                RECLAIM_ACCOUNT
            } else {
                0
            },
        ctor,
        freeptr_offset: (typesafe && offset != c_uint::MAX).then_some(offset),
    })
    .inspect_err(|e| {
        pr_err!("cannot back {name}: no rslub cache of that name ({e:?}; still draining?)\n")
    })?;
    let (mut uo, mut us) = (0, 0);
    // SAFETY: A live cache (invariant); the pointers are valid for writes.
    if unsafe { ffi::rslub_kc_usercopy(kc.as_ptr(), &mut uo, &mut us) } {
        // Before any object of it is out there.
        cache.set_usercopy(uo, us);
    }
    Ok(Prepared { kc, cache, flags })
}

/// Backs every cache of `prepared`, or none: the hooks are registered, the table takes
/// all of them in one step (or refuses all), and only then do allocations reach them.
/// On failure the rslub caches are destroyed (nothing was allocated from them) and the
/// hooks go if nothing else needs them.
fn publish(st: &mut State, prepared: KVec<Prepared>) -> Result {
    // Room for all before anything is published: once the table holds them, nothing
    // below may fail.
    st.list.reserve(prepared.len(), GFP_KERNEL)?;
    let mut kcs = KVec::with_capacity(prepared.len(), GFP_KERNEL)?;
    let mut rcs = KVec::with_capacity(prepared.len(), GFP_KERNEL)?;
    for p in prepared.iter() {
        let core: *const CacheCore = &*p.cache;
        kcs.push(p.kc.as_ptr(), GFP_KERNEL)?;
        rcs.push(core.cast_mut().cast::<c_void>(), GFP_KERNEL)?;
    }
    let mut held = KVec::with_capacity(prepared.len(), GFP_KERNEL)?;
    for p in prepared.iter() {
        // SAFETY: A live cache (`KmemCache`).
        held.push(unsafe { ffi::rslub_kc_hold(p.kc.as_ptr()) }, GFP_KERNEL)?;
    }
    let r = hook(st).and_then(|()| {
        // SAFETY: Every `kc` is live; every `rc` stays live until unbacked and drained
        // (the list below keeps it). The arrays hold `len` entries each.
        to_result(unsafe { ffi::rslub_hook_back(kcs.as_ptr(), rcs.as_ptr(), kcs.len() as c_int) })
    });
    if let Err(e) = r {
        pr_err!("cannot back the caches asked for: {e:?}\n");
        for (p, h) in prepared.iter().zip(held.iter()) {
            if *h {
                // SAFETY: Held above, and in no table.
                unsafe { ffi::rslub_kc_release(p.kc.as_ptr()) };
            }
        }
        drop(prepared);
        unhook_if_idle(st);
        return Err(e);
    }
    for (p, held) in prepared.into_iter().zip(held) {
        let l = p.cache.layout();
        pr_info!(
            "backing {} ({} bytes, align {}, flags {:#x})\n",
            p.cache.name(),
            l.object_size,
            l.align,
            p.flags
        );
        // Cannot fail: room for all was reserved above, under the lock held since.
        st.list.push(
            Backing {
                kc: p.kc,
                cache: p.cache,
                draining: false,
                held,
            },
            GFP_KERNEL,
        )?;
    }
    Ok(())
}

/// Backs `kc` with a new rslub cache of the same name, object size, alignment and
/// constructor (see [`prepare`] for the refusals).
#[cfg_attr(
    not(rslub_kunit),
    expect(
        dead_code,
        reason = "the suites and the benchmark back caches they made"
    )
)]
pub(crate) fn back(kc: KmemCache) -> Result {
    back_locked(&mut BACK.lock(), kc)
}

/// [`back`], under the lock.
fn back_locked(st: &mut State, kc: KmemCache) -> Result {
    let p = prepare(st, kc)?;
    let mut one = KVec::with_capacity(1, GFP_KERNEL)?;
    one.push(p, GFP_KERNEL)?;
    publish(st, one)
}

/// Stops backing `kc`: its allocations go to the kernel from now on. Returns the
/// objects rslub still holds for it; while there are some, the rslub cache drains
/// (see [`release_drained`]). `ENOENT` if `kc` is not backed. May sleep.
pub(crate) fn unback(kc: KmemCache) -> Result<u64> {
    unback_locked(&mut BACK.lock(), kc)
}

/// [`unback`], under the lock.
fn unback_locked(st: &mut State, kc: KmemCache) -> Result<u64> {
    let i = st
        .list
        .iter()
        .position(|b| b.kc == kc && !b.draining)
        .ok_or(ENOENT)?;
    // SAFETY: `kc` is live, or held; afterwards no hook or replacement uses the rslub
    // cache.
    unsafe { ffi::rslub_hook_unback(kc.as_ptr()) };
    if st.list[i].held {
        // SAFETY: Held since it was backed, and in the table no more: nothing of rslub's
        // reads the struct after this (`Backing::destroyed` only while backed).
        unsafe { ffi::rslub_kc_release(kc.as_ptr()) };
        st.list[i].held = false;
    }
    st.list[i].draining = true;
    // Objects given to kfree_rcu() are freed, not counted as live (as the kernel's
    // `kmem_cache_destroy()` waits for them with `kvfree_rcu_barrier_on_cache()`).
    // SAFETY: No precondition; may sleep, as this function may.
    unsafe { ffi::rslub_rcu_barrier() };
    let live = live_objects(&st.list[i].cache);
    if live == 0 {
        if let Ok(b) = st.list.remove(i) {
            drained(b);
        }
    }
    unhook_if_idle(st);
    Ok(live)
}

/// Waits until every object given to `kfree_rcu()` and its kin so far is freed.
#[cfg_attr(not(rslub_inject), expect(dead_code, reason = "the suites' race"))]
pub(crate) fn rcu_barrier() {
    // SAFETY: No precondition; may sleep, as this function may.
    unsafe { ffi::rslub_rcu_barrier() };
}

/// Objects of a cache nobody allocates from any more that are still allocated.
fn live_objects(c: &Cache) -> u64 {
    // SAFETY: The cache is unbacked: no CPU allocates from it; frees may still come.
    unsafe { c.shutdown() }.0
}

/// Destroys every draining rslub cache whose objects have all been freed; when nothing is
/// backed or draining any more, removes the hooks. Returns how many still drain.
pub(crate) fn release_drained() -> usize {
    release_drained_locked(&mut BACK.lock())
}

/// [`release_drained`], under the lock.
fn release_drained_locked(st: &mut State) -> usize {
    // Caches destroyed behind unbacking's back (see `rslub_kc_hold()`) are unbacked first.
    while let Some(kc) = st.list.iter().find(|b| b.destroyed()).map(|b| b.kc) {
        if let Some(b) = st.list.iter().find(|b| b.kc == kc) {
            pr_warn!(
                "{} was destroyed while backed (an alias's destroy unbacking did not see): unbacked\n",
                b.cache.name()
            );
        }
        let _ = unback_locked(st, kc);
    }
    let mut i = 0;
    while i < st.list.len() {
        let b = &st.list[i];
        if b.draining && live_objects(&b.cache) == 0 {
            if let Ok(b) = st.list.remove(i) {
                drained(b);
            }
            continue;
        }
        i += 1;
    }
    unhook_if_idle(st);
    st.list.iter().filter(|b| b.draining).count()
}

/// Ends `b`, unbacked and out of the list, whose rslub cache holds no object any more.
fn drained(b: Backing) {
    // SAFETY: `b.kc` is unbacked and none of its objects is rslub's: its bulk frees are
    // the kernel's. Only its address is used.
    unsafe { ffi::rslub_hook_drained(b.kc.as_ptr()) };
    // No object left and no hook can reach it: nothing refers to it.
    let _ = b.cache.destroy();
}

/// Registers the hooks unless they are.
fn hook(st: &mut State) -> Result {
    if st.closed {
        // The module is going away: hooks registered now would outlive its text.
        return Err(EBUSY);
    }
    if !st.hooked {
        // SAFETY: Not registered (`hooked` is false).
        to_result(unsafe { ffi::rslub_hook_init() })?;
        st.hooked = true;
    }
    Ok(())
}

/// Removes the hooks when nothing is backed, draining or looked for.
fn unhook_if_idle(st: &mut State) {
    if st.hooked && st.list.is_empty() && st.watching == 0 && !st.all && st.kmalloc.is_empty() {
        // SAFETY: Registered (`hooked`), and no cache is left for them to serve.
        unsafe { ffi::rslub_hook_exit() };
        st.hooked = false;
    }
}

/// Whether rslub's hooks are registered.
#[cfg(rslub_kunit)]
pub(crate) fn hooked() -> bool {
    BACK.lock().hooked
}

/// Whether kmalloc's hooks are registered or hold a class, and whether they are limited
/// to a task ([`start_kmalloc_for_suite`]).
#[cfg(rslub_inject)]
pub(crate) fn kmalloc_hooked() -> (bool, bool) {
    let _st = BACK.lock();
    // SAFETY: No precondition; under the backing lock, as every change of either.
    unsafe { (ffi::rslub_kmalloc_hooked(), ffi::rslub_kmalloc_filtered()) }
}

/// Whether a size class served the kmalloc probed by the last start of kmalloc's service
/// that failed with its hooks registered (the injection point `KmallocHook`).
#[cfg(rslub_inject)]
pub(crate) fn kmalloc_failed_served() -> bool {
    let _st = BACK.lock();
    // SAFETY: No precondition; under the backing lock, as every start.
    unsafe { ffi::rslub_kmalloc_failed_served() }
}

/// Makes the next starts of kmalloc's service fall back from kvmalloc's classes to vmalloc
/// itself rather than through the kernel's `__kvmalloc_node()` (`on`), as where that
/// function's call site is not where direct calls expect it.
#[cfg(rslub_inject)]
pub(crate) fn kmalloc_kv_vmalloc(on: bool) {
    let _st = BACK.lock();
    // SAFETY: No precondition; under the backing lock, as every start.
    unsafe { ffi::rslub_kmalloc_kv_vmalloc(on) }
}

/// How many caches are backed or draining (while any is, the module must stay).
#[cfg_attr(not(rslub_inject), expect(dead_code, reason = "the suites' check"))]
pub(crate) fn backings() -> usize {
    BACK.lock().list.len()
}

/// Backs the kernel cache named `name` (see [`back`] and [`find`]).
pub(crate) fn back_name(name: &CStr) -> Result {
    let found = find(name)?;
    back_found(core::slice::from_ref(&found))
}

/// Says whether rslub could back the kernel cache named `name`, changing nothing: found
/// as [`back_name`] finds it, then checked as [`prepare`] checks it (the refusal, or
/// already backed, with the same messages and errors); no rslub cache is made.
pub(crate) fn check_name(name: &CStr) -> Result {
    let found = find(name)?;
    let st = BACK.lock();
    let kc = found.live(&st)?;
    let cname = kc.name();
    if let Some((e, why)) = obstacle(&st, kc) {
        pr_info!("check {name}: cannot back {cname}: {why}\n");
        return Err(e);
    }
    pr_info!("check {name}: can back {cname}\n");
    Ok(())
}

/// What stops `kc` from being backed now, if anything: a cache rslub cannot serve
/// (`EINVAL`, and why), or one backed already (`EEXIST`).
fn obstacle(st: &State, kc: KmemCache) -> Option<(kernel::error::Error, &'static CStr)> {
    if let Some(why) = kc.refusal() {
        return Some((EINVAL, why));
    }
    if st.list.iter().any(|b| b.kc == kc && !b.draining) {
        return Some((EEXIST, c"already backed"));
    }
    None
}

/// A kernel cache found by name ([`find`]).
///
/// # Invariants
///
/// `kc` is one of the kernel's exported caches (`slot` is `None`), which live as long as
/// the kernel; or the cache that watch `slot` saw allocate, watched (on `name`) until
/// this is dropped, and live unless `rslub_hook_seen_gone(slot)`: its destroy goes
/// through the hooks, which mark the watch under the backing lock before the kernel
/// frees it. So under that lock, a cache that is not marked is live until the lock is
/// released, and after that only if it was backed meanwhile (destroying unbacks it).
struct Found {
    kc: KmemCache,
    slot: Option<c_int>,
    name: kernel::str::CString,
    /// What the watch compares: the name, or the cache's `/sys/kernel/slab` name.
    _key: kernel::str::CString,
}

impl Found {
    /// The cache found, unless it was destroyed since it was found (refused with
    /// `ENOENT` and a message): live until `_st` is released (invariant).
    fn live(&self, _st: &State) -> Result<KmemCache> {
        if let Some(slot) = self.slot {
            // SAFETY: `slot` is watched (invariant).
            if unsafe { ffi::rslub_hook_seen_gone(slot) } {
                pr_err!(
                    "cannot back {}: the cache of that name was destroyed meanwhile\n",
                    &*self.name
                );
                return Err(ENOENT);
            }
        }
        Ok(self.kc)
    }
}

impl Drop for Found {
    fn drop(&mut self) {
        if let Some(slot) = self.slot {
            // SAFETY: `slot` came from `rslub_hook_watch()`; afterwards no handler reads
            // `self._key`.
            unsafe { ffi::rslub_hook_unwatch(slot) };
            let mut st = BACK.lock();
            st.watching -= 1;
            unhook_if_idle(&mut st);
        }
    }
}

/// The kernel cache named `name`. The kernel's list of caches is not exported: a cache
/// the kernel exports a pointer to (the skb caches) is found at once; any other when it
/// next allocates, and a name that allocates nothing for a second is refused with
/// `ENOENT` (unknown, or idle), with a message saying so. A name merged into another
/// cache (slab merging) finds that cache, through its name in `/sys/kernel/slab`, and
/// says so: backing it serves every name merged into it. Registers the hooks while it
/// looks and until the result is dropped (it keeps watching, see [`Found`]).
fn find(name: &CStr) -> Result<Found> {
    let owned = kernel::str::CString::try_from(name)?;
    // SAFETY: `name` is a valid C string.
    if let Some(kc) = NonNull::new(unsafe { ffi::rslub_kc_known(name.as_char_ptr()) }) {
        // INVARIANT: the kernel's own long-lived caches.
        return Ok(Found {
            // SAFETY: Destroyed only through the hooked `kmem_cache_destroy()`, which
            // unbacks first.
            kc: unsafe { KmemCache::from_raw(kc) },
            slot: None,
            _key: kernel::str::CString::try_from(name)?,
            name: owned,
        });
    }
    let key = match sysfs_id(name) {
        Some(id) => id,
        None => kernel::str::CString::try_from(name)?,
    };
    let slot = {
        let mut st = BACK.lock();
        // A backed cache's allocations are not watched: say so now.
        // (A backed cache is live, and its id too, while the lock is held.)
        if st
            .list
            .iter()
            .any(|b| !b.draining && (b.cache.name() == name || b.kc.id() == Some(&*key)))
        {
            pr_err!("cannot back {name}: already backed\n");
            return Err(EEXIST);
        }
        hook(&mut st)?;
        // SAFETY: `key` stays valid until `rslub_hook_unwatch()` (in `Found::drop`, or
        // below).
        let slot = unsafe { ffi::rslub_hook_watch(key.as_char_ptr()) };
        if slot < 0 {
            unhook_if_idle(&mut st);
            pr_err!("cannot back {name}: too many names looked for at once\n");
            return Err(EBUSY);
        }
        st.watching += 1;
        slot
    };
    let start = kernel::time::Instant::<kernel::time::Monotonic>::now();
    let seen = loop {
        // SAFETY: `slot` is watched until the unwatch below.
        let seen = unsafe { ffi::rslub_hook_seen(slot) };
        if !seen.is_null() || start.elapsed().as_millis() >= i64::from(SEEN_WITHIN_MS) {
            break seen;
        }
        crate::shim::msleep(1);
    };
    if let Some(kc) = NonNull::new(seen) {
        if *key != *name {
            // The cache seen is live: its destroy waits for the lock held here (see
            // `Found`).
            let _st = BACK.lock();
            // SAFETY: `rslub_hook_seen_gone()` reads the slot under the lock.
            if !unsafe { ffi::rslub_hook_seen_gone(slot) } {
                // SAFETY: Live while the lock is held (above).
                let kc = unsafe { KmemCache::from_raw(kc) };
                pr_info!(
                    "{name} is merged into cache {} (/sys/kernel/slab/{}): backing it serves every name merged into it\n",
                    kc.name(),
                    &*key
                );
            }
        }
        // INVARIANT: the cache the watch saw, watched until the `Found` is dropped.
        return Ok(Found {
            // SAFETY: `Found::live` gives it out only while it is live (see there).
            kc: unsafe { KmemCache::from_raw(kc) },
            slot: Some(slot),
            name: owned,
            _key: key,
        });
    }
    // SAFETY: `slot` came from `rslub_hook_watch()`; afterwards no handler reads `key`.
    unsafe { ffi::rslub_hook_unwatch(slot) };
    let mut st = BACK.lock();
    st.watching -= 1;
    unhook_if_idle(&mut st);
    pr_err!(
        "cannot back {name}: no cache of that name allocated within {SEEN_WITHIN_MS} ms (unknown, or idle)\n"
    );
    Err(ENOENT)
}

/// Backs every cache of `found`, or none ([`prepare`], [`publish`]), under one hold of
/// the lock: none can be destroyed in between (see [`Found`]).
fn back_found(found: &[Found]) -> Result {
    for f in found {
        inject!(f, Point::NameFound);
    }
    let mut st = BACK.lock();
    if st.closed {
        if let Some(f) = found.first() {
            pr_err!("cannot back {}: rslub is going away\n", &*f.name);
        }
        return Err(EBUSY);
    }
    let mut prepared = KVec::with_capacity(found.len(), GFP_KERNEL)?;
    for f in found {
        let kc = f.live(&st)?;
        if prepared.iter().any(|p: &Prepared| p.kc == kc) {
            pr_err!("cannot back {}: named twice\n", &*f.name);
            return Err(EINVAL);
        }
        let p = prepare(&mut st, kc)?;
        prepared.push(p, GFP_KERNEL)?;
    }
    if prepared.is_empty() {
        return Ok(());
    }
    publish(&mut st, prepared)
}

/// Stops backing the cache named `name` (see [`unback`]): its own name, or any name
/// merged into it.
pub(crate) fn unback_name(name: &CStr) -> Result<u64> {
    let id = sysfs_id(name);
    let kc = {
        let st = BACK.lock();
        st.list
            .iter()
            .filter(|b| !b.draining)
            .find(|b| {
                // A backed cache is live (`KmemCache`), its id too while the lock is held.
                b.cache.name() == name || (id.is_some() && b.kc.id() == id.as_deref())
            })
            .map(|b| b.kc)
    };
    let Some(kc) = kc else {
        pr_err!("cannot unback {name}: not backed\n");
        return Err(ENOENT);
    };
    unback(kc)
}

/// Whether the module's `back=` parameter has been served ([`back_all`] at load
/// succeeded): until then the `back` file refuses, so that a load that fails cannot
/// leave behind a cache someone backed through the file meanwhile.
static LOADED: kernel::sync::atomic::Atomic<u32> = kernel::sync::atomic::Atomic::new(0);

/// Whether [`back_all`] of the load is done (see [`LOADED`]).
pub(crate) fn loaded() -> bool {
    LOADED.load(kernel::sync::atomic::Acquire) != 0
}

/// Backs every cache of `names` (comma-separated), or none: each is found and checked,
/// and its rslub cache made, before any is backed ([`publish`]). On the first refusal
/// nothing was backed, so no object of rslub's is out there: a load that fails on it
/// leaves no hook and nothing that points into the module.
pub(crate) fn back_all(names: &CStr) -> Result {
    let s = names.to_str().map_err(|_| EINVAL)?;
    if s.trim() == "all" {
        start_all(&mut BACK.lock(), None)?;
        pr_info!("back=all: every cache rslub can serve is backed as it allocates; rmmod is refused from now on (reboot to remove)\n");
        LOADED.store(1, kernel::sync::atomic::Release);
        return Ok(());
    }
    let mut found: KVec<Found> = KVec::new();
    for n in s.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let c = kernel::str::CString::try_from_fmt(fmt!("{n}"))?;
        found.push(find(&c)?, GFP_KERNEL)?;
    }
    back_found(&found)?;
    LOADED.store(1, kernel::sync::atomic::Release);
    Ok(())
}

/// The first step of the module's exit: from here on nothing is backed and the hooks are
/// not registered again, whatever a writer of the `back` file that is still running asks
/// (debugfs lets it finish; its module reference is not taken, see [`exit`]).
pub(crate) fn close() {
    BACK.lock().closed = true;
}

/// Undoes [`close`], for a suite that played the exit.
#[cfg(rslub_kunit)]
pub(crate) fn reopen() {
    BACK.lock().closed = false;
}

/// When the module goes away: nothing can be backed or draining by then (the hooks hold
/// the module while anything is); says so if that was broken.
///
/// A writer of the `back` file does not hold the module (debugfs files have no owner), so
/// one may still be running when the exit begins (one that holds the hooks holds the
/// module, and rmmod was refused). The exit first closes the backing ([`close`]): from then
/// on the writer's backing fails with `EBUSY` and registers no hooks
/// (`rslub_hook_init()`'s `try_module_get()` refuses too, once rmmod has begun). Then it
/// removes the file, outside the lock, which waits for the writer to finish. Only then
/// does it look.
///
/// The removal waits while it holds the lock of the module's debugfs directory, where a
/// cache's files are made and removed: a writer must make or destroy no rslub cache once
/// the backing is closed. [`back_found`] checks before [`prepare`] makes one, and drops
/// what it prepared while it holds the backing's lock.
pub(crate) fn exit() {
    close();
    let file = BACK.lock().file.take();
    drop(file);
    let mut st = BACK.lock();
    if !st.list.is_empty() {
        pr_err!("unloading while caches are backed or draining: their objects are leaked\n");
    } else {
        // A static is never dropped: the list's buffer goes now, or every load that
        // backed a cache would leak it.
        st.list = KVec::new();
        st.refused = KVec::new();
    }
    drop(st);
    // SAFETY: No precondition; may sleep, as module exit may. The barrier first: its
    // work frees objects in module text.
    unsafe {
        ffi::rslub_rcu_barrier();
        ffi::rslub_hook_quiesce();
    }
}

/// One line of the `back` file: `NAME STATE alloc N free N slabs N`, the objects rslub
/// served and took back for the cache, and its slabs.
fn show_counts(f: &mut kernel::fmt::Formatter<'_>, c: &Cache, state: &str) -> kernel::fmt::Result {
    let s = c.stats();
    writeln!(
        f,
        "{} {state} alloc {} free {} slabs {}",
        c.name().to_str().unwrap_or("?"),
        s.get(crate::stats::Stat::AllocFast) + s.get(crate::stats::Stat::AllocSlow),
        s.get(crate::stats::Stat::FreeFast) + s.get(crate::stats::Stat::FreeSlow),
        crate::topology::online_nodes()
            .map(|n| c.node_counts(n).0)
            .sum::<i64>()
    )
}

/// What the `back` debugfs file shows: one line per backed or draining cache, and per
/// kmalloc size class.
pub(crate) fn show(f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
    let st = BACK.lock();
    for b in st.list.iter() {
        let state = if b.draining {
            "draining"
        } else if b.destroyed() {
            "destroyed"
        } else {
            "backed"
        };
        show_counts(f, &b.cache, state)?;
    }
    for c in st.kmalloc.iter() {
        show_counts(f, c, "kmalloc")?;
    }
    for r in st.refused.iter() {
        writeln!(
            f,
            "{} refused: {}",
            r.name.to_str().unwrap_or("?"),
            r.why.to_str().unwrap_or("?")
        )?;
    }
    // SAFETY: No precondition.
    if st.all && unsafe { ffi::rslub_sight_dropped() } {
        writeln!(
            f,
            "the table of sightings is full: caches that allocated since were missed"
        )?;
    }
    Ok(())
}
