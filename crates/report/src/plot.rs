//! Plots of seed tables, written as PNG and SVG: one panel per column with the seed's figure
//! and ours side by side for every row, or, for a sweep (a table whose columns are the
//! points of a parameter, e.g. thread counts), one chart with a line per row: the seed's
//! dashed, ours solid.
//!
//! The font ships with the crate (DejaVu Sans, see `assets/DejaVuSans.LICENSE`) so a plot
//! looks the same on every machine and needs no system font configuration.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::{register_font, FontStyle};

use crate::sweep_plot::{Line, LineChart};

pub(crate) static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

const SEED_COLOUR: RGBColor = RGBColor(160, 174, 192);
const OURS_COLOUR: RGBColor = RGBColor(33, 102, 172);

/// One column of a seed table: its header, the seed's values and ours, one per row.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotColumn {
    pub header: String,
    pub seed: Vec<Option<f64>>,
    pub ours: Vec<f64>,
}

/// A table to plot.
#[derive(Clone, Debug, PartialEq)]
pub struct PlotTable {
    pub title: String,
    pub unit: String,
    pub rows: Vec<String>,
    pub columns: Vec<PlotColumn>,
    /// Draw the columns as the x axis of one line chart instead of a panel each.
    pub sweep: bool,
    /// The x axis's title (with its unit) for a sweep, e.g. `group_idle_us (µs)`.
    pub x_desc: Option<String>,
}

pub(crate) fn register() {
    REGISTER.call_once(|| {
        // The bytes are a valid TrueType font compiled into the binary; failure is impossible
        // short of a corrupted build, which the tests would catch.
        if register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            panic!("embedded DejaVu Sans does not parse");
        }
    });
}

/// Half the width of one bar, in row units: a row's pair fills 0.8 of its slot, leaving a
/// gap between rows so each pair reads as one.
const BAR: f64 = 0.4;

/// One bar: its left edge (row units), its height on the panel's scale, and the figure
/// printed above it (in the table's unit).
struct Bar {
    x: f64,
    height: f64,
    figure: f64,
}

/// A panel's bars, seed's and ours, and the label of the row they are relative to.
///
/// With seed figures, each series is divided by its own figure for the first row where both
/// have one: the verdicts compare ratios between rows, and the seed's machine and ours can
/// differ tenfold in absolute terms (seed 000's 3.6 MB/s bars vanished beside our 85), so
/// the bars show each row against that baseline while the figure above each bar stays
/// absolute. Without seed figures (a replay's comparison) the bars are absolute.
fn panel_bars(
    column: &PlotColumn,
    rows: &[String],
    has_seed: bool,
) -> (Vec<Bar>, Vec<Bar>, Option<String>) {
    let baseline = has_seed
        .then(|| {
            (0..column.ours.len()).find(|&row| {
                let seed = column.seed.get(row).copied().flatten().unwrap_or(0.0);
                seed > 0.0 && column.ours[row].is_finite() && column.ours[row] > 0.0
            })
        })
        .flatten();
    let (seed_scale, ours_scale) = match baseline {
        Some(row) => (column.seed[row].unwrap_or(1.0), column.ours[row]),
        None => (1.0, 1.0),
    };
    let ours_offset = if has_seed { 0.0 } else { -BAR / 2.0 };
    let seed = column
        .seed
        .iter()
        .enumerate()
        .filter_map(|(row, v)| {
            v.map(|figure| Bar {
                x: row as f64 - BAR,
                height: figure / seed_scale,
                figure,
            })
        })
        .collect();
    let ours = column
        .ours
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .map(|(row, &figure)| Bar {
            x: row as f64 + ours_offset,
            height: figure / ours_scale,
            figure,
        })
        .collect();
    (seed, ours, baseline.map(|row| short_label(&rows[row])))
}

fn draw<DB: DrawingBackend>(area: DrawingArea<DB, Shift>, table: &PlotTable) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let area = area
        .titled(&table.title, ("sans-serif", 22))
        .map_err(error)?;
    // A table without seed figures (a replay's comparison, say) has only our bars: no
    // legend, and each bar centred on its row.
    let has_seed = table
        .columns
        .iter()
        .any(|column| column.seed.iter().any(Option::is_some));
    // One legend for the figure, under the title, so no panel's bars hide behind one.
    let area = if has_seed {
        let (legend, area) = area.split_vertically(26);
        draw_legend(&legend).map_err(error)?;
        area
    } else {
        area
    };
    let panels = area.split_evenly((table.columns.len().max(1), 1));
    for (panel, column) in panels.iter().zip(&table.columns) {
        let (seed, ours, baseline) = panel_bars(column, &table.rows, has_seed);
        let (caption, y_desc) = match &baseline {
            Some(row) => (
                format!(
                    "{}: bars relative to {row}, figures in {}",
                    column.header, table.unit
                ),
                // The axis is a panel high: a long label would run off it.
                if row.chars().count() <= 28 {
                    format!("× {row}")
                } else {
                    "× the first pair".to_string()
                },
            ),
            None => (column.header.clone(), table.unit.clone()),
        };
        draw_panel(panel, table, [seed, ours], &caption, &y_desc).map_err(error)?;
    }
    area.present().map_err(error)
}

/// One panel: the rows along x (titled with the table's `x_desc`, if any), the bars, each
/// with its figure above it.
fn draw_panel<DB: DrawingBackend>(
    panel: &DrawingArea<DB, Shift>,
    table: &PlotTable,
    bars: [Vec<Bar>; 2],
    caption: &str,
    y_desc: &str,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    // A ratio axis reads 0.50, 1.00, 1.50, not 0.5, 1, 1.5.
    let relative = y_desc.starts_with('×');
    let rows = table.rows.len().max(1);
    let top = bars
        .iter()
        .flatten()
        .map(|bar| bar.height)
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.15;
    let mut chart = ChartBuilder::on(panel)
        .caption(caption, ("sans-serif", 16))
        .margin(8)
        .x_label_area_size(if table.x_desc.is_some() { 44 } else { 28 })
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..rows as f64 - 0.5, 0f64..top)?;
    let labels = table.rows.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .max_light_lines(1)
        .x_labels(rows + 1)
        .x_label_formatter(&|x| {
            let index = x.round();
            if (x - index).abs() < 1e-6 && index >= 0.0 {
                labels
                    .get(index as usize)
                    .map(|l| short_label(l))
                    .unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_desc(table.x_desc.clone().unwrap_or_default())
        .y_desc(y_desc)
        .y_label_formatter(&|y| {
            if relative {
                format!("{y:.2}")
            } else {
                bar_value(*y)
            }
        })
        .label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 13))
        .draw()?;
    for (series, colour) in bars.iter().zip([SEED_COLOUR, OURS_COLOUR]) {
        chart.draw_series(series.iter().map(|bar| {
            let mut rect =
                Rectangle::new([(bar.x, 0.0), (bar.x + BAR, bar.height)], colour.filled());
            rect.set_margin(0, 0, 1, 1);
            rect
        }))?;
        // The figure above its bar: a reader compares numbers, not bar heights alone.
        chart.draw_series(series.iter().map(|bar| {
            Text::new(
                bar_value(bar.figure),
                (bar.x + BAR / 2.0, bar.height + top * 0.015),
                ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            )
        }))?;
    }
    Ok(())
}

/// "seed" and "iosched" swatches, centred in `area`.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let (width, height) = area.dim_in_pixel();
    let y = height as i32 / 2;
    let x = width as i32 / 2 - 90;
    for (offset, colour, name) in [(0, SEED_COLOUR, "seed"), (90, OURS_COLOUR, "iosched")] {
        area.draw(&Rectangle::new(
            [(x + offset, y - 5), (x + offset + 10, y + 5)],
            colour.filled(),
        ))?;
        area.draw(&Text::new(
            name,
            (x + offset + 18, y),
            ("sans-serif", 14)
                .into_font()
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

/// A bar's figure with about three significant digits.
fn bar_value(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// A sweep: x = the columns in order, a solid line per row for ours, beside it the seed's
/// as a reference line of the same hue.
fn sweep_chart(table: &PlotTable) -> LineChart {
    let mut lines = Vec::new();
    for (row, label) in table.rows.iter().enumerate() {
        let points = |value: &dyn Fn(&PlotColumn) -> Option<f64>| -> Vec<(f64, f64)> {
            let columns = table.columns.iter().enumerate();
            columns
                .filter_map(|(x, c)| value(c).map(|v| (x as f64, v)))
                .collect()
        };
        let ours = points(&|c| c.ours.get(row).copied().filter(|v| v.is_finite()));
        let seed = points(&|c| c.seed.get(row).copied().flatten());
        lines.push(Line {
            colour: Some(row),
            ..Line::new(format!("{label} (iosched)"), ours)
        });
        lines.push(Line {
            colour: Some(row),
            reference: true,
            ..Line::new(format!("{label} (seed)"), seed)
        });
    }
    LineChart {
        title: table.title.clone(),
        x_desc: table.x_desc.clone().unwrap_or_default(),
        y_desc: table.unit.clone(),
        categories: Some(table.columns.iter().map(|c| c.header.clone()).collect()),
        lines,
    }
}

/// Row labels are long ("Pristine 3.1.0-rc2 (CFQ, slice_idle=0)") and differ at the end, so
/// a long label keeps its last characters.
fn short_label(label: &str) -> String {
    const MAX: usize = 56;
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= MAX {
        label.to_string()
    } else {
        let tail: String = chars[chars.len() - (MAX - 1)..].iter().collect();
        format!("…{tail}")
    }
}

/// A table of one row and several columns (a figure per group, say) reads best as one panel
/// with the columns along x.
fn one_row_as_one_panel(table: &PlotTable) -> PlotTable {
    PlotTable {
        title: table.title.clone(),
        unit: table.unit.clone(),
        rows: table.columns.iter().map(|c| c.header.clone()).collect(),
        columns: vec![PlotColumn {
            header: table.rows[0].clone(),
            seed: table.columns.iter().map(|c| c.seed[0]).collect(),
            ours: table.columns.iter().map(|c| c.ours[0]).collect(),
        }],
        sweep: false,
        x_desc: None,
    }
}

/// Writes `<base>.png` and `<base>.svg`; returns their paths.
pub fn write_table(base: &Path, table: &PlotTable) -> Result<[PathBuf; 2], String> {
    let transposed;
    let table = if !table.sweep && table.rows.len() == 1 && table.columns.len() > 1 {
        transposed = one_row_as_one_panel(table);
        &transposed
    } else {
        table
    };
    let (width, height) = if table.sweep {
        (
            (60 * table.columns.len() as u32 + 200)
                .max(12 * table.title.chars().count() as u32)
                .max(900),
            560,
        )
    } else {
        let widest = table
            .rows
            .iter()
            .map(|row| short_label(row).chars().count() as u32)
            .max()
            .unwrap_or(4);
        (
            (100 + (widest * 7 + 16).max(70) * table.rows.len() as u32)
                .max(12 * table.title.chars().count() as u32)
                .max(720),
            80 + 300 * table.columns.len().max(1) as u32,
        )
    };
    write_png_and_svg(base, (width, height), table)
}

impl Figure for PlotTable {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        if self.sweep {
            crate::sweep_plot::draw(area, &sweep_chart(self))
        } else {
            draw(area, self)
        }
    }
}

/// Test check shared by every chart: `png` is a PNG, and `svg` has a text element starting
/// with each of `needles` (plotters writes each text's content on a line of its own).
#[cfg(test)]
pub(crate) fn assert_chart_texts(png: &Path, svg: &Path, needles: &[&str]) {
    assert_eq!(&std::fs::read(png).unwrap()[1..4], b"PNG");
    let text = std::fs::read_to_string(svg).unwrap();
    for needle in needles {
        assert!(
            text.lines().any(|line| line.trim().starts_with(needle)),
            "{} has no text starting {needle:?}",
            svg.display()
        );
    }
}

/// A chart that draws itself the same way on any plotters backend.
pub(crate) trait Figure {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static;
}

/// Writes `<base>.png` (text drawn by [`crate::glyphs::CrispText`]) and `<base>.svg` of
/// `figure`, both `size` pixels; returns their paths. Every chart iosched writes comes here:
/// each is drawn in memory and written through the output gate, so a chart is whole or
/// absent and an error is a plain sentence naming the file.
pub(crate) fn write_png_and_svg(
    base: &Path,
    size: (u32, u32),
    figure: &impl Figure,
) -> Result<[PathBuf; 2], String> {
    register();
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    let (width, height) = size;
    let mut rgb = vec![0u8; width as usize * height as usize * 3];
    figure
        .draw(
            crate::glyphs::CrispText(BitMapBackend::with_buffer(&mut rgb, size))
                .into_drawing_area(),
        )
        .map_err(|e| format!("{}: {e}", png.display()))?;
    let mut png_bytes = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png_bytes),
        &rgb,
        width,
        height,
        image::ColorType::Rgb8,
    )
    .map_err(|e| format!("{}: encoding the PNG: {e}", png.display()))?;
    let mut svg_text = String::new();
    figure
        .draw(SVGBackend::with_string(&mut svg_text, size).into_drawing_area())
        .map_err(|e| format!("{}: {e}", svg.display()))?;
    // No chart command has --force: a path the gate refuses is never written.
    iosched_gate::write_file(&png, &png_bytes, false).map_err(|e| e.to_string())?;
    iosched_gate::write_file(&svg, svg_text.as_bytes(), false).map_err(|e| e.to_string())?;
    Ok([png, svg])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Seed 000's slow-disk table (the seed's 3.59 and 2.49 MB/s) beside `ours`.
    fn slow_hdd(ours: [f64; 2]) -> PlotTable {
        PlotTable {
            title: "slow HDD".into(),
            unit: "MB/s".into(),
            rows: vec!["CFQ".into(), "noop".into()],
            columns: vec![PlotColumn {
                header: "aggregate".into(),
                seed: vec![Some(3.59), Some(2.49)],
                ours: ours.to_vec(),
            }],
            sweep: false,
            x_desc: None,
        }
    }

    #[test]
    fn writes_a_png_and_an_svg_with_the_title() {
        let dir = iosched_workload::scratch::ScratchDir::new("plot");
        let table = slow_hdd([3.1, 2.2]);
        let [png, svg] = write_table(&dir.join("t"), &table).unwrap();
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(text.contains("slow HDD"));
    }

    /// The x extent of every bar of `colour` (the legend's 10 px swatches left out).
    fn bar_spans(svg: &str, colour: &str) -> Vec<(u32, u32)> {
        svg.lines()
            .filter(|line| line.contains("<rect") && line.contains(colour))
            .filter_map(|line| {
                let attr = |name: &str| -> Option<u32> {
                    let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
                    line[start..].split('"').next()?.parse().ok()
                };
                let (x, width) = (attr("x")?, attr("width")?);
                (width > 10).then_some((x, x + width))
            })
            .collect()
    }

    /// The heights of every bar of `colour`, in pixels, left to right.
    fn bar_heights(svg: &str, colour: &str) -> Vec<u32> {
        svg.lines()
            .filter(|line| line.contains("<rect") && line.contains(colour))
            .filter_map(|line| {
                let attr = |name: &str| -> Option<u32> {
                    let start = line.find(&format!(" {name}=\""))? + name.len() + 3;
                    line[start..].split('"').next()?.parse().ok()
                };
                (attr("width")? > 10).then_some(attr("height")?)
            })
            .collect()
    }

    /// A seed table's bars are each series against its own first row, so the seed's 3.6 MB/s
    /// stands as tall as our 90 (seed 000's slow disk) and each later pair compares the
    /// ratios the verdicts judge; the figures above the bars stay absolute, the y axis is
    /// titled with the baseline, the legend names both series.
    #[test]
    fn seed_bars_are_relative_to_the_first_row_with_absolute_figures() {
        let dir = iosched_workload::scratch::ScratchDir::new("relative");
        let table = slow_hdd([90.2, 84.9]);
        let [png, svg] = write_table(&dir.join("t"), &table).unwrap();
        assert_chart_texts(
            &png,
            &svg,
            &[
                "× CFQ",
                "aggregate: bars relative to CFQ, figures in MB/s",
                "seed",
                "iosched",
                "3.59",
                "90.2",
                "84.9",
            ],
        );
        let text = std::fs::read_to_string(svg).unwrap();
        let (seed, ours) = (bar_heights(&text, "#A0AEC0"), bar_heights(&text, "#2166AC"));
        assert_eq!((seed.len(), ours.len()), (2, 2));
        assert!(seed[0].abs_diff(ours[0]) <= 1, "{seed:?} {ours:?}");
        // noop over CFQ: the seed's 0.69 below our 0.94.
        let ratio = |bars: &[u32]| f64::from(bars[1]) / f64::from(bars[0]);
        assert!((ratio(&seed) - 2.49 / 3.59).abs() < 0.02, "{seed:?}");
        assert!((ratio(&ours) - 84.9 / 90.2).abs() < 0.02, "{ours:?}");
    }

    /// Without seed figures (a replay's table) the bars are absolute: the y axis is titled
    /// with the unit and the x axis with the table's `x_desc`.
    #[test]
    fn absolute_bars_title_both_axes() {
        let dir = iosched_workload::scratch::ScratchDir::new("absolute");
        let table = PlotTable {
            title: "replay".into(),
            unit: "MB/s".into(),
            rows: vec!["noop".into(), "cfq".into()],
            columns: vec![PlotColumn {
                header: "aggregate".into(),
                seed: vec![None, None],
                ours: vec![4.9, 86.5],
            }],
            sweep: false,
            x_desc: Some("scheduler".into()),
        };
        let [png, svg] = write_table(&dir.join("r"), &table).unwrap();
        assert_chart_texts(&png, &svg, &["MB/s", "scheduler", "noop", "cfq", "86.5"]);
        let heights = bar_heights(&std::fs::read_to_string(svg).unwrap(), "#2166AC");
        let ratio = f64::from(heights[1]) / f64::from(heights[0]);
        assert!((ratio - 86.5 / 4.9).abs() < 0.5, "{heights:?}");
    }

    /// One row of figures per group: one panel, the groups along x, the seed's bar beside ours
    /// rather than under it, and a gap between groups.
    #[test]
    fn a_single_row_puts_the_seeds_bar_beside_ours() {
        let dir = iosched_workload::scratch::ScratchDir::new("onerow");
        let columns = ["top-app", "foreground", "default", "background"]
            .iter()
            .map(|group| PlotColumn {
                header: group.to_string(),
                seed: vec![Some(30.0)],
                ours: vec![40.0],
            })
            .collect();
        let table = PlotTable {
            title: "four groups".into(),
            unit: "MB/s".into(),
            rows: vec!["pressure".into()],
            columns,
            sweep: false,
            x_desc: None,
        };
        let [_, svg] = write_table(&dir.join("g"), &table).unwrap();
        let text = std::fs::read_to_string(svg).unwrap();
        let seed = bar_spans(&text, "#A0AEC0");
        let ours = bar_spans(&text, "#2166AC");
        assert_eq!((seed.len(), ours.len()), (4, 4), "one bar each per group");
        for (s, o) in seed.iter().zip(&ours) {
            assert!(s.1 <= o.0, "seed bar {s:?} overlaps ours {o:?}");
            assert!(
                o.0 - s.1 <= 4,
                "a group's two bars sit together: {s:?} {o:?}"
            );
        }
        // Groups stand apart: the gap between groups is wider than a bar pair's seam.
        for (o, next) in ours.iter().zip(seed.iter().skip(1)) {
            assert!(
                next.0 >= o.1 + 20,
                "groups run together: {o:?} then {next:?}"
            );
        }
        assert!(text.lines().any(|line| line.trim() == "background"));
    }

    /// A sweep draws one chart whose x labels are the column headers, its axes titled.
    #[test]
    fn a_sweep_is_one_chart_labelled_by_column() {
        let dir = iosched_workload::scratch::ScratchDir::new("sweep");
        let columns = (1..=12)
            .map(|threads| PlotColumn {
                header: format!("t{threads}"),
                seed: vec![Some(1000.0 + f64::from(threads)), Some(900.0)],
                ours: vec![800.0, 950.0 + f64::from(threads)],
            })
            .collect();
        let table = PlotTable {
            title: "sysbench".into(),
            unit: "ops/s".into(),
            rows: vec!["with".into(), "without".into()],
            columns,
            sweep: true,
            x_desc: Some("threads".into()),
        };
        let [png, svg] = write_table(&dir.join("s"), &table).unwrap();
        // Both axes titled (the swept variable, the unit), a legend entry per line.
        assert_chart_texts(
            &png,
            &svg,
            &[
                "threads",
                "ops/s",
                "with (iosched)",
                "with (seed)",
                "without (iosched)",
                "without (seed)",
            ],
        );
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            text.lines().any(|line| line.trim() == "t12"),
            "x labels are the headers"
        );
    }

    /// Without any seed figure (a replay's table) there is no legend and our bar sits
    /// centred on its row.
    #[test]
    fn a_table_without_seed_figures_has_no_seed_legend() {
        let dir = std::env::temp_dir().join(format!("iosched-noseed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = PlotTable {
            title: "replay".into(),
            unit: "MB/s".into(),
            rows: vec!["noop".into(), "cfq".into()],
            columns: vec![PlotColumn {
                header: "aggregate".into(),
                seed: vec![None, None],
                ours: vec![4.9, 86.5],
            }],
            sweep: false,
            x_desc: None,
        };
        let [_, svg] = write_table(&dir.join("r"), &table).unwrap();
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(
            !text.lines().any(|line| line.trim() == "seed"),
            "no seed legend"
        );
        let ours = bar_spans(&text, "#2166AC");
        assert_eq!(ours.len(), 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
