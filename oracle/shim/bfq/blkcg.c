/* iosched kernel oracle: blkcg for one disk, after block/blk-cgroup.c of 6.12 as a policy sees
 * it: cgroups (blkcgs) with per-policy data (cpd), the disk's blkg per cgroup created on the
 * first bio from that cgroup, parents first (blkg_create(): pd_alloc, pd_init, linked into
 * the blkcg's and the queue's lists, pd_online, online), and policy activation for the
 * blkgs that exist (the root's). Cgroups are never removed during a run. */
#include "bfq_shim.h"

static struct blkcg_policy *policies[BLKCG_MAX_POLS];
static struct blkcg *blkcgs[65];
static int nblkcgs;
static u64 next_serial = 1;
struct cgroup_subsys io_cgrp_subsys;

static struct blkcg_policy_data *alloc_cpd(struct blkcg *blkcg, struct blkcg_policy *pol)
{
	struct blkcg_policy_data *cpd = pol->cpd_alloc_fn(GFP_KERNEL);
	if (!cpd)
		shim_fatal("cpd_alloc_fn failed", __FILE__, __LINE__);
	cpd->blkcg = blkcg;
	cpd->plid = pol->plid;
	return cpd;
}

int blkcg_policy_register(struct blkcg_policy *pol)
{
	for (int i = 0; i < BLKCG_MAX_POLS; i++) {
		if (policies[i])
			continue;
		pol->plid = i;
		policies[i] = pol;
		for (int k = 0; k < nblkcgs; k++)
			if (pol->cpd_alloc_fn)
				blkcgs[k]->cpd[i] = alloc_cpd(blkcgs[k], pol);
		return 0;
	}
	return -ENOSPC;
}

void blkcg_policy_unregister(struct blkcg_policy *pol)
{
	policies[pol->plid] = NULL;
}

/* A cgroup below `parent` (NULL: the root), named by its path. */
struct blkcg *shim_blkcg_create(struct blkcg *parent, const char *path)
{
	if (nblkcgs == (int)ARRAY_SIZE(blkcgs))
		shim_fatal("too many cgroups", __FILE__, __LINE__);
	struct blkcg *b = kzalloc(sizeof(*b), GFP_KERNEL);
	b->shim_parent = parent;
	b->shim_cgroup.level = parent ? parent->shim_cgroup.level + 1 : 0;
	b->css.cgroup = &b->shim_cgroup;
	b->css.parent = parent ? &parent->css : NULL;
	b->css.serial_nr = next_serial++;
	snprintf(b->shim_path, sizeof(b->shim_path), "%s", path[0] ? path : "/");
	for (int i = 0; i < BLKCG_MAX_POLS; i++)
		if (policies[i] && policies[i]->cpd_alloc_fn)
			b->cpd[i] = alloc_cpd(b, policies[i]);
	blkcgs[nblkcgs++] = b;
	return b;
}

struct blkcg *shim_blkcg_find(const char *path)
{
	const char *want = path[0] ? path : "/";
	for (int i = 0; i < nblkcgs; i++)
		if (!strcmp(blkcgs[i]->shim_path, want))
			return blkcgs[i];
	return NULL;
}

static struct blkcg_gq *blkg_lookup(struct blkcg *blkcg, struct request_queue *q)
{
	struct blkcg_gq *blkg;
	hlist_for_each_entry(blkg, &blkcg->blkg_list, blkcg_node)
		if (blkg->q == q)
			return blkg;
	return NULL;
}

static void pd_attach(struct blkcg_gq *blkg, struct blkcg_policy *pol)
{
	struct blkg_policy_data *pd = pol->pd_alloc_fn(blkg->q->disk, blkg->blkcg, GFP_KERNEL);
	if (!pd)
		shim_fatal("pd_alloc_fn failed", __FILE__, __LINE__);
	pd->blkg = blkg;
	pd->plid = pol->plid;
	blkg->pd[pol->plid] = pd;
}

/* Kernel: blkg_create(), for the policies enabled on the queue (`enabled`). */
static unsigned long enabled;
static struct blkcg_gq *blkg_create(struct blkcg *blkcg, struct request_queue *q,
				    struct blkcg_gq *parent)
{
	struct blkcg_gq *blkg = kzalloc(sizeof(*blkg), GFP_KERNEL);
	blkg->q = q;
	blkg->blkcg = blkcg;
	blkg->parent = parent;
	blkg->refcnt = 1;
	INIT_LIST_HEAD(&blkg->q_node);
	INIT_HLIST_NODE(&blkg->blkcg_node);
	if (parent)
		blkg_get(parent);
	for (int i = 0; i < BLKCG_MAX_POLS; i++)
		if (policies[i] && test_bit(i, &enabled))
			pd_attach(blkg, policies[i]);
	for (int i = 0; i < BLKCG_MAX_POLS; i++)
		if (blkg->pd[i] && policies[i]->pd_init_fn)
			policies[i]->pd_init_fn(blkg->pd[i]);
	hlist_add_head(&blkg->blkcg_node, &blkcg->blkg_list);
	list_add(&blkg->q_node, &q->blkg_list);
	for (int i = 0; i < BLKCG_MAX_POLS; i++) {
		if (!blkg->pd[i])
			continue;
		if (policies[i]->pd_online_fn)
			policies[i]->pd_online_fn(blkg->pd[i]);
		blkg->pd[i]->online = true;
	}
	blkg->online = true;
	return blkg;
}

/* Kernel: blkg_lookup_create(): the missing ancestors are created first, top down. */
struct blkcg_gq *shim_blkg_lookup_create(struct blkcg *blkcg, struct request_queue *q)
{
	struct blkcg_gq *blkg = blkg_lookup(blkcg, q);
	if (blkg)
		return blkg;
	struct blkcg_gq *parent = NULL;
	if (blkcg->shim_parent)
		parent = shim_blkg_lookup_create(blkcg->shim_parent, q);
	blkg = blkg_create(blkcg, q, parent);
	if (!blkcg->shim_parent)
		q->root_blkg = blkg;
	return blkg;
}

int blkcg_activate_policy(struct gendisk *disk, const struct blkcg_policy *pol)
{
	struct request_queue *q = disk->queue;
	struct blkcg_gq *blkg;

	if (test_bit(pol->plid, &enabled))
		return 0;
	struct blkcg_policy *p = policies[pol->plid];
	list_for_each_entry(blkg, &q->blkg_list, q_node)
		pd_attach(blkg, p);
	list_for_each_entry(blkg, &q->blkg_list, q_node) {
		if (p->pd_init_fn)
			p->pd_init_fn(blkg->pd[p->plid]);
		if (p->pd_online_fn)
			p->pd_online_fn(blkg->pd[p->plid]);
		blkg->pd[p->plid]->online = true;
	}
	set_bit(pol->plid, &enabled);
	return 0;
}

void blkcg_deactivate_policy(struct gendisk *disk, const struct blkcg_policy *pol)
{
	(void)disk;
	clear_bit(pol->plid, &enabled);
}

void bio_associate_blkg_from_css(struct bio *bio, struct cgroup_subsys_state *css)
{
	struct request_queue *q = shim_current_queue();
	bio->bi_blkg = shim_blkg_lookup_create(css_to_blkcg(css), q);
}

/* The rest of blkcg's interface serves cgroup files the oracle never reads, or per-device
 * weights (`MAJ:MIN W`) it never writes: reaching one is a bug in the scenario's use. */
void blkg_conf_init(struct blkg_conf_ctx *ctx, char *input)
{
	ctx->input = input;
	ctx->body = input;
	ctx->blkg = NULL;
}
int blkg_conf_prep(struct blkcg *blkcg, const struct blkcg_policy *pol, struct blkg_conf_ctx *ctx)
{
	(void)blkcg;
	(void)pol;
	(void)ctx;
	return -EINVAL;
}
void blkg_conf_exit(struct blkg_conf_ctx *ctx) { (void)ctx; }
void blkcg_print_blkgs(struct seq_file *sf, struct blkcg *blkcg,
		       u64 (*prfill)(struct seq_file *, struct blkg_policy_data *, int),
		       const struct blkcg_policy *pol, int data, bool show_total)
{
	(void)sf, (void)blkcg, (void)prfill, (void)pol, (void)data, (void)show_total;
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
}
u64 __blkg_prfill_u64(struct seq_file *sf, struct blkg_policy_data *pd, u64 v)
{
	(void)sf, (void)pd, (void)v;
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
	return 0;
}
u64 __blkg_prfill_rwstat(struct seq_file *sf, struct blkg_policy_data *pd,
			 const struct blkg_rwstat_sample *rwstat)
{
	return __blkg_prfill_u64(sf, pd, rwstat->cnt[0]);
}
u64 blkg_prfill_rwstat(struct seq_file *sf, struct blkg_policy_data *pd, int off)
{
	return __blkg_prfill_u64(sf, pd, (u64)off);
}
void blkg_rwstat_recursive_sum(struct blkcg_gq *blkg, struct blkcg_policy *pol, int off,
			       struct blkg_rwstat_sample *sum)
{
	(void)blkg, (void)pol, (void)off, (void)sum;
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
}
struct cgroup_subsys_state *seq_css(struct seq_file *sf)
{
	(void)sf;
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
	return NULL;
}
struct cftype *seq_cft(struct seq_file *sf)
{
	(void)sf;
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
	return NULL;
}
struct blkcg_gq *shim_fatal_blkg_walk(void)
{
	shim_fatal("cgroup files are not read by the oracle", __FILE__, __LINE__);
	return NULL;
}
