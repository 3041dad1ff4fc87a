//! Text in PNG plots, drawn with each glyph where the font puts it.
//!
//! plotters 0.3.7 rasterises a glyph at the pen position without its left side bearing, so
//! narrow glyphs with a wide bearing (`.`, `-`, `1`) sit too far left and the text reads
//! "3.1. 0-rc2" or "/top -app". [`CrispText`] wraps a bitmap backend and draws text itself:
//! the same layout box, anchors and rotation as plotters', each glyph offset by its bearing.
//! The SVG backend writes text as text, which the viewer lays out, and needs no wrapper.

use std::sync::OnceLock;

use ab_glyph::{point, Font, FontRef, ScaleFont};
use plotters::style::text_anchor::{HPos, VPos};
use plotters_backend::{
    BackendColor, BackendCoord, BackendStyle, BackendTextStyle, DrawingBackend, DrawingErrorKind,
};

use crate::plot::FONT;

fn font() -> &'static FontRef<'static> {
    static PARSED: OnceLock<FontRef<'static>> = OnceLock::new();
    PARSED.get_or_init(|| {
        // The embedded DejaVu Sans parses; plot::register() relies on the same bytes.
        FontRef::try_from_slice(FONT).expect("embedded DejaVu Sans parses")
    })
}

/// A bitmap backend whose text keeps the font's spacing.
pub(crate) struct CrispText<B>(pub B);

impl<B: DrawingBackend> CrispText<B> {
    /// `text`'s coverage as (x, y, alpha), x from the pen's start, y from the top of a line
    /// `size` pixels high (plotters' own vertical placement).
    fn coverage(text: &str, size: f64) -> Vec<(i32, i32, f32)> {
        let font = font().as_scaled(size as f32);
        let mut pixels = Vec::new();
        let mut pen = 0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(before) = previous {
                pen += font.kern(before, id);
            }
            previous = Some(id);
            let glyph = id.with_scale_and_position(size as f32, point(pen, 0.0));
            if let Some(outline) = font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                let left = bounds.min.x as i32;
                let top = (size as f32 / 2.0 + bounds.min.y) as i32;
                outline.draw(|x, y, alpha| pixels.push((left + x as i32, top + y as i32, alpha)));
            }
            pen += font.h_advance(id);
        }
        pixels
    }
}

impl<B: DrawingBackend> DrawingBackend for CrispText<B> {
    type ErrorType = B::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.0.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_pixel(point, color)
    }

    fn draw_line<S: BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_line(from, to, style)
    }

    fn draw_rect<S: BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn draw_path<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        path: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_path(path, style)
    }

    fn draw_circle<S: BackendStyle>(
        &mut self,
        center: BackendCoord,
        radius: u32,
        style: &S,
        fill: bool,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.draw_circle(center, radius, style, fill)
    }

    fn fill_polygon<S: BackendStyle, I: IntoIterator<Item = BackendCoord>>(
        &mut self,
        vert: I,
        style: &S,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.fill_polygon(vert, style)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        self.0.blit_bitmap(pos, size, src)
    }

    /// plotters' text placement (layout box, anchor, rotation), with [`Self::coverage`]'s
    /// glyphs.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), DrawingErrorKind<Self::ErrorType>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let (width, height) = (max_x - min_x, max_y - min_y);
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -width,
            HPos::Center => -width / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -height / 2,
            VPos::Bottom => -height,
        };
        let transform = style.transform();
        let (w, h) = self.get_size();
        for (x, y, alpha) in Self::coverage(text, style.size()) {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && x < w as i32 && y >= 0 && y < h as i32 {
                self.0.draw_pixel((x, y), color.mix(f64::from(alpha)))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::BitMapBackend;

    /// In "3.1" the dot sits in the middle between the "3" and the "1", as the font's side
    /// bearings put it; drawn at the pen position without them it hugs the "3".
    #[test]
    fn glyphs_keep_their_side_bearings() {
        let columns = |pixels: &[(i32, i32, f32)]| {
            let mut inked: Vec<i32> = pixels.iter().filter(|p| p.2 > 0.5).map(|p| p.0).collect();
            inked.sort_unstable();
            inked.dedup();
            inked
        };
        let ink = columns(&CrispText::<BitMapBackend>::coverage("3.1", 40.0));
        // Runs of consecutive columns: the three glyphs.
        let mut runs: Vec<(i32, i32)> = Vec::new();
        for x in ink {
            match runs.last_mut() {
                Some(run) if run.1 + 1 == x => run.1 = x,
                _ => runs.push((x, x)),
            }
        }
        assert_eq!(runs.len(), 3, "{runs:?}");
        let before_dot = runs[1].0 - runs[0].1;
        let after_dot = runs[2].0 - runs[1].1;
        // DejaVu Sans at 40 px: 8 and 9 px; without the bearings 6 and 9.
        assert!(
            (before_dot - after_dot).abs() <= 1,
            "gaps {before_dot} and {after_dot}: {runs:?}"
        );
    }
}
