//! The timeline of a run: what the scheduler decided and when, beside what the disk did.
//!
//! [`input`] reads a decision log (`iosched run --decisions`) and a block trace (`--trace`:
//! blkparse text or blktrace binary; or a kernel's capture, including ftrace's block events);
//! [`model`] turns them into intervals (requests, slices, idle windows used or wasted,
//! preemptions); [`layout`] places them on a page; [`png`], [`svg`] and [`html`] draw that
//! page. [`write`] picks the renderer from the output's extension and writes through the
//! output gate.
//!
//! ```
//! use std::path::Path;
//! use iosched_report::timeline::{self, layout::Window, Format};
//!
//! let decisions = r#"{"t_ns":0,"kind":"select_queue","queue":7,"group":0,"reason":"first","value_ns":null}
//! {"t_ns":4000000,"kind":"arm_idle","queue":7,"group":0,"reason":"queue idle","value_ns":8000000}
//! {"t_ns":12000000,"kind":"idle_end","queue":7,"group":0,"reason":"idle timer fired","value_ns":null}"#;
//! let t = timeline::build(Some((Path::new("run.dec"), decisions)), None).unwrap();
//! assert_eq!(t.idles[0].outcome, timeline::model::Outcome::Wasted);
//! let svg = timeline::render(&t, "demo", Window::default(), Format::Svg).unwrap();
//! assert!(String::from_utf8(svg).unwrap().contains("queue idle"));
//! ```

pub mod html;
pub mod input;
pub mod layout;
pub mod model;
pub mod png;
pub mod svg;

use std::fmt;
use std::path::Path;

use input::InputError;
use layout::{LayoutError, Window};
use model::Timeline;

/// What a timeline is written as, by the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    Svg,
    Html,
}

impl Format {
    /// `.png`, `.svg`, `.html` (or `.htm`).
    pub fn of(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "png" => Some(Format::Png),
            "svg" => Some(Format::Svg),
            "html" | "htm" => Some(Format::Html),
            _ => None,
        }
    }
}

#[derive(Debug)]
pub enum TimelineError {
    Input(InputError),
    Layout(LayoutError),
    /// Drawing or writing the output; the message names the file.
    Output(String),
}

impl fmt::Display for TimelineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimelineError::Input(e) => e.fmt(f),
            TimelineError::Layout(e) => e.fmt(f),
            TimelineError::Output(e) => f.write_str(e),
        }
    }
}

impl std::error::Error for TimelineError {}

/// The timeline of a decision log and a trace, each given as (its path, its contents).
pub fn build(
    decisions: Option<(&Path, &str)>,
    trace: Option<(&Path, &[u8])>,
) -> Result<Timeline, InputError> {
    let decisions = match decisions {
        Some((path, text)) => {
            let read = input::read_decisions(path, text)?;
            if read.is_empty() && trace.is_none() {
                return Err(InputError {
                    path: path.to_path_buf(),
                    line: None,
                    message:
                        "no decisions (noop and deadline make none) and no --trace: nothing to draw"
                            .into(),
                });
            }
            read
        }
        None => Vec::new(),
    };
    let trace = match trace {
        Some((path, bytes)) => Some(input::read_trace(path, bytes)?),
        None => None,
    };
    Ok(Timeline::build(&decisions, trace.as_ref()))
}

/// The bytes of `timeline` drawn as `format`.
pub fn render(
    timeline: &Timeline,
    title: &str,
    window: Window,
    format: Format,
) -> Result<Vec<u8>, TimelineError> {
    let scene = layout::layout(timeline, title, window).map_err(TimelineError::Layout)?;
    Ok(match format {
        Format::Png => png::to_png(&scene).map_err(TimelineError::Output)?,
        Format::Svg => svg::to_svg(&scene).into_bytes(),
        Format::Html => html::to_html(&scene, title).into_bytes(),
    })
}

/// Draws `timeline` into `out` (its extension picks the format) through the output gate.
pub fn write(
    timeline: &Timeline,
    title: &str,
    window: Window,
    out: &Path,
    force: bool,
) -> Result<(), TimelineError> {
    let format = Format::of(out).ok_or_else(|| {
        TimelineError::Output(format!(
            "{}: the extension says what to write: .png, .svg or .html",
            out.display()
        ))
    })?;
    let bytes = render(timeline, title, window, format).map_err(|e| match e {
        TimelineError::Output(m) => TimelineError::Output(format!("{}: {m}", out.display())),
        e => e,
    })?;
    iosched_gate::write_file(out, &bytes, force).map_err(|e| TimelineError::Output(e.to_string()))
}
