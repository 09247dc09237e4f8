// SPDX-License-Identifier: GPL-2.0
/*
 * Names waiting to be seen: a cache can only be found by name when it allocates (the
 * kernel's list of caches is not exported), so the allocation handler compares names
 * while any is watched: a cache's own name, or its name in /sys/kernel/slab (a merged
 * cache's, see rslub_kc_sysfs_id()). Written under rslub_backed_lock, read in the
 * handler (preemption off: rslub_hook_unwatch() waits for it with synchronize_rcu()).
 *
 * Locks: rslub_backed_lock (index.c), also over rslub_seen_gone. The checks that the
 * handler and the trampolines' slow paths run, rslub_watch_check() and rslub_watch_saw()
 * (hook.h), take none: they record a cache seen with a cmpxchg.
 */
#include "hook.h"

const char *rslub_watched[RSLUB_MAX_WATCHED];
struct kmem_cache *rslub_seen[RSLUB_MAX_WATCHED];
/* The cache seen was destroyed since (rslub_hook_seen_destroyed()). */
static bool rslub_seen_gone[RSLUB_MAX_WATCHED];
int rslub_nwatched; /* also read by direct.S */

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
