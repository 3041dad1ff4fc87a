//! `iosched sweep SPEC.toml --dask ADDRESS`: the points run on a Dask cluster through the
//! Python package (`python -m iosched sweep SPEC --dask ADDRESS --rows`), which prints each
//! measured row as a line of [`iosched_lab::sweep::wire`]; the table and `--out` are then
//! made here, as for a local sweep, so the two print the same bytes.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::anyhow;
use iosched_lab::sweep::{wire, SweepSpec, Swept};

use crate::cmd::{Eta, Failure};

/// The interpreter: `$IOSCHED_PYTHON`, else `python3` on the PATH.
fn python() -> String {
    std::env::var("IOSCHED_PYTHON").unwrap_or_else(|_| "python3".to_string())
}

/// Checks that `python` can import the package and Dask's client, so a missing install is
/// one clear error rather than a traceback.
fn check_python(python: &str) -> Result<(), Failure> {
    let probe = Command::new(python)
        .args(["-c", "import iosched, distributed"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Failure::input(anyhow!(
                "--dask needs Python 3.11+ with the iosched package: cannot start '{python}' \
                 ({e}); set IOSCHED_PYTHON to the interpreter"
            ))
        })?;
    if probe.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&probe.stderr);
    let why = stderr.lines().last().unwrap_or("no message");
    Err(Failure::input(anyhow!(
        "--dask needs the iosched Python package and Dask in '{python}' \
         (`pip install . 'dask[distributed]'` from iosched's source): {why}"
    )))
}

/// Runs the sweep on the cluster at `address` and reads its rows back.
pub(super) fn run(
    spec_path: &Path,
    spec: &SweepSpec,
    address: &str,
    eta: Eta,
) -> Result<Swept, Failure> {
    let python = python();
    check_python(&python)?;
    let mut command = Command::new(&python);
    command
        .args(["-m", "iosched", "sweep"])
        .arg(spec_path)
        .args(["--dask", address, "--rows"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    if !eta.shown() {
        command.arg("--no-progress");
    }
    let mut child = command
        .spawn()
        .map_err(|e| Failure::input(anyhow!("--dask: cannot start '{python}': {e}")))?;
    let stdout = child.stdout.take().expect("stdout is piped");
    let mut rows = Vec::new();
    let mut bad = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.map_err(|e| Failure::run(anyhow!("--dask: reading rows: {e}")))?;
        match wire::decode(&line, spec.point_count()) {
            Ok(row) => rows.push(row),
            Err(why) => {
                bad.get_or_insert(why);
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| Failure::run(anyhow!("--dask: {python}: {e}")))?;
    if !status.success() {
        // The Python side printed the reason; its exit status says whose fault it was.
        let code = status
            .code()
            .and_then(|c| u8::try_from(c).ok())
            .unwrap_or(1);
        return Err(Failure {
            error: anyhow!("--dask: the sweep on {address} failed"),
            code: code.max(1),
        });
    }
    if let Some(why) = bad {
        return Err(Failure::run(anyhow!("--dask: {why}")));
    }
    // The rows come back as tasks finish: the table keeps point order.
    rows.sort_by_key(|row| row.point);
    Ok(Swept {
        rows,
        interrupted: false,
    })
}
