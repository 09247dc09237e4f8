// SPDX-License-Identifier: GPL-2.0

//! Slab pages: allocation from the page allocator, and the O(1) way back from an object
//! address to its slab.
//!
//! A slab is `2^order` pages from `alloc_pages()` or `__alloc_pages_node()`, not compound, their reference
//! counts 0 while rslub holds them (the first page's frozen from the 1 it was allocated
//! with, as SLUB's slab pages are frozen): so `sendpage_ok()` refuses them, and zero-copy
//! senders copy slab objects instead of sending their page by reference. Every page of the
//! slab has its `struct page`'s `private` field pointing at the slab's metadata; the
//! page allocator hands pages out with `private` zero and leaves the field to the owner.
//! The page's index field (`__folio_index`, the file offset of page-cache pages) holds
//! that pointer xor the address of the owning cache, so that the free slow path can tell
//! a page of its own cache's slabs from any other page with two loads, an `xor` and a
//! compare, following no pointer ([`owning_cache`]).
//! [`slab_of`] therefore finds a slab from any address inside it with the direct-map
//! arithmetic of `virt_to_page()` and one load, and no call, as the free fast path needs.

use crate::shim;
use crate::{gfp::Gfp, slab::Slab};
use core::ptr::NonNull;
use kernel::{bindings, page::PAGE_SHIFT};

/// `2^order` contiguous pages owned by rslub.
///
/// # Invariants
///
/// `page` is the first of `2^order` pages allocated (not compound) from the page
/// allocator, not yet freed, its count frozen at 0; `addr` is their direct-map address;
/// `pfmemalloc` is `page_is_pfmemalloc()` of `page` when it was allocated.
pub(crate) struct SlabPages {
    page: NonNull<bindings::page>,
    addr: NonNull<u8>,
    order: u32,
    /// Read once, when allocated: the flag lives in `page->lru`, which the page
    /// allocator's next user may overwrite. Kept here, in what would be padding, so
    /// that a slab's metadata stays 96 bytes (not 128).
    pfmemalloc: bool,
    /// Whether the pages count as reclaimable slab (`NR_SLAB_RECLAIMABLE_B`) rather than
    /// unreclaimable in their node's statistics, from when they are allocated until they
    /// are freed. Also in what would be padding.
    reclaimable: bool,
}

// SAFETY: The pages are plain memory owned by whoever owns this value; nothing ties them
// to a thread.
unsafe impl Send for SlabPages {}

impl SlabPages {
    /// Allocates `2^order` pages with exactly the flags `gfp`, preferably on `node`
    /// (`NUMA_NO_NODE`: where the task's memory policy says, as 6.12's
    /// `alloc_slab_page()`). See [`crate::gfp`] for the flags each attempt
    /// gets.
    /// The pages count as slab in their node's statistics while they live, reclaimable
    /// if `gfp` asks for reclaimable page blocks (a `SLAB_RECLAIM_ACCOUNT` cache's, as
    /// 6.12's `cache_vmstat_idx()`).
    pub(crate) fn alloc(node: i32, gfp: Gfp, order: u32) -> Option<Self> {
        let reclaimable = gfp.has(Gfp::RECLAIMABLE);
        let page = loop {
            let page = NonNull::new(shim::alloc_slab_pages(node, gfp.raw(), order))?;
            // SAFETY: The first page of a block just allocated, not freed.
            if unsafe { shim::page_freeze(page) } {
                break page;
            }
            // A speculative reference (a lookup that saw the page before it was freed)
            // holds the first page: this frees the others, its holder's last put frees
            // the first. The next block is another one, and the allocation, which may be
            // `__GFP_NOFAIL`, has not failed.
            // SAFETY: Allocated above with `order`, not frozen; ours but for that
            // reference.
            unsafe { bindings::__free_pages(page.as_ptr(), order) };
        };
        let addr = shim::page_address(page);
        shim::account_slab(page, order, reclaimable, 1);
        // INVARIANT: `page` was just allocated with `order` and frozen; `addr` is its
        // address.
        Some(Self {
            page,
            addr,
            order,
            pfmemalloc: shim::page_is_pfmemalloc(page),
            reclaimable,
        })
    }

    /// Takes over `2^order` pages that a test allocated (`crate::inject::give_pages`).
    ///
    /// # Safety
    ///
    /// `page` must be the first of `2^order` pages, not compound, owned by the caller with
    /// the count 1 they were allocated with, that `__free_pages(page, order)` may free.
    #[cfg(rslub_inject)]
    pub(crate) unsafe fn from_raw(page: NonNull<bindings::page>, order: u32) -> Self {
        // SAFETY: The first page of a block the caller allocated; with the count 1 the
        // caller guarantees, a speculative reference is dropped soon, and the test that
        // gives the pages runs in process context.
        while !unsafe { shim::page_freeze(page) } {
            kernel::processor::cpu_relax();
        }
        let addr = shim::page_address(page);
        shim::account_slab(page, order, false, 1);
        // INVARIANT: the caller gives up `page`, the first of `2^order` pages, frozen.
        Self {
            page,
            addr,
            order,
            pfmemalloc: shim::page_is_pfmemalloc(page),
            reclaimable: false,
        }
    }

    /// Address of the first byte.
    pub(crate) fn addr(&self) -> NonNull<u8> {
        self.addr
    }

    /// Number of pages.
    pub(crate) fn nr_pages(&self) -> u64 {
        1 << self.order
    }

    /// The NUMA node the pages are on.
    pub(crate) fn node(&self) -> u32 {
        shim::page_to_nid(self.page)
    }

    /// Whether the pages came from the emergency reserves (`page_is_pfmemalloc()`).
    pub(crate) fn pfmemalloc(&self) -> bool {
        self.pfmemalloc
    }

    /// Whether `page` is one of these pages.
    pub(crate) fn contains(&self, page: *const bindings::page) -> bool {
        let first = self.page.as_ptr().cast_const();
        page >= first && page < first.wrapping_add(1 << self.order)
    }

    /// Points the `private` field of every page at `meta`, for [`slab_of`], and sets the
    /// index field to `meta ^ cache`, for [`owning_cache`]; nulls clear both.
    pub(crate) fn set_owner(&mut self, meta: *const u8, cache: *const u8) {
        let check = meta as usize ^ cache as usize;
        for i in 0..(1usize << self.order) {
            // SAFETY: By the type invariant the `2^order` `struct page`s starting at `page`
            // are ours (a non-compound block has consecutive `struct page`s); `private`
            // and the index are the owner's fields (the page allocator checks neither).
            unsafe {
                let p = &mut (*self.page.as_ptr().add(i))
                    .__bindgen_anon_1
                    .__bindgen_anon_1;
                p.private = meta as usize;
                p.__bindgen_anon_2.__folio_index = check;
            }
        }
    }
}

impl Drop for SlabPages {
    fn drop(&mut self) {
        self.set_owner(core::ptr::null(), core::ptr::null());
        shim::account_slab(self.page, self.order, self.reclaimable, -1);
        // SAFETY: By the type invariant `page` is frozen by `shim::page_freeze` and not
        // unfrozen since.
        unsafe { shim::page_unfreeze(self.page) };
        // SAFETY: By the type invariant `page` was allocated with `order` and not freed;
        // this value is being dropped, so rslub refers to the pages no more, and a stray
        // reference that `page_unfreeze` found keeps the first page until it is put.
        unsafe { bindings::__free_pages(self.page.as_ptr(), self.order) };
    }
}

/// The `struct page` of a direct-map address (`virt_to_page()`), as arithmetic.
#[inline(always)]
fn page_of(addr: *const u8) -> *const bindings::page {
    // SAFETY: `page_offset_base` and `vmemmap_base` are set once during early boot and
    // never written again.
    let (direct, vmemmap) = unsafe { (bindings::page_offset_base, bindings::vmemmap_base) };
    let pfn = (addr as usize).wrapping_sub(direct) >> PAGE_SHIFT;
    (vmemmap as *const bindings::page).wrapping_add(pfn)
}

/// The `private` field of the page holding `addr` and that page, for any direct-map
/// address: what [`SlabPages::set_owner`] recorded if the page is rslub's, anything
/// otherwise (the caller must validate it). `None` if `addr` is not a direct-map address
/// of a valid page.
pub(crate) fn page_private(addr: *const u8) -> Option<(usize, *const bindings::page)> {
    if !shim::virt_addr_valid(addr) {
        return None;
    }
    let page = page_of(addr);
    // SAFETY: `addr` is a valid direct-map address (checked), so `page` is its live
    // `struct page`; `private` is a plain word, read once.
    let private = unsafe {
        core::ptr::read_volatile(&raw const (*page).__bindgen_anon_1.__bindgen_anon_1.private)
    };
    Some((private as usize, page))
}

/// The slab metadata pointer recorded by [`SlabPages::set_owner`] for the page holding
/// `addr`: meaningful only for an address inside a slab whose pages rslub owns (an object
/// handed out by one of its caches and not yet freed); for any other direct-map address
/// it is whatever word that page's `private` holds (the bulk frees read it for pointers
/// that break their contract, before [`crate::cache::CacheCore`]'s ownership check).
///
/// # Safety
///
/// `addr` must be a direct-map address.
#[inline(always)]
pub(crate) unsafe fn slab_of(addr: *const u8) -> *mut Slab {
    let page = page_of(addr);
    // SAFETY: The caller guarantees `addr` is in the direct map, so `page` is its
    // `struct page` (`virt_to_page()` on x86-64), always mapped; `private` is a plain
    // word, ours for our slabs' pages.
    unsafe { (*page).__bindgen_anon_1.__bindgen_anon_1.private as *mut Slab }
}

/// The address of the cache owning the page that holds `addr` if it is a slab page of
/// rslub (`private ^ index`, see [`SlabPages::set_owner`]), or a value that is no live
/// cache's otherwise (0 for a page whose fields are clear). Nothing read is followed.
///
/// # Safety
///
/// `addr` must be a direct-map address (of any page).
#[inline(always)]
pub(crate) unsafe fn owning_cache(addr: *const u8) -> usize {
    let page = page_of(addr);
    // SAFETY: `addr` is in the direct map (caller), so `page` is its `struct page`; both
    // fields are plain words.
    unsafe {
        let p = &(*page).__bindgen_anon_1.__bindgen_anon_1;
        core::ptr::read_volatile(&raw const p.private)
            ^ core::ptr::read_volatile(&raw const p.__bindgen_anon_2.__folio_index)
    }
}
