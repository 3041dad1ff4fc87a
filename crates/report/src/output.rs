//! `--output-format`: fio's list of formats and the order it writes them in.
//!
//! fio takes a comma-separated list (`--output-format=normal,json`) of `normal`, `json`,
//! `json+` (json with latency `bins`; it implies `json`), and `terse` (also spelt `minimal` or
//! `csv`); any other item, an empty one included (`json,`), is an error. Whatever order the
//! list gives, fio (`__show_run_stats()`) fills one buffer per format and prints them as
//! terse, then json, then normal, with nothing between them but the blank line that opens the
//! normal output. [`Formats::write`] does the same.

use std::fmt;
use std::io::{self, Write};
use std::str::FromStr;

use crate::stats::RunResult;
use crate::{fio_json, fio_normal, fio_terse};

/// The formats one run is written in: fio's `output_format` bit set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Formats {
    pub terse: bool,
    pub json: bool,
    /// `json+`: the json document carries each latency histogram's `bins`.
    pub json_plus: bool,
    pub normal: bool,
}

/// An `--output-format` item fio does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownFormat(pub String);

impl fmt::Display for UnknownFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid output format '{}' (expected a comma-separated list of normal, json, json+, \
             terse; minimal and csv mean terse)",
            self.0
        )
    }
}

impl std::error::Error for UnknownFormat {}

impl FromStr for Formats {
    type Err = UnknownFormat;

    /// Parses fio's comma list. Kernel-free analogue of fio's `parse_output_format()`.
    fn from_str(list: &str) -> Result<Formats, UnknownFormat> {
        let mut formats = Formats::default();
        for item in list.split(',') {
            match item {
                "normal" => formats.normal = true,
                "json" => formats.json = true,
                "json+" => {
                    formats.json = true;
                    formats.json_plus = true;
                }
                "terse" | "minimal" | "csv" => formats.terse = true,
                other => return Err(UnknownFormat(other.to_string())),
            }
        }
        Ok(formats)
    }
}

impl fmt::Display for Formats {
    /// The canonical list, in fio's printing order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let json = match (self.json, self.json_plus) {
            (_, true) => Some("json+"),
            (true, false) => Some("json"),
            _ => None,
        };
        let names = [
            self.terse.then_some("terse"),
            json,
            self.normal.then_some("normal"),
        ];
        let names: Vec<&str> = names.into_iter().flatten().collect();
        f.write_str(&names.join(","))
    }
}

impl Formats {
    /// fio's default: normal only.
    pub const NORMAL: Formats = Formats {
        terse: false,
        json: false,
        json_plus: false,
        normal: true,
    };

    /// Writes `run` in every chosen format, in fio's order (terse, json, normal). `appendix`
    /// (what iosched adds to the text output, e.g. the simulated file system's summary)
    /// follows the normal output's disk stats.
    pub fn write<W: Write>(&self, run: &RunResult, appendix: &str, w: &mut W) -> io::Result<()> {
        // fio prints its banner (job lines, version, `Starting ...`) as it reads the jobs,
        // so with the normal format on it comes first, before terse or json.
        if self.normal {
            w.write_all(run.banner.as_bytes())?;
        }
        if self.terse {
            w.write_all(fio_terse::to_string(run).as_bytes())?;
        }
        if self.json {
            let flavor = if self.json_plus {
                fio_json::JSON_PLUS
            } else {
                fio_json::JSON
            };
            fio_json::write_json_as(run, flavor, w)?;
        }
        if self.normal {
            // The blank line that opens fio's job blocks; a hand-built result without a
            // banner, printed alone, starts at its first job block.
            if !run.banner.is_empty() || self.terse || self.json {
                w.write_all(b"\n")?;
            }
            w.write_all(fio_normal::to_string(run).as_bytes())?;
            w.write_all(appendix.as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobStats, DDIR_READ, DEFAULT_PERCENTILES};

    fn run() -> RunResult {
        let mut job = JobStats::new("j", 0, &DEFAULT_PERCENTILES);
        for i in 0..10u64 {
            job.record_io(DDIR_READ, 4096, i * 1000, i * 1000, i * 1000 + 500 + 8 * i);
        }
        job.set_runtime(0, 1_000_000);
        RunResult {
            jobs: vec![job],
            ..RunResult::default()
        }
    }

    fn written(formats: &str) -> String {
        let formats: Formats = formats.parse().unwrap();
        let mut out = Vec::new();
        formats.write(&run(), "APPENDIX\n", &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn parses_fios_names_and_rejects_the_rest() {
        let f: Formats = "normal,json".parse().unwrap();
        assert_eq!(
            (f.normal, f.json, f.json_plus, f.terse),
            (true, true, false, false)
        );
        let f: Formats = "json+".parse().unwrap();
        assert!(f.json && f.json_plus && !f.normal);
        for alias in ["terse", "minimal", "csv"] {
            assert!(alias.parse::<Formats>().unwrap().terse, "{alias}");
        }
        assert_eq!(
            "json,".parse::<Formats>(),
            Err(UnknownFormat(String::new()))
        );
        assert_eq!("xml".parse::<Formats>(), Err(UnknownFormat("xml".into())));
        assert_eq!(
            "NORMAL".parse::<Formats>(),
            Err(UnknownFormat("NORMAL".into()))
        );
        assert_eq!(
            "normal,json+,csv".parse::<Formats>().unwrap().to_string(),
            "terse,json+,normal"
        );
    }

    /// fio 3.33 on this machine, `--output-format=normal,json,terse` and `json,normal`: the
    /// terse line first, then the JSON document, a blank line, the normal text; the list's
    /// order does not matter.
    #[test]
    fn writes_terse_then_json_then_normal_whatever_the_list_order() {
        let all = written("normal,json,terse");
        assert_eq!(all, written("terse,normal,json"));
        let terse = fio_terse::to_string(&run());
        let json = fio_json::to_string(&run());
        let normal = fio_normal::to_string(&run());
        assert_eq!(all, format!("{terse}{json}\n{normal}APPENDIX\n"));
        assert_eq!(
            written("json,normal"),
            format!("{json}\n{normal}APPENDIX\n")
        );
        assert_eq!(written("normal"), format!("{normal}APPENDIX\n"));
        assert_eq!(written("json"), json);
    }

    /// fio 3.33, `--output-format=terse,normal` and `normal`: the banner it prints while
    /// reading the jobs comes before everything, and a blank line opens the job blocks.
    #[test]
    fn the_banner_opens_any_list_with_normal_in_it() {
        let mut with_banner = run();
        with_banner.banner = "j: (g=0): ...\nfio-3.33\nStarting 1 process\n".into();
        let write = |formats: &str| {
            let formats: Formats = formats.parse().unwrap();
            let mut out = Vec::new();
            formats.write(&with_banner, "", &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let (banner, normal) = (&with_banner.banner, fio_normal::to_string(&with_banner));
        let terse = fio_terse::to_string(&with_banner);
        assert_eq!(write("normal"), format!("{banner}\n{normal}"));
        assert_eq!(write("normal,terse"), format!("{banner}{terse}\n{normal}"));
        assert_eq!(write("terse"), terse, "no banner without the normal format");
    }

    #[test]
    fn json_plus_adds_bins_only() {
        let plus: serde_json::Value = serde_json::from_str(&written("json+")).unwrap();
        let plain: serde_json::Value = serde_json::from_str(&written("json")).unwrap();
        let bins = &plus["jobs"][0]["read"]["clat_ns"]["bins"];
        assert_eq!(bins.as_object().unwrap().len(), 10);
        let mut stripped = plus.clone();
        stripped["jobs"][0]["read"]["clat_ns"]
            .as_object_mut()
            .unwrap()
            .remove("bins");
        assert_eq!(stripped, plain);
    }
}
