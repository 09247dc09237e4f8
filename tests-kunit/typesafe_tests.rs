// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_typesafe`: caches whose freed objects lockless readers may still
//! look at (`layout::TYPESAFE_BY_RCU`, the kernel's `SLAB_TYPESAFE_BY_RCU`). The
//! guarantee itself: an object freed while a reader is inside `rcu_read_lock()` stays an
//! object of its cache, mapped and with its contents, however empty its slab becomes,
//! until the reader is gone and a grace period has passed; and what it costs elsewhere:
//! no poisoning or zeroing of freed objects, and a destruction that waits.

use kernel::prelude::*;

#[kunit_tests(rslub_typesafe)]
mod tests {
    use crate::{
        cache::{CacheArgs, CacheCore, NO_NODE},
        common::{alloc_n, args, free, pin, slabs, unpin},
        gfp::Gfp,
        inject,
        layout::TYPESAFE_BY_RCU,
        registry::Cache,
        sanitize, shim, slab,
    };
    use kernel::{prelude::*, sync::rcu};

    const SIZE: u32 = 192;
    const PATTERN: u8 = 0x5a;

    /// A `TYPESAFE_BY_RCU` cache of `SIZE`-byte objects whose empty slabs go back at once
    /// (`min_partial` 0, no per-CPU partial lists): the free that empties a slab that is
    /// no CPU's active slab gives it back.
    fn typesafe(name: &CStr) -> Cache {
        let c = Cache::create(&CacheArgs {
            flags: TYPESAFE_BY_RCU,
            ..args(name, SIZE)
        })
        .expect("cache");
        c.set_min_partial(0);
        c.set_cpu_partial(0);
        c
    }

    /// Fills the object at `p` with `PATTERN`.
    fn fill(p: usize) {
        // SAFETY: a live object of `SIZE` bytes owned by the test.
        unsafe { core::ptr::write_bytes(p as *mut u8, PATTERN, SIZE as usize) };
    }

    /// Whether every byte of the `SIZE` bytes at `p` is still `PATTERN`: read once each
    /// (volatile), as a lockless reader would.
    fn intact(p: usize) -> bool {
        // SAFETY: `p` is an object of a `TYPESAFE_BY_RCU` cache that the caller allocated,
        // freed or not; its memory is mapped while the caller's reader or the cache lives.
        (0..SIZE as usize).all(|i| unsafe { ((p + i) as *const u8).read_volatile() } == PATTERN)
    }

    /// The cache owning the slab page at `p`, or null.
    fn owner(p: usize) -> *const u8 {
        crate::mm::owner_of(p as *const u8)
    }

    /// Allocates a first slab's worth of objects and one more (a second slab, now the
    /// CPU's active one), on one CPU; returns them, those of the first slab first.
    fn two_slabs(c: &CacheCore) -> KVec<usize> {
        let per = c.layout().objects as usize;
        let objs = alloc_n(c, per + 1, NO_NODE);
        // SAFETY: live objects of `c`: their slabs are live.
        let slab_of = |p: usize| unsafe { slab::slab_of(p as *const u8) };
        let first = slab_of(objs[0]);
        assert!(objs[..per].iter().all(|&p| slab_of(p) == first));
        assert!(slab_of(objs[per]) != first);
        objs
    }

    #[test]
    fn freed_objects_stay_readable_until_a_grace_period_has_passed() {
        let c = typesafe(c"rslub_test_typesafe");
        let core: *const CacheCore = &*c;
        pin(0);
        let objs = two_slabs(&c);
        let per = objs.len() - 1;
        for &p in objs.iter() {
            fill(p);
        }
        assert_eq!(slabs(&c), 2);
        // Looked at inside the reader's section, asserted after it (a failed assertion
        // ends the test's thread, which must not hold the reader's lock then).
        let (slabs_left, kept, awaiting) = {
            let _reader = rcu::read_lock();
            for &p in &objs[..per] {
                free(&c, p);
            }
            let slabs_left = slabs(&c);
            let kept = objs[..per]
                .iter()
                .all(|&p| owner(p) == core.cast() && intact(p));
            (slabs_left, kept, slab::awaiting_grace_period())
        };
        // The slab emptied and was given back: its node no longer counts it...
        assert_eq!(slabs_left, 1);
        // ...but its pages were still its, and every object on them an object of the
        // cache with the contents it had (the free pointer lies after it).
        assert!(kept);
        assert!(awaiting >= 1);
        // The reader is gone: after the callbacks queued so far, the pages went back.
        shim::rcu_barrier();
        for &p in &objs[..per] {
            assert!(owner(p) != core.cast());
        }
        free(&c, objs[per]);
        unpin();
        c.destroy().expect("no object left");
    }

    #[test]
    fn destroying_waits_for_the_slabs_still_awaiting_a_grace_period() {
        let before = slab::awaiting_grace_period();
        let c = typesafe(c"rslub_test_typesafe_destroy");
        pin(0);
        let objs = two_slabs(&c);
        let per = objs.len() - 1;
        let awaiting = {
            // No grace period can end before the slab is given back.
            let _reader = rcu::read_lock();
            for &p in &objs[..per] {
                free(&c, p);
            }
            slab::awaiting_grace_period()
        };
        assert!(awaiting > before);
        free(&c, objs[per]);
        unpin();
        c.destroy().expect("no object left");
        // Both slabs' pages went back before `destroy` returned: the one given back by
        // the free after its grace period, the active one at once (other caches' slabs
        // may have gone meanwhile, none can have come: no other cache is in use).
        assert!(slab::awaiting_grace_period() <= before);
    }

    #[test]
    fn freed_objects_are_neither_zeroed_nor_poisoned() {
        // As `init_on_free=1 init_on_alloc=1` would make them: a plain cache's objects
        // are zeroed at both ends, a `TYPESAFE_BY_RCU` cache's at neither.
        inject::set_init_on(Some((true, true)));
        let plain = Cache::create(&args(c"rslub_test_typesafe_plain", SIZE));
        let c = Cache::create(&CacheArgs {
            flags: TYPESAFE_BY_RCU,
            ..args(c"rslub_test_typesafe_init", SIZE)
        });
        inject::set_init_on(None);
        let (plain, c) = (plain.expect("cache"), c.expect("cache"));
        pin(0);
        let p = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        fill(p);
        free(&c, p);
        assert!(intact(p));
        if sanitize::KASAN {
            // SAFETY: An object's address: direct map, which has a shadow.
            assert!(!unsafe { shim::kasan_poisoned(p as *const u8) });
        }
        // The same object again (no quarantine for it under KASAN), as it was.
        let q = c.alloc(Gfp::KERNEL).expect("object").as_ptr() as usize;
        assert_eq!(q, p);
        assert!(intact(q));
        free(&c, q);
        // Unless the caller asks for zeroes.
        let z = c
            .alloc(Gfp::KERNEL.with(Gfp::ZERO))
            .expect("object")
            .as_ptr() as usize;
        // SAFETY: a live object of `SIZE` bytes.
        assert!((0..SIZE as usize).all(|i| unsafe { *((z + i) as *const u8) } == 0));
        free(&c, z);

        let p = plain.alloc(Gfp::KERNEL).expect("object");
        // SAFETY: a live object of `SIZE` bytes.
        unsafe { core::ptr::write_bytes(p.as_ptr(), PATTERN, SIZE as usize) };
        // SAFETY: allocated above, freed once.
        unsafe { plain.free(p) };
        let q = plain.alloc(Gfp::KERNEL).expect("object");
        // SAFETY: a live object of `SIZE` bytes.
        assert!((0..SIZE as usize).all(|i| unsafe { *q.as_ptr().add(i) } == 0));
        // SAFETY: allocated above, freed once.
        unsafe { plain.free(q) };
        unpin();
    }
}
