// SPDX-License-Identifier: GPL-2.0
/*
 * Registering and removing the hooks: the handler's ftrace ops (handler.c) on the
 * kmem_cache functions, and, where the kernel has ftrace's jmp mode, a direct call of each
 * of the hottest ones to its trampoline (direct.S, trampoline.c), with the checks of the
 * call sites the trampolines rely on. kmalloc's hooks (kmalloc.c) use the same means. The
 * hooks hold a module reference while they are registered; rslub_hook_quiesce() waits
 * for the replacements' own at module exit.
 *
 * Locks: the callers serialize registration (rust/back/mod.rs's lock); ftrace takes its
 * own. rslub_direct_used changes only here, before the first trampoline runs and after
 * the last is removed.
 */
#include "kmalloc.h"

/* Whether the direct calls are registered (hook.h). */
bool rslub_direct_used;

#ifdef CONFIG_HARDENED_USERCOPY
#define RSLUB_HOOKED_USERCOPY(X) X(__check_object_size)
#else
#define RSLUB_HOOKED_USERCOPY(X)
#endif /* CONFIG_HARDENED_USERCOPY */
#ifdef CONFIG_MEMCG
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

#define RSLUB_NR_HOOKED (0 RSLUB_HOOKED(RSLUB_ONE))

/*
 * Sets @ops's filter to the @n functions at @fns and registers it: 0, or -errno with a
 * message naming @what (the caller frees the filter).
 */
int rslub_ops_register(struct ftrace_ops *ops, const unsigned long *fns, int n, const char *what)
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
 * Direct calls (direct.S, Documentation/backing.rst): the functions of
 * rslub_direct_sites[] (every hooked one but kmem_cache_destroy and kmem_cache_charge,
 * plus kvfree), and in whole-kernel mode the kmalloc family's, jump from their call sites
 * straight to a trampoline of their own, which costs a few instructions where the handler
 * (handler.c) costs a hundred (ftrace's regs trampoline). One ftrace_ops each, as an ops
 * has one trampoline; the other functions stay on rslub_hook_ops. The direct ops have no
 * ops_func: a function whose IP another ops modifies (livepatch) or that has a direct
 * call already (a BPF fentry/fexit trampoline, the other rslub module of the suites)
 * is refused, and with it the hooks (-EBUSY); while rslub holds them, BPF fentry/fexit
 * and livepatch cannot attach to these functions.
 */
#ifdef RSLUB_DIRECT
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
bool rslub_direct_site_ok(const void *fn)
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
bool rslub_kmalloc_direct_wanted(void)
{
	return RSLUB_NR_DIRECT_KMALLOC && READ_ONCE(rslub_direct_used);
}

/* Registers them: 0, or -errno with a message (none is left registered). */
int rslub_kmalloc_direct_register(void)
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
bool rslub_kmalloc_direct_unregister(void)
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

/*
 * Registers the hooks on the kernel's functions, and holds the module (rmmod is refused)
 * until rslub_hook_exit(). 0, -EBUSY if the module is going away, or -errno.
 */
int rslub_hook_init(void)
{
	static const unsigned long all[] = { RSLUB_HOOKED(RSLUB_FN_ADDR) };
	unsigned long fns[RSLUB_NR_HOOKED];
	bool direct;
	int i, n = 0, ret;

	/*
	 * The hooks' reference, before anything else: rmmod is refused until nothing is
	 * backed and no backed object is alive (rslub_hook_exit() drops it). A module going
	 * away (a write to debugfs' back racing rmmod) registers no hook.
	 */
	if (!try_module_get(THIS_MODULE))
		return -EBUSY;
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
	ret = -ENOMEM;
	rslub_slot_users = alloc_percpu(struct rslub_slot_count);
	if (!rslub_slot_users)
		goto out_put;
	rslub_rcu_wq = alloc_workqueue("rslub_rcu", WQ_UNBOUND | WQ_MEM_RECLAIM, 1);
	if (!rslub_rcu_wq)
		goto out_percpu;
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
	return 0;
out:
	ftrace_free_filter(&rslub_hook_ops);
	destroy_workqueue(rslub_rcu_wq);
	rslub_rcu_wq = NULL;
out_percpu:
	free_percpu(rslub_slot_users);
	rslub_slot_users = NULL;
out_put:
	module_put(THIS_MODULE);
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
