/* iosched kernel oracle: the kernel library facilities lib/sbitmap.c (with its header
 * include/linux/sbitmap.h) and the kyber scheduler use, for one CPU and one thread: atomics,
 * bit operations, wait queues, per-cpu data, jiffies timers. Written for the oracle from the
 * kernel's documented interfaces; no kernel code. */
#ifndef SHIM_KERNEL_LIB_H
#define SHIM_KERNEL_LIB_H

#include "base.h"
#include "list.h"
#include "jiffies.h"

#define NSEC_PER_MSEC 1000000L
#define ____cacheline_aligned_in_smp
#define __percpu
#define data_race(x) (x)
#define smp_mb() barrier()
#define smp_mb__before_atomic() barrier()
#define smp_mb__after_atomic() barrier()
#define might_sleep() ((void)0)
#define BUILD_BUG_ON(c) ((void)sizeof(char[1 - 2 * !!(c)]))
#define BIT(n) (1UL << (n))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define clamp_val(v, lo, hi) clamp_t(__typeof__(v), v, lo, hi)
#define ilog2(n) ((int)(63 - __builtin_clzll((unsigned long long)(n))))
#define div64_u64(a, b) ((u64)(a) / (u64)(b))
/* do_div(n, base): n becomes the quotient, the remainder is the value. */
#define do_div(n, base) ({ u32 __rem = (u32)((n) % (base)); (n) /= (base); __rem; })
#define ERR_PTR(e) ((void *)(long)(e))
#define PTR_ERR(p) ((long)(p))
#define IS_ERR(p) ((unsigned long)(p) >= (unsigned long)-4095)
#define __GFP_ZERO 0u
#define kmalloc_node(n, gfp, node) kzalloc_node(n, gfp, node)
#define kvzalloc_node(n, gfp, node) kzalloc_node(n, gfp, node)
#define kmalloc_array_node(n, size, gfp, node) kzalloc_node((n) * (size), gfp, node)
#define kvfree(p) free((void *)(p))

/* Locks: one thread. `guard(raw_spinlock_irqsave)(&lock);` becomes a no-op expression. */
typedef spinlock_t raw_spinlock_t;
#define raw_spin_lock_init(l) ((void)(l))
#define guard(kind) (void)

/* Atomics beyond base.h's. */
typedef struct { long counter; } atomic_long_t;
#define xchg(p, v) ({ __typeof__(*(p)) __old = *(p); *(p) = (v); __old; })
#define atomic_xchg(a, v) xchg(&(a)->counter, v)
#define atomic_add(n, a) ((void)((a)->counter += (n)))
#define atomic_cmpxchg(a, old, new) \
	({ int __c = (a)->counter; if (__c == (old)) (a)->counter = (new); __c; })
#define shim_try_cmpxchg(p, oldp, new) \
	({ bool __ok = *(p) == *(oldp); if (__ok) *(p) = (new); else *(oldp) = *(p); __ok; })
#define atomic_try_cmpxchg(a, oldp, new) shim_try_cmpxchg(&(a)->counter, oldp, new)
#define atomic_long_try_cmpxchg(a, oldp, new) \
	shim_try_cmpxchg((unsigned long *)&(a)->counter, oldp, new)
#define atomic_long_andnot(mask, a) ((void)((a)->counter &= ~(long)(mask)))

/* Bit operations on unsigned long words. */
static inline void set_bit(unsigned int nr, unsigned long *addr) { addr[nr / 64] |= 1UL << (nr % 64); }
static inline void clear_bit(unsigned int nr, unsigned long *addr) { addr[nr / 64] &= ~(1UL << (nr % 64)); }
static inline bool test_bit(unsigned int nr, const unsigned long *addr) { return (addr[nr / 64] >> (nr % 64)) & 1; }
static inline bool test_and_set_bit_lock(unsigned int nr, unsigned long *addr)
{
	bool was = test_bit(nr, addr);
	set_bit(nr, addr);
	return was;
}
#define clear_bit_unlock(nr, addr) clear_bit(nr, addr)
static inline unsigned long shim_find_next(const unsigned long *addr, unsigned long size,
					   unsigned long offset, bool want)
{
	for (unsigned long i = offset; i < size; i++)
		if (test_bit(i, addr) == want)
			return i;
	return size;
}
#define find_next_zero_bit(addr, size, off) shim_find_next(addr, size, off, false)
#define find_next_bit(addr, size, off) shim_find_next(addr, size, off, true)
#define find_first_zero_bit(addr, size) shim_find_next(addr, size, 0, false)
static inline unsigned int bitmap_weight(const unsigned long *addr, unsigned int nbits)
{
	unsigned int w = 0;
	for (unsigned int i = 0; i < nbits; i++)
		w += test_bit(i, addr);
	return w;
}

/* List helpers beyond list.h's (macros, so that list.h may grow the same names). */
static inline void shim_list_splice_tail_init(struct list_head *list, struct list_head *head)
{
	if (list_empty(list))
		return;
	struct list_head *first = list->next, *last = list->prev, *at = head->prev;
	at->next = first;
	first->prev = at;
	last->next = head;
	head->prev = last;
	INIT_LIST_HEAD(list);
}
#ifndef list_splice_tail_init
#define list_splice_tail_init(list, head) shim_list_splice_tail_init(list, head)
#endif

/* Wait queues: entries are woken by calling their function, as __wake_up_common() does. */
struct wait_queue_entry;
typedef int (*wait_queue_func_t)(struct wait_queue_entry *, unsigned int, int, void *);
typedef struct wait_queue_entry {
	unsigned int flags;
	void *private;
	wait_queue_func_t func;
	struct list_head entry;
} wait_queue_entry_t;
#define WQ_FLAG_EXCLUSIVE 0x01
typedef struct wait_queue_head {
	spinlock_t lock;
	struct list_head head;
} wait_queue_head_t;
#define TASK_NORMAL 3
static inline void init_waitqueue_head(wait_queue_head_t *wq) { INIT_LIST_HEAD(&wq->head); }
static inline void init_waitqueue_func_entry(wait_queue_entry_t *e, wait_queue_func_t fn)
{
	e->flags = 0;
	e->private = NULL;
	e->func = fn;
}
static inline bool waitqueue_active(wait_queue_head_t *wq) { return !list_empty(&wq->head); }
void add_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *e);
void prepare_to_wait_exclusive(wait_queue_head_t *wq, wait_queue_entry_t *e, int state);
void finish_wait(wait_queue_head_t *wq, wait_queue_entry_t *e);
int autoremove_wake_function(wait_queue_entry_t *e, unsigned int mode, int sync, void *key);
/* Wakes non-exclusive entries and up to `nr` exclusive ones; how many exclusive woke. */
int wake_up_nr(wait_queue_head_t *wq, int nr);
#define wake_up(wq) ((void)wake_up_nr(wq, 1))

/* Per-cpu data and the CPU: one CPU, number 0, so a per-cpu object is one object. */
#define alloc_percpu_gfp(type, gfp) ((type *)kzalloc(sizeof(type), gfp))
#define free_percpu(p) free((void *)(p))
#define per_cpu_ptr(p, cpu) ((void)(cpu), (p))
#define get_cpu_ptr(p) (p)
#define raw_cpu_ptr(p) (p)
#define put_cpu_ptr(p) ((void)(p))
#define get_cpu() 0
#define put_cpu() ((void)0)
#define this_cpu_read(x) (x)
#define this_cpu_write(x, v) ((x) = (v))
#define raw_smp_processor_id() 0
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < 1; (cpu)++)

/* Randomness: sbitmap draws a random allocation hint. Choice: the oracle draws 0, so the
 * runs are deterministic; iosched's core models the same draw. */
static inline u32 get_random_u32_below(u32 ceil) { (void)ceil; return 0; }

/* seq_file: only the debugfs show functions use it, and nothing calls them. */
struct seq_file;
void seq_printf(struct seq_file *m, const char *fmt, ...);
void seq_putc(struct seq_file *m, char c);
void seq_puts(struct seq_file *m, const char *s);

/* Timers on jiffies (kernel/time/timer.c's interface). A pending timer fires when jiffies
 * reaches `expires`; the driver asks for the next one (shim_timer_next()) and runs it. */
struct timer_list {
	unsigned long expires;
	void (*function)(struct timer_list *);
	bool pending;
};
#define from_timer(var, t, field) container_of(t, __typeof__(*var), field)
void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *), unsigned int flags);
int timer_reduce(struct timer_list *t, unsigned long expires);
int mod_timer(struct timer_list *t, unsigned long expires);
int timer_shutdown_sync(struct timer_list *t);
#define del_timer_sync(t) timer_shutdown_sync(t)
/* The earliest pending timer (NULL when none) and its expiry in ns of the oracle's clock. */
struct timer_list *shim_timer_next(uint64_t *at_ns);
/* Runs `t`'s function: it is due now. */
void shim_timer_fire(struct timer_list *t, uint64_t now_ns);

#endif
