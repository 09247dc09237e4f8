// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_hotplug`: CPUs going offline and coming back while caches are in
//! use. A CPU that goes offline gives its active slab of every cache back to the node
//! lists (`rslub_cpu_dead()`, as SLUB's `slub_cpu_dead()`).

use kernel::prelude::*;

#[kunit_tests(rslub_hotplug)]
mod tests {
    use crate::{
        common::{args, free, have_two_cpus},
        gfp::Gfp,
        inject::{install, Point},
        registry::Cache,
        shim::cpu_online,
        stats::Stat,
        test_shim::{cpu_down, cpu_up, defer, node_of, pin_current, skip, usleep, Thread},
    };
    use core::{
        ffi::c_void,
        ptr,
        sync::atomic::{AtomicBool, AtomicI32, Ordering::SeqCst},
    };
    use kernel::cpu::CpuId;

    fn cpu(n: u32) -> CpuId {
        CpuId::from_u32(n).expect("cpu")
    }

    /// Brings CPU `arg` back online at the end of the test, whatever happened.
    ///
    /// # Safety
    ///
    /// `arg` must be a CPU number (as an address without provenance).
    unsafe extern "C" fn online_again(arg: *mut c_void) {
        if let Some(c) = u32::try_from(arg.addr()).ok().and_then(CpuId::from_u32) {
            let _ = cpu_up(c);
        }
    }

    /// CPU 1's active slab, holding one allocated object and free ones, goes back to its
    /// node's partial list when CPU 1 goes offline; the object is freed from CPU 0
    /// meanwhile, and once CPU 1 is back it allocates and frees as before. Without the
    /// hotplug callback the slab stays CPU 1's, out of every other CPU's reach.
    #[test]
    fn an_offline_cpu_gives_its_active_slabs_back() {
        if !have_two_cpus() {
            return;
        }
        let c = Cache::create(&args(c"rslub_test_hotplug", 256)).expect("cache");
        // Every empty slab goes back at once: the flushed slab's place is observable.
        c.set_min_partial(0);
        pin_current(Some(cpu(1))).expect("migrate");
        let x = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        pin_current(Some(cpu(0))).expect("migrate");
        let nid = node_of(x);
        assert!(c.has_active_slab(cpu(1)));
        let (slabs, _, partial) = c.node_counts(nid);
        let before = c.stats();

        // SAFETY: `online_again` brings a CPU number back online; sound at any time.
        unsafe { defer(online_again, ptr::without_provenance_mut(1)) }.expect("cleanup");
        if cpu_down(cpu(1)).is_err() {
            skip(c"CPU 1 cannot go offline here (remove_cpu() failed)");
            free(&c, x);
            pin_current(None).expect("unpin");
            assert!(c.destroy().is_ok());
            return;
        }
        assert!(!c.has_active_slab(cpu(1)));
        assert_eq!(c.stats().since(&before).get(Stat::CpuSlabFlush), 1);
        // One object still allocated: the slab is partial, on its node.
        let (now_slabs, _, now_partial) = c.node_counts(nid);
        assert_eq!((now_slabs, now_partial), (slabs, partial + 1));
        // Freed from CPU 0 while CPU 1 is offline: the slab empties and goes back.
        free(&c, x);
        assert_eq!(c.node_counts(nid).0, slabs - 1);

        cpu_up(cpu(1)).expect("online");
        pin_current(Some(cpu(1))).expect("migrate");
        let y = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        free(&c, y);
        pin_current(None).expect("unpin");
        assert!(c.destroy().is_ok());
    }

    /// Destruction holds CPU hotplug off from its flush of every online CPU to its count
    /// of what is left: a CPU that went offline or came up in between would be flushed by
    /// neither that flush nor the walk over the CPUs that follows it. CPU 1 is asked to
    /// go offline at that instant (`ShutdownFlushed`); it must stay online until the
    /// destruction is done, and go offline right after.
    #[test]
    fn destruction_holds_cpu_hotplug_off() {
        if !have_two_cpus() {
            return;
        }
        pin_current(Some(cpu(0))).expect("migrate");
        let c = Cache::create(&args(c"rslub_test_hotplug_destroy", 256)).expect("cache");
        let id = c.id();
        let asked = AtomicBool::new(false);
        let offline_during = AtomicBool::new(false);
        let down = AtomicI32::new(1);
        let offline = || {
            for _ in 0..10_000 {
                if asked.load(SeqCst) {
                    break;
                }
                usleep(1000);
            }
            down.store(
                cpu_down(cpu(1)).map_or_else(|e| e.to_errno(), |()| 0),
                SeqCst,
            );
        };
        let hook = |cache: usize, p: Point| {
            if cache == id && p == Point::ShutdownFlushed {
                asked.store(true, SeqCst);
                // Long enough for the offlining to finish if nothing holds it off.
                for _ in 0..500 {
                    if !cpu_online(cpu(1)) {
                        offline_during.store(true, SeqCst);
                        break;
                    }
                    usleep(2000);
                }
            }
            false
        };
        // SAFETY: `online_again` brings a CPU number back online; sound at any time.
        unsafe { defer(online_again, ptr::without_provenance_mut(1)) }.expect("cleanup");
        {
            // SAFETY: `offline` lives until `t` is dropped, at the end of this block.
            let t = unsafe { Thread::start(&offline, cpu(0)) }.expect("thread");
            let _h = install(&hook).expect("hook");
            assert!(c.destroy().is_ok());
            drop(t);
        }
        pin_current(None).expect("unpin");
        if down.load(SeqCst) != 0 {
            skip(c"CPU 1 cannot go offline here (remove_cpu() failed)");
            return;
        }
        assert!(asked.load(SeqCst));
        assert!(!offline_during.load(SeqCst));
        cpu_up(cpu(1)).expect("online");
    }
}
