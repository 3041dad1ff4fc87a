//! A [`SweepRow`] as one line of JSON, for rows measured in another process (the Python
//! package's workers, on Dask or any executor) and gathered back into one [`super::Swept`].
//! Measures travel as the bits of their `f64`, so a row read back is the row measured, and
//! the table made from it is the one `iosched sweep` prints, byte for byte.

use serde_json::{json, Value};

use super::{table::MEASURES, RowKind, SweepRow};

/// The row as a JSON line (no trailing newline).
pub fn encode(row: &SweepRow) -> String {
    let bits = |x: Option<f64>| x.map(f64::to_bits);
    json!({
        "point": row.point,
        "kind": row.kind.name(),
        "name": row.name,
        "bw_mb_s": row.bw_mb_s.to_bits(),
        "iops": row.iops.to_bits(),
        "clat_mean_us": bits(row.clat_mean_us),
        "clat_p50_us": bits(row.clat_p50_us),
        "clat_p99_us": bits(row.clat_p99_us),
        "share": bits(row.share),
        "ideal_share": bits(row.ideal_share),
        "interrupted": row.interrupted,
    })
    .to_string()
}

/// Reads a line written by [`encode`]; `points` bounds the point index.
pub fn decode(line: &str, points: usize) -> Result<SweepRow, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not a sweep row: {e}"))?;
    let field = |name: &str| {
        value
            .get(name)
            .ok_or_else(|| format!("sweep row without '{name}'"))
    };
    let measure = |name: &str| -> Result<Option<f64>, String> {
        match field(name)? {
            Value::Null => Ok(None),
            bits => bits
                .as_u64()
                .map(|b| Some(f64::from_bits(b)))
                .ok_or_else(|| format!("sweep row: '{name}' is not f64 bits")),
        }
    };
    let point = field("point")?
        .as_u64()
        .and_then(|p| usize::try_from(p).ok())
        .filter(|&p| p < points)
        .ok_or_else(|| format!("sweep row: point out of 0..{points}"))?;
    let kind = match field("kind")?.as_str() {
        Some("job") => RowKind::Job,
        Some("cgroup") => RowKind::Cgroup,
        Some("total") => RowKind::Total,
        _ => return Err("sweep row: 'kind' is not job, cgroup or total".into()),
    };
    let [_, _, clat_mean_us, clat_p50_us, clat_p99_us, share, ideal_share] = MEASURES;
    Ok(SweepRow {
        point,
        kind,
        name: field("name")?
            .as_str()
            .ok_or("sweep row: 'name' is not text")?
            .to_string(),
        bw_mb_s: measure("bw_mb_s")?.ok_or("sweep row: no bw_mb_s")?,
        iops: measure("iops")?.ok_or("sweep row: no iops")?,
        clat_mean_us: measure(clat_mean_us)?,
        clat_p50_us: measure(clat_p50_us)?,
        clat_p99_us: measure(clat_p99_us)?,
        share: measure(share)?,
        ideal_share: measure(ideal_share)?,
        interrupted: field("interrupted")?.as_bool().unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A row with values no decimal text keeps exactly (0.1 + 0.2) and missing measures
    /// comes back equal; a point past the sweep is refused.
    #[test]
    fn a_row_round_trips_bit_for_bit() {
        let row = SweepRow {
            point: 3,
            kind: RowKind::Cgroup,
            name: "/top-app, \"x\"".into(),
            bw_mb_s: 0.1 + 0.2,
            iops: 1e300,
            clat_mean_us: None,
            clat_p50_us: Some(f64::MIN_POSITIVE),
            clat_p99_us: None,
            share: Some(1.0 / 3.0),
            ideal_share: None,
            interrupted: true,
        };
        assert_eq!(decode(&encode(&row), 4).unwrap(), row);
        let error = decode(&encode(&row), 3).unwrap_err();
        assert!(error.contains("point out of 0..3"), "{error}");
        assert!(decode("{}", 4).is_err());
    }
}
