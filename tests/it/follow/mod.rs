//! Live following of stores (`agentlog::follow`).

mod occhat_steps;
mod refused;
mod wake;
