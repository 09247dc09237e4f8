// SPDX-License-Identifier: GPL-2.0

//! The live caches, under one mutex: unique names, the module parameters caches are
//! created with, and the list that statistics and tunables walk.

use crate::{
    cache::{CacheArgs, CacheCore, LiveObjects},
    params::Params,
};
use core::{ops::Deref, pin::Pin, ptr::NonNull};
use kernel::{
    error::code::{EEXIST, EINVAL},
    prelude::*,
};

/// A registered cache.
struct Entry(NonNull<CacheCore>);

// SAFETY: `CacheCore` is `Sync` (all shared state is per-cpu, atomic or locked); the
// entry only lets the holder of the registry lock look at it.
unsafe impl Send for Entry {}

/// What the registry lock protects.
pub(crate) struct Registry {
    params: Option<Params>,
    caches: KVec<Entry>,
}

kernel::sync::global_lock! {
    // SAFETY: `init()` initialises it in the module initialiser before any other use.
    unsafe(uninit) static REGISTRY: Mutex<Registry> = Registry { params: None, caches: KVec::new() };
}

/// Initialises the registry with the module's parameters.
///
/// # Safety
///
/// Must be called exactly once, in the module initialiser, before any other function of
/// this module.
pub(crate) unsafe fn init(params: Params) {
    // SAFETY: Called once, before any use (caller).
    unsafe { REGISTRY.init() };
    REGISTRY.lock().params = Some(params);
}

/// Calls `f` on every live cache, under the registry lock.
pub(crate) fn for_each(mut f: impl FnMut(&CacheCore)) {
    let reg = REGISTRY.lock();
    for e in reg.caches.iter() {
        // SAFETY: Entries are removed (under this lock) before their cache is destroyed.
        f(unsafe { e.0.as_ref() });
    }
}

/// A cache; destroyed when dropped.
///
/// # Invariants
///
/// `core` is registered from creation until [`Cache::destroy`] (or drop) unregisters it.
pub(crate) struct Cache {
    core: Option<Pin<KBox<CacheCore>>>,
}

impl Cache {
    /// Creates a cache: a unique, non-empty name, an object size, an alignment (0 or a
    /// power of two), flags and an optional constructor. Invalid arguments (size 0, a size
    /// no slab order can hold, a bad alignment, unknown flags, an empty or duplicate name)
    /// return an error and create nothing.
    pub(crate) fn create(args: &CacheArgs<'_>) -> Result<Self> {
        let mut reg = REGISTRY.lock();
        let params = reg.params.ok_or(EINVAL)?;
        for e in reg.caches.iter() {
            // SAFETY: Registered caches are live while the lock is held.
            if unsafe { e.0.as_ref() }.name() == args.name {
                return Err(EEXIST);
            }
        }
        reg.caches.reserve(1, GFP_KERNEL)?;
        let core = CacheCore::new(args, &params)?;
        let ptr = NonNull::from(&*core);
        reg.caches.push(Entry(ptr), GFP_KERNEL)?;
        // INVARIANT: registered just above.
        Ok(Self { core: Some(core) })
    }

    /// Destroys the cache: every page goes back to the page allocator. If objects are
    /// still allocated, says so with the cache name and the count, and keeps the cache
    /// and those slabs (memory under a live object is never freed).
    pub(crate) fn destroy(mut self) -> Result<(), LiveObjects> {
        self.teardown()
    }

    fn teardown(&mut self) -> Result<(), LiveObjects> {
        let Some(core) = self.core.take() else {
            return Ok(());
        };
        {
            let mut reg = REGISTRY.lock();
            let me = NonNull::from(&*core);
            reg.caches.retain(|e| e.0 != me);
        }
        // SAFETY: The owner is destroying the cache: nothing allocates from it any more.
        let live = unsafe { core.shutdown() };
        if live.0 == 0 {
            return Ok(());
        }
        pr_err!(
            "cache {}: destroyed with {} objects still allocated; keeping their slabs\n",
            core.name(),
            live.0
        );
        // The live objects' slabs point at the cache: keep it, forever.
        // SAFETY: The cache is leaked, so it is never moved or freed.
        let _ = KBox::leak(unsafe { Pin::into_inner_unchecked(core) });
        Err(live)
    }
}

impl Deref for Cache {
    type Target = CacheCore;

    fn deref(&self) -> &CacheCore {
        // By the type invariant `core` is present until `destroy` consumes `self`.
        self.core.as_deref().unwrap_or_else(|| unreachable!())
    }
}

impl Drop for Cache {
    fn drop(&mut self) {
        let _ = self.teardown();
    }
}
