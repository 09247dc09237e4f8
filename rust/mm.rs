// SPDX-License-Identifier: GPL-2.0

//! Slab pages: allocation from the page allocator, the kernel's view of them, and the
//! O(1) way back from an object address to its slab.
//!
//! A slab is `2^order` pages from `alloc_pages()` or `__alloc_pages_node()`, one compound
//! block (`__GFP_COMP`) whose head's reference count is frozen at 0 while rslub holds it
//! (an order-0 slab keeps the count 1 it was allocated with, see [`SlabPages`]), typed
//! `PGTY_slab`: to the rest of the kernel a slab page as SLUB's are
//! (`rust/slab_page.c` says what it reads of one, and how rslub answers). The head page's
//! `struct slab` points at the cache's [`Shadow`], a `struct kmem_cache` describing its
//! objects, and its `slab_list.next` (`struct page`'s `lru.prev`, which only mm/slub.c
//! reads of a slab) at the slab's metadata. [`meta_of`] therefore finds a slab from any
//! address inside it with the direct-map arithmetic of `virt_to_page()`, the head page
//! from the page's `compound_info` (as `compound_head()`), and one load, and no call;
//! [`slab_if_of`] reads the head's cache, which the free slow path compares with its
//! own shadow, following no pointer, and its slab.
use crate::shim;
use crate::{gfp::Gfp, layout::Layout};
use core::{ffi::c_void, ptr::NonNull};
use kernel::{bindings, error::code::ENOSPC, page::PAGE_SHIFT, prelude::*};

mod ffi {
    use core::ffi::c_void;
    use kernel::ffi::c_char;

    extern "C" {
        pub(super) fn rslub_shadow_get(
            name: *const c_char,
            size: u32,
            object_size: u32,
            align: u32,
            offset: u32,
            inuse: u32,
            typesafe: bool,
            reclaim: bool,
            hwcache_align: bool,
            red_zone: bool,
            poison: bool,
        ) -> *mut c_void;
        pub(super) fn rslub_shadow_own(kc: *mut c_void, owner: *const c_void);
        pub(super) fn rslub_shadow_set_usercopy(kc: *mut c_void, offset: u32, size: u32);
        pub(super) fn rslub_shadow_set_kmalloc(kc: *mut c_void);
        pub(super) fn rslub_shadow_put(kc: *mut c_void);
        pub(super) fn rslub_slab_page_set(
            head: *mut c_void,
            kc: *mut c_void,
            meta: *const c_void,
            objects: u32,
        );
        pub(super) fn rslub_slab_page_clear(head: *mut c_void);
        pub(super) fn rslub_object_cache(x: *const c_void) -> *mut c_void;
        pub(super) fn rslub_view_exit();
    }
}

/// The kernel's description of an rslub cache's objects: the `struct kmem_cache` that the
/// `slab_cache` of the cache's slab pages points at (a shadow, `rust/slab_page.c`), whose
/// slot in the arena of shadows also says which rslub cache the slab is of.
///
/// # Invariants
///
/// `kc` is a slot of the arena that `rslub_shadow_get()` gave this value and that no
/// other value holds; it is given back when this value is dropped.
pub(crate) struct Shadow {
    kc: NonNull<c_void>,
}

// SAFETY: The slot is plain memory owned by this value; its writers take no lock that a
// thread holds.
unsafe impl Send for Shadow {}
// SAFETY: The setters write single words with `WRITE_ONCE()`, which readers anywhere read
// with `READ_ONCE()` or as plain fields of a cache's description.
unsafe impl Sync for Shadow {}

impl Shadow {
    /// A shadow for a cache named `name` (which must outlive it) with `layout`; `ENOSPC`
    /// when the arena's slots are all taken (as many as caches may live at once).
    pub(crate) fn new(name: &CStr, layout: &Layout) -> Result<Self> {
        // SAFETY: `name` is a NUL-terminated string that outlives the shadow (caller);
        // the rest are plain values.
        let kc = unsafe {
            ffi::rslub_shadow_get(
                name.as_char_ptr(),
                layout.size,
                layout.object_size,
                layout.align,
                layout.free_offset,
                layout.inuse,
                layout.typesafe_by_rcu,
                layout.reclaim_account,
                layout.hwcache_align,
                // Owner records after the object too: the kernel's ksize() then stops
                // at the object (SLAB_STORE_USER would have it read them as its tracks).
                layout.debug & (crate::layout::RED_ZONE | crate::layout::STORE_USER) != 0,
                layout.debug & crate::layout::POISON != 0,
            )
        };
        let Some(kc) = NonNull::new(kc) else {
            pr_err!(
                "cache {}: no shadow slot left (as many caches live as rslub holds)\n",
                name.to_str().unwrap_or("?")
            );
            return Err(ENOSPC);
        };
        // INVARIANT: a slot just taken for this value.
        Ok(Self { kc })
    }

    /// The address slab pages of the cache point at.
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.kc.as_ptr().cast_const().cast()
    }

    /// Names `owner` (the `CacheCore`) as the cache this shadow describes: what
    /// [`owner_of`] returns for its objects. Called before the cache makes a slab.
    pub(crate) fn own(&self, owner: *const u8) {
        // SAFETY: `kc` is this value's slot (type invariant).
        unsafe { ffi::rslub_shadow_own(self.kc.as_ptr(), owner.cast()) }
    }

    /// The usercopy window, for hardened usercopy's check of copies to or from user
    /// space (SLUB's `useroffset`, `usersize`).
    pub(crate) fn set_usercopy(&self, offset: u32, size: u32) {
        // SAFETY: As above.
        unsafe { ffi::rslub_shadow_set_usercopy(self.kc.as_ptr(), offset, size) }
    }

    /// Marks the cache as a kmalloc class (`SLAB_KMALLOC`), as KASAN's checks of kmalloc
    /// objects ask.
    pub(crate) fn set_kmalloc(&self) {
        // SAFETY: As above.
        unsafe { ffi::rslub_shadow_set_kmalloc(self.kc.as_ptr()) }
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        // SAFETY: `kc` is this value's slot, given back once; the cache it describes has
        // no slab left (its `CacheCore` is being dropped).
        unsafe { ffi::rslub_shadow_put(self.kc.as_ptr()) }
    }
}

/// The rslub cache (a `CacheCore`) owning `addr` if `addr` is inside one of rslub's slabs,
/// null for any other address: the way back from an object that reached `kfree()` or
/// `kmem_cache_free()` of a backed cache (see `rust/back/replace.c`). The page must be a slab
/// page whose cache is one of the arena's shadows.
pub(crate) fn owner_of(addr: *const u8) -> *const u8 {
    // SAFETY: Any address may be asked about; only direct-map ones are looked up.
    unsafe { ffi::rslub_object_cache(addr.cast()) }
        .cast_const()
        .cast()
}

/// At unload: the slabs of caches left behind stop being slab pages (`rust/slab_page.c`).
pub(crate) fn exit() {
    // SAFETY: No precondition; called once, at unload, after every cache that could go
    // went.
    unsafe { ffi::rslub_view_exit() }
}

/// `2^order` contiguous pages owned by rslub.
///
/// A compound block's count is frozen at 0, as 7.3's SLUB leaves its slabs: a tail page
/// is no slab page to `PageSlab()`, so `sendpage_ok()` refuses it for its count of 0
/// only, and `get_page()` (which warns on slab pages), `iov_iter` and speculative lookups
/// (`folio_try_get()`) take no reference on it. An order-0 slab keeps the count 1 it was
/// allocated with, as 6.12's slabs: `PageSlab()` answers for every use of its one page,
/// and the count is what `page_is_unmovable()` reads of a page that is not compound, so
/// that memory offlining of a block holding one fails at once ("unmovable"), where a count
/// of 0 (7.3's SLUB) has it taken for free and `offline_pages()` retry until a signal.
/// A speculative reference taken on it meanwhile (a pfn walker's `folio_try_get()`,
/// dropped with `folio_put()`) delays the page's return to the page allocator to its
/// holder's last put (Documentation/design.rst says what `put_page()` does instead).
///
/// # Invariants
///
/// `page` is the head of `2^order` pages allocated (compound if `order` > 0) from the
/// page allocator, not yet freed, its count frozen at 0 if `order` > 0 (holding our
/// reference if `order` is 0); `addr` is their direct-map
/// address; `pfmemalloc` is `page_is_pfmemalloc()` of `page` when it was allocated. While
/// [`SlabPages::set_owner`] has made them a slab page, their head is typed `PGTY_slab`.
pub(crate) struct SlabPages {
    page: NonNull<bindings::page>,
    addr: NonNull<u8>,
    order: u32,
    /// Read once, when allocated: the flag lives in `page->lru`, which the slab's
    /// `struct slab` overwrites. Kept here, in what would be padding, so
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
    /// Allocates `2^order` pages with exactly the flags `gfp`, which have `__GFP_COMP`
    /// ([`Gfp::for_pages`]): one compound block, preferably on `node` (`NUMA_NO_NODE`: where
    /// the task's memory policy says, as 6.12's `alloc_slab_page()`). See [`crate::gfp`]
    /// for the flags each attempt gets.
    /// The pages count as slab in their node's statistics while they live, reclaimable
    /// if `gfp` asks for reclaimable page blocks (a `SLAB_RECLAIM_ACCOUNT` cache's, as
    /// 6.12's `cache_vmstat_idx()`).
    pub(crate) fn alloc(node: i32, gfp: Gfp, order: u32) -> Option<Self> {
        let reclaimable = gfp.has(Gfp::RECLAIMABLE);
        let page = loop {
            let page = NonNull::new(shim::alloc_slab_pages(node, gfp.raw(), order))?;
            // SAFETY: The head of a block just allocated, not freed.
            if order == 0 || unsafe { shim::page_freeze(page) } {
                break page;
            }
            // A speculative reference (a lookup that saw the page before it was freed)
            // holds the block: its holder's last put frees it. The next block is another
            // one, and the allocation, which may be `__GFP_NOFAIL`, has not failed.
            // SAFETY: Allocated above with `order`, not frozen; ours but for that
            // reference.
            unsafe { bindings::__free_pages(page.as_ptr(), order) };
        };
        let addr = shim::page_address(page);
        shim::account_slab(page, order, reclaimable, 1);
        // INVARIANT: `page` was just allocated with `order`, compound and frozen if
        // `order` > 0; `addr` is its address.
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
    /// `page` must be the head of `2^order` pages, compound if `order` > 0, owned by the
    /// caller with the count 1 they were allocated with, that `__free_pages(page, order)`
    /// may free.
    #[cfg(rslub_inject)]
    pub(crate) unsafe fn from_raw(page: NonNull<bindings::page>, order: u32) -> Self {
        // SAFETY: The first page of a block the caller allocated; with the count 1 the
        // caller guarantees, a speculative reference is dropped soon, and the test that
        // gives the pages runs in process context.
        while order > 0 && !unsafe { shim::page_freeze(page) } {
            kernel::processor::cpu_relax();
        }
        let addr = shim::page_address(page);
        shim::account_slab(page, order, false, 1);
        // INVARIANT: the caller gives up `page`, the head of `2^order` pages, frozen if
        // `order` > 0, its reference ours if 0.
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

    /// Makes the pages a slab page of the cache `shadow` describes, holding `objects`
    /// objects, its metadata at `meta` (for [`meta_of`]), with `shadow` as its cache (for
    /// [`slab_if_of`] and the kernel's readers).
    pub(crate) fn set_owner(&mut self, meta: *const u8, shadow: *const u8, objects: u32) {
        // SAFETY: By the type invariant `page` is the head of our block, not yet a slab
        // page; `shadow` is a live shadow (caller).
        unsafe {
            ffi::rslub_slab_page_set(
                self.page.as_ptr().cast(),
                shadow.cast_mut().cast(),
                meta.cast(),
                objects,
            )
        }
    }
}

impl Drop for SlabPages {
    fn drop(&mut self) {
        // SAFETY: By the type invariant `page` is the head of our block; a plain page
        // again (if it was a slab page), as the page allocator expects it.
        unsafe { ffi::rslub_slab_page_clear(self.page.as_ptr().cast()) };
        shim::account_slab(self.page, self.order, self.reclaimable, -1);
        if self.order > 0 {
            // SAFETY: By the type invariant `page` is frozen by `shim::page_freeze` (its
            // order is above 0) and not unfrozen since.
            unsafe { shim::page_unfreeze(self.page) };
        }
        // SAFETY: By the type invariant `page` was allocated with `order` and not freed,
        // and holds our reference; this value is being dropped, so rslub refers to the
        // pages no more, and a speculative or stray reference keeps the block until it is
        // put.
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

/// The head page of `page`'s compound block, or `page` if it is none's tail
/// (`compound_head()`; `include/linux/page-flags.h`).
///
/// # Safety
///
/// `page` must be a valid `struct page`.
#[inline(always)]
unsafe fn head_of(page: *const bindings::page) -> *const bindings::page {
    // SAFETY: `page` is a valid `struct page` (caller).
    unsafe { head_from(page, compound_info(page)) }
}

/// The `compound_info` word of `page`: a tail's link to its head (bit 0 set), else, on a
/// slab page, its `slab_cache`.
///
/// # Safety
///
/// `page` must be a valid `struct page`.
#[inline(always)]
unsafe fn compound_info(page: *const bindings::page) -> usize {
    // SAFETY: `page` is a valid `struct page` (caller); `compound_info` is a plain word.
    unsafe {
        core::ptr::read_volatile(&raw const (*page).__bindgen_anon_1.__bindgen_anon_3.compound_info)
            as usize
    }
}

/// [`head_of`] `page`, whose `compound_info` word is `info`.
///
/// # Safety
///
/// `page` must be a valid `struct page`, `info` its `compound_info` as just read.
#[inline(always)]
unsafe fn head_from(page: *const bindings::page, info: usize) -> *const bindings::page {
    // With the vmemmap optimisation of HugeTLB pages (and `struct page` of 64 bytes), a
    // tail's info is a mask that takes its address to its head's; otherwise it is the
    // head's address with bit 0 set. Bit 0 is clear on every other page.
    // (`compound_info_has_mask()`.)
    if cfg!(CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP)
        && core::mem::size_of::<bindings::page>().is_power_of_two()
    {
        let mask = (info & 1).wrapping_sub(1) | info;
        (page as usize & mask) as *const bindings::page
    } else if info & 1 != 0 {
        (info - 1) as *const bindings::page
    } else {
        page
    }
}

/// The slab metadata pointer recorded by [`SlabPages::set_owner`] for the slab holding
/// `addr` (its head page's `slab_list.next`), as a `T`, the slab layer's type
/// (`crate::slab::slab_of`; this layer does not name it): meaningful only for an address
/// inside a slab whose pages rslub owns (an object handed out by one of its caches and not
/// yet freed); for any other direct-map address it is whatever word that page's head
/// holds there (the bulk frees read it for pointers that break their contract, before
/// [`crate::cache::CacheCore`]'s ownership check).
///
/// # Safety
///
/// `addr` must be a direct-map address.
#[inline(always)]
pub(crate) unsafe fn meta_of<T>(addr: *const u8) -> *mut T {
    // SAFETY: The caller guarantees `addr` is in the direct map, so its page is its
    // `struct page` (`virt_to_page()` on x86-64), always mapped, and so is its head.
    unsafe { meta_of_head(head_of(page_of(addr))) }
}

/// [`meta_of`] given the head page of the slab holding the address, as the direct-call
/// trampolines find it (`rust/back/direct.S`, `RSLUB_OWN_SLAB`).
///
/// # Safety
///
/// `head` must be the head page of a slab page (a valid `struct page`).
#[inline(always)]
pub(crate) unsafe fn meta_of_head<T>(head: *const bindings::page) -> *mut T {
    // SAFETY: A valid `struct page` (caller).
    unsafe {
        (*head)
            .__bindgen_anon_1
            .__bindgen_anon_1
            .__bindgen_anon_1
            .lru
            .prev
            .cast::<T>()
    }
}

/// The slab metadata (a `T`) of the slab page holding `addr` if that page's cache is `shadow`
/// (an object of the cache whose [`Shadow`] is at `shadow`): its head page's `slab_cache`
/// and [`meta_of`] from one head page, as the free slow path asks both. `None` also for a
/// page that rslub gave back but a speculative reference still holds
/// (`rslub_slab_page_clear()` leaves its cache, and clears the metadata pointer): a stale
/// pointer into it is no object.
///
/// # Safety
///
/// `addr` must be a direct-map address (of any page).
#[inline(always)]
pub(crate) unsafe fn meta_if_of<T>(addr: *const u8, shadow: *const u8) -> Option<*mut T> {
    // SAFETY: `addr` is in the direct map (caller), so its page and that page's head are
    // valid `struct page`s; `slab_cache` is `compound_info`'s word, plain, and the slab
    // pointer is read only from a slab page of `shadow`'s cache, where it is set.
    unsafe {
        let page = page_of(addr);
        let info = compound_info(page);
        // A page that is no tail (an order-0 slab's, a slab's first) holds its cache in
        // the word just read; a tail's head holds it.
        let (head, cache) = if info & 1 == 0 {
            (page, info)
        } else {
            let head = head_from(page, info);
            (head, compound_info(head))
        };
        if cache != shadow as usize {
            return None;
        }
        let slab = (*head)
            .__bindgen_anon_1
            .__bindgen_anon_1
            .__bindgen_anon_1
            .lru
            .prev
            .cast::<T>();
        (!slab.is_null()).then_some(slab)
    }
}
