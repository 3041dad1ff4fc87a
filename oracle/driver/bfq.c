/* iosched kernel oracle: BFQ's part of the driver. The scenario's cgroups become blkcgs (with
 * their initial bfq.weight), its processes tasks (pid, nice, ioprio, cgroup); the task that
 * submits a bio is `current` while the block layer and BFQ handle it; a process's exit exits
 * its io context; `cgweight` writes a cgroup's bfq.weight file; an hrtimer's expiry calls its
 * function. Requests get names for BFQ's messages. */
#include "scenario.h"
#include "../shim/bfq/bfq_shim.h"

static struct task_struct tasks[MAX_ITEMS];
static struct task_struct kworker;
static int ntasks;
static struct request_queue *the_queue;
static struct gendisk disk;
extern struct blkcg_policy blkcg_policy_bfq;

struct request_queue *shim_current_queue(void)
{
	return the_queue;
}

static struct task_struct *task_of(uint32_t pid)
{
	for (int i = 0; i < ntasks; i++)
		if ((uint32_t)tasks[i].pid == pid)
			return &tasks[i];
	shim_fatal("no task for a pid", __FILE__, __LINE__);
	return NULL;
}

/* Writes `value` to the cgroup's bfq.weight file; its result and the weight now shown. */
static int write_weight(struct blkcg *blkcg, const char *value, char *shown)
{
	for (struct cftype *cft = blkcg_policy_bfq.dfl_cftypes; cft->name[0]; cft++) {
		if (strcmp(cft->name, "bfq.weight"))
			continue;
		struct kernfs_open_file of = { &blkcg->css };
		char buf[64];
		snprintf(buf, sizeof(buf), "%s\n", value);
		ssize_t r = cft->write(&of, buf, strlen(buf), 0);
		/* struct bfq_group_data's weight: the cgroup's default, as bfq.weight shows it. */
		struct { struct blkcg_policy_data pd; unsigned int weight; } *d =
			(void *)blkcg->cpd[blkcg_policy_bfq.plid];
		sprintf(shown, "%u", d->weight);
		return r < 0 ? (int)r : 0;
	}
	shim_fatal("no bfq.weight file", __FILE__, __LINE__);
	return -EINVAL;
}

int shim_store_extra(const struct sc_tunable *tu, char *shown)
{
	if (!tu->path[0])
		return -ENOENT;
	return write_weight(shim_blkcg_find(tu->path), tu->value, shown);
}

void shim_sched_setup(struct scenario *sc, struct request_queue *q)
{
	the_queue = q;
	disk.queue = q;
	disk.capacity = sc->device.capacity;
	q->disk = &disk;
	INIT_LIST_HEAD(&q->blkg_list);
	struct blkcg *root = shim_blkcg_create(NULL, "");
	shim_blkg_lookup_create(root, q);
	for (int i = 0; i < sc->ncgroups; i++) {
		char parent[64];
		strcpy(parent, sc->cgroups[i].path);
		*strrchr(parent, '/') = '\0';
		shim_blkcg_create(shim_blkcg_find(parent), sc->cgroups[i].path);
	}
	for (int i = 0; i < sc->nprocs; i++) {
		const struct sc_proc *p = &sc->procs[i];
		tasks[i] = (struct task_struct){ .pid = (pid_t)p->pid, .nice = p->nice,
						 .shim_blkcg = shim_blkcg_find(p->cgroup),
						 .shim_ioprio = p->ioprio };
	}
	ntasks = sc->nprocs;
	kworker.shim_blkcg = root;
	shim_current = &kworker;
}

/* After init_sched: the initial weights are written as a user would, before any I/O. */
void shim_sched_ready(struct scenario *sc)
{
	char shown[64];
	for (int i = 0; i < sc->ncgroups; i++) {
		if (!sc->cgroups[i].weight)
			continue;
		char value[16];
		snprintf(value, sizeof(value), "%u", sc->cgroups[i].weight);
		if (write_weight(shim_blkcg_find(sc->cgroups[i].path), value, shown))
			fprintf(stderr, "kernel-oracle: weight %s of %s refused\n", value,
				sc->cgroups[i].path);
	}
}

void shim_task_enter(uint32_t pid)
{
	shim_current = task_of(pid);
}

void shim_task_exit(uint32_t pid)
{
	shim_current = task_of(pid);
	shim_exit_io_context(shim_current);
	shim_current = &kworker;
}

/* Kernel: bio_associate_blkg(): the submitting task's cgroup. */
void shim_bio_init(struct bio *bio)
{
	bio->bi_blkg = shim_blkg_lookup_create(current->shim_blkcg, the_queue);
}

void shim_hrtimer_event(void *timer, uint64_t generation)
{
	shim_current = &kworker;
	shim_hrtimer_expire(timer, generation);
}

void shim_request_born(struct request *rq)
{
	shim_name(rq, "r", rq->shim_id);
}

void shim_request_gone(struct request *rq)
{
	shim_forget(rq);
}
