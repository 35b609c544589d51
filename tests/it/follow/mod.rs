//! Live following of stores (`agentlog::follow`).

mod catch_up;
mod occhat_steps;
mod refused;
mod steps;
mod wake;
