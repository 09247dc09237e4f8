/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the direct-call trampolines (rust/back/direct.S) and rust/back's C side (hook.h)
 * share: the layout constants the trampolines test with, each checked against the
 * kernel's own definition in trampoline.c (static_assert), and the C functions they ask
 * or jump to.
 */
#ifndef RSLUB_BACK_DIRECT_H
#define RSLUB_BACK_DIRECT_H

/*
 * Direct calls need ftrace's jmp mode (the call site becomes a jmp to the trampoline,
 * which is then entered as the function itself); without it the hottest functions are
 * hooked like the others, with the IPMODIFY handler.
 */
#if defined(CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS) && defined(CONFIG_DYNAMIC_FTRACE_WITH_JMP) && \
	defined(CONFIG_X86_64)
#define RSLUB_DIRECT 1
#endif

/*
 * The kmalloc family's trampolines read the class table's KMALLOC_NORMAL row: without
 * random or partitioned kmalloc caches, that is the one row every ordinary request uses.
 * Elsewhere kmalloc stays on the handler.
 */
#if defined(RSLUB_DIRECT) && !defined(CONFIG_RANDOM_KMALLOC_CACHES) && \
	!defined(CONFIG_KMALLOC_PARTITION_CACHES)
#define RSLUB_DIRECT_KMALLOC 1
#endif

/* A function's ftrace call site: after its ENDBR (ENDBR_INSN_SIZE) on an IBT kernel. */
#ifdef CONFIG_X86_KERNEL_IBT
#define RSLUB_SITE 4
#else
#define RSLUB_SITE 0
#endif
/* The first instruction after the call site (MCOUNT_INSN_SIZE): where a trampoline goes back. */
#define RSLUB_SITE_END (RSLUB_SITE + 5)

/* struct page: its size's log2, and the offsets of compound_info and of page_type's top byte. */
#define RSLUB_PAGE_SIZE_SHIFT 6
#define RSLUB_PAGE_COMPOUND_INFO 8
#define RSLUB_PAGE_TYPE_TOP 51
/* PGTY_slab (include/linux/page-flags.h): page_type's top byte on a slab's head page. */
#define RSLUB_PGTY_SLAB 0xf5

/* KMALLOC_MAX_CACHE_SIZE: the largest request a class serves. */
#define RSLUB_KMALLOC_MAX_CACHE_SIZE 8192

/* The index of backed caches (index.c): its size's log2. */
#define RSLUB_INDEX_BITS 10
#define RSLUB_INDEX_SIZE (1 << RSLUB_INDEX_BITS)
/* hash_ptr() (include/linux/hash.h, 64-bit): the multiplier of the index's keys. */
#define RSLUB_GOLDEN_RATIO_64 0x61C8864680B583EB

#ifndef __ASSEMBLY__
/* What the trampolines read (register.c, kmalloc.c, trampoline.c, index.c). */
extern unsigned long rslub_direct_map_bytes;
extern const u32 rslub_kmalloc_not_normal, rslub_kmalloc_never;
extern u8 rslub_kmalloc_index[RSLUB_KMALLOC_MAX_CACHE_SIZE / 8];
extern const unsigned long rslub_alloc_charged;
extern u32 rslub_bulk_caches[RSLUB_INDEX_SIZE];

/*
 * The trampolines' questions, where their quick test cannot decide: whether the call
 * goes to rslub's replacement (true) or to the kernel's function. Called with the
 * function's argument registers saved; any context the function may be called in.
 */
bool rslub_d_alloc(struct kmem_cache *s, gfp_t gfp);

/*
 * The trampolines, entered as the function each stands for: called directly (the suites
 * do), each does what that function does.
 */
void rslub_direct_kfree(const void *x);
void rslub_direct_free(struct kmem_cache *s, void *x);
size_t rslub_direct_ksize(const void *x);
void *rslub_direct_krealloc(const void *p, DECL_TOKEN_PARAMS(new_size, token),
			    unsigned long align, gfp_t flags, int nid);
void rslub_direct_kvfree(const void *x);
void rslub_direct_kvfree_rcu(struct kvfree_rcu_head *head, void *ptr);
void rslub_direct_kfree_rcu_nolock(struct kvfree_rcu_head *head, void *ptr);
void rslub_direct_usercopy(const void *ptr, unsigned long n, bool to_user);
void *rslub_direct_alloc(struct kmem_cache *s, gfp_t gfp);
void *rslub_direct_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
void *rslub_direct_alloc_lru(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp);
bool rslub_direct_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
void rslub_direct_free_bulk(struct kmem_cache *s, size_t size, void **p);
void *rslub_direct_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags);
void *rslub_direct_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node);
void *rslub_direct_kmalloc_track_caller(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags,
					int node, unsigned long caller);
void *rslub_direct_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size);
void *rslub_direct_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node,
				      size_t size);
void *rslub_direct_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align,
			    gfp_t flags, int node);
void *rslub_direct_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token), unsigned long align,
			     gfp_t flags, int nid);

/* The thunks: the kernel's functions past their call sites. */
void *rslub_k_kmem_cache_alloc_noprof(struct kmem_cache *s, gfp_t gfp);
void *rslub_k_kmem_cache_alloc_lru_noprof(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp);
void *rslub_k_kmem_cache_alloc_node_noprof(struct kmem_cache *s, gfp_t gfp, int node);
bool rslub_k_kmem_cache_alloc_bulk_noprof(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
void rslub_k_kmem_cache_free_bulk(struct kmem_cache *s, size_t size, void **p);
void *rslub_k___kmalloc_node_track_caller_noprof(DECL_KMALLOC_PARAMS(size, b, token),
						 gfp_t flags, int node, unsigned long caller);
void *rslub_k___kmalloc_cache_node_noprof(struct kmem_cache *s, gfp_t flags, int node,
					  size_t size);
void *rslub_k___kvmalloc_node_noprof(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align,
				     gfp_t flags, int node);
void *rslub_k_kvrealloc_node_align_noprof(const void *p, DECL_TOKEN_PARAMS(size, token),
					  unsigned long align, gfp_t flags, int nid);

/*
 * The replacements a trampoline jumps to (replace.c, rcu.c, usercopy.c, trampoline.c,
 * kmalloc.c; rust/back/fast.rs). The kmalloc family's (rslub_dr_*) take the class after
 * the function's arguments: NULL where they are to decide. The kmem_cache allocations'
 * take there the slot the trampoline found backing the cache: the fast paths
 * (rslub_backed_alloc_fast*) serve from it at once (direct.S says why it stays valid),
 * the bulk allocation checks it again (it may sleep).
 */
struct rslub_backing;
void *rslub_backed_alloc_fast(struct kmem_cache *s, gfp_t gfp, struct rslub_backing *slot);
void *rslub_backed_alloc_fast_lru(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp,
				  struct rslub_backing *slot);
void *rslub_backed_alloc_fast_node(struct kmem_cache *s, gfp_t gfp, int node,
				   struct rslub_backing *slot);
bool rslub_dr_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p,
			 struct rslub_backing *hint);
void rslub_r_kfree(const void *x);
void rslub_free_owned_on(void *obj, const struct page *head);
void rslub_r_free(struct kmem_cache *s, void *x);
void *rslub_r_alloc(struct kmem_cache *s, gfp_t gfp);
void *rslub_r_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
void *rslub_r_alloc_lru(struct kmem_cache *s, struct list_lru *lru, gfp_t gfp);
bool rslub_r_alloc_bulk(struct kmem_cache *s, gfp_t gfp, size_t size, void **p);
void rslub_r_free_bulk(struct kmem_cache *s, size_t size, void **p);
size_t rslub_r_ksize(const void *x);
void *rslub_r_krealloc(const void *p, DECL_TOKEN_PARAMS(new_size, token), unsigned long align,
		       gfp_t flags, int nid);
void rslub_r_kvfree_call_rcu(struct kvfree_rcu_head *head, void *ptr);
void rslub_r_kfree_call_rcu_nolock(struct kvfree_rcu_head *head, void *ptr);
void rslub_r_check_object_size(const void *ptr, unsigned long n, bool to_user);
void *rslub_dr_kmalloc(DECL_TOKEN_PARAMS(size, token), gfp_t flags, void *rc);
void *rslub_dr_kmalloc_node(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node,
			    void *rc);
void *rslub_dr_kmalloc_track_caller(DECL_KMALLOC_PARAMS(size, b, token), gfp_t flags, int node,
				    unsigned long caller, void *rc);
void *rslub_dr_kmalloc_cache(struct kmem_cache *s, gfp_t flags, size_t size, void *rc);
void *rslub_dr_kmalloc_cache_node(struct kmem_cache *s, gfp_t flags, int node, size_t size,
				  void *rc);
void *rslub_dr_kvmalloc(DECL_KMALLOC_PARAMS(size, b, token), unsigned long align, gfp_t flags,
			int node, void *rc);
void *rslub_dr_kvrealloc(const void *p, DECL_TOKEN_PARAMS(size, token), unsigned long align,
			 gfp_t flags, int nid, void *rc);
#endif

#endif
