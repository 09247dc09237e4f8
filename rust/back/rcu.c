// SPDX-License-Identifier: GPL-2.0
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
 *
 * Locks: queueing takes none (an llist push with preemption off); the worker takes none
 * either; rslub_rcu_barrier_lock makes barriers one at a time.
 */
#include "hook.h"

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
struct workqueue_struct *rslub_rcu_wq;
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
