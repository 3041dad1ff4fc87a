//! Where everything of a [`Timeline`] goes on the page, as a flat list of rectangles, lines
//! and texts that each renderer draws as it is (PNG, SVG, HTML): the picture is decided once.
//!
//! From the top: one lane per queue (its slices, its requests — waiting in the scheduler,
//! then on the device, with a tick at each issue and completion — and its idle windows, used
//! or wasted), one lane per cgroup (its queues' slices and its group-idle windows), a time
//! axis, the sector of every request against time (as seekwatcher and iowatcher draw a
//! blktrace), a second time axis, and the legend. Items on the time axis are in [`Layer::Time`]
//! (the HTML page pans and zooms them horizontally); their labels in [`Layer::TimeText`] (moved,
//! never stretched); the rest is fixed.

use std::fmt;

use super::model::{IdleWindow, Io, Outcome, Slice, Timeline};

/// Page width in pixels.
pub const WIDTH: f64 = 1600.0;
/// Left of the plotting area: lane labels go before it.
pub const PLOT_X: f64 = 330.0;
/// Width of the plotting area.
pub const PLOT_W: f64 = WIDTH - PLOT_X - 24.0;
const QUEUE_LANE_H: f64 = 64.0;
const GROUP_LANE_H: f64 = 40.0;
const SECTOR_H: f64 = 220.0;
/// More requests than this in the window make a picture no one can read and a page no
/// browser opens quickly: narrow the window instead.
pub const MAX_REQUESTS: usize = 200_000;

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

impl Rgb {
    /// `#rrggbb`.
    pub fn hex(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }

    /// Mixed with white, `keep` of the colour kept.
    fn light(self, keep: f64) -> Rgb {
        let mix = |c: u8| (f64::from(c) * keep + 255.0 * (1.0 - keep)).round() as u8;
        Rgb(mix(self.0), mix(self.1), mix(self.2))
    }
}

/// Idle window that paid off: a request it waited for came.
pub const IDLE_USED: Rgb = Rgb(34, 160, 70);
/// Idle window that did not: the disk sat idle for nothing.
pub const IDLE_WASTED: Rgb = Rgb(214, 39, 40);
pub const PREEMPT: Rgb = Rgb(204, 0, 204);
pub const NO_IDLE: Rgb = Rgb(110, 110, 110);
pub const WAITING: Rgb = Rgb(150, 150, 150);
pub const QUEUE_LANE_BG: [Rgb; 2] = [Rgb(244, 245, 247), Rgb(255, 255, 255)];
pub const GROUP_LANE_BG: Rgb = Rgb(232, 238, 250);
const INK: Rgb = Rgb(30, 30, 30);
const GRID: Rgb = Rgb(215, 215, 215);
/// Queue colours, clear of the idle windows' green and red.
const QUEUE_COLOURS: [Rgb; 8] = [
    Rgb(31, 119, 180),
    Rgb(230, 120, 20),
    Rgb(148, 103, 189),
    Rgb(140, 86, 75),
    Rgb(23, 170, 190),
    Rgb(188, 170, 34),
    Rgb(227, 119, 194),
    Rgb(90, 90, 160),
];

/// A queue's colour, by its lane's position.
pub fn queue_colour(index: usize) -> Rgb {
    QUEUE_COLOURS[index % QUEUE_COLOURS.len()]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    Fixed,
    Time,
    TimeText,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Anchor {
    Start,
    Middle,
    End,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Rect {
        x: f64,
        y: f64,
        w: f64,
        h: f64,
    },
    Line {
        x1: f64,
        y1: f64,
        x2: f64,
        y2: f64,
        width: f64,
    },
    /// `y` is the text's middle.
    Text {
        x: f64,
        y: f64,
        text: String,
        size: f64,
        anchor: Anchor,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub layer: Layer,
    pub shape: Shape,
    pub colour: Rgb,
    /// Hover text (SVG `<title>`).
    pub title: Option<String>,
    /// What the item is, for the page's script and tests (`legend`, `lane`, `tick`...).
    pub class: Option<&'static str>,
}

/// A band of the page with a time axis: where ticks and grid lines go.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Axis {
    pub top: f64,
    pub bottom: f64,
}

/// The laid-out page.
#[derive(Clone, Debug, PartialEq)]
pub struct Scene {
    pub width: f64,
    pub height: f64,
    pub from_ns: u64,
    pub to_ns: u64,
    /// Where the time axis reads 0 (see [`Timeline::origin_ns`]).
    pub origin_ns: u64,
    pub axes: Vec<Axis>,
    pub items: Vec<Item>,
    /// Lane names, top to bottom (the page's summary and tests read them).
    pub lanes: Vec<String>,
}

/// The part of the run to draw, in ns from the timeline's origin ([`Timeline::origin_ns`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Window {
    pub from_ns: Option<u64>,
    pub to_ns: Option<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LayoutError {
    /// `--from` is not before `--to`, or the window misses the run.
    EmptyWindow {
        from_ns: u64,
        to_ns: u64,
        start_ns: u64,
        end_ns: u64,
    },
    TooManyRequests(usize),
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ms = |ns: u64| ns as f64 / 1e6;
        match *self {
            LayoutError::EmptyWindow {
                from_ns,
                to_ns,
                start_ns,
                end_ns,
            } => write!(
                f,
                "--from {} --to {} (ms) holds nothing: the run spans {} to {} ms",
                ms(from_ns),
                ms(to_ns),
                ms(start_ns),
                ms(end_ns)
            ),
            LayoutError::TooManyRequests(n) => write!(
                f,
                "{n} requests in the window, more than {MAX_REQUESTS} can be drawn legibly: \
                 narrow it with --from and --to"
            ),
        }
    }
}

impl std::error::Error for LayoutError {}

/// Lays out `timeline` within `window` under `title`.
pub fn layout(timeline: &Timeline, title: &str, window: Window) -> Result<Scene, LayoutError> {
    let origin = timeline.origin_ns;
    let from_ns = window
        .from_ns
        .map_or(timeline.start_ns, |f| origin.saturating_add(f));
    let to_ns = window
        .to_ns
        .map(|t| origin.saturating_add(t))
        .unwrap_or(timeline.end_ns.max(timeline.start_ns + 1));
    if from_ns >= to_ns || from_ns > timeline.end_ns || to_ns < timeline.start_ns {
        return Err(LayoutError::EmptyWindow {
            from_ns: from_ns.saturating_sub(origin),
            to_ns: to_ns.saturating_sub(origin),
            start_ns: timeline.start_ns.saturating_sub(origin),
            end_ns: timeline.end_ns.saturating_sub(origin),
        });
    }
    let shown = timeline
        .ios
        .iter()
        .filter(|io| overlaps(io_span(io), from_ns, to_ns))
        .count();
    if shown > MAX_REQUESTS {
        return Err(LayoutError::TooManyRequests(shown));
    }
    let mut page = Page {
        t: timeline,
        origin,
        from_ns,
        to_ns,
        items: Vec::new(),
        lanes: Vec::new(),
        axes: Vec::new(),
    };
    page.header(title);
    let mut y = 62.0;
    for index in 0..timeline.queues.len() {
        y = page.queue_lane(index, y);
    }
    for index in 0..timeline.groups.len() {
        y = page.group_lane(index, y);
    }
    page.preemptions(62.0);
    page.axis(62.0, y, "time (ms)");
    let sector_top = y + 44.0;
    page.sectors(sector_top);
    page.axis(sector_top, sector_top + SECTOR_H, "time (ms)");
    let height = page.legend(sector_top + SECTOR_H + 48.0);
    Ok(Scene {
        width: WIDTH,
        height,
        from_ns,
        to_ns,
        origin_ns: origin,
        axes: page.axes,
        items: page.items,
        lanes: page.lanes,
    })
}

fn overlaps((start, end): (u64, u64), from: u64, to: u64) -> bool {
    start <= to && end >= from
}

fn io_span(io: &Io) -> (u64, u64) {
    let start = io.insert_ns.or(io.issue_ns).unwrap_or(0);
    (start, io.complete_ns.or(io.issue_ns).unwrap_or(start))
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The page being laid out.
struct Page<'a> {
    t: &'a Timeline,
    /// Where the time axis reads 0.
    origin: u64,
    from_ns: u64,
    to_ns: u64,
    items: Vec<Item>,
    lanes: Vec<String>,
    axes: Vec<Axis>,
}

impl Page<'_> {
    /// An instant as the axis reads it, in ms.
    fn at(&self, t_ns: u64) -> String {
        ms(t_ns.saturating_sub(self.origin))
    }

    fn x(&self, t_ns: u64) -> f64 {
        let t = t_ns.clamp(self.from_ns, self.to_ns);
        PLOT_X + (t - self.from_ns) as f64 / (self.to_ns - self.from_ns) as f64 * PLOT_W
    }

    fn push(&mut self, layer: Layer, shape: Shape, colour: Rgb) -> &mut Item {
        self.items.push(Item {
            layer,
            shape,
            colour,
            title: None,
            class: None,
        });
        let last = self.items.len() - 1;
        &mut self.items[last]
    }

    fn rect(&mut self, layer: Layer, (x, y, w, h): (f64, f64, f64, f64), colour: Rgb) -> &mut Item {
        self.push(layer, Shape::Rect { x, y, w, h }, colour)
    }

    fn line(
        &mut self,
        layer: Layer,
        (x1, y1, x2, y2): (f64, f64, f64, f64),
        width: f64,
        colour: Rgb,
    ) -> &mut Item {
        self.push(
            layer,
            Shape::Line {
                x1,
                y1,
                x2,
                y2,
                width,
            },
            colour,
        )
    }

    fn text(
        &mut self,
        layer: Layer,
        (x, y): (f64, f64),
        text: String,
        size: f64,
        anchor: Anchor,
    ) -> &mut Item {
        self.push(
            layer,
            Shape::Text {
                x,
                y,
                text,
                size,
                anchor,
            },
            INK,
        )
    }

    fn header(&mut self, title: &str) {
        self.text(
            Layer::Fixed,
            (16.0, 20.0),
            title.to_string(),
            17.0,
            Anchor::Start,
        );
        let t = self.t;
        let idles: Vec<&IdleWindow> = t
            .idles
            .iter()
            .filter(|w| self.visible(w.start_ns, w.end_ns))
            .collect();
        let wasted: Vec<&&IdleWindow> = idles
            .iter()
            .filter(|w| w.outcome == Outcome::Wasted)
            .collect();
        let wasted_ns: u64 = wasted.iter().map(|w| w.end_ns - w.start_ns).sum();
        let idled_ns: u64 = idles.iter().map(|w| w.end_ns - w.start_ns).sum();
        let slices = t
            .slices
            .iter()
            .filter(|s| self.visible(s.start_ns, s.end_ns))
            .count();
        let summary = format!(
            "{} to {} ms · {} slices · {} idle windows: {} used, {} wasted; idled {} ms, {} ms of it wasted · {} preemptions",
            self.at(self.from_ns),
            self.at(self.to_ns),
            slices,
            idles.len(),
            idles.len() - wasted.len(),
            wasted.len(),
            ms(idled_ns),
            ms(wasted_ns),
            t.preemptions.iter().filter(|p| self.visible(p.t_ns, p.t_ns)).count(),
        );
        self.text(Layer::Fixed, (16.0, 42.0), summary, 12.5, Anchor::Start);
    }

    fn visible(&self, start: u64, end: u64) -> bool {
        overlaps((start, end), self.from_ns, self.to_ns)
    }

    /// The lane's background across the whole width, and its name.
    fn lane_frame(&mut self, y: f64, h: f64, bg: Rgb, name: String) {
        self.rect(Layer::Fixed, (0.0, y, WIDTH, h), bg).class = Some("lane");
        self.line(Layer::Fixed, (0.0, y + h, WIDTH, y + h), 1.0, GRID);
        self.lanes.push(name);
    }

    fn queue_lane(&mut self, index: usize, y: f64) -> f64 {
        let t = self.t;
        let lane = &t.queues[index];
        let colour = queue_colour(index);
        let name = match &lane.comm {
            Some(comm) => format!("{comm} (queue {})", lane.pid),
            None => format!("queue {}", lane.pid),
        };
        self.lane_frame(y, QUEUE_LANE_H, QUEUE_LANE_BG[index % 2], name.clone());
        self.rect(Layer::Fixed, (8.0, y + 8.0, 10.0, 10.0), colour);
        self.text(Layer::Fixed, (24.0, y + 13.0), name, 13.0, Anchor::Start);
        let group = lane.group.and_then(|g| t.groups.iter().find(|l| l.id == g));
        if let Some(group) = group {
            self.text(
                Layer::Fixed,
                (24.0, y + 27.0),
                format!("cgroup {}", group.path),
                11.0,
                Anchor::Start,
            );
        }
        let idles: Vec<&IdleWindow> = t
            .idles
            .iter()
            .filter(|w| w.pid == lane.pid && self.visible(w.start_ns, w.end_ns))
            .collect();
        let [cost, why] = idle_stats(&idles);
        self.text(
            Layer::Fixed,
            (24.0, y + 42.0),
            cut(&cost),
            11.0,
            Anchor::Start,
        );
        let short = cut(&why);
        self.text(Layer::Fixed, (24.0, y + 56.0), short, 11.0, Anchor::Start)
            .title = Some(why);
        for slice in t.slices.iter().filter(|s| s.pid == lane.pid) {
            self.slice(slice, colour, y + 3.0, 13.0);
        }
        for io in t.ios.iter().filter(|io| io.pid == lane.pid) {
            self.request(io, colour, y + 21.0);
        }
        for window in idles {
            self.idle(window, y + 40.0, 16.0);
        }
        let (from, to) = (self.from_ns, self.to_ns);
        for refusal in t
            .no_idle
            .iter()
            .filter(|n| n.pid == lane.pid && overlaps((n.t_ns, n.t_ns), from, to))
        {
            let x = self.x(refusal.t_ns);
            let title = format!(
                "{} ms: no idling: {}",
                self.at(refusal.t_ns),
                refusal.reason
            );
            let item = self.line(Layer::Time, (x, y + 46.0, x, y + 56.0), 1.0, NO_IDLE);
            item.title = Some(title);
        }
        y + QUEUE_LANE_H
    }

    fn group_lane(&mut self, index: usize, y: f64) -> f64 {
        let t = self.t;
        let group = &t.groups[index];
        let name = format!("cgroup {}", group.path);
        self.lane_frame(y, GROUP_LANE_H, GROUP_LANE_BG, name.clone());
        self.text(Layer::Fixed, (24.0, y + 13.0), name, 13.0, Anchor::Start);
        let members: Vec<(usize, u32)> = t
            .queues
            .iter()
            .enumerate()
            .filter(|(_, q)| q.group == Some(group.id))
            .map(|(i, q)| (i, q.pid))
            .collect();
        let list: Vec<String> = members.iter().map(|(_, pid)| pid.to_string()).collect();
        self.text(
            Layer::Fixed,
            (24.0, y + 27.0),
            format!("queues {}", list.join(", ")),
            11.0,
            Anchor::Start,
        );
        for slice in t.slices.iter().filter(|s| s.group == Some(group.id)) {
            let lane = t
                .queues
                .iter()
                .position(|q| q.pid == slice.pid)
                .unwrap_or(0);
            self.slice(slice, queue_colour(lane), y + 4.0, 14.0);
        }
        for window in t
            .idles
            .iter()
            .filter(|w| w.group_idle && w.group == Some(group.id))
        {
            if self.visible(window.start_ns, window.end_ns) {
                self.idle(window, y + 22.0, 14.0);
            }
        }
        y + GROUP_LANE_H
    }

    fn slice(&mut self, slice: &Slice, colour: Rgb, y: f64, h: f64) {
        if !self.visible(slice.start_ns, slice.end_ns) {
            return;
        }
        let (x1, x2) = (self.x(slice.start_ns), self.x(slice.end_ns));
        let title = format!(
            "slice of queue {}: {} to {} ms; chosen: {}; ended: {}",
            slice.pid,
            self.at(slice.start_ns),
            self.at(slice.end_ns),
            slice.chosen,
            slice.ended
        );
        let item = self.rect(
            Layer::Time,
            (x1, y, (x2 - x1).max(1.0), h),
            colour.light(0.45),
        );
        item.title = Some(title);
        item.class = Some("slice");
        self.line(Layer::Time, (x1, y, x1, y + h), 1.5, colour);
        let length = format!("slice {} ms", ms(slice.end_ns - slice.start_ns));
        let long = format!("{length} · ended: {}", slice.ended);
        if let Some(label) = [long, length].into_iter().find(|l| fits(l, x2 - x1)) {
            self.text(
                Layer::TimeText,
                (x1 + 4.0, y + h / 2.0),
                label,
                10.0,
                Anchor::Start,
            );
        }
    }

    fn request(&mut self, io: &Io, colour: Rgb, y: f64) {
        let (start, end) = io_span(io);
        if !self.visible(start, end) {
            return;
        }
        if let (Some(insert), Some(issue)) = (io.insert_ns, io.issue_ns) {
            if issue > insert {
                let (x1, x2) = (self.x(insert), self.x(issue));
                self.line(Layer::Time, (x1, y + 7.0, x2, y + 7.0), 1.0, WAITING);
            }
        }
        let Some(issue) = io.issue_ns else { return };
        let x1 = self.x(issue);
        let title = format!(
            "{} sector {} + {}: issued {} ms, completed {}",
            if io.write { "write" } else { "read" },
            io.sector,
            io.sectors,
            self.at(issue),
            io.complete_ns
                .map_or("not in the trace".into(), |c| format!("{} ms", self.at(c)))
        );
        if let Some(complete) = io.complete_ns {
            let x2 = self.x(complete);
            let item = self.rect(
                Layer::Time,
                (x1, y + 3.0, (x2 - x1).max(0.5), 8.0),
                colour.light(0.8),
            );
            item.title = Some(title);
            self.line(Layer::Time, (x2, y + 1.0, x2, y + 13.0), 1.0, INK);
        }
        self.line(Layer::Time, (x1, y, x1, y + 14.0), 1.0, colour);
    }

    fn idle(&mut self, window: &IdleWindow, y: f64, h: f64) {
        let colour = match window.outcome {
            Outcome::Used => IDLE_USED,
            Outcome::Wasted => IDLE_WASTED,
        };
        let (x1, x2) = (self.x(window.start_ns), self.x(window.end_ns));
        let verdict = match window.outcome {
            Outcome::Used => "used",
            Outcome::Wasted => "wasted",
        };
        let title = format!(
            "idle {} ms for queue {} ({}; armed {} ms): {}; ended: {}",
            self.at(window.start_ns),
            window.pid,
            window.why,
            ms(window.armed_ns),
            verdict,
            window.ended
        );
        let item = self.rect(
            Layer::Time,
            (x1, y, (x2 - x1).max(0.5), h),
            colour.light(0.55),
        );
        item.title = Some(title.clone());
        item.class = Some("idle");
        self.line(Layer::Time, (x1, y, x1, y + h), 1.5, colour)
            .title = Some(title);
        let long = format!("{} · {verdict}", window.why);
        if let Some(label) = [long, verdict.to_string()]
            .into_iter()
            .find(|l| fits(l, x2 - x1))
        {
            self.text(
                Layer::TimeText,
                (x1 + 3.0, y + h / 2.0),
                label,
                10.0,
                Anchor::Start,
            );
        }
    }

    fn preemptions(&mut self, top: f64) {
        let t = self.t;
        let lane_y = |pid: u32| {
            t.queues
                .iter()
                .position(|q| q.pid == pid)
                .map(|i| top + i as f64 * QUEUE_LANE_H)
        };
        for p in &t.preemptions {
            if !self.visible(p.t_ns, p.t_ns) {
                continue;
            }
            let Some(new_y) = lane_y(p.pid) else { continue };
            let victim_y = p.victim.and_then(lane_y).unwrap_or(new_y);
            let (y1, y2) = (new_y.min(victim_y), new_y.max(victim_y) + QUEUE_LANE_H);
            let x = self.x(p.t_ns);
            let title = format!(
                "{} ms: queue {} preempted queue {}: {}",
                self.at(p.t_ns),
                p.pid,
                p.victim.map_or("?".into(), |v| v.to_string()),
                p.reason
            );
            self.line(Layer::Time, (x, y1, x, y2), 2.5, PREEMPT).title = Some(title);
            self.text(
                Layer::TimeText,
                (x + 3.0, new_y + 30.0),
                "preempt".into(),
                10.0,
                Anchor::Start,
            );
        }
    }

    /// Grid lines and tick labels of a time axis under the band `top..bottom`.
    fn axis(&mut self, top: f64, bottom: f64, label: &str) {
        self.axes.push(Axis { top, bottom });
        for (t_ns, text) in ticks(self.from_ns, self.to_ns, self.origin) {
            let x = self.x(t_ns);
            self.line(Layer::Fixed, (x, top, x, bottom), 1.0, GRID)
                .class = Some("tick");
            self.text(Layer::Fixed, (x, bottom + 12.0), text, 11.0, Anchor::Middle)
                .class = Some("tick");
        }
        self.line(
            Layer::Fixed,
            (PLOT_X, bottom, PLOT_X + PLOT_W, bottom),
            1.0,
            INK,
        );
        self.text(
            Layer::Fixed,
            (PLOT_X - 26.0, bottom + 12.0),
            label.into(),
            11.0,
            Anchor::End,
        );
    }

    /// Each request's sector at its issue, as far as it took on the device.
    fn sectors(&mut self, top: f64) {
        let t = self.t;
        let shown: Vec<(usize, &Io)> = t
            .ios
            .iter()
            .filter(|io| {
                io.issue_ns
                    .is_some_and(|i| self.visible(i, io.complete_ns.unwrap_or(i)))
            })
            .map(|io| {
                (
                    t.queues.iter().position(|q| q.pid == io.pid).unwrap_or(0),
                    io,
                )
            })
            .collect();
        let low = shown.iter().map(|(_, io)| io.sector).min().unwrap_or(0);
        let high = shown
            .iter()
            .map(|(_, io)| io.sector + u64::from(io.sectors))
            .max()
            .unwrap_or(1);
        let span = (high.saturating_sub(low)).max(1) as f64;
        let y_of = |sector: u64| top + SECTOR_H - (sector - low) as f64 / span * SECTOR_H;
        self.rect(
            Layer::Fixed,
            (PLOT_X, top, PLOT_W, SECTOR_H),
            Rgb(250, 250, 250),
        )
        .class = Some("sectors");
        self.text(
            Layer::Fixed,
            (24.0, top + 12.0),
            "sector of each request".into(),
            13.0,
            Anchor::Start,
        );
        self.text(
            Layer::Fixed,
            (24.0, top + 30.0),
            "(issue to completion)".into(),
            11.0,
            Anchor::Start,
        );
        self.text(
            Layer::Fixed,
            (PLOT_X - 8.0, top + 6.0),
            high.to_string(),
            11.0,
            Anchor::End,
        );
        self.text(
            Layer::Fixed,
            (PLOT_X - 8.0, top + SECTOR_H - 6.0),
            low.to_string(),
            11.0,
            Anchor::End,
        );
        for (lane, io) in shown {
            let issue = io.issue_ns.unwrap_or(0);
            let (x1, x2) = (self.x(issue), self.x(io.complete_ns.unwrap_or(issue)));
            let y = y_of(io.sector);
            self.rect(
                Layer::Time,
                (x1, y - 1.5, (x2 - x1).max(1.5), 3.0),
                queue_colour(lane),
            );
        }
    }

    /// The legend's entries in a row; returns the page's height.
    fn legend(&mut self, y: f64) -> f64 {
        let entries: [(&str, Rgb); 7] = [
            ("slice (lane colour)", queue_colour(0).light(0.45)),
            ("issued → completed", queue_colour(0).light(0.8)),
            ("waiting in the scheduler", WAITING),
            ("idle window, used", IDLE_USED.light(0.55)),
            ("idle window, wasted", IDLE_WASTED.light(0.55)),
            ("preemption", PREEMPT),
            ("idling refused (no_idle)", NO_IDLE),
        ];
        let mut x = 16.0;
        for (name, colour) in entries {
            let item = self.rect(Layer::Fixed, (x, y - 8.0, 22.0, 16.0), colour);
            item.class = Some("legend");
            item.title = Some(name.to_string());
            self.text(
                Layer::Fixed,
                (x + 28.0, y),
                name.to_string(),
                12.0,
                Anchor::Start,
            );
            x += 36.0 + 7.2 * name.chars().count() as f64;
        }
        let hint = "Ticks: issue (lane colour), completion (black). Hover for why; the HTML page zooms with the wheel and pans by dragging.";
        self.text(
            Layer::Fixed,
            (16.0, y + 24.0),
            hint.into(),
            11.0,
            Anchor::Start,
        );
        y + 44.0
    }
}

/// Whether a 10-pixel label fits in `width` pixels (DejaVu Sans averages about 0.6 em).
fn fits(label: &str, width: f64) -> bool {
    label.chars().count() as f64 * 6.0 + 8.0 <= width
}

/// A lane's idling in two lines: what it cost and wasted, and why it was armed (the two
/// commonest reasons): `idled 4.0 ms in 2, wasted 0.0 ms in 0` and `armed for: queue
/// idle ×2`.
fn idle_stats(idles: &[&IdleWindow]) -> [String; 2] {
    let mut reasons: Vec<(&str, usize)> = Vec::new();
    for w in idles {
        match reasons.iter_mut().find(|(r, _)| *r == w.why) {
            Some((_, n)) => *n += 1,
            None => reasons.push((&w.why, 1)),
        }
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.1));
    let why: Vec<String> = reasons
        .iter()
        .take(2)
        .map(|(r, n)| format!("{r} ×{n}"))
        .collect();
    let idled: u64 = idles.iter().map(|w| w.end_ns - w.start_ns).sum();
    let wasted: Vec<&&IdleWindow> = idles
        .iter()
        .filter(|w| w.outcome == Outcome::Wasted)
        .collect();
    let wasted_ns: u64 = wasted.iter().map(|w| w.end_ns - w.start_ns).sum();
    let why = if why.is_empty() {
        "no idling".to_string()
    } else {
        format!("armed for: {}", why.join(", "))
    };
    let cost = format!(
        "idled {:.1} ms in {}, wasted {:.1} ms in {}",
        idled as f64 / 1e6,
        idles.len(),
        wasted_ns as f64 / 1e6,
        wasted.len()
    );
    [cost, why]
}

/// At most what fits beside the lanes at 11 pixels (the hover text has it whole).
fn cut(text: &str) -> String {
    const FITS: usize = 50;
    if text.chars().count() <= FITS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(FITS - 1).collect();
    out.push('…');
    out
}

/// Tick positions and labels: about ten, on a 1-2-5 step in ms counted from `origin_ns`.
pub fn ticks(from_ns: u64, to_ns: u64, origin_ns: u64) -> Vec<(u64, String)> {
    let (from_ns, to_ns) = (
        from_ns.saturating_sub(origin_ns),
        to_ns.saturating_sub(origin_ns),
    );
    let span_ms = (to_ns - from_ns) as f64 / 1e6;
    let raw = span_ms / 10.0;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * magnitude);
    let step_ns = ((step * 1e6).round() as u64).max(1);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    let mut t = from_ns.div_ceil(step_ns) * step_ns;
    let mut out = Vec::new();
    while t <= to_ns && out.len() < 50 {
        out.push((t + origin_ns, format!("{:.*}", decimals, t as f64 / 1e6)));
        t += step_ns;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::{QueueLane, Timeline};
    use super::*;

    fn one_queue() -> Timeline {
        Timeline {
            queues: vec![QueueLane {
                pid: 7,
                comm: Some("r1".into()),
                group: None,
            }],
            ios: vec![Io {
                pid: 7,
                sector: 2048,
                sectors: 8,
                write: false,
                insert_ns: Some(0),
                issue_ns: Some(1_000_000),
                complete_ns: Some(3_000_000),
            }],
            start_ns: 0,
            end_ns: 10_000_000,
            ..Timeline::default()
        }
    }

    /// The window maps time onto the plot's width: a request issued at 1 ms of 0..10 ms
    /// starts a tenth of the way along; zoomed to 0..2 ms, half way.
    #[test]
    fn the_window_maps_time_onto_the_plot_width() {
        let issue_x = |scene: &Scene| {
            scene
                .items
                .iter()
                .find_map(|item| match (&item.shape, item.colour) {
                    (Shape::Line { x1, .. }, c)
                        if c == queue_colour(0) && item.layer == Layer::Time =>
                    {
                        Some(*x1)
                    }
                    _ => None,
                })
        };
        let whole = layout(&one_queue(), "t", Window::default()).unwrap();
        assert_eq!(issue_x(&whole), Some(PLOT_X + PLOT_W / 10.0));
        let zoomed = Window {
            from_ns: Some(0),
            to_ns: Some(2_000_000),
        };
        let zoomed = layout(&one_queue(), "t", zoomed).unwrap();
        assert_eq!(issue_x(&zoomed), Some(PLOT_X + PLOT_W / 2.0));
        assert_eq!(zoomed.lanes, ["r1 (queue 7)"]);
    }

    /// A window outside the run, or backwards, is refused with both spans named.
    #[test]
    fn an_empty_window_is_refused() {
        let late = Window {
            from_ns: Some(20_000_000),
            to_ns: Some(30_000_000),
        };
        let e = layout(&one_queue(), "t", late).unwrap_err();
        assert!(e.to_string().contains("the run spans 0 to 10 ms"), "{e}");
        let backwards = Window {
            from_ns: Some(5_000_000),
            to_ns: Some(1_000_000),
        };
        assert!(layout(&one_queue(), "t", backwards).is_err());
    }

    #[test]
    fn ticks_fall_on_a_round_step() {
        let labels: Vec<String> = ticks(0, 300_000_000, 0)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(labels[..3], ["0", "50", "100"]);
        let fine: Vec<String> = ticks(5_001_000_000, 5_001_500_000, 5_000_000_000)
            .into_iter()
            .map(|(_, l)| l)
            .collect();
        assert_eq!(fine[..2], ["1.00", "1.05"]);
    }
}
