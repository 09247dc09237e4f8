// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C wrappers for kernel inline functions and macros that Rust cannot call.
 * Each one is a single call; the Rust side (rust/shim.rs) documents its contract.
 * None of them is on a fast path.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/debug_locks.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/oom.h>
#include <linux/percpu.h>
#include <linux/jiffies.h>
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/mempolicy.h>
#include <linux/printk.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/stacktrace.h>
#include <linux/workqueue.h>
#include <linux/topology.h>

#include "shim.h"

#ifdef CONFIG_KASAN_GENERIC
/* kasan_poison(), KASAN_GRANULE_SIZE and the shadow values: mm/kasan's own header. */
#include "kasan/kasan.h"
#endif

unsigned int rslub_num_present_cpus(void)
{
	return num_present_cpus();
}

unsigned int rslub_num_online_cpus(void)
{
	return num_online_cpus();
}

unsigned int rslub_num_online_nodes(void)
{
	return num_online_nodes();
}

bool rslub_cpu_possible(int cpu)
{
	return cpu_possible(cpu);
}

bool rslub_cpu_online(int cpu)
{
	return cpu_online(cpu);
}

bool rslub_node_online(int node)
{
	return node >= 0 && node < nr_node_ids && node_online(node);
}

bool rslub_node_has_memory(int node)
{
	return node >= 0 && node < nr_node_ids && node_state(node, N_NORMAL_MEMORY);
}

int rslub_numa_mem_id(void)
{
	return numa_mem_id();
}

unsigned int rslub_cache_line_size(void)
{
	return cache_line_size();
}

bool rslub_init_on_alloc(void)
{
	return want_init_on_alloc(0);
}

bool rslub_init_on_free(void)
{
	return want_init_on_free();
}

bool rslub_debug_pagealloc_enabled(void)
{
	return debug_pagealloc_enabled();
}

void *rslub_page_address(struct page *page)
{
	return page_address(page);
}

/*
 * Takes the reference count of @page, just allocated, from 1 to 0, as SLUB's slab pages
 * are (frozen): false if someone holds a speculative reference meanwhile (a lookup's
 * folio_try_get() of a page it saw before it was freed), which the caller then gives
 * back with __free_pages(), the last put freeing it.
 */
bool rslub_page_freeze(struct page *page)
{
	return page_ref_freeze(page, 1);
}

/*
 * Gives @page, frozen by rslub_page_freeze(), its reference back, for __free_pages(). A
 * reference someone took on a slab page meanwhile (get_page() on a kmalloc buffer, which
 * 7.3 refuses with a warning for its own slab pages) is a bug of theirs: warned of, and
 * kept (added to, not overwritten), so that the page is freed by the last put only.
 */
void rslub_page_unfreeze(struct page *page)
{
	WARN_ON_ONCE(page_ref_count(page));
	page_ref_inc(page);
}

/*
 * A slab's pages in the node's slab statistics (6.12's account_slab() and
 * unaccount_slab(): NR_SLAB_RECLAIMABLE_B for a SLAB_RECLAIM_ACCOUNT cache, else
 * NR_SLAB_UNRECLAIMABLE_B), so that /proc/meminfo's Slab: and reclaim's heuristics see
 * them. @sign is 1 when the slab is made, -1 when it goes.
 */
void rslub_account_slab(struct page *page, unsigned int order, bool reclaimable, int sign)
{
	mod_node_page_state(page_pgdat(page),
			    reclaimable ? NR_SLAB_RECLAIMABLE_B : NR_SLAB_UNRECLAIMABLE_B,
			    sign * (long)(PAGE_SIZE << order));
}

int rslub_page_to_nid(const struct page *page)
{
	return page_to_nid(page);
}

bool rslub_page_is_pfmemalloc(const struct page *page)
{
	return page_is_pfmemalloc(page);
}

/*
 * gfp_pfmemalloc_allowed() of mm/page_alloc.c, which is not exported: whether an
 * allocation with @gfp in this context may use the emergency reserves (its
 * __gfp_pfmemalloc_flags() is not 0).
 */
bool rslub_pfmemalloc_allowed(gfp_t gfp)
{
	if (unlikely(gfp & __GFP_NOMEMALLOC))
		return false;
	if (gfp & __GFP_MEMALLOC)
		return true;
	if (in_serving_softirq() && (current->flags & PF_MEMALLOC))
		return true;
	if (!in_interrupt()) {
		if (current->flags & PF_MEMALLOC)
			return true;
		/* oom_reserves_allowed(): an OOM victim may use them (MMU kernels). */
		if (tsk_is_oom_victim(current))
			return true;
	}
	return false;
}

unsigned long rslub_irq_save(void)
{
	unsigned long flags;

	local_irq_save(flags);
	return flags;
}

void rslub_irq_restore(unsigned long flags)
{
	local_irq_restore(flags);
}

/*
 * Flushing CPUs, as SLUB's flush_all(): a work item per online CPU, all queued on a
 * workqueue of our own that may be waited for from memory reclaim (WQ_MEM_RECLAIM, with
 * a rescuer thread), then all waited for. The work items are per-cpu statics, so one
 * flush runs at a time (rslub_flush_lock).
 */
struct rslub_flush_work {
	struct work_struct work;
	void (*fn)(void *);
	void *arg;
};

static DEFINE_PER_CPU(struct rslub_flush_work, rslub_flush);
static DEFINE_MUTEX(rslub_flush_lock);
static struct workqueue_struct *rslub_flush_wq;

/*
 * Slab metadata (rust/slab.rs) comes from a cache of the kernel's own, as SLUB's
 * kmem_cache_node structures come from a cache SLUB bootstraps: never from a kmalloc
 * that rslub may serve (whole-kernel mode), whose new slab would need metadata of its
 * own first. rslub never backs it (rslub_kc_refusal()).
 */
static struct kmem_cache *rslub_meta_cache;
/*
 * Metadata in use: a cache destroyed with live objects keeps its slabs for good (as
 * SLUB does), and their metadata with them, so the cache cannot be destroyed then.
 */
static atomic_long_t rslub_meta_live;

void *rslub_meta_alloc(gfp_t gfp, int node)
{
	void *p = kmem_cache_alloc_node(rslub_meta_cache, gfp, node);

	if (p)
		atomic_long_inc(&rslub_meta_live);
	return p;
}

void rslub_meta_free(void *p)
{
	atomic_long_dec(&rslub_meta_live);
	kmem_cache_free(rslub_meta_cache, p);
}

bool rslub_is_meta_cache(const struct kmem_cache *kc)
{
	return kc == rslub_meta_cache;
}

int rslub_shim_init(unsigned int meta_size, unsigned int meta_align)
{
	/* Not merged: the metadata shows as the module's in /proc/slabinfo. */
	rslub_meta_cache = kmem_cache_create(KBUILD_MODNAME "_meta", meta_size, meta_align,
					     SLAB_NO_MERGE, NULL);
	if (!rslub_meta_cache)
		return -ENOMEM;
	rslub_flush_wq = alloc_workqueue("rslub_flushwq", WQ_MEM_RECLAIM | WQ_PERCPU, 0);
	if (!rslub_flush_wq) {
		kmem_cache_destroy(rslub_meta_cache);
		return -ENOMEM;
	}
	return 0;
}

void rslub_shim_exit(void)
{
	long live = atomic_long_read(&rslub_meta_live);

	destroy_workqueue(rslub_flush_wq);
	if (live)
		pr_warn("%ld slabs of caches destroyed with live objects stay, and so does their metadata cache\n",
			live);
	else
		kmem_cache_destroy(rslub_meta_cache);
}

static void rslub_flush_fn(struct work_struct *w)
{
	struct rslub_flush_work *f = container_of(w, struct rslub_flush_work, work);

	f->fn(f->arg);
}

void rslub_run_on_each_cpu(void (*fn)(void *), void *arg)
{
	struct rslub_flush_work *f;
	int cpu;

	lockdep_assert_cpus_held();
	mutex_lock(&rslub_flush_lock);
	for_each_online_cpu(cpu) {
		f = per_cpu_ptr(&rslub_flush, cpu);
		INIT_WORK(&f->work, rslub_flush_fn);
		f->fn = fn;
		f->arg = arg;
		queue_work_on(cpu, rslub_flush_wq, &f->work);
	}
	for_each_online_cpu(cpu)
		flush_work(&per_cpu_ptr(&rslub_flush, cpu)->work);
	mutex_unlock(&rslub_flush_lock);
}

/*
 * CPU hotplug, as SLUB's slub_cpu_dead(): once a CPU is dead, rslub_cpu_dead()
 * (rust/registry.rs) gives its active slab of every cache back to the node lists, from a
 * surviving CPU. A dynamic state of the BP (control CPU) prepare section: its teardown
 * runs after the CPU has stopped, with the hotplug lock held for writing.
 */
int rslub_cpu_dead(unsigned int cpu);
static enum cpuhp_state rslub_cpuhp_state;

int rslub_hotplug_init(void)
{
	int ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "mm/rslub:dead", NULL,
					    rslub_cpu_dead);

	if (ret < 0)
		return ret;
	rslub_cpuhp_state = ret;
	return 0;
}

void rslub_hotplug_exit(void)
{
	cpuhp_remove_state_nocalls(rslub_cpuhp_state);
}

/*
 * Memory pressure: a shrinker whose objects are the pages of empty slabs that the node
 * lists keep beyond each cache's min_partial. rslub_shrink_count() and
 * rslub_shrink_scan() (rust/registry.rs) count and give them back.
 */
unsigned long rslub_shrink_count(void);
unsigned long rslub_shrink_scan(unsigned long nr);
static struct shrinker *rslub_shrinker;

static unsigned long rslub_count_objects(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long n = rslub_shrink_count();

	return n ? n : SHRINK_EMPTY;
}

static unsigned long rslub_scan_objects(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long freed = rslub_shrink_scan(sc->nr_to_scan);

	return freed ? freed : SHRINK_STOP;
}

int rslub_shrinker_init(const char *name)
{
	rslub_shrinker = shrinker_alloc(0, "%s", name);
	if (!rslub_shrinker)
		return -ENOMEM;
	rslub_shrinker->count_objects = rslub_count_objects;
	rslub_shrinker->scan_objects = rslub_scan_objects;
	rslub_shrinker->seeks = DEFAULT_SEEKS;
	shrinker_register(rslub_shrinker);
	return 0;
}

void rslub_shrinker_exit(void)
{
	shrinker_free(rslub_shrinker);
	rslub_shrinker = NULL;
}

bool rslub_shrinker_registered(void)
{
	return rslub_shrinker && (rslub_shrinker->flags & SHRINKER_REGISTERED);
}

int rslub_zonelist_nodes(int nid, u16 *out, int max)
{
	struct zonelist *zonelist = node_zonelist(nid, GFP_KERNEL);
	enum zone_type high = gfp_zone(GFP_KERNEL);
	struct zoneref *z;
	int n = 0;

	/* for_each_zone_zonelist() without its out-of-line helper, which is not exported. */
	for (z = zonelist->_zonerefs; zonelist_zone(z) && n < max; z++) {
		if (zonelist_zone_idx(z) <= high)
			out[n++] = zonelist_node_idx(z);
	}
	return n;
}

/*
 * The node a remote walk starts from: 6.12's mempolicy_slab_node() (mm/mempolicy.c, not
 * exported), the node of the task's memory policy in task context, else the nearest node
 * with memory. The interleave step is 6.12's interleave_nodes() without its mems_allowed
 * retry (the caller retries the whole walk). MPOL_WEIGHTED_INTERLEAVE is read and not
 * advanced: the node whose weight the task is spending, else the next one (6.12's
 * weighted_interleave_nodes() also spends one of its weight, which get_il_weight(), not
 * exported, refills; advancing il_prev alone would skew the task's page interleave).
 */
int rslub_mempolicy_slab_node(void)
{
	int node = numa_mem_id();
#ifdef CONFIG_NUMA
	struct mempolicy *policy;

	if (!in_task())
		return node;
	policy = current->mempolicy;
	if (!policy)
		return node;
	switch (policy->mode) {
	case MPOL_PREFERRED:
		return first_node(policy->nodes);
	case MPOL_INTERLEAVE: {
		int next = next_node_in(current->il_prev, policy->nodes);

		if (next < MAX_NUMNODES)
			current->il_prev = next;
		return next < MAX_NUMNODES ? next : node;
	}
	case MPOL_WEIGHTED_INTERLEAVE: {
		int next = current->il_prev;

		if (!current->il_weight || !node_isset(next, policy->nodes))
			next = next_node_in(next, policy->nodes);
		return next < MAX_NUMNODES ? next : node;
	}
	case MPOL_BIND:
	case MPOL_PREFERRED_MANY: {
		/* first_zones_zonelist() without its out-of-line helper (not exported). */
		struct zonelist *zonelist = &NODE_DATA(node)->node_zonelists[ZONELIST_FALLBACK];
		enum zone_type high = gfp_zone(GFP_KERNEL);
		struct zoneref *z;

		for (z = zonelist->_zonerefs; zonelist_zone(z); z++) {
			if (zonelist_zone_idx(z) <= high &&
			    node_isset(zonelist_node_idx(z), policy->nodes))
				return zonelist_node_idx(z);
		}
		return node;
	}
	default:
		return node;
	}
#else
	return node;
#endif
}

/*
 * Whether the current context may take slabs of node nid for an allocation with gfp:
 * 6.12's cpuset_zone_allowed() in get_any_partial(). Its cpuset_current_node_allowed() is
 * not exported, nor is the static key that says whether cpusets are in use; this follows
 * it for interrupts, the task's mems_allowed, OOM victims and __GFP_HARDWALL, and lets any other
 * allocation take any node (6.12 then looks for the nearest hardwalled cpuset above the
 * task's, which is the root, with every node, unless mem_hardwall or mem_exclusive is set).
 */
bool rslub_cpuset_node_allowed(int nid, unsigned int gfp)
{
#ifdef CONFIG_CPUSETS
	if (in_interrupt() || node_isset(nid, current->mems_allowed))
		return true;
	/* An OOM victim may take any node, to exit quickly. */
	if (tsk_is_oom_victim(current))
		return true;
	return !(gfp & __GFP_HARDWALL);
#else
	return true;
#endif
}

/* read_mems_allowed_begin() and _retry() without the static key they test (not exported). */
unsigned int rslub_mems_allowed_begin(void)
{
#ifdef CONFIG_CPUSETS
	return read_seqcount_begin(&current->mems_allowed_seq);
#else
	return 0;
#endif
}

bool rslub_mems_allowed_retry(unsigned int seq)
{
#ifdef CONFIG_CPUSETS
	return read_seqcount_retry(&current->mems_allowed_seq, seq);
#else
	return false;
#endif
}

/* get_cycles(): the classic profile's draw for remote_node_defrag_ratio. */
u64 rslub_get_cycles(void)
{
	return get_cycles();
}

/*
 * Pages for a slab as 6.12's alloc_slab_page(): for any node, alloc_pages(), which follows
 * the task's memory policy (and cpuset); for a node, alloc_pages_node() (6.12:
 * __alloc_pages_node(), the same for a node id).
 */
struct page *rslub_alloc_slab_pages(int node, unsigned int gfp, unsigned int order)
{
	if (node == NUMA_NO_NODE)
		return alloc_pages_noprof(gfp, order);
	return alloc_pages_node_noprof(node, gfp, order);
}

/*
 * An owner record of a debug cache (rust/debug.rs, `Track`): the call chain, the CPU,
 * the task and the time, as SLUB's set_track() keeps them.
 */
void rslub_track_save(unsigned long *addrs, unsigned int n, unsigned int *cpu,
		      unsigned int *pid, unsigned long *when)
{
	unsigned int got = stack_trace_save(addrs, n, 2);

	if (got < n)
		addrs[got] = 0;
	*cpu = raw_smp_processor_id();
	*pid = current->pid;
	*when = jiffies;
}

/* Prints an owner record, with symbols (%pS), for a debug report. */
void rslub_track_print(const char *what, const unsigned long *addrs, unsigned int n,
		       unsigned int cpu, unsigned int pid, unsigned long when)
{
	unsigned int i;

	pr_err("  last %s on CPU %u by pid %u, %lu jiffies ago:\n", what, cpu, pid,
	       jiffies - when);
	for (i = 0; i < n && addrs[i]; i++)
		pr_err("    %pS\n", (void *)addrs[i]);
}

/*
 * What KASAN and kmemleak see of rslub's objects (rust/sanitize.rs). Generic KASAN only:
 * the software tag and hardware tag modes are not supported (rslub hands out untagged
 * pointers), and without KASAN or kmemleak nothing here is called.
 */
#ifdef CONFIG_KASAN_GENERIC
/*
 * kasan_unpoison() is not exported: what it does for generic KASAN, with the exported
 * kasan_poison(). Every granule that holds a byte of the object is made accessible, and
 * the last one only up to the object's end (its shadow byte holds how many of its bytes
 * are).
 */
void rslub_kasan_unpoison(const void *addr, size_t size)
{
	kasan_poison(addr, round_up(size, KASAN_GRANULE_SIZE), 0, false);
	if (size & KASAN_GRANULE_MASK)
		*(u8 *)kasan_mem_to_shadow(addr + size) = size & KASAN_GRANULE_MASK;
}

void rslub_kasan_poison(const void *addr, size_t size, bool freed)
{
	kasan_poison(addr, round_up(size, KASAN_GRANULE_SIZE),
		     freed ? KASAN_SLAB_FREE : KASAN_SLAB_REDZONE, false);
}

bool rslub_kasan_poisoned(const void *addr)
{
	return (s8)*(u8 *)kasan_mem_to_shadow(addr) < 0;
}
#else
void rslub_kasan_unpoison(const void *addr, size_t size) { }
void rslub_kasan_poison(const void *addr, size_t size, bool freed) { }
bool rslub_kasan_poisoned(const void *addr) { return false; }
#endif

void rslub_kmemleak_alloc(const void *addr, size_t size, gfp_t gfp)
{
	kmemleak_alloc(addr, size, 1, gfp);
}

void rslub_kmemleak_free(const void *addr)
{
	kmemleak_free(addr);
}

void rslub_check_no_locks_freed(const void *addr, size_t size)
{
	debug_check_no_locks_freed(addr, size);
}

void rslub_kmemleak_ignore(const void *addr)
{
	kmemleak_ignore(addr);
}

void rslub_kmemleak_not_leak(const void *addr)
{
	kmemleak_not_leak(addr);
}

void rslub_kmemleak_ignore_percpu(const void __percpu *addr)
{
	kmemleak_ignore_percpu(addr);
}
