// SPDX-License-Identifier: GPL-2.0
/*
 * kmalloc under rslub (whole-kernel mode, Documentation/backing.rst). rslub has a size
 * class of its own for every kmalloc cache of the kernel's that it serves: an rslub
 * cache of the kernel cache's name, object size, alignment and usercopy window, so that
 * a class holds kmalloc_size_roundup() of every request it takes, power-of-two sizes
 * are naturally aligned, and reclaimable requests (kmalloc-rcl-*) and partition copies
 * stay apart from the rest. Accounted (__GFP_ACCOUNT under CONFIG_MEMCG) and DMA
 * requests, requests above KMALLOC_MAX_CACHE_SIZE, size 0 and kmalloc_nolock() stay the
 * kernel's; a kmem_buckets request is served by the bucket's own cache where that is
 * backed (the bucket caches are ordinary caches, sighted and backed as any). A second
 * ftrace_ops takes the entry points, registered only in this mode: without it kmalloc
 * costs nothing more. Frees, ksize() and krealloc() of the classes' objects need
 * nothing new: they are routed by page, as for every backed cache's.
 *
 * Locks: rslub_backed_lock (index.c) over the changes of the class table and of the bulk
 * counts (rslub_hook_kmalloc(), rslub_unhook_kmalloc()). The replacements take none: the
 * classes stay until rslub_unhook_kmalloc() has removed the hooks (for good in
 * whole-kernel mode), and a bucket's class is a backed cache's slot, held by its counts.
 */
#include "kmalloc.h"

/*
 * The classes, indexed as kmalloc_caches[type][index]: NULL where the kernel serves.
 * Set once every kmalloc hook is registered, cleared after they are removed. Not
 * static: the kmalloc trampolines read its KMALLOC_NORMAL row (direct.S).
 */
void *rslub_kmalloc_rc[NR_KMALLOC_TYPES][KMALLOC_SHIFT_HIGH + 1];

/*
 * kmalloc_index() of every size a class may serve, by (size - 1) / 8: mm/slab_common.c's
 * kmalloc_size_index up to 192 (not exported; the kernel rewrites it at boot only where
 * KMALLOC_MIN_SIZE is above 8), fls(size - 1) above. Filled before the kmalloc hooks are
 * registered; the trampolines read it (direct.S).
 */
static_assert(KMALLOC_MIN_SIZE == 8);
static_assert(KMALLOC_MAX_CACHE_SIZE == RSLUB_KMALLOC_MAX_CACHE_SIZE);
static_assert(KMALLOC_NORMAL == 0);
u8 rslub_kmalloc_index[RSLUB_KMALLOC_MAX_CACHE_SIZE / 8];

/*
 * The flags that make a request other than KMALLOC_NORMAL (KMALLOC_NOT_NORMAL_BITS), and
 * those of them that rslub never serves: DMA, and __GFP_ACCOUNT under CONFIG_MEMCG
 * (rslub_charged(); a reclaimable accounted request is KMALLOC_RECLAIM's, and still
 * charged). Read by the kmalloc trampolines (direct.S).
 */
const u32 rslub_kmalloc_not_normal = (__force u32)KMALLOC_NOT_NORMAL_BITS;
const u32 rslub_kmalloc_never =
	(__force u32)(__GFP_DMA | (IS_ENABLED(CONFIG_MEMCG) ? __GFP_ACCOUNT : 0));

#ifdef RSLUB_INJECT
/*
 * Test-only: when set, the kmalloc hooks serve only this task's calls made from this
 * module's code (the suites' helpers), so that no object of the kernel's outlives the
 * classes the suite destroys.
 */
struct task_struct *rslub_kmalloc_task;
/* Test-only: rslub_kmalloc_fail_next() was called (under the backing lock). */
bool rslub_kmalloc_fail;
/* Test-only: a class served the probe of rslub_kmalloc_fail_midway(). */
bool rslub_kmalloc_served_probe;
/* Test-only: kvmalloc()'s fallback without the thunk, for the next start. */
bool rslub_kv_force_vmalloc;
#endif

/* mm/slub.c's kmalloc_gfp_adjust(): kvmalloc()'s flags for its kmalloc attempt. */
static __always_inline gfp_t rslub_kvmalloc_gfp(gfp_t flags, size_t size)
{
	if (size > PAGE_SIZE) {
		flags |= __GFP_NOWARN;
		if (!(flags & __GFP_RETRY_MAYFAIL))
			flags &= ~__GFP_DIRECT_RECLAIM;
		flags &= ~__GFP_NOFAIL;
	}
	return flags;
}

/*
 * The class serving a kmalloc of @size from @b (NULL: the kmalloc caches) with @flags
 * and @token, or NULL if the kernel does; a bucket's class is held (*@held, to be put).
 */
static __always_inline void *rslub_kmalloc_get(size_t size, kmem_buckets *b, gfp_t flags,
					       kmalloc_token_t token,
					       struct rslub_backing **held)
{
	if (!rslub_kmalloc_size_ok(size, flags))
		return NULL;
	if (unlikely(b)) {
		*held = rslub_get((*b)[rslub_kmalloc_index_of(size)]);
		return *held ? (*held)->rc : NULL;
	}
	return READ_ONCE(rslub_kmalloc_rc[kmalloc_type(flags, token)][rslub_kmalloc_index_of(size)]);
}

/*
 * The kernel's function @fn for a call rslub does not serve after all: with direct calls,
 * past its call site (its thunk, direct.S: its trampoline would send the call back here);
 * with the handler, @fn itself, which the handler lets through. Holding the module
 * (RSLUB_HOLDING_MODULE): the kernel's function may sleep.
 */
#ifdef RSLUB_DIRECT_KMALLOC
bool rslub_kmalloc_direct;
#define RSLUB_KMALLOC_KERNEL(fn, ...)                                                        \
	RSLUB_HOLDING_MODULE(READ_ONCE(rslub_kmalloc_direct) ? rslub_k_##fn(__VA_ARGS__) : \
							       fn(__VA_ARGS__))
#else
#define RSLUB_KMALLOC_KERNEL(fn, ...) RSLUB_HOLDING_MODULE(fn(__VA_ARGS__))
#endif

/*
 * The replacements. The direct ones (rslub_dr_*) are given the class by their trampoline,
 * or NULL to take it themselves; the handler's (rslub_r_*) always take it (its answer is
 * not passed on). Where there is none by now (the suites remove the hooks; a bucket
 * unbacked), the kernel's function serves. @ip is the caller's return address.
 */
static __always_inline void *rslub_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
						int node, unsigned long caller, void *rc,
						unsigned long ip)
{
	struct rslub_backing *held = NULL;
	void *p;

	if (unlikely(rslub_kmalloc_limited(ip)))
		rc = NULL;
	else if (!rc)
		rc = rslub_kmalloc_get(size, PASS_BUCKET_PARAM(b), flags, PASS_TOKEN_PARAM(token),
				       &held);
	if (!rc)
		return RSLUB_KMALLOC_KERNEL(__kmalloc_node_track_caller_noprof,
					    PASS_KMALLOC_PARAMS(size, b, token), flags, node, caller);
	p = rslub_cache_alloc_node(rc, flags, node);
	if (held)
		rslub_put(held);
	return rslub_kasan_kmalloc(p, size, flags);
}

/*
 * rslub_kmalloc_node() for the direct replacements where their trampoline gave no class:
 * out of line, so that their plain path (a class given) keeps no frame and ends in a tail
 * call of rslub's allocation.
 */
static noinline notrace void *rslub_kmalloc_node_slow(DECL_KMALLOC_PARAMS(size, b, token),
						      gfp_t flags, int node, unsigned long caller,
						      void *rc, unsigned long ip)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, b, token), flags, node, caller, rc, ip);
}

notrace void *rslub_dr_kmalloc_track_caller(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
					    int node, unsigned long caller, void *rc)
{
	if (likely(rc) && !rslub_kmalloc_limited(_RET_IP_))
		return rslub_kasan_kmalloc(rslub_cache_alloc_node(rc, flags, node), size, flags);
	return rslub_kmalloc_node_slow(PASS_KMALLOC_PARAMS(size, b, token), flags, node, caller,
				       rc, _RET_IP_);
}

notrace void *rslub_dr_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node,
				    void *rc)
{
	if (likely(rc) && !rslub_kmalloc_limited(_RET_IP_))
		return rslub_kasan_kmalloc(rslub_cache_alloc_node(rc, flags, node), size, flags);
	return rslub_kmalloc_node_slow(PASS_KMALLOC_PARAMS(size, b, token), flags, node, _RET_IP_,
				       rc, _RET_IP_);
}

notrace void *rslub_dr_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags, void *rc)
{
	if (likely(rc) && !rslub_kmalloc_limited(_RET_IP_))
		return rslub_kasan_kmalloc(rslub_cache_alloc(rc, flags), size, flags);
	return rslub_kmalloc_node_slow(PASS_KMALLOC_PARAMS(size, NULL, token), flags, NUMA_NO_NODE,
				       _RET_IP_, rc, _RET_IP_);
}

notrace void *rslub_r_kmalloc_node_track_caller(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
						int node, unsigned long caller)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, b, token), flags, node, caller, NULL,
				  _RET_IP_);
}

notrace void *rslub_r_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, b, token), flags, node, _RET_IP_, NULL,
				  _RET_IP_);
}

notrace void *rslub_r_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, NULL, token), flags, NUMA_NO_NODE,
				  _RET_IP_, NULL, _RET_IP_);
}

static __always_inline void *rslub_kmalloc_cache(struct kmem_cache *s, gfp_t flags, int node,
						 size_t size, void *rc, unsigned long ip)
{
	if (unlikely(rslub_kmalloc_limited(ip)))
		rc = NULL;
	else if (!rc)
		rc = rslub_kmalloc_class_of(s, flags);
	if (!rc)
		return RSLUB_KMALLOC_KERNEL(__kmalloc_cache_node_noprof, s, flags, node, size);
	return rslub_kasan_kmalloc(rslub_cache_alloc_node(rc, flags, node), size, flags);
}

/* rslub_kmalloc_cache() out of line, as rslub_kmalloc_node_slow(). */
static noinline notrace void *rslub_kmalloc_cache_slow(struct kmem_cache *s, gfp_t flags,
						       int node, size_t size, void *rc,
						       unsigned long ip)
{
	return rslub_kmalloc_cache(s, flags, node, size, rc, ip);
}

notrace void *rslub_dr_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node,
					  size_t size, void *rc)
{
	if (likely(rc) && !rslub_kmalloc_limited(_RET_IP_))
		return rslub_kasan_kmalloc(rslub_cache_alloc_node(rc, flags, node), size, flags);
	return rslub_kmalloc_cache_slow(s, flags, node, size, rc, _RET_IP_);
}

notrace void *rslub_dr_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size, void *rc)
{
	if (likely(rc) && !rslub_kmalloc_limited(_RET_IP_))
		return rslub_kasan_kmalloc(rslub_cache_alloc(rc, flags), size, flags);
	return rslub_kmalloc_cache_slow(s, flags, NUMA_NO_NODE, size, rc, _RET_IP_);
}

notrace void *rslub_r_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node, size_t size)
{
	return rslub_kmalloc_cache(s, flags, node, size, NULL, _RET_IP_);
}

notrace void *rslub_r_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size)
{
	return rslub_kmalloc_cache(s, flags, NUMA_NO_NODE, size, NULL, _RET_IP_);
}

/*
 * kvmalloc()'s fallback where a class could not serve a request above a page: the
 * kernel's __kvmalloc_node() past its call site (its thunk, direct.S), which neither the
 * handler nor a trampoline sees: its vmalloc fallback takes kvmalloc()'s flags as they
 * are (in __vmalloc_node_range(), not exported; vmalloc_huge_node() would warn of
 * __GFP_RECLAIMABLE and others), after a try of its own kmalloc cache. The caller
 * address it records (slab tracking, /proc/vmallocinfo) is then rslub's. Where its call
 * site is not where the thunk assumes (rslub_kv_thunk, checked when kmalloc's hooks are
 * registered), vmalloc_huge_node() with the flags it supports, as vmalloc_fix_flags()
 * leaves them, without its warning.
 */
static bool rslub_kv_thunk __maybe_unused;

static __always_inline void *rslub_kvmalloc_fallback(DECL_KMALLOC_PARAMS(size, b, token),
						     unsigned long align, gfp_t flags, int node)
{
	/* mm/vmalloc.c's GFP_VMALLOC_SUPPORTED (not in a header). */
	const gfp_t supported = GFP_KERNEL | GFP_ATOMIC | GFP_NOWAIT | __GFP_NOFAIL |
				__GFP_ZERO | __GFP_NORETRY | __GFP_RETRY_MAYFAIL | GFP_NOFS |
				GFP_NOIO | GFP_KERNEL_ACCOUNT | GFP_USER | __GFP_NOLOCKDEP |
				__GFP_SKIP_KASAN;

#ifdef RSLUB_DIRECT
	if (likely(READ_ONCE(rslub_kv_thunk)))
		return RSLUB_HOLDING_MODULE(rslub_k___kvmalloc_node_noprof(
			PASS_KMALLOC_PARAMS(size, b, token), align, flags, node));
#endif
	return RSLUB_HOLDING_MODULE(vmalloc_huge_node_noprof(size, flags & supported, node));
}

/*
 * kvmalloc(): a class with mm/slub.c's adjusted flags, as the kernel tries kmalloc
 * first; a request above a page that the class cannot take falls back as the kernel's
 * (above). An alignment above a page, which vmalloc must give, stays the kernel's.
 */
static __always_inline void *rslub_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token),
					    unsigned long align, gfp_t flags, int node, void *rc,
					    unsigned long ip)
{
	struct rslub_backing *held = NULL;
	void *p;

	if (unlikely(align > PAGE_SIZE || rslub_kmalloc_limited(ip)))
		rc = NULL;
	else if (!rc)
		rc = rslub_kmalloc_get(size, PASS_BUCKET_PARAM(b), flags, PASS_TOKEN_PARAM(token),
				       &held);
	if (!rc)
		return RSLUB_KMALLOC_KERNEL(__kvmalloc_node_noprof,
					    PASS_KMALLOC_PARAMS(size, b, token), align, flags, node);
	p = rslub_cache_alloc_node(rc, rslub_kvmalloc_gfp(flags, size), node);
	if (held)
		rslub_put(held);
	if (p || size <= PAGE_SIZE)
		return rslub_kasan_kmalloc(p, size, flags);
	return rslub_kvmalloc_fallback(PASS_KMALLOC_PARAMS(size, b, token), align, flags, node);
}

notrace void *rslub_dr_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align,
				gfp_t flags, int node, void *rc)
{
	return rslub_kvmalloc(PASS_KMALLOC_PARAMS(size, b, token), align, flags, node, rc,
			      _RET_IP_);
}

notrace void *rslub_r_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align,
			       gfp_t flags, int node)
{
	return rslub_kvmalloc(PASS_KMALLOC_PARAMS(size, b, token), align, flags, node, NULL,
			      _RET_IP_);
}

/*
 * kvrealloc(): of NULL, a kvmalloc() (of @rc where the trampoline found it); of an rslub
 * object, mm/slub.c's own steps through the hooked functions (krealloc() of it is
 * rslub's, and a kvmalloc() fallback is served where it can be), which the kernel's may
 * call inline, where no hook sees them.
 */
static __always_inline void *rslub_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token),
					     unsigned long align, gfp_t flags, int nid, void *rc,
					     unsigned long ip)
{
	void *n;

	if (!p) {
		if (unlikely(align > PAGE_SIZE || rslub_kmalloc_limited(ip)))
			return RSLUB_KMALLOC_KERNEL(kvrealloc_node_align_noprof, NULL,
						    PASS_TOKEN_PARAMS(size, token), align, flags,
						    nid);
		return rslub_kvmalloc(PASS_KMALLOC_PARAMS(size, NULL, token), align, flags, nid, rc,
				      ip);
	}
	n = krealloc_node_align_noprof(p, PASS_TOKEN_PARAMS(size, token), align,
				       rslub_kvmalloc_gfp(flags, size), nid);
	if (n)
		return n;
	n = __kvmalloc_node_noprof(PASS_KMALLOC_PARAMS(size, NULL, token), align, flags, nid);
	if (!n)
		return NULL;
	rslub_copy_object(n, p, min(size, rslub_object_size(p)));
	rslub_free_owned((void *)p);
	return n;
}

notrace void *rslub_dr_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token), unsigned long align,
				 gfp_t flags, int nid, void *rc)
{
	return rslub_kvrealloc(p, PASS_TOKEN_PARAMS(size, token), align, flags, nid, rc, _RET_IP_);
}

notrace void *rslub_r_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token), unsigned long align,
				gfp_t flags, int nid)
{
	return rslub_kvrealloc(p, PASS_TOKEN_PARAMS(size, token), align, flags, nid, NULL,
			       _RET_IP_);
}

#ifdef RSLUB_INJECT
/*
 * Test-only, where rslub_kmalloc_fail_next() asked: the start fails after its hooks are
 * registered, as one fails whose direct call is refused midway (a BPF trampoline on a
 * later entry point) while the first ones are live. This task's kmalloc is probed
 * meanwhile: no class may serve it, as the start fails and its classes go. -EBUSY, the
 * hooks removed; 0 where no failure was asked.
 */
static int rslub_kmalloc_fail_midway(void)
{
	void *p;

	if (!rslub_kmalloc_fail)
		return 0;
	rslub_kmalloc_fail = false;
	p = kmalloc(64, GFP_KERNEL);
	rslub_kmalloc_served_probe = rslub_foreign(p);
	kfree(p);
	if (!rslub_kmalloc_direct_unregister())
		unregister_ftrace_function(&rslub_kmalloc_ops);
	return -EBUSY;
}
#else
static int rslub_kmalloc_fail_midway(void)
{
	return 0;
}
#endif

/*
 * Serves kmalloc from the classes @rc[i], each of kernel cache @kc[i] (@n of them, from
 * rslub_kmalloc_caches()), until rslub_unhook_kmalloc(): the classes must stay until
 * then. 0 or -errno (nothing changed).
 */
int rslub_hook_kmalloc(struct kmem_cache *const *kc, void *const *rc, int n)
{
	static const unsigned long fns[] = { RSLUB_KMALLOC_HOOKED(RSLUB_FN_ADDR) };
	int t, i, j, ret;

#ifdef RSLUB_DIRECT
	/* Whether kvmalloc()'s fallback may jump past its call site (rslub_kvmalloc_fallback()). */
	WRITE_ONCE(rslub_kv_thunk, rslub_direct_site_ok(__kvmalloc_node_noprof));
#endif
#ifdef RSLUB_INJECT
	if (rslub_kv_force_vmalloc)
		WRITE_ONCE(rslub_kv_thunk, false);
#endif
	for (i = 0; i < ARRAY_SIZE(rslub_kmalloc_index); i++)
		rslub_kmalloc_index[i] = __kmalloc_index(8 * (i + 1), false);
	if (rslub_kmalloc_direct_wanted())
		ret = rslub_kmalloc_direct_register();
	else
		ret = rslub_ops_register(&rslub_kmalloc_ops, fns, RSLUB_NR_KMALLOC_HOOKED,
					 "kmalloc");
	if (!ret)
		ret = rslub_kmalloc_fail_midway();
	if (ret) {
		ftrace_free_filter(&rslub_kmalloc_ops);
		return ret;
	}
	/*
	 * Only now may a class serve: the hooks, registered one by one, find no class until
	 * then and give every call to the kernel. A start that fails above has served no
	 * object from the classes its caller is about to destroy.
	 */
	mutex_lock(&rslub_backed_lock);
	for (t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (i = 0; i <= KMALLOC_SHIFT_HIGH; i++) {
			for (j = 0; j < n; j++) {
				if (kmalloc_caches[t][i] != kc[j])
					continue;
				rslub_bulk_count(kc[j], 1);
				WRITE_ONCE(rslub_kmalloc_rc[t][i], rc[j]);
			}
		}
	}
	mutex_unlock(&rslub_backed_lock);
	return 0;
}

/*
 * Removes the kmalloc hooks (the suites only: in whole-kernel mode they stay): once it
 * returns, no handler or replacement uses a class, whose objects must all be freed.
 */
void rslub_unhook_kmalloc(void)
{
	int t, i;

	if (!rslub_kmalloc_direct_unregister()) {
		unregister_ftrace_function(&rslub_kmalloc_ops);
		ftrace_free_filter(&rslub_kmalloc_ops);
	}
	mutex_lock(&rslub_backed_lock);
	for (t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (i = 0; i <= KMALLOC_SHIFT_HIGH; i++) {
			if (rslub_kmalloc_rc[t][i])
				rslub_bulk_count(kmalloc_caches[t][i], -1);
		}
	}
	mutex_unlock(&rslub_backed_lock);
	memset(rslub_kmalloc_rc, 0, sizeof(rslub_kmalloc_rc));
}
