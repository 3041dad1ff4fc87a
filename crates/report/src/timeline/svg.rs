//! A [`Scene`] as SVG text, written by hand rather than through plotters so the page's
//! script can find its layers: `<g id="time">` (stretched when zooming, strokes kept thin by
//! `vector-effect`), `<g id="time-text">` (moved, never stretched; each text keeps its
//! unzoomed x in `data-x`), and the fixed rest. Hover text is each element's `<title>`.

use std::fmt::Write;

use super::layout::{Anchor, Item, Layer, Scene, Shape, PLOT_W, PLOT_X};

/// The SVG document of `scene`.
pub fn to_svg(scene: &Scene) -> String {
    let mut out = String::with_capacity(256 + scene.items.len() * 120);
    let axes: Vec<String> = scene
        .axes
        .iter()
        .map(|a| format!("{:.1},{:.1}", a.top, a.bottom))
        .collect();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" \
         font-family=\"DejaVu Sans, sans-serif\" data-plot-x=\"{PLOT_X}\" data-plot-w=\"{PLOT_W}\" \
         data-from-ns=\"{}\" data-to-ns=\"{}\" data-origin-ns=\"{}\" data-axes=\"{}\">",
        scene.from_ns,
        scene.to_ns,
        scene.origin_ns,
        axes.join(";"),
        w = scene.width,
        h = scene.height.ceil(),
    );
    let _ = writeln!(
        out,
        "<defs><clipPath id=\"plot\"><rect x=\"{PLOT_X}\" y=\"0\" width=\"{PLOT_W}\" height=\"{}\"/></clipPath></defs>",
        scene.height.ceil()
    );
    out.push_str("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n<g id=\"fixed\">\n");
    layer(&mut out, scene, Layer::Fixed);
    out.push_str("</g>\n<g clip-path=\"url(#plot)\"><g id=\"time\">\n");
    layer(&mut out, scene, Layer::Time);
    out.push_str("</g><g id=\"time-text\">\n");
    layer(&mut out, scene, Layer::TimeText);
    out.push_str("</g></g>\n</svg>\n");
    out
}

fn layer(out: &mut String, scene: &Scene, which: Layer) {
    for item in scene.items.iter().filter(|i| i.layer == which) {
        element(out, item);
    }
}

fn element(out: &mut String, item: &Item) {
    let colour = item.colour.hex();
    let class = item
        .class
        .map(|c| format!(" class=\"{c}\""))
        .unwrap_or_default();
    let (open, body) = match &item.shape {
        Shape::Rect { x, y, w, h } => (
            format!("<rect{class} x=\"{x:.2}\" y=\"{y:.2}\" width=\"{w:.2}\" height=\"{h:.2}\" fill=\"{colour}\""),
            "rect",
        ),
        Shape::Line { x1, y1, x2, y2, width } => {
            let thin = if item.layer == Layer::Time { " vector-effect=\"non-scaling-stroke\"" } else { "" };
            (
                format!(
                    "<line{class} x1=\"{x1:.2}\" y1=\"{y1:.2}\" x2=\"{x2:.2}\" y2=\"{y2:.2}\" \
                     stroke=\"{colour}\" stroke-width=\"{width}\"{thin}"
                ),
                "line",
            )
        }
        Shape::Text { x, y, text, size, anchor } => {
            let anchor = match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "middle",
                Anchor::End => "end",
            };
            let _ = write!(
                out,
                "<text{class} x=\"{x:.2}\" y=\"{y:.2}\" data-x=\"{x:.2}\" font-size=\"{size}\" \
                 text-anchor=\"{anchor}\" dominant-baseline=\"central\" fill=\"{colour}\">{}",
                escape(text)
            );
            if let Some(title) = &item.title {
                let _ = write!(out, "<title>{}</title>", escape(title));
            }
            out.push_str("</text>\n");
            return;
        }
    };
    out.push_str(&open);
    match &item.title {
        Some(title) => {
            let _ = writeln!(out, "><title>{}</title></{body}>", escape(title));
        }
        None => out.push_str("/>\n"),
    }
}

/// Text escaped for XML content and attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::layout::{Item, Layer, Rgb, Scene, Shape};
    use super::*;

    /// Time items go in the zoomable group with thin strokes, text is escaped, hover text is a
    /// `<title>`.
    #[test]
    fn time_items_go_in_the_zoomable_group() {
        let item = |layer, shape| Item {
            layer,
            shape,
            colour: Rgb(1, 2, 3),
            title: None,
            class: None,
        };
        let mut line = item(
            Layer::Time,
            Shape::Line {
                x1: 1.0,
                y1: 2.0,
                x2: 3.0,
                y2: 4.0,
                width: 1.0,
            },
        );
        line.title = Some("a < b".into());
        let text = Shape::Text {
            x: 5.0,
            y: 6.0,
            text: "x & y".into(),
            size: 10.0,
            anchor: Anchor::End,
        };
        let scene = Scene {
            width: 100.0,
            height: 50.0,
            from_ns: 0,
            to_ns: 1,
            origin_ns: 0,
            axes: Vec::new(),
            items: vec![line, item(Layer::Fixed, text)],
            lanes: Vec::new(),
        };
        let svg = to_svg(&scene);
        let time =
            &svg[svg.find("<g id=\"time\">").unwrap()..svg.find("<g id=\"time-text\">").unwrap()];
        assert!(
            time.contains("vector-effect=\"non-scaling-stroke\""),
            "{time}"
        );
        assert!(time.contains("<title>a &lt; b</title></line>"), "{time}");
        assert!(svg.contains(">x &amp; y</text>"), "{svg}");
        assert!(svg.contains("stroke=\"#010203\""));
    }
}
