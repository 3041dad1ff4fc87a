//! `iosched plot --timeline` end to end: a simulated CFQ run of two sequential readers,
//! its decision log and trace drawn as PNG, SVG and HTML; the page opened in headless
//! Chromium (Debian's `chromium`), its screenshot checked for the lanes and the legend.

mod common;

use std::path::Path;
use std::process::Command;

use common::{assert_input_error, iosched, is_root, skip, stderr_of, Scratch};

/// Two sequential readers under CFQ on a simulated 7200 rpm disk: the decisions, the trace
/// and the results of 100 ms, in `dir`.
fn two_readers(dir: &Scratch) -> [String; 3] {
    let job = dir.file(
        "two.fio",
        "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=128k\nsize=1g\nruntime=100ms\ntime_based\n\
         thinktime=2ms\n[r1]\n[r2]\n",
    );
    let [decisions, trace, result] = [
        dir.path("run.dec"),
        dir.path("run.txt"),
        dir.path("run.json"),
    ];
    let run = iosched(&[
        "run",
        &job,
        "--scheduler",
        "cfq",
        "--device",
        "hdd-7200",
        "--decisions",
        &decisions,
        "--trace",
        &trace,
        "--output-format",
        "json",
        "--output",
        &result,
    ]);
    assert!(run.status.success(), "{}", stderr_of(&run));
    [decisions, trace, result]
}

fn timeline(files: &[String; 3], out: &str, extra: &[&str]) -> std::process::Output {
    let [decisions, trace, result] = files;
    let args = [
        "plot",
        result,
        "--timeline",
        "--decisions",
        decisions,
        "--trace",
        trace,
        "--out",
        out,
    ];
    iosched(&[&args[..], extra].concat())
}

/// Each format is written, titled from the run's JSON, and a window is a window; a bad line
/// in the decision log is refused naming the file and line, with nothing written.
#[test]
fn timeline_draws_png_svg_html_and_names_a_bad_line() {
    let dir = Scratch::new("timeline-cli");
    let files = two_readers(&dir);
    for ext in ["png", "svg", "html"] {
        let out = dir.path(&format!("t.{ext}"));
        let drawn = timeline(&files, &out, &[]);
        assert!(drawn.status.success(), "{ext}: {}", stderr_of(&drawn));
        assert!(
            std::fs::metadata(&out).unwrap().len() > 1000,
            "{ext} is empty"
        );
    }
    let svg = std::fs::read_to_string(dir.path("t.svg")).unwrap();
    assert!(
        svg.contains("Timeline: cfq on hdd-7200: r1, r2"),
        "title from the run's JSON"
    );
    assert!(
        svg.contains("class=\"idle\""),
        "CFQ idles for a sequential reader"
    );
    let zoomed = dir.path("zoom.svg");
    assert!(timeline(&files, &zoomed, &["--from", "20", "--to", "30"])
        .status
        .success());
    let zoomed = std::fs::read_to_string(&zoomed).unwrap();
    assert!(
        zoomed.contains("20.000 to 30.000 ms"),
        "the window is in the summary line"
    );

    let mut lines: Vec<String> = std::fs::read_to_string(&files[0])
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines[2] = "{\"t_ns\": -1}".into();
    let bad = dir.file("bad.dec", &lines.join("\n"));
    let out = dir.path("bad.png");
    let refused = timeline(&[bad, files[1].clone(), files[2].clone()], &out, &[]);
    assert_input_error(&refused, "bad.dec:3: 't_ns' is not a whole number");
    assert!(!Path::new(&out).exists());
    let late = timeline(&files, &out, &["--from", "5000", "--to", "6000"]);
    assert_input_error(&late, "holds nothing");
    let pdf = timeline(&files, &dir.path("t.pdf"), &[]);
    assert_input_error(&pdf, ".png, .svg or .html");
}

/// The value of `name="..."` in `tag`.
fn attribute(tag: &str, name: &str) -> f64 {
    let start = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
    tag[start..].split('"').next().unwrap().parse().unwrap()
}

/// `(x, y, width, height, [r, g, b])` of every `<rect class="CLASS">` in the page.
fn rects(page: &str, class: &str) -> Vec<(f64, f64, f64, f64, [u8; 3])> {
    page.match_indices(&format!("<rect class=\"{class}\""))
        .map(|(at, _)| {
            let tag = &page[at..at + page[at..].find('>').unwrap()];
            let fill = tag.split("fill=\"#").nth(1).unwrap();
            let rgb = |i: usize| u8::from_str_radix(&fill[i..i + 2], 16).unwrap();
            let box_of = |n| attribute(tag, n);
            (
                box_of("x"),
                box_of("y"),
                box_of("width"),
                box_of("height"),
                [rgb(0), rgb(2), rgb(4)],
            )
        })
        .collect()
}

fn chromium(dir: &Scratch, args: &[&str]) -> std::process::Output {
    let profile = format!("--user-data-dir={}", dir.path("chromium-profile"));
    let mut command = Command::new("timeout");
    command.args([
        "300",
        "chromium",
        "--headless",
        "--disable-gpu",
        "--hide-scrollbars",
    ]);
    command.args(["--force-device-scale-factor=1", &profile]);
    if is_root() {
        command.arg("--no-sandbox"); // Chromium refuses to run as root with its sandbox.
    }
    command.args(args).output().expect("timeout runs")
}

/// What the page's script wrote into its summary, as Chromium's `--dump-dom` shows it.
fn summary_at(dir: &Scratch, url: &str) -> serde_json::Value {
    let dom = chromium(dir, &["--dump-dom", url]);
    let dom = String::from_utf8_lossy(&dom.stdout);
    let summary = dom
        .split("<pre id=\"summary\">")
        .nth(1)
        .and_then(|s| s.split("</pre>").next());
    serde_json::from_str(summary.expect("the script wrote its summary")).unwrap()
}

/// The page opened in headless Chromium: its script ran (the summary it writes names the
/// three lanes and the seven legend entries, and a `#from=..&to=..` link opens on that
/// window), and the screenshot shows each legend swatch and each lane's background in its
/// colour where the page put it.
#[test]
fn timeline_page_in_headless_chromium_shows_lanes_and_legend() {
    if !common::tool_available("chromium") {
        skip(
            "timeline_page_in_headless_chromium",
            "chromium is not installed (Debian's chromium package)",
        );
        return;
    }
    let dir = Scratch::new("timeline-chromium");
    let files = two_readers(&dir);
    let page = dir.path("t.html");
    assert!(timeline(&files, &page, &[]).status.success());
    let html = std::fs::read_to_string(&page).unwrap();
    let url = format!("file://{page}");

    let summary = summary_at(&dir, &format!("{url}#from=20&to=40"));
    assert_eq!(
        summary["lanes"],
        serde_json::json!(["r1 (queue 1000)", "r2 (queue 1001)", "cgroup /"])
    );
    assert_eq!(summary["lane_rects"], 3);
    assert_eq!(summary["legend"].as_array().unwrap().len(), 7);
    for (key, ms) in [("from_ms", 20.0), ("to_ms", 40.0)] {
        let shown = summary[key].as_f64().unwrap();
        assert!((shown - ms).abs() < 1e-6, "{summary}");
    }

    let shot = dir.path("shot.png");
    let taken = chromium(
        &dir,
        &[
            "--window-size=1600,900",
            &format!("--screenshot={shot}"),
            &url,
        ],
    );
    assert!(
        Path::new(&shot).exists(),
        "no screenshot: {}",
        stderr_of(&taken)
    );
    let image = image::open(&shot).unwrap().to_rgb8();
    let at = |x: f64, y: f64| image.get_pixel(x as u32, y as u32).0;
    let near = |a: [u8; 3], b: [u8; 3]| a.iter().zip(b).all(|(p, q)| p.abs_diff(q) <= 4);
    let legend = rects(&html, "legend");
    assert_eq!(legend.len(), 7);
    for (x, y, w, h, fill) in legend {
        let seen = at(x + w / 2.0, y + h / 2.0);
        assert!(
            near(seen, fill),
            "legend swatch at ({x}, {y}): {seen:?}, expected {fill:?}"
        );
    }
    let lanes = rects(&html, "lane");
    assert_eq!(lanes.len(), 3);
    for (_, y, _, h, fill) in lanes {
        // Left of the lane's colour swatch and name: only the lane's background.
        let seen = at(3.0, y + h / 2.0);
        assert!(
            near(seen, fill),
            "lane at y {y}: {seen:?}, expected {fill:?}"
        );
    }
}

/// The SVG timeline of `decisions` and `trace` drawn into `out`, less its title (which names
/// the input files).
fn svg_body(decisions: &str, trace: &str, out: &str) -> String {
    let plot = iosched(&[
        "plot",
        "--timeline",
        "--decisions",
        decisions,
        "--trace",
        trace,
        "--out",
        out,
    ]);
    assert!(plot.status.success(), "{}", stderr_of(&plot));
    let svg = std::fs::read_to_string(out).unwrap();
    svg.split_once("</text>").unwrap().1.to_string()
}

/// The three forms of one run's trace give the same picture: the blkparse text `--trace`
/// writes, the blktrace binary (`--trace NAME.blktrace`), and, where blkparse is installed,
/// what the real `blkparse` prints from that binary (with its closing statistics). The
/// readers start 10 and 20 ms into the run, so the text (counted from its first event) must
/// be put back on the decision log's clock to match the binary (on the run's clock).
#[test]
fn timeline_is_the_same_from_text_binary_and_blkparse_output() {
    let dir = Scratch::new("timeline-forms");
    let job = dir.file(
        "late.fio",
        "[global]\nioengine=psync\ndirect=1\nrw=read\nbs=128k\nsize=1g\nruntime=60ms\ntime_based\n\
         [r1]\nstartdelay=10ms\n[r2]\nstartdelay=20ms\n",
    );
    let mut svgs = Vec::new();
    for (name, trace) in [("text", "run.txt"), ("binary", "run.blktrace")] {
        let decisions = dir.path(&format!("{name}.dec"));
        let run = iosched(&[
            "run",
            &job,
            "--scheduler",
            "cfq",
            "--device",
            "hdd-7200",
            "--decisions",
            &decisions,
            "--trace",
            &dir.path(trace),
        ]);
        assert!(run.status.success(), "{}", stderr_of(&run));
        let trace = if name == "binary" {
            dir.path("run.blktrace.0")
        } else {
            dir.path(trace)
        };
        svgs.push(svg_body(
            &decisions,
            &trace,
            &dir.path(&format!("{name}.svg")),
        ));
    }
    assert!(
        svgs[0] == svgs[1],
        "text and binary traces draw differently"
    );
    if !common::tool_available("blkparse") {
        skip(
            "timeline_is_the_same_from_blkparse_output",
            "blkparse is not installed",
        );
        return;
    }
    let parsed = dir.path("blkparse.txt");
    let blkparse = Command::new("blkparse")
        // blkparse names a trace by its base: `run` reads `run.blktrace.0`.
        .args(["-i", &dir.path("run"), "-o", &parsed])
        .output()
        .unwrap();
    assert!(blkparse.status.success(), "{}", stderr_of(&blkparse));
    let drawn = svg_body(&dir.path("binary.dec"), &parsed, &dir.path("blkparse.svg"));
    assert!(drawn == svgs[1], "blkparse's text draws differently");
}
