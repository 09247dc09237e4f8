/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the direct-call trampolines (rust/back/direct.S) and rust/back/hook.c share: the
 * layout constants the trampolines test with, each checked against the kernel's own
 * definition in hook.c (static_assert), and the C functions they ask or jump to.
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

/* The index of backed caches (hook.c): its size's log2. */
#define RSLUB_INDEX_BITS 10
/* hash_ptr() (include/linux/hash.h, 64-bit): the multiplier of the index's keys. */
#define RSLUB_GOLDEN_RATIO_64 0x61C8864680B583EB

#ifndef __ASSEMBLY__
/*
 * The trampolines' questions, where their quick test cannot decide: whether the call
 * goes to rslub's replacement (true) or to the kernel's function. Called with the
 * function's argument registers saved; any context the function may be called in.
 */
bool rslub_d_alloc(struct kmem_cache *s, gfp_t gfp);

/*
 * The trampolines, entered as kfree, kmem_cache_free, kmem_cache_alloc_noprof and
 * kmem_cache_alloc_node_noprof: called
 * directly (the suites do), each does what the function it stands for does.
 */
void rslub_direct_kfree(const void *x);
void rslub_direct_free(struct kmem_cache *s, void *x);
void *rslub_direct_alloc(struct kmem_cache *s, gfp_t gfp);
void *rslub_direct_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);

/* The replacements a trampoline jumps to (hook.c), and what the trampolines read there. */
void rslub_r_kfree(const void *x);
void rslub_r_free(struct kmem_cache *s, void *x);
void *rslub_r_alloc(struct kmem_cache *s, gfp_t gfp);
void *rslub_r_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
#endif

#endif
