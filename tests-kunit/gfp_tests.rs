// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_gfp`: what the caller's allocation flags mean for rslub: zeroed
//! objects, the flags of each page and metadata allocation made on the caller's behalf,
//! the fallback to a smaller slab order, failures that must lose nothing, and the
//! shrinker that gives memory back under pressure.

use kernel::prelude::*;

#[kunit_tests(rslub_gfp)]
mod tests {
    use crate::{
        cache::NO_NODE,
        common::{alloc_n, args, free, free_all, pin, slabs, unpin},
        gfp::Gfp,
        inject::{give_pages, install, set_init_on, take_back_pages, Point},
        layout,
        registry::Cache,
        stats::Stat,
        test_shim::{expect_reports, virt_to_page, SplitBlock},
        topology::online_nodes,
    };
    use core::sync::atomic::{AtomicU32, Ordering::SeqCst};
    use kernel::{cpu::CpuId, error::code::ENOMEM, new_spinlock, prelude::*};

    /// Whether the `size` bytes at `p` are all zero.
    fn is_zero(p: usize, size: usize) -> bool {
        // SAFETY: `p` is a live object of at least `size` bytes.
        let b = unsafe { core::slice::from_raw_parts(p as *const u8, size) };
        b.iter().all(|&x| x == 0)
    }

    /// Dirties every object of two slabs and frees them, so that the next allocations
    /// get dirty memory back; then `__GFP_ZERO` must zero each object, whichever path
    /// hands it out (fast path, refill from the slab, partial slab, new slab, bulk).
    #[test]
    fn zeroing_allocations_return_zeroed_objects() {
        pin(0);
        const SIZE: u32 = 200;
        let c = Cache::create(&args(c"rslub_test_zero", SIZE)).expect("cache");
        let n = 2 * c.layout().objects as usize + 3;
        let zero = Gfp::KERNEL.with(Gfp::ZERO);
        let mut objs = alloc_n(&c, n, NO_NODE);
        for &p in objs.iter() {
            // SAFETY: a live object of SIZE bytes.
            unsafe { core::ptr::write_bytes(p as *mut u8, 0xa5, SIZE as usize) };
        }
        free_all(&c, &objs);
        objs.clear();
        for _ in 0..n {
            let p = c.alloc(zero).expect("object").as_ptr() as usize;
            assert!(is_zero(p, SIZE as usize));
            objs.push(p, GFP_KERNEL).expect("memory");
        }
        // And the fresh slabs behind them too.
        for _ in 0..n {
            let p = c.alloc_node(zero, 0).expect("object").as_ptr() as usize;
            assert!(is_zero(p, SIZE as usize));
            objs.push(p, GFP_KERNEL).expect("memory");
        }
        for &p in objs.iter() {
            // SAFETY: a live object of SIZE bytes.
            unsafe { core::ptr::write_bytes(p as *mut u8, 0x5a, SIZE as usize) };
            free(&c, p);
        }
        let mut v = KVec::from_elem(core::ptr::null_mut::<u8>(), n, GFP_KERNEL).expect("memory");
        c.alloc_bulk(zero, &mut v).expect("bulk");
        assert!(v.iter().all(|&p| is_zero(p as usize, SIZE as usize)));
        // SAFETY: allocated above, freed once.
        unsafe { c.free_bulk(&mut v) };
        // Without `__GFP_ZERO` the dirty contents come back: the zeroing above was not
        // luck (and the plain path does not pay for a memset).
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert!(crate::shim::init_on_alloc() || !is_zero(p, SIZE as usize));
        free(&c, p);
        unpin();
        assert!(c.destroy().is_ok());
    }

    /// `init_on_alloc` zeroes every allocation and `init_on_free` every freed object
    /// (but the free pointer, which the allocation wipes) without the caller asking; set
    /// here as the boot parameters would set them. A zeroed object of the CPU's active slab still goes on the CPU's
    /// list without a lock (the main fast path diverts it, the second one takes it).
    #[test]
    fn init_on_alloc_and_init_on_free() {
        const SIZE: u32 = 96;
        set_init_on(Some((false, true)));
        let c = Cache::create(&args(c"rslub_test_init_on_free", SIZE));
        set_init_on(None);
        let c = c.expect("cache");
        let free_offset = c.layout().free_offset as usize;
        pin(0);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        // SAFETY: a live object of SIZE bytes.
        unsafe { core::ptr::write_bytes(p as *mut u8, 0xff, SIZE as usize) };
        let before = c.stats();
        free(&c, p);
        let d = c.stats().since(&before);
        unpin();
        assert_eq!((d.get(Stat::FreeFast), d.get(Stat::FreeSlow)), (1, 0));
        // The freed object's memory, but for its free pointer, is zero.
        // SAFETY: `p` is a free object in a live slab of `c`: mapped, and only this test
        // uses the cache.
        let b = unsafe { core::slice::from_raw_parts(p as *const u8, SIZE as usize) };
        assert!(b
            .iter()
            .enumerate()
            .all(|(i, &x)| x == 0 || (free_offset..free_offset + 8).contains(&i)));
        // Handed out again, it is zero, its free pointer too (6.12's
        // maybe_wipe_obj_freeptr()): through the fast path (this CPU's list is LIFO) and
        // through bulk allocation, each object freed after another, so that its free
        // pointer is not the end of a list.
        pin(0);
        let q = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert_eq!(q, p);
        assert!(is_zero(q, SIZE as usize));
        let mut bulk = [core::ptr::null_mut::<u8>(); 8];
        assert!(c.alloc_bulk(Gfp::KERNEL, &mut bulk).is_ok());
        // SAFETY: live objects of `c`, freed once each.
        unsafe { c.free_bulk(&mut bulk) };
        let mut again = [core::ptr::null_mut::<u8>(); 8];
        assert!(c.alloc_bulk(Gfp::KERNEL, &mut again).is_ok());
        unpin();
        assert!(again.iter().all(|&o| is_zero(o as usize, SIZE as usize)));
        // SAFETY: as above.
        unsafe { c.free_bulk(&mut again) };
        free(&c, q);
        assert!(c.destroy().is_ok());
        set_init_on(Some((true, false)));
        let c = Cache::create(&args(c"rslub_test_init_on_alloc", SIZE));
        set_init_on(None);
        let c = c.expect("cache");
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        // SAFETY: a live object of SIZE bytes.
        unsafe { core::ptr::write_bytes(p as *mut u8, 0xff, SIZE as usize) };
        free(&c, p);
        // The same object comes back (this CPU's list is LIFO), zeroed.
        let q = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert!(is_zero(q, SIZE as usize));
        free(&c, q);
        assert!(c.destroy().is_ok());
    }

    /// Under `init_on_free`, an object smaller than a pointer overlaps its free pointer
    /// (at offset 0): the allocation wipes it too, as 6.12's `maybe_wipe_obj_freeptr()`
    /// (whose test is the pointer's offset against `inuse`), so that none of its bytes
    /// comes back from the free list.
    #[test]
    fn init_on_free_wipes_the_free_pointer_of_objects_smaller_than_a_pointer() {
        const SIZE: u32 = 4;
        set_init_on(Some((false, true)));
        let c = Cache::create(&args(c"rslub_test_init_on_free_small", SIZE));
        set_init_on(None);
        let c = c.expect("cache");
        assert!(c.layout().free_offset < SIZE);
        pin(0);
        let a = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        let b = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        for p in [a, b] {
            // SAFETY: a live object of SIZE bytes.
            unsafe { core::ptr::write_bytes(p as *mut u8, 0xff, SIZE as usize) };
        }
        // `b`'s free pointer is then `a` (this CPU's list is LIFO), not the list's end.
        free(&c, a);
        free(&c, b);
        let q = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        let r = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        unpin();
        assert_eq!((q, r), (b, a));
        assert!(is_zero(q, SIZE as usize) && is_zero(r, SIZE as usize));
        free(&c, q);
        free(&c, r);
        assert!(c.destroy().is_ok());
    }

    /// What the page allocator was asked for.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct Attempt {
        gfp: u32,
        order: u32,
    }

    /// The preferred order is asked for without `__GFP_NOFAIL`, without retrying or
    /// warning, and without reclaim; when it fails, the order of one object is asked for
    /// with the caller's own flags, and the slab holds as many objects as that order does.
    #[test]
    fn preferred_order_fails_quietly_then_the_smallest_order_is_used() {
        let c = Cache::create(&args(c"rslub_test_order", 1024)).expect("cache");
        let l = *c.layout();
        let min_order = layout::get_order(u64::from(l.size));
        assert!(l.order > min_order);
        let attempts =
            KBox::pin_init(new_spinlock!(KVec::<Attempt>::new()), GFP_KERNEL).expect("memory");
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache != id {
                return false;
            }
            let Point::PageAlloc { gfp, order, .. } = p else {
                return false;
            };
            let _ = attempts.lock().push(Attempt { gfp, order }, GFP_ATOMIC);
            // The preferred order fails, as under fragmentation.
            order == l.order
        };
        let caller = Gfp::KERNEL.with(Gfp::NOFAIL | Gfp::ZERO);
        let before = c.stats();
        let p = {
            let _h = install(&hook).expect("hook");
            c.alloc(caller).expect("object").as_ptr() as usize
        };
        let d = c.stats().since(&before);
        // Out of the lock before any assertion: a failed one ends the test thread.
        let a = core::mem::take(&mut *attempts.lock());
        assert_eq!(a.len(), 2);
        let (pref, min) = (a[0], a[1]);
        assert_eq!(pref.order, l.order);
        assert!(Gfp::from_raw(pref.gfp).has(Gfp::NOWARN | Gfp::NORETRY | Gfp::NOMEMALLOC));
        assert_eq!(pref.gfp & (Gfp::NOFAIL | Gfp::RECLAIM | Gfp::ZERO), 0);
        assert_eq!(min.order, min_order);
        // The caller's flags, but `__GFP_ZERO` (objects are zeroed one by one), and a
        // compound block.
        assert_eq!(min.gfp, caller.without(Gfp::ZERO).with(Gfp::COMP).raw());
        assert_eq!(d.get(Stat::NewSlab), 1);
        assert_eq!(d.get(Stat::OrderFallback), 1);
        // The slab has the objects of the smaller order.
        let (_, objects, _) = online_nodes()
            .map(|n| c.node_counts(n))
            .find(|&(slabs, _, _)| slabs == 1)
            .expect("one slab");
        assert_eq!(
            objects,
            i64::from(layout::order_objects(min_order, l.stride()))
        );
        // And the pages of that order, in what the cache says it holds.
        let m = c.footprint();
        assert_eq!(
            (m.slabs, m.page_bytes),
            (1, u64::from(layout::slab_bytes(min_order)))
        );
        free(&c, p);
        assert!(c.destroy().is_ok());
    }

    /// Slabs of the fallback order are smaller than a block of the cache's order, and the
    /// page allocator may hand out two of them from one such block. A free of an object
    /// of one while the other is this CPU's active slab must go to its own slab: the free
    /// fast path decides "in the active slab" by the active slab's own size. (Deciding by
    /// the cache's order put the object on the active slab's list: that slab then counted
    /// one object too few in use, and could go back to the page allocator with an object
    /// live, while the object's own slab never emptied.)
    #[test]
    fn a_free_into_a_fallback_slab_beside_the_active_one_goes_to_its_own_slab() {
        pin(0);
        // Page-sized strides: under KASAN, with its red zone (`sanitize::red_zone`).
        let size = if crate::sanitize::KASAN {
            4096 - 128
        } else {
            4096
        };
        let c = Cache::create(&args(c"rslub_test_fallback_pair", size)).expect("cache");
        let l = *c.layout();
        // Page-sized objects: the fallback order is 0, and a slab holds one object, so
        // the active slab is full and the object freed is the only one of its slab.
        let min_order = layout::get_order(u64::from(l.size));
        assert_eq!(min_order, 0);
        assert!(l.order > min_order);
        let per_slab = layout::order_objects(min_order, l.stride()) as usize;
        // Slabs A and B on the first two pages of one block of the cache's order.
        let mut block = SplitBlock::new(l.order).expect("memory");
        let (page_a, page_b) = (block.page(0), block.page(1));
        let id = c.id();
        let hook = |cache: usize, p: Point| matches!(p, Point::PageAlloc { order, .. } if cache == id && order == l.order);
        let (objs_a, b) = {
            let _h = install(&hook).expect("hook");
            // SAFETY: Two split pages of the block, given up by it.
            unsafe { give_pages(id, min_order, [page_a, page_b]) };
            let objs_a = alloc_n(&c, per_slab, NO_NODE);
            let b = c.alloc(Gfp::KERNEL).map(|p| p.as_ptr() as usize);
            let taken = take_back_pages();
            for i in taken..2 {
                block.keep(i);
            }
            (objs_a, b)
        };
        let b = b.expect("object");
        assert_eq!(virt_to_page(objs_a[0]), page_a.as_ptr() as usize);
        assert_eq!(virt_to_page(b), page_b.as_ptr() as usize);
        assert_eq!(slabs(&c), 2);
        // A is full and off every list; B is this CPU's active slab. Free an object of A.
        free(&c, objs_a[0]);
        // It went to A (now on this CPU's partial list), not onto B's free list.
        assert_eq!(c.check_this_cpu(), Ok((per_slab - 1) as u32));
        // Flushing B and A (validate flushes every CPU) leaves every count right.
        let v = c.validate().expect("memory");
        assert_eq!(v.errors, 0);
        assert_eq!(slabs(&c), 2);
        free_all(&c, &objs_a[1..]);
        free(&c, b);
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
        unpin();
    }

    /// Checks that `objs`, a new slab's objects in the order they were handed out, are
    /// each of its `per_slab` objects once, and returns how often an object lies below
    /// the one before it (0 in address order).
    fn descents(objs: &[usize], size: u32, per_slab: usize) -> usize {
        assert_eq!(objs.len(), per_slab);
        let base = *objs.iter().min().expect("objects");
        let mut seen = KVec::with_capacity(per_slab, GFP_KERNEL).expect("memory");
        seen.resize(per_slab, false, GFP_KERNEL).expect("memory");
        for &p in objs {
            let i = (p - base) / size as usize;
            assert!((p - base) % size as usize == 0 && i < per_slab && !seen[i]);
            seen[i] = true;
        }
        objs.windows(2).filter(|w| w[1] < w[0]).count()
    }

    /// With `CONFIG_SLAB_FREELIST_RANDOM` a new slab's objects come off its free list
    /// in a random order (SLUB's `shuffle_freelist()`: the cache's random permutation,
    /// from a random position), each once; a slab of the fallback order too, which
    /// takes the indices it has from the same permutation.
    #[test]
    fn new_slabs_hand_out_their_objects_shuffled() {
        if !cfg!(CONFIG_SLAB_FREELIST_RANDOM) {
            crate::test_shim::skip(c"no CONFIG_SLAB_FREELIST_RANDOM: free lists in address order");
            return;
        }
        pin(0);
        let c = Cache::create(&args(c"rslub_test_shuffle", 512)).expect("cache");
        let l = *c.layout();
        let min_order = layout::get_order(u64::from(l.size));
        assert!(l.order > min_order);
        // A new slab of the cache's order, all of it.
        let full = alloc_n(&c, l.objects as usize, NO_NODE);
        assert_eq!(slabs(&c), 1);
        let d = descents(&full, l.size, l.objects as usize);
        // Four slabs of the fallback order (the cache's order fails), used up one after
        // the other: with few objects each, one may come out in address order by chance
        // (about 1 in 5 000 for 8), four hardly.
        let id = c.id();
        let hook = |cache: usize, p: Point| matches!(p, Point::PageAlloc { order, .. } if cache == id && order == l.order);
        let per_small = layout::order_objects(min_order, l.stride()) as usize;
        let small = {
            let _h = install(&hook).expect("hook");
            alloc_n(&c, 4 * per_small, NO_NODE)
        };
        assert_eq!(slabs(&c), 5);
        let d_small: usize = small
            .chunks(per_small)
            .map(|s| descents(s, l.size, per_small))
            .sum();
        pr_info!(
            "{} objects of a new slab: {d} out of address order; 4 fallback slabs of {per_small}: {d_small}\n",
            l.objects
        );
        assert!(d > 0 && d_small > 0);
        free_all(&c, &full);
        free_all(&c, &small);
        unpin();
        assert!(c.destroy().is_ok());
    }

    /// A slab on pages of the emergency reserves (pfmemalloc) serves only callers
    /// entitled to them, as SLUB's `pfmemalloc_match()`: an ordinary allocation skips it
    /// on the partial list, and a new slab of such pages made for an ordinary caller
    /// gives that caller one object and goes to the node's list, not to the CPU.
    #[test]
    fn reserve_slabs_serve_only_callers_entitled_to_reserves() {
        pin(0);
        // Half-page strides: under KASAN, with its red zone (`sanitize::red_zone`).
        let size = if crate::sanitize::KASAN {
            2048 - 128
        } else {
            2048
        };
        let c = Cache::create(&args(c"rslub_test_pfmemalloc", size)).expect("cache");
        let l = *c.layout();
        let min_order = layout::get_order(u64::from(l.size));
        assert_eq!(min_order, 0);
        assert!(l.order > min_order);
        assert!(layout::order_objects(0, l.stride()) >= 2);
        let mut block = SplitBlock::new(1).expect("memory");
        block.mark_pfmemalloc(0);
        block.mark_pfmemalloc(1);
        let (first, second) = (block.page(0), block.page(1));
        let (page_of_first, page_of_second) = (first.as_ptr() as usize, second.as_ptr() as usize);
        let id = c.id();
        // Slabs of the fallback order only, on the pages given.
        let hook = |cache: usize, p: Point| matches!(p, Point::PageAlloc { order, .. } if cache == id && order == l.order);
        let entitled = Gfp::KERNEL.with(Gfp::MEMALLOC);
        let (x, y, z) = {
            let _h = install(&hook).expect("hook");
            // SAFETY: Two split pages of the block, given up by it.
            unsafe { give_pages(id, 0, [first, second]) };
            // An entitled caller makes a slab of the first reserve page.
            let x = c.alloc(entitled).expect("object").as_ptr() as usize;
            // It goes to the node (validate flushes every CPU), with a free object.
            assert_eq!(c.validate().expect("memory").errors, 0);
            // An ordinary caller skips it: a new slab, of the second reserve page; that
            // caller gets one object of it, and the slab goes to the node too.
            let y = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            assert_eq!(take_back_pages(), 2);
            assert!(!c.has_active_slab(CpuId::from_u32(0).expect("cpu")));
            // The next ordinary allocation skips both: a slab of the page allocator's.
            let z = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            (x, y, z)
        };
        assert_eq!(virt_to_page(x), page_of_first);
        assert_eq!(virt_to_page(y), page_of_second);
        assert!(virt_to_page(z) != page_of_first && virt_to_page(z) != page_of_second);
        assert_eq!(slabs(&c), 3);
        free_all(&c, &[x, y, z]);
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
        unpin();
    }

    /// A slab's metadata is allocated with the caller's reclaim and context bits:
    /// `GFP_NOFS` must not recurse into the file system, `GFP_NOIO` not into block I/O,
    /// `__GFP_NOFAIL` must not fail, `GFP_ATOMIC` keeps `__GFP_HIGH` and never sleeps.
    #[test]
    fn slab_metadata_takes_the_callers_reclaim_flags() {
        let c = Cache::create(&args(c"rslub_test_meta", 512)).expect("cache");
        let seen = AtomicU32::new(u32::MAX);
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache == id {
                if let Point::MetaAlloc { gfp } = p {
                    seen.store(gfp, SeqCst);
                }
            }
            false
        };
        let nofs = Gfp::KERNEL.without(Gfp::FS);
        let noio = Gfp::KERNEL.without(Gfp::FS | Gfp::IO);
        let nofail = Gfp::KERNEL.with(Gfp::NOFAIL);
        let atomic = Gfp::from_raw(kernel::bindings::GFP_ATOMIC);
        let _h = install(&hook).expect("hook");
        for caller in [nofs, noio, nofail, atomic, Gfp::KERNEL.with(Gfp::ZERO)] {
            seen.store(u32::MAX, SeqCst);
            // An empty cache: the allocation makes a new slab.
            let p = c.alloc(caller).expect("object").as_ptr() as usize;
            let m = Gfp::from_raw(seen.load(SeqCst));
            assert!(m.raw() != u32::MAX);
            // Exactly the caller's reclaim bits: nothing added, nothing lost.
            assert_eq!(m.raw(), caller.raw() & Gfp::RECLAIM_MASK);
            assert_eq!(m.raw() & (Gfp::ZERO | Gfp::THISNODE), 0);
            free(&c, p);
            c.shrink();
            assert_eq!(slabs(&c), 0);
        }
        drop(_h);
        assert!(c.destroy().is_ok());
    }

    /// Slab pages get the caller's reclaim and constraint bits only, as SLUB's
    /// `new_slab()` gives them, and `__GFP_COMP` (a slab is one compound block, a slab page
    /// to the rest of the kernel): `__GFP_ACCOUNT` would charge a whole slab to one
    /// caller, and `__GFP_ZERO` is done object by object. Bits no slab allocation may
    /// carry (`GFP_SLAB_BUG_MASK`) are reported and removed, bit 31 among them.
    #[test]
    fn slab_pages_take_only_the_callers_reclaim_and_constraint_bits() {
        // Neither `init_on_*`, whatever the boot says: a cache with `init_on_free` alone
        // marks its allocations with bit 31 itself, and takes it off as its own.
        set_init_on(Some((false, false)));
        let c = Cache::create(&args(c"rslub_test_page_gfp", 64));
        set_init_on(None);
        let c = c.expect("cache");
        let seen = AtomicU32::new(u32::MAX);
        let reported = AtomicU32::new(0);
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            match p {
                Point::PageAlloc { gfp, .. } if cache == id => seen.store(gfp, SeqCst),
                Point::UnexpectedGfp { bad } if cache == id => reported.store(bad, SeqCst),
                _ => {}
            }
            false
        };
        let kept = Gfp::KERNEL.with(Gfp::HARDWALL | Gfp::NOWARN | Gfp::COMP);
        let dropped = Gfp::ACCOUNT | Gfp::ZERO;
        expect_reports(c"rslub_test_page_gfp");
        let _h = install(&hook).expect("hook");
        for (caller, want) in [
            (kept.with(dropped), kept),
            // Reported and removed.
            (kept.with(Gfp::DMA32), kept),
            (kept.with(Gfp::HIGHMEM), kept),
            (kept.with(1 << 30), kept),
            // rslub's own mark for "wipe the free pointer" (`Gfp::WIPE_FREE_PTR`) is no
            // kernel flag: from a caller, reported like any other.
            (kept.with(1 << 31), kept),
        ] {
            seen.store(u32::MAX, SeqCst);
            reported.store(0, SeqCst);
            // An empty cache: the allocation makes a new slab.
            let p = c.alloc(caller).expect("object").as_ptr() as usize;
            assert_eq!(seen.load(SeqCst), want.raw());
            assert_eq!(
                reported.load(SeqCst),
                caller.raw() & !want.with(dropped).raw()
            );
            free(&c, p);
            c.shrink();
            assert_eq!(slabs(&c), 0);
        }
        drop(_h);
        assert!(c.destroy().is_ok());
    }

    /// A failure to allocate slab metadata gives the pages back and fails the allocation
    /// with `ENOMEM`; nothing is left behind.
    #[test]
    fn failed_metadata_allocation_loses_nothing() {
        let c = Cache::create(&args(c"rslub_test_meta_fail", 256)).expect("cache");
        let id = c.id();
        let hook = |cache: usize, p: Point| cache == id && matches!(p, Point::MetaAlloc { .. });
        let r = {
            let _h = install(&hook).expect("hook");
            c.alloc(Gfp::KERNEL).map(|p| p.as_ptr() as usize)
        };
        assert_eq!(r, Err(ENOMEM));
        assert_eq!(slabs(&c), 0);
        let s = c.stats();
        assert_eq!(s.get(Stat::NewSlab), 0);
        assert_eq!(s.get(Stat::AllocFailed), 1);
        // The cache still works.
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        free(&c, p);
        assert!(c.destroy().is_ok());
    }

    /// A bulk allocation that runs out of memory part way gives back every object it
    /// took, reports `ENOMEM`, and leaves no object allocated.
    #[test]
    fn failed_bulk_allocation_rolls_back() {
        let c = Cache::create(&args(c"rslub_test_bulk_fail", 128)).expect("cache");
        let per_slab = c.layout().objects as usize;
        let pages = AtomicU32::new(0);
        let id = c.id();
        // The page allocator gives two slabs, then nothing.
        let hook = |cache: usize, p: Point| {
            cache == id && matches!(p, Point::PageAlloc { .. }) && pages.fetch_add(1, SeqCst) >= 2
        };
        let mut v = KVec::from_elem(core::ptr::null_mut::<u8>(), 3 * per_slab + 1, GFP_KERNEL)
            .expect("memory");
        let r = {
            let _h = install(&hook).expect("hook");
            c.alloc_bulk(Gfp::KERNEL, &mut v)
        };
        assert_eq!(r, Err(ENOMEM));
        assert!(v.iter().all(|p| p.is_null()));
        let s = c.stats();
        assert_eq!(s.get(Stat::NewSlab), 2);
        assert!(s.get(Stat::AllocFailed) >= 1);
        // Everything came back: destruction finds no live object.
        assert!(c.destroy().is_ok());
    }

    /// The first try on an explicit node asks that node only, never sleeps and never
    /// warns, and keeps the caller's accounting.
    #[test]
    fn this_node_try_never_sleeps() {
        let k = Gfp::KERNEL;
        // The opportunistic try on a node: that node only, never sleeping, no warning.
        let t = k.with(Gfp::ACCOUNT).for_this_node_only();
        assert!(t.has(Gfp::THISNODE | Gfp::NOWARN | Gfp::ACCOUNT));
        assert!(!t.may_sleep());
        assert!(!t.has(Gfp::FS));
        assert!(!Gfp::from_raw(kernel::bindings::GFP_ATOMIC)
            .for_this_node_only()
            .has(Gfp::HIGH));
    }

    /// The shrinker (registered at load) gives back the empty slabs a node keeps beyond
    /// `min_partial` partial slabs, at most as many pages as asked, and nothing else.
    #[test]
    fn the_shrinker_gives_back_empty_slabs_beyond_min_partial() {
        assert!(crate::shim::shrinker_registered());
        pin(0);
        let c = Cache::create(&args(c"rslub_test_shrinker", 512)).expect("cache");
        // The node lists' rules: frees put slabs there, not on this CPU's list.
        c.set_cpu_partial(0);
        let (per_slab, order) = (c.layout().objects as usize, c.layout().order);
        // Six slabs' worth; freed with a high `min_partial`, the five that are not the
        // CPU's stay on the partial list, empty.
        c.set_min_partial(10);
        let objs = alloc_n(&c, 6 * per_slab, NO_NODE);
        free_all(&c, &objs);
        let node = crate::shim::numa_mem_id().unsigned_abs();
        assert_eq!(c.node_counts(node).2, 5);
        assert_eq!(c.reclaimable_pages(), 0);
        // With `min_partial` 2, three of them are beyond it; but the classic profile, as
        // 6.12, has no shrinker: they stay.
        c.set_min_partial(2);
        assert_eq!(c.reclaimable_pages(), 0);
        assert_eq!(c.shrink_empty(u64::MAX), 0);
        assert_eq!(c.node_counts(node).2, 5);
        c.set_profile(crate::params::Profile::Tuned);
        c.set_min_partial(2);
        let slab_pages = 1u64 << order;
        assert_eq!(c.reclaimable_pages(), 3 * slab_pages);
        assert!(crate::registry::shrink_count() >= 3 * slab_pages);
        // Asked for one page: one slab goes.
        assert_eq!(c.shrink_empty(1), slab_pages);
        assert_eq!(c.node_counts(node).2, 4);
        assert_eq!(c.shrink_empty(u64::MAX), 2 * slab_pages);
        assert_eq!(c.node_counts(node).2, 2);
        assert_eq!(slabs(&c), 3);
        assert_eq!(c.reclaimable_pages(), 0);
        assert_eq!(c.shrink_empty(u64::MAX), 0);
        assert_eq!(c.stats().get(Stat::ShrinkerPages), 3 * slab_pages);
        // The cache works on.
        let objs = alloc_n(&c, 2 * per_slab, NO_NODE);
        free_all(&c, &objs);
        unpin();
        assert!(c.destroy().is_ok());
    }
}
