//! The harness's block layer: bios, tags, the hardware queue and the device.

use super::*;

impl Harness<'_> {
    fn bio_request(&mut self, a: &Arrival) -> Request {
        let i = self.proc_index(a.pid);
        let ioprio: IoPrio = self.sc.procs[i].ioprio;
        let id = self.next_bio;
        self.next_bio += 1;
        Request {
            id: RequestId(id),
            sector: a.sector,
            nr_sectors: a.sectors,
            op: if a.write { Op::Write } else { Op::Read },
            flags: ReqFlags {
                sync: a.sync,
                fua: a.fua,
                ..ReqFlags::default()
            },
            pid: a.pid,
            ioc: self.ioc_of(i),
            cgroup: bfq::cgroup_id(self.sc, &self.sc.procs[i].cgroup),
            ioprio,
        }
    }

    pub(super) fn submit(&mut self, a: &Arrival) {
        let bio = self.bio_request(a);
        let dir = if a.write { 'W' } else { 'R' };
        let (now, id, pid) = (self.now, bio.id.0, a.pid);
        let _ = writeln!(
            self.out,
            "Q {now} {id} {pid} {dir} {} {}",
            a.sector, a.sectors
        );
        if !a.head {
            if let Some(m) = self.dd.bio_merge_traced(&bio, now, &mut self.out) {
                let side = if m.front { 'F' } else { 'B' };
                if !self.dd.prints_merges() {
                    let _ = writeln!(self.out, "M {now} {id} {} {side}", m.into.0);
                }
                self.ride(m.into, (id, pid), m.front);
                if let Some((absorbed, into)) = m.then {
                    self.absorb(absorbed, into);
                }
                return;
            }
        }
        let shallow = self.dd.limit_depth_traced(&bio, now, &mut self.out);
        if self.waiting.is_empty() && self.tag_free(shallow) {
            self.insert(bio, a.head);
            return;
        }
        let _ = writeln!(self.out, "W {now} {id}");
        self.waiting.push((bio, shallow));
    }

    fn tag_free(&self, shallow: Option<u32>) -> bool {
        self.tags_used < self.nr_requests && shallow.is_none_or(|d| self.tags_used < d)
    }

    /// `bio` joins `into`'s chain: first for a front merge, last for a back merge (the
    /// order its processes issue their next bios in).
    fn ride(&mut self, into: RequestId, bio: (u64, u32), front: bool) {
        let r = self
            .riders
            .iter_mut()
            .find(|r| r.id == into)
            .expect("merged into a request the harness holds");
        if front {
            r.bios.insert(0, bio);
        } else {
            r.bios.push(bio);
        }
    }

    /// `absorbed` was merged into `into`: its bios move, its tag is freed.
    fn absorb(&mut self, absorbed: RequestId, into: RequestId) {
        if !self.dd.prints_merges() {
            let _ = writeln!(self.out, "A {} {} {}", self.now, absorbed.0, into.0);
        }
        let at = self
            .riders
            .iter()
            .position(|r| r.id == absorbed)
            .expect("absorbed a request the harness holds");
        let gone = self.riders.swap_remove(at);
        for bio in gone.bios {
            self.ride(into, bio, false);
        }
        self.tags_used -= 1;
    }

    fn insert(&mut self, mut rq: Request, head: bool) {
        // The io context is the submitter's when the request is made (a bio that waited for
        // a tag across its process's exit gets the new one).
        rq.ioc = self.ioc_of(self.proc_index(rq.pid));
        self.tags_used += 1;
        let _ = writeln!(self.out, "I {} {}", self.now, rq.id.0);
        self.riders.push(Riders {
            id: rq.id,
            bios: vec![(rq.id.0, rq.pid)],
        });
        for (absorbed, into) in self.dd.insert_traced(rq, head, self.now, &mut self.out) {
            self.absorb(absorbed, into);
        }
    }

    fn wake_waiters(&mut self) {
        let waiting = std::mem::take(&mut self.waiting);
        for (bio, shallow) in waiting {
            if self.tag_free(shallow) {
                self.insert(bio, false);
            } else {
                self.waiting.push((bio, shallow));
            }
        }
    }

    /// Kernel: __blk_mq_do_dispatch_sched(), with the device's free slots as driver tags.
    pub(super) fn run_queue(&mut self) {
        while self.in_device < self.sc.device.depth {
            if !self.dd.has_work() {
                break;
            }
            let Some(rq) = self.dd.dispatch(self.now, &mut self.out) else {
                if !self.rerun_pending {
                    self.rerun_pending = true;
                    let at = jiffies(self.now) + msecs_to_jiffies(3);
                    self.push(
                        (at - INITIAL_JIFFIES) * JIFFY_NS,
                        Kind::Rerun,
                        Payload::Rerun,
                    );
                }
                break;
            };
            let svc = self
                .sc
                .device
                .service_ns(rq.sector, rq.nr_sectors, self.last_end);
            self.last_end = rq.end_sector();
            self.in_device += 1;
            let now = self.now;
            let _ = writeln!(
                self.out,
                "D {now} {} {} {}",
                rq.id.0, rq.sector, rq.nr_sectors
            );
            self.push(now + svc, Kind::Complete, Payload::Complete(rq));
        }
    }

    pub(super) fn complete(&mut self, rq: &Request) {
        self.in_device -= 1;
        let _ = writeln!(self.out, "C {} {}", self.now, rq.id.0);
        let at = self
            .riders
            .iter()
            .position(|r| r.id == rq.id)
            .expect("completed a request the harness holds");
        let done = self.riders.swap_remove(at);
        for (_, pid) in done.bios {
            let i = self.proc_index(pid);
            let spec = &self.sc.procs[i];
            let t = self.now + spec.think_ns;
            let p = &self.procs[i];
            if spec.depth > 0 && !p.exited && t < p.stop_abs && t < self.end_abs {
                self.issue_next(i, t);
            }
        }
        self.dd.complete(rq, self.now, &mut self.out);
        self.tags_used -= 1;
        self.wake_waiters();
    }
}
