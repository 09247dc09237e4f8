// SPDX-License-Identifier: GPL-2.0

//! Injection points: places in the allocator where a test can act at the worst instant
//! (move the task to another CPU between two reads of a fast path, hold a free path
//! while a cache is destroyed, make a page allocation fail, record the flags of one, or
//! give a cache's next slabs pages the test chose, [`give_pages`]).
//!
//! Only the KUnit module is built with `--cfg rslub_inject`. Everywhere else [`inject!`]
//! expands to `false` and evaluates nothing: `rslub.ko` and the benchmark module carry no
//! trace of it, not even a load.
//!
//! A test installs one hook at a time ([`install`]); the hook sees every point of every
//! cache of the module, in any context, and must filter by cache and point itself.

/// A place in the allocator, with what it is about to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Point {
    /// Free fast path: the transaction id was read, the active slab not yet.
    FreeTidRead,
    /// Free fast path: the active slab was read, the list head not yet.
    FreeSlabRead,
    /// Allocation fast path: the transaction id and the list head were read, the active
    /// slab's node not yet.
    AllocHeadRead,
    /// Allocation fast path: the node was read; the commit follows.
    AllocNodeRead,
    /// Free slow path: an empty slab is about to go back to the page allocator.
    FreeDiscard,
    /// Destruction: every CPU's active slab was given back; counting the live objects
    /// follows.
    ShutdownFlushed,
    /// Backing by name: a cache was found by its name (and is still watched); the check
    /// that it is live and backing it follow, under the backing lock.
    NameFound,
    /// The remote walk is about to look at node `0`.
    RemoteNode(u32),
    /// Slab pages are about to be allocated. A hook returning `true` makes it fail.
    PageAlloc {
        /// The `gfp_t` mask passed to the page allocator.
        gfp: u32,
        /// The page order.
        order: u32,
        /// The node asked for (`NUMA_NO_NODE`: any).
        node: i32,
    },
    /// Whole-kernel mode: kmalloc's size class of index `0` (in the order of the kernel's
    /// kmalloc caches) is about to be made. A hook returning `true` makes it fail.
    SizeClass(u32),
    /// Whole-kernel mode: every size class was made, kmalloc's hooks are about to be
    /// registered. A hook returning `true` makes the registration fail.
    KmallocHook,
    /// A slab's metadata is about to be allocated with `gfp`. A hook returning `true`
    /// makes it fail.
    MetaAlloc {
        /// The `gfp_t` mask passed to the metadata cache.
        gfp: u32,
    },
    /// A new slab's allocation carries flags no slab allocation may (`GFP_SLAB_BUG_MASK`),
    /// about to be reported and taken off. What the hook returns is not used.
    UnexpectedGfp {
        /// The bits reported.
        bad: u32,
    },
}

/// `inject!(cache, point)`: calls the installed hook with the address of `cache` and
/// `point`, and evaluates to whether the hook asks for a failure. Without
/// `--cfg rslub_inject`, evaluates to `false` and evaluates neither argument (they are
/// only type-checked, in a closure that is never called).
macro_rules! inject {
    ($cache:expr, $point:expr) => {{
        #[cfg(rslub_inject)]
        let fail = $crate::inject::hit(::core::ptr::from_ref($cache).cast(), $point);
        #[cfg(not(rslub_inject))]
        let fail = {
            let _ = || ($cache, $point);
            false
        };
        fail
    }};
}
pub(crate) use inject;

#[cfg(rslub_inject)]
pub(crate) use hooks::*;

#[cfg(rslub_inject)]
mod hooks {
    use super::Point;
    use crate::mm::SlabPages;
    use core::{
        marker::PhantomData,
        ptr::{self, NonNull},
        sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicUsize, Ordering::SeqCst},
    };
    use kernel::{bindings, error::code::EBUSY, prelude::*};

    /// An installed hook: a closure, type-erased.
    struct Hook {
        call: unsafe fn(*const (), usize, Point) -> bool,
        data: *const (),
    }

    /// The installed hook, or null.
    static HOOK: AtomicPtr<Hook> = AtomicPtr::new(ptr::null_mut());
    /// Calls of the hook in progress; [`Installed`] waits for none before it goes away.
    static ACTIVE: AtomicUsize = AtomicUsize::new(0);
    /// `init_on_alloc` and `init_on_free` as caches created now should see them: bit 2
    /// set means "pretend", bits 0 and 1 are the values.
    static INIT_ON: AtomicUsize = AtomicUsize::new(0);

    /// Makes caches created from now on see `init_on_alloc` and `init_on_free` as given
    /// (`None`: as the kernel was booted).
    pub(crate) fn set_init_on(v: Option<(bool, bool)>) {
        let bits = v.map_or(0, |(a, f)| 4 | usize::from(a) | (usize::from(f) << 1));
        INIT_ON.store(bits, SeqCst);
    }

    /// What [`set_init_on`] set.
    pub(crate) fn init_on() -> Option<(bool, bool)> {
        let bits = INIT_ON.load(SeqCst);
        (bits & 4 != 0).then_some((bits & 1 != 0, bits & 2 != 0))
    }

    /// Whether caches created now get a quarantine under KASAN: off in the test module
    /// but for the cases that turn it on (`rslub_sanitize`), as the other suites check
    /// which object comes next and what each free does at once.
    static QUARANTINE: AtomicBool = AtomicBool::new(false);

    /// Gives caches created from now on a quarantine under KASAN (`true`), or none.
    pub(crate) fn set_quarantine(on: bool) {
        QUARANTINE.store(on, SeqCst);
    }

    /// What [`set_quarantine`] set.
    pub(crate) fn quarantine() -> bool {
        QUARANTINE.load(SeqCst)
    }

    /// The cache whose next slabs take the pages of [`GIVEN`] (0: none), and their order.
    static GIVEN_TO: AtomicUsize = AtomicUsize::new(0);
    static GIVEN_ORDER: AtomicU32 = AtomicU32::new(0);
    /// Pages given by [`give_pages`] and not yet taken, in the order they are taken.
    static GIVEN: [AtomicPtr<bindings::page>; 2] = [
        AtomicPtr::new(ptr::null_mut()),
        AtomicPtr::new(ptr::null_mut()),
    ];

    /// Makes the next slabs of order `order` of the cache `cache` (as `CacheCore::id`
    /// gives it) take `pages`, in order, instead of pages from the page allocator: the
    /// way a test lays slabs out as fragmented memory would (say two slabs of the
    /// fallback order next to each other). Pages not taken by the end of the test stay
    /// the test's ([`take_back_pages`]).
    ///
    /// # Safety
    ///
    /// Each page must be the head of `2^order` pages the caller owns, compound if `order`
    /// is above 0,
    /// that `__free_pages(page, order)` may free; the caller gives them up to the cache
    /// until [`take_back_pages`].
    pub(crate) unsafe fn give_pages(cache: usize, order: u32, pages: [NonNull<bindings::page>; 2]) {
        GIVEN_TO.store(0, SeqCst);
        GIVEN_ORDER.store(order, SeqCst);
        for (slot, page) in GIVEN.iter().zip(pages) {
            slot.store(page.as_ptr(), SeqCst);
        }
        GIVEN_TO.store(cache, SeqCst);
    }

    /// Ends [`give_pages`]; returns how many of the pages were taken (the others are the
    /// caller's again).
    pub(crate) fn take_back_pages() -> usize {
        GIVEN_TO.store(0, SeqCst);
        GIVEN
            .iter()
            .filter(|slot| slot.swap(ptr::null_mut(), SeqCst).is_null())
            .count()
    }

    /// The next page [`give_pages`] gave for a slab of `order` of `cache`, if any.
    pub(crate) fn take_given_pages(cache: usize, order: u32) -> Option<SlabPages> {
        if GIVEN_TO.load(SeqCst) != cache || GIVEN_ORDER.load(SeqCst) != order {
            return None;
        }
        let page = GIVEN
            .iter()
            .find_map(|slot| NonNull::new(slot.swap(ptr::null_mut(), SeqCst)))?;
        // SAFETY: `give_pages`' caller gave up `page`, the first of `2^order` pages fit
        // for `__free_pages(page, order)`; the swap took it from the table, so once only.
        Some(unsafe { SlabPages::from_raw(page, order) })
    }

    /// Calls the installed hook, if any. See [`inject!`](super::inject).
    pub(crate) fn hit(cache: *const u8, point: Point) -> bool {
        if HOOK.load(SeqCst).is_null() {
            return false;
        }
        // Announce the call before looking at the hook again: `Installed::drop` clears
        // the hook, then waits until no call is in progress, so a call that sees the
        // hook runs before the hook is freed.
        ACTIVE.fetch_add(1, SeqCst);
        let h = HOOK.load(SeqCst);
        let fail = if h.is_null() {
            false
        } else {
            // SAFETY: `h` is the live `Hook` of an `Installed`, which cannot be freed while
            // `ACTIVE` counts this call; `call` matches `data` (set together by `install`).
            unsafe { ((*h).call)((*h).data, cache as usize, point) }
        };
        ACTIVE.fetch_sub(1, SeqCst);
        fail
    }

    /// The hook of [`install`]; removed (after waiting for calls in progress) on drop.
    pub(crate) struct Installed<'a> {
        hook: KBox<Hook>,
        _f: PhantomData<&'a ()>,
    }

    /// Removes the hook `p` if it is still the installed one, and waits until no call of
    /// it is in progress. Run by [`Installed::drop`], and at the end of the test that
    /// installed it (a failed assertion ends the test's thread without running `drop`).
    ///
    /// # Safety
    ///
    /// Only compares `p` with the installed hook; never dereferences it.
    unsafe extern "C" fn uninstall(p: *mut core::ffi::c_void) {
        let _ = HOOK.compare_exchange(p.cast(), ptr::null_mut(), SeqCst, SeqCst);
        while ACTIVE.load(SeqCst) != 0 {
            core::hint::spin_loop();
        }
    }

    /// Installs `f` as the hook: it is called with the cache's address (as
    /// `CacheCore::id` gives it) and the point, in
    /// whatever context the point is reached, until the returned value is dropped. Fails
    /// with `EBUSY` if a hook is installed already.
    pub(crate) fn install<F>(f: &F) -> Result<Installed<'_>>
    where
        F: Fn(usize, Point) -> bool + Sync,
    {
        /// # Safety
        ///
        /// `data` must be a live `&F`.
        unsafe fn call<F: Fn(usize, Point) -> bool>(
            data: *const (),
            cache: usize,
            point: Point,
        ) -> bool {
            // SAFETY: `data` is the `&F` given to `install`, alive while installed.
            unsafe { (*data.cast::<F>())(cache, point) }
        }
        let mut hook = KBox::new(
            Hook {
                call: call::<F>,
                data: ptr::from_ref(f).cast(),
            },
            GFP_KERNEL,
        )?;
        let p: *mut Hook = &mut *hook;
        HOOK.compare_exchange(ptr::null_mut(), p, SeqCst, SeqCst)
            .map_err(|_| EBUSY)?;
        // SAFETY: `uninstall` only compares `p`; it runs when the test ends, after the
        // test's thread (whose stack holds `f`) has stopped calling anything.
        unsafe { crate::test_shim::defer(uninstall, p.cast()) }?;
        Ok(Installed {
            hook,
            _f: PhantomData,
        })
    }

    impl Drop for Installed<'_> {
        fn drop(&mut self) {
            let p: *mut Hook = &mut *self.hook;
            // SAFETY: `uninstall` only compares `p`.
            unsafe { uninstall(p.cast()) };
        }
    }
}
