// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_debugfs`: every file under `/sys/kernel/debug/rslub_kunit/<cache>/`
//! read as a user reads it, and every tunable written with valid and invalid values, as a
//! user writes them (opened and read or written through the VFS, not by calling the
//! handlers); what a write of `cpu_partial` does besides (6.12's `cpu_partial_store()`).

use kernel::prelude::*;

#[kunit_tests(rslub_debugfs)]
mod tests {
    use crate::{
        cache::{CacheArgs, RemoteWalk},
        gfp::Gfp,
        params::Profile,
        registry::Cache,
        stats::Stat,
        test_shim::{read_file, write_file},
        topology::online_nodes,
    };
    use kernel::{error::code::EINVAL, prelude::*, str::CString};

    const NAME: &str = "rslub_test_debugfs";

    fn path(file: &str) -> CString {
        CString::try_from_fmt(fmt!("rslub_kunit/{NAME}/{file}")).expect("path")
    }

    /// The file's contents as text.
    fn read(file: &str) -> KVec<u8> {
        let mut buf = KVec::from_elem(0u8, 4096, GFP_KERNEL).expect("memory");
        let n = read_file(&path(file), &mut buf).expect("readable");
        buf.truncate(n);
        buf
    }

    fn text(b: &[u8]) -> &str {
        core::str::from_utf8(b).expect("text")
    }

    /// The value of the line `name value`.
    fn value_of(contents: &str, name: &str) -> Option<u64> {
        contents.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == name).then(|| v.trim().parse().ok())?
        })
    }

    fn write(file: &str, v: &str) -> Result<usize> {
        write_file(&path(file), v.as_bytes())
    }

    fn args() -> CacheArgs<'static> {
        CacheArgs {
            name: c"rslub_test_debugfs",
            size: 100,
            align: 0,
            flags: 0,
            ctor: None,
            freeptr_offset: None,
        }
    }

    #[test]
    fn every_file_reads_what_the_cache_holds() {
        let c = Cache::create(&args()).expect("cache");
        let p = c.alloc(Gfp::KERNEL).expect("object");
        let s = c.stats();
        let stats = read("stats");
        let stats = text(&stats);
        for st in Stat::ALL {
            assert_eq!(value_of(stats, st.file_str()), Some(s.get(st)));
        }
        assert_eq!(value_of(stats, "alloc_slowpath"), Some(1));

        let layout = read("layout");
        let layout = text(&layout);
        let l = c.layout();
        assert_eq!(value_of(layout, "object_size"), Some(100));
        assert_eq!(value_of(layout, "size"), Some(u64::from(l.size)));
        assert_eq!(value_of(layout, "order"), Some(u64::from(l.order)));
        assert_eq!(
            value_of(layout, "objects_per_slab"),
            Some(u64::from(l.objects))
        );
        assert_eq!(
            value_of(layout, "free_offset"),
            Some(u64::from(l.free_offset))
        );

        // One line per online node id (ids may be sparse), with the node's counts.
        let nodes = read("nodes");
        let mut lines = text(&nodes).lines();
        assert_eq!(lines.next(), Some("node slabs objects partial"));
        for nid in online_nodes() {
            let (slabs, objects, partial) = c.node_counts(nid);
            let want =
                CString::try_from_fmt(fmt!("{nid} {slabs} {objects} {partial}")).expect("line");
            assert_eq!(lines.next().map(str::as_bytes), Some(want.to_bytes()));
        }
        // Then the bytes the slabs take: one slab's pages, and its metadata (a `Slab`
        // from kmalloc, at least its own size).
        let m = c.footprint();
        assert_eq!(m.slabs, 1);
        assert_eq!(m.page_bytes, u64::from(crate::layout::slab_bytes(l.order)));
        assert!(m.meta_bytes >= size_of::<crate::slab::Slab>() as u64);
        let want = CString::try_from_fmt(fmt!(
            "bytes pages={} metadata={}",
            m.page_bytes,
            m.meta_bytes
        ))
        .expect("line");
        assert_eq!(lines.next().map(str::as_bytes), Some(want.to_bytes()));
        assert_eq!(lines.next(), None);
        let total: i64 = online_nodes().map(|n| c.node_counts(n).0).sum();
        assert_eq!(total, 1);

        let mp = read("min_partial");
        assert_eq!(text(&mp).trim().parse::<u32>().ok(), Some(c.min_partial()));
        // In percent, as SLUB's file: the cache's 1000 in 1024ths is 100.
        let r = read("remote_node_defrag_ratio");
        assert_eq!(text(&r).trim(), "100");
        // The classic profile's walk (6.12's zonelist walk).
        let w = read("remote_walk");
        assert_eq!(text(&w).trim(), "1");
        assert_eq!(text(&read("profile")).trim(), "classic");
        // SAFETY: allocated above.
        unsafe { c.free(p) };
        assert!(c.destroy().is_ok());
    }

    #[test]
    fn every_tunable_takes_valid_values_and_refuses_others() {
        let c = Cache::create(&args()).expect("cache");
        // min_partial: 0..=1024.
        for (v, want) in [("7\n", 7u32), ("0", 0), ("1024", 1024), (" 12 \n", 12)] {
            assert_eq!(write("min_partial", v), Ok(v.len()));
            assert_eq!(c.min_partial(), want);
        }
        for bad in ["1025", "-1", "abc", "7x", "99999999999999999"] {
            assert_eq!(write("min_partial", bad), Err(EINVAL));
            assert_eq!(c.min_partial(), 12);
        }
        // remote_node_defrag_ratio: 0..=100 percent, kept times 10 in 1/1024ths (SLUB's
        // file).
        for (v, want) in [("0", 0u32), ("100", 1000), ("51\n", 510)] {
            assert_eq!(write("remote_node_defrag_ratio", v), Ok(v.len()));
            assert_eq!(c.remote_node_defrag_ratio(), want);
            assert_eq!(text(&read("remote_node_defrag_ratio")).trim(), v.trim());
        }
        for bad in ["101", "1024", "-5", "ten"] {
            assert_eq!(write("remote_node_defrag_ratio", bad), Err(EINVAL));
            assert_eq!(c.remote_node_defrag_ratio(), 510);
        }
        // remote_walk: 0 or 1.
        assert_eq!(write("remote_walk", "1"), Ok(1));
        assert_eq!(c.remote_walk(), RemoteWalk::Zonelist);
        assert_eq!(text(&read("remote_walk")).trim(), "1");
        assert_eq!(write("remote_walk", "0"), Ok(1));
        assert_eq!(c.remote_walk(), RemoteWalk::NodesOnce);
        for bad in ["2", "-1", "x"] {
            assert_eq!(write("remote_walk", bad), Err(EINVAL));
            assert_eq!(c.remote_walk(), RemoteWalk::NodesOnce);
        }
        // profile: classic or tuned, which set min_partial and the walk too.
        assert_eq!(write("profile", "tuned\n"), Ok(6));
        assert_eq!(c.profile(), Profile::Tuned);
        assert_eq!(c.remote_walk(), RemoteWalk::NodesOnce);
        assert_eq!(
            c.min_partial(),
            crate::layout::min_partial_for(c.layout().size)
        );
        assert_eq!(text(&read("profile")).trim(), "tuned");
        for bad in ["fast", "", "\n", "classic tuned", "Classic"] {
            assert_eq!(write("profile", bad), Err(EINVAL));
            assert_eq!(c.profile(), Profile::Tuned);
        }
        assert_eq!(write("profile", "classic"), Ok(7));
        assert_eq!(c.profile(), Profile::Classic);
        assert_eq!(c.remote_walk(), RemoteWalk::Zonelist);
        assert_eq!(
            c.min_partial(),
            crate::layout::slub_min_partial_for(c.layout().size)
        );
        // cpu_partial: 0..=32767.
        for (v, want) in [("0", 0u32), ("32767", 32767), ("30\n", 30)] {
            assert_eq!(write("cpu_partial", v), Ok(v.len()));
            assert_eq!(c.cpu_partial(), want);
        }
        for bad in ["32768", "-1", "many"] {
            assert_eq!(write("cpu_partial", bad), Err(EINVAL));
            assert_eq!(c.cpu_partial(), 30);
        }
        assert_eq!(text(&read("cpu_partial")).trim(), "30");
        // The read-only files refuse writes.
        for ro in ["stats", "layout", "nodes"] {
            assert!(write(ro, "1").is_err());
        }
        assert!(c.destroy().is_ok());
    }

    /// A write of `cpu_partial` is 6.12's `cpu_partial_store()` (slub.c:6613-6628): the
    /// value is set and every CPU is flushed (`flush_all()`), its active slab and its
    /// partial list going back to the node; a debug cache, which has no per-CPU partial
    /// lists (`kmem_cache_has_cpu_partial()`), refuses any value but 0 with `EINVAL`.
    /// (rslub once only stored the value, for any cache.)
    #[test]
    fn a_cpu_partial_write_flushes_the_cpus_and_a_debug_cache_refuses_it() {
        use crate::{
            cache::NO_NODE,
            common::{alloc_n, free, free_all, pin, unpin},
            layout::SANITY,
        };
        use kernel::cpu::CpuId;
        let cpu0 = CpuId::from_u32(0).expect("cpu");
        // This CPU's partial slabs, by its own count (`slabs_cpu_partial`).
        let partial_on_0 = |c: &Cache| {
            c.cpu_holdings()
                .expect("memory")
                .partial_per_cpu
                .iter()
                .find(|&&(cpu, _)| cpu == cpu0)
                .map_or(0, |&(_, n)| n)
        };
        pin(0);
        let c = Cache::create(&args()).expect("cache");
        let per = c.layout().objects as usize;
        // S0 full and let go, S1 CPU 0's active slab; a free of S0's makes it partial and
        // puts it on CPU 0's partial list.
        let objs = alloc_n(&c, per + 1, NO_NODE);
        free(&c, objs[0]);
        let before = (c.has_active_slab(cpu0), partial_on_0(&c));
        let t = c.stats();
        let wrote = write("cpu_partial", "10\n");
        let d = c.stats().since(&t);
        let after = (c.has_active_slab(cpu0), partial_on_0(&c));
        let value = c.cpu_partial();
        let node_partial: u32 = online_nodes().map(|n| c.node_counts(n).2).sum();
        free_all(&c, &objs[1..]);
        unpin();
        assert!(c.destroy().is_ok());
        assert_eq!(before, (true, 1));
        assert_eq!(wrote, Ok(3));
        assert_eq!(value, 10);
        // Flushed: no active slab, an empty list, both slabs on the node's list (S1 with
        // free objects to the head, S0 from the CPU's list).
        assert_eq!(after, (false, 0));
        assert_eq!(d.get(Stat::CpuSlabFlush), 1);
        assert_eq!(node_partial, 2);

        // A debug cache (`F`), with its own directory.
        let path = |file: &str| {
            CString::try_from_fmt(fmt!("rslub_kunit/rslub_test_debugfs_debug/{file}"))
                .expect("path")
        };
        let dc = Cache::create(&CacheArgs {
            name: c"rslub_test_debugfs_debug",
            flags: SANITY,
            ..args()
        })
        .expect("cache");
        let refused = write_file(&path("cpu_partial"), b"10");
        let kept = dc.cpu_partial();
        let zero = write_file(&path("cpu_partial"), b"0");
        assert!(dc.destroy().is_ok());
        assert_eq!(refused, Err(EINVAL));
        assert_eq!(kept, 0);
        assert_eq!(zero, Ok(1));
    }

    /// The bad-input catalogue of `Documentation/reliability.rst` against every tunable:
    /// each value is refused with `EINVAL` and changes nothing; padding and a `+` sign
    /// are accepted.
    #[test]
    fn every_tunable_refuses_the_bad_input_catalogue() {
        let c = Cache::create(&args()).expect("cache");
        let tunables: [(&str, &dyn Fn() -> u32); 4] = [
            ("min_partial", &|| c.min_partial()),
            ("remote_node_defrag_ratio", &|| {
                c.remote_node_defrag_ratio() / 10
            }),
            ("remote_walk", &|| c.remote_walk() as u32),
            ("cpu_partial", &|| c.cpu_partial()),
        ];
        for (file, get) in tunables {
            let before = get();
            for bad in [
                "-1",
                "-0x1",
                "4294967296",
                "99999999999999999999",
                "abc",
                "0x1",
                "1e3",
                "1.5",
                " ",
                "\n",
                "1 1",
                "",
                "1\x00",
            ] {
                assert_eq!(write(file, bad), Err(EINVAL));
                assert_eq!(get(), before);
            }
            for (good, want) in [("0", 0u32), (" 1\n", 1), ("+1", 1), ("\t0\t", 0)] {
                assert_eq!(write(file, good), Ok(good.len()));
                assert_eq!(get(), want);
            }
            write(file, "0").expect("0 is valid for every tunable");
        }
        // `validate` takes `1` only (as SLUB's file), and runs.
        for bad in ["0", "2", "-1", "yes", ""] {
            assert_eq!(write("validate", bad), Err(EINVAL));
        }
        assert_eq!(write("validate", "1\n"), Ok(2));
        let v = read("validate");
        assert!(text(&v).starts_with("slabs "));
        assert!(text(&v).trim_end().ends_with("errors 0"));
        assert!(c.destroy().is_ok());
    }
}
