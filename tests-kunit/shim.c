// SPDX-License-Identifier: GPL-2.0
/*
 * The test module links its own copy of rslub's C shim, plus wrappers that only the
 * suites use (declared in tests-kunit/test_shim.rs).
 */
#include "../rust/shim.c"

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>

/* A pinned timer that calls fn(arg) in softirq context on one CPU every jiffy. */
struct rslub_test_tick {
	struct timer_list timer;
	void (*fn)(void *arg);
	void *arg;
	bool stop;
};

struct page *rslub_test_virt_to_page(const void *addr);
int rslub_test_pin_current(int cpu);
u64 rslub_test_now_ns(void);
struct task_struct *rslub_test_thread_start(int (*fn)(void *), void *arg, int cpu);
int rslub_test_thread_stop(struct task_struct *t);
void rslub_test_wait_for_stop(void);
struct rslub_test_tick *rslub_test_tick_start(void (*fn)(void *), void *arg, int cpu);
void rslub_test_tick_stop(struct rslub_test_tick *k);

struct page *rslub_test_virt_to_page(const void *addr)
{
	return virt_to_page(addr);
}

int rslub_test_pin_current(int cpu)
{
	if (cpu < 0)
		return set_cpus_allowed_ptr(current, cpu_possible_mask);
	return set_cpus_allowed_ptr(current, cpumask_of(cpu));
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
