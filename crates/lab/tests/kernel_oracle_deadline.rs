//! iosched's mq-deadline against Linux 6.12's own `block/mq-deadline.c` (the OUTSIDE
//! reference, compiled unmodified from Debian's linux-source-6.12 against the project's
//! shim): the hand-written families of `oracle/scenarios/mq-deadline/` plus generated
//! scenarios, at least 300 in all, each identical decision for decision.

use iosched_lab::oracle::{self, kernel};

/// The seed CI runs; `scripts/kernel-oracle mq-deadline --random N --seed S` runs others.
const SEED: u64 = 2026;

#[test]
fn mq_deadline_decides_as_linux_6_12() {
    let tree = match kernel::kernel_tree() {
        Ok(tree) => tree,
        Err(kernel::KernelError::Absent) => {
            println!("SKIPPED: {}", kernel::KernelError::Absent);
            return;
        }
        Err(e) => panic!("kernel source: {e}"),
    };
    let bin = kernel::build("mq-deadline", &tree).expect("the oracle compiles");
    let hand = oracle::scenario_files(&kernel::shim_dir().join("scenarios/mq-deadline"))
        .expect("hand-written scenarios");
    let gen_dir = std::env::temp_dir().join(format!("iosched-oracle-test-{}", std::process::id()));
    let generated = 300u64.saturating_sub(hand.len() as u64).max(250);
    let mut files = hand.clone();
    files.extend(
        oracle::write_generated("mq-deadline", &gen_dir, SEED, generated).expect("generated"),
    );
    let outcomes = oracle::compare_all("mq-deadline", &bin, &files, 0).expect("both sides run");
    let _ = std::fs::remove_dir_all(&gen_dir);
    let _ = std::fs::remove_file(&bin);

    match oracle::all_identical(&outcomes, hand.len(), SEED, 300) {
        Ok(line) => println!("{line}"),
        Err(e) => panic!("{e}"),
    }
}
