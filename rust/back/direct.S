/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The direct-call trampolines of the hottest hooked functions: kfree, kmem_cache_free,
 * kmem_cache_alloc_noprof and kmem_cache_alloc_node_noprof (the skbs' allocations)
 * (Documentation/backing.rst, "Direct calls").
 *
 * ftrace patches each function's call site (its first instruction, after the ENDBR on an
 * IBT kernel) into a jmp to its trampoline here (jmp mode, ftrace_jmp_set()). A
 * trampoline therefore starts as the function itself would: the arguments in their
 * registers, the caller's return address on top of the stack. It decides with a few
 * loads and compares, clobbering only what a call may (%rax, %r10, the flags), and ends
 * in a direct jmp, either back into the function just after its call site
 * (RSLUB_SITE_END), or to rslub's replacement, which returns to the caller. It has no
 * frame and no RET and makes no indirect branch: retpolines, return thunks and
 * call-depth tracking have nothing to do here, and the jump back needs no ENDBR. No
 * indirect branch ever targets a trampoline either (where a tracer shares the call site,
 * ftrace's caller RETs into it), hence ANNOTATE_NOENDBR.
 *
 * Where the quick test cannot decide, the trampoline asks C (rslub_d_*(), hook.c) with
 * the function's argument registers saved around the call. The quick tests:
 *  - kfree, kmem_cache_free: an object on a slab page whose cache is one of rslub's
 *    shadows (rust/slab_page.c) is rslub's; any other, on the kernel's slabs, on a large
 *    kmalloc's pages or outside the direct map (NULL and ZERO_SIZE_PTR included), is the
 *    kernel's. They always decide.
 *  - kmem_cache_alloc_noprof, kmem_cache_alloc_node_noprof: a cache whose entry in the
 *    index of backed caches is empty is not backed. The entry is a hint; only the lookup with preemption off, in C, is
 *    authoritative. The trampoline reads it with preemption on, so a task preempted
 *    between loading rslub_index and its entry may read a buffer that unbackings have
 *    rebuilt since, for as long as it was preempted, about any cache. It only compares
 *    the entry with 0 (the buffers are static): a non-empty one makes it ask; an empty
 *    one sends the call to the kernel, which is correct for any cache (backing is a
 *    choice, and the object goes back by its page when it is freed): such a task may
 *    get a kernel object from a backed cache, once. While names are watched or whole-
 *    kernel mode sights caches, every allocation asks.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/page_types.h>

#include "direct.h"
#include "../slab_page.h"

#ifdef RSLUB_DIRECT

/*
 * The struct page of the direct-map address in \reg, in %rax, as virt_to_page(); an
 * address below the direct map or from vmalloc_base up jumps to \kernel (the kernel's
 * function): rslub's objects are never there. Clobbers %rax and the flags.
 */
.macro RSLUB_PAGE_OF reg:req, kernel:req
	movq	\reg, %rax
	subq	page_offset_base(%rip), %rax
	jb	\kernel				/* below the direct map */
	cmpq	vmalloc_base(%rip), \reg
	jae	\kernel				/* vmalloc and above: vmemmap, the kernel image, ... */
	shrq	$PAGE_SHIFT, %rax
	shlq	$RSLUB_PAGE_SIZE_SHIFT, %rax
	addq	vmemmap_base(%rip), %rax
.endm

/*
 * Jumps to \kernel unless the page in %rax is a slab page of rslub's: as page_slab(), the
 * head page's type, then, as rslub_shadow_owner() (rust/slab_page.h), its slab_cache
 * within the arena of shadows, which is never followed. Clobbers %rax, %r10 and the flags.
 */
.macro RSLUB_OWN_SLAB kernel:req
	movq	RSLUB_PAGE_COMPOUND_INFO(%rax), %r10
	testb	$1, %r10b
	jz	.Lhead\@
#ifdef CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP
	andq	%r10, %rax			/* a tail's info masks its address to its head's */
#else
	leaq	-1(%r10), %rax			/* a tail's info is its head's address, tagged */
#endif
.Lhead\@:
	cmpb	$RSLUB_PGTY_SLAB, RSLUB_PAGE_TYPE_TOP(%rax)
	jne	\kernel
	movq	RSLUB_SLAB_CACHE(%rax), %rax
	subq	$rslub_shadows, %rax
	cmpq	$RSLUB_SHADOWS_BYTES, %rax
	jae	\kernel
.endm

	.text

/* Entered as kfree(x). */
SYM_FUNC_START(rslub_direct_kfree)
	ANNOTATE_NOENDBR
	RSLUB_PAGE_OF %rdi, kfree + RSLUB_SITE_END
	RSLUB_OWN_SLAB kfree + RSLUB_SITE_END
	jmp	rslub_r_kfree
SYM_FUNC_END(rslub_direct_kfree)

/* Entered as kmem_cache_free(s, x). */
SYM_FUNC_START(rslub_direct_free)
	ANNOTATE_NOENDBR
	RSLUB_PAGE_OF %rsi, kmem_cache_free + RSLUB_SITE_END
	RSLUB_OWN_SLAB kmem_cache_free + RSLUB_SITE_END
	jmp	rslub_r_free
SYM_FUNC_END(rslub_direct_free)

/*
 * \name, entered as \fn(s, gfp[, node]): kmem_cache_alloc_noprof and
 * kmem_cache_alloc_node_noprof, which take the cache and the flags first. The third
 * argument register is saved around the question whether the function takes it or not.
 */
.macro RSLUB_ALLOC_TRAMPOLINE name:req, fn:req, repl:req
SYM_FUNC_START(\name)
	ANNOTATE_NOENDBR
	cmpl	$0, rslub_nwatched(%rip)
	jne	.Lask\@
	cmpb	$0, rslub_all(%rip)
	jne	.Lask\@
	movabsq	$RSLUB_GOLDEN_RATIO_64, %rax	/* hash_ptr(s, RSLUB_INDEX_BITS) */
	imulq	%rdi, %rax
	shrq	$(64 - RSLUB_INDEX_BITS), %rax
	movq	rslub_index(%rip), %r10
	cmpq	$0, (%r10, %rax, 8)
	je	\fn + RSLUB_SITE_END
.Lask\@:
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	call	rslub_d_alloc
	popq	%rdx
	popq	%rsi
	popq	%rdi
	testb	%al, %al
	jz	\fn + RSLUB_SITE_END
	jmp	\repl
SYM_FUNC_END(\name)
.endm

RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc, kmem_cache_alloc_noprof, rslub_r_alloc
RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc_node, kmem_cache_alloc_node_noprof, rslub_r_alloc_node

#endif /* RSLUB_DIRECT */
