//! Replaying a DiskSim validation trace and scoring it.
//!
//! A trace line (`iotrace_validate_get_ioreq_event`) is `R|W label block sectors
//! measured_us delay_us`: the label is statistics only; the measured response time is the
//! real drive's; the delay runs from this request's completion to the next one's issue. The
//! replay is DiskSim's: one request outstanding, the first issued at 0, each next one issued
//! the previous line's delay after the previous request completed *in the simulation*.
//! The score is the demerit between the simulated and the measured response times.

use std::path::Path;

use super::demerit::{demerit_ms, Distribution};
use super::drive::Drive;
use super::spec::DiskSpec;

/// One trace line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRequest {
    pub read: bool,
    pub lbn: u64,
    pub sectors: u64,
    pub measured_ms: f64,
    pub delay_ms: f64,
}

/// Parses a validation trace; the error names the file's line.
pub fn parse_trace(path: &Path, text: &str) -> Result<Vec<TraceRequest>, String> {
    let mut requests = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| format!("{}:{}: {what}", path.display(), index + 1);
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.len() != 6 {
            return Err(bad(
                "expected 'R|W label block sectors measured_us delay_us'",
            ));
        }
        let read = match fields[0] {
            "R" => true,
            "W" => false,
            _ => return Err(bad("the first field is not R or W")),
        };
        let number = |field: &str, what: &str| field.parse::<f64>().map_err(|_| bad(what));
        let lbn = fields[2].parse().map_err(|_| bad("bad block number"))?;
        let sectors: u64 = fields[3].parse().map_err(|_| bad("bad sector count"))?;
        if sectors == 0 {
            return Err(bad("a request of 0 sectors"));
        }
        // DiskSim reads µs and divides by 1000.
        let measured_ms = number(fields[4], "bad measured time")? / 1000.0;
        let delay_ms = number(fields[5], "bad delay")? / 1000.0;
        if !(measured_ms >= 0.0 && delay_ms >= 0.0) {
            return Err(bad("negative time"));
        }
        requests.push(TraceRequest {
            read,
            lbn,
            sectors,
            measured_ms,
            delay_ms,
        });
    }
    Ok(requests)
}

/// The simulated response time of each request, in trace order.
pub fn replay(spec: &DiskSpec, trace: &[TraceRequest]) -> Result<Vec<f64>, String> {
    let mut drive = Drive::new(spec);
    let mut now = 0.0;
    let mut responses = Vec::with_capacity(trace.len());
    for (index, request) in trace.iter().enumerate() {
        if request.lbn + request.sectors > drive.capacity() {
            return Err(format!(
                "request {} (blocks {}+{}) lies past the drive's {} blocks",
                index + 1,
                request.lbn,
                request.sectors,
                drive.capacity()
            ));
        }
        let done = drive.serve(now, request.read, request.lbn, request.sectors);
        responses.push(done - now);
        now = done + request.delay_ms;
    }
    Ok(responses)
}

/// A drive's validation result.
#[derive(Clone, Debug, PartialEq)]
pub struct Validation {
    pub drive: String,
    pub demerit_ms: f64,
    pub simulated_mean_ms: f64,
    pub measured_mean_ms: f64,
}

/// Replays `DIR/NAME.trace` on `DIR/NAME.toml` and scores it.
pub fn validate_drive(dir: &Path, name: &str) -> Result<Validation, String> {
    let spec = DiskSpec::load(&dir.join(format!("{name}.toml")))?;
    let trace_path = dir.join(format!("{name}.trace"));
    let text = std::fs::read_to_string(&trace_path)
        .map_err(|error| format!("{}: cannot read: {error}", trace_path.display()))?;
    let trace = parse_trace(&trace_path, &text)?;
    let simulated = replay(&spec, &trace).map_err(|e| format!("{}: {e}", trace_path.display()))?;
    let measured: Vec<f64> = trace.iter().map(|request| request.measured_ms).collect();
    let (Some(sim), Some(real)) = (
        Distribution::from_values(&simulated),
        Distribution::from_values(&measured),
    ) else {
        return Err(format!("{}: empty trace", trace_path.display()));
    };
    let mean = |values: &[f64]| values.iter().sum::<f64>() / values.len() as f64;
    Ok(Validation {
        drive: name.to_string(),
        demerit_ms: demerit_ms(&sim, &real),
        simulated_mean_ms: mean(&simulated),
        measured_mean_ms: mean(&measured),
    })
}

/// The repository's converted DiskSim data.
pub fn default_data_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/disksim")
}

/// Validates every drive of [`super::import::DRIVES`] in `dir`, beside DiskSim's own demerit.
pub fn validate_all(dir: &Path) -> Result<Vec<(Validation, f64)>, String> {
    super::import::DRIVES
        .iter()
        .map(|&(name, disksim)| validate_drive(dir, name).map(|v| (v, disksim)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_lines_are_read_in_ms() {
        let text = "R Hit    1975456   4  15362.00000  56074.00000\nW Miss 8 8 1000 0\n";
        let trace = parse_trace(Path::new("t"), text).unwrap();
        assert_eq!(trace.len(), 2);
        assert!(trace[0].read && !trace[1].read);
        assert_eq!(trace[0].lbn, 1_975_456);
        assert!((trace[0].measured_ms - 15.362).abs() < 1e-12);
        assert!((trace[0].delay_ms - 56.074).abs() < 1e-12);
    }

    #[test]
    fn a_bad_line_is_named() {
        let error =
            parse_trace(Path::new("t.trace"), "R Hit 1 4 1 1\nX Hit 1 4 1 1\n").unwrap_err();
        assert_eq!(error, "t.trace:2: the first field is not R or W");
    }

    #[test]
    fn each_request_is_issued_its_delay_after_the_previous_completed() {
        let spec = DiskSpec::parse(include_str!("testdata_small.toml")).unwrap();
        let request = |delay_ms| TraceRequest {
            read: false,
            lbn: 0,
            sectors: 1,
            measured_ms: 0.0,
            delay_ms,
        };
        // Two write-back writes: each costs its overhead plus one sector on the bus, however
        // long the gap, so only the second one's "after write" overhead differs.
        let responses = replay(&spec, &[request(100.0), request(100.0)]).unwrap();
        assert!((responses[0] - 0.6).abs() < 1e-9, "{responses:?}");
        assert!((responses[1] - 0.7).abs() < 1e-9, "{responses:?}");
    }
}
