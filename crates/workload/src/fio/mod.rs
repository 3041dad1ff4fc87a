//! fio job files: parsing with fio's quirks into [`crate::JobSet`].
//!
//! (Being written; see `parse_str` and `parse_files`.)
