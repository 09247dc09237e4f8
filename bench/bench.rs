// SPDX-License-Identifier: GPL-2.0

//! The experiments. Each prints one line per figure,
//! `rslub_bench: RESULT {json}`, which `scripts/bench.sh` collects.
//!
//! Timing: under QEMU `-icount shift=0` the guest clock advances one nanosecond per guest
//! instruction, so a `ktime_get()` difference is an instruction count. Every figure is the
//! fastest of several chunks (timer interrupts fall out), divided by the operations in a
//! chunk, in hundredths of an instruction. With several CPUs running, the clock counts
//! the instructions of all of them, so those figures are instructions per operation
//! summed over the CPUs.

use crate::{
    api,
    bench_kmem::{Allocator, Floor, Kernel, Rslub},
    cache::{CacheCore, RemoteWalk, NO_NODE},
    params::{Params, RawParams},
    registry::Cache,
    stats::Stat,
    test_shim::{now_ns, pin_current, Thread},
    topology::Topology,
};
use core::{
    ffi::c_void,
    hint::black_box,
    ptr,
    sync::atomic::{AtomicU64, Ordering::Relaxed},
};
use kernel::{cpu::CpuId, new_spinlock, prelude::*, sync::SpinLock};

/// Object sizes of the side-by-side tables.
pub(crate) const SIZES: [u32; 10] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
/// Chunks per measurement; the fastest counts.
const CHUNKS: u32 = 40;

/// Prints one result line.
macro_rules! result {
    ($($arg:tt)*) => {
        pr_info!("RESULT {{{}}}\n", fmt!($($arg)*))
    };
}

/// A count in hundredths, printed with two decimals.
struct Centi(u64);

impl kernel::fmt::Display for Centi {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

/// Instructions per operation, in hundredths, of the fastest of `CHUNKS` runs of `f`,
/// each doing `ops` operations.
fn measure(ops: u64, mut f: impl FnMut()) -> Centi {
    let mut best = u64::MAX;
    for _ in 0..CHUNKS {
        let t0 = now_ns();
        f();
        let dt = now_ns() - t0;
        best = best.min(dt);
    }
    Centi(best * 100 / ops.max(1))
}

/// Runs `f` pinned to `cpu`.
fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> R {
    let id = CpuId::from_u32(cpu).unwrap_or(CpuId::current());
    let _ = pin_current(Some(id));
    let r = f();
    let _ = pin_current(None);
    r
}

/// A cache of `size` bytes through the C API, with `params` (or the module's).
fn rslub_cache(name: &CStr, size: u32, params: Option<Params>) -> Result<Rslub> {
    let c = Cache::create_with(
        &crate::cache::CacheArgs {
            name,
            size,
            align: 0,
            flags: 0,
            ctor: None,
        },
        params,
    )?;
    // No random draw in the figures: always walk the other nodes when the local one has
    // nothing (SLUB's default, 1000 in 1024, skips the walk on a random 2% of refills).
    c.set_remote_node_defrag_ratio(1024);
    Ok(Rslub(c.into_raw().as_ptr().cast()))
}

impl Rslub {
    fn core(&self) -> &CacheCore {
        // SAFETY: A live handle is the address of a live cache.
        unsafe { &*self.0.cast::<CacheCore>() }
    }

    fn destroy(self) {
        // SAFETY: The handle is live and not used afterwards.
        unsafe { api::rslub_cache_destroy(self.0) };
    }
}

/// alloc+free pairs.
fn pair<A: Allocator>(a: &A, n: u64) -> Centi {
    measure(n, || {
        for _ in 0..n {
            let p = a.alloc();
            a.free(black_box(p));
        }
    })
}

/// `n` allocations, then `n` frees, per operation.
fn batch<A: Allocator>(a: &A, v: &mut [*mut c_void]) -> Centi {
    let n = v.len() as u64;
    measure(2 * n, || {
        for slot in v.iter_mut() {
            *slot = a.alloc();
        }
        for &p in v.iter() {
            a.free(p);
        }
    })
}

/// Bulk allocation and bulk free of `v.len()` objects, per object.
fn bulk<A: Allocator>(a: &A, v: &mut [*mut c_void], rounds: u64) -> Centi {
    let n = v.len() as u64;
    measure(rounds * n, || {
        for _ in 0..rounds {
            if a.alloc_bulk(v) {
                a.free_bulk(v);
            }
        }
    })
}

/// alloc_node(node)+free pairs.
fn pair_node<A: Allocator>(a: &A, node: i32, n: u64) -> Centi {
    measure(n, || {
        for _ in 0..n {
            let p = a.alloc_node(node);
            a.free(black_box(p));
        }
    })
}

/// Allocations on CPU 0, then frees of the same objects on CPU 1: (alloc, free) costs.
fn producer_consumer<A: Allocator + Sync>(a: &A, v: &mut [*mut c_void]) -> (Centi, Centi) {
    let n = v.len() as u64;
    let (mut best_a, mut best_f) = (u64::MAX, u64::MAX);
    for _ in 0..CHUNKS {
        on_cpu(0, || {
            let t0 = now_ns();
            for slot in v.iter_mut() {
                *slot = a.alloc();
            }
            best_a = best_a.min(now_ns() - t0);
        });
        on_cpu(1, || {
            let t0 = now_ns();
            for &p in v.iter() {
                a.free(p);
            }
            best_f = best_f.min(now_ns() - t0);
        });
    }
    (
        Centi(best_a * 100 / n.max(1)),
        Centi(best_f * 100 / n.max(1)),
    )
}

/// The span from the first thread's start to the last thread's end, recorded by the
/// threads themselves: thread creation and the wait for `kthread_stop()` (where idle
/// vCPUs let the icount clock jump to the next timer) stay outside.
struct Span {
    start: AtomicU64,
    end: AtomicU64,
}

impl Span {
    fn new() -> Self {
        Self {
            start: AtomicU64::new(u64::MAX),
            end: AtomicU64::new(0),
        }
    }

    /// Runs `f`, recording its start and end.
    fn time(&self, f: impl FnOnce()) {
        self.start.fetch_min(now_ns(), Relaxed);
        f();
        self.end.fetch_max(now_ns(), Relaxed);
    }

    fn ns(&self) -> u64 {
        self.end
            .load(Relaxed)
            .saturating_sub(self.start.load(Relaxed))
    }
}

/// Runs `body(cpu)` in a thread on every present CPU at once and returns the span.
fn on_all_cpus(body: &(impl Fn(u32) + Sync)) -> Result<u64> {
    let ncpus = Topology::read().present_cpus;
    let span = Span::new();
    let timed = |cpu: u32| span.time(|| body(cpu));
    let mut bodies = KVec::new();
    for cpu in 0..ncpus {
        let t = &timed;
        bodies.push(move || t(cpu), GFP_KERNEL)?;
    }
    {
        let mut threads = KVec::new();
        for (cpu, b) in bodies.iter().enumerate() {
            let id = CpuId::from_u32(cpu as u32).ok_or(EINVAL)?;
            // SAFETY: `bodies` outlives `threads`, dropped (joined) at the end of the block.
            threads.push(unsafe { Thread::start(b, id) }?, GFP_KERNEL)?;
        }
    }
    Ok(span.ns())
}

/// Every online CPU doing `n` alloc+free pairs at once: instructions (all CPUs) per pair,
/// the fastest of ten runs.
fn all_cpus<A: Allocator + Sync>(a: &A, n: u64) -> Result<Centi> {
    let ncpus = Topology::read().present_cpus;
    let mut best = u64::MAX;
    for _ in 0..10 {
        let dt = on_all_cpus(&|_cpu| {
            for _ in 0..n {
                let p = a.alloc();
                a.free(black_box(p));
            }
        })?;
        best = best.min(dt);
    }
    Ok(Centi(best * 100 / (n * u64::from(ncpus)).max(1)))
}

/// The side-by-side tables: every size, rslub, the kernel and the floor.
pub(crate) fn side_by_side() -> Result {
    let topo = Topology::read();
    let remote = (topo.online_nodes > 1).then_some(topo.online_nodes as i32 - 1);
    for size in SIZES {
        pr_info!("progress: size {size}\n");
        let r = rslub_cache(c"bench_rslub", size, None)?;
        let k = Kernel::new(c"bench_kernel", size)?;
        let floor = Floor::new(4096)?;
        let per_slab = r.core().layout().objects as usize;
        let n = (4 * per_slab).clamp(128, 2048);
        let mut v = KVec::from_elem(ptr::null_mut::<c_void>(), n, GFP_KERNEL)?;
        on_cpu(0, || {
            for (name, rv, kv, fv) in [
                ("pair", pair(&r, 2000), pair(&k, 2000), pair(&floor, 2000)),
                (
                    "batch",
                    batch(&r, &mut v),
                    batch(&k, &mut v),
                    batch(&floor, &mut v),
                ),
                (
                    "bulk16",
                    bulk(&r, &mut v[..16], 100),
                    bulk(&k, &mut v[..16], 100),
                    bulk(&floor, &mut v[..16], 100),
                ),
                (
                    "bulk128",
                    bulk(&r, &mut v[..128], 10),
                    bulk(&k, &mut v[..128], 10),
                    bulk(&floor, &mut v[..128], 10),
                ),
                (
                    "node_local",
                    pair_node(&r, 0, 2000),
                    pair_node(&k, 0, 2000),
                    pair_node(&floor, 0, 2000),
                ),
            ] {
                result!(
                    "\"exp\":\"{name}\",\"size\":{size},\"rslub\":{rv},\"kernel\":{kv},\"floor\":{fv}"
                );
            }
            if let Some(node) = remote {
                let (rv, kv) = (pair_node(&r, node, 2000), pair_node(&k, node, 2000));
                result!("\"exp\":\"node_remote\",\"size\":{size},\"rslub\":{rv},\"kernel\":{kv}");
            }
        });
        if topo.present_cpus > 1 {
            let (ra, rf) = producer_consumer(&r, &mut v);
            let (ka, kf) = producer_consumer(&k, &mut v);
            result!("\"exp\":\"xcpu_alloc\",\"size\":{size},\"rslub\":{ra},\"kernel\":{ka}");
            result!("\"exp\":\"xcpu_free\",\"size\":{size},\"rslub\":{rf},\"kernel\":{kf}");
        }
        let (ra, ka) = (all_cpus(&r, 20000)?, all_cpus(&k, 20000)?);
        result!("\"exp\":\"all_cpus\",\"size\":{size},\"rslub\":{ra},\"kernel\":{ka}");
        drop(k);
        r.destroy();
    }
    Ok(())
}

/// Seed 000: near-page-size objects under churn (waves of allocations freed in a
/// scrambled order), `min_partial` fixed at 5 against the per-size value.
pub(crate) fn seed000() -> Result {
    for size in [4096u32, 8192, 16384] {
        for (policy, fixed) in [("fixed5", Some(5)), ("dynamic", None)] {
            let r = rslub_cache(c"bench_seed000", size, None)?;
            if let Some(v) = fixed {
                r.core().set_min_partial(v);
            }
            let min_partial = r.core().min_partial();
            let mut v = KVec::from_elem(ptr::null_mut::<c_void>(), 64, GFP_KERNEL)?;
            let waves = 200u64;
            let before = r.core().stats();
            // The median wave: a timer tick lands in some waves, never in most.
            let mut times = KVec::from_elem(0u64, waves as usize, GFP_KERNEL)?;
            let cost = on_cpu(0, || {
                for w in 0..waves {
                    let t0 = now_ns();
                    for slot in v.iter_mut() {
                        *slot = r.alloc();
                    }
                    // Free in a scrambled order: stride 37 over 64 (coprime), moved by wave.
                    for i in 0..64u64 {
                        r.free(v[((i * 37 + w) % 64) as usize]);
                    }
                    times[w as usize] = now_ns() - t0;
                }
                times.sort_unstable();
                Centi(times[times.len() / 2] * 100 / 128)
            });
            let d = r.core().stats().since(&before);
            result!(
                "\"exp\":\"seed000\",\"size\":{size},\"policy\":\"{policy}\",\"min_partial\":{min_partial},\"new_slab\":{},\"slab_freed\":{},\"insn_per_op\":{cost}",
                d.get(Stat::NewSlab),
                d.get(Stat::SlabFreed)
            );
            r.destroy();
        }
    }
    Ok(())
}

/// An object handed to another CPU.
type Ring = Pin<KBox<SpinLock<KVec<usize>>>>;

/// Seed 001: hackbench-like, every CPU allocating 512-byte objects and passing them to
/// the next CPU to free, for three order policies.
pub(crate) fn seed001() -> Result {
    let ncpus = Topology::read().present_cpus;
    let policies = [
        ("max_order=1 min_objects=4", 1, 4),
        ("default (auto)", 3, 0),
        ("max_order=3 min_objects=16", 3, 16),
    ];
    for (label, max_order, min_objects) in policies {
        let params = Params::new(RawParams {
            max_order,
            min_objects,
            ..RawParams::DEFAULT
        })
        .map_err(|_| EINVAL)?;
        let r = rslub_cache(c"bench_seed001", 512, Some(params))?;
        let mut rings = KVec::new();
        for _ in 0..ncpus {
            rings.push(
                KBox::pin_init(new_spinlock!(KVec::new()), GFP_KERNEL)?,
                GFP_KERNEL,
            )?;
        }
        let rings: KVec<Ring> = rings;
        let rounds = 400u64;
        // The fastest of three runs (the interleaving of the vCPUs moves single runs).
        let mut best: Option<(u64, u64, crate::stats::Stats)> = None;
        for _ in 0..3 {
            let ops = AtomicU64::new(0);
            let body = |cpu: u32| {
                let next = ((cpu + 1) % ncpus.max(1)) as usize;
                let mut batch = [0usize; 16];
                for _ in 0..rounds {
                    for b in batch.iter_mut() {
                        *b = r.alloc() as usize;
                    }
                    {
                        let mut ring = rings[next].lock();
                        for &b in batch.iter() {
                            if ring.push(b, GFP_ATOMIC).is_err() {
                                r.free(b as *mut c_void);
                            }
                        }
                    }
                    let mine = core::mem::take(&mut *rings[cpu as usize].lock());
                    for p in mine {
                        r.free(p as *mut c_void);
                    }
                    ops.fetch_add(32, Relaxed);
                }
            };
            let before = r.core().stats();
            let dt = on_all_cpus(&body)?;
            for ring in rings.iter() {
                for p in core::mem::take(&mut *ring.lock()) {
                    r.free(p as *mut c_void);
                }
            }
            let nops = ops.load(Relaxed).max(1);
            let d = r.core().stats().since(&before);
            if best.is_none_or(|(bdt, bn, _)| dt * bn < bdt * nops) {
                best = Some((dt, nops, d));
            }
        }
        let (dt, nops, d) = best.ok_or(EINVAL)?;
        let l = *r.core().layout();
        let total = d.get(Stat::AllocFast)
            + d.get(Stat::AllocSlow)
            + d.get(Stat::FreeFast)
            + d.get(Stat::FreeSlow);
        let slow = d.get(Stat::AllocSlow) + d.get(Stat::FreeSlow);
        result!(
            "\"exp\":\"seed001\",\"policy\":\"{label}\",\"order\":{},\"objects_per_slab\":{},\"alloc_slow_pct\":{},\"free_slow_pct\":{},\"slow_pct\":{},\"new_slab\":{},\"insn_per_op\":{}",
            l.order,
            l.objects,
            Centi(d.get(Stat::AllocSlow) * 10000 / (d.get(Stat::AllocFast) + d.get(Stat::AllocSlow)).max(1)),
            Centi(d.get(Stat::FreeSlow) * 10000 / (d.get(Stat::FreeFast) + d.get(Stat::FreeSlow)).max(1)),
            Centi(slow * 10000 / total.max(1)),
            d.get(Stat::NewSlab),
            Centi(dt * 100 / nops)
        );
        r.destroy();
    }
    Ok(())
}

/// Seed 002: allocations for a remote node, rslub against the kernel: cost, and for
/// rslub the fast-path share.
pub(crate) fn seed002() -> Result {
    let topo = Topology::read();
    if topo.online_nodes < 2 {
        return Ok(());
    }
    let remote = topo.online_nodes as i32 - 1;
    for size in [64u32, 256, 1024] {
        let r = rslub_cache(c"bench_seed002", size, None)?;
        let k = Kernel::new(c"bench_seed002k", size)?;
        on_cpu(0, || {
            let before = r.core().stats();
            let rv = pair_node(&r, remote, 2000);
            let d = r.core().stats().since(&before);
            let kv = pair_node(&k, remote, 2000);
            let fast = d.get(Stat::AllocFast);
            let all = (fast + d.get(Stat::AllocSlow)).max(1);
            result!(
                "\"exp\":\"seed002\",\"size\":{size},\"node\":{remote},\"rslub\":{rv},\"kernel\":{kv},\"rslub_fast_pct\":{},\"node_mismatch\":{}",
                Centi(fast * 10000 / all),
                d.get(Stat::NodeMismatch)
            );
        });
        drop(k);
        r.destroy();
    }
    Ok(())
}

/// Seed 003: a CPU of node 0 allocates until the partial slabs run out. On several
/// nodes, only the other nodes have partial slabs (the same number each), so every refill
/// walks; on one node the local list has them, then runs dry. Remote walks, nodes looked
/// at and successes, with the walk of each node once (none on one node) against SLUB's
/// old zonelist walk.
pub(crate) fn seed003() -> Result {
    let topo = Topology::read();
    let nodes = topo.online_nodes as i32;
    // The nodes that get partial slabs: the others, or the only one.
    let holders = if nodes > 1 { 1..nodes } else { 0..1 };
    for (label, walk) in [
        ("nodes_once", RemoteWalk::NodesOnce),
        ("zonelist", RemoteWalk::Zonelist),
    ] {
        let r = rslub_cache(c"bench_seed003", 1024, None)?;
        let c = r.core();
        c.set_min_partial(0);
        c.set_remote_node_defrag_ratio(1024);
        c.set_remote_walk(walk);
        let per_slab = c.layout().objects as usize;
        let mut kept: KVec<usize> = KVec::new();
        let mut used: KVec<usize> = KVec::new();
        let res = on_cpu(0, || -> Result<(u64, u64, u64, u64, Centi)> {
            // Ten slabs per holder node, every other object freed: partial slabs.
            let mut partial_objects = 0;
            for node in holders.clone() {
                let mut objs: KVec<usize> = KVec::new();
                for _ in 0..10 * per_slab {
                    objs.push(r.alloc_node(node) as usize, GFP_KERNEL)?;
                }
                for (i, &p) in objs.iter().enumerate() {
                    if i % 2 == 0 {
                        r.free(p as *mut c_void);
                        partial_objects += 1;
                    } else {
                        kept.push(p, GFP_KERNEL)?;
                    }
                }
            }
            // Every CPU's active slab back to its node's list.
            c.shrink();
            // On one node, go on past the partial slabs: the refills then find nothing.
            let extra = if nodes > 1 { 0 } else { 5 * per_slab };
            let n = partial_objects + extra;
            let before = c.stats();
            let t0 = now_ns();
            for _ in 0..n {
                used.push(r.alloc_node(NO_NODE) as usize, GFP_KERNEL)?;
            }
            let dt = now_ns() - t0;
            let d = c.stats().since(&before);
            Ok((
                d.get(Stat::GetPartial),
                d.get(Stat::RemoteWalk),
                d.get(Stat::RemoteNodesTried),
                d.get(Stat::RefillRemotePartial),
                Centi(dt * 100 / n.max(1) as u64),
            ))
        });
        let (get_partial, walks, tried, success, cost) = res?;
        result!(
            "\"exp\":\"seed003\",\"nodes\":{nodes},\"walk\":\"{label}\",\"get_partial\":{get_partial},\"remote_walks\":{walks},\"remote_nodes_tried\":{tried},\"remote_success\":{success},\"tried_per_success\":{},\"tried_per_walk\":{},\"insn_per_alloc\":{cost}",
            Centi(tried * 100 / success.max(1)),
            Centi(tried * 100 / walks.max(1))
        );
        for &p in Iterator::chain(kept.iter(), used.iter()) {
            r.free(p as *mut c_void);
        }
        r.destroy();
    }
    Ok(())
}

/// The secondary figure: wall-clock time of alloc+free pairs, rslub and the kernel
/// interleaved chunk by chunk in one boot (multi-threaded TCG, no icount), fastest chunk
/// of each; `scripts/bench.sh` runs it in several boots and reports the range of ratios.
pub(crate) fn wallclock() -> Result {
    for size in SIZES {
        let r = rslub_cache(c"bench_wall", size, None)?;
        let k = Kernel::new(c"bench_wallk", size)?;
        let (mut best_r, mut best_k) = (u64::MAX, u64::MAX);
        on_cpu(0, || {
            for _ in 0..CHUNKS {
                let t0 = now_ns();
                for _ in 0..2000 {
                    let p = r.alloc();
                    r.free(black_box(p));
                }
                let t1 = now_ns();
                for _ in 0..2000 {
                    let p = k.alloc();
                    k.free(black_box(p));
                }
                let t2 = now_ns();
                best_r = best_r.min(t1 - t0);
                best_k = best_k.min(t2 - t1);
            }
        });
        result!(
            "\"exp\":\"wall_pair\",\"size\":{size},\"rslub_ns\":{},\"kernel_ns\":{},\"ratio\":{}",
            Centi(best_r * 100 / 2000),
            Centi(best_k * 100 / 2000),
            Centi(best_r * 100 / best_k.max(1))
        );
        drop(k);
        r.destroy();
    }
    Ok(())
}
