// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_page_view`: rslub's slabs are slab pages to the rest of the kernel
//! (`rust/slab_page.c`, Documentation/backing.rst, "The slab page view"). Code outside
//! mm/slub.c that asks whether a page is a slab, and reads `struct slab` and its cache,
//! finds each object of an rslub cache where it is, with its cache's name and geometry;
//! a page reference taken and dropped on such a page (as `iov_iter_get_pages2()` over a
//! bvec does) leaves the slab alone.

use kernel::prelude::*;

#[kunit_tests(rslub_page_view)]
mod tests {
    use crate::{
        common::{alloc_n, args, free_all, pin, slabs, unpin},
        gfp::Gfp,
        layout, mm,
        registry::Cache,
        test_shim::{
            bvec_get_put, kmem_dump_obj, ksize_krealloc_skipped, log_has, nearest_obj,
            on_slab_page, page_put, page_try_get, skip, slab_view, virt_to_pfn, MemoryBlock,
        },
    };
    use core::ptr;
    use kernel::{prelude::fmt, str::CString};

    /// A slab page's count while rslub holds it: a compound slab's is frozen at 0 (7.3's
    /// SLUB), an order-0 slab's is the 1 it was allocated with (6.12's; `rust/mm.rs`).
    fn frozen_count(order: u32) -> i32 {
        i32::from(order == 0)
    }

    /// Every object of a cache whose slabs span several pages is on a slab page, whatever
    /// page of its slab it starts on; the kernel's view of it names the cache, its stride,
    /// object size, the slab's order (the cache's, or the fallback's where memory was
    /// fragmented) and its object count, the slab's address, a count frozen at 0, and
    /// takes every address inside an object to that object's start (as KASAN's reports
    /// and `kmem_dump_obj()` do). And rslub finds the object's cache from it.
    #[test]
    fn every_object_is_on_a_slab_page_of_its_cache() {
        let c = Cache::create(&args(c"rslub_test_view_pages", 3000)).expect("cache");
        let l = *c.layout();
        assert!(l.order > 0);
        let objs = alloc_n(&c, 2 * l.objects as usize + 1, crate::cache::NO_NODE);
        for &p in objs.iter() {
            assert!(on_slab_page(p));
            let v = slab_view(p).expect("a slab page");
            assert_eq!(v.name(), c"rslub_test_view_pages");
            assert_eq!(v.size, l.size);
            assert_eq!(v.object_size, 3000);
            let fallback = layout::get_order(u64::from(l.size));
            assert!(v.order == l.order || v.order == fallback);
            assert_eq!(v.objects, layout::order_objects(v.order, l.stride()));
            assert_eq!(v.refcount, frozen_count(v.order));
            assert!(!v.kmalloc);
            assert_eq!((p - v.base) % l.size as usize, 0);
            for inside in [p, p + 1, p + 2999] {
                assert_eq!(nearest_obj(inside), p);
            }
            assert_eq!(mm::owner_of(p as *const u8), ptr::from_ref(&*c).cast());
        }
        free_all(&c, &objs);
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
    }

    /// `kmem_dump_obj()` (mm/slab_common.c, used by RCU's and the debug objects' reports)
    /// finds an rslub object on a slab: it is no "non-slab/vmalloc memory", and the kernel
    /// prints the cache's name, the object's start, the pointer's offset in it and the
    /// object size, from the slab page's shadow.
    #[test]
    fn kmem_dump_obj_finds_the_object_on_a_slab() {
        let c = Cache::create(&args(c"rslub_test_view_dump", 200)).expect("cache");
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert!(kmem_dump_obj(p + 5));
        let asked =
            CString::try_from_fmt(fmt!("rslub_test_kmem_dump_obj {:016x}", p + 5)).expect("memory");
        let told = CString::try_from_fmt(fmt!(
            " slab rslub_test_view_dump start {p:016x} pointer offset 5 size 200"
        ))
        .expect("memory");
        assert!(log_has(&asked, &told));
        free_all(&c, &[p]);
        assert!(c.destroy().is_ok());
    }

    /// A page reference taken and dropped on the pages of an rslub object, as a bvec
    /// iterator's user does (NFS and Ceph direct I/O, 9p, loop over kmalloc'ed buffers):
    /// `iov_iter_get_pages2()` takes none on a slab page and `put_page()` leaves it alone,
    /// so the count stays frozen at 0, the slab and its objects stay, and the cache
    /// goes on serving and is destroyed with nothing left. (When rslub's slabs were plain
    /// pages, the count went 0 -> 1: the helper then leaves the reference, which would
    /// have freed the page under the slab when put.)
    #[test]
    fn a_page_reference_taken_and_dropped_leaves_the_slab_alone() {
        let c = Cache::create(&args(c"rslub_test_view_bvec", 3000)).expect("cache");
        let l = *c.layout();
        // Slabs of the cache's order hold objects across page boundaries (3000-byte
        // objects: the second is); a slab of the fallback order (fragmented memory) holds
        // one object a page: as many objects as two slabs of the cache's order hold.
        let objs = alloc_n(&c, 2 * l.objects as usize, crate::cache::NO_NODE);
        let p = objs
            .iter()
            .copied()
            .find(|&p| p / 4096 != (p + 2999) / 4096);
        for &o in objs.iter() {
            // SAFETY: A live object of 3000 bytes, ours.
            unsafe { ptr::write_bytes(o as *mut u8, 0x5a, 3000) };
        }
        // Every slab of the fallback order: no object across pages, but the pages still
        // taken and put.
        for &q in p.iter().chain(objs.iter().take(2)) {
            let count = frozen_count(slab_view(q).expect("a slab page").order);
            for _ in 0..3 {
                let counts = bvec_get_put(q, 3000);
                assert!(!counts.is_empty());
                assert!(counts.iter().all(|&n| n == count));
            }
            assert_eq!(slab_view(q).expect("a slab page").refcount, count);
        }
        for &o in objs.iter() {
            // SAFETY: As above.
            let s = unsafe { core::slice::from_raw_parts(o as *const u8, 3000) };
            assert!(s.iter().all(|&b| b == 0x5a));
        }
        let more = alloc_n(&c, 16, crate::cache::NO_NODE);
        free_all(&c, &more);
        free_all(&c, &objs);
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
    }

    /// The kernel's own `ksize()` of an rslub object (where ftrace skips rslub's hook) is
    /// what SLUB's would be for a cache of that layout: the stride for a plain cache, the
    /// object's size where the stride holds more than the object may spill into (a red
    /// zone, poison, owner records, KASAN's red zone); and its `krealloc()` to the same
    /// size keeps the object.
    #[test]
    fn the_kernels_ksize_of_an_object_is_its_size_with_any_debug_layout() {
        for flags in [
            0,
            layout::STORE_USER,
            layout::RED_ZONE,
            layout::POISON,
            layout::SANITY | layout::RED_ZONE | layout::POISON | layout::STORE_USER,
        ] {
            let c = Cache::create(&crate::cache::CacheArgs {
                flags,
                ..args(c"rslub_test_view_ksize", 100)
            })
            .expect("cache");
            let l = *c.layout();
            let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            // SAFETY: a live object of `c`, kept in place (the same size), freed below.
            let (ks, re) = unsafe { ksize_krealloc_skipped(p, 100) }.expect("a tracer");
            let spill = flags != 0 || cfg!(CONFIG_KASAN);
            assert_eq!(ks, if spill { 100 } else { l.size as usize });
            assert_eq!(re, p);
            free_all(&c, &[p]);
            assert!(c.destroy().is_ok());
        }
    }

    /// A speculative reference (`folio_try_get()`, as compaction, memory failure or
    /// page_idle take on a pfn they walk) on an order-0 slab's page keeps the page from the
    /// page allocator after rslub gave it back, until it is put. A stale pointer into that
    /// page is then no object of the cache: a free of it, one at a time or in bulk under
    /// either profile, is reported and frees nothing (its metadata pointer is cleared; the
    /// cache it names is still the cache's), and the page is freed by the last put.
    #[test]
    fn a_stale_free_into_a_slab_page_held_by_a_reference_is_refused() {
        use crate::{debug::Problem, params::Profile, test_shim::expect_reports};
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_view_stale");
        for (profile, bulk) in [
            (Profile::Classic, false),
            (Profile::Classic, true),
            (Profile::Tuned, true),
        ] {
            let c = Cache::create(&args(c"rslub_test_view_stale", 64)).expect("cache");
            c.set_profile(profile);
            assert_eq!(c.layout().order, 0);
            let objs = alloc_n(&c, 4, crate::cache::NO_NODE);
            let p = objs[0];
            assert!(page_try_get(p));
            free_all(&c, &objs);
            c.shrink();
            assert_eq!(slabs(&c), 0);
            // Given back, and held: a plain page again.
            assert!(!on_slab_page(p));
            if bulk {
                let mut stale = [p as *mut u8];
                // SAFETY: Deliberately no object of `c`: what is checked is the refusal,
                // which touches nothing of the page (`init_on_free` is off here).
                unsafe { c.free_bulk(&mut stale) };
            } else {
                // SAFETY: As above.
                unsafe { c.free(ptr::NonNull::new(p as *mut u8).expect("non-null")) };
            }
            assert_eq!(c.last_error(), Some((Problem::NotASlab, p)));
            // SAFETY: The reference taken above, put once.
            unsafe { page_put(p) };
            let again = alloc_n(&c, 4, crate::cache::NO_NODE);
            free_all(&c, &again);
            assert!(c.destroy().is_ok());
        }
    }

    /// Memory offlining of a block holding rslub's slabs fails at once ("unmovable",
    /// `EBUSY`) and leaves them intact. A compound slab is unmovable as SLUB's are; an
    /// order-0 slab keeps its count of 1 (`rust/mm.rs`), so that `page_is_unmovable()`
    /// does not take it for free, which would have `offline_pages()` isolate the block,
    /// fail to migrate the slab and retry until a signal. The test takes a whole memory
    /// block (nothing unmovable in it), lays two order-0 slabs of a cache in it, gives the
    /// rest back (the slabs in its first page block, which isolation looks at first), and
    /// writes `offline` to the block's state from a kernel thread that it interrupts if
    /// the write has not returned within a minute (it returns at once). (Without the
    /// count of 1 the test passes only if something unmovable lands in the block once
    /// it is given back, before the write.)
    #[test]
    fn memory_offline_of_a_block_holding_slabs_fails_at_once() {
        use crate::inject::{give_pages, take_back_pages};
        if !cfg!(CONFIG_MEMORY_HOTREMOVE) || !cfg!(CONFIG_CONTIG_ALLOC) {
            return skip(
                c"needs memory hot-remove and alloc_contig_pages() (distro, debug kernels)",
            );
        }
        // Two slabs for the objects below, made on this CPU.
        pin(0);
        let c = Cache::create(&args(c"rslub_test_view_offline", 64)).expect("cache");
        let l = *c.layout();
        assert_eq!(l.order, 0);
        let id = c.id();
        // A failed assertion ends the test without dropping what it holds: nothing may
        // fail while the block is held (128 MiB), until `release`.
        let Some(mut block) = MemoryBlock::take() else {
            assert!(c.destroy().is_ok());
            unpin();
            return skip(c"no memory block could be emptied (alloc_contig_pages())");
        };
        // SAFETY: Two pages of the block, each a page of its own, given up by it.
        unsafe { give_pages(id, 0, [block.page(0), block.page(1)]) };
        // The cache's next two slabs: the given pages, taken before any others.
        let objs = alloc_n(&c, 2 * l.objects as usize, crate::cache::NO_NODE);
        let taken = take_back_pages();
        block.release();
        assert_eq!(taken, 2);
        for (i, &o) in objs.iter().enumerate() {
            // SAFETY: A live object of 64 bytes, ours.
            unsafe { ptr::write_bytes(o as *mut u8, i as u8, 64) };
        }
        let (ret, spun) = block.offline(60);
        if spun {
            kernel::pr_err!(
                "offlining the block went on until interrupted (offline_pages() retried)\n"
            );
        }
        if ret != -(kernel::bindings::EBUSY as i32) {
            kernel::pr_err!("offlining the block returned {ret}, not -EBUSY\n");
        }
        assert!(!spun);
        assert_eq!(ret, -(kernel::bindings::EBUSY as i32));
        // The page the isolation found unmovable (it dumps the first one of the block's
        // first page block) is the lower of the two slabs' pages: its pfn, then the flags
        // line of dump_page().
        let first = objs.iter().map(|&o| virt_to_pfn(o)).min().unwrap_or(0);
        let pfn = CString::try_from_fmt(fmt!("pfn:{first:#x}")).expect("memory");
        assert!(log_has(&pfn, c"flags:"));
        for (i, &o) in objs.iter().enumerate() {
            assert!(on_slab_page(o));
            // SAFETY: As above.
            let s = unsafe { core::slice::from_raw_parts(o as *const u8, 64) };
            assert!(s.iter().all(|&b| b == i as u8));
        }
        free_all(&c, &objs);
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
        unpin();
    }
}
