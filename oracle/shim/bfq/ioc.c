/* iosched kernel oracle: io contexts and their per-queue parts (icqs), after block/blk-ioc.c
 * of 6.12 as a scheduler sees it: a task gets its io_context on its first request
 * (ioc_find_get_icq()), each request holds a reference that finish_request drops
 * (put_io_context()), a task's exit exits its icqs (exit_icq) and drops the task's reference,
 * and the last reference frees the context, exiting icqs not yet exited. One queue. */
#include "bfq_shim.h"
#include "../oracle.h"

struct task_struct *shim_current;

static struct io_context *alloc_io_context(struct task_struct *task)
{
	struct io_context *ioc = kzalloc(sizeof(*ioc), GFP_KERNEL);
	atomic_long_set(&ioc->refcount, 1);
	atomic_set(&ioc->active_ref, 1);
	/* The task's ioprio (set_task_ioprio() before its first I/O). */
	ioc->ioprio = task->shim_ioprio;
	INIT_LIST_HEAD(&ioc->icq_list);
	ioc->shim_task = task;
	return ioc;
}

struct io_cq *ioc_lookup_icq(struct request_queue *q)
{
	struct io_context *ioc = current->io_context;
	struct io_cq *icq;

	if (!ioc)
		return NULL;
	list_for_each_entry(icq, &ioc->icq_list, ioc_node)
		if (icq->q == q)
			return icq;
	return NULL;
}

static struct io_cq *ioc_create_icq(struct request_queue *q)
{
	struct elevator_type *et = q->elevator->type;
	struct io_cq *icq = kzalloc(et->icq_size, GFP_KERNEL);

	icq->ioc = current->io_context;
	icq->q = q;
	INIT_LIST_HEAD(&icq->q_node);
	list_add(&icq->ioc_node, &icq->ioc->icq_list);
	if (et->ops.init_icq)
		et->ops.init_icq(icq);
	return icq;
}

struct io_cq *ioc_find_get_icq(struct request_queue *q)
{
	struct io_context *ioc = current->io_context;
	struct io_cq *icq = NULL;

	if (!ioc) {
		ioc = alloc_io_context(current);
		current->io_context = ioc;
	} else {
		icq = ioc_lookup_icq(q);
	}
	atomic_long_inc(&ioc->refcount);
	if (!icq)
		icq = ioc_create_icq(q);
	return icq;
}

static void ioc_exit_icq(struct io_cq *icq)
{
	struct elevator_type *et = icq->q->elevator->type;

	if (icq->flags & ICQ_EXITED)
		return;
	if (et->ops.exit_icq)
		et->ops.exit_icq(icq);
	icq->flags |= ICQ_EXITED;
}

void put_io_context(struct io_context *ioc)
{
	if (!atomic_long_dec_and_test(&ioc->refcount))
		return;
	while (!list_empty(&ioc->icq_list)) {
		struct io_cq *icq = list_first_entry(&ioc->icq_list, struct io_cq, ioc_node);
		ioc_exit_icq(icq);
		list_del_init(&icq->ioc_node);
		kfree(icq);
	}
	if (ioc->shim_task && ioc->shim_task->io_context == ioc)
		ioc->shim_task->io_context = NULL;
	kfree(ioc);
}

/* Kernel: exit_io_context(): the task is gone; requests in flight keep the context. */
void shim_exit_io_context(struct task_struct *task)
{
	struct io_context *ioc = task->io_context;
	struct io_cq *icq;

	if (!ioc)
		return;
	task->io_context = NULL;
	ioc->shim_task = NULL;
	if (atomic_dec_and_test(&ioc->active_ref)) {
		list_for_each_entry(icq, &ioc->icq_list, ioc_node)
			ioc_exit_icq(icq);
	}
	put_io_context(ioc);
}
