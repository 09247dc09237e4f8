// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_slabfs`: the files of a cache shaped like SLUB's
//! `/sys/kernel/slab/<cache>/` (`rust/debugfs.rs`), opened, read and written through the
//! VFS as `tools/mm/slabinfo` does: every file of the table with the access it declares,
//! SLUB's formats with their per-node and per-CPU parts, the counters SLUB had and what
//! each counts, writing 0 to clear one, and `shrink`.

use kernel::prelude::*;

#[kunit_tests(rslub_slabfs)]
mod tests {
    use crate::{
        cache::{CacheArgs, Ctor, NO_NODE},
        common::{alloc_n, free, free_all, have_two_cpus, pin, unpin},
        debugfs::files,
        gfp::Gfp,
        inject::{install, Point},
        layout::{HWCACHE_ALIGN, POISON, RED_ZONE, SANITY, STORE_USER},
        percpu::online_cpus,
        registry::Cache,
        stats::Stat,
        test_shim::{node_of, read_file, write_file},
        topology::online_nodes,
    };
    use core::sync::atomic::{AtomicU32, Ordering::SeqCst};
    use kernel::{error::code::EINVAL, prelude::*, str::CString};

    fn path(cache: &CStr, file: &str) -> CString {
        CString::try_from_fmt(fmt!("rslub_kunit/{}/{file}", cache.to_str().expect("name")))
            .expect("path")
    }

    /// The file's contents, as text.
    fn read(cache: &CStr, file: &str) -> KVec<u8> {
        let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL).expect("memory");
        let n = read_file(&path(cache, file), &mut buf).expect("readable");
        buf.truncate(n);
        buf
    }

    fn write(cache: &CStr, file: &str, v: &str) -> Result<usize> {
        write_file(&path(cache, file), v.as_bytes())
    }

    /// A file's first number (the total of a counter, or a file's only number).
    fn number(cache: &CStr, file: &str) -> u64 {
        let b = read(cache, file);
        core::str::from_utf8(&b)
            .expect("text")
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .expect("a number")
    }

    /// A file as SLUB's `show_slab_objects()` and `show_stat()` write it: the total, then
    /// ` <tag><id>=<value>` parts. Returns the total and the parts.
    fn parts(cache: &CStr, file: &str, tag: char) -> (u64, KVec<(u32, u64)>) {
        let b = read(cache, file);
        let s = core::str::from_utf8(&b).expect("text");
        assert!(s.ends_with('\n'));
        let mut words = s.split_whitespace();
        let total = words.next().expect("total").parse().expect("a number");
        let mut v = KVec::new();
        for w in words {
            let (id, value) = w
                .strip_prefix(tag)
                .and_then(|w| w.split_once('='))
                .expect("a part");
            let part = (id.parse().expect("id"), value.parse().expect("value"));
            v.push(part, GFP_KERNEL).expect("memory");
        }
        (total, v)
    }

    /// [`parts`] of a per-node file, checked: the parts add up to the total, none is 0,
    /// and each is an online node. Returns the value of every online node.
    fn per_node(cache: &CStr, file: &str) -> (u64, KVec<(u32, u64)>) {
        let (total, v) = parts(cache, file, 'N');
        assert_eq!(v.iter().map(|&(_, x)| x).sum::<u64>(), total);
        assert!(v
            .iter()
            .all(|&(n, x)| x != 0 && online_nodes().any(|o| o == n)));
        (total, v)
    }

    /// The value `parts` gives for `id` (0 when the part is left out).
    fn part(v: &[(u32, u64)], id: u32) -> u64 {
        v.iter().find(|&&(i, _)| i == id).map_or(0, |&(_, x)| x)
    }

    #[test]
    fn every_file_of_the_table_reads_and_only_tunables_take_writes() {
        let name = c"rslub_test_slabfs_all";
        let c = Cache::create(&crate::common::args(name, 100)).expect("cache");
        let mut n = 0;
        for (file, attr) in files() {
            let file = file.to_str().expect("name");
            // Unique names: a second file of the same name would not have been created.
            assert_eq!(files().filter(|(f, _)| f.to_str() == Ok(file)).count(), 1);
            let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL).expect("memory");
            assert!(read_file(&path(name, file), &mut buf).is_ok());
            if attr.writable() {
                // No writable file takes text, a negative number or one beyond 32 bits,
                // and a refused write changes nothing it shows.
                let before = read(name, file);
                for bad in ["x", "-1", "4294967296"] {
                    assert_eq!(write(name, file, bad), Err(EINVAL));
                }
                assert_eq!(read(name, file), before);
            } else {
                assert!(write(name, file, "0").is_err());
                assert!(write(name, file, "1").is_err());
            }
            n += 1;
        }
        // Every counter has its file, under SLUB's name where SLUB had the counter.
        assert!(n > Stat::ALL.len());
        assert_eq!(number(name, "alloc_fastpath"), 0);
        assert!(read_file(&path(name, "alloc_fast"), &mut [0u8; 16]).is_err());
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn geometry_and_flags_read_as_slub_shows_them() {
        let name = c"rslub_test_slabfs_geometry";
        let c = Cache::create(&CacheArgs {
            name,
            size: 100,
            align: 0,
            flags: HWCACHE_ALIGN,
            ctor: None,
            freeptr_offset: None,
        })
        .expect("cache");
        let l = *c.layout();
        assert_eq!(number(name, "object_size"), 100);
        assert_eq!(number(name, "slab_size"), u64::from(l.size));
        assert_eq!(number(name, "align"), u64::from(l.align));
        assert_eq!(number(name, "order"), u64::from(l.order));
        assert_eq!(number(name, "objs_per_slab"), u64::from(l.objects));
        assert_eq!(number(name, "hwcache_align"), 1);
        for file in ["sanity_checks", "red_zone", "poison", "store_user"] {
            assert_eq!(number(name, file), 0);
        }
        for file in [
            "aliases",
            "reclaim_account",
            "destroy_by_rcu",
            "cache_dma",
            "trace",
        ] {
            assert_eq!(number(name, file), 0);
        }
        assert!(read(name, "ctor").is_empty());
        assert!(c.destroy().is_ok());

        let name = c"rslub_test_slabfs_debug";
        let c = Cache::create(&CacheArgs {
            name,
            size: 100,
            align: 0,
            flags: SANITY | RED_ZONE | POISON | STORE_USER,
            ctor: None,
            freeptr_offset: None,
        })
        .expect("cache");
        assert_eq!(number(name, "hwcache_align"), 0);
        for file in ["sanity_checks", "red_zone", "poison", "store_user"] {
            assert_eq!(number(name, file), 1);
        }
        // The stride grows with the red zone and the owner records.
        assert!(number(name, "slab_size") > 100 + 8);
        assert!(c.destroy().is_ok());
    }

    /// # Safety
    ///
    /// `obj` is a fresh object of at least 8 bytes.
    unsafe extern "C" fn slabfs_test_ctor(obj: *mut core::ffi::c_void) {
        // SAFETY: the constructor gets a fresh object of at least 8 bytes.
        unsafe { obj.cast::<u64>().write(7) };
    }

    #[test]
    fn ctor_shows_the_constructor() {
        let name = c"rslub_test_slabfs_ctor";
        let ctor: Ctor = slabfs_test_ctor;
        let c = Cache::create(&CacheArgs {
            name,
            size: 64,
            align: 0,
            flags: 0,
            ctor: Some(ctor),
            freeptr_offset: None,
        })
        .expect("cache");
        let b = read(name, "ctor");
        let s = core::str::from_utf8(&b).expect("text");
        // `%pS`: the (mangled) symbol, its offset and size, and the module.
        assert!(s.contains("slabfs_test_ctor+0x0/"));
        assert!(s.trim_end().ends_with("[rslub_kunit]"));
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn slabs_and_objects_per_node() {
        let name = c"rslub_test_slabfs_counts";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        // Frees of full slabs go to the node's list, and it keeps every partial slab.
        c.set_cpu_partial(0);
        c.set_min_partial(100);
        let per = c.layout().objects as usize;
        pin(0);
        // Three slabs: two full ones and the active one, full too.
        let objs = alloc_n(&c, 3 * per, NO_NODE);
        let node = node_of(objs[0]);
        // One object of the first slab freed: it goes on the node's partial list.
        free(&c, objs[0]);
        let per = per as u64;
        let (slabs, by_node) = per_node(name, "slabs");
        assert_eq!(slabs, 3);
        assert_eq!(part(&by_node, node), 3);
        let (partial, by_node) = per_node(name, "partial");
        assert_eq!(partial, 1);
        assert_eq!(part(&by_node, node), 1);
        assert_eq!(per_node(name, "total_objects").0, 3 * per);
        // SLUB's count: every object but the free ones on the node partial lists.
        assert_eq!(per_node(name, "objects").0, 3 * per - 1);
        assert_eq!(per_node(name, "objects_partial").0, per - 1);
        // The active slab is this CPU's.
        let (cpu_slabs, by_node) = per_node(name, "cpu_slabs");
        assert_eq!(cpu_slabs, 1);
        assert_eq!(part(&by_node, node), 1);
        for nid in online_nodes() {
            let (slabs, objects, partial) = c.node_counts(nid);
            assert_eq!(part(&per_node(name, "slabs").1, nid) as i64, slabs);
            assert_eq!(
                part(&per_node(name, "total_objects").1, nid) as i64,
                objects
            );
            assert_eq!(part(&per_node(name, "partial").1, nid), u64::from(partial));
        }
        unpin();
        free_all(&c, &objs[1..]);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn cpu_slabs_and_slabs_cpu_partial_count_this_cpu_s_lists() {
        let name = c"rslub_test_slabfs_cpu";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        let per = c.layout().objects as usize;
        pin(0);
        // The first slab full, the second active.
        let objs = alloc_n(&c, per + 1, NO_NODE);
        let node = node_of(objs[0]);
        // A free into the full slab puts it on this CPU's partial list.
        free(&c, objs[0]);
        let (cpu_slabs, by_node) = per_node(name, "cpu_slabs");
        assert_eq!(cpu_slabs, 2);
        assert_eq!(part(&by_node, node), 2);
        // `objects(slabs)`, the objects estimated as half of each slab.
        let b = read(name, "slabs_cpu_partial");
        let want = CString::try_from_fmt(fmt!("{}(1) C0={}(1)\n", per / 2, per / 2)).expect("text");
        assert_eq!(&b[..], want.to_bytes());
        unpin();
        free_all(&c, &objs[1..]);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn counters_sum_the_cpus_and_clear_on_0() {
        let name = c"rslub_test_slabfs_stats";
        let c = Cache::create(&crate::common::args(name, 64)).expect("cache");
        let cpus: &[u32] = if have_two_cpus() { &[0, 1] } else { &[0] };
        for &cpu in cpus {
            pin(cpu);
            let objs = alloc_n(&c, 3 + cpu as usize, NO_NODE);
            free_all(&c, &objs);
        }
        unpin();
        // Nothing else uses the cache: the counters stand still while read.
        let s = c.stats();
        for st in Stat::ALL {
            let file = st.file_name().to_str().expect("name");
            let (total, by_cpu) = parts(name, file, 'C');
            assert_eq!(total, s.get(st));
            assert_eq!(by_cpu.iter().map(|&(_, x)| x).sum::<u64>(), total);
            for cpu in online_cpus() {
                assert_eq!(part(&by_cpu, cpu.as_u32()), c.stat_on(cpu, st));
            }
        }
        let (total, by_cpu) = parts(name, "alloc_fastpath", 'C');
        assert_eq!(part(&by_cpu, 0), 2);
        if cpus.len() == 2 {
            assert_eq!(part(&by_cpu, 1), 3);
        }
        // Writing 0 clears a counter on every CPU, and only that one; anything else is
        // refused.
        let frees = number(name, "free_fastpath");
        for bad in ["1", "-0", "x", ""] {
            assert_eq!(write(name, "alloc_fastpath", bad), Err(EINVAL));
            assert_eq!(parts(name, "alloc_fastpath", 'C').0, total);
        }
        assert_eq!(write(name, "alloc_fastpath", "0\n"), Ok(2));
        assert_eq!(&read(name, "alloc_fastpath")[..], b"0\n");
        assert_eq!(c.stats().get(Stat::AllocFast), 0);
        assert_eq!(number(name, "free_fastpath"), frees);
        assert!(c.destroy().is_ok());
    }

    /// What SLUB's `deactivate_*` counters count, through the files, each from a flush
    /// of this CPU's active slab (`shrink`).
    #[test]
    fn deactivate_counters_say_where_the_active_slab_went() {
        let name = c"rslub_test_slabfs_deactivate";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        c.set_cpu_partial(0);
        let per = c.layout().objects as usize;
        pin(0);
        let count = |file: &str| number(name, file);
        // Full: every object allocated, the slab still active.
        let full = alloc_n(&c, per, NO_NODE);
        assert_eq!(write(name, "shrink", "1"), Ok(1));
        assert_eq!(count("deactivate_full"), 1);
        // Partial: to the head of the node's list.
        let one = alloc_n(&c, 1, NO_NODE);
        assert_eq!(write(name, "shrink", "1"), Ok(1));
        assert_eq!(count("deactivate_to_head"), 1);
        // Empty, with the node keeping no partial slab: back to the page allocator (the
        // partial slab above goes first, emptied on the node's list).
        c.set_min_partial(0);
        free_all(&c, &one);
        let slabs = count("free_slab");
        free_all(&c, &alloc_n(&c, 1, NO_NODE));
        assert_eq!(write(name, "shrink", "1"), Ok(1));
        assert_eq!(count("deactivate_empty"), 1);
        assert_eq!(count("free_slab"), slabs + 1);
        assert_eq!(count("deactivate_to_head"), 1);
        assert_eq!(count("deactivate_remote_frees"), 0);
        // Bypass: the active slab ran out and nothing was freed into it.
        let before = count("deactivate_bypass");
        let more = alloc_n(&c, per + 1, NO_NODE);
        assert_eq!(count("deactivate_bypass"), before + 1);
        unpin();
        free_all(&c, &full);
        free_all(&c, &more);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn deactivate_remote_frees_counts_objects_other_cpus_freed() {
        if !have_two_cpus() {
            return;
        }
        let name = c"rslub_test_slabfs_remote";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        pin(0);
        let objs = alloc_n(&c, 2, NO_NODE);
        // Freed on CPU 1 into CPU 0's active slab: onto the slab's shared list.
        pin(1);
        free(&c, objs[0]);
        assert_eq!(number(name, "free_frozen"), 1);
        assert_eq!(write(name, "shrink", "1"), Ok(1));
        assert_eq!(number(name, "deactivate_remote_frees"), 1);
        unpin();
        free(&c, objs[1]);
        assert!(c.destroy().is_ok());
    }

    /// `free_add_partial`, `free_remove_partial` and `alloc_from_partial`: a slab going
    /// onto the node's list by a free, coming off it emptied, and taken by a refill.
    #[test]
    fn node_list_counters_follow_a_slab() {
        let name = c"rslub_test_slabfs_node_list";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        c.set_cpu_partial(0);
        c.set_min_partial(0);
        let per = c.layout().objects as usize;
        pin(0);
        let count = |file: &str| number(name, file);
        // The first slab full, the second active.
        let mut objs = alloc_n(&c, per + 1, NO_NODE);
        free(&c, objs[0]);
        assert_eq!(count("free_add_partial"), 1);
        // The active slab used up: the refill takes the partial slab back.
        let more = alloc_n(&c, per, NO_NODE);
        assert_eq!(count("alloc_from_partial"), 1);
        // Free everything: the second slab, full and off the lists since the refill, goes
        // back on the node's list with its first free, and its last free empties it
        // there: it leaves the list for the page allocator (min_partial 0).
        free_all(&c, &more);
        objs.remove(0).expect("object");
        let removed = count("free_remove_partial");
        free_all(&c, &objs);
        assert!(count("free_remove_partial") > removed);
        unpin();
        assert!(c.destroy().is_ok());
    }

    /// `cmpxchg_double_cpu_fail`: an allocation and a free on this CPU between the fast
    /// path's reads and its commit (as an interrupt's) make the commit fail, though the
    /// head is the same object again (the `tid` moved on); the fast path starts again.
    /// The inner object is given back before the outer path reads its free pointer:
    /// with `init_on_alloc` (the distro kernel) a zeroed free pointer would send the
    /// outer path to the interrupts-off path before its commit.
    #[test]
    fn a_broken_commit_is_counted_and_retried() {
        let name = c"rslub_test_slabfs_commit";
        let c = Cache::create(&crate::common::args(name, 64)).expect("cache");
        pin(0);
        // An active slab with free objects, so the next allocations are fast.
        let first = alloc_n(&c, 1, NO_NODE);
        let step = AtomicU32::new(0);
        let inner = core::sync::atomic::AtomicUsize::new(0);
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache == id
                && p == Point::AllocHeadRead
                && step.compare_exchange(0, 1, SeqCst, SeqCst).is_ok()
            {
                let q = c.alloc(Gfp::KERNEL).expect("object");
                inner.store(q.as_ptr() as usize, SeqCst);
                // SAFETY: `q` was just allocated from `c` and is not used again.
                unsafe { c.free(q) };
            }
            false
        };
        let outer = {
            let _h = install(&hook).expect("hook");
            c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize
        };
        unpin();
        let q = inner.load(SeqCst);
        assert!(q != 0);
        assert_eq!(number(name, "cmpxchg_double_cpu_fail"), 1);
        free_all(&c, &[first[0], outer]);
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn shrink_gives_every_empty_slab_back() {
        let name = c"rslub_test_slabfs_shrink";
        let c = Cache::create(&crate::common::args(name, 256)).expect("cache");
        let per = c.layout().objects as usize;
        pin(0);
        free_all(&c, &alloc_n(&c, 4 * per, NO_NODE));
        unpin();
        // The node and this CPU keep some of the empty slabs.
        assert!(per_node(name, "slabs").0 > 0);
        for bad in ["0", "2", "yes", ""] {
            assert_eq!(write(name, "shrink", bad), Err(EINVAL));
        }
        assert!(per_node(name, "slabs").0 > 0);
        assert_eq!(write(name, "shrink", "1\n"), Ok(2));
        assert_eq!(&read(name, "slabs")[..], b"0\n");
        assert!(read(name, "shrink").is_empty());
        assert!(c.destroy().is_ok());
    }
}

/// KUnit suite `rslub_whatif`: the layout what-if (`layout::WhatIf`), its rule against
/// what the kernel's own allocator chooses for caches it really creates, and the
/// module-wide `layout_whatif` file.
#[kunit_tests(rslub_whatif)]
mod whatif {
    use crate::{
        layout::{self, slab_bytes, Layout, OrderRules, WhatIf},
        test_shim::{read_file, skip, write_file, KernelCache},
        topology::Topology,
    };
    use kernel::{error::code::EINVAL, prelude::*, str::CString};

    const RULES: OrderRules = OrderRules {
        min_order: 0,
        max_order: 3,
        min_objects: 16,
    };

    #[test]
    fn every_order_with_its_objects_and_the_chosen_ones() {
        let kernel = layout::kernel_rules(4);
        let w = WhatIf::new(700, 0, RULES, kernel).expect("what-if");
        let l = Layout::new(700, 0, 0, false, None, 64, RULES).expect("layout");
        assert_eq!(w.stride.get(), l.size);
        assert_eq!(w.rslub, l.order);
        assert_eq!(w.kernel, Some(l.order));
        assert_eq!(w.last, 3);
        for order in 0..=3 {
            let (objects, leftover, unused) = w.at(order);
            assert_eq!(objects, slab_bytes(order) / l.size);
            assert_eq!(leftover, slab_bytes(order) - objects * l.size);
            assert_eq!(unused, slab_bytes(order) - objects * 700);
        }
        // Other rules: a smaller max_order, the rows go on to the kernel's order.
        let small = OrderRules {
            max_order: 1,
            ..RULES
        };
        let w = WhatIf::new(3000, 8, small, kernel).expect("what-if");
        assert_eq!(w.rslub, 1);
        assert_eq!(w.kernel, Some(3));
        assert_eq!(w.last, 3);
        let text = CString::try_from_fmt(core::format_args!("{w}")).expect("text");
        let text = text.to_str().expect("utf-8");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("size 3000 align 8 stride 3000"));
        assert_eq!(
            lines.next(),
            Some("order  objects  leftover  unused%  chosen by")
        );
        // Order 1: two objects of 3000 in 8192 bytes, 2192 left, 26.75 % unused.
        let mut rows = KVec::new();
        for l in lines.by_ref().take(4) {
            rows.push(l, GFP_KERNEL).expect("memory");
        }
        assert_eq!(rows.len(), 4);
        // Then both rules' min_partial: 9 by rslub's for a 3000-byte stride, 5 by SLUB's.
        assert_eq!(lines.next(), Some("min_partial: rslub 9, kernel 5"));
        assert_eq!(lines.next(), None);
        assert!(rows[1].trim_end().ends_with("rslub"));
        assert!(rows[1].contains("      2      2192    26.75"));
        assert!(rows[3].trim_end().ends_with("kernel"));
        assert!(!rows[0].contains("rslub") && !rows[2].contains("kernel"));
        // What rslub could not create is refused.
        assert_eq!(WhatIf::new(0, 0, RULES, kernel), Err(EINVAL));
        assert_eq!(WhatIf::new(64, 3, RULES, kernel), Err(EINVAL));
    }

    /// The kernel's rules (`layout::kernel_rules`, SLUB's `calculate_order()` with its
    /// defaults, and `layout::slub_min_partial_for`) give the order and the `min_partial`
    /// the kernel's own allocator chose for caches it created in this boot, at sizes across
    /// the orders.
    #[test]
    fn the_kernel_rule_is_what_the_kernel_chooses() {
        if cfg!(CONFIG_KASAN) {
            skip(c"a KASAN kernel adds its metadata to every object: other strides");
            return;
        }
        let cpus = Topology::read().scaling_cpus();
        let rules = layout::kernel_rules(cpus);
        for size in [
            8u32, 24, 100, 256, 700, 1000, 1500, 2048, 3000, 4096, 5000, 9000,
        ] {
            let kc = KernelCache::create(c"rslub_test_whatif_kc", size, 0, 0, None)
                .expect("kernel cache");
            let (order, stride, min_partial) = kc.geometry();
            let w = WhatIf::new(size, 0, RULES, rules).expect("what-if");
            kernel::kunit::info(fmt!(
                "    # size {size}: kernel stride {stride} order {order} min_partial \
                 {min_partial}, rule {:?} {}\n",
                w.kernel,
                w.kernel_min_partial
            ));
            assert_eq!((w.stride.get(), w.kernel), (stride, Some(order)));
            assert_eq!(w.kernel_min_partial, min_partial);
        }
    }

    fn write(v: &str) -> Result<usize> {
        write_file(c"rslub_kunit/layout_whatif", v.as_bytes())
    }

    fn read() -> KVec<u8> {
        let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL).expect("memory");
        let n = read_file(c"rslub_kunit/layout_whatif", &mut buf).expect("readable");
        buf.truncate(n);
        buf
    }

    /// The file prints what `WhatIf` prints for the module's parameters and the kernel's
    /// defaults; bad input is `EINVAL` and keeps the last good one.
    #[test]
    fn the_file_takes_a_size_and_an_alignment() {
        let cpus = Topology::read().scaling_cpus();
        let params = crate::registry::params().expect("the module's parameters");
        let want = |size, align| {
            let w = WhatIf::new(
                size,
                align,
                params.order_rules(cpus),
                layout::kernel_rules(cpus),
            )
            .expect("what-if");
            CString::try_from_fmt(core::format_args!("{w}")).expect("text")
        };
        assert_eq!(write("700\n"), Ok(4));
        assert_eq!(&read()[..], want(700, 0).to_bytes());
        assert_eq!(write(" 3000 64 "), Ok(9));
        assert_eq!(&read()[..], want(3000, 64).to_bytes());
        for bad in [
            "",
            "0",
            "abc",
            "100 3",
            "100 64 1",
            "99999999999",
            "-1",
            "100 8388608",
        ] {
            assert_eq!(write(bad), Err(EINVAL));
            assert_eq!(&read()[..], want(3000, 64).to_bytes());
        }
    }
}
