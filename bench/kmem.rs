// SPDX-License-Identifier: GPL-2.0

//! The allocators the benchmarks compare, behind one trait: rslub through its C API, the
//! kernel's own `kmem_cache` (SLUB with sheaves, `SLAB_NO_MERGE`), a bare array (the
//! floor: a push and a pop, what any allocator must at least do), and, where every CPU
//! runs at once and the array cannot, nothing at all (the cost of the loop).
//!
//! rslub and the kernel are both reached by one direct call per operation
//! (`rslub_cache_alloc()` is never inlined; `kmem_cache_alloc_noprof()` is exported), so
//! the figures compare the allocators, not the calling conventions.

use crate::api;
use core::{ffi::c_void, hint::black_box, ptr};
use kernel::{bindings, prelude::*};

/// What a benchmark needs of an allocator.
pub(crate) trait Allocator {
    /// One object, or null.
    fn alloc(&self) -> *mut c_void;
    /// One object from `node`, or null.
    fn alloc_node(&self, node: i32) -> *mut c_void;
    /// Frees an object of this allocator.
    fn free(&self, p: *mut c_void);
    /// Fills `v`; false on failure.
    fn alloc_bulk(&self, v: &mut [*mut c_void]) -> bool;
    /// Frees all of `v`.
    fn free_bulk(&self, v: &mut [*mut c_void]);
}

/// The benchmarks time their runs with interrupts off, so nothing may sleep: both
/// allocators get `GFP_NOWAIT` (no direct reclaim, which these runs never need).
const GFP: u32 = bindings::GFP_NOWAIT;

/// rslub, through `include/rslub.h`.
pub(crate) struct Rslub(pub(crate) *mut c_void);

// SAFETY: A cache handle may be used from any CPU at once, as the C API allows.
unsafe impl Sync for Rslub {}

impl Allocator for Rslub {
    #[inline(always)]
    fn alloc(&self) -> *mut c_void {
        // SAFETY: `self.0` is a live cache handle.
        unsafe { api::rslub_cache_alloc(self.0, GFP) }
    }
    #[inline(always)]
    fn alloc_node(&self, node: i32) -> *mut c_void {
        // SAFETY: As above.
        unsafe { api::rslub_cache_alloc_node(self.0, GFP, node) }
    }
    #[inline(always)]
    fn free(&self, p: *mut c_void) {
        // SAFETY: `p` came from this cache (benchmark contract).
        unsafe { api::rslub_cache_free(self.0, p) }
    }
    fn alloc_bulk(&self, v: &mut [*mut c_void]) -> bool {
        // SAFETY: `v` has room for its length.
        unsafe { api::rslub_cache_alloc_bulk(self.0, GFP, v.len(), v.as_mut_ptr()) != 0 }
    }
    fn free_bulk(&self, v: &mut [*mut c_void]) {
        // SAFETY: `v` holds objects of this cache.
        unsafe { api::rslub_cache_free_bulk(self.0, v.len(), v.as_mut_ptr()) }
    }
}

extern "C" {
    fn rslub_bench_kc_create(
        name: *const kernel::ffi::c_char,
        size: u32,
    ) -> *mut bindings::kmem_cache;
    fn rslub_bench_set_direct(on: bool);
    fn rslub_bench_kc_attr(
        name: *const kernel::ffi::c_char,
        attr: *const kernel::ffi::c_char,
        v: *mut kernel::ffi::c_ulong,
    ) -> kernel::ffi::c_int;
}

/// Sets this module's `direct=` parameter: whether the hooks registered next use direct
/// calls (`rust/back/direct.S`).
pub(crate) fn set_direct(on: bool) {
    // SAFETY: No precondition.
    unsafe { rslub_bench_set_direct(on) }
}

/// The number in `/sys/kernel/slab/<name>/<attr>` of the kernel cache `name`.
pub(crate) fn kernel_slab_attr(name: &CStr, attr: &CStr) -> Result<u64> {
    let mut v = 0;
    // SAFETY: Valid C strings; the out-pointer is valid for a write.
    let r = unsafe { rslub_bench_kc_attr(name.as_char_ptr(), attr.as_char_ptr(), &mut v) };
    kernel::error::to_result(r)?;
    // `c_ulong` is 64 bits on x86-64.
    Ok(v as u64)
}

/// The bytes of slab pages the kernel cache named `name` holds, from SLUB's account in
/// `/sys/kernel/slab/<name>/` (its slabs times the pages of its order: what
/// `/proc/slabinfo` and `tools/mm/slabinfo` print).
pub(crate) fn kernel_slab_bytes(name: &CStr) -> Result<u64> {
    let slabs = kernel_slab_attr(name, c"slabs")?;
    let order = kernel_slab_attr(name, c"order")?;
    Ok(slabs * (u64::from(bindings::PAGE_SIZE as u32) << order))
}

/// The kernel's own kmem_cache.
pub(crate) struct Kernel(pub(crate) *mut bindings::kmem_cache);

// SAFETY: A kmem_cache may be used from any CPU at once.
unsafe impl Sync for Kernel {}

impl Kernel {
    /// A new, unmerged kernel cache of `size`-byte objects.
    pub(crate) fn new(name: &CStr, size: u32) -> Result<Self> {
        // SAFETY: `name` is a valid C string that outlives the cache (a literal).
        let c = unsafe { rslub_bench_kc_create(name.as_char_ptr(), size) };
        if c.is_null() {
            return Err(ENOMEM);
        }
        Ok(Self(c))
    }
}

impl Kernel {
    /// `kmem_cache_alloc_lru(cache, NULL, GFP)`.
    pub(crate) fn alloc_lru(&self) -> *mut c_void {
        // SAFETY: `self.0` is a live cache; no list_lru.
        unsafe { bindings::kmem_cache_alloc_lru_noprof(self.0, ptr::null_mut(), GFP) }
    }

    /// `kmem_cache_shrink()`: the CPUs' sheaves go back to the slabs, empty slabs go.
    pub(crate) fn shrink(&self) {
        // SAFETY: `self.0` is a live cache.
        unsafe { bindings::kmem_cache_shrink(self.0) };
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        // SAFETY: The cache was created by `new` and all its objects were freed.
        unsafe { bindings::kmem_cache_destroy(self.0) };
    }
}

impl Allocator for Kernel {
    #[inline(always)]
    fn alloc(&self) -> *mut c_void {
        // SAFETY: `self.0` is a live cache.
        unsafe { bindings::kmem_cache_alloc_noprof(self.0, GFP) }
    }
    #[inline(always)]
    fn alloc_node(&self, node: i32) -> *mut c_void {
        // SAFETY: As above.
        unsafe { bindings::kmem_cache_alloc_node_noprof(self.0, GFP, node) }
    }
    #[inline(always)]
    fn free(&self, p: *mut c_void) {
        // SAFETY: `p` came from this cache.
        unsafe { bindings::kmem_cache_free(self.0, p) }
    }
    fn alloc_bulk(&self, v: &mut [*mut c_void]) -> bool {
        // SAFETY: `v` has room for its length.
        unsafe { bindings::kmem_cache_alloc_bulk_noprof(self.0, GFP, v.len(), v.as_mut_ptr()) }
    }
    fn free_bulk(&self, v: &mut [*mut c_void]) {
        // SAFETY: `v` holds objects of this cache.
        unsafe { bindings::kmem_cache_free_bulk(self.0, v.len(), v.as_mut_ptr()) }
    }
}

/// The floor: a stack of preallocated slots; alloc pops, free pushes.
pub(crate) struct Floor {
    slots: core::cell::UnsafeCell<KVec<*mut c_void>>,
}

impl Floor {
    /// A floor with `n` slots pointing into `backing`.
    pub(crate) fn new(n: usize) -> Result<Self> {
        let mut v = KVec::with_capacity(n, GFP_KERNEL)?;
        for i in 0..n {
            v.push(ptr::without_provenance_mut(0x1000 + i * 64), GFP_KERNEL)?;
        }
        Ok(Self {
            slots: core::cell::UnsafeCell::new(v),
        })
    }
}

impl Allocator for Floor {
    #[inline(always)]
    fn alloc(&self) -> *mut c_void {
        // SAFETY: The floor is used by one CPU at a time.
        let v = unsafe { &mut *self.slots.get() };
        black_box(v.pop().unwrap_or(ptr::null_mut()))
    }
    #[inline(always)]
    fn alloc_node(&self, _node: i32) -> *mut c_void {
        self.alloc()
    }
    #[inline(always)]
    fn free(&self, p: *mut c_void) {
        // SAFETY: As above; capacity was reserved for every slot.
        let v = unsafe { &mut *self.slots.get() };
        let _ = v.push_within_capacity(black_box(p));
    }
    fn alloc_bulk(&self, out: &mut [*mut c_void]) -> bool {
        out.iter_mut().all(|o| {
            *o = self.alloc();
            !o.is_null()
        })
    }
    fn free_bulk(&self, v: &mut [*mut c_void]) {
        for &p in v.iter() {
            self.free(p);
        }
    }
}

/// No allocator: `alloc` returns a constant the compiler cannot see, `free` drops it.
/// What a benchmark loop costs around its calls.
pub(crate) struct Nothing;

impl Allocator for Nothing {
    #[inline(always)]
    fn alloc(&self) -> *mut c_void {
        black_box(ptr::without_provenance_mut(0x1000))
    }
    #[inline(always)]
    fn alloc_node(&self, _node: i32) -> *mut c_void {
        self.alloc()
    }
    #[inline(always)]
    fn free(&self, p: *mut c_void) {
        black_box(p);
    }
    fn alloc_bulk(&self, out: &mut [*mut c_void]) -> bool {
        out.fill(self.alloc());
        true
    }
    fn free_bulk(&self, v: &mut [*mut c_void]) {
        black_box(v);
    }
}
