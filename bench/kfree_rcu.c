// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_kfree_rcu: a kfree_rcu()-heavy loop over slab objects of its own, a workload of
 * make bench's whole-system section (scripts/bench/whole.sh), in the manner of the 2026
 * reports that kvfree_rcu got slower with sheaves. It needs nothing of rslub: on the
 * kernel's allocator it measures sheaves, in whole-kernel mode (rslub.back=all) rslub,
 * which backs the module's cache from its first allocation on.
 *
 * At load: a cache of @size-byte objects (an rcu_head inside), one object allocated and
 * freed and a pause, so that whole-kernel mode has backed the cache before the loop; then
 * the timed part, on one CPU: @objects times kmem_cache_alloc() and kfree_rcu(), and
 * kmem_cache_destroy(), which waits for every kfree_rcu() in flight of the cache
 * (kvfree_rcu_barrier_on_cache() in the kernel, rslub's unbacking under whole-kernel
 * mode), so every object has gone back through the allocator's free path by its end.
 * The timed part starts and ends with the marker instruction of scripts/bench/qemu/count.c (a
 * QEMU plugin that logs the instructions executed so far, all CPUs together: the RCU
 * callbacks and kfree_rcu()'s batching workers included, the idle time of the grace
 * periods not). The guest clock is read too, and one line printed:
 *
 *   rslub_kfree_rcu: done objects=N size=S ns=T
 *
 * The load returns 0; rmmod the module after.
 */
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

/* xchg %bx,%bx: the marker of scripts/bench/qemu/count.c; a no-op without the plugin. */
static __always_inline void mark(void)
{
	asm volatile("xchg %%bx, %%bx" : : : "memory");
}

static unsigned int objects = 100000;
module_param(objects, uint, 0);
MODULE_PARM_DESC(objects, "objects allocated and freed by kfree_rcu() (1..10000000)");

static unsigned int size = 64;
module_param(size, uint, 0);
MODULE_PARM_DESC(size, "object size in bytes (32..4096)");

struct rcu_obj {
	struct rcu_head rcu;
	unsigned long payload[];
};

static int __init rslub_kfree_rcu_init(void)
{
	struct kmem_cache *s;
	struct rcu_obj *o;
	unsigned int i;
	u64 t0, t1;

	if (objects < 1 || objects > 10000000) {
		pr_err("rslub_kfree_rcu: invalid parameter objects=%u: allowed range is 1..10000000\n",
		       objects);
		return -EINVAL;
	}
	if (size < 32 || size > 4096) {
		pr_err("rslub_kfree_rcu: invalid parameter size=%u: allowed range is 32..4096\n", size);
		return -EINVAL;
	}
	s = kmem_cache_create("rslub_kfree_rcu", size, 0, SLAB_NO_MERGE, NULL);
	if (!s)
		return -ENOMEM;
	/* Sighted by whole-kernel mode; its worker backs the cache meanwhile. */
	o = kmem_cache_alloc(s, GFP_KERNEL);
	if (!o) {
		kmem_cache_destroy(s);
		return -ENOMEM;
	}
	kmem_cache_free(s, o);
	msleep(200);

	mark();
	t0 = ktime_get_ns();
	for (i = 0; i < objects; i++) {
		o = kmem_cache_alloc(s, GFP_KERNEL);
		if (!o) {
			pr_err("rslub_kfree_rcu: allocation %u of %u failed\n", i, objects);
			break;
		}
		o->payload[0] = i;
		kfree_rcu(o, rcu);
		if (!(i & 1023))
			cond_resched();
	}
	kmem_cache_destroy(s);
	t1 = ktime_get_ns();
	mark();
	if (i < objects)
		return -ENOMEM;
	pr_info("rslub_kfree_rcu: done objects=%u size=%u ns=%llu\n", objects, size, t1 - t0);
	return 0;
}

static void __exit rslub_kfree_rcu_exit(void)
{
}

module_init(rslub_kfree_rcu_init);
module_exit(rslub_kfree_rcu_exit);
MODULE_DESCRIPTION("rslub benchmark workload: kfree_rcu() over a cache of its own");
MODULE_AUTHOR("rslub developers");
MODULE_LICENSE("GPL");
