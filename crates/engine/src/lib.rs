//! The real engine: the `iosched-core` schedulers driving real I/O on files and block devices
//! through io_uring. (Being written.)
