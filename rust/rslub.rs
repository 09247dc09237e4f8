// SPDX-License-Identifier: GPL-2.0

//! rslub: a kmem cache allocator in the classic SLUB design, as an out-of-tree module.
//!
//! # Design
//!
//! A cache hands out objects of one size, carved from *slabs*: blocks of `2^order` pages
//! from the page allocator on a chosen node ([`layout`] picks the order as SLUB's
//! `calculate_order()` does). A free object stores the address of the next free object
//! inside itself, at the cache's free pointer offset. A slab's metadata ([`slab::Slab`])
//! lives outside the slab, in a cache of the kernel's own that rslub never serves. The
//! slab's pages are one compound block, a slab page to the rest of the kernel (typed
//! `PGTY_slab`, its `struct slab` pointing at a description of the cache), whose head
//! page also points at the metadata, so an object's slab is found in O(1) ([`mm`]).
//!
//! Every CPU has an *active slab* per cache, and a private free list of it, in per-cpu
//! memory ([`cache::CpuSlab`]); the slab is *frozen* while a CPU holds it. Each CPU also
//! keeps a short *partial list* of slabs with free objects (classic SLUB's per-CPU
//! partial lists, `cpu_partial` objects' worth). Each node has a partial list of the
//! cache's slabs that have free objects and are no CPU's ([`node::Node`]). Full slabs are
//! on no list.
//!
//! ## Fast paths: no lock, no bus-locked atomic, interrupts left on
//!
//! Allocation pops the head of the CPU's free list; free pushes onto it when the object
//! lies in the CPU's active slab (its address and the slab's agree above the slab size).
//! Both take the address of one CPU's copy of that state (`raw_cpu_ptr()`), read its
//! transaction id first, then the list head (and the active slab's address or its node)
//! through the same pointer, and commit with a single `cmpxchg16b` on
//! the (freelist, tid) pair, `%gs` relative and without `lock` ([`arch`]). One
//! instruction cannot be split by an interrupt or a preemption; any change of the CPU's
//! state in between (an interrupt that allocated, a preemption, a migration to another
//! CPU) advances or differs in the tid — tids carry the CPU number in their low bits and
//! step by `NR_CPUS` rounded up to a power of two — so the exchange fails and the path
//! starts over. Because every value read comes from the CPU whose tid the commit checks,
//! a task that migrates between its reads cannot commit a decision made on another
//! CPU's state. That is SLUB's lockless fast path: correct under preemption, interrupts
//! and migration, with nothing to disable or restore.
//!
//! Why not the alternatives: an interrupt-off section (`local_irq_save`/`restore`)
//! costs about as many instructions, but holds interrupts off, `popf` is a multi-µop
//! instruction, and from a module it would be a call into C; a preempt-off section alone
//! is wrong, since interrupt and softirq handlers allocate too; a per-cpu local lock
//! (what SLUB's sheaves use) costs more instructions. The reasons are worked out in
//! `Documentation/design.rst`; the instructions of one allocation and one free are
//! measured by `make bench` (the `fast_alloc` and `fast_free` tables of
//! `Documentation/benchmarks.rst`, beside the kernel's).
//!
//! ## Slow paths
//!
//! They are called from task and softirq context (the node lock is a `spinlock_t`, as
//! SLUB's `list_lock`; `PREEMPT_RT` kernels are refused at load), and run with interrupts
//! off on the current CPU ([`shim::IrqDisabled`]) while they
//! touch that CPU's active slab or partial list, and with interrupts back on while a new
//! slab comes from the page allocator (which may sleep). An empty CPU free list is
//! refilled, in order, from objects other CPUs freed into the active slab, from the CPU's
//! partial list, from the local node's partial list (taking a few more slabs for the
//! CPU's list with the same lock), from the other nodes' lists (`get_any_partial`: under
//! the classic profile, the default, 6.12's walk through the zonelist; under the tuned
//! one, nearest first, each node once, none on one-node machines), then from a new slab.
//!
//! A free into a slab that is not the CPU's active slab pushes the object onto the slab's
//! shared free list with `lock cmpxchg16b` on (freelist, counters). A slab that was full
//! goes onto this CPU's partial list, without a lock (when that list is full, it goes
//! back to the node lists first); only when a slab on a node list becomes empty, or a
//! full one partial with the CPU lists off (`cpu_partial` 0), is the node lock taken. An
//! empty slab goes back to the page allocator only if its node keeps `min_partial`
//! partial slabs (counting the slab itself if it is on the list, as 6.12; the tuned
//! profile does not count it); for a `TYPESAFE_BY_RCU` cache its pages go
//! only after an RCU grace period ([`slab::Slab::free_after_grace_period`]).
//! Shrinking and destroying flush each CPU's active slab and partial list from a worker
//! on that CPU, on a `WQ_MEM_RECLAIM` workqueue of the module's own
//! ([`shim::run_on_each_cpu`]), so that memory reclaim may shrink. A
//! CPU that goes offline gives its active slab and partial list of every cache back the
//! same way, from a surviving CPU once it is dead (`rslub_cpu_dead()` in [`registry`],
//! as SLUB's `slub_cpu_dead()`).
//!
//! An explicit node is tried alone first, without sleeping; then the other nodes'
//! partial slabs come before a new slab elsewhere; a node without memory is no
//! constraint. Every allocation made for a caller passes on the caller's reclaim bits
//! ([`gfp`]). No free path touches the cache after the update that frees its object,
//! except to release a node lock that destruction takes before it counts, or to put a
//! slab that was full on the CPU's partial list (destruction counts every object of a
//! slab on no list as in use): a cache may be destroyed while its last objects are being
//! freed.
//!
//! ## Backing kernel caches
//!
//! [`back`] makes an rslub cache serve an existing kernel `kmem_cache`: `rust/back/*.c`
//! redirect the kmem_cache entry points with ftrace (`FTRACE_OPS_FL_IPMODIFY`, as
//! livepatch), allocations of backed caches to rslub, frees of rslub's objects (found
//! from their page, [`crate::mm::owner_of`]) to the rslub cache that owns them. See
//! `Documentation/backing.rst`.
//!
//! ## Source tree
//!
//! - `rust/cache/`: a cache ([`cache`]), one file per path over its state: allocation,
//!   free, partial lists, teardown, debug caches, sanitizers, counters;
//! - `rust/back/`: backing kernel caches ([`back`]) and its C side, `*.c` (the ftrace
//!   handlers, the replacements and the table of backed caches: `hook.h` lists them);
//! - the files of `rust/` itself: the pieces both use (slab metadata, layout, nodes,
//!   per-CPU memory, the page allocator, GFP bits, parameters, the registry of caches and
//!   its API, debugfs) and the thin modules over `bindings::` and the C shim (`shim.rs`
//!   with `shim.c`, `mm.rs`, `arch.rs`, `percpu.rs`).
//!
//! ## Lock order
//!
//! 0. a hooked `kmem_cache_destroy()`'s `rslub_destroy_lock` (`rust/back/replace.c`), then
//!    the backing mutex ([`back`]), then (creating or destroying the rslub cache of a
//!    backing) 1, or the table mutex of `rust/back/index.c`, or (registering and removing the
//!    hooks) ftrace's locks and the CPU hotplug lock, read; CPU hotplug holds that lock
//!    written while its callback takes 1;
//! 1. the registry mutex ([`registry`]), only to create, destroy or list caches, and to
//!    flush a dead CPU's active slabs;
//! 2. interrupts off on this CPU (the slow paths' hold on the CPU's active slab and
//!    partial list);
//! 3. a node's partial-list spinlock (always taken with interrupts off);
//! 4. a slab's (freelist, counters) unit: not a lock, a `lock cmpxchg16b`, taken under
//!    or without 3.
//!
//! Pages may go back to the page allocator under 3 (or an RCU callback be queued for
//! them). Flushing the CPUs (shrink, destroy)
//! takes `cpus_read_lock()` and then the shim's flush mutex, holding none of 1 to 3, and
//! waits for the workers, which take 2 and 3.
//!
//! No path holds two node locks, and none takes the registry mutex under a spinlock.

use kernel::prelude::*;

mod api;
mod arch;
mod back;
mod cache;
mod debug;
mod debugfs;
mod gfp;
mod inject;
mod layout;
mod load;
mod mm;
mod node;
mod params;
mod percpu;
mod registry;
mod sanitize;
mod shim;
mod slab;
mod stats;
mod topology;

use params::{Params, RawParams};

module! {
    type: Rslub,
    name: "rslub",
    authors: ["rslub developers"],
    description: "kmem cache allocator in the classic SLUB design",
    license: "GPL",
    params: {
        max_order: i32 {
            default: crate::params::RawParams::DEFAULT.max_order,
            description: "Highest page order of a slab (0..=MAX_PAGE_ORDER, default 3)",
        },
        min_order: i32 {
            default: crate::params::RawParams::DEFAULT.min_order,
            description: "Lowest page order of a slab (0..=max_order, default 0)",
        },
        min_objects: i32 {
            default: crate::params::RawParams::DEFAULT.min_objects,
            description: "Objects a slab should hold at least (0..=32767; 0 = 4 * (fls(CPUs) + 1))",
        },
        min_partial: i32 {
            default: crate::params::RawParams::DEFAULT.min_partial,
            description: "Partial slabs a node keeps (0..=1024; 0 = per cache, from the object size)",
        },
    },
}

extern "C" {
    /// The `back=` parameter (`rust/param.c`): the Rust `module!` macro has no strings.
    fn rslub_back_param() -> *const kernel::ffi::c_char;
    /// The `debug=` parameter (`rust/param.c`).
    fn rslub_debug_param() -> *const kernel::ffi::c_char;
    /// The `profile=` parameter (`rust/param.c`).
    fn rslub_profile_param() -> *const kernel::ffi::c_char;
}

/// The loaded module.
struct Rslub;

impl kernel::Module for Rslub {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let raw = RawParams {
            max_order: module_parameters::max_order.value(),
            min_order: module_parameters::min_order.value(),
            min_objects: module_parameters::min_objects.value(),
            min_partial: module_parameters::min_partial.value(),
        };
        let params = Params::new(raw).inspect_err(|e| pr_err!("{e}\n"))?;
        // SAFETY: `rslub_debug_param()` returns the module's string parameter, NUL
        // terminated, which lives (unchanged: it is read-only in sysfs) as long as the
        // module.
        let spec = unsafe { CStr::from_char_ptr(rslub_debug_param()) }.to_bytes();
        let spec = debug::Spec::parse(spec).map_err(|e| {
            pr_err!("{e}\n");
            EINVAL
        })?;
        // SAFETY: As for `rslub_debug_param()`.
        let name = unsafe { CStr::from_char_ptr(rslub_profile_param()) }.to_bytes();
        let profile = params::Profile::parse(name).map_err(|e| {
            pr_err!("{e}\n");
            EINVAL
        })?;
        let params = params.with_debug(spec).with_profile(profile);
        let topo = topology::Topology::read();
        // SAFETY: Called once, here, before anything else uses the crate.
        unsafe { load::init(params, c"rslub") }?;
        // SAFETY: `rslub_back_param()` returns the module's string parameter, NUL
        // terminated, which lives as long as the module.
        let names = unsafe { CStr::from_char_ptr(rslub_back_param()) };
        if let Err(e) = back::back_all(names) {
            pr_err!("invalid parameter back={names}: see the message above\n");
            load::exit();
            // An unknown cache is `ENOENT` to the `back` file, but a bad parameter to the
            // load: insmod prints `ENOENT` as "Unknown symbol in module".
            return Err(if e == ENOENT { EINVAL } else { e });
        }
        pr_info!("loaded: {}\n", params.effective(topo.scaling_cpus()));
        pr_info!(
            "machine: {} CPUs ({} possible), {} NUMA nodes online\n",
            topo.present_cpus,
            topo.possible_cpus,
            topo.online_nodes,
        );
        Ok(Self)
    }
}

impl Drop for Rslub {
    fn drop(&mut self) {
        load::exit();
    }
}
