// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the C helpers only the suites use (`tests-kunit/shim.c`).

use core::{
    ffi::c_void,
    ptr::NonNull,
    sync::atomic::{AtomicBool, Ordering},
};
use kernel::{cpu::CpuId, error::to_result, prelude::*, str::CStrExt};

mod ffi {
    use core::ffi::{c_int, c_long, c_void};

    extern "C" {
        pub(super) fn rslub_test_virt_to_page(addr: *const c_void) -> *mut c_void;
        pub(super) fn rslub_test_virt_to_pfn(addr: *const c_void) -> usize;
        pub(super) fn rslub_test_pin_current(cpu: i32) -> i32;
        pub(super) fn rslub_test_now_ns() -> u64;
        pub(super) fn rslub_test_preempt_count() -> i32;
        pub(super) fn rslub_test_thread_start(
            f: unsafe extern "C" fn(*mut c_void) -> i32,
            arg: *mut c_void,
            cpu: i32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_thread_stop(t: *mut c_void) -> i32;
        pub(super) fn rslub_test_wait_for_stop();
        pub(super) fn rslub_test_tick_start(
            f: unsafe extern "C" fn(*mut c_void),
            arg: *mut c_void,
            cpu: i32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_tick_stop(k: *mut c_void);
        pub(super) fn rslub_test_hardtick_start(
            f: unsafe extern "C" fn(*mut c_void),
            arg: *mut c_void,
            cpu: i32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_hardtick_stop(k: *mut c_void);
        pub(super) fn rslub_test_slab_pages(reclaimable: bool) -> c_long;
        pub(super) fn rslub_test_skip(reason: *const kernel::ffi::c_char);
        pub(super) fn rslub_test_kc_geometry(
            kc: *mut kernel::bindings::kmem_cache,
            order: *mut u32,
            size: *mut u32,
            min_partial: *mut u32,
        );
        pub(super) fn rslub_test_kc_create_freeptr(
            name: *const kernel::ffi::c_char,
            size: u32,
            freeptr_offset: u32,
        ) -> *mut kernel::bindings::kmem_cache;
        pub(super) fn rslub_test_kc_create(
            name: *const kernel::ffi::c_char,
            size: u32,
            align: u32,
            flags: usize,
            ctor: Option<unsafe extern "C" fn(*mut c_void)>,
        ) -> *mut kernel::bindings::kmem_cache;
        pub(super) fn rslub_test_kc_destroy(kc: *mut kernel::bindings::kmem_cache);
        pub(super) fn rslub_test_kc_alloc(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_kc_zalloc(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_kc_alloc_node(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
            node: i32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_kc_alloc_lru(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
        ) -> *mut c_void;
        pub(super) fn rslub_test_kc_alloc_bulk(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
            n: usize,
            p: *mut *mut c_void,
        ) -> bool;
        pub(super) fn rslub_test_kc_free(kc: *mut kernel::bindings::kmem_cache, obj: *mut c_void);
        pub(super) fn rslub_test_kc_free_in_recursion(
            kc: *mut kernel::bindings::kmem_cache,
            obj: *mut c_void,
        ) -> bool;
        pub(super) fn rslub_test_ksize_krealloc_skipped(
            obj: *mut c_void,
            size: usize,
            ks: *mut usize,
            re: *mut *mut c_void,
        ) -> c_int;
        pub(super) fn rslub_test_kc_add_reference(kc: *mut kernel::bindings::kmem_cache);
        pub(super) fn rslub_test_kc_drop_reference(kc: *mut kernel::bindings::kmem_cache);
        pub(super) fn rslub_test_kfree(obj: *const c_void);
        pub(super) static mut rslub_test_before_destroy:
            Option<unsafe extern "C" fn(*mut kernel::bindings::kmem_cache)>;
        pub(super) fn rslub_test_kc_free_bulk(
            kc: *mut kernel::bindings::kmem_cache,
            n: usize,
            p: *mut *mut c_void,
        );
        pub(super) fn rslub_test_kfree_bulk(n: usize, p: *mut *mut c_void);
        pub(super) fn rslub_test_ksize(obj: *const c_void) -> usize;
        pub(super) fn rslub_test_krealloc(obj: *const c_void, size: usize, gfp: u32) -> usize;
        pub(super) fn rslub_test_kmalloc(size: usize, gfp: u32) -> usize;
        pub(super) fn rslub_test_kmalloc_node(size: usize, gfp: u32, node: i32) -> usize;
        pub(super) fn rslub_test_kmalloc_track_caller(size: usize, gfp: u32) -> usize;
        pub(super) fn rslub_test_kmalloc_64(gfp: u32) -> usize;
        pub(super) fn rslub_test_sendpage_ok(obj: usize) -> bool;
        pub(super) fn rslub_test_kmalloc_512_node(gfp: u32, node: i32) -> usize;
        pub(super) fn rslub_test_kmalloc_cache(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
            size: usize,
            node: i32,
        ) -> usize;
        pub(super) fn rslub_test_kvmalloc(size: usize, gfp: u32) -> usize;
        pub(super) fn rslub_test_kvrealloc(obj: *const c_void, size: usize, gfp: u32) -> usize;
        pub(super) fn rslub_test_kvfree(obj: *const c_void);
        pub(super) fn rslub_test_kmalloc_size_roundup(size: usize) -> usize;
        pub(super) fn rslub_test_is_vmalloc(obj: *const c_void) -> bool;
        pub(super) fn rslub_test_memcg() -> bool;
        pub(super) fn rslub_test_meta_from_kernel(meta: *const c_void) -> bool;
        pub(super) fn rslub_test_kfree_rcu_head(obj: *mut c_void);
        pub(super) fn rslub_test_kfree_rcu_headless(obj: *mut c_void);
        pub(super) fn rslub_test_kfree_rcu_inner(obj: *mut c_void);
        pub(super) fn rslub_test_kfree_rcu_nolock_inner(obj: *mut c_void);
        pub(super) fn rslub_test_kfree_rcu_nolock_inner_raw_locked(obj: *mut c_void);
        pub(super) fn rslub_test_on_slab_page(obj: *const c_void) -> bool;
        pub(super) fn rslub_test_slab_view(obj: *const c_void, v: *mut super::SlabView) -> bool;
        pub(super) fn rslub_test_nearest_obj(p: *const c_void) -> usize;
        pub(super) fn rslub_test_kmem_dump_obj(obj: *mut c_void) -> bool;
        pub(super) fn rslub_test_bvec_get_put(
            obj: *mut c_void,
            len: usize,
            counts: *mut c_int,
            max: c_int,
        ) -> c_int;
        pub(super) fn rslub_test_direct_state() -> c_int;
        pub(super) fn rslub_test_direct_sites_patched() -> bool;
        pub(super) fn rslub_test_direct_param() -> bool;
        pub(super) fn rslub_test_direct_count(on: bool) -> usize;
        pub(super) fn rslub_test_trace_hot(on: bool) -> c_int;
        pub(super) fn rslub_test_traced() -> c_int;
        pub(super) fn rslub_test_direct_kfree(obj: *const c_void);
        pub(super) fn rslub_test_direct_free(
            kc: *mut kernel::bindings::kmem_cache,
            obj: *mut c_void,
        );
        pub(super) fn rslub_test_direct_alloc(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
        ) -> usize;
        pub(super) fn rslub_test_direct_alloc_node(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
            node: i32,
        ) -> usize;
        pub(super) fn rslub_test_mempool_create(
            min_nr: i32,
            kc: *mut kernel::bindings::kmem_cache,
        ) -> *mut c_void;
        pub(super) fn rslub_test_mempool_create_pages(min_nr: i32) -> *mut c_void;
        pub(super) fn rslub_test_mempool_destroy(pool: *mut c_void);
        pub(super) fn rslub_test_mempool_alloc(pool: *mut c_void, gfp: u32) -> usize;
        pub(super) fn rslub_test_mempool_alloc_preallocated(pool: *mut c_void) -> usize;
        pub(super) fn rslub_test_mempool_free(pool: *mut c_void, element: usize);
        pub(super) fn rslub_test_mempool_free_bulk(
            pool: *mut c_void,
            elements: *mut usize,
            n: u32,
        ) -> u32;
        pub(super) fn rslub_test_mempool_resize(pool: *mut c_void, min_nr: i32) -> i32;
        pub(super) fn rslub_test_mempool_reserved(pool: *mut c_void) -> i32;
        pub(super) fn rslub_test_kc_create_mergeable(
            name: *const kernel::ffi::c_char,
            size: u32,
        ) -> *mut kernel::bindings::kmem_cache;
        pub(super) fn rslub_test_kc_create_usercopy(
            name: *const kernel::ffi::c_char,
            size: u32,
            useroffset: u32,
            usersize: u32,
        ) -> *mut kernel::bindings::kmem_cache;
        pub(super) fn rslub_test_check_object_size(ptr: *const c_void, n: usize, to_user: bool);
        pub(super) fn rslub_test_memmap_hole() -> usize;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_slot_of(kc: *mut kernel::bindings::kmem_cache) -> usize;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_slot_first(kc: *mut kernel::bindings::kmem_cache) -> bool;
        pub(super) fn rslub_test_slot_home(kc: *mut kernel::bindings::kmem_cache) -> u32;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_bulk_count(
            kc: *mut kernel::bindings::kmem_cache,
        ) -> core::ffi::c_uint;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_kmalloc_64_free_bulk(n: usize, p: *mut *mut c_void);
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_kmalloc_64_cache_alloc(gfp: u32) -> usize;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_slot_hold(kc: *mut kernel::bindings::kmem_cache) -> usize;
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_slot_put(slot: usize);
        #[cfg(rslub_inject)]
        pub(super) fn rslub_test_dr_alloc(
            kc: *mut kernel::bindings::kmem_cache,
            gfp: u32,
            slot: usize,
            stall_us: u32,
            checked: *mut bool,
        ) -> isize;
        pub(super) static mut rslub_test_usercopy_caught: Option<unsafe extern "C" fn()>;
        pub(super) fn rslub_test_memcg_enter(path: *const kernel::ffi::c_char) -> *mut c_void;
        pub(super) fn rslub_test_memcg_leave(m: *mut c_void);
        pub(super) fn rslub_test_memcg_usage(m: *mut c_void) -> usize;
        pub(super) fn rslub_test_kmem_cache_charge(obj: *mut c_void, gfp: u32) -> bool;
        pub(super) fn rslub_test_read_byte(p: *const c_void) -> u8;
        pub(super) fn rslub_test_page_try_get(obj: *const c_void) -> bool;
        pub(super) fn rslub_test_page_put(obj: *const c_void);
        pub(super) fn rslub_test_take_memory_block(nr: *mut usize) -> *mut c_void;
        pub(super) fn rslub_test_free_range(first: *mut c_void, nr: usize);
        pub(super) fn rslub_test_offline_block(
            page: *mut c_void,
            secs: u32,
            spun: *mut bool,
        ) -> c_int;
        pub(super) fn rslub_test_log_has(
            first: *const kernel::ffi::c_char,
            next: *const kernel::ffi::c_char,
        ) -> bool;
        pub(super) fn rslub_test_alloc_hidden(
            kc: *mut kernel::bindings::kmem_cache,
            link: bool,
        ) -> usize;
        pub(super) fn rslub_test_module_refcount() -> i32;
        pub(super) fn rslub_test_cpu_down(cpu: u32) -> i32;
        pub(super) fn rslub_test_cpu_up(cpu: u32) -> i32;
        pub(super) fn rslub_test_defer(
            f: unsafe extern "C" fn(*mut c_void),
            arg: *mut c_void,
        ) -> i32;
        pub(super) fn rslub_test_thread_start_unbound(
            f: unsafe extern "C" fn(*mut c_void) -> i32,
            arg: *mut c_void,
        ) -> *mut c_void;
        pub(super) fn rslub_test_move_task(t: *mut c_void, cpu: i32) -> i32;
        pub(super) fn rslub_test_usleep(us: u32);
        pub(super) fn rslub_test_cpu_to_node(cpu: i32) -> i32;
        pub(super) fn rslub_test_mdelay(ms: u32);
        pub(super) fn rslub_test_memalloc_noreclaim_save() -> u32;
        pub(super) fn rslub_test_memalloc_noreclaim_restore(flags: u32);
        pub(super) fn rslub_test_tainted_warn() -> bool;
        pub(super) fn rslub_test_alloc_split(order: u32) -> *mut c_void;
        pub(super) fn rslub_test_free_page(page: *mut c_void);
        pub(super) fn rslub_test_set_pfmemalloc(page: *mut c_void);
        pub(super) fn rslub_test_read_file(
            path: *const kernel::ffi::c_char,
            buf: *mut u8,
            len: usize,
        ) -> isize;
        pub(super) fn rslub_test_write_file(
            path: *const kernel::ffi::c_char,
            buf: *const u8,
            len: usize,
        ) -> isize;
    }
}

/// The NUMA node of the page holding `addr`, by the kernel's own `virt_to_page()`.
pub(crate) fn node_of(addr: usize) -> u32 {
    // SAFETY: `virt_to_page()` is arithmetic on a direct-map address.
    let page = unsafe { ffi::rslub_test_virt_to_page(addr as *const c_void) };
    crate::shim::page_to_nid(NonNull::new(page.cast()).expect("a page"))
}

/// A naturally aligned block of `2^order` pages, split into pages that are each freed
/// on their own: [`SplitBlock::page`] hands pages out, the rest are freed on drop.
pub(crate) struct SplitBlock {
    first: NonNull<kernel::bindings::page>,
    /// Bit `i`: page `i` is still the block's (not handed out).
    kept: u64,
    pages: usize,
}

impl SplitBlock {
    /// Allocates the block (`order` at most 6).
    pub(crate) fn new(order: u32) -> Result<Self> {
        assert!(order <= 6);
        // SAFETY: Any order up to `MAX_PAGE_ORDER`.
        let first = NonNull::new(unsafe { ffi::rslub_test_alloc_split(order) })
            .ok_or(ENOMEM)?
            .cast();
        let pages = 1usize << order;
        Ok(Self {
            first,
            kept: u64::MAX >> (64 - pages),
            pages,
        })
    }

    /// Gives up page `i` of the block, a page of its own that `__free_pages(page, 0)`
    /// frees.
    pub(crate) fn page(&mut self, i: usize) -> NonNull<kernel::bindings::page> {
        assert!(i < self.pages && self.kept & (1 << i) != 0);
        self.kept &= !(1 << i);
        // SAFETY: `i` is inside the block, whose `struct page`s are consecutive.
        unsafe { self.first.add(i) }
    }

    /// Marks page `i` as a page of the emergency reserves (`set_page_pfmemalloc()`), as
    /// the page allocator marks the pages it takes from them.
    pub(crate) fn mark_pfmemalloc(&mut self, i: usize) {
        assert!(i < self.pages);
        // SAFETY: Page `i` is inside the block; the mark is a bit in a field the page
        // allocator overwrites when the page is freed.
        unsafe { ffi::rslub_test_set_pfmemalloc(self.first.add(i).as_ptr().cast()) };
    }

    /// Takes page `i` back (it was not used after [`SplitBlock::page`]).
    pub(crate) fn keep(&mut self, i: usize) {
        self.kept |= 1 << i;
    }
}

impl Drop for SplitBlock {
    fn drop(&mut self) {
        for i in (0..self.pages).filter(|i| self.kept & (1 << i) != 0) {
            // SAFETY: Page `i` is still the block's, a split page of its own.
            unsafe { ffi::rslub_test_free_page(self.first.add(i).as_ptr().cast()) };
        }
    }
}

/// A speculative reference on the page of `addr` (`folio_try_get()`, as a pfn walker takes
/// one): false if its count is 0 (frozen). Put it with [`page_put`].
pub(crate) fn page_try_get(addr: usize) -> bool {
    // SAFETY: `folio_try_get()` takes a reference only on a page whose count is not 0;
    // `addr` is a direct-map address (caller), whose `struct page` always exists.
    unsafe { ffi::rslub_test_page_try_get(addr as *const c_void) }
}

/// Puts a reference [`page_try_get`] took on the page of `addr`.
///
/// # Safety
///
/// The caller holds a reference on that page from [`page_try_get`], given up here.
pub(crate) unsafe fn page_put(addr: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_page_put(addr as *const c_void) }
}

/// A whole memory block (`memory_block_size_bytes()`) taken from the page allocator,
/// nothing unmovable left in it (`alloc_contig_pages()`), each page ours (count 1):
/// [`MemoryBlock::page`] hands pages out, [`MemoryBlock::release`] frees the rest.
pub(crate) struct MemoryBlock {
    first: NonNull<kernel::bindings::page>,
    pages: usize,
    /// Pages handed out, in ascending order (at most two).
    given: KVec<usize>,
    released: bool,
}

impl MemoryBlock {
    /// Takes a block of this node (or another in its fallback order); `None` if the
    /// kernel has no memory hot-remove, or no block could be emptied.
    pub(crate) fn take() -> Option<Self> {
        let mut pages = 0usize;
        // SAFETY: `pages` is valid for a write.
        let first = NonNull::new(unsafe { ffi::rslub_test_take_memory_block(&mut pages) })?;
        Some(Self {
            first: first.cast(),
            pages,
            given: KVec::new(),
            released: false,
        })
    }

    /// Gives up page `i` (pages are handed out in ascending order), a page of its own that
    /// `__free_pages(page, 0)` frees.
    pub(crate) fn page(&mut self, i: usize) -> NonNull<kernel::bindings::page> {
        assert!(i < self.pages && self.given.last().is_none_or(|&g| g < i) && !self.released);
        self.given.push(i, GFP_KERNEL).expect("memory");
        // SAFETY: `i` is inside the block, whose `struct page`s are consecutive.
        unsafe { self.first.add(i) }
    }

    /// Frees every page not handed out.
    pub(crate) fn release(&mut self) {
        if core::mem::replace(&mut self.released, true) {
            return;
        }
        let mut from = 0;
        for &g in Iterator::chain(self.given.iter(), core::iter::once(&self.pages)) {
            // SAFETY: Pages `from..g` are the block's, not handed out.
            unsafe { ffi::rslub_test_free_range(self.first.add(from).as_ptr().cast(), g - from) };
            from = g + 1;
        }
    }

    /// Writes `offline` to the block's state file from a kernel thread, interrupted if it
    /// has not returned after `secs` seconds (`offline_pages()` retrying): what the write
    /// returned (a block that went offline is onlined again), and whether it had to be
    /// interrupted.
    pub(crate) fn offline(&self, secs: u32) -> (i32, bool) {
        let mut spun = false;
        // SAFETY: The block's first page; `spun` is valid for a write.
        let ret =
            unsafe { ffi::rslub_test_offline_block(self.first.as_ptr().cast(), secs, &mut spun) };
        (ret, spun)
    }
}

impl Drop for MemoryBlock {
    fn drop(&mut self) {
        self.release();
    }
}

/// The `struct page` of `addr`, by the kernel's own `virt_to_page()`.
pub(crate) fn virt_to_page(addr: usize) -> usize {
    // SAFETY: As above.
    unsafe { ffi::rslub_test_virt_to_page(addr as *const c_void) as usize }
}

/// The page frame number of the direct-map address `addr`.
pub(crate) fn virt_to_pfn(addr: usize) -> usize {
    // SAFETY: Address arithmetic only (`virt_to_page()`, `page_to_pfn()`).
    unsafe { ffi::rslub_test_virt_to_pfn(addr as *const c_void) }
}

/// Moves the current task to `cpu` and keeps it there, or lets it run anywhere (`None`).
pub(crate) fn pin_current(cpu: Option<CpuId>) -> Result {
    let c = cpu.map_or(-1, |c| c.as_u32() as i32);
    // SAFETY: `set_cpus_allowed_ptr()` on the current task with a valid mask.
    to_result(unsafe { ffi::rslub_test_pin_current(c) })
}

/// The current preemption count, with its interrupt and softirq parts (`preempt_count()`).
pub(crate) fn preempt_count() -> i32 {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_preempt_count() }
}

/// Monotonic nanoseconds (`ktime_get_ns()`).
pub(crate) fn now_ns() -> u64 {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_now_ns() }
}

/// What a [`Thread`] shares with its kthread: the closure, and whether it has returned.
struct Ctl {
    f: *const (),
    done: AtomicBool,
}

/// A kernel thread running a closure; joined when dropped (the drop waits for the closure
/// to return: `kthread_stop()` alone would skip a closure that has not started yet).
pub(crate) struct Thread {
    task: *mut c_void,
    ctl: KBox<Ctl>,
}

impl Thread {
    /// Starts `f` in a kernel thread bound to `cpu`.
    ///
    /// # Safety
    ///
    /// `f` must stay valid and not move until the returned value has been dropped (which
    /// waits for the thread), and the returned value must not be leaked.
    pub(crate) unsafe fn start<F: Fn() + Sync>(f: &F, cpu: CpuId) -> Result<Self> {
        // SAFETY: The caller's guarantees pass on.
        unsafe { Self::spawn(f, Some(cpu)) }
    }

    /// Starts `f` in a kernel thread that the scheduler may move between CPUs, and that
    /// [`Thread::move_to`] can move.
    ///
    /// # Safety
    ///
    /// As for [`Thread::start`].
    pub(crate) unsafe fn start_unbound<F: Fn() + Sync>(f: &F) -> Result<Self> {
        // SAFETY: The caller's guarantees pass on.
        unsafe { Self::spawn(f, None) }
    }

    /// # Safety
    ///
    /// As for [`Thread::start`].
    unsafe fn spawn<F: Fn() + Sync>(f: &F, cpu: Option<CpuId>) -> Result<Self> {
        /// # Safety
        ///
        /// `arg` must be a valid `&Ctl` whose `f` is a valid `&F`, and this must run in the
        /// kthread.
        unsafe extern "C" fn trampoline<F: Fn()>(arg: *mut c_void) -> i32 {
            // SAFETY: `arg` is the `Ctl` of the `Thread`, alive until its drop, which
            // waits for `done`; `f` is valid as long (caller of `start`).
            let ctl = unsafe { &*arg.cast::<Ctl>() };
            // SAFETY: As above.
            let f = unsafe { &*ctl.f.cast::<F>() };
            f();
            ctl.done.store(true, Ordering::Release);
            // A kthread must not exit before `kthread_stop()`.
            // SAFETY: Called from the kthread itself.
            unsafe { ffi::rslub_test_wait_for_stop() };
            0
        }
        let ctl = KBox::new(
            Ctl {
                f: core::ptr::from_ref(f).cast(),
                done: AtomicBool::new(false),
            },
            GFP_KERNEL,
        )?;
        let arg = core::ptr::from_ref::<Ctl>(&ctl).cast_mut().cast();
        // SAFETY: The trampoline matches the C signature; `f` outlives the thread (caller).
        let task = unsafe {
            match cpu {
                Some(cpu) => {
                    ffi::rslub_test_thread_start(trampoline::<F>, arg, cpu.as_u32() as i32)
                }
                None => ffi::rslub_test_thread_start_unbound(trampoline::<F>, arg),
            }
        };
        if task.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { task, ctl })
    }

    /// Moves an unbound thread to `cpu` now, wherever it is in its code. Fails for a
    /// thread bound by [`Thread::start`].
    pub(crate) fn move_to(&self, cpu: CpuId) -> Result {
        // SAFETY: `task` is a live kthread (it waits for `kthread_stop()` in `drop`).
        to_result(unsafe { ffi::rslub_test_move_task(self.task, cpu.as_u32() as i32) })
    }
}

/// Sleeps about `us` microseconds (`usleep_range(us, 2 * us)`).
pub(crate) fn usleep(us: u32) {
    // SAFETY: Called from task context by the suites.
    unsafe { ffi::rslub_test_usleep(us) };
}

// SAFETY: `move_to`, the only method taking `&self`, may be called from any thread.
unsafe impl Sync for Thread {}

impl Drop for Thread {
    /// Waits for the closure to finish and the thread to exit.
    fn drop(&mut self) {
        while !self.ctl.done.load(Ordering::Acquire) {
            msleep(1);
        }
        // SAFETY: `task` is a started kthread that waits for `kthread_stop()`.
        unsafe { ffi::rslub_test_thread_stop(self.task) };
    }
}

/// A timer calling a closure on one CPU, every jiffy in softirq context ([`Tick::start`])
/// or every millisecond in hard interrupt context ([`Tick::start_hard`]); stopped (and
/// waited for) when dropped.
pub(crate) struct Tick {
    k: *mut c_void,
    hard: bool,
}

impl Tick {
    /// Starts calling `f` on `cpu` from a timer (softirq).
    ///
    /// # Safety
    ///
    /// `f` must stay valid and not move until the returned value has been dropped, and the
    /// returned value must not be leaked.
    pub(crate) unsafe fn start<F: Fn() + Sync>(f: &F, cpu: CpuId) -> Result<Self> {
        // SAFETY: As the caller guarantees.
        unsafe { Self::start_in(f, cpu, false) }
    }

    /// Starts calling `f` on `cpu` from an hrtimer in hard interrupt context.
    ///
    /// # Safety
    ///
    /// As for [`Tick::start`].
    pub(crate) unsafe fn start_hard<F: Fn() + Sync>(f: &F, cpu: CpuId) -> Result<Self> {
        // SAFETY: As the caller guarantees.
        unsafe { Self::start_in(f, cpu, true) }
    }

    /// # Safety
    ///
    /// As for [`Tick::start`].
    unsafe fn start_in<F: Fn() + Sync>(f: &F, cpu: CpuId, hard: bool) -> Result<Self> {
        /// # Safety
        ///
        /// `arg` must be a valid `&F`.
        unsafe extern "C" fn trampoline<F: Fn()>(arg: *mut c_void) {
            // SAFETY: `arg` is the `&F` given to `start`, valid until the drop (caller).
            let f = unsafe { &*arg.cast::<F>() };
            f();
        }
        let arg = core::ptr::from_ref(f).cast_mut().cast();
        let cpu = cpu.as_u32() as i32;
        // SAFETY: The trampoline matches the C signature; `f` outlives the timer (caller).
        let k = unsafe {
            if hard {
                ffi::rslub_test_hardtick_start(trampoline::<F>, arg, cpu)
            } else {
                ffi::rslub_test_tick_start(trampoline::<F>, arg, cpu)
            }
        };
        if k.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { k, hard })
    }
}

impl Drop for Tick {
    fn drop(&mut self) {
        // SAFETY: `k` is a started tick of that kind; this stops it and waits for a
        // running callback.
        unsafe {
            if self.hard {
                ffi::rslub_test_hardtick_stop(self.k)
            } else {
                ffi::rslub_test_tick_stop(self.k)
            }
        };
    }
}

/// Pages counted as slab memory on all nodes, reclaimable or not (`rust/shim.c`'s
/// accounting; 6.12's `account_slab()`).
pub(crate) fn slab_pages(reclaimable: bool) -> i64 {
    // SAFETY: Reads the node statistics; no precondition.
    unsafe { ffi::rslub_test_slab_pages(reclaimable) as i64 }
}

/// Marks the running KUnit test as skipped with `reason` (it then shows as SKIP, not
/// PASS); the caller returns right after.
pub(crate) fn skip(reason: &CStr) {
    // SAFETY: `reason` is a valid C string; outside a KUnit test this does nothing.
    unsafe { ffi::rslub_test_skip(reason.as_char_ptr()) };
}

/// Takes `cpu` offline (`remove_cpu()`); the caller must not run on it. May sleep.
pub(crate) fn cpu_down(cpu: CpuId) -> Result {
    // SAFETY: `remove_cpu()` may be called from any sleepable context.
    to_result(unsafe { ffi::rslub_test_cpu_down(cpu.as_u32()) })
}

/// Brings `cpu` back online (`add_cpu()`). May sleep.
pub(crate) fn cpu_up(cpu: CpuId) -> Result {
    // SAFETY: `add_cpu()` may be called from any sleepable context.
    to_result(unsafe { ffi::rslub_test_cpu_up(cpu.as_u32()) })
}

/// Runs `f(arg)` when the running KUnit test ends, also when a failed assertion ends the
/// test's thread early, when no destructor runs. Without a running test, runs it now and
/// fails.
///
/// # Safety
///
/// `f(arg)` must be sound to call at the end of the test, from the KUnit runner.
pub(crate) unsafe fn defer(f: unsafe extern "C" fn(*mut c_void), arg: *mut c_void) -> Result {
    // SAFETY: The caller's guarantee.
    to_result(unsafe { ffi::rslub_test_defer(f, arg) })
}

/// Marks the kernel log: what rslub reports from now to the end of the running test about
/// a cache whose name starts with `prefix` is the test's own doing (a double free it makes
/// on purpose, flags it passes wrongly). `scripts/test/reports.py` fails a run on every other
/// report of rslub's (those about the caches backed under traffic among them, on every
/// CPU), and on every report of the kernel's (oops, KASAN, WARNING, ...) wherever it is.
pub(crate) fn expect_reports(prefix: &CStr) {
    /// # Safety
    ///
    /// None: only prints.
    unsafe extern "C" fn end(_: *mut c_void) {
        pr_info!("rslub-test: reports end\n");
    }
    // The end first: a window that could not be closed is never opened.
    // SAFETY: `end` only prints, fine at any test end.
    if unsafe { defer(end, core::ptr::null_mut()) }.is_ok() {
        pr_info!(
            "rslub-test: reports expected of {}\n",
            prefix.to_str().unwrap_or("?")
        );
    }
}

/// Makes `f` run in `rust/back/replace.c`'s replacement of `kmem_cache_destroy()` right before it
/// calls the kernel's (`None`: nothing runs). One test at a time sets it, and clears it
/// before it ends.
pub(crate) fn set_before_destroy(
    f: Option<unsafe extern "C" fn(*mut kernel::bindings::kmem_cache)>,
) {
    // SAFETY: A pointer-sized store to a test-only hook that only the running test sets;
    // the replacement reads it once per call.
    unsafe { core::ptr::write_volatile(&raw mut ffi::rslub_test_before_destroy, f) };
}

/// The NUMA node of `cpu` (`cpu_to_node()`).
pub(crate) fn cpu_to_node(cpu: CpuId) -> u32 {
    // SAFETY: `cpu` is a valid CPU id.
    unsafe { ffi::rslub_test_cpu_to_node(cpu.as_u32() as i32) }.unsigned_abs()
}

/// The first online CPU of node `nid`, if any.
pub(crate) fn cpu_of_node(nid: u32) -> Option<CpuId> {
    crate::percpu::possible_cpus().find(|&c| crate::shim::cpu_online(c) && cpu_to_node(c) == nid)
}

/// Busy-waits `ms` milliseconds (`mdelay()`; also with interrupts off).
pub(crate) fn mdelay(ms: u32) {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_mdelay(ms) };
}

/// Sleeps `ms` milliseconds (`msleep()`): the allocator's own wrapper.
pub(crate) use crate::shim::msleep;

/// Runs `f` in the `PF_MEMALLOC` scope of direct reclaim (`memalloc_noreclaim_save()`).
pub(crate) fn in_reclaim_scope<R>(f: impl FnOnce() -> R) -> R {
    // SAFETY: Paired with the restore below, on the same task.
    let flags = unsafe { ffi::rslub_test_memalloc_noreclaim_save() };
    let r = f();
    // SAFETY: `flags` came from the save above.
    unsafe { ffi::rslub_test_memalloc_noreclaim_restore(flags) };
    r
}

/// Whether a `WARN()` has fired since boot (`TAINT_WARN`).
pub(crate) fn tainted_warn() -> bool {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_tainted_warn() }
}

/// Reads the debugfs file at `path` (relative to the debugfs root) into `buf` from its
/// start, to its end or until `buf` is full; returns the bytes read.
pub(crate) fn read_file(path: &CStr, buf: &mut [u8]) -> Result<usize> {
    // SAFETY: `path` is a C string and `buf` is valid for `buf.len()` bytes.
    let n = unsafe { ffi::rslub_test_read_file(path.as_char_ptr(), buf.as_mut_ptr(), buf.len()) };
    usize::try_from(n).map_err(|_| Error::from_errno(n as i32))
}

/// Writes `data` to the debugfs file at `path` (relative to the debugfs root) in one
/// write; returns the bytes written.
pub(crate) fn write_file(path: &CStr, data: &[u8]) -> Result<usize> {
    // SAFETY: `path` is a C string and `data` is valid for `data.len()` bytes.
    let n = unsafe { ffi::rslub_test_write_file(path.as_char_ptr(), data.as_ptr(), data.len()) };
    usize::try_from(n).map_err(|_| Error::from_errno(n as i32))
}

/// A cache made with the kernel's own `kmem_cache_create()` (`SLAB_NO_MERGE` added), used
/// through the kernel's API as its users do; destroyed on drop.
pub(crate) struct KernelCache(NonNull<kernel::bindings::kmem_cache>);

// SAFETY: A kernel cache may be used from any thread and context its flags allow.
unsafe impl Sync for KernelCache {}
// SAFETY: As above.
unsafe impl Send for KernelCache {}

impl KernelCache {
    /// `kmem_cache_create(name, size, align, flags | SLAB_NO_MERGE, ctor)`.
    pub(crate) fn create(
        name: &CStr,
        size: u32,
        align: u32,
        flags: usize,
        ctor: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> Result<Self> {
        // SAFETY: A valid name; the constructor, if any, initialises one object.
        let kc = unsafe { ffi::rslub_test_kc_create(name.as_char_ptr(), size, align, flags, ctor) };
        NonNull::new(kc).map(Self).ok_or(ENOMEM)
    }

    /// A `SLAB_TYPESAFE_BY_RCU` cache (`SLAB_NO_MERGE`) whose free pointer may go at
    /// `freeptr_offset` inside the object (`kmem_cache_args.freeptr_offset`).
    pub(crate) fn create_freeptr(name: &CStr, size: u32, freeptr_offset: u32) -> Result<Self> {
        // SAFETY: A valid name.
        let kc =
            unsafe { ffi::rslub_test_kc_create_freeptr(name.as_char_ptr(), size, freeptr_offset) };
        NonNull::new(kc).map(Self).ok_or(ENOMEM)
    }

    /// `kmem_cache_create_usercopy()` (`SLAB_NO_MERGE` added): objects that may be copied
    /// to or from user space only in `usersize` bytes from `useroffset`.
    pub(crate) fn create_usercopy(
        name: &CStr,
        size: u32,
        useroffset: u32,
        usersize: u32,
    ) -> Result<Self> {
        // SAFETY: A valid name.
        let kc = unsafe {
            ffi::rslub_test_kc_create_usercopy(name.as_char_ptr(), size, useroffset, usersize)
        };
        NonNull::new(kc).map(Self).ok_or(ENOMEM)
    }

    /// `kmem_cache_create(name, size, 0, 0, NULL)`, as the kernel's users call it: with
    /// slab merging on, the kernel may return another cache of the same size and flags,
    /// with one more reference.
    pub(crate) fn create_mergeable(name: &CStr, size: u32) -> Result<Self> {
        // SAFETY: A valid name.
        let kc = unsafe { ffi::rslub_test_kc_create_mergeable(name.as_char_ptr(), size) };
        NonNull::new(kc).map(Self).ok_or(ENOMEM)
    }

    /// The slab order, the stride (`s->size`) and the `min_partial` the kernel chose for
    /// the cache.
    pub(crate) fn geometry(&self) -> (u32, u32, u32) {
        let (mut order, mut size, mut min_partial) = (0u32, 0u32, 0u32);
        // SAFETY: `self.0` is a live cache; the pointers are valid for writes.
        unsafe {
            ffi::rslub_test_kc_geometry(self.0.as_ptr(), &mut order, &mut size, &mut min_partial)
        };
        (order, size, min_partial)
    }

    /// The `struct kmem_cache`.
    pub(crate) fn raw(&self) -> NonNull<kernel::bindings::kmem_cache> {
        self.0
    }

    /// The cache as an address, no longer destroyed on drop: [`KernelCache::from_raw`]
    /// takes it back.
    pub(crate) fn into_raw(self) -> usize {
        let p = self.0.as_ptr() as usize;
        core::mem::forget(self);
        p
    }

    /// The cache at `p`.
    ///
    /// # Safety
    ///
    /// `p` must come from [`KernelCache::into_raw`], and the cache must be live; only one
    /// of the values made from it may be dropped (which destroys the cache).
    pub(crate) unsafe fn from_raw(p: usize) -> Self {
        // SAFETY: A live cache's address (caller), not null.
        Self(unsafe { NonNull::new_unchecked(p as *mut kernel::bindings::kmem_cache) })
    }

    /// `kmem_cache_alloc()`.
    pub(crate) fn alloc(&self, gfp: crate::gfp::Gfp) -> usize {
        // SAFETY: A live cache.
        unsafe { ffi::rslub_test_kc_alloc(self.0.as_ptr(), gfp.raw()) as usize }
    }

    /// `kmem_cache_zalloc()`.
    pub(crate) fn zalloc(&self, gfp: crate::gfp::Gfp) -> usize {
        // SAFETY: A live cache.
        unsafe { ffi::rslub_test_kc_zalloc(self.0.as_ptr(), gfp.raw()) as usize }
    }

    /// `kmem_cache_alloc_node()`.
    pub(crate) fn alloc_node(&self, gfp: crate::gfp::Gfp, node: i32) -> usize {
        // SAFETY: A live cache.
        unsafe { ffi::rslub_test_kc_alloc_node(self.0.as_ptr(), gfp.raw(), node) as usize }
    }

    /// `kmem_cache_alloc_lru(kc, NULL, gfp)`.
    pub(crate) fn alloc_lru(&self, gfp: crate::gfp::Gfp) -> usize {
        // SAFETY: A live cache.
        unsafe { ffi::rslub_test_kc_alloc_lru(self.0.as_ptr(), gfp.raw()) as usize }
    }

    /// `kmem_cache_alloc_bulk()` into `out`.
    pub(crate) fn alloc_bulk(&self, gfp: crate::gfp::Gfp, out: &mut [usize]) -> bool {
        // SAFETY: A live cache; `out` holds `out.len()` pointer-sized slots.
        unsafe {
            ffi::rslub_test_kc_alloc_bulk(
                self.0.as_ptr(),
                gfp.raw(),
                out.len(),
                out.as_mut_ptr().cast(),
            )
        }
    }

    /// `kmem_cache_free()`.
    ///
    /// # Safety
    ///
    /// `obj` must have been allocated from this cache and not freed since.
    pub(crate) unsafe fn free(&self, obj: usize) {
        // SAFETY: The caller's guarantee.
        unsafe { ffi::rslub_test_kc_free(self.0.as_ptr(), obj as *mut c_void) };
    }

    /// [`KernelCache::free`] with ftrace's recursion protection of this context already
    /// taken (and its transition level), so that ftrace handlers fail to take it. Returns
    /// false, freeing nothing, if it could not be taken.
    ///
    /// # Safety
    ///
    /// As for [`KernelCache::free`].
    pub(crate) unsafe fn free_in_recursion(&self, obj: usize) -> bool {
        // SAFETY: The caller's guarantee.
        unsafe { ffi::rslub_test_kc_free_in_recursion(self.0.as_ptr(), obj as *mut c_void) }
    }

    /// Takes one more reference on the cache, as slab merging does for each creator
    /// whose cache it merges into this one; [`KernelCache::destroy_reference`] drops it.
    pub(crate) fn add_reference(&self) {
        // SAFETY: A live cache only this test uses.
        unsafe { ffi::rslub_test_kc_add_reference(self.0.as_ptr()) };
    }

    /// `kmem_cache_destroy()` of one reference of [`KernelCache::add_reference`]: the
    /// cache lives on for the other.
    ///
    /// # Safety
    ///
    /// The cache must hold a reference taken by [`KernelCache::add_reference`].
    pub(crate) unsafe fn destroy_reference(&self) {
        // SAFETY: Another reference keeps the cache alive (caller).
        unsafe { ffi::rslub_test_kc_destroy(self.0.as_ptr()) };
    }

    /// `kmem_cache_free_bulk()`.
    ///
    /// # Safety
    ///
    /// As for [`KernelCache::free`], for each object.
    pub(crate) unsafe fn free_bulk(&self, objs: &mut [usize]) {
        // SAFETY: The caller's guarantee.
        unsafe {
            ffi::rslub_test_kc_free_bulk(self.0.as_ptr(), objs.len(), objs.as_mut_ptr().cast())
        };
    }
}

impl Drop for KernelCache {
    fn drop(&mut self) {
        // SAFETY: A live cache, destroyed once.
        unsafe { ffi::rslub_test_kc_destroy(self.0.as_ptr()) };
    }
}

/// `kfree()`.
///
/// # Safety
///
/// `obj` must be an object of a kernel cache (or kmalloc), not freed since.
pub(crate) unsafe fn kfree(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree(obj as *const c_void) };
}

/// `kfree_bulk()`.
///
/// # Safety
///
/// As for [`kfree`], for each object.
pub(crate) unsafe fn kfree_bulk(objs: &mut [usize]) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_bulk(objs.len(), objs.as_mut_ptr().cast()) };
}

/// `ksize()`.
///
/// # Safety
///
/// `obj` must be a live object of a kernel cache (or kmalloc).
pub(crate) unsafe fn ksize(obj: usize) -> usize {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_ksize(obj as *const c_void) }
}

/// `ksize()` of `obj`, then `krealloc()` of it to `size` (`GFP_ATOMIC`), where ftrace
/// skips rslub's handler and the kernel's own functions run: a tracer sharing their call
/// sites, called from within a tracer's handler (ftrace's list function already holds its
/// recursion protection). Returns both results, or the error registering the tracer.
///
/// # Safety
///
/// As for [`krealloc`].
pub(crate) unsafe fn ksize_krealloc_skipped(obj: usize, size: usize) -> Result<(usize, usize)> {
    let (mut ks, mut re) = (0usize, core::ptr::null_mut());
    // SAFETY: The caller's guarantee; `ks` and `re` are written before the call returns.
    to_result(unsafe {
        ffi::rslub_test_ksize_krealloc_skipped(obj as *mut c_void, size, &mut ks, &mut re)
    })?;
    Ok((ks, re as usize))
}

/// `krealloc()`: the new object (0 on failure, then `obj` is still live).
///
/// # Safety
///
/// `obj` must be a live object of a kernel cache (or kmalloc); unless 0 is returned, it
/// is not used afterwards.
pub(crate) unsafe fn krealloc(obj: usize, size: usize, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_krealloc(obj as *const c_void, size, gfp.raw()) }
}

/// `kfree_rcu()` through an `rcu_head` at the start of `obj`.
///
/// # Safety
///
/// As for [`kfree`]; the object must have room for an `rcu_head` (16 bytes).
pub(crate) unsafe fn kfree_rcu_head(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_rcu_head(obj as *mut c_void) };
}

/// `kfree_rcu_mightsleep()`: the head-less `kvfree_rcu` path.
///
/// # Safety
///
/// As for [`kfree`].
pub(crate) unsafe fn kfree_rcu_headless(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_rcu_headless(obj as *mut c_void) };
}

/// `kfree_rcu()` of an object of at least 40 bytes whose `kvfree_rcu_head` is at byte 32.
///
/// # Safety
///
/// As for [`kfree`].
pub(crate) unsafe fn kfree_rcu_inner(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_rcu_inner(obj as *mut c_void) };
}

/// `kfree_rcu_nolock()` of such an object (see [`kfree_rcu_inner`]).
///
/// # Safety
///
/// As for [`kfree`].
pub(crate) unsafe fn kfree_rcu_nolock_inner(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_rcu_nolock_inner(obj as *mut c_void) };
}

/// A mempool, destroyed on drop: a slab pool on a kernel cache
/// (`mempool_create_slab_pool()`) or a pool of single pages (`mempool_create_page_pool()`).
///
/// # Invariants
///
/// `self.pool` is a live mempool; a slab pool's elements are objects of the cache it was
/// made on, which the borrow keeps alive.
pub(crate) struct Mempool<'a> {
    pool: NonNull<c_void>,
    _cache: core::marker::PhantomData<&'a KernelCache>,
}

impl<'a> Mempool<'a> {
    /// A pool holding `min_nr` elements of `kc` in reserve.
    pub(crate) fn slab(min_nr: i32, kc: &'a KernelCache) -> Result<Self> {
        // SAFETY: `kc` is a live cache, alive as long as the pool (the borrow).
        let p = unsafe { ffi::rslub_test_mempool_create(min_nr, kc.raw().as_ptr()) };
        // INVARIANT: a pool just made on `kc`.
        NonNull::new(p)
            .map(|pool| Self {
                pool,
                _cache: core::marker::PhantomData,
            })
            .ok_or(ENOMEM)
    }

    /// A pool holding `min_nr` single pages in reserve; its elements are `struct page`
    /// pointers.
    pub(crate) fn pages(min_nr: i32) -> Result<Self> {
        // SAFETY: No precondition.
        let p = unsafe { ffi::rslub_test_mempool_create_pages(min_nr) };
        // INVARIANT: a pool just made.
        NonNull::new(p)
            .map(|pool| Self {
                pool,
                _cache: core::marker::PhantomData,
            })
            .ok_or(ENOMEM)
    }

    /// `mempool_alloc()`: 0 only if `gfp` cannot wait.
    pub(crate) fn alloc(&self, gfp: crate::gfp::Gfp) -> usize {
        // SAFETY: A live pool (invariant).
        unsafe { ffi::rslub_test_mempool_alloc(self.pool.as_ptr(), gfp.raw()) }
    }

    /// `mempool_alloc_preallocated()`: one of the reserved elements, or 0.
    pub(crate) fn alloc_reserved(&self) -> usize {
        // SAFETY: A live pool (invariant).
        unsafe { ffi::rslub_test_mempool_alloc_preallocated(self.pool.as_ptr()) }
    }

    /// `mempool_free()`.
    ///
    /// # Safety
    ///
    /// `element` must be a live element of the pool's kind (an object of its cache, or
    /// a page), not used afterwards.
    pub(crate) unsafe fn free(&self, element: usize) {
        // SAFETY: A live pool (invariant), and the caller's guarantee.
        unsafe { ffi::rslub_test_mempool_free(self.pool.as_ptr(), element) };
    }

    /// `mempool_free_bulk()`: the pool takes the first elements it returns the number
    /// of (the function may reorder `elements`); the caller frees the others.
    ///
    /// # Safety
    ///
    /// As for [`Mempool::free`], for every element.
    pub(crate) unsafe fn free_bulk(&self, elements: &mut [usize]) -> usize {
        // SAFETY: A live pool (invariant), and the caller's guarantee.
        unsafe {
            ffi::rslub_test_mempool_free_bulk(
                self.pool.as_ptr(),
                elements.as_mut_ptr(),
                elements.len() as u32,
            ) as usize
        }
    }

    /// `mempool_resize()`.
    pub(crate) fn resize(&self, min_nr: i32) -> Result {
        // SAFETY: A live pool (invariant); nothing destroys it meanwhile (`&self`).
        to_result(unsafe { ffi::rslub_test_mempool_resize(self.pool.as_ptr(), min_nr) })
    }

    /// The number of elements held in reserve.
    pub(crate) fn reserved(&self) -> i32 {
        // SAFETY: A live pool (invariant).
        unsafe { ffi::rslub_test_mempool_reserved(self.pool.as_ptr()) }
    }
}

impl Drop for Mempool<'_> {
    fn drop(&mut self) {
        // SAFETY: A live pool (invariant), destroyed once; its elements go back to the cache.
        unsafe { ffi::rslub_test_mempool_destroy(self.pool.as_ptr()) };
    }
}

/// [`kfree_rcu_nolock_inner`] under a raw spinlock with interrupts off.
///
/// # Safety
///
/// As for [`kfree`].
pub(crate) unsafe fn kfree_rcu_nolock_inner_raw_locked(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kfree_rcu_nolock_inner_raw_locked(obj as *mut c_void) };
}

/// Whether `obj` is on a slab page (`page_slab()`): an object of the kernel's allocator,
/// or of rslub's, whose slabs are slab pages to the kernel (`rust/slab_page.c`).
pub(crate) fn on_slab_page(obj: usize) -> bool {
    // SAFETY: `virt_to_page()` and a page-type test on a direct-map address.
    unsafe { ffi::rslub_test_on_slab_page(obj as *const c_void) }
}

/// What code outside mm/slub.c reads of the slab page holding an object (`struct slab`
/// and its cache, `tests-kunit/shim.c`).
#[repr(C)]
pub(crate) struct SlabView {
    name: *const kernel::ffi::c_char,
    /// The cache's `size`: the stride of its objects.
    pub(crate) size: u32,
    pub(crate) object_size: u32,
    /// The slab's object count.
    pub(crate) objects: u32,
    pub(crate) order: u32,
    /// The folio's reference count.
    pub(crate) refcount: i32,
    /// `is_kmalloc_cache()`.
    pub(crate) kmalloc: bool,
    /// `slab_address()`.
    pub(crate) base: usize,
}

impl SlabView {
    /// The cache's name.
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: The name of a live cache, a NUL-terminated string that lives as long as
        // the cache, which outlives the view where the suites use it.
        unsafe { CStr::from_char_ptr(self.name) }
    }
}

/// The view of the slab page holding `obj`, a live object; `None` if it is no slab page.
pub(crate) fn slab_view(obj: usize) -> Option<SlabView> {
    let mut v = SlabView {
        name: core::ptr::null(),
        size: 0,
        object_size: 0,
        objects: 0,
        order: 0,
        refcount: 0,
        kmalloc: false,
        base: 0,
    };
    // SAFETY: `obj` is a direct-map address (a live object); `v` is valid for writes.
    unsafe { ffi::rslub_test_slab_view(obj as *const c_void, &mut v) }.then_some(v)
}

/// Where the kernel takes the object holding `p` to start (`nearest_obj()`), 0 if `p` is on
/// no slab page.
pub(crate) fn nearest_obj(p: usize) -> usize {
    // SAFETY: `p` is a direct-map address; the slab is only read.
    unsafe { ffi::rslub_test_nearest_obj(p as *const c_void) }
}

/// `kmem_dump_obj()`: whether the kernel finds `obj` on a slab (and prints what it knows).
pub(crate) fn kmem_dump_obj(obj: usize) -> bool {
    // SAFETY: `obj` is a live object; the function only reads.
    unsafe { ffi::rslub_test_kmem_dump_obj(obj as *mut c_void) }
}

/// Takes and puts the pages of `len` bytes at `obj` as a bvec iterator's user does
/// (`iov_iter_get_pages2()`, then `put_page()`): the folios' reference counts while they
/// were held, one per page.
pub(crate) fn bvec_get_put(obj: usize, len: usize) -> KVec<i32> {
    let mut counts = [0i32; 8];
    // SAFETY: `obj` is a live object of at least `len` bytes; `counts` is valid for 8
    // writes.
    let n =
        unsafe { ffi::rslub_test_bvec_get_put(obj as *mut c_void, len, counts.as_mut_ptr(), 8) };
    let mut v = KVec::new();
    for &c in &counts[..n.max(0) as usize] {
        v.push(c, GFP_KERNEL).expect("memory");
    }
    v
}

/// Direct calls (`rust/back/direct.S`): `None` where this kernel has none, else whether
/// the hooks registered now use them.
pub(crate) fn direct_state() -> Option<bool> {
    // SAFETY: No precondition.
    match unsafe { ffi::rslub_test_direct_state() } {
        -1 => None,
        s => Some(s != 0),
    }
}

/// The test module's `direct=` parameter.
pub(crate) fn direct_param() -> bool {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_direct_param() }
}

/// Whether the call sites of `kfree`, `kmem_cache_free` and `kmem_cache_alloc_noprof` each
/// jump to their trampoline.
pub(crate) fn direct_sites_patched() -> bool {
    // SAFETY: No precondition: reads kernel text.
    unsafe { ffi::rslub_test_direct_sites_patched() }
}

/// `kfree(obj)` through its trampoline, called directly (the function where there is none).
///
/// # Safety
///
/// As for [`kfree`].
pub(crate) unsafe fn direct_kfree(obj: usize) {
    // SAFETY: The caller's guarantee; the trampoline does what `kfree()` does.
    unsafe { ffi::rslub_test_direct_kfree(obj as *const c_void) };
}

/// `kmem_cache_free(kc, obj)` through its trampoline; see [`direct_kfree`].
///
/// # Safety
///
/// `obj` is a live object of `kc`'s, freed once.
pub(crate) unsafe fn direct_free(kc: &KernelCache, obj: usize) {
    // SAFETY: The caller's guarantee; the trampoline does what `kmem_cache_free()` does.
    unsafe { ffi::rslub_test_direct_free(kc.raw().as_ptr(), obj as *mut c_void) };
}

/// `kmem_cache_alloc(kc, gfp)` through its trampoline; see [`direct_kfree`].
pub(crate) fn direct_alloc(kc: &KernelCache, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: `kc` is a live cache; any flags.
    unsafe { ffi::rslub_test_direct_alloc(kc.raw().as_ptr(), gfp.raw()) }
}

/// `kmem_cache_alloc_node(kc, gfp, node)` through its trampoline; see [`direct_kfree`].
pub(crate) fn direct_alloc_node(kc: &KernelCache, gfp: crate::gfp::Gfp, node: i32) -> usize {
    // SAFETY: `kc` is a live cache; any flags, any node (NUMA_NO_NODE included).
    unsafe { ffi::rslub_test_direct_alloc_node(kc.raw().as_ptr(), gfp.raw(), node) }
}

/// Counts this task's calls of the trampolines' questions in C (`rslub_d_*()`) from now on
/// (`on`) or no more; returns the count since the last call, which restarts it.
pub(crate) fn direct_count(on: bool) -> usize {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_direct_count(on) }
}

/// A tracer (an ftrace_ops of the test module's) on `kfree`, `kmem_cache_free`,
/// `kmem_cache_alloc_noprof` and `kmem_cache_alloc_node_noprof` while the value lives: it
/// shares their call sites with the hooks.
///
/// # Invariants
///
/// The tracer is registered.
pub(crate) struct HotTracer(());

impl HotTracer {
    /// Registers the tracer.
    pub(crate) fn new() -> Result<Self> {
        // SAFETY: No precondition; only one `HotTracer` lives at a time (the suites run one
        // case at a time, and only one case makes one).
        to_result(unsafe { ffi::rslub_test_trace_hot(true) })?;
        // INVARIANT: Registered just above.
        Ok(Self(()))
    }

    /// The calls the tracer saw, of every task.
    pub(crate) fn calls(&self) -> i32 {
        // SAFETY: No precondition.
        unsafe { ffi::rslub_test_traced() }
    }
}

impl Drop for HotTracer {
    fn drop(&mut self) {
        // SAFETY: Registered (the type invariant); unregistered once, here.
        unsafe { ffi::rslub_test_trace_hot(false) };
    }
}

/// The module's reference count (`module_refcount(THIS_MODULE)`).
pub(crate) fn module_refcount() -> i32 {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_module_refcount() }
}

/// The calling task's allocations charged to a memory cgroup (`set_active_memcg()`) while
/// the value lives.
///
/// # Invariants
///
/// `self.0` came from `rslub_test_memcg_enter()` on this task, and is left on drop.
pub(crate) struct Memcg(NonNull<c_void>);

impl Memcg {
    /// Charges this task's allocations to the cgroup at `path` of the cgroup2 hierarchy;
    /// `ENOENT` if there is none with a memory controller of its own.
    pub(crate) fn enter(path: &CStr) -> Result<Self> {
        // SAFETY: `path` is a valid C string.
        let m = unsafe { ffi::rslub_test_memcg_enter(path.as_char_ptr()) };
        // INVARIANT: entered just now, on this task.
        NonNull::new(m).map(Self).ok_or(ENOENT)
    }

    /// The bytes charged to the cgroup (its `memory.current`).
    pub(crate) fn usage(&self) -> usize {
        // SAFETY: A cgroup entered (invariant).
        unsafe { ffi::rslub_test_memcg_usage(self.0.as_ptr()) }
    }
}

impl Drop for Memcg {
    fn drop(&mut self) {
        // SAFETY: Entered on this task (invariant), left once.
        unsafe { ffi::rslub_test_memcg_leave(self.0.as_ptr()) };
    }
}

/// `kmem_cache_charge(obj, gfp)`: charges an allocated object to the current memory
/// cgroup; false if the charge failed.
///
/// # Safety
///
/// `obj` must be a live object of a kmem cache.
pub(crate) unsafe fn kmem_cache_charge(obj: usize, gfp: crate::gfp::Gfp) -> bool {
    // SAFETY: A live object (caller).
    unsafe { ffi::rslub_test_kmem_cache_charge(obj as *mut c_void, gfp.raw()) }
}

/// Drops one reference of a cache as an alias's `kmem_cache_destroy()` does when others
/// are left (a `set_before_destroy()` callback).
///
/// # Safety
///
/// `kc` must be a live cache with more than one reference, none of them the caller's to
/// destroy afterwards.
pub(crate) unsafe extern "C" fn kc_drop_reference(kc: *mut kernel::bindings::kmem_cache) {
    // SAFETY: A live cache (caller).
    unsafe { ffi::rslub_test_kc_drop_reference(kc) };
}

/// `check_object_size(ptr, n, to_user)`: what `copy_to_user()` (`to_user`) or
/// `copy_from_user()` of `n` bytes at `ptr` checks of the kernel's side (hardened
/// usercopy), without a copy. A violation is reported, and then BUGs, unless
/// [`set_usercopy_caught`] set a function to call instead.
pub(crate) fn check_object_size(ptr: usize, n: usize, to_user: bool) {
    // SAFETY: Only checks the range; reads nothing of it.
    unsafe { ffi::rslub_test_check_object_size(ptr as *const c_void, n, to_user) };
}

/// An address of the direct map's region with no memmap behind it (its struct page
/// unmapped), or 0 where there is none to be found.
pub(crate) fn memmap_hole() -> usize {
    // SAFETY: No precondition; reads the memmap with a fault handler.
    unsafe { ffi::rslub_test_memmap_hole() }
}

/// The slot of the backing index that backs `kc` (as an allocation trampoline finds and
/// hands it on, not held), or 0.
#[cfg(rslub_inject)]
pub(crate) fn slot_of(kc: &KernelCache) -> usize {
    // SAFETY: A live cache.
    unsafe { ffi::rslub_test_slot_of(kc.raw().as_ptr()) }
}

/// Whether `kc`'s slot is at its first place in the backing index (an allocation
/// trampoline finds it there without probing further); false if it is not backed.
#[cfg(rslub_inject)]
pub(crate) fn slot_first(kc: &KernelCache) -> bool {
    // SAFETY: A live cache.
    unsafe { ffi::rslub_test_slot_first(kc.raw().as_ptr()) }
}

/// The first place of `kc`'s slot in the backing index (its hash), where the lookup's
/// probe starts, whether `kc` is backed or not.
pub(crate) fn slot_home(kc: &KernelCache) -> u32 {
    // SAFETY: A live cache; only its address is used.
    unsafe { ffi::rslub_test_slot_home(kc.raw().as_ptr()) }
}

/// How many caches of `kc`'s hash may hold rslub's objects, for `kmem_cache_free_bulk()`'s
/// quick test (`rslub_bulk_caches[]`, rust/back/index.c): a bulk free given a cache whose
/// count is 0 goes to the kernel without a look at its objects.
#[cfg(rslub_inject)]
pub(crate) fn bulk_count(kc: &KernelCache) -> u32 {
    // SAFETY: A live cache.
    unsafe { ffi::rslub_test_bulk_count(kc.raw().as_ptr()) }
}

/// [`bulk_count`] of kmalloc's own cache of 64 bytes.
#[cfg(rslub_inject)]
pub(crate) fn kmalloc_64_bulk_count() -> u32 {
    // SAFETY: No cache: the function takes kmalloc's, which lives as long as the kernel.
    unsafe { ffi::rslub_test_bulk_count(core::ptr::null_mut()) }
}

/// `kmem_cache_alloc()` from kmalloc's own cache of 64 bytes (`KMALLOC_NORMAL`): an object
/// of that very cache, whatever copies of it `kmalloc()` chooses among.
#[cfg(rslub_inject)]
pub(crate) fn kmalloc_64_cache_alloc(gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: Any flags.
    unsafe { ffi::rslub_test_kmalloc_64_cache_alloc(gfp.raw()) }
}

/// `kmem_cache_free_bulk()` given kmalloc's own cache of 64 bytes.
///
/// # Safety
///
/// Each object is a live object of that cache (or of its class, where rslub serves
/// kmalloc), freed once.
#[cfg(rslub_inject)]
pub(crate) unsafe fn kmalloc_64_free_bulk(objs: &mut [usize]) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kmalloc_64_free_bulk(objs.len(), objs.as_mut_ptr().cast()) }
}

/// A slot of the backing index held as a replacement holds it while it allocates: its
/// cache stays backed (unbacking waits) until the value is dropped, on whatever CPU.
#[cfg(rslub_inject)]
pub(crate) struct SlotHold(usize);

#[cfg(rslub_inject)]
impl SlotHold {
    /// Holds the slot backing `kc`; `None` if it is not backed.
    pub(crate) fn new(kc: &KernelCache) -> Option<Self> {
        // SAFETY: A live cache.
        let s = unsafe { ffi::rslub_test_slot_hold(kc.raw().as_ptr()) };
        (s != 0).then_some(Self(s))
    }
}

#[cfg(rslub_inject)]
impl Drop for SlotHold {
    fn drop(&mut self) {
        // SAFETY: Held by `new`, let go once.
        unsafe { ffi::rslub_test_slot_put(self.0) };
    }
}

/// `kmem_cache_alloc(kc, gfp)` as its trampoline serves it from `slot` (a value of
/// [`slot_of`]), with `stall_us` microseconds of busy waiting, preemption on, between the
/// trampoline's check of the slot and the fast path, `checked` set once the check passed;
/// `None` without direct calls, else the object (0: none, or the slot does not back `kc`).
#[cfg(rslub_inject)]
pub(crate) fn dr_alloc(
    kc: &KernelCache,
    gfp: crate::gfp::Gfp,
    slot: usize,
    stall_us: u32,
    checked: &AtomicBool,
) -> Option<usize> {
    // SAFETY: A live cache; the slot is one of the static array, checked before use;
    // `checked` outlives the call.
    let r = unsafe {
        ffi::rslub_test_dr_alloc(
            kc.raw().as_ptr(),
            gfp.raw(),
            slot,
            stall_us,
            checked.as_ptr(),
        )
    };
    (r != -(kernel::bindings::EOPNOTSUPP as isize)).then_some(r as usize)
}

/// Makes a hardened usercopy violation on an rslub object call `f` after its report,
/// instead of BUG (`None`: BUG). One test at a time sets it, and clears it before it ends.
pub(crate) fn set_usercopy_caught(f: Option<unsafe extern "C" fn()>) {
    // SAFETY: A pointer-sized store to a test-only hook that only the running test sets;
    // the report reads it once.
    unsafe { core::ptr::write_volatile(&raw mut ffi::rslub_test_usercopy_caught, f) };
}

/// Reads the byte at `addr` as a C user of it would, checked by KASAN (the suites' Rust
/// code is not instrumented), in a worker: a KASAN report there does not fail the running
/// test, which looks for it with [`log_has`].
///
/// # Safety
///
/// `addr` must be mapped (it may be a freed object, or past an object's end: the
/// mistakes KASAN is to catch).
pub(crate) unsafe fn read_byte(addr: usize) -> u8 {
    // SAFETY: Mapped (caller); a volatile byte read.
    unsafe { ffi::rslub_test_read_byte(addr as *const c_void) }
}

/// Whether the kernel log has a line containing `first` followed by one containing
/// `next`.
pub(crate) fn log_has(first: &CStr, next: &CStr) -> bool {
    // SAFETY: Two C strings.
    unsafe { ffi::rslub_test_log_has(first.as_char_ptr(), next.as_char_ptr()) }
}

/// Allocates an object of `kc` in a thread that exits at once, so that no stack keeps a
/// copy of the pointer; returns it bitwise inverted (`!0` on failure): a value kmemleak
/// does not take for a pointer. Never the first object of its slab, as a precaution
/// (tests-kunit/shim.c). With `link`, the object's first word
/// points at a new 64-byte kmalloc'ed object that nothing else refers to.
pub(crate) fn alloc_hidden(kc: &KernelCache, link: bool) -> usize {
    // SAFETY: `kc` is a live cache.
    unsafe { ffi::rslub_test_alloc_hidden(kc.raw().as_ptr(), link) }
}

/// kmalloc's entry points, called from the test module (see `tests-kunit/shim.c`): the
/// object, or 0. [`kmalloc`] has a size not known at build time, [`kmalloc_64`] and
/// [`kmalloc_512_node`] a constant one.
pub(crate) fn kmalloc(size: usize, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: Any size and flags.
    unsafe { ffi::rslub_test_kmalloc(size, gfp.raw()) }
}

/// `kmalloc_node()`; see [`kmalloc`].
pub(crate) fn kmalloc_node(size: usize, gfp: crate::gfp::Gfp, node: i32) -> usize {
    // SAFETY: Any size, flags and node.
    unsafe { ffi::rslub_test_kmalloc_node(size, gfp.raw(), node) }
}

/// `kmalloc_track_caller()`; see [`kmalloc`].
pub(crate) fn kmalloc_track_caller(size: usize, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: Any size and flags.
    unsafe { ffi::rslub_test_kmalloc_track_caller(size, gfp.raw()) }
}

/// `kmalloc(64, gfp)`; see [`kmalloc`].
pub(crate) fn kmalloc_64(gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: Any flags.
    unsafe { ffi::rslub_test_kmalloc_64(gfp.raw()) }
}

/// `sendpage_ok()` of the page of `obj`, a live object of the direct map.
pub(crate) fn sendpage_ok(obj: usize) -> bool {
    // SAFETY: `virt_to_page()` of a direct-map address; only reads its `struct page`.
    unsafe { ffi::rslub_test_sendpage_ok(obj) }
}

/// `kmalloc_node(512, gfp, node)`; see [`kmalloc`].
pub(crate) fn kmalloc_512_node(gfp: crate::gfp::Gfp, node: i32) -> usize {
    // SAFETY: Any flags and node.
    unsafe { ffi::rslub_test_kmalloc_512_node(gfp.raw(), node) }
}

/// `__kmalloc_cache_noprof(kc, gfp, size)` (`node` -1) or `__kmalloc_cache_node_noprof()`:
/// the constant-size entry points given a cache of the caller's choosing (which must hold
/// `size` bytes); see [`kmalloc`].
pub(crate) fn kmalloc_cache(
    kc: &KernelCache,
    gfp: crate::gfp::Gfp,
    size: usize,
    node: i32,
) -> usize {
    // SAFETY: `kc` is a live cache; any flags and node.
    unsafe { ffi::rslub_test_kmalloc_cache(kc.raw().as_ptr(), gfp.raw(), size, node) }
}

/// `kvmalloc()`; see [`kmalloc`].
pub(crate) fn kvmalloc(size: usize, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: Any size and flags.
    unsafe { ffi::rslub_test_kvmalloc(size, gfp.raw()) }
}

/// `kvrealloc()`: the new object (0 on failure, then `obj` is still live).
///
/// # Safety
///
/// `obj` must be 0 or a live object of kvmalloc; unless 0 is returned, it is not used
/// afterwards.
pub(crate) unsafe fn kvrealloc(obj: usize, size: usize, gfp: crate::gfp::Gfp) -> usize {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kvrealloc(obj as *const c_void, size, gfp.raw()) }
}

/// `kvfree()`.
///
/// # Safety
///
/// `obj` must be 0 or a live object of kvmalloc, not used afterwards.
pub(crate) unsafe fn kvfree(obj: usize) {
    // SAFETY: The caller's guarantee.
    unsafe { ffi::rslub_test_kvfree(obj as *const c_void) };
}

/// `kmalloc_size_roundup()`.
pub(crate) fn kmalloc_size_roundup(size: usize) -> usize {
    // SAFETY: Any size.
    unsafe { ffi::rslub_test_kmalloc_size_roundup(size) }
}

/// Whether `obj` is a vmalloc address.
pub(crate) fn is_vmalloc(obj: usize) -> bool {
    // SAFETY: Compares an address.
    unsafe { ffi::rslub_test_is_vmalloc(obj as *const c_void) }
}

/// Whether the kernel has memory cgroups (`__GFP_ACCOUNT` charges).
pub(crate) fn memcg() -> bool {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_memcg() }
}

/// Whether the slab metadata at `meta` is an object of rslub's metadata cache.
pub(crate) fn meta_from_kernel(meta: *const c_void) -> bool {
    // SAFETY: Reads the page of an address of the direct map.
    unsafe { ffi::rslub_test_meta_from_kernel(meta) }
}
