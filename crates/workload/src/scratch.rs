//! A scratch directory under the system's temporary folder that removes itself when dropped,
//! also when the test holding it fails, so test runs leave no `/tmp/iosched-*` behind.
//!
//! ```
//! let dir = iosched_workload::scratch::ScratchDir::new("doc");
//! std::fs::write(dir.join("a.fio"), "[a]\n").unwrap();
//! let path = dir.to_path_buf();
//! drop(dir);
//! assert!(!path.exists());
//! ```

use std::ops::Deref;
use std::path::{Path, PathBuf};

/// `<temp>/iosched-<name>-<pid>`, created empty, removed with its contents on drop.
#[derive(Debug)]
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Creates the directory, emptying what an earlier run of the same process id left.
    ///
    /// # Panics
    /// If the directory cannot be created (a test helper: the test cannot go on).
    pub fn new(name: &str) -> ScratchDir {
        let dir = std::env::temp_dir().join(format!("iosched-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory under the temp folder");
        ScratchDir(dir)
    }
}

impl Deref for ScratchDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for ScratchDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
