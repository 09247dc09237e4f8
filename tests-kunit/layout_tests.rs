// SPDX-License-Identifier: GPL-2.0

//! KUnit suite `rslub_layout`: object stride, alignment, free pointer placement, slab
//! order, objects per slab, waste and `min_partial`, against values worked out by hand
//! and against a direct reading of the order rule.

use kernel::prelude::*;

#[kunit_tests(rslub_layout)]
mod tests {
    use crate::layout::{
        min_partial_for, ExactIndex, Layout, OrderRules, HWCACHE_ALIGN, MAX_PAGE_ORDER, PAGE_SIZE,
        POISON, RED_ZONE, SANITY, TYPESAFE_BY_RCU,
    };
    use core::num::NonZeroU32;

    const DEFAULT_RULES: OrderRules = OrderRules {
        min_order: 0,
        max_order: 3,
        // 4 CPUs: 4 * (fls(4) + 1).
        min_objects: 16,
    };

    fn layout(size: u32, rules: OrderRules) -> Layout {
        Layout::new(size, 0, 0, false, None, 64, rules).expect("valid layout")
    }

    /// The rule of the issue, read literally: min_objects capped by what fits in
    /// max_order; the smallest order from max(min_order, order of min_objects * size) to
    /// max_order whose leftover is at most 1/16, then 1/8, 1/4, 1/2 of the slab; else the
    /// order of one object.
    fn reference_order(size: u32, r: OrderRules) -> u32 {
        let bytes = |order: u32| PAGE_SIZE << order;
        let order_of = |n: u64| {
            let mut o = 0;
            while u64::from(bytes(o)) < n {
                o += 1;
            }
            o
        };
        let fit_at_max = (bytes(r.max_order) / size).max(1);
        let min_objects = r.min_objects.min(fit_at_max);
        let lowest = r
            .min_order
            .max(order_of(u64::from(min_objects) * u64::from(size)));
        for fraction in [16, 8, 4, 2] {
            for order in lowest..=r.max_order {
                if bytes(order) % size <= bytes(order) / fraction {
                    return order;
                }
            }
        }
        order_of(u64::from(size))
    }

    #[test]
    fn hand_computed_table() {
        // (size, rules, stride, order, objects, waste), worked out by hand.
        let seed001_small = OrderRules {
            min_order: 0,
            max_order: 1,
            min_objects: 4,
        };
        let seed001_big = OrderRules {
            min_order: 0,
            max_order: 3,
            min_objects: 16,
        };
        let min_order_2 = OrderRules {
            min_order: 2,
            max_order: 3,
            min_objects: 16,
        };
        let table: [(u32, OrderRules, u32, u32, u32, u32); 11] = [
            (8, DEFAULT_RULES, 8, 0, 512, 0),
            (1, DEFAULT_RULES, 8, 0, 512, 0),
            (64, DEFAULT_RULES, 64, 0, 64, 0),
            (192, DEFAULT_RULES, 192, 0, 21, 64),
            (700, DEFAULT_RULES, 704, 2, 23, 192),
            (1024, DEFAULT_RULES, 1024, 2, 16, 0),
            (4096, DEFAULT_RULES, 4096, 3, 8, 0),
            (65536, DEFAULT_RULES, 65536, 4, 1, 0),
            (512, seed001_small, 512, 0, 8, 0),
            (512, seed001_big, 512, 1, 16, 0),
            (64, min_order_2, 64, 2, 256, 0),
        ];
        for (size, rules, stride, order, objects, waste) in table {
            let l = layout(size, rules);
            assert_eq!(
                (size, l.size, l.order, l.objects, l.waste()),
                (size, stride, order, objects, waste)
            );
        }
    }

    #[test]
    fn order_matches_the_rule_for_many_sizes_and_parameters() {
        let rule_sets = [
            DEFAULT_RULES,
            OrderRules {
                min_order: 0,
                max_order: 1,
                min_objects: 4,
            },
            OrderRules {
                min_order: 1,
                max_order: 3,
                min_objects: 32,
            },
            OrderRules {
                min_order: 0,
                max_order: 0,
                min_objects: 8,
            },
            OrderRules {
                min_order: 0,
                max_order: 5,
                min_objects: 12,
            },
        ];
        for rules in rule_sets {
            let mut size = 8;
            while size <= 16384 {
                let l = layout(size, rules);
                assert_eq!((size, l.order), (size, reference_order(size, rules)));
                assert_eq!(l.objects, (PAGE_SIZE << l.order) / size);
                size += 8;
            }
        }
    }

    #[test]
    fn stride_alignment_and_free_pointer() {
        for size in 1..=8192u32 {
            for align in [0u32, 8, 16, 64, 256] {
                let l = Layout::new(size, align, 0, false, None, 64, DEFAULT_RULES).expect("valid");
                assert!(l.size >= size);
                assert_eq!(l.size % 8, 0);
                assert_eq!(l.size % align.max(8), 0);
                assert_eq!(l.align % align.max(8), 0);
                assert_eq!(l.free_offset % 8, 0);
                assert!(l.free_offset + 8 <= l.size);
                assert!(l.free_offset <= size / 2);
            }
        }
    }

    #[test]
    fn constructor_moves_free_pointer_out_of_the_object() {
        let l = Layout::new(24, 0, 0, true, None, 64, DEFAULT_RULES).expect("valid");
        assert_eq!((l.free_offset, l.size), (24, 32));
        let l = Layout::new(20, 0, 0, true, None, 64, DEFAULT_RULES).expect("valid");
        assert_eq!((l.free_offset, l.size), (24, 32));
    }

    #[test]
    fn typesafe_by_rcu_keeps_the_free_pointer_out_of_the_object_unless_told_where() {
        let new =
            |size, flags, offset| Layout::new(size, 0, flags, false, offset, 64, DEFAULT_RULES);
        // After the object, as with a constructor.
        let l = new(24, TYPESAFE_BY_RCU, None).expect("valid");
        assert_eq!((l.free_offset, l.size, l.typesafe_by_rcu), (24, 32, true));
        // Where the cache says (`freeptr_offset`), costing no word.
        let l = new(24, TYPESAFE_BY_RCU, Some(8)).expect("valid");
        assert_eq!((l.free_offset, l.size), (8, 24));
        let l = new(20, TYPESAFE_BY_RCU, Some(16)).expect("valid");
        assert_eq!((l.free_offset, l.size), (16, 24));
        // Poisoning would overwrite what readers look at: dropped, as with a constructor,
        // and the free pointer goes after the object even with an offset, as in SLUB.
        let l = new(64, TYPESAFE_BY_RCU | POISON | SANITY, None).expect("valid");
        assert_eq!(l.debug, SANITY);
        assert!(l.free_offset >= 64);
        let l = new(64, TYPESAFE_BY_RCU | POISON, Some(8)).expect("valid");
        assert_eq!((l.debug, l.free_offset), (0, 64));
        // A red zone puts the free pointer after the object even with an offset.
        let l = new(64, TYPESAFE_BY_RCU | RED_ZONE, Some(8)).expect("valid");
        assert!(l.free_offset >= l.inuse);
        // An offset must be pointer aligned, inside the object, and only for such caches
        // (as `kmem_cache_create()` refuses it).
        assert!(new(24, TYPESAFE_BY_RCU, Some(4)).is_err());
        assert!(new(24, TYPESAFE_BY_RCU, Some(24)).is_err());
        assert!(new(24, 0, Some(8)).is_err());
        // Without the flag nothing changes.
        assert!(!new(24, 0, None).expect("valid").typesafe_by_rcu);
    }

    #[test]
    fn hardware_cacheline_alignment() {
        // The cache line, halved while the object fits twice: 20 bytes -> 32.
        let l = Layout::new(20, 0, HWCACHE_ALIGN, false, None, 64, DEFAULT_RULES).expect("valid");
        assert_eq!((l.align, l.size), (32, 32));
        let l = Layout::new(40, 0, HWCACHE_ALIGN, false, None, 64, DEFAULT_RULES).expect("valid");
        assert_eq!((l.align, l.size), (64, 64));
        let l = Layout::new(8, 0, HWCACHE_ALIGN, false, None, 64, DEFAULT_RULES).expect("valid");
        assert_eq!((l.align, l.size), (8, 8));
    }

    /// An alignment above a page (kmalloc-8k's 8 KiB): the stride is a multiple of it,
    /// also once KASAN's red zone grows it, and a slab holds whole strides, so every
    /// object is aligned in a slab whose block is aligned to its size.
    #[test]
    fn an_alignment_above_a_page_is_a_multiple_of_the_stride() {
        let l = Layout::new(8192, 8192, 0, false, None, 64, DEFAULT_RULES).expect("layout");
        assert_eq!((l.align, l.size), (8192, 8192));
        let r = l
            .with_red_zone(crate::sanitize::red_zone(8192), DEFAULT_RULES)
            .expect("red zone");
        assert_eq!(r.size, 16384);
        assert!((PAGE_SIZE << r.order) >= r.size);
        let l = Layout::new(64, 1 << 16, 0, false, None, 64, DEFAULT_RULES).expect("layout");
        assert_eq!((l.size, l.objects), (1 << 16, (PAGE_SIZE << l.order) >> 16));
    }

    #[test]
    fn invalid_arguments_are_refused() {
        let bad =
            |size, align, flags| Layout::new(size, align, flags, false, None, 64, DEFAULT_RULES);
        assert!(bad(0, 0, 0).is_err());
        assert!(bad(64, 3, 0).is_err());
        assert!(bad(64, 24, 0).is_err());
        assert!(bad(64, (PAGE_SIZE << MAX_PAGE_ORDER) * 2, 0).is_err());
        assert!(bad(64, 0, 1 << 7).is_err());
        assert!(bad((PAGE_SIZE << MAX_PAGE_ORDER) + 1, 0, 0).is_err());
        // The largest size the page allocator can give: one object of order MAX_PAGE_ORDER.
        let l = bad(PAGE_SIZE << MAX_PAGE_ORDER, 0, 0).expect("largest size");
        assert_eq!((l.order, l.objects), (MAX_PAGE_ORDER, 1));
    }

    #[test]
    fn min_partial_from_object_size() {
        // One more per doubling from 128 bytes, up to 10 from a page on.
        for (size, want) in [
            (1u32, 5u32),
            (8, 5),
            (128, 5),
            (248, 5),
            (256, 6),
            (512, 7),
            (1024, 8),
            (2048, 9),
            (4088, 9),
            (4096, 10),
            (8192, 10),
        ] {
            assert_eq!((size, min_partial_for(size)), (size, want));
            assert_eq!(layout(size, DEFAULT_RULES).min_partial(None), want);
        }
        assert_eq!(min_partial_for(1 << 22), 10);
        assert_eq!(layout(64, DEFAULT_RULES).min_partial(Some(7)), 7);
    }

    /// `ExactIndex` against a division: for strides odd, even and powers of two, small
    /// and as large as a slab, every offset of two slabs' worth (and every offset below
    /// the base, as a wrapped subtraction gives it) starts an object exactly when the
    /// division is exact with an index below the count, and then gives that index.
    #[test]
    fn exact_index_is_the_division() {
        for stride in (1u32..=520).chain([
            1000,
            1024,
            1536,
            3072,
            4096,
            4104,
            12288,
            PAGE_SIZE << MAX_PAGE_ORDER,
        ]) {
            let d = NonZeroU32::new(stride).expect("non-zero");
            let index = ExactIndex::new(d);
            let objects = (2 * PAGE_SIZE / stride).max(1);
            let span = u64::from(objects + 1) * u64::from(stride);
            let step = (span / 4096).max(1);
            let mut offset = 0u64;
            while offset < span {
                for x in [offset, offset.wrapping_neg()] {
                    let exact =
                        x % u64::from(stride) == 0 && x / u64::from(stride) < u64::from(objects);
                    let got = index.of(x as usize);
                    assert_eq!((stride, x, got < u64::from(objects)), (stride, x, exact));
                    if exact {
                        assert_eq!(got, x / u64::from(stride));
                    }
                }
                // Every offset near each object's start, and a sample of the rest.
                offset += if offset % u64::from(stride) < 2
                    || u64::from(stride) - offset % u64::from(stride) < 2
                {
                    1
                } else {
                    step
                };
            }
        }
    }
}
