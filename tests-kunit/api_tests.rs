// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_api`: the C API of `include/rslub.h`, called as C callers do.

use kernel::prelude::*;

#[kunit_tests(rslub_api)]
mod tests {
    use crate::api::*;
    use crate::test_shim::expect_reports;
    use core::{ffi::c_void, ptr};
    use kernel::{bindings, error::code::*, str::CStrExt};

    const GFP_KERNEL: u32 = bindings::GFP_KERNEL;

    /// `IS_ERR()`, and the error.
    fn err_of(p: *mut c_void) -> Option<i32> {
        let v = p as isize;
        (-4095..0).contains(&v).then_some(v as i32)
    }

    #[test]
    fn create_alloc_free_destroy() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_c");
        // SAFETY: a valid name and no constructor.
        let s = unsafe { rslub_cache_create(c"rslub_test_c".as_char_ptr(), 72, 8, 0, None) };
        assert_eq!(err_of(s), None);
        // SAFETY: `s` is a live cache.
        let a = unsafe { rslub_cache_alloc(s, GFP_KERNEL) };
        // SAFETY: `s` is a live cache; node 0 is always online.
        let b = unsafe { rslub_cache_alloc_node(s, GFP_KERNEL, 0) };
        assert!(!a.is_null() && !b.is_null() && a != b);
        // SAFETY: `s` is live; a node id that is no node is no constraint (as 6.12).
        let any = unsafe { rslub_cache_alloc_node(s, GFP_KERNEL, 4000) };
        assert!(!any.is_null() && any != a && any != b);
        let mut v = [ptr::null_mut::<c_void>(); 40];
        // SAFETY: `v` holds 40 pointers.
        let n = unsafe { rslub_cache_alloc_bulk(s, GFP_KERNEL, v.len(), v.as_mut_ptr()) };
        assert_eq!(n, 40);
        assert!(v.iter().all(|p| !p.is_null()));
        // SAFETY: all allocated from `s` above and freed once; NULL is ignored.
        unsafe {
            rslub_cache_free_bulk(s, v.len(), v.as_mut_ptr());
            rslub_cache_free(s, a);
            rslub_cache_free(s, any);
            rslub_cache_free(s, ptr::null_mut());
            rslub_cache_shrink(s);
        }
        // `b` is still allocated: destroy reports it and keeps the cache.
        // SAFETY: `s` is live; afterwards only `b` is freed into it.
        let r = unsafe { rslub_cache_destroy(s) };
        assert_eq!(r, EBUSY.to_errno());
        // A late free into the kept cache, as into a SLUB cache whose destroy failed: the
        // cache then goes at unload (nothing of it left to kmemleak's scan).
        // SAFETY: `s` is kept for `b`, allocated from it and freed once here.
        unsafe { rslub_cache_free(s, b) };
    }

    #[test]
    fn bad_arguments_give_error_pointers() {
        // SAFETY: valid or null names.
        unsafe {
            assert_eq!(
                err_of(rslub_cache_create(
                    c"rslub_test_c0".as_char_ptr(),
                    0,
                    0,
                    0,
                    None
                )),
                Some(EINVAL.to_errno())
            );
            assert_eq!(
                err_of(rslub_cache_create(
                    c"rslub_test_c1".as_char_ptr(),
                    64,
                    48,
                    0,
                    None
                )),
                Some(EINVAL.to_errno())
            );
            assert_eq!(
                err_of(rslub_cache_create(ptr::null(), 64, 0, 0, None)),
                Some(EINVAL.to_errno())
            );
            // Each bad argument, as `include/rslub.h` documents them: size 0 (above),
            // too large, an alignment that is not a power of two (above) or above the
            // largest block, an unknown flag, an empty name, a duplicate (below).
            for (size, align, flags) in [
                (u32::MAX, 0, 0),
                ((4096 << 10) + 1, 0, 0),
                (64, 8192 << 10, 0),
                (64, 0, 0x80),
                (64, 0, 0x8000_0000),
            ] {
                assert_eq!(
                    err_of(rslub_cache_create(
                        c"rslub_test_c3".as_char_ptr(),
                        size,
                        align,
                        flags,
                        None
                    )),
                    Some(EINVAL.to_errno())
                );
            }
            assert_eq!(
                err_of(rslub_cache_create(c"".as_char_ptr(), 64, 0, 0, None)),
                Some(EINVAL.to_errno())
            );
            let s = rslub_cache_create(c"rslub_test_c2".as_char_ptr(), 64, 0, 0, None);
            assert_eq!(err_of(s), None);
            assert_eq!(
                err_of(rslub_cache_create(
                    c"rslub_test_c2".as_char_ptr(),
                    64,
                    0,
                    0,
                    None
                )),
                Some(EEXIST.to_errno())
            );
            assert_eq!(rslub_cache_destroy(s), 0);
        }
    }

    /// A debug cache through the C API (`RSLUB_DEBUG_SANITY | RSLUB_DEBUG_RED_ZONE`): a
    /// double free and a free into the wrong cache are caught and change nothing.
    #[test]
    fn debug_flags_catch_misuse() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_cdbg");
        const RSLUB_DEBUG_SANITY: u32 = 0x2;
        const RSLUB_DEBUG_RED_ZONE: u32 = 0x4;
        // SAFETY: valid names, no constructor.
        let (s, t) = unsafe {
            (
                rslub_cache_create(
                    c"rslub_test_cdbg".as_char_ptr(),
                    64,
                    0,
                    RSLUB_DEBUG_SANITY | RSLUB_DEBUG_RED_ZONE,
                    None,
                ),
                rslub_cache_create(c"rslub_test_cdbg2".as_char_ptr(), 64, 0, 0, None),
            )
        };
        assert_eq!((err_of(s), err_of(t)), (None, None));
        // SAFETY: A handle is the address of the cache (`rust/api.rs`).
        let core = unsafe { &*s.cast::<crate::cache::CacheCore>() };
        assert!(core.is_debug());
        let errors = || core.stats().get(crate::stats::Stat::DebugErrors);
        // SAFETY: live caches; the misuses are what the debug cache is built to catch.
        unsafe {
            let a = rslub_cache_alloc(s, GFP_KERNEL);
            let b = rslub_cache_alloc(t, GFP_KERNEL);
            assert!(!a.is_null() && !b.is_null());
            rslub_cache_free(s, a);
            rslub_cache_free(s, a);
            assert_eq!(errors(), 1);
            rslub_cache_free(s, b);
            assert_eq!(errors(), 2);
            rslub_cache_free(t, b);
            assert_eq!(rslub_cache_destroy(s), 0);
            assert_eq!(rslub_cache_destroy(t), 0);
        }
    }
}
