//! What can stop the engine before or during a run, printed as `path: message`.

use std::fmt;
use std::io;

/// Why the engine refused to run or could not finish.
#[derive(Debug)]
#[non_exhaustive]
pub enum EngineError {
    /// A job asks for something the engine does not do (buffered I/O, an unknown verify method).
    Unsupported { job: String, message: String },
    /// The scheduler name is unknown.
    UnknownScheduler(String),
    /// A `--set` tunable was rejected by the scheduler.
    Tunable(String),
    /// Jobs cannot be placed on the target.
    Layout { job: String, message: String },
    /// The path may not be used without `--force` (mounted, partitioned, carries a file system).
    Refused { path: String, reason: String },
    /// The path exists but we may not open it as asked.
    Permission { path: String, error: io::Error },
    /// Any other system call failure, with what we were doing.
    Io {
        path: String,
        context: String,
        error: io::Error,
    },
    /// `wait_for=` names no earlier job.
    WaitFor { job: String, target: String },
    /// The device path names nothing usable (a missing device, a file in a missing folder).
    BadTarget { path: String, reason: String },
    /// Growing a file to hold the jobs' extents would take more than its file system has free.
    NoSpace {
        path: String,
        grow_bytes: u64,
        free_bytes: u64,
    },
}

impl fmt::Display for EngineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EngineError::Unsupported { job, message } => write!(f, "job '{job}': {message}"),
            EngineError::UnknownScheduler(message) => write!(f, "{message}"),
            EngineError::Tunable(message) => write!(f, "--set: {message}"),
            EngineError::Layout { job, message } => write!(f, "job '{job}': {message}"),
            EngineError::Refused { path, reason } => write!(
                f,
                "{path}: refusing to write: {reason} (pass --force if you really mean it)"
            ),
            EngineError::Permission { path, error } => write!(
                f,
                "{path}: permission denied ({error}); run as a user who may open it for direct I/O"
            ),
            EngineError::Io {
                path,
                context,
                error,
            } => write!(f, "{path}: {context}: {error}"),
            EngineError::WaitFor { job, target } => {
                write!(f, "job '{job}': wait_for={target} names no earlier job")
            }
            EngineError::BadTarget { path, reason } => write!(f, "{path}: {reason}"),
            EngineError::NoSpace {
                path,
                grow_bytes,
                free_bytes,
            } => write!(
                f,
                "{path}: the jobs need the file grown by {grow_bytes} bytes but its file system \
                 has {free_bytes} bytes free (check size=, offset= and filesize=)"
            ),
        }
    }
}

impl std::error::Error for EngineError {}

impl EngineError {
    /// An I/O error on `path` while doing `context`; permission errors get their own variant.
    pub fn io(path: &str, context: &str, error: io::Error) -> EngineError {
        match error.kind() {
            io::ErrorKind::PermissionDenied => EngineError::Permission {
                path: path.to_string(),
                error,
            },
            _ => EngineError::Io {
                path: path.to_string(),
                context: context.to_string(),
                error,
            },
        }
    }
}

impl From<iosched_workload::layout::LayoutError> for EngineError {
    fn from(error: iosched_workload::layout::LayoutError) -> Self {
        EngineError::Layout {
            job: error.job,
            message: error.message,
        }
    }
}
