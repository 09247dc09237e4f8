/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The C side of backing kernel caches (Documentation/backing.rst): what its files under
 * rust/back/ share. rust/back/mod.rs drives it; the direct-call trampolines
 * (rust/back/direct.S, with rust/back/direct.h) enter it.
 *
 * Why C: it is made of what Rust-for-Linux has no abstraction for in 7.3. The ftrace
 * handlers read and rewrite a hooked call's struct ftrace_regs, and the ftrace ops and
 * direct calls are registered through ftrace's C API. The decision on each hooked call is
 * the kernel's static inline helpers (virt_to_page(), page_slab(), virt_to_slab(),
 * hash_ptr(), kasan_kmalloc(), kmalloc_type(), this_cpu_inc(), the RCU and preemption
 * primitives), which stay a few instructions inline where bindings would be calls. The RCU
 * queue is an llist and an irq_work per CPU. And struct kmem_cache, whose fields every file
 * reads, and the SLAB_* bits it tests with are defined in mm/slab.h, a header of mm/ that
 * only C can include (Kbuild adds mm/ to the include path).
 *
 * The files, each saying in its first comment what it is for and which locks it takes:
 *  - index.c: the slots of the backed caches, the index the handlers look them up in,
 *    their per-CPU hold counts, the caches' counts for bulk frees; backing, unbacking;
 *  - sight.c: whole-kernel mode's sightings of caches as they allocate;
 *  - watch.c: the name watches (a cache found by name when it allocates);
 *  - kc.c: facts about a kernel kmem_cache (geometry, name in sysfs, holds), and why
 *    rslub refuses one;
 *  - replace.c: the replacements of the kmem_cache API: allocations, frees, bulk frees,
 *    ksize(), krealloc(), kmem_cache_destroy(), kmem_cache_charge();
 *  - rcu.c: kfree_rcu() and its kin of rslub's objects;
 *  - usercopy.c: hardened usercopy's check of rslub's objects;
 *  - kmalloc.c (kmalloc.h): kmalloc served by rslub's size classes in whole-kernel mode;
 *  - handler.c: the ftrace handlers, which decide every call of a hooked function;
 *  - trampoline.c: what the direct-call trampolines ask and jump to;
 *  - register.c: registering and removing the hooks (ftrace ops, direct calls);
 *  - test.c: helpers for the suites only (RSLUB_INJECT).
 * rslub.ko links them (Kbuild); the test and bench modules include them all in their one
 * C unit (tests-kunit/shim.c).
 *
 * What a hot path needs of another file is here, __always_inline: the index's lookup and
 * a slot's hold (rslub_lookup(), rslub_get(), rslub_put()), the test of an object's owner
 * (rslub_foreign()), the checks of watches and sightings.
 */
#ifndef RSLUB_BACK_HOOK_H
#define RSLUB_BACK_HOOK_H

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
 * The backed caches (index.c): kc is published last (release), read first (acquire). A
 * slot is free when kc and rc are NULL. Slots change under rslub_backed_lock only. kc is
 * the first member: the allocation trampolines compare it (direct.S). 32 bytes, so that a
 * slot's index is its offset shifted.
 */
struct rslub_backing {
	struct kmem_cache *kc;
	void *rc;
} __aligned(32);
extern struct rslub_backing rslub_backed[RSLUB_MAX_BACKED];
extern struct mutex rslub_backed_lock;
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
extern struct rslub_slot_count __percpu *rslub_slot_users;

/* @b's index in rslub_backed[]. */
static __always_inline unsigned int rslub_slot_id(const struct rslub_backing *b)
{
	return b - rslub_backed;
}

/* The index of the backed caches (index.c); direct.S reads it too. */
extern struct rslub_backing **rslub_index;

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
static inline void rslub_bulk_count(struct kmem_cache *kc, int delta)
{
	u32 *c = rslub_bulk_slot(kc);

	lockdep_assert_held(&rslub_backed_lock);
	WARN_ON_ONCE(delta < 0 && !*c);
	WRITE_ONCE(*c, *c + delta);
}

/* The name watches (watch.c). */
#define RSLUB_MAX_WATCHED 16
extern const char *rslub_watched[RSLUB_MAX_WATCHED];
extern struct kmem_cache *rslub_seen[RSLUB_MAX_WATCHED];
extern int rslub_nwatched; /* also read by direct.S */

/*
 * The table of sightings of whole-kernel mode (sight.c, which says what its entries are):
 * its size, and the tags of an entry.
 */
#define RSLUB_SIGHT_BITS 11
#define RSLUB_SIGHT_SIZE (1 << RSLUB_SIGHT_BITS)
#define RSLUB_SIGHT_NEW 1UL
#define RSLUB_SIGHT_MAKING 2UL
#define RSLUB_SIGHT_TAGS (RSLUB_SIGHT_NEW | RSLUB_SIGHT_MAKING)
/* No address, as no cache is at 0: the entry of a cache destroyed since. */
#define RSLUB_SIGHT_GONE (0UL | RSLUB_SIGHT_MAKING)
extern unsigned long rslub_sighted[RSLUB_SIGHT_SIZE];
/* Whether the handler sights caches (sight.c). */
extern bool rslub_all; /* also read by direct.S (a byte) */
extern bool rslub_sight_full;
void rslub_sight(struct kmem_cache *kc);

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

/* Whether @kc's sighting is made, holding its struct. */
static inline bool rslub_sight_held(struct kmem_cache *kc)
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
extern atomic_t rslub_holding;

/*
 * Whether the direct calls are registered (register.c: with the hooks, under the
 * backing's lock; read anywhere by a replacement that gives a call back to the kernel).
 */
extern bool rslub_direct_used;

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

/* The hooked functions' addresses in a table, and their number, from a list macro. */
#define RSLUB_FN_ADDR(fn) (unsigned long)fn,
#define RSLUB_ONE(fn) +1

/* The ftrace ops of the handlers (handler.c), registered by register.c and kmalloc.c. */
extern struct ftrace_ops rslub_hook_ops, rslub_kmalloc_ops;
int rslub_ops_register(struct ftrace_ops *ops, const unsigned long *fns, int n, const char *what);

/* The replacements of kmem_cache_destroy() and kmem_cache_charge() (replace.c). */
void rslub_r_destroy(struct kmem_cache *s);
bool rslub_r_charge(void *objp, gfp_t gfpflags);
/*
 * The destroy under way through rslub_r_destroy(), which the handler lets through, and
 * the lock that orders destroys (replace.c).
 */
extern struct mutex rslub_destroy_lock;
extern struct task_struct *rslub_destroy_task;
extern struct kmem_cache *rslub_destroy_kc;

/* The workqueue of the RCU queue's frees (rcu.c), made and destroyed with the hooks. */
extern struct workqueue_struct *rslub_rcu_wq;

#endif
