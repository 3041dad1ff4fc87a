//! A line chart over a swept input: one line per job or cgroup, x the swept values (a numeric
//! axis when they are numbers, else one tick per value), both axes titled with their units,
//! every line in the legend. `iosched sweep` draws its tables with it, and `reproduce` its
//! sweep tables, where each of our lines has the seed's beside it as a reference line (the
//! same hue, dashed, crosses for points).

use std::path::{Path, PathBuf};

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::plot::{write_png_and_svg, Figure};

/// One line: its legend entry and its (x, y) points in x order.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Index into the palette; lines without one take their own position's hue.
    pub colour: Option<usize>,
    /// A published figure to compare with: dashed and lighter, crosses for points.
    pub reference: bool,
}

impl Line {
    /// A solid line in its position's hue.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Line {
        Line {
            label: label.into(),
            points,
            colour: None,
            reference: false,
        }
    }
}

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_desc: String,
    pub y_desc: String,
    /// Names of the x positions 0, 1, 2... when the swept values are not numbers.
    pub categories: Option<Vec<String>>,
    pub lines: Vec<Line>,
}

/// Eight hues that stay apart on white (ColorBrewer Dark2 and Set1), then dashes for more.
pub(crate) const COLOURS: [RGBColor; 8] = [
    RGBColor(33, 102, 172),
    RGBColor(178, 24, 43),
    RGBColor(27, 120, 55),
    RGBColor(118, 42, 131),
    RGBColor(230, 120, 0),
    RGBColor(0, 150, 150),
    RGBColor(120, 90, 40),
    RGBColor(90, 90, 90),
];

/// Writes `<base>.png` and `<base>.svg`; returns their paths.
pub fn write_lines(base: &Path, chart: &LineChart) -> Result<[PathBuf; 2], String> {
    write_png_and_svg(base, (960, 600), chart)
}

impl Figure for LineChart {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        draw(area, self)
    }
}

/// The x range: the values' span with a little room, or the category positions.
fn x_range(chart: &LineChart) -> (f64, f64) {
    if let Some(categories) = &chart.categories {
        return (-0.25, categories.len().saturating_sub(1) as f64 + 0.25);
    }
    let xs = chart
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0));
    let (low, high) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)));
    if low > high {
        return (0.0, 1.0);
    }
    let pad = ((high - low) * 0.03).max(0.5);
    (low - pad, high + pad)
}

/// An axis figure without a trailing `.0`.
fn figure(value: f64) -> String {
    if value.fract().abs() < 1e-9 {
        format!("{value:.0}")
    } else if value.abs() >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

pub(crate) fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    chart: &LineChart,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let top = chart
        .lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max)
        .max(1e-9)
        * 1.12;
    let (left, right) = x_range(chart);
    let mut plot = ChartBuilder::on(&area)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(left..right, 0f64..top)
        .map_err(error)?;
    let categories = chart.categories.clone();
    let ticks = categories.as_ref().map_or(10, |c| c.len().max(2));
    plot.configure_mesh()
        .x_labels(ticks)
        .x_label_formatter(&|x| match &categories {
            Some(names) => {
                let index = x.round();
                if (x - index).abs() < 1e-6 && index >= 0.0 {
                    names.get(index as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            }
            None => figure(*x),
        })
        .y_label_formatter(&|y| figure(*y))
        .x_desc(&chart.x_desc)
        .y_desc(&chart.y_desc)
        .max_light_lines(1)
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(error)?;
    for (index, line) in chart.lines.iter().enumerate() {
        draw_line(&mut plot, index, line).map_err(error)?;
    }
    plot.configure_series_labels()
        .position(free_corner(chart, top))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(error)?;
    area.present().map_err(error)
}

type Plot<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One line with its markers and legend entry.
fn draw_line<DB: DrawingBackend>(
    plot: &mut Plot<'_, DB>,
    index: usize,
    line: &Line,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let hue = COLOURS[line.colour.unwrap_or(index) % COLOURS.len()];
    let points = line.points.clone();
    if line.reference {
        let colour = hue.mix(0.6);
        let stroke = colour.stroke_width(2);
        plot.draw_series(DashedLineSeries::new(points, 6, 4, stroke))?
            .label(line.label.clone())
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], stroke));
        plot.draw_series(line.points.iter().map(|&p| Cross::new(p, 4, colour)))?;
        return Ok(());
    }
    let stroke = hue.stroke_width(2);
    // Past the palette, hues repeat: dashes tell those lines apart.
    let series = if line.colour.is_none() && index >= COLOURS.len() {
        plot.draw_series(DashedLineSeries::new(points, 7, 4, stroke))?
    } else {
        plot.draw_series(LineSeries::new(points, stroke))?
    };
    series
        .label(line.label.clone())
        .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], stroke));
    plot.draw_series(line.points.iter().map(|&p| Circle::new(p, 3, hue.filled())))?;
    Ok(())
}

/// The legend goes in the right-hand corner the lines leave free at their last points.
fn free_corner(chart: &LineChart, top: f64) -> SeriesLabelPosition {
    let last_high = chart
        .lines
        .iter()
        .filter_map(|line| line.points.last().map(|p| p.1))
        .filter(|y| y.is_finite())
        .fold(0.0f64, f64::max);
    if last_high < top * 0.5 {
        SeriesLabelPosition::UpperRight
    } else {
        SeriesLabelPosition::LowerRight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Axis titles and every line's legend entry are in the SVG; categories label the ticks.
    #[test]
    fn the_svg_names_axes_and_lines() {
        let dir = std::env::temp_dir().join(format!("iosched-sweep-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let chart = LineChart {
            title: "Sweep".into(),
            x_desc: "scheduler".into(),
            y_desc: "throughput (MB/s)".into(),
            categories: Some(vec!["noop".into(), "cfq".into()]),
            lines: vec![
                Line::new("/top-app", vec![(0.0, 10.0), (1.0, 30.0)]),
                Line::new("total", vec![(0.0, 40.0), (1.0, 41.0)]),
            ],
        };
        let [png, svg] = write_lines(&dir.join("sweep"), &chart).unwrap();
        crate::plot::assert_chart_texts(
            &png,
            &svg,
            &[
                "scheduler",
                "throughput (MB/s)",
                "/top-app",
                "total",
                "noop",
                "cfq",
            ],
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
