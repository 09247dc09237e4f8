// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_cpu_partial`: each CPU's partial list (classic SLUB's
//! `CONFIG_SLUB_CPU_PARTIAL`): a free that makes a full slab partial puts it there
//! without the node lock, the CPU refills from it before its node, it goes back to the
//! node when it would hold more than `cpu_partial` objects' worth, on flush, and not at
//! all with `cpu_partial` 0; frees that empty a slab on the list take no node lock.

use kernel::prelude::*;

#[kunit_tests(rslub_cpu_partial)]
mod tests {
    use crate::{
        cache::NO_NODE,
        common::{alloc_n, args, free, pin, unpin},
        registry::Cache,
        shim,
        stats::Stat,
    };
    use kernel::prelude::*;

    /// A cache of 256-byte objects whose CPU partial list holds at most `slabs` slabs,
    /// with `n` full slabs of objects allocated on CPU 0 (the last is CPU 0's active
    /// slab). Returns the cache and the objects, slab by slab.
    fn setup(name: &'static CStr, slabs: u32, n: usize) -> (Cache, KVec<usize>, usize) {
        pin(0);
        let c = Cache::create(&args(name, 256)).expect("cache");
        let per = c.layout().objects;
        // `cpu_partial` objects count as half a slab each (SLUB's rule).
        c.set_cpu_partial(slabs * per / 2);
        let objs = alloc_n(&c, n * per as usize, NO_NODE);
        (c, objs, per as usize)
    }

    fn node() -> u32 {
        shim::numa_mem_id().unsigned_abs()
    }

    /// Frees every object of `objs` the test has not freed (`freed(i)` for the `i`th),
    /// lets the task run anywhere again, and destroys the cache, which must hold nothing.
    fn finish(c: Cache, objs: &[usize], freed: impl Fn(usize) -> bool) {
        for (i, &p) in objs.iter().enumerate() {
            if !freed(i) {
                free(&c, p);
            }
        }
        unpin();
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn a_full_slab_made_partial_goes_to_the_cpu_and_refills_it_first() {
        let (c, objs, per) = setup(c"rslub_test_cpp_refill", 4, 4);
        // Slabs 0..=2 are full and on no list; slab 3 is the CPU's.
        let (a, b) = (objs[3], objs[per + 5]);
        let before = c.stats();
        free(&c, a);
        free(&c, b);
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::CpuPartialFree), 2);
        assert_eq!(s.get(Stat::NodeLock), 0);
        assert_eq!(c.node_counts(node()).2, 0);
        // The active slab is exhausted: the next allocation takes the slab made partial
        // last, with no node lock; then the one before it.
        let before = c.stats();
        let x = c.alloc(crate::gfp::Gfp::KERNEL).expect("object").as_ptr() as usize;
        let y = c.alloc(crate::gfp::Gfp::KERNEL).expect("object").as_ptr() as usize;
        let s = c.stats().since(&before);
        assert_eq!((x, y), (b, a));
        assert_eq!(s.get(Stat::CpuPartialAlloc), 2);
        assert_eq!(s.get(Stat::RefillNodePartial), 0);
        assert_eq!(s.get(Stat::NewSlab), 0);
        assert_eq!(s.get(Stat::NodeLock), 0);
        finish(c, &objs, |_| false);
    }

    #[test]
    fn the_list_goes_back_to_the_node_at_its_limit() {
        let (c, objs, per) = setup(c"rslub_test_cpp_drain", 2, 5);
        let before = c.stats();
        // One object of each of slabs 0, 1, 2: the third put finds two slabs there.
        for k in 0..3 {
            free(&c, objs[k * per]);
        }
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::CpuPartialFree), 3);
        assert_eq!(s.get(Stat::CpuPartialDrain), 1);
        assert_eq!(c.node_counts(node()).2, 2);
        finish(c, &objs, |i| i % per == 0 && i < 3 * per);
    }

    #[test]
    fn a_refill_from_the_node_takes_half_the_limit_and_one_more_for_the_cpu() {
        let (c, objs, per) = setup(c"rslub_test_cpp_node", 4, 7);
        // With the list off, slabs 0..=5 go to the node as they become partial.
        c.set_cpu_partial(0);
        for k in 0..6 {
            free(&c, objs[k * per]);
        }
        assert_eq!(c.node_counts(node()).2, 6);
        c.set_cpu_partial(4 * per as u32 / 2);
        // The CPU's slab (6) is exhausted: the refill takes one slab from the node to
        // allocate from, and three more (half of four, and one) for the CPU's list, as
        // 6.12's `get_partial_node()`.
        let before = c.stats();
        let x = c.alloc(crate::gfp::Gfp::KERNEL).expect("object").as_ptr() as usize;
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::RefillNodePartial), 1);
        assert_eq!(s.get(Stat::CpuPartialNode), 3);
        assert_eq!(c.node_counts(node()).2, 2);
        free(&c, x);
        finish(c, &objs, |i| i % per == 0 && i < 6 * per);
    }

    #[test]
    fn flush_gives_the_list_back() {
        let (c, objs, per) = setup(c"rslub_test_cpp_flush", 4, 3);
        free(&c, objs[0]);
        free(&c, objs[per]);
        assert_eq!(c.node_counts(node()).2, 0);
        c.shrink();
        // Both partial slabs are on the node list now, the exhausted active slab on none.
        assert_eq!(c.node_counts(node()).2, 2);
        assert_eq!(c.validate().expect("memory").errors, 0);
        finish(c, &objs, |i| i == 0 || i == per);
    }

    /// A slab on a CPU's partial list that frees empty takes no node lock: it stays on
    /// the list, and goes back (here to the page allocator, by shrink) with the list.
    #[test]
    fn a_slab_on_the_cpu_list_empties_without_the_node_lock() {
        let (c, objs, per) = setup(c"rslub_test_cpp_empty", 4, 3);
        // Slab 0 onto the CPU's list, then the rest of its objects freed.
        let before = c.stats();
        for &p in &objs[..per] {
            free(&c, p);
        }
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::CpuPartialFree), 1);
        assert_eq!(s.get(Stat::FreeSlow), per as u64);
        assert_eq!((s.get(Stat::NodeLock), s.get(Stat::FreeLocked)), (0, 0));
        assert_eq!(c.node_counts(node()), (3, 3 * per as i64, 0));
        // Given back empty: the node keeps no empty slab after a shrink.
        let before = c.stats();
        c.shrink();
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::SlabFreed), 1);
        assert_eq!(c.node_counts(node()).0, 2);
        assert_eq!(c.validate().expect("memory").errors, 0);
        finish(c, &objs, |i| i < per);
    }

    /// A full slab freed whole at once (a bulk free) goes to the CPU's list too, as in
    /// SLUB, not back to the page allocator; the next refill takes it from there.
    #[test]
    fn a_full_slab_freed_whole_is_kept_on_the_cpu_list_and_reused() {
        let (c, objs, per) = setup(c"rslub_test_cpp_whole", 4, 3);
        let mut slab0: KVec<*mut u8> = {
            let mut v = KVec::new();
            for &p in &objs[..per] {
                v.push(p as *mut u8, GFP_KERNEL).expect("memory");
            }
            v
        };
        let before = c.stats();
        // SAFETY: live objects of `c`, freed once here and never used again.
        unsafe { c.free_bulk(&mut slab0) };
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::CpuPartialFree), 1);
        assert_eq!((s.get(Stat::NodeLock), s.get(Stat::SlabFreed)), (0, 0));
        // The active slab (2) is exhausted: the next allocation reuses slab 0.
        let before = c.stats();
        let x = c.alloc(crate::gfp::Gfp::KERNEL).expect("object").as_ptr() as usize;
        let s = c.stats().since(&before);
        assert!(objs[..per].contains(&x));
        assert_eq!((s.get(Stat::CpuPartialAlloc), s.get(Stat::NewSlab)), (1, 0));
        free(&c, x);
        finish(c, &objs, |i| i < per);
    }

    #[test]
    fn zero_turns_the_list_off() {
        let (c, objs, per) = setup(c"rslub_test_cpp_off", 4, 3);
        c.set_cpu_partial(0);
        let before = c.stats();
        free(&c, objs[0]);
        free(&c, objs[per]);
        let s = c.stats().since(&before);
        assert_eq!(s.get(Stat::CpuPartialFree), 0);
        assert_eq!(s.get(Stat::FreeLocked), 2);
        assert_eq!(c.node_counts(node()).2, 2);
        finish(c, &objs, |i| i == 0 || i == per);
    }

    #[test]
    fn cpu_partial_follows_the_object_size() {
        use crate::layout::cpu_partial_for;
        assert_eq!(cpu_partial_for(8), 120);
        assert_eq!(cpu_partial_for(255), 120);
        assert_eq!(cpu_partial_for(256), 52);
        assert_eq!(cpu_partial_for(1024), 24);
        assert_eq!(cpu_partial_for(4096), 6);
        let c = Cache::create(&args(c"rslub_test_cpp_size", 300)).expect("cache");
        assert_eq!(c.cpu_partial(), 52);
        assert!(c.destroy().is_ok());
    }
}
