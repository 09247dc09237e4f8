// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_sanitize`: what the kernel's sanitizers see of rslub's objects
//! (`rust/sanitize.rs`). Each case makes a mistake on purpose (a use after free, a read
//! past an object's end, a double free, a leak), as a C user of a backed cache would, and
//! checks that the report came: KASAN's and kmemleak's from the kernel log and the
//! kmemleak file, rslub's own from the cache. On a kernel without KASAN or kmemleak the
//! cases that need them are skipped; the quarantine case checks the other side there
//! (a freed object is reused at once).
//!
//! A KASAN report disables lockdep for the rest of the boot (it taints the kernel): this
//! suite is declared last of the module's (`tests-kunit/rslub_kunit.rs`).

use kernel::prelude::*;

#[kunit_tests(rslub_sanitize)]
mod tests {
    use crate::{
        back::{self, KmemCache},
        common::{args, free, slabs},
        debug::Problem,
        gfp::Gfp,
        inject,
        registry::Cache,
        sanitize,
        test_shim::{
            alloc_hidden, expect_reports, kfree, kmalloc, krealloc, log_has, msleep, read_byte,
            read_file, skip, write_file, KernelCache, Mempool,
        },
    };
    use core::ptr::NonNull;
    use kernel::{alloc::flags::GFP_KERNEL, prelude::*, str::CString};

    /// Not a multiple of KASAN's 8-byte granule: the last granule is partly the object's.
    const SIZE: u32 = 100;

    fn handle(kc: &KernelCache) -> KmemCache {
        // SAFETY: `kc` lives until the end of the test, after every use of the handle.
        unsafe { KmemCache::from_raw(kc.raw()) }
    }

    /// The "at addr" part of a KASAN report on `addr`, as the kernel prints it (`%px`).
    fn at_addr(addr: usize) -> CString {
        CString::try_from_fmt(fmt!("at addr {addr:016x} by")).expect("memory")
    }

    /// A kernel cache of `SIZE`-byte objects, backed by rslub.
    fn backed(name: &CStr) -> KernelCache {
        let kc = KernelCache::create(name, SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        kc
    }

    /// Unbacks `kc`, with none of its rslub objects left.
    fn unback(kc: &KernelCache, base: usize) {
        assert_eq!(back::unback(handle(kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    #[test]
    fn a_use_after_free_is_reported_by_kasan() {
        if !sanitize::KASAN {
            return skip(c"no KASAN in this kernel");
        }
        let base = back::backings();
        let kc = backed(c"rslub_test_kasan_uaf");
        let p = kc.alloc(Gfp::KERNEL);
        assert!(!crate::mm::owner_of(p as *const u8).is_null());
        // SAFETY: An allocated object of `SIZE` bytes: both reads are in bounds.
        unsafe {
            read_byte(p);
            read_byte(p + SIZE as usize - 1);
        }
        assert!(!log_has(c"BUG: KASAN:", &at_addr(p)));
        // SAFETY: Allocated above, freed once.
        unsafe { kc.free(p) };
        expect_reports(c"rslub_test_kasan_uaf");
        // SAFETY: Freed, but mapped (a slab of rslub's; KASAN is to catch this read).
        unsafe { read_byte(p + 8) };
        assert!(log_has(c"BUG: KASAN: slab-use-after-free", &at_addr(p + 8)));
        unback(&kc, base);
    }

    /// An element a slab mempool keeps in reserve is poisoned, as the pool poisons the
    /// kernel's (`kasan_mempool_poison_object()` reads the element's `struct slab`: rslub's
    /// shadow, `rust/slab_page.c`): a read of it is reported; taken from the reserve it is
    /// readable again.
    #[test]
    fn a_read_of_an_element_a_mempool_keeps_is_reported_by_kasan() {
        if !sanitize::KASAN {
            return skip(c"no KASAN in this kernel");
        }
        let base = back::backings();
        let kc = backed(c"rslub_test_kasan_pool");
        let pool = Mempool::slab(1, &kc).expect("mempool");
        let p = pool.alloc_reserved();
        assert!(p != 0 && !crate::mm::owner_of(p as *const u8).is_null());
        expect_reports(c"rslub_test_kasan_pool");
        // SAFETY: taken from the pool above, given back once; still mapped after (a slab
        // of rslub's, on which KASAN is to catch the read).
        unsafe {
            pool.free(p);
            assert_eq!(pool.reserved(), 1);
            read_byte(p + 8);
        }
        assert!(log_has(c"BUG: KASAN: slab-use-after-free", &at_addr(p + 8)));
        let q = pool.alloc_reserved();
        assert_eq!(q, p);
        // SAFETY: unpoisoned by the pool when handed out: an allocated object.
        unsafe { read_byte(q + SIZE as usize - 1) };
        assert!(!log_has(c"BUG: KASAN:", &at_addr(q + SIZE as usize - 1)));
        // SAFETY: given back once; the pool frees it when destroyed.
        unsafe { pool.free(q) };
        drop(pool);
        unback(&kc, base);
    }

    /// A read one byte past an object: in its last granule (100 bytes), and where the
    /// next granule would be the next object's (96 bytes, which fills its granules: the
    /// red zone KASAN's caches get is what is read, not the next object, allocated too).
    #[test]
    fn a_read_past_an_object_is_reported_by_kasan() {
        if !sanitize::KASAN {
            return skip(c"no KASAN in this kernel");
        }
        let base = back::backings();
        for (name, size) in [
            (c"rslub_test_kasan_oob", SIZE),
            (c"rslub_test_kasan_oob96", 96),
        ] {
            let kc = KernelCache::create(name, size, 0, 0, None).expect("kmem_cache");
            back::back(handle(&kc)).expect("back");
            let (p, q) = (kc.alloc(Gfp::KERNEL), kc.alloc(Gfp::KERNEL));
            assert!(p != 0 && q != 0);
            expect_reports(c"rslub_test_kasan_oob");
            let past = p + size as usize;
            // SAFETY: One byte past the object, in its stride: mapped (the mistake KASAN is
            // to catch).
            unsafe { read_byte(past) };
            assert!(log_has(c"BUG: KASAN: slab-out-of-bounds", &at_addr(past)));
            // SAFETY: Allocated above, freed once each.
            unsafe {
                kc.free(p);
                kc.free(q);
            }
            unback(&kc, base);
        }
    }

    /// kmalloc's contract under KASAN, as with SLUB: of a request served by one of rslub's
    /// size classes, only the bytes asked for are accessible. A read past 100 bytes of a
    /// `kmalloc(100)` (`kmalloc-128`'s object) is reported, and so is one past 50 bytes
    /// once `krealloc()` shrank it in place. (rslub once unpoisoned the class's whole
    /// object: neither read was reported.)
    #[test]
    fn a_read_past_a_kmalloc_request_is_reported_by_kasan() {
        if !sanitize::KASAN {
            return skip(c"no KASAN in this kernel");
        }
        back::start_kmalloc_for_suite().expect("kmalloc hooks");
        let p = kmalloc(100, Gfp::KERNEL);
        let owned = !crate::mm::owner_of(p as *const u8).is_null();
        expect_reports(c"rslub_test_kasan_kmalloc");
        // SAFETY: Inside the class's object (mapped), past the request: the mistake KASAN
        // is to catch.
        unsafe { read_byte(p + 100) };
        let past = log_has(c"BUG: KASAN: slab-out-of-bounds", &at_addr(p + 100));
        // SAFETY: `p` is live; shrunk in place (it fits).
        let q = unsafe { krealloc(p, 50, Gfp::KERNEL) };
        // SAFETY: As above, past the new size.
        unsafe { read_byte(q + 56) };
        let shrunk = log_has(c"BUG: KASAN: slab-out-of-bounds", &at_addr(q + 56));
        // SAFETY: Allocated above, freed once.
        unsafe { kfree(q) };
        back::stop_kmalloc();
        assert!(owned);
        assert_eq!(q, p);
        assert!(past);
        assert!(shrunk);
    }

    /// Under KASAN a freed object waits in its cache's quarantine, poisoned, before it can
    /// be handed out again; without, the last object freed is the next one handed out.
    #[test]
    fn freed_objects_are_not_reused_at_once_under_kasan() {
        // The suites' caches have none but where a case asks (`inject::set_quarantine`).
        inject::set_quarantine(true);
        let c = Cache::create(&args(c"rslub_test_quarantine", 64)).expect("cache");
        inject::set_quarantine(false);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        free(&c, p);
        let q = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        if sanitize::KASAN {
            assert_ne!(p, q);
            assert_eq!(c.quarantined(), 1);
        } else {
            assert_eq!(p, q);
            assert_eq!(c.quarantined(), 0);
        }
        free(&c, q);
        // Destroying gives the quarantined objects back first: none is left allocated.
        c.destroy().expect("destroy");
    }

    /// KASAN's shadow knows a freed object: a second free is rslub's to report, and is
    /// not done (the object is not on a free list twice).
    #[test]
    fn a_double_free_is_reported_by_rslub_under_kasan() {
        if !sanitize::KASAN {
            return skip(
                c"no KASAN in this kernel: a double free of an ordinary cache is not checked",
            );
        }
        inject::set_quarantine(true);
        let c = Cache::create(&args(c"rslub_test_kasan_double", 64)).expect("cache");
        inject::set_quarantine(false);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        free(&c, p);
        expect_reports(c"rslub_test_kasan_double");
        // SAFETY: The deliberate second free of an object freed above.
        unsafe { c.free(NonNull::new(p as *mut u8).expect("non-null")) };
        assert_eq!(c.last_error(), Some((Problem::DoubleFree, p)));
        assert_eq!(c.quarantined(), 1);
        // Shrinking gives the quarantined object back, and with it the empty slab.
        c.shrink();
        assert_eq!(c.quarantined(), 0);
        assert_eq!(slabs(&c), 0);
        c.destroy().expect("destroy");
    }

    /// The bytes of the kmemleak report after two scans (an object is reported once it
    /// was unchanged between two scans, and at least 5 s old).
    /// `None` if a scan or the read failed.
    fn kmemleak_report(buf: &mut [u8]) -> Option<usize> {
        for _ in 0..2 {
            if write_file(c"kmemleak", b"scan") != Ok(4) {
                return None;
            }
        }
        read_file(c"kmemleak", buf).ok()
    }

    /// Whether `report` names the object at `p` unreferenced.
    fn reported(report: &[u8], p: usize) -> bool {
        let line = CString::try_from_fmt(fmt!("unreferenced object {p:#x} ")).expect("memory");
        let line = line.to_bytes();
        report.windows(line.len()).any(|w| w == line)
    }

    /// One round of the kmemleak case.
    #[derive(Clone, Copy, Default)]
    struct Round {
        /// The objects were allocated (and earlier reports cleared).
        allocated: bool,
        /// kmemleak scanned twice and its report was read whole.
        read: bool,
        /// The report has the object nothing refers to.
        leaked_reported: bool,
        /// The report has the kmalloc'ed object referenced only from an rslub object.
        held_reported: bool,
        /// The unreferenced object is rslub's.
        rslubs: bool,
    }

    /// What kmemleak records of the object at `p`, in the kernel log (`dump=`: its
    /// reference count at the last scan, or that it knows no such object).
    fn kmemleak_dump(p: usize) {
        let cmd = CString::try_from_fmt(fmt!("dump={p:#x}")).expect("memory");
        let _ = write_file(c"kmemleak", cmd.to_bytes());
    }

    /// kmemleak reports an object of a backed cache nothing refers to, and scans rslub's
    /// objects for pointers: a kmalloc'ed object referenced only from one (which is
    /// marked as no leak, so that nothing but kmemleak's scan of it can keep the kmalloc'ed
    /// one from being reported) is no leak. The addresses stay inverted until the scans:
    /// a copy of one on the test's stack would count as a reference.
    ///
    /// The objects are never the first of their slab, as a precaution (`alloc_hidden`).
    /// CI's debug run of 2026-12-07 found the unreferenced object (not a slab's first)
    /// unreported, and nothing else reported, for a reason not understood (kmemleak scans
    /// whole stacks, those kept for reuse after their task exited included, where a stale
    /// copy of an address may stay): up to three rounds, each with new objects from new
    /// threads; a round whose object is not reported says what kmemleak knows of it
    /// (`dump=`), and the last round must see it reported. Everything is freed and
    /// unbacked before anything is asserted: a failure leaves nothing backed (an assertion
    /// ends the case at once, and a backed cache left behind made the checks after the
    /// suites wait out their drain rounds).
    #[test]
    fn a_leak_is_reported_by_kmemleak_and_rslub_objects_are_scanned() {
        if !sanitize::KMEMLEAK {
            return skip(c"no kmemleak in this kernel");
        }
        let base = back::backings();
        let kc = backed(c"rslub_test_kmemleak");
        // kmemleak's whole report: on the debug kernel, after the other suites, 64 KiB of
        // it held none of this case's objects.
        let mut buf = KVVec::from_elem(0u8, 1 << 20, GFP_KERNEL).expect("memory");
        let mut rounds = KVec::new();
        // What the rounds allocated, freed after the last: a new round's objects are not
        // at the addresses of an earlier round's (one of which may have a stale copy).
        let mut kept: KVec<(usize, usize)> = KVec::new();
        // Reports of earlier leaks are not shown again (once: a clear would also hide a
        // leak the first round's scans found from the checks after the suites).
        let cleared = write_file(c"kmemleak", b"clear") == Ok(5);
        for _ in 0..3 {
            let leaked = alloc_hidden(&kc, false);
            let holder = alloc_hidden(&kc, true);
            let mut round = Round {
                allocated: cleared && leaked != !0 && holder != !0,
                ..Round::default()
            };
            if round.allocated {
                msleep(5500);
                let read = kmemleak_report(&mut buf).filter(|&n| n < buf.len());
                let (leaked, holder) = (!leaked, !holder);
                // SAFETY: `holder` is an allocated object of `SIZE` bytes whose first
                // word is the kmalloc'ed object's address.
                let held = unsafe { (holder as *const usize).read() };
                if let Some(n) = read {
                    let report = &buf[..n];
                    round.read = true;
                    round.leaked_reported = reported(report, leaked);
                    round.held_reported = reported(report, held);
                    if !round.leaked_reported {
                        pr_info!("kmemleak's report ({n} bytes), {leaked:#x} not in it:\n");
                        for line in report.split(|&b| b == b'\n').take(40) {
                            pr_info!("  {}\n", kernel::str::BStr::from_bytes(line));
                        }
                        kmemleak_dump(leaked);
                    }
                }
                round.rslubs = !crate::mm::owner_of(leaked as *const u8).is_null();
            }
            kept.push((leaked, holder), GFP_KERNEL).expect("memory");
            rounds.push(round, GFP_KERNEL).expect("memory");
            if round.leaked_reported || !round.read {
                break;
            }
        }
        // SAFETY: The objects allocated above (not `!0`), freed once each; a holder's
        // first word is its kmalloc'ed object.
        unsafe {
            for &(leaked, holder) in kept.iter() {
                if holder != !0 {
                    kfree((!holder as *const usize).read());
                    kc.free(!holder);
                }
                if leaked != !0 {
                    kc.free(!leaked);
                }
            }
        }
        unback(&kc, base);
        let last = *rounds.last().expect("a round");
        assert!(last.allocated && last.read && last.rslubs);
        assert!(last.leaked_reported);
        assert!(rounds.iter().all(|r| !r.held_reported));
    }
}
