// SPDX-License-Identifier: GPL-2.0
/*
 * Backing kernel caches: the kmem_cache entry points of mm/slub.o are redirected to
 * rslub for the caches it backs, with ftrace and FTRACE_OPS_FL_IPMODIFY, as livepatch
 * does (Documentation/backing.rst). This file holds only what needs the kernel's C
 * macros: the ftrace handler, the replacement functions it jumps to, the table of backed
 * caches, and the fields of struct kmem_cache (mm/slab.h). rust/back/mod.rs drives it.
 *
 * The handler runs on every call of a hooked function in the whole kernel, so it decides
 * with a few loads:
 *  - allocations (kmem_cache_alloc{,_node,_lru}, _bulk): is the cache in the table (and,
 *    with CONFIG_MEMCG, the allocation not charged: __GFP_ACCOUNT goes to the kernel)?
 *    In whole-kernel mode (back=all), a cache that is not is sighted, once, for the
 *    worker that backs it (see "Whole-kernel mode" below);
 *  - frees (kmem_cache_free, kfree, kmem_cache_free_bulk, hence kfree_bulk; and
 *    kvfree_call_rcu, kfree_call_rcu_nolock: kfree_rcu() and its kin), ksize and
 *    krealloc: is an object on a slab page whose cache is one of rslub's shadows
 *    (rslub_foreign(), rust/slab_page.c)? Objects of the kernel's slabs are the kernel's,
 *    whatever the cache's backing, so objects allocated before backing and freed after it
 *    (or the reverse) go where they came from.
 *  - with CONFIG_MEMCG, kmem_cache_charge(), and with CONFIG_HARDENED_USERCOPY,
 *    __check_object_size(): is the address on an rslub slab?
 * The replacement functions call the kernel's own ones for the kernel's objects (and
 * for a cache unbacked meanwhile): the handler lets those through, as it lets every
 * kernel object and every unbacked cache through.
 */
#include <linux/delay.h>
#include <linux/ftrace.h>
#include <linux/hash.h>
#include <linux/irq_work.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/mm.h>
#include <linux/kernfs.h>
#include <linux/kobject.h>
#include <linux/rcupdate.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/hotdata.h>

#include "slab.h" /* mm/slab.h of the kernel tree: struct kmem_cache */
#include "../slab_page.h"
#include "direct.h"

/* Kernel caches backed at once: whole-kernel mode backs hundreds. */
#define RSLUB_MAX_BACKED 512
/* The index has twice as many entries, so that its probes stay short (direct.h). */
static_assert(RSLUB_INDEX_SIZE >= 2 * RSLUB_MAX_BACKED);

/* Exported by rust/api.rs, rust/back/mod.rs and rust/back/fast.rs. */
void *rslub_cache_alloc(void *s, gfp_t gfp);
void *rslub_cache_alloc_node(void *s, gfp_t gfp, int node);
int rslub_cache_alloc_bulk(void *s, gfp_t gfp, size_t nr, void **p);
void rslub_cache_free(void *s, void *obj);
void rslub_cache_free_bulk(void *s, size_t nr, void **p);
void rslub_free_owned(void *obj);
size_t rslub_backed_free_bulk(void *rc, size_t nr, void **p);
/* Called by the fast paths (rust/back/fast.rs), with preemption on. */
void rslub_dr_check_watching(void);
void *rslub_dr_alloc_miss(struct kmem_cache *s, gfp_t gfp);
void *rslub_dr_alloc_lru_miss(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp);
void *rslub_dr_alloc_node_miss(struct kmem_cache *s, gfp_t gfp, int node);
void rslub_free_owned_at_bulk(void **inside, size_t n);
size_t rslub_object_size(const void *obj);
void rslub_back_destroying(struct kmem_cache *kc, bool last);
void rslub_back_destroyed(struct kmem_cache *kc);
/* rust/shim.c */
void rslub_kasan_unpoison(const void *addr, size_t size);

int rslub_hook_init(void);
void rslub_hook_exit(void);
bool rslub_hook_direct(void);
/* The direct= parameter (rust/param.c). */
extern bool rslub_direct_param;
void rslub_hook_quiesce(void);
void rslub_rcu_barrier(void);
int rslub_hook_back(struct kmem_cache *const *kc, void *const *rc, int n);
void *rslub_hook_unback(struct kmem_cache *kc);
void rslub_hook_drained(struct kmem_cache *kc);
void rslub_kc_info(struct kmem_cache *kc, unsigned int *size, unsigned int *align,
		   void (**ctor)(void *), unsigned long *flags, const char **name);
const char *rslub_kc_refusal(struct kmem_cache *kc);
static const char *rslub_kc_refusal_common(struct kmem_cache *kc);
bool rslub_is_meta_cache(const struct kmem_cache *kc);
int rslub_kmalloc_caches(struct kmem_cache **kcs, int max);
int rslub_hook_kmalloc(struct kmem_cache *const *kc, void *const *rc, int n);
void rslub_unhook_kmalloc(void);
bool rslub_can_sight(void);
#ifdef RSLUB_INJECT
void rslub_kmalloc_only(bool on);
void rslub_kmalloc_fail_next(void);
bool rslub_kmalloc_hooked(void);
bool rslub_kmalloc_filtered(void);
bool rslub_kmalloc_failed_served(void);
void rslub_kmalloc_kv_vmalloc(bool on);
void *rslub_test_slot_of(struct kmem_cache *kc);
bool rslub_test_slot_first(struct kmem_cache *kc);
unsigned int rslub_test_bulk_count(struct kmem_cache *kc);
void rslub_test_kmalloc_64_free_bulk(size_t n, void **p);
void *rslub_test_kmalloc_64_cache_alloc(gfp_t gfp);
void *rslub_test_slot_hold(struct kmem_cache *kc);
void rslub_test_slot_put(void *b);
void *rslub_test_dr_alloc(struct kmem_cache *kc, gfp_t gfp, void *slot, unsigned int stall_us,
			  bool *checked);
#endif
bool rslub_kc_reclaim_account(struct kmem_cache *kc);
bool rslub_kc_typesafe_by_rcu(struct kmem_cache *kc, unsigned int *offset);
struct kmem_cache *rslub_kc_known(const char *name);
int rslub_kc_sysfs_id(const char *name, char *id, size_t len);
const char *rslub_kc_id(struct kmem_cache *kc);
bool rslub_kc_usercopy(struct kmem_cache *kc, unsigned int *offset, unsigned int *size);
bool rslub_kc_hold(struct kmem_cache *kc);
unsigned int rslub_kc_merge_size(struct kmem_cache *kc);
bool rslub_usercopy_bad(const void *ptr, unsigned long n, unsigned long *offset,
			const char **name);
void rslub_kc_release(struct kmem_cache *kc);
bool rslub_kc_destroyed(struct kmem_cache *kc);
int rslub_hook_watch(const char *name);
struct kmem_cache *rslub_hook_seen(int slot);
void rslub_hook_seen_destroyed(struct kmem_cache *kc);
bool rslub_hook_seen_gone(int slot);
void rslub_hook_unwatch(int slot);
void rslub_back_sighted(void);
int rslub_hook_all(bool on, const char *prefix);
struct kmem_cache *rslub_sight_take(void);
bool rslub_sight_forget(struct kmem_cache *kc);
void rslub_sight_flush(void);
bool rslub_sight_dropped(void);

/*
 * The backed caches: kc is published last (release), read first (acquire). A slot is
 * free when kc and rc are NULL. Slots change under rslub_backed_lock only. kc is the
 * first member: the allocation trampolines compare it (direct.S). 32 bytes, so that a
 * slot's index is its offset shifted.
 */
static struct rslub_backing {
	struct kmem_cache *kc;
	void *rc;
} __aligned(32) rslub_backed[RSLUB_MAX_BACKED];
static DEFINE_MUTEX(rslub_backed_lock);
/* direct.S compares kc; rust/back/fast.rs reads rc (its Slot). */
static_assert(offsetof(struct rslub_backing, kc) == 0);
static_assert(offsetof(struct rslub_backing, rc) == sizeof(void *));

/*
 * The replacements using each slot's rc, counted per CPU as SRCU counts its readers: a
 * replacement holds a slot with one per-CPU increment of its locks (rslub_slot_hold())
 * and lets go with one of its unlocks (rslub_put()), each on any CPU (it may be preempted
 * and moved in between, or between its increment and its check), so that only sums over
 * all CPUs mean anything. Against unbacking, as a Dekker pair: a holder counts a lock,
 * then (full barrier) reads kc; rslub_hook_unback() clears kc, then (full barrier, in
 * its grace period) sums the unlocks, then (full barrier) the locks. Either it sees
 * the lock of a holder and waits for its unlock, or the holder sees the slot cleared and
 * lets go without touching rc. The sums are no snapshot, but every unlock counted has
 * its lock counted too (the lock came first, and the locks are summed after), so equal
 * sums mean that no holder that saw kc set still holds.
 */
struct rslub_slot_count {
	unsigned int locks[RSLUB_MAX_BACKED];
	unsigned int unlocks[RSLUB_MAX_BACKED];
};
/*
 * Allocated with the hooks (rslub_hook_init()), freed with them, when no replacement can
 * be running: 4 KiB a CPU, too much for a module's static per-CPU area.
 */
static struct rslub_slot_count __percpu *rslub_slot_users;

/* @b's index in rslub_backed[]. */
static __always_inline unsigned int rslub_slot_id(const struct rslub_backing *b)
{
	return b - rslub_backed;
}

/*
 * The index the handler looks caches up in: an open-addressing hash table of the slots in
 * use, keyed by hash_ptr() of kc and probed linearly up to its first empty entry, which
 * it always has (it is at most half full). A lookup costs a multiplication and, for a
 * cache that is not backed, usually one load of an empty entry, however many are backed.
 * Backing adds an entry to the current index in place (release: a reader sees the slot
 * filled); unbacking clears the slot's kc, rebuilds the index without it in the spare
 * one and publishes that, so that no probe chain ever has a hole. After a grace period
 * no reader uses the old index, which is the spare for the next unbacking. Written under
 * rslub_backed_lock; read with preemption off, under rcu_read_lock(), or by the
 * allocation trampolines, which never sleep (RCU Tasks: rslub_hook_unback()).
 */
static struct rslub_backing *rslub_index_buf[2][RSLUB_INDEX_SIZE];
/* Not static: the direct-call trampoline of kmem_cache_alloc reads it (direct.S). */
struct rslub_backing **rslub_index = rslub_index_buf[0];

/*
 * The caches whose objects rslub may hold, for kmem_cache_free_bulk()'s quick test: a
 * count, by hash_ptr(kc, RSLUB_INDEX_BITS), of the caches backed or draining (from
 * rslub_hook_back() to rslub_hook_drained()) and of the kmalloc caches whose classes
 * serve (rslub_hook_kmalloc() to rslub_unhook_kmalloc()). A cache whose count is 0 has no
 * object of rslub's: its bulk free goes to the kernel at once, with no look at each
 * object's page (another cache of the same hash costs only that look). The test trusts
 * the cache it is given, as the kernel's build_detached_freelist() does.
 *
 * Written under rslub_backed_lock. A count goes up before the cache's slot or kmalloc
 * class is published (a release, or a store ordered after it on x86-64's TSO), so before
 * rslub can allocate any object of it, and down only once rslub holds none: a caller
 * freeing an object of rslub's got it after the count went up and before it can go down.
 * Not static: the trampoline reads it (direct.S).
 */
u32 rslub_bulk_caches[RSLUB_INDEX_SIZE];

/* @kc's count in rslub_bulk_caches[] (@kc may be gone: only its address is used). */
static __always_inline u32 *rslub_bulk_slot(const struct kmem_cache *kc)
{
	return &rslub_bulk_caches[hash_ptr(kc, RSLUB_INDEX_BITS)];
}

/* Whether kmem_cache_free_bulk(@s, ...) may be given an object of rslub's. */
static __always_inline bool rslub_bulk_may_hold(struct kmem_cache *s)
{
	/* kfree_bulk(): objects of any cache. */
	return !s || READ_ONCE(*rslub_bulk_slot(s));
}

/* Counts @kc in rslub_bulk_caches[] (@delta 1) or stops counting it (-1); under the lock. */
static void rslub_bulk_count(struct kmem_cache *kc, int delta)
{
	u32 *c = rslub_bulk_slot(kc);

	lockdep_assert_held(&rslub_backed_lock);
	WARN_ON_ONCE(delta < 0 && !*c);
	WRITE_ONCE(*c, *c + delta);
}

/*
 * Names waiting to be seen: a cache can only be found by name when it allocates (the
 * kernel's list of caches is not exported), so the allocation handler compares names
 * while any is watched: a cache's own name, or its name in /sys/kernel/slab (a merged
 * cache's, see rslub_kc_sysfs_id()). Written under rslub_backed_lock, read in the
 * handler (preemption off: rslub_hook_unwatch() waits for it with synchronize_rcu()).
 */
#define RSLUB_MAX_WATCHED 16
static const char *rslub_watched[RSLUB_MAX_WATCHED];
static struct kmem_cache *rslub_seen[RSLUB_MAX_WATCHED];
/* The cache seen was destroyed since (rslub_hook_seen_destroyed()). */
static bool rslub_seen_gone[RSLUB_MAX_WATCHED];
int rslub_nwatched; /* also read by direct.S */

/*
 * Whole-kernel mode (back=all): the allocation handler *sights* every cache that is not
 * backed, once, and a worker backs it or records why not (rust/back/mod.rs). The
 * kernel's list of caches is not exported; this finds each as it allocates, from the
 * handler's first sight, in any context: an entry claimed with a cmpxchg in an
 * open-addressing hash table keyed like the index, the cache's struct held (its kobject:
 * the worker reads it whenever it runs), and an irq_work that queues the worker.
 *
 * An entry is 0 (empty), a cache's address tagged RSLUB_SIGHT_MAKING while its sighting
 * is being made, tagged RSLUB_SIGHT_NEW once the worker may take it, untagged once taken,
 * or RSLUB_SIGHT_GONE for a cache destroyed since (no struct's address: entries are never
 * emptied, so no probe chain has a hole). Each NEW or taken entry holds its cache's
 * struct until rslub_sight_forget(), which the last destroy of a sighted cache calls
 * (while the mode is on the destroy handler diverts every destroy) under the backing
 * lock that the worker holds while it looks at a cache. The hold is no safety net for a
 * cache being freed (that free is not RCU-deferred): it is taken by an allocation from
 * the cache, which its owner keeps live meanwhile. A full table sights no more caches
 * (rslub_sight_dropped()). Without sysfs (SLAB_SUPPORTS_SYSFS) a cache's struct cannot
 * be held, and the mode is refused.
 */
#define RSLUB_SIGHT_BITS 11
#define RSLUB_SIGHT_SIZE (1 << RSLUB_SIGHT_BITS)
#define RSLUB_SIGHT_NEW 1UL
#define RSLUB_SIGHT_MAKING 2UL
#define RSLUB_SIGHT_TAGS (RSLUB_SIGHT_NEW | RSLUB_SIGHT_MAKING)
/* No address, as no cache is at 0: the entry of a cache destroyed since. */
#define RSLUB_SIGHT_GONE (0UL | RSLUB_SIGHT_MAKING)
static unsigned long rslub_sighted[RSLUB_SIGHT_SIZE];
/* Whether the handler sights caches; only those whose name starts with rslub_all_prefix. */
bool rslub_all; /* also read by direct.S (a byte) */
static const char *rslub_all_prefix;
/* The table was full: caches that allocated since were not sighted. */
static bool rslub_sight_full;

static void rslub_sight_kick(struct irq_work *w);
static struct irq_work rslub_sight_irq_work = IRQ_WORK_INIT(rslub_sight_kick);
static void rslub_sight_work_fn(struct work_struct *w);
static DECLARE_WORK(rslub_sight_work, rslub_sight_work_fn);

/* The struct's hold of a sighting: any context, as refcount_inc_not_zero() is. */
static __always_inline bool rslub_sight_hold(struct kmem_cache *kc)
{
#ifdef SLAB_SUPPORTS_SYSFS
	return refcount_inc_not_zero(&kc->kobj.kref.refcount);
#else
	return false;
#endif
}

/* The entry of @kc in the table of sightings, or NULL. */
static __always_inline unsigned long *rslub_sight_find(struct kmem_cache *kc)
{
	unsigned int i = hash_ptr(kc, RSLUB_SIGHT_BITS), n;

	for (n = 0; n < RSLUB_SIGHT_SIZE; n++, i = (i + 1) % RSLUB_SIGHT_SIZE) {
		unsigned long e = READ_ONCE(rslub_sighted[i]);

		if (!e)
			return NULL;
		if ((e & ~RSLUB_SIGHT_TAGS) == (unsigned long)kc)
			return &rslub_sighted[i];
	}
	return NULL;
}

/*
 * Sights @kc, allocating and not backed: out of line, as it runs once per cache. The one
 * part of the handler that calls traceable functions (irq_work_queue(), the name
 * compare), none of them hooked.
 */
static noinline void notrace rslub_sight(struct kmem_cache *kc)
{
	unsigned int i = hash_ptr(kc, RSLUB_SIGHT_BITS), n;
	const char *prefix = READ_ONCE(rslub_all_prefix);

	if (prefix && strncmp(kc->name, prefix, strlen(prefix)))
		return;
	for (n = 0; n < RSLUB_SIGHT_SIZE; n++, i = (i + 1) % RSLUB_SIGHT_SIZE) {
		unsigned long e = READ_ONCE(rslub_sighted[i]);

		if (!e)
			e = cmpxchg(&rslub_sighted[i], 0, (unsigned long)kc | RSLUB_SIGHT_MAKING);
		if (!e)
			break;
		if ((e & ~RSLUB_SIGHT_TAGS) == (unsigned long)kc)
			return;
	}
	if (n == RSLUB_SIGHT_SIZE) {
		/* Probing a full table on every allocation would cost too much: stop. */
		WRITE_ONCE(rslub_sight_full, true);
		return;
	}
	/* A cache allocating is live; only another alias's destroy can be under way. */
	if (!rslub_sight_hold(kc)) {
		WRITE_ONCE(rslub_sighted[i], RSLUB_SIGHT_GONE);
		return;
	}
	smp_store_release(&rslub_sighted[i], (unsigned long)kc | RSLUB_SIGHT_NEW);
	irq_work_queue(&rslub_sight_irq_work);
}

static void rslub_sight_kick(struct irq_work *w)
{
	queue_work(system_dfl_wq, &rslub_sight_work);
}

static void rslub_sight_work_fn(struct work_struct *w)
{
	rslub_back_sighted();
}

/* Whether @kc's sighting is made, holding its struct. */
static bool rslub_sight_held(struct kmem_cache *kc)
{
	unsigned long *e = rslub_sight_find(kc);

	/* Acquire: pairs with the release that made the sighting, after its hold. */
	return e && !(smp_load_acquire(e) & RSLUB_SIGHT_MAKING);
}

/* Whether the handler sights @kc now: whole-kernel mode, and not sighted yet. */
static __always_inline void rslub_sight_check(struct kmem_cache *kc)
{
	/* Acquire: the prefix is set before the mode is (on weakly ordered CPUs too). */
	if (unlikely(smp_load_acquire(&rslub_all)) && kc && !READ_ONCE(rslub_sight_full) &&
	    !rslub_sight_find(kc))
		rslub_sight(kc);
}

/*
 * Starts (@on) or stops sighting caches; @prefix, if not NULL, limits it to the caches
 * whose name starts with it (the suites' own, which must stay valid until it stops).
 * Stopping waits for the handlers and the worker; what was sighted stays until
 * rslub_sight_forget() or rslub_sight_flush().
 */
/* Whether caches can be sighted: their structs are held through their kobjects. */
bool rslub_can_sight(void)
{
	return IS_ENABLED(SLAB_SUPPORTS_SYSFS);
}

int rslub_hook_all(bool on, const char *prefix)
{
	if (on) {
		if (!rslub_can_sight())
			return -EOPNOTSUPP;
		WRITE_ONCE(rslub_all_prefix, prefix);
		smp_store_release(&rslub_all, true);
		return 0;
	}
	WRITE_ONCE(rslub_all, false);
	synchronize_rcu();
	irq_work_sync(&rslub_sight_irq_work);
	flush_work(&rslub_sight_work);
	WRITE_ONCE(rslub_all_prefix, NULL);
	return 0;
}

/*
 * A cache sighted and not taken yet, now taken (the worker looks at it, holding the
 * backing lock), or NULL. Its struct stays held until rslub_sight_forget().
 */
struct kmem_cache *rslub_sight_take(void)
{
	int i;

	for (i = 0; i < RSLUB_SIGHT_SIZE; i++) {
		unsigned long e = smp_load_acquire(&rslub_sighted[i]);

		if ((e & RSLUB_SIGHT_NEW) &&
		    cmpxchg(&rslub_sighted[i], e, e & ~RSLUB_SIGHT_NEW) == e)
			return (struct kmem_cache *)(e & ~RSLUB_SIGHT_NEW);
	}
	return NULL;
}

/*
 * Forgets @kc's sighting, being destroyed (called under the backing lock), and drops its
 * hold (which may free the struct: the caller does not use @kc after). Returns whether it
 * was sighted.
 */
bool rslub_sight_forget(struct kmem_cache *kc)
{
	unsigned long *e = rslub_sight_find(kc);

	/*
	 * Only a sighting made (its hold taken) is forgotten: one still being made is of an
	 * allocation from a cache being destroyed, a bug of its owner's.
	 */
	if (!e || (READ_ONCE(*e) & RSLUB_SIGHT_MAKING))
		return false;
	WRITE_ONCE(*e, RSLUB_SIGHT_GONE);
	rslub_kc_release(kc);
	return true;
}

static DEFINE_MUTEX(rslub_destroy_lock);

/*
 * Forgets every sighting, once sighting has stopped and its worker is done: under the
 * lock of destroys, so that no destroy of a sighted cache is between its check of the
 * sighting and its use of the struct.
 */
void rslub_sight_flush(void)
{
	int i;

	mutex_lock(&rslub_destroy_lock);
	for (i = 0; i < RSLUB_SIGHT_SIZE; i++) {
		unsigned long e = READ_ONCE(rslub_sighted[i]);

		WRITE_ONCE(rslub_sighted[i], 0);
		if (e && !(e & RSLUB_SIGHT_MAKING))
			rslub_kc_release((struct kmem_cache *)(e & ~RSLUB_SIGHT_TAGS));
	}
	WRITE_ONCE(rslub_sight_full, false);
	mutex_unlock(&rslub_destroy_lock);
}

/* Whether the table of sightings filled up: caches that allocated since were missed. */
bool rslub_sight_dropped(void)
{
	return READ_ONCE(rslub_sight_full);
}

/* rslub_kc_id(), inline: the handler calls no traceable function. */
static __always_inline const char *__rslub_kc_id(struct kmem_cache *kc)
{
#ifdef CONFIG_SYSFS
	return kc->kobj.name;
#else
	return NULL;
#endif
}

static __always_inline void rslub_watch_check(struct kmem_cache *kc)
{
	int i;

	for (i = 0; i < RSLUB_MAX_WATCHED; i++) {
		const char *name = READ_ONCE(rslub_watched[i]);

		if (name && !READ_ONCE(rslub_seen[i]) && kc &&
		    (!strcmp(kc->name, name) || !strcmp(__rslub_kc_id(kc) ?: "", name)))
			cmpxchg(&rslub_seen[i], NULL, kc);
	}
}

/*
 * Whether @kc was seen by a watch still open: its destroy goes through rslub_r_destroy(),
 * which marks the watch, so that it is not backed after its struct is freed.
 */
static __always_inline bool rslub_watch_saw(struct kmem_cache *kc)
{
	int i;

	if (likely(!READ_ONCE(rslub_nwatched)))
		return false;
	for (i = 0; i < RSLUB_MAX_WATCHED; i++) {
		if (READ_ONCE(rslub_watched[i]) && READ_ONCE(rslub_seen[i]) == kc)
			return true;
	}
	return false;
}

/* The slot backing @kc, or NULL. */
static __always_inline struct rslub_backing *rslub_lookup(struct kmem_cache *kc)
{
	/* Dependency-ordered against the release that published it, as rcu_dereference(). */
	struct rslub_backing **index = READ_ONCE(rslub_index);
	struct rslub_backing *b;
	unsigned int i;

	if (!kc)
		return NULL;
	for (i = hash_ptr(kc, RSLUB_INDEX_BITS);; i = (i + 1) % RSLUB_INDEX_SIZE) {
		b = READ_ONCE(index[i]);
		if (likely(!b))
			return NULL;
		if (smp_load_acquire(&b->kc) == kc)
			return b;
	}
}

/*
 * Holds slot @b (rslub_put()) if it backs @kc: then its rc stays @kc's rslub cache until
 * the put. False, with nothing held, if it does not (any more, or never did).
 */
static __always_inline bool rslub_slot_hold(struct rslub_backing *b, struct kmem_cache *kc)
{
	this_cpu_inc(rslub_slot_users->locks[rslub_slot_id(b)]);
	smp_mb(); /* the lock before the read of kc: see rslub_slot_users */
	/* A free slot's kc is NULL: a NULL cache (a caller's bug) never holds one. */
	if (likely(smp_load_acquire(&b->kc) == kc && kc))
		return true;
	this_cpu_inc(rslub_slot_users->unlocks[rslub_slot_id(b)]);
	return false;
}

static __always_inline void rslub_put(struct rslub_backing *b)
{
	/*
	 * No barrier before the unlock, which SRCU's unlock has: on x86-64 (TSO, the only
	 * architecture rslub builds for) the section's accesses are ordered before it, and
	 * the caller's use of rc is an opaque call the compiler cannot move past it.
	 */
	this_cpu_inc(rslub_slot_users->unlocks[rslub_slot_id(b)]);
}

/* The slot backing @kc, held (rslub_put()) so that its rslub cache stays; or NULL. */
static __always_inline struct rslub_backing *rslub_get(struct kmem_cache *kc)
{
	struct rslub_backing *b;

	rcu_read_lock();
	b = rslub_lookup(kc);
	if (b && !rslub_slot_hold(b, kc))
		b = NULL;
	rcu_read_unlock();
	return b;
}

/*
 * Whether a replacement may still hold slot @b (rslub_hook_unback(), after the barrier
 * that follows its clearing of kc): the unlocks summed first, then the locks.
 */
static bool rslub_slot_held(const struct rslub_backing *b)
{
	unsigned int id = rslub_slot_id(b);
	unsigned int locks = 0, unlocks = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		unlocks += READ_ONCE(per_cpu_ptr(rslub_slot_users, cpu)->unlocks[id]);
	smp_mb(); /* the unlocks before the locks: see rslub_slot_users */
	for_each_possible_cpu(cpu)
		locks += READ_ONCE(per_cpu_ptr(rslub_slot_users, cpu)->locks[id]);
	return locks != unlocks;
}

/*
 * The rslub cache owning @x if @x is on a slab page whose cache is one of rslub's shadows
 * (rust/slab_page.c), and in @outside (unless NULL) the bits of an address outside @x's
 * slab when @x is on one: a slab is a naturally aligned block of PAGE_SIZE << order
 * bytes, so an address that differs from @x only below them is in the same slab and has
 * the same owner. NULL for the kernel's slabs, large kmallocs and anything else.
 */
static __always_inline void *rslub_foreign_slab(const void *x, unsigned long *outside)
{
	struct slab *slab;

	if (unlikely(ZERO_OR_NULL_PTR(x)))
		return NULL;
	/* As kfree() itself does: a freed object is a direct-map address. */
	slab = page_slab(virt_to_page(x));
	if (!slab)
		return NULL;
	/* Folded away where @outside is NULL (rslub_foreign()): slab_size() loads. */
	if (outside)
		*outside = ~(slab_size(slab) - 1);
	return rslub_shadow_owner(READ_ONCE(slab->slab_cache));
}

/* rslub_foreign_slab() without the slab's bounds. */
static __always_inline void *rslub_foreign(const void *x)
{
	return rslub_foreign_slab(x, NULL);
}

/* rslub_foreign() for the kernel side of a user copy: any address. */
static __always_inline void *rslub_usercopy_foreign(const void *x)
{
	if (unlikely(!virt_addr_valid(x)))
		return NULL;
	return rslub_foreign(x);
}

/* rslub_foreign() for kvfree_rcu()'s pointers, which may also be vmalloc addresses. */
static __always_inline void *rslub_foreign_kv(const void *x)
{
	if (unlikely(!virt_addr_valid(x)))
		return NULL;
	return rslub_foreign(x);
}

/*
 * The replacements, reached with the hooked function's arguments in place. An allocation
 * takes the backing again: the cache may have been unbacked since the handler looked,
 * and then the kernel's own function serves (the handler lets an unbacked cache
 * through). rslub_get()/rslub_put() keep the rslub cache alive across the call. A free
 * was only redirected for an object rslub owns, which stays so while it is live.
 */
/*
 * The module's lifetime across a replacement: a replacement is reached only while the
 * hooks are registered, which hold a module reference (rslub_hook_init()); removing them
 * waits, in unregister_ftrace_function(), for every task that was between the handler and
 * its first voluntary sleep (RCU Tasks), so a replacement may take a reference of its own
 * before it sleeps. While it holds a slot (rslub_get()) the slot's cache is backed and
 * the hooks stay. Where it sleeps without a slot (the kernel's function for a cache
 * unbacked meanwhile, the kernel's kmem_cache_destroy()) it holds the module itself:
 * otherwise unbacking elsewhere could drop the last reference and rmmod free the text it
 * sleeps in. After its last put only its return is left, which module exit waits for
 * (rslub_hook_quiesce()). A failed load does not wait for references (the loader frees
 * the module whatever its count): rslub_holding counts them, for rslub_hook_quiesce().
 */
static atomic_t rslub_holding;

/*
 * Whether the direct calls are registered (with the hooks, under the backing's lock; read
 * anywhere by a replacement that gives a call back to the kernel).
 */
static bool rslub_direct_used;

static __always_inline void rslub_hold(void)
{
	__module_get(THIS_MODULE);
	atomic_inc(&rslub_holding);
}

static __always_inline void rslub_release(void)
{
	atomic_dec(&rslub_holding);
	module_put(THIS_MODULE);
}

#define RSLUB_HOLDING_MODULE(expr)	\
	({				\
		typeof(expr) __r;	\
		rslub_hold();		\
		__r = (expr);		\
		rslub_release();	\
		__r;			\
	})

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
 * kmalloc's contract under KASAN, as mm/slub.c keeps it: of an object of @size bytes
 * asked for, only those are accessible, the rest of the object is red zone, so that an
 * overrun into the class's slack is reported as with SLUB. kasan_kmalloc() does it with
 * the object's cache as the kernel sees it, the shadow of its slab page
 * (rust/slab_page.c), which asks KASAN to keep no metadata in the object. @p is an rslub
 * object (or NULL), all of whose object size is accessible.
 */
static __always_inline void *rslub_kasan_kmalloc(void *p, size_t size, gfp_t flags)
{
#ifdef CONFIG_KASAN_GENERIC
	if (p)
		p = kasan_kmalloc(virt_to_slab(p)->slab_cache, p, size, flags);
#endif
	return p;
}

/*
 * memcpy() of an rslub object's @n bytes, of which those past the size it was asked for
 * are KASAN's red zone (rslub_kasan_kmalloc()): as mm/slub.c (not instrumented) copies
 * them, without a report.
 */
static __always_inline void rslub_copy_object(void *to, const void *from, size_t n)
{
	kasan_disable_current();
	memcpy(to, from, n);
	kasan_enable_current();
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
 * Destroys of backed caches, one at a time: the reference count each reads is exact
 * (rslub_destroy_lock, defined above).
 */
/*
 * The task of rslub_r_destroy() calling the kernel's kmem_cache_destroy() of a cache it
 * left backed (another alias holds it), and that cache: that call goes through, where any
 * other of the cache waits for the lock.
 */
static struct task_struct *rslub_destroy_task;
static struct kmem_cache *rslub_destroy_kc;

static notrace void rslub_r_destroy(struct kmem_cache *s)
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
 * kfree_rcu() and its kin for rslub objects. The kernel cannot defer them: its fallback
 * paths (a kfree_rcu() when the per-CPU page cache is dry, every kfree_call_rcu_nolock()
 * that takes the deferred path, every kvfree_call_rcu() without
 * CONFIG_KVFREE_RCU_BATCHED) find the object from its rcu head with
 * kvmalloc_obj_start_addr(), and free it with the kernel's kvfree(), which would run
 * mm/slub.c's free on an rslub slab (its shadow cache has no sheaves and no nodes, see
 * rust/slab_page.c); and with rslub's slabs plain pages, as they were, the page's start
 * was another object. rslub keeps them itself: the head (one word with
 * CONFIG_KVFREE_RCU_BATCHED, which is all it may use) links the object on a per-CPU list;
 * a work item takes every list, waits for one grace period for all of them, and frees
 * them in bulk, each found from its head by the slab's own geometry, each run of one
 * cache's objects in one call of its bulk free (rslub_free_owned_at_bulk()), as the
 * kernel's batches go to kfree_bulk(). Queueing is an
 * llist push and an irq_work, safe in any context, NMI and raw spinlocks included, as
 * kfree_call_rcu_nolock() must be. rslub_rcu_barrier() waits for all of it.
 */
struct rslub_rcu_pcpu {
	struct llist_head objects;
	struct irq_work kick;
};

static void rslub_rcu_kick(struct irq_work *w);
static DEFINE_PER_CPU(struct rslub_rcu_pcpu, rslub_rcu_pcpu) = {
	.kick = IRQ_WORK_INIT(rslub_rcu_kick),
};

static void rslub_rcu_free(struct work_struct *w);
static DECLARE_WORK(rslub_rcu_free_work, rslub_rcu_free);
/*
 * Where the frees run: a workqueue that can make progress under memory pressure, as the
 * kernel's own kfree_rcu() work (rcu_reclaim_wq); it lives while the hooks are
 * registered, the only time anything is queued.
 */
static struct workqueue_struct *rslub_rcu_wq;
/* One barrier at a time: a second one could see the lists emptied by the first. */
static DEFINE_MUTEX(rslub_rcu_barrier_lock);

static void rslub_rcu_kick(struct irq_work *w)
{
	queue_work(rslub_rcu_wq, &rslub_rcu_free_work);
}

/* Objects freed at once, after the grace period: an array on the worker's stack. */
#define RSLUB_RCU_CHUNK 32

/* Frees, after a grace period, every object queued on any CPU so far. May sleep. */
static void rslub_rcu_free(struct work_struct *w)
{
	struct llist_node *batch = NULL, *n, *next;
	int cpu;

	for_each_possible_cpu(cpu) {
		n = llist_del_all(&per_cpu_ptr(&rslub_rcu_pcpu, cpu)->objects);
		for (; n; n = next) {
			next = n->next;
			n->next = batch;
			batch = n;
		}
	}
	if (!batch)
		return;
	/* Every reader of these objects began before they were queued, so before now. */
	synchronize_rcu();
	/* In bulk, as the kernel's batches go to kfree_bulk(): runs of one cache at once. */
	for (n = batch; n;) {
		void *chunk[RSLUB_RCU_CHUNK];
		size_t k = 0;

		for (; n && k < RSLUB_RCU_CHUNK; n = next) {
			next = n->next;
			chunk[k++] = n;
		}
		rslub_free_owned_at_bulk(chunk, k);
		cond_resched();
	}
}

static __always_inline void rslub_rcu_defer(struct kvfree_rcu_head *head)
{
	struct rslub_rcu_pcpu *p;

	guard(preempt_notrace)();
	p = this_cpu_ptr(&rslub_rcu_pcpu);
	if (llist_add((struct llist_node *)head, &p->objects))
		irq_work_queue(&p->kick);
}

notrace void rslub_r_kvfree_call_rcu(struct kvfree_rcu_head *head, void *ptr)
{
	if (!head) {
		/* kvfree_rcu_mightsleep(): its caller may sleep, as the kernel's does here. */
		might_sleep();
		synchronize_rcu();
		rslub_free_owned(ptr);
		return;
	}
	rslub_rcu_defer(head);
}

notrace void rslub_r_kfree_call_rcu_nolock(struct kvfree_rcu_head *head, void *ptr)
{
	rslub_rcu_defer(head);
}

/*
 * Frees every rslub object queued by kfree_rcu() and its kin before the call, once its
 * grace period has passed (the kernel's kvfree_rcu_barrier_on_cache(), for rslub's
 * objects). May sleep.
 */
void rslub_rcu_barrier(void)
{
	int cpu;

	mutex_lock(&rslub_rcu_barrier_lock);
	for_each_possible_cpu(cpu)
		irq_work_sync(&per_cpu_ptr(&rslub_rcu_pcpu, cpu)->kick);
	/* What the kicks queued, then what is left on the lists, then a run under way. */
	flush_work(&rslub_rcu_free_work);
	rslub_rcu_free(NULL);
	flush_work(&rslub_rcu_free_work);
	mutex_unlock(&rslub_rcu_barrier_lock);
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

#ifdef RSLUB_INJECT
/* Test-only: called instead of BUG() after a usercopy report, when set. */
void (*rslub_test_usercopy_caught)(void);
#endif

#ifdef CONFIG_HARDENED_USERCOPY
/*
 * Hardened usercopy. check_heap_object() (mm/usercopy.c) checks a copy to or from user
 * space against the object and usercopy window of a slab page's cache, and the bounds of
 * a compound page. It could not check rslub's slabs while they were plain pages; with
 * the slab page view it checks them against the shadow's window (rust/slab_page.c), and
 * does whenever these hooks are not registered. While they are, every
 * __check_object_size() (copy_to_user() and its kin with a size the compiler does not
 * know) of an address on an rslub slab comes here: the copy must stay inside the object
 * and the cache's usercopy window (a backed cache's is the kernel cache's useroffset and
 * usersize, so a cache made without a window allows no copy, as in SLUB), and is
 * reported as the kernel's usercopy_abort() does (which is not exported), with a BUG.
 * Such an address is neither stack nor kernel text: the rest of the kernel's checks
 * have nothing to say about it but a wrapped range.
 */
static void rslub_usercopy_abort(const char *name, const char *detail, bool to_user,
				 unsigned long offset, unsigned long len)
{
	pr_emerg("Kernel memory %s attempt detected %s %s%s%s%s (offset %lu, size %lu)!\n",
		 to_user ? "exposure" : "overwrite", to_user ? "from" : "to", name,
		 detail ? " '" : "", detail ?: "", detail ? "'" : "", offset, len);
#ifdef RSLUB_INJECT
	if (READ_ONCE(rslub_test_usercopy_caught)) {
		READ_ONCE(rslub_test_usercopy_caught)();
		return;
	}
#endif
	BUG();
}

notrace void rslub_r_check_object_size(const void *ptr, unsigned long n, bool to_user)
{
	unsigned long offset;
	const char *name;

	if (!n)
		return;
	if ((unsigned long)ptr + n < (unsigned long)ptr)
		return rslub_usercopy_abort("wrapped address", NULL, to_user, 0,
					    (unsigned long)ptr + n);
	if (rslub_usercopy_bad(ptr, n, &offset, &name))
		rslub_usercopy_abort("SLUB object", name, to_user, offset, n);
}

#define RSLUB_HOOKED_USERCOPY(X) X(__check_object_size)
#else
#define RSLUB_HOOKED_USERCOPY(X)
#endif /* CONFIG_HARDENED_USERCOPY */

#ifdef CONFIG_MEMCG
/*
 * kmem_cache_charge() of an rslub object: the kernel's function reads the object's struct
 * slab, which an rslub object has not (a NULL dereference once any memory cgroup is
 * online). Its one caller in 7.3 (__sk_charge(), net/core/sock.c, on accept) charges
 * sockets of SLAB_ACCOUNT caches, which rslub refuses to back, but any module may call
 * it. rslub objects are never charged; they are not charged now either, and the call
 * succeeds, as the kernel's does for an object it does not charge (KMALLOC_NORMAL).
 */
static notrace bool rslub_r_charge(void *objp, gfp_t gfpflags)
{
	return true;
}

#define RSLUB_HOOKED_MEMCG(X) X(kmem_cache_charge)
#else
#define RSLUB_HOOKED_MEMCG(X)
#endif /* CONFIG_MEMCG */

/* The hooked functions, most called first: the handler compares in this order. */
#define RSLUB_HOOKED(X)							\
	X(kfree)							\
	X(kmem_cache_free)						\
	X(kmem_cache_alloc_noprof)					\
	X(kmem_cache_alloc_lru_noprof)					\
	X(kmem_cache_alloc_node_noprof)					\
	X(kmem_cache_alloc_bulk_noprof)					\
	X(kmem_cache_free_bulk)						\
	X(kvfree_call_rcu)						\
	X(kfree_call_rcu_nolock)					\
	X(ksize)							\
	X(krealloc_node_align_noprof)					\
	X(kmem_cache_destroy)						\
	RSLUB_HOOKED_MEMCG(X)						\
	RSLUB_HOOKED_USERCOPY(X)

#define RSLUB_FN_ADDR(fn) (unsigned long)fn,
#define RSLUB_ONE(fn) +1
#define RSLUB_NR_HOOKED (0 RSLUB_HOOKED(RSLUB_ONE))

/* Where the handler finds the arguments: the hooked function's own registers. */
#define ARG(n) ftrace_regs_get_argument(fregs, n)
#define ARGP(n) ((void *)ARG(n))

/*
 * Whether an allocation with @gfp is charged to a memory cgroup, which only the kernel's
 * allocator can do (obj_cgroup charging is not exported): with CONFIG_MEMCG such an
 * allocation from a backed cache goes to the kernel. (SLAB_ACCOUNT caches, whose every
 * allocation is charged, are not backed at all: rslub_kc_refusal().)
 */
static __always_inline bool rslub_charged(gfp_t gfp)
{
	return IS_ENABLED(CONFIG_MEMCG) && (gfp & __GFP_ACCOUNT);
}

/* Whether an allocation from @kc goes to rslub; watches for names meanwhile. */
static __always_inline bool rslub_alloc_backed(struct kmem_cache *kc, gfp_t gfp)
{
	if (rslub_lookup(kc))
		return !rslub_charged(gfp);
	if (unlikely(READ_ONCE(rslub_nwatched)))
		rslub_watch_check(kc);
	rslub_sight_check(kc);
	return false;
}

/* Whether any of the @n objects at @p is rslub's. */
static __always_inline bool rslub_any_foreign(size_t n, void **p)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (rslub_foreign(p[i]))
			return true;
	}
	return false;
}

/*
 * Whether @ip, the ftrace call site a handler runs for, is @f's: its first instruction,
 * or the one after its ENDBR on an IBT kernel. (ftrace_get_symaddr() would say which,
 * but it needs is_endbr(), which is not exported.) Hooked functions lie further apart.
 */
#define RSLUB_AT(ip, f) ((ip) - (unsigned long)(f) <= ENDBR_INSN_SIZE)

/* @fn's address if @cond holds, else 0: where the handler sends the call. */
#define RSLUB_TO(cond, fn) ((cond) ? (unsigned long)(fn) : 0)

/*
 * The allocation entry points of a backed cache go to rslub's; a free, ksize() or
 * krealloc() of an rslub object to rslub's; everything else runs the kernel's function.
 * Runs with preemption off, so rslub_hook_unback()'s grace period waits for it.
 * @ip is the function's ftrace call site: its first instruction after any ENDBR.
 *
 * The handler calls no hooked function, so it never recurses into itself; ftrace's
 * recursion protection fails only when the hooked function was called by another
 * tracer's handler in this context (or where RCU is not watching). Then the allocation
 * entry points run the kernel's function (correct for any cache: the object is the
 * kernel's and goes back to it), but an rslub object still goes to rslub: the kernel's
 * kfree() or kmem_cache_free() cannot free it (it warns and leaks it), ksize() would
 * not know its size.
 */
static __always_inline unsigned long rslub_target(unsigned long ip, struct ftrace_regs *fregs,
						  bool alloc)
{
	if (RSLUB_AT(ip, kfree))
		return RSLUB_TO(rslub_foreign(ARGP(0)), rslub_r_kfree);
	if (RSLUB_AT(ip, kmem_cache_free))
		return RSLUB_TO(rslub_foreign(ARGP(1)), rslub_r_free);
#ifdef CONFIG_HARDENED_USERCOPY
	/* Every copy to or from user space of a size not known at build time. */
	if (RSLUB_AT(ip, __check_object_size))
		return RSLUB_TO(rslub_usercopy_foreign(ARGP(0)), rslub_r_check_object_size);
#endif
	if (RSLUB_AT(ip, kmem_cache_alloc_noprof))
		return RSLUB_TO(alloc && rslub_alloc_backed(ARGP(0), ARG(1)), rslub_r_alloc);
	if (RSLUB_AT(ip, kmem_cache_alloc_lru_noprof))
		return RSLUB_TO(alloc && rslub_alloc_backed(ARGP(0), ARG(2)), rslub_r_alloc_lru);
	if (RSLUB_AT(ip, kmem_cache_alloc_node_noprof))
		return RSLUB_TO(alloc && rslub_alloc_backed(ARGP(0), ARG(1)), rslub_r_alloc_node);
	if (RSLUB_AT(ip, kmem_cache_alloc_bulk_noprof))
		return RSLUB_TO(alloc && rslub_alloc_backed(ARGP(0), ARG(1)), rslub_r_alloc_bulk);
	if (RSLUB_AT(ip, kmem_cache_free_bulk))
		return RSLUB_TO(rslub_bulk_may_hold(ARGP(0)) && rslub_any_foreign(ARG(1), ARGP(2)),
				rslub_r_free_bulk);
	if (RSLUB_AT(ip, kvfree_call_rcu))
		return RSLUB_TO(rslub_foreign_kv(ARGP(1)), rslub_r_kvfree_call_rcu);
	if (RSLUB_AT(ip, kfree_call_rcu_nolock))
		return RSLUB_TO(rslub_foreign_kv(ARGP(1)), rslub_r_kfree_call_rcu_nolock);
	if (RSLUB_AT(ip, ksize))
		return RSLUB_TO(rslub_foreign(ARGP(0)), rslub_r_ksize);
	if (RSLUB_AT(ip, krealloc_node_align_noprof))
		return RSLUB_TO(rslub_foreign(ARGP(0)), rslub_r_krealloc);
#ifdef CONFIG_MEMCG
	if (RSLUB_AT(ip, kmem_cache_charge))
		return RSLUB_TO(rslub_foreign(ARGP(0)), rslub_r_charge);
#endif
	if (RSLUB_AT(ip, kmem_cache_destroy))
		/*
		 * Only a backed cache, one found by name and about to be, or one sighted
		 * (in whole-kernel mode, every cache: an alias not sighted yet may be),
		 * goes through rslub, but not rslub_r_destroy()'s own call of the
		 * kernel's function.
		 */
		return RSLUB_TO((rslub_lookup(ARGP(0)) || rslub_watch_saw(ARGP(0)) ||
				 (ARGP(0) && (READ_ONCE(rslub_all) || rslub_sight_find(ARGP(0))))) &&
				!(READ_ONCE(rslub_destroy_task) == current &&
				  READ_ONCE(rslub_destroy_kc) == ARGP(0)),
				rslub_r_destroy);
	return 0;
}

/*
 * The handler when ftrace's recursion protection could not be taken (see above): rslub's
 * objects still go to rslub, allocations to the kernel. Out of line: never on the path
 * of an ordinary call.
 */
static noinline void notrace rslub_hook_recursing(unsigned long ip, struct ftrace_regs *fregs)
{
	unsigned long to;

	/* The trylock disables preemption only when it succeeds. */
	preempt_disable_notrace();
	to = rslub_target(ip, fregs, false);
	if (to)
		ftrace_regs_set_instruction_pointer(fregs, to);
	preempt_enable_notrace();
}

static void notrace rslub_hook_fn(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	unsigned long to;
	int bit;

	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	/*
	 * Only when rslub's ops is alone on the call site does this handler run at all
	 * in recursion: with another ops there (a tracer), ftrace's list function takes the
	 * protection first and skips every handler, and the kernel's function runs.
	 */
	if (unlikely(bit < 0)) {
		rslub_hook_recursing(ip, fregs);
		return;
	}
	to = rslub_target(ip, fregs, true);
	if (to)
		ftrace_regs_set_instruction_pointer(fregs, to);
	ftrace_test_recursion_unlock(bit);
}

/*
 * One ftrace_ops for every hooked function: registering and unregistering it patches
 * all their call sites in one batch of text pokes (each batch stops every CPU on an
 * int3 for a moment), and no call site is ever shared with another of rslub's ops.
 */
#ifdef CONFIG_HAVE_DYNAMIC_FTRACE_WITH_ARGS
#define RSLUB_HOOK_FLAGS (FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_IPMODIFY)
#else
#define RSLUB_HOOK_FLAGS (FTRACE_OPS_FL_DYNAMIC | FTRACE_OPS_FL_IPMODIFY | FTRACE_OPS_FL_SAVE_REGS)
#endif
static struct ftrace_ops rslub_hook_ops = {
	.func = rslub_hook_fn,
	.flags = RSLUB_HOOK_FLAGS,
};

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
 */

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

/* The kmalloc_index() of @size, which is 1 to KMALLOC_MAX_CACHE_SIZE. */
static __always_inline unsigned int rslub_kmalloc_index_of(size_t size)
{
	return rslub_kmalloc_index[(size - 1) / 8];
}

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
static struct task_struct *rslub_kmalloc_task;
/* Test-only: rslub_kmalloc_fail_next() was called (under the backing lock). */
static bool rslub_kmalloc_fail;
/* Test-only: a class served the probe of rslub_kmalloc_fail_midway(). */
static bool rslub_kmalloc_served_probe;
/* Test-only: kvmalloc()'s fallback without the thunk, for the next start. */
static bool rslub_kv_force_vmalloc;

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

/* Where the kmalloc entry points keep their arguments (the parameter lists vary). */
#ifdef CONFIG_SLAB_BUCKETS
#define RSLUB_B 1
#define RSLUB_BUCKETS(n) ((kmem_buckets *)ARG(n))
#else
#define RSLUB_B 0
#define RSLUB_BUCKETS(n) ((kmem_buckets *)NULL)
#endif
#ifdef CONFIG_KMALLOC_PARTITION_CACHES
#define RSLUB_T 1
#define RSLUB_TOKEN(n) ((kmalloc_token_t){ .v = ARG(n) })
#else
#define RSLUB_T 0
#define RSLUB_TOKEN(n) ((kmalloc_token_t){})
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

/* Whether rslub serves a kmalloc of @size with @flags at all (not which class). */
static __always_inline bool rslub_kmalloc_size_ok(size_t size, gfp_t flags)
{
	/* Size 0 (ZERO_SIZE_PTR) and large requests (pages) stay the kernel's. */
	return likely(size - 1 < KMALLOC_MAX_CACHE_SIZE) && !rslub_charged(flags);
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

/* The handler's side of rslub_kmalloc_get(): whether it would return a class. */
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

/*
 * The kernel's function @fn for a call rslub does not serve after all: with direct calls,
 * past its call site (its thunk, direct.S: its trampoline would send the call back here);
 * with the handler, @fn itself, which the handler lets through. Holding the module
 * (RSLUB_HOLDING_MODULE): the kernel's function may sleep.
 */
#ifdef RSLUB_DIRECT_KMALLOC
static bool rslub_kmalloc_direct;
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

static notrace void *rslub_r_kmalloc_node_track_caller(DECL_KMALLOC_PARAMS(size, b, token),
						       gfp_t flags, int node,
						       unsigned long caller)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, b, token), flags, node, caller, NULL,
				  _RET_IP_);
}

static notrace void *rslub_r_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
					  int node)
{
	return rslub_kmalloc_node(PASS_KMALLOC_PARAMS(size, b, token), flags, node, _RET_IP_, NULL,
				  _RET_IP_);
}

static notrace void *rslub_r_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags)
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

static notrace void *rslub_r_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node,
						size_t size)
{
	return rslub_kmalloc_cache(s, flags, node, size, NULL, _RET_IP_);
}

static notrace void *rslub_r_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size)
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

static notrace void *rslub_r_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align,
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

static notrace void *rslub_r_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token),
				       unsigned long align, gfp_t flags, int nid)
{
	return rslub_kvrealloc(p, PASS_TOKEN_PARAMS(size, token), align, flags, nid, NULL,
			       _RET_IP_);
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

/* rslub_target() for the kmalloc entry points (@alloc: see there). */
static __always_inline unsigned long rslub_kmalloc_target(unsigned long ip,
							  unsigned long parent_ip,
							  struct ftrace_regs *fregs, bool alloc)
{
	if (RSLUB_AT(ip, kvrealloc_node_align_noprof)) {
		const void *p = ARGP(0);

		/* An rslub object goes to rslub whatever else holds (see rslub_target()). */
		if (p)
			return RSLUB_TO(rslub_foreign_kv(p), rslub_r_kvrealloc);
	}
	if (rslub_kmalloc_limited(parent_ip))
		return 0;
	if (!alloc)
		return 0;
	if (RSLUB_AT(ip, __kmalloc_cache_noprof))
		return RSLUB_TO(rslub_kmalloc_class_of(ARGP(0), ARG(1)), rslub_r_kmalloc_cache);
	if (RSLUB_AT(ip, __kmalloc_noprof))
		return RSLUB_TO(rslub_kmalloc_served(ARG(0), NULL, ARG(1 + RSLUB_T), RSLUB_TOKEN(1)),
				rslub_r_kmalloc);
	if (RSLUB_AT(ip, __kmalloc_node_track_caller_noprof))
		return RSLUB_TO(rslub_kmalloc_served(ARG(0), RSLUB_BUCKETS(1),
						     ARG(1 + RSLUB_B + RSLUB_T),
						     RSLUB_TOKEN(1 + RSLUB_B)),
				rslub_r_kmalloc_node_track_caller);
	if (RSLUB_AT(ip, __kmalloc_node_noprof))
		return RSLUB_TO(rslub_kmalloc_served(ARG(0), RSLUB_BUCKETS(1),
						     ARG(1 + RSLUB_B + RSLUB_T),
						     RSLUB_TOKEN(1 + RSLUB_B)),
				rslub_r_kmalloc_node);
	if (RSLUB_AT(ip, __kmalloc_cache_node_noprof))
		return RSLUB_TO(rslub_kmalloc_class_of(ARGP(0), ARG(1)), rslub_r_kmalloc_cache_node);
	if (RSLUB_AT(ip, __kvmalloc_node_noprof))
		return RSLUB_TO(ARG(1 + RSLUB_B + RSLUB_T) <= PAGE_SIZE &&
				rslub_kmalloc_served(ARG(0), RSLUB_BUCKETS(1),
						     ARG(2 + RSLUB_B + RSLUB_T),
						     RSLUB_TOKEN(1 + RSLUB_B)),
				rslub_r_kvmalloc);
	if (RSLUB_AT(ip, kvrealloc_node_align_noprof))
		/* Of NULL (an rslub object went above): a kvmalloc(). */
		return RSLUB_TO(ARG(2 + RSLUB_T) <= PAGE_SIZE &&
				rslub_kmalloc_served(ARG(1), NULL, ARG(3 + RSLUB_T), RSLUB_TOKEN(2)),
				rslub_r_kvrealloc);
	return 0;
}

static void notrace rslub_kmalloc_fn(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	unsigned long to;
	int bit;

	bit = ftrace_test_recursion_trylock(ip, parent_ip);
	if (unlikely(bit < 0)) {
		/* As rslub_hook_recursing(): the kernel allocates, an rslub object is rslub's. */
		preempt_disable_notrace();
		to = rslub_kmalloc_target(ip, parent_ip, fregs, false);
		if (to)
			ftrace_regs_set_instruction_pointer(fregs, to);
		preempt_enable_notrace();
		return;
	}
	to = rslub_kmalloc_target(ip, parent_ip, fregs, true);
	if (to)
		ftrace_regs_set_instruction_pointer(fregs, to);
	ftrace_test_recursion_unlock(bit);
}

static struct ftrace_ops rslub_kmalloc_ops = {
	.func = rslub_kmalloc_fn,
	.flags = RSLUB_HOOK_FLAGS,
};

/*
 * Sets @ops's filter to the @n functions at @fns and registers it: 0, or -errno with a
 * message naming @what (the caller frees the filter).
 */
static int rslub_ops_register(struct ftrace_ops *ops, const unsigned long *fns, int n,
			      const char *what)
{
	int h, ret;

	for (h = 0; h < n; h++) {
		/* ftrace finds the call site from the function's address; no reset. */
		ret = ftrace_set_filter_ip(ops, fns[h], 0, 0);
		if (ret) {
			pr_err("rslub: %ps has no ftrace call site (%d): cannot hook %s\n",
			       (void *)fns[h], ret, what);
			return ret;
		}
	}
	ret = register_ftrace_function(ops);
	if (ret)
		pr_err("rslub: cannot hook %s (%d): is another module redirecting one?\n", what,
		       ret);
	return ret;
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

/* Direct calls for the kmalloc family (below). */
static bool rslub_kmalloc_direct_wanted(void);
static int rslub_kmalloc_direct_register(void);
static bool rslub_kmalloc_direct_unregister(void);
static bool rslub_kmalloc_direct_on(void);
#ifdef RSLUB_DIRECT
static bool rslub_direct_site_ok(const void *fn);
#endif

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

/*
 * Direct calls (direct.S, Documentation/backing.rst): kfree, kmem_cache_free,
 * kmem_cache_alloc_noprof and kmem_cache_alloc_node_noprof (every skb's), the functions
 * called most, jump from their call sites straight
 * to a trampoline of their own, which costs a few instructions where the handler above
 * costs a hundred (ftrace's regs trampoline). One ftrace_ops each, as an ops has one
 * trampoline; the other functions stay on rslub_hook_ops. The direct ops have no
 * ops_func: a function whose IP another ops modifies (livepatch) or that has a direct
 * call already (a BPF fentry/fexit trampoline, the other rslub module of the suites)
 * is refused, and with it the hooks (-EBUSY); while rslub holds them, BPF fentry/fexit
 * and livepatch cannot attach to these four functions.
 */
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

struct rslub_direct_site {
	void *fn;
	void *tramp;
};

/* The functions hooked by direct calls with the others (rslub_hook_init()). */
static const struct rslub_direct_site rslub_direct_sites[] = {
	{ kfree, rslub_direct_kfree },
	{ kmem_cache_free, rslub_direct_free },
	{ kmem_cache_alloc_noprof, rslub_direct_alloc },
	{ kmem_cache_alloc_node_noprof, rslub_direct_alloc_node },
	{ kmem_cache_alloc_lru_noprof, rslub_direct_alloc_lru },
	{ kmem_cache_alloc_bulk_noprof, rslub_direct_alloc_bulk },
	{ kmem_cache_free_bulk, rslub_direct_free_bulk },
	{ ksize, rslub_direct_ksize },
	{ krealloc_node_align_noprof, rslub_direct_krealloc },
	/* Not hooked by the handler: kvfree() calls kfree(), which is. */
	{ kvfree, rslub_direct_kvfree },
	{ kvfree_call_rcu, rslub_direct_kvfree_rcu },
	{ kfree_call_rcu_nolock, rslub_direct_kfree_rcu_nolock },
#ifdef CONFIG_HARDENED_USERCOPY
	{ __check_object_size, rslub_direct_usercopy },
#endif
};
#define RSLUB_NR_DIRECT ARRAY_SIZE(rslub_direct_sites)

/* The kmalloc family's, hooked in whole-kernel mode only (rslub_hook_kmalloc()). */
static const struct rslub_direct_site rslub_direct_kmalloc_sites[] = {
#ifdef RSLUB_DIRECT_KMALLOC
	{ __kmalloc_cache_noprof, rslub_direct_kmalloc_cache },
	{ __kmalloc_noprof, rslub_direct_kmalloc },
	{ __kmalloc_node_track_caller_noprof, rslub_direct_kmalloc_track_caller },
	{ __kmalloc_node_noprof, rslub_direct_kmalloc_node },
	{ __kmalloc_cache_node_noprof, rslub_direct_kmalloc_cache_node },
	{ __kvmalloc_node_noprof, rslub_direct_kvmalloc },
	{ kvrealloc_node_align_noprof, rslub_direct_kvrealloc },
#endif
};
#define RSLUB_NR_DIRECT_KMALLOC ARRAY_SIZE(rslub_direct_kmalloc_sites)
static_assert(RSLUB_NR_DIRECT_KMALLOC == 0 || RSLUB_NR_DIRECT_KMALLOC == RSLUB_NR_KMALLOC_HOOKED);

/*
 * One ftrace_ops each, as an ops has one trampoline (what would take several,
 * update_ftrace_direct_add(), is not exported). ftrace marks a module's ops
 * FTRACE_OPS_FL_DYNAMIC anyway: removing one then waits for RCU Tasks (and its rude
 * flavour), hence for every task between a call site and the end of a trampoline or of
 * rslub_d_*(), which never sleep, before the text may go.
 */
static struct ftrace_ops rslub_direct_ops[RSLUB_NR_DIRECT] = {
	[0 ... RSLUB_NR_DIRECT - 1] = { .flags = FTRACE_OPS_FL_DYNAMIC },
};
#ifdef RSLUB_DIRECT_KMALLOC
static struct ftrace_ops rslub_direct_kmalloc_ops[RSLUB_NR_DIRECT_KMALLOC] = {
	[0 ... RSLUB_NR_DIRECT_KMALLOC - 1] = { .flags = FTRACE_OPS_FL_DYNAMIC },
};
#else
static struct ftrace_ops rslub_direct_kmalloc_ops[1];
#endif

static unsigned long rslub_direct_addr(const struct rslub_direct_site *d)
{
	return ftrace_jmp_set((unsigned long)d->tramp);
}

/* What @fn's ftrace call site, at RSLUB_SITE as direct.S assumes, is. */
enum rslub_site_kind { RSLUB_SITE_OTHER, RSLUB_SITE_NOP, RSLUB_SITE_CALL, RSLUB_SITE_JMP };

/* The kind of @fn's call site, and in *@to where its call or jmp goes. */
static enum rslub_site_kind rslub_site(const void *fn, unsigned long *to)
{
	static const u8 nop5[] = { BYTES_NOP5 };
	unsigned long at = (unsigned long)fn + RSLUB_SITE;
	u8 site[MCOUNT_INSN_SIZE];
	s32 rel;

	if (copy_from_kernel_nofault(site, (void *)at, sizeof(site)))
		return RSLUB_SITE_OTHER;
	if (!memcmp(site, nop5, sizeof(site)))
		return RSLUB_SITE_NOP;
	if (site[0] != 0xe8 && site[0] != 0xe9)
		return RSLUB_SITE_OTHER;
	memcpy(&rel, site + 1, sizeof(rel));
	*to = at + MCOUNT_INSN_SIZE + rel;
	return site[0] == 0xe8 ? RSLUB_SITE_CALL : RSLUB_SITE_JMP;
}

/*
 * Whether @fn's call site is where direct.S assumes it (a NOP, or ftrace's call or jmp
 * for another ops): a kernel built otherwise (another padding or ENDBR) keeps the
 * handler. (The filter is then set at that very address, which ftrace takes only where
 * it is the site, or the function's start.)
 */
static bool rslub_direct_site_ok(const void *fn)
{
	unsigned long to;

	return rslub_site(fn, &to) != RSLUB_SITE_OTHER;
}

/*
 * Whether @d's call site, once registered, enters its trampoline: a jmp to it, or where a
 * tracer shares the site a call of ftrace's caller (which RETs into it).
 */
static bool rslub_direct_site_patched(const struct rslub_direct_site *d)
{
	unsigned long to = 0;
	enum rslub_site_kind k = rslub_site(d->fn, &to);

	return k == RSLUB_SITE_CALL || (k == RSLUB_SITE_JMP && to == (unsigned long)d->tramp);
}

/* The size of the direct map's region, which RSLUB_PAGE_OF compares an address with. */
unsigned long rslub_direct_map_bytes;

/* Whether the hooks about to be registered use direct calls (the direct= parameter). */
static bool rslub_direct_wanted(void)
{
	int i;

	if (!READ_ONCE(rslub_direct_param))
		return false;
	/*
	 * RSLUB_OWN_SLAB sends a page whose word at offset 8 lies below vmemmap_base to the
	 * kernel at once: rslub's shadows (module data) lie above, as x86-64's layout has it.
	 */
	if ((unsigned long)rslub_shadows < vmemmap_base) {
		pr_warn_once("rslub: the shadow caches lie below vmemmap: hooked without direct calls\n");
		return false;
	}
	for (i = 0; i < RSLUB_NR_DIRECT + RSLUB_NR_DIRECT_KMALLOC; i++) {
		const void *fn = i < RSLUB_NR_DIRECT ?
					 rslub_direct_sites[i].fn :
					 rslub_direct_kmalloc_sites[i - RSLUB_NR_DIRECT].fn;

		if (!rslub_direct_site_ok(fn)) {
			pr_warn_once("rslub: %ps's ftrace call site is not at +%d: hooked without direct calls\n",
				     fn, RSLUB_SITE);
			return false;
		}
	}
	return true;
}

/* Whether @fn is hooked by a direct call rather than by rslub_hook_ops. */
static bool rslub_is_direct(unsigned long fn)
{
	int i;

	for (i = 0; i < RSLUB_NR_DIRECT; i++) {
		if (fn == (unsigned long)rslub_direct_sites[i].fn)
			return true;
	}
	return false;
}

/* Unregisters the first @n of the direct calls @sites, @ops. */
static void rslub_direct_unregister(const struct rslub_direct_site *sites, struct ftrace_ops *ops,
				    int n)
{
	while (n--)
		unregister_ftrace_direct(&ops[n], rslub_direct_addr(&sites[n]), true);
}

/*
 * Registers the @n direct calls @sites with @ops: 0, or -errno with a message (none is
 * left registered).
 */
static int rslub_direct_register(const struct rslub_direct_site *sites, struct ftrace_ops *ops,
				 int n)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		const struct rslub_direct_site *d = &sites[i];

		ret = ftrace_set_filter_ip(&ops[i], (unsigned long)d->fn + RSLUB_SITE, 0, 0);
		if (!ret)
			ret = register_ftrace_direct(&ops[i], rslub_direct_addr(d));
		/*
		 * The site now jumps to the trampoline, or calls ftrace's caller where a
		 * tracer shares it; anything else and direct.S would not be entered as @fn.
		 */
		if (!ret && !rslub_direct_site_patched(d)) {
			pr_err("rslub: %ps's call site is not a jmp to its trampoline after registration\n",
			       d->fn);
			unregister_ftrace_direct(&ops[i], rslub_direct_addr(d), false);
			ret = -EINVAL;
		}
		if (ret) {
			pr_err("rslub: cannot hook %ps by a direct call (%d): has it one already (BPF fentry/fexit, the other rslub module) or is it live-patched?\n",
			       d->fn, ret);
			ftrace_free_filter(&ops[i]);
			rslub_direct_unregister(sites, ops, i);
			return ret;
		}
	}
	return 0;
}
#else
#define RSLUB_NR_DIRECT 0
#define RSLUB_NR_DIRECT_KMALLOC 0
struct rslub_direct_site;
static struct ftrace_ops rslub_direct_ops[1], rslub_direct_kmalloc_ops[1];
static const struct rslub_direct_site *rslub_direct_sites, *rslub_direct_kmalloc_sites;

static bool rslub_direct_wanted(void)
{
	return false;
}

static bool rslub_is_direct(unsigned long fn)
{
	return false;
}

static int rslub_direct_register(const struct rslub_direct_site *sites, struct ftrace_ops *ops,
				 int n)
{
	return -EOPNOTSUPP;
}

static void rslub_direct_unregister(const struct rslub_direct_site *sites, struct ftrace_ops *ops,
				    int n)
{
}
#endif

/*
 * The kmalloc family by direct calls, where the other hooks use them and the kernel's
 * kmalloc_caches[] has the one ordinary row direct.S reads (RSLUB_DIRECT_KMALLOC).
 */
static bool rslub_kmalloc_direct_wanted(void)
{
	return RSLUB_NR_DIRECT_KMALLOC && READ_ONCE(rslub_direct_used);
}

/* Registers them: 0, or -errno with a message (none is left registered). */
static int rslub_kmalloc_direct_register(void)
{
#ifdef RSLUB_DIRECT_KMALLOC
	int ret;

	/* Only the trampolines, registered below, ever give a call back to the kernel. */
	WRITE_ONCE(rslub_kmalloc_direct, true);
	ret = rslub_direct_register(rslub_direct_kmalloc_sites, rslub_direct_kmalloc_ops,
				    RSLUB_NR_DIRECT_KMALLOC);
	if (ret)
		WRITE_ONCE(rslub_kmalloc_direct, false);
	return ret;
#else
	return -EOPNOTSUPP;
#endif
}

/* Unregisters them if they are registered: whether they were. */
static bool rslub_kmalloc_direct_unregister(void)
{
#ifdef RSLUB_DIRECT_KMALLOC
	if (!rslub_kmalloc_direct)
		return false;
	rslub_direct_unregister(rslub_direct_kmalloc_sites, rslub_direct_kmalloc_ops,
				RSLUB_NR_DIRECT_KMALLOC);
	WRITE_ONCE(rslub_kmalloc_direct, false);
	return true;
#else
	return false;
#endif
}

/* Whether they are registered (the suites ask). */
static __maybe_unused bool rslub_kmalloc_direct_on(void)
{
#ifdef RSLUB_DIRECT_KMALLOC
	return READ_ONCE(rslub_kmalloc_direct);
#else
	return false;
#endif
}

/*
 * Registers the hooks on the kernel's functions, and holds the module (rmmod is refused)
 * until rslub_hook_exit(). 0 or -errno.
 */
int rslub_hook_init(void)
{
	static const unsigned long all[] = { RSLUB_HOOKED(RSLUB_FN_ADDR) };
	unsigned long fns[RSLUB_NR_HOOKED];
	bool direct;
	int i, n = 0, ret;

#ifdef RSLUB_DIRECT
	/*
	 * Whether or not the direct calls are registered: the suites call the trampolines
	 * themselves, which must tell rslub's objects then too.
	 */
	WRITE_ONCE(rslub_direct_map_bytes, vmalloc_base - page_offset_base);
#endif
	direct = rslub_direct_wanted();

	for (i = 0; i < RSLUB_NR_HOOKED; i++) {
		if (!direct || !rslub_is_direct(all[i]))
			fns[n++] = all[i];
	}
	rslub_slot_users = alloc_percpu(struct rslub_slot_count);
	if (!rslub_slot_users)
		return -ENOMEM;
	rslub_rcu_wq = alloc_workqueue("rslub_rcu", WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!rslub_rcu_wq) {
		free_percpu(rslub_slot_users);
		rslub_slot_users = NULL;
		return -ENOMEM;
	}
	ret = rslub_ops_register(&rslub_hook_ops, fns, n, "the kmem_cache functions");
	if (ret)
		goto out;
	if (direct) {
		/*
		 * Before the first trampoline runs: a replacement gives the kernel's calls
		 * back past the call site while it is set (rslub_r_free_bulk()), and would
		 * enter the trampoline again, and again, without.
		 */
		WRITE_ONCE(rslub_direct_used, true);
		ret = rslub_direct_register(rslub_direct_sites, rslub_direct_ops, RSLUB_NR_DIRECT);
		if (ret) {
			WRITE_ONCE(rslub_direct_used, false);
			unregister_ftrace_function(&rslub_hook_ops);
			goto out;
		}
	}
	/* rmmod must wait until nothing is backed and no backed object is alive. */
	__module_get(THIS_MODULE);
	return 0;
out:
	ftrace_free_filter(&rslub_hook_ops);
	destroy_workqueue(rslub_rcu_wq);
	rslub_rcu_wq = NULL;
	free_percpu(rslub_slot_users);
	rslub_slot_users = NULL;
	return ret;
}

/* Whether the hooks registered use direct calls (read under the backing's lock). */
bool rslub_hook_direct(void)
{
	return rslub_direct_used;
}

/* Whether the hooks were ever registered since the module was loaded. */
static bool rslub_hooks_used;

/* Removes the hooks; no backed cache and no object of one may be left. */
void rslub_hook_exit(void)
{
	if (rslub_direct_used)
		rslub_direct_unregister(rslub_direct_sites, rslub_direct_ops, RSLUB_NR_DIRECT);
	WRITE_ONCE(rslub_direct_used, false);
	unregister_ftrace_function(&rslub_hook_ops);
	ftrace_free_filter(&rslub_hook_ops);
	/* Nothing can be queued any more; what was is freed, and its work has returned. */
	rslub_rcu_barrier();
	destroy_workqueue(rslub_rcu_wq);
	rslub_rcu_wq = NULL;
	/* No replacement runs any more (unregistering waited for them), and none holds. */
	free_percpu(rslub_slot_users);
	rslub_slot_users = NULL;
	WRITE_ONCE(rslub_hooks_used, true);
	module_put(THIS_MODULE);
}

/*
 * At module exit, and when a load fails: waits until no replacement holds the module,
 * and no task is left in a replacement's last instructions after its module_put() (a
 * task preempted there has not slept voluntarily since: RCU Tasks waits for it).
 */
void rslub_hook_quiesce(void)
{
	/*
	 * After a failed load the loader frees the module whatever its count: a replacement
	 * still sleeping with its own reference (the kernel's function for a cache unbacked
	 * meanwhile, a destroy of a cache found by name) must return first. After rmmod the
	 * count is 0 already.
	 */
	while (atomic_read(&rslub_holding))
		msleep(1);
	if (READ_ONCE(rslub_hooks_used))
		synchronize_rcu_tasks();
}

static bool rslub_slot_free(const struct rslub_backing *b)
{
	return !b->kc && !b->rc;
}

/* Adds slot @b, whose kc is set, to @index at the end of its probe chain. */
static void rslub_index_add(struct rslub_backing **index, struct rslub_backing *b)
{
	unsigned int i = hash_ptr(b->kc, RSLUB_INDEX_BITS);

	while (index[i])
		i = (i + 1) % RSLUB_INDEX_SIZE;
	smp_store_release(&index[i], b);
}

/*
 * Backs each @kc[i] with rslub cache @rc[i], all @n of them or none: 0, -EEXIST (one is
 * backed already, or named twice) or -ENOSPC (not enough free slots).
 */
int rslub_hook_back(struct kmem_cache *const *kc, void *const *rc, int n)
{
	int i, j, free = 0, ret = 0;

	mutex_lock(&rslub_backed_lock);
	for (j = 0; j < n; j++) {
		for (i = 0; i < j; i++) {
			if (kc[i] == kc[j]) {
				ret = -EEXIST;
				goto out;
			}
		}
		if (rslub_lookup(kc[j])) {
			ret = -EEXIST;
			goto out;
		}
	}
	for (i = 0; i < RSLUB_MAX_BACKED; i++)
		free += rslub_slot_free(&rslub_backed[i]);
	if (free < n) {
		ret = -ENOSPC;
		goto out;
	}
	for (i = 0, j = 0; j < n; i++) {
		if (!rslub_slot_free(&rslub_backed[i]))
			continue;
		WRITE_ONCE(rslub_backed[i].rc, rc[j]);
		rslub_bulk_count(kc[j], 1);
		smp_store_release(&rslub_backed[i].kc, kc[j]);
		rslub_index_add(rslub_index, &rslub_backed[i]);
		j++;
	}
out:
	mutex_unlock(&rslub_backed_lock);
	return ret;
}

/*
 * Stops backing @kc: new allocations go to the kernel at once. Returns the rslub cache
 * that backed it (NULL if none), once no handler or replacement uses it any more; its
 * objects may still be live (they are freed to it wherever they are freed). May sleep.
 */
void *rslub_hook_unback(struct kmem_cache *kc)
{
	struct rslub_backing *b = NULL;
	void *rc = NULL;
	int i;

	mutex_lock(&rslub_backed_lock);
	b = rslub_lookup(kc);
	if (b) {
		struct rslub_backing **spare = rslub_index == rslub_index_buf[0] ?
			rslub_index_buf[1] : rslub_index_buf[0];

		WRITE_ONCE(b->kc, NULL);
		/*
		 * Word by word, though the grace period below keeps any reader off this
		 * buffer until the next unbacking rewrites it: a trampoline compares the kc of
		 * whatever slot it reads (direct.S).
		 */
		for (i = 0; i < RSLUB_INDEX_SIZE; i++)
			WRITE_ONCE(spare[i], NULL);
		for (i = 0; i < RSLUB_MAX_BACKED; i++) {
			if (rslub_backed[i].kc)
				rslub_index_add(spare, &rslub_backed[i]);
		}
		smp_store_release(&rslub_index, spare);
		/*
		 * Handlers run with preemption off, lookups under rcu_read_lock(): after a
		 * grace period none of them reads the old index or finds this slot. The
		 * allocation trampolines check a slot's kc with preemption on and their fast
		 * paths use its rc without another look (direct.S, rust/back/fast.rs), neither
		 * ever sleeping: a task between the two, preempted there, has not slept of its
		 * own accord since, which RCU Tasks waits for (its grace period includes
		 * synchronize_rcu()'s, and full barriers). Without direct calls no trampoline
		 * runs: they are registered with the hooks, before the first backing, and
		 * removed with them, after the last unbacking, which waits for RCU Tasks
		 * itself (ftrace_shutdown() of a module's ops). RCU Tasks' grace period is a
		 * tenth of a second or more, an RCU one a few milliseconds.
		 */
		if (READ_ONCE(rslub_direct_used))
			synchronize_rcu_tasks();
		else
			synchronize_rcu();
		/* A replacement that held the slot before still allocates from rc. */
		while (rslub_slot_held(b))
			msleep(1);
		rc = b->rc;
		b->rc = NULL;
	}
	mutex_unlock(&rslub_backed_lock);
	return rc;
}

/*
 * @kc, unbacked, has no object of rslub's left, nor ever will: its bulk frees may go to
 * the kernel at once (rslub_bulk_caches[]). @kc may be gone: only its address is used.
 */
void rslub_hook_drained(struct kmem_cache *kc)
{
	mutex_lock(&rslub_backed_lock);
	rslub_bulk_count(kc, -1);
	mutex_unlock(&rslub_backed_lock);
}

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
 * Watches for a cache named @name (which must stay valid until rslub_hook_unwatch()):
 * rslub_hook_seen() returns it once it allocates. The hooks must be registered.
 * Returns the slot, or -ENOSPC.
 */
int rslub_hook_watch(const char *name)
{
	int i, ret = -ENOSPC;

	mutex_lock(&rslub_backed_lock);
	for (i = 0; i < RSLUB_MAX_WATCHED; i++) {
		if (!rslub_watched[i]) {
			WRITE_ONCE(rslub_seen[i], NULL);
			rslub_seen_gone[i] = false;
			WRITE_ONCE(rslub_watched[i], name);
			WRITE_ONCE(rslub_nwatched, rslub_nwatched + 1);
			ret = i;
			break;
		}
	}
	mutex_unlock(&rslub_backed_lock);
	return ret;
}

/* The cache seen for watch @slot, or NULL. */
struct kmem_cache *rslub_hook_seen(int slot)
{
	return READ_ONCE(rslub_seen[slot]);
}

/*
 * Marks every open watch that saw @kc: it is being destroyed, and its struct is freed
 * right after. Called by rslub_r_destroy() (through rslub_back_destroying()) under
 * rust/back/mod.rs's lock, which a back of the cache found holds from the check of
 * rslub_hook_seen_gone() until it is published (and then the destroy unbacks it).
 */
void rslub_hook_seen_destroyed(struct kmem_cache *kc)
{
	int i;

	mutex_lock(&rslub_backed_lock);
	for (i = 0; i < RSLUB_MAX_WATCHED; i++) {
		if (rslub_watched[i] && rslub_seen[i] == kc)
			rslub_seen_gone[i] = true;
	}
	mutex_unlock(&rslub_backed_lock);
}

/* Whether the cache seen for watch @slot was destroyed since. */
bool rslub_hook_seen_gone(int slot)
{
	bool gone;

	mutex_lock(&rslub_backed_lock);
	gone = rslub_seen_gone[slot];
	mutex_unlock(&rslub_backed_lock);
	return gone;
}

/* Stops watch @slot; afterwards no handler reads its name. May sleep. */
void rslub_hook_unwatch(int slot)
{
	/*
	 * The slot is not given to another name before the handlers that read this one are
	 * done: one of them could still record its cache for the new name, or the reset
	 * below wipe what the new watch saw. So the lock is held across the grace period.
	 */
	mutex_lock(&rslub_backed_lock);
	WRITE_ONCE(rslub_watched[slot], NULL);
	WRITE_ONCE(rslub_nwatched, rslub_nwatched - 1);
	synchronize_rcu();
	WRITE_ONCE(rslub_seen[slot], NULL);
	mutex_unlock(&rslub_backed_lock);
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
