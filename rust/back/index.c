// SPDX-License-Identifier: GPL-2.0
/*
 * The backed caches (Documentation/backing.rst): the slots that pair a kernel cache with
 * the rslub cache serving it, the index the handlers and trampolines find a cache's slot
 * in, the per-CPU counts that hold a slot across a replacement that may sleep, and the
 * counts by cache of kmem_cache_free_bulk()'s quick test. Backing adds a slot, unbacking
 * takes it away once nothing uses its rslub cache, draining ends a cache's bulk count.
 *
 * Locks: rslub_backed_lock (a mutex) serializes every change of the slots, the index and
 * the bulk counts, and the watches (watch.c) and kmalloc's classes (kmalloc.c) take it too.
 * Readers take no lock: the handlers run with preemption off, the replacements look up
 * under rcu_read_lock() and hold a slot by its per-CPU counts (hook.h), the trampolines
 * never sleep; unbacking waits for each kind (rslub_hook_unback()).
 */
#include "hook.h"

struct rslub_backing rslub_backed[RSLUB_MAX_BACKED];
DEFINE_MUTEX(rslub_backed_lock);

/* The per-CPU counts of the slots' holders (hook.h). */
struct rslub_slot_count __percpu *rslub_slot_users;

/*
 * The index the handler looks caches up in: an open-addressing hash table of the slots in
 * use, keyed by hash_ptr() of kc and probed linearly up to its first empty entry, which
 * it always has (it is at most half full). A lookup costs a multiplication and, for a
 * cache that is not backed, usually one load of an empty entry, however many are backed.
 * Backing adds an entry to the current index in place (release: a reader sees the slot
 * filled); unbacking clears the slot's kc, rebuilds the index without it in the spare
 * one and publishes that, so that no probe chain ever has a hole. Once the unbacking's
 * wait is over (rslub_hook_unback()) no reader uses the old index, which is the spare for
 * the next unbacking. Written under rslub_backed_lock; read with preemption off, under
 * rcu_read_lock(), or by the allocation trampolines, which never sleep (RCU Tasks:
 * rslub_hook_unback()).
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
		 * No reader is left on the spare: the previous unbacking published the other
		 * buffer in its place, then waited as this one does below (RCU Tasks while
		 * the direct calls are registered, else a grace period) before it let go of
		 * the lock, and no reader has found the spare since (the first unbacking's
		 * never was the index). This unbacking's wait is for the buffer it replaces,
		 * the next one's spare. Word by word all the same: a trampoline does not rely
		 * on the wait alone, it compares the kc of whatever slot it reads (direct.S).
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
