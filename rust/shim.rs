// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the C shim (`rust/shim.c`).
//!
//! The kernel exposes some of what rslub needs only as inline functions or macros,
//! which bindgen cannot turn into callable Rust. The shim gives each of them a real
//! symbol; this module declares those symbols and wraps each in a safe function. No
//! other module calls the shim directly. None of these is on a fast path.

use core::{ffi::c_void, ptr, ptr::NonNull};
use kernel::{bindings, str::CStr, str::CStrExt};

mod ffi {
    use core::ffi::c_void;

    extern "C" {
        pub(super) fn rslub_num_present_cpus() -> u32;
        pub(super) fn rslub_num_online_cpus() -> u32;
        pub(super) fn rslub_num_online_nodes() -> u32;
        pub(super) fn rslub_cpu_possible(cpu: i32) -> bool;
        pub(super) fn rslub_cpu_online(cpu: i32) -> bool;
        pub(super) fn rslub_node_online(node: i32) -> bool;
        pub(super) fn rslub_node_has_memory(node: i32) -> bool;
        pub(super) fn rslub_numa_mem_id() -> i32;
        pub(super) fn rslub_cache_line_size() -> u32;
        pub(super) fn rslub_init_on_alloc() -> bool;
        pub(super) fn rslub_init_on_free() -> bool;
        pub(super) fn rslub_debug_pagealloc_enabled() -> bool;
        pub(super) fn rslub_page_address(page: *mut c_void) -> *mut c_void;
        pub(super) fn rslub_page_freeze(page: *mut c_void) -> bool;
        pub(super) fn rslub_page_unfreeze(page: *mut c_void);
        pub(super) fn rslub_page_to_nid(page: *const c_void) -> i32;
        pub(super) fn rslub_page_is_pfmemalloc(page: *const c_void) -> bool;
        pub(super) fn rslub_pfmemalloc_allowed(gfp: u32) -> bool;
        pub(super) fn rslub_irq_save() -> usize;
        pub(super) fn rslub_irq_restore(flags: usize);
        pub(super) fn rslub_kasan_unpoison(addr: *const c_void, size: usize);
        pub(super) fn rslub_kasan_poison(addr: *const c_void, size: usize, freed: bool);
        pub(super) fn rslub_kasan_poisoned(addr: *const c_void) -> bool;
        pub(super) fn rslub_kmemleak_alloc(addr: *const c_void, size: usize, gfp: u32);
        pub(super) fn rslub_kmemleak_free(addr: *const c_void);
        pub(super) fn rslub_kmemleak_ignore(addr: *const c_void);
        pub(super) fn rslub_kmemleak_not_leak(addr: *const c_void);
        pub(super) fn rslub_check_no_locks_freed(addr: *const c_void, size: usize);
        pub(super) fn rslub_kmemleak_ignore_percpu(addr: *const c_void);
        pub(super) fn rslub_zonelist_nodes(nid: i32, out: *mut u16, max: i32) -> i32;
        pub(super) fn rslub_mempolicy_slab_node() -> i32;
        pub(super) fn rslub_account_slab(
            page: *mut c_void,
            order: u32,
            reclaimable: bool,
            sign: i32,
        );
        pub(super) fn rslub_cpuset_node_allowed(nid: i32, gfp: u32) -> bool;
        pub(super) fn rslub_mems_allowed_begin() -> u32;
        pub(super) fn rslub_mems_allowed_retry(seq: u32) -> bool;
        pub(super) fn rslub_get_cycles() -> u64;
        pub(super) fn rslub_alloc_slab_pages(node: i32, gfp: u32, order: u32) -> *mut c_void;
        pub(super) fn rslub_shim_init(meta_size: u32, meta_align: u32) -> i32;
        pub(super) fn rslub_meta_alloc(gfp: u32, node: i32) -> *mut c_void;
        pub(super) fn rslub_meta_free(p: *mut c_void);
        pub(super) fn rslub_shim_exit();
        pub(super) fn rslub_hotplug_init() -> i32;
        pub(super) fn rslub_hotplug_exit();
        pub(super) fn rslub_run_on_each_cpu(f: unsafe extern "C" fn(*mut c_void), arg: *mut c_void);
        pub(super) fn rslub_shrinker_init(name: *const kernel::ffi::c_char) -> i32;
        pub(super) fn rslub_shrinker_exit();
        pub(super) fn rslub_shrinker_registered() -> bool;
        pub(super) fn rslub_track_save(
            addrs: *mut usize,
            n: u32,
            cpu: *mut u32,
            pid: *mut u32,
            when: *mut usize,
        );
        pub(super) fn rslub_track_print(
            what: *const kernel::ffi::c_char,
            addrs: *const usize,
            n: u32,
            cpu: u32,
            pid: u32,
            when: usize,
        );
    }
}

/// Number of present CPUs (`num_present_cpus()`).
pub(crate) fn num_present_cpus() -> u32 {
    // SAFETY: `num_present_cpus()` only reads the present CPU mask; it has no precondition.
    unsafe { ffi::rslub_num_present_cpus() }
}

/// Number of online CPUs (`num_online_cpus()`).
pub(crate) fn num_online_cpus() -> u32 {
    // SAFETY: `num_online_cpus()` only reads the online CPU count; it has no precondition.
    unsafe { ffi::rslub_num_online_cpus() }
}

/// Number of online NUMA nodes (`num_online_nodes()`).
pub(crate) fn num_online_nodes() -> u32 {
    // SAFETY: `num_online_nodes()` only reads the online node count; it has no precondition.
    unsafe { ffi::rslub_num_online_nodes() }
}

/// Whether `cpu` is possible (`cpu_possible()`).
pub(crate) fn cpu_possible(cpu: kernel::cpu::CpuId) -> bool {
    // SAFETY: `CpuId` is below `nr_cpu_ids` by its type invariant.
    unsafe { ffi::rslub_cpu_possible(cpu.as_u32() as i32) }
}

/// Whether `cpu` is online (`cpu_online()`).
pub(crate) fn cpu_online(cpu: kernel::cpu::CpuId) -> bool {
    // SAFETY: `CpuId` is below `nr_cpu_ids` by its type invariant.
    unsafe { ffi::rslub_cpu_online(cpu.as_u32() as i32) }
}

/// Whether `node` is a valid, online node id.
pub(crate) fn node_online(node: i32) -> bool {
    // SAFETY: The wrapper range-checks `node` before `node_online()`.
    unsafe { ffi::rslub_node_online(node) }
}

/// Whether `node` is a valid node id with memory slabs can use (`N_NORMAL_MEMORY`). A
/// node can be online, with CPUs, and have none.
pub(crate) fn node_has_memory(node: i32) -> bool {
    // SAFETY: The wrapper range-checks `node` before `node_state()`.
    unsafe { ffi::rslub_node_has_memory(node) }
}

/// The node a remote walk starts from: the task's memory policy's, in task context
/// (6.12's `mempolicy_slab_node()`), else [`numa_mem_id`].
pub(crate) fn mempolicy_slab_node() -> i32 {
    // SAFETY: Reads the current task's policy, which only the task itself replaces; no
    // precondition.
    unsafe { ffi::rslub_mempolicy_slab_node() }
}

/// Whether the current context may take slabs of node `nid` for `gfp` (6.12's
/// `cpuset_zone_allowed()`, as far as a module can follow it: `rust/shim.c`).
pub(crate) fn cpuset_node_allowed(nid: i32, gfp: u32) -> bool {
    // SAFETY: Reads the current task's `mems_allowed` (a node bit; `nid` is a node id of
    // the caller's lists, below `MAX_NUMNODES`); no precondition.
    unsafe { ffi::rslub_cpuset_node_allowed(nid, gfp) }
}

/// `read_mems_allowed_begin()`: the current task's cpuset sequence count.
pub(crate) fn mems_allowed_begin() -> u32 {
    // SAFETY: Reads the current task's sequence count; no precondition.
    unsafe { ffi::rslub_mems_allowed_begin() }
}

/// `read_mems_allowed_retry()`: whether the task's cpuset changed since `seq`.
pub(crate) fn mems_allowed_retry(seq: u32) -> bool {
    // SAFETY: As for [`mems_allowed_begin`].
    unsafe { ffi::rslub_mems_allowed_retry(seq) }
}

/// Adds (`sign` 1) or removes (-1) the `2^order` pages at `page` to or from their node's
/// slab statistics, reclaimable or not (6.12's `account_slab()`).
pub(crate) fn account_slab(
    page: NonNull<bindings::page>,
    order: u32,
    reclaimable: bool,
    sign: i32,
) {
    // SAFETY: `page` is a valid `struct page` (a non-null pointer to a block the caller
    // holds); the node's counters take any value.
    unsafe { ffi::rslub_account_slab(page.as_ptr().cast(), order, reclaimable, sign) }
}

/// The time-stamp counter (`get_cycles()`).
pub(crate) fn get_cycles() -> u64 {
    // SAFETY: Reads the TSC; no precondition.
    unsafe { ffi::rslub_get_cycles() }
}

/// `2^order` pages for a slab as 6.12 takes them (`rust/shim.c`): on `node`, or, for
/// `NUMA_NO_NODE`, where the task's memory policy puts them. Null on failure.
pub(crate) fn alloc_slab_pages(node: i32, gfp: u32, order: u32) -> *mut kernel::bindings::page {
    // SAFETY: Both page allocator calls accept any GFP mask and any order up to
    // `MAX_PAGE_ORDER` (the caller's layout guarantees it), and any node id that
    // `__alloc_pages_node()` accepts; `SlabPages::alloc` passes an online node or
    // `NUMA_NO_NODE`.
    unsafe { ffi::rslub_alloc_slab_pages(node, gfp, order) }.cast()
}

/// The nearest node with memory to the current CPU (`numa_mem_id()`).
pub(crate) fn numa_mem_id() -> i32 {
    // SAFETY: Reads a per-cpu variable of the current CPU; no precondition.
    unsafe { ffi::rslub_numa_mem_id() }
}

/// The hardware cache line size (`cache_line_size()`).
pub(crate) fn cache_line_size() -> u32 {
    // SAFETY: Reads boot CPU data; no precondition.
    unsafe { ffi::rslub_cache_line_size() }
}

/// Whether every allocation is zeroed (`init_on_alloc=1`, `want_init_on_alloc()`).
pub(crate) fn init_on_alloc() -> bool {
    // SAFETY: Reads a static key; no precondition.
    unsafe { ffi::rslub_init_on_alloc() }
}

/// Whether every free is zeroed (`init_on_free=1`, `want_init_on_free()`).
pub(crate) fn init_on_free() -> bool {
    // SAFETY: Reads a static key; no precondition.
    unsafe { ffi::rslub_init_on_free() }
}

/// Whether freed pages are unmapped from the direct map (`debug_pagealloc_enabled()`).
pub(crate) fn debug_pagealloc_enabled() -> bool {
    // SAFETY: Reads a static key; no precondition.
    unsafe { ffi::rslub_debug_pagealloc_enabled() }
}

/// Direct-map address of `page` (`page_address()`).
pub(crate) fn page_address(page: NonNull<bindings::page>) -> NonNull<u8> {
    // SAFETY: `page` is a valid `struct page`; on x86-64 every page is in the direct map,
    // so the address is never null.
    unsafe { NonNull::new_unchecked(ffi::rslub_page_address(page.as_ptr().cast()).cast()) }
}

/// NUMA node of `page` (`page_to_nid()`).
pub(crate) fn page_to_nid(page: NonNull<bindings::page>) -> u32 {
    // SAFETY: `page` is a valid `struct page`.
    let nid = unsafe { ffi::rslub_page_to_nid(page.as_ptr().cast()) };
    nid.unsigned_abs()
}

/// Takes the count of `page` from 1 to 0 (`page_ref_freeze(page, 1)`): false if a
/// speculative reference is held meanwhile.
///
/// # Safety
///
/// `page` must be the first page of a block the caller allocated and has not freed: its
/// count is 1, plus any speculative references.
pub(crate) unsafe fn page_freeze(page: NonNull<bindings::page>) -> bool {
    // SAFETY: `page` is a valid `struct page`, the caller's.
    unsafe { ffi::rslub_page_freeze(page.as_ptr().cast()) }
}

/// Gives `page`, frozen by [`page_freeze`], its reference back (added to any stray one,
/// with a warning).
///
/// # Safety
///
/// `page` must be frozen by [`page_freeze`] and not unfrozen since.
pub(crate) unsafe fn page_unfreeze(page: NonNull<bindings::page>) {
    // SAFETY: `page` is a valid `struct page` with the count 0, the caller's.
    unsafe { ffi::rslub_page_unfreeze(page.as_ptr().cast()) }
}

/// Whether `page` came from the emergency reserves (`page_is_pfmemalloc()`).
pub(crate) fn page_is_pfmemalloc(page: NonNull<bindings::page>) -> bool {
    // SAFETY: `page` is a valid `struct page`.
    unsafe { ffi::rslub_page_is_pfmemalloc(page.as_ptr().cast()) }
}

/// Whether an allocation with `gfp`, in the current context, may use the emergency
/// reserves (`gfp_pfmemalloc_allowed()`).
pub(crate) fn pfmemalloc_allowed(gfp: u32) -> bool {
    // SAFETY: Reads the current task's flags and the context; any context.
    unsafe { ffi::rslub_pfmemalloc_allowed(gfp) }
}

/// Makes the `size` bytes at `addr` accessible in KASAN's shadow (generic KASAN's
/// `kasan_unpoison()`, which is not exported): the granules before the last in full, the
/// last up to `addr + size`. Nothing without `CONFIG_KASAN_GENERIC`.
///
/// # Safety
///
/// `addr` must be a direct-map address aligned to KASAN's granule (8 bytes), and the
/// `size` bytes rounded up to the granule must lie in one slab of rslub's.
pub(crate) unsafe fn kasan_unpoison(addr: *const u8, size: usize) {
    // SAFETY: The caller guarantees that the shadow of the range exists (direct map).
    unsafe { ffi::rslub_kasan_unpoison(addr.cast(), size) }
}

/// Marks the `size` bytes at `addr` (rounded up to the granule) inaccessible in KASAN's
/// shadow: as a freed object (`KASAN_SLAB_FREE`) if `freed`, else as a slab's red zone
/// (`KASAN_SLAB_REDZONE`). Nothing without `CONFIG_KASAN_GENERIC`.
///
/// # Safety
///
/// As for [`kasan_unpoison`].
pub(crate) unsafe fn kasan_poison(addr: *const u8, size: usize, freed: bool) {
    // SAFETY: As above.
    unsafe { ffi::rslub_kasan_poison(addr.cast(), size, freed) }
}

/// Whether KASAN's shadow marks the granule at `addr` inaccessible (false without
/// `CONFIG_KASAN_GENERIC`).
///
/// # Safety
///
/// `addr` must be a direct-map address.
pub(crate) unsafe fn kasan_poisoned(addr: *const u8) -> bool {
    // SAFETY: The direct map has a shadow (caller).
    unsafe { ffi::rslub_kasan_poisoned(addr.cast()) }
}

/// Tells kmemleak that `size` bytes at `addr` were allocated with `gfp` (kmemleak uses
/// `gfp` for its own record), to be reported if nothing refers to them
/// (`kmemleak_alloc()`; nothing without `CONFIG_DEBUG_KMEMLEAK`).
///
/// # Safety
///
/// The range must stay mapped until [`kmemleak_free`] of `addr`: kmemleak scans it for
/// pointers until then.
pub(crate) unsafe fn kmemleak_alloc(addr: *const u8, size: usize, gfp: u32) {
    // SAFETY: kmemleak records the range, which stays mapped while recorded (caller).
    unsafe { ffi::rslub_kmemleak_alloc(addr.cast(), size, gfp) }
}

/// Tells kmemleak that the object at `addr` is freed (`kmemleak_free()`).
pub(crate) fn kmemleak_free(addr: *const u8) {
    // SAFETY: kmemleak looks `addr` up among its records (and warns if it has none).
    unsafe { ffi::rslub_kmemleak_free(addr.cast()) }
}

/// Lockdep's check that no lock the current task holds lies in the `size` bytes at
/// `addr`, about to be freed (`debug_check_no_locks_freed()`, as SLUB's free hook; nothing
/// without `CONFIG_LOCKDEP`).
pub(crate) fn check_no_locks_freed(addr: *const u8, size: usize) {
    // SAFETY: Lockdep compares the range with the held locks' addresses; it reads nothing
    // in it.
    unsafe { ffi::rslub_check_no_locks_freed(addr.cast(), size) }
}

/// Tells kmemleak to neither report nor scan the allocation at `addr` (kmalloc'ed; per-cpu
/// with `percpu`): rslub's metadata, which holds the address of each slab's first object
/// and would otherwise count as a reference to it (`kmemleak_ignore()`,
/// `kmemleak_ignore_percpu()`; nothing without `CONFIG_DEBUG_KMEMLEAK`).
pub(crate) fn kmemleak_ignore(addr: *const u8, percpu: bool) {
    // SAFETY: kmemleak looks `addr` up among its records and marks it (it warns if it
    // has none).
    unsafe {
        if percpu {
            ffi::rslub_kmemleak_ignore_percpu(addr.cast())
        } else {
            ffi::rslub_kmemleak_ignore(addr.cast())
        }
    }
}

/// Tells kmemleak that the allocation at `addr` (kmalloc'ed) is kept on purpose: never
/// reported, still scanned, so what it points to is referenced (`kmemleak_not_leak()`;
/// nothing without `CONFIG_DEBUG_KMEMLEAK`).
pub(crate) fn kmemleak_not_leak(addr: *const u8) {
    // SAFETY: kmemleak looks `addr` up among its records and marks it (it warns if it
    // has none).
    unsafe { ffi::rslub_kmemleak_not_leak(addr.cast()) }
}

/// Interrupts disabled on the current CPU, restored on drop (`local_irq_save()`).
///
/// The slow paths run under it: while it lives, nothing else runs on this CPU, so the
/// CPU's slab state cannot change underneath.
pub(crate) struct IrqDisabled {
    flags: usize,
    _not_send: core::marker::PhantomData<*mut ()>,
}

impl IrqDisabled {
    /// Disables interrupts on the current CPU.
    pub(crate) fn new() -> Self {
        Self {
            // SAFETY: `local_irq_save()` has no precondition.
            flags: unsafe { ffi::rslub_irq_save() },
            _not_send: core::marker::PhantomData,
        }
    }
}

impl Drop for IrqDisabled {
    fn drop(&mut self) {
        // SAFETY: `flags` came from `local_irq_save()` on this CPU (the type is not `Send`,
        // and with interrupts off the task cannot migrate).
        unsafe { ffi::rslub_irq_restore(self.flags) };
    }
}

/// Sleeps `ms` milliseconds (`msleep()`). May only be called where sleeping is allowed.
pub(crate) fn msleep(ms: u32) {
    // SAFETY: `msleep()` has no precondition beyond a context that may sleep (caller).
    unsafe { bindings::msleep(ms) };
}

/// Waits until every RCU callback queued so far has run (`rcu_barrier()`). May only be
/// called where sleeping is allowed.
pub(crate) fn rcu_barrier() {
    // SAFETY: `rcu_barrier()` has no precondition beyond a context that may sleep
    // (caller).
    unsafe { bindings::rcu_barrier() };
}

/// Prints the current stack to the kernel log (`dump_stack()`), after a report.
pub(crate) fn dump_stack() {
    // SAFETY: `dump_stack()` may be called from any context.
    unsafe { bindings::dump_stack() };
}

/// A random 64-bit value from the kernel's CRNG (`get_random_u64()`).
pub(crate) fn random_u64() -> u64 {
    // SAFETY: `get_random_u64()` may be called from any context once the CRNG is up, as
    // it is after boot.
    unsafe { bindings::get_random_u64() }
}

/// A random 32-bit value from the kernel's CRNG (`get_random_u32()`): per-CPU batched,
/// a few dozen instructions per call.
pub(crate) fn random_u32() -> u32 {
    // SAFETY: `get_random_u32()` may be called from any context but NMI once the CRNG is
    // up, as it is after boot; rslub's slow paths do not run in NMI.
    unsafe { bindings::get_random_u32() }
}

/// The symbol at `addr`, as `%pS` prints it (`sprint_symbol()`).
pub(crate) fn symbol(addr: usize) -> Result<kernel::str::CString, kernel::error::Error> {
    // `KSYM_SYMBOL_LEN`: a name of up to 511 bytes, an offset, a size and a module name.
    const LEN: usize = 1024;
    let mut buf = kernel::alloc::KVec::from_elem(0u8, LEN, kernel::alloc::flags::GFP_KERNEL)?;
    // SAFETY: `buf` holds `LEN` bytes, more than `sprint_symbol()` writes (at most
    // `KSYM_SYMBOL_LEN`, under 700, with its terminating NUL).
    unsafe { bindings::sprint_symbol(buf.as_mut_ptr().cast(), addr as kernel::ffi::c_ulong) };
    let s = CStr::from_bytes_until_nul(&buf).map_err(|_| kernel::error::code::EINVAL)?;
    Ok(kernel::str::CString::try_from(s)?)
}

/// Sets up what the shim needs (the flush workqueue, and the cache of slab metadata, whose
/// objects have the layout `meta`); called once at module load.
pub(crate) fn init(meta: core::alloc::Layout) -> Result<(), kernel::error::Error> {
    // SAFETY: Called once, at load, before `run_on_each_cpu` and `meta_alloc`.
    kernel::error::to_result(unsafe {
        ffi::rslub_shim_init(meta.size() as u32, meta.align() as u32)
    })
}

/// Memory for one slab's metadata (of the layout given to [`init`]), with `gfp`, on `node` if it
/// can: from a cache of the kernel's own that rslub never serves (`rust/shim.c`), so
/// that no new slab of rslub's waits for one of its own. Null if there is none.
pub(crate) fn meta_alloc(gfp: crate::gfp::Gfp, node: i32) -> *mut u8 {
    // SAFETY: `init` made the cache, which stays until `exit`; any flags and node.
    unsafe { ffi::rslub_meta_alloc(gfp.raw(), node) }.cast()
}

/// Gives back memory of [`meta_alloc`].
///
/// # Safety
///
/// `p` must come from [`meta_alloc`], and nothing may use it afterwards.
pub(crate) unsafe fn meta_free(p: *mut u8) {
    // SAFETY: From `meta_alloc` and given up (caller).
    unsafe { ffi::rslub_meta_free(p.cast()) }
}

/// Undoes [`init`]; called once at module unload, when nothing flushes any more.
pub(crate) fn exit() {
    // SAFETY: `init` succeeded at load and nothing uses the workqueue any more.
    unsafe { ffi::rslub_shim_exit() };
}

/// Registers the CPU hotplug callback: from then on `rslub_cpu_dead()` (the registry's)
/// runs once for every CPU that goes offline.
pub(crate) fn hotplug_init() -> Result<(), kernel::error::Error> {
    // SAFETY: Called once, at load, once the registry `rslub_cpu_dead()` reads is ready.
    kernel::error::to_result(unsafe { ffi::rslub_hotplug_init() })
}

/// Undoes [`hotplug_init`]; afterwards the callback does not run and is not running.
pub(crate) fn hotplug_exit() {
    // SAFETY: `hotplug_init` succeeded at load.
    unsafe { ffi::rslub_hotplug_exit() };
}

/// CPU hotplug held off (`cpus_read_lock()`) while the value lives: the online CPUs stay
/// the same. May sleep to take it; must not be taken again while held (the lock is not
/// recursive once a hotplug operation waits for it).
pub(crate) struct CpusHeld {
    _not_send: core::marker::PhantomData<*mut ()>,
}

impl CpusHeld {
    /// Holds CPU hotplug off. May sleep.
    pub(crate) fn new() -> Self {
        // SAFETY: `cpus_read_lock()` may be called where sleeping is allowed, which the
        // caller's context is (documented above); released on drop.
        unsafe { bindings::cpus_read_lock() };
        Self {
            _not_send: core::marker::PhantomData,
        }
    }
}

impl Drop for CpusHeld {
    fn drop(&mut self) {
        // SAFETY: Taken in `new`, on this task (the value is not `Send`).
        unsafe { bindings::cpus_read_unlock() };
    }
}

/// Runs `f` on every online CPU, in a worker bound to that CPU (process context), and
/// waits for all (SLUB's `flush_all()`); the caller holds CPU hotplug off (`cpus`), so
/// every CPU online now runs `f` and no other comes up meanwhile. The workers run on a
/// `WQ_MEM_RECLAIM` workqueue of the module's own, so this may be called from memory
/// reclaim. May sleep; one call at a time runs.
pub(crate) fn run_on_each_cpu<F: Fn() + Sync>(_cpus: &CpusHeld, f: &F) {
    /// # Safety
    ///
    /// `arg` must be a valid `&F`.
    unsafe extern "C" fn trampoline<F: Fn()>(arg: *mut c_void) {
        // SAFETY: `arg` is the `&F` below, alive until `rslub_run_on_each_cpu()` returns.
        let f = unsafe { &*arg.cast::<F>() };
        f();
    }
    // SAFETY: every call of the trampoline finishes before `rslub_run_on_each_cpu()`
    // returns, so `f` outlives them; `F: Sync` since they run on other CPUs.
    unsafe { ffi::rslub_run_on_each_cpu(trampoline::<F>, ptr::from_ref(f).cast_mut().cast()) };
}

/// The node of every zone in node `nid`'s zonelist for `GFP_KERNEL`, in zonelist order:
/// a node appears once per populated zone. Fills `out` and returns how many it wrote.
pub(crate) fn zonelist_nodes(nid: i32, out: &mut [u16]) -> usize {
    let max = i32::try_from(out.len()).unwrap_or(i32::MAX);
    // SAFETY: `nid` is an online node (callers pass one); `out` has room for `max` ids.
    let n = unsafe { ffi::rslub_zonelist_nodes(nid, out.as_mut_ptr(), max) };
    usize::try_from(n).unwrap_or(0)
}

/// Records the caller's call chain (without the two innermost frames, rslub's), CPU, task
/// and time in `addrs` (zero-terminated when shorter) and the three words.
pub(crate) fn track_save(addrs: &mut [usize], cpu: &mut u32, pid: &mut u32, when: &mut usize) {
    // SAFETY: The pointers come from live references; `addrs` has `addrs.len()` entries.
    unsafe { ffi::rslub_track_save(addrs.as_mut_ptr(), addrs.len() as u32, cpu, pid, when) }
}

/// Prints a record of [`track_save`] as "last `what` on CPU .. by pid .., .. ago" and its
/// call chain, one symbol per line.
pub(crate) fn track_print(what: &CStr, addrs: &[usize], cpu: u32, pid: u32, when: usize) {
    // SAFETY: `what` is NUL terminated; `addrs` has `addrs.len()` entries.
    unsafe {
        ffi::rslub_track_print(
            what.as_char_ptr(),
            addrs.as_ptr(),
            addrs.len() as u32,
            cpu,
            pid,
            when,
        )
    }
}

/// Registers the shrinker (`rslub_shrink_count()`, `rslub_shrink_scan()`), named `name`.
pub(crate) fn shrinker_init(name: &CStr) -> Result<(), kernel::error::Error> {
    // SAFETY: `name` is NUL terminated; `shrinker_alloc` copies it.
    kernel::error::to_result(unsafe { ffi::rslub_shrinker_init(name.as_char_ptr()) })
}

/// Unregisters the shrinker and waits until no callback runs (`shrinker_free()`).
pub(crate) fn shrinker_exit() {
    // SAFETY: Called once after a successful `shrinker_init`.
    unsafe { ffi::rslub_shrinker_exit() }
}

/// Whether the shrinker is registered with the kernel.
#[cfg_attr(not(rslub_inject), expect(dead_code, reason = "the suites' check"))]
pub(crate) fn shrinker_registered() -> bool {
    // SAFETY: Reads the shrinker pointer and its flags; no precondition.
    unsafe { ffi::rslub_shrinker_registered() }
}
