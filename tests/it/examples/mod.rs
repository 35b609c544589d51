//! The programs in `examples/`, run so that they stay true.

mod cookbook;
mod indexer_loop;
