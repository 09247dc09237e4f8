// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_stress`: two workers per online CPU allocate and free at once for
//! `stress_seconds` (module parameter of `rslub_kunit`, 3 by default; `make test
//! STRESS=60`), handing objects to the other workers to free, while timers (softirq
//! context) on every CPU interrupt them to allocate and free too. One worker per CPU is
//! bound to it; the others are not, and a migrator thread keeps moving them to random
//! CPUs, wherever they are in their code (the stopper thread preempts them), so the fast
//! paths are interrupted by migrations, not only by interrupts, and the last CPU goes
//! offline and comes back over and over. Every object carries a
//! tag checked when it is freed, so two owners of one object are caught. At the end the
//! cache must go back to no slab at all.

use kernel::prelude::*;

#[kunit_tests(rslub_stress)]
mod tests {
    use crate::{
        cache::CacheArgs,
        gfp::Gfp,
        registry::Cache,
        stats::Stat,
        test_shim::{cpu_down, cpu_up, now_ns, usleep, Thread, Tick},
        topology::Topology,
    };
    use core::{
        ptr::NonNull,
        sync::atomic::{AtomicU64, Ordering::Relaxed},
    };
    use kernel::{bindings, cpu::CpuId, new_spinlock, prelude::*, sync::SpinLock};

    const SIZE: u32 = 128;
    /// Objects a thread holds at most.
    const HOLD: usize = 256;

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

    /// Takes element `i` out of `v`, in O(1) (the order does not matter).
    fn take(v: &mut KVec<(usize, u64)>, i: usize) -> (usize, u64) {
        let last = v.len() - 1;
        v.swap(i, last);
        v.pop().expect("non-empty")
    }

    /// Writes `tag` into an object.
    fn tag(p: usize, tag: u64) {
        // SAFETY: `p` is a live object of at least 8 bytes owned by the caller.
        unsafe { (p as *mut u64).write(tag) };
    }

    /// Reads an object's tag.
    fn tag_of(p: usize) -> u64 {
        // SAFETY: As above.
        unsafe { (p as *const u64).read() }
    }

    /// An object handed over: its address and tag.
    type Handed = (usize, u64);
    /// Objects handed to one CPU to free.
    type Inbox = Pin<KBox<SpinLock<KVec<Handed>>>>;

    struct Shared<'a> {
        cache: &'a Cache,
        deadline: u64,
        /// Objects handed to each CPU to free, as (address, tag).
        inbox: KVec<Inbox>,
        bad_tags: AtomicU64,
        ops: AtomicU64,
        irq_ops: AtomicU64,
        failures: AtomicU64,
    }

    impl Shared<'_> {
        /// What the per-CPU timers do, in softirq context, interrupting the threads'
        /// fast paths: allocate an object, tag it, free it.
        fn in_softirq(&self) {
            let atomic = Gfp::from_raw(bindings::GFP_ATOMIC);
            if let Ok(p) = self.cache.alloc(atomic) {
                tag(p.as_ptr() as usize, 1);
                // SAFETY: just allocated, freed once.
                unsafe { self.cache.free(p) };
                self.irq_ops.fetch_add(1, Relaxed);
            }
        }

        fn free(&self, (p, t): (usize, u64)) {
            if tag_of(p) != t {
                self.bad_tags.fetch_add(1, Relaxed);
            }
            // SAFETY: `p` was allocated from the cache and is freed once, by its owner.
            unsafe {
                self.cache
                    .free(NonNull::new(p as *mut u8).expect("non-null"))
            };
        }

        /// Worker `cpu` of `ncpus` (a worker number: the first half are bound to the CPU
        /// of that number, the others roam).
        fn run(&self, cpu: u32, ncpus: u32) {
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ ((u64::from(cpu) + 1) * 0x1000_0001));
            let mut held: KVec<(usize, u64)> = KVec::new();
            if held.reserve(HOLD, GFP_KERNEL).is_err() {
                self.failures.fetch_add(1, Relaxed);
                return;
            }
            let mut seq = 0u64;
            let mut iter = 0u64;
            while now_ns() < self.deadline {
                iter += 1;
                let r = rng.next();
                match r % 8 {
                    0..=3 => {
                        if held.len() == HOLD {
                            let victim = take(&mut held, (r >> 8) as usize % HOLD);
                            self.free(victim);
                        }
                        match self.cache.alloc(Gfp::KERNEL) {
                            Ok(p) => {
                                seq += 1;
                                let t = (u64::from(cpu) << 48) | seq;
                                tag(p.as_ptr() as usize, t);
                                let _ = held.push((p.as_ptr() as usize, t), GFP_KERNEL);
                            }
                            Err(_) => {
                                self.failures.fetch_add(1, Relaxed);
                            }
                        }
                    }
                    4 | 5 if !held.is_empty() => {
                        let i = (r >> 8) as usize % held.len();
                        let o = take(&mut held, i);
                        self.free(o);
                    }
                    6 if !held.is_empty() && ncpus > 1 => {
                        let i = (r >> 8) as usize % held.len();
                        let o = take(&mut held, i);
                        let to = (cpu + 1 + (r >> 32) as u32 % (ncpus - 1)) % ncpus;
                        let mut inbox = self.inbox[to as usize].lock();
                        if inbox.push(o, GFP_ATOMIC).is_err() {
                            drop(inbox);
                            self.free(o);
                        }
                    }
                    _ => {
                        let mut mine = KVec::new();
                        core::mem::swap(&mut mine, &mut *self.inbox[cpu as usize].lock());
                        for o in mine {
                            self.free(o);
                        }
                    }
                }
            }
            self.ops.fetch_add(iter, Relaxed);
            for o in held.drain_all() {
                self.free(o);
            }
        }
    }

    #[test]
    fn all_cpus_mixed_alloc_free_with_cross_cpu_frees() {
        let seconds = crate::module_parameters::stress_seconds.value();
        let ncpus = Topology::read().online_cpus;
        let workers = 2 * ncpus;
        let cache = Cache::create(&CacheArgs {
            name: c"rslub_test_stress",
            size: SIZE,
            align: 0,
            flags: 0,
            ctor: None,
        })
        .expect("cache");
        let mut inbox = KVec::new();
        for _ in 0..workers {
            inbox
                .push(
                    KBox::pin_init(new_spinlock!(KVec::new()), GFP_KERNEL).expect("memory"),
                    GFP_KERNEL,
                )
                .expect("memory");
        }
        let shared = Shared {
            cache: &cache,
            deadline: now_ns() + u64::from(seconds) * 1_000_000_000,
            inbox,
            bad_tags: AtomicU64::new(0),
            ops: AtomicU64::new(0),
            irq_ops: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        };
        let migrations = AtomicU64::new(0);
        let hotplugs = AtomicU64::new(0);
        {
            let softirq = || shared.in_softirq();
            let mut ticks = KVec::new();
            let mut threads = KVec::new();
            for cpu in 0..ncpus {
                let id = CpuId::from_u32(cpu).expect("cpu");
                // SAFETY: `softirq` outlives `ticks`, dropped (stopping every timer) at
                // the end of this block.
                let t = unsafe { Tick::start(&softirq, id) }.expect("timer");
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
                while now_ns() < shared.deadline {
                    for t in roaming.iter() {
                        let to = CpuId::from_u32((rng.next() % u64::from(ncpus.max(1))) as u32);
                        if to.is_some_and(|to| t.move_to(to).is_ok()) {
                            migrations.fetch_add(1, Relaxed);
                        }
                    }
                    usleep(200);
                }
            };
            // The last CPU goes offline and comes back, over and over: its active slab
            // goes back to the node (`rslub_cpu_dead()`) while the others allocate from
            // and free into it, its bound worker is pushed to another CPU, its timer
            // migrates.
            let hotplugger = || {
                let Some(victim) = CpuId::from_u32(ncpus - 1).filter(|_| ncpus > 1) else {
                    return;
                };
                while now_ns() < shared.deadline {
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
        let s = cache.stats();
        kernel::kunit::info(fmt!(
            "    # stress: {} s, {} CPUs, {} workers, {} forced migrations, {} CPU offline/online cycles, {} operations, {} in interrupts, alloc fast/slow {}/{}, free fast/slow {}/{}, new slabs {}\n",
            seconds,
            ncpus,
            workers,
            migrations.load(Relaxed),
            hotplugs.load(Relaxed),
            shared.ops.load(Relaxed),
            shared.irq_ops.load(Relaxed),
            s.get(Stat::AllocFast),
            s.get(Stat::AllocSlow),
            s.get(Stat::FreeFast),
            s.get(Stat::FreeSlow),
            s.get(Stat::NewSlab)
        ));
        assert_eq!(shared.bad_tags.load(Relaxed), 0);
        assert_eq!(shared.failures.load(Relaxed), 0);
        assert!(shared.irq_ops.load(Relaxed) > 0);
        assert!(migrations.load(Relaxed) > 0);
        if ncpus > 1 {
            assert!(hotplugs.load(Relaxed) > 0);
        }
        if ncpus > 1 {
            assert!(s.get(Stat::FreeSlow) > 0);
        }
        // Every object came back: after a shrink no slab, hence no page, is left.
        cache.shrink();
        for nid in crate::topology::online_nodes() {
            assert_eq!(cache.node_counts(nid).0, 0);
        }
        let s = cache.stats();
        assert_eq!(s.get(Stat::NewSlab), s.get(Stat::SlabFreed));
        assert!(cache.destroy().is_ok());
    }
}
