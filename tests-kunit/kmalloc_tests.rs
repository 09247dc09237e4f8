// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_kmalloc`: kmalloc served by rslub's size classes, as whole-kernel
//! mode serves it, keeping kmalloc's contract: every request from the class of
//! `kmalloc_size_roundup()` of its size, naturally aligned, reclaimable ones apart; DMA,
//! large, empty and accounted requests left to the kernel; the constant-size, node,
//! tracked-caller and kvmalloc entry points; krealloc and kvrealloc as mm/slub.c does
//! them; every object back to its class, and slab metadata never from a class. The hooks
//! serve here only the suite's own calls (from this module's C helpers, in the case's
//! task): the guest's whole-kernel checks serve the whole kernel.

use kernel::prelude::*;

#[kunit_tests(rslub_kmalloc)]
mod tests {
    use crate::{
        back,
        cache::CacheCore,
        gfp::Gfp,
        inject::{install, Point},
        test_shim::{
            defer, direct_param, direct_sites_patched, direct_state, is_vmalloc, kfree, kmalloc,
            kmalloc_512_node, kmalloc_64, kmalloc_64_bulk_count, kmalloc_64_cache_alloc,
            kmalloc_64_free_bulk, kmalloc_cache, kmalloc_node, kmalloc_size_roundup,
            kmalloc_track_caller, krealloc, ksize, kvfree, kvmalloc, kvrealloc, memcg,
            meta_from_kernel, node_of, on_slab_page, read_file, sendpage_ok, KernelCache, Thread,
        },
    };
    use core::{
        ffi::c_void,
        sync::atomic::{AtomicUsize, Ordering},
    };
    use kernel::{prelude::*, str::CString};

    /// kmalloc served by the classes for this case's calls, until dropped, or until the
    /// case ends: a failed assertion ends the case's thread without dropping anything, and
    /// classes left behind would fail every later start (`EEXIST`).
    struct KmallocMode;

    impl KmallocMode {
        fn start() -> Self {
            /// # Safety
            ///
            /// None: stops kmalloc's service if it still runs.
            unsafe extern "C" fn stop(_: *mut c_void) {
                back::stop_kmalloc();
            }
            back::start_kmalloc_for_suite().expect("kmalloc hooks");
            // SAFETY: `stop` has no precondition; it runs when the case ends, in process
            // context, and does nothing if the mode was dropped before.
            unsafe { defer(stop, core::ptr::null_mut()) }.expect("deferred stop");
            KmallocMode
        }
    }

    impl Drop for KmallocMode {
        fn drop(&mut self) {
            back::stop_kmalloc();
        }
    }

    /// The name of the rslub cache owning `p`, if rslub owns it.
    fn owner(p: usize) -> Option<&'static CStr> {
        let o = crate::mm::owner_of(p as *const u8).cast::<CacheCore>();
        // SAFETY: The owner of a live object of rslub's: its cache, live while the
        // object is, which the callers keep for longer than the name is used.
        (!o.is_null()).then(|| unsafe { &*o }.name())
    }

    /// The kernel's name of the kmalloc class of `size` bytes (`kmalloc_info[]`).
    fn class_name(kind: &str, size: usize) -> CString {
        if size >= 1024 {
            CString::try_from_fmt(fmt!("kmalloc-{kind}{}k", size / 1024))
        } else {
            CString::try_from_fmt(fmt!("kmalloc-{kind}{size}"))
        }
        .expect("name")
    }

    fn owned_by(p: usize, kind: &str, size: usize) -> bool {
        owner(p).is_some_and(|n| n == &*class_name(kind, size))
    }

    /// Every class's allocations were all freed again (the `back` file's counts).
    fn classes_balanced() -> bool {
        let mut buf = KVec::from_elem(0u8, 16384, GFP_KERNEL).expect("memory");
        let n = read_file(c"rslub_kunit/back", &mut buf).expect("back file");
        let text = core::str::from_utf8(&buf[..n]).expect("text");
        let mut lines = 0;
        for l in text.lines().filter(|l| l.contains(" kmalloc alloc ")) {
            let w: KVec<&str> = {
                let mut v = KVec::new();
                for x in l.split(' ') {
                    v.push(x, GFP_KERNEL).expect("memory");
                }
                v
            };
            // NAME kmalloc alloc A free F slabs S
            if w[3] != w[5] {
                pr_err!("not balanced: {l}\n");
                return false;
            }
            lines += 1;
        }
        lines > 0
    }

    /// Each size up to 8 KiB comes from the class of its kmalloc_size_roundup(), aligned
    /// to the largest power of two dividing the class size (the size itself for powers
    /// of two), with room for the whole class size; kfree() returns it.
    #[test]
    fn every_size_up_to_8k_comes_from_its_class() {
        let _m = KmallocMode::start();
        let sizes = Iterator::chain(1..=256usize, (264..=8192).step_by(8));
        for size in sizes {
            let r = kmalloc_size_roundup(size);
            let p = kmalloc(size, Gfp::KERNEL);
            assert!(p != 0);
            if !owned_by(p, "", r) {
                pr_err!("size {size}: not from {}\n", &*class_name("", r));
            }
            assert!(owned_by(p, "", r));
            // SAFETY: A live object of kmalloc, freed once below.
            unsafe {
                assert_eq!(ksize(p), r);
                assert_eq!(p % (1 << r.trailing_zeros()), 0);
                core::ptr::write_bytes(p as *mut u8, 0x5a, r);
                kfree(p);
            }
        }
        assert!(classes_balanced());
    }

    /// __GFP_RECLAIMABLE requests have classes of their own (kmalloc-rcl-*); the
    /// constant-size, node and tracked-caller entry points reach the same classes.
    #[test]
    fn reclaimable_constant_node_and_tracked_requests_reach_their_classes() {
        let _m = KmallocMode::start();
        let rcl = Gfp::from_raw(Gfp::KERNEL.raw() | bindings_gfp::RECLAIMABLE);
        let a = kmalloc(100, rcl);
        let b = kmalloc(100, Gfp::KERNEL);
        let c = kmalloc_64(Gfp::KERNEL);
        let d = kmalloc_64(rcl);
        let e = kmalloc_track_caller(700, Gfp::KERNEL);
        assert!(owned_by(a, "rcl-", 128) && owned_by(b, "", 128));
        assert!(owned_by(c, "", 64) && owned_by(d, "rcl-", 64));
        assert!(owned_by(e, "", 1024));
        let mut nodes = 0;
        for n in crate::topology::online_nodes() {
            if !crate::shim::node_has_memory(n as i32) {
                continue;
            }
            let f = kmalloc_node(3000, Gfp::KERNEL, n as i32);
            let g = kmalloc_512_node(Gfp::KERNEL, n as i32);
            assert!(owned_by(f, "", 4096) && owned_by(g, "", 512));
            assert!(node_of(f) == n && node_of(g) == n);
            // SAFETY: Live objects of kmalloc, freed once.
            unsafe {
                kfree(f);
                kfree(g);
            }
            nodes += 1;
        }
        assert!(nodes > 0);
        // SAFETY: Live objects of kmalloc, freed once.
        unsafe {
            for p in [a, b, c, d, e] {
                kfree(p);
            }
        }
        assert!(classes_balanced());
    }

    /// kmalloc's own caches may hold rslub's objects while the classes serve
    /// (`rslub_bulk_caches[]`): such objects given to `kmem_cache_free_bulk()` with the
    /// kernel's cache, mixed with the kernel's own, reach their class; once the classes
    /// stop, the cache no longer counts.
    #[test]
    fn bulk_frees_given_kmallocs_own_cache_reach_the_classes() {
        let before = kmalloc_64_bulk_count();
        // The kernel's objects of that very cache (not a copy `kmalloc()` may choose).
        let theirs = [
            kmalloc_64_cache_alloc(Gfp::KERNEL),
            kmalloc_64_cache_alloc(Gfp::KERNEL),
        ];
        assert!(theirs.iter().all(|&p| p != 0 && owner(p).is_none()));
        let m = KmallocMode::start();
        assert!(kmalloc_64_bulk_count() > before);
        let mut v = [0usize; 6];
        for p in v.iter_mut() {
            *p = kmalloc(64, Gfp::KERNEL);
            assert!(owned_by(*p, "", 64));
        }
        let mut mixed = [v[0], theirs[0], v[1], v[2], theirs[1], v[3], v[4], v[5]];
        // SAFETY: Live objects of kmalloc-64 (the kernel's or its class's), freed once.
        unsafe { kmalloc_64_free_bulk(&mut mixed) };
        assert!(classes_balanced());
        drop(m);
        assert_eq!(kmalloc_64_bulk_count(), before);
    }

    /// DMA, large, empty and (with memory cgroups) accounted requests stay the kernel's.
    #[test]
    fn dma_large_empty_and_accounted_requests_stay_the_kernels() {
        let _m = KmallocMode::start();
        let dma = kmalloc(100, Gfp::from_raw(Gfp::KERNEL.raw() | bindings_gfp::DMA));
        assert!(dma != 0 && owner(dma).is_none() && on_slab_page(dma));
        let large = kmalloc(8193, Gfp::KERNEL);
        assert!(large != 0 && owner(large).is_none() && !on_slab_page(large));
        // ZERO_SIZE_PTR.
        assert_eq!(kmalloc(0, Gfp::KERNEL), 16);
        let acc = kmalloc(
            100,
            Gfp::from_raw(Gfp::KERNEL.raw() | bindings_gfp::ACCOUNT),
        );
        assert!(acc != 0);
        assert_eq!(owner(acc).is_none(), memcg());
        // SAFETY: Live objects of kmalloc, freed once.
        unsafe {
            for p in [dma, large, acc] {
                kfree(p);
            }
        }
    }

    /// While kmalloc is served, its entry points are hooked by direct calls where the
    /// others are (their call sites jump to their trampolines), by the handler else. A
    /// constant-size entry point given a cache that is not kmalloc's own of that size (as
    /// lib/tests/slub_kunit.c does) allocates from that cache, and a kmalloc another task
    /// makes while the suite keeps the classes to its own calls is the kernel's: each is
    /// given back to the kernel's function past its call site (with direct calls: its
    /// trampoline would send it back to rslub), and returns.
    #[test]
    fn unserved_calls_reach_the_kernels_function_once() {
        let _m = KmallocMode::start();
        assert_eq!(
            direct_sites_patched(),
            direct_param() && direct_state().is_some()
        );
        let kc = KernelCache::create(c"rslub_test_kc_kmalloc_cache", 64, 0, 0, None)
            .expect("kmem_cache");
        let last = crate::topology::online_nodes()
            .filter(|&n| crate::shim::node_has_memory(n as i32))
            .last()
            .expect("a node with memory");
        let a = kmalloc_cache(&kc, Gfp::KERNEL, 48, -1);
        let b = kmalloc_cache(&kc, Gfp::KERNEL, 48, last as i32);
        assert!(a != 0 && owner(a).is_none() && on_slab_page(a));
        assert!(b != 0 && owner(b).is_none() && node_of(b) == last);
        // kmalloc's own cache of 64 bytes is served, on that node too.
        let c = kmalloc_64(Gfp::KERNEL);
        let d = kmalloc_512_node(Gfp::KERNEL, last as i32);
        assert!(owned_by(c, "", 64) && owned_by(d, "", 512) && node_of(d) == last);
        let other = AtomicUsize::new(0);
        let f = || other.store(kmalloc(100, Gfp::KERNEL), Ordering::Relaxed);
        // SAFETY: `f` and `other` outlive the thread, joined at the end of the block.
        drop(unsafe { Thread::start_unbound(&f) }.expect("thread"));
        let e = other.load(Ordering::Relaxed);
        assert!(e != 0 && owner(e).is_none() && on_slab_page(e));
        // SAFETY: Live objects of `kc` and of kmalloc, freed once.
        unsafe {
            kc.free(a);
            kc.free(b);
            for p in [c, d, e] {
                kfree(p);
            }
        }
        drop(kc);
        assert!(classes_balanced());
    }

    /// krealloc() of a class's object stays in place while it fits (zeroing the spare
    /// part for __GFP_ZERO) and moves, with its contents, to the class of a larger size.
    #[test]
    fn krealloc_stays_while_it_fits_and_moves_to_a_larger_class() {
        let _m = KmallocMode::start();
        let zero = Gfp::from_raw(Gfp::KERNEL.raw() | crate::gfp::Gfp::ZERO);
        let p = kmalloc(100, Gfp::KERNEL);
        // SAFETY: `p` and what krealloc() returns are live objects of kmalloc, each
        // given up to krealloc() or freed once.
        unsafe {
            core::ptr::write_bytes(p as *mut u8, 0x6b, 128);
            assert_eq!(krealloc(p, 120, Gfp::KERNEL), p);
            assert_eq!(krealloc(p, 90, zero), p);
            let s = core::slice::from_raw_parts(p as *const u8, 128);
            assert!(s[..90].iter().all(|&x| x == 0x6b) && s[90..].iter().all(|&x| x == 0));
            let q = krealloc(p, 200, Gfp::KERNEL);
            assert!(q != p && owned_by(q, "", 256));
            let s = core::slice::from_raw_parts(q as *const u8, 90);
            assert!(s.iter().all(|&x| x == 0x6b));
            assert_eq!(krealloc(q, 0, Gfp::KERNEL), 16);
        }
        assert!(classes_balanced());
    }

    /// kvmalloc() up to 8 KiB from the classes and above from the kernel; kvrealloc() of
    /// NULL is a kvmalloc(), of a class's object a move to a larger class and then to the
    /// kernel, contents kept; kvfree() returns each.
    #[test]
    fn kvmalloc_and_kvrealloc_use_the_classes_up_to_8k() {
        let _m = KmallocMode::start();
        let a = kvmalloc(300, Gfp::KERNEL);
        let b = kvmalloc(6000, Gfp::KERNEL);
        let c = kvmalloc(100_000, Gfp::KERNEL);
        assert!(owned_by(a, "", 512) && owned_by(b, "", 8192));
        // Pages or vmalloc, the kernel's either way.
        assert!(c != 0 && owner(c).is_none());
        // SAFETY: Live objects of kvmalloc, each given up to kvrealloc() or freed once.
        unsafe {
            let d = kvrealloc(0, 100, Gfp::KERNEL);
            assert!(owned_by(d, "", 128));
            core::ptr::write_bytes(d as *mut u8, 0x3c, 100);
            let e = kvrealloc(d, 1000, Gfp::KERNEL);
            assert!(owned_by(e, "", 1024));
            let f = kvrealloc(e, 20_000, Gfp::KERNEL);
            assert!(f != 0 && owner(f).is_none());
            let s = core::slice::from_raw_parts(f as *const u8, 100);
            assert!(s.iter().all(|&x| x == 0x3c));
            for p in [a, b, c, f] {
                kvfree(p);
            }
        }
        assert!(classes_balanced());
    }

    /// A kvmalloc() above a page whose class cannot get pages falls back as the kernel's
    /// does: to the kernel's `__kvmalloc_node()`, its own kmalloc cache, then vmalloc with
    /// the flags as given (`vmalloc_huge_node()` would warn of a reclaimable one's
    /// `__GFP_RECLAIMABLE`); one below a page fails instead, as the kernel's does. Where
    /// that function cannot be called past its call site, to vmalloc itself, with the
    /// flags it supports.
    #[test]
    fn kvmalloc_falls_back_to_the_kernels_above_a_page_only() {
        let rcl = Gfp::from_raw(Gfp::KERNEL.raw() | bindings_gfp::RECLAIMABLE);
        let hook = |_cache: usize, p: Point| matches!(p, Point::PageAlloc { .. });
        back::kmalloc_kv_vmalloc(true);
        let vm = {
            let _m = KmallocMode::start();
            back::kmalloc_kv_vmalloc(false);
            let _h = install(&hook).expect("hook");
            kvmalloc(6000, rcl)
        };
        assert!(vm != 0 && owner(vm).is_none() && is_vmalloc(vm));
        // SAFETY: A live object of kvmalloc, freed once.
        unsafe { kvfree(vm) };
        let _m = KmallocMode::start();
        // The classes are new: every allocation needs a new slab.
        let (big, small, big_rcl) = {
            let _h = install(&hook).expect("hook");
            (
                kvmalloc(6000, Gfp::KERNEL),
                kvmalloc(300, Gfp::KERNEL),
                kvmalloc(6000, rcl),
            )
        };
        // The kernel's: from its kmalloc cache (rslub's failure was injected, not the
        // kernel's) or vmalloc.
        for p in [big, big_rcl] {
            assert!(p != 0 && owner(p).is_none());
        }
        assert_eq!(small, 0);
        // SAFETY: Live objects of kvmalloc, freed once.
        unsafe {
            kvfree(big);
            kvfree(big_rcl);
        }
    }

    /// The metadata of a class's new slab comes from the kernel's own allocator (rslub's
    /// metadata cache), never from a class: a class's slab cannot wait for its own.
    #[test]
    fn slab_metadata_never_comes_from_a_class() {
        let _m = KmallocMode::start();
        let mut objs = KVec::new();
        for _ in 0..64 {
            let p = kmalloc(96, Gfp::KERNEL);
            assert!(owned_by(p, "", 96));
            objs.push(p, GFP_KERNEL).expect("memory");
        }
        for &p in objs.iter() {
            // SAFETY: A live object of rslub's.
            let meta = unsafe { crate::slab::slab_of(p as *const u8) };
            assert!(!meta.is_null());
            assert!(owner(meta as usize).is_none());
            assert!(meta_from_kernel(meta as *const c_void));
        }
        for &p in objs.iter() {
            // SAFETY: Live objects of kmalloc, freed once.
            unsafe { kfree(p) };
        }
        assert!(classes_balanced());
    }

    /// Whether the class `name` exists: its debugfs folder holds a `layout` file.
    fn class_exists(name: &CStr) -> bool {
        let mut path = KVec::new();
        for part in [&b"rslub_kunit/"[..], name.to_bytes(), b"/layout\0"] {
            path.extend_from_slice(part, GFP_KERNEL).expect("memory");
        }
        let path = CStr::from_bytes_with_nul(&path).expect("path");
        let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL).expect("memory");
        read_file(path, &mut buf).is_ok()
    }

    /// A start of kmalloc's service that fails while making a size class (the first, one
    /// in the middle) or with kmalloc's hooks registered (as when a direct call is refused
    /// midway) leaves nothing: no class (the ones made first are destroyed), no kmalloc
    /// served by a class meanwhile (its object would outlive its class), no kmalloc hook
    /// registered and no class in their table, rslub's own hooks as before, the suite's
    /// task filter off, kmalloc going to the kernel; and the next start serves kmalloc as
    /// if none had failed.
    #[test]
    fn a_failed_start_leaves_no_class_and_no_hook() {
        let hooked = back::hooked();
        for fail_at in [Some(0), Some(5), None] {
            let hook = |_: usize, p: Point| match (p, fail_at) {
                (Point::SizeClass(j), Some(k)) => j == k,
                (Point::KmallocHook, None) => true,
                _ => false,
            };
            let installed = install(&hook).expect("injection hook");
            assert!(back::start_kmalloc_for_suite().is_err());
            drop(installed);
            assert!(!back::kmalloc_failed_served());
            for name in [c"kmalloc-8", c"kmalloc-16", c"kmalloc-64", c"kmalloc-96"] {
                assert!(!class_exists(name));
            }
            assert_eq!(back::kmalloc_hooked(), (false, false));
            assert_eq!(back::hooked(), hooked);
            let p = kmalloc_64(Gfp::KERNEL);
            assert!(p != 0 && owner(p).is_none());
            // SAFETY: A live object of the kernel's kmalloc, freed once.
            unsafe { kfree(p) };
            let m = KmallocMode::start();
            assert_eq!(back::kmalloc_hooked(), (true, true));
            assert!(class_exists(c"kmalloc-64"));
            let p = kmalloc_64(Gfp::KERNEL);
            assert!(owned_by(p, "", 64));
            // SAFETY: A live object of kmalloc, freed once.
            unsafe { kfree(p) };
            drop(m);
        }
        assert_eq!(back::kmalloc_hooked(), (false, false));
    }

    /// No object of a class is a page to send by reference: `sendpage_ok()` refuses every
    /// page of rslub's slabs, the first of each slab included, as it refuses the kernel's
    /// slab pages (6.12: `PG_slab`; 7.3: frozen, their count 0), so zero-copy senders
    /// (nvme-tcp, iSCSI, ceph, `MSG_SPLICE_PAGES`) copy kmalloc buffers instead of
    /// sending a page whose objects may be freed and reused before a retransmit.
    #[test]
    fn no_object_is_sendpage_ok() {
        let k = kmalloc(512, Gfp::KERNEL);
        assert!(k != 0 && owner(k).is_none());
        assert!(!sendpage_ok(k));
        // SAFETY: A live object of the kernel's kmalloc, freed once.
        unsafe { kfree(k) };
        let _m = KmallocMode::start();
        for size in [64usize, 512, 4096, 8192] {
            let mut objs = KVec::new();
            // Enough for several slabs of each class, so that some objects lie on the
            // first page of a slab.
            for _ in 0..48 {
                let p = kmalloc(size, Gfp::KERNEL);
                assert!(owned_by(p, "", size));
                objs.push(p, GFP_KERNEL).expect("memory");
            }
            for &p in objs.iter() {
                if sendpage_ok(p) {
                    pr_err!("size {size}: the page of {p:#x} is sendpage_ok\n");
                }
                assert!(!sendpage_ok(p));
            }
            for &p in objs.iter() {
                // SAFETY: Live objects of kmalloc, freed once.
                unsafe { kfree(p) };
            }
        }
        assert!(classes_balanced());
    }

    /// The gfp bits these cases use (`include/linux/gfp_types.h`).
    mod bindings_gfp {
        use kernel::bindings;
        pub(super) const DMA: u32 = 1 << bindings::___GFP_DMA_BIT;
        pub(super) const RECLAIMABLE: u32 = 1 << bindings::___GFP_RECLAIMABLE_BIT;
        pub(super) const ACCOUNT: u32 = 1 << bindings::___GFP_ACCOUNT_BIT;
    }
}
