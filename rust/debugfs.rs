// SPDX-License-Identifier: GPL-2.0

//! What a user can read and change at run time, per cache, under
//! `/sys/kernel/debug/<module>/<cache>/`:
//!
//! - `stats`: the event counters, summed over the CPUs, one `name value` per line;
//! - `layout`: object size, alignment, stride, free pointer offset, order, objects per
//!   slab, waste;
//! - `nodes`: per node, slabs, objects and partial slabs;
//! - `min_partial` (read-write): partial slabs a node keeps before empty slabs go back
//!   to the page allocator;
//! - `remote_node_defrag_ratio` (read-write): chance in 1/1024ths (0..=1024) that a
//!   refill with no local partial slab looks at other nodes;
//! - `remote_walk` (read-write): 0, other nodes nearest first, each once, none on a
//!   one-node machine (the default); 1, SLUB's walk before the 2018 fix, zone by zone
//!   through the zonelist (for the seed 003 comparison);
//! - `cpu_partial` (read-write): free objects' worth of slabs each CPU keeps on its
//!   partial list (0..=32767; 0 turns the per-CPU partial lists off);
//! - `validate`: reading (or writing `1`, as SLUB's file) walks every slab on the node
//!   lists and checks it (`CacheCore::validate`); problems go to the kernel log, the read
//!   gives `slabs N objects N free N errors N`.

use crate::{
    cache::{CacheCore, RemoteWalk},
    topology,
};
use core::ptr::NonNull;
use kernel::{
    debugfs::{Dir, File},
    error::code::EINVAL,
    fmt,
    prelude::*,
    uaccess::UserSliceReader,
};

/// A cache, as the files see it.
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

impl CacheRef {
    fn get(&self) -> &CacheCore {
        // SAFETY: The cache outlives the files (type invariant).
        unsafe { self.0.as_ref() }
    }
}

/// The debugfs files of one cache; removed when dropped.
#[pin_data]
pub(crate) struct CacheFiles {
    #[pin]
    stats: File<CacheRef>,
    #[pin]
    layout: File<CacheRef>,
    #[pin]
    nodes: File<CacheRef>,
    #[pin]
    min_partial: File<CacheRef>,
    #[pin]
    ratio: File<CacheRef>,
    #[pin]
    walk: File<CacheRef>,
    #[pin]
    cpu_partial: File<CacheRef>,
    #[pin]
    validate: File<CacheRef>,
    _dir: Dir,
}

impl CacheFiles {
    /// Creates the files of `cache` in a directory named after it under `root`.
    ///
    /// # Safety
    ///
    /// `cache` must stay live until the returned value is dropped.
    pub(crate) unsafe fn new(root: &Dir, cache: NonNull<CacheCore>) -> Result<Pin<KBox<Self>>> {
        // SAFETY: `cache` is live (caller).
        let dir = root.subdir(unsafe { cache.as_ref() }.name());
        // INVARIANT (each `CacheRef`): the caller keeps the cache alive while the files
        // exist.
        KBox::pin_init(
            try_pin_init!(Self {
                stats <- dir.read_callback_file(c"stats", CacheRef(cache), &show_stats),
                layout <- dir.read_callback_file(c"layout", CacheRef(cache), &show_layout),
                nodes <- dir.read_callback_file(c"nodes", CacheRef(cache), &show_nodes),
                min_partial <- dir.read_write_callback_file(
                    c"min_partial",
                    CacheRef(cache),
                    &show_min_partial,
                    &store_min_partial,
                ),
                ratio <- dir.read_write_callback_file(
                    c"remote_node_defrag_ratio",
                    CacheRef(cache),
                    &show_ratio,
                    &store_ratio,
                ),
                walk <- dir.read_write_callback_file(
                    c"remote_walk",
                    CacheRef(cache),
                    &show_walk,
                    &store_walk,
                ),
                cpu_partial <- dir.read_write_callback_file(
                    c"cpu_partial",
                    CacheRef(cache),
                    &show_cpu_partial,
                    &store_cpu_partial,
                ),
                validate <- dir.read_write_callback_file(
                    c"validate",
                    CacheRef(cache),
                    &show_validate,
                    &store_validate,
                ),
                _dir: dir,
            }? Error),
            GFP_KERNEL,
        )
    }
}

fn show_stats(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    fmt::Display::fmt(&c.get().stats(), f)
}

fn show_layout(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let l = c.get().layout();
    writeln!(f, "object_size {}", l.object_size)?;
    writeln!(f, "align {}", l.align)?;
    writeln!(f, "size {}", l.size)?;
    writeln!(f, "free_offset {}", l.free_offset)?;
    writeln!(f, "order {}", l.order)?;
    writeln!(f, "objects_per_slab {}", l.objects)?;
    writeln!(f, "waste {}", l.waste())?;
    writeln!(f, "debug {}", crate::debug::Letters(l.debug))
}

fn show_cpu_partial(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", c.get().cpu_partial())
}

fn store_cpu_partial(c: &CacheRef, r: &mut UserSliceReader) -> Result {
    let v = read_number(r, crate::layout::MAX_OBJS_PER_SLAB)?;
    c.get().set_cpu_partial(v);
    Ok(())
}

fn show_validate(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match c.get().validate() {
        Ok(v) => writeln!(f, "{v}"),
        Err(e) => writeln!(f, "error {}", e.to_errno()),
    }
}

fn store_validate(c: &CacheRef, r: &mut UserSliceReader) -> Result {
    if read_number(r, 1)? != 1 {
        return Err(EINVAL);
    }
    c.get().validate().map(|_| ())
}

fn show_nodes(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "node slabs objects partial")?;
    for nid in topology::online_nodes() {
        let (slabs, objects, partial) = c.get().node_counts(nid);
        writeln!(f, "{nid} {slabs} {objects} {partial}")?;
    }
    // What the slabs take: their pages, and rslub's metadata kept outside them.
    let m = c.get().footprint();
    writeln!(f, "bytes pages={} metadata={}", m.page_bytes, m.meta_bytes)
}

fn show_min_partial(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", c.get().min_partial())
}

fn store_min_partial(c: &CacheRef, r: &mut UserSliceReader) -> Result {
    let v = read_number(r, crate::params::MAX_MIN_PARTIAL.unsigned_abs())?;
    c.get().set_min_partial(v);
    Ok(())
}

fn show_ratio(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", c.get().remote_node_defrag_ratio())
}

fn store_ratio(c: &CacheRef, r: &mut UserSliceReader) -> Result {
    let v = read_number(r, crate::cache::RATIO_SCALE)?;
    c.get().set_remote_node_defrag_ratio(v);
    Ok(())
}

fn show_walk(c: &CacheRef, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    writeln!(f, "{}", c.get().remote_walk() as u32)
}

fn store_walk(c: &CacheRef, r: &mut UserSliceReader) -> Result {
    let w = match read_number(r, 1)? {
        0 => RemoteWalk::NodesOnce,
        _ => RemoteWalk::Zonelist,
    };
    c.get().set_remote_walk(w);
    Ok(())
}

/// The module-wide `back` file under `root`: one line per kernel cache rslub backs or
/// drains; writing `name` backs the kernel cache `name`, `-name` unbacks it, `drain`
/// destroys the rslub caches of unbacked caches whose objects are all freed (see
/// `Documentation/backing.rst`).
pub(crate) fn back_file(root: &Dir) -> Result<Pin<KBox<File<()>>>> {
    KBox::pin_init(
        root.read_write_callback_file(c"back", (), &show_back, &store_back),
        GFP_KERNEL,
    )
}

fn show_back(_: &(), f: &mut fmt::Formatter<'_>) -> fmt::Result {
    crate::back::show(f)
}

fn store_back(_: &(), r: &mut UserSliceReader) -> Result {
    let mut buf = [0u8; 64];
    let s = read_text(r, &mut buf)?;
    if s == "drain" {
        crate::back::release_drained();
        return Ok(());
    }
    let (unback, name) = match s.strip_prefix('-') {
        Some(name) => (true, name),
        None => (false, s),
    };
    if name.is_empty() || name.contains(|c: char| c.is_whitespace() || c == ',') {
        return Err(EINVAL);
    }
    let name = kernel::str::CString::try_from_fmt(fmt!("{name}"))?;
    if unback {
        crate::back::unback_name(&name).map(|_| ())
    } else {
        crate::back::back_name(&name)
    }
}

/// Reads what was written to a file, at most `buf.len()` bytes of UTF-8, trimmed;
/// anything else is `EINVAL`.
fn read_text<'a>(r: &mut UserSliceReader, buf: &'a mut [u8]) -> Result<&'a str> {
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
