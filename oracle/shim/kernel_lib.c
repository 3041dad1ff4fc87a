/* iosched kernel oracle: wait queues, timers and seq_file stubs for kernel_lib.h. */
#include <stdarg.h>
#include "kernel_lib.h"
#include "oracle.h"

void add_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *e)
{
	e->flags &= ~WQ_FLAG_EXCLUSIVE;
	list_add(&e->entry, &wq->head);
}

void prepare_to_wait_exclusive(wait_queue_head_t *wq, wait_queue_entry_t *e, int state)
{
	(void)state;
	e->flags |= WQ_FLAG_EXCLUSIVE;
	if (list_empty(&e->entry))
		list_add_tail(&e->entry, &wq->head);
}

void finish_wait(wait_queue_head_t *wq, wait_queue_entry_t *e)
{
	(void)wq;
	if (!list_empty(&e->entry))
		list_del_init(&e->entry);
}

int autoremove_wake_function(wait_queue_entry_t *e, unsigned int mode, int sync, void *key)
{
	(void)mode;
	(void)sync;
	(void)key;
	list_del_init(&e->entry);
	return 1;
}

/* As __wake_up_common(): every entry's function runs until `nr` exclusive ones woke; the
 * answer is how many exclusive ones did. The next entry is read before the call, since a
 * woken entry usually takes itself off the queue. */
int wake_up_nr(wait_queue_head_t *wq, int nr)
{
	int left = nr;
	struct list_head *pos = wq->head.next, *next;
	for (; pos != &wq->head; pos = next) {
		next = pos->next;
		wait_queue_entry_t *e = list_entry(pos, wait_queue_entry_t, entry);
		unsigned int flags = e->flags;
		int ret = e->func(e, TASK_NORMAL, 0, NULL);
		if (ret < 0)
			break;
		if (ret && (flags & WQ_FLAG_EXCLUSIVE) && !--left)
			break;
	}
	return nr - left;
}

void seq_printf(struct seq_file *m, const char *fmt, ...) { (void)m; (void)fmt; }
void seq_putc(struct seq_file *m, char c) { (void)m; (void)c; }
void seq_puts(struct seq_file *m, const char *s) { (void)m; (void)s; }

/* The timers that exist (kyber has one per queue). */
static struct timer_list *timers[16];
static int ntimers;

void timer_setup(struct timer_list *t, void (*fn)(struct timer_list *), unsigned int flags)
{
	(void)flags;
	t->function = fn;
	t->pending = false;
	t->expires = 0;
	if (ntimers == (int)ARRAY_SIZE(timers))
		shim_fatal("too many timers", __FILE__, __LINE__);
	timers[ntimers++] = t;
}

static uint64_t expires_ns(unsigned long expires)
{
	return (uint64_t)(expires - INITIAL_JIFFIES) * (NSEC_PER_SEC / HZ);
}

static void arm(struct timer_list *t, unsigned long expires)
{
	t->expires = expires;
	t->pending = true;
	printf("T %llu %llu\n", (unsigned long long)shim_now_ns(),
	       (unsigned long long)expires_ns(expires));
}

/* Kernel: timer_reduce(): arm, or move a pending timer earlier, never later. */
int timer_reduce(struct timer_list *t, unsigned long expires)
{
	if (t->pending && !time_after(t->expires, expires))
		return 1;
	bool was = t->pending;
	arm(t, expires);
	return was;
}

int mod_timer(struct timer_list *t, unsigned long expires)
{
	bool was = t->pending;
	if (!was || t->expires != expires)
		arm(t, expires);
	return was;
}

int timer_shutdown_sync(struct timer_list *t)
{
	bool was = t->pending;
	t->pending = false;
	return was;
}

struct timer_list *shim_timer_next(uint64_t *at_ns)
{
	struct timer_list *best = NULL;
	for (int i = 0; i < ntimers; i++)
		if (timers[i]->pending && (!best || time_before(timers[i]->expires, best->expires)))
			best = timers[i];
	if (best)
		*at_ns = expires_ns(best->expires);
	return best;
}

void shim_timer_fire(struct timer_list *t, uint64_t now_ns)
{
	t->pending = false;
	printf("F %llu\n", (unsigned long long)now_ns);
	t->function(t);
}
