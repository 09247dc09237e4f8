// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_debugfs`: every file under `/sys/kernel/debug/rslub_kunit/<cache>/`
//! read as a user reads it, and every tunable written with valid and invalid values, as a
//! user writes them (opened and read or written through the VFS, not by calling the
//! handlers).

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
