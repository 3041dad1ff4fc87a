//! Page cache, dirty limits and flusher policy, pure and shared by both drivers. (Being written.)
