//! OpenHands conversations (`agentlog::openhands`): the reader, the store,
//! checkpoints, the view.

mod checkpoint;
mod corpus;
mod dirs;
mod live_writer;
mod store;
mod view;
