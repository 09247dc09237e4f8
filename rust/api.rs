// SPDX-License-Identifier: GPL-2.0

//! The C API (`include/rslub.h`), for other modules; `rust/exports.c` exports it.
//!
//! A `struct rslub_cache *` is the address of the cache itself ([`CacheCore`]), so an
//! allocation from C reaches the fast path with no indirection. The functions are never
//! inlined, also into Rust callers in this crate: the benchmarks call them exactly as C
//! does.

use crate::{
    cache::{CacheArgs, CacheCore, Ctor, NO_NODE},
    gfp::Gfp,
    registry::Cache,
};
use core::{
    ffi::{c_int, c_uint, c_void},
    ptr::NonNull,
};
use kernel::{error::code::EBUSY, ffi::c_char, prelude::*};

/// `rslub_cache_create()`.
///
/// # Safety
///
/// `name` must be a valid NUL-terminated string; `ctor`, if given, must be safe to call
/// on any fresh object of the cache.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_create(
    name: *const c_char,
    size: c_uint,
    align: c_uint,
    flags: c_uint,
    ctor: Option<Ctor>,
) -> *mut c_void {
    if name.is_null() {
        return EINVAL.to_ptr();
    }
    // SAFETY: `name` is a valid C string (caller).
    let name = unsafe { CStr::from_char_ptr(name) };
    let args = CacheArgs {
        name,
        size,
        align,
        flags,
        ctor,
        freeptr_offset: None,
    };
    match Cache::create(&args) {
        Ok(c) => c.into_raw().as_ptr().cast(),
        Err(e) => e.to_ptr(),
    }
}

/// `rslub_cache_destroy()`.
///
/// # Safety
///
/// `s` must come from `rslub_cache_create()` and not have been destroyed; nothing may
/// use it afterwards.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_destroy(s: *mut c_void) -> c_int {
    let Some(core) = NonNull::new(s.cast::<CacheCore>()) else {
        return 0;
    };
    // SAFETY: `s` came from `Cache::into_raw` in `rslub_cache_create` (caller).
    match unsafe { Cache::from_raw(core) }.destroy() {
        Ok(()) => 0,
        Err(_) => EBUSY.to_errno(),
    }
}

/// The cache behind a C handle.
///
/// # Safety
///
/// `s` must come from `rslub_cache_create()` and not have been destroyed.
#[inline(always)]
unsafe fn cache<'a>(s: *mut c_void) -> &'a CacheCore {
    // SAFETY: A live handle is the address of a live cache (caller).
    unsafe { &*s.cast::<CacheCore>() }
}

/// `rslub_cache_alloc()`.
///
/// # Safety
///
/// `s` must be a live cache handle.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_alloc(s: *mut c_void, gfp: c_uint) -> *mut c_void {
    // SAFETY: live handle (caller).
    unsafe { cache(s) }
        .alloc_ptr(Gfp::from_raw(gfp), NO_NODE)
        .cast()
}

/// `rslub_cache_alloc_node()`.
///
/// # Safety
///
/// `s` must be a live cache handle.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_alloc_node(
    s: *mut c_void,
    gfp: c_uint,
    node: c_int,
) -> *mut c_void {
    // SAFETY: live handle (caller).
    unsafe { cache(s) }
        .alloc_ptr(Gfp::from_raw(gfp), node)
        .cast()
}

/// `rslub_cache_free()`.
///
/// # Safety
///
/// `s` must be a live cache handle, and `obj` null or an object allocated from it and
/// not freed since.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_free(s: *mut c_void, obj: *mut c_void) {
    // SAFETY: live handle, and null or an object of it (caller).
    unsafe { cache(s).free_ptr(obj.cast::<u8>()) };
}

/// `rslub_cache_alloc_bulk()`.
///
/// # Safety
///
/// `s` must be a live cache handle and `p` valid for writing `nr` pointers.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_alloc_bulk(
    s: *mut c_void,
    gfp: c_uint,
    nr: usize,
    p: *mut *mut c_void,
) -> c_int {
    if nr == 0 || p.is_null() {
        return 0;
    }
    // SAFETY: `p` is valid for `nr` pointers (caller); `*mut c_void` and `*mut u8` have
    // the same layout.
    let out = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr) };
    // SAFETY: live handle (caller).
    match unsafe { cache(s) }.alloc_bulk(Gfp::from_raw(gfp), out) {
        Ok(()) => c_int::try_from(nr).unwrap_or(c_int::MAX),
        Err(_) => 0,
    }
}

/// `rslub_cache_free_bulk()`.
///
/// # Safety
///
/// `s` must be a live cache handle and `p` hold `nr` objects allocated from it and not
/// freed since.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_free_bulk(
    s: *mut c_void,
    nr: usize,
    p: *mut *mut c_void,
) {
    if nr == 0 || p.is_null() {
        return;
    }
    // SAFETY: `p` holds `nr` pointers (caller), which the free may reorder, as SLUB's.
    let objs = unsafe { core::slice::from_raw_parts_mut(p.cast::<*mut u8>(), nr) };
    // SAFETY: live handle and objects of it (caller).
    unsafe { cache(s).free_bulk(objs) };
}

/// `rslub_cache_shrink()`.
///
/// # Safety
///
/// `s` must be a live cache handle.
#[no_mangle]
#[inline(never)]
pub(crate) unsafe extern "C" fn rslub_cache_shrink(s: *mut c_void) {
    // SAFETY: live handle (caller).
    unsafe { cache(s) }.shrink();
}
