// SPDX-License-Identifier: GPL-2.0
/*
 * rslub_view_whole: what the rest of the kernel does with the pages of kmalloc objects,
 * run in the whole-kernel boot of make test (scripts/test/guest.sh, check
 * kernel_paths_keep_slab_pages), where rslub serves every kmalloc() (rslub.back=all), so
 * that the objects below are rslub's, made and freed by the kernel's own code. It needs
 * nothing of rslub, and passes on the kernel's allocator too.
 *
 * At load, @cycles times each:
 *  - request_region() and release_region() of a free I/O port range: kernel/resource.c
 *    kzalloc()s a struct resource and kfree()s it only if it is on a slab page
 *    (free_resource()); the guest check compares the live objects of rslub's kmalloc
 *    classes before and after (a leak is one object a cycle);
 *  - a kmalloc(512) object and a kmalloc(3000) one (of kmalloc-4k, whose slabs are
 *    compound: most of its objects lie on tail pages), their pages taken and put as a
 *    bvec iterator's user does (iov_iter_get_pages2(), put_page()): each page's folio
 *    keeps the count it had (0 for a slab page), and the object its contents. An object
 *    KFENCE sampled (the kernel's allocator under debug.config) is given back and
 *    another taken: KFENCE's pages are referenced slab pages of their own.
 * The load fails with -EINVAL, the first difference in the log, if anything is off.
 */
#include <linux/bvec.h>
#include <linux/ioport.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uio.h>

static unsigned int cycles = 10000;
module_param(cycles, uint, 0);
MODULE_PARM_DESC(cycles, "cycles of each kind (1..1000000)");

/* A range of I/O ports the guest does not use (QEMU's q35 leaves 0x7000 up free). */
#define VIEW_PORTS 0x7f00
#define VIEW_NPORTS 16

static int view_resources(void)
{
	unsigned int i;

	for (i = 0; i < cycles; i++) {
		if (!request_region(VIEW_PORTS, VIEW_NPORTS, "rslub_view_whole")) {
			pr_err("rslub_view_whole: request_region(%#x) failed at cycle %u\n",
			       VIEW_PORTS, i);
			return -EINVAL;
		}
		release_region(VIEW_PORTS, VIEW_NPORTS);
		cond_resched();
	}
	return 0;
}

static int view_bvec(size_t size, size_t len)
{
	struct page *pages[4];
	int before[4], during[4];
	struct bio_vec bv;
	struct iov_iter it;
	unsigned char *p;
	size_t off, start, i;
	ssize_t got;
	int k, n, r = 0;

	p = kmalloc(size, GFP_KERNEL);
	while (p && is_kfence_address(p)) {
		unsigned char *q = kmalloc(size, GFP_KERNEL);

		kfree(p);
		p = q;
	}
	if (!p)
		return -ENOMEM;
	/*
	 * @len bytes of the object, across its page boundary if it has one: from len / 2
	 * before the boundary, kept inside the object.
	 */
	off = 0;
	if (offset_in_page(p) + size > PAGE_SIZE) {
		size_t cross = PAGE_SIZE - offset_in_page(p);

		off = min(cross > len / 2 ? cross - len / 2 : 0, size - len);
	}
	memset(p, 0x5a, size);
	for (k = 0; k < ARRAY_SIZE(before); k++)
		before[k] = -1;
	bvec_set_virt(&bv, p + off, len);
	iov_iter_bvec(&it, ITER_SOURCE, &bv, 1, len);
	n = DIV_ROUND_UP(offset_in_page(p + off) + len, PAGE_SIZE);
	for (k = 0; k < n; k++)
		before[k] = folio_ref_count(page_folio(virt_to_page(p + off) + k));
	got = iov_iter_get_pages2(&it, pages, len, ARRAY_SIZE(pages), &start);
	if (got <= 0) {
		kfree(p);
		pr_err("rslub_view_whole: iov_iter_get_pages2() gave %zd\n", got);
		return -EINVAL;
	}
	n = DIV_ROUND_UP(start + got, PAGE_SIZE);
	for (k = 0; k < n; k++)
		during[k] = folio_ref_count(page_folio(pages[k]));
	for (k = 0; k < n; k++)
		put_page(pages[k]);
	for (k = 0; k < n; k++) {
		int after = folio_ref_count(page_folio(pages[k]));

		/*
		 * A slab page takes no reference: its count stays what it was, 0 for a
		 * compound slab (frozen); an order-0 slab keeps the 1 it was allocated
		 * with (rslub's, as 6.12's; a fallback-order slab can be one).
		 */
		if (during[k] != before[k] || after != before[k] ||
		    (folio_test_slab(page_folio(pages[k])) &&
		     folio_order(page_folio(pages[k])) > 0 && before[k] != 0)) {
			pr_err("rslub_view_whole: kmalloc(%zu) page %d: count %d, %d while held, %d after (slab page: %d)\n",
			       size, k, before[k], during[k], after,
			       folio_test_slab(page_folio(pages[k])));
			r = -EINVAL;
		}
	}
	for (i = 0; i < size; i++)
		if (p[i] != 0x5a) {
			pr_err("rslub_view_whole: kmalloc(%zu) byte %zu changed\n", size, i);
			r = -EINVAL;
			break;
		}
	kfree(p);
	return r;
}

static int __init view_init(void)
{
	unsigned int i;
	int r;

	if (!cycles || cycles > 1000000) {
		pr_err("rslub_view_whole: cycles=%u: must be 1..1000000\n", cycles);
		return -EINVAL;
	}
	r = view_resources();
	for (i = 0; !r && i < cycles; i++) {
		r = view_bvec(512, 512) ?: view_bvec(3000, 2000);
		cond_resched();
	}
	if (r)
		return r == -ENOMEM ? r : -EINVAL;
	pr_info("rslub_view_whole: done cycles=%u\n", cycles);
	return 0;
}

static void __exit view_exit(void)
{
}

module_init(view_init);
module_exit(view_exit);
MODULE_DESCRIPTION("rslub: kernel paths over the pages of kmalloc objects (make test)");
MODULE_LICENSE("GPL");
