// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_debug`: debug caches (`F`, `Z`, `P`, `U`, `debug=`), misuse they
//! catch (double free, frees of other caches' objects and of non-objects, writes past an
//! object and into a free one, a corrupted free list), owner records, `validate`, and the
//! wrong-cache check every cache makes in its free slow path. Each misuse case checks
//! that it is reported once, that the bad object is left out, and that the cache works on.

use kernel::prelude::*;

#[kunit_tests(rslub_debug)]
mod tests {
    use crate::test_shim::expect_reports;
    use crate::{
        common::{alloc_n, args, free, free_all, hardened},
        debug::{Problem, Spec, POISON, POISON_END, POISON_FREE, RED_ZONE, SANITY, STORE_USER},
        gfp::Gfp,
        layout::{Layout, OrderRules, TRACK_SIZE},
        params::{Params, RawParams},
        registry::Cache,
        stats::Stat,
    };
    use core::ptr::NonNull;
    use kernel::prelude::*;

    const FZPU: u32 = SANITY | RED_ZONE | POISON | STORE_USER;

    /// A cache of `size`-byte objects with debug `flags`.
    fn debug_cache(name: &CStr, size: u32, flags: u32) -> Cache {
        Cache::create(&crate::cache::CacheArgs {
            flags,
            ..args(name, size)
        })
        .expect("cache")
    }

    /// Problems reported since `before` (a `debug_errors` reading).
    fn errors(c: &Cache) -> u64 {
        c.stats().get(Stat::DebugErrors)
    }

    /// Frees `p` into `c`: the suite's deliberate misuse goes through here too.
    fn free_raw(c: &Cache, p: usize) {
        // SAFETY: Either a live object of `c` the suite frees once, or a deliberate misuse
        // that `c` is built to catch without touching the memory it does not own.
        unsafe { c.free(NonNull::new(p as *mut u8).expect("non-null")) };
    }

    /// Allocates and frees a few slabs' worth, checking the objects are distinct and
    /// never `banned`: the cache works on after a misuse.
    fn still_works(c: &Cache, banned: &[usize]) {
        let n = 2 * c.layout().objects as usize + 1;
        let mut objs = alloc_n(c, n, crate::cache::NO_NODE);
        for &p in objs.iter() {
            assert!(!banned.contains(&p));
        }
        objs.sort_unstable();
        for w in objs.windows(2) {
            assert!(w[0] != w[1]);
        }
        free_all(c, &objs);
    }

    #[test]
    fn debug_option_parses_slub_debug_syntax() {
        let p = |s: &'static [u8]| Spec::parse(s).expect("valid");
        assert_eq!(p(b"").flags_for(b"any"), 0);
        assert_eq!(p(b"FZPU").flags_for(b"any"), FZPU);
        assert_eq!(p(b"fz").flags_for(b"any"), SANITY | RED_ZONE);
        assert_eq!(p(b",only").flags_for(b"only"), FZPU);
        assert_eq!(p(b",only").flags_for(b"other"), 0);
        let s = p(b"PU,rslub_a,rslub_b*");
        assert_eq!(s.flags_for(b"rslub_a"), POISON | STORE_USER);
        assert_eq!(s.flags_for(b"rslub_a2"), 0);
        assert_eq!(s.flags_for(b"rslub_b"), POISON | STORE_USER);
        assert_eq!(s.flags_for(b"rslub_bcd"), POISON | STORE_USER);
        assert_eq!(p(b"-").flags_for(b"any"), 0);
        assert_eq!(p(b"F-Z").flags_for(b"any"), 0);
        assert_eq!(
            Spec::parse(b"FX").map(|_| ()).map_err(|e| e.letter),
            Err(b'X')
        );
        assert_eq!(
            Spec::parse(b" F").map(|_| ()).map_err(|e| e.letter),
            Err(b' ')
        );
    }

    /// `init_on_alloc` and `init_on_free` leave a poisoned cache's objects alone, as
    /// 6.12's `slab_want_init_on_alloc()` and `slab_want_init_on_free()` do for
    /// `SLAB_POISON`: an allocated object comes with the poison it had free (which its
    /// check just read), not zeroed, and a freed one is poisoned, not zeroed.
    #[test]
    fn init_on_alloc_and_free_leave_poisoned_objects_alone() {
        const SIZE: usize = 64;
        crate::inject::set_init_on(Some((true, true)));
        let c = Cache::create(&crate::cache::CacheArgs {
            flags: POISON,
            ..args(c"rslub_test_poison_init_on", SIZE as u32)
        });
        crate::inject::set_init_on(None);
        let c = c.expect("cache");
        let poisoned = |p: usize| {
            // SAFETY: `p` is an object of `c`, of SIZE bytes, in a slab that `keep` (below)
            // keeps from being given back; only this test uses the cache.
            let b = unsafe { core::slice::from_raw_parts(p as *const u8, SIZE) };
            b[..SIZE - 1].iter().all(|&x| x == POISON_FREE) && b[SIZE - 1] == POISON_END
        };
        // Two objects of the cache's first slab (a new cache's first two allocations):
        // `keep` stays allocated, so that the slab is not empty when `p` is freed and read.
        assert!(c.layout().objects >= 2);
        let keep = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert!(poisoned(p));
        // Written over, then freed: poisoned again, not zeroed.
        // SAFETY: a live object of SIZE bytes.
        unsafe { core::ptr::write_bytes(p as *mut u8, 0xaa, SIZE) };
        free(&c, p);
        assert!(poisoned(p));
        free(&c, keep);
        assert_eq!(errors(&c), 0);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn debug_option_turns_checks_on_by_cache_name() {
        let params = Params::new(RawParams::DEFAULT)
            .expect("defaults")
            .with_debug(Spec::parse(b"ZU,rslub_test_dbgname_*").expect("valid"));
        let hit =
            Cache::create_with(&args(c"rslub_test_dbgname_a", 40), Some(params)).expect("cache");
        let miss = Cache::create_with(&args(c"rslub_test_other", 40), Some(params)).expect("cache");
        assert_eq!(hit.layout().debug, RED_ZONE | STORE_USER);
        assert!(hit.is_debug());
        assert_eq!(miss.layout().debug, 0);
        assert!(!miss.is_debug());
        // The debug cache takes no fast path, the other one does.
        let (a, b) = (alloc_n(&hit, 4, -1), alloc_n(&miss, 4, -1));
        assert_eq!(hit.stats().get(Stat::AllocFast), 0);
        assert!(miss.stats().get(Stat::AllocFast) > 0);
        free_all(&hit, &a);
        free_all(&miss, &b);
        assert!(hit.destroy().is_ok());
        assert!(miss.destroy().is_ok());
    }

    #[test]
    fn debug_layout_places_red_zone_free_pointer_and_owner_records() {
        let rules = OrderRules {
            min_order: 0,
            max_order: 3,
            min_objects: 16,
        };
        let plain = Layout::new(64, 0, 0, false, None, 64, rules).expect("valid");
        let l = Layout::new(64, 0, FZPU, false, None, 64, rules).expect("valid");
        // A word of red zone after a word-filling object, the free pointer after it, two
        // owner records after that.
        assert_eq!((l.object_size, l.inuse), (64, 72));
        assert_eq!(l.free_offset, 72);
        assert_eq!(l.track_offset, 80);
        assert_eq!(l.size, 80 + 2 * TRACK_SIZE);
        assert_eq!(plain.size, 64);
        assert_eq!(plain.debug, 0);
        // An odd size: the red zone is the rest of its last word.
        let l = Layout::new(13, 0, RED_ZONE, false, None, 64, rules).expect("valid");
        assert_eq!((l.inuse, l.free_offset, l.size), (16, 16, 24));
        // A constructor keeps its objects' contents: no poisoning.
        let l = Layout::new(64, 0, POISON, true, None, 64, rules).expect("valid");
        assert_eq!(l.debug, 0);
    }

    #[test]
    fn double_free_is_reported_and_not_done() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_dfree_");
        for (name, flags) in [
            (c"rslub_test_dfree_f", SANITY),
            (c"rslub_test_dfree_z", RED_ZONE),
        ] {
            let c = debug_cache(name, 96, flags);
            let objs = alloc_n(&c, 3, -1);
            let a = objs[1];
            free(&c, a);
            let before = errors(&c);
            free_raw(&c, a);
            assert_eq!(errors(&c) - before, 1);
            assert_eq!(c.last_error(), Some((Problem::DoubleFree, a)));
            // Freed once only: allocated again at most once.
            let again = alloc_n(&c, 3, -1);
            assert_eq!(again.iter().filter(|&&p| p == a).count(), 1);
            still_works(&c, &[]);
            free_all(&c, &again);
            free_all(&c, &[objs[0], objs[2]]);
            assert_eq!(c.validate().expect("memory").errors, 0);
            assert!(c.destroy().is_ok());
        }
    }

    #[test]
    fn free_of_another_caches_object_is_reported() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_wrong_");
        // Caught by the debug free path, and by the slow path of an ordinary cache.
        for flags in [SANITY, 0] {
            let c = debug_cache(c"rslub_test_wrong_a", 64, flags);
            let d = Cache::create(&args(c"rslub_test_wrong_b", 64)).expect("cache");
            let mine = alloc_n(&c, 2, -1);
            let theirs = d.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            let before = errors(&c);
            free_raw(&c, theirs);
            assert_eq!(errors(&c) - before, 1);
            assert_eq!(c.last_error(), Some((Problem::WrongCache, theirs)));
            still_works(&c, &[theirs]);
            free_all(&c, &mine);
            // Still `d`'s, and live.
            free(&d, theirs);
            assert!(c.destroy().is_ok());
            assert!(d.destroy().is_ok());
        }
    }

    #[test]
    fn free_of_a_pointer_in_no_rslub_slab_is_reported() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_notslab");
        for flags in [SANITY, 0] {
            let c = debug_cache(c"rslub_test_notslab", 64, flags);
            let mine = alloc_n(&c, 2, -1);
            // Memory of the kernel's own allocator.
            let b = KBox::new([7u8; 64], GFP_KERNEL).expect("memory");
            let p = core::ptr::from_ref(&*b) as usize;
            let before = errors(&c);
            free_raw(&c, p);
            assert_eq!(errors(&c) - before, 1);
            assert_eq!(c.last_error(), Some((Problem::NotASlab, p)));
            assert!(b.iter().all(|&x| x == 7));
            still_works(&c, &[p]);
            free_all(&c, &mine);
            assert!(c.destroy().is_ok());
        }
    }

    #[test]
    fn free_of_the_middle_of_an_object_is_reported() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_middle");
        let c = debug_cache(c"rslub_test_middle", 64, SANITY);
        let objs = alloc_n(&c, 2, -1);
        let before = errors(&c);
        free_raw(&c, objs[0] + 8);
        assert_eq!(errors(&c) - before, 1);
        assert_eq!(c.last_error(), Some((Problem::NotAnObject, objs[0] + 8)));
        still_works(&c, &objs);
        free_all(&c, &objs);
        assert_eq!(c.validate().expect("memory").errors, 0);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn a_write_past_the_object_is_caught_at_free() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_redzone");
        let c = debug_cache(c"rslub_test_redzone", 61, RED_ZONE | STORE_USER);
        let objs = alloc_n(&c, 3, -1);
        let bad = objs[1];
        // One byte past the 61 the cache promises.
        // SAFETY: Inside the object's stride (its red zone): memory of the cache.
        unsafe { ((bad + 61) as *mut u8).write_volatile(0) };
        let before = errors(&c);
        free_raw(&c, bad);
        assert_eq!(errors(&c) - before, 1);
        assert_eq!(c.last_error(), Some((Problem::RedZone, bad)));
        // Left out: never handed out again, never freed.
        still_works(&c, &[bad]);
        free_all(&c, &[objs[0], objs[2]]);
        assert_eq!(c.destroy().map_err(|l| l.0), Err(1));
    }

    #[test]
    fn a_write_into_a_free_object_is_caught_at_allocation() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_poison");
        let c = debug_cache(c"rslub_test_poison", 128, POISON);
        let objs = alloc_n(&c, 3, -1);
        let victim = objs[1];
        free(&c, victim);
        // A use after free: the freed object is written.
        // SAFETY: The object's memory stays the cache's; no one else uses it.
        unsafe { ((victim + 5) as *mut u8).write_volatile(0x42) };
        let before = errors(&c);
        // The next allocation takes the freed object first, finds it written, leaves it
        // out and hands out another.
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert!(p != victim);
        assert_eq!(errors(&c) - before, 1);
        assert_eq!(c.last_error(), Some((Problem::Poison, victim)));
        still_works(&c, &[victim]);
        free_all(&c, &[objs[0], objs[2], p]);
        assert_eq!(c.destroy().map_err(|l| l.0), Err(1));
    }

    #[test]
    fn a_corrupted_free_list_is_caught() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_fplist");
        if !hardened() {
            return;
        }
        let c = debug_cache(c"rslub_test_fplist", 64, SANITY);
        let per_slab = c.layout().objects;
        let objs = alloc_n(&c, 3, -1);
        free(&c, objs[1]);
        // A plain address written over the free pointer of the freed object.
        // SAFETY: The freed object's memory stays the cache's.
        unsafe {
            ((objs[1] + c.layout().free_offset as usize) as *mut usize).write_volatile(objs[0])
        };
        let before = errors(&c);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert_eq!(errors(&c) - before, 1);
        assert_eq!(c.last_error(), Some((Problem::FreeList, objs[1])));
        // Neither the corrupt object nor the address written is handed out.
        assert!(p != objs[1] && p != objs[0]);
        still_works(&c, &[objs[0], objs[1]]);
        free_all(&c, &[objs[0], objs[2], p]);
        // The corrupt object and the rest of its slab's list were left out.
        assert_eq!(c.destroy().map_err(|l| l.0), Err(u64::from(per_slab - 2)));
    }

    #[test]
    fn owner_records_say_where_an_object_was_allocated_and_freed() {
        let c = debug_cache(c"rslub_test_owner", 64, STORE_USER);
        let a = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        let [alloc, freed] = c.owner_records(a).expect("U is on");
        assert!(alloc.addr() != 0);
        assert_eq!(freed.addr(), 0);
        free(&c, a);
        let [alloc2, freed] = c.owner_records(a).expect("U is on");
        assert_eq!(alloc2.addr(), alloc.addr());
        assert!(freed.addr() != 0);
        assert!(freed.addr() != alloc.addr());
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn validate_walks_every_slab_and_finds_corruption() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_validate");
        if !hardened() {
            return;
        }
        for flags in [FZPU, 0] {
            let c = debug_cache(c"rslub_test_validate", 256, flags);
            let per_slab = c.layout().objects as usize;
            // Two full slabs and a partial one, then holes in the first.
            let objs = alloc_n(&c, 2 * per_slab + 3, -1);
            free(&c, objs[0]);
            free(&c, objs[2]);
            let v = c.validate().expect("memory");
            assert_eq!(v.errors, 0);
            if flags != 0 {
                // Every slab is on a list: partial or (debug) full.
                assert_eq!(v.slabs, 3);
                assert_eq!(v.free, (per_slab - 3 + 2) as u64);
            } else {
                // The CPU slab was flushed to the partial list; full slabs are on none.
                assert!(v.slabs >= 1);
            }
            // Corrupt a free object's free pointer: plain address of another object.
            // SAFETY: `objs[2]` is free, its memory stays the cache's.
            unsafe {
                ((objs[2] + c.layout().free_offset as usize) as *mut usize).write_volatile(objs[5])
            };
            let v = c.validate().expect("memory");
            assert!(v.errors >= 1);
            for &p in objs.iter().filter(|&&p| p != objs[0] && p != objs[2]) {
                free(&c, p);
            }
            // Every object is free again: the slab goes, its list never followed.
            assert!(c.destroy().is_ok());
        }
    }

    #[test]
    fn debug_caches_serve_bulk_and_node_requests() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_dbgbulk");
        let c = debug_cache(c"rslub_test_dbgbulk", 200, FZPU);
        let mut out = [core::ptr::null_mut(); 40];
        c.alloc_bulk(Gfp::KERNEL, &mut out).expect("objects");
        let node = crate::shim::numa_mem_id();
        let p = c.alloc_node(Gfp::KERNEL, node).expect("object").as_ptr() as usize;
        // SAFETY: Allocated above, freed once.
        unsafe { c.free_bulk(&mut out) };
        free(&c, p);
        let before = errors(&c);
        // SAFETY: A deliberate double free of the bulk's first object.
        unsafe { c.free_bulk(&mut out[..1]) };
        assert_eq!(errors(&c) - before, 1);
        assert_eq!(c.validate().expect("memory").errors, 0);
        assert!(c.destroy().is_ok());
    }
}
