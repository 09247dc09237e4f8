// SPDX-License-Identifier: GPL-2.0
/*
 * Thin C wrappers for kernel inline functions and macros that Rust cannot call.
 * Each one is a single call; the Rust side (rust/shim.rs) documents its contract.
 * None of them is on a fast path.
 */
#include <linux/cache.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/gfp.h>
#include <linux/irqflags.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/workqueue.h>
#include <linux/topology.h>

#include "shim.h"

unsigned int rslub_num_present_cpus(void)
{
	return num_present_cpus();
}

unsigned int rslub_num_online_nodes(void)
{
	return num_online_nodes();
}

bool rslub_cpu_possible(int cpu)
{
	return cpu_possible(cpu);
}

bool rslub_node_online(int node)
{
	return node >= 0 && node < nr_node_ids && node_online(node);
}

int rslub_numa_mem_id(void)
{
	return numa_mem_id();
}

unsigned int rslub_cache_line_size(void)
{
	return cache_line_size();
}

bool rslub_debug_pagealloc_enabled(void)
{
	return debug_pagealloc_enabled();
}

void *rslub_page_address(struct page *page)
{
	return page_address(page);
}

int rslub_page_to_nid(const struct page *page)
{
	return page_to_nid(page);
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

void rslub_run_on_each_cpu(long (*fn)(void *), void *arg)
{
	int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, fn, arg);
	cpus_read_unlock();
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
