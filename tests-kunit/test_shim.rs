// SPDX-License-Identifier: GPL-2.0

//! Safe wrappers of the C helpers only the suites use (`tests-kunit/shim.c`).

use core::{ffi::c_void, ptr::NonNull};
use kernel::{cpu::CpuId, error::to_result, prelude::*};

mod ffi {
    use core::ffi::c_void;

    extern "C" {
        pub(super) fn rslub_test_virt_to_page(addr: *const c_void) -> *mut c_void;
        pub(super) fn rslub_test_pin_current(cpu: i32) -> i32;
        pub(super) fn rslub_test_now_ns() -> u64;
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
    }
}

/// The NUMA node of the page holding `addr`, by the kernel's own `virt_to_page()`.
pub(crate) fn node_of(addr: usize) -> u32 {
    // SAFETY: `virt_to_page()` is arithmetic on a direct-map address.
    let page = unsafe { ffi::rslub_test_virt_to_page(addr as *const c_void) };
    crate::shim::page_to_nid(NonNull::new(page.cast()).expect("a page"))
}

/// The `struct page` of `addr`, by the kernel's own `virt_to_page()`.
pub(crate) fn virt_to_page(addr: usize) -> usize {
    // SAFETY: As above.
    unsafe { ffi::rslub_test_virt_to_page(addr as *const c_void) as usize }
}

/// Moves the current task to `cpu` and keeps it there, or lets it run anywhere (`None`).
pub(crate) fn pin_current(cpu: Option<CpuId>) -> Result {
    let c = cpu.map_or(-1, |c| c.as_u32() as i32);
    // SAFETY: `set_cpus_allowed_ptr()` on the current task with a valid mask.
    to_result(unsafe { ffi::rslub_test_pin_current(c) })
}

/// Monotonic nanoseconds (`ktime_get_ns()`).
pub(crate) fn now_ns() -> u64 {
    // SAFETY: No precondition.
    unsafe { ffi::rslub_test_now_ns() }
}

/// A kernel thread bound to a CPU, running a closure; joined when dropped.
pub(crate) struct Thread {
    task: *mut c_void,
}

impl Thread {
    /// Starts `f` in a kernel thread bound to `cpu`.
    ///
    /// # Safety
    ///
    /// `f` must stay valid and not move until the returned value has been dropped (which
    /// waits for the thread), and the returned value must not be leaked.
    pub(crate) unsafe fn start<F: Fn() + Sync>(f: &F, cpu: CpuId) -> Result<Self> {
        /// # Safety
        ///
        /// `arg` must be a valid `&F`, and this must run in the kthread.
        unsafe extern "C" fn trampoline<F: Fn()>(arg: *mut c_void) -> i32 {
            // SAFETY: `arg` is the `&F` given to `start`, valid until `stop` (caller).
            let f = unsafe { &*arg.cast::<F>() };
            f();
            // A kthread must not exit before `kthread_stop()`.
            // SAFETY: Called from the kthread itself.
            unsafe { ffi::rslub_test_wait_for_stop() };
            0
        }
        // SAFETY: The trampoline matches the C signature; `f` outlives the thread (caller).
        let task = unsafe {
            ffi::rslub_test_thread_start(
                trampoline::<F>,
                core::ptr::from_ref(f).cast_mut().cast(),
                cpu.as_u32() as i32,
            )
        };
        if task.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { task })
    }
}

impl Drop for Thread {
    /// Waits for the closure to finish and the thread to exit.
    fn drop(&mut self) {
        // SAFETY: `task` is a started kthread that waits for `kthread_stop()`.
        unsafe { ffi::rslub_test_thread_stop(self.task) };
    }
}

/// A timer calling a closure every jiffy in softirq context on one CPU; stopped (and
/// waited for) when dropped.
pub(crate) struct Tick {
    k: *mut c_void,
}

impl Tick {
    /// Starts calling `f` on `cpu`.
    ///
    /// # Safety
    ///
    /// `f` must stay valid and not move until the returned value has been dropped, and the
    /// returned value must not be leaked.
    pub(crate) unsafe fn start<F: Fn() + Sync>(f: &F, cpu: CpuId) -> Result<Self> {
        /// # Safety
        ///
        /// `arg` must be a valid `&F`.
        unsafe extern "C" fn trampoline<F: Fn()>(arg: *mut c_void) {
            // SAFETY: `arg` is the `&F` given to `start`, valid until the drop (caller).
            let f = unsafe { &*arg.cast::<F>() };
            f();
        }
        // SAFETY: The trampoline matches the C signature; `f` outlives the timer (caller).
        let k = unsafe {
            ffi::rslub_test_tick_start(
                trampoline::<F>,
                core::ptr::from_ref(f).cast_mut().cast(),
                cpu.as_u32() as i32,
            )
        };
        if k.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self { k })
    }
}

impl Drop for Tick {
    fn drop(&mut self) {
        // SAFETY: `k` is a started tick; this stops it and waits for a running callback.
        unsafe { ffi::rslub_test_tick_stop(self.k) };
    }
}
