// SPDX-License-Identifier: GPL-2.0

//! A kmem cache: its per-cpu active slabs, its per-node partial lists, and the
//! allocation and free paths over them. The design, the lock order and the fast/slow
//! split are described once, in the crate documentation (`rust/rslub.rs`).
//!
//! This file holds the cache's state and its creation; the paths are in this folder:
//! `alloc.rs` (allocation), `free.rs` (free), `partial.rs` (partial slabs across CPUs
//! and nodes), `teardown.rs` (flush, shrink, destroy), `debug_paths.rs` (debug caches),
//! `sanitize_paths.rs` (KASAN and kmemleak on every allocation and free) and
//! `stats.rs` (counters and what the cache holds).

mod alloc;
#[cfg(rslub_inject)]
pub(crate) use alloc::FAST_ZERO_MAX;
mod debug_paths;
mod free;
mod partial;
mod sanitize_paths;
mod stats;
mod teardown;

use crate::{
    arch, debug,
    gfp::Gfp,
    layout::{self, Layout},
    mm::Shadow,
    node::{Node, NodeGuard},
    params::Profile,
    percpu::{possible_cpus, PerCpu},
    sanitize::{self, Quarantine},
    shim::{self, IrqDisabled},
    slab::{FreePtr, Slab},
    stats::{Stat, NR_STATS},
};
use core::{mem::offset_of, num::NonZeroU32, pin::Pin, ptr};
use kernel::{
    alloc::flags::GFP_KERNEL,
    bindings,
    error::code::{EINVAL, ENODEV},
    prelude::*,
    str::CString,
    sync::atomic::{Atomic, Relaxed},
    time::{Instant, Monotonic},
};

/// `NUMA_NO_NODE`: any node, the local one preferred.
pub(crate) const NO_NODE: i32 = bindings::NUMA_NO_NODE;

/// A constructor, run once on every object when its slab is created.
pub(crate) type Ctor = unsafe extern "C" fn(*mut core::ffi::c_void);

/// `CpuSlab::slab` of a CPU without an active slab. Not 0: a pointer that is not an
/// object of rslub may lie on a page whose word [`crate::slab::slab_of`] reads is 0, and the
/// bulk free compares that word with `slab`; no slab's metadata is at address 1.
const NO_SLAB: *mut Slab = ptr::without_provenance_mut(1);

/// `CpuSlab::base` of a CPU without an active slab: no object lies within a slab's size
/// of it, and neither does a null pointer, so every free goes to the slow path.
const NO_BASE: u64 = u64::MAX;

/// Flipped in `CpuSlab::base` of an active slab of the fallback order (smaller than the
/// cache's order): the fast paths compare with the cache's order (`CacheCore::slab_mask`),
/// and two such slabs can lie in one block of that size, so the compare must fail for
/// every object, and frees into such a slab take the slow path: onto the CPU's list when
/// the object's slab is that CPU's active slab, as 6.12's fast path (`free_to_own_slab`,
/// behind a compare that only frees into frozen slabs pay), else onto the slab's own
/// list, lock-free.
/// Bit 62: the value stays in neither half of the address space's objects, whatever
/// [`BASE_TAG`] does.
const FALLBACK_TAG: u64 = 1 << 62;

/// Flipped in `CpuSlab::base` of a cache whose frees need more than the fast path
/// (`init_on_free`): the top bit, so the value lies in the lower half of the address
/// space, far from every object, and the main free fast path never matches it; the one
/// of `CacheCore::free_unusual` flips it back before comparing.
const BASE_TAG: u64 = 1 << 63;

/// Distance between transaction ids of one CPU: the CPU number lives in the low bits, so
/// ids of different CPUs never compare equal (SLUB's `TID_STEP`).
const TID_STEP: u64 = (bindings::NR_CPUS as u64).next_power_of_two();

/// The scale of `remote_node_defrag_ratio`: a ratio is a chance in 1/`RATIO_SCALE`ths
/// (SLUB's 1024).
pub(crate) const RATIO_SCALE: u32 = 1024;

/// Default `remote_node_defrag_ratio`, in 1/1024ths: SLUB's 100% (1000), so nearly every
/// remote-capable refill walks the other nodes.
pub(crate) const DEFAULT_REMOTE_NODE_DEFRAG_RATIO: u32 = 1000;

/// One CPU's view of a cache.
///
/// `freelist` and `tid` form the 16-byte unit the fast paths swap with one `cmpxchg16b`;
/// `slab` and `node` change only in the slow paths, with interrupts off, and every such
/// change also advances `tid`. A fast path reads `tid` first and the other fields after
/// it, all from the copy of one CPU (through one `raw_cpu_ptr()`): its commit on the CPU
/// it then runs on succeeds only if that is the same CPU and nothing changed since.
///
/// # Invariants
///
/// - `tid % TID_STEP` is the CPU's number.
/// - `partial` chains `partial_slabs` slabs of the cache through `Slab::cpu_next`, none
///   frozen, none on a node list, each marked `ON_CPU_PARTIAL` in its state and with
///   free objects when it was put there (frees may empty it since).
/// - If `slab` is [`NO_SLAB`], `freelist` is null, `base` is [`NO_BASE`] and `mask` 0.
///   Otherwise `slab` is frozen by this CPU, `node` is its node, `base` the address of
///   its first page (with [`BASE_TAG`] for a cache with `free_special`, and
///   [`FALLBACK_TAG`] for a slab smaller than the cache's order), `mask` the mask of its
///   size ([`Slab::span`]), and `freelist` chains free objects of `slab` only, owned by
///   this CPU.
#[repr(C, align(16))]
pub(crate) struct CpuSlab {
    freelist: *mut u8,
    tid: u64,
    /// The active slab's address, which the free fast path compares with the object's:
    /// slabs are naturally aligned blocks of pages, so an object is in an active slab of
    /// the cache's order iff the two agree above that size (`CacheCore::slab_mask`).
    /// Cheaper than looking up the object's page and its slab. An active slab of the
    /// fallback order holds [`FALLBACK_TAG`] here: no object matches it.
    base: u64,
    /// `!(bytes of the active slab - 1)` (0 without one), for the slow paths' checks of
    /// its free pointers ([`CacheCore::checked_next`]): the slab's own size.
    mask: usize,
    slab: *mut Slab,
    /// The active slab's node, as a word the fast path compares with the node asked for.
    node: u64,
    /// This CPU's partial slabs (`cpu_partial.rs`), linked through `Slab::cpu_next`.
    partial: *mut Slab,
    /// How many slabs `partial` holds.
    partial_slabs: u32,
    stats: [u64; NR_STATS],
}

impl CpuSlab {
    /// Makes `slab` (frozen by this CPU) the active slab, with free list `freelist`.
    /// `tag` is [`BASE_TAG`] for a cache with `free_special`, else 0; `cache_span` the
    /// bytes of a slab of the cache's order.
    fn set_active(&mut self, slab: *mut Slab, freelist: *mut u8, tag: u64, cache_span: usize) {
        // INVARIANT: the caller froze `slab` for this CPU and gives it its free list;
        // `tid` advances.
        self.slab = slab;
        // SAFETY: `slab` is live (frozen by the caller).
        let slab = unsafe { &*slab };
        self.node = u64::from(slab.node);
        let fallback = if slab.span() == cache_span {
            0
        } else {
            FALLBACK_TAG
        };
        self.base = slab.base() as u64 ^ tag ^ fallback;
        self.mask = !(slab.span() - 1);
        self.freelist = freelist;
        self.advance();
    }

    /// Leaves the CPU without an active slab (the caller takes the slab and its list).
    fn clear_active(&mut self) {
        // INVARIANT: no slab, an empty list, `tid` advances.
        self.slab = NO_SLAB;
        self.base = NO_BASE;
        self.mask = 0;
        self.freelist = ptr::null_mut();
        self.advance();
    }

    /// Advances the transaction id: every change of the CPU's state by a slow path does,
    /// so that a fast path that read the old state fails its commit.
    fn advance(&mut self) {
        self.tid = next_tid(self.tid);
    }
}

/// The transaction id after `tid` on the same CPU.
#[inline(always)]
fn next_tid(tid: u64) -> u64 {
    tid.wrapping_add(TID_STEP)
}

/// The fast paths' commit: replaces this CPU's (freelist, tid) pair `(head, tid)` with
/// `(new_head, next_tid(tid))` if it still holds that pair. Fails on any other CPU than
/// the one `tid` was read on, and on that CPU after any change since.
///
/// # Safety
///
/// `pcpu` must be the per-cpu address of a live `CpuSlab`.
#[inline(always)]
pub(super) unsafe fn commit(pcpu: *mut u8, head: *mut u8, tid: u64, new_head: *mut u8) -> bool {
    const FREELIST: usize = offset_of!(CpuSlab, freelist);
    // SAFETY: `pcpu + FREELIST` is the 16-byte aligned (freelist, tid) pair of the current
    // CPU's copy (caller); CX16 was checked at load.
    unsafe {
        arch::this_cpu_cmpxchg16b(
            pcpu.wrapping_add(FREELIST).cast(),
            [head as u64, tid],
            [new_head as u64, next_tid(tid)],
        )
    }
}

// SAFETY: All fields are integers; all-zero is a valid `CpuSlab` except for the `tid`
// and `slab` invariants, which `CacheCore::new` establishes before publishing the cache.
unsafe impl Zeroable for CpuSlab {}

// SAFETY: A `CpuSlab` is one CPU's: only that CPU touches it, with interrupts off or
// through its own fast paths, except a dead CPU's (read by the CPU that saw it die) and
// during destruction, when no CPU uses the cache. The pointers it holds are to slabs and
// objects of the cache, which any CPU may use under those rules.
unsafe impl Send for CpuSlab {}

/// Arguments of [`CacheCore::new`].
pub(crate) struct CacheArgs<'a> {
    /// Name, unique among live caches.
    pub(crate) name: &'a CStr,
    /// Object size in bytes.
    pub(crate) size: u32,
    /// Alignment (0: pointer size); a power of two.
    pub(crate) align: u32,
    /// `layout::HWCACHE_ALIGN`, `layout::TYPESAFE_BY_RCU` and the debug flags
    /// (`layout::SANITY`, ...).
    pub(crate) flags: u32,
    /// Optional constructor.
    pub(crate) ctor: Option<Ctor>,
    /// With `layout::TYPESAFE_BY_RCU`, where in a free object the free pointer may go
    /// (a pointer-aligned offset inside the object, which the user's lockless readers do
    /// not rely on: `kmem_cache_args.freeptr_offset`); `None` puts it after the object.
    pub(crate) freeptr_offset: Option<u32>,
}

/// A cache.
///
/// # Invariants
///
/// - `nodes[n]` exists for every node id `n < nr_node_ids`; every slab of the cache is
///   accounted on the node its pages are on, and is on that node's partial list, some
///   CPU's active slab, or full.
/// - `near[n]` lists the other online nodes than `n`, nearest first, each once;
///   `zonelist[n]` lists the node of every zone of `n`'s zonelist, in its order.
/// - `layout` never changes after creation.
#[pin_data]
pub(crate) struct CacheCore {
    name: CString,
    layout: Layout,
    /// How free pointers are stored (hardened, with a random value of this cache's).
    fp: FreePtr,
    /// `!(bytes of a slab of the cache's order - 1)`: two objects of one such slab agree
    /// on these bits ([`FreePtr::same_slab`]). The page allocator aligns `2^order` pages
    /// to their size and the direct map keeps that alignment (its base is at least 1 GiB
    /// aligned). A slab of the fallback order is smaller: its frees never take the free
    /// fast path ([`FALLBACK_TAG`]; the slow path does its work for the CPU's own), and
    /// the allocation fast path's check of its free pointers is only as tight as this
    /// mask (the slow paths check its own size).
    slab_mask: usize,
    /// Division by the stride that tells whether it is exact: a free's check that its
    /// pointer starts an object ([`CacheCore::starts_object`]). From `layout`, fixed.
    exact_index: layout::ExactIndex,
    ctor: Option<Ctor>,
    cpu: PerCpu<CpuSlab>,
    nodes: KVec<Pin<KBox<Node>>>,
    near: KVec<KVec<u16>>,
    zonelist: KVec<KVec<u16>>,
    multi_node: bool,
    min_partial: Atomic<u32>,
    remote_node_defrag_ratio: Atomic<u32>,
    /// Free objects' worth of slabs a CPU keeps on its partial list (`cpu_partial`); 0
    /// turns the per-CPU partial lists off.
    cpu_partial: Atomic<u32>,
    walk: Atomic<u32>,
    /// The [`Profile`] whose defaults the cache took, as `u32` (`Profile::Classic` 0):
    /// the slow paths read it where classic SLUB and rslub's tuned choices differ.
    profile: Atomic<u32>,
    /// What every allocation clears, as flags or'ed into the caller's by the allocation
    /// paths: `Gfp::ZERO`, the whole object (`init_on_alloc`); [`Gfp::WIPE_FREE_PTR`],
    /// its free pointer alone (`init_on_free` without `init_on_alloc`, the free pointer
    /// overlapping the object: 6.12's `maybe_wipe_obj_freeptr()`; the free zeroed every
    /// other byte, and wrote the pointer to the next free object after that); or 0.
    /// The fast path tests [`Gfp::CLEARS`] once for both and the caller's `__GFP_ZERO`.
    /// Fixed at creation (a plain load on the fast path).
    alloc_clears: u32,
    /// Whether every free zeroes the object (`init_on_free`). Fixed at creation.
    init_on_free: bool,
    /// Whether frees leave the fast path at once: `init_on_free`, or a debug cache (one
    /// flag, so the free fast path tests one byte for both).
    free_special: bool,
    /// The debug checks ([`debug`]); no flags for an ordinary cache.
    debug: debug::Format,
    /// The last problem reported (a [`debug::Problem`], 0 for none) and its address.
    last_error: Atomic<u32>,
    last_error_at: Atomic<usize>,
    /// 1 once `__GFP_ZERO` for a cache with a constructor was reported (once per cache).
    zero_with_ctor_reported: Atomic<u32>,
    /// With `CONFIG_SLAB_FREELIST_RANDOM`, the order in which a new slab's objects go on
    /// its free list, as SLUB's `random_seq`: a random permutation of the object indices
    /// of a slab of the cache's order, drawn at creation (`shuffle_freelist()`).
    pub(super) random_seq: Option<KVec<u32>>,
    /// The usercopy window, `offset << 32 | size` (SLUB's `useroffset`, `usersize`): what
    /// hardened usercopy lets a copy to or from user space touch of an object. The whole
    /// object unless set ([`CacheCore::set_usercopy`]).
    usercopy: Atomic<u64>,
    /// Freed objects not yet given back, under KASAN ([`crate::sanitize`]); on other
    /// kernels it has no slots (a lock and an empty vector, never taken on any path).
    #[pin]
    quarantine: Quarantine,
    /// The kernel's description of the cache's objects, which its slab pages point at
    /// ([`crate::mm`]); last, so that it goes after everything else.
    pub(crate) shadow: Shadow,
}

/// A random permutation of `0..n` (Fisher-Yates, as `cache_random_seq_create()`), or
/// `None` without `CONFIG_SLAB_FREELIST_RANDOM` or with fewer than two objects.
fn random_seq(n: u32) -> Result<Option<KVec<u32>>> {
    if !cfg!(CONFIG_SLAB_FREELIST_RANDOM) || n < 2 {
        return Ok(None);
    }
    let mut seq = KVec::with_capacity(n as usize, GFP_KERNEL)?;
    for i in 0..n {
        seq.push(i, GFP_KERNEL)?;
    }
    for i in (1..n as usize).rev() {
        let j = ((u64::from(shim::random_u32()) * (i as u64 + 1)) >> 32) as usize;
        seq.swap(i, j);
    }
    Ok(Some(seq))
}

/// Checks that this CPU and kernel can run the allocator; says why not, and fails with
/// `ENODEV`, when they cannot.
pub(crate) fn check_machine() -> Result {
    if !arch::has_cmpxchg16b() {
        pr_err!("this CPU lacks cmpxchg16b (CX16), which the fast paths need\n");
        return Err(ENODEV);
    }
    // The fast path reads the free pointer of an object that may, after a preemption, have
    // gone back to the page allocator: that needs freed pages to stay mapped.
    if shim::debug_pagealloc_enabled() {
        pr_err!("debug_pagealloc is on: freed pages are unmapped, which the lock-free fast path cannot allow\n");
        return Err(ENODEV);
    }
    // On PREEMPT_RT a `spinlock_t` sleeps, and it is taken in the slow paths with
    // interrupts off; SLUB uses a local lock there instead. Not supported.
    if cfg!(CONFIG_PREEMPT_RT) {
        pr_err!("PREEMPT_RT kernels are not supported: the slow paths take sleeping locks with interrupts off\n");
        return Err(ENODEV);
    }
    Ok(())
}

/// How `get_any_partial` walks the other nodes; a switch for the seed 003 experiment
/// (`remote_walk` in debugfs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum RemoteWalk {
    /// Nodes nearest first, each once, none on a one-node machine (the seed thread 003
    /// fix, never merged; the tuned profile's).
    NodesOnce = 0,
    /// Classic SLUB (6.12 slub.c:2973-2990, the classic profile's): the zonelist of the
    /// task's policy node (`mempolicy_slab_node()`), zone by zone, so a node with several
    /// zones is looked at several times (the local node too), even on one node.
    Zonelist = 1,
}

/// `min_partial` of a cache of `size`-byte strides under `profile`: 6.12's
/// `clamp(ilog2(size) / 2, 5, 10)` (slub.c `set_min_partial()`), or rslub's rule.
fn default_min_partial(profile: Profile, size: u32) -> u32 {
    match profile {
        Profile::Classic => layout::slub_min_partial_for(size),
        Profile::Tuned => layout::min_partial_for(size),
    }
}

/// The remote walk under `profile`: 6.12's zonelist walk, or each node once.
fn default_walk(profile: Profile) -> RemoteWalk {
    match profile {
        Profile::Classic => RemoteWalk::Zonelist,
        Profile::Tuned => RemoteWalk::NodesOnce,
    }
}

/// Objects still allocated when a cache was destroyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LiveObjects(pub(crate) u64);

impl CacheCore {
    /// Creates a cache. `params` gives the module-wide order rules and overrides.
    pub(crate) fn new(
        args: &CacheArgs<'_>,
        params: &crate::params::Params,
    ) -> Result<Pin<KBox<Self>>> {
        if args.name.is_empty() {
            return Err(EINVAL);
        }
        check_machine()?;
        let topo = crate::topology::Topology::read();
        let rules = params.order_rules(topo.scaling_cpus());
        let flags = args.flags | params.debug().flags_for(args.name.to_bytes());
        let layout = Layout::new(
            args.size,
            args.align,
            flags,
            args.ctor.is_some(),
            args.freeptr_offset,
            shim::cache_line_size(),
            rules,
        )?;
        // Under KASAN, a red zone after every object, as the kernel's caches get
        // (`kasan_cache_create()`): an overflow then reads poison, not the next object.
        let layout = if sanitize::KASAN {
            layout.with_red_zone(sanitize::red_zone(args.size), rules)?
        } else {
            layout
        };
        let profile = params.profile();
        let min_partial = params
            .min_partial_override()
            .unwrap_or_else(|| default_min_partial(profile, layout.size));

        // SAFETY: `nr_node_ids` is set during boot and never changes afterwards.
        let nr_nodes = unsafe { bindings::nr_node_ids } as usize;
        let mut nodes = KVec::with_capacity(nr_nodes, GFP_KERNEL)?;
        for _ in 0..nr_nodes {
            nodes.push(KBox::pin_init(Node::new(), GFP_KERNEL)?, GFP_KERNEL)?;
        }
        let near = nearest_nodes(nr_nodes)?;
        let zonelist = zonelist_nodes(nr_nodes)?;
        let cpu = PerCpu::<CpuSlab>::new()?;
        // The active slabs' addresses are the addresses of their first objects: not
        // references for kmemleak (free objects and slabs are not its objects).
        shim::kmemleak_ignore(cpu.pcpu().cast(), true);
        for c in possible_cpus() {
            // INVARIANT: each CPU's `tid` starts at its own number, with no active slab;
            // no other CPU sees the cache yet.
            // SAFETY: `on(c)` is CPU `c`'s copy, valid and not yet shared.
            unsafe {
                (*cpu.on(c)).tid = u64::from(c.as_u32());
                (*cpu.on(c)).slab = NO_SLAB;
                (*cpu.on(c)).base = NO_BASE;
            }
        }
        let name = CString::try_from(args.name)?;
        // The name's buffer moves with neither the string nor the cache.
        let shadow = Shadow::new(&name, &layout)?;
        let random_seq = random_seq(layout.objects)?;
        // Objects of a `TYPESAFE_BY_RCU` cache are not poisoned when freed (readers may
        // still look at them), so holding them back would catch nothing.
        let slots = if layout.typesafe_by_rcu {
            0
        } else {
            sanitize::quarantine_capacity(layout.size)
        };
        #[cfg(rslub_inject)]
        let slots = if crate::inject::quarantine() {
            slots
        } else {
            0
        };
        let quarantine = Quarantine::new(slots)?;
        // Boot parameters; the suites can pretend they are set (`inject::init_on`).
        let (init_on_alloc, init_on_free) = (shim::init_on_alloc(), shim::init_on_free());
        #[cfg(rslub_inject)]
        let (init_on_alloc, init_on_free) =
            crate::inject::init_on().unwrap_or((init_on_alloc, init_on_free));
        // As 6.12's `slab_want_init_on_alloc()` and `slab_want_init_on_free()`: objects
        // with a constructor, of a `TYPESAFE_BY_RCU` cache, or poisoned (`SLAB_POISON`:
        // the poison is the content the debug checks want) are never cleared for them.
        let keeps_contents = args.ctor.is_some()
            || layout.typesafe_by_rcu
            || layout.debug & crate::layout::POISON != 0;
        // As 6.12's `freeptr_outside_object()` (`offset >= inuse`), with objects of
        // fewer bytes than a pointer overlapping it too.
        let wipe_free_ptr = init_on_free
            && !init_on_alloc
            && !keeps_contents
            && layout.free_offset < layout.object_size;
        // INVARIANT: a node per node id, neighbour lists from `nearest_nodes`, fixed
        // layout (and `exact_index` from it).
        KBox::pin_init(
            pin_init!(Self {
                name,
                fp: FreePtr::new(layout.free_offset, shim::random_u64()),
                slab_mask: !(layout::slab_bytes(layout.order) as usize - 1),
                exact_index: layout.exact_index(),
                layout,
                ctor: args.ctor,
                cpu,
                nodes,
                near,
                zonelist,
                multi_node: topo.online_nodes > 1,
                min_partial: Atomic::new(min_partial),
                remote_node_defrag_ratio: Atomic::new(DEFAULT_REMOTE_NODE_DEFRAG_RATIO),
                // Debug caches have no CPU slabs at all.
                cpu_partial: Atomic::new(if layout.debug != 0 {
                    0
                } else {
                    layout::cpu_partial_for(layout.size)
                }),
                walk: Atomic::new(default_walk(profile) as u32),
                profile: Atomic::new(profile as u32),
                // As SLUB's `slab_want_init_on_*()` (`keeps_contents`): constructed
                // objects keep their contents, freed objects of a `TYPESAFE_BY_RCU` cache
                // too while readers may look at them, and poisoned ones their poison.
                alloc_clears: if init_on_alloc && !keeps_contents {
                    Gfp::ZERO
                } else if wipe_free_ptr {
                    Gfp::WIPE_FREE_PTR
                } else {
                    0
                },
                init_on_free: init_on_free && !keeps_contents,
                free_special: (*init_on_free && !keeps_contents) || layout.debug != 0,
                debug: debug::Format::new(layout),
                last_error: Atomic::new(0),
                last_error_at: Atomic::new(0),
                zero_with_ctor_reported: Atomic::new(0),
                random_seq,
                usercopy: Atomic::new(u64::from(layout.object_size)),
                quarantine <- quarantine,
                shadow,
            }),
            GFP_KERNEL,
        )
        .inspect(|c| c.shadow.own(ptr::from_ref::<Self>(c).cast()))
    }

    /// Sets the usercopy window to `size` bytes from `offset` (a backed cache takes the
    /// kernel cache's), clamped to the object.
    pub(crate) fn set_usercopy(&self, offset: u32, size: u32) {
        let offset = offset.min(self.layout.object_size);
        let size = size.min(self.layout.object_size - offset);
        self.usercopy
            .store(u64::from(offset) << 32 | u64::from(size), Relaxed);
        self.shadow.set_usercopy(offset, size);
    }

    /// For hardened usercopy: the offset of `p` in its object if a copy of `n` bytes
    /// there leaves the object or its usercopy window (SLUB's `__check_heap_object()`),
    /// `None` if the copy is allowed.
    pub(crate) fn usercopy_violation(&self, s: &Slab, p: *const u8, n: usize) -> Option<usize> {
        let w = self.usercopy.load(Relaxed);
        let (uo, us) = ((w >> 32) as usize, (w & u64::from(u32::MAX)) as usize);
        let stride = self.layout.stride().get() as usize;
        let from_base = (p as usize).wrapping_sub(s.base() as usize);
        let offset = from_base % stride;
        // Past the last object (the slab's leftover) is no object at all.
        if from_base / stride < s.objects as usize
            && offset >= uo
            && offset - uo <= us
            && n <= uo + us - offset
        {
            return None;
        }
        Some(offset)
    }

    /// The cache's name.
    pub(crate) fn name(&self) -> &CStr {
        &self.name
    }

    /// The slab layout.
    pub(crate) fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Partial slabs a node keeps before empty slabs go back to the page allocator.
    pub(crate) fn min_partial(&self) -> u32 {
        arch::load_relaxed(&self.min_partial)
    }

    /// Changes `min_partial`.
    pub(crate) fn set_min_partial(&self, v: u32) {
        self.min_partial.store(v, Relaxed);
    }

    /// Chance, in 1/1024ths, that a refill with no local partial slab walks the other
    /// nodes (0: never; 1024: always).
    pub(crate) fn remote_node_defrag_ratio(&self) -> u32 {
        arch::load_relaxed(&self.remote_node_defrag_ratio)
    }

    /// Changes `remote_node_defrag_ratio` (clamped to 1024).
    pub(crate) fn set_remote_node_defrag_ratio(&self, v: u32) {
        self.remote_node_defrag_ratio
            .store(v.min(RATIO_SCALE), Relaxed);
    }

    /// Objects' worth of slabs each CPU keeps on its partial list (0: none).
    pub(crate) fn cpu_partial(&self) -> u32 {
        arch::load_relaxed(&self.cpu_partial)
    }

    /// Changes `cpu_partial` (0 turns the per-CPU partial lists off; the lists already
    /// held are given back when the CPUs next flush or fill them). The suites' setter:
    /// the `cpu_partial` file writes through [`CacheCore::store_cpu_partial`].
    pub(crate) fn set_cpu_partial(&self, v: u32) {
        self.cpu_partial.store(v, Relaxed);
    }

    /// A write of the `cpu_partial` tunable, as 6.12's `cpu_partial_store()`
    /// (slub.c:6613-6628): a debug cache has no per-CPU partial lists
    /// (`kmem_cache_has_cpu_partial()`) and refuses any value but 0 with `EINVAL`,
    /// changing nothing; otherwise the value is set and every CPU's active slab and
    /// partial list go back to the nodes ([`CacheCore::flush_all`]). May sleep.
    pub(crate) fn store_cpu_partial(&self, v: u32) -> Result {
        if v != 0 && self.is_debug() {
            return Err(EINVAL);
        }
        self.set_cpu_partial(v);
        self.flush_all();
        Ok(())
    }

    /// Slabs a CPU's partial list holds at most: `cpu_partial` objects, counted as if
    /// each slab were half free (SLUB's `slub_set_cpu_partial()`).
    pub(crate) fn cpu_partial_slabs(&self) -> u32 {
        // A divisor the compiler knows is not zero (the layout has at least one object).
        let per_slab = NonZeroU32::new(self.layout.objects).unwrap_or(NonZeroU32::MIN);
        (self.cpu_partial() * 2 + per_slab.get() - 1) / per_slab
    }

    /// Whose defaults the cache follows.
    pub(crate) fn profile(&self) -> Profile {
        if arch::load_relaxed(&self.profile) == Profile::Tuned as u32 {
            Profile::Tuned
        } else {
            Profile::Classic
        }
    }

    /// Switches the cache to `profile`: its behaviour, and its `min_partial` and remote
    /// walk, which become the profile's defaults.
    pub(crate) fn set_profile(&self, profile: Profile) {
        self.profile.store(profile as u32, Relaxed);
        self.set_min_partial(default_min_partial(profile, self.layout.size));
        self.set_remote_walk(default_walk(profile));
    }

    /// How the remote walk goes.
    pub(crate) fn remote_walk(&self) -> RemoteWalk {
        if arch::load_relaxed(&self.walk) == RemoteWalk::Zonelist as u32 {
            RemoteWalk::Zonelist
        } else {
            RemoteWalk::NodesOnce
        }
    }

    /// Changes how the remote walk goes.
    pub(crate) fn set_remote_walk(&self, w: RemoteWalk) {
        self.walk.store(w as u32, Relaxed);
    }

    /// The per-node state of node `nid`.
    fn node(&self, nid: u32) -> &Node {
        &self.nodes[nid as usize]
    }

    /// The address the injection points pass to a test's hook for this cache.
    #[cfg(rslub_inject)]
    pub(crate) fn id(&self) -> usize {
        ptr::from_ref(self) as usize
    }

    /// Checks the current CPU's view of the cache against the `CpuSlab` invariant: every
    /// object on its private free list is an object of its active slab, and the list is
    /// no longer than the slab. Returns the length, or the first object that breaks it.
    /// For the suites, which pin themselves to the CPU they check.
    #[cfg(rslub_inject)]
    pub(crate) fn check_this_cpu(&self) -> Result<u32, usize> {
        let _irq = IrqDisabled::new();
        // SAFETY: Interrupts are off: this CPU's copy is ours.
        let c = unsafe { &*self.cpu.this_cpu() };
        let mut p = c.freelist;
        let mut n = 0u32;
        while !p.is_null() {
            // SAFETY: `p` is on this CPU's free list, an object of one of this cache's
            // slabs (if the invariant is broken, of another slab, still live).
            if unsafe { crate::slab::slab_of(p) } != c.slab || n >= self.layout.objects {
                return Err(p as usize);
            }
            n += 1;
            // SAFETY: As above.
            p = unsafe { self.fp.get(p) };
        }
        Ok(n)
    }

    /// Whether `cpu` has an active slab of this cache (a hint: it may change at once).
    #[cfg(rslub_inject)]
    pub(crate) fn has_active_slab(&self, cpu: kernel::cpu::CpuId) -> bool {
        // SAFETY: A live per-cpu area; a racy read of one word, for the suites.
        unsafe { ptr::read_volatile(&raw const (*self.cpu.on(cpu)).slab) != NO_SLAB }
    }

    /// Takes `node`'s lock, counting it, and counting a wait, and how long it took, if
    /// another CPU holds it.
    fn lock_node<'a>(&self, node: &'a Node, irq: &'a IrqDisabled) -> NodeGuard<'a> {
        self.stat(Stat::NodeLock);
        node.try_lock(irq).unwrap_or_else(|| {
            self.stat(Stat::NodeLockContended);
            let start = Instant::<Monotonic>::now();
            let g = node.lock(irq);
            let waited = start.elapsed().as_nanos().max(0) as u64;
            // SAFETY: Counter `NodeLockWaitNs` of this cache's live per-cpu area.
            unsafe {
                arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::NodeLockWaitNs), waited)
            };
            g
        })
    }

    /// The per-cpu address of this cache's `CpuSlab`.
    #[inline(always)]
    fn pcpu(&self) -> *mut u8 {
        self.cpu.pcpu().cast()
    }
}

/// For every node id, the node of each zone of its zonelist, in order (see
/// [`RemoteWalk::Zonelist`]); empty for offline nodes.
fn zonelist_nodes(nr_nodes: usize) -> Result<KVec<KVec<u16>>> {
    let mut all = KVec::with_capacity(nr_nodes, GFP_KERNEL)?;
    let mut buf = [0u16; 64];
    for nid in 0..nr_nodes as i32 {
        let n = if shim::node_online(nid) {
            shim::zonelist_nodes(nid, &mut buf)
        } else {
            0
        };
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        v.extend_from_slice(&buf[..n], GFP_KERNEL)?;
        all.push(v, GFP_KERNEL)?;
    }
    Ok(all)
}

/// For every node id, the other online nodes sorted by `node_distance()`, nearest first.
fn nearest_nodes(nr_nodes: usize) -> Result<KVec<KVec<u16>>> {
    let mut all = KVec::with_capacity(nr_nodes, GFP_KERNEL)?;
    for from in 0..nr_nodes as i32 {
        let mut v: KVec<u16> = KVec::new();
        for to in 0..nr_nodes as i32 {
            if to != from && shim::node_online(to) {
                v.push(to as u16, GFP_KERNEL)?;
            }
        }
        // Insertion sort by distance (a handful of nodes); ties keep id order.
        let dist = |to: u16| {
            // SAFETY: both are valid node ids.
            unsafe { bindings::__node_distance(from, i32::from(to)) }
        };
        for i in 1..v.len() {
            let mut j = i;
            while j > 0 && dist(v[j - 1]) > dist(v[j]) {
                v.swap(j - 1, j);
                j -= 1;
            }
        }
        all.push(v, GFP_KERNEL)?;
    }
    Ok(all)
}
