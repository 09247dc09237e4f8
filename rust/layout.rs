// SPDX-License-Identifier: GPL-2.0

//! Slab layout: object stride, free pointer placement, slab order and objects per slab.
//!
//! Pure arithmetic, as SLUB's `calculate_sizes()` and `calculate_order()` do it, so the
//! KUnit suites can check it for any size and parameters without allocating anything.

use core::num::NonZeroU32;
use kernel::error::{code::EINVAL, Result};

/// Size of a free pointer, and the smallest alignment of an object.
pub(crate) const POINTER_SIZE: u32 = core::mem::size_of::<usize>() as u32;
/// Page size the slab orders count in.
pub(crate) const PAGE_SIZE: u32 = kernel::page::PAGE_SIZE as u32;
/// Highest order the page allocator hands out.
pub(crate) const MAX_PAGE_ORDER: u32 = kernel::bindings::MAX_PAGE_ORDER;
/// Most objects one slab may hold (SLUB's `MAX_OBJS_PER_PAGE`, whose count is 15 bits
/// wide); also the highest `min_objects` parameter.
pub(crate) const MAX_OBJS_PER_SLAB: u32 = 32767;

/// Cache creation flag: align objects to the hardware cache line (`SLAB_HWCACHE_ALIGN`).
pub(crate) const HWCACHE_ALIGN: u32 = 1 << 0;
/// Cache creation flag, debug `F`: sanity checks on every allocation and free
/// (`SLAB_CONSISTENCY_CHECKS`). See [`crate::debug`].
pub(crate) const SANITY: u32 = 1 << 1;
/// Debug `Z`: a red zone after every object (`SLAB_RED_ZONE`).
pub(crate) const RED_ZONE: u32 = 1 << 2;
/// Debug `P`: free objects filled with a pattern (`SLAB_POISON`).
pub(crate) const POISON: u32 = 1 << 3;
/// Debug `U`: where each object was last allocated and freed (`SLAB_STORE_USER`).
pub(crate) const STORE_USER: u32 = 1 << 4;
/// The debug flags.
pub(crate) const DEBUG_FLAGS: u32 = SANITY | RED_ZONE | POISON | STORE_USER;
/// Cache creation flag: a freed object may still be read under `rcu_read_lock()` by
/// whoever found it before the free, and stays an object of the cache until a grace
/// period has passed (`SLAB_TYPESAFE_BY_RCU`): empty slabs go back to the page
/// allocator only after one, and the free pointer does not overwrite the object's
/// contents unless the cache says where it may (`CacheArgs::freeptr_offset`).
pub(crate) const TYPESAFE_BY_RCU: u32 = 1 << 5;
/// Cache creation flag: the cache's slabs count as reclaimable slab memory and come
/// from reclaimable page blocks (`SLAB_RECLAIM_ACCOUNT`: 6.12 accounts them as
/// `NR_SLAB_RECLAIMABLE_B` and allocates them with `__GFP_RECLAIMABLE`).
pub(crate) const RECLAIM_ACCOUNT: u32 = 1 << 6;
/// All flags `create` accepts.
pub(crate) const VALID_FLAGS: u32 = HWCACHE_ALIGN | DEBUG_FLAGS | TYPESAFE_BY_RCU | RECLAIM_ACCOUNT;
/// Bytes of one owner record ([`crate::debug::Track`]); a `U` cache keeps two per object.
pub(crate) const TRACK_SIZE: u32 = 64;

/// Order of the smallest power-of-two number of pages holding `bytes` (`get_order()`).
pub(crate) fn get_order(bytes: u64) -> u32 {
    let pages = bytes.div_ceil(u64::from(PAGE_SIZE)).max(1);
    pages.next_power_of_two().trailing_zeros()
}

/// Bytes in a slab of `order`.
pub(crate) fn slab_bytes(order: u32) -> u32 {
    PAGE_SIZE << order
}

/// Objects of `size` bytes that fit in a slab of `order` (`order_objects()`).
pub(crate) fn order_objects(order: u32, size: NonZeroU32) -> u32 {
    slab_bytes(order) / size
}

/// The order-selection inputs that come from the module parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct OrderRules {
    /// Lowest order.
    pub(crate) min_order: u32,
    /// Highest order.
    pub(crate) max_order: u32,
    /// Objects a slab should hold at least (already resolved from "automatic").
    pub(crate) min_objects: u32,
}

/// The CPU-scaled default of `min_objects`: `4 * (fls(cpus) + 1)`.
///
/// Seed thread 001: slabs holding more objects make the slow path rarer when many CPUs
/// contend for one cache, so the default grows with the CPU count.
pub(crate) fn auto_min_objects(cpus: u32) -> u32 {
    // fls(): position of the highest set bit, counting from 1; fls(0) == 0.
    let fls = u32::BITS - cpus.leading_zeros();
    4 * (fls + 1)
}

/// `slab_max_order`'s default in the kernel's own allocator (`PAGE_ALLOC_COSTLY_ORDER`).
pub(crate) const KERNEL_MAX_ORDER: u32 = 3;

/// The order rules of the kernel's own allocator with its defaults (`slab_min_order` 0,
/// `slab_max_order` 3, `slab_min_objects` from the CPU count), on a machine whose
/// `calculate_order()` counts `cpus` CPUs.
pub(crate) fn kernel_rules(cpus: u32) -> OrderRules {
    OrderRules {
        min_order: 0,
        max_order: KERNEL_MAX_ORDER,
        min_objects: auto_min_objects(cpus),
    }
}

/// The smallest order in `min_order..=max_order` whose leftover is at most
/// `1/2^fract_shift` of the slab, or `max_order + 1` if none (`calc_slab_order()`).
fn calc_slab_order(size: NonZeroU32, min_order: u32, max_order: u32, fract_shift: u32) -> u32 {
    let mut order = min_order;
    while order <= max_order {
        let bytes = slab_bytes(order);
        if bytes % size <= bytes >> fract_shift {
            break;
        }
        order += 1;
    }
    order
}

/// The slab order for objects of stride `size`, as SLUB's `calculate_order()` chooses it:
///
/// 1. `min_objects`, capped by what fits in `max_order` (at least one);
/// 2. the smallest order in `[max(min_order, order of min_objects * size), max_order]`
///    whose leftover is at most 1/16 of the slab, then 1/8, 1/4, 1/2;
/// 3. else the order of one object, if the page allocator can give it.
pub(crate) fn calculate_order(size: NonZeroU32, rules: OrderRules) -> Result<u32> {
    let max_objects = order_objects(rules.max_order, size).max(1);
    let min_objects = rules.min_objects.min(max_objects);
    let min_order = rules
        .min_order
        .max(get_order(u64::from(min_objects) * u64::from(size.get())));
    if order_objects(min_order, size) > MAX_OBJS_PER_SLAB {
        // Tiny objects: the count would overflow; take the largest order that does not.
        return Ok(get_order(u64::from(size.get()) * u64::from(MAX_OBJS_PER_SLAB)) - 1);
    }
    // Leftover at most 1/16, 1/8, 1/4, then 1/2 of the slab.
    for fract_shift in [4, 3, 2, 1] {
        let order = calc_slab_order(size, min_order, rules.max_order, fract_shift);
        if order <= rules.max_order {
            return Ok(order);
        }
    }
    let order = get_order(u64::from(size.get()));
    if order <= MAX_PAGE_ORDER {
        Ok(order)
    } else {
        Err(EINVAL)
    }
}

/// Where the objects of a cache go in a slab.
///
/// # Invariants
///
/// `size` is a multiple of `align` and of [`POINTER_SIZE`], `size >= object_size`,
/// `free_offset + POINTER_SIZE <= size`, `free_offset` is a multiple of [`POINTER_SIZE`],
/// and `1 <= objects <= MAX_OBJS_PER_SLAB` objects of `size` fit in a slab of `order`.
/// `object_size <= inuse <= size`; with [`RED_ZONE`], `inuse > object_size`; with
/// [`RED_ZONE`] or [`POISON`] the free pointer is at or after `inuse`; with
/// [`STORE_USER`], `track_offset + 2 * TRACK_SIZE <= size` and the free pointer is
/// before `track_offset`. With `typesafe_by_rcu`, [`POISON`] is not in `debug`, and the
/// free pointer is at or after `inuse` unless the cache gave its offset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Bytes the user asked for.
    pub(crate) object_size: u32,
    /// Alignment of every object.
    pub(crate) align: u32,
    /// Stride between objects: `object_size` rounded up, plus the free pointer if it
    /// cannot live inside the object.
    pub(crate) size: u32,
    /// Offset of the free pointer inside a free object.
    pub(crate) free_offset: u32,
    /// Page order of a slab.
    pub(crate) order: u32,
    /// Objects per slab.
    pub(crate) objects: u32,
    /// The debug flags in effect ([`DEBUG_FLAGS`]; [`POISON`] is dropped with a
    /// constructor, whose objects keep their contents while free, as in SLUB).
    pub(crate) debug: u32,
    /// End of the object and its red zone: the red zone is `object_size..inuse`.
    pub(crate) inuse: u32,
    /// Offset of the two owner records (allocation, then free) with [`STORE_USER`].
    pub(crate) track_offset: u32,
    /// Whether objects were asked aligned to the cache line ([`HWCACHE_ALIGN`]).
    pub(crate) hwcache_align: bool,
    /// Whether freed objects stay readable for a grace period ([`TYPESAFE_BY_RCU`]).
    pub(crate) typesafe_by_rcu: bool,
    /// Whether the slabs are reclaimable slab memory ([`RECLAIM_ACCOUNT`]).
    pub(crate) reclaim_account: bool,
}

/// The order of a slab of objects of `size` bytes, and how many it holds: `EINVAL` if no
/// slab can hold one, or it would hold more than [`MAX_OBJS_PER_SLAB`].
fn slab_of_stride(size: u32, rules: OrderRules) -> Result<(u32, u32)> {
    if u64::from(size) > u64::from(slab_bytes(MAX_PAGE_ORDER)) {
        return Err(EINVAL);
    }
    let stride = NonZeroU32::new(size).ok_or(EINVAL)?;
    let order = calculate_order(stride, rules)?;
    let objects = order_objects(order, stride);
    if objects == 0 || objects > MAX_OBJS_PER_SLAB {
        return Err(EINVAL);
    }
    Ok((order, objects))
}

impl Layout {
    /// Computes the layout of a cache (SLUB's `calculate_sizes()`).
    ///
    /// `cache_line` is the hardware cache line size, used with [`HWCACHE_ALIGN`]. With a
    /// constructor, objects keep their constructed contents while free, so the free
    /// pointer goes after the object instead of inside it; so it does with [`POISON`],
    /// which fills the whole free object, and with [`RED_ZONE`], and with
    /// [`TYPESAFE_BY_RCU`] unless `freeptr_offset` says where in the object it may go
    /// (pointer aligned, inside the object: `EINVAL` otherwise, and without
    /// [`TYPESAFE_BY_RCU`], as 6.12's `kmem_cache_create()`; 7.3 also takes one for a
    /// constructor, which rslub keeps after the object). Poisoning is dropped with a
    /// constructor or [`TYPESAFE_BY_RCU`]: the user may read such objects while free. A
    /// red zone is at least one word after the object, and [`STORE_USER`] adds two owner
    /// records at the end of the stride.
    pub(crate) fn new(
        object_size: u32,
        align: u32,
        flags: u32,
        has_ctor: bool,
        freeptr_offset: Option<u32>,
        cache_line: u32,
        rules: OrderRules,
    ) -> Result<Self> {
        let typesafe_by_rcu = flags & TYPESAFE_BY_RCU != 0;
        if object_size == 0
            || !align_is_valid(align)
            || flags & !VALID_FLAGS != 0
            || u64::from(object_size) > u64::from(slab_bytes(MAX_PAGE_ORDER))
            || freeptr_offset
                .is_some_and(|o| !typesafe_by_rcu || o >= object_size || o % POINTER_SIZE != 0)
        {
            return Err(EINVAL);
        }
        let align = object_align(object_size, align, flags, cache_line);
        let keeps_contents = has_ctor || typesafe_by_rcu;
        let debug = flags & DEBUG_FLAGS & if keeps_contents { !POISON } else { u32::MAX };
        let mut size = round_up(object_size, POINTER_SIZE);
        if debug & RED_ZONE != 0 && size == object_size {
            size += POINTER_SIZE;
        }
        let inuse = size;
        // As 6.12 SLUB's `calculate_sizes()`: a constructor or poisoning asked for (even
        // where it is dropped) put the free pointer after the object, even where the cache
        // gave an offset; so does a red zone here, as for every red-zoned cache of
        // rslub's (SLUB does so only for objects under a word).
        let outside = has_ctor
            || flags & POISON != 0
            || debug & RED_ZONE != 0
            || (typesafe_by_rcu && freeptr_offset.is_none());
        let free_offset = if outside {
            let at = size;
            size += POINTER_SIZE;
            at
        } else if let Some(at) = freeptr_offset {
            at
        } else {
            // Mid-object, as SLUB does: an overrun from the previous object or an underrun
            // into this one is less likely to hit the free pointer.
            round_down(object_size / 2, POINTER_SIZE)
        };
        let track_offset = if debug & STORE_USER != 0 {
            let at = size;
            size += 2 * TRACK_SIZE;
            at
        } else {
            0
        };
        let size = round_up(size, align);
        let (order, objects) = slab_of_stride(size, rules)?;
        // INVARIANT: `size` is rounded to `POINTER_SIZE` and then to `align`, a power of two
        // no smaller than `POINTER_SIZE`; the free pointer is either at the rounded object
        // end (with room added), at a pointer-aligned offset below `object_size / 2`, or at
        // the pointer-aligned `freeptr_offset < object_size`, whose word ends within the
        // object rounded to `POINTER_SIZE`; the object count was checked to be in
        // `1..=MAX_OBJS_PER_SLAB` just above. The red zone gets a word when the object
        // fills its words; with it or poisoning the free pointer goes after it, as without
        // an offset under `TYPESAFE_BY_RCU`, which drops poisoning; the owner records come
        // last.
        Ok(Self {
            object_size,
            align,
            size,
            free_offset,
            order,
            objects,
            debug,
            inuse,
            track_offset,
            hwcache_align: flags & HWCACHE_ALIGN != 0,
            typesafe_by_rcu,
            reclaim_account: flags & RECLAIM_ACCOUNT != 0,
        })
    }

    /// This layout with at least `red_zone` bytes after the object in each stride (for
    /// KASAN, which poisons them), and the order and object count for that stride.
    pub(crate) fn with_red_zone(self, red_zone: u32, rules: OrderRules) -> Result<Self> {
        let want = self.object_size.checked_add(red_zone).ok_or(EINVAL)?;
        let size = round_up(self.size.max(want), self.align);
        if size == self.size {
            return Ok(self);
        }
        let (order, objects) = slab_of_stride(size, rules)?;
        // INVARIANT: the stride grows, still a multiple of `align`; every offset in it
        // stays where it was; order and count as in `new`.
        Ok(Self {
            size,
            order,
            objects,
            ..self
        })
    }

    /// The stride, non-zero by the type invariant.
    pub(crate) fn stride(&self) -> NonZeroU32 {
        NonZeroU32::new(self.size).unwrap_or(NonZeroU32::MIN)
    }

    /// The stride as [`ExactIndex`] divides by it.
    pub(crate) fn exact_index(&self) -> ExactIndex {
        ExactIndex::new(self.stride())
    }

    /// Bytes left unused at the end of each slab.
    pub(crate) fn waste(&self) -> u32 {
        slab_bytes(self.order) - self.objects * self.size
    }

    /// The per-cache `min_partial` ([`min_partial_for`]), unless `override_value` is
    /// given.
    pub(crate) fn min_partial(&self, override_value: Option<u32>) -> u32 {
        override_value.unwrap_or_else(|| min_partial_for(self.size))
    }
}

/// Objects' worth of partial slabs a CPU keeps, from the object size (SLUB's
/// `set_cpu_partial()`): fewer for larger objects. These are SLUB's values from 5.16 on,
/// when the limit became a count of slabs (`cpu_partial * 2 / objects per slab`) and the
/// earlier 2/6/13/30 were raised to keep lists of several slabs ("mm, slub: increase
/// default cpu partial list sizes").
pub(crate) fn cpu_partial_for(size: u32) -> u32 {
    match size {
        s if s >= PAGE_SIZE => 6,
        s if s >= 1024 => 24,
        s if s >= 256 => 52,
        _ => 120,
    }
}

/// The fewest partial slabs a node keeps by default (SLUB's `MIN_PARTIAL`).
pub(crate) const MIN_PARTIAL: u32 = 5;
/// The most partial slabs a node keeps by default (SLUB's `MAX_PARTIAL`).
pub(crate) const MAX_PARTIAL: u32 = 10;

/// Partial slabs a node keeps, even empty, from the object size (the stride, as SLUB's
/// `s->size`): [`MIN_PARTIAL`] below 256 bytes, one more for every doubling from there,
/// [`MAX_PARTIAL`] from a page on; `clamp(ilog2(size) - 2, 5, 10)`.
///
/// Seed thread 000 made the count grow with the object size, so that caches of objects
/// near a page do not send slabs back and forth to the page allocator under churn.
/// SLUB's rule, `clamp(ilog2(size) / 2, 5, 10)`, reaches [`MAX_PARTIAL`] only for 1 MiB
/// objects and is 5 or 6 for every size up to 8 KiB; this one spans the same range over
/// the sizes slab caches serve. `Documentation/tuning.rst` has the measurements.
pub(crate) fn min_partial_for(size: u32) -> u32 {
    size.max(1)
        .ilog2()
        .saturating_sub(2)
        .clamp(MIN_PARTIAL, MAX_PARTIAL)
}

/// SLUB's `min_partial` rule, `clamp(ilog2(size) / 2, 5, 10)`, which
/// [`min_partial_for`] replaces; the benchmarks measure both.
pub(crate) fn slub_min_partial_for(size: u32) -> u32 {
    (size.max(1).ilog2() / 2).clamp(MIN_PARTIAL, MAX_PARTIAL)
}

/// An alignment is valid when it is 0 (none asked) or a power of two no larger than the
/// page allocator's largest block. One above a page holds too: the stride is a multiple of
/// it, a slab holds at least one stride, and a block of `2^order` pages is aligned to its
/// size, so every object's offset and the slab's address are multiples of it (as in
/// SLUB, which takes any power of two: `kmalloc-8k` asks for 8 KiB).
fn align_is_valid(align: u32) -> bool {
    align == 0 || (align.is_power_of_two() && align <= slab_bytes(MAX_PAGE_ORDER))
}

/// The alignment objects get (SLUB's `calculate_alignment()`): with [`HWCACHE_ALIGN`],
/// the cache line, halved while the object fits twice in it; never less than asked for,
/// nor less than a pointer.
fn object_align(object_size: u32, align: u32, flags: u32, cache_line: u32) -> u32 {
    let mut a = align.max(POINTER_SIZE);
    if flags & HWCACHE_ALIGN != 0 {
        let mut ralign = cache_line.max(POINTER_SIZE);
        while object_size <= ralign / 2 {
            ralign /= 2;
        }
        a = a.max(ralign);
    }
    a
}

/// Rounds `x` up to a multiple of `a`, a power of two.
fn round_up(x: u32, a: u32) -> u32 {
    (x + a - 1) & !(a - 1)
}

/// Rounds `x` down to a multiple of `a`, a power of two.
fn round_down(x: u32, a: u32) -> u32 {
    x & !(a - 1)
}

/// The layout what-if: for objects of a size and alignment (a plain cache: no flags, no
/// constructor), every slab order up to the highest of interest with the objects a slab
/// holds and what it leaves unused, and the orders two sets of rules choose: rslub's
/// current parameters and the kernel's allocator with its defaults. The debugfs file
/// `layout_whatif` and the host command `scripts/layout` print it ([`core::fmt::Display`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct WhatIf {
    /// The object size asked for.
    pub(crate) size: u32,
    /// The alignment asked for.
    pub(crate) align: u32,
    /// The stride of the layout (the same under both rules).
    pub(crate) stride: NonZeroU32,
    /// The order rslub's rules choose.
    pub(crate) rslub: u32,
    /// The order the kernel's rules choose, if they can place the object at all.
    pub(crate) kernel: Option<u32>,
    /// The highest order shown: rslub's `max_order`, or a higher chosen order.
    pub(crate) last: u32,
    /// The tuned profile's `min_partial` ([`min_partial_for`]).
    pub(crate) min_partial: u32,
    /// The kernel's (6.12's) `min_partial` ([`slub_min_partial_for`]), the classic
    /// profile's.
    pub(crate) kernel_min_partial: u32,
}

impl WhatIf {
    /// The what-if of `size` and `align` under `rslub` (rslub's rules) and `kernel` (the
    /// kernel's, [`kernel_rules`]); `EINVAL` where rslub cannot create such a cache.
    pub(crate) fn new(
        size: u32,
        align: u32,
        rslub: OrderRules,
        kernel: OrderRules,
    ) -> Result<Self> {
        // A plain cache: the cache line does not matter without `HWCACHE_ALIGN`.
        let l = Layout::new(size, align, 0, false, None, 64, rslub)?;
        let stride = l.stride();
        let kernel = calculate_order(stride, kernel).ok();
        Ok(Self {
            size,
            align: l.align,
            stride,
            rslub: l.order,
            kernel,
            last: rslub.max_order.max(l.order).max(kernel.unwrap_or(0)),
            min_partial: l.min_partial(None),
            kernel_min_partial: slub_min_partial_for(stride.get()),
        })
    }

    /// Objects of one slab of `order`, and the bytes it leaves unused: at its end, and in
    /// all, counting each object's padding up to the stride.
    pub(crate) fn at(&self, order: u32) -> (u32, u32, u32) {
        let objects = order_objects(order, self.stride);
        let bytes = slab_bytes(order);
        (
            objects,
            bytes - objects * self.stride.get(),
            bytes - objects * self.size,
        )
    }
}

impl core::fmt::Display for WhatIf {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(
            f,
            "size {} align {} stride {}",
            self.size, self.align, self.stride
        )?;
        writeln!(f, "order  objects  leftover  unused%  chosen by")?;
        for order in 0..=self.last {
            let (objects, leftover, unused) = self.at(order);
            // Hundredths of a percent of the slab, in integers (no floating point in the
            // kernel).
            let hundredths = u64::from(unused) * 10000 / u64::from(slab_bytes(order)).max(1);
            write!(
                f,
                "{order:5}  {objects:7}  {leftover:8}  {:4}.{:02} ",
                hundredths / 100,
                hundredths % 100
            )?;
            if order == self.rslub {
                write!(f, " rslub")?;
            }
            if Some(order) == self.kernel {
                write!(f, " kernel")?;
            }
            writeln!(f)?;
        }
        writeln!(
            f,
            "min_partial: rslub {}, kernel {}",
            self.min_partial, self.kernel_min_partial
        )
    }
}

/// Division by a stride that tells at once whether it is exact (Granlund and Montgomery's
/// test of divisibility, "Division by invariant integers using multiplication", 1994):
/// for a stride `d = o << k` with `o` odd and `inverse` the inverse of `o` modulo 2^64,
/// `(x * inverse).rotate_right(k)` is `x / d` where `d` divides `x`, and above
/// `u64::MAX / d` where it does not (the map is a bijection of `u64` that takes the
/// multiples of `d` onto `0..=u64::MAX / d`). A free's check that a pointer starts one of
/// its slab's objects is thus a multiplication, a rotation and a compare with the count
/// of objects, where a division and a multiplication back would be a dozen instructions.
///
/// # Invariants
///
/// `inverse` is odd, `inverse * (d >> shift) == 1` modulo 2^64, and `shift` is the number
/// of trailing zero bits of `d`, for the stride `d` it was made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ExactIndex {
    inverse: u64,
    shift: u32,
}

impl ExactIndex {
    /// The index by `stride`.
    pub(crate) const fn new(stride: NonZeroU32) -> Self {
        let shift = stride.trailing_zeros();
        let odd = (stride.get() >> shift) as u64;
        // Newton's iteration modulo 2^64: `odd` is its own inverse modulo 8 (3 bits), and
        // each step doubles the bits that are right: 6, 12, 24, 48, 96.
        let mut inverse = odd;
        let mut step = 0;
        while step < 5 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(odd.wrapping_mul(inverse)));
            step += 1;
        }
        // INVARIANT: the inverse of the odd part, and its trailing zeros.
        Self { inverse, shift }
    }

    /// `offset / stride` where the stride divides `offset`; otherwise a value above
    /// `u64::MAX / stride`, hence above any count of objects of a slab.
    #[inline(always)]
    pub(crate) fn of(self, offset: usize) -> u64 {
        (offset as u64)
            .wrapping_mul(self.inverse)
            .rotate_right(self.shift)
    }
}
