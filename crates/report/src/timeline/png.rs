//! A [`Scene`] as a PNG: drawn with plotters' bitmap backend in memory (text by
//! [`crate::glyphs::CrispText`], the embedded DejaVu Sans), encoded, and handed back as bytes
//! for the output gate.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::layout::{Anchor, Item, Layer, Rgb, Scene, Shape};

/// The PNG bytes of `scene`.
pub fn to_png(scene: &Scene) -> Result<Vec<u8>, String> {
    crate::plot::register();
    let size = (scene.width.ceil() as u32, scene.height.ceil() as u32);
    let mut rgb = vec![0u8; size.0 as usize * size.1 as usize * 3];
    {
        let area = crate::glyphs::CrispText(BitMapBackend::with_buffer(&mut rgb, size))
            .into_drawing_area();
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        // Fixed first, then what sits on the time axis, then its labels: the SVG's order.
        for layer in [Layer::Fixed, Layer::Time, Layer::TimeText] {
            for item in scene.items.iter().filter(|i| i.layer == layer) {
                draw(&area, item).map_err(|e| e.to_string())?;
            }
        }
        area.present().map_err(|e| e.to_string())?;
    }
    let mut png = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut png),
        &rgb,
        size.0,
        size.1,
        image::ColorType::Rgb8,
    )
    .map_err(|e| format!("encoding the PNG: {e}"))?;
    Ok(png)
}

fn colour(c: Rgb) -> RGBColor {
    RGBColor(c.0, c.1, c.2)
}

fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    item: &Item,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let c = colour(item.colour);
    match &item.shape {
        Shape::Rect { x, y, w, h } => {
            let (x0, y0) = (x.round() as i32, y.round() as i32);
            // A window shorter than a pixel still shows as one.
            let x1 = ((x + w).round() as i32).max(x0 + 1);
            let y1 = ((y + h).round() as i32).max(y0 + 1);
            area.draw(&Rectangle::new([(x0, y0), (x1 - 1, y1 - 1)], c.filled()))
        }
        Shape::Line {
            x1,
            y1,
            x2,
            y2,
            width,
        } => {
            let points = vec![
                (x1.round() as i32, y1.round() as i32),
                (x2.round() as i32, y2.round() as i32),
            ];
            let stroke = (width.round() as u32).max(1);
            area.draw(&PathElement::new(points, c.stroke_width(stroke)))
        }
        Shape::Text {
            x,
            y,
            text,
            size,
            anchor,
        } => {
            let h = match anchor {
                Anchor::Start => HPos::Left,
                Anchor::Middle => HPos::Center,
                Anchor::End => HPos::Right,
            };
            let style = ("sans-serif", *size)
                .into_font()
                .color(&c)
                .pos(Pos::new(h, VPos::Center));
            area.draw(&Text::new(
                text.clone(),
                (x.round() as i32, y.round() as i32),
                style,
            ))
        }
    }
}
