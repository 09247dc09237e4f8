/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The direct-call trampolines of the hooked functions (Documentation/backing.rst,
 * "Direct calls"): every entry point a workload calls, the kmalloc family among them.
 *
 * ftrace patches each function's call site (its first instruction, after the ENDBR on an
 * IBT kernel) into a jmp to its trampoline here (jmp mode, ftrace_jmp_set()). A
 * trampoline therefore starts as the function itself would: the arguments in their
 * registers, the caller's return address on top of the stack. It decides with a few
 * loads and compares, clobbering only what a call may (%rax, %r10, %r11, the flags, and
 * argument registers the function does not take), and ends in a direct jmp, either back
 * into the function just after its call site (RSLUB_SITE_END), or to rslub's replacement,
 * which returns to the caller. It has no frame and no RET and makes no indirect branch:
 * retpolines, return thunks and call-depth tracking have nothing to do here, and the jump
 * back needs no ENDBR. No indirect branch ever targets a trampoline either (where a
 * tracer shares the call site, ftrace's caller RETs into it), hence ANNOTATE_NOENDBR.
 *
 * A replacement that finds a call the kernel's after all (a class refused, a cache
 * unbacked meanwhile) calls the function past its call site too, through its *thunk*
 * here (rslub_k_*), so that it never enters the trampoline again.
 *
 * The quick tests, and what each costs a call the kernel serves (the budget is a dozen
 * instructions, the benchmark's hook table counts them):
 *  - An object's owner (kfree, kvfree, kmem_cache_free, ksize, krealloc, kvrealloc,
 *    kvfree_call_rcu, kfree_call_rcu_nolock, __check_object_size): RSLUB_PAGE_OF, then
 *    RSLUB_OWN_SLAB. An object of the kernel's slabs is decided by the word at offset 8 of
 *    its page, read once: on a slab's head page that is slab_cache, which for the
 *    kernel's caches is a direct-map address, below vmemmap_base, where no rslub shadow
 *    (module data), no tail page's compound_info (a vmemmap address, or a mask, tagged)
 *    ever is: 10 instructions; on a tail page, the same test of its head's word: 16. A
 *    page whose word is at or above vmemmap_base for another reason takes the full test
 *    (page_slab()'s type, the arena of shadows), which rslub's own objects always take.
 *    Anything outside the direct map (NULL, ZERO_SIZE_PTR, vmalloc) is the kernel's
 *    after 4.
 *  - kmem_cache_free_bulk: a cache none of whose objects is rslub's (a count by its
 *    hash, index.c's rslub_bulk_caches[]) at once: 7; kfree_bulk() (no cache) and the
 *    others, each object's page in turn (below).
 *  - kmem_cache_alloc{,_node,_lru}_noprof, kmem_cache_alloc_bulk_noprof: a cache whose
 *    first place in the index of backed caches is empty is not backed (below): 11. Its
 *    own slot there goes to the rslub cache's fast path (13); each other cache's slot
 *    before the cache's own or an empty entry costs 9 more. While names are watched or
 *    whole-kernel mode sights caches, an empty entry asks C.
 *  - The kmalloc family (registered in whole-kernel mode only): flags rslub never serves
 *    (DMA, and __GFP_ACCOUNT under CONFIG_MEMCG) and sizes it never serves (0, above
 *    KMALLOC_MAX_CACHE_SIZE) are the kernel's; an ordinary request's class is read from
 *    the table of kmalloc_caches[KMALLOC_NORMAL] and handed to the replacement in the
 *    register after the function's last argument (the replacement does not look it up
 *    again); reclaimable requests, kmem_buckets and the constant-size entry points given
 *    another cache than kmalloc's own ask the replacement to decide (rc NULL).
 *
 * The allocation trampolines read the index with preemption on. An unbacking publishes
 * its rebuilt index, then waits for RCU Tasks (below), so the buffer it leaves, the next
 * one's spare, is rewritten only once no task that loaded it is still here; a probe does
 * not rely on that alone. Every entry of every buffer is NULL or a slot (the buffers and
 * the slots are static, written a word at a time), a chain is probed at most once round,
 * and a slot is handed on only if its kc is the cache asked for when it is read:
 * then it backs that cache, and its rc stays live until the task next sleeps of its own
 * accord, which the trampoline and the fast path it jumps to never do (rslub_hook_unback()
 * clears kc, then waits for RCU Tasks before it takes rc). An empty entry sends the call
 * to the kernel, which is correct for any cache (backing is a choice, and the object goes
 * back by its page when it is freed): such a task may get a kernel object from a backed
 * cache, once. The kmalloc class table is only ever filled before the kmalloc trampolines
 * are registered and emptied after they are removed.
 */
#include <linux/linkage.h>
#include <linux/objtool.h>
#include <asm/asm.h>
#include <asm/page_types.h>

#include "direct.h"
#include "../slab_page.h"

#ifdef RSLUB_DIRECT

/*
 * The struct page of the direct-map address in \reg, in %rax, as virt_to_page(); an
 * address outside the direct map (NULL and ZERO_SIZE_PTR included) jumps to \kernel:
 * rslub's objects are never there. Clobbers %rax and the flags.
 */
.macro RSLUB_PAGE_OF reg:req, kernel:req
	movq	\reg, %rax
	subq	page_offset_base(%rip), %rax
	cmpq	rslub_direct_map_bytes(%rip), %rax
	jae	\kernel
	shrq	$PAGE_SHIFT, %rax
	shlq	$RSLUB_PAGE_SIZE_SHIFT, %rax
	addq	vmemmap_base(%rip), %rax
.endm

/* The head page of the tail page in %rax, whose compound_info is in %r10, in %rax. */
.macro RSLUB_HEAD_OF_TAIL
#ifdef CONFIG_HUGETLB_PAGE_OPTIMIZE_VMEMMAP
	andq	%r10, %rax			/* a tail's info masks its address to its head's */
#else
	leaq	-1(%r10), %rax			/* a tail's info is its head's address, tagged */
#endif
.endm

/*
 * Jumps to \kernel unless the page in %rax is a slab page of rslub's: as page_slab(), the
 * head page's type, then, as rslub_shadow_owner() (rust/slab_page.h), its slab_cache
 * within the arena of shadows, which is never followed. The word at offset 8 decides most
 * of the kernel's objects at once (see the top). Leaves the head page in %rax. Clobbers
 * %r10 and the flags.
 *
 * An address of the direct map's region with no memory behind it has no memmap either:
 * reading its struct page faults, and the fault goes to \hole (a label of the calling
 * trampoline, which objtool wants inside it, that jumps to the kernel's function). Only
 * hardened usercopy is asked about such an address (the kernel's check gives up on what
 * is not virt_addr_valid()); the exception table costs the other calls nothing.
 */
.macro RSLUB_OWN_SLAB kernel:req, hole:req
.Lload\@:
	movq	RSLUB_SLAB_CACHE(%rax), %r10	/* slab_cache, or a tail's compound_info */
	_ASM_EXTABLE(.Lload\@, \hole)
	cmpq	vmemmap_base(%rip), %r10
	jb	\kernel				/* a kernel cache's struct, or no slab */
	testb	$1, %r10b
	jz	.Lhead\@
	RSLUB_HEAD_OF_TAIL
	movq	RSLUB_SLAB_CACHE(%rax), %r10	/* the head's slab_cache: as above */
	cmpq	vmemmap_base(%rip), %r10
	jb	\kernel
.Lhead\@:
	cmpb	$RSLUB_PGTY_SLAB, RSLUB_PAGE_TYPE_TOP(%rax)
	jne	\kernel
	subq	$rslub_shadows, %r10
	cmpq	$RSLUB_SHADOWS_BYTES, %r10
	jae	\kernel
.endm

/* \fn past its call site, as a function C can call (see the top). */
.macro RSLUB_THUNK fn:req
SYM_FUNC_START(rslub_k_\fn)
	ANNOTATE_NOENDBR
	jmp	\fn + RSLUB_SITE_END
SYM_FUNC_END(rslub_k_\fn)
.endm

	.text

/*
 * \name, entered as \fn with the object in \reg: an rslub object goes to \repl, any other
 * to \kernel_page (one outside the direct map) or \kernel_slab (one on a page of the
 * direct map), both \fn past its call site unless told otherwise. With \head, \repl is
 * rslub_free_owned_on(object, head page) (rust/back/mod.rs), given the head page found.
 */
.macro RSLUB_OBJECT_TRAMPOLINE name:req, fn:req, reg:req, repl:req, kernel_page, kernel_slab, head
SYM_FUNC_START(\name)
	ANNOTATE_NOENDBR
.ifb \kernel_page
	RSLUB_PAGE_OF \reg, \fn + RSLUB_SITE_END
.else
	RSLUB_PAGE_OF \reg, \kernel_page
.endif
.ifb \kernel_slab
	RSLUB_OWN_SLAB \fn + RSLUB_SITE_END, .Lhole\@
.else
	RSLUB_OWN_SLAB \kernel_slab, .Lhole\@
.endif
.ifnb \head
.ifnc \reg, %rdi
	movq	\reg, %rdi
.endif
	movq	%rax, %rsi
.endif
	jmp	\repl
.Lhole\@:
.ifb \kernel_slab
	jmp	\fn + RSLUB_SITE_END
.else
	jmp	\kernel_slab
.endif
SYM_FUNC_END(\name)
.endm

/*
 * kfree(x), kmem_cache_free(s, x) (freed by the object's own cache; s is not compared with
 * it, which mm/slub.c does under CONFIG_SLAB_FREELIST_HARDENED and the debug options:
 * Documentation/backing.rst), ksize(x), krealloc_node_align_noprof(p, ...).
 */
RSLUB_OBJECT_TRAMPOLINE rslub_direct_kfree, kfree, %rdi, rslub_free_owned_on, , , head
RSLUB_OBJECT_TRAMPOLINE rslub_direct_free, kmem_cache_free, %rsi, rslub_free_owned_on, , , head
RSLUB_OBJECT_TRAMPOLINE rslub_direct_ksize, ksize, %rdi, rslub_r_ksize
RSLUB_OBJECT_TRAMPOLINE rslub_direct_krealloc, krealloc_node_align_noprof, %rdi, rslub_r_krealloc
/*
 * kvfree(x): a direct-map address that is not rslub's is what kvfree() passes to kfree(),
 * so it goes to kfree past its call site, where kvfree() would have called it; NULL and
 * vmalloc addresses to kvfree itself.
 */
RSLUB_OBJECT_TRAMPOLINE rslub_direct_kvfree, kvfree, %rdi, rslub_free_owned_on, , \
	kfree + RSLUB_SITE_END, head
/* kvfree_call_rcu(head, ptr), kfree_call_rcu_nolock(head, ptr): ptr may be vmalloc's. */
RSLUB_OBJECT_TRAMPOLINE rslub_direct_kvfree_rcu, kvfree_call_rcu, %rsi, rslub_r_kvfree_call_rcu
RSLUB_OBJECT_TRAMPOLINE rslub_direct_kfree_rcu_nolock, kfree_call_rcu_nolock, %rsi, \
	rslub_r_kfree_call_rcu_nolock
#ifdef CONFIG_HARDENED_USERCOPY
/* __check_object_size(ptr, n, to_user): any kernel address. */
RSLUB_OBJECT_TRAMPOLINE rslub_direct_usercopy, __check_object_size, %rdi, rslub_r_check_object_size
#endif

/*
 * \name, entered as \fn(s, ...) with the flags in \gfp: kmem_cache_alloc_noprof,
 * kmem_cache_alloc_node_noprof, kmem_cache_alloc_lru_noprof and
 * kmem_cache_alloc_bulk_noprof. The index is probed as rslub_lookup() probes it, from
 * s's hash to s's slot or the first empty entry. s's slot, for flags that are not
 * charged (memcg), goes to \direct in \slot (the register after the function's last
 * argument), which serves from its rc without another lookup (the fast paths,
 * rust/back/fast.rs, held by RCU Tasks: see the top; the bulk allocation, which may
 * sleep, holds it by its counts: trampoline.c, rslub_dr_alloc_bulk()); charged flags go to the
 * kernel's function. A NULL s (the kernel's function oopses on it) goes there too: it
 * would match a slot being freed. An empty entry is the kernel's unless names are
 * watched or caches sighted; these and a chain that does not end (a buffer rebuilt under
 * a preempted task, again and again) ask C first, and go to \repl, which looks the
 * cache up, or to the kernel's function past its call site (its caller's return address
 * on the stack, as for every call the kernel serves). The question saves the function's
 * \nargs argument registers (4 at most) around it, and passes it the cache and the
 * flags. Clobbers %r11 too.
 */
.macro RSLUB_ALLOC_TRAMPOLINE name:req, fn:req, repl:req, direct:req, gfp:req, nargs:req, slot:req
SYM_FUNC_START(\name)
	ANNOTATE_NOENDBR
	movabsq	$RSLUB_GOLDEN_RATIO_64, %rax	/* hash_ptr(s, RSLUB_INDEX_BITS) */
	imulq	%rdi, %rax
	shrq	$(64 - RSLUB_INDEX_BITS), %rax
	movq	rslub_index(%rip), %r10
	movq	(%r10, %rax, 8), \slot		/* each entry read once: see the top */
	testq	\slot, \slot
	jz	.Lempty\@
	cmpq	%rdi, (\slot)			/* its kc: s's own slot, when read */
	je	.Lmine\@
	movl	$RSLUB_INDEX_SIZE, %r11d	/* the probe chain, at most once round */
.Lprobe\@:
	incl	%eax
	andl	$(RSLUB_INDEX_SIZE - 1), %eax
	movq	(%r10, %rax, 8), \slot
	testq	\slot, \slot
	jz	.Lempty\@
	cmpq	%rdi, (\slot)
	je	.Lmine\@
	decl	%r11d
	jnz	.Lprobe\@
	jmp	.Lask\@
.Lmine\@:
	testq	%rdi, %rdi			/* matched a free slot's kc */
	jz	\fn + RSLUB_SITE_END
	testq	\gfp, rslub_alloc_charged(%rip)
	jz	\direct
	jmp	\fn + RSLUB_SITE_END		/* charged: the kernel's (rslub_alloc_backed()) */
.Lempty\@:
	cmpl	$0, rslub_nwatched(%rip)
	jne	.Lask\@
	cmpb	$0, rslub_all(%rip)
	je	\fn + RSLUB_SITE_END
.Lask\@:
	pushq	%rdi
	pushq	%rsi
	pushq	%rdx
	pushq	%rcx
.if \nargs > 4
	.error "RSLUB_ALLOC_TRAMPOLINE saves four argument registers"
.endif
.ifnc \gfp, %rsi
	movq	\gfp, %rsi
.endif
	call	rslub_d_alloc
	popq	%rcx
	popq	%rdx
	popq	%rsi
	popq	%rdi
	testb	%al, %al
	jz	\fn + RSLUB_SITE_END
	jmp	\repl
SYM_FUNC_END(\name)
.endm

RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc, kmem_cache_alloc_noprof, rslub_r_alloc, \
	rslub_backed_alloc_fast, %rsi, 2, %rdx
RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc_node, kmem_cache_alloc_node_noprof, rslub_r_alloc_node, \
	rslub_backed_alloc_fast_node, %rsi, 3, %rcx
RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc_lru, kmem_cache_alloc_lru_noprof, rslub_r_alloc_lru, \
	rslub_backed_alloc_fast_lru, %rdx, 3, %rcx
RSLUB_ALLOC_TRAMPOLINE rslub_direct_alloc_bulk, kmem_cache_alloc_bulk_noprof, rslub_r_alloc_bulk, \
	rslub_dr_alloc_bulk, %rsi, 4, %r8

/* The kernel's allocations, for trampoline.c's misses where the kernel serves after all. */
RSLUB_THUNK kmem_cache_alloc_noprof
RSLUB_THUNK kmem_cache_alloc_node_noprof
RSLUB_THUNK kmem_cache_alloc_lru_noprof
RSLUB_THUNK kmem_cache_alloc_bulk_noprof

/*
 * kmem_cache_free_bulk(s, size, p) and kfree_bulk(): a cache that holds no object of
 * rslub's (its count in rslub_bulk_caches[] is 0: index.c) goes to the kernel's function
 * after 7 instructions. Otherwise (and for kfree_bulk(), whose s is NULL), the first part
 * of RSLUB_OWN_SLAB's test on each object in turn (13 instructions an object of the
 * kernel's slabs, 5 more on a tail page); an array of the kernel's objects alone goes to
 * the kernel's function, one that may hold an rslub object to rslub_r_free_bulk(), which
 * sorts it into runs (rslub's to rslub's bulk free, the kernel's to the kernel's
 * function). Clobbers %r8, %r9 and %r11 too, argument registers the function does not
 * take.
 */
SYM_FUNC_START(rslub_direct_free_bulk)
	ANNOTATE_NOENDBR
	testq	%rdi, %rdi
	jz	.Lfree_bulk_scan		/* kfree_bulk(): objects of any cache */
	movabsq	$RSLUB_GOLDEN_RATIO_64, %rax	/* hash_ptr(s, RSLUB_INDEX_BITS) */
	imulq	%rdi, %rax
	shrq	$(64 - RSLUB_INDEX_BITS), %rax
	cmpl	$0, rslub_bulk_caches(, %rax, 4)
	je	kmem_cache_free_bulk + RSLUB_SITE_END
.Lfree_bulk_scan:
	leaq	(%rdx, %rsi, 8), %r9		/* the end of the array */
	movq	%rdx, %r11
.Lfree_bulk_next:
	cmpq	%r9, %r11
	jae	kmem_cache_free_bulk + RSLUB_SITE_END
	movq	(%r11), %rax
	addq	$8, %r11
	subq	page_offset_base(%rip), %rax
	cmpq	rslub_direct_map_bytes(%rip), %rax
	jae	.Lfree_bulk_next		/* NULL, or no object of rslub's */
	shrq	$PAGE_SHIFT, %rax
	shlq	$RSLUB_PAGE_SIZE_SHIFT, %rax
	addq	vmemmap_base(%rip), %rax
.Lfree_bulk_load:
	movq	RSLUB_SLAB_CACHE(%rax), %r10
	_ASM_EXTABLE(.Lfree_bulk_load, .Lfree_bulk_hole)
	cmpq	vmemmap_base(%rip), %r10
	jb	.Lfree_bulk_next		/* a slab of the kernel's caches */
	testb	$1, %r10b
	jz	rslub_r_free_bulk		/* maybe rslub's: C sorts the array */
	RSLUB_HEAD_OF_TAIL
	movq	RSLUB_SLAB_CACHE(%rax), %r10
	cmpq	vmemmap_base(%rip), %r10
	jb	.Lfree_bulk_next
	jmp	rslub_r_free_bulk
.Lfree_bulk_hole:				/* no memmap: none of rslub's (RSLUB_OWN_SLAB) */
	jmp	.Lfree_bulk_next
SYM_FUNC_END(rslub_direct_free_bulk)

RSLUB_THUNK kmem_cache_free_bulk
/* kvmalloc()'s fallback to vmalloc, as the kernel's (kmalloc.c), with or without direct calls. */
RSLUB_THUNK __kvmalloc_node_noprof

#ifdef RSLUB_DIRECT_KMALLOC
/*
 * The class of an ordinary kmalloc of the size in \size, in \class, or a jump to \kernel
 * where there is none (a size rslub never serves, or a class not served): the kernel's
 * kmalloc_index() of the size, by a table of its (size - 1) / 8 (rslub_kmalloc_index,
 * kmalloc.c), then the class table's KMALLOC_NORMAL row. \b, where the function takes a
 * kmem_buckets, makes a bucket request ask the replacement. Clobbers %rax and the flags.
 */
.macro RSLUB_KMALLOC_CLASS size:req, class:req, kernel:req, ask:req, b
	leaq	-1(\size), %rax
	cmpq	$RSLUB_KMALLOC_MAX_CACHE_SIZE, %rax
	jae	\kernel
.ifnb \b
	testq	\b, \b
	jnz	\ask
.endif
	shrq	$3, %rax
	movzbl	rslub_kmalloc_index(%rax), %eax
	movq	rslub_kmalloc_rc(, %rax, 8), \class
	testq	\class, \class
	jz	\kernel
.endm

/*
 * Flags rslub never serves go to \kernel; other flags of a kind the class table's
 * KMALLOC_NORMAL row does not hold (reclaimable) to \ask.
 */
.macro RSLUB_KMALLOC_FLAGS gfp:req, kernel:req, ask:req
	testl	\gfp, rslub_kmalloc_not_normal(%rip)
	jz	.Lnormal\@
	testl	\gfp, rslub_kmalloc_never(%rip)
	jnz	\kernel
	jmp	\ask
.Lnormal\@:
.endm

/*
 * The end of \name, a kmalloc trampoline: \repl given the class in \class, or NULL from
 * \ask on.
 */
.macro RSLUB_KMALLOC_END name:req, repl:req, class:req, ask:req
	jmp	\repl
\ask:
	xorq	\class, \class
	jmp	\repl
SYM_FUNC_END(\name)
.endm

/*
 * \name, entered as \fn with the size in \size, the flags in \gfp and, where the function
 * takes one, a kmem_buckets in \b: \repl is given the class in \class (the register after
 * the function's last argument), NULL where it is to decide.
 */
.macro RSLUB_KMALLOC_TRAMPOLINE name:req, fn:req, repl:req, size:req, gfp:req, class:req, b
SYM_FUNC_START(\name)
	ANNOTATE_NOENDBR
	RSLUB_KMALLOC_FLAGS \gfp, \fn + RSLUB_SITE_END, .Lask\@
	RSLUB_KMALLOC_CLASS \size, \class, \fn + RSLUB_SITE_END, .Lask\@, \b
	RSLUB_KMALLOC_END \name, \repl, \class, .Lask\@
.endm

/*
 * \name, entered as \fn(s, flags, ...) with the size in \size: a constant-size kmalloc,
 * whose caller chose s as kmalloc_caches[kmalloc_type()][kmalloc_index(size)]. Where s is
 * that table's KMALLOC_NORMAL cache of the size, its class is the class table's; another
 * cache (a test's) makes the replacement decide.
 */
.macro RSLUB_KMALLOC_CACHE_TRAMPOLINE name:req, fn:req, repl:req, size:req, class:req
SYM_FUNC_START(\name)
	ANNOTATE_NOENDBR
	RSLUB_KMALLOC_FLAGS %esi, \fn + RSLUB_SITE_END, .Lask\@
	leaq	-1(\size), %rax
	cmpq	$RSLUB_KMALLOC_MAX_CACHE_SIZE, %rax
	jae	.Lask\@
	shrq	$3, %rax
	movzbl	rslub_kmalloc_index(%rax), %eax
	cmpq	%rdi, kmalloc_caches(, %rax, 8)
	jne	.Lask\@
	movq	rslub_kmalloc_rc(, %rax, 8), \class
	testq	\class, \class
	jz	\fn + RSLUB_SITE_END
	RSLUB_KMALLOC_END \name, \repl, \class, .Lask\@
.endm

/* Registers by position: the kmalloc entry points' parameter lists vary with kmem_buckets. */
#ifdef CONFIG_SLAB_BUCKETS
#define RSLUB_KMN_B	%rsi	/* __kmalloc_node{,_track_caller}_noprof(size, b, flags, node, ...) */
#define RSLUB_KMN_GFP	%edx
#define RSLUB_KMN_RC	%r8	/* after node */
#define RSLUB_KMNT_RC	%r9	/* after caller */
#define RSLUB_KV_B	%rsi	/* __kvmalloc_node_noprof(size, b, align, flags, node) */
#define RSLUB_KV_GFP	%ecx
#define RSLUB_KV_RC	%r9
#else
#define RSLUB_KMN_B
#define RSLUB_KMN_GFP	%esi
#define RSLUB_KMN_RC	%rcx
#define RSLUB_KMNT_RC	%r8
#define RSLUB_KV_B
#define RSLUB_KV_GFP	%edx
#define RSLUB_KV_RC	%r8
#endif

RSLUB_KMALLOC_TRAMPOLINE rslub_direct_kmalloc, __kmalloc_noprof, rslub_dr_kmalloc, %rdi, %esi, %rdx
RSLUB_KMALLOC_TRAMPOLINE rslub_direct_kmalloc_node, __kmalloc_node_noprof, rslub_dr_kmalloc_node, \
	%rdi, RSLUB_KMN_GFP, RSLUB_KMN_RC, RSLUB_KMN_B
RSLUB_KMALLOC_TRAMPOLINE rslub_direct_kmalloc_track_caller, __kmalloc_node_track_caller_noprof, \
	rslub_dr_kmalloc_track_caller, %rdi, RSLUB_KMN_GFP, RSLUB_KMNT_RC, RSLUB_KMN_B
RSLUB_KMALLOC_TRAMPOLINE rslub_direct_kvmalloc, __kvmalloc_node_noprof, rslub_dr_kvmalloc, \
	%rdi, RSLUB_KV_GFP, RSLUB_KV_RC, RSLUB_KV_B
/* __kmalloc_cache_noprof(s, flags, size), __kmalloc_cache_node_noprof(s, flags, node, size). */
RSLUB_KMALLOC_CACHE_TRAMPOLINE rslub_direct_kmalloc_cache, __kmalloc_cache_noprof, \
	rslub_dr_kmalloc_cache, %rdx, %rcx
RSLUB_KMALLOC_CACHE_TRAMPOLINE rslub_direct_kmalloc_cache_node, __kmalloc_cache_node_noprof, \
	rslub_dr_kmalloc_cache_node, %rcx, %r8

/* The kernel's functions the kmalloc replacements fall back to (kmalloc.c). */
RSLUB_THUNK __kmalloc_node_track_caller_noprof
RSLUB_THUNK __kmalloc_cache_node_noprof

/*
 * kvrealloc_node_align_noprof(p, size, align, flags, nid): an rslub object's goes to the
 * replacement, another object's to the kernel; of NULL it is a kvmalloc() of the size.
 */
SYM_FUNC_START(rslub_direct_kvrealloc)
	ANNOTATE_NOENDBR
	testq	%rdi, %rdi
	jz	.Lkvrealloc_null
	RSLUB_PAGE_OF %rdi, kvrealloc_node_align_noprof + RSLUB_SITE_END
	RSLUB_OWN_SLAB kvrealloc_node_align_noprof + RSLUB_SITE_END, .Lkvrealloc_hole
	xorl	%r9d, %r9d
	jmp	rslub_dr_kvrealloc
.Lkvrealloc_hole:
	jmp	kvrealloc_node_align_noprof + RSLUB_SITE_END
.Lkvrealloc_null:
	RSLUB_KMALLOC_FLAGS %ecx, kvrealloc_node_align_noprof + RSLUB_SITE_END, .Lkvrealloc_ask
	RSLUB_KMALLOC_CLASS %rsi, %r9, kvrealloc_node_align_noprof + RSLUB_SITE_END, .Lkvrealloc_ask
	jmp	rslub_dr_kvrealloc
.Lkvrealloc_ask:
	xorl	%r9d, %r9d
	jmp	rslub_dr_kvrealloc
SYM_FUNC_END(rslub_direct_kvrealloc)
RSLUB_THUNK kvrealloc_node_align_noprof

#endif /* RSLUB_DIRECT_KMALLOC */

#endif /* RSLUB_DIRECT */
