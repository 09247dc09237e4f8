// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_back`: a cache made with the kernel's `kmem_cache_create()`,
//! backed by rslub and used through the kernel's own entry points (`kmem_cache_alloc`,
//! `_zalloc`, `_node`, `_lru`, `_bulk`, `kmem_cache_free`, `kfree`, `_free_bulk`,
//! `kfree_bulk`, `ksize`, `krealloc`, `kfree_rcu`), as any kernel user calls them: objects crossing the back/unback
//! boundary, constructor, frees on other CPUs, refusals, and the module held while
//! anything is backed.
//!
//! `make test` loads the suites with the skb caches already backed while the guest sends
//! traffic over loopback (`scripts/test/guest.sh`): each case leaves the backings as it found
//! them (`base`), and counts the module reference only when it made the first one.

use kernel::prelude::*;

#[kunit_tests(rslub_back)]
mod tests {
    use crate::{
        back::{self, KmemCache},
        cache::CacheCore,
        common::{have_two_cpus, pin, unpin},
        gfp::Gfp,
        inject::{self, Point},
        shim,
        test_shim::{
            bulk_count, check_object_size, direct_alloc, direct_alloc_node, direct_count,
            direct_free, direct_kfree, direct_param, direct_sites_patched, direct_state, dr_alloc,
            expect_reports, is_vmalloc, kc_drop_reference, kfree, kfree_bulk, kfree_rcu_head,
            kfree_rcu_headless, kfree_rcu_inner, kfree_rcu_nolock_inner,
            kfree_rcu_nolock_inner_raw_locked, kmalloc, kmem_cache_charge, krealloc, ksize,
            ksize_krealloc_skipped, kvfree, kvmalloc, memmap_hole, module_refcount, msleep,
            node_of, on_slab_page, preempt_count, read_file, set_before_destroy,
            set_usercopy_caught, skip, slot_first, slot_home, slot_of, write_file, HotTracer,
            KernelCache, Memcg, Mempool, SlotHold, Thread, Tick,
        },
        topology,
    };
    use core::sync::atomic::{
        AtomicBool, AtomicI32, AtomicUsize,
        Ordering::{Relaxed, SeqCst},
    };
    use kernel::{bindings, error::code::*, prelude::*, str::CString};

    const SIZE: u32 = 200;
    /// Any node (`NUMA_NO_NODE`, include/linux/numa.h).
    const NUMA_NO_NODE: i32 = -1;

    fn handle(kc: &KernelCache) -> KmemCache {
        // SAFETY: `kc` lives until the end of the test, after every use of the handle.
        unsafe { KmemCache::from_raw(kc.raw()) }
    }

    /// Whether `p` is an rslub object.
    fn rslub_owns(p: usize) -> bool {
        !crate::mm::owner_of(p as *const u8).is_null()
    }

    /// Writes a pattern over a `SIZE`-byte object.
    fn dirty(p: usize) {
        // SAFETY: a live object of `SIZE` bytes owned by the test.
        unsafe { core::ptr::write_bytes(p as *mut u8, 0x6b, SIZE as usize) };
    }

    #[test]
    fn every_entry_point_of_a_backed_cache_goes_to_rslub() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc", SIZE, 0, 0, None).expect("kmem_cache");
        let refs = module_refcount();
        // Allocated by the kernel before backing.
        let before = kc.alloc(Gfp::KERNEL);
        assert!(before != 0 && on_slab_page(before) && !rslub_owns(before));

        back::back(handle(&kc)).expect("back");
        // Held while anything is backed: rmmod is refused.
        assert_eq!(module_refcount(), refs + i32::from(base == 0));
        let a = kc.alloc(Gfp::KERNEL);
        let z = kc.zalloc(Gfp::KERNEL);
        let n = kc.alloc_node(Gfp::KERNEL, 0);
        let l = kc.alloc_lru(Gfp::KERNEL);
        let mut bulk = [0usize; 24];
        assert!(kc.alloc_bulk(Gfp::KERNEL, &mut bulk));
        for p in Iterator::chain([a, z, n, l].iter(), bulk.iter()) {
            assert!(*p != 0 && on_slab_page(*p) && rslub_owns(*p));
        }
        // SAFETY: a live object of `SIZE` bytes.
        let zb = unsafe { core::slice::from_raw_parts(z as *const u8, SIZE as usize) };
        assert!(zb.iter().all(|&b| b == 0));
        for p in [a, z, n, l] {
            dirty(p);
        }
        // Freed through every entry point; the kernel's object goes back to the kernel.
        // SAFETY: each object was allocated from `kc` above and is freed once.
        unsafe {
            kc.free(a);
            kfree(z);
            kc.free(n);
            kfree(l);
            kc.free(before);
            kc.free_bulk(&mut bulk[..12]);
            kfree_bulk(&mut bulk[12..]);
        }
        // Everything came back: unbacking finds no live object and drains at once.
        let last = kc.alloc(Gfp::KERNEL);
        assert!(rslub_owns(last));
        assert_eq!(back::unback(handle(&kc)), Ok(1));
        // Allocations go to the kernel at once; the rslub object is still freed to rslub.
        let after = kc.alloc(Gfp::KERNEL);
        assert!(on_slab_page(after) && !rslub_owns(after));
        assert_eq!(back::release_drained(), 1);
        // SAFETY: allocated above, freed once each.
        unsafe {
            kc.free(last);
            kc.free(after);
        }
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
        assert_eq!(module_refcount(), refs);
    }

    /// `kfree`, `kmem_cache_free`, `kmem_cache_alloc` and `kmem_cache_alloc_node`, the
    /// functions called most, are hooked by ftrace direct calls where the kernel has them (jmp mode) and `direct=` is
    /// on, the default: their call sites then jump straight to rslub's trampolines. With
    /// `direct=0` (`.ci/run`'s one-node stage runs every suite so) the handler hooks them,
    /// as every other function. Either way they route a backed cache's objects to rslub.
    #[test]
    fn the_hottest_functions_are_hooked_by_direct_calls_unless_told_not_to() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_direct", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let want = direct_param() && direct_state().is_some();
        assert_eq!(direct_state().unwrap_or(false), want);
        assert_eq!(direct_sites_patched(), want);
        let p = kc.alloc(Gfp::KERNEL);
        let q = kc.alloc(Gfp::KERNEL);
        let n = kc.alloc_node(Gfp::KERNEL, NUMA_NO_NODE);
        assert!(rslub_owns(p) && rslub_owns(q) && rslub_owns(n));
        // SAFETY: allocated from `kc` above, freed once each.
        unsafe {
            kc.free(p);
            kfree(q);
            kc.free(n);
        }
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// Each trampoline, called as the function it stands for, does what that function does
    /// for every kind of address it can be given (where the kernel has no direct calls, the
    /// functions themselves are called): a backed cache's allocation comes from rslub, an
    /// unbacked one's from the kernel; rslub objects are freed to rslub (unbacking finds
    /// none live; mm/slub.c would free them into the shadow), the kernel's go to the kernel
    /// (rslub would fault on them): on slab pages (small objects, and kmalloc-8k's, most of
    /// which start on a tail page of their slab), on a large kmalloc's pages, NULL and
    /// `ZERO_SIZE_PTR`. Every free and every allocation, of the backed cache and of the
    /// unbacked one, is decided by the trampoline alone: no question to C (the backed
    /// cache's slot is handed on).
    #[test]
    fn the_trampolines_send_every_object_where_it_belongs() {
        let base = back::backings();
        let backed =
            KernelCache::create(c"rslub_test_kc_tramp", SIZE, 0, 0, None).expect("kmem_cache");
        let plain = KernelCache::create(c"rslub_test_kc_tramp_plain", SIZE, 0, 0, None)
            .expect("kmem_cache");
        back::back(handle(&backed)).expect("back");
        let small = kmalloc(64, Gfp::KERNEL);
        let mut big = [0usize; 8];
        for b in big.iter_mut() {
            *b = kmalloc(8192, Gfp::KERNEL);
            assert!(*b != 0 && on_slab_page(*b));
        }
        let large = kmalloc(4 * bindings::PAGE_SIZE, Gfp::KERNEL);
        assert!(small != 0 && large != 0 && !on_slab_page(large) && !rslub_owns(large));

        // The kernel's: the quick tests decide.
        direct_count(true);
        let theirs = direct_alloc(&plain, Gfp::KERNEL);
        // The last node with memory (a node without any gives its nearest one's).
        let last = topology::online_nodes()
            .filter(|&n| shim::node_has_memory(n as i32))
            .last()
            .expect("a node with memory");
        let theirs_node = direct_alloc_node(&plain, Gfp::KERNEL, last as i32);
        for t in [theirs, theirs_node] {
            assert!(t != 0 && on_slab_page(t) && !rslub_owns(t));
        }
        assert_eq!(node_of(theirs_node), last);
        // SAFETY: each object was allocated above and is freed once, by the function (as
        // its trampoline) that frees its kind; kfree() of NULL and ZERO_SIZE_PTR does nothing.
        unsafe {
            direct_free(&plain, theirs);
            direct_free(&plain, theirs_node);
            direct_kfree(small);
            for b in big {
                direct_kfree(b);
            }
            direct_kfree(0);
            direct_kfree(16);
        }
        let quick = direct_count(true);

        // rslub's, the slot handed on.
        // kmem_cache_alloc_node's on that node (the node register is handed on with the
        // slot: the objects are that node's).
        let mut mine = [0usize; 16];
        for (i, p) in mine.iter_mut().enumerate() {
            *p = if i % 2 == 0 {
                direct_alloc(&backed, Gfp::KERNEL)
            } else {
                let q = direct_alloc_node(&backed, Gfp::KERNEL, last as i32);
                assert_eq!(node_of(q), last);
                q
            };
            assert!(*p != 0 && on_slab_page(*p) && rslub_owns(*p));
        }
        let asked = direct_count(true);
        // SAFETY: as above.
        unsafe {
            for p in &mine[..8] {
                direct_free(&backed, *p);
            }
            for p in &mine[8..] {
                direct_kfree(*p);
            }
            direct_kfree(large);
        }
        let frees = direct_count(false);
        if direct_state().is_some() {
            assert_eq!((quick, asked, frees), (0, 0, 0));
        }
        assert_eq!(back::unback(handle(&backed)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// An allocation trampoline checks, with preemption on, that a slot backs its cache,
    /// and jumps to the fast path of the slot's rslub cache, which uses it without another
    /// look (`rust/back/fast.rs`): unbacking waits for a task between the two, which may
    /// be preempted there but never sleeps of its own accord (RCU Tasks). A thread with an
    /// object on its CPU's free list stalls half a second there, busy with preemption on
    /// (`rslub_test_dr_alloc()`); unbacking the cache meanwhile returns only after that
    /// allocation, which came from rslub and is live at the unbacking. (With an RCU grace
    /// period alone, the unbacking returns while the thread stalls, having taken the
    /// slot's rslub cache from under it: the fast path then oopses on its NULL.) Where a
    /// sanitizer sends every allocation to the full path (the debug kernel's KASAN), the
    /// fast path leaves at once for its miss, which no longer uses the slot (it may
    /// sleep, and the unbacking need not wait for it), finds the cache unbacked, and the
    /// kernel serves.
    #[test]
    fn unbacking_waits_for_an_allocation_between_its_check_and_its_fast_path() {
        const NONE: usize = usize::MAX;
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_stall", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let slot = slot_of(&kc);
        assert!(slot != 0);
        let checked = AtomicBool::new(false);
        let got = AtomicUsize::new(NONE);
        let user = || {
            // An object on this CPU's free list, for the fast path to take (a miss would
            // look the cache up again, and find it unbacked).
            pin(0);
            let warm = kc.alloc(Gfp::KERNEL);
            assert!(rslub_owns(warm));
            // SAFETY: allocated above, freed once.
            unsafe { kc.free(warm) };
            let r = dr_alloc(&kc, Gfp::KERNEL, slot, 500_000, &checked);
            got.store(r.unwrap_or(NONE - 1), SeqCst);
        };
        // SAFETY: `user` outlives the thread, joined below.
        let t = unsafe { Thread::start_unbound(&user) }.expect("thread");
        while !checked.load(SeqCst) && got.load(SeqCst) == NONE {
            msleep(1);
        }
        if !checked.load(SeqCst) {
            drop(t);
            assert_eq!(got.load(SeqCst), NONE - 1);
            skip(c"no direct calls (not built, or direct=0)");
            assert_eq!(back::unback(handle(&kc)), Ok(0));
            return;
        }
        let left = back::unback(handle(&kc));
        let in_time = got.load(SeqCst) != NONE;
        drop(t);
        let served = got.load(SeqCst);
        let fast = !crate::sanitize::ON;
        // The fast path's allocation ended before the unbacking did.
        assert!(in_time || !fast);
        assert!(served != 0 && served != NONE && rslub_owns(served) == fast);
        assert_eq!(left, Ok(u64::from(fast)));
        // SAFETY: allocated above, freed once.
        unsafe { kc.free(served) };
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// The replacements' fast path (`rust/back/fast.rs`) zeroes what
    /// `__GFP_ZERO` asks, through `kmem_cache_alloc()`, `_node()` and `_lru()`: an object
    /// dirtied and freed comes back (the CPU's free list is last in, first out, and the
    /// task stays on one CPU) zeroed. An object above `FAST_ZERO_MAX` takes the miss, and
    /// comes back zeroed too.
    #[test]
    fn a_zeroing_allocation_on_the_fast_path_comes_back_zeroed() {
        let base = back::backings();
        for (name, size) in [
            (c"rslub_test_kc_zero", SIZE),
            (c"rslub_test_kc_zero_big", crate::cache::FAST_ZERO_MAX + 8),
        ] {
            let kc = KernelCache::create(name, size, 0, 0, None).expect("kmem_cache");
            back::back(handle(&kc)).expect("back");
            pin(0);
            let mut reused = 0;
            for round in 0..48 {
                let a = kc.alloc(Gfp::KERNEL);
                assert!(a != 0 && rslub_owns(a));
                // SAFETY: a live object of `size` bytes owned by the test.
                unsafe { core::ptr::write_bytes(a as *mut u8, 0x6b, size as usize) };
                // SAFETY: allocated above, freed once.
                unsafe { kc.free(a) };
                let zero = Gfp::KERNEL.with(Gfp::ZERO);
                let z = match round % 3 {
                    0 => kc.zalloc(Gfp::KERNEL),
                    1 => kc.alloc_node(zero, NUMA_NO_NODE),
                    _ => kc.alloc_lru(zero),
                };
                assert!(z != 0 && rslub_owns(z));
                reused += usize::from(z == a);
                // SAFETY: a live object of `size` bytes.
                let zb = unsafe { core::slice::from_raw_parts(z as *const u8, size as usize) };
                assert!(zb.iter().all(|&b| b == 0));
                // SAFETY: allocated above, freed once.
                unsafe { kc.free(z) };
            }
            unpin();
            assert_eq!(reused, 48);
            assert_eq!(back::unback(handle(&kc)), Ok(0));
        }
        assert_eq!(back::backings(), base);
    }

    /// A fast path that misses leaves for the full path (`rslub_dr_alloc*_miss()`): with
    /// interrupts off and `GFP_NOWAIT`, through refills of the CPU's free list (more
    /// objects than two slabs hold), the preemption count after each allocation is what
    /// it was before, and each object is rslub's.
    #[test]
    fn a_missed_fast_path_leaves_preemption_as_it_found_it() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_miss", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let mut objs = KVec::with_capacity(96, GFP_KERNEL).expect("room");
        let count = preempt_count();
        {
            let _irq = shim::IrqDisabled::new();
            let inside = preempt_count();
            for round in 0..96 {
                let p = match round % 3 {
                    0 => kc.alloc(Gfp::NOWAIT),
                    1 => kc.alloc_node(Gfp::NOWAIT, NUMA_NO_NODE),
                    _ => kc.alloc_lru(Gfp::NOWAIT),
                };
                assert_eq!(preempt_count(), inside);
                if p != 0 {
                    objs.push(p, GFP_ATOMIC).expect("room");
                }
            }
        }
        assert_eq!(preempt_count(), count);
        assert!(objs.len() == 96 && objs.iter().all(|&p| rslub_owns(p)));
        for p in objs {
            // SAFETY: allocated above, freed once.
            unsafe { kc.free(p) };
        }
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// A backed cache whose slot is not at its first place in the index (its hash's place
    /// holds another backed cache's slot) is found by the trampoline's probe, as the
    /// handler's lookup finds it, and served by rslub without a question to C; an unbacked
    /// cache goes to the kernel, also without one.
    ///
    /// Caches are made, not backed, until two share a first place (`slot_home`); only
    /// those two are backed, the first before the second, whose place is then taken.
    /// Backing and unbacking each of up to 256 caches until one landed past its place
    /// took 42 s on the default kernel and up to 144 s on the debug one (every unbacking
    /// waits for RCU Tasks).
    #[test]
    fn the_trampoline_probes_past_another_caches_slot() {
        let base = back::backings();
        let mut kcs: KVec<KernelCache> = KVec::new();
        let mut twins = None;
        // A cache or a backing that cannot be made (memory, on the debug kernel) ends the
        // search with a report, not a panic: what was backed is unbacked below, so that
        // the cases after this one start from nothing.
        let mut failed = None;
        for i in 0..256 {
            let name = CString::try_from_fmt(fmt!("rslub_test_kc_probe_{i}")).expect("name");
            let kc = match KernelCache::create(&name, SIZE, 0, 0, None) {
                Ok(kc) => kc,
                Err(e) => {
                    failed = Some(("kmem_cache_create", i, e));
                    break;
                }
            };
            let home = slot_home(&kc);
            let twin = kcs.iter().position(|k| slot_home(k) == home);
            kcs.push(kc, GFP_KERNEL).expect("memory");
            if let Some(j) = twin {
                twins = Some((j, i));
                break;
            }
        }
        let mut backed = KVec::new();
        let mut found = None;
        if let Some((j, i)) = twins {
            for k in [j, i] {
                if let Err(e) = back::back(handle(&kcs[k])) {
                    failed = Some(("back", k, e));
                    break;
                }
                backed.push(k, GFP_KERNEL).expect("memory");
            }
            if backed.len() == 2 && !slot_first(&kcs[i]) {
                found = Some(i);
            }
        }
        let mut served = (true, true, true);
        if let Some(i) = found {
            let plain = KernelCache::create(c"rslub_test_kc_probe_plain", SIZE, 0, 0, None)
                .expect("kmem_cache");
            direct_count(true);
            let mine = direct_alloc(&kcs[i], Gfp::KERNEL);
            let theirs = direct_alloc(&plain, Gfp::KERNEL);
            let asked = direct_count(false);
            let owners = (
                mine != 0 && rslub_owns(mine),
                theirs != 0 && !rslub_owns(theirs),
            );
            // SAFETY: allocated above, each freed once by its cache.
            unsafe {
                if mine != 0 {
                    kcs[i].free(mine);
                }
                if theirs != 0 {
                    plain.free(theirs);
                }
            }
            served = (owners.0, owners.1, direct_state().is_none() || asked == 0);
        }
        for &k in backed.iter() {
            assert_eq!(back::unback(handle(&kcs[k])), Ok(0));
        }
        assert_eq!(back::backings(), base);
        if let Some((what, i, e)) = failed {
            pr_err!("probe test: {what} of cache {i} failed: {e:?}\n");
        }
        // Up to 256 caches in 1024 places: were the places random, the chance that no two
        // share one would be below e^-31 (two usually do within fifty).
        assert!(failed.is_none() && found.is_some());
        // The backed cache's object from rslub, the other's from the kernel, neither by a
        // question to C where the direct calls are on.
        assert_eq!(served, (true, true, true));
    }

    /// A replacement holds its slot with a per-CPU count, which it may drop on another
    /// CPU than it took it on (it was preempted and moved meanwhile): unbacking waits for
    /// it all the same, and ends once it lets go.
    #[test]
    fn unbacking_waits_for_a_holder_that_moved_to_another_cpu() {
        if !have_two_cpus() {
            return;
        }
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_moved", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        pin(0);
        let hold = SlotHold::new(&kc).expect("backed");
        pin(1);
        let done = AtomicBool::new(false);
        let unbacked = AtomicI32::new(-1);
        let unbacker = || {
            let r = back::unback(handle(&kc));
            unbacked.store(r.map_or(-1, |n| n as i32), SeqCst);
            done.store(true, SeqCst);
        };
        // SAFETY: `unbacker` outlives the thread, joined below.
        let t = unsafe { Thread::start_unbound(&unbacker) }.expect("thread");
        msleep(100);
        assert!(!done.load(SeqCst));
        drop(hold);
        drop(t);
        unpin();
        assert!(done.load(SeqCst));
        assert_eq!(unbacked.load(SeqCst), 0);
        assert_eq!(back::backings(), base);
    }

    /// Every other hooked entry point, called as the kernel's users call it (through its
    /// trampoline where the direct calls are on, the handler else): the lru and bulk
    /// allocations of a backed cache come from rslub; `ksize()`, `krealloc()`, `kvfree()`,
    /// `kfree_rcu()` and its nolock form, `kmem_cache_free_bulk()` and `kfree_bulk()` send
    /// rslub's objects to rslub and the kernel's to the kernel, for every kind of address:
    /// an object on a slab's head page, objects on its tail pages (kmalloc-8k's: four to an
    /// order-3 slab), a large kmalloc, a vmalloc address (kvfree), NULL and ZERO_SIZE_PTR,
    /// and bulk arrays that mix runs of both (the kernel's runs go to the kernel's bulk
    /// free in one call). Unbacking finds no rslub object live; a kernel object given to
    /// rslub would fault or be refused, an rslub object given to the kernel would warn.
    #[test]
    fn every_entry_point_sends_each_kind_of_object_where_it_belongs() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_entries", SIZE, 0, 0, None).expect("kmem_cache");
        // The kernel's objects of the cache, from before it is backed.
        let mut theirs = [0usize; 4];
        for t in theirs.iter_mut() {
            *t = kc.alloc(Gfp::KERNEL);
            assert!(*t != 0 && !rslub_owns(*t));
        }
        back::back(handle(&kc)).expect("back");
        assert_eq!(
            direct_sites_patched(),
            direct_param() && direct_state().is_some()
        );
        let lru = kc.alloc_lru(Gfp::KERNEL);
        let mut mine = [0usize; 8];
        assert!(kc.alloc_bulk(Gfp::KERNEL, &mut mine));
        assert!(rslub_owns(lru) && mine.iter().all(|&p| rslub_owns(p)));
        let small = [kmalloc(64, Gfp::KERNEL), kmalloc(64, Gfp::KERNEL)];
        let mut big = [0usize; 8];
        for b in big.iter_mut() {
            *b = kmalloc(8192, Gfp::KERNEL);
            assert!(*b != 0 && on_slab_page(*b));
        }
        // At least one of eight 8 KiB objects lies on a tail page of its slab.
        assert!(big.iter().any(|&b| b % (8 * 4096) != 0));
        let large = kmalloc(4 * bindings::PAGE_SIZE, Gfp::KERNEL);
        // Above the largest block of pages (MAX_PAGE_ORDER's 4 MiB): vmalloc's.
        let vm = kvmalloc(8 << 20, Gfp::KERNEL);
        assert!(small
            .iter()
            .all(|&p| p != 0 && on_slab_page(p) && !rslub_owns(p)));
        assert!(large != 0 && !on_slab_page(large) && vm != 0 && is_vmalloc(vm));

        // SAFETY: every object is live until it is given to exactly one function that
        // frees it (or to krealloc(), which keeps it where it is, as asserted).
        unsafe {
            assert!(ksize(lru) >= SIZE as usize);
            assert_eq!(ksize(small[0]), 64);
            assert!(big.iter().all(|&b| ksize(b) == 8192));
            assert_eq!(ksize(large), 4 * bindings::PAGE_SIZE);
            assert_eq!((ksize(0), ksize(16)), (0, 0));
            assert_eq!(krealloc(lru, SIZE as usize / 2, Gfp::KERNEL), lru);
            assert_eq!(krealloc(small[0], 32, Gfp::KERNEL), small[0]);
            assert_eq!(krealloc(big[1], 8000, Gfp::KERNEL), big[1]);
            for p in [lru, small[0], big[0], large, vm, 0, 16] {
                kvfree(p);
            }
            // SIZE and 64 bytes hold the heads.
            kfree_rcu_inner(mine[0]);
            kfree_rcu_inner(small[1]);
            kfree_rcu_nolock_inner(mine[1]);
            kfree_rcu_nolock_inner(big[1]);
            // Runs of both kinds, of the cache's own objects.
            let mut mixed = [theirs[0], mine[2], mine[3], theirs[1], theirs[2], mine[4]];
            kc.free_bulk(&mut mixed);
            // kfree_bulk(): any slab's objects, the large kmalloc's kind too.
            let large2 = kmalloc(2 * bindings::PAGE_SIZE, Gfp::KERNEL);
            let mut any = [mine[5], big[2], big[3], mine[6], theirs[3], mine[7], large2];
            kfree_bulk(&mut any);
            let mut rest = [big[4], big[5], big[6], big[7]];
            kfree_bulk(&mut rest);
        }
        // Unbacking waits for what rslub holds for kfree_rcu(): nothing is left.
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// `kmem_cache_free_bulk()` given a cache none of whose objects is rslub's goes to the
    /// kernel without a look at each object (`rslub_bulk_caches[]`): a cache counts there
    /// from its backing until its rslub cache has drained, so rslub's objects of a cache
    /// unbacked meanwhile, given in bulk with the kernel's, still reach rslub.
    #[test]
    fn bulk_frees_of_a_draining_cache_still_reach_rslub() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_bulk_drain", SIZE, 0, 0, None).expect("kmem_cache");
        // Another cache of the same hash may count already.
        let before = bulk_count(&kc);
        back::back(handle(&kc)).expect("back");
        // What is seen is checked at the end, once the cache is unbacked and drained: a
        // failed assertion in between would leave it backed for the cases after this one.
        let backed = bulk_count(&kc);
        let mut mine = [0usize; 8];
        let bulk = kc.alloc_bulk(Gfp::KERNEL, &mut mine);
        if !bulk {
            // Nothing allocated (what `mine` holds is not live): undo, then fail.
            let _ = back::unback(handle(&kc));
            let _ = back::release_drained();
            assert!(bulk);
        }
        let owned = mine.iter().all(|&p| rslub_owns(p));
        let live = back::unback(handle(&kc));
        // Draining: its bulk frees still look at their objects.
        let draining = bulk_count(&kc);
        let theirs = [kc.alloc(Gfp::KERNEL), kc.alloc(Gfp::KERNEL)];
        let kernels = theirs.iter().all(|&p| p != 0 && !rslub_owns(p));
        let mut mixed = [
            mine[0], theirs[0], mine[1], mine[2], mine[3], theirs[1], mine[4], mine[5],
        ];
        // SAFETY: Live objects of `kc`, each freed once (rslub's by this call or below).
        unsafe { kc.free_bulk(&mut mixed) };
        let half = back::release_drained();
        let still = bulk_count(&kc);
        // SAFETY: As above.
        unsafe { kc.free_bulk(&mut mine[6..]) };
        // Nothing left: destroyed, and no longer counted.
        let done = back::release_drained();
        assert_eq!(
            (backed, draining, still),
            (before + 1, before + 1, before + 1)
        );
        assert!(owned && kernels);
        assert_eq!((live, half, done), (Ok(8), 1, 0));
        assert_eq!(bulk_count(&kc), before);
        assert_eq!(back::backings(), base);
    }

    /// Where a tracer shares their call sites (ftrace's caller then runs it, and enters the
    /// trampoline or the handler after it), the hottest functions still send a backed
    /// cache's objects to rslub and the kernel's to the kernel.
    #[test]
    fn the_hottest_functions_route_objects_with_a_tracer_on_them() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_traced", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let tracer = HotTracer::new().expect("a tracer on kfree and its kin");
        let before = tracer.calls();
        let p = kc.alloc(Gfp::KERNEL);
        let q = kc.alloc(Gfp::KERNEL);
        let n = kc.alloc_node(Gfp::KERNEL, NUMA_NO_NODE);
        let k = kmalloc(64, Gfp::KERNEL);
        assert!(rslub_owns(p) && rslub_owns(q) && rslub_owns(n) && on_slab_page(k));
        // SAFETY: allocated above, freed once each.
        unsafe {
            kc.free(p);
            kfree(q);
            kc.free(n);
            kfree(k);
        }
        // This task's seven calls at least (the tracer sees every task's).
        assert!(tracer.calls() - before >= 7);
        drop(tracer);
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// Whole-kernel mode backs hundreds of caches: the table takes 200 (it took 16), each
    /// is served by its own rslub cache, and unbacking every other one (each unbacking
    /// rebuilds the handler's index) leaves the others found and served, the unbacked
    /// ones the kernel's at once. 200 with `full` (`make test FULL=1`, CI: 15 s under
    /// TCG), 40 otherwise (still more than the old table's 16).
    #[test]
    fn hundreds_of_caches_are_backed_and_each_served_by_its_own() {
        let n: usize = if crate::module_parameters::full.value() {
            200
        } else {
            40
        };
        let base = back::backings();
        let mut caches = KVec::with_capacity(n, GFP_KERNEL).expect("vec");
        for i in 0..n {
            // Names made at run time (kmem_cache_create() copies them).
            let name = CString::try_from_fmt(fmt!("rslub_test_kc_many_{i}")).expect("name");
            let kc = KernelCache::create(&name, SIZE, 0, 0, None).expect("kmem_cache");
            caches.push((name, kc), GFP_KERNEL).expect("vec");
        }
        for (_, kc) in caches.iter() {
            back::back(handle(kc)).expect("back");
        }
        assert_eq!(back::backings(), base + n);
        // Each object comes from the rslub cache of its own kernel cache.
        let served = |name: &CStr, kc: &KernelCache, by_rslub: bool| {
            let p = kc.alloc(Gfp::KERNEL);
            assert!(p != 0);
            let owner = crate::mm::owner_of(p as *const u8).cast::<CacheCore>();
            assert_eq!(!owner.is_null(), by_rslub);
            if by_rslub {
                // SAFETY: the cache of a live object, which lives as long as it.
                assert_eq!(unsafe { &*owner }.name(), name);
            }
            // SAFETY: allocated just above, freed once.
            unsafe { kc.free(p) };
        };
        for (name, kc) in caches.iter() {
            served(name, kc, true);
        }
        for (_, kc) in caches.iter().step_by(2) {
            assert_eq!(back::unback(handle(kc)), Ok(0));
        }
        for (i, (name, kc)) in caches.iter().enumerate() {
            served(name, kc, i % 2 == 1);
        }
        for (_, kc) in caches.iter().skip(1).step_by(2) {
            assert_eq!(back::unback(handle(kc)), Ok(0));
        }
        // Nothing was live: each rslub cache went at its unbacking.
        assert_eq!(back::backings(), base);
        for (name, kc) in caches.iter() {
            served(name, kc, false);
        }
    }

    /// With memory cgroups, an allocation charged to one (`__GFP_ACCOUNT`) from a backed
    /// cache is the kernel's, which charges it (rslub cannot: `obj_cgroup` charging is not
    /// exported); the cache's other allocations are rslub's. `kmem_cache_charge()` of an
    /// rslub object succeeds, charging nothing, where the kernel's function would read a
    /// struct slab the object has not. The cgroup is the guest's `/rslub_test`
    /// (`scripts/test/guest.sh`), entered with `set_active_memcg()`.
    #[test]
    fn charged_allocations_of_a_backed_cache_go_to_the_kernel() {
        const OBJ: u32 = 512;
        const N: usize = 1024;
        if !cfg!(CONFIG_MEMCG) {
            skip(c"no CONFIG_MEMCG: nothing is charged");
            return;
        }
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_memcg", OBJ, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let cg = Memcg::enter(c"/rslub_test").expect("memory cgroup /rslub_test");
        pin(0);
        let mut charged = KVec::with_capacity(N, GFP_KERNEL).expect("vector");
        let before = cg.usage();
        for _ in 0..N {
            let p = kc.alloc(Gfp::KERNEL.with(Gfp::ACCOUNT));
            assert!(p != 0 && on_slab_page(p) && !rslub_owns(p));
            charged.push(p, GFP_KERNEL).expect("room reserved");
        }
        // Charged in batches of pages: at most a batch was charged ahead before.
        let grown = cg.usage().saturating_sub(before);
        let plain = kc.alloc(Gfp::KERNEL);
        assert!(plain != 0 && rslub_owns(plain));
        // SAFETY: a live object of `kc`.
        assert!(unsafe { kmem_cache_charge(plain, Gfp::KERNEL) });
        unpin();
        drop(cg);
        pr_info!("{N} charged objects of {OBJ} bytes: the cgroup grew by {grown} bytes\n");
        assert!(grown >= N * OBJ as usize / 2);
        // SAFETY: allocated above, freed once each.
        unsafe {
            for p in charged.iter() {
                kc.free(*p);
            }
            kc.free(plain);
        }
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// Hardened usercopy violations caught on rslub objects.
    static USERCOPY_CAUGHT: AtomicUsize = AtomicUsize::new(0);

    /// # Safety
    ///
    /// None: only counts.
    unsafe extern "C" fn usercopy_caught() {
        USERCOPY_CAUGHT.fetch_add(1, SeqCst);
    }

    /// With `CONFIG_HARDENED_USERCOPY`, the kernel checks a copy to or from user space
    /// against the object and the usercopy window of a slab page's cache; while rslub's
    /// hooks are registered rslub checks the copies of its objects itself
    /// (`__check_object_size()`), and reports a copy that leaves the object or its
    /// cache's window as the kernel does (then BUGs; here a test hook counts instead). An
    /// address of the direct map's region with no memmap behind it is let through, as the
    /// kernel lets through what is not `virt_addr_valid()`, without a fault.
    #[test]
    fn usercopy_outside_an_object_or_its_window_is_caught() {
        if !cfg!(CONFIG_HARDENED_USERCOPY) {
            skip(c"no CONFIG_HARDENED_USERCOPY: copies are not checked");
            return;
        }
        let base = back::backings();
        let kc = KernelCache::create_usercopy(c"rslub_test_kc_usercopy", SIZE, 16, 64)
            .expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let p = kc.alloc(Gfp::KERNEL);
        assert!(p != 0 && rslub_owns(p));
        expect_reports(c"rslub_test_kc_usercopy");
        USERCOPY_CAUGHT.store(0, SeqCst);
        set_usercopy_caught(Some(usercopy_caught));
        // Inside the window: allowed, either way.
        check_object_size(p + 16, 64, true);
        check_object_size(p + 40, 40, false);
        let hole = memmap_hole();
        assert!(hole != 0);
        check_object_size(hole, 8, true);
        assert_eq!(USERCOPY_CAUGHT.load(SeqCst), 0);
        // One byte past the window; before it; the whole object (past the window); and
        // an overrun into the next object.
        check_object_size(p + 16, 65, true);
        check_object_size(p + 8, 16, false);
        check_object_size(p, SIZE as usize, true);
        check_object_size(p + 16, 2 * SIZE as usize, false);
        set_usercopy_caught(None);
        assert_eq!(USERCOPY_CAUGHT.load(SeqCst), 4);
        // SAFETY: allocated above, freed once.
        unsafe { kc.free(p) };
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// The module's references when the kernel's `kmem_cache_destroy()` was about to run.
    static REFS_IN_DESTROY: AtomicI32 = AtomicI32::new(-1);

    /// # Safety
    ///
    /// None: only reads the module's reference count.
    unsafe extern "C" fn record_refs(_: *mut bindings::kmem_cache) {
        REFS_IN_DESTROY.store(module_refcount(), Relaxed);
    }

    /// Destroying a backed cache through `kmem_cache_destroy()` unbacks it first, which
    /// may remove the hooks and drop the module reference they held (the last one, when
    /// no other cache is backed); the replacement then sleeps in the kernel's destroy, in
    /// module text. It must hold the module itself until that returns.
    #[test]
    fn destroying_a_backed_cache_holds_the_module_until_the_kernel_is_done() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_destroy", SIZE, 0, 0, None).expect("kmem_cache");
        let refs = module_refcount();
        back::back(handle(&kc)).expect("back");
        REFS_IN_DESTROY.store(-1, Relaxed);
        set_before_destroy(Some(record_refs));
        drop(kc);
        set_before_destroy(None);
        // Unbacked (the hooks' reference gone if this was the only backing), and one
        // reference of the replacement's own.
        assert_eq!(REFS_IN_DESTROY.load(Relaxed), refs + 1);
        assert_eq!(back::backings(), base);
        assert_eq!(module_refcount(), refs);
    }

    /// A merged cache has one reference per creator (slab merging, the default of
    /// distribution kernels), and the kernel frees it only with the last: one creator's
    /// `kmem_cache_destroy()` leaves it backed for the others, the last one unbacks it.
    #[test]
    fn destroying_one_alias_of_a_merged_cache_keeps_it_backed() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_alias", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        kc.add_reference();
        let p = kc.alloc(Gfp::KERNEL);
        assert!(p != 0 && rslub_owns(p));
        // SAFETY: the reference taken above.
        unsafe { kc.destroy_reference() };
        // Still backed: the other creator allocates from rslub.
        assert_eq!(back::backings(), base + 1);
        let q = kc.alloc(Gfp::KERNEL);
        assert!(q != 0 && rslub_owns(q));
        // SAFETY: allocated above, freed once each.
        unsafe {
            kc.free(p);
            kc.free(q);
        }
        // The last reference: unbacked (nothing left to drain), then freed by the kernel.
        drop(kc);
        assert_eq!(back::backings(), base);
    }

    /// A merged cache's alias destroyed while already inside the kernel's
    /// `kmem_cache_destroy()` when the cache got backed is not seen by rslub: the last
    /// destroy through rslub reads two references and leaves the cache backed, and then
    /// the kernel destroys it. Its struct stays allocated (held) until rslub unbacks it,
    /// so that a new cache is not made in it and served by the old rslub cache; the back
    /// file says `destroyed`, and `drain` unbacks it.
    #[test]
    fn a_cache_destroyed_behind_unbacking_is_held_until_drained() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_behind", SIZE, 0, 0, None).expect("kmem_cache");
        kc.add_reference();
        back::back(handle(&kc)).expect("back");
        // The alias's reference goes once rslub has read two (and so left it backed).
        set_before_destroy(Some(kc_drop_reference));
        let old = kc.into_raw();
        // SAFETY: from `into_raw()` above; the only value made from it.
        drop(unsafe { KernelCache::from_raw(old) });
        set_before_destroy(None);
        // The kernel makes a new cache in the struct it freed last, if it was freed.
        let new =
            KernelCache::create(c"rslub_test_kc_behind2", SIZE, 0, 0, None).expect("kmem_cache");
        if new.raw().as_ptr() as usize == old {
            pr_info!("the new cache reused the destroyed one's struct\n");
        }
        assert!(new.raw().as_ptr() as usize != old);
        let p = new.alloc(Gfp::KERNEL);
        assert!(p != 0 && !rslub_owns(p));
        // SAFETY: allocated above, freed once.
        unsafe { new.free(p) };
        let mut buf = [0u8; 512];
        let n = read_file(c"rslub_kunit/back", &mut buf).expect("back file");
        let shown = core::str::from_utf8(&buf[..n]).expect("text");
        assert!(shown
            .lines()
            .any(|l| l.starts_with("rslub_test_kc_behind destroyed alloc ")));
        // The drain says so: "rslub_test_kc_behind was destroyed while backed".
        expect_reports(c"rslub_test_kc_behind");
        assert_eq!(write_file(c"rslub_kunit/back", b"drain"), Ok(5));
        assert_eq!(back::backings(), base);
    }

    /// A free of an rslub object reaches rslub even when the hook cannot take ftrace's
    /// recursion protection (another tracer's handler freeing in the same context): the
    /// kernel's `kmem_cache_free()` must never get an object of rslub's, which it cannot
    /// free (it warns that the object is not on a slab page, and leaks it).
    #[test]
    fn a_free_in_ftrace_recursion_still_reaches_rslub() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_recursion", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let p = kc.alloc(Gfp::KERNEL);
        assert!(p != 0 && rslub_owns(p));
        // SAFETY: `p` was allocated from `kc` above and is freed once.
        assert!(unsafe { kc.free_in_recursion(p) });
        // Freed to rslub: unbacking finds no live object.
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// Where ftrace skips rslub's handler (a tracer shares the call site, and calls it
    /// again from within its own handler), the kernel's `ksize()` and `krealloc()` run on
    /// an rslub object: they read its slab page (the shadow), so `ksize()` is the object's
    /// size and a `krealloc()` that fits keeps the object where it is, intact and
    /// rslub's, as SLUB's does. (They took a page's size when rslub's slabs were plain
    /// pages: `kfree_sensitive()` zeroed 4 KiB across an object's neighbours.)
    #[test]
    fn ksize_and_krealloc_where_ftrace_skips_the_hook_read_the_object_size() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_skipped", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let [p, q] = core::array::from_fn(|_| kc.alloc(Gfp::KERNEL));
        assert!(p != 0 && q != 0 && rslub_owns(p) && rslub_owns(q));
        dirty(p);
        // SAFETY: `q` is live and not used by anything else: filled, then read back.
        unsafe { core::ptr::write_bytes(q as *mut u8, 0x5a, SIZE as usize) };
        // SAFETY: a live object of `kc`; krealloc() to less than its size keeps it (and
        // under KASAN marks the rest of it as red zone, which nothing reads here).
        let (ks, re) = unsafe { ksize_krealloc_skipped(p, SIZE as usize / 2) }.expect("a tracer");
        assert_eq!((ks, re), (SIZE as usize, p));
        assert!(rslub_owns(p));
        // SAFETY: `q`, the next object or another, is live and `SIZE` bytes long.
        let bytes = unsafe { core::slice::from_raw_parts(q as *const u8, SIZE as usize) };
        assert!(bytes.iter().all(|&x| x == 0x5a));
        // SAFETY: allocated above, each freed once.
        unsafe {
            kc.free(p);
            kc.free(q);
        }
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::backings(), base);
    }

    /// The other ways an object is freed or measured: `ksize()`, `krealloc()` (to a larger
    /// size, which moves it, a smaller one, which does not, and to 0) and both `kfree_rcu()` paths reach rslub for an rslub
    /// object; unbacking then finds none of them still allocated.
    #[test]
    fn ksize_krealloc_and_kfree_rcu_of_backed_objects_reach_rslub() {
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_resize", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let [a, b, c, d, e] = core::array::from_fn(|_| kc.alloc(Gfp::KERNEL));
        for p in [a, b, c, d, e] {
            assert!(p != 0 && rslub_owns(p));
            dirty(p);
        }
        // SAFETY: live objects of `kc`, each freed once below and not used afterwards.
        unsafe {
            assert_eq!(ksize(a), SIZE as usize);
            let grown = krealloc(
                b,
                2 * SIZE as usize,
                Gfp::from_raw(Gfp::KERNEL.raw() | Gfp::ZERO),
            );
            assert!(grown != 0 && !rslub_owns(grown));
            let g = core::slice::from_raw_parts(grown as *const u8, 2 * SIZE as usize);
            assert!(g[..SIZE as usize].iter().all(|&x| x == 0x6b));
            assert!(g[SIZE as usize..].iter().all(|&x| x == 0));
            kfree(grown);
            // In place while it fits, as mm/slub.c's krealloc().
            let shrunk = krealloc(c, SIZE as usize / 2, Gfp::KERNEL);
            assert_eq!(shrunk, c);
            let h = core::slice::from_raw_parts(shrunk as *const u8, SIZE as usize / 2);
            assert!(h.iter().all(|&x| x == 0x6b));
            kfree(shrunk);
            // ZERO_SIZE_PTR.
            assert_eq!(krealloc(d, 0, Gfp::KERNEL), 16);
            kfree_rcu_head(e);
            kfree_rcu_headless(a);
        }
        // Unbacking waits for what rslub holds for kfree_rcu(): nothing is left.
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// `kfree_rcu()` and `kfree_rcu_nolock()` of rslub objects whose head is inside the
    /// object free exactly that object, after a grace period. The kernel's fallback paths
    /// find the object from the head with `kvmalloc_obj_start_addr()` and free it with
    /// mm/slub.c's own code, which must never see an rslub slab (and while rslub's slabs
    /// were plain pages found the page's start: the object there, here `a`, not this
    /// one). `make test` boots with `slab_common.rcu_min_cached_objs=0`, so that every
    /// two-argument `kfree_rcu()` takes the head-queued path; `kfree_rcu_nolock()` of
    /// an object on no slab page always defers through the kernel's irq_work.
    #[test]
    fn kfree_rcu_and_its_nolock_form_free_exactly_that_object() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_rcu", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        // `a` starts a page, `b` and `c` follow it there: from at least one whole slab
        // (whose free list may be shuffled: `CONFIG_SLAB_FREELIST_RANDOM`).
        let mut objs = [0usize; 64];
        for p in objs.iter_mut() {
            *p = kc.alloc(Gfp::KERNEL);
            assert!(rslub_owns(*p));
        }
        let has = |p: usize| objs.contains(&p);
        // The rslub cache's stride: more than `SIZE` under KASAN (a red zone).
        let owner = crate::mm::owner_of(objs[0] as *const u8).cast::<crate::cache::CacheCore>();
        // SAFETY: The owner of a live object of rslub's: its cache, live while it is.
        let stride = unsafe { (*owner).layout().size } as usize;
        let a = *objs
            .iter()
            .find(|&&p| p % 4096 == 0 && has(p + stride) && has(p + 2 * stride))
            .expect("a page's first three objects");
        let (b, c) = (a + stride, a + 2 * stride);
        for p in objs.iter().filter(|&&p| p != a && p != b && p != c) {
            // SAFETY: allocated above, freed once.
            unsafe { kc.free(*p) };
        }
        dirty(a);
        // SAFETY: live objects of `kc` of `SIZE` >= 40 bytes, freed once, not used after.
        unsafe {
            kfree_rcu_inner(b);
            kfree_rcu_nolock_inner(c);
        }
        // Unbacking waits for them: `b` and `c` are freed, `a` is still allocated.
        assert_eq!(back::unback(handle(&kc)), Ok(1));
        // `a` was not touched (a free would have written its free pointer into it).
        // SAFETY: a live object of `SIZE` bytes.
        let bytes = unsafe { core::slice::from_raw_parts(a as *const u8, SIZE as usize) };
        assert!(bytes.iter().all(|&x| x == 0x6b));
        // SAFETY: allocated above, freed once.
        unsafe { kc.free(a) };
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// A slab mempool on a backed cache keeps rslub's objects as it keeps the kernel's,
    /// whether it was made before or after backing, refilled by frees (alone or in bulk)
    /// or resized; and a page pool beside them keeps working. Under KASAN the pool
    /// poisons every element it keeps (`kasan_mempool_poison_object()`, through the
    /// element's `struct slab`: the shadow, see `rslub_sanitize` for the poison itself).
    #[test]
    fn slab_mempools_on_a_backed_cache_keep_rslub_objects() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_pool", SIZE, 0, 0, None).expect("kmem_cache");
        let made_before = Mempool::slab(2, &kc).expect("mempool");
        back::back(handle(&kc)).expect("back");
        // mempool_init() fills the reserve from the pool's allocation function.
        let made_after = Mempool::slab(2, &kc).expect("mempool");
        for (pool, backed_reserve) in [(&made_before, false), (&made_after, true)] {
            assert_eq!(pool.reserved(), 2);
            // mempool_alloc() tries the allocation function first.
            let a = pool.alloc(Gfp::KERNEL);
            assert!(a != 0 && rslub_owns(a));
            let [r1, r2] = [pool.alloc_reserved(), pool.alloc_reserved()];
            assert!(r1 != 0 && rslub_owns(r1) == backed_reserve);
            assert!(r2 != 0 && rslub_owns(r2) == backed_reserve);
            assert_eq!((pool.alloc_reserved(), pool.reserved()), (0, 0));
            // An rslub object freed into a pool that needs refilling.
            let d = kc.alloc(Gfp::KERNEL);
            assert!(rslub_owns(d));
            // SAFETY: live objects of the pool's cache, each freed once and not used after.
            unsafe {
                pool.free(d);
                assert_eq!(pool.reserved(), 1);
                let mut bulk = [kc.alloc(Gfp::KERNEL), a, r1];
                assert!(rslub_owns(bulk[0]));
                let taken = pool.free_bulk(&mut bulk);
                assert_eq!((taken, pool.reserved()), (1, 2));
                for e in &bulk[taken..] {
                    kc.free(*e);
                }
                // A full pool frees what it is given.
                pool.free(r2);
                assert_eq!(pool.reserved(), 2);
            }
            // Growing takes new elements from the allocation function: rslub's.
            pool.resize(4).expect("mempool_resize");
            assert_eq!(pool.reserved(), 4);
            let reserve: [usize; 4] = core::array::from_fn(|_| pool.alloc_reserved());
            assert!(reserve.iter().all(|&r| r != 0 && rslub_owns(r)));
            for r in reserve {
                // SAFETY: taken from the pool above, given back once.
                unsafe { pool.free(r) };
            }
            assert_eq!(pool.reserved(), 4);
        }
        // A page pool's elements are struct pages, not addresses: the handler of
        // mempool_free() looks at the pool before it looks at the element.
        let pages = Mempool::pages(1).expect("mempool");
        let page = pages.alloc(Gfp::KERNEL);
        assert!(page != 0);
        // SAFETY: taken from the pool just above, given back once.
        unsafe { pages.free(page) };
        drop(pages);
        // Destroying the pools frees their elements, rslub's to rslub: none is left.
        drop(made_after);
        drop(made_before);
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// `kfree_rcu_nolock()` from hard interrupt context under a raw spinlock (what the
    /// replacement must stand, with NMI: an llist push and an irq_work) on one CPU, while
    /// another waits in rslub's barrier again and again: every object is freed once,
    /// after its grace period, and unbacking after the last finds none left.
    #[test]
    fn kfree_rcu_nolock_in_hard_irq_racing_the_barrier_frees_every_object() {
        if !have_two_cpus() {
            return;
        }
        const N: usize = 256;
        let base = back::backings();
        let kc =
            KernelCache::create(c"rslub_test_kc_rcu_irq", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let objects: [AtomicUsize; N] =
            core::array::from_fn(|_| AtomicUsize::new(kc.alloc(Gfp::KERNEL)));
        assert!(objects.iter().all(|o| rslub_owns(o.load(Relaxed))));
        // The interrupts free at most `CHUNK` objects per barrier begun, so that the frees
        // are spread over many barriers however slow a barrier is on this kernel (on the
        // debug kernel one barrier outlasted all 64 ticks).
        const CHUNK: usize = 32;
        let next = AtomicUsize::new(0);
        let begun = AtomicUsize::new(0);
        let irq = || {
            for _ in 0..4 {
                let allowed = N.min(begun.load(SeqCst) * CHUNK);
                let Ok(i) = next.fetch_update(SeqCst, SeqCst, |i| (i < allowed).then_some(i + 1))
                else {
                    break;
                };
                // SAFETY: a live object of `kc` of `SIZE` >= 40 bytes, given up once.
                unsafe { kfree_rcu_nolock_inner_raw_locked(objects[i].load(Relaxed)) };
            }
        };
        // The interrupts on one online CPU, the barriers on another.
        let mut online = crate::percpu::online_cpus();
        let (here, there) = (online.next().expect("a CPU"), online.next().expect("a CPU"));
        pin(here.as_u32());
        {
            // SAFETY: `irq` outlives the timer, stopped at the end of this block.
            let _t = unsafe { Tick::start_hard(&irq, there) }.expect("timer");
            while next.load(SeqCst) < N {
                begun.fetch_add(1, SeqCst);
                back::rcu_barrier();
            }
        }
        unpin();
        // Unbacking waits for what is still queued: nothing is left.
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// A `SLAB_TYPESAFE_BY_RCU` kernel cache is served by a cache of rslub's with the same
    /// guarantee, its free pointer where the kernel cache has it: after the object, or at
    /// the `freeptr_offset` the cache was created with (as `filp` and `vm_area_struct`).
    #[test]
    fn typesafe_by_rcu_caches_are_backed_with_their_free_pointer() {
        let base = back::backings();
        let rcu = 1usize << bindings::_slab_flag_bits__SLAB_TYPESAFE_BY_RCU;
        let plain =
            KernelCache::create(c"rslub_test_kc_rcu", SIZE, 0, rcu, None).expect("kmem_cache");
        let offset =
            KernelCache::create_freeptr(c"rslub_test_kc_rcu_offset", SIZE, 16).expect("kmem_cache");
        for (kc, free_offset) in [(&plain, None), (&offset, Some(16))] {
            back::back(handle(kc)).expect("back");
            let p = kc.alloc(Gfp::KERNEL);
            assert!(rslub_owns(p));
            let owner = crate::mm::owner_of(p as *const u8).cast::<crate::cache::CacheCore>();
            // SAFETY: The owner of a live object of rslub's: its cache, live while it is.
            let l = unsafe { *(*owner).layout() };
            assert!(l.typesafe_by_rcu);
            match free_offset {
                Some(o) => assert_eq!(l.free_offset, o),
                None => assert!(l.free_offset >= SIZE),
            }
            // SAFETY: allocated above, freed once.
            unsafe { kc.free(p) };
            assert_eq!(back::unback(handle(kc)), Ok(0));
            assert_eq!(back::release_drained(), 0);
        }
        assert_eq!(back::backings(), base);
    }

    static CTOR_CALLS: AtomicUsize = AtomicUsize::new(0);

    /// Marks an object.
    ///
    /// # Safety
    ///
    /// `obj` must be a fresh object of at least 8 bytes.
    unsafe extern "C" fn ctor(obj: *mut core::ffi::c_void) {
        CTOR_CALLS.fetch_add(1, Relaxed);
        // SAFETY: a fresh object of `SIZE` bytes.
        unsafe { obj.cast::<u64>().write(0x1234_5678_9abc_def0) };
    }

    #[test]
    fn backed_objects_are_constructed_and_freed_on_other_cpus() {
        let base = back::backings();
        if !have_two_cpus() {
            return;
        }
        let kc = KernelCache::create(c"rslub_test_kc_ctor", SIZE, 64, 0, Some(ctor))
            .expect("kmem_cache");
        back::back(handle(&kc)).expect("back");
        let calls = CTOR_CALLS.load(Relaxed);
        pin(0);
        let mut objs = [0usize; 64];
        for o in objs.iter_mut() {
            *o = kc.alloc(Gfp::KERNEL);
        }
        pin(1);
        for &o in objs.iter() {
            assert!(rslub_owns(o));
            assert_eq!(o % 64, 0);
            // SAFETY: a constructed object of `SIZE` bytes.
            assert_eq!(unsafe { (o as *const u64).read() }, 0x1234_5678_9abc_def0);
            // SAFETY: allocated above, freed once, on another CPU.
            unsafe { kc.free(o) };
        }
        unpin();
        assert!(CTOR_CALLS.load(Relaxed) > calls);
        assert_eq!(back::unback(handle(&kc)), Ok(0));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    #[test]
    fn caches_rslub_cannot_serve_are_refused() {
        let base = back::backings();
        // kmemleak's own caches are created with it: refused where rslub tells kmemleak
        // of each object.
        let noleak = 1usize << bindings::_slab_flag_bits__SLAB_NOLEAKTRACE;
        let kc = KernelCache::create(c"rslub_test_kc_noleak", SIZE, 0, noleak, None)
            .expect("kmem_cache");
        if crate::sanitize::KMEMLEAK {
            assert_eq!(back::back(handle(&kc)), Err(EINVAL));
        } else {
            back::back(handle(&kc)).expect("back");
            assert_eq!(back::unback(handle(&kc)), Ok(0));
            assert_eq!(back::release_drained(), 0);
        }
        assert_eq!(back::backings(), base);

        // The kmalloc size classes are found at once (they allocate through __kmalloc*(),
        // which the name watch does not see), and refused.
        assert_eq!(back::back_all(c"kmalloc-64"), Err(EINVAL));
        assert_eq!(back::backings(), base);

        let ok = KernelCache::create(c"rslub_test_kc_twice", SIZE, 0, 0, None).expect("kmem_cache");
        back::back(handle(&ok)).expect("back");
        assert_eq!(back::back(handle(&ok)), Err(EEXIST));
        assert_eq!(back::unback(handle(&ok)), Ok(0));
        assert_eq!(back::unback(handle(&ok)), Err(ENOENT));
        assert_eq!(back::release_drained(), 0);
        assert_eq!(back::backings(), base);
    }

    /// Caches are found by name when they allocate (the kernel's list of caches is not
    /// exported): `back=` and the debugfs `back` file take names; a name that does not
    /// allocate within a second is refused, with nothing changed.
    #[test]
    fn caches_are_backed_and_unbacked_by_name() {
        let base = back::backings();
        let kc = KernelCache::create(c"rslub_test_kc_named", SIZE, 0, 0, None).expect("kmem_cache");
        let stop = AtomicBool::new(false);
        let allocations = AtomicUsize::new(0);
        // A user of the cache, allocating and freeing as a kernel subsystem would.
        let user = || {
            while !stop.load(Relaxed) {
                let p = kc.alloc(Gfp::KERNEL);
                if p != 0 {
                    allocations.fetch_add(1, Relaxed);
                    // SAFETY: allocated just above, freed once.
                    unsafe { kc.free(p) };
                }
                msleep(1);
            }
        };
        // SAFETY: `user` outlives the thread, joined below.
        let t = unsafe { Thread::start_unbound(&user) }.expect("thread");
        // `?name` checks, changing nothing.
        assert_eq!(
            write_file(c"rslub_kunit/back", b"?rslub_test_kc_named"),
            Ok(20)
        );
        assert_eq!(back::backings(), base);
        assert_eq!(back::back_all(c"rslub_test_kc_named"), Ok(()));
        assert_eq!(back::back(handle(&kc)), Err(EEXIST));
        assert_eq!(
            write_file(c"rslub_kunit/back", b"?rslub_test_kc_named"),
            Err(EEXIST)
        );
        // Refused, and nothing changed: the cache stays backed, the unknown one is not.
        assert_eq!(
            back::back_all(c"rslub_test_kc_named2,rslub_test_no_such_cache"),
            Err(ENOENT)
        );
        let mut buf = [0u8; 512];
        let n = read_file(c"rslub_kunit/back", &mut buf).expect("back file");
        let shown = core::str::from_utf8(&buf[..n]).expect("text");
        assert!(shown
            .lines()
            .any(|l| l.starts_with("rslub_test_kc_named backed alloc ")));
        assert_eq!(shown.lines().count(), base + 1);
        // Unbacked through the file, as a user does.
        assert_eq!(
            write_file(c"rslub_kunit/back", b"-rslub_test_kc_named\n"),
            Ok(21)
        );
        assert_eq!(
            write_file(c"rslub_kunit/back", b"-rslub_test_kc_named"),
            Err(ENOENT)
        );
        assert_eq!(write_file(c"rslub_kunit/back", b"two names"), Err(EINVAL));
        stop.store(true, Relaxed);
        drop(t);
        assert!(allocations.load(Relaxed) > 0);
        assert_eq!(write_file(c"rslub_kunit/back", b"drain"), Ok(5));
        assert_eq!(back::backings(), base);
    }

    /// With slab merging (`SLAB_MERGE_DEFAULT`, or `slab_merge` on the command line, as
    /// CI's one-node run has it), a cache created with the size and flags of another is
    /// that cache, and its name only a symlink in `/sys/kernel/slab`: backing by that name
    /// finds the cache it was merged into and backs it, serving every name merged into it;
    /// unbacking by that name works too. KASAN keeps every cache apart (`SLAB_NO_MERGE`).
    #[test]
    fn a_name_merged_into_another_cache_backs_that_cache() {
        // A size no kernel cache has here (the first is merged into nothing); its stride
        // is 1000 bytes.
        const MSIZE: u32 = 996;
        let base = back::backings();
        let first = KernelCache::create_mergeable(c"rslub_test_merge_a", MSIZE).expect("cache");
        let second = KernelCache::create_mergeable(c"rslub_test_merge_b", MSIZE).expect("cache");
        if first.raw() != second.raw() {
            // Whether this boot merges is the kernel's: its config, `slab_merge` or
            // `slab_nomerge`, and KASAN.
            assert!(!cfg!(CONFIG_SLAB_MERGE_DEFAULT) || cfg!(CONFIG_KASAN));
            skip(c"caches are not merged on this boot (no SLAB_MERGE_DEFAULT or slab_merge, or KASAN)");
            return;
        }
        let stop = AtomicBool::new(false);
        let user = || {
            while !stop.load(Relaxed) {
                let p = second.alloc(Gfp::KERNEL);
                if p != 0 {
                    // SAFETY: allocated just above, freed once.
                    unsafe { second.free(p) };
                }
                msleep(1);
            }
        };
        // SAFETY: `user` outlives the thread, joined below.
        let t = unsafe { Thread::start_unbound(&user) }.expect("thread");
        assert_eq!(back::back_all(c"rslub_test_merge_b"), Ok(()));
        // The cache it was merged into is backed, under its first creator's name.
        let mut buf = [0u8; 512];
        let n = read_file(c"rslub_kunit/back", &mut buf).expect("back file");
        let shown = core::str::from_utf8(&buf[..n]).expect("text");
        assert!(shown
            .lines()
            .any(|l| l.starts_with("rslub_test_merge_a backed alloc ")));
        let p = first.alloc(Gfp::KERNEL);
        assert!(p != 0 && rslub_owns(p));
        // SAFETY: allocated above, freed once.
        unsafe { first.free(p) };
        // Either name is that cache.
        assert_eq!(back::back_all(c"rslub_test_merge_a"), Err(EEXIST));
        // An alias made now with a larger size grows the cache's object size to it (up
        // to the stride): zeroing must clear the alias's whole object.
        let third = KernelCache::create_mergeable(c"rslub_test_merge_c", 1000).expect("cache");
        assert!(third.raw() == first.raw());
        // On one CPU: the object freed is the next one handed out.
        pin(0);
        let q = third.alloc(Gfp::KERNEL);
        assert!(q != 0 && rslub_owns(q));
        // SAFETY: a live object of at least 1000 bytes (the alias's size).
        unsafe { core::ptr::write_bytes(q as *mut u8, 0x6b, 1000) };
        // SAFETY: allocated above, freed once.
        unsafe { third.free(q) };
        let z = third.zalloc(Gfp::KERNEL);
        unpin();
        // SAFETY: a live object of at least 1000 bytes.
        let zb = unsafe { core::slice::from_raw_parts(z as *const u8, 1000) };
        assert!(z == q && zb.iter().all(|&b| b == 0));
        // SAFETY: allocated above, freed once.
        unsafe { third.free(z) };
        assert_eq!(
            write_file(c"rslub_kunit/back", b"-rslub_test_merge_b\n"),
            Ok(20)
        );
        stop.store(true, Relaxed);
        drop(t);
        assert_eq!(write_file(c"rslub_kunit/back", b"drain"), Ok(5));
        assert_eq!(back::backings(), base);
        drop(third);
        drop(second);
        drop(first);
    }

    /// A cache found by name that its owner destroys before it is backed, making a new
    /// cache of the same name (which the kernel's allocator usually places in the freed
    /// struct): backing refuses with `ENOENT`, saying why, and backs neither, and the
    /// destroy went through.
    #[test]
    fn a_cache_destroyed_after_it_was_found_by_name_is_not_backed() {
        let base = back::backings();
        let first = KernelCache::create(c"rslub_test_kc_gone", SIZE, 0, 0, None)
            .expect("kmem_cache")
            .into_raw();
        let (stop, stopped, fired) = (
            AtomicBool::new(false),
            AtomicBool::new(false),
            AtomicBool::new(false),
        );
        let second = AtomicUsize::new(0);
        // The cache's user, so that it is found by name.
        let user = || {
            // SAFETY: `first` is destroyed only after this says it stopped; never dropped here.
            let kc = core::mem::ManuallyDrop::new(unsafe { KernelCache::from_raw(first) });
            while !stop.load(SeqCst) {
                let p = kc.alloc(Gfp::KERNEL);
                if p != 0 {
                    // SAFETY: allocated just above, freed once.
                    unsafe { kc.free(p) };
                }
                msleep(1);
            }
            stopped.store(true, SeqCst);
        };
        // Found: the owner stops using it, destroys it and makes another of that name.
        let owner = |_: usize, point: Point| {
            if point == Point::NameFound && !fired.swap(true, SeqCst) {
                stop.store(true, SeqCst);
                while !stopped.load(SeqCst) {
                    msleep(1);
                }
                // SAFETY: made above; its user stopped; destroyed once, here.
                drop(unsafe { KernelCache::from_raw(first) });
                if let Ok(kc) = KernelCache::create(c"rslub_test_kc_gone", SIZE, 0, 0, None) {
                    second.store(kc.into_raw(), SeqCst);
                }
            }
            false
        };
        // SAFETY: `user` outlives the thread, joined below.
        let t = unsafe { Thread::start_unbound(&user) }.expect("thread");
        let installed = inject::install(&owner).expect("injection hook");
        let backed = back::back_name(c"rslub_test_kc_gone");
        drop(installed);
        // Whatever happened: the user stops before anything can fail the test.
        stop.store(true, SeqCst);
        drop(t);
        if !fired.load(SeqCst) {
            // SAFETY: never found, so never destroyed by the hook; unused since.
            drop(unsafe { KernelCache::from_raw(first) });
        }
        assert_eq!(backed, Err(ENOENT));
        assert!(fired.load(SeqCst));
        assert_eq!(back::backings(), base);
        let second = second.load(SeqCst);
        assert!(second != 0);
        let reused = if second == first {
            "reused"
        } else {
            "did not reuse"
        };
        kernel::pr_info!("rslub_test_kc_gone: the new cache {reused} the old one's struct\n");
        // SAFETY: made by the hook, unused since; destroyed once, here.
        drop(unsafe { KernelCache::from_raw(second) });
    }

    /// The module's exit closes the backing before it looks at what is backed
    /// (`back::close()`): a backing by name still in progress then (a write to the `back`
    /// file racing `rmmod`, which debugfs lets finish) backs nothing. Here the exit begins
    /// when the cache was found, just before the backing takes its lock. (The other half,
    /// `rslub_hook_init()` refusing a module that is going away, needs a real `rmmod`:
    /// the guest's `rslub_load.back_write_racing_rmmod`.)
    #[test]
    fn a_backing_that_meets_the_exit_backs_nothing() {
        let base = back::backings();
        let fired = AtomicBool::new(false);
        let exit = |_: usize, point: Point| {
            if point == Point::NameFound && !fired.swap(true, SeqCst) {
                back::close();
            }
            false
        };
        let installed = inject::install(&exit).expect("injection hook");
        let backed = back::back_name(c"skbuff_fclone_cache");
        drop(installed);
        back::reopen();
        if backed.is_ok() {
            // Leaves the backing as the other tests expect it.
            let _ = back::unback_name(c"skbuff_fclone_cache");
            back::release_drained();
        }
        assert!(fired.load(SeqCst));
        assert!(backed == Err(EBUSY));
        assert_eq!(back::backings(), base);
    }

    /// The skb caches, whose pointers the kernel exports, are found by name at once, also
    /// when idle (a watched name would time out with `ENOENT`). `skbuff_fclone_cache`:
    /// `make test` has the other two backed already.
    #[test]
    fn skb_caches_are_found_by_name_at_once() {
        let base = back::backings();
        assert_eq!(back::back_name(c"skbuff_fclone_cache"), Ok(()));
        assert_eq!(back::back_name(c"skbuff_fclone_cache"), Err(EEXIST));
        assert!(back::unback_name(c"skbuff_fclone_cache").is_ok());
        // Objects the kernel took meanwhile come back when it frees them.
        let mut left = back::release_drained();
        for _ in 0..1000 {
            if left == 0 {
                break;
            }
            msleep(10);
            left = back::release_drained();
        }
        assert_eq!(left, 0);
        assert_eq!(back::backings(), base);
    }
}
