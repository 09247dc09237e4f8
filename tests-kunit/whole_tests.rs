// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_whole`: whole-kernel mode (`back=all`) finds caches as they
//! allocate and backs them from the handler's first sight, through a worker, or records
//! why not; a sighted cache's destroy forgets it. The mode runs here only for the
//! suite's own caches (a name prefix, for the test module alone): the guest's whole
//! kernel on rslub is the boot of `make test`'s whole-kernel checks.

use kernel::prelude::*;

#[kunit_tests(rslub_whole)]
mod tests {
    use crate::{
        back,
        gfp::Gfp,
        test_shim::{msleep, read_file, KernelCache},
    };
    use kernel::{bindings, prelude::*};

    const SIZE: u32 = 200;
    const PREFIX: &CStr = c"rslub_test_all_";

    /// The `back` file of the test module.
    fn back_file(buf: &mut [u8]) -> &str {
        let n = read_file(c"rslub_kunit/back", buf).expect("back file");
        core::str::from_utf8(&buf[..n]).expect("text")
    }

    /// Whether the `back` file has a line starting with `line` within a second (the
    /// worker backs a cache after the allocation that sighted it).
    fn shows_soon(line: &str) -> bool {
        let mut buf = KVec::from_elem(0u8, 8192, GFP_KERNEL).expect("memory");
        for _ in 0..1000 {
            if back_file(&mut buf).lines().any(|l| l.starts_with(line)) {
                return true;
            }
            msleep(1);
        }
        false
    }

    /// Whole-kernel mode for the suite's caches, ended when dropped (an assertion that
    /// fails returns from the case).
    struct AllMode;

    impl AllMode {
        fn start() -> Self {
            back::start_all_for(PREFIX).expect("whole-kernel mode");
            AllMode
        }
    }

    impl Drop for AllMode {
        fn drop(&mut self) {
            back::stop_all();
        }
    }

    fn rslub_owns(p: usize) -> bool {
        !crate::mm::owner_of(p as *const u8).is_null()
    }

    #[test]
    fn caches_are_backed_from_their_first_allocation() {
        let base = back::backings();
        let mode = AllMode::start();
        // Created while the mode is on, and one from before it: both are found by their
        // allocations, not at creation.
        let a = KernelCache::create(c"rslub_test_all_a", SIZE, 0, 0, None).expect("kmem_cache");
        let red_zone = 1usize << bindings::_slab_flag_bits__SLAB_RED_ZONE;
        let refused =
            KernelCache::create(c"rslub_test_all_red", SIZE, 0, red_zone, None).expect("cache");
        let idle = KernelCache::create(c"rslub_test_all_idle", SIZE, 0, 0, None).expect("cache");
        let other = KernelCache::create(c"rslub_test_kc_not_all", SIZE, 0, 0, None).expect("cache");
        assert_eq!(back::backings(), base);

        // The first allocation is the kernel's (it sights the cache); the worker backs it.
        let first = a.alloc(Gfp::KERNEL);
        assert!(first != 0 && !rslub_owns(first));
        assert!(shows_soon("rslub_test_all_a backed "));
        let served = a.alloc(Gfp::KERNEL);
        assert!(rslub_owns(served));
        // Refused once, with its reason, and never backed.
        let r = refused.alloc(Gfp::KERNEL);
        assert!(shows_soon("rslub_test_all_red refused: a slub_debug flag"));
        let r2 = refused.alloc(Gfp::KERNEL);
        assert!(!rslub_owns(r) && !rslub_owns(r2));
        // Outside the prefix: not sighted.
        let o = other.alloc(Gfp::KERNEL);
        msleep(20);
        let o2 = other.alloc(Gfp::KERNEL);
        assert!(!rslub_owns(o) && !rslub_owns(o2));
        assert_eq!(back::backings(), base + 1);
        // SAFETY: each object allocated above from its cache, freed once.
        unsafe {
            a.free(first);
            a.free(served);
            refused.free(r);
            refused.free(r2);
            other.free(o);
            other.free(o2);
        }
        // A cache that never allocated was never sighted; one that allocated and was
        // refused is forgotten at its destroy (its struct, held by the sighting, freed).
        drop(idle);
        drop(refused);
        // A backed cache's destroy unbacks it (nothing live: its rslub cache goes).
        drop(a);
        assert_eq!(back::backings(), base);
        // A new cache, perhaps at a freed one's address, is sighted as a new one.
        let b = KernelCache::create(c"rslub_test_all_b", SIZE, 0, 0, None).expect("kmem_cache");
        let p = b.alloc(Gfp::KERNEL);
        assert!(shows_soon("rslub_test_all_b backed "));
        let q = b.alloc(Gfp::KERNEL);
        assert!(rslub_owns(q));
        // SAFETY: allocated above from `b`, freed once each.
        unsafe {
            b.free(p);
            b.free(q);
        }
        drop(b);
        drop(mode);
        assert_eq!(back::backings(), base);
        drop(other);
    }
}
