// SPDX-License-Identifier: GPL-2.0
/*
 * The test module links its own copy of rslub's C shim, plus wrappers that only the
 * suites use (declared in tests-kunit/test_shim.rs).
 */
#include "../rust/shim.c"

#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>

struct page *rslub_test_virt_to_page(const void *addr);
int rslub_test_pin_current(int cpu);
u64 rslub_test_now_ns(void);
struct task_struct *rslub_test_thread_start(int (*fn)(void *), void *arg, int cpu);
int rslub_test_thread_stop(struct task_struct *t);
void rslub_test_wait_for_stop(void);

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
