//! End-to-end simulator properties: determinism, accounting, completion exactly once.

use iosched_core::{NoTrace, Request, RequestId, RqEvent, Time, Trace};
use iosched_sim::device::fixed::{FixedDevice, FixedParams};
use iosched_sim::device::preset;
use iosched_sim::{SimConfig, Simulation};
use iosched_workload::{IoEngine, JobSpec, RwMode, SizeOrPercent};
use proptest::prelude::*;

fn reader(name: &str, rw: RwMode, size: u64) -> JobSpec {
    let mut spec = JobSpec::new(name);
    spec.rw = rw;
    spec.size = Some(SizeOrPercent::Bytes(size));
    spec.direct = true;
    spec
}

fn run(jobs: &[JobSpec], scheduler: &str, seed: u64) -> iosched_sim::SimOutcome {
    let config = SimConfig {
        scheduler: scheduler.to_string(),
        seed,
        check: true,
        ..SimConfig::default()
    };
    Simulation::new(jobs, preset("fixed").unwrap(), config)
        .unwrap()
        .run(&mut NoTrace, &mut |_| {})
        .unwrap()
}

/// Records every lifecycle event, to check each request's story from outside.
#[derive(Default)]
struct Witness {
    events: Vec<(Time, RqEvent, RequestId)>,
}

impl Trace for Witness {
    fn enabled(&self) -> bool {
        true
    }
    fn request(&mut self, now: Time, event: RqEvent, rq: &Request) {
        // Plug and unplug belong to the submitter's batch, not to one request's story.
        if !matches!(event, RqEvent::Plug | RqEvent::Unplug) {
            self.events.push((now, event, rq.id));
        }
    }
}

#[test]
fn two_jobs_move_their_bytes_through_noop_and_deadline() {
    let mut random = reader("rand", RwMode::RandRead, 4 << 20);
    random.cgroup = Some("b".into());
    let jobs = [reader("seq", RwMode::Read, 4 << 20), random];
    for scheduler in ["noop", "deadline"] {
        let outcome = run(&jobs, scheduler, 7);
        for stats in &outcome.clones {
            assert_eq!(stats.dirs[0].io_bytes, 4 << 20, "{scheduler}");
        }
        assert_eq!(outcome.disk.read_sectors * 512, 8 << 20);
        assert_eq!(outcome.clone_cgroups, ["/", "/b"]);
    }
}

#[test]
fn same_seed_same_result_different_seed_different_offsets() {
    let jobs = [reader("rand", RwMode::RandRead, 1 << 20)];
    let a = run(&jobs, "deadline", 3);
    let b = run(&jobs, "deadline", 3);
    assert_eq!(format!("{:?}", a.clones), format!("{:?}", b.clones));
    assert_eq!(a.sim_time_ns, b.sim_time_ns);
    assert_eq!(a.events, b.events);
}

#[test]
fn stonewall_runs_jobs_one_after_another() {
    let first = reader("first", RwMode::Read, 1 << 20);
    let mut second = reader("second", RwMode::Read, 1 << 20);
    second.stonewall = true;
    let outcome = run(&[first, second], "noop", 1);
    let first_end = outcome.clones[0].end_ns;
    assert!(outcome.clones[1].start_ns >= first_end);
}

#[test]
fn missing_size_is_reported_not_panicked() {
    let spec = JobSpec::new("nosize");
    let error = Simulation::new(&[spec], preset("fixed").unwrap(), SimConfig::default())
        .err()
        .expect("a job without size must be refused");
    assert!(error.to_string().contains("size="), "{error}");
}

#[test]
fn unknown_tunable_is_refused() {
    let jobs = [reader("r", RwMode::Read, 1 << 20)];
    let config = SimConfig {
        scheduler: "deadline".into(),
        tunables: vec![("nosuch".into(), "1".into())],
        ..SimConfig::default()
    };
    let error = Simulation::new(&jobs, preset("fixed").unwrap(), config)
        .err()
        .expect("unknown tunable");
    assert!(error.to_string().contains("nosuch"));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Every request is queued, issued and completed exactly once, in that order, and the
    /// bytes the jobs report add up to what the device saw.
    #[test]
    fn every_request_completes_exactly_once(
        seed in 0u64..1000,
        jobs_spec in proptest::collection::vec((0usize..4, 1u32..9, 1u64..64, 0usize..3), 1..4),
        scheduler in prop_oneof![Just("noop"), Just("deadline")],
        units in 1u32..4,
    ) {
        let jobs: Vec<JobSpec> = jobs_spec.iter().enumerate().map(|(i, &(mode, depth, blocks, bs))| {
            let rw = [RwMode::Read, RwMode::RandRead, RwMode::Write, RwMode::RandRw][mode];
            let mut spec = reader(&format!("j{i}"), rw, blocks * 64 * 1024);
            spec.ioengine = IoEngine::Libaio;
            spec.iodepth = depth;
            spec.iodepth_low = depth;
            spec.bs = [4096u64, 16384, 65536].map(|_| iosched_workload::BlockSizes::Fixed([4096u64, 16384, 65536][bs]));
            spec
        }).collect();
        let device = FixedDevice::new(FixedParams { units, queue_depth: 8, ..FixedParams::default() });
        let config = SimConfig { scheduler: scheduler.to_string(), seed, check: true, ..SimConfig::default() };
        let mut witness = Witness::default();
        let outcome = Simulation::new(&jobs, Box::new(device), config).unwrap()
            .run(&mut witness, &mut |_| {}).unwrap();

        let mut stories: std::collections::BTreeMap<RequestId, Vec<RqEvent>> = Default::default();
        for (_, event, id) in &witness.events {
            stories.entry(*id).or_default().push(*event);
        }
        for (id, story) in &stories {
            // Either a request of its own, or a bio merged into one (which completes with it).
            // (A submitter that found its request list full sleeps, `S`, before `G`.)
            let story: Vec<RqEvent> = story.iter().copied().filter(|e| *e != RqEvent::SleepRq).collect();
            let own = [RqEvent::Queue, RqEvent::GetRq, RqEvent::Insert, RqEvent::Issue, RqEvent::Complete];
            let back = [RqEvent::Queue, RqEvent::BackMerge];
            let front = [RqEvent::Queue, RqEvent::FrontMerge];
            prop_assert!(story.as_slice() == own || story.as_slice() == back || story.as_slice() == front,
                "request {:?}: {:?}", id, story);
        }
        let times: Vec<Time> = witness.events.iter().map(|(t, _, _)| *t).collect();
        prop_assert!(times.windows(2).all(|w| w[0] <= w[1]), "time ran backwards");
        let job_bytes: u64 = outcome.clones.iter()
            .map(|s| s.dirs.iter().map(|d| d.io_bytes).sum::<u64>()).sum();
        let device_bytes = (outcome.disk.read_sectors + outcome.disk.write_sectors) * 512;
        prop_assert_eq!(job_bytes, device_bytes);
        let expected: u64 = jobs.iter().map(|j| match j.size { Some(SizeOrPercent::Bytes(b)) => b, _ => 0 }).sum();
        prop_assert!(job_bytes >= expected);
    }
}

/// The legacy block layer's request list: a job at iodepth 256 gets `nr_requests` requests,
/// the last of which makes it a batcher allowed 31 more, then sleeps (`S`) until requests
/// come back below the limit; every I/O still completes, each request once.
#[test]
fn deep_queue_sleeps_on_the_request_list() {
    let mut spec = reader("deep", RwMode::RandRead, 8 << 20);
    spec.ioengine = IoEngine::Libaio;
    spec.iodepth = 256;
    spec.iodepth_low = 256;
    let cases = [("noop", 128), ("deadline", 128), ("cfq", 128), ("cfq", 64)];
    for (scheduler, nr_requests) in cases {
        let device = FixedDevice::new(FixedParams {
            units: 1,
            queue_depth: 32,
            ..FixedParams::default()
        });
        let config = SimConfig {
            scheduler: scheduler.to_string(),
            check: true,
            fs_knobs: vec![("nr_requests".into(), nr_requests.to_string())],
            ..SimConfig::default()
        };
        let mut witness = Witness::default();
        let outcome = Simulation::new(std::slice::from_ref(&spec), Box::new(device), config)
            .unwrap()
            .run(&mut witness, &mut |_| {})
            .unwrap();
        let (mut live, mut most, mut sleeps) = (0i64, 0i64, 0);
        for (_, event, _) in &witness.events {
            match event {
                RqEvent::GetRq => live += 1,
                RqEvent::Complete => live -= 1,
                RqEvent::SleepRq => sleeps += 1,
                _ => {}
            }
            most = most.max(live);
        }
        assert_eq!(
            most,
            nr_requests + 31,
            "{scheduler}: requests in use at once"
        );
        assert!(sleeps > 0, "{scheduler}");
        assert_eq!(live, 0, "{scheduler}");
        assert_eq!(outcome.clones[0].dirs[0].io_bytes, 8 << 20, "{scheduler}");
    }
}

/// Runs `spec` alone through `scheduler` on a one-unit, depth-1 device, so bios queue up in
/// the scheduler where they can merge.
fn run_queued(spec: &JobSpec, scheduler: &str) -> iosched_sim::SimOutcome {
    let device = FixedDevice::new(FixedParams {
        units: 1,
        queue_depth: 1,
        ..FixedParams::default()
    });
    let config = SimConfig {
        scheduler: scheduler.to_string(),
        check: true,
        ..SimConfig::default()
    };
    Simulation::new(std::slice::from_ref(spec), Box::new(device), config)
        .unwrap()
        .run(&mut NoTrace, &mut |_| {})
        .unwrap()
}

fn depth8(spec: &mut JobSpec) {
    spec.ioengine = IoEngine::Libaio;
    spec.iodepth = 8;
    spec.iodepth_low = 8;
}

/// A sequential reader at depth 8 hands the scheduler contiguous bios: they merge into
/// larger requests (fewer device I/Os, counted as merges), and every byte still arrives.
#[test]
fn sequential_bios_back_merge_into_larger_requests() {
    let mut spec = reader("seq", RwMode::Read, 4 << 20);
    depth8(&mut spec);
    for scheduler in ["noop", "deadline", "cfq"] {
        let outcome = run_queued(&spec, scheduler);
        let job_ios = outcome.clones[0].dirs[0].total_ios;
        assert_eq!(job_ios, 1024, "{scheduler}");
        assert!(outcome.disk.read_merges > 0, "{scheduler}: no merges");
        assert_eq!(
            outcome.disk.read_ios + outcome.disk.read_merges,
            job_ios,
            "{scheduler}"
        );
        assert_eq!(outcome.disk.read_sectors * 512, 4 << 20, "{scheduler}");
    }
}

/// Each process batch is plugged once and unplugged once, around its requests.
#[test]
fn submissions_are_bracketed_by_plug_and_unplug() {
    #[derive(Default)]
    struct Plugs(Vec<RqEvent>);
    impl Trace for Plugs {
        fn enabled(&self) -> bool {
            true
        }
        fn request(&mut self, _now: Time, event: RqEvent, _rq: &Request) {
            if matches!(event, RqEvent::Plug | RqEvent::Unplug | RqEvent::Insert) {
                self.0.push(event);
            }
        }
    }
    let mut spec = reader("batch", RwMode::RandRead, 1 << 20);
    spec.ioengine = IoEngine::Libaio;
    spec.iodepth = 4;
    spec.iodepth_low = 4;
    let mut plugs = Plugs::default();
    Simulation::new(&[spec], preset("fixed").unwrap(), SimConfig::default())
        .unwrap()
        .run(&mut plugs, &mut |_| {})
        .unwrap();
    // The first batch: P, four inserts, U.
    assert_eq!(
        &plugs.0[..6],
        [
            RqEvent::Plug,
            RqEvent::Insert,
            RqEvent::Insert,
            RqEvent::Insert,
            RqEvent::Insert,
            RqEvent::Unplug
        ]
    );
    let plugs_count = plugs.0.iter().filter(|e| **e == RqEvent::Plug).count();
    let unplugs = plugs.0.iter().filter(|e| **e == RqEvent::Unplug).count();
    assert_eq!(plugs_count, unplugs);
}

/// A sink that says it takes no request events gets none from the driver for the whole run
/// (issue 34: the driver skips its eight calls a request), and the run's results are the
/// ones a sink taking them all sees.
#[test]
fn a_sink_taking_no_requests_gets_none() {
    struct Count {
        takes: bool,
        seen: u64,
    }
    impl Trace for Count {
        fn request(&mut self, _now: Time, _event: RqEvent, _rq: &Request) {
            self.seen += 1;
        }
        fn takes_requests(&self) -> bool {
            self.takes
        }
    }
    let run = |takes: bool| {
        let mut spec = reader("count", RwMode::RandRead, 1 << 20);
        spec.ioengine = IoEngine::Libaio;
        spec.iodepth = 4;
        let mut sink = Count { takes, seen: 0 };
        let outcome = Simulation::new(&[spec], preset("nvme-gen4").unwrap(), SimConfig::default())
            .unwrap()
            .run(&mut sink, &mut |_| {})
            .unwrap();
        (
            sink.seen,
            outcome.run.clones[0].dirs[0].total_ios,
            outcome.sim_time_ns,
        )
    };
    let (seen_all, ios_all, end_all) = run(true);
    let (seen_none, ios_none, end_none) = run(false);
    assert!(
        seen_all >= 6 * ios_all,
        "{seen_all} events for {ios_all} I/Os"
    );
    assert_eq!(seen_none, 0);
    assert_eq!((ios_none, end_none), (ios_all, end_all));
}

/// A backwards sequential reader (`rw=read:-8k` with 4 KiB blocks, as fio's
/// backwards-read example) at depth 8 hands the scheduler bios that end where queued requests
/// start: they front-merge.
#[test]
fn backwards_bios_front_merge() {
    let mut spec = reader("bkwd", RwMode::Read, 2 << 20);
    spec.rw_suffix = -8192;
    depth8(&mut spec);
    for scheduler in ["noop", "deadline", "cfq"] {
        let outcome = run_queued(&spec, scheduler);
        assert!(outcome.disk.read_merges > 0, "{scheduler}: no merges");
        assert_eq!(
            outcome.disk.read_ios + outcome.disk.read_merges,
            outcome.clones[0].dirs[0].total_ios,
            "{scheduler}"
        );
    }
}
