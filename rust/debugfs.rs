// SPDX-License-Identifier: GPL-2.0

//! What a user reads and changes at run time, under `/sys/kernel/debug/<module>/`: one
//! directory per cache, shaped like SLUB's `/sys/kernel/slab/<cache>/` (one value per
//! file, SLUB's names and formats), so that the tools written for SLUB read it unchanged
//! (`tools/mm/slabinfo`, through `scripts/slabinfo`); files of what SLUB has not keep
//! rslub's names. And the module-wide `layout_whatif` file (the `back` file is the
//! backing's, `rust/back/file.rs`). `Documentation/debugfs.rst` lists every
//! file with its SLUB counterpart.
//!
//! Formats, as `mm/slub.c` writes them:
//!
//! - one number (`object_size`, `order`, ...; flags as `0` or `1`);
//! - counts of slabs and objects: the total, then ` N<node>=<count>` for each node whose
//!   count is not zero (`show_slab_objects()`);
//! - event counters: the sum over the CPUs, then ` C<cpu>=<count>` for each online CPU
//!   whose count is not zero (`show_stat()`); writing `0` clears the counter on every CPU
//!   (`clear_stat()`), racing with increments as SLUB's does;
//! - `slabs_cpu_partial`: `objects(slabs)`, then ` C<cpu>=objects(slabs)`, the objects
//!   estimated as half the slabs' capacity (`slabs_cpu_partial_show()`).
//!
//! Tunables take a decimal number in their range; anything else is `EINVAL` and changes
//! nothing.

use crate::{
    cache::{CacheCore, RemoteWalk},
    layout::{self, WhatIf},
    params::{self, Params},
    percpu,
    stats::Stat,
    topology::{self, Topology},
};
use core::ptr::NonNull;
use kernel::{
    debugfs::{Dir, File, Scope},
    error::code::EINVAL,
    fmt,
    prelude::*,
    sync::atomic::{Atomic, Relaxed},
    uaccess::UserSliceReader,
};

/// What one file of a cache shows, and changes if it is writable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Attr {
    /// `object_size`: bytes the user asked for.
    ObjectSize,
    /// `slab_size`: bytes from one object to the next (SLUB's `s->size`).
    SlabSize,
    /// `align`: alignment of every object.
    Align,
    /// `order`: page order of a slab.
    Order,
    /// `objs_per_slab`: objects a slab holds.
    ObjsPerSlab,
    /// `objects`: objects in use, per node (all objects but the free ones on the node
    /// partial lists, as SLUB counts them).
    Objects,
    /// `objects_partial`: objects in use in slabs on the node partial lists, per node.
    ObjectsPartial,
    /// `total_objects`: objects of all slabs, per node.
    TotalObjects,
    /// `slabs`: slabs, per node.
    Slabs,
    /// `partial`: slabs on the node partial lists, per node.
    Partial,
    /// `cpu_slabs`: the CPUs' active slabs and the slabs on their partial lists, per node.
    CpuSlabs,
    /// `slabs_cpu_partial`: slabs on each CPU's partial list, with the objects estimated.
    SlabsCpuPartial,
    /// `min_partial` (read-write).
    MinPartial,
    /// `cpu_partial` (read-write).
    CpuPartial,
    /// `remote_node_defrag_ratio` (read-write), in percent as SLUB's file (the cache
    /// keeps it in 1/1024ths: the file shows it divided by 10 and stores it times 10).
    RemoteNodeDefragRatio,
    /// `ctor`: the constructor's symbol, or nothing.
    Ctor,
    /// `aliases`: caches merged into this one; rslub merges none.
    Aliases,
    /// `hwcache_align`: objects aligned to the cache line.
    HwcacheAlign,
    /// `destroy_by_rcu`: `SLAB_TYPESAFE_BY_RCU` (empty slabs go after a grace period).
    DestroyByRcu,
    /// `reclaim_account`, `cache_dma`, `trace`: flags rslub's caches
    /// never have, shown as SLUB shows an unset flag.
    Unsupported,
    /// `sanity_checks`, `red_zone`, `poison`, `store_user`: the debug flag in effect.
    Debug(u32),
    /// `shrink` (write `1`): flush the CPUs and give every empty slab back.
    Shrink,
    /// `validate` (write `1`, or read): check every slab on the node lists.
    Validate,
    /// An event counter (read, or write `0` to clear).
    Counter(Stat),
    /// rslub's `stats`: every counter, one `name value` line each.
    Stats,
    /// rslub's `layout`.
    Layout,
    /// rslub's `nodes`: per node, slabs, objects and partial slabs, then the bytes.
    Nodes,
    /// rslub's `remote_walk` (read-write).
    RemoteWalk,
    /// rslub's `profile` (read-write): `classic` or `tuned`; writing one sets the
    /// cache's behaviour, `min_partial` and remote walk to the profile's.
    Profile,
}

/// Every file but the counters', by name.
const FIXED: [(&CStr, Attr); 33] = [
    (c"object_size", Attr::ObjectSize),
    (c"slab_size", Attr::SlabSize),
    (c"align", Attr::Align),
    (c"order", Attr::Order),
    (c"objs_per_slab", Attr::ObjsPerSlab),
    (c"objects", Attr::Objects),
    (c"objects_partial", Attr::ObjectsPartial),
    (c"total_objects", Attr::TotalObjects),
    (c"slabs", Attr::Slabs),
    (c"partial", Attr::Partial),
    (c"cpu_slabs", Attr::CpuSlabs),
    (c"slabs_cpu_partial", Attr::SlabsCpuPartial),
    (c"min_partial", Attr::MinPartial),
    (c"cpu_partial", Attr::CpuPartial),
    (c"remote_node_defrag_ratio", Attr::RemoteNodeDefragRatio),
    (c"ctor", Attr::Ctor),
    (c"aliases", Attr::Aliases),
    (c"hwcache_align", Attr::HwcacheAlign),
    (c"reclaim_account", Attr::Unsupported),
    (c"destroy_by_rcu", Attr::DestroyByRcu),
    (c"cache_dma", Attr::Unsupported),
    (c"trace", Attr::Unsupported),
    (c"sanity_checks", Attr::Debug(layout::SANITY)),
    (c"red_zone", Attr::Debug(layout::RED_ZONE)),
    (c"poison", Attr::Debug(layout::POISON)),
    (c"store_user", Attr::Debug(layout::STORE_USER)),
    (c"shrink", Attr::Shrink),
    (c"validate", Attr::Validate),
    (c"stats", Attr::Stats),
    (c"layout", Attr::Layout),
    (c"nodes", Attr::Nodes),
    (c"remote_walk", Attr::RemoteWalk),
    (c"profile", Attr::Profile),
];

/// Every file of a cache: name and what it shows.
pub(crate) fn files() -> impl Iterator<Item = (&'static CStr, Attr)> {
    Iterator::chain(
        FIXED.into_iter(),
        Stat::ALL
            .into_iter()
            .map(|s| (s.file_name(), Attr::Counter(s))),
    )
}

impl Attr {
    /// Whether the file takes writes.
    pub(crate) fn writable(self) -> bool {
        matches!(
            self,
            Attr::MinPartial
                | Attr::CpuPartial
                | Attr::RemoteNodeDefragRatio
                | Attr::Shrink
                | Attr::Validate
                | Attr::Counter(_)
                | Attr::RemoteWalk
                | Attr::Profile
        )
    }
}

/// A cache, as its files see it.
///
/// # Invariants
///
/// The cache outlives every file holding this reference (the registry drops the files
/// before it destroys the cache).
struct CacheRef(NonNull<CacheCore>);

// SAFETY: `CacheCore` is `Sync`; this is a shared reference to it.
unsafe impl Send for CacheRef {}
// SAFETY: As above.
unsafe impl Sync for CacheRef {}

/// One file's data: its cache and what it shows.
pub(crate) struct AttrFile {
    cache: CacheRef,
    attr: Attr,
}

impl AttrFile {
    fn cache(&self) -> &CacheCore {
        // SAFETY: The cache outlives the files (type invariant of `CacheRef`).
        unsafe { self.cache.0.as_ref() }
    }
}

/// The debugfs directory of one cache and its files; all removed when dropped.
pub(crate) struct CacheFiles {
    _scope: Pin<KBox<Scope<KVec<AttrFile>>>>,
}

impl CacheFiles {
    /// Creates the directory of `cache`, named after it, under `root`, with every file of
    /// [`files`].
    ///
    /// # Safety
    ///
    /// `cache` must stay live until the returned value is dropped.
    pub(crate) unsafe fn new(root: &Dir, cache: NonNull<CacheCore>) -> Result<Self> {
        let mut data = KVec::with_capacity(files().count(), GFP_KERNEL)?;
        for (_, attr) in files() {
            // INVARIANT: the caller keeps the cache alive while the files exist.
            data.push(
                AttrFile {
                    cache: CacheRef(cache),
                    attr,
                },
                GFP_KERNEL,
            )?;
        }
        // SAFETY: `cache` is live (caller).
        let name = unsafe { cache.as_ref() }.name();
        let scope = root.scope(data, name, |data, dir| {
            for (file, (name, _)) in data.iter().zip(files()) {
                if file.attr.writable() {
                    dir.read_write_callback_file(name, file, &show, &store);
                } else {
                    dir.read_callback_file(name, file, &show);
                }
            }
        });
        Ok(Self {
            _scope: KBox::pin_init(scope, GFP_KERNEL)?,
        })
    }
}

/// Writes `values` (per node id) as SLUB's `show_slab_objects()`: the total, then
/// ` N<node>=<value>` for every node whose value is not zero.
fn per_node(f: &mut fmt::Formatter<'_>, values: &[(u32, u64)]) -> fmt::Result {
    write!(f, "{}", values.iter().map(|&(_, v)| v).sum::<u64>())?;
    for &(nid, v) in values.iter().filter(|&&(_, v)| v != 0) {
        write!(f, " N{nid}={v}")?;
    }
    writeln!(f)
}

/// `value(node)` for every online node.
fn nodes_of(value: impl Fn(u32) -> u64) -> Result<KVec<(u32, u64)>, fmt::Error> {
    let mut v = KVec::new();
    for nid in topology::online_nodes() {
        v.push((nid, value(nid)), GFP_KERNEL)
            .map_err(|_| fmt::Error)?;
    }
    Ok(v)
}

fn show(file: &AttrFile, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let c = file.cache();
    let l = c.layout();
    match file.attr {
        Attr::ObjectSize => writeln!(f, "{}", l.object_size),
        Attr::SlabSize => writeln!(f, "{}", l.size),
        Attr::Align => writeln!(f, "{}", l.align),
        Attr::Order => writeln!(f, "{}", l.order),
        Attr::ObjsPerSlab => writeln!(f, "{}", l.objects),
        Attr::Objects => per_node(f, &nodes_of(|n| c.node_objects(n).in_use)?),
        Attr::ObjectsPartial => per_node(f, &nodes_of(|n| c.node_objects(n).in_use_partial)?),
        Attr::TotalObjects => per_node(f, &nodes_of(|n| c.node_counts(n).1.max(0) as u64)?),
        Attr::Slabs => per_node(f, &nodes_of(|n| c.node_counts(n).0.max(0) as u64)?),
        Attr::Partial => per_node(f, &nodes_of(|n| u64::from(c.node_counts(n).2))?),
        Attr::CpuSlabs => per_node(f, &c.cpu_holdings().map_err(|_| fmt::Error)?.per_node),
        Attr::SlabsCpuPartial => {
            // Half-free slabs, as `cpu_partial` counts them (`slub_set_cpu_partial()`).
            let objects = |slabs: u32| u64::from(slabs) * u64::from(l.objects) / 2;
            let cpus = c.cpu_holdings().map_err(|_| fmt::Error)?.partial_per_cpu;
            let slabs: u32 = cpus.iter().map(|&(_, s)| s).sum();
            write!(f, "{}({slabs})", objects(slabs))?;
            for &(cpu, s) in cpus.iter().filter(|&&(_, s)| s != 0) {
                write!(f, " C{}={}({s})", cpu.as_u32(), objects(s))?;
            }
            writeln!(f)
        }
        Attr::MinPartial => writeln!(f, "{}", c.min_partial()),
        Attr::CpuPartial => writeln!(f, "{}", c.cpu_partial()),
        Attr::RemoteNodeDefragRatio => writeln!(f, "{}", c.remote_node_defrag_ratio() / 10),
        Attr::Ctor => match c.ctor_symbol() {
            Some(Ok(sym)) => writeln!(f, "{}", sym.to_str().map_err(|_| fmt::Error)?),
            Some(Err(_)) => Err(fmt::Error),
            None => Ok(()),
        },
        Attr::Aliases => writeln!(f, "0"),
        Attr::HwcacheAlign => writeln!(f, "{}", u32::from(l.hwcache_align)),
        Attr::DestroyByRcu => writeln!(f, "{}", u32::from(l.typesafe_by_rcu)),
        Attr::Unsupported => writeln!(f, "0"),
        Attr::Debug(bit) => writeln!(f, "{}", u32::from(l.debug & bit != 0)),
        Attr::Shrink => Ok(()),
        Attr::Validate => match c.validate() {
            Ok(v) => writeln!(f, "{v}"),
            Err(e) => writeln!(f, "error {}", e.to_errno()),
        },
        Attr::Counter(s) => {
            // The total counts CPUs gone offline too; the parts, the online ones.
            let total: u64 = percpu::possible_cpus().map(|cpu| c.stat_on(cpu, s)).sum();
            write!(f, "{total}")?;
            for cpu in percpu::online_cpus() {
                let v = c.stat_on(cpu, s);
                if v != 0 {
                    write!(f, " C{}={v}", cpu.as_u32())?;
                }
            }
            writeln!(f)
        }
        Attr::Stats => fmt::Display::fmt(&c.stats(), f),
        Attr::Layout => {
            writeln!(f, "object_size {}", l.object_size)?;
            writeln!(f, "align {}", l.align)?;
            writeln!(f, "size {}", l.size)?;
            writeln!(f, "free_offset {}", l.free_offset)?;
            writeln!(f, "order {}", l.order)?;
            writeln!(f, "objects_per_slab {}", l.objects)?;
            writeln!(f, "waste {}", l.waste())?;
            writeln!(f, "debug {}", crate::debug::Letters(l.debug))
        }
        Attr::Nodes => {
            writeln!(f, "node slabs objects partial")?;
            for nid in topology::online_nodes() {
                let (slabs, objects, partial) = c.node_counts(nid);
                writeln!(f, "{nid} {slabs} {objects} {partial}")?;
            }
            // What the slabs take: their pages, and rslub's metadata kept outside them.
            let m = c.footprint();
            writeln!(f, "bytes pages={} metadata={}", m.page_bytes, m.meta_bytes)
        }
        Attr::RemoteWalk => writeln!(f, "{}", c.remote_walk() as u32),
        Attr::Profile => writeln!(f, "{}", c.profile().name()),
    }
}

fn store(file: &AttrFile, r: &mut UserSliceReader) -> Result {
    let c = file.cache();
    match file.attr {
        Attr::MinPartial => {
            c.set_min_partial(read_number(r, params::MAX_MIN_PARTIAL.unsigned_abs())?)
        }
        // As 6.12's `cpu_partial_store()`: `EINVAL` for a debug cache but 0, and every
        // CPU flushed after the change.
        Attr::CpuPartial => c.store_cpu_partial(read_number(r, layout::MAX_OBJS_PER_SLAB)?)?,
        Attr::RemoteNodeDefragRatio => c.set_remote_node_defrag_ratio(read_number(r, 100)? * 10),
        Attr::RemoteWalk => c.set_remote_walk(match read_number(r, 1)? {
            0 => RemoteWalk::NodesOnce,
            _ => RemoteWalk::Zonelist,
        }),
        Attr::Profile => {
            let mut buf = [0u8; 16];
            let name = read_text(r, &mut buf)?;
            if name.is_empty() {
                return Err(EINVAL);
            }
            c.set_profile(params::Profile::parse(name.as_bytes()).map_err(|_| EINVAL)?);
        }
        Attr::Shrink => {
            read_one(r)?;
            c.shrink();
        }
        Attr::Validate => {
            read_one(r)?;
            c.validate()?;
        }
        Attr::Counter(s) => {
            read_number(r, 0)?;
            c.clear_stat(s);
        }
        _ => return Err(EINVAL),
    }
    Ok(())
}

/// The module-wide files under `root`; removed when dropped. (The `back` file is the
/// backing's: `rust/back/file.rs`.)
pub(crate) struct ModuleFiles {
    _whatif: Pin<KBox<File<WhatIfFile>>>,
}

impl ModuleFiles {
    /// `layout_whatif`: write `SIZE [ALIGN]`, then read, for a cache of such objects,
    /// every slab order with its objects and unused bytes, and the order rslub (with the
    /// module's `params`) and the kernel's allocator (with its defaults) choose
    /// ([`WhatIf`]).
    pub(crate) fn new(root: &Dir, params: Params) -> Result<Self> {
        Ok(Self {
            _whatif: KBox::pin_init(
                root.read_write_callback_file(
                    c"layout_whatif",
                    WhatIfFile {
                        params,
                        input: Atomic::new(0),
                    },
                    &show_whatif,
                    &store_whatif,
                ),
                GFP_KERNEL,
            )?,
        })
    }
}

/// The state of `layout_whatif`: the module's parameters, and the size (high half) and
/// alignment (low half) last written, 0 before the first write.
struct WhatIfFile {
    params: Params,
    input: Atomic<u64>,
}

/// The what-if of `size` and `align` under `params` and the kernel's defaults, on this
/// machine's CPU count.
fn what_if(params: &Params, size: u32, align: u32) -> Result<WhatIf> {
    let cpus = Topology::read().scaling_cpus();
    WhatIf::new(
        size,
        align,
        params.order_rules(cpus),
        layout::kernel_rules(cpus),
    )
}

fn show_whatif(w: &WhatIfFile, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let v = w.input.load(Relaxed);
    if v == 0 {
        return writeln!(f, "write SIZE [ALIGN] here, then read");
    }
    match what_if(&w.params, (v >> 32) as u32, v as u32) {
        Ok(x) => core::fmt::Display::fmt(&x, f),
        Err(_) => Err(fmt::Error),
    }
}

fn store_whatif(w: &WhatIfFile, r: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; 32];
    let mut words = read_text(r, &mut buf)?.split_ascii_whitespace();
    let mut number = |required: bool| -> Result<u32> {
        match words.next() {
            Some(v) => v.parse().map_err(|_| EINVAL),
            None if required => Err(EINVAL),
            None => Ok(0),
        }
    };
    let (size, align) = (number(true)?, number(false)?);
    if words.next().is_some() {
        return Err(EINVAL);
    }
    // Only what rslub could create: the same checks as a cache's creation.
    what_if(&w.params, size, align)?;
    w.input
        .store(u64::from(size) << 32 | u64::from(align), Relaxed);
    Ok(())
}

/// Reads what was written to a file, at most `buf.len()` bytes of UTF-8, trimmed;
/// anything else is `EINVAL`.
pub(crate) fn read_text<'a>(r: &mut UserSliceReader, buf: &'a mut [u8]) -> Result<&'a str> {
    let n = r.len();
    if n == 0 || n > buf.len() {
        return Err(EINVAL);
    }
    r.read_slice(&mut buf[..n])?;
    Ok(core::str::from_utf8(&buf[..n]).map_err(|_| EINVAL)?.trim())
}

/// Reads a decimal number in `0..=max` written to a file; anything else is `EINVAL`.
fn read_number(r: &mut UserSliceReader, max: u32) -> Result<u32> {
    let mut buf = [0u8; 16];
    let v: u32 = read_text(r, &mut buf)?.parse().map_err(|_| EINVAL)?;
    if v > max {
        return Err(EINVAL);
    }
    Ok(v)
}

/// Reads `1`, the only value `shrink` and `validate` take (as SLUB's files).
fn read_one(r: &mut UserSliceReader) -> Result {
    if read_number(r, 1)? != 1 {
        return Err(EINVAL);
    }
    Ok(())
}
