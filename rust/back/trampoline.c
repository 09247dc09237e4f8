// SPDX-License-Identifier: GPL-2.0
/*
 * What the direct-call trampolines (direct.S) ask and jump to, on the kmem_cache side:
 * rslub_d_alloc(), the handler's decision where a trampoline's quick test cannot decide;
 * the misses of the allocation fast paths (rust/back/fast.rs), which take the slot again
 * and may sleep; the bulk allocation, given the slot the trampoline found. The other
 * replacements they jump to are the handler's (replace.c, rcu.c, usercopy.c), and
 * kmalloc's take their class (kmalloc.c). Here too, checked at build time, the layouts
 * direct.S assumes. Registering the direct calls is register.c's.
 *
 * Locks: none. The fast paths hold their slot by never sleeping (RCU Tasks, index.c),
 * the misses and the bulk allocation theirs by its per-CPU counts (hook.h);
 * rslub_d_alloc() reads the index with preemption off, as the handler does.
 */
#include "hook.h"

#ifdef RSLUB_DIRECT
/* What direct.S assumes of the kernel's layouts. */
static_assert(offsetof(struct page, compound_info) == RSLUB_PAGE_COMPOUND_INFO);
static_assert(offsetof(struct page, page_type) + 3 == RSLUB_PAGE_TYPE_TOP); /* little-endian */
static_assert(sizeof(struct page) == 1 << RSLUB_PAGE_SIZE_SHIFT);
static_assert(PGTY_slab == RSLUB_PGTY_SLAB);
static_assert(GOLDEN_RATIO_64 == RSLUB_GOLDEN_RATIO_64);
#ifdef CONFIG_HAVE_ARCH_HASH
#error "rslub: direct.S computes hash_ptr() as include/linux/hash.h's generic hash_64()"
#endif
static_assert(ENDBR_INSN_SIZE == RSLUB_SITE);
static_assert(RSLUB_SITE_END - RSLUB_SITE == MCOUNT_INSN_SIZE);
static_assert(sizeof(rslub_all) == 1 && sizeof(rslub_nwatched) == 4);

#ifdef RSLUB_INJECT
/* Test-only: the task whose calls of rslub_d_*() are counted, and their count. */
static struct task_struct *rslub_direct_task;
static unsigned long rslub_direct_asked;

static __always_inline void rslub_direct_count(void)
{
	if (unlikely(READ_ONCE(rslub_direct_task) == current))
		rslub_direct_asked++;
}
#else
static __always_inline void rslub_direct_count(void)
{
}
#endif

/*
 * The flags whose allocations rslub_charged() leaves to the kernel: the allocation
 * trampolines test them before they hand a slot on (direct.S).
 */
const unsigned long rslub_alloc_charged = IS_ENABLED(CONFIG_MEMCG) ?
						  (__force unsigned long)__GFP_ACCOUNT : 0;

/* Whether rslub serves an allocation of @s with @gfp, as the handler decides. */
static __always_inline bool rslub_d_alloc_backed(struct kmem_cache *s, gfp_t gfp)
{
	bool backed;

	/* As the handler: the index's readers have preemption off (rslub_hook_unback()). */
	preempt_disable_notrace();
	backed = rslub_alloc_backed(s, gfp);
	preempt_enable_notrace();
	return backed;
}

/* The decisions of direct.S's slow paths (direct.h). */
notrace bool rslub_d_alloc(struct kmem_cache *s, gfp_t gfp)
{
	rslub_direct_count();
	return rslub_d_alloc_backed(s, gfp);
}

/*
 * The slot an allocation of @s with @gfp is served from, held (rslub_put()), as the
 * handler decides and looks it up; NULL where the kernel serves it.
 */
static __always_inline struct rslub_backing *rslub_dr_hold(struct kmem_cache *s, gfp_t gfp)
{
	if (!rslub_d_alloc_backed(s, gfp))
		return NULL;
	return rslub_get(s);
}

/*
 * The check of the fast paths (rust/back/fast.rs) on lockdep kernels: where RCU does not
 * watch (the idle loop's deepest parts, a CPU going down), neither RCU Tasks (which skips
 * idle tasks) nor the RCU grace period within it waits for an allocation, and
 * rslub_hook_unback() could take the rslub cache from under it. Nothing allocates there.
 */
notrace void rslub_dr_check_watching(void)
{
	RCU_LOCKDEP_WARN(!rcu_is_watching(), "rslub: an allocation where RCU does not watch");
}

/*
 * The misses of the allocation fast paths the trampolines jump to with a slot
 * (rslub_backed_alloc_fast*(), rust/back/fast.rs): where the fast path has more to do
 * than it may there (an empty or other node's free list, a free pointer to sort out, a
 * failed commit, a large object to zero, a sanitizer), it leaves by a tail call to its
 * miss, given what it still has in registers (the function's own arguments), so that it
 * saves none. With preemption on, as the kernel's function is entered: the slot looked
 * up again and held by its counts (rslub_dr_hold()), the rslub cache's whole allocation,
 * which may sleep (as kmem_cache_alloc_bulk's, which holds its slot by the counts from
 * the start); where the kernel serves after all (the cache unbacked meanwhile), its
 * function past its call site (its thunk), since the trampoline would send the call back
 * here.
 */
noinline notrace void *rslub_dr_alloc_miss(struct kmem_cache *s, gfp_t gfp)
{
	struct rslub_backing *b = rslub_dr_hold(s, gfp);
	void *p;

	if (unlikely(!b))
		return RSLUB_HOLDING_MODULE(rslub_k_kmem_cache_alloc_noprof(s, gfp));
	p = rslub_cache_alloc(b->rc, gfp);
	rslub_put(b);
	return p;
}

noinline notrace void *rslub_dr_alloc_lru_miss(struct kmem_cache *s, struct list_lru *lru,
					       gfp_t gfp)
{
	struct rslub_backing *b = rslub_dr_hold(s, gfp);
	void *p;

	if (unlikely(!b))
		return RSLUB_HOLDING_MODULE(rslub_k_kmem_cache_alloc_lru_noprof(s, lru, gfp));
	/* As rslub_r_alloc_lru(): never charged, so @lru is not needed. */
	p = rslub_cache_alloc(b->rc, gfp);
	rslub_put(b);
	return p;
}

noinline notrace void *rslub_dr_alloc_node_miss(struct kmem_cache *s, gfp_t gfp, int node)
{
	struct rslub_backing *b = rslub_dr_hold(s, gfp);
	void *p;

	if (unlikely(!b))
		return RSLUB_HOLDING_MODULE(rslub_k_kmem_cache_alloc_node_noprof(s, gfp, node));
	p = rslub_cache_alloc_node(b->rc, gfp, node);
	rslub_put(b);
	return p;
}

notrace bool rslub_dr_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p,
				 struct rslub_backing *hint)
{
	/* The hint, held after one check of its cache; where it went stale, the lookup. */
	struct rslub_backing *b = likely(rslub_slot_hold(hint, s)) ? hint : rslub_dr_hold(s, gfp);
	int n;

	if (unlikely(!b))
		return RSLUB_HOLDING_MODULE(rslub_k_kmem_cache_alloc_bulk_noprof(s, gfp, size, p));
	n = rslub_cache_alloc_bulk(b->rc, gfp, size, p);
	rslub_put(b);
	return n != 0;
}
#endif
