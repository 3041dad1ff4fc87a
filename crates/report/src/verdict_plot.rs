//! The verdicts of a seed as one chart: each comparison's ratio, the seed's and ours, as bars
//! from 1 on a log axis (a ratio above 1 points right, below 1 left, so a direction reads at a
//! glance, and 0.5 sits as far from 1 as 2), with both verdicts written beside it. The seed's
//! story rests on these ratios, not on absolute figures, which a seed's machine and ours
//! need not share.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::plot::{write_png_and_svg, Figure};

const SEED_COLOUR: RGBColor = RGBColor(160, 174, 192);
const OURS_COLOUR: RGBColor = RGBColor(33, 102, 172);

/// One comparison and its verdicts.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictBar {
    pub name: String,
    pub seed_ratio: f64,
    pub ratio: f64,
    pub direction_ok: bool,
    pub within_25pct: bool,
}

/// Writes `<base>.png` and `<base>.svg`; returns their paths.
pub fn write_verdicts(
    base: &Path,
    title: &str,
    bars: &[VerdictBar],
) -> Result<[PathBuf; 2], String> {
    let size = (1280, 110 + 34 * bars.len().max(1) as u32);
    write_png_and_svg(base, size, &Verdicts { title, bars })
}

/// A seed's verdict chart, as [`write_verdicts`] draws it.
struct Verdicts<'a> {
    title: &'a str,
    bars: &'a [VerdictBar],
}

impl Figure for Verdicts<'_> {
    fn draw<DB: DrawingBackend>(&self, area: DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        draw(area, self.title, self.bars)
    }
}

/// The log axis's span: every ratio and 1, with room on both sides.
fn span(bars: &[VerdictBar]) -> (f64, f64) {
    let ratios = bars
        .iter()
        .flat_map(|b| [b.seed_ratio, b.ratio])
        .filter(|r| r.is_finite() && *r > 0.0);
    let (low, high) = ratios.fold((1.0f64, 1.0f64), |(lo, hi), r| (lo.min(r), hi.max(r)));
    (low / 1.6, high * 1.6)
}

fn verdict_text(bar: &VerdictBar) -> String {
    let word = |ok: bool| if ok { "yes" } else { "NO" };
    format!(
        "ours {:.2}, seed {:.2}: direction {}, ±25 % {}",
        bar.ratio,
        bar.seed_ratio,
        word(bar.direction_ok),
        word(bar.within_25pct)
    )
}

fn draw<DB: DrawingBackend>(
    area: DrawingArea<DB, Shift>,
    title: &str,
    bars: &[VerdictBar],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let error = |e: DrawingAreaErrorKind<DB::ErrorType>| e.to_string();
    area.fill(&WHITE).map_err(error)?;
    let (low, high) = span(bars);
    let count = bars.len().max(1);
    // The first comparison on top.
    let y_of = |index: usize| (count - 1 - index) as f64;
    let names: Vec<String> = bars.iter().map(|b| b.name.clone()).collect();
    let mut chart = ChartBuilder::on(&area)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .margin_right(300)
        .x_label_area_size(44)
        .y_label_area_size(440)
        .build_cartesian_2d((low..high).log_scale(), -0.5f64..count as f64 - 0.5)
        .map_err(error)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(count + 1)
        .y_label_formatter(&|y| {
            let index = y.round();
            if (y - index).abs() > 1e-6 || index < 0.0 {
                return String::new();
            }
            let from_top = count as i64 - 1 - index as i64;
            usize::try_from(from_top)
                .ok()
                .and_then(|i| names.get(i).cloned())
                .unwrap_or_default()
        })
        .x_label_formatter(&|x| format!("{x:.2}"))
        .x_desc("ratio (a over b; 1 = no change; log scale)")
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .draw()
        .map_err(error)?;
    chart
        .draw_series(std::iter::once(PathElement::new(
            [(1.0, -0.5), (1.0, count as f64 - 0.5)],
            BLACK.stroke_width(1),
        )))
        .map_err(error)?;
    for (colour, offset, label, pick) in [
        (
            SEED_COLOUR,
            0.05,
            "seed",
            (|b: &VerdictBar| b.seed_ratio) as fn(&VerdictBar) -> f64,
        ),
        (OURS_COLOUR, -0.35, "iosched", |b: &VerdictBar| b.ratio),
    ] {
        chart
            .draw_series(bars.iter().enumerate().map(|(i, b)| {
                let y = y_of(i) + offset;
                Rectangle::new([(1.0, y), (pick(b).max(low), y + 0.3)], colour.filled())
            }))
            .map_err(error)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], colour.filled()));
    }
    // Each verdict beside its bars, right of the plot.
    chart
        .draw_series(bars.iter().enumerate().map(|(i, b)| {
            Text::new(
                verdict_text(b),
                (high, y_of(i)),
                ("sans-serif", 13)
                    .into_font()
                    .color(if b.direction_ok { &BLACK } else { &RED })
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )
        }))
        .map_err(error)?;
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 13))
        .draw()
        .map_err(error)?;
    area.present().map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The x axis is titled as a ratio, every comparison is named and judged on the chart,
    /// and both series are in the legend.
    #[test]
    fn the_svg_names_every_comparison_and_its_verdicts() {
        let dir = iosched_workload::scratch::ScratchDir::new("verdict-plot");
        let bars = [
            VerdictBar {
                name: "CFQ over noop".into(),
                seed_ratio: 1.44,
                ratio: 1.06,
                direction_ok: true,
                within_25pct: false,
            },
            VerdictBar {
                name: "patched over pristine".into(),
                seed_ratio: 1.52,
                ratio: 0.95,
                direction_ok: false,
                within_25pct: false,
            },
        ];
        let [png, svg] = write_verdicts(&dir.join("v"), "seed 000", &bars).unwrap();
        crate::plot::assert_chart_texts(
            &png,
            &svg,
            &[
                "ratio (a over b",
                "CFQ over noop",
                "patched over pristine",
                "ours 1.06, seed 1.44: direction yes, ±25 % NO",
                "ours 0.95, seed 1.52: direction NO, ±25 % NO",
                "seed",
                "iosched",
            ],
        );
    }
}
