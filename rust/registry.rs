// SPDX-License-Identifier: GPL-2.0

//! The live caches, under one mutex: unique names, the module parameters caches are
//! created with, and each cache's debugfs files.

use crate::{
    cache::{CacheArgs, CacheCore, LiveObjects},
    debugfs::{CacheFiles, ModuleFiles},
    params::Params,
    shim,
};
use core::{mem::ManuallyDrop, ops::Deref, pin::Pin, ptr::NonNull};
use kernel::{
    debugfs::Dir,
    error::code::{EEXIST, EINVAL},
    prelude::*,
};

/// A registered cache and its debugfs files.
struct Entry {
    core: NonNull<CacheCore>,
    _files: CacheFiles,
}

// SAFETY: `CacheCore` is `Sync` (all shared state is per-cpu, atomic or locked); the entry
// only lets the holder of the registry lock look at it; the files are `Send`.
unsafe impl Send for Entry {}

/// A cache destroyed while objects of it were still allocated: kept, as SLUB keeps such
/// a cache on its list, so that the objects stay valid and can still be freed into it
/// (a late `kmem_cache_free()` of a backed cache's, a client's `rslub_cache_free()`).
///
/// # Invariants
///
/// The pointer comes from the `KBox` of a [`Cache`] whose destruction found live objects;
/// nothing else owns it.
struct Kept(NonNull<CacheCore>);

// SAFETY: `CacheCore` is `Sync`; only the holder of the registry lock looks at the list.
unsafe impl Send for Kept {}

/// What the registry lock protects.
pub(crate) struct Registry {
    params: Option<Params>,
    root: Option<Dir>,
    module_files: Option<ModuleFiles>,
    caches: KVec<Entry>,
    /// The caches destroyed with live objects ([`Kept`]), released at unload if their
    /// objects were freed meanwhile ([`exit`]).
    kept: KVec<Kept>,
}

kernel::sync::global_lock! {
    // SAFETY: `init()` initialises it in the module initialiser before any other use.
    unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry {
        params: None,
        root: None,
        module_files: None,
        caches: KVec::new(),
        kept: KVec::new(),
    };
}

/// Checks that this machine and kernel can run the allocator (a clear message and
/// `ENODEV` when not), then initialises the C shim and the registry with the module's
/// parameters and its debugfs directory. [`exit`] undoes it.
///
/// # Safety
///
/// Must be called exactly once, in the module initialiser, before any other function of
/// this module.
pub(crate) unsafe fn init(params: Params, debugfs_name: &CStr) -> Result {
    crate::cache::check_machine()?;
    shim::init(core::alloc::Layout::new::<crate::slab::Slab>())?;
    // SAFETY: Called once, before any use (caller).
    unsafe { REGISTRY.init() };
    let mut reg = REGISTRY.lock();
    reg.params = Some(params);
    let root = Dir::new(debugfs_name);
    match ModuleFiles::new(&root, params) {
        Ok(f) => reg.module_files = Some(f),
        Err(e) => {
            drop(reg);
            shim::exit();
            return Err(e);
        }
    }
    reg.root = Some(root);
    drop(reg);
    if let Err(e) = shim::hotplug_init() {
        exit_registry();
        return Err(e);
    }
    if let Err(e) = shim::shrinker_init(debugfs_name) {
        shim::hotplug_exit();
        exit_registry();
        return Err(e);
    }
    Ok(())
}

/// The module's debugfs directory, between [`init`] and [`exit`] (`EINVAL` otherwise).
pub(crate) fn root() -> Result<Dir> {
    REGISTRY.lock().root.clone().ok_or(EINVAL)
}

/// The module's parameters, once [`init`] ran.
#[cfg(rslub_inject)]
pub(crate) fn params() -> Option<Params> {
    REGISTRY.lock().params
}

/// The shrinker's count (`rust/shim.c`): pages of empty slabs the node lists keep beyond
/// `min_partial` partial slabs, over all caches. Memory reclaim may call it while this
/// module's own code allocates under the registry mutex, so it only tries the mutex (0
/// when busy).
#[no_mangle]
extern "C" fn rslub_shrink_count() -> core::ffi::c_ulong {
    shrink_count() as core::ffi::c_ulong
}

/// [`rslub_shrink_count`], for Rust.
pub(crate) fn shrink_count() -> u64 {
    let Some(reg) = REGISTRY.try_lock() else {
        return 0;
    };
    reg.caches
        .iter()
        // SAFETY: Registered caches are live while the lock is held.
        .map(|e| unsafe { e.core.as_ref() }.reclaimable_pages())
        .sum::<u64>()
}

/// The shrinker's scan: gives back up to `nr` pages of such slabs; returns how many.
#[no_mangle]
extern "C" fn rslub_shrink_scan(nr: core::ffi::c_ulong) -> core::ffi::c_ulong {
    let Some(reg) = REGISTRY.try_lock() else {
        return 0;
    };
    let mut freed = 0u64;
    for e in reg.caches.iter() {
        if freed >= nr {
            break;
        }
        // SAFETY: Registered caches are live while the lock is held.
        freed += unsafe { e.core.as_ref() }.shrink_empty(nr - freed);
    }
    freed as core::ffi::c_ulong
}

/// CPU hotplug (`rust/shim.c`): `cpu` is dead. Its active slab of every cache goes back to
/// the node lists, as SLUB's `slub_cpu_dead()` does; otherwise the slab's free objects
/// would stay out of reach (and out of `shrink()`'s) until the CPU came back. Runs on a
/// surviving CPU, with CPU hotplug held; lock order: the hotplug lock, then the registry.
#[no_mangle]
extern "C" fn rslub_cpu_dead(cpu: core::ffi::c_uint) -> core::ffi::c_int {
    let Some(cpu) = kernel::cpu::CpuId::from_u32(cpu) else {
        return 0;
    };
    let reg = REGISTRY.lock();
    for e in reg.caches.iter() {
        // SAFETY: Registered caches are live while the lock is held; `cpu` is dead.
        unsafe { e.core.as_ref().flush_dead_cpu(cpu) };
    }
    0
}

/// Removes the debugfs files; called when the module goes away. A cache its creator never
/// destroyed is reported and left as it is (its memory may still be in use).
pub(crate) fn exit() {
    shim::shrinker_exit();
    shim::hotplug_exit();
    exit_registry();
}

/// [`exit`] once the hotplug callback is gone (or was never there).
fn exit_registry() {
    let mut reg = REGISTRY.lock();
    for e in reg.caches.drain_all() {
        // SAFETY: Registered caches are live while the lock is held.
        let name = unsafe { e.core.as_ref() }.name();
        pr_warn!("cache {name} was never destroyed; leaving it in place\n");
    }
    // A static is never dropped: the list's buffer goes now, or every load that made a
    // cache would leak it.
    reg.caches = KVec::new();
    reg.module_files = None;
    reg.root = None;
    let kept = core::mem::replace(&mut reg.kept, KVec::new());
    drop(reg);
    // The caches kept for their live objects: those whose objects were all freed since
    // give their slabs back now; the others stay, objects, slabs and all (their memory may
    // still be in use), which `shim::exit()` says, as SLUB keeps such a cache for good:
    // kept on purpose, which kmemleak is told (no list refers to them once this module's
    // memory is gone).
    let mut released = KVec::new();
    for k in kept.into_iter() {
        // SAFETY: A kept cache is live (`Kept`'s invariant) and nothing allocates from it.
        let live = unsafe { k.0.as_ref().shutdown() }.0;
        if live != 0 {
            shim::kmemleak_not_leak(k.0.as_ptr().cast());
        } else {
            let core = k.0;
            if released.push(k, GFP_KERNEL).is_err() {
                // No room to remember it: it stays, as if its objects were live.
                shim::kmemleak_not_leak(core.as_ptr().cast());
            }
        }
    }
    // Slabs that `TYPESAFE_BY_RCU` caches gave back after their destruction (a cache
    // kept for its live objects, freed since) wait in callbacks of this module; a
    // callback may still be running after it counted itself done.
    shim::rcu_barrier();
    for k in released.into_iter() {
        // SAFETY: `k` owns its cache (`Kept`), which has no slab left and no callback
        // pending (the barrier above).
        drop(unsafe { KBox::from_raw(k.0.as_ptr()) });
    }
    // The slabs of the caches left behind stop being slab pages: their shadows go with
    // the module.
    crate::mm::exit();
    shim::exit();
}

/// A cache; destroyed when dropped. Dereferences to the cache itself.
///
/// # Invariants
///
/// `core` comes from a pinned `KBox` owned by this value, and is registered until
/// [`Cache::destroy`] (or drop) unregisters it.
pub(crate) struct Cache {
    core: NonNull<CacheCore>,
}

// SAFETY: A `Cache` owns its `CacheCore`, which is `Send + Sync`.
unsafe impl Send for Cache {}
// SAFETY: As above.
unsafe impl Sync for Cache {}

impl Cache {
    /// Creates a cache: a unique, non-empty name, an object size, an alignment (0 or a
    /// power of two), flags and an optional constructor. Invalid arguments (size 0, a size
    /// no slab order can hold, a bad alignment, unknown flags, an empty or duplicate name)
    /// return an error and create nothing.
    pub(crate) fn create(args: &CacheArgs<'_>) -> Result<Self> {
        Self::create_with(args, None)
    }

    /// As [`Cache::create`], with other order rules and overrides than the module's
    /// parameters (the benchmarks compare policies in one boot).
    pub(crate) fn create_with(args: &CacheArgs<'_>, params: Option<Params>) -> Result<Self> {
        let mut reg = REGISTRY.lock();
        let params = params.or(reg.params).ok_or(EINVAL)?;
        for e in reg.caches.iter() {
            // SAFETY: Registered caches are live while the lock is held.
            if unsafe { e.core.as_ref() }.name() == args.name {
                return Err(EEXIST);
            }
        }
        reg.caches.reserve(1, GFP_KERNEL)?;
        let root = reg.root.as_ref().ok_or(EINVAL)?;
        let core = CacheCore::new(args, &params)?;
        // SAFETY: The box is never moved out of: `teardown` rebuilds it only to drop it
        // (or leaks it for good).
        let core = NonNull::from(KBox::leak(unsafe { Pin::into_inner_unchecked(core) }));
        // SAFETY: `core` stays live until `teardown`, which drops the files first.
        let files = match unsafe { CacheFiles::new(root, core) } {
            Ok(files) => files,
            Err(e) => {
                // SAFETY: `core` came from `KBox::leak` above and was never shared.
                drop(unsafe { KBox::from_raw(core.as_ptr()) });
                return Err(e);
            }
        };
        // Cannot fail: room was reserved above.
        reg.caches.push(
            Entry {
                core,
                _files: files,
            },
            GFP_KERNEL,
        )?;
        // INVARIANT: owned and registered just above.
        Ok(Self { core })
    }

    /// Gives up ownership, for the C API: the pointer stays valid until
    /// [`Cache::from_raw`] takes it back.
    pub(crate) fn into_raw(self) -> NonNull<CacheCore> {
        ManuallyDrop::new(self).core
    }

    /// Takes back a cache given up with [`Cache::into_raw`].
    ///
    /// # Safety
    ///
    /// `core` must come from [`Cache::into_raw`] and not have been taken back yet.
    pub(crate) unsafe fn from_raw(core: NonNull<CacheCore>) -> Self {
        // INVARIANT: the caller hands back the ownership `into_raw` gave up.
        Self { core }
    }

    /// Destroys the cache: every page goes back to the page allocator. If objects are
    /// still allocated, says so with the cache name and the count, and keeps the cache
    /// and those slabs (memory under a live object is never freed).
    pub(crate) fn destroy(self) -> Result<(), LiveObjects> {
        let core = ManuallyDrop::new(self).core;
        // SAFETY: `core` is owned by the consumed `Cache`.
        unsafe { teardown(core) }
    }
}

/// Unregisters and destroys a cache (see [`Cache::destroy`]).
///
/// # Safety
///
/// The caller owns `core` (from a `Cache`) and gives it up.
unsafe fn teardown(core: NonNull<CacheCore>) -> Result<(), LiveObjects> {
    let entry = {
        let mut reg = REGISTRY.lock();
        let i = reg.caches.iter().position(|e| e.core == core);
        i.and_then(|i| reg.caches.remove(i).ok())
    };
    // The files go first: removing them waits for readers.
    drop(entry);
    // SAFETY: The cache is owned by the caller and nothing allocates from it any more.
    let c = unsafe { core.as_ref() };
    // SAFETY: As above.
    let live = unsafe { c.shutdown() };
    // The slabs a `TYPESAFE_BY_RCU` cache gave back wait for a grace period in callbacks
    // of this module (`Slab::free_after_grace_period`): they run before the cache, and
    // perhaps the module, goes (`kmem_cache_destroy()` waits too).
    if c.layout().typesafe_by_rcu {
        shim::rcu_barrier();
    }
    if live.0 == 0 {
        // SAFETY: `core` came from `KBox::leak` in `Cache::create`; nothing refers to it.
        drop(unsafe { KBox::from_raw(core.as_ptr()) });
        return Ok(());
    }
    pr_err!(
        "cache {}: destroyed with {} objects still allocated; keeping them and their slabs\n",
        c.name(),
        live.0
    );
    // The live objects' slabs point at the cache: it stays, on the list of kept caches
    // (released at unload if they were freed by then). Without room on the list it stays
    // all the same, for good.
    // INVARIANT: `core` came from `Cache::create`'s `KBox`, and the caller gave it up.
    if REGISTRY.lock().kept.push(Kept(core), GFP_KERNEL).is_err() {
        shim::kmemleak_not_leak(core.as_ptr().cast());
    }
    Err(live)
}

impl Deref for Cache {
    type Target = CacheCore;

    #[inline(always)]
    fn deref(&self) -> &CacheCore {
        // SAFETY: By the type invariant `core` is live while `self` is.
        unsafe { self.core.as_ref() }
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        // SAFETY: `self` owns `core` and is going away.
        let _ = unsafe { teardown(self.core) };
    }
}
