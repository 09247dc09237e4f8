// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_kmem_micro: the fast paths of a kmem cache in instructions, for make bench's
 * side-by-side section (scripts/bench/whole.sh), on any kernel: classic SLUB 6.12, which
 * has no Rust and so no rslub_bench, and sheaves 7.3. Built with RSLUB_API defined
 * (rslub_kmem_micro_api.ko, Rust-enabled kernels only) it measures an rslub cache
 * through rslub's C API (include/rslub.h) instead, the same loops.
 *
 * Under QEMU -icount shift=0 a guest nanosecond is one guest instruction, so the guest
 * clock times instructions. Each figure is the fastest of CHUNKS chunks of OPS
 * operations (timer ticks and other interruptions fall out), per operation:
 *   pair:   alloc + free of one 64-byte object (SLAB_NO_MERGE);
 *   bulk16: alloc_bulk + free_bulk of 16 objects, per object.
 * One line, which the guest relays:
 *   rslub_kmem_micro: RESULT {"alloc":WHO,"pair":P,"bulk16":B}
 * WHO is "kernel" or "rslub" (the build) unless the parameter who= names the case: the
 * guest measures the kernel API's cache also while rslub serves it, backed by name or in
 * whole-kernel mode. For those, settle_ms= allocates and frees an object every
 * millisecond for that long before the timed chunks (so that the name watch, or the
 * sighting, sees the cache and rslub backs it), then prints "rslub_kmem_micro:
 * measuring": the guest checks that the backing was in place before that line.
 * The load returns 0; rmmod the module after.
 */
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/version.h>

#ifdef RSLUB_API
#include <rslub.h>
#endif

#define CHUNKS	50
#define OPS	1000
#define BULK	16
#define SIZE	64

#ifdef RSLUB_API
#define WHO "rslub"
typedef struct rslub_cache cache_t;

static cache_t *make(void)
{
	cache_t *s = rslub_cache_create("rslub_kmem_micro", SIZE, 0, 0, NULL);

	return IS_ERR(s) ? NULL : s;
}

static void unmake(cache_t *s)
{
	rslub_cache_destroy(s);
}

static void *get(cache_t *s)
{
	return rslub_cache_alloc(s, GFP_KERNEL);
}

static void put(cache_t *s, void *p)
{
	rslub_cache_free(s, p);
}

static bool get_bulk(cache_t *s, void **p)
{
	return rslub_cache_alloc_bulk(s, GFP_KERNEL, BULK, p) == BULK;
}

static void put_bulk(cache_t *s, void **p)
{
	rslub_cache_free_bulk(s, BULK, p);
}
#else
#define WHO "kernel"
typedef struct kmem_cache cache_t;

static cache_t *make(void)
{
	return kmem_cache_create("rslub_kmem_micro", SIZE, 0, SLAB_NO_MERGE, NULL);
}

static void unmake(cache_t *s)
{
	kmem_cache_destroy(s);
}

static void *get(cache_t *s)
{
	return kmem_cache_alloc(s, GFP_KERNEL);
}

static void put(cache_t *s, void *p)
{
	kmem_cache_free(s, p);
}

static bool get_bulk(cache_t *s, void **p)
{
	/* An int count until 6.x, a bool from 7.0 on (include/linux/slab.h). */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(7, 0, 0)
	return kmem_cache_alloc_bulk(s, GFP_KERNEL, BULK, p);
#else
	return kmem_cache_alloc_bulk(s, GFP_KERNEL, BULK, p) == BULK;
#endif
}

static void put_bulk(cache_t *s, void **p)
{
	kmem_cache_free_bulk(s, BULK, p);
}
#endif

static char *who = WHO;
module_param(who, charp, 0444);
MODULE_PARM_DESC(who, "the allocator named in the RESULT line (default: the build's)");

static unsigned int settle_ms;
module_param(settle_ms, uint, 0444);
MODULE_PARM_DESC(settle_ms, "allocate once a millisecond for this long before measuring");

/* The fastest chunk of @fn, in guest nanoseconds per operation, or 0 on failure. */
static u64 fastest(cache_t *s, bool (*fn)(cache_t *s))
{
	u64 best = U64_MAX;
	int c, i;

	for (c = 0; c < CHUNKS; c++) {
		u64 t0 = ktime_get_ns(), t;

		for (i = 0; i < OPS; i++) {
			if (!fn(s))
				return 0;
		}
		t = ktime_get_ns() - t0;
		best = min(best, t);
	}
	return best;
}

static bool pair(cache_t *s)
{
	void *p = get(s);

	if (!p)
		return false;
	put(s, p);
	return true;
}

static bool bulk(cache_t *s)
{
	void *p[BULK];

	if (!get_bulk(s, p))
		return false;
	put_bulk(s, p);
	return true;
}

static int __init rslub_kmem_micro_init(void)
{
	cache_t *s = make();
	u64 p, b;

	if (!s)
		return -ENOMEM;
	if (settle_ms) {
		unsigned long end = jiffies + msecs_to_jiffies(settle_ms);

		while (time_before(jiffies, end)) {
			if (!pair(s)) {
				unmake(s);
				return -ENOMEM;
			}
			msleep(1);
		}
	}
	pr_info("rslub_kmem_micro: measuring\n");
	/* Warm: the first slab, and the per-CPU state, before the timed chunks. */
	fastest(s, pair);
	p = fastest(s, pair);
	b = fastest(s, bulk);
	unmake(s);
	if (!p || !b)
		return -ENOMEM;
	/* Hundredths of an instruction per operation. */
	pr_info("rslub_kmem_micro: RESULT {\"alloc\":\"%s\",\"pair\":%llu.%02llu,\"bulk16\":%llu.%02llu}\n",
		who, p / OPS, p * 100 / OPS % 100, b / (OPS * BULK), b * 100 / (OPS * BULK) % 100);
	return 0;
}

static void __exit rslub_kmem_micro_exit(void)
{
}

module_init(rslub_kmem_micro_init);
module_exit(rslub_kmem_micro_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kmem cache fast paths in instructions, on any kernel (make bench)");
