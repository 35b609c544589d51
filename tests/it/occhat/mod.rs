//! OC Chat session stores (`agentlog::occhat`). The modules that export
//! HTML need the `html` feature; those that run the command, `cli`.

#[cfg(feature = "html")]
mod atomic;
mod differences;
#[cfg(feature = "html")]
mod export;
mod faults;
#[cfg(feature = "cli")]
mod hostile_cli;
mod hostile_lib;
#[cfg(feature = "html")]
mod html_golden;
mod live_app;
mod migrate_plan;
// Runs the command.
#[cfg(feature = "cli")]
mod other_fs;
mod replay;
#[cfg(feature = "html")]
mod robust;
#[cfg(feature = "html")]
mod store;
mod tail;
