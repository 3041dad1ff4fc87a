//! Plots of any runs' results (`iosched plot RUN.json...`): what a user compares after
//! `iosched run` (simulated or on a real device) or `iosched kernel`, read back from the fio
//! JSON those commands write.
//!
//! Each kind is one chart with one colour per run, so runs compare at a glance:
//! - `throughput`: each job's throughput (decimal MB/s, as fio's "MB/s");
//! - `latency`: completion-latency percentiles per job and run, on a log axis;
//! - `shares` (when any run has cgroups): each group's share of the bytes, with the
//!   weight-ideal share marked for schedulers that aim for it (cfq, bfq);
//! - `writeback` (when a run has the page cache's 100 ms series): dirty and writeback
//!   megabytes over time.
//!
//! Every chart titles both axes with their units and names each run in the legend.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use crate::plot::{write_png_and_svg, Figure};
use crate::sweep_plot::COLOURS;

/// The percentiles the latency chart shows, as fio's JSON names them.
const PERCENTILES: [(&str, &str); 5] = [
    ("50.000000", "p50"),
    ("90.000000", "p90"),
    ("99.000000", "p99"),
    ("99.900000", "p99.9"),
    ("99.990000", "p99.99"),
];

/// One job's figures from a fio JSON `jobs` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct JobFigures {
    pub name: String,
    /// Bytes per second over the job's runtime, reads and writes together.
    pub bytes_per_s: f64,
    /// Completion-latency percentiles in microseconds, in [`PERCENTILES`] order; `None` where
    /// the run reported none (no I/O in that direction, or percentiles off).
    pub clat_us: Vec<Option<f64>>,
}

/// One cgroup's share of the run's bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupShare {
    pub path: String,
    pub share: f64,
    pub ideal: f64,
}

/// The page cache's series, in megabytes against seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct WritebackSeries {
    pub time_s: Vec<f64>,
    pub dirty_mb: Vec<f64>,
    pub writeback_mb: Vec<f64>,
}

/// What the charts need of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunFigures {
    pub label: String,
    pub scheduler: Option<String>,
    pub jobs: Vec<JobFigures>,
    pub groups: Vec<GroupShare>,
    pub writeback: Option<WritebackSeries>,
}

impl RunFigures {
    /// Reads a fio-format JSON result (iosched's own, with its `iosched` object, or fio's).
    pub fn from_json(label: &str, json: &Value) -> Result<RunFigures, String> {
        let jobs = json
            .get("jobs")
            .and_then(Value::as_array)
            .ok_or("no \"jobs\" array: not a fio JSON result")?;
        crate::result_check::check_result(json)?;
        let mut figures: Vec<JobFigures> = Vec::with_capacity(jobs.len());
        for job in jobs {
            let mut job = job_figures(job)?;
            // Clones share a name; the n-th occurrence is `name#n`, as `iosched compare` says.
            let seen = figures
                .iter()
                .filter(|j| j.name.split('#').next() == Some(job.name.as_str()))
                .count();
            if seen > 0 {
                job.name = format!("{}#{}", job.name, seen + 1);
            }
            figures.push(job);
        }
        let jobs = figures;
        let iosched = json.get("iosched");
        let scheduler = iosched
            .and_then(|i| i.get("scheduler"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let groups = iosched
            .and_then(|i| i.get("cgroups"))
            .and_then(Value::as_array)
            .map(|groups| groups.iter().filter_map(group_share).collect())
            .unwrap_or_default();
        let writeback = iosched
            .and_then(|i| i.get("writeback"))
            .and_then(|w| w.get("series"))
            .and_then(writeback_series);
        Ok(RunFigures {
            label: label.to_string(),
            scheduler,
            jobs,
            groups,
            writeback,
        })
    }

    /// Schedulers whose shares aim at the weights; an "ideal" means nothing for the others.
    fn aims_for_weights(&self) -> bool {
        self.scheduler
            .as_deref()
            .is_some_and(crate::shares::aims_for_weights)
    }
}

fn job_figures(job: &Value) -> Result<JobFigures, String> {
    let name = job
        .get("jobname")
        .and_then(Value::as_str)
        .ok_or("a job without \"jobname\"")?
        .to_string();
    let number = |dir: &str, key: &str| {
        job.get(dir)
            .and_then(|d| d.get(key))
            .and_then(Value::as_f64)
            .unwrap_or(0.0)
    };
    // fio's "bw" is KiB/s.
    let bytes_per_s = (number("read", "bw") + number("write", "bw")) * 1024.0;
    // The latency of the direction that moved more I/Os stands for the job.
    let dir = if number("read", "total_ios") >= number("write", "total_ios") {
        "read"
    } else {
        "write"
    };
    let percentiles = job
        .get(dir)
        .and_then(|d| d.get("clat_ns"))
        .and_then(|c| c.get("percentile"));
    let clat_us = PERCENTILES
        .iter()
        .map(|(key, _)| {
            percentiles
                .and_then(|p| p.get(*key))
                .and_then(Value::as_f64)
                .filter(|ns| *ns > 0.0)
                .map(|ns| ns / 1000.0)
        })
        .collect();
    Ok(JobFigures {
        name,
        bytes_per_s,
        clat_us,
    })
}

fn group_share(group: &Value) -> Option<GroupShare> {
    Some(GroupShare {
        path: group.get("path")?.as_str()?.to_string(),
        share: group.get("share")?.as_f64()?,
        ideal: group.get("ideal_share")?.as_f64()?,
    })
}

fn writeback_series(series: &Value) -> Option<WritebackSeries> {
    let column = |key: &str, scale: f64| -> Option<Vec<f64>> {
        series
            .get(key)?
            .as_array()?
            .iter()
            .map(|v| v.as_f64().map(|v| v / scale))
            .collect()
    };
    Some(WritebackSeries {
        time_s: column("time_ns", 1e9)?,
        dirty_mb: column("dirty_bytes", 1e6)?,
        writeback_mb: column("writeback_bytes", 1e6)?,
    })
}

/// Draws every chart the runs have data for into `out` (PNG and SVG each); returns the files.
pub fn plot_runs(runs: &[RunFigures], out: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut written = Vec::new();
    for kind in wanted_charts(runs) {
        written.extend(write_chart(&out.join(kind.file_name()), runs, kind)?);
    }
    Ok(written)
}

/// The charts [`plot_runs`] writes drawn as SVG text in memory, no file touched: how the
/// `plot_json` fuzz target reaches the axes, where a figure such as 1e307 once never ended.
pub fn draw_svgs(runs: &[RunFigures]) -> Result<Vec<String>, String> {
    crate::plot::register();
    let mut svgs = Vec::new();
    for kind in wanted_charts(runs) {
        let mut svg = String::new();
        let chart = Chart { kind, runs };
        chart.draw(SVGBackend::with_string(&mut svg, (960, 560)).into_drawing_area())?;
        svgs.push(svg);
    }
    Ok(svgs)
}

/// The charts the runs have data for: throughput always, the others when some run has them.
fn wanted_charts(runs: &[RunFigures]) -> Vec<Kind> {
    let charts = [
        (Kind::Throughput, true),
        (Kind::Latency, has_latency(runs)),
        (Kind::Shares, runs.iter().any(|r| !r.groups.is_empty())),
        (Kind::Writeback, runs.iter().any(|r| r.writeback.is_some())),
    ];
    charts
        .into_iter()
        .filter_map(|(kind, wanted)| wanted.then_some(kind))
        .collect()
}

/// The chart kinds, each drawn to PNG and SVG alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Throughput,
    Latency,
    Shares,
    Writeback,
}

impl Kind {
    fn file_name(self) -> &'static str {
        match self {
            Kind::Throughput => "throughput",
            Kind::Latency => "latency",
            Kind::Shares => "shares",
            Kind::Writeback => "writeback",
        }
    }

    fn draw<DB: DrawingBackend>(
        self,
        area: DrawingArea<DB, Shift>,
        runs: &[RunFigures],
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        match self {
            Kind::Throughput => draw_throughput(area, runs),
            Kind::Latency => draw_latency(area, runs),
            Kind::Shares => draw_shares(area, runs),
            Kind::Writeback => draw_writeback(area, runs),
        }
    }
}

fn has_latency(runs: &[RunFigures]) -> bool {
    runs.iter()
        .flat_map(|r| &r.jobs)
        .any(|j| j.clat_us.iter().any(Option::is_some))
}

fn write_chart(base: &Path, runs: &[RunFigures], kind: Kind) -> Result<[PathBuf; 2], String> {
    write_png_and_svg(base, (960, 560), &Chart { kind, runs })
}

/// One kind of chart of some runs.
struct Chart<'a> {
    kind: Kind,
    runs: &'a [RunFigures],
}

impl Figure for Chart<'_> {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        self.kind.draw(area, self.runs)
    }
}

fn colour(run: usize) -> RGBColor {
    COLOURS[run % COLOURS.len()]
}

fn job_names(runs: &[RunFigures]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for job in runs.iter().flat_map(|r| &r.jobs) {
        if !names.contains(&job.name) {
            names.push(job.name.clone());
        }
    }
    names
}

/// Bars: x = categories, one bar per run inside each category's slot.
struct Bars<'a> {
    title: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    categories: Vec<String>,
    /// values[run][category]
    values: Vec<Vec<Option<f64>>>,
    /// A marker per (run, category), drawn as a black tick across the bar.
    markers: Vec<Vec<Option<f64>>>,
}

fn draw_bars<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    runs: &[RunFigures],
    bars: &Bars,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let top = bars
        .values
        .iter()
        .chain(&bars.markers)
        .flatten()
        .flatten()
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1e-9)
        * 1.15;
    // Checked figures keep this finite; an infinite axis would compute ticks forever.
    if !top.is_finite() || top > 1e30 {
        return Err(format!(
            "{}: a value of {top:e} cannot be drawn",
            bars.title
        ));
    }
    let slots = bars.categories.len().max(1);
    let mut chart = ChartBuilder::on(&area)
        .caption(bars.title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.5f64..slots as f64 - 0.5, 0f64..top)
        .map_err(error)?;
    let categories = bars.categories.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .max_light_lines(1)
        .x_labels(slots + 1)
        .x_label_formatter(&|x| category_label(&categories, *x))
        .x_desc(bars.x_desc)
        .y_desc(bars.y_desc)
        .y_label_formatter(&|v| compact(*v))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(error)?;
    let width = 0.8 / runs.len().max(1) as f64;
    for (index, run) in runs.iter().enumerate() {
        let left = |slot: usize| slot as f64 - 0.4 + width * index as f64;
        let fill = colour(index);
        let values = &bars.values[index];
        chart
            .draw_series(values.iter().enumerate().filter_map(|(slot, v)| {
                v.map(|v| {
                    Rectangle::new(
                        [(left(slot), 0.0), (left(slot) + width * 0.92, v)],
                        fill.filled(),
                    )
                })
            }))
            .map_err(error)?
            .label(run.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], fill.filled()));
        let markers = &bars.markers[index];
        chart
            .draw_series(markers.iter().enumerate().filter_map(|(slot, m)| {
                m.map(|m| {
                    PathElement::new(
                        [(left(slot), m), (left(slot) + width * 0.92, m)],
                        BLACK.stroke_width(3),
                    )
                })
            }))
            .map_err(error)?;
    }
    if bars.markers.iter().flatten().any(Option::is_some) {
        chart
            .draw_series(std::iter::once(PathElement::new(
                Vec::<(f64, f64)>::new(),
                BLACK,
            )))
            .map_err(error)?
            .label("weight-ideal share")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLACK.stroke_width(3)));
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    area.present().map_err(error)
}

/// An axis figure in few characters: 950, 12k, 3.4M.
fn compact(value: f64) -> String {
    let (scaled, suffix) = match value.abs() {
        v if v >= 1e6 => (value / 1e6, "M"),
        v if v >= 1e3 => (value / 1e3, "k"),
        _ => (value, ""),
    };
    if scaled.fract().abs() < 0.05 || scaled.abs() >= 100.0 {
        format!("{scaled:.0}{suffix}")
    } else {
        format!("{scaled:.1}{suffix}")
    }
}

fn category_label(categories: &[String], x: f64) -> String {
    let index = x.round();
    if (x - index).abs() < 1e-6 && index >= 0.0 {
        categories.get(index as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

fn legend<'a, DB, X, Y>(
    chart: &mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    X: Ranged,
    Y: Ranged,
{
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(|e| e.to_string())
}

fn draw_throughput<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    runs: &[RunFigures],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let categories = job_names(runs);
    let values = runs
        .iter()
        .map(|run| {
            categories
                .iter()
                .map(|name| {
                    run.jobs
                        .iter()
                        .find(|j| &j.name == name)
                        .map(|j| j.bytes_per_s / 1e6)
                })
                .collect()
        })
        .collect();
    let bars = Bars {
        title: "Throughput per job",
        x_desc: "job",
        y_desc: "throughput (MB/s)",
        markers: vec![vec![None; categories.len()]; runs.len()],
        categories,
        values,
    };
    draw_bars(area, runs, &bars)
}

fn draw_shares<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    runs: &[RunFigures],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let mut categories: Vec<String> = Vec::new();
    for group in runs.iter().flat_map(|r| &r.groups) {
        if !categories.contains(&group.path) {
            categories.push(group.path.clone());
        }
    }
    let find = |run: &RunFigures, path: &str| run.groups.iter().find(|g| g.path == path).cloned();
    let values = runs
        .iter()
        .map(|run| {
            categories
                .iter()
                .map(|p| find(run, p).map(|g| 100.0 * g.share))
                .collect()
        })
        .collect();
    let markers = runs
        .iter()
        .map(|run| {
            categories
                .iter()
                .map(|p| {
                    find(run, p)
                        .filter(|_| run.aims_for_weights())
                        .map(|g| 100.0 * g.ideal)
                })
                .collect()
        })
        .collect();
    let bars = Bars {
        title: "Share of bytes per cgroup",
        x_desc: "cgroup",
        y_desc: "share of the run's bytes (%)",
        categories,
        values,
        markers,
    };
    draw_bars(area, runs, &bars)
}

fn draw_latency<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    runs: &[RunFigures],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let all = runs
        .iter()
        .flat_map(|r| &r.jobs)
        .flat_map(|j| j.clat_us.iter().flatten().copied());
    let (low, high) = all.fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let (low, high) = ((low * 0.8).max(0.01), (high * 1.25).max(low * 2.0));
    if !high.is_finite() || high > 1e30 {
        return Err(format!("latency of {high:e} µs cannot be drawn"));
    }
    let last = PERCENTILES.len() as f64 - 1.0;
    let mut chart = ChartBuilder::on(&area)
        .caption("Completion latency percentiles", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(-0.25f64..last + 0.25, (low..high).log_scale())
        .map_err(error)?;
    let names: Vec<String> = PERCENTILES.iter().map(|(_, n)| n.to_string()).collect();
    chart
        .configure_mesh()
        .x_labels(PERCENTILES.len())
        .x_label_formatter(&|x| category_label(&names, *x))
        .x_desc("percentile")
        .y_desc("completion latency (µs, log scale)")
        .y_label_formatter(&|v| compact(*v))
        .max_light_lines(0)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(error)?;
    let styles = [0u32, 6, 2];
    for (index, run) in runs.iter().enumerate() {
        for (job_index, job) in run.jobs.iter().enumerate() {
            let points: Vec<(f64, f64)> = job
                .clat_us
                .iter()
                .enumerate()
                .filter_map(|(x, v)| v.map(|v| (x as f64, v)))
                .collect();
            let stroke = colour(index).stroke_width(2);
            let dash = styles[job_index % styles.len()];
            let label = if runs.len() == 1 {
                job.name.clone()
            } else {
                format!("{}: {}", run.label, job.name)
            };
            let series = if dash == 0 {
                chart
                    .draw_series(LineSeries::new(points.clone(), stroke))
                    .map_err(error)?
            } else {
                chart
                    .draw_series(DashedLineSeries::new(points.clone(), dash, 4, stroke))
                    .map_err(error)?
            };
            let series = series.label(label);
            if dash == 0 {
                series.legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], stroke));
            } else {
                series.legend(move |at| {
                    // A dashed line's sample: two short strokes.
                    EmptyElement::at(at)
                        + PathElement::new([(0, 0), (6, 0)], stroke)
                        + PathElement::new([(10, 0), (16, 0)], stroke)
                });
            }
            chart
                .draw_series(
                    points
                        .iter()
                        .map(|&p| Circle::new(p, 3, colour(index).filled())),
                )
                .map_err(error)?;
        }
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    area.present().map_err(error)
}

fn draw_writeback<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    runs: &[RunFigures],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let series: Vec<(usize, &RunFigures, &WritebackSeries)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.writeback.as_ref().map(|w| (i, r, w)))
        .collect();
    let end = series
        .iter()
        .flat_map(|(_, _, w)| w.time_s.last())
        .fold(0.1f64, |a, &b| a.max(b));
    let top = series
        .iter()
        .flat_map(|(_, _, w)| w.dirty_mb.iter().chain(&w.writeback_mb))
        .fold(0.0f64, |a, &b| a.max(b))
        .max(1e-6)
        * 1.15;
    if ![end, top].iter().all(|v| v.is_finite() && *v <= 1e30) {
        return Err(format!(
            "page cache chart: {end:e} s by {top:e} MB cannot be drawn"
        ));
    }
    let mut chart = ChartBuilder::on(&area)
        .caption("Page cache over time", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..end, 0f64..top)
        .map_err(error)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc("simulated time (s)")
        .y_desc("megabytes (MB)")
        .y_label_formatter(&|v| compact(*v))
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(error)?;
    for (index, run, w) in series {
        let stroke = colour(index).stroke_width(2);
        let dirty: Vec<(f64, f64)> = w
            .time_s
            .iter()
            .copied()
            .zip(w.dirty_mb.iter().copied())
            .collect();
        let writeback: Vec<(f64, f64)> = w
            .time_s
            .iter()
            .copied()
            .zip(w.writeback_mb.iter().copied())
            .collect();
        chart
            .draw_series(LineSeries::new(dirty, stroke))
            .map_err(error)?
            .label(format!("{}: dirty", run.label))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 16, y)], stroke));
        chart
            .draw_series(DashedLineSeries::new(writeback, 6, 4, stroke))
            .map_err(error)?
            .label(format!("{}: under writeback", run.label))
            .legend(move |at| {
                // A dashed line's sample: two short strokes.
                EmptyElement::at(at)
                    + PathElement::new([(0, 0), (6, 0)], stroke)
                    + PathElement::new([(10, 0), (16, 0)], stroke)
            });
    }
    legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    area.present().map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, scheduler: &str, heavy_share: f64) -> RunFigures {
        let json = serde_json::json!({
            "jobs": [
                {"jobname": "heavy", "read": {"bw": 9000.0, "total_ios": 90,
                    "clat_ns": {"percentile": {"50.000000": 2000.0, "99.000000": 9000.0}}},
                 "write": {"bw": 0.0, "total_ios": 0}},
                {"jobname": "light", "read": {"bw": 1000.0, "total_ios": 10,
                    "clat_ns": {"percentile": {"50.000000": 3000.0, "99.000000": 30000.0}}},
                 "write": {"bw": 0.0, "total_ios": 0}}
            ],
            "iosched": {
                "scheduler": scheduler,
                "cgroups": [
                    {"path": "/heavy", "weight": 1000, "share": heavy_share, "ideal_share": 0.909091},
                    {"path": "/light", "weight": 100, "share": 1.0 - heavy_share, "ideal_share": 0.090909}
                ],
                "writeback": {"series": {"time_ns": [0, 100000000], "dirty_bytes": [0, 4000000],
                                          "writeback_bytes": [0, 1000000]}}
            }
        });
        RunFigures::from_json(label, &json).unwrap()
    }

    #[test]
    fn reads_jobs_groups_and_series_from_fio_json() {
        let figures = run("cfq", "cfq", 0.9);
        assert_eq!(figures.jobs[0].bytes_per_s, 9000.0 * 1024.0);
        assert_eq!(figures.jobs[1].clat_us[2], Some(30.0));
        assert_eq!(figures.jobs[1].clat_us[1], None, "p90 was not reported");
        assert_eq!(figures.groups[1].path, "/light");
        assert_eq!(figures.writeback.unwrap().dirty_mb, [0.0, 4.0]);
        let error = RunFigures::from_json("x", &serde_json::json!({"fio": 1})).unwrap_err();
        assert!(error.contains("jobs"), "{error}");
    }

    /// Every kind is drawn, with both axes titled with units, every run in the legend, and
    /// the ideal marked only for a scheduler that aims at weights.
    #[test]
    fn every_chart_has_axis_titles_and_legend_entries() {
        // Removed on drop, so a failing assertion leaves nothing behind either.
        let dir = iosched_workload::scratch::ScratchDir::new("run-plot");
        let runs = [
            run("engine cfq", "cfq", 0.9),
            run("kernel none", "none", 0.5),
        ];
        let files = plot_runs(&runs, &dir).unwrap();
        assert_eq!(files.len(), 8, "four charts, PNG and SVG each: {files:?}");
        let svg = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let expectations: [(&str, &[&str]); 4] = [
            (
                "throughput.svg",
                &["throughput (MB/s)", "job", "engine cfq", "kernel none"],
            ),
            (
                "latency.svg",
                &[
                    "percentile",
                    "completion latency (µs",
                    "engine cfq: light",
                    "p99.9",
                ],
            ),
            (
                "shares.svg",
                &["share of the run", "cgroup", "/heavy", "weight-ideal share"],
            ),
            (
                "writeback.svg",
                &["simulated time (s)", "megabytes (MB)", "kernel none: dirty"],
            ),
        ];
        for (file, needles) in expectations {
            let text = svg(file);
            for needle in needles {
                // plotters writes each text element's content on a line of its own.
                let found = text.lines().any(|line| line.trim().starts_with(needle));
                assert!(found, "{file} lacks a text starting {needle:?}");
            }
        }
        for file in &files {
            if file.extension().is_some_and(|e| e == "png") {
                assert_eq!(&std::fs::read(file).unwrap()[1..4], b"PNG");
            }
        }
        // One ideal tick per group for the cfq run; none for `none`, which aims at no weights.
        let ticks = svg("shares.svg").matches("stroke-width=\"3\"").count();
        assert_eq!(ticks, 2 + 1, "two ideal ticks and the legend's swatch");
    }
}
