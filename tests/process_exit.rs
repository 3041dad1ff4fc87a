//! A job's process exits when its last I/O is done, and CFQ drops its queue then
//! (Linux 4.20: exit_io_context() -> cfq_exit_icq() -> cfq_exit_cfqq(), which expires the
//! slice of a queue being served or idled on and schedules dispatch). Before the driver told
//! the scheduler, CFQ armed its 8 ms idle window for a reader that would never read again,
//! and the other reader waited it out.

mod common;

use common::{iosched, Scratch};
use serde_json::Value;

const TWO_READERS: &str = "[global]\nrw=read\ndirect=1\nbs=4k\nsize=64k\n\
                           [a]\nfilename=fa\n[b]\nfilename=fb\n";

#[test]
fn cfq_stops_serving_a_reader_when_its_process_exits() {
    let scratch = Scratch::new("process-exit");
    let job = scratch.file("exit.fio", TWO_READERS);
    let decisions = scratch.path("decisions.jsonl");
    let out = iosched(&[
        "run",
        &job,
        "--device",
        "hdd-7200",
        "--scheduler",
        "cfq",
        "--decisions",
        &decisions,
        "--output-format",
        "json",
    ]);
    assert!(out.status.success(), "{}", common::stderr_of(&out));
    let lines: Vec<Value> = std::fs::read_to_string(&decisions)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let exits: Vec<&Value> = lines
        .iter()
        .filter(|d| d["kind"] == "slice_expired" && d["reason"] == "process exited")
        .collect();
    assert!(!exits.is_empty(), "no slice ended at a process's exit");
    let first_exit = exits[0];
    let (exited, at) = (&first_exit["queue"], first_exit["t_ns"].as_u64().unwrap());
    // The other reader is chosen at that very instant, not after an idle window.
    let next = lines
        .iter()
        .find(|d| {
            d["kind"] == "select_queue" && d["t_ns"].as_u64() >= Some(at) && &d["queue"] != exited
        })
        .expect("the other reader is served next");
    assert_eq!(next["t_ns"].as_u64(), Some(at), "{next}");
    let idled_after_exit = lines
        .iter()
        .any(|d| d["kind"] == "idle_end" && &d["queue"] == exited && d["t_ns"].as_u64() > Some(at));
    assert!(!idled_after_exit, "CFQ idled on an exited process");
}
