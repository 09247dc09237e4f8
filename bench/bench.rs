// SPDX-License-Identifier: GPL-2.0

//! The experiments. Each prints one line per figure,
//! `rslub_bench: RESULT {json}`, which `scripts/bench/bench.sh` collects.
//!
//! Timing: under QEMU `-icount shift=0` the guest clock advances one nanosecond per guest
//! instruction, of whichever vCPU runs it (QEMU then runs the vCPUs in turn on one host
//! thread), so a `ktime_get()` difference is an instruction count. For it to count only
//! the work measured:
//!
//! - every timed run has interrupts off on its CPU (no tick, no preemption in it), which
//!   is why the benchmarks allocate with `GFP_NOWAIT`;
//! - the other CPUs are idle, and idle CPUs take no tick (`CONFIG_NO_HZ_IDLE`), or they
//!   are part of the measurement ([`all_cpus`]);
//! - a figure is the median of many runs after one to warm up: runs differ only when
//!   something else ran.
//!
//! Work on several CPUs is measured one CPU at a time (the benchmark thread moves from CPU
//! to CPU between timed runs), except [`all_cpus`], which counts the clock's advance while
//! all CPUs run at once.
//!
//! The guest (`scripts/bench/vm.sh`) reads nothing from the host after boot, so two boots
//! run the same instructions and give the same figures.

use crate::{
    api, back,
    bench_kmem::{
        kernel_slab_attr, kernel_slab_bytes, set_direct, Allocator, Floor, Kernel, Nothing, Rslub,
    },
    cache::{CacheCore, RemoteWalk, NO_NODE},
    gfp::Gfp,
    params::{Params, Profile, RawParams},
    registry::Cache,
    shim::IrqDisabled,
    stats::{Stat, Stats},
    test_shim::{self, node_of, now_ns, pin_current, Thread},
    topology::Topology,
};
use core::{
    ffi::c_void,
    hint::black_box,
    ptr,
    ptr::NonNull,
    sync::atomic::{
        AtomicBool, AtomicU32, AtomicU64, AtomicUsize,
        Ordering::{Acquire, Relaxed, Release},
    },
};
use kernel::{
    bindings,
    cpu::CpuId,
    prelude::*,
    time::{delay::fsleep, Delta},
};

/// Object sizes of the side-by-side tables.
pub(crate) const SIZES: [u32; 10] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];
/// Timed runs per measurement, after one to warm up.
const CHUNKS: usize = 60;

/// Prints one result line.
macro_rules! result {
    ($($arg:tt)*) => {
        pr_info!("RESULT {{{}}}\n", fmt!($($arg)*))
    };
}

/// What rslub's counters did during one measurement, for the report's "why" table:
/// slow paths, node locks, new slabs and the per-CPU partial lists' four counters.
struct Why(Stats);

impl kernel::fmt::Display for Why {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        let s = &self.0;
        write!(f, "{{")?;
        let mut first = true;
        for st in [
            Stat::AllocFast,
            Stat::AllocSlow,
            Stat::FreeFast,
            Stat::FreeSlow,
            Stat::FreeLocked,
            Stat::NodeLock,
            Stat::NewSlab,
            Stat::SlabFreed,
            Stat::CpuPartialAlloc,
            Stat::CpuPartialFree,
            Stat::CpuPartialNode,
            Stat::CpuPartialDrain,
        ] {
            if !first {
                write!(f, ",")?;
            }
            first = false;
            write!(f, "\"{}\":{}", st.file_str(), s.get(st))?;
        }
        write!(f, "}}")
    }
}

/// Runs `f` (a measurement of `r`), returning its result and rslub's counters over it.
fn why<T>(r: &Rslub, f: impl FnOnce() -> T) -> (T, Why) {
    let before = r.core().stats();
    let v = f();
    (v, Why(r.core().stats().since(&before)))
}

/// A count in hundredths, printed with two decimals.
struct Centi(u64);

impl kernel::fmt::Display for Centi {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        write!(f, "{}.{:02}", self.0 / 100, self.0 % 100)
    }
}

/// Runs `f` with interrupts off on this CPU and returns the instructions it took.
fn quiet(f: impl FnOnce()) -> u64 {
    let _irq = IrqDisabled::new();
    let t0 = now_ns();
    f();
    now_ns() - t0
}

/// [`quiet`] read with the time-stamp counter, for a figure of one call. The guest's
/// clocksource is the HPET (QEMU's TCG TSCs fail the kernel's synchronisation check),
/// whose 100 MHz put `ktime_get()` in steps of 10 ns, so one call read through it came out
/// in steps of 10 instructions. The TSC, read on one CPU with interrupts off, advances once
/// per guest nanosecond (the guest calibrates it at 1 GHz), so once per instruction.
fn quiet_tsc(f: impl FnOnce()) -> u64 {
    let _irq = IrqDisabled::new();
    // SAFETY: `rdtsc` has no precondition (x86-64 only, as the whole module).
    let t0 = unsafe { core::arch::x86_64::_rdtsc() };
    f();
    // SAFETY: As above.
    unsafe { core::arch::x86_64::_rdtsc() }.wrapping_sub(t0)
}

/// Lets the machine settle before a measurement: long enough asleep for the vmstat worker
/// (once a second) to fold this CPU's page counter deltas. Where a delta stands against
/// its fold threshold decides how many folds each page-allocator call pays, so without
/// this a page-allocator-heavy figure would depend on what ran before it. Under `-icount
/// sleep=off` idle time costs no host time.
fn settle() {
    fsleep(Delta::from_millis(1500));
}

/// Waits until every CPU has been idle at once: a short sleep, which under icount ends
/// only after all vCPUs halted and the clock jumped to the next timer. A CPU the
/// benchmark thread just left is still on its way to idle, and would otherwise run that
/// way inside the next timed run.
fn quiesce() {
    fsleep(Delta::from_micros(200));
}

/// [`quiet`] on `cpu`, once all CPUs are idle ([`quiesce`]).
fn quiet_on(cpu: u32, f: impl FnOnce()) -> Result<u64> {
    on_cpu(cpu, || {
        quiesce();
        quiet(f)
    })
}

/// The median of the runs `times`, in hundredths of an instruction per operation for
/// `ops` operations a run. Once warm, the runs of one measurement take the same number of
/// instructions (or cycle through a few close ones), except the few in which something
/// else ran: another CPU woke up, and the clock counts its instructions too.
fn per_op(times: &mut [u64], ops: u64) -> Centi {
    times.sort_unstable();
    let median = times.get(times.len() / 2).copied().unwrap_or(0);
    Centi(median * 100 / ops.max(1))
}

/// Instructions per operation, in hundredths: after [`settle`] and one run of `f` to
/// warm up, [`per_op`] of `CHUNKS` [`quiet`] runs of it, each doing `ops` operations.
fn measure(ops: u64, mut f: impl FnMut()) -> Centi {
    settle();
    quiet(&mut f);
    let mut times = [0u64; CHUNKS];
    for t in times.iter_mut() {
        *t = quiet(&mut f);
    }
    per_op(&mut times, ops)
}

/// Runs `f` pinned to `cpu`. A CPU that does not exist or cannot be pinned to ends the
/// run with an error: measured elsewhere, the figure would be another experiment's.
fn on_cpu<R>(cpu: u32, f: impl FnOnce() -> R) -> Result<R> {
    let pinned = CpuId::from_u32(cpu)
        .ok_or(EINVAL)
        .and_then(|id| pin_current(Some(id)));
    if let Err(e) = pinned {
        pr_err!("cannot run on CPU {cpu} ({e:?}): the run stops\n");
        return Err(e);
    }
    let r = f();
    pin_current(None)?;
    Ok(r)
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
            freeptr_offset: None,
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

/// Allocations on CPU 0, then frees of the same objects on CPU 1: (alloc, free) costs,
/// each [`per_op`] of `CHUNKS` quiet runs after [`settle`] and one round to warm up.
fn producer_consumer<A: Allocator>(a: &A, v: &mut [*mut c_void]) -> Result<(Centi, Centi)> {
    let n = v.len() as u64;
    let (mut ta, mut tf) = ([0u64; CHUNKS + 1], [0u64; CHUNKS + 1]);
    settle();
    for (ta, tf) in ta.iter_mut().zip(tf.iter_mut()) {
        *ta = quiet_on(0, || {
            for slot in v.iter_mut() {
                *slot = a.alloc();
            }
        })?;
        *tf = quiet_on(1, || {
            for &p in v.iter() {
                a.free(p);
            }
        })?;
    }
    Ok((per_op(&mut ta[1..], n), per_op(&mut tf[1..], n)))
}

/// A per-CPU operation count, alone in its cache line.
#[repr(align(64))]
struct Count(AtomicU64);

/// Windows of `all_cpus`; the median counts.
const WINDOWS: usize = 5;

/// The loop of `all_cpus`, the same on every CPU: alloc+free pairs with interrupts off,
/// counted in `mine`, until `stop`; at the `at`-th pair it calls `mark`, which returns
/// the next `at`. Only CPU 0's `mark` does anything, but every CPU runs this one copy of
/// the code, so a pair costs the same instructions on all of them.
#[inline(never)]
fn spin<A: Allocator>(
    a: &A,
    mine: &AtomicU64,
    stop: &AtomicBool,
    mut at: u64,
    mark: &mut dyn FnMut(u64) -> u64,
) {
    let _irq = IrqDisabled::new();
    let mut n = 0;
    while !stop.load(Relaxed) {
        let p = a.alloc();
        a.free(black_box(p));
        n += 1;
        mine.store(n, Relaxed);
        if n == at {
            at = mark(n);
        }
    }
}

/// Runs `worker(cpu)` on CPUs 1..`ncpus`, each in a thread of its own, waits until each
/// has counted itself in `arrived`, then runs `main` here (on CPU 0) and joins the
/// threads. A CPU that never starts its thread within `timeout_ns` of guest time must
/// not hang the benchmark: then `give_up` (which must let the threads that did start
/// finish) and `ETIMEDOUT`.
fn with_workers<R>(
    ncpus: usize,
    worker: &(dyn Fn(usize) + Sync),
    arrived: &AtomicU32,
    timeout_ns: u64,
    what: &str,
    give_up: impl FnOnce(),
    main: impl FnOnce() -> R,
) -> Result<R> {
    let mut bodies = KVec::with_capacity(ncpus, GFP_KERNEL)?;
    for cpu in 1..ncpus {
        bodies.push(move || worker(cpu), GFP_KERNEL)?;
    }
    let mut threads = KVec::new();
    for (i, b) in bodies.iter().enumerate() {
        let id = CpuId::from_u32(i as u32 + 1).ok_or(EINVAL)?;
        // SAFETY: `bodies` outlives `threads`, dropped (joined) before it.
        threads.push(unsafe { Thread::start(b, id) }?, GFP_KERNEL)?;
    }
    let t0 = now_ns();
    while arrived.load(Relaxed) < ncpus as u32 - 1 {
        if now_ns() - t0 > timeout_ns {
            give_up();
            pr_err!("{what}: not every CPU started its thread\n");
            return Err(ETIMEDOUT);
        }
        core::hint::spin_loop();
    }
    let r = main();
    drop(threads);
    Ok(r)
}

/// Every CPU doing alloc+free pairs at once, instructions per pair.
///
/// The clock counts the instructions of every vCPU, so the figure is its advance over a
/// window in which all CPUs run [`spin`], divided by the pairs all of them completed in
/// it: CPU 0 reads every CPU's count at both ends of `WINDOWS` windows of `pairs` of its
/// own pairs (exact to a pair per CPU and end), after every CPU has done a thousand. The
/// loop's bookkeeping (the count, the stop flag, the mark) is in the figure; [`Nothing`]
/// in the same loop shows what it costs.
fn all_cpus<A: Allocator + Sync>(a: &A, pairs: u64) -> Result<Centi> {
    let ncpus = Topology::read().present_cpus as usize;
    let mut counts = KVec::with_capacity(ncpus, GFP_KERNEL)?;
    for _ in 0..ncpus {
        counts.push(Count(AtomicU64::new(0)), GFP_KERNEL)?;
    }
    let arrived = AtomicU32::new(0);
    let (go, stop) = (AtomicBool::new(false), AtomicBool::new(false));
    let total = || counts.iter().map(|c| c.0.load(Relaxed)).sum::<u64>();
    let worker = |cpu: usize| {
        arrived.fetch_add(1, Relaxed);
        while !go.load(Relaxed) {
            core::hint::spin_loop();
        }
        spin(a, &counts[cpu].0, &stop, u64::MAX, &mut |_| u64::MAX);
    };
    let mut snaps = KVec::with_capacity(WINDOWS + 1, GFP_KERNEL)?;
    on_cpu(0, || {
        settle();
        let give_up = || {
            stop.store(true, Relaxed);
            go.store(true, Relaxed);
        };
        // A second of guest time (a billion instructions under icount) is plenty for the
        // threads to start.
        with_workers(
            ncpus,
            &worker,
            &arrived,
            1_000_000_000,
            "all_cpus",
            give_up,
            || {
                go.store(true, Relaxed);
                let mut mark = |n: u64| {
                    if snaps.is_empty() && counts.iter().any(|c| c.0.load(Relaxed) < 1000) {
                        return n + 1000;
                    }
                    let _ = snaps.push_within_capacity((now_ns(), total()));
                    if snaps.len() > WINDOWS {
                        stop.store(true, Relaxed);
                        return u64::MAX;
                    }
                    n + pairs
                };
                spin(a, &counts[0].0, &stop, 1000, &mut mark);
            },
        )
    })??;
    let mut per_window = [0u64; WINDOWS];
    for (w, s) in per_window.iter_mut().zip(snaps.windows(2)) {
        *w = (s[1].0 - s[0].0) * 100 / (s[1].1 - s[0].1).max(1);
    }
    per_window.sort_unstable();
    Ok(Centi(per_window[WINDOWS / 2]))
}

/// The instructions of one allocation and of one free as a caller sees them: the median
/// of `CHUNKS` quiet runs of one call, less the median of as many empty runs (under
/// icount the counter's own reads cost the same every time), read with the TSC
/// ([`quiet_tsc`]). What the caller's code does
/// differently around the call stays in the figure, a few instructions that move from
/// one build to the next. The object goes back where it came from, so both calls stay on
/// the fast paths.
fn one_call<A: Allocator>(a: &A) -> (Centi, Centi) {
    let (mut te, mut ta, mut tf) = ([0u64; CHUNKS + 1], [0u64; CHUNKS + 1], [0u64; CHUNKS + 1]);
    settle();
    for i in 0..=CHUNKS {
        te[i] = quiet_tsc(|| {});
        let mut p = ptr::null_mut();
        ta[i] = quiet_tsc(|| p = black_box(a.alloc()));
        tf[i] = quiet_tsc(|| a.free(black_box(p)));
    }
    let empty = per_op(&mut te[1..], 1).0;
    let less = |t: &mut [u64]| Centi(per_op(t, 1).0.saturating_sub(empty));
    (less(&mut ta[1..]), less(&mut tf[1..]))
}

/// The fast paths alone ([`one_call`]), rslub against the kernel, at every size; with
/// `pair`, the alloc+free pair too (the boot of the build with `RSLUB_HARDENED=n`,
/// which measures nothing else).
pub(crate) fn fast_paths(pair_too: bool) -> Result {
    for size in SIZES {
        let r = rslub_cache(c"bench_fast", size, None)?;
        let k = Kernel::new(c"bench_fastk", size)?;
        on_cpu(0, || {
            let ((ra, rf), rw) = why(&r, || one_call(&r));
            let (ka, kf) = one_call(&k);
            result!("\"exp\":\"fast_alloc\",\"size\":{size},\"rslub\":{ra},\"kernel\":{ka},\"why\":{rw}");
            result!(
                "\"exp\":\"fast_free\",\"size\":{size},\"rslub\":{rf},\"kernel\":{kf},\"why\":{rw}"
            );
            if pair_too {
                let (pr, pw) = why(&r, || pair(&r, 2000));
                let pk = pair(&k, 2000);
                result!(
                    "\"exp\":\"pair\",\"size\":{size},\"rslub\":{pr},\"kernel\":{pk},\"why\":{pw}"
                );
            }
        })?;
        drop(k);
        r.destroy();
    }
    Ok(())
}

/// The sizes of the memory table.
const MEM_SIZES: [u32; 11] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192];

/// Live objects per size in the memory table: a million, or 64 MiB worth of them where
/// a million would not fit the guest.
fn mem_objects(size: u32) -> usize {
    (1usize << 20).min((64 << 20) / size.max(1) as usize)
}

/// Fills `v` with objects of `a`; on failure frees what it took.
fn burst<A: Allocator>(a: &A, v: &mut [*mut c_void]) -> Result {
    let mut got = 0;
    for slot in v.iter_mut() {
        *slot = a.alloc();
        if slot.is_null() {
            break;
        }
        got += 1;
    }
    if got == v.len() {
        return Ok(());
    }
    for &p in v.iter().take(got) {
        a.free(p);
    }
    Err(ENOMEM)
}

/// Memory side by side: for every size, the bytes per live object with
/// [`mem_objects`] objects allocated (rslub: its slabs' pages and its `Slab` metadata;
/// the kernel: its slabs' pages, from `/proc/slabinfo`), then what each keeps once they
/// are all freed (no shrink: the empty and partial slabs each policy holds on to).
pub(crate) fn memory() -> Result {
    for size in MEM_SIZES {
        let n = mem_objects(size);
        let mut v = KVVec::from_elem(ptr::null_mut::<c_void>(), n, GFP_KERNEL)?;
        let r = rslub_cache(c"bench_mem", size, None)?;
        on_cpu(0, || burst(&r, &mut v))??;
        let live = r.core().footprint();
        on_cpu(0, || v.iter().for_each(|&p| r.free(p)))?;
        settle();
        let idle = r.core().footprint();
        r.destroy();
        let k = Kernel::new(c"bench_memk", size)?;
        on_cpu(0, || burst(&k, &mut v))??;
        settle();
        // Read before the objects go, but checked after: a cache must be empty when
        // destroyed.
        let k_live = kernel_slab_bytes(c"bench_memk");
        on_cpu(0, || v.iter().for_each(|&p| k.free(p)))?;
        settle();
        let (k_live, k_idle) = (k_live?, kernel_slab_bytes(c"bench_memk")?);
        drop(k);
        let per = |b: u64| Centi(b * 100 / (n as u64).max(1));
        result!(
            "\"exp\":\"memory\",\"size\":{size},\"objects\":{n},\"rslub_pages\":{},\"rslub_meta\":{},\"rslub_per_object\":{},\"kernel_bytes\":{k_live},\"kernel_per_object\":{},\"rslub_idle_pages\":{},\"rslub_idle_meta\":{},\"rslub_idle_slabs\":{},\"kernel_idle_bytes\":{k_idle}",
            live.page_bytes,
            live.meta_bytes,
            per(live.page_bytes + live.meta_bytes),
            per(k_live),
            idle.page_bytes,
            idle.meta_bytes,
            idle.slabs
        );
    }
    Ok(())
}

/// The experiments of one CPU that the side-by-side tables run on each allocator, in
/// the order [`rslub_on_cpu0`] returns them.
const ON_CPU0: [&str; 5] = ["pair", "batch", "bulk16", "bulk128", "node_local"];

/// A figure with rslub's counters over its measurement.
type Measured = (Centi, Why);

/// [`ON_CPU0`]'s measurements of rslub cache `r`, on CPU 0, then `node_remote`'s where
/// there is another node.
fn rslub_on_cpu0(
    r: &Rslub,
    v: &mut [*mut c_void],
    remote: Option<i32>,
) -> Result<([Measured; 5], Option<Measured>)> {
    on_cpu(0, || {
        (
            [
                why(r, || pair(r, 2000)),
                why(r, || batch(r, v)),
                why(r, || bulk(r, &mut v[..16], 100)),
                why(r, || bulk(r, &mut v[..128], 10)),
                why(r, || pair_node(r, 0, 2000)),
            ],
            remote.map(|node| why(r, || pair_node(r, node, 2000))),
        )
    })
}

/// The side-by-side tables: every size, rslub under each profile, the kernel and the
/// floor, in one boot, on two caches of the size switched with [`CacheCore::set_profile`]:
/// the classic profile's (`rslub`) is the classic design's figure, the tuned one's
/// (`tuned`) rslub's choices.
pub(crate) fn side_by_side() -> Result {
    let topo = Topology::read();
    let remote = (topo.online_nodes > 1).then_some(topo.online_nodes as i32 - 1);
    for size in SIZES {
        pr_info!("progress: size {size}\n");
        let r = rslub_cache(c"bench_rslub", size, None)?;
        r.core().set_profile(Profile::Classic);
        let t = rslub_cache(c"bench_rslub_tuned", size, None)?;
        t.core().set_profile(Profile::Tuned);
        let k = Kernel::new(c"bench_kernel", size)?;
        let floor = Floor::new(4096)?;
        let per_slab = r.core().layout().objects as usize;
        let n = (4 * per_slab).clamp(128, 2048);
        let mut v = KVec::from_elem(ptr::null_mut::<c_void>(), n, GFP_KERNEL)?;
        let (classic, classic_remote) = rslub_on_cpu0(&r, &mut v, remote)?;
        let (tuned, tuned_remote) = rslub_on_cpu0(&t, &mut v, remote)?;
        on_cpu(0, || {
            let others = [
                (pair(&k, 2000), pair(&floor, 2000)),
                (batch(&k, &mut v), batch(&floor, &mut v)),
                (bulk(&k, &mut v[..16], 100), bulk(&floor, &mut v[..16], 100)),
                (bulk(&k, &mut v[..128], 10), bulk(&floor, &mut v[..128], 10)),
                (pair_node(&k, 0, 2000), pair_node(&floor, 0, 2000)),
            ];
            for (((name, (rv, rw)), (tv, tw)), (kv, fv)) in
                ON_CPU0.iter().zip(&classic).zip(&tuned).zip(&others)
            {
                result!(
                    "\"exp\":\"{name}\",\"size\":{size},\"rslub\":{rv},\"tuned\":{tv},\"kernel\":{kv},\"floor\":{fv},\"why\":{rw},\"why_tuned\":{tw}"
                );
            }
            // Between two bulk128 rounds a CPU keeps its active slab and its partial list
            // (given back whole to the node when full), a node `min_partial` slabs; empty
            // slabs beyond go back to the page allocator, so a round spanning more slabs
            // allocates some anew every round: the profiles' `min_partial` rules differ
            // here.
            let (rc, tc) = (r.core(), t.core());
            result!(
                "\"exp\":\"bulk128_rule\",\"size\":{size},\"objs_per_slab\":{},\"cpu_partial\":{},\"cpu_partial_slabs\":{},\"min_partial\":{},\"min_partial_tuned\":{}",
                rc.layout().objects,
                rc.cpu_partial(),
                rc.cpu_partial_slabs(),
                rc.min_partial(),
                tc.min_partial()
            );
            if let (Some(node), Some((rv, rw)), Some((tv, tw))) =
                (remote, &classic_remote, &tuned_remote)
            {
                let kv = pair_node(&k, node, 2000);
                result!(
                    "\"exp\":\"node_remote\",\"size\":{size},\"rslub\":{rv},\"tuned\":{tv},\"kernel\":{kv},\"why\":{rw},\"why_tuned\":{tw}"
                );
            }
        })?;
        if topo.present_cpus > 1 {
            let (rv, rw) = why(&r, || producer_consumer(&r, &mut v));
            let (tv, tw) = why(&t, || producer_consumer(&t, &mut v));
            let ((ra, rf), (ta, tf)) = (rv?, tv?);
            let (ka, kf) = producer_consumer(&k, &mut v)?;
            result!(
                "\"exp\":\"xcpu_alloc\",\"size\":{size},\"rslub\":{ra},\"tuned\":{ta},\"kernel\":{ka},\"why\":{rw},\"why_tuned\":{tw}"
            );
            result!(
                "\"exp\":\"xcpu_free\",\"size\":{size},\"rslub\":{rf},\"tuned\":{tf},\"kernel\":{kf},\"why\":{rw},\"why_tuned\":{tw}"
            );
        }
        let ((ra, rw), (ta, tw), ka, fa) = (
            why(&r, || all_cpus(&r, 20000)),
            why(&t, || all_cpus(&t, 20000)),
            all_cpus(&k, 20000)?,
            all_cpus(&Nothing, 20000)?,
        );
        let (ra, ta) = (ra?, ta?);
        result!(
            "\"exp\":\"all_cpus\",\"size\":{size},\"rslub\":{ra},\"tuned\":{ta},\"kernel\":{ka},\"floor\":{fa},\"why\":{rw},\"why_tuned\":{tw}"
        );
        drop(k);
        r.destroy();
        t.destroy();
    }
    Ok(())
}

/// What the backing hooks (`rust/back/handler.c`) add to calls that rslub does not serve:
/// a kernel cache's alloc+free pair and a bulk of 16, for a cache that is not backed, and
/// a `kmalloc(64)`+`kfree()` pair of the kernel's (kmalloc is not hooked outside
/// whole-kernel mode: what changes is `kfree`'s hook). Measured without the hooks, with
/// them registered (another kernel cache backed) as the handler alone (`direct=0`), then
/// with the direct calls of `rust/back/direct.S`, then without them again.
pub(crate) fn hook_cost() -> Result {
    let k = Kernel::new(c"bench_hook_plain", 64)?;
    let other = Kernel::new(c"bench_hook_backed", 64)?;
    let mut v = KVec::from_elem(ptr::null_mut::<c_void>(), 16, GFP_KERNEL)?;
    // One kmalloc object that ksize() and krealloc() are asked about in place.
    let held = test_shim::kmalloc(64, Gfp::NOWAIT);
    if held == 0 {
        return Err(ENOMEM);
    }
    // Each entry point on the kernel's objects and caches, in `HOOK_COST_OPS`' order.
    let run = |v: &mut KVec<*mut c_void>| -> Result<KVec<Centi>> {
        on_cpu(0, || {
            let mut r = KVec::new();
            r.push(pair(&k, 2000), GFP_KERNEL)?;
            r.push(bulk(&k, &mut v[..], 100), GFP_KERNEL)?;
            for size in [64, 8192] {
                r.push(
                    measure(2000, || {
                        for _ in 0..2000 {
                            let p = test_shim::kmalloc(size, Gfp::NOWAIT);
                            // SAFETY: allocated just above (or null, which kfree() takes),
                            // freed once.
                            unsafe { test_shim::kfree(black_box(p)) };
                        }
                    }),
                    GFP_KERNEL,
                )?;
            }
            r.push(pair_node(&k, 0, 2000), GFP_KERNEL)?;
            r.push(
                measure(2000, || {
                    for _ in 0..2000 {
                        let p = k.alloc_lru();
                        k.free(black_box(p));
                    }
                }),
                GFP_KERNEL,
            )?;
            r.push(
                measure(2000, || {
                    for _ in 0..2000 {
                        // SAFETY: `held` is a live kmalloc object.
                        black_box(unsafe { test_shim::ksize(black_box(held)) });
                    }
                }),
                GFP_KERNEL,
            )?;
            r.push(
                measure(2000, || {
                    for _ in 0..2000 {
                        // SAFETY: `held` is a live kmalloc object of 64 bytes, which a
                        // krealloc() to 64 keeps where it is.
                        black_box(unsafe { test_shim::krealloc(black_box(held), 64, Gfp::NOWAIT) });
                    }
                }),
                GFP_KERNEL,
            )?;
            r.push(
                measure(2000, || {
                    for _ in 0..2000 {
                        let p = test_shim::kvmalloc(64, Gfp::NOWAIT);
                        // SAFETY: allocated just above (or null), freed once.
                        unsafe { test_shim::kvfree(black_box(p)) };
                    }
                }),
                GFP_KERNEL,
            )?;
            Ok(r)
        })?
    };
    let off = run(&mut v)?;
    // SAFETY: `other` lives until after the unbackings below.
    let handle = unsafe { back::KmemCache::from_raw(NonNull::new(other.0).ok_or(EINVAL)?) };
    // The direct= parameter is read when the hooks are registered: by the backing here,
    // as nothing else is backed in this boot.
    let hooked = |v: &mut KVec<*mut c_void>, direct: bool| -> Result<_> {
        set_direct(direct);
        back::back(handle)?;
        let used = test_shim::direct_state() == Some(true);
        let r = run(v);
        let live = back::unback(handle);
        back::release_drained();
        live?;
        Ok((r?, used))
    };
    let (handler, _) = hooked(&mut v, false)?;
    let (direct_on, direct) = hooked(&mut v, true)?;
    let again = run(&mut v)?;
    // SAFETY: allocated above, freed once.
    unsafe { test_shim::kfree(held) };
    result!(
        "\"exp\":\"hook_cost\",\"size\":64,\"direct\":{direct},\"pair_off\":{},\"pair_handler\":{},\"pair_on\":{},\"pair_off_again\":{},\"bulk16_off\":{},\"bulk16_handler\":{},\"bulk16_on\":{},\"bulk16_off_again\":{},\"kfree_off\":{},\"kfree_handler\":{},\"kfree_on\":{},\"kfree_off_again\":{}",
        off[0], handler[0], direct_on[0], again[0],
        off[1], handler[1], direct_on[1], again[1],
        off[2], handler[2], direct_on[2], again[2]
    );
    // One line per entry point (a printk line holds no more).
    for (i, op) in HOOK_COST_OPS.iter().enumerate() {
        result!(
            "\"exp\":\"hook_cost_op\",\"op\":\"{op}\",\"direct\":{direct},\"off\":{},\"handler\":{},\"on\":{},\"off_again\":{}",
            off[i], handler[i], direct_on[i], again[i]
        );
    }
    drop(other);
    drop(k);
    hook_cost_kmalloc()
}

/// The kmalloc family's hooks, last in [`hook_cost`]'s boot (whole-kernel mode stays until
/// shutdown): `kmalloc(64)` and `kmalloc(64, GFP_DMA)`, each with its `kfree()`, through
/// the variable-size entry point (`__kmalloc_noprof`) and the constant-size one
/// (`__kmalloc_cache_noprof`), before and in whole-kernel mode. rslub serves the ordinary
/// requests there; the DMA ones stay the kernel's, a hooked kmalloc and a hooked kfree
/// the kernel serves.
fn hook_cost_kmalloc() -> Result {
    let dma = Gfp::from_raw(Gfp::NOWAIT.raw() | (1 << bindings::___GFP_DMA_BIT));
    let run = || -> Result<[Centi; 4]> {
        on_cpu(0, || {
            let mut r = [const { Centi(0) }; 4];
            for (i, gfp) in [Gfp::NOWAIT, dma].into_iter().enumerate() {
                r[2 * i] = measure(2000, || {
                    for _ in 0..2000 {
                        let p = test_shim::kmalloc(black_box(64), gfp);
                        // SAFETY: allocated just above (or null), freed once.
                        unsafe { test_shim::kfree(black_box(p)) };
                    }
                });
                r[2 * i + 1] = measure(2000, || {
                    for _ in 0..2000 {
                        let p = test_shim::kmalloc_64(gfp);
                        // SAFETY: as above.
                        unsafe { test_shim::kfree(black_box(p)) };
                    }
                });
            }
            r
        })
    };
    let off = run()?;
    back::back_all(c"all")?;
    // Let whole-kernel mode's worker back the caches it sighted meanwhile.
    fsleep(Delta::from_millis(3000));
    let on = run()?;
    for (i, op) in [
        "kmalloc",
        "kmalloc_cache",
        "kmalloc_dma",
        "kmalloc_cache_dma",
    ]
    .iter()
    .enumerate()
    {
        result!(
            "\"exp\":\"hook_cost_op\",\"op\":\"{op}\",\"whole\":true,\"off\":{},\"on\":{}",
            off[i],
            on[i]
        );
    }
    Ok(())
}

/// The operations of [`hook_cost`], in its order: the report's keys.
const HOOK_COST_OPS: [&str; 9] = [
    "pair", "bulk16", "kfree", "kfree8k", "node", "lru", "ksize", "krealloc", "kvfree",
];

/// Seed 000: near-page-size objects under churn (waves of allocations freed in a
/// scrambled order), `min_partial` fixed at 5 against the per-size value, for waves of
/// 16, 64 and 256 objects; with the memory each policy holds once the last wave is
/// freed.
pub(crate) fn seed000() -> Result {
    for size in [4096u32, 8192, 16384] {
        for burst in [16usize, 64, 256] {
            let mut v = KVec::from_elem(ptr::null_mut::<c_void>(), burst, GFP_KERNEL)?;
            for (policy, fixed) in [("fixed5", Some(5)), ("dynamic", None)] {
                let r = rslub_cache(c"bench_seed000", size, None)?;
                if let Some(v) = fixed {
                    r.core().set_min_partial(v);
                }
                let min_partial = r.core().min_partial();
                let before = r.core().stats();
                let cost = waves(&r, &mut v)?;
                let d = r.core().stats().since(&before);
                // What the policy keeps once the last wave is freed (no shrink).
                let idle = r.core().footprint();
                result!(
                    "\"exp\":\"seed000\",\"size\":{size},\"burst\":{burst},\"policy\":\"{policy}\",\"min_partial\":{min_partial},\"new_slab\":{},\"slab_freed\":{},\"insn_per_op\":{cost},\"idle_slabs\":{},\"idle_bytes\":{}",
                    d.get(Stat::NewSlab),
                    d.get(Stat::SlabFreed),
                    idle.slabs,
                    idle.page_bytes + idle.meta_bytes
                );
                r.destroy();
            }
            // The kernel's cache, the same waves; what it keeps idle, from its own account.
            let k = Kernel::new(c"bench_seed000k", size)?;
            let cost = waves(&k, &mut v)?;
            let idle = kernel_slab_bytes(c"bench_seed000k")?;
            result!(
                "\"exp\":\"seed000\",\"size\":{size},\"burst\":{burst},\"policy\":\"kernel\",\"insn_per_op\":{cost},\"idle_bytes\":{idle}"
            );
            drop(k);
        }
    }
    Ok(())
}

/// Seed 000's churn on CPU 0: 200 waves of `v.len()` allocations freed in a scrambled
/// order; instructions per operation, the mean over the waves (which differ by design:
/// the free order moves).
fn waves<A: Allocator>(a: &A, v: &mut [*mut c_void]) -> Result<Centi> {
    let burst = v.len().max(1);
    let mut times = [0u64; 200];
    on_cpu(0, || {
        settle();
        for (w, t) in times.iter_mut().enumerate() {
            *t = quiet(|| {
                for slot in v.iter_mut() {
                    *slot = a.alloc();
                }
                // Stride 37 over the burst (coprime with it), moved by wave.
                for i in 0..burst {
                    a.free(v[(i * 37 + w) % burst]);
                }
            });
        }
        Centi(times.iter().sum::<u64>() * 100 / (times.len() * 2 * burst).max(1) as u64)
    })
}

/// Seed 001's policies: `max_order` and `min_objects` (0: scaled with the CPU count)
/// that give slabs of different sizes.
const SEED001_POLICIES: [(&str, i32, i32); 3] = [
    ("max_order=0", 0, 0),
    ("default (auto)", 3, 0),
    ("max_order=3 min_objects=64", 3, 64),
];

/// A seed-001 cache of 512-byte objects with the given order parameters.
fn seed001_cache(name: &CStr, max_order: i32, min_objects: i32) -> Result<Rslub> {
    let params = Params::new(RawParams {
        max_order,
        min_objects,
        ..RawParams::DEFAULT
    })
    .map_err(|_| EINVAL)?;
    rslub_cache(name, 512, Some(params))
}

/// Objects one CPU allocates per turn in seed 001, for the next CPU to free.
const SEED001_BATCH: usize = 16;

/// Seed 001: hackbench-like, every CPU allocating 512-byte objects and passing them to
/// the next CPU to free, for three order policies.
///
/// The CPUs take turns (QEMU runs them in turn anyway, at a coarser and unrepeatable
/// grain): in its turn a CPU allocates a batch for the next CPU and frees the batch the
/// previous CPU left it, with interrupts off, timed. So the figure has every slow path
/// and remote free of the pattern and none of the waiting on locks that an interleaving
/// would add; the wall-clock table is where truly parallel runs show.
pub(crate) fn seed001() -> Result {
    for (label, max_order, min_objects) in SEED001_POLICIES {
        let r = seed001_cache(c"bench_seed001", max_order, min_objects)?;
        let before = r.core().stats();
        let cost = turns(&r)?;
        let d = r.core().stats().since(&before);
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
            cost
        );
        r.destroy();
    }
    let k = Kernel::new(c"bench_seed001k", 512)?;
    let cost = turns(&k)?;
    let order = kernel_slab_attr(c"bench_seed001k", c"order")?;
    let per_slab = kernel_slab_attr(c"bench_seed001k", c"objs_per_slab")?;
    result!(
        "\"exp\":\"seed001\",\"policy\":\"kernel\",\"order\":{order},\"objects_per_slab\":{per_slab},\"insn_per_op\":{cost}"
    );
    drop(k);
    Ok(())
}

/// Seed 001's turns: 400 rounds in which every CPU in turn allocates a batch for the
/// next CPU and frees the batch the previous one left it, interrupts off, timed;
/// instructions per operation.
fn turns<A: Allocator>(a: &A) -> Result<Centi> {
    let ncpus = Topology::read().present_cpus as usize;
    // What each CPU finds left by the previous one.
    let mut rings = KVec::from_elem(
        [ptr::null_mut::<c_void>(); SEED001_BATCH],
        ncpus,
        GFP_KERNEL,
    )?;
    let rounds = 400u64;
    settle();
    let mut dt = 0;
    for _ in 0..rounds {
        for cpu in 0..ncpus {
            let next = (cpu + 1) % ncpus;
            let mut batch = [ptr::null_mut::<c_void>(); SEED001_BATCH];
            let left = core::mem::replace(&mut rings[cpu], batch);
            dt += quiet_on(cpu as u32, || {
                for b in batch.iter_mut() {
                    *b = a.alloc();
                }
                for &p in left.iter().filter(|p| !p.is_null()) {
                    a.free(p);
                }
            })?;
            rings[next] = batch;
        }
    }
    for ring in rings.iter() {
        for &p in ring.iter().filter(|p| !p.is_null()) {
            a.free(p);
        }
    }
    // Every turn but CPU 0's first frees a batch.
    let nops = (rounds * ncpus as u64 * 2 - 1) * SEED001_BATCH as u64;
    Ok(Centi(dt * 100 / nops.max(1)))
}

/// Capacity of a seed-001 mailbox.
const RING: usize = 256;

/// A single-producer single-consumer mailbox of objects: the previous CPU pushes what it
/// allocated, this CPU pops and frees.
#[repr(align(64))]
struct Ring {
    head: AtomicUsize,
    tail: AtomicUsize,
    slots: [AtomicUsize; RING],
}

impl Ring {
    fn new() -> Self {
        Self {
            head: AtomicUsize::new(0),
            tail: AtomicUsize::new(0),
            slots: [const { AtomicUsize::new(0) }; RING],
        }
    }

    /// Pushes `p`; false if the mailbox is full. Producer only.
    fn push(&self, p: usize) -> bool {
        let t = self.tail.load(Relaxed);
        if t.wrapping_sub(self.head.load(Acquire)) == RING {
            return false;
        }
        self.slots[t % RING].store(p, Relaxed);
        self.tail.store(t.wrapping_add(1), Release);
        true
    }

    /// Pops the oldest object, if any. Consumer only.
    fn pop(&self) -> Option<usize> {
        let h = self.head.load(Relaxed);
        if h == self.tail.load(Acquire) {
            return None;
        }
        let p = self.slots[h % RING].load(Relaxed);
        self.head.store(h.wrapping_add(1), Release);
        Some(p)
    }
}

/// Rounds per CPU of the parallel seed 001.
const SEED001_ROUNDS: usize = 4000;

/// One run of the parallel seed 001 on every CPU at once: each allocates batches of
/// objects and passes them to the next CPU, which frees them. A CPU whose next mailbox
/// is full frees what its own holds meanwhile, so every object is freed by the next CPU
/// (with one CPU, by itself). Returns the wall-clock nanoseconds.
fn ring_run<A: Allocator + Sync>(a: &A, ncpus: usize) -> Result<u64> {
    let mut rings = KVec::with_capacity(ncpus, GFP_KERNEL)?;
    for _ in 0..ncpus {
        rings.push(Ring::new(), GFP_KERNEL)?;
    }
    let arrived = AtomicU32::new(0);
    let finished = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let go = AtomicBool::new(false);
    let worker = |cpu: usize| {
        arrived.fetch_add(1, Relaxed);
        while !go.load(Acquire) {
            core::hint::spin_loop();
        }
        let next = &rings[(cpu + 1) % ncpus];
        let mine = &rings[cpu];
        for _ in 0..SEED001_ROUNDS {
            for _ in 0..SEED001_BATCH {
                let p = a.alloc();
                if p.is_null() {
                    failed.store(true, Relaxed);
                    continue;
                }
                while !next.push(p as usize) {
                    match mine.pop() {
                        Some(q) => a.free(q as *mut c_void),
                        None => core::hint::spin_loop(),
                    }
                }
            }
            for _ in 0..SEED001_BATCH {
                let Some(p) = mine.pop() else {
                    break;
                };
                a.free(p as *mut c_void);
            }
        }
        // Free what arrives until every producer is done (one may be waiting for room
        // in this mailbox); then what is left is all there will be.
        finished.fetch_add(1, Release);
        while finished.load(Acquire) < ncpus {
            match mine.pop() {
                Some(p) => a.free(p as *mut c_void),
                None => core::hint::spin_loop(),
            }
        }
        while let Some(p) = mine.pop() {
            a.free(p as *mut c_void);
        }
    };
    let ns = on_cpu(0, || {
        let give_up = || go.store(true, Release);
        with_workers(
            ncpus,
            &worker,
            &arrived,
            10_000_000_000,
            "seed001",
            give_up,
            || {
                let t0 = now_ns();
                go.store(true, Release);
                worker(0);
                now_ns() - t0
            },
        )
    })??;
    if failed.load(Relaxed) {
        return Err(ENOMEM);
    }
    Ok(ns)
}

/// Seed 001 again, on every CPU at once (not in turns): the hackbench-like ring of
/// [`ring_run`] in the wall-clock boots of 1, 2, 4 and as many vCPUs as the host has
/// cores, for order policies whose slabs differ, rslub beside the kernel: nanoseconds
/// per operation (the best of three runs), and rslub's node-lock acquisitions, waits and
/// time waited over that run.
pub(crate) fn seed001_parallel() -> Result {
    let ncpus = Topology::read().present_cpus as usize;
    let ops = (ncpus * SEED001_ROUNDS * SEED001_BATCH * 2) as u64;
    let k = Kernel::new(c"bench_seed001pk", 512)?;
    let mut k_best = u64::MAX;
    for _ in 0..3 {
        k_best = k_best.min(ring_run(&k, ncpus)?);
    }
    drop(k);
    for (label, max_order, min_objects) in SEED001_POLICIES {
        let r = seed001_cache(c"bench_seed001p", max_order, min_objects)?;
        let mut best: Option<(u64, Stats)> = None;
        for _ in 0..3 {
            let before = r.core().stats();
            let ns = ring_run(&r, ncpus)?;
            let d = r.core().stats().since(&before);
            if best.as_ref().is_none_or(|b| ns < b.0) {
                best = Some((ns, d));
            }
        }
        let (ns, d) = best.ok_or(EINVAL)?;
        let l = r.core().layout();
        result!(
            "\"exp\":\"seed001_parallel\",\"cpus\":{ncpus},\"policy\":\"{label}\",\"order\":{},\"objects_per_slab\":{},\"rslub_ns_per_op\":{},\"kernel_ns_per_op\":{},\"node_lock\":{},\"node_lock_contended\":{},\"node_lock_wait_ns\":{},\"node_locks_per_1000_ops\":{},\"wait_pct\":{},\"free_slow_pct\":{},\"new_slab\":{}",
            l.order,
            l.objects,
            Centi(ns * 100 / ops.max(1)),
            Centi(k_best * 100 / ops.max(1)),
            d.get(Stat::NodeLock),
            d.get(Stat::NodeLockContended),
            d.get(Stat::NodeLockWaitNs),
            Centi(d.get(Stat::NodeLock) * 100_000 / ops.max(1)),
            Centi(d.get(Stat::NodeLockWaitNs) * 10_000 / (ns * ncpus as u64).max(1)),
            Centi(
                d.get(Stat::FreeSlow) * 10_000
                    / (d.get(Stat::FreeFast) + d.get(Stat::FreeSlow)).max(1)
            ),
            d.get(Stat::NewSlab)
        );
        r.destroy();
    }
    Ok(())
}

/// One round of seed 002's "plain after remote": an `alloc_node(remote)` (which may
/// switch the CPU to a slab of that node), then `plain` allocations with no node asked
/// for; returns how many of those came from another node than the CPU's. Everything is
/// freed again.
fn plain_after_remote<A: Allocator>(a: &A, remote: i32, plain: &mut [*mut c_void]) -> u64 {
    let local = crate::shim::numa_mem_id().unsigned_abs();
    let r = a.alloc_node(remote);
    for slot in plain.iter_mut() {
        *slot = a.alloc();
    }
    let far = plain
        .iter()
        .filter(|&&p| !p.is_null() && node_of(p as usize) != local)
        .count() as u64;
    for &p in plain.iter() {
        a.free(p);
    }
    a.free(r);
    far
}

/// Mixed `alloc_node` requests, each freed at once: one for node `remote` in every
/// `every` (the others for the local node), `n` in all; instructions per request.
fn mixed_nodes<A: Allocator>(a: &A, remote: i32, every: u64, n: u64) -> Centi {
    let local = crate::shim::numa_mem_id();
    measure(n, || {
        for i in 0..n {
            let node = if i % every.max(1) == 0 { remote } else { local };
            let p = a.alloc_node(node);
            a.free(black_box(p));
        }
    })
}

/// Seed 002 (skbs on the local node, 2010): SLUB lets a CPU allocate from another node's
/// slab on the fast path once an `alloc_node` for that node switched its active slab, so
/// allocations that ask for no node get remote memory. For three sizes on a CPU of node
/// 0: `alloc_node(remote)` + free pairs (rslub and the kernel); rounds of one
/// `alloc_node(remote)` followed by allocations with no node (how many of those came
/// from the remote node, and, for rslub, how many on the fast path); and mixed
/// local/remote `alloc_node` requests (one remote in 2, 4 and 16), with rslub's node
/// mismatches (each one gives the active slab back, as in SLUB).
pub(crate) fn seed002() -> Result {
    let topo = Topology::read();
    if topo.online_nodes < 2 {
        return Ok(());
    }
    let remote = topo.online_nodes as i32 - 1;
    const ROUNDS: u64 = 200;
    const PLAIN: usize = 8;
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

            let mut plain = [ptr::null_mut::<c_void>(); PLAIN];
            settle();
            let before = r.core().stats();
            let rf: u64 = (0..ROUNDS)
                .map(|_| plain_after_remote(&r, remote, &mut plain))
                .sum();
            let d = r.core().stats().since(&before);
            let kf: u64 = (0..ROUNDS)
                .map(|_| plain_after_remote(&k, remote, &mut plain))
                .sum();
            let asked = ROUNDS * PLAIN as u64;
            let fast = d.get(Stat::AllocFast);
            let all = (fast + d.get(Stat::AllocSlow)).max(1);
            result!(
                "\"exp\":\"seed002_plain\",\"size\":{size},\"plain\":{asked},\"rslub_remote\":{rf},\"kernel_remote\":{kf},\"rslub_fast_pct\":{},\"rslub_node_mismatch\":{}",
                Centi(fast * 10000 / all),
                d.get(Stat::NodeMismatch)
            );

            for every in [2u64, 4, 16] {
                let before = r.core().stats();
                let rv = mixed_nodes(&r, remote, every, 2000);
                let d = r.core().stats().since(&before);
                let kv = mixed_nodes(&k, remote, every, 2000);
                let all = (d.get(Stat::AllocFast) + d.get(Stat::AllocSlow)).max(1);
                result!(
                    "\"exp\":\"seed002_mixed\",\"size\":{size},\"remote_every\":{every},\"rslub\":{rv},\"kernel\":{kv},\"rslub_node_mismatch_pct\":{},\"rslub_new_slab\":{}",
                    Centi(d.get(Stat::NodeMismatch) * 10000 / all),
                    d.get(Stat::NewSlab)
                );
            }
        })?;
        drop(k);
        r.destroy();
    }
    Ok(())
}

/// The partial slabs of seed 003: ten slabs' worth of objects allocated on each holder
/// node (the nodes other than the CPU's, or the only one), every other one freed again.
/// Returns the objects kept and how many were freed.
fn seed003_fill<A: Allocator>(
    a: &A,
    per_slab: usize,
    holders: core::ops::Range<i32>,
) -> Result<(KVec<usize>, usize)> {
    let mut kept = KVec::new();
    let mut freed = 0;
    for node in holders {
        let mut objs: KVec<usize> = KVec::new();
        for _ in 0..10 * per_slab {
            let p = a.alloc_node(node);
            if p.is_null() {
                return Err(ENOMEM);
            }
            objs.push(p as usize, GFP_KERNEL)?;
        }
        for (i, &p) in objs.iter().enumerate() {
            if i % 2 == 0 {
                a.free(p as *mut c_void);
                freed += 1;
            } else {
                kept.push(p, GFP_KERNEL)?;
            }
        }
    }
    Ok((kept, freed))
}

/// Seed 003: a CPU of node 0 allocates until the partial slabs run out. On several
/// nodes, only the other nodes have partial slabs (the same number each), so every refill
/// walks; on one node the local list has them, then runs dry. Remote walks, nodes looked
/// at and successes, with the walk of each node once (none on one node) against SLUB's
/// old zonelist walk, in the order A B B A (so that neither always runs first), with
/// `min_partial` 0 and every refill walking, and with the defaults (`min_partial` from
/// the size, `remote_node_defrag_ratio` 1000); the kernel's cache in the same scenario,
/// whose search counts nothing (no `CONFIG_SLUB_STATS`): its instructions per allocation.
pub(crate) fn seed003() -> Result {
    let topo = Topology::read();
    let nodes = topo.online_nodes as i32;
    let holders = if nodes > 1 { 1..nodes } else { 0..1 };
    // On one node, go on past the partial slabs: the refills then find nothing.
    let extra = |per_slab: usize| if nodes > 1 { 0 } else { 5 * per_slab };
    const SIZE: u32 = 1024;
    // A first round, not reported, pays what the first cache of a boot pays.
    let abba = [
        ("warm-up", RemoteWalk::NodesOnce),
        ("nodes_once", RemoteWalk::NodesOnce),
        ("zonelist", RemoteWalk::Zonelist),
        ("zonelist", RemoteWalk::Zonelist),
        ("nodes_once", RemoteWalk::NodesOnce),
    ];
    for tunables in ["walk_always", "defaults"] {
        for (run, &(label, walk)) in abba.iter().enumerate() {
            let r = rslub_cache(c"bench_seed003", SIZE, None)?;
            let c = r.core();
            if tunables == "walk_always" {
                c.set_min_partial(0);
                c.set_remote_node_defrag_ratio(1024);
            } else {
                c.set_remote_node_defrag_ratio(crate::cache::DEFAULT_REMOTE_NODE_DEFRAG_RATIO);
            }
            c.set_remote_walk(walk);
            let per_slab = c.layout().objects as usize;
            let mut used: KVec<usize> = KVec::new();
            let res = on_cpu(0, || -> Result<(KVec<usize>, u64, Stats)> {
                let (kept, freed) = seed003_fill(&r, per_slab, holders.clone())?;
                // Every CPU's active slab back to its node's list.
                c.shrink();
                let n = freed + extra(per_slab);
                used.reserve(n, GFP_KERNEL)?;
                settle();
                let before = c.stats();
                let dt = quiet(|| {
                    for _ in 0..n {
                        let _ = used.push_within_capacity(r.alloc_node(NO_NODE) as usize);
                    }
                });
                let d = c.stats().since(&before);
                Ok((kept, dt * 100 / n.max(1) as u64, d))
            })?;
            let (kept, cost, d) = res?;
            let (tried, success, walks) = (
                d.get(Stat::RemoteNodesTried),
                d.get(Stat::RefillRemotePartial),
                d.get(Stat::RemoteWalk),
            );
            if run > 0 {
                result!(
                    "\"exp\":\"seed003\",\"nodes\":{nodes},\"tunables\":\"{tunables}\",\"run\":{run},\"walk\":\"{label}\",\"min_partial\":{},\"get_partial\":{},\"remote_walks\":{walks},\"remote_walks_skipped\":{},\"remote_nodes_tried\":{tried},\"remote_success\":{success},\"tried_per_success\":{},\"tried_per_walk\":{},\"insn_per_alloc\":{}",
                    c.min_partial(),
                    d.get(Stat::GetPartial),
                    d.get(Stat::RemoteWalkSkipped),
                    Centi(tried * 100 / success.max(1)),
                    Centi(tried * 100 / walks.max(1)),
                    Centi(cost)
                );
            }
            for &p in Iterator::chain(kept.iter(), used.iter()) {
                r.free(p as *mut c_void);
            }
            r.destroy();
        }
    }
    // The kernel's cache, the same scenario: its sheaves go back to the slabs before the
    // allocations (kmem_cache_shrink), so the refills meet the same partial slabs.
    let k = Kernel::new(c"bench_seed003k", SIZE)?;
    let per_slab = kernel_slab_attr(c"bench_seed003k", c"objs_per_slab")? as usize;
    let mut used: KVec<usize> = KVec::new();
    let res = on_cpu(0, || -> Result<(KVec<usize>, u64)> {
        let (kept, freed) = seed003_fill(&k, per_slab, holders.clone())?;
        k.shrink();
        let n = freed + extra(per_slab);
        used.reserve(n, GFP_KERNEL)?;
        settle();
        let dt = quiet(|| {
            for _ in 0..n {
                let _ = used.push_within_capacity(k.alloc_node(NO_NODE) as usize);
            }
        });
        Ok((kept, dt * 100 / n.max(1) as u64))
    })?;
    let (kept, cost) = res?;
    result!(
        "\"exp\":\"seed003_kernel\",\"nodes\":{nodes},\"insn_per_alloc\":{}",
        Centi(cost)
    );
    for &p in Iterator::chain(kept.iter(), used.iter()) {
        k.free(p as *mut c_void);
    }
    drop(k);
    Ok(())
}

/// The secondary figure: wall-clock time of alloc+free pairs, rslub and the kernel
/// interleaved chunk by chunk in one boot (multi-threaded TCG, no icount), fastest chunk
/// of each; `scripts/bench/bench.sh` runs it in several boots and reports the range of ratios.
pub(crate) fn wallclock() -> Result {
    for size in SIZES {
        let r = rslub_cache(c"bench_wall", size, None)?;
        let k = Kernel::new(c"bench_wallk", size)?;
        let (mut best_r, mut best_k) = (u64::MAX, u64::MAX);
        on_cpu(0, || {
            // One round to warm up (first use, QEMU translating the code), then chunks.
            for round in 0..=CHUNKS {
                let tr = quiet(|| {
                    for _ in 0..2000 {
                        let p = r.alloc();
                        r.free(black_box(p));
                    }
                });
                let tk = quiet(|| {
                    for _ in 0..2000 {
                        let p = k.alloc();
                        k.free(black_box(p));
                    }
                });
                if round > 0 {
                    best_r = best_r.min(tr);
                    best_k = best_k.min(tk);
                }
            }
        })?;
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
