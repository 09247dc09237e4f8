// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_race`: the interleavings the lock-free paths must survive, forced
//! at the worst instant through the injection points of `rust/inject.rs` rather than
//! hoped for under load. Each test names the invariant it attacks.

use kernel::prelude::*;

#[kunit_tests(rslub_race)]
mod tests {
    use crate::{
        cache::{CacheCore, NO_NODE},
        common::{alloc_n, args, free, free_all, have_two_cpus, have_two_nodes},
        gfp::Gfp,
        inject::{self, install, Point},
        registry::Cache,
        sanitize, slab,
        stats::Stat,
        test_shim::{
            cpu_of_node, in_reclaim_scope, mdelay, msleep, node_of, pin_current, skip,
            tainted_warn, Thread, Tick,
        },
    };
    use core::{
        ptr::NonNull,
        sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering::SeqCst},
    };
    use kernel::cpu::CpuId;

    fn cpu(n: u32) -> CpuId {
        CpuId::from_u32(n).expect("cpu")
    }

    /// Moves the current task to `to` (and keeps it there).
    fn move_to(to: CpuId) {
        pin_current(Some(to)).expect("migrate");
    }

    /// KASAN's quarantine (rust/sanitize.rs) takes its lock from softirqs (skb frees into
    /// a backed cache) and from process context with interrupts off: held with them on for
    /// even an instant, a softirq freeing into it on that CPU spins for good. An object
    /// freed from a timer's softirq, then the quarantine's count read in process context:
    /// lockdep has seen both, and reports ("inconsistent lock state", which fails the run)
    /// the count's guard once dropped after interrupts came back on (debug kernel).
    #[test]
    fn the_quarantine_lock_is_never_held_with_interrupts_on() {
        if !sanitize::KASAN {
            return skip(c"no KASAN in this kernel: no quarantine");
        }
        inject::set_quarantine(true);
        let c = Cache::create(&args(c"rslub_test_quarantine_lock", 64)).expect("cache");
        inject::set_quarantine(false);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        let pending = AtomicUsize::new(p);
        let softirq = || {
            if let Some(o) = NonNull::new(pending.swap(0, SeqCst) as *mut u8) {
                // SAFETY: `p`, allocated above and freed once, here.
                unsafe { c.free(o) };
            }
        };
        {
            // SAFETY: `softirq` outlives the timer, dropped at the end of this block.
            let _t = unsafe { Tick::start(&softirq, cpu(0)) }.expect("timer");
            while pending.load(SeqCst) != 0 {
                msleep(1);
            }
        }
        assert_eq!(c.quarantined(), 1);
        c.shrink();
        assert_eq!(c.quarantined(), 0);
        c.destroy().expect("destroy");
    }

    /// The free fast path reads the transaction id on one CPU; the task then migrates,
    /// reads the active slab of another CPU (the object's slab), and comes back before
    /// committing. Every value the commit relies on must come from the CPU whose
    /// transaction id it checks: the object must not land on the first CPU's private
    /// list, which holds objects of that CPU's active slab only.
    #[test]
    fn free_fast_path_reads_one_cpu_only() {
        if !have_two_cpus() {
            return;
        }
        let c = Cache::create(&args(c"rslub_test_race_free", 64)).expect("cache");
        let (a, b) = (cpu(0), cpu(1));
        // CPU B's active slab holds `x`; CPU A's active slab is another slab.
        move_to(b);
        let x = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        move_to(a);
        let y = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        // SAFETY: live objects of `c`.
        assert!(unsafe { slab::slab_of(x as *const u8) != slab::slab_of(y as *const u8) });

        let step = AtomicU32::new(0);
        let moved_to = AtomicU32::new(u32::MAX);
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache == id {
                if p == Point::FreeTidRead && step.compare_exchange(0, 1, SeqCst, SeqCst).is_ok() {
                    move_to(b);
                    moved_to.store(CpuId::current().as_u32(), SeqCst);
                } else if p == Point::FreeSlabRead
                    && step.compare_exchange(1, 2, SeqCst, SeqCst).is_ok()
                {
                    move_to(a);
                }
            }
            false
        };
        let before = c.stats();
        {
            let _h = install(&hook).expect("hook");
            free(&c, x);
        }
        // Whatever the path did after the first read, CPU A's list must hold only
        // objects of CPU A's slab.
        let checked = c.check_this_cpu();
        let d = c.stats().since(&before);
        pin_current(None).expect("unpin");
        // The interleaving happened: the transaction id was read on A, and the task ran
        // on B before the active slab was read.
        assert_eq!(moved_to.load(SeqCst), b.as_u32());
        // The slab compared was A's (read through A's copy), which does not hold `x`:
        // the free left the fast path before `FreeSlabRead`. Step 2 is reached only if
        // the slab is read from another CPU's copy than the transaction id.
        assert_eq!(step.load(SeqCst), 1);
        if checked.is_err() {
            // The cache is corrupt: destroying it would free a slab with a live object.
            core::mem::forget(c);
            assert_eq!(checked, Ok(0));
            return;
        }
        // The free was a remote one: into CPU B's slab, through the slab's shared list.
        assert_eq!(d.get(Stat::FreeSlow), 1);
        assert_eq!(d.get(Stat::FreeFast), 0);
        free(&c, y);
        assert!(c.destroy().is_ok());
    }

    /// `alloc_node`'s fast path reads the transaction id and the list head on one CPU,
    /// migrates, reads another CPU's active slab node (the node asked for), and comes
    /// back before committing: it must not hand out an object of the first CPU's slab,
    /// which is on another node.
    #[test]
    fn alloc_node_fast_path_reads_one_cpu_only() {
        if !have_two_nodes() {
            return;
        }
        let (Some(a), Some(b)) = (cpu_of_node(0), cpu_of_node(1)) else {
            skip(c"needs a CPU on each of nodes 0 and 1");
            return;
        };
        let c = Cache::create(&args(c"rslub_test_race_node", 128)).expect("cache");
        move_to(b);
        let on_b = c.alloc_node(Gfp::KERNEL, 1).expect("object").as_ptr() as usize;
        move_to(a);
        let on_a = c.alloc_node(Gfp::KERNEL, 0).expect("object").as_ptr() as usize;
        assert_eq!(node_of(on_b), 1);
        assert_eq!(node_of(on_a), 0);

        let step = AtomicU32::new(0);
        let moved_to = AtomicU32::new(u32::MAX);
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache == id {
                if p == Point::AllocHeadRead && step.compare_exchange(0, 1, SeqCst, SeqCst).is_ok()
                {
                    move_to(b);
                    moved_to.store(CpuId::current().as_u32(), SeqCst);
                } else if p == Point::AllocNodeRead
                    && step.compare_exchange(1, 2, SeqCst, SeqCst).is_ok()
                {
                    move_to(a);
                }
            }
            false
        };
        let p = {
            let _h = install(&hook).expect("hook");
            c.alloc_node(Gfp::KERNEL, 1).expect("object").as_ptr() as usize
        };
        pin_current(None).expect("unpin");
        // The interleaving happened: the list head was read on A, and the task ran on B
        // before the node was read.
        assert_eq!(moved_to.load(SeqCst), b.as_u32());
        // The node compared was A's slab's (A's copy), not the one asked for: the fast
        // path left before `AllocNodeRead`. Step 2 is reached only if the node is read
        // from another CPU's copy than the list head.
        assert_eq!(step.load(SeqCst), 1);
        assert_eq!(node_of(p), 1);
        free_all(&c, &[on_b, on_a, p]);
        assert!(c.destroy().is_ok());
    }

    /// A CPU frees the last object of a slab while the cache is being destroyed (the
    /// contract allows freeing objects that are still allocated). Destruction must not
    /// count that slab's objects between the slab leaving the partial list and its pages
    /// going back: it waits for the free, sees no live object, and frees everything.
    #[test]
    fn destroy_waits_for_a_free_emptying_a_slab() {
        if !have_two_cpus() {
            return;
        }
        let c = Cache::create(&args(c"rslub_test_race_destroy", 256)).expect("cache");
        c.set_min_partial(0);
        let per_slab = c.layout().objects as usize;
        // A full slab S on no list, then one object of the next slab (CPU 0's active).
        move_to(cpu(0));
        let mut objs = alloc_n(&c, per_slab + 1, NO_NODE);
        let last = objs.pop().expect("one");
        free(&c, last);
        // Free all of S but `x` from CPU 1: S is partial, with one live object.
        let x = objs.pop().expect("one");
        move_to(cpu(1));
        free_all(&c, &objs);
        move_to(cpu(0));

        let go = AtomicBool::new(false);
        let at_discard = AtomicBool::new(false);
        let done = AtomicBool::new(false);
        let core = c.id();
        let freer = || {
            while !go.load(SeqCst) {
                msleep(1);
            }
            // SAFETY: `core` is the cache under destruction; `x` is still allocated.
            let c = unsafe { &*(core as *const CacheCore) };
            free(c, x);
            done.store(true, SeqCst);
        };
        let id = c.id();
        let hook = |cache: usize, p: Point| {
            if cache != id {
                return false;
            }
            match p {
                Point::ShutdownFlushed => {
                    // Every CPU was flushed; now let CPU 1 free `x`, and go on counting
                    // once it is about to give S's pages back.
                    go.store(true, SeqCst);
                    let mut waited = 0;
                    while !at_discard.load(SeqCst) && waited < 5000 {
                        msleep(1);
                        waited += 1;
                    }
                }
                Point::FreeDiscard => {
                    at_discard.store(true, SeqCst);
                    // Hold the free here: destruction runs meanwhile on CPU 0.
                    mdelay(200);
                }
                _ => {}
            }
            false
        };
        let r = {
            let _h = install(&hook).expect("hook");
            // SAFETY: `freer` outlives the thread, joined at the end of this block.
            let t = unsafe { Thread::start(&freer, cpu(1)) }.expect("thread");
            let r = c.destroy().map_err(|l| l.0);
            drop(t);
            r
        };
        pin_current(None).expect("unpin");
        assert!(done.load(SeqCst));
        assert!(at_discard.load(SeqCst));
        assert_eq!(r, Ok(()));
    }

    /// The node-lock statistics: every acquisition is counted, and one that finds the lock
    /// held by another CPU is counted as a wait. CPU 1 holds node 0's lock (giving an
    /// emptied slab back, held there by the injection point) while CPU 0 frees into a
    /// full slab of node 0, which needs that lock.
    #[test]
    fn node_lock_acquisitions_and_waits_are_counted() {
        if !have_two_cpus() {
            return;
        }
        let c = Cache::create(&args(c"rslub_test_race_lock", 256)).expect("cache");
        // The node lists' rules: frees put slabs there, not on this CPU's list.
        c.set_cpu_partial(0);
        c.set_min_partial(0);
        let per_slab = c.layout().objects as usize;
        // Full slabs S1, S2, S3 on no list; CPU 0's active slab holds one more object.
        move_to(cpu(0));
        let objs = alloc_n(&c, 3 * per_slab + 1, NO_NODE);
        let (s1, rest) = objs.split_at(per_slab);
        let (s2, rest) = rest.split_at(per_slab);
        let (s3, last) = rest.split_at(per_slab);
        // Uncontended: a free into full S2 makes it partial, under the lock.
        let before = c.stats();
        free(&c, s2[0]);
        let d = c.stats().since(&before);
        assert_eq!(d.get(Stat::NodeLock), 1);
        assert_eq!(d.get(Stat::NodeLockContended), 0);
        assert_eq!(d.get(Stat::NodeLockWaitNs), 0);

        let holding = AtomicBool::new(false);
        let id = c.id();
        let contended = c.stat_on(cpu(0), Stat::NodeLockContended);
        let hook = |cache: usize, p: Point| {
            if cache == id && p == Point::FreeDiscard && !holding.swap(true, SeqCst) {
                // Node 0's lock is held, interrupts off: keep it until CPU 0 has found it
                // held (it counts that before it waits; no fixed delay, which a vCPU the
                // host does not run for a while would outlast), and a little longer.
                let mut waited = 0;
                while c.stat_on(cpu(0), Stat::NodeLockContended) == contended && waited < 5000 {
                    mdelay(1);
                    waited += 1;
                }
                mdelay(10);
            }
            false
        };
        let core = c.id();
        let emptier = || {
            // SAFETY: `core` is the live cache; S1's objects are allocated.
            let c = unsafe { &*(core as *const CacheCore) };
            free_all(c, s1);
        };
        let before = c.stats();
        {
            let _h = install(&hook).expect("hook");
            // SAFETY: `emptier` outlives the thread, joined at the end of this block.
            let t = unsafe { Thread::start(&emptier, cpu(1)) }.expect("thread");
            let mut waited = 0;
            while !holding.load(SeqCst) && waited < 5000 {
                msleep(1);
                waited += 1;
            }
            assert!(holding.load(SeqCst));
            free(&c, s3[0]);
            drop(t);
        }
        pin_current(None).expect("unpin");
        let d = c.stats().since(&before);
        // CPU 1: S1 full to partial, partial to empty; CPU 0: S3 full to partial.
        assert_eq!(d.get(Stat::NodeLock), 3);
        assert_eq!(d.get(Stat::NodeLockContended), 1);
        // The wait was timed (how long is the scheduler's business, not this test's).
        assert!(d.get(Stat::NodeLockWaitNs) > 0);
        free_all(&c, &s2[1..]);
        free_all(&c, &s3[1..]);
        free(&c, last[0]);
        assert!(c.destroy().is_ok());
    }

    /// Shrinking (and destroying) flush the CPUs' active slabs from workers. Called from
    /// memory reclaim (`PF_MEMALLOC`), the wait for those workers must be on a
    /// `WQ_MEM_RECLAIM` workqueue, or the workqueue code warns of a possible deadlock.
    #[test]
    fn shrink_from_reclaim_waits_on_a_reclaim_safe_workqueue() {
        if tainted_warn() {
            skip(c"the kernel is already tainted by a WARN: a new one cannot be told apart");
            return;
        }
        let c = Cache::create(&args(c"rslub_test_reclaim", 512)).expect("cache");
        let p = c.alloc(Gfp::KERNEL).expect("object");
        in_reclaim_scope(|| c.shrink());
        // SAFETY: allocated above, freed once.
        unsafe { c.free(p) };
        in_reclaim_scope(|| c.shrink());
        assert!(!tainted_warn());
        assert!(c.destroy().is_ok());
    }
}
