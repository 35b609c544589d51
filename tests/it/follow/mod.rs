//! Live following of stores (`agentlog::follow`).

mod occhat_steps;
mod wake;
