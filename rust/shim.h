/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Thin C wrappers for kernel inline functions and macros that Rust cannot call.
 * Their only caller is rust/shim.rs, which gives them safe Rust signatures.
 */
#ifndef RSLUB_SHIM_H
#define RSLUB_SHIM_H

#include <linux/types.h>

struct page;

unsigned int rslub_num_present_cpus(void);
unsigned int rslub_num_online_cpus(void);
unsigned int rslub_num_online_nodes(void);
bool rslub_cpu_possible(int cpu);
bool rslub_cpu_online(int cpu);
bool rslub_node_online(int node);
bool rslub_node_has_memory(int node);
int rslub_numa_mem_id(void);
unsigned int rslub_cache_line_size(void);
bool rslub_init_on_alloc(void);
bool rslub_init_on_free(void);
bool rslub_debug_pagealloc_enabled(void);
void *rslub_page_address(struct page *page);
bool rslub_page_freeze(struct page *page);
void rslub_page_unfreeze(struct page *page);
int rslub_page_to_nid(const struct page *page);
bool rslub_page_is_pfmemalloc(const struct page *page);
bool rslub_pfmemalloc_allowed(gfp_t gfp);
unsigned long rslub_irq_save(void);
void rslub_irq_restore(unsigned long flags);
void rslub_kasan_unpoison(const void *addr, size_t size);
void rslub_kasan_poison(const void *addr, size_t size, bool freed);
bool rslub_kasan_poisoned(const void *addr);
void rslub_kmemleak_alloc(const void *addr, size_t size, gfp_t gfp);
void rslub_kmemleak_free(const void *addr);
void rslub_check_no_locks_freed(const void *addr, size_t size);
void rslub_kmemleak_ignore(const void *addr);
void rslub_kmemleak_not_leak(const void *addr);
void rslub_kmemleak_ignore_percpu(const void __percpu *addr);
int rslub_shim_init(unsigned int meta_size, unsigned int meta_align);
void *rslub_meta_alloc(gfp_t gfp, int node);
void rslub_meta_free(void *p);
bool rslub_is_meta_cache(const struct kmem_cache *kc);
void rslub_shim_exit(void);
int rslub_hotplug_init(void);
void rslub_hotplug_exit(void);
void rslub_run_on_each_cpu(void (*fn)(void *), void *arg);
int rslub_zonelist_nodes(int nid, u16 *out, int max);
int rslub_mempolicy_slab_node(void);
void rslub_account_slab(struct page *page, unsigned int order, bool reclaimable, int sign);
bool rslub_cpuset_node_allowed(int nid, unsigned int gfp);
unsigned int rslub_mems_allowed_begin(void);
bool rslub_mems_allowed_retry(unsigned int seq);
u64 rslub_get_cycles(void);
struct page *rslub_alloc_slab_pages(int node, unsigned int gfp, unsigned int order);
int rslub_shrinker_init(const char *name);
void rslub_shrinker_exit(void);
bool rslub_shrinker_registered(void);
void rslub_track_save(unsigned long *addrs, unsigned int n, unsigned int *cpu,
		      unsigned int *pid, unsigned long *when);
void rslub_track_print(const char *what, const unsigned long *addrs, unsigned int n,
		       unsigned int cpu, unsigned int pid, unsigned long when);

#endif /* RSLUB_SHIM_H */
