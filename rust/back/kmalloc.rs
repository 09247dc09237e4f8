// SPDX-License-Identifier: GPL-2.0

//! kmalloc under rslub, in whole-kernel mode: rslub's own size classes, one rslub cache
//! for each kmalloc cache of the kernel's that it can serve (`kmalloc-8` to `kmalloc-8k`,
//! `kmalloc-rcl-*`, and the partition copies where the kernel has them), of the kernel
//! cache's name, object size, alignment and usercopy window. So every class holds
//! `kmalloc_size_roundup()` of each request it takes, power-of-two sizes are naturally
//! aligned, and reclaimable requests stay apart, as the kernel's contract says.
//! `rust/back/kmalloc.c` sends the kmalloc entry points to them (Documentation/backing.rst):
//! the classes are in the hooks' table before the hooks are registered, and stay, with
//! the hooks, until shutdown (the suites alone take them down, with nothing left in them).

use super::{ffi, hook, unhook_if_idle, KmemCache, State};
use crate::{
    cache::CacheArgs,
    cache::CacheCore,
    inject::{inject, Point},
    registry::Cache,
};
use core::{ffi::c_int, ptr::NonNull};
use kernel::{bindings, error::to_result, prelude::*};

/// A size class: the rslub cache standing for one of the kernel's kmalloc caches.
pub(super) type Class = Cache;

/// More than the kernel has: 13 sizes of the normal and the reclaimable kinds, and 15
/// partition copies of the normal one.
const MAX_CLASSES: usize = 13 * 17;

/// Makes the size classes and hooks kmalloc to them, all or nothing (`st.kmalloc` holds
/// them on success). The other hooks must be registered: frees reach rslub through them.
pub(super) fn start(st: &mut State) -> Result {
    let mut kcs = [core::ptr::null_mut::<bindings::kmem_cache>(); MAX_CLASSES];
    // SAFETY: `kcs` is valid for `MAX_CLASSES` writes.
    let n = unsafe { ffi::rslub_kmalloc_caches(kcs.as_mut_ptr(), MAX_CLASSES as c_int) };
    let mut classes = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    let mut rcs = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    for (j, &kc) in (0u32..).zip(&kcs[..n as usize]) {
        // SAFETY: A kmalloc cache lives as long as the kernel.
        let kc = unsafe { KmemCache::from_raw(NonNull::new(kc).ok_or(EINVAL)?) };
        let i = kc.info();
        if inject!(&kc, Point::SizeClass(j)) {
            pr_err!("back=all: no size class {} (injected)\n", i.name);
            return Err(ENOMEM);
        }
        let cache = Cache::create(&CacheArgs {
            name: i.name,
            size: i.size,
            // The largest power of two dividing the size (`create_boot_cache()`): 8 KiB
            // for kmalloc-8k, whose stride stays a multiple of it when KASAN's red
            // zone grows it (to 16 KiB, as in SLUB).
            align: i.align,
            // `kmalloc-rcl-*` are `SLAB_RECLAIM_ACCOUNT` (6.12 `new_kmalloc_cache()`).
            // SAFETY: A live cache.
            flags: if unsafe { ffi::rslub_kc_reclaim_account(kc.as_ptr()) } {
                crate::layout::RECLAIM_ACCOUNT
            } else {
                0
            },
            ctor: None,
            freeptr_offset: None,
        })
        .inspect_err(|e| pr_err!("back=all: no size class {} ({e:?})\n", i.name))?;
        let (mut uo, mut us) = (0, 0);
        // SAFETY: A live cache; the pointers are valid for writes.
        if unsafe { ffi::rslub_kc_usercopy(kc.as_ptr(), &mut uo, &mut us) } {
            cache.set_usercopy(uo, us);
        }
        // A kmalloc cache to the kernel's readers of its slab pages (KASAN's kmalloc red
        // zones, `is_kmalloc_cache()`).
        cache.shadow.set_kmalloc();
        let core: *const CacheCore = &*cache;
        rcs.push(core.cast_mut().cast(), GFP_KERNEL)?;
        classes.push(cache, GFP_KERNEL)?;
    }
    hook(st)?;
    if inject!(&kcs, Point::KmallocHook) {
        #[cfg(rslub_inject)]
        // SAFETY: No precondition; only the test module has it.
        unsafe {
            ffi::rslub_kmalloc_fail_next()
        };
    }
    // SAFETY: `kcs` holds `n` kmalloc caches and `rcs` their classes, which stay until
    // `stop` (in `st.kmalloc`, below) or for ever.
    let r = to_result(unsafe { ffi::rslub_hook_kmalloc(kcs.as_ptr(), rcs.as_ptr(), n) });
    if let Err(e) = r {
        // The classes go with `classes`: nothing was served from them (the hooks find
        // them only once all are registered).
        unhook_if_idle(st);
        return Err(e);
    }
    pr_info!("back=all: kmalloc served by {n} size classes\n");
    st.kmalloc = classes;
    Ok(())
}

/// Takes kmalloc back to the kernel and destroys the classes, which must hold no object.
#[cfg(rslub_kunit)]
pub(super) fn stop(st: &mut State) {
    if st.kmalloc.is_empty() {
        return;
    }
    // SAFETY: Registered by `start`; the classes stay until it returns.
    unsafe { ffi::rslub_unhook_kmalloc() };
    st.kmalloc = KVec::new();
    unhook_if_idle(st);
}
