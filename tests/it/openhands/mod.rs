//! OpenHands conversations (`agentlog::openhands`): the reader, the store,
//! checkpoints, the view.

mod checkpoint;
#[cfg(all(unix, feature = "parallel"))]
mod cold_read;
mod corpus;
mod dirs;
mod live_writer;
mod store;
mod view;
