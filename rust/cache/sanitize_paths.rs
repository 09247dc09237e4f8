// SPDX-License-Identifier: GPL-2.0

//! The allocation and free paths of a cache on a KASAN or kmemleak kernel: what the
//! sanitizers are told, the check of a free against KASAN's shadow, and the quarantine.
//! Why and how is described in [`crate::sanitize`]; on other kernels none of this runs.

use super::CacheCore;
use crate::{debug::Problem, gfp::Gfp, sanitize, shim, slab};
use kernel::prelude::*;

impl CacheCore {
    /// [`CacheCore::alloc_ptr`] on a sanitizer kernel.
    #[inline(never)]
    pub(super) fn alloc_sanitized(&self, gfp: Gfp, node: i32) -> *mut u8 {
        let object = self.alloc_raw(gfp, node);
        if !object.is_null() {
            self.sanitize_alloc(object, gfp);
        }
        object
    }

    /// Tells the sanitizers that `object`, just allocated with `gfp`, is handed out.
    pub(super) fn sanitize_alloc(&self, object: *mut u8, gfp: Gfp) {
        let size = self.layout.object_size as usize;
        if sanitize::KASAN {
            // SAFETY: `object` is an object of a slab of this cache: direct-map, granule
            // aligned (strides and slabs are), `size` bytes within its stride.
            unsafe { shim::kasan_unpoison(object, size) };
        }
        if sanitize::KMEMLEAK {
            // SAFETY: Slab pages stay mapped while the object is allocated; its free
            // (`free_sanitized`) drops the record.
            unsafe { shim::kmemleak_alloc(object, size, gfp.raw()) };
        }
    }

    /// [`CacheCore::free_ptr`] on a sanitizer kernel: checks the free against KASAN's
    /// shadow, drops kmemleak's record, and poisons and quarantines the object.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_ptr`]; what KASAN's shadow tells of a double free is
    /// reported, and that object not freed.
    #[inline(never)]
    pub(super) unsafe fn free_sanitized(&self, object: *mut u8) {
        if object.is_null() {
            return;
        }
        // SAFETY: A pointer passed to free is a direct-map address (an object of some
        // slab, by the caller's contract), checked here without following anything.
        let Some(slab) = (unsafe { slab::slab_if_of(object, self.shadow.as_ptr()) }) else {
            return self.foreign_free(object);
        };
        // A `TYPESAFE_BY_RCU` cache's freed objects stay readable (as `kasan_slab_free()`
        // leaves them): never poisoned, so the shadow tells nothing of a double free
        // (SLUB's `CONFIG_SLUB_RCU_DEBUG`, which poisons them after a grace period, has
        // no counterpart in rslub).
        let poisons = sanitize::KASAN && !self.layout.typesafe_by_rcu;
        if sanitize::KASAN {
            // SAFETY: `object` lies on a slab page of this cache (checked), which holds
            // `slab`, live while the object is allocated, or at least while the caller
            // holds what it believes is one.
            let s = unsafe { &*slab };
            if self.object_index(s, object).is_none() {
                return self.not_an_object(s, object);
            }
        }
        if poisons {
            // SAFETY: An object's address in a slab: direct map.
            if unsafe { shim::kasan_poisoned(object) } {
                return self.report(
                    Problem::DoubleFree,
                    object,
                    true,
                    fmt!("KASAN's shadow has it free (or never handed out); not freed"),
                );
            }
        }
        // As SLUB's `slab_free_hook()` (debug kernels have lockdep too).
        shim::check_no_locks_freed(object, self.layout.object_size as usize);
        if sanitize::KMEMLEAK {
            shim::kmemleak_free(object);
        }
        if !poisons {
            // SAFETY: The caller's guarantees pass on.
            return unsafe { self.free_raw(object) };
        }
        // As SLUB's `slab_free_hook()`: the contents go at the free, not when the object
        // leaves the quarantine (a debug cache with `P` poisons it then).
        if self.init_on_free && !self.debug.has(crate::layout::POISON) {
            self.zero(object);
        }
        // SAFETY: As above: the object's granules, in its stride.
        unsafe { shim::kasan_poison(object, self.layout.object_size as usize, true) };
        if let Some(out) = self.quarantine.put(object) {
            // SAFETY: An object of this cache that its caller freed, which only the
            // quarantine held (type invariant), given back now.
            unsafe { self.free_raw(out) };
        }
    }

    /// Frees every object in the quarantine for real (before the cache shrinks or is
    /// destroyed); returns how many.
    pub(super) fn drain_quarantine(&self) -> u32 {
        let mut n = 0;
        while let Some(object) = self.quarantine.take() {
            // SAFETY: As in `free_sanitized`.
            unsafe { self.free_raw(object) };
            n += 1;
        }
        n
    }

    /// Objects in the quarantine now (0 without KASAN).
    pub(crate) fn quarantined(&self) -> u32 {
        self.quarantine.len()
    }
}
