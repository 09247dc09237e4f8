// SPDX-License-Identifier: GPL-2.0
/*
 * The slab page view: rslub's slabs as the rest of the kernel sees them.
 *
 * Code outside mm/slub.c decides what to do with a page by asking whether it is a slab
 * (PageSlab(), folio_test_slab(), page_slab(), virt_to_slab()) and then reads struct
 * slab over its head page and the struct kmem_cache it points at: get_page() and
 * put_page() leave slab pages alone, iov_iter takes no reference on them, KASAN's mempool
 * and report code, hardened usercopy, kmem_dump_obj(), memory failure and isolation,
 * /proc/kpageflags (Documentation/backing.rst, "The slab page view", lists every site).
 * So an rslub slab is what a SLUB slab is to them:
 *
 *  - a compound block of 2^order pages (__GFP_COMP), its count frozen at 0 (an order-0
 *    slab keeps its count of 1, as 6.12's, so that memory offlining finds it unmovable:
 *    rust/mm.rs, SlabPages), its head typed PGTY_slab; the tail pages are left as the
 *    page allocator made them;
 *  - struct slab over the head page: slab_cache points at the cache's shadow (below),
 *    objects is the slab's object count, obj_exts 0 (no memcg vector: rslub charges
 *    nothing), mapping NULL; slab_list.next holds rslub's own metadata (a Slab,
 *    rust/slab.rs), which only rslub reads (rust/mm.rs), as only mm/slub.c reads
 *    slab_list, freelist and the rest of counters of the kernel's slabs.
 *
 * A shadow is a struct kmem_cache describing the rslub cache to those readers: name, size
 * (the stride: objects start at the slab's address, every size bytes, with no left red
 * zone), object_size, reciprocal_size, the usercopy window, SLAB_KMALLOC for a kmalloc
 * class, and, under generic KASAN, no KASAN metadata inside objects (alloc_meta_offset 0,
 * free_meta_offset KASAN_NO_FREE_META), as rslub's layout reserves none. It is not on the
 * kernel's list of caches, and its per-node part (per_node[], MAX_NUMNODES entries) is
 * not there at all: mm/slub.c's own paths must never see an rslub slab, which the hooks
 * on every entry point that takes an object ensure (rust/back/handler.c, direct.S).
 *
 * The shadows live in one arena, a slot per live rslub cache, so that "is this slab
 * rslub's?" is a range check of its slab_cache, without following it: the trampolines
 * (rust/back/direct.S) and the hooks (rslub_object_cache()) ask it of every object freed
 * in the kernel. Slots are taken and given back under rslub_shadow_lock (cache creation
 * and destruction); a slot is given back only after its cache's last slab is gone.
 *
 * At unload, slots still in use belong to caches left behind with live objects
 * (rust/registry.rs): their slabs stop being slab pages (rslub_view_exit()), so that the
 * kernel's kfree() of one of those objects later meets a plain page, as before the view,
 * not a shadow freed with the module. That brings back, for those objects only, what the
 * view is for (a page reference taken on them frees their page); the walk over every
 * page takes no memory hotplug lock (get_online_mems() is not exported). Both are the
 * aftermath of a cache left with live objects, which is reported when it happens.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/memory_hotplug.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/page-flags.h>
#include <linux/poison.h>
#include <linux/reciprocal_div.h>
#include <linux/slab.h>

#include "slab.h" /* mm/slab.h of the kernel tree: struct slab, struct kmem_cache */
#ifdef CONFIG_KASAN_GENERIC
#include "kasan/kasan.h" /* KASAN_NO_FREE_META */
#endif
#include "slab_page.h"

static_assert(offsetof(struct kmem_cache, per_node) <= RSLUB_SHADOW_OWNER,
	      "a shadow slot must hold struct kmem_cache up to per_node[] and its owner");
static_assert(offsetof(struct slab, slab_cache) == RSLUB_SLAB_CACHE);
static_assert(RSLUB_SHADOW_SIZE % sizeof(void *) == 0);
/* rslub's metadata pointer: slab_list.next, which is struct page's lru.prev (rust/mm.rs). */
static_assert(offsetof(struct slab, slab_list.next) == offsetof(struct page, lru.prev));
/* objects is bits 16-30 of counters: struct page's private, 0 again before the free. */
static_assert(offsetof(struct slab, counters) == offsetof(struct page, private));

char rslub_shadows[RSLUB_SHADOWS][RSLUB_SHADOW_SIZE] __aligned(SMP_CACHE_BYTES);
static DECLARE_BITMAP(rslub_shadow_used, RSLUB_SHADOWS);
static DEFINE_MUTEX(rslub_shadow_lock);

static struct kmem_cache *rslub_shadow_kc(unsigned int slot)
{
	return (struct kmem_cache *)rslub_shadows[slot];
}

static void **rslub_shadow_owner_word(struct kmem_cache *kc)
{
	return (void **)((char *)kc + RSLUB_SHADOW_OWNER);
}

/*
 * Takes a slot for an rslub cache and fills its shadow; NULL if every slot is taken.
 * @size is the stride, @offset the free pointer's offset, @inuse the object's end with
 * its free pointer; @typesafe, @reclaim: SLAB_TYPESAFE_BY_RCU, SLAB_RECLAIM_ACCOUNT.
 * @red_zone, @poison: the debug cache's red zone (or owner records) after each object
 * and poisoning, as SLAB_RED_ZONE and SLAB_POISON, and under KASAN its red zone as
 * SLAB_KASAN, so that ksize() through the kernel's function (mm/slub.c's slab_ksize())
 * is the object's size, as rslub's own is, not the stride; with no left red zone
 * (red_left_pad 0) they move no object's start. The usercopy window is the whole object
 * until rslub_shadow_set_usercopy(); the owner is set by rslub_shadow_own(), before the
 * cache makes its first slab.
 */
struct kmem_cache *rslub_shadow_get(const char *name, unsigned int size,
				    unsigned int object_size, unsigned int align,
				    unsigned int offset, unsigned int inuse, bool typesafe,
				    bool reclaim, bool hwcache_align, bool red_zone, bool poison)
{
	struct kmem_cache *kc;
	unsigned int slot;

	mutex_lock(&rslub_shadow_lock);
	slot = find_first_zero_bit(rslub_shadow_used, RSLUB_SHADOWS);
	if (slot < RSLUB_SHADOWS)
		__set_bit(slot, rslub_shadow_used);
	mutex_unlock(&rslub_shadow_lock);
	if (slot >= RSLUB_SHADOWS)
		return NULL;
	kc = rslub_shadow_kc(slot);
	memset(kc, 0, RSLUB_SHADOW_SIZE);
	/*
	 * mm/slub.c must never free into a shadow (the hooks see to it): if it ever did, its
	 * first step, this_cpu_ptr(s->cpu_sheaves), faults on a non-canonical address rather
	 * than write into the per-CPU area at offset 0 (NULL), and a node it looks up is
	 * NULL (the zeroed words after the struct), rather than a neighbour's memory.
	 */
	kc->cpu_sheaves = (void __percpu *)(POISON_POINTER_DELTA + 0x5ad0);
	kc->name = name;
	kc->size = size;
	kc->object_size = object_size;
	kc->reciprocal_size = reciprocal_value(size);
	kc->align = align;
	kc->offset = offset;
	kc->inuse = inuse;
	kc->refcount = 1;
	kc->flags = (typesafe ? SLAB_TYPESAFE_BY_RCU : 0) |
		    (reclaim ? SLAB_RECLAIM_ACCOUNT : 0) |
		    (hwcache_align ? SLAB_HWCACHE_ALIGN : 0) | (red_zone ? SLAB_RED_ZONE : 0) |
		    (poison ? SLAB_POISON : 0) | SLAB_NO_MERGE;
#ifdef CONFIG_KASAN_GENERIC
	kc->flags |= SLAB_KASAN;
#endif
	INIT_LIST_HEAD(&kc->list);
#ifdef CONFIG_KASAN_GENERIC
	kc->kasan_info.alloc_meta_offset = 0;
	kc->kasan_info.free_meta_offset = KASAN_NO_FREE_META;
#endif
#ifdef CONFIG_HARDENED_USERCOPY
	kc->useroffset = 0;
	kc->usersize = object_size;
#endif
	return kc;
}

/* Names @owner (a CacheCore) as the rslub cache @kc stands for. */
void rslub_shadow_own(struct kmem_cache *kc, void *owner)
{
	WRITE_ONCE(*rslub_shadow_owner_word(kc), owner);
}

/* The usercopy window of @kc's cache: @size bytes from @offset (SLUB's useroffset, usersize). */
void rslub_shadow_set_usercopy(struct kmem_cache *kc, unsigned int offset, unsigned int size)
{
#ifdef CONFIG_HARDENED_USERCOPY
	WRITE_ONCE(kc->useroffset, offset);
	WRITE_ONCE(kc->usersize, size);
#endif
}

/* @kc's cache is a kmalloc class (is_kmalloc_cache(): KASAN's kmalloc red zones). */
void rslub_shadow_set_kmalloc(struct kmem_cache *kc)
{
	WRITE_ONCE(kc->flags, kc->flags | SLAB_KMALLOC);
}

/* Gives @kc's slot back: its cache has no slab left. */
void rslub_shadow_put(struct kmem_cache *kc)
{
	unsigned int slot = ((char *)kc - (char *)rslub_shadows) / RSLUB_SHADOW_SIZE;

	WRITE_ONCE(*rslub_shadow_owner_word(kc), NULL);
	mutex_lock(&rslub_shadow_lock);
	__clear_bit(slot, rslub_shadow_used);
	mutex_unlock(&rslub_shadow_lock);
}

/*
 * Makes @head, the head of a slab's pages (not yet used), a slab page of the
 * cache @kc stands for, holding @objects objects, its metadata at @meta.
 */
void rslub_slab_page_set(struct page *head, struct kmem_cache *kc, void *meta,
			 unsigned int objects)
{
	struct slab *slab = (struct slab *)head;

	slab->slab_list.next = meta;
	slab->slab_list.prev = NULL; /* page->mapping */
	slab->freelist = NULL;
	slab->counters = 0;
	slab->objects = objects;
	slab->inuse = objects;
	WRITE_ONCE(slab->slab_cache, kc);
	/* A reader that sees the type (page_slab()) sees the cache. */
	smp_wmb();
	__SetPageSlab(head);
}

/*
 * Undoes rslub_slab_page_set(): @head is a plain page again, for the page allocator.
 * slab_cache stays (the page allocator overwrites it, as it does SLUB's), so that a
 * racing reader that saw the type still reads a cache; the metadata pointer does not,
 * so that rslub takes a stale pointer into pages a speculative reference still holds
 * for no object of that cache (rust/mm.rs, slab_if_of()).
 */
void rslub_slab_page_clear(struct page *head)
{
	struct slab *slab = (struct slab *)head;

	__ClearPageSlab(head);
	slab->slab_list.next = NULL;
	slab->slab_list.prev = NULL; /* page->mapping, which the page allocator checks */
	slab->freelist = NULL;
	slab->counters = 0; /* page->private */
}

void *rslub_object_cache(const void *x)
{
	struct slab *slab;

	if (unlikely(!virt_addr_valid(x)))
		return NULL;
	slab = page_slab(virt_to_page(x));
	if (!slab)
		return NULL;
	return rslub_shadow_owner(READ_ONCE(slab->slab_cache));
}

/*
 * At unload: the slabs of caches left behind (slots still in use) become plain pages
 * (every page of every online node is looked at, once, only then). Their objects and
 * metadata stay, as before.
 */
void rslub_view_exit(void)
{
	unsigned long left = 0;
	int nid;

	if (bitmap_empty(rslub_shadow_used, RSLUB_SHADOWS))
		return;
	for_each_online_node(nid) {
		unsigned long pfn = node_start_pfn(nid), end = node_end_pfn(nid);

		for (; pfn < end; pfn++) {
			struct page *page = pfn_to_online_page(pfn);

			if (!(pfn % 4096))
				cond_resched();
			if (!page || !PageSlab(page) ||
			    !rslub_shadow_owner(READ_ONCE(((struct slab *)page)->slab_cache)))
				continue;
			rslub_slab_page_clear(page);
			left++;
		}
	}
	pr_warn("%lu slabs of caches left behind are no slab pages any more\n", left);
}
