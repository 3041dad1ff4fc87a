//! Results and traces in the formats people already read: fio normal/JSON/terse, blktrace,
//! blkparse text, mmtests comparison tables.
#![forbid(unsafe_code)]
