//! Plots of seed tables: one panel per column, the seed's figure and ours side by side for
//! every row, written as PNG and SVG.
//!
//! The font ships with the crate (DejaVu Sans, see `assets/DejaVuSans.LICENSE`) so a plot
//! looks the same on every machine and needs no system font configuration.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");
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
}

fn register() {
    REGISTER.call_once(|| {
        // The bytes are a valid TrueType font compiled into the binary; failure is impossible
        // short of a corrupted build, which the tests would catch.
        if register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            panic!("embedded DejaVu Sans does not parse");
        }
    });
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
    let panels = area.split_evenly((table.columns.len().max(1), 1));
    for (panel, column) in panels.iter().zip(&table.columns) {
        let top = column
            .seed
            .iter()
            .flatten()
            .copied()
            .chain(column.ours.iter().copied().filter(|v| v.is_finite()))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        // A segmented range `0..n` has n + 1 segments; the last row is `n - 1`.
        let rows = (table.rows.len() as u32).saturating_sub(1);
        let mut chart = ChartBuilder::on(panel)
            .caption(
                format!("{} ({})", column.header, table.unit),
                ("sans-serif", 16),
            )
            .margin(8)
            .x_label_area_size(28)
            .y_label_area_size(56)
            .build_cartesian_2d((0u32..rows).into_segmented(), 0f64..top)
            .map_err(error)?;
        let labels = table.rows.clone();
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => labels
                    .get(*i as usize)
                    .map(|l| short_label(l))
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .label_style(("sans-serif", 12))
            .draw()
            .map_err(error)?;
        let bars = |values: Vec<(u32, f64)>, colour: RGBColor, left: bool| {
            values.into_iter().map(move |(row, value)| {
                let (x0, x1) = if left {
                    (SegmentValue::Exact(row), SegmentValue::CenterOf(row))
                } else {
                    (SegmentValue::CenterOf(row), SegmentValue::Exact(row + 1))
                };
                let mut bar = Rectangle::new([(x0, 0.0), (x1, value)], colour.filled());
                bar.set_margin(0, 0, 3, 3);
                bar
            })
        };
        let seed: Vec<(u32, f64)> = column
            .seed
            .iter()
            .enumerate()
            .filter_map(|(row, v)| v.map(|v| (row as u32, v)))
            .collect();
        let ours: Vec<(u32, f64)> = column
            .ours
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite())
            .map(|(row, v)| (row as u32, *v))
            .collect();
        chart
            .draw_series(bars(seed, SEED_COLOUR, true))
            .map_err(error)?
            .label("seed")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], SEED_COLOUR.filled()));
        chart
            .draw_series(bars(ours, OURS_COLOUR, false))
            .map_err(error)?
            .label("iosched")
            .legend(|(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], OURS_COLOUR.filled()));
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 12))
            .draw()
            .map_err(error)?;
    }
    area.present().map_err(error)
}

/// Row labels are long ("Pristine 3.1.0-rc2 (CFQ, slice_idle=0)") and differ at the end, so
/// a long label keeps its last characters.
fn short_label(label: &str) -> String {
    const MAX: usize = 26;
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= MAX {
        label.to_string()
    } else {
        let tail: String = chars[chars.len() - (MAX - 1)..].iter().collect();
        format!("…{tail}")
    }
}

/// Writes `<base>.png` and `<base>.svg`; returns their paths.
pub fn write_table(base: &Path, table: &PlotTable) -> Result<[PathBuf; 2], String> {
    register();
    let height = 80 + 300 * table.columns.len().max(1) as u32;
    let widest = table
        .rows
        .iter()
        .map(|row| short_label(row).chars().count() as u32)
        .max()
        .unwrap_or(4);
    let width = (100 + (widest * 7 + 16).max(70) * table.rows.len() as u32)
        .max(12 * table.title.chars().count() as u32)
        .max(720);
    let png = base.with_extension("png");
    let svg = base.with_extension("svg");
    draw(
        BitMapBackend::new(&png, (width, height)).into_drawing_area(),
        table,
    )
    .map_err(|e| format!("{}: {e}", png.display()))?;
    draw(
        SVGBackend::new(&svg, (width, height)).into_drawing_area(),
        table,
    )
    .map_err(|e| format!("{}: {e}", svg.display()))?;
    Ok([png, svg])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_a_png_and_an_svg_with_the_title() {
        let dir = std::env::temp_dir().join(format!("iosched-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = PlotTable {
            title: "slow HDD".into(),
            unit: "MB/s".into(),
            rows: vec!["CFQ".into(), "noop".into()],
            columns: vec![PlotColumn {
                header: "aggregate".into(),
                seed: vec![Some(3.59), Some(2.49)],
                ours: vec![3.1, 2.2],
            }],
        };
        let [png, svg] = write_table(&dir.join("t"), &table).unwrap();
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[1..4], b"PNG");
        let text = std::fs::read_to_string(svg).unwrap();
        assert!(text.contains("slow HDD"));
    }
}
