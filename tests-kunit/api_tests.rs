// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_api`: the C API of `include/rslub.h`, called as C callers do.

use kernel::prelude::*;

#[kunit_tests(rslub_api)]
mod tests {
    use crate::api::*;
    use core::{ffi::c_void, ptr};
    use kernel::{
        bindings,
        error::code::*,
        prelude::{KBox, KVec},
        str::CStrExt,
    };

    const GFP_KERNEL: u32 = bindings::GFP_KERNEL;

    /// `IS_ERR()`, and the error.
    fn err_of(p: *mut c_void) -> Option<i32> {
        let v = p as isize;
        (-4095..0).contains(&v).then_some(v as i32)
    }

    #[test]
    fn create_alloc_free_destroy() {
        // SAFETY: a valid name and no constructor.
        let s = unsafe { rslub_cache_create(c"rslub_test_c".as_char_ptr(), 72, 8, 0, None) };
        assert_eq!(err_of(s), None);
        // SAFETY: `s` is a live cache.
        let a = unsafe { rslub_cache_alloc(s, GFP_KERNEL) };
        // SAFETY: `s` is a live cache; node 0 is always online.
        let b = unsafe { rslub_cache_alloc_node(s, GFP_KERNEL, 0) };
        assert!(!a.is_null() && !b.is_null() && a != b);
        // SAFETY: `s` is live; a bad node gives NULL, not a crash.
        let bad = unsafe { rslub_cache_alloc_node(s, GFP_KERNEL, 4000) };
        assert!(bad.is_null());
        let mut v = [ptr::null_mut::<c_void>(); 40];
        // SAFETY: `v` holds 40 pointers.
        let n = unsafe { rslub_cache_alloc_bulk(s, GFP_KERNEL, v.len(), v.as_mut_ptr()) };
        assert_eq!(n, 40);
        assert!(v.iter().all(|p| !p.is_null()));
        // SAFETY: all allocated from `s` above and freed once; NULL is ignored.
        unsafe {
            rslub_cache_free_bulk(s, v.len(), v.as_mut_ptr());
            rslub_cache_free(s, a);
            rslub_cache_free(s, ptr::null_mut());
            rslub_cache_shrink(s);
        }
        // `b` is still allocated: destroy reports it and keeps the cache.
        // SAFETY: `s` is live and not used afterwards.
        let r = unsafe { rslub_cache_destroy(s) };
        assert_eq!(r, EBUSY.to_errno());
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

    /// The counter `s` of the cache behind handle `h` (a handle is the cache's address).
    fn stat_of(h: *mut c_void, s: crate::stats::Stat) -> u64 {
        // SAFETY: `h` is a live cache handle.
        unsafe { &*h.cast::<crate::cache::CacheCore>() }
            .stats()
            .get(s)
    }

    /// Frees of what is not an object of the cache are caught, reported, counted and
    /// ignored, whatever the path: another cache's object, a pointer inside an object,
    /// memory that is no rslub slab, also in a bulk free. The objects stay live in their
    /// own caches, and both caches are destroyed with nothing left.
    #[test]
    fn frees_into_the_wrong_cache_are_caught() {
        use crate::stats::Stat::FreeInvalid;
        // SAFETY: valid names and no constructor.
        let (a, b) = unsafe {
            (
                rslub_cache_create(c"rslub_test_wrong_a".as_char_ptr(), 64, 0, 0, None),
                rslub_cache_create(c"rslub_test_wrong_b".as_char_ptr(), 64, 0, 0, None),
            )
        };
        assert!(err_of(a).is_none() && err_of(b).is_none());
        // A full slab of `a` (no CPU's active slab any more: a pointer inside one of its
        // objects takes the slow path), then `y` from `b`.
        // SAFETY: `a` is a live cache handle.
        let per_slab = unsafe { &*a.cast::<crate::cache::CacheCore>() }
            .layout()
            .objects;
        let mut objs = KVec::new();
        for _ in 0..=per_slab {
            // SAFETY: a live cache.
            let p = unsafe { rslub_cache_alloc(a, GFP_KERNEL) };
            assert!(!p.is_null());
            objs.push(p, kernel::alloc::flags::GFP_KERNEL)
                .expect("memory");
        }
        let x = objs[0];
        // SAFETY: a live cache.
        let y = unsafe { rslub_cache_alloc(b, GFP_KERNEL) };
        assert!(!y.is_null());
        let k = KBox::new([0u64; 8], kernel::alloc::flags::GFP_KERNEL).expect("memory");
        let k = KBox::into_raw(k);
        // SAFETY: live caches; every pointer below is direct-map memory, none an object
        // of the cache it is freed into: each free must be refused.
        unsafe {
            rslub_cache_free(b, x);
            rslub_cache_free(a, x.cast::<u8>().add(8).cast());
            rslub_cache_free(a, k.cast());
            let mut v = [x, y];
            rslub_cache_free_bulk(b, v.len(), v.as_mut_ptr());
        }
        assert_eq!(stat_of(a, FreeInvalid), 2);
        assert_eq!(stat_of(b, FreeInvalid), 2);
        // `x` is still `a`'s and still live; `y` went back to `b` through the bulk free.
        // SAFETY: `objs` are live 64-byte objects of `a`, freed once; `k` came from `KBox`.
        unsafe {
            x.cast::<u8>().write_bytes(0x5a, 64);
            for &p in objs.iter() {
                rslub_cache_free(a, p);
            }
            drop(KBox::from_raw(k));
        }
        // SAFETY: live caches, destroyed once.
        let destroyed = unsafe { (rslub_cache_destroy(a), rslub_cache_destroy(b)) };
        assert_eq!(destroyed, (0, 0));
    }
}
