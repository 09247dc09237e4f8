/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rslub: a kmem cache allocator in the classic SLUB design, as a loadable module.
 *
 * The C API other modules call; the symbols are exported GPL-only by rslub.ko. The
 * semantics follow kmem_cache_*(): see Documentation/api.rst.
 */
#ifndef _RSLUB_H
#define _RSLUB_H

#include <linux/types.h>

struct rslub_cache;

/* Align objects to the hardware cache line (as SLAB_HWCACHE_ALIGN). */
#define RSLUB_HWCACHE_ALIGN	0x1U

/*
 * Debug checks, as slub_debug's letters (Documentation/reliability.rst). A cache with any
 * of them takes no fast path; misuse is reported in the kernel log and never crashes.
 */
#define RSLUB_DEBUG_SANITY	0x2U	/* F: check every free and allocation */
#define RSLUB_DEBUG_RED_ZONE	0x4U	/* Z: red zone after every object */
#define RSLUB_DEBUG_POISON	0x8U	/* P: poison free objects */
#define RSLUB_DEBUG_STORE_USER	0x10U	/* U: record where objects were allocated and freed */

/*
 * As SLAB_TYPESAFE_BY_RCU: a freed object stays an object of the cache (readable, its
 * constructed contents but for the free pointer, which goes after the object) until an
 * RCU grace period has passed, so lockless readers under rcu_read_lock() may look at it
 * and recheck its identity. Empty slabs go back to the page allocator after a grace
 * period; rslub_cache_destroy() waits for them. Such objects are not poisoned or zeroed
 * when freed (init_on_free) or allocated (init_on_alloc).
 */
#define RSLUB_TYPESAFE_BY_RCU	0x20U

/*
 * The cache's slabs are reclaimable slab memory (SLAB_RECLAIM_ACCOUNT): counted as
 * SReclaimable in /proc/meminfo and taken from reclaimable page blocks.
 */
#define RSLUB_RECLAIM_ACCOUNT	0x40U

/*
 * Creates a cache of objects of @size bytes aligned to @align (0, or a power of two up to
 * the page allocator's largest block), with @flags (RSLUB_HWCACHE_ALIGN, RSLUB_DEBUG_*,
 * RSLUB_TYPESAFE_BY_RCU) and an optional constructor run once per object when its slab
 * is created. @name must be unique among live caches. Returns the cache, or an
 * ERR_PTR(): -EINVAL for bad arguments (size 0 or too large for a slab, a bad alignment,
 * an unknown flag, an empty or NULL name), -EEXIST for a duplicate name, -ENOMEM. May
 * sleep.
 */
struct rslub_cache *rslub_cache_create(const char *name, unsigned int size,
				       unsigned int align, unsigned int flags,
				       void (*ctor)(void *));

/*
 * Destroys @s: every slab goes back to the page allocator. Returns 0, or -EBUSY if
 * objects were still allocated: then the cache name and count are logged and the cache
 * and those slabs are kept (leaked), so their memory stays valid. May sleep.
 */
int rslub_cache_destroy(struct rslub_cache *s);

/*
 * An object, or NULL when memory is short. Any context, as @gfp allows; __GFP_ZERO
 * zeroes the object.
 */
void *rslub_cache_alloc(struct rslub_cache *s, gfp_t gfp);

/*
 * An object from node @node (NUMA_NO_NODE: any, the local one preferred), or NULL when
 * memory is short. A node without memory, offline, or no node id at all, is no
 * constraint (any node serves), as with 6.12's kmem_cache_alloc_node().
 */
void *rslub_cache_alloc_node(struct rslub_cache *s, gfp_t gfp, int node);

/* Frees @obj, allocated from @s. Any context. */
void rslub_cache_free(struct rslub_cache *s, void *obj);

/* Fills @p with @nr objects; returns @nr, or 0 (and allocates nothing) on failure. */
int rslub_cache_alloc_bulk(struct rslub_cache *s, gfp_t gfp, size_t nr, void **p);

/*
 * Frees the @nr objects of @p; NULL entries are skipped. As 6.12's
 * kmem_cache_free_bulk(), the entries of @p are reordered while the objects of one slab
 * are chained: @p's contents are undefined afterwards.
 */
void rslub_cache_free_bulk(struct rslub_cache *s, size_t nr, void **p);

/* Gives every CPU's active slab back and frees every empty slab. May sleep. */
void rslub_cache_shrink(struct rslub_cache *s);

#endif /* _RSLUB_H */
