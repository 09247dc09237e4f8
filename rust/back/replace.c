// SPDX-License-Identifier: GPL-2.0
/*
 * The replacements of the kmem_cache API, where the handler (handler.c) or a trampoline
 * (direct.S) sends a call that is rslub's: the allocations of a backed cache, the frees,
 * bulk frees, ksize() and krealloc() of rslub's objects, kmem_cache_destroy() of a cache
 * backed, watched or sighted, and kmem_cache_charge() of rslub's objects.
 *
 * Each is reached with the hooked function's arguments in place. An allocation takes the
 * backing again: the cache may have been unbacked since the handler looked, and then the
 * kernel's own function serves (the handler lets an unbacked cache through).
 * rslub_get()/rslub_put() keep the rslub cache alive across the call. A free was only
 * redirected for an object rslub owns, which stays so while it is live.
 *
 * Locks: none on the allocation and free paths (a slot is held by its per-CPU counts,
 * or by disabled preemption, see hook.h); the destroys take rslub_destroy_lock, one at a
 * time, and rust/back/mod.rs's own lock inside rslub_back_destroying().
 */
#include "hook.h"

/* What replacements hold of the module while they sleep without a slot (hook.h). */
atomic_t rslub_holding;

notrace void *rslub_r_alloc(struct kmem_cache *s, gfp_t gfp)
{
	struct rslub_backing *b = rslub_get(s);
	void *p;

	if (!b)
		return RSLUB_HOLDING_MODULE(kmem_cache_alloc_noprof(s, gfp));
	p = rslub_cache_alloc(b->rc, gfp);
	rslub_put(b);
	return p;
}

notrace void *rslub_r_alloc_lru(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp)
{
	/*
	 * Never memcg-charged (rslub_charged() and SLAB_ACCOUNT went to the kernel): the
	 * kernel uses @lru only to charge, so the lru needs nothing here.
	 */
	return rslub_r_alloc(s, gfp);
}

notrace void *rslub_r_alloc_node(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct rslub_backing *b = rslub_get(s);
	void *p;

	if (!b)
		return RSLUB_HOLDING_MODULE(kmem_cache_alloc_node_noprof(s, gfp, node));
	p = rslub_cache_alloc_node(b->rc, gfp, node);
	rslub_put(b);
	return p;
}

notrace bool rslub_r_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p)
{
	struct rslub_backing *b = rslub_get(s);
	int n;

	if (!b)
		return RSLUB_HOLDING_MODULE(kmem_cache_alloc_bulk_noprof(s, gfp, size, p));
	n = rslub_cache_alloc_bulk(b->rc, gfp, size, p);
	rslub_put(b);
	return n != 0;
}

notrace void rslub_r_free(struct kmem_cache *s, void *x)
{
	rslub_free_owned(x);
}

notrace void rslub_r_kfree(const void *x)
{
	rslub_free_owned((void *)x);
}

notrace size_t rslub_r_ksize(const void *x)
{
	return rslub_object_size(x);
}

/*
 * krealloc() of an rslub object, as mm/slub.c's __do_krealloc() does it: kept where it
 * is while it fits (its object size), is aligned as asked, and need not move to another
 * node (__GFP_THISNODE), the spare part zeroed where init_on_alloc or __GFP_ZERO want
 * it; otherwise moved to a new kmalloc() (rslub's size classes in whole-kernel mode,
 * the kernel's else) and the old object freed to rslub.
 */
notrace void *rslub_r_krealloc(const void *p, DECL_TOKEN_PARAMS(new_size, token),
			       unsigned long align, gfp_t flags, int nid)
{
	size_t ks = rslub_object_size(p);
	void *n;

	if (unlikely(!new_size)) {
		rslub_free_owned((void *)p);
		return ZERO_SIZE_PTR;
	}
	if (new_size <= ks && IS_ALIGNED((unsigned long)p, align) &&
	    !((flags & __GFP_THISNODE) && nid != NUMA_NO_NODE &&
	      nid != page_to_nid(virt_to_page(p)))) {
		/* The whole object accessible, then the new size's red zone (kasan_krealloc()). */
		rslub_kasan_unpoison(p, ks);
		if (want_init_on_alloc(flags))
			memset((void *)p + new_size, 0, ks - new_size);
		return rslub_kasan_kmalloc((void *)p, new_size, flags);
	}
	n = __kmalloc_node_track_caller_noprof(PASS_KMALLOC_PARAMS(new_size, NULL, token), flags,
					       nid, _RET_IP_);
	if (!n)
		return NULL;
	rslub_copy_object(n, p, min(ks, new_size));
	rslub_free_owned((void *)p);
	return n;
}

#ifdef RSLUB_INJECT
/* Test-only: called by rslub_r_destroy() right before the kernel's kmem_cache_destroy(). */
void (*rslub_test_before_destroy)(struct kmem_cache *s);
#endif

/*
 * Destroys of backed caches, one at a time, so that the reference count each reads is
 * exact; rslub_sight_flush() takes it too.
 */
DEFINE_MUTEX(rslub_destroy_lock);

/*
 * The task of rslub_r_destroy() calling the kernel's kmem_cache_destroy() of a cache it
 * left backed (another alias holds it), and that cache: that call goes through, where any
 * other of the cache waits for the lock.
 */
struct task_struct *rslub_destroy_task;
struct kmem_cache *rslub_destroy_kc;

notrace void rslub_r_destroy(struct kmem_cache *s)
{
	/*
	 * Unbacking may remove the hooks and with them the module reference they held (the
	 * last one, for all it knows): hold one until the kernel's destroy, which sleeps,
	 * has returned.
	 */
	rslub_hold();
	mutex_lock(&rslub_destroy_lock);
	/*
	 * Stop backing first: the table must not keep a pointer to a freed cache. But a
	 * merged cache (slab merging, the default of distribution kernels) has one
	 * reference per creator, and the kernel frees it only with the last: until then the
	 * others still allocate from it, and it stays backed. Every destroy of a backed cache
	 * comes here (aliases share the struct), under this lock, so no other destroy lowers
	 * the count between this read and the kernel's decrement; a new alias may raise it,
	 * which only leaves a cache unbacked that lives on.
	 */
	rslub_back_destroying(s, READ_ONCE(s->refcount) <= 1);
#ifdef RSLUB_INJECT
	if (rslub_test_before_destroy)
		rslub_test_before_destroy(s);
#endif
	WRITE_ONCE(rslub_destroy_kc, s);
	WRITE_ONCE(rslub_destroy_task, current);
	kmem_cache_destroy(s);
	WRITE_ONCE(rslub_destroy_task, NULL);
	WRITE_ONCE(rslub_destroy_kc, NULL);
	/*
	 * A sighted cache's struct is held by its sighting (the table is rslub's memory: the
	 * check reads no struct), so it is still there: once every creator has destroyed it,
	 * the backing the worker may have made meanwhile (after the unbacking above, before
	 * the kernel's count dropped) and the sighting go, and with it the hold.
	 */
	if (rslub_sight_held(s) && !READ_ONCE(s->refcount))
		rslub_back_destroyed(s);
	mutex_unlock(&rslub_destroy_lock);
	rslub_release();
}

/*
 * kmem_cache_free_bulk(@s, ...) of a backed cache: the whole array to its rslub cache's
 * bulk free, with preemption off as the handler holds its slot (unbacking waits out a
 * grace period before it takes the rslub cache), which frees its own objects
 * and moves the rest (the kernel's) to the front of the array: returns how many, to be
 * freed by the caller with preemption and interrupts on again, as kmem_cache_free_bulk()
 * requires. SIZE_MAX where @s is not backed (draining, say) or its rslub cache does not
 * take such arrays: then nothing was freed.
 */
static __always_inline size_t rslub_free_bulk_backed(struct kmem_cache *s, size_t size, void **p)
{
#ifdef RSLUB_DIRECT
	struct rslub_backing *b;
	size_t left = SIZE_MAX;

	preempt_disable();
	b = rslub_lookup(s);
	if (b)
		left = rslub_backed_free_bulk(READ_ONCE(b->rc), size, p);
	preempt_enable();
	return left;
#else
	return SIZE_MAX;
#endif
}

/*
 * kmem_cache_free_bulk() and kfree_bulk(), sorted: each run of consecutive objects of one
 * rslub cache goes to rslub's bulk free (objects of one slab chained, one update per
 * chain, as the cache's profile finds them: 6.12's build_detached_freelist() under the
 * classic one), each run of the kernel's objects to the kernel's function (past its call
 * site with direct calls, see RSLUB_KMALLOC_KERNEL(); the handler lets such a run
 * through). Out of line: rslub_r_free_bulk() keeps no register for it.
 */
static noinline notrace void rslub_free_bulk_sorted(struct kmem_cache *s, size_t size, void **p)
{
	size_t i = 0;

	while (i < size) {
		/* Only the exact pointer, if p[i] is on no slab. */
		unsigned long outside = ~0UL, at = (unsigned long)p[i];
		void *rc = rslub_foreign_slab(p[i], &outside);
		size_t j;

		/* The run: one look at a page per slab, an xor and a mask per object. */
		for (j = i + 1; j < size; j++) {
			unsigned long next = ~0UL;

			if (!(((unsigned long)p[j] ^ at) & outside))
				continue;
			if (rslub_foreign_slab(p[j], &next) != rc)
				break;
			at = (unsigned long)p[j];
			outside = next;
		}
		if (rc)
			rslub_cache_free_bulk(rc, j - i, p + i);
#ifdef RSLUB_DIRECT
		else if (READ_ONCE(rslub_direct_used))
			rslub_k_kmem_cache_free_bulk(s, j - i, p + i);
#endif
		else
			kmem_cache_free_bulk(s, j - i, p + i);
		i = j;
	}
}

/*
 * kmem_cache_free_bulk() and kfree_bulk(): a backed cache's array to its rslub cache
 * (rslub_free_bulk_backed()), and what that leaves, or any other array, sorted
 * (rslub_free_bulk_sorted()).
 */
notrace void rslub_r_free_bulk(struct kmem_cache *s, size_t size, void **p)
{
	if (s) {
		size_t left = rslub_free_bulk_backed(s, size, p);

		/* Its own objects alone, as a backed cache's array usually is. */
		if (!left)
			return;
		if (left != SIZE_MAX)
			size = left;
	}
	rslub_free_bulk_sorted(s, size, p);
}

#ifdef CONFIG_MEMCG
/*
 * kmem_cache_charge() of an rslub object: the kernel's function reads the object's struct
 * slab, which an rslub object has not (a NULL dereference once any memory cgroup is
 * online). Its one caller in 7.3 (__sk_charge(), net/core/sock.c, on accept) charges
 * sockets of SLAB_ACCOUNT caches, which rslub refuses to back, but any module may call
 * it. rslub objects are never charged; they are not charged now either, and the call
 * succeeds, as the kernel's does for an object it does not charge (KMALLOC_NORMAL).
 */
notrace bool rslub_r_charge(void *objp, gfp_t gfpflags)
{
	return true;
}
#endif /* CONFIG_MEMCG */
