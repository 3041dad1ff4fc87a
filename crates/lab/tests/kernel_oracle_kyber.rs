//! iosched's kyber against Linux 6.12's own `block/kyber-iosched.c` and `lib/sbitmap.c`
//! (the OUTSIDE reference, compiled unmodified from Debian's linux-source-6.12 against the
//! project's shim): the hand-written families of `oracle/scenarios/kyber/` plus generated
//! scenarios, at least 300 in all, each identical line for line: every dispatch, every
//! timer arm and firing, every percentile read, domain resize and throttled domain.

use iosched_lab::oracle::{self, kernel};

/// The seed CI runs; `scripts/kernel-oracle kyber --random N --seed S` runs others.
const SEED: u64 = 2026;

#[test]
fn kyber_decides_as_linux_6_12() {
    let tree = match kernel::kernel_tree() {
        Ok(tree) => tree,
        Err(kernel::KernelError::Absent) => {
            println!("SKIPPED: {}", kernel::KernelError::Absent);
            return;
        }
        Err(e) => panic!("kernel source: {e}"),
    };
    let bin = kernel::build("kyber", &tree).expect("the oracle compiles");
    let hand = oracle::scenario_files(&kernel::shim_dir().join("scenarios/kyber"))
        .expect("hand-written scenarios");
    let gen_dir =
        std::env::temp_dir().join(format!("iosched-oracle-kyber-test-{}", std::process::id()));
    let generated = 300u64.saturating_sub(hand.len() as u64).max(250);
    let mut files = hand.clone();
    files.extend(oracle::write_generated("kyber", &gen_dir, SEED, generated).expect("generated"));
    let outcomes = oracle::compare_all("kyber", &bin, &files, 0).expect("both sides run");
    let _ = std::fs::remove_dir_all(&gen_dir);
    let _ = std::fs::remove_file(&bin);

    match oracle::all_identical(&outcomes, hand.len(), SEED, 300) {
        Ok(line) => println!("{line}"),
        Err(e) => panic!("{e}"),
    }
}
