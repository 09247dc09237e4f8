// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_stress`: two workers per online CPU allocate and free at once for
//! `stress_seconds` (module parameter of `rslub_kunit`, 3 by default; `make test
//! STRESS=60`; `make stress` runs 300), from several caches of different sizes, through
//! every path: single objects, explicit nodes, bulk allocation and bulk free. They hand
//! objects to the other workers to free (on other CPUs and nodes), while timers on every
//! CPU interrupt them to allocate and free too, in softirq and in hard interrupt
//! context. One worker per CPU is bound to it; the others are not, and a migrator thread
//! keeps moving them to random CPUs, wherever they are in their code (the stopper thread
//! preempts them), so the fast paths are interrupted by migrations, not only by
//! interrupts, and the last CPU goes offline and comes back over and over. Every object
//! is filled with a pattern made of its address and a tag, checked word by word when it
//! is freed, so two owners of one object, or a write into a free one, are caught. At the
//! end every cache must go back to no slab at all.

use kernel::prelude::*;

#[kunit_tests(rslub_stress)]
mod tests {
    use crate::{
        cache::{CacheArgs, NO_NODE},
        gfp::Gfp,
        registry::Cache,
        stats::Stat,
        test_shim::{cpu_down, cpu_up, now_ns, usleep, Thread, Tick},
        topology::{online_nodes, Topology},
    };
    use core::{
        ptr::NonNull,
        sync::atomic::{AtomicU64, Ordering::Relaxed},
    };
    use kernel::{bindings, cpu::CpuId, new_spinlock, prelude::*, sync::SpinLock};

    /// Object sizes of the caches: small to a page and a half, not all powers of two.
    const SIZES: [u32; 6] = [8, 24, 72, 200, 712, 2056];
    /// Objects a thread holds at most.
    const HOLD: usize = 256;
    /// Largest bulk request.
    const BULK: usize = 16;

    /// A tiny xorshift generator: reproducible per CPU, no locks.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// An object in hand: its address, its tag and its cache (an index into `SIZES`).
    #[derive(Clone, Copy)]
    struct Obj {
        p: usize,
        tag: u64,
        cache: usize,
    }

    /// Takes element `i` out of `v`, in O(1) (the order does not matter).
    fn take(v: &mut KVec<Obj>, i: usize) -> Obj {
        let last = v.len() - 1;
        v.swap(i, last);
        v.pop().expect("non-empty")
    }

    /// Word `i` of the pattern of an object at `p` with `tag`.
    fn word(p: usize, tag: u64, i: usize) -> u64 {
        (p as u64 + 8 * i as u64).rotate_left(17) ^ tag
    }

    /// Objects handed to one worker to free.
    type Inbox = Pin<KBox<SpinLock<KVec<Obj>>>>;

    struct Shared<'a> {
        caches: &'a [Cache],
        nodes: KVec<i32>,
        deadline: u64,
        /// Objects handed to each worker to free.
        inbox: KVec<Inbox>,
        bad_words: AtomicU64,
        ops: AtomicU64,
        softirq_ops: AtomicU64,
        hardirq_ops: AtomicU64,
        failures: AtomicU64,
        /// Roaming workers moved by the migrator.
        migrations: AtomicU64,
        /// CPU offline/online cycles, if `hotplug`.
        hotplugs: AtomicU64,
        hotplug: bool,
    }

    /// How long past the deadline the run waits for its first migration and CPU cycle.
    const GRACE_NS: u64 = 60_000_000_000;

    impl Shared<'_> {
        /// Whether the run goes on: until the deadline, and past it until the migrator has
        /// moved a worker and (with several CPUs) a CPU has gone offline and come back,
        /// which a slow guest on a loaded host can put off for the whole of a short run
        /// (for at most [`GRACE_NS`] more, after which the checks fail).
        fn running(&self) -> bool {
            let now = now_ns();
            // A failure (a CPU that did not come back, say) fails the run: no wait.
            let waiting = self.failures.load(Relaxed) == 0
                && (self.migrations.load(Relaxed) == 0
                    || (self.hotplug && self.hotplugs.load(Relaxed) == 0));
            now < self.deadline || (waiting && now < self.deadline + GRACE_NS)
        }

        /// Fills a new object with its pattern.
        fn fill(&self, o: Obj) {
            let words = SIZES[o.cache] as usize / 8;
            for i in 0..words {
                // SAFETY: `o.p` is a live object of `SIZES[o.cache]` bytes, a multiple of
                // 8, owned by the caller.
                unsafe { (o.p as *mut u64).add(i).write(word(o.p, o.tag, i)) };
            }
        }

        /// Checks an object's pattern before it is freed; counts the bad words.
        fn check(&self, o: Obj) {
            let words = SIZES[o.cache] as usize / 8;
            let mut bad = 0;
            for i in 0..words {
                // SAFETY: As above.
                if unsafe { (o.p as *const u64).add(i).read() } != word(o.p, o.tag, i) {
                    bad += 1;
                }
            }
            if bad != 0 {
                self.bad_words.fetch_add(bad, Relaxed);
            }
        }

        /// What the timers do, in softirq or hard interrupt context, interrupting the
        /// workers' fast paths: allocate an object, fill it, check it, free it.
        fn in_interrupt(&self, ci: usize, counter: &AtomicU64) {
            let atomic = Gfp::from_raw(bindings::GFP_ATOMIC);
            if let Ok(p) = self.caches[ci].alloc(atomic) {
                let o = Obj {
                    p: p.as_ptr() as usize,
                    tag: counter.load(Relaxed),
                    cache: ci,
                };
                self.fill(o);
                self.check(o);
                // SAFETY: just allocated, freed once.
                unsafe { self.caches[ci].free(p) };
                counter.fetch_add(1, Relaxed);
            }
        }

        fn free(&self, o: Obj) {
            self.check(o);
            // SAFETY: `o.p` was allocated from that cache and is freed once, by its owner.
            unsafe { self.caches[o.cache].free(NonNull::new(o.p as *mut u8).expect("non-null")) };
        }

        /// A new object of cache `ci` at `p`, tagged and filled, into `held`.
        fn got(&self, held: &mut KVec<Obj>, p: usize, ci: usize, tag: u64) {
            let o = Obj { p, tag, cache: ci };
            self.fill(o);
            if held.push(o, GFP_KERNEL).is_err() {
                self.free(o);
            }
        }

        /// Worker `w` of `workers` (the first `ncpus` are bound to the CPU of their
        /// number, the others roam); counts its operations (objects allocated or freed).
        fn run(&self, w: u32, workers: u32) {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((u64::from(w) + 1) * 0x1000_0001));
            let mut held: KVec<Obj> = KVec::new();
            let mut batch = [core::ptr::null_mut::<u8>(); BULK];
            if held.reserve(HOLD, GFP_KERNEL).is_err() {
                self.failures.fetch_add(1, Relaxed);
                return;
            }
            let mut seq = 0u64;
            let mut ops = 0u64;
            while self.running() {
                let r = rng.next();
                let ci = (r >> 40) as usize % SIZES.len();
                let cache = &self.caches[ci];
                let tag = (u64::from(w) << 48) | seq;
                seq += 1;
                match r % 16 {
                    // Allocate one, on any node or on a node of choice.
                    0..=6 => {
                        if held.len() == HOLD {
                            let victim = take(&mut held, (r >> 8) as usize % HOLD);
                            self.free(victim);
                            ops += 1;
                        }
                        let node = if r % 16 == 6 {
                            self.nodes[(r >> 20) as usize % self.nodes.len()]
                        } else {
                            NO_NODE
                        };
                        match cache.alloc_node(Gfp::KERNEL, node) {
                            Ok(p) => self.got(&mut held, p.as_ptr() as usize, ci, tag),
                            Err(_) => {
                                self.failures.fetch_add(1, Relaxed);
                            }
                        }
                        ops += 1;
                    }
                    // Allocate a batch.
                    7 if held.len() + BULK <= HOLD => {
                        let n = 1 + (r >> 12) as usize % BULK;
                        match cache.alloc_bulk(Gfp::KERNEL, &mut batch[..n]) {
                            Ok(()) => {
                                for (i, &p) in batch[..n].iter().enumerate() {
                                    self.got(&mut held, p as usize, ci, tag ^ i as u64);
                                }
                            }
                            Err(_) => {
                                self.failures.fetch_add(1, Relaxed);
                            }
                        }
                        ops += n as u64;
                    }
                    // Free one.
                    8..=10 if !held.is_empty() => {
                        let i = (r >> 8) as usize % held.len();
                        let o = take(&mut held, i);
                        self.free(o);
                        ops += 1;
                    }
                    // Free a batch of one cache's objects.
                    11 if !held.is_empty() => {
                        let ci = held[(r >> 8) as usize % held.len()].cache;
                        let mut n = 0;
                        let mut i = 0;
                        while i < held.len() && n < BULK {
                            if held[i].cache == ci {
                                let o = take(&mut held, i);
                                self.check(o);
                                batch[n] = o.p as *mut u8;
                                n += 1;
                            } else {
                                i += 1;
                            }
                        }
                        // SAFETY: `n` objects of cache `ci`, owned and freed once.
                        unsafe { self.caches[ci].free_bulk(&mut batch[..n]) };
                        ops += n as u64;
                    }
                    // Hand one to another worker, likely on another CPU or node.
                    12 | 13 if !held.is_empty() && workers > 1 => {
                        let i = (r >> 8) as usize % held.len();
                        let o = take(&mut held, i);
                        let to = (w + 1 + (r >> 32) as u32 % (workers - 1)) % workers;
                        let mut inbox = self.inbox[to as usize].lock();
                        if inbox.push(o, GFP_ATOMIC).is_err() {
                            drop(inbox);
                            self.free(o);
                            ops += 1;
                        }
                    }
                    // Free what others handed over.
                    _ => {
                        let mut mine = KVec::new();
                        core::mem::swap(&mut mine, &mut *self.inbox[w as usize].lock());
                        ops += mine.len() as u64;
                        for o in mine {
                            self.free(o);
                        }
                    }
                }
            }
            ops += held.len() as u64;
            for o in held.drain_all() {
                self.free(o);
            }
            self.ops.fetch_add(ops, Relaxed);
        }
    }

    #[test]
    fn all_cpus_mixed_alloc_free_with_cross_cpu_frees() {
        let seconds = crate::module_parameters::stress_seconds.value();
        let ncpus = Topology::read().online_cpus;
        let workers = 2 * ncpus;
        let mut caches = KVec::new();
        for (i, &size) in SIZES.iter().enumerate() {
            let names = [
                c"rslub_stress_8",
                c"rslub_stress_24",
                c"rslub_stress_72",
                c"rslub_stress_200",
                c"rslub_stress_712",
                c"rslub_stress_2056",
            ];
            let c = Cache::create(&CacheArgs {
                name: names[i],
                size,
                align: 0,
                flags: 0,
                ctor: None,
                freeptr_offset: None,
            })
            .expect("cache");
            caches.push(c, GFP_KERNEL).expect("memory");
        }
        let mut inbox = KVec::new();
        for _ in 0..workers {
            inbox
                .push(
                    KBox::pin_init(new_spinlock!(KVec::new()), GFP_KERNEL).expect("memory"),
                    GFP_KERNEL,
                )
                .expect("memory");
        }
        let mut nodes = KVec::new();
        for n in online_nodes() {
            nodes.push(n as i32, GFP_KERNEL).expect("memory");
        }
        let start = now_ns();
        let shared = Shared {
            caches: &caches,
            nodes,
            deadline: start + u64::from(seconds) * 1_000_000_000,
            inbox,
            bad_words: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            softirq_ops: AtomicU64::new(0),
            hardirq_ops: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            migrations: AtomicU64::new(0),
            hotplugs: AtomicU64::new(0),
            hotplug: ncpus > 1,
        };
        let (migrations, hotplugs) = (&shared.migrations, &shared.hotplugs);
        {
            let softirq = || {
                let n = shared.softirq_ops.load(Relaxed) as usize;
                shared.in_interrupt(n % SIZES.len(), &shared.softirq_ops)
            };
            let hardirq = || {
                let n = shared.hardirq_ops.load(Relaxed) as usize;
                shared.in_interrupt((n + 3) % SIZES.len(), &shared.hardirq_ops)
            };
            let mut ticks = KVec::new();
            let mut threads = KVec::new();
            for cpu in 0..ncpus {
                let id = CpuId::from_u32(cpu).expect("cpu");
                // SAFETY: `softirq` and `hardirq` outlive `ticks`, dropped (stopping every
                // timer) at the end of this block.
                let t = unsafe { Tick::start(&softirq, id) }.expect("timer");
                ticks.push(t, GFP_KERNEL).expect("memory");
                // SAFETY: As above.
                let t = unsafe { Tick::start_hard(&hardirq, id) }.expect("timer");
                ticks.push(t, GFP_KERNEL).expect("memory");
            }
            let mut bodies = KVec::new();
            for w in 0..workers {
                let s = &shared;
                bodies
                    .push(move || s.run(w, workers), GFP_KERNEL)
                    .expect("memory");
            }
            let mut roaming = KVec::new();
            for (w, body) in bodies.iter().enumerate() {
                let w = w as u32;
                if w < ncpus {
                    let id = CpuId::from_u32(w).expect("cpu");
                    // SAFETY: `bodies` outlives `threads`, which is dropped (joining every
                    // thread) at the end of this block, before `bodies`.
                    let t = unsafe { Thread::start(body, id) }.expect("thread");
                    threads.push(t, GFP_KERNEL).expect("memory");
                } else {
                    // SAFETY: As above, for `roaming`.
                    let t = unsafe { Thread::start_unbound(body) }.expect("thread");
                    roaming.push(t, GFP_KERNEL).expect("memory");
                }
            }
            let migrator = || {
                let mut rng = Rng(0x2545_f491_4f6c_dd1d);
                while shared.running() {
                    for t in roaming.iter() {
                        let to = CpuId::from_u32((rng.next() % u64::from(ncpus.max(1))) as u32);
                        if to.is_some_and(|to| t.move_to(to).is_ok()) {
                            migrations.fetch_add(1, Relaxed);
                        }
                    }
                    usleep(200);
                }
            };
            // The last CPU goes offline and comes back, over and over: its active slabs
            // go back to the node (`rslub_cpu_dead()`) while the others allocate from
            // and free into them, its bound worker is pushed to another CPU, its timers
            // migrate.
            let hotplugger = || {
                let Some(victim) = CpuId::from_u32(ncpus - 1).filter(|_| ncpus > 1) else {
                    return;
                };
                while shared.running() {
                    if cpu_down(victim).is_ok() {
                        usleep(20_000);
                        if cpu_up(victim).is_err() {
                            shared.failures.fetch_add(1, Relaxed);
                            return;
                        }
                        hotplugs.fetch_add(1, Relaxed);
                    }
                    usleep(50_000);
                }
            };
            // SAFETY: `migrator` and `hotplugger` outlive the threads, joined right below.
            let m = unsafe { Thread::start_unbound(&migrator) }.expect("thread");
            // SAFETY: As above.
            let h = unsafe { Thread::start(&hotplugger, CpuId::from_u32(0).expect("cpu 0")) }
                .expect("thread");
            drop(m);
            drop(h);
            drop(threads);
            drop(roaming);
            drop(ticks);
        }
        // Whatever is left in the inboxes.
        for b in shared.inbox.iter() {
            let mut mine = KVec::new();
            core::mem::swap(&mut mine, &mut *b.lock());
            for o in mine {
                shared.free(o);
            }
        }
        let sum = |st: Stat| caches.iter().map(|c| c.stats().get(st)).sum::<u64>();
        kernel::kunit::info(fmt!(
            "    # stress: {} s ({} ms run), {} CPUs, {} workers, {} caches, {} forced migrations, {} CPU offline/online cycles, {} operations, {} in softirqs, {} in hard irqs, alloc fast/slow {}/{}, free fast/slow {}/{}, new slabs {}, bad pattern words {}\n",
            seconds,
            (now_ns() - start) / 1_000_000,
            ncpus,
            workers,
            SIZES.len(),
            migrations.load(Relaxed),
            hotplugs.load(Relaxed),
            shared.ops.load(Relaxed),
            shared.softirq_ops.load(Relaxed),
            shared.hardirq_ops.load(Relaxed),
            sum(Stat::AllocFast),
            sum(Stat::AllocSlow),
            sum(Stat::FreeFast),
            sum(Stat::FreeSlow),
            sum(Stat::NewSlab),
            shared.bad_words.load(Relaxed),
        ));
        assert_eq!(shared.bad_words.load(Relaxed), 0);
        assert_eq!(shared.failures.load(Relaxed), 0);
        assert!(shared.softirq_ops.load(Relaxed) > 0);
        assert!(shared.hardirq_ops.load(Relaxed) > 0);
        assert!(migrations.load(Relaxed) > 0);
        if ncpus > 1 {
            assert!(hotplugs.load(Relaxed) > 0);
            assert!(sum(Stat::FreeSlow) > 0);
        }
        // Every object came back: after a shrink no slab, hence no page, is left.
        let mut slabs = 0i64;
        for c in caches.iter() {
            c.shrink();
            for nid in online_nodes() {
                slabs += c.node_counts(nid).0;
            }
            let s = c.stats();
            assert_eq!(s.get(Stat::NewSlab), s.get(Stat::SlabFreed));
        }
        kernel::kunit::info(fmt!(
            "    # stress: slabs (hence pages) left after shrinking: {slabs}\n"
        ));
        assert_eq!(slabs, 0);
        for c in caches.drain_all() {
            assert!(c.destroy().is_ok());
        }
    }
}
