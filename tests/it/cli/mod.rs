//! The `agentlog` command, run as a process.

mod asf;
mod checkpoint;
mod commands;
mod follow;
