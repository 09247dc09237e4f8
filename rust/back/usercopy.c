// SPDX-License-Identifier: GPL-2.0
/*
 * Hardened usercopy of rslub's objects: the replacement of __check_object_size(), which
 * the handler and the usercopy trampoline send a copy to where its kernel address is on
 * an rslub slab. No lock: the object and window check is rslub_usercopy_bad()
 * (rust/back/mod.rs).
 */
#include "hook.h"

#ifdef RSLUB_INJECT
/* Test-only: called instead of BUG() after a usercopy report, when set. */
void (*rslub_test_usercopy_caught)(void);
#endif

#ifdef CONFIG_HARDENED_USERCOPY
/*
 * Hardened usercopy. check_heap_object() (mm/usercopy.c) checks a copy to or from user
 * space against the object and usercopy window of a slab page's cache, and the bounds of
 * a compound page. It could not check rslub's slabs while they were plain pages; with
 * the slab page view it checks them against the shadow's window (rust/slab_page.c), and
 * does whenever these hooks are not registered. While they are, every
 * __check_object_size() (copy_to_user() and its kin with a size the compiler does not
 * know) of an address on an rslub slab comes here: the copy must stay inside the object
 * and the cache's usercopy window (a backed cache's is the kernel cache's useroffset and
 * usersize, so a cache made without a window allows no copy, as in SLUB), and is
 * reported as the kernel's usercopy_abort() does (which is not exported), with a BUG.
 * Such an address is neither stack nor kernel text: the rest of the kernel's checks
 * have nothing to say about it but a wrapped range.
 */
static void rslub_usercopy_abort(const char *name, const char *detail, bool to_user,
				 unsigned long offset, unsigned long len)
{
	pr_emerg("Kernel memory %s attempt detected %s %s%s%s%s (offset %lu, size %lu)!\n",
		 to_user ? "exposure" : "overwrite", to_user ? "from" : "to", name,
		 detail ? " '" : "", detail ?: "", detail ? "'" : "", offset, len);
#ifdef RSLUB_INJECT
	if (READ_ONCE(rslub_test_usercopy_caught)) {
		READ_ONCE(rslub_test_usercopy_caught)();
		return;
	}
#endif
	BUG();
}

notrace void rslub_r_check_object_size(const void *ptr, unsigned long n, bool to_user)
{
	unsigned long offset;
	const char *name;

	if (!n)
		return;
	if ((unsigned long)ptr + n < (unsigned long)ptr)
		return rslub_usercopy_abort("wrapped address", NULL, to_user, 0,
					    (unsigned long)ptr + n);
	if (rslub_usercopy_bad(ptr, n, &offset, &name))
		rslub_usercopy_abort("SLUB object", name, to_user, offset, n);
}
#endif /* CONFIG_HARDENED_USERCOPY */
