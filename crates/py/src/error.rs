//! The library's errors as the Python package's exceptions (`iosched.errors`), each with the
//! message the CLI prints, and a panic caught before it reaches Python.

use std::any::Any;

use iosched_lab::run::RunError;
use iosched_lab::sweep::{SpecError, SweepError};
use pyo3::prelude::*;

/// An exception to raise: its class in `iosched.errors`, the message, and the file and line
/// where the input names one.
#[derive(Debug)]
pub struct Raise {
    pub class: &'static str,
    pub message: String,
    pub file: Option<String>,
    pub line: Option<usize>,
}

impl Raise {
    pub fn new(class: &'static str, message: impl Into<String>) -> Raise {
        Raise {
            class,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// A run's error; `context` goes before the message (`run jobfile=... device=...`).
    pub fn run(error: &RunError, context: &str) -> Raise {
        let message = format!("{context}{error}");
        let class = match error {
            RunError::Parse(parse) => {
                return Raise {
                    class: "JobFileError",
                    message,
                    file: Some(parse.path.clone()),
                    line: (parse.line > 0).then_some(parse.line),
                }
            }
            RunError::UnknownPreset { .. } | RunError::DeviceFile(_) => "DeviceError",
            RunError::Knob(_) | RunError::Uptime(_) | RunError::SimSetup(_) => "SettingError",
            _ if !error.is_input() => "RunFailed",
            _ => "IoschedError",
        };
        Raise::new(class, message)
    }

    pub fn sweep(error: &SweepError) -> Raise {
        Raise::run(&error.error, &format!("run {}: ", error.point))
    }

    pub fn spec(error: &SpecError) -> Raise {
        Raise {
            class: "SpecError",
            message: error.to_string(),
            file: Some(error.path.display().to_string()),
            line: error.line,
        }
    }

    /// A panic's payload: a bug, never the input's fault, and never a crash of the caller.
    pub fn panic(payload: Box<dyn Any + Send>) -> Raise {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        Raise::new(
            "InternalError",
            format!("iosched panicked (a bug; please report it): {what}"),
        )
    }

    /// The Python exception object.
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let made = py.import("iosched.errors").and_then(|module| {
            module
                .getattr(self.class)?
                .call1((self.message.clone(), self.file.clone(), self.line))
        });
        match made {
            Ok(exception) => PyErr::from_value(exception),
            Err(error) => error,
        }
    }
}

/// Runs `work` with the GIL released and any panic caught.
pub fn detached<T: Send>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, Raise> + Send,
) -> PyResult<T> {
    let outcome = py.detach(|| {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
            .unwrap_or_else(|payload| Err(Raise::panic(payload)))
    });
    outcome.map_err(|raise| raise.into_py(py))
}
