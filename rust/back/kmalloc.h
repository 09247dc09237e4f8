/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kmalloc served by rslub's size classes (kmalloc.c): what the handler (handler.c), the
 * registration (register.c) and the suites' helpers (test.c) need of it. The tests that
 * decide a call are here, __always_inline, as the handler inlines them.
 */
#ifndef RSLUB_BACK_KMALLOC_H
#define RSLUB_BACK_KMALLOC_H

#include "hook.h"

/* The classes, indexed as kmalloc_caches[type][index]: NULL where the kernel serves. */
extern void *rslub_kmalloc_rc[NR_KMALLOC_TYPES][KMALLOC_SHIFT_HIGH + 1];

/* The kmalloc_index() of @size, which is 1 to KMALLOC_MAX_CACHE_SIZE. */
static __always_inline unsigned int rslub_kmalloc_index_of(size_t size)
{
	return rslub_kmalloc_index[(size - 1) / 8];
}

#ifdef RSLUB_INJECT
/* Test-only state (kmalloc.c, which says what each is), set by test.c's helpers. */
extern struct task_struct *rslub_kmalloc_task;
extern bool rslub_kmalloc_fail, rslub_kmalloc_served_probe, rslub_kv_force_vmalloc;

/* Whether the test-only limit keeps rslub from serving a kmalloc called from @ip. */
static __always_inline bool rslub_kmalloc_limited(unsigned long ip)
{
	struct task_struct *t = READ_ONCE(rslub_kmalloc_task);

	return t && (current != t || !within_module(ip, THIS_MODULE));
}
#else
static __always_inline bool rslub_kmalloc_limited(unsigned long ip)
{
	return false;
}
#endif

/* Whether rslub serves a kmalloc of @size with @flags at all (not which class). */
static __always_inline bool rslub_kmalloc_size_ok(size_t size, gfp_t flags)
{
	/* Size 0 (ZERO_SIZE_PTR) and large requests (pages) stay the kernel's. */
	return likely(size - 1 < KMALLOC_MAX_CACHE_SIZE) && !rslub_charged(flags);
}

/* The handler's side of rslub_kmalloc_get() (kmalloc.c): whether it would return a class. */
static __always_inline bool rslub_kmalloc_served(size_t size, kmem_buckets *b, gfp_t flags,
						 kmalloc_token_t token)
{
	if (!rslub_kmalloc_size_ok(size, flags))
		return false;
	if (unlikely(b))
		/* An ordinary cache: looked up, or sighted, as kmem_cache_alloc()'s. */
		return rslub_alloc_backed((*b)[rslub_kmalloc_index_of(size)], flags);
	return READ_ONCE(rslub_kmalloc_rc[kmalloc_type(flags, token)][rslub_kmalloc_index_of(size)]);
}

/*
 * The class of the kernel's kmalloc cache @s, which the constant-size entry points are
 * given (kmalloc_caches[kmalloc_type()][kmalloc_index()], chosen inline by the caller),
 * or NULL. Its index follows from its object size; its type is most often the first.
 */
static __always_inline void *rslub_kmalloc_class_of(struct kmem_cache *s, gfp_t flags)
{
	unsigned int i, t;

	if (unlikely(!s) || rslub_charged(flags) || s->object_size - 1 >= KMALLOC_MAX_CACHE_SIZE)
		return NULL;
	i = rslub_kmalloc_index_of(s->object_size);
	for (t = 0; t < NR_KMALLOC_TYPES; t++) {
		if (kmalloc_caches[t][i] == s)
			return READ_ONCE(rslub_kmalloc_rc[t][i]);
	}
	return NULL;
}

/* Whether kmalloc's direct calls are registered (set by register.c). */
#ifdef RSLUB_DIRECT_KMALLOC
extern bool rslub_kmalloc_direct;
#endif

/* Whether they are registered (the suites ask). */
static inline bool rslub_kmalloc_direct_on(void)
{
#ifdef RSLUB_DIRECT_KMALLOC
	return READ_ONCE(rslub_kmalloc_direct);
#else
	return false;
#endif
}

/* The kmalloc entry points, most called first. */
#define RSLUB_KMALLOC_HOOKED(X)						\
	X(__kmalloc_cache_noprof)					\
	X(__kmalloc_noprof)						\
	X(__kmalloc_node_track_caller_noprof)				\
	X(__kmalloc_node_noprof)					\
	X(__kmalloc_cache_node_noprof)					\
	X(__kvmalloc_node_noprof)					\
	X(kvrealloc_node_align_noprof)

#define RSLUB_NR_KMALLOC_HOOKED (0 RSLUB_KMALLOC_HOOKED(RSLUB_ONE))

/* The replacements the handler sends kmalloc calls to (kmalloc.c). */
void *rslub_r_kmalloc_node_track_caller(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
					int node, unsigned long caller);
void *rslub_r_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node);
void *rslub_r_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags);
void *rslub_r_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node, size_t size);
void *rslub_r_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size);
void *rslub_r_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align, gfp_t flags,
		       int node);
void *rslub_r_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token), unsigned long align,
			gfp_t flags, int nid);

/* The direct calls of the kmalloc family (register.c), which kmalloc.c starts and stops. */
bool rslub_kmalloc_direct_wanted(void);
int rslub_kmalloc_direct_register(void);
bool rslub_kmalloc_direct_unregister(void);
#ifdef RSLUB_DIRECT
bool rslub_direct_site_ok(const void *fn);
#endif

#endif
