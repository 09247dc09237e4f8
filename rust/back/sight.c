// SPDX-License-Identifier: GPL-2.0
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
 *
 * Locks: the handler claims and fills an entry with a cmpxchg and a release, in any
 * context, and takes none. The worker takes an entry with a cmpxchg and looks at its
 * cache under rust/back/mod.rs's lock (BACK), under which a destroy forgets a sighting
 * (rslub_sight_forget()); rslub_sight_flush() takes the destroys' lock
 * (rslub_destroy_lock, replace.c).
 */
#include "hook.h"

unsigned long rslub_sighted[RSLUB_SIGHT_SIZE];
/* Whether the handler sights caches; only those whose name starts with rslub_all_prefix. */
bool rslub_all; /* also read by direct.S (a byte) */
static const char *rslub_all_prefix;
/* The table was full: caches that allocated since were not sighted. */
bool rslub_sight_full;

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

/*
 * Sights @kc, allocating and not backed: out of line, as it runs once per cache. The one
 * part of the handler that calls traceable functions (irq_work_queue(), the name
 * compare), none of them hooked.
 */
noinline void notrace rslub_sight(struct kmem_cache *kc)
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

/* Whether caches can be sighted: their structs are held through their kobjects. */
bool rslub_can_sight(void)
{
	return IS_ENABLED(SLAB_SUPPORTS_SYSFS);
}

/*
 * Starts (@on) or stops sighting caches; @prefix, if not NULL, limits it to the caches
 * whose name starts with it (the suites' own, which must stay valid until it stops).
 * Stopping waits for the handlers and the worker; what was sighted stays until
 * rslub_sight_forget() or rslub_sight_flush().
 */
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
