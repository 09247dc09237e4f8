/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The slab page view (rust/slab_page.c): what rust/back's C side (hook.h), the direct-call
 * trampolines (rust/back/direct.S) and the suites' C helpers need to tell an rslub slab
 * from a slab of the kernel's.
 */
#ifndef RSLUB_SLAB_PAGE_H
#define RSLUB_SLAB_PAGE_H

/*
 * The shadow caches: RSLUB_SHADOWS slots of RSLUB_SHADOW_SIZE bytes, one per live rslub
 * cache. A slot holds the part of a struct kmem_cache that the kernel reads of a slab's
 * cache outside mm/slub.c (everything before per_node[], whose size is MAX_NUMNODES's),
 * then the rslub cache it stands for (a static_assert in rust/slab_page.c checks that it
 * fits).
 */
#define RSLUB_SHADOWS 1024
#define RSLUB_SHADOW_SIZE 384
/* Bytes of the arena: a slab's cache is one of rslub's if it lies within them. */
#define RSLUB_SHADOWS_BYTES (RSLUB_SHADOWS * RSLUB_SHADOW_SIZE)
/* struct slab's slab_cache in a slab's head page (struct page's compound_info). */
#define RSLUB_SLAB_CACHE 8

#ifndef __ASSEMBLY__
struct kmem_cache;
struct page;

/* The arena; not static: the trampolines compare with its address. */
extern char rslub_shadows[RSLUB_SHADOWS][RSLUB_SHADOW_SIZE];

/* The rslub cache a shadow stands for: the word after its struct kmem_cache part. */
#define RSLUB_SHADOW_OWNER (RSLUB_SHADOW_SIZE - sizeof(void *))

/*
 * The rslub cache (a CacheCore) whose slab's cache is @kc, or NULL if @kc is not one of
 * rslub's shadows (a cache of the kernel's). @kc is any slab's slab_cache: compared, and
 * followed only inside the arena.
 */
static __always_inline void *rslub_shadow_owner(const struct kmem_cache *kc)
{
	unsigned long off = (unsigned long)kc - (unsigned long)rslub_shadows;

	if (likely(off >= RSLUB_SHADOWS_BYTES))
		return NULL;
	return READ_ONCE(*(void **)((char *)rslub_shadows + off - off % RSLUB_SHADOW_SIZE +
				    RSLUB_SHADOW_OWNER));
}

/*
 * The rslub cache owning @x if @x is inside a slab of rslub's (an address of a slab page
 * whose cache is a shadow), else NULL. @x may be any address: only direct-map addresses
 * are looked up.
 */
void *rslub_object_cache(const void *x);

/* The rest of rust/slab_page.c, for rust/mm.rs (which documents each). */
struct kmem_cache *rslub_shadow_get(const char *name, unsigned int size,
				    unsigned int object_size, unsigned int align,
				    unsigned int offset, unsigned int inuse, bool typesafe,
				    bool reclaim, bool hwcache_align, bool red_zone, bool poison);
void rslub_shadow_own(struct kmem_cache *kc, void *owner);
void rslub_shadow_set_usercopy(struct kmem_cache *kc, unsigned int offset, unsigned int size);
void rslub_shadow_set_kmalloc(struct kmem_cache *kc);
void rslub_shadow_put(struct kmem_cache *kc);
void rslub_slab_page_set(struct page *head, struct kmem_cache *kc, void *meta,
			 unsigned int objects);
void rslub_slab_page_clear(struct page *head);
void rslub_view_exit(void);
#endif

#endif
