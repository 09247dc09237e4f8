// SPDX-License-Identifier: GPL-2.0
/*
 * Facts about a kernel kmem_cache that rust/back/mod.rs needs to back it: its geometry,
 * flags and usercopy window (struct kmem_cache is mm/slab.h's, which only C can include),
 * its name in /sys/kernel/slab, a hold on its struct, whether every creator has destroyed
 * it; which caches can be found by name at once; and why rslub refuses a cache, kmalloc's
 * own included. Nothing here is on a hot path, and nothing takes a lock of rslub's.
 */
#include "hook.h"

/* What rslub needs of a kernel cache to serve it. */
void rslub_kc_info(struct kmem_cache *kc, unsigned int *size, unsigned int *align,
		   void (**ctor)(void *), unsigned long *flags, const char **name)
{
	*size = kc->object_size;
	*align = kc->align;
	*ctor = kc->ctor;
	*flags = (__force unsigned long)kc->flags;
	*name = kc->name;
}

/* Whether @kc's slabs are reclaimable slab memory (SLAB_RECLAIM_ACCOUNT). */
bool rslub_kc_reclaim_account(struct kmem_cache *kc)
{
	return kc->flags & SLAB_RECLAIM_ACCOUNT;
}

/*
 * Whether @kc is SLAB_TYPESAFE_BY_RCU; if it is, *@offset is where its free pointer lies
 * inside the object (the freeptr_offset it was created with), or UINT_MAX if the kernel
 * put it after the object (freeptr_outside_object(): s->offset >= s->inuse). KASAN's
 * kasan_cache_create() never moves s->offset, and debug caches are refused.
 */
bool rslub_kc_typesafe_by_rcu(struct kmem_cache *kc, unsigned int *offset)
{
	if (!(kc->flags & SLAB_TYPESAFE_BY_RCU))
		return false;
	*offset = kc->offset < kc->inuse ? kc->offset : UINT_MAX;
	return true;
}

/* Why rslub cannot serve @kc correctly, kmalloc cache or not, or NULL if it can. */
static const char *rslub_kc_refusal_common(struct kmem_cache *kc)
{
	if (kc->flags & SLAB_ACCOUNT)
		return "SLAB_ACCOUNT: rslub does not charge objects to memory cgroups";
	if (kc->flags & (SLAB_RED_ZONE | SLAB_POISON | SLAB_STORE_USER |
			 SLAB_CONSISTENCY_CHECKS | SLAB_TRACE))
		return "a slub_debug flag: rslub has no red zones, poisoning or tracking";
	/* Freed inside mm/slub.c and slab_common.c, where an inlined free would miss. */
	if (!strcmp(kc->name, "kmem_cache") || !strcmp(kc->name, "kmem_cache_node"))
		return "SLUB's own metadata: mm/slub.c frees these objects itself";
	if (rslub_is_meta_cache(kc))
		return "rslub's own slab metadata: a new slab cannot wait for a slab of its own";
	if (kc->flags & (SLAB_CACHE_DMA | SLAB_CACHE_DMA32))
		return "a DMA cache: rslub's pages come from the normal zones";
	/*
	 * kmemleak's own caches (and debugobjects'): rslub tells kmemleak of every object it
	 * hands out, which for these would recurse into kmemleak (rust/sanitize.rs).
	 */
	if (IS_ENABLED(CONFIG_DEBUG_KMEMLEAK) && (kc->flags & SLAB_NOLEAKTRACE))
		return "SLAB_NOLEAKTRACE: kmemleak's own objects must not be reported to kmemleak";
	return NULL;
}

/*
 * The distinct kmalloc caches of the kernel's that rslub can serve (up to @max, at @kcs):
 * their number. Not DMA, accounted (kmalloc-cg-*) or obj_ext-less ones, nor any the
 * common refusals exclude (a slub_debug flag).
 */
int rslub_kmalloc_caches(struct kmem_cache **kcs, int max)
{
	int t, i, j, n = 0;

	for (t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (i = 0; i <= KMALLOC_SHIFT_HIGH; i++) {
			struct kmem_cache *kc = kmalloc_caches[t][i];

			if (!kc || (kc->flags & (SLAB_CACHE_DMA | SLAB_CACHE_DMA32 | SLAB_ACCOUNT |
						 SLAB_NO_OBJ_EXT)) ||
			    rslub_kc_refusal_common(kc))
				continue;
			for (j = 0; j < n && kcs[j] != kc; j++)
				;
			if (j == n && n < max)
				kcs[n++] = kc;
		}
	}
	return n;
}

/* Why rslub cannot back @kc (serve its kmem_cache_alloc()s), or NULL if it can. */
const char *rslub_kc_refusal(struct kmem_cache *kc)
{
	/*
	 * kmalloc() reaches rslub's size classes (whole-kernel mode) through its own hooks;
	 * a kmem_cache_alloc() from a kmalloc cache (a cache merged into one) stays the
	 * kernel's, as in every other mode.
	 */
	if (kc->flags & SLAB_KMALLOC)
		return "a kmalloc cache: kmalloc() is served by rslub's own size classes in whole-kernel mode, and a cache merged into it stays the kernel's (Documentation/backing.rst)";
	return rslub_kc_refusal_common(kc);
}

/*
 * The name of @name's cache in /sys/kernel/slab, in @id (@len bytes). With slab merging
 * (SLAB_MERGE_DEFAULT, or slab_merge) a mergeable cache's directory is named by its
 * flags and size (":0000200", create_unique_id() in mm/slub.c), and each name created
 * into it, the first creator's included, is a symlink to it: kmem_cache_create() of a
 * mergeable cache returns an existing one, whose name (kc->name) is its first creator's.
 * An unmergeable cache's directory has its own name. Returns 0, or -ENOENT if there is no
 * such entry. May sleep.
 */
int rslub_kc_sysfs_id(const char *name, char *id, size_t len)
{
	struct kernfs_node *dir, *kn, *target;
	int ret = -ENOENT;

	/* Through kernfs, not a path: the caller's root may have no sysfs mounted. */
	dir = kernfs_find_and_get(kernel_kobj->sd, "slab");
	if (!dir)
		return -ENOENT;
	kn = kernfs_find_and_get(dir, name);
	kernfs_put(dir);
	if (!kn)
		return -ENOENT;
	/*
	 * A symlink holds a reference to its target, which may be removed meanwhile: an
	 * alias's destroy leaves its link, and the cache it pointed to may be gone (its
	 * directory deactivated, active < 0 as kernfs_active() tests), its name since taken
	 * by an unrelated cache. Only a live directory counts.
	 */
	target = kernfs_type(kn) == KERNFS_LINK ? kn->symlink.target_kn : kn;
	if (kernfs_type(target) == KERNFS_DIR && atomic_read(&target->active) >= 0) {
		rcu_read_lock();
		ret = strscpy(id, rcu_dereference(target->name), len) < 0 ? -ENAMETOOLONG : 0;
		rcu_read_unlock();
	}
	kernfs_put(kn);
	return ret;
}

/* @kc's name in /sys/kernel/slab (see rslub_kc_sysfs_id()), or NULL. */
const char *rslub_kc_id(struct kmem_cache *kc)
{
	return __rslub_kc_id(kc);
}

/* @kc's usercopy window (hardened usercopy); false without CONFIG_HARDENED_USERCOPY. */
bool rslub_kc_usercopy(struct kmem_cache *kc, unsigned int *offset, unsigned int *size)
{
#ifdef CONFIG_HARDENED_USERCOPY
	*offset = kc->useroffset;
	*size = kc->usersize;
	return true;
#else
	return false;
#endif
}

/*
 * Keeps @kc's struct allocated until rslub_kc_release(), even if it is destroyed: with
 * sysfs (slab_state FULL, true for any cache a module sees) the kernel frees a cache's
 * struct from its kobject's release, after the last reference. A backed cache is held:
 * a destroy that unbacking did not see (an alias's destroy already inside the kernel's
 * kmem_cache_destroy() when the cache got backed, so that the last one through rslub
 * read two references) leaves the table pointing at a destroyed cache, never at a freed
 * struct that a new cache could reuse. Returns whether it holds (false without sysfs).
 */
bool rslub_kc_hold(struct kmem_cache *kc)
{
#ifdef SLAB_SUPPORTS_SYSFS
	return kobject_get_unless_zero(&kc->kobj) != NULL;
#else
	return false;
#endif
}

/*
 * The object size a merged alias of @kc may grow it to (its stride, see
 * __kmem_cache_alias()), or 0 if no cache can be merged into it (slab_unmergeable(): a
 * constructor, a usercopy window, SLAB_NO_MERGE and the other never-merge flags that
 * rslub serves; slab_nomerge on the command line costs only a few bytes zeroed).
 */
unsigned int rslub_kc_merge_size(struct kmem_cache *kc)
{
	if (kc->ctor || kc->refcount < 0 ||
	    (kc->flags & (SLAB_NO_MERGE | SLAB_TYPESAFE_BY_RCU | SLAB_NOLEAKTRACE)))
		return 0;
#ifdef CONFIG_HARDENED_USERCOPY
	if (kc->usersize)
		return 0;
#endif
	return kc->size;
}

/* Drops the hold of rslub_kc_hold(): may free @kc's struct (the kernel's release). */
void rslub_kc_release(struct kmem_cache *kc)
{
#ifdef SLAB_SUPPORTS_SYSFS
	kobject_put(&kc->kobj);
#endif
}

/* Whether every creator of the held cache @kc has destroyed it. */
bool rslub_kc_destroyed(struct kmem_cache *kc)
{
	return READ_ONCE(kc->refcount) == 0;
}

/*
 * The caches that can be found by name without waiting for them to allocate: those
 * the kernel exports a pointer to (the skb caches of net_hotdata, the kmalloc caches).
 * NULL otherwise.
 */
struct kmem_cache *rslub_kc_known(const char *name)
{
	struct kmem_cache *known[] = {
#ifdef CONFIG_NET
		net_hotdata.skbuff_cache,
		net_hotdata.skbuff_fclone_cache,
		net_hotdata.skb_small_head_cache,
#endif
	};
	int i, t;

	for (i = 0; i < ARRAY_SIZE(known); i++)
		if (known[i] && !strcmp(known[i]->name, name))
			return known[i];
	/*
	 * The kmalloc size classes (exported): they allocate through __kmalloc*(), which the
	 * name watch does not see, and are refused (SLAB_KMALLOC) with their reason at once.
	 */
	for (t = 0; t < NR_KMALLOC_TYPES; t++) {
		for (i = 0; i <= KMALLOC_SHIFT_HIGH; i++) {
			struct kmem_cache *kc = kmalloc_caches[t][i];

			if (kc && !strcmp(kc->name, name))
				return kc;
		}
	}
	return NULL;
}
