// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the suites only (RSLUB_INJECT: the test module, which includes this file in
 * its C unit, tests-kunit/shim.c; rslub.ko does not link it): what the slots and
 * kmalloc's classes hold, the kmalloc hooks limited or made to fail, a trampoline's
 * allocation stalled between its check and its fast path.
 */
#include "kmalloc.h"

#ifdef RSLUB_INJECT
/* Test-only: limits the kmalloc hooks to this task's calls from this module (@on). */
void rslub_kmalloc_only(bool on)
{
	WRITE_ONCE(rslub_kmalloc_task, on ? current : NULL);
	synchronize_rcu();
}

/* Test-only: the next rslub_hook_kmalloc() fails once its hooks are registered. */
void rslub_kmalloc_fail_next(void)
{
	rslub_kmalloc_fail = true;
}

/* Test-only: the slot backing @kc, not held (as a trampoline finds it), or NULL. */
void *rslub_test_slot_of(struct kmem_cache *kc)
{
	struct rslub_backing *b;

	rcu_read_lock();
	b = rslub_lookup(kc);
	rcu_read_unlock();
	return b;
}

/*
 * Test-only: how many caches of @kc's hash may hold rslub's objects (rslub_bulk_caches[]);
 * @kc NULL: kmalloc's own cache of 64 bytes (KMALLOC_NORMAL).
 */
unsigned int rslub_test_bulk_count(struct kmem_cache *kc)
{
	if (!kc)
		kc = kmalloc_caches[KMALLOC_NORMAL][kmalloc_index(64)];
	return READ_ONCE(*rslub_bulk_slot(kc));
}

/* Test-only: an object of kmalloc's own cache of 64 bytes (KMALLOC_NORMAL), by its cache. */
void *rslub_test_kmalloc_64_cache_alloc(gfp_t gfp)
{
	return kmem_cache_alloc(kmalloc_caches[KMALLOC_NORMAL][kmalloc_index(64)], gfp);
}

/* Test-only: kmem_cache_free_bulk() given kmalloc's own cache of 64 bytes. */
void rslub_test_kmalloc_64_free_bulk(size_t n, void **p)
{
	kmem_cache_free_bulk(kmalloc_caches[KMALLOC_NORMAL][kmalloc_index(64)], n, p);
}

/* Test-only: whether @kc's slot is at its first place in the index (no probe further). */
bool rslub_test_slot_first(struct kmem_cache *kc)
{
	struct rslub_backing *b;
	bool first;

	rcu_read_lock();
	b = rslub_lookup(kc);
	first = b && READ_ONCE(rslub_index)[hash_ptr(kc, RSLUB_INDEX_BITS)] == b;
	rcu_read_unlock();
	return first;
}

/* Test-only: the slot backing @kc, held (rslub_test_slot_put()), or NULL. */
void *rslub_test_slot_hold(struct kmem_cache *kc)
{
	return rslub_get(kc);
}

/* Test-only: lets go of a slot of rslub_test_slot_hold(). */
void rslub_test_slot_put(void *b)
{
	rslub_put(b);
}

/*
 * Test-only: kmem_cache_alloc(@kc, @gfp) as its trampoline serves it from the slot @slot
 * (rslub_test_slot_of()), with @stall_us of busy waiting (preemption on, no sleep)
 * between the trampoline's check of the slot and the fast path, *@checked set once the
 * check passed. NULL where @slot does not back @kc (the trampoline would look further);
 * ERR_PTR(-EOPNOTSUPP) without direct calls (not built, or direct=0).
 */
void *rslub_test_dr_alloc(struct kmem_cache *kc, gfp_t gfp, void *slot, unsigned int stall_us,
			  bool *checked)
{
#ifdef RSLUB_DIRECT
	struct rslub_backing *b = slot;
	u64 end;

	/* No trampoline runs without the direct calls, and unbacking does not wait for one. */
	if (!READ_ONCE(rslub_direct_used))
		return ERR_PTR(-EOPNOTSUPP);
	if (!kc || READ_ONCE(b->kc) != kc)
		return NULL;
	WRITE_ONCE(*checked, true);
	end = ktime_get_ns() + (u64)stall_us * NSEC_PER_USEC;
	while (ktime_get_ns() < end)
		cpu_relax();
	return rslub_backed_alloc_fast(kc, gfp, b);
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

/* Test-only: kvmalloc()'s fallback of the next starts without the thunk (@on). */
void rslub_kmalloc_kv_vmalloc(bool on)
{
	rslub_kv_force_vmalloc = on;
}

/* Test-only: whether a class served the probe of the last start that failed midway. */
bool rslub_kmalloc_failed_served(void)
{
	return rslub_kmalloc_served_probe;
}

/* Test-only: whether kmalloc's hooks are registered or any class is in their table. */
bool rslub_kmalloc_hooked(void)
{
	int t, i;

	if ((rslub_kmalloc_ops.flags & FTRACE_OPS_FL_ENABLED) || rslub_kmalloc_direct_on())
		return true;
	for (t = 0; t < NR_KMALLOC_TYPES; t++)
		for (i = 0; i <= KMALLOC_SHIFT_HIGH; i++)
			if (rslub_kmalloc_rc[t][i])
				return true;
	return false;
}

/* Test-only: whether rslub_kmalloc_only() limits the hooks to a task. */
bool rslub_kmalloc_filtered(void)
{
	return READ_ONCE(rslub_kmalloc_task);
}
#endif
