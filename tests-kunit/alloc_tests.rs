// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_alloc`: caches, slabs, the per-cpu fast paths, frees from other
//! CPUs, node partial lists, `get_any_partial`, NUMA placement, bulk operations,
//! statistics and destruction, all on the real allocator code.

use kernel::prelude::*;

#[kunit_tests(rslub_alloc)]
mod tests {
    use crate::params::Profile;
    use crate::test_shim::expect_reports;
    use crate::{
        cache::{CacheArgs, CacheCore, Ctor, RemoteWalk, NO_NODE},
        common::{args, hardened, slabs},
        gfp::Gfp,
        layout::{HWCACHE_ALIGN, STORE_USER},
        registry::Cache,
        slab,
        stats::Stat,
        test_shim::{node_of, pin_current, skip, virt_to_page},
        topology::{online_nodes, Topology},
    };
    use core::{
        ptr::NonNull,
        sync::atomic::{AtomicUsize, Ordering},
    };
    use kernel::{cpu::CpuId, error::code::*, prelude::*};

    /// Runs `f` in this test's task, moved to CPU `cpu` (so that KUnit sees the
    /// assertions), then lets the task run anywhere again.
    fn on(cpu: u32, f: impl FnOnce()) {
        let id = CpuId::from_u32(cpu).expect("cpu");
        pin_current(Some(id)).expect("pin");
        f();
        pin_current(None).expect("unpin");
    }

    /// Every size from 1 to 8192 bytes (alignments 0, 8, 32 and 64 in turn): objects of
    /// two slabs and one more are aligned, hold what was written and never overlap. A
    /// cache comes with its ~70 debugfs files, whose creation takes 40 s for the 8192
    /// under TCG, and longer on a KASAN, kmemleak and lockdep kernel: every size with
    /// `full` (`make test FULL=1`, CI) but on the debug kernel; otherwise all sizes up to
    /// 128, every 37th beyond (every alignment in turn: 37 is 1 modulo 4) and the sizes
    /// next to multiples of the page. On a KASAN kernel (CI's debug run, where the 351
    /// caches took 101 s) half of them: up to 64, and every 73rd (also 1 modulo 4).
    #[test]
    fn objects_never_overlap_and_respect_alignment() -> Result {
        let mut addrs: KVec<usize> = KVec::with_capacity(64, GFP_KERNEL)?;
        let all = crate::module_parameters::full.value() && !cfg!(CONFIG_KASAN);
        let (small, step) = if cfg!(CONFIG_KASAN) {
            (64, 73)
        } else {
            (128, 37)
        };
        let page = crate::layout::PAGE_SIZE;
        let sizes = (1..=8192u32)
            .filter(|&s| all || s <= small || s % step == 0 || matches!(s % page, 0 | 1 | 4095));
        for size in sizes {
            let align = [0u32, 8, 32, 64][(size % 4) as usize];
            let c = Cache::create(&CacheArgs {
                align,
                ..args(c"rslub_test_overlap", size)
            })?;
            let l = *c.layout();
            // Two slabs and one more object, at most 64 objects.
            let n = (2 * l.objects as usize + 1).min(64);
            addrs.clear();
            for i in 0..n {
                let p = c.alloc(Gfp::KERNEL)?.as_ptr();
                assert_eq!(p as usize % l.align as usize, 0);
                // SAFETY: `p` is a fresh object of `size` bytes.
                unsafe { core::ptr::write_bytes(p, i as u8, size as usize) };
                addrs.push(p as usize, GFP_KERNEL)?;
            }
            for (i, &a) in addrs.iter().enumerate() {
                // SAFETY: `a` is a live object of `size` bytes.
                let bytes = unsafe { core::slice::from_raw_parts(a as *const u8, size as usize) };
                assert!(bytes.iter().all(|&b| b == i as u8));
            }
            addrs.sort_unstable();
            for w in addrs.windows(2) {
                assert!(w[0] + size as usize <= w[1]);
            }
            for &a in addrs.iter() {
                // SAFETY: allocated above from `c`, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            assert!(c.destroy().is_ok());
        }
        Ok(())
    }

    /// Alignments above a page, as the kernel takes them (`kmalloc-8k` asks for 8 KiB):
    /// every object of three slabs lies at a multiple of the alignment, with KASAN's red
    /// zone after each object too (which grows the stride past the object).
    #[test]
    fn alignments_above_a_page_are_kept() -> Result {
        for (size, align) in [
            (8192u32, 8192u32),
            (100, 8192),
            (5000, 16384),
            (64, 1 << 18),
        ] {
            let c = Cache::create(&CacheArgs {
                align,
                ..args(c"rslub_test_big_align", size)
            })?;
            let l = *c.layout();
            assert!(l.align == align && l.size % align == 0);
            let n = 3 * l.objects as usize;
            let mut objs: KVec<usize> = KVec::with_capacity(n, GFP_KERNEL)?;
            for _ in 0..n {
                let p = c.alloc(Gfp::KERNEL)?.as_ptr() as usize;
                if p % align as usize != 0 {
                    pr_err!("size {size} align {align}: object at {p:#x}\n");
                }
                assert_eq!(p % align as usize, 0);
                objs.push(p, GFP_KERNEL)?;
            }
            for &p in objs.iter() {
                // SAFETY: allocated above from `c`, freed once.
                unsafe { c.free(NonNull::new(p as *mut u8).expect("non-null")) };
            }
            assert!(c.destroy().is_ok());
        }
        Ok(())
    }

    #[test]
    fn slab_of_finds_the_slab_from_any_object() {
        let c = Cache::create(&args(c"rslub_test_slab_of", 3000)).expect("cache");
        // 3000-byte objects in order-3 slabs: objects straddle page boundaries, and each
        // page of the slab must lead back to the same slab.
        assert_eq!(c.layout().order, 3);
        let n = c.layout().objects as usize;
        let mut objs: KVec<usize> = KVec::new();
        on(0, || {
            for _ in 0..n {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
                objs.push(p, GFP_KERNEL).expect("memory");
            }
        });
        // SAFETY: live objects of `c`.
        let slab = unsafe { slab::slab_of(objs[0] as *const u8) };
        let mut pages: KVec<usize> = KVec::new();
        for &a in objs.iter() {
            for offset in [0usize, 1500, 2999] {
                // SAFETY: inside a live object of `c`.
                assert_eq!(unsafe { slab::slab_of((a + offset) as *const u8) }, slab);
                pages
                    .push(virt_to_page(a + offset), GFP_KERNEL)
                    .expect("memory");
            }
        }
        pages.sort_unstable();
        let distinct = 1 + pages.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(distinct, 8);
        for &a in objs.iter() {
            // SAFETY: allocated above, freed once.
            unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
        }
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn every_object_of_a_full_slab_cycles() {
        on(0, || {
            let c = Cache::create(&args(c"rslub_test_cycle", 256)).expect("cache");
            let n = c.layout().objects as usize;
            let mut first: KVec<usize> = KVec::new();
            for i in 0..n {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                // SAFETY: fresh object of 256 bytes.
                unsafe { core::ptr::write_bytes(p, i as u8, 256) };
                first.push(p as usize, GFP_KERNEL).expect("memory");
            }
            // All from one slab: the first slab of a fresh cache on this CPU.
            // SAFETY: the addresses are live objects of `c`.
            let slab0 = unsafe { slab::slab_of(first[0] as *const u8) };
            for &a in first.iter() {
                // SAFETY: as above.
                assert_eq!(unsafe { slab::slab_of(a as *const u8) }, slab0);
            }
            assert_eq!(slabs(&c), 1);
            for &a in first.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            let mut again: KVec<usize> = KVec::new();
            for _ in 0..n {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                again.push(p as usize, GFP_KERNEL).expect("memory");
            }
            first.sort_unstable();
            again.sort_unstable();
            assert!(first == again);
            assert_eq!(slabs(&c), 1);
            for &a in again.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            let s = c.stats();
            assert_eq!(
                s.get(Stat::AllocFast) + s.get(Stat::AllocSlow),
                2 * n as u64
            );
            assert_eq!(s.get(Stat::FreeFast), 2 * n as u64);
            assert!(c.destroy().is_ok());
        });
    }

    static CTOR_CALLS: AtomicUsize = AtomicUsize::new(0);
    const MAGIC: u64 = 0x5a5a_1234_dead_beef;

    /// Counts its calls and marks the object.
    ///
    /// # Safety
    ///
    /// `obj` must be a fresh object of at least 8 bytes.
    unsafe extern "C" fn test_ctor(obj: *mut core::ffi::c_void) {
        CTOR_CALLS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the constructor gets a fresh object of at least 24 bytes.
        unsafe { obj.cast::<u64>().write(MAGIC) };
    }

    #[test]
    fn constructor_runs_once_per_object_per_slab() {
        on(0, || {
            let ctor: Ctor = test_ctor;
            let c = Cache::create(&CacheArgs {
                ctor: Some(ctor),
                ..args(c"rslub_test_ctor", 24)
            })
            .expect("cache");
            let per_slab = c.layout().objects as usize;
            let before = CTOR_CALLS.load(Ordering::Relaxed);
            let mut objs: KVec<usize> = KVec::new();
            for _ in 0..per_slab + 1 {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                // SAFETY: a constructed object of 24 bytes.
                assert_eq!(unsafe { p.cast::<u64>().read() }, MAGIC);
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
            // Two slabs: every object of each constructed once.
            assert_eq!(CTOR_CALLS.load(Ordering::Relaxed) - before, 2 * per_slab);
            for &a in objs.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            for &a in objs.iter() {
                let _ = a;
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                // The free pointer lives after the object: the constructed value survives.
                // SAFETY: a live object of 24 bytes.
                assert_eq!(unsafe { p.cast::<u64>().read() }, MAGIC);
                // SAFETY: just allocated.
                unsafe { c.free(NonNull::new(p).expect("non-null")) };
            }
            assert_eq!(CTOR_CALLS.load(Ordering::Relaxed) - before, 2 * per_slab);
            assert!(c.destroy().is_ok());
        });
    }

    #[test]
    fn frees_from_another_cpu() {
        if Topology::read().online_cpus < 2 {
            skip(c"needs 2 online CPUs");
            return;
        }
        let c = Cache::create(&args(c"rslub_test_xcpu", 128)).expect("cache");
        let mut objs: KVec<usize> = KVec::new();
        let n = 3 * c.layout().objects as usize + 7;
        on(0, || {
            for _ in 0..n {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
        });
        let before = c.stats();
        on(1, || {
            for &a in objs.iter() {
                // SAFETY: allocated above from `c`, freed once, on another CPU.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
        });
        let d = c.stats().since(&before);
        // CPU 1 had no active slab of this cache: every free went to a slab it does not
        // own. The active slab of CPU 0 took some lock-free (frozen).
        assert_eq!(d.get(Stat::FreeSlow), n as u64);
        assert_eq!(d.get(Stat::FreeFast), 0);
        assert!(d.get(Stat::FreeFrozen) > 0);
        // CPU 0 takes the objects freed into its active slab back without a new slab.
        on(0, || {
            let before = c.stats();
            let p = c.alloc(Gfp::KERNEL).expect("object");
            let d = c.stats().since(&before);
            assert_eq!(d.get(Stat::NewSlab), 0);
            // SAFETY: just allocated.
            unsafe { c.free(p) };
        });
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn alloc_on_one_cpu_free_on_another_repeatedly() {
        if Topology::read().online_cpus < 2 {
            skip(c"needs 2 online CPUs");
            return;
        }
        let c = Cache::create(&args(c"rslub_test_pingpong", 64)).expect("cache");
        for _round in 0..20 {
            let mut objs: KVec<usize> = KVec::new();
            on(0, || {
                for _ in 0..500 {
                    let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                    // SAFETY: fresh object of 64 bytes.
                    unsafe { core::ptr::write_bytes(p, 0xa5, 64) };
                    objs.push(p as usize, GFP_KERNEL).expect("memory");
                }
            });
            on(1, || {
                for &a in objs.iter() {
                    // SAFETY: allocated on CPU 0, freed once here.
                    unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
                }
            });
        }
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn alloc_node_gives_memory_of_that_node() {
        let c = Cache::create(&args(c"rslub_test_node", 512)).expect("cache");
        on(0, || {
            // Nodes without memory have their own test (rslub_numa).
            for nid in online_nodes().filter(|&n| crate::shim::node_has_memory(n as i32)) {
                let nid = nid as i32;
                let before = c.stats();
                let mut objs: KVec<usize> = KVec::new();
                for _ in 0..50 {
                    let p = c.alloc_node(Gfp::KERNEL, nid).expect("object").as_ptr();
                    assert_eq!(node_of(p as usize), nid as u32);
                    objs.push(p as usize, GFP_KERNEL).expect("memory");
                }
                let d = c.stats().since(&before);
                // After the first switch, the node's slab is the CPU's: fast path.
                assert!(d.get(Stat::AllocFast) >= 40);
                if nid > 0 {
                    assert_eq!(d.get(Stat::NodeMismatch), 1);
                }
                for &a in objs.iter() {
                    // SAFETY: allocated above, freed once.
                    unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
                }
            }
        });
        // SAFETY: `nr_node_ids` is set during boot and never changes afterwards.
        let beyond = unsafe { kernel::bindings::nr_node_ids } as i32;
        // No node at all is no constraint, as a node without memory (6.12
        // slub.c:3756-3763): an object of any node.
        for bad in [beyond, beyond + 7, -2] {
            let p = c.alloc_node(Gfp::KERNEL, bad).expect("object of any node");
            // SAFETY: allocated just above, freed once.
            unsafe { c.free(p) };
        }
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn remote_walk_tries_each_node_once_and_only_with_several_nodes() {
        let nodes = Topology::read().online_nodes;
        let c = Cache::create(&args(c"rslub_test_walk", 1024)).expect("cache");
        // The tuned profile's walk (classic walks the zonelist).
        c.set_profile(Profile::Tuned);
        // No partial slab anywhere: every refill that finds nothing locally walks the
        // other nodes, and must look at each exactly once.
        c.set_remote_node_defrag_ratio(1024);
        let mut objs: KVec<usize> = KVec::new();
        on(0, || {
            for _ in 0..200 {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
        });
        let s = c.stats();
        if nodes == 1 {
            assert_eq!(s.get(Stat::RemoteWalk), 0);
            assert_eq!(s.get(Stat::RemoteNodesTried), 0);
            assert_eq!(s.get(Stat::RefillRemotePartial), 0);
            assert_eq!(s.get(Stat::NodesTried), s.get(Stat::GetPartial));
        } else {
            assert!(s.get(Stat::RemoteWalk) > 0);
            assert_eq!(
                s.get(Stat::RemoteNodesTried),
                s.get(Stat::RemoteWalk) * u64::from(nodes - 1)
            );
            assert_eq!(
                s.get(Stat::NodesTried),
                s.get(Stat::GetPartial) + s.get(Stat::RemoteNodesTried)
            );
        }
        // With `remote_node_defrag_ratio` 0 the walk never starts.
        c.set_remote_node_defrag_ratio(0);
        let before = c.stats();
        on(0, || {
            for _ in 0..100 {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
        });
        let d = c.stats().since(&before);
        assert!(d.get(Stat::GetPartial) > 0);
        assert_eq!(d.get(Stat::RemoteWalk), 0);
        if nodes > 1 {
            assert_eq!(d.get(Stat::RemoteWalkSkipped), d.get(Stat::GetPartial));
        }
        for &a in objs.iter() {
            // SAFETY: allocated above, freed once.
            unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
        }
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn zonelist_walk_revisits_nodes_as_slub_did() {
        let nodes = Topology::read().online_nodes;
        let c = Cache::create(&args(c"rslub_test_zonelist", 1024)).expect("cache");
        c.set_remote_node_defrag_ratio(1024);
        c.set_remote_walk(RemoteWalk::Zonelist);
        let mut objs: KVec<usize> = KVec::new();
        on(0, || {
            for _ in 0..100 {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
        });
        let s = c.stats();
        // Even on one node the old walk runs, and it looks at every zone's node: the
        // local node again, and every node at least once.
        assert!(s.get(Stat::RemoteWalk) > 0);
        let per_walk = s.get(Stat::RemoteNodesTried) / s.get(Stat::RemoteWalk);
        assert_eq!(s.get(Stat::RemoteNodesTried) % s.get(Stat::RemoteWalk), 0);
        assert!(per_walk >= u64::from(nodes));
        for &a in objs.iter() {
            // SAFETY: allocated above, freed once.
            unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
        }
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn refill_from_a_remote_partial_slab() {
        let topo = Topology::read();
        if topo.online_nodes < 2 {
            skip(c"needs 2 NUMA nodes");
            return;
        }
        let c = Cache::create(&args(c"rslub_test_remote", 1024)).expect("cache");
        c.set_min_partial(0);
        // The node lists' rules: frees put slabs there, not on this CPU's list.
        c.set_cpu_partial(0);
        c.set_remote_node_defrag_ratio(1024);
        // The last node with memory.
        let Some(far) = online_nodes()
            .filter(|&n| n != 0 && crate::shim::node_has_memory(n as i32))
            .last()
        else {
            skip(c"needs 2 NUMA nodes with memory");
            return;
        };
        let far = far as i32;
        let per_slab = c.layout().objects as usize;
        on(0, || {
            // Fill three slabs on the far node, then free one object of each: partial
            // slabs on the far node only.
            let mut objs: KVec<usize> = KVec::new();
            for _ in 0..3 * per_slab {
                let p = c.alloc_node(Gfp::KERNEL, far).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
            // Deactivate CPU 0's (far) active slab by asking for the local node.
            let local = c.alloc(Gfp::KERNEL).expect("object");
            for i in 0..3 {
                let a = objs[i * per_slab];
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            let (_, _, far_partial) = c.node_counts(far as u32);
            assert!(far_partial >= 2);
            // Use up the local slab; the next refill finds no local partial slab and
            // takes one from the far node.
            let before = c.stats();
            let mut more: KVec<usize> = KVec::new();
            while c.stats().since(&before).get(Stat::RefillRemotePartial) == 0
                && more.len() < 4 * per_slab
            {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                more.push(p as usize, GFP_KERNEL).expect("memory");
            }
            let d = c.stats().since(&before);
            assert_eq!(d.get(Stat::RefillRemotePartial), 1);
            // The object came from the far node's slab.
            assert_eq!(node_of(*more.last().expect("one")), far as u32);
            // SAFETY: allocated above.
            unsafe { c.free(local) };
            for &a in objs
                .iter()
                .enumerate()
                .filter(|(i, _)| i % per_slab != 0)
                .map(|(_, a)| a)
            {
                // SAFETY: allocated above, not freed yet.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            for &a in more.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
        });
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn empty_slabs_beyond_min_partial_go_back() {
        // Classic: a slab that empties on the node list counts itself among the node's
        // partial slabs (6.12 slub.c:4571), so the node keeps `min_partial - 1` of them;
        // tuned: it keeps `min_partial` besides it.
        for (profile, kept) in [(Profile::Classic, 4), (Profile::Tuned, 5)] {
            empty_slabs_go_back_beyond(profile, kept);
        }
    }

    fn empty_slabs_go_back_beyond(profile: Profile, kept: u32) {
        on(0, || {
            let c = Cache::create(&args(c"rslub_test_minpartial", 64)).expect("cache");
            c.set_profile(profile);
            // The node lists' rules: frees put slabs there, not on this CPU's list.
            c.set_cpu_partial(0);
            assert_eq!(c.min_partial(), 5);
            let min_partial = kept;
            let per_slab = c.layout().objects as usize;
            let mut objs: KVec<usize> = KVec::new();
            for _ in 0..12 * per_slab {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                objs.push(p as usize, GFP_KERNEL).expect("memory");
            }
            assert_eq!(slabs(&c), 12);
            for &a in objs.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            // The node keeps min_partial empty slabs, plus the CPU's active slab.
            assert_eq!(slabs(&c), i64::from(min_partial) + 1);
            let s = c.stats();
            assert_eq!(s.get(Stat::NewSlab), 12);
            assert_eq!(s.get(Stat::SlabFreed), 12 - u64::from(min_partial) - 1);
            // Allocating again takes the kept partial slabs before any new one.
            let before = c.stats();
            let mut again: KVec<usize> = KVec::new();
            for _ in 0..3 * per_slab {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr();
                again.push(p as usize, GFP_KERNEL).expect("memory");
            }
            let d = c.stats().since(&before);
            assert_eq!(d.get(Stat::NewSlab), 0);
            assert_eq!(d.get(Stat::RefillNodePartial), 2);
            for &a in again.iter() {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(a as *mut u8).expect("non-null")) };
            }
            // Shrinking gives the rest back: the page count is where it started.
            c.shrink();
            assert_eq!(slabs(&c), 0);
            let s = c.stats();
            assert_eq!(s.get(Stat::SlabFreed), s.get(Stat::NewSlab));
            assert!(c.destroy().is_ok());
        });
    }

    #[test]
    fn bulk_alloc_and_free() -> Result {
        let c = Cache::create(&args(c"rslub_test_bulk", 96))?;
        let mut v = KVec::from_elem(core::ptr::null_mut::<u8>(), 300, GFP_KERNEL)?;
        c.alloc_bulk(Gfp::KERNEL, &mut v)?;
        let mut addrs: KVec<usize> = KVec::with_capacity(300, GFP_KERNEL)?;
        for &p in v.iter() {
            assert!(!p.is_null());
            addrs.push(p as usize, GFP_KERNEL)?;
        }
        addrs.sort_unstable();
        for w in addrs.windows(2) {
            assert!(w[0] + 96 <= w[1]);
        }
        // SAFETY: all allocated above, freed once.
        unsafe { c.free_bulk(&mut v) };
        c.shrink();
        assert_eq!(slabs(&c), 0);
        assert!(c.destroy().is_ok());
        Ok(())
    }

    /// A bulk free of an array that also holds pointers that are not the cache's (what a
    /// backed cache's `kmem_cache_free_bulk()` hands rslub: `free_bulk_mixed`) frees the
    /// cache's own objects and gives every other pointer back, once, at the front of the
    /// array, untouched (no free pointer written into it), under both profiles; null
    /// entries are skipped. Where the cache looks at each object first (sanitizers,
    /// `init_on_free`) it frees nothing and says so.
    #[test]
    fn a_mixed_bulk_free_gives_back_what_is_not_the_caches() -> Result {
        for profile in [Profile::Classic, Profile::Tuned] {
            let c = Cache::create(&args(c"rslub_test_mixed", 64))?;
            let other = Cache::create(&args(c"rslub_test_mixed_other", 64))?;
            c.set_profile(profile);
            let mut mine = [core::ptr::null_mut::<u8>(); 12];
            c.alloc_bulk(Gfp::KERNEL, &mut mine)?;
            let mut theirs = [core::ptr::null_mut::<u8>(); 4];
            other.alloc_bulk(Gfp::KERNEL, &mut theirs)?;
            for &t in theirs.iter() {
                // SAFETY: A live object of 64 bytes.
                unsafe { core::ptr::write_bytes(t, 0x5a, 64) };
            }
            let (m, t) = (mine, theirs);
            let mut array = [
                m[0],
                t[0],
                m[1],
                m[2],
                core::ptr::null_mut(),
                t[1],
                m[3],
                m[4],
                m[5],
                t[2],
                m[6],
                m[7],
                m[8],
                m[9],
                m[10],
                t[3],
                m[11],
            ];
            // SAFETY: `c`'s objects and `other`'s, all live; `c`'s given up here.
            match unsafe { c.free_bulk_mixed(&mut array) } {
                None => {
                    // Nothing was freed: every object is still live.
                    assert!(crate::sanitize::ON || crate::shim::init_on_free() || c.is_debug());
                    // SAFETY: Live objects of `c`, freed once.
                    unsafe { c.free_bulk(&mut mine) };
                }
                Some(n) => {
                    assert_eq!(n, theirs.len());
                    let mut got = [0usize; 4];
                    for (g, &p) in got.iter_mut().zip(array.iter()) {
                        *g = p as usize;
                    }
                    let mut want = theirs.map(|p| p as usize);
                    got.sort_unstable();
                    want.sort_unstable();
                    assert_eq!(got, want);
                }
            }
            for &t in theirs.iter() {
                // SAFETY: `other`'s live objects of 64 bytes.
                let b = unsafe { core::slice::from_raw_parts(t, 64) };
                assert!(b.iter().all(|&x| x == 0x5a));
            }
            // SAFETY: `other`'s objects, still live, freed once.
            unsafe { other.free_bulk(&mut theirs) };
            // Every object of either cache is back: both go.
            assert!(c.destroy().is_ok());
            assert!(other.destroy().is_ok());
        }
        Ok(())
    }

    #[test]
    fn invalid_arguments_create_nothing() {
        let bad = |name: &CStr, size: u32, align: u32, flags: u32| {
            Cache::create(&CacheArgs {
                align,
                flags,
                ..args(name, size)
            })
            .map(|_| ())
        };
        assert_eq!(bad(c"rslub_test_bad", 0, 0, 0), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, 3, 0), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", (4096 << 10) + 1, 0, 0), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, 0, 1 << 9), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, 0, 1 << 7), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, 0, u32::MAX), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", u32::MAX, 0, 0), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, 8192 << 10, 0), Err(EINVAL));
        assert_eq!(bad(c"rslub_test_bad", 64, u32::MAX, 0), Err(EINVAL));
        // The largest object fits alone, not with owner records after it.
        let max = 4096 << 10;
        assert_eq!(bad(c"rslub_test_bad", max, 0, STORE_USER), Err(EINVAL));
        assert_eq!(bad(c"", 64, 0, 0), Err(EINVAL));
        let first = Cache::create(&args(c"rslub_test_dup", 64)).expect("cache");
        assert_eq!(bad(c"rslub_test_dup", 32, 0, 0), Err(EEXIST));
        assert!(first.destroy().is_ok());
        // The failures left nothing behind: the names are free.
        let again = Cache::create(&args(c"rslub_test_bad", 64)).expect("cache");
        let dup = Cache::create(&args(c"rslub_test_dup", 64)).expect("cache");
        assert!(again.destroy().is_ok());
        assert!(dup.destroy().is_ok());
        let hw = Cache::create(&CacheArgs {
            flags: HWCACHE_ALIGN,
            ..args(c"rslub_test_hw", 40)
        })
        .expect("cache");
        let p = hw.alloc(Gfp::KERNEL).expect("object");
        assert_eq!(p.as_ptr() as usize % 64, 0);
        // SAFETY: just allocated.
        unsafe { hw.free(p) };
        assert!(hw.destroy().is_ok());
    }

    #[test]
    fn destroy_with_live_objects_reports_and_keeps_them() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_leak");
        let c = Cache::create(&args(c"rslub_test_leak", 128)).expect("cache");
        let a = c.alloc(Gfp::KERNEL).expect("object");
        let b = c.alloc(Gfp::KERNEL).expect("object");
        let d = c.alloc(Gfp::KERNEL).expect("object");
        // SAFETY: just allocated.
        unsafe { c.free(b) };
        let kept: *const CacheCore = &*c;
        let r = c.destroy();
        assert_eq!(r.map_err(|l| l.0), Err(2));
        // The memory under the live objects is still there.
        // SAFETY: `a` and `d` are still allocated; their slab was kept.
        unsafe {
            a.as_ptr().write_bytes(0x11, 128);
            d.as_ptr().write_bytes(0x22, 128);
        }
        // The name is free again.
        let c2 = Cache::create(&args(c"rslub_test_leak", 128)).expect("cache");
        assert!(c2.destroy().is_ok());
        // The cache stays, as SLUB keeps one: its objects can still be freed into it, and
        // then it goes at unload (the kmemleak scan after `rmmod rslub_kunit`, on the debug
        // kernel, finds nothing of it).
        // SAFETY: `kept` is kept for `a` and `d`, allocated from it and freed once here.
        unsafe {
            (*kept).free(a);
            (*kept).free(d);
        }
    }

    #[test]
    fn fast_paths_are_taken_and_counted() {
        on(0, || {
            let c = Cache::create(&args(c"rslub_test_fast", 64)).expect("cache");
            let p = c.alloc(Gfp::KERNEL).expect("object");
            // SAFETY: just allocated.
            unsafe { c.free(p) };
            let before = c.stats();
            for _ in 0..100 {
                let p = c.alloc(Gfp::KERNEL).expect("object");
                // SAFETY: just allocated.
                unsafe { c.free(p) };
            }
            let d = c.stats().since(&before);
            assert_eq!(d.get(Stat::AllocFast), 100);
            assert_eq!(d.get(Stat::FreeFast), 100);
            assert_eq!(d.get(Stat::AllocSlow), 0);
            assert_eq!(d.get(Stat::FreeSlow), 0);
            assert!(c.destroy().is_ok());
        });
        let _ = NO_NODE;
    }

    /// The word a free object holds at `free_offset`.
    fn stored_word(object: usize, offset: u32) -> usize {
        // SAFETY: `object` is a free object of a live cache owned by the test (on this
        // CPU's list); the word is inside it and aligned.
        unsafe { ((object + offset as usize) as *const usize).read_volatile() }
    }

    /// Free pointers are stored hardened (mixed with a per-cache random value and their
    /// own address): the word in a free object is not the address of the next one.
    #[test]
    fn free_pointers_are_not_stored_plain() {
        if !hardened() {
            return;
        }
        on(0, || {
            let c = Cache::create(&args(c"rslub_test_hardened", 64)).expect("cache");
            let off = c.layout().free_offset;
            // A fresh slab (its free list may be shuffled): z freed, then y, whose free
            // pointer then leads to z.
            let x = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            let y = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            let z = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            // SAFETY: allocated above, freed once each.
            unsafe {
                c.free(NonNull::new(z as *mut u8).expect("non-null"));
                c.free(NonNull::new(y as *mut u8).expect("non-null"));
            }
            let word = stored_word(y, off);
            assert!(word != z && word != 0);
            // ... and it still leads to the next object: the CPU's list is whole.
            assert_eq!(c.check_this_cpu(), Ok(c.layout().objects - 1));
            // SAFETY: allocated above, freed once.
            unsafe { c.free(NonNull::new(x as *mut u8).expect("non-null")) };
            assert!(c.destroy().is_ok());
        });
    }

    /// A plain address written over a free object's free pointer (a use-after-free write)
    /// is caught before it is followed: reported, counted, the list cut there; the
    /// written address is never handed out and the cache goes on working. The objects
    /// after the cut stay out for good: destruction finds them still allocated.
    #[test]
    fn an_overwritten_free_pointer_is_caught() {
        // It provokes rslub's reports on purpose.
        expect_reports(c"rslub_test_overwrite");
        if !hardened() {
            return;
        }
        on(0, || {
            let c = Cache::create(&args(c"rslub_test_overwrite", 64)).expect("cache");
            let (off, per_slab) = (c.layout().free_offset, c.layout().objects);
            let x = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            let y = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            // SAFETY: allocated above, freed once.
            unsafe { c.free(NonNull::new(y as *mut u8).expect("non-null")) };
            // The attacker's write: x's address, plain, into free object y.
            // SAFETY: `y` is a free object on this CPU's list, owned by the test.
            unsafe { ((y + off as usize) as *mut usize).write_volatile(x) };
            let before = c.stats();
            let a = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
            assert_eq!(a, y);
            assert_eq!(c.stats().since(&before).get(Stat::FreelistCorrupt), 1);
            let mut objs = KVec::new();
            for _ in 0..3 * per_slab {
                let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
                assert!(p != x && p != a);
                objs.push(p, GFP_KERNEL).expect("memory");
            }
            assert_eq!(c.stats().since(&before).get(Stat::FreelistCorrupt), 1);
            for p in Iterator::chain(objs.into_iter(), [a, x]) {
                // SAFETY: allocated above, freed once.
                unsafe { c.free(NonNull::new(p as *mut u8).expect("non-null")) };
            }
            // Objects 2.. of the first slab were cut off with the list.
            assert_eq!(c.destroy().map_err(|l| l.0), Err(u64::from(per_slab - 2)));
        });
    }
}
