// SPDX-License-Identifier: GPL-2.0
/*
 * The test module links its own copy of rslub's C shim, plus wrappers that only the
 * suites use (declared in tests-kunit/test_shim.rs). One C unit: the wrappers below reach
 * into the statics of the files it includes. rust/back's C side is every file that Kbuild
 * links into rslub.ko (rust/back/hook.h says what each holds), and test.c, the helpers that
 * only the suites use.
 */
#include "../rust/shim.c"
#include "../rust/slab_page.c"
#include "../rust/back/index.c"
#include "../rust/back/sight.c"
#include "../rust/back/watch.c"
#include "../rust/back/kc.c"
#include "../rust/back/replace.c"
#include "../rust/back/rcu.c"
#include "../rust/back/usercopy.c"
#include "../rust/back/kmalloc.c"
#include "../rust/back/handler.c"
#include "../rust/back/trampoline.c"
#include "../rust/back/register.c"
#include "../rust/back/test.c"
#include "../rust/param.c"

#include <kunit/test.h>
#include <kunit/test-bug.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/vmalloc.h>
#include <linux/mount.h>
#include <linux/uaccess.h>
#include <linux/panic.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/mempool.h>
#include <linux/net.h>
#include <linux/kmsg_dump.h>
#include <linux/workqueue.h>
#include <linux/bvec.h>
#include <linux/uio.h>

/* A pinned timer that calls fn(arg) in softirq context on one CPU every jiffy. */
struct rslub_test_tick {
	struct timer_list timer;
	void (*fn)(void *arg);
	void *arg;
	bool stop;
};

struct page *rslub_test_virt_to_page(const void *addr);
unsigned long rslub_test_virt_to_pfn(const void *addr);
int rslub_test_pin_current(int cpu);
u64 rslub_test_now_ns(void);
int rslub_test_preempt_count(void);
struct task_struct *rslub_test_thread_start(int (*fn)(void *), void *arg, int cpu);
int rslub_test_thread_stop(struct task_struct *t);
void rslub_test_wait_for_stop(void);
struct rslub_test_tick *rslub_test_tick_start(void (*fn)(void *), void *arg, int cpu);
void rslub_test_tick_stop(struct rslub_test_tick *k);
struct rslub_test_hardtick *rslub_test_hardtick_start(void (*fn)(void *), void *arg, int cpu);
void rslub_test_hardtick_stop(struct rslub_test_hardtick *k);
void rslub_test_skip(const char *reason);
long rslub_test_slab_pages(bool reclaimable);
struct kmem_cache *rslub_test_kc_create(const char *name, unsigned int size, unsigned int align,
					unsigned long flags, void (*ctor)(void *));
struct kmem_cache *rslub_test_kc_create_mergeable(const char *name, unsigned int size);
struct kmem_cache *rslub_test_kc_create_freeptr(const char *name, unsigned int size,
						unsigned int freeptr_offset);
struct kmem_cache *rslub_test_kc_create_usercopy(const char *name, unsigned int size,
						 unsigned int useroffset, unsigned int usersize);
void rslub_test_check_object_size(const void *ptr, unsigned long n, bool to_user);
unsigned long rslub_test_memmap_hole(void);
void rslub_test_kc_destroy(struct kmem_cache *kc);
void rslub_test_kc_geometry(struct kmem_cache *kc, unsigned int *order, unsigned int *size,
			    unsigned int *min_partial);
void *rslub_test_kc_alloc(struct kmem_cache *kc, gfp_t gfp);
void *rslub_test_kc_zalloc(struct kmem_cache *kc, gfp_t gfp);
void *rslub_test_kc_alloc_node(struct kmem_cache *kc, gfp_t gfp, int node);
void *rslub_test_kc_alloc_lru(struct kmem_cache *kc, gfp_t gfp);
bool rslub_test_kc_alloc_bulk(struct kmem_cache *kc, gfp_t gfp, size_t n, void **p);
void rslub_test_kc_free(struct kmem_cache *kc, void *obj);
void rslub_test_kc_add_reference(struct kmem_cache *kc);
void rslub_test_kc_drop_reference(struct kmem_cache *kc);
bool rslub_test_kc_free_in_recursion(struct kmem_cache *kc, void *obj);
int rslub_test_ksize_krealloc_skipped(void *obj, size_t size, size_t *ks, void **re);
void rslub_test_kfree(const void *obj);
void rslub_test_kc_free_bulk(struct kmem_cache *kc, size_t n, void **p);
void rslub_test_kfree_bulk(size_t n, void **p);
size_t rslub_test_ksize(const void *obj);
void *rslub_test_krealloc(const void *obj, size_t size, gfp_t gfp);
void rslub_test_kfree_rcu_head(void *obj);
void rslub_test_kfree_rcu_headless(void *obj);
void rslub_test_kfree_rcu_inner(void *obj);
void rslub_test_kfree_rcu_nolock_inner(void *obj);
void rslub_test_kfree_rcu_nolock_inner_raw_locked(void *obj);
bool rslub_test_on_slab_page(const void *obj);
int rslub_test_direct_state(void);
bool rslub_test_direct_param(void);
bool rslub_test_direct_sites_patched(void);
void rslub_test_direct_kfree(const void *x);
void rslub_test_direct_free(struct kmem_cache *s, void *x);
void *rslub_test_direct_alloc(struct kmem_cache *s, gfp_t gfp);
void *rslub_test_direct_alloc_node(struct kmem_cache *s, gfp_t gfp, int node);
unsigned long rslub_test_direct_count(bool on);
int rslub_test_trace_hot(bool on);
int rslub_test_traced(void);
void *rslub_test_kmalloc(size_t size, gfp_t gfp);
void *rslub_test_kmalloc_node(size_t size, gfp_t gfp, int node);
void *rslub_test_kmalloc_track_caller(size_t size, gfp_t gfp);
void *rslub_test_kmalloc_64(gfp_t gfp);
bool rslub_test_sendpage_ok(const void *obj);
void *rslub_test_kmalloc_512_node(gfp_t gfp, int node);
void *rslub_test_kmalloc_cache(struct kmem_cache *kc, gfp_t gfp, size_t size, int node);
void *rslub_test_kvmalloc(size_t size, gfp_t gfp);
void *rslub_test_kvrealloc(const void *obj, size_t size, gfp_t gfp);
void rslub_test_kvfree(const void *obj);
size_t rslub_test_kmalloc_size_roundup(size_t size);
bool rslub_test_is_vmalloc(const void *obj);
bool rslub_test_memcg(void);
bool rslub_test_meta_from_kernel(const void *meta);
struct rslub_test_view;
bool rslub_test_slab_view(const void *obj, struct rslub_test_view *v);
unsigned long rslub_test_nearest_obj(const void *p);
bool rslub_test_kmem_dump_obj(void *obj);
int rslub_test_bvec_get_put(void *obj, size_t len, int *counts, int max);
mempool_t *rslub_test_mempool_create(int min_nr, struct kmem_cache *kc);
mempool_t *rslub_test_mempool_create_pages(int min_nr);
void rslub_test_mempool_destroy(mempool_t *pool);
void *rslub_test_mempool_alloc(mempool_t *pool, gfp_t gfp);
void *rslub_test_mempool_alloc_preallocated(mempool_t *pool);
void rslub_test_mempool_free(mempool_t *pool, void *element);
unsigned int rslub_test_mempool_free_bulk(mempool_t *pool, void **elements, unsigned int n);
int rslub_test_mempool_resize(mempool_t *pool, int min_nr);
int rslub_test_mempool_reserved(mempool_t *pool);
struct rslub_test_memcg *rslub_test_memcg_enter(const char *path);
void rslub_test_memcg_leave(struct rslub_test_memcg *m);
unsigned long rslub_test_memcg_usage(struct rslub_test_memcg *m);
bool rslub_test_kmem_cache_charge(void *obj, gfp_t gfp);
struct page *rslub_test_alloc_split(unsigned int order);
void rslub_test_free_page(struct page *page);
void rslub_test_set_pfmemalloc(struct page *page);
int rslub_test_module_refcount(void);
int rslub_test_defer(void (*fn)(void *), void *arg);
int rslub_test_cpu_down(unsigned int cpu);
int rslub_test_cpu_up(unsigned int cpu);
struct task_struct *rslub_test_thread_start_unbound(int (*fn)(void *), void *arg);
int rslub_test_move_task(struct task_struct *t, int cpu);
void rslub_test_usleep(unsigned int us);
int rslub_test_cpu_to_node(int cpu);
void rslub_test_mdelay(unsigned int ms);
unsigned int rslub_test_memalloc_noreclaim_save(void);
void rslub_test_memalloc_noreclaim_restore(unsigned int flags);
bool rslub_test_tainted_warn(void);
ssize_t rslub_test_read_file(const char *path, char *buf, size_t len);
ssize_t rslub_test_write_file(const char *path, const char *buf, size_t len);
u8 rslub_test_read_byte(const void *p);
bool rslub_test_page_try_get(const void *obj);
void rslub_test_page_put(const void *obj);
struct page *rslub_test_take_memory_block(unsigned long *nr);
void rslub_test_free_range(struct page *first, unsigned long nr);
int rslub_test_offline_block(struct page *page, unsigned int secs, bool *spun);
bool rslub_test_log_has(const char *first, const char *next);
unsigned long rslub_test_alloc_hidden(struct kmem_cache *kc, bool link);
u32 rslub_test_slot_home(struct kmem_cache *kc);

struct page *rslub_test_virt_to_page(const void *addr)
{
	return virt_to_page(addr);
}

unsigned long rslub_test_virt_to_pfn(const void *addr)
{
	return page_to_pfn(virt_to_page(addr));
}

/*
 * Moves @t to @cpu, if @cpu is active. A kthread may be bound to an online CPU that is not
 * active any more (going down), and one left there makes the hotplug core warn that the
 * dying CPU was not vacated: the check and the move are made with hotplug held off.
 */
static int rslub_test_move(struct task_struct *t, int cpu)
{
	int ret = -EINVAL;

	cpus_read_lock();
	if (cpu_active(cpu))
		ret = set_cpus_allowed_ptr(t, cpumask_of(cpu));
	cpus_read_unlock();
	return ret;
}

int rslub_test_preempt_count(void)
{
	return preempt_count();
}

int rslub_test_pin_current(int cpu)
{
	if (cpu < 0)
		return set_cpus_allowed_ptr(current, cpu_possible_mask);
	return rslub_test_move(current, cpu);
}

u64 rslub_test_now_ns(void)
{
	return ktime_get_ns();
}

struct task_struct *rslub_test_thread_start(int (*fn)(void *), void *arg, int cpu)
{
	struct task_struct *t = kthread_run_on_cpu(fn, arg, cpu, "rslub_test/%u");

	return IS_ERR(t) ? NULL : t;
}

int rslub_test_thread_stop(struct task_struct *t)
{
	return kthread_stop(t);
}

void rslub_test_wait_for_stop(void)
{
	while (!kthread_should_stop())
		schedule_timeout_interruptible(1);
}

static void rslub_test_tick_fn(struct timer_list *t)
{
	struct rslub_test_tick *k = timer_container_of(k, t, timer);

	k->fn(k->arg);
	if (!READ_ONCE(k->stop))
		mod_timer(&k->timer, jiffies + 1);
}

struct rslub_test_tick *rslub_test_tick_start(void (*fn)(void *), void *arg, int cpu)
{
	struct rslub_test_tick *k = kzalloc(sizeof(*k), GFP_KERNEL);

	if (!k)
		return NULL;
	k->fn = fn;
	k->arg = arg;
	timer_setup(&k->timer, rslub_test_tick_fn, TIMER_PINNED);
	k->timer.expires = jiffies + 1;
	add_timer_on(&k->timer, cpu);
	return k;
}

void rslub_test_tick_stop(struct rslub_test_tick *k)
{
	WRITE_ONCE(k->stop, true);
	timer_delete_sync(&k->timer);
	kfree(k);
}

/*
 * Calls fn(arg) in hard interrupt context on one CPU every millisecond: a pinned hrtimer
 * raises an irq_work there, which runs in hard interrupt context (a self-IPI) but, like
 * a device interrupt handler and unlike the hrtimer callback itself, may take the page
 * allocator's spinlock_t (lockdep's wait-context rules, PROVE_RAW_LOCK_NESTING).
 */
struct rslub_test_hardtick {
	struct hrtimer timer;
	struct irq_work work;
	void (*fn)(void *);
	void *arg;
	bool stop;
};

static void rslub_test_hardtick_work(struct irq_work *w)
{
	struct rslub_test_hardtick *k = container_of(w, struct rslub_test_hardtick, work);

	k->fn(k->arg);
}

static enum hrtimer_restart rslub_test_hardtick_fn(struct hrtimer *t)
{
	struct rslub_test_hardtick *k = container_of(t, struct rslub_test_hardtick, timer);

	if (READ_ONCE(k->stop))
		return HRTIMER_NORESTART;
	irq_work_queue(&k->work);
	hrtimer_forward_now(t, ms_to_ktime(1));
	return HRTIMER_RESTART;
}

static void rslub_test_hardtick_arm(void *arg)
{
	struct rslub_test_hardtick *k = arg;

	hrtimer_start(&k->timer, ms_to_ktime(1), HRTIMER_MODE_REL_PINNED_HARD);
}

struct rslub_test_hardtick *rslub_test_hardtick_start(void (*fn)(void *), void *arg, int cpu)
{
	struct rslub_test_hardtick *k = kzalloc(sizeof(*k), GFP_KERNEL);

	if (!k)
		return NULL;
	k->fn = fn;
	k->arg = arg;
	init_irq_work(&k->work, rslub_test_hardtick_work);
	hrtimer_setup(&k->timer, rslub_test_hardtick_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
	if (smp_call_function_single(cpu, rslub_test_hardtick_arm, k, 1)) {
		kfree(k);
		return NULL;
	}
	return k;
}

void rslub_test_hardtick_stop(struct rslub_test_hardtick *k)
{
	WRITE_ONCE(k->stop, true);
	hrtimer_cancel(&k->timer);
	irq_work_sync(&k->work);
	kfree(k);
}

/*
 * Pages counted as slab memory (NR_SLAB_RECLAIMABLE_B or NR_SLAB_UNRECLAIMABLE_B) on all
 * nodes, the per-CPU differences not yet folded in included.
 */
long rslub_test_slab_pages(bool reclaimable)
{
	enum node_stat_item item = reclaimable ? NR_SLAB_RECLAIMABLE_B : NR_SLAB_UNRECLAIMABLE_B;
	long x = atomic_long_read(&vm_node_stat[item]);
	int nid, cpu;

	for_each_online_node(nid)
		for_each_online_cpu(cpu)
			x += per_cpu_ptr(NODE_DATA(nid)->per_cpu_nodestats, cpu)->vm_node_stat_diff[item];
	return x;
}

/* Marks the running KUnit test as skipped, with the reason; the test then returns. */
void rslub_test_skip(const char *reason)
{
	struct kunit *test = kunit_get_current_test();

	if (test)
		kunit_mark_skipped(test, "%s", reason);
}

/*
 * Runs fn(arg) when the running KUnit test ends, also when a failed assertion ends its
 * thread early (no Rust destructor runs then). 0, or -errno (and fn(arg) was run now).
 */
int rslub_test_cpu_down(unsigned int cpu)
{
	return remove_cpu(cpu);
}

int rslub_test_cpu_up(unsigned int cpu)
{
	return add_cpu(cpu);
}

int rslub_test_defer(void (*fn)(void *), void *arg)
{
	struct kunit *test = kunit_get_current_test();

	if (!test) {
		fn(arg);
		return -EINVAL;
	}
	return kunit_add_action_or_reset(test, fn, arg);
}

int rslub_test_cpu_to_node(int cpu)
{
	return cpu_to_node(cpu);
}

/* Busy-waits: usable with interrupts off, where a hook holds a path open. */
void rslub_test_mdelay(unsigned int ms)
{
	mdelay(ms);
}

/* Enters and leaves the PF_MEMALLOC scope that direct reclaim runs in. */
unsigned int rslub_test_memalloc_noreclaim_save(void)
{
	return memalloc_noreclaim_save();
}

void rslub_test_memalloc_noreclaim_restore(unsigned int flags)
{
	memalloc_noreclaim_restore(flags);
}

/* Whether a WARN() fired since boot (the kernel is tainted TAINT_WARN). */
bool rslub_test_tainted_warn(void)
{
	return test_taint(TAINT_WARN);
}

/*
 * Opens @path inside debugfs, through a private mount of it: KUnit runs the suites in
 * kernel threads, whose root need not have debugfs mounted at /sys/kernel/debug.
 */
static struct file *rslub_test_open_debugfs(const char *path, int flags)
{
	/* debugfs is built in: get_fs_type() takes no module reference to give back. */
	struct file_system_type *t = get_fs_type("debugfs");
	struct vfsmount *mnt;
	struct file *f;

	if (!t)
		return ERR_PTR(-ENODEV);
	mnt = vfs_kern_mount(t, SB_KERNMOUNT, "debugfs", NULL);
	if (IS_ERR(mnt))
		return ERR_CAST(mnt);
	f = file_open_root_mnt(mnt, path, flags, 0);
	/* An open file holds its own reference to the mount. */
	mntput(mnt);
	return f;
}

/*
 * A user-space buffer of @len bytes for the running test: debugfs files of the Rust
 * abstractions have ->read and ->write only, which take user pointers (kernel_read()
 * needs ->read_iter). KUnit gives the test thread an mm and unmaps it after the test.
 */
static char __user *rslub_test_user_buf(size_t len)
{
	struct kunit *test = kunit_get_current_test();
	unsigned long a;

	if (!test)
		return NULL;
	a = kunit_vm_mmap(test, NULL, 0, len, PROT_READ | PROT_WRITE,
			  MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (!a || IS_ERR_VALUE(a))
		return NULL;
	return (char __user *)a;
}

/*
 * Reads up to @len bytes of the debugfs file at @path (relative to the debugfs root)
 * from its start, in as many read(2)s as it takes: bytes read or -errno. Only from a
 * KUnit test.
 */
ssize_t rslub_test_read_file(const char *path, char *buf, size_t len)
{
	char __user *ubuf = rslub_test_user_buf(len);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (!ubuf)
		return -ENOMEM;
	f = rslub_test_open_debugfs(path, O_RDONLY);
	if (IS_ERR(f))
		return PTR_ERR(f);
	/* Until the end or a full buffer: a seq_file gives a page or so per read(). */
	n = f->f_op->read ? 0 : -EINVAL;
	while (n >= 0 && n < len) {
		ssize_t got = f->f_op->read(f, ubuf + n, len - n, &pos);

		if (got <= 0) {
			if (got < 0 && !n)
				n = got;
			break;
		}
		n += got;
	}
	filp_close(f, NULL);
	if (n > 0 && copy_from_user(buf, ubuf, n))
		n = -EFAULT;
	return n;
}

/*
 * Writes @len bytes to the debugfs file at @path in one write(2): bytes written or
 * -errno. Only from a KUnit test.
 */
ssize_t rslub_test_write_file(const char *path, const char *buf, size_t len)
{
	char __user *ubuf = rslub_test_user_buf(len ? len : 1);
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	if (!ubuf)
		return -ENOMEM;
	if (copy_to_user(ubuf, buf, len))
		return -EFAULT;
	f = rslub_test_open_debugfs(path, O_WRONLY);
	if (IS_ERR(f))
		return PTR_ERR(f);
	n = f->f_op->write ? f->f_op->write(f, ubuf, len, &pos) : -EINVAL;
	filp_close(f, NULL);
	return n;
}

/* A kernel thread the scheduler (and rslub_test_move_task()) may move between CPUs. */
struct task_struct *rslub_test_thread_start_unbound(int (*fn)(void *), void *arg)
{
	struct task_struct *t = kthread_run(fn, arg, "rslub_test/u");

	return IS_ERR(t) ? NULL : t;
}

/* Moves @t to @cpu now, wherever it is in its code (the stopper preempts it). */
int rslub_test_move_task(struct task_struct *t, int cpu)
{
	return rslub_test_move(t, cpu);
}

void rslub_test_usleep(unsigned int us)
{
	usleep_range(us, 2 * us);
}

/*
 * The kernel's own kmem_cache API, as its users call it (the backing tests): these calls
 * reach the hooked entry points of mm/slub.o like any other caller's.
 */
/*
 * The slab order and the stride (object size with metadata) the kernel's allocator chose
 * for @kc: SLUB's oo_order() and s->size. OO_SHIFT is private to mm/slub.c (16 since
 * 2008).
 */
void rslub_test_kc_geometry(struct kmem_cache *kc, unsigned int *order, unsigned int *size,
			    unsigned int *min_partial)
{
	*order = kc->oo.x >> 16;
	*size = kc->size;
	*min_partial = kc->min_partial;
}

struct kmem_cache *rslub_test_kc_create(const char *name, unsigned int size, unsigned int align,
					unsigned long flags, void (*ctor)(void *))
{
	return kmem_cache_create(name, size, align, (__force slab_flags_t)flags | SLAB_NO_MERGE,
				 ctor);
}

/*
 * A SLAB_TYPESAFE_BY_RCU cache whose free pointer may go at @freeptr_offset inside the
 * object, as filp and vm_area_struct ask.
 */
struct kmem_cache *rslub_test_kc_create_freeptr(const char *name, unsigned int size,
						unsigned int freeptr_offset)
{
	struct kmem_cache_args args = {
		.freeptr_offset = freeptr_offset,
		.use_freeptr_offset = true,
	};

	return kmem_cache_create(name, size, &args, SLAB_TYPESAFE_BY_RCU | SLAB_NO_MERGE);
}

/* A cache whose objects may be copied to or from user space only in that window. */
struct kmem_cache *rslub_test_kc_create_usercopy(const char *name, unsigned int size,
						 unsigned int useroffset, unsigned int usersize)
{
	return kmem_cache_create_usercopy(name, size, 0, SLAB_NO_MERGE, useroffset, usersize,
					  NULL);
}

/* What copy_to_user() (@to_user) or copy_from_user() checks of the kernel's side. */
void rslub_test_check_object_size(const void *ptr, unsigned long n, bool to_user)
{
	check_object_size(ptr, n, to_user);
}

/*
 * An address of the direct map's region with no memory and no memmap behind it (1 TiB
 * in, past any test guest's memory): hardened usercopy may be asked about any address,
 * and the kernel's check gives up on one that is not virt_addr_valid(). 0 where its
 * struct page happens to be mapped, so that a caller can tell its test would prove
 * nothing.
 */
unsigned long rslub_test_memmap_hole(void)
{
	unsigned long pfn = (1UL << 40) >> PAGE_SHIFT;
	unsigned long word;

	if (pfn_valid(pfn) || (pfn << PAGE_SHIFT) >= vmalloc_base - page_offset_base ||
	    !copy_from_kernel_nofault(&word, pfn_to_page(pfn), sizeof(word)))
		return 0;
	return page_offset_base + (pfn << PAGE_SHIFT);
}

/* kmem_cache_create() as the kernel's users call it: merged into another if it can be. */
struct kmem_cache *rslub_test_kc_create_mergeable(const char *name, unsigned int size)
{
	return kmem_cache_create(name, size, 0, 0, NULL);
}

void rslub_test_kc_destroy(struct kmem_cache *kc)
{
	kmem_cache_destroy(kc);
}

void *rslub_test_kc_alloc(struct kmem_cache *kc, gfp_t gfp)
{
	return kmem_cache_alloc(kc, gfp);
}

void *rslub_test_kc_zalloc(struct kmem_cache *kc, gfp_t gfp)
{
	return kmem_cache_zalloc(kc, gfp);
}

void *rslub_test_kc_alloc_node(struct kmem_cache *kc, gfp_t gfp, int node)
{
	return kmem_cache_alloc_node(kc, gfp, node);
}

void *rslub_test_kc_alloc_lru(struct kmem_cache *kc, gfp_t gfp)
{
	return kmem_cache_alloc_lru(kc, NULL, gfp);
}

bool rslub_test_kc_alloc_bulk(struct kmem_cache *kc, gfp_t gfp, size_t n, void **p)
{
	return kmem_cache_alloc_bulk(kc, gfp, n, p);
}

void rslub_test_kc_free(struct kmem_cache *kc, void *obj)
{
	kmem_cache_free(kc, obj);
}

void rslub_test_kfree(const void *obj)
{
	kfree(obj);
}

void rslub_test_kc_free_bulk(struct kmem_cache *kc, size_t n, void **p)
{
	kmem_cache_free_bulk(kc, n, p);
}

void rslub_test_kfree_bulk(size_t n, void **p)
{
	kfree_bulk(n, p);
}

size_t rslub_test_ksize(const void *obj)
{
	return ksize(obj);
}

void *rslub_test_krealloc(const void *obj, size_t size, gfp_t gfp)
{
	return krealloc(obj, size, gfp);
}

/* An object with an rcu_head at its start (the object must have room for it). */
struct rslub_test_rcu_obj {
	struct rcu_head rcu;
};

void rslub_test_kfree_rcu_head(void *obj)
{
	struct rslub_test_rcu_obj *o = obj;

	kfree_rcu(o, rcu);
}

void rslub_test_kfree_rcu_headless(void *obj)
{
	kfree_rcu_mightsleep(obj);
}

/* An object with its kvfree_rcu_head inside, not at its start (40 bytes and more). */
struct rslub_test_rcu_inner {
	char data[32];
	struct kvfree_rcu_head head;
};

void rslub_test_kfree_rcu_inner(void *obj)
{
	struct rslub_test_rcu_inner *o = obj;

	kfree_rcu(o, head);
}

void rslub_test_kfree_rcu_nolock_inner(void *obj)
{
	struct rslub_test_rcu_inner *o = obj;

	kfree_rcu_nolock(o, head);
}

/* A slab mempool: mempool_create_slab_pool(). */
mempool_t *rslub_test_mempool_create(int min_nr, struct kmem_cache *kc)
{
	return mempool_create_slab_pool(min_nr, kc);
}

/* A page mempool of single pages: its elements are struct page pointers. */
mempool_t *rslub_test_mempool_create_pages(int min_nr)
{
	return mempool_create_page_pool(min_nr, 0);
}

void rslub_test_mempool_destroy(mempool_t *pool)
{
	mempool_destroy(pool);
}

void *rslub_test_mempool_alloc(mempool_t *pool, gfp_t gfp)
{
	return mempool_alloc(pool, gfp);
}

void *rslub_test_mempool_alloc_preallocated(mempool_t *pool)
{
	return mempool_alloc_preallocated(pool);
}

void rslub_test_mempool_free(mempool_t *pool, void *element)
{
	mempool_free(element, pool);
}

unsigned int rslub_test_mempool_free_bulk(mempool_t *pool, void **elements, unsigned int n)
{
	return mempool_free_bulk(pool, elements, n);
}

int rslub_test_mempool_resize(mempool_t *pool, int min_nr)
{
	return mempool_resize(pool, min_nr);
}

/* The number of elements the pool holds in reserve. */
int rslub_test_mempool_reserved(mempool_t *pool)
{
	return READ_ONCE(pool->curr_nr);
}

/* kfree_rcu_nolock() under a raw spinlock, with interrupts off, as a BPF program may. */
static DEFINE_RAW_SPINLOCK(rslub_test_raw_lock);

void rslub_test_kfree_rcu_nolock_inner_raw_locked(void *obj)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&rslub_test_raw_lock, flags);
	rslub_test_kfree_rcu_nolock_inner(obj);
	raw_spin_unlock_irqrestore(&rslub_test_raw_lock, flags);
}

/* Whether @obj is on a slab page, i.e. the kernel's allocator's. */
bool rslub_test_on_slab_page(const void *obj)
{
	return page_slab(virt_to_page(obj)) != NULL;
}

/*
 * Direct calls (rust/back/direct.S): -1 where this kernel has none (no jmp mode), else
 * whether the hooks registered now use them (rslub_hook_direct()).
 */
int rslub_test_direct_state(void)
{
#ifdef RSLUB_DIRECT
	return rslub_hook_direct();
#else
	return -1;
#endif
}

/* The direct= parameter of this module's copy (rust/param.c). */
bool rslub_test_direct_param(void)
{
	return READ_ONCE(rslub_direct_param);
}

/*
 * Whether each directly called function's ftrace call site, read as the CPU does, is a
 * jmp to its trampoline (no other ops shares it: else ftrace's caller is there).
 */
bool rslub_test_direct_sites_patched(void)
{
#ifdef RSLUB_DIRECT
	int i, n = RSLUB_NR_DIRECT + (rslub_kmalloc_direct_on() ? RSLUB_NR_DIRECT_KMALLOC : 0);

	for (i = 0; i < n; i++) {
		const struct rslub_direct_site *d = i < RSLUB_NR_DIRECT ?
							    &rslub_direct_sites[i] :
							    &rslub_direct_kmalloc_sites[i - RSLUB_NR_DIRECT];
		unsigned long to = 0;

		if (rslub_site(d->fn, &to) != RSLUB_SITE_JMP || to != (unsigned long)d->tramp)
			return false;
	}
	return true;
#else
	return false;
#endif
}

/*
 * The trampolines called directly, as the functions they stand for: each must do what
 * its function does, whatever the hooks' state (it ends in the function itself or in the
 * replacement of this module's copy of rust/back's C files). Where there are none, the
 * functions.
 */
void rslub_test_direct_kfree(const void *x)
{
#ifdef RSLUB_DIRECT
	rslub_direct_kfree(x);
#else
	kfree(x);
#endif
}

void rslub_test_direct_free(struct kmem_cache *s, void *x)
{
#ifdef RSLUB_DIRECT
	rslub_direct_free(s, x);
#else
	kmem_cache_free(s, x);
#endif
}

void *rslub_test_direct_alloc(struct kmem_cache *s, gfp_t gfp)
{
#ifdef RSLUB_DIRECT
	return rslub_direct_alloc(s, gfp);
#else
	return kmem_cache_alloc(s, gfp);
#endif
}

void *rslub_test_direct_alloc_node(struct kmem_cache *s, gfp_t gfp, int node)
{
#ifdef RSLUB_DIRECT
	return rslub_direct_alloc_node(s, gfp, node);
#else
	return kmem_cache_alloc_node(s, gfp, node);
#endif
}

/*
 * Counts this task's calls of the trampolines' questions in C (rslub_d_*()) from now on
 * (@on) or no more: the count since the last call, which restarts it.
 */
unsigned long rslub_test_direct_count(bool on)
{
#if defined(RSLUB_DIRECT) && defined(RSLUB_INJECT)
	unsigned long n;

	WRITE_ONCE(rslub_direct_task, NULL);
	n = rslub_direct_asked;
	rslub_direct_asked = 0;
	WRITE_ONCE(rslub_direct_task, on ? current : NULL);
	return n;
#else
	return 0;
#endif
}

static atomic_t rslub_test_traced_calls;

static void notrace rslub_test_trace_fn(unsigned long ip, unsigned long parent_ip,
					struct ftrace_ops *op, struct ftrace_regs *fregs)
{
	atomic_inc(&rslub_test_traced_calls);
}

static struct ftrace_ops rslub_test_trace_ops = {
	.func = rslub_test_trace_fn,
};

/*
 * A tracer on kfree, kmem_cache_free, kmem_cache_alloc_noprof and
 * kmem_cache_alloc_node_noprof (@on), or none any more:
 * it shares their call sites with rslub's hooks, direct or not. 0 or -errno.
 */
int rslub_test_trace_hot(bool on)
{
	static void *const fns[] = { kfree, kmem_cache_free, kmem_cache_alloc_noprof,
				     kmem_cache_alloc_node_noprof };
	int i, ret = 0;

	if (!on) {
		unregister_ftrace_function(&rslub_test_trace_ops);
		ftrace_free_filter(&rslub_test_trace_ops);
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(fns) && !ret; i++)
		ret = ftrace_set_filter_ip(&rslub_test_trace_ops, (unsigned long)fns[i], 0, 0);
	if (!ret)
		ret = register_ftrace_function(&rslub_test_trace_ops);
	if (ret)
		ftrace_free_filter(&rslub_test_trace_ops);
	return ret;
}

/* The calls the tracer saw, of every task. */
int rslub_test_traced(void)
{
	return atomic_read(&rslub_test_traced_calls);
}

/*
 * kmalloc's entry points, called from this module's code (the only calls the kmalloc
 * suite's hooks serve): a size not known at build time reaches __kmalloc_noprof() and its
 * kin, a constant one __kmalloc_cache_noprof() and __kmalloc_cache_node_noprof().
 */
noinline void *rslub_test_kmalloc(size_t size, gfp_t gfp)
{
	return kmalloc(size, gfp);
}

noinline void *rslub_test_kmalloc_node(size_t size, gfp_t gfp, int node)
{
	return kmalloc_node(size, gfp, node);
}

noinline void *rslub_test_kmalloc_track_caller(size_t size, gfp_t gfp)
{
	return kmalloc_track_caller(size, gfp);
}

noinline void *rslub_test_kmalloc_64(gfp_t gfp)
{
	return kmalloc(64, gfp);
}

/* Whether a zero-copy sender would send @obj's page by reference (include/linux/net.h). */
bool rslub_test_sendpage_ok(const void *obj)
{
	return sendpage_ok(virt_to_page(obj));
}

noinline void *rslub_test_kmalloc_512_node(gfp_t gfp, int node)
{
	return kmalloc_node(512, gfp, node);
}

/*
 * The constant-size entry points given a cache of the caller's choosing, as
 * lib/tests/slub_kunit.c calls them: __kmalloc_cache_noprof() for NUMA_NO_NODE, else
 * __kmalloc_cache_node_noprof().
 */
noinline void *rslub_test_kmalloc_cache(struct kmem_cache *kc, gfp_t gfp, size_t size, int node)
{
	if (node == NUMA_NO_NODE)
		return alloc_hooks(__kmalloc_cache_noprof(kc, gfp, size));
	return alloc_hooks(__kmalloc_cache_node_noprof(kc, gfp, node, size));
}

noinline void *rslub_test_kvmalloc(size_t size, gfp_t gfp)
{
	return kvmalloc(size, gfp);
}

noinline void *rslub_test_kvrealloc(const void *obj, size_t size, gfp_t gfp)
{
	return kvrealloc(obj, size, gfp);
}

void rslub_test_kvfree(const void *obj)
{
	kvfree(obj);
}

size_t rslub_test_kmalloc_size_roundup(size_t size)
{
	return kmalloc_size_roundup(size);
}

bool rslub_test_is_vmalloc(const void *obj)
{
	return is_vmalloc_addr(obj);
}

bool rslub_test_memcg(void)
{
	return IS_ENABLED(CONFIG_MEMCG);
}

/* Whether slab metadata at @meta is an object of rslub's metadata cache, the kernel's. */
bool rslub_test_meta_from_kernel(const void *meta)
{
	struct slab *slab = virt_to_slab(meta);

	return slab && rslub_is_meta_cache(slab->slab_cache);
}

/*
 * A naturally aligned block of 2^@order pages, split into single pages that are each
 * freed on their own (__free_page): a test lays slabs out in it as fragmented memory
 * would. Returns the first page, or NULL.
 */
struct page *rslub_test_alloc_split(unsigned int order)
{
	struct page *page = alloc_pages(GFP_KERNEL, order);

	if (page)
		split_page(page, order);
	return page;
}

void rslub_test_free_page(struct page *page)
{
	__free_page(page);
}

/* Marks @page as the page allocator marks a page it took from the emergency reserves. */
void rslub_test_set_pfmemalloc(struct page *page)
{
	set_page_pfmemalloc(page);
}

/*
 * kmem_cache_free() while this context already holds ftrace's recursion protection, and
 * its one allowed transition level: every ftrace handler called from it then fails
 * ftrace_test_recursion_trylock(), as one does when another tracer's handler frees in
 * the same context. False if the protection could not be taken.
 */
bool rslub_test_kc_free_in_recursion(struct kmem_cache *kc, void *obj)
{
	int a = ftrace_test_recursion_trylock(_THIS_IP_, _RET_IP_);
	int b = a < 0 ? -1 : ftrace_test_recursion_trylock(_THIS_IP_, _RET_IP_);

	if (b >= 0)
		kmem_cache_free(kc, obj);
	if (b >= 0)
		ftrace_test_recursion_unlock(b);
	if (a >= 0)
		ftrace_test_recursion_unlock(a);
	return b >= 0;
}

/* A tracer that does nothing: it shares ksize()'s and krealloc()'s call sites. */
static void notrace rslub_test_tracer_fn(unsigned long ip, unsigned long parent_ip,
					 struct ftrace_ops *op, struct ftrace_regs *fregs)
{
}

static struct ftrace_ops rslub_test_tracer = {
	.func = rslub_test_tracer_fn,
	.flags = FTRACE_OPS_FL_DYNAMIC,
};

/*
 * ksize() of @obj, then krealloc() of it to @size (GFP_ATOMIC: preemption is off), where
 * ftrace skips rslub's handler: a tracer shares both call sites, so ftrace's list
 * function runs them, and this context holds the list function's recursion protection
 * and its one transition level, as the handler of a tracer calling them from within
 * would: the list function then skips every ops, and the kernel's own functions run on
 * @obj. Their results in @ks and @re; 0, or the error registering the tracer.
 */
int rslub_test_ksize_krealloc_skipped(void *obj, size_t size, size_t *ks, void **re)
{
	int a, b, ret;

	ret = ftrace_set_filter_ip(&rslub_test_tracer, (unsigned long)ksize, 0, 1);
	if (!ret)
		ret = ftrace_set_filter_ip(&rslub_test_tracer,
					   (unsigned long)krealloc_node_align_noprof, 0, 0);
	if (!ret)
		ret = register_ftrace_function(&rslub_test_tracer);
	if (ret) {
		ftrace_free_filter(&rslub_test_tracer);
		return ret;
	}
	a = trace_test_and_set_recursion(_THIS_IP_, _RET_IP_, TRACE_LIST_START);
	b = a < 0 ? -1 : trace_test_and_set_recursion(_THIS_IP_, _RET_IP_, TRACE_LIST_START);
	if (b >= 0) {
		*ks = ksize(obj);
		*re = krealloc(obj, size, GFP_ATOMIC);
		trace_clear_recursion(b);
	} else {
		ret = -EBUSY;
	}
	if (a >= 0)
		trace_clear_recursion(a);
	unregister_ftrace_function(&rslub_test_tracer);
	ftrace_free_filter(&rslub_test_tracer);
	return ret;
}

/*
 * One more reference on @kc, as slab merging takes one for each creator whose cache it
 * merges into an existing one (the test kernel does not merge). Only the test uses @kc,
 * so slab_mutex (not exported) is not needed to change its count.
 */
void rslub_test_kc_add_reference(struct kmem_cache *kc)
{
	WRITE_ONCE(kc->refcount, kc->refcount + 1);
}

/* What an alias's kmem_cache_destroy() does when another reference is left. */
void rslub_test_kc_drop_reference(struct kmem_cache *kc)
{
	WRITE_ONCE(kc->refcount, kc->refcount - 1);
}

int rslub_test_module_refcount(void)
{
	return module_refcount(THIS_MODULE);
}

/*
 * Memory cgroups: this task's allocations charged to the cgroup at @path (of the cgroup2
 * hierarchy) until rslub_test_memcg_leave(), whose argument is returned (NULL if there is
 * no such cgroup, or it has no memory controller of its own, or no CONFIG_MEMCG).
 */
#ifdef CONFIG_MEMCG
#include <linux/cgroup.h>
#include <linux/memcontrol.h>

struct rslub_test_memcg {
	struct mem_cgroup *memcg, *old;
};

struct rslub_test_memcg *rslub_test_memcg_enter(const char *path)
{
	struct cgroup_subsys_state *css;
	struct rslub_test_memcg *m;
	struct cgroup *cgrp;

	cgrp = cgroup_get_from_path(path);
	if (IS_ERR(cgrp))
		return NULL;
	css = cgroup_get_e_css(cgrp, &memory_cgrp_subsys);
	cgroup_put(cgrp);
	if (!css)
		return NULL;
	m = kmalloc_obj(*m);
	if (!m || mem_cgroup_is_root(mem_cgroup_from_css(css))) {
		kfree(m);
		css_put(css);
		return NULL;
	}
	m->memcg = mem_cgroup_from_css(css);
	m->old = set_active_memcg(m->memcg);
	return m;
}

void rslub_test_memcg_leave(struct rslub_test_memcg *m)
{
	set_active_memcg(m->old);
	css_put(&m->memcg->css);
	kfree(m);
}

/* The bytes charged to the cgroup (its memory.current). */
unsigned long rslub_test_memcg_usage(struct rslub_test_memcg *m)
{
	return page_counter_read(&m->memcg->memory) * PAGE_SIZE;
}
#else
struct rslub_test_memcg *rslub_test_memcg_enter(const char *path)
{
	return NULL;
}

void rslub_test_memcg_leave(struct rslub_test_memcg *m)
{
}

unsigned long rslub_test_memcg_usage(struct rslub_test_memcg *m)
{
	return 0;
}
#endif

bool rslub_test_kmem_cache_charge(void *obj, gfp_t gfp)
{
	return kmem_cache_charge(obj, gfp);
}

/*
 * The suites' deliberate mistakes (tests-kunit/sanitize_tests.rs). This file is built with
 * KASAN's instrumentation, the test module's Rust code without (Kbuild): these reads
 * are what a buggy C user of an object does. They run in a worker: a KASAN report in a
 * KUnit test's own task fails that test (mm/kasan/report.c), one in a worker does not,
 * and the test checks the report itself (rslub_test_log_has()).
 */
struct rslub_test_access {
	struct work_struct work;
	const volatile u8 *p;
	u8 v;
};

static void rslub_test_access_fn(struct work_struct *w)
{
	struct rslub_test_access *a = container_of(w, struct rslub_test_access, work);

	a->v = *a->p;
}

/* Reads the byte at @p, checked by KASAN, in a worker; returns it. */
u8 rslub_test_read_byte(const void *p)
{
	struct rslub_test_access a = { .p = p };

	INIT_WORK_ONSTACK(&a.work, rslub_test_access_fn);
	schedule_work(&a.work);
	flush_work(&a.work);
	destroy_work_on_stack(&a.work);
	return a.v;
}

/*
 * Whether the kernel log holds a line containing @first followed by one containing
 * @next (for example a KASAN report's title, then its "at addr" line).
 */
bool rslub_test_log_has(const char *first, const char *next)
{
	struct kmsg_dump_iter iter;
	bool prev = false, found = false;
	size_t len;
	char *line = kmalloc(1024, GFP_KERNEL);

	if (!line)
		return false;
	kmsg_dump_rewind(&iter);
	while (!found && kmsg_dump_get_line(&iter, false, line, 1023, &len)) {
		line[len] = '\0';
		found = prev && strstr(line, next);
		prev = strstr(line, first) != NULL;
	}
	kfree(line);
	return found;
}

/*
 * Allocates from @kc in a kthread that then scrubs its stack and exits, so that no stack
 * kmemleak scans keeps a stale copy of the pointer. With @link, the object's first word
 * points at a new 64-byte kmalloc'ed object, which nothing else refers to, and the object
 * is marked as no leak (kmemleak_not_leak(): never reported, always scanned), so that
 * only kmemleak's scan of the object can keep the kmalloc'ed one from being reported.
 */
struct rslub_test_leak {
	struct kmem_cache *kc;
	bool link;
	unsigned long hidden;
	struct completion done;
};

/*
 * Zeroes the stack below the caller's frame, where the calls it made left their frames:
 * a freed thread stack may be cached for the next thread, and kmemleak scans it there
 * (its vmalloc area is reachable from the cache), so a stale copy of a pointer in it
 * would keep the object from being reported. @depth frames of 1 KiB each: the
 * allocation's own frames go deeper than one under KASAN (seen: 1.5 KiB left a copy).
 */
static noinline void rslub_test_scrub_stack(int depth)
{
	char below[1024];

	memzero_explicit(below, sizeof(below));
	if (depth > 1)
		rslub_test_scrub_stack(depth - 1);
	barrier_data(below);
}

/*
 * An object of @kc that is not the first of its slab, as a precaution: with the slab
 * metadata's scan restricted to its cache pointer, kmemleak once reported no leak of a
 * slab's first object (Documentation/reliability.rst, "kmemleak": not understood).
 * Those allocated on the way are freed after.
 */
static void *rslub_test_alloc_off_start(struct kmem_cache *kc)
{
	void *first[4], *p = kmem_cache_alloc(kc, GFP_KERNEL);
	int n = 0;

	while (p && p == slab_address(virt_to_slab(p))) {
		if (n == ARRAY_SIZE(first)) {
			kmem_cache_free(kc, p);
			p = NULL;
			break;
		}
		first[n++] = p;
		p = kmem_cache_alloc(kc, GFP_KERNEL);
	}
	while (n--)
		kmem_cache_free(kc, first[n]);
	return p;
}

static int rslub_test_leak_fn(void *arg)
{
	struct rslub_test_leak *l = arg;
	void **p = rslub_test_alloc_off_start(l->kc);

	if (p && l->link) {
		*p = kmalloc(64, GFP_KERNEL);
		if (!*p) {
			kmem_cache_free(l->kc, p);
			p = NULL;
		} else {
			kmemleak_not_leak(p);
		}
	}
	l->hidden = ~(unsigned long)p;
	p = NULL;
	rslub_test_scrub_stack(6);
	complete(&l->done);
	return 0;
}

/*
 * The first place of @kc's slot in the backing index, where its probe starts
 * (rslub_lookup()), whether @kc is backed or not.
 */
u32 rslub_test_slot_home(struct kmem_cache *kc)
{
	return hash_ptr(kc, RSLUB_INDEX_BITS);
}

/*
 * Returns the object allocated (not the first of its slab), bitwise inverted (~0 on
 * failure).
 */
unsigned long rslub_test_alloc_hidden(struct kmem_cache *kc, bool link)
{
	struct rslub_test_leak *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct task_struct *t;
	unsigned long hidden = ~0UL;

	if (!l)
		return hidden;
	l->kc = kc;
	l->link = link;
	init_completion(&l->done);
	t = kthread_run(rslub_test_leak_fn, l, "rslub_test_leak");
	if (!IS_ERR(t)) {
		wait_for_completion(&l->done);
		hidden = l->hidden;
	}
	kfree(l);
	return hidden;
}

/*
 * The slab page view (rust/slab_page.c): what code outside mm/slub.c reads of the slab
 * page holding an object, through the kernel's own helpers of mm/slab.h.
 */
struct rslub_test_view {
	const char *name;
	unsigned int size;
	unsigned int object_size;
	unsigned int objects;
	unsigned int order;
	int refcount;
	bool kmalloc;
	unsigned long base;
};

/* The view of the slab page holding @obj: false if page_slab() says it is none. */
bool rslub_test_slab_view(const void *obj, struct rslub_test_view *v)
{
	struct slab *slab = virt_to_slab(obj);
	struct kmem_cache *s;

	if (!slab)
		return false;
	s = slab->slab_cache;
	v->name = s->name;
	v->size = s->size;
	v->object_size = s->object_size;
	v->objects = slab->objects;
	v->order = slab_order(slab);
	v->refcount = folio_ref_count(slab_folio(slab));
	v->kmalloc = is_kmalloc_cache(s);
	v->base = (unsigned long)slab_address(slab);
	return true;
}

/*
 * Where the kernel takes the object holding @p to start: nearest_obj() of mm/slab.h
 * (KASAN's reports, kmem_dump_obj()), whose fixup_red_left() is not exported; it moves
 * nothing for rslub's shadows (red_left_pad 0).
 */
unsigned long rslub_test_nearest_obj(const void *p)
{
	struct slab *slab = virt_to_slab(p);
	struct kmem_cache *s;
	void *object, *last;

	if (!slab)
		return 0;
	s = slab->slab_cache;
	if (s->red_left_pad)
		return 0;
	object = (void *)p - (p - slab_address(slab)) % s->size;
	last = slab_address(slab) + (slab->objects - 1) * s->size;
	return (unsigned long)(object > last ? last : object);
}

/*
 * kmem_dump_obj() (mm/slab_common.c): whether the kernel finds @obj on a slab. What it
 * prints goes on the line after one of "rslub_test_kmem_dump_obj <obj>", for the test to
 * find (rslub_test_log_has()).
 */
bool rslub_test_kmem_dump_obj(void *obj)
{
	pr_info("rslub_test_kmem_dump_obj %px\n", obj);
	return kmem_dump_obj(obj);
}

/*
 * What a user of a bvec iterator over @len bytes at @obj does to their pages (lib/
 * iov_iter.c, iov_iter_get_pages2(); NFS and Ceph direct I/O, 9p, loop over kmalloc'ed
 * buffers): takes the pages, then puts each. Returns the number of pages taken (-1 if
 * none), and in @counts the reference count of each one's folio while it was held. A
 * reference taken on a page whose count was 0 (a slab page of rslub's that the kernel
 * did not see as one) is left, not put: the put would free the page under the slab.
 */
int rslub_test_bvec_get_put(void *obj, size_t len, int *counts, int max)
{
	struct page *pages[8];
	struct bio_vec bv;
	struct iov_iter it;
	size_t off;
	ssize_t got;
	int i, n;

	if (max > ARRAY_SIZE(pages))
		max = ARRAY_SIZE(pages);
	bvec_set_virt(&bv, obj, len);
	iov_iter_bvec(&it, ITER_SOURCE, &bv, 1, len);
	got = iov_iter_get_pages2(&it, pages, len, max, &off);
	if (got <= 0)
		return -1;
	n = DIV_ROUND_UP(off + got, PAGE_SIZE);
	for (i = 0; i < n; i++)
		counts[i] = folio_ref_count(page_folio(pages[i]));
	for (i = 0; i < n; i++)
		if (counts[i] != 1)
			put_page(pages[i]);
	return n;
}

/*
 * A speculative reference on the page of @obj, as a pfn walker takes one (compaction,
 * memory failure, page_idle: folio_try_get()); false when the count is 0 (frozen).
 */
bool rslub_test_page_try_get(const void *obj)
{
	return folio_try_get(page_folio(virt_to_page(obj)));
}

/* Puts what rslub_test_page_try_get() took (folio_put(): the last put frees the page). */
void rslub_test_page_put(const void *obj)
{
	folio_put(page_folio(virt_to_page(obj)));
}

#if defined(CONFIG_MEMORY_HOTREMOVE) && defined(CONFIG_CONTIG_ALLOC)
#include <linux/memory.h>
#include <linux/sched/signal.h>

/*
 * A whole memory block (memory_block_size_bytes(), naturally aligned) taken from the
 * page allocator with alloc_contig_pages(): nothing unmovable was in it, its movable
 * pages were migrated out, and each page is now ours (count 1), to free with
 * rslub_test_free_range(). NULL if no block could be taken; *nr is its pages.
 */
struct page *rslub_test_take_memory_block(unsigned long *nr)
{
	*nr = memory_block_size_bytes() >> PAGE_SHIFT;
	return alloc_contig_pages(*nr, GFP_KERNEL | __GFP_NOWARN, numa_node_id(), NULL);
}

/* Frees @nr pages from @first, taken by rslub_test_take_memory_block(). */
void rslub_test_free_range(struct page *first, unsigned long nr)
{
	if (nr)
		free_contig_range(page_to_pfn(first), nr);
}

struct rslub_test_offline {
	char path[64];
	const char *state;
	ssize_t ret;
	struct completion done;
};

/* Writes o->state to the memory block's state file, as a user's echo does. */
static ssize_t rslub_test_block_state(struct rslub_test_offline *o)
{
	/*
	 * Through a mount of sysfs of our own: a kernel thread's root is the initial
	 * rootfs, where nothing is mounted on /sys (as rslub_test_open_debugfs()).
	 */
	struct file_system_type *t = get_fs_type("sysfs");
	struct vfsmount *mnt;
	struct file *f;
	ssize_t n;

	if (!t)
		return -ENODEV;
	mnt = vfs_kern_mount(t, SB_KERNMOUNT, "sysfs", NULL);
	if (IS_ERR(mnt))
		return PTR_ERR(mnt);
	f = file_open_root_mnt(mnt, o->path, O_WRONLY, 0);
	mntput(mnt);
	if (IS_ERR(f))
		return PTR_ERR(f);
	for (;;) {
		loff_t pos = 0;

		n = kernel_write(f, o->state, strlen(o->state), &pos);
		/*
		 * The device hotplug lock was taken: lock_device_hotplug_sysfs() asks for
		 * the write to be restarted (restart_syscall() marks a signal pending, with
		 * none queued), as the system call would be. Not after a real signal.
		 */
		if (n != -ERESTARTNOINTR || fatal_signal_pending(current))
			break;
		flush_signals(current);
	}
	filp_close(f, NULL);
	return n;
}

static int rslub_test_offline_fn(void *arg)
{
	struct rslub_test_offline *o = arg;

	/* offline_pages() retries until a signal is pending: let one in. */
	allow_signal(SIGKILL);
	o->ret = rslub_test_block_state(o);
	complete(&o->done);
	return 0;
}

/*
 * Offlines the memory block holding @page as `echo offline > .../memoryN/state` does
 * (drivers/base/memory.c, then offline_pages()), from a kernel thread, and waits @secs
 * seconds for the write to return. If it has not, offline_pages() is retrying (it does
 * until a signal comes): *spun is set, the thread gets SIGKILL and is waited for. A
 * block that went offline is onlined again. Returns what the write returned: its length
 * if the block went offline, -EBUSY if something in it is unmovable, -EINTR if it spun.
 */
int rslub_test_offline_block(struct page *page, unsigned int secs, bool *spun)
{
	struct rslub_test_offline o = { .state = "offline" };
	unsigned long id = PFN_PHYS(page_to_pfn(page)) / memory_block_size_bytes();
	struct task_struct *t;

	init_completion(&o.done);
	snprintf(o.path, sizeof(o.path), "devices/system/memory/memory%lu/state", id);
	t = kthread_create(rslub_test_offline_fn, &o, "rslub_offline");
	if (IS_ERR(t))
		return PTR_ERR(t);
	get_task_struct(t);
	wake_up_process(t);
	*spun = !wait_for_completion_timeout(&o.done, secs * HZ);
	if (*spun) {
		send_sig(SIGKILL, t, 1);
		wait_for_completion(&o.done);
	}
	put_task_struct(t);
	if (o.ret > 0) {
		o.state = "online";
		WARN_ON(rslub_test_block_state(&o) < 0);
		return (int)strlen("offline");
	}
	return o.ret;
}
#else
struct page *rslub_test_take_memory_block(unsigned long *nr)
{
	*nr = 0;
	return NULL;
}

void rslub_test_free_range(struct page *first, unsigned long nr)
{
}

int rslub_test_offline_block(struct page *page, unsigned int secs, bool *spun)
{
	*spun = false;
	return -EOPNOTSUPP;
}
#endif
