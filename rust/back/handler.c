// SPDX-License-Identifier: GPL-2.0
/*
 * The ftrace handlers: the kmem_cache entry points of mm/slub.o (and mm/slab_common.o's,
 * mm/usercopy.o's) are redirected to rslub for the caches it backs, with ftrace and
 * FTRACE_OPS_FL_IPMODIFY, as livepatch does (Documentation/backing.rst); in whole-kernel
 * mode the kmalloc family's too, by a second ops. Where direct calls are registered
 * (register.c), the trampolines of direct.S take the hottest functions instead, and these
 * handlers keep the rest.
 *
 * The handler runs on every call of a hooked function in the whole kernel, so it decides
 * with a few loads:
 *  - allocations (kmem_cache_alloc{,_node,_lru}, _bulk): is the cache in the table (and,
 *    with CONFIG_MEMCG, the allocation not charged: __GFP_ACCOUNT goes to the kernel)?
 *    In whole-kernel mode (back=all), a cache that is not is sighted, once, for the
 *    worker that backs it (sight.c);
 *  - frees (kmem_cache_free, kfree, kmem_cache_free_bulk, hence kfree_bulk; and
 *    kvfree_call_rcu, kfree_call_rcu_nolock: kfree_rcu() and its kin), ksize and
 *    krealloc: is an object on a slab page whose cache is one of rslub's shadows
 *    (rslub_foreign(), rust/slab_page.c)? Objects of the kernel's slabs are the kernel's,
 *    whatever the cache's backing, so objects allocated before backing and freed after it
 *    (or the reverse) go where they came from.
 *  - with CONFIG_MEMCG, kmem_cache_charge(), and with CONFIG_HARDENED_USERCOPY,
 *    __check_object_size(): is the address on an rslub slab?
 * The replacement functions (replace.c, rcu.c, usercopy.c, kmalloc.c) call the kernel's
 * own ones for the kernel's objects (and for a cache unbacked meanwhile): the handler lets
 * those through, as it lets every kernel object and every unbacked cache through.
 *
 * Locks: none. The handlers run with preemption off, which unbacking's grace period
 * waits for (index.c), and call no hooked function.
 */
#include "kmalloc.h"

/* Where the handler finds the arguments: the hooked function's own registers. */
#define ARG(n) ftrace_regs_get_argument(fregs, n)
#define ARGP(n) ((void *)ARG(n))

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
struct ftrace_ops rslub_hook_ops = {
	.func = rslub_hook_fn,
	.flags = RSLUB_HOOK_FLAGS,
};

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

struct ftrace_ops rslub_kmalloc_ops = {
	.func = rslub_kmalloc_fn,
	.flags = RSLUB_HOOK_FLAGS,
};
