// SPDX-License-Identifier: GPL-2.0

//! A kmem cache: its per-cpu active slabs, its per-node partial lists, and the
//! allocation and free paths over them. The design, the lock order and the fast/slow
//! split are described once, in the crate documentation (`rust/rslub.rs`).

#[path = "cache_debug.rs"]
mod debug_paths;

use crate::{
    arch, debug,
    gfp::Gfp,
    inject::{inject, Point},
    layout::{self, Layout},
    mm::{self, SlabPages},
    node::{Node, NodeGuard},
    percpu::{possible_cpus, PerCpu},
    shim::{self, IrqDisabled},
    slab::{self, FreePtr, Geometry, Slab, State},
    stats::{Stat, Stats, NR_STATS},
};
use core::{mem::offset_of, pin::Pin, ptr, ptr::NonNull};
use kernel::{
    alloc::flags::GFP_KERNEL,
    bindings,
    cpu::CpuId,
    error::code::{EINVAL, ENODEV, ENOMEM},
    prelude::*,
    str::CString,
    sync::atomic::{Atomic, Relaxed},
};

/// `NUMA_NO_NODE`: any node, the local one preferred.
pub(crate) const NO_NODE: i32 = bindings::NUMA_NO_NODE;

/// A constructor, run once on every object when its slab is created.
pub(crate) type Ctor = unsafe extern "C" fn(*mut core::ffi::c_void);

/// `CpuSlab::slab` of a CPU without an active slab. Not 0: a pointer that is not an
/// object of rslub may lie on a page whose `private` field is 0, and the free fast path
/// compares that field with `slab`; no slab's metadata is at address 1.
const NO_SLAB: u64 = 1;

/// Distance between transaction ids of one CPU: the CPU number lives in the low bits, so
/// ids of different CPUs never compare equal (SLUB's `TID_STEP`).
const TID_STEP: u64 = (bindings::NR_CPUS as u64).next_power_of_two();

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
/// - If `slab` is [`NO_SLAB`], `freelist` is null. Otherwise `slab` is frozen by this CPU,
///   `node` is its node, and `freelist` chains free objects of `slab` only, owned by
///   this CPU.
#[repr(C, align(16))]
pub(crate) struct CpuSlab {
    freelist: u64,
    tid: u64,
    slab: u64,
    node: u64,
    stats: [u64; NR_STATS],
}

// SAFETY: All fields are integers; all-zero is a valid `CpuSlab` except for the `tid`
// and `slab` invariants, which `CacheCore::new` establishes before publishing the cache.
unsafe impl Zeroable for CpuSlab {}

/// Arguments of [`CacheCore::new`].
pub(crate) struct CacheArgs<'a> {
    /// Name, unique among live caches.
    pub(crate) name: &'a CStr,
    /// Object size in bytes.
    pub(crate) size: u32,
    /// Alignment (0: pointer size); a power of two.
    pub(crate) align: u32,
    /// `layout::HWCACHE_ALIGN` and the debug flags (`layout::SANITY`, ...).
    pub(crate) flags: u32,
    /// Optional constructor.
    pub(crate) ctor: Option<Ctor>,
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
    /// `!(bytes of the largest slab - 1)`: two objects of one slab agree on these bits
    /// ([`FreePtr::same_slab`]). The page allocator aligns 2^order pages to their size,
    /// the direct map keeps that alignment (its base is at least 1 GiB aligned), and a slab
    /// of the fallback order lies inside one block of the preferred order's size.
    slab_mask: usize,
    ctor: Option<Ctor>,
    cpu: PerCpu<CpuSlab>,
    nodes: KVec<Pin<KBox<Node>>>,
    near: KVec<KVec<u16>>,
    zonelist: KVec<KVec<u16>>,
    multi_node: bool,
    min_partial: Atomic<u32>,
    remote_node_defrag_ratio: Atomic<u32>,
    walk: Atomic<u32>,
    /// `Gfp::ZERO` when every allocation is zeroed (`init_on_alloc`), else 0: or'ed into
    /// the caller's flags by the allocation paths. Fixed at creation (a plain load on the
    /// fast path).
    init_on_alloc: u32,
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
    /// Nodes nearest first, each once, none on a one-node machine (the default).
    NodesOnce = 0,
    /// SLUB before the 2018 fix: the local zonelist zone by zone, so a node with several
    /// zones is looked at several times (the local node too), even on one node.
    Zonelist = 1,
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
        let rules = layout::OrderRules {
            min_order: params.min_order(),
            max_order: params.max_order(),
            min_objects: params.min_objects(topo.scaling_cpus()),
        };
        let flags = args.flags | params.debug().flags_for(args.name.to_bytes());
        let layout = Layout::new(
            args.size,
            args.align,
            flags,
            args.ctor.is_some(),
            shim::cache_line_size(),
            rules,
        )?;
        let min_partial = layout.min_partial(params.min_partial_override());

        // SAFETY: `nr_node_ids` is set during boot and never changes afterwards.
        let nr_nodes = unsafe { bindings::nr_node_ids } as usize;
        let mut nodes = KVec::with_capacity(nr_nodes, GFP_KERNEL)?;
        for _ in 0..nr_nodes {
            nodes.push(KBox::pin_init(Node::new(), GFP_KERNEL)?, GFP_KERNEL)?;
        }
        let near = nearest_nodes(nr_nodes)?;
        let zonelist = zonelist_nodes(nr_nodes)?;
        let cpu = PerCpu::<CpuSlab>::new()?;
        for c in possible_cpus() {
            // INVARIANT: each CPU's `tid` starts at its own number, with no active slab;
            // no other CPU sees the cache yet.
            // SAFETY: `on(c)` is CPU `c`'s copy, valid and not yet shared.
            unsafe {
                (*cpu.on(c)).tid = u64::from(c.as_u32());
                (*cpu.on(c)).slab = NO_SLAB;
            }
        }
        let name = CString::try_from(args.name)?;
        // Boot parameters; the suites can pretend they are set (`inject::init_on`).
        let (init_on_alloc, init_on_free) = (shim::init_on_alloc(), shim::init_on_free());
        #[cfg(rslub_inject)]
        let (init_on_alloc, init_on_free) =
            crate::inject::init_on().unwrap_or((init_on_alloc, init_on_free));
        // INVARIANT: a node per node id, neighbour lists from `nearest_nodes`, fixed
        // layout.
        KBox::pin_init(
            pin_init!(Self {
                name,
                fp: FreePtr::new(layout.free_offset, shim::random_u64()),
                slab_mask: !(layout::slab_bytes(layout.order) as usize - 1),
                layout,
                ctor: args.ctor,
                cpu,
                nodes,
                near,
                zonelist,
                multi_node: topo.online_nodes > 1,
                min_partial: Atomic::new(min_partial),
                remote_node_defrag_ratio: Atomic::new(DEFAULT_REMOTE_NODE_DEFRAG_RATIO),
                walk: Atomic::new(RemoteWalk::NodesOnce as u32),
                // As SLUB's `slab_want_init_on_*()`: constructed objects keep their
                // contents.
                init_on_alloc: if init_on_alloc && args.ctor.is_none() {
                    Gfp::ZERO
                } else {
                    0
                },
                init_on_free: init_on_free && args.ctor.is_none(),
                free_special: (*init_on_free && args.ctor.is_none()) || layout.debug != 0,
                debug: debug::Format::new(layout),
                last_error: Atomic::new(0),
                last_error_at: Atomic::new(0),
            }),
            GFP_KERNEL,
        )
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
        self.min_partial.load(Relaxed)
    }

    /// Changes `min_partial`.
    pub(crate) fn set_min_partial(&self, v: u32) {
        self.min_partial.store(v, Relaxed);
    }

    /// Chance, in 1/1024ths, that a refill with no local partial slab walks the other
    /// nodes (0: never; 1024: always).
    pub(crate) fn remote_node_defrag_ratio(&self) -> u32 {
        self.remote_node_defrag_ratio.load(Relaxed)
    }

    /// Changes `remote_node_defrag_ratio` (clamped to 1024).
    pub(crate) fn set_remote_node_defrag_ratio(&self, v: u32) {
        self.remote_node_defrag_ratio.store(v.min(1024), Relaxed);
    }

    /// How the remote walk goes.
    pub(crate) fn remote_walk(&self) -> RemoteWalk {
        if self.walk.load(Relaxed) == RemoteWalk::Zonelist as u32 {
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
        let mut p = c.freelist as usize as *mut u8;
        let mut n = 0u32;
        while !p.is_null() {
            // SAFETY: `p` is on this CPU's free list, an object of one of this cache's
            // slabs (if the invariant is broken, of another slab, still live).
            if unsafe { mm::slab_of(p) } as u64 != c.slab || n >= self.layout.objects {
                return Err(p as usize);
            }
            n += 1;
            // SAFETY: As above.
            p = unsafe { self.fp.get(p) };
        }
        Ok(n)
    }

    /// Counter values summed over all CPUs.
    pub(crate) fn stats(&self) -> Stats {
        let mut s = Stats::ZERO;
        for c in possible_cpus() {
            // SAFETY: CPU `c`'s copy is live; the counters are plain integers, and a torn
            // or stale read only makes the snapshot slightly old.
            let counters = unsafe { ptr::read_volatile(&raw const (*self.cpu.on(c)).stats) };
            s.add(&counters);
        }
        s
    }

    /// Slabs and objects per node: `(slabs, objects, partial slabs)` of node `nid`.
    pub(crate) fn node_counts(&self, nid: u32) -> (i64, i64, u32) {
        let n = self.node(nid);
        (n.nr_slabs(), n.total_objects(), n.nr_partial())
    }

    /// Whether `cpu` has an active slab of this cache (a hint: it may change at once).
    #[cfg(rslub_inject)]
    pub(crate) fn has_active_slab(&self, cpu: CpuId) -> bool {
        // SAFETY: A live per-cpu area; a racy read of one word, for the suites.
        unsafe { ptr::read_volatile(&raw const (*self.cpu.on(cpu)).slab) != NO_SLAB }
    }

    /// Offset of counter `s` in a `CpuSlab`.
    const fn stat_offset(s: Stat) -> usize {
        offset_of!(CpuSlab, stats) + s as usize * 8
    }

    /// Counts `s` on the current CPU.
    #[inline(always)]
    fn stat(&self, s: Stat) {
        // SAFETY: The address is counter `s` of this cache's live per-cpu area.
        unsafe { arch::this_cpu_inc(self.pcpu(), Self::stat_offset(s)) };
    }

    /// Takes `node`'s lock, counting it, and counting a wait if another CPU holds it.
    fn lock_node<'a>(&self, node: &'a Node, irq: &'a IrqDisabled) -> NodeGuard<'a> {
        self.stat(Stat::NodeLock);
        node.try_lock(irq).unwrap_or_else(|| {
            self.stat(Stat::NodeLockContended);
            node.lock(irq)
        })
    }

    /// Takes back a [`CacheCore::stat`] whose event did not happen.
    fn stat_sub(&self, s: Stat) {
        // SAFETY: The address is counter `s` of this cache's live per-cpu area.
        unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(s), u64::MAX) };
    }

    /// The per-cpu address of this cache's `CpuSlab`.
    #[inline(always)]
    fn pcpu(&self) -> *mut u8 {
        self.cpu.pcpu().cast()
    }

    // ----- allocation ---------------------------------------------------------------

    /// Allocates an object, on the local node if it can (`kmem_cache_alloc`). The
    /// `Result` forms are the suites'; the C API takes [`CacheCore::alloc_ptr`].
    #[cfg(rslub_inject)]
    #[inline]
    pub(crate) fn alloc(&self, gfp: Gfp) -> Result<NonNull<u8>> {
        self.alloc_node(gfp, NO_NODE)
    }

    /// Allocates an object from node `node` (`NO_NODE`: any, the local one preferred). A
    /// node that is online but has no memory gives an object of the nearest node that
    /// has; a node that is not online is `EINVAL`.
    #[cfg(rslub_inject)]
    #[inline]
    pub(crate) fn alloc_node(&self, gfp: Gfp, node: i32) -> Result<NonNull<u8>> {
        NonNull::new(self.alloc_ptr(gfp, node)).ok_or_else(|| alloc_error(node))
    }

    /// [`CacheCore::alloc_node`] as the C API returns it: null on failure.
    ///
    /// Fast path: take the head of this CPU's free list with one `cmpxchg16b` on
    /// (freelist, tid), without a lock, an atomic bus operation or interrupts off. The
    /// slow path and the zeroing path are tail calls.
    #[inline(always)]
    pub(crate) fn alloc_ptr(&self, gfp: Gfp, node: i32) -> *mut u8 {
        // One `or` and one test on the fast path.
        let gfp = gfp.with(self.init_on_alloc);
        if gfp.has(Gfp::ZERO) {
            return self.alloc_zeroed(gfp, node);
        }
        self.alloc_object(gfp, node)
    }

    /// [`CacheCore::alloc_ptr`] for `__GFP_ZERO` (or `init_on_alloc`).
    #[inline(never)]
    #[cold]
    fn alloc_zeroed(&self, gfp: Gfp, node: i32) -> *mut u8 {
        let object = self.alloc_object(gfp, node);
        if !object.is_null() {
            self.zero(object);
        }
        object
    }

    /// The allocation fast path, and the way into the slow path; null on failure.
    #[inline(always)]
    fn alloc_object(&self, gfp: Gfp, node: i32) -> *mut u8 {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const NODE: usize = offset_of!(CpuSlab, node);
        let pcpu = self.pcpu();
        loop {
            // One CPU's copy, read through one pointer: the task may migrate at any point
            // below, but every value comes from the CPU whose `tid` the commit checks. The
            // commit runs on the CPU the task is on then; `tid` carries the CPU number,
            // so on any other CPU it fails, and on that CPU any change since the `tid`
            // was read (an interrupt, another task) has advanced it.
            // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
            let c = unsafe { arch::raw_cpu_ptr(pcpu) };
            // `tid` first: `read_once` keeps the loads in program order, and x86 does not
            // reorder loads with loads.
            // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
            let tid = unsafe { arch::read_once::<TID>(c) };
            // SAFETY: As above.
            let object = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
            inject!(self, Point::AllocHeadRead);
            if object.is_null()
                // SAFETY: As above.
                || (node != NO_NODE && unsafe { arch::read_once::<NODE>(c) } != node as u64)
            {
                return self.alloc_slow(gfp, node);
            }
            inject!(self, Point::AllocNodeRead);
            // SAFETY: `object` was on a CPU free list of this cache an instant ago, so it is
            // direct-map memory of a slab, or of pages since given back; the direct map
            // stays mapped (caches refuse `debug_pagealloc`, see `check_machine`), and a
            // value read from a reused object is discarded by the failing `cmpxchg16b`.
            let next = unsafe { self.fp.get(object) };
            // A free pointer must stay in its slab: anything else (or the end of the list)
            // is sorted out with interrupts off, where no reuse can race.
            if !FreePtr::same_slab(object, next, self.slab_mask) {
                return self.alloc_unusual(gfp, node);
            }
            // SAFETY: `pcpu + FREELIST` is the 16-byte aligned (freelist, tid) pair of the
            // current CPU's copy; CX16 was checked at load.
            if unsafe {
                arch::this_cpu_cmpxchg16b(
                    pcpu.wrapping_add(FREELIST).cast(),
                    [object as u64, tid],
                    [next as u64, tid.wrapping_add(TID_STEP)],
                )
            } {
                // SAFETY: The `alloc_fast` counter of this cache's per-cpu area.
                unsafe { arch::this_cpu_inc_at::<{ Self::stat_offset(Stat::AllocFast) }>(pcpu) };
                return object;
            }
        }
    }

    /// Zeroes the object at `object` (`__GFP_ZERO`, `init_on_alloc`, `init_on_free`).
    fn zero(&self, object: *mut u8) {
        // SAFETY: `object` is an object of this cache owned by the caller, `object_size`
        // bytes long.
        unsafe { ptr::write_bytes(object, 0, self.layout.object_size as usize) };
    }

    /// The allocation slow path (`___slab_alloc`), with interrupts off on this CPU except
    /// while a new slab comes from the page allocator. Returns null on failure (a node
    /// that is not online, or no memory): a plain pointer keeps the fast path's caller
    /// free of a stack slot for the result.
    ///
    /// For an explicit node, as SLUB: a node without memory is no constraint; otherwise
    /// that node's partial slabs, then a new slab of that node only, without sleeping
    /// (`Gfp::for_this_node_only`); if that fails, partial slabs of the other nodes, then
    /// a new slab wherever the page allocator finds one with the caller's flags.
    #[inline(never)]
    fn alloc_slow(&self, gfp: Gfp, node: i32) -> *mut u8 {
        if self.is_debug() {
            return self.alloc_debug(gfp, node);
        }
        if node != NO_NODE && !shim::node_online(node) {
            return ptr::null_mut();
        }
        let node = if node != NO_NODE && !shim::node_has_memory(node) {
            NO_NODE
        } else {
            node
        };
        // First try the node asked for only; `__GFP_THISNODE` from the caller means only.
        let mut this_node_first = node != NO_NODE && !gfp.has(Gfp::THISNODE);
        let mut irq = IrqDisabled::new();
        self.stat(Stat::AllocSlow);
        loop {
            // SAFETY: Interrupts are off, so this CPU's copy is ours until `irq` drops and
            // the fast paths of tasks preempted on this CPU will fail their `cmpxchg16b`
            // on the advanced `tid`.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            let slab = c.slab as usize as *mut Slab;
            if c.slab != NO_SLAB {
                if node != NO_NODE && c.node != node as u64 {
                    self.stat(Stat::NodeMismatch);
                    self.flush(c);
                    continue;
                }
                let mut object = c.freelist as usize as *mut u8;
                if object.is_null() {
                    // SAFETY: `slab` is frozen by this CPU (invariant), hence live.
                    object = unsafe { (*slab).take_freelist() };
                    if object.is_null() {
                        // The slab is full and `take_freelist` unfroze it: it is on no
                        // list until a free makes it partial.
                        c.slab = NO_SLAB;
                        c.tid = c.tid.wrapping_add(TID_STEP);
                        continue;
                    }
                    self.stat(Stat::RefillFromSlab);
                }
                return self.load_object(c, object);
            }
            let only_node = node != NO_NODE && (this_node_first || gfp.has(Gfp::THISNODE));
            if let Some((slab, object)) = self.get_partial(node, only_node, &irq) {
                self.install(c, slab, object);
                return self.load_object(c, object);
            }
            // A new slab; the page allocator may sleep, so interrupts go back on, and
            // the task may come back on another CPU.
            drop(irq);
            let flags = if this_node_first {
                gfp.for_this_node_only()
            } else {
                gfp
            };
            let new = self.new_slab(flags, node);
            irq = IrqDisabled::new();
            let Ok((slab, object)) = new else {
                if this_node_first {
                    // The node cannot give a slab now: other nodes' partial slabs next.
                    this_node_first = false;
                    continue;
                }
                self.stat(Stat::AllocFailed);
                return ptr::null_mut();
            };
            // SAFETY: As above, for the CPU we are on now.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            if c.slab != NO_SLAB {
                self.flush(c);
            }
            self.install(c, slab, object);
            return self.load_object(c, object);
        }
    }

    /// Makes `slab` (frozen by the caller, its free list starting at `object`) this CPU's
    /// active slab.
    fn install(&self, c: &mut CpuSlab, slab: *mut Slab, object: *mut u8) {
        // INVARIANT: `slab` is frozen for this CPU; its free list is the CPU's (set by
        // `load_object` right after); `tid` advances.
        c.slab = slab as u64;
        // SAFETY: `slab` is live (frozen by the caller).
        c.node = u64::from(unsafe { (*slab).node });
        c.freelist = object as u64;
        c.tid = c.tid.wrapping_add(TID_STEP);
    }

    /// Hands out `object`, the head of this CPU's free list, keeping the rest.
    fn load_object(&self, c: &mut CpuSlab, object: *mut u8) -> *mut u8 {
        // SAFETY: `object` is a free object of this cache owned by this CPU (the head of
        // its list, which the caller holds with interrupts off).
        c.freelist = unsafe { self.checked_next(object) } as u64;
        c.tid = c.tid.wrapping_add(TID_STEP);
        object
    }

    /// The free pointer of `object`, a free object this CPU owns (its private list, with
    /// interrupts off, or the caller's own list): no reuse can race, so a pointer out of
    /// the slab is corruption. It is reported and the list cut there: the objects after
    /// it are never handed out (nor freed: their slab keeps them counted in use).
    ///
    /// # Safety
    ///
    /// `object` must be a free object of this cache that the caller owns.
    unsafe fn checked_next(&self, object: *mut u8) -> *mut u8 {
        // SAFETY: `object` is a free object of this cache owned by the caller.
        let next = unsafe { self.fp.get(object) };
        if next.is_null() || FreePtr::same_slab(object, next, self.slab_mask) {
            return next;
        }
        self.freelist_corrupted(object, next);
        // SAFETY: As above.
        unsafe { self.fp.set(object, ptr::null_mut()) };
        ptr::null_mut()
    }

    /// Reports a free pointer found out of its slab (once per cache; each is counted).
    #[cold]
    fn freelist_corrupted(&self, object: *mut u8, next: *mut u8) {
        if self.stats().get(Stat::FreelistCorrupt) == 0 {
            pr_err!(
                "cache {}: free pointer of free object {:p} overwritten (decodes to {:p}, outside its slab); its free list is cut there\n",
                self.name(),
                object,
                next
            );
        }
        self.stat(Stat::FreelistCorrupt);
    }

    /// The fast path's free pointer check failed: the end of the CPU's list, a reuse
    /// racing with the fast path, or corruption. With interrupts off the head and its
    /// free pointer are this CPU's alone: hands the head out, and leaves the CPU's list
    /// with what [`Self::checked_next`] says follows it.
    #[cold]
    #[inline(never)]
    fn alloc_unusual(&self, gfp: Gfp, node: i32) -> *mut u8 {
        {
            let _irq = IrqDisabled::new();
            // SAFETY: Interrupts are off: this CPU's copy is ours.
            let c = unsafe { &mut *self.cpu.this_cpu() };
            let object = c.freelist as usize as *mut u8;
            if !object.is_null() && (node == NO_NODE || c.node == node as u64) {
                self.stat(Stat::AllocFast);
                return self.load_object(c, object);
            }
        }
        self.alloc_slow(gfp, node)
    }

    /// Gives this CPU's active slab back to its node (`deactivate_slab`). Interrupts are
    /// off, or the cache is being destroyed and no CPU uses it.
    fn flush(&self, c: &mut CpuSlab) {
        let slab = c.slab as usize as *mut Slab;
        let freelist = c.freelist as usize as *mut u8;
        c.slab = NO_SLAB;
        c.freelist = 0;
        c.tid = c.tid.wrapping_add(TID_STEP);
        self.stat(Stat::CpuSlabFlush);
        // SAFETY: `slab` was this CPU's active slab, frozen by it, and `freelist` its
        // private free list.
        unsafe { self.deactivate(slab, freelist) };
    }

    /// Unfreezes `slab`, splicing the private free list `freelist` back, and puts the slab
    /// where it belongs: partial list, page allocator (empty, enough partials), or nowhere
    /// (full).
    ///
    /// # Safety
    ///
    /// `slab` must be frozen by the caller, who owns the private free list `freelist` of
    /// it and gives both up.
    unsafe fn deactivate(&self, slab: *mut Slab, freelist: *mut u8) {
        // SAFETY: The caller holds the slab frozen, so it is live.
        let s = unsafe { &*slab };
        // Stage one: count the private free objects and find the last.
        let (mut count, mut tail, mut p) = (0u32, ptr::null_mut::<u8>(), freelist);
        while !p.is_null() {
            count += 1;
            tail = p;
            // SAFETY: `p` is on the caller's private free list.
            p = unsafe { self.checked_next(p) };
        }
        // Stage two: unfreeze, putting the private objects in front of the shared ones.
        let new = loop {
            let old = s.state();
            let head = if tail.is_null() {
                old.freelist
            } else {
                // SAFETY: `tail` is a free object the caller owns.
                unsafe { self.fp.set(tail, old.freelist) };
                freelist
            };
            let new = State {
                freelist: head,
                counters: slab::counters(old.inuse() - count, false),
            };
            if s.update(old, new) {
                break new;
            }
        };
        // Stage three: place the slab.
        let node = self.node(s.node);
        if new.inuse() == 0 && node.nr_partial() >= self.min_partial() {
            // Empty and the node has enough partial slabs. Not on any list (it was
            // frozen), and with nothing allocated from it no free can race.
            // SAFETY: `slab` is on no list and no CPU holds it.
            unsafe { self.discard(slab) };
        } else if !new.freelist.is_null() {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            // SAFETY: `slab` is a live slab of this node; a free that raced with stage two
            // saw it unfrozen but off the list and left it to us, so it is on no list.
            unsafe { g.list().add(slab, true) };
        }
    }

    /// Finds a partial slab: on `node` (or the local node for `NO_NODE`), then, unless
    /// `only_node`, on the other nodes. Returns the slab frozen and its free list.
    fn get_partial(
        &self,
        node: i32,
        only_node: bool,
        irq: &IrqDisabled,
    ) -> Option<(*mut Slab, *mut u8)> {
        self.stat(Stat::GetPartial);
        let local = if node == NO_NODE {
            shim::numa_mem_id()
        } else {
            node
        };
        if !shim::node_online(local) {
            return None;
        }
        self.stat(Stat::NodesTried);
        if let Some(r) = self.get_partial_node(local.unsigned_abs(), irq) {
            self.stat(Stat::RefillNodePartial);
            return Some(r);
        }
        if only_node {
            return None;
        }
        self.get_any_partial(local.unsigned_abs(), irq)
    }

    /// Takes the first partial slab of node `nid`, frozen, with its free list.
    fn get_partial_node(&self, nid: u32, irq: &IrqDisabled) -> Option<(*mut Slab, *mut u8)> {
        let node = self.node(nid);
        if node.nr_partial() == 0 {
            return None;
        }
        let mut g = self.lock_node(node, irq);
        let slab = g.list().first()?;
        // SAFETY: `slab` is on this node's list and the lock is held.
        unsafe { g.list().remove(slab) };
        // SAFETY: A slab on a partial list is live. Not frozen and with free objects, all
        // of which are on its shared list: `take_freelist` returns them and freezes it.
        let object = unsafe { (*slab).take_freelist() };
        debug_assert!(!object.is_null());
        Some((slab, object))
    }

    /// Looks for a partial slab on the other nodes, nearest first, each node once
    /// (`get_any_partial`; seed thread 003). Skipped when the machine has one node, and,
    /// as in SLUB, on a share of calls set by `remote_node_defrag_ratio`; a node is only
    /// locked when it has more than `min_partial` partial slabs. With
    /// [`RemoteWalk::Zonelist`] it walks as SLUB did before the fix, for comparison.
    fn get_any_partial(&self, local: u32, irq: &IrqDisabled) -> Option<(*mut Slab, *mut u8)> {
        let walk = self.remote_walk();
        if walk == RemoteWalk::NodesOnce && !self.multi_node {
            return None;
        }
        let ratio = self.remote_node_defrag_ratio();
        if ratio == 0 || (arch::cycles() % 1024) as u32 > ratio {
            self.stat(Stat::RemoteWalkSkipped);
            return None;
        }
        self.stat(Stat::RemoteWalk);
        let min_partial = self.min_partial();
        let order = match walk {
            RemoteWalk::NodesOnce => &self.near,
            RemoteWalk::Zonelist => &self.zonelist,
        };
        for &nid in order.get(local as usize)?.iter() {
            inject!(self, Point::RemoteNode(u32::from(nid)));
            self.stat(Stat::RemoteNodesTried);
            self.stat(Stat::NodesTried);
            if self.node(u32::from(nid)).nr_partial() > min_partial {
                if let Some(r) = self.get_partial_node(u32::from(nid), irq) {
                    self.stat(Stat::RefillRemotePartial);
                    return Some(r);
                }
            }
        }
        None
    }

    /// Allocates and formats a new slab, frozen, for the calling CPU, with the flags of
    /// [`crate::gfp`]: the preferred order may fail quietly (then the smallest order that
    /// holds one object, with `gfp` as given), the metadata takes the reclaim bits of
    /// `gfp`. Interrupts must be on if `gfp` may sleep.
    fn new_slab(&self, gfp: Gfp, node: i32) -> Result<(*mut Slab, *mut u8)> {
        let l = &self.layout;
        let gfp = gfp.for_pages();
        let min_order = layout::get_order(u64::from(l.size));
        let (pages, order) = if l.order > min_order {
            match self.alloc_pages(gfp.for_preferred_order(), node, l.order) {
                Some(p) => (p, l.order),
                None => {
                    self.stat(Stat::OrderFallback);
                    let p = self.alloc_pages(gfp, node, min_order).ok_or(ENOMEM)?;
                    (p, min_order)
                }
            }
        } else {
            (self.alloc_pages(gfp, node, l.order).ok_or(ENOMEM)?, l.order)
        };
        let g = Geometry {
            size: l.size,
            fp: self.fp,
            objects: layout::order_objects(order, l.stride()),
        };
        let (slab, object) = Slab::new_frozen(pages, g, ptr::from_ref(self).cast(), self.ctor);
        let meta = gfp.for_metadata();
        if inject!(self, Point::MetaAlloc { gfp: meta.raw() }) {
            return Err(ENOMEM);
        }
        let slab = slab.publish(meta)?;
        // SAFETY: Just published, live.
        let s = unsafe { slab.as_ref() };
        self.node(s.node).slab_added(s.objects);
        self.stat(Stat::NewSlab);
        Ok((slab.as_ptr(), object))
    }

    /// `2^order` pages on `node` with exactly `gfp`.
    fn alloc_pages(&self, gfp: Gfp, node: i32, order: u32) -> Option<SlabPages> {
        if inject!(
            self,
            Point::PageAlloc {
                gfp: gfp.raw(),
                order,
                node
            }
        ) {
            return None;
        }
        SlabPages::alloc(node, gfp, order)
    }

    /// Gives an empty slab back to the page allocator.
    ///
    /// # Safety
    ///
    /// `slab` must be empty, on no list and held by no CPU; nothing may use it afterwards.
    unsafe fn discard(&self, slab: *mut Slab) {
        // SAFETY: The caller gives up the slab, which is live until here.
        let (nid, objects) = unsafe { ((*slab).node, (*slab).objects) };
        self.node(nid).slab_removed(objects);
        self.stat(Stat::SlabFreed);
        // SAFETY: The slab came from `Slab::publish` in `new_slab` (non-null), and the
        // caller gives it up.
        unsafe { Slab::free(NonNull::new_unchecked(slab)) };
    }

    // ----- free ---------------------------------------------------------------------

    /// Frees `object` (`kmem_cache_free`).
    ///
    /// Fast path: the object's slab is this CPU's active slab; push it on the CPU free
    /// list with one `cmpxchg16b` on (freelist, tid).
    ///
    /// Once the object is free, the cache may be destroyed by another CPU (destruction
    /// allows frees of objects still allocated to race with it): no path touches the cache
    /// after the update that frees the object, except to release a node lock that
    /// destruction takes before it counts (see [`CacheCore::shutdown`]).
    ///
    /// # Safety
    ///
    /// `object` must have been allocated from this cache and not freed since, and must not
    /// be used afterwards.
    #[inline]
    pub(crate) unsafe fn free(&self, object: NonNull<u8>) {
        if self.free_special {
            // SAFETY: The caller's guarantees pass on.
            return unsafe { self.free_unusual(object.as_ptr()) };
        }
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object(object.as_ptr()) }
    }

    /// [`CacheCore::free`] with `init_on_free`, or into a debug cache.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`]; a debug cache checks what it can of that.
    #[inline(never)]
    #[cold]
    unsafe fn free_unusual(&self, object: *mut u8) {
        if self.is_debug() {
            return self.free_debug(object);
        }
        self.zero(object);
        // SAFETY: The caller's guarantees pass on.
        unsafe { self.free_object(object) }
    }

    /// The free fast path, and the way into the slow path.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`].
    #[inline(always)]
    unsafe fn free_object(&self, object: *mut u8) {
        const FREELIST: usize = offset_of!(CpuSlab, freelist);
        const TID: usize = offset_of!(CpuSlab, tid);
        const SLAB: usize = offset_of!(CpuSlab, slab);
        const FREE_FAST: usize = CacheCore::stat_offset(Stat::FreeFast);
        // SAFETY: `object` is a live object of this cache (caller), inside one of its slabs.
        let slab = unsafe { mm::slab_of(object) } as u64;
        let pcpu = self.pcpu();
        loop {
            // As in `alloc_node`: one CPU's copy, `tid` first; the commit fails on any
            // other CPU, so the active slab compared here is the one the commit checks.
            // SAFETY: `pcpu` is this cache's live per-cpu `CpuSlab`.
            let c = unsafe { arch::raw_cpu_ptr(pcpu) };
            // SAFETY: `c` is one CPU's `CpuSlab`, live, and these are its aligned fields.
            let tid = unsafe { arch::read_once::<TID>(c) };
            inject!(self, Point::FreeTidRead);
            // SAFETY: As above.
            if unsafe { arch::read_once::<SLAB>(c) } != slab {
                // SAFETY: The caller's guarantees pass on.
                return unsafe { self.free_slow(slab as usize as *mut Slab, object) };
            }
            inject!(self, Point::FreeSlabRead);
            // SAFETY: As above.
            let head = unsafe { arch::read_once::<FREELIST>(c) } as usize as *mut u8;
            // SAFETY: The caller owns `object`, a free-to-be object of this cache.
            unsafe { self.fp.set(object, head) };
            // Counted before the commit, which is the last touch of the cache.
            // SAFETY: The `free_fast` counter of this cache's per-cpu area.
            unsafe { arch::this_cpu_inc_at::<FREE_FAST>(pcpu) };
            // SAFETY: `pcpu + FREELIST` is the 16-byte aligned (freelist, tid) pair of the
            // current CPU's copy.
            if unsafe {
                arch::this_cpu_cmpxchg16b(
                    pcpu.wrapping_add(FREELIST).cast(),
                    [head as u64, tid],
                    [object as u64, tid.wrapping_add(TID_STEP)],
                )
            } {
                return;
            }
            // Not freed: the object is still live, so is the cache.
            // SAFETY: As above.
            unsafe { arch::this_cpu_dec_at::<FREE_FAST>(pcpu) };
        }
    }

    /// The free slow path (`__slab_free`): the slab is not this CPU's active slab. Push
    /// the object on the slab's shared list with `lock cmpxchg16b`; only when the slab
    /// changes list (full to partial, or partial to empty) take the node lock.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`]; `slab` is what the object's page holds as its slab
    /// (checked here).
    #[inline(never)]
    unsafe fn free_slow(&self, slab: *mut Slab, object: *mut u8) {
        if !self.owns(object) {
            return self.foreign_free(object);
        }
        // SAFETY: One object is a chain of one.
        unsafe { self.free_chain(slab, object, object, 1) }
    }

    /// Whether `object` lies on a slab page of this cache ([`mm::owning_cache`]): a
    /// pointer that is not an object of this cache never reaches the fast path's commit
    /// (its slab is no active slab of this cache), so the slow paths catch it here.
    #[inline(always)]
    fn owns(&self, object: *const u8) -> bool {
        // SAFETY: A pointer passed to free is a direct-map address (an object of some
        // slab, by the caller's contract, which this checks without following anything).
        unsafe { mm::owning_cache(object) == ptr::from_ref(self) as usize }
    }

    /// Frees `count` objects of `slab` chained from `head` to `tail` through their free
    /// pointers (the free pointer of `tail` is set here), with one update of the slab.
    ///
    /// # Safety
    ///
    /// The objects are live objects of this cache in `slab`, owned by the caller and not
    /// used afterwards; the chain links exactly them.
    unsafe fn free_chain(&self, slab: *mut Slab, head: *mut u8, tail: *mut u8, count: u32) {
        self.stat(Stat::FreeSlow);
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        loop {
            let old = s.state();
            let inuse = old.inuse() - count;
            if !old.frozen() && (inuse == 0 || old.freelist.is_null()) {
                // SAFETY: As for this function.
                return unsafe { self.free_chain_locked(slab, head, tail, count) };
            }
            // SAFETY: The caller owns `tail`.
            unsafe { self.fp.set(tail, old.freelist) };
            let new = State {
                freelist: head,
                counters: slab::counters(inuse, old.frozen()),
            };
            // Counted before the update, which is the last touch of the cache.
            if old.frozen() {
                self.stat(Stat::FreeFrozen);
            }
            if s.update(old, new) {
                return;
            }
            if old.frozen() {
                self.stat_sub(Stat::FreeFrozen);
            }
        }
    }

    /// The part of the free slow path that may move the slab between lists. All of it
    /// runs under the node lock, including giving an emptied slab back: destruction takes
    /// every node lock before it counts what is left, so it never sees a slab half gone.
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free_chain`].
    unsafe fn free_chain_locked(&self, slab: *mut Slab, head: *mut u8, tail: *mut u8, count: u32) {
        // SAFETY: The objects are live, so their slab is.
        let s = unsafe { &*slab };
        let node = self.node(s.node);
        let min_partial = self.min_partial();
        self.stat(Stat::FreeLocked);
        let irq = IrqDisabled::new();
        let mut g = self.lock_node(node, &irq);
        let (old, new) = loop {
            let old = s.state();
            // SAFETY: The caller owns `tail`.
            unsafe { self.fp.set(tail, old.freelist) };
            let new = State {
                freelist: head,
                counters: slab::counters(old.inuse() - count, old.frozen()),
            };
            if s.update(old, new) {
                break (old, new);
            }
        };
        if old.frozen() {
            // A CPU took the slab meanwhile; it will sort it out.
            return;
        }
        // SAFETY: `slab` is a live slab of this node and the lock is held.
        let on_partial = unsafe { g.list().contains(slab) };
        if !old.freelist.is_null() && !on_partial {
            // Being deactivated by the CPU that had it: it places the slab itself.
            return;
        }
        // "Already holds at least min_partial partial slabs": not counting this one.
        let others = g.list().len() - u32::from(on_partial);
        if new.inuse() == 0 && others >= min_partial {
            if on_partial {
                // SAFETY: `slab` is on this list; lock held.
                unsafe { g.list().remove(slab) };
            }
            inject!(self, Point::FreeDiscard);
            // SAFETY: Empty, off the lists, not frozen: nothing refers to it any more.
            // Freeing pages under a spinlock is allowed.
            unsafe { self.discard(slab) };
            return;
        }
        if old.freelist.is_null() {
            // Was full, so on no list: now partial (or empty and kept).
            // SAFETY: `slab` is a live slab of this node on no list; lock held.
            unsafe { g.list().add(slab, false) };
        }
    }

    // ----- bulk ---------------------------------------------------------------------

    /// Fills `out` with objects; on failure frees what it took and returns the error,
    /// leaving `out` all null.
    pub(crate) fn alloc_bulk(&self, gfp: Gfp, out: &mut [*mut u8]) -> Result {
        let mut i = 0;
        while i < out.len() {
            {
                let _irq = IrqDisabled::new();
                // SAFETY: Interrupts are off: this CPU's copy is ours.
                let c = unsafe { &mut *self.cpu.this_cpu() };
                let mut taken = 0u64;
                while i < out.len() && c.freelist != 0 {
                    let object = c.freelist as usize as *mut u8;
                    // SAFETY: `object` is on this CPU's private free list.
                    c.freelist = unsafe { self.checked_next(object) } as u64;
                    out[i] = object;
                    i += 1;
                    taken += 1;
                }
                c.tid = c.tid.wrapping_add(TID_STEP);
                // SAFETY: Per-cpu counter of this cache.
                unsafe {
                    arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::AllocFast), taken)
                };
            }
            if i < out.len() {
                let object = self.alloc_slow(gfp, NO_NODE);
                if object.is_null() {
                    // SAFETY: `out[..i]` were just allocated from this cache.
                    unsafe { self.free_bulk(&out[..i]) };
                    out[..i].fill(ptr::null_mut());
                    return Err(ENOMEM);
                }
                out[i] = object;
                i += 1;
            }
        }
        if gfp.with(self.init_on_alloc).has(Gfp::ZERO) {
            for &object in out.iter() {
                self.zero(object);
            }
        }
        Ok(())
    }

    /// Frees every object of `objects`. Objects of this CPU's active slab go on its free
    /// list; a run of objects of another slab is chained and freed with one update of
    /// that slab (SLUB's detached free lists, for the common case of objects that were
    /// allocated together).
    ///
    /// # Safety
    ///
    /// As for [`CacheCore::free`], for each element.
    pub(crate) unsafe fn free_bulk(&self, objects: &[*mut u8]) {
        if self.is_debug() {
            for &object in objects {
                self.free_debug(object);
            }
            return;
        }
        if self.init_on_free {
            for &object in objects {
                self.zero(object);
            }
        }
        let _irq = IrqDisabled::new();
        // SAFETY: Interrupts are off: this CPU's copy is ours.
        let c = unsafe { &mut *self.cpu.this_cpu() };
        let mut fast = 0u64;
        let mut i = 0;
        while i < objects.len() {
            let first = objects[i];
            // SAFETY: The caller guarantees a live object of this cache.
            let slab = unsafe { mm::slab_of(first) } as u64;
            i += 1;
            if slab == c.slab {
                // SAFETY: The caller owns `first`, an object of the CPU's active slab.
                unsafe { self.fp.set(first, c.freelist as usize as *mut u8) };
                c.freelist = first as u64;
                fast += 1;
                continue;
            }
            if !self.owns(first) {
                self.foreign_free(first);
                continue;
            }
            // Chain the run of objects of the same slab in front of `first`.
            let (mut head, mut count) = (first, 1u32);
            // SAFETY: As above, for each object.
            while i < objects.len() && unsafe { mm::slab_of(objects[i]) } as u64 == slab {
                // SAFETY: The caller owns `objects[i]`.
                unsafe { self.fp.set(objects[i], head) };
                head = objects[i];
                count += 1;
                i += 1;
            }
            // SAFETY: `head`..`first` chains `count` objects of `slab` owned by the caller;
            // the slow path takes its own locks (interrupts may already be off).
            unsafe { self.free_chain(slab as usize as *mut Slab, head, first, count) };
        }
        // Only if objects went on this CPU's list: then this CPU still has its active
        // slab, so the cache is not being destroyed (destruction flushes every CPU,
        // which waits for interrupts to come back on here). Otherwise the last update
        // above may have freed the last object, and the cache must not be touched.
        if fast != 0 {
            c.tid = c.tid.wrapping_add(TID_STEP);
            // SAFETY: Per-cpu counter of this cache.
            unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::FreeFast), fast) };
        }
    }

    // ----- shrinking and destruction ------------------------------------------------

    /// Gives this CPU's active slab back, with interrupts off.
    fn flush_this_cpu(&self) {
        let _irq = IrqDisabled::new();
        // SAFETY: Interrupts are off: this CPU's copy is ours.
        let c = unsafe { &mut *self.cpu.this_cpu() };
        if c.slab != NO_SLAB {
            self.flush(c);
        }
    }

    /// Gives `cpu`'s active slab back to its node (CPU hotplug: `cpu` went offline).
    ///
    /// # Safety
    ///
    /// `cpu` must be dead: nothing runs on it, so nothing uses its per-CPU copy (no other
    /// CPU ever writes another's).
    pub(crate) unsafe fn flush_dead_cpu(&self, cpu: CpuId) {
        // Node locks are taken with interrupts off.
        let _irq = IrqDisabled::new();
        // SAFETY: `cpu` is dead (caller): its copy is ours.
        let c = unsafe { &mut *self.cpu.on(cpu) };
        if c.slab != NO_SLAB {
            self.flush(c);
        }
    }

    /// Gives every empty partial slab back to the page allocator. Returns the objects
    /// still allocated: per node, its objects less the free ones of its partial slabs,
    /// counted under the node lock, which every free that moves a slab between lists or
    /// gives one back holds from its update to its end.
    fn discard_empty_partials(&self) -> u64 {
        let mut live = 0u64;
        for node in self.nodes.iter() {
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            let mut free_objects = 0i64;
            let mut p = g.list().first();
            while let Some(slab) = p {
                // SAFETY: `slab` is on this list and the lock is held.
                let (next, st, objects) =
                    unsafe { ((*slab).links().next, (*slab).state(), (*slab).objects) };
                if st.inuse() == 0 {
                    // SAFETY: On this list, lock held; then empty, off the lists, held by
                    // no CPU (partial slabs are not frozen), and nothing allocated from it
                    // can be freed. Freeing pages under a spinlock is allowed.
                    unsafe {
                        g.list().remove(slab);
                        self.discard(slab);
                    }
                } else {
                    free_objects += i64::from(objects - st.inuse());
                }
                p = (!next.is_null()).then_some(next);
            }
            live += (node.total_objects() - free_objects).max(0) as u64;
        }
        live
    }

    /// Walks the empty slabs of each node's partial list that lie beyond the node's
    /// first `min_partial` partial slabs (the seed 000 cushion): with `free`, gives them
    /// back, up to `max_pages` pages. Returns their pages.
    fn empty_beyond_min_partial(&self, free: bool, max_pages: u64) -> u64 {
        let min_partial = self.min_partial();
        let mut pages = 0u64;
        for node in self.nodes.iter() {
            if node.nr_partial() <= min_partial {
                continue;
            }
            let irq = IrqDisabled::new();
            let mut g = self.lock_node(node, &irq);
            let mut p = g.list().first();
            // Partial slabs left once the ones counted so far are gone.
            let mut left = g.list().len();
            while let Some(slab) = p {
                if left <= min_partial || pages >= max_pages {
                    break;
                }
                // SAFETY: `slab` is on this list and the lock is held.
                let (next, st, n) =
                    unsafe { ((*slab).links().next, (*slab).state(), (*slab).nr_pages()) };
                if st.inuse() == 0 {
                    pages += n;
                    left -= 1;
                    if free {
                        // SAFETY: As in `discard_empty_partials`.
                        unsafe {
                            g.list().remove(slab);
                            self.discard(slab);
                        }
                    }
                }
                p = (!next.is_null()).then_some(next);
            }
        }
        pages
    }

    /// Pages the shrinker could give back now ([`CacheCore::shrink_empty`]).
    pub(crate) fn reclaimable_pages(&self) -> u64 {
        self.empty_beyond_min_partial(false, u64::MAX)
    }

    /// The shrinker's work: gives back empty slabs beyond each node's `min_partial`
    /// partial slabs, up to `max_pages` pages; returns the pages given back. Leaves the
    /// CPUs' active slabs alone (no waiting on other CPUs from memory reclaim).
    pub(crate) fn shrink_empty(&self, max_pages: u64) -> u64 {
        let pages = self.empty_beyond_min_partial(true, max_pages);
        // SAFETY: Per-cpu counter of this cache.
        unsafe { arch::this_cpu_add(self.pcpu(), Self::stat_offset(Stat::ShrinkerPages), pages) };
        pages
    }

    /// Flushes every online CPU's active slab and gives every empty slab back
    /// (`kmem_cache_shrink`), running on each CPU as SLUB's `flush_all()` does. Safe
    /// while the cache is in use, and from memory reclaim; may sleep.
    pub(crate) fn shrink(&self) {
        shim::run_on_each_cpu(&|| self.flush_this_cpu());
        self.discard_empty_partials();
    }

    /// Flushes every CPU's active slab, gives every empty slab back, and returns how many
    /// objects are still allocated; their slabs stay. With none, nothing of the cache is
    /// in use any more and it may be freed: a free racing with this call either finished
    /// before the count or is counted (see [`CacheCore::free`]).
    ///
    /// # Safety
    ///
    /// No CPU may use the cache during or after the call, except to free objects still
    /// allocated; CPU hotplug must not run concurrently.
    pub(crate) unsafe fn shutdown(&self) -> LiveObjects {
        shim::run_on_each_cpu(&|| self.flush_this_cpu());
        for cpu in possible_cpus() {
            // SAFETY: Online CPUs were flushed above and offline ones cannot run, and no
            // CPU allocates from the cache any more (caller): this copy is ours.
            let c = unsafe { &mut *self.cpu.on(cpu) };
            if c.slab != NO_SLAB {
                self.flush(c);
            }
        }
        inject!(self, Point::ShutdownFlushed);
        LiveObjects(self.discard_empty_partials())
    }
}

/// Why an allocation from `node` failed: `EINVAL` for a node that is not online, else
/// `ENOMEM`.
#[cfg(rslub_inject)]
#[cold]
fn alloc_error(node: i32) -> Error {
    if node == NO_NODE || shim::node_online(node) {
        ENOMEM
    } else {
        EINVAL
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
